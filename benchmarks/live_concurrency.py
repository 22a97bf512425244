"""Concurrent live crawling on loopback: pages per second, crawler CPU per page, politeness, and what a window of
pages in flight costs in harvest.

``gym-crawl bench live_concurrency [--hosts 64] [--latency 0.1] [--delay 1.0] [--pages 1500] [--concurrency 1 16 64]
[--harvest-seeds 5] [--quick]`` — JSON and PNG into ``benchmarks/results/live_concurrency/``.

**Throughput.** A separate process (so its CPU is not the crawler's) generates the synthetic web of
``--n-pages`` pages on ``--hosts`` domains and serves it with :func:`~gym_crawl.web.serve.server.serve_corpus`,
one host per loopback address (``127.0.0.2`` …), every response delayed ``--latency`` seconds. This process
crawls it live with :func:`~gym_crawl.agents.live_crawl.crawl_live`: best-first, seeded with every host's index
page, ``--pages`` steps (``--pages-one`` with one page in flight), ``concurrency`` W pages in flight and one per
host, the polite fetcher at ``--delay``
seconds per host and no global rate limit, the web's scope ``any``, the served corpus as the reference text
model, every request and response recorded to a WARC. The politeness bound is ``hosts / (delay + latency)``
pages per second. Measured: pages with content per wall second, the crawler process' CPU milliseconds per page
(``time.process_time`` over the crawl: every thread of this process, WARC writing and HTML extraction
included), and — from the server's own request log — the test site's politeness assertions: robots.txt first on
every host, one request at a time per host, every gap between a response's end and the host's next request at
least the delay, one keep-alive connection per host, the User-Agent.

**Harvest, offline.** On the same static corpus, the virtual clock of
:class:`~gym_crawl.corpus.page_source.SimulatedFetches` (the same latency and delay) replaces the network:
best-first, breadth-first and random crawls with (W, per-host limit) = (1, 1), (16, 1), (16, 4) and (16, 16),
``--harvest-topics`` topics × ``--harvest-seeds`` seeds, and the relevant pages (the topic's label) among the first
100/200/300 pages fetched — what the window costs at equal pages — and per virtual minute, with the pages per
virtual second it buys.

**Harvest, live.** In each throughput crawl, the relevant pages (the topic's label of the served page) among
the first 100/200/300 pages that landed after the seeds.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_OUT = Path("benchmarks") / "results" / "live_concurrency"
TOPIC = "geology"
#: the live settings' default focus rule (``LiveCrawlSettings.focus_slack``)
FOCUS_DEFAULT = 0.0
HARVEST_TOPICS = ("geology", "astronomy", "jazz", "cancer", "poetry")
HARVEST_AT = (100, 200, 300)


# ---------------------------------------------------------------------- the server process
def _corpus(n_pages: int, n_hosts: int) -> Any:
    from gym_crawl.webgen.synthetic import generate_synthetic

    return generate_synthetic(n_pages, seed=0, n_domains=n_hosts)


def rehost(corpus: Any, page_host: np.ndarray, n_hosts: int) -> Any:
    """``corpus`` with page ``p`` on host ``page_host[p]`` (hosts named ``host0`` … ``host<n_hosts - 1>``): the same
    pages, text and links, another split over hosts (what :func:`~gym_crawl.web.serve.server.serve_corpus` serves
    on one loopback address per host, and what the per-host limit counts)."""
    import dataclasses

    from gym_crawl.corpus.core import StringTable

    page_host = np.asarray(page_host, np.int32)
    if page_host.shape != (corpus.n_pages,) or page_host.min() < 0 or page_host.max() >= n_hosts:
        raise ValueError(f"page_host must give each of the {corpus.n_pages} pages a host in 0..{n_hosts - 1}")
    names = StringTable.from_strings([f"host{i}" for i in range(n_hosts)])
    return dataclasses.replace(corpus, page_domain=page_host, domains=names,
                               meta={**corpus.meta, "name": f"{corpus.name}-rehosted{n_hosts}"})


def topic_on_hosts(corpus: Any, relevant: np.ndarray, n_hosts: int, on: int = 2, seed: int = 0) -> Any:
    """A web where the pages of one topic sit on ``on`` of ``n_hosts`` hosts: each ``relevant`` page on one of hosts
    ``0..on-1``, every other page on one of the other hosts, at random (seeded) — a focused crawl's good pages
    all wait for the same few hosts."""
    if not 1 <= on < n_hosts:
        raise ValueError(f"on must be in 1..{n_hosts - 1}, got {on}")
    rng = np.random.default_rng(seed)
    relevant = np.asarray(relevant, bool)
    host = on + rng.integers(0, n_hosts - on, corpus.n_pages)
    host[relevant] = rng.integers(0, on, int(relevant.sum()))
    return rehost(corpus, host, n_hosts)


def spread_over_hosts(corpus: Any, n_hosts: int, seed: int = 0) -> Any:
    """A web whose pages sit on ``n_hosts`` hosts at random (seeded): every topic is spread over every host, so a
    focused crawl's own best choices spread over many hosts."""
    rng = np.random.default_rng(seed)
    return rehost(corpus, rng.integers(0, n_hosts, corpus.n_pages), n_hosts)


