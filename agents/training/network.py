"""Actor-critic network over the int16 observation, with legal-action masking.

One network serves every seat: observations are seat-relative (the observer is
always relative seat 0), so a seat's decision looks the same whichever seat it is.

Encoding (``ObservationEncoder``), chosen per field of ``observation_fields``:

* one-hot where the field is a small category whose numeric order means nothing:
  ``tile_owner`` (0 unseen, 1 own hand, 2+k placed by relative seat k: P + 2 values),
  ``tile_end`` (0 off the table, 1-5 end codes), ``end_number`` (-1 closed, 0-6),
  ``opener`` and ``to_move`` (relative seats);
* a fixed scale to about [0, 1] for counts and flags: ``missing`` and ``end_double``
  as they are (0/1), ``tile_order`` / 28, ``draw_pile`` and ``hand_size`` / 28,
  ``scores`` / the rules' target.

The scales are constants of the rules, not running statistics, so a checkpoint
needs nothing beyond its weights to reproduce its inputs. Out-of-range category
values are clamped into the one-hot range instead of raising, because the
encoder runs inside every policy call.

With ``move_features`` the network also reads, for every legal action, what
the move would lead to (``agents.training.move_features``): each legal action's logit gets
``w(state) . f(move)``, a state-dependent weighting of the move's features, plus
a small MLP of (move features, state), on top of the trunk's per-action logit.
With ``after_state`` the move rows also carry the position each move leads to, as
bits (own hand, tile, numbers at the ends, the next seat's fitting tiles), and the
per-move MLP is ``move_hidden`` wide. The features come from the observation and the
mask alone, so they add no information a seat may not have; they are computed in NumPy on every call
unless the caller passes them (the PPO update stores them with the rollout).

With ``privileged_critic`` the value comes from a critic of its own, an MLP over
the encoded observation and the hidden tiles (every other seat's hand,
``hidden_size`` inputs): training only, as in Suphx's oracle guiding and
DouZero-style perfect-information critics: knowing the hands, its values should
be less noisy, and so the policy's advantages (on 2p block its explained variance
was only a little higher, docs/agents.md). The policy never reads
the hidden tiles: ``forward``, ``act`` and ``heads`` take no such input, and the
critic shares no weights with the policy (``tests/test_privileged.py``).

Illegal actions get the most negative finite logit of the dtype: after the
softmax their probability is exactly 0 (so they are never sampled nor argmax'ed)
while log-probabilities and the entropy stay finite (-inf would give 0 * -inf = nan).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from agents.training.move_features import MoveInputs, feature_count, move_features
from domino_env.engine.observation import observation_fields, observation_size
from domino_env.engine.rules import Rules
from domino_env.engine.tiles import NUM_TILES

MOVE_HIDDEN = 64
"""Default width of the per-move scorer's hidden layer."""


def resolve_device(device: str = "auto") -> torch.device:
    """``"auto"``: CUDA when available, else CPU; an explicit ``"cuda"`` without CUDA falls back to CPU."""
    if device in ("auto", "cuda") or device.startswith("cuda:"):
        if torch.cuda.is_available():
            return torch.device("cuda" if device == "auto" else device)
        return torch.device("cpu")
    return torch.device(device)


class ObservationEncoder(nn.Module):
    """int16 observation rows -> float32 features (see the module docstring for the per-field encoding)."""

    def __init__(self, rules: Rules) -> None:
        super().__init__()
        fields = observation_fields(rules)
        p = rules.players
        self.fields = fields
        self.obs_size = observation_size(rules)
        scale = torch.zeros(self.obs_size)
        for name, divisor in [
            ("missing", 1.0),
            ("end_double", 1.0),
            ("tile_order", NUM_TILES),
            ("draw_pile", NUM_TILES),
            ("hand_size", NUM_TILES),
            ("scores", rules.target),
        ]:
            scale[fields[name]] = 1.0 / divisor
        scaled = scale.nonzero().flatten()
        # One-hot fields: (field, number of categories, offset that makes the smallest value 0).
        onehot = [
            (fields["tile_owner"], p + 2, 0),
            (fields["tile_end"], 6, 0),
            (fields["end_number"], 8, 1),
            (fields["opener"], p, 0),
            (fields["to_move"], p, 0),
        ]
        columns, counts, offsets = [], [], []
        for where, count, offset in onehot:
            for column in range(where.start, where.stop):
                columns.append(column)
                counts.append(count)
                offsets.append(offset)
        counts_t = torch.tensor(counts)
        # Feature index of category 0 of each one-hot column: after the scaled features, blocks side by side.
        base = len(scaled) + torch.cumsum(counts_t, 0) - counts_t
        self.register_buffer("scale", scale[scaled], persistent=False)
        self.register_buffer("scaled_index", scaled, persistent=False)
        self.register_buffer("onehot_index", torch.tensor(columns), persistent=False)
        self.register_buffer("onehot_offset", torch.tensor(offsets), persistent=False)
        self.register_buffer("onehot_max", counts_t - 1, persistent=False)
        self.register_buffer("onehot_base", base, persistent=False)
        self.size = len(scaled) + int(counts_t.sum())

    def scaled_columns(self, field: str) -> list[int]:
        """The feature columns of a scaled observation field (``scores``, ``missing``...): the scaled
        features come first, in observation order."""
        where = self.fields[field]
        return [
            i for i, column in enumerate(self.scaled_index.tolist()) if where.start <= column < where.stop
        ]

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """(B, size) float32; all one-hot fields in one scatter (this runs on every policy call)."""
        features = torch.zeros(len(obs), self.size, device=obs.device)
        features[:, : len(self.scale)] = obs.index_select(1, self.scaled_index).float() * self.scale
        codes = obs.index_select(1, self.onehot_index).long() + self.onehot_offset
        codes = torch.minimum(codes.clamp_(min=0), self.onehot_max) + self.onehot_base
        return features.scatter_(1, codes, 1.0)


