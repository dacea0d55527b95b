"""Speed of the learner envs against each kind of opponent: learner steps/s, and what the opponent costs.

Each opponent plays every other seat of ``DominoSoloEnv`` (one game) and of ``DominoVectorEnv``
(``--vector-envs`` games), while a random legal learner plays its seat, for ``--seconds`` each
(``--repeat``: in turns, added up, so that a busy machine's swings fall on every row alike).
An opponent is what the envs build from its name, ``agents.load_policy(name, rules, seed)``,
wrapped in a counter of its calls, rows and seconds: that gives the time per opponent decision
and the rest of a step (the env, the learner's sampling). ``random`` is ``random_policy``, what
the name gives, unwrapped so that the vector env plays it inside the core (the reference rows).
Policies are passed as objects, so the same command times code from before names existed
(``PYTHONPATH`` at a copy of it, ``--label before``).

The results file (``docs/results/opponents.json``) keeps one run per ``--label``; docs/speed.md
shows its table (between ``<!-- opponents-table -->`` markers; tests/test_opponents.py checks
that the page shows the file):

    python scripts/bench_opponents.py                      # measure, write the file and the table
    python scripts/bench_opponents.py --seconds 20 --repeat 4
    python scripts/bench_opponents.py --opponents strong block-2p --seconds 2 --no-write
    python scripts/bench_opponents.py --write-table        # the table of the file, into docs/speed.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from agents import load_policy
from domino_env import DominoSoloEnv, DominoVectorEnv, Rules
from domino_env.envs.policies import Policy, random_policy, sample_legal

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results" / "opponents.json"
PAGE = ROOT / "docs" / "speed.md"
TABLE_START, TABLE_END = "<!-- opponents-table -->", "<!-- /opponents-table -->"
OPPONENTS = ("random", "strong", "pimc", "block-2p")
WARM_UP_STEPS = 5
"""Learner steps before the clock starts: the kernels load, the network's first call allocates."""


class Timed:
    """A policy that adds up its calls, rows and seconds: the opponent's own share of each step."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.calls = self.rows = 0
        self.seconds = 0.0

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        start = time.perf_counter()
        actions = self.policy(obs, mask)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        self.rows += len(obs)
        return actions


@dataclass
class Row:
    """One env against one opponent, its turns added up."""

    env: str
    opponent: str
    num_envs: int
    steps: int = 0
    """Learner steps (``num_envs`` per vector step)."""
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    """The process's CPU time over those seconds, every thread's: on a busy machine the wall clock
    also counts the time the process waited for a core, this does not."""
    calls: int = 0
    """Calls of the opponent (0 for the unwrapped ``random``)."""
    decisions: int = 0
    """Rows the opponent was called with: its decisions."""
    decision_seconds: float = 0.0

    @property
    def steps_per_sec(self) -> float:
        return self.steps / self.seconds

    def add(self, steps: int, seconds: float, cpu_seconds: float, opponent: Policy) -> None:
        self.steps += steps
        self.seconds += seconds
        self.cpu_seconds += cpu_seconds
        if isinstance(opponent, Timed):
            self.calls += opponent.calls
            self.decisions += opponent.rows
            self.decision_seconds += opponent.seconds


def opponent(name: str, rules: Rules, seed: int) -> Policy:
    """What the env gets: the name's policy, timed; ``random`` bare (the vector env's core plays it)."""
    return random_policy(seed) if name == "random" else Timed(load_policy(name, rules, seed=seed))


def clocked(step: Callable[[], int], rival: Policy, seconds: float) -> tuple[int, float, float, Policy]:
    """(learner steps, wall seconds, CPU seconds, the opponent) of ``step`` (which plays and returns
    learner steps) called for ``seconds``, after ``WARM_UP_STEPS`` calls not counted."""
    for _ in range(WARM_UP_STEPS):
        step()
    if isinstance(rival, Timed):
        rival.calls = rival.rows = 0
        rival.seconds = 0.0
    steps, start, cpu = 0, time.perf_counter(), time.process_time()
    while (elapsed := time.perf_counter() - start) < seconds:
        steps += step()
    return steps, elapsed, time.process_time() - cpu, rival


def measure_solo(rules: Rules, name: str, seconds: float, seed: int) -> tuple[int, float, float, Policy]:
    """``clocked`` for ``DominoSoloEnv`` with a random legal learner."""
    rival = opponent(name, rules, seed)
    env = DominoSoloEnv(rules.name, rules.players, opponents=rival)
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)

    def step() -> int:
        nonlocal info
        _, _, terminated, _, info = env.step(int(sample_legal(info["action_mask"][None], rng)[0]))
        if terminated:
            _, info = env.reset()
        return 1

    return clocked(step, rival, seconds)


def measure_vector(
    rules: Rules, name: str, num_envs: int, seconds: float, seed: int
) -> tuple[int, float, float, Policy]:
    """``clocked`` for ``DominoVectorEnv`` with random legal learners."""
    rival = opponent(name, rules, seed)
    envs = DominoVectorEnv(num_envs, rules.name, rules.players, opponents=rival)
    rng = np.random.default_rng(seed)
    _, infos = envs.reset(seed=seed)

    def step() -> int:
        nonlocal infos
        *_, infos = envs.step(sample_legal(infos["action_mask"], rng))
        return num_envs

    return clocked(step, rival, seconds)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Every (env, opponent) row, measured in ``--repeat`` turns: one run of the results file."""
    rules = Rules.preset(args.preset, args.players)
    load = os.getloadavg()[0]
    rows = {
        (env, name): Row(env, name, 1 if env == "solo" else args.vector_envs)
        for env in ("solo", "vector")
        for name in args.opponents
    }
    seconds = args.seconds / args.repeat
    for turn in range(args.repeat):
        for (env, name), row in rows.items():
            if env == "solo":
                row.add(*measure_solo(rules, name, seconds, args.seed + turn))
            else:
                row.add(*measure_vector(rules, name, args.vector_envs, seconds, args.seed + turn))
            steps = f"{row.steps_per_sec:,.0f} steps/s"
            print(f"turn {turn + 1}/{args.repeat}: {env} vs {name}: {steps} so far", file=sys.stderr)
    return {
        "command": shlex.join(["python", "scripts/bench_opponents.py", *sys.argv[1:]]),
        "pythonpath": os.environ.get("PYTHONPATH", ""),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "preset": rules.name,
        "players": rules.players,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "load_average": [round(load, 1), round(os.getloadavg()[0], 1)],
        "rows": [asdict(row) | {"steps_per_sec": row.steps_per_sec} for row in rows.values()],
    }


