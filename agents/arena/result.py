"""``ArenaResult``: what one arena run measured, readable in a notebook and as the files a command writes.

In a notebook the result shows as a Markdown table (``_repr_markdown_``), in a terminal
as plain text (``repr``); ``to_json`` and ``to_csv`` give exactly the files
``domino-evaluate`` writes, and ``plot`` its PNG as a matplotlib ``Figure``.
``ArenaResult.from_json`` reads a result file back (the benchmark's report cards do).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import IO, Any

import numpy as np

from agents.arena.stats import PairResult, PolicyResult
from domino_env.files import strict_json, write_atomic

RESULT_NOTE = "null: a figure these deals cannot give (a confidence interval needs two deals or more)"

PAIR_COLUMNS = (
    "first", "second", "deals", "diff", "ci", "first_points", "second_points",
    "first_round_win", "second_round_win", "first_match_win", "second_match_win", "matches",
)  # fmt: skip


@dataclass
class ArenaResult:
    """Everything one arena run measured (see the module docstring for its views)."""

    preset: str
    players: int
    format: str
    deals: int
    matches: int
    seed: int
    pairs: list[PairResult]
    policies: list[PolicyResult]
    rounds: int
    """Rounds played in the round-mode run (pairs x rotations x deals)."""
    seconds: float
    """Wall time of the round-mode run."""
    match_seconds: float
    games: list[dict] = field(default_factory=list)
    """Saved rounds (``config.save_games``): ``{"record", "seats", "deal"}``, ``seats`` naming the
    policy at each seat; kept out of ``to_dict`` (``report.save`` writes them as files)."""

    @property
    def rounds_per_second(self) -> float:
        return self.rounds / self.seconds if self.seconds else float("inf")

    def to_dict(self) -> dict:
        out = asdict(self)
        del out["games"]
        out["rounds_per_second"] = self.rounds_per_second
        return out

    def to_json(self, path: str | Path | None = None) -> str:
        """The result file ``domino-evaluate`` writes (strict JSON: an incomputable figure is null);
        written whole to ``path`` when given."""
        text = strict_json({**self.to_dict(), "note": RESULT_NOTE})
        if path is not None:
            write_atomic(Path(path), text)
        return text

    @classmethod
    def from_json(cls, source: str | Path) -> ArenaResult:
        """A result from ``to_json``'s text or from the file at ``source``."""
        is_text = isinstance(source, str) and source.lstrip().startswith("{")
        data = json.loads(source if is_text else Path(source).read_text())
        known = {f.name for f in fields(cls)} - {"pairs", "policies", "games"}
        pairs = [PairResult(**_restored(p)) for p in data["pairs"]]
        policies = [PolicyResult(**_restored(p)) for p in data["policies"]]
        return cls(
            **{k: v for k, v in data.items() if k in known},
            pairs=pairs,
            policies=policies,
        )

    def to_csv(self, path: str | Path | None = None) -> str:
        """One row per pair (``PAIR_COLUMNS``), the CSV ``domino-evaluate`` writes; a figure these deals
        cannot give is an empty cell (null in the JSON)."""
        rows = io.StringIO(newline="")
        writer = csv.writer(rows)
        writer.writerow(PAIR_COLUMNS)
        for p in self.pairs:
            match = p.match_win or (None, None)
            row = [p.first, p.second, p.deals, p.diff, p.ci, *p.points, *p.round_win, *match, p.matches]
            writer.writerow(["" if isinstance(v, float) and not np.isfinite(v) else v for v in row])
        text = rows.getvalue()
        if path is not None:
            write_atomic(Path(path), text)
        return text

    def plot(self, path: str | Path | IO[bytes] | None = None) -> Any:
        """The pairwise differences and the ratings as a matplotlib ``Figure`` (saved as PNG to ``path``).

        Drawn on a bare ``Figure`` (no pyplot): no backend is chosen or changed, so it is safe
        inside a notebook and in a process without a display.
        """
        figure = _figure(self)
        if isinstance(path, (str, Path)):
            write_atomic(Path(path), lambda file: figure.savefig(file, dpi=110, format="png"))
        elif path is not None:
            figure.savefig(path, dpi=110, format="png")
        return figure

    def markdown(self) -> str:
        """The pairs (difference in points per round, paired over deals) and the policies, as Markdown."""
        lines = [f"**{self.title()}**", "", *_pairs_table(self), "", *_policies_table(self)]
        return "\n".join(lines)

    def title(self) -> str:
        matches = f", {self.matches} duplicate matches" if self.matches else ""
        return f"{self.preset} {self.players}p, {self.deals} duplicate deals (seed {self.seed}){matches}"

    def _repr_markdown_(self) -> str:
        return self.markdown()

    def __repr__(self) -> str:
        return self.markdown().replace("**", "")


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def interval(value: float, ci: float, digits: int = 2) -> str:
    """``+0.29 ± 0.05``; a CI these deals cannot give shows as ``± ?``."""
    spread = f"{ci:.{digits}f}" if np.isfinite(ci) else "?"
    return f"{value:+.{digits}f} ± {spread}"


def _pairs_table(result: ArenaResult) -> list[str]:
    lines = [
        "| first | second | Δ points/round (95% CI) | verdict | first round win | first match win |",
        "|---|---|---|---|---|---|",
    ]
    for p in result.pairs:
        verdict = ("first better" if p.diff > 0 else "second better") if p.significant else "parity"
        match = percent(None if p.match_win is None else p.match_win[0])
        lines.append(
            f"| {p.first} | {p.second} | {interval(p.diff, p.ci)} | {verdict} "
            f"| {percent(p.round_win[0])} | {match} |"
        )
    return lines


def _policies_table(result: ArenaResult) -> list[str]:
    lines = [
        "| policy | points/round (95% CI) | round win | match win | rating (95% CI) | ms/move |",
        "|---|---|---|---|---|---|",
    ]
    for p in sorted(result.policies, key=lambda p: -p.rating):
        lines.append(
            f"| {p.name} | {interval(p.points, p.points_ci)} | {percent(p.round_win)} | "
            f"{percent(p.match_win)} | {p.rating:.1f} ± {p.rating_ci:.1f} | {p.ms_per_move:.3f} |"
        )
    return lines


def _restored(row: dict[str, Any]) -> dict[str, Any]:
    """A pair's or policy's JSON row as its dataclass holds it: lists as tuples, a null CI as inf."""
    out = dict(row)
    for key in ("points", "round_win", "match_win"):
        if isinstance(out.get(key), list):
            out[key] = tuple(out[key])
    for key in ("ci", "points_ci", "rating_ci"):
        if key in out and out[key] is None:
            out[key] = float("inf")
    return out


def _figure(result: ArenaResult) -> Any:
    """Pairwise difference matrix (row minus column, points per round) and ratings with 95% CIs."""
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
    fig.suptitle(result.title())
    fig.tight_layout()
    return fig
