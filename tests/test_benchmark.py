"""The benchmark module and scripts/bench_env.py: every engine gives a sane row, briefly."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from domino_env.engine.rules import Rules
from domino_env.tools.benchmark import (
    ENGINES,
    OPENSPIEL_ENGINE,
    OPENSPIEL_MISSING,
    Measurement,
    block_ratios,
    format_table,
    main,
    measure,
)

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


def test_without_openspiel_the_command_says_so_and_how_to_install_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # ``import pyspiel`` now fails, as when missing
    assert main(["--engines", "openspiel", "aec-raw", "--seconds", "0.05"]) == 0
    captured = capsys.readouterr()
    assert "measured openspiel" not in captured.err and "measured aec-raw block 2p" in captured.err
    assert OPENSPIEL_MISSING in captured.err and "pip install open_spiel" in OPENSPIEL_MISSING
    assert "open_spiel" not in captured.out and "OpenSpiel" not in captured.out
    assert main(["--engines", "openspiel", "--preset", "draw", "--seconds", "0.05"]) == 0
    assert "openspiel: no row for draw 2p" in capsys.readouterr().err


def test_seeded_and_unseeded_pettingzoo_loops_are_put_against_openspiel() -> None:
    def row(engine: str, rate: float) -> Measurement:
        return Measurement(engine, "block", 2, 1, int(rate), 1.0, rate)

    rows = [
        row("pettingzoo raw_env", 40_000),
        row("pettingzoo raw_env reset(seed=i)", 30_000),
        row("pettingzoo env()", 32_000),
        row("pettingzoo env() reset(seed=i)", 25_000),
        row(OPENSPIEL_ENGINE, 8_000),
    ]
    assert block_ratios(rows) == [
        "pettingzoo raw_env / OpenSpiel (2p block): 5.0x",
        "pettingzoo raw_env reset(seed=i) / OpenSpiel (2p block): 3.8x",
        "pettingzoo env() / OpenSpiel (2p block): 4.0x",
        "pettingzoo env() reset(seed=i) / OpenSpiel (2p block): 3.1x",
        "pettingzoo raw_env: reset(seed=i) / reset() (2p block): 0.75x",
        "pettingzoo env(): reset(seed=i) / reset() (2p block): 0.78x",
        "pettingzoo env() / raw_env (2p block): 0.80x",
    ]
    assert block_ratios(rows[:2]) == ["pettingzoo raw_env: reset(seed=i) / reset() (2p block): 0.75x"]


def test_one_run_reports_the_seeded_loops_against_openspiel(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pyspiel")
    engines = ["aec-raw", "aec-raw-seeded", "aec", "aec-seeded", "openspiel"]
    assert main(["--engines", *engines, "--seconds", "0.2"]) == 0
    out = capsys.readouterr().out
    for name in ("raw_env", "env()"):
        assert f"pettingzoo {name} reset(seed=i) / OpenSpiel (2p block):" in out
        assert f"pettingzoo {name}: reset(seed=i) / reset() (2p block):" in out
