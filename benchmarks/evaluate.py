"""``gym-crawl eval``: agents × a task set × seeds → normalized scores on the set's test topics.

Each agent is run by the suite's protocol (:mod:`gym_crawl.benchmarks.suite`): learners train on the set's
train tasks (``--epochs`` passes, one agent per seed) and are evaluated on its test tasks; other agents run on
the test tasks. ``random``, ``best-first`` and ``oracle`` always run: a task's score is
``(found − random) / (oracle − random)``, so random is 0, the oracle 1 and best-first is printed next to every
agent. Aggregates, over all test tasks and over far-seed and near-seed tasks separately (a task is *near* when
its seed page carries its label, else *far*): the interquartile mean over runs × tasks with a stratified
bootstrap 95 % CI (rliable's IQM), the mean, and per-task wins/ties/losses against best-first (the agent's
mean score over the seeds against best-first's). A PNG of the IQMs is written only with ``--plot FILE``;
``--json FILE`` writes every run and the table; ``--report FILE...`` prints the table of such a file again, or
one table of several files' sets.
"""
from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._console import ArgumentParser, HelpFormatter, add_verbosity
from gym_crawl._io import atomic_write_json

__all__ = ["BASELINES", "NO_CI", "agent_label", "evaluate", "format_sets", "format_table", "main", "plot", "report",
           "summarize"]

BASELINES = ("random", "best-first", "oracle")


def evaluate(task_set: str, agents: list[str], *, seeds: int = 5, epochs: int = 1,
             budget: int | Sequence[int] | None = None, max_tasks: int | None = None, min_pages: int | None = None,
             wikispeedia: str | None = None, jobs: int = 1, config: dict[str, dict[str, Any]] | None = None,
             progress: bool = True, reps: int = 2000, train_on: str | None = None) -> dict[str, Any]:
    """Run ``agents`` (plus :data:`BASELINES`) on ``task_set`` and return ``{"set", "corpus", "tasks", "kinds",
    "agents", "best_learner", "runs", ...}`` (``agents[name]`` as :func:`summarize` makes it; ``kinds`` maps
    each task to ``"near"`` — its seed page carries the label — or ``"far"``). ``budget`` sets every task's
    page budget, or a list of budgets repeats every task at each (default: the set's own). ``task_set`` may be
    ``corpus:<spec>[@site]``, the labels of any corpus (:mod:`gym_crawl.tasks.own_web`). ``train_on``: another
    set whose train tasks the learners train on, tested on ``task_set``'s tasks (all of them when it is on
    another corpus: :func:`gym_crawl.tasks.own_web.combine`)."""
    from gym_crawl.benchmarks import suite
    from gym_crawl.tasks.own_web import combine, with_budgets
    from gym_crawl.tasks.task import task_kind

    if seeds < 1 or epochs < 0:
        raise ValueError(f"--seeds must be >= 1 and --epochs >= 0, got {seeds} and {epochs}")
    budgets = None if budget is None else [int(budget)] if isinstance(budget, int) else [int(b) for b in budget]
    if budgets is not None and (not budgets or min(budgets) < 1):
        raise ValueError(f"--budget must be page counts >= 1, got {budget}")
    if max_tasks is not None and max_tasks < 1:
        raise ValueError(f"--max-tasks must be >= 1 (or absent: all tasks), got {max_tasks}")
    if jobs < 1:
        raise ValueError(f"--jobs must be >= 1 worker process, got {jobs}")
    known = suite.suite_agent_names()
    unknown = [a for a in agents if a not in known]
    if unknown:
        raise ValueError(f"unknown agent(s) {unknown}; registered agents and suite variants: {known}")
    names = [task_set] + ([train_on] if train_on is not None else [])
    sets, corpora = suite.build_task_sets(names, wikispeedia=wikispeedia or str(suite.DEFAULT_WIKISPEEDIA),
                                          min_pages=min_pages, max_tasks=max_tasks)
    for s in sets:
        if not s.tasks:
            raise ValueError(f"task set {s.name!r} has no tasks here: {s.note}")
    ts = sets[0]
    set_name = task_set
    if train_on is not None:
        set_name = f"{train_on} -> {task_set}"
        ts = combine(set_name, sets[1], sets[0])
        if not any(t.split == "train" for t in ts.tasks) or not any(t.split == "test" for t in ts.tasks):
            raise ValueError(f"--train-on {train_on!r} with {task_set!r}: no train or no test task ({ts.note})")
        sets = [ts]
    if budgets is not None:
        ts.tasks = with_budgets(ts.tasks, budgets)
    names = list(dict.fromkeys(list(BASELINES) + list(agents)))
    t0 = time.perf_counter()
    runs = suite.run_suite(sets, corpora, names, seeds=seeds, epochs=epochs, jobs=jobs, config=config or {},
                           progress=progress)
    kinds = {t.name: task_kind(corpora[t.corpus or ts.corpus_spec], t) for t in ts.tasks}
    learners = [a for a in names if a not in BASELINES and suite.is_learner(a)]
    res = {"set": set_name, "corpus": ts.corpus_spec, "seeds": seeds, "epochs": epochs,
           "budget": budget if budgets is None or len(budgets) > 1 else budgets[0], "max_tasks": max_tasks,
           "config": config or {}, "train_on": train_on,
           "tasks": {"train": sum(t.split == "train" for t in ts.tasks),
                     "test": sum(t.split == "test" for t in ts.tasks)},
           "kinds": kinds, "learners": learners, "seconds": round(time.perf_counter() - t0, 1), "runs": runs}
    res.update(summarize(runs, kinds, names, seeds, learners=learners, reps=reps))
    return res


