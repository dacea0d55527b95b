"""The shipped configs and agents: package data, addressable by name as well as by path."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents import load_policy
from agents.arena.config import load_config
from agents.bots.registry import checkpoint_path
from agents.bots.trained import SHIPPED_AGENTS, SHIPPED_DIR
from agents.configuration import (
    CONFIG_KINDS,
    CONFIGS_DIR,
    ConfigError,
    config_path,
    read_raw,
    shipped_configs,
)
from domino_env import Rules

ROOT = Path(__file__).resolve().parent.parent


def test_the_repository_folders_are_the_package_data():
    assert (ROOT / "configs").resolve() == CONFIGS_DIR.resolve()
    assert (ROOT / "checkpoints").resolve() == SHIPPED_DIR.resolve()
    assert {"quickstart", "block"} <= set(shipped_configs("train"))
    assert {"bots", "trained_block", "block"} <= set(shipped_configs("arena"))
    assert shipped_configs("rllib") == ("block",)
    assert {"block-2p-ppo", "all_fives-2p-ppo", "partnership-4p-ppo"} <= set(SHIPPED_AGENTS)


def test_names_and_paths_name_the_same_files(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    assert config_path("quickstart", "train").samefile("configs/train/quickstart.yaml")
    assert config_path("configs/train/quickstart.yaml", "train") == Path("configs/train/quickstart.yaml")
    assert config_path("block", "arena").samefile("configs/arena/block.yaml")  # a name per kind
    assert config_path("block", "rllib").samefile("configs/rllib/block.yaml")
    assert checkpoint_path("block-2p-ppo").samefile("checkpoints/block-2p-ppo.pt")
    monkeypatch.chdir(tmp_path)  # elsewhere, names still work
    assert load_config("bots").policies == load_config(CONFIGS_DIR / "arena" / "bots.yaml").policies
    assert load_config("trained_block").policies[0] == "block-2p-ppo"
    (tmp_path / "quickstart").write_text("preset: draw\n")  # a file wins over a shipped name
    assert config_path("quickstart", "train") == Path("quickstart")
    assert config_path("quickstart", "arena") == Path("quickstart")  # of any kind


def test_shipped_configs_name_agents_not_paths():
    """A path in a shipped config would only work in a clone, from its root."""
    for kind in CONFIG_KINDS:
        for name in shipped_configs(kind):
            raw = read_raw(name, kind=kind)
            specs = [*raw.get("policies", []), raw.get("model", {}).get("init", "")]
            assert not any("/" in spec for spec in specs), f"{kind}/{name}"


def test_load_policy_by_name():
    pytest.importorskip("torch")
    policy = load_policy("block-2p-ppo")
    assert policy.name == "block-2p-ppo"
    with pytest.raises(ValueError, match="trained for preset 'block', not 'draw'"):
        load_policy("block-2p-ppo", Rules.preset("draw", 2))


def test_unknown_names_list_the_valid_ones():
    with pytest.raises(
        ValueError, match=r"unknown bot 'block-2q'.*shipped agents: .*block-2p-ppo.*did you mean 'block-2p'"
    ):
        load_policy("block-2q")
    with pytest.raises(
        ConfigError, match=r"neither a file nor a shipped arena config name; did you mean 'bots'"
    ):
        load_config("bot")
