"""Gymnasium ids of the environments; importing this module registers them.

* ``domino_rl/Domino-v0``: any preset, chosen by keyword (default ``"block"``)::

      gymnasium.make("domino_rl/Domino-v0", preset="all_fives", players=3)
      gymnasium.make_vec("domino_rl/Domino-v0", num_envs=4096, vectorization_mode="vector_entry_point")

* one id per preset, for tools that take only an id (``--env-id domino_rl/AllFives-v0``):
  ``Muggins``, ``IdrdDraw``, ``IdrdBlock``, ``SpanishPairs``, ``Partnership``, ``Draw``,
  ``Block``, ``AllFives`` (all ``domino_rl/<Name>-v0``), each at its smallest player count
  unless ``players=`` says otherwise.

``gymnasium.make`` builds ``DominoSoloEnv``; ``gymnasium.make_vec`` with
``vectorization_mode="vector_entry_point"`` (its default here) builds the native
``DominoVectorEnv``. Keyword arguments go to those constructors.
"""

from __future__ import annotations

import gymnasium

from domino_env.engine.rules import PRESET_NAMES

NAMESPACE = "domino_rl"
ENTRY_POINT = "domino_env.envs.gym_env:DominoSoloEnv"
VECTOR_ENTRY_POINT = "domino_env.envs.vector_env:DominoVectorEnv"


def preset_env_id(preset: str) -> str:
    """``"all_fives"`` -> ``"domino_rl/AllFives-v0"``."""
    return f"{NAMESPACE}/{preset.title().replace('_', '')}-v0"


ENV_IDS = {f"{NAMESPACE}/Domino-v0": {}} | {preset_env_id(name): {"preset": name} for name in PRESET_NAMES}
"""Every registered id and the keyword arguments it fixes."""


def register_envs() -> None:
    """Register every id once (importing the package twice must not re-register)."""
    for env_id, kwargs in ENV_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(
                env_id, entry_point=ENTRY_POINT, vector_entry_point=VECTOR_ENTRY_POINT, kwargs=kwargs
            )


register_envs()
