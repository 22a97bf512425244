"""Architecture rules that a test can hold: layers flow one way, no import cycles, and agents,
benchmarks and wrappers use the env's documented accessors rather than its internals.

Layer order (docs/architecture.md): corpus → web → webgen → text → relevance → crawl → features → reducers
→ envs → wrappers → agents → tasks → benchmarks/cli. A module may import its own layer and the layers below it,
never above. Modules outside the layers (``registry``, ``_io``, ``_limits``, ``_console``, ``_moved``, ``_arith``,
``_svd``, ``_memory``, ``tokenize``, ``pagemap``, the package ``__init__``) are the lowest level: they import nothing
of the package but each other. A lower layer names a loader above it only as a lazy ``"module:attribute"`` registry
entry (the corpus registry's ``synthetic`` and ``warc``), which the tests below check resolve; a module that
moved keeps its old path only as an entry of ``gym_crawl._moved.MOVED``, a deprecated alias that draws no arrow.
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
BASE = {"registry", "_io", "_limits", "_console", "_moved", "_numba_ir", "_numba_blas", "_arith", "_svd", "_memory",
        "tokenize", "pagemap", "__init__"}
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


@pytest.mark.parametrize("folder", ["agents", "benchmarks", "gym_crawl/wrappers", "gym_crawl/cli"])
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


# ------------------------------------------------------------------------------------------ private names
# A name that starts with one underscore is private to the module that defines it (a private module, to its
# package). No module of the package imports another module's private name, imports a private module of a
# package it is not inside, or reads ``obj._attr`` where no class or function of its own module defines
# ``_attr``. What one module needs of another is public, with a docstring.

#: private names of other libraries' base classes that a subclass of the package calls by design, and why
FOREIGN_HOOKS = {
    "_update_features_extractor": "Stable-Baselines3's BasePolicy: the extractor arguments a make_q_net override needs",
    "_dns_host": "urllib3's HTTPConnection: the host name to resolve (trailing dot kept) that a _new_conn override "
                 "connects to",
}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _own_private_names(tree: ast.AST) -> set[str]:
    """The private names a module defines: its functions, classes and globals, the methods and class attributes
    of its classes, the attributes its code assigns (``self._x = ``, ``obj._x = ``) and its ``__slots__``."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            out.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__slots__"
                                                  for t in node.targets):
            out.update(c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant)
                       and isinstance(c.value, str))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)):
            out.add(str(node.args[1].value))
    return {n for n in out if _private(n)}


