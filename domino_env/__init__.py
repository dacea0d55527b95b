"""domino-rl: double-six dominoes for reinforcement learning.

Public API:

* ``Rules``: the rule systems (``Rules.preset("block", players=2)``).
* ``DominoCore``: N games stepped together by compiled kernels (legal masks, observations).
* ``Game``: one game on the compiled kernels (the engine under the single-game envs).
* ``reference``: one game in readable Python, the oracle both engines are tested against.
* ``replay(record)``: replay a game record (see ``domino_env.tools.records``).
* Environments: ``env`` / ``raw_env`` / ``parallel_env`` (PettingZoo AEC and parallel,
  from ``domino_env.envs.pettingzoo_env``), ``OpponentsWrapper`` (PettingZoo with bots
  at the other seats: ``env(opponents="strong")``), ``DominoSoloEnv``
  (Gymnasium, id ``domino_rl/Domino-v0``), ``DominoVectorEnv`` (native Gymnasium
  vector env), ``SelfPlay`` (every seat of N games, batched).
* Policies for the seats a learner does not play: ``Policy``, ``random_policy``.
* ``IllegalMoveError``: raised for a move the rules do not allow.
"""

from domino_env.engine.core import DominoCore, StepResult
from domino_env.engine.errors import IllegalMoveError
from domino_env.engine.game import Game
from domino_env.engine.rules import PRESET_NAMES, PRESET_PLAYERS, Rules
from domino_env.envs import registration  # noqa: F401  (registers the Gymnasium ids)
from domino_env.envs.gym_env import DominoSoloEnv
from domino_env.envs.pettingzoo_env import env, parallel_env, raw_env
from domino_env.envs.policies import Policy, first_legal_policy, random_policy
from domino_env.envs.seated import OpponentsWrapper
from domino_env.envs.selfplay import SelfPlay
from domino_env.envs.vector_env import DominoVectorEnv
from domino_env.tools.records import replay

__all__ = [
    "PRESET_NAMES",
    "PRESET_PLAYERS",
    "DominoCore",
    "DominoSoloEnv",
    "DominoVectorEnv",
    "Game",
    "IllegalMoveError",
    "OpponentsWrapper",
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
