"""The package layout: no import circles, and the environments stand without the agents.

Every module under ``domino_env/`` and ``agents/`` is parsed with ``ast`` and every import of a
project module counts, wherever it is written: a function-level import that only postpones a
circle to call time is still a circle (the modules still cannot be understood, tested or moved
apart). A package's ``__init__`` running before its submodules is Python's doing, not an import
someone wrote, so it is not an edge.

``domino_env`` is the environment package: it installs and imports with numpy, numba,
gymnasium and pettingzoo, so it never imports ``agents`` (the bots, arena, training and web
table build on it, not the other way round).

A training run is read phase by phase (``agents/training/train.py``): no function under
``agents/training/`` is longer than ``LONGEST_TRAINING_FUNCTION`` lines.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("domino_env", "agents")
LONGEST_TRAINING_FUNCTION = 60
"""Most lines of a function (its ``def`` to its last line) under ``agents/training/``."""


def module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the project's packages."""
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def imported_names(module: str, path: Path) -> Iterator[tuple[str, int]]:
    """(dotted name, line) of everything ``path`` imports, at any depth of the file; a ``from x import y``
    gives ``x.y`` (a submodule, or a name in ``x``), relative imports resolved against ``module``."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                yield f"{base}.{alias.name}", node.lineno


def project_target(name: str, modules: dict[str, Path]) -> str | None:
    """The project module an imported name lives in (its longest prefix that is one), or None."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


def import_graph() -> dict[str, dict[str, int]]:
    """Module -> {imported project module: line of the first such import}."""
    modules = module_files()
    graph: dict[str, dict[str, int]] = {name: {} for name in modules}
    for module, path in modules.items():
        for name, line in imported_names(module, path):
            target = project_target(name, modules)
            if target is not None and target != module:
                graph[module].setdefault(target, line)
    return graph


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively (no recursion limit to meet)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(graph[target])))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def cycle_through(start: str, members: set[str], graph: dict[str, dict[str, int]]) -> list[str]:
    """A shortest import circle from ``start`` back to it inside one component (breadth first)."""
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in graph[node]:
                if target not in members:
                    continue
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if target not in came_from:
                    came_from[target] = node
                    following.append(target)
        frontier = following
    return [start]


def describe(cycle: list[str], graph: dict[str, dict[str, int]]) -> str:
    return " -> ".join(
        f"{a} (line {graph[a][b]})" if b else a for a, b in zip(cycle, [*cycle[1:], None], strict=True)
    )


def test_the_graph_sees_function_level_and_relative_imports(tmp_path: Path) -> None:
    """The parser the layout tests rely on finds imports inside functions and resolves relative ones."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from . import a\n")
    (package / "a.py").write_text("def f():\n    from pkg.b import g\n    return g\n")
    names = dict(imported_names("pkg.a", package / "a.py"))
    assert names == {"pkg.b.g": 2}
    assert dict(imported_names("pkg", package / "__init__.py")) == {"pkg.a": 1}
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}, "d": {"a": 4}}
    assert [sorted(c) for c in strongly_connected(graph) if len(c) > 1] == [["a", "b", "c"]]
    assert cycle_through("a", {"a", "b", "c"}, graph) == ["a", "b", "c", "a"]


def test_no_import_circles() -> None:
    graph = import_graph()
    circles = [component for component in strongly_connected(graph) if len(component) > 1]
    described = [
        f"{', '.join(c)}; for one: {describe(cycle_through(c[0], set(c), graph), graph)}" for c in circles
    ]
    assert not circles, "modules that import each other in a circle:\n" + "\n".join(described)


def test_domino_env_never_imports_agents() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for module, path in module_files().items()
        if module.split(".")[0] == "domino_env"
        for name, line in imported_names(module, path)
        if name.split(".")[0] == "agents"
    ]
    assert not offenders, "the environments must not depend on the agents:\n" + "\n".join(offenders)


def test_no_training_function_is_longer_than_the_limit() -> None:
    too_long = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {node.end_lineno - node.lineno + 1} lines"
        for path in sorted((ROOT / "agents" / "training").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > LONGEST_TRAINING_FUNCTION
    ]
    assert not too_long, f"functions over {LONGEST_TRAINING_FUNCTION} lines:\n" + "\n".join(too_long)


BLOCK_AGENTS = """
import importlib.abc
import sys


class NoAgents(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "agents" or name.startswith("agents."):
            raise ImportError(f"domino_env imported {name}")
        return None


sys.meta_path.insert(0, NoAgents())
"""

USE_THE_ENVS = """
import gymnasium
import numpy as np

import domino_env
import domino_env.__main__
from domino_env import DominoVectorEnv, Rules, SelfPlay, env, parallel_env, random_policy

solo = gymnasium.make("domino_rl/Block-v0")
obs, info = solo.reset(seed=0)
done = False
while not done:
    obs, reward, terminated, truncated, info = solo.step(int(np.flatnonzero(info["action_mask"])[0]))
    done = terminated or truncated

table = env(preset="draw", players=2)
table.reset(seed=1)
for agent in table.agent_iter():
    observation, reward, termination, truncation, info = table.last()
    done = termination or truncation
    table.step(None if done else table.action_space(agent).sample(observation["action_mask"]))

parallel_env(preset="block", players=4).reset(seed=2)
DominoVectorEnv(num_envs=4, preset="block").reset(seed=3)
SelfPlay(Rules.preset("block", 2), num_games=4, seed=4)
assert not [name for name in sys.modules if name == "agents" or name.startswith("agents.")]
print("ok")
"""


def test_domino_env_works_where_agents_cannot_be_imported() -> None:
    """``import domino_env``, its command line and the environments, with ``import agents`` failing."""
    code = textwrap.dedent(BLOCK_AGENTS) + textwrap.dedent(USE_THE_ENVS)
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.strip().endswith("ok")
