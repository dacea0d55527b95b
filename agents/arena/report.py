"""Showing an arena run: progress bars and rich tables in the terminal, the result files and saved games."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from agents.arena.result import ArenaResult, percent
from agents.arena.tournament import Progress as ProgressCallback
from domino_env.files import strict_json, write_atomic


@contextlib.contextmanager
def progress_bars(console: Console, enabled: bool = True) -> Iterator[ProgressCallback]:
    """A ``run_arena`` progress callback drawing one bar per mode (rounds, matches) with its rate and ETA."""
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("[cyan]{task.fields[rate]}"),
        TimeRemainingColumn(),
        console=console,
        disable=not enabled,
    ) as bar:

        def progress(label: str, total: int) -> Callable[[int], None]:
            task = bar.add_task(label, total=total, rate="")

            def advance(done: int) -> None:
                bar.advance(task, done)
                state = bar.tasks[task]  # the average since the start, as the summary reports
                speed = state.completed / state.elapsed if state.elapsed else 0.0
                bar.update(task, rate=f"{speed:,.0f} {label}/s" if speed else "")

            return advance

        yield progress


def print_result(result: ArenaResult, console: Console) -> None:
    title = result.title()
    policies = Table(title=f"{title}: policies (by rating)")
    for column in ("policy", "points/round (95% CI)", "round win", "match win", "rating (95% CI)", "ms/move"):
        policies.add_column(column, justify="left" if column == "policy" else "right")
    for p in sorted(result.policies, key=lambda p: -p.rating):
        policies.add_row(
            p.name,
            f"{p.points:.2f} ± {p.points_ci:.2f}",
            percent(p.round_win),
            percent(p.match_win),
            f"{p.rating:.1f} ± {p.rating_ci:.1f}",
            f"{p.ms_per_move:.3f}",
        )
    console.print(policies)
    pairs = Table(title=f"{title}: pairs (difference in points per round, paired over deals)")
    for column in ("first", "second", "Δ points/round (95% CI)", "", "first round win", "first match win"):
        pairs.add_column(column, justify="left" if column in ("first", "second") else "right")
    for p in result.pairs:
        verdict = (
            ("[green]first better" if p.diff > 0 else "[red]second better") if p.significant else "parity"
        )
        pairs.add_row(
            p.first,
            p.second,
            f"{p.diff:+.2f} ± {p.ci:.2f}",
            verdict,
            percent(p.round_win[0]),
            percent(None if p.match_win is None else p.match_win[0]),
        )
    console.print(pairs)
    console.print(
        f"{result.rounds} rounds in {result.seconds:.1f} s ({result.rounds_per_second:,.0f} rounds/s)"
        + (f"; matches {result.match_seconds:.1f} s" if result.matches else "")
    )


def save(result: ArenaResult, stem: Path, json_out: bool, csv_out: bool, plot_out: bool) -> list[Path]:
    """Write the requested files next to each other, and the saved games if any; returns their paths.

    Each file is written whole or not at all (``write_atomic``); the JSON is strict (a figure that
    cannot be computed, such as a CI from one deal, is null: ``RESULT_NOTE`` says so in the file).
    """
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    if result.games:
        written.append(save_games(result.games, stem.parent / f"{stem.name}-games"))
    if json_out:
        written.append(stem.with_suffix(".json"))
        result.to_json(written[-1])
    if csv_out:
        written.append(stem.with_suffix(".csv"))
        result.to_csv(written[-1])
    if plot_out:
        written.append(stem.with_suffix(".png"))
        result.plot(written[-1])
    return written


def save_games(games: list[dict], folder: Path) -> Path:
    """Each game as a record file (``game-000.json``: ``python -m domino_env replay`` reads it) and
    ``games.json``, the index saying which policy sat at each seat; returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    index = []
    for number, game in enumerate(games):
        name = f"game-{number:03d}.json"
        write_atomic(folder / name, strict_json(game["record"], indent=1))
        index.append({"file": name, "seats": game["seats"], "deal": game["deal"]})
    write_atomic(folder / "games.json", strict_json({"games": index}, indent=1))
    return folder
