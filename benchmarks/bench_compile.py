"""Corpus compile speed and memory at the papers' scale.

(a) Compiles the real MediaWiki samples (``shared/data/mediawiki_samples``):
    seconds, pages/s, MB/s of XML and of wikitext, link counts.
(b) Generates a synthetic corpus of ``--pages`` pages (default 323,000 ≈ the
    thesis' Simple English dump; pass ``--pages 1000000`` for the 1M figure) with
    :func:`gym_crawl.webgen.synthetic.generate_synthetic`, saves it, and reports
    generation/save seconds and peak RSS (measured in a fresh subprocess).
(c) Opens the saved corpus in ``--readers`` (default 3) concurrent processes,
    each touching every array, and reports per process the growth of RSS, PSS
    and private memory (``/proc/self/smaps_rollup``): with memory mapping the
    arrays are shared page cache, so the private growth per extra process stays
    small while RSS counts the shared pages in every process.

Writes ``benchmarks/results/compile.json`` (``--out``)::

    python benchmarks/bench_compile.py                  # samples + 323k synthetic
    python benchmarks/bench_compile.py --pages 1000000  # 1M pages
    python benchmarks/bench_compile.py --skip-synthetic # samples only
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gym_crawl._console import ArgumentParser

HERE = Path(__file__).resolve().parent
SAMPLES = HERE.parents[1] / "shared" / "data" / "mediawiki_samples"
SAMPLE_FILES = ["ltgwiki-20170901-pages-articles.xml.bz2",
                "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"]


# ------------------------------------------------------------------ helpers

def smaps() -> dict[str, float]:
    """This process' memory in MB from ``/proc/self/smaps_rollup`` (Linux), else ru_maxrss only."""
    out: dict[str, float] = {}
    try:
        with open("/proc/self/smaps_rollup") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[-1] == "kB":
                    out[parts[0].rstrip(":").lower()] = int(parts[1]) / 1024
    except OSError:
        import resource

        out["rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["private"] = out.get("private_clean", 0.0) + out.get("private_dirty", 0.0)
    return out


def peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _run_child(args: list[str]) -> dict:
    p = subprocess.run([sys.executable, str(Path(__file__).resolve()), *args], capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(p.stdout.strip().splitlines()[-1])


# ----------------------------------------------------------------- samples

def bench_samples(repeat: int) -> dict:
    """(a) compile each real sample ``repeat`` times (no cache); best time."""
    import bz2

    from gym_crawl.corpus.mediawiki import compile_mediawiki_dump

    out = {}
    for name in SAMPLE_FILES:
        path = SAMPLES / name
        if not path.is_file():
            out[name] = {"skipped": f"not found at {path}"}
            continue
        with bz2.open(path) as fh:
            xml_mb = len(fh.read()) / 1e6
        best, corpus = float("inf"), None
        for _ in range(repeat):
            t = time.perf_counter()
            corpus = compile_mediawiki_dump(path, progress=False, workers=1)
            best = min(best, time.perf_counter() - t)
        s = corpus.meta["compile_stats"]
        wikitext_mb = sum(len(t.encode("utf-8")) for t in corpus.texts) / 1e6
        out[name] = {
            "seconds": round(best, 3), "pages": corpus.n_pages, "pages_seen": s["pages_seen"],
            "pages_per_s": round(corpus.n_pages / best, 1), "all_pages_per_s": round(s["pages_seen"] / best, 1),
            "xml_mb": round(xml_mb, 2), "xml_mb_per_s": round(xml_mb / best, 2),
            "rendered_text_mb": round(wikitext_mb, 2),
            "links_parsed": s["links_parsed"], "links_resolved": s["links_resolved"], "red_links": s["red_links"],
            "redirect_pages": s["redirect_pages"],
        }
    return out


# ---------------------------------------------------------------- synthetic

def child_generate(n_pages: int, seed: int, dest: str) -> dict:
    """(b) in a fresh process: generate, save, report seconds and peak RSS."""
    from gym_crawl.webgen.synthetic import generate_synthetic

    rss0 = smaps().get("rss", 0.0)
    t = time.perf_counter()
    c = generate_synthetic(n_pages, seed)
    gen = time.perf_counter() - t
    peak_gen = peak_rss_mb()
    t = time.perf_counter()
    c.save(dest)
    save = time.perf_counter() - t
    size = sum(f.stat().st_size for f in Path(dest).iterdir())
    return {"pages": c.n_pages, "links": c.n_links, "words": c.n_words, "generate_seconds": round(gen, 2),
            "save_seconds": round(save, 2), "peak_rss_mb_generate": round(peak_gen, 1),
            "peak_rss_mb_total": round(peak_rss_mb(), 1), "rss_before_mb": round(rss0, 1),
            "saved_mb": round(size / 2**20, 1)}


def child_reader(path: str) -> None:
    """(c) one reader: load (mmap), touch every array, then report memory when the parent asks."""
    import numpy as np

    from gym_crawl.corpus.core import Corpus

    before = smaps()
    t = time.perf_counter()
    c = Corpus.load(path)
    load_s = time.perf_counter() - t
    t = time.perf_counter()
    checksum = 0
    for name in ("text_ptr", "text_terms", "text_counts", "title_ptr", "title_terms", "link_ptr", "link_dst",
                 "anchor_ptr", "anchor_terms", "context_ptr", "context_terms", "page_domain", "label_ptr",
                 "label_ids"):
        checksum += int(np.asarray(getattr(c, name)).sum(dtype=np.int64))
    for table in (c.titles, c.vocab, c.domains, c.labels, c.texts):
        if table is not None:
            checksum += int(table.blob.sum(dtype=np.int64)) + int(table.offsets[-1])
    touch_s = time.perf_counter() - t
    print("ready", flush=True)
    sys.stdin.readline()  # wait until every reader has touched everything
    after = smaps()
    delta = {f"{k}_delta_mb": round(after.get(k, 0.0) - before.get(k, 0.0), 1)
             for k in ("rss", "pss", "private", "anonymous", "shared_clean")}
    print(json.dumps({"pid": os.getpid(), "load_seconds": round(load_s, 3), "touch_seconds": round(touch_s, 2),
                      "checksum": checksum, **delta}), flush=True)
    sys.stdin.readline()


def bench_readers(path: str, readers: int) -> dict:
    """Start ``readers`` concurrent processes on one saved corpus; collect their memory growth."""
    procs = [subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--reader", path],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(readers)]
    try:
        for p in procs:
            line = p.stdout.readline().strip()
            if line != "ready":
                raise RuntimeError(f"reader {p.pid} failed: {line!r}")
        for p in procs:
            p.stdin.write("measure\n")
            p.stdin.flush()
        results = [json.loads(p.stdout.readline()) for p in procs]
        for p in procs:
            p.stdin.write("exit\n")
            p.stdin.flush()
    finally:
        for p in procs:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
    return {"readers": results,
            "checksums_agree": len({r["checksum"] for r in results}) == 1,
            "mean_private_delta_mb": round(sum(r["private_delta_mb"] for r in results) / len(results), 1),
            "mean_rss_delta_mb": round(sum(r["rss_delta_mb"] for r in results) / len(results), 1),
            "mean_pss_delta_mb": round(sum(r["pss_delta_mb"] for r in results) / len(results), 1)}


def bench_synthetic(n_pages: int, seed: int, readers: int, workdir: str | None, keep: bool) -> dict:
    try:
        from gym_crawl.webgen.synthetic import generate_synthetic  # noqa: F401
    except ImportError as e:
        return {"skipped": f"gym_crawl.webgen.synthetic.generate_synthetic unavailable: {e}"}
    root = Path(tempfile.mkdtemp(prefix="bench_compile_", dir=workdir))
    dest = root / f"synthetic-{n_pages}"
    try:
        t = time.perf_counter()
        gen = _run_child(["--generate", str(n_pages), "--seed", str(seed), "--dest", str(dest)])
        gen["wall_seconds"] = round(time.perf_counter() - t, 1)
        if "error" in gen:
            return {"generate": gen}
        out = {"generate": gen, "mmap_readers": bench_readers(str(dest), readers)}
        if keep:
            out["saved_at"] = str(dest)
        return out
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


# --------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=323_000, help="synthetic corpus size (default 323000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--readers", type=int, default=3, help="concurrent processes opening the saved corpus")
    ap.add_argument("--repeat", type=int, default=3, help="compile each real sample this many times (best)")
    ap.add_argument("--skip-synthetic", action="store_true")
    ap.add_argument("--skip-samples", action="store_true")
    ap.add_argument("--workdir", default=None, help="where the synthetic corpus is saved (default: a temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the saved synthetic corpus")
    ap.add_argument("--out", default="benchmarks/results/compile.json",
                    help="output JSON file (relative paths: under the current folder)")
    ap.add_argument("--generate", type=int, default=None, help=argparse.SUPPRESS)  # child modes
    ap.add_argument("--dest", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--reader", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.generate is not None:
        print(json.dumps(child_generate(args.generate, args.seed, args.dest)))
        return 0
    if args.reader is not None:
        child_reader(args.reader)
        return 0
    import numpy as np

    result: dict = {"benchmark": "compile", "machine": {
        "python": platform.python_version(), "numpy": np.__version__, "cpus": os.cpu_count(),
        "platform": platform.platform()}}
    if not args.skip_samples:
        result["samples"] = bench_samples(args.repeat)
        print(json.dumps(result["samples"], indent=2), file=sys.stderr)
    if not args.skip_synthetic:
        result["synthetic"] = bench_synthetic(args.pages, args.seed, args.readers, args.workdir, args.keep)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
