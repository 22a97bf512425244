"""Simple-English-Wikipedia scale budget: a 323,000-page web (and 1M with --pages 1000000).

``gym-crawl bench scale [--quick] [--pages N] [--steps S] [--agents best-first,lfa-async] [--out DIR]``

Per corpus size, in fresh subprocesses so memory figures are not polluted by each other:

* corpus load seconds (memory-mapped) and RSS after load;
* env construction seconds (text model: IDF sample + word vectors; cached on disk after the first run)
  and ``reset`` seconds, first (per-topic precomputation) and warm;
* a ``--steps``-step crawl (default 10,000) of each agent: seconds, steps/s, RSS at the end.

The synthetic generator stands in for the Simple English dump (thesis Table 4.1: 323,198 pages,
~5M links); the issue's budget: RSS ≤ 1.5 GB, reset ≤ 2 s. Writes ``scale.json``, ``scale.md`` and
``scale.png`` (steps/s per agent and size).
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gym_crawl._console import ArgumentParser
from gym_crawl.benchmarks.report import markdown_banner, write_json_report

CHILD = r"""
import json, sys, time, resource
def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS:'): return int(line.split()[1]) / 1024.0
n, steps, agents = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(',')
out = {"pages": n}
t = time.perf_counter()
from gym_crawl.webgen.synthetic import synthetic_corpus
c = synthetic_corpus(n)
out["corpus_load_seconds"] = round(time.perf_counter() - t, 3)
out["links"] = int(c.n_links)
out["rss_after_load_mb"] = round(rss(), 1)
import gymnasium as gym, gym_crawl
from gym_crawl.wrappers.factory import make_env
from gym_crawl.agents import make_agent, make_env_for, run_episode, agent_class
t = time.perf_counter()
env = make_env("WikiCrawl-v0", corpus=c, topic="geology", max_episode_steps=steps)
out["env_make_seconds"] = round(time.perf_counter() - t, 3)
t = time.perf_counter(); env.reset(seed=0); out["first_reset_seconds"] = round(time.perf_counter() - t, 4)
t = time.perf_counter(); env.reset(seed=1); out["warm_reset_seconds"] = round(time.perf_counter() - t, 4)
env.close()
out["crawls"] = []
for name in agents:
    try:
        cls = agent_class(name)
    except ValueError as e:
        out["crawls"].append({"agent": name, "skipped": str(e)}); continue
    env = make_env_for(name, env_id="WikiCrawl-v0", corpus=c, topic="geology", max_episode_steps=steps)
    c0 = time.process_time()
    r = run_episode(env, make_agent(name), seed=0)
    cpu = time.process_time() - c0
    s = r.summary()
    out["crawls"].append({"agent": name, "steps": r.steps, "seconds": round(r.seconds, 2),
                          "steps_per_second": s["steps_per_second"], "cpu_seconds": round(cpu, 2),
                          "reset_seconds": s["reset_seconds"], "relevant_found": r.relevant_found,
                          "frontier_size": int(len(env.unwrapped.view.frontier_pages())), "rss_mb": round(rss(), 1)})
    env.close()
out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)
print(json.dumps(out))
"""


def run_size(n: int, steps: int, agents: str) -> dict[str, Any]:
    # generate (or find) the cached corpus in its own process, so the measured process only loads it
    gen = subprocess.run([sys.executable, "-c", "import sys; from gym_crawl.webgen.synthetic import "
                          f"synthetic_corpus; synthetic_corpus({n})"], capture_output=True, text=True)
    if gen.returncode != 0:
        raise RuntimeError(f"generating {n} pages failed:\n{gen.stderr[-3000:]}")
    p = subprocess.run([sys.executable, "-c", CHILD, str(n), str(steps), agents], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"scale child for {n} pages failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def _markdown(rows: list[dict[str, Any]]) -> str:
    out = ["# Scale budget (synthetic stand-in for Simple English Wikipedia)", "",
           "| pages | links | load s | RSS after load MB | env make s | first reset s | warm reset s | peak RSS MB |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['pages']:,} | {r['links']:,} | {r['corpus_load_seconds']} | {r['rss_after_load_mb']} | "
                   f"{r['env_make_seconds']} | {r['first_reset_seconds']} | {r['warm_reset_seconds']} | "
                   f"{r['peak_rss_mb']} |")
    out += ["", "| pages | agent | steps | seconds | steps/s | CPU s | relevant | frontier | RSS MB |",
            "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        for c in r["crawls"]:
            if "skipped" in c:
                out.append(f"| {r['pages']:,} | {c['agent']} | skipped: {c['skipped']} ||||||")
            else:
                out.append(f"| {r['pages']:,} | {c['agent']} | {c['steps']} | {c['seconds']} | {c['steps_per_second']} "
                           "| "
                           f"{c['cpu_seconds']} | {c['relevant_found']} | {c['frontier_size']} | {c['rss_mb']} |")
    return "\n".join(out) + "\n"


@dataclass(frozen=True)
class Preset:
    """A named configuration; ``--pages`` / ``--steps`` override its fields."""

    name: str
    pages: tuple[int, ...]
    steps: int


QUICK = Preset("quick", pages=(5000,), steps=300)  #: CI-sized
FULL = Preset("full", pages=(323_000,), steps=10_000)  #: the Simple English Wikipedia scale


def _plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Steps per second of each agent's crawl, one bar group per corpus size."""
    import numpy as np

    from gym_crawl.benchmarks.plotting import bars_figure

    agents = list(dict.fromkeys(c["agent"] for r in rows for c in r["crawls"] if "skipped" not in c))
    sps = {a: np.array([next((c["steps_per_second"] for c in r["crawls"] if c["agent"] == a and "skipped" not in c),
                             0.0) for r in rows]) for a in agents}
    bars_figure({"crawl speed": sps}, path, title="Crawl steps per second by corpus size (synthetic stand-in)",
                labels=[f"{r['pages']:,} pages" for r in rows], xlabel="corpus", ylabel="steps / s (wall)")


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="gym-crawl bench scale", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="the QUICK preset: 5,000 pages, 300 steps")
    ap.add_argument("--pages", default=None, help="comma-separated corpus sizes (full: 323000)")
    ap.add_argument("--steps", type=int, default=None, help="crawl steps per agent (full: 10,000)")
    ap.add_argument("--agents", default="best-first,lfa-async")
    ap.add_argument("--out", default="benchmarks/results/scale")
    args = ap.parse_args(argv)
    p = QUICK if args.quick else FULL
    sizes = [int(x) for x in args.pages.split(",") if x] if args.pages else list(p.pages)
    steps = args.steps or p.steps
    from tqdm.auto import tqdm

    rows = []
    for n in tqdm(sizes, desc="corpus sizes", disable=None):
        t = time.perf_counter()
        rows.append(run_size(n, steps, args.agents))
        rows[-1]["wall_seconds"] = round(time.perf_counter() - t, 1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from gym_crawl._io import atomic_write_bytes

    write_json_report(out / "scale.json", rows, "scale", args)
    md = _markdown(rows)
    atomic_write_bytes(out / "scale.md", (markdown_banner(args.quick) + md).encode())
    _plot(rows, out / "scale.png")
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
