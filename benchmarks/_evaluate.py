"""``gym-crawl eval``: agents × a task set × seeds → normalized scores on the set's test topics.

Each agent is run by the suite's protocol (:mod:`gym_crawl.benchmarks.suite`): learners train on the set's
train tasks (``--epochs`` passes, one agent per seed) and are evaluated on its test tasks; other agents run on
the test tasks. ``random``, ``best-first`` and ``oracle`` always run: a task's score is
``(found − random) / (oracle − random)``, so random is 0, the oracle 1 and best-first is printed next to every
agent. Aggregates: the interquartile mean over runs × tasks with a stratified bootstrap 95 % CI (rliable's IQM),
the mean, and the fraction of test tasks where the agent's mean over seeds beats best-first's. A PNG of the IQMs
is written only with ``--plot FILE``; ``--json FILE`` writes every run and the table.
"""
from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._io import atomic_write_json

__all__ = ["BASELINES", "evaluate", "format_table", "main", "plot"]

BASELINES = ("random", "best-first", "oracle")


def evaluate(task_set: str, agents: list[str], *, seeds: int = 5, epochs: int = 1, budget: int | None = None,
             max_tasks: int | None = None, min_pages: int = 25, wikispeedia: str | None = None, jobs: int = 1,
             config: dict[str, dict[str, Any]] | None = None, progress: bool = True,
             reps: int = 2000) -> dict[str, Any]:
    """Run ``agents`` (plus :data:`BASELINES`) on ``task_set`` and return ``{"set", "corpus", "tasks", "agents",
    "runs", ...}``; ``agents[name]`` holds ``iqm``, ``ci``, ``mean``, ``mean_found`` and ``wins_vs_best_first``
    (test tasks where the agent's mean over seeds is above best-first's, of ``n_test_tasks``). ``budget`` sets
    every task's page budget (default: the set's own)."""
    from gym_crawl.benchmarks import suite

    if seeds < 1 or epochs < 0:
        raise ValueError(f"--seeds must be >= 1 and --epochs >= 0, got {seeds} and {epochs}")
    if budget is not None and budget < 1:
        raise ValueError(f"--budget must be >= 1, got {budget}")
    known = suite.suite_agent_names()
    unknown = [a for a in agents if a not in known]
    if unknown:
        raise ValueError(f"unknown agent(s) {unknown}; registered agents and suite variants: {known}")
    sets, corpora = suite.build_task_sets([task_set], wikispeedia=wikispeedia or str(suite.DEFAULT_WIKISPEEDIA),
                                          min_pages=min_pages, max_tasks=max_tasks)
    ts = sets[0]
    if not ts.tasks:
        raise ValueError(f"task set {task_set!r} has no tasks here: {ts.note}")
    if budget is not None:
        ts.tasks = [dataclasses.replace(t, budget=int(budget)) for t in ts.tasks]
    names = list(dict.fromkeys(list(BASELINES) + list(agents)))
    t0 = time.perf_counter()
    runs = suite.run_suite(sets, corpora, names, seeds=seeds, epochs=epochs, jobs=jobs, config=config or {},
                           progress=progress)
    seed_list = list(range(seeds))
    scores, kept, dropped = suite.normalized_scores(runs, names, seed_list, "test")
    if "best-first" not in scores:
        raise ValueError(f"no test task of {task_set!r} has oracle > random; nothing to normalize")
    bf_task = scores["best-first"].mean(axis=0)
    out_agents: dict[str, Any] = {}
    for a in names:
        m = scores[a]
        iqm, lo, hi = suite.iqm_ci(m, reps=reps)
        found = [r["found"] for r in runs if r["agent"] == a and r["split"] == "test"]
        out_agents[a] = {"iqm": iqm, "ci": [lo, hi], "mean": float(m.mean()), "mean_found": float(np.mean(found)),
                         "wins_vs_best_first": int((m.mean(axis=0) > bf_task + 1e-12).sum()),
                         "losses_vs_best_first": int((m.mean(axis=0) < bf_task - 1e-12).sum())}
    return {"set": task_set, "corpus": ts.corpus_spec, "seeds": seeds, "epochs": epochs,
            "budget": budget, "n_test_tasks": len(kept), "dropped_tasks": dropped,
            "tasks": {"train": sum(t.split == "train" for t in ts.tasks),
                      "test": sum(t.split == "test" for t in ts.tasks)},
            "agents": out_agents, "seconds": round(time.perf_counter() - t0, 1), "runs": runs}


