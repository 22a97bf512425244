"""The benchmark suite with headroom: ``gym-crawl bench suite [--quick]``.

A *task* is (corpus, topic with a ground-truth label, seed pages, page budget); every task is run
with ``reward="labels"`` (reward and metric aligned: the reward is what ``relevant_found`` counts).

Task sets
---------
The task sets (``ws-100``, ``ws-size``, ``ws-far``, ``hard``, ``hard-100k``, ``docs-web``,
``docs-web-hard``) and their fixed train/test splits are library objects: :mod:`gym_crawl.tasks`. A set
whose corpus is not available here is skipped with a note. ``--sets corpus:PATH`` (``corpus:PATH@site``) runs
the suite on the labels of any corpus — your own compiled crawl (:mod:`gym_crawl.tasks.own_web`).

Agents and variants
-------------------
``--agents`` takes registered agent names, the **variants** (:mod:`gym_crawl.agents.variants`) included: a
registered agent with its own options, env overrides and evaluation options, so a paper learner can run
on a content-bearing feature set without changing its paper-faithful defaults — e.g.
``lfa-sync+content`` is Han's synchronous LFA (α = 0.01) on ``features="transferable"``, evaluated
greedily. ``--merge DIR...`` pools the ``suite.json`` of several runs (e.g. one per task set, run one
after the other on a shared machine) into one leaderboard.

Protocol
--------
* **Split**: the task set's fixed split (:mod:`gym_crawl.tasks`).
* **Learners** (agents that implement ``observe``) are trained on the train tasks of the set
  (``--epochs`` passes, task order shuffled per seed, one agent object: weights kept across
  episodes), then evaluated on every *test* task starting from the trained weights (a fresh copy
  per test task; the agent may keep learning online within that episode from the rewards it
  observes, as ACHE and Han's crawlers do). ``--seeds`` independent training runs (>= 5 in the full
  run). Agents that do not learn are simply run on the test tasks with each seed.
* **Normalized score** per task and seed: ``(found − random) / (oracle − random)`` where ``random``
  and ``oracle`` are the task's mean relevant pages found by the ``random`` agent and the greedy
  ``oracle`` (hidden labels) over the seeds. Tasks where oracle ≤ random are dropped (noted).
* **Aggregates** (rliable's statistics): interquartile mean (``rliable.metrics.aggregate_iqm``) with
  a stratified bootstrap 95 % CI (runs resampled with replacement within each task, 2,000
  replicates; rliable's ``StratifiedBootstrap`` scheme, re-implemented here because
  ``rliable.library`` needs ``arch``, which does not import under pandas 3), plus mean and median;
  performance profiles (fraction of runs with score > τ, with bootstrap bands) drawn with
  ``rliable.plot_utils``.
* **Seed-independent agents** (``oracle``, ``best-first``, ``bfs``: their crawl does not depend on the
  seed, which tests/test_suite.py checks) run once per task; that result stands for every seed
  (``--every-seed`` runs them per seed anyway).
* **Output** (``--out``, default ``benchmarks/results/suite``): ``suite.json`` (every run),
  ``leaderboard.md``, ``leaderboard.png`` (IQM ± CI per set), ``profiles_<set>.png``.
"""
from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl import tasks as tasks_lib
from gym_crawl._console import ArgumentParser
from gym_crawl._io import atomic_write_bytes
from gym_crawl.agents.variants import EVAL_CONFIG, VARIANTS, Variant, resolve_variant
from gym_crawl.benchmarks.report import markdown_banner, write_json_report
from gym_crawl.tasks import Task, TaskSet, is_test_topic, labelled_tasks, topic_of

__all__ = [
    "FULL",
    "QUICK",
    "VARIANTS",
    "Task",
    "TaskEnvs",
    "TaskSet",
    "Variant",
    "build_task_sets",
    "iqm_ci",
    "is_learner",
    "is_test_topic",
    "labelled_tasks",
    "main",
    "merge",
    "normalized_scores",
    "resolve_agent",
    "run_suite",
    "score_matrices",
    "suite_agent_names",
    "suite_color",
    "task_episode",
]

