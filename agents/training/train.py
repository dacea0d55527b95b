"""Train a PPO policy by batched self-play (one network plays every seat), CleanRL style.

    python scripts/train.py configs/train/quickstart.yaml
    domino-train block total_updates=2000 ppo.lr=0.0001 num_games=512  # a shipped training config, by name
    domino-train quickstart --resume  # continue runs/<name>/ from its last checkpoint
    tensorboard --logdir runs

The config is a YAML file or the name of a shipped training config (``configs/train/``,
``agents.configuration.shipped_configs("train")``; an arena or RLlib config's name is refused,
naming its command). ``domino-train`` and ``python scripts/train.py`` are the same command.

Each update plays ``rollout_steps`` table steps of ``num_games`` games from fresh
deals seeded by (seed, update), then runs the PPO epochs. Fresh deals per update
make a checkpoint at an update boundary the whole training state (weights,
optimizer, RNG states), so a resumed run repeats an uninterrupted one exactly
on CPU; the price is that the last unfinished round of each game in a rollout
is bootstrapped from the value net instead of played on. Evaluations run on
their own random streams (on or off, they leave the training alone), and a kill
at any point, mid-write or mid-evaluation, is completed by ``--resume``: see
``_evaluate_and_record`` for the write order.

Opponents (``opponents``, shares of the games): ``self`` games seat the learner at
every seat; ``past`` games seat it at one seat against a snapshot of itself from
an earlier update (sampling; the pool of the last ``snapshots.keep``, one taken
every ``snapshots.every`` updates, is saved in the checkpoints); a bot name seats
it against that bot, and a trained agent's name or checkpoint against that frozen network
(``domino-exploit`` is built on this). Only the learner's decisions are trained on.

Writes to ``runs/<name>/``: TensorBoard scalars under CleanRL's names (``losses/value_loss``,
``losses/policy_loss``, ``losses/entropy``, ``losses/old_approx_kl``, ``losses/approx_kl``,
``losses/clipfrac``, ``losses/explained_variance``, ``charts/learning_rate``,
``charts/episodic_return``, ``charts/episodic_length``, ``charts/SPS`` (decisions of every
seat per second, end to end); docs/training/index.md lists them), ``charts/return_vs_<bot>``,
``eval/*`` from duplicate arena runs against ``eval.opponents`` and ``best.pt``, the best
checkpoint so far: ``eval/diff_vs_best``), the config as
text, and ``checkpoints/`` (the last ``checkpoint.keep`` and ``best.pt``, the best worst-case
points difference over the eval opponents; for ``episode: match`` the best worst-case share of
duplicate matches won, ``eval/match_win_vs_<bot>``). Any checkpoint plays in the
arena: ``python scripts/evaluate.py policies=[runs/quickstart/checkpoints/best.pt,strong]``
(with ``agents.training.checkpoint`` imported).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import hashlib
import json
import os
import random
import shlex
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn
from torch.utils.tensorboard import SummaryWriter

from agents.arena.config import ArenaConfig
from agents.arena.tournament import run_arena
from agents.bots.registry import BOT_NAMES, checkpoint_path, load_policy, make_bot
from agents.cli import error_exit
from agents.configuration import ConfigError
from agents.training.checkpoint import (
    FORMAT,
    MEMBERS,
    POLICY_KEYS,
    CheckpointError,
    NetworkPolicy,
    build_model,
    capture_rng,
    load_checkpoint,
    restore_rng,
    save_checkpoint,
    update_checkpoints,
)
from agents.training.config import (
    PAST,
    RESUMABLE_CHANGES,
    SELF,
    TrainConfig,
    load_train_config,
    parse_train_config,
)
from agents.training.distill import (
    Labelled,
    LabelRounds,
    collect_positions,
    distill_epochs,
    label_positions,
    load_labels,
    make_teacher,
    save_labels,
)
from agents.training.distributed import Fleet
from agents.training.network import ActorCritic, build_network, resolve_device
from agents.training.ppo import (
    LOSSES,
    Opponents,
    collect_rollout,
    compute_advantages,
    load_fixed,
    opponent_policies,
    ppo_update,
)
from agents.training.run_lock import RunLock
from domino_env.engine.core import DominoCore
from domino_env.engine.rules import Rules
from domino_env.envs.selfplay import SelfPlay


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", help="YAML config file or shipped training config name (quickstart)")
    parser.add_argument("overrides", nargs="*", help="key.sub=value overrides")
    parser.add_argument("--resume", action="store_true", help="continue from the run's last checkpoint")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _terminate)
    console = Console()
    config = None
    try:
        config = load_train_config(args.config, args.overrides)
        stats = train(config, resume=args.resume, console=console)
    except (ConfigError, CheckpointError, OSError) as error:  # OSError: a folder, a full disk
        return error_exit(console, error)
    except KeyboardInterrupt as stop:  # Ctrl-C or SIGTERM: say how to go on, no traceback
        signum = signal.SIGTERM if isinstance(stop, _Terminated) else signal.SIGINT
        console.print(_how_to_resume(stop, config, args), markup=False, highlight=False, soft_wrap=True)
        return 128 + signum
    if args.resume and not stats["updates_run"]:
        console.print(_already_complete(config, args), markup=False, highlight=False, soft_wrap=True)
        return 0
    console.print(
        f"{config.name}: {stats['update']:.0f} updates, {stats['global_step']:,.0f} env steps, "
        f"{stats['SPS']:,.0f} steps/s; checkpoints in {config.run_dir / 'checkpoints'}"
    )
    console.print(_next_steps(config), markup=False, highlight=False, soft_wrap=True)
    return 0


def _command(args: argparse.Namespace, overrides: list[str] | None = None) -> list[str]:
    """The command as the user started it (``domino-train`` or ``python scripts/train.py``), with
    ``overrides`` (default: the ones given)."""
    started = Path(sys.argv[0]).name
    program = ["domino-train"] if started == "domino-train" else ["python", "scripts/train.py"]
    return [*program, args.config, *(args.overrides if overrides is None else overrides)]


def _already_complete(config: TrainConfig, args: argparse.Namespace) -> str:
    """What a second run of a finished config says: nothing was left to do, and how to go on."""
    kept = [arg for arg in args.overrides if not arg.startswith(("total_updates=", "name="))]
    longer = shlex.join(_command(args, [*kept, f"total_updates={max(2 * config.total_updates, 100)}"]))
    another = shlex.join(_command(args, [*kept, f"name={config.name}-2"]))
    return (
        f"{config.name} is complete ({config.total_updates} of {config.total_updates} updates in "
        f"{config.run_dir}): nothing to do.\n"
        f"  train it longer:   {longer} --resume\n"
        f"  or start another:  {another}\n" + _next_steps(config)
    )


def _next_steps(config: TrainConfig) -> str:
    """Where to look at the run, and how to measure and play what it trained."""
    best = config.run_dir / "checkpoints" / "best.pt"
    agent = best if best.exists() else max((config.run_dir / "checkpoints").glob("update_*.pt"), default=best)
    game = f"preset={config.preset}" + (f" players={config.players}" if config.players else "")
    return (
        f"  look at it:        tensorboard --logdir {config.output_dir}\n"
        f"  measure it:        domino-evaluate {game} 'policies=[{agent},strong,random]' deals=2000\n"
        f"  play against it:   domino-serve --checkpoint {agent}   (then http://127.0.0.1:8000)"
    )


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised as an interrupt: it unwinds like Ctrl-C (logs flushed, checkpoints whole)."""


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated


