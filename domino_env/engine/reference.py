"""Reference engine: one game of dominoes in plain Python, written to read like RULES.md.

Clarity comes before speed here: this engine is the yardstick that the batched
core (``domino_env.engine.core`` on its compiled kernels) is differential-tested against,
move for move.
Every convention (action encoding, spinner, fives count, order of events, scoring)
follows ``docs/engine.md``.

* ``Round``: one round, from the deal to domino / blocked / closed / target.
* ``Match``: rounds chained to the target, with the opener rotation and the scores
  carried from round to round.
* ``deal_to_hands``: split a 28-tile deal into hands and boneyard.
"""

from __future__ import annotations

import operator
from bisect import insort
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from domino_env.engine.actions import decode, encode
from domino_env.engine.errors import IllegalMoveError
from domino_env.engine.observation import observation_fields, observation_size
from domino_env.engine.rules import CHANCE_OPENERS, END_NAMES, SCORE_LIMIT, Rules, winner_points
from domino_env.engine.tiles import (
    IS_DOUBLE,
    NUM_NUMBERS,
    NUM_TILES,
    PIPS,
    RANK,
    TILES,
    parse_tile_halves,
    tile_index,
    tile_name,
)

END_INDEX = {name: i for i, name in enumerate(END_NAMES)}
OPENING = "opening"
"""End name of the opening tile in ``Round.table`` and ``Round.events``."""
END_CODE = {OPENING: 1, "left": 2, "right": 3, "up": 4, "down": 5}
"""Observation code of the arm a tile lies on (docs/engine.md, 'tile end')."""
MAX_REDEALS = 1000


class Placement(NamedTuple):
    """One tile put on the table: who placed it, which tile, on which end."""

    seat: int
    tile: int
    end: str


@dataclass(frozen=True)
class RoundResult:
    """How a round ended (sides are teams or seats, as in ``Rules.side_of``)."""

    opener: int
    end: str
    """``"domino"``, ``"blocked"``, ``"closed"`` or ``"target"``."""
    winner: int | None
    """Winning side, None when nobody won (a void tie)."""
    points: tuple[int, ...]
    """Points per side scored in this round (fives + end points)."""
    scores: tuple[int, ...]
    """Game scores per side after the round."""
    game_over: bool = False
    """The game is decided (target reached with a single leader, or mid-round target)."""
    game_winner: int | None = None


# -- deals ------------------------------------------------------------------------
def deal_to_hands(rules: Rules, deal) -> tuple[list[list[int]], list[int]]:
    """Seat ``s`` holds ``deal[s*h:(s+1)*h]``; the rest is the boneyard in draw order."""
    tiles = [_as_tile(t) for t in deal]
    if len(tiles) != NUM_TILES:
        raise ValueError(f"a deal lists all {NUM_TILES} tiles, got {len(tiles)}")
    h = rules.hand_size
    return [tiles[s * h : (s + 1) * h] for s in range(rules.players)], tiles[rules.players * h :]


def redeal_seat(rules: Rules, hands: list[list[int]]) -> int | None:
    """The first seat dealt more doubles than the rules allow (the deal must be redealt)."""
    if rules.redeal_doubles is None:
        return None
    for seat, hand in enumerate(hands):
        if sum(bool(IS_DOUBLE[t]) for t in hand) > rules.redeal_doubles:
            return seat
    return None


def _as_tile(value) -> int:
    """A tile index 0..27 (NumPy integers accepted)."""
    try:
        tile = operator.index(value)
    except TypeError:
        raise ValueError(f"a tile is an index 0 to {NUM_TILES - 1}, got {value!r}") from None
    if not 0 <= tile < NUM_TILES:
        raise ValueError(f"a tile is an index 0 to {NUM_TILES - 1}, got {tile}")
    return tile


