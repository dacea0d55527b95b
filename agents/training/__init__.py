"""Training: PPO, distillation from the search, checkpoints; needs the ``train`` extra (torch).

This package's ``__init__`` stays free of torch: ``open_checkpoint`` is the ``.pt`` loader that
``agents`` registers with ``agents.bots.trained``, and it imports the training code only when a
file is opened.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the commands import this package first: it stays free of the engine's imports too
    from domino_env.engine.rules import Rules
    from domino_env.envs.policies import Policy


def open_checkpoint(path: Path, rules: Rules | None, seed: int) -> Policy:
    """A ``.pt`` checkpoint or policy file as a greedy policy (``checkpoint.load_for_arena``)."""
    try:  # imported here: torch is needed only once a file is opened
        from agents.training.checkpoint import load_for_arena
    except ImportError as error:
        from domino_env.install import install_hint

        raise ValueError(f"loading {path.name!r} needs PyTorch ({error}): {install_hint('train')}") from error
    return load_for_arena(path, rules, seed)
