"""
# Dominoes (double six)

| Import             | `from domino_env.envs.pettingzoo_env import env`                        |
|--------------------|--------------------------------------------------------------------|
| Registry           | `pettingzoo.make("aec", "domino_rl/dominoes_v0")`                  |
| Actions            | Discrete                                                           |
| Parallel API       | Yes, turn-based: `parallel_env(...)`                               |
| Manual Control     | No                                                                 |
| Agents             | `agents = ['player_0', ..., 'player_{n-1}']`                       |
| Agents             | 2, 3 or 4 (per preset)                                             |
| Action Shape       | (1,)                                                               |
| Action Values      | Discrete(28 * E): E = 2 ends (left, right), 4 with a spinner       |
| Observation Shape  | `{"observation": (95 + 8P + S,), "action_mask": (28 * E,)}`        |
| Observation Values | int16 per field (table below); mask 0/1 int8                       |

Double-six dominoes under any rule system of `domino_env.Rules` (presets `muggins`,
`idrd_draw`, `idrd_block`, `spanish_pairs`, `partnership`, `draw`, `block`,
`all_fives`; every rule field can be overridden). The 28 tiles are dealt face down;
seats take turns placing a tile whose number matches an open end of the line
(doubles lie crosswise). A seat that holds a fitting tile must play one; a seat that
cannot play draws (draw presets) or passes (block presets): draws and passes happen
inside the env, so an agent is only asked to act when it has a legal play. A round
ends when a seat places its last tile ("domino") or nobody can play ("blocked"; some
presets also end "closed" rounds or stop at the target mid-round). The round winner
scores points by the preset's rule; a game is rounds played to the target. The full
rulebook is RULES.md; the conventions (action encoding, spinner, fives count, order
of events) are docs/engine.md.

### Arguments

``` python
env(preset="block", players=None, episode="round", reward="points",
    skip_forced=False, render_mode=None, opponents=None, learners=None, **rule_overrides)
```

* `preset`: rule system name; `players`: seat count (default: the preset's smallest).
* `episode`: `"round"` (one round per episode) or `"match"` (rounds to the target,
  the preset's opener rotation and carried scores).
* `reward`: `"points"` or `"win"` (see Rewards).
* `skip_forced`: a seat with exactly one legal action has it played automatically and
  is not asked; the observations show the result. It changes no outcome, only how
  many decisions agents see. (A forced opening tile, e.g. `partnership`'s 6-6, is such
  a move.) In the rare deal where forced moves alone finish the episode, `reset`
  returns with every agent terminated.
* `render_mode`: `"ansi"`, `"rgb_array"` or `"human"`.
* `opponents`: bots at the other seats, for a single-agent learner. `None` (the
  default): every agent is played from outside. Otherwise every seat but the
  `learners`' (default `"player_0"`; an agent name or a list of them) is played by
  an opponent as soon as it is to move, so `agent_iter()` yields only the learners:
  one policy or name for every other seat (`"strong"`, `"pimc"`, `"random"`, a
  shipped agent such as `"block-2p"`, a checkpoint file: what `agents.load_policy`
  reads), or a list, one per other seat in play order after the first learner.
  Rewards are unchanged: a learner's `last()` reward includes what it got during the
  opponents' moves. See `domino_env.envs.seated.OpponentsWrapper`.
* `rule_overrides`: any `Rules` field, e.g. `target=50`, `hand_size=5`.

### Observation Space

A dict: `"observation"` is the seat's int16 vector of exactly the public information
(RULES.md section 4), seat-relative (relative seat k = the seat k places after the
observer; for teams the observer's team comes first). `P` players, `S` scoring sides
(2 teams, else P). Offsets for any rules: `domino_env.engine.observation.observation_fields`.

| offset | size | field | values |
|---|---|---|---|
| 0 | 28 | tile owner (tiles 0-0, 0-1, ... 6-6) | 0 unseen, 1 own hand, 2+k placed by relative seat k |
| 28 | 7P | known-missing numbers: index 7k+n | 1 when relative seat k is known not to hold n |
| 28+7P | S | game scores per relative side (this round's fives included) | int16 |
| 28+7P+S | 1 | relative seat of this round's opener | 0..P-1 |
| 29+7P+S | 28 | tile end | 0 not on table, 1 opening tile, 2 left, 3 right, 4 up, 5 down |
| 57+7P+S | 28 | tile order | 0 not on table, else 1 + placement index this round |
| 85+7P+S | 4 | end number: left, right, up, down | -1 not open, else 0..6 |
| 89+7P+S | 4 | end double | 1 when the outer tile of that end is a double |
| 93+7P+S | 1 | draw-pile size | 0 in block presets |
| 94+7P+S | P | hand size per relative seat | |
| 94+8P+S | 1 | relative seat to move | -1 once the episode is over |

Size 95 + 8P + S: 113 for 2 players, 122 for 3, 131 for 4, 129 for 4 in teams.
`"action_mask"` marks the legal actions of the agent to move (all zeros for the
others). The observation space is the same object on every call.

### Action Space

`action = end * 28 + tile`, ends 0 left, 1 right, 2 up, 3 down (the spinner's short
sides, only in spinner presets). The opening move is action `tile` and lays the tile
with its high number on the left. `env.unwrapped.action_to_move(a)` gives `"6-3:right"`
(a bare `"6-3"` for an opening move); `env.unwrapped.move_to_action("6-3:right")` the
action.

### Rewards

Rewards arrive when a round ends (every agent gets one, accumulated PettingZoo-style
in `_cumulative_rewards` and returned by `last()`).

* `reward="points"`: with `points[side]` the round points of each side (fives scored
  in the round + the winner's end points), every seat gets
  `points[its side] - mean(points over sides)`. Partners share their team's value.
  The rewards of a round sum to zero over the seats. In match mode every round pays out.
* `reward="win"`: at the end of the episode only: +1 to each seat of the winning side,
  -1 to every other seat; 0 to all when nobody wins (a round void by a tie). The winner
  is the round winner (`episode="round"`) or the game winner (`episode="match"`).
* An illegal action through `env()` ends the episode, as PettingZoo's
  `TerminateIllegalWrapper` does: the offender gets -1, everybody else 0. (`env()` does
  natively what PettingZoo's three usual wrappers do, `OrderEnforcingWrapper`,
  `AssertOutOfBoundsWrapper` and `TerminateIllegalWrapper`, with the same behaviour and
  at nearly the speed of `raw_env`; see `checked_env`.) Through `raw_env` it raises
  `domino_env.IllegalMoveError` naming the move, the seat and the legal moves.
  Through either, an action that is not an integer (a bool, a float) raises ValueError
  (NumPy integers are fine), and `step` before `reset` raises an error saying so. Once
  every agent has been stepped out with `None`, a further `step(None)` only warns, as
  PettingZoo's `OrderEnforcingWrapper` does.

Terminations: every agent terminates when the episode ends. There are no truncations
(every round is finite), except that an illegal move through `env()` marks every agent
both terminated and truncated, as `TerminateIllegalWrapper` does.

### Rendering

`"ansi"` returns the text picture of the table (`domino_env.tools.render.render_text`): the
line of play with doubles crosswise, spinner arms, open ends, each seat's hand size,
the viewer's hand, scores. `"rgb_array"` returns an HxWx3 uint8 image of the same
table with pips. `"human"` prints the ansi picture to the terminal (no window is
opened, so it works on headless machines). The viewer is the seat to move (every hand
is shown once the episode is over); set `env.unwrapped.render_viewer` to a seat
number to follow one seat, or to `"all"` to show every hand.

### Parallel API

`parallel_env(...)` is PettingZoo's turn-based wrapper of `env(...)` (`TurnBasedParallelEnv`):
each `step(actions)` uses only the action of the agent to move (the one whose `action_mask` is not all zeros;
`infos[agent]["active_agent"]` names the next one). PettingZoo's generic
`aec_to_parallel` needs every agent to act once per cycle, which a game with passes
breaks, so `metadata["is_parallelizable"]` is False: use `parallel_env`.

### Resetting from a record

`env.reset(seed=..., options={"deal": record})` starts from a replay record
(`domino_env.tools.records`: hands, boneyard, opener, scores and moves); its moves are
replayed, so the env continues from the recorded position. The record's rules must
match the env's; its moves must leave the round unfinished. Other option keys are
ignored. `env.unwrapped.game.round_record()` writes the current round as a record.

### Usage

``` python
from domino_env.envs.pettingzoo_env import env as dominoes_env

env = dominoes_env(preset="all_fives", players=3, render_mode="ansi")
env.reset(seed=42)
for agent in env.agent_iter():
    observation, reward, termination, truncation, info = env.last()
    if termination or truncation:
        action = None
    else:
        action = env.action_space(agent).sample(observation["action_mask"])
    env.step(action)
env.close()
```

### Version History

* v0: Initial release.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.conversions import turn_based_aec_to_parallel_wrapper
from pettingzoo.utils.env import AECIterable, AECIterator
from pettingzoo.utils.env_logger import EnvLogger

from domino_env.engine.core import action_index
from domino_env.engine.game import Game
from domino_env.engine.outcome import Episode, check_episode, episode_winner, relative_points_of
from domino_env.engine.reference import RoundResult
from domino_env.engine.rules import Rules
from domino_env.envs.learner import Opponents
from domino_env.envs.seated import OpponentsWrapper
from domino_env.envs.spaces import observation_bounds
from domino_env.tools.render import render_image, render_text

REWARDS = ("points", "win")
ILLEGAL_REWARD = -1
ENV_ID = "domino_rl/dominoes_v0"


def env(
    opponents: Opponents = None, learners: str | Sequence[str] | None = None, **kwargs: Any
) -> checked_env | OpponentsWrapper:
    """The AEC env with what PettingZoo's usual wrappers check, done natively (``checked_env``); with
    ``opponents``, wrapped so that they play every seat but the ``learners``' (``OpponentsWrapper``)."""
    if opponents is None:
        if learners is not None:
            raise ValueError("learners= says which agents the opponents leave free: give opponents= too")
        return checked_env(**kwargs)
    return OpponentsWrapper(checked_env(**kwargs), opponents, "player_0" if learners is None else learners)


