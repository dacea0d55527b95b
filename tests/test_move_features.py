"""Per-move features: only legal moves carry them, and the network can express ``strong`` with them."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.bots import STRONG_WEIGHTS, family
from agents.checkpoint import NetworkPolicy
from agents.move_features import MOVE_FEATURES, move_features, pack_moves
from agents.network import ActorCritic
from agents.policy import make_bot
from domino_env import Rules
from domino_env.policies import sample_legal
from domino_env.selfplay import SelfPlay

PRESETS = [("block", 2), ("draw", 2), ("all_fives", 2), ("partnership", 4), ("muggins", 2), ("spanish_pairs", 4)]


@pytest.mark.parametrize(("preset", "players"), PRESETS)
def test_only_legal_moves_have_features_and_packing_keeps_them(preset: str, players: int) -> None:
    rules = Rules.preset(preset, players)
    play = SelfPlay(rules, 128, seed=1)
    rng = np.random.default_rng(0)
    for _ in range(25):
        state = play.state()
        dense = move_features(rules, state.obs, state.mask)
        assert dense.shape == (128, rules.num_actions, len(MOVE_FEATURES))
        assert not dense[~state.mask].any()
        assert np.isfinite(dense).all()
        mask = torch.from_numpy(state.mask)
        features, actions = pack_moves(torch.from_numpy(dense), mask)
        assert actions.shape[1] == state.mask.sum(axis=1).max()
        rows = torch.arange(len(mask))[:, None].expand_as(actions)
        legal = mask[rows, actions]
        assert legal.sum() == mask.sum()  # every legal action once, then padding
        assert not features[~legal].any()
        torch.testing.assert_close(features, torch.from_numpy(dense)[rows, actions])
        play.step(sample_legal(state.mask, rng))


@pytest.mark.parametrize(("preset", "players"), PRESETS[:4])
def test_network_with_strongs_weights_plays_like_strong(preset: str, players: int) -> None:
    rules = Rules.preset(preset, players)
    model = ActorCritic(rules, (8,), move_features=True)
    weights = STRONG_WEIGHTS[family(rules)]
    with torch.no_grad():
        for layer in (model.policy_head, model.move_head, model.move_out):
            layer.weight.zero_()
            layer.bias.zero_()
        # The features are scaled by their divisors, so the weights are scaled back.
        for column, weight in enumerate(weights):
            model.move_head.bias[column] = weight * MOVE_FEATURES[column][1]
    strong, network = make_bot("strong", rules), NetworkPolicy("net", model, greedy=True)
    play = SelfPlay(rules, 256, seed=2)
    agree = []
    for _ in range(30):
        state = play.state()
        expected = strong(state.obs, state.mask)
        agree.append(network(state.obs, state.mask) == expected)
        play.step(expected)
    assert np.mean(agree) > 0.99  # float32 sums may split a few exact ties differently
