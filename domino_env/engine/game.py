"""A fast one-game engine: the reference rules in plain Python, built for speed.

``Game`` plays exactly what ``domino_env.engine.reference`` plays (same action encoding,
legal actions, draws and passes, scoring, match flow and observation vector; the
differential tests in ``tests/test_game.py`` hold it to that move for move), but:

* hands and the table are Python-int bitboards, and every per-tile or per-number
  question is a lookup in a table built once at import;
* each seat's observation lives in one flat int16 array that a move updates in
  place through index arrays prepared per game (a placement is about ten small
  writes); ``observation(seat)`` returns a copy;
* the legal actions of the seat to move are computed once per move and cached.

One ``Game`` is one episode at a time: a round (``episode="round"``) or a whole
game to the target (``episode="match"``, rounds dealt and opened by the rules).
Deals come from a seeded ``numpy.random.Generator`` or are given explicitly (a
deal permutation, or a replay record) so that an env can restart from a record.
For rendering, ``reference_round()`` rebuilds the current round in the reference
engine (its table geometry is what ``domino_env.tools.render`` draws).
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Sequence
from functools import reduce
from typing import Literal

import numpy as np

from domino_env.engine.actions import action_to_move
from domino_env.engine.deals import random_deals
from domino_env.engine.errors import IllegalMoveError
from domino_env.engine.observation import observation_fields, observation_size
from domino_env.engine.reference import Round, RoundResult, deal_to_hands, parse_move
from domino_env.engine.rules import (
    BLOCKED,
    CHANCE_OPENERS,
    CLOSED,
    DOMINO,
    END_CODES,
    END_NAMES,
    FIELD_NAMES,
    TARGET,
    Rules,
    winner_points,
)
from domino_env.engine.tiles import NUM_TILES, RANK, TILES, tile_index, tile_name
from domino_env.tools.records import RECORD_FIXED_FIELDS, play_moves, round_from_record

Episode = Literal["round", "match"]
EPISODES = ("round", "match")

LOW = [a for a, _ in TILES]
HIGH = [b for _, b in TILES]
PIPS = [a + b for a, b in TILES]
IS_DOUBLE = [a == b for a, b in TILES]
NUMBER_MASK = [sum(1 << t for t, (a, b) in enumerate(TILES) if n in (a, b)) for n in range(7)]
FIT = [
    reduce(operator.or_, (NUMBER_MASK[n] for n in range(7) if numbers >> n & 1), 0) for numbers in range(128)
]
"""``FIT[numbers]``: tiles carrying any number of a 7-bit number set."""
OTHER = [[b if a == n else a if b == n else -1 for n in range(7)] for a, b in TILES]
"""``OTHER[t][n]``: the number tile t shows after being placed against n (-1: no fit)."""
BIT_TILE = {1 << t: t for t in range(NUM_TILES)}
SIX_SIX = NUM_TILES - 1
DEAL_BATCH = 64
"""Random deals are drawn this many at a time (one NumPy call) and used in order."""


def tiles_of(mask: int) -> list[int]:
    """Tile indices of a bitboard, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(BIT_TILE[low])
        mask ^= low
    return out


def _subsets(mask: int) -> list[int]:
    """Every subset of a bitboard (the empty set included)."""
    out, sub = [], mask
    while True:
        out.append(sub)
        if not sub:
            return out
        sub = (sub - 1) & mask


ACTIONS_AT = [
    {sub: tuple(end * NUM_TILES + t for t in tiles_of(sub)) for mask in NUMBER_MASK for sub in _subsets(mask)}
    for end in range(4)
]
"""``ACTIONS_AT[end][tiles]``: the actions placing ``tiles`` (all carrying one number) on ``end``."""


def bitboard_pips(mask: int) -> int:
    """Pips of the tiles in a bitboard."""
    return sum(PIPS[t] for t in tiles_of(mask))


def rule_overrides(rules: Rules) -> dict:
    """The fields where ``rules`` differs from its preset (what a record's ``rules`` key holds)."""
    base = Rules.preset(rules.name, rules.players)
    return {
        f: getattr(rules, f)
        for f in FIELD_NAMES
        if f not in RECORD_FIXED_FIELDS and getattr(rules, f) != getattr(base, f)
    }


