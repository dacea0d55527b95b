"""The RLlib MultiAgentEnv: RLlib's env checker as is, the masking conventions, illegal actions."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.utils.pre_checks.env import check_multiagent_environments

from domino_env.envs.rllib import DominoMultiAgentEnv

SETTINGS = [
    {},
    {"preset": "all_fives", "players": 3},
    {"preset": "partnership"},
    {"preset": "block", "episode": "match", "reward": "win", "target": 30},
]


@pytest.mark.parametrize("config", SETTINGS, ids=str)
def test_rllib_env_checker_passes_with_sampled_unmasked_actions(config: dict) -> None:
    env = DominoMultiAgentEnv(config)
    assert isinstance(env, MultiAgentEnv)
    for _ in range(20):  # the checker steps one unmasked sampled action: illegal ones end the episode
        check_multiagent_environments(env)


@pytest.mark.parametrize("config", SETTINGS, ids=str)
def test_masked_play_is_turn_based_float32_and_zero_sum(config: dict) -> None:
    env = DominoMultiAgentEnv(config)
    rng = np.random.default_rng(0)
    for episode in range(10):
        obs, _ = env.reset(seed=episode)
        returns = dict.fromkeys(env.possible_agents, 0.0)
        while True:
            [(agent, seen)] = obs.items()  # only the agent to move observes
            assert env.observation_spaces[agent].contains(seen)
            assert seen["observations"].dtype == seen["action_mask"].dtype == np.float32
            action = int(rng.choice(np.flatnonzero(seen["action_mask"])))
            obs, rewards, terminated, truncated, _ = env.step({agent: action})
            for name, reward in rewards.items():
                returns[name] += reward
            if terminated["__all__"]:
                break
            assert not truncated["__all__"]
        assert all(terminated[name] for name in obs)  # every agent that played sees the end
        assert abs(sum(returns.values())) < 1e-9  # zero-sum: a seat's return is the per-agent metric


def test_an_illegal_action_ends_the_episode_with_minus_one_for_the_offender() -> None:
    env = DominoMultiAgentEnv({"preset": "all_fives", "players": 3})
    obs, _ = env.reset(seed=3)
    [(agent, seen)] = obs.items()
    illegal = int(np.flatnonzero(seen["action_mask"] == 0)[0])
    obs, rewards, terminated, truncated, infos = env.step({agent: illegal})
    assert terminated["__all__"] and not truncated["__all__"]
    assert rewards[agent] == -1.0 and sum(rewards.values()) == -1.0
    assert infos[agent] == {"illegal_move": illegal}
    env.reset(seed=4)
    with pytest.raises(ValueError, match="is to move"):
        env.step({"nobody": 0})