def _check_deal(rules: Rules, hands: list[list[int]], boneyard: list[int]) -> None:
    """Raise ValueError naming what is wrong with a deal for these rules."""
    if len(hands) != rules.players:
        raise ValueError(
            f"{rules.name} with {rules.players} players needs {rules.players} hands, got {len(hands)}"
        )
    for seat, hand in enumerate(hands):
        if len(hand) != rules.hand_size:
            raise ValueError(
                f"seat {seat} holds {len(hand)} tiles; {rules.name} with {rules.players} players "
                f"deals {rules.hand_size} to each seat"
            )
    seen: set[int] = set()
    for tile in [t for hand in hands for t in hand] + list(boneyard):
        if tile in seen:
            raise ValueError(f"tile {tile_name(tile)} appears twice in the deal")
        seen.add(tile)
    missing = [tile_name(t) for t in range(NUM_TILES) if t not in seen]
    if missing:
        raise ValueError(
            f"the hands and boneyard must hold all {NUM_TILES} tiles; missing: {', '.join(missing)}"
        )
    seat = redeal_seat(rules, hands)
    if seat is not None:
        doubles = sum(bool(IS_DOUBLE[t]) for t in hands[seat])
        raise ValueError(
            f"seat {seat} holds {doubles} doubles; {rules.name} redeals when a seat holds more than "
            f"{rules.redeal_doubles}"
        )


# -- moves ------------------------------------------------------------------------
def _action(tile: int, end: str | None) -> int:
    """The action of a (tile, end name) pair; the opening move uses end 0."""
    return encode(tile, 0 if end is None else END_INDEX[end])


def move_name(tile: int, end: str | None) -> str:
    """Record notation: ``"6-3:left"`` (high number first); a bare ``"6-3"`` opens."""
    return tile_name(tile) if end is None else f"{tile_name(tile)}:{end}"


def parse_move(text: str) -> tuple[tuple[int, int], str | None]:
    """``"a-b"`` or ``"a-b:END"`` -> ((a, b) as written, END or None)."""
    text = text if isinstance(text, str) else repr(text)  # a non-string fails as a bad tile
    tile_text, sep, end = text.partition(":")
    end = end.strip()
    if sep and end not in END_NAMES:
        raise ValueError(f"bad end {end!r} in move {text!r}: use one of {', '.join(END_NAMES)}")
    return parse_tile_halves(tile_text), (end if sep else None)