def make_web(n_pages: int, n_hosts: int, layout: str = "plain") -> Any:
    """The served web: ``"plain"`` the synthetic web as generated (a topic's pages on its subject's few hosts),
    ``"spread"`` its pages on hosts at random (:func:`spread_over_hosts`), ``"topic:<name>"`` the pages of topic
    ``<name>`` on two hosts and the rest on the others (:func:`topic_on_hosts`)."""
    base = _corpus(n_pages, n_hosts)
    if layout == "plain":
        return base
    if layout == "spread":
        return spread_over_hosts(base, n_hosts, seed=0)
    if layout.startswith("topic:"):
        return topic_on_hosts(base, truth_of(base, layout.split(":", 1)[1]), n_hosts, on=2, seed=0)
    raise ValueError(f"layout must be 'plain', 'spread' or 'topic:<name>', got {layout!r}")


def _serve(conn: Any, n_pages: int, n_hosts: int, latency: float, layout: str = "plain") -> None:
    """Serve the web until told to stop; then send the request log and this process' CPU seconds."""
    from gym_crawl.web.serve.server import serve_corpus

    corpus = make_web(n_pages, n_hosts, layout)
    with serve_corpus(corpus, n_hosts, bind="addresses", first_address=2, latency=latency) as site:
        conn.send({lab: site.url(lab, "/") for lab in site.hosts})
        cpu0 = time.process_time()
        while True:
            msg = conn.recv()
            if msg == "log":
                conn.send([(e.start, e.end, e.host, e.path, e.conn, e.status, e.user_agent, e.client_closed)
                           for e in site.requests()])
                site.log.clear()
            elif msg == "stop":
                conn.send(time.process_time() - cpu0)
                return


class LoopbackSite:
    """The synthetic web of ``n_pages`` pages on ``n_hosts`` loopback hosts (``127.0.0.2`` …), served in its own
    process (spawned: nothing of this process is inherited, and its CPU is not the crawler's).

    :param n_pages: pages of the generated synthetic web (seed 0,
        :func:`~gym_crawl.webgen.synthetic.generate_synthetic`).
    :param n_hosts: hosts (domains), one loopback address each.
    :param latency: seconds every response waits.
    :param layout: which pages sit on which host (:func:`make_web`).

    ``roots`` maps each host's label to its index page URL (the crawl's seeds); :meth:`log` returns and forgets
    the requests served so far; :meth:`stop` ends the process and returns its CPU seconds.
    """

    def __init__(self, n_pages: int, n_hosts: int, latency: float, layout: str = "plain"):
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, n_pages, n_hosts, latency, layout), daemon=True)
        self.proc.start()
        if not self.conn.poll(300):
            self.proc.kill()
            raise RuntimeError("the loopback site did not start within 300 s")
        self.roots: dict[str, str] = self.conn.recv()

    def log(self) -> list[tuple]:
        self.conn.send("log")
        return self.conn.recv()

    def stop(self) -> float:
        self.conn.send("stop")
        cpu = self.conn.recv()
        self.proc.join(30)
        return float(cpu)


