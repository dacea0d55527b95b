"""Messages a newcomer meets: each points the right way (the 'newcomer's first hour' issue)."""

from __future__ import annotations

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