DEFAULT_WIKISPEEDIA = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikispeedia"
BASELINES = ("random", "oracle")
#: agents whose crawl does not depend on the seed (tests/test_suite.py checks it): run once per task and
#: recorded for every seed
SEED_INDEPENDENT = ("oracle", "best-first", "bfs")
#: evaluation-time options of plain agents that explore while training (:data:`gym_crawl.agents.variants.EVAL_CONFIG`)
EVAL_OVERRIDES = EVAL_CONFIG


def resolve_agent(name: str) -> Variant:
    """The :class:`~gym_crawl.agents.variants.Variant` a suite agent name stands for (a registered name:
    itself, no overrides)."""
    return resolve_variant(name)


def suite_agent_names() -> list[str]:
    """Registered agent names (the variants of :data:`VARIANTS` included)."""
    from gym_crawl.agents import agent_names

    return sorted(agent_names())


def build_task_sets(names: Sequence[str], *, wikispeedia: Any, min_pages: int | None = None,
                    quick_budget: int | None = None,
                    max_tasks: int | None = None) -> tuple[list[TaskSet], dict[str, Any]]:
    """:func:`gym_crawl.tasks.build_task_sets` with the suite's corpus loader (:func:`_load_corpus`)."""
    return tasks_lib.build_task_sets(names, wikispeedia=wikispeedia, min_pages=min_pages, quick_budget=quick_budget,
                                     max_tasks=max_tasks, load=lambda spec: _load_corpus(spec))


def _load_corpus(spec: str) -> Any:
    """The suite's corpus loader, one place so tests can hand in an in-memory corpus."""
    return tasks_lib.load_task_corpus(spec)


# ------------------------------------------------------------------------------------------- running
_CORPORA: dict[str, Any] = {}
_ENVS: dict[str, TaskEnvs] = {}


def is_learner(name: str) -> bool:
    """Whether the suite agent ``name`` learns (its class overrides :meth:`Agent.observe`): it is trained on the
    train tasks before it is evaluated."""
    from gym_crawl.agents import Agent, agent_class

    cls = agent_class(resolve_agent(name).agent)
    return isinstance(cls, type) and cls.observe is not Agent.observe


class TaskEnvs:
    """One env per (agent kind, budget), reused across tasks through reset options."""

    def __init__(self, corpus: Any):
        self.corpus = corpus
        self.cache: dict[tuple, Any] = {}

    def get(self, agent: Any, task: Task, topic: Any, env_overrides: dict[str, Any] | None = None) -> Any:
        from gym_crawl.agents import env_kwargs_for, make_env_for

        over = {**(env_overrides or {}), "corpus": self.corpus, "reward": "labels", "topic": topic,
                "max_episode_steps": task.budget}
        kw = env_kwargs_for(agent, **over)
        key = (type(agent).__name__, tuple(sorted((k, repr(v)) for k, v in kw.items() if k not in ("corpus", "topic"))))
        if key not in self.cache:
            self.cache[key] = make_env_for(agent, **over)
        return self.cache[key]


def task_episode(envs: TaskEnvs, agent: Any, task: Task, seed: int,
                 env_overrides: dict[str, Any] | None = None) -> int:
    """One episode of ``agent`` on ``task`` (its topic, seeds and budget, ``reward="labels"``) in the env
    ``envs`` holds for it; returns the relevant pages found."""
    from gym_crawl.agents import run_episode

    topic = topic_of(envs.corpus, task)
    env = envs.get(agent, task, topic, env_overrides)
    r = run_episode(env, agent, seed=seed, options={"topic": topic, "seeds": list(task.seeds)})
    return int(r.relevant_found)


