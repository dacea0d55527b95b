"""Speed of ``DominoVectorEnv``: learner steps per second with random opponents.

A learner step is one action of one game's learner; every ``env.step`` is
``num_envs`` of them, together with all the opponent moves, draws, passes, round
ends and resets they lead to, and the learner's next observation and legal mask.
The learner itself plays uniformly random legal actions drawn, batched, from the
mask in ``infos["action_mask"]``, so the figure is the environment's cost, not a
network's.
"""

from __future__ import annotations

import time

import numpy as np

from .policies import sample_legal
from .vector_env import DominoVectorEnv

WARM_UP_STEPS = 3


def bench_vector(preset: str, players: int, num_envs: int, seconds: float, seed: int) -> float:
    """Learner steps per second of ``DominoVectorEnv(num_envs, preset, players)`` over ``seconds``."""
    envs = DominoVectorEnv(num_envs, preset, players)
    rng = np.random.default_rng(seed)
    _, infos = envs.reset(seed=seed)
    for _ in range(WARM_UP_STEPS):
        *_, infos = envs.step(sample_legal(infos["action_mask"], rng))
    steps, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        *_, infos = envs.step(sample_legal(infos["action_mask"], rng))
        steps += 1
    return steps * num_envs / elapsed
