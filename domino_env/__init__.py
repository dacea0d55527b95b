"""domino-rl: double-six dominoes for reinforcement learning.

Public API:

* ``Rules``: the rule systems (``Rules.preset("block", players=2)``).
* ``DominoCore``: N games stepped together by compiled kernels (legal masks, observations).
* ``Game``: one game, fast, in plain Python (the engine under the single-game envs).
* ``reference``: one game in readable Python, the oracle both engines are tested against.
* ``replay(record)``: replay a game record (see ``domino_env.records``).
* Environments: ``env`` / ``raw_env`` / ``parallel_env`` (PettingZoo AEC and parallel,
  from ``domino_env.pettingzoo_env``), ``DominoSoloEnv``
  (Gymnasium, id ``domino_rl/Domino-v0``), ``DominoVectorEnv`` (native Gymnasium
  vector env), ``SelfPlay`` (every seat of N games, batched).
* Policies for the seats a learner does not play: ``Policy``, ``random_policy``.
* ``IllegalMoveError``: raised for a move the rules do not allow.
"""

from . import registration  # noqa: F401  (registers the Gymnasium ids)
from .core import DominoCore, StepResult
from .errors import IllegalMoveError
from .game import Game
from .gym_env import DominoSoloEnv
from .pettingzoo_env import env, parallel_env, raw_env
from .policies import Policy, first_legal_policy, random_policy
from .records import replay
from .rules import PRESET_NAMES, PRESET_PLAYERS, Rules
from .selfplay import SelfPlay
from .vector_env import DominoVectorEnv

__all__ = [
    "PRESET_NAMES",
    "PRESET_PLAYERS",
    "DominoCore",
    "DominoSoloEnv",
    "DominoVectorEnv",
    "Game",
    "IllegalMoveError",
    "Policy",
    "Rules",
    "SelfPlay",
    "StepResult",
    "env",
    "first_legal_policy",
    "parallel_env",
    "random_policy",
    "raw_env",
    "replay",
]
