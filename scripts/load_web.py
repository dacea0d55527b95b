"""Load test of the web table: simulated players on a server started here, on 127.0.0.1 only.

Starts ``python -m agents.web`` on a free loopback port (games kept in memory), then
runs ``--players`` light players (opponents ``random``/``strong``, a move every ``--think``
seconds, as a person clicks) and ``--search`` heavy players (a ``pimc`` opponent, asked
for its moves without pause) for ``--seconds``, and stops the server. Prints the latency
of the light players' requests (p50, p99, max), the heavy players' moves, and every
error; exits 1, with a line saying why, on any error or when the light p99 passes ``--max-p99``
milliseconds. Needs only the ``web`` extra (httpx comes with it).

    python scripts/load_web.py                             # 50 players and 3 searches, 60 s
    python scripts/load_web.py --players 10 --seconds 10   # the short run tests/test_web_load.py makes
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field

import httpx

HOST = "127.0.0.1"


@dataclass
class Tally:
    """Request latencies in seconds, and what went wrong."""

    light: list[float] = field(default_factory=list)
    heavy: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    rounds: int = 0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def player(url: str, heavy: bool, think: float, until: float, tally: Tally, rng: random.Random) -> None:
    """One browser: starts a game, then plays it (its own moves at random) until ``until``."""
    times = tally.heavy if heavy else tally.light
    opponents = ["pimc"] if heavy else [rng.choice(["random", "strong"])]
    async with httpx.AsyncClient(base_url=url, headers={"Origin": url}, timeout=30) as client:

        async def call(path: str, body: object = None, method: str = "POST") -> dict | None:
            start = time.perf_counter()
            try:
                response = await client.request(method, path, json=body)
            except httpx.HTTPError as error:
                tally.errors.append(f"{path}: {type(error).__name__}: {error}")
                return None
            times.append(time.perf_counter() - start)
            if response.status_code != 200:
                tally.errors.append(f"{path}: {response.status_code} {response.text[:200]}")
                return None
            return response.json()

        view = await call("/api/play", {"preset": "block", "opponents": opponents})
        while view is not None and time.monotonic() < until:
            if view["legal"]:
                await asyncio.sleep(think)
                view = await call("/api/play/move", {"action": rng.choice(view["legal"])["action"]})
            elif view["result"]:
                tally.rounds += 1
                await asyncio.sleep(think)
                over = view["match"]["over"]
                view = await call(
                    "/api/play" if over else "/api/play/next", {"opponents": opponents} if over else None
                )
            else:
                if not heavy:
                    await asyncio.sleep(think / 2)
                view = await call("/api/play/advance")
            if view is not None and not heavy and rng.random() < 0.1:
                view = await call("/api/play", method="GET")  # a reload


async def load(url: str, players: int, search: int, seconds: float, think: float, seed: int) -> Tally:
    tally = Tally()
    until = time.monotonic() + seconds
    rng = random.Random(seed)
    runs = [player(url, False, think, until, tally, random.Random(rng.random())) for _ in range(players)]
    runs += [player(url, True, think, until, tally, random.Random(rng.random())) for _ in range(search)]
    await asyncio.gather(*runs)
    return tally


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    """The table in its own process, on loopback, games in memory; waits until it answers."""
    command = [
        sys.executable,
        "-m",
        "agents.web",
        "--host",
        HOST,
        "--port",
        str(port),
        "--store",
        "none",
    ]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with {server.returncode}")
        try:
            if httpx.get(f"http://{HOST}:{port}/api/options", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError("the server did not answer within 60 s")


def run(players: int, search: int, seconds: float, think: float, seed: int = 0) -> dict:
    """Serve, load for ``seconds`` (and never much longer), stop: the figures as a dict."""
    port = free_port()
    server = start_server(port)
    try:
        url = f"http://{HOST}:{port}"
        # A warm-up, not measured: the first games import and build the bots, the first search
        # starts the worker process (a one-off of about a second after the server starts).
        asyncio.run(load(url, min(players, 5), min(search, 1), 2.0, think, seed + 1))
        tally = asyncio.run(
            asyncio.wait_for(load(url, players, search, seconds, think, seed), timeout=seconds + 60)
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
    ms = 1000
    return {
        "players": players,
        "search": search,
        "seconds": seconds,
        "requests": len(tally.light) + len(tally.heavy),
        "rounds": tally.rounds,
        "light_p50_ms": round(ms * percentile(tally.light, 0.50), 1),
        "light_p99_ms": round(ms * percentile(tally.light, 0.99), 1),
        "light_max_ms": round(ms * max(tally.light, default=float("nan")), 1),
        "search_p50_ms": round(ms * percentile(tally.heavy, 0.50), 1),
        "search_p99_ms": round(ms * percentile(tally.heavy, 0.99), 1),
        "errors": tally.errors,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=50, help="light players (default 50)")
    parser.add_argument("--search", type=int, default=3, help="players against pimc (default 3)")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument(
        "--think", type=float, default=0.5, help="a light player's pause before each move (s)"
    )
    parser.add_argument("--max-p99", type=float, default=100.0, help="fail above this light p99 (ms)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    figures = run(args.players, args.search, args.seconds, args.think, args.seed)
    print(json.dumps({**figures, "errors": figures["errors"][:20]}, indent=2))
    print(
        f"{figures['requests']} requests in {args.seconds:g} s: light p50 {figures['light_p50_ms']} ms, "
        f"p99 {figures['light_p99_ms']} ms, max {figures['light_max_ms']} ms; "
        f"pimc moves p50 {figures['search_p50_ms']} ms; {len(figures['errors'])} errors"
    )
    failures = failed(figures, args.max_p99)
    for failure in failures:
        print(f"FAILED: {failure}")
    return 1 if failures else 0


def failed(figures: dict, max_p99: float) -> list[str]:
    """Why the run fails, one line each (none: it passed)."""
    reasons = []
    if figures["errors"]:
        reasons.append(f"{len(figures['errors'])} requests went wrong (the first: {figures['errors'][0]})")
    if not figures["light_p99_ms"] <= max_p99:  # NaN (no request finished) fails too
        reasons.append(
            f"the light players' p99 latency was {figures['light_p99_ms']} ms, above --max-p99 {max_p99:g} ms"
        )
    return reasons


if __name__ == "__main__":
    sys.exit(main())
