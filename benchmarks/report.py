"""What every benchmark's JSON and Markdown say about themselves.

:func:`write_json_report` adds an ``"about"`` object to a benchmark's result — the package version, the
benchmark, its arguments, and for a ``--quick`` run ``"status": "illustrative, not a result"`` — and stamps
every row (a JSON object with an ``"agent"`` key, or an item of a ``"rows"`` / ``"runs"`` list, at any depth)
with what it needs to be read alone:
``gym_crawl_version``, ``benchmark_seed`` (the ``--seed`` argument: a row that aggregates several seeds
is not mislabelled with one), and ``topic`` / ``reward`` / ``K`` from the benchmark's arguments when the row
does not carry them already (a row's own value always wins). :func:`markdown_banner` is the line a
quick run's Markdown starts with.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from gym_crawl._io import atomic_write_json

__all__ = ["ILLUSTRATIVE", "about", "markdown_banner", "stamp_rows", "write_json_report"]

ILLUSTRATIVE = "illustrative, not a result"

#: Row key → the argument names a benchmark may call it by (first present, non-None wins).
_ROW_KEYS = {"benchmark_seed": ("seed",), "topic": ("topic",), "reward": ("reward",), "K": ("k", "max_candidates", "K")}


def about(benchmark: str, args: argparse.Namespace | dict | None = None, quick: bool | None = None) -> dict[str, Any]:
    """The ``"about"`` object: benchmark, package version, arguments (JSON-safe) and the quick-run status."""
    from gym_crawl import __version__

    a = dict(vars(args) if isinstance(args, argparse.Namespace) else (args or {}))
    q = bool(a.get("quick", False) if quick is None else quick)
    out: dict[str, Any] = {"benchmark": benchmark, "gym_crawl_version": __version__,
                           "arguments": json.loads(json.dumps(a, default=str)), "quick": q}
    if q:
        out["status"] = ILLUSTRATIVE
    return out


#: Lists whose items are result rows even without an ``"agent"`` key (a throughput case, a scale point).
ROW_LISTS = ("rows", "runs")


def stamp_rows(obj: Any, defaults: dict[str, Any], _row: bool = False) -> int:
    """Add ``defaults``' keys to every row inside ``obj`` — a dict with an ``"agent"`` key, or an item of a list
    under a key of :data:`ROW_LISTS` — in place, keeping the row's own keys; returns how many rows were stamped.
    Other dicts (task definitions, configurations) are left as they are, so they still load."""
    n = 0
    if isinstance(obj, dict):
        if "agent" in obj or _row:
            for k, v in defaults.items():
                obj.setdefault(k, v)
            n += 1
        for k, v in obj.items():
            n += stamp_rows(v, defaults, _row=False) if not isinstance(v, list) else \
                sum(stamp_rows(x, defaults, _row=k in ROW_LISTS) for x in v)
    elif isinstance(obj, list):
        for v in obj:
            n += stamp_rows(v, defaults, _row=_row)
    return n


def write_json_report(path: str | Path, result: Any, benchmark: str, args: argparse.Namespace | dict | None = None,
                      quick: bool | None = None) -> Path:
    """Stamp ``result`` (see module docstring) and write it as JSON atomically; a dict result gets ``"about"``
    (a list result is wrapped as ``{"about": ..., "rows": [...]}``)."""
    ab = about(benchmark, args, quick)
    defaults: dict[str, Any] = {"gym_crawl_version": ab["gym_crawl_version"]}
    if ab["quick"]:
        defaults["status"] = ILLUSTRATIVE
    for key, names in _ROW_KEYS.items():
        for n in names:
            if ab["arguments"].get(n) is not None:
                defaults[key] = ab["arguments"][n]
                break
    stamp_rows({"rows": result} if isinstance(result, list) else result, defaults)
    obj = {"about": ab, **result} if isinstance(result, dict) else {"about": ab, "rows": result}
    atomic_write_json(Path(path), obj)
    return Path(path)


def markdown_banner(quick: bool) -> str:
    """The first line of a quick run's Markdown (empty for a full run)."""
    return f"> **{ILLUSTRATIVE}**: a `--quick` run (small corpus, few steps) checks that the benchmark runs.\n\n" \
        if quick else ""


def write_reports(out: str | Path, name: str, result: Any, md: str, args: argparse.Namespace, quick: bool) -> None:
    """Write ``out/<name>.json`` (:func:`write_json_report`) and ``out/<name>.md`` (``md`` under the quick run's
    banner) atomically, creating ``out``, print ``md`` and say where both went."""
    from gym_crawl._io import atomic_write_bytes

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_json_report(out / f"{name}.json", result, name, args)
    atomic_write_bytes(out / f"{name}.md", (markdown_banner(quick) + md).encode())
    print(md)
    print(f"wrote {out / (name + '.json')}, .md")
