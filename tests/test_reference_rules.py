"""One test per rule of RULES.md, written as replayed records.

Every expected value below was worked out by hand from RULES.md and docs/engine.md
(the comments show the arithmetic), not copied from the engine's output.
"""

from __future__ import annotations

import numpy as np
import pytest

from domino_env.engine.actions import encode
from domino_env.engine.errors import IllegalMoveError
from domino_env.engine.observation import observation_fields
from domino_env.engine.reference import Match, Round, RoundResult, deal_to_hands
from domino_env.engine.rules import Rules, all_configurations
from domino_env.engine.tiles import NUM_TILES, parse_tile, tile_index
from domino_env.tools.records import replay, round_from_record


def tiles(text: str) -> list[int]:
    return [parse_tile(t) for t in text.split()]


def record(preset: str, hands: list[str], moves: list[str] = (), **extra) -> dict:
    """A record from hands written as 'a-b a-b ...' strings."""
    out = {"preset": preset, "players": len(hands), "hands": [h.split() for h in hands], "moves": list(moves)}
    if isinstance(extra.get("boneyard"), str):
        extra["boneyard"] = extra["boneyard"].split()
    out.update(extra)
    return out


def canonical_hands(size: int, players: int) -> list[str]:
    """Seat s holds tiles s*size .. s*size+size-1 in canonical order."""
    names = [f"{a}-{b}" for a in range(7) for b in range(a, 7)]
    return [" ".join(names[s * size : (s + 1) * size]) for s in range(players)]


# -- shared deals ---------------------------------------------------------------------
# idrd 2p: 6-6 opens and every other 6 is set aside, so the round blocks at once.
# s0 keeps 5-5 4-4 0-0 0-1 0-2 4-3 = 10+8+0+1+2+7 = 28; s1 = 3+4+5+3+4+5+4 = 28.
TIED_2P = ["6-6 5-5 4-4 0-0 0-1 0-2 4-3", "3-0 4-0 5-0 2-1 3-1 4-1 2-2"]
# Blocked at once; s0 keeps 0+1+2+3+2+3 = 11, s1 holds 4+5+4+5+6+4+5 = 33.
LIGHT_S0 = ["6-6 0-0 1-0 2-0 3-0 1-1 2-1", "4-0 5-0 3-1 4-1 5-1 2-2 3-2"]
LIGHT_S1 = LIGHT_S0[::-1]
# Same tiles as TIED_2P with the seats swapped: s1 holds 6-6, both keep 28.
TIED_2P_SWAPPED = TIED_2P[::-1]

# 4 players, all 28 dealt: ten placements put all seven 6s down and block the game.
# s1 has no 6 after the opening and passes once. Left: s0 5-5 5-3 4-3 0-0 = 25,
# s2 4-4 5-2 3-0 2-0 = 20 (team 0: 45); s1 4-0 5-0 1-1 2-1 3-1 = 18, s3 4-1 5-1 2-2
# 4-2 3-3 = 27 (team 1: 45). The last tile is placed by s2 (team 0).
DEAL4 = [
    "6-6 3-2 6-0 5-5 5-3 4-3 0-0",
    "5-4 1-0 4-0 5-0 1-1 2-1 3-1",
    "6-2 6-3 6-1 4-4 5-2 3-0 2-0",
    "6-4 6-5 4-1 5-1 2-2 4-2 3-3",
]
DEAL4_MOVES = [
    "6-6",  # s0 (s1 passes: no 6)
    "6-2:right",  # s2
    "6-4:left",  # s3
    "3-2:right",  # s0
    "5-4:left",  # s1
    "6-3:right",  # s2
    "6-5:left",  # s3
    "6-0:left",  # s0
    "1-0:left",  # s1
    "6-1:left",  # s2: ends 6 and 6, all seven 6s down: blocked
]
# s2's 2-0 and s3's 4-2 swapped: team 0 keeps 25 + 24 = 49, team 1 keeps 18 + 23 = 41.
DEAL4_UNEVEN = [DEAL4[0], DEAL4[1], "6-2 6-3 6-1 4-4 5-2 3-0 4-2", "6-4 6-5 4-1 5-1 2-2 2-0 3-3"]

# Muggins, blocked with the boneyard drawn out. s1 draws the whole boneyard (6-3 is
# last), then the line closes on 6 in all four directions around the 6-6 spinner.
MUGGINS_HANDS = ["6-6 6-2 6-5 6-4 6-0 6-1 4-3", "5-3 4-2 1-0 0-0 1-1 2-2 3-3"]
MUGGINS_BONEYARD = "2-0 3-0 4-0 5-0 2-1 3-1 4-1 5-1 3-2 5-2 4-4 5-4 5-5 6-3"
MUGGINS_MOVES = [
    "6-6",  # s0: lone 6-6 counts 12; s1 draws 14 tiles, the last (6-3) fits
    "6-3:left",  # s1: 3 + 12 (right side: the spinner, a double) = 15 -> s1 +15
    "6-2:right",  # s0: 3 + 2, short sides open but unplayed = 5 -> s0 +5
    "3-5:left",  # s1: 5 + 2 = 7
    "5-6:left",  # s0: 6 + 2 = 8
    "2-4:right",  # s1: 6 + 4 = 10 -> s1 +10
    "4-6:right",  # s0: 6 + 6 = 12; s1 has no 6 and passes
    "6-0:up",  # s0: 6 + 6 + 0 = 12
    "0-1:up",  # s1: 6 + 6 + 1 = 13
    "1-6:up",  # s0: 18; all 6s down, both pass: blocked, s0 the blocker
]
# s0 keeps 4-3 (7); s1 keeps 17 tiles worth 83. Fives: s0 5, s1 25.
MUGGINS_S1_LEFT = ["0-0", "2-0", "3-0", "4-0", "5-0", "1-1", "2-1", "3-1", "4-1", "5-1"]
MUGGINS_S1_LEFT += ["2-2", "3-2", "5-2", "3-3", "4-4", "5-4", "5-5"]

