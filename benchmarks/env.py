"""Env throughput, reset time, memory, and the baselines' relevant pages on Wikispeedia topics.

``gym-crawl bench env [--quick] [--out DIR] [--wikispeedia PATH] [--steps N]``

Measures (figures, never asserted in tests):

* env steps/s of a random agent through ``env.step`` in the Discrete(K=64) slot mode and in the
  page action mode (Discrete(n_pages)), on the default synthetic corpus and on Wikispeedia, plus a profile of where
  a step's time goes;
* ``reset`` seconds (first reset with per-topic setup, and a warm reset);
* RSS of a process holding a Wikispeedia env;
* relevant pages found in 500 steps by random, BFS and best-first — and the greedy oracle's
  upper bound — for Geology, Cancer, Poetry and Sports (labels as relevance).

Writes ``env.json``, ``env.md`` and ``env_topics.png`` to ``--out`` (default
``benchmarks/results/env``).
"""
from __future__ import annotations

import cProfile
import pstats
import resource
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._console import ArgumentParser
from gym_crawl.benchmarks.report import markdown_banner, write_json_report

DEFAULT_WIKISPEEDIA = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikispeedia"
TOPICS = ("geology", "cancer", "poetry", "sports")
AGENTS = ("random", "bfs", "best-first", "oracle")


def _rss_mb() -> float:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def throughput(corpus: Any, steps: int, k: int = 64, seed: int = 0) -> dict[str, Any]:
    """Random valid actions through ``env.step`` in both action modes: slots of the Discrete(K) env, and
    frontier page ids of the page-mode (Discrete(n_pages)) env."""
    from gym_crawl.wrappers.factory import make_env

    env = make_env("WikiCrawl-v0", corpus=corpus, max_candidates=k, max_episode_steps=steps + 1)
    t0 = time.perf_counter()
    obs, info = env.reset(seed=seed)
    first_reset = time.perf_counter() - t0
    t0 = time.perf_counter()
    env.reset(seed=seed + 1)
    warm_reset = time.perf_counter() - t0
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    n = 0
    t0 = time.perf_counter()
    c0 = time.process_time()
    for _ in range(steps):
        valid = np.flatnonzero(info["action_mask"])
        obs, r, term, trunc, info = env.step(int(valid[rng.integers(len(valid))]))
        n += 1
        if term or trunc:
            obs, info = env.reset(seed=seed + n)
    slot_sps = n / (time.perf_counter() - t0)
    slot_cpu_sps = n / max(time.process_time() - c0, 1e-9)
    penv = make_env("WikiCrawl-v0", corpus=corpus, action="page", observation="state", max_episode_steps=steps + 1)
    pbase = penv.unwrapped
    penv.reset(seed=seed)
    t0 = time.perf_counter()
    c0 = time.process_time()
    m = 0
    for _ in range(steps):
        F = pbase.view.frontier_pages()
        if len(F) == 0:
            break
        _, _, term, trunc, _ = penv.step(int(F[rng.integers(len(F))]))
        m += 1
        if term or trunc:
            break
    page_sps = m / (time.perf_counter() - t0)
    page_cpu_sps = m / max(time.process_time() - c0, 1e-9)
    penv.close()
    base = env.unwrapped
    prof = cProfile.Profile()
    env.reset(seed=seed)
    prof.enable()
    for _ in range(min(steps, 1000)):
        valid = np.flatnonzero(base.action_masks())
        if not len(valid):
            break
        _, _, term, trunc, _ = env.step(int(valid[rng.integers(len(valid))]))
        if term or trunc:
            break
    prof.disable()
    st = pstats.Stats(prof)
    total = sum(v[2] for v in st.stats.values())  # type: ignore[attr-defined]
    top = sorted(((v[3], f"{Path(k[0]).name}:{k[2]}") for k, v in st.stats.items()  # type: ignore[attr-defined]
                  if "gym_crawl" in k[0]), reverse=True)[:8]
    return {"corpus": corpus.name, "pages": corpus.n_pages, "links": corpus.n_links, "K": k,
            "features": base.view.feature_set_name, "d": base.view.feature_dim, "reducer": base.view.reducer_name,
            "steps": n, "slot_steps_per_second": round(slot_sps, 1), "page_steps_per_second": round(page_sps, 1),
            "slot_steps_per_cpu_second": round(slot_cpu_sps, 1), "page_steps_per_cpu_second": round(page_cpu_sps, 1),
            "first_reset_seconds": round(first_reset, 4), "warm_reset_seconds": round(warm_reset, 4),
            "profile_cumulative_share": {name: round(t / total, 3) for t, name in top}}


def topic_table(corpus: Any, steps: int, seeds: int) -> list[dict[str, Any]]:
    from gym_crawl.agents import agent_class, make_agent, make_env_for, run_episode

    rows = []
    for topic in TOPICS:
        for name in AGENTS:
            agent_cls = agent_class(name)
            env = make_env_for(name, env_id="WikiCrawl-v0", corpus=corpus, topic=topic, reward="labels",
                               max_episode_steps=steps)
            found = [run_episode(env, make_agent(name), seed=s).relevant_found for s in range(seeds)]
            rows.append({"topic": topic, "agent": name, "steps": steps, "relevant_found_mean": float(np.mean(found)),
                         "relevant_found_std": float(np.std(found)), "runs": seeds,
                         "label_pages": int(env.unwrapped.view.current_topic.label_mask(corpus).sum()),
                         "hidden_information": bool(agent_cls.uses_hidden_information)})
    return rows


