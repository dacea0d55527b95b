"""SelfPlay: the decision state, zero-sum per-seat rewards that match the core's round points."""

from __future__ import annotations

import re

import numpy as np
import pytest

import domino_env.envs.selfplay as selfplay_module
from domino_env.engine.core import DominoCore
from domino_env.engine.errors import IllegalMoveError
from domino_env.engine.rules import Rules
from domino_env.envs.policies import first_legal_policy, random_policy
from domino_env.envs.selfplay import SelfPlay


@pytest.mark.parametrize(
    ("preset", "players", "episode"),
    [("block", 2, "round"), ("all_fives", 3, "round"), ("partnership", 4, "match"), ("muggins", 2, "match")],
)
def test_rewards_are_zero_sum_shared_by_partners_and_add_up_to_the_round_points(preset, players, episode):
    """A twin core fed the same actions gives the points each episode's rewards must add up to."""
    rules = Rules.preset(preset, players)
    n = 64
    play = SelfPlay(rules, n, episode=episode, seed=0)
    twin = DominoCore(rules, n, seed=0, episode=episode)
    policy = random_policy(1)
    returns, points = np.zeros((n, players)), np.zeros((n, rules.num_sides))
    side = np.array([rules.side_of(s) for s in range(players)])
    episodes = 0
    for _ in range(300):
        state = play.state()
        assert (state.seat == twin.to_play).all() and (state.obs == twin.observe()).all()
        assert (state.mask == twin.legal_mask()).all() and state.mask.any(axis=1).all()
        actions = policy(state.obs, state.mask)
        result, expected = play.step(actions), twin.step(actions)
        assert np.allclose(result.rewards.sum(axis=1), 0)
        if rules.teams:
            assert (result.rewards[:, 0] == result.rewards[:, 2]).all()
            assert (result.rewards[:, 1] == result.rewards[:, 3]).all()
        assert (result.round_over == expected.round_over).all() and (result.done == expected.game_over).all()
        returns += result.rewards
        points += np.where(expected.round_over[:, None], expected.points, 0)
        done = result.done
        final = points[done] - points[done].mean(axis=1, keepdims=True)
        assert np.allclose(returns[done], final[:, side])
        returns[done], points[done] = 0, 0
        episodes += done.sum()
    assert episodes > n


def test_illegal_actions_raise():
    play = SelfPlay(Rules.preset("block", 2), 4, seed=0)
    state = play.state()
    actions = first_legal_policy(state.obs, state.mask)
    actions[2] = np.flatnonzero(~state.mask[2])[0]
    with pytest.raises(IllegalMoveError, match="game 2"):
        play.step(actions)


def test_the_documented_example_runs():
    example = re.search(r"Example.*?::\n\n(.*?)\n\"\"\"", selfplay_module.__doc__ + '\n"""', re.S).group(1)
    namespace = {"np": np, "Rules": Rules, "SelfPlay": SelfPlay}
    namespace.update(random_policy=random_policy, first_legal_policy=first_legal_policy)
    code = "\n".join(line[4:] for line in example.splitlines()).replace("range(1000)", "range(20)")
    exec(code, namespace)
    assert namespace["returns"].shape == (1024, 2)