# 13 placements, no doubles (no spinner): s0 dominoes, s1 keeps one tile.
CHAIN_HANDS = ["6-5 4-3 3-2 2-1 6-0 4-1 4-2", "5-4 6-3 3-1 1-0 6-2 4-0 {left}"]
CHAIN_MOVES = [
    "6-5",  # s0: lone tile 11
    "5-4:right",  # s1: 6 + 4 = 10 -> +10
    "4-3:right",  # s0: 9
    "6-3:left",  # s1: 3 + 3 = 6
    "3-2:left",  # s0: 2 + 3 = 5 -> +5
    "3-1:right",  # s1: 3
    "2-1:left",  # s0: 2
    "1-0:left",  # s1: 1
    "0-6:left",  # s0: 7
    "6-2:left",  # s1: 3
    "1-4:right",  # s0: 6
    "4-0:right",  # s1: 2
    "2-4:left",  # s0: 4, last tile: domino
]


# -- openers ------------------------------------------------------------------------
def test_highest_double_opens_forced():
    out = replay(record("idrd_draw", ["5-5 0-0 1-0 2-0 3-0 4-0 5-0", "6-6 4-4 2-1 3-1 4-1 5-1 6-1"]))
    assert out["to_play"] == 1
    assert out["legal"] == ["6-6"]


@pytest.mark.parametrize("holder", [0, 1])
def test_without_doubles_the_highest_ranked_tile_opens_6_3_beats_5_4(holder):
    # All doubles, 6-5 and 6-4 are in the boneyard; 6-3 and 5-4 both count 9.
    hands = ["6-3 2-1 3-1 4-1 5-1 6-1 3-2", "5-4 1-0 2-0 3-0 4-0 5-0 6-0"]
    if holder == 1:
        hands = hands[::-1]
    out = replay(record("idrd_block", hands))
    assert out["to_play"] == holder
    assert out["legal"] == ["6-3"]


def test_partnership_six_six_holder_opens_with_it():
    hands = [DEAL4[2], DEAL4[3], DEAL4[0], DEAL4[1]]  # s2 holds 6-6
    out = replay(record("partnership", hands))
    assert out["to_play"] == 2
    assert out["legal"] == ["6-6"]


def test_given_opener_opens_with_any_tile():
    out = replay(
        record("idrd_draw", ["5-5 0-0 1-0 2-0 3-0 4-0 5-0", "6-6 4-4 2-1 3-1 4-1 5-1 6-1"], opener=0)
    )
    assert out["to_play"] == 0
    assert out["legal"] == ["0-0", "1-0", "2-0", "3-0", "4-0", "5-0", "5-5"]


@pytest.mark.parametrize(
    ("preset", "players", "size"),
    [("spanish_pairs", 4, 7), ("draw", 2, 7), ("block", 3, 5), ("all_fives", 4, 5)],
)
def test_presets_with_a_chance_opener_require_one(preset, players, size):
    hands = canonical_hands(size, players)
    with pytest.raises(ValueError, match="opener"):
        replay(record(preset, hands))
    assert replay(record(preset, hands, opener=players - 1))["to_play"] == players - 1


# -- blocked rounds and their tie-breaks ------------------------------------------------
def test_idrd_blocked_tie_goes_to_the_opener():
    out = replay(record("idrd_block", TIED_2P, ["6-6"]))
    assert (out["end"], out["winner"]) == ("blocked", 0)
    assert out["points"] == [28, 0]  # s1's 28 pips
    assert out["scores"] == [28, 0]
    assert out["hands"] == [
        ["0-0", "1-0", "2-0", "4-3", "4-4", "5-5"],
        ["3-0", "4-0", "5-0", "2-1", "3-1", "4-1", "2-2"],
    ]
    assert out["ends"] == {"left": 6, "right": 6}
    assert (out["to_play"], out["legal"]) == (None, [])


def test_idrd_blocked_tie_without_the_opener_goes_to_the_nearest_after_it():
    # 3 players; s1 opens 6-6, every other 6 and 0-0 are set aside. s0 and s2 tie at
    # 28, s1 keeps 49. Play order from the opener: s1, s2, s0 -> s2 wins 28 + 49.
    hands = ["1-0 2-0 3-0 4-0 5-1 4-2 3-3", "6-6 5-5 5-4 4-4 5-3 4-3 5-2", "5-0 1-1 2-1 3-1 4-1 2-2 3-2"]
    out = replay(record("idrd_block", hands, ["6-6"]))
    assert (out["end"], out["winner"]) == ("blocked", 2)
    assert out["points"] == [0, 0, 77]


