"""A run's distillation phase (``distill.rounds``, before PPO): expert iteration on the search teacher.

Each round labels positions with the teacher (``training/distill.py``), then trains on every position
labelled so far (or, ``distill.aggregate: last_round``, on the new ones until the last round). The
last ``distill.refine`` rounds are a second phase: the teacher plays every move out with the network
itself, and they fit their own labels only.

Round 0's positions come from ``strong``'s play, later rounds' from the network's own sampled play
(DAgger: the labels cover the states the network reaches); with ``model.init`` (a trained network
refined by a better teacher) round 0's too. Each round's labels are cached in ``<run>/teacher/``
under a key of everything they depend on, so a run killed here and started again skips the search
it has done; every round has its own seeds, cached or not. With a ``Fleet`` (``ray.workers``) the
search is shared out to its actors, each batch seeded by itself.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from typing import Any

import numpy as np
import torch
from rich.progress import Progress
from torch.utils.tensorboard import SummaryWriter

from agents.bots.registry import BOT_NAMES, checkpoint_path, make_bot
from agents.training.checkpoint import NetworkPolicy
from agents.training.config import DistillConfig, TrainConfig
from agents.training.distill import (
    FitOptions,
    Labelled,
    LabelRounds,
    collect_positions,
    distill_epochs,
    file_digest,
    label_positions,
    load_labels,
    make_teacher,
    save_labels,
)
from agents.training.distributed import Fleet
from agents.training.evaluation import evaluate
from agents.training.network import ActorCritic
from agents.training.state import RunState
from domino_env.engine.observation import observation_size
from domino_env.engine.rules import Rules


def distill(
    state: RunState,
    config: TrainConfig,
    rules: Rules,
    device: torch.device,
    writer: SummaryWriter,
    bar: Progress,
    fleet: Fleet | None,
) -> None:
    """``distill.rounds`` rounds of labelling and fitting (module docstring) on ``state.model``, their
    minibatches drawn from ``state.rng``; with ``distill.evaluate`` each round is evaluated."""
    settings = config.distill
    optimizer = torch.optim.Adam(state.model.parameters(), lr=settings.lr, eps=1e-5)
    rounds: list[Labelled] = []  # every round's labels, mapped from their files in <run>/teacher/
    first_refine = settings.rounds - settings.refine
    for round_ in range(settings.rounds):
        if round_ == first_refine:  # a new phase: new targets, a fresh optimizer
            optimizer = torch.optim.Adam(state.model.parameters(), lr=settings.refine_lr, eps=1e-5)
        data, labelling = _labels(state.model, config, rules, device, round_, bar, fleet)
        rounds.append(data)
        last = round_ == settings.rounds - 1
        phase = rounds[first_refine:] if _refining(settings, round_) else rounds  # refine: its own labels
        phase_end = last or round_ == first_refine - 1
        labelled = LabelRounds(phase if phase_end or settings.aggregate == "every_round" else rounds[-1:])
        started = time.perf_counter()
        fit = FitOptions.of(config, anneal=settings.anneal and phase_end)
        stats = distill_epochs(state.model, optimizer, labelled, fit, state.rng, device)
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
            RunState(state.model, optimizer, state.rng).save(path, config)
            curve = [("distill_eval", sum(len(part) for part in rounds))]
            evaluate(path, config, state.rng, writer, curve, bar.console)


def _refining(settings: DistillConfig, round_: int) -> bool:
    """Whether round ``round_`` is one of the last ``refine``: the network's own playouts label it."""
    return round_ >= settings.rounds - settings.refine


def _labels(
    model: ActorCritic,
    config: TrainConfig,
    rules: Rules,
    device: torch.device,
    round_: int,
    bar: Progress,
    fleet: Fleet | None,
) -> tuple[Labelled, str]:
    """Round ``round_``'s labels, mapped from the cache (labelled and written there first unless it holds
    them), and how they were found, for the round's line."""
    cache = config.run_dir / "teacher" / f"round_{round_:03d}"
    key = _cache_key(model, config, round_, fleet is not None)
    shape = (observation_size(rules), rules.num_actions)
    data = load_labels(cache, key, *shape)
    if data is not None:
        return data, "labels read from the cache"
    started = time.perf_counter()
    save_labels(cache, key, _label(model, config, rules, device, round_, bar, fleet))
    # Trained on from the file, a chunk at a time: memory does not grow with the rounds.
    data = load_labels(cache, key, *shape)
    if data is None:
        raise OSError(f"{cache}: the labels just written cannot be read back")
    return data, f"labelled in {_duration(time.perf_counter() - started)}"


def _cache_key(model: ActorCritic, config: TrainConfig, round_: int, ray: bool) -> str:
    """Everything round ``round_``'s labels depend on (the weights too, where the network plays)."""
    settings = config.distill
    source = [config.preset, config.players, config.rules, config.seed, round_, settings.positions]
    source += [settings.games, settings.teacher, settings.privileged, _file_digests(settings.teacher)]
    if settings.pile_samples > 1:  # appended only when set: the caches of earlier runs stay valid
        source.append(settings.pile_samples)
    if ray:  # a seed per batch, not one stream: the labels may differ from a local run's
        source.append("ray")
    if _refining(settings, round_):  # the playouts are the network's, whose weights the digest names
        source.append("refine")
    return json.dumps(source) + (_digest(model) if _own_play(config, round_) else "")


def _own_play(config: TrainConfig, round_: int) -> bool:
    """Whether round ``round_``'s positions are the ones the network itself reaches."""
    return round_ > 0 or bool(config.model.init)


def _label(
    model: ActorCritic,
    config: TrainConfig,
    rules: Rules,
    device: torch.device,
    round_: int,
    bar: Progress,
    fleet: Fleet | None,
) -> Labelled:
    """Round ``round_``'s positions, played by ``strong`` or the network, valued by the teacher."""
    settings = config.distill
    seed = config.seed * 1_000_003 + round_
    if not _own_play(config, round_):
        behaviour = make_bot("strong", rules, seed)
    else:
        generator = torch.Generator(device=device).manual_seed(seed)
        behaviour = NetworkPolicy("learner", model, greedy=False, generator=generator)
    positions = collect_positions(rules, behaviour, settings.positions, settings.games, seed)
    task = bar.add_task(f"teacher round {round_}", total=settings.positions, info="positions labelled")

    def progress(done: int) -> None:
        bar.update(task, completed=done)

    piles = np.random.default_rng([seed, 2])
    playouts = copy.deepcopy(model).cpu() if _refining(settings, round_) else None  # the network as it is now
    if fleet is not None:  # --- Ray (ray.workers): the actors search the batches
        return fleet.label(positions, seed, progress, piles, playouts)
    teacher = make_teacher(rules, seed, settings.teacher, playouts)
    return label_positions(
        teacher,
        positions,
        settings.privileged,
        progress=progress,
        pile_samples=settings.pile_samples,
        rng=piles,
    )


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
        digests[option] = file_digest(path)[:16]
    return digests


def _digest(model: ActorCritic) -> str:
    """A short fingerprint of the weights (the behaviour of rounds after the first)."""
    hasher = hashlib.sha256()
    for tensor in model.state_dict().values():
        hasher.update(tensor.detach().cpu().numpy().tobytes())
    return hasher.hexdigest()[:16]


def _duration(seconds: float) -> str:
    """Wall time as people read it in a log: "48 s", "3 min 05 s", "1 h 02 min"."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"
