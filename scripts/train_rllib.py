"""Train RLlib's PPO on dominoes (needs the ray extra): see agents/training/rllib.py."""

from agents.training.rllib import main

if __name__ == "__main__":
    raise SystemExit(main())
