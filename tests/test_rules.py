"""``Rules``: the eight presets against RULES.md section 3, and validation.

The expected table below was written by hand from RULES.md, not from rules.py.
"""

from __future__ import annotations

import dataclasses

import pytest

from domino_env import PRESET_NAMES, PRESET_PLAYERS, Rules
from domino_env.engine.rules import all_configurations

# Shared by every preset of one seed document (RULES.md section 3).
MUGGINS = dict(
    teams=False, drawing=True, redeal_doubles=None, first_opener="highest_tile",
    later_opener="same", spinner=True, fives=True, closed_game=False,
    blocked_winner="highest_score", blocked_tie="fewest_tiles",
    round_points="opponents_down5_minus_own", target=100, target_mid_round=True,
)  # fmt: skip
IDRD = dict(
    teams=False, redeal_doubles=4, first_opener="highest_tile", later_opener="next",
    spinner=False, fives=False, closed_game=True, blocked_winner="lightest_hand",
    blocked_tie="opener", round_points="opponents", target=100, target_mid_round=False,
)  # fmt: skip
SPANISH = dict(
    teams=True, drawing=False, redeal_doubles=3, first_opener="lots", later_opener="next",
    spinner=False, fives=False, closed_game=False, blocked_winner="lightest_hand",
    blocked_tie="nobody", round_points="all_hands", target=300, target_mid_round=False,
)  # fmt: skip
PARTNERSHIP = dict(
    teams=True, drawing=False, redeal_doubles=None, first_opener="six_six", later_opener="same",
    spinner=False, fives=False, closed_game=False, blocked_winner="lightest_hand",
    blocked_tie="blocker_loses", round_points="opponents", target=50, target_mid_round=False,
)  # fmt: skip
SEED004 = dict(
    teams=False, redeal_doubles=None, first_opener="random", later_opener="winner",
    closed_game=False, blocked_winner="lightest_hand", blocked_tie="nobody", target_mid_round=False,
)  # fmt: skip
DRAW = dict(SEED004, drawing=True, spinner=False, fives=False, round_points="opponents_minus_own")
BLOCK = dict(SEED004, drawing=False, spinner=False, fives=False, round_points="opponents_minus_own")
ALL_FIVES = dict(SEED004, drawing=True, spinner=True, fives=True, round_points="opponents_nearest5")

# (preset, players) -> (hand size, boneyard or set-aside size, target, shared fields)
EXPECTED = {
    ("muggins", 2): (7, 14, 100, MUGGINS),
    ("idrd_draw", 2): (7, 14, 100, dict(IDRD, drawing=True)),
    ("idrd_draw", 3): (7, 7, 100, dict(IDRD, drawing=True)),
    ("idrd_draw", 4): (7, 0, 100, dict(IDRD, drawing=True)),
    ("idrd_block", 2): (7, 14, 100, dict(IDRD, drawing=False)),
    ("idrd_block", 3): (7, 7, 100, dict(IDRD, drawing=False)),
    ("idrd_block", 4): (7, 0, 100, dict(IDRD, drawing=False)),
    ("spanish_pairs", 4): (7, 0, 300, SPANISH),
    ("partnership", 4): (7, 0, 50, PARTNERSHIP),
    ("draw", 2): (7, 14, 100, DRAW),
    ("draw", 3): (7, 7, 61, DRAW),
    ("draw", 4): (6, 4, 61, DRAW),
    ("block", 2): (7, 14, 100, BLOCK),
    ("block", 3): (5, 13, 61, BLOCK),
    ("block", 4): (5, 8, 61, BLOCK),
    ("all_fives", 2): (7, 14, 150, ALL_FIVES),
    ("all_fives", 3): (5, 13, 150, ALL_FIVES),
    ("all_fives", 4): (5, 8, 150, ALL_FIVES),
}
FIELDS = [f.name for f in dataclasses.fields(Rules)]


def test_configurations_are_exactly_the_expected_ones():
    assert sorted(all_configurations()) == sorted(EXPECTED)
    assert set(PRESET_NAMES) == {name for name, _ in EXPECTED}
    for name in PRESET_NAMES:
        assert PRESET_PLAYERS[name] == tuple(sorted(p for n, p in EXPECTED if n == name))