def _markdown(res: dict[str, Any]) -> str:
    out = ["# Env benchmark", "", "Random agent. Wall-clock steps/s depend on machine load; steps per CPU-second "
           "measure one core's cost.", "",
           "| corpus | pages | K | steps/s slot mode (wall / CPU) | steps/s page mode (wall / CPU) | first reset s | "
           "warm reset s |",
           "|---|---|---|---|---|---|---|"]
    for t in res["throughput"]:
        out.append(f"| {t['corpus']} | {t['pages']} | {t['K']} | {t['slot_steps_per_second']} / "
                   f"{t['slot_steps_per_cpu_second']} | {t['page_steps_per_second']} / "
                   f"{t['page_steps_per_cpu_second']} | "
                   f"{t['first_reset_seconds']} | {t['warm_reset_seconds']} |")
    if res.get("wikispeedia_rss_mb") is not None:
        out += ["", f"RSS of the process holding a Wikispeedia env: {res['wikispeedia_rss_mb']:.0f} MB"]
    if res.get("topics"):
        out += ["", f"## Relevant pages in {res['topics'][0]['steps']} steps (Wikispeedia, label relevance)", "",
                "| topic | labelled pages | " + " | ".join(AGENTS) + " |", "|---|---|" + "---|" * len(AGENTS)]
        for topic in TOPICS:
            rows = {r["agent"]: r for r in res["topics"] if r["topic"] == topic}
            if rows:
                cells = [f"{rows[a]['relevant_found_mean']:.1f} ± {rows[a]['relevant_found_std']:.1f}" for a in AGENTS]
                out.append(f"| {topic} | {next(iter(rows.values()))['label_pages']} | " + " | ".join(cells) + " |")
        out += ["", "`oracle` reads hidden labels: an upper bound, not a crawler."]
    return "\n".join(out) + "\n"


def _plot(res: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = res.get("topics") or []
    if not rows:
        return
    fig, ax = plt.subplots(figsize=(8, 4))
    w = 0.8 / len(AGENTS)
    for i, a in enumerate(AGENTS):
        vals = [next((r["relevant_found_mean"] for r in rows if r["topic"] == t and r["agent"] == a),
                     0) for t in TOPICS]
        errs = [next((r["relevant_found_std"] for r in rows if r["topic"] == t and r["agent"] == a), 0) for t in TOPICS]
        ax.bar(np.arange(len(TOPICS)) + i * w, vals, w, yerr=errs, label=a)
    ax.set_xticks(np.arange(len(TOPICS)) + 0.4 - w / 2, TOPICS)
    ax.set_ylabel(f"relevant pages in {rows[0]['steps']} steps")
    ax.set_title("Wikispeedia baselines (oracle = upper bound)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


@dataclass(frozen=True)
class Preset:
    """A named configuration; the matching flags override its fields."""

    name: str
    steps: int
    topic_steps: int
    seeds: int


QUICK = Preset("quick", steps=300, topic_steps=100, seeds=1)  #: CI-sized
FULL = Preset("full", steps=5000, topic_steps=500, seeds=5)


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="gym-crawl bench env", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="the QUICK preset (CI-sized)")
    ap.add_argument("--out", default="benchmarks/results/env")
    ap.add_argument("--wikispeedia", default=str(DEFAULT_WIKISPEEDIA))
    ap.add_argument("--corpus", default="synthetic", help="corpus for the throughput run (default synthetic)")
    ap.add_argument("--steps", type=int, default=None, help="steps of the throughput runs (full 5000)")
    ap.add_argument("--topic-steps", type=int, default=None, help="steps of the topic table (full 500)")
    ap.add_argument("--seeds", type=int, default=None, help="runs per agent and topic (full 5)")
    args = ap.parse_args(argv)
    from tqdm.auto import tqdm

    from gym_crawl.corpus import load_corpus

    p = QUICK if args.quick else FULL
    p = Preset(p.name, args.steps or p.steps, args.topic_steps or p.topic_steps, args.seeds or p.seeds)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    res: dict[str, Any] = {"preset": p.name, "throughput": [], "topics": [], "wikispeedia_rss_mb": None}
    jobs = [args.corpus] + ([args.wikispeedia] if Path(args.wikispeedia).exists() else [])
    for spec in tqdm(jobs, desc="throughput", disable=None):
        c = load_corpus(spec)
        res["throughput"].append(throughput(c, p.steps))
        if spec == args.wikispeedia:
            res["wikispeedia_rss_mb"] = _rss_mb()
            res["topics"] = topic_table(c, p.topic_steps, p.seeds)
    if len(jobs) == 1:
        res["note"] = f"Wikispeedia not found at {args.wikispeedia}: topic table skipped"
    from gym_crawl._io import atomic_write_bytes

    write_json_report(out / "env.json", res, "env", args)
    atomic_write_bytes(out / "env.md", (markdown_banner(args.quick) + _markdown(res)).encode())
    _plot(res, out / "env_topics.png")
    print(_markdown(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
