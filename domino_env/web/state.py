"""What the web table shows: games against bots and watched records, as JSON-ready views.

Both kinds of game run on the reference engine (``domino_env.engine.reference``), the
readable one every other engine is tested against. A view is built for a *viewer*:
a seat sees the table, the public events and its own hand; ``viewer=None`` (a
spectator) sees every hand. Only ``round_view`` turns a round into a view, and it
reads a hidden hand only for the viewer it may show it to, so whatever a page
receives during play is exactly what that seat may know; the remaining hands are
never sent, not even at the end of a round (the result gives their pip totals).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from domino_env.engine.actions import decode
from domino_env.engine.deals import random_deals
from domino_env.engine.reference import OPENING, Match, Round, move_name
from domino_env.engine.rules import END_NAMES, Rules
from domino_env.engine.tiles import PIPS, tile_name
from domino_env.envs.policies import Policy
from domino_env.tools import render
from domino_env.tools.records import play_moves, replay, round_from_record

"""Space between neighbouring tiles on the table, in half-tile units (as in ``tools.render``)."""

Probabilities = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``probabilities(obs (1, size), mask (1, A)) -> (1, A)``: a network's policy over the moves."""


def observe(rnd: Round, seat: int) -> tuple[np.ndarray, np.ndarray]:
    """``(obs, mask)`` batches of one row for ``seat``: what a policy is called with."""
    mask = np.zeros((1, rnd.rules.num_actions), dtype=bool)
    mask[0, rnd.legal_actions()] = True
    return rnd.observation(seat)[None], mask


def table_boxes(rnd: Round) -> list[dict[str, Any]]:
    """Every tile on the table in half-tile units (``tools.render``'s geometry): ``x, y, w, h``
    and the numbers on its halves (left to right, or top to bottom); ``last`` marks the tile
    placed last, so a page can show what just happened."""
    last = None
    if rnd.table:
        end = rnd.table[-1].end
        last = (OPENING, 0) if end == OPENING else (end, len(rnd.arms[end]) - 1)
    return [
        {
            "x": round(b.x, 3),
            "y": round(b.y, 3),
            "w": b.w,
            "h": b.h,
            "halves": list(b.halves),
            "last": b.place == last,
        }
        for b in render.table_boxes(rnd)
    ]


def event_text(event: tuple, names: Sequence[str]) -> str:
    """One public event of ``Round.events`` in words."""
    kind, seat = event[0], event[1]
    who = f"seat {seat} ({names[seat]})"
    if kind == "place":
        tile, end = event[2], event[3]
        return (
            f"{who} opens with {tile_name(tile)}"
            if end == OPENING
            else f"{who} plays {tile_name(tile)} {end}"
        )
    if kind == "draw":
        return f"{who} draws {event[2]} tile{'s' if event[2] != 1 else ''}"
    return f"{who} passes"


def result_view(rnd: Round) -> dict[str, Any]:
    """How the round ended, in words: who won, why, and the pip totals left in each side's hands."""
    rules, sides = rnd.rules, render.side_names(rnd.rules)
    pips = [0] * rules.num_sides
    for seat, hand in enumerate(rnd.hands):
        pips[rules.side_of(seat)] += sum(int(PIPS[t]) for t in hand)
    left = ", ".join(f"{name} {p}" for name, p in zip(sides, pips, strict=True))
    winner = None if rnd.winner is None else sides[rnd.winner]
    if rnd.end == "domino":
        why = f"Domino: seat {rnd.table[-1].seat} played their last tile."
    elif rnd.end == "target":
        why = f"{winner} reached the target of {rules.target} during the round."
    else:
        if rnd.end == "closed":
            (number,) = set(rnd.ends().values())
            why = f"Closed: both ends show {number} and all seven {number}s are down, counted as blocked."
        else:
            why = "Blocked: nobody can play."
        rule = {
            "lightest_hand": "the lightest hand wins",
            "heaviest_hand": "the heaviest hand wins",
            "highest_score": "the higher game score wins",
        }[rules.blocked_winner]
        why += f" Pips left: {left}; {rule}."
    if winner is None:
        outcome = "Void: a tie that nobody wins, no end points."
    else:
        outcome = f"{winner} wins the round."
    points = ", ".join(f"{name} +{p}" for name, p in zip(sides, rnd.points, strict=True))
    return {
        "end": rnd.end,
        "winner": rnd.winner,
        "text": f"{why} {outcome} Round points: {points}.",
        "pips": pips,
        "points": list(rnd.points),
    }