def politeness(log: list[tuple], delay: float, agent: str) -> dict[str, Any]:
    """The test site's politeness assertions over a request log (start, end, host, path, conn, status, user
    agent, client_closed per request): per host, robots.txt first, no overlap, every gap from a response's end to
    the next request at least ``delay``, the connections used; the User-Agent of every request."""
    by_host: dict[str, list[tuple]] = defaultdict(list)
    for e in log:
        by_host[e[2]].append(e)
    min_gap = float("inf")
    overlaps = robots_not_first = 0
    conns = []
    for entries in by_host.values():
        entries.sort(key=lambda e: e[0])
        if entries[0][3] != "/robots.txt":
            robots_not_first += 1
        conns.append(len({e[4] for e in entries}))
        for a, b in zip(entries, entries[1:]):
            if b[0] < a[1]:
                overlaps += 1
            min_gap = min(min_gap, b[0] - a[1])
    bad_agent = sum(1 for e in log if not e[6].startswith(agent))
    return {"requests": len(log), "hosts": len(by_host), "robots_not_first": robots_not_first,
            "overlapping_requests": overlaps, "min_gap_s": round(min_gap, 4) if min_gap < float("inf") else None,
            "gap_below_delay": sum(1 for es in by_host.values() for a, b in zip(es, es[1:]) if b[0] - a[1] < delay),
            "max_connections_per_host": max(conns) if conns else 0, "wrong_user_agent": bad_agent,
            "ok": bool(log) and robots_not_first == 0 and overlaps == 0 and min_gap >= delay and bad_agent == 0}


# ---------------------------------------------------------------------- live runs
def live_run(server: LoopbackSite, corpus: Any, *, pages: int, concurrency: int, delay: float,
             agent: str = "best-first", seed: int = 0, warc_dir: Path, topic: str = TOPIC,
             focus_slack: float | None = FOCUS_DEFAULT) -> dict[str, Any]:
    """One live crawl of the served site; its throughput, CPU, the server's politeness verdict, and the relevant
    pages along the pages landed (``curve``) with the wall second each landed (``seconds``: the end of its
    response in the server's log, from the crawl's first request)."""
    from gym_crawl.agents import make_agent
    from gym_crawl.agents.live_crawl import crawl_live
    from gym_crawl.web.policy import FetchPolicy, default_user_agent
    from gym_crawl.web.settings import LiveCrawlSettings

    server.log()  # forget earlier runs' requests
    warc = warc_dir / f"crawl-w{concurrency}-{agent}-{seed}-{focus_slack}.warc.gz"
    seeds = sorted(server.roots.values())
    settings = LiveCrawlSettings(seeds=tuple(seeds), topic=topic, max_pages=pages, seed=seed, scope="any",
                                 concurrency=concurrency, per_host=1, policy=FetchPolicy(delay=delay, rate=None),
                                 focus_slack=focus_slack)
    res = crawl_live(make_agent(agent), settings, warc=warc, text=corpus, progress=None, handle_signals=False)
    log = server.log()
    s = res.summary()
    landed = res.landed_urls[len(seeds):]
    curve = relevant_curve(landed, corpus, truth_of(corpus, topic))
    pol = politeness(log, delay, default_user_agent())
    out = {"agent": agent, "topic": topic, "concurrency": concurrency, "per_host": 1, "focus_slack": focus_slack,
           "steps": s["steps"], "pages": s["pages"],
           "steps_without_page": s["steps_without_page"], "requests_wire": s["requests_wire"],
           "wall_s": s["wall_seconds"], "cpu_s": s["cpu_seconds"], "pages_per_s": s["pages_per_second"],
           "cpu_ms_per_page": s["cpu_ms_per_page"], "relevant_found": s["relevant_found"],
           "politeness": pol, "warc_bytes": warc.stat().st_size}
    for k in HARVEST_AT:
        out[f"relevant_at_{k}"] = int(curve[k - 1]) if len(curve) >= k else None
    out["curve"] = [int(x) for x in curve]
    out["seconds"] = landing_seconds(landed, log)
    print(f"live W={concurrency:<3} {agent} focus_slack={focus_slack}: {out['pages']} pages in {out['wall_s']:.1f} s = "
          f"{out['pages_per_s']:.1f} pages/s, {out['cpu_ms_per_page']} ms CPU/page, politeness "
          f"{'ok' if pol['ok'] else pol}", flush=True)
    return out


