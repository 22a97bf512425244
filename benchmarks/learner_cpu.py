"""CPU per page of the learners deployed live at 64 pages in flight, against best-first's, on 64 loopback hosts.

``gym-crawl bench learner_cpu [--agents best-first best-first-mix best-first-mix+pretrained] [--pages 500]
[--concurrency 64] [--repeats 2] [--out DIR]`` — ``learner_cpu.json`` into ``benchmarks/results/learner_cpu/``.

The synthetic web of ``--n-pages`` pages on ``--hosts`` domains is served by a process of its own (the
:class:`~gym_crawl.benchmarks.live_concurrency.LoopbackSite`: one loopback address per host, every response
delayed ``--latency`` s), and each agent crawls it live with :func:`~gym_crawl.agents.live_crawl.crawl_live` as
``gym-crawl crawl --live URL... --agent NAME --concurrency 64`` does — the agent as ``make_agent(NAME)`` builds it
(the shipped learner with its weights and the text model they record; the others with the live default text
model), topic ``geology``, scope ``any``, per-host delay ``--delay``, no global rate limit, no WARC. Measured per
crawl: the crawler process' CPU seconds over the crawl (``time.process_time``: every thread, fetching and HTML
extraction included) per page fetched with content, pages per wall second, and the relevant pages (the
topic-word reward's count). Each agent runs ``--repeats`` times (seeds 0, 1, …); the JSON holds every run and
the median per agent. CPU time holds under load better than wall time, but a machine shared with other jobs
still slows every run (caches, memory bandwidth): compare agents measured in one run.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_AGENTS", "DEFAULT_OUT", "main", "measure"]

DEFAULT_OUT = Path("benchmarks") / "results" / "learner_cpu"
DEFAULT_AGENTS = ("best-first", "best-first-mix", "best-first-mix+pretrained")


def measure(site: Any, agent_name: str, *, pages: int, concurrency: int, delay: float, seed: int) -> dict[str, Any]:
    """One live crawl of ``site`` by ``agent_name``: its CPU per page, pages per second and relevant pages."""
    from gym_crawl.agents import make_agent
    from gym_crawl.agents.live_crawl import crawl_live
    from gym_crawl.web.policy import FetchPolicy
    from gym_crawl.web.settings import LiveCrawlSettings

    settings = LiveCrawlSettings(seeds=tuple(sorted(site.roots.values())), topic="geology", max_pages=pages,
                                 seed=seed, scope="any", concurrency=concurrency, per_host=1,
                                 policy=FetchPolicy(delay=delay, rate=None))
    res = crawl_live(make_agent(agent_name), settings, progress=None, handle_signals=False)
    s = res.summary()
    return {"agent": agent_name, "seed": seed, "steps": s["steps"], "pages": s["pages"], "cpu_s": s["cpu_seconds"],
            "cpu_ms_per_page": s["cpu_ms_per_page"], "pages_per_s": s["pages_per_second"],
            "relevant_found": s["relevant_found"], "wall_s": s["wall_seconds"]}


def main(argv: list[str] | None = None) -> int:
    from gym_crawl import __version__
    from gym_crawl._io import atomic_write_json
    from gym_crawl.benchmarks.live_concurrency import LoopbackSite

    ap = argparse.ArgumentParser(prog="gym-crawl bench learner_cpu", description=__doc__.split("\n\n")[0])
    ap.add_argument("--agents", nargs="+", default=list(DEFAULT_AGENTS))
    ap.add_argument("--pages", type=int, default=500, help="steps of each crawl (default 500)")
    ap.add_argument("--concurrency", type=int, default=64, help="pages in flight (default 64)")
    ap.add_argument("--hosts", type=int, default=64)
    ap.add_argument("--n-pages", type=int, default=20_000, help="pages of the served synthetic web")
    ap.add_argument("--latency", type=float, default=0.05, help="seconds every response waits (default 0.05)")
    ap.add_argument("--delay", type=float, default=0.2, help="per-host politeness delay (default 0.2 s)")
    ap.add_argument("--repeats", type=int, default=2, help="crawls per agent (seeds 0, 1, ...)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    site = LoopbackSite(args.n_pages, args.hosts, args.latency)
    runs = []
    try:
        for rep in range(args.repeats):
            for name in args.agents:  # interleaved: a change of the machine's load hits every agent alike
                r = measure(site, name, pages=args.pages, concurrency=args.concurrency, delay=args.delay, seed=rep)
                runs.append(r)
                print(f"{name} seed {rep}: {r['cpu_ms_per_page']} ms CPU/page, {r['pages_per_s']} pages/s, "
                      f"{r['relevant_found']} relevant", flush=True)
    finally:
        site.stop()
    median = {a: statistics.median(r["cpu_ms_per_page"] for r in runs if r["agent"] == a) for a in args.agents}
    out = {"benchmark": "learner_cpu", "gym_crawl_version": __version__, "machine": platform.platform(),
           "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
           "median_cpu_ms_per_page": median, "runs": runs}
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(args.out / "learner_cpu.json", out)
    print(json.dumps(median))
    return 0
