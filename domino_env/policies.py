"""Policies for the seats a learner does not play, and the contract they share.

A policy is any callable ``policy(obs, mask) -> actions``:

* ``obs``: ``(B, obs_size)`` int16, each row the seat-relative observation of the
  seat to move (docs/engine.md; the seat itself is relative seat 0);
* ``mask``: ``(B, num_actions)`` bool, that seat's legal actions (at least one per row);
* returns ``(B,)`` integer actions, one legal action per row.

It is batched because the environments call it once for every game whose seat
it plays; a single game passes ``B = 1``. The environments know nothing about a
policy beyond this contract, so heuristic bots and trained networks plug in the
same way as the two policies here.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .core import NTH_BIT14, POPCOUNT14

Policy = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``policy(obs (B, obs_size) int16, mask (B, num_actions) bool) -> (B,) int actions``."""

CHUNK = 14
"""Action masks are read 14 actions at a time; every action space (28 x ends) is a multiple of 14."""


def sample_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``mask`` (int64), with no loop over rows.

    Each row is cut into 14-action chunks, read as 14-bit numbers; per-chunk bit
    counts pick the chunk holding the chosen legal action and a lookup table
    its position there. This costs a few operations per chunk instead of one per
    action, which matters when every opponent move of thousands of games goes
    through it.
    """
    rows, size = mask.shape
    if rows == 1:  # one game (single-game envs): the same draw, without the per-chunk set-up
        legal = np.flatnonzero(mask[0])
        if not len(legal):
            raise ValueError("row 0 of the mask has no legal action")
        return legal[(rng.random(1) * len(legal)).astype(np.int64)]
    if size % CHUNK:
        raise ValueError(f"mask width {size} is not a multiple of {CHUNK} (28 x number of ends)")
    packed = np.packbits(mask.reshape(rows, size // CHUNK, CHUNK), axis=2, bitorder="little")
    chunks = packed.view("<u2")[:, :, 0].astype(np.intp)
    counts = POPCOUNT14.take(chunks)
    cumulative = counts.cumsum(axis=1)
    total = cumulative[:, -1]
    if not total.all():
        raise ValueError(f"row {int(np.flatnonzero(total == 0)[0])} of the mask has no legal action")
    rank = (rng.random(rows) * total).astype(np.int64)
    chunk = (cumulative <= rank[:, None]).sum(axis=1)
    row = np.arange(rows)
    before = cumulative[row, chunk] - counts[row, chunk]
    return chunk * CHUNK + NTH_BIT14.take(chunks[row, chunk] * CHUNK + rank - before)


def random_policy(seed: int | np.random.Generator | None = None) -> Policy:
    """A policy playing a uniformly random legal action, from its own seeded generator."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)

    def policy(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return sample_legal(mask, rng)

    return policy


def first_legal_policy(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The legal action with the smallest index: a deterministic baseline (and the easiest to test with)."""
    actions = mask.argmax(axis=1)
    if not mask[np.arange(len(mask)), actions].all():
        raise ValueError("a row of the mask has no legal action")
    return actions
