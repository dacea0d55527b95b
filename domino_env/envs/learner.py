"""The learner-versus-opponents setting shared by ``DominoSoloEnv`` and ``DominoVectorEnv``.

One seat of each game is the learner's, driven from outside (one action per
decision); opponent policies play every other seat. Both environments follow
these definitions (one game on ``game.Game``, many on the batched core), and
the tests hold them to the same results.

* **Seats.** ``learner_seat`` is a seat number, or ``"random"`` for a seat drawn
  uniformly for every episode. ``opponents`` is one opponent for every other
  seat, or a list of ``players - 1`` in play order after the learner
  (``opponents[0]`` plays the seat after it; with teams ``opponents[1]`` is the
  partner); ``None`` is a seeded ``random_policy``. An opponent is a policy, or a
  name (``OpponentSpec``). Policies keep the contract of ``domino_env.envs.policies``:
  they see only their own seat-relative observation and legal mask. After a learner
  move the opponents play until the learner is to move again or the episode ends;
  draws and passes are automatic, so a learner without a legal play never sees a
  decision.
* **Named opponents.** A name is anything ``agents.load_policy`` reads: a bot
  (``"strong"``, ``"pimc"``...), a shipped agent (``"block-2p"``), a checkpoint file,
  a ``module:attribute`` path. ``"random"`` is ``random_policy`` itself (the vector
  env plays it inside the core). A name is one policy however many seats it plays
  (one batched call per round trip). Bots draw from a seed of the env's seed: they are
  built again at every seeded reset, so ``reset(seed=s)`` replays the same games.
  Everything else ``load_policy`` reads plays deterministically (greedy networks, SB3's
  deterministic action, imported objects): it is loaded once, when the env is made,
  which is also when a bad name, or an agent trained for other rules, is a ValueError.
  The agents package is imported only then: ``domino_env`` stands without it.
* **Rewards.** ``"points"``: after each learner move, the change in
  ``own side's score - mean score over sides`` up to its next decision. Fives
  count when scored and end-of-round points when the round ends, so an
  episode's rewards add up to the learner's side's points minus the mean over
  sides: zero-sum over sides, and partners get the same. ``"win"``: at the
  episode's end +1 if the learner's side won it, -1 if another side did, 0 if
  nobody did (a void or tied round).
* **Episodes.** ``"round"`` or ``"match"`` (rounds to the target); they
  terminate, never truncate. Points scored before the learner's first decision
  (an opponent opening with 5-5 in all fives) are paid with its first reward.
  An episode in which the learner never gets to move has no decision to learn
  from and is skipped (with a chosen deal, that is an error).
* **Seeding.** One seed gives independent streams for the deals, the learner's
  seats and the opponents: the default random one, and named bots (``streams``).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import Literal

import numpy as np

from domino_env.engine.outcome import check_episode
from domino_env.engine.rules import Rules
from domino_env.envs.policies import Policy, random_policy

Reward = Literal["points", "win"]
LearnerSeat = int | Literal["random"]
OpponentSpec = Policy | str
"""An opponent: a policy, or a name ``agents.load_policy`` reads (module docstring, Named opponents)."""
Opponents = OpponentSpec | Sequence[OpponentSpec] | None
"""What ``opponents=`` takes: one opponent for every other seat, one per other seat, or None."""
RANDOM = "random"
"""The name played by ``random_policy`` without the agents package."""


def check_setting(rules: Rules, episode: str, reward: str, learner_seat: LearnerSeat) -> None:
    """Raise ValueError naming a bad episode kind, reward kind or learner seat."""
    check_episode(episode)
    if reward not in ("points", "win"):
        raise ValueError(f"reward must be 'points' or 'win', got {reward!r}")
    if learner_seat == "random":
        return
    seat = learner_seat
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < rules.players:
        raise ValueError(f"learner_seat must be a seat 0 to {rules.players - 1} or 'random', got {seat!r}")


def check_opponents(
    rules: Rules, opponents: Opponents, seats: int | None = None
) -> list[OpponentSpec] | None:
    """One opponent per other seat (``seats`` of them, ``players - 1`` by default) in play order after
    the learner, or None for a seeded random one. Names are checked now; those that take no seed are
    loaded now too (module docstring), and bot names stay names for ``streams`` to seed."""
    if opponents is None:
        return None
    count = rules.players - 1 if seats is None else seats
    if callable(opponents) or isinstance(opponents, str):
        specs = [opponents] * count
    else:
        specs = list(opponents) if isinstance(opponents, Iterable) else []
    if len(specs) != count or not all(callable(s) or isinstance(s, str) for s in specs):
        raise ValueError(
            f"opponents must be a policy or a name, or a list of {count} of them (one per other seat, in "
            f"play order after the learner), got {opponents!r}"
        )
    loaded: dict[str, Policy] = {}
    for name in dict.fromkeys(s for s in specs if isinstance(s, str)):
        if name != RANDOM and name not in _registry().BOTS:
            loaded[name] = _load(rules, name, 0)
    return [loaded.get(spec, spec) if isinstance(spec, str) else spec for spec in specs]


def streams(
    rules: Rules, seed: int | None, opponents: list[OpponentSpec] | None
) -> tuple[np.random.Generator, np.random.Generator, list[Policy]]:
    """Independent generators for deals and learner seats, and the opponents (random ones and bots seeded)."""
    deal_seq, seat_seq, opponent_seq = np.random.SeedSequence(seed).spawn(3)
    if opponents is None:
        policies = [random_policy(np.random.default_rng(opponent_seq))] * (rules.players - 1)
    else:
        policies = seeded_opponents(rules, opponents, opponent_seq)
    return np.random.default_rng(deal_seq), np.random.default_rng(seat_seq), policies


def seeded_opponents(
    rules: Rules, opponents: list[OpponentSpec], seeds: np.random.SeedSequence
) -> list[Policy]:
    """``check_opponents``' list as policies: each distinct name built once, from a seed of ``seeds``."""
    names = list(dict.fromkeys(spec for spec in opponents if isinstance(spec, str)))
    built = {
        name: _load(rules, name, int(child.generate_state(1)[0]))
        for name, child in zip(names, seeds.spawn(len(names)), strict=True)
    }
    return [built[spec] if isinstance(spec, str) else spec for spec in opponents]


def _load(rules: Rules, name: str, seed: int) -> Policy:
    """The policy ``name`` stands for, for these rules; a ValueError names the opponent."""
    if name == RANDOM:
        return random_policy(seed)
    try:
        return _registry().load_policy(name, rules, seed=seed)
    except ValueError as error:
        raise ValueError(f"opponent {name!r}: {error}") from None


def _registry() -> ModuleType:
    """``agents.bots.registry``, imported by name when an opponent is named: ``domino_env`` never imports
    the agents package, which builds on it (tests/test_layout.py), but hands it the names it reads."""
    try:
        return importlib.import_module("agents.bots.registry")
    except ImportError as error:
        raise ValueError(f"named opponents need the agents package, which did not import: {error}") from None


def outcome(winner: np.ndarray, own_side: np.ndarray) -> np.ndarray:
    """+1 where the learner's side won, -1 where another side did, 0 where nobody did (winner -1)."""
    return np.where(winner < 0, 0, np.where(winner == own_side, 1, -1)).astype(np.int8)