def test_seed004_blocked_tie_scores_nobody():
    out = replay(record("block", TIED_2P, ["6-6"], opener=0))
    assert (out["end"], out["winner"]) == ("blocked", None)
    assert out["points"] == [0, 0]


def test_spanish_blocked_equal_totals_void_the_hand():
    out = replay(record("spanish_pairs", DEAL4, DEAL4_MOVES, opener=0))
    assert (out["end"], out["winner"]) == ("blocked", None)
    assert out["points"] == [0, 0]
    assert out["ends"] == {"left": 6, "right": 6}


def test_partnership_blocked_equal_totals_the_blockers_team_loses():
    # 45 each; s2 (team 0) placed the last tile, so team 1 wins team 0's 45.
    out = replay(record("partnership", DEAL4, DEAL4_MOVES))
    assert (out["end"], out["winner"]) == ("blocked", 1)
    assert out["points"] == [0, 45]
    assert out["scores"] == [0, 45]


def test_muggins_blocked_higher_game_score_wins_even_with_more_pips():
    out = replay(record("muggins", MUGGINS_HANDS, MUGGINS_MOVES, boneyard=MUGGINS_BONEYARD))
    assert (out["end"], out["winner"]) == ("blocked", 1)
    # s1 (25 > 5) wins floor5(7) - 83 = -78; its round points are 25 - 78.
    assert out["points"] == [5, -53]
    assert out["scores"] == [5, -53]
    assert out["draws"] == [0, 14]
    assert out["hands"] == [["4-3"], MUGGINS_S1_LEFT]
    assert out["ends"] == {"left": 6, "right": 6, "up": 6, "down": 6}


def test_muggins_blocked_score_tie_goes_to_fewer_tiles():
    # 20 + 5 = 25 ties s1's 25; s0 holds 1 tile -> s0 wins floor5(83) - 7 = 73.
    out = replay(record("muggins", MUGGINS_HANDS, MUGGINS_MOVES, boneyard=MUGGINS_BONEYARD, scores=[20, 0]))
    assert out["winner"] == 0
    assert out["points"] == [78, 25]
    assert out["scores"] == [98, 25]


def test_muggins_blocked_winner_override_lightest_hand():
    rules = {"blocked_winner": "lightest_hand"}
    out = replay(record("muggins", MUGGINS_HANDS, MUGGINS_MOVES, boneyard=MUGGINS_BONEYARD, rules=rules))
    assert out["winner"] == 0
    assert out["points"] == [5 + 73, 25]


def test_muggins_blocked_full_tie_goes_to_the_last_player_to_play():
    # Without drawing, 6-6 then 6-5 block at once. Scores 10-10, six tiles each;
    # s1 played last and wins floor5(12) - 27 = -17.
    hands = ["6-6 0-0 1-0 2-0 3-0 4-0 1-1", "6-5 2-1 3-1 4-1 2-2 3-2 4-2"]
    out = replay(record("muggins", hands, ["6-6", "6-5:right"], rules={"drawing": False}, scores=[10, 10]))
    assert (out["end"], out["winner"]) == ("blocked", 1)
    assert out["points"] == [0, -17]
    assert out["scores"] == [10, -7]


# -- closed game (seed 001) ----------------------------------------------------------
CLOSED_HANDS = ["5-5 3-2 5-4 6-5 1-0 6-3 4-1", "5-2 5-3 6-4 5-0 5-1 6-6 4-4"]
CLOSED_MOVES = ["5-5", "5-2:right", "2-3:right", "3-5:right", "5-4:right", "4-6:right", "6-5:right"]
CLOSED_MOVES += ["5-0:left", "0-1:left", "1-5:left"]


def test_seed001_closed_five_game_lighter_hand_14_wins_the_other_20():
    # Both ends show 5 and all seven 5s are down: closed at once, 14 tiles still in
    # the boneyard. s0 keeps 6-3 4-1 (14), s1 keeps 6-6 4-4 (20): s0 scores 20.
    out = replay(record("idrd_draw", CLOSED_HANDS, CLOSED_MOVES, opener=0))
    assert out == {
        "end": "closed",
        "game_over": False,
        "winner": 0,
        "points": [20, 0],
        "scores": [20, 0],
        "draws": [0, 0],
        "hands": [["4-1", "6-3"], ["4-4", "6-6"]],
        "ends": {"left": 5, "right": 5},
        "to_play": None,
        "legal": [],
    }


def test_without_closed_game_the_players_draw_the_boneyard_out_first():
    # s0 draws all 14 (no 5 left anywhere) and passes, s1 passes: blocked.
    # s0 holds 14 + (168 - 72 on the table - 34 in hands) = 76; s1 (20) scores it.
    out = replay(record("idrd_draw", CLOSED_HANDS, CLOSED_MOVES, opener=0, rules={"closed_game": False}))
    assert (out["end"], out["winner"]) == ("blocked", 1)
    assert out["draws"] == [14, 0]
    assert out["points"] == [0, 76]


