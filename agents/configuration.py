"""The config machinery every command's config builds on: strict pydantic models, YAML, overrides.

The configs of the arena (``agents.arena.config``), of training (``agents.training.config``)
and of the other commands are ``ConfigModel``s: every key is checked against the model's
fields, and every problem is one ``ConfigError`` line that names the key path
(``output.dir``), the value and what is allowed. An unknown key names the closest valid key
and lists the valid ones; a value of the wrong type names the type it needs (a bool is not a
number, a string is not an integer; only ``1e-4``, which YAML reads as a string, is taken as
the number meant); numbers are finite and within the field's range (its ``Field(ge=...,
le=...)``, given in the message).

A config is a YAML file or the name of a shipped one plus ``key.sub=value`` overrides (``read_raw``);
the YAML refuses duplicate keys and alias bombs (``load_yaml``). The shipped configs are grouped by
kind, a folder each (``CONFIG_KINDS``: ``train``, ``arena``, ``rllib``), and each command takes the
names of its own kind only (``shipped_configs``, ``config_path``): another kind's name is a
ConfigError naming the command that runs it.

The bounds shared by several commands live here: seeds below 2**63, at most ``DEALS_MAX``
duplicate deals, ``WORKERS_MAX`` Ray workers, and for the search bots at most
``SEARCH_SAMPLES_MAX`` samples and rollouts (``BOT_OPTION_LIMITS``). They are generous but
finite, so that an absurd value is a ConfigError rather than a MemoryError.

This module sits below the bots, the arena and training: it imports none of them (``kind_hint``
imports their config models by name, only to word an error).
"""

from __future__ import annotations

import difflib
import importlib
import math
import re
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, ClassVar, TypeVar

import annotated_types
import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo

from domino_env.engine.rules import Rules
from domino_env.text import brief

CONFIGS_DIR = Path(__file__).resolve().parent / "configs"
"""The configs shipped as package data, a folder per kind (the repository's ``configs/`` links here)."""
CONFIG_KINDS = ("train", "arena", "rllib")
"""The kinds of shipped config, each a folder of ``CONFIGS_DIR`` read by its own command."""
KIND_TITLES = {"train": "a training", "arena": "an arena", "rllib": "an RLlib"}
"""How messages name each kind (``a training config``)."""
KIND_COMMANDS = {
    "train": "domino-train",
    "arena": "domino-evaluate",
    "rllib": "python scripts/train_rllib.py",
}
"""The command that runs each kind (``domino-evaluate bots``)."""
KIND_MODELS = {
    "train": "agents.training.config:TrainConfig",
    "arena": "agents.arena.config:ArenaConfig",
    "rllib": "agents.training.config:TrainConfig",
}
"""The model each kind is checked with, imported only to word an error (``kind_hint``): this module
sits below them."""


def shipped_configs(kind: str) -> tuple[str, ...]:
    """The names of the shipped configs of ``kind``: ``load_config("bots")`` reads
    ``CONFIGS_DIR / "arena" / "bots.yaml"`` from any folder."""
    if kind not in CONFIG_KINDS:
        raise ValueError(f"unknown config kind {kind!r} (kinds: {', '.join(CONFIG_KINDS)})")
    return tuple(sorted(path.stem for path in (CONFIGS_DIR / kind).glob("*.yaml")))


SEED_MAX = 2**63 - 1
"""Largest seed (NumPy takes any non-negative integer; torch generators take 64 bits)."""
DEALS_MAX = 1_000_000
"""Most duplicate deals per pair (50x the shipped arena configs; memory grows with deals x tables)."""
SEARCH_SAMPLES_MAX = 1000
"""Most ``samples`` and ``rollouts`` of the search bots (``pimc``, ``omniscient``; defaults 24 and 1)."""
SEARCH_GAMES_MAX = 1 << 20
"""Most ``max_games`` (playouts stepped together) of the search bots."""
WORKERS_MAX = 1 << 16
"""Most Ray workers (``ray.workers``): far past any cluster's CPU count."""

