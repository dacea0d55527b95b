"""The privileged critic: it reads the other seats' hands in training, and the policy never does.

The acting path is held to the observation three ways: the policy's outputs do not
move when the critic's weights do, no gradient of the policy loss reaches the
critic, and a rollout samples exactly the same moves whether or not the network
has a critic (same policy weights, same torch seed).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from agents.bots.registry import load_policy
from agents.training import train as train_script
from agents.training.checkpoint import load_checkpoint
from agents.training.config import parse_train_config
from agents.training.distributed import join_rollouts
from agents.training.network import ActorCritic, hidden_size
from agents.training.ppo import Opponents, collect_rollout, hidden_tiles
from domino_env import Rules
from domino_env.engine.deals import BIT
from domino_env.envs.selfplay import SelfPlay

RULES = Rules.preset("partnership", 4)
CPU = torch.device("cpu")


def rollout_of(model: ActorCritic, seed: int = 3):
    torch.manual_seed(seed)
    play = SelfPlay(RULES, 32, seed=seed)
    return collect_rollout(model, play, 12, Opponents.assign(32, RULES, {"self": 1.0}, {}), CPU)


def test_hidden_tiles_are_the_other_seats_hands_in_seat_order() -> None:
    play = SelfPlay(RULES, 16, seed=1)
    games, seats = np.arange(16), np.arange(16) % 4
    bits = hidden_tiles(play.core, games, seats).reshape(16, 3, 28)
    for k in range(1, 4):
        hands = play.core.hands[games, (seats + k) % 4]
        packed = (bits[:, k - 1].astype(np.uint64) * BIT).sum(axis=1, dtype=np.uint64)
        np.testing.assert_array_equal(packed, hands)
    assert hidden_size(RULES) == 3 * 28


def test_the_policy_does_not_read_the_critic() -> None:
    model = ActorCritic(RULES, (32, 32), privileged_critic=True)
    play = SelfPlay(RULES, 8, seed=2)
    state = play.state()
    obs, mask = torch.from_numpy(state.obs), torch.from_numpy(state.mask)
    before = model(obs, mask)[0]
    with torch.no_grad():
        for parameter in model.critic.parameters():
            parameter.add_(torch.randn_like(parameter))
    torch.testing.assert_close(model(obs, mask)[0], before, rtol=0, atol=0)
    actions = torch.from_numpy(state.mask.argmax(axis=1))
    hidden = torch.from_numpy(hidden_tiles(play.core, np.arange(8), state.seat))
    logprob, entropy, value = model.evaluate(
        model.encoder(obs), mask, actions, model.move_inputs(obs, mask), hidden
    )
    (logprob.sum() + entropy.sum()).backward()
    assert all(p.grad is None for p in model.critic.parameters())
    value.sum().backward()
    assert all(p.grad is not None for p in model.critic.parameters())


def test_rollouts_sample_the_same_moves_with_or_without_the_critic() -> None:
    plain = ActorCritic(RULES, (32, 32))
    privileged = ActorCritic(RULES, (32, 32), privileged_critic=True)
    privileged.load_state_dict(plain.state_dict(), strict=False)
    a, b = rollout_of(plain), rollout_of(privileged)
    np.testing.assert_array_equal(a.actions, b.actions)
    np.testing.assert_array_equal(a.logprobs, b.logprobs)
    assert a.hidden is None and b.hidden is not None
    assert b.hidden[b.valid].any(axis=1).all()  # every decision saw the hands its critic reads
    assert not np.array_equal(a.values, b.values)  # the values are the critic's
    joined = join_rollouts([b, b])
    assert joined.hidden.shape == (12, 64, hidden_size(RULES))
    assert join_rollouts([a, a]).hidden is None


def test_warmup_trains_the_critic_alone_then_the_agent_plays_from_its_observation(tmp_path: Path) -> None:
    config = parse_train_config(
        {
            "preset": "block",
            "players": 2,
            "num_games": 64,
            "rollout_steps": 16,
            "total_updates": 2,
            "model": {"hidden": [128, 128], "privileged_critic": True, "init": "block-2p-ppo"},
            "ppo": {"critic_warmup": 1},
            "eval": {"every": 0},
            "checkpoint": {"every": 1, "keep": 2},
            "progress": False,
            "output_dir": str(tmp_path),
            "name": "privileged",
        }
    )
    train_script.train(config)
    start_model = ActorCritic(Rules.preset("block", 2), (128, 128))
    start_model.load_state_dict(load_checkpoint("checkpoints/block-2p-ppo.pt", ("model",))["model"])
    start_model.ignore_game_scores()  # what a run of single block rounds does first: none shows a score
    start = start_model.state_dict()
    checkpoints = config.run_dir / "checkpoints"
    first = load_checkpoint(checkpoints / "update_000001.pt")["model"]
    second = load_checkpoint(checkpoints / "update_000002.pt")["model"]
    assert all(torch.equal(first[k], start[k]) for k in start)  # warm-up: the policy did not move
    assert any(not torch.equal(first[k], second[k]) for k in start)  # then it did
    assert any(not torch.equal(first[k], second[k]) for k in first if k.startswith("critic."))
    policy = load_policy(str(checkpoints / "update_000002.pt"))
    play = SelfPlay(Rules.preset("block", 2), 16, seed=0)
    state = play.state()
    actions = policy(state.obs, state.mask)
    assert state.mask[np.arange(16), actions].all()


def test_a_resumed_privileged_run_repeats_the_uninterrupted_one(tmp_path: Path) -> None:
    """The critic, its optimizer state and the warm-up (which ends after the halt) resume exactly."""

    def run(folder: Path, updates: int):
        return parse_train_config(
            {
                "preset": "block",
                "players": 2,
                "seed": 3,
                "threads": 1,
                "num_games": 16,
                "rollout_steps": 8,
                "total_updates": updates,
                "model": {"hidden": [32, 32], "privileged_critic": True},
                "ppo": {"critic_warmup": 2},
                "eval": {"every": 0},
                "checkpoint": {"every": 1, "keep": 10},
                "opponents": {"self": 0.75, "past": 0.25},
                "progress": False,
                "output_dir": str(folder),
                "name": "run",
            }
        )

    straight = run(tmp_path / "straight", 4)
    train_script.train(straight)
    train_script.train(run(tmp_path / "halted", 1))
    resumed = run(tmp_path / "halted", 4)
    train_script.train(resumed, resume=True)
    mine = load_checkpoint(resumed.run_dir / "checkpoints" / "update_000004.pt")
    theirs = load_checkpoint(straight.run_dir / "checkpoints" / "update_000004.pt")
    assert mine["model"].keys() == theirs["model"].keys()
    assert any(key.startswith("critic.") for key in mine["model"])
    assert all(torch.equal(mine["model"][k], theirs["model"][k]) for k in theirs["model"])
