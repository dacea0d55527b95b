"""Arena configuration: which policies meet, on which rules, on how many deals.

``ArenaConfig`` is a ``agents.configuration.ConfigModel``: YAML files plus ``key.sub=value``
command-line overrides, strictly checked, every problem one ``ConfigError`` line that names
the key. The preset, player count, rule overrides and bot options are checked by building
them, so a typo never runs a silent default.

The upper bounds are generous but finite, so that an absurd value is a
ConfigError rather than a MemoryError: at most ``DEALS_MAX`` duplicate deals,
``MATCHES_MAX`` matches, ``BATCH_MAX`` games stepped together, seeds below 2**63,
and for the search bots at most ``SEARCH_SAMPLES_MAX`` samples and rollouts
(the bounds several commands share are in ``agents.configuration``).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from agents.bots.registry import BOT_NAMES, load_policy
from agents.configuration import (
    DEALS_MAX,
    SEED_MAX,
    ConfigError,
    ConfigModel,
    RayConfig,
    TopLevelConfig,
    build_rules,
    check_bot_options,
    check_plain_name,
    one_line,
    parse_file,
    unknown_key,
    unknown_name,
)
from domino_env.engine.rules import Rules
from domino_env.text import brief

Format = Literal["round_robin", "head_to_head"]

MATCHES_MAX = 100_000
"""Most duplicate matches per pair."""
BATCH_MAX = 1 << 20
"""Most games stepped together in one core."""
SAVE_GAMES_MAX = 10_000
"""Most rounds ``save_games`` writes as game records (one small JSON file each)."""

with warnings.catch_warnings():
    # The ``json`` key is older than this class; pydantic's deprecated ``BaseModel.json`` is not used.
    warnings.filterwarnings("ignore", message='Field name "json"', category=UserWarning)

    class OutputConfig(ConfigModel):
        """Where an arena run writes its results (``output``)."""

        dir: str = "runs/arena"
        """Folder for the JSON, CSV and PNG files."""
        name: str = ""
        """File stem (a plain file name, no folders); empty: ``<preset>-<players>p``."""
        json: bool = True
        """Write ``<name>.json`` (the full result)."""
        csv: bool = True
        """Write ``<name>.csv`` (one row per pair)."""
        plot: bool = True
        """Write ``<name>.png`` (the pairwise differences)."""

        @model_validator(mode="after")
        def _plain_name(self) -> OutputConfig:
            if self.name:
                check_plain_name("output.name", self.name)
            return self


class ArenaConfig(TopLevelConfig):
    """An arena run (``scripts/evaluate.py``): which policies meet, on which rules, on how many deals."""

    config_name: ClassVar[str] = "the arena config"

    preset: str = "block"
    """Rule preset (``domino_env.engine.rules.PRESETS``)."""
    players: int | None = Field(None, ge=2, le=4)
    """Default: the preset's smallest player count."""
    rules: dict[str, Any] = Field(default_factory=dict)
    """``Rules`` field overrides (``target: 50``)."""
    policies: list[str] = Field(default_factory=lambda: ["strong", "random"])
    """Bot names (``agents.bots.registry.BOT_NAMES``) or checkpoint paths; at least two, no repeats."""
    format: Format = "round_robin"
    """round_robin: every pair; head_to_head: the first policy against each of the others."""
    deals: int = Field(2000, ge=1, le=DEALS_MAX)
    """Duplicate deals per pair (round mode); each is played once per seat rotation."""
    matches: int = Field(200, ge=0, le=MATCHES_MAX)
    """Duplicate matches (games to the target) per pair; 0 skips the match run."""
    seed: int = Field(0, ge=0, le=SEED_MAX)
    """Seeds the deals (the matches use ``seed + 1``) and the bots (``seed + index``)."""
    batch: int = Field(16384, ge=1, le=BATCH_MAX)
    """Games stepped together in one core."""
    bots: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Constructor options per policy name (``pimc: {samples: 16}``). With a ``bot`` key the
    policy name is a variant of that bot, so two settings of one bot can meet
    (``pimc_net: {bot: pimc, rollout_bot: block-2p}``)."""
    progress: bool = True
    """Show progress bars."""
    output: OutputConfig = Field(default_factory=OutputConfig)
    """Where the results are written."""
    save_games: int = Field(0, ge=0, le=SAVE_GAMES_MAX)
    """Rounds of the round-mode run to save as game records, spread over the pairs, seatings
    and deals: ``<name>-games/`` beside the results, with ``games.json`` naming who sat where
    (``domino-serve --games DIR`` replays them); 0 saves none."""
    ray: RayConfig = Field(default_factory=RayConfig)
    """Shard the deals over Ray tasks (``ray.workers=N``): the same result, number for number."""

    @model_validator(mode="after")
    def _check_policies(self) -> ArenaConfig:
        if len(self.policies) < 2:
            raise ConfigError(f"policies needs at least two entries, got {brief(self.policies)}")
        if len(set(self.policies)) != len(self.policies):
            raise ConfigError(f"policies lists a policy twice: {brief(self.policies)}")
        unknown = [name for name in self.bots if name not in self.policies]
        if unknown:
            raise ConfigError(unknown_key(f"bots.{unknown[0]}", unknown[0], self.policies, "policies"))
        for name in self.bots:
            bot, options = self.policy_options(name)
            if bot != name and bot not in BOT_NAMES:
                raise ConfigError(unknown_name(f"bots.{name}.bot", bot, BOT_NAMES))
            check_bot_options(f"bots.{name}", bot, options)
        return self

    def build_rules(self) -> Rules:
        return build_rules(self.preset, self.players, self.rules)

    def policy_options(self, spec: str) -> tuple[str, dict[str, Any]]:
        """(bot name or checkpoint path, constructor options) of the policy listed as ``spec``."""
        options = dict(self.bots.get(spec, {}))
        return options.pop("bot", spec), options


def load_config(path: str | Path | None, overrides: list[str] = ()) -> ArenaConfig:
    """The config in ``path`` (a YAML file or a shipped arena config's name, ``"bots"``; None: all
    defaults) with ``key.sub=value`` overrides applied."""
    return parse_file(path, overrides, "arena", parse_config)


def parse_config(raw: dict[str, Any]) -> ArenaConfig:
    """A checked ``ArenaConfig`` from a nested dict; every policy is built once to check it."""
    config = ArenaConfig.parse(raw)
    rules = config.build_rules()
    for spec in config.policies:
        bot, options = config.policy_options(spec)
        key = f"bots.{spec}" if options and bot in BOT_NAMES else "policies"
        try:
            load_policy(bot, rules, seed=config.seed, **options)
        except TypeError as error:  # an unknown or mistyped option
            raise ConfigError(f"bots.{spec}: {one_line(error)}") from None
        except (ValueError, OverflowError, OSError) as error:
            raise ConfigError(f"{key}: {one_line(error)}") from None
        except Exception as error:  # what a constructor does with a strange option: still its problem
            raise ConfigError(f"{key}: {type(error).__name__}: {one_line(error)}") from None
    return config