BOT_OPTION_LIMITS: dict[str, dict[str, tuple[type, float, float]]] = {
    "pimc": {
        "samples": (int, 1, SEARCH_SAMPLES_MAX),
        "rollouts": (int, 1, SEARCH_SAMPLES_MAX),
        "candidates": (int, 1, SEARCH_SAMPLES_MAX),
        "max_games": (int, 1, SEARCH_GAMES_MAX),
        "epsilon": (float, 0, 1),
        "prior": (float, 0, 1000),
        "policy_weight": (float, 0, 1000),
    },
    "best_response": {
        "samples": (int, 1, SEARCH_SAMPLES_MAX),
        "candidates": (int, 1, SEARCH_SAMPLES_MAX),
        "max_games": (int, 1, SEARCH_GAMES_MAX),
        "prior": (float, 0, 1000),
    },
    "omniscient": {
        "rollouts": (int, 1, SEARCH_SAMPLES_MAX),
        "max_games": (int, 1, SEARCH_GAMES_MAX),
        "epsilon": (float, 0, 1),
        "prior": (float, 0, 1000),
    },
}
"""(type, lowest, highest) of the numeric bot options that size memory; other options go to the
bot's constructor as given (it refuses unknown ones)."""


class ConfigError(ValueError):
    """A config file or override that cannot be run; the message says what to change."""


def _yaml_number(value: Any) -> Any:
    # PyYAML reads exponents without a dot (``1e-4``) as strings: take them as the number meant.
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    return value


Number = Annotated[float, BeforeValidator(_yaml_number)]
"""A finite float field; an int is taken, a bool is not, a numeric string (``"1e-4"``) is."""


class ConfigModel(BaseModel):
    """Base of the config models: strict types, no unknown keys, finite numbers, one-line errors.

    ``parse(raw)`` raises ``ConfigError`` instead of pydantic's ``ValidationError``.
    The attribute docstrings are the fields' descriptions (``model_fields[name].description``).
    """

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, use_attribute_docstrings=True)
    config_name: ClassVar[str] = "the config"
    """How error messages name the top level (``unknown key 'x' in the arena config``)."""

    @classmethod
    def parse(cls: type[_Model], raw: Any) -> _Model:
        """The checked config of a nested dict (the YAML's)."""
        try:
            return cls.model_validate(raw)
        except ValidationError as error:
            raise ConfigError(describe_error(cls, error)) from None

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of primitives (YAML-able, and loadable by ``torch.load(weights_only=True)``)."""
        return self.model_dump()


class TopLevelConfig(ConfigModel):
    """A config that is never nested in another: constructing it (``ArenaConfig(deals=10)``) raises
    ``ConfigError`` too. (Only here: pydantic builds a nested model with its own ``__init__``, which
    would lose the key path of the nested errors.)"""

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as error:
            raise ConfigError(describe_error(type(self), error)) from None

    @classmethod
    def parse(cls: type[_Model], raw: Any) -> _Model:
        if not isinstance(raw, dict):
            raise ConfigError(f"{cls.config_name} must be a mapping, got {_short(raw)}")
        for key in raw:
            if not isinstance(key, str):
                raise ConfigError(f"{cls.config_name} keys must be strings, got {_short(key)}")
        return cls(**raw)


_Model = TypeVar("_Model", bound=ConfigModel)
_Parsed = TypeVar("_Parsed")


class RayConfig(ConfigModel):
    """Scale-out on Ray (``ray``; needs the ``ray`` extra, see docs/scaling.md)."""

    workers: int = Field(0, ge=0, le=WORKERS_MAX)
    """Ray workers (tasks or actors, one CPU each); 0: run in this process, without Ray."""
    address: str = ""
    """Ray cluster to join: empty starts a local Ray instance, ``auto`` joins the running cluster
    (``ray start``), ``host:port`` a given one."""


def read_raw(path: str | Path | None, overrides: list[str] = (), *, kind: str) -> dict[str, Any]:
    """The nested dict of a YAML config file or shipped config name of ``kind`` (None: empty) with
    ``key.sub=value`` overrides applied."""
    raw: dict[str, Any] = {}
    if path is not None:
        path = config_path(path, kind)
        try:
            raw = load_yaml(Path(path).read_text()) or {}
        except (OSError, *YAML_ERRORS) as error:
            raise ConfigError(f"cannot read config {path}: {_yaml_problem(error)}") from None
        if not isinstance(raw, dict):
            raise ConfigError(f"config {path} must be a mapping of keys to values")
    for item in overrides:
        apply_override(raw, item)
    return raw


def parse_file(
    path: str | Path | None, overrides: list[str], kind: str, parse: Callable[[dict[str, Any]], _Parsed]
) -> _Parsed:
    """``parse`` of the config ``path`` names (a file, or a shipped name of ``kind``) with overrides;
    when it fails on keys that another kind's config has, the ConfigError says which command runs it."""
    raw = read_raw(path, kind=kind)
    keys = tuple(raw)
    for item in overrides:
        apply_override(raw, item)
    try:
        return parse(raw)
    except ConfigError as error:
        hint = kind_hint(keys, kind, path)
        if not hint:
            raise
        raise ConfigError(f"{error}{hint}") from None


