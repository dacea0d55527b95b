"""Duplicate play: a fixed list of deals, every deal played under every seat rotation, all batched.

A *table* is a seating: which policy plays each seat. For a pair of policies
``rotations(rules)`` gives the seatings that let each policy hold every hand of
every deal (2 players: the two seats swapped; teams: the partnerships swapped
between seats 0+2 and 1+3; 3-4 players each for themselves: each policy alone
at each seat against the other at the rest). ``play`` runs every (table, deal)
in a few ``DominoCore`` batches: game ``g`` walks a run of consecutive deals of
the list, and at every step each policy is called once, on all the games where
one of its seats is to move. ``play(..., save=N)`` also records N of the rounds move
by move, returned as game records (``domino_env.tools.records``) that anyone can replay.

A stochastic policy with an ``act_seeded(obs, mask, seeds)`` method (``random``) is called
through it with one seed per row, made from the run's seed, the table's seating, the
deal's index in the run, the round of the match, the tiles placed and the seat to move
(``game_seeds``): its moves in a game then depend on that game alone, so batching the
games otherwise, or sharding them over Ray tasks (``agents.arena.distributed``), never
changes a result. Other policies are called with ``policy(obs, mask)``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from agents.bots.adapters import PolicyError
from agents.bots.registry import Bot, reveal_to_cheater
from domino_env.engine.actions import action_to_move
from domino_env.engine.core import DominoCore
from domino_env.engine.deals import random_deals
from domino_env.engine.reference import OPENING, Round, deal_to_hands, move_name
from domino_env.engine.rules import CHANCE_OPENERS, FIELD_NAMES, Rules
from domino_env.engine.tiles import tile_name
from domino_env.envs.policies import act_per_policy, mix64

Mode = Literal["round", "match"]


def duplicate_deals(rules: Rules, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` seeded deals and the chance opener of each (used by lots/random presets)."""
    rng = np.random.default_rng(seed)
    return random_deals(rules, count, rng), rng.integers(rules.players, size=count)


def game_seeds(seed: int, *identity: np.ndarray) -> np.ndarray:
    """One uint64 seed per row from ``seed`` and the row's ``identity`` (columns of non-negative ints)."""
    seeds = np.full(len(identity[0]), seed % 2**64, dtype=np.uint64)
    for column in identity:
        seeds = mix64(seeds ^ (column.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)))
    return seeds


def rotations(rules: Rules) -> np.ndarray:
    """(R, P) seatings of a pair of policies: 0 where the first sits, 1 where the second does."""
    p = rules.players
    if rules.teams:
        return np.array([[0, 1, 0, 1], [1, 0, 1, 0]])
    alone = np.eye(p, dtype=int)
    seatings = np.concatenate([1 - alone, alone]) if p > 2 else alone[::-1]
    return np.unique(seatings, axis=0)


@dataclass
class Played:
    """One row per (table, deal) played: what each side scored and who won."""

    table: np.ndarray
    """(n,) index into the seatings passed to ``play``."""
    deal: np.ndarray
    """(n,) index of the deal (round mode) or of the match's first deal (match mode)."""
    points: np.ndarray
    """(n, sides) the round's points (round mode) or the final game scores (match mode)."""
    winner: np.ndarray
    """(n,) winning side of the round or the match, -1 for nobody."""
    seconds: np.ndarray
    """(policies,) wall time spent inside each policy's calls."""
    moves: np.ndarray
    """(policies,) decisions each policy was asked for (rows of its calls)."""
    saved: list[SavedGame] = field(default_factory=list)
    """The rounds recorded move by move (``play(..., save=N)``)."""


@dataclass
class SavedGame:
    """One round of a ``play`` run as a game record, and where it was played."""

    table: int
    """Index into the seatings passed to ``play``."""
    deal: int
    """Index of the deal."""
    record: dict[str, Any]
    """The game record (``domino_env.tools.records``): deal, opener and every move."""


def game_record(rules: Rules, deal: np.ndarray, opener: int, actions: list[int]) -> dict[str, Any]:
    """The record of a round the core played from ``deal`` with ``actions``.

    The moves are replayed by the reference engine as the record is written, so a saved
    game is one that ``domino_env.tools.records.replay`` accepts.
    """
    hands, boneyard = deal_to_hands(rules, deal)
    chance = rules.first_opener in CHANCE_OPENERS
    rnd = Round(rules, hands, boneyard, int(opener) if chance else None)
    moves = []
    for action in actions:
        rnd.step(action)
        placed = rnd.table[-1]
        moves.append(move_name(placed.tile, None if placed.end == OPENING else placed.end))
    base = Rules.preset(rules.name, rules.players)
    overrides = {
        name: getattr(rules, name)
        for name in FIELD_NAMES
        if getattr(rules, name) != getattr(base, name) and name not in ("name", "players")
    }
    record: dict[str, Any] = {
        "preset": rules.name,
        "players": rules.players,
        "hands": [[tile_name(t) for t in hand] for hand in hands],
        "boneyard": [tile_name(t) for t in boneyard],
    }
    if chance:
        record["opener"] = int(opener)
    if overrides:
        record["rules"] = overrides
    record["moves"] = moves
    return record


