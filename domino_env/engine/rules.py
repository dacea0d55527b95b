"""Rule systems: one frozen dataclass field per rule axis of RULES.md section 2.

``Rules.preset(name, players)`` builds the eight named presets; every field can be
overridden (``Rules.preset("idrd_draw", target=50)``). Validation happens in one
place, ``__post_init__``, so a preset, an override and a hand-built ``Rules`` all
get the same clear ``ValueError`` naming the problem and the valid choices.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass
from typing import Any, Literal

from domino_env.engine.tiles import NUM_TILES
from domino_env.text import brief

FirstOpener = Literal["highest_tile", "six_six", "lots", "random"]
LaterOpener = Literal["same", "next", "winner"]
BlockedWinner = Literal["lightest_hand", "highest_score", "heaviest_hand"]
BlockedTie = Literal["opener", "nobody", "blocker_loses", "fewest_tiles"]
RoundPoints = Literal[
    "opponents", "opponents_minus_own", "all_hands", "opponents_down5_minus_own", "opponents_nearest5"
]

CHOICES: dict[str, tuple[str, ...]] = {
    "first_opener": ("highest_tile", "six_six", "lots", "random"),
    "later_opener": ("same", "next", "winner"),
    "blocked_winner": ("lightest_hand", "highest_score", "heaviest_hand"),
    "blocked_tie": ("opener", "nobody", "blocker_loses", "fewest_tiles"),
    "round_points": (
        "opponents",
        "opponents_minus_own",
        "all_hands",
        "opponents_down5_minus_own",
        "opponents_nearest5",
    ),
}

CHANCE_OPENERS = ("lots", "random")
"""``first_opener`` values that leave the first opener to chance (no forced tile)."""
END_NAMES = ("left", "right", "up", "down")
END_CODES = ("", "domino", "blocked", "closed", "target")
"""How a round ends, by code: 0 it goes on, 1 domino, 2 blocked, 3 closed, 4 target."""
DOMINO, BLOCKED, CLOSED, TARGET = 1, 2, 3, 4

SCORE_LIMIT = 30_000
"""Largest ``target``, and largest game score (either sign) a record may start from.

