"""The web table (agents.web): played and watched in a real browser, and its API's refusals.

The browser tests drive the system's headless Chromium (``/usr/bin/chromium``; CI installs
the Debian package) with Playwright against a server started here on a free port. Set
``DOMINO_WEB_SCREENSHOTS=docs/images`` to also save the documentation's screenshots.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import re
import socket
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed")

import uvicorn

with warnings.catch_warnings():  # starlette asks for httpx2; its TestClient still runs on httpx
    warnings.filterwarnings("ignore", message=".*httpx2")
    from fastapi.testclient import TestClient

from agents.arena.config import ArenaConfig
from agents.arena.report import save
from agents.arena.tournament import run_arena
from agents.bots.registry import load_policy
from agents.bots.trained import SHIPPED_DIR
from agents.web.cli import checkpoint_files
from agents.web.cli import main as serve_main
from agents.web.server import SESSION_COOKIE, create_app, games_in
from agents.web.state import PlayGame, legal_view, result_view, table_boxes
from domino_env.engine.actions import decode
from domino_env.engine.deals import random_deals
from domino_env.engine.reference import Round, deal_to_hands
from domino_env.engine.rules import PRESET_PLAYERS, Rules
from domino_env.engine.tiles import tile_name
from domino_env.tools.records import play_moves, replay, round_from_record

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = os.environ.get("DOMINO_WEB_SCREENSHOTS")
RECORD = {
    "preset": "block",
    "players": 2,
    "opener": 0,
    "hands": [
        ["6-6", "6-5", "5-5", "4-4", "3-3", "2-2", "1-1"],
        ["6-4", "6-3", "6-2", "6-1", "6-0", "5-4", "5-3"],
    ],
    "moves": ["6-6", "6-4:left", "4-4:left", "6-3:right"],
}


@pytest.fixture(scope="module")
def games_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny arena run (a trained agent against random) with two saved games."""
    config = ArenaConfig(
        preset="block",
        players=2,
        policies=[str(SHIPPED_DIR / "block-2p.pt"), "random"],
        deals=2,
        matches=0,
        save_games=2,
        progress=False,
    )
    stem = tmp_path_factory.mktemp("arena") / "tiny"
    save(run_arena(config), stem, json_out=True, csv_out=False, plot_out=False)
    return stem.parent / "tiny-games"


def test_the_arena_saves_games_as_records(games_dir: Path) -> None:
    index = json.loads((games_dir / "games.json").read_text())["games"]
    assert len(index) == 2
    for entry in index:
        assert sorted(entry["seats"]) == ["block-2p", "random"]
        result = replay(json.loads((games_dir / entry["file"]).read_text()))
        assert result["end"] in ("domino", "blocked")
    assert "games" not in json.loads((games_dir.parent / "tiny.json").read_text())


@pytest.mark.parametrize(
    ("preset", "end", "void", "words"),
    [
        ("block", "domino", False, ["Domino: seat", "played their last tile", "wins the round"]),
        (
            "block",
            "blocked",
            False,
            ["Blocked: nobody can play. Pips left: seat 0", "the lightest hand wins"],
        ),
        ("idrd_draw", "closed", False, ["Closed: both ends show", "are down", "Pips left"]),
        ("spanish_pairs", "blocked", True, ["Pips left: team 0+2", "Void: a tie that nobody wins"]),
    ],
)
def test_each_round_end_is_explained(preset: str, end: str, void: bool, words: list[str]) -> None:
    rules = Rules.preset(preset)
    rng = np.random.default_rng(0)
    for _ in range(2000):
        hands, boneyard = deal_to_hands(rules, random_deals(rules, 1, rng)[0])
        rnd = Round(rules, hands, boneyard, opener=int(rng.integers(rules.players)))
        while not rnd.over:
            legal = rnd.legal_actions()
            rnd.step(legal[int(rng.integers(len(legal)))])
        if rnd.end == end and (rnd.winner is None) == void:
            text = result_view(rnd)["text"]
            assert all(word in text for word in words), text
            return
    pytest.fail(f"no {end} round in 2000 random {preset} rounds")


# -- the API without a browser ------------------------------------------------------------------
ORIGIN = {"Origin": "http://127.0.0.1"}
"""What a browser sends with every POST from the table's own page."""


@pytest.fixture(scope="module")
def client(games_dir: Path) -> TestClient:
    app = create_app(checkpoint_files([]), games_in(games_dir))
    return TestClient(app, base_url="http://127.0.0.1", headers=ORIGIN)


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "message"),
    [
        ("post", "/api/play", {"preset": "blok"}, 400, "did you mean 'block'"),
        ("post", "/api/play", {"preset": "block", "players": 7}, 400, "not 7"),
        ("post", "/api/play", {"preset": "block", "seat": 2}, 400, "your seat must be 0 to 1"),
        ("post", "/api/play", {"preset": "block", "opponents": ["omniscient"]}, 400, "unknown opponent"),
        ("post", "/api/play", {"preset": "block", "opponents": ["../../x.pt"]}, 400, "unknown opponent"),
        (
            "post",
            "/api/play",
            {"preset": "draw", "opponents": ["block-2p"]},
            400,
            "checkpoint block-2p: trained",
        ),
        ("post", "/api/play", {"preset": "block", "opponents": ["random", "random"]}, 400, "at most 1"),
        ("post", "/api/play", {"preset": "block", "seed": -1}, 400, "seed"),
        ("post", "/api/play", {"preset": "block", "colour": "red"}, 400, "colour"),
        ("post", "/api/play", "not an object", 400, "request"),
        ("post", "/api/play", {"seat": True}, 400, "seat: Input should be a valid integer"),
        ("post", "/api/play", {"seed": "12"}, 400, "seed: Input should be a valid integer"),
        ("post", "/api/play", {"players": 2.0}, 400, "players: Input should be a valid integer"),
        ("post", "/api/play", {"opponents": "random"}, 400, "opponents: Input should be a valid list"),
        ("post", "/api/play/move", {"action": "1"}, 400, "action: Input should be a valid integer"),
        ("post", "/api/play/move", {"action": 1.0}, 400, "action: Input should be a valid integer"),
        ("post", "/api/watch/load", {"name": 3}, 400, "name: Input should be a valid string"),
        ("get", "/api/play", None, 404, "no game in progress"),
        ("post", "/api/play/move", {"action": 3}, 404, "no game in progress"),
        ("post", "/api/watch/load", {"name": "/etc/passwd"}, 404, "no saved game"),
        ("get", "/api/watch", None, 404, "no game loaded"),
        ("get", "/api/nothing", None, 404, "Not Found"),
    ],
)
def test_a_bad_request_is_a_4xx_with_a_message(
    client: TestClient, method: str, path: str, body: object, status: int, message: str
) -> None:
    client.cookies.clear()
    response = client.request(method, path, json=body) if body is not None else client.request(method, path)
    assert response.status_code == status
    assert message in response.json()["error"]


