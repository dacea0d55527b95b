"""Train a PPO policy by batched self-play (one network plays every seat), CleanRL style.

    python scripts/train.py configs/train/quickstart.yaml
    domino-train block total_updates=2000 ppo.lr=0.0001 num_games=512  # a shipped training config, by name
    domino-train quickstart --resume  # continue runs/<name>/ from its last checkpoint
    tensorboard --logdir runs

The config is a YAML file or the name of a shipped training config (``configs/train/``,
``agents.configuration.shipped_configs("train")``; an arena or RLlib config's name is refused,
naming its command). ``domino-train`` and ``python scripts/train.py`` are the same command.

Each update plays ``rollout_steps`` table steps of ``num_games`` games from fresh
deals, in shards of ``shard_games`` seeded by (seed, update, shard): the same for any
``ray.workers`` (training/distributed.py). Then it runs the PPO epochs: ``_train``'s loop, one
phase function each (``collect``, ``learn``, ``log``, ``checkpoint``), reading and
writing the run's ``RunState`` (training/state.py). Fresh deals per update
make a checkpoint at an update boundary the whole training state (weights,
optimizer, RNG states), so a resumed run repeats an uninterrupted one exactly
on CPU; the price is that the last unfinished round of each game in a rollout
is bootstrapped from the value net instead of played on. Evaluations run on
their own random streams (on or off, they leave the training alone), and a kill
at any point, mid-write or mid-evaluation, is completed by ``--resume``: see
``training/state.py`` for the write order.

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
import os
import signal
import time
from collections.abc import Callable

import numpy as np
import torch
import yaml
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from torch.utils.tensorboard import SummaryWriter

from agents.cli import error_exit
from agents.configuration import ConfigError
from agents.training.checkpoint import CheckpointError, update_checkpoints
from agents.training.config import SELF, PPOConfig, TrainConfig, load_train_config
from agents.training.distillation import distill
from agents.training.distributed import Fleet, LocalRollouts, Rollouts
from agents.training.evaluation import evaluate_checkpoint
from agents.training.network import resolve_device
from agents.training.ppo import LOSSES, Rollout, compute_advantages, ppo_update
from agents.training.run_hints import Terminated, already_complete, how_to_resume, next_steps, terminate
from agents.training.run_lock import RunLock
from agents.training.state import Pending, RunState, weights
from domino_env.engine.rules import Rules


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", help="YAML config file or shipped training config name (quickstart)")
    parser.add_argument("overrides", nargs="*", help="key.sub=value overrides")
    parser.add_argument("--resume", action="store_true", help="continue from the run's last checkpoint")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, terminate)
    console = Console()
    config = None
    try:
        config = load_train_config(args.config, args.overrides)
        stats = train(config, resume=args.resume, console=console)
    except (ConfigError, CheckpointError, OSError) as error:  # OSError: a folder, a full disk
        return error_exit(console, error)
    except KeyboardInterrupt as stop:  # Ctrl-C or SIGTERM: say how to go on, no traceback
        signum = signal.SIGTERM if isinstance(stop, Terminated) else signal.SIGINT
        console.print(how_to_resume(stop, config, args), markup=False, highlight=False, soft_wrap=True)
        return 128 + signum
    if args.resume and not stats["updates_run"]:
        console.print(already_complete(config, args), markup=False, highlight=False, soft_wrap=True)
        return 0
    console.print(
        f"{config.name}: {stats['update']:.0f} updates, {stats['global_step']:,.0f} env steps, "
        f"{stats['SPS']:,.0f} steps/s; checkpoints in {config.run_dir / 'checkpoints'}"
    )
    console.print(next_steps(config), markup=False, highlight=False, soft_wrap=True)
    return 0


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
    config.check_against(rules)
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
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # needed by deterministic CUDA matmuls
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(config.threads)
    device = resolve_device(config.device)
    console.print(
        f"{config.name}: {config.preset} {rules.players}p on {device}, {config.threads} torch "
        f"thread{'s' if config.threads > 1 else ''} (threads=N; 1 keeps a shared or busy machine fast)"
    )
    if fleet is not None and (idle := fleet.idle()):  # fewer rollout shards than Ray actors
        console.print(idle, markup=False, highlight=False)
    state = RunState.start(config, rules, device, resuming=resume)
    # The local rollouts' set-up (trained agents as opponents, loaded once, frozen). Building networks
    # draws from torch's RNG, so it comes before a resume restores it: a resumed run repeats the whole one.
    rollouts: Rollouts = fleet or LocalRollouts(config, rules, device)
    resume, pending = _resume(state, config, resume, console)
    # A context manager: an interrupted run (Ctrl-C, SIGTERM) still flushes what it logged. Resuming
    # drops what was logged after the checkpoint's update (step >= purge_step), to be logged again.
    # A fresh start drops everything an earlier, killed attempt logged (step >= 0): distill/* is not
    # logged twice when a run killed during its distillation is started again.
    writer = SummaryWriter(str(config.run_dir), purge_step=state.global_step + 1 if resume else 0)
    writer.add_text("config", "```yaml\n" + yaml.safe_dump(config.to_dict(), sort_keys=False) + "```")
    stats: dict[str, float] = {}
    sps, first_update = 0.0, state.update
    with writer, _progress(config, console) as bar, fleet or contextlib.nullcontext():
        task = bar.add_task(
            f"train {config.name}", total=config.total_updates, completed=state.update, info=""
        )
        if pending is not None:
            evaluate_checkpoint(*pending, state, config, writer, console)
        if config.distill.rounds and not resume:
            # 0. Distillation: the network learns the search teacher's values of every legal move
            #    (training/distillation.py); checkpointed and evaluated as update 0, then PPO takes over.
            distill(state, config, rules, device, writer, bar, fleet)
            state.snapshots = [weights(state.model)]
            checkpoint(state, config, writer, console)
        start, start_step = time.perf_counter(), state.global_step  # SPS counts the PPO updates alone
        while state.update < config.total_updates:
            rollout = collect(state, rollouts)
            stats = learn(state, config.ppo, rollout, device)
            state.advance(config.rollout_steps * config.num_games, config.snapshots)
            sps = (state.global_step - start_step) / (time.perf_counter() - start)
            log(writer, state, rollout, stats, sps)
            bar.update(task, completed=state.update, info=f"{sps:,.0f} SPS  kl {stats['approx_kl']:.4f}")
            score = checkpoint(state, config, writer, console)
            if score is not None:
                stats["eval_score"] = score
                if report is not None:  # --- Ray Tune: the trial's result (training/tune.py)
                    report(state.update, score)
    stats["update"], stats["global_step"], stats["SPS"] = state.update, state.global_step, sps
    stats["updates_run"] = state.update - first_update
    return stats


def collect(state: RunState, rollouts: Rollouts) -> Rollout:
    """1. Rollout: ``rollout_steps`` table steps of fresh deals, the learner's moves sampled from the
    network, against its opponents: the shards played in this process or by the Ray actors
    (``ray.workers``), seeded alike (training/distributed.py)."""
    return rollouts.collect(state.model, state.update, state.snapshots, state.rng)


def learn(state: RunState, hyper: PPOConfig, rollout: Rollout, device: torch.device) -> dict[str, float]:
    """2. Advantages along each seat's own decisions, then the clipped PPO epochs (the value loss alone
    for the first ``ppo.critic_warmup`` updates); the update's statistics."""
    advantages, returns = compute_advantages(rollout, hyper.gamma, hyper.gae_lambda)
    train_policy = state.update >= hyper.critic_warmup
    return ppo_update(
        state.model, state.optimizer, rollout, advantages, returns, hyper, state.rng, device, train_policy
    )


