"""The PettingZoo AEC env: PettingZoo's own API and seed tests, records, hidden information,
illegal moves, rewards, skip_forced, determinism and the parallel form."""

from __future__ import annotations

import functools
import random
import zlib

import numpy as np
import pytest
from pettingzoo import AECEnv, ParallelEnv, make
from pettingzoo.test import api_test, parallel_api_test, seed_test

from domino_env.engine.errors import IllegalMoveError
from domino_env.engine.game import Game
from domino_env.engine.observation import observation_fields
from domino_env.engine.outcome import relative_points, relative_points_of
from domino_env.engine.rules import END_NAMES, Rules, all_configurations
from domino_env.engine.tiles import parse_tile, tile_index, tile_name
from domino_env.envs.pettingzoo_env import ENV_ID, env, parallel_env, raw_env
from domino_env.tools.records import replay

CONFIGS = all_configurations()
# Dict observations make api_test say so (its allow-list names only PettingZoo's own envs).
DICT_OBSERVATION_WARNINGS = [
    "ignore:Observation is not a NumPy array",
    "ignore:Observation space for each agent probably should be",
]


def legal_actions(observation: dict) -> list[int]:
    return np.flatnonzero(observation["action_mask"]).tolist()


def hashed_policy(observation: dict) -> int:
    """A deterministic pseudo-random legal action, a function of the observation only."""
    legal = legal_actions(observation)
    return legal[zlib.crc32(observation["observation"].tobytes()) % len(legal)]


def run_episode(aec: AECEnv, policy, seed: int | None = None) -> dict:
    """Play one episode: each agent's return, the decisions asked, and (agent, observation, action)s."""
    aec.reset(seed=seed)
    returns = dict.fromkeys(aec.possible_agents, 0.0)
    trace, decisions = [], 0
    for agent in aec.agent_iter():
        observation, reward, terminated, truncated, _ = aec.last()
        returns[agent] += reward
        if terminated or truncated:
            aec.step(None)
            continue
        decisions += 1
        action = policy(observation)
        trace.append((agent, observation["observation"].tobytes(), action))
        aec.step(action)
    return {"returns": returns, "trace": trace, "decisions": decisions}


# -- PettingZoo's own tests --------------------------------------------------------------------
@pytest.mark.filterwarnings(*DICT_OBSERVATION_WARNINGS)
@pytest.mark.parametrize(("preset", "players"), CONFIGS)
def test_pettingzoo_api_and_seed_tests(preset: str, players: int) -> None:
    api_test(env(preset=preset, players=players), num_cycles=40)
    seed_test(functools.partial(env, preset=preset, players=players), num_cycles=40)


@pytest.mark.filterwarnings(*DICT_OBSERVATION_WARNINGS)
@pytest.mark.parametrize(
    "kwargs",
    [
        {"preset": "muggins", "episode": "match", "reward": "win"},
        {"preset": "spanish_pairs", "players": 4, "episode": "match", "skip_forced": True},
        {"preset": "all_fives", "players": 3, "skip_forced": True, "target": 60},
    ],
)
def test_pettingzoo_api_test_in_match_mode_and_with_options(kwargs: dict) -> None:
    api_test(env(**kwargs), num_cycles=300)
    api_test(raw_env(**kwargs), num_cycles=50)
    seed_test(functools.partial(env, **kwargs), num_cycles=100)


@pytest.mark.parametrize(("preset", "players"), [("block", 2), ("partnership", 4), ("draw", 3)])
def test_parallel_env_passes_the_parallel_api_test(preset: str, players: int) -> None:
    parallel_api_test(parallel_env(preset=preset, players=players), num_cycles=200)


