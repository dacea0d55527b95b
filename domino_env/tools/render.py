"""Pictures of a reference round: the line of play, the ends, hands and scores.

``render_text`` draws text: doubles lie crosswise (drawn over three rows across
the line); the spinner's short arms hang above (``up``) and below (``down``) it,
tile by tile. ``render_image`` draws the same table as an RGB array with pips
(NumPy only), and ``png_bytes`` encodes such an array as a PNG file.

    print(render_text(round_, viewer=0))
    Path("table.png").write_bytes(png_bytes(render_image(round_, viewer=0)))
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

import numpy as np

from domino_env.engine.reference import OPENING, Round
from domino_env.engine.rules import Rules
from domino_env.engine.tiles import TILES, tile_name

_CROSS = ("┌{}┐", "├─┤", "└{}┘")


Place = tuple[str, int]
"""Where a tile lies: (arm, index out from the opening tile), or ("opening", 0)."""


def _line_tiles(rnd: Round) -> list[tuple[int, int, Place]]:
    """The main line left to right as (left number, right number, place)."""
    left = rnd.arms.get("left", [])
    tiles = [(outer, inner, ("left", i)) for i, (inner, outer) in reversed(list(enumerate(left)))]
    if rnd.opening is not None:
        tiles.append((rnd.opening[0], rnd.opening[1], (OPENING, 0)))
    tiles += [(inner, outer, ("right", i)) for i, (inner, outer) in enumerate(rnd.arms.get("right", []))]
    return tiles


def _spinner_index(rnd: Round, line: list[tuple[int, int, Place]]) -> int | None:
    """Position of the spinner in the main line (None without a spinner)."""
    if rnd.spinner is None:
        return None
    arm, index = rnd.spinner_place
    if arm == "opening":
        return len(rnd.arms.get("left", []))
    if arm == "left":
        return len(rnd.arms["left"]) - 1 - index
    return len(rnd.arms.get("left", [])) + (rnd.opening is not None) + index


def render_line(rnd: Round) -> str:
    """The table: three rows for the line (doubles crosswise) plus the spinner's arms."""
    line = _line_tiles(rnd)
    if not line:
        return "(empty table)"
    rows = ["", "", ""]
    columns = []
    for a, b, _ in line:
        columns.append(len(rows[1]))
        if a == b:
            for r, shape in enumerate(_CROSS):
                rows[r] += shape.format(a)
        else:
            rows[0] += " " * 5
            rows[1] += f"[{a}|{b}]"
            rows[2] += " " * 5
    spinner = _spinner_index(rnd, line)
    above, below = [], []
    if spinner is not None:
        column = columns[spinner]
        for inner, outer in rnd.arms.get("up", []):
            above[:0] = _vertical(outer, inner, column)
        for inner, outer in rnd.arms.get("down", []):
            below += _vertical(inner, outer, column)
    return "\n".join(row.rstrip() for row in [*above, *rows, *below] if row.strip())


def _vertical(top: int, bottom: int, column: int) -> list[str]:
    """A tile on a spinner arm: upright, or crosswise (one row) for a double."""
    if top == bottom:
        return [" " * max(column - 1, 0) + f"[{top}|{bottom}]"]
    pad = " " * column
    return [f"{pad}┌{top}┐", f"{pad}└{bottom}┘"]


def side_names(rules: Rules) -> list[str]:
    """How pictures, the web table and results name the sides."""
    return ["team 0+2", "team 1+3"] if rules.teams else [f"seat {s}" for s in range(rules.players)]


