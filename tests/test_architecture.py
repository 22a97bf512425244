"""Architecture rules that a test can hold: layers flow one way, no import cycles, and agents,
benchmarks and wrappers use the env's documented accessors rather than its internals.

Layer order (docs/architecture.md): corpus → web → webgen → text → relevance → crawl → features → reducers
→ envs → wrappers → agents → tasks → benchmarks/cli. A module may import its own layer and the layers below it,
never above. Modules outside the layers (``registry``, ``_io``, ``_limits``, ``_console``, ``_moved``,
``tokenize``, the package ``__init__``) are the lowest level: they import nothing of the package but each other.
A lower layer names a loader above it only as a lazy ``"module:attribute"`` registry entry (the corpus registry's
``synthetic`` and ``warc``), which the tests below check resolve; a module that moved keeps its old path only as an
entry of ``gym_crawl._moved.MOVED``, a deprecated alias that draws no arrow.
"""
from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["corpus", "web", "webgen", "text", "relevance", "crawl", "features", "reducers", "envs", "wrappers",
          "agents", "tasks", "benchmarks", "cli"]
BASE = {"registry", "_io", "_limits", "_console", "_moved", "tokenize", "__init__"}
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


# ---------------------------------------------------------------------------------------------- moved modules
# A module that moved keeps its old path only as an entry of gym_crawl._moved.MOVED: no file stays at the old
# path (git follows a rename only when the old file is gone), the alias warns and yields the new module itself,
# and nothing in the repository uses it.

MOVED = importlib.import_module("gym_crawl._moved").MOVED
# strings that must keep an old path: the synthetic generator writes its module's first name into the corpus
# meta, which the pinned corpus digests (tests/test_synthetic.py) cover byte for byte
PINNED_OLD_PATHS = {("gym_crawl/webgen/synthetic.py", "gym_crawl.corpus.synthetic")}
DOTTED = re.compile(r"gym_crawl(?:\.[A-Za-z_]\w*)+")


def _moved_prefix(dotted: str) -> str | None:
    """The old path of :data:`MOVED` that ``dotted`` is or lies inside (``gym_crawl.corpus.warc.load_warc``)."""
    parts = dotted.split(".")
    for i in range(len(parts), 1, -1):
        if ".".join(parts[:i]) in MOVED:
            return ".".join(parts[:i])
    return None


def _file_of(module: str) -> list[Path]:
    """Where a module of ``module``'s dotted name would live (a module file or a package folder)."""
    parts = module.split(".")
    root, rest = (ROOT / "agents", parts[2:]) if parts[:2] == ["gym_crawl", "agents"] else (ROOT / "gym_crawl",
                                                                                            parts[1:])
    return [root.joinpath(*rest).with_suffix(".py"), root.joinpath(*rest, "__init__.py")]


def test_moved_modules_are_listed_once_and_lead_to_a_module():
    assert MOVED, "the table of moved modules is empty"
    for old, new in MOVED.items():
        assert new in MODULES, f"{old} is listed as moved to {new}, which is not a module of the package"
        assert new not in MOVED, f"{old} → {new}, itself an old path"
        left = [str(f.relative_to(ROOT)) for f in _file_of(old) if f.exists()]
        assert not left, f"{old} moved to {new} but a file remains at the old path: {left}"


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_is_a_deprecated_alias_of_the_moved_module(old):
    import sys

    new = MOVED[old]
    try:
        importlib.import_module(new)
    except ImportError as e:  # the RLlib and PyTorch families need their optional extras
        pytest.skip(f"{new} does not import here: {e}")
    for name in [m for m in sys.modules if m == old or m.startswith(old + ".")]:
        if name in MOVED:
            del sys.modules[name]  # the alias only (the module itself stays under its new name)
    with pytest.warns(DeprecationWarning, match=re.escape(f"moved to {new};")) as caught:
        mod = importlib.import_module(old)
    assert mod is importlib.import_module(new)
    mine = [w for w in caught if issubclass(w.category, DeprecationWarning) and old in str(w.message)]
    assert mine and all(Path(w.filename).resolve() == Path(__file__).resolve() for w in mine), \
        f"the warning is not attributed to the importing line: {[(w.filename, w.lineno) for w in mine]}"