def hidden_size(rules: Rules) -> int:
    """Inputs of the privileged critic beyond the observation: one bit per tile per other seat."""
    return (rules.players - 1) * NUM_TILES


class ActorCritic(nn.Module):
    """Shared MLP trunk, a policy head (one logit per action) and a value head (the mover's return).

    ``move_features``: add the per-move feature term to the logits (module docstring);
    ``after_state``: its rows also carry the after-state bits, scored by a ``move_hidden``-wide MLP.
    ``privileged_critic``: add a separate critic that also reads the hidden hands (training only).
    """

    def __init__(
        self,
        rules: Rules,
        hidden: tuple[int, ...] = (128, 128),
        move_features: bool = True,
        privileged_critic: bool = False,
        after_state: bool = False,
        move_hidden: int = MOVE_HIDDEN,
    ) -> None:
        super().__init__()
        if after_state and not move_features:
            raise ValueError("after_state adds to the move features: it needs move_features=True")
        self.rules = rules
        self.encoder = ObservationEncoder(rules)
        self.num_actions = rules.num_actions
        self.uses_move_features = move_features
        self.after_state = after_state
        self.trunk, width = _tanh_layers(self.encoder.size, hidden)
        # Small policy init (CleanRL's 0.01): near-uniform play over the legal moves at the start.
        self.policy_head = _orthogonal(nn.Linear(width, self.num_actions), 0.01)
        count = feature_count(after_state)
        self.move_head = _orthogonal(nn.Linear(width, count), 0.01) if move_features else None
        if move_features:  # a small per-move MLP on (move features, state): interactions the sum misses
            self.move_state = _orthogonal(nn.Linear(width, move_hidden), 1.0)
            self.move_embed = _orthogonal(nn.Linear(count, move_hidden), 1.0)
            self.move_out = _orthogonal(nn.Linear(move_hidden, 1), 0.01)
        self.value_head = _orthogonal(nn.Linear(width, 1), 1.0)
        self.critic: nn.Sequential | None = None
        if privileged_critic:
            critic_trunk, critic_width = _tanh_layers(self.encoder.size + hidden_size(rules), hidden)
            self.critic = nn.Sequential(*critic_trunk, _orthogonal(nn.Linear(critic_width, 1), 1.0))

    @property
    def privileged(self) -> bool:
        return self.critic is not None

    def ignore_game_scores(self) -> None:
        """Zero the trunk's weights on the ``scores`` inputs, so that the game score moves no move.

        For a run whose every position has a game score of 0 (single rounds of rules that score
        only when the round ends): those weights get no gradient and would keep their random
        init, which shifts the network's play at random once a match's scores are not 0. Zeroing
        them changes nothing else in such a run: the inputs they multiply are 0 throughout.
        """
        with torch.no_grad():
            self.trunk[0].weight[:, self.encoder.scaled_columns("scores")] = 0.0

    def critic_value(self, features: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        """(B,) the privileged critic's values from encoded features and (B, ``hidden_size``) hidden tiles."""
        if self.critic is None:
            raise ValueError("this network has no privileged critic (model.privileged_critic)")
        return self.critic(torch.cat([features, hidden.float()], dim=1)).squeeze(1)

    def move_inputs(self, obs: torch.Tensor, mask: torch.Tensor) -> MoveInputs | None:
        """The legal moves of these rows with their features, or None when the network does not use them."""
        if not self.uses_move_features:
            return None
        inputs = move_features(self.rules, obs.cpu().numpy(), mask.cpu().numpy(), self.after_state)
        return inputs.to(obs.device)

    def forward(
        self, obs: torch.Tensor, mask: torch.Tensor, moves: MoveInputs | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(masked logits (B, A), values (B,)) for int16 ``obs`` (B, obs_size) and bool ``mask`` (B, A).

        ``moves``: ``move_inputs(obs, mask)`` when the caller already has it (computed here otherwise).
        """
        if moves is None:
            moves = self.move_inputs(obs, mask)
        return self.heads(self.encoder(obs), mask, moves)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        """(B,) values alone: what bootstrapping needs, for positions where no move is asked."""
        return self.value_head(self.trunk(self.encoder(obs))).squeeze(1)

    def heads(
        self, features: torch.Tensor, mask: torch.Tensor, moves: MoveInputs | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``forward`` from encoded features: the encoder has no weights, so PPO encodes a rollout once."""
        hidden = self.trunk(features)
        logits = self.policy_head(hidden)
        if self.move_head is not None:
            if moves is None:
                raise ValueError("this network scores moves by their features: pass model.move_inputs(...)")
            weights = self.move_head(hidden).index_select(0, moves.rows)
            context = self.move_state(hidden).index_select(0, moves.rows)
            joint = torch.tanh(self.move_embed(moves.features) + context)
            scores = (moves.features * weights).sum(dim=1) + self.move_out(joint).squeeze(1)
            where = moves.rows * self.num_actions + moves.actions
            added = logits.new_zeros(logits.numel()).index_add(0, where, scores)
            logits = logits + added.view_as(logits)
        logits = logits.masked_fill(~mask, torch.finfo(logits.dtype).min)
        return logits, self.value_head(hidden).squeeze(1)

    def act(
        self, obs: torch.Tensor, mask: torch.Tensor, greedy: bool = False, moves: MoveInputs | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(actions, their log-probabilities, values): sampled, or the most probable legal action.

        Sampling is the Gumbel-max trick (argmax of log-probabilities plus Gumbel noise):
        an exact draw from the softmax, cheaper on CPU than ``torch.multinomial``.
        """
        logits, values = self(obs, mask, moves)
        log_probs = logits.log_softmax(dim=1)
        if greedy:
            actions = logits.argmax(dim=1)
        else:
            noise = -torch.empty_like(logits).exponential_().log()
            actions = (log_probs + noise).argmax(dim=1)
        return actions, log_probs.gather(1, actions[:, None]).squeeze(1), values

    def evaluate(
        self,
        features: torch.Tensor,
        mask: torch.Tensor,
        actions: torch.Tensor,
        moves: MoveInputs | None = None,
        hidden: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(log-probabilities of ``actions``, entropies, values) from encoded features: the PPO update.

        ``hidden``: the hidden tiles, whose privileged critic then gives the values.
        Written out instead of through ``Categorical``: illegal actions have
        probability 0 and a finite log-probability, so ``p * log p`` is 0 there.
        """
        logits, values = self.heads(features, mask, moves)
        if hidden is not None:
            values = self.critic_value(features, hidden)
        log_probs = logits.log_softmax(dim=1)
        entropy = -(log_probs.exp() * log_probs).sum(dim=1)
        return log_probs.gather(1, actions[:, None]).squeeze(1), entropy, values


class AveragedNetworks(nn.Module):
    """Several networks of one architecture playing as one: each legal move's logit is the mean of
    theirs, and so is the value.

    With ``distill.target: values`` a logit times the temperature is the network's estimate of the
    move's value, each network's estimate carrying its own error (its labels' noise, its init); the
    mean of K estimates has less of it, which no single run's weights can get by averaging (their
    hidden units do not line up). The move features are computed once for all of them.
    """

    def __init__(self, members: list[ActorCritic]) -> None:
        super().__init__()
        if len(members) < 2:
            raise ValueError(f"averaging needs at least two networks, got {len(members)}")
        self.members = nn.ModuleList(members)
        self.rules = members[0].rules
        self.uses_move_features = members[0].uses_move_features
        self.after_state = members[0].after_state

    def move_inputs(self, obs: torch.Tensor, mask: torch.Tensor) -> MoveInputs | None:
        return self.members[0].move_inputs(obs, mask)

    def forward(
        self, obs: torch.Tensor, mask: torch.Tensor, moves: MoveInputs | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(masked mean logits (B, A), mean values (B,)), as ``ActorCritic.forward``."""
        if moves is None:
            moves = self.move_inputs(obs, mask)
        features = self.members[0].encoder(obs)  # the encoder has no weights: the same for every member
        heads = [member.heads(features, mask, moves) for member in self.members]
        # Illegal moves' logits (the dtype's minimum) would overflow a sum: they count as 0, then stay masked.
        mean = sum(torch.where(mask, logits, 0.0) for logits, _ in heads) / len(heads)
        values = sum(values for _, values in heads) / len(heads)
        return mean.masked_fill(~mask, torch.finfo(mean.dtype).min), values


def build_network(rules: Rules, model: Mapping[str, Any]) -> ActorCritic:
    """The network a config's ``model`` section (or a checkpoint's copy of it) describes; settings a
    checkpoint predates take the value that reproduces its network."""
    return ActorCritic(
        rules,
        tuple(model["hidden"]),
        model.get("move_features", False),
        model.get("privileged_critic", False),
        model.get("after_state", False),
        model.get("move_hidden", MOVE_HIDDEN),
    )


def _tanh_layers(width: int, hidden: tuple[int, ...]) -> tuple[nn.Sequential, int]:
    """(Linear + tanh layers of the ``hidden`` widths from ``width`` inputs, their output width);
    orthogonal init with gain sqrt 2, as CleanRL's."""
    layers: list[nn.Module] = []
    for size in hidden:
        layers += [_orthogonal(nn.Linear(width, size), 2**0.5), nn.Tanh()]
        width = size
    return nn.Sequential(*layers), width


def _orthogonal(layer: nn.Linear, gain: float) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer
