"""The web table's HTTP side: a FastAPI app serving the page and a small JSON API over ``state``.

Safe by default, because it runs on a person's own machine and any page they visit can
reach it:

* the command binds 127.0.0.1 and the app answers only to local host names (no DNS rebinding);
* a request that changes anything must come from the table's own page: its ``Origin`` must be
  this server's own origin (a page on another site, or another port of 127.0.0.1, gets 403);
* every game lives in the session of one browser (an HttpOnly, SameSite=Strict cookie), made
  only by the request that starts a game, ended only by idle time, and never evicted
  (``sessions``); a cookie the server no longer knows gets one 410 that clears it;
* a deal depends on the server's secret, so no seed a page sends reveals another seat's tiles;
* request bodies are strict types: ``{"seat": true}`` or ``{"action": "1"}`` is a 400;
* a bad request is a 4xx answer ``{"error": message}``, never a traceback;
* no file path is ever taken from a request: checkpoints are chosen by name from the list
  the server was started with (the shipped agents and ``--checkpoint`` files), saved arena
  games by name from ``--games`` folders, and an upload is parsed as a game record and
  refused with the record's own error message;
* trained opponents are loaded once per server and shared; opponents think off the event loop,
  searches in worker processes (``workers``), so a long search in one game never stalls another.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import anyio
import numpy as np
from fastapi import Depends, FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware

from agents.bots.registry import BOT_NAMES, BOTS, load_policy, make_bot
from agents.web.sessions import SESSION_IDLE, Session, SessionTable
from agents.web.state import PlayGame, WatchGame, legal_view
from agents.web.workers import LIGHT_THREADS, SEARCH_BOTS, SEARCH_WORKERS, Searcher, SearchPool
from domino_env.engine.rules import PRESET_NAMES, PRESET_PLAYERS, Rules
from domino_env.envs.policies import Policy

STATIC = Path(__file__).parent / "static"
SESSION_COOKIE = "domino_session"
MAX_UPLOAD = 1 << 20
MAX_REQUEST = 16 * 1024
"""Bytes of any other request body (a new game's settings are a few hundred): refused unread past it."""
"""Largest record upload in bytes (a whole round is a few KB)."""
SEED_MAX = 2**62
"""Largest seed a page may ask for."""
PLAYABLE_BOTS = tuple(
    name for name in BOT_NAMES if not getattr(BOTS[name], "cheats", False) and name != "best_response"
)
"""Bots a person can sit against: all but ``omniscient``, which reads the batched core's hidden state,
and ``best_response``, which is built against a target policy, not a person."""
LOCAL_HOSTS = ["127.0.0.1", "localhost"]
SAFE_METHODS = ("GET", "HEAD")
ENDED = (
    "this game has ended: the server was restarted without it, or it sat unused for "
    f"{SESSION_IDLE // 3600} hours. Start a new game."
)
FORGET_COOKIE = f"{SESSION_COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=strict"


@dataclass(frozen=True)
class GameFile:
    """A record file the server was pointed at (``--games``), shown by name."""

    path: Path
    seats: list[str] | None


class NewGame(BaseModel):
    """``POST /api/play``: the rules, your seat, and who sits at the other seats (in seat order)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    preset: str = "block"
    players: int | None = None
    seat: int = 0
    opponents: list[str] = Field(default_factory=list, max_length=3)
    """One bot or checkpoint name per other seat; missing ones are ``random``."""
    seed: int | None = Field(None, ge=0, le=SEED_MAX)
    """The same seed at the same seat deals the same game again on this server (it is mixed with
    the seat and the server's secret, so it tells nobody the deal)."""


class Move(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    action: int


class LoadGame(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    name: str


def deal_seed(secret: bytes, request: NewGame, rules: Rules) -> int:
    """The seed a game is dealt from: a fresh random one, or the page's seed mixed with the rules,
    the seat and the server's secret (another seat, or anyone without the secret, gets nothing
    from it)."""
    if request.seed is None:
        return secrets.randbelow(SEED_MAX)
    text = f"{rules.name}|{rules.players}|{request.seat}|{request.seed}".encode()
    return int.from_bytes(hashlib.blake2b(text, key=secret, digest_size=8).digest(), "big") % SEED_MAX


async def revive(request: Request, session: Session) -> None:
    """Rebuild the games of a session read back after a restart (trained opponents may load)."""
    async with session.lock:
        if session.stored is None:
            return
        stored, session.stored = session.stored, None
        if stored["play"]:
            try:
                session.play = await anyio.to_thread.run_sync(
                    PlayGame.restore, stored["play"], request.app.state.seat_opponents
                )
            except (ValueError, KeyError, TypeError) as error:
                session.ended = (
                    f"your game could not be resumed after the server restarted ({error}). Start a new game."
                )
        if stored["watch"]:
            try:
                session.watch = WatchGame.restore(stored["watch"])
            except (ValueError, KeyError, TypeError):
                session.watch = None
        request.app.state.sessions.save(session)


async def existing(request: Request) -> Session | None:
    """The browser's session, or None without a cookie; a cookie the server no longer knows
    (its game ended with a restart or idle time) gets one 410 that clears it."""
    token = request.cookies.get(SESSION_COOKIE)
    if token is None:
        return None
    session = request.app.state.sessions.find(token)
    if session is None:
        raise HTTPException(410, ENDED, headers={"set-cookie": FORGET_COOKIE})
    if session.stored is not None:
        await revive(request, session)
    return session


async def own_or_new(request: Request, response: Response) -> Session:
    """The session of the request that starts a game: the browser's own, else a new one."""
    sessions: SessionTable = request.app.state.sessions
    token = request.cookies.get(SESSION_COOKIE)
    session = sessions.find(token) if token else None
    if session is None:
        token, session = sessions.create(request.client.host if request.client else "")
    if session.stored is not None:
        await revive(request, session)
    response.set_cookie(SESSION_COOKIE, token, max_age=SESSION_IDLE, httponly=True, samesite="strict")
    return session


Table = Annotated[Session | None, Depends(existing)]
"""The browser's own games, for an endpoint that reads or plays them."""
NewTable = Annotated[Session, Depends(own_or_new)]
"""The browser's own games, made by the endpoint that starts one."""


def body_too_big(request: Request) -> str:
    """Why a request body is refused before it is read ('' when it is not): past its size bound
    (``MAX_UPLOAD`` for a record, ``MAX_REQUEST`` for anything else), or of a size it does not say."""
    bound = MAX_UPLOAD if request.url.path == "/api/watch/upload" else MAX_REQUEST
    size = request.headers.get("content-length")
    if size is None:
        chunked = "chunked" in request.headers.get("transfer-encoding", "")
        return "send the request body with a Content-Length" if chunked else ""
    if not size.isdigit() or int(size) > bound:
        return f"the request body is at most {bound // 1024} KB"
    return ""


def games_in(folder: Path) -> dict[str, GameFile]:
    """The saved games of an arena output folder (its ``games.json`` index), or its record files."""
    index = folder / "games.json"
    if index.is_file():
        try:
            entries = json.loads(index.read_text())["games"]
            return {
                f"{folder.name}/{e['file']}": GameFile(folder / e["file"], list(e["seats"])) for e in entries
            }
        except (KeyError, TypeError) as error:
            raise ValueError(f"{index}: not an arena games index ({type(error).__name__}: {error})") from None
    return {f"{folder.name}/{p.name}": GameFile(p, None) for p in sorted(folder.glob("*.json"))}


def checkpoint_rules(checkpoints: dict[str, Path]) -> list[dict[str, Any]]:
    """What each checkpoint plays, read from its file: ``{name, preset, players}``, so the page offers
    it only for those rules; ``preset`` None with the ``error`` when the file cannot be read, and
    without one for a format other than ``.pt`` (its rules are checked when a game starts)."""
    try:
        from agents.training.checkpoint import POLICY_KEYS, load_checkpoint, rules_of  # loads torch
    except ImportError as error:  # the web extra alone: no network can play here
        why = f"trained agents need torch: {error}"
        return [{"name": name, "preset": None, "players": None, "error": why} for name in checkpoints]
    agents = []
    for name, path in checkpoints.items():
        entry: dict[str, Any] = {"name": name, "preset": None, "players": None}
        if path.suffix == ".pt":
            try:
                rules = rules_of(load_checkpoint(path, POLICY_KEYS))
                entry.update(preset=rules.name, players=rules.players)
            except (ValueError, KeyError, TypeError, OSError) as error:
                entry["error"] = " ".join(str(error).replace(str(path), name).split())
        agents.append(entry)
    return agents


def create_app(
    checkpoints: dict[str, Path] | None = None,
    games: dict[str, GameFile] | None = None,
    hosts: Sequence[str] = (),
    store: Path | None = None,
    search_workers: int = SEARCH_WORKERS,
) -> FastAPI:
    """The app; ``checkpoints``: name -> policy file a page may pick, ``games``: name -> saved record,
    ``hosts``: host names it answers to besides the local ones (the address it was bound to),
    ``store``: the SQLite file that keeps the games across restarts (None: memory only),
    ``search_workers``: processes for the search bots' moves."""
    checkpoints = dict(checkpoints or {})
    games = dict(games or {})
    networks: dict[tuple[str, Rules], Any] = {}
    sessions = SessionTable(store)
    searches = SearchPool(search_workers)
    light = anyio.CapacityLimiter(LIGHT_THREADS)
    catalog: list[list[dict[str, Any]]] = []
    catalog_lock = threading.Lock()

    def agents_catalog() -> list[dict[str, Any]]:
        """``checkpoint_rules``, read once per server (in a thread: it loads torch and every file)."""
        with catalog_lock:
            if not catalog:
                catalog.append(checkpoint_rules(checkpoints))
            return catalog[0]

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        threading.Thread(target=agents_catalog, daemon=True).start()  # ready before the first page asks
        yield
        searches.close()
        sessions.close()

    app = FastAPI(title="domino-rl table", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.sessions = sessions
    app.state.networks = networks

    @app.middleware("http")
    async def guard(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        """Only the table's own page may change anything: a browser names the page's origin on
        every POST, and a foreign one (another site, another port) is refused before any work."""
        if request.method not in SAFE_METHODS:
            too_big = body_too_big(request)
            if too_big:
                return JSONResponse({"error": too_big}, status_code=413)
            origin = request.headers.get("origin")
            own = f"{request.url.scheme}://{request.headers.get('host', '')}"
            if origin != own:
                message = (
                    "this request must come from the table's own page (it sent no Origin)"
                    if origin is None
                    else f"requests from {origin} are refused: only {own} may change a game"
                )
                return JSONResponse({"error": message}, status_code=403)
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = "default-src 'self'; img-src 'self' data:"
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Cache-Control"] = "no-store"
        return response

    app.add_middleware(TrustedHostMiddleware, allowed_hosts=[*LOCAL_HOSTS, *hosts])  # outermost: runs first

    @app.exception_handler(ValueError)
    async def bad_value(request: Request, error: ValueError) -> JSONResponse:
        return JSONResponse({"error": " ".join(str(error).split())}, status_code=400)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, error: RequestValidationError) -> JSONResponse:
        problem = error.errors()[0]
        if problem.get("type") == "json_invalid":
            reason = problem.get("ctx", {}).get("error", problem["msg"])
            return JSONResponse({"error": f"the request body is not JSON: {reason}"}, status_code=400)
        where = ".".join(str(part) for part in problem["loc"] if part != "body")
        return JSONResponse({"error": f"{where or 'request'}: {problem['msg']}"}, status_code=400)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        return JSONResponse(
            {"error": str(error.detail)}, status_code=error.status_code, headers=error.headers
        )

    def trained(name: str, rules: Rules) -> Policy:
        """The checkpoint listed as ``name``, loaded once per rules and shared by every game (greedy,
        so it keeps no state between moves); its errors name it, not its file."""
        if name not in checkpoints:
            known = ", ".join(checkpoints) or "none (start the server with --checkpoint FILE)"
            raise ValueError(f"unknown checkpoint {name!r}; this server has: {known}")
        key = (name, rules)
        if key not in networks:
            path = str(checkpoints[name])
            try:
                networks[key] = load_policy(path, rules)  # checks the checkpoint was trained for these rules
            except ValueError as error:
                raise ValueError(str(error).replace(path, name)) from None
        return networks[key]

    def opponent(name: str, rules: Rules, seed: int) -> Policy | Searcher:
        if name in SEARCH_BOTS:
            return Searcher(name)
        if name in PLAYABLE_BOTS:
            return make_bot(name, rules, seed=seed)
        if name in checkpoints:
            return trained(name, rules)
        raise ValueError(
            f"unknown opponent {name!r}; choose a bot ({', '.join(PLAYABLE_BOTS)}) "
            f"or a checkpoint ({', '.join(checkpoints) or 'none on this server'})"
        )

    def seat_opponents(rules: Rules, human: int, names: list[str], seed: int) -> dict[int, Any]:
        return {s: opponent(names[s], rules, seed + s) for s in range(rules.players) if s != human}

    app.state.seat_opponents = seat_opponents

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/api/options")
    async def options() -> dict[str, Any]:
        """What the page offers: presets and their player counts, bots, checkpoints (``agents``: the
        rules each plays), saved games."""
        return {
            "presets": {name: list(PRESET_PLAYERS[name]) for name in PRESET_NAMES},
            "bots": list(PLAYABLE_BOTS),
            "checkpoints": list(checkpoints),
            "agents": await anyio.to_thread.run_sync(agents_catalog),
            "games": list(games),
        }

    @app.post("/api/play")
    async def new_game(request: NewGame, table: NewTable) -> dict[str, Any]:
        rules = Rules.preset(request.preset, request.players)
        if not 0 <= request.seat < rules.players:
            raise ValueError(f"your seat must be 0 to {rules.players - 1}, got {request.seat}")
        others = [s for s in range(rules.players) if s != request.seat]
        if len(request.opponents) > len(others):
            raise ValueError(
                f"{rules.players} players: at most {len(others)} opponents, got {len(request.opponents)}"
            )
        names = request.opponents + ["random"] * (len(others) - len(request.opponents))
        seat_names = ["you" if s == request.seat else names[others.index(s)] for s in range(rules.players)]
        seed = deal_seed(sessions.secret, request, rules)
        settings = {**request.model_dump(), "players": rules.players, "opponents": names}

        def build() -> PlayGame:
            return PlayGame(
                rules,
                request.seat,
                seat_opponents(rules, request.seat, seat_names, seed),
                seat_names,
                seed,
                settings,
            )

        game = await anyio.to_thread.run_sync(
            build, limiter=light
        )  # a first checkpoint loads torch and a file
        async with table.lock:
            table.play, table.ended = game, None
            sessions.save(table)
            return game.view()

    def playing(table: Session | None) -> PlayGame:
        if table is not None and table.ended:
            raise HTTPException(410, table.ended)
        if table is None or table.play is None:
            raise HTTPException(404, "no game in progress: start one")
        return table.play

    @app.get("/api/play")
    async def play_view(table: Table) -> dict[str, Any]:
        """The game in progress, as the page shows it after a reload."""
        game = playing(table)
        async with table.lock:
            return game.view()

    @app.get("/api/play/current")
    async def play_current(request: Request) -> JSONResponse:
        """What a page shows when it opens: ``{"game": view}``, ``{"game": null}`` with no game, or
        ``{"game": null, "ended": why}`` (a plain 200 either way, so a fresh page logs no error)."""
        try:
            table = await existing(request)
        except HTTPException as error:  # a cookie the server no longer knows: cleared here
            return JSONResponse({"game": None, "ended": str(error.detail)}, headers=error.headers)
        if table is None or (table.play is None and not table.ended):
            return JSONResponse({"game": None, "ended": None})
        if table.ended:
            return JSONResponse({"game": None, "ended": table.ended})
        async with table.lock:
            return JSONResponse({"game": table.play.view(), "ended": None})

    async def changed(table: Table, change: Callable[[PlayGame], Awaitable[None]]) -> dict[str, Any]:
        """``change`` made to the table's game under its lock, then the table saved: the new view."""
        game = playing(table)
        async with table.lock:
            await change(game)
            sessions.save(table)
            return game.view()

    @app.post("/api/play/move")
    async def play_move(move: Move, table: Table) -> dict[str, Any]:
        async def human_move(game: PlayGame) -> None:
            game.human_move(move.action)

        return await changed(table, human_move)

    @app.post("/api/play/advance")
    async def play_advance(table: Table) -> dict[str, Any]:
        """One opponent move (the page calls this until it is the person's turn, so moves show one by one)."""

        async def bot_move(game: PlayGame) -> None:
            if not game.bot_to_move:
                return
            seat, obs, mask = game.bot_position()
            policy = game.policies[seat]
            if isinstance(policy, Searcher):
                action = await searches.move(policy.name, game.rules, obs, mask)
            else:
                chosen = await anyio.to_thread.run_sync(policy, obs, mask, limiter=light)
                action = int(np.asarray(chosen)[0])
            game.bot_play(seat, action)

        return await changed(table, bot_move)

    @app.post("/api/play/next")
    async def play_next(table: Table) -> dict[str, Any]:
        async def next_round(game: PlayGame) -> None:
            game.next_round()

        return await changed(table, next_round)

    def hint_agent(rules: Rules) -> str:
        """The trained agent that gives hints for these rules: the one named after them."""
        name = f"{rules.name}-{rules.players}p"
        if name not in checkpoints:
            raise HTTPException(
                404, f"no trained agent for {rules.name} with {rules.players} players gives hints"
            )
        return name

    @app.get("/api/play/hint")
    async def play_hint(table: Table) -> dict[str, Any]:
        """The move a trained agent would make in your place, from what your seat sees."""
        game = playing(table)
        async with table.lock:
            name = hint_agent(game.rules)
            obs, mask = game.hint_position()
            network = await anyio.to_thread.run_sync(trained, name, game.rules, limiter=light)
            probs = await anyio.to_thread.run_sync(network.probabilities, obs, mask, limiter=light)
            moves = legal_view(game.round)
            best = max(moves, key=lambda m: probs[0, m["action"]])
            return {**best, "agent": name, "p": float(probs[0, best["action"]])}

    @app.post("/api/play/save")
    async def play_save(table: Table) -> dict[str, Any]:
        """The shown round, to watch from your own seat (its other hands stay hidden)."""
        game = playing(table)
        async with table.lock:
            table.watch = WatchGame(game.record(), list(game.names), seat=game.human)
            sessions.save(table)
            return table.watch.info()

    async def watch(table: Session, game: WatchGame) -> dict[str, Any]:
        async with table.lock:
            table.watch = game
            sessions.save(table)
        return game.info()

    @app.post("/api/watch/upload")
    async def watch_upload(request: Request, table: NewTable) -> dict[str, Any]:
        """A game record as the request body (the page sends the chosen file as it is)."""
        size = request.headers.get("content-length")
        if size is not None and (not size.isdigit() or int(size) > MAX_UPLOAD):
            raise HTTPException(413, f"a record file is at most {MAX_UPLOAD // 1024} KB")
        body = await request.body()
        if len(body) > MAX_UPLOAD:
            raise HTTPException(413, f"a record file is at most {MAX_UPLOAD // 1024} KB")
        try:
            record = json.loads(body)
        except (UnicodeDecodeError, RecursionError, json.JSONDecodeError) as error:
            raise ValueError(f"the file is not JSON: {error}") from None
        return await watch(table, WatchGame(record))

    @app.post("/api/watch/load")
    async def watch_load(request: LoadGame, table: NewTable) -> dict[str, Any]:
        if request.name not in games:
            raise HTTPException(404, f"no saved game named {request.name!r}")
        saved = games[request.name]
        try:
            text = saved.path.read_text()
        except OSError as error:
            raise HTTPException(
                404, f"saved game {request.name!r} cannot be read: {error.strerror}"
            ) from None
        return await watch(table, WatchGame(json.loads(text), saved.seats))

    @app.get("/api/watch")
    async def watch_view(
        table: Table, step: int = 0, viewer: int = -1, analyst: str = "auto"
    ) -> dict[str, Any]:
        """The position after ``step`` moves, seen by ``viewer`` (-1: every hand), with the policy of
        ``analyst`` (a checkpoint name; ``auto``: the mover's own when it is a checkpoint; ``none``)."""
        if table is None or table.watch is None:
            raise HTTPException(404, "no game loaded: upload a record or pick a saved game")
        async with table.lock:
            game = table.watch
            rules = game.position(0).rules
            mover = game.position(step).to_play if 0 <= step <= len(game.moves) else None
            name, no_analyst = None, "No policy chosen: pick a trained agent under Policy of."
            if analyst == "auto":
                name = game.names[mover] if mover is not None and game.names[mover] in checkpoints else None
                if mover is not None and name is None:
                    no_analyst = (
                        f"Seat {mover} ({game.names[mover]}) is not a trained agent of this server: "
                        "pick one under Policy of to see its probabilities."
                    )
            elif analyst != "none":
                name = analyst
            network = await anyio.to_thread.run_sync(trained, name, rules, limiter=light) if name else None
            return await anyio.to_thread.run_sync(
                game.view,
                step,
                None if viewer == -1 else viewer,
                network and network.probabilities,
                no_analyst,
                limiter=light,
            )

    return app
