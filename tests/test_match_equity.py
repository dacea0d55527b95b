"""Match labels (``distill.value: match``): the chance of winning a match from its score."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from agents.bots.registry import load_policy, make_bot
from agents.configuration import ConfigError
from agents.training import train as train_script
from agents.training.config import parse_train_config
from agents.training.match_equity import MatchEquity, round_results
from domino_env import Rules
from domino_env.engine.observation import observation_fields
from domino_env.envs.selfplay import SelfPlay


def test_a_coin_flip_for_a_point_a_round_gives_the_textbook_chances() -> None:
    # Rounds worth one point to either side, as often, plus ties; first to 2 wins.
    equity = MatchEquity(np.array([1, -1, 0, 1, -1]), target=2)
    assert equity(np.array(0), np.array(0)) == pytest.approx(0.5)
    assert equity(np.array(1), np.array(0)) == pytest.approx(0.75)
    assert equity(np.array(0), np.array(1)) == pytest.approx(0.25)
    assert equity(np.array(1), np.array(1)) == pytest.approx(0.5)
    assert equity(np.array(2), np.array(1)) == 1.0 and equity(np.array(1), np.array(5)) == 0.0


def test_needing_a_few_points_a_round_won_is_worth_as_much_as_a_big_one() -> None:
    rules = Rules.preset("draw", 2)
    equity = MatchEquity(round_results(rules, make_bot("strong", rules, 0), 4000, seed=0), rules.target)
    # The chance rises with our score and falls with theirs.
    assert np.all(np.diff(equity.chance[: rules.target, 0]) >= 0)
    assert np.all(np.diff(equity.chance[0, : rules.target]) <= 0)
    obs = SelfPlay(rules, 2, seed=1).state().obs.copy()
    scores = observation_fields(rules)["scores"]
    obs[0, scores], obs[1, scores] = (95, 0), (0, 0)
    relative = np.full((2, rules.num_actions), np.nan)
    relative[:, :3] = [5.0, 30.0, -10.0]  # relative points: half the margin (a 10-, 60- and 20-point round)
    labels = equity.label(rules, obs, relative)
    assert np.isnan(labels[:, 3:]).all()
    assert labels[0, 0] == labels[0, 1] == 100.0  # at 95-0 any round won ends the match
    assert labels[1, 1] > labels[1, 0] > 50 > labels[1, 2]  # at 0-0 the margin counts


def test_match_labels_need_one_outcome_a_label_and_rules_that_score_at_the_rounds_end(tmp_path: Path) -> None:
    base = {"preset": "draw", "players": 2, "total_updates": 0, "output_dir": str(tmp_path)}
    labels = {"rounds": 1, "value": "match", "privileged": True, "teacher": {"prior": 0}}
    parse_train_config({**base, "distill": labels})
    with pytest.raises(ConfigError, match=r"needs distill\.teacher\.prior: 0 and one rollout"):
        parse_train_config({**base, "distill": {**labels, "teacher": {}}})
    with pytest.raises(ConfigError, match=r"needs distill\.privileged: true"):
        parse_train_config({**base, "distill": {**labels, "privileged": False}})
    with pytest.raises(ConfigError, match=r"all_fives: points scored during a round"):
        parse_train_config({**base, "preset": "all_fives", "distill": labels})
    with pytest.raises(ConfigError, match=r"idrd_block 4p has 4 sides"):
        parse_train_config({**base, "preset": "idrd_block", "players": 4, "distill": labels})


def test_a_run_on_match_labels_reads_the_score_and_is_deterministic(tmp_path: Path) -> None:
    raw = {
        "preset": "draw", "players": 2, "total_updates": 0, "output_dir": str(tmp_path),
        "model": {"hidden": [32], "after_state": True, "move_hidden": 16},
        "eval": {"every": 0}, "progress": False,
        "distill": {
            "rounds": 2, "refine": 1, "positions": 256, "epochs": 2, "batch": 64, "games": 64,
            "value": "match", "privileged": True, "target": "values", "teacher": {"prior": 0},
        },
    }  # fmt: skip
    runs = []
    for name in ("one", "two"):
        config = parse_train_config({**raw, "name": name})
        train_script.train(config)
        checkpoint = config.run_dir / "checkpoints" / "update_000000.pt"
        runs.append(torch.load(checkpoint, weights_only=True)["model"])
        labels = np.load(config.run_dir / "teacher" / "round_000" / "values.npy", mmap_mode="r")
        legal = labels[np.isfinite(labels)]
        assert legal.min() >= 0 and legal.max() <= 100  # chances in percent, not points
    assert all(torch.equal(runs[0][key], runs[1][key]) for key in runs[0])
    rules = Rules.preset("draw", 2)
    model = load_policy(str(tmp_path / "one" / "checkpoints" / "update_000000.pt"), rules).model
    state = SelfPlay(rules, 32, seed=3).state()
    obs, mask = torch.from_numpy(state.obs), torch.from_numpy(state.mask)
    scored = obs.clone()
    scored[:, observation_fields(rules)["scores"]] = torch.tensor([80, 10], dtype=scored.dtype)
    with torch.no_grad():
        assert not torch.equal(model(obs, mask)[0], model(scored, mask)[0])
