"""Memory of many crawls beside the default step — pages in flight, the site features — against web size.

``gym-crawl bench paths_memory [--sizes 20000,1000000] [--envs 64] [--steps 100] [--features crawler+]
[--concurrency 4] [--topic geology] [--out DIR]``

The default step's crawl state follows the pages a crawl touched (``gym-crawl bench crawl_scale`` measures it).
This bench measures the options beside it whose state was once as long as the web: a window of pages in flight
(``concurrency > 1``: the window's per-host counts and the simulated per-host clock) and the ``site`` features
(``crawler+`` = ``crawler`` ⊕ ``site``: their per-crawl page and host statistics and the corpus' parsed URL facts).
Per web (a power-law web ``powerlaw-<N>``, generated and cached once), a fresh process builds ``--envs`` envs
``gym.make("WikiCrawl-v3", corpus=..., topic=..., features=..., concurrency=..., per_host=1,
max_episode_steps=--steps)``, resets each with its own seed and steps it to the end of its episode (the first
valid slot each step), keeps them all, and reports its memory from ``/proc/self/status``: anonymous RSS (the
crawls, score tables, text model, Python and numba: what grows with the crawls or the web) and file RSS (the
corpus' and stored tables' memory-mapped pages: page cache, shared) before the first env and after the last
crawl, and the CPU seconds of the crawls. Writes ``paths_memory.json`` and ``paths_memory.md`` to ``--out``
(default ``benchmarks/results/paths_memory``).
"""
from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path

from gym_crawl.benchmarks.child_process import MEM_SOURCE, run_json_child

DEFAULT_OUT = Path("benchmarks") / "results" / "paths_memory"  # under the current folder
DEFAULT_SIZES = (20_000, 1_000_000)

#: the measuring process: argv = spec, topic, envs, steps, features, concurrency; prints one JSON line
CHILD = MEM_SOURCE + r"""
import json, resource, sys, time
import numpy as np
from gym_crawl.corpus import load_corpus
from gym_crawl.wrappers.factory import make_env

spec, topic, n_envs, steps, features, conc = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), \
    sys.argv[5], int(sys.argv[6])
c = load_corpus(spec, progress=False)
before = mem()
envs, fetched = [], []
t0 = time.process_time()
for i in range(n_envs):
    e = make_env("WikiCrawl-v3", corpus=c, topic=topic, features=features, concurrency=conc, per_host=1,
                 max_episode_steps=steps)
    obs, info = e.reset(seed=i)
    for _ in range(steps):
        m = info["action_mask"]
        obs, r, term, trunc, info = e.step(int(np.flatnonzero(m)[0]) if m.any() else 0)
        if term or trunc:
            break
    fetched.append(int(info["pages_fetched"]))
    envs.append(e)
cpu = time.process_time() - t0
print(json.dumps({"web": spec, "pages": c.n_pages, "domains": len(c.domains), "envs": n_envs, "steps": steps,
                  "features": features, "concurrency": conc, "topic": topic, "pages_fetched_mean":
                  float(np.mean(fetched)), "cpu_s": round(cpu, 2), "before_MB": before, "after_MB": mem(),
                  "peak_rss_MB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))
"""


def measure(spec: str, topic: str, envs: int, steps: int, features: str, concurrency: int) -> dict:
    """One web's figures, from a fresh process."""
    return run_json_child(CHILD, [spec, topic, str(envs), str(steps), features, str(concurrency)],
                          f"paths_memory: the process measuring {spec}")


def report(rows: list[dict]) -> str:
    """The Markdown table of the measured webs."""
    lines = ["| web | pages | domains | crawls × steps | pages fetched (mean) | anonymous RSS before → after (MB) | "
             "file RSS after (MB) | CPU-s |", "|---|---:|---:|---|---:|---|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['web']} | {r['pages']:,} | {r['domains']:,} | {r['envs']} × {r['steps']} | "
                     f"{r['pages_fetched_mean']:.1f} | {r['before_MB']['RssAnon']:.1f} → "
                     f"{r['after_MB']['RssAnon']:.1f} | {r['after_MB']['RssFile']:.1f} | {r['cpu_s']:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="gym-crawl bench paths_memory", description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default=None, help="comma-separated power-law web sizes (default 2e4,1e6)")
    ap.add_argument("--envs", type=int, default=64, help="crawls kept in the process (default 64)")
    ap.add_argument("--steps", type=int, default=100, help="steps per crawl (default 100)")
    ap.add_argument("--features", default="crawler+", help="feature set (default crawler+: crawler ⊕ site)")
    ap.add_argument("--concurrency", type=int, default=4, help="pages in flight (default 4)")
    ap.add_argument("--topic", default="geology", help="the topic crawled on every web (default geology)")
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    a = ap.parse_args(argv)
    try:
        sizes = [int(float(x)) for x in a.sizes.split(",") if x] if a.sizes else list(DEFAULT_SIZES)
    except ValueError:
        ap.error(f"--sizes {a.sizes!r}: expected comma-separated page counts, e.g. 20000,1e6")
    if a.envs < 1 or a.steps < 1 or a.concurrency < 1 or not sizes or min(sizes) < 800:
        ap.error(f"--envs, --steps and --concurrency must be >= 1 and --sizes >= 800 pages, got {a.envs}, "
                 f"{a.steps}, {a.concurrency}, {sizes}")
    rows = []
    for n in sizes:
        rows.append(measure(f"powerlaw-{n}", a.topic, a.envs, a.steps, a.features, a.concurrency))
        r = rows[-1]
        print(f"{r['web']}: anonymous RSS {r['before_MB']['RssAnon']} -> {r['after_MB']['RssAnon']} MB after "
              f"{a.envs} crawls ({r['cpu_s']} CPU-s)", flush=True)
    from gym_crawl._io import atomic_write_bytes, atomic_write_json

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out / "paths_memory.json", {"rows": rows})
    atomic_write_bytes(out / "paths_memory.md", report(rows).encode())
    print(report(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