def _outside_modules(tree: ast.AST, depth: int = 1) -> set[str]:
    """Local names bound to modules outside the package (``import torch``, ``import sys as s``, or ``torch``
    imported from a module of the package that imports it so): their private names are theirs
    (``torch._foreach_mul_``), not a boundary of this package."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update((a.asname or a.name.split(".")[0]) for a in node.names if not a.name.startswith("gym_crawl"))
        elif isinstance(node, ast.ImportFrom) and depth and (node.module or "") in MODULES:
            theirs = _outside_modules(ast.parse(MODULES[node.module].read_text()), depth - 1)
            out.update((a.asname or a.name) for a in node.names if a.name in theirs)
    return out


def private_crossings(module: str, source: str) -> list[str]:
    """Where ``module`` (its ``source``) uses a private name of another module of the package."""
    tree = ast.parse(source)
    pkg = module if module in _PACKAGES else module.rsplit(".", 1)[0]
    mine, outside = _own_private_names(tree), _outside_modules(tree)
    out = []

    def private_module(path: str) -> str | None:
        """The first private module on ``path`` whose package ``module`` is not inside."""
        parts = path.split(".")
        for i, p in enumerate(parts):
            if _private(p) and not (module + ".").startswith(".".join(parts[:i]) + "."):
                return ".".join(parts[: i + 1])
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = pkg.split(".")
                base = ".".join(up[: len(up) - (node.level - 1)] + ([base] if base else []))
            if not base.startswith("gym_crawl"):
                continue
            for a in node.names:
                full = f"{base}.{a.name}"
                if (bad := private_module(full if full in MODULES or full in _PACKAGES else base)) is not None:
                    out.append(f"{node.lineno}: imports {full} (private module {bad})")
                elif _private(a.name) and full not in MODULES and base != module:
                    out.append(f"{node.lineno}: imports {base}.{a.name}")
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("gym_crawl") and (bad := private_module(a.name)) is not None:
                    out.append(f"{node.lineno}: imports {a.name} (private module {bad})")
        elif isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in mine:
            if (isinstance(node.value, ast.Name) and node.value.id in outside) or node.attr in FOREIGN_HOOKS:
                continue
            out.append(f"{node.lineno}: {ast.unparse(node)}")
    return out


_PACKAGES = {m for m, p in MODULES.items() if p.name == "__init__.py"}


def test_the_private_name_check_sees_imports_reads_and_private_modules():
    src = ("import torch\nfrom gym_crawl.corpus.download import _reason\nfrom gym_crawl.benchmarks._plotting import "
           "pyplot\nfrom gym_crawl._io import atomic_write_bytes\nclass A:\n    def _f(self):\n        self._h = 1\n"
           "        return a._f, b._g, torch._foreach_mul_, self._h, self._k\n")
    assert private_crossings("gym_crawl.cli", src) == [
        "2: imports gym_crawl.corpus.download._reason",
        "3: imports gym_crawl.benchmarks._plotting.pyplot (private module gym_crawl.benchmarks._plotting)",
        "8: b._g", "8: self._k"]
    # inside its package a private module is its own; a name of another module is not, even through self
    assert private_crossings("gym_crawl.benchmarks.sb3", src)[1:] == ["8: b._g", "8: self._k"]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_private_name_crosses_a_module_boundary(module):
    assert private_crossings(module, MODULES[module].read_text()) == []


# ------------------------------------------------------------------------------------ the doc and the tree
# docs/architecture.md draws the layers, maps every module and lists the modules and functions past the size
# rule; these tests hold the doc to the tree, so neither drifts from the other.

ARCH_DOC = ROOT / "docs" / "architecture.md"


def _doc_section(title: str) -> str:
    text = ARCH_DOC.read_text()
    assert f"\n## {title}\n" in text, f"docs/architecture.md has no section '## {title}'"
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _module_of_file(rel: str) -> str:
    """``agents/dqn/core.py`` → ``gym_crawl.agents.dqn.core`` (the installed name of a file of the repository)."""
    parts = Path(rel).with_suffix("").parts
    if parts[0] in ("agents", "benchmarks"):
        parts = ("gym_crawl", *parts)
    return ".".join(p for p in parts if p != "__init__")


def _module_map() -> list[tuple[str, str]]:
    return re.findall(r"^\| `([\w/]+\.py)` \| (\w+) \|", _doc_section("Module map"), re.M)


def test_the_module_map_lists_every_module_once_and_nothing_else():
    rows = _module_map()
    files = [f for f, _ in rows]
    assert len(files) == len(set(files)), "modules listed twice: " + str(sorted({f for f in files
                                                                                 if files.count(f) > 1}))
    tree = {str(p.relative_to(ROOT)) for p in MODULES.values()}
    assert not tree - set(files), "modules missing from the module map of docs/architecture.md: " + \
        str(sorted(tree - set(files)))
    assert not set(files) - tree, "the module map lists files that do not exist: " + str(sorted(set(files) - tree))


def test_the_module_map_gives_each_module_the_layer_of_the_architecture_test():
    wrong = []
    for f, layer in _module_map():
        me = _layer(_module_of_file(f))
        want = "base" if me is None else LAYERS[me]
        if layer != want:
            wrong.append(f"{f}: the map says {layer}, the architecture test {want}")
    assert not wrong, "\n".join(wrong)
    base = {Path(f).stem for f, layer in _module_map() if layer == "base" and f.count("/") == 1}
    assert base == BASE, f"base modules: the map has {sorted(base)}, the architecture test {sorted(BASE)}"


def test_the_doc_and_the_package_docstring_draw_the_layers_of_the_architecture_test():
    chain = re.search(r"```\n(registry → .*)\n```", _doc_section("Layers"))
    assert chain, "docs/architecture.md ## Layers draws no 'registry → ...' chain"
    drawn = [x.strip() for part in chain.group(1).split("→") for x in part.split("/")]
    assert drawn == ["registry", *LAYERS]
    table = re.findall(r"^\| (\w[\w, ]*) \| `gym_crawl", _doc_section("Layers"), re.M)
    assert [x.strip() for row in table for x in row.split(",")] == ["registry", *LAYERS]
    import gym_crawl

    said = re.search(r"Layers \(data flows one way\): (.*?) \(docs/architecture.md\)", " ".join(
        (gym_crawl.__doc__ or "").split()))
    assert said, "gym_crawl/__init__.py's docstring does not draw the layers"
    assert [x.strip() for part in said.group(1).split("→") for x in part.split("/")] == LAYERS


MAX_MODULE_LINES, MAX_FUNCTION_LINES = 700, 80


def _body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of a function's body, its docstring excluded."""
    body = node.body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value,
                                                                                                  str):
        body = body[1:]
    return body[-1].end_lineno - body[0].lineno + 1 if body else 0


