"""Decision time of the search bot, one game at a time (no batching to hide behind).

The search bot plays the even seats against ``strong`` for ``--rounds`` rounds of
each preset, called with one observation per decision; forced moves (one legal
action) count too, as they do for a player. Prints mean, median, p95 and max.

    python scripts/bench_search.py                       # pimc at its default budget
    python scripts/bench_search.py --bot pimc --option samples=48
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import yaml

from agents.bots.registry import make_bot
from domino_env import DominoCore, Rules

PRESETS = (("block", 2), ("draw", 2), ("all_fives", 2), ("partnership", 4))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bot", default="pimc")
    parser.add_argument("--option", action="append", default=[], help="constructor option key=value")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    options = {key: yaml.safe_load(value) for key, value in (o.split("=", 1) for o in args.option)}
    for preset, players in PRESETS:
        rules = Rules.preset(preset, players)
        bot = make_bot(args.bot, rules, seed=0, **options)
        opponent = make_bot("strong", rules)
        core = DominoCore(rules, 1, seed=args.seed)
        times, rounds = [], 0
        while rounds < args.rounds:
            obs, mask = core.observe(), core.legal_mask()
            if core.to_play[0] % 2 == 0:
                start = time.perf_counter()
                action = bot(obs, mask)
                times.append(time.perf_counter() - start)
            else:
                action = opponent(obs, mask)
            rounds += int(core.step(action).round_over[0])
        ms = 1000 * np.array(times)
        print(
            f"{preset} {players}p: {len(ms)} decisions, mean {ms.mean():.1f} ms, median {np.median(ms):.1f}, "
            f"p95 {np.percentile(ms, 95):.1f}, max {ms.max():.1f}"
        )


if __name__ == "__main__":
    main()
