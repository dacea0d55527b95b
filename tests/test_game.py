"""The fast one-game engine (domino_env.engine.game) against the reference engine, move for move.

Every preset and player count: 1,000 random rounds and 30 whole games to the target,
compared after every move on the seat to move, the legal actions, every seat's
observation, draws and passes, and at each round end on how it ended, the winner,
points, scores and the game result. Then seeding, explicit deals, records and
illegal moves.
"""

from __future__ import annotations

import random
from collections import deque

import numpy as np
import pytest

from domino_env.engine.errors import IllegalMoveError
from domino_env.engine.game import Game
from domino_env.engine.reference import Match, Round, RoundResult, deal_to_hands
from domino_env.engine.rules import CHANCE_OPENERS, Rules, all_configurations
from domino_env.engine.tiles import tile_index
from domino_env.tools.records import replay

CONFIGS = all_configurations()
ROUNDS = 1000
GAMES = 30


class Disagreement(AssertionError):
    """The fast engine and the reference differ."""


def expect(where: str, what: str, ours, theirs) -> None:
    if ours != theirs:
        raise Disagreement(f"{where}: {what} game={ours!r} reference={theirs!r}")


def compare_position(game: Game, ref: Round, where: str) -> None:
    """Seat to move, legal actions, draws, passes and every seat's observation."""
    expect(where, "to_play", game.to_play, ref.to_play)
    expect(where, "legal", list(game.legal_actions()), ref.legal_actions())
    expect(where, "draws", game.draws, ref.draws)
    expect(where, "passes", game.passes, ref.passes)
    for seat in range(game.players):
        ours, theirs = game.observation(seat), ref.observation(seat)
        if ours.tobytes() != theirs.tobytes():
            diff = np.flatnonzero(ours != theirs).tolist()
            raise Disagreement(
                f"{where}: observation of seat {seat} differs at {diff}: game {ours[diff].tolist()} "
                f"reference {theirs[diff].tolist()}; events {ref.events}"
            )


def compare_end(end: RoundResult | None, ref: Round, where: str) -> None:
    expect(where, "round over", end is not None, ref.over)
    if end is not None:
        ours = (end.end, end.winner, list(end.points), list(end.scores), end.game_over, end.game_winner)
        theirs = (ref.end, ref.winner, ref.points, ref.scores, ref.game_over, ref.game_winner)
        expect(where, "round end", ours, theirs)


def reference_for(game: Game) -> Round:
    """The reference round for the game's current deal (chance openers given as dealt)."""
    hands, boneyard = deal_to_hands(game.rules, game.deal)
    chance = game.rules.first_opener in CHANCE_OPENERS
    return Round(game.rules, hands, boneyard, game.opener if chance else None)


def check_rounds(rules: Rules, seed: int, rounds: int) -> dict[str, int]:
    """Play ``rounds`` random rounds in both engines; return how they ended."""
    game, chooser, ends = Game(rules, seed=seed), random.Random(seed), {}
    for r in range(rounds):
        game.reset()
        ref = reference_for(game)
        for move in range(1, 100):
            where = f"round {r} move {move}"
            compare_position(game, ref, where)
            action = chooser.choice(ref.legal_actions())
            end = game.step(action)
            ref.step(action)
            compare_end(end, ref, where)
            if end is not None:
                ends[end.end] = ends.get(end.end, 0) + 1
                compare_position(game, ref, f"{where} (round over)")
                break
    return ends


def check_matches(rules: Rules, seed: int, games: int) -> int:
    """Play ``games`` whole games in both engines (the reference Match fed the same deals)."""
    game, chooser, rounds = Game(rules, "match", seed=seed), random.Random(seed), 0
    pending: deque = deque()
    for g in range(games):
        game.reset()
        pending.append((game.deal, game.opener))
        match = Match(rules, pending.popleft)
        while not game.over:
            where = f"game {g} round {match.rounds_played} move {game.num_placed + 1}"
            compare_position(game, match.round, where)
            action = chooser.choice(game.legal_actions())
            end = game.step(action)
            if end is not None and not game.over:
                pending.append((game.deal, game.opener))
            finished = match.round
            match.step(action)
            compare_end(end, finished, where)
            rounds += end is not None
        expect(f"game {g}", "game over", True, match.over)
        expect(f"game {g}", "winner", game.results[-1].game_winner, match.winner)
        expect(f"game {g}", "rounds", len(game.results), match.rounds_played)
        compare_position(game, match.round, f"game {g} end")
    return rounds


