"""What a seat may know, read off its observation, and what each legal move would lead to.

``Board`` parses a batch of observations into bitboards (own hand, unseen tiles,
table), the open ends and the numbers each seat is known to lack; every field
comes from ``observation_fields(rules)``, nothing from the engine. ``Moves``
lists the legal actions of the batch sparsely (one entry per legal action, rows
in order) and computes, on demand, the features the heuristic bots score moves
with. Working on the few legal actions instead of the whole action space keeps
bots cheap enough for the arena's throughput.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from domino_env.engine.deals import BIT
from domino_env.engine.observation import observation_fields
from domino_env.engine.rules import Rules
from domino_env.engine.tiles import (
    ALL_TILES_MASK,
    HIGH,
    IS_DOUBLE,
    LOW,
    NUM_TILES,
    NUMBER_BIT,
    NUMBER_MASK,
    OTHER_HALF_FLAT,
    PIPS,
    TILE_INDEX,
)

FITSET = np.array(
    [np.bitwise_or.reduce(NUMBER_MASK[[n for n in range(7) if m >> n & 1]]) for m in range(128)],
    dtype=np.uint64,
)
"""``FITSET[numbers]``: tiles carrying any number of a 7-bit number set."""
ALLOWED = ALL_TILES_MASK & ~FITSET
"""``ALLOWED[missing]``: tiles a seat known to lack ``missing`` may hold."""
NUMBER_WEIGHTS = (1 << np.arange(7)).astype(np.int64)
TILE_INDEX_FLAT = np.concatenate([TILE_INDEX.reshape(-1), [-1]]).astype(np.intp)
"""``TILE_INDEX_FLAT[a * 7 + b]``: tile a-b; index 49 (out of range numbers) gives -1."""


def pack_tiles(flags: np.ndarray) -> np.ndarray:
    """(B, 28) bool -> (B,) uint64 bitboards."""
    out = np.zeros((len(flags), 8), dtype=np.uint8)
    out[:, :4] = np.packbits(flags, axis=1, bitorder="little")
    return out.view("<u8").reshape(-1)


def unpack_tiles(boards: np.ndarray) -> np.ndarray:
    """(...,) uint64 bitboards -> (..., 28) bool."""
    boards = np.ascontiguousarray(boards, dtype=np.uint64)
    bytes_ = boards.view(np.uint8).reshape(*boards.shape, 8)
    return np.unpackbits(bytes_, axis=-1, count=NUM_TILES, bitorder="little").astype(bool)


def number_sets(flags: np.ndarray) -> np.ndarray:
    """(..., 7) 0/1 flags -> (...,) uint8 7-bit number sets."""
    return (flags.astype(np.int64) @ NUMBER_WEIGHTS).astype(np.uint8)


def hand_pips(boards: np.ndarray) -> np.ndarray:
    """Pips of each bitboard."""
    return (unpack_tiles(boards) * PIPS).sum(axis=-1).astype(np.float64)


def spinner_state(tile_end: np.ndarray, tile_order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(spinner tile or -1, long-side attachments still needed before its short sides open).

    The spinner is the first double placed. An opening spinner needs a tile on
    each long side; one placed later at an end needs one tile on its outward side
    (docs/engine.md). Both read off the table's end codes and placement order.
    """
    rows = np.arange(len(tile_order))
    doubles = (tile_order > 0) & IS_DOUBLE
    has = doubles.any(axis=1)
    spinner = np.where(doubles, tile_order, 1000).argmin(axis=1)
    order = tile_order[rows, spinner][:, None]
    code = tile_end[rows, spinner]
    after = tile_order > order
    left = (after & (tile_end == 2)).any(axis=1)
    right = (after & (tile_end == 3)).any(axis=1)
    need = np.where(code == 1, 2 - left - right.astype(int), 1 - np.where(code == 2, left, right))
    return np.where(has, spinner, -1), np.where(has, need, 0)


