"""DominoSoloEnv: Gymnasium's checker, rewards against the reference engine, hidden
information, illegal actions, opponent policies and the registered ids."""

from __future__ import annotations

import pickle
import re

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils import env_checker

import domino_env.envs.registration  # noqa: F401  (registers the ids)
from domino_env.engine.actions import action_to_move
from domino_env.engine.deals import random_deals
from domino_env.engine.errors import IllegalMoveError
from domino_env.engine.observation import observation_fields
from domino_env.engine.rules import CHANCE_OPENERS, PRESET_NAMES, Rules, all_configurations
from domino_env.engine.tiles import HIGH, LOW, NUM_TILES, tile_name
from domino_env.envs.gym_env import DominoSoloEnv
from domino_env.envs.policies import first_legal_policy, random_policy, sample_legal
from domino_env.tools.records import replay
from domino_env.tools.render import render_image


# -- helpers ---------------------------------------------------------------------------
def record_of(rules: Rules, deal: np.ndarray, opener: int | None = None) -> dict:
    """A game record (domino_env.tools.records) holding a deal: hands, boneyard and, if given, the opener."""
    h, p = rules.hand_size, rules.players
    record = {
        "preset": rules.name,
        "players": p,
        "hands": [[tile_name(t) for t in deal[s * h : (s + 1) * h]] for s in range(p)],
        "boneyard": [tile_name(t) for t in deal[p * h :]],
    }
    if opener is not None:
        record["opener"] = opener
    return record


def a_record(rules: Rules, seed: int) -> dict:
    deal = random_deals(rules, 1, np.random.default_rng(seed))[0]
    return record_of(rules, deal, 1 % rules.players if rules.first_opener in CHANCE_OPENERS else None)


def legal_from_observation(rules: Rules, obs: np.ndarray) -> tuple[np.ndarray, bool]:
    """The actions the observing seat could play, read off its own observation; and whether it opens."""
    fields = observation_fields(rules)
    hand = np.flatnonzero(obs[fields["tile_owner"]] == 1)
    legal = np.zeros(rules.num_actions, dtype=bool)
    opening = not obs[fields["tile_order"]].any()
    if opening:
        legal[hand] = True
        return legal, True
    for end, number in enumerate(obs[fields["end_number"]][: rules.num_ends]):
        fits = hand[(LOW[hand] == number) | (HIGH[hand] == number)]
        legal[end * NUM_TILES + fits] = True
    return legal, False


def check_opponent_call(rules: Rules, obs: np.ndarray, mask: np.ndarray) -> None:
    """An opponent policy sees its own seat-relative observation and its own legal moves."""
    fields = observation_fields(rules)
    assert obs.dtype == np.int16 and mask.dtype == bool and len(obs) == len(mask) >= 1
    for row, legal in zip(obs, mask, strict=True):
        assert row[fields["to_move"]][0] == 0  # the observer is the seat to move
        expected, opening = legal_from_observation(rules, row)
        if opening:  # a forced opener narrows the hand to one tile
            assert legal.any() and not (legal & ~expected).any()
        else:
            assert (legal == expected).all()


# -- Gymnasium's checker ---------------------------------------------------------------------
@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize(("preset", "players"), all_configurations())
def test_check_env_every_configuration(preset, players, capsys):
    """Gymnasium's own checker, unmodified and with no check skipped (it renders every mode)."""
    env = gym.make("domino_rl/Domino-v0", preset=preset, players=players, learner_seat="random")
    env_checker.check_env(env.unwrapped)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("render_mode", ["ansi", "rgb_array", "human"])
def test_check_env_through_make_with_rendering(preset, render_mode, capsys):
    env = gym.make("domino_rl/Domino-v0", preset=preset, render_mode=render_mode, episode="match")
    env_checker.check_env(env.unwrapped)


def test_make_vec_env_needs_no_kwargs():
    """SB3's make_vec_env asks for render_mode="rgb_array"; the frames are pictures of the table."""
    make_vec_env = pytest.importorskip("stable_baselines3.common.env_util").make_vec_env
    vec = make_vec_env("domino_rl/Domino-v0", n_envs=4)
    assert vec.reset().shape == (4, *DominoSoloEnv().observation_space.shape)
    frame = vec.env_method("render", indices=0)[0]
    assert frame.shape == (540, 960, 3) and frame.dtype == np.uint8
    vec.close()


