"""Speed of every engine and environment: random legal play, timed one way.

Every engine plays uniformly random legal moves with the legal actions (or mask) and
the observation of the seat to move built before each move, for a given number of
seconds, through one timing loop (``_timed``), and gives a ``Measurement``:

* ``core``: ``DominoCore``, N games stepped together by the compiled kernels (mask and
  observation every step); agent moves (placements) per second, and peak memory.
* ``reference``: the readable one-game engine ``reference.Round``; moves per second.
* ``openspiel``: OpenSpiel's ``python_block_dominoes`` (2p block only, when installed);
  legal actions and observation tensor every move; moves per second.
* ``game``: ``Game``, one game on the compiled kernels, round episodes; moves per second.
* ``aec`` / ``aec-raw``: the PettingZoo env through ``env()`` or ``raw_env``, observation
  fetched by ``last()`` before every step; agent steps (``step`` calls with an action; the
  ``step(None)`` calls of terminated agents are played but not counted) per second.
  ``aec-seeded`` / ``aec-raw-seeded``: the same with ``reset(seed=...)`` every episode (a
  new seed each time), the loop the PettingZoo and Gymnasium docs teach.
* ``vector``: ``DominoVectorEnv`` with random opponents and a random legal learner (drawn
  from ``infos["action_mask"]``); learner steps (``num_envs`` per ``step``) per second.

Automatic draws and passes are never counted as moves. ``scripts/bench_env.py`` is the
command line; ``python -m domino_env demo`` ends with ``bench_core``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from domino_env.engine.core import DominoCore
from domino_env.engine.deals import random_deals
from domino_env.engine.game import Game
from domino_env.engine.reference import Round, deal_to_hands
from domino_env.engine.rules import CHANCE_OPENERS, PRESET_NAMES, PRESET_PLAYERS, Rules
from domino_env.envs.pettingzoo_env import env, raw_env
from domino_env.envs.policies import sample_legal
from domino_env.envs.vector_env import DominoVectorEnv
from domino_env.tools.records import rule_overrides

ENGINES = (
    "core",
    "reference",
    "openspiel",
    "game",
    "aec",
    "aec-raw",
    "aec-seeded",
    "aec-raw-seeded",
    "vector",
)
OPENSPIEL_MISSING = (
    "openspiel: not installed, so no OpenSpiel row and no ratios to it; "
    "install it with `pip install open_spiel` (or `pip install -e '.[bench]'`; `make bench` does)"
)
"""What the command line says when the ``openspiel`` engine is asked for but OpenSpiel is missing."""
OPENSPIEL_ELSEWHERE = "openspiel: no row for {} {}p (OpenSpiel's python_block_dominoes is 2p block only)"
OPENSPIEL_ENGINE = "open_spiel python_block_dominoes"
VECTOR_WARM_UP_STEPS = 3


@dataclass
class Measurement:
    """One timed run: ``moves`` counted in ``seconds`` (what is counted: the module docstring)."""

    engine: str
    preset: str
    players: int
    num_envs: int
    moves: int
    seconds: float
    moves_per_sec: float
    peak_memory_mib: float | None = None


def _timed(engine: str, rules: Rules, num_envs: int, play: Callable[[], int], seconds: float) -> Measurement:
    """Call ``play`` (which plays some moves and returns how many) until ``seconds`` have passed."""
    moves, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        moves += play()
    return Measurement(engine, rules.name, rules.players, num_envs, moves, elapsed, moves / elapsed)


def bench_core(rules: Rules, num_envs: int, seconds: float, seed: int) -> Measurement:
    """Moves/s of the batched core with mask + observation every step, and its peak memory."""
    warm = DominoCore(rules, 1, seed=seed)  # loads (or compiles) the kernels outside the count
    warm.step(warm.random_actions())
    tracemalloc.start()
    core = DominoCore(rules, num_envs, seed=seed)
    for _ in range(3):
        core.legal_mask(), core.observe()
        core.step(core.random_actions())
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()

    def play() -> int:
        for _ in range(10):
            core.legal_mask()
            core.observe()
            core.step(core.random_actions())
        return 10 * num_envs

    measured = _timed("core", rules, num_envs, play, seconds)
    measured.peak_memory_mib = peak
    return measured


def bench_reference(rules: Rules, seconds: float, seed: int) -> Measurement:
    """Moves/s of the one-game reference engine (legal actions + observation every move)."""
    rng = np.random.default_rng(seed)
    chooser = random.Random(seed)
    needs_opener = rules.first_opener in CHANCE_OPENERS

    def play() -> int:
        moves = 0
        for deal in random_deals(rules, 64, rng):
            hands, boneyard = deal_to_hands(rules, deal)
            opener = chooser.randrange(rules.players) if needs_opener else None
            game = Round(rules, hands, boneyard, opener=opener)
            while not game.over:
                game.observation(game.to_play)
                game.step(chooser.choice(game.legal_actions()))
                moves += 1
        return moves

    return _timed("reference", rules, 1, play, seconds)


def bench_openspiel(seconds: float, seed: int) -> Measurement | None:
    """Moves/s of OpenSpiel's python_block_dominoes, or None when it is not installed."""
    try:
        import pyspiel
        from open_spiel.python.games import block_dominoes  # noqa: F401  (registers the game)
    except ImportError:
        return None
    game = pyspiel.load_game("python_block_dominoes")
    chooser = random.Random(seed)

    def play() -> int:
        moves, state = 0, game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(chooser.choices(outcomes, probs)[0])
                continue
            state.observation_tensor(state.current_player())
            state.apply_action(chooser.choice(state.legal_actions()))
            moves += 1
        return moves

    return _timed(OPENSPIEL_ENGINE, Rules.preset("block", 2), 1, play, seconds)