def test_parallel_env_plays_a_whole_game_with_the_active_agent() -> None:
    par = parallel_env(preset="all_fives", players=3, episode="match", target=300)
    observations, infos = par.reset(seed=5)
    chooser, totals, steps = random.Random(5), dict.fromkeys(par.possible_agents, 0.0), 0
    active = next(a for a, obs in observations.items() if obs["action_mask"].any())
    while par.agents:
        assert [a for a, obs in observations.items() if obs["action_mask"].any()] == [active]
        actions = dict.fromkeys(par.agents, 0) | {active: chooser.choice(legal_actions(observations[active]))}
        observations, rewards, terminations, _, infos = par.step(actions)
        for agent, reward in rewards.items():
            totals[agent] += reward
        steps += 1
        active = infos[active]["active_agent"]
    assert steps > 20 and len(par.unwrapped.game.results) > 1 and all(terminations.values())
    assert abs(sum(totals.values())) < 1e-9 and any(totals.values())


def test_registered_with_pettingzoo_make() -> None:
    aec = make("aec", ENV_ID, preset="draw", players=3)
    aec.reset(seed=0)
    assert aec.agents == ["player_0", "player_1", "player_2"]
    assert isinstance(aec.unwrapped, raw_env)
    assert isinstance(make("parallel", ENV_ID, preset="block"), ParallelEnv)


def test_spaces_are_the_same_objects_and_describe_the_observation() -> None:
    aec = env(preset="partnership", players=4)
    aec.reset(seed=1)
    agent = aec.agent_selection
    assert aec.observation_space(agent) is aec.observation_space(agent)
    assert aec.action_space(agent) is aec.action_space(agent)
    assert aec.action_space(agent).n == 56
    space = aec.observation_space(agent)["observation"]
    assert space.shape == (129,) and space.dtype == np.int16
    observation = aec.observe(agent)
    assert observation["observation"].dtype == np.int16 and observation["action_mask"].dtype == np.int8
    assert aec.observation_space(agent).contains(observation)
    assert legal_actions(observation) == [27]  # 6-6 opens
    other = next(a for a in aec.agents if a != agent)
    assert not aec.observe(other)["action_mask"].any()


def test_observations_are_the_reference_observations() -> None:
    aec = raw_env(preset="all_fives", players=4)
    aec.reset(seed=3)
    chooser = random.Random(3)
    while not aec.game.over:
        reference = aec.game.reference_round()
        for seat, agent in enumerate(aec.possible_agents):
            assert np.array_equal(aec.observe(agent)["observation"], reference.observation(seat))
        seat = aec.possible_agents.index(aec.agent_selection)
        assert legal_actions(aec.observe(aec.agent_selection)) == reference.legal_actions()
        assert reference.to_play == seat
        aec.step(chooser.choice(reference.legal_actions()))


# -- records --------------------------------------------------------------------------------------
def played_record(preset: str, players: int, seed: int) -> dict:
    """A whole random round as a record (every move listed)."""
    game, chooser = Game(Rules.preset(preset, players), seed=seed), random.Random(seed)
    while not game.over:
        game.step(chooser.choice(game.legal_actions()))
    return game.round_record()


def check_against_replay(aec: raw_env, record: dict) -> None:
    """The env's position against replay(record): to play, legal moves, ends, scores."""
    summary = replay(record)
    observation = aec.observe(aec.agent_selection)
    assert aec.agent_selection == f"player_{summary['to_play']}"
    assert [aec.action_to_move(a) for a in legal_actions(observation)] == summary["legal"]
    numbers = observation["observation"][observation_fields(aec.rules)["end_number"]]
    assert {name: int(n) for name, n in zip(END_NAMES, numbers, strict=True) if n >= 0} == summary["ends"]
    assert aec.game.scores == summary["scores"]


@pytest.mark.parametrize(
    ("preset", "players", "seed"), [("all_fives", 3, 1), ("draw", 2, 2), ("spanish_pairs", 4, 3)]
)
def test_reset_from_a_record_reproduces_replay_move_for_move(preset: str, players: int, seed: int) -> None:
    record = played_record(preset, players, seed)
    moves = record["moves"]
    aec = raw_env(preset=preset, players=players)
    for k in range(len(moves)):
        prefix = {**record, "moves": moves[:k]}
        aec.reset(options={"deal": prefix})
        check_against_replay(aec, prefix)
    aec.reset(options={"deal": {**record, "moves": []}})
    for k, move in enumerate(moves[:-1], start=1):
        aec.step(aec.move_to_action(move))
        check_against_replay(aec, {**record, "moves": moves[:k]})
    aec.step(aec.move_to_action(moves[-1]))
    assert all(aec.terminations.values())
    assert aec.game.results[-1].scores == tuple(replay(record)["scores"])


def test_record_reset_errors_are_clear() -> None:
    record = played_record("block", 2, 0)
    aec = raw_env(preset="block", players=2)
    with pytest.raises(ValueError, match="end the round"):
        aec.reset(options={"deal": record})
    with pytest.raises(ValueError, match="rules differ"):
        raw_env(preset="block", players=2, target=50).reset(options={"deal": {**record, "moves": []}})
    with pytest.raises(ValueError, match="unknown record key"):
        aec.reset(options={"deal": {**record, "mvoes": []}})


# -- hidden information ----------------------------------------------------------------------------
def public_events(game: Game) -> tuple:
    """Everything public that a move sequence does not fix: who is to play, draws and passes so far."""
    return game.to_play, tuple(game.draws), tuple(game.passes)


def hidden_swap(record: dict, fixed: set[str], rng: random.Random) -> dict | None:
    """The record's deal with two tiles not in ``fixed`` swapped between places (hands, boneyard);
    None when no two such tiles lie in different places."""
    places = [*record["hands"], record["boneyard"]]
    spots = [(p, i) for p, tiles in enumerate(places) for i, tile in enumerate(tiles) if tile not in fixed]
    boneyard = len(places) - 1
    pairs = [(a, b) for a in spots for b in spots if a < b and (a[0] != b[0] or a[0] == boneyard)]
    if not pairs:
        return None
    (p, i), (q, j) = rng.choice(pairs)
    places = [list(tiles) for tiles in places]
    places[p][i], places[q][j] = places[q][j], places[p][i]
    return {**record, "hands": places[:-1], "boneyard": places[-1], "moves": []}


@pytest.mark.parametrize(
    ("preset", "players"), [("block", 2), ("draw", 3), ("all_fives", 4), ("partnership", 4), ("idrd_draw", 2)]
)
def test_no_observation_changes_when_unseen_tiles_are_swapped(preset: str, players: int) -> None:
    """Replay a round on a deal where two tiles the observer never sees changed places: while the
    public events are the same, the observer's observations must be identical."""
    rng, compared, swaps = random.Random(players), 0, 0
    for trial in range(30):
        record = played_record(preset, players, seed=100 + trial)
        observer = rng.randrange(players)
        agent = f"player_{observer}"
        first = raw_env(preset=preset, players=players)
        first.reset(options={"deal": {**record, "moves": []}})
        held, history = set(), []
        for move in record["moves"]:
            held |= {t for t in range(28) if first.game.hands[observer] >> t & 1}
            history.append((first.observe(agent)["observation"], public_events(first.game)))
            first.step(first.move_to_action(move))
        placed = {tile_name(parse_tile(m.split(":")[0])) for m in record["moves"]}
        swapped = hidden_swap(record, placed | {tile_name(t) for t in held}, rng)
        if swapped is None:
            continue
        second = raw_env(preset=preset, players=players)
        try:
            second.reset(options={"deal": swapped})
        except ValueError:  # the swap gave a seat more doubles than the rules allow
            continue
        swaps += 1
        assert second.game.deal != first.game.deal
        for (observation, events), move in zip(history, record["moves"], strict=True):
            if public_events(second.game) != events:
                break  # the swap changed a draw or a pass: the positions differ publicly from here on
            assert np.array_equal(second.observe(agent)["observation"], observation)
            compared += 1
            second.step(second.move_to_action(move))
    assert swaps >= 20 and compared >= 150


