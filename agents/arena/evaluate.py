"""Benchmark policies in the duplicate arena.

    domino-evaluate                                              # the shipped arena config "bots"
    domino-evaluate draw deals=500 matches=0                     # a shipped arena config, by name
    domino-evaluate "policies=[my_model.zip,mypkg.policies:mine,strong,pimc]"  # an SB3 model, an import path
    python scripts/evaluate.py configs/arena/block.yaml policies=[strong,pimc] bots.pimc.samples=24
    python scripts/evaluate.py configs/arena/bots.yaml ray.workers=4   # the deals sharded over Ray tasks
    domino-evaluate --benchmark block-2p my_model.zip               # the standard benchmark of a policy

A policy is a bot's name, a shipped agent's name, a checkpoint file (``.pt``; a
Stable-Baselines3 ``.zip`` with the ``sb3`` extra) or ``package.module:attribute``, a Python
object imported from the current folder (``agents.bots.adapters``: a function, a torch module,
an SB3 model...). The config is a YAML file or the name of a shipped arena config (``configs/arena/``,
``agents.configuration.shipped_configs("arena")``; a training config's name is refused, naming
``domino-train``). ``domino-evaluate`` and ``python scripts/evaluate.py`` are the same command.

Overrides are ``key.sub=value`` (values read as YAML); unknown keys, wrong
types and bad presets are rejected with the key named. Results go to the
terminal (rich tables) and to ``output.dir`` as JSON, CSV and PNG.
"""

from __future__ import annotations

import argparse
import signal
from pathlib import Path

from rich.console import Console

from agents.arena import distributed
from agents.arena.benchmark import run_command as run_benchmark
from agents.arena.config import OutputConfig, load_config
from agents.arena.report import print_result, progress_bars, save
from agents.arena.tournament import ArenaInterrupted, ArenaResult, run_arena
from agents.bots.adapters import PolicyError
from agents.cli import error_exit
from agents.configuration import ConfigError
from domino_env.files import check_writable

DEFAULT_CONFIG = "bots"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "config", nargs="?", help="YAML config file or shipped name (--benchmark: the policy)"
    )
    parser.add_argument("overrides", nargs="*", help="key.sub=value overrides")
    parser.add_argument(
        "--benchmark",
        metavar="SUITE",
        help="the standard benchmark SUITE ('list': the suites) of the policy given (default: SUITE's agent)",
    )
    args = parser.parse_args(argv)
    if args.benchmark is not None:  # agents/arena/benchmark.py
        policy, overrides = args.config, args.overrides
        if policy is not None and "=" in policy:  # only overrides were given
            policy, overrides = None, [policy, *overrides]
        return run_benchmark(args.benchmark, policy, overrides, Console())
    config_path, overrides = args.config or DEFAULT_CONFIG, args.overrides
    if "=" in config_path:  # only overrides were given
        config_path, overrides = DEFAULT_CONFIG, [config_path, *overrides]
    console = Console()
    config = None  # Ctrl-C may come while it is read
    try:
        config = load_config(config_path, overrides)
        if config.ray.workers:
            distributed.require_ray()  # before anything is made or played
        check_writable(Path(config.output.dir))  # before any game: not after an hour of them
        with progress_bars(console, config.progress) as progress:
            run = distributed.run_arena if config.ray.workers else run_arena  # ray.workers: on Ray
            result = run(config, progress)
    except ConfigError as error:
        return error_exit(console, error, "config error")
    except PolicyError as error:  # a policy that failed or broke the rules mid-run: whose, where, what
        return error_exit(console, error, "policy error")
    except OSError as error:
        return error_exit(console, error)
    except MemoryError:
        console.print(
            "[red]out of memory:[/red] lower deals, matches, batch or the search bots' "
            "samples and rollouts (bots.pimc.samples)",
            soft_wrap=True,
        )
        return 2
    except ArenaInterrupted as stopped:  # Ctrl-C after some pairs: theirs are shown and kept
        console.print(
            f"interrupted: {stopped.finished} of {stopped.total} pairs had finished; their results "
            "follow, saved with '-partial' in the name (earlier result files are as they were)",
            soft_wrap=True,
        )
        print_result(stopped.result, console)
        written = _save(stopped.result, config.output, "-partial", console)
        return 128 + signal.SIGINT if written else 1
    except KeyboardInterrupt:  # Ctrl-C before the first pair finished: one line
        sharded = (
            "ray.workers shares the deals of all pairs out, so none had finished"
            if config is not None and config.ray.workers
            else ""
        )
        console.print(
            f"interrupted: {sharded or 'no pair had finished'}; nothing was written (earlier result "
            "files are as they were). Fewer deals finish sooner: deals=N",
            soft_wrap=True,
        )
        return 128 + signal.SIGINT
    print_result(result, console)
    return 0 if _save(result, config.output, "", console) else 1


def _save(result: ArenaResult, out: OutputConfig, suffix: str, console: Console) -> bool:
    """Write the result files ``out`` asks for (their names end in ``suffix``); False if the disk refused."""
    stem = Path(out.dir) / ((out.name or f"{result.preset}-{result.players}p") + suffix)
    try:
        for path in save(result, stem, out.json, out.csv, out.plot):
            console.print(f"wrote {path}")
    except OSError as error:  # the disk filled up during the run: the previous files are still whole
        error_exit(console, error)
        return False
    return True


if __name__ == "__main__":
    raise SystemExit(main())
