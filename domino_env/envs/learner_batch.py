"""N games with the learner at one seat of each: the engine under ``DominoVectorEnv``.

It follows the setting of ``domino_env.envs.learner`` on a ``DominoCore``: every
learner moves at once, then opponent round trips, each a single batched call
per policy with the observations and masks of the games where a seat it plays
is to move, stepping only those games (``DominoCore.step(actions, active)``)
until every game waits for its learner again (an opponent named for several
seats is one policy: one call). A ``RandomPolicy`` playing every other seat (the
default, and ``"random"``) is played inside the core instead, every opponent move
up to the learner's next turn in one compiled pass (``DominoCore.play_random``).
There is no Python loop over games.

The core starts a new round inside the step that ends one (so every game always
has a decision pending); the finished position is therefore never observable
here, and ``final_obs`` is the learner's observation at its last decision of
the episode. Episodes only terminate, so no value is bootstrapped from it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from domino_env.engine.core import DominoCore, StepResult
from domino_env.engine.outcome import Episode, episode_winner
from domino_env.engine.rules import Rules
from domino_env.envs.learner import (
    LearnerSeat,
    Opponents,
    Reward,
    check_opponents,
    check_setting,
    outcome,
    streams,
)
from domino_env.envs.policies import Policy, RandomPolicy, act_per_policy


@dataclass
class LearnerStep:
    """What one learner move led to, per game."""

    obs: np.ndarray
    """(N, obs_size) int16: the learner's observation at its next decision (a new episode where done)."""
    mask: np.ndarray
    """(N, num_actions) bool: its legal actions there."""
    reward: np.ndarray
    """(N,) float64: reward of the move (see the module docstring)."""
    done: np.ndarray
    """(N,) bool: the learner's episode ended during this move."""
    final_obs: np.ndarray
    """(N, obs_size) int16: where done, the learner's observation at its last decision of that episode."""
    outcome: np.ndarray
    """(N,) int8: where done, +1 the learner's side won the episode, -1 another side did, 0 nobody."""
    points: np.ndarray
    """(N,) float64: where done, the episode's points of the learner's side minus the mean over sides."""
    final_seat: np.ndarray
    """(N,) int64: where done, the learner's seat in the episode that ended."""


