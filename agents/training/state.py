"""A training run's state: what its checkpoints hold, and what ``--resume`` puts back.

``RunState`` is everything that carries a run from one update to the next: the network and its
optimizer, the random streams, the update and step counters, the best evaluation score so far and
the pool of earlier weights the ``past`` opponent draws from. The phases of ``training/train.py``
(and the distillation, ``training/distillation.py``) read and write it; ``RunState.payload`` and
``RunState.resume`` are the one place a checkpoint's dict is built and read (its layout and checks:
``training/checkpoint.py``).

An evaluated checkpoint is written in an order that makes a kill at any point recoverable
(``record_score``, ``recover``):

1. ``update_N.pt`` is saved with ``eval_due`` and no ``eval_score``;
2. the arena plays it (``training/evaluation.py``: its scalars are logged and flushed);
3. if it beats the best score, it is saved as ``best.pt``, its score as ``best_score``;
4. ``update_N.pt`` is saved again with its ``eval_score`` (and the new ``best_score``).

best.pt is written before any checkpoint records its score, so best.pt's ``best_score`` is the best
score so far (the resume takes it from there, not from ``update_N.pt``). A kill before 3 leaves the
evaluation pending and best.pt the one it played: the resume evaluates it again. A kill between 3
and 4 leaves best.pt holding update N and its score: the resume takes the record from it.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from rich.console import Console

from agents.bots.registry import checkpoint_path
from agents.training.checkpoint import (
    FORMAT,
    MEMBERS,
    POLICY_KEYS,
    CheckpointError,
    build_model,
    capture_rng,
    load_checkpoint,
    restore_rng,
    save_checkpoint,
    update_checkpoints,
)
from agents.training.config import RESUMABLE_CHANGES, SnapshotConfig, TrainConfig, parse_train_config
from agents.training.network import ActorCritic, build_network
from domino_env.engine.rules import Rules

Weights = dict[str, torch.Tensor]
Pending = tuple[Path, dict[str, Any]]
"""A checkpoint whose evaluation a kill cut short, and its payload."""


@dataclass
class RunState:
    """What carries a run from one update to the next (a checkpoint holds it, with the config): what
    each phase of the run reads and writes."""

    model: ActorCritic
    optimizer: torch.optim.Optimizer
    rng: np.random.Generator
    """Draws the minibatches and the ``past`` snapshots. Torch's and Python's global streams (new
    networks' weights) are saved and restored with it; the rollouts draw from streams of their own,
    seeded per update and shard (training/distributed.py)."""
    update: int = 0
    global_step: int = 0
    """Table steps played so far, summed over the games (TensorBoard's x axis)."""
    best_score: float = -math.inf
    """The best evaluation score so far (``-inf`` before the first)."""
    snapshots: list[Weights] = field(default_factory=list)
    """The pool the ``past`` opponent draws from, oldest first."""

    @classmethod
    def start(cls, config: TrainConfig, rules: Rules, device: torch.device, resuming: bool) -> RunState:
        """A run's first state, every stream seeded by ``config.seed`` (rollouts per update and shard).

        ``model.init`` gives the starting weights unless ``resuming`` (a checkpoint's replace them).
        """
        random.seed(config.seed)
        rng = np.random.default_rng(config.seed)
        torch.manual_seed(config.seed)
        model = build_network(rules, config.model.model_dump()).to(device)
        if config.model.init and not resuming:  # fine-tuning: a trained network's weights
            load_init_weights(model, config.model.init, rules)
        if config.episode == "round" and not rules.fives:
            # Every round starts at 0-0 and, without fives, scores only when it ends: no position of
            # this run shows a game score, so a match's scores must not move its moves either.
            model.ignore_game_scores()
        optimizer = torch.optim.Adam(model.parameters(), lr=config.ppo.lr, eps=1e-5)
        return cls(model, optimizer, rng, snapshots=[weights(model)])

    def advance(self, steps: int, pool: SnapshotConfig) -> None:
        """Count an update of ``steps`` table steps; every ``pool.every`` updates the learner joins the
        ``past`` pool (the last ``pool.keep`` are kept)."""
        self.update += 1
        self.global_step += steps
        if self.update % pool.every == 0:
            self.snapshots = [*self.snapshots, weights(self.model)][-pool.keep :]

    def payload(self, config: TrainConfig, eval_due: bool = False) -> dict[str, Any]:
        """The checkpoint of this state; ``eval_due``: it is to be evaluated (its score recorded later)."""
        return {
            "format": FORMAT,
            "model": weights(self.model),
            "optimizer": self.optimizer.state_dict(),
            "config": config.to_dict(),
            "update": self.update,
            "global_step": self.global_step,
            "best_score": self.best_score,
            "rng": capture_rng(self.rng),
            "snapshots": self.snapshots,
            "eval_due": eval_due,
            "eval_score": None,  # recorded once it is evaluated (record_score)
        }

    def save(self, path: Path, config: TrainConfig, eval_due: bool = False) -> dict[str, Any]:
        """Write this state's checkpoint to ``path`` (atomically); returns its payload."""
        payload = self.payload(config, eval_due)
        save_checkpoint(path, payload)
        return payload

    def resume(self, config: TrainConfig, console: Console) -> Pending | None:
        """Put back the run's last checkpoint (completed by ``recover``), refused unless it was trained
        with this ``config`` but for the keys a resume may change; returns it if a kill cut its
        evaluation short (it is evaluated first)."""
        checkpoints = config.run_dir / "checkpoints"
        existing = update_checkpoints(checkpoints)
        if not existing:
            raise CheckpointError(
                f"--resume: no checkpoint in {checkpoints} (the run never reached one): "
                "start it without --resume"
            )
        last = existing[-1]
        payload = recover(last, checkpoints / "best.pt")
        _check_resumable(payload["config"], config, last)
        try:
            self.model.load_state_dict(payload["model"])
            self.optimizer.load_state_dict(payload["optimizer"])
        except (RuntimeError, ValueError) as error:
            raise CheckpointError(f"checkpoint {last}: does not fit this config: {error}") from None
        restore_rng(payload["rng"], self.rng)
        self.update, self.global_step = payload["update"], payload["global_step"]
        self.best_score, self.snapshots = payload["best_score"], payload["snapshots"]
        console.print(f"resumed from {last} (update {self.update})")
        return (last, payload) if payload.get("eval_due") and payload.get("eval_score") is None else None


def weights(model: ActorCritic) -> Weights:
    """A detached CPU copy of the weights (checkpoints and snapshots must not follow later updates)."""
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}


def record_score(path: Path, payload: dict[str, Any], score: float) -> float:
    """Steps 3 and 4 of the write order (module docstring): ``score`` is checkpoint ``path``'s evaluation
    (``payload``, saved there in step 1); returns the best score so far."""
    payload["eval_score"] = score
    if score > payload["best_score"]:
        payload["best_score"] = score
        save_checkpoint(path.parent / "best.pt", payload)
    save_checkpoint(path, payload)
    return payload["best_score"]


def recover(last: Path, best: Path) -> dict[str, Any]:
    """The payload of checkpoint ``last``, its ``best_score`` taken from ``best`` (the write order).

    If ``best`` is the very same update with its evaluation recorded (a kill came between writing it and
    recording the score in ``last``), that record is completed from it.
    """
    payload = load_checkpoint(last)
    if not best.exists():
        payload["best_score"] = float("-inf")
        return payload
    kept = load_checkpoint(best)
    if kept["update"] == payload["update"] and payload.get("eval_score") is None:
        save_checkpoint(last, kept)
        return kept
    payload["best_score"] = kept["best_score"]
    return payload


def _check_resumable(saved: dict[str, Any], config: TrainConfig, path: Path) -> None:
    """Resuming with other rules, net or PPO settings would silently train something else: refuse it."""
    current = config.to_dict()
    saved = parse_train_config(saved).to_dict()  # keys added since the checkpoint take their defaults
    changed = sorted(k for k in current if k not in RESUMABLE_CHANGES and saved.get(k) != current[k])
    if changed:
        detail = "; ".join(f"{k}: {saved.get(k)!r} -> {current[k]!r}" for k in changed)
        raise CheckpointError(f"checkpoint {path}: was trained with a different config ({detail})")


def load_init_weights(model: ActorCritic, path: str, rules: Rules) -> None:
    """Copy the weights of the checkpoint or policy file at ``path``, or of the shipped agent so named
    (checked to fit), into ``model`` (``model.init``)."""
    try:
        source = checkpoint_path(path)
    except ValueError as error:
        raise CheckpointError(f"model.init: {error}") from None
    payload = load_checkpoint(source, POLICY_KEYS)
    if payload.get(MEMBERS):
        raise CheckpointError(
            f"model.init {path}: the average of {len(payload[MEMBERS]) + 1} networks; a run starts from "
            "one network (one of the runs it was exported from)"
        )
    trained = build_model(payload, path, rules)
    try:
        missing, unexpected = model.load_state_dict(trained.state_dict(), strict=False)
        # A privileged critic may start fresh on a network trained without one; nothing else may.
        if unexpected or any(not key.startswith("critic.") for key in missing):
            raise RuntimeError(f"missing {missing}, unexpected {unexpected}")
    except RuntimeError:
        raise CheckpointError(
            f"model.init {path}: its network {payload['config']['model']} is not this config's model"
        ) from None
