"""Heuristic bots: each scores every legal move of a batch from the observation alone.

All of them are vectorised over the batch (``features.Moves`` holds one entry
per legal action of every row) and deterministic: ties go to the lowest action
index, so a duplicate run of two heuristic bots is a pure function of the deals.
In the arena ``random`` is one too, of the deals and the arena's seed: it draws each move
from a seed of that game and decision (``RandomBot.act_seeded``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from agents.bots.features import Board, Moves
from domino_env.engine.rules import Rules
from domino_env.envs.policies import sample_legal, sample_legal_seeded

FEATURES = (
    "pips",
    "double",
    "variety",
    "held_numbers",
    "follow",
    "next_options",
    "next_blocked",
    "lock",
    "blocked_margin",
    "partner_blocked",
    "fives_now",
    "fives_threat",
    "domino",
)
"""What ``strong`` weighs: ``Moves`` features of the same name (``next_options`` is ``options(1)``)."""


class RandomBot:
    """Plays a uniformly random legal move: the floor every other bot must clear.

    Called plainly it draws from its own generator; the arena calls ``act_seeded`` with a
    seed per game and decision instead, so that a game's moves do not depend on which
    other games share the call (batching, Ray shards).
    """

    name = "random"

    def __init__(self, rules: Rules, seed: int | None = None) -> None:
        self.rules = rules
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return sample_legal(mask, self.rng)

    def act_seeded(self, obs: np.ndarray, mask: np.ndarray, seeds: np.ndarray) -> np.ndarray:
        """Row i's move drawn from ``seeds[i]`` (uint64) alone."""
        return sample_legal_seeded(mask, seeds)


class ScoringBot(ABC):
    """A bot that gives every legal move a score and plays the best one."""

    name = "scoring"

    def __init__(self, rules: Rules, seed: int | None = None) -> None:
        self.rules = rules

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        moves = Moves(Board(self.rules, obs), mask)
        return moves.best(self.score(moves))

    @abstractmethod
    def score(self, moves: Moves) -> np.ndarray:
        """(L,) score of every legal move (``moves`` entries); higher is better."""


class HeaviestBot(ScoringBot):
    """ "Bota gorda": play the heaviest tile, so that the pips left in hand are as few as
    possible whenever the round blocks or the opponent dominoes."""

    name = "heaviest"

    def score(self, moves: Moves) -> np.ndarray:
        return moves.pips


class DoublesBot(ScoringBot):
    """Doubles first (they fit only one number, so they are the tiles most likely to be
    stranded), then the heaviest tile."""

    name = "doubles"

    def score(self, moves: Moves) -> np.ndarray:
        return 100.0 * moves.double + moves.pips


class DiverseBot(ScoringBot):
    """Keep variety: play so that the hand still holds as many different numbers as
    possible (fewer turns with no playable tile); among those moves shed the heaviest
    tile, and at equal weight play the tile whose numbers we hold most of (we have
    spares of them). Measured: ranking "most held" before weight loses to random in
    draw games, so weight comes first."""

    name = "diverse"

    def score(self, moves: Moves) -> np.ndarray:
        return 1000.0 * moves.variety + 10.0 * moves.pips + moves.held_numbers


class BlockerBot(ScoringBot):
    """Use what the table tells about the others: leave ends the next opponent cannot
    play (it is known to lack those numbers, from its passes and draws, or every tile
    carrying them is visible to us), otherwise as few tiles it may play as possible; in
    team games never leave ends our partner surely cannot play. Ties: the heaviest."""

    name = "blocker"

    def score(self, moves: Moves) -> np.ndarray:
        return (
            1000.0 * moves.next_blocked
            - 2000.0 * (moves.partner_blocked & ~moves.domino)
            - 10.0 * moves.options(1)
            + moves.pips
        )


class FivesBot(ScoringBot):
    """All Fives / muggins: take the largest immediate score and avoid leaving the next
    player a multiple of five it may be able to make (score minus the best threat it
    may hold); ties: the heaviest tile."""

    name = "fives"

    def score(self, moves: Moves) -> np.ndarray:
        return 10.0 * (moves.fives_now - moves.fives_threat) + 0.1 * moves.pips


def family(rules: Rules) -> str:
    """The weight family of a rule system: fives scoring, teams, drawing or blocking."""
    if rules.fives:
        return "fives"
    if rules.teams:
        return "teams"
    return "draw" if rules.drawing else "block"


# Tuned in the duplicate arena: scripts/tune_strong.py (coordinate ascent against the
# heuristic pool, seed-7 deals) for block, teams and fives; draw is blocker's ordering plus
# the lock, blocked-margin and double terms, each kept because it beat blocker on fresh
# deals. Columns follow FEATURES.
STRONG_WEIGHTS: dict[str, tuple[float, ...]] = {
    #    pips double variety held follow next_opt next_blk lock margin partner fives_now threat domino
    "block": (0.75, 0.5, 0.5, 0.0, 1.0, -2.0, 0.0, 1.88, 0.25, -4.0, 0.0, 0.0, 1000.0),
    "draw": (1.0, 2.0, 0.0, 0.0, 0.0, -10.0, 1000.0, 5.0, 1.0, 0.0, 0.0, 0.0, 10000.0),
    "teams": (0.5, 2.0, 0.5, 0.5, 0.0, -0.975, 12.0, 0.0, 0.0, 0.0, 0.0, 0.0, 100.0),
    "fives": (0.95, 3.75, -1.0, -0.5, 1.0, -2.06, 5.62, -0.5, 0.0, 0.0, 1.5, -0.7, 100.0),
}


class StrongBot(ScoringBot):
    """A weighted sum of every feature above (``FEATURES``), one weight vector per rule
    family (``STRONG_WEIGHTS``: block, draw, teams, fives), tuned in the duplicate arena."""

    name = "strong"

    def __init__(
        self, rules: Rules, seed: int | None = None, weights: tuple[float, ...] | None = None
    ) -> None:
        super().__init__(rules, seed)
        self.weights = np.asarray(STRONG_WEIGHTS[family(rules)] if weights is None else weights, dtype=float)
        if self.weights.shape != (len(FEATURES),):
            raise ValueError(
                f"strong needs {len(FEATURES)} weights ({', '.join(FEATURES)}), got {self.weights.shape}"
            )

    def score(self, moves: Moves) -> np.ndarray:
        total = np.zeros(len(moves.action))
        for name, weight in zip(FEATURES, self.weights, strict=True):
            if weight:
                value = moves.options(1) if name == "next_options" else getattr(moves, name)
                total += weight * value
        return total
