"""The web table's sessions, origins, deals and stored games, over its API (no browser).

Who may make a session and what ends one (``agents.web.sessions``), the same-origin
rule for every request that changes a game, deals no page input can predict, and games
that survive a restart of the server.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed")

with warnings.catch_warnings():  # starlette asks for httpx2; its TestClient still runs on httpx
    warnings.filterwarnings("ignore", message=".*httpx2")
    from fastapi.testclient import TestClient

from agents.web.cli import checkpoint_files
from agents.web.server import SESSION_COOKIE, create_app
from agents.web.sessions import SessionTable
from domino_env.engine.tiles import tile_name

URL = "http://127.0.0.1"
ORIGIN = {"Origin": URL}


def browser(app: object) -> TestClient:
    """A client that behaves like the table's page: it names its origin on every request."""
    return TestClient(app, base_url=URL, headers=ORIGIN)


def test_cookieless_traffic_makes_no_session_and_evicts_none() -> None:
    app = create_app()
    player = browser(app)
    before = player.post("/api/play", json={"seed": 1}).json()
    stranger = TestClient(app, base_url=URL)
    for number in range(200):  # the browser test sends 1,100 over HTTP
        path = ("/api/play", "/api/watch", "/nothing", "/api/options")[number % 4]
        response = stranger.get(path)
        assert response.status_code in (200, 404)
        assert "set-cookie" not in response.headers
    for number in range(50):  # a foreign page's POSTs: refused before any session is made
        response = stranger.post(
            "/api/play", json={}, headers={"Origin": f"http://127.0.0.1:{9000 + number}"}
        )
        assert response.status_code == 403
    assert len(app.state.sessions) == 1
    assert player.get("/api/play").json() == before


def test_a_stale_cookie_gets_one_410_and_no_session() -> None:
    app = create_app()
    client = browser(app)
    client.cookies.set(SESSION_COOKIE, "from-an-older-server", domain="127.0.0.1")
    response = client.get("/api/play")
    assert response.status_code == 410
    assert "this game has ended" in response.json()["error"]
    assert (
        'domino_session=""' in response.headers["set-cookie"] or "Max-Age=0" in response.headers["set-cookie"]
    )
    assert client.get("/api/play").status_code == 404  # the cookie is gone: a plain "no game"
    assert len(app.state.sessions) == 0


def test_sessions_end_by_idle_time_and_are_bounded_per_client(tmp_path: Path) -> None:
    now = [1000.0]
    table = SessionTable(tmp_path / "t.sqlite", idle=60, cap=5, per_client=2, clock=lambda: now[0])

    def kept(client: str) -> str:
        token, session = table.create(client)
        session.play = SimpleNamespace(match=SimpleNamespace(over=False), state={})  # a game in progress
        table.save(session)
        return token

    first = kept("a")
    kept("a")
    with pytest.raises(Exception, match="2 games are open from your address") as refused:
        table.create("a")
    assert refused.value.status_code == 429
    kept("b")
    kept("c")
    kept("d")
    with pytest.raises(Exception, match="the table is full") as full:
        table.create("e")
    assert full.value.status_code == 503
    assert table.find(first) is not None
    now[0] += 59
    assert table.find(first) is not None  # used just now: 59 s idle is not 60
    now[0] += 61
    assert table.find(first) is None
    assert len(table) == 0  # every one of them idled out, none was ever evicted
    table.create("e")
    assert len(table) == 0  # made, but kept only once its game is saved


def test_a_burst_of_failing_requests_keeps_no_session_and_a_new_browser_gets_a_game() -> None:
    """Five failing cookie-less POSTs took the store from 6 to 11 sessions, with no cookie sent."""
    app = create_app()
    app.state.sessions.per_client = 3
    attacker = browser(app)
    bad = [{"preset": "nope"}, {"seat": True}, {"seat": 7}, {"opponents": ["nobody"]}, {"players": 9}]
    for number in range(40):
        response = attacker.post("/api/play", json=bad[number % len(bad)])
        assert response.status_code in (400, 422), response.text
        assert "set-cookie" not in response.headers
        attacker.cookies.clear()
    assert attacker.post("/api/watch/upload", content=b"not json").status_code == 400
    assert len(app.state.sessions) == 0
    newcomer = browser(app)
    assert newcomer.post("/api/play", json={"seed": 3}).status_code == 200
    assert len(app.state.sessions) == 1


def test_a_finished_game_frees_its_place() -> None:
    app = create_app()
    app.state.sessions.per_client = 1
    first = browser(app)
    first.post("/api/play", json={"seed": 1})
    assert browser(app).post("/api/play", json={"seed": 2}).status_code == 429  # a game in progress
    (session,) = app.state.sessions.sessions.values()
    while not session.play.match.over:  # play the match out, bots on both sides' behalf
        view = first.post("/api/play/advance").json()
        if view["legal"]:
            first.post("/api/play/move", json={"action": view["legal"][0]["action"]})
        elif view["result"] and not view["match"]["over"]:
            first.post("/api/play/next")
    assert browser(app).post("/api/play", json={"seed": 2}).status_code == 200
    assert first.get("/api/play").status_code in (404, 410)  # its finished game made room


