"""DominoVectorEnv: spaces, shapes, seeding, SAME_STEP autoreset, opponents, agreement with DominoSoloEnv.

Gymnasium (1.4) ships no checker for vector environments, so the checks it makes
for single ones (spaces, dtypes, reset/step determinism) are written out here.
"""

from __future__ import annotations

import gymnasium
import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space
from gymnasium.wrappers.vector import RecordEpisodeStatistics
from test_gym_env import check_opponent_call, record_of

import domino_env.envs.registration  # noqa: F401  (registers the ids)
from domino_env.engine.actions import action_to_move
from domino_env.engine.deals import random_deals
from domino_env.engine.errors import IllegalMoveError
from domino_env.engine.observation import observation_fields
from domino_env.engine.rules import CHANCE_OPENERS, PRESET_NAMES, PRESET_PLAYERS, Rules
from domino_env.envs.gym_env import DominoSoloEnv
from domino_env.envs.learner_batch import LearnerBatch
from domino_env.envs.policies import RandomPolicy, first_legal_policy, random_policy, sample_legal
from domino_env.envs.spaces import observation_space
from domino_env.envs.vector_env import DominoVectorEnv

FINAL_INFO_KEYS = {"action_mask", "learner_seat", "outcome", "points"}


def random_actions(envs: DominoVectorEnv, rng: np.random.Generator) -> np.ndarray:
    return sample_legal(envs.action_masks(), rng)


def test_make_vec_builds_the_native_vector_env_with_its_spaces():
    envs = gym.make_vec(
        "domino_rl/Domino-v0", num_envs=4096, vectorization_mode="vector_entry_point", preset="block"
    )
    assert isinstance(envs, DominoVectorEnv) and envs.num_envs == 4096
    assert envs.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    rules = Rules.preset("block")
    assert envs.single_observation_space == observation_space(rules)
    assert envs.observation_space == batch_space(observation_space(rules), 4096)
    assert envs.single_action_space == gym.spaces.Discrete(56)
    assert envs.action_space == gym.spaces.MultiDiscrete(np.full(4096, 56))
    obs, _ = envs.reset(seed=0)
    assert obs in envs.observation_space
    obs, *_ = envs.step(envs.action_space.sample())
    assert obs in envs.observation_space


@pytest.mark.parametrize(("preset", "players"), [("block", 2), ("all_fives", 3), ("spanish_pairs", 4)])
def test_reset_and_step_return_batches_of_the_declared_types(preset, players):
    n = 32
    envs = DominoVectorEnv(n, preset, players, learner_seat="random")
    rules = envs.rules
    obs, infos = envs.reset(seed=1)
    for _ in range(25):
        assert obs.shape == (n, envs.single_observation_space.shape[0]) and obs.dtype == np.int16
        assert obs in envs.observation_space
        assert infos["action_mask"].shape == (n, rules.num_actions) and infos["action_mask"].dtype == np.int8
        assert (infos["action_mask"].astype(bool) == envs.action_masks()).all()
        assert envs.action_masks().any(axis=1).all()
        assert infos["_action_mask"].all() and infos["_learner_seat"].all()
        assert ((infos["learner_seat"] >= 0) & (infos["learner_seat"] < players)).all()
        obs, rewards, terminated, truncated, infos = envs.step(envs.action_space.sample())
        assert rewards.shape == (n,) and rewards.dtype == np.float64
        assert terminated.shape == truncated.shape == (n,)
        assert terminated.dtype == truncated.dtype == bool and not truncated.any()


def test_seeded_resets_are_reproducible():
    def run(seed: int) -> list:
        envs = DominoVectorEnv(16, "draw", 3, learner_seat="random")
        out = [envs.reset(seed=seed)]
        rng = np.random.default_rng(0)
        for _ in range(30):
            out.append(envs.step(random_actions(envs, rng)))
        out.append(envs.reset())
        out.append(envs.step(random_actions(envs, rng)))
        return out

    first, second, other = run(5), run(5), run(6)
    for a, b in zip(first, second, strict=True):
        assert gym.utils.env_checker.data_equivalence(a, b, exact=True)
    assert not (first[0][0] == other[0][0]).all()