class _Layout:
    """Where each observation field sits in the flat array of all seats' rows, and what goes there.

    Every index array covers all observers at once (``observer * size + offset``) and is
    paired with value arrays built here, so a single NumPy assignment updates every seat.
    """

    def __init__(self, rules: Rules) -> None:
        p, sides = rules.players, rules.num_sides
        f = {name: where.start for name, where in observation_fields(rules).items()}
        self.size = size = observation_size(rules)
        self.own_tile = f["tile_owner"]
        rows = np.arange(p) * size
        relative = [(seat - np.arange(p)) % p for seat in range(p)]
        """``relative[seat]``: how each observer numbers ``seat``."""
        self.full = [np.full(p, v, dtype=np.int16) for v in range(-1, NUM_TILES + 2)]
        """``full[v + 1]``: the value v once per observer."""
        self.relative = [rel.astype(np.int16) for rel in relative]

        self.tile_fields = [
            (rows + np.array([[f[k] + t] for k in ("tile_owner", "tile_end", "tile_order")])).reshape(-1)
            for t in range(NUM_TILES)
        ]
        """``tile_fields[t]``: owner, end code and placement order of tile t, for every observer."""
        self.tile_values = [
            [
                [
                    np.concatenate([rel + 2, [code] * p, [order] * p]).astype(np.int16)
                    for order in range(NUM_TILES + 1)
                ]
                for code in range(6)
            ]
            for rel in relative
        ]
        """``tile_values[seat][end code][order]``: what ``tile_fields`` hold once ``seat`` placed a tile."""
        ends = [rows + f["end_number"] + e for e in range(4)]
        doubles = [rows + f["end_double"] + e for e in range(4)]
        self.end_numbers = ends
        self.all_end_numbers = np.concatenate(ends)
        self.end_fields = [np.concatenate(pair) for pair in zip(ends, doubles, strict=True)]
        self.end_values = [[np.repeat(np.array([n, d], np.int16), p) for d in (0, 1)] for n in range(7)]
        """``end_values[number][double]``: an end's number and double flag, for every observer."""
        self.opening_fields = np.concatenate(ends[:2] + doubles[:2])
        self.opening_values = [
            [np.repeat(np.array([a, b, a == b, a == b], np.int16), p) for b in range(7)] for a in range(7)
        ]
        """``opening_values[left][right]``: both long ends after the opening tile."""

        self.draw_pile = rows + f["draw_pile"]
        self.to_move = rows + f["to_move"]
        self.opener = rows + f["opener"]
        self.hand_size = [rows + f["hand_size"] + rel for rel in relative]
        """``hand_size[seat]``: where each observer keeps ``seat``'s hand size."""
        self.missing = [
            ((rows + f["missing"] + 7 * rel)[:, None] + np.arange(7)).reshape(-1) for rel in relative
        ]
        self.missing_values = [np.tile((n >> np.arange(7)) & 1, p).astype(np.int16) for n in range(128)]
        """``missing_values[numbers]``: the 7 flags of a number set, once per observer."""
        side_of = np.array([rules.side_of(s) for s in range(p)])
        self.scores = (rows[:, None] + f["scores"] + np.arange(sides)).reshape(-1)
        self.score_sides = ((side_of[:, None] + np.arange(sides)) % sides).reshape(-1).tolist()
        """Side whose score goes at each entry of ``scores``."""
        self.all_minus_one = np.full(4 * p, -1, dtype=np.int16)


