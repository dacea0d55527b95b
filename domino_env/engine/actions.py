"""The action encoding: ``action = end * 28 + tile`` (docs/engine.md).

End-major order keeps each end's 28 tiles contiguous, so the legal mask is the
per-end legal bitboards unpacked in place.
"""

from __future__ import annotations

from domino_env.engine.rules import END_NAMES
from domino_env.engine.tiles import NUM_TILES, tile_name


def encode(tile: int, end: int) -> int:
    """Action placing ``tile`` on ``end`` (0 left, 1 right, 2 up, 3 down)."""
    return end * NUM_TILES + tile


def decode(action: int) -> tuple[int, int]:
    """``(tile, end)`` of an action."""
    end, tile = divmod(int(action), NUM_TILES)
    return tile, end


def action_to_move(action: int, opening: bool = False) -> str:
    """Record notation: ``"6-3:left"``, or a bare ``"6-3"`` for an opening move."""
    tile, end = decode(action)
    return tile_name(tile) if opening else f"{tile_name(tile)}:{END_NAMES[end]}"
