"""``domino-serve`` and ``python -m agents.web``: start the web table on this machine.

Kept apart from ``server`` so that ``--help`` and a missing ``web`` extra are answered at once,
without FastAPI: FastAPI, uvicorn and the bots are imported only when serving.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from domino_env.install import install_hint


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: this machine only)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--checkpoint",
        action="append",
        default=[],
        metavar="FILE.pt",
        help="a trained policy a page may pick as opponent or analyst, by its file stem (repeatable; "
        "the shipped agents are always offered)",
    )
    parser.add_argument(
        "--games",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder of saved games to offer (an arena run's <name>-games/ from save_games; repeatable)",
    )
    parser.add_argument(
        "--store",
        default="runs/web/table.sqlite",
        metavar="FILE",
        help="the SQLite file that keeps the games, so a restarted server resumes them "
        "(default: runs/web/table.sqlite; 'none': games end with the server)",
    )


def checkpoint_files(extra: list[str]) -> dict[str, Path]:
    """Name -> file of every checkpoint a page may name: the shipped agents and ``extra`` files."""
    from agents.bots.trained import SHIPPED_AGENTS, SHIPPED_DIR

    files = {name: SHIPPED_DIR / f"{name}.pt" for name in SHIPPED_AGENTS}
    for spec in extra:
        path = Path(spec)
        if not path.is_file():
            raise ValueError(f"--checkpoint {spec}: no such file")
        if path.stem in files and files[path.stem] != path:
            raise ValueError(f"--checkpoint {spec}: the name {path.stem!r} is taken; rename the file")
        files[path.stem] = path
    return files


def serve(args: argparse.Namespace) -> int:
    """Run the server until interrupted."""
    try:
        import uvicorn

        from agents.web.server import create_app, games_in
    except ImportError as error:
        print(f"error: the web table needs the web extra ({error}): {install_hint('web')}", file=sys.stderr)
        return 2
    games = {}
    for folder in args.games:
        if not Path(folder).is_dir():
            raise ValueError(f"--games {folder}: no such folder")
        games.update(games_in(Path(folder)))
    store = None if args.store == "none" else Path(args.store)
    app = create_app(checkpoint_files(args.checkpoint), games, hosts=[args.host], store=store)
    print(f"domino table: http://{args.host}:{args.port}/  (Ctrl+C stops it)")
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="domino-serve", description="The web table: play and watch dominoes."
    )
    add_arguments(parser)
    try:
        return serve(parser.parse_args(argv))
    except (ValueError, OSError) as error:
        print(f"error: {' '.join(str(error).split())}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
