"""Game records: the replay() contract, its errors, and the replay CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from domino_env.engine.errors import IllegalMoveError
from domino_env.tools.records import replay

ROOT = Path(__file__).resolve().parent.parent
# Seed 001's line of play: 6-6 opens (forced), 6-3 on the right, 3-3, 3-1.
SEED001 = {
    "preset": "idrd_draw",
    "players": 2,
    "hands": [
        ["6-6", "3-3", "0-0", "1-0", "2-2", "4-2", "5-4"],
        ["6-3", "3-1", "5-5", "4-4", "2-1", "5-0", "4-0"],
    ],
    "moves": ["6-6", "6-3:right", "3-3", "3-1"],
}


def with_changes(**changes) -> dict:
    out = json.loads(json.dumps(SEED001))
    out.update(changes)
    return out


def test_output_keys_and_values_in_order():
    out = replay(SEED001)
    assert list(out) == [
        "end",
        "game_over",
        "winner",
        "points",
        "scores",
        "draws",
        "hands",
        "ends",
        "to_play",
        "legal",
    ]
    assert out == {
        "end": None,
        "game_over": False,
        "winner": None,
        "points": [0, 0],
        "scores": [0, 0],
        "draws": [0, 0],
        "hands": [["0-0", "1-0", "2-2", "4-2", "5-4"], ["4-0", "5-0", "2-1", "4-4", "5-5"]],
        "ends": {"left": 6, "right": 1},
        "to_play": 0,
        "legal": ["1-0:right"],
    }


def test_tiles_may_be_written_in_either_order():
    hands = [[t[::-1] for t in hand] for hand in SEED001["hands"]]
    assert replay(with_changes(hands=hands, moves=["6-6", "3-6:right", "3-3", "1-3"])) == replay(SEED001)


def test_opening_tile_is_laid_as_written():
    record = with_changes(opener=1, moves=["3-6"])
    assert replay(record)["ends"] == {"left": 3, "right": 6}
    assert replay(with_changes(opener=1, moves=["6-3"]))["ends"] == {"left": 6, "right": 3}


def test_end_may_be_omitted_only_when_the_tile_fits_one_end():
    with pytest.raises(IllegalMoveError, match=r"'6-3'.*seat 1.*several ends \(left, right\)"):
        replay(with_changes(moves=["6-6", "6-3"]))


def test_illegal_move_names_the_move_the_seat_and_the_legal_moves():
    with pytest.raises(IllegalMoveError) as caught:
        replay(with_changes(moves=["6-6", "5-5:left"]))
    message = str(caught.value)
    assert "'5-5:left'" in message
    assert "seat 1" in message
    assert "6-3:left, 6-3:right" in message
    assert isinstance(caught.value, ValueError)


def test_forced_opening_rejects_another_tile():
    with pytest.raises(IllegalMoveError, match=r"'3-3' for seat 0: legal moves are 6-6$"):
        replay(with_changes(moves=["3-3"]))


def test_a_tile_not_in_hand_is_illegal():
    with pytest.raises(IllegalMoveError, match="'4-4:right' for seat 0"):
        replay(with_changes(moves=["6-6", "6-3:right", "4-4:right"]))


def test_boneyard_defaults_to_the_undealt_tiles_in_canonical_order():
    record = {
        "preset": "idrd_draw",
        "players": 2,
        "hands": [
            ["6-6", "5-5", "1-0", "2-0", "3-0", "4-0", "5-0"],
            ["2-1", "3-1", "4-1", "5-1", "3-2", "4-2", "5-2"],
        ],
        "moves": ["6-6"],
    }
    # Undealt in canonical order: 0-0, then 0-6, which fits: s1 draws 2.
    out = replay(record)
    assert out["draws"] == [0, 2]
    assert out["legal"] == ["6-0:left", "6-0:right"]
    record["boneyard"] = [
        "1-1",
        "0-0",
        "6-0",
        "6-1",
        "6-2",
        "2-2",
        "3-3",
        "4-3",
        "5-3",
        "6-3",
        "4-4",
        "5-4",
        "6-4",
        "6-5",
    ]
    assert replay(record)["draws"] == [0, 3]


def test_team_presets_report_points_and_scores_per_team():
    hands = [
        ["6-6", "3-2", "6-0", "5-5", "5-3", "4-3", "0-0"],
        ["5-4", "1-0", "4-0", "5-0", "1-1", "2-1", "3-1"],
        ["6-2", "6-3", "6-1", "4-4", "5-2", "3-0", "4-2"],
        ["6-4", "6-5", "4-1", "5-1", "2-2", "2-0", "3-3"],
    ]
    moves = ["6-6", "6-2:right", "6-4:left", "3-2:right", "5-4:left", "6-3:right", "6-5:left", "6-0:left"]
    moves += ["1-0:left", "6-1:left"]
    out = replay({"preset": "partnership", "players": 4, "hands": hands, "moves": moves, "scores": [10, 5]})
    assert out["points"] == [0, 49]
    assert out["scores"] == [10, 54]
    assert out["draws"] == [0, 0, 0, 0]
    assert len(out["hands"]) == 4


def test_a_record_without_moves_is_the_opening_position():
    out = replay({k: v for k, v in SEED001.items() if k != "moves"})
    assert out["to_play"] == 0
    assert out["legal"] == ["6-6"]  # the highest double is forced
    assert out["end"] is None and out["ends"] == {}


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ([1, 2], "must be a JSON object"),
        (with_changes(hand=[]), "unknown record key 'hand'; did you mean 'hands'"),
        ({k: v for k, v in SEED001.items() if k != "hands"}, "missing the required key 'hands'"),
        (with_changes(preset="idrd"), "unknown preset 'idrd'"),
        (with_changes(preset="spanish_pairs"), "played by 4 players, not 2"),
        (with_changes(players="2"), "'players' must be a number"),
        (
            with_changes(hands=[["6-6", "3-3", "0-0", "1-0", "2-2", "4-2", "5-7"], SEED001["hands"][1]]),
            r"hands\[0\]\[6\]",
        ),
        (
            with_changes(hands=[["6-6", "3-3", "0-0", "1-0", "2-2", "4-2", "6 3"], SEED001["hands"][1]]),
            "bad tile '6 3'",
        ),
        (
            with_changes(hands=[["6-6", "3-3", "0-0", "1-0", "2-2", "4-2", "3-6"], SEED001["hands"][1]]),
            "6-3 appears twice",
        ),
        (with_changes(hands=[SEED001["hands"][0][:6], SEED001["hands"][1]]), "seat 0 holds 6 tiles"),
        (with_changes(hands=SEED001["hands"][:1]), "needs 2 hands, got 1"),
        (with_changes(boneyard=["1-1"]), "missing: 2-0, 3-0, 6-0, 4-1"),
        (with_changes(opener=2), "opener 2 out of range"),
        (with_changes(scores=[0, 0, 0]), "scores has 3 entries"),
        (with_changes(rules={"targett": 50}), "did you mean 'target'"),
        (with_changes(rules={"players": 3}), "cannot override 'players'"),
        (with_changes(moves=["6-6", "6-3:middle"]), "bad end 'middle'"),
        (with_changes(moves=["6-6:left"]), "opening move is written without an end"),
        (with_changes(moves="6-6"), "'moves' must be a list"),
    ],
)
def test_bad_records_raise_value_error_naming_the_problem(record, message):
    with pytest.raises(ValueError, match=message):
        replay(record)


def test_moves_after_the_round_ended_are_an_error():
    hands = [
        ["6-6", "5-5", "4-4", "0-0", "1-0", "2-0", "4-3"],
        ["3-0", "4-0", "5-0", "2-1", "3-1", "4-1", "2-2"],
    ]
    record = {"preset": "idrd_block", "players": 2, "hands": hands, "moves": ["6-6", "5-5:left"]}
    with pytest.raises(ValueError, match=r"move 2 '5-5:left' comes after the round ended \(blocked\)"):
        replay(record)


def test_rules_overrides_apply():
    # Seed 001's closed five game: s0 scores 20, which ends a game played to 20.
    hands = [
        ["5-5", "3-2", "5-4", "6-5", "1-0", "6-3", "4-1"],
        ["5-2", "5-3", "6-4", "5-0", "5-1", "6-6", "4-4"],
    ]
    moves = ["5-5", "5-2:right", "2-3:right", "3-5:right", "5-4:right", "4-6:right", "6-5:right"]
    moves += ["5-0:left", "0-1:left", "1-5:left"]
    record = {"preset": "idrd_draw", "players": 2, "hands": hands, "opener": 0, "moves": moves}
    assert replay(record)["game_over"] is False
    record["rules"] = {"target": 20}
    out = replay(record)
    assert (out["end"], out["scores"], out["game_over"]) == ("closed", [20, 0], True)


# -- the CLI ---------------------------------------------------------------------------
def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "domino_env", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_cli_replay_prints_the_result_as_json(tmp_path):
    path = tmp_path / "game.json"
    path.write_text(json.dumps(SEED001))
    done = run_cli("replay", str(path))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == replay(SEED001)
    assert done.stdout.startswith('{\n  "end": null,')


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "error: Expecting property name"),
        (json.dumps(with_changes(moves=["5-5"])), "error: move 1: illegal move '5-5' for seat 0"),
        (json.dumps(with_changes(preset="dominoes")), "error: unknown preset 'dominoes'"),
    ],
)
def test_cli_bad_file_exits_2_with_a_one_line_message(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    done = run_cli("replay", str(path))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith(message)
    assert done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


def test_cli_missing_file_exits_2(tmp_path):
    done = run_cli("replay", str(tmp_path / "nope.json"))
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and "nope.json" in done.stderr
    assert "Traceback" not in done.stderr


def test_domino_replay_help_describes_domino_replay(capsys, monkeypatch):
    from domino_env.__main__ import main

    monkeypatch.setattr(sys, "argv", ["/venv/bin/domino-replay", "--help"])  # as the console script starts
    with pytest.raises(SystemExit):
        main()
    shown = capsys.readouterr().out
    assert shown.startswith("usage: domino-replay FILE.json")
    assert "Replay a game record" in shown and "python -m domino_env" not in shown
    with pytest.raises(SystemExit):
        main(["replay", "--help"], prog="domino-replay")
    assert capsys.readouterr().out.startswith("usage: domino-replay replay [-h] FILE.json")
    monkeypatch.setattr(sys, "argv", [str(ROOT / "domino_env" / "__main__.py"), "--help"])  # python -m
    with pytest.raises(SystemExit):
        main()
    assert capsys.readouterr().out.startswith("usage: python -m domino_env")


def test_the_docs_say_which_record_keys_are_required_as_the_code_does():
    from domino_env.tools.records import RECORD_KEYS, REQUIRED_KEYS

    table = [
        line.split("|")[1:4]
        for line in (ROOT / "docs" / "records.md").read_text().splitlines()
        if line.startswith("| `")
    ]
    required = {}
    for keys, needed, meaning in table:
        for key in keys.replace("`", "").replace(",", " ").split():
            if key in RECORD_KEYS:
                required[key] = needed.strip() == "yes"
                if key in REQUIRED_KEYS:  # a required key has no default to describe
                    assert "default" not in meaning, f"{key} is required, yet: {meaning.strip()}"
    assert sorted(required) == sorted(RECORD_KEYS)
    assert {key for key, yes in required.items() if yes} == set(REQUIRED_KEYS)
    for key in REQUIRED_KEYS:
        with pytest.raises(ValueError, match=f"missing the required key '{key}'"):
            replay({k: v for k, v in SEED001.items() if k != key})
    assert replay({k: v for k, v in SEED001.items() if k != "moves"})["legal"] == ["6-6"]
