"""One account of a live crawl: the summary, the replay and the WARC's records agree, and what the pages in flight
at the last step cost.

``gym-crawl bench live_account [--pages 200] [--seeds 3] [--agents best-first best-first-mix] [--hosts 4]
[--latency 0.1] [--delay 0.5] [--concurrency 8] [--per-host 2] [--quick]`` — JSON into
``benchmarks/results/live_account/``.

The generated web ``synthetic-2000`` is served on loopback as ``--hosts`` hosts, every response ``--latency``
seconds late (:func:`~gym_crawl.web.serve.server.serve_corpus`). Each agent crawls it live from every host's index
page through :func:`~gym_crawl.agents.live_crawl.crawl_live` with :class:`~gym_crawl.web.settings.LiveCrawlSettings`
(topic ``geology``, ``--pages`` steps, ``--concurrency`` pages in flight, ``--per-host`` per host, the polite
fetcher at ``--delay`` seconds per host, no global rate, the served corpus as the reference text model), recorded
to a WARC. Per crawl: the summary's ``reward_sum`` and ``reset_reward``; the WARC's account
(:func:`~gym_crawl.agents.live_crawl.read_account`: the reset record plus the decision records) and the decision
records alone; the replay's ``reward_sum`` (:meth:`~gym_crawl.web.live.LiveWeb.from_warc`, the same agent, seed and
settings, no request); the pages in flight at the last step (``after_last_step``: cancelled before the wire, or
fetched after the last step) against the requests on the wire; and the pages the compiled WARC
(:func:`~gym_crawl.web.warc.load_warc`) and the replayed corpus mark as fetched after the last step.
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

DEFAULT_OUT = Path("benchmarks") / "results" / "live_account"
TOPIC = "geology"


def crawl_once(corpus: Any, site: Any, agent: str, seed: int, args: argparse.Namespace, warc: Path) -> dict[str, Any]:
    """One live crawl, its replay and its WARC read back: the figures of the module docstring."""
    from gym_crawl.agents import make_agent, make_env_for, run_episode
    from gym_crawl.agents.live_crawl import crawl_live, read_account
    from gym_crawl.web.live import LiveWeb, replay_corpus
    from gym_crawl.web.policy import FetchPolicy
    from gym_crawl.web.settings import LiveCrawlSettings
    from gym_crawl.web.warc import load_warc
    from gym_crawl.web.warc_io import read_decisions

    settings = LiveCrawlSettings(seeds=tuple(site.url(h, "/") for h in site.hosts), topic=TOPIC,
                                 max_pages=args.pages, seed=seed, scope="any", concurrency=args.concurrency,
                                 per_host=args.per_host, policy=FetchPolicy(delay=args.delay, rate=None))
    n0 = len(site.log)
    live = crawl_live(make_agent(agent), settings, warc=warc, text=corpus, progress=None, handle_signals=False)
    s = live.summary()
    n1 = len(site.log)
    web = LiveWeb.from_warc(warc, text=corpus)
    replayed = run_episode(make_env_for(make_agent(agent), corpus=web, **settings.env_keywords()), make_agent(agent),
                           seed=seed)
    web.close()
    account = read_account(warc)
    compiled = load_warc(warc, cache=False, workers=1)
    return {"agent": agent, "seed": seed, "steps": s["steps"], "pages": s["pages"],
            "reward_sum": s["reward_sum"], "reset_reward": s["reset_reward"],
            "records_reward_sum": account["reward_sum"],
            "decision_records_only": sum(float(d["reward"]) for d in read_decisions(warc)),
            "replay_reward_sum": replayed.reward_sum, "replay_requests": len(site.log) - n1,
            "after_last_step": s["after_last_step"], "replay_after_last_step": web.counters()["after_last_step"],
            "requests_wire": s["requests_wire"], "server_requests": n1 - n0,
            "compiled_fetched_after_last_step": len(compiled.meta.get("fetched_after_last_step", [])),
            "replay_corpus_fetched_after_last_step": len(replay_corpus(warc, text=corpus).meta[
                "fetched_after_last_step"]),
            "wall_s": s["wall_seconds"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="gym-crawl bench live_account", description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=200)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--agents", nargs="+", default=["best-first", "best-first-mix"])
    ap.add_argument("--hosts", type=int, default=4)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--delay", type=float, default=0.5)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--per-host", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="one agent, one seed, 40 pages (a smoke run)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    if args.quick:
        args.agents, args.seeds, args.pages = args.agents[:1], 1, 40
    from gym_crawl.corpus import load_corpus
    from gym_crawl.web.serve.server import serve_corpus

    corpus = load_corpus("synthetic-2000")
    rows: list[dict[str, Any]] = []
    t0 = time.time()
    with serve_corpus(corpus, n_hosts=args.hosts, latency=args.latency) as site, \
            tempfile.TemporaryDirectory(prefix="gym-crawl-live-account-") as tmp:
        for agent in args.agents:
            for seed in range(args.seeds):
                row = crawl_once(corpus, site, agent, seed, args, Path(tmp) / f"{agent}-{seed}.warc.gz")
                rows.append(row)
                a, marked = row["after_last_step"], row["compiled_fetched_after_last_step"]
                print(f"{agent:<16} seed {seed}: reward_sum live {row['reward_sum']:g} replay "
                      f"{row['replay_reward_sum']:g} records {row['records_reward_sum']:g} (decisions alone "
                      f"{row['decision_records_only']:g}); in flight at the end {a['in_flight']}: "
                      f"{a['cancelled']} cancelled, {a['fetched']} fetched (compiled {marked}); "
                      f"{row['requests_wire']} requests", flush=True)
    agree = all(r["reward_sum"] == r["replay_reward_sum"] == r["records_reward_sum"] for r in rows)
    marks = all(r["after_last_step"]["fetched"] == r["compiled_fetched_after_last_step"]
                == r["replay_corpus_fetched_after_last_step"] and r["after_last_step"] == r["replay_after_last_step"]
                for r in rows)
    result = {"settings": {k: getattr(args, k) for k in ("pages", "seeds", "agents", "hosts", "latency", "delay",
                                                          "concurrency", "per_host")},
              "rows": rows, "one_account": agree, "marks_agree": marks,
              "in_flight_at_end": sum(r["after_last_step"]["in_flight"] for r in rows),
              "cancelled_at_end": sum(r["after_last_step"]["cancelled"] for r in rows),
              "fetched_after_last_step": sum(r["after_last_step"]["fetched"] for r in rows),
              "requests_wire": sum(r["requests_wire"] for r in rows),
              "seconds": round(time.time() - t0, 1), "load_average": [round(x, 2) for x in os.getloadavg()]}
    from gym_crawl.benchmarks.report import write_json_report

    args.out.mkdir(parents=True, exist_ok=True)
    path = write_json_report(args.out / "live_account.json", result, "live_account", args)
    same = sum(1 for r in rows if r["reward_sum"] == r["replay_reward_sum"] == r["records_reward_sum"])
    print(f"one account (summary = replay = records) in {same} of {len(rows)} crawls; pages in flight at the last "
          f"step: {result['in_flight_at_end']}, of them {result['cancelled_at_end']} cancelled before the wire and "
          f"{result['fetched_after_last_step']} fetched after it ({result['requests_wire']} requests in all); "
          f"written to {path}")
    return 0 if agree and marks else 1


if __name__ == "__main__":
    raise SystemExit(main())
