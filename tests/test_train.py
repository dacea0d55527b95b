"""PPO self-play training: learning, TensorBoard output, checkpoints, config checks, masking."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from agents.arena.config import ArenaConfig
from agents.arena.tournament import run_arena
from agents.bots.registry import load_policy
from agents.configuration import ConfigError
from agents.training import train as train_script
from agents.training.checkpoint import (
    CheckpointError,
    CheckpointPolicy,
    NetworkPolicy,
    export_policy,
    load_checkpoint,
)
from agents.training.config import load_train_config, parse_train_config
from agents.training.distributed import LocalRollouts, Worker, draw_past, join_rollouts
from agents.training.network import ActorCritic
from agents.training.ppo import Opponents, Rollout, collect_rollout, compute_advantages
from agents.training.state import RunState, load_init_weights
from domino_env import Rules
from domino_env.engine.observation import observation_fields
from domino_env.envs.selfplay import SelfPlay

ROOT = Path(__file__).resolve().parent.parent

TINY = {
    "preset": "block",
    "players": 2,
    "num_games": 64,
    "rollout_steps": 16,
    "total_updates": 4,
    "model": {"hidden": [32, 32]},
    "eval": {"every": 0},
    "checkpoint": {"every": 1, "keep": 2},
    "opponents": {"self": 0.75, "past": 0.25},
    "snapshots": {"every": 1, "keep": 2},
    "progress": False,
}


CLEANRL_TAGS = (
    "losses/value_loss",
    "losses/policy_loss",
    "losses/entropy",
    "losses/old_approx_kl",
    "losses/approx_kl",
    "losses/clipfrac",
    "charts/learning_rate",
    "charts/episodic_return",
    "charts/episodic_length",
    "charts/SPS",
)


def tiny(tmp_path: Path, **changes) -> object:
    raw = {**TINY, "output_dir": str(tmp_path), "name": "tiny", **changes}
    return parse_train_config(raw)


def test_tiny_run_learns_logs_and_writes_a_checkpoint_the_arena_plays(tmp_path: Path) -> None:
    config = tiny(
        tmp_path,
        num_games=128,
        rollout_steps=32,
        total_updates=10,
        ppo={"lr": 0.001},
        eval={"every": 5, "deals": 200, "opponents": ["random"]},
    )
    stats = train_script.train(config)
    assert stats["update"] == 10 and stats["SPS"] > 0
    # Untrained (near-uniform, greedy) play is about random's level; ten updates win clearly more.
    assert stats["eval_score"] > 1.0
    events = EventAccumulator(str(config.run_dir))
    events.Reload()
    scalars = set(events.Tags()["scalars"])
    assert set(CLEANRL_TAGS) <= scalars  # CleanRL's names, so its users' dashboards and scripts work
    assert {
        "losses/explained_variance",
        "eval/diff_vs_random",
        "eval/diff_vs_best",  # the second evaluation also plays the best checkpoint so far
        "charts/return_vs_past",
    } <= scalars
    assert len(events.Scalars("eval/diff_vs_random")) == 2 and len(events.Scalars("eval/diff_vs_best")) == 1
    assert len(events.Scalars("losses/policy_loss")) == 10
    lengths = [event.value for event in events.Scalars("charts/episodic_length")]
    assert all(1 <= length <= 7 for length in lengths)  # 2p block: a seat plays at most its 7 tiles
    assert "config/text_summary" in events.Tags()["tensors"]
    best = config.run_dir / "checkpoints" / "best.pt"
    assert sorted(p.name for p in best.parent.iterdir()) == [
        "best.pt",
        "update_000009.pt",
        "update_000010.pt",
    ]
    rules = Rules.preset("block", 2)
    policy = load_policy(str(best), rules)
    assert isinstance(policy, CheckpointPolicy)
    result = run_arena(ArenaConfig(policies=[str(best), "random"], deals=100, matches=0, progress=False))
    assert result.pairs[0].diff > result.pairs[0].ci  # significantly better than random


def test_exported_policy_file_is_small_plays_like_its_checkpoint_and_cannot_resume(tmp_path: Path) -> None:
    config = tiny(tmp_path, total_updates=2, opponents={"self": 1.0})
    train_script.train(config)
    source = config.run_dir / "checkpoints" / "update_000002.pt"
    target = tmp_path / "shipped" / "block-2p-ppo.pt"
    export_policy([source], target)
    assert target.stat().st_size < source.stat().st_size / 2
    rules = Rules.preset("block", 2)
    state = SelfPlay(rules, 64, seed=5).state()
    full, small = load_policy(str(source), rules), load_policy(str(target), rules)
    assert small.name == "block-2p-ppo"
    np.testing.assert_array_equal(full(state.obs, state.mask), small(state.obs, state.mask))
    with pytest.raises(CheckpointError, match="missing optimizer"):
        load_checkpoint(target)  # what --resume reads: a policy file has no training state


def test_crash_and_resume_repeats_the_uninterrupted_run(tmp_path: Path, monkeypatch) -> None:
    straight = tiny(tmp_path / "straight")
    train_script.train(straight)
    crashing = tiny(tmp_path / "crash")
    real_update, calls = train_script.ppo_update, []

    def crash_on_third(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real_update(*args, **kwargs)

    monkeypatch.setattr(train_script, "ppo_update", crash_on_third)
    with pytest.raises(KeyboardInterrupt):
        train_script.train(crashing)
    monkeypatch.setattr(train_script, "ppo_update", real_update)
    folder = crashing.run_dir / "checkpoints"
    assert [p.name for p in sorted(folder.glob("update_*.pt"))] == ["update_000001.pt", "update_000002.pt"]
    (folder / ".update_000003.pt.abc.tmp").write_bytes(b"half a checkpoint")  # a write the crash cut short
    with pytest.raises(ConfigError, match="--resume"):
        train_script.train(crashing)  # refuses to start over on top of existing checkpoints
    stats = train_script.train(crashing, resume=True)
    assert stats["update"] == 4
    done, reference = (
        load_checkpoint(c.run_dir / "checkpoints" / "update_000004.pt") for c in (crashing, straight)
    )
    assert done["update"] == reference["update"] == 4
    assert done["global_step"] == reference["global_step"]
    for key, tensor in reference["model"].items():
        assert torch.equal(done["model"][key], tensor), key
    assert torch.equal(done["rng"]["torch"], reference["rng"]["torch"])
    assert len(done["snapshots"]) == 2  # updates 3 and 4: the pool the "past" opponent drew from
    for mine, theirs in zip(done["snapshots"], reference["snapshots"], strict=True):
        assert all(torch.equal(mine[key], theirs[key]) for key in theirs)
    assert all(torch.equal(done["snapshots"][-1][k], v) for k, v in done["model"].items())


def same_rollouts(a: Rollout, b: Rollout) -> bool:
    """Field for field, the per-move features tensor for tensor."""
    for field in dataclasses.fields(Rollout):
        mine, theirs = getattr(a, field.name), getattr(b, field.name)
        if field.name == "moves":
            tensors = [(getattr(x, k.name), getattr(y, k.name)) for x, y in zip(mine, theirs, strict=True)
                       for k in dataclasses.fields(x)]  # fmt: skip
            if not all(torch.equal(x, y) for x, y in tensors):
                return False
        elif not (np.array_equal(mine, theirs) if isinstance(mine, np.ndarray) else mine == theirs):
            return False
    return True


def test_shards_played_apart_in_any_order_are_the_local_rollout(tmp_path: Path) -> None:
    """Ray actors (``distributed.Worker``, here in this process) play the shards they are handed, in
    whatever order they come; joined in shard order they are the local run's rollout, array for array
    (deals, sampled moves, bots and the ``past`` snapshot seeded per shard): the worker count never
    changes a run. Another update or seed plays other games."""
    mix = {"self": 0.5, "strong": 0.25, "past": 0.25}
    config = tiny(tmp_path, num_games=20, shard_games=6, opponents=mix, model={"hidden": [16]})
    rules, cpu = config.build_rules(), torch.device("cpu")
    state = RunState.start(config, rules, cpu, resuming=False)
    state.snapshots.append({k: v + 0.01 for k, v in state.snapshots[0].items()})  # two to draw from
    local = LocalRollouts(config, rules, cpu)
    rollout = local.collect(state.model, 3, state.snapshots, np.random.default_rng(1))
    threads = torch.get_num_threads()
    try:
        workers = [Worker(config.to_dict()) for _ in range(3)]
        past = draw_past(config, state.snapshots, np.random.default_rng(1))
        weights = state.model.state_dict()
        parts = {shard: workers[shard % 3].collect(weights, past, 3, shard) for shard in (3, 1, 0, 2)}
    finally:
        torch.set_num_threads(threads)  # each Worker sets one thread, an actor's CPU
    assert [part.valid.shape[1] for _, part in sorted(parts.items())] == [6, 6, 6, 2]
    assert same_rollouts(join_rollouts([parts[shard] for shard in range(4)]), rollout)
    assert rollout.episode_returns["strong"] and rollout.episode_returns["past"]
    other = local.collect(state.model, 4, state.snapshots, np.random.default_rng(1))
    assert not np.array_equal(other.obs, rollout.obs)


def test_resume_refuses_a_different_config(tmp_path: Path) -> None:
    train_script.train(tiny(tmp_path, total_updates=1))
    with pytest.raises(CheckpointError, match=r"different config \(model"):
        train_script.train(tiny(tmp_path, total_updates=2, model={"hidden": [16]}), resume=True)
    with pytest.raises(CheckpointError, match="no checkpoint"):
        train_script.train(tiny(tmp_path, name="other"), resume=True)


def test_truncated_or_incompatible_checkpoint_is_rejected_clearly(tmp_path: Path, capsys) -> None:
    config = tiny(tmp_path, total_updates=1)
    train_script.train(config)
    good = config.run_dir / "checkpoints" / "update_000001.pt"
    broken = tmp_path / "broken.pt"
    broken.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(CheckpointError, match=r"broken\.pt: unreadable \(truncated"):
        load_checkpoint(broken)
    with pytest.raises(ValueError, match=r"broken\.pt"):
        load_policy(str(broken), Rules.preset("block", 2))
    with pytest.raises(CheckpointError, match="trained for block with 2 players"):
        CheckpointPolicy(good, Rules.preset("partnership", 4))
    not_ours = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(3)}, not_ours)
    with pytest.raises(CheckpointError, match="missing format"):
        load_checkpoint(not_ours)
    # The command line turns these into a message and exit status 2, not a traceback.
    good.write_bytes(broken.read_bytes())
    argv = [
        str(ROOT / "configs" / "train" / "quickstart.yaml"),
        f"output_dir={tmp_path}",
        "name=tiny",
        "progress=false",
    ]
    assert train_script.main([*argv, *(f"{k}={v}" for k, v in _flat(TINY).items()), "--resume"]) == 2
    assert "update_000001.pt: unreadable" in capsys.readouterr().out.replace("\n", "")  # rich wraps lines


def _flat(raw: dict, prefix: str = "") -> dict[str, object]:
    out = {}
    for key, value in raw.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = str(value).replace(" ", "").replace("False", "false")
    return out


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("totl_updates=5", "unknown key 'totl_updates' in the training config; did you mean 'total_updates'"),
        ("ppo.lrr=0.1", "unknown key 'ppo.lrr' in ppo; did you mean 'lr'"),
        ("num_games=lots", "num_games must be an integer, got 'lots'"),
        ("ppo.norm_adv=3", "ppo.norm_adv must be true or false"),
        ("preset=blok", "unknown preset 'blok'.*did you mean 'block'"),
        ("opponents.strnog=0.5", "opponents.strnog: unknown bot or agent 'strnog'; did you mean 'strong'"),
        ("eval.opponents=[randm]", r"eval.opponents\[0\]: unknown bot or agent 'randm'; did you mean 'ra"),
        ("rollout_steps=0", "rollout_steps must be at least 1"),
    ],
)
def test_config_errors_name_the_key(override: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_train_config(ROOT / "configs" / "train" / "quickstart.yaml", [override])


TRAINING_CONFIGS = sorted((ROOT / "configs" / "train").glob("*.yaml"))


@pytest.mark.parametrize("path", TRAINING_CONFIGS, ids=lambda p: p.name)
def test_shipped_configs_load(path: Path) -> None:
    config = load_train_config(path, ["ppo.lr=0.0001"])
    assert config.name == path.stem and config.ppo.lr == 0.0001
    config.build_rules()


def test_exponent_floats_are_numbers_and_words_are_not() -> None:
    config = load_train_config(ROOT / "configs" / "train" / "quickstart.yaml", ["ppo.lr=1e-4"])
    assert config.ppo.lr == 0.0001
    with pytest.raises(ConfigError, match=r"ppo\.lr must be a number"):
        load_train_config(ROOT / "configs" / "train" / "quickstart.yaml", ["ppo.lr=fast"])


@pytest.mark.parametrize("move_features", [False, True])
def test_masked_logits_never_pick_illegal_actions(move_features: bool) -> None:
    rules = Rules.preset("draw", 2)
    torch.manual_seed(0)
    model = ActorCritic(rules, (32,), move_features)
    with torch.no_grad():  # make illegal actions very attractive before masking
        model.policy_head.bias.fill_(50.0)
        model.policy_head.weight.mul_(1000.0)
    play = SelfPlay(rules, 256, seed=1)
    for _ in range(20):
        state = play.state()
        obs, mask = torch.from_numpy(state.obs), torch.from_numpy(state.mask)
        logits, _ = model(obs, mask)
        assert (logits.softmax(dim=1)[~mask] == 0).all()
        features = model.encoder(obs)
        for greedy in (True, False):
            actions, _, _ = model.act(obs, mask, greedy=greedy)
            assert mask[torch.arange(len(mask)), actions].all()
            logprob, entropy, _ = model.evaluate(features, mask, actions, model.move_inputs(obs, mask))
            assert torch.isfinite(logprob).all() and torch.isfinite(entropy).all()
        play.step(actions.numpy())


def test_gae_follows_each_seats_own_decisions() -> None:
    # One game: seat 0 moves at steps 0 and 2 (round ends after 2, reward +1); seat 1 at step 1, cut off
    # by the rollout's end, bootstraps from 0.3.
    rollout = Rollout(
        obs=np.zeros((3, 1, 1)),
        mask=np.zeros((3, 1, 1)),
        actions=np.zeros((3, 1), dtype=np.int64),
        logprobs=np.zeros((3, 1), dtype=np.float32),
        values=np.array([[0.5], [0.2], [0.1]], dtype=np.float32),
        rewards=np.array([[0.0], [0.25], [1.0]], dtype=np.float32),
        dones=np.array([[0.0], [0.0], [1.0]], dtype=np.float32),
        next_index=np.array([[2], [-1], [-1]]),
        bootstrap=np.array([[0.0], [0.3], [0.0]], dtype=np.float32),
        valid=np.ones((3, 1), dtype=bool),
    )
    advantages, returns = compute_advantages(rollout, gamma=1.0, gae_lambda=1.0)
    np.testing.assert_allclose(advantages[:, 0], [1.0 - 0.5, 0.25 + 0.3 - 0.2, 1.0 - 0.1], rtol=1e-6)
    np.testing.assert_allclose(returns[:, 0], [1.0, 0.55, 1.0], rtol=1e-6)


def test_round_end_rewards_land_on_each_seats_last_move() -> None:
    rules = Rules.preset("block", 2)  # no scoring during the round: every reward is a round end
    torch.manual_seed(0)  # with some weights a seat never has a move in a round: its reward has no transition
    model = ActorCritic(rules, (16,))
    play = SelfPlay(rules, 32, seed=3)
    opponents = Opponents.assign(32, rules, {"self": 1.0}, {})
    rollout = collect_rollout(model, play, 60, opponents, torch.device("cpu"), reward_scale=1.0)
    rewarded = rollout.rewards != 0
    assert rewarded.any()
    assert (rollout.dones[rewarded] == 1).all()
    episodes = len(rollout.episode_returns["self"]) // 2
    # Both seats' last moves of every finished round; a seat that never had a legal move all round
    # (its passes are automatic) has no transition to mark.
    assert episodes < rollout.dones.sum() <= 2 * episodes
    assert (rollout.next_index[rollout.dones == 1] == -1).all()  # nothing follows an episode's end
    for game in range(32):
        assert rollout.rewards[:, game].sum() == pytest.approx(0.0, abs=1e-4)  # zero-sum, per game
    np.testing.assert_allclose(
        np.abs(rollout.rewards).sum(), np.abs(rollout.episode_returns["self"]).sum(), rtol=1e-5
    )


def test_opponent_games_record_only_the_learners_seat() -> None:
    rules = Rules.preset("block", 2)
    model = ActorCritic(rules, (16,))
    play = SelfPlay(rules, 40, seed=4)
    bots = {"heaviest": load_policy("heaviest", rules)}
    opponents = Opponents.assign(40, rules, {"self": 0.5, "heaviest": 0.5}, bots)
    assert opponents.learner.sum() == 20 * 2 + 20
    rollout = collect_rollout(model, play, 30, opponents, torch.device("cpu"))
    pool = opponents.opponent >= 0
    assert rollout.valid[:, ~pool].all()
    assert 0 < rollout.valid[:, pool].mean() < 0.75
    assert rollout.episode_returns["heaviest"]


def test_partners_share_the_learner_in_opponent_games() -> None:
    rules = Rules.preset("partnership", 4)
    bots = {"strong": load_policy("strong", rules)}
    opponents = Opponents.assign(8, rules, {"self": 0.5, "strong": 0.5}, bots)
    assert opponents.learner[:4].all()
    expected = [[True, False, True, False], [False, True, False, True]] * 2
    assert opponents.learner[4:].tolist() == expected


def test_win_reward_is_plus_minus_one_at_episode_ends_only() -> None:
    rules = Rules.preset("block", 2)
    model = ActorCritic(rules, (16,))
    opponents = Opponents.assign(32, rules, {"self": 1.0}, {})
    rollouts = {}
    for reward in ("points", "win"):
        torch.manual_seed(0)  # the same moves in the same deals
        play = SelfPlay(rules, 32, seed=6)
        rollouts[reward] = collect_rollout(model, play, 60, opponents, torch.device("cpu"), reward=reward)
    wins = rollouts["win"]
    assert set(np.unique(wins.rewards)) == {-1.0, 0.0, 1.0}
    assert (wins.dones[wins.rewards != 0] == 1).all()
    # Block rounds score only at their end: a seat won exactly where its points were positive.
    np.testing.assert_array_equal(np.sign(rollouts["points"].rewards), wins.rewards)


def test_reward_kind_is_checked() -> None:
    assert load_train_config(ROOT / "configs" / "train" / "quickstart.yaml", ["reward=win"]).reward == "win"
    with pytest.raises(ConfigError, match="reward"):
        load_train_config(ROOT / "configs" / "train" / "quickstart.yaml", ["reward=wins"])


def test_a_greedy_policy_reads_only_the_rows_with_a_choice_and_plays_the_networks_argmax() -> None:
    """Forced moves (one legal action, a third of a playout's decisions) skip the network; every
    action is the one the network's argmax over all the rows gives."""
    rules = Rules.preset("block", 4)
    torch.manual_seed(3)
    model = ActorCritic(rules, (32,), move_features=True, after_state=True, move_hidden=16)
    play = SelfPlay(rules, 256, seed=5)
    policy = NetworkPolicy("greedy", model, greedy=True)
    read: list[int] = []
    forward = model.forward
    model.forward = lambda obs, mask, *rest: read.append(len(obs)) or forward(obs, mask, *rest)
    forced = choices = 0
    for _ in range(30):
        state = play.state()
        with torch.no_grad():
            logits, _ = forward(torch.from_numpy(state.obs), torch.from_numpy(state.mask))
        read.clear()
        actions = policy(state.obs, state.mask)
        np.testing.assert_array_equal(actions, logits.argmax(dim=1).numpy())
        choice = int((state.mask.sum(axis=1) > 1).sum())
        assert read == ([choice] if choice else [])
        forced, choices = forced + len(state.mask) - choice, choices + choice
        play.step(actions)
    assert forced > 0 and choices > 0


def test_sampled_actions_follow_the_policys_probabilities() -> None:
    rules = Rules.preset("block", 2)
    torch.manual_seed(1)
    model = ActorCritic(rules, (16,))
    with torch.no_grad():
        model.policy_head.weight.mul_(300.0)  # a clearly non-uniform policy
    state = SelfPlay(rules, 1, seed=2).state()
    obs = torch.from_numpy(state.obs).expand(40_000, -1).contiguous()
    mask = torch.from_numpy(state.mask).expand(40_000, -1).contiguous()
    with torch.no_grad():
        logits, _ = model(obs[:1], mask[:1])
        actions, logprob, _ = model.act(obs, mask)
    probs = logits.softmax(dim=1)[0]
    frequencies = torch.bincount(actions, minlength=len(probs)).double() / len(actions)
    assert probs.max() < 0.9 and (probs > 0.05).sum() >= 2
    torch.testing.assert_close(frequencies, probs.double(), atol=0.01, rtol=0)
    torch.testing.assert_close(logprob, probs.log()[actions])


def test_public_api_names_the_envs_and_loads_a_policy_without_rules() -> None:
    import domino_env
    from agents import load_policy as public_load_policy

    game = domino_env.env(preset="block", players=2)
    game.reset(seed=0)
    assert game.agent_selection == "player_0"
    assert {"env", "raw_env", "parallel_env"} <= set(domino_env.__all__)
    policy = public_load_policy("checkpoints/block-2p-ppo.pt")  # the rules come from the checkpoint
    assert policy.model.rules == Rules.preset("block", 2)
    with pytest.raises(CheckpointError, match="trained for preset 'block', not 'draw'"):
        public_load_policy("checkpoints/block-2p-ppo.pt", Rules.preset("draw", 2))
    with pytest.raises(ValueError, match="needs the rules"):
        public_load_policy("strong")


def test_model_init_starts_from_a_trained_network(tmp_path: Path) -> None:
    config = tiny(
        tmp_path,
        name="init",
        total_updates=1,
        model={"hidden": [128, 128], "init": "checkpoints/block-2p-ppo.pt"},
    )
    start = load_checkpoint("checkpoints/block-2p-ppo.pt", ("model",))["model"]
    model = ActorCritic(Rules.preset("block", 2), (128, 128))
    load_init_weights(model, config.model.init, Rules.preset("block", 2))
    assert all(torch.equal(model.state_dict()[k], start[k]) for k in start)
    model.ignore_game_scores()  # what a run of single block rounds does next: none shows a score
    start = model.state_dict()
    train_script.train(config)  # one update on from the shipped agent
    first = load_checkpoint(config.run_dir / "checkpoints" / "update_000001.pt")["model"]
    change = max(float((first[k] - start[k]).abs().max()) for k in start)
    assert 0 < change < 0.05  # moved, but from the trained weights, not from a fresh network
    wrong = tiny(tmp_path, name="wrong", model={"hidden": [32, 32], "init": "checkpoints/block-2p-ppo.pt"})
    with pytest.raises(CheckpointError, match=r"model\.init checkpoints/block-2p-ppo\.pt: its network"):
        train_script.train(wrong)
    other = tiny(
        tmp_path,
        name="other",
        preset="draw",
        model={"hidden": [128, 128], "init": "checkpoints/block-2p-ppo.pt"},
    )
    with pytest.raises(CheckpointError, match="trained for preset 'block', not 'draw'"):
        train_script.train(other)


def test_match_episodes_are_evaluated_and_kept_by_matches_won(tmp_path: Path) -> None:
    config = tiny(
        tmp_path, name="match", episode="match", reward="win", total_updates=2, rollout_steps=32,
        eval={"every": 1, "deals": 6, "opponents": ["random"]},
    )  # fmt: skip
    stats = train_script.train(config)
    scalars = EventAccumulator(str(config.run_dir)).Reload().Tags()["scalars"]
    assert {"eval/match_win_vs_random", "eval/match_win_vs_best"} <= set(scalars)
    best = load_checkpoint(config.run_dir / "checkpoints" / "best.pt")
    assert 0.0 <= best["best_score"] <= 1.0 and 0.0 <= stats["eval_score"] <= 1.0


def test_a_finished_run_says_how_to_look_measure_and_play_and_a_second_one_says_it_is_done(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """After ``make train``: the TensorBoard, arena and web table commands; a second ``make train``
    (the same config, ``--resume``) said "300/300 ... 0 steps/s": it now says the run is complete
    and how to train longer or start another, as the command was started (``domino-train``)."""
    monkeypatch.setattr(sys, "argv", ["/venv/bin/domino-train"])
    args = ["quickstart", "total_updates=1", "num_games=8", "rollout_steps=4", "eval.deals=2",
            f"output_dir={tmp_path}", "progress=false"]  # fmt: skip
    assert train_script.main(args) == 0
    first = capsys.readouterr().out.replace("\n", " ")
    assert "1 torch thread" in first
    best = tmp_path / "quickstart" / "checkpoints" / "best.pt"
    assert f"tensorboard --logdir {tmp_path}" in first
    assert f"policies=[{best},strong,random]" in first and f"domino-serve --checkpoint {best}" in first
    assert train_script.main([*args, "--resume"]) == 0
    second = capsys.readouterr().out
    assert "quickstart is complete (1 of 1 updates" in second
    assert "domino-train quickstart num_games=8" in second and "total_updates=100 --resume" in second
    assert "name=quickstart-2" in second and "steps/s" not in second


@pytest.mark.parametrize(
    ("preset", "episode", "reads_scores"),
    [("block", "round", False), ("all_fives", "round", True), ("block", "match", True)],
)
def test_a_network_that_never_saw_a_game_score_plays_a_match_as_it_plays_a_round(
    tmp_path: Path, preset: str, episode: str, reads_scores: bool
) -> None:
    """Rounds of a preset that scores at the round's end show 0-0 throughout: the trained network
    must not read the scores a match shows (their weights would be random). Fives score during the
    round, and match episodes show scores, so those networks do read them."""
    config = tiny(tmp_path, preset=preset, episode=episode, total_updates=1)
    train_script.train(config)
    rules = Rules.preset(preset, 2)
    model = load_policy(str(config.run_dir / "checkpoints" / "update_000001.pt"), rules).model
    play = SelfPlay(rules, 64, seed=3)
    obs, mask = torch.from_numpy(play.state().obs), torch.from_numpy(play.state().mask)
    scored = obs.clone()
    scored[:, observation_fields(rules)["scores"]] = torch.tensor([37, 52], dtype=scored.dtype)
    with torch.no_grad():
        same = torch.equal(model(obs, mask)[0], model(scored, mask)[0])
    assert same != reads_scores


def test_zeroing_the_unseen_score_weights_changes_nothing_else_in_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Those weights multiply inputs that are 0 in every position of the run: they get no gradient,
    so the run with them random and the run with them zeroed differ in them alone."""
    zeroed = tiny(tmp_path, name="zeroed", total_updates=2)
    train_script.train(zeroed)
    monkeypatch.setattr(ActorCritic, "ignore_game_scores", lambda self: None)
    kept = tiny(tmp_path, name="kept", total_updates=2)
    train_script.train(kept)
    one, two = (
        load_checkpoint(c.run_dir / "checkpoints" / "update_000002.pt")["model"] for c in (zeroed, kept)
    )
    model = ActorCritic(Rules.preset("block", 2), (32, 32))
    columns = torch.zeros(model.trunk[0].weight.shape[1], dtype=torch.bool)
    columns[model.encoder.scaled_columns("scores")] = True
    assert columns.sum() == 2 and (one["trunk.0.weight"][:, columns] == 0).all()
    assert (two["trunk.0.weight"][:, columns] != 0).any()
    assert torch.equal(one["trunk.0.weight"][:, ~columns], two["trunk.0.weight"][:, ~columns])
    assert all(torch.equal(one[key], two[key]) for key in one if key != "trunk.0.weight")
