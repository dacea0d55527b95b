"""Where each update's rollout is played: in this process (``LocalRollouts``, ``ray.workers=0``) or
on Ray actors (``Fleet``, ``ray.workers=N``), for the learner in ``train.py``; and the distillation
teacher's search on the same actors.

The update's ``num_games`` games are cut into shards of ``shard_games`` (``shards``), whatever the
worker count, and every shard is played by ``ShardPlayer.play``, the one set-up of a local run and
of every actor: its own ``SelfPlay`` batch, its seats those of the whole split
(``Opponents.assign``), and everything random in it seeded by (``seed``, update, shard) alone
(``shard_seeds``): its deals, the learner's sampled moves (a torch generator of its own), its bots
and its ``past`` opponent. The network is called on a shard's games alone, since a batch's float
sums depend on the rows beside them. The ``past`` snapshot is drawn on the driver with the learner's
rng, and the shards' rollouts are joined in shard order (``join_rollouts``). So an update's rollout,
and a run's weights, are the same for any ``ray.workers`` (on machines of one kind: another CPU may
sum in another order), as the arena's results are (``agents/arena/distributed.py``). By default the
rollout is one shard, the fastest local run (the network's per-call cost, paid per shard and step,
is most of a rollout's); ``ray.workers=N`` keeps N actors busy with ``shard_games`` at most
``num_games / N``, in a local run as well as on Ray.

The actor-learner split of IMPALA, DouZero and RLlib, with Ray doing the placement, transport and
restarts:

* ``Worker`` (one Ray actor per worker, one CPU each) holds a CPU copy of the network and plays the
  shards it is handed, a few queued per actor, the next one to whichever actor is done first.
* The learner (``train.py``, on ``device``) puts the weights in Ray's object store once per update,
  the actors read them from there, and the shards' rollouts come back to be joined into one
  ``Rollout`` for the PPO update.
* Distillation (``distill.rounds``): the teacher's search, most of a round's time, is shared out to
  the same actors a batch of positions per call (``Fleet.label``); the positions are gathered and
  the network trained in this process.

Every call carries everything it depends on (weights, snapshot, update and shard), so an actor that
dies (killed, its node lost) is restarted by Ray (``ray.max_restarts``) and its call run again with
the same result. Checkpoints, ``--resume`` and TensorBoard are the local run's; ``ray.workers`` may
change on ``--resume``. A label batch's teacher is seeded by (round seed, batch), whichever actor
searches it: labels are the same for any worker count from 1 on. A local run seeds one teacher for
the whole round, so only labels that need no randomness, privileged labels from the default teacher
(playouts of ``strong`` or exact play, no ``epsilon``), are those of a local run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from types import TracebackType
from typing import Any, NamedTuple, TypeVar

import numpy as np
import torch

from agents.arena.distributed import connect, require_ray
from agents.training.checkpoint import NetworkPolicy
from agents.training.config import PAST, TrainConfig, parse_train_config
from agents.training.distill import Labelled, Positions, make_teacher, search_batches
from agents.training.move_features import MoveInputs
from agents.training.network import ActorCritic, build_network
from agents.training.ppo import Opponents, Rollout, collect_rollout, load_fixed, opponent_policies
from domino_env.engine.rules import Rules
from domino_env.envs.selfplay import SelfPlay

Weights = dict[str, torch.Tensor]
Key = TypeVar("Key")
IN_FLIGHT = 2
"""Calls queued per actor (rollout shards, label batches): the next one is there when one ends."""


def stream_seed(*entropy: int) -> int:
    """A 64-bit seed of its own for each tuple of ``entropy``: streams that never overlap."""
    return int(np.random.SeedSequence(list(entropy)).generate_state(1, np.uint64)[0] >> np.uint64(1))


class ShardSeeds(NamedTuple):
    """The seeds of one rollout shard's streams."""

    deals: int
    moves: int
    """The learner's sampled moves."""
    bots: int
    past: int
    """The ``past`` opponent's sampled moves."""


