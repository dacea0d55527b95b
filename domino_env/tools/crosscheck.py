"""Differential check: the batched core against the reference engine, move for move.

A batch of games runs in ``DominoCore`` with random legal actions; each game is
mirrored by a reference ``Match`` fed the very deals the core dealt. After every
step the two must agree on the seat to move, the legal actions, every seat's
observation, draws and passes, and on every ``StepResult`` field: on each move the
fives scored and the game scores, at each round end how it ended, the winner, the
round points and the game scores; games left out of a step (``active``) must stand
still. Used by the tests and by ``scripts/soak.py``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from domino_env.engine.core import DominoCore, StepResult
from domino_env.engine.outcome import Episode
from domino_env.engine.reference import Match, Round, deal_to_hands
from domino_env.engine.rules import CHANCE_OPENERS, END_CODES, Rules

QUIET = {"round_over": 0, "game_over": 0, "end": 0, "winner": -1, "game_winner": -1, "points": 0, "fives": 0}
"""``StepResult`` fields of a game no round ended in, and their value (``fives`` only if not stepped)."""


class Disagreement(AssertionError):
    """The core and the reference engine differ; the message says where and how."""


@dataclass
class CrossCheckStats:
    moves: int = 0
    rounds: int = 0
    games: int = 0
    ends: dict[str, int] = field(default_factory=dict)


class CrossCheck:
    """Run ``num_games`` core games beside reference games and compare them.

    A round episode mirrors each core round with a fresh reference ``Round``; a match
    episode mirrors each core game with a reference ``Match`` (opener rotation and
    scores carried by the reference itself, so those are checked too). ``deals``
    and ``openers`` go to the core (a fixed deal list); the reference plays
    whatever the core deals.
    """

    def __init__(
        self,
        rules: Rules,
        num_games: int,
        seed: int,
        episode: Episode = "round",
        deals: np.ndarray | None = None,
        openers: np.ndarray | None = None,
    ) -> None:
        self.rules = rules
        self.episode = episode
        self.core = DominoCore(rules, num_games, seed=seed, episode=episode, deals=deals, openers=openers)
        self.rng = np.random.default_rng(seed + 1)
        self.pending_deals = [deque() for _ in range(num_games)]
        self.games = [self._new_game(g) for g in range(num_games)]
        self.stats = CrossCheckStats()

    def _current_deal(self, game: int) -> tuple[list[int], int]:
        """The core's deal of ``game`` and its opener (the chance seat for lots/random rules)."""
        return [int(t) for t in self.core.deal[game]], int(self.core.opener[game])

    def _new_game(self, game: int) -> Match | Round:
        deal, opener = self._current_deal(game)
        if self.episode == "round":
            hands, boneyard = deal_to_hands(self.rules, deal)
            chance = self.rules.first_opener in CHANCE_OPENERS
            return Round(self.rules, hands, boneyard, opener if chance else None)
        self.pending_deals[game].append((deal, opener))
        return Match(self.rules, self.pending_deals[game].popleft)

    def _round(self, game: int) -> Round:
        current = self.games[game]
        return current.round if isinstance(current, Match) else current

    def run(self, steps: int, active_rate: float = 1.0) -> CrossCheckStats:
        """Play ``steps`` batched steps, comparing after each.

        With ``active_rate < 1`` each game moves on a step with that probability
        (``DominoCore.step(..., active=...)``); the others must stand still.
        """
        for _ in range(steps):
            self.compare_positions()
            actions = self.core.random_actions(self.rng)
            if active_rate < 1:
                active = self.rng.random(self.core.num_games) < active_rate
                result = self.core.step(actions, active=active)
            else:
                active = np.ones(self.core.num_games, dtype=bool)
                result = self.core.step(actions)
            self.stats.moves += int(active.sum())
            self._check_standing_still(result, ~active)
            for g in np.flatnonzero(active):
                game = self.games[g]
                if result.round_over[g] and self.episode == "match" and not result.game_over[g]:
                    self.pending_deals[g].append(self._current_deal(g))
                scores_before = list(self._round(g).scores)
                game.step(int(actions[g]))
                if not result.round_over[g]:
                    if self._round(g).over:
                        raise Disagreement(
                            f"game {g}: reference round ended ({self._round(g).end}), core's did not"
                        )
                    self._compare_move(g, result, scores_before)
                    continue
                self._compare_round_end(g, game, result)
                if result.game_over[g]:
                    self.stats.games += 1
                    self.games[g] = self._new_game(g)
        return self.stats

    def _check_standing_still(self, result: StepResult, idle: np.ndarray) -> None:
        """Games left out of the step report nothing: no round end, no winner, no fives, no points."""
        for name, blank in QUIET.items():
            value = getattr(result, name)
            wrong = np.flatnonzero(idle & (value != blank).reshape(len(value), -1).any(axis=1))
            if len(wrong):
                g = int(wrong[0])
                raise Disagreement(f"game {g} was not stepped, yet its {name} is {value[g].tolist()}")

    def _compare_move(self, g: int, result: StepResult, scores_before: list[int]) -> None:
        """A move that did not end the round: its fives and the game scores after it."""
        where = f"game {g} move {self.core.num_placed[g]}"
        scores = list(self._round(g).scores)
        self._expect(where, "fives", int(result.fives[g]), sum(scores) - sum(scores_before))
        self._expect(where, "scores", result.scores[g].tolist(), scores)
        for name, blank in QUIET.items():
            value = np.asarray(getattr(result, name)[g])
            if name != "fives" and (value != blank).any():
                raise Disagreement(f"{where}: the round went on, yet {name} is {value.tolist()}")

    def _compare_round_end(self, g: int, game: Match | Round, result: StepResult) -> None:
        if isinstance(game, Match):
            finished = game.history[-1] if game.history else None
        else:
            finished = game
        if finished is None or (isinstance(game, Round) and not game.over):
            raise Disagreement(f"game {g}: core round ended ({END_CODES[result.end[g]]}), reference did not")
        where = f"game {g} round end"
        self._expect(where, "end", END_CODES[result.end[g]], finished.end)
        winner = int(result.winner[g])
        self._expect(where, "winner", None if winner < 0 else winner, finished.winner)
        self._expect(where, "points", result.points[g].tolist(), list(finished.points))
        self._expect(where, "scores", result.scores[g].tolist(), list(finished.scores))
        if isinstance(game, Match):
            self._expect(where, "game over", bool(result.game_over[g]), game.over)
            if game.over:
                self._expect(where, "game winner", int(result.game_winner[g]), game.winner)
        self.stats.rounds += 1
        self.stats.ends[finished.end] = self.stats.ends.get(finished.end, 0) + 1

    def compare_positions(self) -> None:
        """Seat to move, legal actions, all observations, draws and passes of every game."""
        core, p = self.core, self.rules.players
        mask = core.legal_mask()
        observations = [core.observe(np.full(core.num_games, s)) for s in range(p)]
        for g in range(core.num_games):
            game = self._round(g)
            where = f"game {g} move {core.num_placed[g] + 1}"
            self._expect(where, "to_play", int(core.to_play[g]), game.to_play)
            self._expect(where, "legal", np.flatnonzero(mask[g]).tolist(), sorted(game.legal_actions()))
            self._expect(where, "draws", core.draws[g].tolist(), list(game.draws))
            self._expect(where, "passes", core.passes[g].tolist(), list(game.passes))
            for s in range(p):
                ours, theirs = observations[s][g], game.observation(s)
                if not np.array_equal(ours, theirs):
                    diff = np.flatnonzero(ours != theirs).tolist()
                    raise Disagreement(
                        f"{where}: observation of seat {s} differs at {diff}: core {ours[diff].tolist()} "
                        f"reference {theirs[diff].tolist()}; events {game.events}"
                    )

    @staticmethod
    def _expect(where: str, what: str, core_value, reference_value) -> None:
        if core_value != reference_value:
            raise Disagreement(f"{where}: {what} core={core_value!r} reference={reference_value!r}")
