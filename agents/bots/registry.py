"""The bot interface, the registry of bots by name, and where trained checkpoints plug in.

A bot is an object with a ``name`` and ``__call__(obs, mask) -> actions``: the
``domino_env.envs.policies`` contract (batched seat-relative observations and legal
masks in, one legal action per row out). Bots are built for one ``Rules``
(observation layout and action space depend on it) by ``make_bot``. Honest bots
see nothing but ``obs`` and ``mask``. The one exception is ``omniscient``: it is
marked ``cheats = True`` and the arena hands it the core's hidden state
(``reveal_to_cheater``) before each call, so it can serve as an upper bound.

Trained policies come in through ``load_policy(spec)``: a spec that is not a bot
name is a checkpoint path, or the name of an agent shipped with the package
(``"block-2p"``: ``agents/checkpoints/block-2p.pt``, so it loads from any folder of
any install), loaded by the loader registered for its suffix with
``register_checkpoint_loader`` (the training code registers its own format).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from agents.bots import heuristic, search
from domino_env.engine.core import DominoCore
from domino_env.engine.rules import Rules


@runtime_checkable
class Bot(Protocol):
    """A named batched policy: ``bot(obs (B, obs_size) int16, mask (B, A) bool) -> (B,) actions``."""

    name: str

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray: ...


BotFactory = Callable[..., Bot]
BOTS: dict[str, BotFactory] = {
    "random": heuristic.RandomBot,
    "heaviest": heuristic.HeaviestBot,
    "doubles": heuristic.DoublesBot,
    "diverse": heuristic.DiverseBot,
    "blocker": heuristic.BlockerBot,
    "fives": heuristic.FivesBot,
    "strong": heuristic.StrongBot,
    "pimc": search.PimcBot,
    "omniscient": search.OmniscientBot,
}
BOT_NAMES = tuple(BOTS)

SHIPPED_DIR = Path(__file__).resolve().parents[1] / "checkpoints"
"""The trained agents shipped as package data (the repository's ``checkpoints/`` links here)."""
SHIPPED_AGENTS = tuple(sorted(path.stem for path in SHIPPED_DIR.glob("*.pt")))
"""Their names: ``load_policy("block-2p")`` loads ``SHIPPED_DIR / "block-2p.pt"``."""

CheckpointLoader = Callable[[Path, Rules | None, int], Bot]
CHECKPOINT_LOADERS: dict[str, CheckpointLoader] = {}
"""Suffix -> ``loader(path, rules, seed) -> Bot`` (rules None: the checkpoint's own); a registered ``".pt"``
loader replaces the built-in one (``agents.training.checkpoint.load_for_arena``)."""


def make_bot(name: str, rules: Rules, seed: int | None = None, **options: Any) -> Bot:
    """The bot registered as ``name`` for these rules; ``options`` go to its constructor."""
    if name not in BOTS:
        raise ValueError(_unknown_bot(name))
    return BOTS[name](rules, seed=seed, **options)


def register_checkpoint_loader(suffix: str, loader: CheckpointLoader) -> None:
    """Let ``load_policy`` (and so the arena) load checkpoints whose file name ends with ``suffix``."""
    CHECKPOINT_LOADERS[suffix] = loader


def load_policy(spec: str, rules: Rules | None = None, seed: int | None = None, **options: Any) -> Bot:
    """A bot by registry name, or a trained policy from a checkpoint path or a shipped agent name.

    A checkpoint knows its rules: ``load_policy("block-2p")`` (a shipped agent, see
    ``checkpoint_path``) plays the rules it was trained on, and ``rules``, when given, are checked
    against them. A bot needs ``rules``.
    """
    if spec in BOTS:
        if rules is None:
            raise ValueError(f"bot {spec!r} needs the rules: load_policy({spec!r}, Rules.preset(...))")
        return make_bot(spec, rules, seed=seed, **options)
    path = checkpoint_path(spec)
    if path.suffix == ".pt" and ".pt" not in CHECKPOINT_LOADERS:
        try:  # imported here, one way only: the training code needs torch, the registry does not
            from agents.training.checkpoint import load_for_arena
        except ImportError as error:
            raise ValueError(f"loading {path.name!r} needs PyTorch: {error}") from error
        return load_for_arena(path, rules, 0 if seed is None else seed)
    for suffix, loader in CHECKPOINT_LOADERS.items():
        if path.name.endswith(suffix):
            return loader(path, rules, 0 if seed is None else seed)
    known = ", ".join(CHECKPOINT_LOADERS) or "none yet"
    raise ValueError(
        f"no checkpoint loader for {path.name!r}; registered suffixes: {known} "
        "(agents.bots.registry.register_checkpoint_loader)"
    )


def checkpoint_path(spec: str | Path) -> Path:
    """The checkpoint file ``spec`` names: an existing path as it is, else a shipped agent's file.

    A path wins over a shipped name, so a local file is never shadowed; anything else is a
    ValueError listing the bots and the shipped agents.
    """
    path = Path(spec)
    if path.is_file():
        return path
    if str(spec) in SHIPPED_AGENTS:
        return SHIPPED_DIR / f"{spec}.pt"
    close = difflib.get_close_matches(str(spec), (*BOT_NAMES, *SHIPPED_AGENTS), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ValueError(
        f"unknown bot {str(spec)!r}, nor a shipped agent or a checkpoint file; valid bots: "
        f"{', '.join(BOT_NAMES)}; shipped agents: {', '.join(SHIPPED_AGENTS)}{hint}"
    )


def reveal_to_cheater(policy: Bot, core: DominoCore, games: np.ndarray) -> None:
    """Before a call: tell a cheating policy which ``core`` games its rows are. Honest bots get nothing."""
    if getattr(policy, "cheats", False):
        policy.reveal(core, games)


def _unknown_bot(name: str) -> str:
    close = difflib.get_close_matches(str(name), BOT_NAMES, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown bot {name!r}; valid bots: {', '.join(BOT_NAMES)}{hint}"
