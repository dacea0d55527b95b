"""The duplicate arena: scheduling, paired statistics, config checking and the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.arena.config import load_config, parse_config
from agents.arena.duplicate import duplicate_deals, play, rotations
from agents.arena.stats import paired_difference, seated
from agents.arena.tournament import display_names, run_arena, schedule_pairs, seatings
from agents.bots.registry import make_bot
from agents.configuration import ConfigError
from domino_env import Rules

QUIET = {"progress": False}


@pytest.mark.parametrize(("name", "players"), [("block", 2), ("block", 3), ("draw", 4), ("partnership", 4)])
def test_every_policy_plays_every_seat_of_every_deal(name: str, players: int) -> None:
    rules = Rules.preset(name, players)
    deals, openers = duplicate_deals(rules, 30, seed=0)
    bots = [make_bot("heaviest", rules), make_bot("diverse", rules)]
    rotation = rotations(rules)
    played = play(rules, bots, rotation, deals, openers, batch=16)  # several batches, several deals per game
    assert len(played.deal) == len(rotation) * len(deals)
    assert sorted(zip(played.table, played.deal, strict=True)) == [
        (t, d) for t in range(len(rotation)) for d in range(len(deals))
    ]
    for deal in range(len(deals)):
        seats = rotation[played.table[played.deal == deal]]
        for policy in (0, 1):
            assert (seats == policy).any(axis=0).all(), f"policy {policy} missed a seat of deal {deal}"
    if rules.teams:
        assert {tuple(r) for r in rotation} == {(0, 1, 0, 1), (1, 0, 1, 0)}


def test_deals_are_played_as_dealt() -> None:
    """Game rows see exactly the deal they are recorded under (same deal, same round, whatever the batch)."""
    rules = Rules.preset("block", 2)
    deals, openers = duplicate_deals(rules, 40, seed=1)
    bots = [make_bot("heaviest", rules), make_bot("heaviest", rules)]
    one = play(rules, bots, rotations(rules), deals, openers, batch=4)
    many = play(rules, bots, rotations(rules), deals, openers, batch=4096)
    key = lambda p: np.lexsort((p.deal, p.table))  # noqa: E731
    assert (one.points[key(one)] == many.points[key(many)]).all()
    # the same bot in every seat: both rotations of a deal are the same game
    points = many.points[key(many)].reshape(2, len(deals), 2)
    assert (points[0] == points[1]).all()


def test_swapping_the_two_policies_mirrors_the_results() -> None:
    base = dict(preset="draw", players=2, deals=150, matches=10, **QUIET)
    ab = run_arena(parse_config({**base, "policies": ["heaviest", "diverse"]}))
    ba = run_arena(parse_config({**base, "policies": ["diverse", "heaviest"]}))
    (p,), (q,) = ab.pairs, ba.pairs
    assert p.diff == pytest.approx(-q.diff) and p.ci == pytest.approx(q.ci)
    assert p.points == pytest.approx(q.points[::-1]) and p.round_win == pytest.approx(q.round_win[::-1])
    assert p.match_win == pytest.approx(q.match_win[::-1])


def test_paired_difference_is_mean_over_deals_of_the_rotation_average() -> None:
    rules = Rules.preset("block", 2)
    deals, openers = duplicate_deals(rules, 50, seed=2)
    bots = [make_bot("blocker", rules), make_bot("random", rules, seed=0)]
    tables, pair = seatings(rotations(rules), [(0, 1)])
    played = play(rules, bots, tables, deals, openers)
    diff, ci, n = paired_difference(seated(rules, played, tables, pair), 0, 0, 1, len(deals))
    per_deal = np.zeros(len(deals))
    for row in range(len(played.deal)):
        first_seat = int(np.flatnonzero(tables[played.table[row]] == 0)[0])
        points = played.points[row]
        per_deal[played.deal[row]] += (points[first_seat] - points[1 - first_seat]) / 2
    assert n == len(deals)
    assert diff == pytest.approx(per_deal.mean())
    assert ci == pytest.approx(1.96 * per_deal.std(ddof=1) / np.sqrt(len(deals)))


def test_round_robin_reports_every_pair_and_a_rating_per_policy() -> None:
    config = parse_config(dict(policies=["random", "heaviest", "blocker"], deals=100, matches=5, **QUIET))
    result = run_arena(config)
    assert [(p.first, p.second) for p in result.pairs] == [
        ("random", "heaviest"), ("random", "blocker"), ("heaviest", "blocker"),
    ]  # fmt: skip
    assert result.rounds == 3 * 2 * 100
    ratings = {p.name: p.rating for p in result.policies}
    assert ratings["blocker"] > ratings["random"]
    assert all(p.match_win is not None for p in result.policies)
    assert schedule_pairs(3, "head_to_head") == [(0, 1), (0, 2)]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"dels": 10}, "unknown key 'dels' in the arena config; did you mean 'deals'?"),
        ({"output": {"jsn": False}}, "unknown key 'output.jsn' in output; did you mean 'json'?"),
        ({"deals": "many"}, "deals must be an integer, got 'many'"),
        ({"deals": True}, "deals must be an integer, got True"),
        ({"policies": "strong"}, "policies must be a list"),
        ({"preset": "blok"}, "unknown preset 'blok'.*did you mean 'block'"),
        ({"preset": "partnership", "players": 2}, "played by 4 players"),
        ({"rules": {"targt": 5}}, "did you mean 'target'"),
        (
            {"format": "roundrobin"},
            "format must be one of round_robin, head_to_head.*did you mean 'round_robin'",
        ),
        ({"policies": ["strong", "heavyest"]}, "unknown bot 'heavyest'.*did you mean 'heaviest'"),
        ({"bots": {"pimc": {"samples": 2}}}, "unknown key 'bots.pimc'.*policies"),
        ({"policies": ["strong", "pimc"], "bots": {"pimc": {"sample": 2}}}, "bots.pimc:.*sample"),
        ({"deals": 0}, "deals must be at least 1"),
    ],
)
def test_config_errors_name_the_key(raw: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(raw)


def test_overrides_reach_nested_keys_and_are_checked(tmp_path) -> None:
    path = tmp_path / "arena.yaml"
    path.write_text("preset: draw\npolicies: [strong, random]\nbots: {}\n")
    config = load_config(
        path, ["deals=7", "output.plot=false", "policies=[pimc,strong]", "bots.pimc.samples=3"]
    )
    assert (config.deals, config.output.plot, config.policies) == (7, False, ["pimc", "strong"])
    assert config.bots == {"pimc": {"samples": 3}}
    with pytest.raises(ConfigError, match=r"unknown key 'output\.dirr'.*did you mean 'dir'"):
        load_config(path, ["output.dirr=x"])
    with pytest.raises(ConfigError, match=r"key\.sub=value"):
        load_config(path, ["deals"])


def test_command_line_writes_json_csv_and_plot(tmp_path) -> None:
    from agents.arena.evaluate import main

    code = main(
        ["policies=[strong,heaviest,random]", "deals=60", "matches=4", "progress=false",
         f"output.dir={tmp_path}", "output.name=run"]
    )  # fmt: skip
    assert code == 0
    saved = json.loads((tmp_path / "run.json").read_text())
    assert saved["preset"] == "block" and len(saved["pairs"]) == 3
    assert (tmp_path / "run.csv").read_text().startswith("first,second,deals,diff,ci")
    assert (tmp_path / "run.png").read_bytes()[:4] == b"\x89PNG"
    assert main(["configs/arena/bots.yaml", "dealz=3"]) == 2


def test_checkpoints_are_named_by_file_stem_unless_that_is_ambiguous() -> None:
    class Named:
        def __init__(self, name: str) -> None:
            self.name = name

    specs = ["runs/a/checkpoints/best.pt", "strong", "checkpoints/block-2p-ppo.pt"]
    assert display_names(specs, [Named("best"), Named("strong"), Named("block-2p-ppo")]) == [
        "best",
        "strong",
        "block-2p-ppo",
    ]
    assert display_names(
        ["runs/a/best.pt", "runs/b/best.pt", "random"], [Named("best")] * 2 + [Named("x")]
    ) == [
        "runs/a/best.pt",
        "runs/b/best.pt",
        "random",
    ]
    # an imported object by its own name, a bot variant by its spec
    assert display_names(["mine.py:play", "pimc_net"], [Named("lightest"), Named("pimc")]) == [
        "lightest",
        "pimc_net",
    ]
