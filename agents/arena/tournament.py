"""The benchmark arena: duplicate head-to-head and round-robin runs between policies, on any preset.

``run_arena(config)`` plays every pair of policies (round robin) or the first
policy against each of the others (head to head) on the same seeded deals, every
deal once per seat rotation (``duplicate``), and when ``config.matches`` > 0 the
same with whole games to the target (``mode="match"``): one pair after another, so
that Ctrl-C keeps the pairs that had finished (``ArenaInterrupted``). It reports per
pair the paired difference in points per round with its 95% CI, round and match win
rates, and per policy its overall numbers and openskill rating (``stats``). ``report``
prints and saves the result, with the rounds that ``config.save_games`` asks for as game
records.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from itertools import combinations

import numpy as np

from agents.arena.config import ArenaConfig
from agents.arena.duplicate import Mode, Played, duplicate_deals, merge_played, play, rotations
from agents.arena.result import ArenaResult
from agents.arena.stats import Seated, pair_result, policy_results, ratings, seated
from agents.bots.registry import BOT_NAMES, Bot, load_policy
from agents.configuration import ConfigError
from domino_env.engine.rules import Rules

Progress = Callable[[str, int], Callable[[int], None]]
"""``progress(label, total)`` returns the callback ``duplicate.play`` reports completed games to."""


def schedule_pairs(count: int, format: str) -> list[tuple[int, int]]:
    """Pairs of policy indices: all of them, or the first policy against each other one."""
    if format == "head_to_head":
        return [(0, j) for j in range(1, count)]
    return list(combinations(range(count), 2))


def seatings(rotation: np.ndarray, pairs: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """(tables, P) global policy index per seat, and the pair of each table (pair-major)."""
    first = np.array([a for a, _ in pairs])[:, None, None]
    second = np.array([b for _, b in pairs])[:, None, None]
    tables = np.where(rotation[None] == 0, first, second).reshape(-1, rotation.shape[1])
    return tables, np.repeat(np.arange(len(pairs)), len(rotation))


class ArenaInterrupted(KeyboardInterrupt):
    """Ctrl-C after some pairs had finished: ``result`` is the arena of those pairs alone, on the
    run's deals (a KeyboardInterrupt still, for callers that only know that one)."""

    def __init__(self, result: ArenaResult, finished: int, total: int) -> None:
        super().__init__(f"interrupted after {finished} of {total} pairs")
        self.result, self.finished, self.total = result, finished, total


def run_arena(
    config: ArenaConfig, progress: Progress | None = None, policies: Sequence[Bot] | None = None
) -> ArenaResult:
    """Play the config's pairs one after another, each on every deal in every seat rotation (rounds,
    then matches), so that Ctrl-C keeps the pairs already finished (``ArenaInterrupted``). A pair's
    rows are what one batch of all the pairs would give (``duplicate``: a row depends on its deal and
    its table alone), timings and the stochastic policies' samples aside.

    ``policies``: the bots themselves, one per name of ``config.policies`` (``evaluate`` passes a
    user's objects so); by default each is built from its spec."""
    rules = config.build_rules()
    if policies is None:
        policies = build_policies(config, rules)
        names = display_names(config.policies, policies)
    else:
        names = list(config.policies)
    pairs = schedule_pairs(len(names), config.format)
    rotation = rotations(rules)
    tables, _ = seatings(rotation, pairs)
    modes: list[tuple[Mode, int, int]] = [("round", config.deals, config.seed)]
    if config.matches:
        modes.append(("match", config.matches, config.seed + 1))
    deals = {mode: duplicate_deals(rules, count, seed) for mode, count, seed in modes}
    reports = {
        mode: progress(f"{mode}s", len(tables) * count) if progress else None for mode, count, _ in modes
    }
    saves = [len(share) for share in np.array_split(np.arange(config.save_games), len(pairs))]
    parts: dict[Mode, list[Played]] = {mode: [] for mode, _, _ in modes}
    seconds: dict[Mode, float] = {mode: 0.0 for mode, _, _ in modes}
    try:
        for index in range(len(pairs)):
            seats = tables[index * len(rotation) : (index + 1) * len(rotation)]
            for mode, _, seed in modes:
                start = time.perf_counter()
                save = saves[index] if mode == "round" else 0
                parts[mode].append(
                    play(rules, policies, seats, *deals[mode], mode, config.batch, seed, reports[mode], save)
                )
                seconds[mode] += time.perf_counter() - start
    except KeyboardInterrupt:
        finished = len(parts[modes[-1][0]])  # pairs with every mode played
        if not finished:
            raise
        kept = sorted({policy for pair in pairs[:finished] for policy in pair})
        renumber = {old: new for new, old in enumerate(kept)}
        finished_pairs = [(renumber[a], renumber[b]) for a, b in pairs[:finished]]
        result = _assemble(
            config, rules, [names[i] for i in kept], finished_pairs, rotation,
            {mode: part[:finished] for mode, part in parts.items()}, seconds, kept,
        )  # fmt: skip
        raise ArenaInterrupted(result, finished, len(pairs)) from None
    return _assemble(config, rules, names, pairs, rotation, parts, seconds, list(range(len(names))))


