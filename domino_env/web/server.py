"""The web table's HTTP side: a FastAPI app serving the page and a small JSON API over ``state``.

Safe by default, because it runs on a person's own machine and any page they visit can
reach it:

* the command binds 127.0.0.1 and the app answers only to local host names (no DNS rebinding);
* every game lives in the session of one browser (an HttpOnly, SameSite=Strict cookie);
* a bad request is a 4xx answer ``{"error": message}``, never a traceback;
* no file path is ever taken from a request: checkpoints are chosen by name from the list
  the server was started with (the shipped agents and ``--checkpoint`` files), saved arena
  games by name from ``--games`` folders, and an upload is parsed as a game record and
  refused with the record's own error message;
* opponents' moves run in worker threads, so a long search in one game never stalls another.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import anyio
from fastapi import Depends, FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware

from agents.bots.registry import BOT_NAMES, BOTS, load_policy, make_bot
from domino_env.engine.rules import PRESET_NAMES, PRESET_PLAYERS, Rules
from domino_env.envs.policies import Policy
from domino_env.web.state import PlayGame, Probabilities, WatchGame

STATIC = Path(__file__).parent / "static"
SESSION_COOKIE = "domino_session"
MAX_SESSIONS = 1000
"""Sessions kept; the least recently used is dropped beyond this."""
MAX_UPLOAD = 1 << 20
"""Largest record upload in bytes (a whole round is a few KB)."""
SEED_MAX = 2**62
"""Largest seed a page may ask for (the opponents are seeded ``seed + seat``)."""
PLAYABLE_BOTS = tuple(name for name in BOT_NAMES if not getattr(BOTS[name], "cheats", False))
"""Bots a person can sit against: all but ``omniscient``, which reads the batched core's hidden state."""
LOCAL_HOSTS = ["127.0.0.1", "localhost"]


@dataclass
class Session:
    """One browser's games (a person plays one game and watches one record at a time)."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    play: PlayGame | None = None
    watch: WatchGame | None = None


@dataclass(frozen=True)
class GameFile:
    """A record file the server was pointed at (``--games``), shown by name."""

    path: Path
    seats: list[str] | None


class NewGame(BaseModel):
    """``POST /api/play``: the rules, your seat, and who sits at the other seats (in seat order)."""

    model_config = ConfigDict(extra="forbid")
    preset: str = "block"
    players: int | None = None
    seat: int = 0
    opponents: list[str] = Field(default_factory=list)
    """One bot or checkpoint name per other seat; missing ones are ``random``."""
    seed: int | None = Field(None, ge=0, le=SEED_MAX)


class Move(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: int


class LoadGame(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str


async def session(request: Request, response: Response) -> Session:
    """This browser's session, made (and its cookie set) on the first request that needs it.

    Async, so that it runs on the event loop: requests never touch the session table at once."""
    sessions: OrderedDict[str, Session] = request.app.state.sessions
    key = request.cookies.get(SESSION_COOKIE)
    if key not in sessions:
        key = secrets.token_urlsafe(24)
        sessions[key] = Session()
        response.set_cookie(SESSION_COOKIE, key, httponly=True, samesite="strict")
        while len(sessions) > MAX_SESSIONS:
            sessions.popitem(last=False)
    sessions.move_to_end(key)
    return sessions[key]


Table = Annotated[Session, Depends(session)]
"""The browser's own games, for an endpoint."""


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


