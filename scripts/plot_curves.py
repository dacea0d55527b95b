"""Plot the arena learning curves of training runs (points per round vs each eval bot, 95% CI bands).

    python scripts/plot_curves.py runs/quickstart --out curves.png
    python scripts/plot_curves.py runs/quickstart runs/block --out compare.png --x wall_time
    python scripts/plot_curves.py runs/draw_playouts --distill --out rounds.png   # per distillation round

Reads the TensorBoard event files ``scripts/train.py`` writes to ``runs/<name>/``
(``agents.training.curves``); one line per run, one panel per eval opponent.
"""

from __future__ import annotations

import argparse
import sys

from agents.training.curves import plot_learning_curves


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="run folders (runs/<name>)")
    parser.add_argument("--out", required=True, help="PNG file to write")
    parser.add_argument("--x", choices=("step", "wall_time"), default="step", help="x axis (default: step)")
    parser.add_argument("--opponents", nargs="+", help="eval bots to show (default: all)")
    parser.add_argument(
        "--distill",
        action="store_true",
        help="the evaluations after each distillation round (distill.evaluate)",
    )
    args = parser.parse_args(argv)
    section = "distill_eval" if args.distill else "eval"
    try:
        plot_learning_curves(args.run_dirs, args.out, x=args.x, opponents=args.opponents, section=section)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
