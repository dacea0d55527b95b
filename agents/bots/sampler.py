"""Determinisation: deal the tiles a seat cannot see, consistently with what it has seen.

The public information that constrains the hidden tiles (RULES.md section 4):
every other seat holds exactly its hand size; it holds no tile carrying a number
it is known to lack (its passes and draws); the boneyard holds the rest (the
draw pile in draw presets, the tiles set aside in block presets). Two more facts
apply to block presets, where a seat's dealt hand is exactly its played tiles
plus its hand: a forced highest-tile opening (made, or ours to make at an empty
table) means no hidden tile outranking it was dealt, and no dealt hand may hold
more doubles than the redeal limit.

Seats are filled one at a time, most constrained first, each with a uniformly
random subset of the tiles it may hold, redrawn until the seats still to fill
can be completed (Hall's condition on the seats: any group of them needs no
more tiles than those at least one of them may hold); where every hidden tile is in a
hand (no boneyard), the tiles no later seat may hold go to the seat being filled first,
so tight positions do not rest on chance. With two players this is
exactly uniform over the consistent deals; with three or four it is uniform
seat by seat, not weighted by the number of completions (a documented
approximation). Draw order of the pile is not sampled here (see ``pile_order``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agents.bots.features import Board, pack_tiles, unpack_tiles
from domino_env.engine.rules import Rules
from domino_env.engine.tiles import DOUBLES_MASK, NUM_TILES, RANK

ABOVE = pack_tiles(RANK[None, :] > RANK[:, None])
"""``ABOVE[t]``: tiles that outrank tile t for the opening (doubles first)."""
MAX_TRIES = 200


@dataclass
class Determinisations:
    """``samples`` consistent fillings of the hidden tiles for each row of a batch."""

    hands: np.ndarray
    """(B, S, P) uint64 hands by relative seat; seat 0 is the observer's own (known) hand."""
    rest: np.ndarray
    """(B, S) uint64 hidden tiles in no hand: the draw pile, or the tiles set aside."""


def determinise(board: Board, samples: int, rng: np.random.Generator) -> Determinisations:
    """``samples`` determinisations of every observation in ``board``."""
    rules, b, p = board.rules, len(board.obs), board.rules.players
    hidden = np.repeat(board.unseen, samples)
    need = np.repeat(board.field("hand_size")[:, 1:].astype(np.int64), samples, axis=0)
    allowed = np.repeat(_allowed(board), samples, axis=0)
    hands = np.zeros((b * samples, p), dtype=np.uint64)
    hands[:, 0] = np.repeat(board.hand, samples)
    played = _played_by_seat(board)
    pending = np.arange(b * samples)
    for _ in range(MAX_TRIES):
        others = _fill(allowed[pending], need[pending], hidden[pending], rng)
        ok = _redeal_ok(rules, others, np.repeat(played, samples, axis=0)[pending])
        hands[pending[ok], 1:] = others[ok]
        pending = pending[~ok]
        if not len(pending):
            break
    else:
        raise RuntimeError(f"no consistent determinisation found for {len(pending)} samples")
    rest = pile_tiles(hidden, hands)
    return Determinisations(hands.reshape(b, samples, p), rest.reshape(b, samples))


def pile_tiles(unseen: np.ndarray, hands: np.ndarray) -> np.ndarray:
    """(n,) the draw pile: the observer's ``unseen`` tiles in none of the other seats' ``hands`` (n, P)."""
    return unseen & ~np.bitwise_or.reduce(hands[:, 1:], axis=1)


