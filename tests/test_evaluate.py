"""``agents.evaluate`` and the policy adapters: any policy a user holds, in the arena, the CLI, the files.

The comparisons hold each one-call form to the glue users wrote before it existed (a loader
registered for a made-up suffix and an empty placeholder file): the same deals, the same figures.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest
import torch

import domino_env  # noqa: F401  (registers the Gymnasium ids)
from agents import (
    ArenaConfig,
    ArenaResult,
    ConfigError,
    PolicyError,
    evaluate,
    load_policy,
    one_observation,
    register_checkpoint_loader,
    run_arena,
)
from agents.arena.evaluate import main
from agents.bots.trained import CHECKPOINT_LOADERS
from domino_env.engine.rules import Rules
from domino_env.engine.tiles import PIPS

DEALS = 60


def lightest(obs: np.ndarray, mask: np.ndarray) -> int:
    """One observation in, one action out: the legal move with the fewest pips."""
    legal = np.flatnonzero(mask)
    return int(legal[np.argmin(PIPS[legal % 28])])


class Batched:
    """The batched contract with a name: the lightest move of every row."""

    name = "batched-lightest"

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return np.where(mask, PIPS[np.arange(mask.shape[1]) % 28], 99).argmin(axis=1)


def workaround(policy, against: list[str], tmp_path: Path, deals: int = DEALS) -> ArenaResult:
    """What docs/arena.md made users write: a loader for a made-up suffix and an empty file."""
    register_checkpoint_loader(".mine", lambda path, rules, seed: policy)
    try:
        path = tmp_path / "mine.mine"
        path.touch()
        config = ArenaConfig(
            policies=[str(path), *against], format="head_to_head", deals=deals, matches=0, progress=False
        )
        return run_arena(config)
    finally:
        del CHECKPOINT_LOADERS[".mine"]


def figures(result: ArenaResult) -> list[tuple[str, float, float, tuple]]:
    return [(p.second, p.diff, p.ci, p.round_win) for p in result.pairs]


@pytest.fixture(scope="module")
def sb3_model(tmp_path_factory: pytest.TempPathFactory):
    """A MaskablePPO model after a few hundred steps on 2-player block, and its saved zip."""
    sb3_contrib = pytest.importorskip("sb3_contrib")
    env = gymnasium.make("domino_rl/Domino-v0", preset="block")
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, seed=0, verbose=0)
    model.learn(128)
    path = tmp_path_factory.mktemp("sb3") / "maskppo_block.zip"
    model.save(path)
    return model, path


def test_a_one_observation_function_scores_as_the_workaround_did(tmp_path: Path) -> None:
    class Wrapped:  # the wrapper users wrote around a one-observation function
        name = "lightest"

        def __call__(self, obs, mask):
            return np.array([lightest(o, m) for o, m in zip(obs, mask, strict=True)])

    result = evaluate(lightest, against=["heaviest", "strong"], deals=DEALS, progress=False)
    assert [p.first for p in result.pairs] == ["lightest", "lightest"]
    assert figures(result) == figures(workaround(Wrapped(), ["heaviest", "strong"], tmp_path))
    assert figures(
        evaluate(one_observation(lightest), against=["heaviest", "strong"], deals=DEALS, progress=False)
    ) == figures(result)


def test_a_batched_policy_and_its_name(tmp_path: Path) -> None:
    result = evaluate(Batched(), against=["random"], deals=DEALS, progress=False)
    assert result.pairs[0].first == "batched-lightest"
    assert figures(result) == figures(workaround(Batched(), ["random"], tmp_path))
    assert (
        evaluate(Batched(), against="random", deals=DEALS, name="mine", progress=False).pairs[0].first
        == "mine"
    )


def test_a_torch_module_plays_its_most_probable_legal_action(tmp_path: Path) -> None:
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(113, 16), torch.nn.Tanh(), torch.nn.Linear(16, 56))

    class Wrapped:
        name = "Sequential"

        def __call__(self, obs, mask):
            with torch.no_grad():
                logits = net(torch.as_tensor(obs, dtype=torch.float32))
            return logits.masked_fill(~torch.as_tensor(mask), -torch.inf).argmax(dim=1).numpy()

    result = evaluate(net, against=["strong"], deals=DEALS, progress=False)
    assert result.pairs[0].first == "Sequential"
    assert figures(result) == figures(workaround(Wrapped(), ["strong"], tmp_path))


def test_an_sb3_model_object_and_zip_score_as_the_workaround_did(sb3_model, tmp_path: Path) -> None:
    model, path = sb3_model

    class Wrapped:
        name = "maskppo"

        def __call__(self, obs, mask):
            return model.predict(obs, deterministic=True, action_masks=mask)[0]

    expected = figures(workaround(Wrapped(), ["strong", "block-2p"], tmp_path))
    assert figures(evaluate(model, against=["strong", "block-2p"], deals=DEALS, progress=False)) == expected
    from_file = evaluate(path, against=["strong", "block-2p"], deals=DEALS, progress=False)
    assert figures(from_file) == expected
    assert from_file.pairs[0].first == "maskppo_block"  # a file by its stem


def test_the_cli_runs_an_sb3_zip_and_an_imported_object(sb3_model, tmp_path: Path, monkeypatch) -> None:
    _, path = sb3_model
    (tmp_path / "my_policies.py").write_text(
        "import numpy as np\nfrom domino_env.engine.tiles import PIPS\n\n"
        "def lightest(obs, mask):\n    legal = np.flatnonzero(mask)\n"
        "    return int(legal[np.argmin(PIPS[legal % 28])])\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    code = main(
        [f"policies=[{path},my_policies:lightest,strong]", f"deals={DEALS}", "matches=0", "progress=false",
         f"output.dir={tmp_path / 'out'}", "output.name=run"]
    )  # fmt: skip
    assert code == 0
    saved = ArenaResult.from_json(tmp_path / "out" / "run.json")
    assert [p.name for p in saved.policies] == ["maskppo_block", "lightest", "strong"] or {
        p.name for p in saved.policies
    } == {"maskppo_block", "lightest", "strong"}
    mine = next(p for p in saved.pairs if (p.first, p.second) == ("lightest", "strong"))
    direct = evaluate(lightest, against=["strong"], deals=DEALS, progress=False).pairs[0]
    assert (mine.diff, mine.ci) == pytest.approx((direct.diff, direct.ci))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_such_module_here:policy", "cannot import 'no_such_module_here'"),
        ("json:no_such_thing", "'json' has no attribute 'no_such_thing'"),
        ("my_bad:takes_one", "must take (obs, mask); its signature is (obs)"),
        ("my_bad:illegal", "played action 3"),
        ("my_bad:crashes", "raised ZeroDivisionError: integer division or modulo by zero, at deal 0"),
    ],
)
def test_the_cli_refuses_a_bad_policy_in_one_line(
    spec: str, message: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    (tmp_path / "my_bad.py").write_text(
        "def takes_one(obs):\n    return 0\n\n"
        "def illegal(obs, mask):\n    return 3\n\n"
        "def crashes(obs, mask):\n    return 1 // 0\n"
    )
    monkeypatch.chdir(tmp_path)
    sys.modules.pop("my_bad", None)
    code = main(
        [f"policies=[{spec},strong]", "deals=5", "matches=0", "progress=false", f"output.dir={tmp_path}"]
    )
    out = capsys.readouterr().out
    assert code == 2
    assert message in " ".join(out.split()), out
    assert "Traceback" not in out


def test_an_illegal_move_names_the_policy_the_deal_and_the_move() -> None:
    with pytest.raises(PolicyError) as caught:
        evaluate(lambda obs, mask: 3, against="strong", deals=5, progress=False)
    text = str(caught.value)
    assert (
        "policy 'policy' played action 3 (3-0:left) at deal" in text and "seat" in text and "legal:" in text
    )


def test_policies_made_for_other_rules_are_refused(sb3_model) -> None:
    model, path = sb3_model
    net = torch.nn.Sequential(torch.nn.Linear(113, 8), torch.nn.Linear(8, 56))
    for policy in (model, path, net):
        with pytest.raises(PolicyError, match="all_fives with 3 players gives"):
            evaluate(policy, preset="all_fives", players=3, against="strong", deals=5, progress=False)
    with pytest.raises(ValueError, match="block"):
        evaluate("block-2p", preset="draw", players=3, against="strong", deals=5, progress=False)


def test_wrong_returns_and_names_are_clear() -> None:
    with pytest.raises(PolicyError, match="integer actions"):
        evaluate(lambda obs, mask: mask.argmax(1).astype(float), against="strong", deals=5, progress=False)
    with pytest.raises(PolicyError, match="one integer action per observation"):
        evaluate(lambda obs, mask: "left", against="strong", deals=5, progress=False)
    with pytest.raises(PolicyError, match="two policies are named 'strong'"):
        evaluate(Batched(), against="strong", name="strong", deals=5, progress=False)
    with pytest.raises(PolicyError, match="not a policy"):
        evaluate(42, against="strong", deals=5, progress=False)
    with pytest.raises(ConfigError, match="deals"):
        evaluate(Batched(), against="strong", deals=0, progress=False)


def test_the_result_is_a_table_and_the_files_the_cli_writes(tmp_path: Path) -> None:
    result = evaluate(Batched(), against=["random", "strong"], deals=DEALS, progress=False)
    assert "| batched-lightest | random |" in result._repr_markdown_()
    assert "batched-lightest" in repr(result) and "**" not in repr(result)
    text = result.to_json(tmp_path / "r.json")
    assert json.loads(text)["pairs"][0]["first"] == "batched-lightest"
    assert (tmp_path / "r.json").read_text() == text
    again = ArenaResult.from_json(tmp_path / "r.json")
    assert figures(again) == figures(result) and again.to_json() == text
    assert result.to_csv().splitlines()[0].startswith("first,second,deals,diff,ci")
    figure = result.plot(tmp_path / "r.png")
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG" and figure.axes


def test_load_policy_takes_an_import_path(monkeypatch, tmp_path: Path) -> None:
    (tmp_path / "my_classes.py").write_text(
        "import numpy as np\n\nclass First:\n    def __init__(self, rules):\n        self.rules = rules\n"
        "    def __call__(self, obs, mask):\n        return mask.argmax(axis=1)\n"
    )
    monkeypatch.chdir(tmp_path)
    rules = Rules.preset("block", 2)
    bot = load_policy("my_classes:First", rules)
    assert bot.name == "First"
    mask = np.zeros((2, rules.num_actions), dtype=bool)
    mask[:, [4, 9]] = True
    assert bot(np.zeros((2, 113), np.int16), mask).tolist() == [4, 4]
    with pytest.raises(ValueError, match="needs the rules"):
        load_policy("my_classes:First")


def test_without_torch_a_network_names_the_extra_to_install() -> None:
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from agents import load_policy\n"
        "try:\n    load_policy('block-2p')\nexcept ValueError as error:\n    print(error)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "needs PyTorch" in out and "pip install 'domino-rl[train]'" in out, out


def test_a_network_of_this_package_plays_as_its_checkpoint() -> None:
    from agents.training.checkpoint import CheckpointPolicy

    checkpoint = CheckpointPolicy("checkpoints/block-2p.pt")
    direct = evaluate(checkpoint.model, against="strong", deals=DEALS, name="net", progress=False)
    by_name = evaluate("block-2p", against="strong", deals=DEALS, progress=False)
    assert figures(direct) == figures(by_name)
    with pytest.raises(PolicyError, match="plays"):
        evaluate(checkpoint.model, preset="draw", against="strong", deals=5, progress=False)


def test_a_figure_one_deal_cannot_give_is_empty_in_the_csv_as_null_in_the_json() -> None:
    result = evaluate(Batched(), against="random", deals=1, progress=False)
    assert json.loads(result.to_json())["pairs"][0]["ci"] is None
    row = result.to_csv().splitlines()[1].split(",")
    assert row[4] == "" and "inf" not in result.to_csv()
