"""Environment speed: random legal play through the vectorised core.

Every step builds the legal mask and the observation of the seat to move, picks a
uniformly random legal action per game and steps the batch. Throughput counts
agent moves (placements); automatic draws and passes are not moves. The same run
also times the one-game reference engine and, when ``open_spiel`` is installed,
OpenSpiel's ``python_block_dominoes`` (2-player block only), each with its legal
actions and observation built every move.

    python scripts/bench_env.py                                  # 2p block, N=8192
    python scripts/bench_env.py --all --seconds 2                # every preset x players
    python scripts/bench_env.py --preset spanish_pairs --players 4 --num-envs 65536 --json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import tracemalloc
from dataclasses import asdict, dataclass

import numpy as np

from domino_env.core import DominoCore
from domino_env.reference import Round, deal_to_hands
from domino_env.rules import PRESET_NAMES, PRESET_PLAYERS, Rules
from domino_env.deals import random_deals


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
            needs_opener = rules.first_opener in ("lots", "random")
            game = Round(rules, hands, boneyard, opener=chooser.randrange(rules.players) if needs_opener else None)
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
                outcomes, probs = zip(*state.chance_outcomes())
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


def configurations(args: argparse.Namespace) -> list[tuple[str, int]]:
    """(preset, players) pairs to measure: --all, or --preset x --players (default: smallest count)."""
    if args.all:
        return [(name, p) for name in PRESET_NAMES for p in PRESET_PLAYERS[name]]
    chosen = []
    for name in args.preset:
        for p in args.players or [PRESET_PLAYERS[name][0]]:
            if p not in PRESET_PLAYERS[name]:
                raise SystemExit(f"error: preset {name!r} is played by {PRESET_PLAYERS[name]} players, not {p}")
            chosen.append((name, p))
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", nargs="+", default=["block"], choices=PRESET_NAMES)
    parser.add_argument("--players", nargs="+", type=int, help="default: the preset's smallest player count")
    parser.add_argument("--num-envs", nargs="+", type=int, default=[8192])
    parser.add_argument("--seconds", type=float, default=3.0, help="timed seconds per configuration")
    parser.add_argument("--all", action="store_true", help="every preset and player count")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-reference", action="store_true", help="skip the reference engine")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args(argv)
    rows: list[Measurement] = []
    for name, players in configurations(args):
        rules = Rules.preset(name, players)
        for n in args.num_envs:
            rows.append(bench_core(rules, n, args.seconds, args.seed))
            print(f"measured core {name} {players}p N={n}", file=sys.stderr)
        if not args.no_reference:
            rows.append(bench_reference(rules, args.seconds, args.seed))
        if (name, players) == ("block", 2):
            spiel = bench_openspiel(args.seconds, args.seed)
            if spiel is not None:
                rows.append(spiel)
    if args.json:
        out = {f"{r.engine}/{r.preset}/{r.players}p/N={r.num_envs}": asdict(r) for r in rows}
        print(json.dumps(out, indent=2))
    else:
        print(format_table(rows))
        spiel = next((r for r in rows if r.engine.startswith("open_spiel")), None)
        core = next((r for r in rows if r.engine == "core" and (r.preset, r.players) == ("block", 2)), None)
        if spiel and core:
            print(f"\ncore / OpenSpiel (2p block): {core.moves_per_sec / spiel.moves_per_sec:,.0f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
