"""A stock SB3 agent on the benchmark suite's held-out topics: ``gym-crawl bench sb3_suite [--quick]``.

sb3-contrib ``MaskablePPO`` with the candidate-scoring policy
(:class:`gym_crawl.agents.sb3.policies.MaskableCandidateScoringPolicy` — one shared network scores every
candidate row, so nothing in it is tied to a topic or to a slot) is trained across the **train** topics
of a suite task set (:mod:`gym_crawl.benchmarks.suite`: same tasks, same seed pages and budgets, same
fixed split) and evaluated greedily on the held-out **test** topics with the suite's normalized score.

Protocol
--------
* **Tasks**: ``suite.build_task_sets`` (``ws-100`` and ``hard`` in the full run, ``ws-100`` with --quick). Training
  sees only tasks whose ``split == "train"``; evaluation only ``split == "test"`` (checked, and the labels drawn in
  training are recorded in the JSON).
* **Env**: ``WikiCrawl-v1`` with ``reward="labels"`` (the reward is what ``relevant_found`` counts),
  ``reducer="topk"`` (K candidates with the most topic-relevant link text — best-first's own ranking, so
  best-first is always slot 0's choice and the agent may only re-rank), feature set ``--features``
  (default ``transferable``: Han's relevances as values and tiles, TRES's local path/keyword columns,
  relevant-parent counts — online crawl statistics of this episode — and link-text / parent page vectors
  times the topic vector; every column is topic-relative, and only fetched pages and discovered links are
  read). The topic vector comes from the label's words (``resolve_topic``), as in the suite.
* **Training**: :class:`~gym_crawl.wrappers.TopicSampler` draws a train task uniformly per episode (its own
  generator, seeded by the vector env's ``reset(seed)``), ``--n-envs`` in-process envs (``DummyVecEnv``: the
  per-topic reset work is cached in each env and reused across seeds), ``--timesteps`` env steps per training seed,
  ``--seeds`` independent seeds (>= 5 in the full run), one torch thread.
* **Evaluation**: the *final* model of each seed (never the best checkpoint), greedy
  (``deterministic=True``), run through :class:`gym_crawl.agents.sb3.agent.SB3Agent` on every test task
  once with ``reset(seed=<training seed>)``. A learning curve evaluates the same way every
  ``--eval-every`` steps (monitoring only; the test topics never feed back into training).
* **Comparators**: ``random``, ``oracle`` and ``best-first`` are run on the same test tasks by the suite's
  own runner (:func:`suite.run_suite`), so the normalization ``(found − random) / (oracle − random)`` and
  best-first's score are computed exactly as in ``gym-crawl bench suite``; IQM and stratified bootstrap
  95 % CIs with :func:`suite.iqm_ci`.
* **Output** (``--out``, default ``benchmarks/results/sb3_suite``): ``sb3_suite.json`` (every run, the
  curves, the split), ``sb3_suite.md``, ``sb3_suite.png`` (learning curve on test topics + final IQM
  bars), and per seed ``<set>_seed<s>.npz`` — the pickle-free :class:`SB3Agent` (``gym-crawl ... --agent
  sb3:<file>``; :meth:`Agent.load` reads it with ``allow_pickle=False``).
"""
from __future__ import annotations

import argparse
import dataclasses
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from gym_crawl._console import ArgumentParser
from gym_crawl._io import atomic_write_bytes
from gym_crawl.benchmarks import suite
from gym_crawl.benchmarks.report import markdown_banner, write_json_report
from gym_crawl.tasks import topic_of
from gym_crawl.wrappers import TopicSampler

__all__ = ["FULL", "QUICK", "Preset", "evaluate_agent", "main", "make_train_env", "train_seed"]

DEFAULT_OUT = Path("benchmarks/results/sb3_suite")
AGENT = "sb3-mppo"
AGENT_COLOR = "#6a3d9a"
HYPER: dict[str, Any] = {"n_steps": 256, "batch_size": 256, "n_epochs": 4, "learning_rate": 3e-4, "gamma": 0.9,
                         "gae_lambda": 0.9, "ent_coef": 0.01, "clip_range": 0.2, "max_grad_norm": 0.5}
