"""CPU cost of the package's own fixed-order arithmetic: text model, score tables, lazy scoring, env steps.

``gym-crawl bench arith [--corpus NAME_OR_PATH ...] [--baseline REV] [--repeats N] [--out DIR]``

Every figure is CPU seconds (``time.process_time``) of one process with one BLAS / OpenMP thread, so that a
busy machine changes it little and BLAS's threads do not hide work; each measurement runs in a fresh process,
the current package and (``--baseline REV``: the package as of git revision ``REV``, extracted with
``git archive`` and put first on ``PYTHONPATH``) the baseline alternating, ``--repeats`` times; the report gives
the median and the baseline / current ratio (> 1: the current code is faster):

* **text model**: ``TextModel.build`` (IDF, PPMI, the randomized SVD of the word vectors);
* **score fill**: ``fill_topic_tables`` of four topics (page and link tables), the best of 5 fills after one
  warm-up fill;
* **lazy scoring**: ``PageTable.ensure`` and ``LinkTable.ensure`` of 2,000 random pages one by one (what a
  crawl step does on a corpus too large to score up front);
* **env steps**: random valid slots of ``WikiCrawl-v0`` (``topk`` and ``tree`` reducers, K = 64, ``combined``
  features), 3,000 steps after 1,500 warm-up steps, as steps per CPU-second.

Writes ``arith.json``, ``arith.md`` and ``arith.png`` to ``--out`` (default ``benchmarks/results/arith``).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from gym_crawl.benchmarks.report import markdown_banner, write_json_report

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = Path("benchmarks") / "results" / "arith"
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

#: One measurement, ``python -c WORKER corpus``: public API only, so it runs against any revision.
WORKER = r'''
import json, sys, time
import numpy as np
import gymnasium as gym
import gym_crawl  # noqa: F401
from gym_crawl.corpus import load_corpus
from gym_crawl.relevance.scorer import TopicScorer, fill_topic_tables
from gym_crawl.relevance.topic import resolve_topic
from gym_crawl.text.model import TextModel
spec = sys.argv[1]
c = load_corpus(spec)
cpu = time.process_time
t0 = cpu(); tm = TextModel.build(c, progress=False); build = cpu() - t0
topics = list(c.meta.get("topics", {}))[:4]
fills = []
for _ in range(6):
    scorers = [TopicScorer(tm, resolve_topic(t, c)) for t in topics]
    t0 = cpu(); fill_topic_tables(scorers); fills.append(cpu() - t0)
sc = TopicScorer(tm, resolve_topic(topics[0], c))
pages = np.random.default_rng(0).choice(c.n_pages, size=min(2000, c.n_pages), replace=False).tolist()
pt, lt = sc.page_table(), sc.link_table()
t0 = cpu()
for p in pages:
    pt.ensure(p)
    lt.ensure(np.array([p]))
lazy = cpu() - t0
steps = {}
for reducer in ("topk", "tree"):
    env = gym.make("WikiCrawl-v0", corpus=c, reducer=reducer, max_candidates=64, features="combined",
                   max_episode_steps=1000)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=0)
    def run(n):
        global obs, info
        for _ in range(n):
            obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            if term or trunc:
                obs, info = env.reset(seed=int(rng.integers(1 << 30)))
    run(1500)
    t0 = cpu(); run(3000); steps[reducer] = 3000 / (cpu() - t0)
    env.close()
print(json.dumps({"text_model_s": build, "score_fill_s": min(fills[1:]), "lazy_scoring_s": lazy,
                  "topk_steps_per_cpu_s": steps["topk"], "tree_steps_per_cpu_s": steps["tree"]}))
'''
#: measure → True when larger is better
MEASURES = {"text_model_s": False, "score_fill_s": False, "lazy_scoring_s": False, "topk_steps_per_cpu_s": True,
            "tree_steps_per_cpu_s": True}
_SHORT = {"text_model_s": "text model", "score_fill_s": "score fill", "lazy_scoring_s": "lazy scoring",
          "topk_steps_per_cpu_s": "topk steps", "tree_steps_per_cpu_s": "tree steps"}


def _run(corpus: str, pythonpath: str | None) -> dict[str, float]:
    env = {**os.environ, **ONE_THREAD}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    p = subprocess.run([sys.executable, "-c", WORKER, corpus], capture_output=True, text=True, env=env,
                       cwd=tempfile.gettempdir(), timeout=3600)
    if p.returncode != 0:
        raise RuntimeError(f"worker for {corpus} failed:\n{p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def _baseline_tree(rev: str, into: Path) -> str:
    """Extract revision ``rev`` of this repository into ``into`` (``git archive``); the PYTHONPATH entry."""
    ar = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, timeout=300)
    if ar.returncode != 0:
        raise SystemExit(f"--baseline {rev!r}: git archive failed: {ar.stderr.decode()[-500:]}")
    subprocess.run(["tar", "-x", "-C", str(into)], input=ar.stdout, check=True)
    return str(into)


def _markdown(out: dict[str, Any]) -> str:
    base = out["baseline"]
    lines = ["# Cost of the fixed-order arithmetic", "",
             f"CPU seconds (steps: per CPU-second), one thread, median of {out['repeats']} fresh processes"
             + (f"; baseline = revision {base}, ratio > 1: the current code is faster." if base else "."), "",
             "| corpus | measure | current |" + (" baseline | ratio |" if base else ""),
             "|---|---|---:|" + ("---:|---:|" if base else "")]
    for row in out["rows"]:
        for m, larger in MEASURES.items():
            cur = row["current"][m]
            line = f"| {row['corpus']} | {m} | {cur:,.3f} |"
            if base:
                b = row["baseline"][m]
                line += f" {b:,.3f} | {(cur / b if larger else b / cur):.2f} |"
            lines.append(line)
    return "\n".join(lines) + "\n"


def _plot(out: dict[str, Any], path: Path) -> None:
    if not out["baseline"]:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    labels, ratios = [], []
    for row in out["rows"]:
        for m, larger in MEASURES.items():
            cur, b = row["current"][m], row["baseline"][m]
            labels.append(f"{Path(row['corpus']).name}\n{_SHORT[m]}")
            ratios.append(cur / b if larger else b / cur)
    ax.bar(range(len(ratios)), ratios, color=["tab:green" if r >= 1 else "tab:red" for r in ratios])
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xticks(range(len(ratios)), labels, fontsize=7, rotation=30, ha="right")
    ax.set_ylabel(f"speed vs {out['baseline']} (>1 faster)")
    ax.set_title("fixed-order arithmetic: CPU cost relative to the baseline (one thread)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="gym-crawl bench arith", description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", action="append", default=None,
                    help="corpus name or path (repeatable; default: synthetic)")
    ap.add_argument("--baseline", default=None, help="git revision to time in the same run (before/after)")
    ap.add_argument("--repeats", type=int, default=3, help="fresh processes per corpus and code (median)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    if args.repeats < 1:
        raise SystemExit(f"--repeats must be >= 1, got {args.repeats}")
    corpora = args.corpus or ["synthetic"]
    out: dict[str, Any] = {"baseline": args.baseline, "repeats": args.repeats, "threads": 1, "rows": []}
    with tempfile.TemporaryDirectory(prefix="bench-arith-base-") as tmp:
        base_pp = _baseline_tree(args.baseline, Path(tmp)) if args.baseline else None
        for corpus in corpora:
            runs: dict[str, list[dict[str, float]]] = {"current": [], "baseline": []}
            for i in range(args.repeats):  # alternate, so a change of load hits both
                runs["current"].append(_run(corpus, None))
                if base_pp:
                    runs["baseline"].append(_run(corpus, base_pp))
                print(f"  {corpus} run {i + 1}/{args.repeats}: current {runs['current'][-1]}"
                      + (f", baseline {runs['baseline'][-1]}" if base_pp else ""), flush=True)
            row: dict[str, Any] = {"corpus": corpus,
                                   "current": {m: statistics.median(r[m] for r in runs["current"]) for m in MEASURES}}
            if base_pp:
                row["baseline"] = {m: statistics.median(r[m] for r in runs["baseline"]) for m in MEASURES}
            out["rows"].append(row)
    from gym_crawl._io import atomic_write_bytes

    args.out.mkdir(parents=True, exist_ok=True)
    write_json_report(args.out / "arith.json", out, "arith", args)
    atomic_write_bytes(args.out / "arith.md", (markdown_banner(False) + _markdown(out)).encode())
    _plot(out, args.out / "arith.png")
    print(_markdown(out))
    print(f"wrote {args.out / 'arith.json'}, .md" + (", .png" if args.baseline else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