def test_rgb_array_shows_only_the_learners_hand_and_human_prints(capsys):
    env = DominoSoloEnv("block", 2, render_mode="rgb_array", learner_seat=1)
    env.reset(seed=3)
    frame = env.render()
    assert frame.shape == (540, 960, 3)
    table = env._game.reference_round()
    assert (frame == render_image(table, 1)).all() and (frame != render_image(table, None)).any()
    human = DominoSoloEnv("block", 2, render_mode="human")
    human.reset(seed=3)
    assert "seat 0" in capsys.readouterr().out and human.render() is None


# -- opponent policies ----------------------------------------------------------------------
@pytest.mark.parametrize("width", [56, 112])
def test_random_policy_is_uniform_over_legal_actions_and_seeded(width):
    rng = np.random.default_rng(0)
    mask = rng.random((2000, width)) < 0.1
    mask[np.arange(2000), rng.integers(width, size=2000)] = True
    first, again = random_policy(5)(None, mask), random_policy(5)(None, mask)
    assert (first == again).all() and mask[np.arange(2000), first].all()
    row = np.zeros((1, width), dtype=bool)
    row[0, [3, 17, width - 1]] = True
    counts = np.bincount(random_policy(1)(None, np.repeat(row, 30000, axis=0)), minlength=width)
    assert set(np.flatnonzero(counts)) == {3, 17, width - 1}
    assert np.allclose(counts[[3, 17, width - 1]] / 30000, 1 / 3, atol=0.02)


def test_one_row_draws_the_same_action_as_the_batched_draw():
    mask = np.random.default_rng(1).random((500, 56)) < 0.2
    mask[:, 7] = True
    batched = sample_legal(mask, np.random.default_rng(2))
    rng = np.random.default_rng(2)
    # the batch draws all its random numbers at once; draw them the same way for one row at a time
    ranks = rng.random(500)
    singles = [np.flatnonzero(row)[int(u * row.sum())] for row, u in zip(mask, ranks, strict=True)]
    assert (batched == singles).all()
    assert sample_legal(mask[:1], np.random.default_rng(2))[0] == batched[0]


def test_first_legal_policy_and_rows_without_legal_actions():
    mask = np.zeros((3, 56), dtype=bool)
    mask[0, [9, 40]] = mask[1, 55] = mask[2, 0] = True
    assert first_legal_policy(None, mask).tolist() == [9, 55, 0]
    mask[1] = False
    for policy in (first_legal_policy, random_policy(0)):
        with pytest.raises(ValueError, match="no legal action"):
            policy(None, mask)
        with pytest.raises(ValueError, match="no legal action"):
            policy(None, mask[1:2])


def test_action_spaces_sample_legal_actions_and_pickle_as_plain_spaces():
    env = DominoSoloEnv("all_fives", 4)
    env.reset(seed=0)
    assert all(env.action_masks()[env.action_space.sample()] for _ in range(50))
    copy = pickle.loads(pickle.dumps(env.action_space))
    assert copy == env.action_space == gym.spaces.Discrete(112)
    assert 0 <= copy.sample() < 112


# -- registration and construction -------------------------------------------------------------
def test_make_builds_the_requested_preset_and_every_preset_has_an_id():
    env = gym.make("domino_rl/Domino-v0", preset="all_fives")
    assert env.unwrapped.rules == Rules.preset("all_fives")
    assert env.action_space.n == 28 * 4
    for name in PRESET_NAMES:
        title = name.title().replace("_", "")
        assert gym.make(f"domino_rl/{title}-v0").unwrapped.rules.name == name


def test_bad_arguments_are_reported():
    with pytest.raises(ValueError, match="learner_seat"):
        DominoSoloEnv("block", 2, learner_seat=2)
    with pytest.raises(ValueError, match="opponents"):
        DominoSoloEnv("block", 3, opponents=[first_legal_policy])
    with pytest.raises(ValueError, match="reward"):
        DominoSoloEnv("block", reward="score")
    with pytest.raises(ValueError, match="unknown preset"):
        DominoSoloEnv("blok")
    with pytest.raises(ValueError, match="render_mode"):
        DominoSoloEnv(render_mode="rgb")
    with pytest.raises(ValueError, match="illegal_action must be one of lose, raise; got 'ignore'"):
        DominoSoloEnv(illegal_action="ignore")
    with pytest.raises(ValueError, match="unknown reset options"):
        DominoSoloEnv().reset(options={"seat": 1})
    with pytest.raises(RuntimeError, match="reset"):
        DominoSoloEnv().step(0)


def test_rule_overrides_reach_the_rules():
    assert DominoSoloEnv("idrd_draw", 3, target=50).rules.target == 50