def log(
    writer: SummaryWriter, state: RunState, rollout: Rollout, stats: dict[str, float], sps: float
) -> None:
    """3. The update's scalars, under CleanRL's names (module docstring)."""
    step = state.global_step
    for key in LOSSES:
        writer.add_scalar(f"losses/{key}", stats[key], step)
    writer.add_scalar("charts/SPS", sps, step)
    writer.add_scalar("charts/update", state.update, step)
    writer.add_scalar("charts/learning_rate", state.optimizer.param_groups[0]["lr"], step)
    for name, values in rollout.episode_returns.items():
        if values and name != SELF:
            writer.add_scalar(f"charts/return_vs_{name}", float(np.mean(values)), step)
    episodes = [value for values in rollout.episode_returns.values() for value in values]
    writer.add_scalar("charts/episodes", len(episodes), step)
    if episodes:  # CleanRL's episode charts: every finished episode of the learner's seats
        writer.add_scalar("charts/episodic_return", np.mean(episodes), step)
        writer.add_scalar("charts/episodic_length", np.mean(rollout.episode_lengths), step)


def checkpoint(state: RunState, config: TrainConfig, writer: SummaryWriter, console: Console) -> float | None:
    """4. The checkpoint of the update when one is due (atomic, the last ``checkpoint.keep`` kept), then
    the arena on it when an evaluation is (the best one is kept as best.pt); its score, or None."""
    last = state.update == config.total_updates
    evaluate = config.eval.every > 0 and (state.update % config.eval.every == 0 or last)
    if not (evaluate or last or state.update % config.checkpoint.every == 0):
        return None
    path = config.run_dir / "checkpoints" / f"update_{state.update:06d}.pt"
    payload = state.save(path, config, eval_due=evaluate)
    for old in update_checkpoints(path.parent)[: -config.checkpoint.keep]:
        old.unlink()
    return evaluate_checkpoint(path, payload, state, config, writer, console) if evaluate else None


def _resume(
    state: RunState, config: TrainConfig, resume: bool, console: Console
) -> tuple[bool, Pending | None]:
    """Whether the run goes on from its last checkpoint (put back into ``state``; with it, its evaluation
    if a kill cut that short). A fresh start on top of checkpoints is refused; a kill's partial writes go."""
    checkpoints = config.run_dir / "checkpoints"
    existing = update_checkpoints(checkpoints)
    if resume and not existing and config.distill.rounds and (config.run_dir / "teacher").is_dir():
        # Killed during the distillation, before its first checkpoint: what it had done is the
        # teacher's cached rounds, which a fresh start reuses (the same run, number for number).
        console.print("no checkpoint yet: the distillation starts again, reusing the cached teacher rounds")
        resume = False
    if existing and not resume:
        raise ConfigError(f"{checkpoints} already holds checkpoints: pass --resume, or choose another name")
    pending = state.resume(config, console) if resume else None
    for partial in checkpoints.glob(".*.pt.*.tmp"):  # what a kill during save_checkpoint left
        partial.unlink()
    return resume, pending


def _progress(config: TrainConfig, console: Console) -> Progress:
    """The progress bars (the updates, the teacher's rounds), or nothing with ``progress: false``."""
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[info]}"),
    )
    return Progress(*columns, TimeRemainingColumn(), console=console, disable=not config.progress)


if __name__ == "__main__":
    raise SystemExit(main())