def config_path(spec: str | Path, kind: str) -> Path:
    """The config file ``spec`` names: an existing path as it is, else a shipped config of ``kind``
    by name (``config_path("quickstart", "train")``).

    A path wins over a shipped name, so a local file is never shadowed. Anything else is a
    ConfigError: another kind's name names the command that runs it, an unknown name lists the
    names of ``kind`` (and the closest one), a path that is no file suggests the shipped config its
    name points to (the configs of before the grouping, ``configs/arena_block.yaml``, included).
    """
    names = shipped_configs(kind)
    path = Path(spec)
    if path.is_file():
        return path
    text = str(spec)
    if not _is_name(text):
        found = _shipped_home(path.stem, kind)
        hint = ""
        if found:
            home, name = found
            hint = f"; did you mean {_title(home)} config {name!r} (configs/{home}/{name}.yaml)?"
        raise ConfigError(f"config file {_short(text)} {_why_not_a_file(path)}{hint}")
    if text in names:
        return CONFIGS_DIR / kind / f"{text}.yaml"
    homes = [other for other in CONFIG_KINDS if other != kind and text in shipped_configs(other)]
    if homes:
        what = " and ".join(f"{KIND_TITLES[home]} config" for home in homes)
        runs = " or ".join(f"{KIND_COMMANDS[home]} {text}" for home in homes)
        raise ConfigError(f"{text!r} is {what}, not {KIND_TITLES[kind]} config: run it with {runs}")
    moved = _renamed(text)
    if moved:
        home, name = moved
        raise ConfigError(
            f"{text!r} is now {_title(home)} config {name!r} (configs/{home}/{name}.yaml; the configs are "
            f"grouped by kind): run it with {KIND_COMMANDS[home]} {name}"
        )
    close = difflib.get_close_matches(text, names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    title = _title(kind).removeprefix("the ")
    raise ConfigError(
        f"config {_short(text)} is neither a file nor a shipped {title} config name{hint} "
        f"({title} configs: {', '.join(names)})"
    )


def _why_not_a_file(path: Path) -> str:
    """What stands where a config file was expected: nothing, a folder, or a link that leads nowhere."""
    if path.is_symlink():
        try:
            path.resolve(strict=True)
        except (OSError, RuntimeError):  # a loop (RuntimeError before Python 3.13) or a dangling link
            return "is a symbolic link that leads to no file (a loop or a missing target)"
    if path.is_dir():
        return "is a folder, not a YAML file"
    if path.exists():
        return "is not a regular file"
    return "does not exist"


def _is_name(text: str) -> bool:
    """A shipped config's name, not a path: no folder, no ``.yaml``."""
    return not re.search(r"[/\\]", text) and not text.endswith((".yaml", ".yml"))


def _title(kind: str) -> str:
    """``the training`` (of ``a training``)."""
    return "the " + KIND_TITLES[kind].split(" ", 1)[1]


def _renamed(name: str) -> tuple[str, str] | None:
    """(kind, name) of a config named as before the configs were grouped by kind (``arena``,
    ``arena_block``, ``rllib_block``), if it still ships."""
    if name == "arena":
        return "arena", "bots"
    for kind in ("arena", "rllib"):
        rest = name.removeprefix(f"{kind}_")
        if rest != name and rest in shipped_configs(kind):
            return kind, rest
    return None


def _shipped_home(name: str, kind: str) -> tuple[str, str] | None:
    """(kind, name) of the shipped config a file name points to: of ``kind`` first, then renamed,
    then of another kind."""
    if name in shipped_configs(kind):
        return kind, name
    moved = _renamed(name)
    if moved:
        return moved
    return next(((other, name) for other in CONFIG_KINDS if name in shipped_configs(other)), None)


def kind_hint(keys: Any, kind: str, path: str | Path | None = None) -> str:
    """``"; this looks like an arena config: run it with domino-evaluate <path>"`` when the top-level
    ``keys`` (a config file's) that the model of ``kind`` does not know are all keys of another kind's
    model: a config file given to the wrong command. Else ``""``."""
    unknown = {key for key in keys if isinstance(key, str)} - _model_fields(KIND_MODELS[kind])
    if not unknown:
        return ""
    fits = [
        other
        for other in CONFIG_KINDS
        if KIND_MODELS[other] != KIND_MODELS[kind] and unknown <= _model_fields(KIND_MODELS[other])
    ]
    if not fits:
        return ""
    folder = Path(path).resolve().parent if path is not None else None
    other = next((k for k in fits if folder == (CONFIGS_DIR / k).resolve()), fits[0])  # a shipped one's kind
    command = KIND_COMMANDS[other] + ("" if path is None else f" {path}")
    return f"; this looks like {KIND_TITLES[other]} config: run it with {command}"


def _model_fields(reference: str) -> frozenset[str]:
    module, _, name = reference.partition(":")
    return frozenset(getattr(importlib.import_module(module), name).model_fields)


YAML_ERRORS = (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError)
"""What ``load_yaml`` raises on bad text: ValueError and TypeError come from PyYAML's constructors
(a bad !!timestamp or !!binary) and from a recursive alias, RecursionError from deep nesting."""


MAX_YAML_VALUES = 100_000
"""Values (mappings, lists and scalars, counted with every copy an alias makes) a config may hold:
a handful of aliases nested nine deep repeat what they name 10^9 times in 324 bytes."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key written twice in one mapping (PyYAML keeps the last one,
    so a second ``ppo:`` section silently replaces the first). Keys merged in by ``<<`` may still be
    overridden: that is what merging is for."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:  # an unhashable key: the base constructor says so
                break
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"duplicate key {brief(key)}",
                    key_node.start_mark,
                )
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load``, refusing a key written twice in a mapping, a value that contains itself (a
    recursive alias, ``&a [*a]``: every check that walks a config would recurse without end), and a
    value that aliases expand beyond ``MAX_YAML_VALUES`` (every check would walk every copy)."""
    value = yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader: plain data only
    if _expanded_size(value, {}, set()) > MAX_YAML_VALUES:
        raise ValueError(
            f"its aliases expand to more than {MAX_YAML_VALUES:,} values (a config is a small tree; "
            "this looks like an alias bomb)"
        )
    return value


def _expanded_size(value: Any, sizes: dict[int, int], path: set[int]) -> int:
    """The number of values in ``value`` with every shared list or dict counted once per copy, computed
    once per distinct list or dict (``sizes``); ValueError if one holds itself (``path``: the lists and
    dicts being walked)."""
    if not isinstance(value, list | dict):
        return 1
    key = id(value)
    if key in path:
        raise ValueError("a value contains itself through a recursive alias")
    if key not in sizes:
        path.add(key)
        items = value.values() if isinstance(value, dict) else value
        sizes[key] = 1 + sum(_expanded_size(item, sizes, path) for item in items)
        path.discard(key)
    return sizes[key]


def apply_override(raw: dict[str, Any], item: str) -> None:
    """Set ``a.b.c=value`` in a nested dict; the value is read as YAML (``deals=500``, ``policies=[a,b]``)."""
    key, sep, text = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"override {_short(item)} must look like key.sub=value")
    *parents, leaf = key.strip().split(".")
    if not all(part.strip() for part in (*parents, leaf)):
        raise ConfigError(
            f"override {_short(item)}: {_short(key.strip())} has an empty key name (key.sub=value)"
        )
    node = raw
    for part in parents:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ConfigError(f"override {item!r}: {part!r} is not a mapping")
    try:
        node[leaf] = load_yaml(text)
    except YAML_ERRORS as error:
        raise ConfigError(
            f"override {item!r}: the value is not valid YAML ({_yaml_problem(error)})"
        ) from None


