"""Render one example table per preset family as PNG images (for the README).

Each example plays a seeded round with random legal moves until the table shows
what sets the family apart (a long line; the spinner with both short arms in use;
four seats in two teams), then draws it from the seat to move's point of view.

    python scripts/render_examples.py                 # writes docs/images/*.png
    python scripts/render_examples.py --out /tmp/pics
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable
from pathlib import Path

from domino_env.engine.game import Game
from domino_env.engine.reference import Round
from domino_env.engine.rules import Rules
from domino_env.tools.render import png_bytes, render_image

ROOT = Path(__file__).resolve().parent.parent


def long_line(rnd: Round) -> bool:
    return len(rnd.table) >= 9


def spinner_arms_in_use(rnd: Round) -> bool:
    return bool(rnd.arms["up"]) and bool(rnd.arms["down"]) and len(rnd.table) >= 10


EXAMPLES: dict[str, tuple[str, int, Callable[[Round], bool]]] = {
    "table_block_2p": ("block", 2, long_line),
    "table_all_fives_3p": ("all_fives", 3, spinner_arms_in_use),
    "table_partnership_4p": ("partnership", 4, long_line),
}
"""File name -> (preset, players, when the position is worth showing)."""


def example_position(preset: str, players: int, wanted: Callable[[Round], bool]) -> Round:
    """The first position of seeds 0, 1, ... where ``wanted`` holds, before the round ends."""
    for seed in range(1000):
        game, chooser = Game(Rules.preset(preset, players), seed=seed), random.Random(seed)
        while not game.over:
            rnd = game.reference_round()
            if wanted(rnd):
                return rnd
            game.step(chooser.choice(game.legal_actions()))
    raise RuntimeError(f"no seed below 1000 gives a {preset} position worth showing")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images", help="output folder")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, (preset, players, wanted) in EXAMPLES.items():
        rnd = example_position(preset, players, wanted)
        path = args.out / f"{name}.png"
        path.write_bytes(png_bytes(render_image(rnd, viewer=rnd.to_play)))
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
