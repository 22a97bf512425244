"""TRES in its own protocol: one long crawl per test topic, learning online, beside the suite's protocol.

``gym-crawl bench tres_own [--quick] [--sets docs-web-hard,docs-web] [--scale 5] [--seeds 5] [--out DIR]``

TRES (Kontogiannis et al., §3 and Algorithm 4) is evaluated by crawling each topic **once, for long**
(20,000 pages), from a single seed, with the DDQN **learning online** from the rewards of that crawl (one
minibatch update per fetched page) — no training on other topics first. The suite's protocol
(:mod:`gym_crawl.benchmarks.suite`) instead trains one agent for one epoch on the train topics and evaluates a
fresh copy of its weights on each held-out test topic at that task's own budget. This benchmark runs both on
the same test tasks, so a low score can be told apart: a protocol mismatch (TRES does well when crawling as
its paper does) or a method failure (it does not, even then).

Per task set (default ``docs-web-hard``, all tasks, and ``docs-web`` reduced to ``--max-tasks docs-web=40``,
i.e. the first 20 train and 20 test tasks in label order, as ``gym-crawl eval --max-tasks 40`` runs it):

* **own protocol** — per test task and seed ``s`` (``--seeds``), a fresh agent (``seed=s``: its weight
  initialization; the runner's ``rng`` seeded by ``s``: its exploration and minibatches) crawls once with
  budget ``L = --scale × B`` (``B``: the task's budget) from the task's seed, learning online: every action
  goes through ``env.step`` of the env built by :func:`gym_crawl.agents.make_env_for`, and the agent learns
  only from the transitions it observes (:func:`gym_crawl.agents.run_episode`). Recorded: relevant pages
  found and harvest rate after ``L`` steps and after the first ``B`` steps of the same crawl (the agent never
  reads the budget, so the first ``B`` steps are those of a ``B``-step crawl), gradient updates, and how far
  the online network's weights moved from their values after the first step (L2 norm). ``tres own`` keeps
  the agent's 100-step Tree-Random warm-up; ``tres own, no warm-up`` (part ``own-no-warm-up``) sets
  ``warmup_steps=0``, as TRES's Algorithm 4, which has no exploration schedule. ``--parts`` picks the rows.
* **our protocol** — the suite's learner protocol (:func:`ours_runs`, the same crawls as
  :func:`gym_crawl.benchmarks.suite._job`): one epoch over the set's train tasks, then a fresh copy of the
  trained weights per test task at its budget ``B`` (``tres ours``), one training run per seed, evaluated with
  the variant's evaluation options (:data:`gym_crawl.agents.variants.TRES_EVAL`: no warm-up, so the trained
  network acts from the first step). ``tres ours, eval warm-up replayed`` evaluates the same weights as the
  suite did before that option existed: a fresh copy restarts the agent's step counter, so TRES's 100-step
  Tree-Random warm-up ran again on every test task — the whole of a 100-step crawl.
  Both copies also crawl ``L`` steps
  (still learning online, as the suite's evaluation copies do), for the side-by-side with the own protocol.
* **baselines** — ``random`` (every seed), ``best-first`` and the greedy ``oracle`` (seed-independent: once)
  at ``L`` and at ``B``.

Scores: per task and seed ``(x − random) / (oracle − random)`` with random and oracle at the same budget, for
three readings ``x`` (:data:`VIEWS`): relevant found after ``L`` steps; the **area** under the found curve over
``L`` steps (:func:`area`: the mean over the steps of the relevant pages found so far, which rewards finding
them early — on sections of 25–1,000 pages a crawl of ``L`` steps finds nearly all of them whatever it does,
so found-at-``L`` saturates); relevant found after ``B`` steps
(tasks where the oracle finds no more than random are dropped); IQM with rliable's stratified bootstrap 95 %
CI over seeds × tasks, over all, far-seed and near-seed tasks (:func:`gym_crawl.benchmarks.evaluate.summarize`),
per-task wins/ties/losses against best-first, mean found and mean harvest rate. Reward ``labels`` in both
protocols (what ``relevant_found`` counts; TRES's binary reward from a perfect classifier). Output (``--out``,
default ``benchmarks/results/tres_own``): ``tres_own.json`` (every crawl) and ``tres_own.md`` (the tables),
with the wall and CPU seconds of each part.
"""
from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._console import ArgumentParser
from gym_crawl._io import atomic_write_bytes
from gym_crawl.benchmarks.report import markdown_banner, write_json_report

