"""The 28 tiles of a double-six set: indexing, pips, ranking and bit tables.

Tiles are numbered in canonical order ``0-0, 0-1, ..., 0-6, 1-1, 1-2, ..., 6-6``
(index 0 to 27). A set of tiles is a ``uint64`` bitboard with bit ``i`` for tile
``i``; ``NUMBER_MASK[n]`` holds every tile that carries the number ``n``.
Everything else in the package (rules, engines, records) indexes tiles this way.
"""

from __future__ import annotations

import numpy as np

NUM_TILES = 28
NUM_NUMBERS = 7
TOTAL_PIPS = 168

TILES: tuple[tuple[int, int], ...] = tuple((a, b) for a in range(7) for b in range(a, 7))
"""``TILES[i] = (low, high)`` for tile ``i``."""

LOW = np.array([a for a, _ in TILES], dtype=np.int8)
HIGH = np.array([b for _, b in TILES], dtype=np.int8)
PIPS = (LOW + HIGH).astype(np.int16)
IS_DOUBLE = LOW == HIGH
DOUBLES_MASK = np.uint64(sum(1 << i for i in range(NUM_TILES) if IS_DOUBLE[i]))
ALL_TILES_MASK = np.uint64((1 << NUM_TILES) - 1)

_INDEX = {}
for _i, (_a, _b) in enumerate(TILES):
    _INDEX[(_a, _b)] = _INDEX[(_b, _a)] = _i

TILE_INDEX = np.full((7, 7), -1, dtype=np.int8)
"""``TILE_INDEX[a, b]``: index of the tile ``a-b`` (either order)."""
for (_a, _b), _i in _INDEX.items():
    TILE_INDEX[_a, _b] = _i

NUMBER_MASK = np.array(
    [sum(1 << i for i, (a, b) in enumerate(TILES) if n in (a, b)) for n in range(NUM_NUMBERS)],
    dtype=np.uint64,
)
"""``NUMBER_MASK[n]``: bitboard of the 7 tiles that carry the number ``n``."""

OTHER_HALF = np.full((NUM_TILES, NUM_NUMBERS), -1, dtype=np.int8)
"""``OTHER_HALF[t, n]``: the number tile ``t`` shows when placed against ``n`` (-1: no fit)."""
for _i, (_a, _b) in enumerate(TILES):
    OTHER_HALF[_i, _a] = _b
    OTHER_HALF[_i, _b] = _a
OTHER_HALF_FLAT = np.concatenate([OTHER_HALF, np.full((NUM_TILES, 1), -1, np.int8)], axis=1).reshape(-1)
"""``OTHER_HALF_FLAT[tile * 8 + n]``: ``OTHER_HALF[tile, n]`` flat, with -1 for n = 7 (no number)."""
NUMBER_BIT = np.array([1 << n for n in range(NUM_NUMBERS)] + [0], dtype=np.uint8)
"""``NUMBER_BIT[n]``: bit of number n in a 7-bit number set; ``NUMBER_BIT[-1]`` (a closed end) is 0."""

# Opener ranking (RULES.md section 1, seed 000): every double outranks every
# non-double; then higher pip sum; then the higher single number.
RANK = np.array(
    [(1000 if a == b else 0) + 10 * (a + b) + b for a, b in TILES],
    dtype=np.int16,
)
"""``RANK[i]``: larger means a stronger opening tile (6-6 highest)."""


def tile_index(a: int, b: int) -> int:
    """Index of tile ``a-b`` (either order)."""
    if not (0 <= a <= 6 and 0 <= b <= 6):
        raise ValueError(f"tile {a}-{b}: numbers must be between 0 and 6")
    return _INDEX[(a, b)]


def parse_tile(text: str) -> int:
    """Index of a tile written ``"a-b"`` in either order (``"3-6" == "6-3"``)."""
    a, b = parse_tile_halves(text)
    return _INDEX[(a, b)]


def parse_tile_halves(text: str) -> tuple[int, int]:
    """The two numbers of ``"a-b"`` in the order written."""
    parts = str(text).strip().split("-")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise ValueError(f"bad tile {text!r}: write a tile as 'a-b' with numbers 0 to 6")
    a, b = (int(p) for p in parts)
    if not (0 <= a <= 6 and 0 <= b <= 6):
        raise ValueError(f"bad tile {text!r}: numbers must be between 0 and 6")
    return a, b


def tile_name(index: int) -> str:
    """``"a-b"`` with the high number first (``"6-3"``), as records list legal moves."""
    low, high = TILES[index]
    return f"{high}-{low}"
