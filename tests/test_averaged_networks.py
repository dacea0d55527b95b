"""Policy files that average several runs of one network (``export_policy`` with several sources)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.bots.registry import load_policy
from agents.training import train as train_script
from agents.training.checkpoint import (
    MAX_MEMBERS,
    MEMBERS,
    POLICY_KEYS,
    CheckpointError,
    build_model,
    export_policy,
    load_checkpoint,
    save_checkpoint,
)
from agents.training.config import parse_train_config
from agents.training.model_card import ModelCard, read_card, write_card
from agents.training.network import AveragedNetworks
from domino_env import Rules
from domino_env.envs.selfplay import SelfPlay

ROOT = Path(__file__).resolve().parent.parent
RUN = {
    "preset": "block",
    "players": 2,
    "num_games": 32,
    "rollout_steps": 8,
    "total_updates": 1,
    "model": {"hidden": [32]},
    "eval": {"every": 0},
    "checkpoint": {"every": 1, "keep": 1},
    "progress": False,
}


def trained(tmp_path: Path, name: str, **changes) -> Path:
    """A one-update run's checkpoint."""
    config = parse_train_config({**RUN, "output_dir": str(tmp_path), "name": name, **changes})
    train_script.train(config)
    return config.run_dir / "checkpoints" / "update_000001.pt"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("runs")
    return {
        "a": trained(folder, "a", seed=0),
        "b": trained(folder, "b", seed=1),
        "c": trained(folder, "c", seed=2),
        "wide": trained(folder, "wide", model={"hidden": [48]}),
        "draw": trained(folder, "draw", preset="draw"),
    }


def test_an_averaged_file_plays_the_mean_of_its_networks_logits(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    target = tmp_path / "averaged.pt"
    export_policy([runs["a"], runs["b"], runs["c"]], target)
    rules = Rules.preset("block", 2)
    policy = load_policy(str(target), rules)
    assert isinstance(policy.model, AveragedNetworks) and len(policy.model.members) == 3
    state = SelfPlay(rules, 256, seed=3).state()
    obs, mask = torch.from_numpy(state.obs), torch.from_numpy(state.mask)
    with torch.no_grad():
        members = [runs["a"], runs["b"], runs["c"]]
        each = [build_model(load_checkpoint(path, ("config", "model")), path)(obs, mask) for path in members]
        averaged_logits, averaged_values = policy.model(obs, mask)
    mean = (each[0][0] + each[1][0] + each[2][0]) / 3
    torch.testing.assert_close(averaged_logits[mask], mean[mask])
    torch.testing.assert_close(averaged_values, (each[0][1] + each[1][1] + each[2][1]) / 3)
    assert (averaged_logits[~mask] == torch.finfo(torch.float32).min).all()  # illegal moves stay impossible
    chosen = policy(state.obs, state.mask)
    np.testing.assert_array_equal(chosen, mean.masked_fill(~mask, -torch.inf).argmax(dim=1).numpy())
    assert state.mask[np.arange(len(chosen)), chosen].all()
    # The averaged move differs from a single network's somewhere: the members disagree.
    assert (chosen != load_policy(str(runs["a"]), rules)(state.obs, state.mask)).any()


def test_export_refuses_networks_that_cannot_average(runs: dict[str, Path], tmp_path: Path) -> None:
    target = tmp_path / "x.pt"
    game = r"preset 'draw', where .* has 'block'; only networks of one game"
    with pytest.raises(CheckpointError, match=game):
        export_policy([runs["a"], runs["draw"]], target)
    with pytest.raises(CheckpointError, match=r"is not .*'s .*only networks of one shape average"):
        export_policy([runs["a"], runs["wide"]], target)
    export_policy([runs["a"], runs["b"]], target)
    with pytest.raises(CheckpointError, match="already an average of networks"):
        export_policy([target, runs["c"]], tmp_path / "y.pt")
    with pytest.raises(CheckpointError, match="at least one checkpoint"):
        export_policy([], tmp_path / "z.pt")
    with pytest.raises(CheckpointError, match=f"averages at most {MAX_MEMBERS}"):
        export_policy([runs["a"]] * (MAX_MEMBERS + 1), tmp_path / "z.pt")
    assert not (tmp_path / "y.pt").exists() and not (tmp_path / "z.pt").exists()


def test_a_damaged_member_is_refused_by_name(runs: dict[str, Path], tmp_path: Path) -> None:
    payload = load_checkpoint(runs["a"], POLICY_KEYS)
    broken = {name: tensor.clone() for name, tensor in payload["model"].items()}
    next(iter(broken.values()))[0] = float("nan")
    save_checkpoint(tmp_path / "nan.pt", {**payload, MEMBERS: [payload["model"], broken]})
    with pytest.raises(CheckpointError, match=r"members\[1\]: .* NaN"):
        load_policy(str(tmp_path / "nan.pt"))
    save_checkpoint(tmp_path / "odd.pt", {**payload, MEMBERS: [{"trunk.0.weight": torch.zeros(2, 2)}]})
    with pytest.raises(CheckpointError, match=r"members\[0\]: its tensors differ from the model's"):
        load_policy(str(tmp_path / "odd.pt"))
    save_checkpoint(tmp_path / "many.pt", {**payload, MEMBERS: [payload["model"]] * MAX_MEMBERS})
    with pytest.raises(CheckpointError, match=f"members: expected a list of at most {MAX_MEMBERS - 1}"):
        load_policy(str(tmp_path / "many.pt"))


def test_training_cannot_start_from_an_average(runs: dict[str, Path], tmp_path: Path) -> None:
    averaged = tmp_path / "averaged.pt"
    export_policy([runs["a"], runs["b"]], averaged)
    config = parse_train_config(
        {**RUN, "output_dir": str(tmp_path), "name": "init", "model": {"hidden": [32], "init": str(averaged)}}
    )
    with pytest.raises(CheckpointError, match="the average of 2 networks; a run starts from one network"):
        train_script.train(config)


def test_the_script_writes_an_average_and_says_so(runs: dict[str, Path], tmp_path: Path) -> None:
    def export(*paths: Path) -> subprocess.CompletedProcess:
        command = [sys.executable, "scripts/export_policy.py", *map(str, paths)]
        return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)

    done = export(runs["a"], runs["b"], tmp_path / "averaged.pt")
    assert done.returncode == 0 and "the average of 2 networks" in done.stdout
    refused = export(runs["a"], runs["draw"], tmp_path / "bad.pt")
    assert refused.returncode == 2 and "only networks of one game" in refused.stderr
    assert "Traceback" not in refused.stderr and not (tmp_path / "bad.pt").exists()


def test_a_model_card_written_into_an_average_keeps_its_networks(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    averaged = tmp_path / "averaged.pt"
    export_policy([runs["a"], runs["b"], runs["c"]], averaged)
    card = ModelCard(
        name="averaged", preset="block", players=2, method="three runs", config="x.yaml",
        commit="abc1234", training_minutes=3.0,
    )  # fmt: skip
    write_card(averaged, card)
    assert read_card(averaged) == card
    assert len(load_checkpoint(averaged, POLICY_KEYS)[MEMBERS]) == 2
    assert isinstance(load_policy(str(averaged)).model, AveragedNetworks)
