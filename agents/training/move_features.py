"""Per-move input features for the network: what each legal move would lead to, scaled to about [0, 1].

An MLP over the raw observation has to discover, for each of the 56 or 112
actions, relations such as "this tile leaves ends the next seat cannot play" or
"this move scores fives" from bitboards; learning those from rewards alone
takes tens of millions of decisions. The heuristic bots already compute them
exactly (``agents.bots.features.Moves``, the quantities ``strong`` weighs), so the
network gets them as inputs: one row of ``MOVE_FEATURES`` per legal action, as
a flat list of the batch's legal moves (``MoveInputs``; a seat rarely has more
than a few legal moves out of 56 or 112 actions, and the PPO update runs on
every decision). ``ActorCritic`` scores each move with state-dependent weights
over these rows, which can express ``strong`` exactly and improve on it.

With ``after_state`` each row also carries the position the move leads to, as bits
(``AFTER_STATE``): the seat's hand after it, the tile, the numbers showing at the
open ends, and the tiles the next seat may hold that fit them. The scalar features
are counts over those sets; the bits let the per-move scorer weigh *which* tiles
and numbers, what search reads off its sampled hands. In 2p draw a network with them
beat the same network without them by +0.67 +- 0.17 points per round, trained on the
same labels (docs/agents.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import torch

from agents.bots.features import Board, Moves, unpack_tiles
from domino_env.engine.rules import Rules
from domino_env.engine.tiles import NUM_TILES

MOVE_FEATURES: tuple[tuple[str, float], ...] = (
    ("pips", 12.0),
    ("double", 1.0),
    ("variety", 7.0),
    ("held_numbers", 7.0),
    ("follow", 7.0),
    ("next_options", 7.0),
    ("next_blocked", 1.0),
    ("lock", 1.0),
    ("blocked_margin", 20.0),
    ("partner_blocked", 1.0),
    ("fives_now", 20.0),
    ("fives_threat", 20.0),
    ("domino", 1.0),
    ("tiles_left", 7.0),
)
"""(``Moves`` feature, divisor); ``next_options`` is ``Moves.options(1)``: the next seat's replies."""
NUM_MOVE_FEATURES = len(MOVE_FEATURES)
AFTER_STATE: tuple[tuple[str, int], ...] = (
    ("hand_after", NUM_TILES),
    ("tile", NUM_TILES),
    ("numbers_after", 7),
    ("next_fits", NUM_TILES),
)
"""(block, width) of the after-state bits: one bit per tile or number."""
AFTER_STATE_SIZE = sum(width for _, width in AFTER_STATE)


def feature_count(after_state: bool) -> int:
    """Columns of ``MoveInputs.features``: the scalar features, then the after-state bits if asked."""
    return NUM_MOVE_FEATURES + (AFTER_STATE_SIZE if after_state else 0)


@dataclass(frozen=True)
class MoveInputs:
    """The legal moves of a batch of B decisions: L entries, grouped by decision in increasing order."""

    features: torch.Tensor
    """(L, ``feature_count``) float32."""
    rows: torch.Tensor
    """(L,) int64: the decision (row of the batch) of each entry, non-decreasing."""
    actions: torch.Tensor
    """(L,) int64: the action of each entry."""
    counts: torch.Tensor
    """(B,) int64: entries per decision (its number of legal moves)."""

    def to(self, device: torch.device) -> MoveInputs:
        return MoveInputs(*(t.to(device) for t in (self.features, self.rows, self.actions, self.counts)))

    @cached_property
    def starts(self) -> torch.Tensor:
        """(B,) int64: each decision's first entry. Computed once: minibatches of millions of labelled
        positions select from the same set thousands of times."""
        return torch.cumsum(self.counts, 0) - self.counts

    def select(self, index: torch.Tensor) -> MoveInputs:
        """The entries of decisions ``index`` (a minibatch), renumbered 0..len(index)-1 in that order;
        features as float32 whatever the dtype they are stored in."""
        starts = self.starts[index]
        counts = self.counts[index]
        rows = torch.repeat_interleave(torch.arange(len(index), device=index.device), counts)
        offsets = torch.arange(len(rows), device=index.device) - (torch.cumsum(counts, 0) - counts)[rows]
        entries = starts[rows] + offsets
        return MoveInputs(self.features.index_select(0, entries).float(), rows, self.actions[entries], counts)

    @staticmethod
    def concat(parts: list[MoveInputs]) -> MoveInputs:
        """Batches one after the other (the rollout's steps -> the PPO update's one batch)."""
        sizes = torch.tensor([0] + [len(part.counts) for part in parts[:-1]])
        offsets = torch.cumsum(sizes, 0).tolist()
        return MoveInputs(
            torch.cat([part.features for part in parts]),
            torch.cat([part.rows + offset for part, offset in zip(parts, offsets, strict=True)]),
            torch.cat([part.actions for part in parts]),
            torch.cat([part.counts for part in parts]),
        )


def move_features(rules: Rules, obs: np.ndarray, mask: np.ndarray, after_state: bool = False) -> MoveInputs:
    """The legal moves of observations ``obs`` with legal masks ``mask``, with their features (CPU tensors).

    Every row of ``mask`` needs a legal action (a seat is only asked to move when it has one).
    ``after_state``: append the ``AFTER_STATE`` bits of each move.
    """
    moves = Moves(Board(rules, np.asarray(obs)), np.asarray(mask))
    features = np.empty((len(moves.row), feature_count(after_state)), dtype=np.float32)
    for column, (name, divisor) in enumerate(MOVE_FEATURES):
        value = moves.options(1) if name == "next_options" else getattr(moves, name)
        features[:, column] = value / divisor
    if after_state:
        features[:, NUM_MOVE_FEATURES:] = after_state_bits(moves)
    counts = np.bincount(moves.row, minlength=len(mask))
    return MoveInputs(*(torch.from_numpy(a) for a in (features, moves.row, moves.action, counts)))


def after_state_bits(moves: Moves) -> np.ndarray:
    """(L, AFTER_STATE_SIZE) 0/1: each move's ``AFTER_STATE`` blocks side by side."""
    blocks = {
        "hand_after": unpack_tiles(moves.hand_after),
        "tile": np.arange(NUM_TILES) == moves.tile[:, None],
        "numbers_after": (moves.numbers_after[:, None] >> np.arange(7, dtype=np.uint8)) & 1 > 0,
        "next_fits": unpack_tiles(moves.fitting(1)),
    }
    return np.concatenate([blocks[name] for name, _ in AFTER_STATE], axis=1)
