"""Batched self-play: every seat of N games driven by the caller's policies.

A thin layer over ``DominoCore`` for training code that plays all seats itself
(self-play, league play, evaluation against checkpoints). Each game always has
one seat to move; ``state()`` gives that seat, its seat-relative observation and
its legal mask, and ``step(actions)`` plays one action per game, with draws,
passes, round ends and new deals handled inside the core.

Rewards are per seat, ``(N, players)``: after every step, the change in each
seat's side score minus the mean over sides. So fives count when scored and
end-of-round points when the round ends; each row sums to zero over sides,
partners get the same reward, and over an episode a seat's rewards add up to its
side's points minus the mean (the same ``"points"`` reward as ``DominoSoloEnv``).

Example (one policy for seat 0, another for the rest)::

    play = SelfPlay(Rules.preset("block", 2), num_games=1024, seed=0)
    hero, field = random_policy(1), first_legal_policy
    returns = np.zeros((1024, 2))
    for _ in range(1000):
        state = play.state()
        actions = np.empty(1024, dtype=np.int64)
        mine = state.seat == 0
        actions[mine] = hero(state.obs[mine], state.mask[mine])
        actions[~mine] = field(state.obs[~mine], state.mask[~mine])
        result = play.step(actions)
        returns += result.rewards        # result.done: episodes that just ended (already reset)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from domino_env.engine.core import DominoCore
from domino_env.engine.outcome import episode_winner, relative_points
from domino_env.engine.rules import Rules


@dataclass
class SelfPlayState:
    """The decision each game waits for."""

    seat: np.ndarray
    """(N,) seat to move."""
    obs: np.ndarray
    """(N, obs_size) int16: that seat's observation (seat-relative, docs/engine.md)."""
    mask: np.ndarray
    """(N, num_actions) bool: that seat's legal actions."""


@dataclass
class SelfPlayStep:
    """What one step did, per game."""

    rewards: np.ndarray
    """(N, players) float64: every seat's reward (see the module docstring)."""
    round_over: np.ndarray
    """(N,) bool: a round ended (and a new one started)."""
    done: np.ndarray
    """(N,) bool: the episode ended (every round in "round" episodes; the game in "match")."""
    winner: np.ndarray
    """(N,) int8: where done, the side that won the episode (the round or the game); -1 for none."""


class SelfPlay:
    """N games whose every seat is played by the caller. See the module docstring."""

    def __init__(
        self,
        rules: Rules,
        num_games: int,
        episode: Literal["round", "match"] = "round",
        seed: int | np.random.Generator | None = None,
    ) -> None:
        self.core = DominoCore(rules, num_games, seed=seed, episode=episode)
        self.rules = rules
        self.num_games = num_games

    def state(self) -> SelfPlayState:
        """Seat to move, its observation and its legal mask, in every game."""
        core = self.core
        return SelfPlayState(core.to_play.copy(), core.observe(), core.legal_mask())

    def step(self, actions: np.ndarray) -> SelfPlayStep:
        """Play one action per game (for its seat to move); raises ``IllegalMoveError`` on an illegal one."""
        scores_before = self.core.scores.copy()
        result = self.core.step(actions)
        rewards = relative_points(result.scores - scores_before)[:, self.core.side_of_seat]
        winner = episode_winner(self.core.episode, result.winner, result.game_winner)
        winner = np.where(result.game_over, winner, -1).astype(np.int8)
        return SelfPlayStep(rewards, result.round_over, result.game_over, winner)