__all__ = ["FULL", "QUICK", "Preset", "main", "own_crawl", "run_set", "summarize_set"]

BASELINES = ("random", "best-first", "oracle")
#: the three readings of a run: found after L steps, the area under the found curve over L steps, found at B
VIEWS = ("long", "area", "task")
#: the protocols a run can include (``--parts``)
PARTS = ("own", "own-no-warm-up", "ours")
#: seed-independent baselines: one crawl stands for every seed (the suite's rule)
ONCE = ("best-first", "oracle")


@dataclasses.dataclass(frozen=True)
class Preset:
    """What one invocation runs."""

    sets: tuple[str, ...]
    agents: tuple[str, ...]
    seeds: int
    scale: int
    max_tasks: tuple[tuple[str, int | None], ...]
    budget: int | None = None
    k: int | None = None
    reps: int = 2000


#: CI-sized: ws-100 on the given corpus, 2 train + 2 test tasks, budget 20, L = 8 × 20
QUICK = Preset(sets=("ws-100",), agents=("tres",), seeds=2, scale=8, max_tasks=(("ws-100", 4),), budget=20,
               k=256, reps=200)
#: The run of benchmarks/RESULTS.md: docs-web-hard (all tasks) and the head of docs-web (40 tasks)
FULL = Preset(sets=("docs-web-hard", "docs-web"), agents=("tres",), seeds=5, scale=5,
              max_tasks=(("docs-web", 40),))


# ============================================================================ crawls
def _flat_weights(agent: Any) -> np.ndarray | None:
    """The online network's parameters as one vector (``None`` for agents without one)."""
    net = getattr(agent, "online", None)
    if net is None:
        return None
    return np.concatenate([p.detach().numpy().ravel().copy() for p in net.parameters()])


def _crawl(envs: Any, name: str, task: Any, budget: int, seed: int, config: dict[str, Any],
           env: dict[str, Any] | None = None) -> dict[str, Any]:
    """One crawl of ``task`` with budget ``budget`` by a fresh agent ``name`` (a registered agent or variant;
    ``config`` on top of the variant's options, ``env`` on top of its env keywords): the crawl's
    relevant-found curve, harvest rate, the online weights' movement from their values after the first step,
    and its wall and CPU seconds."""
    from gym_crawl.agents import make_agent, run_episode
    from gym_crawl.benchmarks.suite import resolve_agent
    from gym_crawl.tasks import topic_of

    var = resolve_agent(name)
    agent = make_agent(var.agent, **{**var.config, **config})
    topic = topic_of(envs.corpus, task)
    e = envs.get(agent, dataclasses.replace(task, budget=int(budget)), topic, {**var.env, **(env or {})})
    first: list[np.ndarray | None] = []

    def on_step(t: int, info: dict) -> None:
        if t == 1:
            first.append(_flat_weights(agent))

    c0, w0 = time.process_time(), time.perf_counter()
    r = run_episode(e, agent, seed=seed, options={"topic": topic, "seeds": list(task.seeds)}, on_step=on_step)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    w_end = _flat_weights(agent)
    moved = None
    if first and first[0] is not None and w_end is not None:
        moved = float(np.linalg.norm(w_end - first[0]))
    return {"curve": np.asarray(r.relevant_curve, np.int64), "steps": int(r.steps), "found": int(r.relevant_found),
            "harvest_rate": float(r.harvest_rate), "weight_change": moved, "pages_fetched": int(r.pages_fetched),
            "updates": int(getattr(agent, "updates", 0)), "seconds": wall, "cpu_seconds": cpu}