def check_actions(name: str, picked: np.ndarray, mask: np.ndarray, where: Callable[[int], str]) -> None:
    """A PolicyError naming the policy, the decision (``where(row)``) and the move, unless ``picked``
    holds one legal integer action per row of ``mask``."""
    if picked.shape != (len(mask),) or not np.issubdtype(picked.dtype, np.integer):
        raise PolicyError(
            f"policy {name!r} must return ({len(mask)},) integer actions for {len(mask)} observations, "
            f"got {picked.dtype} {picked.shape}"
        )
    inside = (picked >= 0) & (picked < mask.shape[1])
    legal = inside & mask[np.arange(len(mask)), np.where(inside, picked, 0)]
    if not legal.all():
        row = int(np.flatnonzero(~legal)[0])
        action = int(picked[row])
        move = action_to_move(action) if 0 <= action < mask.shape[1] else "no move"
        options = ", ".join(action_to_move(a) for a in np.flatnonzero(mask[row]))
        raise PolicyError(
            f"policy {name!r} played action {action} ({move}) at {where(row)}, which is not legal there; "
            f"legal: {options}"
        )


def play(
    rules: Rules,
    policies: Sequence[Bot],
    seatings: np.ndarray,
    deals: np.ndarray,
    openers: np.ndarray,
    mode: Mode = "round",
    batch: int = 16384,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
    save: int = 0,
    deal_offset: int = 0,
) -> Played:
    """Play every deal at every table (``seatings[t, seat]`` = index into ``policies``).

    Round mode: each (table, deal) is one round. Match mode: each (table, deal)
    is one game to the target that starts on that deal and walks the next ones.
    ``progress`` is told how many rounds/matches each step completed. ``save``: record
    that many rounds (round mode), spread evenly over the tables and deals.
    ``deal_offset``: the index of ``deals[0]`` in the whole run's deals (a shard's first
    deal), which goes into the games' seeds so that a shard plays what the whole run does.
    """
    seatings = np.asarray(seatings)
    tables, count = len(seatings), len(deals)
    if mode == "round":
        slots = max(1, min(count, batch // tables))
        bounds = np.linspace(0, count, slots + 1).astype(np.int64)
        first, quota = bounds[:-1], np.diff(bounds)
    else:
        first, quota = np.arange(count), np.ones(count, dtype=np.int64)
    game_table = np.repeat(np.arange(tables), len(first))
    game_first = np.tile(first, tables)
    game_quota = np.tile(quota, tables)
    count = min(save, len(game_table)) if mode == "round" else 0
    watched = np.unique(np.linspace(0, len(game_table) - 1, count).round().astype(np.int64))
    parts = []
    for start in range(0, len(game_table), batch):
        chunk = slice(start, start + batch)
        watch = watched[(watched >= start) & (watched < start + batch)] - start
        parts.append(
            _play_batch(
                rules, policies, seatings[game_table[chunk]], game_table[chunk], game_first[chunk],
                game_quota[chunk], deals, openers, mode, seed, start, progress, watch, deal_offset,
            )
        )  # fmt: skip
    table, deal, points, winner = (
        np.concatenate([getattr(p, f) for p in parts]) for f in ("table", "deal", "points", "winner")
    )
    order = np.lexsort((deal, table))  # rows by table, then deal: the same sums however games finish
    saved = [game for p in parts for game in p.saved]
    return Played(
        table[order], deal[order], points[order], winner[order],
        sum(p.seconds for p in parts), sum(p.moves for p in parts), saved,
    )  # fmt: skip


def merge_played(cuts: list[tuple[np.ndarray, int, int]], parts: list[Played]) -> Played:
    """The rows of several ``play`` calls as one run's (``parts[i]`` played the tables ``cuts[i][0]``
    of the run's seatings on its deals ``cuts[i][1]:cuts[i][2]``): global table and deal indices,
    ordered by table, then deal, as ``play`` orders them."""
    table = np.concatenate([group[part.table] for (group, _, _), part in zip(cuts, parts, strict=True)])
    deal = np.concatenate([lo + part.deal for (_, lo, _), part in zip(cuts, parts, strict=True)])
    order = np.lexsort((deal, table))  # one order for any sharding: rows by table, then deal
    saved = [
        replace(game, table=int(group[game.table]), deal=lo + game.deal)
        for (group, lo, _), part in zip(cuts, parts, strict=True)
        for game in part.saved
    ]
    return Played(
        table[order],
        deal[order],
        np.concatenate([part.points for part in parts])[order],
        np.concatenate([part.winner for part in parts])[order],
        sum(part.seconds for part in parts),
        sum(part.moves for part in parts),
        saved,
    )


def _play_batch(
    rules: Rules,
    policies: Sequence[Bot],
    seats: np.ndarray,
    table: np.ndarray,
    first: np.ndarray,
    quota: np.ndarray,
    deals: np.ndarray,
    openers: np.ndarray,
    mode: Mode,
    seed: int,
    start: int,
    progress: Callable[[int], None] | None,
    watch: np.ndarray,
    deal_offset: int,
) -> Played:
    """``watch``: games whose first round is recorded move by move (``Played.saved``); ``start``:
    the batch's first game in the run (seeds its core)."""
    n = len(table)
    core = DominoCore(
        rules, len(first), seed=seed + start, episode=mode, deals=deals, openers=openers, first_deal=first
    )
    games = np.arange(n)
    done = np.zeros(n, dtype=np.int64)
    rows: list[tuple[np.ndarray, ...]] = []
    seconds, moves = np.zeros(len(policies)), np.zeros(len(policies), dtype=np.int64)
    recorded: dict[int, list[int]] = {int(g): [] for g in watch}

    def timed(index: int, chosen: np.ndarray, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """One policy's batched call: timed, counted, checked; a cheating one sees the core first,
        a seeded one gets a seed per game (see the module docstring)."""
        policy = policies[index]
        reveal_to_cheater(policy, core, chosen)
        act_seeded = getattr(policy, "act_seeded", None)
        row_seeds = None
        if act_seeded is not None:  # the game's identity: seating, deal, round of the match, decision
            row_seeds = game_seeds(
                seed, *seats[chosen].T, deal_offset + first[chosen] + done[chosen],
                core.rounds_played[chosen], core.num_placed[chosen], core.to_play[chosen],
            )  # fmt: skip
        began = time.perf_counter()
        try:
            picked = np.asarray(policy(obs, mask) if act_seeded is None else act_seeded(obs, mask, row_seeds))
        except PolicyError as error:  # an adapted policy that could not play: say where
            raise PolicyError(f"{error}, at {where(chosen[0])}") from error
        except Exception as error:  # the user's code failed: say whose and where, not just the traceback
            raise PolicyError(
                f"policy {policy.name!r} raised {type(error).__name__} at {where(chosen[0])}: {error}"
            ) from error
        seconds[index] += time.perf_counter() - began
        moves[index] += len(chosen)
        check_actions(policy.name, picked, mask, lambda row: where(chosen[row]))
        return picked

    def where(game: int) -> str:
        """The deal (its index in the whole run) and the seat of a decision, for an error message."""
        deal = deal_offset + first[game] + done[game]
        return f"deal {deal} of seed {seed}, seat {core.to_play[game]}, move {core.num_placed[game] + 1}"

    while (done < quota).any():
        active = done < quota
        obs, mask = core.observe(), core.legal_mask()
        actions = mask.argmax(axis=1)
        owner = np.where(active, seats[games, core.to_play], -1)
        act_per_policy(policies, owner, obs, mask, actions, call=timed)
        for game, actions_so_far in recorded.items():
            if done[game] == 0:
                actions_so_far.append(int(actions[game]))
        result = core.step(actions)
        ended = (result.game_over if mode == "match" else result.round_over) & active
        finished = np.flatnonzero(ended)
        if len(finished):
            points = result.scores if mode == "match" else result.points
            winner = result.game_winner if mode == "match" else result.winner
            rows.append(
                (table[finished], first[finished] + done[finished], points[finished], winner[finished])
            )
            done[finished] += 1
            if progress is not None:
                progress(len(finished))
    table_, deal, points, winner = (np.concatenate(column) for column in zip(*rows, strict=True))
    saved = [
        SavedGame(int(table[g]), int(first[g]), game_record(rules, deals[first[g]], openers[first[g]], taken))
        for g, taken in recorded.items()
    ]
    return Played(table_, deal, points, winner.astype(np.int64), seconds, moves, saved)