def test_a_large_or_malformed_body_is_refused_before_it_is_read() -> None:
    client = browser(create_app())
    big = client.post("/api/play", content=b"[" * 200_000, headers={"content-type": "application/json"})
    assert big.status_code == 413 and "at most" in big.json()["error"]
    broken = client.post("/api/play", content=b"{seat: 1", headers={"content-type": "application/json"})
    assert broken.status_code == 400
    assert broken.json()["error"].startswith("the request body is not JSON: ")


def test_a_foreign_origin_cannot_change_a_game() -> None:
    app = create_app()
    player = browser(app)
    view = player.post("/api/play", json={"seed": 4, "seat": 1}).json()
    for origin in ("http://127.0.0.1:9999", "http://localhost", "null", "https://127.0.0.1"):
        for path, body in [("/api/play/next", None), ("/api/play/advance", None), ("/api/play", {})]:
            response = player.post(path, json=body, headers={"Origin": origin})
            assert response.status_code == 403, (origin, path)
            assert f"requests from {origin} are refused" in response.json()["error"]
        response = player.post("/api/watch/upload", content=b"{}", headers={"Origin": origin})
        assert response.status_code == 403
    no_origin = TestClient(app, base_url=URL, cookies=player.cookies)
    assert no_origin.post("/api/play/advance").status_code == 403
    assert player.get("/api/play").json() == view


def test_the_same_seed_at_another_seat_deals_another_game() -> None:
    app = create_app()
    first, second, again = browser(app), browser(app), browser(app)
    first.post("/api/play", json={"preset": "block", "seat": 0, "seed": 5})
    mine = second.post("/api/play", json={"preset": "block", "seat": 1, "seed": 5}).json()["seats"][1]["hand"]
    sessions = list(app.state.sessions.sessions.values())
    opponent = [tile_name(t) for t in sessions[0].play.round.hands[1]]
    assert mine != opponent
    assert len(set(mine) & set(opponent)) < 7
    repeat = again.post("/api/play", json={"preset": "block", "seat": 1, "seed": 5}).json()["seats"][1][
        "hand"
    ]
    assert repeat == mine  # the same seat and seed deal the same game again on this server
    elsewhere = browser(create_app()).post("/api/play", json={"preset": "block", "seat": 1, "seed": 5})
    assert elsewhere.json()["seats"][1]["hand"] != mine  # another server's secret: another deal


def test_a_restarted_server_resumes_the_games(tmp_path: Path) -> None:
    store = tmp_path / "table.sqlite"
    checkpoints = checkpoint_files([])
    before = browser(create_app(checkpoints, store=store))
    before.post("/api/play", json={"preset": "block", "seat": 1, "seed": 2, "opponents": ["block-2p"]})
    for _ in range(3):
        view = before.post("/api/play/advance").json()
        if view["legal"]:
            view = before.post("/api/play/move", json={"action": view["legal"][0]["action"]}).json()
    assert before.post("/api/play/save").status_code == 200

    after = browser(create_app(checkpoints, store=store))
    after.cookies = before.cookies
    assert after.get("/api/play").json() == view
    assert after.get("/api/watch?viewer=1").json()["steps"] == view["placed"]

    without = browser(create_app(store=store))  # restarted without the opponent's checkpoint
    without.cookies = before.cookies
    response = without.get("/api/play")
    assert response.status_code == 410
    assert "could not be resumed" in response.json()["error"]

    forgetful = browser(create_app())  # no store: every game ends with the server
    forgetful.cookies = before.cookies
    assert "this game has ended" in forgetful.get("/api/play").json()["error"]


def test_a_game_saved_to_watch_shows_only_the_players_seat() -> None:
    client = browser(create_app())
    view = client.post("/api/play", json={"preset": "block", "seat": 0, "seed": 9}).json()
    while not view["result"]:
        view = client.post(
            "/api/play/move" if view["legal"] else "/api/play/advance",
            json={"action": view["legal"][0]["action"]} if view["legal"] else None,
        ).json()
    info = client.post("/api/play/save").json()
    assert info["seat"] == 0 and info["steps"] == view["placed"]
    for step in range(info["steps"] + 1):
        shown = client.get(f"/api/watch?step={step}&viewer=0").json()
        assert shown["seats"][1]["hand"] is None
    for viewer in (-1, 1):
        response = client.get(f"/api/watch?viewer={viewer}")
        assert response.status_code == 400
        assert "only its view is shown" in response.json()["error"]