def own_crawl(envs: Any, name: str, task: Any, scale: int, seed: int, env: dict[str, Any] | None = None,
              config: dict[str, Any] | None = None) -> dict[str, Any]:
    """TRES's own protocol on one task: a fresh agent (``seed=seed``, ``config`` on top of its options) crawls
    once with budget ``scale × task.budget``, learning online from the crawl's transitions. Returns the found /
    harvest rate after the whole crawl (``found_long``, ``harvest_long``) and after its first ``task.budget``
    steps (``found_task``, ``harvest_task``), ``weight_change``, ``updates``, ``steps`` and the seconds."""
    long = int(scale) * int(task.budget)
    r = _crawl(envs, name, task, long, seed, {**(config or {}), "seed": int(seed)}, env)
    curve = r["curve"]
    b = min(int(task.budget), len(curve))
    found_b = int(curve[b - 1]) if b else 0
    n_seeds = r["pages_fetched"] - r["steps"]  # the seed pages count as fetched (the env's harvest rate)
    return {"found_long": r["found"], "harvest_long": r["harvest_rate"], "found_task": found_b,
            "harvest_task": _harvest(found_b, b + n_seeds), "area_long": area(curve, long), "steps": r["steps"],
            "budget_long": long,
            "weight_change": r["weight_change"], "updates": r["updates"], "seconds": r["seconds"],
            "cpu_seconds": r["cpu_seconds"]}


def area(curve: np.ndarray, budget: int) -> float:
    """Mean over the ``budget`` steps of the relevant pages found so far (the area under the found curve ÷
    budget; a crawl that ended early keeps its last count)."""
    c = np.asarray(curve, np.float64)[: int(budget)]
    if len(c) == 0:
        return 0.0
    return float((c.sum() + c[-1] * (int(budget) - len(c))) / int(budget))


def _harvest(found: int, pages: int) -> float:
    """Relevant pages found ÷ pages fetched (seeds included, as the env's ``harvest_rate``)."""
    return float(found) / pages if pages > 0 else 0.0


def _kinds(corpus: Any, tasks: list[Any]) -> dict[str, str]:
    from gym_crawl.tasks.task import task_kind

    return {t.name: task_kind(corpus, t) for t in tasks}


