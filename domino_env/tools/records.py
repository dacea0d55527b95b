"""Game records: a deal plus the placements in order, replayed by the reference engine.

A record is a dict (JSON object)::

    {"preset": "idrd_draw", "players": 2,
     "hands": [["6-6", "3-3", ...], ["6-3", "3-1", ...]],
     "boneyard": ["0-0", ...],          # optional: draw order / tiles set aside
     "opener": 0,                       # optional: that seat opens with any tile
     "scores": [0, 0],                  # optional: game scores before the round (|score| <= 30000)
     "rules": {"target": 50},           # optional: Rules field overrides
     "moves": ["6-6", "6-3:right", "3-3", "3-1"]}   # optional: none is the opening position

``preset``, ``players`` and ``hands`` are required (``REQUIRED_KEYS``).

Draws and passes are never listed: the engine does them. ``replay`` returns the
state after the last move and every automatic draw and pass that follows it.
Anything wrong with the record raises ValueError naming the problem; an illegal
move raises ``IllegalMoveError`` (a ValueError) naming the move, seat and legal moves.
"""

from __future__ import annotations

import difflib
from typing import Any

from domino_env.engine.reference import Round
from domino_env.engine.rules import FIELD_NAMES, SCORE_LIMIT, Rules
from domino_env.engine.tiles import NUM_TILES, parse_tile, tile_name
from domino_env.text import brief

RECORD_KEYS = ("preset", "players", "hands", "boneyard", "opener", "scores", "rules", "moves")
REQUIRED_KEYS = ("preset", "players", "hands")
RECORD_FIXED_FIELDS = ("name", "players")
"""Rules fields a record's ``rules`` overrides may not change (set by its own keys)."""


def rule_overrides(rules: Rules) -> dict:
    """The fields where ``rules`` differs from its preset (what a record's ``rules`` key holds)."""
    base = Rules.preset(rules.name, rules.players)
    return {
        f: getattr(rules, f)
        for f in FIELD_NAMES
        if f not in RECORD_FIXED_FIELDS and getattr(rules, f) != getattr(base, f)
    }


def replay(record: dict) -> dict:
    """Replay a record; return the position after its last move (see module docstring)."""
    rnd = round_from_record(record)
    play_moves(rnd, _moves(record.get("moves", [])))
    return summary(rnd)


def round_from_record(record: dict) -> Round:
    """The round a record starts from: rules, deal, opener and scores, validated."""
    _check_keys(record)
    rules = _rules(record)
    hands_value = record["hands"]
    _expect(
        isinstance(hands_value, list) and all(isinstance(hand, list) for hand in hands_value),
        f"'hands' must be a list of hands, each a list of tiles like '6-3', got {brief(hands_value)}",
    )
    hands = [_tiles(hand, f"hands[{seat}]") for seat, hand in enumerate(hands_value)]
    if "boneyard" in record:
        boneyard = _tiles(record["boneyard"], "boneyard")
    else:
        held = {t for hand in hands for t in hand}
        boneyard = [t for t in range(NUM_TILES) if t not in held]
    opener = record.get("opener")
    _expect(opener is None or _is_int(opener), f"'opener' must be a seat number, got {brief(opener)}")
    return Round(rules, hands, boneyard, opener, _scores(record.get("scores")))


def play_moves(rnd: Round, moves: list[str]) -> None:
    """Play moves in order; errors say which move (1-based) failed."""
    for number, move in enumerate(moves, start=1):
        if rnd.over:
            raise ValueError(f"move {number} {brief(move)} comes after the round ended ({rnd.end})")
        try:
            rnd.play_move(move)
        except ValueError as exc:
            raise type(exc)(f"move {number}: {exc}") from None


def summary(rnd: Round) -> dict:
    """The replay output: result, scores, hands, open ends and the legal moves."""
    return {
        "end": rnd.end,
        "game_over": rnd.game_over,
        "winner": rnd.winner,
        "points": list(rnd.points),
        "scores": list(rnd.scores),
        "draws": list(rnd.draws),
        "hands": [[tile_name(t) for t in hand] for hand in rnd.hands],
        "ends": rnd.ends(),
        "to_play": rnd.to_play,
        "legal": rnd.legal_moves(),
    }


def _check_keys(record: Any) -> None:
    _expect(isinstance(record, dict), f"a record must be a JSON object (dict), got {type(record).__name__}")
    for key in record:
        if key not in RECORD_KEYS:
            close = difflib.get_close_matches(str(key), RECORD_KEYS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"unknown record key {key!r}{hint} (valid keys: {', '.join(RECORD_KEYS)})")
    for key in REQUIRED_KEYS:
        if key not in record:
            raise ValueError(f"the record is missing the required key {key!r}")


def _rules(record: dict) -> Rules:
    preset, players = record["preset"], record["players"]
    _expect(isinstance(preset, str), f"'preset' must be a preset name, got {brief(preset)}")
    _expect(_is_int(players), f"'players' must be a number of players, got {brief(players)}")
    overrides = record.get("rules", {})
    _expect(
        isinstance(overrides, dict) and all(isinstance(key, str) for key in overrides),
        f"'rules' must be an object of Rules field overrides (names to values), got {brief(overrides)}",
    )
    for field in RECORD_FIXED_FIELDS:
        if field in overrides:
            raise ValueError(f"'rules' cannot override {field!r}; the record's 'preset' and 'players' set it")
    return Rules.preset(preset, players, **overrides)


def _tiles(value: Any, where: str) -> list[int]:
    _expect(isinstance(value, list), f"'{where}' must be a list of tiles like '6-3', got {brief(value)}")
    tiles = []
    for i, text in enumerate(value):
        _expect(isinstance(text, str), f"{where}[{i}]: a tile is written 'a-b', got {brief(text)}")
        try:
            tiles.append(parse_tile(text))
        except ValueError as exc:
            raise ValueError(f"{where}[{i}]: {exc}") from None
    return tiles


def _scores(value: Any) -> list[int] | None:
    if value is None:
        return None
    _expect(
        isinstance(value, list) and all(_is_int(s) for s in value),
        f"'scores' must be a list of whole numbers, got {brief(value)}",
    )
    for side, score in enumerate(value):
        # Negative scores are real (muggins' winner can score below zero); the bound keeps the
        # int16 observations from overflowing (rules.SCORE_LIMIT).
        _expect(
            -SCORE_LIMIT <= score <= SCORE_LIMIT,
            f"'scores'[{side}] must be {-SCORE_LIMIT} to {SCORE_LIMIT}, got {score}",
        )
    return value


def _moves(value: Any) -> list[str]:
    _expect(isinstance(value, list), f"'moves' must be a list of moves like '6-3:left', got {brief(value)}")
    return value


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _expect(ok: bool, message: str) -> None:
    """Every bad record is a ValueError (the public contract), wrong types included."""
    if not ok:
        raise ValueError(message)
