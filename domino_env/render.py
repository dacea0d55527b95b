"""Text pictures of a reference round: the line of play, the ends, hands and scores.

Doubles lie crosswise (drawn over three rows across the line); the spinner's
short arms hang above (``up``) and below (``down``) it, tile by tile.

    print(render_text(round_, viewer=0))
"""

from __future__ import annotations

from .reference import Round
from .tiles import tile_name

_CROSS = ("┌{}┐", "├─┤", "└{}┘")


def _line_tiles(rnd: Round) -> list[tuple[int, int, str]]:
    """The main line left to right as (left number, right number, arm name)."""
    tiles = [(outer, inner, "left") for inner, outer in reversed(rnd.arms.get("left", []))]
    if rnd.opening is not None:
        tiles.append((rnd.opening[0], rnd.opening[1], "opening"))
    tiles += [(inner, outer, "right") for inner, outer in rnd.arms.get("right", [])]
    return tiles


def _spinner_index(rnd: Round, line: list[tuple[int, int, str]]) -> int | None:
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
        missing = "".join(str(n) for n in sorted(rnd.missing[seat]))
        marker = ">" if rnd.to_play == seat else " "
        note = f"  lacks {missing}" if missing else ""
        lines.append(f"{marker} seat {seat} ({len(hand)}): {tiles.strip()}{note}")
    if rules.drawing:
        lines.append(f"boneyard: {len(rnd.boneyard)}")
    side_names = ["team 0+2", "team 1+3"] if rules.teams else [f"seat {s}" for s in range(rules.players)]
    lines.append(
        "scores: " + ", ".join(f"{name} {score}" for name, score in zip(side_names, rnd.scores, strict=True))
    )
    if rnd.over:
        winner = "nobody" if rnd.winner is None else side_names[rnd.winner]
        lines.append(f"round over: {rnd.end}, {winner} wins, points {list(rnd.points)}")
    return "\n".join(lines)
