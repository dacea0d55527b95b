"""The core's two engines (compiled numba kernels, NumPy array operations) play identical games.

They share every state array, so "identical" is checked on all of them, on every
seat's observation and on every ``StepResult`` field, after every step: whole
batches and partial ones (``active``), round and match mode, every preset and
player count, with fixed deal lists too. The differential tests hold the default
engine to the reference engine; this file carries that to the other one.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from domino_env import IllegalMoveError
from domino_env.core import DominoCore
from domino_env.deals import random_deals
from domino_env.rules import Rules, all_configurations

CONFIGS = all_configurations()
CONFIG_IDS = [f"{name}-{p}p" for name, p in CONFIGS]
STATE = (
    "hands", "table", "deal", "draw_prefix", "bone_pos", "ends", "end_tile", "end_count", "spinner",
    "spin_need", "to_play", "opener", "forced", "num_placed", "last_move", "missing", "draws", "passes",
    "scores", "round_points", "rounds_played", "legal_bits",
)  # fmt: skip
RESULT = ("round_over", "game_over", "end", "winner", "points", "scores", "game_winner", "fives")


def assert_same_state(compiled: DominoCore, numpy: DominoCore, where: str) -> None:
    for name in STATE:
        np.testing.assert_array_equal(
            getattr(compiled, name), getattr(numpy, name), err_msg=f"{name} {where}"
        )
    for seat in range(compiled.players):
        np.testing.assert_array_equal(
            compiled.observe(seat), numpy.observe(seat), err_msg=f"seat {seat} {where}"
        )
    np.testing.assert_array_equal(compiled.observe(), numpy.observe(), err_msg=f"to move {where}")
    np.testing.assert_array_equal(compiled.legal_mask(), numpy.legal_mask(), err_msg=f"mask {where}")


def play_both(compiled: DominoCore, numpy: DominoCore, steps: int, seed: int, partial: bool) -> None:
    """Random legal play, the same actions in both engines; their states must not differ."""
    picker = np.random.default_rng(seed)
    assert_same_state(compiled, numpy, "after reset")
    for step in range(steps):
        uniform_seed = int(picker.integers(2**31))
        actions = compiled.random_actions(np.random.default_rng(uniform_seed))
        np.testing.assert_array_equal(actions, numpy.random_actions(np.random.default_rng(uniform_seed)))
        active = picker.random(compiled.num_games) < 0.7 if partial else None
        got, want = compiled.step(actions, active), numpy.step(actions, active)
        for name in RESULT:
            np.testing.assert_array_equal(
                getattr(got, name), getattr(want, name), err_msg=f"{name} step {step}"
            )
        assert_same_state(compiled, numpy, f"after step {step}")


@pytest.mark.parametrize(("preset", "players"), CONFIGS, ids=CONFIG_IDS)
@pytest.mark.parametrize("mode", ["round", "match"])
def test_engines_play_identical_games(preset: str, players: int, mode: str) -> None:
    rules = Rules.preset(preset, players)
    compiled = DominoCore(rules, 96, seed=11, mode=mode, engine="numba")
    numpy = DominoCore(rules, 96, seed=11, mode=mode, engine="numpy")
    play_both(compiled, numpy, steps=150, seed=5, partial=mode == "match")


@pytest.mark.parametrize("preset", ["block", "draw", "all_fives"])
def test_engines_agree_on_fixed_deals(preset: str) -> None:
    rules = Rules.preset(preset, 2)
    deals = random_deals(rules, 7, np.random.default_rng(3))
    compiled = DominoCore(rules, 40, seed=2, deals=deals, engine="numba")
    numpy = DominoCore(rules, 40, seed=2, deals=deals, engine="numpy")
    play_both(compiled, numpy, steps=60, seed=9, partial=True)


def test_unknown_engine_is_named() -> None:
    with pytest.raises(ValueError, match="engine must be one of 'numba', 'numpy', got 'jax'"):
        DominoCore(Rules.preset("block", 2), 4, engine="jax")


@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_illegal_action_changes_nothing_in_either_engine(engine: str) -> None:
    core = DominoCore(Rules.preset("block", 2), 8, seed=0, engine=engine)
    core.step(core.random_actions())
    before = {name: getattr(core, name).copy() for name in STATE}
    actions = core.random_actions()
    actions[5] = int(np.flatnonzero(~core.legal_mask()[5])[0])
    with pytest.raises(IllegalMoveError, match=r"game 5: action \d+ \(.*\) is illegal for seat"):
        core.step(actions)
    for name, value in before.items():
        np.testing.assert_array_equal(getattr(core, name), value, err_msg=name)


@pytest.mark.parametrize("engine", ["numba", "numpy"])
@pytest.mark.parametrize(("preset", "players"), [("block", 2), ("all_fives", 4), ("muggins", 2), ("draw", 3)])
def test_play_random_moves_until_the_stop_seat_or_the_round_end(
    engine: str, preset: str, players: int
) -> None:
    rules = Rules.preset(preset, players)
    core = DominoCore(rules, 300, seed=4, mode="match", engine=engine)
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


@pytest.mark.parametrize("engine", ["numba", "numpy"])
@pytest.mark.parametrize("copier", ["pickle", "deepcopy"])
def test_a_copied_core_plays_on_like_the_original_and_apart_from_it(engine: str, copier: str) -> None:
    core = DominoCore(Rules.preset("all_fives", 3), 32, seed=6, mode="match", engine=engine)
    for _ in range(25):
        core.step(core.random_actions())
    twin = pickle.loads(pickle.dumps(core)) if copier == "pickle" else copy.deepcopy(core)
    assert twin.engine == engine
    assert_same_state(twin, core, "after copying")
    for step in range(60):
        actions = core.random_actions()
        np.testing.assert_array_equal(twin.random_actions(), actions)  # the generator was copied too
        core.step(actions)
        twin.step(actions)
        assert_same_state(twin, core, f"step {step} after copying")
    twin.step(twin.random_actions())
    assert (twin.num_placed != core.num_placed).any()  # the copy owns its arrays