@pytest.mark.parametrize(("preset", "players"), CONFIGS)
def test_rounds_agree_with_the_reference(preset: str, players: int) -> None:
    ends = check_rounds(Rules.preset(preset, players), seed=players * 31 + len(preset), rounds=ROUNDS)
    assert sum(ends.values()) == ROUNDS


@pytest.mark.parametrize(("preset", "players"), CONFIGS)
def test_matches_agree_with_the_reference(preset: str, players: int) -> None:
    rounds = check_matches(Rules.preset(preset, players), seed=players + 5, games=GAMES)
    assert rounds > GAMES


def test_every_kind_of_round_end_is_compared() -> None:
    blocking = check_rounds(Rules.preset("idrd_block", 3), seed=3, rounds=200)
    closing = check_rounds(Rules.preset("idrd_draw", 2), seed=3, rounds=200)
    assert {"domino", "blocked", "closed"} <= set(blocking) | set(closing)
    assert check_matches(Rules.preset("muggins"), seed=2, games=4) > 0
    muggins = Game(Rules.preset("muggins"), "match", seed=2)
    chooser = random.Random(0)
    ends = set()
    for _ in range(20):
        muggins.reset()
        while not muggins.over:
            muggins.step(chooser.choice(muggins.legal_actions()))
        ends.add(muggins.results[-1].end)
    assert "target" in ends


def test_a_disagreement_is_reported() -> None:
    game = Game(Rules.preset("block", 2), seed=0)
    ref = reference_for(game)
    compare_position(game, ref, "start")
    game.core.views.seat_rows[0, 0, 5] += 1  # corrupt seat 0's tile-owner entry of tile 5
    with pytest.raises(Disagreement, match="observation of seat 0 differs at"):
        compare_position(game, ref, "start")


def test_same_seed_same_game_and_other_seeds_differ() -> None:
    def play(seed: int) -> list:
        game, chooser, trace = Game(Rules.preset("draw", 3), "match", seed=seed), random.Random(0), []
        while not game.over:
            trace.append((game.to_play, game.legal_actions(), game.observation(game.to_play).tobytes()))
            game.step(chooser.choice(game.legal_actions()))
        return [*trace, game.results]

    assert play(7) == play(7)
    assert play(7) != play(8)
    game = Game(Rules.preset("draw", 3), seed=7)
    first = list(game.deal)
    game.reset()
    assert game.deal != first
    game.reset(seed=7)
    assert game.deal == first


def test_explicit_deal_opener_and_scores() -> None:
    rules = Rules.preset("block", 2)
    deal = list(range(28))[::-1]
    game = Game(rules)
    game.reset(deal=deal, opener=1, scores=[40, 12])
    ref = Round(rules, *deal_to_hands(rules, deal), opener=1, scores=[40, 12])
    compare_position(game, ref, "explicit deal")
    assert game.opener == 1 and game.scores == [40, 12]
    with pytest.raises(ValueError, match="appears twice"):
        game.reset(deal=[0] * 28, opener=0)
    with pytest.raises(ValueError, match="an opener must be given"):
        game.reset(deal=deal)
    with pytest.raises(ValueError, match="one per seat"):
        game.reset(deal=deal, opener=0, scores=[1, 2, 3])


def test_forced_opening_tile_is_the_only_legal_action() -> None:
    game = Game(Rules.preset("partnership"), seed=1)
    assert game.legal_actions() == (27,)  # 6-6
    assert game.legal_moves() == ["6-6"]
    assert game.hands[game.to_play] >> 27 & 1