def _wtl(m: np.ndarray, bf: np.ndarray) -> tuple[int, int, int]:
    """Tasks where the mean over seeds of ``m`` is above / equal to / below ``bf``'s."""
    d = m.mean(axis=0) - bf.mean(axis=0)
    return int((d > 1e-12).sum()), int((np.abs(d) <= 1e-12).sum()), int((d < -1e-12).sum())


def summarize(runs: list[dict[str, Any]], kinds: dict[str, str], agents: list[str], seeds: int, *,
              learners: list[str] | None = None, reps: int = 2000) -> dict[str, Any]:
    """Aggregate the test-task runs: ``{"n_test_tasks", "dropped_tasks", "agents", "best_learner"}``.

    ``agents[name]`` holds, over all test tasks, ``iqm``, ``ci``, ``mean``, ``mean_found`` and the per-task
    ``wins_vs_best_first`` / ``ties_vs_best_first`` / ``losses_vs_best_first`` (the agent's mean score over the
    seeds against best-first's), and ``groups`` with the same for ``"all"``, ``"far"`` and ``"near"`` tasks
    (``kinds``) plus ``n_tasks`` and ``ci_above_best_first`` (the CI's lower end above best-first's upper end).
    ``best_learner`` is the agent of ``learners`` with the highest IQM over all test tasks (``None`` without
    learners). A task where the oracle finds no more than random is dropped (it cannot be normalized).

    ``has_ci`` is ``False`` with one seed: the stratified bootstrap resamples the runs (seeds) within each task,
    so one run per task gives an interval of zero width that says nothing; ``ci_above_best_first`` is then
    ``None`` (no claim either way) and the tables print no interval."""
    from gym_crawl.benchmarks import suite

    seed_list = list(range(seeds))
    scores, kept, dropped = suite.normalized_scores(runs, agents, seed_list, "test")
    if "best-first" not in scores:
        raise ValueError("no test task has oracle > random and a best-first run; nothing to normalize")
    unknown = sorted(set(kept) - set(kinds))
    if unknown:
        raise ValueError(f"tasks without a near/far kind: {unknown[:3]}")
    cols = {g: np.array([g == "all" or kinds[t] == g for t in kept]) for g in ("all", "far", "near")}
    out: dict[str, Any] = {}
    for a in agents:
        if a not in scores:
            continue
        m = scores[a]
        found = [r["found"] for r in runs if r["agent"] == a and r["split"] == "test"]
        groups = {}
        for g, sel in cols.items():
            if not sel.any():
                continue
            iqm, lo, hi = suite.iqm_ci(m[:, sel], reps=reps)
            w, t, lo_n = _wtl(m[:, sel], scores["best-first"][:, sel])
            groups[g] = {"n_tasks": int(sel.sum()), "iqm": iqm, "ci": [lo, hi], "mean": float(m[:, sel].mean()),
                         "wins": w, "ties": t, "losses": lo_n}
        a_all = groups["all"]
        out[a] = {"iqm": a_all["iqm"], "ci": a_all["ci"], "mean": a_all["mean"], "mean_found": float(np.mean(found)),
                  "wins_vs_best_first": a_all["wins"], "ties_vs_best_first": a_all["ties"],
                  "losses_vs_best_first": a_all["losses"], "groups": groups}
    has_ci = seeds >= 2
    for v in out.values():
        for g, d in v["groups"].items():
            d["ci_above_best_first"] = bool(d["ci"][0] > out["best-first"]["groups"][g]["ci"][1]) if has_ci else None
    cand = [a for a in (learners or []) if a in out]
    best = max(cand, key=lambda a: out[a]["iqm"]) if cand else None
    return {"n_test_tasks": len(kept), "dropped_tasks": dropped, "agents": out, "best_learner": best,
            "has_ci": has_ci}