# -- one round ----------------------------------------------------------------------
class Round:
    """One round: deal, opening, placements with automatic draws and passes, scoring.

    ``hands[s]`` is seat ``s``'s hand (kept sorted: a hand is a set), ``boneyard`` the
    draw order (block presets: the tiles set aside, never drawn). ``opener`` given: that
    seat opens with any tile; None: ``rules.first_opener`` picks the seat and forces the
    tile. ``scores`` are the game scores per side before the round.
    """

    def __init__(
        self,
        rules: Rules,
        hands: list[list[int]],
        boneyard: list[int],
        opener: int | None = None,
        scores: list[int] | None = None,
    ) -> None:
        hands = [[_as_tile(t) for t in hand] for hand in hands]
        boneyard = [_as_tile(t) for t in boneyard]
        _check_deal(rules, hands, boneyard)
        self.rules = rules
        self.hands: list[list[int]] = [sorted(hand) for hand in hands]
        self.boneyard: list[int] = boneyard
        self.scores: list[int] = self._initial_scores(scores)
        self.opener, self._forced_tile = self._choose_opener(opener)
        self.to_play: int | None = self.opener
        sides, seats = rules.num_sides, rules.players
        self.points: list[int] = [0] * sides
        self.draws: list[int] = [0] * seats
        self.passes: list[int] = [0] * seats
        self.missing: list[set[int]] = [set() for _ in range(seats)]
        self.events: list[tuple] = []
        self.table: list[Placement] = []
        self.opening: tuple[int, int] | None = None
        self.arms: dict[str, list[tuple[int, int]]] = {name: [] for name in END_NAMES[: rules.num_ends]}
        self.spinner: int | None = None
        self.spinner_place: tuple[str, int] | None = None  # (arm or OPENING, index in that arm)
        self.end: str | None = None
        self.winner: int | None = None
        self.blocker: int | None = None
        self.game_over = False
        self.game_winner: int | None = None

    def _initial_scores(self, scores: list[int] | None) -> list[int]:
        sides = self.rules.num_sides
        if scores is None:
            return [0] * sides
        scores = [operator.index(s) for s in scores]
        if len(scores) != sides:
            kind = "team" if self.rules.teams else "seat"
            raise ValueError(
                f"scores has {len(scores)} entries; {self.rules.name} needs one per {kind} ({sides})"
            )
        if any(abs(s) > SCORE_LIMIT for s in scores):
            raise ValueError(f"scores must be within -{SCORE_LIMIT}..{SCORE_LIMIT}, got {scores}")
        return scores

    def _choose_opener(self, opener: int | None) -> tuple[int, int | None]:
        """(opening seat, forced tile or None) per the first-round rule, or the given seat."""
        rules = self.rules
        if opener is not None:
            if not isinstance(opener, (int, np.integer)) or not 0 <= opener < rules.players:
                raise ValueError(f"opener {opener!r} out of range: seats are 0 to {rules.players - 1}")
            return int(opener), None
        if rules.first_opener in CHANCE_OPENERS:
            raise ValueError(
                f"{rules.name} chooses its first opener by chance (first_opener={rules.first_opener!r}), "
                "so an opener must be given"
            )
        if rules.first_opener == "six_six":
            forced = tile_index(6, 6)
        else:
            forced = max((t for hand in self.hands for t in hand), key=lambda t: RANK[t])
        holder = next(seat for seat, hand in enumerate(self.hands) if forced in hand)
        return holder, forced

    # -- public state -----------------------------------------------------------
    @property
    def over(self) -> bool:
        return self.end is not None

    def ends(self) -> dict[str, int]:
        """The open ends by name and the number each shows (empty before the opening)."""
        if self.opening is None:
            return {}
        names = ["left", "right"] + (["up", "down"] if self._short_sides_open() else [])
        return {name: self._shown(name) for name in names}

    def fives_count(self) -> int:
        """Sum of the open ends as fives scoring counts them (docs/engine.md)."""
        if not self.table:
            return 0
        if len(self.table) == 1:
            return int(PIPS[self.table[0].tile])
        total = 0
        for name, number in self.ends().items():
            if self.arms[name] or name in ("left", "right"):
                total += 2 * number if self._outer_is_double(name) else number
        return total

    def legal_actions(self) -> list[int]:
        """Legal actions ``end * 28 + tile`` (see ``engine.actions``) of the seat to play, ascending."""
        return sorted(_action(tile, end) for tile, end in self._legal_pairs())

    def legal_moves(self) -> list[str]:
        """Legal moves in record notation, in action order."""
        pairs = sorted(self._legal_pairs(), key=lambda pair: _action(*pair))
        return [move_name(tile, end) for tile, end in pairs]

    def _legal_pairs(self) -> list[tuple[int, str | None]]:
        """(tile, end) pairs the seat to play may place; end None for the opening."""
        if self.over:
            return []
        hand = self.hands[self.to_play]
        if self.opening is None:
            return [(self._forced_tile, None)] if self._forced_tile is not None else [(t, None) for t in hand]
        return [(t, name) for t in hand for name, n in self.ends().items() if n in TILES[t]]

    # -- moves --------------------------------------------------------------------
    def step(self, action: int) -> None:
        """Place the tile of a legal action; the draws and passes that follow happen too."""
        self._check_not_over(f"action {action!r}")
        if not isinstance(action, (int, np.integer)) or action not in self.legal_actions():
            raise self._illegal(self._describe_action(action))
        tile, end = decode(action)
        if self.opening is None:
            low, high = TILES[tile]
            self._open(tile, (high, low))
        else:
            self._attach(tile, END_NAMES[end])

    def _describe_action(self, action) -> str:
        """``action 30 (2-0:right)``, or just the value when it is outside the action space."""
        if not isinstance(action, (int, np.integer)) or not 0 <= action < self.rules.num_actions:
            return f"action {action!r} (outside 0..{self.rules.num_actions - 1})"
        tile, end = decode(action)
        opening = self.opening is None and end == 0
        return f"action {int(action)} ({move_name(tile, None if opening else END_NAMES[end])})"

    def play_move(self, move: str) -> None:
        """Play a move in record notation (``"3-6"`` opens with 3 on the left)."""
        self._check_not_over(f"move {move!r}")
        halves, end = parse_move(move)
        tile = tile_index(*halves)
        legal = self._legal_pairs()
        if self.opening is None:
            if end is not None:
                raise ValueError(
                    f"move {move!r}: the opening move is written without an end, e.g. {halves[0]}-{halves[1]}"
                )
            if (tile, None) not in legal:
                raise self._illegal(f"move {move!r}")
            self._open(tile, halves)
            return
        fitting = [e for t, e in legal if t == tile]
        if end is None and len(fitting) > 1:
            raise IllegalMoveError(
                f"move {move!r} for seat {self.to_play}: the tile fits several ends "
                f"({', '.join(fitting)}); write one, e.g. '{tile_name(tile)}:{fitting[0]}'"
            )
        if end is None and fitting:
            end = fitting[0]
        if end not in fitting:
            raise self._illegal(f"move {move!r}")
        self._attach(tile, end)

    def _check_not_over(self, what: str) -> None:
        if self.over:
            raise ValueError(f"{what} cannot be played: the round is over ({self.end})")

    def _illegal(self, what: str) -> IllegalMoveError:
        legal = ", ".join(self.legal_moves())
        return IllegalMoveError(f"illegal {what} for seat {self.to_play}: legal moves are {legal}")

    # -- the table ----------------------------------------------------------------
    def _open(self, tile: int, halves: tuple[int, int]) -> None:
        """The first tile: ``halves`` = (left number, right number)."""
        self.opening = halves
        self._put(tile, OPENING)

    def _attach(self, tile: int, end: str) -> None:
        """Place ``tile`` against the number showing at ``end``; its other number shows next."""
        inner = self._shown(end)
        low, high = TILES[tile]
        self.arms[end].append((inner, high if low == inner else low))
        self._put(tile, end)

    def _put(self, tile: int, end: str) -> None:
        seat = self.to_play
        self.hands[seat].remove(tile)
        self.table.append(Placement(seat, tile, end))
        self.events.append(("place", seat, tile, end))
        if self.rules.spinner and self.spinner is None and IS_DOUBLE[tile]:
            self.spinner = tile
            self.spinner_place = (end, len(self.arms[end]) - 1) if end != OPENING else (OPENING, 0)
        self._after_placement(seat)

    def _short_sides_open(self) -> bool:
        """Spinner short sides open once a tile lies against each of its long sides."""
        if self.spinner_place is None:
            return False
        arm, index = self.spinner_place
        if arm == OPENING:
            return bool(self.arms["left"]) and bool(self.arms["right"])
        return len(self.arms[arm]) > index + 1

    def _shown(self, end: str) -> int:
        """The number an end shows: its outer tile's exposed number."""
        arm = self.arms[end]
        if arm:
            return arm[-1][1]
        if end == "left":
            return self.opening[0]
        if end == "right":
            return self.opening[1]
        return TILES[self.spinner][0]

    def _outer_is_double(self, end: str) -> bool:
        """Whether the outer tile of an open end is a double (unplayed short side: no)."""
        arm = self.arms[end]
        if arm:
            return arm[-1][0] == arm[-1][1]
        return end in ("left", "right") and self.opening[0] == self.opening[1]

    # -- order of events after a placement (docs/engine.md) ----------------------
    def _after_placement(self, seat: int) -> None:
        side = self.rules.side_of(seat)
        count = self.fives_count() if self.rules.fives else 0
        scored = count > 0 and count % 5 == 0
        if scored:
            self._award(side, count)
        if self.rules.target_mid_round and scored and self.scores[side] >= self.rules.target:
            self._end_at_target(seat, side)
        elif not self.hands[seat]:
            self._finish("domino", side)
        elif self.rules.closed_game and self._is_closed():
            self._finish("closed", self._blocked_winner(seat), blocker=seat)
        else:
            self._next_turn(seat)

    def _end_at_target(self, seat: int, side: int) -> None:
        """The game ends now; domino points count only if that placement emptied the hand."""
        if self.hands[seat]:
            self._close("target", side)
        else:
            self._close("domino", side)
            self._award(side, self._end_points(side))
        self.game_over, self.game_winner = True, side

    def _is_closed(self) -> bool:
        """Every open end shows one number ``n`` and all 7 tiles carrying ``n`` are down."""
        shown = set(self.ends().values())
        if len(shown) != 1:
            return False
        (n,) = shown
        on_table = {p.tile for p in self.table}
        return all(tile_index(n, m) in on_table for m in range(NUM_NUMBERS))

    def _next_turn(self, placer: int) -> None:
        """Seats after the placer (placer last) play, or draw until a fit, or pass."""
        players = self.rules.players
        for k in range(1, players + 1):
            seat = (placer + k) % players
            if self._can_play(seat) or self._draw_until_fit(seat):
                self.to_play = seat
                return
            self._pass(seat)
        self._finish("blocked", self._blocked_winner(placer), blocker=placer)

    def _can_play(self, seat: int) -> bool:
        shown = set(self.ends().values())
        return any(shown & set(TILES[t]) for t in self.hands[seat])

    def _draw_until_fit(self, seat: int) -> bool:
        """Draw in boneyard order until a tile fits; the seat then knows only it lacks S."""
        if not (self.rules.drawing and self.boneyard):
            return False
        shown = set(self.ends().values())
        drawn, fits = 0, False
        while self.boneyard and not fits:
            tile = self.boneyard.pop(0)
            insort(self.hands[seat], tile)
            drawn += 1
            fits = bool(shown & set(TILES[tile]))
        self.draws[seat] += drawn
        self.events.append(("draw", seat, drawn))
        self.missing[seat] = set(shown)
        return fits

    def _pass(self, seat: int) -> None:
        self.passes[seat] += 1
        self.events.append(("pass", seat))
        self.missing[seat] |= set(self.ends().values())

    # -- round end and scoring ------------------------------------------------------
    def _side_pips(self) -> list[int]:
        pips = [0] * self.rules.num_sides
        for seat, hand in enumerate(self.hands):
            pips[self.rules.side_of(seat)] += sum(int(PIPS[t]) for t in hand)
        return pips

    def _side_tiles(self) -> list[int]:
        tiles = [0] * self.rules.num_sides
        for seat, hand in enumerate(self.hands):
            tiles[self.rules.side_of(seat)] += len(hand)
        return tiles

    def _blocked_winner(self, blocker: int) -> int | None:
        """The side that wins a blocked (or closed) round, per blocked_winner / blocked_tie."""
        pips = self._side_pips()
        merit = {
            "lightest_hand": [-p for p in pips],
            "heaviest_hand": pips,
            "highest_score": self.scores,
        }[self.rules.blocked_winner]
        best = max(merit)
        tied = [side for side, m in enumerate(merit) if m == best]
        return tied[0] if len(tied) == 1 else self._break_tie(tied, blocker)

    def _break_tie(self, tied: list[int], blocker: int) -> int | None:
        rules = self.rules
        tie = rules.blocked_tie
        if tie == "nobody":
            return None
        if tie == "opener":
            in_order = [rules.side_of((self.opener + k) % rules.players) for k in range(rules.players)]
            return next(side for side in in_order if side in tied)
        if tie == "blocker_loses":
            others = [side for side in tied if side != rules.side_of(blocker)]
            return others[0] if len(others) == 1 else None
        tiles = self._side_tiles()
        fewest = min(tiles[side] for side in tied)
        tied = [side for side in tied if tiles[side] == fewest]
        latest = (rules.side_of(p.seat) for p in reversed(self.table))
        return next((side for side in latest if side in tied), None)

    def _end_points(self, winner: int) -> int:
        """What the round winner scores (docs/engine.md, 'Points of the winner')."""
        pips = self._side_pips()
        own = pips[winner]
        opp = sum(pips) - own
        return winner_points(self.rules.round_points, opp, own)

    def _award(self, side: int, points: int) -> None:
        self.points[side] += points
        self.scores[side] += points

    def _close(self, end: str, winner: int | None, blocker: int | None = None) -> None:
        self.end, self.winner, self.blocker, self.to_play = end, winner, blocker, None

    def _finish(self, end: str, winner: int | None, blocker: int | None = None) -> None:
        """End the round, score the winner, and decide whether the game is over."""
        self._close(end, winner, blocker)
        if winner is not None:
            self._award(winner, self._end_points(winner))
        top = max(self.scores)
        leaders = [side for side, score in enumerate(self.scores) if score == top]
        if top >= self.rules.target and len(leaders) == 1:
            self.game_over, self.game_winner = True, leaders[0]

    # -- observation ------------------------------------------------------------------
    def observation(self, seat: int) -> np.ndarray:
        """What ``seat`` may know, int16, seat-relative (layout table of docs/engine.md)."""
        rules = self.rules
        players, sides = rules.players, rules.num_sides
        field = {name: where.start for name, where in observation_fields(rules).items()}

        def relative(s: int) -> int:
            return (s - seat) % players

        obs = np.zeros(observation_size(rules), dtype=np.int16)
        for order, (placer, tile, end) in enumerate(self.table):
            obs[field["tile_owner"] + tile] = 2 + relative(placer)
            obs[field["tile_end"] + tile] = END_CODE[end]
            obs[field["tile_order"] + tile] = order + 1
        for tile in self.hands[seat]:
            obs[field["tile_owner"] + tile] = 1
        ends = self.ends()
        for i, name in enumerate(END_NAMES):
            obs[field["end_number"] + i] = ends.get(name, -1)
            obs[field["end_double"] + i] = name in ends and self._outer_is_double(name)
        for k in range(players):
            other = (seat + k) % players
            obs[field["hand_size"] + k] = len(self.hands[other])
            for n in self.missing[other]:
                obs[field["missing"] + 7 * k + n] = 1
        obs[field["draw_pile"]] = len(self.boneyard) if rules.drawing else 0
        own = rules.side_of(seat)
        for k in range(sides):
            obs[field["scores"] + k] = self.scores[(own + k) % sides]
        obs[field["opener"]] = relative(self.opener)
        obs[field["to_move"]] = -1 if self.to_play is None else relative(self.to_play)
        return obs


