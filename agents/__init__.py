"""Agents for domino-rl: heuristic bots, search bots and trained policies.

They consume only what an environment gives a seat (observation and legal-action
mask), never the engine's hidden state.
"""
