"""``gym-crawl bench NAME``: run a benchmark of ``benchmarks/`` (its own options follow its name)."""
from __future__ import annotations

import argparse
import ast
import difflib
import importlib
import importlib.util
import pkgutil
from pathlib import Path

from gym_crawl.benchmarks import SHARED

__all__ = ["add_arguments", "benchmark_names", "run"]


def benchmark_names() -> dict[str, str]:
    """Name → first docstring sentence of every benchmark module (read from the source, nothing imported): every
    module of ``gym_crawl.benchmarks`` but its shared machinery (:data:`gym_crawl.benchmarks.SHARED`)."""
    spec = importlib.util.find_spec("gym_crawl.benchmarks")
    out: dict[str, str] = {}
    for m in sorted(pkgutil.iter_modules(list(spec.submodule_search_locations or [])) if spec else [],
                    key=lambda m: m.name):
        if m.name.startswith("_") or m.ispkg or m.name in SHARED:
            continue
        path = Path(m.module_finder.path) / f"{m.name}.py"  # type: ignore[union-attr]
        try:
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        except (OSError, SyntaxError, ValueError):
            doc = ""
        first = " ".join(doc.strip().split("\n\n", 1)[0].split())
        out[m.name] = first if len(first) <= 100 else first[:99].rsplit(" ", 1)[0] + " …"
    return out


def add_arguments(b: argparse.ArgumentParser) -> None:
    """The arguments of ``gym-crawl bench``: a benchmark's name, then its own arguments."""
    b.add_argument("name")
    b.add_argument("args", nargs=argparse.REMAINDER,
                   help="arguments of the benchmark (see `gym-crawl bench NAME --help`)")


def run(args: argparse.Namespace) -> int:
    """``gym-crawl bench NAME ARGS``: the benchmark's ``main(ARGS)``."""
    name = args.name.replace("-", "_")
    known = sorted(benchmark_names())
    if name not in known:
        close = difflib.get_close_matches(name, known, n=3)
        hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
        raise ValueError(f"unknown benchmark {args.name!r}{hint}; available: {known}")
    return int(importlib.import_module(f"gym_crawl.benchmarks.{name}").main(args.args) or 0)
