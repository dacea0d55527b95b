"""Sweep training configs with Ray Tune (needs the ray extra): see agents/training/tune.py."""

from agents.training.tune import main

if __name__ == "__main__":
    raise SystemExit(main())
