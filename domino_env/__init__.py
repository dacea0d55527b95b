"""domino-rl: double-six dominoes for reinforcement learning.

Public API:

* ``Rules``: the rule systems (``Rules.preset("block", players=2)``).
* ``DominoCore``: N games stepped together with NumPy (legal masks, observations).
* ``reference``: one game in plain Python, the oracle the core is tested against.
* ``replay(record)``: replay a game record (see ``domino_env.records``).
* ``IllegalMoveError``: raised for a move the rules do not allow.
"""

from .core import DominoCore, StepResult
from .errors import IllegalMoveError
from .records import replay
from .rules import PRESET_NAMES, PRESET_PLAYERS, Rules

__all__ = [
    "PRESET_NAMES",
    "PRESET_PLAYERS",
    "DominoCore",
    "IllegalMoveError",
    "Rules",
    "StepResult",
    "replay",
]
