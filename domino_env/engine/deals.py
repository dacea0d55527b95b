"""Where deals come from: seeded random deals (with the redeal rule) or a fixed list.

A deal is a permutation of the 28 tile indices: seat ``s`` holds
``deal[s*h:(s+1)*h]`` and the rest is the boneyard in draw order.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from domino_env.engine.rules import CHANCE_OPENERS, Rules
from domino_env.engine.tiles import IS_DOUBLE, NUM_TILES, RANK

BIT = np.uint64(1) << np.arange(NUM_TILES, dtype=np.uint64)
"""``BIT[t]``: the bitboard of tile t alone."""


def doubles_per_seat(rules: Rules, deals: np.ndarray) -> np.ndarray:
    """(n, players) count of doubles each seat is dealt."""
    dealt = deals[:, : rules.players * rules.hand_size]
    return IS_DOUBLE[dealt].reshape(len(deals), rules.players, rules.hand_size).sum(axis=2)


def redeal_needed(rules: Rules, deals: np.ndarray) -> np.ndarray:
    """(n,) True where the rules would redeal (a seat holds too many doubles)."""
    if rules.redeal_doubles is None:
        return np.zeros(len(deals), dtype=bool)
    return (doubles_per_seat(rules, deals) > rules.redeal_doubles).any(axis=1)


MIN_ROWS = 64
"""``random_deals`` draws at least this many rows of keys at a time."""

KEY_BITS = ~np.uint32(31)
"""A shuffle key's random bits; its low 5 bits hold the tile's index (``TILE_BITS``)."""
TILE_BITS = np.arange(NUM_TILES, dtype=np.uint32)


def random_deals(rules: Rules, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` uniformly random deals (int8, shape (count, 28)) that the rules accept.

    Each tile gets a random 27-bit key with its index in the low 5 bits, and
    sorting the keys shuffles the tiles (about 4x faster than argsort of random
    floats). The rare rows where two keys tie (probability ~3e-6) are drawn again,
    so no order is favoured; rows the rules would redeal are drawn again too.
    The deals are the first ``count`` accepted rows of the generator's stream, at least
    ``MIN_ROWS`` rows drawn at a time.
    """
    if count == 1:
        return first_accepted(rules, rng)[None]
    out = np.empty((count, NUM_TILES), dtype=np.int8)
    filled = 0
    while filled < count:
        batch = max(count - filled, MIN_ROWS)
        keys = rng.bit_generator.random_raw((batch, NUM_TILES // 2)).view(np.uint32) & KEY_BITS
        keys = np.sort(keys | TILE_BITS, axis=1)
        tie = ((keys[:, 1:] ^ keys[:, :-1]) < 32).any(axis=1)
        deals = (keys & np.uint32(31)).astype(np.int8)
        deals = deals[~tie & ~redeal_needed(rules, deals)][: count - filled]
        out[filled : filled + len(deals)] = deals
        filled += len(deals)
    return out


def first_accepted(rules: Rules, rng: np.random.Generator) -> np.ndarray:
    """``random_deals(rules, 1, rng)[0]``, drawing the same rows, checked one by one in plain Python.

    One deal is what a seeded reset of one game needs, and the batched path's NumPy calls
    over ``MIN_ROWS`` rows cost about 3x this loop over the first row (nearly always
    accepted). The stream is consumed exactly as the batched path consumes it.
    """
    while True:
        for row in rng.bit_generator.random_raw((MIN_ROWS, NUM_TILES // 2)).view(np.uint32):
            keys = ((row & KEY_BITS) | TILE_BITS).tolist()
            keys.sort()
            if any((b ^ a) < 32 for a, b in pairwise(keys)):
                continue  # two keys tie: drawn again
            deal = np.array([key & 31 for key in keys], dtype=np.int8)
            if rules.redeal_doubles is not None and redeal_needed(rules, deal[None])[0]:
                continue  # the rules would redeal it
            return deal


def check_deals(rules: Rules, deals: np.ndarray) -> np.ndarray:
    """Validate explicit deals: int permutations of 0..27 that need no redeal."""
    deals = np.asarray(deals)
    if deals.ndim == 1:
        deals = deals[None, :]
    if deals.ndim != 2 or deals.shape[1] != NUM_TILES:
        raise ValueError(f"deals must have shape (n, 28), got {deals.shape}")
    if len(deals) == 0:
        raise ValueError("deals must hold at least one deal")
    if not np.issubdtype(deals.dtype, np.integer):
        raise ValueError(f"deals must hold tile indices (integers), got dtype {deals.dtype}")
    if not (np.sort(deals, axis=1) == np.arange(NUM_TILES)).all():
        bad = int(np.flatnonzero(~(np.sort(deals, axis=1) == np.arange(NUM_TILES)).all(axis=1))[0])
        raise ValueError(f"deal {bad} is not a permutation of the 28 tiles (a tile twice or missing)")
    redeal = redeal_needed(rules, deals)
    if redeal.any():
        bad = int(np.flatnonzero(redeal)[0])
        raise ValueError(
            f"deal {bad} gives a seat more than {rules.redeal_doubles} doubles; "
            f"preset {rules.name!r} would redeal it"
        )
    return deals.astype(np.int8)


@dataclass
class PreparedDeals:
    """Deals with everything a new round needs, computed in bulk (one row per deal)."""

    deals: np.ndarray
    """(K, 28) int8 tile order."""
    hands: np.ndarray
    """(K, players) uint64 bitboards."""
    draw_prefix: np.ndarray
    """(K, 29) uint64: ``draw_prefix[k, j]`` = tiles ``deals[k, :j]`` ((K, 0) without drawing)."""
    own_tiles: np.ndarray
    """(K, players, 28) uint8: 1 where a seat holds a tile (its first observation)."""
    opener: np.ndarray
    """(K,) seat that opens under the first-round rule (a chance seat for lots/random)."""
    forced: np.ndarray
    """(K,) tile the opener must play, -1 for any tile."""


def prepare_deals(rules: Rules, deals: np.ndarray, chance_openers: np.ndarray) -> PreparedDeals:
    """Hands, draw prefixes, first observations and first-round openers of ``deals``."""
    p, h, k = rules.players, rules.hand_size, len(deals)
    bits = BIT.take(deals.astype(np.intp))
    hands = np.bitwise_or.reduce(bits[:, : p * h].reshape(k, p, h), axis=2)
    prefix = np.zeros((k, NUM_TILES + 1 if rules.drawing else 0), dtype=np.uint64)
    if rules.drawing:
        np.bitwise_or.accumulate(bits, axis=1, out=prefix[:, 1:])
    own = np.unpackbits(hands.view(np.uint8).reshape(k, p, 8), axis=2, count=NUM_TILES, bitorder="little")
    dealt = deals[:, : p * h].astype(np.intp)
    if rules.first_opener == "highest_tile":
        best = RANK.take(dealt).argmax(axis=1)
        opener, forced = best // h, dealt[np.arange(k), best]
    elif rules.first_opener == "six_six":
        opener, forced = (dealt == NUM_TILES - 1).argmax(axis=1) // h, np.full(k, NUM_TILES - 1)
    else:
        opener, forced = np.asarray(chance_openers, dtype=np.intp), np.full(k, -1)
    return PreparedDeals(deals, hands, prefix, own, opener.astype(np.intp), forced.astype(np.intp))


def check_first_deals(first: np.ndarray, num_games: int, num_deals: int) -> np.ndarray:
    """``first`` as (num_games,) int64 row numbers of a list of ``num_deals`` deals, or a ValueError."""
    first = np.asarray(first)
    if first.shape != (num_games,) or not np.issubdtype(first.dtype, np.integer):
        raise ValueError(
            f"first_deal must be {num_games} integers (one per game), got shape {first.shape} {first.dtype}"
        )
    if ((first < 0) | (first >= num_deals)).any():
        raise ValueError(f"first_deal must be rows 0 to {num_deals - 1} of the deal list")
    return first.astype(np.int64)


class DealSource:
    """Supplies each game's next deal: random (prepared in bulk) or from a fixed list.

    Random deals are prepared a batch at a time (4 rounds of every game, at least 4096
    deals), which amortises NumPy's per-call cost. ``restart(rng, batch=1)`` makes the
    next refill small and the ones after it double back to the full batch, so that a
    one-game reseed (``Game.reset(seed=...)``, every episode in the usual loop) prepares
    the deal it needs, not 4096 deals it throws away.

    With a fixed list every game walks the list (deal ``k`` of game ``g`` is
    ``deals[(first[g] + k) % len(deals)]``, ``first`` 0 by default), which is what
    duplicate evaluation needs: each game on its own run of the same deals.
    ``openers`` fixes each deal's chance opener (lots/random rules).
    """

    def __init__(
        self,
        rules: Rules,
        rng: np.random.Generator,
        num_games: int,
        deals: np.ndarray | None = None,
        openers: np.ndarray | None = None,
        first: np.ndarray | None = None,
    ) -> None:
        self.rules = rules
        self.rng = rng
        self.first = np.zeros(num_games, dtype=np.int64)
        self.fixed: PreparedDeals | None = None
        self.fixed_openers = openers is not None
        if deals is not None:
            deals = check_deals(rules, deals)
            if openers is None:
                openers = np.zeros(len(deals), dtype=np.intp)
            openers = np.asarray(openers).reshape(-1)
            if len(openers) != len(deals):
                raise ValueError(f"{len(openers)} openers for {len(deals)} deals")
            if (
                not np.issubdtype(openers.dtype, np.integer)
                or ((openers < 0) | (openers >= rules.players)).any()
            ):
                raise ValueError(f"openers must be seats 0 to {rules.players - 1}")
            self.fixed = prepare_deals(rules, deals, openers)
            if first is not None:
                self.first = check_first_deals(first, num_games, len(deals))
        elif openers is not None or first is not None:
            raise ValueError("openers and first_deal need an explicit deal list")
        self.cursor = self.first.copy()
        self._batch = max(4 * num_games, 4096)
        self._refill = self._batch
        """How many random deals the next refill prepares (at least the games asking)."""
        self._buffer: PreparedDeals | None = None
        self._used = 0

    def restart(self, rng: np.random.Generator, batch: int | None = None) -> None:
        """Start the fixed list over; random deals continue from ``rng``. The next refill prepares
        ``batch`` deals (None: a full batch), each one after it twice as many, up to a full batch."""
        self.rng = rng
        self.cursor[:] = self.first
        self._buffer = None
        self._refill = self._batch if batch is None else min(batch, self._batch)

    def select(self, games: np.ndarray) -> tuple[PreparedDeals, np.ndarray, np.ndarray]:
        """Where the next deal of each game in ``games`` lies: prepared deals, a row in them, its opener."""
        n = len(games)
        if self.fixed is not None:
            rows = self.cursor[games] % len(self.fixed.deals)
            self.cursor[games] += 1
            opener = self.fixed.opener.take(rows)
            if not self.fixed_openers and self.rules.first_opener in CHANCE_OPENERS:
                opener = self.rng.integers(self.rules.players, size=n)
            return self.fixed, rows, opener
        if self._buffer is None or self._used + n > len(self._buffer.deals):
            size = max(n, self._refill)
            self._refill = min(2 * size, self._batch)
            deals = random_deals(self.rules, size, self.rng)
            self._buffer = prepare_deals(self.rules, deals, self.rng.integers(self.rules.players, size=size))
            self._used = 0
        rows = np.arange(self._used, self._used + n)
        self._used += n
        return self._buffer, rows, self._buffer.opener.take(rows)
