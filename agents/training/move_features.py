"""Per-move input features for the network: what each legal move would lead to, scaled to about [0, 1].

An MLP over the raw observation has to discover, for each of the 56 or 112
actions, relations such as "this tile leaves ends the next seat cannot play" or
"this move scores fives" from bitboards; learning those from rewards alone
takes tens of millions of decisions. The heuristic bots already compute them
exactly (``agents.bots.features.Moves``, the quantities ``strong`` weighs), so the
network gets them as inputs: one row of ``MOVE_FEATURES`` per legal action, as
a flat list of the batch's legal moves (``MoveInputs``; a seat rarely has more
than a few legal moves out of 56 or 112 actions, and the PPO update runs on
every decision). ``ActorCritic`` scores each move with state-dependent weights
over these rows, which can express ``strong`` exactly and improve on it.

With ``after_state`` each row also carries the position the move leads to, as bits
(``AFTER_STATE``): the seat's hand after it, the tile, the numbers showing at the
open ends, and the tiles the next seat may hold that fit them. The scalar features
are counts over those sets; the bits let the per-move scorer weigh *which* tiles
and numbers, what search reads off its sampled hands. In 2p draw a network with them
beat the same network without them by +0.67 +- 0.17 points per round, trained on the
same labels (docs/agents.md).

``move_features`` computes the features of ``Moves`` in one compiled pass over the legal moves
(bit for bit the same numbers; see the comment above the kernel).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property

import numpy as np
import torch
from numba import njit

from agents.bots.features import ALLOWED, FITSET
from domino_env.engine.observation import observation_fields
from domino_env.engine.rules import Rules
from domino_env.engine.tiles import HIGH, IS_DOUBLE, LOW, NUM_TILES, NUMBER_MASK, OTHER_HALF, PIPS, TILE_INDEX

MOVE_FEATURES: tuple[tuple[str, float], ...] = (
    ("pips", 12.0),
    ("double", 1.0),
    ("variety", 7.0),
    ("held_numbers", 7.0),
    ("follow", 7.0),
    ("next_options", 7.0),
    ("next_blocked", 1.0),
    ("lock", 1.0),
    ("blocked_margin", 20.0),
    ("partner_blocked", 1.0),
    ("fives_now", 20.0),
    ("fives_threat", 20.0),
    ("domino", 1.0),
    ("tiles_left", 7.0),
)
"""(``Moves`` feature, divisor); ``next_options`` is ``Moves.options(1)``: the next seat's replies."""
NUM_MOVE_FEATURES = len(MOVE_FEATURES)
AFTER_STATE: tuple[tuple[str, int], ...] = (
    ("hand_after", NUM_TILES),
    ("tile", NUM_TILES),
    ("numbers_after", 7),
    ("next_fits", NUM_TILES),
)
"""(block, width) of the after-state bits: one bit per tile or number."""
AFTER_STATE_SIZE = sum(width for _, width in AFTER_STATE)


def feature_count(after_state: bool) -> int:
    """Columns of ``MoveInputs.features``: the scalar features, then the after-state bits if asked."""
    return NUM_MOVE_FEATURES + (AFTER_STATE_SIZE if after_state else 0)


@dataclass(frozen=True)
class MoveInputs:
    """The legal moves of a batch of B decisions: L entries, grouped by decision in increasing order."""

    features: torch.Tensor
    """(L, ``feature_count``) float32."""
    rows: torch.Tensor
    """(L,) int64: the decision (row of the batch) of each entry, non-decreasing."""
    actions: torch.Tensor
    """(L,) int64: the action of each entry."""
    counts: torch.Tensor
    """(B,) int64: entries per decision (its number of legal moves)."""

    def to(self, device: torch.device) -> MoveInputs:
        return MoveInputs(*(t.to(device) for t in (self.features, self.rows, self.actions, self.counts)))

    @cached_property
    def starts(self) -> torch.Tensor:
        """(B,) int64: each decision's first entry. Computed once: minibatches of millions of labelled
        positions select from the same set thousands of times."""
        return torch.cumsum(self.counts, 0) - self.counts

    def select(self, index: torch.Tensor) -> MoveInputs:
        """The entries of decisions ``index`` (a minibatch), renumbered 0..len(index)-1 in that order;
        features as float32 whatever the dtype they are stored in."""
        starts = self.starts[index]
        counts = self.counts[index]
        rows = torch.repeat_interleave(torch.arange(len(index), device=index.device), counts)
        offsets = torch.arange(len(rows), device=index.device) - (torch.cumsum(counts, 0) - counts)[rows]
        entries = starts[rows] + offsets
        return MoveInputs(self.features.index_select(0, entries).float(), rows, self.actions[entries], counts)

    @staticmethod
    def concat(parts: list[MoveInputs]) -> MoveInputs:
        """Batches one after the other (the rollout's steps -> the PPO update's one batch)."""
        sizes = torch.tensor([0] + [len(part.counts) for part in parts[:-1]])
        offsets = torch.cumsum(sizes, 0).tolist()
        return MoveInputs(
            torch.cat([part.features for part in parts]),
            torch.cat([part.rows + offset for part, offset in zip(parts, offsets, strict=True)]),
            torch.cat([part.actions for part in parts]),
            torch.cat([part.counts for part in parts]),
        )