def _how_to_resume(stop: KeyboardInterrupt, config: TrainConfig | None, args: argparse.Namespace) -> str:
    """One line: where the last checkpoint is and the command that continues from it."""
    what = "terminated" if isinstance(stop, _Terminated) else "interrupted"
    command = _command(args)
    existing = update_checkpoints(config.run_dir / "checkpoints") if config else []
    if not existing:
        return f"{what} before the first checkpoint; start again with: {shlex.join(command)}"
    return f"{what}: last checkpoint {existing[-1]}; continue with: {shlex.join([*command, '--resume'])}"


def train(
    config: TrainConfig,
    resume: bool = False,
    console: Console | None = None,
    report: Callable[[int, float], None] | None = None,
) -> dict[str, float]:
    """Run (or continue) the training ``config`` describes; returns the last update's statistics.

    ``report(update, score)`` is told each evaluation's score (Ray Tune trials: training/tune.py).
    The run folder is locked for the whole run (training/run_lock.py): a second run of the same name
    is refused, naming the first one's PID.
    """
    rules = config.build_rules()
    _check_bots(config, rules)
    if config.distill.pile_samples > 1 and not rules.drawing:
        raise ConfigError(f"distill.pile_samples: {config.preset} has no draw pile to shuffle (set it to 1)")
    fleet = Fleet(config) if config.ray.workers else None  # --- Ray: rollout and search actors, or None
    with RunLock(config.run_dir):
        return _train(config, rules, fleet, resume, console or Console(), report)


