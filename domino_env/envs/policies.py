"""Policies for the seats a learner does not play, and the contract they share.

A policy is any callable ``policy(obs, mask) -> actions``:

* ``obs``: ``(B, obs_size)`` int16, each row the seat-relative observation of the
  seat to move (docs/engine.md; the seat itself is relative seat 0);
* ``mask``: ``(B, num_actions)`` bool, that seat's legal actions (at least one per row);
* returns ``(B,)`` integer actions, one legal action per row.

It is batched because the environments call it once for every game whose seat
it plays; a single game passes ``B = 1``. The environments know nothing about a
policy beyond this contract, so heuristic bots and trained networks plug in the
same way as the two policies here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from domino_env.engine import kernels

Policy = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``policy(obs (B, obs_size) int16, mask (B, num_actions) bool) -> (B,) int actions``."""


def call_policy(policy: Policy, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Run a policy and check that it kept the contract (legality is checked when played)."""
    actions = np.asarray(policy(obs, mask))
    if actions.shape != (len(obs),) or not np.issubdtype(actions.dtype, np.integer):
        raise ValueError(
            f"a policy must return ({len(obs)},) integer actions, got {actions.dtype} {actions.shape}"
        )
    return actions


def act_per_policy(
    policies: Sequence[Policy],
    owner: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    actions: np.ndarray,
    call: Callable[[int, np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None,
) -> None:
    """Each policy acts on its own rows in one batched call: the loop every multi-policy caller runs.

    ``actions[k]`` of each row with ``owner[k] == i`` comes from ``policies[i]``; rows owned by
    -1 keep their action. ``call(i, rows, obs[rows], mask[rows])``, when given, replaces the
    plain checked call (the arena times each policy and shows a cheating one the hidden state
    first).
    """
    for index, policy in enumerate(policies):
        rows = np.flatnonzero(owner == index)
        if len(rows):
            if call is None:
                actions[rows] = call_policy(policy, obs[rows], mask[rows])
            else:
                actions[rows] = call(index, rows, obs[rows], mask[rows])


def sample_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``mask`` (int64), in one compiled pass.

    Row i takes its legal action of rank ``floor(u_i * count_i)``, ``u = rng.random(rows)``.
    """
    return _pick_legal(mask, rng.random(len(mask)))


def sample_legal_seeded(mask: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """``sample_legal`` with row i's uniform drawn from ``seeds[i]`` (uint64) alone.

    A row's action then depends on its own seed, never on the other rows of the call: what
    the arena needs for a result that does not depend on how its games are batched or sharded.
    """
    seeds = np.asarray(seeds, dtype=np.uint64)
    if seeds.shape != (len(mask),):
        raise ValueError(f"seeds must be one per row of the mask ({len(mask)}), got shape {seeds.shape}")
    return _pick_legal(mask, (mix64(seeds) >> np.uint64(11)) * 2.0**-53)


def mix64(values: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser of uint64 ``values``: close values come out unrelated (a new array)."""
    z = values ^ (values >> np.uint64(30))
    z *= np.uint64(0xBF58476D1CE4E5B9)
    z ^= z >> np.uint64(27)
    z *= np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _pick_legal(mask: np.ndarray, uniform: np.ndarray) -> np.ndarray:
    """Row i's legal action of rank ``floor(uniform[i] * count_i)``."""
    mask = np.ascontiguousarray(mask, dtype=bool)
    if mask.ndim != 2:
        raise ValueError(f"mask must be 2-D (rows, num_actions), got shape {mask.shape}")
    actions = np.empty(len(mask), dtype=np.int64)
    empty = kernels.pick_from_mask(mask, uniform, actions)
    if empty >= 0:
        raise ValueError(f"row {empty} of the mask has no legal action")
    return actions


class RandomPolicy:
    """A policy playing a uniformly random legal action, from its own seeded generator.

    Environments recognise it and play it inside the core (``DominoCore.play_random``)
    instead of calling it with observations.
    """

    def __init__(self, seed: int | np.random.Generator | None = None) -> None:
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return sample_legal(mask, self.rng)


def random_policy(seed: int | np.random.Generator | None = None) -> RandomPolicy:
    """A policy playing a uniformly random legal action, from its own seeded generator."""
    return RandomPolicy(seed)


def first_legal_policy(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The legal action with the smallest index: a deterministic baseline (and the easiest to test with)."""
    actions = mask.argmax(axis=1)
    if not mask[np.arange(len(mask)), actions].all():
        raise ValueError("a row of the mask has no legal action")
    return actions