# Checks the commands' configs share.


def build_rules(preset: str, players: int | None, overrides: dict[str, Any]) -> Rules:
    """``Rules.preset(preset, players, **overrides)``, its errors as ConfigError."""
    for reserved in ("name", "players"):
        if reserved in overrides:
            top = "preset" if reserved == "name" else "players"
            raise ConfigError(f"rules.{reserved}: set it with the top-level key {top!r}, not under rules")
    try:
        return Rules.preset(preset, players, **overrides)
    except (ValueError, TypeError, OverflowError) as error:
        raise ConfigError(one_line(error)) from None


def check_plain_name(key: str, name: str) -> None:
    """Refuse a name that is not one plain file or folder name (it would leave its folder)."""
    if (
        name.strip() in ("", ".", "..")
        or re.search(r"[/\\\x00-\x1f]", name)
        or Path(name).is_absolute()
        or len(name.encode("utf-8", "surrogatepass")) > 255
    ):
        raise ConfigError(
            f"{key} must be a plain folder name (no '/', '\\', '.', '..' or control characters, "
            f"at most 255 bytes), got {_short(name)}"
        )


def check_bot_options(key: str, bot: str, options: dict[str, Any]) -> None:
    """Numbers in bot options are finite; the options in ``BOT_OPTION_LIMITS`` are within range."""
    for option, value in options.items():
        _check_finite(f"{key}.{option}", value)
        if option not in BOT_OPTION_LIMITS.get(bot, {}):
            continue
        kind, low, high = BOT_OPTION_LIMITS[bot][option]
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or (kind is int and not isinstance(value, int)) or not low <= value <= high:
            need = "an integer" if kind is int else "a number"
            raise ConfigError(
                f"{key}.{option} must be {need} at least {low} and at most {high}, got {_short(value)}"
            )