def _job(job: dict[str, Any]) -> list[dict[str, Any]]:
    """One unit of work (runs in a worker): a non-learner over tasks × seeds, or one learner seed:
    train on the train tasks, evaluate on the test tasks."""
    from gym_crawl.agents import make_agent

    # one env per (corpus, agent kind, budget) per process: reused across jobs, so the per-topic work of a
    # reset (the env's topic scorers) is done once per topic, not once per seed
    name, tasks = job["agent"], [Task(**t) for t in job["tasks"]]

    def envs_of(t: Task) -> TaskEnvs:  # a task of a set that combines corpora names its own
        spec = t.corpus or job["corpus"]
        return _ENVS.setdefault(spec, TaskEnvs(_CORPORA[spec]))

    var = resolve_agent(name)
    cfg = {**var.config, **job["config"]}
    out = []
    if not job["learner"]:
        for t in tasks:
            for s in job["seeds"]:
                agent = make_agent(var.agent, **cfg)
                t0 = time.perf_counter()
                found = task_episode(envs_of(t), agent, t, s, var.env)
                for s2 in job.get("copy_to", [s]):
                    out.append({"agent": name, "task": t.name, "label": t.label, "split": t.split, "seed": s2,
                                "found": found, "seconds": time.perf_counter() - t0, "run_seed": s})
        return out
    s = job["seeds"][0]
    rng = np.random.default_rng(s)
    agent = make_agent(var.agent, **cfg)
    train = [t for t in tasks if t.split == "train"]
    t0 = time.perf_counter()
    ep = 0
    for _ in range(job["epochs"]):
        for i in rng.permutation(len(train)):
            task_episode(envs_of(train[int(i)]), agent, train[int(i)], 1000 * s + ep, var.env)
            ep += 1
    train_seconds = time.perf_counter() - t0
    weights = agent.state_dict()
    for t in tasks:
        if t.split != "test":
            continue
        ev = make_agent(var.agent, **{**cfg, **var.eval_config})
        ev.load_state_dict({k: v.copy() for k, v in weights.items()})
        t1 = time.perf_counter()
        found = task_episode(envs_of(t), ev, t, s, var.env)
        out.append({"agent": name, "task": t.name, "label": t.label, "split": t.split, "seed": s, "found": found,
                    "seconds": time.perf_counter() - t1, "train_seconds": train_seconds, "train_episodes": ep})
    return out


def normalized_scores(runs: list[dict[str, Any]], agents: Sequence[str], seeds: Sequence[int],
                      split: str = "test") -> tuple[dict[str, np.ndarray], list[str], list[str]]:
    """``{agent: (n_seeds, n_tasks) normalized scores}`` on ``split`` tasks, the task names, and the
    tasks dropped because oracle <= random."""
    by: dict[tuple[str, str, int], int] = {(r["agent"], r["task"], r["seed"]): r["found"] for r in runs
                                           if r["split"] == split}
    tasks = sorted({t for (_, t, _) in by})
    kept, dropped, lo, hi = [], [], {}, {}
    for t in tasks:
        rnd = np.mean([by[("random", t, s)] for s in seeds if ("random", t, s) in by])
        orc = np.mean([by[("oracle", t, s)] for s in seeds if ("oracle", t, s) in by])
        if not orc > rnd:
            dropped.append(t)
            continue
        kept.append(t)
        lo[t], hi[t] = rnd, orc
    return score_matrices(by, agents, seeds, kept, lo, hi), kept, dropped


def score_matrices(by: dict[tuple[str, str, int], Any], agents: Sequence[str], seeds: Sequence[int],
                   tasks: Sequence[str], lo: dict[str, float], hi: dict[str, float]) -> dict[str, np.ndarray]:
    """``{agent: (n_seeds, n_tasks)}`` of ``(found - lo[task]) / (hi[task] - lo[task])`` from ``by[(agent, task,
    seed)] = found``; an agent missing any (task, seed) is left out."""
    scores = {}
    for a in agents:
        m = np.full((len(seeds), len(tasks)), np.nan)
        for j, t in enumerate(tasks):
            for i, s in enumerate(seeds):
                if (a, t, s) in by:
                    m[i, j] = (by[(a, t, s)] - lo[t]) / (hi[t] - lo[t])
        if not np.isnan(m).any():
            scores[a] = m
    return scores


def iqm_ci(scores: np.ndarray, reps: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """IQM of a (runs × tasks) score matrix and its stratified bootstrap 95 % CI (runs resampled with
    replacement within each task, as rliable's ``StratifiedBootstrap``)."""
    from rliable import metrics

    point = float(metrics.aggregate_iqm(scores))
    n, m = scores.shape
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(reps, n, m))
    boot = np.take_along_axis(np.broadcast_to(scores, (reps, n, m)), idx, axis=1)
    flat = np.sort(boot.reshape(reps, -1), axis=1)
    k = flat.shape[1]
    q = int(np.floor(0.25 * k))
    vals = flat[:, q:k - q].mean(axis=1) if k - 2 * q > 0 else flat.mean(axis=1)
    lo, hi = np.percentile(vals, [2.5, 97.5])
    return point, float(lo), float(hi)


