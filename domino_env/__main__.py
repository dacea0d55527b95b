"""Command line: ``python -m domino_env replay FILE.json`` and ``demo``.

Installed as ``domino-replay``; ``domino-replay FILE.json`` (a file first: a ``.json`` name or
an existing file) is short for ``domino-replay replay FILE.json``. The help names the command
as it was started and, as ``domino-replay``, leads with replaying.

Each subcommand is a function taking the parsed arguments and returning the exit
status; add one by registering it in ``build_parser``. Errors a user can cause
(bad file, bad JSON, bad record, illegal move) print ``error: <message>`` on
stderr and exit with status 2, without a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from domino_env.engine.deals import random_deals
from domino_env.engine.reference import Round, deal_to_hands
from domino_env.engine.rules import CHANCE_OPENERS, PRESET_NAMES, Rules
from domino_env.tools.benchmark import bench_core, format_table
from domino_env.tools.records import replay
from domino_env.tools.render import render_text


def run_replay(args: argparse.Namespace) -> int:
    """Replay a game record and print the resulting position as JSON."""
    record = json.loads(Path(args.file).read_text(encoding="utf-8"))
    print(json.dumps(replay(record), indent=2))
    return 0


def run_demo(args: argparse.Namespace) -> int:
    """Play one round between random players, printing the table after every move, then time the core."""
    rules = Rules.preset(args.preset, args.players)
    rng = np.random.default_rng(args.seed)
    hands, boneyard = deal_to_hands(rules, random_deals(rules, 1, rng)[0])
    chance = rules.first_opener in CHANCE_OPENERS
    game = Round(rules, hands, boneyard, opener=int(rng.integers(rules.players)) if chance else None)
    print(f"== {rules.name}, {rules.players} players, seed {args.seed} ==\n")
    print(render_text(game), "\n")
    while not game.over:
        seat, moves = game.to_play, game.legal_moves()
        move = moves[int(rng.integers(len(moves)))]
        game.play_move(move)
        print(f"-- seat {seat} plays {move} --")
        print(render_text(game), "\n")
    if args.bench_seconds > 0:
        print(f"timing the vectorised core ({args.num_envs} games, random legal play, mask + observation)...")
        print(format_table([bench_core(rules, args.num_envs, args.bench_seconds, args.seed)]))
    return 0


MODULE = "python -m domino_env"
REPLAY = "domino-replay"
"""The console script (pyproject.toml) that runs ``main``: its help is about replaying records."""
DESCRIPTIONS = {
    MODULE: "Double-six dominoes tools: replay a game record, play a demo round.",
    REPLAY: f"Replay a game record: `{REPLAY} FILE.json` checks every move and prints the position "
    f"it reaches as JSON (short for `{REPLAY} replay FILE.json`). The demo is here too.",
}


def program_name() -> str:
    """How this process was started: ``domino-replay`` (the console script) or ``python -m domino_env``."""
    started = Path(sys.argv[0])
    return REPLAY if started.stem == REPLAY else MODULE


def build_parser(prog: str = MODULE) -> argparse.ArgumentParser:
    """The command line as ``prog`` (``MODULE`` or ``REPLAY``) presents it."""
    usage = f"{REPLAY} FILE.json\n       {REPLAY} COMMAND ..." if prog == REPLAY else None
    parser = argparse.ArgumentParser(prog=prog, usage=usage, description=DESCRIPTIONS[prog])
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", prog=prog)
    replay_cmd = commands.add_parser("replay", help="replay a game record (JSON) and print the result")
    replay_cmd.add_argument("file", metavar="FILE.json", help="the game record")
    replay_cmd.set_defaults(run=run_replay)
    demo_cmd = commands.add_parser("demo", help="play and print a rendered round, then a short benchmark")
    demo_cmd.add_argument("--preset", default="block", choices=PRESET_NAMES)
    demo_cmd.add_argument("--players", type=int, default=None, help="default: the preset's smallest count")
    demo_cmd.add_argument("--seed", type=int, default=0)
    demo_cmd.add_argument("--num-envs", type=int, default=8192)
    demo_cmd.add_argument("--bench-seconds", type=float, default=2.0, help="0 skips the benchmark")
    demo_cmd.set_defaults(run=run_demo)
    return parser


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """Run the command line (``prog`` None: named after how the process was started)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and (argv[0].lower().endswith(".json") or Path(argv[0]).is_file()):
        argv = ["replay", *argv]  # ``domino-replay FILE``: a record file first means the replay subcommand
    args = build_parser(prog or program_name()).parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, OSError) as exc:  # json.JSONDecodeError is a ValueError
        message = " ".join(str(exc).splitlines())
        print(f"error: {message}", file=sys.stderr)
        return 2
    except RecursionError:  # JSON nested thousands deep: no record is
        print("error: the file nests lists or objects too deeply to be a game record", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
