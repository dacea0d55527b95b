"""The standard benchmark: a fixed, versioned suite per default agent, and a report card a paper can cite.

    domino-evaluate --benchmark block-2p my_model.zip     # a file, a bot or agent name, module:attribute
    domino-evaluate --benchmark list                      # the suites

    from agents.arena.benchmark import benchmark, report_card

    result = benchmark(model, "block-2p")   # an ArenaResult: the policy head to head against every rung
    report_card(result, "block-2p")         # Markdown: the table, the plot, the command, "cite as"

A suite (``SUITES``) is data: its rules, the ladder of opponents (``random``, the heuristic bots
that make sense for the rules, ``strong``, ``pimc`` at its default budget, the shipped agent)
and a deal set, ``deals`` duplicate deals of ``seed``, that no training run or model selection
used. ``version`` names all of it: a suite is never changed in place (tests/test_benchmark_suite.py
pins each), so two figures on ``block-2p v1`` compare, whatever the machine or the release. A new
shipped agent (``agent_sha256``), other deals or another pimc budget make a new version, and the
reports of docs/benchmarks.md are measured again (``python scripts/benchmark_report.py``).

Every rung is built with a seed of its own (``seed + 1 +`` its place in the ladder) whatever the
candidate, so that every candidate meets the same opponents; a candidate that is a rung itself
(``benchmark("strong", "block-2p")``) skips its own place.
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
import signal
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

from pydantic import Field
from rich.console import Console

from agents.arena.evaluation import evaluate
from agents.arena.result import ArenaResult, interval, percent
from agents.bots.registry import Bot, load_policy
from agents.cli import error_exit
from agents.configuration import DEALS_MAX, ConfigError, ConfigModel, TopLevelConfig, apply_override
from domino_env.engine.rules import Rules
from domino_env.files import check_writable, strict_json, write_atomic

VERSION = "v1"
"""The version of the suites below; a figure is cited with its suite's name and version."""

_LADDER = ("random", "heaviest", "doubles", "diverse", "blocker", "strong", "pimc")
_FIVES_LADDER = ("random", "heaviest", "doubles", "diverse", "blocker", "fives", "strong", "pimc")
"""``fives`` only where points are scored in play: elsewhere it plays as ``heaviest`` does."""


@dataclass(frozen=True)
class Suite:
    """One standard benchmark: a policy meets every rung of ``ladder`` on the same duplicate deals."""

    name: str
    """The default agent's name, ``<preset>-<players>p``."""
    version: str
    preset: str
    players: int
    ladder: tuple[str, ...]
    """The opponents, weakest first; the last is the shipped agent."""
    deals: int
    """Duplicate deals per rung, each played from every seat."""
    seed: int
    """The deal seed: used by no training run, model selection or earlier figure of the project."""
    pimc_samples: int
    """pimc's budget, written out so that a later change of its default does not move the rung."""
    agent_sha256: str
    """The first 16 hex digits of the shipped agent's file: a new file is a new version."""

    @property
    def agent(self) -> str:
        return self.ladder[-1]

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"

    def rules(self) -> Rules:
        return Rules.preset(self.preset, self.players)

    def describe(self, deals: int | None = None) -> str:
        """The rules, the deals (``deals``: a run's own count) and pimc's budget, in words."""
        deals = self.deals if deals is None else deals
        return (
            f"{self.players}-player {self.preset}, {deals:,} duplicate deals of seed {self.seed} "
            f"(each played in every seat rotation), pimc with {self.pimc_samples} samples"
        )

    def rung(self, name: str, rules: Rules) -> Bot:
        """The rung ``name``, seeded by its place in the ladder (the same opponent for every candidate)."""
        options = {"samples": self.pimc_samples} if name == "pimc" else {}
        return load_policy(name, rules, seed=self.seed + 1 + self.ladder.index(name), **options)


