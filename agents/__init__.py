"""Agents for domino-rl: heuristic bots, search bots and the duplicate arena.

Every policy consumes only what an environment gives a seat (observation and
legal-action mask), never the engine's hidden state; ``omniscient`` is the one
marked exception (``cheats = True``), an upper bound for research.

Importing the package plugs the training code's ``.pt`` checkpoints into ``load_policy``
(``agents.bots.trained``): the bots never import the training code, which builds on them.
"""

from agents.arena.config import ArenaConfig, load_config
from agents.arena.tournament import ArenaResult, run_arena
from agents.bots.registry import BOT_NAMES, Bot, load_policy, make_bot
from agents.bots.trained import register_checkpoint_loader
from agents.configuration import ConfigError
from agents.training import open_checkpoint

register_checkpoint_loader(".pt", open_checkpoint)

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