# -- a whole game -------------------------------------------------------------------
class Match:
    """Rounds played to the target: opener rotation and game scores carried over.

    ``deal_source()`` returns ``(deal, chance_opener)``: a permutation of the 28 tiles
    and the seat that chance picks (used only when the round's opener rule is lots or
    random). A deal the rules would redeal is redealt: the source is asked again.
    ``round`` is always the round waiting for a move, unless the game is over.
    """

    def __init__(self, rules: Rules, deal_source: Callable[[], tuple[list[int], int | None]]) -> None:
        self.rules = rules
        self._deal_source = deal_source
        self.history: list[RoundResult] = []
        self.round: Round = self._new_round(None, [0] * rules.num_sides)

    @property
    def over(self) -> bool:
        return self.round.game_over

    @property
    def winner(self) -> int | None:
        return self.round.game_winner

    @property
    def scores(self) -> list[int]:
        return self.round.scores

    @property
    def rounds_played(self) -> int:
        return len(self.history)

    def step(self, action: int) -> None:
        self._check_not_over()
        self.round.step(action)
        self._after_move()

    def play_move(self, move: str) -> None:
        self._check_not_over()
        self.round.play_move(move)
        self._after_move()

    def _check_not_over(self) -> None:
        if self.over:
            raise ValueError(f"the game is over (winner {self.winner}); no more moves")

    def _after_move(self) -> None:
        finished = self.round
        if not finished.over:
            return
        self.history.append(
            RoundResult(
                finished.opener,
                finished.end,
                finished.winner,
                tuple(finished.points),
                tuple(finished.scores),
                finished.game_over,
                finished.game_winner,
            )
        )
        if not finished.game_over:
            self.round = self._new_round(self._next_opener(finished), list(finished.scores))

    def _next_opener(self, finished: Round) -> int | None:
        """later_opener: None means 'the first-round rule again'."""
        after = (finished.opener + 1) % self.rules.players
        rule = self.rules.later_opener
        if rule == "same":
            return None
        if rule == "next":
            return after
        return after if finished.winner is None else finished.winner

    def _new_round(self, opener: int | None, scores: list[int]) -> Round:
        hands, boneyard, chance = self._deal()
        if opener is None and self.rules.first_opener in CHANCE_OPENERS:
            opener = chance
        return Round(self.rules, hands, boneyard, opener, scores)

    def _deal(self) -> tuple[list[list[int]], list[int], int | None]:
        for _ in range(MAX_REDEALS):
            deal, chance = self._deal_source()
            hands, boneyard = deal_to_hands(self.rules, deal)
            if redeal_seat(self.rules, hands) is None:
                return hands, boneyard, chance
        raise ValueError(f"deal_source gave {MAX_REDEALS} deals in a row that {self.rules.name} would redeal")
