"""Trained agents as policies: the shipped checkpoint files, and the loaders that open a file by suffix.

Kept below both the bot registry (``agents.bots.registry.load_policy`` takes bot names and
checkpoints alike) and the search bots (whose playouts, priors and opponent models may be
networks), so that both open a checkpoint the same way without importing each other.

Two loaders are known by import path, and imported only when a file of theirs is opened: the
training code's ``.pt`` format (``agents.training.open_checkpoint``, which loads torch then) and
Stable-Baselines3's ``.zip`` (``agents.bots.adapters.load_sb3_zip``); so the bots never import the
training code, which builds on them. ``register_checkpoint_loader`` adds others (docs/arena.md).
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
from pathlib import Path

from domino_env.engine.rules import Rules
from domino_env.envs.policies import Policy

SHIPPED_DIR = Path(__file__).resolve().parents[1] / "checkpoints"
"""The trained agents shipped as package data (the repository's ``checkpoints/`` links here)."""
SHIPPED_AGENTS = tuple(sorted(path.stem for path in SHIPPED_DIR.glob("*.pt")))
"""Their names: ``load_policy("block-2p")`` loads ``SHIPPED_DIR / "block-2p.pt"``."""

CheckpointLoader = Callable[[Path, Rules | None, int], Policy]
CHECKPOINT_LOADERS: dict[str, CheckpointLoader | str] = {
    ".pt": "agents.training:open_checkpoint",
    ".zip": "agents.bots.adapters:load_sb3_zip",
}
"""Suffix -> ``loader(path, rules, seed) -> policy`` (rules None: the checkpoint's own), or the
``module:function`` path of one; tried in the order registered; registering a suffix again replaces
its loader (``.pt`` included)."""


def register_checkpoint_loader(suffix: str, loader: CheckpointLoader) -> None:
    """Let ``load_policy`` (and so the arena) load checkpoints whose file name ends with ``suffix``."""
    CHECKPOINT_LOADERS[suffix] = loader


def checkpoint_file(spec: str | Path, bots: tuple[str, ...] = ()) -> Path:
    """The checkpoint file ``spec`` names: an existing path as it is, else a shipped agent's file.

    A path wins over a shipped name, so a local file is never shadowed; anything else is a
    ValueError listing the shipped agents, and ``bots`` (the bot names the caller takes too).
    """
    path = Path(spec)
    if path.is_file():
        return path
    if str(spec) in SHIPPED_AGENTS:
        return SHIPPED_DIR / f"{spec}.pt"
    close = difflib.get_close_matches(str(spec), (*bots, *SHIPPED_AGENTS), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    shipped = f"shipped agents: {', '.join(SHIPPED_AGENTS)}{hint}"
    if bots:
        raise ValueError(
            f"unknown bot {str(spec)!r}, nor a shipped agent, a checkpoint file or a 'module:attribute' "
            f"import path; valid bots: {', '.join(bots)}; {shipped}"
        )
    raise ValueError(f"{str(spec)!r} is neither a checkpoint file nor a shipped agent; {shipped}")


def load_checkpoint_policy(path: Path, rules: Rules | None, seed: int) -> Policy:
    """The policy in the checkpoint file ``path``, opened by the first loader registered for its suffix."""
    for suffix, loader in CHECKPOINT_LOADERS.items():
        if path.name.endswith(suffix):
            if isinstance(loader, str):
                module, _, function = loader.partition(":")
                loader = getattr(importlib.import_module(module), function)
            return loader(path, rules, seed)
    known = ", ".join(CHECKPOINT_LOADERS) or "none yet"
    raise ValueError(
        f"no checkpoint loader for {path.name!r}; registered suffixes: {known} "
        "(agents.bots.trained.register_checkpoint_loader)"
    )
