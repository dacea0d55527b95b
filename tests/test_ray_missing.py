"""Without the ray extra everything else works, and a Ray option says what to install (one line)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from agents.arena.evaluate import main as evaluate
from agents.training.exploit import main as exploit
from agents.training.rllib import main as train_rllib
from agents.training.train import main as train
from agents.training.tune import main as tune

ROOT = Path(__file__).resolve().parents[1]
INSTALL = "pip install 'domino-rl[ray]'"

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ray") is not None, reason="Ray is installed")


@pytest.mark.parametrize(
    ("command", "args"),
    [
        (evaluate, ["deals=2", "matches=0", "progress=false", "ray.workers=2"]),
        (train, [str(ROOT / "configs" / "train" / "quickstart.yaml"), "ray.workers=2", "progress=false"]),
        (exploit, ["random", "preset=block", "updates=1", "progress=false", "ray.workers=2"]),
        (train_rllib, [str(ROOT / "configs" / "rllib" / "block.yaml"), "iterations=1"]),
        (tune, [str(ROOT / "configs" / "train" / "quickstart.yaml"), "ppo.lr=grid([0.001])"]),
    ],
)
def test_a_ray_option_without_ray_says_what_to_install(command, args, capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # nothing may be written in the repository
    assert command(args) == 2
    out = " ".join(capsys.readouterr().out.split())
    assert "needs Ray" in out and INSTALL in out
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    "name", ["all_fives_playouts", "block_exact", "draw_playouts", "partnership_playouts"]
)
def test_a_config_with_ray_workers_says_how_to_run_without_ray(name, capsys, tmp_path, monkeypatch) -> None:
    """The distillations set ``ray.workers: 2`` (their documented times need both cores);
    without Ray the error also names the override that runs them in one process."""
    monkeypatch.chdir(tmp_path)
    # Tiny, so that the test fails in seconds, not a whole run, if a config stops asking for Ray.
    tiny = ["distill.rounds=1", "distill.refine=0", "distill.positions=256", "num_games=8", "eval.deals=2"]
    assert train([str(ROOT / "configs" / "train" / f"{name}.yaml"), "progress=false", *tiny]) == 2
    out = " ".join(capsys.readouterr().out.split())
    assert INSTALL in out and "run without it: ray.workers=0" in out
    assert not (tmp_path / "runs").exists()


def test_the_rllib_env_without_ray_says_what_to_install() -> None:
    with pytest.raises(ImportError, match=r"pip install -e '\.\[ray\]'"):
        import domino_env.envs.rllib  # noqa: F401