def test_moves_out_of_turn_or_illegal_are_refused(client: TestClient) -> None:
    client.cookies.clear()
    view = client.post("/api/play", json={"preset": "block", "players": 2, "seat": 1, "seed": 3}).json()
    if view["to_play"] != 1:
        assert "not your turn" in client.post("/api/play/move", json={"action": 0}).json()["error"]
        while view["to_play"] != 1:
            view = client.post("/api/play/advance").json()
    illegal = next(a for a in range(28) if a not in {m["action"] for m in view["legal"]})
    response = client.post("/api/play/move", json={"action": illegal})
    assert response.status_code == 400
    assert "legal moves are" in response.json()["error"]
    assert client.post("/api/play/next").json()["error"] == "the round is not over yet"
    assert client.post("/api/play/move", json={"action": "left"}).status_code == 400


def test_each_browser_keeps_its_own_games(client: TestClient, games_dir: Path) -> None:
    client.cookies.clear()
    client.post("/api/play", json={"preset": "block", "seed": 1})
    assert client.get("/api/play").status_code == 200
    other = TestClient(client.app, base_url="http://127.0.0.1", headers=ORIGIN)
    assert other.get("/api/play").status_code == 404


def test_a_hint_is_the_trained_agents_move_read_from_the_players_seat(client: TestClient) -> None:
    client.cookies.clear()
    view = client.post("/api/play", json={"preset": "block", "seat": 1, "seed": 8}).json()
    if view["to_play"] != 1:
        assert "not your turn" in client.get("/api/play/hint").json()["error"]
        while view["to_play"] != 1:
            view = client.post("/api/play/advance").json()
    hint = client.get("/api/play/hint").json()
    assert hint["agent"] == "block-2p"
    assert hint["action"] in {move["action"] for move in view["legal"]}
    game = client.app.state.sessions.find(client.cookies[SESSION_COOKIE]).play
    obs, mask = game.hint_position()
    probabilities = load_policy("block-2p", game.rules).probabilities(obs, mask)[0]
    assert hint["action"] == int(np.argmax(np.where(mask[0], probabilities, -1)))
    assert hint["p"] == pytest.approx(float(probabilities[hint["action"]]))
    # The hidden tiles change (the opponent's hand swapped with the boneyard's): the hint cannot.
    shown = game.round
    count = len(shown.hands[0])
    shown.hands[0], shown.boneyard = sorted(shown.boneyard[:count]), shown.boneyard[count:] + shown.hands[0]
    assert client.get("/api/play/hint").json() == hint
    client.cookies.clear()
    client.post("/api/play", json={"preset": "block", "players": 3, "seat": 0, "seed": 1})
    response = client.get("/api/play/hint")
    assert response.status_code == 404
    assert "no trained agent for block with 3 players gives hints" in response.json()["error"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "the file is not JSON"),
        (b"[1, 2]", "a record must be a JSON object"),
        (json.dumps({**RECORD, "hands": [["6-6"], ["6-5"]]}).encode(), "deals 7 to each seat"),
        (json.dumps({**RECORD, "moves": ["6-6", "1-1:left"]}).encode(), "move 2: illegal"),
        (json.dumps({**RECORD, "mvoes": []}).encode(), "did you mean 'moves'"),
        (b"[" * 100_000, "the file is not JSON"),
        (b" " * (2 << 20), "at most 1024 KB"),
    ],
)
def test_uploads_are_refused_with_the_records_messages(client: TestClient, body: bytes, message: str) -> None:
    response = client.post("/api/watch/upload", content=body)
    assert response.status_code in (400, 413)
    assert message in response.json()["error"]


def test_a_slow_opponent_does_not_hold_up_other_games(monkeypatch: pytest.MonkeyPatch) -> None:
    """Opponents think in worker threads: while one game waits on a 1 s move, another is served."""
    import httpx

    from agents.bots.heuristic import RandomBot

    think = RandomBot.__call__
    monkeypatch.setattr(
        RandomBot, "__call__", lambda bot, obs, mask: (time.sleep(1.0), think(bot, obs, mask))[1]
    )
    app = create_app()

    async def waited_for_by_another_game() -> float:
        transport = httpx.ASGITransport(app=app)
        url = "http://127.0.0.1"
        async with (
            httpx.AsyncClient(transport=transport, base_url=url, headers=ORIGIN) as slow,
            httpx.AsyncClient(transport=transport, base_url=url, headers=ORIGIN) as other,
        ):
            seed = 0
            while (await slow.post("/api/play", json={"seat": 1, "seed": seed})).json()["to_play"] != 0:
                seed += 1
            thinking = asyncio.create_task(slow.post("/api/play/advance"))
            await asyncio.sleep(0.2)
            start = time.perf_counter()
            assert (await other.post("/api/play", json={"seed": 1})).status_code == 200
            waited = time.perf_counter() - start
            assert (await thinking).json()["log"]
            return waited

    assert asyncio.run(waited_for_by_another_game()) < 0.5


def test_only_local_host_names_are_answered(client: TestClient) -> None:
    assert TestClient(client.app, base_url="http://attacker.example").get("/api/options").status_code == 400