"""MaskablePPO hyper-parameters (per env: ``n_steps``; the rollout is ``n_steps × n_envs``)."""


@dataclass(frozen=True)
class Preset:
    sets: tuple[str, ...]
    seeds: int
    timesteps: int
    eval_every: int
    budget: int | None
    max_tasks: int | None
    n_envs: int
    reps: int


QUICK = Preset(sets=("ws-100",), seeds=2, timesteps=512, eval_every=256, budget=30, max_tasks=4, n_envs=2, reps=300)
FULL = Preset(sets=("ws-100", "hard"), seeds=5, timesteps=30_000, eval_every=10_000, budget=None, max_tasks=None,
              n_envs=4, reps=2000)
"""The full run: 30k env steps per seed (the held-out curve of a 1-seed pilot flattened after ~10k steps), sized
for a shared 2-core machine (its cost: ``benchmarks/RESULTS.md``)."""


# ------------------------------------------------------------------------------------- environments
def env_kwargs(features: str, max_candidates: int) -> dict[str, Any]:
    """The ``WikiCrawl-v1`` keywords of the SB3 agent (saved with it as ``SB3Agent.env_kwargs``)."""
    return {"features": features, "reducer": "topk", "max_candidates": int(max_candidates)}


def make_train_env(corpus: Any, tasks: Sequence[suite.Task], *, budget: int, n_envs: int, features: str,
                   max_candidates: int) -> Any:
    """A ``DummyVecEnv`` of ``n_envs`` × (``WikiCrawl-v1`` → :class:`~gym_crawl.wrappers.TopicSampler` over the
    *train* ``tasks`` — topic and seed pages drawn uniformly per episode, counted per label — →
    ``DiscreteScoringWrapper``), each with a ``Monitor``."""
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    from gym_crawl.agents import make_env_for
    from gym_crawl.wrappers import DiscreteScoringWrapper

    bad = [t.label for t in tasks if t.split != "train"]
    if bad:
        raise ValueError(f"training tasks must all be train-split tasks; got test topics {bad}")
    if not tasks:
        raise ValueError("make_train_env needs at least one train task")
    topics = [topic_of(corpus, t) for t in tasks]

    def one() -> gym.Env:
        env = make_env_for("sb3", corpus=corpus, reward="labels", max_episode_steps=budget,
                           **env_kwargs(features, max_candidates))
        sampler = TopicSampler(env, topics, seeds=[list(t.seeds) for t in tasks], names=[str(t.label) for t in tasks],
                               salt=0x5B3)
        return Monitor(DiscreteScoringWrapper(sampler))

    return DummyVecEnv([one for _ in range(n_envs)])


def sampled_labels(vec_env: Any) -> Counter[str]:
    """Labels drawn by the :class:`~gym_crawl.wrappers.TopicSampler` of every env of ``vec_env`` so far."""
    out: Counter[str] = Counter()
    for e in vec_env.envs:
        w = e
        while not isinstance(w, TopicSampler):
            w = w.env
        out.update(w.counts)
    return out


# --------------------------------------------------------------------------------------- evaluation
class _EvalEnvs:
    """One evaluation env per (corpus, budget), reused (the per-topic reset work is cached in it)."""

    def __init__(self, corpus: Any):
        self.corpus = corpus
        self.cache: dict[tuple, Any] = {}

    def get(self, agent: Any, budget: int) -> Any:
        from gym_crawl.agents import make_env_for

        key = (budget, tuple(sorted((k, repr(v)) for k, v in agent.env_defaults.items())))
        if key not in self.cache:
            self.cache[key] = make_env_for(agent, corpus=self.corpus, reward="labels", max_episode_steps=budget)
        return self.cache[key]


