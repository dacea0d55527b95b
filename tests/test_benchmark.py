"""The benchmark module and scripts/bench_env.py: every engine gives a sane row, briefly."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from domino_env.engine.rules import Rules
from domino_env.tools.benchmark import ENGINES, Measurement, format_table, main, measure

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "bench_env.py"


@pytest.mark.parametrize("engine", ENGINES)
def test_every_engine_measures_moves_in_the_time_given(engine: str) -> None:
    rules = Rules.preset("block", 2)
    rows = measure(engine, rules, seconds=0.05, seed=0, num_envs=(16, 32), vector_envs=(8,))
    if engine == "openspiel" and not rows:
        pytest.skip("OpenSpiel is not installed")
    assert len(rows) == {"core": 2}.get(engine, 1)
    for row in rows:
        assert isinstance(row, Measurement) and (row.preset, row.players) == ("block", 2)
        assert row.moves > 0 and row.seconds >= 0.05
        assert row.moves_per_sec == pytest.approx(row.moves / row.seconds)
        assert (row.peak_memory_mib is not None) == (engine == "core")
    assert [r.num_envs for r in rows] == {"core": [16, 32], "vector": [8]}.get(engine, [1])
    assert rows[0].engine.split()[0] in format_table(rows)


def test_unknown_engines_and_openspiel_off_its_preset_give_no_rows() -> None:
    with pytest.raises(ValueError, match="engine must be one of"):
        measure("gpu", Rules.preset("block", 2), seconds=0.01)
    assert measure("openspiel", Rules.preset("draw", 3), seconds=0.01) == []


def test_bench_env_script_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("bench_env", SCRIPT)
    assert spec and spec.loader
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    argv = [
        "--engines",
        "aec",
        "aec-raw",
        "--preset",
        "draw",
        "--players",
        "3",
        "--seconds",
        "0.05",
        "--json",
    ]
    assert script.main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    assert sorted(rows) == ["pettingzoo env()/draw/3p/N=1", "pettingzoo raw_env/draw/3p/N=1"]
    assert all(row["moves"] > 0 for row in rows.values())


def test_repeated_turns_add_up_and_print_the_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--engines", "game", "aec", "aec-raw", "--seconds", "0.3", "--repeat", "3"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.err.count("measured aec-raw block 2p") == 3  # three turns each, in turn
    assert "pettingzoo env() / raw_env (2p block):" in captured.out
    with pytest.raises(SystemExit):
        main(["--repeat", "0"])
