"""Compiled (numba) kernels: the rules of ``DominoCore``, one compiled pass per step.

Placement, spinner, fives, closed games, draws and passes, round ends and their
scoring, openers, legal sets and observation writes all live here, in compiled
loops over the stepped games, on the core's own arrays. What stays in NumPy
(``domino_env.engine.core``) is what is not per game: checking arguments, preparing
deals in bulk, building ``StepResult``. The differential tests
(``tests/test_core_vs_reference.py``, ``scripts/soak.py``) hold these kernels to
the reference engine move for move.

Bitboards arrive as ``int64`` views of the core's ``uint64`` arrays (tiles use
28 bits), which keeps numba's integer arithmetic in one signed type.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from domino_env.engine.observation import ObservationViews
from domino_env.engine.rules import BLOCKED, CHOICES, CLOSED, DOMINO, TARGET, Rules, winner_points
from domino_env.engine.tiles import HIGH, IS_DOUBLE, LOW, NUM_TILES, NUMBER_MASK, OTHER_HALF, PIPS

FIT = NUMBER_MASK.astype(np.int64)
"""``FIT[n]``: bitboard of the tiles carrying number n."""
HIGH_OF = HIGH.astype(np.int64)
LOW_OF = LOW.astype(np.int64)
DOUBLE = IS_DOUBLE.astype(np.int64)
PIPS_OF = PIPS.astype(np.int64)
OTHER = OTHER_HALF.astype(np.int64)
"""``OTHER[tile, n]``: the number ``tile`` shows after being placed against n."""
POPCOUNT16 = np.array([bin(x).count("1") for x in range(1 << 16)], dtype=np.int64)

kernel = njit(cache=True, _nrt=False)
"""The entry points: compiled once per machine (cached), and without reference counting.

Numba counts references to arrays taken out of a tuple such as ``KernelState``
with atomic operations, dozens per game per step; the kernels allocate nothing,
so they do without (``_nrt=False``), which made a step about five times faster.
"""
round_winner_points = njit(cache=True)(winner_points)
"""``rules.winner_points`` compiled: the rule keeps living in one place."""
ROUND_POINTS = CHOICES["round_points"]
SAME_OPENER, WINNER_OPENS = CHOICES["later_opener"].index("same"), CHOICES["later_opener"].index("winner")
LIGHTEST_HAND = CHOICES["blocked_winner"].index("lightest_hand")
HEAVIEST_HAND = CHOICES["blocked_winner"].index("heaviest_hand")
TIE_OPENER, TIE_BLOCKER_LOSES, TIE_FEWEST_TILES = (
    CHOICES["blocked_tie"].index(name) for name in ("opener", "blocker_loses", "fewest_tiles")
)


class KernelRules(NamedTuple):
    """The rules and observation offsets the kernels need, all plain integers.

    Integers only: numba types such a tuple in about a microsecond per call, one
    holding strings or bools in tens. Choice fields hold their index in
    ``rules.CHOICES``.
    """

    players: int
    hand_size: int
    num_ends: int
    num_sides: int
    teams: int
    drawing: int
    spinner: int
    fives: int
    closed_game: int
    target_mid_round: int
    target: int
    match: int
    """Rounds continue to the target (``episode="match"``); else each round is a game."""
    later_opener: int
    blocked_winner: int
    blocked_tie: int
    round_points: int
    missing_at: int
    """Start of the known-missing block in a seat row (the tile owners come first)."""
    scores_at: int
    """Start of the scores block in a seat row; the opener follows it."""
    end_code_at: int
    """Offsets of the shared fields: tile end, tile order, end number, end double, draw pile."""
    order_at: int
    number_at: int
    double_at: int
    pile_at: int


def kernel_rules(rules: Rules, views: ObservationViews, match: bool) -> KernelRules:
    """The kernels' view of ``rules`` and of the observation layout ``views`` keeps."""
    values = {name: getattr(rules, name) for name in KernelRules._fields if hasattr(rules, name)}
    values.update({name: CHOICES[name].index(value) for name, value in values.items() if name in CHOICES})
    return KernelRules(
        **{name: int(value) for name, value in values.items()},
        match=int(match),
        missing_at=views.fields["missing"].start,
        scores_at=views.fields["scores"].start,
        end_code_at=views.end_code_at,
        order_at=views.order_at,
        number_at=views.number_at,
        double_at=views.double_at,
        pile_at=views.pile_at,
    )


