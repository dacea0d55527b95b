"""The exact 2-player block solver (``agents.bots.solver``) and ``pimc`` with ``exact``, in block and draw.

The solver keeps its own small model of a block round (two hands and two end
numbers), so it is held to the kernels: at random positions of real games its
value must equal the best, over the core's legal moves, of what the core makes of
the move (the round's points if it ends the round, else the solver's value of the
position the core reaches). That is one step of minimax with the kernels as the
rules, at every depth of the round. A plain minimax without pruning or table checks
the search itself on small hands.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.bots.search import PimcBot
from agents.bots.solver import SOLVE_TILES, solvable, solvable_now, solve
from domino_env import DominoCore, Rules
from domino_env.engine.rules import all_configurations
from domino_env.engine.tiles import NUMBER_MASK, OTHER_HALF, PIPS

BLOCK = Rules.preset("block", 2)
DRAW = Rules.preset("draw", 2)


def minimax(me: int, you: int, a: int, b: int) -> int:
    """Other's pips minus mover's at the end, both perfect: the plainest reading of the rules."""
    fit = int(NUMBER_MASK[a]) | int(NUMBER_MASK[b])
    pips = {hand: sum(int(PIPS[t]) for t in range(28) if hand >> t & 1) for hand in (me, you)}
    if me & fit == 0:
        return pips[you] - pips[me] if you & fit == 0 else -minimax(you, me, a, b)
    best = -1000
    for tile in range(28):
        for side, number in enumerate((a, b)):
            if me >> tile & 1 and int(NUMBER_MASK[number]) >> tile & 1:
                rest = me ^ (1 << tile)
                ends = (int(OTHER_HALF[tile, a]), b) if side == 0 else (a, int(OTHER_HALF[tile, b]))
                best = max(best, pips[you] if rest == 0 else -minimax(you, rest, *ends))
    return best


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), size=st.integers(1, 4))
def test_solver_equals_plain_minimax(seed: int, size: int) -> None:
    rng = np.random.default_rng(seed)
    tiles = rng.permutation(28)
    me, you = (sum(1 << int(t) for t in part) for part in (tiles[:size], tiles[size : 2 * size]))
    ends = rng.integers(0, 7, 2)
    got = solve(np.array([me], np.uint64), np.array([you], np.uint64), ends[None])
    assert got[0] == minimax(me, you, int(ends[0]), int(ends[1])) / 2


def test_solver_agrees_with_the_kernels_one_move_deep() -> None:
    rng = np.random.default_rng(5)
    core = DominoCore(BLOCK, 400, seed=5)
    for _ in range(int(rng.integers(1, 4))):
        core.step(core.random_actions(rng))
    checked = 0
    for _ in range(12):  # positions at every depth of the round
        mask = core.legal_mask()
        games = np.flatnonzero((mask.sum(axis=1) > 1) & (core.table != 0))
        seats = (core.to_play[games, None] + np.arange(2)) % 2
        hands = np.take_along_axis(core.hands[games], seats, axis=1)
        bot = PimcBot(BLOCK, seed=0, samples=1, prior=0, exact=True)
        values = bot.move_values(core.observe()[games], mask[games], hands[:, None], core.deal[games, None])
        root = solve(hands[:, 0], hands[:, 1], core.ends[games, :2])
        np.testing.assert_array_equal(np.nanmax(values, axis=1), root)
        checked += len(games)
        core.step(core.random_actions(rng))
    assert checked > 1000


def test_exact_is_refused_where_the_model_does_not_hold() -> None:
    solvable_presets = [(n, p) for n, p in all_configurations() if solvable(Rules.preset(n, p))]
    assert solvable_presets == [("draw", 2), ("block", 2)]
    with pytest.raises(ValueError, match="exact play needs 2-player block or draw rules"):
        PimcBot(Rules.preset("all_fives", 2), exact=True)
    with pytest.raises(ValueError, match="exact play in block has no playouts"):
        PimcBot(BLOCK, exact=True, rollouts=2)


def test_draw_positions_are_solved_once_the_pile_is_empty_and_the_hands_small() -> None:
    """At positions ``solvable_now`` picks, the exact search's best move value is the solver's; elsewhere
    it plays the rollout bot first, so it only needs finite values (the pile cannot be solved)."""
    rng = np.random.default_rng(11)
    core = DominoCore(DRAW, 600, seed=11)
    bot = PimcBot(DRAW, seed=0, samples=1, prior=0, exact=True)
    solved = with_pile = 0
    for _ in range(30):
        mask = core.legal_mask()
        games = np.flatnonzero((mask.sum(axis=1) > 1) & (core.table != 0))
        seats = (core.to_play[games, None] + np.arange(2)) % 2
        hands = np.take_along_axis(core.hands[games], seats, axis=1)
        now = solvable_now(core)[games]
        tiles = np.bitwise_count(hands).sum(axis=1)
        np.testing.assert_array_equal(now, (core.bone_pos[games] == 28) & (tiles <= SOLVE_TILES))
        values = bot.move_values(core.observe()[games], mask[games], hands[:, None], core.deal[games, None])
        best = np.nanmax(values, axis=1)
        assert np.isfinite(best).all()
        root = solve(hands[now, 0], hands[now, 1], core.ends[games[now], :2])
        np.testing.assert_array_equal(best[now], root)
        solved, with_pile = solved + now.sum(), with_pile + (core.bone_pos[games] < 28).sum()
        core.step(core.random_actions(rng))
    assert solved > 100 and with_pile > 1000
    block = DominoCore(BLOCK, 50, seed=1)
    assert solvable_now(block).all()
