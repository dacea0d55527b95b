"""The config reference page, generated from the pydantic models themselves.

``docs/training/config.md`` carries ``config_reference()`` between ``<!-- config-reference -->``
and ``<!-- /config-reference -->`` (committed, refreshed by ``python docs/hooks.py --write``, put
fresh in place at every build by ``docs/hooks.py``), so the page lists exactly the keys of
``agents.training.config.TrainConfig`` and ``agents.arena.config.ArenaConfig`` (nested sections
recursively) with their type, default, range (from the fields' ``ge``/``gt``/``le``/``lt``,
length limits and ``Literal`` choices) and meaning (the attribute docstrings, which pydantic
keeps as the fields' descriptions). Every key's table cell carries an anchor
``id="<train|arena>.<key.path>"``; ``tests/test_docs.py`` compares those anchors with the
models' fields.

    python docs/gen_config_reference.py        # print the generated Markdown
"""

from __future__ import annotations

import ast
import inspect
import re
import types
import typing
from typing import Annotated, Any, Literal

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined


def config_reference() -> str:
    """The Markdown of the whole reference: training config, arena config, names, limits."""
    from agents.arena import config as arena_module
    from agents.arena.config import ArenaConfig
    from agents.bots.registry import BOT_NAMES
    from agents.configuration import BOT_OPTION_LIMITS
    from agents.training import config as train_module
    from agents.training.config import PAST, RESUMABLE_CHANGES, SELF, TrainConfig
    from domino_env.engine.rules import PRESET_NAMES, PRESET_PLAYERS

    out: list[str] = []
    out += ["## Training config (`scripts/train.py`)", ""]
    out += [_markdown(_module_doc(train_module)), ""]
    out += _model_tables(TrainConfig, "train", level=3)
    out += [
        "### Keys that may change on `--resume`",
        "",
        "A resumed run refuses a config that differs from its checkpoint's except in these "
        "top-level keys (`agents.training.config.RESUMABLE_CHANGES`): "
        + ", ".join(f"`{key}`" for key in RESUMABLE_CHANGES)
        + ".",
        "",
    ]
    out += ["## Arena config (`scripts/evaluate.py`)", ""]
    out += [_markdown(_module_doc(arena_module)), ""]
    out += _model_tables(ArenaConfig, "arena", level=3)

    out += ["## Names", ""]
    out += ["| where | valid names |", "|---|---|"]
    presets = ", ".join(f"`{name}` ({'/'.join(map(str, PRESET_PLAYERS[name]))}p)" for name in PRESET_NAMES)
    out.append(f"| `preset` | {presets} |")
    bots = ", ".join(f"`{name}`" for name in BOT_NAMES)
    out.append(f"| bots (`eval.opponents`, `policies`, `bots.<name>`) | {bots} |")
    out.append(f"| training `opponents` | `{SELF}`, `{PAST}` and the bots |")
    out.append("| arena `policies` | the bots, or a checkpoint path (`checkpoints/block-2p-ppo.pt`) |")
    out += ["", "## Bot options with a range", ""]
    out += [
        "Options under `bots.<name>` (and `distill.teacher`, the options of `pimc`) go to the bot's "
        "constructor, which refuses unknown ones; these are range-checked when the config is read "
        "(`agents.configuration.BOT_OPTION_LIMITS`):",
        "",
        "| bot | option | type | range |",
        "|---|---|---|---|",
    ]
    for bot, options in BOT_OPTION_LIMITS.items():
        for option, (kind, low, high) in options.items():
            out.append(f"| `{bot}` | `{option}` | {kind.__name__} | {_num(low)} to {_num(high)} |")
    out.append("")
    return "\n".join(out)


def _model_tables(model: type[BaseModel], prefix: str, level: int, path: str = "") -> list[str]:
    """One table per model (the top level first), then the nested sections, depth first."""
    title = f"`{path}`: {_first_line(model)}" if path else "Top-level keys"
    anchor = f"{prefix}-{path}" if path else f"{prefix}-top-level"
    out = ["#" * level + f" {title} {{ #{anchor} }}", ""]
    if path:
        out += [_markdown(_rest_of_doc(model)), ""] if _rest_of_doc(model) else []
    out += ["| key | type | default | range | meaning |", "|---|---|---|---|---|"]
    nested = []
    for name, field in model.model_fields.items():
        key = f"{path}.{name}" if path else name
        kind = _strip_optional(field.annotation)[0]
        cell = f'<span id="{prefix}.{key}"></span>`{key}`'
        if _is_model(kind):
            nested.append((key, kind))
            see = f"(see [`{key}`](#{prefix}-{key}))"
            out.append(f"| {cell} | section | | | {_cell(field.description)} {see} |")
            continue
        out.append(
            f"| {cell} | {_type_text(field.annotation)} | {_default(field)} | {_range(field)} "
            f"| {_cell(field.description)} |"
        )
    out.append("")
    for key, kind in nested:
        out += _model_tables(kind, prefix, level + 1 if not path else level, key)
    return out


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseModel)


