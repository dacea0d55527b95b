"""What the web table shows: games against bots and watched records, as JSON-ready views.

Both kinds of game run on the reference engine (``domino_env.engine.reference``), the
readable one every other engine is tested against. A view is built for a *viewer*:
a seat sees the table, the public events and its own hand; ``viewer=None`` (a
spectator) sees every hand. Only ``round_view`` turns a round into a view, and it
reads a hidden hand only for the viewer it may show it to, so whatever a page
receives during play is exactly what that seat may know; the remaining hands are
never sent, not even at the end of a round (the result gives their pip totals), nor
when a played round is saved to watch (it is locked to the player's seat).

A game is kept as plain JSON (``PlayGame.state``, ``WatchGame.state``): its deal seed
and the moves made, replayed by ``PlayGame.restore``, so a restarted server resumes it.
"""

from __future__ import annotations

import copy
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

Probabilities = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``probabilities(obs (1, size), mask (1, A)) -> (1, A)``: a network's policy over the moves."""

NEXT_ROUND = -1
"""In ``PlayGame.steps``: the player moved on to the next round (every other entry is an action)."""


def observe(rnd: Round, seat: int) -> tuple[np.ndarray, np.ndarray]:
    """``(obs, mask)`` batches of one row for ``seat``: what a policy is called with."""
    mask = np.zeros((1, rnd.rules.num_actions), dtype=bool)
    mask[0, rnd.legal_actions()] = True
    return rnd.observation(seat)[None], mask


def places(players: int, viewer: int | None) -> list[str]:
    """Where each seat sits around the drawn table: the viewer (seat 0 for a spectator) at the
    bottom and play going clockwise, so the next seat is on the left and a partner opposite."""
    around = {2: ["bottom", "top"], 3: ["bottom", "left", "right"], 4: ["bottom", "left", "top", "right"]}
    first = viewer or 0
    return [around[players][(seat - first) % players] for seat in range(players)]


def play_labels(rules: Rules, human: int, names: Sequence[str]) -> list[str]:
    """How the player's page calls each seat: "You", "Partner (…)", or where an opponent sits."""
    where = {"left": "Left", "top": "Across", "right": "Right", "bottom": "You"}
    labels = []
    for seat, place in enumerate(places(rules.players, human)):
        if seat == human:
            labels.append("You")
        elif rules.side_of(seat) == rules.side_of(human):
            labels.append(f"Partner ({names[seat]})")
        else:
            labels.append(f"{'Opponent' if rules.players == 2 else where[place]} ({names[seat]})")
    return labels


def table_boxes(rnd: Round) -> list[dict[str, Any]]:
    """Every tile on the table in half-tile units (``tools.render``'s geometry): ``x, y, w, h``
    and the numbers on its halves (left to right, or top to bottom); ``last`` marks the tile
    placed last, so a page can show what just happened. ``arm`` (``opening``, ``left``, ``right``,
    ``up``, ``down``) and ``index`` (out from the opening) say where it lies in the line of play,
    ``spinner`` marks the spinner: what the page lays its snake of tiles out from."""
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
            "arm": b.place[0],
            "index": b.place[1],
            "spinner": b.place == rnd.spinner_place,
        }
        for b in render.table_boxes(rnd)
    ]


def event_text(event: tuple, labels: Sequence[str]) -> str:
    """One public event of ``Round.events`` in words (``labels[seat]`` names the seat; "You" agrees)."""
    kind, seat = event[0], event[1]
    who = labels[seat]
    s = "" if who == "You" else "s"
    if kind == "place":
        tile, end = event[2], event[3]
        return (
            f"{who} open{s} with {tile_name(tile)}"
            if end == OPENING
            else f"{who} play{s} {tile_name(tile)} {end}"
        )
    if kind == "draw":
        return f"{who} draw{s} {event[2]} tile{'s' if event[2] != 1 else ''}"
    return f"{who} pass{'es' if s else ''}"


def log_view(rnd: Round, labels: Sequence[str]) -> list[dict[str, Any]]:
    """The events in words, each placement numbered as the move counter counts it (draws and
    passes happen by themselves between moves, so they carry no number); ``kind`` (place, draw,
    pass) and ``seat`` let the page show a draw or a pass at the seat that made it."""
    lines, placed = [], 0
    for event in rnd.events:
        number = None
        if event[0] == "place":
            placed += 1
            number = placed
        lines.append({"move": number, "text": event_text(event, labels), "kind": event[0], "seat": event[1]})
    return lines


