"""Write the small policy file of a training checkpoint (weights and config, no optimizer or snapshots).

    python scripts/export_policy.py runs/block/checkpoints/best.pt checkpoints/block-2p-ppo.pt

The result plays anywhere a checkpoint does (``agents.load_policy``, ``scripts/evaluate.py``,
the environments) but cannot be resumed from.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agents.training.checkpoint import CheckpointError, export_policy


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="training checkpoint (runs/<name>/checkpoints/best.pt)")
    parser.add_argument("target", help="policy file to write")
    args = parser.parse_args(argv)
    try:
        export_policy(args.source, args.target)
    except CheckpointError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    size = Path(args.target).stat().st_size
    print(f"wrote {args.target} ({size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
