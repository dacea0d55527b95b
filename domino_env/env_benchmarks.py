"""Speed of the one-game engine and the PettingZoo AEC env, with random legal agents.

``bench_game`` counts placements per second of ``domino_env.game.Game`` with the
observation of the seat to move read (copied) before every move. ``bench_aec``
counts agent steps per second (``env.step`` calls with an action; the ``step(None)``
calls of terminated agents are played but not counted) through ``env()``, wrappers
included, with the observation dict fetched by ``last()`` before every step.
"""

from __future__ import annotations

import random
import time

from .game import Game, rule_overrides
from .pettingzoo_env import env, raw_env
from .rules import Rules


def _rules(rules_or_preset: Rules | str, players: int | None) -> Rules:
    if isinstance(rules_or_preset, Rules):
        if players not in (None, rules_or_preset.players):
            raise ValueError(f"players={players} contradicts the rules ({rules_or_preset.players} players)")
        return rules_or_preset
    return Rules.preset(rules_or_preset, players)


def bench_game(
    rules_or_preset: Rules | str, players: int | None = None, seconds: float = 3.0, seed: int = 0
) -> float:
    """Placements per second of ``Game`` (round episodes, observation read every move)."""
    game = Game(_rules(rules_or_preset, players), seed=seed)
    choose = random.Random(seed).choice
    moves, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(1000):
            if game.over:
                game.reset()
            game.observation(game.to_play)
            game.step(choose(game.legal_actions()))
        moves += 1000
    return moves / elapsed


def bench_aec(
    rules_or_preset: Rules | str,
    players: int | None = None,
    seconds: float = 3.0,
    seed: int = 0,
    wrapped: bool = True,
) -> float:
    """Agent steps per second of the AEC env (``env()`` with its wrappers, or ``raw_env``)."""
    rules = _rules(rules_or_preset, players)
    make = env if wrapped else raw_env
    aec = make(preset=rules.name, players=rules.players, **rule_overrides(rules))
    aec.reset(seed=seed)
    pick = random.Random(seed).randrange
    steps, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(1000):
            observation, _, terminated, truncated, _ = aec.last()
            if terminated or truncated:
                aec.step(None)
                if not aec.agents:
                    aec.reset()
                continue
            legal = observation["action_mask"].nonzero()[0]
            aec.step(legal[pick(len(legal))])
            steps += 1
    return steps / elapsed
