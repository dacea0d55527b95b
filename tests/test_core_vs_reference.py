"""Differential tests: the batched core and the reference engine agree move for move.

For every preset and player count, at least 2,000 random rounds (round mode) and
at least 60 whole games to the target (match mode, opener rotation and carried
scores included) are compared on seat to move, legal actions, every seat's
observation, draws, passes, round ends, points and scores.
"""

import numpy as np
import pytest

from domino_env.engine.rules import Rules, all_configurations
from domino_env.tools.crosscheck import CrossCheck, Disagreement

CONFIGS = all_configurations()


def run_until(check: CrossCheck, games: int) -> None:
    while check.stats.games < games:
        check.run(20)


@pytest.mark.parametrize(("preset", "players"), CONFIGS)
def test_rounds_agree(preset: str, players: int) -> None:
    check = CrossCheck(Rules.preset(preset, players), num_games=64, seed=players * 101 + len(preset))
    run_until(check, 2000)
    assert check.stats.rounds >= 2000
    assert sum(check.stats.ends.values()) == check.stats.rounds


@pytest.mark.parametrize(("preset", "players"), CONFIGS)
def test_matches_agree(preset: str, players: int) -> None:
    check = CrossCheck(Rules.preset(preset, players), num_games=32, seed=7 + players, episode="match")
    run_until(check, 60)
    assert check.stats.rounds > check.stats.games


def test_muggins_reaches_the_target_mid_round() -> None:
    check = CrossCheck(Rules.preset("muggins"), num_games=32, seed=11, episode="match")
    run_until(check, 60)
    assert check.stats.ends.get("target", 0) > 0


def test_a_disagreement_is_reported() -> None:
    check = CrossCheck(Rules.preset("block", 2), num_games=4, seed=0)
    check.core.views.seat_rows[2, 1, 0] += 7  # corrupt what seat 1 sees of tile 0 in game 2
    with pytest.raises(Disagreement, match="observation"):
        check.run(1)


@pytest.mark.parametrize(("field", "message"), [("fives", "fives core="), ("winner", "was not stepped")])
def test_a_wrong_step_result_is_reported(monkeypatch, field: str, message: str) -> None:
    check = CrossCheck(Rules.preset("all_fives", 2), num_games=8, seed=0)
    step = check.core.step

    def corrupted(actions, active=None):
        result = step(actions, active)
        going = active & ~result.round_over if field == "fives" else ~active
        getattr(result, field)[going] += 5
        return result

    monkeypatch.setattr(check.core, "step", corrupted)
    with pytest.raises(Disagreement, match=message):
        check.run(5, active_rate=0.5)


@pytest.mark.parametrize(("preset", "players"), CONFIGS)
@pytest.mark.parametrize("mode", ["round", "match"])
def test_stepping_some_games_leaves_the_others_untouched(preset: str, players: int, mode: str) -> None:
    check = CrossCheck(Rules.preset(preset, players), num_games=32, seed=13 + players, episode=mode)
    check.run(150, active_rate=0.6)
    assert check.stats.rounds >= 20


def test_active_must_be_a_bool_mask() -> None:
    core = CrossCheck(Rules.preset("block", 2), num_games=4, seed=0).core
    with pytest.raises(ValueError, match="active must be a bool array"):
        core.step(core.random_actions(), active=np.array([1, 0, 1, 0]))