def test_same_step_autoreset_returns_the_next_episode_and_the_final_observation():
    n = 64
    envs = DominoVectorEnv(n, "block", 2)
    rules = envs.rules
    fields = observation_fields(rules)
    obs, _ = envs.reset(seed=2)
    rng = np.random.default_rng(2)
    returns, ended = np.zeros(n), 0
    for _ in range(60):
        previous = obs
        obs, rewards, terminated, _, infos = envs.step(random_actions(envs, rng))
        returns += rewards
        if not terminated.any():
            assert "final_obs" not in infos and "final_info" not in infos
            continue
        done = np.flatnonzero(terminated)
        assert (infos["_final_obs"] == terminated).all() and (infos["_final_info"] == terminated).all()
        final = infos["final_obs"]
        assert final.dtype == object and all(final[i] is None for i in np.flatnonzero(~terminated))
        for i in done:
            assert (final[i] == previous[i]).all()  # the learner's last decision of that episode
        info = infos["final_info"]
        assert set(info) == FINAL_INFO_KEYS | {f"_{k}" for k in FINAL_INFO_KEYS}
        assert all((info[f"_{k}"] == terminated).all() for k in FINAL_INFO_KEYS)
        assert np.allclose(info["points"][done], returns[done])
        assert set(info["outcome"][done]) <= {-1, 0, 1} and not info["action_mask"].any()
        # the observation returned is the new episode's first decision: nothing played, nothing scored
        assert (obs[done][:, fields["hand_size"].start] == rules.hand_size).all()
        assert not obs[done][:, fields["scores"]].any()
        returns[done] = 0
        ended += len(done)
    assert ended > n


@pytest.mark.skipif(
    gymnasium.__version__ < "1.3", reason="Gymnasium 1.2.2's wrapper miscounts SAME_STEP: use next_step there"
)
def test_episode_statistics_of_gymnasiums_wrapper_match_the_final_info():
    """Gymnasium's RecordEpisodeStatistics reads SAME_STEP as we declare it."""
    envs = RecordEpisodeStatistics(DominoVectorEnv(32, "all_fives", 2))
    envs.reset(seed=3)
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(60):
        *_, terminated, _, infos = envs.step(random_actions(envs.unwrapped, rng))
        if terminated.any():
            assert np.allclose(infos["episode"]["r"][terminated], infos["final_info"]["points"][terminated])
            checked += terminated.sum()
    assert checked > 20


@pytest.mark.parametrize("reward", ["points", "win"])
def test_next_step_autoreset_gives_gymnasiums_wrapper_the_right_returns(reward):
    """With autoreset_mode="next_step" the wrapper is right on every Gymnasium (1.2.2 included)."""
    envs = RecordEpisodeStatistics(
        DominoVectorEnv(32, "all_fives", 2, reward=reward, autoreset_mode="next_step")
    )
    assert envs.unwrapped.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    envs.reset(seed=3)
    rng = np.random.default_rng(3)
    returns, restarting, checked = np.zeros(32), np.zeros(32, dtype=bool), 0
    for _ in range(80):
        _, rewards, terminated, _, infos = envs.step(random_actions(envs.unwrapped, rng))
        assert not rewards[restarting].any() and not terminated[restarting].any()
        returns += rewards
        if terminated.any():
            expected = infos["points"] if reward == "points" else infos["outcome"]
            assert np.allclose(infos["episode"]["r"][terminated], expected[terminated])
            assert np.allclose(returns[terminated], expected[terminated])
            returns[terminated] = 0.0
            checked += terminated.sum()
        restarting = terminated
    assert checked > 20
    with pytest.raises(ValueError, match="autoreset_mode must be one of 'same_step', 'next_step'; got 'so"):
        DominoVectorEnv(2, autoreset_mode="sometimes")


def test_win_rewards_are_the_outcomes_at_episode_ends():
    envs = DominoVectorEnv(32, "idrd_block", 3, reward="win")
    envs.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in range(40):
        _, rewards, terminated, _, infos = envs.step(random_actions(envs, rng))
        assert not rewards[~terminated].any()
        if terminated.any():
            assert (rewards[terminated] == infos["final_info"]["outcome"][terminated]).all()


@pytest.mark.parametrize(
    ("preset", "players"), [("all_fives", 3), ("muggins", 2), ("spanish_pairs", 4), ("idrd_draw", 2)]
)
def test_the_batched_engine_plays_like_the_single_game_env(preset, players):
    """Same deals, opponents and learner moves: the core-based batch and the Game-based env agree."""
    rules = Rules.preset(preset, players)
    chance = rules.first_opener in CHANCE_OPENERS
    compared = 0
    for seed in range(8):
        deal = random_deals(rules, 1, np.random.default_rng(seed))[0]
        opener = seed % players if chance else None
        solo = DominoSoloEnv(preset, players, learner_seat=1, opponents=first_legal_policy)
        try:
            obs, _ = solo.reset(options={"deal": record_of(rules, deal, opener)})
        except ValueError:  # the learner would never move in this deal
            continue
        batch = LearnerBatch(rules, 1, learner_seat=1, opponents=first_legal_policy)
        batch.core.reset(deals=deal[None], openers=None if opener is None else np.array([opener]))
        vec_obs, vec_mask = batch.reset()  # restarts the core's deal list
        rng = np.random.default_rng(seed)
        while True:
            assert (obs == vec_obs[0]).all() and (solo.action_masks() == vec_mask[0]).all()
            action = int(sample_legal(vec_mask, rng)[0])
            last = obs
            obs, reward, terminated, _, info = solo.step(action)
            step = batch.step(np.array([action]))
            vec_obs, vec_mask = step.obs, step.mask
            assert reward == pytest.approx(step.reward[0]) and terminated == step.done[0]
            if terminated:
                assert (step.final_obs[0] == last).all()
                assert info["outcome"] == step.outcome[0] and info["points"] == pytest.approx(step.points[0])
                break
        compared += 1
    assert compared >= 4


