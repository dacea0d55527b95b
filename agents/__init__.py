"""Agents for domino-rl: heuristic bots, search bots and the duplicate arena.

Every policy consumes only what an environment gives a seat (observation and
legal-action mask), never the engine's hidden state; ``omniscient`` is the one
marked exception (``cheats = True``), an upper bound for research.
"""

from agents.arena.config import ArenaConfig, ConfigError, load_config
from agents.arena.tournament import ArenaResult, run_arena
from agents.bots.registry import BOT_NAMES, Bot, load_policy, make_bot, register_checkpoint_loader

__all__ = [
    "BOT_NAMES",
    "ArenaConfig",
    "ArenaResult",
    "Bot",
    "ConfigError",
    "load_config",
    "load_policy",
    "make_bot",
    "register_checkpoint_loader",
    "run_arena",
]