# -- playing ---------------------------------------------------------------------------------
def play_episode(env: DominoSoloEnv, obs: np.ndarray, rng: np.random.Generator, log: list | None = None):
    """Random legal learner moves to the end of an episode: (rewards, last info, observations seen).

    ``log`` gets each learner move as (action, opening) as it is played.
    """
    order = observation_fields(env.rules)["tile_order"]
    rewards, seen = [], [obs]
    mask = env.action_masks()
    while True:
        action = int(sample_legal(mask[None], rng)[0])
        if log is not None:
            log.append((action, not obs[order].any()))
        obs, reward, terminated, truncated, info = env.step(action)
        assert not truncated
        rewards.append(reward)
        if terminated:
            return rewards, info, seen
        seen.append(obs)
        mask = info["action_mask"].astype(bool)
        assert (mask == env.action_masks()).all() and mask.any()


class MoveLog:
    """An opponent policy playing random legal moves; checks every call and logs the moves."""

    def __init__(self, seed: int) -> None:
        self.env: DominoSoloEnv | None = None
        self.moves: list[tuple[int, bool]] = []
        self.inner = random_policy(seed)

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        env = self.env
        check_opponent_call(env.rules, obs, mask)
        game = env._game
        assert game.to_play != env.seat
        assert (obs[0] == game.observation(game.to_play)).all() and (mask[0] == game.legal_mask()).all()
        action = self.inner(obs, mask)
        self.moves.append((int(action[0]), not obs[0, observation_fields(env.rules)["tile_order"]].any()))
        return action


@pytest.mark.parametrize(("preset", "players"), all_configurations())
def test_rewards_add_up_to_the_reference_engines_round_points(preset, players):
    """Replaying the env's moves in the reference engine gives the points its rewards paid out."""
    rules = Rules.preset(preset, players)
    rng = np.random.default_rng(7)
    log = MoveLog(seed=3)
    env = log.env = DominoSoloEnv(preset, players, learner_seat="random", opponents=log)
    played = 0
    for seed in range(6):
        record = a_record(rules, seed)
        log.moves = []
        try:
            obs, info = env.reset(seed=seed, options={"deal": record})
        except ValueError as exc:  # a deal where the learner never gets a move is refused
            assert "never gets to move" in str(exc)
            continue
        seat = info["learner_seat"]
        rewards, info, _ = play_episode(env, obs, rng, log.moves)
        result = replay({**record, "moves": [action_to_move(a, opening) for a, opening in log.moves]})
        assert result["end"] is not None
        points = np.array(result["points"], dtype=float)
        own = rules.side_of(seat)
        assert sum(rewards) == pytest.approx(points[own] - points.mean())
        assert info["points"] == pytest.approx(points[own] - points.mean())
        winner = result["winner"]
        assert info["outcome"] == (0 if winner is None else 1 if winner == own else -1)
        assert info["learner_seat"] == seat
        played += 1
    assert played >= 4


def test_points_scored_before_the_learners_first_move_are_paid_with_its_first_reward():
    """All fives: the opponent opens 0-5 (5 points) before the learner has moved."""
    rules = Rules.preset("all_fives", 2)
    tiles = list(range(NUM_TILES))
    opponent = [5, 13, 19, 23, 26, 27, 12]  # 0-5 is its lowest tile, so first_legal opens with it
    learner = [t for t in tiles if t not in opponent][:7]
    rest = [t for t in tiles if t not in opponent and t not in learner]
    record = record_of(rules, np.array(learner + opponent + rest), opener=1)
    env = DominoSoloEnv("all_fives", 2, opponents=first_legal_policy)
    obs, _ = env.reset(options={"deal": record})
    assert list(obs[observation_fields(rules)["scores"]]) == [0, 5]
    rewards, info, _ = play_episode(env, obs, np.random.default_rng(0))
    assert sum(rewards) == pytest.approx(info["points"])
    assert rewards[0] <= -2.5 + 10  # the -2.5 is in it; the learner's own fives can add to it


def test_win_rewards_come_only_at_the_end():
    env = DominoSoloEnv("draw", 3, reward="win", learner_seat="random")
    obs, _ = env.reset(seed=4)
    rng = np.random.default_rng(4)
    outcomes = set()
    for _ in range(30):
        rewards, info, _ = play_episode(env, obs, rng)
        assert all(r == 0 for r in rewards[:-1])
        assert rewards[-1] == info["outcome"]
        outcomes.add(info["outcome"])
        obs, _ = env.reset()
    assert {-1, 1} <= outcomes


