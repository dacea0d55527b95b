"""``evaluate``: your policy against bots and agents on duplicate deals, in one call.

    from agents import evaluate

    result = evaluate(my_policy, preset="block", against=["strong", "pimc", "block-2p"], deals=2000)
    result                      # a table in a notebook (points per round, 95% CI, win shares)
    result.to_json("mine.json")  # the files domino-evaluate writes; result.to_csv(...), result.plot(...)

``policy`` is anything ``agents.bots.registry.as_policy`` takes: a bot or agent name, a
checkpoint file (``.pt``, an SB3 ``.zip``), ``"package.module:attribute"``, or an object (a
batched or one-observation function, a ``torch.nn.Module`` returning logits, an SB3 model).
It meets each opponent head to head, every deal played from every seat (``duplicate``), so
the differences are paired and their confidence intervals narrow. The opponents are built
and seeded as the arena builds a config's policies (the policy at index ``i`` with
``seed + i``), so ``evaluate`` gives the figures ``run_arena`` gives for the same deals.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console

from agents.arena.config import ArenaConfig
from agents.arena.report import progress_bars
from agents.arena.result import ArenaResult
from agents.arena.tournament import run_arena
from agents.bots.adapters import PolicyError
from agents.bots.registry import BOT_NAMES, as_policy, load_policy
from agents.configuration import ConfigError

DEFAULT_OPPONENTS = ("strong", "pimc")


def evaluate(
    policy: Any,
    preset: str = "block",
    players: int | None = None,
    against: Sequence[Any] | str = DEFAULT_OPPONENTS,
    deals: int = 2000,
    matches: int = 0,
    seed: int = 0,
    name: str | None = None,
    rules: dict[str, Any] | None = None,
    bots: dict[str, dict[str, Any]] | None = None,
    batch: int = 16384,
    progress: bool = True,
) -> ArenaResult:
    """``policy`` head to head against each of ``against`` on ``deals`` duplicate deals of ``seed``.

    ``matches``: also that many duplicate matches (games to the target) per opponent; ``name``:
    what the tables call ``policy`` (default: its own name); ``rules``: rule overrides
    (``{"target": 50}``); ``bots``: options of the named opponents (``{"pimc": {"samples": 16}}``).
    A bad setting is a ``ConfigError`` naming it, a policy that cannot play these rules a
    ``PolicyError`` (both ValueErrors).
    """
    opponents = [against] if isinstance(against, str) else list(against)
    config = ArenaConfig(
        preset=preset,
        players=players,
        rules=dict(rules or {}),
        policies=["policy", *(f"opponent {i}" for i in range(len(opponents)))],  # named below
        format="head_to_head",
        deals=deals,
        matches=matches,
        seed=seed,
        batch=batch,
        progress=progress,
    )
    game = config.build_rules()
    entries = [policy, *opponents]
    names = [name, *(None for _ in opponents)]
    options = dict(bots or {})
    built = []
    for index, (entry, given) in enumerate(zip(entries, names, strict=True)):
        settings = options.pop(entry, {}) if isinstance(entry, str) else {}
        try:
            bot = load_policy(entry, game, seed=seed + index, **settings) if settings else None
        except TypeError as error:  # an unknown or mistyped option
            raise ConfigError(f"bots.{entry}: {error}") from None
        built.append(bot or as_policy(entry, game, seed=seed + index, name=given))
    if options:
        raise PolicyError(f"bots has options for {', '.join(options)}, which is not among the opponents")
    labels = [_label(entry, bot) for entry, bot in zip(entries, built, strict=True)]
    _check_unique(labels)
    config = config.model_copy(update={"policies": labels})
    with progress_bars(Console(), progress) as bars:
        return run_arena(config, bars, policies=built)


def _label(entry: Any, bot: Any) -> str:
    """A bot named as the arena names it (its spec), anything else by its own name."""
    return entry if isinstance(entry, str) and entry in BOT_NAMES else bot.name


def _check_unique(labels: list[str]) -> None:
    clashes = sorted({label for label in labels if labels.count(label) > 1})
    if clashes:
        raise PolicyError(
            f"two policies are named {clashes[0]!r}: give yours another name (evaluate(..., name=...))"
        )
