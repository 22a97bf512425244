"""Architecture rules that a test can hold: layers flow one way, no import cycles, and agents,
benchmarks and wrappers use the env's documented accessors rather than its internals.

Layer order (docs/architecture.md): corpus → text → relevance → crawl → features → reducers → envs → wrappers
→ agents → tasks → benchmarks/cli. A module may import its own layer and the layers below it, never above.
Modules outside the layers (``registry``, ``_io``, ``_limits``, ``_arith``, ``_svd``, ``tokenize``, the package
``__init__``) are the lowest level: they import nothing of the package but each other.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["corpus", "text", "relevance", "crawl", "features", "reducers", "envs", "wrappers", "agents", "tasks",
          "benchmarks", "cli"]
BASE = {"registry", "_io", "_limits", "_arith", "_svd", "tokenize", "__init__"}
# folders installed under the package namespace (pyproject package-dir)
SOURCE_DIRS = {"gym_crawl": ROOT / "gym_crawl", "gym_crawl.agents": ROOT / "agents",
               "gym_crawl.benchmarks": ROOT / "benchmarks"}


def _modules() -> dict[str, Path]:
    out = {}
    for pkg, folder in SOURCE_DIRS.items():
        for f in folder.rglob("*.py"):
            rel = f.relative_to(folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([pkg, *parts])
            if pkg == "gym_crawl" and parts and parts[0] in ("agents", "benchmarks"):
                continue
            out[name] = f
    return out


MODULES = _modules()


def _layer(module: str) -> int | None:
    """Layer index of a gym_crawl module, None for the base modules (the lowest level)."""
    parts = module.split(".")
    if len(parts) == 1:
        return None  # the package __init__
    head = "cli" if parts[1] == "__main__" else parts[1]  # `python -m gym_crawl` is the CLI
    if head in BASE:
        return None
    return LAYERS.index(head)


def _imports(module: str, path: Path, *, top_level_only: bool) -> set[str]:
    """gym_crawl modules imported by ``module`` (``top_level_only``: not inside functions — lazy
    imports inside functions do not create import-time cycles)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    pkg = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()

    def visit(node: ast.AST, in_func: bool) -> None:
        for child in ast.iter_child_nodes(node):
            f = in_func or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.If) and isinstance(child.test, ast.Name) and child.test.id == "TYPE_CHECKING":
                continue
            if isinstance(child, ast.Import) and not (top_level_only and in_func):
                found.update(a.name for a in child.names if a.name.startswith("gym_crawl"))
            elif isinstance(child, ast.ImportFrom) and not (top_level_only and in_func):
                base = child.module or ""
                if child.level:
                    up = pkg.split(".")
                    up = up[: len(up) - (child.level - 1)]
                    base = ".".join(up + ([base] if base else []))
                if base.startswith("gym_crawl"):
                    for a in child.names:
                        full = f"{base}.{a.name}"
                        found.add(full if full in MODULES else base)
            visit(child, f)

    visit(tree, False)
    return {m for m in found if m != module}


def test_every_module_is_found():
    assert "gym_crawl.envs.wiki_crawl" in MODULES and "gym_crawl.agents.base" in MODULES
    assert "gym_crawl.benchmarks.sb3" in MODULES and len(MODULES) > 40


@pytest.mark.parametrize("module", sorted(m for m in MODULES if not m.startswith(("gym_crawl.agents",
                                                                                  "gym_crawl.benchmarks"))))
def test_no_import_from_a_higher_layer(module):
    me = _layer(module)
    bad = []
    for imp in _imports(module, MODULES[module], top_level_only=False):
        if imp in ("gym_crawl",):
            continue
        them = _layer(imp)
        if them is None:
            continue
        if me is None or them > me:
            bad.append(imp)
    assert not bad, f"{module} (layer {LAYERS[me] if me is not None else 'base'}) imports higher layers: {bad}"


def test_no_import_cycles():
    """No cycle, counting lazy (function-level) imports too: a cycle hidden in a function is still one
    of design (corpus.core <-> corpus.builder, wrappers.discrete <-> wrappers.continuous were)."""
    graph = {m: {i for i in _imports(m, p, top_level_only=False) if i in MODULES} for m, p in MODULES.items()}
    cycles = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(u: str) -> None:
        state[u] = 1
        stack.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == 1:
                cycles.append(stack[stack.index(v):] + [v])
            elif v not in state:
                dfs(v)
        stack.pop()
        state[u] = 2

    for m in sorted(graph):
        if m not in state:
            dfs(m)
    # a package __init__ importing its own submodules is not a cycle of design
    real = [c for c in cycles if not any(a.startswith(b + ".") or b.startswith(a + ".") for a, b in zip(c, c[1:]))]
    assert not real, f"import cycles: {real}"


# The env's internals that agents, benchmarks and wrappers must not touch (they use the documented
# accessors of WikiCrawlEnv instead: frontier_pages, features_of, fetched_text, feature_dim, …).
INTERNAL = re.compile(r"\b(env|base|self\.env|crawl_env_of\([^)]*\))\s*\.\s*(state|corpus|text|features|scheme|scorer|"
                      r"reducer|_[a-z]\w*)\b|\.unwrapped\._[a-z]|\bstep_page\(")


@pytest.mark.parametrize("folder", ["agents", "benchmarks", "gym_crawl/wrappers", "gym_crawl/cli.py"])
def test_no_side_doors_into_the_env(folder):
    target = ROOT / folder
    files = [target] if target.is_file() else sorted(target.rglob("*.py"))
    hits = []
    for f in files:
        for n, line in enumerate(f.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if INTERNAL.search(code):
                hits.append(f"{f.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not hits, "reads env internals instead of the documented accessors:\n" + "\n".join(hits)
