"""Cost per crawl step of computing a feature set's candidate rows (µs), per corpus.

``gym-crawl bench feature_cost [--quick] [--corpus SPEC ...] [--features NAME ...] [--steps N] [--out DIR]``

A crawl (:class:`~gym_crawl.crawl.state.CrawlState`, ``labels`` reward when the topic has a label, else
``han2018``; episodes of ``--budget`` steps) fetches random frontier pages; after every fetch each feature set
computes the rows of 64 random frontier pages (``cand``, an env's K = 64 candidates) and of the whole frontier
(``frontier``, what a page-mode agent ranks) — so the incremental work of sets with per-crawl statistics
(``site``: the URL tables, directory / host counts and the page classifier's update for the new fetch) is timed
where it happens, in ``cand``, once per step. Reported: the median and mean µs per step of each, and the mean
frontier size. Figures only; nothing is asserted.

Writes ``feature_cost.json`` and ``feature_cost.md`` to ``--out`` (default
``benchmarks/results/feature_cost``).
"""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._console import ArgumentParser
from gym_crawl.benchmarks.report import markdown_banner, write_json_report

DEFAULT_OUT = Path("benchmarks") / "results" / "feature_cost"
DEFAULT_FEATURES = ("combined", "crawler", "site", "crawler+", "content")


def _topic(corpus: Any) -> Any:
    """``None`` (the env's default topic) when the corpus has one, else its largest label that resolves to a
    topic, seeded at the label's most in-linked page."""
    from gym_crawl.relevance import resolve_topic

    try:
        resolve_topic(None, corpus)
        return None
    except (KeyError, ValueError):
        pass
    for entry in corpus.label_seeds(top=None):
        try:
            return dataclasses.replace(resolve_topic(entry["label"], corpus), seeds=(entry["seed"],))
        except (KeyError, ValueError):
            continue
    return None


def measure(corpus: Any, features: list[str], steps: int, budget: int, seed: int = 0) -> list[dict[str, Any]]:
    """µs per step of each feature set on ``corpus`` over ``steps`` random steps of a crawl (topic: the corpus'
    default, else its largest label that has a topic)."""
    from gym_crawl.crawl.state import CrawlState
    from gym_crawl.features import get_feature_set
    from gym_crawl.relevance import get_reward_scheme, resolve_topic
    from gym_crawl.relevance.scorer import shared_scorer
    from gym_crawl.relevance.topic import seed_pages
    from gym_crawl.text.model import get_text_model

    topic = _topic(corpus) or resolve_topic(None, corpus)
    scorer = shared_scorer(get_text_model(corpus), topic)
    scheme = get_reward_scheme("labels" if topic.label else "han2018", labelled=bool(topic.label))
    seeds = seed_pages(topic, corpus)
    state = CrawlState(corpus)
    sets = {name: get_feature_set(name) for name in features}
    times: dict[str, dict[str, list[float]]] = {n: {"cand": [], "frontier": []} for n in features}
    fsizes: list[int] = []
    rng = np.random.default_rng(seed)
    done = budget
    for _ in range(steps):
        if done >= budget or state.fr_size == 0:
            state.reset(scorer, scheme)
            for p in seeds:
                state.fetch(int(p), count_step=False)
            done = 0
        frontier = np.asarray(state.frontier, np.int64)
        state.fetch(int(rng.choice(frontier)))
        done += 1
        frontier = np.asarray(state.frontier, np.int64)
        if not len(frontier):
            continue
        cand = rng.choice(frontier, size=min(64, len(frontier)), replace=False)
        fsizes.append(len(frontier))
        for name, fs in sets.items():
            t0 = time.perf_counter()
            fs.compute(state, cand)
            t1 = time.perf_counter()
            fs.compute(state, frontier)
            t2 = time.perf_counter()
            times[name]["cand"].append((t1 - t0) * 1e6)
            times[name]["frontier"].append((t2 - t1) * 1e6)
    rows = []
    for name in features:
        c, f = np.asarray(times[name]["cand"]), np.asarray(times[name]["frontier"])
        rows.append({"corpus": corpus.name, "features": name, "dim": sets[name].dim, "steps": len(c),
                     "cand_us_median": float(np.median(c)), "cand_us_mean": float(c.mean()),
                     "frontier_us_median": float(np.median(f)), "frontier_us_mean": float(f.mean()),
                     "mean_frontier": float(np.mean(fsizes))})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="gym-crawl bench feature_cost", description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", action="append", help="corpus spec (repeatable); default: synthetic")
    ap.add_argument("--features", nargs="+", default=list(DEFAULT_FEATURES), help="feature sets to time")
    ap.add_argument("--steps", type=int, default=2000, help="timed steps per corpus")
    ap.add_argument("--budget", type=int, default=300, help="steps per episode")
    ap.add_argument("--quick", action="store_true", help="synthetic-1000, 200 steps")
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    args = ap.parse_args(argv)
    if args.steps < 1 or args.budget < 2:
        raise SystemExit(f"--steps must be ≥ 1 and --budget ≥ 2, got {args.steps} and {args.budget}")
    from gym_crawl.corpus import load_corpus

    specs = args.corpus or (["synthetic-1000"] if args.quick else ["synthetic"])
    steps = 200 if args.quick else args.steps
    rows = []
    for spec in specs:
        corpus = load_corpus(spec)
        rows += measure(corpus, list(args.features), steps, args.budget)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_json_report(out / "feature_cost.json", rows, "feature_cost", args, quick=args.quick)
    lines = [markdown_banner(args.quick) + "| corpus | features | dim | µs/step, K=64 candidates (median / mean) "
             "| µs/step, whole frontier (median / mean) | mean frontier |", "|---|---|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['corpus']} | {r['features']} | {r['dim']} | {r['cand_us_median']:.0f} / "
                     f"{r['cand_us_mean']:.0f} | {r['frontier_us_median']:.0f} / {r['frontier_us_mean']:.0f} | "
                     f"{r['mean_frontier']:.0f} |")
    (out / "feature_cost.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