#: why a one-seed result has no CI (printed under its table)
NO_CI = ("no confidence interval with one seed: the stratified bootstrap resamples the seeds within each task, so "
         "one seed gives an interval of zero width; run --seeds 5 (or more) to compare agents")


def agent_label(res: dict[str, Any], agent: str) -> str:
    """``agent`` as a table names it: with the ``--config`` options it ran with, e.g.
    ``hashed-q (features=hashed-site)``, so rows of runs with different options are not mistaken for each other."""
    import json

    opts = (res.get("config") or {}).get(agent) or {}
    if not opts:
        return agent
    shown = ", ".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in sorted(opts.items()))
    return f"{agent} ({shown})"


def _cell(g: dict[str, Any] | None, has_ci: bool = True) -> str:
    if g is None:
        return "—"
    return f"{g['iqm']:.3f} [{g['ci'][0]:.3f}, {g['ci'][1]:.3f}]" if has_ci else f"{g['iqm']:.3f}"


def _wtl_cell(g: dict[str, Any] | None) -> str:
    return "—" if g is None else f"{g['wins']}/{g['ties']}/{g['losses']}"


def format_table(res: dict[str, Any]) -> str:
    """The result as a Markdown table, best IQM first: IQM [95 % CI] over all, far-seed and near-seed test
    tasks, and per-task wins/ties/losses against best-first on far-seed and near-seed tasks; an agent run with
    ``--config`` options is named with them (:func:`agent_label`)."""
    ag = res["agents"]
    bf = ag["best-first"]["iqm"]
    ci = res.get("has_ci", True)
    iqm = "IQM [95 % CI]" if ci else "IQM"
    n = {g: ag["best-first"]["groups"].get(g, {}).get("n_tasks", 0) for g in ("all", "far", "near")}
    seeds = f"{res['seeds']} seed{'s' if res['seeds'] != 1 else ''}"
    lines = [(f"{res['set']} ({res['corpus']}): {res['tasks']['train']} train / {res['tasks']['test']} test tasks "
              f"({n['all']} scored: {n['far']} far-seed, {n['near']} near-seed), {seeds}, normalized "
              f"score on the test tasks (random 0, oracle 1; best-first {bf:.3f})"),
             "", f"| agent | all: {iqm} | far seed: {iqm} | near seed: {iqm} | mean | "
                 "mean found | W/T/L vs best-first (far) | W/T/L vs best-first (near) |",
             "| --- | --- | --- | --- | ---: | ---: | ---: | ---: |"]
    for a, v in sorted(ag.items(), key=lambda kv: -kv[1]["iqm"]):
        gr = v["groups"]
        lines.append(f"| {agent_label(res, a)} | {_cell(gr.get('all'), ci)} | {_cell(gr.get('far'), ci)} | "
                     f"{_cell(gr.get('near'), ci)} | {v['mean']:.3f} | {v['mean_found']:.1f} | "
                     f"{_wtl_cell(gr.get('far'))} | {_wtl_cell(gr.get('near'))} |")
    best = res.get("best_learner")
    if not ci:
        lines += ["", (f"Highest learner IQM: {agent_label(res, best)}; " if best is not None else "") + NO_CI + "."]
    elif best is not None:
        b = ag[best]["groups"]
        said = ", ".join(f"{g} {'above' if b[g]['ci_above_best_first'] else 'not above'}" for g in b)
        lines += ["", f"Best learner: {agent_label(res, best)} (CI lower end vs best-first's CI: {said})"]
    return "\n".join(lines) + "\n"


