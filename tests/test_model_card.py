"""One agent per preset by name, each shipped file with its model card."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agents.bots.registry import load_policy
from agents.bots.trained import SHIPPED_AGENTS, SHIPPED_DIR
from agents.configuration import ConfigError
from agents.training.checkpoint import POLICY_KEYS, load_checkpoint
from agents.training.model_card import ModelCard, agents_table, default_agent, read_card, write_card
from domino_env.engine.rules import PRESET_NAMES


@pytest.mark.parametrize("name", SHIPPED_AGENTS)
def test_every_shipped_file_carries_its_card(name: str) -> None:
    card = read_card(name)
    config = load_checkpoint(SHIPPED_DIR / f"{name}.pt", POLICY_KEYS)["config"]
    assert card is not None and card.name == name
    assert (card.preset, card.players) == (config["preset"], config["players"])
    assert card.result("strong") is not None and card.result("pimc") is not None
    assert all(r.seed != 12345 for r in card.results)  # never the deals best.pt was chosen on
    assert (Path(__file__).resolve().parents[1] / card.config).is_file()  # the documented command


def test_every_preset_has_a_default_agent_by_name() -> None:
    """``load_policy("<preset>-<n>p")`` for every preset at its usual table; the others are named
    by their method, after the default's name."""
    found = {read_card(name).preset: name for name in SHIPPED_AGENTS if name == _default(name)}
    assert set(found) == set(PRESET_NAMES)
    for preset, name in found.items():
        policy = load_policy(name)
        assert policy.model.rules.name == preset
        assert preset in repr(policy) and read_card(name).method in repr(policy)
    others = [name for name in SHIPPED_AGENTS if name != _default(name)]
    assert all(any(name.startswith(default + "-") for default in found.values()) for name in others)


def _default(name: str) -> str:
    card = read_card(name)
    return default_agent(card.preset, card.players)


def test_a_card_must_fit_its_file(tmp_path: Path) -> None:
    path = tmp_path / "x.pt"
    shutil.copy(SHIPPED_DIR / "block-2p.pt", path)
    card = read_card(path).model_copy(update={"preset": "draw"})
    with pytest.raises(ConfigError, match=r"card: draw 2p, but .*x\.pt plays block 2p"):
        write_card(path, card)
    with pytest.raises(ConfigError, match=r"results\[0\]\.ci must be at least 0"):
        ModelCard.parse({**read_card(path).to_dict(), "results": [{"opponent": "strong", "diff": 1.0,
                        "ci": -1.0, "deals": 10, "seed": 1}]})  # fmt: skip
    updated = read_card(path).model_copy(update={"notes": "retrained"})
    write_card(path, updated)
    assert read_card(path).notes == "retrained"


def test_the_table_says_how_each_training_time_was_taken(tmp_path: Path) -> None:
    """A time from a shared machine or cached labels is not the bound a user can expect: the row says
    which it is, and the peak memory where it was measured."""
    path = tmp_path / "block-2p.pt"
    shutil.copy(SHIPPED_DIR / "block-2p.pt", path)
    card = read_card(path)
    write_card(path, card.model_copy(update={"training_minutes": 22.4, "timed_alone": True,
                                             "peak_memory_gib": 1.96}))  # fmt: skip
    assert "22 min (alone), 2.0 GiB peak |" in agents_table(tmp_path)
    write_card(path, card.model_copy(update={"timed_alone": False, "peak_memory_gib": None}))
    row = agents_table(tmp_path).splitlines()[-1]
    assert row.endswith(f"{card.training_minutes:.0f} min (shared machine) |") and "GiB" not in row


def test_the_table_shows_match_play_against_pimc_where_measured(tmp_path: Path) -> None:
    """Issue 29 goal 4 is a share of 2,000 duplicate matches: a card that counts its matches shows it."""
    path = tmp_path / "block-2p.pt"
    shutil.copy(SHIPPED_DIR / "block-2p.pt", path)
    card = read_card(path)
    pimc = card.result("pimc").model_copy(update={"match_win": 0.5274, "matches": 2000})
    others = [r for r in card.results if r.opponent != "pimc"]
    write_card(path, card.model_copy(update={"results": [pimc, *others]}))
    assert "seed 1); 52.7% of 2,000 matches |" in agents_table(tmp_path)
    with pytest.raises(ConfigError, match=r"matches needs the match_win they measured"):
        ModelCard.parse({**card.to_dict(), "results": [{**pimc.to_dict(), "match_win": None}]})