def shard_seeds(seed: int, update: int, shard: int) -> ShardSeeds:
    """The seeds of shard ``shard`` of ``update``'s rollout in the run of ``seed``: what it plays
    depends on them alone, whoever plays it."""
    return ShardSeeds(
        *(stream_seed(seed, update, shard, stream) for stream in range(len(ShardSeeds._fields)))
    )


def shards(config: TrainConfig) -> list[range]:
    """The games of each shard of a rollout: blocks of ``shard_games``, the last one what is left."""
    size, games = config.shard_games or config.num_games, config.num_games
    return [range(lo, min(lo + size, games)) for lo in range(0, games, size)]


def draw_past(config: TrainConfig, snapshots: list[Weights], rng: np.random.Generator) -> Weights | None:
    """The update's ``past`` opponent, drawn from the pool with the learner's ``rng`` on the driver
    (whoever plays the shards); None when the run has no such opponent."""
    return snapshots[rng.integers(len(snapshots))] if PAST in config.opponents else None


class ShardPlayer:
    """Plays rollout shards (``play``): a local run's and every Ray actor's, so they play alike."""

    def __init__(self, config: TrainConfig, rules: Rules, device: torch.device) -> None:
        self.config, self.rules, self.device = config, rules, device
        self.shards = shards(config)
        self.fixed = load_fixed(config.bot_opponents, rules)  # trained agents: loaded once, frozen
        self.past: ActorCritic | None = None  # the ``past`` opponent's network, its weights loaded per update
        if PAST in config.opponents:
            self.past = build_network(rules, config.model.model_dump()).to(device)

    def play(self, model: ActorCritic, update: int, shard: int, past: Weights | None) -> Rollout:
        """Shard ``shard`` of ``update``'s rollout, the learner's moves sampled from ``model`` (``past``:
        the ``past`` opponent's weights)."""
        config, rules = self.config, self.rules
        seeds, games = shard_seeds(config.seed, update, shard), self.shards[shard]
        play = SelfPlay(rules, len(games), config.episode, seed=np.random.default_rng(seeds.deals))
        policies = opponent_policies(config.bot_opponents, rules, seeds.bots, config.bots, self.fixed)
        if self.past is not None and past is not None:
            self.past.load_state_dict(past)
            policies[PAST] = NetworkPolicy(
                PAST, self.past, greedy=False, generator=self._generator(seeds.past)
            )
        opponents = Opponents.assign(config.num_games, rules, config.opponents, policies, games)
        return collect_rollout(
            model, play, config.rollout_steps, opponents, self.device, config.ppo.reward_scale, config.reward,
            self._generator(seeds.moves),
        )  # fmt: skip

    def _generator(self, seed: int) -> torch.Generator:
        return torch.Generator(device=self.device).manual_seed(seed)


class LocalRollouts:
    """Each update's rollout played in this process, shard after shard (``ray.workers=0``)."""

    def __init__(self, config: TrainConfig, rules: Rules, device: torch.device) -> None:
        self.player = ShardPlayer(config, rules, device)

    def collect(
        self, model: ActorCritic, update: int, snapshots: list[Weights], rng: np.random.Generator
    ) -> Rollout:
        """The update's rollout of all ``num_games`` games, its shards joined in order."""
        past = draw_past(self.player.config, snapshots, rng)
        parts = [self.player.play(model, update, shard, past) for shard in range(len(self.player.shards))]
        return join_rollouts(parts)


