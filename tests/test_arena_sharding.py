"""Cutting the arena's games into batches or Ray shards never changes a result, ``random`` included.

The shards are played here without Ray, through the functions the Ray tasks run
(``distributed.play_shard``, then ``duplicate.merge_played``), so this runs in every venv; the
last test runs the same through Ray where it is installed.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.arena import distributed
from agents.arena.config import ArenaConfig, load_config
from agents.arena.duplicate import Mode, Played, duplicate_deals, game_seeds, merge_played, play, rotations
from agents.arena.tournament import run_arena, schedule_pairs, seatings
from agents.bots.registry import load_policy, make_bot
from domino_env import Rules
from domino_env.envs.policies import sample_legal_seeded

OVERRIDES = ["policies=[random,strong,blocker]", "deals=60", "matches=4", "progress=false"]


def rows(played: Played) -> list[np.ndarray]:
    return [played.table, played.deal, played.points, played.winner]


def local_and_sharded(config: ArenaConfig, mode: Mode, pieces: int) -> tuple[Played, Played]:
    """The run's rows played in one process as ``tournament.run_arena`` does, and in ``pieces`` shards."""
    rules = config.build_rules()
    tables, _ = seatings(rotations(rules), schedule_pairs(len(config.policies), config.format))
    count, seed = (config.deals, config.seed) if mode == "round" else (config.matches, config.seed + 1)
    deals, openers = duplicate_deals(rules, count, seed)
    policies = [load_policy(spec, rules, seed=config.seed + i) for i, spec in enumerate(config.policies)]
    local = play(rules, policies, tables, deals, openers, mode, config.batch, seed)
    cuts = distributed.shards(len(tables), count, pieces, mode)
    parts = [
        distributed.play_shard(
            config, mode, tables[group], deals[lo:hi], openers[lo:hi], seed, index, deal_offset=lo
        )
        for index, (group, lo, hi) in enumerate(cuts)
    ]
    return local, merge_played(cuts, parts)


@pytest.mark.parametrize(("mode", "pieces"), [("round", 2), ("round", 9), ("match", 2)])
def test_shards_play_what_the_whole_run_plays(mode: Mode, pieces: int) -> None:
    # 9 pieces of 6 tables: tables in 6 groups and the deals in 2 ranges, so deal_offset matters.
    local, sharded = local_and_sharded(load_config(None, OVERRIDES), mode, pieces)
    for ours, theirs in zip(rows(local), rows(sharded), strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_random_plays_randomly_and_by_the_run_seed() -> None:
    """The seeded random bot is not a fixed policy: another arena seed, other games; another batching,
    the same games."""
    rules = Rules.preset("block", 2)
    deals, openers = duplicate_deals(rules, 40, seed=3)
    bots = [make_bot("random", rules), make_bot("strong", rules)]
    tables = rotations(rules)
    whole = play(rules, bots, tables, deals, openers, seed=5)
    batched = play(rules, bots, tables, deals, openers, batch=3, seed=5)
    other = play(rules, bots, tables, deals, openers, seed=6)
    np.testing.assert_array_equal(whole.points, batched.points)
    assert (whole.points != other.points).any()


def test_seeded_draws_depend_on_each_rows_seed_alone() -> None:
    mask = np.zeros((1000, 10), dtype=bool)
    mask[:, [2, 5, 7]] = True
    seeds = game_seeds(0, np.arange(1000), np.zeros(1000, dtype=np.int64))
    actions = sample_legal_seeded(mask, seeds)
    assert set(np.unique(actions)) == {2, 5, 7}
    assert np.bincount(actions, minlength=10)[[2, 5, 7]].min() > 250  # about 333 each
    np.testing.assert_array_equal(sample_legal_seeded(mask[::-1], seeds[::-1]), actions[::-1])
    np.testing.assert_array_equal(sample_legal_seeded(mask[:7], seeds[:7]), actions[:7])
    with pytest.raises(ValueError, match="one per row of the mask"):
        sample_legal_seeded(mask, seeds[:7])


def test_ray_shards_give_the_local_result() -> None:
    ray = pytest.importorskip("ray")
    config = load_config(None, [*OVERRIDES, "ray.workers=2"])
    local = run_arena(config).to_dict()
    ray.init(num_cpus=2, include_dashboard=False, logging_level="warning")
    try:
        sharded = distributed.run_arena(config).to_dict()
    finally:
        ray.shutdown()
    timings = ("seconds", "match_seconds", "rounds_per_second")
    for result in (local, sharded):
        for key in timings:
            result.pop(key)
        for policy in result["policies"]:
            policy.pop("ms_per_move")
    assert sharded == local
