"""Rendering: PettingZoo's render test for every preset, the text and image pictures, PNG files."""

from __future__ import annotations

import functools
import random
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import render_test

from domino_env.engine.game import Game
from domino_env.engine.reference import Round
from domino_env.engine.rules import Rules, all_configurations
from domino_env.engine.tiles import tile_name
from domino_env.envs.pettingzoo_env import env, raw_env
from domino_env.tools.render import (
    HEIGHT,
    INK,
    TABLE_HEIGHT,
    WIDTH,
    _draw_tile,
    png_bytes,
    render_image,
    render_text,
)

ROOT = Path(__file__).resolve().parent.parent


def played(preset: str, players: int, seed: int, moves: int) -> Game:
    """A game after up to ``moves`` random moves (fewer if the round ends)."""
    game, chooser = Game(Rules.preset(preset, players), seed=seed), random.Random(seed)
    for _ in range(moves):
        if game.over:
            break
        game.step(chooser.choice(game.legal_actions()))
    return game


@pytest.mark.parametrize(("preset", "players"), all_configurations())
def test_pettingzoo_render_test(preset: str, players: int, capsys) -> None:
    render_test(functools.partial(env, preset=preset, players=players))
    assert "scores:" in capsys.readouterr().out  # human mode printed the table


def test_ansi_shows_the_table_and_only_the_viewers_hand() -> None:
    aec = raw_env(preset="block", players=3, render_mode="ansi")
    aec.reset(seed=1)
    chooser = random.Random(1)
    for _ in range(4):
        aec.step(chooser.choice(aec.game.legal_actions()))
    text = aec.render()
    seat = aec.game.to_play
    hand = [tile_name(t).replace("-", "|") for t in sorted(aec.game.reference_round().hands[seat])]
    lines = text.splitlines()
    own = next(line for line in lines if line.startswith(f"> seat {seat} "))
    assert all(f"[{t}]" in own for t in hand)
    others = [line for line in lines if "seat" in line and not line.startswith(">") and "(" in line]
    assert len(others) == 2 and all("[" not in line.split(":", 1)[1] for line in others)
    assert "ends: left" in text and "scores: seat 0 0, seat 1 0, seat 2 0" in text
    assert "(empty table)" not in text and len(aec.game.reference_round().table) == 4
    aec.render_viewer = "all"
    assert sum("[" in line.split(":", 1)[-1] for line in aec.render().splitlines() if "seat" in line) == 3
    aec.render_viewer = 0
    assert next(line for line in aec.render().splitlines() if line[2:].startswith("seat 0 ")).count("[") > 0


def test_ansi_draws_the_spinner_arms() -> None:
    rnd = next(
        rnd
        for rnd in (played("all_fives", 2, seed, 14).reference_round() for seed in range(200))
        if rnd.arms["up"] and rnd.arms["down"] and not rnd.over
    )
    table = render_text(rnd, viewer=0).split("\n\n")[0].splitlines()
    middle = next(i for i, row in enumerate(table) if "├─┤" in row)  # doubles cross the line's middle row
    above, below = table[: middle - 1], table[middle + 2 :]
    assert len(above) >= len(rnd.arms["up"]) and len(below) >= len(rnd.arms["down"])
    crossings = [c + 1 for c in range(len(table[middle])) if table[middle].startswith("├─┤", c)]
    spinner_column = [c for c in crossings if all(len(row) > c and row[c] != " " for row in above + below)]
    assert spinner_column  # every arm row has a tile at the spinner's column


def test_rgb_array_is_an_image_of_the_table() -> None:
    aec = raw_env(preset="all_fives", players=3, render_mode="rgb_array")
    aec.reset(seed=2)
    empty = aec.render()
    assert empty.shape == (HEIGHT, WIDTH, 3) and empty.dtype == np.uint8
    chooser = random.Random(2)
    for _ in range(5):
        aec.step(chooser.choice(aec.game.legal_actions()))
    later = aec.render()
    ink = np.all(later[:TABLE_HEIGHT] == INK, axis=2).sum()
    assert ink > np.all(empty[:TABLE_HEIGHT] == INK, axis=2).sum() + 100  # tiles and pips appeared
    seat = aec.game.to_play
    aec.render_viewer = (seat + 1) % 3
    other_view = aec.render()
    assert np.array_equal(other_view[:TABLE_HEIGHT], later[:TABLE_HEIGHT])
    assert not np.array_equal(other_view[TABLE_HEIGHT:], later[TABLE_HEIGHT:])  # another hand face up


def test_each_number_is_drawn_with_its_pips() -> None:
    ink = []
    for n in range(7):
        canvas = np.zeros((80, 160, 3), dtype=np.uint8)
        _draw_tile(canvas, 0, 0, 160, 80, (n, 0))
        left_half = canvas[8:72, 8:72]
        ink.append(int(np.all(left_half == INK, axis=2).sum()))
    assert ink[0] == 0
    assert all(ink[n + 1] > ink[n] for n in range(6))
    assert ink[6] == pytest.approx(6 * ink[1], rel=0.1)


def test_png_bytes_decode_to_the_same_pixels() -> None:
    image = render_image(played("partnership", 4, 0, 9).reference_round(), viewer=None)
    data = png_bytes(image)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (WIDTH, HEIGHT)
    length = struct.unpack(">I", data[33:37])[0]
    assert data[37:41] == b"IDAT"
    rows = np.frombuffer(zlib.decompress(data[41 : 41 + length]), dtype=np.uint8).reshape(
        HEIGHT, 1 + 3 * WIDTH
    )
    assert (rows[:, 0] == 0).all()
    assert np.array_equal(rows[:, 1:].reshape(HEIGHT, WIDTH, 3), image)


def test_human_mode_prints_and_returns_nothing(capsys) -> None:
    aec = raw_env(preset="block", players=2, render_mode="human")
    aec.reset(seed=0)
    assert aec.render() is None
    assert "seat 0" in capsys.readouterr().out
    aec.step(aec.game.legal_actions()[0])
    assert "seat 1" in capsys.readouterr().out  # every step prints the table


def test_render_text_of_a_reference_round_still_works() -> None:
    rnd = Round(Rules.preset("block", 2), [list(range(7)), list(range(7, 14))], list(range(14, 28)), opener=0)
    assert "(empty table)" in render_text(rnd)
    rnd.step(rnd.legal_actions()[-1])
    assert "[6|0]" in render_text(rnd, viewer=1)


def test_render_examples_script_writes_one_png_per_family(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "render_examples.py"), "--out", str(tmp_path)], check=True
    )
    names = sorted(path.name for path in tmp_path.iterdir())
    assert names == ["table_all_fives_3p.png", "table_block_2p.png", "table_partnership_4p.png"]
    assert all((tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for name in names)