def _oversized() -> set[str]:
    """``path`` of every module past MAX_MODULE_LINES lines, ``path function`` of every function whose body
    (docstring excluded) is past MAX_FUNCTION_LINES."""
    out = set()
    for path in MODULES.values():
        rel = str(path.relative_to(ROOT))
        text = path.read_text()
        if text.count("\n") > MAX_MODULE_LINES:
            out.add(rel)
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _body_lines(node) > MAX_FUNCTION_LINES:
                out.add(f"{rel} {node.name}")
    return out


def test_what_breaks_the_size_rule_is_listed_with_its_reason():
    listed = set()
    for path, func, reason in re.findall(r"^\| `([\w/]+\.py)` \|\s*`?(\w*)`?\s*\| (.+) \|$",
                                         _doc_section("Size"), re.M):
        assert reason.strip(), f"{path} {func}: no reason given"
        listed.add(f"{path} {func}" if func else path)
    big = _oversized()
    assert not big - listed, (f"past {MAX_MODULE_LINES} lines (module) or {MAX_FUNCTION_LINES} (function body) and "
                              f"not in docs/architecture.md ## Size (split it, or list it with a reason): "
                              f"{sorted(big - listed)}")
    assert not listed - big, f"listed in docs/architecture.md ## Size but within the rule now: {sorted(listed - big)}"


def test_every_complexity_exemption_is_listed_as_known_debt():
    """A ``# noqa: C901`` function is in the table of docs/architecture.md ## Static checks and their known debt."""
    table = _doc_section("Static checks and their known debt")
    missing = []
    for path in MODULES.values():
        rel = str(path.relative_to(ROOT))
        lines = path.read_text().splitlines()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and "noqa: C901" in lines[node.lineno - 1] \
                    and not re.search(rf"`{re.escape(rel)}` `(\w+\.)?{node.name}`", table):
                missing.append(f"{rel} {node.name}")
    assert not missing, f"complexity exemptions not listed as known debt: {missing}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith(("gym_crawl.tasks", "gym_crawl.cli"))))
def test_tasks_and_cli_import_what_they_use_at_module_top(module):
    """``gym_crawl.tasks`` (above agents) and the command line (above everything) import what they use at module
    top, so the import graph drawn from the code shows where they sit: no lazy import hides an arrow. (The command
    line imports only the sub-command that runs, by its name in ``gym_crawl.cli.app.COMMANDS``.)"""
    top = _imports(module, MODULES[module], top_level_only=True)
    every = _imports(module, MODULES[module], top_level_only=False)
    assert every <= top, f"{module} imports inside functions: {sorted(every - top)}"