def move_features(rules: Rules, obs: np.ndarray, mask: np.ndarray, after_state: bool = False) -> MoveInputs:
    """The legal moves of observations ``obs`` with legal masks ``mask``, with their features (CPU tensors).

    Every row of ``mask`` needs a legal action (a seat is only asked to move when it has one).
    ``after_state``: append the ``AFTER_STATE`` bits of each move.
    """
    mask = np.asarray(mask)
    rows, actions = np.nonzero(mask)
    counts = np.bincount(rows, minlength=len(mask))
    if not counts.all():
        raise ValueError(f"row {int(np.flatnonzero(counts == 0)[0])} of the mask has no legal action")
    features = np.empty((len(rows), feature_count(after_state)), dtype=np.float32)
    obs = np.ascontiguousarray(obs, dtype=np.int16)
    _fill_features(obs, rows, actions, *_layout(rules), after_state, features)
    return MoveInputs(*(torch.from_numpy(a) for a in (features, rows, actions, counts)))


# -- the compiled pass ------------------------------------------------------------------------------
# The features are ``Moves``' (agents.bots.features), computed move by move in one compiled loop
# with the same integer and float64 operations: ``Moves`` takes about 150 NumPy calls a batch,
# which for the single row of one game's opponent cost more than the network's forward pass.
# tests/test_opponents.py holds the two equal on every preset. Bitboards are int64 (tiles use
# 28 bits), as in ``domino_env.engine.kernels``.
FIT = NUMBER_MASK.astype(np.int64)
"""``FIT[n]``: the tiles carrying number n."""
FITS = FITSET.astype(np.int64)
"""``FITS[numbers]``: the tiles carrying any number of a 7-bit set."""
ALLOWED_TILES = ALLOWED.astype(np.int64)
"""``ALLOWED_TILES[missing]``: the tiles a seat known to lack the numbers ``missing`` may hold."""
SHOWS = OTHER_HALF.astype(np.int64)
"""``SHOWS[tile, n]``: the number ``tile`` shows placed against n (-1: it does not fit)."""
TILE_OF = TILE_INDEX.astype(np.int64)
PIPS_OF, HIGH_OF, LOW_OF, DOUBLE = (a.astype(np.int64) for a in (PIPS, HIGH, LOW, IS_DOUBLE))
DIVISORS = np.array([divisor for _, divisor in MOVE_FEATURES])
"""The kernel writes the features in ``MOVE_FEATURES`` order, each divided by its divisor."""
FIELDS = (
    "tile_owner",
    "missing",
    "tile_end",
    "tile_order",
    "end_number",
    "end_double",
    "draw_pile",
    "hand_size",
)
"""The observation fields the kernel reads, in the order of their offsets in ``_layout``."""


