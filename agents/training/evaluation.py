"""Evaluations during training: a checkpoint in the duplicate arena, its scalars, and best.pt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from torch.utils.tensorboard import SummaryWriter

from agents.arena.config import ArenaConfig
from agents.arena.tournament import run_arena
from agents.training.checkpoint import capture_rng, restore_rng
from agents.training.config import TrainConfig
from agents.training.state import RunState, record_score


def evaluate_checkpoint(
    path: Path,
    payload: dict[str, Any],
    state: RunState,
    config: TrainConfig,
    writer: SummaryWriter,
    console: Console,
) -> float:
    """Evaluate checkpoint ``path`` (saved from ``payload`` with ``eval_due``), keep it as best.pt if it
    is the best so far and record its score in it, in the write order of ``training/state.py``, which
    any kill leaves recoverable. Returns its score; ``state.best_score`` becomes the best so far."""
    curves = [("eval", payload["global_step"])]
    if config.distill.evaluate and payload["update"] == 0:  # the distillation curve's last point
        curves.append(("distill_eval", config.distill.rounds * config.distill.positions))
    score = evaluate(path, config, state.rng, writer, curves, console)
    writer.flush()
    state.best_score = record_score(path, payload, score)
    return score


def evaluate(
    path: Path,
    config: TrainConfig,
    rng: np.random.Generator,
    writer: SummaryWriter,
    curves: list[tuple[str, int]],
    console: Console,
) -> float:
    """Greedy policy at ``path`` vs each eval opponent and the best checkpoint so far, on duplicate deals.

    ``curves``: (TensorBoard section, step) pairs the results are logged under. The arena draws
    from torch's global RNG (it builds networks): training (``rng`` and the global streams) gets its
    streams back untouched, so that a run goes on the same with evaluations or without.

    Returns what picks ``best.pt``: the worst result against the eval opponents (the strongest one
    decides), as the points difference per round, or for match episodes the share of duplicate
    matches won (``eval.deals`` matches, besides the rounds).
    """
    best = path.parent / "best.pt"
    previous = [str(best)] if best.exists() else []
    matches = config.episode == "match"
    arena = ArenaConfig(
        preset=config.preset,
        players=config.players,
        rules=config.rules,
        policies=[str(path), *config.eval.opponents, *previous],
        format="head_to_head",
        deals=config.eval.deals,
        matches=config.eval.deals if matches else 0,
        seed=config.eval.seed,
        bots={name: options for name, options in config.bots.items() if name in config.eval.opponents},
        progress=False,
    )
    saved = capture_rng(rng)
    result = run_arena(arena)
    restore_rng(saved, rng)
    summary = []
    for pair in result.pairs:
        name = pair.second  # the arena names best.pt "best"
        for section, step in curves:
            writer.add_scalar(f"{section}/diff_vs_{name}", pair.diff, step)
            writer.add_scalar(f"{section}/ci_vs_{name}", pair.ci, step)
            writer.add_scalar(f"{section}/round_win_vs_{name}", pair.round_win[0], step)
            if matches:
                writer.add_scalar(f"{section}/match_win_vs_{name}", pair.match_win[0], step)
        summary.append(f"{name} {pair.diff:+.2f}±{pair.ci:.2f}")
        if matches:
            summary[-1] += f" (matches won {pair.match_win[0]:.1%})"
    console.print(f"eval {path.name}: points/round vs " + ", ".join(summary))
    against = result.pairs[: len(config.eval.opponents)]  # not the pair against best.pt
    return min(pair.match_win[0] if matches else pair.diff for pair in against)
