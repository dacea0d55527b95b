"""Show or write the model card inside an agent's file: see agents/training/model_card.py."""

from agents.training.model_card import main

if __name__ == "__main__":
    raise SystemExit(main())