def unknown_key(path: str, key: str, valid: list[str], where: str) -> str:
    """The message for an unknown key: the closest valid one, and all of them."""
    close = difflib.get_close_matches(key, [str(v) for v in valid], n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown key {path!r} in {where}{hint} (valid: {', '.join(map(str, valid))})"


def unknown_name(key: str, name: Any, valid: tuple[str, ...], what: str = "bot") -> str:
    """The message for an unknown bot (or other) name: the closest valid one, and all of them."""
    close = difflib.get_close_matches(str(name), valid, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"{key}: unknown {what} {name!r}{hint} (valid: {', '.join(valid)})"


# pydantic's errors as one line.

_NEEDS = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}
_RANGES = ("greater_than", "greater_than_equal", "less_than", "less_than_equal")


def describe_error(root: type[ConfigModel], error: ValidationError) -> str:
    """One line for the first problem pydantic found (an unknown key first): key path, value, range."""
    problems = error.errors(include_url=False)
    first = next((p for p in problems if p["type"] == "extra_forbidden"), problems[0])
    kind, loc, value, ctx = first["type"], tuple(first["loc"]), first.get("input"), first.get("ctx") or {}
    if kind in ("value_error", "assertion_error"):
        cause = ctx.get("error")
        if isinstance(cause, ConfigError):
            return str(cause)
        return f"{_path(loc) or root.config_name}: {one_line(cause or first['msg'])}"
    if "[key]" in loc:
        where = _path(loc[: loc.index("[key]") - 1]) or root.config_name
        return f"{where} keys must be strings, got {_short(value)}"
    path = _path(loc) or root.config_name
    if kind == "extra_forbidden":
        parent, _ = _field_at(root, loc[:-1])
        valid = list(parent.model_fields) if _is_model(parent) else []
        return unknown_key(path, str(loc[-1]), valid, _path(loc[:-1]) or root.config_name)
    annotation, metadata = _field_at(root, loc)
    allowed = _range_text(metadata)
    if kind in _RANGES:
        return f"{path} must be {allowed or first['msg'].lower()}, got {_short(value)}"
    if kind == "literal_error":
        choices = [str(a) for a in typing.get_args(annotation)]
        close = difflib.get_close_matches(value, choices, n=1) if isinstance(value, str) else []
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return f"{path} must be one of {', '.join(choices)}; got {_short(value)}{hint}"
    if kind in ("too_short", "too_long"):
        bound = "at least" if kind == "too_short" else "at most"
        count = ctx.get("min_length" if kind == "too_short" else "max_length")
        return f"{path} must have {bound} {count} {'entry' if count == 1 else 'entries'}, got {_short(value)}"
    need = _NEEDS.get(kind)
    if _is_model(annotation) and kind in ("model_type", "model_attributes_type", "dict_type"):
        keys = ", ".join(f"{path}.{key}=..." for key in list(annotation.model_fields)[:3])
        return f"{path} is a section, not a value: set its keys ({keys}), got {_short(value)}"
    if need is None:
        return f"{path}: {first['msg'].lower()}, got {_short(value)}"
    return f"{path} must be {need}, got {_short(value)}" + (f" (allowed: {allowed})" if allowed else "")


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        # A key with a newline or other unprintable character is quoted: the message stays one line.
        text = repr(part) if isinstance(part, str) and not part.isprintable() else _safe_str(part)
        out += f"[{text}]" if isinstance(part, int) else (f".{text}" if out else text)
    return out


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseModel)


