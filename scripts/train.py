"""Train an agent by self-play PPO (and distillation) from a YAML config: see agents/training/train.py."""

from agents.training.train import main

if __name__ == "__main__":
    raise SystemExit(main())
