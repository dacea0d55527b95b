"""Per-move input features for the network: what each legal move would lead to, scaled to about [0, 1].

An MLP over the raw observation has to discover, for each of the 56 or 112
actions, relations such as "this tile leaves ends the next seat cannot play" or
"this move scores fives" from bitboards; learning those from rewards alone
takes tens of millions of decisions. The heuristic bots already compute them
exactly (``agents.features.Moves``, the quantities ``strong`` weighs), so the
network gets them as inputs: one row of ``MOVE_FEATURES`` per action, zeros for
illegal actions (``move_features``), packed to the legal actions only before the
network sees them (``pack_moves``: a seat rarely has more than a dozen legal
moves out of 56 or 112 actions, and the PPO update runs on every row).
``ActorCritic`` scores each move with state-dependent weights over these rows,
which can express ``strong`` exactly and improve on it.
"""

from __future__ import annotations

import numpy as np
import torch

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


def move_features(rules: Rules, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(B, A, NUM_MOVE_FEATURES) float32 for observations ``obs`` and legal masks ``mask`` (0 if illegal).

    Every row of ``mask`` needs a legal action (a seat is only asked to move when it has one).
    """
    moves = Moves(Board(rules, np.asarray(obs)), np.asarray(mask))
    out = np.zeros((*mask.shape, NUM_MOVE_FEATURES), dtype=np.float32)
    for column, (name, divisor) in enumerate(MOVE_FEATURES):
        value = moves.options(1) if name == "next_options" else getattr(moves, name)
        out[moves.row, moves.action, column] = value / divisor
    return out


MoveInputs = tuple[torch.Tensor, torch.Tensor]
"""(features (B, K, F), actions (B, K)): the features of each row's legal actions, padded to K."""


def pack_moves(moves: torch.Tensor, mask: torch.Tensor) -> MoveInputs:
    """Dense (B, A, F) features -> each row's legal actions first, cut to K = the most legal actions of a row.

    A row with fewer legal actions is padded with illegal ones, whose features are
    zero (so they add nothing to a logit that masking then removes anyway).
    """
    k = max(int(mask.sum(dim=1).max()), 1) if len(mask) else 1
    actions = torch.argsort((~mask).to(torch.uint8), dim=1, stable=True)[:, :k]
    features = moves.gather(1, actions.unsqueeze(2).expand(-1, -1, moves.shape[2]))
    return features, actions