def _train(
    config: TrainConfig,
    rules: Rules,
    fleet: Fleet | None,
    resume: bool,
    console: Console,
    report: Callable[[int, float], None] | None,
) -> dict[str, float]:
    """``train`` once its config is checked (and Ray found where asked for), inside the run folder's lock."""
    checkpoints = config.run_dir / "checkpoints"

    # Seeding: numpy draws the minibatches, torch the learner's moves; deals are seeded per update.
    random.seed(config.seed)
    rng = np.random.default_rng(config.seed)
    torch.manual_seed(config.seed)
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # needed by deterministic CUDA matmuls
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(config.threads)
    device = resolve_device(config.device)
    console.print(
        f"{config.name}: {config.preset} {rules.players}p on {device}, {config.threads} torch "
        f"thread{'s' if config.threads > 1 else ''} (threads=N; 1 keeps a shared or busy machine fast)"
    )

    network = config.model.model_dump()
    model = build_network(rules, network).to(device)
    if config.model.init and not resume:  # fine-tuning: a trained network's weights instead of random ones
        _load_weights(model, config.model.init, rules)
    if config.episode == "round" and not rules.fives:
        # Every round starts at 0-0 and, without fives, scores only when it ends: no position of
        # this run shows a game score, so a match's scores must not move its moves either.
        model.ignore_game_scores()
    optimizer = torch.optim.Adam(model.parameters(), lr=config.ppo.lr, eps=1e-5)
    update, global_step, best_score = 0, 0, float("-inf")
    snapshots = [_weights(model)]  # the pool the "past" opponent draws from
    pending = None  # the last checkpoint, when a kill cut its evaluation short: evaluated first
    # Trained agents as opponents: loaded once, frozen. Building their networks draws from torch's
    # RNG, so they are loaded before a resume restores it: a resumed run repeats the uninterrupted one.
    bots = [name for name in config.opponents if name not in (SELF, PAST)]
    fixed = load_fixed(bots, rules)
    existing = update_checkpoints(checkpoints)
    if resume and not existing and config.distill.rounds and (config.run_dir / "teacher").is_dir():
        # Killed during the distillation, before its first checkpoint: what it had done is the
        # teacher's cached rounds, which a fresh start reuses (the same run, number for number).
        console.print("no checkpoint yet: the distillation starts again, reusing the cached teacher rounds")
        resume = False
    if resume:
        if not existing:
            raise CheckpointError(
                f"--resume: no checkpoint in {checkpoints} (the run never reached one): "
                "start it without --resume"
            )
        payload = _recover(existing[-1], checkpoints / "best.pt")
        _check_resumable(payload["config"], config, existing[-1])
        try:
            model.load_state_dict(payload["model"])
            optimizer.load_state_dict(payload["optimizer"])
        except (RuntimeError, ValueError) as error:
            raise CheckpointError(f"checkpoint {existing[-1]}: does not fit this config: {error}") from None
        restore_rng(payload["rng"], rng)
        update, global_step, best_score = payload["update"], payload["global_step"], payload["best_score"]
        snapshots = payload["snapshots"]
        if payload.get("eval_due") and payload.get("eval_score") is None:
            pending = payload
        console.print(f"resumed from {existing[-1]} (update {update})")
    elif existing:
        raise ConfigError(f"{checkpoints} already holds checkpoints: pass --resume, or choose another name")
    for partial in checkpoints.glob(".*.pt.*.tmp"):  # what a kill during save_checkpoint left
        partial.unlink()

    # A context manager: an interrupted run (Ctrl-C, SIGTERM) still flushes what it logged. Resuming
    # drops what was logged after the checkpoint's update (step >= purge_step), to be logged again.
    # A fresh start drops everything an earlier, killed attempt logged (step >= 0): distill/* is not
    # logged twice when a run killed during its distillation is started again.
    writer = SummaryWriter(str(config.run_dir), purge_step=global_step + 1 if resume else 0)
    writer.add_text("config", "```yaml\n" + yaml.safe_dump(config.to_dict(), sort_keys=False) + "```")
    stats: dict[str, float] = {}
    sps = 0.0
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[info]}"),
    )
    progress = Progress(*columns, TimeRemainingColumn(), console=console, disable=not config.progress)
    with writer, progress as bar, fleet or contextlib.nullcontext():
        task = bar.add_task(f"train {config.name}", total=config.total_updates, completed=update, info="")
        if pending:
            best_score = _evaluate_and_record(existing[-1], pending, rng, config, writer, console)
        if config.distill.rounds and not resume:
            # 0. Distillation: the network learns the search teacher's values of every legal move
            #    (training/distill.py); it is checkpointed and evaluated as update 0, then PPO takes over.
            _distill(model, config, rules, device, rng, writer, bar, fleet)
            snapshots = [_weights(model)]
            path = checkpoints / "update_000000.pt"
            payload = _payload(model, optimizer, rng, config, update, global_step, best_score, snapshots)
            payload["eval_due"] = config.eval.every > 0
            save_checkpoint(path, payload)
            if payload["eval_due"]:
                best_score = _evaluate_and_record(path, payload, rng, config, writer, console)
        start, start_step = time.perf_counter(), global_step  # SPS counts the PPO updates alone
        first_update = update
        while update < config.total_updates:
            # 1. Rollout: fresh seeded deals, the learner's moves sampled from the network.
            if fleet is not None:  # --- Ray (ray.workers): rollout actors play it (training/distributed.py)
                rollout = fleet.collect(model, update, snapshots, rng)
            else:
                play = SelfPlay(
                    rules, config.num_games, config.episode, seed=np.random.default_rng([config.seed, update])
                )
                update_seed = config.seed * 1_000_003 + update
                policies = opponent_policies(bots, rules, update_seed, config.bots, fixed)
                if PAST in config.opponents:
                    past = build_network(rules, network).to(device)
                    past.load_state_dict(snapshots[rng.integers(len(snapshots))])
                    generator = torch.Generator(device=device).manual_seed(update_seed)
                    policies[PAST] = NetworkPolicy(PAST, past, greedy=False, generator=generator)
                opponents = Opponents.assign(config.num_games, rules, config.opponents, policies)
                rollout = collect_rollout(
                    model, play, config.rollout_steps, opponents, device, config.ppo.reward_scale,
                    config.reward,
                )  # fmt: skip

            # 2. Advantages along each seat's own decisions, then the clipped PPO epochs.
            advantages, returns = compute_advantages(rollout, config.ppo.gamma, config.ppo.gae_lambda)
            train_policy = update >= config.ppo.critic_warmup
            stats = ppo_update(
                model, optimizer, rollout, advantages, returns, config.ppo, rng, device, train_policy
            )
            update += 1
            global_step += config.rollout_steps * config.num_games
            if update % config.snapshots.every == 0:
                snapshots = [*snapshots, _weights(model)][-config.snapshots.keep :]
            sps = (global_step - start_step) / (time.perf_counter() - start)

            # 3. Logging.
            for key in LOSSES:
                writer.add_scalar(f"losses/{key}", stats[key], global_step)
            writer.add_scalar("charts/SPS", sps, global_step)
            writer.add_scalar("charts/update", update, global_step)
            writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], global_step)
            for name, values in rollout.episode_returns.items():
                if values and name != SELF:
                    writer.add_scalar(f"charts/return_vs_{name}", float(np.mean(values)), global_step)
            episodes = [value for values in rollout.episode_returns.values() for value in values]
            writer.add_scalar("charts/episodes", len(episodes), global_step)
            if episodes:  # CleanRL's episode charts: every finished episode of the learner's seats
                writer.add_scalar("charts/episodic_return", np.mean(episodes), global_step)
                writer.add_scalar("charts/episodic_length", np.mean(rollout.episode_lengths), global_step)
            bar.update(task, completed=update, info=f"{sps:,.0f} SPS  kl {stats['approx_kl']:.4f}")

            # 4. Checkpoint (atomic, last K kept), then the arena on it; the best one is kept as best.pt.
            last = update == config.total_updates
            evaluate = config.eval.every > 0 and (update % config.eval.every == 0 or last)
            if evaluate or last or update % config.checkpoint.every == 0:
                path = checkpoints / f"update_{update:06d}.pt"
                payload = _payload(model, optimizer, rng, config, update, global_step, best_score, snapshots)
                payload["eval_due"] = evaluate
                save_checkpoint(path, payload)
                _prune(checkpoints, config.checkpoint.keep)
                if evaluate:
                    best_score = _evaluate_and_record(path, payload, rng, config, writer, console)
                    stats["eval_score"] = payload["eval_score"]
                    if report is not None:  # --- Ray Tune: the trial's result (training/tune.py)
                        report(update, payload["eval_score"])
    stats["update"], stats["global_step"], stats["SPS"] = update, global_step, sps
    stats["updates_run"] = update - first_update
    return stats