class KernelState(NamedTuple):
    """The core's state arrays (the same memory), bitboards as ``int64`` views."""

    hands: np.ndarray
    table: np.ndarray
    end_state: np.ndarray
    end_count: np.ndarray
    spinner: np.ndarray
    spin_need: np.ndarray
    to_play: np.ndarray
    opener: np.ndarray
    forced: np.ndarray
    num_placed: np.ndarray
    last_move: np.ndarray
    missing: np.ndarray
    draws: np.ndarray
    passes: np.ndarray
    bone_pos: np.ndarray
    deal: np.ndarray
    draw_prefix: np.ndarray
    scores: np.ndarray
    round_points: np.ndarray
    rounds_played: np.ndarray
    seat_rows: np.ndarray
    """Per-seat observation blocks (``ObservationViews.seat_rows``)."""
    shared: np.ndarray
    """Shared observation block (``ObservationViews.shared``)."""
    legal_bits: np.ndarray


class RoundResults(NamedTuple):
    """The ``StepResult`` arrays a round end fills in (full batch, indexed by game)."""

    winner: np.ndarray
    points: np.ndarray
    scores: np.ndarray
    game_over: np.ndarray
    game_winner: np.ndarray


# -- small helpers -------------------------------------------------------------------
@njit(cache=True, inline="always")
def popcount(x: int) -> int:
    """Set bits of a non-negative 28-bit board."""
    return POPCOUNT16[x & 0xFFFF] + POPCOUNT16[x >> 16]


@njit(cache=True, inline="always")
def side_of(r: KernelRules, seat: int) -> int:
    return seat % 2 if r.teams else seat


@njit(cache=True, inline="always")
def end_value(tile: int, number: int) -> int:
    """What an end showing ``number`` on outer tile ``tile`` adds to the fives count."""
    return number * (1 + DOUBLE[tile])


@njit(cache=True, inline="always")
def board_pips(board: int) -> int:
    pips = 0
    while board:
        low = board & -board
        pips += PIPS_OF[popcount(low - 1)]
        board ^= low
    return pips


# -- stepping ------------------------------------------------------------------------
@kernel
def first_illegal(rows, actions, legal_bits, num_actions) -> int:
    """Index (into ``rows``) of the first action that is out of range or illegal, else -1."""
    for i in range(len(rows)):
        action = actions[i]
        if action < 0 or action >= num_actions:
            return i
        end, tile = action // NUM_TILES, action % NUM_TILES
        if not (legal_bits[rows[i], end] >> tile) & 1:
            return i
    return -1


@kernel
def place_and_advance(r, s, rows, actions, end_code, fives_out, placer) -> None:
    """Play ``actions[i]`` in game ``rows[i]``: the tile, fives, round end or the next seat to play.

    Fills ``end_code`` (0 while the round goes on), ``fives_out`` and ``placer``
    per stepped game and refreshes the legal sets of the games that go on.
    """
    for i in range(len(rows)):
        g = rows[i]
        placer[i] = s.to_play[g]
        end_code[i], fives_out[i] = play(r, s, g, actions[i])


@kernel
def play_random(r, s, rows, stop_seat, key, end_code, fives_out, placer) -> None:
    """In game ``rows[i]``, uniformly random legal moves until ``stop_seat[g]`` is to move or the round ends.

    ``end_code``, ``fives_out`` (summed over the moves) and ``placer`` (of the
    last move, -1 if none) as in ``place_and_advance``. The uniforms come from a
    SplitMix64 sequence started at ``key``, so a seeded caller replays exactly.
    """
    state = np.uint64(key)
    for i in range(len(rows)):
        g = rows[i]
        code, fives, seat = 0, 0, -1
        while code == 0 and s.to_play[g] != stop_seat[g]:
            state, uniform = splitmix64(state)
            seat = s.to_play[g]
            code, scored = play(r, s, g, legal_action(s.legal_bits, g, uniform))
            fives += scored
        end_code[i], fives_out[i], placer[i] = code, fives, seat


