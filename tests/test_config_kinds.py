"""The shipped configs are grouped by kind (issue 32): each command takes its own kind's names only,
and another kind's name, an old name or a file of another kind is one line naming the right command."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.arena import evaluate
from agents.configuration import (
    CONFIG_KINDS,
    CONFIGS_DIR,
    KIND_COMMANDS,
    ConfigError,
    config_path,
    shipped_configs,
)
from agents.training import rllib

torch = pytest.importorskip("torch")  # domino-train imports it

from agents.training import train, tune  # noqa: E402

MAINS = {"train": train.main, "arena": evaluate.main, "rllib": rllib.main, "tune": tune.main}
"""Each kind's command: domino-train, domino-evaluate, scripts/train_rllib.py, and scripts/tune.py, which
sweeps training configs (the configs are checked before Ray is looked for, so these run without the ray
extra)."""


def _run(kind: str, args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = MAINS[kind](args)
    captured = capsys.readouterr()
    return code, " ".join((captured.out + captured.err).split())


def test_each_config_sits_in_the_folder_of_its_kind() -> None:
    assert not list(CONFIGS_DIR.glob("*.yaml")) and not list(CONFIGS_DIR.glob("*.yml"))  # no flat configs
    assert sorted(path.name for path in CONFIGS_DIR.iterdir() if path.is_dir()) == sorted(CONFIG_KINDS)
    for kind in CONFIG_KINDS:
        folder = CONFIGS_DIR / kind
        assert shipped_configs(kind), kind
        assert sorted(path.name for path in folder.iterdir()) == [f"{n}.yaml" for n in shipped_configs(kind)]
    assert evaluate.DEFAULT_CONFIG in shipped_configs("arena")
    with pytest.raises(ValueError, match="unknown config kind 'arena_'"):
        shipped_configs("arena_")


@pytest.mark.parametrize(
    ("kind", "name", "command"),
    [
        ("train", "bots", "domino-evaluate bots"),
        ("train", "trained_block", "domino-evaluate trained_block"),
        ("arena", "quickstart", "domino-train quickstart"),
        ("arena", "block_exact", "domino-train block_exact"),
        ("rllib", "quickstart", "domino-train quickstart"),
        ("rllib", "search_draw", "domino-evaluate search_draw"),
    ],
)
def test_another_kinds_name_names_its_command(kind, name, command, capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out = _run(kind, [name], capsys)
    assert code == 2 and "Traceback" not in out
    assert f"'{name}' is " in out and f"config: run it with {command}" in out
    assert f"not {'an' if kind != 'train' else 'a'} " in out
    assert not list(tmp_path.iterdir())  # nothing was started


def test_a_name_of_two_other_kinds_names_both_commands() -> None:
    with pytest.raises(ConfigError) as error:
        config_path("draw", "rllib")
    assert str(error.value) == (
        "'draw' is a training config and an arena config, not an RLlib config: "
        "run it with domino-train draw or domino-evaluate draw"
    )


@pytest.mark.parametrize("kind", CONFIG_KINDS)
def test_an_unknown_name_lists_only_its_own_kind(kind, capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out = _run(kind, ["nosuch"], capsys)
    assert code == 2 and "Traceback" not in out
    listed = out.split("configs: ", 1)[1].rstrip(")")
    assert listed.split(", ") == list(shipped_configs(kind))
    if kind == "train":  # domino-train nosuch: neither the arena's names nor RLlib's
        assert "bots" not in out and "trained_block" not in out


def test_a_close_name_is_suggested_from_its_own_kind() -> None:
    with pytest.raises(ConfigError, match=r"shipped training config name; did you mean 'quickstart'\?"):
        config_path("quikstart", "train")
    with pytest.raises(ConfigError, match=r"shipped arena config name; did you mean 'trained_draw'\?"):
        config_path("trained_drow", "arena")


@pytest.mark.parametrize(
    ("kind", "old", "new"),
    [
        ("arena", "arena", "domino-evaluate bots"),
        ("arena", "arena_trained_block", "domino-evaluate trained_block"),
        ("train", "arena_search_draw", "domino-evaluate search_draw"),
        ("train", "rllib_block", "python scripts/train_rllib.py block"),
    ],
)
def test_the_names_of_before_the_grouping_say_the_new_one(kind, old, new, capsys) -> None:
    code, out = _run(kind, [old], capsys)
    assert code == 2 and f"'{old}' is now " in out and out.endswith(f"run it with {new}")


def test_old_paths_suggest_the_new_file(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    moved = (
        r"'configs/arena_block.yaml' does not exist; did you mean the arena config 'block' \(configs/arena/"
    )
    with pytest.raises(ConfigError, match=moved):
        config_path("configs/arena_block.yaml", "arena")
    with pytest.raises(ConfigError, match=r"did you mean the training config 'block' \(configs/train/"):
        config_path("configs/block.yaml", "train")
    with pytest.raises(ConfigError, match=r"^config file 'nowhere/x.yaml' does not exist$"):
        config_path("nowhere/x.yaml", "train")


@pytest.mark.parametrize(
    ("kind", "file", "hint"),
    [
        ("train", "arena/bots.yaml", "an arena config: run it with domino-evaluate"),
        ("tune", "arena/bots.yaml", "an arena config: run it with domino-evaluate"),
        ("arena", "train/quickstart.yaml", "a training config: run it with domino-train"),
        ("arena", "rllib/block.yaml", "an RLlib config: run it with python scripts/train_rllib.py"),
        ("rllib", "arena/trained_block.yaml", "an arena config: run it with domino-evaluate"),
    ],
)
def test_a_file_of_another_kind_is_accepted_then_refused_with_a_hint(kind, file, hint, capsys) -> None:
    path = CONFIGS_DIR / file
    code, out = _run(kind, [str(path)], capsys)
    assert code == 2 and "Traceback" not in out
    assert out.endswith(f"this looks like {hint} {path}")


def test_a_file_of_its_own_kind_with_a_typo_gets_no_kind_hint(tmp_path: Path, capsys) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text("preset: block\ntotal_updatez: 3\n")
    code, out = _run("train", [str(path)], capsys)
    assert code == 2 and "unknown key 'total_updatez'" in out and "looks like" not in out


def test_the_commands_are_those_the_messages_name() -> None:
    assert KIND_COMMANDS["train"] == "domino-train" and KIND_COMMANDS["arena"] == "domino-evaluate"
    root = Path(__file__).resolve().parent.parent
    assert (root / KIND_COMMANDS["rllib"].split()[-1]).is_file()  # scripts/train_rllib.py
    scripts = (root / "pyproject.toml").read_text()
    assert 'domino-train = "agents.training.commands:train"' in scripts
    assert 'domino-evaluate = "agents.arena.evaluate:main"' in scripts
