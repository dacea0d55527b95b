"""Training configuration: pydantic models on ``agents.configuration.ConfigModel``, like every command's.

YAML file plus ``key.sub=value`` overrides, exactly like ``scripts/evaluate.py``:
an unknown key is an error naming it and the closest valid key, a value of the
wrong type names the key and the type it needs, every number must be finite and
within its field's range (given in the message), and the preset, bot names and
run name are checked before any training starts.

Upper bounds are generous but finite, so that an absurd value is a ConfigError
and not a MemoryError or a crash: ``threads`` <= 256, ``num_games`` <= 65,536,
``rollout_steps`` <= 4,096 and their product (decisions stored per update) <=
``ROLLOUT_MAX`` (2**21, 128x the shipped configs); ``model.hidden`` at most 16
layers of at most 8,192 units and ``TRUNK_WEIGHTS_MAX`` weights; ``eval.deals``
<= 1,000,000. ``seed`` < 2**32, so that the distillation's round seeds (``seed *
1_000_003 + round``) fit a torch generator; ``eval.seed`` < 2**63.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, model_validator

from agents.bots.registry import BOT_NAMES, checkpoint_path, load_policy
from agents.bots.trained import SHIPPED_AGENTS
from agents.configuration import (
    DEALS_MAX,
    SEED_MAX,
    WORKERS_MAX,
    ConfigError,
    ConfigModel,
    Number,
    RayConfig,
    TopLevelConfig,
    build_rules,
    check_bot_options,
    check_plain_name,
    parse_file,
    unknown_name,
)
from domino_env.engine.rules import Rules

SELF = "self"
"""Opponent name for games where the learner plays every seat."""
PAST = "past"
"""Opponent name for a frozen snapshot of the learner from an earlier update (``snapshots``)."""

UPDATES_MAX = 10_000_000
"""Most updates (``total_updates``, and the ``every`` settings)."""
THREADS_MAX = 256
"""Most torch CPU threads (far more than useful; 100,000 crashed torch with signal 11)."""
ROLLOUT_MAX = 1 << 21
"""Most decisions stored per update (``num_games * rollout_steps``)."""
WIDTH_MAX = 8192
"""Widest layer of ``model.hidden``."""
TRUNK_WEIGHTS_MAX = 1 << 26
"""Most weights between the trunk's layers (the sum of ``hidden[i] * hidden[i + 1]``: one 8192x8192)."""
TRAIN_SEED_MAX = 2**32 - 1
"""Largest training ``seed``: ``seed * 1_000_003 + round`` seeds torch generators (64 bits)."""
WEIGHT_MAX = 1e6
"""Largest share of the games per opponent (``opponents``); shares are normalised."""

Width = Annotated[int, Field(ge=1, le=WIDTH_MAX)]
Share = Annotated[Number, Field(ge=0, le=WEIGHT_MAX)]


class ModelConfig(ConfigModel):
    """The network (``model``)."""

    hidden: list[Width] = Field(default_factory=lambda: [128, 128], min_length=1, max_length=16)
    """Widths of the shared MLP trunk (``agents.training.network.ActorCritic``)."""
    move_features: bool = True
    """Score moves by their features as well (``agents.training.move_features``): learns far faster."""
    after_state: bool = False
    """The move features also carry the position each move leads to, as bits (own hand, tile,
    numbers at the ends, the next seat's fitting tiles): needs ``move_features``."""
    move_hidden: Width = 64
    """Width of the per-move scorer's hidden layer."""
    privileged_critic: bool = False
    """Give PPO a critic of its own that also sees the other seats' hands (training only: the
    policy plays from its observation alone), for less noisy advantages (``agents.training.network``)."""
    init: str = ""
    """Start from this trained network (a checkpoint or policy file, or a shipped agent's name such as
    ``block-2p-ppo``, of the same rules and widths) instead of random weights: fine-tuning, e.g. a round
    player into a match player."""


