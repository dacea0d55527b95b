"""domino-rl: double-six dominoes for reinforcement learning.

Public API: ``Rules`` (rule presets), ``DominoCore`` (batched NumPy engine),
``reference`` (one-game engine), ``replay`` (game records) and
``IllegalMoveError``.
"""

from .errors import IllegalMoveError
from .rules import PRESET_NAMES, PRESET_PLAYERS, Rules

__all__ = ["IllegalMoveError", "PRESET_NAMES", "PRESET_PLAYERS", "Rules"]