def render_text(rnd: Round, viewer: int | None = None) -> str:
    """A full picture: table, open ends, each seat's hand size and missing numbers, scores.

    ``viewer``: the seat whose hand is shown face up (None shows every hand).
    """
    rules = rnd.rules
    ends = rnd.ends()
    lines = [render_line(rnd), ""]
    end_text = ", ".join(f"{name} {n}" for name, n in ends.items()) or "none yet"
    if rules.fives:
        end_text += f"   (count {rnd.fives_count()})"
    lines.append(f"ends: {end_text}")
    for seat, hand in enumerate(rnd.hands):
        shown = viewer is None or viewer == seat
        tiles = " ".join(f"[{tile_name(t).replace('-', '|')}]" for t in hand) if shown else "? " * len(hand)
        missing = ",".join(str(n) for n in sorted(rnd.missing[seat]))
        marker = ">" if rnd.to_play == seat else " "
        note = f"  lacks {missing}" if missing else ""
        lines.append(f"{marker} seat {seat} ({len(hand)}): {tiles.strip()}{note}")
    if rules.drawing:
        lines.append(f"boneyard: {len(rnd.boneyard)}")
    names = side_names(rules)
    lines.append(
        "scores: " + ", ".join(f"{name} {score}" for name, score in zip(names, rnd.scores, strict=True))
    )
    if rnd.over:
        winner = "nobody" if rnd.winner is None else names[rnd.winner]
        lines.append(f"round over: {rnd.end}, {winner} wins, points {list(rnd.points)}")
    return "\n".join(lines)


# -- images -------------------------------------------------------------------------------
WIDTH, HEIGHT = 960, 540
TABLE_HEIGHT = 360
"""The line of play is drawn in the top 360 rows, scaled to fit; hands and scores below."""
FELT, IVORY, INK, BACK, TEXT, HIGHLIGHT = (
    (22, 92, 54), (246, 240, 222), (28, 28, 28), (120, 40, 36), (236, 236, 236), (255, 214, 90),
)  # fmt: skip
GAP = 0.12
"""Space between neighbouring tiles, in half-tile units."""
PIP_SPOTS = {
    0: (),
    1: ((0.5, 0.5),),
    2: ((0.25, 0.25), (0.75, 0.75)),
    3: ((0.25, 0.25), (0.5, 0.5), (0.75, 0.75)),
    4: ((0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)),
    5: ((0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)),
    6: ((0.25, 0.22), (0.25, 0.5), (0.25, 0.78), (0.75, 0.22), (0.75, 0.5), (0.75, 0.78)),
}
"""Pip centres of each number in a unit half-tile square (x, y)."""
_GLYPHS = {
    "0": "111101101101111", "1": "010110010010111", "2": "111001111100111", "3": "111001111001111",
    "4": "101101111001001", "5": "111100111001111", "6": "111100111101111", "7": "111001001001001",
    "8": "111101111101111", "9": "111101111001111", "A": "010101111101101", "B": "110101110101110",
    "C": "011100100100011", "D": "110101101101110", "E": "111100110100111", "F": "111100110100100",
    "G": "011100101101011", "H": "101101111101101", "I": "111010010010111", "J": "001001001101010",
    "K": "101101110101101", "L": "100100100100111", "M": "101111111101101", "N": "110101101101101",
    "O": "010101101101010", "P": "110101110100100", "Q": "010101101110011", "R": "110101110101101",
    "S": "011100010001110", "T": "111010010010010", "U": "101101101101111", "V": "101101101101010",
    "W": "101101111111101", "X": "101101010101101", "Y": "101101010010010", "Z": "111001010100111",
    " ": "000000000000000", ":": "000010000010000", "+": "000010111010000", "-": "000000111000000",
    ",": "000000000010100", ">": "100010001010100", "(": "010100100100010", ")": "010001001001010",
    "/": "001001010100100", ".": "000000000000010", "?": "111001010000010", "_": "000000000000111",
}  # fmt: skip
"""A 3x5 pixel font (rows top to bottom) for the labels of ``render_image``."""


@dataclass(frozen=True)
class TableBox:
    """A tile on the table in half-tile units: its rectangle, the number on each half, its place.

    ``halves`` are listed left to right (horizontal tile) or top to bottom (vertical).
    """

    x: float
    y: float
    w: float
    h: float
    halves: tuple[int, int]
    place: Place