# -- illegal actions -----------------------------------------------------------------------------------
@pytest.mark.filterwarnings(*DICT_OBSERVATION_WARNINGS)
def test_illegal_action_through_env_ends_the_episode_with_the_illegal_reward() -> None:
    aec = env(preset="block", players=3)
    aec.reset(seed=2)
    offender = aec.agent_selection
    observation = aec.observe(offender)
    illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
    aec.step(illegal)
    assert all(aec.terminations.values())
    assert aec.rewards == {a: (-1.0 if a == offender else 0.0) for a in aec.possible_agents}
    returns = run_episode_tail(aec)
    assert returns == {a: (-1.0 if a == offender else 0.0) for a in aec.possible_agents}
    aec.reset(seed=2)
    with pytest.raises(AssertionError, match="not in action space"):
        aec.step(10_000)


def run_episode_tail(aec: AECEnv) -> dict:
    """Step the terminated agents out; what last() returns to each."""
    returns = {}
    for agent in aec.agent_iter():
        _, reward, terminated, truncated, _ = aec.last()
        assert terminated or truncated
        returns[agent] = reward
        aec.step(None)
    return returns


def test_illegal_action_through_raw_env_raises_and_changes_nothing() -> None:
    aec = raw_env(preset="draw", players=2)
    aec.reset(seed=4)
    aec.step(legal_actions(aec.observe(aec.agent_selection))[0])
    agent, seat = aec.agent_selection, aec.game.to_play
    before = {a: aec.observe(a)["observation"].tobytes() for a in aec.agents}
    legal = [aec.action_to_move(a) for a in legal_actions(aec.observe(agent))]
    illegal = next(a for a in range(aec.rules.num_actions) if aec.action_to_move(a) not in legal)
    with pytest.raises(IllegalMoveError) as info:
        aec.step(illegal)
    message = str(info.value)
    assert aec.action_to_move(illegal) in message and f"seat {seat}" in message
    assert ", ".join(legal) in message
    with pytest.raises(IllegalMoveError, match="outside"):
        aec.step(500)
    with pytest.raises(ValueError, match="must give an action"):
        aec.step(None)
    assert aec.agent_selection == agent
    assert {a: aec.observe(a)["observation"].tobytes() for a in aec.agents} == before


# -- rewards --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("preset", "players", "episode"),
    [("all_fives", 3, "match"), ("partnership", 4, "match"), ("muggins", 2, "match"), ("block", 4, "round")],
)
def test_points_rewards_are_zero_sum_and_follow_the_round_points(
    preset: str, players: int, episode: str
) -> None:
    aec = raw_env(preset=preset, players=players, episode=episode)
    rules, chooser = aec.rules, random.Random(players)
    paid_rounds = 0
    for seed in range(3):
        aec.reset(seed=seed)
        while not aec.game.over:
            rounds_before = len(aec.game.results)
            aec.step(chooser.choice(legal_actions(aec.observe(aec.agent_selection))))
            ended = aec.game.results[rounds_before:]
            expected = dict.fromkeys(aec.possible_agents, 0.0)
            for end in ended:
                mean = sum(end.points) / len(end.points)
                for seat, agent in enumerate(aec.possible_agents):
                    expected[agent] += end.points[rules.side_of(seat)] - mean
            assert aec.rewards == pytest.approx(expected)
            assert sum(aec.rewards.values()) == pytest.approx(0.0)
            if rules.teams:
                assert aec.rewards["player_0"] == aec.rewards["player_2"]
            paid_rounds += bool(ended) and any(aec.rewards.values())
    assert paid_rounds >= 3