def test_record_round_trip_continues_the_same_position() -> None:
    rules = Rules.preset("all_fives", 3, target=60)
    game, chooser = Game(rules, seed=4), random.Random(4)
    for _ in range(6):
        game.step(chooser.choice(game.legal_actions()))
    record = game.round_record()
    assert record["rules"] == {"target": 60}
    again = Game(rules)
    again.reset_from_record(record)
    for seat in range(3):
        assert np.array_equal(again.observation(seat), game.observation(seat))
    summary = replay(record)
    assert summary["to_play"] == again.to_play
    assert summary["legal"] == again.legal_moves()
    assert summary["scores"] == again.scores


def test_a_record_opening_low_number_left_is_kept() -> None:
    record = {
        "preset": "block",
        "players": 2,
        "opener": 0,
        "hands": [
            ["6-3", "3-1", "5-5", "4-4", "2-1", "5-0", "4-0"],
            ["6-6", "3-3", "0-0", "1-0", "2-2", "4-2", "5-4"],
        ],
        "moves": ["3-6", "6-6:right"],
    }
    game = Game(Rules.preset("block", 2))
    game.reset_from_record(record)
    assert game.ends[:2] == [3, 6]
    assert game.legal_moves() == replay(record)["legal"]
    assert game.round_record()["moves"] == ["3-6", "6-6:right"]


def test_record_errors() -> None:
    game = Game(Rules.preset("block", 2))
    record = {"preset": "draw", "players": 2, "opener": 0, "hands": [["6-6"] * 7, ["5-5"] * 7]}
    with pytest.raises(ValueError, match="appears twice"):
        game.reset_from_record(record)
    other = Game(Rules.preset("draw", 2), seed=0).round_record()
    with pytest.raises(ValueError, match=r"rules differ.*drawing: record True, game False"):
        game.reset_from_record(other)
    good = Game(Rules.preset("block", 2), seed=1).round_record()
    not_held = good["hands"][1 - good["opener"]][0]
    with pytest.raises(IllegalMoveError, match=f"move 1: illegal move '{not_held}' for seat"):
        game.reset_from_record({**good, "moves": [not_held]})


def test_a_finished_round_cannot_be_the_start() -> None:
    game, chooser = Game(Rules.preset("block", 2), seed=9), random.Random(9)
    record = game.round_record()
    while not game.over:
        game.step(chooser.choice(game.legal_actions()))
    record["moves"] = game.round_record()["moves"]
    with pytest.raises(ValueError, match="end the round"):
        Game(Rules.preset("block", 2)).reset_from_record(record)


def test_illegal_action_names_move_seat_and_legal_moves_and_changes_nothing() -> None:
    game = Game(Rules.preset("block", 2), seed=3)
    before = [game.observation(s).tobytes() for s in range(2)]
    seat, legal = game.to_play, game.legal_moves()
    illegal = next(a for a in range(28) if a not in game.legal_actions())
    with pytest.raises(IllegalMoveError) as info:
        game.step(illegal)
    message = str(info.value)
    assert f"for seat {seat}" in message and ", ".join(legal) in message
    assert game.action_to_move(illegal) in message
    with pytest.raises(IllegalMoveError, match=r"outside 0\.\.55"):
        game.step(99)
    with pytest.raises(IllegalMoveError):
        game.step(1.5)
    assert [game.observation(s).tobytes() for s in range(2)] == before
    assert game.legal_moves() == legal


def test_moves_and_actions_convert_both_ways() -> None:
    game = Game(Rules.preset("all_fives", 2), seed=0)
    opening = game.legal_actions()[0]
    assert game.action_to_move(opening).count(":") == 0
    assert game.move_to_action(game.action_to_move(opening)) == opening
    game.step(opening)
    for action in game.legal_actions():
        move = game.action_to_move(action)
        assert ":" in move and game.move_to_action(move) == action
    assert game.move_to_action("6-3:down") == 3 * 28 + tile_index(6, 3)
    with pytest.raises(ValueError, match="bad tile"):
        game.move_to_action("7-1:left")
    with pytest.raises(ValueError, match="no 'up' end"):
        Game(Rules.preset("block", 2), seed=0).move_to_action("6-3:up")


def test_observation_is_a_copy() -> None:
    game = Game(Rules.preset("block", 2), seed=0)
    obs = game.observation(0)
    obs[:] = 99
    assert game.observation(0).max() < 99
    assert game.observation(0).dtype == np.int16
