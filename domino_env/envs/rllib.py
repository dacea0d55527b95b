"""Dominoes as an RLlib ``MultiAgentEnv``, with RLlib's action-masking conventions.

    from domino_env.envs.rllib import DominoMultiAgentEnv   # needs pip install -e '.[ray]'

    env = DominoMultiAgentEnv({"preset": "all_fives", "players": 3})
    obs, infos = env.reset(seed=0)            # {"player_1": {"observations": ..., "action_mask": ...}}

The game is the PettingZoo env's (``domino_env.envs.pettingzoo_env``, whose module
docstring documents the observation, actions and rewards); ``config`` takes its
arguments (``preset``, ``players``, ``episode``, ``reward``, ``skip_forced`` and rule
overrides). What changes is the form RLlib wants:

* **Observations** are ``{"observations": float32 vector, "action_mask": float32 0/1}``,
  the keys RLlib's action-masking RL modules read (its example
  ``ActionMaskingTorchRLModule``; ``scripts/train_rllib.py`` trains one). Only the agent
  to move gets an observation (turn-based: RLlib then expects its action only); when the
  episode ends every agent that has played gets its last observation.
* **Rewards** reach every seat when a round ends (RLlib adds a reward to an agent that
  did not move to that agent's next step). The game is zero-sum, so the sum of the
  seats' returns is always about 0: a seat's return is RLlib's per-agent metric
  ``env_runners/agent_episode_returns_mean/player_<seat>``, not ``episode_return_mean``.
* **Illegal actions** end the episode, as ``pettingzoo_env.env()`` does (PettingZoo's
  ``TerminateIllegalWrapper``): -1 to the offender, 0 to the others, every agent
  terminated; ``infos[offender]["illegal_move"]`` says so. RLlib's env checker steps
  unmasked sampled actions, so it meets this path; a masked policy never does.

One shared policy plays every seat: map every agent id to one module
(``policy_mapping_fn=lambda agent_id, episode, **kw: "shared"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from domino_env.envs.pettingzoo_env import ILLEGAL_REWARD, raw_env
from domino_env.envs.spaces import observation_bounds
from domino_env.install import install_hint

try:
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
except ImportError:  # the optional extra
    raise ImportError(f"domino_env.envs.rllib needs Ray RLlib: {install_hint('ray')}") from None

ObsDict = dict[str, dict[str, np.ndarray]]


class DominoMultiAgentEnv(MultiAgentEnv):
    """Every seat an agent (``player_0`` ...), one acting per step; see the module docstring."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.game = raw_env(**dict(config or {}))
        rules = self.game.rules
        low, high = observation_bounds(rules)
        space = spaces.Dict(
            {
                "observations": spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32),
                "action_mask": spaces.Box(0.0, 1.0, (rules.num_actions,), dtype=np.float32),
            }
        )
        self.possible_agents = list(self.game.possible_agents)
        self.agents = list(self.possible_agents)
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = {agent: spaces.Discrete(rules.num_actions) for agent in self.possible_agents}
        self._seen: set[str] = set()  # agents that got an observation this episode

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsDict, dict[str, dict]]:
        """A new deal; with ``skip_forced`` a deal that forced moves alone finish is dealt again."""
        self.game.reset(seed=seed, options=options)
        while not self.game.agents or self.game.terminations[self.game.agent_selection]:
            self.game.reset(options=options)
        self._seen = set()
        mover = self.game.agent_selection
        return self._observe([mover]), {mover: {}}

    def step(
        self, action_dict: dict[str, Any]
    ) -> tuple[ObsDict, dict[str, float], dict[str, bool], dict[str, bool], dict[str, dict]]:
        """Play the mover's action (the only one read); every seat gets its reward of the step."""
        mover = self.game.agent_selection
        if mover not in action_dict:
            raise ValueError(f"{mover} is to move; got actions for {sorted(action_dict)}")
        action = int(action_dict[mover])
        seen = sorted(self._seen)
        if (
            not 0 <= action < self.game.rules.num_actions
            or not self.game.observe(mover)["action_mask"][action]
        ):
            rewards = dict.fromkeys(self.possible_agents, 0.0)
            rewards[mover] = float(ILLEGAL_REWARD)
            infos = {agent: {} for agent in seen}
            infos[mover] = {"illegal_move": action}
            return self._ended(seen, rewards, infos)
        self.game.step(action)
        rewards = {agent: float(self.game.rewards[agent]) for agent in self.possible_agents}
        if self.game.terminations[mover]:
            return self._ended(seen, rewards, {agent: {} for agent in seen})
        following = self.game.agent_selection
        done = {"__all__": False}
        return self._observe([following]), rewards, done, dict(done), {following: {}}

    def _ended(
        self, seen: list[str], rewards: dict[str, float], infos: dict[str, dict]
    ) -> tuple[ObsDict, dict[str, float], dict[str, bool], dict[str, bool], dict[str, dict]]:
        terminated = dict.fromkeys(seen, True) | {"__all__": True}
        truncated = dict.fromkeys(seen, False) | {"__all__": False}
        return self._observe(seen), rewards, terminated, truncated, infos

    def _observe(self, agents: list[str]) -> ObsDict:
        self._seen.update(agents)
        out = {}
        for agent in agents:
            seen = self.game.observe(agent)
            out[agent] = {
                "observations": seen["observation"].astype(np.float32),
                "action_mask": seen["action_mask"].astype(np.float32),
            }
        return out

    def render(self) -> str | np.ndarray | None:
        return self.game.render()
