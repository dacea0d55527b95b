"""The per-seat observation: exactly the public information of RULES.md section 4.

Layout (int16, seat-relative; the table is in docs/engine.md). Relative seat ``k``
of observer ``s`` is seat ``(s + k) % P``; for teams the observer's team comes
first. The fields are grouped by how they are kept up to date:

* per seat (``seat_rows``): tile owner (28), known-missing numbers (7P), scores
  (S), opener (1) -- what differs between observers and changes rarely;
* shared (``shared``): tile end and tile order (28 each), end numbers and end
  doubles (4 each), draw-pile size (1) -- the same for every observer;
* computed when observed: hand sizes (P) and the seat to move (1).

A placement touches one owner entry per seat and a few shared entries, so
observing is a row gather and a block copy instead of rebuilding 28-wide arrays
from bitboards each step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .rules import Rules
from .tiles import IS_DOUBLE, NUM_TILES

if TYPE_CHECKING:
    from .core import DominoCore

NUMBER_SET_BITS = ((np.arange(256)[:, None] >> np.arange(7)) & 1).astype(np.int16)
"""``NUMBER_SET_BITS[mask]``: the 7 flags of a 7-bit number set."""
TILE_END_CODES = {"opening": 1, "left": 2, "right": 3, "up": 4, "down": 5}
"""Tile end codes in the observation (0: not on the table)."""


def observation_fields(rules: Rules) -> dict[str, slice]:
    """Name -> slice of each field in the observation vector, in layout order."""
    p, s = rules.players, rules.num_sides
    sizes = [
        ("tile_owner", NUM_TILES),
        ("missing", 7 * p),
        ("scores", s),
        ("opener", 1),
        ("tile_end", NUM_TILES),
        ("tile_order", NUM_TILES),
        ("end_number", 4),
        ("end_double", 4),
        ("draw_pile", 1),
        ("hand_size", p),
        ("to_move", 1),
    ]
    fields, start = {}, 0
    for name, size in sizes:
        fields[name] = slice(start, start + size)
        start += size
    return fields


def observation_size(rules: Rules) -> int:
    """Length of the observation vector for these rules: 95 + 8P + S."""
    return 95 + 8 * rules.players + rules.num_sides


class ObservationViews:
    """Every seat's observation of every game, kept up to date incrementally.

    ``seat_rows[g, s]`` holds the per-seat block of seat s in game g and
    ``shared[g]`` the block all seats share; see the module docstring.
    """

    def __init__(self, rules: Rules, num_games: int) -> None:
        p, f = rules.players, observation_fields(rules)
        self.rules = rules
        self.size = observation_size(rules)
        self.fields = f
        self.seat_size = f["opener"].stop
        self.shared_size = f["draw_pile"].stop - self.seat_size
        self.seat_rows = np.zeros((num_games, p, self.seat_size), dtype=np.int16)
        self.shared = np.zeros((num_games, self.shared_size), dtype=np.int16)
        self._link()
        seats = np.arange(p)
        self.rotation = (seats[:, None] + seats[None, :]) % p
        """``rotation[s, k]``: absolute seat at relative position k for observer s."""
        self.relative = ((seats[:, None] - seats[None, :]) % p).astype(np.int16)
        """``relative[q, s]``: seat q as seen by observer s."""
        side_of = np.array([rules.side_of(s) for s in seats])
        self.side_rotation = (side_of[:, None] + np.arange(rules.num_sides)[None, :]) % rules.num_sides
        self._owner_base = (np.arange(num_games)[:, None] * p + seats[None, :]) * self.seat_size
        self._shared_base = np.arange(num_games) * self.shared_size
        start = self.seat_size
        self.end_code_at = f["tile_end"].start - start
        self.order_at = f["tile_order"].start - start
        self.number_at = f["end_number"].start - start
        self.double_at = f["end_double"].start - start
        self.pile_at = f["draw_pile"].start - start

    def _link(self) -> None:
        """Flat views of the blocks (rebuilt when unpickled, as views do not survive a copy)."""
        self._seat_rows_2d = self.seat_rows.reshape(-1, self.seat_size)
        self._seat_flat = self.seat_rows.reshape(-1)
        self._shared_flat = self.shared.reshape(-1)

    def __getstate__(self) -> dict:
        return {
            k: v for k, v in self.__dict__.items() if k not in ("_seat_rows_2d", "_seat_flat", "_shared_flat")
        }

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._link()

    # -- updates from the core ------------------------------------------------
    def start_round(
        self, games: np.ndarray, own_tiles: np.ndarray, scores: np.ndarray, opener: np.ndarray, draw_pile: int
    ) -> None:
        """Empty table for ``games``: each seat sees its own hand only."""
        f, m, p = self.fields, len(games), self.rules.players
        rows = np.zeros((m, p, self.seat_size), dtype=np.int16)
        rows[:, :, f["tile_owner"]] = own_tiles
        rows[:, :, f["scores"]] = scores[:, self.side_rotation]
        rows[:, :, f["opener"].start] = self.relative[opener]
        self.seat_rows[games] = rows
        shared = np.zeros((m, self.shared_size), dtype=np.int16)
        shared[:, self.number_at : self.number_at + 4] = -1
        shared[:, self.pile_at] = draw_pile
        self.shared[games] = shared

    def placed(self, rows, tile, seat, end, opening, number, order) -> None:
        """Games ``rows`` placed ``tile`` (by ``seat``) on ``end``, which now shows ``number``."""
        self._seat_flat[self._owner_base.take(rows, axis=0) + tile[:, None]] = (
            self.relative.take(seat, axis=0) + 2
        )
        base = self._shared_base.take(rows)
        at_tile, at_end = base + tile, base + end
        index = np.concatenate(
            [
                at_tile + self.end_code_at,
                at_tile + self.order_at,
                at_end + self.number_at,
                at_end + self.double_at,
            ]
        )
        values = np.concatenate([np.where(opening, 1, end + 2), order, number, IS_DOUBLE.take(tile)])
        self._shared_flat[index] = values  # one scatter for the four shared fields

    def opened(self, games: np.ndarray, tiles: np.ndarray, left: np.ndarray, right: np.ndarray) -> None:
        """Opening placements: both long ends show the opening tile."""
        base = self._shared_base[games]
        self._shared_flat[base + self.number_at] = left
        self._shared_flat[base + self.number_at + 1] = right
        self._shared_flat[base + self.double_at + 1] = IS_DOUBLE.take(tiles)

    def short_sides_opened(self, games: np.ndarray, number: np.ndarray) -> None:
        """The spinner's up and down sides opened, showing its number (nothing played there yet)."""
        base = self._shared_base[games] + self.number_at
        self._shared_flat[base + 2] = number
        self._shared_flat[base + 3] = number

    def drew(self, games: np.ndarray, seats: np.ndarray, drawn: np.ndarray, draw_pile: np.ndarray) -> None:
        """Tiles ``drawn`` (bitboards) joined ``seats``' hands: they see them now."""
        bits = np.unpackbits(
            np.ascontiguousarray(drawn).view(np.uint8).reshape(-1, 8),
            axis=1,
            count=NUM_TILES,
            bitorder="little",
        )
        self._seat_rows_2d[games * self.rules.players + seats, :NUM_TILES] += bits
        self._shared_flat[self._shared_base[games] + self.pile_at] = draw_pile

    def missing(self, games: np.ndarray, missing: np.ndarray) -> None:
        """Rewrite the known-missing block of ``games`` from their (m, P) number sets."""
        flags = NUMBER_SET_BITS.take(missing.astype(np.intp), axis=0)  # (m, P, 7) by absolute seat
        rotated = flags.take(self.rotation, axis=1)  # (m, observer, relative seat, 7)
        rows = games[:, None] * self.rules.players + np.arange(self.rules.players)
        self._seat_rows_2d[rows.reshape(-1), self.fields["missing"]] = rotated.reshape(
            rows.size, 7 * self.rules.players
        )

    def scores(self, games: np.ndarray, scores: np.ndarray) -> None:
        """Rewrite the scores block of ``games`` from their (m, sides) game scores."""
        rows = games[:, None] * self.rules.players + np.arange(self.rules.players)
        rotated = scores.take(self.side_rotation, axis=1)  # (m, observer, relative side)
        self._seat_rows_2d[rows.reshape(-1), self.fields["scores"]] = rotated.reshape(
            rows.size, self.rules.num_sides
        )

    # -- reading -----------------------------------------------------------------
    def observe(self, core: DominoCore, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """(len(games), size) int16 observations of ``seats[i]`` in game ``games[i]``."""
        f, p = self.fields, self.rules.players
        obs = np.empty((len(games), self.size), dtype=np.int16)
        seat_base = games * p
        obs[:, : self.seat_size] = self._seat_rows_2d.take(seat_base + seats, axis=0)
        shared = self.shared if games is core._arange else self.shared.take(games, axis=0)
        obs[:, self.seat_size : self.seat_size + self.shared_size] = shared
        seat_index = seat_base[:, None] + self.rotation.take(seats, axis=0)
        obs[:, f["hand_size"]] = np.bitwise_count(core.hands.reshape(-1).take(seat_index))
        obs[:, f["to_move"].start] = self.relative.reshape(-1).take(core.to_play.take(games) * p + seats)
        return obs
