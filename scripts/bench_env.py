"""Environment speed: random legal play through every engine and environment.

``core``: the vectorised core (compiled kernels); every step builds the legal mask
and the observation of the seat to move, picks a uniformly random legal action per game and steps the
batch. Throughput counts agent moves (placements); automatic draws and passes are
not moves. ``reference`` and ``game``: the one-game engines, observation read every
move. ``openspiel``: OpenSpiel's ``python_block_dominoes`` when installed (2p block
only), legal actions and observation tensor every move. ``aec`` / ``aec-raw``: the
PettingZoo env through ``env()`` (its wrappers) or ``raw_env``, random legal agents,
steps/s. ``vector``: the native Gymnasium vector env, random opponents and a random
legal learner, learner steps/s.

    python scripts/bench_env.py                                  # 2p block, N=8192
    python scripts/bench_env.py --all --seconds 2                # every preset x players
    python scripts/bench_env.py --preset spanish_pairs --players 4 --num-envs 65536 --json
    python scripts/bench_env.py --engines aec aec-raw vector --vector-envs 4096
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from domino_env.benchmark import Measurement, bench_core, bench_openspiel, bench_reference, format_table
from domino_env.env_benchmarks import bench_aec, bench_game
from domino_env.rules import PRESET_NAMES, PRESET_PLAYERS, Rules
from domino_env.vector_benchmark import bench_vector


def configurations(args: argparse.Namespace) -> list[tuple[str, int]]:
    """(preset, players) pairs to measure: --all, or --preset x --players (default: smallest count)."""
    if args.all:
        return [(name, p) for name in PRESET_NAMES for p in PRESET_PLAYERS[name]]
    chosen = []
    for name in args.preset:
        for p in args.players or [PRESET_PLAYERS[name][0]]:
            if p not in PRESET_PLAYERS[name]:
                raise SystemExit(
                    f"error: preset {name!r} is played by {PRESET_PLAYERS[name]} players, not {p}"
                )
            chosen.append((name, p))
    return chosen


ENGINES = ("core", "reference", "openspiel", "game", "aec", "aec-raw", "vector")


def measure(engine: str, rules: Rules, args: argparse.Namespace) -> list[Measurement]:
    """The rows one engine contributes for one rule set (none when it does not apply)."""
    seconds, seed = args.seconds, args.seed
    if engine == "core":
        return [bench_core(rules, n, seconds, seed) for n in args.num_envs]
    if engine == "reference":
        return [bench_reference(rules, seconds, seed)]
    if engine == "openspiel":
        spiel = bench_openspiel(seconds, seed) if (rules.name, rules.players) == ("block", 2) else None
        return [spiel] if spiel else []
    if engine == "game":
        return [
            Measurement(
                "game (one-game engine)",
                rules.name,
                rules.players,
                1,
                0,
                seconds,
                bench_game(rules, seconds=seconds, seed=seed),
            )
        ]
    if engine in ("aec", "aec-raw"):
        wrapped = engine == "aec"
        label = "pettingzoo env() (wrapped)" if wrapped else "pettingzoo raw_env"
        rate = bench_aec(rules, seconds=seconds, seed=seed, wrapped=wrapped)
        return [Measurement(label, rules.name, rules.players, 1, 0, seconds, rate)]
    return [
        Measurement(
            "vector env (learner steps)",
            rules.name,
            rules.players,
            n,
            0,
            seconds,
            bench_vector(rules.name, rules.players, n, seconds, seed),
        )
        for n in args.vector_envs
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", nargs="+", default=["block"], choices=PRESET_NAMES)
    parser.add_argument("--players", nargs="+", type=int, help="default: the preset's smallest player count")
    parser.add_argument("--num-envs", nargs="+", type=int, default=[8192], help="batch sizes of the core")
    parser.add_argument("--vector-envs", nargs="+", type=int, default=[4096], help="sizes of the vector env")
    parser.add_argument("--seconds", type=float, default=3.0, help="timed seconds per measurement")
    parser.add_argument("--all", action="store_true", help="every preset and player count")
    parser.add_argument("--engines", nargs="+", choices=ENGINES, default=["core", "reference", "openspiel"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args(argv)
    rows: list[Measurement] = []
    for name, players in configurations(args):
        rules = Rules.preset(name, players)
        for engine in args.engines:
            rows += measure(engine, rules, args)
            print(f"measured {engine} {name} {players}p", file=sys.stderr)
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
