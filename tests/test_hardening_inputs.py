"""Refused inputs (issue 12, items 6-8): malformed checkpoints, out-of-range numbers, env misuse.

Each is refused with an error that names what is wrong (a ``CheckpointError`` naming the
file and the field; a ``ValueError`` naming the record key, rule field or action), never a
KeyError, OverflowError or AttributeError from deep inside. The last tests fuzz record
replay with hypothesis: any input gives a result or a ValueError.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.bots.registry import load_policy
from agents.training import train
from agents.training.checkpoint import (
    FORMAT,
    POLICY_KEYS,
    CheckpointError,
    CheckpointPolicy,
    build_model,
    capture_rng,
    export_policy,
    load_checkpoint,
    rules_of,
    save_checkpoint,
)
from agents.training.config import parse_train_config
from agents.training.network import ActorCritic
from domino_env import DominoCore, DominoSoloEnv, DominoVectorEnv, IllegalMoveError, Rules, replay
from domino_env.engine.game import Game
from domino_env.engine.observation import observation_fields
from domino_env.engine.rules import SCORE_LIMIT
from domino_env.envs.pettingzoo_env import env, raw_env
from domino_env.tools.records import RECORD_KEYS, round_from_record
from tests.test_records import SEED001  # seed 001's worked example

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted((ROOT / "checkpoints").glob("*.pt"))


# -- 6. malformed checkpoints ---------------------------------------------------------------------
def tiny_payload(tmp_path: Path) -> dict[str, Any]:
    """A whole training checkpoint as ``RunState.payload`` builds it (training/state.py), tiny network."""
    config = parse_train_config(
        {
            "preset": "block",
            "players": 2,
            "output_dir": str(tmp_path),
            "name": "tiny",
            "model": {"hidden": [8]},
            "eval": {"every": 0},
            "progress": False,
        }
    )
    torch.manual_seed(0)
    model = ActorCritic(config.build_rules(), tuple(config.model.hidden), config.model.move_features)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.ppo.lr, eps=1e-5)
    sum(p.sum() for p in model.parameters()).backward()
    optimizer.step()  # fills the Adam state (step, exp_avg, exp_avg_sq per parameter)
    weights = {k: v.detach().clone() for k, v in model.state_dict().items()}
    return {
        "format": FORMAT,
        "model": weights,
        "optimizer": optimizer.state_dict(),
        "config": config.to_dict(),
        "update": 3,
        "global_step": 96,
        "best_score": float("-inf"),
        "rng": capture_rng(np.random.default_rng(0)),
        "snapshots": [copy.deepcopy(weights)],
    }


def _bad_exp_avg(payload: dict) -> dict:
    optimizer = copy.deepcopy(payload["optimizer"])
    optimizer["state"][0]["exp_avg"] = torch.zeros(3)
    return optimizer


def _bad_lr(payload: dict) -> dict:
    optimizer = copy.deepcopy(payload["optimizer"])
    optimizer["param_groups"][0]["lr"] = float("nan")
    return optimizer


def _huge_eps(payload: dict) -> dict:
    optimizer = copy.deepcopy(payload["optimizer"])
    optimizer["param_groups"][0]["eps"] = 10**400  # math.isfinite would overflow on it
    return optimizer


def _config(payload: dict, **changes: Any) -> dict:
    return {**payload["config"], **changes}


# (field changed, its new value from the good payload, what the message must name)
MALFORMED = [
    ("config", lambda p: {}, "config: missing preset"),
    ("config", lambda p: "block", "config: expected the training config as a dict"),
    ("config", lambda p: _config(p, model={"hidden": [-5], "move_features": True}), "config: model.hidden"),
    ("config", lambda p: _config(p, preset="blok"), "config: .*blok"),
    ("config", lambda p: _config(p, rules=[1]), "config: .*rules"),
    ("rng", lambda p: {}, "rng: missing numpy"),
    ("rng", lambda p: "seed", "rng: expected a dict"),
    ("rng", lambda p: {**p["rng"], "numpy": {"bit_generator": "PCG64"}}, "rng.numpy"),
    ("rng", lambda p: {**p["rng"], "torch": torch.zeros(3, dtype=torch.uint8)}, "rng.torch"),
    ("rng", lambda p: {**p["rng"], "torch": [1, 2]}, "rng.torch"),
    ("rng", lambda p: {**p["rng"], "python": [3, [1, 2], None]}, "rng.python"),
    ("rng", lambda p: {**p["rng"], "cuda": "gpu"}, "rng.cuda"),
    ("update", lambda p: "abc", "update: expected a non-negative integer"),
    ("update", lambda p: -1, "update: expected a non-negative integer"),
    ("update", lambda p: True, "update: expected a non-negative integer"),
    ("global_step", lambda p: 1.5, "global_step: expected a non-negative integer"),
    ("global_step", lambda p: 2**64, "global_step: expected a non-negative integer"),
    ("best_score", lambda p: float("nan"), "best_score"),
    ("best_score", lambda p: "high", "best_score"),
    ("format", lambda p: "1", "format '1'"),
    ("model", lambda p: {}, "model: expected a non-empty dict of tensors"),
    ("model", lambda p: {"trunk.0.weight": [1.0]}, "model: expected names mapped to tensors"),
    ("model", lambda p: {"trunk.0.weight": torch.zeros(2, 2)}, "model: weights do not fit the network"),
    ("model", lambda p: {**p["model"], "trunk.0.bias": torch.full((8,), math.nan)}, "model: 'trunk.0.bias'"),
    ("optimizer", lambda p: {}, "optimizer: expected a dict with 'state' and 'param_groups'"),
    ("optimizer", lambda p: {"state": {}, "param_groups": []}, "optimizer.param_groups"),
    ("optimizer", _bad_exp_avg, r"optimizer.state\[0\]: 'exp_avg' has shape \(3,\)"),
    ("optimizer", _bad_lr, r"optimizer.param_groups\[0\]: 'lr'"),
    ("optimizer", _huge_eps, r"optimizer.param_groups\[0\]: 'eps'"),
    ("optimizer", lambda p: {**p["optimizer"], "state": {99: {}}}, r"optimizer.state\[99\]"),
    ("snapshots", lambda p: [], "snapshots: expected a non-empty list"),
    ("snapshots", lambda p: [{"a": torch.zeros(1)}], r"snapshots\[0\]: its tensors differ"),
    ("snapshots", lambda p: [p["model"], 7], r"snapshots\[1\]"),
]


@pytest.mark.parametrize(("field", "change", "message"), MALFORMED)
def test_malformed_checkpoint_fields_are_refused_naming_the_file_and_field(
    tmp_path: Path, field: str, change: Any, message: str
) -> None:
    payload = tiny_payload(tmp_path)
    path = tmp_path / "update_000003.pt"
    save_checkpoint(path, {**payload, field: change(payload)})
    with pytest.raises(CheckpointError, match=rf"checkpoint {path}: {message}"):
        load_checkpoint(path)


def test_a_well_formed_checkpoint_loads_without_moving_the_global_rng(tmp_path: Path) -> None:
    payload = tiny_payload(tmp_path)
    path = tmp_path / "update_000003.pt"
    save_checkpoint(path, {**payload, "eval_score": None})  # keys it does not know are left alone
    state = torch.get_rng_state()
    loaded = load_checkpoint(path)  # builds a scratch network to check the optimizer against
    assert torch.equal(torch.get_rng_state(), state)
    assert loaded["update"] == 3 and loaded["best_score"] == -math.inf
    policy = tmp_path / "policy.pt"
    export_policy([path], policy)
    assert set(load_checkpoint(policy, POLICY_KEYS)) == set(POLICY_KEYS)


def test_policy_files_are_checked_for_their_own_keys_only(tmp_path: Path) -> None:
    payload = tiny_payload(tmp_path)
    path = tmp_path / "policy.pt"
    save_checkpoint(path, {key: payload[key] for key in POLICY_KEYS})
    load_checkpoint(path, POLICY_KEYS)
    save_checkpoint(path, {**{key: payload[key] for key in POLICY_KEYS}, "config": {"preset": "block"}})
    with pytest.raises(CheckpointError, match=f"checkpoint {path}: config: missing players"):
        load_checkpoint(path, POLICY_KEYS)


def test_resume_from_a_checkpoint_with_a_string_config_is_a_checkpoint_error(tmp_path: Path) -> None:
    payload = tiny_payload(tmp_path)
    config = parse_train_config(payload["config"])
    folder = config.run_dir / "checkpoints"
    save_checkpoint(folder / "update_000003.pt", {**payload, "config": "block"})
    with pytest.raises(CheckpointError, match="config: expected the training config as a dict"):
        train.train(config, resume=True)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_policy_files_still_load_build_and_play(path: Path) -> None:
    payload = load_checkpoint(path, POLICY_KEYS)
    parse_train_config(payload["config"])
    rules = rules_of(payload)
    build_model(payload, path, rules)
    policy = CheckpointPolicy(path, rules)
    core = DominoCore(rules, 4, seed=0)
    mask = core.legal_mask()
    actions = policy(core.observe(), mask)
    assert mask[np.arange(4), actions].all()
    with pytest.raises(CheckpointError, match="missing optimizer"):
        load_checkpoint(path)  # a policy file cannot resume


def test_load_policy_of_a_shipped_file() -> None:
    policy = load_policy("checkpoints/block-2p-ppo.pt", Rules.preset("block", 2))
    assert policy.name == "block-2p-ppo"


# -- 7. out-of-range numbers ------------------------------------------------------------------------
def block_record() -> dict:
    game = raw_env(preset="block", players=2)
    game.reset(seed=0)
    return game.game.round_record()


@pytest.mark.parametrize("scores", [[40000, 0], [0, SCORE_LIMIT + 1], [-40000, 0], [2**70, 0]])
def test_record_scores_out_of_range_are_refused_by_replay_and_reset(scores: list[int]) -> None:
    record = dict(block_record(), scores=scores)
    with pytest.raises(ValueError, match="'scores'"):
        replay(record)
    with pytest.raises(ValueError, match="'scores'"):
        raw_env(preset="block", players=2).reset(options={"deal": record})
    with pytest.raises(ValueError, match="'scores'"):
        DominoSoloEnv("block", 2).reset(options={"deal": record})


def test_scores_at_the_limits_reach_the_int16_observation() -> None:
    """Negative scores are real (muggins' round winner can score below zero), so they are kept."""
    record = dict(block_record(), scores=[SCORE_LIMIT, -SCORE_LIMIT], rules={"target": SCORE_LIMIT})
    assert replay(record)["scores"] == [SCORE_LIMIT, -SCORE_LIMIT]
    game = raw_env(preset="block", players=2, episode="match", target=SCORE_LIMIT)
    game.reset(options={"deal": record})
    observation = game.observe("player_0")["observation"]
    scores = observation[observation_fields(game.rules)["scores"]]
    assert list(scores) == [SCORE_LIMIT, -SCORE_LIMIT]


@pytest.mark.parametrize("target", [10**30, 40_000, SCORE_LIMIT + 1])
def test_targets_beyond_the_limit_are_refused_with_the_range(target: int) -> None:
    with pytest.raises(ValueError, match=f"target must be 1 to {SCORE_LIMIT}"):
        Rules.preset("block", target=target)
    with pytest.raises(ValueError, match=f"target must be 1 to {SCORE_LIMIT}"):
        raw_env(preset="block", target=target)


def test_the_largest_target_plays_a_match() -> None:
    rules = Rules.preset("block", target=SCORE_LIMIT)
    core = DominoCore(rules, 8, seed=0, episode="match")
    for _ in range(50):
        core.step(core.random_actions())
    assert (core.observe() >= np.iinfo(np.int16).min).all()


# -- 8. env misuse ----------------------------------------------------------------------------------
def test_raw_env_step_before_reset_says_so() -> None:
    game = raw_env()
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        game.step(0)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before last\(\)"):
        game.last()
    with pytest.raises(RuntimeError, match=r"call reset\(\) before observe\(\)"):
        game.observe("player_0")
    game.reset(seed=0)
    game.step(game.move_to_action(game.game.legal_moves()[0]))


def test_game_reset_refuses_scores_out_of_range() -> None:
    game = Game(Rules.preset("block", 2))
    with pytest.raises(ValueError, match="scores must be within"):
        game.reset(deal=list(range(28)), opener=0, scores=[SCORE_LIMIT + 1, 0])
    game.reset(deal=list(range(28)), opener=0, scores=[SCORE_LIMIT, 0])


def play_out(game: Any) -> None:
    """Play legal moves to the end of the episode, then step every agent out with None."""
    for agent in game.agent_iter():
        observation, _, terminated, truncated, _ = game.last()
        game.step(None if terminated or truncated else int(np.flatnonzero(observation["action_mask"])[0]))
        assert agent not in game.agents or not (terminated or truncated)


@pytest.mark.parametrize("make", [raw_env, env], ids=["raw_env", "env"])
def test_step_none_after_the_episode_warns_like_pettingzoo(make: Any, caplog: Any) -> None:
    game = make(preset="block", players=2)
    game.reset(seed=0)
    play_out(game)
    assert game.agents == []
    game.step(None)  # was KeyError: 'player_1' through raw_env
    assert "step() called after all agents are terminated" in caplog.text
    if make is raw_env:
        with pytest.raises(ValueError, match="the episode is over; call reset"):
            game.step(0)
    game.reset(seed=1)
    assert game.agents == game.possible_agents


@pytest.mark.parametrize("make", [raw_env, env], ids=["raw_env", "env"])
@pytest.mark.parametrize("action", [True, False, np.bool_(True), 1.0, np.float32(3), "3", [3], np.array([3])])
def test_non_integer_actions_are_refused_naming_the_action_and_range(make: Any, action: Any) -> None:
    game = make(preset="block", players=2)
    game.reset(seed=0)
    agent = game.agent_selection
    before = game.observe(agent)["observation"].copy()
    with pytest.raises(ValueError, match=r"is not an action: actions are integers 0\.\.55"):
        game.step(action)
    assert game.agent_selection == agent and not any(game.terminations.values())
    assert (game.observe(agent)["observation"] == before).all()
    legal = int(np.flatnonzero(game.observe(agent)["action_mask"])[0])
    game.step(np.int64(legal))  # NumPy integers are actions
    assert game.agent_selection != agent


def test_wrapped_env_out_of_range_names_the_range() -> None:
    game = env(preset="block", players=2)
    game.reset(seed=0)
    with pytest.raises(AssertionError, match=r"not in action space Discrete\(56\): actions are 0\.\.55"):
        game.step(56)
    with pytest.raises(ValueError, match="None"):
        game.step(None)  # the agent to move is alive


def test_vector_env_step_before_reset_changes_nothing() -> None:
    envs = DominoVectorEnv(4, preset="block")
    core = envs._batch.core
    before = (core.hands.copy(), core.to_play.copy(), core.num_placed.copy())
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        envs.step(np.zeros(4, dtype=np.int64))
    assert all(
        (a == b).all() for a, b in zip(before, (core.hands, core.to_play, core.num_placed), strict=True)
    )
    _, infos = envs.reset(seed=0)
    with pytest.raises(ValueError, match="integer array"):
        envs.step(np.ones(4, dtype=bool))
    actions = infos["action_mask"].argmax(axis=1)
    envs.step(actions)


def test_solo_env_misuse_is_consistent_with_the_aec_env() -> None:
    solo = DominoSoloEnv("block", 2)
    with pytest.raises(RuntimeError, match="reset"):
        solo.step(0)
    _, info = solo.reset(seed=0)
    for action in (True, np.bool_(False), 1.0, "0", None):
        with pytest.raises(ValueError, match=r"is not an action: actions are integers 0\.\.55"):
            solo.step(action)
        assert (solo.action_masks() == info["action_mask"].astype(bool)).all()
    solo.step(np.int64(np.flatnonzero(info["action_mask"])[0]))
    strict = DominoSoloEnv("block", 2, illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(IllegalMoveError, match=r"outside 0\.\.55"):
        strict.step(np.int64(56))
    _, reward, terminated, _, info = solo.step(np.int64(56))  # the default: out of range loses, as in env()
    assert (reward, terminated, info["illegal_action"]) == (-1.0, True, True)


# -- fuzzing record replay ----------------------------------------------------------------------------
PRESET_NAMES = ["block", "idrd_draw", "muggins", "all_fives", "partnership", "draw", "blok"]
RULE_FIELDS = ["target", "hand_size", "drawing", "spinner", "redeal_doubles", "first_opener", "teams", "name"]

tile = st.builds(lambda a, b: f"{a}-{b}", st.integers(-1, 8), st.integers(-1, 8))
move = st.one_of(
    tile,
    st.builds(lambda t, e: f"{t}:{e}", tile, st.sampled_from(["left", "right", "up", "down", "x", ""])),
    st.text(max_size=6),
)
scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 40),
    st.integers(-(2**70), 2**70),
    st.floats(),
    st.text(max_size=5),
    tile,
    st.sampled_from(PRESET_NAMES),
)
junk = st.recursive(
    scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=4), st.sampled_from(RULE_FIELDS)), inner, max_size=3),
    ),
    max_leaves=10,
)
FIELDS = {
    "preset": st.one_of(junk, st.sampled_from(PRESET_NAMES)),
    "players": st.one_of(junk, st.integers(0, 5)),
    "hands": st.one_of(junk, st.lists(st.lists(tile, max_size=8), max_size=5)),
    "boneyard": st.one_of(junk, st.lists(tile, max_size=16)),
    "opener": st.one_of(junk, st.integers(-1, 4)),
    "scores": st.one_of(junk, st.lists(st.one_of(st.integers(), st.integers(-(2**40), 2**40)), max_size=5)),
    "rules": st.one_of(junk, st.dictionaries(st.sampled_from(RULE_FIELDS), junk, max_size=3)),
    "moves": st.one_of(junk, st.lists(move, max_size=8)),
}
changes = st.fixed_dictionaries({}, optional=FIELDS)
records = st.one_of(
    changes,  # any subset of the keys, any values
    changes.map(lambda c: {**json.loads(json.dumps(SEED001)), **c}),  # a real record, some keys replaced
    st.builds(
        lambda c, extra: {**SEED001, **c, **extra}, changes, st.dictionaries(st.text(max_size=4), junk)
    ),
    st.lists(move, max_size=10).map(lambda moves: {**SEED001, "moves": moves}),  # only the moves vary
    st.lists(st.integers(-(2**20), 2**20), min_size=2, max_size=2).map(  # only the scores vary
        lambda scores: {**SEED001, "scores": scores}
    ),
    junk,  # not even a dict
)


@settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(records)
def test_fuzzed_records_replay_or_raise_value_error(record: Any) -> None:
    try:
        out = replay(record)
    except ValueError as error:  # IllegalMoveError is one
        assert str(error)
        return
    assert set(out) >= {"end", "scores", "hands", "legal"}
    if out["end"] is not None:
        return
    # What replay accepts, an env starts from, or refuses with a ValueError (never OverflowError...).
    rnd = round_from_record(record)
    try:
        Game(rnd.rules, "match").reset_from_record(record)
    except ValueError as error:
        assert str(error)


def test_the_fuzz_strategy_reaches_real_replays() -> None:
    """The strategies are not all junk: the unchanged record and its keys are all exercised."""
    assert replay(SEED001)["to_play"] == 0
    assert set(FIELDS) == set(RECORD_KEYS)