def _payload(
    model: ActorCritic,
    optimizer: torch.optim.Optimizer,
    rng: np.random.Generator,
    config: TrainConfig,
    update: int,
    global_step: int,
    best_score: float,
    snapshots: list[dict[str, torch.Tensor]],
) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "model": _weights(model),
        "optimizer": optimizer.state_dict(),
        "config": config.to_dict(),
        "update": update,
        "global_step": global_step,
        "best_score": best_score,
        "rng": capture_rng(rng),
        "snapshots": snapshots,
        "eval_due": False,  # whether this update is evaluated...
        "eval_score": None,  # ...and its score once it was (see _evaluate_and_record)
    }


def _weights(model: ActorCritic) -> dict[str, torch.Tensor]:
    """A detached CPU copy of the weights (checkpoints and snapshots must not follow later updates)."""
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}


def _prune(folder: Path, keep: int) -> None:
    """Delete all but the ``keep`` most recent ``update_*.pt`` (best.pt is a separate file)."""
    for old in update_checkpoints(folder)[:-keep]:
        old.unlink()


def _evaluate_and_record(
    path: Path,
    payload: dict[str, Any],
    rng: np.random.Generator,
    config: TrainConfig,
    writer: SummaryWriter,
    console: Console,
) -> float:
    """Evaluate checkpoint ``path`` (saved from ``payload``), keep it as best.pt if it is the best so far,
    record its score in it; returns the best score so far.

    The write order makes any kill recoverable by ``_recover``:

    1. ``update_N.pt`` is saved with ``eval_due`` and no ``eval_score`` (before this is called);
    2. the arena plays it (scalars logged and flushed);
    3. if it beats the best score, it is saved as ``best.pt``, its score as ``best_score``;
    4. ``update_N.pt`` is saved again with its ``eval_score`` (and the new ``best_score``).

    Invariant: best.pt is written before any checkpoint records its score, so best.pt's ``best_score``
    is the best score so far (the resume takes it from there, not from ``update_N.pt``). A kill before 3
    leaves the evaluation pending and best.pt the one it played: the resume evaluates it again. A kill
    between 3 and 4 leaves best.pt holding update N and its score: the resume takes the record from it.
    """
    curves = [("eval", payload["global_step"])]
    if config.distill.evaluate and payload["update"] == 0:  # the distillation curve's last point
        curves.append(("distill_eval", config.distill.rounds * config.distill.positions))
    payload["eval_score"] = _evaluate(path, config, rng, writer, curves, console)
    writer.flush()
    if payload["eval_score"] > payload["best_score"]:
        payload["best_score"] = payload["eval_score"]
        save_checkpoint(path.parent / "best.pt", payload)
    save_checkpoint(path, payload)
    return payload["best_score"]