def test_seed001_line_6_6_then_6_3_3_3_3_1_leaves_ends_6_and_1():
    hands = ["6-6 3-3 0-0 1-0 2-2 4-2 5-4", "6-3 3-1 5-5 4-4 2-1 5-0 4-0"]
    out = replay(record("idrd_draw", hands, ["6-6", "6-3:right", "3-3", "3-1"]))
    assert out["ends"] == {"left": 6, "right": 1}
    assert (out["to_play"], out["legal"]) == (0, ["1-0:right"])


# -- spinner and fives --------------------------------------------------------------
SPIN_HANDS = ["5-5 5-4 6-6 6-3 6-2 3-3 2-2", "5-1 5-0 1-1 0-0 4-3 4-2 3-2"]


def test_lone_5_5_scores_10_and_short_sides_stay_shut():
    out = replay(record("all_fives", SPIN_HANDS, ["5-5"], opener=0))
    assert out["scores"] == [10, 0]
    assert out["legal"] == ["5-0:left", "5-1:left", "5-0:right", "5-1:right"]


def test_spinner_right_side_still_counts_10_after_a_tile_on_its_left():
    out = replay(record("all_fives", SPIN_HANDS, ["5-5", "5-0:left"], opener=0))
    assert out["scores"] == [10, 10]  # 0 + 5-5 counted twice
    assert out["ends"] == {"left": 0, "right": 5}


def test_opening_spinner_short_sides_open_after_both_long_sides_and_count_0_unplayed():
    out = replay(record("all_fives", SPIN_HANDS, ["5-5", "5-1:left"], opener=0))
    assert out["scores"] == [10, 0]  # 1 + 10 = 11
    assert out["legal"] == ["5-4:right"]  # no up/down yet
    out = replay(record("all_fives", SPIN_HANDS, ["5-5", "5-1:left", "5-4:right"], opener=0))
    assert out["ends"] == {"left": 1, "right": 4, "up": 5, "down": 5}
    assert out["scores"] == [15, 0]  # 1 + 4 + 0 + 0 = 5
    assert out["legal"] == ["1-1:left", "4-2:right", "4-3:right", "5-0:up", "5-0:down"]
    out = replay(record("all_fives", SPIN_HANDS, ["5-5", "5-1:left", "5-4:right", "5-0:up"], opener=0))
    assert out["ends"] == {"left": 1, "right": 4, "up": 0, "down": 5}
    assert out["scores"] == [15, 5]  # 1 + 4 + 0 + unplayed down 0


def test_spinner_placed_later_opens_after_one_tile_on_its_outward_side():
    hands = ["6-3 4-3 0-0 1-1 1-0 2-1 2-0", "3-3 6-6 5-5 4-4 6-5 5-4 6-4"]
    out = replay(record("all_fives", hands, ["6-3", "3-3:right"], opener=0))
    assert out["ends"] == {"left": 6, "right": 3}
    assert out["scores"] == [0, 0]  # 6 + 3-3 twice = 12
    assert out["legal"] == ["4-3:right"]
    out = replay(record("all_fives", hands, ["6-3", "3-3:right", "4-3:right"], opener=0))
    assert out["ends"] == {"left": 6, "right": 4, "up": 3, "down": 3}
    assert out["scores"] == [10, 0]  # 6 + 4, short sides unplayed


def test_only_the_first_double_is_a_spinner():
    hands = ["6-3 6-6 0-0 1-1 1-0 2-1 5-2", "3-3 6-5 4-4 4-0 4-1 4-2 2-0"]
    out = replay(record("all_fives", hands, ["6-3", "3-3:right", "6-6:left", "6-5:left"], opener=0))
    assert out["ends"] == {"left": 5, "right": 3}  # 6-6 had a tile beyond it: no new ends
    assert out["legal"] == ["5-2:left"]
    assert out["scores"] == [0, 0]  # 9, 12, 12 + 6 = 18, 5 + 6 = 11


def test_a_double_at_an_end_counts_both_halves():
    hands = ["1-1 4-4 0-0 2-2 3-3 3-2 2-0", "4-1 5-5 6-6 6-5 5-0 6-0 5-3"]
    out = replay(record("all_fives", hands, ["1-1", "4-1:left", "4-4:left"], opener=0))
    assert out["scores"] == [10, 0]  # lone 1-1 = 2; 4 + 2 = 6; 8 + 2 = 10


def test_seed000_ends_2_2_1_score_5():
    hands = ["3-3 3-0 3-1 6-6 6-5 6-4 5-5", "3-2 2-0 5-4 5-1 6-1 6-2 4-4"]
    moves = ["3-3", "3-2:left", "3-0:right", "0-2:right", "3-1:up"]  # 6, 8, 2, 4, then 2+2+1
    out = replay(record("muggins", hands, moves, opener=0))
    assert out["ends"] == {"left": 2, "right": 2, "up": 1, "down": 3}
    assert out["scores"] == [5, 0]
    assert out["points"] == [5, 0]


def test_seed000_ends_6_and_double_2_score_10():
    hands = ["6-2 0-0 1-0 1-1 3-0 3-1 3-3", "2-2 4-4 5-5 5-4 4-0 4-1 5-1"]
    out = replay(record("muggins", hands, ["6-2", "2-2:right"], opener=0))
    assert out["scores"] == [0, 10]  # lone 6-2 = 8; then 6 + 2-2 twice