def table_boxes(rnd: Round) -> list[TableBox]:
    """Every tile on the table: the main line along y=0 (doubles upright), spinner arms above/below.

    The one table geometry: ``render_image`` draws it and the web table sends it to the page.
    """
    line = _line_tiles(rnd)
    boxes, x = [], 0.0
    for a, b, place in line:
        if a == b:
            boxes.append(TableBox(x, -1.0, 1.0, 2.0, (a, b), place))
            x += 1.0 + GAP
        else:
            boxes.append(TableBox(x, -0.5, 2.0, 1.0, (a, b), place))
            x += 2.0 + GAP
    spinner = _spinner_index(rnd, line)
    if spinner is not None:
        centre = boxes[spinner].x + 0.5
        for arm, direction in (("up", -1.0), ("down", 1.0)):
            y = (-1.0 - GAP) if direction < 0 else (1.0 + GAP)
            for i, (inner, outer) in enumerate(rnd.arms.get(arm, [])):
                length = 1.0 if inner == outer else 2.0
                top = y - length if direction < 0 else y
                halves = (outer, inner) if direction < 0 else (inner, outer)
                if inner == outer:
                    boxes.append(TableBox(centre - 1.0, top, 2.0, 1.0, halves, (arm, i)))
                else:
                    boxes.append(TableBox(centre - 0.5, top, 1.0, 2.0, halves, (arm, i)))
                y += direction * (length + GAP)
    return boxes


def _fill(image: np.ndarray, x0: float, y0: float, x1: float, y1: float, colour) -> None:
    """Fill the pixel rectangle [x0, x1) x [y0, y1) (at least one pixel each way), clipped to the image."""
    h, w = image.shape[:2]
    left, top = round(x0), round(y0)
    right, bottom = max(round(x1), left + 1), max(round(y1), top + 1)
    left, top, right, bottom = max(left, 0), max(top, 0), min(right, w), min(bottom, h)
    if right > left and bottom > top:
        image[top:bottom, left:right] = colour


def _disc(image: np.ndarray, cx: float, cy: float, r: float, colour) -> None:
    """A filled circle (pixel centres within ``r``)."""
    h, w = image.shape[:2]
    top, bottom = max(int(cy - r), 0), min(int(cy + r) + 2, h)
    left, right = max(int(cx - r), 0), min(int(cx + r) + 2, w)
    ys, xs = np.ogrid[top:bottom, left:right]
    inside = (xs + 0.5 - cx) ** 2 + (ys + 0.5 - cy) ** 2 <= r * r
    image[top:bottom, left:right][inside] = colour


def _draw_tile(image: np.ndarray, x: float, y: float, w: float, h: float, halves: tuple[int, int]) -> None:
    """An ivory tile with a dark rim, a dividing line and the pips of both halves."""
    unit = min(w, h)
    rim = max(unit * 0.06, 1.0)
    _fill(image, x, y, x + w, y + h, INK)
    _fill(image, x + rim, y + rim, x + w - rim, y + h - rim, IVORY)
    horizontal = w >= h
    if horizontal:
        _fill(image, x + w / 2 - rim / 2, y + rim, x + w / 2 + rim / 2, y + h - rim, INK)
    else:
        _fill(image, x + rim, y + h / 2 - rim / 2, x + w - rim, y + h / 2 + rim / 2, INK)
    for i, number in enumerate(halves):
        hx, hy = (x + i * unit, y) if horizontal else (x, y + i * unit)
        for sx, sy in PIP_SPOTS[number]:
            _disc(image, hx + sx * unit, hy + sy * unit, max(unit * 0.09, 0.8), INK)


def _draw_back(image: np.ndarray, x: float, y: float, w: float, h: float) -> None:
    """A face-down tile."""
    _fill(image, x, y, x + w, y + h, INK)
    _fill(image, x + 1, y + 1, x + w - 1, y + h - 1, BACK)


def _draw_text(image: np.ndarray, x: int, y: int, text: str, colour=TEXT, scale: int = 2) -> None:
    """Blocky text in the 3x5 font (unknown characters print as '?')."""
    for i, char in enumerate(text.upper()):
        bits = _GLYPHS.get(char, _GLYPHS["?"])
        left = x + i * 4 * scale
        for k, bit in enumerate(bits):
            if bit == "1":
                row, col = divmod(k, 3)
                _fill(
                    image,
                    left + col * scale,
                    y + row * scale,
                    left + (col + 1) * scale,
                    y + (row + 1) * scale,
                    colour,
                )


