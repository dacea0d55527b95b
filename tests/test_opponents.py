"""Opponents by name in every learner env, the PettingZoo wrapper that seats them, and the fast network path.

* ``opponents=`` takes a name (a bot, a shipped agent) or a list mixing names and policies in
  ``DominoSoloEnv``, ``gymnasium.make``, ``gymnasium.make_vec``, ``DominoVectorEnv`` and
  ``domino_env.env`` (``OpponentsWrapper``); a seed replays the same games; a bad name and an
  agent of other rules are one-line ValueErrors.
* The wrapper yields only the learners, and their rewards add up as in the plain env.
* A network opponent plays the moves it played before its features were compiled and its small
  calls moved to one thread: ``move_features`` is ``Moves``' numbers bit for bit, and the greedy
  actions of shipped agents are those of the code before.
* docs/speed.md shows the opponents table of ``docs/results/opponents.json``.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest
import torch
from pettingzoo.test import api_test

import domino_env  # noqa: F401  (registers the Gymnasium ids)
from agents import load_policy
from agents.bots import registry
from agents.bots.features import Board, Moves, unpack_tiles
from agents.training.move_features import MOVE_FEATURES, MoveInputs, move_features
from domino_env import DominoCore, DominoSoloEnv, DominoVectorEnv, IllegalMoveError, Rules, env, raw_env
from domino_env.engine.rules import all_configurations
from domino_env.envs.policies import RandomPolicy, first_legal_policy, sample_legal
from domino_env.envs.seated import OpponentsWrapper

ROOT = Path(__file__).resolve().parent.parent
DICT_OBSERVATION_WARNINGS = [
    "ignore:Observation is not a NumPy array",
    "ignore:Observation space for each agent probably should be",
    "ignore:unknown reset options",
]


def solo_trace(env: gymnasium.Env, seed: int, steps: int) -> list[tuple]:
    """(action, reward, terminated) of a random legal learner, from ``reset(seed=seed)``."""
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=seed)
    trace = []
    for _ in range(steps):
        action = int(sample_legal(info["action_mask"][None].astype(bool), rng)[0])
        _, reward, terminated, _, info = env.step(action)
        trace.append((action, reward, terminated))
        if terminated:
            _, info = env.reset()
    return trace


def aec_returns(aec, seed: int) -> tuple[dict[str, float], list[str]]:
    """Each agent's return over one episode, everyone met playing its first legal move; the agents met."""
    aec.reset(seed=seed)
    returns: dict[str, float] = {}
    met = []
    for agent in aec.agent_iter():
        observation, reward, terminated, truncated, _ = aec.last()
        returns[agent] = returns.get(agent, 0.0) + reward
        met.append(agent)
        aec.step(None if terminated or truncated else int(observation["action_mask"].argmax()))
    return returns, met


# -- names in every env ------------------------------------------------------------------------
def test_names_play_in_the_one_game_env_and_through_gymnasium_make() -> None:
    for opponents in ("strong", "random", ["strong", first_legal_policy]):
        players = 2 if isinstance(opponents, str) else 3
        env_ = gymnasium.make("domino_rl/Domino-v0", players=players, opponents=opponents)
        assert len(solo_trace(env_, seed=1, steps=30)) == 30
    assert len(solo_trace(DominoSoloEnv("block", 2, opponents="block-2p"), seed=1, steps=20)) == 20


def test_names_play_in_the_vector_env_and_through_make_vec() -> None:
    envs = gymnasium.make_vec(
        "domino_rl/Domino-v0", num_envs=16, vectorization_mode="vector_entry_point", opponents="strong"
    )
    obs, infos = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(10):
        obs, *_, infos = envs.step(sample_legal(infos["action_mask"].astype(bool), rng))
    assert obs.shape == (16, 113)
    mixed = DominoVectorEnv(16, "all_fives", 3, learner_seat="random", opponents=["pimc", first_legal_policy])
    _, infos = mixed.reset(seed=0)
    mixed.step(sample_legal(infos["action_mask"].astype(bool), np.random.default_rng(0)))


def test_random_by_name_is_played_inside_the_vector_env_core(monkeypatch: pytest.MonkeyPatch) -> None:
    def called(*_):
        raise AssertionError("'random' was called with observations")

    monkeypatch.setattr(RandomPolicy, "__call__", called)
    envs = DominoVectorEnv(32, "block", 3, opponents="random")
    _, infos = envs.reset(seed=0)
    envs.step(sample_legal(infos["action_mask"].astype(bool), np.random.default_rng(0)))


def test_a_seed_replays_the_games_of_named_opponents() -> None:
    """pimc draws its sampled deals from a seed of the env's seed: the same seed, the same games."""
    first = DominoSoloEnv("block", 2, opponents="pimc")
    again = DominoSoloEnv("block", 2, opponents="pimc")
    trace = solo_trace(first, seed=3, steps=12)
    assert trace == solo_trace(first, seed=3, steps=12) == solo_trace(again, seed=3, steps=12)
    envs = [DominoVectorEnv(32, "draw", 2, opponents="strong") for _ in range(2)]
    results = []
    for envs_ in envs:
        _, infos = envs_.reset(seed=5)
        rng = np.random.default_rng(0)
        rewards = []
        for _ in range(8):
            _, reward, _, _, infos = envs_.step(sample_legal(infos["action_mask"].astype(bool), rng))
            rewards.append(reward)
        results.append(np.concatenate(rewards))
    np.testing.assert_array_equal(*results)