@cache
def _layout(rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """What the kernel knows of the rules: (players, spinner, fives, teams, drawing, then the offsets
    of ``FIELDS`` in the observation), and the side of each relative seat."""
    fields = observation_fields(rules)
    flags = (rules.players, rules.spinner, rules.fives, rules.teams, rules.drawing)
    layout = np.array([*flags, *(fields[name].start for name in FIELDS)], dtype=np.int64)
    return layout, np.array([rules.side_of(seat) for seat in range(rules.players)], dtype=np.int64)


@njit(cache=True, inline="always")
def _popcount(board: int) -> int:
    count = 0
    while board:
        board &= board - 1
        count += 1
    return count


@njit(cache=True, inline="always")
def _pips(board: int) -> int:
    total = 0
    for tile in range(NUM_TILES):
        if board >> tile & 1:
            total += PIPS_OF[tile]
    return total


@njit(cache=True)
def _board(
    o: np.ndarray,
    layout: np.ndarray,
    possible: np.ndarray,
    estimate: np.ndarray,
    counts: np.ndarray,
    ends: np.ndarray,
    end_value: np.ndarray,
) -> tuple[int, int, int]:
    """``Board``'s fields of one observation ``o``: fills the arrays (per relative seat the tiles it may
    hold and blocked_margin's estimate of its pips; own tiles per number; the open ends and what each
    adds to the fives count) and returns (own hand, spinner tile or -1, ``spinner_side``)."""
    players = layout[0]
    owner_at, missing_at, end_code_at, order_at, ends_at, doubles_at = layout[5:11]
    sizes_at = layout[12]
    hand = unseen = 0
    for tile in range(NUM_TILES):
        if o[owner_at + tile] == 1:
            hand |= 1 << tile
        elif o[owner_at + tile] == 0:
            unseen |= 1 << tile
    for seat in range(players):
        missing = 0
        for number in range(7):
            if o[missing_at + 7 * seat + number] != 0:
                missing |= 1 << number
        possible[seat] = unseen & ALLOWED_TILES[missing]
        mean_pips = _pips(possible[seat]) / max(_popcount(possible[seat]), 1)
        estimate[seat] = mean_pips * o[sizes_at + seat]
    for number in range(7):
        counts[number] = _popcount(hand & FIT[number])
    played_up = played_down = left_done = False
    first, spinner = 1000, -1  # the spinner: the first double placed
    for tile in range(NUM_TILES):
        code = o[end_code_at + tile]
        played_up |= code == 4
        played_down |= code == 5
        left_done |= code == 2
        if DOUBLE[tile] and 0 < o[order_at + tile] < first:
            first, spinner = o[order_at + tile], tile
    for end in range(4):
        ends[end] = o[ends_at + end]
        counted = ends[end] >= 0 and (end < 2 or (played_up if end == 2 else played_down))
        end_value[end] = ends[end] * (1 + (o[doubles_at + end] != 0)) if counted else 0
    if spinner < 0:
        return hand, spinner, -1
    code = o[end_code_at + spinner]
    left = right = False
    for tile in range(NUM_TILES):
        if o[order_at + tile] > first:
            left |= o[end_code_at + tile] == 2
            right |= o[end_code_at + tile] == 3
    need = 2 - left - right if code == 1 else 1 - (left if code == 2 else right)
    if need != 1:
        return hand, spinner, -1
    return hand, spinner, (1 if left_done else 0) if code == 1 else code - 2


@njit(cache=True)
def _fill_features(
    obs: np.ndarray,
    rows: np.ndarray,
    actions: np.ndarray,
    layout: np.ndarray,
    sides: np.ndarray,
    after_state: bool,
    out: np.ndarray,
) -> None:
    """``out[i]``: the features of legal move ``(rows[i], actions[i])``, each computed as ``Moves`` does."""
    if len(rows) == 0:
        return
    players, spinner_rules, drawing, pile_at = layout[0], layout[1] != 0, layout[4] != 0, layout[11]
    possible = np.zeros(players, dtype=np.int64)
    fitting = np.zeros(players, dtype=np.int64)  # per relative seat: its possible tiles that fit after
    estimate = np.zeros(players)
    totals = np.zeros(sides.max() + 1)
    counts = np.zeros(7, dtype=np.int64)
    ends, end_value = np.zeros(4, dtype=np.int64), np.zeros(4, dtype=np.int64)
    ends_after, values = np.zeros(4, dtype=np.int64), np.zeros(4, dtype=np.int64)
    value = np.zeros(DIVISORS.size)
    row = rows[0]
    hand, spinner, spinner_side = _board(obs[row], layout, possible, estimate, counts, ends, end_value)
    for i in range(len(rows)):
        if rows[i] != row:
            row = rows[i]
            hand, spinner, spinner_side = _board(
                obs[row], layout, possible, estimate, counts, ends, end_value
            )
        tile, end = actions[i] % NUM_TILES, actions[i] // NUM_TILES
        hand_after = hand & ~(1 << tile)
        opens_spinner = spinner_rules and end == spinner_side
        numbers_after = _ends_after(ends, tile, end, HIGH_OF[spinner] if opens_spinner else -1, ends_after)
        follow = _popcount(hand_after & FITS[numbers_after])
        stuck = follow == 0 and not (drawing and obs[row, pile_at] != 0)
        for seat in range(1, players):
            fitting[seat] = possible[seat] & FITS[numbers_after]
            stuck &= fitting[seat] == 0
        margin = _blocked_margin(hand_after, estimate, sides, totals) if stuck else 0.0
        _values_after(end_value, ends_after, tile, end, ends[0] < 0, values)
        _scalars(
            layout,
            tile,
            hand_after,
            counts,
            follow,
            fitting,
            possible[1],
            margin,
            values,
            ends_after,
            ends[0] < 0,
            value,
        )
        for column in range(DIVISORS.size):
            out[i, column] = value[column] / DIVISORS[column]
        if after_state:
            _after_state(hand_after, tile, numbers_after, fitting[1], out[i, DIVISORS.size :])


@njit(cache=True, inline="always")
def _after_state(hand_after: int, tile: int, numbers_after: int, next_fits: int, out: np.ndarray) -> None:
    """The ``AFTER_STATE`` bits of one move into ``out``: hand_after, tile, numbers_after, next_fits."""
    for t in range(NUM_TILES):
        out[t] = hand_after >> t & 1
        out[NUM_TILES + t] = t == tile
        out[2 * NUM_TILES + 7 + t] = next_fits >> t & 1
    for number in range(7):
        out[2 * NUM_TILES + number] = numbers_after >> number & 1


@njit(cache=True, inline="always")
def _ends_after(ends: np.ndarray, tile: int, end: int, spinner_shows: int, ends_after: np.ndarray) -> int:
    """``Moves.ends_after`` into ``ends_after`` (``spinner_shows``: the number the spinner's short sides
    show if the move opens them, else -1); returns ``numbers_after``, the set of numbers showing."""
    ends_after[:] = ends
    opening = ends[0] < 0
    ends_after[end] = -1 if opening or ends[end] < 0 else SHOWS[tile, ends[end]]
    if opening:
        ends_after[0], ends_after[1] = HIGH_OF[tile], LOW_OF[tile]
    if spinner_shows >= 0:
        ends_after[2] = ends_after[3] = spinner_shows
    numbers = 0
    for e in range(4):
        if ends_after[e] >= 0:
            numbers |= 1 << ends_after[e]
    return numbers


@njit(cache=True, inline="always")
def _blocked_margin(hand_after: int, estimate: np.ndarray, sides: np.ndarray, totals: np.ndarray) -> float:
    """``Moves.blocked_margin`` of a move that blocks the round: the lightest other side's estimated pips
    minus our side's."""
    totals[:] = 0.0
    totals[sides[0]] += _pips(hand_after)
    for seat in range(1, len(sides)):
        totals[sides[seat]] += estimate[seat]
    return totals[1:].min() - totals[0]


@njit(cache=True, inline="always")
def _values_after(
    end_value: np.ndarray, ends_after: np.ndarray, tile: int, end: int, opening: bool, values: np.ndarray
) -> None:
    """``Moves.values_after`` into ``values``: each open end's share of the fives count after the move."""
    values[:] = end_value
    values[end] = ends_after[end] * (1 + DOUBLE[tile])
    if opening:
        values[1] = LOW_OF[tile] * (1 + DOUBLE[tile])


@njit(cache=True, inline="always")
def _fives_threat(values: np.ndarray, ends_after: np.ndarray, next_possible: int) -> int:
    """``Moves.fives_threat``: the most the next seat could score at once with a tile it may hold."""
    best = 0
    for e in range(4):
        base = values.sum() - values[e]
        x0 = (-base) % 5
        for shown in (x0, x0 + 5, ends_after[e]):
            added = 2 * ends_after[e] if shown == ends_after[e] else shown
            reply = TILE_OF[ends_after[e], shown] if ends_after[e] >= 0 and shown <= 6 else -1
            total = base + added
            if reply >= 0 and next_possible >> reply & 1 and total % 5 == 0 and total > 0:
                best = max(best, total)
    return best


@njit(cache=True, inline="always")
def _scalars(
    layout: np.ndarray,
    tile: int,
    hand_after: int,
    counts: np.ndarray,
    follow: int,
    fitting: np.ndarray,
    next_possible: int,
    margin: float,
    values: np.ndarray,
    ends_after: np.ndarray,
    opening: bool,
    value: np.ndarray,
) -> None:
    """The ``MOVE_FEATURES`` of one move, undivided, into ``value`` (``next_possible``: the tiles the next
    seat may hold)."""
    teams, fives = layout[3] != 0, layout[2] != 0
    low, high = LOW_OF[tile], HIGH_OF[tile]
    tiles_left = _popcount(hand_after)
    next_blocked = fitting[1] == 0
    count = PIPS_OF[tile] if opening else values.sum()
    value[0] = PIPS_OF[tile]
    value[1] = DOUBLE[tile]
    value[2] = 0  # variety: the numbers still held
    for number in range(7):
        value[2] += (hand_after & FIT[number]) != 0
    value[3] = counts[low] + (0 if low == high else counts[high])  # held_numbers
    value[4] = follow
    value[5] = _popcount(fitting[1])  # next_options
    value[6] = next_blocked
    value[7] = next_blocked and follow > 0  # lock
    value[8] = margin
    value[9] = teams and fitting[2] == 0  # partner_blocked
    value[10] = count if fives and count % 5 == 0 and count > 0 else 0  # fives_now
    value[11] = _fives_threat(values, ends_after, next_possible) if fives else 0
    value[12] = tiles_left == 0  # domino
    value[13] = tiles_left
