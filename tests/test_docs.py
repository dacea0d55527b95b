"""The documentation site (mkdocs.yml, docs/): strict build, runnable examples, complete config reference.

* ``mkdocs build --strict`` passes: no broken link or anchor, no missing page or reference.
* Every example on the site runs. An example is a fenced code block in a Markdown page under
  ``docs/`` whose info string is ``python`` (options such as ``title="..."`` allowed) and does
  not say ``no-run``: a block that must not run is written ```` ```python {.no-run} ````
  (it renders the same). Each runs in a fresh namespace with the repository root as the
  working directory.
* The config reference (docs/training/config.md, generated from the pydantic models by
  docs/gen_config_reference.py) lists exactly the keys of ``TrainConfig`` and ``ArenaConfig``,
  nested sections included.
* Every generated block of a page (``<!-- kind: arg -->`` ... ``<!-- /kind -->``, see
  docs/hooks.py) is committed as the generator writes it now: ``python docs/hooks.py --write``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SITE_PACKAGES = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python", "mkdocs_jupyter")
MISSING = [name for name in SITE_PACKAGES if importlib.util.find_spec(name.split(".")[0]) is None]
needs_mkdocs = pytest.mark.skipif(
    bool(MISSING),
    reason=f"the docs extra is not installed ({', '.join(MISSING)} missing): pip install -e '.[docs]'",
)

FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)\n"  # the opening line
    r"(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",  # the code, up to the same fence
    re.MULTILINE | re.DOTALL,
)
KEY_ANCHOR = re.compile(r'id="(train|arena)\.([\w.]+)"')


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _examples() -> list:
    """The runnable examples; a generated block's code (an inlined docstring's) is no example of
    the page: it is checked by test_generated_blocks_are_fresh."""
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        generated = [block.span() for block in _hooks().blocks(text)]
        for match in FENCE.finditer(text):
            if any(start <= match.start() < end for start, end in generated):
                continue
            info = match["info"].strip()
            language = re.match(r"\{?\s*\.?([\w-]*)", info).group(1)
            if language != "python" or "no-run" in info:
                continue
            line = text.count("\n", 0, match.start()) + 1
            name = f"{page.relative_to(ROOT).as_posix()}:{line}"
            found.append(pytest.param(name, textwrap.dedent(match["body"]), id=name))
    return found


EXAMPLES = _examples()


def _model_keys(model: type[BaseModel], prefix: str = "") -> set[str]:
    """Every key of a config model: its fields, and the fields of nested models, as dotted paths."""
    keys = set()
    for name, field in model.model_fields.items():
        key = prefix + name
        keys.add(key)
        kinds = [field.annotation, *typing.get_args(field.annotation)]
        for kind in kinds:
            if isinstance(kind, type) and issubclass(kind, BaseModel):
                keys |= _model_keys(kind, key + ".")
    return keys


def _documented_keys(text: str) -> dict[str, set[str]]:
    keys: dict[str, set[str]] = {"train": set(), "arena": set()}
    for config, key in KEY_ANCHOR.findall(text):
        keys[config].add(key)
    return keys


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    return out


@needs_mkdocs
def test_site_builds_strict(site: Path) -> None:
    pages = ("index.html", "training/config/index.html", "envs/pettingzoo/index.html", "RULES/index.html")
    for page in pages:
        assert (site / page).is_file(), page
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert (site / "notebooks" / notebook.stem / "index.html").is_file(), notebook.name
    # The built reference page carries the same key anchors as the generated Markdown.
    built = _documented_keys((site / "training/config/index.html").read_text(encoding="utf-8"))
    from agents.arena.config import ArenaConfig
    from agents.training.config import TrainConfig

    assert built == {"train": _model_keys(TrainConfig), "arena": _model_keys(ArenaConfig)}


def test_examples_found() -> None:
    assert len(EXAMPLES) >= 20, [param.id for param in EXAMPLES]


@pytest.mark.parametrize(("name", "source"), EXAMPLES)
def test_example_runs(name: str, source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    code = compile(source, name, "exec")
    exec(code, {"__name__": "__docs_example__"})


@pytest.mark.parametrize("config", ["train", "arena"])
def test_config_reference_lists_every_key(config: str) -> None:
    """A key in the code but not on the page, or on the page but not in the code, fails."""
    from agents.arena.config import ArenaConfig
    from agents.training.config import TrainConfig

    model = {"train": TrainConfig, "arena": ArenaConfig}[config]
    page = _hooks().expand((DOCS / "training" / "config.md").read_text(encoding="utf-8"))
    documented = _documented_keys(page)[config]
    expected = _model_keys(model)
    missing, unknown = sorted(expected - documented), sorted(documented - expected)
    assert not missing, f"keys in the code but not on the config reference: {missing}"
    assert not unknown, f"keys on the config reference but not in the code: {unknown}"


@pytest.mark.parametrize("model_name", ["TrainConfig", "ArenaConfig"])
def test_every_config_key_has_a_description(model_name: str) -> None:
    """The reference's meaning column comes from the attribute docstrings: none may be missing."""
    from agents.arena.config import ArenaConfig
    from agents.training.config import TrainConfig

    def undocumented(model: type[BaseModel], prefix: str = "") -> list[str]:
        missing = []
        for name, field in model.model_fields.items():
            if not (field.description or "").strip():
                missing.append(prefix + name)
            kind = field.annotation
            if isinstance(kind, type) and issubclass(kind, BaseModel):
                missing += undocumented(kind, prefix + name + ".")
        return missing

    model = {"TrainConfig": TrainConfig, "ArenaConfig": ArenaConfig}[model_name]
    assert undocumented(model) == []


