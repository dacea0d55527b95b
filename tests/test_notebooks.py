"""Every notebook in notebooks/ runs top to bottom (small budget) and is stored clean."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
OUR_PACKAGES = ("domino_env", "agents")


def _code_cells(nb) -> list:
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def _private_imports(source: str) -> list[str]:
    """Underscore names imported from domino_env/agents (modules or names) in one cell."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in OUR_PACKAGES:
            parts = node.module.split(".") + [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            parts = [
                p
                for alias in node.names
                if alias.name.split(".")[0] in OUR_PACKAGES
                for p in alias.name.split(".")
            ]
        else:
            continue
        found += [p for p in parts if p.startswith("_")]
    return found


def test_there_are_notebooks():
    assert NOTEBOOKS, f"no notebooks in {NOTEBOOKS_DIR}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_stored_without_outputs(path: Path):
    nb = nbformat.read(path, as_version=4)
    for index, cell in enumerate(_code_cells(nb)):
        assert cell.outputs == [], f"{path.name} code cell {index} has stored outputs"
        assert cell.execution_count is None, f"{path.name} code cell {index} has an execution count"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_uses_only_public_names(path: Path):
    nb = nbformat.read(path, as_version=4)
    for index, cell in enumerate(_code_cells(nb)):
        private = _private_imports(cell.source)
        assert not private, f"{path.name} code cell {index} imports private names {private}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_top_to_bottom(path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    # The kernel inherits this process's environment: the notebooks shrink their game counts.
    # It starts in an empty folder: a notebook must not depend on the repository's layout.
    monkeypatch.setitem(os.environ, "DOMINO_NOTEBOOK_BUDGET", "small")
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's inline backend shows the figures
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # raises CellExecutionError naming the failing cell
    cells = _code_cells(nb)
    assert cells, f"{path.name} has no code cells"
    budget = "".join(out.get("text", "") for out in cells[0].outputs)
    assert "budget: small" in budget, f"{path.name}: first cell did not read DOMINO_NOTEBOOK_BUDGET"
    assert cells[-1].outputs, f"{path.name}: the last code cell produced no output"
    images = [out for cell in cells for out in cell.outputs if "image/png" in out.get("data", {})]
    assert images, f"{path.name}: no cell showed a picture"
    errors = [out for cell in cells for out in cell.outputs if out.output_type == "error"]
    assert not errors