def round_view(rnd: Round, viewer: int | None, names: Sequence[str]) -> dict[str, Any]:
    """The table as ``viewer`` sees it (None: a spectator, every hand face up)."""
    rules = rnd.rules
    seats = []
    for seat, hand in enumerate(rnd.hands):
        shown = viewer is None or viewer == seat
        seats.append(
            {
                "seat": seat,
                "name": names[seat],
                "tiles": len(hand),
                "hand": [tile_name(t) for t in hand] if shown else None,
                "missing": sorted(rnd.missing[seat]),
                "draws": rnd.draws[seat],
                "passes": rnd.passes[seat],
            }
        )
    return {
        "preset": rules.name,
        "players": rules.players,
        "viewer": viewer,
        "table": table_boxes(rnd),
        "ends": rnd.ends(),
        "fives": rnd.fives_count() if rules.fives else None,
        "boneyard": len(rnd.boneyard) if rules.drawing else None,
        "seats": seats,
        "to_play": rnd.to_play,
        "opener": rnd.opener,
        "sides": render.side_names(rules),
        "scores": list(rnd.scores),
        "log": [event_text(event, names) for event in rnd.events],
        "result": result_view(rnd) if rnd.over else None,
    }


def legal_view(rnd: Round) -> list[dict[str, Any]]:
    """The legal moves of the seat to play: action, tile name and end (None for the opening)."""
    moves = []
    for action in rnd.legal_actions():
        tile, end = decode(action)
        moves.append(
            {"action": action, "tile": tile_name(tile), "end": END_NAMES[end] if rnd.table else None}
        )
    return moves


class PlayGame:
    """A match between a person at ``human`` and policies at the other seats, to the target.

    A finished round stays on show (``round``) until ``next_round``, so its result can be read.
    """

    def __init__(
        self, rules: Rules, human: int, policies: dict[int, Policy], names: list[str], seed: int
    ) -> None:
        rng = np.random.default_rng(seed)
        self.rules = rules
        self.human = human
        self.policies = policies
        self.names = names
        self.match = Match(
            rules, lambda: (random_deals(rules, 1, rng)[0].tolist(), int(rng.integers(rules.players)))
        )
        self.round = self.match.round

    @property
    def bot_to_move(self) -> bool:
        return not self.round.over and self.round.to_play != self.human

    def bot_move(self) -> None:
        """The policy at the seat to move picks and plays one move (slow for search bots)."""
        if not self.bot_to_move:
            raise ValueError("no opponent is to move")
        seat = self.round.to_play
        action = int(np.asarray(self.policies[seat](*observe(self.round, seat)))[0])
        self.match.step(action)

    def human_move(self, action: int) -> None:
        """Play the person's move; ValueError (naming the legal moves) when it is not theirs to make."""
        if self.round.over or self.round.to_play != self.human:
            raise ValueError("it is not your turn")
        self.match.step(action)

    def next_round(self) -> None:
        if not self.round.over:
            raise ValueError("the round is not over yet")
        if self.match.over:
            raise ValueError("the match is over: start a new game")
        self.round = self.match.round

    def view(self) -> dict[str, Any]:
        out = round_view(self.round, self.human, self.names)
        mine = not self.round.over and self.round.to_play == self.human
        out["you"] = self.human
        out["legal"] = legal_view(self.round) if mine else []
        out["match"] = {
            "target": self.rules.target,
            "rounds": self.match.rounds_played,
            "over": self.match.over,
            "winner": None if self.match.winner is None else render.side_names(self.rules)[self.match.winner],
        }
        return out


class WatchGame:
    """A game record, checked by replaying it, shown move by move (any step, forwards or back)."""

    def __init__(self, record: Any, names: list[str] | None = None) -> None:
        hands = replay(record)["hands"]  # a bad record: ValueError naming it, as ``domino_env replay`` says
        self.record = record
        self.moves: list[str] = record.get("moves", [])
        self.names = names or [f"seat {s}" for s in range(len(hands))]

    def position(self, step: int) -> Round:
        """The round after the first ``step`` moves."""
        if not 0 <= step <= len(self.moves):
            raise ValueError(f"step must be 0 to {len(self.moves)}, got {step}")
        rnd = round_from_record(self.record)
        play_moves(rnd, self.moves[:step])
        return rnd

    def view(self, step: int, viewer: int | None, analyst: Probabilities | None) -> dict[str, Any]:
        """The position after ``step`` moves; ``analyst``: a network whose policy here is shown."""
        rnd = self.position(step)
        if viewer is not None and not 0 <= viewer < rnd.rules.players:
            raise ValueError(f"viewer must be a seat 0 to {rnd.rules.players - 1}, got {viewer}")
        out = round_view(rnd, viewer, self.names)
        out["step"], out["steps"] = step, len(self.moves)
        played = None
        if step < len(self.moves):
            after = self.position(step + 1).table[-1]
            played = move_name(after.tile, None if after.end == OPENING else after.end)
        out["next_move"] = played
        out["probabilities"] = None
        if analyst is not None and not rnd.over and (viewer is None or viewer == rnd.to_play):
            probs = analyst(*observe(rnd, rnd.to_play))[0]
            ranked = sorted(
                zip(rnd.legal_actions(), rnd.legal_moves(), strict=True), key=lambda m: -probs[m[0]]
            )
            out["probabilities"] = [
                {"move": move, "p": float(probs[action]), "played": move == played} for action, move in ranked
            ]
        return out