@njit(cache=True, inline="always")
def play(r, s, g, action) -> tuple[int, int]:
    """Place ``action``'s tile for the seat to move in game g; returns (round-end code, fives scored).

    The round goes on (code 0) with the next seat to play found and its legal
    sets refreshed; otherwise the caller scores the round and deals the next.
    """
    p = r.players
    end, tile = action // NUM_TILES, action % NUM_TILES
    seat = s.to_play[g]
    s.hands[g, seat] ^= 1 << tile
    opening = s.table[g] == 0
    s.table[g] |= 1 << tile
    s.num_placed[g] += 1
    placed = s.num_placed[g]
    s.last_move[g, seat] = placed
    outer_before = s.end_state[g, 4 + end]
    number = -1 if opening else OTHER[tile, s.end_state[g, end]]
    s.end_state[g, end] = number
    s.end_state[g, 4 + end] = tile
    for observer in range(p):
        s.seat_rows[g, observer, tile] = (seat - observer) % p + 2
    s.shared[g, r.end_code_at + tile] = 1 if opening else end + 2
    s.shared[g, r.order_at + tile] = placed
    s.shared[g, r.number_at + end] = number
    s.shared[g, r.double_at + end] = DOUBLE[tile]
    if r.fives:
        s.end_count[g, end] = end_value(tile, number) if number >= 0 else 0
    if opening:
        s.end_state[g, 0], s.end_state[g, 1] = HIGH_OF[tile], LOW_OF[tile]
        s.end_state[g, 5] = tile
        s.shared[g, r.number_at] = HIGH_OF[tile]
        s.shared[g, r.number_at + 1] = LOW_OF[tile]
        s.shared[g, r.double_at + 1] = DOUBLE[tile]
        if r.fives:
            s.end_count[g, 0] = end_value(tile, HIGH_OF[tile])
            s.end_count[g, 1] = end_value(tile, LOW_OF[tile])
    if r.spinner:
        update_spinner(r, s, g, tile, end, opening, outer_before)

    side = side_of(r, seat)
    fives = score_fives(r, s, g, tile, side) if r.fives else 0
    code = 0
    if r.target_mid_round and fives > 0 and s.scores[g, side] >= r.target:
        code = TARGET
    if s.hands[g, seat] == 0:
        code = DOMINO
    if r.closed_game and code == 0 and closed(s, g):
        code = CLOSED
    if code == 0 and not advance(r, s, g, seat):
        code = BLOCKED
    if code == 0:
        update_legal(r, s, g)
    return code, fives


@njit(cache=True, inline="always")
def update_spinner(r, s, g, tile, end, opening, outer_before) -> None:
    """The first double becomes the spinner; its short sides open once both long sides hold a tile."""
    need = s.spin_need[g]
    if need > 0 and outer_before == s.spinner[g] and end < 2 and not opening:
        need -= 1
        if need == 0:
            number = HIGH_OF[s.spinner[g]]
            s.end_state[g, 2] = number
            s.end_state[g, 3] = number
            s.shared[g, r.number_at + 2] = number
            s.shared[g, r.number_at + 3] = number
    if s.spinner[g] < 0 and DOUBLE[tile]:
        s.spinner[g] = tile
        need = 2 if opening else 1
    s.spin_need[g] = need


@njit(cache=True, inline="always")
def score_fives(r, s, g, tile, side) -> int:
    """Score the open-end count when it is a positive multiple of 5; returns what was scored."""
    if s.num_placed[g] == 1:
        count = PIPS_OF[tile]
    else:
        count = s.end_count[g, 0] + s.end_count[g, 1] + s.end_count[g, 2] + s.end_count[g, 3]
    if count <= 0 or count % 5:
        return 0
    s.scores[g, side] += count
    s.round_points[g, side] += count
    write_scores(r, s, g)
    return count


@njit(cache=True, inline="always")
def closed(s, g) -> bool:
    """Every open end shows one number whose 7 tiles are all on the table."""
    first = s.end_state[g, 0]
    if first < 0:
        return False
    for e in range(1, 4):
        if s.end_state[g, e] >= 0 and s.end_state[g, e] != first:
            return False
    return (FIT[first] & ~s.table[g]) == 0


@njit(cache=True, inline="always")
def advance(r, s, g, placer) -> bool:
    """Hand the turn to the next seat that can play, running draws and passes; False if nobody can."""
    p = r.players
    fit, numbers = 0, 0
    for e in range(r.num_ends):
        n = s.end_state[g, e]
        if n >= 0:
            fit |= FIT[n]
            numbers |= 1 << n
    seat = placer
    for _ in range(p):
        seat = (seat + 1) % p
        if s.hands[g, seat] & fit:
            s.to_play[g] = seat
            return True
        found = False
        if s.bone_pos[g] < NUM_TILES:
            start = pos = s.bone_pos[g]
            while pos < NUM_TILES and not found:
                tile = np.int64(s.deal[g, pos])
                pos += 1
                s.hands[g, seat] |= 1 << tile
                s.seat_rows[g, seat, tile] += 1
                found = (fit >> tile) & 1 == 1
            s.draws[g, seat] += pos - start
            s.bone_pos[g] = pos
            s.shared[g, r.pile_at] = NUM_TILES - pos
            s.missing[g, seat] = numbers
        else:
            s.missing[g, seat] |= numbers
        write_missing(r, s, g, seat)
        if found:
            s.to_play[g] = seat
            return True
        s.passes[g, seat] += 1
    return False