def create_app(
    checkpoints: dict[str, Path] | None = None,
    games: dict[str, GameFile] | None = None,
    hosts: Sequence[str] = (),
) -> FastAPI:
    """The app; ``checkpoints``: name -> policy file a page may pick, ``games``: name -> saved record,
    ``hosts``: host names it answers to besides the local ones (the address it was bound to)."""
    checkpoints = dict(checkpoints or {})
    games = dict(games or {})
    networks: dict[tuple[str, Rules], Any] = {}
    app = FastAPI(title="domino-rl table", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.sessions = OrderedDict()
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=[*LOCAL_HOSTS, *hosts])

    @app.middleware("http")
    async def headers(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = "default-src 'self'; img-src 'self' data:"
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Cache-Control"] = "no-store"
        return response

    @app.exception_handler(ValueError)
    async def bad_value(request: Request, error: ValueError) -> JSONResponse:
        return JSONResponse({"error": " ".join(str(error).split())}, status_code=400)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, error: RequestValidationError) -> JSONResponse:
        problem = error.errors()[0]
        where = ".".join(str(part) for part in problem["loc"] if part != "body")
        return JSONResponse({"error": f"{where or 'request'}: {problem['msg']}"}, status_code=400)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        return JSONResponse({"error": str(error.detail)}, status_code=error.status_code)

    def trained(name: str, rules: Rules, seed: int = 0) -> Policy:
        """The checkpoint listed as ``name``; its errors name it, not its file."""
        if name not in checkpoints:
            known = ", ".join(checkpoints) or "none (start the server with --checkpoint FILE)"
            raise ValueError(f"unknown checkpoint {name!r}; this server has: {known}")
        path = str(checkpoints[name])
        try:
            return load_policy(path, rules, seed=seed)  # checks the checkpoint was trained for these rules
        except ValueError as error:
            raise ValueError(str(error).replace(path, name)) from None

    def network(name: str, rules: Rules) -> Probabilities:
        """A checkpoint's ``probabilities``, loaded once per rules."""
        key = (name, rules)
        if key not in networks:
            networks[key] = trained(name, rules)
        return networks[key].probabilities

    def opponent(name: str, rules: Rules, seed: int) -> Policy:
        if name in PLAYABLE_BOTS:
            return make_bot(name, rules, seed=seed)
        if name in checkpoints:
            return trained(name, rules, seed)
        raise ValueError(
            f"unknown opponent {name!r}; choose a bot ({', '.join(PLAYABLE_BOTS)}) "
            f"or a checkpoint ({', '.join(checkpoints) or 'none on this server'})"
        )

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/api/options")
    async def options() -> dict[str, Any]:
        """What the page offers: presets and their player counts, bots, checkpoints, saved games."""
        return {
            "presets": {name: list(PRESET_PLAYERS[name]) for name in PRESET_NAMES},
            "bots": list(PLAYABLE_BOTS),
            "checkpoints": list(checkpoints),
            "games": list(games),
        }

    @app.post("/api/play")
    async def new_game(request: NewGame, table: Table) -> dict[str, Any]:
        rules = Rules.preset(request.preset, request.players)
        if not 0 <= request.seat < rules.players:
            raise ValueError(f"your seat must be 0 to {rules.players - 1}, got {request.seat}")
        others = [s for s in range(rules.players) if s != request.seat]
        if len(request.opponents) > len(others):
            raise ValueError(
                f"{rules.players} players: at most {len(others)} opponents, got {len(request.opponents)}"
            )
        names = request.opponents + ["random"] * (len(others) - len(request.opponents))
        seed = secrets.randbelow(SEED_MAX) if request.seed is None else request.seed

        def build() -> PlayGame:
            policies = {s: opponent(n, rules, seed + s) for s, n in zip(others, names, strict=True)}
            seat_names = [
                "you" if s == request.seat else names[others.index(s)] for s in range(rules.players)
            ]
            return PlayGame(rules, request.seat, policies, seat_names, seed)

        game = await anyio.to_thread.run_sync(build)  # a checkpoint loads torch and a file
        async with table.lock:
            table.play = game
            return game.view()

    def playing(table: Session) -> PlayGame:
        if table.play is None:
            raise HTTPException(404, "no game in progress: start one")
        return table.play

    @app.get("/api/play")
    async def play_view(table: Table) -> dict[str, Any]:
        async with table.lock:
            return playing(table).view()

    @app.post("/api/play/move")
    async def play_move(move: Move, table: Table) -> dict[str, Any]:
        async with table.lock:
            game = playing(table)
            game.human_move(move.action)
            return game.view()

    @app.post("/api/play/advance")
    async def play_advance(table: Table) -> dict[str, Any]:
        """One opponent move (the page calls this until it is the person's turn, so moves show one by one)."""
        async with table.lock:
            game = playing(table)
            if game.bot_to_move:
                await anyio.to_thread.run_sync(game.bot_move)
            return game.view()

    @app.post("/api/play/next")
    async def play_next(table: Table) -> dict[str, Any]:
        async with table.lock:
            game = playing(table)
            game.next_round()
            return game.view()

    @app.post("/api/watch/upload")
    async def watch_upload(request: Request, table: Table) -> dict[str, Any]:
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
        game = WatchGame(record)
        async with table.lock:
            table.watch = game
        return {"steps": len(game.moves), "seats": game.names}

    @app.post("/api/watch/load")
    async def watch_load(request: LoadGame, table: Table) -> dict[str, Any]:
        if request.name not in games:
            raise HTTPException(404, f"no saved game named {request.name!r}")
        saved = games[request.name]
        try:
            text = saved.path.read_text()
        except OSError as error:
            raise HTTPException(
                404, f"saved game {request.name!r} cannot be read: {error.strerror}"
            ) from None
        game = WatchGame(json.loads(text), saved.seats)
        async with table.lock:
            table.watch = game
        return {"steps": len(game.moves), "seats": game.names}

    @app.get("/api/watch")
    async def watch_view(
        table: Table, step: int = 0, viewer: int = -1, analyst: str = "auto"
    ) -> dict[str, Any]:
        """The position after ``step`` moves, seen by ``viewer`` (-1: every hand), with the policy of
        ``analyst`` (a checkpoint name; ``auto``: the mover's own when it is a checkpoint; ``none``)."""
        async with table.lock:
            game = table.watch
            if game is None:
                raise HTTPException(404, "no game loaded: upload a record or pick a saved game")
            rules = game.position(0).rules
            mover = game.position(step).to_play if 0 <= step <= len(game.moves) else None
            name = None
            if analyst == "auto":
                name = game.names[mover] if mover is not None and game.names[mover] in checkpoints else None
            elif analyst != "none":
                name = analyst
            probabilities = await anyio.to_thread.run_sync(network, name, rules) if name else None
            return await anyio.to_thread.run_sync(
                game.view, step, None if viewer == -1 else viewer, probabilities
            )

    return app