# -- drawing and passing ------------------------------------------------------------
DRAW_HANDS = ["6-6 5-5 1-0 2-0 3-0 4-0 5-0", "2-1 3-1 4-1 5-1 3-2 4-2 5-2"]
DRAW_BONEYARD = "0-0 1-1 6-2 6-0 6-1 2-2 3-3 4-3 5-3 6-3 4-4 5-4 6-4 6-5"


def test_draw_until_a_tile_fits_then_that_tile_must_be_played():
    out = replay(record("idrd_draw", DRAW_HANDS, ["6-6"], boneyard=DRAW_BONEYARD))
    assert out["draws"] == [0, 3]  # 0-0, 1-1, then 6-2 fits
    assert out["to_play"] == 1
    assert out["legal"] == ["6-2:left", "6-2:right"]
    assert out["hands"][1] == ["0-0", "1-1", "2-1", "3-1", "4-1", "5-1", "3-2", "4-2", "5-2", "6-2"]


ALL_SIXES = ["6-6 6-5 6-4 6-3 6-2 6-1 6-0", "0-0 1-0 2-0 3-0 4-0 5-0 1-1"]


def test_pass_once_the_boneyard_is_empty_and_the_same_player_plays_again():
    out = replay(record("idrd_draw", ALL_SIXES, ["6-6"]))
    assert out["draws"] == [0, 14]
    assert out["to_play"] == 0
    lefts = ["6-0:left", "6-1:left", "6-2:left", "6-3:left", "6-4:left", "6-5:left"]
    assert out["legal"] == lefts + [m.replace("left", "right") for m in lefts]
    out = replay(record("idrd_draw", ALL_SIXES, ["6-6", "6-5:left"]))
    assert out["to_play"] == 1
    assert out["legal"] == ["5-0:left", "5-1:left", "5-2:left", "5-3:left", "5-4:left", "5-5:left"]


def test_public_events_and_known_missing_numbers_after_draws():
    rnd = round_from_record(record("idrd_draw", ALL_SIXES, []))
    rnd.play_move("6-6")
    rnd.play_move("6-5:left")
    assert rnd.events == [
        ("place", 0, tile_index(6, 6), "opening"),
        ("draw", 1, 14),
        ("pass", 1),
        ("place", 0, tile_index(6, 5), "left"),
    ]
    assert rnd.passes == [0, 1]
    assert rnd.missing == [set(), {6}]


def test_passes_accumulate_known_missing_numbers():
    # Block: s1 passes on {6}, then on {5, 6}; playing 4-0 afterwards changes nothing.
    # Then s0 (no 5, no 0) passes on ends 5 and 0.
    hands = ["6-6 6-5 6-4 3-1 2-2 3-2 3-3", "4-0 0-0 1-0 2-0 3-0 1-1 2-1"]
    rnd = round_from_record(record("idrd_block", hands, []))
    for move in ["6-6", "6-5:left", "6-4:right", "4-0:right"]:
        rnd.play_move(move)
    assert rnd.missing == [{0, 5}, {5, 6}]
    assert rnd.passes == [1, 2]
    assert rnd.to_play == 1
    obs = rnd.observation(0)
    missing = obs[observation_fields(rnd.rules)["missing"]]
    assert missing[7:14].tolist() == [0, 0, 0, 0, 0, 1, 1]  # relative seat 1


def test_passes_on_new_numbers_add_to_the_known_missing_set():
    # Block: s1 passes on {6}, {5, 6}, then {4, 5}: it is known to lack 4, 5 and 6.
    hands = ["6-6 6-5 6-4 4-3 1-1 2-2 2-1", "3-0 0-0 1-0 2-0 3-1 3-2 3-3"]
    rnd = round_from_record(record("idrd_block", hands, []))
    for move in ["6-6", "6-5:left", "6-4:right", "4-3:right"]:
        rnd.play_move(move)
    assert rnd.passes == [0, 3]
    assert rnd.missing[1] == {4, 5, 6}


def test_a_turn_with_draws_resets_the_known_missing_set_to_the_ends():
    # s1 draws 0-0, 6-1 on {6}; later draws 6-3, 2-0 on ends 1 and 2: now only {1, 2}.
    hands = ["6-6 6-2 5-5 5-4 1-1 2-2 2-1", "3-0 4-0 5-0 3-3 4-3 5-3 4-4"]
    boneyard = "0-0 6-1 6-3 2-0 1-0 3-1 4-1 5-1 3-2 4-2 5-2 6-4 6-5 6-0"
    rnd = round_from_record(record("idrd_draw", hands, [], boneyard=boneyard))
    rnd.play_move("6-6")
    assert rnd.missing[1] == {6}
    rnd.play_move("6-1:left")
    rnd.play_move("6-2:right")
    assert rnd.draws == [0, 4]
    assert rnd.missing[1] == {1, 2}
    assert rnd.legal_moves() == ["2-0:right"]


