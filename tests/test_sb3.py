"""sb3-contrib's MaskablePPO trains on DominoSoloEnv as it is: masks come from ``action_masks()``."""

from __future__ import annotations

import numpy as np
import pytest

from domino_env.envs.gym_env import DominoSoloEnv

sb3_contrib = pytest.importorskip("sb3_contrib")


def test_maskable_ppo_trains_without_a_wrapper(tmp_path):
    env = DominoSoloEnv("all_fives", players=3, learner_seat="random")
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy", env, n_steps=256, batch_size=64, n_epochs=2, seed=0, device="cpu"
    )
    model.learn(total_timesteps=3072)
    assert model.num_timesteps >= 3072
    obs, _ = env.reset(seed=1)
    for _ in range(30):  # the trained policy, masked, only ever picks legal actions
        action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
        assert env.action_masks()[action]
        obs, _, terminated, _, _ = env.step(int(action))
        if terminated:
            obs, _ = env.reset()
    assert np.isfinite(model.logger.name_to_value["train/loss"])
    model.save(tmp_path / "model.zip")  # the spaces pickle, and match the env again on loading
    sb3_contrib.MaskablePPO.load(tmp_path / "model.zip", env=env, device="cpu")
