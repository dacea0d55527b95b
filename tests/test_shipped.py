"""The shipped configs and agents: package data, addressable by name as well as by path."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents import load_policy
from agents.arena.config import load_config
from agents.bots.registry import checkpoint_path
from agents.bots.trained import SHIPPED_AGENTS, SHIPPED_DIR
from agents.configuration import CONFIGS_DIR, SHIPPED_CONFIGS, ConfigError, config_path, read_raw
from domino_env import Rules

ROOT = Path(__file__).resolve().parent.parent


def test_the_repository_folders_are_the_package_data():
    assert (ROOT / "configs").resolve() == CONFIGS_DIR.resolve()
    assert (ROOT / "checkpoints").resolve() == SHIPPED_DIR.resolve()
    assert {"quickstart", "arena", "arena_trained_block"} <= set(SHIPPED_CONFIGS)
    assert {"block-2p-ppo", "all_fives-2p-ppo", "partnership-4p-ppo"} <= set(SHIPPED_AGENTS)


def test_names_and_paths_name_the_same_files(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    assert config_path("quickstart").samefile("configs/quickstart.yaml")
    assert config_path("configs/quickstart.yaml") == Path("configs/quickstart.yaml")
    assert checkpoint_path("block-2p-ppo").samefile("checkpoints/block-2p-ppo.pt")
    monkeypatch.chdir(tmp_path)  # elsewhere, names still work
    assert load_config("arena").policies == load_config(CONFIGS_DIR / "arena.yaml").policies
    assert load_config("arena_trained_block").policies[0] == "block-2p-ppo"
    (tmp_path / "quickstart").write_text("preset: draw\n")  # a file wins over a shipped name
    assert config_path("quickstart") == Path("quickstart")


def test_shipped_configs_name_agents_not_paths():
    """A path in a shipped config would only work in a clone, from its root."""
    for name in SHIPPED_CONFIGS:
        raw = read_raw(name)
        specs = [*raw.get("policies", []), raw.get("model", {}).get("init", "")]
        assert not any("/" in spec for spec in specs), name


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
        ConfigError, match=r"neither a file nor a shipped config name; did you mean 'quickstart'"
    ):
        load_config("quikstart")
