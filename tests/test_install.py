"""A non-editable install works from any folder: the wheel, its console commands and its package data.

The wheel is built from a copy of the sources (the build leaves nothing in the checkout),
installed without dependencies into a fresh virtual environment that borrows the
dependencies of the running one (a ``.pth`` line: offline and fast), and every command
runs from an empty temporary folder, so nothing can come from the repository: the test
asserts that ``agents`` and ``domino_env`` are imported from the new environment.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from domino_env import replay
from tests.test_records import SEED001  # seed 001's worked example

pytest.importorskip("torch")  # domino-train and the shipped agents
pytest.importorskip("setuptools", minversion="77")  # the build backend, used without isolation (offline)

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "README.md", "domino_env", "agents")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], Path]:
    """(the new environment's bin folder, the environment variables to run it with, an empty folder)."""
    base = tmp_path_factory.mktemp("install")
    source = base / "source"
    source.mkdir()
    for name in SOURCES:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        copy(ROOT / name, source / name, **_ignore_caches(ROOT / name))
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    _run([*build, "-w", str(base / "dist"), str(source)], cwd=base)
    (wheel,) = (base / "dist").glob("domino_rl-*.whl")

    env_dir = base / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).strip()
    purelib = Path(purelib)
    # The dependencies (numpy, torch...) come from this environment's site-packages; a .pth line
    # appends it to sys.path without running its .pth files, so the editable install stays out.
    (purelib / "borrowed_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)])

    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    environ["NUMBA_CACHE_DIR"] = str(base / "numba-cache")  # compiled once, shared by the commands
    workdir = base / "elsewhere"
    workdir.mkdir()
    return env_dir / "bin", environ, workdir


def test_packages_come_from_the_wheel(installed):
    bin_dir, environ, workdir = installed
    code = (
        "import agents, domino_env; "
        "print(agents.__file__); print(domino_env.__file__); "
        "policy = agents.load_policy('block-2p-ppo'); print(policy.name)"
    )
    out = _run([str(bin_dir / "python"), "-c", code], cwd=workdir, env=environ).splitlines()
    env_dir = bin_dir.parent.resolve()
    assert all(Path(line).resolve().is_relative_to(env_dir) for line in out[:2]), out
    assert out[2] == "block-2p-ppo"


def test_replay_a_file(installed):
    bin_dir, environ, workdir = installed
    (workdir / "game.json").write_text(json.dumps(SEED001))
    out = json.loads(_run([str(bin_dir / "domino-replay"), "game.json"], cwd=workdir, env=environ))
    assert out == replay(SEED001)


def test_train_a_shipped_config_by_name(installed):
    bin_dir, environ, workdir = installed
    overrides = ["total_updates=1", "num_games=8", "rollout_steps=8", "eval.every=0", "progress=false"]
    overrides += ["device=cpu", "threads=1", "model.init=block-2p-ppo", "output_dir=runs"]
    out = _run([str(bin_dir / "domino-train"), "quickstart", *overrides], cwd=workdir, env=environ)
    assert "quickstart: 1 updates" in out
    assert (workdir / "runs" / "quickstart" / "checkpoints" / "update_000001.pt").is_file()


def test_evaluate_shipped_configs_by_name(installed):
    bin_dir, environ, workdir = installed
    tiny = ["deals=20", "matches=0", "progress=false", "output.dir=arena"]
    _run([str(bin_dir / "domino-evaluate"), "bots", *tiny], cwd=workdir, env=environ)
    # A config naming a shipped agent: found in the package, not in the working folder.
    _run([str(bin_dir / "domino-evaluate"), "trained_block", *tiny], cwd=workdir, env=environ)
    assert (workdir / "arena" / "block-2p.json").is_file()
    assert (workdir / "arena" / "block-2p-ppo-trained.json").is_file()


def test_bench_runs(installed):
    bin_dir, environ, workdir = installed
    command = [str(bin_dir / "domino-bench"), "--engines", "core", "--num-envs", "64", "--seconds", "0.2"]
    assert "core" in _run(command, cwd=workdir, env=environ)


def test_unknown_config_name_lists_the_shipped_ones(installed):
    bin_dir, environ, workdir = installed
    done = subprocess.run(
        [str(bin_dir / "domino-evaluate"), "botts"], cwd=workdir, env=environ, capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "neither a file nor a shipped arena config name; did you mean 'bots'?" in done.stdout
    assert "trained_block" in done.stdout and "quickstart" not in done.stdout  # the arena configs only
    command = [str(bin_dir / "domino-evaluate"), "quickstart"]
    done = subprocess.run(command, cwd=workdir, env=environ, capture_output=True, text=True)
    assert done.returncode == 2
    assert "'quickstart' is a training config, not an arena config: run it with domino-train" in done.stdout


def _ignore_caches(path: Path) -> dict:
    return {"ignore": shutil.ignore_patterns("__pycache__", "*.pyc")} if path.is_dir() else {}


def _run(command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done.stdout
