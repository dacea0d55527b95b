"""Distillation from the search teacher: the teacher's move values, the positions, and the loss."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from agents.arena.config import ArenaConfig
from agents.arena.tournament import run_arena
from agents.bots.features import Board, pack_tiles
from agents.bots.registry import load_policy, make_bot
from agents.bots.search import PimcBot
from agents.bots.trained import SHIPPED_DIR
from agents.configuration import ConfigError
from agents.training import distill as distill_module
from agents.training import distillation
from agents.training import train as train_script
from agents.training.checkpoint import NetworkPolicy
from agents.training.config import parse_train_config
from agents.training.distill import (
    FitOptions,
    Labelled,
    LabelRounds,
    Positions,
    collect_positions,
    data_set_moves,
    distill_epochs,
    distill_loss,
    label_positions,
    load_labels,
    save_labels,
    shuffled_piles,
)
from agents.training.move_features import NUM_MOVE_FEATURES, feature_count
from agents.training.network import ActorCritic
from domino_env import DominoCore, Rules


def choice_positions(rules: Rules, count: int, seed: int) -> Positions:
    return collect_positions(rules, make_bot("strong", rules, seed=seed), count, num_games=64, seed=seed)


@pytest.mark.parametrize(("name", "players"), [("block", 2), ("all_fives", 2), ("partnership", 4)])
def test_move_values_are_the_search_pimc_plays(name: str, players: int) -> None:
    rules = Rules.preset(name, players)
    found = choice_positions(rules, 40, seed=3)
    obs, mask = found.obs, found.mask
    assert (mask.sum(axis=1) > 1).all()
    values = PimcBot(rules, seed=5, samples=4).move_values(obs, mask)
    assert np.isfinite(values[mask]).all() and np.isnan(values[~mask]).all()
    # Same seed, same determinisations (every row has a choice): pimc plays the best-valued move.
    played = PimcBot(rules, seed=5, samples=4)(obs, mask)
    np.testing.assert_array_equal(played, np.nanargmax(values, axis=1))


def test_positions_are_seeded_have_a_choice_and_carry_their_deal() -> None:
    rules = Rules.preset("draw", 2)
    found = choice_positions(rules, 100, seed=1)
    assert found.obs.shape == (100, DominoCore(rules, 1).obs_size)
    assert found.mask.shape == (100, rules.num_actions) and (found.mask.sum(axis=1) > 1).all()
    np.testing.assert_array_equal(found.obs, choice_positions(rules, 100, seed=1).obs)
    assert not np.array_equal(found.obs, choice_positions(rules, 100, seed=2).obs)
    # The deal behind each position: relative seat 0 holds the observer's own hand, and no tile
    # is in two hands nor both in a hand and on the table.
    board = Board(rules, found.obs)
    np.testing.assert_array_equal(found.hands[:, 0], board.hand)
    assert (found.hands[:, 0] & found.hands[:, 1] == 0).all()
    on_table = pack_tiles(board.owner >= 2)
    assert (np.bitwise_or.reduce(found.hands, axis=1) & on_table == 0).all()
    assert (np.sort(found.orders, axis=1) == np.arange(28)).all()


def test_a_privileged_teacher_searches_the_true_deal() -> None:
    """Block with two players: the true deal leaves nothing to chance, so the privileged labels do not
    depend on the teacher's seed, while labels from sampled deals do."""
    rules = Rules.preset("block", 2)
    found = choice_positions(rules, 64, seed=8)
    first, second = (
        label_positions(PimcBot(rules, seed=s, samples=4), found, privileged=True) for s in (1, 2)
    )
    np.testing.assert_array_equal(first.values, second.values)
    sampled = [label_positions(PimcBot(rules, seed=s, samples=4), found).values for s in (1, 2)]
    assert not np.array_equal(*sampled)
    assert np.isfinite(first.values[found.mask]).all() and np.isnan(first.values[~found.mask]).all()


def test_shuffled_piles_keep_the_true_hands_and_draw_from_the_true_pile() -> None:
    rules = Rules.preset("draw", 2)
    found = choice_positions(rules, 64, seed=4)
    hands, orders = shuffled_piles(rules, found.obs, found.hands, 8, np.random.default_rng(0))
    assert hands.shape == (64, 8, 2) and orders.shape == (64, 8, 28)
    assert (hands == found.hands[:, None]).all()
    size = Board(rules, found.obs).field("draw_pile")[:, 0].astype(int)
    assert size.max() > 1
    for row in range(64):
        pile = set(found.orders[row, 28 - size[row] :].tolist())  # the true pile's tiles
        tails = [tuple(orders[row, s, 28 - size[row] :]) for s in range(8)]
        assert all(set(tail) == pile for tail in tails)
        if size[row] > 3:  # fresh orders, not one order repeated
            assert len(set(tails)) > 1


