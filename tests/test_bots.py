"""Heuristic bots: they beat random where they are meant to, play legally everywhere, answer a
batch as they answer its rows one by one, and read nothing but the observation and mask."""

from __future__ import annotations

import numpy as np
import pytest

from agents.arena.duplicate import duplicate_deals, play, rotations
from agents.arena.stats import paired_difference, seated
from agents.arena.tournament import seatings
from agents.bots.features import Board, Moves
from agents.bots.registry import BOT_NAMES, make_bot, reveal_to_cheater
from domino_env import DominoCore, Rules
from domino_env.engine.rules import all_configurations

HEURISTICS = ("heaviest", "doubles", "diverse", "blocker", "fives", "strong")
MEANT_FOR = [
    *[
        (bot, preset, 2)
        for bot in ("heaviest", "doubles", "diverse", "blocker")
        for preset in ("block", "draw")
    ],
    ("blocker", "partnership", 4),
    ("fives", "all_fives", 2),
    *[
        ("strong", preset, p)
        for preset, p in (("block", 2), ("draw", 2), ("all_fives", 2), ("partnership", 4))
    ],
]
CONFIGS = all_configurations()


def duplicate_difference(rules: Rules, first: str, second: str, deals: int, seed: int) -> tuple[float, float]:
    deal_list, openers = duplicate_deals(rules, deals, seed)
    bots = [make_bot(first, rules, seed=1), make_bot(second, rules, seed=2)]
    tables, pair = seatings(rotations(rules), [(0, 1)])
    run = seated(rules, play(rules, bots, tables, deal_list, openers), tables, pair)
    diff, ci, _ = paired_difference(run, 0, 0, 1, deals)
    return diff, ci


@pytest.mark.parametrize(
    ("bot", "preset", "players"), MEANT_FOR, ids=[f"{b}-{p}{n}p" for b, p, n in MEANT_FOR]
)
def test_bot_beats_random_where_it_is_meant_to(bot: str, preset: str, players: int) -> None:
    diff, ci = duplicate_difference(Rules.preset(preset, players), bot, "random", deals=800, seed=11)
    assert diff - ci > 0, f"{bot} vs random on {preset}: {diff:+.2f} ± {ci:.2f}"


def mid_round(rules: Rules, games: int, seed: int) -> DominoCore:
    rng = np.random.default_rng(seed)
    core = DominoCore(rules, games, seed=seed, episode="match")
    for _ in range(int(rng.integers(1, 12))):
        core.step(core.random_actions(rng))
    return core


SEARCH_OPTIONS = {"pimc": {"samples": 2}, "best_response": {"target": "strong", "samples": 2}}
"""The search bots' options in these loops: a small budget; best_response needs its target."""


@pytest.mark.parametrize(("name", "players"), CONFIGS, ids=[f"{n}-{p}p" for n, p in CONFIGS])
def test_every_bot_plays_legal_moves_in_batches_as_row_by_row(name: str, players: int) -> None:
    rules = Rules.preset(name, players)
    core = mid_round(rules, 24, seed=players)
    obs, mask = core.observe(), core.legal_mask()
    rows = np.arange(len(mask))
    for bot_name in BOT_NAMES:
        options = SEARCH_OPTIONS.get(bot_name, {})
        bot = make_bot(bot_name, rules, seed=0, **options)
        reveal_to_cheater(bot, core, rows)
        actions = bot(obs, mask)
        assert mask[rows, actions].all(), bot_name
        if bot_name in HEURISTICS:
            single = [bot(obs[i : i + 1], mask[i : i + 1])[0] for i in rows]
            assert (actions == single).all(), bot_name


def twin_positions(rules: Rules, games: int, seed: int) -> tuple[DominoCore, DominoCore, np.ndarray]:
    """Two cores whose deals differ only in tiles the seat to move cannot see, after the same moves.

    Deal two is deal one with every tile hidden from the seat to move (after the
    moves) shuffled among the places of the hidden tiles. Games where that
    changes what the seat saw (another pass, draw or move) are dropped; returns
    the kept games, where the two observations are identical.
    """
    rng = np.random.default_rng(seed)
    deals, openers = duplicate_deals(rules, games, seed)
    rows = np.arange(games)
    first = DominoCore(rules, games, deals=deals, openers=openers, first_deal=rows)
    moves, kept = [], np.ones(games, dtype=bool)
    for _ in range(int(rng.integers(1, rules.hand_size))):
        moves.append(first.random_actions(rng))
        kept &= ~first.step(moves[-1]).round_over
    seat = first.to_play.copy()
    twin = deals.copy()
    for g in rows:
        seen = int(first.hands[g, seat[g]] | first.table[g])
        hidden = [i for i, t in enumerate(twin[g]) if not seen >> int(t) & 1]
        twin[g, hidden] = rng.permutation(twin[g, hidden])
    second = DominoCore(rules, games, deals=twin, openers=openers, first_deal=rows)
    for actions in moves:
        legal = second.legal_mask()[rows, actions]
        kept &= legal
        kept &= ~second.step(np.where(legal, actions, second.legal_mask().argmax(axis=1))).round_over
    kept &= (second.to_play == seat) & (first.observe() == second.observe()).all(axis=1)
    return first, second, np.flatnonzero(kept)


@pytest.mark.parametrize(
    ("name", "players"), [("block", 2), ("draw", 2), ("all_fives", 2), ("partnership", 4)]
)
def test_bots_never_read_hidden_state(name: str, players: int) -> None:
    """Same observation, different hidden tiles: every honest bot plays the same; the cheat does not."""
    rules = Rules.preset(name, players)
    first, second, kept = twin_positions(rules, 2000, seed=players)
    assert len(kept) >= 100
    assert (first.hands[kept] != second.hands[kept]).any(axis=1).mean() > 0.5
    kept = kept[first.legal_mask()[kept].sum(axis=1) > 1][:80]  # a choice to make; few enough for search
    obs, mask = first.observe()[kept], first.legal_mask()[kept]
    assert (obs == second.observe()[kept]).all() and (mask == second.legal_mask()[kept]).all()
    for bot_name in BOT_NAMES:
        options = SEARCH_OPTIONS.get(bot_name, {})
        answers = []
        for core in (first, second):
            bot = make_bot(bot_name, rules, seed=0, **options)
            reveal_to_cheater(bot, core, kept)
            answers.append(bot(obs, mask))
        if bot_name == "omniscient":
            assert (answers[0] != answers[1]).any(), "the check must catch a bot that reads the core"
        else:
            assert (answers[0] == answers[1]).all(), bot_name


@pytest.mark.parametrize(("name", "players"), CONFIGS, ids=[f"{n}-{p}p" for n, p in CONFIGS])
def test_move_features_predict_what_the_core_does(name: str, players: int) -> None:
    """The ends (spinner sides included) and the fives a move scores, as the core then shows them."""
    rules = Rules.preset(name, players)
    core = mid_round(rules, 300, seed=7)
    obs, mask = core.observe(), core.legal_mask()
    actions = core.random_actions(np.random.default_rng(0))
    chosen = np.zeros_like(mask)
    chosen[np.arange(len(mask)), actions] = True
    moves = Moves(Board(rules, obs), chosen)
    ends_after, fives_now = moves.ends_after, moves.fives_now
    result = core.step(actions)
    going = ~result.round_over
    assert (ends_after[going] == core.ends[going]).all()
    assert (fives_now == result.fives).all()
