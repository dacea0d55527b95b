"""The web table's sessions: who may make one, how long it lives, where it is kept.

A session is kept only once a request that starts a game (``POST /api/play`` or opening a
record to watch) has made its game (``create`` checks for room, ``save`` keeps it), never for
a page view, a cookie-less read or a request that failed, so traffic that carries no cookie
cannot crowd anyone out. A game in progress is never evicted to make room: a session ends
after ``idle`` seconds unused, and when there is no room for a new one, the sessions whose
game is over (a finished match, a record watched) make room first, the client's own, then
anyone's, least recently used first; past that a new one is refused (429 for one client
address past ``per_client``, 503 past ``cap`` in all).

Every session is written to SQLite (a file in the run folder, or memory) after each
change: the games' JSON states (``state.PlayGame.state``), its client and when it was last
used. A restarted server reads them back and resumes the games on their first request.
The cookie is a random token; the table keeps only its SHA-256, so the file holds no
usable cookie. The table also keeps the server's secret, which deals are mixed with.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.exceptions import HTTPException

from agents.web.state import PlayGame, WatchGame

SESSION_IDLE = 3 * 24 * 3600
"""Seconds a session may go unused before it ends (a game left overnight is still there)."""
MAX_SESSIONS = 1000
"""Sessions at once; past this a new game is refused until one ends, and none is ever evicted."""
MAX_PER_CLIENT = 100
"""Sessions one client address may hold (on 127.0.0.1 that is every local browser and script)."""
TOUCH_EVERY = 60.0
"""Seconds between writes of a session's last use when nothing else changed."""


@dataclass
class Session:
    """One browser's games (a person plays one game and watches one record at a time).

    ``stored`` holds the JSON states read back after a restart until the first request revives
    them; ``ended`` says why a game could not be revived (the page shows it once)."""

    key: str
    client: str
    used: float
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    play: PlayGame | None = None
    watch: WatchGame | None = None
    stored: dict[str, Any] | None = None
    ended: str | None = None
    written: float = 0.0


def finished(session: Session) -> bool:
    """No game in progress: its match is over, or it only watches a record (one read back after a
    restart counts as in progress until it is revived)."""
    if session.stored is not None:
        return False
    return session.play is None or session.play.match.over


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class SessionTable:
    """Every live session, in memory and in SQLite (``path`` None: memory only, gone on restart)."""

    def __init__(
        self,
        path: Path | None,
        idle: float = SESSION_IDLE,
        cap: int = MAX_SESSIONS,
        per_client: int = MAX_PER_CLIENT,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.idle, self.cap, self.per_client, self.clock = idle, cap, per_client, clock
        try:
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(":memory:" if path is None else path, check_same_thread=False)
            """Used from the event loop only, so never from two threads at once."""
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value BLOB)")
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS sessions "
                "(key TEXT PRIMARY KEY, client TEXT, used REAL, play TEXT, watch TEXT)"
            )
            row = self.db.execute("SELECT value FROM meta WHERE name = 'secret'").fetchone()
        except sqlite3.Error as error:
            raise OSError(f"{path}: cannot keep the games there: {error}") from None
        if row is None:
            row = (secrets.token_bytes(32),)
            self.db.execute("INSERT INTO meta VALUES ('secret', ?)", row)
        self.secret: bytes = row[0]
        """Mixed into every dealt seed, so no seed a page sends tells it a deal."""
        self.sessions: dict[str, Session] = {}
        self.db.execute("DELETE FROM sessions WHERE used < ?", (self.clock() - idle,))
        for key, client, used, play, watch in self.db.execute("SELECT * FROM sessions"):
            stored = {"play": play and json.loads(play), "watch": watch and json.loads(watch)}
            self.sessions[key] = Session(key, client, used, stored=stored, written=used)
        self.db.commit()

    def __len__(self) -> int:
        return len(self.sessions)

    def find(self, token: str) -> Session | None:
        """The live session of a cookie, its last use now; None for an unknown or ended one."""
        session = self.sessions.get(digest(token))
        now = self.clock()
        if session is None:
            return None
        if now - session.used > self.idle:
            self.purge()
            return None
        session.used = now
        if now - session.written > TOUCH_EVERY:
            self.db.execute("UPDATE sessions SET used = ? WHERE key = ?", (now, session.key))
            self.db.commit()
            session.written = now
        return session

    def create(self, client: str) -> tuple[str, Session]:
        """A new session for ``client`` and its cookie token, kept once ``save`` is called (after its
        game is made); a 429 or 503 when there is no room even after the finished games made some."""
        self.purge()
        if sum(s.client == client for s in self.sessions.values()) >= self.per_client:
            self.release(1, client)
            if sum(s.client == client for s in self.sessions.values()) >= self.per_client:
                raise HTTPException(
                    429, f"{self.per_client} games are open from your address: finish one or come back later"
                )
        if len(self.sessions) >= self.cap:
            self.release(len(self.sessions) - self.cap + 1)
            if len(self.sessions) >= self.cap:
                raise HTTPException(503, f"the table is full ({self.cap} games): try again later")
        token = secrets.token_urlsafe(32)
        return token, Session(digest(token), client, self.clock())

    def release(self, count: int, client: str | None = None) -> None:
        """End up to ``count`` sessions whose game is over (of ``client``, or anyone's), the least
        recently used first: a finished match or a watched record holds no one's place."""
        done = sorted(
            (s for s in self.sessions.values() if finished(s) and (client is None or s.client == client)),
            key=lambda s: s.used,
        )[:count]
        self.end([s.key for s in done])

    def save(self, session: Session) -> None:
        """Write a session's games (after every change, so a restart resumes them); a session read
        back from the file is revived before anything changes it."""
        self.sessions[session.key] = session
        states = [None if game is None else json.dumps(game.state) for game in (session.play, session.watch)]
        self.db.execute(
            "INSERT OR REPLACE INTO sessions VALUES (?, ?, ?, ?, ?)",
            (session.key, session.client, session.used, *states),
        )
        self.db.commit()
        session.written = session.used

    def purge(self) -> None:
        """End every session idle for longer than ``idle``."""
        cutoff = self.clock() - self.idle
        self.end([key for key, session in self.sessions.items() if session.used < cutoff])

    def end(self, keys: list[str]) -> None:
        """Forget these sessions, in memory and in the file."""
        for key in keys:
            del self.sessions[key]
        if keys:
            self.db.executemany("DELETE FROM sessions WHERE key = ?", [(key,) for key in keys])
            self.db.commit()

    def close(self) -> None:
        self.db.close()