def _recover(last: Path, best: Path) -> dict[str, Any]:
    """The payload of checkpoint ``last``, its ``best_score`` taken from ``best`` (see _evaluate_and_record).

    If ``best`` is the very same update with its evaluation recorded (a kill came between writing it and
    recording the score in ``last``), that record is completed from it.
    """
    payload = load_checkpoint(last)
    if not best.exists():
        payload["best_score"] = float("-inf")
        return payload
    kept = load_checkpoint(best)
    if kept["update"] == payload["update"] and payload.get("eval_score") is None:
        save_checkpoint(last, kept)
        return kept
    payload["best_score"] = kept["best_score"]
    return payload


def _check_bots(config: TrainConfig, rules: Rules) -> None:
    """Build every bot and load every trained agent the run will use, once, so that a bad option (an
    unknown keyword, a rollout_bot that is no bot nor checkpoint) or an agent of another game stops
    it before it starts, naming its key."""
    names = {name for name in (*config.opponents, *config.eval.opponents) if name not in (SELF, PAST)}
    checks = [
        (f"bots.{name}" if name in BOT_NAMES else "opponents", name, config.bots.get(name, {}))
        for name in sorted(names)
    ]
    if config.distill.rounds:
        checks.append(("distill.teacher", "pimc", config.distill.teacher))
    for key, name, options in checks:
        try:
            load_policy(name, rules, 0, **options)
        except (TypeError, ValueError) as error:
            raise ConfigError(f"{key}: {error}") from None


