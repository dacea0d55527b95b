"""Agents for domino-rl: heuristic bots, search bots and the duplicate arena.

Every policy consumes only what an environment gives a seat (observation and
legal-action mask), never the engine's hidden state; ``omniscient`` is the one
marked exception (``cheats = True``), an upper bound for research.

Importing the package plugs the training code's ``.pt`` checkpoints and Stable-Baselines3's
``.zip`` models into ``load_policy`` (``agents.bots.trained``): the bots never import the
training code, which builds on them. ``evaluate(policy, ...)`` benchmarks any policy in one call.
"""

from agents.arena.config import ArenaConfig, load_config
from agents.arena.evaluation import evaluate
from agents.arena.result import ArenaResult
from agents.arena.tournament import run_arena
from agents.bots.adapters import PolicyError, load_sb3_zip, one_observation
from agents.bots.registry import BOT_NAMES, Bot, as_policy, load_policy, make_bot
from agents.bots.trained import register_checkpoint_loader
from agents.configuration import ConfigError
from agents.training import open_checkpoint

register_checkpoint_loader(".pt", open_checkpoint)
register_checkpoint_loader(".zip", load_sb3_zip)

__all__ = [
    "BOT_NAMES",
    "ArenaConfig",
    "ArenaResult",
    "Bot",
    "ConfigError",
    "PolicyError",
    "as_policy",
    "evaluate",
    "load_config",
    "load_policy",
    "make_bot",
    "one_observation",
    "register_checkpoint_loader",
    "run_arena",
]
