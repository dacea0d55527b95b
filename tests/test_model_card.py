"""One agent per preset by name, each shipped file with its model card."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agents.bots.registry import load_policy
from agents.bots.trained import SHIPPED_AGENTS, SHIPPED_DIR
from agents.configuration import ConfigError
from agents.training import model_card
from agents.training.checkpoint import POLICY_KEYS, load_checkpoint
from agents.training.exploit import ExploitConfig, exploit
from agents.training.model_card import (
    TABLE_END,
    TABLE_START,
    Exploitability,
    ModelCard,
    add_exploitability,
    agents_table,
    default_agent,
    read_card,
    write_card,
)
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
    if name == default_agent(card.preset, card.players):  # issue 29 goal 3: measured against pimc's
        assert any(e.deals >= 20_000 and e.seed != 12345 for e in card.exploitability)


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


def test_exploit_results_go_into_the_card_and_the_table(tmp_path: Path, capsys) -> None:
    """Issue 29 goal 3: the two ``exploit.json`` of ``scripts/exploit.py`` (against the agent, and against
    ``pimc`` under the same settings) become a card entry that the agents table shows."""
    path = tmp_path / "block-2p.pt"
    shutil.copy(SHIPPED_DIR / "block-2p.pt", path)
    write_card(path, read_card(path).model_copy(update={"exploitability": []}))  # this test's entry alone
    quick = {"updates": 1, "num_games": 8, "rollout_steps": 4, "hidden": [16], "deals": 8, "progress": False}
    runs = tmp_path / "runs"
    against_agent = exploit(str(path), ExploitConfig.parse({**quick, "output_dir": str(runs)}))
    against_pimc = exploit("pimc", ExploitConfig.parse({**quick, "output_dir": str(runs), "preset": "block"}))
    files = [runs / name / "exploit.json" for name in ("exploit-block-2p-s0", "exploit-pimc-block-2p-s0")]
    assert model_card.main([str(path), "--exploit", *map(str, files)]) == 0
    entry = read_card(path).exploitability[-1]
    assert (entry.updates, entry.decisions, entry.deals, entry.seed) == (1, 32, 8, 424_242)
    assert entry.diff == round(against_agent["exploitability"], 2)
    assert entry.pimc_ci == round(against_pimc["ci"], 2)
    assert f"{entry.diff:+.2f} ± {entry.ci:.2f}" in agents_table(tmp_path).splitlines()[-1]
    assert model_card.main([str(path), "--exploit", *map(str, files)]) == 0  # measured again: replaced
    assert read_card(path).exploitability.count(entry) == 1

    other = exploit(
        "pimc", ExploitConfig.parse({**quick, "output_dir": str(runs), "preset": "block", "seed": 1})
    )
    with pytest.raises(ConfigError, match=r"the two exploiters differ in seed \(0 against 1\)"):
        add_exploitability(path, against_agent, other)
    on_ray = against_pimc | {"settings": against_pimc["settings"] | {"ray": {"workers": 2, "address": ""}}}
    with pytest.raises(ConfigError, match=r"the two exploiters differ in ray\.workers \(0 against 2\)"):
        add_exploitability(path, against_agent, on_ray)  # another worker count trains another exploiter
    before_ray = {k: v for k, v in against_agent["settings"].items() if k != "ray"}
    add_exploitability(path, against_agent | {"settings": before_ray}, against_pimc)  # older: 0 workers
    with pytest.raises(ConfigError, match=r"the second result is against 'block-2p', not pimc"):
        add_exploitability(path, against_pimc | {"agent": "block-2p"}, against_agent | {"agent": "block-2p"})
    with pytest.raises(ConfigError, match=r"the first result is against the bot 'pimc', not the agent"):
        add_exploitability(path, against_pimc, against_pimc)
    with pytest.raises(ConfigError, match=r"plays draw 2p, the agent block 2p"):
        add_exploitability(path, against_agent, against_pimc | {"preset": "draw"})
    with pytest.raises(ConfigError, match=r"not the exploit.json of scripts/exploit.py: no 'budget'"):
        add_exploitability(path, {k: v for k, v in against_agent.items() if k != "budget"}, against_pimc)
    (tmp_path / "broken.json").write_text("{")
    assert model_card.main([str(path), "--exploit", str(tmp_path / "broken.json"), str(files[1])]) == 2
    assert "broken.json: not JSON" in capsys.readouterr().out


def test_the_table_shows_the_largest_exploiter_budget_bold_where_apart_from_pimc(tmp_path: Path) -> None:
    path = tmp_path / "block-2p.pt"
    shutil.copy(SHIPPED_DIR / "block-2p.pt", path)
    card = read_card(path)
    small = Exploitability(updates=150, decisions=1_228_800, deals=20_000, seed=424_242, diff=-0.67, ci=0.06,
                           pimc_diff=-0.41, pimc_ci=0.05)  # fmt: skip
    large = small.model_copy(update={"updates": 1000, "diff": -0.30, "ci": 0.10, "pimc_diff": -0.35})
    write_card(path, card.model_copy(update={"exploitability": [small]}))
    assert "| **-0.67 ± 0.06** / -0.41 ± 0.05 (150 updates, 20,000 deals) |" in agents_table(tmp_path)
    write_card(path, card.model_copy(update={"exploitability": [small, large]}))
    assert "| -0.30 ± 0.10 / -0.35 ± 0.05 (1,000 updates, 20,000 deals) |" in agents_table(tmp_path)


def _result(agent: str, updates: int, diff: float) -> dict:
    """An exploit.json as scripts/exploit.py writes it, for a budget of ``updates``."""
    settings = {"updates": updates, "num_games": 8, "rollout_steps": 4, "hidden": [16], "lr": 3e-4,
                "seed": 0, "deals": 8, "eval_seed": 424_242}  # fmt: skip
    return {"agent": agent, "preset": "block", "players": 2, "settings": settings, "deals": 8,
            "eval_seed": 424_242, "budget": {"updates": updates, "decisions": 32 * updates},
            "exploitability": diff, "ci": 0.5}  # fmt: skip


def _add(path: str, updates: int) -> None:
    add_exploitability(path, _result(path, updates, -1.0), _result("pimc", updates, -0.5))


def test_concurrent_card_writers_keep_every_entry(tmp_path: Path) -> None:
    """Three writers at once all exited 0 and the file kept two entries: the read-modify-write is locked."""
    import multiprocessing

    path = tmp_path / "race.pt"
    shutil.copy(SHIPPED_DIR / "block-2p.pt", path)
    write_card(path, read_card(path).model_copy(update={"exploitability": []}))
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_add, args=(str(path), updates)) for updates in (11, 12, 13, 14)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [w.exitcode for w in workers] == [0, 0, 0, 0]
    assert sorted(e.updates for e in read_card(path).exploitability) == [11, 12, 13, 14]


def test_a_card_takes_only_results_of_its_own_network(tmp_path: Path) -> None:
    path = tmp_path / "block-2p.pt"
    shutil.copy(SHIPPED_DIR / "block-2p.pt", path)
    pimc = _result("pimc", 5, -0.5)
    for agent, message in [
        ("draw-2p", r"against 'draw-2p', another network than"),
        ({"name": "block-2p"}, r"agent is dict, not an agent's name"),
        (str(tmp_path / "gone.pt"), r"cannot be checked"),
    ]:
        with pytest.raises(ConfigError, match=message):
            add_exploitability(path, _result(agent, 5, -1.0), pimc)
    add_exploitability(path, _result("block-2p", 5, -1.0), pimc)  # the shipped file: the same weights
    assert read_card(path).exploitability[-1].updates == 5


def test_a_card_that_claims_another_game_is_refused(tmp_path: Path) -> None:
    import torch

    path = tmp_path / "block-2p.pt"
    shutil.copy(SHIPPED_DIR / "block-2p.pt", path)
    payload = torch.load(path, weights_only=True)
    payload["card"] = {**payload["card"], "preset": "draw", "players": 3, "name": "draw-3p"}
    torch.save(payload, path)
    with pytest.raises(ConfigError, match=r"card: draw 3p, but .*block-2p\.pt plays block 2p"):
        read_card(path)
    card = read_card(SHIPPED_DIR / "block-2p.pt")
    with pytest.raises(
        ConfigError, match=r"name 'draw-2p' is a draw 2p agent's, but the card is for block 2p"
    ):
        ModelCard.parse({**card.to_dict(), "name": "draw-2p"})


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (
            "exploitability",
            [
                {
                    "updates": 10**400,
                    "decisions": 1,
                    "deals": 8,
                    "seed": 0,
                    "diff": 0.0,
                    "ci": 0.1,
                    "pimc_diff": 0.0,
                    "pimc_ci": 0.1,
                }
            ],
            r"exploitability\[0\]\.updates",
        ),
        ("results", [{"opponent": "strong", "diff": 1e308, "ci": 1.0, "deals": 10, "seed": 1}], r"diff"),
        ("config", "configs/train/x.yaml | <script>", r"config"),
        ("name", "block-2p`", r"name"),
    ],
)
def test_absurd_or_hostile_card_values_are_refused(field: str, value: object, message: str) -> None:
    card = read_card(SHIPPED_DIR / "block-2p.pt")
    with pytest.raises(ConfigError, match=message):
        ModelCard.parse({**card.to_dict(), field: value})


def test_card_text_cannot_break_the_table_and_stray_markers_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "block-2p.pt"
    shutil.copy(SHIPPED_DIR / "block-2p.pt", path)
    hostile = "x | y <script>alert(1)</script> [z](javascript:alert(1)) <!-- /agents-table -->"
    write_card(path, read_card(path).model_copy(update={"method": hostile}))
    row = agents_table(tmp_path).splitlines()[-1]
    assert row.count(" | ") == 5 and "x \\| y" in row  # the cell's pipe is escaped: still six cells
    assert "<script>" not in row and "<!--" not in row
    assert "[z](javascript" not in row and "\\[z\\](javascript" in row  # escaped: plain text, no link
    table = agents_table(SHIPPED_DIR)
    page = f"intro\n{TABLE_START}\nold\n{TABLE_END}\nmore\n{TABLE_END}\n"
    with pytest.raises(ValueError, match=r"README\.md must hold one .* it has 1 and 2"):
        model_card.with_table(page, table, "README.md")


def test_write_table_checks_every_page_before_writing_any(tmp_path: Path, monkeypatch, capsys) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"top\n{TABLE_START}\nold\n{TABLE_END}\nbottom\n")
    assert model_card.main(["--write-table", str(tmp_path)]) == 2  # no docs/agents.md under the root
    assert "cannot read" in capsys.readouterr().out and "bottom" in readme.read_text()
    assert "old" in readme.read_text()  # README was not rewritten first
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "agents.md").write_text(f"{TABLE_START}\n{TABLE_END}\n")

    def full_disk(path: Path, content: object) -> None:
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(model_card, "write_atomic", full_disk)
    assert model_card.main(["--write-table", str(tmp_path)]) == 1
    assert readme.read_text() == f"top\n{TABLE_START}\nold\n{TABLE_END}\nbottom\n"  # whole, as it was
    assert "README.md" in capsys.readouterr().out  # the message names the file


def test_a_deep_missing_or_non_object_exploit_file_is_one_line(tmp_path: Path, capsys) -> None:
    (tmp_path / "deep.json").write_text("[" * 200_000)
    (tmp_path / "list.json").write_text("[1]")
    for name, message in [("deep.json", "not JSON (RecursionError"), ("list.json", "a JSON object"),
                          ("missing.json", "cannot read")]:  # fmt: skip
        path = str(tmp_path / name)
        assert model_card.main(["block-2p", "--exploit", path, path]) == 2
        out = capsys.readouterr().out
        assert message in out and "Traceback" not in out, out
    assert model_card.main(["block-2p", "--set", str(tmp_path / "nonexist.yaml")]) == 2
    assert "cannot read" in capsys.readouterr().out  # not "cannot write"