def test_bots_are_built_again_at_each_seeded_reset_and_files_loaded_once(monkeypatch) -> None:
    built = []

    def fake_load_policy(spec, rules, seed=None):
        built.append((spec, seed))
        return first_legal_policy

    monkeypatch.setattr(registry, "load_policy", fake_load_policy)
    game = DominoSoloEnv("block", 3, opponents=["strong", "block-2p"])
    assert [spec for spec, _ in built] == ["block-2p", "strong"]  # the file when made, the bot when seeded
    game.reset(seed=1)
    game.reset()
    game.reset(seed=1)
    game.reset(seed=2)
    assert [spec for spec, _ in built[2:]] == ["strong"] * 3
    seeds = [seed for _, seed in built[2:]]
    assert seeds[0] == seeds[1] != seeds[2]
    built.clear()
    DominoVectorEnv(8, "block", 3, opponents=["strong", "strong"]).reset(seed=0)
    assert [spec for spec, _ in built] == ["strong", "strong"]  # one policy for both seats, per seeding


def test_an_agent_of_other_rules_is_a_one_line_error_naming_it_and_both_rules() -> None:
    for make in (
        lambda: DominoSoloEnv("block", 3, opponents="block-2p"),
        lambda: DominoVectorEnv(4, "block", 3, opponents=["strong", "block-2p"]),
        lambda: env(preset="block", players=3, opponents="block-2p"),
    ):
        with pytest.raises(ValueError) as error:
            make()
        message = str(error.value)
        assert "\n" not in message and message.startswith("opponent 'block-2p': ")
        assert "block with 2 players" in message and "block with 3 players" in message


def test_a_bad_name_is_an_error_listing_the_valid_ones() -> None:
    with pytest.raises(ValueError) as error:
        DominoSoloEnv("block", 2, opponents="strnog")
    message = str(error.value)
    assert "\n" not in message and message.startswith("opponent 'strnog': ")
    assert "valid bots: random, heaviest" in message and "block-2p" in message and "'strong'?" in message
    for bad in (["strong"], 3, ["strong", 4]):
        with pytest.raises(ValueError, match="a list of 2 of them"):
            DominoSoloEnv("block", 3, opponents=bad)


# -- the PettingZoo wrapper ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("preset", "players", "learners", "episode", "reward"),
    [
        ("block", 2, "player_1", "round", "points"),
        ("all_fives", 3, "player_2", "match", "points"),
        ("draw", 3, "player_0", "round", "win"),
        ("partnership", 4, ["player_0", "player_2"], "round", "points"),
    ],
)
def test_the_wrapper_yields_the_learners_and_their_rewards_add_up_as_in_the_plain_env(
    preset: str, players: int, learners: str | list[str], episode: str, reward: str
) -> None:
    """The same deals and moves (first legal everywhere): each learner's return through the wrapper
    is its return in the plain env, though its rewards arrive across the opponents' moves."""
    kwargs = dict(preset=preset, players=players, episode=episode, reward=reward)
    chosen = [learners] if isinstance(learners, str) else learners
    for seed in range(4):
        plain, _ = aec_returns(env(**kwargs), seed)
        seated, met = aec_returns(env(**kwargs, opponents=first_legal_policy, learners=learners), seed)
        assert set(met) == set(chosen)
        assert seated == {agent: plain[agent] for agent in chosen}


@pytest.mark.filterwarnings(*DICT_OBSERVATION_WARNINGS)
def test_the_wrapper_passes_pettingzoos_api_test_and_replays_a_seed() -> None:
    api_test(env(preset="all_fives", players=3, opponents="strong"), num_cycles=50)
    wrapped = OpponentsWrapper(raw_env(preset="idrd_draw", players=2), "pimc")
    assert aec_returns(wrapped, 7) == aec_returns(wrapped, 7)


def test_the_wrapper_refuses_bad_learners_and_an_illegal_opponent_move() -> None:
    for learners in ([], ["player_0", "player_1"], "player_9", ["player_0", "player_0"]):
        with pytest.raises(ValueError, match="learners must be agents of this env"):
            env(preset="block", players=2, opponents="strong", learners=learners)
    with pytest.raises(ValueError, match="give opponents= too"):
        env(preset="block", learners="player_1")
    cheat = env(
        preset="block", players=2, opponents=lambda obs, mask: (~mask).argmax(axis=1), learners="player_1"
    )
    with pytest.raises(IllegalMoveError, match="playing player_0 chose action"):
        aec_returns(cheat, 0)


