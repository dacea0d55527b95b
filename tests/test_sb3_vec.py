"""``SB3VecEnv``: SB3's VecEnv contracts over the native vector env, and MaskablePPO training on it."""

from __future__ import annotations

import numpy as np
import pytest

from domino_env import DominoVectorEnv

pytest.importorskip("stable_baselines3")
sb3_contrib = pytest.importorskip("sb3_contrib")

from stable_baselines3.common.vec_env import VecEnv, VecMonitor  # noqa: E402

from domino_env.envs.sb3 import SB3VecEnv, benchmark  # noqa: E402

N = 8


def legal_actions(env: SB3VecEnv) -> np.ndarray:
    return np.stack(env.env_method("action_masks")).argmax(axis=1)  # the first legal action of each game


def test_spaces_reset_and_masks():
    env = SB3VecEnv(DominoVectorEnv(N, preset="all_fives", players=3))
    assert isinstance(env, VecEnv) and env.num_envs == N
    assert env.observation_space == env.env.single_observation_space
    assert env.action_space == env.env.single_action_space
    obs = env.reset()
    assert obs.shape == (N, *env.observation_space.shape) and obs.dtype == np.int16
    masks = np.stack(env.env_method("action_masks"))
    assert masks.shape == (N, env.action_space.n) and masks.dtype == bool
    assert masks.any(axis=1).all()
    np.testing.assert_array_equal(masks, env.action_masks())
    np.testing.assert_array_equal(np.stack(env.env_method("action_masks", indices=[1, 3])), masks[[1, 3]])
    assert env.has_attr("action_masks") and env.get_attr("rules", indices=2) == [env.env.rules]
    assert env.env_is_wrapped(VecMonitor) == [False] * N
    with pytest.raises(AttributeError, match="knows only 'action_masks'"):
        env.env_method("render")


def test_seeded_resets_repeat():
    env = SB3VecEnv(DominoVectorEnv(N))
    env.seed(7)
    first = env.reset()
    env.reset()  # the seed is used once, as in SB3
    env.seed(7)
    np.testing.assert_array_equal(env.reset(), first)


def test_step_contract_and_terminal_observation():
    env = SB3VecEnv(DominoVectorEnv(N))
    env.seed(0)
    env.reset()
    ended = 0
    for _ in range(60):
        obs, rewards, dones, infos = env.step(legal_actions(env))
        assert obs.shape == (N, *env.observation_space.shape)
        assert rewards.shape == (N,) and rewards.dtype == np.float32
        assert dones.shape == (N,) and dones.dtype == bool
        assert isinstance(infos, list) and len(infos) == N
        for game in np.flatnonzero(dones):
            info = infos[game]
            assert info["terminal_observation"].shape == env.observation_space.shape
            assert info["TimeLimit.truncated"] is False and info["outcome"] in (-1, 0, 1)
            ended += 1
        assert all(not infos[game] for game in np.flatnonzero(~dones))
    assert ended > 0


def test_maskable_ppo_learns_on_the_batched_core():
    env = VecMonitor(SB3VecEnv(DominoVectorEnv(16, preset="block")))
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy", env, n_steps=32, batch_size=128, n_epochs=2, seed=0, device="cpu"
    )
    model.learn(total_timesteps=1024)
    assert model.num_timesteps >= 1024
    assert np.isfinite(model.logger.name_to_value["train/loss"])
    assert len(model.ep_info_buffer) > 0  # VecMonitor saw whole episodes
    obs = env.reset()
    actions, _ = model.predict(obs, action_masks=np.stack(env.env_method("action_masks")), deterministic=True)
    assert env.unwrapped.action_masks()[np.arange(16), actions].all()


def test_benchmark_rows():
    rows = benchmark([2], seconds=0.05, ppo_steps=0)
    assert [row["vec_env"] for row in rows] == ["SB3VecEnv", "DummyVecEnv"]
    assert all(row["random_steps_per_s"] > 0 for row in rows)
