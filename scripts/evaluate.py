"""Benchmark policies in the duplicate arena: see agents/arena/evaluate.py."""

from agents.arena.evaluate import main

if __name__ == "__main__":
    raise SystemExit(main())
