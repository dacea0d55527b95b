"""Distillation from a search teacher: positions labelled with ``pimc``'s value of every legal move.

Expert iteration in its plainest form. Self-play from a behaviour policy gives
positions (decisions with a choice); the teacher (``agents.bots.search.PimcBot``, a
search that beats every bot the network learns against) values every legal move
of each; the network is trained to put ``softmax(values / temperature)`` on them
(cross-entropy: the whole ranking, richer than the teacher's argmax) and its
value head to predict the best move's value. DAgger-style rounds then let the
network itself pick the positions, so the labels cover the states its own play
reaches, and the labelled sets of all rounds are trained on together.

Everything a label needs comes from the observation and the mask: the teacher
determinises the hidden tiles from the public information, as it does at play
time, so the targets carry no hidden information either.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from agents.bots.features import Board
from agents.bots.registry import make_bot
from agents.bots.sampler import pile_order, pile_tiles
from agents.bots.search import PimcBot
from agents.training.checkpoint import NetworkPolicy
from agents.training.config import TrainConfig
from agents.training.move_features import MoveInputs, feature_count
from agents.training.network import ActorCritic
from domino_env.engine.rules import Rules
from domino_env.envs.policies import Policy
from domino_env.envs.selfplay import SelfPlay

MOVE_CHUNK = 65536
"""Positions whose move features are computed at once when a data set is prepared."""
TRAIN_CHUNK = 262144
"""Positions gathered into memory at once by ``distill_epochs`` (a few hundred MB with their move inputs)."""
READ_PIECE = 16384
"""Positions read from mapped label files between two releases of their pages."""
SEARCH_BATCH = 2048
"""Positions the teacher searches in one call (its playouts of them run side by side)."""


@dataclass
class Labelled:
    """Positions with the teacher's value (points) of each legal move; NaN where a move is illegal."""

    obs: np.ndarray
    """(B, obs_size) int16."""
    mask: np.ndarray
    """(B, A) bool."""
    values: np.ndarray
    """(B, A) float32."""
    maps: tuple[mmap.mmap, ...] = ()
    """The file mappings behind the arrays, when they were loaded from disk (``load_labels``)."""

    def __len__(self) -> int:
        return len(self.obs)

    def take(self, rows: np.ndarray) -> Labelled:
        """Rows ``rows`` (sorted), copied into memory."""
        return Labelled(self.obs[rows], self.mask[rows], self.values[rows])

    def release(self) -> None:
        """Drop the mapped pages read so far from this process's memory (the files stay cached by the
        OS): a data set of millions of positions is read chunk by chunk without ever being resident."""
        for mapping in self.maps:
            mapping.madvise(mmap.MADV_DONTNEED)


@dataclass
class LabelRounds:
    """Several rounds' labels read as one data set, each left where it is (on disk, mapped)."""

    rounds: list[Labelled]

    def __len__(self) -> int:
        return sum(len(part) for part in self.rounds)

    def take(self, rows: np.ndarray) -> Labelled:
        """Rows ``rows`` (sorted, numbered across the rounds in order), copied into memory."""
        ends = np.cumsum([len(part) for part in self.rounds])
        cuts = np.searchsorted(rows, ends)
        parts = [
            part.take(rows[start:stop] - (end - len(part)))
            for part, start, stop, end in zip(self.rounds, [0, *cuts[:-1]], cuts, ends, strict=True)
        ]
        return concat(parts)

    def release(self) -> None:
        for part in self.rounds:
            part.release()


@dataclass
class Positions:
    """Decisions from self-play, with the deal behind each (for a privileged teacher only)."""

    obs: np.ndarray
    """(B, obs_size) int16: the mover's observation."""
    mask: np.ndarray
    """(B, A) bool."""
    hands: np.ndarray
    """(B, P) uint64: every seat's true hand, by seat relative to the mover."""
    orders: np.ndarray
    """(B, 28) int8: the deal's tile order (its last tiles are the draw pile, in draw order)."""


Deal = tuple[np.ndarray, np.ndarray] | tuple[None, None]
"""(R, S, P) hands and (R, S, 28) tile orders a privileged teacher searches; (None, None): the
teacher determinises the observations itself."""