class PPOConfig(ConfigModel):
    """PPO hyperparameters (``ppo``)."""

    lr: Number = Field(2.5e-4, gt=0, le=1)
    """Adam learning rate."""
    gamma: Number = Field(1.0, ge=0, le=1)
    """Discount per decision of the seat (round episodes are short; use < 1 for match episodes)."""
    gae_lambda: Number = Field(0.95, ge=0, le=1)
    """GAE lambda: 0 bootstraps from the next value, 1 uses the whole return."""
    epochs: int = Field(4, ge=1, le=1000)
    """Passes over each rollout."""
    minibatches: int = Field(4, ge=1, le=65536)
    """Minibatches per epoch."""
    clip_coef: Number = Field(0.2, gt=0, le=10)
    """PPO clipping of the probability ratio (and of the value change)."""
    ent_coef: Number = Field(0.01, ge=0, le=100)
    """Weight of the entropy bonus."""
    vf_coef: Number = Field(0.5, ge=0, le=100)
    """Weight of the value loss."""
    max_grad_norm: Number = Field(0.5, gt=0, le=1e6)
    """Gradients are clipped to this global norm."""
    critic_warmup: int = Field(0, ge=0, le=1_000_000)
    """First updates that train on the value loss alone: a new privileged critic learns its values
    before its advantages move a trained policy (``model.init``), which stays exactly as it was
    meanwhile (without a privileged critic the value head shares the trunk, which still moves)."""
    norm_adv: bool = True
    """Normalise the advantages per minibatch."""
    reward_scale: Number = Field(0.05, gt=0, le=1e6)
    """Rewards (points minus the mean over sides) are multiplied by this before GAE: keeps values near 1."""


def _check_policy(key: str, name: str, also: tuple[str, ...] = ()) -> None:
    """``name`` must be a bot, a shipped agent or a checkpoint file (or one of ``also``)."""
    if name in BOT_NAMES:
        return
    try:
        checkpoint_path(name)
    except ValueError:
        valid = (*also, *BOT_NAMES, *SHIPPED_AGENTS)
        raise ConfigError(
            unknown_name(key, name, valid, "bot or agent") + "; or the path of a checkpoint file"
        ) from None


class EvalConfig(ConfigModel):
    """Arena evaluations during training (``eval``)."""

    every: int = Field(10, ge=0, le=UPDATES_MAX)
    """Updates between arena evaluations (0: never); the last update is always evaluated."""
    deals: int = Field(200, ge=1, le=DEALS_MAX)
    """Duplicate deals per opponent (each played once per seat rotation)."""
    opponents: list[str] = Field(default_factory=lambda: ["random", "strong"])
    """Bots or trained agents (a shipped agent's name or a checkpoint path) the greedy policy meets (at
    least one when ``every`` > 0, no repeats). The best checkpoint is the one whose worst result
    against them is highest: the strongest opponent decides, not whichever is listed first."""
    seed: int = Field(12345, ge=0, le=SEED_MAX)
    """Fixed deals, so evaluations of different updates are comparable."""


class CheckpointConfig(ConfigModel):
    """Checkpoint writing and pruning (``checkpoint``)."""

    every: int = Field(10, ge=1, le=UPDATES_MAX)
    """Updates between checkpoints; the last update and every evaluation also write one."""
    keep: int = Field(3, ge=1, le=10_000)
    """Most recent checkpoints kept (``best.pt`` is kept besides)."""


class SnapshotConfig(ConfigModel):
    """The pool of past learners, the ``past`` opponent (``snapshots``)."""

    every: int = Field(20, ge=1, le=UPDATES_MAX)
    """Updates between snapshots of the learner for the ``past`` opponent (the initial net is the first)."""
    keep: int = Field(5, ge=1, le=1000)
    """Most recent snapshots in the pool; each update's ``past`` games face one drawn uniformly from it."""