@njit(cache=True, inline="always")
def write_missing(r, s, g, seat) -> None:
    """Every observer's copy of ``seat``'s known-missing numbers (seat-relative blocks)."""
    p = r.players
    for observer in range(p):
        at = r.missing_at + 7 * ((seat - observer) % p)
        for n in range(7):
            s.seat_rows[g, observer, at + n] = (s.missing[g, seat] >> n) & 1


@njit(cache=True, inline="always")
def write_scores(r, s, g) -> None:
    """Every observer's scores block, its own side first."""
    for observer in range(r.players):
        own = side_of(r, observer)
        for k in range(r.num_sides):
            s.seat_rows[g, observer, r.scores_at + k] = s.scores[g, (own + k) % r.num_sides]


@njit(cache=True, inline="always")
def update_legal(r, s, g) -> None:
    """The tiles the seat to move may place at each end."""
    hand = s.hands[g, s.to_play[g]]
    if s.table[g] == 0:
        s.legal_bits[g, 0] = hand if s.forced[g] < 0 else 1 << s.forced[g]
        for e in range(1, r.num_ends):
            s.legal_bits[g, e] = 0
        return
    for e in range(r.num_ends):
        n = s.end_state[g, e]
        s.legal_bits[g, e] = hand & FIT[n] if n >= 0 else 0


@kernel
def refresh_legal(r, s, games) -> None:
    """Recompute the legal sets of ``games`` (after their state was written from outside)."""
    for i in range(len(games)):
        update_legal(r, s, games[i])


# -- round and game ends ---------------------------------------------------------------
@kernel
def finish_rounds(r, s, games, placer, end, out, first, next_winner, work) -> None:
    """Score the rounds that ended in ``games`` and decide game ends, filling ``out`` per game.

    ``first[i]`` (the next round starts a game) and ``next_winner[i]`` (the side that
    scored, -1 for none) are what ``start_rounds`` needs next. ``work``: (4, sides)
    int64 scratch (kernels allocate nothing).
    """
    sides = r.num_sides
    side_pips = work[0]
    for i in range(len(games)):
        g = games[i]
        side_pips[:] = 0
        for seat in range(r.players):
            side_pips[side_of(r, seat)] += board_pips(s.hands[g, seat])
        code = end[i]
        winner = side_of(r, placer[i]) if code in (TARGET, DOMINO) else -1
        if code in (BLOCKED, CLOSED):
            winner = blocked_winner(r, s, g, placer[i], work)
        scored = winner >= 0 and code != TARGET
        if scored:
            own = side_pips[winner]
            points = round_winner_points(ROUND_POINTS[r.round_points], side_pips.sum() - own, own)
            s.scores[g, winner] += points
            s.round_points[g, winner] += points
        leader, leaders = best_of(s.scores[g], sides)
        decided = s.scores[g, leader] >= r.target and leaders == 1
        game_winner = winner if code == TARGET else (leader if decided else -1)
        game_over = (decided or code == TARGET) if r.match else True
        out.winner[g] = winner
        out.game_over[g] = game_over
        out.game_winner[g] = game_winner if game_over else -1
        for k in range(sides):
            out.points[g, k] = s.round_points[g, k]
            out.scores[g, k] = s.scores[g, k]
        s.rounds_played[g] += 1
        if game_over:
            s.scores[g, :] = 0
            s.rounds_played[g] = 0
        first[i] = game_over
        next_winner[i] = winner if scored else -1


@kernel
def keep_final_scores(r, s, rows, scores) -> None:
    """Put an ended episode's final ``scores`` back, in the state and every observer's view.

    ``finish_rounds`` zeroes the scores of a game that ended, ready for the next; a
    one-game environment shows the finished game instead until it is reset.
    """
    for i in range(len(rows)):
        g = rows[i]
        for k in range(r.num_sides):
            s.scores[g, k] = scores[i, k]
        write_scores(r, s, g)