def landing_seconds(urls: list[str], log: list[tuple]) -> list[float | None]:
    """For each URL, when its response ended in the server's log, in seconds from the first request of the log
    (``None`` for a URL the log does not hold)."""
    from urllib.parse import urlsplit

    if not log:
        return [None] * len(urls)
    t0 = min(e[0] for e in log)
    end: dict[tuple[str, str], float] = {}
    for e in log:
        end.setdefault((e[2], e[3]), e[1] - t0)
    by_path: dict[str, float] = {}
    for (_, path), t in end.items():
        by_path.setdefault(path, t)
    return [round(by_path[urlsplit(u).path], 3) if urlsplit(u).path in by_path else None for u in urls]


def truth_of(corpus: Any, topic: str) -> np.ndarray:
    """(n_pages,) bool: the pages of the served corpus relevant to ``topic`` (its label)."""
    from gym_crawl.agents import make_agent, make_env_for

    env = make_env_for(make_agent("random"), corpus=corpus, topic=topic, max_episode_steps=1)
    env.reset(seed=0)
    truth = np.asarray(env.unwrapped.view.hidden_relevance(), bool)
    env.close()
    return truth


def relevant_curve(urls: list[str], corpus: Any, truth: np.ndarray) -> np.ndarray:
    """Cumulative relevant pages (``truth`` of the served page each URL is) along ``urls``."""
    from urllib.parse import urlsplit

    from gym_crawl.web.serve.server import corpus_paths

    page_of = {p: i for i, p in enumerate(corpus_paths(corpus))}
    flags = [bool(truth[page_of[urlsplit(u).path]]) if urlsplit(u).path in page_of else False for u in urls]
    return np.cumsum(np.asarray(flags, np.int64))


# ---------------------------------------------------------------------- offline harvest
HARVEST_SETTINGS = ((1, 1), (16, 1), (16, 4), (16, 16))
"""(W, per-host limit) of the offline harvest runs: one page in flight; 16 over 16 hosts; 16 with up to 4 queued
per host; 16 with no per-host limit (a busy host's pages wait in its queue)."""


def offline_harvest(corpus: Any, topics: tuple[str, ...], seeds: int, settings: tuple[tuple[int, int], ...],
                    latency: float, delay: float, budget: int,
                    focus_slack: float | None = FOCUS_DEFAULT) -> list[dict[str, Any]]:
    """Relevant pages (the topic's label) among the first pages fetched, and per virtual minute, for each
    ``(W, per_host)`` of ``settings`` on the virtual clock, with the window's ``focus_slack`` (``None``: off)."""
    from gym_crawl.agents import make_agent, make_env_for, run_episode

    rows = []
    for agent_name, n_seeds in (("best-first", 1), ("bfs", 1), ("random", seeds)):
        for topic in topics:
            for s in range(n_seeds):
                for w, m in settings:
                    agent = make_agent(agent_name)
                    env = make_env_for(agent, corpus=corpus, topic=topic, max_episode_steps=budget, concurrency=w,
                                       per_host=m, timing={"latency": latency, "delay": delay},
                                       focus_slack=float("inf") if focus_slack is None else focus_slack)
                    res = run_episode(env, agent, seed=s)
                    truth = env.unwrapped.view.hidden_relevance()
                    fetched = np.asarray(res.fetched)
                    curve = np.cumsum(truth[fetched[1:]])  # the seed aside
                    vnow = float(env.unwrapped.page_source.now)  # virtual seconds the crawl took
                    row = {"agent": agent_name, "topic": topic, "seed": s, "concurrency": w, "per_host": m,
                           "steps": res.steps, "pages": int(len(fetched) - 1), "virtual_s": round(vnow, 3),
                           "pages_per_virtual_s": round((len(fetched) - 1) / vnow, 2) if vnow else None,
                           "relevant_per_virtual_min": round(60 * int(curve[-1]) / vnow, 2) if vnow else None}
                    for k in HARVEST_AT:
                        row[f"relevant_at_{k}"] = int(curve[k - 1]) if len(curve) >= k else None
                    rows.append(row)
                    env.close()
    return rows