def table(results: dict[str, Any]) -> str:
    """The Markdown table of a results file: steps/s and time per decision in every run, the rest of the
    last run's steps."""
    runs = results["runs"]
    labels = list(runs)
    measured = {(label, row["env"], row["opponent"]): row for label in labels for row in runs[label]["rows"]}
    lines = [
        "| env | opponent | "
        + " | ".join(f"learner steps/s (per CPU second), {label}" for label in labels)
        + " | "
        + " | ".join(f"ms per opponent decision, {label}" for label in labels)
        + f" | opponent decisions per learner step, the rest of a step ({labels[-1]}) |",
        "|---|---|" + "---|" * (2 * len(labels) + 1),
    ]
    for last in runs[labels[-1]]["rows"]:
        env, name = last["env"], last["opponent"]
        rows = [measured.get((label, env, name)) for label in labels]
        speeds = [
            "–" if row is None else f"{row['steps_per_sec']:,.0f} ({row['steps'] / row['cpu_seconds']:,.0f})"
            for row in rows
        ]
        decisions = [
            "–"
            if row is None or not row["decisions"]
            else f"{1000 * row['decision_seconds'] / row['decisions']:.3f}"
            for row in rows
        ]
        if last["decisions"]:
            per_step = (
                f"{last['decisions'] / last['steps']:.2f} ({last['decisions'] / last['calls']:.0f} per call)"
            )
            rest = f"{per_step}, {1e6 * (last['seconds'] - last['decision_seconds']) / last['steps']:.1f} µs"
        else:
            rest = f"inside the env: {1e6 * last['seconds'] / last['steps']:.1f} µs a step in all"
        where = "`DominoSoloEnv`" if env == "solo" else f"`DominoVectorEnv`, {last['num_envs']:,} games"
        lines.append(f"| {where} | `{name}` | {' | '.join(speeds)} | {' | '.join(decisions)} | {rest} |")
    notes = [
        f"* {label}: {run['preset']} {run['players']}p, {run['date']}, {run['machine']}, load average "
        f"{run['load_average'][0]} before and {run['load_average'][1]} after: "
        f"`{'PYTHONPATH=' + run['pythonpath'] + ' ' if run.get('pythonpath') else ''}{run['command']}`"
        for label, run in runs.items()
    ]
    return "\n".join(lines) + "\n\n" + "\n".join(notes)


def with_table(text: str, rendered: str) -> str:
    """``text`` with ``rendered`` between the table markers (ValueError if it has none)."""
    start, end = text.find(TABLE_START), text.find(TABLE_END)
    if start < 0 or end < start:
        raise ValueError(f"no {TABLE_START} ... {TABLE_END} markers")
    return text[: start + len(TABLE_START)] + "\n" + rendered + "\n" + text[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--opponents", nargs="+", default=list(OPPONENTS), help="names load_policy reads")
    parser.add_argument("--preset", default="block")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--vector-envs", type=int, default=256, help="games of the vector env")
    parser.add_argument(
        "--seconds", type=float, default=6.0, help="timed seconds per row, all turns together"
    )
    parser.add_argument("--repeat", type=int, default=2, help="turns the rows are timed in")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--label", default="now", help="the run's name in the results file (replaced if there)"
    )
    parser.add_argument("--results", type=Path, default=RESULTS, help="the results file (JSON)")
    parser.add_argument("--no-write", action="store_true", help="print the table only: no file, no page")
    parser.add_argument(
        "--write-table", action="store_true", help=f"only put the results file's table into {PAGE.name}"
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    if not args.write_table:
        measured = run(args)
        if args.no_write:
            print(table({"runs": {args.label: measured}}))
            return 0
        results = json.loads(args.results.read_text()) if args.results.is_file() else {"runs": {}}
        results["runs"][args.label] = measured
        args.results.parent.mkdir(parents=True, exist_ok=True)
        args.results.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
        print(table(results))
        print(f"wrote {args.results}", file=sys.stderr)
    PAGE.write_text(with_table(PAGE.read_text(), table(json.loads(args.results.read_text()))))
    print(f"wrote the table into {PAGE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
