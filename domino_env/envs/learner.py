"""The learner-versus-opponents setting shared by ``DominoSoloEnv`` and ``DominoVectorEnv``.

One seat of each game is the learner's, driven from outside (one action per
decision); opponent policies play every other seat. Both environments follow
these definitions (one game on ``game.Game``, many on the batched core), and
the tests hold them to the same results.

* **Seats.** ``learner_seat`` is a seat number, or ``"random"`` for a seat drawn
  uniformly for every episode. ``opponents`` is one policy for every other
  seat, or a list of ``players - 1`` policies in play order after the learner
  (``opponents[0]`` plays the seat after it; with teams ``opponents[1]`` is the
  partner); ``None`` is a seeded ``random_policy``. Policies keep the contract
  of ``domino_env.envs.policies``: they see only their own seat-relative observation
  and legal mask. After a learner move the opponents play until the learner is
  to move again or the episode ends; draws and passes are automatic, so a
  learner without a legal play never sees a decision.
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
  seats and the default opponents (``streams``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from domino_env.engine.outcome import check_episode
from domino_env.engine.rules import Rules
from domino_env.envs.policies import Policy, random_policy

Reward = Literal["points", "win"]
LearnerSeat = int | Literal["random"]


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


def check_opponents(rules: Rules, opponents: Policy | Sequence[Policy] | None) -> list[Policy] | None:
    """One policy per other seat in play order after the learner, or None for seeded random ones."""
    if opponents is None:
        return None
    if callable(opponents):
        return [opponents] * (rules.players - 1)
    policies = list(opponents)
    if len(policies) != rules.players - 1 or not all(callable(p) for p in policies):
        raise ValueError(
            f"opponents must be a policy or a list of {rules.players - 1} policies (one per other seat, "
            f"in play order after the learner), got {opponents!r}"
        )
    return policies


def streams(
    rules: Rules, seed: int | None, opponents: list[Policy] | None
) -> tuple[np.random.Generator, np.random.Generator, list[Policy]]:
    """Independent generators for deals and learner seats, and the opponents (random ones seeded)."""
    deal_seq, seat_seq, opponent_seq = np.random.SeedSequence(seed).spawn(3)
    if opponents is None:
        opponents = [random_policy(np.random.default_rng(opponent_seq))] * (rules.players - 1)
    return np.random.default_rng(deal_seq), np.random.default_rng(seat_seq), opponents


def outcome(winner: np.ndarray, own_side: np.ndarray) -> np.ndarray:
    """+1 where the learner's side won, -1 where another side did, 0 where nobody did (winner -1)."""
    return np.where(winner < 0, 0, np.where(winner == own_side, 1, -1)).astype(np.int8)