# v1's seeds are 1,000,100 + the suite's number; the project's figures and model selection used
# 0-12345, 2026-2037, 9005-9007 and 424242. Deals: 4,000 rounds per rung in every suite (2,000 deals
# of 2 seatings; idrd_block 4p seats each policy alone in each seat: 500 deals of 8), so that a run
# of the costliest candidate, pimc, which plays every rung, stays within about 10 minutes on one core.
SUITES: dict[str, Suite] = {
    suite.name: suite
    for suite in (
        Suite(
            name="block-2p",
            version=VERSION,
            preset="block",
            players=2,
            ladder=(*_LADDER, "block-2p"),
            deals=2000,
            seed=1_000_101,
            pimc_samples=24,
            agent_sha256="351ab53a5d367e29",
        ),
        Suite(
            name="draw-2p",
            version=VERSION,
            preset="draw",
            players=2,
            ladder=(*_LADDER, "draw-2p"),
            deals=2000,
            seed=1_000_102,
            pimc_samples=24,
            agent_sha256="acbf913e07131df5",
        ),
        Suite(
            name="all_fives-2p",
            version=VERSION,
            preset="all_fives",
            players=2,
            ladder=(*_FIVES_LADDER, "all_fives-2p"),
            deals=2000,
            seed=1_000_103,
            pimc_samples=12,
            agent_sha256="cdd1e18003cde203",
        ),
        Suite(
            name="muggins-2p",
            version=VERSION,
            preset="muggins",
            players=2,
            ladder=(*_FIVES_LADDER, "muggins-2p"),
            deals=2000,
            seed=1_000_104,
            pimc_samples=12,
            agent_sha256="8bd71f571d443392",
        ),
        Suite(
            name="idrd_draw-2p",
            version=VERSION,
            preset="idrd_draw",
            players=2,
            ladder=(*_LADDER, "idrd_draw-2p"),
            deals=2000,
            seed=1_000_105,
            pimc_samples=24,
            agent_sha256="ee23bded4b624800",
        ),
        Suite(
            name="idrd_block-4p",
            version=VERSION,
            preset="idrd_block",
            players=4,
            ladder=(*_LADDER, "idrd_block-4p"),
            deals=500,
            seed=1_000_106,
            pimc_samples=24,
            agent_sha256="7b54fe5cc0ee71ce",
        ),
        Suite(
            name="partnership-4p",
            version=VERSION,
            preset="partnership",
            players=4,
            ladder=(*_LADDER, "partnership-4p"),
            deals=2000,
            seed=1_000_107,
            pimc_samples=24,
            agent_sha256="59124b86445ba857",
        ),
        Suite(
            name="spanish_pairs-4p",
            version=VERSION,
            preset="spanish_pairs",
            players=4,
            ladder=(*_LADDER, "spanish_pairs-4p"),
            deals=2000,
            seed=1_000_108,
            pimc_samples=24,
            agent_sha256="dc6af072db836c2d",
        ),
    )
}


def get_suite(suite: str | Suite) -> Suite:
    """The suite named ``suite``; a ValueError names the valid ones."""
    if isinstance(suite, Suite):
        return suite
    if suite not in SUITES:
        close = difflib.get_close_matches(str(suite), SUITES, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"unknown benchmark {suite!r}{hint} (suites: {', '.join(SUITES)})")
    return SUITES[suite]


def benchmark(
    policy: Any = None,
    suite: str | Suite = "block-2p",
    deals: int | None = None,
    name: str | None = None,
    progress: bool = True,
) -> ArenaResult:
    """``policy`` (anything ``evaluate`` takes; None: the suite's agent) head to head against every rung.

    ``deals``: fewer deals than the suite's for a quick look; the result is then not the standard
    benchmark, and its report card says so.
    """
    suite = get_suite(suite)
    policy = suite.agent if policy is None else policy
    rules = suite.rules()
    own = policy if isinstance(policy, str) and policy in suite.ladder else None
    rungs = [suite.rung(rung, rules) for rung in suite.ladder if rung != own]
    return evaluate(
        suite.rung(own, rules) if own else policy,
        preset=suite.preset,
        players=suite.players,
        against=rungs,
        deals=suite.deals if deals is None else deals,
        matches=0,
        seed=suite.seed,
        name=name,
        progress=progress,
    )


def candidate(result: ArenaResult) -> str:
    """The benchmarked policy's name (the first of every pair)."""
    return result.pairs[0].first


def check_result(result: ArenaResult, suite: Suite) -> None:
    """A ValueError unless ``result`` is ``suite``'s benchmark of one policy (any number of deals)."""
    name = candidate(result)
    expected = [rung for rung in suite.ladder if rung != name]
    found = (result.preset, result.players, result.seed, [p.second for p in result.pairs])
    if found != (suite.preset, suite.players, suite.seed, expected):
        raise ValueError(
            f"this result ({result.title()}, against {', '.join(found[3])}) is not a run of the "
            f"benchmark {suite.label}: run it again with benchmark(policy, {suite.name!r})"
        )