def evaluate_agent(agent: Any, envs: _EvalEnvs, tasks: Sequence[suite.Task], seed: int) -> list[dict[str, Any]]:
    """Run ``agent`` (greedy) once on every *test* task with ``reset(seed=seed)``; one suite-style record each."""
    from gym_crawl.agents import run_episode

    out = []
    for t in tasks:
        if t.split != "test":
            raise ValueError(f"evaluation runs on test tasks only; {t.label!r} is a {t.split} task")
        topic = topic_of(envs.corpus, t)
        t0 = time.perf_counter()
        r = run_episode(envs.get(agent, t.budget), agent, seed=seed, options={"topic": topic, "seeds": list(t.seeds)})
        out.append({"agent": AGENT, "task": t.name, "label": t.label, "split": t.split, "seed": seed,
                    "found": int(r.relevant_found), "seconds": time.perf_counter() - t0})
    return out


def _agent_of(model: Any, features: str, max_candidates: int, info: dict[str, Any]) -> Any:
    from gym_crawl.agents.sb3.agent import SB3Agent

    return SB3Agent.from_model(model, algo="maskable-ppo", policy="MaskableCandidateScoringPolicy",
                               policy_kwargs=_policy_kwargs(), info=info,
                               env_kwargs=env_kwargs(features, max_candidates))


def _policy_kwargs() -> dict[str, Any]:
    return {"scorer_kwargs": {"hidden": [64, 64], "head": [64], "value": [64]}}


