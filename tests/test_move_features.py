"""Per-move features: only legal moves carry them, and the network can express ``strong`` with them."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.bots.features import FITSET, number_sets, unpack_tiles
from agents.bots.heuristic import STRONG_WEIGHTS, family
from agents.bots.registry import make_bot
from agents.training.checkpoint import NetworkPolicy
from agents.training.move_features import (
    AFTER_STATE,
    MOVE_FEATURES,
    NUM_MOVE_FEATURES,
    MoveInputs,
    feature_count,
    move_features,
)
from agents.training.network import ActorCritic
from domino_env import DominoCore, Rules
from domino_env.envs.policies import sample_legal
from domino_env.envs.selfplay import SelfPlay

PRESETS = [
    ("block", 2),
    ("draw", 2),
    ("all_fives", 2),
    ("partnership", 4),
    ("muggins", 2),
    ("spanish_pairs", 4),
]


@pytest.mark.parametrize(("preset", "players"), PRESETS)
def test_entries_are_the_legal_moves_row_by_row(preset: str, players: int) -> None:
    rules = Rules.preset(preset, players)
    play = SelfPlay(rules, 128, seed=1)
    rng = np.random.default_rng(0)
    for _ in range(25):
        state = play.state()
        moves = move_features(rules, state.obs, state.mask)
        assert moves.features.shape == (state.mask.sum(), len(MOVE_FEATURES))
        assert torch.isfinite(moves.features).all()
        assert moves.counts.tolist() == state.mask.sum(axis=1).tolist()
        rows, actions = np.nonzero(state.mask)
        assert moves.rows.tolist() == rows.tolist() and moves.actions.tolist() == actions.tolist()
        play.step(sample_legal(state.mask, rng))


@pytest.mark.parametrize(("preset", "players"), PRESETS)
def test_after_state_bits_are_the_position_each_move_leads_to(preset: str, players: int) -> None:
    """Own hand and open numbers as the core shows them after the move; the next seat's fitting tiles
    are a superset of those it really holds (sound knowledge), none of them ours."""
    rules = Rules.preset(preset, players)
    rng = np.random.default_rng(players)
    core = DominoCore(rules, 400, seed=11, episode="match")
    for _ in range(int(rng.integers(2, 10))):
        core.step(core.random_actions(rng))
    obs, mask, actions = core.observe(), core.legal_mask(), core.random_actions(rng)
    rows = np.arange(len(actions))
    chosen = np.zeros_like(mask)
    chosen[rows, actions] = True
    seat, hands = core.to_play.copy(), core.hands.copy()
    inputs = move_features(rules, obs, chosen, after_state=True)
    assert inputs.features.shape == (len(rows), feature_count(True))
    assert inputs.features[:, :NUM_MOVE_FEATURES].equal(move_features(rules, obs, chosen).features)
    bits = inputs.features[:, NUM_MOVE_FEATURES:].numpy() > 0.5
    blocks = dict(
        zip(
            [name for name, _ in AFTER_STATE],
            np.split(bits, np.cumsum([w for _, w in AFTER_STATE])[:-1], axis=1),
            strict=True,
        )
    )
    going = ~core.step(actions).round_over
    assert going.sum() > 100
    np.testing.assert_array_equal(blocks["hand_after"][going], unpack_tiles(core.hands[rows, seat])[going])
    np.testing.assert_array_equal(blocks["tile"], np.arange(28) == (actions % 28)[:, None])
    showing = number_sets((core.ends[:, :, None] == np.arange(7)).any(axis=1))
    np.testing.assert_array_equal(
        blocks["numbers_after"][going], (showing[:, None] >> np.arange(7) & 1)[going] > 0
    )
    nxt = (seat + 1) % players
    really = unpack_tiles(hands[rows, nxt] & FITSET[showing])
    assert not (really & ~blocks["next_fits"])[going].any()
    assert not (blocks["next_fits"] & blocks["hand_after"]).any()
    # The scalar feature next_options counts exactly those tiles.
    column = [name for name, _ in MOVE_FEATURES].index("next_options")
    options = inputs.features[:, column].numpy() * MOVE_FEATURES[column][1]
    np.testing.assert_allclose(blocks["next_fits"].sum(axis=1), options, atol=1e-4)


def test_concatenated_and_selected_batches_score_like_the_originals() -> None:
    rules = Rules.preset("draw", 2)
    play = SelfPlay(rules, 64, seed=3)
    rng = np.random.default_rng(1)
    model = ActorCritic(rules, (16,), after_state=True, move_hidden=8)
    parts, batches = [], []
    for _ in range(30):
        state = play.state()
        obs, mask = torch.from_numpy(state.obs), torch.from_numpy(state.mask)
        parts.append(model.move_inputs(obs, mask))
        batches.append((obs, mask))
        play.step(sample_legal(state.mask, rng))
    moves = MoveInputs.concat(parts)
    obs, mask = torch.cat([o for o, _ in batches]), torch.cat([m for _, m in batches])
    index = torch.from_numpy(rng.permutation(len(obs))[:500])
    with torch.no_grad():
        together, _ = model(obs, mask, moves)
        apart = torch.cat([model(o, m, p)[0] for (o, m), p in zip(batches, parts, strict=True)])
        chosen, _ = model(obs[index], mask[index], moves.select(index))
    torch.testing.assert_close(together, apart)
    torch.testing.assert_close(chosen, together[index])


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