class Board:
    """A batch of observations (seat-relative: seat 0 is the seat to move), parsed lazily."""

    def __init__(self, rules: Rules, obs: np.ndarray) -> None:
        self.rules = rules
        self.obs = obs
        self.fields = observation_fields(rules)

    def field(self, name: str) -> np.ndarray:
        return self.obs[:, self.fields[name]]

    @cached_property
    def owner(self) -> np.ndarray:
        """(B, 28) 0 unseen, 1 own hand, 2 + k placed by relative seat k."""
        return self.field("tile_owner")

    @cached_property
    def hand(self) -> np.ndarray:
        return pack_tiles(self.owner == 1)

    @cached_property
    def unseen(self) -> np.ndarray:
        """Tiles in other hands or the boneyard."""
        return pack_tiles(self.owner == 0)

    @cached_property
    def ends(self) -> np.ndarray:
        """(B, 4) numbers at left, right, up, down; -1 when not open."""
        return self.field("end_number").astype(np.intp)

    @cached_property
    def end_double(self) -> np.ndarray:
        return self.field("end_double").astype(bool)

    @cached_property
    def missing(self) -> np.ndarray:
        """(B, P) 7-bit sets of the numbers each relative seat is known to lack."""
        p = self.rules.players
        return number_sets(self.field("missing").reshape(-1, p, 7))

    @cached_property
    def possible(self) -> np.ndarray:
        """(B, P) tiles each relative seat may hold: unseen and free of its missing numbers."""
        return self.unseen[:, None] & ALLOWED[self.missing]

    @cached_property
    def opening(self) -> np.ndarray:
        """(B,) the table is empty: the move opens the round."""
        return self.ends[:, 0] < 0

    @cached_property
    def number_counts(self) -> np.ndarray:
        """(B, 7) own tiles carrying each number."""
        return np.bitwise_count(self.hand[:, None] & NUMBER_MASK[None, :]).astype(np.int64)

    @cached_property
    def spinner(self) -> tuple[np.ndarray, np.ndarray]:
        return spinner_state(self.field("tile_end"), self.field("tile_order"))

    @cached_property
    def spinner_side(self) -> np.ndarray:
        """(B,) the long end (0 left, 1 right) whose next tile opens the spinner's short sides, -1 for none.

        That is the one side the spinner still needs (``need == 1``): for an opening
        spinner the side with nothing on it yet, for a later one its outward side.
        """
        spinner, need = self.spinner
        rows = np.arange(len(spinner))
        code = self.field("tile_end")[rows, np.maximum(spinner, 0)]
        left_done = (self.field("tile_end") == 2).any(axis=1)
        side = np.where(code == 1, np.where(left_done, 1, 0), code - 2)
        return np.where(need == 1, side, -1)

    @cached_property
    def end_value(self) -> np.ndarray:
        """(B, 4) what each end adds to the fives count (0 when closed or an unplayed short side)."""
        tile_end = self.field("tile_end")
        played = np.ones((len(self.obs), 4), dtype=bool)
        played[:, 2] = (tile_end == 4).any(axis=1)
        played[:, 3] = (tile_end == 5).any(axis=1)
        value = self.ends * (1 + self.end_double)
        return np.where(played & (self.ends >= 0), value, 0)