def _load_weights(model: ActorCritic, path: str, rules: Rules) -> None:
    """Copy the weights of the checkpoint or policy file at ``path``, or of the shipped agent so named
    (checked to fit), into ``model``."""
    try:
        source = checkpoint_path(path)
    except ValueError as error:
        raise CheckpointError(f"model.init: {error}") from None
    payload = load_checkpoint(source, POLICY_KEYS)
    if payload.get(MEMBERS):
        raise CheckpointError(
            f"model.init {path}: the average of {len(payload[MEMBERS]) + 1} networks; a run starts from "
            "one network (one of the runs it was exported from)"
        )
    trained = build_model(payload, path, rules)
    try:
        missing, unexpected = model.load_state_dict(trained.state_dict(), strict=False)
        # A privileged critic may start fresh on a network trained without one; nothing else may.
        if unexpected or any(not key.startswith("critic.") for key in missing):
            raise RuntimeError(f"missing {missing}, unexpected {unexpected}")
    except RuntimeError:
        raise CheckpointError(
            f"model.init {path}: its network {payload['config']['model']} is not this config's model"
        ) from None


def _distill(
    model: ActorCritic,
    config: TrainConfig,
    rules: Rules,
    device: torch.device,
    rng: np.random.Generator,
    writer: SummaryWriter,
    bar: Progress,
    fleet: Fleet | None,
) -> None:
    """``distill.rounds`` rounds of expert iteration (training/distill.py): label positions with the teacher,
    then train on every position labelled so far (or, ``distill.aggregate: last_round``, on the new
    ones until the last round). The last ``distill.refine`` rounds are a second phase: the teacher
    plays every move out with the network itself, and they fit their own labels only.

    Round 0's positions come from ``strong``'s play, later rounds' from the network's own sampled play
    (DAgger: the labels cover the states the network reaches); with ``model.init`` (a trained network
    refined by a better teacher) round 0's too. Each round's labels are cached in
    ``<run>/teacher/`` under a key of everything they depend on, so a run killed here and started
    again skips the search it has done; every round has its own seeds, cached or not. With ``fleet``
    (``ray.workers``) the search is shared out to its actors, each batch seeded by itself.
    """
    settings = config.distill
    optimizer = torch.optim.Adam(model.parameters(), lr=settings.lr, eps=1e-5)
    rounds: list[Labelled] = []  # every round's labels, mapped from their files in <run>/teacher/
    obs_size = DominoCore(rules, 1).obs_size
    first_refine = settings.rounds - settings.refine
    for round_ in range(settings.rounds):
        seed = config.seed * 1_000_003 + round_
        refining = round_ >= first_refine
        if refining and round_ == first_refine:  # a new phase: new targets, a fresh optimizer
            optimizer = torch.optim.Adam(model.parameters(), lr=settings.refine_lr, eps=1e-5)
        cache = config.run_dir / "teacher" / f"round_{round_:03d}"
        source = [config.preset, config.players, config.rules, config.seed, round_, settings.positions]
        source += [settings.games, settings.teacher, settings.privileged, _file_digests(settings.teacher)]
        if settings.pile_samples > 1:  # appended only when set: the caches of earlier runs stay valid
            source.append(settings.pile_samples)
        if fleet is not None:  # a seed per batch, not one stream: the labels may differ from a local run's
            source.append("ray")
        if refining:  # the playouts are the network's, whose weights the digest below names
            source.append("refine")
        own_play = round_ > 0 or bool(config.model.init)  # the positions the network itself reaches
        key = json.dumps(source) + (_digest(model) if own_play else "")
        data = load_labels(cache, key, obs_size, rules.num_actions)
        labelling = "labels read from the cache"
        if data is None:
            started = time.perf_counter()
            if not own_play:
                behaviour = make_bot("strong", rules, seed)
            else:
                generator = torch.Generator(device=device).manual_seed(seed)
                behaviour = NetworkPolicy("learner", model, greedy=False, generator=generator)
            positions = collect_positions(rules, behaviour, settings.positions, settings.games, seed)
            task = bar.add_task(
                f"teacher round {round_}", total=settings.positions, info="positions labelled"
            )

            def progress(done: int, task: TaskID = task) -> None:
                bar.update(task, completed=done)

            piles = np.random.default_rng([seed, 2])
            playouts = copy.deepcopy(model).cpu() if refining else None  # the network as it is now
            if fleet is not None:  # --- Ray (ray.workers): the actors search the batches
                fresh = fleet.label(positions, seed, progress, piles, playouts)
            else:
                teacher = make_teacher(rules, seed, settings.teacher, playouts)
                fresh = label_positions(
                    teacher, positions, settings.privileged, progress=progress,
                    pile_samples=settings.pile_samples, rng=piles,
                )  # fmt: skip
            del positions
            save_labels(cache, key, fresh)
            del fresh  # trained on from the file, a chunk at a time: memory does not grow with the rounds
            data = load_labels(cache, key, obs_size, rules.num_actions)
            if data is None:
                raise OSError(f"{cache}: the labels just written cannot be read back")
            labelling = f"labelled in {_duration(time.perf_counter() - started)}"
        rounds.append(data)
        last = round_ == settings.rounds - 1
        phase = rounds[first_refine:] if refining else rounds  # a refine round fits refine labels only
        phase_end = last or round_ == first_refine - 1
        labelled = LabelRounds(phase if phase_end or settings.aggregate == "every_round" else rounds[-1:])
        started = time.perf_counter()
        stats = distill_epochs(
            model, optimizer, labelled, settings.epochs, settings.batch,
            settings.temperature, config.ppo.reward_scale, config.ppo.vf_coef, config.ppo.max_grad_norm,
            rng, device, settings.target, settings.anneal and phase_end,
        )  # fmt: skip
        fitting = time.perf_counter() - started
        fitted = settings.epochs * len(labelled)
        for name, value in stats.items():
            writer.add_scalar(f"distill/{name}", value, round_)
        writer.add_scalar("distill/fit_positions_per_second", fitted / fitting, round_)
        bar.console.print(
            f"distill round {round_}: {len(labelled):,} positions, agreement with the "
            f"teacher {stats['agreement']:.1%}, regret {stats['regret']:.3f} points per decision; "
            f"{labelling}, {settings.epochs} epochs fitted in {_duration(fitting)} "
            f"({fitted / fitting:,.0f} positions/s)",
            soft_wrap=True,  # one line in a log file, whatever the terminal's width
        )
        # The last round's network is update 0, evaluated as such unless eval.every is 0.
        if settings.evaluate and (not last or config.eval.every == 0):
            path = config.run_dir / "checkpoints" / f"distill_round_{round_:03d}.pt"
            save_checkpoint(path, _payload(model, optimizer, rng, config, 0, 0, float("-inf"), []))
            curve = [("distill_eval", sum(len(part) for part in rounds))]
            _evaluate(path, config, rng, writer, curve, bar.console)


