"""Differential tests: the batched core and the reference engine agree move for move.

For every preset and player count, at least 2,000 random rounds (round mode) and
at least 60 whole games to the target (match mode, opener rotation and carried
scores included) are compared on seat to move, legal actions, every seat's
observation, draws, passes, round ends, points and scores.
"""

import pytest

from domino_env.crosscheck import CrossCheck, Disagreement
from domino_env.rules import Rules, all_configurations

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
    check = CrossCheck(Rules.preset(preset, players), num_games=32, seed=7 + players, mode="match")
    run_until(check, 60)
    assert check.stats.rounds > check.stats.games


def test_muggins_reaches_the_target_mid_round_in_both_engines() -> None:
    check = CrossCheck(Rules.preset("muggins"), num_games=32, seed=11, mode="match")
    run_until(check, 60)
    assert check.stats.ends.get("target", 0) > 0


def test_a_disagreement_is_reported() -> None:
    check = CrossCheck(Rules.preset("block", 2), num_games=4, seed=0)
    check.core.scores[2, 1] += 5  # corrupt the core: the observation must now differ
    with pytest.raises(Disagreement, match="observation"):
        check.run(1)