def command(suite: Suite, spec: str | None, deals: int | None = None) -> str:
    """The command that measures it again: a CLI line for a policy named by a string, else Python."""
    standard = deals in (None, suite.deals)
    if spec is None:
        return f"benchmark(policy, {suite.name!r}{'' if standard else f', deals={deals}'})"
    return (
        f"domino-evaluate --benchmark {suite.name} {shlex.quote(spec)}{'' if standard else f' deals={deals}'}"
    )


def report_card(
    result: ArenaResult, suite: str | Suite, spec: str | None = None, plot: str | None = None
) -> str:
    """The Markdown report of one benchmark run: where the policy stands on the ladder, the table, the
    plot (a path or link to ``ladder_plot``'s PNG), the command that measures it again and a "cite as"
    line. ``spec``: the policy as the command line names it (a file, a name, ``module:attribute``)."""
    suite = get_suite(suite)
    check_result(result, suite)
    name = candidate(result)
    standard = result.deals == suite.deals
    lines = [
        f"## `{name}` on the benchmark {suite.label}",
        "",
        f"{suite.describe(result.deals)}; {_release()}.",
        "",
    ]
    if not standard:
        lines += [
            f"**Not the standard benchmark**: {result.deals:,} deals instead of {suite.deals:,}, so these "
            "figures compare with no published report, and are not for citing.",
            "",
        ]
    lines += [_standing(result), ""]
    lines += ["| rung | Δ points/round (95% CI) | verdict | round win |", "|---|---|---|---|"]
    for pair in result.pairs:
        figure, win = interval(pair.diff, pair.ci), percent(pair.round_win[0])
        lines.append(f"| {pair.second} | {figure} | {_verdict(pair)} | {win} |")
    if plot:
        lines += ["", f"![{name} against the ladder of {suite.label}]({plot})"]
    lines += [
        "",
        f"Measure it again: `{command(suite, spec, result.deals)}` ({result.rounds:,} rounds, "
        f"{result.seconds:,.0f} s here).",
    ]
    if standard:
        lines += ["", f"Cite as: {cite(result, suite)}"]
    return "\n".join(lines)


def cite(result: ArenaResult, suite: Suite) -> str:
    """One line naming the suite, its version and deals, and the policy's figures against the top rungs
    (``strong``, ``pimc`` and the agent)."""
    top = [p for p in result.pairs if p.second in ("strong", "pimc", suite.agent)]
    figures = ", ".join(f"{interval(p.diff, p.ci)} against {p.second}" for p in top)
    return (
        f"domino-rl benchmark {suite.label} ({suite.players}-player {suite.preset}, {result.deals:,} "
        f"duplicate deals of seed {suite.seed}; {_release()}): {candidate(result)}, points per round: "
        f"{figures}."
    )


def ladder_plot(result: ArenaResult, suite: str | Suite, path: str | Path | None = None) -> Any:
    """The policy's difference against each rung, weakest at the bottom, with its 95% CI, as a matplotlib
    ``Figure`` (saved as PNG to ``path``); a bare ``Figure``, so no backend is chosen or changed."""
    from matplotlib.figure import Figure

    suite = get_suite(suite)
    check_result(result, suite)
    figure = Figure(figsize=(6.4, 1.2 + 0.42 * len(result.pairs)))
    axes = figure.subplots()
    y = range(len(result.pairs))
    colours = [
        {"above": "tab:blue", "level": "tab:gray", "below": "tab:red"}[_verdict(p)] for p in result.pairs
    ]
    for row, pair, colour in zip(y, result.pairs, colours, strict=True):
        ci = pair.ci if pair.ci != float("inf") else 0.0
        axes.errorbar(pair.diff, row, xerr=ci, fmt="o", color=colour, capsize=3)
        axes.annotate(
            interval(pair.diff, pair.ci),
            (pair.diff, row),
            textcoords="offset points",
            xytext=(0, 7),
            ha="center",
            fontsize=8,
        )
    axes.axvline(0, color="black", linewidth=0.8)
    axes.margins(x=0.12)  # room for the labels of the outermost points
    axes.set_yticks(list(y), [p.second for p in result.pairs])
    axes.set_ylim(-0.6, len(result.pairs) - 0.4)
    axes.set_xlabel(f"{candidate(result)} minus the rung, points per round (95% CI)")
    figure.suptitle(
        f"{candidate(result)} on {suite.label}: {result.deals:,} deals of seed {suite.seed}", fontsize=10
    )
    figure.tight_layout()
    if path is not None:
        write_atomic(Path(path), lambda file: figure.savefig(file, dpi=110, format="png"))
    return figure


def _release() -> str:
    try:
        return f"domino-rl {package_version('domino-rl')}"
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "domino-rl (not installed)"