def format_sets(results: list[dict[str, Any]]) -> str:
    """Several results (one per task set) as one Markdown table: per set, best-first and every other agent
    but random and the oracle (0 and 1 by definition), best IQM first, named with their ``--config`` options;
    ``*`` marks the set's best learner."""
    lines = ["| set (train/test tasks; far/near scored) | agent | all: IQM [95 % CI] | far seed | near seed | "
             "W/T/L vs best-first (far) | W/T/L vs best-first (near) |", "|---|---|---|---|---|---|---|"]
    one_seed = [res["set"] for res in results if not res.get("has_ci", True)]
    for res in results:
        ci = res.get("has_ci", True)
        ag = res["agents"]
        g = ag["best-first"]["groups"]
        head = (f"{res['set']} ({res['tasks']['train']}/{res['tasks']['test']}; "
                f"{g.get('far', {}).get('n_tasks', 0)}/{g.get('near', {}).get('n_tasks', 0)})")
        for a, v in sorted(ag.items(), key=lambda kv: -kv[1]["iqm"]):
            if a in ("random", "oracle"):
                continue
            gr = v["groups"]
            star = "*" if a == res.get("best_learner") else ""
            lines.append(f"| {head} | {agent_label(res, a)}{star} | {_cell(gr.get('all'), ci)} | "
                         f"{_cell(gr.get('far'), ci)} | {_cell(gr.get('near'), ci)} | {_wtl_cell(gr.get('far'))} | "
                         f"{_wtl_cell(gr.get('near'))} |")
    if one_seed:
        lines += ["", f"{', '.join(one_seed)}: {NO_CI}."]
    return "\n".join(lines) + "\n"


def report(path: str | Path, *, reps: int = 2000) -> dict[str, Any]:
    """Re-aggregate a saved ``--json`` result (its runs and task kinds) into a result :func:`format_table`
    prints; a file without ``"runs"`` is a ``ValueError`` naming it."""
    import json

    from gym_crawl.benchmarks import suite

    p = Path(path)
    try:
        res = json.loads(p.read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"--report {str(p)!r}: cannot read a JSON result ({e})") from None
    if not isinstance(res, dict) or "runs" not in res or "kinds" not in res:
        raise ValueError(f"--report {str(p)!r}: not a `gym-crawl eval --json` result (no runs / kinds)")
    agents = list(dict.fromkeys(r["agent"] for r in res["runs"]))
    learners = res.get("learners")
    if learners is None:
        learners = [a for a in agents if a not in BASELINES and suite.is_learner(a)]
    res.update(summarize(res["runs"], res["kinds"], agents, int(res["seeds"]), learners=learners, reps=reps))
    return res


