"""What ``domino-train`` says around a run: how to go on after Ctrl-C or SIGTERM, and what to do next
with a run that is done (look at it, measure it, play it, train it longer)."""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
from pathlib import Path

from agents.training.checkpoint import update_checkpoints
from agents.training.config import TrainConfig


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised as an interrupt: it unwinds like Ctrl-C (logs flushed, checkpoints whole)."""


def terminate(signum: int, frame: object) -> None:
    """The SIGTERM handler ``domino-train`` installs."""
    raise Terminated


def how_to_resume(stop: KeyboardInterrupt, config: TrainConfig | None, args: argparse.Namespace) -> str:
    """One line: where the last checkpoint is and the command that continues from it."""
    what = "terminated" if isinstance(stop, Terminated) else "interrupted"
    command = _command(args)
    existing = update_checkpoints(config.run_dir / "checkpoints") if config else []
    if not existing:
        return f"{what} before the first checkpoint; start again with: {shlex.join(command)}"
    return f"{what}: last checkpoint {existing[-1]}; continue with: {shlex.join([*command, '--resume'])}"


def already_complete(config: TrainConfig, args: argparse.Namespace) -> str:
    """What a second run of a finished config says: nothing was left to do, and how to go on."""
    kept = [arg for arg in args.overrides if not arg.startswith(("total_updates=", "name="))]
    longer = shlex.join(_command(args, [*kept, f"total_updates={max(2 * config.total_updates, 100)}"]))
    another = shlex.join(_command(args, [*kept, f"name={config.name}-2"]))
    return (
        f"{config.name} is complete ({config.total_updates} of {config.total_updates} updates in "
        f"{config.run_dir}): nothing to do.\n"
        f"  train it longer:   {longer} --resume\n"
        f"  or start another:  {another}\n" + next_steps(config)
    )


def next_steps(config: TrainConfig) -> str:
    """Where to look at the run, and how to measure and play what it trained."""
    best = config.run_dir / "checkpoints" / "best.pt"
    agent = best if best.exists() else max((config.run_dir / "checkpoints").glob("update_*.pt"), default=best)
    game = f"preset={config.preset}" + (f" players={config.players}" if config.players else "")
    return (
        f"  look at it:        {program('tensorboard')} --logdir {config.output_dir}\n"
        f"  measure it:        {program('domino-evaluate')} {game} 'policies=[{agent},strong,random]' "
        "deals=2000\n"
        f"  play against it:   {program('domino-serve')} --checkpoint {agent}   (then http://127.0.0.1:8000)"
    )


def program(name: str) -> str:
    """``name`` as the user can type it: bare where the shell finds this environment's copy, else its
    path (``.venv/bin/domino-evaluate`` after ``make train``, whose venv is not activated)."""
    own = Path(sys.executable).parent / name
    return _typed(own, name) if own.exists() else name


def _typed(path: Path, name: str) -> str:
    """``name`` if the shell's ``name`` is ``path``, else ``path`` (relative to here when inside it)."""
    found = shutil.which(name)
    if found is not None and Path(found).absolute() == path.absolute():  # a venv python links the system one
        return name
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:  # an environment outside this folder
        return str(path)


def _command(args: argparse.Namespace, overrides: list[str] | None = None) -> list[str]:
    """The command as the user started it (``domino-train`` or ``python scripts/train.py``), with
    ``overrides`` (default: the ones given)."""
    started = Path(sys.argv[0]).name
    command = (
        [program("domino-train")]
        if started == "domino-train"
        else [_typed(Path(sys.executable), "python"), "scripts/train.py"]
    )
    return [*command, args.config, *(args.overrides if overrides is None else overrides)]
