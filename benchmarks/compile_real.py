"""Compile speed of real documentation HTML: pages per CPU-second of one WARC file's compile, and where it goes.

``gym-crawl bench compile_real [--against CHECKOUT]`` (``python -m gym_crawl.benchmarks.compile_real``) packs the
first ``--pages`` HTML files (sorted by path) of each documentation folder given (default: Debian's PostgreSQL 15
manual and SciPy's reference, ``/usr/share/doc/postgresql-doc-15/html`` and ``/usr/share/doc/python-scipy-doc/html``)
into one gzipped WARC (``benchmarks/warc_compile.py``'s ``write_warc``), then times
:func:`gym_crawl.web.warc.parse_warc_file` on it — read, extract, tokenize, write chunks — in CPU seconds
(``time.process_time``, which holds on a shared machine better than wall time), ``--repeats`` times, each in a
fresh process after a one-page warm-up (imports, compiled kernels; no URL canonicalisation cached from an earlier
run), and once under cProfile (warm) for the shares of its parts; with ``--against``, each run paired with one of
another checkout's code (before → after of a change, alternating, under the same load). Writes ``results.json``
(rates, the load average, the profile's shares) into ``--out``. Pages per CPU-second of one process is the rate
per core.
"""
from __future__ import annotations

import argparse
import cProfile
import glob
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

DEFAULT_FOLDERS = ("/usr/share/doc/postgresql-doc-15/html", "/usr/share/doc/python-scipy-doc/html")
DEFAULT_OUT = Path("benchmarks/results/compile_real")

_PARTS = {  # profiled function → what it is
    "extract_plain_text": "Resiliparse main text", "parse": "Resiliparse parse",
    "_main_text": "Resiliparse parse + main text + its tree freed + lines collapsed",
    "scan_spans": "compiled walk: visible text, link spans", "walk_scan": "  of which the numba kernel",
    "nesting_counts": "block-nesting bound",
    "_select_links": "links: which are kept, canonical URLs", "canonical_urls": "  of which canonical_urls",
    "link_spans": "links: anchor and context spans",
    "add_page": "chunk writer: token ids of texts, URLs, anchors, contexts; link hashes",
    "span_ids": "  of which token ids (compiled, with the texts' preparation)", "flush": "chunk flush (npz)",
    "decode_html": "charset decode"}


def build_warc(folders: list[str], pages: int, path: Path) -> tuple[int, int]:
    """The WARC of the first ``pages`` HTML files of each folder; returns ``(pages, bytes of HTML)``."""
    from gym_crawl.benchmarks.warc_compile import write_warc

    items = []
    for d in folders:
        files = sorted(glob.glob(os.path.join(d, "**", "*.html"), recursive=True))[:pages]
        items += [("http://docs.local" + f, Path(f).read_bytes()) for f in files]
    if not items:
        raise SystemExit(f"compile_real: no HTML file under {', '.join(folders)} (install the documentation "
                         "packages, e.g. `gym-crawl bench docs-web --install`, or pass --folders)")
    write_warc(path, items)
    return len(items), sum(len(b) for _, b in items)


_ONE_RUN = """
import json, sys, tempfile, time
import gym_crawl
from gym_crawl.web.warc import parse_warc_file
with tempfile.TemporaryDirectory() as d:  # warm-up on one page elsewhere: imports and compiled kernels, no URL cache
    parse_warc_file(sys.argv[2], d)
with tempfile.TemporaryDirectory() as d:
    t0 = time.process_time()
    r = parse_warc_file(sys.argv[1], d)
    cpu = time.process_time() - t0
print(json.dumps({"cpu_s": cpu, "pages": sum(c["pages"] for c in r["chunks"]), "code": gym_crawl.__file__}))
"""


