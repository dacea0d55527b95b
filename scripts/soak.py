"""Soak test: the core against the reference engine, move for move, for as long as asked.

Cycles through every preset and player count (or the ones given), in round and
match mode, with a fresh seed each pass; prints a progress line per pass with the
rate and time left, and stops at the first disagreement with the seed that
reproduces it.

    python scripts/soak.py --minutes 30
    python scripts/soak.py --minutes 5 --preset all_fives --players 3
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time

from domino_env.engine.rules import PRESET_NAMES, Rules, all_configurations
from domino_env.tools.crosscheck import CrossCheck, Disagreement


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--preset", nargs="+", choices=PRESET_NAMES, help="default: every preset")
    parser.add_argument("--players", nargs="+", type=int, help="default: every allowed count")
    parser.add_argument("--num-games", type=int, default=64, help="games checked side by side")
    parser.add_argument("--steps", type=int, default=200, help="batched steps per pass")
    parser.add_argument("--seed", type=int, default=0, help="first seed; each pass uses the next")
    args = parser.parse_args(argv)

    configs = [
        (name, p)
        for name, p in all_configurations()
        if (not args.preset or name in args.preset) and (not args.players or p in args.players)
    ]
    if not configs:
        parser.error("no preset/player combination matches")
    deadline = time.monotonic() + 60 * args.minutes
    start = time.monotonic()
    totals = {"moves": 0, "rounds": 0, "games": 0}
    for seed, ((name, players), mode) in zip(
        itertools.count(args.seed), itertools.cycle(itertools.product(configs, ("round", "match")))
    ):
        if time.monotonic() >= deadline:
            break
        check = CrossCheck(Rules.preset(name, players), args.num_games, seed=seed, episode=mode)
        try:
            stats = check.run(args.steps)
        except Disagreement as error:
            print(f"DISAGREEMENT {name} {players}p mode={mode} seed={seed}: {error}", file=sys.stderr)
            return 1
        for key in totals:
            totals[key] += getattr(stats, key)
        elapsed = time.monotonic() - start
        left = max(deadline - time.monotonic(), 0)
        print(
            f"{name:>13} {players}p {mode:<5} seed {seed:<5} ok | total {totals['moves']:,} moves, "
            f"{totals['rounds']:,} rounds, {totals['games']:,} games | "
            f"{totals['moves'] / elapsed:,.0f} moves/s | {left / 60:.1f} min left",
            flush=True,
        )
    print(f"no disagreement in {totals['rounds']:,} rounds ({totals['moves']:,} moves)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
