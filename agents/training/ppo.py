"""PPO pieces for batched self-play: per-seat rollouts, per-seat GAE and the clipped update.

In ``SelfPlay`` each step moves one seat per game, and a reward reaches every
seat (points scored, round ends). A seat's trajectory is therefore its own
decisions in one game, interleaved with the other seats'. ``collect_rollout``
records one transition per learner decision and keeps, per (game, seat), the
index of that seat's last transition: every reward the step hands a seat is
added to that transition (so a round-end reward lands on the seat's last move
of the round, whoever moved last), and the seat's next decision links to it
(``next_index``). When an episode ends its seats' last transitions are marked
done; the rollout's last transition of a seat still in play bootstraps from the
value of that seat's observation at the end of the rollout.

``compute_advantages`` then runs GAE backwards along those links: the discount
counts a seat's own decisions, not table steps.

With a privileged critic (``ActorCritic.critic``) the rollout also keeps, per
decision, the hidden tiles the critic reads (``hidden_tiles``: the other seats'
hands), and its values replace the value head's; the moves are still sampled
from the observation alone.

Games can also seat opponents (bots, snapshots): in those the learner plays
only some seats, and only its decisions are recorded (``valid``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import torch
from torch import nn

from agents.bots.registry import BOT_NAMES, load_policy, make_bot
from agents.training.config import PPOConfig
from agents.training.move_features import MoveInputs
from agents.training.network import ActorCritic, hidden_size
from domino_env.engine.core import DominoCore
from domino_env.engine.rules import Rules
from domino_env.engine.tiles import NUM_TILES
from domino_env.envs.learner import outcome
from domino_env.envs.policies import Policy, act_per_policy
from domino_env.envs.selfplay import SelfPlay, SelfPlayState

LOSSES = (
    "value_loss",
    "policy_loss",
    "entropy",
    "old_approx_kl",
    "approx_kl",
    "clipfrac",
    "explained_variance",
)
"""The statistics ``ppo_update`` returns, by CleanRL's names (logged as ``losses/<name>``)."""


@dataclass
class Rollout:
    """(T, N) arrays: step t of game g; ``valid`` where the learner moved (others are padding)."""

    obs: np.ndarray
    mask: np.ndarray
    actions: np.ndarray
    logprobs: np.ndarray
    values: np.ndarray
    rewards: np.ndarray
    """Sum of the seat's rewards from this decision to its next one (scaled)."""
    dones: np.ndarray
    """1.0: the episode ended before the seat's next decision (no bootstrap)."""
    next_index: np.ndarray
    """Step of the same seat's next decision in this rollout, -1 if none."""
    bootstrap: np.ndarray
    """Value to bootstrap from where ``next_index`` is -1 and not done."""
    valid: np.ndarray
    moves: list[MoveInputs] | None = None
    """Per step with learner decisions, their packed per-move features (networks that use them)."""
    episode_returns: dict[str, list[float]] = field(default_factory=dict)
    """Per opponent name ("self": pure self-play): the learner seat's unscaled return per finished episode."""
    episode_lengths: list[int] = field(default_factory=list)
    """The learner seat's decisions per finished episode (every opponent's games, in one list)."""
    hidden: np.ndarray | None = None
    """(T, N, ``hidden_size``) uint8: the hidden tiles at each decision (privileged critic only)."""


