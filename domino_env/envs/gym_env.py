"""``DominoSoloEnv``: one game as a Gymnasium environment, the learner at one seat.

The other seats are played by opponents: policies (``domino_env.envs.policies``) or
names such as ``"strong"``, ``"pimc"`` or ``"block-2p"`` (a shipped agent), random by
default; seats, opponents, rewards and episodes follow ``domino_env.envs.learner``, the
setting ``DominoVectorEnv`` shares. One game runs on ``engine.game.Game``: the
compiled kernels of the batched core, called the way that is fast at one game.
In short:

* observation: the learner's seat-relative int16 vector (docs/engine.md), so the
  learner is always relative seat 0 whatever its seat;
* action: ``Discrete(28 * ends)``, ``end * 28 + tile``; the legal ones are in
  ``info["action_mask"]`` (int8, Gymnasium's convention) and ``action_masks()``
  (bool, sb3-contrib's ``MaskablePPO`` convention). ``action_space.sample()`` draws
  legal actions;
* an illegal action (an integer that is not legal now) follows ``illegal_action``:
  ``"lose"`` (the default, PettingZoo ``env()``'s convention and what Gymnasium's
  ``check_env`` expects of an env it steps with unmasked samples) ends the episode
  with reward -1, ``info["illegal_action"]`` True and ``outcome`` -1; ``"raise"``
  raises ``IllegalMoveError`` naming the move and the legal ones, and changes
  nothing. An action that is not an integer (a bool, a float) is a ValueError, and
  ``step`` before ``reset`` or after the end a RuntimeError;
* reward ``"points"``: the change in own side's score minus the mean score over
  sides (zero-sum, partners share); ``"win"``: +1 / -1 / 0 when the episode ends;
* an episode is a ``"round"`` or a ``"match"``; it terminates, never truncates.
  The last observation shows the finished table; ``info`` then adds ``outcome``
  (+1 / -1 / 0) and ``points`` (the episode's own-minus-mean points);
* render modes: ``"ansi"`` (the learner's view as text), ``"rgb_array"`` (a
  ``(540, 960, 3)`` picture of the table with only the learner's hand face up, what
  SB3's ``make_vec_env`` asks for) and ``"human"`` (the full text table, printed).

Example::

    env = DominoSoloEnv("all_fives", players=3, learner_seat="random", opponents="strong")
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        obs, reward, done, _, info = env.step(env.action_space.sample(info["action_mask"]))

``reset(options={"deal": record})`` plays the deal of a game record
(``domino_env.tools.records``: hands, boneyard and opener; its moves and scores are
not used); later resets without it deal at random again.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from domino_env.engine.core import action_index
from domino_env.engine.errors import IllegalMoveError
from domino_env.engine.game import Game
from domino_env.engine.observation import observation_fields
from domino_env.engine.outcome import Episode, episode_winner, relative_points
from domino_env.engine.rules import END_NAMES, Rules
from domino_env.engine.tiles import tile_name
from domino_env.envs.learner import (
    LearnerSeat,
    Opponents,
    Reward,
    check_opponents,
    check_setting,
    streams,
)
from domino_env.envs.policies import call_policy
from domino_env.envs.spaces import LegalActions, observation_space
from domino_env.tools.records import round_from_record
from domino_env.tools.render import render_image, render_text

ILLEGAL_ACTIONS = ("lose", "raise")


class DominoSoloEnv(gym.Env[np.ndarray, np.int64]):
    """One game of dominoes; the learner plays one seat. See the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 1}

    def __init__(
        self,
        preset: str = "block",
        players: int | None = None,
        episode: Episode = "round",
        reward: Reward = "points",
        learner_seat: LearnerSeat = 0,
        opponents: Opponents = None,
        render_mode: str | None = None,
        illegal_action: str = "lose",
        **rule_overrides: Any,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}")
        if illegal_action not in ILLEGAL_ACTIONS:
            raise ValueError(
                f"illegal_action must be one of {', '.join(ILLEGAL_ACTIONS)}; got {illegal_action!r}"
            )
        self.illegal_action = illegal_action
        self.rules = Rules.preset(preset, players, **rule_overrides)
        check_setting(self.rules, episode, reward, learner_seat)
        self.render_mode = render_mode
        self.reward_kind = reward
        self.learner_seat = learner_seat
        self._given_opponents = check_opponents(self.rules, opponents)
        self._deal_rng, self._seat_rng, self._opponents = streams(self.rules, None, self._given_opponents)
        self._game = Game(self.rules, episode=episode, seed=self._deal_rng)
        self.observation_space = observation_space(self.rules)
        self.action_space = LegalActions(self.rules.num_actions, self._int8_mask)
        self.seat = 0
        """The learner's seat in the current episode."""
        self._obs = np.zeros(self.observation_space.shape, dtype=np.int16)
        self._mask = np.zeros(self.rules.num_actions, dtype=bool)
        self._reward_due = 0.0
        self._episode_points = 0.0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        options = dict(options or {})
        record = options.pop("deal", None)
        if options:
            raise ValueError(f"unknown reset options {sorted(options)}; the only option is 'deal'")
        if seed is not None:
            self._deal_rng, self._seat_rng, self._opponents = streams(self.rules, seed, self._given_opponents)
        deal = None if record is None else _deal_of_record(self.rules, record)
        while True:
            if deal is None:
                self._game.reset(seed=self._deal_rng if seed is not None else None)
            else:
                self._game.reset(deal=deal[0], opener=deal[1])
            seat = self.learner_seat
            self.seat = int(self._seat_rng.integers(self.rules.players) if seat == "random" else seat)
            before = self._scores()
            self._play_opponents()
            if not self._game.over:
                break
            if deal is not None:
                raise ValueError("the learner never gets to move in this deal: the round ends first")
        self._reward_due = self._episode_points = self._gain(before)
        self._observe()
        if self.render_mode == "human":
            self.render()
        return self._obs.copy(), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if not self._mask.any():
            raise RuntimeError("the episode is over (or never started): call reset() first")
        action = action_index(action, self.rules.num_actions)  # ValueError for bools, floats...
        before = self._scores()
        try:
            self._game.step(action)  # IllegalMoveError, naming the move, before anything changes
        except IllegalMoveError:
            if self.illegal_action == "raise":
                raise
            return self._lose_for_illegal_action()
        self._play_opponents()
        gain = self._gain(before)
        self._episode_points += gain
        terminated = self._game.over
        self._observe()
        info = self._info()
        if self.reward_kind == "points":
            reward, self._reward_due = gain + self._reward_due, 0.0
        else:
            reward = 0.0
        if terminated:
            last = self._game.results[-1]
            winner = episode_winner(self._game.episode, last.winner, last.game_winner)
            info["outcome"] = 0 if winner is None else 1 if winner == self._side else -1
            info["points"] = self._episode_points
            if self.reward_kind == "win":
                reward = float(info["outcome"])
        if self.render_mode == "human":
            self.render()
        return self._obs.copy(), float(reward), terminated, False, info

    def _lose_for_illegal_action(self) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """``illegal_action="lose"``: the episode ends here with -1 for the learner."""
        self._mask = np.zeros_like(self._mask)
        info = self._info()
        info.update(illegal_action=True, outcome=-1, points=self._episode_points)
        if self.render_mode == "human":
            self.render()
        return self._obs.copy(), -1.0, True, False, info

    def action_masks(self) -> np.ndarray:
        """(num_actions,) bool legal actions now (all False once the episode is over)."""
        return self._mask.copy()

    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: the learner's view as text (its hand, the table in order, ends, hand sizes,
        scores); ``"rgb_array"``: the table as a picture, only the learner's hand face up;
        ``"human"``: the full text table, printed."""
        if self.render_mode is None:
            gym.logger.warn("You are calling render method without specifying any render mode.")
            return None
        if self.render_mode == "ansi":
            return describe_observation(self.rules, self._obs)
        table = self._game.reference_round()
        if self.render_mode == "rgb_array":
            return render_image(table, self.seat)
        print(render_text(table, self.seat) + "\n")
        return None

    # -- internals ---------------------------------------------------------------------
    @property
    def _side(self) -> int:
        return self.rules.side_of(self.seat)

    def _scores(self) -> list[int]:
        return list(self._game.scores)

    def _gain(self, before: list[int]) -> float:
        """Change of own side's score minus the mean score since ``before``."""
        return float(relative_points(np.subtract(self._game.scores, before))[self._side])

    def _play_opponents(self) -> None:
        """Opponents move until the learner is to move or the episode is over."""
        game, players = self._game, self.rules.players
        while not game.over and game.to_play != self.seat:
            seat = game.to_play
            policy = self._opponents[(seat - self.seat) % players - 1]
            mask = game.legal_mask().view(bool)
            game.step(int(call_policy(policy, game.observation(seat)[None], mask[None])[0]))

    def _observe(self) -> None:
        self._obs = self._game.observation(self.seat)
        self._mask = self._game.legal_mask().view(bool)

    def _int8_mask(self) -> np.ndarray:
        return self._mask.astype(np.int8)

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self._int8_mask(), "learner_seat": self.seat}


