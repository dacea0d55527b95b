"""Tune the ``strong`` bot's weights for one rule family by coordinate ascent in the duplicate arena.

The objective is the worst paired difference (points per round, over ``--deals``
seeded duplicate deals) of the candidate against every simpler heuristic bot,
so the weights that come out beat each of them, not just their average. The
deals are fixed for the whole search (common random numbers); check the result
on fresh deals with ``scripts/evaluate.py``.

    python scripts/tune_strong.py --preset block --players 2 --deals 3000
"""

from __future__ import annotations

import argparse

import numpy as np

from agents.arena.duplicate import duplicate_deals, play, rotations
from agents.arena.stats import paired_difference, seated
from agents.arena.tournament import seatings
from agents.bots.heuristic import FEATURES, STRONG_WEIGHTS, StrongBot, family
from agents.bots.registry import make_bot
from domino_env.engine.rules import Rules

POOL = ("heaviest", "doubles", "diverse", "blocker", "fives")
STEPS = (-1.0, -0.5, 0.5, 1.0)


def objective(rules: Rules, weights: np.ndarray, deals: np.ndarray, openers: np.ndarray) -> np.ndarray:
    """Paired difference of ``strong(weights)`` against each bot of ``POOL``."""
    bots = [StrongBot(rules, weights=tuple(weights))] + [make_bot(name, rules) for name in POOL]
    pairs = [(0, j) for j in range(1, len(bots))]
    tables, table_pair = seatings(rotations(rules), pairs)
    run = seated(rules, play(rules, bots, tables, deals, openers), tables, table_pair)
    return np.array([paired_difference(run, k, 0, j, len(deals))[0] for k, (_, j) in enumerate(pairs)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="block")
    parser.add_argument("--players", type=int, default=None)
    parser.add_argument("--deals", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3, help="passes over the weights")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--start", help="comma-separated starting weights (default: the current table)")
    args = parser.parse_args()
    rules = Rules.preset(args.preset, args.players)
    deals, openers = duplicate_deals(rules, args.deals, args.seed)
    start = STRONG_WEIGHTS[family(rules)] if args.start is None else args.start.split(",")
    weights = np.array(start, dtype=float)
    scores = objective(rules, weights, deals, openers)
    print(f"start {scores.min():+.3f} {np.round(scores, 2)}")
    for sweep in range(args.rounds):
        scale = 0.5**sweep
        for i, name in enumerate(FEATURES):
            for step in STEPS:
                trial = weights.copy()
                trial[i] += step * scale * max(1.0, abs(weights[i]))
                trial_scores = objective(rules, trial, deals, openers)
                if trial_scores.min() > scores.min():
                    weights, scores = trial, trial_scores
                    print(f"{name} -> {weights[i]:.3f}: {scores.min():+.3f} {np.round(scores, 2)}")
    print(f'"{family(rules)}": ({", ".join(f"{w:.3g}" for w in weights)}),')


if __name__ == "__main__":
    main()