def _compile_once(warc: Path, warm: Path, code: str | None = None) -> tuple[float, int]:
    """CPU seconds of ``parse_warc_file(warc)`` in a fresh process (as a compile runs: no URL cache filled by an
    earlier run), after a one-page warm-up (``warm``); and the pages compiled. ``code``: a checkout whose
    ``gym_crawl`` the process imports instead of the installed one."""
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = code + os.pathsep + env.get("PYTHONPATH", "")
    # run from the WARC's folder: `python -c` puts the working directory first on sys.path, where a checkout's own
    # gym_crawl would shadow the one asked for
    res = subprocess.run([sys.executable, "-c", _ONE_RUN, str(warc), str(warm)], capture_output=True, text=True,
                         check=True, env=env, cwd=warc.parent)
    out = json.loads(res.stdout.strip().splitlines()[-1])
    want = Path(code).resolve() if code is not None else None
    if want is not None and want not in Path(out["code"]).resolve().parents:
        raise SystemExit(f"compile_real: --against {code}: the run imported {out['code']} instead")
    return float(out["cpu_s"]), int(out["pages"])


def profile_shares(warc: Path) -> dict[str, float]:
    """Cumulative share (%) of the whole ``parse_warc_file`` of each part in :data:`_PARTS`, under cProfile."""
    from gym_crawl.web.warc import parse_warc_file

    with tempfile.TemporaryDirectory() as d:
        prof = cProfile.Profile()
        prof.enable()
        parse_warc_file(warc, d)
        prof.disable()
    stats: Any = pstats.Stats(prof)
    cum: dict[str, float] = {}
    for (_, _, name), row in stats.stats.items():
        key = "extract_plain_text" if "extract_plain_text" in name else "parse" if name == "<built-in method parse>" \
            else name
        cum[key] = cum.get(key, 0.0) + row[3]
    whole = cum["parse_warc_file"]
    return {label: round(100 * cum[k] / whole, 1) for k, label in _PARTS.items() if k in cum}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="gym-crawl bench compile_real", description=__doc__.split("\n\n")[0])
    ap.add_argument("--folders", nargs="+", default=list(DEFAULT_FOLDERS), help="documentation folders of HTML files")
    ap.add_argument("--pages", type=int, default=1000, help="HTML files taken from each folder (default 1000)")
    ap.add_argument("--repeats", type=int, default=3, help="timed compiles after the warm-up (default 3)")
    ap.add_argument("--no-profile", action="store_true", help="skip the cProfile run")
    ap.add_argument("--against", metavar="CHECKOUT", help="also time this checkout of the repository (e.g. made by "
                    "`git worktree add /tmp/base REV`), each run paired with one of this code, alternating")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    if args.pages < 1 or args.repeats < 1:
        ap.error(f"--pages and --repeats must be >= 1, got {args.pages} and {args.repeats}")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        warc = Path(tmp) / "real.warc.gz"
        n, size = build_warc(args.folders, args.pages, warc)
        runs = []
        from gym_crawl.benchmarks.warc_compile import write_warc

        warm = write_warc(Path(tmp) / "warm.warc.gz", [("http://warm.up/", b"<title>w</title><main><p>warm up</p>"
                                                                             b"<a href='/x'>x</a></main>")])
        against: list[dict[str, Any]] = []
        for _ in range(args.repeats):
            for code, into in ((args.against, against), (None, runs)):
                if code is None or args.against is not None:
                    load = os.getloadavg()[0]
                    cpu, pages = _compile_once(warc, warm, code)
                    into.append({"cpu_s": round(cpu, 3), "pages": pages, "pages_per_cpu_s": round(pages / cpu, 1),
                                 "load": round(load, 2), "code": code or "installed"})
                    print(json.dumps(into[-1]), flush=True)
        shares = {} if args.no_profile else profile_shares(warc)
    result = {"folders": args.folders, "pages": n, "html_bytes": size, "runs": runs,
              "median_pages_per_cpu_s": statistics.median(r["pages_per_cpu_s"] for r in runs),
              "cpu_count": os.cpu_count(), "profile_share_pct": shares}
    if against:
        result["against"] = {"checkout": args.against, "runs": against,
                             "median_pages_per_cpu_s": statistics.median(r["pages_per_cpu_s"] for r in against)}
    (args.out / "results.json").write_text(json.dumps(result, indent=2))
    print(json.dumps({k: result[k] for k in ("pages", "median_pages_per_cpu_s", "profile_share_pct")}, indent=1))
    print(f"wrote {args.out / 'results.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
