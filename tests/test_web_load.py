"""A short run of the web table's load test (``scripts/load_web.py``): players and pimc searches
on a server of its own on 127.0.0.1, no error allowed, latencies reported."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed")


def load_web_script():
    path = Path(__file__).resolve().parents[1] / "scripts" / "load_web.py"
    spec = importlib.util.spec_from_file_location("load_web", path)
    load_web = importlib.util.module_from_spec(spec)
    sys.modules["load_web"] = load_web  # its dataclasses look themselves up there
    spec.loader.exec_module(load_web)
    return load_web


def test_a_failing_load_run_says_why() -> None:
    """It exited 1 without a line saying so when its p99 bound failed."""
    failed = load_web_script().failed
    figures = {"errors": [], "light_p99_ms": 398.0}
    assert failed(figures, 100.0) == ["the light players' p99 latency was 398.0 ms, above --max-p99 100 ms"]
    assert failed(figures, 400.0) == []
    assert (
        "2 requests went wrong (the first: /api/play: 500)"
        in failed({"errors": ["/api/play: 500", "x"], "light_p99_ms": 1.0}, 100.0)[0]
    )
    assert failed({"errors": [], "light_p99_ms": float("nan")}, 100.0)  # nothing finished: a failure


def test_the_web_extra_brings_what_the_load_test_imports() -> None:
    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    (web,) = re.findall(r"^web = \[(.*)\]", pyproject, flags=re.MULTILINE)
    assert '"httpx' in web  # scripts/load_web.py imports it; it was only in the dev extra


def test_ten_players_and_a_search_for_ten_seconds_see_no_error() -> None:
    figures = load_web_script().run(players=10, search=1, seconds=10, think=0.5)
    print(figures)  # pytest -s shows the latencies
    assert figures["errors"] == []
    assert figures["rounds"] > 0
    assert figures["light_p50_ms"] > 0 and figures["light_p99_ms"] >= figures["light_p50_ms"]
