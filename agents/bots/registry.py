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
any install), opened by the loader registered for its suffix (``agents.bots.trained``;
importing ``agents`` registers the training code's ``.pt`` format and SB3's ``.zip``), or
``package.module:attribute``, a Python object imported by path. ``as_policy`` takes all of
these and any policy object a user holds (``agents.bots.adapters``).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from agents.bots import best_response, heuristic, search
from agents.bots.adapters import IMPORT_PATH, adapt, load_object
from agents.bots.trained import checkpoint_file, load_checkpoint_policy
from domino_env.engine.core import DominoCore
from domino_env.engine.rules import Rules


@runtime_checkable
class Bot(Protocol):
    """A named batched policy: ``bot(obs (B, obs_size) int16, mask (B, A) bool) -> (B,) actions``."""

    name: str

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray: ...


def best_response_bot(rules: Rules, seed: int | None = None, target: Any = None, **options: Any) -> Bot:
    """``best_response`` against ``target``: a spec ``load_policy`` opens (a bot or agent name, a
    checkpoint; greedy) or a policy object; resolved here because the registry knows the names."""
    if target is None:
        raise ValueError(
            f"best_response needs a target option (bots.best_response.target): {best_response.TARGETS}"
        )
    policy = load_policy(str(target), rules, seed=seed) if isinstance(target, (str, Path)) else target
    return best_response.BestResponseBot(rules, seed=seed, target=policy, **options)


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
    "best_response": best_response_bot,
}
BOT_NAMES = tuple(BOTS)


def make_bot(name: str, rules: Rules, seed: int | None = None, **options: Any) -> Bot:
    """The bot registered as ``name`` for these rules; ``options`` go to its constructor."""
    if name not in BOTS:
        raise ValueError(_unknown_bot(name))
    return BOTS[name](rules, seed=seed, **options)


def load_policy(spec: str, rules: Rules | None = None, seed: int | None = None, **options: Any) -> Bot:
    """A bot by registry name, a trained policy from a checkpoint path or a shipped agent name, or
    the object a ``package.module:attribute`` path names.

    A checkpoint knows its rules: ``load_policy("block-2p")`` (a shipped agent, see
    ``checkpoint_path``) plays the rules it was trained on, and ``rules``, when given, are checked
    against them. A bot, an imported object and an SB3 ``.zip`` need ``rules``.
    """
    if spec in BOTS:
        if rules is None:
            raise ValueError(f"bot {spec!r} needs the rules: load_policy({spec!r}, Rules.preset(...))")
        return make_bot(spec, rules, seed=seed, **options)
    if IMPORT_PATH.match(str(spec)) and not Path(spec).is_file():
        if options:
            raise TypeError(f"{spec!r} takes no options, got {', '.join(options)}")
        return load_object(str(spec), rules)
    return load_checkpoint_policy(checkpoint_path(spec), rules, 0 if seed is None else seed)


def as_policy(policy: Any, rules: Rules, seed: int | None = None, name: str | None = None) -> Bot:
    """Any policy as a named bot for ``rules``: a spec ``load_policy`` reads (a bot or agent name, a
    file, ``module:attribute``) or a policy object (``agents.bots.adapters.adapt``: a batched or
    one-observation function, a torch module, an SB3 model); ``name`` renames it."""
    if isinstance(policy, (str, Path)):
        bot = load_policy(str(policy), rules, seed=seed)
        return bot if name is None else adapt(bot, rules, name)
    return adapt(policy, rules, name)


def checkpoint_path(spec: str | Path) -> Path:
    """The checkpoint file ``spec`` names (``agents.bots.trained.checkpoint_file``): an existing path
    as it is, else a shipped agent's file; the ValueError for anything else lists the bots too."""
    return checkpoint_file(spec, BOT_NAMES)


def reveal_to_cheater(policy: Bot, core: DominoCore, games: np.ndarray) -> None:
    """Before a call: tell a cheating policy which ``core`` games its rows are. Honest bots get nothing."""
    if getattr(policy, "cheats", False):
        policy.reveal(core, games)


def _unknown_bot(name: str) -> str:
    close = difflib.get_close_matches(str(name), BOT_NAMES, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown bot {name!r}; valid bots: {', '.join(BOT_NAMES)}{hint}"
