"""Speed measurements shared by ``scripts/bench_env.py`` and the demo.

Each function plays random legal moves with the legal actions and the
observation of the seat to move built every move, and counts agent moves
(placements); automatic draws and passes are not moves.
"""

from __future__ import annotations

import random
import time
import tracemalloc
from dataclasses import dataclass

import numpy as np

from .core import DominoCore
from .deals import random_deals
from .reference import Round, deal_to_hands
from .rules import CHANCE_OPENERS, Rules


@dataclass
class Measurement:
    engine: str
    preset: str
    players: int
    num_envs: int
    moves: int
    seconds: float
    moves_per_sec: float
    peak_memory_mib: float | None = None


def bench_core(rules: Rules, num_envs: int, seconds: float, seed: int) -> Measurement:
    """Moves/s of the batched core with mask + observation every step, and its peak memory."""
    warm = DominoCore(rules, 1, seed=seed)  # loads (or compiles) the kernels outside the count
    warm.step(warm.random_actions())
    tracemalloc.start()
    core = DominoCore(rules, num_envs, seed=seed)
    for _ in range(3):
        core.legal_mask(), core.observe()
        core.step(core.random_actions())
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    steps, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(10):
            core.legal_mask()
            core.observe()
            core.step(core.random_actions())
        steps += 10
    moves = steps * num_envs
    return Measurement("core", rules.name, rules.players, num_envs, moves, elapsed, moves / elapsed, peak)


def bench_reference(rules: Rules, seconds: float, seed: int) -> Measurement:
    """Moves/s of the one-game reference engine (legal actions + observation every move)."""
    rng = np.random.default_rng(seed)
    chooser = random.Random(seed)
    moves, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for deal in random_deals(rules, 64, rng):
            hands, boneyard = deal_to_hands(rules, deal)
            needs_opener = rules.first_opener in CHANCE_OPENERS
            game = Round(
                rules, hands, boneyard, opener=chooser.randrange(rules.players) if needs_opener else None
            )
            while not game.over:
                game.observation(game.to_play)
                game.step(chooser.choice(game.legal_actions()))
                moves += 1
    return Measurement("reference", rules.name, rules.players, 1, moves, elapsed, moves / elapsed)


def bench_openspiel(seconds: float, seed: int) -> Measurement | None:
    """Moves/s of OpenSpiel's python_block_dominoes, or None when it is not installed."""
    try:
        import pyspiel
        from open_spiel.python.games import block_dominoes  # noqa: F401  (registers the game)
    except ImportError:
        return None
    game = pyspiel.load_game("python_block_dominoes")
    chooser = random.Random(seed)
    moves, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(chooser.choices(outcomes, probs)[0])
                continue
            state.observation_tensor(state.current_player())
            state.apply_action(chooser.choice(state.legal_actions()))
            moves += 1
    return Measurement("open_spiel python_block_dominoes", "block", 2, 1, moves, elapsed, moves / elapsed)


def format_table(rows: list[Measurement]) -> str:
    header = f"{'engine':<34} {'preset':<14} {'players':>7} {'num_envs':>9} {'moves/s':>14} {'peak MiB':>9}"
    lines = [header, "-" * len(header)]
    for r in rows:
        memory = f"{r.peak_memory_mib:9.1f}" if r.peak_memory_mib is not None else f"{'':>9}"
        lines.append(
            f"{r.engine:<34} {r.preset:<14} {r.players:>7} {r.num_envs:>9} {r.moves_per_sec:>14,.0f} {memory}"
        )
    return "\n".join(lines)
