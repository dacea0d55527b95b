"""Showing an arena result: rich tables in the terminal, JSON, CSV, a PNG plot and saved games."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import IO

import numpy as np
from rich.console import Console
from rich.table import Table

from agents.arena.tournament import ArenaResult
from domino_env.files import strict_json, write_atomic

RESULT_NOTE = "null: a figure these deals cannot give (a confidence interval needs two deals or more)"

PAIR_COLUMNS = (
    "first", "second", "deals", "diff", "ci", "first_points", "second_points",
    "first_round_win", "second_round_win", "first_match_win", "second_match_win", "matches",
)  # fmt: skip


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def print_result(result: ArenaResult, console: Console) -> None:
    title = f"{result.preset} {result.players}p, {result.deals} duplicate deals"
    policies = Table(title=f"{title}: policies (by rating)")
    for column in ("policy", "points/round (95% CI)", "round win", "match win", "rating (95% CI)", "ms/move"):
        policies.add_column(column, justify="left" if column == "policy" else "right")
    for p in sorted(result.policies, key=lambda p: -p.rating):
        policies.add_row(
            p.name,
            f"{p.points:.2f} ± {p.points_ci:.2f}",
            _percent(p.round_win),
            _percent(p.match_win),
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
            _percent(p.round_win[0]),
            _percent(None if p.match_win is None else p.match_win[0]),
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
        path = stem.with_suffix(".json")
        write_atomic(path, strict_json({**result.to_dict(), "note": RESULT_NOTE}))
        written.append(path)
    if csv_out:
        path = stem.with_suffix(".csv")
        rows = io.StringIO(newline="")
        writer = csv.writer(rows)
        writer.writerow(PAIR_COLUMNS)
        for p in result.pairs:
            match = p.match_win or (None, None)
            writer.writerow(
                [p.first, p.second, p.deals, p.diff, p.ci, *p.points, *p.round_win, *match, p.matches]
            )
        write_atomic(path, rows.getvalue())
        written.append(path)
    if plot_out:
        path = stem.with_suffix(".png")
        write_atomic(path, lambda file: plot(result, file))
        written.append(path)
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


def plot(result: ArenaResult, path: Path | IO[bytes]) -> None:
    """Pairwise difference matrix (row minus column, points per round) and ratings with 95% CIs.

    Drawn on a bare ``Figure`` (no pyplot): no backend is chosen or changed, so it is
    safe inside a notebook and in a process without a display.
    """
    from matplotlib.figure import Figure

    names = [p.name for p in sorted(result.policies, key=lambda p: -p.rating)]
    index = {name: i for i, name in enumerate(names)}
    k = len(names)
    matrix = np.full((k, k), np.nan)
    labels = np.full((k, k), "", dtype=object)
    for p in result.pairs:
        i, j = index[p.first], index[p.second]
        matrix[i, j], matrix[j, i] = p.diff, -p.diff
        mark = "" if p.significant else "~"
        labels[i, j], labels[j, i] = f"{mark}{p.diff:+.1f}", f"{mark}{-p.diff:+.1f}"
    fig = Figure(figsize=(6 + 0.9 * k, 1.5 + 0.6 * k))
    left, right = fig.subplots(1, 2, width_ratios=[1.4, 1])
    limit = np.nanmax(np.abs(matrix)) if np.isfinite(matrix).any() else 1.0
    image = left.imshow(matrix, cmap="RdBu", vmin=-limit, vmax=limit)
    for i in range(k):
        for j in range(k):
            if labels[i, j]:
                left.text(j, i, labels[i, j], ha="center", va="center", fontsize=8)
    left.set_xticks(range(k), names, rotation=45, ha="right")
    left.set_yticks(range(k), names)
    left.set_title("row minus column, points/round (~: CI includes 0)", fontsize=9)
    fig.colorbar(image, ax=left, shrink=0.8)
    by_name = {p.name: p for p in result.policies}
    y = np.arange(k)[::-1]
    right.errorbar(
        [by_name[n].rating for n in names], y, xerr=[by_name[n].rating_ci for n in names], fmt="o", capsize=3
    )
    right.set_yticks(y, names)
    right.set_title("openskill rating (mu ± 1.96 sigma)", fontsize=9)
    fig.suptitle(f"{result.preset} {result.players}p, {result.deals} duplicate deals")
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")