def _profiles(scores: dict[str, np.ndarray], taus: np.ndarray, reps: int = 500, seed: int = 0):
    """Performance profiles (fraction of runs with score > τ) and stratified-bootstrap 95 % bands."""
    prof, cis = {}, {}
    rng = np.random.default_rng(seed)
    for a, m in scores.items():
        prof[a] = np.array([(m > t).mean() for t in taus])
        n, k = m.shape
        idx = rng.integers(0, n, size=(reps, n, k))
        boot = np.take_along_axis(np.broadcast_to(m, (reps, n, k)), idx, axis=1).reshape(reps, -1)
        b = (boot[:, :, None] > taus[None, None, :]).mean(axis=1)
        cis[a] = np.percentile(b, [2.5, 97.5], axis=0)
    return prof, cis


# --------------------------------------------------------------------------------------------- main
@dataclass(frozen=True)
class Preset:
    sets: tuple[str, ...]
    agents: tuple[str, ...]
    seeds: int
    epochs: int
    budget: int | None
    max_tasks: int | None
    reps: int


QUICK = Preset(sets=("ws-100", "ws-size", "ws-far", "hard"),
               agents=("random", "oracle", "best-first", "online-classifier", "hashed-q", "lfa-sync+content"),
               seeds=2, epochs=1, budget=30, max_tasks=4, reps=300)
FULL = Preset(sets=("ws-100", "ws-size", "ws-far", "hard", "hard-100k"),
              agents=("random", "oracle", "bfs", "best-first", "online-classifier", "hashed-q", "lfa-async",
                      "lfa-async+content", "lfa-sync+content"),
              seeds=5, epochs=1, budget=None, max_tasks=None, reps=2000)


def run_suite(sets: list[TaskSet], corpora: dict[str, Any], agents: Sequence[str], *, seeds: int, epochs: int,
              jobs: int = 1, config: dict[str, dict[str, Any]] | None = None,
              progress: bool = True, once: Sequence[str] = SEED_INDEPENDENT) -> list[dict[str, Any]]:
    """Run every agent on every task set (see the module docstring); returns one record per run.
    Agents in ``once`` (seed-independent crawls) run with seed 0 and their result stands for every seed."""
    import gym_crawl.agents.hashed.hashed_q
    import gym_crawl.agents.hashed.online_classifier  # noqa: F401

    config = config or {}
    _CORPORA.update(corpora)
    seed_list = list(range(seeds))
    work = []
    for ts in sets:
        if not ts.tasks:
            continue
        tasks = [dataclasses.asdict(t) for t in ts.tasks]
        for a in dict.fromkeys(list(BASELINES) + list(agents)):
            if is_learner(a):
                for s in seed_list:
                    work.append({"set": ts.name, "corpus": ts.corpus_spec, "agent": a, "tasks": tasks, "seeds": [s],
                                 "learner": True, "epochs": epochs, "config": config.get(a, {})})
            elif a in once:
                work.append({"set": ts.name, "corpus": ts.corpus_spec, "agent": a, "tasks": tasks, "seeds": [0],
                             "copy_to": seed_list, "learner": False, "epochs": 0, "config": config.get(a, {})})
            else:
                # non-learners: every task (train ones too: the oracle/random normalization of reports)
                for s in seed_list:
                    work.append({"set": ts.name, "corpus": ts.corpus_spec, "agent": a, "tasks": tasks, "seeds": [s],
                                 "learner": False, "epochs": 0, "config": config.get(a, {})})
    from gym_crawl._console import Progress

    runs: list[dict[str, Any]] = []
    label = f"{', '.join(dict.fromkeys(w['set'] for w in work))}: agents x seeds"
    bar = Progress(len(work), label, unit="runs", enabled=progress)
    if jobs <= 1:
        for w in work:
            runs += [{**r, "set": w["set"]} for r in _job(w)]
            bar.update()
    else:
        import multiprocessing as mp

        with ProcessPoolExecutor(jobs, mp_context=mp.get_context("fork")) as ex:
            futs = [(w, ex.submit(_job, w)) for w in work]
            for w, f in futs:
                runs += [{**r, "set": w["set"]} for r in f.result()]
                bar.update()
    bar.close()
    return runs