# -- redeals and hand sizes -----------------------------------------------------------
def test_idrd_redeals_five_doubles_but_accepts_four():
    with pytest.raises(ValueError, match="5 doubles"):
        replay(record("idrd_draw", ["6-6 5-5 4-4 3-3 2-2 1-0 2-0", "3-0 4-0 5-0 6-0 2-1 3-1 4-1"]))
    assert replay(record("idrd_draw", TIED_2P))["to_play"] == 0  # s0 holds four doubles


def test_spanish_redeals_four_doubles():
    hands = ["0-0 1-1 2-2 3-3 1-0 2-0 3-0", "4-0 5-0 6-0 2-1 3-1 4-1 5-1", "6-1 3-2 4-2 5-2 6-2 4-3 5-3"]
    hands.append("6-3 4-4 5-4 6-4 5-5 6-5 6-6")
    with pytest.raises(ValueError, match="4 doubles"):
        replay(record("spanish_pairs", hands, opener=0))


@pytest.mark.parametrize(
    ("preset", "players", "size"),
    [
        ("draw", 2, 7),
        ("draw", 3, 7),
        ("draw", 4, 6),
        ("block", 2, 7),
        ("block", 3, 5),
        ("block", 4, 5),
        ("all_fives", 2, 7),
        ("all_fives", 3, 5),
        ("all_fives", 4, 5),
        ("idrd_draw", 3, 7),
        ("idrd_block", 4, 7),
        ("muggins", 2, 7),
        ("spanish_pairs", 4, 7),
        ("partnership", 4, 7),
    ],
)
def test_hand_size_per_preset_and_player_count(preset, players, size):
    out = replay(record(preset, canonical_hands(size, players), opener=0))
    assert [len(hand) for hand in out["hands"]] == [size] * players
    with pytest.raises(ValueError, match=f"deals {size} to each seat"):
        replay(record(preset, canonical_hands(size - 1, players), opener=0))


# -- mid-round target (muggins) -----------------------------------------------------
def test_muggins_reaching_the_target_mid_round_ends_the_game_at_once():
    hands = ["5-0 1-1 2-1 3-1 2-2 3-2 3-3", "6-6 5-5 4-4 6-5 6-4 5-4 4-3"]
    out = replay(record("muggins", hands, ["5-0"], opener=0, scores=[95, 0]))
    assert (out["end"], out["game_over"], out["winner"]) == ("target", True, 0)
    assert out["points"] == [5, 0]  # the lone 5-0 counts 5; no end-of-round points
    assert out["scores"] == [100, 0]
    assert (out["to_play"], out["legal"]) == (None, [])


def test_muggins_target_on_the_last_tile_is_a_domino_with_its_points():
    # Two tiles each: 6-3 (9), 3-3 on the right (6 + 6 = 12), 6-4 on the left
    # (4 + 6 = 10 -> 105) empties s0's hand: domino, floor5(5-4 = 9) = 5 more.
    moves = ["6-3", "3-3:right", "6-4:left"]
    out = replay(
        record("muggins", ["6-3 6-4", "3-3 5-4"], moves, opener=0, scores=[95, 0], rules={"hand_size": 2})
    )
    assert (out["end"], out["game_over"], out["winner"]) == ("domino", True, 0)
    assert out["points"] == [15, 0]
    assert out["scores"] == [110, 0]


# -- round points per preset ---------------------------------------------------------
DOMINO_HANDS = ["6-6 6-5 5-5 5-4 4-4 6-4 4-3", "0-0 1-0 2-0 3-0 1-1 2-1 3-1"]
DOMINO_MOVES = ["6-6", "6-5:right", "5-5:right", "5-4:right", "4-4:right", "6-4:left", "4-3:left"]


def test_idrd_domino_scores_the_opponents_pips():
    out = replay(record("idrd_block", DOMINO_HANDS, DOMINO_MOVES))  # s1 passes six times
    assert (out["end"], out["winner"]) == ("domino", 0)
    assert out["points"] == [15, 0]  # 0+1+2+3+2+3+4


def test_spanish_winning_pair_scores_all_four_hands():
    out = replay(record("spanish_pairs", DEAL4_UNEVEN, DEAL4_MOVES, opener=0))
    assert (out["end"], out["winner"]) == ("blocked", 1)  # 41 < 49
    assert out["points"] == [0, 90]


def test_partnership_lower_team_total_wins_the_opposing_total():
    out = replay(record("partnership", DEAL4_UNEVEN, DEAL4_MOVES))
    assert (out["end"], out["winner"]) == ("blocked", 1)
    assert out["points"] == [0, 49]


def test_block_winner_scores_opponents_minus_own():
    out = replay(record("block", LIGHT_S0, ["6-6"], opener=0))
    assert (out["end"], out["winner"]) == ("blocked", 0)
    assert out["points"] == [33 - 11, 0]


def test_draw_domino_scores_the_opponents_pips():
    out = replay(record("draw", [CHAIN_HANDS[0], CHAIN_HANDS[1].format(left="5-3")], CHAIN_MOVES, opener=0))
    assert (out["end"], out["winner"]) == ("domino", 0)
    assert out["points"] == [8, 0]


