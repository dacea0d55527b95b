"""Training survives crashes: a resumed run repeats the uninterrupted one, evaluations and best.pt too."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from agents.training import evaluation, state
from agents.training import train as train_script
from agents.training.checkpoint import load_checkpoint
from agents.training.config import load_train_config, parse_train_config

ROOT = Path(__file__).resolve().parent.parent

TINY = {
    "preset": "block",
    "players": 2,
    "seed": 39,  # chosen so that the evaluations below rise, fall and rise as the tests need
    "threads": 1,
    "num_games": 16,
    "rollout_steps": 8,
    "total_updates": 4,
    "model": {"hidden": [32, 32]},
    "eval": {"every": 1, "deals": 10, "opponents": ["random"]},
    "checkpoint": {"every": 1, "keep": 10},
    "opponents": {"self": 0.75, "past": 0.25},
    "snapshots": {"every": 1, "keep": 2},
    "progress": False,
}


def tiny(folder: Path, **changes: Any) -> Any:
    return parse_train_config({**TINY, "output_dir": str(folder), "name": "tiny", **changes})


def assert_same(mine: Any, theirs: Any, where: str = "") -> None:
    """Equal down to every tensor bit (dicts, lists and numbers compared by value)."""
    if isinstance(theirs, torch.Tensor):
        assert torch.equal(mine, theirs), where
    elif isinstance(theirs, dict):
        assert mine.keys() == theirs.keys(), where
        for key in theirs:
            assert_same(mine[key], theirs[key], f"{where}.{key}")
    elif isinstance(theirs, list | tuple):
        assert len(mine) == len(theirs), where
        for index, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            assert_same(a, b, f"{where}[{index}]")
    else:
        assert mine == theirs, where


def assert_same_checkpoint(mine: Path, theirs: Path) -> None:
    """Everything but the config (its output_dir and total_updates may differ)."""
    a, b = load_checkpoint(mine), load_checkpoint(theirs)
    a.pop("config"), b.pop("config")
    assert_same(a, b, mine.name)


def update_file(n: int) -> str:
    return f"update_{n:06d}.pt"


def scalars(run_dir: Path, prefix: str) -> dict[str, list[tuple[int, float]]]:
    events = EventAccumulator(str(run_dir))
    events.Reload()
    tags = [tag for tag in events.Tags()["scalars"] if tag.startswith(prefix)]
    return {tag: [(event.step, event.value) for event in events.Scalars(tag)] for tag in tags}


def test_resume_repeats_the_uninterrupted_run_with_evaluations_on(tmp_path: Path) -> None:
    # The issue's reproduction: evaluations every 2 updates, a checkpoint every update.
    every_2 = {"every": 2, "deals": 10, "opponents": ["random"]}
    straight = tiny(tmp_path / "straight", eval=every_2)
    train_script.train(straight)
    halted = tiny(tmp_path / "halted", eval=every_2, total_updates=2)
    train_script.train(halted)
    train_script.train(tiny(tmp_path / "halted", eval=every_2), resume=True)
    for name in ("update_000003.pt", "update_000004.pt", "best.pt"):
        assert_same_checkpoint(halted.run_dir / "checkpoints" / name, straight.run_dir / "checkpoints" / name)
    evals = scalars(straight.run_dir, "eval/")
    assert len(evals["eval/diff_vs_random"]) == 2 and len(evals["eval/diff_vs_best"]) == 1
    assert scalars(halted.run_dir, "eval/") == evals
    assert scalars(halted.run_dir, "losses/") == scalars(straight.run_dir, "losses/")


def test_evaluations_do_not_change_the_trained_weights(tmp_path: Path) -> None:
    train_script.train(tiny(tmp_path / "on"))
    train_script.train(tiny(tmp_path / "off", eval={"every": 0}))
    on, off = (load_checkpoint(tmp_path / run / "tiny/checkpoints/update_000004.pt") for run in ("on", "off"))
    for key in ("model", "optimizer", "rng", "snapshots"):
        assert_same(on[key], off[key], key)


class Killed(BaseException):
    """A kill at a named point: nothing in train.py catches a BaseException that is not an interrupt."""


def kill_at(
    monkeypatch, module: Any, function: str, nth: int, after: bool, file: str | None, update: int | None
) -> None:
    """Make ``module.<function>`` raise Killed at its ``nth`` call (counting only the calls on ``file``,
    and on a payload of ``update``, where given), before or after the real call."""
    real, calls = getattr(module, function), []

    def crashing(*args, **kwargs):
        counted = (file is None or Path(args[0]).name == file) and (
            update is None or args[1]["update"] == update
        )
        calls.append(counted)
        if counted and sum(calls) == nth and not after:
            if function == "save_checkpoint":  # a kill during the write leaves its temporary file
                (Path(args[0]).parent / f".{Path(args[0]).name}.kill.tmp").write_bytes(b"half a checkpoint")
            raise Killed(function)
        result = real(*args, **kwargs)
        if counted and sum(calls) == nth and after:
            raise Killed(function)
        return result

    monkeypatch.setattr(module, function, crashing)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Any:
    """The uninterrupted run, an evaluation after every update: updates 1, 2 and 3 are new bests, 4 is not
    but beats 2 (so a resume that lost best.pt's update 3 but not its score would keep 2 as best)."""
    config = tiny(tmp_path_factory.mktemp("reference"))
    train_script.train(config)
    scores = [value for _, value in scalars(config.run_dir, "eval/")["eval/diff_vs_random"]]
    assert scores[2] > scores[3] > scores[1] > scores[0], scores  # depends only on the seeds: checked
    assert load_checkpoint(config.run_dir / "checkpoints" / "best.pt")["update"] == 3
    return config


# Each phase of update 3 (the final best), and of update 4 (the last, not a best): (the module that
# calls the function, the function, its nth call, after it rather than before, counting only calls on
# file, on update).
CRASHES = {
    "rollout": (train_script, "collect", 3, False, None, None),
    "ppo_update": (train_script, "ppo_update", 3, False, None, None),
    "evaluation": (evaluation, "evaluate", 1, False, update_file(3), None),
    "evaluation_of_the_last_update": (evaluation, "evaluate", 1, False, update_file(4), None),
    "during_update_N_write": (state, "save_checkpoint", 1, False, update_file(3), None),
    "during_best_write": (state, "save_checkpoint", 1, False, "best.pt", 3),
    "after_best_write": (state, "save_checkpoint", 1, True, "best.pt", 3),
    "during_score_record": (state, "save_checkpoint", 2, False, update_file(3), None),
    "during_score_record_not_a_best": (state, "save_checkpoint", 2, False, update_file(4), None),
}


@pytest.mark.parametrize("crash", CRASHES.values(), ids=CRASHES.keys())
def test_a_crash_anywhere_then_resume_repeats_the_uninterrupted_run(
    crash: tuple, reference: Any, tmp_path: Path, monkeypatch
) -> None:
    config = tiny(tmp_path)
    with monkeypatch.context() as patch:
        kill_at(patch, *crash)
        with pytest.raises(Killed):
            train_script.train(config)
    train_script.train(config, resume=True)
    mine, theirs = config.run_dir / "checkpoints", reference.run_dir / "checkpoints"
    assert sorted(p.name for p in mine.iterdir()) == sorted(p.name for p in theirs.iterdir())  # no .tmp left
    for name in ("best.pt", *(update_file(n) for n in (1, 2, 3, 4))):
        assert_same_checkpoint(mine / name, theirs / name)
    # Every evaluation is logged: once, or twice with the same value (a kill between logging and recording).
    for tag, points in scalars(reference.run_dir, "eval/").items():
        assert set(scalars(config.run_dir, "eval/")[tag]) == set(points), tag


def command(folder: Path, *extra: str) -> list[str]:
    overrides = ["num_games=16", "rollout_steps=8", "model.hidden=[32,32]", "threads=1", "progress=false"]
    overrides += ["eval.every=2", "eval.deals=10", "eval.opponents=[random]", "checkpoint.every=1"]
    overrides += ["checkpoint.keep=100", f"output_dir={folder}", "name=killed", *extra]
    return [
        sys.executable,
        str(ROOT / "scripts" / "train.py"),
        str(ROOT / "configs" / "train" / "quickstart.yaml"),
        *overrides,
    ]


def start_and_wait_for_a_checkpoint(folder: Path, *extra: str) -> subprocess.Popen:
    """train.py in its own session, once it has a checkpoint.

    SIGINT is put back to its default in the child: a process that starts with it ignored
    (a shell's background job, or a test runner's worker that ignores it) keeps ignoring it.
    """
    process = subprocess.Popen(
        command(folder, *extra),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    first = folder / "killed" / "checkpoints" / update_file(1)
    deadline = time.monotonic() + 120
    while not first.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert first.exists(), process.communicate()
    return process


def test_sigkill_mid_run_then_resume_repeats_the_uninterrupted_run(tmp_path: Path) -> None:
    process = start_and_wait_for_a_checkpoint(tmp_path, "total_updates=1000")
    process.kill()
    assert process.wait() == -signal.SIGKILL
    # Resumed to update 4: the evaluations (every 2) fall on the same updates as with 1000 updates.
    resumed, straight = (
        load_train_config(
            ROOT / "configs" / "train" / "quickstart.yaml", command(tmp_path, "total_updates=4", *name)[3:]
        )
        for name in ((), ("name=straight",))
    )
    train_script.train(resumed, resume=True)
    train_script.train(straight)
    folder = resumed.run_dir / "checkpoints"
    assert not list(folder.glob("*.tmp"))
    for name in ("best.pt", update_file(4)):
        assert_same_checkpoint(folder / name, straight.run_dir / "checkpoints" / name)


def test_ctrl_c_ends_with_how_to_resume(tmp_path: Path) -> None:
    process = start_and_wait_for_a_checkpoint(tmp_path, "total_updates=1000")
    process.send_signal(signal.SIGINT)
    out, err = (text.decode() for text in process.communicate(timeout=60))
    assert process.returncode == 130, err
    assert "Traceback" not in out + err, err
    last = out.strip().splitlines()[-1]  # one line, the last
    assert last.startswith(
        f"interrupted: last checkpoint {tmp_path / 'killed' / 'checkpoints' / 'update_'}"
    ), out
    assert last.endswith("--resume") and "name=killed" in last


def test_sigterm_ends_like_ctrl_c(tmp_path: Path, monkeypatch, capsys) -> None:
    real, calls = train_script.ppo_update, []

    def terminated_at_second_update(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGTERM)  # the handler main installs raises in this thread
        return real(*args, **kwargs)

    monkeypatch.setattr(train_script, "ppo_update", terminated_at_second_update)
    handler = signal.getsignal(signal.SIGTERM)
    try:
        assert train_script.main(command(tmp_path, "total_updates=4")[2:]) == 128 + signal.SIGTERM
    finally:
        signal.signal(signal.SIGTERM, handler)
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith(
        f"terminated: last checkpoint {tmp_path / 'killed' / 'checkpoints' / update_file(1)};"
    )
    assert last.endswith("--resume")