def result_view(rnd: Round, sides: Sequence[str] | None = None) -> dict[str, Any]:
    """How the round ended, in words: who won, why, and the pip totals left in each side's hands."""
    rules = rnd.rules
    sides = list(sides or render.side_names(rules))
    pips = [0] * rules.num_sides
    for seat, hand in enumerate(rnd.hands):
        pips[rules.side_of(seat)] += sum(int(PIPS[t]) for t in hand)
    left = ", ".join(f"{name} {p}" for name, p in zip(sides, pips, strict=True))
    winner = None if rnd.winner is None else sides[rnd.winner]
    if rnd.end == "domino":
        who = sides[rules.side_of(rnd.table[-1].seat)]
        if rules.teams:
            why = f"Domino: {who} played the last tile of a hand."
        else:
            why = f"Domino: {who} played {'your' if who == 'You' else 'their'} last tile."
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
    outcome = (
        "Void: a tie that nobody wins, no end points." if winner is None else f"{winner} wins the round."
    )
    points = ", ".join(f"{name} +{p}" for name, p in zip(sides, rnd.points, strict=True))
    return {
        "end": rnd.end,
        "winner": rnd.winner,
        "text": f"{why} {outcome} Round points: {points}.",
        "pips": pips,
        "points": list(rnd.points),
    }