def _repo_python_files() -> list[Path]:
    files = [f for folder in ("gym_crawl", "agents", "benchmarks", "tests") for f in (ROOT / folder).rglob("*.py")]
    return sorted(f for f in files if f.name != "_moved.py" and f.resolve() != Path(__file__).resolve())


def test_no_code_or_doc_uses_an_old_path():
    """Imports, lazy ``"module:attribute"`` strings, docstrings and the docs name modules by their new paths
    (``CHANGELOG.md`` keeps the history)."""
    hits = []
    for f in _repo_python_files():
        rel = str(f.relative_to(ROOT))
        tree = ast.parse(f.read_text(), filename=rel)
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names = [m for m in DOTTED.findall(node.value) if (rel, m) not in PINNED_OLD_PATHS]
            hits += [f"{rel}:{getattr(node, 'lineno', '?')}: {n}" for n in names if _moved_prefix(n)]
    docs = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md")),
            *sorted((ROOT / "benchmarks").glob("*.md"))]
    for f in docs:
        for n, line in enumerate(f.read_text().splitlines(), 1):
            hits += [f"{f.relative_to(ROOT)}:{n}: {m}" for m in DOTTED.findall(line) if _moved_prefix(m)]
            hits += [f"{f.relative_to(ROOT)}:{n}: {m}" for m in re.findall(r"(?:gym_crawl|agents)/[\w/]+\.py", line)
                     if _moved_prefix(m[:-3].replace("/", ".").replace("agents.", "gym_crawl.agents.", 1)
                                      if m.startswith("agents/") else m[:-3].replace("/", "."))]
    assert not hits, "old module paths (use the new ones of gym_crawl._moved.MOVED):\n" + "\n".join(hits)


def test_every_move_is_in_the_changelog():
    text = (ROOT / "CHANGELOG.md").read_text()
    missing = [old for old in MOVED if f"`{old}`" not in text]
    assert not missing, f"CHANGELOG.md does not list these moves (old path in backquotes): {missing}"


def _defined_names(path: Path) -> set[str]:
    """Top-level names a module binds: defs, classes, assignments and imports."""
    out: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                out.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
    return out


def test_lazy_registry_entries_name_existing_attributes():
    """Every ``"gym_crawl.<module>:<attribute>"`` string (registry entries, example writers, entry points of the
    corpus kinds, agents, feature sets ...) names a module of the package and an attribute it defines, so a
    lower layer may name a loader above it without importing it."""
    bad = []
    pat = re.compile(r"^(gym_crawl(?:\.\w+)+):(\w+)$")
    for f in _repo_python_files():
        if f.is_relative_to(ROOT / "tests"):
            continue
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and (m := pat.match(node.value)):
                mod, attr = m.groups()
                where = f"{f.relative_to(ROOT)}:{node.lineno}: {node.value}"
                if mod not in MODULES:
                    bad.append(f"{where}: no module {mod}")
                elif attr not in _defined_names(MODULES[mod]):
                    bad.append(f"{where}: {mod} defines no {attr}")
    assert not bad, "lazy entries that do not resolve:\n" + "\n".join(bad)


def test_docs_name_files_that_exist():
    """A source file a doc names in backquotes (``docs/systems.md``'s index of the seed systems, the module map,
    the README) exists, so the docs follow a move."""
    docs = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md")),
            *sorted((ROOT / "benchmarks").glob("*.md"))]
    missing = [f"{f.relative_to(ROOT)}: {m}" for f in docs
               for m in re.findall(r"`((?:gym_crawl|agents|benchmarks|tests)/[\w/]+\.py)", f.read_text())
               if not (ROOT / m).exists()]
    assert not missing, "docs name files that do not exist:\n" + "\n".join(missing)
