"""The core on its compiled kernels: what the move-for-move differential tests leave out.

``tests/test_core_vs_reference.py`` holds the core to the reference engine on
random deals, whole and partial batches. Here: fixed deal lists (with and without
given openers) against the reference, illegal actions, ``play_random``, the
public ``refresh_legal``, and copies (pickle, deepcopy) against the original core
played on with the same actions.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from domino_env import IllegalMoveError
from domino_env.engine.core import DominoCore
from domino_env.engine.deals import random_deals
from domino_env.engine.rules import Rules
from domino_env.tools.crosscheck import CrossCheck

STATE = (
    "hands", "table", "deal", "draw_prefix", "bone_pos", "ends", "end_tile", "end_count", "spinner",
    "spin_need", "to_play", "opener", "forced", "num_placed", "last_move", "missing", "draws", "passes",
    "scores", "round_points", "rounds_played", "legal_bits",
)  # fmt: skip
RESULT = ("round_over", "game_over", "end", "winner", "points", "scores", "game_winner", "fives")


def assert_same_state(first: DominoCore, second: DominoCore, where: str) -> None:
    for name in STATE:
        np.testing.assert_array_equal(getattr(first, name), getattr(second, name), err_msg=f"{name} {where}")
    for seat in range(first.players):
        np.testing.assert_array_equal(
            first.observe(seat), second.observe(seat), err_msg=f"seat {seat} {where}"
        )
    np.testing.assert_array_equal(first.observe(), second.observe(), err_msg=f"to move {where}")
    np.testing.assert_array_equal(first.legal_mask(), second.legal_mask(), err_msg=f"mask {where}")


@pytest.mark.parametrize("mode", ["round", "match"])
@pytest.mark.parametrize(
    ("preset", "players"), [("block", 2), ("draw", 3), ("all_fives", 2), ("idrd_draw", 4)]
)
def test_fixed_deal_lists_agree_with_the_reference(preset: str, players: int, mode: str) -> None:
    """Every game walks the same list; some games stand still each step (``active``)."""
    rules = Rules.preset(preset, players)
    deals = random_deals(rules, 7, np.random.default_rng(3))
    check = CrossCheck(rules, num_games=24, seed=2, episode=mode, deals=deals)
    check.run(120, active_rate=0.7)
    assert check.stats.rounds >= 20
    walked = check.core.deal_source.cursor
    assert (walked > 1).all()  # every game has moved past its first deal


def test_fixed_deals_with_given_openers_agree_with_the_reference() -> None:
    rules = Rules.preset("spanish_pairs", 4)  # the first opener is chosen by lots
    deals = random_deals(rules, 5, np.random.default_rng(4))
    openers = np.array([3, 0, 2, 1, 3])
    check = CrossCheck(rules, num_games=16, seed=5, episode="match", deals=deals, openers=openers)
    np.testing.assert_array_equal(check.core.opener, openers[0])
    check.run(100, active_rate=0.8)
    assert check.stats.rounds >= 10


def test_unknown_arguments_are_a_type_error() -> None:
    with pytest.raises(TypeError, match="engine"):
        DominoCore(Rules.preset("block", 2), 4, engine="numpy")


def test_illegal_action_changes_nothing() -> None:
    core = DominoCore(Rules.preset("block", 2), 8, seed=0)
    core.step(core.random_actions())
    before = {name: getattr(core, name).copy() for name in STATE}
    actions = core.random_actions()
    actions[5] = int(np.flatnonzero(~core.legal_mask()[5])[0])
    with pytest.raises(IllegalMoveError, match=r"game 5: action \d+ \(.*\) is illegal for seat"):
        core.step(actions)
    for name, value in before.items():
        np.testing.assert_array_equal(getattr(core, name), value, err_msg=name)


@pytest.mark.parametrize(("preset", "players"), [("block", 2), ("all_fives", 4), ("muggins", 2), ("draw", 3)])
def test_play_random_moves_until_the_stop_seat_or_the_round_end(preset: str, players: int) -> None:
    rules = Rules.preset(preset, players)
    core = DominoCore(rules, 300, seed=4, episode="match")
    rng = np.random.default_rng(1)
    stop = rng.integers(players, size=300)
    rounds = 0
    for _ in range(30):
        before, placed = core.scores.copy(), core.num_placed.copy()
        active = (core.to_play != stop) & (rng.random(300) < 0.9)
        result = core.play_random(stop, active, rng)
        assert ((core.to_play == stop) | result.round_over)[active].all()
        assert not result.round_over[~active].any()
        going = active & ~result.round_over
        np.testing.assert_array_equal(core.scores[~active], before[~active])
        np.testing.assert_array_equal(core.num_placed[~active], placed[~active])
        np.testing.assert_array_equal((core.scores - before)[going].sum(axis=1), result.fives[going])
        ended = result.round_over
        np.testing.assert_array_equal(
            result.scores[ended].sum(axis=1) >= result.points[ended].sum(axis=1), True
        )
        rounds += ended.sum()
        if (core.to_play == stop).any():
            core.step(core.random_actions(rng), core.to_play == stop)
    assert rounds > 100


def test_play_random_replays_from_the_same_seeds() -> None:
    rules = Rules.preset("all_fives", 3)
    runs = []
    for _ in range(2):
        core, rng = DominoCore(rules, 64, seed=8), np.random.default_rng(8)
        for _ in range(20):
            core.play_random(np.zeros(64, dtype=np.intp), core.to_play != 0, rng)
            core.step(core.random_actions(rng), core.to_play == 0)
        runs.append((core.hands.copy(), core.scores.copy(), core.observe()))
    for first, second in zip(*runs, strict=True):
        np.testing.assert_array_equal(first, second)


@pytest.mark.parametrize(("preset", "players"), [("block", 2), ("all_fives", 4), ("idrd_draw", 3)])
def test_refresh_legal_rebuilds_the_cached_legal_sets(preset: str, players: int) -> None:
    core = DominoCore(Rules.preset(preset, players), 64, seed=3)
    for _ in range(5):
        core.step(core.random_actions())
    kept = core.legal_bits.copy()
    core.legal_bits[:] = 0
    core.refresh_legal(np.arange(0, 64, 2))
    np.testing.assert_array_equal(core.legal_bits[::2], kept[::2])
    assert not core.legal_bits[1::2].any()
    core.refresh_legal()
    np.testing.assert_array_equal(core.legal_bits, kept)


@pytest.mark.parametrize("copier", ["pickle", "deepcopy"])
def test_a_copied_core_plays_on_like_the_original_and_apart_from_it(copier: str) -> None:
    core = DominoCore(Rules.preset("all_fives", 3), 32, seed=6, episode="match")
    for _ in range(25):
        core.step(core.random_actions())
    twin = pickle.loads(pickle.dumps(core)) if copier == "pickle" else copy.deepcopy(core)
    assert_same_state(twin, core, "after copying")
    for step in range(60):
        actions = core.random_actions()
        np.testing.assert_array_equal(twin.random_actions(), actions)  # the generator was copied too
        active = np.arange(32) % 3 != step % 3
        got, want = twin.step(actions, active), core.step(actions, active)
        for name in RESULT:
            np.testing.assert_array_equal(
                getattr(got, name), getattr(want, name), err_msg=f"{name} step {step}"
            )
        assert_same_state(twin, core, f"step {step} after copying")
    twin.step(twin.random_actions())
    assert (twin.num_placed != core.num_placed).any()  # the copy owns its arrays
    assert (twin.views.shared != core.views.shared).any()  # and its observation blocks
