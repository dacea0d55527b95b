"""Inference for ``pimc``: replaying the public moves from sampled deals, and weighing the deals.

The replay is held to the real game: from every sampled deal of every block preset,
the replayed round must give the observer exactly the observation it had. The
weighing is held to a case with a known answer: when the other seat is a
deterministic bot and the model is that bot, the true deal explains every move
(log-likelihood 0), and a deal that contradicts a move is weighed down.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.bots.features import Board
from agents.bots.heuristic import StrongBot
from agents.bots.inference import MIN_PROBABILITY, move_log_likelihood, replay
from agents.bots.sampler import determinise
from agents.bots.search import PimcBot
from domino_env import DominoCore, Rules
from domino_env.engine.observation import observation_fields
from domino_env.engine.rules import all_configurations

BLOCK = [(name, p) for name, p in all_configurations() if not Rules.preset(name, p).drawing]


class Deterministic:
    """A bot as an opponent model: probability 1 on its move."""

    def __init__(self, bot) -> None:
        self.bot = bot

    def probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        out = np.zeros(mask.shape)
        out[np.arange(len(obs)), self.bot(obs, mask)] = 1.0
        return out


@pytest.mark.parametrize("episode", ["round", "match"])
@pytest.mark.parametrize(("name", "players"), BLOCK)
def test_replays_from_sampled_deals_give_the_observers_observation(
    name: str, players: int, episode: str
) -> None:
    """Exactly, but for the game scores in match play (a replay starts from 0)."""
    rules, samples, rng = Rules.preset(name, players), 4, np.random.default_rng(1)
    core = DominoCore(rules, 48, seed=2, episode=episode)
    for _ in range(int(rng.integers(3, 3 * players)) + (40 if episode == "match" else 0)):
        core.step(core.random_actions(rng))
    if episode == "match":
        assert core.rounds_played.max() > 0  # later rounds, whose openers are not forced in idrd_block
    obs = core.observe()
    board = Board(rules, obs)
    replayed, actions, count = replay(rules, board, determinise(board, samples, rng).hands)
    for step in range(int(count.max())):
        active = count > step
        replayed.step(np.where(active, actions[:, step], 0), active=active)
    seen = replayed.observe(np.zeros(48 * samples, dtype=np.intp))
    keep = np.ones(obs.shape[1], dtype=bool)
    keep[observation_fields(rules)["scores"]] = episode == "round"
    assert (seen[:, keep] == np.repeat(obs, samples, axis=0)[:, keep]).all()


def test_the_true_deal_explains_a_deterministic_opponent() -> None:
    rules, rng = Rules.preset("block", 2), np.random.default_rng(3)
    strong = StrongBot(rules)
    core = DominoCore(rules, 200, seed=4)
    for _ in range(6):  # seat 0 random, seat 1 strong
        obs, mask = core.observe(), core.legal_mask()
        actions = core.random_actions(rng)
        ones = core.to_play == 1
        actions[ones] = strong(obs[ones], mask[ones])
        core.step(actions)
    games = np.flatnonzero(core.to_play == 0)
    obs = core.observe()[games]
    sampled = determinise(Board(rules, obs), 8, rng).hands
    true = core.hands[games][:, None, :]
    loglik = move_log_likelihood(rules, obs, np.concatenate([true, sampled], axis=1), Deterministic(strong))
    assert (loglik[:, 0] == 0).all()
    assert (loglik <= 0).all() and (loglik[:, 1:] < 0).any()
    assert np.isclose(
        loglik.min(), np.log(MIN_PROBABILITY) * np.round(loglik.min() / np.log(MIN_PROBABILITY))
    )


def test_inference_needs_a_block_preset_and_a_network() -> None:
    with pytest.raises(ValueError, match="'draw' draws"):
        PimcBot(Rules.preset("draw", 2), inference="block-2p-ppo")
    with pytest.raises(ValueError, match="inference must be a checkpoint"):
        PimcBot(Rules.preset("block", 2), inference="strong")


def test_pimc_with_inference_plays_legal_moves() -> None:
    rules = Rules.preset("block", 2)
    bot = PimcBot(rules, seed=0, samples=4, inference="block-2p-distill-ppo", candidates=3)
    core = DominoCore(rules, 32, seed=5)
    for _ in range(8):
        obs, mask = core.observe(), core.legal_mask()
        actions = bot(obs, mask)
        assert mask[np.arange(32), actions].all()
        core.step(actions)