class Game:
    """One game of dominoes (a round or a match) with incremental observations.

    Example::

        game = Game(Rules.preset("block", 2), seed=0)
        while not game.over:
            obs = game.observation(game.to_play)       # int16, Round.observation layout
            end = game.step(game.legal_actions()[0])   # draws and passes happen inside
        end.points, end.scores                         # the RoundResult of the last round

    Public state (read only): ``to_play`` (None once the episode is over), ``opener``,
    ``hands`` (bitboards), ``scores``/``points`` per side, ``draws``/``passes`` per
    seat this round, ``missing`` (7-bit sets of the numbers each seat is known to
    lack), ``deal`` (this round's 28-tile deal), ``results`` (RoundResult of each round
    of the episode so far).
    """

    def __init__(
        self, rules: Rules, episode: Episode = "round", seed: int | np.random.Generator | None = None
    ):
        if not isinstance(rules, Rules):
            raise TypeError(f"rules must be a Rules, got {type(rules).__name__}")
        if episode not in EPISODES:
            raise ValueError(f"episode must be 'round' or 'match', got {episode!r}")
        self.rules = rules
        self.episode = episode
        self.players = rules.players
        self.num_sides = rules.num_sides
        self.num_ends = rules.num_ends
        self.num_actions = rules.num_actions
        self.obs_size = observation_size(rules)
        self.side_of = [rules.side_of(s) for s in range(rules.players)]
        self._layout = _Layout(rules)
        self._actions_at = ACTIONS_AT[: rules.num_ends]
        self._no_actions = np.zeros(rules.num_actions, dtype=np.int8)
        self._obs = np.zeros(rules.players * self.obs_size, dtype=np.int16)
        self._rows = self._obs.reshape(rules.players, self.obs_size)
        self.rng = np.random.default_rng()
        self._deals: list[tuple[list[int], int]] = []
        self.reset(seed)

    # -- starting episodes ---------------------------------------------------------
    def reset(
        self,
        seed: int | np.random.Generator | None = None,
        deal: Sequence[int] | np.ndarray | None = None,
        opener: int | None = None,
        scores: list[int] | None = None,
    ) -> None:
        """Start a new episode: a random deal, or ``deal`` (28 tiles: hands in seat order, then
        the boneyard in draw order) with ``opener`` (None: the first-round rule; needed for
        chance openers) and ``scores`` per side before the round. A seed reseeds the deals."""
        self._reseed(seed)
        self.results: list[RoundResult] = []
        if deal is None:
            if opener is not None or scores is not None:
                raise ValueError("opener and scores go with an explicit deal")
            deal, chance = self._next_deal()
            self._start_round(deal, chance if self.rules.first_opener in CHANCE_OPENERS else None, None)
            return
        # The reference Round validates the deal, the opener and the scores (clear ValueErrors).
        hands, boneyard = deal_to_hands(self.rules, deal)
        checked = Round(self.rules, hands, boneyard, opener, scores)
        start_opener = None if opener is None else checked.opener
        self._start_round([t for hand in hands for t in hand] + boneyard, start_opener, checked.scores)

    def reset_from_record(self, record: dict, seed: int | np.random.Generator | None = None) -> None:
        """Start from a replay record (``domino_env.tools.records``) and replay its moves.

        The record's rules must be this game's rules; its moves must leave the round unfinished.
        A seed reseeds the random deals of the later rounds of a match.
        """
        checked = round_from_record(record)
        if checked.rules != self.rules:
            theirs, ours = dataclasses.asdict(checked.rules), dataclasses.asdict(self.rules)
            diff = ", ".join(
                f"{k}: record {theirs[k]!r}, game {ours[k]!r}" for k in ours if theirs[k] != ours[k]
            )
            raise ValueError(f"the record's rules differ from this game's ({diff})")
        deal = [t for hand in checked.hands for t in hand] + checked.boneyard
        scores = list(checked.scores)
        moves = record.get("moves", [])
        play_moves(checked, moves)  # validates every move, naming the one that fails
        if checked.over:
            raise ValueError(f"the record's moves end the round ({checked.end}); nothing is left to play")
        self._reseed(seed)
        self.results = []
        self._start_round(deal, checked.opener if "opener" in record else None, scores)
        for move in moves:
            self.play_move(move)

    def _reseed(self, seed: int | np.random.Generator | None) -> None:
        """A seed restarts the deal sequence; None keeps drawing from the current generator."""
        if seed is not None:
            self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
            self._deals = []

    def _next_deal(self) -> tuple[list[int], int]:
        """The next random deal (one the rules accept) and the seat chance picks for it."""
        if not self._deals:
            deals = random_deals(self.rules, DEAL_BATCH, self.rng).tolist()
            chance = self.rng.integers(self.players, size=DEAL_BATCH).tolist()
            self._deals = list(zip(deals, chance, strict=True))[::-1]
        return self._deals.pop()

    def _start_round(self, deal: list[int], opener: int | None, scores: list[int] | None) -> None:
        """Deal ``deal``; ``opener`` None applies the forced first-round rule (highest tile / 6-6)."""
        rules, p, h = self.rules, self.players, self.rules.hand_size
        self.deal = deal
        self.hands = [sum(1 << t for t in deal[s * h : (s + 1) * h]) for s in range(p)]
        self._boneyard = deal[p * h :]
        self._bone_pos = 0 if rules.drawing else len(self._boneyard)
        self._start_opener = opener
        self._start_scores = list(scores) if scores is not None else [0] * self.num_sides
        self.scores = list(self._start_scores)
        self.points = [0] * self.num_sides
        self._forced = -1
        if opener is None:
            dealt = deal[: p * h]
            self._forced = SIX_SIX if rules.first_opener == "six_six" else max(dealt, key=RANK.__getitem__)
            opener = dealt.index(self._forced) // h
        self.opener = self.to_play = opener
        self.table = 0
        self.ends = [-1, -1, -1, -1]
        self._end_tile = [-1, -1, -1, -1]
        self.opening: tuple[int, int] | None = None
        self._spinner = -1
        self._spin_need = 0
        self.num_placed = 0
        self._last_move = [0] * p
        self.missing = [0] * p
        self.draws = [0] * p
        self.passes = [0] * p
        self._actions: list[int] = []
        self.over = False
        self._reset_observation()
        self._update_legal()

    def _reset_observation(self) -> None:
        lay, obs, size = self._layout, self._obs, self._layout.size
        obs.fill(0)
        for seat, hand in enumerate(self.hands):
            for t in tiles_of(hand):
                obs[seat * size + lay.own_tile + t] = 1
        self._write_scores()
        obs[lay.opener] = lay.relative[self.opener]
        obs[lay.all_end_numbers] = lay.all_minus_one
        obs[lay.draw_pile] = lay.full[len(self._boneyard) + 1 if self.rules.drawing else 1]
        for seat in range(self.players):
            obs[lay.hand_size[seat]] = lay.full[self.hands[seat].bit_count() + 1]
        obs[lay.to_move] = lay.relative[self.to_play]

    def _write_scores(self) -> None:
        scores = self.scores
        self._obs[self._layout.scores] = [scores[s] for s in self._layout.score_sides]

    # -- queries ---------------------------------------------------------------------
    def legal_actions(self) -> tuple[int, ...]:
        """Legal actions (``end * 28 + tile``) of the seat to move, ascending; () once over."""
        return self._legal

    def legal_mask(self) -> np.ndarray:
        """int8 mask over the ``num_actions`` actions (1 = legal), a new array."""
        mask = self._no_actions.copy()
        for action in self._legal:
            mask[action] = 1
        return mask

    def legal_moves(self) -> list[str]:
        """Legal moves in record notation (``"6-3:left"``; bare ``"6-3"`` opens), in action order."""
        return [self.action_to_move(a) for a in self._legal]

    def observation(self, seat: int) -> np.ndarray:
        """What ``seat`` may know, int16 (layout of ``Round.observation``), a new array."""
        return self._rows[seat].copy()

    def action_to_move(self, action: int) -> str:
        """``"6-3:right"``; a bare ``"6-3"`` for an opening move (empty table, end 0)."""
        action = operator.index(action)
        if not 0 <= action < self.num_actions:
            raise ValueError(f"action {action} is out of range 0..{self.num_actions - 1}")
        return action_to_move(action, opening=self.table == 0 and action < NUM_TILES)

    def move_to_action(self, move: str) -> int:
        """The action of a move in record notation.

        ``"6-3:right"`` encodes directly; a bare ``"6-3"`` is the opening action on an empty
        table (the action space always opens high number left) and otherwise the one end the
        tile fits (IllegalMoveError when it fits none or several).
        """
        halves, end = parse_move(move)
        tile = tile_index(*halves)
        if end is not None:
            index = END_NAMES.index(end)
            if index >= self.num_ends:
                raise ValueError(f"move {move!r}: {self.rules.name} has no spinner, so no {end!r} end")
            return index * NUM_TILES + tile
        if self.table == 0:
            return tile
        fitting = [a for a in self._legal if a % NUM_TILES == tile]
        if len(fitting) != 1:
            raise self._illegal(f"move {move!r}", "it fits several ends; name one" if fitting else None)
        return fitting[0]

    def hand_pips(self) -> list[int]:
        """Pips left in each seat's hand."""
        return [bitboard_pips(hand) for hand in self.hands]

    # -- moves -------------------------------------------------------------------------
    def step(self, action: int) -> RoundResult | None:
        """Place the tile of a legal action; draws, passes, scoring and the next round follow.

        Returns the ``RoundResult`` when a round ended on this move (in match mode the next
        round has already been dealt), else None.
        """
        if self.over:
            raise ValueError(f"action {action!r} cannot be played: the {self.episode} is over")
        try:
            action = operator.index(action)
        except TypeError:
            raise self._illegal(f"action {action!r}") from None
        if action not in self._legal:
            raise self._illegal(self._describe(action))
        if self.table == 0:
            tile = action
            return self._place(tile, 0, HIGH[tile], LOW[tile])
        end, tile = divmod(action, NUM_TILES)
        return self._place(tile, end, -1, -1)

    def play_move(self, move: str) -> RoundResult | None:
        """Play a move in record notation (``"3-6"`` opens with the 3 on the left)."""
        if self.over:
            raise ValueError(f"move {move!r} cannot be played: the {self.episode} is over")
        halves, end = parse_move(move)
        tile = tile_index(*halves)
        if self.table == 0:
            if end is not None:
                raise ValueError(
                    f"move {move!r}: the opening move is written without an end, e.g. {halves[0]}-{halves[1]}"
                )
            if tile not in self._legal:
                raise self._illegal(f"move {move!r}")
            return self._place(tile, 0, halves[0], halves[1])
        action = self.move_to_action(move)
        if action not in self._legal:
            raise self._illegal(f"move {move!r}")
        return self.step(action)

    def _describe(self, action: int) -> str:
        if not 0 <= action < self.num_actions:
            return f"action {action} (outside 0..{self.num_actions - 1})"
        return f"action {action} ({self.action_to_move(action)})"

    def _illegal(self, what: str, why: str | None = None) -> IllegalMoveError:
        reason = f" ({why})" if why else ""
        return IllegalMoveError(
            f"illegal {what}{reason} for seat {self.to_play}: legal moves are {', '.join(self.legal_moves())}"
        )

    def _place(self, tile: int, end: int, left: int, right: int) -> RoundResult | None:
        """Put ``tile`` on ``end`` (opening: ``left``/``right`` are its two numbers) and go on."""
        seat, lay, obs = self.to_play, self._layout, self._obs
        self.hands[seat] ^= 1 << tile
        self.num_placed += 1
        self._last_move[seat] = self.num_placed
        self._actions.append(end * NUM_TILES + tile)
        ends, end_tile = self.ends, self._end_tile
        double = IS_DOUBLE[tile]
        if self.table == 0:
            self.opening = (left, right)
            ends[0], ends[1] = left, right
            end_tile[0] = end_tile[1] = tile
            obs[lay.tile_fields[tile]] = lay.tile_values[seat][1][1]
            obs[lay.opening_fields] = lay.opening_values[left][right]
            if double and self.rules.spinner:
                self._spinner, self._spin_need = tile, 2
        else:
            outer_before = end_tile[end]
            number = ends[end] = OTHER[tile][ends[end]]
            end_tile[end] = tile
            obs[lay.tile_fields[tile]] = lay.tile_values[seat][end + 2][self.num_placed]
            obs[lay.end_fields[end]] = lay.end_values[number][double]
            if self.rules.spinner:
                self._grow_spinner(tile, end, outer_before)
        self.table |= 1 << tile
        obs[lay.hand_size[seat]] = lay.full[self.hands[seat].bit_count() + 1]
        return self._after_placement(seat)

    def _grow_spinner(self, tile: int, end: int, outer_before: int) -> None:
        """The first double is the spinner; its short sides open once both long sides hold a tile."""
        if self._spin_need and outer_before == self._spinner and end < 2:
            self._spin_need -= 1
            if not self._spin_need:
                number = LOW[self._spinner]
                self.ends[2] = self.ends[3] = number
                lay = self._layout
                self._obs[lay.end_numbers[2]] = self._obs[lay.end_numbers[3]] = lay.full[number + 1]
        elif self._spinner < 0 and IS_DOUBLE[tile]:
            self._spinner, self._spin_need = tile, 1

    # -- order of events after a placement (docs/engine.md) ---------------------------------
    def _after_placement(self, seat: int) -> RoundResult | None:
        rules, side = self.rules, self.side_of[seat]
        if rules.fives:
            count = self.fives_count()
            if count and count % 5 == 0:
                self._award(side, count)
                self._write_scores()
        if rules.target_mid_round and self.scores[side] >= rules.target:
            return self._end_at_target(seat, side)
        if not self.hands[seat]:
            return self._finish(END_CODES[DOMINO], side)
        if rules.closed_game and self._is_closed():
            return self._finish(END_CODES[CLOSED], self._blocked_winner(seat))
        if self._next_turn(seat):
            self._update_legal()
            return None
        return self._finish(END_CODES[BLOCKED], self._blocked_winner(seat))

    def fives_count(self) -> int:
        """Sum of the open ends as fives scoring counts them (docs/engine.md)."""
        if self.num_placed <= 1:
            return PIPS[self._end_tile[0]] if self.num_placed else 0
        count = 0
        for number, outer in zip(self.ends, self._end_tile, strict=True):
            if outer >= 0:
                count += 2 * number if IS_DOUBLE[outer] else number
        return count

    def _is_closed(self) -> bool:
        """Every open end shows one number and its 7 tiles are all on the table."""
        n = self.ends[0]
        if any(e >= 0 and e != n for e in self.ends):
            return False
        return NUMBER_MASK[n] & ~self.table == 0

    def _next_turn(self, placer: int) -> bool:
        """Seats after the placer (placer last) play, draw until a fit, or pass. False: blocked."""
        p, hands, lay, obs = self.players, self.hands, self._layout, self._obs
        numbers = 0
        for n in self.ends:
            if n >= 0:
                numbers |= 1 << n
        fit = FIT[numbers]
        for k in range(1, p + 1):
            seat = (placer + k) % p
            if hands[seat] & fit:
                self.to_play = seat
                obs[lay.to_move] = lay.relative[seat]
                return True
            if self._bone_pos < len(self._boneyard):
                found = self._draw_until_fit(seat, fit)
                self.missing[seat] = numbers
                obs[lay.missing[seat]] = lay.missing_values[numbers]
                if found:
                    self.to_play = seat
                    obs[lay.to_move] = lay.relative[seat]
                    return True
            else:
                self.missing[seat] |= numbers
                obs[lay.missing[seat]] = lay.missing_values[self.missing[seat]]
            self.passes[seat] += 1
        return False

    def _draw_until_fit(self, seat: int, fit: int) -> bool:
        """Draw in boneyard order until a tile fits (the drawer sees each tile it takes)."""
        lay, obs, bone = self._layout, self._obs, self._boneyard
        start, pos, found = self._bone_pos, self._bone_pos, False
        base = seat * lay.size + lay.own_tile
        while pos < len(bone) and not found:
            tile = bone[pos]
            pos += 1
            self.hands[seat] |= 1 << tile
            obs[base + tile] = 1
            found = bool(fit >> tile & 1)
        self._bone_pos = pos
        self.draws[seat] += pos - start
        obs[lay.draw_pile] = lay.full[len(bone) - pos + 1]
        obs[lay.hand_size[seat]] = lay.full[self.hands[seat].bit_count() + 1]
        return found

    def _update_legal(self) -> None:
        """Cache the legal actions of the seat to move."""
        hand = self.hands[self.to_play]
        if self.table == 0:
            self._legal = (self._forced,) if self._forced >= 0 else tuple(tiles_of(hand))
            return
        legal: tuple[int, ...] = ()
        for actions_at, n in zip(self._actions_at, self.ends, strict=False):
            if n >= 0:
                legal += actions_at[hand & NUMBER_MASK[n]]
        self._legal = legal

    # -- round end and scoring ---------------------------------------------------------------
    def _side_totals(self, per_seat: list[int]) -> list[int]:
        totals = [0] * self.num_sides
        for seat, value in enumerate(per_seat):
            totals[self.side_of[seat]] += value
        return totals

    def _blocked_winner(self, blocker: int) -> int | None:
        """Winning side of a blocked or closed round (blocked_winner, then blocked_tie)."""
        rules = self.rules
        pips = self._side_totals(self.hand_pips())
        if rules.blocked_winner == "lightest_hand":
            merit = [-x for x in pips]
        elif rules.blocked_winner == "heaviest_hand":
            merit = pips
        else:
            merit = self.scores
        best = max(merit)
        tied = [side for side, m in enumerate(merit) if m == best]
        if len(tied) == 1:
            return tied[0]
        tie = rules.blocked_tie
        if tie == "nobody":
            return None
        if tie == "opener":
            order = (self.side_of[(self.opener + k) % self.players] for k in range(self.players))
            return next(side for side in order if side in tied)
        if tie == "blocker_loses":
            others = [side for side in tied if side != self.side_of[blocker]]
            return others[0] if len(others) == 1 else None
        tiles = self._side_totals([hand.bit_count() for hand in self.hands])
        fewest = min(tiles[side] for side in tied)
        tied = [side for side in tied if tiles[side] == fewest]
        if len(tied) == 1:
            return tied[0]
        latest = [0] * self.num_sides
        for seat, order in enumerate(self._last_move):
            latest[self.side_of[seat]] = max(latest[self.side_of[seat]], order)
        best_side = max(tied, key=latest.__getitem__)
        return best_side if latest[best_side] else None

    def _end_points(self, winner: int) -> int:
        """What the round winner scores (rules.round_points)."""
        pips = self._side_totals(self.hand_pips())
        own = pips[winner]
        opp = sum(pips) - own
        return winner_points(self.rules.round_points, opp, own)

    def _award(self, side: int, points: int) -> None:
        self.points[side] += points
        self.scores[side] += points

    def _end_at_target(self, seat: int, side: int) -> RoundResult:
        """Mid-round target: the game ends now; domino points count only if the hand is empty."""
        end = END_CODES[TARGET]
        if not self.hands[seat]:
            end = END_CODES[DOMINO]
            self._award(side, self._end_points(side))
        return self._close(end, side, True, side)

    def _finish(self, end: str, winner: int | None) -> RoundResult:
        """Score the winner and decide whether the game is over."""
        if winner is not None:
            self._award(winner, self._end_points(winner))
        top = max(self.scores)
        leaders = [side for side, score in enumerate(self.scores) if score == top]
        decided = top >= self.rules.target and len(leaders) == 1
        return self._close(end, winner, decided, leaders[0] if decided else None)

    def _close(self, end: str, winner: int | None, game_over: bool, game_winner: int | None) -> RoundResult:
        """Record the round's end, then stop (round over / game over) or deal the next round."""
        result = RoundResult(
            self.opener, end, winner, tuple(self.points), tuple(self.scores), game_over, game_winner
        )
        self.results.append(result)
        if self.episode == "round" or game_over:
            self._stop()
        else:
            self._start_round(*self._next_round(result))
        return result

    def _stop(self) -> None:
        """The episode is over: nobody is to move; the table stays as it ended."""
        self.over = True
        self.to_play = None
        self._legal = ()
        self._write_scores()
        self._obs[self._layout.to_move] = self._layout.full[0]

    def _next_round(self, finished: RoundResult) -> tuple[list[int], int | None, list[int]]:
        """Deal, opener (None: the first-round rule) and scores of the next round of a match."""
        deal, chance = self._next_deal()
        rule, after = self.rules.later_opener, (finished.opener + 1) % self.players
        if rule == "next":
            opener = after
        elif rule == "winner":
            opener = after if finished.winner is None else finished.winner
        else:
            opener = chance if self.rules.first_opener in CHANCE_OPENERS else None
        return deal, opener, list(finished.scores)

    # -- the round as the reference engine and as a record ------------------------------------
    def reference_round(self) -> Round:
        """The current round rebuilt in the reference engine (for rendering and checks)."""
        hands, boneyard = deal_to_hands(self.rules, self.deal)
        rnd = Round(self.rules, hands, boneyard, self._start_opener, self._start_scores)
        for i, action in enumerate(self._actions):
            if i == 0:
                rnd.play_move("{}-{}".format(*self.opening))
            else:
                rnd.step(action)
        return rnd

    def round_record(self) -> dict:
        """The current round as a replay record (deal, opener, scores, rules and moves so far)."""
        rules, h = self.rules, self.rules.hand_size
        record: dict = {
            "preset": rules.name,
            "players": rules.players,
            "hands": [[tile_name(t) for t in self.deal[s * h : (s + 1) * h]] for s in range(self.players)],
            "boneyard": [tile_name(t) for t in self.deal[self.players * h :]],
            "scores": list(self._start_scores),
        }
        if self._start_opener is not None:
            record["opener"] = self._start_opener
        overrides = rule_overrides(rules)
        if overrides:
            record["rules"] = overrides
        moves = [action_to_move(a) for a in self._actions]
        if moves:
            moves[0] = "{}-{}".format(*self.opening)
        record["moves"] = moves
        return record

    def __repr__(self) -> str:
        state = "over" if self.over else f"seat {self.to_play} to move"
        return f"Game({self.rules.name!r}, players={self.players}, episode={self.episode!r}, {state})"