def _strip_optional(kind: Any) -> tuple[Any, bool]:
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        rest = [a for a in typing.get_args(kind) if a is not type(None)]
        if len(rest) == 1:
            return rest[0], True
    return kind, False


def _unannotate(kind: Any) -> tuple[Any, list[Any]]:
    """The bare type and the constraints of an ``Annotated[...]`` (``Width``, ``Share``)."""
    metadata: list[Any] = []
    while typing.get_origin(kind) is Annotated:
        kind, *extra = typing.get_args(kind)
        for item in extra:
            metadata.extend(item.metadata if isinstance(item, FieldInfo) else [item])
    return kind, metadata


def _type_text(annotation: Any) -> str:
    kind, optional = _strip_optional(annotation)
    kind, _ = _unannotate(kind)
    origin = typing.get_origin(kind)
    if origin is Literal:
        text = "string"
    elif origin is list:
        text = f"list of {_type_text(typing.get_args(kind)[0])}"
    elif origin is dict:
        value = typing.get_args(kind)[1]
        text = "mapping" if value is Any else f"mapping of name to {_type_text(value)}"
    elif kind is float:
        text = "number"
    elif kind is Any:
        text = "any"
    else:
        text = {int: "int", str: "string", bool: "bool"}.get(kind, getattr(kind, "__name__", str(kind)))
    return f"{text} or null" if optional else text


def _range(field: FieldInfo) -> str:
    kind = _strip_optional(field.annotation)[0]
    parts = _bounds(field.metadata)
    sizes = (annotated_types.MinLen, annotated_types.MaxLen)
    lengths = [item for item in field.metadata if isinstance(item, sizes)]
    if lengths:
        low = next((i.min_length for i in lengths if isinstance(i, annotated_types.MinLen)), 0)
        high = next((i.max_length for i in lengths if isinstance(i, annotated_types.MaxLen)), None)
        parts.append(f"{low} to {high} entries" if high is not None else f"at least {low} entries")
    bare, _ = _unannotate(kind)
    origin = typing.get_origin(bare)
    if origin is Literal:
        parts.append(" or ".join(f"`{choice}`" for choice in typing.get_args(bare)))
    elif origin in (list, dict):
        inner = _bounds(_unannotate(typing.get_args(bare)[-1])[1])
        if inner:
            parts.append("each " + " and ".join(inner))
    return ", ".join(parts)


def _bounds(metadata: list[Any]) -> list[str]:
    low = high = ""
    for item in metadata:
        if isinstance(item, annotated_types.Ge):
            low = f"≥ {_num(item.ge)}"
        elif isinstance(item, annotated_types.Gt):
            low = f"> {_num(item.gt)}"
        elif isinstance(item, annotated_types.Le):
            high = f"≤ {_num(item.le)}"
        elif isinstance(item, annotated_types.Lt):
            high = f"< {_num(item.lt)}"
    return [" and ".join(part for part in (low, high) if part)] if low or high else []


def _num(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int) and abs(value) >= 10_000:
        exponent = value.bit_length() - 1
        if value == 2**exponent:
            return f"2^{exponent}"
        if value == 2**exponent * 2 - 1:
            return f"2^{exponent + 1} − 1"
        return f"{value:,}"
    if isinstance(value, float):
        return _num(int(value)) if value.is_integer() and abs(value) >= 10_000 else f"{value:g}"
    return str(value)


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        value = field.default_factory()
    elif field.default is PydanticUndefined:
        return "required"
    else:
        value = field.default
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`' if value == "" else f"`{value}`"
    if isinstance(value, dict) and not value:
        return "`{}`"
    if isinstance(value, dict):
        return "`{" + ", ".join(f"{k}: {_num(v)}" for k, v in value.items()) + "}`"
    if isinstance(value, list):
        return "`[" + ", ".join(_num(v) for v in value) + "]`"
    return f"`{value:g}`" if isinstance(value, float) else f"`{value}`"


def _cell(text: str | None) -> str:
    return _markdown(" ".join((text or "").split())).replace("|", "\\|")


def _markdown(text: str) -> str:
    """Docstring text (reST-flavoured: ````code````) as Markdown; ``::`` literal blocks stay indented."""
    text = re.sub(r"``([^`]+)``", r"`\1`", text)
    return re.sub(r"::\n", ":\n", text)


def _first_line(model: type[BaseModel]) -> str:
    line = (inspect.getdoc(model) or "").split("\n\n")[0].rstrip(".")
    return _markdown(re.sub(r"\s*\(``[\w.]+``[^)]*\)$", "", line))


def _rest_of_doc(model: type[BaseModel]) -> str:
    parts = (inspect.getdoc(model) or "").split("\n\n", 1)
    return parts[1] if len(parts) > 1 else ""


def _module_doc(module: types.ModuleType) -> str:
    doc = ast.get_docstring(ast.parse(inspect.getsource(module))) or ""
    return doc.split("\n\n", 1)[1] if "\n\n" in doc else ""


if __name__ == "__main__":
    print(config_reference())
