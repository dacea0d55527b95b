"""Training configuration: typed dataclasses checked by the arena config's machinery (``agents.config``).

YAML file plus ``key.sub=value`` overrides, exactly like ``scripts/evaluate.py``:
an unknown key is an error naming it and the closest valid key, a value of the
wrong type names the key and the type it needs, and the preset, bot names and
ranges are checked by building them before any training starts.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from domino_env.rules import Rules

from .config import ConfigError, _build, _unknown, read_raw
from .policy import BOT_NAMES

SELF = "self"
"""Opponent name for games where the learner plays every seat."""
PAST = "past"
"""Opponent name for a frozen snapshot of the learner from an earlier update (``snapshots``)."""


@dataclass
class ModelConfig:
    hidden: list[int] = field(default_factory=lambda: [128, 128])
    """Widths of the shared MLP trunk (``agents.network.ActorCritic``)."""
    move_features: bool = True
    """Score moves by their features as well (``agents.move_features``): learns far faster."""


@dataclass
class PPOConfig:
    lr: float = 2.5e-4
    gamma: float = 1.0
    """Discount per decision of the seat (round episodes are short; use < 1 for match episodes)."""
    gae_lambda: float = 0.95
    epochs: int = 4
    minibatches: int = 4
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    norm_adv: bool = True
    reward_scale: float = 0.05
    """Rewards (points minus the mean over sides) are multiplied by this before GAE: keeps values near 1."""


@dataclass
class EvalConfig:
    every: int = 10
    """Updates between arena evaluations (0: never); the last update is always evaluated."""
    deals: int = 200
    """Duplicate deals per opponent (each played once per seat rotation)."""
    opponents: list[str] = field(default_factory=lambda: ["random", "strong"])
    """Bots the greedy policy meets; the first one's points difference picks the best checkpoint."""
    seed: int = 12345
    """Fixed deals, so evaluations of different updates are comparable."""


@dataclass
class CheckpointConfig:
    every: int = 10
    """Updates between checkpoints; the last update and every evaluation also write one."""
    keep: int = 3
    """Most recent checkpoints kept (``best.pt`` is kept besides)."""


@dataclass
class SnapshotConfig:
    every: int = 20
    """Updates between snapshots of the learner for the ``past`` opponent (the initial net is the first)."""
    keep: int = 5
    """Most recent snapshots in the pool; each update's ``past`` games face one drawn uniformly from it."""


@dataclass
class TrainConfig:
    name: str = "quickstart"
    """Run folder: ``<output_dir>/<name>/`` (TensorBoard events, ``checkpoints/``)."""
    output_dir: str = "runs"
    preset: str = "block"
    players: int | None = None
    """Default: the preset's smallest player count."""
    rules: dict[str, Any] = field(default_factory=dict)
    episode: Literal["round", "match"] = "round"
    reward: Literal["points", "win"] = "points"
    """``points``: the side's points minus the mean over sides, as they are scored (times
    ``ppo.reward_scale``); ``win``: +1 / -1 / 0 to every seat when its episode is won / lost / tied."""
    seed: int = 0
    device: str = "auto"
    """auto (CUDA when available), cpu, cuda or cuda:N; CUDA falls back to CPU when absent."""
    threads: int = 1
    """torch CPU threads. 1 by default: the batches are small and interleaved with numpy env steps,
    and on 2 cores 2 threads ran the whole loop over 10x slower (spinning thread pools)."""
    total_updates: int = 100
    num_games: int = 256
    rollout_steps: int = 32
    """Table steps per update; each update plays them from fresh deals (see scripts/train.py)."""
    opponents: dict[str, float] = field(default_factory=lambda: {SELF: 1.0})
    """Share of the games per opponent: ``self`` (the learner at every seat), ``past`` or a bot name."""
    model: ModelConfig = field(default_factory=ModelConfig)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    checkpoint: CheckpointConfig = field(default_factory=CheckpointConfig)
    snapshots: SnapshotConfig = field(default_factory=SnapshotConfig)
    progress: bool = True

    def build_rules(self) -> Rules:
        try:
            return Rules.preset(self.preset, self.players, **self.rules)
        except ValueError as error:
            raise ConfigError(str(error)) from None

    @property
    def run_dir(self) -> Path:
        return Path(self.output_dir) / self.name

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of primitives (YAML-able, and loadable by ``torch.load(weights_only=True)``)."""
        return dataclasses.asdict(self)


RESUMABLE_CHANGES = ("total_updates", "progress", "eval", "checkpoint", "device", "threads")
"""Top-level keys that may differ between a checkpoint's config and the one resuming it."""


def load_train_config(path: str | Path | None, overrides: list[str] = ()) -> TrainConfig:
    """The config in ``path`` (YAML; None: defaults) with ``key.sub=value`` overrides, fully checked."""
    return parse_train_config(read_raw(path, overrides))


def parse_train_config(raw: dict[str, Any]) -> TrainConfig:
    """A checked ``TrainConfig`` from a nested dict (the YAML's, or a checkpoint's stored config)."""
    names = [f.name for f in dataclasses.fields(TrainConfig)]
    for key in raw:
        if key not in names:  # named here: agents.config would call the top level "the arena config"
            raise ConfigError(_unknown(str(key), str(key), names, "the training config"))
    config: TrainConfig = _build(TrainConfig, raw, "")
    config.build_rules()
    for key in ("total_updates", "num_games", "rollout_steps", "threads"):
        _at_least(key, getattr(config, key), 1)
    for key in ("epochs", "minibatches"):
        _at_least(f"ppo.{key}", getattr(config.ppo, key), 1)
    _at_least("eval.every", config.eval.every, 0)
    _at_least("eval.deals", config.eval.deals, 1)
    _at_least("checkpoint.every", config.checkpoint.every, 1)
    _at_least("checkpoint.keep", config.checkpoint.keep, 1)
    _at_least("snapshots.every", config.snapshots.every, 1)
    _at_least("snapshots.keep", config.snapshots.keep, 1)
    if not config.model.hidden or min(config.model.hidden) < 1:
        raise ConfigError(f"model.hidden needs positive layer widths, got {config.model.hidden}")
    if not config.opponents or min(config.opponents.values()) < 0 or sum(config.opponents.values()) <= 0:
        raise ConfigError(f"opponents needs non-negative weights with a positive sum, got {config.opponents}")
    for name in config.opponents:
        _bot_name(f"opponents.{name}", name, (SELF, PAST, *BOT_NAMES))
    for index, name in enumerate(config.eval.opponents):
        _bot_name(f"eval.opponents[{index}]", name, BOT_NAMES)
    if not (config.device in ("auto", "cpu", "cuda") or config.device.startswith("cuda:")):
        raise ConfigError(f"device must be auto, cpu, cuda or cuda:N, got {config.device!r}")
    if not config.name or "/" in config.name:
        raise ConfigError(f"name must be a non-empty folder name, got {config.name!r}")
    return config


def _at_least(key: str, value: int, low: int) -> None:
    if value < low:
        raise ConfigError(f"{key} must be at least {low}, got {value}")


def _bot_name(key: str, name: str, valid: tuple[str, ...]) -> None:
    if name not in valid:
        close = difflib.get_close_matches(name, valid, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"{key}: unknown bot {name!r}{hint} (valid: {', '.join(valid)})")
