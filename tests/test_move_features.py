"""Per-move features: only legal moves carry them, and the network can express ``strong`` with them."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.bots import STRONG_WEIGHTS, family
from agents.checkpoint import NetworkPolicy
from agents.move_features import MOVE_FEATURES, concat_moves, move_features
from agents.network import ActorCritic
from agents.policy import make_bot
from domino_env import Rules
from domino_env.policies import sample_legal
from domino_env.selfplay import SelfPlay

PRESETS = [
    ("block", 2),
    ("draw", 2),
    ("all_fives", 2),
    ("partnership", 4),
    ("muggins", 2),
    ("spanish_pairs", 4),
]


@pytest.mark.parametrize(("preset", "players"), PRESETS)
def test_each_row_lists_its_legal_moves_in_order_then_zero_padding(preset: str, players: int) -> None:
    rules = Rules.preset(preset, players)
    play = SelfPlay(rules, 128, seed=1)
    rng = np.random.default_rng(0)
    for _ in range(25):
        state = play.state()
        features, actions = move_features(rules, state.obs, state.mask)
        counts = state.mask.sum(axis=1)
        assert features.shape == (128, counts.max(), len(MOVE_FEATURES))
        assert torch.isfinite(features).all()
        for row in range(0, 128, 7):
            legal = np.flatnonzero(state.mask[row])
            assert actions[row, : len(legal)].tolist() == legal.tolist()
            assert not actions[row, len(legal) :].any() and not features[row, len(legal) :].any()
        play.step(sample_legal(state.mask, rng))


def test_concatenated_batches_pad_to_the_widest_and_padding_adds_nothing() -> None:
    rules = Rules.preset("draw", 2)
    play = SelfPlay(rules, 64, seed=3)
    rng = np.random.default_rng(1)
    model = ActorCritic(rules, (16,))
    parts, batches = [], []
    for _ in range(30):
        state = play.state()
        obs, mask = torch.from_numpy(state.obs), torch.from_numpy(state.mask)
        parts.append(model.move_inputs(obs, mask))
        batches.append((obs, mask))
        play.step(sample_legal(state.mask, rng))
    features, actions = concat_moves(parts)
    assert features.shape[1] == max(f.shape[1] for f, _ in parts) > min(f.shape[1] for f, _ in parts)
    obs, mask = torch.cat([o for o, _ in batches]), torch.cat([m for _, m in batches])
    with torch.no_grad():
        together, _ = model(obs, mask, (features, actions))
        apart = torch.cat([model(o, m, p)[0] for (o, m), p in zip(batches, parts, strict=True)])
    torch.testing.assert_close(together, apart)


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
