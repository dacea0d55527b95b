"""Start ``DominoCore`` games from a mid-round position (the core has no API for it yet).

Search needs to play on from the position a seat observes, with sampled hidden
hands. ``DominoCore`` only starts rounds from a deal, and replaying the public
move sequence from a sampled deal cannot reproduce a draw preset's history: the
observation says how many tiles each seat drew, never when. So ``load_positions``
writes the position straight into the core's per-game state, as the core would
hold it had the round been played: hands, table, ends, outer tiles and their
fives counts, spinner, draw pile (in the given order), known-missing numbers,
scores, opener, seat to move, and every seat's observation block. The observer
becomes seat 0. Draw and pass counters and the round's points start at 0, so
the points a round then reports are those scored from the position on.

This writes the core's internals; ``tests/test_search.py`` pins it against the
real thing on every preset: a loaded position gives every seat the same
observation and legal mask, and the same moves then lead to the same round end
and scores. Core request: ``DominoCore.set_positions(games, hands, table order,
pile_order, missing, scores, opener, to_play)``.
"""

from __future__ import annotations

import numpy as np

from agents.bots.features import Board, spinner_state, unpack_tiles
from domino_env.engine.core import DominoCore
from domino_env.engine.deals import BIT
from domino_env.engine.tiles import NUM_TILES


def load_positions(core: DominoCore, obs: np.ndarray, hands: np.ndarray, order: np.ndarray) -> None:
    """Set every game of ``core`` to the position of ``obs`` (observer = seat 0, to move).

    ``hands``: (N, P) uint64 hands by relative seat (seat 0 = the observer's own);
    ``order``: (N, 28) tile permutations whose last ``draw_pile`` tiles are the
    draw pile in draw order (drawing presets; ignored otherwise).
    """
    rules, n, p = core.rules, core.num_games, core.players
    if obs.shape != (n, core.obs_size) or hands.shape != (n, p):
        raise ValueError(f"need {n} observations and (N, {p}) hands, got {obs.shape} and {hands.shape}")
    board = Board(rules, obs)
    owner, tile_end = board.owner, board.field("tile_end")
    tile_order = board.field("tile_order").astype(np.int64)
    core.hands[:] = hands
    core.table[:] = np.bitwise_or.reduce(np.where(owner >= 2, BIT, np.uint64(0)), axis=1)
    core.deal[:] = order
    if rules.drawing:
        pile = board.field("draw_pile")[:, 0].astype(np.intp)
        core.draw_prefix[:, 0] = 0
        np.bitwise_or.accumulate(BIT[order.astype(np.intp)], axis=1, out=core.draw_prefix[:, 1:])
        core.bone_pos[:] = NUM_TILES - pile
    else:
        core.bone_pos[:] = NUM_TILES
    core.ends[:] = board.ends
    core.end_tile[:] = _outer_tiles(tile_end, tile_order)
    core.end_count[:] = board.end_value
    if rules.spinner:
        core.spinner[:], core.spin_need[:] = spinner_state(tile_end, tile_order)
    core.to_play[:] = 0
    opener = board.field("opener")[:, 0].astype(np.intp)
    core.opener[:] = opener
    core.forced[:] = -1
    core.num_placed[:] = (tile_order > 0).sum(axis=1)
    core.last_move[:] = np.stack([np.where(owner == 2 + k, tile_order, 0).max(axis=1) for k in range(p)], 1)
    core.missing[:] = board.missing
    core.draws[:] = 0
    core.passes[:] = 0
    core.scores[:] = board.field("scores")
    core.round_points[:] = 0
    core.rounds_played[:] = 0
    _write_views(core, obs, board, hands, opener)
    core.refresh_legal()


def _outer_tiles(tile_end: np.ndarray, tile_order: np.ndarray) -> np.ndarray:
    """(N, 4) outer tile of each end: the latest tile placed there, the opening tile for an
    untouched long end, -1 for a closed end or an unplayed short side."""
    opening = np.where((tile_end == 1).any(axis=1), (tile_end == 1).argmax(axis=1), -1)
    outer = np.empty((len(tile_end), 4), dtype=np.intp)
    for end in range(4):
        there = tile_end == end + 2
        latest = np.where(there, tile_order, 0).argmax(axis=1)
        outer[:, end] = np.where(there.any(axis=1), latest, opening if end < 2 else -1)
    return outer


def _write_views(
    core: DominoCore, obs: np.ndarray, board: Board, hands: np.ndarray, opener: np.ndarray
) -> None:
    """Each seat's observation block, and the block all seats share (copied from ``obs``)."""
    views, p = core.views, core.players
    f = views.fields
    placer = board.owner.astype(np.intp) - 2  # absolute seat = relative seat of the observer (seat 0)
    own = unpack_tiles(hands)  # (N, P, 28)
    missing = board.field("missing").reshape(-1, p, 7)
    scores = board.field("scores")
    for seat in range(p):
        rows = views.seat_rows[:, seat]
        rows[:, f["tile_owner"]] = np.where(placer >= 0, 2 + (placer - seat) % p, own[:, seat])
        rows[:, f["missing"]] = missing[:, views.rotation[seat]].reshape(-1, 7 * p)
        rows[:, f["scores"]] = scores[:, views.side_rotation[seat]]
        rows[:, f["opener"].start] = (opener - seat) % p
    views.shared[:] = obs[:, views.seat_size : views.seat_size + views.shared_size]
