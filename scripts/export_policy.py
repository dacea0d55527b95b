"""Write the small policy file of a training checkpoint (weights and config, no optimizer or snapshots).

    python scripts/export_policy.py runs/block/checkpoints/best.pt checkpoints/block-2p-ppo.pt

The result plays anywhere a checkpoint does (``agents.load_policy``, ``scripts/evaluate.py``,
the environments) but cannot be resumed from. Several sources (runs of one network on one
game, e.g. the same config with other seeds) make one file that plays their average: each
legal move's logit is the mean of the networks' (docs/agents.md#averaging-several-runs).

    python scripts/export_policy.py runs/a/checkpoints/best.pt runs/b/checkpoints/best.pt averaged.pt
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agents.training.checkpoint import CheckpointError, export_policy


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "sources", nargs="+", metavar="source",
        help="training checkpoint (runs/<name>/checkpoints/best.pt); several: their average",
    )  # fmt: skip
    parser.add_argument("target", help="policy file to write")
    args = parser.parse_args(argv)
    try:
        export_policy(args.sources, args.target)
    except CheckpointError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    size = Path(args.target).stat().st_size
    averaged = f", the average of {len(args.sources)} networks" if len(args.sources) > 1 else ""
    print(f"wrote {args.target} ({size / 1024:.0f} KiB{averaged})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