class Worker:
    """Rollout shards played on CPU, and the teacher's search of label batches (the body of a Ray actor)."""

    def __init__(self, config: dict[str, Any]) -> None:
        torch.set_num_threads(1)  # one CPU per actor
        self.config: TrainConfig = parse_train_config(config)
        self.rules = self.config.build_rules()
        self.model = build_network(self.rules, self.config.model.model_dump())
        self.player: ShardPlayer | None = None  # set up at the first rollout (a distillation needs none)

    def collect(self, weights: Weights, past: Weights | None, update: int, shard: int) -> Rollout:
        """Shard ``shard`` of ``update``'s rollout with the learner's ``weights`` (``past``: the snapshot)."""
        if self.player is None:
            self.player = ShardPlayer(self.config, self.rules, torch.device("cpu"))
        self.model.load_state_dict(weights)
        return self.player.play(self.model, update, shard, past)

    def label(
        self, seed: int, obs: np.ndarray, mask: np.ndarray, hands: Any, orders: Any, playouts: Weights | None
    ) -> np.ndarray:
        """(B, A) the distillation teacher's move values of one batch (``PimcBot.move_values``), its
        randomness seeded by ``seed``; ``playouts``: the weights of a network that plays every move
        out (greedy), instead of the teacher's ``rollout_bot`` (``distill.refine``)."""
        if playouts is not None:
            self.model.load_state_dict(playouts)
        network = None if playouts is None else self.model
        teacher = make_teacher(self.rules, seed, self.config.distill.teacher, network)
        return teacher.move_values(obs, mask, hands, orders).astype(np.float32)


