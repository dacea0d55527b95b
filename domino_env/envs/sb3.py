"""``SB3VecEnv``: the native vector env as a Stable-Baselines3 ``VecEnv``, so SB3 trains on the batched core.

SB3 refuses a Gymnasium ``VectorEnv`` and vectorises one-game envs itself
(``DummyVecEnv``: a Python loop over games). ``SB3VecEnv`` hands it
``DominoVectorEnv`` instead: one batched core step for every game, opponents
included. sb3-contrib's ``MaskablePPO`` reads the legal actions through
``env_method("action_masks")``, which returns each game's row of the native
mask::

    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecMonitor

    from domino_env import DominoVectorEnv
    from domino_env.envs.sb3 import SB3VecEnv

    env = VecMonitor(SB3VecEnv(DominoVectorEnv(64, preset="block")))  # VecMonitor: episode stats
    MaskablePPO("MlpPolicy", env, n_steps=64).learn(50_000)

SB3's conventions: ``reset()`` returns the observations only, ``step_wait()``
``(obs, rewards, dones, infos)`` with one info dict per game; a game whose
episode ended returns its next episode's first observation, and its info holds
``terminal_observation`` (the learner's last observation, as the native env's
``final_obs``), ``TimeLimit.truncated`` (always False) and the native
``final_info`` fields (``outcome``, ``points``, ``learner_seat``). ``seed(s)``
seeds the next ``reset`` (the native env takes one seed for all its games).
The games share one native env, so attributes are shared too: ``get_attr`` and
``set_attr`` read and write the native env's, and ``env_method`` knows only
``action_masks``.

``python -m domino_env.envs.sb3`` compares its speed with ``DummyVecEnv`` over the
one-game env (``benchmark``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

import gymnasium
import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvObs, VecEnvStepReturn

from domino_env.envs import registration
from domino_env.envs.vector_env import DominoVectorEnv


class SB3VecEnv(VecEnv):
    """``env``'s games as SB3's sub-environments (see the module docstring)."""

    def __init__(self, env: DominoVectorEnv) -> None:
        self.env = env
        self._actions = np.zeros(env.num_envs, dtype=np.int64)
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)

    def reset(self) -> VecEnvObs:
        """New episodes in every game, seeded by the last ``seed`` call (then forgotten, as in SB3)."""
        obs, _ = self.env.reset(seed=self._seeds[0], options=self._options[0] or None)
        self.reset_infos = [{} for _ in range(self.num_envs)]
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self) -> VecEnvStepReturn:
        obs, rewards, terminated, truncated, native = self.env.step(self._actions)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for game in np.flatnonzero(native.get("_final_obs", ())):
            final = native["final_info"]
            infos[game] = {
                "terminal_observation": native["final_obs"][game],
                "TimeLimit.truncated": bool(truncated[game]),
                "outcome": int(final["outcome"][game]),
                "points": float(final["points"][game]),
                "learner_seat": int(final["learner_seat"][game]),
            }
        return obs, rewards.astype(np.float32), terminated | truncated, infos

    def action_masks(self) -> np.ndarray:
        """(num_envs, num_actions) bool: every game's legal actions now."""
        return self.env.action_masks()

    def close(self) -> None:
        self.env.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The native env's attribute, once per game asked for (the games share it)."""
        return [getattr(self.env, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set the native env's attribute: it is every game's, whichever ``indices``."""
        setattr(self.env, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        """``action_masks``: one mask row per game asked for (what ``MaskablePPO`` calls)."""
        if method_name != "action_masks":
            raise AttributeError(
                f"SB3VecEnv.env_method knows only 'action_masks', not {method_name!r}: "
                "its games share one DominoVectorEnv (call it on .env)"
            )
        return list(self.env.action_masks()[self._indices(indices)])

    def env_is_wrapped(
        self, wrapper_class: type[gymnasium.Wrapper], indices: VecEnvIndices = None
    ) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices: VecEnvIndices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        return [indices] if isinstance(indices, int) else list(indices)


def one_game_vec_env(num_envs: int, **env_kwargs: Any) -> DummyVecEnv:
    """SB3's own vectorisation of the one-game env (``domino_rl/Domino-v0``): what ``SB3VecEnv`` replaces."""
    make = partial(gymnasium.make, f"{registration.NAMESPACE}/Domino-v0", **env_kwargs)
    return DummyVecEnv([make] * num_envs)


def random_steps_per_second(env: VecEnv, seconds: float, seed: int = 0) -> float:
    """Learner steps per second (summed over games) of uniformly random legal play through SB3's API."""
    rng = np.random.default_rng(seed)
    env.seed(seed)
    env.reset()
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        masks = np.stack(env.env_method("action_masks"))
        choice = rng.random(masks.shape) * masks  # a random legal action: the largest draw where legal
        env.step(choice.argmax(axis=1))
        steps += env.num_envs
    return steps / (time.perf_counter() - start)


def maskable_ppo_steps_per_second(env: VecEnv, timesteps: int, n_steps: int = 64) -> float:
    """Environment steps per second of ``MaskablePPO.learn`` (rollouts and updates, on CPU)."""
    from sb3_contrib import MaskablePPO

    model = MaskablePPO("MlpPolicy", env, n_steps=n_steps, batch_size=256, n_epochs=2, seed=0, device="cpu")
    start = time.perf_counter()
    model.learn(total_timesteps=timesteps)
    return model.num_timesteps / (time.perf_counter() - start)


def benchmark(num_envs: Sequence[int], seconds: float, ppo_steps: int) -> list[dict[str, Any]]:
    """Random play (and ``MaskablePPO`` when ``ppo_steps`` > 0) on both VecEnvs, one row per size."""
    builders: dict[str, Callable[[int], VecEnv]] = {
        "SB3VecEnv": lambda n: SB3VecEnv(DominoVectorEnv(n)),
        "DummyVecEnv": one_game_vec_env,
    }
    rows = []
    for n in num_envs:
        for name, build in builders.items():
            row = {
                "vec_env": name,
                "num_envs": n,
                "random_steps_per_s": random_steps_per_second(build(n), seconds),
            }
            if ppo_steps:
                row["maskable_ppo_steps_per_s"] = maskable_ppo_steps_per_second(build(n), ppo_steps)
            rows.append(row)
    return rows


def _print_rows(rows: Iterable[dict[str, Any]]) -> None:
    for row in rows:
        figures = "  ".join(f"{key} {value:,.0f}" for key, value in row.items() if key.endswith("_per_s"))
        print(f"{row['vec_env']:<12} num_envs {row['num_envs']:>5}  {figures}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="SB3VecEnv vs DummyVecEnv over the one-game env: steps/s.")
    parser.add_argument("--num-envs", nargs="+", type=int, default=[16, 256])
    parser.add_argument("--seconds", type=float, default=3.0, help="timed seconds of random play per row")
    parser.add_argument(
        "--ppo-steps", type=int, default=16_384, help="MaskablePPO timesteps per row (0: none)"
    )
    parser.add_argument(
        "--threads", type=int, default=1, help="torch threads (more spun idle and ran 15x slower on 2 cores)"
    )
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    _print_rows(benchmark(args.num_envs, args.seconds, args.ppo_steps))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