def collect_positions(rules: Rules, behaviour: Policy, count: int, num_games: int, seed: int) -> Positions:
    """``count`` decisions with more than one legal move, from ``num_games`` games of ``behaviour`` self-play.

    Positions are kept with probability 1/2, so consecutive decisions of one game
    (strongly correlated) are thinned out; the games run until enough are found.
    """
    rng = np.random.default_rng([seed, 1])
    play = SelfPlay(rules, num_games, "round", seed=np.random.default_rng([seed, 0]))
    core, seats = play.core, np.arange(rules.players)
    parts: list[tuple[np.ndarray, ...]] = []
    found = 0
    while found < count:
        state = play.state()
        keep = np.flatnonzero((state.mask.sum(axis=1) > 1) & (rng.random(num_games) < 0.5))
        relative = (state.seat[keep, None] + seats) % rules.players
        hands = np.take_along_axis(core.hands[keep], relative, axis=1)
        parts.append((state.obs[keep], state.mask[keep], hands, core.deal[keep].copy()))
        found += len(keep)
        play.step(behaviour(state.obs, state.mask))
    return Positions(*(np.concatenate(column)[:count] for column in zip(*parts, strict=True)))


def make_teacher(
    rules: Rules, seed: int, options: dict[str, object], playouts: ActorCritic | None = None
) -> PimcBot:
    """The teacher: ``pimc`` with ``distill.teacher``'s ``options``. With ``playouts``
    (``distill.refine``), that network plays every move out, greedy, instead of the options'
    ``rollout_bot`` or ``exact`` solve: the labels then value each move under the network's own play."""
    options = dict(options)
    if playouts is not None:
        options.pop("exact", None)
        options["rollout_bot"] = NetworkPolicy("playouts", playouts, greedy=True)
    return make_bot("pimc", rules, seed, **options)


def label_positions(
    teacher: PimcBot,
    positions: Positions,
    privileged: bool = False,
    batch: int = SEARCH_BATCH,
    progress: Callable[[int], object] | None = None,
    pile_samples: int = 1,
    rng: np.random.Generator | None = None,
) -> Labelled:
    """The teacher's ``move_values`` for every position, ``batch`` positions per search call.

    ``privileged``: search the true deal instead of determinisations of the observation
    (one sample per position, the targets then average over the real hidden hands).
    ``pile_samples`` > 1 (privileged only): search the true hands that many times, each with
    the draw pile in a fresh uniform order drawn from ``rng``, and average.
    ``progress``: called with the number of positions labelled so far (a progress bar).
    Ray actors share the same batches out (``training/distributed.py``, ``Fleet.label``).
    """
    values = np.empty(positions.mask.shape, dtype=np.float32)
    for rows, deal in search_batches(teacher.rules, positions, privileged, pile_samples, rng, batch):
        values[rows] = teacher.move_values(positions.obs[rows], positions.mask[rows], *deal)
        if progress is not None:
            progress(rows.stop)
    return Labelled(positions.obs, positions.mask, values)


def search_batches(
    rules: Rules,
    positions: Positions,
    privileged: bool,
    pile_samples: int = 1,
    rng: np.random.Generator | None = None,
    batch: int = SEARCH_BATCH,
) -> Iterator[tuple[slice, Deal]]:
    """The positions' rows ``batch`` at a time, each with the deals to search on them (``label_positions``).

    The deals come in row order from ``rng`` (shuffled piles), whoever searches them: labels that need
    no other randomness are the same searched here or on Ray actors.
    """
    if privileged and pile_samples > 1 and rng is None:
        raise ValueError("pile_samples > 1 needs an rng to shuffle the draw piles")
    for start in range(0, len(positions.obs), batch):
        rows = slice(start, min(start + batch, len(positions.obs)))
        if not privileged:
            yield rows, (None, None)
        elif pile_samples > 1:
            yield rows, shuffled_piles(rules, positions.obs[rows], positions.hands[rows], pile_samples, rng)
        else:
            yield rows, (positions.hands[rows, None], positions.orders[rows, None])