def summarize(runs: list[dict[str, Any]], sets: list[TaskSet], agents: Sequence[str], seeds: int,
              reps: int) -> dict[str, Any]:
    seed_list = list(range(seeds))
    out: dict[str, Any] = {"sets": {}}
    for ts in sets:
        rs = [r for r in runs if r["set"] == ts.name]
        entry: dict[str, Any] = {"corpus": ts.corpus_spec, "note": ts.note,
                                 "tasks": {"train": sum(t.split == "train" for t in ts.tasks),
                                           "test": sum(t.split == "test" for t in ts.tasks)}}
        if rs:
            scores, kept, dropped = normalized_scores(rs, list(agents), seed_list, "test")
            entry["test_tasks"] = kept
            entry["dropped_tasks"] = dropped
            entry["agents"] = {}
            for a, m in scores.items():
                iqm, lo, hi = iqm_ci(m, reps=reps)
                found = [r["found"] for r in rs if r["agent"] == a and r["split"] == "test"]
                secs = [r["seconds"] for r in rs if r["agent"] == a and r["split"] == "test"]
                entry["agents"][a] = {"iqm": iqm, "ci": [lo, hi], "mean": float(m.mean()),
                                      "median": float(np.median(m)),
                                      "mean_per_seed": [float(x) for x in m.mean(axis=1)],
                                      "mean_found": float(np.mean(found)), "episode_seconds": float(np.mean(secs))}
            entry["_scores"] = scores
        out["sets"][ts.name] = entry
    return out


def _markdown(summary: dict[str, Any], args: dict[str, Any]) -> str:
    lines = ["# gym_crawl benchmark suite", "",
             ("Normalized score on held-out **test** topics: (found − random) / (oracle − random), per task and seed; "
              "IQM with a stratified bootstrap 95 % CI (rliable's statistics). Reward `labels` everywhere. "
              f"Seeds {args['seeds']}, training epochs {args['epochs']}."), ""]
    for name, e in summary["sets"].items():
        lines.append(f"## {name} ({e['corpus']})")
        lines.append("")
        if e.get("note"):
            lines += [f"*{e['note']}*", ""]
        if "agents" not in e:
            continue
        lines.append(f"{e['tasks']['train']} train / {e['tasks']['test']} test tasks"
                     + (f"; dropped (oracle <= random): {len(e['dropped_tasks'])}" if e["dropped_tasks"] else ""))
        lines.append("")
        lines.append("| agent | IQM | 95 % CI | mean | median | mean found | mean per seed | s / episode |")
        lines.append("| --- | ---: | --- | ---: | ---: | ---: | --- | ---: |")
        for a, v in sorted(e["agents"].items(), key=lambda kv: -kv[1]["iqm"]):
            lines.append(f"| {a} | {v['iqm']:.3f} | [{v['ci'][0]:.3f}, {v['ci'][1]:.3f}] | {v['mean']:.3f} | "
                         f"{v['median']:.3f} | {v['mean_found']:.1f} | "
                         f"{', '.join(f'{x:.2f}' for x in v['mean_per_seed'])} | {v['episode_seconds']:.2f} |")
        lines.append("")
    return "\n".join(lines) + "\n"


#: fixed colours of the suite's agents that the shared palette does not fix (a variant: a lighter shade of its base)
SUITE_COLORS = {"online-classifier": "#e377c2", "hashed-q": "#393b79", "lfa-sync+content": "#6baed6",
                "lfa-async+content": "#fdae6b", "tres+content": "#31a354", "td-lambda+content": "#8c564b"}


def suite_color(name: str) -> Any:
    """The colour of agent ``name`` in the suite's figures (:data:`SUITE_COLORS`, else the shared palette's)."""
    from gym_crawl.benchmarks.plotting import agent_color

    return SUITE_COLORS.get(name) or agent_color(name)


