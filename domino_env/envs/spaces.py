"""Gymnasium spaces of the environments: the observation box and legal-sampling action spaces.

The action spaces are plain ``Discrete(28 * ends)`` / ``MultiDiscrete`` for every
library that inspects them, with one addition: ``sample()`` without a mask draws
a *legal* action of the current position. Illegal actions raise, so a random
agent written as ``env.step(env.action_space.sample())`` (Gymnasium's own
``check_env`` is one) must get legal ones. An explicit ``mask`` or
``probability`` behaves as in Gymnasium. Pickled copies (a saved model keeps its
spaces) drop the link to the environment and sample like the plain spaces.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces

from domino_env.engine.observation import observation_fields, observation_size
from domino_env.engine.rules import Rules
from domino_env.engine.tiles import NUM_TILES
from domino_env.envs.policies import sample_legal


def observation_bounds(rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """Per-field int16 (low, high) of one seat's observation vector (docs/engine.md)."""
    p = rules.players
    int16 = np.iinfo(np.int16)
    max_hand = rules.hand_size + (rules.boneyard_size if rules.drawing else 0)
    bounds = {
        "tile_owner": (0, p + 1),
        "missing": (0, 1),
        "scores": (int16.min, int16.max),
        "opener": (0, p - 1),
        "tile_end": (0, 5),
        "tile_order": (0, NUM_TILES),
        "end_number": (-1, 6),
        "end_double": (0, 1),
        "draw_pile": (0, max(rules.boneyard_size, 1)),
        "hand_size": (0, max_hand),
        "to_move": (-1, p - 1),
    }
    low = np.zeros(observation_size(rules), dtype=np.int16)
    high = np.zeros_like(low)
    for name, where in observation_fields(rules).items():
        low[where], high[where] = bounds[name]
    return low, high


def observation_space(rules: Rules) -> spaces.Box:
    """The int16 box of one seat's observation, with each field's own bounds."""
    low, high = observation_bounds(rules)
    return spaces.Box(low, high, dtype=np.int16)


class _PicklesWithoutMask:
    """Spaces are copied and pickled (vector envs, checkers): the mask callback, bound to a
    live env, is dropped; a restored space samples like its plain Gymnasium parent."""

    def __getstate__(self) -> dict[str, Any]:
        return {key: value for key, value in self.__dict__.items() if key != "_legal_mask"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._legal_mask = None


class LegalActions(_PicklesWithoutMask, spaces.Discrete):
    """``Discrete(n)`` whose ``sample()`` without a mask is a uniformly random legal action."""

    def __init__(self, n: int, legal_mask: Callable[[], np.ndarray]) -> None:
        super().__init__(n)
        self._legal_mask: Callable[[], np.ndarray] | None = legal_mask
        """Returns the current legal actions as an int8 mask (Gymnasium's mask convention)."""

    def sample(self, mask: np.ndarray | None = None, probability: np.ndarray | None = None) -> np.int64:
        if mask is None and probability is None and self._legal_mask is not None:
            mask = self._legal_mask()
        return super().sample(mask=mask, probability=probability)


class LegalActionsBatch(_PicklesWithoutMask, spaces.MultiDiscrete):
    """``MultiDiscrete([n] * num_envs)`` whose ``sample()`` without a mask is legal in every sub-env."""

    def __init__(self, n: int, num_envs: int, legal_mask: Callable[[], np.ndarray]) -> None:
        super().__init__(np.full(num_envs, n, dtype=np.int64))
        self._legal_mask: Callable[[], np.ndarray] | None = legal_mask
        """Returns the current (num_envs, n) bool legal mask."""

    def sample(self, mask: Any = None, probability: Any = None) -> np.ndarray:
        if mask is None and probability is None and self._legal_mask is not None:
            return sample_legal(self._legal_mask(), self.np_random)
        return super().sample(mask=mask, probability=probability)