def test_match_episodes_run_to_the_target():
    env = DominoSoloEnv("block", 2, episode="match", target=30)
    obs, _ = env.reset(seed=2)
    rng = np.random.default_rng(2)
    for _ in range(5):
        rewards, info, seen = play_episode(env, obs, rng)
        scores = seen[-1][observation_fields(env.rules)["scores"]]
        assert sum(rewards) == pytest.approx(info["points"])
        assert np.sign(info["points"]) == info["outcome"] != 0  # 2 players: ahead at the end = won
        assert len(seen) > 7 or scores.any()  # more than one round, or points before the last one
        obs, _ = env.reset()


def test_the_last_observation_shows_the_finished_table():
    env = DominoSoloEnv("block", 3)
    fields = observation_fields(env.rules)
    obs, _ = env.reset(seed=8)
    for _ in range(10):
        last = obs
        while True:
            obs, _, terminated, _, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
            if terminated:
                break
            last = obs
        assert obs in env.observation_space and obs[fields["to_move"]][0] == -1
        assert np.count_nonzero(obs[fields["tile_order"]]) > np.count_nonzero(last[fields["tile_order"]])
        assert not info["action_mask"].any() and not env.action_masks().any()
        with pytest.raises(RuntimeError, match="reset"):
            env.step(0)
        obs, _ = env.reset()


def test_an_illegal_action_loses_by_default():
    """PettingZoo env()'s convention: the episode ends there with -1 (also out of range)."""
    for illegal_of in (lambda legal: int(np.flatnonzero(~legal)[0]), lambda legal: len(legal)):
        env = DominoSoloEnv("block", 2, reward="points")
        obs, info = env.reset(seed=0)
        after, reward, terminated, truncated, info = env.step(illegal_of(info["action_mask"].astype(bool)))
        assert (reward, terminated, truncated) == (-1.0, True, False)
        assert info["illegal_action"] and info["outcome"] == -1 and (after == obs).all()
        assert not info["action_mask"].any() and not env.action_masks().any()
        with pytest.raises(RuntimeError, match="reset"):
            env.step(0)


def test_illegal_actions_raise_and_change_nothing():
    env = DominoSoloEnv("block", 2, illegal_action="raise")
    obs, info = env.reset(seed=0)
    legal = info["action_mask"].astype(bool)
    illegal = int(np.flatnonzero(~legal)[0])
    opening = not obs[observation_fields(env.rules)["tile_order"]].any()
    with pytest.raises(IllegalMoveError, match=action_to_move(illegal, opening)):
        env.step(illegal)
    with pytest.raises(IllegalMoveError, match=re.escape("action 56 (outside")):
        env.step(env.rules.num_actions)
    assert (env.action_masks() == legal).all()
    assert (env._game.observation(env.seat) == obs).all()
    env.step(int(np.flatnonzero(legal)[0]))