def test_generated_keys_match_the_test_walk_on_a_changed_model() -> None:
    """The generator follows nested models: a new field or section shows up on the page."""
    from pydantic import Field

    from agents.configuration import ConfigModel

    class Inner(ConfigModel):
        depth: int = Field(3, ge=1, le=9)
        """How deep."""

    class Outer(ConfigModel):
        width: int = 4
        """How wide."""
        inner: Inner = Field(default_factory=Inner)
        """A section."""

    spec = importlib.util.spec_from_file_location("gen_config_reference", DOCS / "gen_config_reference.py")
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    text = "\n".join(generator._model_tables(Outer, "train", level=3))
    assert _documented_keys(text)["train"] == _model_keys(Outer) == {"width", "inner", "inner.depth"}
    assert "≥ 1 and ≤ 9" in text


def test_generated_blocks_are_fresh() -> None:
    """Each generated block committed in docs/ is what its generator writes now (the built site
    always shows the fresh text): change a config docstring, a YAML config's header comment or a
    preset and this fails until the blocks are regenerated."""
    hooks = _hooks()
    found, stale = [], []
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        name = page.relative_to(ROOT).as_posix()
        found += [(name, block[0].split("\n", 1)[0]) for block in hooks.blocks(text)]
        stale += [f"  {name}: the block {marker}" for marker in hooks.stale(text)]
    assert ("docs/training/config.md", "<!-- config-reference -->") in found, found
    assert not stale, (
        "these generated blocks differ from what the code generates now:\n"
        + "\n".join(stale)
        + f"\nregenerate them with `{hooks.WRITE_COMMAND}` (from the repository root) and commit the pages"
    )


def test_a_generated_block_needs_its_end_marker() -> None:
    """A start marker alone would show nothing on a code host: the build and the test refuse it."""
    with pytest.raises(ValueError, match="no <!-- /preset-table -->"):
        _hooks().expand("# Page\n\n<!-- preset-table: block -->\n\nText.\n")


def test_the_agents_tables_are_generated_from_the_shipped_cards() -> None:
    """The README's and docs/agents.md's tables are the cards of the shipped files: replace a file
    (or its card) and this fails until ``python scripts/model_card.py --write-table .`` is run."""
    from agents.training.model_card import TABLE_PAGES, agents_table, with_table

    table = agents_table()
    assert table.count("\n") == 9  # a header, a rule and one row per preset
    for page in TABLE_PAGES:
        text = (ROOT / page).read_text(encoding="utf-8")
        assert with_table(text, table) == text, f"{page}: stale agents table"