class DistillConfig(ConfigModel):
    """Distillation from the search teacher before PPO (``distill``; ``agents.training.distill``)."""

    rounds: int = Field(0, ge=0, le=100)
    """Expert-iteration rounds before the first PPO update (0: none). Round 0 labels positions
    from ``strong``'s play, later rounds from the network's own (sampled) play."""
    positions: int = Field(50_000, ge=1, le=2_000_000)
    """Positions (decisions with a choice) the teacher labels per round."""
    epochs: int = Field(8, ge=1, le=1000)
    """Passes over all the positions labelled so far, after each round."""
    batch: int = Field(1024, ge=1, le=65536)
    """Positions per minibatch."""
    lr: Number = Field(1e-3, gt=0, le=1)
    """Adam learning rate of the distillation (PPO then starts its own optimizer at ``ppo.lr``)."""
    temperature: Number = Field(0.5, gt=0, le=1000)
    """In points: the target is softmax(teacher's move values / temperature) over the legal moves."""
    target: Literal["soft", "values"] = "soft"
    """"soft": cross-entropy to that softmax. "values": the logits x ``temperature`` regress the
    teacher's move values up to a constant per position (squared error centred over the legal
    moves), which suits noisy one-search labels (``privileged``)."""
    aggregate: Literal["every_round", "last_round"] = "every_round"
    """Which labels a round fits. "every_round": every position labelled so far, after each round
    (DAgger's aggregate: R rounds fit R(R+1)/2 rounds' worth of positions). "last_round": a round
    before the last fits its own new positions, from where the previous round left the weights,
    and only the last round fits every round's: 2R-1 rounds' worth, for recipes where the fit,
    not the search, is what takes the time."""
    anneal: bool = False
    """The last round's learning rate falls linearly to 0 over its epochs: the weights settle on
    the mean of noisy labels (``target: values``) instead of following the last minibatches."""
    refine: int = Field(0, ge=0, le=100)
    """The last ``refine`` of the ``rounds`` label every move with a playout of the network itself
    (its weights when the round starts, greedy at every seat) instead of ``teacher.rollout_bot``
    (or ``teacher.exact``'s solve, which then labels the earlier rounds only): a
    step of policy improvement per round, the labels valuing each move under the network's play
    instead of ``strong``'s. These rounds fit their own labels only (the earlier rounds' valued
    another policy's play), with a fresh optimizer at ``refine_lr``; with ``aggregate: last_round``
    the round before them fits every earlier round's labels, and with ``anneal`` both phases' last
    rounds anneal. About 6 times the search of ``strong``'s playouts (docs/agents.md)."""
    refine_lr: Number = Field(5e-4, gt=0, le=1)
    """Adam learning rate of the ``refine`` rounds (they start from a fitted network)."""
    games: int = Field(1024, ge=1, le=65536)
    """Games played side by side to collect positions."""
    teacher: dict[str, Any] = Field(default_factory=dict)
    """Options of the ``pimc`` teacher (``samples``, ``rollout_bot``: a bot name or a checkpoint...)."""
    privileged: bool = False
    """The teacher searches the true deal of each position instead of sampled ones (hidden hands
    in the training targets only; the network still plays from its observation). One search
    per position instead of ``samples``, and the targets average over the real hidden hands."""
    pile_samples: int = Field(1, ge=1, le=64)
    """With ``privileged``, on a drawing preset: a move's label is the mean of this many searches of
    the true hands, each with the draw pile shuffled anew. No seat knows the pile's order, so a
    shuffle is an exact sample of it: the labels keep the real hands and shed the noise of one draw
    order, for this many times the search."""
    evaluate: bool = False
    """Evaluate the network after every round against ``eval.opponents`` (``eval.deals`` deals from
    ``eval.seed``): the learning curve in labelled positions (TensorBoard ``distill_eval/*``); the
    last round's network is update 0, evaluated as such."""


class TrainRayConfig(RayConfig):
    """Rollouts on Ray actors (``ray``; ``agents.training.distributed``, docs/scaling.md)."""

    workers: int = Field(0, ge=0, le=WORKERS_MAX)
    """Rollout actors, one CPU each with a copy of the policy, sharing out each update's shards
    (``shard_games``: as many actors as shards are busy, the others wait; all of them search in a
    distillation); 0: rollouts in this process, without Ray. The results are the same for any
    worker count."""
    max_restarts: int = Field(3, ge=0, le=1000)
    """How often Ray restarts a rollout actor that died (killed, its node lost); its rollout is redone."""