Observations hold game scores as int16 (at most 32,767) and one round changes a
score by under 2,000 points (fives included), so scores within this bound never
overflow the observation, whatever happens in the round."""


@dataclass(frozen=True)
class Rules:
    """One rule system. Field docs say what each value means (RULES.md section 2)."""

    name: str
    """Preset name this was built from (for display and records)."""
    players: int
    """2, 3 or 4 seats; play order is seat order."""
    teams: bool
    """Pairs 0+2 vs 1+3 (partners opposite). Needs 4 players."""
    hand_size: int
    """Tiles dealt to each seat; the rest is the boneyard (draw) or set aside (block)."""
    drawing: bool
    """True: a seat that cannot play draws one tile at a time until one fits, and
    passes only when the boneyard is empty. False: it passes."""
    redeal_doubles: int | None
    """Redeal when a seat is dealt more than this many doubles (None: never)."""
    first_opener: FirstOpener
    """highest_tile: the holder of the highest-ranked dealt tile (doubles first)
    must open with it. six_six: the holder of 6-6 opens with it. lots: lots are
    drawn, the winner opens with any tile. random: a random seat opens with any tile."""
    later_opener: LaterOpener
    """same: the first-round rule again. next: the seat after the previous opener,
    any tile. winner: the previous round's winner, any tile (after a round with no
    single winner, the seat after the previous opener)."""
    spinner: bool
    """The first double played is a spinner: once both long sides have a tile,
    its short sides (up, down) open too."""
    fives: bool
    """After each placement the open ends are summed; a positive multiple of 5 is
    scored at once by the placing seat."""
    closed_game: bool
    """The round ends at once when every open end shows the same number and all
    7 tiles of that number are on the table (scored as blocked)."""
    blocked_winner: BlockedWinner
    """Who wins a blocked round: the lightest hand (team: lightest team total),
    the highest game score (muggins), or the heaviest hand."""
    blocked_tie: BlockedTie
    """A tie for the blocked win: opener (the tied seat nearest the opener in play
    order, opener first), nobody scores, the blocker's side loses, or fewest tiles
    then the last seat to have played."""
    round_points: RoundPoints
    """What the round winner scores: opponents' pips; opponents' minus own; all
    hands; opponents' rounded down to 5 minus own (muggins); opponents' rounded to
    the nearest 5 (all fives)."""
    target: int
    """Game points to win: 1 to ``SCORE_LIMIT`` (30,000; observations hold scores as int16)."""
    target_mid_round: bool
    """The game ends the moment a side reaches the target, even mid-round."""

    def __post_init__(self) -> None:
        _validate(self)

    # -- derived facts -------------------------------------------------------
    @property
    def num_sides(self) -> int:
        """Scoring sides: 2 teams, or one per seat."""
        return 2 if self.teams else self.players

    @property
    def num_ends(self) -> int:
        """Ends in the action encoding: left, right (+ up, down with a spinner)."""
        return 4 if self.spinner else 2

    @property
    def num_actions(self) -> int:
        """Size of the ``Discrete`` action space: ``action = end * 28 + tile`` (docs/engine.md)."""
        return NUM_TILES * self.num_ends

    @property
    def boneyard_size(self) -> int:
        """Tiles not dealt: the draw pile, or the tiles set aside."""
        return NUM_TILES - self.players * self.hand_size

    def side_of(self, seat: int) -> int:
        """Team (seat % 2) or the seat itself."""
        return seat % 2 if self.teams else seat

    def replace(self, **overrides: Any) -> Rules:
        """A copy with some fields changed (validated)."""
        unknown = sorted(set(overrides) - set(FIELD_NAMES))
        if unknown:
            raise ValueError(_unknown_field_message(unknown[0]))
        return dataclasses.replace(self, **overrides)

    @classmethod
    def preset(cls, name: str, players: int | None = None, **overrides: Any) -> Rules:
        """The named preset for a player count (default: its smallest allowed)."""
        if name not in PRESETS:
            close = difflib.get_close_matches(str(name), PRESETS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"unknown preset {brief(name)}; valid presets: {', '.join(PRESETS)}{hint}")
        allowed = PRESET_PLAYERS[name]
        if players is None:
            players = allowed[0]
        if players not in allowed:
            raise ValueError(
                f"preset {name!r} is played by {' or '.join(map(str, allowed))} players, not {brief(players)}"
            )
        fields = dict(PRESETS[name](players), name=name, players=players)
        unknown = sorted(set(overrides) - set(FIELD_NAMES))
        if unknown:
            raise ValueError(_unknown_field_message(unknown[0]))
        fields.update(overrides)
        return cls(**fields)


FIELD_NAMES = tuple(f.name for f in dataclasses.fields(Rules))


def winner_points(kind: RoundPoints, opp, own):
    """What a round winner scores under ``rules.round_points`` (ints or NumPy arrays).

    ``opp``: pips left in the other sides' hands; ``own``: in the winner's side's.
    The one place this rule lives: both engines and the batched core call it.
    """
    if kind == "opponents":
        return opp
    if kind == "opponents_minus_own":
        return opp - own
    if kind == "all_hands":
        return opp + own
    if kind == "opponents_down5_minus_own":
        return opp // 5 * 5 - own
    return (opp + 2) // 5 * 5  # opponents_nearest5: remainders 3 and 4 round up


def _unknown_field_message(key: str) -> str:
    close = difflib.get_close_matches(key, FIELD_NAMES, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown rule field {brief(key)}; valid fields: {', '.join(FIELD_NAMES)}{hint}"


def _validate(r: Rules) -> None:
    def fail(msg: str) -> None:
        raise ValueError(f"invalid rules {r.name!r}: {msg}")

    for field in ("players", "hand_size", "target"):
        value = getattr(r, field)
        if not isinstance(value, int) or isinstance(value, bool):
            fail(f"{field} must be an integer, got {brief(value)}")
    for field in ("teams", "drawing", "spinner", "fives", "closed_game", "target_mid_round"):
        if not isinstance(getattr(r, field), bool):
            fail(f"{field} must be true or false, got {brief(getattr(r, field))}")
    for field, choices in CHOICES.items():
        value = getattr(r, field)
        if value not in choices:
            fail(f"{field} must be one of {', '.join(choices)}; got {brief(value)}")
    if r.players not in (2, 3, 4):
        fail(f"players must be 2, 3 or 4, got {r.players}")
    if r.teams and r.players != 4:
        fail(f"teams need 4 players (pairs 0+2 vs 1+3), got {r.players}")
    if r.hand_size < 1 or r.hand_size * r.players > NUM_TILES:
        fail(
            f"hand_size {r.hand_size} x {r.players} players needs {r.hand_size * r.players} tiles; "
            f"the set has {NUM_TILES} (hand_size must be 1 to {NUM_TILES // r.players})"
        )
    if r.redeal_doubles is not None:
        if (
            not isinstance(r.redeal_doubles, int)
            or isinstance(r.redeal_doubles, bool)
            or r.redeal_doubles < 0
        ):
            fail(f"redeal_doubles must be None or an integer >= 0, got {brief(r.redeal_doubles)}")
        # Seven doubles must be able to land somewhere without forcing a redeal.
        room = r.players * min(r.redeal_doubles, r.hand_size) + r.boneyard_size
        if room < 7:
            fail(f"redeal_doubles={r.redeal_doubles} makes every deal a redeal with {r.players} players")
    if r.first_opener == "six_six" and r.boneyard_size:
        fail("first_opener 'six_six' needs every tile dealt (hand_size x players = 28)")
    if r.later_opener == "winner" and r.teams:
        fail("later_opener 'winner' is for games without teams")
    if r.blocked_tie == "blocker_loses" and not (r.teams or r.players == 2):
        fail("blocked_tie 'blocker_loses' needs teams or 2 players")
    if r.target < 1:
        fail(f"target must be positive (1 to {SCORE_LIMIT}), got {r.target}")
    if r.target > SCORE_LIMIT:
        fail(f"target must be 1 to {SCORE_LIMIT} (game scores are int16 in observations), got {r.target}")


# -- presets (RULES.md section 3) ---------------------------------------------
def _muggins(players: int) -> dict[str, Any]:
    return dict(
        teams=False, hand_size=7, drawing=True, redeal_doubles=None,
        first_opener="highest_tile", later_opener="same", spinner=True, fives=True,
        closed_game=False, blocked_winner="highest_score", blocked_tie="fewest_tiles",
        round_points="opponents_down5_minus_own", target=100, target_mid_round=True,
    )  # fmt: skip


def _idrd(drawing: bool):
    def build(players: int) -> dict[str, Any]:
        return dict(
            teams=False, hand_size=7, drawing=drawing, redeal_doubles=4,
            first_opener="highest_tile", later_opener="next", spinner=False, fives=False,
            closed_game=True, blocked_winner="lightest_hand", blocked_tie="opener",
            round_points="opponents", target=100, target_mid_round=False,
        )  # fmt: skip

    return build


def _spanish_pairs(players: int) -> dict[str, Any]:
    return dict(
        teams=True, hand_size=7, drawing=False, redeal_doubles=3,
        first_opener="lots", later_opener="next", spinner=False, fives=False,
        closed_game=False, blocked_winner="lightest_hand", blocked_tie="nobody",
        round_points="all_hands", target=300, target_mid_round=False,
    )  # fmt: skip


def _partnership(players: int) -> dict[str, Any]:
    return dict(
        teams=True, hand_size=7, drawing=False, redeal_doubles=None,
        first_opener="six_six", later_opener="same", spinner=False, fives=False,
        closed_game=False, blocked_winner="lightest_hand", blocked_tie="blocker_loses",
        round_points="opponents", target=50, target_mid_round=False,
    )  # fmt: skip


def _seed004(kind: str):
    def build(players: int) -> dict[str, Any]:
        if kind == "draw":
            hand = 6 if players == 4 else 7
        else:
            hand = 7 if players == 2 else 5
        fives = kind == "all_fives"
        return dict(
            teams=False, hand_size=hand, drawing=kind != "block", redeal_doubles=None,
            first_opener="random", later_opener="winner", spinner=fives, fives=fives,
            closed_game=False, blocked_winner="lightest_hand", blocked_tie="nobody",
            round_points="opponents_nearest5" if fives else "opponents_minus_own",
            target=150 if fives else (100 if players == 2 else 61), target_mid_round=False,
        )  # fmt: skip

    return build


PRESETS = {
    "muggins": _muggins,
    "idrd_draw": _idrd(True),
    "idrd_block": _idrd(False),
    "spanish_pairs": _spanish_pairs,
    "partnership": _partnership,
    "draw": _seed004("draw"),
    "block": _seed004("block"),
    "all_fives": _seed004("all_fives"),
}
PRESET_PLAYERS: dict[str, tuple[int, ...]] = {
    "muggins": (2,),
    "idrd_draw": (2, 3, 4),
    "idrd_block": (2, 3, 4),
    "spanish_pairs": (4,),
    "partnership": (4,),
    "draw": (2, 3, 4),
    "block": (2, 3, 4),
    "all_fives": (2, 3, 4),
}
PRESET_NAMES = tuple(PRESETS)


def all_configurations() -> list[tuple[str, int]]:
    """Every (preset, players) pair the presets allow."""
    return [(name, p) for name in PRESET_NAMES for p in PRESET_PLAYERS[name]]
