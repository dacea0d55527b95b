"""Agents for domino-rl: heuristic bots, search bots and the duplicate arena.

Every policy consumes only what an environment gives a seat (observation and
legal-action mask), never the engine's hidden state; ``omniscient`` is the one
marked exception (``cheats = True``), an upper bound for research.

``evaluate(policy, ...)`` benchmarks any policy in one call. The names below are imported
when first used (PEP 562), so a command that only starts (``domino-train --help``, a
Ctrl-C while it loads) does not pay for the arena, pydantic and rich first.
"""

from __future__ import annotations

import importlib
from typing import Any

EXPORTS = {
    "ArenaConfig": "agents.arena.config",
    "load_config": "agents.arena.config",
    "evaluate": "agents.arena.evaluation",
    "benchmark": "agents.arena.benchmark",
    "ArenaResult": "agents.arena.result",
    "run_arena": "agents.arena.tournament",
    "PolicyError": "agents.bots.adapters",
    "one_observation": "agents.bots.adapters",
    "BOT_NAMES": "agents.bots.registry",
    "Bot": "agents.bots.registry",
    "as_policy": "agents.bots.registry",
    "load_policy": "agents.bots.registry",
    "make_bot": "agents.bots.registry",
    "register_checkpoint_loader": "agents.bots.trained",
    "ConfigError": "agents.configuration",
}
"""Public name -> the module that defines it."""

__all__ = sorted(EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in EXPORTS:
        raise AttributeError(f"module 'agents' has no attribute {name!r}")
    return getattr(importlib.import_module(EXPORTS[name]), name)


def __dir__() -> list[str]:
    return sorted({*__all__, "EXPORTS", *(name for name in globals() if name.startswith("__"))})