def test_pile_samples_average_out_the_draw_order() -> None:
    """The labels keep the true hands: what two labellings disagree on is the draw order's noise,
    which averaging 32 shuffles instead of 2 divides by about 16."""
    rules = Rules.preset("draw", 2)
    found = choice_positions(rules, 64, seed=5)

    def labels(samples: int, seed: int) -> np.ndarray:
        teacher = PimcBot(rules, seed=1, prior=0)
        rng = np.random.default_rng(seed)
        made = label_positions(teacher, found, True, pile_samples=samples, rng=rng)
        return made.values[found.mask]

    two = np.mean((labels(2, 1) - labels(2, 2)) ** 2)
    many = np.mean((labels(32, 1) - labels(32, 2)) ** 2)
    assert two > 0 and many < two / 4


@pytest.mark.parametrize("after_state", [False, True])
def test_data_set_moves_are_the_positions_move_inputs_chunk_by_chunk(
    after_state: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = Rules.preset("draw", 2)
    positions = choice_positions(rules, 300, seed=4)
    model = ActorCritic(rules, (16,), after_state=after_state)
    obs, mask = torch.from_numpy(positions.obs), torch.from_numpy(positions.mask)
    whole = model.move_inputs(obs, mask)
    monkeypatch.setattr(distill_module, "MOVE_CHUNK", 64)  # five chunks, the last one short
    stored = data_set_moves(model, obs, mask)
    assert stored.features.dtype == (torch.float16 if after_state else torch.float32)
    for name in ("rows", "actions", "counts"):
        assert getattr(stored, name).equal(getattr(whole, name)), name
    index = torch.arange(len(obs))
    chosen = stored.select(index)
    assert chosen.features.dtype == torch.float32
    torch.testing.assert_close(chosen.features, whole.features, rtol=1e-3, atol=0)
    if after_state:  # the bits are exact
        assert chosen.features[:, NUM_MOVE_FEATURES:].equal(whole.features[:, NUM_MOVE_FEATURES:])
    else:
        assert chosen.features.equal(whole.features)


def test_distillation_learns_the_teachers_ranking() -> None:
    """On a small labelled set the network comes to play the teacher's best move and to predict its value."""
    rules = Rules.preset("block", 2)
    data = label_positions(PimcBot(rules, seed=1, samples=4), choice_positions(rules, 256, seed=6))
    torch.manual_seed(0)
    model = ActorCritic(rules, (64,), move_features=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    rng = np.random.default_rng(0)
    common = dict(temperature=0.25, value_scale=0.05, vf_coef=0.5, max_grad_norm=1.0)
    cpu = torch.device("cpu")
    before = distill_epochs(model, optimizer, data, FitOptions(1, 64, **common), rng, cpu)
    after = distill_epochs(model, optimizer, data, FitOptions(60, 64, **common), rng, cpu)
    assert after["policy"] < before["policy"] and after["value"] < before["value"]
    assert after["agreement"] > max(0.8, before["agreement"] + 0.2) and after["regret"] < before["regret"]


def test_loss_is_the_cross_entropy_to_the_soft_targets() -> None:
    rules = Rules.preset("block", 2)
    found = choice_positions(rules, 16, seed=2)
    obs, mask = found.obs, found.mask
    values = np.where(mask, np.random.default_rng(0).normal(size=mask.shape) * 3, np.nan).astype(np.float32)
    model = ActorCritic(rules, (32,), move_features=True)
    o, m = torch.from_numpy(obs), torch.from_numpy(mask)
    v = torch.from_numpy(np.nan_to_num(values))
    policy_loss, value_loss, _ = distill_loss(
        model, model.encoder(o), m, model.move_inputs(o, m), v, 2.0, 0.1
    )
    logits, predicted = model(o, m)
    target = torch.where(m, v / 2.0, torch.full_like(v, -torch.inf)).softmax(1)
    expected = -(target * logits.log_softmax(1)).sum(1).mean()
    torch.testing.assert_close(policy_loss, expected)
    best = torch.from_numpy(np.nanmax(values, axis=1))
    torch.testing.assert_close(value_loss, 0.5 * ((predicted - 0.1 * best) ** 2).mean())


def test_values_target_regresses_the_logits_on_the_move_values() -> None:
    rules = Rules.preset("block", 2)
    found = choice_positions(rules, 16, seed=2)
    o, m = torch.from_numpy(found.obs), torch.from_numpy(found.mask)
    v = torch.where(m, torch.randn(m.shape, generator=torch.Generator().manual_seed(0)) * 3, 0.0)
    model = ActorCritic(rules, (32,), move_features=True)
    policy_loss, _, _ = distill_loss(
        model, model.encoder(o), m, model.move_inputs(o, m), v, 2.0, 0.1, "values"
    )
    logits, _ = model(o, m)
    error = torch.where(m, 0.1 * (logits * 2.0 - v), 0.0)
    centred = error - error.sum(1, keepdim=True) / m.sum(1, keepdim=True)
    expected = 0.5 * (centred[m] ** 2).mean()
    torch.testing.assert_close(policy_loss, expected)


def test_values_target_learns_the_mean_of_noisy_labels() -> None:
    """Each position appears with labels that are its true move values plus noise larger than the
    gaps between moves, and a larger shift of all its moves alike: the regressed values end near
    the true ones up to a constant per position, so the greedy move is the best move on average."""
    rules = Rules.preset("block", 2)
    found = choice_positions(rules, 64, seed=4)
    rng = np.random.default_rng(1)
    true = np.where(found.mask, rng.normal(size=found.mask.shape), np.nan).astype(np.float32)
    copies = 40
    luck = rng.normal(scale=10.0, size=(64 * copies, 1))  # the deal's, alike for every move
    noisy = np.repeat(true, copies, axis=0) + luck + rng.normal(scale=2.0, size=(64 * copies, true.shape[1]))
    data = Labelled(
        np.repeat(found.obs, copies, 0), np.repeat(found.mask, copies, 0), noisy.astype(np.float32)
    )
    torch.manual_seed(0)
    model = ActorCritic(rules, (64,), move_features=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    fit = FitOptions(
        30, 256, temperature=0.5, value_scale=0.5, vf_coef=0.5, max_grad_norm=1.0, target="values"
    )
    distill_epochs(model, optimizer, data, fit, np.random.default_rng(0), torch.device("cpu"))
    o, m = torch.from_numpy(found.obs), torch.from_numpy(found.mask)
    with torch.no_grad():
        learned = model(o, m)[0].numpy() * 0.5
    learned = learned - np.nanmean(np.where(found.mask, learned, np.nan), axis=1, keepdims=True)
    true = true - np.nanmean(true, axis=1, keepdims=True)
    error = np.abs(learned - true)[found.mask]
    assert np.median(error) < 0.4  # the labels' own noise is 2.0
    assert (learned.argmax(1) == np.nanargmax(true, 1)).mean() > 0.75  # a label picks it 1 time in 2


def test_anneal_lowers_the_learning_rate_to_zero_over_the_epochs_then_restores_it() -> None:
    rules = Rules.preset("block", 2)
    found = choice_positions(rules, 40, seed=3)
    data = Labelled(found.obs, found.mask, np.where(found.mask, 1.0, np.nan).astype(np.float32))
    model = ActorCritic(rules, (16,), move_features=True)
    used: list[float] = []

    class Recording(torch.optim.SGD):
        def step(self, closure=None):
            used.append(self.param_groups[0]["lr"])
            return super().step(closure)

    optimizer = Recording(model.parameters(), lr=0.1)
    common = dict(temperature=0.5, value_scale=0.05, vf_coef=0.5, max_grad_norm=1.0)
    cpu = torch.device("cpu")
    distill_epochs(
        model, optimizer, data, FitOptions(2, 10, **common, anneal=True), np.random.default_rng(0), cpu
    )
    np.testing.assert_allclose(used, 0.1 * (1 - np.arange(8) / 8))  # 2 epochs of 4 minibatches
    assert optimizer.param_groups[0]["lr"] == 0.1
    used.clear()
    distill_epochs(model, optimizer, data, FitOptions(1, 10, **common), np.random.default_rng(0), cpu)
    assert used == [0.1] * 4


# -- the training path: scripts/train.py with ``distill`` -------------------------------------------

DISTILL = {
    "preset": "block",
    "players": 2,
    "num_games": 32,
    "rollout_steps": 8,
    "total_updates": 2,
    "model": {"hidden": [32]},
    "opponents": {"self": 0.5, "pimc": 0.5},
    "bots": {"pimc": {"samples": 2}},
    "eval": {"every": 1, "deals": 16, "opponents": ["pimc"]},
    "checkpoint": {"every": 1, "keep": 5},
    "distill": {"rounds": 2, "positions": 96, "epochs": 2, "batch": 32, "teacher": {"samples": 2}},
    "progress": False,
}


def distill_config(tmp_path: Path, name: str, **changes) -> object:
    return parse_train_config({**DISTILL, "output_dir": str(tmp_path), "name": name, **changes})


def weights(path: Path) -> dict[str, torch.Tensor]:
    return torch.load(path, weights_only=True)["model"]


def arena_deals(preset: str, checkpoint: Path, opponent: str) -> int:
    """The deals a short 2-player head-to-head of ``checkpoint`` against ``opponent`` played: it loads
    and plays in the arena."""
    result = run_arena(
        ArenaConfig(
            preset=preset, players=2, policies=[str(checkpoint), opponent], format="head_to_head",
            deals=8, matches=0, progress=False, output={"json": False, "csv": False, "plot": False},
        )
    )  # fmt: skip
    return result.pairs[0].deals


def test_train_distills_first_then_ppo_deterministically(tmp_path: Path) -> None:
    config = distill_config(tmp_path, "a")
    train_script.train(config)
    checkpoints = config.run_dir / "checkpoints"
    distilled = torch.load(checkpoints / "update_000000.pt", weights_only=True)
    assert distilled["update"] == 0 and distilled["eval_score"] is not None  # evaluated as update 0
    assert sorted(p.name for p in (config.run_dir / "teacher").iterdir()) == ["round_000", "round_001"]
    scalars = EventAccumulator(str(config.run_dir)).Reload().Tags()["scalars"]
    logged = {"distill/agreement", "distill/regret", "distill/fit_positions_per_second", "eval/diff_vs_pimc"}
    assert logged <= set(scalars)
    # The distilled network differs from a fresh one, and PPO moved on from it.
    fresh = ActorCritic(Rules.preset("block", 2), (32,))
    assert any(not torch.equal(v, fresh.state_dict()[k]) for k, v in distilled["model"].items())
    final = weights(checkpoints / "update_000002.pt")
    assert any(not torch.equal(final[k], distilled["model"][k]) for k in final)
    # Seeded: a second run repeats it, and so does a run that finds the first one's labels cached
    # (a run killed during distillation and started again).
    again = distill_config(tmp_path, "b")
    train_script.train(again)
    cached = distill_config(tmp_path, "c")
    shutil.copytree(config.run_dir / "teacher", cached.run_dir / "teacher")
    train_script.train(cached)
    for run in (again, cached):
        other = weights(run.run_dir / "checkpoints" / "update_000002.pt")
        assert all(torch.equal(final[k], other[k]) for k in final)
    # The checkpoints play in the arena.
    assert arena_deals("block", checkpoints / "best.pt", "strong") == 8


def test_exact_privileged_value_distillation_trains_and_plays(tmp_path: Path) -> None:
    """configs/train/block_exact.yaml in small: exact labels on the true deal, the logits regress them,
    and no PPO after (``total_updates: 0``)."""
    exact = {"privileged": True, "target": "values", "teacher": {"exact": True, "prior": 0}}
    config = distill_config(tmp_path, "x", total_updates=0, distill={**DISTILL["distill"], **exact})
    train_script.train(config)
    labels = config.run_dir / "teacher" / "round_000"
    # Exact values of a finished 2-player block round are whole or half points.
    legal = np.load(labels / "values.npy")[np.load(labels / "mask.npy")]
    np.testing.assert_array_equal(legal * 2, np.round(legal * 2))
    checkpoints = config.run_dir / "checkpoints"
    assert sorted(p.name for p in checkpoints.iterdir()) == ["best.pt", "update_000000.pt"]  # no PPO
    best = checkpoints / "best.pt"
    assert arena_deals("block", best, "pimc") == 8


def test_after_state_playout_distillation_trains_and_plays(tmp_path: Path) -> None:
    """configs/train/draw_playouts.yaml in small: playout labels on the true deal, a network whose move rows
    carry the after-state bits; its checkpoint rebuilds that network and plays in the arena."""
    playouts = {"privileged": True, "target": "values", "teacher": {"prior": 0}}
    config = distill_config(
        tmp_path, "after", preset="draw", total_updates=0,
        eval={"every": 1, "deals": 8, "opponents": ["strong"]},
        model={"hidden": [32], "after_state": True, "move_hidden": 16},
        distill={**DISTILL["distill"], **playouts},
    )  # fmt: skip
    train_script.train(config)
    best = config.run_dir / "checkpoints" / "best.pt"
    policy = load_policy(str(best), Rules.preset("draw", 2))
    assert policy.model.after_state and policy.model.move_embed.in_features == feature_count(True)
    assert policy.model.move_embed.out_features == 16
    assert arena_deals("draw", best, "strong") == 8


def test_after_state_needs_move_features(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"model\.after_state adds to the move features"):
        distill_config(tmp_path, "bad", model={"hidden": [32], "move_features": False, "after_state": True})


def test_rounds_are_evaluated_as_a_learning_curve_without_changing_the_run(tmp_path: Path) -> None:
    """``distill.evaluate``: every round's network plays the eval opponents (the curve over labelled
    positions; the last round is update 0), and the run's weights are those of a run without it."""
    on = {**DISTILL["distill"], "rounds": 3, "evaluate": True}
    config = distill_config(tmp_path, "on", total_updates=1, distill=on)
    train_script.train(config)
    events = EventAccumulator(str(config.run_dir)).Reload()
    steps = [event.step for event in events.Scalars("distill_eval/diff_vs_pimc")]
    assert steps == [96, 192, 288]
    checkpoints = config.run_dir / "checkpoints"
    rounds = sorted(path.name for path in checkpoints.glob("distill_round_*.pt"))
    assert rounds == ["distill_round_000.pt", "distill_round_001.pt"]  # the last round is update 0
    off = distill_config(tmp_path, "off", total_updates=1, distill={**on, "evaluate": False})
    train_script.train(off)
    final, other = (weights(run.run_dir / "checkpoints" / "update_000001.pt") for run in (config, off))
    assert all(torch.equal(final[k], other[k]) for k in final)


@pytest.mark.parametrize(
    ("aggregate", "fitted"), [("every_round", [96, 192, 288]), ("last_round", [96, 96, 288])]
)
def test_aggregate_says_which_rounds_labels_each_round_fits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, aggregate: str, fitted: list[int]
) -> None:
    """``last_round``: the rounds before the last fit their own positions only, the last one every
    round's (the cheap schedule); ``every_round``: each round fits all labelled so far (DAgger)."""
    sizes = []
    fit = distillation.distill_epochs

    def recording(
        model: ActorCritic, optimizer: torch.optim.Optimizer, data: LabelRounds, *args, **kwargs
    ) -> dict:
        sizes.append(len(data))
        return fit(model, optimizer, data, *args, **kwargs)

    monkeypatch.setattr(distillation, "distill_epochs", recording)
    settings = {**DISTILL["distill"], "rounds": 3, "aggregate": aggregate}
    config = distill_config(tmp_path, aggregate, total_updates=0, eval={"every": 0}, distill=settings)
    train_script.train(config)
    assert sizes == fitted


def test_refine_rounds_label_with_the_networks_own_playouts_and_fit_their_own_labels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``distill.refine``: the last rounds' teacher plays every move out with the network as the round
    found it (greedy, every seat); those rounds fit their own labels with a fresh optimizer at
    ``refine_lr``, and the round before them fits every earlier round's (``last_round``); both
    phases' last rounds anneal."""
    fits: list[tuple[int, float, bool]] = []
    networks: list[dict[str, torch.Tensor]] = []
    optimizers: list[torch.optim.Optimizer] = []
    fit = distillation.distill_epochs

    def recording(
        model: ActorCritic, optimizer: torch.optim.Optimizer, data: LabelRounds, options: FitOptions, *args
    ) -> dict:
        fits.append((len(data), optimizer.param_groups[0]["lr"], options.anneal))
        optimizers.append(optimizer)
        stats = fit(model, optimizer, data, options, *args)
        networks.append({k: v.clone() for k, v in model.state_dict().items()})
        return stats

    monkeypatch.setattr(distillation, "distill_epochs", recording)
    settings = {
        **DISTILL["distill"], "rounds": 3, "refine": 1, "refine_lr": 2e-4, "aggregate": "last_round",
        "anneal": True, "target": "values", "games": 16,
    }  # fmt: skip
    config = distill_config(tmp_path, "refine", total_updates=0, eval={"every": 0}, distill=settings)
    train_script.train(config)
    assert fits == [(96, 1e-3, False), (192, 1e-3, True), (96, 2e-4, True)]
    assert optimizers[0] is optimizers[1] and optimizers[2] is not optimizers[1]

    # Round 2's labels are the search with the network after round 1 as its playout policy.
    rules = Rules.preset("block", 2)
    folder = config.run_dir / "teacher" / "round_002"
    obs, mask, values = (np.load(folder / f"{name}.npy") for name in ("obs", "mask", "values"))
    model = ActorCritic(rules, (32,))
    model.load_state_dict(networks[1])
    found = Positions(obs, mask, np.zeros((len(obs), 2), np.uint64), np.zeros((len(obs), 28), np.int8))
    seed = config.seed * 1_000_003 + 2
    own = NetworkPolicy("playouts", model, greedy=True)
    expected = label_positions(PimcBot(rules, seed=seed, samples=2, rollout_bot=own), found).values
    np.testing.assert_array_equal(values, expected)
    strong = label_positions(PimcBot(rules, seed=seed, samples=2), found).values
    assert not np.array_equal(values, strong, equal_nan=True)  # not the playouts of the other rounds
    assert "refine" in (folder / "key.txt").read_text()


def test_refine_rounds_after_exact_rounds_play_out_with_the_network() -> None:
    """``teacher.exact`` labels the rounds before ``distill.refine`` (block, configs/train/block_exact.yaml);
    a refine round's teacher plays every move out with the network instead of solving it."""
    rules = Rules.preset("block", 2)
    found = choice_positions(rules, 24, seed=4)
    model = ActorCritic(rules, (32,))
    refined = distill_module.make_teacher(rules, 7, {"exact": True, "prior": 0}, playouts=model)
    assert not refined.exact
    own = distill_module.make_teacher(rules, 7, {"prior": 0}, playouts=model)
    values = label_positions(refined, found, privileged=True).values
    np.testing.assert_array_equal(values, label_positions(own, found, privileged=True).values)
    solved = label_positions(distill_module.make_teacher(rules, 7, {"exact": True, "prior": 0}), found, True)
    assert not np.array_equal(values, solved.values, equal_nan=True)


def test_labels_made_under_another_config_are_not_reused(tmp_path: Path) -> None:
    data = Labelled(np.zeros((2, 3), np.int16), np.ones((2, 4), bool), np.zeros((2, 4), np.float32))
    path = tmp_path / "round_000"
    save_labels(path, "key-a", data)
    assert load_labels(path, "key-a", 3, 4) is not None
    assert load_labels(path, "key-b", 3, 4) is None
    assert load_labels(path, "key-a", 5, 4) is None  # another game's observations
    (path / "obs.npy").write_bytes(b"not an npy")
    assert load_labels(path, "key-a", 3, 4) is None


def test_another_rounds_arrays_under_a_key_are_not_read(tmp_path: Path) -> None:
    """Round 1's arrays copied under round 0's key were read as valid: each file's SHA-256 is kept
    with the key."""
    first = Labelled(np.zeros((2, 3), np.int16), np.ones((2, 4), bool), np.zeros((2, 4), np.float32))
    second = Labelled(first.obs + 1, first.mask, first.values + 1)
    save_labels(tmp_path / "round_000", "key-0", first)
    save_labels(tmp_path / "round_001", "key-1", second)
    for name in ("obs", "mask", "values"):
        shutil.copy(tmp_path / "round_001" / f"{name}.npy", tmp_path / "round_000" / f"{name}.npy")
    assert load_labels(tmp_path / "round_000", "key-0", 3, 4) is None
    assert load_labels(tmp_path / "round_001", "key-1", 3, 4) is not None


def damage(folder: Path, how: str) -> None:
    """Break a saved round of labels the ways a disk, a kill or an editor can."""
    values = folder / "values.npy"
    if how == "truncated":
        values.write_bytes(values.read_bytes()[:-7])
    elif how == "garbage":
        values.write_bytes(b"\x93NUMPY" + bytes(range(200)))
    elif how == "nan":
        array = np.load(values)
        array[0, np.flatnonzero(np.load(folder / "mask.npy")[0])[0]] = np.nan
        np.save(values, array)
    elif how == "shape":
        np.save(values, np.load(values)[:, :-1])
    elif how == "missing":
        (folder / "mask.npy").unlink()
    elif how == "key":
        (folder / "key.txt").write_bytes(b"\xff\xfe")
    elif how == "flipped":  # one finite value of a legal move, as the hardening issue found: -4.75 -> -19.0
        array = np.load(values)
        array[0, np.flatnonzero(np.load(folder / "mask.npy")[0])[0]] *= 4
        np.save(values, array)


@pytest.mark.parametrize("how", ["truncated", "garbage", "nan", "shape", "missing", "key", "flipped"])
def test_a_damaged_label_cache_is_labelled_again(tmp_path: Path, how: str) -> None:
    """A round of cached labels that is cut short, overwritten, holds a NaN value for a legal move, has
    the wrong shape or lost a file is not trained on: the run labels that round again and ends with
    the weights of a run that never had a cache."""
    config = distill_config(tmp_path, "clean", total_updates=0, eval={"every": 0})
    train_script.train(config)
    again = distill_config(tmp_path, f"damaged_{how}", total_updates=0, eval={"every": 0})
    shutil.copytree(config.run_dir / "teacher", again.run_dir / "teacher")
    damage(again.run_dir / "teacher" / "round_000", how)
    train_script.train(again)
    first = weights(config.run_dir / "checkpoints" / "update_000000.pt")
    second = weights(again.run_dir / "checkpoints" / "update_000000.pt")
    assert all(torch.equal(first[k], second[k]) for k in first)
    assert (
        load_labels(
            again.run_dir / "teacher" / "round_000",
            (again.run_dir / "teacher" / "round_000" / "key.txt").read_text().splitlines()[0],
            113,
            56,
        )
        is not None
    )


def test_cached_labels_follow_the_content_of_the_teachers_networks(tmp_path: Path) -> None:
    """A teacher playing out with a checkpoint: replacing the file at the same path makes new labels."""
    rollout = tmp_path / "rollout.pt"
    shutil.copy(SHIPPED_DIR / "draw-2p-ppo.pt", rollout)
    teacher = {"samples": 2, "rollout_bot": str(rollout)}
    settings = {**DISTILL["distill"], "rounds": 1, "teacher": teacher}
    config = distill_config(
        tmp_path, "roll", preset="draw", total_updates=0, eval={"every": 0}, distill=settings
    )
    train_script.train(config)
    saved = config.run_dir / "teacher" / "round_000"
    before = (saved / "key.txt").read_text(), np.load(saved / "values.npy")
    shutil.copy(SHIPPED_DIR / "draw-2p.pt", rollout)
    shutil.rmtree(config.run_dir / "checkpoints")
    train_script.train(config)
    after = (saved / "key.txt").read_text(), np.load(saved / "values.npy")
    assert before[0] != after[0] and not np.array_equal(before[1], after[1], equal_nan=True)


def test_a_refined_network_labels_the_positions_its_own_play_reaches(tmp_path: Path) -> None:
    """With ``model.init`` round 0's positions come from the trained network's sampled play, not from
    ``strong``'s, and its cached labels are keyed on its weights."""
    settings = {**DISTILL["distill"], "rounds": 1, "games": 16}  # several moves deep: the play shows
    first = distill_config(tmp_path, "first", total_updates=0, eval={"every": 0}, distill=settings)
    train_script.train(first)
    init = str(first.run_dir / "checkpoints" / "update_000000.pt")
    refined = distill_config(
        tmp_path, "refined", total_updates=0, eval={"every": 0}, distill=settings,
        model={**DISTILL["model"], "init": init},
    )  # fmt: skip
    train_script.train(refined)
    strong_play, own_play = (run.run_dir / "teacher" / "round_000" for run in (first, refined))
    assert not np.array_equal(np.load(strong_play / "obs.npy"), np.load(own_play / "obs.npy"))
    plain, keyed = ((folder / "key.txt").read_text().splitlines()[0] for folder in (strong_play, own_play))
    assert keyed.startswith(plain) and len(keyed) > len(plain)  # the same settings, and the weights
    refit = weights(refined.run_dir / "checkpoints" / "update_000000.pt")
    assert any(not torch.equal(refit[k], v) for k, v in weights(init).items())  # it learned from there


def test_epochs_stream_the_data_set_chunk_by_chunk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Training on labels mapped from their files, a few positions in memory at a time, gives the weights
    of training on the whole set held in memory: the chunks are cut from one shuffle of the set."""
    rules = Rules.preset("draw", 2)
    found = choice_positions(rules, 300, seed=4)
    labelled = label_positions(PimcBot(rules, seed=1, samples=2), found, privileged=True)
    halves = [
        Labelled(labelled.obs[s], labelled.mask[s], labelled.values[s])
        for s in (slice(0, 170), slice(170, None))
    ]
    for index, half in enumerate(halves):
        save_labels(tmp_path / str(index), "k", half)
    obs_size = DominoCore(rules, 1).obs_size
    mapped = LabelRounds([load_labels(tmp_path / str(i), "k", obs_size, rules.num_actions) for i in range(2)])
    assert len(mapped) == 300 and len(mapped.rounds[0].maps) == 3 and not mapped.rounds[0].obs.flags.writeable

    def trained(data: Labelled | LabelRounds, chunk: int) -> dict[str, torch.Tensor]:
        monkeypatch.setattr(distill_module, "TRAIN_CHUNK", chunk)
        monkeypatch.setattr(distill_module, "READ_PIECE", 7)
        torch.manual_seed(0)
        model = ActorCritic(rules, (32,), after_state=True, move_hidden=16)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        options = dict(temperature=0.5, value_scale=0.05, vf_coef=0.5, max_grad_norm=0.5)
        fit = FitOptions(2, 32, **options, target="values", anneal=True)
        distill_epochs(model, optimizer, data, fit, np.random.default_rng(3), torch.device("cpu"))
        return model.state_dict()

    whole = trained(labelled, 10_000)
    for streamed in (trained(mapped, 64), trained(labelled, 96)):
        assert all(torch.equal(whole[k], streamed[k]) for k in whole)


def test_distillation_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match=r"distill\.temperature"):
        parse_train_config({"distill": {"temperature": 0}})
    with pytest.raises(ConfigError, match=r"distill\.target"):
        parse_train_config({"distill": {"target": "value"}})
    with pytest.raises(ConfigError, match=r"distill\.teacher\.samples"):
        parse_train_config({"distill": {"teacher": {"samples": 0}}})
    with pytest.raises(ConfigError, match="did you mean 'pimc'"):
        parse_train_config({"bots": {"pimcc": {}}})
    with pytest.raises(ConfigError, match=r"distill\.pile_samples .*needs distill\.privileged"):
        parse_train_config({"distill": {"pile_samples": 4}})
    with pytest.raises(ConfigError, match=r"distill\.refine \(3\) .*must be at most that"):
        parse_train_config({"distill": {"rounds": 2, "refine": 3}})
    with pytest.raises(ConfigError, match=r"distill\.refine_lr"):
        parse_train_config({"distill": {"rounds": 2, "refine": 1, "refine_lr": 0}})
    with pytest.raises(ConfigError, match=r"distill\.evaluate needs at least one bot"):
        parse_train_config({"distill": {"evaluate": True}, "eval": {"every": 0, "opponents": []}})


def test_pile_samples_on_a_preset_without_a_pile_stop_the_run(tmp_path: Path) -> None:
    piles = {**DISTILL["distill"], "privileged": True, "pile_samples": 4}
    with pytest.raises(ConfigError, match=r"distill\.pile_samples: block has no draw pile"):
        train_script.train(distill_config(tmp_path, "p", distill=piles))
    assert not (tmp_path / "p").exists()


def test_bad_bot_options_stop_the_run_before_it_starts(tmp_path: Path) -> None:
    """Options are only known to the bot's constructor: the run builds each bot once, up front."""
    bad_rollout = distill_config(tmp_path, "r", bots={"pimc": {"rollout_bot": "nope"}})
    with pytest.raises(ConfigError, match=r"bots\.pimc: rollout_bot must be one of"):
        train_script.train(bad_rollout)
    bad_teacher = distill_config(tmp_path, "t", distill={**DISTILL["distill"], "teacher": {"foo": 1}})
    with pytest.raises(ConfigError, match=r"distill\.teacher: .*unexpected keyword argument 'foo'"):
        train_script.train(bad_teacher)
    assert not (tmp_path / "r" / "checkpoints").exists() and not (tmp_path / "t").exists()


def round_lines(output: str) -> list[str]:
    """The distillation's one line per round, from a run's printed output."""
    return [line for line in output.splitlines() if line.startswith("distill round")]


def test_resume_after_a_kill_during_the_distillation_reuses_its_rounds(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """A kill in round 1's training leaves round 0's labels and no checkpoint: ``--resume`` was refused
    ("no checkpoint"); it now starts again from the cached rounds, ends with the uninterrupted run's
    weights, logs each round's statistics once, and says which labels it read and which it made."""
    whole = distill_config(tmp_path, "whole", total_updates=0, eval={"every": 0})
    train_script.train(whole)
    capsys.readouterr()
    killed = distill_config(tmp_path, "killed", total_updates=0, eval={"every": 0})
    real, calls = distillation.distill_epochs, []

    def killed_in_round_1(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(distillation, "distill_epochs", killed_in_round_1)
    with pytest.raises(KeyboardInterrupt):
        train_script.train(killed)
    monkeypatch.setattr(distillation, "distill_epochs", real)
    assert not list((killed.run_dir / "checkpoints").glob("update_*.pt"))
    before_the_kill = round_lines(capsys.readouterr().out)
    train_script.train(killed, resume=True)
    resumed = round_lines(capsys.readouterr().out)
    assert len(before_the_kill) == 1 and "labelled in" in before_the_kill[0]
    assert len(resumed) == 2 and all("labels read from the cache" in line for line in resumed)
    fitted = r"2 epochs fitted in \d+ s \([\d,]+ positions/s\)$"
    assert all(re.search(fitted, line) for line in before_the_kill + resumed)
    first = weights(whole.run_dir / "checkpoints" / "update_000000.pt")
    second = weights(killed.run_dir / "checkpoints" / "update_000000.pt")
    assert all(torch.equal(first[k], second[k]) for k in first)
    logged = EventAccumulator(str(killed.run_dir)).Reload().Scalars("distill/agreement")
    assert [event.step for event in logged] == [0, 1]
