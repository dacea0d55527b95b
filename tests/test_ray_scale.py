"""Scale-out on Ray, on a two-node local cluster started here (one CPU per node): the sharded arena
equals the local one, distributed training trains the weights a local run does, checkpoints, resumes
and survives a killed actor, and RLlib's PPO trains with masks. Skipped without the ray extra
(``pip install -e '.[ray]'``)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.rllib")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import yaml  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

from agents.arena import distributed as arena_distributed  # noqa: E402
from agents.arena.config import load_config  # noqa: E402
from agents.arena.tournament import run_arena  # noqa: E402
from agents.bots.registry import make_bot  # noqa: E402
from agents.training import distributed as train_distributed  # noqa: E402
from agents.training.checkpoint import load_checkpoint  # noqa: E402
from agents.training.config import load_train_config  # noqa: E402
from agents.training.distill import collect_positions  # noqa: E402
from agents.training.exploit import ExploitConfig, exploit  # noqa: E402
from agents.training.rllib import SEAT_RETURN, load_rllib_config  # noqa: E402
from agents.training.rllib import train as train_rllib  # noqa: E402
from agents.training.train import train  # noqa: E402
from agents.training.tune import sweep  # noqa: E402
from domino_env.engine.rules import Rules  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """Two nodes of one CPU each; every test here joins it (so Ray tasks spread over both)."""
    nodes = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    nodes.add_node(num_cpus=1)
    ray.init(address=nodes.address, logging_level="warning")
    yield nodes
    ray.shutdown()
    nodes.shutdown()


def numbers(value: Any, path: str = "") -> dict[str, Any]:
    """A result flattened to {path: leaf}, timings dropped (they are never equal)."""
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, (list, tuple)):
        items = enumerate(value)
    else:
        return {path: value}
    out: dict[str, Any] = {}
    for key, item in items:
        if key not in ("seconds", "match_seconds", "rounds_per_second", "ms_per_move"):
            out |= numbers(item, f"{path}.{key}")
    return out


def test_distributed_arena_equals_the_local_one(cluster: Cluster) -> None:
    overrides = ["policies=[strong,heaviest,doubles]", "deals=150", "matches=6", "progress=false"]
    local = numbers(run_arena(load_config(None, overrides)).to_dict())
    for workers in (2, 7):  # groups of tables; then tables split into deal ranges as well
        sharded = arena_distributed.run_arena(load_config(None, [*overrides, f"ray.workers={workers}"]))
        result = numbers(sharded.to_dict())
        assert result.keys() == local.keys()
        assert result == local  # number for number: both sum the rows in (table, deal) order


TRAIN = [
    "total_updates=2", "num_games=16", "rollout_steps=8", "eval.every=0", "progress=false", "threads=1",
    "checkpoint.every=1", "checkpoint.keep=5", "opponents={self: 0.5, strong: 0.25, past: 0.25}",
    "snapshots.every=1", "shard_games=5", "ray.workers=2",
]  # fmt: skip
"""Shards of 5, 5, 5 and 1 games: self-play, self-play and ``strong``, ``strong`` and ``past``, ``past``."""


def run_training(tmp: Path, name: str, *extra: str, resume: bool = False) -> dict[str, torch.Tensor]:
    config = load_train_config(
        ROOT / "configs" / "train" / "quickstart.yaml", [*TRAIN, f"output_dir={tmp}", f"name={name}", *extra]
    )
    train(config, resume=resume)
    return load_checkpoint(tmp / name / "checkpoints" / "update_000002.pt")["model"]


@pytest.fixture(scope="module")
def uninterrupted(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> dict[str, torch.Tensor]:
    return run_training(tmp_path_factory.mktemp("runs"), "whole")


def same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_the_worker_count_never_changes_the_weights(
    cluster: Cluster, uninterrupted: dict[str, torch.Tensor], tmp_path: Path
) -> None:
    """The shards, not the workers, decide a run: in this process, on two actors and on three, the same
    weights, tensor for tensor."""
    assert same(run_training(tmp_path, "local", "ray.workers=0"), uninterrupted)
    node = cluster.add_node(num_cpus=1)  # a CPU for each of three actors (one CPU each)
    cluster.wait_for_nodes()
    try:
        assert same(run_training(tmp_path, "three", "ray.workers=3"), uninterrupted)
    finally:
        cluster.remove_node(node)


def test_distributed_training_checkpoints_and_resumes(
    uninterrupted: dict[str, torch.Tensor], tmp_path: Path
) -> None:
    config = load_train_config(
        ROOT / "configs" / "train" / "quickstart.yaml",
        [*TRAIN, f"output_dir={tmp_path}", "name=cut", "total_updates=1"],
    )
    train(config)
    assert not (tmp_path / "cut" / "checkpoints" / "update_000002.pt").exists()
    resumed = run_training(tmp_path, "cut", resume=True)
    assert same(resumed, uninterrupted)  # deterministic for a seed, resumed or not


def test_a_killed_actor_is_restarted_and_its_rollout_redone(
    uninterrupted: dict[str, torch.Tensor], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    collect = train_distributed.Fleet.collect
    events: list[str] = []

    def kill(actor: Any) -> None:
        events.append("killed")
        ray.kill(actor, no_restart=False)

    def kill_mid_update(self: train_distributed.Fleet, *args: Any) -> Any:
        if not events:  # the first update: kill actor 0 while its rollout is in flight
            events.append("submitted")
            threading.Timer(0.3, kill, (self.actors[0],)).start()
        rollout = collect(self, *args)
        events.append("gathered")
        return rollout

    monkeypatch.setattr(train_distributed.Fleet, "collect", kill_mid_update)
    survived = run_training(tmp_path, "killed")
    assert events[:3] == ["submitted", "killed", "gathered"]  # killed before its rollout came back
    assert same(survived, uninterrupted)


def test_an_exploiter_on_ray_is_its_worker_counts_and_measured_as_the_local_arena_does(
    cluster: Cluster, tmp_path: Path
) -> None:
    """``scripts/exploit.py pimc ... ray.workers=2``: the agent's moves (the search bot's, hours on one
    core) are played on the actors; a seed and worker count give one exploiter, and its figure is the
    one the local arena measures."""
    quick = {"updates": 2, "num_games": 16, "rollout_steps": 8, "hidden": [16], "deals": 40}
    quick |= {"progress": False, "preset": "block"}
    on_ray = ExploitConfig.parse({**quick, "output_dir": str(tmp_path), "ray": {"workers": 2}})
    result = exploit("strong", on_ray)
    assert result["settings"]["ray"]["workers"] == 2
    again = exploit("strong", on_ray.model_copy(update={"name": "again"}))
    first, second = (load_checkpoint(Path(r["exploiter"]))["model"] for r in (result, again))
    assert same(first, second)
    overrides = [f"policies=[{result['exploiter']},strong]", "format=head_to_head", "deals=40", "matches=0"]
    local = run_arena(load_config(None, [*overrides, "seed=424242", "progress=false"])).pairs[0]
    assert (local.diff, local.ci) == (result["exploitability"], result["ci"])


DISTILL = [
    "preset=draw", "total_updates=0", "distill.rounds=2", "distill.positions=3000", "distill.games=64",
    "distill.privileged=true", "distill.pile_samples=2", "distill.teacher={prior: 0}",
    "distill.target=values", "model.hidden=[32]", "eval.every=0", "progress=false", "threads=1",
]  # fmt: skip


def test_distillation_searched_on_ray_trains_the_network_a_local_run_does(
    cluster: Cluster, tmp_path: Path
) -> None:
    weights = {}
    for name, workers in (("local", 0), ("sharded", 2)):
        overrides = [*DISTILL, f"output_dir={tmp_path}", f"name={name}", f"ray.workers={workers}"]
        train(load_train_config(ROOT / "configs" / "train" / "quickstart.yaml", overrides))
        weights[name] = load_checkpoint(tmp_path / name / "checkpoints" / "update_000000.pt")["model"]
    # Privileged labels, the piles shuffled in the driver: two batches a round on two actors, the same
    # labels, so the same positions in round 1 and the same network.
    assert same(weights["sharded"], weights["local"])


def test_refine_rounds_on_ray_play_out_with_the_network_a_local_run_does(
    cluster: Cluster, tmp_path: Path
) -> None:
    """``distill.refine``: the actors get the network's weights with each batch and play every move out
    with it, greedy; the labels, so the network, are the local run's."""
    weights = {}
    for name, workers in (("local", 0), ("sharded", 2)):
        overrides = [
            *DISTILL, "distill.refine=1", "distill.positions=2500", f"output_dir={tmp_path}", f"name={name}",
            f"ray.workers={workers}",
        ]  # fmt: skip
        train(load_train_config(ROOT / "configs" / "train" / "quickstart.yaml", overrides))
        weights[name] = load_checkpoint(tmp_path / name / "checkpoints" / "update_000000.pt")["model"]
        labels = np.load(tmp_path / name / "teacher" / "round_001" / "values.npy")
        assert np.isfinite(labels).any()
    assert same(weights["sharded"], weights["local"])


