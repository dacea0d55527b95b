"""The arena on Ray: a duplicate run's (table, deal) grid cut into shards, one Ray task each.

Every statistic of an arena run (``stats``) is computed from its rows, one per
(table, deal) played, and a row depends only on its deal and on the policies at
its table. So ``run_arena`` cuts the grid into ``SHARDS_PER_WORKER * ray.workers``
shards (groups of tables; in round mode also ranges of deals once there are more
shards than tables; matches walk on through the following deals, so match shards
keep every deal), plays each shard in a Ray task with ``duplicate.play``, at most
``ray.workers`` at once, and puts the rows back together, ordered by table and deal.
With deterministic policies (the heuristic bots, greedy networks) and ``random``
(which ``duplicate.play`` gives a seed per game and decision, made from the run's
seed, the seating and the deal's index in the whole run) the result is the local
run's, timings aside. A stochastic policy without ``act_seeded`` (``pimc``, a
sampling network) draws from a stream of its own in each shard, seeded by ``seed``,
its index and the shard: another sample of the same games, reproducible for a given
seed and worker count. ``save_games`` records are shared out over the shards, so they
are other rounds than a local run records.

Ray does the placement, the transport and the retries (a task on a lost node
runs again elsewhere); checkpoint paths must exist on every node.

    python scripts/evaluate.py configs/arena/bots.yaml ray.workers=2
    python scripts/evaluate.py configs/arena/bots.yaml ray.workers=64 ray.address=auto   # a running cluster
"""

from __future__ import annotations

import time
from itertools import pairwise
from types import ModuleType
from typing import Any

import numpy as np

from agents.arena.config import ArenaConfig
from agents.arena.duplicate import Mode, Played, duplicate_deals, merge_played, play, rotations
from agents.arena.stats import seated
from agents.arena.tournament import (
    ArenaResult,
    Progress,
    arena_result,
    build_policies,
    display_names,
    schedule_pairs,
    seatings,
)
from agents.bots.registry import load_policy
from agents.configuration import ConfigError, RayConfig
from domino_env.install import install_hint

SHARDS_PER_WORKER = 4
"""Shards per worker: the tables cost unlike amounts (the search bots, ``random``), so each worker
takes a next shard when it is done, and the workers finish together."""
INSTALL = install_hint("ray")
"""What to run when a Ray option is used without Ray."""


def require_ray(option: str = "ray.workers", without: str = "") -> ModuleType:
    """The ``ray`` module, or a ConfigError saying how to install it (and ``without``: how to run
    without it, where a config asks for Ray by default)."""
    try:
        import ray
    except ImportError:
        hint = f", or run without it: {without}" if without else ""
        raise ConfigError(f"{option} needs Ray, which is not installed: {INSTALL}{hint}") from None
    return ray


def connect(settings: RayConfig) -> bool:
    """Join ``settings.address`` (empty: start a local Ray) unless Ray runs in this process already.

    Returns whether this call started it, so that the caller shuts down only what it started.
    """
    ray = require_ray()
    if ray.is_initialized():
        return False
    try:
        ray.init(address=settings.address or None, include_dashboard=False, logging_level="warning")
    except (ConnectionError, ValueError) as error:  # no cluster there, or a malformed address
        raise ConfigError(f"ray.address {settings.address!r}: {' '.join(str(error).split())}") from None
    return True


def shards(tables: int, deals: int, pieces: int, mode: Mode) -> list[tuple[np.ndarray, int, int]]:
    """(table indices, first deal, end deal) per shard: about ``pieces`` shards of the grid."""
    groups = np.array_split(np.arange(tables), min(tables, pieces))
    if mode == "match" or pieces <= tables:
        return [(group, 0, deals) for group in groups]
    bounds = np.linspace(0, deals, min(deals, -(-pieces // tables)) + 1).astype(np.int64)
    return [(group, int(lo), int(hi)) for group in groups for lo, hi in pairwise(bounds)]


def play_shard(
    config: ArenaConfig,
    mode: Mode,
    seats: np.ndarray,
    deals: np.ndarray,
    openers: np.ndarray,
    seed: int,
    shard: int,
    save: int = 0,
    deal_offset: int = 0,
) -> Played:
    """One shard, as a Ray task runs it: its own policies (seeded per shard), ``duplicate.play``
    (``save``: rounds recorded as game records; ``deal_offset``: the index of ``deals[0]`` in the
    run's deals, for the per-game seeds)."""
    rules = config.build_rules()
    policies = []
    for index, spec in enumerate(config.policies):
        bot, options = config.policy_options(spec)
        stream = int(np.random.SeedSequence([config.seed, index, shard]).generate_state(1)[0])
        policies.append(load_policy(bot, rules, seed=stream, **options))
    return play(
        rules, policies, seats, deals, openers, mode, config.batch, seed, save=save, deal_offset=deal_offset
    )


def run_arena(config: ArenaConfig, progress: Progress | None = None) -> ArenaResult:
    """``tournament.run_arena`` with the games played by ``config.ray.workers`` Ray tasks."""
    ray = require_ray()
    started = connect(config.ray)
    try:
        return _run(ray, config, progress)
    finally:
        if started:
            ray.shutdown()


def _run(ray: ModuleType, config: ArenaConfig, progress: Progress | None) -> ArenaResult:
    rules = config.build_rules()
    names = display_names(config.policies, build_policies(config, rules))  # the names their objects give
    pairs = schedule_pairs(len(names), config.format)
    tables, table_pair = seatings(rotations(rules), pairs)
    task = ray.remote(num_cpus=1)(play_shard)
    config_ref = ray.put(config)

    def run(mode: Mode, count: int, seed: int) -> tuple[Played, float]:
        deals, openers = duplicate_deals(rules, count, seed)
        report = progress(f"{mode}s", len(tables) * count) if progress else None
        start = time.perf_counter()
        cuts = shards(len(tables), count, SHARDS_PER_WORKER * config.ray.workers, mode)
        saves = [
            len(s) for s in np.array_split(np.arange(config.save_games if mode == "round" else 0), len(cuts))
        ]
        waiting = list(enumerate(cuts))[::-1]
        pending: dict[Any, int] = {}
        parts: dict[int, Played] = {}
        while waiting or pending:
            while waiting and len(pending) < config.ray.workers:  # at most ray.workers tasks at once
                index, (group, lo, hi) = waiting.pop()
                shard = (
                    config_ref,
                    mode,
                    tables[group],
                    deals[lo:hi],
                    openers[lo:hi],
                    seed,
                    index,
                    saves[index],
                    lo,
                )
                pending[task.remote(*shard)] = index
            [done], _ = ray.wait(list(pending), num_returns=1)
            index = pending.pop(done)
            parts[index] = ray.get(done)
            if report is not None:
                report(len(parts[index].deal))
        seconds = time.perf_counter() - start
        return merge_played(cuts, [parts[index] for index in range(len(cuts))]), seconds

    played, seconds = run("round", config.deals, config.seed)
    rounds = seated(rules, played, tables, table_pair)
    matches, match_seconds = None, 0.0
    if config.matches:
        match_played, match_seconds = run("match", config.matches, config.seed + 1)
        matches = seated(rules, match_played, tables, table_pair)
    return arena_result(config, rules, names, pairs, tables, played, rounds, matches, seconds, match_seconds)