def bench_game(rules: Rules, seconds: float, seed: int) -> Measurement:
    """Moves/s of ``Game`` (round episodes, observation read every move)."""
    game = Game(rules, seed=seed)
    choose = random.Random(seed).choice

    def play() -> int:
        for _ in range(1000):
            if game.over:
                game.reset()
            game.observation(game.to_play)
            game.step(choose(game.legal_actions()))
        return 1000

    return _timed("game (one-game engine)", rules, 1, play, seconds)


def bench_aec(
    rules: Rules, seconds: float, seed: int, checked: bool = True, seeded: bool = False
) -> Measurement:
    """Agent steps/s of the PettingZoo AEC env: ``env()`` (``checked``) or ``raw_env``; ``seeded``:
    ``reset(seed=...)`` with the next seed every episode, else ``reset()``."""
    make = env if checked else raw_env
    aec = make(preset=rules.name, players=rules.players, **rule_overrides(rules))
    aec.reset(seed=seed)
    pick = random.Random(seed).randrange
    episodes = 0

    def play() -> int:
        nonlocal episodes
        steps = 0
        for _ in range(1000):
            observation, _, terminated, truncated, _ = aec.last()
            if terminated or truncated:
                aec.step(None)
                if not aec.agents:
                    episodes += 1
                    if seeded:
                        aec.reset(seed=seed + episodes)
                    else:
                        aec.reset()
                continue
            legal = observation["action_mask"].nonzero()[0]
            aec.step(legal[pick(len(legal))])
            steps += 1
        return steps

    name = "pettingzoo env()" if checked else "pettingzoo raw_env"
    return _timed(f"{name} reset(seed=i)" if seeded else name, rules, 1, play, seconds)


def bench_vector(rules: Rules, num_envs: int, seconds: float, seed: int) -> Measurement:
    """Learner steps/s of ``DominoVectorEnv`` (random opponents, random legal learner)."""
    envs = DominoVectorEnv(num_envs, rules.name, rules.players, **rule_overrides(rules))
    rng = np.random.default_rng(seed)
    _, infos = envs.reset(seed=seed)
    for _ in range(VECTOR_WARM_UP_STEPS):
        *_, infos = envs.step(sample_legal(infos["action_mask"], rng))

    def play() -> int:
        nonlocal infos
        *_, infos = envs.step(sample_legal(infos["action_mask"], rng))
        return num_envs

    return _timed("vector env (learner steps)", rules, num_envs, play, seconds)


def measure(
    engine: str,
    rules: Rules,
    seconds: float,
    seed: int = 0,
    num_envs: tuple[int, ...] = (8192,),
    vector_envs: tuple[int, ...] = (4096,),
) -> list[Measurement]:
    """The rows one engine of ``ENGINES`` gives for one rule set: one per batch size for
    ``core`` (``num_envs``) and ``vector`` (``vector_envs``); none for ``openspiel`` but on
    2p block or when OpenSpiel is not installed."""
    if engine == "core":
        return [bench_core(rules, n, seconds, seed) for n in num_envs]
    if engine == "vector":
        return [bench_vector(rules, n, seconds, seed) for n in vector_envs]
    if engine == "reference":
        return [bench_reference(rules, seconds, seed)]
    if engine == "game":
        return [bench_game(rules, seconds, seed)]
    if engine in ("aec", "aec-raw", "aec-seeded", "aec-raw-seeded"):
        return [bench_aec(rules, seconds, seed, checked="raw" not in engine, seeded="seeded" in engine)]
    if engine == "openspiel":
        spiel = bench_openspiel(seconds, seed) if (rules.name, rules.players) == ("block", 2) else None
        return [spiel] if spiel else []
    raise ValueError(f"engine must be one of {', '.join(ENGINES)}; got {engine!r}")


def added(turns: list[Measurement]) -> Measurement:
    """One engine's measurements taken in turns with the others, as one: moves and seconds added."""
    moves, seconds = sum(m.moves for m in turns), sum(m.seconds for m in turns)
    memory = [m.peak_memory_mib for m in turns if m.peak_memory_mib is not None]
    first = turns[0]
    return Measurement(
        first.engine, first.preset, first.players, first.num_envs, moves, seconds, moves / seconds,
        max(memory) if memory else None,
    )  # fmt: skip