# ----------------------------------------------------------------------------------------- training
def train_seed(corpus: Any, train_tasks: Sequence[suite.Task], test_tasks: Sequence[suite.Task], seed: int, *,
               timesteps: int, eval_every: int, n_envs: int, features: str, max_candidates: int,
               vec_env: Any = None, eval_envs: _EvalEnvs | None = None, hyper: dict[str, Any] | None = None,
               progress: bool = False) -> dict[str, Any]:
    """Train one MaskablePPO seed on ``train_tasks``; evaluate on ``test_tasks`` every ``eval_every`` steps
    (0 = only at the end) and at the end. Returns ``{"agent", "final" (records), "curve" [(steps, records)],
    "train_seconds", "train_cpu_seconds", "timesteps", "sampled"}``."""
    import torch as th
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    from gym_crawl.agents.sb3.policies import MaskableCandidateScoringPolicy

    th.set_num_threads(1)
    budget = max(t.budget for t in train_tasks)
    if vec_env is None:
        vec_env = make_train_env(corpus, train_tasks, budget=budget, n_envs=n_envs, features=features,
                                 max_candidates=max_candidates)
    eval_envs = eval_envs or _EvalEnvs(corpus)
    hp = {**HYPER, **(hyper or {})}
    hp["batch_size"] = min(int(hp["batch_size"]), int(hp["n_steps"]) * vec_env.num_envs)
    vec_env.seed(seed)
    model = MaskablePPO(MaskableCandidateScoringPolicy, vec_env, policy_kwargs=_policy_kwargs(), seed=seed,
                        verbose=0, device="cpu", **hp)
    info = {"seed": seed, "features": features, "train_labels": sorted({t.label for t in train_tasks})}
    curve: list[tuple[int, list[dict[str, Any]]]] = []
    eval_cpu = [0.0]

    def evaluate_now(steps: int) -> None:
        c0 = time.process_time()
        curve.append((steps, evaluate_agent(_agent_of(model, features, max_candidates, info), eval_envs, test_tasks,
                                            seed)))
        eval_cpu[0] += time.process_time() - c0
        if progress:
            print(f"[sb3_suite] seed {seed} step {steps}: mean found on test tasks "
                  f"{np.mean([r['found'] for r in curve[-1][1]]):.2f}", flush=True)

    class _Curve(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.next = eval_every

        def _on_step(self) -> bool:
            return True

        def _on_rollout_start(self) -> None:  # after the previous rollout's update
            if eval_every and self.num_timesteps >= self.next:
                evaluate_now(self.num_timesteps)
                while self.next <= self.num_timesteps:
                    self.next += eval_every

    if eval_every:
        evaluate_now(0)
    w0, c0 = time.perf_counter(), time.process_time()
    model.learn(total_timesteps=timesteps, callback=_Curve())
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0 - eval_cpu[0]
    agent = _agent_of(model, features, max_candidates, {**info, "timesteps": int(model.num_timesteps)})
    final = evaluate_agent(agent, eval_envs, test_tasks, seed)
    if curve and curve[-1][0] == model.num_timesteps:
        curve.pop()
    curve.append((int(model.num_timesteps), final))
    return {"agent": agent, "final": final, "curve": curve, "train_seconds": wall, "train_cpu_seconds": cpu,
            "timesteps": int(model.num_timesteps), "sampled": dict(sampled_labels(vec_env))}


# --------------------------------------------------------------------------------------------- main
def _normalizer(runs: list[dict[str, Any]], seeds: Sequence[int]) -> tuple[dict[str, tuple[float, float]], list[str]]:
    """``{task: (random mean, oracle mean)}`` over ``seeds`` for tasks with oracle > random, and the dropped."""
    _, kept, dropped = suite.normalized_scores(runs, [], seeds, "test")
    lohi = {}
    for t in kept:
        rnd = np.mean([r["found"] for r in runs if r["agent"] == "random" and r["task"] == t and r["seed"] in seeds])
        orc = np.mean([r["found"] for r in runs if r["agent"] == "oracle" and r["task"] == t and r["seed"] in seeds])
        lohi[t] = (float(rnd), float(orc))
    return lohi, dropped


def _curve_scores(curves: dict[int, list[tuple[int, list[dict[str, Any]]]]],
                  lohi: dict[str, tuple[float, float]], reps: int) -> list[dict[str, Any]]:
    """Per evaluation point: IQM [CI] of the normalized test score across seeds (points every seed reached)."""
    by_steps: dict[int, list[np.ndarray]] = {}
    tasks = sorted(lohi)
    for _, pts in sorted(curves.items()):
        for steps, recs in pts:
            f = {r["task"]: r["found"] for r in recs}
            by_steps.setdefault(steps, []).append(
                np.array([(f[t] - lohi[t][0]) / (lohi[t][1] - lohi[t][0]) for t in tasks]))
    out = []
    n = len(curves)
    for steps in sorted(by_steps):
        rows = by_steps[steps]
        if len(rows) != n:
            continue
        m = np.stack(rows)
        iqm, lo, hi = suite.iqm_ci(m, reps=reps)
        out.append({"steps": int(steps), "iqm": iqm, "ci": [lo, hi], "mean": float(m.mean())})
    return out


def _markdown(res: dict[str, Any]) -> str:
    m = res["meta"]
    lines = ["# Stock SB3 agent (MaskablePPO, candidate-scoring policy) on the suite's held-out test topics", "",
             (f"Trained across the **train** topics (a topic per episode), evaluated greedily on the **test** "
              f"topics; normalized score (found − random) / (oracle − random), IQM with a stratified bootstrap "
              f"95 % CI over {m['seeds']} training seeds × test tasks. Features `{m['features']}`, reducer topk, "
              f"K = {m['max_candidates']}, reward `labels`, {m['timesteps']} env steps per seed, "
              f"{m['n_envs']} envs. Best-first, random and oracle run by the suite's own runner on the same "
              f"tasks."), ""]
    for name, e in res["sets"].items():
        lines += [f"## {name} ({e['corpus']})", ""]
        if e.get("note"):
            lines += [f"*{e['note']}*", ""]
        if "agents" not in e:
            continue
        lines.append(f"{e['n_train']} train / {e['n_test']} test tasks"
                     + (f"; dropped (oracle <= random): {len(e['dropped_tasks'])}" if e["dropped_tasks"] else ""))
        lines += ["", "| agent | IQM | 95 % CI | mean | median | mean found | mean per seed |",
                  "| --- | ---: | --- | ---: | ---: | ---: | --- |"]
        for a, v in sorted(e["agents"].items(), key=lambda kv: -kv[1]["iqm"]):
            lines.append(f"| {a} | {v['iqm']:.3f} | [{v['ci'][0]:.3f}, {v['ci'][1]:.3f}] | {v['mean']:.3f} | "
                         f"{v['median']:.3f} | {v['mean_found']:.1f} | "
                         + ", ".join(f"{x:.2f}" for x in v["mean_per_seed"]) + " |")
        s, b = e["agents"].get(AGENT), e["agents"].get("best-first")
        if s and b:
            verdict = ("above best-first (CIs do not overlap)" if s["ci"][0] > b["ci"][1] else
                       "above best-first in IQM, CIs overlap" if s["iqm"] > b["iqm"] else
                       "NOT above best-first")
            lines += ["", f"**{AGENT} vs best-first: {verdict}** (IQM {s['iqm']:.3f} vs {b['iqm']:.3f})."]
        tr = e["training"]
        lines += ["", (f"Training: {tr['steps_per_cpu_second']:.0f} env steps per CPU-second "
                       f"({tr['steps_per_second']:.0f} per wall second on the shared machine), "
                       f"{tr['mean_train_seconds']:.0f} s per seed."), ""]
        if e.get("curve"):
            lines += ["Learning curve (test topics, monitoring only):", "", "| env steps | IQM | 95 % CI |",
                      "| ---: | ---: | --- |"]
            lines += [f"| {p['steps']} | {p['iqm']:.3f} | [{p['ci'][0]:.3f}, {p['ci'][1]:.3f}] |" for p in e["curve"]]
            lines.append("")
    return "\n".join(lines) + "\n"


def _figure(res: dict[str, Any], out: Path) -> None:
    from gym_crawl.benchmarks.plotting import agent_color, pyplot, save_png

    plt = pyplot()
    sets = [(n, e) for n, e in res["sets"].items() if e.get("agents")]
    if not sets:
        return
    fig, axes = plt.subplots(len(sets), 2, figsize=(11, 3.6 * len(sets)), squeeze=False)
    for (name, e), (ax0, ax1) in zip(sets, axes):
        c = e.get("curve") or []
        if c:
            x = [p["steps"] for p in c]
            ax0.plot(x, [p["iqm"] for p in c], "o-", color=AGENT_COLOR, label=AGENT)
            ax0.fill_between(x, [p["ci"][0] for p in c], [p["ci"][1] for p in c], alpha=0.25, color=AGENT_COLOR)
        for a in ("best-first", "random"):
            v = e["agents"].get(a)
            if v:
                ax0.axhline(v["iqm"], ls="--", lw=1, color=agent_color(a), label=f"{a} (IQM)")
        ax0.set_xlabel("training env steps (train topics)")
        ax0.set_ylabel("IQM normalized score (test topics)")
        ax0.set_title(f"{name}: learning curve on held-out topics")
        ax0.legend(fontsize=7)
        items = sorted(e["agents"].items(), key=lambda kv: kv[1]["iqm"])
        for i, (a, v) in enumerate(items):
            ax1.barh(i, v["iqm"], color=AGENT_COLOR if a == AGENT else agent_color(a))
            ax1.errorbar(v["iqm"], i, xerr=[[max(0.0, v["iqm"] - v["ci"][0])], [max(0.0, v["ci"][1] - v["iqm"])]],
                         fmt="none",
                         ecolor="k", capsize=3)
        ax1.set_yticks(range(len(items)), [a for a, _ in items])
        ax1.axvline(0, color="grey", lw=0.5)
        ax1.set_xlabel("IQM normalized score, 95 % CI (test topics)")
        ax1.set_title(f"{name}: final model ({res['meta']['seeds']} seeds)")
    fig.tight_layout()
    save_png(fig, out / "sb3_suite.png")


def build_parser() -> argparse.ArgumentParser:
    ap = ArgumentParser(prog="gym-crawl bench sb3_suite", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI-sized run (4 tasks, budget 30, 2 seeds, 512 steps)")
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--wikispeedia", default=str(suite.DEFAULT_WIKISPEEDIA),
                    help="labelled corpus of the ws-* sets (as in bench suite)")
    ap.add_argument("--sets", nargs="+", help="suite task sets (quick: ws-100; full: ws-100 hard)")
    ap.add_argument("--seeds", type=int, help="independent training seeds (full: 5)")
    ap.add_argument("--timesteps", type=int, help="env steps per training seed (full: 100000)")
    ap.add_argument("--eval-every", type=int, help="learning-curve evaluation period in env steps (0: final only)")
    ap.add_argument("--n-envs", type=int, help="in-process training envs (full: 4)")
    ap.add_argument("--features", default="transferable", help="feature set of the candidate rows")
    ap.add_argument("--max-candidates", type=int, default=32, help="K, candidate slots (topk reducer)")
    ap.add_argument("--budget", type=int, help="cap every task's budget (quick: 30)")
    ap.add_argument("--max-tasks", type=int, help="at most this many tasks per set (half train, half test)")
    ap.add_argument("--min-pages", type=int, default=25)
    ap.add_argument("--no-progress", action="store_true")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    p = QUICK if args.quick else FULL
    seeds = args.seeds or p.seeds
    timesteps = args.timesteps or p.timesteps
    eval_every = p.eval_every if args.eval_every is None else args.eval_every
    n_envs = args.n_envs or p.n_envs
    if seeds < 1 or timesteps < 1 or n_envs < 1 or eval_every < 0 or args.max_candidates < 1:
        raise SystemExit(f"--seeds, --timesteps, --n-envs, --max-candidates must be >= 1 and --eval-every >= 0; got "
                         f"{seeds}, {timesteps}, {n_envs}, {args.max_candidates}, {eval_every}")
    from gym_crawl.features import FEATURE_SETS

    if args.features not in FEATURE_SETS:
        raise SystemExit(f"--features {args.features!r} unknown; registered: {sorted(FEATURE_SETS)}")
    from tqdm.auto import tqdm

    t_start = time.perf_counter()
    sets, corpora = suite.build_task_sets(tuple(args.sets or p.sets), wikispeedia=args.wikispeedia,
                                          min_pages=args.min_pages, quick_budget=args.budget or p.budget,
                                          max_tasks=args.max_tasks or p.max_tasks)
    seed_list = list(range(seeds))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    res: dict[str, Any] = {"sets": {}, "runs": [], "tasks": {}}
    for ts in sets:
        entry: dict[str, Any] = {"corpus": ts.corpus_spec, "note": ts.note}
        res["sets"][ts.name] = entry
        train = [t for t in ts.tasks if t.split == "train"]
        test = [t for t in ts.tasks if t.split == "test"]
        res["tasks"][ts.name] = [dataclasses.asdict(t) for t in ts.tasks]
        entry.update(n_train=len(train), n_test=len(test))
        if not train or not test:
            entry["note"] = (entry["note"] + " " if entry["note"] else "") + "no train or no test task: skipped"
            continue
        overlap = {t.label for t in train} & {t.label for t in test}
        if overlap:  # the suite's split is by label; a label on both sides would leak
            raise RuntimeError(f"{ts.name}: labels on both sides of the split: {sorted(overlap)}")
        corpus = corpora[ts.corpus_spec]
        # comparators on the test tasks, by the suite's own runner (random/oracle normalize)
        base = suite.run_suite([dataclasses.replace(ts, tasks=test)], corpora, ["best-first"], seeds=seeds,
                               epochs=0, progress=not args.no_progress)
        runs = [{**r, "set": ts.name} for r in base]
        budget = max(t.budget for t in train)
        vec_env = make_train_env(corpus, train, budget=budget, n_envs=n_envs, features=args.features,
                                 max_candidates=args.max_candidates)
        eval_envs = _EvalEnvs(corpus)
        curves, trains, sampled = {}, [], Counter()
        for s in tqdm(seed_list, desc=f"sb3_suite {ts.name}", disable=args.no_progress):
            r = train_seed(corpus, train, test, s, timesteps=timesteps, eval_every=eval_every, n_envs=n_envs,
                           features=args.features, max_candidates=args.max_candidates, vec_env=vec_env,
                           eval_envs=eval_envs, progress=not args.no_progress)
            runs += [{**x, "set": ts.name, "train_seconds": r["train_seconds"], "timesteps": r["timesteps"]}
                     for x in r["final"]]
            curves[s] = r["curve"]
            trains.append(r)
            sampled = Counter(r["sampled"])  # cumulative over seeds (the envs are reused)
            r["agent"].save(out / f"{ts.name}_seed{s}.npz")
        leaked = sorted(set(sampled) - {t.label for t in train})
        if leaked:
            raise RuntimeError(f"training drew non-train labels {leaked}")
        vec_env.close()
        agents = ["random", "oracle", "best-first", AGENT]
        scores, kept, dropped = suite.normalized_scores(runs, agents, seed_list, "test")
        entry.update(test_tasks=kept, dropped_tasks=dropped, agents={},
                     train_labels_sampled=dict(sorted(sampled.items())),
                     test_labels=sorted({t.label for t in test}))
        for a, m in scores.items():
            iqm, lo, hi = suite.iqm_ci(m, reps=p.reps)
            found = [x["found"] for x in runs if x["agent"] == a]
            entry["agents"][a] = {"iqm": iqm, "ci": [lo, hi], "mean": float(m.mean()), "median": float(np.median(m)),
                                  "mean_per_seed": [float(x) for x in m.mean(axis=1)],
                                  "mean_found": float(np.mean(found))}
        lohi, _ = _normalizer(runs, seed_list)
        entry["curve"] = _curve_scores(curves, lohi, p.reps) if lohi else []
        steps = sum(r["timesteps"] for r in trains)
        entry["training"] = {"steps_per_cpu_second": steps / max(sum(r["train_cpu_seconds"] for r in trains), 1e-9),
                             "steps_per_second": steps / max(sum(r["train_seconds"] for r in trains), 1e-9),
                             "mean_train_seconds": float(np.mean([r["train_seconds"] for r in trains]))}
        res["runs"] += runs
        res.setdefault("curves_raw", {})[ts.name] = {str(s): [[st, recs] for st, recs in c] for s, c in curves.items()}
        _write(res, out, _meta(args, seeds, timesteps, eval_every, n_envs, sets, t_start))  # after every set
    _write(res, out, _meta(args, seeds, timesteps, eval_every, n_envs, sets, t_start))
    print(_markdown(res))
    return 0


def _meta(args: argparse.Namespace, seeds: int, timesteps: int, eval_every: int, n_envs: int, sets: list[Any],
          t_start: float) -> dict[str, Any]:
    return {"seeds": seeds, "timesteps": timesteps, "eval_every": eval_every, "n_envs": n_envs,
            "features": args.features, "max_candidates": args.max_candidates, "algo": "maskable-ppo",
            "policy": "MaskableCandidateScoringPolicy", "policy_kwargs": _policy_kwargs(), "hyper": HYPER,
            "quick": bool(args.quick), "sets": [ts.name for ts in sets],
            "split": "test iff sha256(label) mod 3 == 0 (suite.is_test_topic)",
            "seconds": round(time.perf_counter() - t_start, 1)}


def _write(res: dict[str, Any], out: Path, meta: dict[str, Any]) -> None:
    res["meta"] = meta
    write_json_report(out / "sb3_suite.json", res, "sb3_suite", meta, quick=bool(meta.get("quick")))
    atomic_write_bytes(out / "sb3_suite.md", (markdown_banner(bool(meta.get("quick"))) + _markdown(res)).encode())
    _figure(res, out)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