class Moves:
    """The legal actions of a batch, one entry per (row, action), and what each would lead to.

    Entries are row-major (rows ascending, actions ascending within a row), so a
    row's entries are contiguous from ``starts[row]``; ``best`` picks the
    highest-scoring entry of each row (ties: the lowest action).
    """

    def __init__(self, board: Board, mask: np.ndarray) -> None:
        self.board = board
        self.row, self.action = np.nonzero(mask)
        counts = np.bincount(self.row, minlength=len(mask))
        if (counts == 0).any():
            raise ValueError(f"row {int(np.flatnonzero(counts == 0)[0])} of the mask has no legal action")
        self.starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        self.tile = self.action % NUM_TILES
        self.end = self.action // NUM_TILES
        self._fitting: dict[int, np.ndarray] = {}

    def best(self, score: np.ndarray) -> np.ndarray:
        """(B,) the action with the highest score in each row."""
        top = np.maximum.reduceat(score, self.starts)
        index = np.where(score >= top[self.row], np.arange(len(score)), len(score))
        return self.action[np.minimum.reduceat(index, self.starts)]

    def per_row(self, values: np.ndarray) -> np.ndarray:
        """Broadcast a (B, ...) row quantity to the entries."""
        return values[self.row]

    # -- the position after the move -----------------------------------------------------
    @cached_property
    def pips(self) -> np.ndarray:
        return PIPS[self.tile].astype(np.float64)

    @cached_property
    def double(self) -> np.ndarray:
        return IS_DOUBLE[self.tile]

    @cached_property
    def opening(self) -> np.ndarray:
        return self.per_row(self.board.opening)

    @cached_property
    def hand_after(self) -> np.ndarray:
        return self.per_row(self.board.hand) & ~BIT[self.tile]

    @cached_property
    def tiles_left(self) -> np.ndarray:
        return np.bitwise_count(self.hand_after)

    @cached_property
    def ends_after(self) -> np.ndarray:
        """(L, 4) the open ends after the move, the spinner's short sides included once they open."""
        ends = self.per_row(self.board.ends).copy()
        rows = np.arange(len(ends))
        shown = OTHER_HALF_FLAT[self.tile * 8 + np.where(self.opening, 7, ends[rows, self.end])]
        ends[rows, self.end] = shown
        opening = np.flatnonzero(self.opening)
        ends[opening, 0] = HIGH[self.tile[opening]]
        ends[opening, 1] = LOW[self.tile[opening]]
        if self.board.rules.spinner:
            spinner = self.per_row(self.board.spinner[0])
            opens = self.end == self.per_row(self.board.spinner_side)
            ends[opens, 2] = HIGH[spinner[opens]]
            ends[opens, 3] = HIGH[spinner[opens]]
        return ends

    @cached_property
    def numbers_after(self) -> np.ndarray:
        """(L,) 7-bit set of the numbers showing at the open ends after the move."""
        bits = NUMBER_BIT[self.ends_after]
        return bits[:, 0] | bits[:, 1] | bits[:, 2] | bits[:, 3]

    # -- features ---------------------------------------------------------------------------
    @cached_property
    def variety(self) -> np.ndarray:
        """Distinct numbers still held after the move."""
        held = (self.hand_after[:, None] & NUMBER_MASK[None, :]) != 0
        return held.sum(axis=1).astype(np.float64)

    @cached_property
    def held_numbers(self) -> np.ndarray:
        """Own tiles sharing a number with the played tile (the numbers we are long in)."""
        counts = self.per_row(self.board.number_counts)
        rows = np.arange(len(counts))
        low, high = LOW[self.tile], HIGH[self.tile]
        return (counts[rows, low] + np.where(low == high, 0, counts[rows, high])).astype(np.float64)

    @cached_property
    def follow(self) -> np.ndarray:
        """Own tiles that would fit the ends after the move (our next turn, if nothing changes)."""
        return np.bitwise_count(self.hand_after & FITSET[self.numbers_after]).astype(np.float64)

    def fitting(self, seat: int) -> np.ndarray:
        """(L,) bitboards of the tiles relative ``seat`` may hold that fit the ends after the move."""
        if seat not in self._fitting:
            possible = self.per_row(self.board.possible[:, seat])
            self._fitting[seat] = possible & FITSET[self.numbers_after]
        return self._fitting[seat]

    def options(self, seat: int) -> np.ndarray:
        """How many tiles relative ``seat`` may hold that fit the ends after the move."""
        return np.bitwise_count(self.fitting(seat)).astype(np.float64)

    @cached_property
    def next_blocked(self) -> np.ndarray:
        """The next seat surely cannot play after the move (known to lack every end, or no such tile left)."""
        return self.options(1) == 0

    @cached_property
    def lock(self) -> np.ndarray:
        """The next seat surely cannot play while we still can: it must draw or pass, we play on."""
        return self.next_blocked & (self.follow > 0)

    @cached_property
    def blocked_margin(self) -> np.ndarray:
        """Where the move surely blocks the round (nobody can play or draw after it): how much
        lighter our side's hand is than the lightest other side's, estimated (0 elsewhere)."""
        board, rules = self.board, self.board.rules
        stuck = self.follow == 0
        for seat in range(1, rules.players):
            stuck &= self.options(seat) == 0
        if rules.drawing:
            stuck &= self.per_row(board.field("draw_pile")[:, 0]) == 0
        possible = unpack_tiles(board.possible)  # (B, P, 28)
        mean_pips = (possible * PIPS).sum(axis=2) / np.maximum(possible.sum(axis=2), 1)
        estimate = self.per_row(mean_pips * board.field("hand_size"))
        estimate[:, 0] = hand_pips(self.hand_after)
        sides = np.array([rules.side_of(s) for s in range(rules.players)])
        totals = np.stack([estimate[:, sides == side].sum(axis=1) for side in range(rules.num_sides)], axis=1)
        return np.where(stuck, totals[:, 1:].min(axis=1) - totals[:, 0], 0.0)

    @cached_property
    def partner_blocked(self) -> np.ndarray:
        """Teams: our partner surely could not play on the ends we leave."""
        if not self.board.rules.teams:
            return np.zeros(len(self.tile), dtype=bool)
        return self.options(2) == 0

    @cached_property
    def domino(self) -> np.ndarray:
        return self.tiles_left == 0

    @cached_property
    def values_after(self) -> np.ndarray:
        """(L, 4) each open end's share of the fives count after the move."""
        values = self.per_row(self.board.end_value).copy()
        rows = np.arange(len(values))
        values[rows, self.end] = self.ends_after[rows, self.end] * (1 + self.double)
        opening = np.flatnonzero(self.opening)
        values[opening, 1] = LOW[self.tile[opening]] * (1 + self.double[opening])
        return values

    @cached_property
    def fives_now(self) -> np.ndarray:
        """Points the move scores at once (All Fives / muggins), 0 without fives scoring."""
        if not self.board.rules.fives:
            return np.zeros(len(self.tile))
        count = np.where(self.opening, PIPS[self.tile], self.values_after.sum(axis=1))
        return np.where((count % 5 == 0) & (count > 0), count, 0).astype(np.float64)

    @cached_property
    def fives_threat(self) -> np.ndarray:
        """The most the next seat could score at once on the ends we leave, with a tile it may hold."""
        if not self.board.rules.fives:
            return np.zeros(len(self.tile))
        values, ends = self.values_after, self.ends_after
        base = values.sum(axis=1, keepdims=True) - values  # (L, 4): the count without that end
        x0 = (-base) % 5
        shown = np.stack([x0, x0 + 5, ends], axis=2)  # candidate exposed numbers x; x = n is the double
        added = np.where(shown == ends[:, :, None], 2 * ends[:, :, None], shown)
        tile = TILE_INDEX_FLAT[
            np.where((ends[:, :, None] >= 0) & (shown <= 6), ends[:, :, None] * 7 + shown, 49)
        ]
        possible = self.per_row(self.board.possible[:, 1])
        holds = (tile >= 0) & ((possible[:, None, None] >> np.maximum(tile, 0).astype(np.uint64)) & 1 > 0)
        total = base[:, :, None] + added
        scores = np.where(holds & (total % 5 == 0) & (total > 0), total, 0)
        return scores.reshape(len(scores), -1).max(axis=1).astype(np.float64)
