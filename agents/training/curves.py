"""Training curves read back from a run's TensorBoard event files, and the learning-curve plot.

``scripts/train.py`` logs every scalar to ``runs/<name>/`` with the global step
(decisions of every seat so far) on the x axis. The numbers that say whether a
run learned are the arena evaluations: ``eval/diff_vs_<bot>`` (points per round
against the bot on fixed duplicate deals) and ``eval/ci_vs_<bot>`` (its 95%
half-width). ``read_scalars`` gives them back as arrays, without TensorBoard's
UI, so notebooks and ``scripts/plot_curves.py`` can put several runs on one plot
with their confidence bands. A distillation run with ``distill.evaluate`` also logs
``distill_eval/*``: the same evaluations after each round, over the positions labelled.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from tensorboard.backend.event_processing import event_accumulator

XAxis = Literal["step", "wall_time"]
"""``step``: global step (decisions of every seat); ``wall_time``: seconds since the run's first event."""
Section = Literal["eval", "distill_eval"]
"""``eval``: the periodic evaluations (step: global step); ``distill_eval``: after each distillation
round (step: positions labelled so far)."""
EVENT_GLOB = "events.out.tfevents.*"


def event_files(run_dir: str | Path) -> list[Path]:
    """The TensorBoard event files directly in ``run_dir`` (a resumed run has several)."""
    return sorted(Path(run_dir).glob(EVENT_GLOB))


def read_scalars(run_dir: str | Path, x: XAxis = "step") -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every scalar of a run: tag -> (x, values), in logging order.

    TensorBoard's accumulator reads a resumed run's event files in order and
    drops the points a resume logged again (``scripts/train.py`` sets
    ``purge_step``), so each step appears once. Wall time counts from the run's
    first event, pauses between resumed sessions included.
    Raises ``FileNotFoundError`` when ``run_dir`` holds no event files.
    """
    run_dir = Path(run_dir)
    if not event_files(run_dir):
        raise FileNotFoundError(_no_events_message(run_dir))
    # size_guidance 0 keeps every point (the default keeps a random sample of 10,000 per tag).
    accumulator = event_accumulator.EventAccumulator(
        str(run_dir), size_guidance={event_accumulator.SCALARS: 0}
    )
    accumulator.Reload()
    events = {tag: accumulator.Scalars(tag) for tag in accumulator.Tags()["scalars"]}
    start = min((e[0].wall_time for e in events.values() if e), default=0.0)
    curves = {}
    for tag, points in events.items():
        xs = [p.step for p in points] if x == "step" else [p.wall_time - start for p in points]
        curves[tag] = (np.asarray(xs), np.array([p.value for p in points]))
    return curves


def eval_opponents(scalars: dict[str, tuple[np.ndarray, np.ndarray]], section: Section = "eval") -> list[str]:
    """The bots a run was evaluated against (its ``<section>/diff_vs_<bot>`` tags), in logging order."""
    diff = f"{section}/diff_vs_"
    return [tag.removeprefix(diff) for tag in scalars if tag.startswith(diff)]


def plot_learning_curves(
    run_dirs: str | Path | Sequence[str | Path],
    path_or_ax: str | Path | Axes | Sequence[Axes],
    x: XAxis = "step",
    opponents: Sequence[str] | None = None,
    labels: Sequence[str] | None = None,
    section: Section = "eval",
) -> Figure:
    """Points per round against each eval opponent over training, one line per run, with 95% CI bands.

    One panel per opponent (default: every opponent any run was evaluated
    against). ``run_dirs``: one run folder or several. ``path_or_ax``: a file to
    save a new figure to, or the axes to draw in (one per opponent). ``labels``
    default to the run folder names. ``section`` "distill_eval": the curve over
    distillation rounds instead (x: positions labelled). Returns the figure.
    """
    diff_tag, ci_tag = f"{section}/diff_vs_", f"{section}/ci_vs_"
    run_dirs = [run_dirs] if isinstance(run_dirs, (str, Path)) else list(run_dirs)
    runs = [read_scalars(run, x) for run in run_dirs]
    labels = [Path(run).name for run in run_dirs] if labels is None else list(labels)
    if len(labels) != len(runs):
        raise ValueError(f"{len(labels)} labels for {len(runs)} runs")
    if opponents is None:
        opponents = list(dict.fromkeys(bot for scalars in runs for bot in eval_opponents(scalars, section)))
    if not opponents:
        how = "distill.evaluate: true" if section == "distill_eval" else "eval.every > 0"
        raise ValueError(f"no {diff_tag}* scalars in {', '.join(map(str, run_dirs))}: train with {how}")
    if isinstance(path_or_ax, (str, Path)):
        # A bare Figure (no pyplot): renders with Agg and touches no global backend state.
        figure = Figure(figsize=(5 * len(opponents), 3.8), layout="constrained")
        axes = figure.subplots(1, len(opponents), squeeze=False)[0]
    else:
        axes = [path_or_ax] if isinstance(path_or_ax, Axes) else list(path_or_ax)
        if len(axes) != len(opponents):
            raise ValueError(f"{len(axes)} axes for {len(opponents)} opponents ({', '.join(opponents)})")
        figure = axes[0].figure
    for ax, bot in zip(axes, opponents, strict=True):
        for scalars, label in zip(runs, labels, strict=True):
            if diff_tag + bot not in scalars:
                continue
            steps, diff = scalars[diff_tag + bot]
            (line,) = ax.plot(steps, diff, marker="o", markersize=3, label=label)
            if ci_tag + bot in scalars:
                ci = scalars[ci_tag + bot][1]
                ax.fill_between(steps, diff - ci, diff + ci, color=line.get_color(), alpha=0.2, linewidth=0)
        ax.axhline(0.0, color="grey", linewidth=0.8, linestyle="--")
        ax.set_title(f"vs {bot} (95% CI)")
        if x == "wall_time":
            ax.set_xlabel("wall time (s)")
        else:
            ax.set_xlabel("positions labelled" if section == "distill_eval" else "environment steps")
        ax.set_ylabel("points per round, difference")
        ax.legend(fontsize=8)
    if isinstance(path_or_ax, (str, Path)):
        figure.savefig(path_or_ax, dpi=110)
    return figure


def _no_events_message(run_dir: Path) -> str:
    """Name the problem, and the run folders below ``run_dir`` when it is their parent (``runs/``)."""
    if not run_dir.is_dir():
        return f"{run_dir}: no such folder (scripts/train.py writes runs to <output_dir>/<name>/)"
    below = sorted({path.parent for path in run_dir.glob(f"*/{EVENT_GLOB}")})
    hint = f"; runs below it: {', '.join(map(str, below))}" if below else ""
    return f"{run_dir}: no TensorBoard event files ({EVENT_GLOB}){hint}"