def format_table(res: dict[str, Any]) -> str:
    """The result as a Markdown table, best IQM first, best-first's IQM in the header."""
    bf = res["agents"]["best-first"]["iqm"]
    lines = [(f"{res['set']} ({res['corpus']}): {res['tasks']['train']} train / {res['tasks']['test']} test tasks, "
              f"{res['seeds']} seeds, normalized score on the test tasks (random 0, oracle 1; best-first {bf:.3f})"),
             "", "| agent | IQM | 95 % CI | mean | mean found | tasks above / below best-first |",
             "| --- | ---: | --- | ---: | ---: | ---: |"]
    n = res["n_test_tasks"]
    for a, v in sorted(res["agents"].items(), key=lambda kv: -kv[1]["iqm"]):
        lines.append(f"| {a} | {v['iqm']:.3f} | [{v['ci'][0]:.3f}, {v['ci'][1]:.3f}] | {v['mean']:.3f} | "
                     f"{v['mean_found']:.1f} | {v['wins_vs_best_first']} / {v['losses_vs_best_first']} of {n} |")
    return "\n".join(lines) + "\n"


def plot(res: dict[str, Any], path: str | Path) -> Path:
    """IQM ± 95 % CI per agent as a PNG at ``path``."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from gym_crawl.benchmarks._plotting import save_png
    from gym_crawl.benchmarks.suite import _color

    items = sorted(res["agents"].items(), key=lambda kv: kv[1]["iqm"])
    fig, ax = plt.subplots(figsize=(6, 0.45 * len(items) + 1.4))
    for i, (a, v) in enumerate(items):
        ax.errorbar(v["iqm"], i, xerr=[[max(0.0, v["iqm"] - v["ci"][0])], [max(0.0, v["ci"][1] - v["iqm"])]],
                    fmt="o", color=_color(a), capsize=3)
    ax.set_yticks(np.arange(len(items)), [a for a, _ in items])
    ax.axvline(0, color="grey", lw=0.5)
    ax.axvline(1, color="grey", lw=0.5, ls="--")
    ax.set_xlabel("IQM normalized score, test topics (random 0, oracle 1)")
    ax.set_title(f"{res['set']}: {res['seeds']} seeds")
    return save_png(fig, path)


def build_parser(prog: str = "gym-crawl eval") -> argparse.ArgumentParser:
    import gym_crawl

    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--agents", nargs="+", default=["online-classifier"],
                    help="registered agents or suite variants (random, best-first and oracle always run)")
    ap.add_argument("--set", default=gym_crawl.V2_TASK_SET, dest="task_set",
                    help="task set: ws-100, ws-size, ws-far, hard, hard-100k or docs-web")
    ap.add_argument("--seeds", type=int, default=5, help="seeds (independent training runs of each learner)")
    ap.add_argument("--epochs", type=int, default=1, help="passes of a learner over the train tasks")
    ap.add_argument("--budget", type=int, default=None, help="page budget of every task (default: the set's)")
    ap.add_argument("--max-tasks", type=int, default=None, help="at most this many tasks (half train, half test)")
    ap.add_argument("--wikispeedia", default=None, help="labelled corpus of the ws-* sets (a Wikispeedia folder)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--plot", default=None, help="write a PNG of the IQMs to this file (default: no plot)")
    ap.add_argument("--json", default=None, help="write the table and every run as JSON to this file")
    return ap


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    res = evaluate(a.task_set, a.agents, seeds=a.seeds, epochs=a.epochs, budget=a.budget, max_tasks=a.max_tasks,
                   wikispeedia=a.wikispeedia, jobs=a.jobs)
    print(format_table(res), end="")
    if a.json:
        atomic_write_json(Path(a.json), res)
        print(f"runs written to {a.json}")
    if a.plot:
        plot(res, a.plot)
        print(f"plot written to {a.plot}")
    return 0