@pytest.mark.parametrize(
    ("preset", "players", "episode"), [("partnership", 4, "match"), ("block", 3, "round")]
)
def test_win_rewards_come_at_the_end_of_the_episode(preset: str, players: int, episode: str) -> None:
    """+1 to the winning side's seats, -1 to the others, 0 to all when nobody wins (a void round)."""
    aec = raw_env(preset=preset, players=players, episode=episode, reward="win")
    sides = [aec.rules.side_of(s) for s in range(players)]
    wanted = {False} if episode == "match" else {False, True}
    outcomes = set()
    for seed in range(400):
        result = run_episode(aec, hashed_policy, seed=seed)
        last = aec.game.results[-1]
        winner = last.winner if episode == "round" else last.game_winner
        expected = [0.0 if winner is None else 1.0 if side == winner else -1.0 for side in sides]
        assert list(result["returns"].values()) == expected
        outcomes.add(winner is None)
        if seed >= 20 and outcomes == wanted:
            break
    assert outcomes == wanted


def test_win_rewards_are_zero_before_the_end_of_a_match() -> None:
    aec = raw_env(preset="all_fives", players=2, episode="match", reward="win")
    aec.reset(seed=1)
    chooser, rounds = random.Random(1), 0
    while not aec.game.over:
        aec.step(chooser.choice(legal_actions(aec.observe(aec.agent_selection))))
        if not aec.game.over:
            assert not any(aec.rewards.values())
        rounds = len(aec.game.results)
    assert rounds > 1 and sorted(aec.rewards.values()) == [-1.0, 1.0]


# -- skip_forced, determinism -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("preset", "players", "episode"), [("partnership", 4, "match"), ("draw", 2, "round")]
)
def test_skip_forced_asks_fewer_decisions_and_changes_no_outcome(
    preset: str, players: int, episode: str
) -> None:
    asked = skipped = 0
    for seed in range(10):
        plain = raw_env(preset=preset, players=players, episode=episode)
        skipping = raw_env(preset=preset, players=players, episode=episode, skip_forced=True)
        a = run_episode(plain, hashed_policy, seed=seed)
        b = run_episode(skipping, skip_checking(hashed_policy), seed=seed)
        assert a["returns"] == b["returns"]
        assert plain.game.results == skipping.game.results
        assert b["decisions"] == skipping.decisions
        asked += a["decisions"]
        skipped += a["decisions"] - b["decisions"]
    assert skipped > 0.1 * asked


def skip_checking(policy):
    """The policy, asserting that it is never asked when only one action is legal."""

    def checked(observation: dict) -> int:
        assert len(legal_actions(observation)) > 1
        return policy(observation)

    return checked


def test_same_seed_same_episode_other_seed_differs() -> None:
    def trace(seed: int) -> list:
        aec = env(preset="all_fives", players=3, episode="match", target=80)
        chooser = random.Random(0)
        return run_episode(aec, lambda obs: chooser.choice(legal_actions(obs)), seed=seed)["trace"]

    assert trace(11) == trace(11)
    assert trace(11) != trace(12)


def test_moves_and_actions_convert_through_the_env() -> None:
    aec = env(preset="block", players=2)
    aec.reset(seed=0)
    raw = aec.unwrapped
    opening = legal_actions(aec.observe(aec.agent_selection))[0]
    assert ":" not in raw.action_to_move(opening)
    assert raw.move_to_action(raw.action_to_move(opening)) == opening
    assert raw.move_to_action("6-3:right") == 28 + tile_index(6, 3)


def test_relative_points_of_one_result_are_relative_points_exactly() -> None:
    """The env's per-round rewards (``relative_points_of``) are the array form's floats, bit for bit."""
    rng = np.random.default_rng(0)
    for sides in (2, 3, 4):
        edge = [[0] * sides, [1] + [0] * (sides - 1)]
        for points in [*rng.integers(0, 400, size=(2000, sides)).tolist(), *edge]:
            want = relative_points(points).tolist()
            got = relative_points_of(tuple(points))
            assert [float(x).hex() for x in got] == [x.hex() for x in want], points