@pytest.mark.parametrize(
    ("name", "players"), sorted(EXPECTED), ids=[f"{n}-{p}p" for n, p in sorted(EXPECTED)]
)
def test_preset_values_match_rules_md(name, players):
    hand, rest, target, shared = EXPECTED[(name, players)]
    rules = Rules.preset(name, players)
    expected = dict(shared, name=name, players=players, hand_size=hand, target=target)
    assert set(expected) == set(FIELDS), "the expected table must name every field"
    assert {f: getattr(rules, f) for f in FIELDS} == expected
    assert rules.boneyard_size == rest
    assert rules.num_sides == (2 if rules.teams else players)
    assert rules.num_ends == (4 if rules.spinner else 2)
    assert rules.num_actions == 28 * rules.num_ends
    assert [rules.side_of(s) for s in range(players)] == (
        [0, 1, 0, 1] if rules.teams else list(range(players))
    )


@pytest.mark.parametrize("name", sorted(PRESET_PLAYERS))
def test_preset_defaults_to_its_smallest_player_count(name):
    assert Rules.preset(name) == Rules.preset(name, min(p for n, p in EXPECTED if n == name))


def test_overrides_apply_and_are_validated():
    short = Rules.preset("idrd_draw", 3, target=50)
    assert short.target == 50 and short.players == 3 and short.hand_size == 7
    assert short == Rules.preset("idrd_draw", 3).replace(target=50)
    assert Rules.preset("muggins", blocked_winner="lightest_hand").blocked_winner == "lightest_hand"
    with pytest.raises(ValueError, match="target must be positive"):
        Rules.preset("block", 2, target=0)


# -- unknown presets, player counts ------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "closest"),
    [
        ("mugins", "muggins"),
        ("idrd-draw", "idrd_draw"),
        ("spanish_pair", "spanish_pairs"),
        ("Block", "block"),
    ],
)
def test_unknown_preset_names_valid_presets_and_the_closest(name, closest):
    with pytest.raises(ValueError) as caught:
        Rules.preset(name, 2)
    message = str(caught.value)
    assert f"unknown preset {name!r}" in message
    assert all(valid in message for valid in PRESET_NAMES)
    assert f"did you mean {closest!r}" in message


def test_unknown_preset_without_a_close_match_still_lists_presets():
    with pytest.raises(ValueError, match="valid presets: muggins, idrd_draw") as caught:
        Rules.preset("xyzzy")
    assert "did you mean" not in str(caught.value)


@pytest.mark.parametrize(
    ("name", "players", "allowed"),
    [
        ("muggins", 3, "2"),
        ("muggins", 4, "2"),
        ("spanish_pairs", 2, "4"),
        ("partnership", 3, "4"),
        ("idrd_draw", 5, "2 or 3 or 4"),
        ("block", 1, "2 or 3 or 4"),
        ("draw", "3", "2 or 3 or 4"),
    ],
)
def test_wrong_player_count_names_the_allowed_counts(name, players, allowed):
    with pytest.raises(ValueError, match=rf"{name}.*played by {allowed} players, not {players!r}"):
        Rules.preset(name, players)


@pytest.mark.parametrize("players", [2.0, 3.5, True])
def test_non_integer_players_are_rejected(players):
    with pytest.raises(ValueError, match="players"):
        Rules.preset("draw", players)
    with pytest.raises(ValueError, match="players must be an integer"):
        Rules.preset("draw", 2).replace(players=players)


@pytest.mark.parametrize("players", [1, 5, 0])
def test_player_counts_outside_2_to_4_are_rejected(players):
    with pytest.raises(ValueError, match="players must be 2, 3 or 4"):
        Rules.preset("block", 2).replace(players=players, hand_size=1)