class LearnerBatch:
    """N games: the learner's seat moves from outside, the other seats by opponent policies."""

    def __init__(
        self,
        rules: Rules,
        num_games: int,
        *,
        episode: Episode = "round",
        reward: Reward = "points",
        learner_seat: LearnerSeat = 0,
        opponents: Opponents = None,
        seed: int | None = None,
    ) -> None:
        check_setting(rules, episode, reward, learner_seat)
        self.rules = rules
        self.reward_kind = reward
        self.learner_seat = learner_seat
        self._given_opponents = check_opponents(rules, opponents)
        self._seed(seed)
        self.core = DominoCore(rules, num_games, seed=self._deal_rng, episode=episode)
        self.num_games = num_games
        self.seats = np.zeros(num_games, dtype=np.int64)
        """(N,) the learner's seat in each game's current episode (set by ``reset``)."""
        self._side_of_seat = self.core.side_of_seat
        self._arange = np.arange(num_games)
        self._obs: np.ndarray | None = None
        """The learner's observations at its pending decisions; None until ``reset``."""

    # -- resetting ------------------------------------------------------------------
    def _seed(self, seed: int | None) -> None:
        self._deal_rng, self._seat_rng, opponents = streams(self.rules, seed, self._given_opponents)
        groups = _group(opponents)
        self._group_policies = [policy for policy, _ in groups]
        self._group_of_relative = np.full(self.rules.players, -1, dtype=np.intp)
        """Relative seat -> index of the policy group that plays it (-1: the learner)."""
        for index, (_, seats) in enumerate(groups):
            self._group_of_relative[seats] = index
        only = self._group_policies[0] if len(groups) == 1 else None
        self._random_opponents = only if type(only) is RandomPolicy else None  # not a subclass: it may differ
        """Set when one random policy plays every other seat: the core plays it (``play_random``)."""

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """New episodes in every game (``seed`` reseeds deals, seats and the default opponents).

        Returns the learner's (obs, mask) at its first decision in every game.
        """
        if seed is not None:
            self._seed(seed)
        self.core.reset(seed=self._deal_rng)
        self.seats = self._new_seats(self.num_games)
        self._pending = np.zeros(self.num_games)
        self._episode_points = np.zeros(self.num_games)
        self._run_opponents(decided=np.zeros(self.num_games, dtype=bool), step=None)
        self._obs = self.core.observe(self.seats)
        return self._obs.copy(), self.core.legal_mask()

    def _new_seats(self, count: int) -> np.ndarray:
        if self.learner_seat == "random":
            return self._seat_rng.integers(self.rules.players, size=count)
        return np.full(count, self.learner_seat, dtype=np.int64)

    # -- stepping -------------------------------------------------------------------
    def step(self, actions: np.ndarray, active: np.ndarray | None = None) -> LearnerStep:
        """Play the learner's action in every game, then the opponents until it is to move again.

        ``active`` (bool, (N,)): only those games move; the others stand still, their actions
        ignored, and keep the reward they are owed for their next step (the vector env's
        next-step autoreset holds a game back for one step this way).
        """
        if self._obs is None:  # checked first: the core must not move before the episodes exist
            raise RuntimeError("call reset() before step()")
        n = self.num_games
        scores_before = self.core.scores.copy()
        result = self.core.step(actions, active)  # checks every action before changing anything
        owed = self._pending if active is None else np.where(active, self._pending, 0.0)
        step = LearnerStep(  # filled in as the opponents play; obs and mask are set last
            obs=self._obs,
            mask=np.zeros(0, dtype=bool),
            reward=owed,
            done=np.zeros(n, dtype=bool),
            final_obs=np.zeros_like(self._obs),
            outcome=np.zeros(n, dtype=np.int8),
            points=np.zeros(n),
            final_seat=np.zeros(n, dtype=np.int64),
        )
        self._pending = self._pending - owed
        self._score(result, scores_before, decided=np.ones(n, dtype=bool), step=step)
        self._run_opponents(decided=~step.done, step=step)
        step.final_obs[step.done] = self._obs[step.done]
        self._obs = self.core.observe(self.seats)
        step.obs = self._obs.copy()
        step.mask = self.core.legal_mask()
        return step

    def _run_opponents(self, decided: np.ndarray, step: LearnerStep | None) -> None:
        """Opponent round trips until the learner is to move in every game.

        ``decided[g]``: the learner has moved in game g's current episode, so its
        points go to this step's reward; otherwise to the next episode's first.
        """
        if self._random_opponents is not None:
            while (active := self.core.to_play != self.seats).any():
                scores_before = self.core.scores.copy()
                result = self.core.play_random(self.seats, active, self._random_opponents.rng)
                self._score(result, scores_before, decided, step)
            return
        players = self.rules.players
        while True:
            relative = (self.core.to_play - self.seats) % players
            active = relative != 0
            games = np.flatnonzero(active)
            if not len(games):
                return
            obs = self.core.observe(games=games)  # only the games an opponent moves in
            mask = self.core.legal_mask(games)
            moving = np.zeros(len(games), dtype=np.int64)
            owner = self._group_of_relative.take(relative.take(games))
            act_per_policy(self._group_policies, owner, obs, mask, moving)
            actions = np.zeros(self.num_games, dtype=np.int64)  # standing games ignore theirs
            actions[games] = moving
            scores_before = self.core.scores.copy()
            result = self.core.step(actions, active)
            self._score(result, scores_before, decided, step)

    def _score(
        self, result: StepResult, scores_before: np.ndarray, decided: np.ndarray, step: LearnerStep | None
    ) -> None:
        """Credit score changes to the learner and close the episodes that ended."""
        delta = result.scores - scores_before
        sides = delta.shape[1]
        own = delta.reshape(-1).take(self._arange * sides + self._side_of_seat.take(self.seats))
        total = delta[:, 0] + delta[:, 1]  # column by column: faster than a sum over a short axis
        for side in range(2, sides):
            total += delta[:, side]
        gain = own - total / sides
        self._episode_points += gain
        if self.reward_kind == "points":
            if step is not None:
                step.reward += np.where(decided, gain, 0.0)
            self._pending += np.where(decided, 0.0, gain)
        ended = np.flatnonzero(result.game_over)
        if not len(ended):
            return
        winner = episode_winner(self.core.episode, result.winner, result.game_winner)[ended]
        won = outcome(winner, self._side_of_seat.take(self.seats[ended]))
        closing = ended[decided[ended]]
        if step is not None and len(closing):
            closing_outcome = won[decided[ended]]
            step.done[closing] = True
            step.outcome[closing] = closing_outcome
            step.points[closing] = self._episode_points[closing]
            step.final_seat[closing] = self.seats[closing]
            if self.reward_kind == "win":
                step.reward[closing] += closing_outcome
        decided[ended] = False
        self._pending[ended] = 0.0
        self._episode_points[ended] = 0.0
        self.seats[ended] = self._new_seats(len(ended))


def _group(opponents: list[Policy]) -> list[tuple[Policy, list[int]]]:
    """Each distinct policy with the relative seats it plays, so each is called once per round trip."""
    groups: dict[int, tuple[Policy, list[int]]] = {}
    for offset, policy in enumerate(opponents, start=1):
        groups.setdefault(id(policy), (policy, []))[1].append(offset)
    return list(groups.values())