def ours_runs(envs: Any, name: str, train: list[Any], test: list[Any], seed: int, epochs: int = 1,
              evals: list[tuple[str, dict[str, Any] | None, int]] | None = None,
              env: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The suite's protocol for one seed, as :func:`gym_crawl.benchmarks.suite._job` runs a learner: one agent
    trained ``epochs`` passes over ``train`` (order shuffled by ``seed``), then a fresh copy of its weights per
    test task, once per entry ``(label, options, scale)`` of ``evals``: evaluation options on top of the
    variant's, budget ``scale ×`` the task's (default ``[("", None, 1)]``: the suite's evaluation alone).
    ``env``: env keywords on top of the variant's. Returns ``{"eval", "scale", "task", "found", "area",
    "harvest_rate"}`` per evaluation and test task (``area``: :func:`area` over the crawl's budget)."""
    from gym_crawl.agents import make_agent, run_episode
    from gym_crawl.benchmarks.suite import resolve_agent, task_episode
    from gym_crawl.tasks import topic_of

    var = resolve_agent(name)
    env_kw = {**var.env, **(env or {})}
    rng = np.random.default_rng(seed)
    agent = make_agent(var.agent, **var.config)
    ep = 0
    for _ in range(epochs):
        for i in rng.permutation(len(train)):
            task_episode(envs, agent, train[int(i)], 1000 * seed + ep, env_kw)
            ep += 1
    weights = agent.state_dict()
    out = []
    for label, over, scale in (evals or [("", None, 1)]):
        for t in test:
            ev = make_agent(var.agent, **{**var.config, **var.eval_config, **(over or {})})
            ev.load_state_dict({k: v.copy() for k, v in weights.items()})
            topic = topic_of(envs.corpus, t)
            tb = dataclasses.replace(t, budget=int(scale) * t.budget)
            e = envs.get(ev, tb, topic, env_kw)
            r = run_episode(e, ev, seed=seed, options={"topic": topic, "seeds": list(t.seeds)})
            out.append({"eval": label, "scale": int(scale), "task": t.name, "found": int(r.relevant_found),
                        "area": area(r.relevant_curve, tb.budget), "harvest_rate": float(r.harvest_rate)})
    return out


#: the options of the "no warm-up" rows: a fresh evaluation copy restarts the agent's step counter, so with
#: TRES's ``warmup_steps`` (100) a 100-step test crawl is all Tree-Random warm-up; with these the network acts
#: from the first step (ε-greedy from ``eps_start``) — in the own protocol, TRES's Algorithm 4 as published (no
#: exploration schedule)
GREEDY_EVAL = {"warmup_steps": 0}

#: the options of the "eval warm-up replayed" rows: the suite's evaluation before TRES_EVAL (the Tree-Random
#: warm-up of TRES's default config replays on every test crawl)
WARMUP_REPLAYED = {"warmup_steps": 100}


def run_set(ts: Any, corpus: Any, agents: list[str], *, seeds: int, scale: int, k: int | None = None,
            parts: tuple[str, ...] = PARTS, progress: bool = True) -> dict[str, Any]:
    """Both protocols and the baselines on the test tasks of ``ts`` (a :class:`gym_crawl.tasks.TaskSet`);
    returns ``{"runs_long", "runs_area", "runs_task", "own", "timing", ...}`` (records as the suite's: agent,
    task, split, seed, found; ``runs_area``'s found is the crawl's :func:`area` over L steps). ``k``: the
    learners' candidate slots (``max_candidates``; default: the agent's own). ``parts``: which of
    :data:`PARTS` run besides the baselines (which always run: every score needs them)."""
    from tqdm.auto import tqdm

    from gym_crawl.benchmarks import suite

    test = [t for t in ts.tasks if t.split == "test"]
    train = [t for t in ts.tasks if t.split == "train"]
    envs = suite.TaskEnvs(corpus)
    seed_list = list(range(seeds))
    views: dict[str, list[dict[str, Any]]] = {"long": [], "area": [], "task": []}
    own: list[dict[str, Any]] = []
    lenv = {} if k is None else {"max_candidates": int(k)}
    timing: dict[str, dict[str, float]] = {}

    def rec(agent: str, t: Any, s: int, found: float, harvest: float) -> dict[str, Any]:
        return {"agent": agent, "task": t.name, "label": t.label, "split": "test", "seed": s, "found": found,
                "harvest_rate": float(harvest)}

    def clock(part: str, c0: float, w0: float) -> None:
        d = timing.setdefault(part, {"seconds": 0.0, "cpu_seconds": 0.0})
        d["seconds"] += time.perf_counter() - w0
        d["cpu_seconds"] += time.process_time() - c0

    # ---- baselines at L (found and area) and at B
    c0, w0 = time.process_time(), time.perf_counter()
    jobs = [(b, t, s) for b in BASELINES for t in test for s in (seed_list if b not in ONCE else [0])]
    for b, t, s in tqdm(jobs, desc=f"{ts.name}: baselines", disable=not progress):
        long = scale * t.budget
        rl = _crawl(envs, b, t, long, s, {})
        rb = _crawl(envs, b, t, t.budget, s, {})
        for s2 in (seed_list if b in ONCE else [s]):
            views["long"].append(rec(b, t, s2, rl["found"], rl["harvest_rate"]))
            views["area"].append(rec(b, t, s2, area(rl["curve"], long), rl["harvest_rate"]))
            views["task"].append(rec(b, t, s2, rb["found"], rb["harvest_rate"]))
    clock("baselines", c0, w0)
    # ---- TRES's own protocol: one long crawl per task and seed, learning online (with the agent's warm-up,
    # and without it: TRES's Algorithm 4 has no exploration schedule)
    for a in agents:
        rows = [(f"{a} own", None)] if "own" in parts else []
        rows += [(f"{a} own, no warm-up", GREEDY_EVAL)] if "own-no-warm-up" in parts else []
        for label, over in rows:
            c0, w0 = time.process_time(), time.perf_counter()
            for t, s in tqdm([(t, s) for t in test for s in seed_list], desc=f"{ts.name}: {label}",
                             disable=not progress):
                o = own_crawl(envs, a, t, scale, s, lenv, over)
                own.append({"agent": label, "task": t.name, "label": t.label, "seed": s, **o})
                views["long"].append(rec(label, t, s, o["found_long"], o["harvest_long"]))
                views["area"].append(rec(label, t, s, o["area_long"], o["harvest_long"]))
                views["task"].append(rec(f"{label}, first B", t, s, o["found_task"], o["harvest_task"]))
            clock(label, c0, w0)
    # ---- the suite's protocol: train one epoch on the train tasks, evaluate on the test tasks at B (as the
    # suite does, and with the trained network acting from the first test step)
    for a in agents if "ours" in parts else []:
        if not train:
            continue
        evals = [(f"{a} ours", None, 1), (f"{a} ours, eval warm-up replayed", WARMUP_REPLAYED, 1)]
        if scale > 1:  # the trained copy also crawls L steps (learning online), for the side-by-side at L
            evals += [(f"{a} ours", None, scale), (f"{a} ours, eval warm-up replayed", WARMUP_REPLAYED, scale)]
        c0, w0 = time.process_time(), time.perf_counter()
        for s in tqdm(seed_list, desc=f"{ts.name}: {a} our protocol", disable=not progress):
            for r in ours_runs(envs, a, train, test, s, evals=evals, env=lenv):
                t = next(x for x in test if x.name == r["task"])
                if r["scale"] == 1:
                    views["task"].append(rec(r["eval"], t, s, r["found"], r["harvest_rate"]))
                else:
                    views["long"].append(rec(r["eval"], t, s, r["found"], r["harvest_rate"]))
                    views["area"].append(rec(r["eval"], t, s, r["area"], r["harvest_rate"]))
        clock(f"{a} ours (training + evaluations)", c0, w0)
    return {"set": ts.name, "corpus": ts.corpus_spec, "scale": scale, "seeds": seeds,
            "tasks": {"train": len(train), "test": len(test)}, "test_tasks": [t.name for t in test],
            "kinds": _kinds(corpus, test), **{f"runs_{k}": v for k, v in views.items()}, "own": own,
            "timing": timing}


# ============================================================================ tables
def summarize_set(res: dict[str, Any], reps: int = 2000) -> dict[str, Any]:
    """Normalized scores of the three views (:data:`VIEWS`: found at L, area over L, found at B) as
    :func:`gym_crawl.benchmarks.evaluate.summarize` gives them, each agent with its mean harvest rate."""
    from gym_crawl.benchmarks.evaluate import summarize

    out: dict[str, Any] = {}
    for view in VIEWS:
        runs = res[f"runs_{view}"]
        agents = list(dict.fromkeys(r["agent"] for r in runs))
        s = summarize(runs, res["kinds"], agents, int(res["seeds"]), reps=reps)
        for a, v in s["agents"].items():
            v["mean_harvest_rate"] = float(np.mean([r["harvest_rate"] for r in runs if r["agent"] == a]))
        out[view] = s
    own = res["own"]
    if own:
        wc = [o["weight_change"] for o in own if o["weight_change"] is not None]
        out["own_learning"] = {"crawls": len(own), "mean_updates": float(np.mean([o["updates"] for o in own])),
                               "min_weight_change": float(min(wc)) if wc else None,
                               "mean_weight_change": float(np.mean(wc)) if wc else None}
    return out


def _cell(g: dict[str, Any] | None) -> str:
    return "—" if g is None else f"{g['iqm']:.3f} [{g['ci'][0]:.3f}, {g['ci'][1]:.3f}]"


def _wtl(g: dict[str, Any] | None) -> str:
    return "—" if g is None else f"{g['wins']}/{g['ties']}/{g['losses']}"


def markdown(results: list[dict[str, Any]]) -> str:
    """One table per task set: both views, every agent, best IQM first within a view."""
    lines = []
    for res in results:
        sm = res["summary"]
        lines += [f"## {res['set']} ({res['corpus']}): {res['tasks']['test']} test tasks, {res['seeds']} seeds, "
                  f"L = {res['scale']} × B", ""]
        lines += ["| budget | agent | all: IQM [95 % CI] | far seed | near seed | mean found | harvest rate | "
                  "W/T/L vs best-first (far) | W/T/L vs best-first (near) |",
                  "|---|---|---|---|---|---:|---:|---:|---:|"]
        for view in VIEWS:
            label = {"long": f"found at L = {res['scale']}×B", "area": "area over L", "task": "found at B"}[view]
            ag = sm[view]["agents"]
            for a, v in sorted(ag.items(), key=lambda kv: -kv[1]["iqm"]):
                gr = v["groups"]
                lines.append(f"| {label} | {a} | {_cell(gr.get('all'))} | {_cell(gr.get('far'))} | "
                             f"{_cell(gr.get('near'))} | {v['mean_found']:.1f} | {v['mean_harvest_rate']:.3f} | "
                             f"{_wtl(gr.get('far'))} | {_wtl(gr.get('near'))} |")
        lines += ["", "Scored tasks (dropped: oracle ≤ random): " + ", ".join(
            f"{v} {sm[v]['n_test_tasks']} ({len(sm[v]['dropped_tasks'])})" for v in VIEWS) + "."]
        ol = sm.get("own_learning")
        if ol:
            lines.append(f"Own protocol: {ol['crawls']} crawls, {ol['mean_updates']:.0f} gradient updates per crawl "
                         f"on average, online weights moved by ≥ {ol['min_weight_change']:.3g} (L2; mean "
                         f"{ol['mean_weight_change']:.3g}).")
        tm = ", ".join(f"{k} {v['seconds']:.0f} s wall / {v['cpu_seconds']:.0f} s CPU"
                       for k, v in res["timing"].items())
        lines += [f"Time: {tm}.", ""]
    return "\n".join(lines)


# ============================================================================ main
def _max_tasks(v: str | None) -> tuple[tuple[str, int | None], ...] | None:
    """``SET=N,...`` → ``((SET, N), ...)``; ``SET=all`` keeps every task of SET."""
    if v is None:
        return None
    out: list[tuple[str, int | None]] = []
    for item in (x.strip() for x in v.split(",") if x.strip()):
        name, _, n = item.partition("=")
        if n == "all":
            out.append((name, None))
            continue
        try:
            k = int(n)
        except ValueError:
            raise SystemExit(f"--max-tasks: {item!r} is not SET=N with an integer N") from None
        if k < 2:
            raise SystemExit(f"--max-tasks: {item!r}: N must be >= 2 (half train, half test)")
        out.append((name, k))
    return tuple(out)


def build_parser() -> argparse.ArgumentParser:
    ap = ArgumentParser(prog="gym-crawl bench tres_own", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI-sized run on ws-100 (budget 20, 4 tasks, 2 seeds, "
                                                         "L = 8×B)")
    ap.add_argument("--sets", default=None, help="comma-separated task sets (full: docs-web-hard,docs-web)")
    ap.add_argument("--agents", default=None, help="comma-separated TRES agents or variants (default: tres)")
    ap.add_argument("--seeds", type=int, default=None, help="seeds per task (full 5)")
    ap.add_argument("--scale", type=int, default=None, help="own-protocol budget L = scale × the task's budget "
                                                                  "(full 5)")
    ap.add_argument("--max-tasks", default=None,
                    help="SET=N,...: keep the first N/2 train and N/2 test tasks of SET; SET=all: every task "
                         "(full: docs-web=40)")
    ap.add_argument("--budget", type=int, default=None, help="cap every task's budget B (quick: 20)")
    ap.add_argument("--k", type=int, default=None,
                    help="candidate slots (max_candidates) of the learners' env (default: the agent's; quick: 256)")
    ap.add_argument("--wikispeedia", default=None, help="labelled corpus of the ws-* sets (a Wikispeedia folder)")
    ap.add_argument("--parts", default=",".join(PARTS), help="comma-separated parts to run: own, own-no-warm-up, "
                                                            "ours (the baselines always run)")
    ap.add_argument("--out", default="benchmarks/results/tres_own")
    ap.add_argument("--seed", type=int, default=0, help="recorded in the report (the seeds are 0..seeds-1)")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    base = QUICK if args.quick else FULL
    given = {"sets": tuple(x.strip() for x in args.sets.split(",") if x.strip()) if args.sets else None,
             "agents": tuple(x.strip() for x in args.agents.split(",") if x.strip()) if args.agents else None,
             "seeds": args.seeds, "scale": args.scale, "max_tasks": _max_tasks(args.max_tasks), "budget": args.budget,
             "k": args.k}
    p = dataclasses.replace(base, **{k: v for k, v in given.items() if v is not None})
    if p.seeds < 1 or p.scale < 1:
        raise SystemExit(f"--seeds and --scale must be >= 1, got {p.seeds} and {p.scale}")
    parts = tuple(x.strip() for x in args.parts.split(",") if x.strip())
    if not parts or set(parts) - set(PARTS):
        raise SystemExit(f"--parts: expected a comma-separated subset of {PARTS}, got {args.parts!r}")
    if p.budget is not None and p.budget < 1:
        raise SystemExit(f"--budget must be >= 1, got {p.budget}")
    import torch

    from gym_crawl.benchmarks import suite

    torch.set_num_threads(1)
    known = suite.suite_agent_names()
    bad = [a for a in p.agents if a not in known]
    if bad:
        raise SystemExit(f"--agents: unknown agent(s) {bad}; registered agents and variants: {known}")
    not_learning = [a for a in p.agents if not suite.is_learner(a)]
    if not_learning:
        raise SystemExit(f"--agents: {not_learning} do not learn (no observe): the own protocol needs a learner")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    caps = dict(p.max_tasks)
    wiki = args.wikispeedia or str(suite.DEFAULT_WIKISPEEDIA)
    results = []
    c0, w0 = time.process_time(), time.perf_counter()
    for name in p.sets:
        sets, corpora = suite.build_task_sets([name], wikispeedia=wiki, quick_budget=p.budget,
                                              max_tasks=caps.get(name))
        ts = sets[0]
        if not any(t.split == "test" for t in ts.tasks):
            raise SystemExit(f"task set {name!r} has no test tasks here: {ts.note}")
        res = run_set(ts, corpora[ts.corpus_spec], list(p.agents), seeds=p.seeds, scale=p.scale, k=p.k,
                      parts=parts)
        res["max_tasks"] = caps.get(name)
        res["summary"] = summarize_set(res, reps=p.reps)
        results.append(res)
    total = {"seconds": round(time.perf_counter() - w0, 1), "cpu_seconds": round(time.process_time() - c0, 1)}
    payload = {"config": dataclasses.asdict(p), "total": total, "sets": results}
    write_json_report(out / "tres_own.json", payload, "tres_own", args)
    md = markdown(results) + f"\nTotal: {total['seconds']:.0f} s wall, {total['cpu_seconds']:.0f} s CPU.\n"
    atomic_write_bytes(out / "tres_own.md", (markdown_banner(args.quick) + md).encode("utf-8"))
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