@kernel
def open_low_left(r, s, rows) -> None:
    """Mirror an opening tile so that its low number shows on the left (a record may open so).

    Actions always open high number left; the two long ends swap places, nothing else changes.
    """
    for i in range(len(rows)):
        g = rows[i]
        s.end_state[g, 0], s.end_state[g, 1] = s.end_state[g, 1], s.end_state[g, 0]
        s.end_count[g, 0], s.end_count[g, 1] = s.end_count[g, 1], s.end_count[g, 0]
        left, right = s.shared[g, r.number_at], s.shared[g, r.number_at + 1]
        s.shared[g, r.number_at], s.shared[g, r.number_at + 1] = right, left
        update_legal(r, s, g)


@njit(cache=True, inline="always")
def best_of(values, count) -> tuple[int, int]:
    """(index of the largest of ``values[:count]``, the first on a tie; how many share that value)."""
    index, ties = 0, 1
    for k in range(1, count):
        if values[k] > values[index]:
            index, ties = k, 1
        elif values[k] == values[index]:
            ties += 1
    return index, ties


@njit(cache=True, inline="always")
def blocked_winner(r, s, g, placer, work) -> int:
    """Winning side of a blocked/closed round (-1: nobody), by the blocked rules.

    ``work[0]`` holds the sides' hand pips; rows 1 to 3 are scratch.
    """
    sides = r.num_sides
    side_pips, key, fewer, last = work[0], work[1], work[2], work[3]
    for k in range(sides):
        if r.blocked_winner == LIGHTEST_HAND:
            key[k] = -side_pips[k]
        elif r.blocked_winner == HEAVIEST_HAND:
            key[k] = side_pips[k]
        else:
            key[k] = s.scores[g, k]
    winner, ties = best_of(key, sides)
    if ties == 1:
        return winner
    best = key[winner]
    if r.blocked_tie == TIE_OPENER:  # the tied side of the first seat in play order from the opener
        for k in range(r.players):
            side = side_of(r, (s.opener[g] + k) % r.players)
            if key[side] == best:
                return side
    if r.blocked_tie == TIE_BLOCKER_LOSES:
        return 1 - side_of(r, placer)
    if r.blocked_tie == TIE_FEWEST_TILES:  # then the tied side that placed a tile most recently
        fewer[:] = 0  # minus the tiles in hand, so that the fewest is the largest
        last[:] = 0
        for seat in range(r.players):
            side = side_of(r, seat)
            fewer[side] -= popcount(s.hands[g, seat])
            last[side] = max(last[side], s.last_move[g, seat])
        for k in range(sides):
            if key[k] != best:
                fewer[k] = -(NUM_TILES + 1)
        choice, ties = best_of(fewer, sides)
        if ties == 1:
            return choice
        most, choice, latest = fewer[choice], -1, -1
        for k in range(sides):
            if fewer[k] == most and last[k] > latest:
                choice, latest = k, last[k]
        return choice
    return -1


@kernel
def start_rounds(r, s, games, first, next_winner, deals, deal_rows, deal_opener) -> None:
    """Deal row ``deal_rows[i]`` of the prepared ``deals`` into ``games[i]`` and set its first turn."""
    p = r.players
    hands, order, draw_prefix, own_tiles, forced = deals
    for i in range(len(games)):
        g, row = games[i], deal_rows[i]
        for seat in range(p):
            s.hands[g, seat] = hands[row, seat]
        for k in range(NUM_TILES):
            s.deal[g, k] = order[row, k]
        if r.drawing:
            for k in range(NUM_TILES + 1):
                s.draw_prefix[g, k] = draw_prefix[row, k]
        s.bone_pos[g] = p * r.hand_size if r.drawing else NUM_TILES
        s.table[g] = 0
        s.end_state[g, :] = -1
        s.spinner[g] = -1
        s.spin_need[g] = 0
        s.end_count[g, :] = 0
        s.num_placed[g] = 0
        s.last_move[g, :] = 0
        s.missing[g, :] = 0
        s.draws[g, :] = 0
        s.passes[g, :] = 0
        s.round_points[g, :] = 0
        opener, must_play = deal_opener[i], forced[row]
        if r.later_opener != SAME_OPENER and not first[i]:
            opener = (s.opener[g] + 1) % p
            if r.later_opener == WINNER_OPENS and next_winner[i] >= 0:
                opener = next_winner[i]
            must_play = -1
        s.opener[g] = opener
        s.to_play[g] = opener
        s.forced[g] = must_play
        for seat in range(p):
            for tile in range(NUM_TILES):
                s.seat_rows[g, seat, tile] = own_tiles[row, seat, tile]
            s.seat_rows[g, seat, r.missing_at : r.scores_at] = 0
            s.seat_rows[g, seat, r.scores_at + r.num_sides] = (opener - seat) % p
        write_scores(r, s, g)
        s.shared[g, :] = 0
        s.shared[g, r.number_at : r.number_at + 4] = -1
        s.shared[g, r.pile_at] = (NUM_TILES - p * r.hand_size) if r.drawing else 0
        update_legal(r, s, g)