def pile_order(rest: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(n, 28) int8 tile orders with the ``rest`` tiles last, uniformly shuffled (the draw order)."""
    keys = rng.random((len(rest), NUM_TILES)) + unpack_tiles(rest)
    return np.argsort(keys, axis=1).astype(np.int8)


def _allowed(board: Board) -> np.ndarray:
    """(B, P-1) tiles each other seat may hold, with the forced-opening fact where it applies."""
    allowed = board.possible[:, 1:].copy()
    rules = board.rules
    if rules.first_opener != "highest_tile" or rules.drawing:
        return allowed
    order = board.field("tile_order")
    opened = (order == 1).any(axis=1)
    # The opening tile, or (empty table: we are the opener) the tile we must open with.
    best_own = np.where(board.owner == 1, RANK, -1).argmax(axis=1)
    opening = np.where(opened, (order == 1).argmax(axis=1), best_own)
    forced_round = rules.later_opener == "same" or (board.field("scores") == 0).all(axis=1)
    own_dealt = board.hand | pack_tiles(board.owner == 2)
    above = ABOVE[opening]
    applies = forced_round & ((own_dealt & above) == 0)
    need = board.field("hand_size")[:, 1:].astype(np.int64)
    restricted = allowed & ~above[:, None]
    seats = np.broadcast_to(np.arange(need.shape[1]), need.shape)
    feasible = _hall(restricted, need, board.unseen, seats)
    applies &= feasible
    return np.where(applies[:, None], restricted, allowed)


def _played_by_seat(board: Board) -> np.ndarray:
    """(B, P-1) tiles each other seat has placed this round."""
    return np.stack([pack_tiles(board.owner == 2 + k) for k in range(1, board.rules.players)], axis=1)


def _redeal_ok(rules: Rules, hands: np.ndarray, played: np.ndarray) -> np.ndarray:
    """Block presets: no dealt hand (played + held) over the redeal limit of doubles."""
    if rules.redeal_doubles is None or rules.drawing:
        return np.ones(len(hands), dtype=bool)
    doubles = np.bitwise_count((hands | played) & DOUBLES_MASK)
    return (doubles <= rules.redeal_doubles).all(axis=1)


def _fill(allowed: np.ndarray, need: np.ndarray, pool: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(m, P-1) hands for the other seats, most constrained seat first (see the module docstring)."""
    m, seats = need.shape
    rows = np.arange(m)
    slack = np.bitwise_count(allowed & pool[:, None]).astype(np.int64) - need
    order = np.argsort(slack, axis=1, kind="stable")
    hands = np.zeros((m, seats), dtype=np.uint64)
    pool = pool.copy()
    for j in range(seats):
        seat = order[:, j]
        forced = _forced(allowed, need, pool, order[:, j:])
        size = need[rows, seat] - np.bitwise_count(forced).astype(np.int64)
        todo = rows
        for _ in range(MAX_TRIES):
            free = allowed[todo, seat[todo]] & pool[todo] & ~forced[todo]
            chosen = forced[todo] | _subset(free, size[todo], rng)
            left = pool[todo] & ~chosen
            ok = np.bitwise_count(chosen) == need[todo, seat[todo]]
            ok &= _hall(allowed[todo], need[todo], left, order[todo, j + 1 :])
            hands[todo[ok], seat[todo[ok]]] = chosen[ok]
            pool[todo[ok]] = left[ok]
            todo = todo[~ok]
            if not len(todo):
                break
        else:
            raise RuntimeError(f"no consistent determinisation found for {len(todo)} samples")
    return hands


def _forced(allowed: np.ndarray, need: np.ndarray, pool: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """(m,) tiles the first of ``seats`` must take: where every tile of ``pool`` goes to a hand
    (no boneyard, as in 4-player block presets), those no later seat may hold.

    Drawing them at random instead leaves tight positions (one seat alone able to hold
    exactly its number of tiles) to chance: 1 in 70 tries there.
    """
    rows = np.arange(len(pool))[:, None]
    full = np.bitwise_count(pool) == need[rows, seats].sum(axis=1)
    later = np.bitwise_or.reduce(allowed[rows, seats[:, 1:]], axis=1, initial=np.uint64(0))
    only = allowed[rows[:, 0], seats[:, 0]] & pool & ~later
    return np.where(full, only, np.uint64(0))


def _subset(candidates: np.ndarray, size: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random ``size``-subset of each bitboard (all of it when it is too small)."""
    flags = unpack_tiles(candidates)
    keys = np.where(flags, rng.random(flags.shape), 2.0)
    cut = np.sort(keys, axis=1)[np.arange(len(keys)), np.clip(size - 1, 0, NUM_TILES - 1)]
    return pack_tiles(flags & (keys <= cut[:, None]) & (size > 0)[:, None])


def _hall(allowed: np.ndarray, need: np.ndarray, pool: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """The ``seats`` (per row, (m, r)) can each get ``need`` tiles they may hold from ``pool``."""
    m, r = seats.shape
    ok = np.ones(m, dtype=bool)
    rows = np.arange(m)[:, None]
    for group in range(1, 1 << r):
        members = seats[:, [i for i in range(r) if group >> i & 1]]
        union = np.bitwise_or.reduce(allowed[rows, members], axis=1)
        ok &= need[rows, members].sum(axis=1) <= np.bitwise_count(union & pool)
    return ok
