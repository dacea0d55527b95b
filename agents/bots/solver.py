"""Exact play of a determinised 2-player block round (or a draw round once its pile is empty).

``pimc``'s move values are only as good as the play it assumes after the move:
with ``strong`` playing out both sides, more samples stop helping (docs/arena.md).
Once a sample fixes both hands, a 2-player block round is a small game of perfect
information, and ``solve`` plays it perfectly instead (``pimc`` with ``exact``). A 2-player
draw round is the same game once nothing is left to draw (a seat that cannot play passes).

The model is the smallest that decides the round's value, and it only holds for
``solvable`` rules (2 players, no spinner, fives or closed game, an empty pile; blocked
rounds won by the lightest hand, ties scoring nothing; the winner scoring the
loser's pips minus their own): a position is (mover's hand, other hand, the two
end numbers), and the round's points, relative to the mean over the two sides,
are (other's pips - mover's pips) / 2 when it ends, whether by domino or blocked.
Passes are forced and free. ``tests/test_solver.py`` holds the model to the
kernels: the same legal moves and the same final points on random games.

Negamax with alpha-beta, heaviest tiles first, and a transposition table keyed by
the position (both 28-bit hands and the ends fit one 64-bit key) that is shared by
every game of a call: equal keys are equal positions, whatever the deal.
"""

from __future__ import annotations

import numpy as np
from numba import int8, int16, int64, njit, uint64

from domino_env.engine.core import DominoCore
from domino_env.engine.kernels import FIT, OTHER, PIPS_OF, board_pips
from domino_env.engine.rules import Rules
from domino_env.engine.tiles import NUM_TILES

TABLE_BITS = 22
"""Transposition table entries: 2**22 (48 MiB), shared by the games of one ``solve`` call."""
EXACT, LOWER, UPPER = 0, 1, 2
HEAVIEST_FIRST = np.argsort(-PIPS_OF, kind="stable").astype(np.int64)


def solvable(rules: Rules) -> bool:
    """Whether ``solve``'s model is exact for ``rules`` once the draw pile, if any, is empty."""
    return (
        rules.players == 2
        and not rules.spinner
        and not rules.fives
        and not rules.closed_game
        and rules.blocked_winner == "lightest_hand"
        and rules.blocked_tie == "nobody"
        and rules.round_points == "opponents_minus_own"
    )


SOLVE_TILES = 14
"""The most tiles both hands may hold for ``solvable_now``: a 2p block round's start, which
``solve`` takes in about 0.1 ms; a draw round can leave 20 once its pile is empty, which
can take seconds."""


def solvable_now(core: DominoCore) -> np.ndarray:
    """(N,) bool: the games of a ``solvable`` core that ``solve`` takes quickly: nothing is left to
    draw and both hands hold at most ``SOLVE_TILES`` tiles."""
    tiles = np.bitwise_count(core.hands).sum(axis=1)
    return (core.bone_pos >= NUM_TILES) & (tiles <= SOLVE_TILES)


def check_solvable(rules: Rules) -> None:
    if not solvable(rules):
        raise ValueError(
            f"exact play needs 2-player block or draw rules (no spinner, fives or closed game, "
            f"lightest hand wins a blocked round, ties score nothing, the winner scores the other "
            f"hand minus their own), got preset {rules.name!r} with {rules.players} players"
        )


def solve(mover: np.ndarray, other: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """(N,) float64: the round's points for the side to move, relative to the mean, under perfect play.

    ``mover``, ``other``: (N,) hands (28-bit boards) of the seat to move and the
    other seat; ``ends``: (N, 2) the two end numbers (the line is never empty).
    """
    keys = np.zeros(1 << TABLE_BITS, dtype=np.uint64)
    values = np.zeros(1 << TABLE_BITS, dtype=np.int16)
    flags = np.zeros(1 << TABLE_BITS, dtype=np.int8)
    out = np.empty(len(mover), dtype=np.int64)
    _solve_all(
        mover.astype(np.int64), other.astype(np.int64), ends.astype(np.int64), keys, values, flags, out
    )
    return out / 2.0


@njit(cache=True)
def _solve_all(mover, other, ends, keys, values, flags, out) -> None:
    for i in range(len(mover)):
        out[i] = _negamax(mover[i], other[i], ends[i, 0], ends[i, 1], -200, 200, keys, values, flags)


# An explicit signature: numba's cache of a lazily typed recursive function can crash on reload.
@njit(int64(int64, int64, int64, int64, int64, int64, uint64[:], int16[:], int8[:]), cache=True)
def _negamax(me: int, you: int, a: int, b: int, alpha: int, beta: int, keys, values, flags) -> int:
    """Other's pips minus mover's at the round's end, both playing perfectly (fail-soft alpha-beta)."""
    fit = FIT[a] | FIT[b]
    playable = me & fit
    if playable == 0:
        if you & fit == 0:
            return board_pips(you) - board_pips(me)
        return -_negamax(you, me, a, b, -beta, -alpha, keys, values, flags)
    low, high = min(a, b), max(a, b)
    key = np.uint64(me | (you << 28) | ((low * 7 + high + 1) << 56))
    slot = np.int64(key % np.uint64(len(keys)))
    if keys[slot] == key:
        stored, flag = np.int64(values[slot]), flags[slot]
        if flag == EXACT:
            return stored
        if flag == LOWER and stored >= beta:
            return stored
        if flag == UPPER and stored <= alpha:
            return stored
    start = alpha
    best = -1000
    for k in range(28):
        tile = HEAVIEST_FIRST[k]
        if not (playable >> tile) & 1:
            continue
        rest = me ^ (1 << tile)
        for side in range(2):
            number = a if side == 0 else b
            if not (FIT[number] >> tile) & 1 or (side == 1 and a == b):
                continue
            new_a, new_b = (OTHER[tile, a], b) if side == 0 else (a, OTHER[tile, b])
            if rest == 0:
                value = board_pips(you)
            else:
                value = -_negamax(you, rest, new_a, new_b, -beta, -alpha, keys, values, flags)
            if value > best:
                best = value
            if best > alpha:
                alpha = best
            if alpha >= beta:
                break
        if alpha >= beta:
            break
    keys[slot] = key
    values[slot] = best
    flags[slot] = UPPER if best <= start else (LOWER if best >= beta else EXACT)
    return best
