"""Environment speed: random legal play through every engine and environment.

The engines (``domino_env.tools.benchmark``, whose docstring says what each counts): ``core``
(the vectorised core, compiled kernels; moves/s and peak memory), ``reference`` and
``game`` (the one-game engines), ``openspiel`` (OpenSpiel's ``python_block_dominoes``
when installed, 2p block only), ``aec`` / ``aec-raw`` (the PettingZoo env through
``env()`` or ``raw_env``, steps/s), ``vector`` (the native Gymnasium vector env, learner
steps/s). Legal actions and the observation of the seat to move are built every move.

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

from domino_env.engine.rules import PRESET_NAMES, PRESET_PLAYERS, Rules
from domino_env.tools.benchmark import ENGINES, Measurement, format_table, measure


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
            rows += measure(engine, rules, args.seconds, args.seed, args.num_envs, args.vector_envs)
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
