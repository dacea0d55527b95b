"""Arena configuration: YAML files plus ``key.sub=value`` command-line overrides, strictly checked.

Every key is checked against the dataclasses below: an unknown key is an error
that names it and the closest valid key, a value of the wrong type names the
key and the type it needs, and the preset, player count, rule overrides and bot
options are checked by building them, so a typo never runs a silent default.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from domino_env.rules import Rules

from .policy import load_policy

Format = Literal["round_robin", "head_to_head"]


class ConfigError(ValueError):
    """A config file or override that cannot be run; the message says what to change."""


@dataclass
class OutputConfig:
    dir: str = "runs/arena"
    """Folder for the JSON, CSV and PNG files."""
    name: str = ""
    """File stem; empty: ``<preset>-<players>p``."""
    json: bool = True
    csv: bool = True
    plot: bool = True


@dataclass
class ArenaConfig:
    preset: str = "block"
    players: int | None = None
    """Default: the preset's smallest player count."""
    rules: dict[str, Any] = field(default_factory=dict)
    """``Rules`` field overrides (``target: 50``)."""
    policies: list[str] = field(default_factory=lambda: ["strong", "random"])
    """Bot names (``agents.policy.BOT_NAMES``) or checkpoint paths."""
    format: Format = "round_robin"
    """round_robin: every pair; head_to_head: the first policy against each of the others."""
    deals: int = 2000
    """Duplicate deals per pair (round mode); each is played once per seat rotation."""
    matches: int = 200
    """Duplicate matches (games to the target) per pair; 0 skips the match run."""
    seed: int = 0
    batch: int = 16384
    """Games stepped together in one core."""
    bots: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Constructor options per policy name (``pimc: {samples: 16}``)."""
    progress: bool = True
    output: OutputConfig = field(default_factory=OutputConfig)

    def build_rules(self) -> Rules:
        try:
            return Rules.preset(self.preset, self.players, **self.rules)
        except ValueError as error:
            raise ConfigError(str(error)) from None


def load_config(path: str | Path | None, overrides: list[str] = ()) -> ArenaConfig:
    """The config in ``path`` (YAML; None: all defaults) with ``key.sub=value`` overrides applied."""
    return parse_config(read_raw(path, overrides))


def read_raw(path: str | Path | None, overrides: list[str] = ()) -> dict[str, Any]:
    """The nested dict of a YAML config file (None: empty) with ``key.sub=value`` overrides applied."""
    raw: dict[str, Any] = {}
    if path is not None:
        try:
            raw = yaml.safe_load(Path(path).read_text()) or {}
        except (OSError, yaml.YAMLError) as error:
            raise ConfigError(f"cannot read config {path}: {error}") from None
        if not isinstance(raw, dict):
            raise ConfigError(f"config {path} must be a mapping of keys to values")
    for item in overrides:
        apply_override(raw, item)
    return raw


def apply_override(raw: dict[str, Any], item: str) -> None:
    """Set ``a.b.c=value`` in a nested dict; the value is read as YAML (``deals=500``, ``policies=[a,b]``)."""
    key, sep, text = item.partition("=")
    if not sep or not key:
        raise ConfigError(f"override {item!r} must look like key.sub=value")
    *parents, leaf = key.strip().split(".")
    node = raw
    for part in parents:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ConfigError(f"override {item!r}: {part!r} is not a mapping")
    node[leaf] = yaml.safe_load(text)


def parse_config(raw: dict[str, Any]) -> ArenaConfig:
    config = _build(ArenaConfig, raw, "")
    rules = config.build_rules()
    if len(config.policies) < 2:
        raise ConfigError("policies needs at least two entries")
    if len(set(config.policies)) != len(config.policies):
        raise ConfigError(f"policies lists a policy twice: {config.policies}")
    for key in ("deals", "batch"):
        if getattr(config, key) < 1:
            raise ConfigError(f"{key} must be at least 1, got {getattr(config, key)}")
    if config.matches < 0:
        raise ConfigError(f"matches must be 0 (skip) or more, got {config.matches}")
    unknown = sorted(set(config.bots) - set(config.policies))
    if unknown:
        raise ConfigError(_unknown(f"bots.{unknown[0]}", unknown[0], config.policies, "policies"))
    for spec in config.policies:
        try:
            load_policy(spec, rules, seed=config.seed, **config.bots.get(spec, {}))
        except TypeError as error:
            raise ConfigError(f"bots.{spec}: {error}") from None
        except ValueError as error:
            raise ConfigError(f"policies: {error}") from None
    return config


def _build(cls: type, raw: Any, where: str) -> Any:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where or 'config'} must be a mapping, got {raw!r}")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    values = {}
    for key, value in raw.items():
        path = f"{where}.{key}" if where else str(key)
        if key not in names:
            raise ConfigError(_unknown(path, str(key), names, where or "the arena config"))
        values[key] = _check(hints[key], value, path)
    return cls(**values)


def _check(kind: Any, value: Any, path: str) -> Any:
    """``value`` if it has type ``kind`` (nested configs are built), else a ConfigError."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if dataclasses.is_dataclass(kind):
        return _build(kind, value, path)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _check(inner, value, path)
    if origin is Literal:
        if value not in args:
            hint = difflib.get_close_matches(str(value), [str(a) for a in args], n=1)
            extra = f"; did you mean {hint[0]!r}?" if hint else ""
            raise ConfigError(f"{path} must be one of {', '.join(map(str, args))}; got {value!r}{extra}")
        return value
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{path} must be a list, got {value!r}")
        return [_check(args[0], v, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{path} must be a mapping, got {value!r}")
        return {str(k): _check(args[1], v, f"{path}.{k}") for k, v in value.items()}
    if kind is Any:
        return value
    ok = isinstance(value, kind) and not (kind in (int, float) and isinstance(value, bool))
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if kind is float and isinstance(value, str):
        # PyYAML reads exponents without a dot (``1e-4``) as strings: take them as the number meant.
        try:
            return float(value)
        except ValueError:
            pass
    if not ok:
        raise ConfigError(f"{path} must be {_type_name(kind)}, got {value!r}")
    return value


def _type_name(kind: type) -> str:
    return {int: "an integer", bool: "true or false", str: "a string", float: "a number"}.get(
        kind, kind.__name__
    )


def _unknown(path: str, key: str, valid: list[str], where: str) -> str:
    close = difflib.get_close_matches(key, valid, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown key {path!r} in {where}{hint} (valid: {', '.join(valid)})"
