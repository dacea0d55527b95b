"""Inference: weigh each determinisation by how likely the other seats' moves were with its hands.

``determinise`` deals the hidden tiles uniformly among the deals that fit the
public facts (hand sizes, numbers a seat passed on), blind to what the other
seats' choices reveal: a player who kept its 6s while it could have played them
probably holds more 6s. ``move_log_likelihood`` replays the round's public moves
from each sampled deal (in block presets a seat's dealt hand is exactly its
played tiles plus its hand, so the replay is exact) and adds up, at every move
of another seat, the log-probability an opponent model (a trained network) gives
that move from that seat's observation in the replay. ``pimc`` with ``inference``
then keeps the likelier deals (docs/arena.md).

The replay starts the round afresh, so its observations show game scores of 0:
in match play the model reads the position without the score. It opens with the
observed opener and tile under a chance-opener rule, because whether this round's
opening was forced (the first round, or every round) is not in the observation;
the opening move is therefore not weighed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from agents.bots.features import Board, pack_tiles, unpack_tiles
from domino_env.engine.core import DominoCore
from domino_env.engine.rules import Rules
from domino_env.engine.tiles import NUM_TILES

MIN_PROBABILITY = 1e-4
"""Floor of a move's probability under the model: one surprising move weighs a deal down, never to zero."""


def check_inferable(rules: Rules) -> None:
    if rules.drawing:
        raise ValueError(
            f"inference replays the round from sampled hands, which a draw preset's observation "
            f"does not allow (when tiles were drawn is not public): {rules.name!r} draws"
        )


def public_actions(board: Board) -> tuple[np.ndarray, np.ndarray]:
    """((B, 28) the round's placements in order as actions, -1 past the end; (B,) how many)."""
    order = board.field("tile_order").astype(np.int64)
    code = board.field("tile_end").astype(np.int64)
    count = order.max(axis=1)
    placed = order > 0
    tile = np.argsort(np.where(placed, order, NUM_TILES + 1), axis=1, kind="stable")
    at = np.take_along_axis(code, tile, axis=1)
    actions = np.where(at == 1, tile, (at - 2) * NUM_TILES + tile)
    return np.where(np.arange(NUM_TILES) < count[:, None], actions, -1), count


def dealt_orders(board: Board, hands: np.ndarray) -> np.ndarray:
    """(B * S, 28) deals by relative seat (seat k's dealt tiles, then the rest) for (B, S, P) ``hands``."""
    b, s, p = hands.shape
    played = np.stack([pack_tiles(board.owner == 2 + k) for k in range(p)], axis=1)  # (B, P)
    dealt = unpack_tiles(hands | played[:, None, :]).reshape(b * s, p, NUM_TILES)
    seat = np.where(dealt.any(axis=1), dealt.argmax(axis=1), p)  # (B * S, 28): the seat dealt each tile
    return np.argsort(seat * NUM_TILES + np.arange(NUM_TILES), axis=1).astype(np.int8)


def replay(rules: Rules, board: Board, hands: np.ndarray) -> tuple[DominoCore, np.ndarray, np.ndarray]:
    """A core of the B * S sampled deals at the start of the round (observer = seat 0), with the
    round's public moves (B * S, 28) and their number (B * S,), to be stepped through in order."""
    s = hands.shape[1]
    actions, count = public_actions(board)
    openers = np.repeat(board.field("opener")[:, 0].astype(np.int64), s)
    replayed = rules.replace(first_opener="random")  # the observed opener, with the tile it played
    deals = dealt_orders(board, hands)
    core = DominoCore(replayed, len(deals), deals=deals, openers=openers, first_deal=np.arange(len(deals)))
    return core, np.repeat(actions, s, axis=0), np.repeat(count, s)


def move_log_likelihood(
    rules: Rules, obs: np.ndarray, hands: np.ndarray, model, seats: Sequence[int] | None = None
) -> np.ndarray:
    """(B, S): log-probability of the other seats' public moves under ``model`` for each sample.

    ``obs``: (B, obs_size) the observer's observations; ``hands``: (B, S, P) sampled hands by
    relative seat (``determinise``); ``model``: has ``probabilities(obs, mask) -> (n, A)``;
    ``seats``: the relative seats whose moves ``model`` plays (default: every other seat), so that a
    best response weighs its target's moves and not its partner's.
    """
    seat = np.arange(rules.players)
    weighed = seat != 0 if seats is None else np.isin(seat, list(seats))
    core, actions, count = replay(rules, Board(rules, obs), hands)
    loglik = np.zeros(len(count))
    for step in range(int(count.max(initial=0))):
        active = count > step
        others = np.flatnonzero(active & weighed[core.to_play] & (step > 0))
        if len(others):
            probabilities = model.probabilities(core.observe()[others], core.legal_mask()[others])
            chosen = probabilities[np.arange(len(others)), actions[others, step]]
            loglik[others] += np.log(np.maximum(chosen, MIN_PROBABILITY))
        core.step(np.where(active, actions[:, step], 0), active=active)
    return loglik.reshape(hands.shape[:2])