class Fleet:
    """``config.ray.workers`` Ray actors playing each update's rollout shards and searching label
    batches; a context manager that starts (or joins) Ray and the actors, and ends what it started."""

    def __init__(self, config: TrainConfig) -> None:
        self.config = config
        self.ray = require_ray(without="ray.workers=0 (all of it in this process, on one core: slower)")
        self.actors: list[Any] = []
        self._started = False

    def __enter__(self) -> Fleet:
        ray, config = self.ray, self.config
        self._started = connect(config.ray)
        restarts = config.ray.max_restarts
        actor = ray.remote(num_cpus=1, max_restarts=restarts, max_task_retries=restarts)(Worker)
        self.actors = [actor.remote(config.to_dict()) for _ in range(config.ray.workers)]
        return self

    def idle(self) -> str | None:
        """What to say when the rollouts leave some of the actors waiting (fewer shards than actors)."""
        config, count = self.config, len(shards(self.config))
        if not config.total_updates or count >= config.ray.workers:
            return None
        fits = -(-config.num_games // config.ray.workers)
        return (
            f"ray.workers={config.ray.workers}: the rollouts are {count} shard{'s' if count > 1 else ''} "
            f"(shard_games), so {config.ray.workers - count} of the actors wait; shard_games={fits} gives "
            "each one a shard (and a run of other results: the shards decide them, not the workers)"
        )

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        for handle in self.actors:
            self.ray.kill(handle)
        self.actors = []
        if self._started:
            self.ray.shutdown()

    def collect(
        self, model: ActorCritic, update: int, snapshots: list[Weights], rng: np.random.Generator
    ) -> Rollout:
        """The update's rollout of all ``num_games`` games: the shards played by the actors, in order."""
        weights = self._put_weights(model)
        past = draw_past(self.config, snapshots, rng)
        snapshot = None if past is None else self.ray.put(past)

        def call(shard: int) -> Callable[[Any], Any]:
            return lambda actor: actor.collect.remote(weights, snapshot, update, shard)

        count = len(shards(self.config))
        parts = dict(self._share_out((shard, call(shard)) for shard in range(count)))
        return join_rollouts([parts[shard] for shard in range(count)])

    def label(
        self,
        positions: Positions,
        seed: int,
        progress: Callable[[int], object] | None = None,
        rng: np.random.Generator | None = None,
        playouts: ActorCritic | None = None,
    ) -> Labelled:
        """``distill.label_positions`` with the batches searched by the actors, a few in flight per actor.

        The batches and their deals come from ``search_batches`` here, in order (``rng``: the pile
        shuffles); batch k's teacher is seeded by (``seed``, k). ``progress``: positions labelled so far.
        ``playouts``: the network every move is played out with (``distill.refine``), its weights put
        in Ray's object store once for all the batches.
        """
        weights = None if playouts is None else self._put_weights(playouts)
        settings = self.config.distill
        rules = self.config.build_rules()
        batches = search_batches(rules, positions, settings.privileged, settings.pile_samples, rng)

        def call(index: int, rows: slice, deal: tuple[Any, Any]) -> Callable[[Any], Any]:
            obs, mask = positions.obs[rows], positions.mask[rows]
            return lambda actor: actor.label.remote(stream_seed(seed, index), obs, mask, *deal, weights)

        calls = ((rows, call(index, rows, deal)) for index, (rows, deal) in enumerate(batches))
        values = np.empty(positions.mask.shape, dtype=np.float32)
        done = 0
        for rows, labels in self._share_out(calls):
            values[rows] = labels
            done += rows.stop - rows.start
            if progress is not None:
                progress(done)
        return Labelled(positions.obs, positions.mask, values)

    def _put_weights(self, model: ActorCritic) -> Any:
        """A reference to ``model``'s weights (on CPU) in Ray's object store, put once for every call."""
        return self.ray.put({k: v.detach().cpu() for k, v in model.state_dict().items()})

    def _share_out(self, calls: Iterable[tuple[Key, Callable[[Any], Any]]]) -> Iterator[tuple[Key, Any]]:
        """Each call (given an actor, it returns the call's Ray reference) on the actors, ``IN_FLIGHT``
        queued per actor, the next one to the actor whose call came back first; (key, result) as each
        comes back. ``calls`` is read in order, one call at a time."""
        free = [actor for _ in range(IN_FLIGHT) for actor in self.actors]
        pending: dict[Any, tuple[Key, Any]] = {}
        for key, call in calls:
            if not free:
                yield self._next(pending, free)
            actor = free.pop(0)
            pending[call(actor)] = (key, actor)
        while pending:
            yield self._next(pending, free)

    def _next(self, pending: dict[Any, tuple[Key, Any]], free: list[Any]) -> tuple[Key, Any]:
        """Wait for one call of ``pending``: its key and result (its actor is free again)."""
        (ready,), _ = self.ray.wait(list(pending), num_returns=1)
        key, actor = pending.pop(ready)
        free.append(actor)
        return key, self.ray.get(ready)


Rollouts = LocalRollouts | Fleet
"""Where a run's rollouts are played."""


def join_rollouts(parts: list[Rollout]) -> Rollout:
    """One rollout of the parts' games side by side (parts hold (T, n_i) arrays of the same T).

    ``next_index`` holds step numbers, which joining games leaves as they are; the per-move
    features are listed per step with learner decisions, so they are rejoined step by step. One part
    is its own join (a local run's one shard: nothing copied).
    """
    if len(parts) == 1:
        return parts[0]
    joined: dict[str, Any] = {}
    for field in dataclasses.fields(Rollout):
        values = [getattr(part, field.name) for part in parts]
        if values[0] is None:
            joined[field.name] = None
        elif field.name == "moves":
            joined["moves"] = _join_moves(parts)
        elif isinstance(values[0], np.ndarray):
            joined[field.name] = np.concatenate(values, axis=1)
        elif isinstance(values[0], dict):
            joined[field.name] = {key: [item for value in values for item in value[key]] for key in values[0]}
        else:
            joined[field.name] = [item for value in values for item in value]
    return Rollout(**joined)


def _join_moves(parts: list[Rollout]) -> list[MoveInputs]:
    """Per step with learner decisions in any part: the parts' features of that step, in part order."""
    steps = len(parts[0].valid)
    per_part = []
    for part in parts:
        active = np.flatnonzero(part.valid.any(axis=1))
        per_part.append(dict(zip(active.tolist(), part.moves, strict=True)))
    out = []
    for t in range(steps):
        present = [moves[t] for moves in per_part if t in moves]
        if present:
            out.append(MoveInputs.concat(present))
    return out