# -- the network opponent's fast path ------------------------------------------------------------
def reference_move_features(rules: Rules, obs: np.ndarray, mask: np.ndarray, after_state: bool) -> MoveInputs:
    """``move_features`` before its compiled pass: ``Moves``' features column by column."""
    moves = Moves(Board(rules, obs), mask)
    values = [
        moves.options(1) if name == "next_options" else getattr(moves, name) for name, _ in MOVE_FEATURES
    ]
    columns = [value / divisor for value, (_, divisor) in zip(values, MOVE_FEATURES, strict=True)]
    if after_state:
        numbers = (moves.numbers_after[:, None] >> np.arange(7, dtype=np.uint8)) & 1 > 0
        bits = [unpack_tiles(moves.hand_after), np.arange(28) == moves.tile[:, None], numbers]
        columns += list(np.concatenate([*bits, unpack_tiles(moves.fitting(1))], axis=1).T)
    features = np.stack(columns, axis=1).astype(np.float32)
    counts = np.bincount(moves.row, minlength=len(mask))
    return MoveInputs(*(torch.from_numpy(a) for a in (features, moves.row, moves.action, counts)))


def positions(rules: Rules, games: int, steps: int, seed: int):
    """(obs, mask) of ``games`` match games after each of ``steps`` random moves."""
    core = DominoCore(rules, games, seed=seed, episode="match")
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        yield core.observe(), core.legal_mask()
        core.step(core.random_actions(rng))


@pytest.mark.parametrize(("preset", "players"), all_configurations())
def test_compiled_move_features_are_the_numbers_of_moves_bit_for_bit(preset: str, players: int) -> None:
    rules = Rules.preset(preset, players)
    for obs, mask in positions(rules, games=48, steps=12, seed=players):
        for after_state in (False, True):
            fast, reference = (
                move_features(rules, obs, mask, after_state),
                reference_move_features(rules, obs, mask, after_state),
            )
            for field in ("features", "rows", "actions", "counts"):
                assert getattr(fast, field).equal(getattr(reference, field)), field


@pytest.fixture
def one_thread():
    """Torch on one thread, as a small call now runs: the old code and the new on the same threads."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("agent", ["block-2p", "all_fives-2p", "partnership-4p", "idrd_block-4p"])
def test_a_network_opponent_plays_the_moves_it_played_before(agent: str, one_thread: None) -> None:
    """Against the code before (NumPy features, ``no_grad``), on the same threads: the same logits bit
    for bit, so the same greedy actions, for one game's row, a few games' and a batch. block-2p reads
    move features, the others after-state bits too, and idrd_block-4p is an average of networks.
    (A small call now runs on one thread where the code before used the process's threads, which may
    round a logit's last bits differently, as machines of different core counts do; the greedy
    actions of every shipped agent agreed in 38,574 decisions of batches of 1 to 63 rows.)"""
    policy = load_policy(agent)
    model, rules = policy.model, policy.model.rules
    compared = 0
    for step, (obs, mask) in enumerate(positions(rules, games=96, steps=8, seed=1)):
        calls = [(rows, 1) for rows in range(0, 40, 8)] + [(rows, 5) for rows in range(0, 40, 8)]
        for start, size in [*calls, (0, len(obs))]:
            o, k = obs[start : start + size], mask[start : start + size]
            with torch.no_grad():
                moves = reference_move_features(rules, o, k, model.after_state)
                logits = model(torch.from_numpy(o), torch.from_numpy(k), moves)[0]
            np.testing.assert_array_equal(policy.probabilities(o, k), logits.softmax(dim=1).numpy())
            expected = np.where(k.sum(axis=1) > 1, logits.argmax(dim=1).numpy(), k.argmax(axis=1))
            np.testing.assert_array_equal(policy(o, k), expected, err_msg=f"step {step}, rows {start}+")
            compared += size
    assert compared == 8 * (5 * 1 + 5 * 5 + 96)


def test_a_small_call_puts_the_thread_count_back() -> None:
    policy = load_policy("block-2p")
    obs, mask = next(positions(policy.model.rules, games=2, steps=1, seed=0))
    threads = torch.get_num_threads()
    policy(obs, mask)
    assert torch.get_num_threads() == threads


# -- the speed table -----------------------------------------------------------------------------
def test_the_speed_page_shows_the_results_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/speed.md's opponents table is the one ``scripts/bench_opponents.py`` renders from its file:
    measure again (or edit the file) and this fails until ``--write-table`` is run."""
    spec = importlib.util.spec_from_file_location("bench_opponents", ROOT / "scripts" / "bench_opponents.py")
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, bench)  # its dataclass looks its module up there
    spec.loader.exec_module(bench)
    results = json.loads(bench.RESULTS.read_text())
    page = bench.PAGE.read_text()
    assert bench.with_table(page, bench.table(results)) == page, (
        "stale: python scripts/bench_opponents.py --write-table"
    )
    last = list(results["runs"].values())[-1]
    assert {(row["env"], row["opponent"]) for row in last["rows"]} >= {
        (env, name) for env in ("solo", "vector") for name in ("random", "strong", "pimc", "block-2p")
    }