def test_determinised_labels_on_ray_do_not_depend_on_the_worker_count(cluster: Cluster) -> None:
    rules = Rules.preset("all_fives", 2)
    positions = collect_positions(rules, make_bot("strong", rules, seed=3), 9000, num_games=64, seed=3)
    labels = []
    for workers in (1, 2):
        config = load_train_config(
            None,
            [
                "preset=all_fives",
                "distill.rounds=1",
                "distill.teacher={samples: 4}",
                f"ray.workers={workers}",
            ],
        )
        with train_distributed.Fleet(config) as fleet:
            labels.append(fleet.label(positions, seed=11).values)
    mask = positions.mask
    assert np.isfinite(labels[0][mask]).all() and np.isnan(labels[0][~mask]).all()
    np.testing.assert_array_equal(labels[0], labels[1])  # batch k's teacher is seeded by (seed, k)

    # An actor killed while it searches is restarted, and its batches searched again alike.
    config = load_train_config(None, ["preset=all_fives", "distill.teacher={samples: 4}", "ray.workers=2"])
    with train_distributed.Fleet(config) as fleet:
        seen: list[int] = []

        def kill_once(done: int) -> None:
            if not seen:  # one batch back, of the first four (two per actor): actor 1 still has work
                ray.kill(fleet.actors[1], no_restart=False)
            seen.append(done)

        killed = fleet.label(positions, seed=11, progress=kill_once).values
    assert len(seen) == 5 and seen[-1] == 9000  # four batches of 2,048 and one of 808
    np.testing.assert_array_equal(killed, labels[0])


