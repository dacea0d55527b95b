"""The per-seat observation: exactly the public information of RULES.md section 4.

Layout (int16, seat-relative; the table is in docs/engine.md). Relative seat ``k``
of observer ``s`` is seat ``(s + k) % P``; for teams the observer's team comes
first. The fields are grouped by how they are kept up to date:

* per seat (``seat_rows``): tile owner (28), known-missing numbers (7P), scores
  (S), opener (1) -- what differs between observers and changes rarely;
* shared (``shared``): tile end and tile order (28 each), end numbers and end
  doubles (4 each), draw-pile size (1) -- the same for every observer;
* computed when observed: hand sizes (P) and the seat to move (1).

A placement touches one owner entry per seat and a few shared entries (the
kernels write them, ``domino_env.engine.kernels``), so observing is a row gather and a
block copy instead of rebuilding 28-wide arrays from bitboards each step.
"""

from __future__ import annotations

import numpy as np

from domino_env.engine.rules import Rules
from domino_env.engine.tiles import NUM_TILES


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
    """Every seat's observation of every game, kept up to date incrementally by the kernels.

    ``seat_rows[g, s]`` holds the per-seat block of seat s in game g and
    ``shared[g]`` the block all seats share; see the module docstring. The
    ``*_at`` offsets place the shared fields inside ``shared``.
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
        seats = np.arange(p)
        self.rotation = (seats[:, None] + seats[None, :]) % p
        """``rotation[s, k]``: absolute seat at relative position k for observer s."""
        side_of = np.array([rules.side_of(s) for s in seats])
        self.side_rotation = (side_of[:, None] + np.arange(rules.num_sides)[None, :]) % rules.num_sides
        """``side_rotation[s, k]``: absolute side at relative position k for observer s."""
        start = self.seat_size
        self.end_code_at = f["tile_end"].start - start
        self.order_at = f["tile_order"].start - start
        self.number_at = f["end_number"].start - start
        self.double_at = f["end_double"].start - start
        self.pile_at = f["draw_pile"].start - start