def _assemble(
    config: ArenaConfig,
    rules: Rules,
    names: list[str],
    pairs: list[tuple[int, int]],
    rotation: np.ndarray,
    parts: dict[Mode, list[Played]],
    seconds: dict[Mode, float],
    kept: list[int],
) -> ArenaResult:
    """The result of the pairs ``parts`` played in order (``kept``: the config's policies they use)."""
    tables, table_pair = seatings(rotation, pairs)
    width = len(rotation)

    def joined(mode: Mode) -> Played:
        cuts = [(np.arange(i * width, (i + 1) * width), 0, 0) for i in range(len(pairs))]
        whole = merge_played(cuts, parts[mode])
        return replace(whole, seconds=whole.seconds[kept], moves=whole.moves[kept])

    played = joined("round")
    rounds = seated(rules, played, tables, table_pair)
    matches = seated(rules, joined("match"), tables, table_pair) if "match" in parts else None
    match_seconds = seconds.get("match", 0.0)
    return arena_result(
        config, rules, names, pairs, tables, played, rounds, matches, seconds["round"], match_seconds
    )


def display_names(specs: Sequence[str], policies: Sequence[Bot]) -> list[str]:
    """Policy names for tables and plots: a bot (or a ``bots`` variant) by its spec, anything else by
    the name its policy gives itself (a checkpoint by its file stem, ``runs/x/checkpoints/best.pt`` ->
    ``best``; an imported object by its ``name``), unless two would then share a name."""
    short = [
        spec if spec in BOT_NAMES or policy.name in BOT_NAMES else policy.name
        for spec, policy in zip(specs, policies, strict=True)
    ]
    return [name if short.count(name) == 1 else spec for name, spec in zip(short, specs, strict=True)]


def build_policies(config: ArenaConfig, rules: Rules) -> list[Bot]:
    """The config's policies, each seeded ``seed + index``."""
    policies = []
    for index, spec in enumerate(config.policies):
        try:
            bot, options = config.policy_options(spec)
            policies.append(load_policy(bot, rules, seed=config.seed + index, **options))
        except (TypeError, ValueError) as error:
            raise ConfigError(f"{spec}: {error}") from None
    return policies


def arena_result(
    config: ArenaConfig,
    rules: Rules,
    names: list[str],
    pairs: list[tuple[int, int]],
    tables: np.ndarray,
    played: Played,
    rounds: Seated,
    matches: Seated | None,
    seconds: float,
    match_seconds: float,
) -> ArenaResult:
    """The ``ArenaResult`` of a run from what it played: one assembly for local and sharded runs."""
    rated = ratings(names, rounds, pairs, config.deals, config.seed)
    return ArenaResult(
        preset=rules.name,
        players=rules.players,
        format=config.format,
        deals=config.deals,
        matches=config.matches,
        seed=config.seed,
        pairs=[
            pair_result(names, rounds, matches, index, a, b, config.deals)
            for index, (a, b) in enumerate(pairs)
        ],
        policies=policy_results(
            names, rounds, matches, rated, 1000 * played.seconds / np.maximum(played.moves, 1)
        ),
        rounds=len(played.deal),
        seconds=seconds,
        match_seconds=match_seconds,
        games=[
            {"record": game.record, "seats": [names[i] for i in tables[game.table]], "deal": game.deal}
            for game in played.saved
        ],
    )