def plot(res: dict[str, Any], path: str | Path) -> Path:
    """IQM ± 95 % CI per agent (named as :func:`agent_label` names it) as a PNG at ``path`` (no interval with one
    seed: :func:`summarize`)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from gym_crawl.benchmarks.plotting import save_png
    from gym_crawl.benchmarks.suite import suite_color

    items = sorted(res["agents"].items(), key=lambda kv: kv[1]["iqm"])
    fig, ax = plt.subplots(figsize=(6, 0.45 * len(items) + 1.4))
    ci = res.get("has_ci", True)
    for i, (a, v) in enumerate(items):
        err = [[max(0.0, v["iqm"] - v["ci"][0])], [max(0.0, v["ci"][1] - v["iqm"])]] if ci else None
        ax.errorbar(v["iqm"], i, xerr=err, fmt="o", color=suite_color(a), capsize=3)
    ax.set_yticks(np.arange(len(items)), [agent_label(res, a) for a, _ in items])
    ax.axvline(0, color="grey", lw=0.5)
    ax.axvline(1, color="grey", lw=0.5, ls="--")
    ax.set_xlabel("IQM normalized score, test topics (random 0, oracle 1)")
    ax.set_title(f"{res['set']}: {res['seeds']} seeds" if ci else f"{res['set']}: one seed, no CI")
    return save_png(fig, path)


def _budgets(text: str) -> list[int]:
    """``--budget 50,200`` → ``[50, 200]`` (argparse reports anything else as a usage error)."""
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected page counts >= 1 (e.g. 100 or 50,200), got {text!r}") from None
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"expected page counts >= 1 (e.g. 100 or 50,200), got {text!r}")
    return out


def build_parser(prog: str = "gym-crawl eval") -> argparse.ArgumentParser:
    import gym_crawl

    ap = ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0], formatter_class=HelpFormatter)
    add_verbosity(ap, 0)  # read by `gym-crawl` before this parser runs
    ap.add_argument("--agents", nargs="+", default=["online-classifier"],
                    help="registered agents or suite variants (random, best-first and oracle always run)")
    ap.add_argument("--set", default=None, dest="task_set",
                    help=f"task set: ws-100, ws-size, ws-far, hard, hard-100k, docs-web, docs-web-hard, or "
                         f"corpus:PATH (default: {gym_crawl.DEFAULT_TASK_SET}, or --corpus's)")
    ap.add_argument("--corpus", default=None, metavar="PATH",
                    help="the task set of any labelled corpus (your own compiled crawl): every label with >= "
                         "--min-pages pages is a topic, with a near seed (its most in-linked page) and a far seed "
                         "(a page of the label's site outside it: the crawl's own start page, else the most "
                         "in-linked one) (default: none; --set's tasks)")
    ap.add_argument("--split", default="label", choices=["label", "site"],
                    help="--corpus: hold out labels, or whole sites (a label's site: the host most of its pages "
                         "are on)")
    ap.add_argument("--train-on", default=None, metavar="SET",
                    help="learners train on this set's train tasks (a set name or corpus:PATH) and are tested on "
                         "the --set/--corpus tasks: on another corpus all of its tasks are test tasks (default: "
                         "the same set's train tasks)")
    ap.add_argument("--min-pages", type=int, default=None,
                    help="labelled pages a label needs to be a topic (default: 25; 5 for --corpus)")
    ap.add_argument("--seeds", type=int, default=5, help="seeds (independent training runs of each learner)")
    ap.add_argument("--epochs", type=int, default=1, help="passes of a learner over the train tasks")
    ap.add_argument("--budget", type=_budgets, default=None, metavar="N[,N...]",
                    help="page budget of every task; several (50,200) repeat every task at each (default: the "
                         "set's)")
    ap.add_argument("--max-tasks", type=int, default=None,
                    help="at most this many tasks (half train, half test; default: all)")
    ap.add_argument("--wikispeedia", default=None,
                    help="labelled corpus of the ws-* sets (a Wikispeedia folder; default: shared/data/wikispeedia "
                         "next to the repository)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--plot", default=None, help="write a PNG of the IQMs to this file (default: no plot)")
    ap.add_argument("--json", default=None, help="write the table and every run as JSON to this file (default: none)")
    ap.add_argument("--config", action="append", default=[], metavar="AGENT:KEY=VALUE",
                    help="an agent option (JSON value), repeatable, e.g. 'hashed-q:features=\"hashed-site\"' "
                         "(default: none)")
    ap.add_argument("--report", nargs="+", default=None, metavar="JSON",
                    help="print the table of saved --json results (no run): one file's full table, or one "
                         "table of several files' sets; --plot applies to one file (default: run the agents)")
    return ap


def main(argv: list[str] | None = None) -> int:
    import gym_crawl
    from gym_crawl.tasks import TASK_SETS

    a = build_parser().parse_args(argv)
    if a.report:
        results = [report(p) for p in a.report]
        if len(results) > 1:
            if a.plot:
                raise ValueError("--plot draws one result: give --report one file")
            print(format_sets(results), end="")
            return 0
        print(format_table(results[0]), end="")
        if a.plot:
            plot(results[0], a.plot)
            print(f"plot written to {a.plot}")
        return 0
    from gym_crawl.benchmarks.suite import parse_agent_config

    config = parse_agent_config(a.config)
    unknown = sorted(set(config) - set(a.agents))
    if unknown:
        raise ValueError(f"--config names agent(s) {unknown} that --agents does not run ({a.agents})")
    if a.task_set is not None and a.corpus is not None:
        raise ValueError(f"--set {a.task_set} and --corpus {a.corpus}: give one of them (to train on one and test "
                         f"on the other: --corpus {a.corpus} --train-on {a.task_set})")
    if a.split != "label" and a.corpus is None:
        raise ValueError("--split applies to --corpus (the registered sets have their own split)")
    from gym_crawl.tasks.own_web import corpus_set_name

    task_set = corpus_set_name(a.corpus, a.split) if a.corpus is not None else a.task_set or gym_crawl.DEFAULT_TASK_SET
    train_on = a.train_on
    if train_on is not None and train_on not in TASK_SETS and not train_on.startswith("corpus:"):
        train_on = corpus_set_name(train_on)  # a corpus path
    res = evaluate(task_set, a.agents, seeds=a.seeds, epochs=a.epochs, budget=a.budget, max_tasks=a.max_tasks,
                   min_pages=a.min_pages, wikispeedia=a.wikispeedia, jobs=a.jobs, config=config,
                   train_on=train_on)
    print(format_table(res), end="")
    if a.json:
        atomic_write_json(Path(a.json), res)
        print(f"runs written to {a.json}")
    if a.plot:
        plot(res, a.plot)
        print(f"plot written to {a.plot}")
    return 0
