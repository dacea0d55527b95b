"""Self-play rollouts and the distillation teacher's search on Ray actors, for the learner in
``train.py`` (``ray.workers=N``).

The actor-learner split of IMPALA, DouZero and RLlib, with Ray doing the
placement, transport and restarts:

* ``Worker`` (one Ray actor per worker, one CPU each) holds a CPU copy of
  the network and plays its share of the update's ``num_games``: its own ``SelfPlay``
  batch and opponents (``Opponents.assign`` over its games, the bots, the ``past``
  snapshot), ``ppo.collect_rollout`` as in a local run.
* The learner (``train.py``, on ``device``) puts the weights in Ray's object store
  once per update, the actors read them from there, and their rollouts come back
  joined game by game into one ``Rollout`` for the PPO update.
* Distillation (``distill.rounds``): the teacher's search, most of a round's time, is
  shared out to the same actors a batch of positions per call (``Fleet.label``); the
  positions are gathered and the network trained in this process.

Every call carries everything it depends on (weights, snapshot, update number), and
each worker's deals, opponents and sampling are seeded by (``seed``, update, worker):
a run is deterministic for a given seed and worker count, and an actor that dies
(killed, its node lost) is restarted by Ray (``ray.max_restarts``) and its call run
again with the same result. Checkpoints, ``--resume`` and TensorBoard are the local
run's; ``ray.workers`` may change on ``--resume`` (the run then goes on as that worker
count would). A label batch's teacher is seeded by (round seed, batch), whichever actor
searches it: labels are the same for any worker count, and privileged labels from the
default teacher (playouts of ``strong`` or exact play, no ``epsilon``) are those of a
local run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from itertools import pairwise
from types import TracebackType
from typing import Any

import numpy as np
import torch

from agents.arena.distributed import connect, require_ray
from agents.training.checkpoint import NetworkPolicy
from agents.training.config import PAST, SELF, TrainConfig, parse_train_config
from agents.training.distill import Labelled, Positions, make_teacher, search_batches
from agents.training.move_features import MoveInputs
from agents.training.network import ActorCritic, build_network
from agents.training.ppo import Opponents, Rollout, collect_rollout, load_fixed, opponent_policies
from domino_env.envs.policies import Policy
from domino_env.envs.selfplay import SelfPlay

Weights = dict[str, torch.Tensor]
LABELS_IN_FLIGHT = 2
"""Label batches queued per actor: the next one is there when a search ends."""


def worker_seed(*entropy: int) -> int:
    """A 64-bit seed of its own for each (seed, update, worker): streams that never overlap."""
    return int(np.random.SeedSequence(list(entropy)).generate_state(1, np.uint64)[0] >> np.uint64(1))


class Worker:
    """``count`` of every update's games, played on CPU, and the teacher's search of label batches
    (the body of a Ray actor)."""

    def __init__(self, config: dict[str, Any], index: int, count: int) -> None:
        torch.set_num_threads(1)  # one CPU per actor
        self.config: TrainConfig = parse_train_config(config)
        self.rules = self.config.build_rules()
        self.index, self.count = index, count
        self.model = self._network()
        self.fixed: dict[str, Policy] | None = None

    def _network(self) -> ActorCritic:
        return build_network(self.rules, self.config.model.model_dump())

    def collect(self, weights: Weights, past: Weights | None, update: int) -> Rollout:
        """This worker's rollout of ``update`` with the learner's ``weights`` (``past``: the snapshot)."""
        config, rules = self.config, self.rules
        self.model.load_state_dict(weights)
        torch.manual_seed(worker_seed(config.seed, update, self.index))  # the learner's sampled moves
        play = SelfPlay(
            rules, self.count, config.episode, seed=np.random.default_rng([config.seed, update, self.index])
        )
        update_seed = worker_seed(config.seed, update, self.index, 1)
        bots = [name for name in config.opponents if name not in (SELF, PAST)]
        if self.fixed is None:  # trained agents as opponents: loaded once per worker, frozen
            self.fixed = load_fixed(bots, rules)
        policies = opponent_policies(bots, rules, update_seed, config.bots, self.fixed)
        if past is not None:
            snapshot = self._network()
            snapshot.load_state_dict(past)
            generator = torch.Generator().manual_seed(update_seed)
            policies[PAST] = NetworkPolicy(PAST, snapshot, greedy=False, generator=generator)
        opponents = Opponents.assign(self.count, rules, config.opponents, policies)
        return collect_rollout(
            self.model, play, config.rollout_steps, opponents, torch.device("cpu"), config.ppo.reward_scale,
            config.reward,
        )  # fmt: skip

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
    """``config.ray.workers`` Ray actors playing each update's rollout and searching label batches; a
    context manager that starts (or joins) Ray and the actors, and ends what it started."""

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
        bounds = np.linspace(0, config.num_games, config.ray.workers + 1).astype(int)
        self.actors = [
            actor.remote(config.to_dict(), index, int(hi - lo))
            for index, (lo, hi) in enumerate(pairwise(bounds))
        ]
        return self

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
        """The update's rollout of all ``num_games`` games, joined from the actors' parts.

        The ``past`` snapshot is drawn here with the learner's ``rng``, as a local run draws it.
        """
        ray = self.ray
        weights = self._put_weights(model)
        past = ray.put(snapshots[rng.integers(len(snapshots))]) if PAST in self.config.opponents else None
        parts = ray.get([handle.collect.remote(weights, past, update) for handle in self.actors])
        return join_rollouts(parts)

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
        values = np.empty(positions.mask.shape, dtype=np.float32)
        pending: dict[Any, slice] = {}
        done = 0
        for index, (rows, deal) in enumerate(batches):
            if len(pending) >= LABELS_IN_FLIGHT * len(self.actors):
                done = self._gather(pending, values, done, progress)
            actor = self.actors[index % len(self.actors)]
            call = actor.label.remote(
                worker_seed(seed, index), positions.obs[rows], positions.mask[rows], *deal, weights
            )
            pending[call] = rows
        while pending:
            done = self._gather(pending, values, done, progress)
        return Labelled(positions.obs, positions.mask, values)

    def _put_weights(self, model: ActorCritic) -> Any:
        """A reference to ``model``'s weights (on CPU) in Ray's object store, put once for every call."""
        return self.ray.put({k: v.detach().cpu() for k, v in model.state_dict().items()})

    def _gather(
        self,
        pending: dict[Any, slice],
        values: np.ndarray,
        done: int,
        progress: Callable[[int], object] | None,
    ) -> int:
        """Wait for one label batch and write its values; returns the positions labelled so far."""
        (ready,), _ = self.ray.wait(list(pending), num_returns=1)
        rows = pending.pop(ready)
        values[rows] = self.ray.get(ready)
        done += rows.stop - rows.start
        if progress is not None:
            progress(done)
        return done


def join_rollouts(parts: list[Rollout]) -> Rollout:
    """One rollout of the parts' games side by side (parts hold (T, n_i) arrays of the same T).

    ``next_index`` holds step numbers, which joining games leaves as they are; the per-move
    features are listed per step with learner decisions, so they are rejoined step by step.
    """
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