def test_rllib_ppo_trains_with_masks_and_no_illegal_move(cluster: Cluster, tmp_path: Path) -> None:
    config = load_rllib_config(
        str(ROOT / "configs" / "rllib" / "block.yaml"),
        ["iterations=1", "num_games=8", "rollout_steps=16", "model.hidden=[32]", f"output_dir={tmp_path}"],
    )
    result = train_rllib(config)
    runners = result["env_runners"]
    assert set(runners[SEAT_RETURN]) == {"player_0", "player_1"}
    assert runners["illegal_moves"] == 0
    assert (tmp_path / "rllib_block" / "rllib").is_dir()


def test_tune_sweeps_a_grid_and_writes_the_best_config(cluster: Cluster, tmp_path: Path) -> None:
    results, best = sweep(
        str(ROOT / "configs" / "train" / "quickstart.yaml"),
        [
            "ppo.lr=grid([0.0003, 0.001])", "total_updates=1", "num_games=8", "rollout_steps=4",
            "eval.every=1", "eval.deals=10", "threads=1", f"tune.dir={tmp_path}", "tune.name=grid",
        ],
    )  # fmt: skip
    assert len(results) == 2 and not results.errors
    assert best["ppo"]["lr"] == results.get_best_result().config["ppo.lr"]
    assert best["eval"]["opponents"][0] == "strong"
    written = yaml.safe_load((tmp_path / "grid" / "best.yaml").read_text())
    assert load_train_config(None, [f"ppo.lr={written['ppo']['lr']}"]).ppo.lr == best["ppo"]["lr"]
    assert (tmp_path / "grid" / "results.csv").read_text().count("\n") == 3
