"""Without the ray extra everything else works, and a Ray option says what to install (one line)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from agents.arena.evaluate import main as evaluate
from agents.training.rllib import main as train_rllib
from agents.training.train import main as train
from agents.training.tune import main as tune

ROOT = Path(__file__).resolve().parents[1]
INSTALL = "pip install -e '.[ray]'"

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ray") is not None, reason="Ray is installed")


@pytest.mark.parametrize(
    ("command", "args"),
    [
        (evaluate, ["deals=2", "matches=0", "progress=false", "ray.workers=2"]),
        (train, [str(ROOT / "configs" / "quickstart.yaml"), "ray.workers=2", "progress=false"]),
        (train_rllib, [str(ROOT / "configs" / "rllib_block.yaml"), "iterations=1"]),
        (tune, [str(ROOT / "configs" / "quickstart.yaml"), "ppo.lr=grid([0.001])"]),
    ],
)
def test_a_ray_option_without_ray_says_what_to_install(command, args, capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # nothing may be written in the repository
    assert command(args) == 2
    out = " ".join(capsys.readouterr().out.split())
    assert "needs Ray" in out and INSTALL in out
    assert not (tmp_path / "runs").exists()


def test_the_rllib_env_without_ray_says_what_to_install() -> None:
    with pytest.raises(ImportError, match=r"pip install -e '\.\[ray\]'"):
        import domino_env.envs.rllib  # noqa: F401
