"""The standard benchmark (agents/arena/benchmark.py): fixed suites, the command, refusals, reports."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

import agents  # noqa: F401  (registers the .pt loader the shipped agents need)
from agents.arena.benchmark import (
    SUITES,
    ArenaResult,
    benchmark,
    ladder_plot,
    read_report,
    report_card,
    report_path,
    reports_markdown,
    with_reports,
    write_result,
)
from agents.arena.evaluate import main
from agents.bots.trained import SHIPPED_AGENTS, SHIPPED_DIR

ROOT = Path(__file__).resolve().parent.parent
QUICK = {"deals": 3, "progress": False}

BLOCKING = ("random", "heaviest", "doubles", "diverse", "blocker", "strong", "pimc")
FIVES = ("random", "heaviest", "doubles", "diverse", "blocker", "fives", "strong", "pimc")
PINNED = {
    # name: (version, preset, players, deals, seed, pimc samples, ladder, agent file's sha256[:16])
    "block-2p": ("v1", "block", 2, 2000, 1_000_101, 24, (*BLOCKING, "block-2p"), "351ab53a5d367e29"),
    "draw-2p": ("v1", "draw", 2, 2000, 1_000_102, 24, (*BLOCKING, "draw-2p"), "acbf913e07131df5"),
    "all_fives-2p": ("v1", "all_fives", 2, 2000, 1_000_103, 12, (*FIVES, "all_fives-2p"), "cdd1e18003cde203"),
    "muggins-2p": ("v1", "muggins", 2, 2000, 1_000_104, 12, (*FIVES, "muggins-2p"), "8bd71f571d443392"),
    "idrd_draw-2p": (
        "v1", "idrd_draw", 2, 2000, 1_000_105, 24, (*BLOCKING, "idrd_draw-2p"), "ee23bded4b624800",
    ),
    "idrd_block-4p": (
        "v1", "idrd_block", 4, 500, 1_000_106, 24, (*BLOCKING, "idrd_block-4p"), "7b54fe5cc0ee71ce",
    ),
    "partnership-4p": (
        "v1", "partnership", 4, 2000, 1_000_107, 24, (*BLOCKING, "partnership-4p"), "59124b86445ba857",
    ),
    "spanish_pairs-4p": (
        "v1", "spanish_pairs", 4, 2000, 1_000_108, 24, (*BLOCKING, "spanish_pairs-4p"), "dc6af072db836c2d",
    ),
}  # fmt: skip
"""Written out here, so that a suite changed in place fails: a change is a new version."""


def test_the_suites_are_pinned() -> None:
    found = {
        s.name: (s.version, s.preset, s.players, s.deals, s.seed, s.pimc_samples, s.ladder, s.agent_sha256)
        for s in SUITES.values()
    }
    assert found == PINNED, (
        "a benchmark suite changed in place: give it a new version (agents/arena/benchmark.py), "
        "pin it here and run python scripts/benchmark_report.py"
    )


def test_every_default_agent_has_its_suite_and_is_the_file_it_pins() -> None:
    defaults = {name for name in SHIPPED_AGENTS if re.fullmatch(r"[a-z_]+-[234]p", name)}
    assert set(SUITES) == defaults
    for suite in SUITES.values():
        digest = hashlib.sha256((SHIPPED_DIR / f"{suite.agent}.pt").read_bytes()).hexdigest()
        assert digest.startswith(suite.agent_sha256), (
            f"{suite.agent}.pt is not the agent of {suite.label}: a new agent is a new version of the suite"
        )


def test_the_deal_seeds_are_their_own() -> None:
    """Seeds of the project's figures, training evaluations and exploiters: none is a suite's."""
    used = {0, 1, 7, 12345, 424242, *range(2026, 2038), *range(9005, 9008)}
    seeds = [suite.seed for suite in SUITES.values()]
    assert len(set(seeds)) == len(seeds) and not used & {s + k for s in seeds for k in (0, 1)}


def test_every_rung_is_the_same_opponent_whatever_the_candidate() -> None:
    suite = SUITES["block-2p"]
    rules = suite.rules()
    draws = [suite.rung("pimc", rules).rng.random() for _ in range(2)]
    assert draws[0] == draws[1]
    assert suite.rung("pimc", rules).samples == suite.pimc_samples


def test_a_rung_meets_every_other_rung_and_its_card_says_it_is_not_standard() -> None:
    result = benchmark("heaviest", "block-2p", **QUICK)
    suite = SUITES["block-2p"]
    assert [p.first for p in result.pairs] == ["heaviest"] * (len(suite.ladder) - 1)
    assert [p.second for p in result.pairs] == [r for r in suite.ladder if r != "heaviest"]
    assert (result.deals, result.seed, result.matches) == (3, suite.seed, 0)
    card = report_card(result, suite, "heaviest", plot="x.png")
    assert "Not the standard benchmark" in card and "Cite as" not in card
    assert "`domino-evaluate --benchmark block-2p heaviest deals=3`" in card and "![" in card
    assert len(ladder_plot(result, suite).axes) == 1
    with pytest.raises(ValueError, match="not a run of the benchmark draw-2p v1"):
        report_card(result, "draw-2p")


def test_the_command_writes_the_card_and_the_files(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    argv = ["--benchmark", "block-2p", "doubles", "deals=3", "progress=false", f"output.dir={tmp_path}"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "`doubles` on the benchmark block-2p v1" in out and "| block-2p |" in out
    stem = tmp_path / "block-2p-doubles"
    for suffix in (".json", ".csv", ".png", ".md"):
        assert stem.with_suffix(suffix).is_file(), suffix
    data = json.loads(stem.with_suffix(".json").read_text())
    assert data["benchmark"]["suite"] == "block-2p" and data["benchmark"]["standard"] is False
    assert data["benchmark"]["command"] == "domino-evaluate --benchmark block-2p doubles deals=3"
    assert ArenaResult.from_json(stem.with_suffix(".json")).deals == 3
    assert main(["--benchmark", "list"]) == 0
    listed = capsys.readouterr().out
    assert all(f"| {name} | v1 |" in listed for name in SUITES)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--benchmark", "blok-2p"], "unknown benchmark 'blok-2p'; did you mean 'block-2p'?"),
        (["--benchmark", "block-2p", "draw-2p", "deals=3"], "trained for preset 'draw', not 'block'"),
        (["--benchmark", "block-2p", "dealz=3"], "unknown key 'dealz' in the benchmark options"),
        (["--benchmark", "block-2p", "strong", "deals=0"], "deals"),
    ],
)
def test_refusals_are_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture) -> None:
    assert main(argv) == 2
    out = capsys.readouterr().out.strip()
    assert message in out and len(out.splitlines()) == 1, out


def test_the_reports_page_is_the_results_files() -> None:
    """docs/benchmarks.md shows what docs/benchmarks/ holds: re-render it after measuring."""
    page = ROOT / "docs" / "benchmarks.md"
    text = page.read_text(encoding="utf-8")
    rendered = with_reports(text, reports_markdown(ROOT / "docs" / "benchmarks", "benchmarks"))
    assert rendered == text, (
        "docs/benchmarks.md differs from its results files: python scripts/benchmark_report.py --page"
    )


def test_reports_say_what_is_not_measured_and_refuse_other_deals(tmp_path: Path) -> None:
    assert reports_markdown(tmp_path, "b").count("Not measured yet") == len(SUITES)
    suite = SUITES["block-2p"]
    result = benchmark("random", suite, **QUICK)
    path = report_path(tmp_path, suite, "random")
    write_result(result, suite, path, "random")
    with pytest.raises(ValueError, match="not a run of block-2p v1 on its 2,000 deals"):
        read_report(path, suite)
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "deals": suite.deals}))  # as if it had played the suite's deals
    block = reports_markdown(tmp_path, "b").split("## draw-2p")[0]
    assert "| random | – |" in block and block.count("not measured yet") == len(suite.ladder) - 1
    assert "Cite as" not in block  # the agent's row is not measured yet