class TrainConfig(TopLevelConfig):
    """A training run (``scripts/train.py``)."""

    config_name: ClassVar[str] = "the training config"

    name: str = "quickstart"
    """Run folder: ``<output_dir>/<name>/`` (TensorBoard events, ``checkpoints/``); a plain folder name."""
    output_dir: str = "runs"
    """Folder of the run folders; may change between a run and its ``--resume``."""
    preset: str = "block"
    """Rule preset (``domino_env.engine.rules.PRESETS``)."""
    players: int | None = Field(None, ge=2, le=4)
    """Default: the preset's smallest player count."""
    rules: dict[str, Any] = Field(default_factory=dict)
    """``Rules`` field overrides (``target: 50``)."""
    episode: Literal["round", "match"] = "round"
    """What one episode is: a round, or a match (games to the target)."""
    reward: Literal["points", "win"] = "points"
    """``points``: the side's points minus the mean over sides, as they are scored (times
    ``ppo.reward_scale``); ``win``: +1 / -1 / 0 to every seat when its episode is won / lost / tied."""
    seed: int = Field(0, ge=0, le=TRAIN_SEED_MAX)
    """Seeds the network, the minibatches and (with the update number) every update's deals."""
    device: str = "auto"
    """auto (CUDA when available), cpu, cuda or cuda:N; CUDA falls back to CPU when absent."""
    threads: int = Field(1, ge=1, le=THREADS_MAX)
    """torch CPU threads. 1 by default, everywhere: the batches are small and interleaved with NumPy
    env steps, so a second thread gains a quarter on a quiet 2-core machine and loses half or more
    on a busy one (spinning thread pools: up to 18x slower beside heavy work). A distillation's
    fit alone on a machine gains half with a second thread (large batches, the Ray actors idle).
    docs/training/index.md#speed has the figures."""
    total_updates: int = Field(100, ge=0, le=UPDATES_MAX)
    """Updates to train for (a resumed run continues up to it); 0 with ``distill``: distillation alone."""
    num_games: int = Field(256, ge=1, le=65536)
    """Games played side by side in each rollout."""
    rollout_steps: int = Field(32, ge=1, le=4096)
    """Table steps per update; each update plays them from fresh deals (see scripts/train.py)."""
    shard_games: int | None = Field(None, ge=1, le=65536)
    """Games per shard of an update's rollout (the last shard may hold fewer); default ``num_games``,
    one shard. Each shard is played on its own, its deals, the learner's sampled moves and its
    opponents seeded by (``seed``, update, shard), so a run's results do not depend on
    ``ray.workers``, which shares the shards out (set ``num_games / workers`` or less to keep every
    actor busy). More shards cost a local run speed: the network is called per shard and step."""
    opponents: dict[str, Share] = Field(default_factory=lambda: {SELF: 1.0})
    """Share of the games per opponent: ``self`` (the learner at every seat), ``past``, a bot name, or a
    fixed trained agent (a shipped agent's name such as ``block-2p``, or a checkpoint path)."""
    bots: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Constructor options per bot name, for the opponents and eval opponents (``pimc: {samples: 12}``)."""
    model: ModelConfig = Field(default_factory=ModelConfig)
    """The network."""
    ppo: PPOConfig = Field(default_factory=PPOConfig)
    """PPO hyperparameters."""
    eval: EvalConfig = Field(default_factory=EvalConfig)
    """Arena evaluations during training."""
    checkpoint: CheckpointConfig = Field(default_factory=CheckpointConfig)
    """Checkpoint writing and pruning."""
    snapshots: SnapshotConfig = Field(default_factory=SnapshotConfig)
    """The pool of past learners (the ``past`` opponent)."""
    distill: DistillConfig = Field(default_factory=DistillConfig)
    """Distillation from the ``pimc`` search before PPO (off unless ``distill.rounds`` > 0)."""
    progress: bool = True
    """Show a progress bar."""
    ray: TrainRayConfig = Field(default_factory=TrainRayConfig)
    """Scale-out on Ray: rollout actors feeding this process's learner."""

    @model_validator(mode="after")
    def _check_together(self) -> TrainConfig:
        check_plain_name("name", self.name)
        if not (self.device in ("auto", "cpu", "cuda") or _cuda_index(self.device)):
            raise ConfigError(f"device must be auto, cpu, cuda or cuda:N, got {self.device!r}")
        if self.model.after_state and not self.model.move_features:
            raise ConfigError("model.after_state adds to the move features: set model.move_features: true")
        if self.total_updates == 0 and not self.distill.rounds:
            raise ConfigError("total_updates must be >= 1 (0 only with distill.rounds: distillation alone)")
        steps = self.num_games * self.rollout_steps
        if steps > ROLLOUT_MAX:
            raise ConfigError(
                f"num_games * rollout_steps (decisions stored per update) must be at most {ROLLOUT_MAX:_}, "
                f"got {self.num_games} * {self.rollout_steps} = {steps:_}"
            )
        hidden = self.model.hidden
        weights = sum(a * b for a, b in pairwise(hidden))
        if weights > TRUNK_WEIGHTS_MAX:
            raise ConfigError(
                f"model.hidden {hidden} has {weights:_} weights between its layers; "
                f"at most {TRUNK_WEIGHTS_MAX:_} are allowed"
            )
        if not self.opponents or sum(self.opponents.values()) <= 0:
            raise ConfigError(
                f"opponents needs non-negative weights with a positive sum, got {self.opponents}"
            )
        for name in self.opponents:
            if name not in (SELF, PAST):
                _check_policy(f"opponents.{name}", name, (SELF, PAST))
        for index, name in enumerate(self.eval.opponents):
            _check_policy(f"eval.opponents[{index}]", name)
        if len(set(self.eval.opponents)) != len(self.eval.opponents):
            raise ConfigError(f"eval.opponents lists a bot twice: {self.eval.opponents}")
        for name, options in self.bots.items():
            if name not in BOT_NAMES:
                raise ConfigError(unknown_name(f"bots.{name}", name, BOT_NAMES))
            check_bot_options(f"bots.{name}", name, options)
        check_bot_options("distill.teacher", "pimc", self.distill.teacher)
        if self.distill.pile_samples > 1 and not self.distill.privileged:
            raise ConfigError(
                "distill.pile_samples shuffles the true deal's draw pile: it needs distill.privileged: true"
            )
        if self.distill.refine > self.distill.rounds:
            raise ConfigError(
                f"distill.refine ({self.distill.refine}) counts the last of the distill.rounds "
                f"({self.distill.rounds}): it must be at most that"
            )
        if self.distill.evaluate and not self.eval.opponents:
            raise ConfigError("distill.evaluate needs at least one bot in eval.opponents")
        if self.eval.every > 0 and not self.eval.opponents:
            raise ConfigError(
                f"eval.opponents needs at least one bot when eval.every > 0 (or set eval.every=0), "
                f"got {self.eval.opponents}"
            )
        return self

    def build_rules(self) -> Rules:
        return build_rules(self.preset, self.players, self.rules)

    @property
    def bot_opponents(self) -> list[str]:
        """The opponents that are bots or trained agents (neither ``self`` nor ``past``)."""
        return [name for name in self.opponents if name not in (SELF, PAST)]

    def check_against(self, rules: Rules) -> None:
        """Build every bot and load every trained agent the run will use, once, so that a bad option (an
        unknown keyword, a rollout_bot that is no bot nor checkpoint) or an agent of another game stops
        it before it starts, naming its key; and refuse ``distill.pile_samples`` without a pile."""
        names = {name for name in (*self.opponents, *self.eval.opponents) if name not in (SELF, PAST)}
        checks = [
            (f"bots.{name}" if name in BOT_NAMES else "opponents", name, self.bots.get(name, {}))
            for name in sorted(names)
        ]
        if self.distill.rounds:
            checks.append(("distill.teacher", "pimc", self.distill.teacher))
        for key, name, options in checks:
            try:
                load_policy(name, rules, 0, **options)
            except (TypeError, ValueError) as error:
                raise ConfigError(f"{key}: {error}") from None
        if self.distill.pile_samples > 1 and not rules.drawing:
            raise ConfigError(
                f"distill.pile_samples: {self.preset} has no draw pile to shuffle (set it to 1)"
            )

    @property
    def run_dir(self) -> Path:
        return Path(self.output_dir) / self.name


RESUMABLE_CHANGES = (
    "total_updates", "progress", "eval", "checkpoint", "device", "threads", "output_dir", "ray",
)  # fmt: skip
"""Top-level keys that may differ between a checkpoint's config and the one resuming it (a run
folder can be moved to another ``output_dir``)."""


def load_train_config(path: str | Path | None, overrides: list[str] = ()) -> TrainConfig:
    """The config in ``path`` (a YAML file or a shipped training config's name, ``"quickstart"``; None:
    defaults) with ``key.sub=value`` overrides, fully checked."""
    return parse_file(path, overrides, "train", parse_train_config)


def parse_train_config(raw: dict[str, Any]) -> TrainConfig:
    """A checked ``TrainConfig`` from a nested dict (the YAML's, or a checkpoint's stored config)."""
    config = TrainConfig.parse(raw)
    config.build_rules()
    return config


def _cuda_index(device: str) -> bool:
    prefix, _, index = device.partition(":")
    return prefix == "cuda" and index.isascii() and index.isdigit() and len(index) <= 4