def _plots(summary: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from rliable import plot_utils

    from gym_crawl.benchmarks.plotting import save_png

    sets = [(n, e) for n, e in summary["sets"].items() if e.get("agents")]
    if not sets:
        return
    fig, axes = plt.subplots(1, len(sets), figsize=(5.2 * len(sets), 3.8), squeeze=False, layout="constrained")
    for ax, (name, e) in zip(axes[0], sets):
        items = sorted(e["agents"].items(), key=lambda kv: kv[1]["iqm"])
        y = np.arange(len(items))
        for i, (a, v) in enumerate(items):
            ax.errorbar(v["iqm"], i, xerr=[[max(0.0, v["iqm"] - v["ci"][0])], [max(0.0, v["ci"][1] - v["iqm"])]],
                        fmt="o",
                        color=suite_color(a), capsize=3)
        ax.set_yticks(y, [a for a, _ in items])
        ax.axvline(0, color="grey", lw=0.5)
        ax.axvline(1, color="grey", lw=0.5, ls="--")
        ax.set_title(name)
        ax.set_xlabel("IQM normalized score (test topics)")
    save_png(fig, out / "leaderboard.png")
    taus = np.linspace(-0.25, 1.25, 61)
    for name, e in sets:
        prof, cis = _profiles(e["_scores"], taus)
        fig, ax = plt.subplots(figsize=(6, 4))
        plot_utils.plot_performance_profiles(prof, taus, performance_profile_cis=cis, ax=ax,
                                             colors={a: suite_color(a) for a in prof},
                                             xlabel=r"normalized score $\tau$",
                                             ylabel=r"fraction of runs with score $> \tau$")
        ax.legend(loc="lower left", fontsize=7)
        ax.set_title(f"performance profiles: {name} (test topics)")
        save_png(fig, out / f"profiles_{name}.png")


def _write(out: Path, runs: list[dict[str, Any]], sets: list[TaskSet], all_agents: list[str], seeds: int, reps: int,
           meta: dict[str, Any]) -> str:
    summary = summarize(runs, sets, all_agents, seeds, reps)
    out.mkdir(parents=True, exist_ok=True)
    js = {"meta": meta,
          "sets": {n: {k: v for k, v in e.items() if k != "_scores"} for n, e in summary["sets"].items()},
          "tasks": {ts.name: [dataclasses.asdict(t) for t in ts.tasks] for ts in sets}, "runs": runs}
    write_json_report(out / "suite.json", js, "suite", meta.get("config") or {}, quick=bool(meta.get("quick")))
    md = _markdown(summary, meta)
    atomic_write_bytes(out / "leaderboard.md", (markdown_banner(bool(meta.get("quick"))) + md).encode())
    _plots(summary, out)
    return md


def merge(paths: Sequence[str | Path], out: str | Path, reps: int = 2000) -> str:
    """One leaderboard from several ``suite.json`` files (e.g. one run per task set): their runs, tasks and
    agents are pooled; every file must use the same number of seeds and no task set may appear twice."""
    runs: list[dict[str, Any]] = []
    sets: list[TaskSet] = []
    agents: list[str] = []
    seeds: set[int] = set()
    parts = []
    for p in paths:
        f = Path(p)
        f = f / "suite.json" if f.is_dir() else f
        if not f.is_file():
            raise FileNotFoundError(f"--merge: no suite.json at {str(p)!r}")
        js = json.loads(f.read_text())
        seeds.add(int(js["meta"]["seeds"]))
        for name, tasks in js["tasks"].items():
            if any(ts.name == name for ts in sets):
                raise ValueError(f"--merge: task set {name!r} appears in more than one file (second: {str(f)!r})")
            sets.append(TaskSet(name, js["sets"][name]["corpus"], [Task(**t) for t in tasks], js["sets"][name]["note"]))
        runs += js["runs"]
        agents += js["meta"]["agents"]
        parts.append({"file": str(f), **js["meta"]})
    if len(seeds) != 1:
        raise ValueError(f"--merge: the files use different numbers of seeds {sorted(seeds)}")
    n_seeds = seeds.pop()
    all_agents = list(dict.fromkeys(agents))
    meta = {"sets": [ts.name for ts in sets], "agents": all_agents, "seeds": n_seeds,
            "epochs": parts[0]["epochs"], "quick": any(m["quick"] for m in parts), "merged_from": parts,
            "split": "test iff sha256(label) mod 3 == 0"}
    return _write(Path(out), runs, sets, all_agents, n_seeds, reps, meta)


def parse_agent_config(items: list[str]) -> dict[str, dict[str, Any]]:
    """``["hashed-q:gamma=0.6", 'hashed-q:features="hashed-site"']`` → ``{"hashed-q": {"gamma": 0.6, "features":
    "hashed-site"}}`` (each value is JSON; a malformed item is a ``ValueError`` naming it)."""
    config: dict[str, dict[str, Any]] = {}
    for item in items:
        try:
            agent, kv = item.split(":", 1)
            k, v = kv.split("=", 1)
            config.setdefault(agent, {})[k] = json.loads(v)
        except ValueError:
            raise ValueError(f"--config {item!r}: expected AGENT:KEY=VALUE with a JSON value "
                             "(strings in double quotes, e.g. 'hashed-q:features=\"hashed-site\"')") from None
    return config


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="gym-crawl bench suite", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI-sized run (a few tasks, 2 seeds, budget 30)")
    ap.add_argument("--out", default="benchmarks/results/suite")
    ap.add_argument("--wikispeedia", default=str(DEFAULT_WIKISPEEDIA),
                    help="labelled corpus of the ws-* sets (Wikispeedia folder, or any corpus spec with labels)")
    ap.add_argument("--sets", nargs="+", help="task sets, or corpus:PATH for the labels of any corpus (your own "
                                              "compiled crawl; corpus:PATH@site splits by site) (default: all of "
                                              "the preset)")
    ap.add_argument("--agents", nargs="+", help="registered agent names (random and oracle are always run)")
    ap.add_argument("--seeds", type=int, help="seeds / independent training runs per learner")
    ap.add_argument("--epochs", type=int, help="passes over the train tasks")
    ap.add_argument("--min-pages", type=int, default=None,
                    help="smallest category (labelled pages) that makes a task (default 25; 5 for corpus:PATH)")
    ap.add_argument("--max-tasks", type=int, help="at most this many tasks per set (half train, half test)")
    ap.add_argument("--budget", type=int, help="cap every task's budget (quick: 30)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--every-seed", action="store_true",
                    help=f"also run the seed-independent agents {SEED_INDEPENDENT} once per seed")
    ap.add_argument("--config", action="append", default=[], metavar="AGENT:KEY=VALUE",
                    help="agent option (JSON value), e.g. hashed-q:gamma=0.6")
    ap.add_argument("--merge", nargs="+", metavar="DIR",
                    help="pool the suite.json of earlier runs (e.g. one per task set) into one leaderboard at --out")
    args = ap.parse_args(argv)
    p = QUICK if args.quick else FULL
    if args.merge:
        print(merge(args.merge, args.out, reps=p.reps))
        return 0
    sets_names = tuple(args.sets or p.sets)
    agents = tuple(args.agents or p.agents)
    seeds = args.seeds or p.seeds
    epochs = args.epochs if args.epochs is not None else p.epochs
    if seeds < 1 or epochs < 0:
        raise SystemExit(f"--seeds must be >= 1 and --epochs >= 0, got {seeds} and {epochs}")
    try:
        config = parse_agent_config(args.config)
    except ValueError as e:
        raise SystemExit(str(e)) from None
    known = suite_agent_names()
    unknown = [a for a in agents if a not in known]
    if unknown:
        raise SystemExit(f"unknown agent(s) {unknown}; registered agents and suite variants: {known}")
    t0 = time.perf_counter()
    sets, corpora = build_task_sets(sets_names, wikispeedia=args.wikispeedia, min_pages=args.min_pages,
                                    quick_budget=args.budget or p.budget, max_tasks=args.max_tasks or p.max_tasks)
    runs = run_suite(sets, corpora, agents, seeds=seeds, epochs=epochs, jobs=args.jobs, config=config,
                     once=() if args.every_seed else SEED_INDEPENDENT)
    all_agents = list(dict.fromkeys(list(BASELINES) + list(agents)))
    meta = {"sets": list(sets_names), "agents": all_agents, "seeds": seeds, "epochs": epochs,
            "quick": bool(args.quick), "seconds": round(time.perf_counter() - t0, 1), "config": config,
            "split": "test iff sha256(label) mod 3 == 0",
            "seed_independent_run_once": [] if args.every_seed else list(SEED_INDEPENDENT),
            "variants": {a: dataclasses.asdict(VARIANTS[a]) for a in all_agents if a in VARIANTS}}
    print(_write(Path(args.out), runs, sets, all_agents, seeds, p.reps, meta))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
