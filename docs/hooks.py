"""MkDocs hooks of the documentation site (``hooks:`` in mkdocs.yml).

* The notebooks stay in ``notebooks/`` (where the tests run them); each becomes the page
  ``notebooks/<name>.ipynb`` of the site, rendered by mkdocs-jupyter without executing it.
* ``<!-- config-reference -->`` in a page becomes the config reference generated from the
  pydantic models (``docs/gen_config_reference.py``).
* ``<!-- docstring: package.module -->`` becomes that module's docstring, read from its source
  file (the PettingZoo env's docstring is its environment page).
* ``<!-- config-files: train -->`` (or ``arena``) becomes the list of the YAML configs in
  ``configs/`` with the comment each opens with.
* ``<!-- preset-table: name -->`` becomes the table of every ``Rules`` field of that preset,
  per allowed player count, built by ``Rules.preset`` itself.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from itertools import pairwise
from pathlib import Path

try:
    from mkdocs.plugins import event_priority
except ImportError:  # tests/test_docs.py uses expand() where MkDocs is not installed

    def event_priority(priority):
        return lambda function: function


DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
NOTEBOOKS = ROOT / "notebooks"
# Each marker stands alone on its line (a marker quoted in running text is left alone).
DOCSTRING = re.compile(r"^<!-- docstring: ([\w.]+) -->$", re.MULTILINE)
PRESET_TABLE = re.compile(r"^<!-- preset-table: (\w+) -->$", re.MULTILINE)
CONFIG_FILES = re.compile(r"^<!-- config-files: (train|arena) -->$", re.MULTILINE)


def _generator():
    spec = importlib.util.spec_from_file_location("gen_config_reference", DOCS / "gen_config_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def module_docstring(name: str) -> str:
    """The docstring of ``package.module``, from its source file (nothing is imported)."""
    path = ROOT.joinpath(*name.split(".")).with_suffix(".py")
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def preset_table(name: str) -> str:
    """Every ``Rules`` field of a preset (one column per allowed player count) and its meaning."""
    import dataclasses
    import inspect

    from domino_env.engine.rules import PRESET_PLAYERS, Rules

    counts = PRESET_PLAYERS[name]
    presets = [Rules.preset(name, players) for players in counts]
    docs = _field_docs(inspect.getsource(Rules))
    rows = ["| field | " + " | ".join(f"{p} players" for p in counts) + " | meaning |"]
    rows.append("|---" * (len(counts) + 2) + "|")
    for field in dataclasses.fields(Rules):
        if field.name == "name":
            continue
        values = " | ".join(f"`{_value(getattr(rules, field.name))}`" for rules in presets)
        meaning = re.sub(r"``([^`]+)``", r"`\1`", " ".join(docs.get(field.name, "").split()))
        meaning = meaning.replace("|", "\\|")
        rows.append(f"| `{field.name}` | {values} | {meaning} |")
    return "\n".join(rows)


def _value(value) -> str:
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def _field_docs(source: str) -> dict[str, str]:
    """Attribute docstrings of a class body: ``name: type`` followed by a string."""
    body = ast.parse(source).body[0].body
    return {
        node.target.id: ast.literal_eval(following.value)
        for node, following in pairwise(body)
        if isinstance(node, ast.AnnAssign)
        and isinstance(following, ast.Expr)
        and isinstance(following.value, ast.Constant)
    }


def config_files(kind: str) -> str:
    """The training (or arena) configs in configs/, each with the first sentences of its header comment."""
    rows = ["| config | what it runs |", "|---|---|"]
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        if path.name.startswith("arena") != (kind == "arena"):
            continue
        comment = []
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.startswith("#"):
                break
            text = line.lstrip("#").strip()
            if text.startswith(("python ", "tensorboard ")):
                break
            comment.append(text)
        about = " ".join(comment).replace("|", "\\|")
        rows.append(f"| `configs/{path.name}` | {about} |")
    return "\n".join(rows)


def expand(markdown: str) -> str:
    """A page's Markdown with the generated parts in place."""
    generator = _generator()
    marker = re.compile(f"^{re.escape(generator.MARKER)}$", re.MULTILINE)
    if marker.search(markdown):
        markdown = marker.sub(lambda _: generator.config_reference(), markdown)
    markdown = CONFIG_FILES.sub(lambda match: config_files(match.group(1)), markdown)
    markdown = PRESET_TABLE.sub(lambda match: preset_table(match.group(1)), markdown)
    return DOCSTRING.sub(lambda match: module_docstring(match.group(1)), markdown)


@event_priority(100)  # before mkdocs-jupyter looks for notebooks among the files
def on_files(files, config):
    from mkdocs.structure.files import File

    for notebook in sorted(NOTEBOOKS.glob("*.ipynb")):
        # A plain File whose source folder is the repository root (mkdocs-jupyter wraps it).
        path = notebook.relative_to(ROOT).as_posix()
        files.append(File(path, str(ROOT), config.site_dir, config.use_directory_urls))
    return files


def on_page_markdown(markdown, page, config, files):
    return expand(markdown)
