"""Per-move input features for the network: what each legal move would lead to, scaled to about [0, 1].

An MLP over the raw observation has to discover, for each of the 56 or 112
actions, relations such as "this tile leaves ends the next seat cannot play" or
"this move scores fives" from bitboards; learning those from rewards alone
takes tens of millions of decisions. The heuristic bots already compute them
exactly (``agents.features.Moves``, the quantities ``strong`` weighs), so the
network gets them as inputs: one row of ``MOVE_FEATURES`` per legal action,
illegal actions, packed to the legal actions only (a seat rarely has more than
a dozen legal moves out of 56 or 112 actions, and the PPO update runs on every row).
``ActorCritic`` scores each move with state-dependent weights over these rows,
which can express ``strong`` exactly and improve on it.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from domino_env.rules import Rules

from .features import Board, Moves

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


MoveInputs = tuple[torch.Tensor, torch.Tensor]
"""(features (B, K, F) float32, actions (B, K) int64): each row's legal actions and their features,
in increasing action order, padded to K (the most legal actions of any row) with action 0 and zero
features: a slot is padding exactly when its action is not larger than the slot before it."""


def move_features(rules: Rules, obs: np.ndarray, mask: np.ndarray) -> MoveInputs:
    """The packed per-move features of observations ``obs`` with legal masks ``mask``.

    Every row of ``mask`` needs a legal action (a seat is only asked to move when it has one).
    """
    moves = Moves(Board(rules, np.asarray(obs)), np.asarray(mask))
    slot = np.arange(len(moves.row)) - moves.starts[moves.row]
    k = int(slot.max()) + 1 if len(slot) else 1
    features = np.zeros((len(mask), k, NUM_MOVE_FEATURES), dtype=np.float32)
    for column, (name, divisor) in enumerate(MOVE_FEATURES):
        value = moves.options(1) if name == "next_options" else getattr(moves, name)
        features[moves.row, slot, column] = value / divisor
    actions = np.zeros((len(mask), k), dtype=np.int64)
    actions[moves.row, slot] = moves.action
    return torch.from_numpy(features), torch.from_numpy(actions)


def concat_moves(parts: list[MoveInputs]) -> MoveInputs:
    """Stack packed batches row-wise, padding each to the widest K (the PPO update's one batch)."""
    k = max(features.shape[1] for features, _ in parts)
    pad = [(k - features.shape[1]) for features, _ in parts]
    features = torch.cat(
        [nn.functional.pad(f, (0, 0, 0, extra)) for (f, _), extra in zip(parts, pad, strict=True)]
    )
    actions = torch.cat([nn.functional.pad(a, (0, extra)) for (_, a), extra in zip(parts, pad, strict=True)])
    return features, actions