def test_illegal_actions_raise_naming_the_game_and_move():
    envs = DominoVectorEnv(8, "block", 2)
    obs, _ = envs.reset(seed=0)
    actions = first_legal_policy(obs, envs.action_masks())
    mask = envs.action_masks()
    bad = int(np.flatnonzero(~mask[5])[0])
    actions[5] = bad
    opening = not obs[5, observation_fields(envs.rules)["tile_order"]].any()
    with pytest.raises(IllegalMoveError, match=f"game 5: .*{action_to_move(bad, opening)}"):
        envs.step(actions)
    assert (envs.action_masks() == mask).all()


def test_one_batched_call_per_round_trip_for_the_games_whose_opponents_are_to_move():
    holder: list[DominoVectorEnv] = []
    sizes: list[int] = []
    inner = random_policy(0)

    def policy(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        games = holder[0]._batch
        waiting = (games.core.to_play - games.seats) % games.rules.players != 0
        assert len(obs) == waiting.sum()
        assert (mask == games.core.legal_mask()[waiting]).all()
        check_opponent_call(games.rules, obs, mask)
        sizes.append(len(obs))
        return inner(obs, mask)

    envs = DominoVectorEnv(64, "block", 4, learner_seat="random", opponents=policy)
    holder.append(envs)
    envs.reset(seed=6)
    rng = np.random.default_rng(6)
    for _ in range(10):
        envs.step(random_actions(envs, rng))
    assert max(sizes) > 32 and min(sizes) < 8


def test_a_random_policy_playing_every_other_seat_is_played_inside_the_core(monkeypatch):
    """The default opponents (and any one RandomPolicy for all seats) never see an observation."""

    def refuse(self, obs, mask):
        raise AssertionError("a RandomPolicy opponent was called with observations")

    monkeypatch.setattr(RandomPolicy, "__call__", refuse)
    for opponents in (None, random_policy(2)):
        envs = DominoVectorEnv(64, "all_fives", 3, learner_seat="random", opponents=opponents)
        envs.reset(seed=2)
        rng = np.random.default_rng(2)
        episodes = 0
        for _ in range(40):
            _, _, terminated, _, infos = envs.step(random_actions(envs, rng))
            assert infos["action_mask"].any(axis=1).all()
            episodes += terminated.sum()
        assert episodes > 20


def test_per_seat_opponents_only_play_their_seats():
    holder: list[DominoVectorEnv] = []
    seen: dict[int, int] = {}

    def policy_for(offset: int):
        inner = random_policy(offset)

        def policy(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
            games = holder[0]._batch
            to_move = (games.core.to_play - games.seats) % games.rules.players
            assert len(obs) == (to_move == offset).sum()
            check_opponent_call(games.rules, obs, mask)
            seen[offset] = seen.get(offset, 0) + len(obs)
            return inner(obs, mask)

        return policy

    envs = DominoVectorEnv(
        64, "partnership", 4, learner_seat="random", opponents=[policy_for(k) for k in (1, 2, 3)]
    )
    holder.append(envs)
    envs.reset(seed=7)
    rng = np.random.default_rng(7)
    seats = set()
    for _ in range(10):
        _, _, _, _, infos = envs.step(random_actions(envs, rng))
        seats.update(infos["learner_seat"].tolist())
    assert sorted(seen) == [1, 2, 3] and seats == {0, 1, 2, 3}


def test_a_random_learner_seat_is_drawn_for_every_episode():
    envs = DominoVectorEnv(32, "block", 3, learner_seat="random")
    _, infos = envs.reset(seed=8)
    rng = np.random.default_rng(8)
    seats = infos["learner_seat"]
    seen = [{seat} for seat in seats]
    for _ in range(80):
        _, _, terminated, _, infos = envs.step(random_actions(envs, rng))
        new = infos["learner_seat"]
        assert (new[~terminated] == seats[~terminated]).all()
        if terminated.any():
            assert (infos["final_info"]["learner_seat"][terminated] == seats[terminated]).all()
        for game, seat in enumerate(new):
            seen[game].add(seat)
        seats = new
    assert sum(len(s) == 3 for s in seen) > 16


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_observations_stay_inside_the_observation_space(preset: str) -> None:
    for players in PRESET_PLAYERS[preset]:
        envs = DominoVectorEnv(128, preset, players)
        obs, _ = envs.reset(seed=0)
        space = envs.single_observation_space
        for _ in range(120):  # several rounds per game: full hands, long draws, scores
            assert ((obs >= space.low) & (obs <= space.high)).all()
            obs, *_ = envs.step(envs.action_space.sample())
