"""MkDocs hooks of the documentation site (``hooks:`` in mkdocs.yml), and the command that
regenerates the generated parts of the pages.

* The notebooks stay in ``notebooks/`` (where the tests run them); each becomes the page
  ``notebooks/<name>.ipynb`` of the site, rendered by mkdocs-jupyter without executing it.
* A generated part of a page is a block between a start and an end marker, each alone on its
  line, with the generated Markdown committed in between (so the page reads the same on a code
  host as on the site):

  * ``<!-- config-reference -->`` ... ``<!-- /config-reference -->``: the config reference
    generated from the pydantic models (``docs/gen_config_reference.py``).
  * ``<!-- config-files: train -->`` (or ``arena``, ``rllib``) ... ``<!-- /config-files -->``: the
    YAML configs in ``configs/<kind>/``, each by name, with the comment each opens with.
  * ``<!-- preset-table: name -->`` ... ``<!-- /preset-table -->``: every ``Rules`` field of
    that preset, per allowed player count, built by ``Rules.preset`` itself.
  * ``<!-- docstring: package.module -->`` ... ``<!-- /docstring -->``: that module's
    docstring, read from its source file (the PettingZoo env's docstring is its page).

  The build puts freshly generated text in place of each block (markers dropped), so
  ``mkdocs serve`` follows the code; ``tests/test_docs.py`` fails while a committed block
  differs from it. Regenerate the committed blocks with::

      python docs/hooks.py --write     # without --write: list the stale blocks, exit 1 if any
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import re
import sys
from collections.abc import Callable
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
WRITE_COMMAND = "python docs/hooks.py --write"


def config_reference(_: str) -> str:
    """The config reference, from ``docs/gen_config_reference.py`` (loaded by path: docs/ is no package)."""
    spec = importlib.util.spec_from_file_location("gen_config_reference", DOCS / "gen_config_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.config_reference()


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
    """The configs of one kind (``train``, ``arena``, ``rllib``: the folder configs/<kind>/), each with
    the first sentences of its header comment."""
    folder = ROOT / "configs" / kind
    if not folder.is_dir():
        raise ValueError(f"config-files: no folder configs/{kind}/")
    rows = ["| config | what it runs |", "|---|---|"]
    for path in sorted(folder.glob("*.yaml")):
        comment = []
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.startswith("#"):
                break
            text = line.lstrip("#").strip()
            if text.startswith(("python ", "tensorboard ")):
                break
            comment.append(text)
        about = " ".join(comment).replace("|", "\\|")
        rows.append(f"| `{path.stem}` (`configs/{kind}/{path.name}`) | {about} |")
    return "\n".join(rows)


SECTIONS: dict[str, Callable[[str], str]] = {
    "config-reference": config_reference,
    "config-files": config_files,
    "preset-table": preset_table,
    "docstring": module_docstring,
}
"""Each kind of generated block and the function that writes its Markdown from its argument."""
_KINDS = "|".join(map(re.escape, SECTIONS))
START = re.compile(rf"^<!-- (?P<kind>{_KINDS})(?:: (?P<arg>[\w.]+))? -->$", re.MULTILINE)
BLOCK = re.compile(rf"{START.pattern}\n.*?^<!-- /(?P=kind) -->$", re.MULTILINE | re.DOTALL)


def blocks(markdown: str) -> list[re.Match[str]]:
    """The generated blocks of a page; a start marker without its end marker is a ValueError
    (the block would silently show nothing)."""
    unclosed = START.search(BLOCK.sub("", markdown))
    if unclosed:
        raise ValueError(f"{unclosed[0]} has no <!-- /{unclosed['kind']} --> after it")
    return list(BLOCK.finditer(markdown))


def generated(match: re.Match[str]) -> str:
    """The Markdown a block stands for, generated now."""
    return SECTIONS[match["kind"]](match["arg"] or "").strip()


def block(match: re.Match[str]) -> str:
    """The block as it should be committed: its markers around the generated Markdown, which
    ``ruff format`` (it formats Python fences in Markdown) must leave as generated."""
    start = match[0].split("\n", 1)[0]
    return f"{start}\n<!-- fmt: off -->\n\n{generated(match)}\n\n<!-- fmt: on -->\n<!-- /{match['kind']} -->"


def stale(markdown: str) -> list[str]:
    """The start markers of the blocks whose committed text differs from the generated one."""
    return [match[0].split("\n", 1)[0] for match in blocks(markdown) if match[0] != block(match)]


def refresh(markdown: str) -> str:
    """A page's Markdown with every block regenerated (what ``--write`` writes)."""
    blocks(markdown)
    return BLOCK.sub(block, markdown)


def expand(markdown: str) -> str:
    """A page's Markdown as the site shows it: each block replaced by its Markdown generated now, so
    the built page is the committed text when that is fresh."""
    blocks(markdown)
    return BLOCK.sub(generated, markdown)


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


def main(argv: list[str] | None = None) -> int:
    """List the stale blocks of docs/**/*.md (exit status 1 if any), or with --write regenerate them."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--write", action="store_true", help="regenerate the stale blocks in place")
    args = parser.parse_args(argv)
    found = 0
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        markers = stale(text)
        for marker in markers:
            print(
                f"{page.relative_to(ROOT).as_posix()}: {marker} {'regenerated' if args.write else 'is stale'}"
            )
        if args.write and markers:
            page.write_text(refresh(text), encoding="utf-8")
        found += len(markers)
    if args.write or not found:
        return 0
    print(f"refresh them with: {WRITE_COMMAND}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
