"""The per-seat observation: exactly the public information of RULES.md section 4.

Layout (int16, seat-relative; the table is in docs/engine.md): tile owner, tile
end, tile order (28 each), end numbers and end doubles (4 each), hand sizes (P),
draw-pile size (1), known-missing numbers (7P), scores per relative side (S),
opener and seat to move (relative). Relative seat ``k`` of observer ``s`` is seat
``(s + k) % P``; for teams the observer's team comes first.

``ObservationViews`` keeps the per-tile part up to date incrementally (a
placement touches one entry per seat), so observing is a row gather plus a few
small copies instead of rebuilding 28-wide arrays from bitboards each step.
"""

from __future__ import annotations

import numpy as np

from typing import TYPE_CHECKING

from .rules import Rules
from .tiles import IS_DOUBLE, NUM_TILES

if TYPE_CHECKING:
    from .core import DominoCore

OUTER_DOUBLE = np.concatenate([[0], IS_DOUBLE]).astype(np.int16)
"""``OUTER_DOUBLE[outer_tile + 1]``: 1 when an end's outer tile is a double."""
NUMBER_SET_BITS = ((np.arange(256)[:, None] >> np.arange(7)) & 1).astype(np.int16)
"""``NUMBER_SET_BITS[mask]``: the 7 flags of a 7-bit number set."""


def observation_size(rules: Rules) -> int:
    """Length of the observation vector for these rules: 95 + 8P + S."""
    return 95 + 8 * rules.players + rules.num_sides


def observation_fields(rules: Rules) -> dict[str, slice]:
    """Name -> slice of each field in the observation vector."""
    p, s = rules.players, rules.num_sides
    sizes = [
        ("tile_owner", NUM_TILES),
        ("tile_end", NUM_TILES),
        ("tile_order", NUM_TILES),
        ("end_number", 4),
        ("end_double", 4),
        ("hand_size", p),
        ("draw_pile", 1),
        ("missing", 7 * p),
        ("scores", s),
        ("opener", 1),
        ("to_move", 1),
    ]
    fields, start = {}, 0
    for name, size in sizes:
        fields[name] = slice(start, start + size)
        start += size
    return fields


class ObservationViews:
    """Per-tile memory behind the observation, kept up to date incrementally.

    ``owner[g, s, t]`` is tile t's owner code as seat s sees it (the only
    observer-dependent per-tile field); the tile end codes and placement orders
    (``tile_info``) are shared by all seats. A placement touches one entry per seat; everything else in the
    observation is cheap and is assembled from the core's state when observed.
    """

    def __init__(self, rules: Rules, num_games: int) -> None:
        p = rules.players
        self.rules = rules
        self.size = observation_size(rules)
        self.fields = observation_fields(rules)
        self.owner = np.zeros((num_games, p, NUM_TILES), dtype=np.int16)
        self.tile_info = np.zeros((num_games, 2 * NUM_TILES), dtype=np.int16)
        """Tile end codes then placement orders, as they sit in the observation."""
        seats = np.arange(p)
        self.rotation = (seats[:, None] + seats[None, :]) % p
        """``rotation[s, k]``: absolute seat at relative position k for observer s."""
        self.relative = ((seats[:, None] - seats[None, :]) % p).astype(np.int16)
        """``relative[q, s]``: seat q as seen by observer s."""
        sides = np.arange(rules.num_sides)
        side_of = np.array([rules.side_of(s) for s in seats])
        self.side_rotation = (side_of[:, None] + sides[None, :]) % rules.num_sides
        self._owner_rows = self.owner.reshape(num_games * p, NUM_TILES)
        self._owner_flat = self.owner.reshape(-1)
        self._owner_base = (np.arange(num_games)[:, None] * p + seats[None, :]) * NUM_TILES

    def start_round(self, games: np.ndarray, own_tiles: np.ndarray) -> None:
        """Empty table for ``games``: each seat sees its own hand (``own_tiles``) only."""
        self.owner[games] = own_tiles
        self.tile_info[games] = 0

    def placed(self, tile: np.ndarray, seat: np.ndarray, end_code: np.ndarray, order: np.ndarray) -> None:
        """Every game placed ``tile`` (by ``seat``, with tile-end code and placement order)."""
        self._owner_flat[self._owner_base + tile[:, None]] = self.relative.take(seat, axis=0) + 2
        flat = np.arange(len(tile)) * (2 * NUM_TILES) + tile
        info = self.tile_info.reshape(-1)
        info[flat] = end_code
        info[flat + NUM_TILES] = order

    def drew(self, games: np.ndarray, seats: np.ndarray, drawn: np.ndarray) -> None:
        """Tiles ``drawn`` (bitboards) joined ``seats``' hands: they see them now."""
        bits = np.unpackbits(
            np.ascontiguousarray(drawn).view(np.uint8).reshape(-1, 8),
            axis=1,
            count=NUM_TILES,
            bitorder="little",
        )
        self.owner[games, seats] += bits

    def observe(self, core: DominoCore, seats: np.ndarray) -> np.ndarray:
        """(N, size) int16 observations of ``seats[g]`` in every game g."""
        f, n, p = self.fields, core.num_games, self.rules.players
        obs = np.empty((n, self.size), dtype=np.int16)
        rows = core._arange
        obs[:, f["tile_owner"]] = self._owner_rows.take(rows * p + seats, axis=0)
        obs[:, f["tile_end"].start : f["tile_order"].stop] = self.tile_info
        obs[:, f["end_number"]] = core.ends
        obs[:, f["end_double"]] = OUTER_DOUBLE.take(core.end_tile + 1)
        seat_index = core._seat_base[:, None] + self.rotation.take(seats, axis=0)
        obs[:, f["hand_size"]] = np.bitwise_count(core.hands.reshape(-1).take(seat_index))
        obs[:, f["draw_pile"].start] = NUM_TILES - core.bone_pos
        missing = NUMBER_SET_BITS.take(core.missing.reshape(-1).take(seat_index).astype(np.intp), axis=0)
        obs[:, f["missing"]] = missing.reshape(n, 7 * p)
        sides = self.rules.num_sides
        side_index = rows[:, None] * sides + self.side_rotation.take(seats, axis=0)
        obs[:, f["scores"]] = core.scores.reshape(-1).take(side_index)
        obs[:, f["opener"].start] = self.relative.reshape(-1).take(core.opener * p + seats)
        obs[:, f["to_move"].start] = self.relative.reshape(-1).take(core.to_play * p + seats)
        return obs
