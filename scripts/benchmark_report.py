"""Measure the standard benchmark of every member of each suite's ladder, and render docs/benchmarks.md.

    python scripts/benchmark_report.py                    # every suite: the members not measured yet
    python scripts/benchmark_report.py block-2p draw-2p   # these suites only
    python scripts/benchmark_report.py block-2p --force   # measure them again
    python scripts/benchmark_report.py --page             # only render the page from the files

A member's result goes to docs/benchmarks/<suite>/<member>.json as soon as it is measured, and the
page is rendered after each (with the agent's ladder plot, ``<agent>.png``, drawn from its file), so
an interrupted run keeps what finished; tests/test_benchmark_suite.py fails while the page differs
from the files (agents/arena/benchmark.py).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.console import Console

import agents  # noqa: F401  (registers the .pt loader the shipped agents need)
from agents.arena.benchmark import (
    SUITES,
    Suite,
    benchmark,
    get_suite,
    ladder_plot,
    read_report,
    report_path,
    reports_markdown,
    with_reports,
    write_result,
)
from agents.cli import error_exit

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "docs" / "benchmarks"
PAGE = ROOT / "docs" / "benchmarks.md"
LINK = "benchmarks"
"""The results folder as the page links it."""


def render() -> None:
    """Draw each suite's agent's ladder plot from its results file, and write the reports of the files
    in ``FOLDER`` into the page, between its markers."""
    for suite in SUITES.values():
        path = report_path(FOLDER, suite, suite.agent)
        result = read_report(path, suite)
        if result is not None:
            ladder_plot(result, suite, path.with_suffix(".png"))
    PAGE.write_text(with_reports(PAGE.read_text(), reports_markdown(FOLDER, LINK)))


def measured(suite: Suite, member: str) -> bool:
    """True if ``member`` has a results file of this suite's standard run (a stale one is measured again)."""
    try:
        return read_report(report_path(FOLDER, suite, member), suite) is not None
    except ValueError:
        return False


def measure(suite: Suite, member: str) -> None:
    """One member's benchmark, written to its results file."""
    started = time.strftime("%H:%M:%S")
    print(f"{started} {suite.label}: {member} against {len(suite.ladder) - 1} rungs", flush=True)
    result = benchmark(member, suite, progress=False)
    write_result(result, suite, report_path(FOLDER, suite, member), member)
    print(f"{time.strftime('%H:%M:%S')} {suite.label}: {member} done in {result.seconds:,.0f} s", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suites", nargs="*", help=f"suites to measure (default: all; {', '.join(SUITES)})")
    parser.add_argument("--force", action="store_true", help="measure members that have a results file too")
    parser.add_argument("--page", action="store_true", help="measure nothing: only render the page")
    args = parser.parse_args(argv)
    console = Console()
    try:
        suites = [get_suite(name) for name in args.suites or SUITES]
        for suite in [] if args.page else suites:
            for member in (suite.agent, *suite.ladder[:-1]):  # the suite's own report first
                if args.force or not measured(suite, member):
                    measure(suite, member)
                    render()
        render()
    except (ValueError, OSError) as error:
        return error_exit(console, error)
    console.print(f"rendered {PAGE}", soft_wrap=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