# -- reading -------------------------------------------------------------------------
@njit(cache=True, inline="always")
def splitmix64(state):
    """One step of SplitMix64: (next state, a uniform float in [0, 1) with 53 random bits)."""
    state = state + np.uint64(0x9E3779B97F4A7C15)
    z = (state ^ (state >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return state, np.float64(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, inline="always")
def legal_action(legal_bits, g, uniform) -> int:
    """Game g's legal action of rank ``floor(uniform * count)`` in action order."""
    num_ends = legal_bits.shape[1]
    total = 0
    for e in range(num_ends):
        total += popcount(legal_bits[g, e])
    rank = int(uniform * total)
    for e in range(num_ends):
        bits = legal_bits[g, e]
        count = popcount(bits)
        if rank < count:
            for _ in range(rank):
                bits &= bits - 1
            return e * NUM_TILES + popcount((bits & -bits) - 1)
        rank -= count
    return -1


@kernel
def pick_legal(legal_bits, uniform, out) -> None:
    """``out[g]``: the legal action of rank ``floor(uniform[g] * count)`` of every game."""
    for g in range(len(out)):
        out[g] = legal_action(legal_bits, g, uniform[g])


@kernel
def pick_from_mask(mask, uniform, out) -> int:
    """``out[i]``: row i's True entry of rank ``floor(uniform[i] * count)``; returns a row with none or -1."""
    for i in range(mask.shape[0]):
        total = 0
        for a in range(mask.shape[1]):
            total += mask[i, a]
        if total == 0:
            return i
        rank = int(uniform[i] * total)
        for a in range(mask.shape[1]):
            if mask[i, a]:
                if rank == 0:
                    out[i] = a
                    break
                rank -= 1
    return -1


@njit(cache=True, inline="always")
def write_observation(r, s, g, seat, out, i) -> None:
    """``out[i]``: the observation of ``seat`` in game g."""
    p = r.players
    seat_size, shared_size = s.seat_rows.shape[2], s.shared.shape[1]
    hand_at = seat_size + shared_size
    for k in range(seat_size):
        out[i, k] = s.seat_rows[g, seat, k]
    for k in range(shared_size):
        out[i, seat_size + k] = s.shared[g, k]
    for k in range(p):
        out[i, hand_at + k] = popcount(s.hands[g, (seat + k) % p])
    out[i, hand_at + p] = (s.to_play[g] - seat) % p


@kernel
def observe(r, s, games, seats, out) -> None:
    """``out[i]``: the observation of seat ``seats[i]`` in game ``games[i]`` (layout in observation.py)."""
    for i in range(len(games)):
        write_observation(r, s, games[i], seats[i], out, i)


ILLEGAL_MOVE = -128
"""What ``play_one`` returns for an action that is not legal (the game is left unchanged)."""


@kernel
def play_one(r, s, g, action, obs, mask) -> int:
    """One move in game g for the one-game engine, and what the next seat to move sees.

    Returns that seat, with its observation in ``obs[0]`` and its legal mask (int8) in
    ``mask[0]``; or minus the round-end code when the round ended (the caller scores it);
    or ``ILLEGAL_MOVE``, changing nothing, when ``action`` is not a legal action of the
    seat to move. One compiled call per move, taking and returning plain integers, is
    what makes a single game fast.
    """
    if action < 0 or action >= r.num_ends * NUM_TILES:
        return ILLEGAL_MOVE
    if not (s.legal_bits[g, action // NUM_TILES] >> (action % NUM_TILES)) & 1:
        return ILLEGAL_MOVE
    code, _ = play(r, s, g, action)
    if code != 0:
        return -code
    seat = s.to_play[g]
    for e in range(r.num_ends):
        bits = s.legal_bits[g, e]
        for tile in range(NUM_TILES):
            mask[0, e * NUM_TILES + tile] = (bits >> tile) & 1
    write_observation(r, s, g, seat, obs, 0)
    return seat
