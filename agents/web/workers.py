"""Where the web table's opponents think, so that one heavy search cannot starve other games.

* Search bots (``pimc``: tens to hundreds of milliseconds of Python and NumPy a move) run in
  ``SEARCH_WORKERS`` worker processes: at most that many searches at once, the rest wait
  their turn in order. Being processes, they never hold the server's GIL, so a light game's
  requests are answered while they search.
* Every other bot and the trained networks answer in a millisecond or so; they run in at
  most ``LIGHT_THREADS`` threads of the server.

A worker builds each search bot once per rules and keeps it; the page's game sends only
the position its seat sees (the observation and legal-move mask), never a hidden hand.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import numpy as np
from starlette.exceptions import HTTPException

from domino_env.engine.rules import Rules

SEARCH_BOTS = ("pimc",)
"""Bots whose moves go to the worker processes."""
SEARCH_WORKERS = max(1, (os.cpu_count() or 2) - 1)
"""Worker processes (and so searches at once): all cores but one, which the server keeps."""
LIGHT_THREADS = 4
"""Threads for the fast bots and the networks (each move a millisecond or so)."""

_bots: dict[tuple[str, Rules], object] = {}
"""In a worker: the search bots it has built, by name and rules."""


def think(name: str, rules: Rules, obs: np.ndarray, mask: np.ndarray) -> int:
    """In a worker process: the move the search bot ``name`` picks in this position."""
    from agents.bots.registry import make_bot  # the worker imports the bots once, on its first move

    key = (name, rules)
    if key not in _bots:
        _bots[key] = make_bot(name, rules, seed=os.getpid())
    return int(np.asarray(_bots[key](obs, mask))[0])


def watch_parent(parent: int) -> None:
    """In a worker: exit as soon as the server is gone, however it ended (a killed server
    leaves no searching orphan behind)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


class Searcher:
    """The seat of a search bot in a game: its moves are asked of a ``SearchPool``."""

    def __init__(self, name: str) -> None:
        self.name = name


class SearchPool:
    """``workers`` processes that play the search bots' moves, started on the first search."""

    def __init__(self, workers: int = SEARCH_WORKERS) -> None:
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None

    async def move(self, name: str, rules: Rules, obs: np.ndarray, mask: np.ndarray) -> int:
        if self._pool is None:  # spawned: a forked copy of a threaded server (torch, uvicorn) is unsafe
            context = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(
                self.workers, mp_context=context, initializer=watch_parent, initargs=(os.getpid(),)
            )
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, think, name, rules, obs, mask)
        except BrokenProcessPool:
            self._pool = None
            raise HTTPException(503, "the search worker stopped; ask again for the next move") from None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