def _verdict(pair: Any) -> str:
    return ("above" if pair.diff > 0 else "below") if pair.significant else "level"


def _standing(result: ArenaResult) -> str:
    """``x`` is above random, ...; level with pimc; below block-2p (by the 95% CIs)."""
    groups: dict[str, list[str]] = {"above": [], "level": [], "below": []}
    for pair in result.pairs:
        groups[_verdict(pair)].append(f"`{pair.second}`")
    words = {"above": "above", "level": "level with", "below": "below"}
    parts = [f"{words[key]} {', '.join(names)}" for key, names in groups.items() if names]
    return f"`{candidate(result)}` is {'; '.join(parts)} (95% CIs of the paired differences)."


def metadata(result: ArenaResult, suite: Suite, spec: str | None) -> dict[str, Any]:
    """What a results file says of the benchmark besides the arena result (``write_result`` adds it)."""
    return {
        "suite": suite.name,
        "version": suite.version,
        "standard": result.deals == suite.deals,
        "ladder": list(suite.ladder),
        "pimc_samples": suite.pimc_samples,
        "agent_sha256": suite.agent_sha256,
        "release": _release(),
        "command": command(suite, spec, result.deals),
    }


def write_result(result: ArenaResult, suite: Suite, path: Path, spec: str | None) -> None:
    """The results file: the arena result (``ArenaResult.from_json`` reads it) plus ``metadata``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(
        path, strict_json({**json.loads(result.to_json()), "benchmark": metadata(result, suite, spec)})
    )


def save(result: ArenaResult, suite: Suite, stem: Path, spec: str | None) -> list[Path]:
    """Write ``stem``.json (``write_result``), .csv, .png (``ladder_plot``) and .md (the report card);
    returns the paths, the card's last."""
    written = [stem.with_suffix(suffix) for suffix in (".json", ".csv", ".png", ".md")]
    write_result(result, suite, written[0], spec)
    result.to_csv(written[1])
    ladder_plot(result, suite, written[2])
    write_atomic(written[3], report_card(result, suite, spec, plot=written[2].name) + "\n")
    return written


def suites_table() -> str:
    """The suites as Markdown: what ``--benchmark list`` prints."""
    lines = ["| suite | version | rules | deals | seed | ladder |", "|---|---|---|---|---|---|"]
    for s in SUITES.values():
        rules = f"{s.preset} {s.players}p"
        lines.append(
            f"| {s.name} | {s.version} | {rules} | {s.deals:,} | {s.seed} | {' → '.join(s.ladder)} |"
        )
    return "\n".join(lines)


class BenchmarkOutput(ConfigModel):
    """Where ``domino-evaluate --benchmark`` writes its files."""

    dir: str = "runs/benchmark"
    """The folder of ``<suite>-<policy>.json``, ``.csv``, ``.png`` and ``.md``."""


class BenchmarkOptions(TopLevelConfig):
    """The overrides ``domino-evaluate --benchmark SUITE POLICY`` takes (``key=value``)."""

    config_name = "the benchmark options"

    deals: int | None = Field(None, ge=1, le=DEALS_MAX)
    """Fewer deals for a quick look (the card then says it is not the standard benchmark)."""
    progress: bool = True
    """Show progress bars."""
    output: BenchmarkOutput = Field(default_factory=BenchmarkOutput)
    """Where the files go."""


def run_command(suite_name: str, policy: str | None, overrides: list[str], console: Console) -> int:
    """``domino-evaluate --benchmark SUITE [POLICY] [key=value ...]``: print the report card and write
    the files; ``list`` prints the suites. Every refusal is one line (exit status 2)."""
    if suite_name == "list":
        console.print(suites_table(), markup=False, highlight=False, soft_wrap=True)
        return 0
    label = "benchmark error"
    try:
        suite = get_suite(suite_name)
        label = f"benchmark {suite.label} ({suite.players}-player {suite.preset})"
        raw: dict[str, Any] = {}
        for item in overrides:
            apply_override(raw, item)
        options = BenchmarkOptions.parse(raw)
        check_writable(Path(options.output.dir))
        result = benchmark(policy, suite, deals=options.deals, progress=options.progress)
        stem = Path(options.output.dir) / f"{suite.name}-{_file_name(candidate(result))}"
        written = save(result, suite, stem, suite.agent if policy is None else policy)
    except ValueError as error:  # ConfigError, PolicyError, CheckpointError: what the user gave
        return error_exit(console, error, label)
    except OSError as error:
        return error_exit(console, error)
    except KeyboardInterrupt:
        console.print("interrupted: nothing was written (deals=N finishes sooner)", soft_wrap=True)
        return 128 + signal.SIGINT
    console.print(written[-1].read_text(), markup=False, highlight=False, soft_wrap=True)
    for path in written:
        console.print(f"wrote {path}", soft_wrap=True)
    return 0