def test_watching_checks_step_viewer_and_analyst(client: TestClient) -> None:
    client.cookies.clear()
    assert client.post("/api/watch/upload", content=json.dumps(RECORD)).json()["steps"] == 4
    for query, message in [
        ("step=9", "step must be 0 to 4"),
        ("step=two", "step: Input should be a valid integer"),
        ("viewer=2", "viewer must be a seat 0 to 1"),
        ("analyst=nobody-2p", "unknown checkpoint 'nobody-2p'"),
        ("analyst=draw-2p", "checkpoint draw-2p: trained for preset 'draw'"),
    ]:
        response = client.get(f"/api/watch?{query}")
        assert response.status_code == 400 and message in response.json()["error"], query
    view = client.get("/api/watch?step=1&analyst=block-2p&viewer=1").json()
    assert [m["played"] for m in view["probabilities"]].count(True) == 1
    assert view["seats"][0]["hand"] is None and view["seats"][1]["hand"]
    assert client.get("/api/watch?step=1&analyst=block-2p&viewer=0").json()["probabilities"] is None


def test_serve_refuses_a_missing_checkpoint(capsys: pytest.CaptureFixture[str]) -> None:
    assert serve_main(["--checkpoint", "no/such/file.pt"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_a_tile_whose_ends_lead_to_the_same_table_is_offered_once() -> None:
    """Both ends show 3. In block 3-1 leaves the same table on either side: one move, nothing to ask.
    In all_fives the left 3 is the double 3-3 (it counts 6) and the right one is not: two moves."""
    hands = [
        ["3-3", "5-6", "3-1", "0-0", "1-1", "2-2", "4-4"],
        ["3-5", "6-3", "6-6", "0-1", "0-2", "0-4", "2-4"],
    ]
    offered = {}
    for preset in ("block", "all_fives"):
        rnd = round_from_record({"preset": preset, "players": 2, "opener": 0, "hands": hands})
        play_moves(rnd, ["3-3", "3-5:right", "5-6:right", "6-3:right"])
        assert rnd.ends() == {"left": 3, "right": 3}
        offered[preset] = [(move["tile"], move["end"]) for move in legal_view(rnd)]
    assert offered == {"block": [("3-1", "left")], "all_fives": [("3-1", "left"), ("3-1", "right")]}


def test_the_options_say_which_rules_each_trained_agent_plays(client: TestClient, tmp_path: Path) -> None:
    options = client.get("/api/options").json()
    agents = {agent["name"]: agent for agent in options["agents"]}
    assert list(agents) == options["checkpoints"]
    for name, agent in agents.items():  # the shipped agents are named after what they play
        assert name.startswith(f"{agent['preset']}-{agent['players']}p"), agent
    assert (agents["partnership-4p"]["preset"], agents["partnership-4p"]["players"]) == ("partnership", 4)
    broken = tmp_path / "broken.pt"
    broken.write_bytes(b"not a checkpoint")
    other = TestClient(create_app({"broken": broken}), base_url="http://127.0.0.1")
    (agent,) = other.get("/api/options").json()["agents"]
    assert agent["preset"] is None and "broken" in agent["error"] and str(tmp_path) not in agent["error"]


def test_a_page_opening_gets_its_game_or_a_plain_no_game(client: TestClient) -> None:
    """``/api/play/current`` answers 200 whatever there is, so a fresh page logs no failed request."""
    client.cookies.clear()
    response = client.get("/api/play/current")
    assert response.status_code == 200 and response.json() == {"game": None, "ended": None}
    view = client.post("/api/play", json={"seed": 4}).json()
    assert client.get("/api/play/current").json() == {"game": view, "ended": None}
    client.cookies.clear()
    client.cookies.set(SESSION_COOKIE, "from-an-older-server", domain="127.0.0.1")
    stale = client.get("/api/play/current")
    assert stale.status_code == 200 and stale.json()["game"] is None
    assert "this game has ended" in stale.json()["ended"] and "Max-Age=0" in stale.headers["set-cookie"]
    client.cookies.clear()


def test_the_watch_view_says_why_no_probabilities_show(client: TestClient) -> None:
    client.cookies.clear()
    client.post("/api/watch/upload", content=json.dumps(RECORD))

    def note(query: str) -> str | None:
        return client.get(f"/api/watch?{query}").json()["probabilities_note"]

    assert note("step=1&analyst=block-2p") is None  # its probabilities show
    assert note("step=1&analyst=block-2p&viewer=0").startswith("Seat 1 is to play")
    assert note("step=1&analyst=none").startswith("No policy chosen")
    assert note("step=1&analyst=auto").startswith("Seat 1 (seat 1) is not a trained agent")
    client.cookies.clear()


# -- in a browser -------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def serving(app: object, port: int) -> Iterator[str]:
    """``app`` served on 127.0.0.1:``port`` in a thread while the block runs: its URL."""
    uvicorn_server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=uvicorn_server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not uvicorn_server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        uvicorn_server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def server(games_dir: Path) -> Iterator[tuple[str, object]]:
    """The app served on a free port in a thread: (its URL, the app)."""
    app = create_app(checkpoint_files([]), games_in(games_dir))
    with serving(app, free_port()) as url:
        yield url, app


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.skip(f"no {CHROMIUM} (apt-get install chromium)")
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


def shot(page: object, name: str) -> None:
    if SCREENSHOTS:
        page.mouse.move(0, 0)
        page.screenshot(path=str(Path(SCREENSHOTS) / f"web_{name}.png"))


def test_a_round_played_by_clicks_shows_no_hidden_tile(server: tuple[str, object], browser: object) -> None:
    url, app = server
    context = browser.new_context(viewport={"width": 1100, "height": 860})
    page = context.new_page()
    bodies: list[str] = []
    page.on("response", lambda response: bodies.append(response.text()))
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{url}/?pace=0")
    page.select_option("#preset", "block")
    page.select_option("#players", "2")
    page.select_option("select.opponent", "random")
    page.fill("#seed", "11")
    page.click("#deal")
    doms, moves = [], 0
    while True:
        page.wait_for_selector("body[data-play=your-move], body[data-play=round-over]", timeout=10_000)
        doms.append(page.content())
        if page.get_attribute("body", "data-play") == "round-over":
            break
        if moves == 3:
            shot(page, "play")
        page.locator("#play-hand svg.tile.legal").first.click()
        if page.is_visible("#end-choice"):
            page.locator("#end-choice button").first.click()
        moves += 1
    result = page.inner_text("#play-result-text")
    assert re.search(r"Domino|Blocked|Closed", result) and "Round points" in result
    assert moves >= 1  # the deal depends on the server's secret: a round can block early
    assert not errors, errors

    (session,) = [s for s in app.state.sessions.sessions.values() if s.play is not None]
    shown = session.play.round
    assert shown.over
    hidden = {tile_name(t) for t in shown.hands[1] + shown.boneyard}
    assert hidden, "the opponent should hold tiles nobody saw"
    pattern = re.compile(r"(?<![0-9])(" + "|".join(hidden) + r")(?![0-9])")
    placed = re.compile(r"(?<![0-9])(" + "|".join(tile_name(p.tile) for p in shown.table) + r")(?![0-9])")
    assert any(placed.search(text) for text in bodies) and any(placed.search(dom) for dom in doms)
    for text in bodies + doms:
        assert not pattern.search(text), f"a hidden tile reached the page: {pattern.search(text)[0]}"
    for text in bodies:
        if text.startswith("{") and '"seats"' in text:
            assert json.loads(text)["seats"][1]["hand"] is None
    context.close()


def test_a_saved_arena_game_steps_forwards_and_back(server: tuple[str, object], browser: object) -> None:
    url, _ = server
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(url)
    page.click("button.tab[data-tab=watch]")
    page.select_option("#saved-games", "tiny-games/game-000.json")
    page.click("#load-saved")
    page.wait_for_selector("body[data-watch-step='0']")
    steps = int(page.inner_text("#step-label").split("/")[1])
    assert steps >= 4
    seen_probabilities = False
    for step in range(1, steps + 1):
        page.click("#step-forward")
        page.wait_for_selector(f"body[data-watch-step='{step}']")
        assert page.locator("#watch-table g.domino").count() == step
        if page.is_visible("#probabilities"):
            cells = page.locator("#probabilities td:nth-child(2)").all_inner_texts()
            assert abs(sum(float(c.rstrip("%")) for c in cells) - 100) < 1
            assert page.locator("#probabilities tr.played").count() == 1
            if not seen_probabilities and SCREENSHOTS:  # as the trained seat saw it
                page.select_option("#viewer", "0")
                page.wait_for_selector("body[data-watch-viewer='0']")
                shot(page, "watch")
                page.select_option("#viewer", "-1")
                page.wait_for_selector("body[data-watch-viewer='-1']")
            seen_probabilities = True
        else:  # a line says why not: a bot to play, or the round over
            assert re.search(r"is not a trained agent|round is over", page.inner_text("#probabilities-note"))
    assert seen_probabilities, "the trained seat's probabilities never showed"
    assert page.is_visible("#watch-result")
    for step in (steps - 1, steps - 2):
        page.click("#step-back")
        page.wait_for_selector(f"body[data-watch-step='{step}']")
        assert page.locator("#watch-table g.domino").count() == step
    # Spectator: every hand face up; a seat's view: that hand only.
    assert page.locator("#watch-seats .seat svg.tile").count() == 14 - (steps - 2)
    shot(page, "spectator")
    page.select_option("#viewer", "1")
    page.wait_for_selector("body[data-watch-viewer='1']")
    assert page.locator("#watch-seats .seat[data-seat='0'] svg.back").count() > 0
    page.close()


def test_a_bad_upload_shows_the_records_message(server: tuple[str, object], browser: object) -> None:
    url, _ = server
    page = browser.new_page()
    page.goto(url)
    page.click("button.tab[data-tab=watch]")
    bad = {**RECORD, "hands": [RECORD["hands"][0], [*RECORD["hands"][1][:6], "6-6"]]}
    with pytest.raises(ValueError) as expected:
        round_from_record(bad)
    page.set_input_files(
        "#record-file",
        {"name": "bad.json", "mimeType": "application/json", "buffer": json.dumps(bad).encode()},
    )
    page.wait_for_selector("#error:not([hidden])")
    assert page.inner_text("#error") == str(expected.value)
    page.set_input_files(
        "#record-file",
        {"name": "good.json", "mimeType": "application/json", "buffer": json.dumps(RECORD).encode()},
    )
    page.wait_for_selector("body[data-watch-step='0']")
    assert page.is_hidden("#error")
    page.close()


# -- sessions, origins, deals, restarts, in a browser ---------------------------------------------
def start_game(page: object, seat: int = 0, seed: int = 3, preset: str = "block", players: int = 2) -> None:
    page.select_option("#preset", preset)
    page.select_option("#players", str(players))
    page.select_option("#seat", str(seat))
    for select in page.locator("select.opponent").all():
        select.select_option("random")
    page.fill("#seed", str(seed))
    page.click("#deal")
    if page.locator("#confirm-new[open]").count():  # a game in progress: "New game" asks first
        page.click("#confirm-deal")
    page.wait_for_selector("body[data-play=your-move], body[data-play=round-over]", timeout=10_000)


def hand_of(page: object) -> list[str]:
    return [tile.get_attribute("data-tile") for tile in page.locator("#play-hand svg.tile").all()]


def session_of(app: object, hand: list[str]) -> object:
    """The server's session whose player holds ``hand`` (to read what the page may not see)."""
    for session in app.state.sessions.sessions.values():
        if session.play and [tile_name(t) for t in session.play.round.hands[session.play.human]] == hand:
            return session
    raise AssertionError(f"no game with the hand {hand}")


def test_a_game_survives_1100_cookieless_requests_and_a_reload(
    server: tuple[str, object], browser: object
) -> None:
    url, app = server
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{url}/?pace=0")
    start_game(page, seat=1, seed=21, players=2)
    table, hand = page.locator("#play-table g.domino").count(), hand_of(page)
    sessions = len(app.state.sessions)
    stranger = browser.new_page()  # its own context: no cookie
    stranger.goto(f"{url}/static/style.css")
    statuses = stranger.evaluate(
        """async (base) => {
            const paths = ["/api/play", "/api/watch", "/nothing", "/api/options"];
            const codes = [];
            for (let batch = 0; batch < 11; batch++) {
                const sent = [...Array(100).keys()].map((i) =>
                    fetch(base + paths[i % 4], { credentials: "omit" }).then((r) => r.status));
                codes.push(...await Promise.all(sent));
            }
            return codes;
        }""",
        url,
    )
    assert len(statuses) == 1100 and set(statuses) <= {200, 404}
    assert len(app.state.sessions) == sessions  # no request without a cookie made a session
    page.reload()
    page.wait_for_selector("body[data-play=your-move], body[data-play=round-over]", timeout=10_000)
    assert hand_of(page) == hand and page.locator("#play-table g.domino").count() == table
    assert page.input_value("#seed") == "21" and page.input_value("#seat") == "1"
    if page.get_attribute("body", "data-play") == "your-move":
        page.locator("#play-hand svg.tile.legal").first.click()
        if page.is_visible("#end-choice"):
            page.locator("#end-choice button").first.click()
        page.wait_for_selector("body[data-play=your-move], body[data-play=round-over]", timeout=10_000)
        assert page.locator("#play-table g.domino").count() > table
    assert page.is_hidden("#error")
    stranger.close()
    context.close()


ATTACKER = """<!doctype html><title>elsewhere</title><script>
async function attack(table) {
  const sent = [];
  for (const path of ["/api/play/next", "/api/play/advance", "/api/play"]) {
    sent.push(fetch(table + path, { method: "POST", mode: "no-cors", credentials: "include",
      headers: { "Content-Type": "text/plain" }, body: "{}" }));
  }
  sent.push(fetch(table + "/api/watch/upload", { method: "POST", mode: "no-cors", credentials: "include",
    body: JSON.stringify({ preset: "block", players: 2, hands: [[], []] }) }));
  await Promise.allSettled(sent);
  return "sent";
}
</script>"""


def test_a_post_from_another_origin_is_refused(server: tuple[str, object], browser: object) -> None:
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    url, app = server
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{url}/?pace=0")
    start_game(page, seat=0, seed=8)
    session = session_of(app, hand_of(page))
    steps, watched = list(session.play.steps), session.watch
    refused: list[int] = []
    page.on("response", lambda response: refused.append(response.status) if "/api/" in response.url else None)
    attacker = Starlette(routes=[Route("/", lambda request: HTMLResponse(ATTACKER))])
    with serving(attacker, free_port()) as elsewhere:  # another port of 127.0.0.1: the same site
        other = context.new_page()  # the victim's own browser, so the cookie goes along
        other.on(
            "response", lambda response: refused.append(response.status) if "/api/" in response.url else None
        )
        other.goto(elsewhere)
        assert other.evaluate("attack", url) == "sent"
        other.wait_for_timeout(300)
        other.close()
    assert refused.count(403) == 4
    assert session.play.steps == steps and session.watch is watched
    page.reload()
    page.wait_for_selector("body[data-play=your-move], body[data-play=round-over]", timeout=10_000)
    context.close()


def test_the_same_seed_at_the_other_seat_hides_the_first_opponents_hand(
    server: tuple[str, object], browser: object
) -> None:
    url, app = server
    page = browser.new_page()
    page.goto(f"{url}/?pace=0")
    start_game(page, seat=0, seed=5)
    first = session_of(app, hand_of(page)).play
    opponent = [tile_name(t) for t in first.match.round.hands[1]]
    start_game(page, seat=1, seed=5)
    mine = hand_of(page)
    assert sorted(mine) != sorted(opponent)
    assert len(set(mine) & set(opponent)) < 7
    page.close()


def test_a_restart_resumes_the_game_or_says_it_ended(tmp_path: Path, browser: object) -> None:
    port, store = free_port(), tmp_path / "table.sqlite"
    page = browser.new_page()
    with serving(create_app(store=store), port) as url:
        page.goto(f"{url}/?pace=0")
        start_game(page, seat=1, seed=13)
        hand, table = hand_of(page), page.locator("#play-table g.domino").count()
    with serving(create_app(store=store), port):
        page.reload()
        page.wait_for_selector("body[data-play=your-move], body[data-play=round-over]", timeout=10_000)
        assert hand_of(page) == hand and page.locator("#play-table g.domino").count() == table
    with serving(create_app(store=store), port):  # the page still open: its next click is answered
        page.wait_for_selector("body[data-play=your-move]", timeout=10_000)
        page.locator("#play-hand svg.tile.legal").first.click()
        if page.is_visible("#end-choice"):
            page.locator("#end-choice button").first.click()
        page.wait_for_selector("body[data-play=your-move], body[data-play=round-over]", timeout=10_000)
    with serving(create_app(), port):  # no store: the game ended with the server
        legal = page.locator("#play-hand svg.tile.legal")
        (legal.first if legal.count() else page.locator("#next-round")).click()  # the old board's next click
        if page.is_visible("#end-choice"):  # a tile that fits both ends asks which before it is sent
            page.locator("#end-choice button").first.click()
        page.wait_for_selector("#error:not([hidden])")
        assert "this game has ended" in page.inner_text("#error")
        assert page.is_hidden("#play-board")
        page.reload()  # the cookie was cleared with that answer: a fresh table, no stale board
        page.wait_for_selector("#deal")
        assert page.is_hidden("#play-board")
    page.close()


# -- the player's view ----------------------------------------------------------------------------
def settle(page: object) -> str:
    page.wait_for_selector("body[data-play=your-move], body[data-play=round-over]", timeout=10_000)
    return page.get_attribute("body", "data-play")


def test_a_round_played_with_the_keyboard_alone(server: tuple[str, object], browser: object) -> None:
    url, _ = server
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(f"{url}/?pace=0")
    start_game(page, seat=0, seed=17)
    for _ in range(40):  # Tab from the form reaches the hand
        if page.evaluate("document.activeElement.matches('#play-hand svg.legal')"):
            break
        page.keyboard.press("Tab")
    else:
        pytest.fail("Tab never reached a playable tile")
    moves = 0
    while settle(page) == "your-move":
        assert page.evaluate("document.activeElement.matches('#play-hand svg.legal')"), (
            "the focus left the hand"
        )
        if moves % 2:
            page.keyboard.press("ArrowRight")
        page.keyboard.press("Enter")
        if page.is_visible("#end-choice"):
            assert page.evaluate("document.activeElement.matches('#end-choice button')")
            page.keyboard.press("Enter")
        moves += 1
    assert moves >= 2
    assert page.evaluate("document.activeElement.id") == "next-round"
    page.keyboard.press("Enter")
    assert settle(page) in ("your-move", "round-over")
    assert page.locator("#play-table g.domino").count() < 28 and page.is_hidden("#error")
    page.close()


def test_the_hint_is_off_until_ticked_then_names_a_playable_tile(
    server: tuple[str, object], browser: object
) -> None:
    url, _ = server
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.goto(f"{url}/?pace=0")
    page.evaluate("localStorage.removeItem('domino-hint')")
    page.reload()
    for seed in range(3, 40):  # a deal where it is the player's move
        start_game(page, seat=0, seed=seed)
        if page.get_attribute("body", "data-play") == "your-move":
            break
    assert not page.is_checked("#hint-on")
    assert page.inner_text("#hint") == ""
    assert not [u for u in asked if "/api/play/hint" in u], "a hint was asked for with the box unticked"
    page.check("#hint-on")
    page.wait_for_selector("#play-hand svg.tile.hinted")
    hinted = page.locator("#play-hand svg.tile.hinted")
    assert hinted.count() == 1 and "legal" in hinted.get_attribute("class")
    assert page.inner_text("#hint").startswith(f"block-2p would play {hinted.get_attribute('data-tile')}")
    page.close()


def no_sideways_scroll(page: object) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide on a 390 px screen"


def test_the_seats_sit_around_the_table_and_a_phone_needs_no_sideways_scroll(
    server: tuple[str, object], browser: object
) -> None:
    url, _ = server
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(f"{url}/?pace=0")
    start_game(page, seat=0, seed=2, preset="partnership", players=4)
    names = {
        box.get_attribute("data-place"): box.locator(".name").inner_text()
        for box in page.locator("#play-seats .seat").all()
    }
    assert sorted(names) == ["left", "right", "top"]
    assert names["top"].startswith("Partner") and page.locator("#play-seats .seat.partner").count() == 1
    assert names["left"].startswith("Left") and names["right"].startswith("Right")
    assert page.inner_text(".hand-row .you") == "You"
    table, hand = (
        page.locator("#play-table").bounding_box(),
        page.locator("#play-hand svg.tile").first.bounding_box(),
    )
    assert hand["width"] >= 40 and hand["height"] >= 80
    top = page.locator("#play-seats .seat[data-place=top]").bounding_box()
    assert top["y"] + top["height"] <= table["y"] + 1
    shot(page, "play_4p")
    page.close()

    phone = browser.new_page(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    phone.goto(f"{url}/?pace=0")
    start_game(phone, seat=0, seed=6)
    no_sideways_scroll(phone)
    shot(phone, "phone_play")
    phone.click("button.tab[data-tab=watch]")
    phone.select_option("#saved-games", "tiny-games/game-000.json")
    phone.click("#load-saved")
    phone.wait_for_selector("body[data-watch-step='0']")
    steps = int(phone.inner_text("#step-label").split("/")[1])
    for _ in range(5):  # rapid taps: none is lost
        phone.tap("#step-forward")
    phone.wait_for_selector(f"body[data-watch-step='{min(5, steps)}']")
    assert phone.inner_text("#step-label").startswith(f"move {min(5, steps)} /")
    numbered = phone.locator("#watch-log li.move").all_inner_texts()
    assert len(numbered) == min(5, steps)  # the log numbers the moves the counter counts
    no_sideways_scroll(phone)
    shot(phone, "phone_watch")
    phone.close()


# -- a table people enjoy -------------------------------------------------------------------------
def find_state(app: object, preset: str, players: int, wanted: Callable[[PlayGame], bool]) -> dict:
    """The state of a game (``PlayGame.state``) at the first position ``wanted`` accepts, the player
    at seat 0 making random legal moves against ``random``: what ``show_game`` puts on a page."""
    rules = Rules.preset(preset, players)
    names = ["you"] + ["random"] * (players - 1)
    settings = {"preset": preset, "players": players, "seat": 0, "opponents": names[1:], "seed": None}
    for seed in range(400):
        rng = np.random.default_rng(seed)
        game = PlayGame(rules, 0, app.state.seat_opponents(rules, 0, names, seed), names, seed, settings)
        while not wanted(game):
            if game.round.over:
                break
            if game.bot_to_move:
                game.bot_move()
            else:
                legal = game.round.legal_actions()
                game.human_move(legal[int(rng.integers(len(legal)))])
        else:
            return json.loads(json.dumps(game.state))
    raise AssertionError(f"no {preset} {players}p game reached the position asked for")


def page_session(page: object, app: object) -> object:
    """The server's session of the page's browser (found by its cookie)."""
    (token,) = [c["value"] for c in page.context.cookies() if c["name"] == SESSION_COOKIE]
    return app.state.sessions.find(token)


def show_game(page: object, app: object, state: dict) -> str:
    """The page's game (a first deal makes its session) replaced by the game ``state`` describes,
    shown by a reload, as after a restart: what the page then waits for."""
    if page.locator("#play-hand svg.tile").count() == 0:
        start_game(page)
    page_session(page, app).play = PlayGame.restore(state, app.state.seat_opponents)
    page.reload()
    return settle(page)


def tile_boxes(page: object, table: str = "#play-table") -> list[list[float]]:
    return page.eval_on_selector_all(
        f"{table} g.domino",
        "tiles => tiles.map((t) => t.getBoundingClientRect()).map((r) => [r.x, r.y, r.width, r.height])",
    )


def test_a_long_round_snakes_across_the_table_and_stays_legible(
    server: tuple[str, object], browser: object
) -> None:
    """A 4-player round of 23+ tiles: a snake that turns at the table's edges, every tile at least
    24 px long at 1280 px and at 390 px, none over another, the newest ringed, both open ends shown."""
    url, app = server
    state = find_state(
        app,
        "partnership",
        4,
        lambda g: len(g.round.table) >= 23 and g.round.to_play == 0 and not g.round.over,
    )
    for width, height, name in [(1280, 900, "snake"), (390, 844, "phone_snake")]:
        phone = width < 500
        page = browser.new_page(viewport={"width": width, "height": height}, has_touch=phone, is_mobile=phone)
        errors: list[str] = []
        page.on("console", lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None)
        page.goto(f"{url}/?pace=0")
        assert show_game(page, app, state) == "your-move"
        boxes, table = tile_boxes(page), page.locator("#play-table").bounding_box()
        assert len(boxes) >= 23
        shortest = min(max(w, h) for _, _, w, h in boxes)
        assert shortest >= 24, f"a tile is {shortest:.1f} px long on a {width} px screen"
        for x, y, w, h in boxes:
            assert table["x"] - 1 <= x and x + w <= table["x"] + table["width"] + 1
            assert table["y"] - 1 <= y and y + h <= table["y"] + table["height"] + 1
        for i, (x, y, w, h) in enumerate(boxes):
            for x2, y2, w2, h2 in boxes[i + 1 :]:
                assert min(x + w, x2 + w2) - max(x, x2) < 1 or min(y + h, y2 + h2) - max(y, y2) < 1
        rows = {round(y + h / 2) for x, y, w, h in boxes if w > h}
        assert len(rows) >= 2, "the line never turned"
        ends = page_session(page, app).play.round.ends()
        slots = {
            g.get_attribute("data-end"): g.text_content()
            for g in page.locator("#play-table g.end-slot").all()
        }
        assert slots == {end: str(number) for end, number in ends.items()}
        assert page.locator("#play-table g.domino.last").count() == 1
        assert "first to 50" in page.inner_text("#play-match")  # the match target, with the running score
        if phone:
            no_sideways_scroll(page)
        assert not errors, errors  # the Content-Security-Policy included
        shot(page, name)
        page.close()


def test_the_snake_never_lays_a_tile_over_another(server: tuple[str, object], browser: object) -> None:
    """The page's layout of hundreds of random tables of every preset (spinners too), at widths from
    a narrow phone to a wide screen: no tile or open-end slot over another, none past the edges."""
    url, _ = server
    rng = np.random.default_rng(7)
    views = []
    for preset, counts in PRESET_PLAYERS.items():
        for players in counts:
            rules = Rules.preset(preset, players)
            for _ in range(6):
                hands, boneyard = deal_to_hands(rules, random_deals(rules, 1, rng)[0])
                rnd = Round(rules, hands, boneyard, opener=int(rng.integers(players)))
                while not rnd.over:
                    legal = rnd.legal_actions()
                    rnd.step(legal[int(rng.integers(len(legal)))])
                    if len(rnd.table) % 4 == 0 or rnd.over:
                        views.append({"table": table_boxes(rnd), "ends": rnd.ends()})
    page = browser.new_page()
    page.goto(url)
    problems = page.evaluate(
        """([text, widths]) => {
            const views = JSON.parse(text);
            const problems = [];
            for (const view of views) for (const width of widths) {
                const { tiles, slots } = layoutTable(view.table, view.ends, width);
                const shapes = [...tiles, ...Object.values(slots)];
                if (tiles.length !== view.table.length) problems.push(`${tiles.length} tiles drawn`);
                const ends = Object.keys(view.ends).sort().join();
                if (Object.keys(slots).sort().join() !== ends) problems.push("an end lacks a slot");
                shapes.forEach((a, i) => {
                    if (a.x < -width / 2 || a.x + a.w > width / 2) problems.push(`past the edge at ${width}`);
                    for (let j = i + 1; j < shapes.length; j++) {
                        const b = shapes[j];
                        const across = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
                        const down = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
                        if (across > 0.01 && down > 0.01) problems.push(`overlap at width ${width}`);
                    }
                });
            }
            return problems;
        }""",
        [json.dumps(views), [14, 24, 33, 57]],
    )
    assert len(views) > 250 and not problems, problems[:5]
    page.close()


def test_only_the_agents_trained_for_the_chosen_rules_are_offered(
    server: tuple[str, object], browser: object
) -> None:
    url, _ = server
    names = list(checkpoint_files([]))
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(url)

    def offered(preset: str, players: int) -> set[str]:
        page.select_option("#preset", preset)
        page.select_option("#players", str(players))
        values = page.eval_on_selector("select.opponent", "s => [...s.options].map((o) => o.value)")
        return set(values) - set(
            page.eval_on_selector("select.opponent optgroup", "g => [...g.children].map((o) => o.value)")
        )

    def trained_for(preset: str, players: int) -> set[str]:
        return {n for n in names if n == f"{preset}-{players}p" or n.startswith(f"{preset}-{players}p-")}

    for preset, players in [("block", 2), ("partnership", 4), ("all_fives", 2)]:
        assert offered(preset, players) == trained_for(preset, players) != set()
        assert page.is_visible("#agents-note")
    assert offered("block", 3) == set()  # block-2p would fail: "observation 113, 56 actions"
    assert page.inner_text("#agents-summary").startswith("No trained agent plays block with 3 players")
    page.click("#agents-summary")
    missing = page.locator("#agents-missing li").all_inner_texts()
    assert "block-2p: block with 2 players" in missing and len(missing) == len(names)
    shot(page, "agents")
    page.click("button.tab[data-tab=watch]")  # the analysts of a block 2p game: those trained for it
    page.select_option("#saved-games", "tiny-games/game-000.json")
    page.click("#load-saved")
    page.wait_for_selector("body[data-watch-step='0']")
    analysts = set(page.eval_on_selector("#analyst", "s => [...s.options].map((o) => o.value)"))
    assert analysts == {"auto", "none"} | trained_for("block", 2)
    page.close()


def test_the_rounds_result_is_in_view_on_a_phone(server: tuple[str, object], browser: object) -> None:
    url, app = server
    state = find_state(app, "partnership", 4, lambda g: g.round.over and not g.match.over)
    phone = browser.new_page(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    phone.goto(f"{url}/?pace=0")
    assert show_game(phone, app, state) == "round-over"
    for part in ("#play-result-text", "#next-round"):
        box = phone.locator(part).bounding_box()
        assert box["y"] >= 0 and box["y"] + box["height"] <= 844, f"{part} is at y = {box['y']:.0f}"
    no_sideways_scroll(phone)
    shot(phone, "phone_result")
    phone.tap("#next-round")
    settle(phone)
    assert phone.is_hidden("#play-result")
    phone.close()


def test_new_game_asks_before_it_replaces_a_game_in_progress(
    server: tuple[str, object], browser: object
) -> None:
    url, app = server
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(f"{url}/?pace=0")
    page.fill("#seed", "4")
    page.click("#deal")  # no game yet: nothing to ask
    settle(page)
    assert page.locator("#confirm-new[open]").count() == 0
    hand = hand_of(page)
    session = page_session(page, app)
    game = session.play
    page.fill("#seed", "")
    page.focus("#deal")  # the keyboard player's Shift+Tab away from the hand
    page.keyboard.press("Enter")
    page.wait_for_selector("#confirm-new[open]")
    assert page.evaluate("document.activeElement.id") == "confirm-keep"
    assert "A game is in progress (round 1" in page.inner_text("#confirm-new-text")
    shot(page, "confirm_new")
    page.keyboard.press("Escape")
    page.wait_for_selector("#confirm-new:not([open])", state="attached")
    page.click("#deal")
    page.click("#confirm-keep")
    assert page.locator("#confirm-new[open]").count() == 0
    assert session.play is game and hand_of(page) == hand
    page.click("#deal")
    page.click("#confirm-deal")
    settle(page)
    assert session.play is not game
    page.close()


def test_a_restart_shows_loading_your_game_then_the_game(
    tmp_path: Path, browser: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A restarted server revives the game on its first request (a trained opponent loads): the page
    says "loading your game…" meanwhile, never a default form, then shows the game as it was."""
    port, store, checkpoints = free_port(), tmp_path / "table.sqlite", checkpoint_files([])
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    with serving(create_app(checkpoints, store=store), port) as url:
        page.goto(f"{url}/?pace=0")
        page.select_option("#preset", "block")
        page.select_option("#players", "2")
        page.select_option("select.opponent", "block-2p")
        page.click("#deal")
        settle(page)
        hand = hand_of(page)
    restore = PlayGame.restore
    monkeypatch.setattr(
        PlayGame,
        "restore",
        classmethod(lambda cls, state, seats: (time.sleep(1.5), restore(state, seats))[1]),
    )
    with serving(create_app(checkpoints, store=store), port):
        page.reload()
        assert page.is_visible("#loading") and page.inner_text("#loading") == "loading your game…"
        assert page.is_hidden("#new-game") and page.is_hidden("#play-board")
        shot(page, "loading")
        settle(page)
        assert page.is_hidden("#loading") and page.is_visible("#new-game")
        assert page.input_value("select.opponent") == "block-2p" and hand_of(page) == hand
    page.close()


def test_a_fresh_page_logs_no_error(server: tuple[str, object], browser: object) -> None:
    url, _ = server
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.goto(url)
    page.wait_for_selector("#deal")
    assert not errors, errors
    assert page.get_attribute("body", "data-play") == "none" and page.is_hidden("#loading")
    context.close()


def test_an_end_choice_only_where_the_ends_differ_with_arrows_and_escape(
    server: tuple[str, object], browser: object
) -> None:
    url, app = server

    def fitting(game: PlayGame, same: bool) -> str | None:
        """A tile of the player's that fits both ends, past the opening, which show the same number
        (``same``: in block either side leaves the same table) or not."""
        rnd = game.round
        if rnd.over or rnd.to_play != 0 or len(rnd.table) < 2 or (len(set(rnd.ends().values())) == 1) != same:
            return None
        fits = Counter(decode(action)[0] for action in rnd.legal_actions())
        return next((tile_name(tile) for tile, count in fits.items() if count == 2), None)

    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(f"{url}/?pace=0")
    for same in (True, False):
        state = find_state(app, "block", 2, lambda g, same=same: fitting(g, same) is not None)
        show_game(page, app, state)
        game = page_session(page, app).play
        tile, placed = fitting(game, same), len(game.round.table)
        if same:  # played at once, without asking
            page.click(f"#play-hand svg.legal[data-tile='{tile}']")
            page.locator("#play-table g.domino").nth(placed).wait_for(state="attached", timeout=5000)
            continue
        page.focus(f"#play-hand svg.legal[data-tile='{tile}']")
        page.keyboard.press("Enter")
        page.wait_for_selector("#end-choice:not([hidden])")
        first, second = (b.get_attribute("data-end") for b in page.locator("#end-choice button").all())
        focused = "document.activeElement.dataset.end || document.activeElement.dataset.tile"
        assert page.evaluate(focused) == first
        page.keyboard.press("ArrowRight")
        assert page.evaluate(focused) == second
        page.keyboard.press("ArrowLeft")
        assert page.evaluate(focused) == first
        assert page.locator("#play-table g.end-slot.choice").count() == 2
        page.keyboard.press("Escape")
        assert page.is_hidden("#end-choice") and page.evaluate(focused) == tile
        assert page.locator("#play-table g.domino").count() == placed
        page.keyboard.press("Enter")  # asks again; this time a tap on the table's slot plays it
        page.click(f"#play-table g.end-slot.choice[data-end='{second}']")
        page.locator("#play-table g.domino").nth(placed).wait_for(state="attached")
        assert game.round.table[placed].end == second
    page.close()


def test_an_automatic_pass_shows_on_the_table_for_a_moment(
    server: tuple[str, object], browser: object
) -> None:
    url, app = server

    def pass_next(game: PlayGame) -> int | None:
        """The player's move that the opponent answers with a pass (one that asks no end)."""
        if game.round.over or game.round.to_play != 0 or not game.round.table:
            return None
        for move in legal_view(game.round):
            if sum(m["tile"] == move["tile"] for m in legal_view(game.round)) > 1:
                continue
            after = copy.deepcopy(game.round)
            after.step(move["action"])
            if after.events[-1][0] == "pass" and after.events[-1][1] == 1:
                return move["action"]
        return None

    state = find_state(app, "block", 2, lambda g: pass_next(g) is not None)
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(f"{url}/?pace=0")
    show_game(page, app, state)
    action = pass_next(page_session(page, app).play)
    page.click(f"#play-hand svg.legal[data-tile='{tile_name(decode(action)[0])}']")
    page.wait_for_selector("#play-seats .seat[data-seat='1'] .callout", timeout=2000)
    assert page.inner_text("#play-seats .seat[data-seat='1'] .callout") == "passes"
    assert "first to 100" in page.inner_text("#play-match")
    page.wait_for_selector(".callout", state="detached", timeout=5000)  # a moment, then gone
    page.close()
