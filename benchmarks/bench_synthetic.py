"""Speed and memory of the synthetic corpus generator.

Times :func:`gym_crawl.webgen.synthetic.generate_synthetic` at 20k, 100k and 323k
pages (the thesis' corpus size), and 1M with ``--full``. Each size runs in a fresh
subprocess so the reported peak RSS (``ru_maxrss``) belongs to that size alone.
Prints one JSON document: per size the build seconds (wall and CPU: on a shared machine the
CPU time is the steadier figure), peak RSS (MB), output size
(MB of arrays), link count and degree statistics.

    python benchmarks/bench_synthetic.py            # 20k, 100k, 323k
    python benchmarks/bench_synthetic.py --full     # + 1M
    python benchmarks/bench_synthetic.py --sizes 20000 100000 --save   # also time Corpus.save
    python benchmarks/bench_synthetic.py --preset hard                 # the "hard" preset
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from gym_crawl._console import ArgumentParser

DEFAULT_SIZES = [20_000, 100_000, 323_198]


def measure(n_pages: int, seed: int = 0, save: bool = False, preset: str = "default") -> dict:
    """Generate one corpus in this process; return timings, peak RSS and statistics."""
    import resource

    import numpy as np

    from gym_crawl.webgen.synthetic import generate_synthetic

    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t, cpu = time.perf_counter(), time.process_time()
    c = generate_synthetic(n_pages, seed, preset=preset)
    build, cpu = time.perf_counter() - t, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out: dict = {
        "preset": preset, "pages": c.n_pages, "links": c.n_links, "domains": len(c.domains), "words": c.n_words,
        "build_seconds": round(build, 2), "build_cpu_seconds": round(cpu, 2), "peak_rss_mb": round(peak, 1),
        "rss_before_mb": round(rss0, 1),
    }
    arrays = [getattr(c, k) for k in ("text_ptr", "text_terms", "text_counts", "title_ptr", "title_terms",
                                      "link_ptr", "link_dst", "anchor_ptr", "anchor_terms", "context_ptr",
                                      "context_terms", "page_domain", "label_ptr", "label_ids")]
    out["arrays_mb"] = round(sum(a.nbytes for a in arrays) / 2**20, 1)
    od = c.out_degree()
    ind = c.in_degree()
    src = c.link_src()
    top = np.argsort(ind)[::-1][:5]
    out.update({
        "out_degree_mean": round(float(od.mean()), 2), "out_degree_median": float(np.median(od)),
        "out_degree_max": int(od.max()), "in_degree_top": [[c.titles[int(i)], int(ind[i])] for i in top],
        "hubs_over_n_over_5": int((ind > c.n_pages / 5).sum()),
        "intra_site_fraction": round(float((c.page_domain[src] == c.page_domain[c.link_dst]).mean()), 3),
        "tokens_per_page": round(float(c.text_counts.sum()) / c.n_pages, 1),
        "context_words_per_link": round(len(c.context_terms) / max(c.n_links, 1), 2),
    })
    if save:
        with tempfile.TemporaryDirectory() as d:
            t = time.perf_counter()
            c.save(os.path.join(d, "c"))
            out["save_seconds"] = round(time.perf_counter() - t, 2)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=None, help="page counts (default 20k 100k 323k)")
    ap.add_argument("--full", action="store_true", help="also run 1,000,000 pages")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save", action="store_true", help="also time Corpus.save to a temp dir")
    ap.add_argument("--preset", default="default", help="generator preset: default or hard")
    ap.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)  # child mode
    args = ap.parse_args(argv)
    from gym_crawl.webgen.synthetic import PRESETS

    if args.preset not in PRESETS:
        ap.error(f"--preset {args.preset!r}: valid presets are {', '.join(PRESETS)}")
    if args.one is not None:
        print(json.dumps(measure(args.one, args.seed, args.save, args.preset)))
        return 0
    sizes = args.sizes or list(DEFAULT_SIZES)
    if args.full and 1_000_000 not in sizes:
        sizes.append(1_000_000)
    results = {}
    for n in sizes:
        cmd = [sys.executable, os.path.abspath(__file__), "--one", str(n), "--seed", str(args.seed),
               "--preset", args.preset]
        if args.save:
            cmd.append("--save")
        t = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            results[str(n)] = {"error": p.stderr.strip().splitlines()[-1:] or ["failed"],
                               "wall_seconds": round(time.perf_counter() - t, 1)}
            continue
        results[str(n)] = json.loads(p.stdout.strip().splitlines()[-1])
    print(json.dumps({"benchmark": "synthetic_corpus", "preset": args.preset, "seed": args.seed, "results": results},
                     indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