# -- impossible combinations ----------------------------------------------------------------
IMPOSSIBLE = [
    (("idrd_draw", 3), dict(teams=True), r"teams need 4 players"),
    (("block", 2), dict(teams=True), r"teams need 4 players"),
    (("idrd_draw", 4), dict(hand_size=8), r"hand_size 8 x 4 players needs 32 tiles.*28"),
    (("block", 3), dict(hand_size=10), r"hand_size 10 x 3 players needs 30 tiles"),
    (("block", 2), dict(hand_size=0), r"hand_size"),
    (("spanish_pairs", 4), dict(later_opener="winner"), r"later_opener 'winner'.*teams"),
    (("spanish_pairs", 4), dict(redeal_doubles=1), r"redeal_doubles=1 makes every deal a redeal"),
    (("idrd_draw", 4), dict(redeal_doubles=0), r"redeal_doubles=0 makes every deal a redeal"),
    (("partnership", 4), dict(redeal_doubles=-1), r"redeal_doubles must be None or an integer"),
    (("partnership", 4), dict(redeal_doubles=1.5), r"redeal_doubles must be None or an integer"),
    (("idrd_draw", 2), dict(redeal_doubles=True), r"redeal_doubles must be None or an integer"),
    (("block", 2), dict(first_opener="six_six"), r"six_six.*every tile dealt"),
    (("draw", 4), dict(first_opener="six_six"), r"six_six.*every tile dealt"),
    (("block", 3), dict(blocked_tie="blocker_loses"), r"blocker_loses.*teams or 2 players"),
    (("block", 2), dict(first_opener="highest"), r"first_opener must be one of highest_tile"),
    (("block", 2), dict(later_opener="loser"), r"later_opener must be one of same, next, winner"),
    (("block", 2), dict(blocked_winner="lightest"), r"blocked_winner must be one of"),
    (("block", 2), dict(blocked_tie=None), r"blocked_tie must be one of"),
    (("block", 2), dict(round_points="all"), r"round_points must be one of"),
    (("block", 2), dict(drawing=1), r"drawing must be true or false"),
    (("block", 2), dict(spinner="yes"), r"spinner must be true or false"),
    (("block", 2), dict(target=100.0), r"target must be an integer"),
    (("block", 2), dict(hand_size="7"), r"hand_size must be an integer"),
    (("block", 2), dict(target=-5), r"target must be positive"),
]


@pytest.mark.parametrize(
    ("base", "overrides", "match"),
    IMPOSSIBLE,
    ids=[f"{b[0]}-{','.join(f'{k}={v!r}' for k, v in o.items())}" for b, o, _ in IMPOSSIBLE],
)
def test_impossible_combinations_raise(base, overrides, match):
    with pytest.raises(ValueError, match=match) as caught:
        Rules.preset(*base, **overrides)
    assert f"invalid rules {base[0]!r}" in str(caught.value)
    with pytest.raises(ValueError, match=match):
        Rules.preset(*base).replace(**overrides)


def test_edge_combinations_that_are_allowed():
    # Seven doubles fit exactly: 4 seats x 2 doubles = 8 >= 7.
    assert Rules.preset("spanish_pairs", 4, redeal_doubles=2).redeal_doubles == 2
    # All doubles may sit in the 7 set-aside tiles at 3 players.
    assert Rules.preset("idrd_block", 3, redeal_doubles=0).redeal_doubles == 0
    assert Rules.preset("block", 2, blocked_tie="blocker_loses").blocked_tie == "blocker_loses"
    assert Rules.preset("idrd_block", 4, first_opener="six_six").first_opener == "six_six"
    assert Rules.preset("block", 4, hand_size=7).boneyard_size == 0


def test_hand_built_rules_are_validated_too():
    fields = dataclasses.asdict(Rules.preset("partnership", 4))
    assert Rules(**fields) == Rules.preset("partnership", 4)
    with pytest.raises(ValueError, match="teams need 4 players"):
        Rules(**dict(fields, players=3, hand_size=7))


# -- unknown fields, immutability ------------------------------------------------------------
@pytest.mark.parametrize(
    ("key", "closest"), [("targt", "target"), ("handsize", "hand_size"), ("spinners", "spinner")]
)
def test_unknown_override_field_suggests_the_closest(key, closest):
    for build in (
        lambda: Rules.preset("block", 2, **{key: 1}),
        lambda: Rules.preset("block").replace(**{key: 1}),
    ):
        with pytest.raises(ValueError) as caught:
            build()
        message = str(caught.value)
        assert f"unknown rule field {key!r}" in message
        assert f"did you mean {closest!r}" in message
        assert all(field in message for field in FIELDS)


def test_rules_are_frozen_and_hashable():
    rules = Rules.preset("block", 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.target = 10
    with pytest.raises(dataclasses.FrozenInstanceError):
        del rules.players
    assert rules.target == 100
    assert hash(rules) == hash(Rules.preset("block", 2))
    assert {rules, Rules.preset("block", 2)} == {rules}


def test_replace_returns_a_new_validated_copy():
    rules = Rules.preset("all_fives", 3)
    changed = rules.replace(target=200, fives=False)
    assert (changed.target, changed.fives) == (200, False)
    assert (rules.target, rules.fives) == (150, True), "replace must not change the original"
    assert changed.replace(target=150, fives=True) == rules
    with pytest.raises(ValueError, match="teams need 4 players"):
        rules.replace(teams=True)
    with pytest.raises(ValueError, match="spinner must be true or false"):
        rules.replace(spinner=None)