@pytest.mark.parametrize(("left", "rounded"), [("5-3", 10), ("5-2", 5)])
def test_all_fives_domino_scores_opponents_rounded_to_nearest_5(left, rounded):
    hands = [CHAIN_HANDS[0], CHAIN_HANDS[1].format(left=left)]
    out = replay(record("all_fives", hands, CHAIN_MOVES, opener=0))
    assert (out["end"], out["winner"]) == ("domino", 0)
    assert out["points"] == [5 + rounded, 10]
    assert out["scores"] == [5 + rounded, 10]


@pytest.mark.parametrize(("s0_before", "game_over"), [(78, False), (79, True)])
def test_seed004_exact_tie_for_first_at_the_target_plays_another_round(s0_before, game_over):
    out = replay(record("block", LIGHT_S0, ["6-6"], opener=0, scores=[s0_before, 100]))
    assert out["scores"] == [s0_before + 22, 100]
    assert out["game_over"] is game_over


# -- the Round API directly ----------------------------------------------------------
def test_round_actions_encode_end_times_28_plus_tile():
    hands = [tiles(h) for h in ["6-6 3-3 0-0 1-0 2-2 4-2 5-4", "6-3 3-1 5-5 4-4 2-1 5-0 4-0"]]
    held = set(hands[0] + hands[1])
    rnd = Round(Rules.preset("idrd_draw", 2), hands, [t for t in range(NUM_TILES) if t not in held])
    assert rnd.legal_actions() == [encode(tile_index(6, 6), 0)]
    rnd.step(tile_index(6, 6))
    six_three = tile_index(6, 3)
    assert rnd.legal_actions() == [six_three, 28 + six_three]
    rnd.step(28 + six_three)
    assert rnd.arms["right"] == [(6, 3)]
    assert rnd.opening == (6, 6)
    with pytest.raises(IllegalMoveError, match=r"action 0 \(0-0:left\) for seat 0.*3-3:right"):
        rnd.step(0)


def test_observation_layout_after_the_seed001_line():
    hands = ["6-6 3-3 0-0 1-0 2-2 4-2 5-4", "6-3 3-1 5-5 4-4 2-1 5-0 4-0"]
    rnd = round_from_record(record("idrd_draw", hands, []))
    for move in ["6-6", "6-3:right", "3-3", "3-1"]:
        rnd.play_move(move)
    obs = rnd.observation(1)
    assert obs.dtype == np.int16 and obs.shape == (113,)
    f = {name: where.start for name, where in observation_fields(rnd.rules).items()}
    expected = np.zeros(113, dtype=np.int16)
    for tile in ["5-5", "4-4", "2-1", "5-0", "4-0"]:
        expected[f["tile_owner"] + parse_tile(tile)] = 1
    for order, (tile, owner, end) in enumerate([("6-6", 3, 1), ("6-3", 2, 3), ("3-3", 3, 3), ("3-1", 2, 3)]):
        expected[f["tile_owner"] + parse_tile(tile)] = owner  # 2 + relative seat: s1 is 0 to itself, s0 is 1
        expected[f["tile_end"] + parse_tile(tile)] = end
        expected[f["tile_order"] + parse_tile(tile)] = order + 1
    expected[f["end_number"] : f["end_number"] + 4] = [6, 1, -1, -1]
    expected[f["end_double"] : f["end_double"] + 4] = [1, 0, 0, 0]  # the left end's outer tile is the 6-6
    expected[f["hand_size"] : f["hand_size"] + 2] = [5, 5]
    expected[f["draw_pile"]] = 14
    expected[f["opener"]] = 1  # s0 is relative seat 1
    expected[f["to_move"]] = 1  # s0 to move
    assert obs.tolist() == expected.tolist()


@pytest.mark.parametrize(
    ("preset", "players", "size"),
    [("muggins", 2, 113), ("draw", 3, 122), ("block", 4, 131), ("partnership", 4, 129)],
)
def test_observation_size(preset, players, size):
    hand = Rules.preset(preset, players).hand_size
    rnd = round_from_record(record(preset, canonical_hands(hand, players), [], opener=0))
    assert rnd.observation(players - 1).shape == (size,)


def test_team_observation_puts_the_own_team_first_and_no_one_to_move_after_the_round():
    rnd = round_from_record(record("partnership", DEAL4_UNEVEN, [], scores=[10, 5]))
    for move in DEAL4_MOVES:
        rnd.play_move(move)
    assert rnd.scores == [10, 54]
    obs = rnd.observation(1)
    assert obs.shape == (129,)
    f = observation_fields(rnd.rules)
    assert obs[f["hand_size"]].tolist() == [5, 4, 5, 4]  # hand sizes of s1, s2, s3, s0
    assert obs[f["scores"]].tolist() == [54, 10]  # own team (1) first
    assert obs[f["opener"]].tolist() == [3]  # opener s0 is three seats after s1
    assert obs[f["to_move"]].tolist() == [-1]  # the round is over: nobody to move


# -- Match --------------------------------------------------------------------------
def deals(*items: tuple[list[str], int]):
    """A deal_source returning the given (hands, chance opener) in turn."""
    queue = [(_deal(hands), chance) for hands, chance in items]
    return lambda: queue.pop(0)


def _deal(hands: list[str]) -> list[int]:
    held = [t for hand in hands for t in tiles(hand)]
    return held + [t for t in range(NUM_TILES) if t not in held]