def round_view(
    rnd: Round,
    viewer: int | None,
    names: Sequence[str],
    labels: Sequence[str] | None = None,
    sides: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The table as ``viewer`` sees it (None: a spectator, every hand face up); ``labels`` name the
    seats in the log (default ``seat N (name)``), ``sides`` the sides in scores and results."""
    rules = rnd.rules
    labels = labels or [f"seat {s} ({name})" for s, name in enumerate(names)]
    seats = []
    for seat, (hand, place) in enumerate(zip(rnd.hands, places(rules.players, viewer), strict=True)):
        shown = viewer is None or viewer == seat
        seats.append(
            {
                "seat": seat,
                "name": names[seat],
                "label": labels[seat],
                "place": place,
                "side": rules.side_of(seat),
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
        "sides": list(sides or render.side_names(rules)),
        "scores": list(rnd.scores),
        "placed": len(rnd.table),
        "log": log_view(rnd, labels),
        "result": result_view(rnd, sides) if rnd.over else None,
    }


def public_table(rnd: Round) -> tuple:
    """What the table offers from now on, whichever side each end lies: every open end's kind (a
    long side or a spinner's short side), its number and, where fives count, whether its outer
    tile is a double, with the count. Read from the table alone (public), never from a hand."""
    fives = rnd.rules.fives

    def double_at(end: str) -> bool:  # the outer tile of an end is a double (a spinner's bare side: no)
        if rnd.arms[end]:
            return rnd.arms[end][-1][0] == rnd.arms[end][-1][1]
        return end in ("left", "right") and rnd.opening[0] == rnd.opening[1]

    ends = sorted((end in ("up", "down"), n, fives and double_at(end)) for end, n in rnd.ends().items())
    return (tuple(ends), rnd.fives_count() if fives else 0)


def legal_view(rnd: Round) -> list[dict[str, Any]]:
    """The legal moves of the seat to play: action, tile name and end (None for the opening).

    A tile whose placements all leave the same table for what follows (``public_table``: both ends
    show the same number, as on a lone opening double) is offered once, at its first end, so the
    page plays it without asking which end."""
    actions = rnd.legal_actions()
    fits: dict[int, list[int]] = {}
    for action in actions:
        fits.setdefault(decode(action)[0], []).append(action)
    moves = []
    for action in actions:
        tile, end = decode(action)
        if len(fits[tile]) > 1 and action != fits[tile][0]:
            tables = set()
            for other in (fits[tile][0], action):
                after = copy.deepcopy(rnd)  # the table after the move: the hands it copies are never read
                after.step(other)
                tables.add(public_table(after))
            if len(tables) == 1:
                continue
        moves.append(
            {"action": action, "tile": tile_name(tile), "end": END_NAMES[end] if rnd.table else None}
        )
    return moves


def round_start(rnd: Round) -> dict[str, Any]:
    """A round before its first move as the start of a game record (deal, opener, scores)."""
    return {
        "preset": rnd.rules.name,
        "players": rnd.rules.players,
        "hands": [[tile_name(t) for t in hand] for hand in rnd.hands],
        "boneyard": [tile_name(t) for t in rnd.boneyard],
        "opener": rnd.opener,
        "scores": list(rnd.scores),
    }


class PlayGame:
    """A match between a person at ``human`` and policies at the other seats, to the target.

    A finished round stays on show (``round``) until ``next_round``, so its result can be read.
    ``steps`` lists every action in order and ``NEXT_ROUND`` where the player moved on: with the
    deal ``seed`` that is the whole game, which ``restore`` replays.
    """

    def __init__(
        self,
        rules: Rules,
        human: int,
        policies: dict[int, Policy],
        names: list[str],
        seed: int,
        settings: dict[str, Any] | None = None,
    ) -> None:
        rng = np.random.default_rng(seed)
        self.rules = rules
        self.human = human
        self.policies = policies
        self.names = names
        self.seed = seed
        self.settings = settings or {}
        """What the page asked for (shown again after a reload)."""
        self.labels = play_labels(rules, human, names)
        us = rules.side_of(human)
        self.sides = [
            ("You" if not rules.teams else "Your team") if side == us else render.side_names(rules)[side]
            for side in range(rules.num_sides)
        ]
        if not rules.teams and rules.players == 2:
            self.sides[1 - us] = "Opponent"
        self.steps: list[int] = []
        self.match = Match(
            rules, lambda: (random_deals(rules, 1, rng)[0].tolist(), int(rng.integers(rules.players)))
        )
        self.round = self.match.round
        self.start = round_start(self.round)

    @classmethod
    def restore(
        cls, state: dict[str, Any], policies: Callable[[Rules, int, list[str], int], dict[int, Policy]]
    ) -> PlayGame:
        """The game ``state`` describes, its moves replayed; ``policies(rules, human, names, seed)``
        seats the opponents again."""
        rules = Rules.preset(state["preset"], state["players"])
        names = list(state["names"])
        game = cls(
            rules,
            state["human"],
            policies(rules, state["human"], names, state["seed"]),
            names,
            state["seed"],
            state["settings"],
        )
        for step in state["steps"]:
            if step == NEXT_ROUND:
                game.next_round()
            else:
                game.match.step(step)
                game.steps.append(step)
        return game

    @property
    def state(self) -> dict[str, Any]:
        return {
            "preset": self.rules.name,
            "players": self.rules.players,
            "human": self.human,
            "names": self.names,
            "seed": self.seed,
            "settings": self.settings,
            "steps": self.steps,
        }

    @property
    def bot_to_move(self) -> bool:
        return not self.round.over and self.round.to_play != self.human

    def bot_position(self) -> tuple[int, np.ndarray, np.ndarray]:
        """``(seat, obs, mask)`` of the opponent to move: what its policy is called with."""
        if not self.bot_to_move:
            raise ValueError("no opponent is to move")
        seat = self.round.to_play
        return (seat, *observe(self.round, seat))

    def bot_play(self, seat: int, action: int) -> None:
        """Play the move the policy at ``seat`` chose (it was asked while this seat was to move)."""
        if not self.bot_to_move or self.round.to_play != seat:
            raise ValueError("no opponent is to move")
        self._step(action)

    def bot_move(self) -> None:
        """The policy at the seat to move picks and plays one move, here (slow for search bots)."""
        seat, obs, mask = self.bot_position()
        self.bot_play(seat, int(np.asarray(self.policies[seat](obs, mask))[0]))

    def human_move(self, action: int) -> None:
        """Play the person's move; ValueError (naming the legal moves) when it is not theirs to make."""
        if self.round.over or self.round.to_play != self.human:
            raise ValueError("it is not your turn")
        self._step(action)

    def _step(self, action: int) -> None:
        self.match.step(action)
        self.steps.append(action)

    def next_round(self) -> None:
        if not self.round.over:
            raise ValueError("the round is not over yet")
        if self.match.over:
            raise ValueError("the match is over: start a new game")
        self.round = self.match.round
        self.start = round_start(self.round)
        self.steps.append(NEXT_ROUND)

    def hint_position(self) -> tuple[np.ndarray, np.ndarray]:
        """``(obs, mask)`` of the player's own decision (a hint reads nothing the player cannot see)."""
        if self.round.over or self.round.to_play != self.human:
            raise ValueError("a hint is for your own move: it is not your turn")
        return observe(self.round, self.human)

    def record(self) -> dict[str, Any]:
        """The shown round as a game record (its deal and the moves so far), to watch from this seat."""
        moves = [move_name(p.tile, None if p.end == OPENING else p.end) for p in self.round.table]
        return {**self.start, "moves": moves}

    def view(self) -> dict[str, Any]:
        out = round_view(self.round, self.human, self.names, self.labels, self.sides)
        mine = not self.round.over and self.round.to_play == self.human
        out["you"] = self.human
        out["legal"] = legal_view(self.round) if mine else []
        out["settings"] = self.settings
        out["match"] = {
            "target": self.rules.target,
            "rounds": self.match.rounds_played,
            "over": self.match.over,
            "winner": None if self.match.winner is None else self.sides[self.match.winner],
        }
        return out


class WatchGame:
    """A game record, checked by replaying it, shown move by move (any step, forwards or back).

    ``seat``: the only view allowed (a round the person played, saved from the play table: its
    other hands stay hidden); None lets any seat or a spectator watch.
    """

    def __init__(self, record: Any, names: list[str] | None = None, seat: int | None = None) -> None:
        hands = replay(record)["hands"]  # a bad record: ValueError naming it, as ``domino_env replay`` says
        self.record = record
        self.moves: list[str] = record.get("moves", [])
        self.names = names or [f"seat {s}" for s in range(len(hands))]
        self.seat = seat

    @property
    def state(self) -> dict[str, Any]:
        return {"record": self.record, "names": self.names, "seat": self.seat}

    @classmethod
    def restore(cls, state: dict[str, Any]) -> WatchGame:
        return cls(state["record"], state["names"], state["seat"])

    def info(self) -> dict[str, Any]:
        """What the page needs to set up its controls."""
        rules = self.position(0).rules
        return {
            "steps": len(self.moves),
            "seats": self.names,
            "seat": self.seat,
            "preset": rules.name,
            "players": rules.players,
        }

    def position(self, step: int) -> Round:
        """The round after the first ``step`` moves."""
        if not 0 <= step <= len(self.moves):
            raise ValueError(f"step must be 0 to {len(self.moves)}, got {step}")
        rnd = round_from_record(self.record)
        play_moves(rnd, self.moves[:step])
        return rnd

    def view(
        self, step: int, viewer: int | None, analyst: Probabilities | None, no_analyst: str = ""
    ) -> dict[str, Any]:
        """The position after ``step`` moves; ``analyst``: a network whose policy here is shown
        (``no_analyst``: why there is none). Without probabilities, ``probabilities_note`` says why."""
        rnd = self.position(step)
        if viewer is not None and not 0 <= viewer < rnd.rules.players:
            raise ValueError(f"viewer must be a seat 0 to {rnd.rules.players - 1}, got {viewer}")
        if self.seat is not None and viewer != self.seat:
            raise ValueError(f"this game was saved from seat {self.seat}: only its view is shown")
        out = round_view(rnd, viewer, self.names)
        out["step"], out["steps"] = step, len(self.moves)
        played = None
        if step < len(self.moves):
            after = self.position(step + 1).table[-1]
            played = move_name(after.tile, None if after.end == OPENING else after.end)
        out["next_move"] = played
        out["probabilities"] = None
        out["probabilities_note"] = None
        if rnd.over:
            out["probabilities_note"] = "The round is over: there is no decision to show a policy for."
        elif viewer is not None and viewer != rnd.to_play:
            out["probabilities_note"] = (
                f"Seat {rnd.to_play} is to play: its policy shows in its own view or the spectator's."
            )
        elif analyst is None:
            out["probabilities_note"] = no_analyst or "No policy chosen."
        if analyst is not None and not rnd.over and (viewer is None or viewer == rnd.to_play):
            probs = analyst(*observe(rnd, rnd.to_play))[0]
            ranked = sorted(
                zip(rnd.legal_actions(), rnd.legal_moves(), strict=True), key=lambda m: -probs[m[0]]
            )
            out["probabilities"] = [
                {"move": move, "p": float(probs[action]), "played": move == played} for action, move in ranked
            ]
        return out