class TurnBasedParallelEnv(turn_based_aec_to_parallel_wrapper):
    """PettingZoo's turn-based parallel wrapper, saying which action a ``step`` lacks: the agent to
    move is in ``infos[agent]["active_agent"]``, and a dict without its action was a bare KeyError."""

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        mover = self.aec_env.agent_selection
        if self.agents and (not isinstance(actions, dict) or mover not in actions):
            given = sorted(actions) if isinstance(actions, dict) else type(actions).__name__
            raise ValueError(
                f"step(actions): no action for {mover!r}, the agent to move "
                f"(infos[agent]['active_agent']); got {given}"
            )
        return super().step(actions)


def parallel_env(**kwargs: Any) -> ParallelEnv:
    """The turn-based parallel form: each step takes the action of the agent to move only."""
    return TurnBasedParallelEnv(env(**kwargs))


class raw_env(AECEnv, EzPickle):
    """Dominoes as a PettingZoo AEC env; the module docstring is its documentation."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "dominoes_v0",
        "is_parallelizable": False,
        "render_modes": ["ansi", "rgb_array", "human"],
        "render_fps": 2,
    }

    def __init__(
        self,
        preset: str = "block",
        players: int | None = None,
        episode: Episode = "round",
        reward: Literal["points", "win"] = "points",
        skip_forced: bool = False,
        render_mode: Literal["ansi", "rgb_array", "human"] | None = None,
        **rule_overrides: Any,
    ) -> None:
        EzPickle.__init__(self, preset, players, episode, reward, skip_forced, render_mode, **rule_overrides)
        super().__init__()
        check_episode(episode)
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}; got {reward!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            modes = ", ".join(self.metadata["render_modes"])
            raise ValueError(f"render_mode must be None or one of {modes}; got {render_mode!r}")
        self.rules = Rules.preset(preset, players, **rule_overrides)
        self.episode = episode
        self.reward_kind = reward
        self.skip_forced = bool(skip_forced)
        self.render_mode = render_mode
        self.render_viewer: int | str | None = None
        """None: the seat to move (every hand once the episode is over); a seat; or "all"."""
        self.game = Game(self.rules, episode)
        self.possible_agents = [f"player_{seat}" for seat in range(self.rules.players)]
        self.agents = self.possible_agents[:]
        self._seat = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        self._side_seats = [
            [s for s in range(self.rules.players) if self.rules.side_of(s) == side]
            for side in range(self.rules.num_sides)
        ]
        low, high = observation_bounds(self.rules)
        num_actions = self.rules.num_actions
        observation_space = spaces.Dict(
            {
                "observation": spaces.Box(low, high, dtype=np.int16),
                "action_mask": spaces.Box(0, 1, (num_actions,), dtype=np.int8),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, observation_space)
        self.action_spaces = {agent: spaces.Discrete(num_actions) for agent in self.possible_agents}
        self._num_actions = num_actions
        self._no_actions = np.zeros(num_actions, dtype=np.int8)
        self.decisions = 0
        """Actions agents were asked for since the last reset (forced moves skipped are not counted)."""
        self._has_reset = False

    # -- spaces ------------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # -- the AEC loop ---------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """A new episode: a random deal, or ``options={"deal": record}`` (see the module docstring)."""
        options = dict(options or {})
        record = options.pop("deal", None)
        if options:  # warned, not refused: PettingZoo's api_test resets with options={"options": 1}
            warnings.warn(
                f"unknown reset options {sorted(options)} ignored; the only option is 'deal'", stacklevel=2
            )
        if record is None:
            self.game.reset(seed)
        else:
            self.game.reset_from_record(record, seed)
        self._has_reset = True
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self.agent_selection = self.possible_agents[self.game.to_play]
        self._skip_agent_selection = None
        self.decisions = 0
        self._settle(self._play_forced())

    def step(self, action: int | None) -> None:
        """The agent to move plays ``action``; forced draws, passes (and moves) follow."""
        if not self._has_reset:
            raise RuntimeError("call reset() before step()")
        if not self.agents:  # every agent has been stepped out: what OrderEnforcingWrapper does
            if action is not None:
                raise ValueError(f"action {action!r}: the episode is over; call reset() to start another")
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} is to move and must give an action, not None")
        self._play(agent, action_index(action, self._num_actions))

    def _play(self, agent: str, action: int) -> None:
        """``agent``, alive and to move, plays the integer ``action``."""
        end = self.game.step(action)  # raises IllegalMoveError before anything changes
        self.decisions += 1
        self._cumulative_rewards[agent] = 0.0
        self._settle(([] if end is None else [end]) + self._play_forced())
        if self.render_mode == "human":
            self.render()

    def _play_forced(self) -> list[RoundResult]:
        """With ``skip_forced``: play every move that is the only legal one."""
        ends: list[RoundResult] = []
        game = self.game
        while self.skip_forced and not game.over and len(game.legal_actions()) == 1:
            end = game.step(game.legal_actions()[0])
            if end is not None:
                ends.append(end)
        return ends

    def _settle(self, ends: list[RoundResult]) -> None:
        """Rewards of the rounds that ended, terminations, and the next agent."""
        if ends or any(self.rewards.values()):
            self.rewards = dict.fromkeys(self.agents, 0.0)
            for end in ends:
                self._reward(end)
            self._accumulate_rewards()
        if self.game.over:
            self.terminations = dict.fromkeys(self.agents, True)
            self._deads_step_first()
        else:
            self.agent_selection = self.possible_agents[self.game.to_play]

    def _reward(self, end: RoundResult) -> None:
        """Add one finished round's rewards (module docstring, Rewards) to ``self.rewards``."""
        if self.reward_kind == "points":
            relative = relative_points_of(end.points)
            for side, seats in enumerate(self._side_seats):
                for seat in seats:
                    self.rewards[self.possible_agents[seat]] += relative[side]
            return
        if self.episode == "match" and not end.game_over:
            return
        winner = episode_winner(self.episode, end.winner, end.game_winner)
        if winner is None:
            return
        for side, seats in enumerate(self._side_seats):
            for seat in seats:
                self.rewards[self.possible_agents[seat]] += 1.0 if side == winner else -1.0

    def last(self, observe: bool = True) -> tuple:
        """PettingZoo's ``last``, with a clear error before the first ``reset``."""
        if not self._has_reset:
            raise RuntimeError("call reset() before last()")
        return self._last(observe)

    def _last(self, observe: bool) -> tuple:
        """``AECEnv.last`` with one ``agent_selection`` lookup instead of two."""
        agent = self.agent_selection
        assert agent is not None
        return (
            self.observe(agent) if observe else None,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if not self._has_reset:
            raise RuntimeError("call reset() before observe()")
        seat = self._seat[agent]
        return {"observation": self.game.observation(seat), "action_mask": self._mask(seat)}

    def _mask(self, seat: int) -> np.ndarray:
        """The action mask in ``seat``'s observation: its legal actions when it is to move, else zeros."""
        if seat == self.game.to_play:  # None once the game is over
            return self.game.legal_mask()
        return self._no_actions.copy()

    # -- moves in record notation ------------------------------------------------------------
    def action_to_move(self, action: int) -> str:
        """``"6-3:right"``; a bare ``"6-3"`` for an opening move."""
        return self.game.action_to_move(action)

    def move_to_action(self, move: str) -> int:
        """The action of a move such as ``"6-3:right"`` (a bare tile: the opening or its only end)."""
        return self.game.move_to_action(move)

    # -- rendering -------------------------------------------------------------------------------
    def render(self) -> str | np.ndarray | None:
        """The table as text (ansi), an image (rgb_array), or printed to the terminal (human)."""
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        table = self.game.reference_round()
        viewer = self._viewer()
        if self.render_mode == "rgb_array":
            return render_image(table, viewer)
        text = render_text(table, viewer)
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None

    def _viewer(self) -> int | None:
        """The seat whose hand is drawn face up (None: every hand)."""
        if self.render_viewer == "all":
            return None
        if self.render_viewer is not None:
            return int(self.render_viewer)
        return self.game.to_play

    def close(self) -> None:
        """Nothing to release: rendering opens no window."""


#: Attributes that ``checked_env`` refuses before ``reset`` (as ``OrderEnforcingWrapper`` does).
BEFORE_RESET = frozenset(
    ("rewards", "terminations", "truncations", "infos", "agent_selection", "num_agents", "agents")
)


class checked_env(raw_env):
    """``raw_env`` with PettingZoo's three usual wrappers done natively: what ``env()`` returns.

    It behaves as ``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(TerminateIllegalWrapper(
    raw_env(...), illegal_reward=-1)))`` does (tests/test_env_wrappers.py holds them equal),
    at the speed of ``raw_env``, since no call goes through ``BaseWrapper.__getattr__``:

    * order (``OrderEnforcingWrapper``): before the first ``reset``, ``step``, ``observe``,
      ``render``, ``state`` and ``agent_iter`` raise AssertionError and the attributes
      ``agents``, ``rewards``, ``terminations``, ``truncations``, ``infos``,
      ``agent_selection`` and ``num_agents`` raise AttributeError; a ``step`` once every
      agent has been stepped out only warns (``EnvLogger``); ``agent_iter`` asserts that each
      iteration steps or resets.
    * bounds (``AssertOutOfBoundsWrapper``): an integer action outside ``0..n-1`` raises
      AssertionError; first, an action that is not an integer (a bool, a float, None for a
      live agent) raises ValueError, naming the action and the range.
    * illegal moves (``TerminateIllegalWrapper``): an action the mask of the mover's last
      observation rules out ends the episode: a warning, every agent terminated *and*
      truncated, reward -1 to the mover and 0 to the others, infos unchanged.

    Beyond the wrappers: ``unwrapped`` is the env itself (there is no wrapper chain, so
    ``env.unwrapped.step`` checks too), the private attributes that exist can be read (the
    wrappers refused every private name but ``_cumulative_rewards``), and a pickled copy is
    a new env to reset, like ``raw_env``'s (the wrappers' copy kept their reset flag).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        del self.agents  # refused until reset, as every name of BEFORE_RESET
        self._reset_called = False  # OrderEnforcingWrapper's _has_reset: set even if reset fails
        self._has_updated = False  # a step or a reset since the last agent_iter iteration
        self._prev_obs: dict[str, np.ndarray] | None = None  # the mover's last observation

    def __getattr__(self, name: str) -> Any:
        """Only for names not found: the errors the wrappers give for them."""
        if name in BEFORE_RESET and not self.__dict__.get("_reset_called", False):
            raise AttributeError(f"{name} cannot be accessed before reset")
        if name.startswith("_") and name != "_cumulative_rewards":
            raise AttributeError(f"accessing private attribute '{name}' is prohibited")
        raise AttributeError(f"'raw_env' object has no attribute '{name}'")

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if not self._reset_called:
            self.agents = self.possible_agents[:]  # what raw_env holds should its reset fail
        self._reset_called = True
        self._has_updated = True
        self._prev_obs = None
        super().reset(seed=seed, options=options)

    def step(self, action: Any) -> None:
        if not self._reset_called:
            EnvLogger.error_step_before_reset()
        self._has_updated = True
        if not self.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = self.agent_selection
        dead = self.terminations[agent] or self.truncations[agent]
        if action is None and dead:
            self._prev_obs = None
            self._was_dead_step(None)
            return
        num_actions = self._num_actions
        index = action_index(action, num_actions)
        assert 0 <= index < num_actions, (
            f"action {index} is not in action space Discrete({num_actions}): actions are 0..{num_actions - 1}"
        )
        observation, self._prev_obs = self._prev_obs, None
        if dead:
            self._was_dead_step(index)  # raises: a dead agent's only action is None
            return
        mask = self._mask(self._seat[agent]) if observation is None else observation["action_mask"]
        if mask[index]:
            self._play(agent, index)
        else:
            self._terminate_illegal(agent)

    def _terminate_illegal(self, agent: str) -> None:
        """What TerminateIllegalWrapper does on an illegal move (its ``_terminated`` flag only
        picks between two calls that do the same, so it is not kept)."""
        EnvLogger.warn_on_illegal_move()
        self._cumulative_rewards[agent] = 0
        self.terminations = dict.fromkeys(self.agents, True)
        self.truncations = dict.fromkeys(self.agents, True)
        self.rewards = dict.fromkeys(self.truncations, 0)
        self.rewards[agent] = float(ILLEGAL_REWARD)
        self._accumulate_rewards()
        self._deads_step_first()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if not self._reset_called:
            EnvLogger.error_observe_before_reset()
        observation = raw_env.observe(self, agent)
        if agent == self.agent_selection:
            self._prev_obs = observation  # its mask decides whether the next action is legal
        return observation

    def last(self, observe: bool = True) -> tuple:
        return self._last(observe)  # before reset, agent_selection raises as PettingZoo's wrappers do

    def render(self) -> str | np.ndarray | None:
        if not self._reset_called:
            EnvLogger.error_render_before_reset()
        return super().render()

    def state(self) -> np.ndarray:
        if not self._reset_called:
            EnvLogger.error_state_before_reset()
        return super().state()

    def agent_iter(self, max_iter: int = 2**63) -> AECIterable:
        if not self._reset_called:
            EnvLogger.error_agent_iter_before_reset()
        return _OrderedIterable(self, max_iter)


class _OrderedIterable(AECIterable):
    def __iter__(self) -> AECIterator:
        return _OrderedIterator(self.env, self.max_iter)


class _OrderedIterator(AECIterator):
    """``AECOrderEnforcingIterator`` for ``checked_env``."""

    def __next__(self) -> str:
        agent = super().__next__()
        assert self.env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        self.env._has_updated = False
        return agent


def _register() -> None:
    """Make ``pettingzoo.make("aec" | "parallel", ENV_ID)`` work once this module is imported."""
    try:
        from pettingzoo import register  # older PettingZoo versions have no registry
    except ImportError:
        return
    register("aec", ENV_ID, entry_point=f"{__name__}:env")
    register("parallel", ENV_ID, entry_point=f"{__name__}:parallel_env")


_register()