def test_match_next_opener_rotates_and_scores_carry_over():
    match = Match(Rules.preset("idrd_block", 2), deals((LIGHT_S0, 0), (LIGHT_S0, 0)))
    assert match.round.opener == 0
    match.step(encode(tile_index(6, 6), 0))  # blocked: s0 (11) wins s1's 33
    assert match.history == [RoundResult(0, "blocked", 0, (33, 0), (33, 0))]
    assert match.rounds_played == 1
    assert match.round.opener == 1  # the next seat, though s0 holds 6-6 again
    assert match.round.legal_actions() == sorted(tiles(LIGHT_S0[1]))  # any tile
    assert match.scores == [33, 0]
    assert not match.over


def test_match_winner_opens_next_else_the_seat_after_the_opener():
    match = Match(Rules.preset("block", 2), deals((LIGHT_S1, 1), (TIED_2P_SWAPPED, 0), (LIGHT_S0, 1)))
    assert match.round.opener == 1  # chance
    match.play_move("6-6")  # s1 wins 33 - 11 = 22
    assert match.scores == [0, 22]
    assert match.round.opener == 1  # the winner; the chance opener 0 is ignored
    match.play_move("6-6")  # 28 each: nobody wins
    assert match.history[-1].winner is None
    assert match.round.opener == 0  # the seat after the previous opener


def test_match_same_opener_rule_every_round():
    rotated = [DEAL4[1], DEAL4[2], DEAL4[3], DEAL4[0]]  # s3 holds 6-6
    match = Match(Rules.preset("partnership", 4), deals((DEAL4, 0), (rotated, 0)))
    for move in DEAL4_MOVES:
        match.play_move(move)
    assert match.scores == [0, 45]
    assert match.round.opener == 3
    assert match.round.legal_moves() == ["6-6"]


def test_match_ends_at_the_target():
    match = Match(Rules.preset("idrd_block", 2, target=30), deals((LIGHT_S0, 0)))
    match.play_move("6-6")
    assert (match.over, match.winner, match.scores, match.rounds_played) == (True, 0, [33, 0], 1)
    with pytest.raises(ValueError, match="game is over"):
        match.play_move("1-0")


def test_match_exact_tie_at_the_target_plays_another_round():
    # Two tiles each, target 10. Round 1: 5-5 (s0 +10), 5-0 left (0 + 10: s1 +10),
    # 0-3 domino (3 + 10 = 13); s1's 1-1 rounds to 0: 10-10, another round.
    rules = Rules.preset("all_fives", 2, hand_size=2, target=10)
    match = Match(rules, deals((["5-5 3-0", "5-0 1-1"], 0), (["5-5 3-1", "5-1 1-1"], 1)))
    for move in ["5-5", "5-0:left", "0-3:left"]:
        match.play_move(move)
    assert match.scores == [10, 10]
    assert not match.over
    assert match.round.opener == 0  # round 1's winner
    for move in ["5-5", "5-1:left", "1-3:left"]:  # 10, 11, 13: s0 alone scores
        match.play_move(move)
    assert (match.over, match.winner, match.scores, match.rounds_played) == (True, 0, [20, 10], 2)


def test_match_redeals_and_uses_the_chance_opener_for_lots():
    too_many = ["0-0 1-1 2-2 3-3 1-0 2-0 3-0", "4-0 5-0 6-0 2-1 3-1 4-1 5-1", "6-1 3-2 4-2 5-2 6-2 4-3 5-3"]
    too_many.append("6-3 4-4 5-4 6-4 5-5 6-5 6-6")
    match = Match(Rules.preset("spanish_pairs", 4), deals((too_many, 1), (DEAL4, 2)))
    assert match.round.opener == 2
    assert match.round.hands[2] == sorted(tiles(DEAL4[2]))


def test_deal_to_hands_splits_hands_and_boneyard():
    rules = Rules.preset("draw", 4)
    hands, boneyard = deal_to_hands(rules, np.arange(NUM_TILES)[::-1])
    assert hands[0] == [27, 26, 25, 24, 23, 22]
    assert hands[3] == [9, 8, 7, 6, 5, 4]
    assert boneyard == [3, 2, 1, 0]


@pytest.mark.parametrize(("preset", "players"), all_configurations())
def test_random_matches_keep_every_tile_and_point_accounted_for(preset, players):
    rng = np.random.default_rng(7)
    rules = Rules.preset(preset, players)
    match = Match(rules, lambda: (rng.permutation(NUM_TILES), int(rng.integers(players))))
    start = list(match.scores)
    while not match.over:
        rnd = match.round
        match.step(int(rng.choice(rnd.legal_actions())))
        on_table = [p.tile for p in rnd.table]
        held = [t for hand in rnd.hands for t in hand]
        assert sorted(on_table + held + rnd.boneyard) == list(range(NUM_TILES))
        assert [s + p for s, p in zip(start, rnd.points, strict=True)] == rnd.scores
        if rnd.over:
            start = list(rnd.scores)
            assert match.rounds_played < 200
    top = max(match.scores)
    assert top >= rules.target
    assert match.scores.count(top) == 1 and match.winner == match.scores.index(top)
