"""Messages a newcomer meets: each points the right way (the 'newcomer's first hour' issue)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from domino_env.install import install_hint

ROOT = Path(__file__).resolve().parent.parent
BLOCK = """
import sys
class Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] == {module!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Missing())
sys.argv = [{command!r}, '--help']
from agents.training import commands
raise SystemExit(commands.{entry}())
"""


@pytest.mark.parametrize(
    ("module", "command", "entry"),
    [("tensorboard", "domino-train", "train"), ("torch", "domino-exploit", "exploit"),
     ("torch", "domino-card", "model_card")],
)  # fmt: skip
def test_a_command_without_the_train_extra_says_what_to_install(
    module: str, command: str, entry: str
) -> None:
    code = BLOCK.format(module=module, command=command, entry=entry)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == (
        f"error: {command} needs the train extra ({module} is not installed): {install_hint('train')}"
    )


def test_install_hints_name_the_package_and_the_clone() -> None:
    hint = install_hint("web")
    assert "pip install 'domino-rl[web]'" in hint and "pip install -e '.[web]'" in hint


def test_a_value_given_for_a_section_names_its_keys() -> None:
    """``output=runs/x`` said "output must be a mapping" without naming ``output.dir=``."""
    from agents.arena.config import load_config
    from agents.configuration import ConfigError

    with pytest.raises(ConfigError, match=r"output is a section, not a value: set its keys \(output\.dir="):
        load_config(None, ["output=runs/x"])


def test_the_arenas_progress_rate_is_the_average_since_the_start(monkeypatch, tmp_path: Path) -> None:
    """The first run's bar said 13,356 rounds/s (the last burst of finished games) where its summary
    said 99: the bar's rate is now what the summary reports, the rounds so far over the time so far."""
    import time
    from collections.abc import Callable

    from agents.arena import evaluate, report

    rates: list[str] = []

    class Recording(report.Progress):
        def update(self, task_id: int, **fields: object) -> None:
            if fields.get("rate"):
                rates.append(fields["rate"])
            super().update(task_id, **fields)

    def slow_start_then_a_burst(config: object, progress: Callable) -> None:
        advance = progress("rounds", 2000)
        time.sleep(0.5)  # compiling, the first batches
        advance(10)
        advance(990)  # a batch's games all end within the same step
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "Progress", Recording)
    monkeypatch.setattr(evaluate, "run_arena", slow_start_then_a_burst)
    assert evaluate.main(["policies=[random,strong]", "progress=true", f"output.dir={tmp_path}"]) == 130
    last = float(rates[-1].split()[0].replace(",", ""))
    assert 200 <= last <= 2000, rates  # 1,000 rounds in a little over 0.5 s; a burst rate is ~10^6


@pytest.mark.parametrize("command", ["train", "exploit"])
def test_ctrl_c_while_a_command_loads_is_one_line(command: str) -> None:
    """Ctrl-C in the first seconds of domino-train or domino-exploit printed a 23-36 line traceback of
    the imports: the entry point now loads them under its own handler."""
    import signal
    import time

    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"from agents.training.commands import {command}; raise SystemExit({command}())",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.4)  # the entry point's own import takes milliseconds; torch and the rest take seconds
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Traceback" not in err and "interrupted while it was starting; nothing was done" in err


def test_an_unwritable_output_names_the_folder_not_a_probe_file(capsys) -> None:
    from agents.arena import evaluate

    assert evaluate.main(["bots", "deals=2", "matches=0", "progress=false", "output.dir=/proc"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "cannot write /proc:" in out and "/proc/tmp" not in out, out


def test_a_full_disk_names_the_file_being_written(tmp_path: Path, monkeypatch) -> None:
    import os

    from domino_env import files

    def full(handle: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError) as caught:
        files.write_atomic(tmp_path / "result.json", "{}")
    assert caught.value.filename == str(tmp_path / "result.json")
    assert list(tmp_path.iterdir()) == []  # no temporary left behind


@pytest.mark.parametrize(
    ("make", "message"),
    [("folder", "is a folder, not a YAML file"), ("loop", "is a symbolic link that leads to no file")],
)
def test_a_config_path_that_is_no_file_says_what_it_is(
    make: str, message: str, tmp_path: Path, capsys
) -> None:
    from agents.arena import evaluate

    path = tmp_path / "config.yaml"
    if make == "folder":
        path.mkdir()
    else:
        path.symlink_to(path)
    assert evaluate.main([str(path)]) == 2
    assert message in " ".join(capsys.readouterr().out.split())


def test_the_next_steps_after_make_train_work_as_typed(tmp_path: Path) -> None:
    """make train runs .venv/bin/python without activating the venv: the printed commands named
    domino-evaluate and tensorboard, which the shell then did not find."""
    code = (
        "from agents.training.config import parse_train_config\n"
        "from agents.training.run_hints import next_steps\n"
        f"print(next_steps(parse_train_config({{'output_dir': {str(tmp_path)!r}}})))\n"
    )
    bare = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=bare, check=True
    ).stdout
    here = Path(sys.executable).parent
    for name in ("tensorboard", "domino-evaluate", "domino-serve"):
        if (here / name).exists():
            assert f"{here / name} " in out or f"{os.path.relpath(here / name)} " in out, out
    activated = {**bare, "PATH": f"{here}:/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=activated, check=True
    )
    assert "  measure it:        domino-evaluate preset=" in out.stdout