@pytest.mark.parametrize(("preset", "players"), [("block", 4), ("spanish_pairs", 4), ("idrd_draw", 3)])
def test_each_opponent_policy_plays_only_its_own_seat(preset, players):
    calls = {offset: 0 for offset in range(1, players)}
    holder: list[DominoSoloEnv] = []

    def policy_for(offset: int):
        inner = random_policy(offset)

        def policy(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
            env = holder[0]
            assert (env._game.to_play - env.seat) % players == offset
            check_opponent_call(holder[0].rules, obs, mask)
            calls[offset] += 1
            return inner(obs, mask)

        return policy

    env = DominoSoloEnv(preset, players, learner_seat="random", opponents=[policy_for(k) for k in calls])
    holder.append(env)
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(10):
        play_episode(env, obs, rng)
        obs, _ = env.reset()
    assert all(count > 10 for count in calls.values())


def test_a_random_learner_seat_sees_itself_as_relative_seat_zero():
    env = DominoSoloEnv("idrd_block", 4, learner_seat="random")
    fields = observation_fields(env.rules)
    seats = set()
    obs, info = env.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(40):
        seats.add(info["learner_seat"])
        _, info, seen = play_episode(env, obs, rng)
        for o in seen:
            assert o[fields["to_move"]][0] == 0
            assert (o[fields["tile_owner"]] == 1).sum() == o[fields["hand_size"]][0]
        obs, info = env.reset()
    assert seats == {0, 1, 2, 3}


def test_reset_from_a_record_plays_its_deal_then_goes_back_to_random_deals():
    rules = Rules.preset("idrd_draw", 3)
    record = a_record(rules, 11)
    env = DominoSoloEnv("idrd_draw", 3, learner_seat=2)
    owner = observation_fields(rules)["tile_owner"]
    hand = sorted(record["hands"][2])
    rng = np.random.default_rng(0)
    for _ in range(2):
        obs, _ = env.reset(options={"deal": record})
        assert sorted(tile_name(t) for t in np.flatnonzero(obs[owner] == 1)) == hand
        play_episode(env, obs, rng)
    hands = set()
    for _ in range(3):
        obs, _ = env.reset()
        hands.add(tuple(np.flatnonzero(obs[owner] == 1)))
        play_episode(env, obs, rng)
    assert len(hands) == 3 and tuple(sorted(hand)) not in hands


def test_records_for_other_rules_are_refused_and_a_records_opener_is_kept():
    env = DominoSoloEnv("block", 2)
    with pytest.raises(ValueError, match="this environment plays"):
        env.reset(options={"deal": a_record(Rules.preset("draw", 2), 0)})
    # as in the reference engine, a record's opener opens with any tile, even where the rules force one
    env = DominoSoloEnv("idrd_block", 2, learner_seat=1)
    _, info = env.reset(options={"deal": {**a_record(Rules.preset("idrd_block", 2), 0), "opener": 1}})
    assert info["action_mask"][:NUM_TILES].sum() == 7


def test_render_shows_the_learners_view():
    env = DominoSoloEnv("all_fives", 3, render_mode="ansi")
    obs, _ = env.reset(seed=0)
    text = env.render()
    owner = obs[observation_fields(env.rules)["tile_owner"]]
    assert all(tile_name(t) in text for t in np.flatnonzero(owner == 1))
    assert "ends:" in text and DominoSoloEnv().render() is None


# -- hidden information -------------------------------------------------------------------------
class Script:
    """An opponent policy replaying a list of actions (or first legal ones, logged), noting public events."""

    def __init__(self, actions: list[int] | None = None) -> None:
        self.env: DominoSoloEnv | None = None
        self.actions, self.replaying = list(actions or []), actions is not None
        self.played: list[int] = []
        self.events: list[tuple] = []

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        game = self.env._game
        self.events.append((game.to_play, list(game.passes), list(game.draws)))
        action = self.actions.pop(0) if self.replaying else int(first_legal_policy(obs, mask)[0])
        self.played.append(action)
        return np.array([action])


def play_deal(rules: Rules, deal: np.ndarray, opener, learner_actions: list[int] | None, script: Script):
    """The learner's observations over one episode of a deal (random or replayed learner moves)."""
    env = script.env = DominoSoloEnv(rules.name, rules.players, opponents=script, illegal_action="raise")
    obs, _ = env.reset(options={"deal": record_of(rules, deal, opener)})
    rng = np.random.default_rng(0)
    seen, actions, replay_actions = [obs], [], list(learner_actions or [])
    while True:
        mask = env.action_masks()
        action = (
            replay_actions.pop(0) if learner_actions is not None else int(sample_legal(mask[None], rng)[0])
        )
        actions.append(action)
        obs, _, terminated, _, _ = env.step(action)
        if terminated:
            return seen, actions
        seen.append(obs)


@pytest.mark.parametrize(
    ("preset", "players"), [("block", 2), ("all_fives", 2), ("partnership", 4), ("draw", 3)]
)
def test_swapping_hidden_tiles_never_changes_the_learners_observations(preset, players):
    """Swap two tiles the learner never sees (other hands, boneyard) and replay the same moves.

    Swaps that change what an opponent could play (so the public game differs) are
    skipped; for the others every learner observation must be identical.
    """
    rules = Rules.preset(preset, players)
    opener = 1 if rules.first_opener in CHANCE_OPENERS else None
    compared = 0
    for seed in range(10):
        deal = random_deals(rules, 1, np.random.default_rng(seed))[0]
        first = Script()
        seen, learner_actions = play_deal(rules, deal, opener, None, first)
        placed = {a % NUM_TILES for a in first.played + learner_actions}
        h = rules.hand_size
        hidden = [i for i in range(h, NUM_TILES) if deal[i] not in placed]
        for i, j in [(i, j) for i in hidden for j in hidden if i < j and i // h != j // h]:
            swapped = deal.copy()
            swapped[[i, j]] = swapped[[j, i]]
            again = Script(first.played)
            try:
                seen_again, _ = play_deal(rules, swapped, opener, learner_actions, again)
            except (IllegalMoveError, IndexError, ValueError):
                continue  # the swap changed what an opponent could play: not the same game
            if again.events != first.events or len(seen_again) != len(seen):
                continue
            for a, b in zip(seen, seen_again, strict=True):
                assert (a == b).all()
            compared += 1
        if compared >= 5:
            return
    pytest.fail(f"only {compared} swaps left the public game unchanged")
