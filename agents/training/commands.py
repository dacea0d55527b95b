"""The training package's console commands, started without importing torch first.

``domino-train --help`` on an install without the ``train`` extra was a ModuleNotFoundError
traceback (``tensorboard``): the command modules import torch and TensorBoard at the top. These
entry points import them inside a check, and a missing extra is one line saying what to install.
Importing this module imports nothing heavy (``agents`` and ``agents.training`` load lazily), so a
Ctrl-C in the seconds the command takes to load is one line too, not a traceback of the imports.
"""

from __future__ import annotations

import importlib
import signal
import sys
from collections.abc import Callable

TRAIN_EXTRA = ("torch", "tensorboard")
"""Top-level packages the ``train`` extra installs."""


def _command(module: str, name: str) -> Callable[[], int]:
    def run() -> int:
        try:
            main = importlib.import_module(module).main
        except BaseException as error:
            if _interrupted(error):
                print(f"{name}: interrupted while it was starting; nothing was done", file=sys.stderr)
                return 128 + signal.SIGINT
            missing = error.name if isinstance(error, ModuleNotFoundError) else None
            if (missing or "").split(".")[0] not in TRAIN_EXTRA:
                raise
            from domino_env.install import install_hint

            print(f"error: {name} needs the train extra ({missing} is not installed): "
                  f"{install_hint('train')}", file=sys.stderr)  # fmt: skip
            return 2
        return main()

    run.__doc__ = f"``{name}``: ``{module}.main``, or one line if the train extra is missing."
    return run


def _interrupted(error: BaseException | None) -> bool:
    """A Ctrl-C, or an error raised while a library's import was handling one (an import cut short
    can surface as an ImportError of a half-loaded module)."""
    while error is not None:
        if isinstance(error, KeyboardInterrupt):
            return True
        error = error.__context__
    return False


train = _command("agents.training.train", "domino-train")
exploit = _command("agents.training.exploit", "domino-exploit")
model_card = _command("agents.training.model_card", "domino-card")