def shuffled_piles(
    rules: Rules, obs: np.ndarray, hands: np.ndarray, samples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(B, S, P) the true ``hands`` repeated and (B, S, 28) tile orders: S uniform draw orders of
    each position's pile (the tiles neither on the table nor in a hand)."""
    pile = pile_tiles(Board(rules, obs).unseen, hands)
    orders = pile_order(np.repeat(pile, samples), rng).reshape(len(obs), samples, -1)
    return np.repeat(hands[:, None], samples, axis=1), orders


LABEL_ARRAYS = ("obs", "mask", "values")


def save_labels(folder: Path, key: str, data: Labelled) -> None:
    """Write ``data`` under ``key`` (what the labels depend on) to ``folder`` atomically: one ``.npy``
    file per array (``load_labels`` maps them), then ``key.txt``, the key and each array's SHA-256
    (written last: a kill before it leaves no key), the folder renamed into place."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    temporary = folder.with_name(f".{folder.name}.tmp")
    shutil.rmtree(temporary, ignore_errors=True)
    temporary.mkdir()
    for name in LABEL_ARRAYS:
        np.save(temporary / f"{name}.npy", getattr(data, name))
    sums = [f"{name} {file_digest(temporary / f'{name}.npy')}" for name in LABEL_ARRAYS]
    (temporary / "key.txt").write_text("\n".join([key, *sums]) + "\n")
    shutil.rmtree(folder, ignore_errors=True)
    os.replace(temporary, folder)


def load_labels(folder: Path, key: str, obs_size: int, actions: int) -> Labelled | None:
    """The labels saved in ``folder`` if they were made under ``key`` and are whole; None if absent,
    made under another key, or damaged in any way (then they are labelled again).

    The arrays are memory-mapped, not read: training takes its rows a chunk at a time. Whole means
    each file's SHA-256 is the one written with the key (one flipped value, or another round's
    arrays under this key, is caught), the shapes and dtypes a position set of this game has
    (``obs_size`` inputs, ``actions`` moves), every legal move with a finite value and every
    position with a legal move.
    """
    try:
        stored, *sums = (folder / "key.txt").read_text().splitlines()
        if stored != key or sums != [f"{n} {file_digest(folder / f'{n}.npy')}" for n in LABEL_ARRAYS]:
            return None
        arrays, maps = {}, []
        for name in LABEL_ARRAYS:
            array, mapping = _map_array(folder / f"{name}.npy")
            arrays[name] = array
            maps.append(mapping)
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    data = Labelled(**arrays, maps=tuple(maps))
    shapes = {"obs": (obs_size, np.int16), "mask": (actions, np.bool_), "values": (actions, np.float32)}
    for name, (width, dtype) in shapes.items():
        array = arrays[name]
        if array.ndim != 2 or array.shape != (len(data.obs), width) or array.dtype != dtype:
            return None
    for start in range(0, len(data), MOVE_CHUNK):  # every legal move valued: no NaN, no infinity
        part = data.take(np.arange(start, min(start + MOVE_CHUNK, len(data))))
        data.release()
        if not part.mask.any(axis=1).all() or not np.isfinite(part.values[part.mask]).all():
            return None
    return data


def file_digest(path: Path) -> str:
    """SHA-256 of a file, read a megabyte at a time."""
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _map_array(path: Path) -> tuple[np.ndarray, mmap.mmap]:
    """The array of a ``.npy`` file as a read-only view of the file mapped into memory, and the mapping."""
    with path.open("rb") as file:
        version = np.lib.format.read_magic(file)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(file)
        else:
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(file)
        if fortran or dtype.hasobject:
            raise ValueError(f"{path}: not a C-ordered array of numbers")
        offset, count = file.tell(), int(np.prod(shape))
        if offset + count * dtype.itemsize != os.fstat(file.fileno()).st_size:
            raise ValueError(f"{path}: its size does not match its header")
        mapping = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    return np.frombuffer(mapping, dtype, count, offset).reshape(shape), mapping


def distill_loss(
    model: ActorCritic,
    features: torch.Tensor,
    mask: torch.Tensor,
    moves: MoveInputs | None,
    values: torch.Tensor,
    temperature: float,
    value_scale: float,
    target: str = "soft",
) -> tuple[torch.Tensor, torch.Tensor, dict[str, float]]:
    """(policy loss, value loss, statistics): the policy's loss against the teacher's move values, and
    the value head's squared error (halved).

    ``target`` "soft": cross-entropy to softmax(values / ``temperature``), the teacher's ranking.
    "values": the logits times ``temperature`` are the network's move values, regressed on the
    teacher's up to a constant per position (squared error of the errors centred over the legal
    moves, in reward units, halved, averaged over legal moves). A noisy value (one privileged search
    per position) then averages out over positions that look alike, where the softmax of each noisy
    value would not: the network learns each move's expected advantage given what it sees, and its
    policy is softmax(those values / ``temperature``). Centring drops the part of the noise that the
    deal gives every move alike (how good the hidden hands are for us), which only the value head
    needs to learn.

    ``features``: ``model.encoder(obs)`` (encoded per minibatch); ``moves``:
    ``model.move_inputs(obs, mask)`` (computed once for a whole data set). ``values``: (B, A)
    the teacher's move values in points (any number on illegal moves); the value target is the
    best move's value times ``value_scale`` (the training's reward scale).
    """
    logits, predicted = model.heads(features, mask, moves)
    legal_values = torch.where(mask, values, torch.full_like(values, -torch.inf))
    if target == "soft":
        soft = (legal_values / temperature).softmax(dim=1)
        policy_loss = -(soft * logits.log_softmax(dim=1)).sum(dim=1).mean()
    else:  # centred over the legal moves: what the deal gives every move alike is noise to the policy
        error = torch.where(mask, value_scale * (logits * temperature - values), 0.0)
        error = error - error.sum(dim=1, keepdim=True) / mask.sum(dim=1, keepdim=True)
        policy_loss = 0.5 * (error**2 * mask).sum() / mask.sum()
    best = legal_values.max(dim=1).values
    value_loss = 0.5 * ((predicted - value_scale * best) ** 2).mean()
    with torch.no_grad():
        agree = (logits.argmax(dim=1) == legal_values.argmax(dim=1)).float().mean().item()
        # Points the network's greedy move loses against the teacher's best, by the teacher's values.
        regret = (best - values.gather(1, logits.argmax(dim=1, keepdim=True)).squeeze(1)).mean().item()
    stats = {"policy": policy_loss.item(), "value": value_loss.item(), "agreement": agree, "regret": regret}
    return policy_loss, value_loss, stats


def data_set_moves(model: ActorCritic, obs: torch.Tensor, mask: torch.Tensor) -> MoveInputs:
    """The move inputs of every position, computed a chunk at a time (their NumPy intermediates are
    large) into arrays allocated once, so that the set never exists twice.

    With the after-state bits (``model.after_state``: 105 numbers a move, the largest array of a run of
    millions of positions) the features are kept as float16, exact for the bits and within 0.05% for
    the scaled counts; ``MoveInputs.select`` hands minibatches back as float32.
    """
    total, stored = int(mask.sum()), torch.float16 if model.after_state else torch.float32
    features = torch.empty((total, feature_count(model.after_state)), dtype=stored, device=obs.device)
    rows = torch.empty(total, dtype=torch.int64, device=obs.device)
    actions = torch.empty_like(rows)
    counts = torch.empty(len(obs), dtype=torch.int64, device=obs.device)
    done = 0
    for start in range(0, len(obs), MOVE_CHUNK):
        part = model.move_inputs(obs[start : start + MOVE_CHUNK], mask[start : start + MOVE_CHUNK])
        entries = slice(done, done + len(part.rows))
        features[entries], rows[entries], actions[entries] = part.features, part.rows + start, part.actions
        counts[start : start + len(part.counts)] = part.counts
        done = entries.stop
    return MoveInputs(features, rows, actions, counts)


def gather(data: Labelled | LabelRounds, rows: np.ndarray) -> Labelled:
    """Rows ``rows`` (sorted) of ``data`` copied into memory, ``READ_PIECE`` at a time, the mapped pages
    released after each piece: what stays resident is the copy, not the files."""
    pieces = []
    for start in range(0, len(rows), READ_PIECE):
        pieces.append(data.take(rows[start : start + READ_PIECE]))
        data.release()
    return concat(pieces)


def concat(parts: list[Labelled]) -> Labelled:
    """Labelled sets one after the other, in memory."""
    return Labelled(*(np.concatenate([getattr(part, name) for part in parts]) for name in LABEL_ARRAYS))


@dataclass(frozen=True)
class FitOptions:
    """How ``distill_epochs`` fits a data set: ``distill.*``, and what it shares with PPO (``of``)."""

    epochs: int
    batch: int
    """Positions per minibatch."""
    temperature: float
    """Points: the softmax temperature of the targets (``distill_loss``)."""
    value_scale: float
    """The value target's scale: the training's ``ppo.reward_scale``."""
    vf_coef: float
    max_grad_norm: float
    target: str = "soft"
    anneal: bool = False
    """The learning rate falls linearly to 0 over these epochs (then is restored)."""

    @classmethod
    def of(cls, config: TrainConfig, anneal: bool = False) -> FitOptions:
        """A training config's distillation fit (``anneal``: whether this round anneals)."""
        settings, ppo = config.distill, config.ppo
        return cls(
            settings.epochs, settings.batch, settings.temperature, ppo.reward_scale, ppo.vf_coef,
            ppo.max_grad_norm, settings.target, anneal,
        )  # fmt: skip


def distill_epochs(
    model: ActorCritic,
    optimizer: torch.optim.Optimizer,
    data: Labelled | LabelRounds,
    fit: FitOptions,
    rng: np.random.Generator,
    device: torch.device,
) -> dict[str, float]:
    """``fit.epochs`` passes of minibatch descent on ``data``; the last epoch's mean statistics.

    Minibatches are drawn with ``rng`` (numpy), so a seeded run repeats itself. ``fit.anneal``: the
    learning rate falls linearly to 0 over these epochs (then is restored), so the weights settle
    on the mean of noisy labels instead of wandering with the last minibatches.

    Memory is bounded by ``TRAIN_CHUNK``, not by the data set: each epoch's shuffled order is cut
    into chunks of whole minibatches, and only one chunk's rows (and their move inputs, the largest
    arrays) are gathered at a time. ``data`` may be memory-mapped files (``load_labels``):
    a chunk reads its rows from them and releases them afterwards. The minibatches are those of one
    shuffle of the whole set, so the result does not depend on the chunk size.
    """
    stats: dict[str, list[float]] = {}
    rates = [group["lr"] for group in optimizer.param_groups]
    steps = fit.epochs * -(-len(data) // fit.batch)
    schedule = _annealing(optimizer, steps) if fit.anneal else None
    chunk = max(fit.batch, TRAIN_CHUNK // fit.batch * fit.batch)
    for _ in range(fit.epochs):
        stats = {}
        order = rng.permutation(len(data))
        for first in range(0, len(data), chunk):
            gathered = _Chunk.gather(data, order[first : first + chunk], model, device)
            for key, values in _fit_chunk(model, optimizer, gathered, fit, schedule).items():
                stats.setdefault(key, []).extend(values)
            del gathered  # before the next chunk is gathered: one chunk in memory at a time
    for group, rate in zip(optimizer.param_groups, rates, strict=True):
        group["lr"] = rate
    return {key: float(np.mean(value)) for key, value in stats.items()}


@dataclass
class _Chunk:
    """A chunk of an epoch's shuffled positions, gathered on the device (``distill_epochs``)."""

    obs: torch.Tensor
    mask: torch.Tensor
    values: torch.Tensor
    """The teacher's values, 0 on illegal moves."""
    moves: MoveInputs | None
    order: torch.Tensor
    """The chunk's part of the shuffle, as indices into these rows."""

    @classmethod
    def gather(
        cls, data: Labelled | LabelRounds, picked: np.ndarray, model: ActorCritic, device: torch.device
    ) -> _Chunk:
        """Rows ``picked`` of ``data``, read in sorted order (sequential reads from a mapped file)."""
        rows = np.sort(picked)
        place = np.argsort(np.argsort(picked))  # shuffled index -> sorted row
        part = gather(data, rows)
        obs = torch.from_numpy(part.obs).to(device)
        mask = torch.from_numpy(part.mask).to(device)
        values = torch.from_numpy(np.nan_to_num(part.values, nan=0.0)).to(device)
        del part
        # Move features once per chunk; the observations are encoded per minibatch (1.5 KB a
        # position encoded, against 0.2 KB raw).
        moves = data_set_moves(model, obs, mask) if model.uses_move_features else None
        return cls(obs, mask, values, moves, torch.from_numpy(place).to(device))


def _fit_chunk(
    model: ActorCritic,
    optimizer: torch.optim.Optimizer,
    chunk: _Chunk,
    fit: FitOptions,
    schedule: Callable[[], None] | None,
) -> dict[str, list[float]]:
    """A step of descent per minibatch of ``chunk``, in its shuffled order; each step's statistics."""
    stats: dict[str, list[float]] = {}
    for start in range(0, len(chunk.order), fit.batch):
        if schedule is not None:
            schedule()
        idx = chunk.order[start : start + fit.batch]
        moves = None if chunk.moves is None else chunk.moves.select(idx)
        policy_loss, value_loss, step = distill_loss(
            model, model.encoder(chunk.obs[idx]), chunk.mask[idx], moves, chunk.values[idx],
            fit.temperature, fit.value_scale, fit.target,
        )  # fmt: skip
        optimizer.zero_grad()
        (policy_loss + fit.vf_coef * value_loss).backward()
        nn.utils.clip_grad_norm_(model.parameters(), fit.max_grad_norm)
        optimizer.step()
        for key, value in step.items():
            stats.setdefault(key, []).append(value)
    return stats


def _annealing(optimizer: torch.optim.Optimizer, steps: int) -> Callable[[], None]:
    """Called before each of ``steps`` minibatches: the learning rates fall linearly from where they
    are now to 0."""
    rates = [group["lr"] for group in optimizer.param_groups]
    done = 0

    def step() -> None:
        nonlocal done
        for group, rate in zip(optimizer.param_groups, rates, strict=True):
            group["lr"] = rate * (1 - done / steps)
        done += 1

    return step