def format_table(rows: list[Measurement]) -> str:
    header = f"{'engine':<34} {'preset':<14} {'players':>7} {'num_envs':>9} {'moves/s':>14} {'peak MiB':>9}"
    lines = [header, "-" * len(header)]
    for r in rows:
        memory = f"{r.peak_memory_mib:9.1f}" if r.peak_memory_mib is not None else f"{'':>9}"
        lines.append(
            f"{r.engine:<34} {r.preset:<14} {r.players:>7} {r.num_envs:>9} {r.moves_per_sec:>14,.0f} {memory}"
        )
    return "\n".join(lines)


# -- the command line (scripts/bench_env.py, domino-bench) -----------------------------
def configurations(args: argparse.Namespace) -> list[tuple[str, int]]:
    """(preset, players) pairs to measure: --all, or --preset x --players (default: smallest count)."""
    if args.all:
        return [(name, p) for name in PRESET_NAMES for p in PRESET_PLAYERS[name]]
    chosen = []
    for name in args.preset:
        for p in args.players or [PRESET_PLAYERS[name][0]]:
            if p not in PRESET_PLAYERS[name]:
                raise SystemExit(
                    f"error: preset {name!r} is played by {PRESET_PLAYERS[name]} players, not {p}"
                )
            chosen.append((name, p))
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Environment speed: random legal play through every engine and environment."
    )
    parser.add_argument("--preset", nargs="+", default=["block"], choices=PRESET_NAMES)
    parser.add_argument("--players", nargs="+", type=int, help="default: the preset's smallest player count")
    parser.add_argument("--num-envs", nargs="+", type=int, default=[8192], help="batch sizes of the core")
    parser.add_argument("--vector-envs", nargs="+", type=int, default=[4096], help="sizes of the vector env")
    parser.add_argument("--seconds", type=float, default=3.0, help="timed seconds per measurement")
    parser.add_argument("--all", action="store_true", help="every preset and player count")
    parser.add_argument("--engines", nargs="+", choices=ENGINES, default=["core", "reference", "openspiel"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="time the engines in turn this many times (--seconds split among the turns) and add up: "
        "a busy machine's swings then fall on every engine alike, which keeps their ratios fair",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    rows: list[Measurement] = []
    for name, players in configurations(args):
        rules = Rules.preset(name, players)
        turns: dict[str, list[list[Measurement]]] = {engine: [] for engine in args.engines}
        seconds = args.seconds / args.repeat
        for turn in range(args.repeat):
            for engine in args.engines:
                measured = measure(engine, rules, seconds, args.seed + turn, args.num_envs, args.vector_envs)
                turns[engine].append(measured)
                if measured:
                    print(f"measured {engine} {name} {players}p", file=sys.stderr)
                elif turn == 0:  # only openspiel gives no row: off its one rule set, or not installed
                    on_block = (name, players) == ("block", 2)
                    why = OPENSPIEL_MISSING if on_block else OPENSPIEL_ELSEWHERE.format(name, players)
                    print(why, file=sys.stderr)
        for measured in turns.values():
            rows += [added(list(same)) for same in zip(*measured, strict=True)]
    if args.json:
        out = {f"{r.engine}/{r.preset}/{r.players}p/N={r.num_envs}": asdict(r) for r in rows}
        print(json.dumps(out, indent=2))
    else:
        print(format_table(rows))
        ratios = block_ratios(rows)
        if ratios:
            print("\n" + "\n".join(ratios))
    return 0


def block_ratios(rows: list[Measurement]) -> list[str]:
    """The 2p block ratios that the rows allow: the core and each PettingZoo loop against OpenSpiel,
    ``env()`` against ``raw_env``, and a seed per episode against none."""
    block = {r.engine: r.moves_per_sec for r in rows if (r.preset, r.players) == ("block", 2)}
    core = next(
        (r.moves_per_sec for r in rows if (r.engine, r.preset, r.players) == ("core", "block", 2)), None
    )
    spiel = block.get(OPENSPIEL_ENGINE)
    lines = []
    if spiel and core:
        lines.append(f"core / OpenSpiel (2p block): {core / spiel:,.0f}x")
    loops = [e for e in block if e.startswith("pettingzoo")]
    if spiel:
        lines += [f"{e} / OpenSpiel (2p block): {block[e] / spiel:.1f}x" for e in loops]
    for name in ("raw_env", "env()"):
        plain, seeded = block.get(f"pettingzoo {name}"), block.get(f"pettingzoo {name} reset(seed=i)")
        if plain and seeded:
            lines.append(f"pettingzoo {name}: reset(seed=i) / reset() (2p block): {seeded / plain:.2f}x")
    raw, checked = block.get("pettingzoo raw_env"), block.get("pettingzoo env()")
    if raw and checked:
        lines.append(f"pettingzoo env() / raw_env (2p block): {checked / raw:.2f}x")
    return lines