def _file_name(name: str) -> str:
    return re.sub(r"[^\w.-]+", "_", name).strip("._") or "policy"


# The reports of docs/benchmarks.md: every rung of every suite benchmarked, one results file each.

REPORTS_START, REPORTS_END = "<!-- benchmark-reports -->", "<!-- /benchmark-reports -->"
REPORTS_COMMAND = "python scripts/benchmark_report.py"


def report_path(folder: Path, suite: Suite, member: str) -> Path:
    """The results file of ``member``'s benchmark on ``suite`` under the reports folder."""
    return folder / suite.name / f"{member}.json"


def read_report(path: Path, suite: Suite) -> ArenaResult | None:
    """The result in ``path`` (None if there is none); a ValueError if it is not ``suite``'s standard run."""
    if not path.is_file():
        return None
    result = ArenaResult.from_json(path)
    check_result(result, suite)
    meta = json.loads(path.read_text()).get("benchmark", {})
    if (meta.get("version"), result.deals) != (suite.version, suite.deals):
        raise ValueError(
            f"{path} is not a run of {suite.label} on its {suite.deals:,} deals: "
            f"{REPORTS_COMMAND} {suite.name} --force"
        )
    return result


def reports_markdown(folder: Path, link: str) -> str:
    """Every suite's reports as Markdown, from the results files in ``folder`` (``link``: the same
    folder as the page links it); a member without a file shows as not measured yet."""
    lines = ["## The suites", "", suites_table(), ""]
    for suite in SUITES.values():
        lines += _suite_reports(suite, folder, f"{link}/{suite.name}")
    return "\n".join(lines).strip()


def _suite_reports(suite: Suite, folder: Path, link: str) -> list[str]:
    results = {member: read_report(report_path(folder, suite, member), suite) for member in suite.ladder}
    lines = [
        f"## {suite.label}",
        "",
        f"{suite.describe()}; the agent `{suite.agent}` is the file whose sha256 starts "
        f"`{suite.agent_sha256}`. "
        f"Each row is one policy's benchmark (`domino-evaluate --benchmark {suite.name} <policy>`): the "
        "row minus the column in points per round (95% CI), bold where the row is above.",
        "",
    ]
    if not any(results.values()):
        return [*lines, f"Not measured yet: `{REPORTS_COMMAND} {suite.name}`.", ""]
    lines += [
        "| policy | " + " | ".join(suite.ladder) + " | seconds |",
        "|---" * (len(suite.ladder) + 2) + "|",
    ]
    for member, result in results.items():
        if result is None:
            missing = ["not measured yet", *[""] * len(suite.ladder)]
            lines.append(f"| {member} | " + " | ".join(missing) + " |")
            continue
        pairs = {p.second: p for p in result.pairs}
        cells = [_cell(pairs[rung]) if rung in pairs else "–" for rung in suite.ladder]
        lines.append(f"| {member} | " + " | ".join(cells) + f" | {result.seconds:,.0f} |")
    timed = sorted((result.seconds, member) for member, result in results.items() if result is not None)
    (low, fastest), (high, slowest) = timed[0], timed[-1]
    lines += ["", f"One run took {low:,.0f} s (`{fastest}`) to {high:,.0f} s (`{slowest}`)."]
    agent = results[suite.agent]
    if agent is not None:
        if (folder / suite.name / f"{suite.agent}.png").is_file():
            lines += ["", f"![{suite.agent} against the ladder of {suite.label}]({link}/{suite.agent}.png)"]
        lines += ["", f"Cite as: {cite(agent, suite)}"]
    return [*lines, ""]


def _cell(pair: Any) -> str:
    text = interval(pair.diff, pair.ci)
    return f"**{text}**" if pair.significant and pair.diff > 0 else text


def with_reports(text: str, reports: str) -> str:
    """``text`` with ``reports`` between its markers (ValueError if it has none)."""
    start, end = text.find(REPORTS_START), text.find(REPORTS_END)
    if start < 0 or end < start:
        raise ValueError(f"no {REPORTS_START} ... {REPORTS_END} markers")
    return text[: start + len(REPORTS_START)] + "\n" + reports + "\n" + text[end:]