def summarize_harvest(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per agent and (W, per_host): mean ± sd over topics × seeds of the relevant pages at each equal page count
    and per virtual minute, and the ratio of the relevant pages to W = 1's over the same runs."""
    out = []
    by: dict[tuple[str, int, int], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by[(r["agent"], r["concurrency"], r["per_host"])].append(r)
    for agent, w, m in by:
        rs = by[(agent, w, m)]
        base = {(r["topic"], r["seed"]): r for r in by[(agent, 1, 1)]}
        row: dict[str, Any] = {"agent": agent, "concurrency": w, "per_host": m, "runs": len(rs),
                               "pages_per_virtual_s": round(statistics.mean(r["pages_per_virtual_s"] for r in rs), 2),
                               "relevant_per_virtual_min": round(statistics.mean(r["relevant_per_virtual_min"]
                                                                                 for r in rs), 2)}
        for k in HARVEST_AT:
            vals = [r[f"relevant_at_{k}"] for r in rs if r[f"relevant_at_{k}"] is not None]
            if vals:
                row[f"relevant_at_{k}"] = round(statistics.mean(vals), 1)
                row[f"relevant_at_{k}_sd"] = round(statistics.pstdev(vals), 1)
                b = [base[(r["topic"], r["seed"])][f"relevant_at_{k}"] for r in rs
                     if r[f"relevant_at_{k}"] is not None and (r["topic"], r["seed"]) in base]
                tot_b = sum(x for x in b if x is not None)
                row[f"ratio_at_{k}"] = round(sum(vals) / tot_b, 3) if tot_b else None
        out.append(row)
    return out


# ---------------------------------------------------------------------- report
def plot(result: dict[str, Any], path: Path) -> None:
    from gym_crawl.benchmarks.plotting import pyplot, save_png

    plt = pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    runs = [r for r in result["live"] if r["agent"] == "best-first"]
    ws = [r["concurrency"] for r in runs]
    a.bar([str(w) for w in ws], [r["pages_per_s"] for r in runs], color="#4c72b0")
    a.axhline(result["politeness_bound_pages_per_s"], color="k", ls="--", lw=1, label="politeness bound")
    a.axhline(50, color="#c44e52", ls=":", lw=1, label="target 50 pages/s")
    for i, r in enumerate(runs):
        a.text(i, r["pages_per_s"], f"{r['cpu_ms_per_page']} ms CPU/page", ha="center", va="bottom", fontsize=8)
    a.set_xlabel("pages in flight (W), one per host")
    a.set_ylabel("pages / s (wall)")
    a.set_title(f"live, {result['hosts']} loopback hosts, latency {result['latency']} s, delay {result['delay']} s")
    a.legend(fontsize=8)
    summ = result["harvest_offline_summary"]
    agents = list(dict.fromkeys(r["agent"] for r in summ))
    sets = list(dict.fromkeys((r["concurrency"], r["per_host"]) for r in summ))
    x = np.arange(len(agents))
    width = 0.8 / len(sets)
    for j, (w, m) in enumerate(sets):
        pick = [next((r for r in summ if r["agent"] == ag and (r["concurrency"], r["per_host"]) == (w, m)), {})
                for ag in agents]
        b.bar(x + width * j, [p.get("relevant_at_300", 0) for p in pick], width,
              yerr=[p.get("relevant_at_300_sd", 0) for p in pick], label=f"W = {w}, per host {m}")
    b.set_xticks(x + 0.4 - width / 2, agents)
    b.set_ylabel("relevant pages among the first 300")
    b.set_title("harvest at equal pages (offline, virtual clock)")
    b.legend(fontsize=7)
    fig.tight_layout()
    save_png(fig, path)


# ---------------------------------------------------------------------- focus under concurrency
def focus_study(args: argparse.Namespace) -> dict[str, Any]:
    """Live, on loopback: (1) a web whose topic sits on two of ``--hosts`` hosts — best-first at each
    ``--focus-concurrency`` W with the default focus rule, and at the largest W with the rule off — relevant pages
    along the pages fetched and along wall seconds; (2) the same pages spread over every host at random — pages per
    second at the largest W with the default rule, ``focus_slack`` 0.5, and off, against the politeness bound."""
    out: dict[str, Any] = {"hosts": args.hosts, "n_pages": args.n_pages, "latency": args.latency, "delay": args.delay,
                           "topic": args.focus_topic, "politeness_bound_pages_per_s":
                               round(args.hosts / (args.delay + args.latency), 1),
                           "load_average_before": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count()}
    w_max = max(args.focus_concurrency)
    focused = [(w, FOCUS_DEFAULT, args.focus_pages) for w in args.focus_concurrency]
    focused.append((w_max, None, args.focus_pages))
    spread = [(w_max, slack, args.spread_pages) for slack in (FOCUS_DEFAULT, 0.5, None)]
    for layout, key, runs in ((f"topic:{args.focus_topic}", "focused", focused), ("spread", "spread", spread)):
        web = make_web(args.n_pages, args.hosts, layout)
        truth = truth_of(web, args.focus_topic)
        hosts_of_topic = int(len(np.unique(np.asarray(web.page_domain)[truth])))
        server = LoopbackSite(args.n_pages, args.hosts, args.latency, layout)
        try:
            with tempfile.TemporaryDirectory(prefix="gym-crawl-live-focus-") as tmp:
                out[key] = {"layout": layout, "hosts_with_topic": hosts_of_topic, "runs": [
                    live_run(server, web, pages=pages, concurrency=w, delay=args.delay, warc_dir=Path(tmp),
                             topic=args.focus_topic, focus_slack=slack) for w, slack, pages in runs]}
        finally:
            out[key]["server_cpu_s"] = round(server.stop(), 2)
    base = {r["concurrency"]: r for r in out["focused"]["runs"] if r["concurrency"] == 1}
    one = base[1]["curve"] if 1 in base else None
    for r in out["focused"]["runs"]:
        n = min(len(r["curve"]), len(one)) if one else 0
        r["equal_pages"] = n
        r["relevant_vs_one_at_equal_pages"] = round(r["curve"][n - 1] / one[n - 1], 3) if n and one[n - 1] else None
    for r in out["spread"]["runs"]:
        r["fraction_of_bound"] = round(r["pages_per_s"] / out["politeness_bound_pages_per_s"], 3)
    out["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    return out


def plot_focus(result: dict[str, Any], path: Path) -> None:
    """Relevant pages against pages fetched and against wall seconds (the focused web), and pages per second against
    the politeness bound (the spread web)."""
    from gym_crawl.benchmarks.plotting import pyplot, save_png

    plt = pyplot()
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(15, 4.2))
    for r in result["focused"]["runs"]:
        label = f"W = {r['concurrency']}" + (", focus off" if r["focus_slack"] is None else "")
        ls = "--" if r["focus_slack"] is None else "-"
        xs = np.arange(1, len(r["curve"]) + 1)
        a.plot(xs, r["curve"], ls, label=label)
        t = [(s, y) for s, y in zip(r["seconds"], r["curve"]) if s is not None]
        b.plot([s for s, _ in t], [y for _, y in t], ls, label=label)
    f = result["focused"]
    a.set_xlabel("pages fetched")
    a.set_ylabel(f"relevant pages ({result['topic']})")
    a.set_title(f"topic on {f['hosts_with_topic']} of {result['hosts']} loopback hosts: equal pages")
    b.set_xlabel("wall seconds")
    b.set_title("the same crawls against time")
    for ax in (a, b):
        ax.legend(fontsize=8)
    runs = result["spread"]["runs"]
    names = [("default " if r["focus_slack"] == FOCUS_DEFAULT else "") + f"slack {r['focus_slack']}"
             if r["focus_slack"] is not None else "focus off" for r in runs]
    c.bar(names, [r["pages_per_s"] for r in runs], color="#4c72b0")
    c.axhline(result["politeness_bound_pages_per_s"], color="k", ls="--", lw=1, label="politeness bound")
    c.axhline(0.8 * result["politeness_bound_pages_per_s"], color="#c44e52", ls=":", lw=1, label="0.8 of the bound")
    c.set_ylabel("pages / s (wall)")
    c.set_title(f"pages spread over {result['hosts']} hosts, W = {runs[0]['concurrency']}")
    c.legend(fontsize=8)
    fig.tight_layout()
    save_png(fig, path)


def _slack(text: str) -> float | None:
    if text == "off":
        return None
    v = float(text)
    if not v >= 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"a number >= 0 or 'off', got {text!r}")
    return v


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="gym-crawl bench live_concurrency", description=__doc__.split("\n")[0])
    ap.add_argument("--hosts", type=int, default=64)
    ap.add_argument("--n-pages", type=int, default=20_000, help="pages of the served synthetic web")
    ap.add_argument("--latency", type=float, default=0.1, help="seconds every response waits (default 0.1)")
    ap.add_argument("--delay", type=float, default=1.0, help="per-host politeness delay (default 1 s)")
    ap.add_argument("--pages", type=int, default=1500, help="steps of each throughput crawl with W > 1")
    ap.add_argument("--pages-one", type=int, default=300,
                    help="steps of the throughput crawl with W = 1 (about one page per latency: slow)")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    ap.add_argument("--harvest-pages", type=int, default=320, help="steps of each harvest crawl")
    ap.add_argument("--harvest-topics", nargs="+", default=list(HARVEST_TOPICS))
    ap.add_argument("--harvest-seeds", type=int, default=5, help="seeds of the random agent's harvest runs")
    ap.add_argument("--quick", action="store_true", help="8 hosts, 2,000 pages, short crawls (a smoke run)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--focus-slack", type=_slack, default=FOCUS_DEFAULT, metavar="S|off",
                    help="the throughput crawls' focus rule (default: the live default, 0; 'off' fills every free "
                         "slot, as every crawl did before the rule)")
    ap.add_argument("--focus", action="store_true",
                    help="run the focus study instead (live_focus.json / .png): relevant pages at equal pages and "
                         "over time on a web whose topic sits on two hosts, pages/s on a web spread over all hosts")
    ap.add_argument("--focus-topic", default="cancer", help="the focus study's topic (default cancer)")
    ap.add_argument("--focus-pages", type=int, default=200, help="steps of each focus crawl (default 200)")
    ap.add_argument("--focus-concurrency", type=int, nargs="+", default=[1, 8, 64])
    ap.add_argument("--spread-pages", type=int, default=1500, help="steps of each spread-web crawl (default 1500)")
    args = ap.parse_args(argv)
    if args.focus:
        if args.quick:
            args.hosts, args.n_pages, args.focus_pages, args.spread_pages = 8, 2000, 40, 80
            args.focus_concurrency = [1, 8]
        from gym_crawl.benchmarks.report import write_json_report

        res = focus_study(args)
        args.out.mkdir(parents=True, exist_ok=True)
        path = write_json_report(args.out / "live_focus.json", res, "live_concurrency", args)
        plot_focus(res, args.out / "live_focus.png")
        print(f"written to {path} and live_focus.png")
        return 0
    if args.quick:
        args.hosts, args.n_pages, args.pages, args.pages_one, args.concurrency = 8, 2000, 60, 40, [1, 8]
        args.harvest_pages, args.harvest_topics, args.harvest_seeds = 120, ["geology"], 2
    corpus = _corpus(args.n_pages, args.hosts)
    load = os.getloadavg()
    result: dict[str, Any] = {"hosts": args.hosts, "n_pages": args.n_pages, "latency": args.latency,
                              "delay": args.delay, "politeness_bound_pages_per_s":
                                  round(args.hosts / (args.delay + args.latency), 1),
                              "load_average_before": [round(x, 2) for x in load], "cpus": os.cpu_count()}
    settings = HARVEST_SETTINGS if not args.quick else ((1, 1), (8, 1), (8, 8))
    t = time.time()
    rows = offline_harvest(corpus, tuple(args.harvest_topics), args.harvest_seeds, settings, args.latency,
                           args.delay, args.harvest_pages, args.focus_slack)
    result["harvest_offline"] = rows
    result["harvest_offline_summary"] = summarize_harvest(rows)
    for r in result["harvest_offline_summary"]:
        print("offline", r, flush=True)
    print(f"offline harvest: {time.time() - t:.0f} s", flush=True)
    server = LoopbackSite(args.n_pages, args.hosts, args.latency)
    try:
        with tempfile.TemporaryDirectory(prefix="gym-crawl-live-concurrency-") as tmp:
            result["live"] = [live_run(server, corpus, pages=args.pages if w > 1 else args.pages_one, concurrency=w,
                                       delay=args.delay, warc_dir=Path(tmp), focus_slack=args.focus_slack)
                              for w in args.concurrency]
    finally:
        result["server_cpu_s"] = round(server.stop(), 2)
    result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    from gym_crawl.benchmarks.report import write_json_report

    args.out.mkdir(parents=True, exist_ok=True)
    path = write_json_report(args.out / "live_concurrency.json", result, "live_concurrency", args)
    plot(result, args.out / "live_concurrency.png")
    print(f"written to {path} and live_concurrency.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