def _field_at(root: type[BaseModel], loc: tuple[Any, ...]) -> tuple[Any, list[Any]]:
    """The type at ``loc`` below ``root`` and its constraints (``Ge``, ``Le``...)."""
    kind, metadata = _unwrap(root, [])
    for part in loc:
        if _is_model(kind):
            field = kind.model_fields.get(part) if isinstance(part, str) else None
            if field is None:
                return None, []
            kind, metadata = _unwrap(field.annotation, list(field.metadata))
        elif typing.get_origin(kind) in (list, dict):
            kind, metadata = _unwrap(typing.get_args(kind)[-1], [])
        else:
            return None, []
    return kind, metadata


def _unwrap(kind: Any, metadata: list[Any]) -> tuple[Any, list[Any]]:
    """Strip ``Annotated`` (collecting its constraints) and ``X | None``."""
    while True:
        origin = typing.get_origin(kind)
        if origin is Annotated:
            kind, *extra = typing.get_args(kind)
            for item in extra:
                metadata.extend(item.metadata if isinstance(item, FieldInfo) else [item])
        elif origin in (typing.Union, types.UnionType):
            rest = [a for a in typing.get_args(kind) if a is not type(None)]
            if len(rest) != 1:
                return kind, metadata
            kind = rest[0]
        else:
            return kind, metadata


def _range_text(metadata: list[Any]) -> str:
    parts = []
    for item in metadata:
        if isinstance(item, annotated_types.Ge):
            parts.append(f"at least {_number(item.ge)}")
        elif isinstance(item, annotated_types.Gt):
            parts.append(f"greater than {_number(item.gt)}")
    for item in metadata:
        if isinstance(item, annotated_types.Le):
            parts.append(f"at most {_number(item.le)}")
        elif isinstance(item, annotated_types.Lt):
            parts.append(f"less than {_number(item.lt)}")
    return " and ".join(parts)


def _number(value: Any) -> str:
    if isinstance(value, int) and abs(value) >= 10_000:
        return f"{value:_}"  # YAML reads 1_000_000 as a number too
    return f"{value:g}" if isinstance(value, float) else str(value)


def _check_finite(key: str, value: Any) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{key} must be a finite number, got {value}")
    if isinstance(value, list):
        for index, item in enumerate(value):
            _check_finite(f"{key}[{index}]", item)
    elif isinstance(value, dict):
        for name, item in value.items():
            _check_finite(f"{key}.{name}", item)


def _safe_str(value: Any) -> str:
    return str(value) if not isinstance(value, int) or value.bit_length() < 10_000 else _short(value)


def _short(value: Any, limit: int = 80) -> str:
    return brief(value, limit)


def _yaml_problem(error: BaseException) -> str:
    """The problem without the quoted text (a MarkedYAMLError), with its line when it has one."""
    problem = getattr(error, "problem", None)
    mark = getattr(error, "problem_mark", None)
    if problem and mark is not None:
        return f"{one_line(problem)} (line {mark.line + 1}, column {mark.column + 1})"
    return one_line(problem or error)


def one_line(error: Any) -> str:
    """An error's message on one line (a ConfigError is one line of the terminal)."""
    return " ".join(str(error).split())