def _file_digests(options: dict[str, Any]) -> dict[str, str]:
    """A digest of each file the teacher's options name (a rollout or inference network): labels cached
    for one network are not taken for another one saved at the same path."""
    digests = {}
    for option, value in sorted(options.items()):
        if not isinstance(value, str) or value in BOT_NAMES:
            continue
        try:
            path = checkpoint_path(value)
        except ValueError:
            continue  # not a file: the teacher's own check says what is wrong with it
        digests[option] = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return digests


def _duration(seconds: float) -> str:
    """Wall time as people read it in a log: "48 s", "3 min 05 s", "1 h 02 min"."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def _digest(model: ActorCritic) -> str:
    """A short fingerprint of the weights (the behaviour of rounds after the first)."""
    hasher = hashlib.sha256()
    for tensor in model.state_dict().values():
        hasher.update(tensor.detach().cpu().numpy().tobytes())
    return hasher.hexdigest()[:16]


def _evaluate(
    path: Path,
    config: TrainConfig,
    rng: np.random.Generator,
    writer: SummaryWriter,
    curves: list[tuple[str, int]],
    console: Console,
) -> float:
    """Greedy policy at ``path`` vs each eval opponent and the best checkpoint so far, on duplicate deals.

    ``curves``: (TensorBoard section, step) pairs the results are logged under. The arena draws
    from torch's global RNG (it builds networks): training (``rng`` and the global streams) gets its
    streams back untouched, so that a run goes on the same with evaluations or without.

    Returns what picks ``best.pt``: the worst result against the eval opponents (the strongest one
    decides), as the points difference per round, or for match episodes the share of duplicate
    matches won (``eval.deals`` matches, besides the rounds).
    """
    best = path.parent / "best.pt"
    previous = [str(best)] if best.exists() else []
    matches = config.episode == "match"
    arena = ArenaConfig(
        preset=config.preset,
        players=config.players,
        rules=config.rules,
        policies=[str(path), *config.eval.opponents, *previous],
        format="head_to_head",
        deals=config.eval.deals,
        matches=config.eval.deals if matches else 0,
        seed=config.eval.seed,
        bots={name: options for name, options in config.bots.items() if name in config.eval.opponents},
        progress=False,
    )
    saved = capture_rng(rng)
    result = run_arena(arena)
    restore_rng(saved, rng)
    summary = []
    for pair in result.pairs:
        name = pair.second  # the arena names best.pt "best"
        for section, step in curves:
            writer.add_scalar(f"{section}/diff_vs_{name}", pair.diff, step)
            writer.add_scalar(f"{section}/ci_vs_{name}", pair.ci, step)
            writer.add_scalar(f"{section}/round_win_vs_{name}", pair.round_win[0], step)
            if matches:
                writer.add_scalar(f"{section}/match_win_vs_{name}", pair.match_win[0], step)
        summary.append(f"{name} {pair.diff:+.2f}±{pair.ci:.2f}")
        if matches:
            summary[-1] += f" (matches won {pair.match_win[0]:.1%})"
    console.print(f"eval {path.name}: points/round vs " + ", ".join(summary))
    against = result.pairs[: len(config.eval.opponents)]  # not the pair against best.pt
    return min(pair.match_win[0] if matches else pair.diff for pair in against)


def _check_resumable(saved: dict[str, Any], config: TrainConfig, path: Path) -> None:
    """Resuming with other rules, net or PPO settings would silently train something else: refuse it."""
    current = config.to_dict()
    saved = parse_train_config(saved).to_dict()  # keys added since the checkpoint take their defaults
    changed = sorted(k for k in current if k not in RESUMABLE_CHANGES and saved.get(k) != current[k])
    if changed:
        detail = "; ".join(f"{k}: {saved.get(k)!r} -> {current[k]!r}" for k in changed)
        raise CheckpointError(f"checkpoint {path}: was trained with a different config ({detail})")


if __name__ == "__main__":
    raise SystemExit(main())