def hidden_tiles(core: DominoCore, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """(B, (P - 1) * 28) uint8: the hands of the other seats (relative seats 1..P-1) of ``seats[i]``
    in game ``games[i]``, one bit per tile: what the privileged critic reads, never the policy."""
    p = core.players
    others = (seats[:, None] + np.arange(1, p)) % p
    hands = core.hands[games[:, None], others]
    bits = (hands[:, :, None] >> np.arange(NUM_TILES, dtype=np.uint64)) & np.uint64(1)
    return bits.astype(np.uint8).reshape(len(games), -1)


@dataclass
class Opponents:
    """Who sits where: the learner's seats per game, and the opponent policy of every other seat."""

    learner: np.ndarray
    """(N, P) bool: seats the learner plays."""
    opponent: np.ndarray
    """(N,) index into ``policies`` for the other seats of game g; -1 where the learner plays every seat."""
    policies: Sequence[Policy]
    names: Sequence[str]

    @classmethod
    def assign(
        cls,
        num_games: int,
        rules: Rules,
        weights: dict[str, float],
        policies: dict[str, Policy],
        games: range | None = None,
    ) -> Opponents:
        """Split the games by ``weights`` ("self": pure self-play, any other name: a policy in ``policies``).

        The split is fixed (game g keeps its opponent) so that rollouts of equal
        length always hold the same mix; in opponent games the learner plays the
        side of seat g % P (with teams, both partners' seats: partners share the
        policy), so it plays every seat equally often. ``games``: only those games of the
        split (a shard's), so that the shards of a rollout hold the mix of the whole.
        """
        names = list(weights)
        total = sum(weights.values())
        counts = np.floor(np.array([weights[n] / total for n in names]) * num_games).astype(int)
        counts[0] += num_games - counts.sum()
        kind = np.repeat(np.arange(len(names)), counts)
        others = [n for n in names if n != "self"]
        opponent = np.array([-1 if names[k] == "self" else others.index(names[k]) for k in kind])
        players = rules.players
        sides = np.array([rules.side_of(seat) for seat in range(players)])
        learner = sides[None, :] == sides[np.arange(num_games) % players][:, None]
        learner[opponent < 0] = True
        rows = slice(None) if games is None else slice(games.start, games.stop)
        return cls(learner[rows], opponent[rows], [policies[n] for n in others], others)


def opponent_policies(
    names: Sequence[str], rules: Rules, seed: int, options: dict[str, dict], fixed: dict[str, Policy]
) -> dict[str, Policy]:
    """The policy of each opponent name: a bot seeded with ``seed`` (fresh each update), or a trained
    agent from ``fixed`` (loaded once by ``load_fixed``: a frozen network needs no reseeding)."""
    return {
        name: fixed[name] if name in fixed else make_bot(name, rules, seed, **options.get(name, {}))
        for name in names
    }


def load_fixed(names: Sequence[str], rules: Rules) -> dict[str, Policy]:
    """The trained agents among ``names`` (anything not a bot: a shipped name or a checkpoint path),
    loaded once, greedy, checked against ``rules``."""
    return {name: load_policy(name, rules, seed=0) for name in names if name not in BOT_NAMES}


def collect_rollout(
    model: ActorCritic,
    play: SelfPlay,
    steps: int,
    opponents: Opponents,
    device: torch.device,
    reward_scale: float = 1.0,
    reward: Literal["points", "win"] = "points",
    generator: torch.Generator | None = None,
) -> Rollout:
    """Play ``steps`` table steps of every game in ``play``, sampling the learner's moves from ``model``
    with ``generator`` (None: torch's global stream).

    ``reward``: ``"points"`` (the step's points, times ``reward_scale``) or ``"win"`` (+1 / -1 / 0
    to each seat at the end of an episode its side won / lost / nobody won).
    """
    n, p = play.num_games, play.rules.players
    rollout = _empty_rollout(model, play, steps, opponents.names)
    seats = _Seats(np.full((n, p), -1, dtype=np.int64), np.zeros((n, p)), np.zeros((n, p), dtype=np.int64))
    games = np.arange(n)
    sides = play.core.side_of_seat
    for t in range(steps):
        state = play.state()
        mine = opponents.learner[games, state.seat]
        seats.lengths[games, state.seat] += 1
        step_actions = np.zeros(n, dtype=np.int64)
        rows = np.flatnonzero(mine)
        if len(rows):
            step_actions[rows] = _learner_moves(
                model, play.core, state, rows, t, rollout, seats.last, device, generator
            )
        owner = np.where(mine, -1, opponents.opponent)
        act_per_policy(opponents.policies, owner, state.obs, state.mask, step_actions)
        result = play.step(step_actions)
        if reward == "win":
            step_rewards = np.where(result.done[:, None], outcome(result.winner[:, None], sides[None, :]), 0)
        else:
            step_rewards = result.rewards
        seats.returns += step_rewards
        scale = 1.0 if reward == "win" else reward_scale
        game, seat = np.nonzero(seats.last >= 0)
        rollout.rewards[seats.last[game, seat], game] += scale * step_rewards[game, seat]
        ended = np.flatnonzero(result.done)
        if len(ended):
            seats.end(ended, rollout, opponents)
    _bootstrap(model, play.core, rollout, seats.last, device)
    return rollout


def _empty_rollout(model: ActorCritic, play: SelfPlay, steps: int, names: Sequence[str]) -> Rollout:
    """A rollout of ``steps`` steps of ``play``'s games, all padding, to be filled in."""
    n = play.num_games
    floats = [np.zeros((steps, n), dtype=np.float32) for _ in range(5)]  # logprobs ... bootstrap
    return Rollout(
        obs=np.zeros((steps, n, play.core.obs_size), dtype=np.int16),
        mask=np.zeros((steps, n, play.rules.num_actions), dtype=bool),
        actions=np.zeros((steps, n), dtype=np.int64),
        logprobs=floats[0],
        values=floats[1],
        rewards=floats[2],
        dones=floats[3],
        next_index=np.full((steps, n), -1, dtype=np.int64),
        bootstrap=floats[4],
        valid=np.zeros((steps, n), dtype=bool),
        moves=[] if model.uses_move_features else None,
        episode_returns={name: [] for name in ["self", *names]},
        episode_lengths=[],
        hidden=np.zeros((steps, n, hidden_size(play.rules)), dtype=np.uint8) if model.privileged else None,
    )


@dataclass
class _Seats:
    """(N, P) per game and seat, while a rollout is collected: the seat's episode so far."""

    last: np.ndarray
    """Step of the seat's last transition, -1: none (yet, or since its episode ended)."""
    returns: np.ndarray
    """Its unscaled return."""
    lengths: np.ndarray
    """Its decisions."""

    def end(self, ended: np.ndarray, rollout: Rollout, opponents: Opponents) -> None:
        """Games ``ended`` finished their episode: their seats' last transitions are marked done, and
        the learner's returns and lengths go to the rollout's episode lists."""
        game, seat = np.nonzero(self.last[ended] >= 0)
        rollout.dones[self.last[ended][game, seat], ended[game]] = 1.0
        for g in ended:
            name = "self" if opponents.opponent[g] < 0 else opponents.names[opponents.opponent[g]]
            rollout.episode_returns[name].extend(self.returns[g, opponents.learner[g]].tolist())
            rollout.episode_lengths.extend(self.lengths[g, opponents.learner[g]].tolist())
        self.last[ended] = -1
        self.returns[ended] = 0.0
        self.lengths[ended] = 0


def _learner_moves(
    model: ActorCritic,
    core: DominoCore,
    state: SelfPlayState,
    rows: np.ndarray,
    t: int,
    rollout: Rollout,
    last: np.ndarray,
    device: torch.device,
    generator: torch.Generator | None,
) -> np.ndarray:
    """The learner's moves in games ``rows`` at step ``t``, sampled from ``model`` with ``generator`` and
    recorded in ``rollout``, each linked to its seat's previous decision (``last``: their steps, updated)."""
    row_obs = torch.from_numpy(state.obs[rows]).to(device)
    row_mask = torch.from_numpy(state.mask[rows]).to(device)
    row_moves = None
    if rollout.moves is not None:
        row_moves = model.move_inputs(row_obs, row_mask)
        rollout.moves.append(row_moves)
    with torch.no_grad():
        chosen, logprob, value = _sample(model, row_obs, row_mask, row_moves, generator)
        if rollout.hidden is not None:  # after the move is chosen: the critic's value replaces the head's
            rollout.hidden[t, rows] = hidden_tiles(core, rows, state.seat[rows])
            row_hidden = torch.from_numpy(rollout.hidden[t, rows]).to(device)
            value = model.critic_value(model.encoder(row_obs), row_hidden)
    actions = chosen.cpu().numpy()
    rollout.obs[t, rows], rollout.mask[t, rows] = state.obs[rows], state.mask[rows]
    rollout.actions[t, rows] = actions
    rollout.logprobs[t, rows], rollout.values[t, rows] = logprob.cpu().numpy(), value.cpu().numpy()
    rollout.valid[t, rows] = True
    seats = state.seat[rows]
    previous = last[rows, seats]
    linked = previous >= 0
    rollout.next_index[previous[linked], rows[linked]] = t
    last[rows, seats] = t
    return actions


def _sample(
    model: ActorCritic,
    obs: torch.Tensor,
    mask: torch.Tensor,
    moves: MoveInputs | None,
    generator: torch.Generator | None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``ActorCritic.act``'s draw (the Gumbel-max trick) from ``generator``: a rollout shard's moves come
    from a stream of its own, whoever plays it (``training/distributed.py``)."""
    logits, values = model(obs, mask, moves)
    log_probs = logits.log_softmax(dim=1)
    noise = -torch.empty_like(logits).exponential_(generator=generator).log()
    actions = (log_probs + noise).argmax(dim=1)
    return actions, log_probs.gather(1, actions[:, None]).squeeze(1), values


def _bootstrap(
    model: ActorCritic, core: DominoCore, rollout: Rollout, last: np.ndarray, device: torch.device
) -> None:
    """The value each seat still in play at the end of the rollout bootstraps its last transition from."""
    game, seat = np.nonzero(last >= 0)
    if not len(game):
        return
    end_obs = torch.from_numpy(core.observe(seats=seat, games=game)).to(device)
    with torch.no_grad():
        if rollout.hidden is None:
            end_values = model.value(end_obs)
        else:
            end_hidden = torch.from_numpy(hidden_tiles(core, game, seat)).to(device)
            end_values = model.critic_value(model.encoder(end_obs), end_hidden)
    rollout.bootstrap[last[game, seat], game] = end_values.cpu().numpy()


def compute_advantages(rollout: Rollout, gamma: float, gae_lambda: float) -> tuple[np.ndarray, np.ndarray]:
    """(advantages, returns), (T, N): GAE along each seat's chain of decisions (``next_index``)."""
    steps, n = rollout.values.shape
    advantages = np.zeros((steps, n), dtype=np.float32)
    columns = np.arange(n)
    for t in reversed(range(steps)):
        following = rollout.next_index[t]
        linked = following >= 0
        at = np.where(linked, following, 0)
        next_value = np.where(linked, rollout.values[at, columns], rollout.bootstrap[t])
        next_advantage = np.where(linked, advantages[at, columns], 0.0)
        alive = 1.0 - rollout.dones[t]
        delta = rollout.rewards[t] + gamma * next_value * alive - rollout.values[t]
        advantages[t] = delta + gamma * gae_lambda * alive * next_advantage
    advantages[~rollout.valid] = 0.0
    return advantages, advantages + rollout.values


def ppo_update(
    model: ActorCritic,
    optimizer: torch.optim.Optimizer,
    rollout: Rollout,
    advantages: np.ndarray,
    returns: np.ndarray,
    hyper: PPOConfig,
    rng: np.random.Generator,
    device: torch.device,
    train_policy: bool = True,
) -> dict[str, float]:
    """Clipped-surrogate PPO epochs over the valid transitions; returns the last epoch's mean statistics.

    ``train_policy`` False: the value loss alone (a new critic's warm-up, ``ppo.critic_warmup``).

    Minibatches are drawn with ``rng`` (numpy, so a checkpoint's generator
    state reproduces them). Statistics (``LOSSES``, CleanRL's names): value, policy and entropy
    losses, approximate KL by the ``-log r`` estimator (``old_approx_kl``) and the low-variance
    ``(r - 1) - log r`` one (``approx_kl``), the fraction of ratios clipped, and the explained
    variance of the values before the update.
    """
    data = _Transitions.of(model, rollout, advantages, returns, device)
    size = len(data.actions)
    batch = max(1, size // hyper.minibatches)
    for _ in range(hyper.epochs):
        order = torch.from_numpy(rng.permutation(size)).to(device)
        stats: dict[str, list[float]] = {k: [] for k in LOSSES[:-1]}
        for start in range(0, size, batch):
            step = _minibatch_step(model, optimizer, data, order[start : start + batch], hyper, train_policy)
            for key, value in step.items():
                stats[key].append(value)
    out = {k: float(np.mean(v)) for k, v in stats.items()}
    out["explained_variance"] = explained_variance(data.values.cpu().numpy(), data.returns.cpu().numpy())
    out["transitions"] = float(size)
    return out


@dataclass
class _Transitions:
    """A rollout's valid transitions, flat, on the device: what the PPO epochs draw minibatches from."""

    features: torch.Tensor
    """The encoded observations (the encoder's output before the update: fixed for its epochs)."""
    mask: torch.Tensor
    actions: torch.Tensor
    moves: MoveInputs | None
    hidden: torch.Tensor | None
    logprobs: torch.Tensor
    values: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor

    @classmethod
    def of(
        cls,
        model: ActorCritic,
        rollout: Rollout,
        advantages: np.ndarray,
        returns: np.ndarray,
        device: torch.device,
    ) -> _Transitions:
        """The learner's transitions in ``rollout`` (``valid``), with their advantages and returns."""
        valid = rollout.valid.reshape(-1)

        def flat(array: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(np.ascontiguousarray(array.reshape(-1, *array.shape[2:])[valid])).to(
                device
            )

        obs, mask, actions = flat(rollout.obs), flat(rollout.mask), flat(rollout.actions)
        moves = None if rollout.moves is None else MoveInputs.concat(rollout.moves).to(device)
        hidden = None if rollout.hidden is None else flat(rollout.hidden)
        with torch.no_grad():
            features = model.encoder(obs)
        return cls(
            features, mask, actions, moves, hidden, flat(rollout.logprobs), flat(rollout.values),
            flat(advantages), flat(returns),
        )  # fmt: skip


def _minibatch_step(
    model: ActorCritic,
    optimizer: torch.optim.Optimizer,
    data: _Transitions,
    idx: torch.Tensor,
    hyper: PPOConfig,
    train_policy: bool,
) -> dict[str, float]:
    """One clipped-surrogate step on the transitions ``idx`` of ``data``; its statistics (``LOSSES``)."""
    batch_moves = None if data.moves is None else data.moves.select(idx)
    logprob, entropy, value = model.evaluate(
        data.features.index_select(0, idx),
        data.mask.index_select(0, idx),
        data.actions[idx],
        batch_moves,
        None if data.hidden is None else data.hidden.index_select(0, idx),
    )
    log_ratio = logprob - data.logprobs[idx]
    ratio = log_ratio.exp()
    mb_adv = data.advantages[idx]
    if hyper.norm_adv and len(idx) > 1:
        mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
    policy_loss = torch.max(
        -mb_adv * ratio, -mb_adv * ratio.clamp(1 - hyper.clip_coef, 1 + hyper.clip_coef)
    ).mean()
    value_loss = 0.5 * ((value - data.returns[idx]) ** 2).mean()
    entropy_loss = entropy.mean()
    loss = hyper.vf_coef * value_loss
    if train_policy:
        loss = loss + policy_loss - hyper.ent_coef * entropy_loss
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), hyper.max_grad_norm)
    optimizer.step()
    with torch.no_grad():
        return {
            "value_loss": value_loss.item(),
            "policy_loss": policy_loss.item(),
            "entropy": entropy_loss.item(),
            "old_approx_kl": (-log_ratio).mean().item(),
            "approx_kl": ((ratio - 1) - log_ratio).mean().item(),
            "clipfrac": ((ratio - 1).abs() > hyper.clip_coef).float().mean().item(),
        }


def explained_variance(predicted: np.ndarray, target: np.ndarray) -> float:
    """1 - Var(target - predicted) / Var(target): 1 perfect, 0 no better than the mean; nan if constant."""
    variance = np.var(target)
    return float("nan") if variance == 0 else float(1 - np.var(target - predicted) / variance)
