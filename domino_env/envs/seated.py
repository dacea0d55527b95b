"""``OpponentsWrapper``: a PettingZoo AEC env whose other seats are played by opponents.

A single-agent learner (or a team of its own agents) can then use the PettingZoo API
against bots: the wrapper plays every seat but the ``learners``' as soon as it is to move,
so ``agent_iter()`` yields only the learners' agents. Nothing else changes: ``agents``,
``possible_agents``, observations and spaces are the wrapped env's, and rewards are
PettingZoo's own, so ``last()`` gives a learner everything it got since its last move,
what ended during the opponents' moves included (an episode's rewards add up as in the
plain env: ``tests/test_opponents.py``).

Opponents are what ``DominoSoloEnv`` takes (``domino_env.envs.learner``): one policy or
name for every other seat, or a list of them, one per other seat in play order after the
(first) learner; ``None`` is ``"random"``. ``reset(seed=s)`` also seeds them (names that are
bots are built again from ``s``), so the same seed replays the same games. An opponent
that plays an illegal move raises ``IllegalMoveError``, naming it.

``domino_env.env(..., opponents=..., learners=...)`` builds it around ``env()``::

    from domino_env import env

    game = env(preset="block", players=2, opponents="strong")  # player_0 is the learner
    game.reset(seed=0)
    for agent in game.agent_iter():  # only "player_0"
        observation, reward, termination, truncation, info = game.last()
        action = None if termination or truncation else int(observation["action_mask"].argmax())
        game.step(action)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils.env import AECIterable
from pettingzoo.utils.wrappers import BaseWrapper

from domino_env.engine.errors import IllegalMoveError
from domino_env.envs.learner import Opponents, check_opponents, seeded_opponents
from domino_env.envs.policies import call_policy


class OpponentsWrapper(BaseWrapper):
    """The ``learners``' seats are played from outside, the others by ``opponents`` (module docstring)."""

    def __init__(
        self, env: AECEnv, opponents: Opponents = None, learners: str | Sequence[str] = "player_0"
    ) -> None:
        super().__init__(env)
        self.rules = env.unwrapped.rules
        agents = list(env.possible_agents)
        self.learners = [learners] if isinstance(learners, str) else list(learners)
        chosen = set(self.learners)
        if not (chosen <= set(agents) and 0 < len(chosen) == len(self.learners) < len(agents)):
            raise ValueError(
                f"learners must be agents of this env ({', '.join(agents)}): at least one, not all, none "
                f"twice; got {learners!r}"
            )
        first = agents.index(self.learners[0])
        after = [agents[(first + k) % len(agents)] for k in range(1, len(agents))]
        self.opponent_agents = [agent for agent in after if agent not in self.learners]
        """The other agents, in play order after the first learner: ``opponents[k]`` plays the k-th."""
        given = "random" if opponents is None else opponents
        self._specs = check_opponents(self.rules, given, seats=len(self.opponent_agents))
        self._seat_policies(None)

    def _seat_policies(self, seed: int | None) -> None:
        """The opponents for a seed: each bot (and random) name built again from it."""
        policies = seeded_opponents(self.rules, self._specs, np.random.SeedSequence(seed))
        self._policy_of = dict(zip(self.opponent_agents, policies, strict=True))

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new episode, played up to a learner's first decision; ``seed`` seeds the opponents too."""
        self.env.reset(seed=seed, options=options)
        if seed is not None:
            self._seat_policies(seed)
        self._play_opponents()

    def step(self, action: Any) -> None:
        """The learner to move plays ``action``; the opponents then play up to a learner's turn."""
        self.env.step(action)
        self._play_opponents()

    def last(self, observe: bool = True) -> tuple:
        return self.env.last(observe)

    def agent_iter(self, max_iter: int = 2**63) -> AECIterable:
        """The wrapped env's iterator (with its order checks): it only meets learners' agents."""
        return self.env.agent_iter(max_iter)

    def _play_opponents(self) -> None:
        """Opponents to move play, and dead ones step out, until a learner is selected or none is left."""
        env = self.env
        while env.agents and (agent := env.agent_selection) not in self.learners:
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            observation = env.observe(agent)
            mask = observation["action_mask"].astype(bool)
            policy = self._policy_of[agent]
            action = int(call_policy(policy, observation["observation"][None], mask[None])[0])
            if not 0 <= action < len(mask) or not mask[action]:
                raise IllegalMoveError(
                    f"opponent {policy!r} playing {agent} chose action {action}, which is not legal; "
                    f"legal: {np.flatnonzero(mask).tolist()}"
                )
            env.step(action)