def _draw_table(image: np.ndarray, rnd: Round) -> None:
    """The line of play scaled to fit the table area (at most 28 pixels per half tile)."""
    boxes = table_boxes(rnd)
    if not boxes:
        _draw_text(image, WIDTH // 2 - 70, TABLE_HEIGHT // 2, "EMPTY TABLE", scale=3)
        return
    x0, x1 = min(b.x for b in boxes), max(b.x + b.w for b in boxes)
    y0, y1 = min(b.y for b in boxes), max(b.y + b.h for b in boxes)
    top = 36
    unit = min(28.0, (WIDTH - 40) / (x1 - x0), (TABLE_HEIGHT - top - 16) / (y1 - y0))
    ox = (WIDTH - unit * (x1 - x0)) / 2 - unit * x0
    oy = top + (TABLE_HEIGHT - top - 16 - unit * (y1 - y0)) / 2 - unit * y0
    for b in boxes:
        _draw_tile(image, ox + unit * b.x, oy + unit * b.y, unit * b.w, unit * b.h, b.halves)


def _draw_seats(image: np.ndarray, rnd: Round, viewer: int | None) -> None:
    """One row per seat: name, score, known-missing numbers, then its tiles (face up for the viewer)."""
    rules, y = rnd.rules, TABLE_HEIGHT + 12
    row = min(40, (HEIGHT - TABLE_HEIGHT - 34) // rules.players)
    for seat, hand in enumerate(rnd.hands):
        colour = HIGHLIGHT if rnd.to_play == seat else TEXT
        side = rules.side_of(seat)
        missing = ",".join(str(n) for n in sorted(rnd.missing[seat]))
        label = f"{'>' if rnd.to_play == seat else ' '} seat {seat}"
        if rules.teams:
            label += f" {side_names(rules)[side]}"
        _draw_text(image, 8, y + 2, label, colour)
        _draw_text(image, 8, y + 16, f"score {rnd.scores[side]}" + (f" lacks {missing}" if missing else ""))
        x, unit = 280.0, min(16.0, (WIDTH - 290) / (2.2 * max(len(hand), 1)))
        for tile in hand:
            if viewer is None or viewer == seat:
                low, high = TILES[tile]
                _draw_tile(image, x, y, 2 * unit, unit, (high, low))
            else:
                _draw_back(image, x, y, 2 * unit, unit)
            x += 2.2 * unit
        y += row


def _status(rnd: Round) -> str:
    """The top line: rules, open ends, fives count, boneyard."""
    ends = " ".join(f"{name[0]}{n}" for name, n in rnd.ends().items()) or "none"
    text = f"{rnd.rules.name} {rnd.rules.players}p  ends {ends}"
    if rnd.rules.fives:
        text += f"  count {rnd.fives_count()}"
    if rnd.rules.drawing:
        text += f"  boneyard {len(rnd.boneyard)}"
    return text


def render_image(rnd: Round, viewer: int | None = None) -> np.ndarray:
    """A ``(540, 960, 3)`` uint8 picture of the table: tiles with pips, hands, scores.

    ``viewer``: the seat whose hand is drawn face up (None shows every hand); the
    others show face-down tiles, one per tile held. Needs nothing beyond NumPy.
    """
    image = np.empty((HEIGHT, WIDTH, 3), dtype=np.uint8)
    image[:] = FELT
    _draw_text(image, 8, 8, _status(rnd))
    _draw_table(image, rnd)
    image[TABLE_HEIGHT, :] = INK
    _draw_seats(image, rnd, viewer)
    if rnd.over:
        names = side_names(rnd.rules)
        winner = "nobody" if rnd.winner is None else names[rnd.winner]
        _draw_text(image, 8, HEIGHT - 16, f"round over: {rnd.end}, {winner} wins", HIGHLIGHT)
    return image


def png_bytes(image: np.ndarray) -> bytes:
    """An HxWx3 uint8 image as PNG file bytes (zlib only, no imaging library)."""
    height, width, _ = image.shape
    raw = b"".join(b"\x00" + image[row].tobytes() for row in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )
