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

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from agents.bots.features import Board
from agents.bots.sampler import pile_order, pile_tiles
from agents.bots.search import PimcBot
from agents.training.move_features import MoveInputs, feature_count
from agents.training.network import ActorCritic
from domino_env.engine.rules import Rules
from domino_env.envs.policies import Policy
from domino_env.envs.selfplay import SelfPlay

MOVE_CHUNK = 65536
"""Positions whose move features are computed at once when a data set is prepared."""
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

    def __len__(self) -> int:
        return len(self.obs)

    @staticmethod
    def empty(size: int, like: Labelled) -> Labelled:
        """Room for ``size`` positions shaped like ``like``'s: the rounds are written into one set as they
        come, instead of concatenated (a copy of everything) for each round's training."""
        return Labelled(
            *(np.empty((size, *a.shape[1:]), a.dtype) for a in (like.obs, like.mask, like.values))
        )

    def put(self, start: int, part: Labelled) -> Labelled:
        """Write ``part`` at row ``start``; returns the rows up to its end (views, no copy)."""
        end = start + len(part)
        for store, rows in ((self.obs, part.obs), (self.mask, part.mask), (self.values, part.values)):
            store[start:end] = rows
        return Labelled(self.obs[:end], self.mask[:end], self.values[:end])


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


def save_labels(path: Path, key: str, data: Labelled) -> None:
    """Write ``data`` under ``key`` (what the labels depend on) to ``path`` atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    with temporary.open("wb") as file:
        np.savez(file, key=np.array(key), obs=data.obs, mask=data.mask, values=data.values)
    os.replace(temporary, path)


def load_labels(path: Path, key: str) -> Labelled | None:
    """The labels saved at ``path`` if they were made under ``key``; None if absent, other or unreadable."""
    try:
        with np.load(path, allow_pickle=False) as saved:
            if str(saved["key"]) != key:
                return None
            return Labelled(saved["obs"], saved["mask"], saved["values"])
    except (OSError, KeyError, ValueError):
        return None


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


def distill_epochs(
    model: ActorCritic,
    optimizer: torch.optim.Optimizer,
    data: Labelled,
    epochs: int,
    batch: int,
    temperature: float,
    value_scale: float,
    vf_coef: float,
    max_grad_norm: float,
    rng: np.random.Generator,
    device: torch.device,
    target: str = "soft",
    anneal: bool = False,
) -> dict[str, float]:
    """``epochs`` passes of minibatch descent on ``data``; the last epoch's mean statistics.

    Minibatches are drawn with ``rng`` (numpy), so a seeded run repeats itself. ``anneal``: the
    learning rate falls linearly to 0 over these epochs (then is restored), so the weights settle
    on the mean of noisy labels instead of wandering with the last minibatches.
    """
    obs = torch.from_numpy(data.obs).to(device)
    mask = torch.from_numpy(data.mask).to(device)
    values = torch.from_numpy(np.nan_to_num(data.values, nan=0.0)).to(device)
    # Move features once for the whole set; the observations are encoded per minibatch (1.5 KB a
    # position encoded, against 0.2 KB raw).
    moves = data_set_moves(model, obs, mask) if model.uses_move_features else None
    stats: dict[str, list[float]] = {}
    rates = [group["lr"] for group in optimizer.param_groups]
    steps = epochs * -(-len(data) // batch)
    done = 0
    for _ in range(epochs):
        stats = {}
        order = torch.from_numpy(rng.permutation(len(data))).to(device)
        for start in range(0, len(data), batch):
            if anneal:
                for group, rate in zip(optimizer.param_groups, rates, strict=True):
                    group["lr"] = rate * (1 - done / steps)
                done += 1
            idx = order[start : start + batch]
            batch_moves = None if moves is None else moves.select(idx)
            policy_loss, value_loss, step = distill_loss(
                model,
                model.encoder(obs[idx]),
                mask[idx],
                batch_moves,
                values[idx],
                temperature,
                value_scale,
                target,
            )
            optimizer.zero_grad()
            (policy_loss + vf_coef * value_loss).backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            optimizer.step()
            for key, value in step.items():
                stats.setdefault(key, []).append(value)
    for group, rate in zip(optimizer.param_groups, rates, strict=True):
        group["lr"] = rate
    return {key: float(np.mean(value)) for key, value in stats.items()}
