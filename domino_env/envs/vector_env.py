"""``DominoVectorEnv``: many games as one Gymnasium ``VectorEnv``, stepped by the batched core.

Sub-environment ``i`` is game ``i`` of a ``DominoCore``; the learner plays one
seat in each and opponents the others (policies or names, ``opponents="strong"``),
with the seats, rewards and episodes of ``DominoSoloEnv`` (``domino_env.envs.learner``
defines them for both). One ``step`` plays every learner's action at once, then
opponent round trips, each a single batched call per policy, until every game waits
for its learner again. There is no Python loop over games.

**Autoreset: SAME_STEP** by default (``metadata["autoreset_mode"]``). The core starts a new
round inside the step that ends one, so a sub-environment whose episode ends
returns ``terminated=True`` together with the first observation of its next
episode. As Gymnasium specifies for that mode, ``infos["final_obs"]`` (an object
array, ``None`` where no episode ended) holds the ended episode's last
observation, the learner's at its last decision (the core never holds the finished
position: see ``domino_env.envs.learner_batch``; ``DominoSoloEnv``, on the one-game
engine, does show it), and ``infos["final_info"]`` the ended
episode's info: ``action_mask`` (all zero), ``learner_seat``, ``outcome``
(+1 / -1 / 0) and ``points`` (its normalised points); ``"_final_obs"`` and
``"_final_info"`` flag the sub-environments concerned. Episodes never truncate.

Every step's ``infos`` has ``action_mask`` (int8, (num_envs, num_actions)) and
``learner_seat``; ``action_masks()`` gives the bool mask.

**Autoreset: NEXT_STEP** with ``autoreset_mode="next_step"`` (or
``AutoresetMode.NEXT_STEP``): a sub-environment whose episode ends returns
``terminated=True`` with the episode's last observation and, in ``infos``, its
``outcome`` and ``points`` (flagged by ``_outcome`` / ``_points``); on the next
``step`` its action is ignored and it returns the first observation of its next
episode with reward 0. Gymnasium 1.2.2's vector ``RecordEpisodeStatistics`` counts
returns correctly only in this mode (it miscounts same-step autoreset; later releases
read both). The mask of a sub-environment that just terminated is already its next
episode's, so samplers and masked policies always find a legal action. ``step`` takes an integer
array of shape (num_envs,) (ValueError otherwise; an illegal action raises
``IllegalMoveError``), and raises RuntimeError before the first ``reset``; none of
these errors changes any game. Create it with::

    envs = gymnasium.make_vec("domino_rl/Domino-v0", num_envs=4096,
                              vectorization_mode="vector_entry_point", preset="block")
    obs, infos = envs.reset(seed=0)
    obs, rewards, terminated, truncated, infos = envs.step(envs.action_space.sample())
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from domino_env.engine.outcome import Episode
from domino_env.engine.rules import Rules
from domino_env.envs.learner import LearnerSeat, Opponents, Reward
from domino_env.envs.learner_batch import LearnerBatch, LearnerStep
from domino_env.envs.spaces import LegalActionsBatch, observation_space

AUTORESET_MODES: dict[Any, AutoresetMode] = {
    "same_step": AutoresetMode.SAME_STEP,
    "next_step": AutoresetMode.NEXT_STEP,
    AutoresetMode.SAME_STEP: AutoresetMode.SAME_STEP,
    AutoresetMode.NEXT_STEP: AutoresetMode.NEXT_STEP,
}
"""The autoreset modes offered, by name or as Gymnasium's enum."""


