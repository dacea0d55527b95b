"""A short run of the web table's load test (``scripts/load_web.py``): players and pimc searches
on a server of its own on 127.0.0.1, no error allowed, latencies reported."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed")


def test_ten_players_and_a_search_for_ten_seconds_see_no_error() -> None:
    path = Path(__file__).resolve().parents[1] / "scripts" / "load_web.py"
    spec = importlib.util.spec_from_file_location("load_web", path)
    load_web = importlib.util.module_from_spec(spec)
    sys.modules["load_web"] = load_web  # its dataclasses look themselves up there
    spec.loader.exec_module(load_web)
    figures = load_web.run(players=10, search=1, seconds=10, think=0.5)
    print(figures)  # pytest -s shows the latencies
    assert figures["errors"] == []
    assert figures["rounds"] > 0
    assert figures["light_p50_ms"] > 0 and figures["light_p99_ms"] >= figures["light_p50_ms"]