def _deal_of_record(rules: Rules, record: dict) -> tuple[list[int], int | None]:
    """The deal (28 tiles) and opener of a game record, which must be for these rules."""
    rnd = round_from_record(record)
    if rnd.rules != rules:
        raise ValueError(f"the record is for {rnd.rules}, but this environment plays {rules}")
    deal = [t for hand in rnd.hands for t in hand] + rnd.boneyard
    return deal, rnd.opener if "opener" in record else None


def describe_observation(rules: Rules, obs: np.ndarray) -> str:
    """A seat's observation as text; other seats are named by their distance after it (+1, +2, ...)."""
    fields = observation_fields(rules)
    owner, order = obs[fields["tile_owner"]], obs[fields["tile_order"]]

    def who(relative: int) -> str:
        return "you" if relative == 0 else f"+{relative}"

    placed = sorted(np.flatnonzero(order), key=lambda t: order[t])
    table = ", ".join(f"{tile_name(t)} by {who(owner[t] - 2)}" for t in placed) or "empty"
    ends = [f"{END_NAMES[e]} {n}" for e, n in enumerate(obs[fields["end_number"]]) if n >= 0]
    sides = ["your team", "their team"] if rules.teams else [who(k) for k in range(rules.players)]
    lines = [
        f"table: {table}",
        f"ends: {', '.join(ends) or 'none'}",
        f"hand: {' '.join(tile_name(t) for t in np.flatnonzero(owner == 1))}",
        "tiles in hand: " + ", ".join(f"{who(k)} {n}" for k, n in enumerate(obs[fields["hand_size"]])),
        "scores: " + ", ".join(f"{s} {n}" for s, n in zip(sides, obs[fields["scores"]], strict=True)),
    ]
    return "\n".join(lines)