class DominoVectorEnv(VectorEnv):
    """``num_envs`` games with the learner at one seat in each. See the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 1,
        preset: str = "block",
        players: int | None = None,
        episode: Episode = "round",
        reward: Reward = "points",
        learner_seat: LearnerSeat = 0,
        opponents: Opponents = None,
        autoreset_mode: AutoresetMode | str = "same_step",
        **rule_overrides: Any,
    ) -> None:
        if autoreset_mode not in AUTORESET_MODES:
            choices = ", ".join(repr(name) for name in AUTORESET_MODES if isinstance(name, str))
            raise ValueError(f"autoreset_mode must be one of {choices}; got {autoreset_mode!r}")
        self.metadata = {**self.metadata, "autoreset_mode": AUTORESET_MODES[autoreset_mode]}
        self.rules = Rules.preset(preset, players, **rule_overrides)
        self.num_envs = num_envs
        self._batch = LearnerBatch(
            self.rules,
            num_envs,
            episode=episode,
            reward=reward,
            learner_seat=learner_seat,
            opponents=opponents,
        )
        self.single_observation_space = observation_space(self.rules)
        self.single_action_space = spaces.Discrete(self.rules.num_actions)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = LegalActionsBatch(self.rules.num_actions, num_envs, self.action_masks)
        self._mask = np.zeros((num_envs, self.rules.num_actions), dtype=bool)
        self._everywhere = np.ones(num_envs, dtype=bool)
        self._restarting = np.zeros(num_envs, dtype=bool)
        """NEXT_STEP: sub-environments whose episode ended on the last step (their next step resets)."""

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """New episodes in every sub-environment (``seed`` makes them reproducible)."""
        super().reset(seed=seed)
        if options:
            raise ValueError(f"unknown reset options {sorted(options)}; DominoVectorEnv takes none")
        obs, self._mask = self._batch.reset(seed=seed)
        self._restarting[:] = False
        return obs, self._infos()

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Every learner moves; opponents play until each game waits for its learner again."""
        if self.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP:
            return self._step_next(np.asarray(actions))
        result = self._batch.step(np.asarray(actions))
        self._mask = result.mask
        infos = self._infos()
        if result.done.any():
            infos["final_obs"] = _rows_where(result.final_obs, result.done)
            infos["_final_obs"] = result.done.copy()
            infos["final_info"] = _final_info(result)
            infos["_final_info"] = result.done.copy()
        truncated = np.zeros(self.num_envs, dtype=bool)
        return result.obs, result.reward, result.done, truncated, infos

    def _step_next(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """NEXT_STEP: games that ended last step stand still (they show their new episode now)."""
        restarting = self._restarting
        result = self._batch.step(actions, None if not restarting.any() else ~restarting)
        self._mask = result.mask
        done = result.done
        infos = self._infos()
        obs = result.obs  # the batch's own copy: safe to write
        if done.any():
            obs[done] = result.final_obs[done]
            final = _final_info(result)
            for key in ("outcome", "points"):
                infos[key], infos[f"_{key}"] = final[key], final[f"_{key}"]
            infos["learner_seat"][done] = result.final_seat[done]
        self._restarting = done.copy()
        return obs, result.reward, done, np.zeros(self.num_envs, dtype=bool), infos

    def action_masks(self) -> np.ndarray:
        """(num_envs, num_actions) bool legal actions of every learner now."""
        return self._mask.copy()

    def _infos(self) -> dict[str, Any]:
        return {
            "action_mask": self._mask.astype(np.int8),
            "_action_mask": self._everywhere.copy(),
            "learner_seat": self._batch.seats.copy(),
            "_learner_seat": self._everywhere.copy(),
        }


def _rows_where(rows: np.ndarray, where: np.ndarray) -> np.ndarray:
    """Object array of the rows where ``where``, ``None`` elsewhere (Gymnasium's ``final_obs`` layout)."""
    out = np.full(len(rows), None, dtype=object)
    out[where] = np.fromiter(rows[where], dtype=object, count=int(where.sum()))
    return out


def _final_info(result: LearnerStep) -> dict[str, np.ndarray]:
    """The ended episodes' last info, batched with ``_key`` flags as ``SyncVectorEnv`` would."""
    done = result.done
    return {
        "action_mask": np.zeros(result.mask.shape, dtype=np.int8),
        "_action_mask": done.copy(),
        "learner_seat": result.final_seat,
        "_learner_seat": done.copy(),
        "outcome": result.outcome.astype(np.int64),
        "_outcome": done.copy(),
        "points": result.points,
        "_points": done.copy(),
    }
