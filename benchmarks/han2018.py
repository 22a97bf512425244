"""Reproduce Han et al. 2018 (linear SARSA focused crawling) on WikiCrawl-v0, and measure it.

``gym-crawl bench han2018 [--quick] [--out DIR] [--corpus NAME ...] [--steps N] [--tasks E] ...``

Agents: ``lfa-sync``, ``lfa-async``, ``lfa-moderated`` (Han), ``thesis-lfa`` (Pertejo 2021),
``td-lambda`` (Grigoriadis), and the baselines ``random``, ``bfs``, ``best-first`` (the papers'
no-learning crawler) plus the ``oracle`` upper bound (hidden labels; labelled as such).
Corpora: Wikispeedia (Geology, Cancer, Poetry, Sports; reward ``labels`` and ``han2018``) and
the synthetic web at 100,000 pages (Geology, Cancer, Poetry, Sports, Fiction, Cameras;
reward ``han2018``). Each learner runs E tasks with one agent object (w kept across tasks,
frontier reset: Han's protocol); baselines that turn out deterministic run twice and are reused.

Two relevance measures are reported for every run:

* **label** — fetched pages carrying the topic's ground-truth label (``info["relevant_found"]``);
* **han** — fetched pages that contain a topic word (tf-idf relevance > 0), Han's §3.1 definition
  of a relevant page, which is what their figures count.

Reproduced: Fig. 1 (accumulated relevant pages per step, mean ± std over tasks), Fig. 2
(relevant pages per w2v-relevance interval — the hidden page relevance is read post hoc, only
for fetched pages, by :func:`post_hoc_scorer`), Fig. 3 (relevant pages per task
as tasks repeat), Han's timing comparison (sync / async / no-learning per 10,000-step task, and
per step at a frontier ≥ 100,000 pages), and an investigation sweep (α, ε, reward) of why LFA
does or does not beat best-first. Writes ``han2018.json``, ``han2018.md`` and PNGs to ``--out``
(default ``benchmarks/results/han2018``).
"""
from __future__ import annotations

import argparse
import dataclasses
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._console import ArgumentParser
from gym_crawl.benchmarks.report import markdown_banner, write_json_report

DEFAULT_WIKISPEEDIA = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikispeedia"
ALL_AGENTS = ["lfa-sync", "lfa-async", "lfa-moderated", "thesis-lfa", "td-lambda", "random", "bfs", "best-first",
              "oracle"]
LFA_AGENTS = ("lfa-sync", "lfa-async", "lfa-moderated")
HIST_EDGES = np.linspace(0.0, 1.0, 11)
HIST_LABELS = [f"{a:.1f}-{b:.1f}" for a, b in zip(HIST_EDGES[:-1], HIST_EDGES[1:])]


@dataclass
class CorpusPlan:
    """One corpus of the benchmark: its spec, topics, reward schemes and step budget."""

    name: str
    spec: str
    topics: list[str]
    rewards: list[str]
    steps: int


@dataclass
class RunResult:
    """E tasks of one agent on one (corpus, topic, reward)."""

    corpus: str
    topic: str
    reward: str
    agent: str
    steps: int
    label: np.ndarray           # (E, steps) accumulated label-relevant pages
    han: np.ndarray             # (E, steps) accumulated topic-word pages
    reward_sum: np.ndarray      # (E,)
    seconds: np.ndarray         # (E,)
    hist_label: np.ndarray      # (E, 10) label-relevant fetched pages per w2v-relevance interval
    hist_han: np.ndarray        # (E, 10)
    reused: bool = False        # deterministic: tasks after the 2nd reuse the 1st
    extra: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        lab, han = self.label[:, -1], self.han[:, -1]
        half = max(1, len(lab) // 2)
        return {
            "corpus": self.corpus, "topic": self.topic, "reward": self.reward, "agent": self.agent,
            "steps": self.steps, "tasks": len(lab), "deterministic_reused": self.reused,
            "label_mean": float(lab.mean()), "label_std": float(lab.std()),
            "label_last_half": float(lab[-half:].mean()), "label_first": float(lab[0]),
            "han_mean": float(han.mean()), "han_std": float(han.std()), "han_last_half": float(han[-half:].mean()),
            "label_per_task": lab.tolist(), "han_per_task": han.tolist(),
            "reward_sum_mean": float(self.reward_sum.mean()),
            "seconds_mean": float(self.seconds.mean()),
            "steps_per_second": float(self.steps / max(self.seconds.mean(), 1e-9)),
            **self.extra,
        }


# --------------------------------------------------------------------------- envs
def load_corpus_cached(spec: str, cache: dict[str, Any]) -> Any:
    from gym_crawl.corpus import load_corpus

    if spec not in cache:
        cache[spec] = load_corpus(spec)
    return cache[spec]


def make_env(corpus: Any, topic: str, reward: str, agent: str, steps: int, **over: Any) -> Any:
    """The env an agent is defined with, built by :func:`gym_crawl.agents.make_env_for`: its action mode
    and ``env_defaults`` (features / reducer) with the benchmark's reward, truncated by Gymnasium's
    ``TimeLimit`` after ``steps``. Agents that define no feature set get Han's ``han2018``; page agents
    that still read the observation get a 1-slot random reducer, slot agents K = 64."""
    from gym_crawl.agents import agent_class, make_env_for

    cls = agent_class(AGENT_OF_ROW.get(agent, agent))
    own = getattr(cls, "env_defaults", {}) or {}
    slot = getattr(cls, "action_kind", "slot") == "slot"
    kw: dict[str, Any] = {k: v for k, v in (("features", "han2018"), ("reducer", "random")) if k not in own}
    kw["max_candidates"] = 64 if slot else own.get("max_candidates", 1)
    kw.update(over)
    return make_env_for(cls, env_id="WikiCrawl-v0", corpus=corpus, topic=topic, reward=reward,
                        max_episode_steps=steps, **kw)


#: the benchmark's row names that stand for a registered agent of another name
AGENT_OF_ROW = {"basic": "best-first-page"}  # the thesis' basic crawler (Algorithm 2), a page agent


def make_agent_any(name: str, **kw: Any) -> Any:
    """The registered agent a row of this benchmark runs (``basic``: ``best-first-page``)."""
    from gym_crawl.agents import make_agent

    return make_agent(AGENT_OF_ROW.get(name, name), **kw)


# ------------------------------------------------------------------------ running tasks
def _pad(curve: np.ndarray, n: int) -> np.ndarray:
    out = np.empty(n, np.int64)
    k = min(len(curve), n)
    out[:k] = curve[:k]
    out[k:] = curve[k - 1] if k else 0
    return out


def post_hoc_scorer(corpus: Any, env: Any) -> Any:
    """The hidden page scorer of the env's topic, for post-hoc analyses of *fetched* pages only (never
    seen by an agent): the corpus' memoized text model — the one the env uses — and the episode's topic."""
    from gym_crawl.relevance.scorer import TopicScorer
    from gym_crawl.text.model import get_text_model

    topic = env.unwrapped.view.current_topic
    return TopicScorer(get_text_model(corpus), topic, max(4, len(topic.categories)))


def _post_hoc(scorer: Any, res: Any, steps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Han-relevance curve and relevance-interval histograms from the fetched pages (post hoc only)."""
    fetched = np.asarray(res.fetched, dtype=np.int64)
    ps = scorer.score_pages(fetched)
    han_flag = ps.tfidf > 0
    n_seeds = len(fetched) - res.steps
    han_cum = np.cumsum(han_flag)
    han_curve = _pad(han_cum[n_seeds:], steps) if res.steps else np.zeros(steps, np.int64)
    label = scorer.label_mask[fetched] if scorer.topic.label else han_flag
    bins = np.clip(np.floor(np.asarray(ps.rel, np.float64) * 10), 0, 9).astype(np.int64)
    h_label = np.bincount(bins[label], minlength=10)
    h_han = np.bincount(bins[han_flag], minlength=10)
    return han_curve, h_label, h_han, label


def run_tasks(corpus: Any, corpus_name: str, topic: str, reward: str, agent_name: str, steps: int, tasks: int, *,
              seed: int = 0, agent_kwargs: dict[str, Any] | None = None, env_over: dict[str, Any] | None = None,
              on_step: Callable[[int], None] | None = None, reuse_deterministic: bool = True) -> RunResult:
    """E tasks of one agent object (weights kept), seeds ``seed + i``."""
    from gym_crawl.agents.runner import run_episode

    env = make_env(corpus, topic, reward, agent_name, steps, **(env_over or {}))
    scorer = post_hoc_scorer(corpus, env)
    agent = make_agent_any(agent_name, **(agent_kwargs or {}))
    learner = bool(agent.state_dict()) or agent_name in LFA_AGENTS or agent_name in ("thesis-lfa", "td-lambda")
    cb = (lambda t, info: on_step(1)) if on_step is not None else None
    L, H, R, S, HL, HH = [], [], [], [], [], []
    fetched_seqs: list[list[int]] = []
    reused = False
    for i in range(tasks):
        if (reuse_deterministic and not learner and i >= 2 and fetched_seqs[0] == fetched_seqs[1]):
            reused = True
            L.append(L[0]), H.append(H[0]), R.append(R[0]), S.append(S[0]), HL.append(HL[0]), HH.append(HH[0])
            if on_step is not None:
                on_step(steps)
            continue
        res = run_episode(env, agent, seed=seed + i, on_step=cb)
        han_curve, h_label, h_han, _ = _post_hoc(scorer, res, steps)
        L.append(_pad(res.relevant_curve, steps))
        H.append(han_curve)
        R.append(res.reward_sum)
        S.append(res.seconds)
        HL.append(h_label)
        HH.append(h_han)
        fetched_seqs.append(res.fetched.tolist() if len(fetched_seqs) < 2 else [])
        if on_step is not None and res.steps < steps:
            on_step(steps - res.steps)
    env.close()
    return RunResult(corpus_name, topic, reward, agent_name, steps, np.array(L), np.array(H), np.array(R, float),
                     np.array(S, float), np.array(HL), np.array(HH), reused)


# ----------------------------------------------------------------------------- timing
def timed_episode(env: Any, agent: Any, steps: int, seed: int = 0, warmup: Any = None,
                  warmup_until: int = 0, warmup_max: int = 0) -> dict[str, Any]:
    """Run ``steps`` steps measuring agent time (act + observe) and env time (``env.step`` of the env as
    built — the page-mode env for page agents, wrappers included) separately.

    With ``warmup`` (a page agent, e.g. BFS), that agent first crawls until the frontier holds
    ``warmup_until`` pages (at most ``warmup_max`` steps); the timed agent then takes over the
    same episode (``begin_episode`` indexes the current frontier)."""
    from gym_crawl.agents.base import Transition

    base = env.unwrapped
    obs, info = env.reset(seed=seed)
    w_steps = 0
    if warmup is not None:
        warmup.begin_episode(base.view, np.random.default_rng(seed))
        while info["frontier_size"] < warmup_until and w_steps < warmup_max:
            a = warmup.act(obs, info)
            obs2, r, term, trunc, info2 = env.step(a)
            warmup.observe(Transition(obs, a, r, obs2, term, trunc, info2))
            obs, info = obs2, info2
            w_steps += 1
    f0 = info["frontier_size"]
    t0 = time.perf_counter()
    agent.begin_episode(base.view, np.random.default_rng(seed))
    t_begin = time.perf_counter() - t0
    t_agent = t_env = 0.0
    n = 0
    step = env.step
    c_start = time.process_time()
    for _ in range(steps):
        t0 = time.perf_counter()
        a = agent.act(obs, info)
        t1 = time.perf_counter()
        obs2, r, term, trunc, info2 = step(a)
        t2 = time.perf_counter()
        agent.observe(Transition(obs, a, r, obs2, term, trunc, info2))
        t3 = time.perf_counter()
        t_agent += (t1 - t0) + (t3 - t2)
        t_env += t2 - t1
        obs, info = obs2, info2
        n += 1
        if term or trunc:
            break
    cpu = time.process_time() - c_start
    total = t_agent + t_env
    return {"agent": agent.name, "steps": n, "warmup_steps": w_steps, "frontier_start": int(f0),
            "cpu_seconds": round(cpu, 4), "cpu_us_per_step": round(1e6 * cpu / max(n, 1), 1),
            "frontier_end": int(info["frontier_size"]), "seconds": round(total, 4),
            "agent_seconds": round(t_agent, 4), "env_seconds": round(t_env, 4),
            "begin_episode_seconds": round(t_begin, 4), "steps_per_second": round(n / max(total, 1e-9), 1),
            "us_per_step": round(1e6 * total / max(n, 1), 1), "agent_us_per_step": round(1e6 * t_agent / max(n, 1), 1),
            "env_us_per_step": round(1e6 * t_env / max(n, 1), 1), "relevant_found": int(info["relevant_found"])}


def timing_task(corpus: Any, topic: str, steps: int, seed: int = 0) -> list[dict[str, Any]]:
    """Han's per-task timing: one ``steps``-step task of sync, async, moderated, no-learning (page agent)
    and best-first (Discrete(K) slots, topk reducer), each after a short warm-up task (JIT-free numpy,
    but first-touch page faults of the memory-mapped corpus would otherwise count)."""
    out = []
    for name in ["basic", "lfa-async", "lfa-moderated", "lfa-sync", "best-first"]:
        env = make_env(corpus, topic, "han2018", name, steps)
        agent = make_agent_any(name)
        timed_episode(env, make_agent_any(name), min(200, steps), seed=seed + 99)
        out.append({**timed_episode(env, agent, steps, seed=seed), "agent": name})
        env.close()
    return out


def timing_frontier(corpus: Any, topic: str, steps: int, min_frontier: int, seed: int = 0) -> list[dict[str, Any]]:
    """Per-step cost once the frontier holds ≥ ``min_frontier`` pages: a BFS warm-up grows the frontier,
    then each agent takes over the same (deterministic) episode for ``steps`` steps."""
    out = []
    for name in ["basic", "lfa-async", "lfa-sync"]:
        env = make_env(corpus, topic, "han2018", name, 10 ** 7)
        out.append({**timed_episode(env, make_agent_any(name), steps, seed=seed, warmup=make_agent_any("bfs"),
                                    warmup_until=min_frontier, warmup_max=200_000), "agent": name})
        env.close()
    return out


# ------------------------------------------------------------------------------- report
def _ratio(a: float, b: float) -> float:
    return float(a / b) if b > 0 else float("inf") if a > 0 else 1.0


def comparisons(runs: list[RunResult]) -> list[dict[str, Any]]:
    """Per (corpus, reward, topic): best LFA mode vs best-first, and the oracle bound."""
    rows = []
    keys = sorted({(r.corpus, r.reward, r.topic) for r in runs})
    by = {(r.corpus, r.reward, r.topic, r.agent): r.summary() for r in runs}
    for c, rw, t in keys:
        bf = by.get((c, rw, t, "best-first"))
        if bf is None:
            continue
        row: dict[str, Any] = {"corpus": c, "reward": rw, "topic": t, "best_first_label": bf["label_mean"],
                               "best_first_han": bf["han_mean"]}
        lfa = [by[(c, rw, t, a)] for a in LFA_AGENTS if (c, rw, t, a) in by]
        if lfa:
            for metric in ("label", "han"):
                best = max(lfa, key=lambda s: s[f"{metric}_last_half"])
                row[f"lfa_best_{metric}_agent"] = best["agent"]
                row[f"lfa_best_{metric}_last_half"] = best[f"{metric}_last_half"]
                row[f"lfa_best_{metric}_mean"] = best[f"{metric}_mean"]
                row[f"ratio_{metric}"] = _ratio(best[f"{metric}_last_half"], bf[f"{metric}_mean"])
        for other in ("thesis-lfa", "td-lambda", "bfs", "random"):
            if (c, rw, t, other) in by:
                row[f"{other}_label"] = by[(c, rw, t, other)]["label_mean"]
        orc = by.get((c, rw, t, "oracle"))
        if orc is not None:
            row["oracle_label"] = orc["label_mean"]
            row["best_first_fraction_of_oracle"] = _ratio(bf["label_mean"], orc["label_mean"])
            if lfa:
                row["lfa_fraction_of_oracle"] = _ratio(row["lfa_best_label_last_half"], orc["label_mean"])
        rows.append(row)
    return rows


def _fmt(x: Any, nd: int = 1) -> str:
    if isinstance(x, float):
        return f"{x:.{nd}f}"
    return str(x)


def markdown(res: dict[str, Any]) -> str:
    out = ["# Han et al. 2018 on WikiCrawl-v0", "",
           f"Machine: {res['machine']}. Command: `{res['command']}`. Wall time {res['wall_seconds']:.0f} s.", "",
           "Relevant pages: **label** = ground-truth topic label; **han** = contains a topic word (Han §3.1). "
           "Values are means over the tasks of one agent object (weights kept across tasks, Han's protocol); "
           "'last half' = mean over the second half of the tasks (after learning, Han's Fig. 3 reading). "
           "The oracle reads hidden labels: an upper bound, not a crawler.", ""]
    out += ["## Relevant pages at the budget", "",
            "| corpus | reward | topic | agent | steps | tasks | label mean ± std | label last half | "
            "han mean ± std | han last half | steps/s |", "|" + "---|" * 11]
    for s in res["runs"]:
        out.append(f"| {s['corpus']} | {s['reward']} | {s['topic']} | {s['agent']} | {s['steps']} | {s['tasks']} | "
                   f"{s['label_mean']:.1f} ± {s['label_std']:.1f} | {s['label_last_half']:.1f} | "
                   f"{s['han_mean']:.1f} ± {s['han_std']:.1f} | {s['han_last_half']:.1f} | "
                   f"{s['steps_per_second']:.0f} |")
    out += ["", "## Best LFA mode vs best-first (ratio = LFA last half / best-first) and the oracle bound", "",
            "| corpus | reward | topic | best-first label | best LFA label (agent) | ratio label | "
            "best-first han | best LFA han (agent) | ratio han | oracle label | best-first / oracle | LFA / oracle |",
            "|" + "---|" * 12]
    for r in res["comparisons"]:
        out.append(f"| {r['corpus']} | {r['reward']} | {r['topic']} | {r['best_first_label']:.1f} | "
                   f"{_fmt(r.get('lfa_best_label_last_half', float('nan')))} ({r.get('lfa_best_label_agent', '-')}) | "
                   f"{_fmt(r.get('ratio_label', float('nan')), 2)} | {r['best_first_han']:.1f} | "
                   f"{_fmt(r.get('lfa_best_han_last_half', float('nan')))} ({r.get('lfa_best_han_agent', '-')}) | "
                   f"{_fmt(r.get('ratio_han', float('nan')), 2)} | {_fmt(r.get('oracle_label', float('nan')))} | "
                   f"{_fmt(r.get('best_first_fraction_of_oracle', float('nan')), 2)} | "
                   f"{_fmt(r.get('lfa_fraction_of_oracle', float('nan')), 2)} |")
    if res.get("timing_task"):
        out += ["", "## Timing per task (Han: sync 654 s, async 55 s, no-learning 28 s per 10,000-page task)", "",
                "| agent | steps | wall s | CPU s | steps/s (wall) | µs/step wall | µs/step CPU | agent µs/step | "
                "env µs/step | frontier at end |",
                "|---|---|---|---|---|---|---|---|---|---|"]
        for t in res["timing_task"]:
            out.append(f"| {t['agent']} | {t['steps']} | {t['seconds']:.2f} | {t['cpu_seconds']:.2f} | "
                       f"{t['steps_per_second']:.0f} | {t['us_per_step']:.0f} | {t['cpu_us_per_step']:.0f} | "
                       f"{t['agent_us_per_step']:.0f} | {t['env_us_per_step']:.0f} | {t['frontier_end']} |")
        rt = res["timing_ratios"]
        out += ["", f"Ratios: sync/async = {rt['sync_over_async']:.2f} (Han 11.9), async/no-learning = "
                    f"{rt['async_over_basic']:.2f} (Han 1.96), sync/no-learning = "
                    f"{rt['sync_over_basic']:.2f} (Han 23.4)."]
    if res.get("timing_frontier"):
        out += ["", "## Per step at a large frontier (BFS warm-up, then each agent takes over)", "",
                "| agent | frontier start → end | warm-up steps | steps | µs/step wall | µs/step CPU | "
                "agent µs/step | env µs/step | begin_episode s |",
                "|---|---|---|---|---|---|---|---|---|"]
        for t in res["timing_frontier"]:
            out.append(f"| {t['agent']} | {t['frontier_start']} → {t['frontier_end']} | {t['warmup_steps']} | "
                       f"{t['steps']} | {t['us_per_step']:.0f} | {t['cpu_us_per_step']:.0f} | "
                       f"{t['agent_us_per_step']:.0f} | {t['env_us_per_step']:.0f} | "
                       f"{t['begin_episode_seconds']:.2f} |")
    if res.get("sweep"):
        out += ["", "## Investigation sweep (why LFA does or does not beat best-first)", "",
                "| corpus | topic | reward | agent | features | α | ε | label mean | label last half | han mean | "
                "han last half |", "|" + "---|" * 11]
        for s in res["sweep"]:
            out.append(f"| {s['corpus']} | {s['topic']} | {s['reward']} | {s['agent']} | {s.get('features', '-')} | "
                       f"{s.get('alpha', '-')} | {s.get('epsilon', '-')} | {s['label_mean']:.1f} | "
                       f"{s['label_last_half']:.1f} | {s['han_mean']:.1f} | {s['han_last_half']:.1f} |")
    out += ["", "## Targets", ""] + [f"- {t}" for t in res["targets"]]
    out += ["", "Figures: " + ", ".join(f"`{p}`" for p in res["figures"]), ""]
    return "\n".join(out)


def targets(res: dict[str, Any]) -> list[str]:
    lines = []
    comps = res["comparisons"]
    for corpus in sorted({c["corpus"] for c in comps}):
        for rw in sorted({c["reward"] for c in comps if c["corpus"] == corpus}):
            rows = [c for c in comps if c["corpus"] == corpus and c["reward"] == rw and "ratio_label" in c]
            if not rows:
                continue
            for metric in ("label", "han"):
                hits = [c["topic"] for c in rows if c[f"ratio_{metric}"] >= 1.2]
                ratios = ", ".join(f"{c['topic']} {c[f'ratio_{metric}']:.2f}" for c in rows)
                lines.append(f"LFA ≥ 1.2× best-first ({corpus}, reward {rw}, {metric} relevance): "
                             f"{len(hits)}/{len(rows)} topics [{ratios}]")
    if res.get("timing_frontier"):
        tf = {t["agent"]: t for t in res["timing_frontier"]}
        if "lfa-sync" in tf and "lfa-async" in tf:
            r = tf["lfa-sync"]["us_per_step"] / max(tf["lfa-async"]["us_per_step"], 1e-9)
            lines.append(f"sync ≤ 2× async per step at frontier ≥ 100k: {'REACHED' if r <= 2 else 'MISSED'} "
                         f"(ratio {r:.2f} at frontier {tf['lfa-sync']['frontier_start']}–"
                         f"{tf['lfa-sync']['frontier_end']})")
    if res.get("timing_task"):
        tt = {t["agent"]: t for t in res["timing_task"]}
        if "lfa-async" in tt:
            a = tt["lfa-async"]
            ok = a["seconds"] < 5.5 and a["steps"] >= 10000
            lines.append(f"10,000-step async crawl < 5.5 s: {'REACHED' if ok else 'MISSED'} "
                         f"({a['steps']} steps in {a['seconds']:.2f} s = {a['steps_per_second']:.0f} steps/s; "
                         f"agent {a['agent_us_per_step']:.0f} µs/step, env {a['env_us_per_step']:.0f} µs/step)")
    for c in comps:
        if "oracle_label" in c:
            lines.append(f"oracle bound {c['corpus']}/{c['reward']}/{c['topic']}: {c['oracle_label']:.0f} label pages; "
                         f"best-first reaches {c['best_first_fraction_of_oracle']:.2f}, best LFA "
                         f"{c.get('lfa_fraction_of_oracle', float('nan')):.2f}")
    return lines


# ------------------------------------------------------------------------------ figures
def _downsample(a: np.ndarray, n: int = 200) -> list[float]:
    if len(a) <= n:
        return [float(v) for v in a]
    idx = np.unique(np.linspace(0, len(a) - 1, n).astype(int))
    return [float(a[i]) for i in idx]


def figures(runs: list[RunResult], out: Path, prefix: str = "") -> list[str]:
    from gym_crawl.benchmarks.plotting import bars_figure, curves_figure, learning_curves_figure

    paths = []
    for c in sorted({r.corpus for r in runs}):
        for rw in sorted({r.reward for r in runs if r.corpus == c}):
            sel = [r for r in runs if r.corpus == c and r.reward == rw]
            topics = sorted({r.topic for r in sel})
            for metric in ("label", "han"):
                panels = {t: {r.agent: (getattr(r, metric).mean(0), getattr(r, metric).std(0))
                              for r in sel if r.topic == t} for t in topics}
                p = out / f"{prefix}fig1_{c}_{rw}_{metric}.png"
                curves_figure(panels, p, title=f"Han Fig. 1 — {c}, reward {rw}: accumulated {metric}-relevant pages "
                                               f"(mean ± std over tasks)")
                paths.append(p.name)
                hist = {t: {r.agent: getattr(r, f"hist_{metric}").mean(0) for r in sel if r.topic == t} for t in topics}
                p = out / f"{prefix}fig2_{c}_{rw}_{metric}.png"
                bars_figure(hist, p, title=f"Han Fig. 2 — {c}, reward {rw}: {metric}-relevant pages per "
                                           f"w2v-relevance interval", labels=HIST_LABELS,
                            xlabel="page relevance (cosine, hidden, post hoc)", ylabel="pages")
                paths.append(p.name)
                lc = {t: {r.agent: getattr(r, metric)[:, -1] for r in sel if r.topic == t} for t in topics}
                p = out / f"{prefix}fig3_{c}_{rw}_{metric}.png"
                learning_curves_figure(lc, p, title=f"Han Fig. 3 — {c}, reward {rw}: {metric}-relevant pages "
                                                    f"per task",
                                       ylabel=f"{metric}-relevant pages per task")
                paths.append(p.name)
    return paths


# ------------------------------------------------------------------------------ presets
@dataclass(frozen=True)
class Preset:
    """A named configuration of the benchmark; command-line flags override its fields.

    ``steps``/``topics``/``rewards`` = ``None``: each corpus' own defaults (:func:`plans`).
    ``sweep_tasks`` = ``None``: as many tasks as the main grid. ``timing_corpus`` = ``None``: time on
    the first planned corpus and topic, without the large-frontier experiment."""

    name: str
    corpora: tuple[str, ...]
    tasks: int
    steps: int | None = None
    topics: tuple[str, ...] | None = None
    rewards: tuple[str, ...] | None = None
    sweep_grid: tuple[tuple[float, float], ...] = tuple((a, e) for a in (0.001, 0.01) for e in (0.1, 0.02, 0.0))
    sweep_continuous_features: bool = True
    #: also run Han's integer-index vector (:class:`gym_crawl.features.han_index.HanIndexFeatures`) at Han's α, ε
    sweep_index_features: bool = True
    sweep_tasks: int | None = 5
    timing_corpus: str | None = "synthetic-100000"
    timing_steps: int = 10_000
    frontier_corpus: str = "synthetic-400000"
    frontier_min: int = 100_000
    frontier_steps: int = 1000


#: CI-sized (< 60 s): one small synthetic corpus, one topic, both rewards, 2 tasks.
QUICK = Preset("quick", corpora=("synthetic-3000",), tasks=2, steps=120, topics=("cancer",),
               rewards=("han2018", "labels"), sweep_grid=((0.01, 0.1),), sweep_continuous_features=False,
               sweep_tasks=None, timing_corpus=None, timing_steps=300)
#: The reproduction: Wikispeedia and the 100,000-page synthetic web, 10 tasks, the full sweep and timings.
FULL = Preset("full", corpora=("wikispeedia", "synthetic-100000"), tasks=10)
PRESETS = {p.name: p for p in (QUICK, FULL)}


def _csv(v: str | None) -> tuple[str, ...] | None:
    return None if v is None else tuple(x for x in v.split(",") if x)


def preset_from_args(args: argparse.Namespace) -> Preset:
    """``--quick`` picks :data:`QUICK`, else :data:`FULL`; flags that were given override its fields."""
    base = QUICK if args.quick else FULL
    given = {"corpora": tuple(args.corpus) if args.corpus else None, "tasks": args.tasks, "steps": args.steps,
             "topics": _csv(args.topics), "rewards": _csv(args.rewards), "sweep_tasks": args.sweep_tasks,
             "timing_corpus": args.timing_corpus, "timing_steps": args.timing_steps,
             "frontier_corpus": args.frontier_corpus, "frontier_min": args.frontier_min,
             "frontier_steps": args.frontier_steps}
    return dataclasses.replace(base, **{k: v for k, v in given.items() if v is not None})


def plans(preset: Preset) -> list[CorpusPlan]:
    """The corpora of a preset with their topics, rewards and step budgets."""
    out = []
    for spec in preset.corpora:
        if spec == "wikispeedia":
            path = str(DEFAULT_WIKISPEEDIA) if DEFAULT_WIKISPEEDIA.exists() else "wikispeedia"
            out.append(CorpusPlan("wikispeedia", path, ["geology", "cancer", "poetry", "sports"],
                                  ["labels", "han2018"], preset.steps or 200))
        elif spec.startswith("synthetic"):
            out.append(CorpusPlan(spec, spec, ["geology", "cancer", "poetry", "sports", "fiction", "cameras"],
                                  ["han2018"], preset.steps or 2000))
        else:
            out.append(CorpusPlan(Path(spec).name, spec, [], ["labels", "han2018"], preset.steps or 1000))
    for p in out:
        if preset.topics:
            p.topics = list(preset.topics)
        if preset.rewards:
            p.rewards = list(preset.rewards)
    return out


def build_parser() -> argparse.ArgumentParser:
    ap = ArgumentParser(prog="gym-crawl bench han2018", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the QUICK preset: CI-sized run (small synthetic corpus, "
                                                         "< 60 s); default: the FULL preset")
    ap.add_argument("--out", default="benchmarks/results/han2018", help="output folder")
    ap.add_argument("--corpus", action="append", help="wikispeedia, synthetic-<N> or a path (repeatable)")
    ap.add_argument("--steps", type=int, default=None,
                    help="step budget per task (default: 200 on Wikispeedia ≈ 4 %% of its 4,604 pages, as Han's "
                         "10,000 of ~200,000; 2000 on the synthetic web)")
    ap.add_argument("--tasks", type=int, default=None, help="tasks per agent (weights kept; default 10, quick 2)")
    ap.add_argument("--topics", default=None, help="comma-separated topics (default per corpus)")
    ap.add_argument("--rewards", default=None, help="comma-separated reward schemes (default per corpus)")
    ap.add_argument("--agents", default=",".join(ALL_AGENTS), help="comma-separated agents")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-timing", action="store_true", help="skip the timing experiments")
    ap.add_argument("--timing-corpus", default=None, help="corpus of the per-task timing (full: synthetic-100000)")
    ap.add_argument("--timing-steps", type=int, default=None, help="steps of the timed task (full 10,000, quick 300)")
    ap.add_argument("--frontier-corpus", default=None, help="corpus of the large-frontier timing (synthetic-400000)")
    ap.add_argument("--frontier-min", type=int, default=None, help="frontier size before timing per step (100,000)")
    ap.add_argument("--frontier-steps", type=int, default=None, help="timed steps at the large frontier (1000)")
    ap.add_argument("--no-sweep", action="store_true", help="skip the α/ε/reward investigation sweep")
    ap.add_argument("--sweep-tasks", type=int, default=None, help="tasks per sweep run (full 5; quick: --tasks)")
    g = ap.add_argument_group("Han's protocol at its scale (--paper-scale)")
    g.add_argument("--paper-scale", action="store_true",
                   help="Han §4 on the 323k-page web: 6 topics incl. Olympics, 10,000-page tasks, 100 tasks per trial "
                        "(Fig. 1 = trial 0), 10 trials (Fig. 3), α = 0.0005 for Olympics/Fiction, han-index and "
                        "han2018 features; resumable (kept runs in <out>/runs/). Default --out "
                        "benchmarks/results/han2018_paper. With --quick: a CI-sized run of the same code")
    g.add_argument("--trials", type=int, default=None, help="--paper-scale: independent trials (paper 10)")
    g.add_argument("--baseline-tasks", type=int, default=None,
                   help="--paper-scale: real tasks of the no-learning crawler per topic (default 100)")
    g.add_argument("--features", default=None, help="--paper-scale: comma-separated feature sets "
                                                     "(default han-index,han2018)")
    g.add_argument("--max-minutes", type=float, default=None,
                   help="--paper-scale: start no new task after this many minutes, then report what is kept")
    g.add_argument("--cached-only", action="store_true",
                   help="--paper-scale: run nothing; report the kept runs and list the missing ones")
    g.add_argument("--no-figures", action="store_true", help="--paper-scale: write the JSON and Markdown only")
    g.add_argument("--records", default=None,
                   help="--paper-scale: folder of committed task records (<topic>.jsonl.gz, e.g. "
                        "benchmarks/records/han2018_paper): imported into <out>/runs before running, and every "
                        "kept task exported back after, so the 28-CPU-hour protocol accumulates across machines")
    g.add_argument("--jobs", type=int, default=1, help="--paper-scale: must be 1 (tasks of a chain are sequential)")
    return ap


# --------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    from gym_crawl._io import atomic_write_bytes

    args = build_parser().parse_args(argv)
    if args.paper_scale:
        return paper_main(args, argv)
    preset = preset_from_args(args)
    t_start = time.perf_counter()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cplans = plans(preset)
    cache: dict[str, Any] = {}
    runs = main_grid(cplans, [a for a in args.agents.split(",") if a], preset.tasks, args.seed, cache)
    res: dict[str, Any] = {
        "benchmark": "han2018", "preset": preset.name, "command": "gym-crawl bench han2018 " + " ".join(argv or []),
        "machine": f"{platform.processor() or platform.machine()}, {__import__('os').cpu_count()} cores, "
                   f"python {platform.python_version()}",
        "tasks": preset.tasks, "runs": [r.summary() for r in runs], "comparisons": comparisons(runs),
        "curves": [curve_summary(r) for r in runs],
    }
    if not args.no_sweep:
        res["sweep"] = [dict(r.summary(), **r.extra) for r in sweep(preset, cplans, cache, args.seed)]
    if not args.no_timing:
        res.update(timings(preset, cplans, cache, args.seed))
    res["figures"] = figures(runs, out)
    res["targets"] = targets(res)
    res["wall_seconds"] = time.perf_counter() - t_start
    write_json_report(out / "han2018.json", res, "han2018", args)
    atomic_write_bytes(out / "han2018.md", (markdown_banner(args.quick) + markdown(res)).encode())
    print(f"wrote {out / 'han2018.json'}, {out / 'han2018.md'} and {len(res['figures'])} figures")
    for line in res["targets"]:
        print(" -", line)
    return 0


def main_grid(cplans: list[CorpusPlan], agents: list[str], tasks: int, seed: int,
              cache: dict[str, Any]) -> list[RunResult]:
    """Every corpus × reward × topic × agent: ``tasks`` tasks of one agent object each."""
    from tqdm.auto import tqdm

    total = sum(len(p.topics or []) * len(p.rewards) * len(agents) * tasks * p.steps for p in cplans)
    runs: list[RunResult] = []
    with tqdm(total=total, desc="han2018 crawls", unit="step", mininterval=1.0) as bar:
        for p in cplans:
            corpus = load_corpus_cached(p.spec, cache)
            topics = p.topics or list(corpus.meta.get("topics") or {})[:4]
            for rw in p.rewards:
                for t in topics:
                    for a in agents:
                        bar.set_postfix_str(f"{p.name}/{rw}/{t}/{a}")
                        runs.append(run_tasks(corpus, p.name, t, rw, a, p.steps, tasks, seed=seed,
                                              on_step=bar.update))
    return runs


def curve_summary(r: RunResult) -> dict[str, Any]:
    """The downsampled mean ± std curves and mean histograms of one run, for the JSON."""
    return {"corpus": r.corpus, "topic": r.topic, "reward": r.reward, "agent": r.agent,
            "label_mean": _downsample(r.label.mean(0)), "label_std": _downsample(r.label.std(0)),
            "han_mean": _downsample(r.han.mean(0)), "han_std": _downsample(r.han.std(0)),
            "hist_label": r.hist_label.mean(0).tolist(), "hist_han": r.hist_han.mean(0).tolist()}


def timings(preset: Preset, cplans: list[CorpusPlan], cache: dict[str, Any], seed: int) -> dict[str, Any]:
    """Han's per-task timing (and, with a ``timing_corpus``, the large-frontier per-step timing)."""
    from tqdm.auto import tqdm

    res: dict[str, Any] = {}
    if preset.timing_corpus is None:
        corpus = load_corpus_cached(cplans[0].spec, cache)
        res["timing_task"] = timing_task(corpus, cplans[0].topics[0], preset.timing_steps, seed)
    else:
        with tqdm(total=2, desc="han2018 timing", unit="exp") as tb:
            corpus = load_corpus_cached(preset.timing_corpus, cache)
            res["timing_task"] = timing_task(corpus, "geology", preset.timing_steps, seed)
            tb.update(1)
            big = load_corpus_cached(preset.frontier_corpus, cache)
            res["timing_frontier"] = timing_frontier(big, "geology", preset.frontier_steps, preset.frontier_min, seed)
            tb.update(1)
    tt = {t["agent"]: t for t in res["timing_task"]}
    res["timing_ratios"] = {
        "sync_over_async": _ratio(tt["lfa-sync"]["seconds"], tt["lfa-async"]["seconds"]),
        "async_over_basic": _ratio(tt["lfa-async"]["seconds"], tt["basic"]["seconds"]),
        "sync_over_basic": _ratio(tt["lfa-sync"]["seconds"], tt["basic"]["seconds"]),
        "han_2018": {"sync_s": 654, "async_s": 55, "no_learning_s": 28}}
    return res


def sweep(preset: Preset, cplans: list[CorpusPlan], cache: dict[str, Any], seed: int) -> list[RunResult]:
    """α × ε × reward for lfa-sync / lfa-async on one topic per corpus, with best-first references; the
    feature variants: Han's tiles (``han2018``), their raw quantities and Han's integer-index vector."""
    from tqdm.auto import tqdm

    from gym_crawl.features.han_index import HanIndexFeatures

    tasks = preset.sweep_tasks or preset.tasks
    jobs = []
    for p in cplans:
        topic = (p.topics or ["geology"])[0]
        for rw in (["han2018", "labels"] if "labels" in p.rewards or p.name.startswith("synthetic") else ["han2018"]):
            jobs.append((p, topic, rw, "best-first", None))
            for ag in ("lfa-sync", "lfa-async"):
                for a, e in preset.sweep_grid:
                    jobs.append((p, topic, rw, ag, {"alpha": a, "epsilon": e}))
                if preset.sweep_continuous_features:  # features: Han's tiles vs the same quantities as raw values
                    jobs.append((p, topic, rw, ag, {"alpha": 0.01, "epsilon": 0.02, "features": "han2018-continuous"}))
                if preset.sweep_index_features:  # Han's own vector: the tiles' bucket indexes as integers
                    jobs.append((p, topic, rw, ag, {"alpha": 0.001, "epsilon": 0.1, "features": "han-index"}))
    total = sum(j[0].steps * tasks for j in jobs)
    out = []
    with tqdm(total=total, desc="han2018 sweep", unit="step", mininterval=1.0) as bar:
        for p, topic, rw, ag, kw in jobs:
            corpus = load_corpus_cached(p.spec, cache)
            kw = dict(kw or {})
            feats = kw.pop("features", "han2018")
            fs: Any = HanIndexFeatures(4) if feats == "han-index" else feats
            r = run_tasks(corpus, p.name, topic, rw, ag, p.steps, tasks, seed=seed + 1000, agent_kwargs=kw,
                          env_over={"features": fs} if ag != "best-first" else None, on_step=bar.update)
            r.extra = dict(kw, features=feats) if ag != "best-first" else {}
            out.append(r)
    return out


# ====================================================== Han's protocol at its scale (``--paper-scale``)
#: Han et al. 2018 §4: the six target topics (abundant: Fiction, Olympics, Cancer; sparse: Cameras, Geology, Poetry).
HAN_TOPICS = ("fiction", "olympics", "cancer", "cameras", "geology", "poetry")
#: §4: "step size α = 0.001. For topic Olympics and Fiction, step size α is set to 0.0005."
HAN_ALPHA_BY_TOPIC = (("fiction", 0.0005), ("olympics", 0.0005))
#: The three RL crawlers of Figs. 1–3 (synchronous, asynchronous, asynchronous with moderated update).
HAN_AGENTS = ("lfa-sync", "lfa-async", "lfa-moderated")
#: Feature vectors: Han's integer bucket indexes (faithful, 8+2C state + 6+2C action columns) and the tilings.
HAN_FEATURES = ("han-index", "han2018")


@dataclass(frozen=True)
class PaperPreset:
    """Han et al. 2018's experimental protocol (§4) at its scale; every field is the paper's unless noted.

    * ``corpus``: the 323,000-page synthetic web — the stand-in for Simple English Wikipedia used by
      ``gym-crawl bench scale`` (the thesis' dump: 323,198 pages); the real dump cannot be downloaded here.
    * ``steps`` = 10,000 pages per crawling task; ``tasks`` = 100 tasks per trial, the weight vector kept
      from task to task and everything else reset (Fig. 1: "each curve is the average of 100 tasks" =
      trial 0; Fig. 3's x axis is the task number — the text does not state how many, we use the same 100);
      ``trials`` = 10 independent trials (Fig. 3).
    * ε = 0.1, γ = 0.9, α = 0.001, α = 0.0005 for Olympics and Fiction; reward ``han2018`` (30 / 20 / −1);
      each topic's seed is its main page; categories per topic are Han's ODP choices
      (:data:`gym_crawl.relevance.topic.HAN2018_CATEGORIES`) and the env has exactly that many category
      slots C, so ``han-index`` is Han's 8+2C + 6+2C vector (Olympics: 1 category, 18 columns).
    * ``baseline`` (the no-learning crawler: frontier priority = w2v cosine of the link's URL, anchor and
      surrounding text) has no weights, so its trials are just more tasks: it runs ``baseline_tasks`` real
      tasks (distinct seeds, never copied) and Fig. 3 draws their mean as a flat line, as Han's does.
    * ``first_trials`` × ``first_tasks`` (not Han's: a scheduling choice) is the block of every chain run
      first (the baseline: its first ``first_trials · first_tasks`` tasks), the primary settings
      (``features[0]``, ``primary_agents``, baseline) before the others, topic by topic, so an interrupted run
      has ≥ 5 independent trials of the faithful setting; then trial 0 to ``tasks`` (Fig. 1, primary settings
      first), then the other trials (:func:`work_stage`).
    """

    name: str = "paper"
    corpus: str = "synthetic-323000"
    topics: tuple[str, ...] = HAN_TOPICS
    steps: int = 10_000
    tasks: int = 100
    trials: int = 10
    agents: tuple[str, ...] = HAN_AGENTS
    features: tuple[str, ...] = HAN_FEATURES
    baseline: str = "best-first"
    baseline_tasks: int = 100
    reward: str = "han2018"
    alpha: float = 0.001
    alpha_by_topic: tuple[tuple[str, float], ...] = HAN_ALPHA_BY_TOPIC
    epsilon: float = 0.1
    gamma: float = 0.9
    primary_agents: tuple[str, ...] = ("lfa-async", "lfa-sync")
    first_trials: int = 5
    first_tasks: int = 3
    curve_points: int = 100

    def alpha_of(self, topic: str) -> float:
        return dict(self.alpha_by_topic).get(topic, self.alpha)


#: Han's protocol at its scale (``--paper-scale``).
PAPER = PaperPreset()
#: CI-sized run of the same code path (``--paper-scale --quick``).
PAPER_QUICK = PaperPreset(name="paper-quick", corpus="synthetic-3000", topics=("olympics", "cancer"), steps=100,
                          tasks=3, trials=2, baseline_tasks=3, first_trials=1, first_tasks=2, curve_points=20)


@dataclass(frozen=True)
class Chain:
    """One sequence of tasks sharing an agent object (weights kept): (topic, agent, features, trial)."""

    topic: str
    agent: str
    features: str          # "-" for the baseline (it reads no feature set)
    trial: int
    n_tasks: int

    @property
    def learner(self) -> bool:
        return self.features != "-"


def paper_chains(p: PaperPreset) -> list[Chain]:
    out = []
    for t in p.topics:
        out.append(Chain(t, p.baseline, "-", 0, p.baseline_tasks))
        for f in p.features:
            for a in p.agents:
                out.extend(Chain(t, a, f, j, p.tasks) for j in range(p.trials))
    return out


def chain_config(p: PaperPreset, c: Chain, seed: int) -> dict[str, Any]:
    """Everything a kept task depends on (its folder name is derived from it; a rerun checks it)."""
    from gym_crawl.relevance.topic import HAN2018_CATEGORIES

    cfg: dict[str, Any] = {"corpus": p.corpus, "topic": c.topic, "agent": c.agent, "features": c.features,
                           "trial": c.trial, "steps": p.steps, "reward": p.reward, "seed": seed,
                           "n_categories": len(HAN2018_CATEGORIES[c.topic])}
    if c.learner:
        cfg.update(alpha=p.alpha_of(c.topic), epsilon=p.epsilon, gamma=p.gamma)
    return cfg


def chain_dir(root: Path, cfg: dict[str, Any]) -> Path:
    name = (f"{cfg['agent']}__{cfg['features']}__C{cfg['n_categories']}__{cfg['reward']}"
            f"__n{cfg['steps']}__s{cfg['seed']}")
    if "alpha" in cfg:
        name += f"__a{cfg['alpha']}_e{cfg['epsilon']}_g{cfg['gamma']}"
    return root / cfg["corpus"].replace("/", "_") / cfg["topic"] / f"{name}__trial{cfg['trial']}"


def task_seed(seed: int, trial: int, task: int) -> int:
    """Env and agent seed of task ``task`` of trial ``trial`` (distinct for every task of a chain)."""
    return seed + 1000 * trial + task


def _in_block(p: PaperPreset, c: Chain, i: int) -> bool:
    """Task ``i`` of chain ``c`` belongs to the first block (see :class:`PaperPreset`)."""
    if not c.learner:
        return i < p.first_trials * p.first_tasks
    return c.trial < p.first_trials and i < p.first_tasks


def work_stage(p: PaperPreset, c: Chain, i: int) -> int:
    """0/1: the first block, primary settings / the others; 2/3: the rest of trial 0 (Fig. 1), primary / the
    others; 4: the other trials (Fig. 3)."""
    primary = not c.learner or (c.features == p.features[0] and c.agent in p.primary_agents)
    if _in_block(p, c, i):
        return 0 if primary else 1
    if c.trial == 0:
        return 2 if primary else 3
    return 4


def work_order(p: PaperPreset, chains: list[Chain]) -> list[tuple[Chain, int]]:
    """Every (chain, task) in the order they are run (see :class:`PaperPreset`): a chain's tasks in order.

    Stages 0–3 go topic by topic; stage 4 (trials 1–9) goes task by task — task i of every trial, topic and
    agent before task i + 1 of any — so a run stopped there leaves all ten trials with the same number of
    tasks (Fig. 3 needs the trials; the paper does not say how many tasks its x axis spans)."""
    items = []
    for c in chains:
        for i in range(c.n_tasks):
            stage = work_stage(p, c, i)
            key = ((stage, i, c.trial, p.topics.index(c.topic), c.agent, c.features) if stage == 4 else
                   (stage, p.topics.index(c.topic), c.trial, i, c.agent, c.features))
            items.append((key, c, i))
    items.sort(key=lambda x: x[0])
    return [(c, i) for _, c, i in items]


def _task_path(d: Path, i: int) -> Path:
    return d / f"task_{i:04d}.json"


def load_kept(d: Path, cfg: dict[str, Any]) -> list[dict[str, Any]]:
    """The contiguous prefix of kept tasks of one chain (a gap ends it); a record made with other settings
    is an error naming the file."""
    import json

    out: list[dict[str, Any]] = []
    while (f := _task_path(d, len(out))).exists():
        rec = json.loads(f.read_text())
        if rec.get("config") != cfg:
            raise ValueError(f"kept run {f} was made with other settings ({rec.get('config')} != {cfg}); "
                             f"use another --out or remove that folder")
        out.append(rec)
    return out


def _curve_points(curve: np.ndarray, steps: int, n: int) -> list[int]:
    """Accumulated counts after 0, steps/n, 2·steps/n, …, steps steps (n + 1 exact points)."""
    at = np.linspace(0, steps, n + 1).round().astype(np.int64)
    c = np.concatenate([[0], np.asarray(curve, np.int64)])
    return [int(c[min(k, len(c) - 1)]) for k in at]


#: what a committed record keeps: every record its totals; trial 0 (Fig. 1, Fig. 2) also its curves and
#: histograms; the last record of a chain also the weights after it (what a resumed chain starts from)
RECORD_CORE = ("config", "task", "seed", "steps", "label", "han", "reward_sum", "seconds", "cpu_seconds")
RECORD_TRIAL0 = ("label_curve", "han_curve", "hist_label", "hist_han")


def compact_record(rec: dict[str, Any], last: bool) -> dict[str, Any]:
    """The committed form of a kept task record (see :data:`RECORD_CORE`)."""
    keys = RECORD_CORE + (RECORD_TRIAL0 if rec["config"]["trial"] == 0 else ()) + (("state",) if last else ())
    return {k: rec[k] for k in keys if rec.get(k) is not None}


def _records_file(records: Path, topic: str) -> Path:
    return records / f"{topic}.jsonl.gz"


def read_records(path: Path) -> list[dict[str, Any]]:
    """The records of one committed ``<topic>.jsonl.gz`` (a JSON object per line); a damaged file or a line
    without the fields every record has is an error naming the file and line (nothing is imported then)."""
    import gzip
    import json

    try:
        lines = gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()
    except (OSError, EOFError, UnicodeDecodeError) as e:
        raise ValueError(f"--records: {path} is not a complete gzip file of JSON lines ({e}); restore it from "
                         f"git (git checkout -- {path}) or remove it") from e
    out = []
    for n, line in enumerate(lines, 1):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"--records: {path} line {n} is not JSON ({e})") from e
        miss = [k for k in ("config", "task", "seed", "label", "han", "cpu_seconds") if k not in rec]
        if miss:
            raise ValueError(f"--records: {path} line {n} lacks {miss}")
        out.append(rec)
    return out


def import_records(root: Path, records: Path, topics: tuple[str, ...]) -> int:
    """Write the committed records of ``topics`` that ``root`` does not hold yet as kept task files; returns how
    many. Kept files are never overwritten (a run's own record wins); every file is checked before any is
    written."""
    from gym_crawl._io import atomic_write_json

    todo = []
    for t in topics:
        f = _records_file(records, t)
        if f.exists():
            for rec in read_records(f):
                dest = _task_path(chain_dir(root, rec["config"]), int(rec["task"]))
                if not dest.exists():
                    todo.append((dest, rec))
    for dest, rec in todo:
        dest.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(dest, rec)
    return len(todo)


def export_records(p: PaperPreset, root: Path, records: Path, seed: int) -> dict[str, int]:
    """Write ``<records>/<topic>.jsonl.gz`` for every topic of ``p``: its committed records merged with every task
    kept under ``root`` (compact, see :func:`compact_record`), sorted, gzip with no timestamp (same records ⇒
    same bytes), written atomically. Returns records per topic."""
    import gzip
    import json

    from gym_crawl._io import atomic_write_bytes

    counts = {}
    for t in p.topics:
        f = _records_file(records, t)
        recs: dict[tuple[str, int], dict[str, Any]] = {}
        for rec in (read_records(f) if f.exists() else []):
            recs[(str(chain_dir(Path(), rec["config"])), int(rec["task"]))] = rec
        chains = [c for c in paper_chains(p) if c.topic == t]
        for c in chains:
            cfg = chain_config(p, c, seed)
            for rec in load_kept(chain_dir(root, cfg), cfg):
                recs[(str(chain_dir(Path(), cfg)), int(rec["task"]))] = rec
        last: dict[str, int] = {}
        for d, i in recs:
            last[d] = max(last.get(d, -1), i)
        lines = [json.dumps(compact_record(recs[k], k[1] == last[k[0]]), sort_keys=True, separators=(",", ":"))
                 for k in sorted(recs)]
        if lines:
            atomic_write_bytes(f, gzip.compress(("\n".join(lines) + "\n").encode("utf-8"), mtime=0))
        counts[t] = len(lines)
    return counts


class PaperRunner:
    """Runs (chain, task) items of a :class:`PaperPreset`, keeping each task's result and the weights after it
    in ``<out>/runs/…/task_NNNN.json``; a chain resumes from its last kept task (weights reloaded), so a rerun
    of the same command computes only what is missing."""

    def __init__(self, p: PaperPreset, root: Path, seed: int = 0):
        self.p, self.root, self.seed = p, root, seed
        self.cache: dict[str, Any] = {}
        self.envs: dict[tuple[str, str], Any] = {}
        self.scorers: dict[str, Any] = {}
        self.agents: dict[Chain, tuple[int, Any]] = {}   # chain -> (tasks done, agent object)
        self.computed = 0

    #: envs kept at once (least recently used closed first): stage 4 visits every topic's learner env in turn
    MAX_ENVS = 8

    def _env(self, c: Chain) -> Any:
        from gym_crawl.features.han_index import HanIndexFeatures

        key = (c.topic, c.features if c.learner else c.agent)
        env = self.envs.pop(key, None)
        if env is None:
            while len(self.envs) >= self.MAX_ENVS:
                self.envs.pop(next(iter(self.envs))).close()
            corpus = load_corpus_cached(self.p.corpus, self.cache)
            C = chain_config(self.p, c, self.seed)["n_categories"]
            over: dict[str, Any] = {"n_categories": C}
            if c.learner:
                over["features"] = HanIndexFeatures(C) if c.features == "han-index" else c.features
            env = make_env(corpus, c.topic, self.p.reward, c.agent, self.p.steps, **over)
            # score the topic's pages and links once (the tables are shared by every env of this topic and
            # equal the on-demand scores bit for bit) instead of again in each of the ~1,000 tasks
            env.reset(seed=0)
            env.unwrapped.view.precompute_scores()
        self.envs[key] = env   # most recently used last
        return env

    def _agent(self, c: Chain, done: list[dict[str, Any]], cfg: dict[str, Any]) -> Any:
        held = self.agents.get(c)
        if held is not None and held[0] == len(done):
            return held[1]
        kw = {k: cfg[k] for k in ("alpha", "epsilon", "gamma")} if c.learner else {}
        agent = make_agent_any(c.agent, **kw)
        if c.learner and done and not done[-1].get("state"):
            raise ValueError(f"{chain_dir(self.root, cfg)}: task {len(done) - 1} kept no weights, so task "
                             f"{len(done)} cannot continue the chain; remove that folder's task files from "
                             f"{len(done) - 1} on (they are recomputed)")
        if done and done[-1].get("state"):
            st = done[-1]["state"]
            agent.load_state_dict({"w": np.array(st["w"], np.float64),
                                   "feature_names": np.array(st["feature_names"], dtype=str),
                                   "updates": np.array(st["updates"], np.int64)})
        return agent

    def run(self, c: Chain, i: int) -> dict[str, Any] | None:
        """Run task ``i`` of chain ``c`` unless kept; returns the new record (``None`` if it was kept)."""
        from gym_crawl._io import atomic_write_json
        from gym_crawl.agents.runner import run_episode

        cfg = chain_config(self.p, c, self.seed)
        d = chain_dir(self.root, cfg)
        done = load_kept(d, cfg)
        if len(done) > i:
            return None
        if len(done) < i:
            raise RuntimeError(f"{d}: task {i} before task {len(done)} (work order broken)")
        env = self._env(c)
        agent = self._agent(c, done, cfg)
        s = task_seed(self.seed, c.trial, i)
        c0 = time.process_time()
        res = run_episode(env, agent, seed=s)
        cpu = time.process_time() - c0
        if c.topic not in self.scorers:
            self.scorers = {c.topic: post_hoc_scorer(load_corpus_cached(self.p.corpus, self.cache), env)}
        han_curve, h_label, h_han, _ = _post_hoc(self.scorers[c.topic], res, self.p.steps)
        label_curve = _pad(res.relevant_curve, self.p.steps)
        st = agent.state_dict()
        rec = {"config": cfg, "task": i, "seed": s, "steps": int(res.steps),
               "label": int(label_curve[-1]), "han": int(han_curve[-1]),
               "label_curve": _curve_points(label_curve, self.p.steps, self.p.curve_points),
               "han_curve": _curve_points(han_curve, self.p.steps, self.p.curve_points),
               "hist_label": h_label.tolist(), "hist_han": h_han.tolist(), "reward_sum": float(res.reward_sum),
               "seconds": float(res.seconds), "cpu_seconds": float(cpu),
               "state": ({"w": st["w"].tolist(), "feature_names": st["feature_names"].tolist(),
                          "updates": int(st["updates"])} if st else None)}
        d.mkdir(parents=True, exist_ok=True)
        atomic_write_json(_task_path(d, i), rec)
        self.agents[c] = (i + 1, agent)
        self.computed += 1
        return rec

    def close(self) -> None:
        for e in self.envs.values():
            e.close()
        self.envs.clear()


def _ms(x: Any) -> tuple[float, float]:
    a = np.asarray(x, np.float64)
    return (float(a.mean()), float(a.std(ddof=1)) if len(a) > 1 else 0.0) if len(a) else (float("nan"), float("nan"))


def paper_summary(p: PaperPreset, root: Path, seed: int) -> dict[str, Any]:
    """Fig. 1 (trial 0: mean ± sd over its tasks), Fig. 3 (per trial: mean per task over the same window of tasks
    in every trial — the second half of the tasks all its trials have — ÷ the baseline's mean; mean ± sd over
    trials; the window is reported), Fig. 2 histograms, costs, and what is missing.
    Every number comes from kept task records, one per real run (n = records; sd with ddof = 1)."""
    chains = paper_chains(p)
    kept = {c: load_kept(chain_dir(root, chain_config(p, c, seed)), chain_config(p, c, seed)) for c in chains}
    base = {t: kept[c] for c in chains for t in [c.topic] if not c.learner}
    fig1, fig3, fig2 = [], [], []
    for t in p.topics:
        b = base.get(t, [])
        b_han = _ms([r["han"] for r in b])
        b_lab = _ms([r["label"] for r in b])
        fig1.append({"topic": t, "agent": p.baseline, "features": "-", "tasks": len(b),
                     "distinct_seeds": len({r["seed"] for r in b}), "han_mean": b_han[0], "han_sd": b_han[1],
                     "label_mean": b_lab[0], "label_sd": b_lab[1]})
        if b:
            fig2.append({"topic": t, "agent": p.baseline, "features": "-",
                         "hist_han": np.mean([r["hist_han"] for r in b], 0).tolist()})
        for f in p.features:
            for a in p.agents:
                trials = [kept[c] for c in chains if c.topic == t and c.agent == a and c.features == f]
                t0 = trials[0] if trials else []
                h, lab = _ms([r["han"] for r in t0]), _ms([r["label"] for r in t0])
                fig1.append({"topic": t, "agent": a, "features": f, "alpha": p.alpha_of(t), "tasks": len(t0),
                             "distinct_seeds": len({r["seed"] for r in t0}), "han_mean": h[0], "han_sd": h[1],
                             "label_mean": lab[0], "label_sd": lab[1]})
                if t0:
                    fig2.append({"topic": t, "agent": a, "features": f,
                                 "hist_han": np.mean([r["hist_han"] for r in t0], 0).tolist()})
                per_trial = {"han": [], "label": []}
                # the same task window in every trial: the second half of the tasks all its trials have
                n_common = min((len(r) for r in trials if r), default=0)
                lo = n_common - max(1, n_common // 2)
                for recs in trials:
                    if not recs:
                        continue
                    for m, vals in per_trial.items():
                        vals.append(float(np.mean([r[m] for r in recs[lo:n_common]])))
                row: dict[str, Any] = {"topic": t, "agent": a, "features": f, "alpha": p.alpha_of(t),
                                       "trials": len(per_trial["han"]),
                                       "tasks_per_trial": sorted({len(r) for r in trials if r}),
                                       "window": [lo, n_common]}
                for m, bm in (("han", b_han[0]), ("label", b_lab[0])):
                    mm = _ms(per_trial[m])
                    rat = _ms([v / bm for v in per_trial[m]]) if b and bm > 0 else (float("nan"), float("nan"))
                    row.update({f"{m}_mean": mm[0], f"{m}_sd": mm[1], f"ratio_{m}_mean": rat[0],
                                f"ratio_{m}_sd": rat[1], f"{m}_per_trial": per_trial[m]})
                row["baseline_han"], row["baseline_label"], row["baseline_tasks"] = b_han[0], b_lab[0], len(b)
                fig3.append(row)
    recs = [r for v in kept.values() for r in v]
    by_agent: dict[str, list[float]] = {}
    for c, v in kept.items():
        by_agent.setdefault(c.agent, []).extend(r["cpu_seconds"] for r in v)
    order = work_order(p, chains)
    done = {(c, i) for c in chains for i in range(len(kept[c]))}
    stages: dict[int, list[int]] = {}
    for c, i in order:
        stage = work_stage(p, c, i)
        stages.setdefault(stage, [0, 0])
        stages[stage][0] += (c, i) in done
        stages[stage][1] += 1
    cpu_task = {a: float(np.mean(v)) for a, v in by_agent.items() if v}
    timing = []  # Han's timing is per 10,000-page Olympics task: sync 654 s, async 55 s, no learning 28 s
    for t in p.topics:
        for a in [p.baseline, *p.agents]:
            for f in (["-"] if a == p.baseline else list(p.features)):
                rs = [r for c, v in kept.items() if c.topic == t and c.agent == a and c.features == f for r in v]
                if rs:
                    cpu, wall = _ms([r["cpu_seconds"] for r in rs]), _ms([r["seconds"] for r in rs])
                    timing.append({"topic": t, "agent": a, "features": f, "tasks": len(rs), "cpu_mean": cpu[0],
                                   "cpu_sd": cpu[1], "wall_mean": wall[0]})
    mean_task = float(np.mean([r["cpu_seconds"] for r in recs])) if recs else float("nan")
    planned = len(order)
    return {"fig1": fig1, "fig3": fig3, "fig2": fig2, "tasks_kept": len(recs), "tasks_planned": planned,
            "stages": {str(k): {"kept": v[0], "planned": v[1]} for k, v in sorted(stages.items())},
            "cpu_seconds_per_task": cpu_task, "timing": timing,
            "estimate": {"cpu_seconds_per_task": mean_task, "tasks": planned,
                         "cpu_hours_total": mean_task * planned / 3600 if recs else float("nan"),
                         "cpu_hours_left": mean_task * (planned - len(recs)) / 3600 if recs else float("nan")},
            "_kept": kept}


def paper_figures(p: PaperPreset, summ: dict[str, Any], out: Path) -> list[str]:
    from gym_crawl.benchmarks.plotting import bars_figure, curves_figure

    kept = summ["_kept"]
    paths = []
    for f in p.features:
        for m in ("han", "label"):
            panels: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
            lc: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
            for t in p.topics:
                pan, lpan = {}, {}
                for c, recs in kept.items():
                    if c.topic != t or not recs or c.trial != 0 or c.features not in ("-", f):
                        continue
                    A = np.array([r[f"{m}_curve"] for r in recs], np.float64)
                    pan[c.agent] = (A.mean(0), A.std(0))
                for a in [p.baseline, *p.agents]:
                    rows = [recs for c, recs in kept.items() if c.topic == t and c.agent == a
                            and c.features in ("-", f) and recs]
                    if not rows:
                        continue
                    if a == p.baseline:
                        v = np.mean([r[m] for r in rows[0]])
                        n = max((len(r) for c, r in kept.items() if c.topic == t and c.learner), default=0) or 1
                        lpan[a] = (np.full(n, v), np.zeros(n))
                        continue
                    n = max(len(r) for r in rows)
                    M = [[r[k][m] for r in rows if len(r) > k] for k in range(n)]
                    lpan[a] = (np.array([np.mean(v) for v in M]),
                                                         np.array([np.std(v) for v in M]))
                if pan:
                    panels[t] = pan
                if lpan:
                    lc[t] = lpan
            if panels:
                path = out / f"fig1_{f}_{m}.png"
                curves_figure(panels, path, xlabel=f"step (× {p.steps // p.curve_points})",
                              ylabel=f"{m}-relevant pages (accumulated)",
                              title=f"Han Fig. 1 at paper scale — {p.corpus}, features {f}: mean ± sd over the "
                                    f"tasks of trial 0")
                paths.append(path.name)
            if lc:
                path = out / f"fig3_{f}_{m}.png"
                curves_figure(lc, path, xlabel="task (weights kept)", ylabel=f"{m}-relevant pages per task",
                              title=f"Han Fig. 3 at paper scale — {p.corpus}, features {f}: mean ± sd over trials")
                paths.append(path.name)
        hist = {t: {r["agent"]: np.array(r["hist_han"]) for r in summ["fig2"] if r["topic"] == t
                    and r["features"] in ("-", f)} for t in p.topics}
        hist = {t: v for t, v in hist.items() if v}
        if hist:
            path = out / f"fig2_{f}_han.png"
            bars_figure(hist, path, title=f"Han Fig. 2 at paper scale — features {f}: han-relevant pages per "
                                          f"w2v-relevance interval (trial 0 mean)", labels=HIST_LABELS,
                        xlabel="page relevance (cosine, hidden, post hoc)", ylabel="pages")
            paths.append(path.name)
    return paths


def paper_markdown(res: dict[str, Any]) -> str:
    p = res["preset"]
    est = res["estimate"]
    out = ["# Han et al. 2018 at the paper's scale", "",
           (f"Command: `{res['command']}`. Machine: {res['machine']}. Code: {res['code']}. "
            f"Wall time of this invocation {res['wall_seconds']:.0f} s ({res['computed']} tasks computed, "
            f"the rest reused from `runs/`)."), "",
           (f"Protocol (Han §4): corpus `{p['corpus']}` (stand-in for Simple English Wikipedia), topics "
           f"{', '.join(p['topics'])}; {p['steps']:,}-page tasks; {p['tasks']} tasks per trial with the weights "
           f"kept (Fig. 1 = trial 0), {p['trials']} trials (Fig. 3); ε = {p['epsilon']}, γ = {p['gamma']}, "
           f"α = {p['alpha']} (0.0005 for {', '.join(t for t, _ in p['alpha_by_topic'])}); reward {p['reward']}; "
           f"agents {', '.join(p['agents'])} on features {', '.join(p['features'])}; no-learning crawler "
           f"`{p['baseline']}` ({p['baseline_tasks']} real tasks, distinct seeds)."), "",
           ("Relevant pages: **han** = contains a topic word (Han's §3.1 definition, what his figures count); "
           "**label** = ground-truth topic label. sd uses ddof = 1 over real runs (n given); a row with n < 2 "
           "has no sd."), "",
           f"## Progress: {res['tasks_kept']} of {res['tasks_planned']} tasks kept", "",
           "| stage | what | kept / planned |", "|---|---|---|"]
    what = {"0": f"trials < {p['first_trials']}, tasks < {p['first_tasks']}: {p['features'][0]} × "
                 f"{', '.join(p['primary_agents'])}; the baseline's first {p['first_trials'] * p['first_tasks']} "
                 f"tasks",
            "1": f"trials < {p['first_trials']}, tasks < {p['first_tasks']}: the other agents / features",
            "2": f"trial 0 up to {p['tasks']} tasks (Fig. 1): {p['features'][0]} × "
                 f"{', '.join(p['primary_agents'])} and the baseline",
            "3": f"trial 0 up to {p['tasks']} tasks (Fig. 1): the other agents / features",
            "4": "the remaining trials (Fig. 3)"}
    for k, v in res["stages"].items():
        out.append(f"| {k} | {what[k]} | {v['kept']} / {v['planned']} |")
    out += ["", f"Compute: {est['cpu_seconds_per_task']:.1f} CPU s per {p['steps']:,}-step task (mean of kept "
                f"tasks; per agent: " + ", ".join(f"{a} {s:.1f}" for a, s in res["cpu_seconds_per_task"].items())
            + f") × {est['tasks']:,} tasks = {est['cpu_hours_total']:.1f} CPU h in all, "
              f"{est['cpu_hours_left']:.1f} CPU h left.", ""]
    if res.get("topic_sizes"):
        out += ["## Relevant pages in the corpus (hidden; post hoc) — the ceiling of a task", "",
                "| topic | pages | label pages | han-relevant pages (tf-idf > 0) |", "|---|---|---|---|"]
        out += [f"| {r['topic']} | {r['pages']:,} | {r['label_pages']:,} | {r['han_pages']:,} |"
                for r in res["topic_sizes"]] + [""]
    out += [f"## Fig. 1 — relevant pages at {p['steps']:,} steps, trial 0 (mean ± sd over its tasks)", "",
            "| topic | agent | features | α | tasks | han mean ± sd | label mean ± sd |",
            "|---|---|---|---|---|---|---|"]
    for r in (r for r in res["fig1"] if r["tasks"]):
        out.append(f"| {r['topic']} | {r['agent']} | {r['features']} | {r.get('alpha', '-')} | {r['tasks']} | "
                   f"{r['han_mean']:.0f} ± {r['han_sd']:.0f} | {r['label_mean']:.0f} ± {r['label_sd']:.0f} |")
    out += ["", ("## Fig. 3 — RL / no-learning (per trial: mean per task over the same tasks in every trial — the "
                 "second half of those all its trials have — ÷ the baseline's mean; mean ± sd over trials). "
                 "Han: 1.2–1.6×, Cancer 2.5×"), "",
            ("| topic | agent | features | trials | tasks per trial | tasks averaged | han per task | ratio han | "
             "label per task | ratio label | baseline han (n) |"), "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in (r for r in res["fig3"] if r["trials"]):
        w = r.get("window", [0, 0])
        out.append(f"| {r['topic']} | {r['agent']} | {r['features']} | {r['trials']} | "
                   f"{','.join(map(str, r['tasks_per_trial'])) or '-'} | {w[0]}–{w[1] - 1} | "
                   f"{r['han_mean']:.0f} ± {r['han_sd']:.0f} | "
                   f"{r['ratio_han_mean']:.2f} ± {r['ratio_han_sd']:.2f} | {r['label_mean']:.0f} ± "
                   f"{r['label_sd']:.0f} | {r['ratio_label_mean']:.2f} ± {r['ratio_label_sd']:.2f} | "
                   f"{r['baseline_han']:.0f} ({r['baseline_tasks']}) |")
    if res.get("timing"):
        out += ["", f"## Time per {p['steps']:,}-page task (Han, Olympics: sync 654 s, async 55 s, no learning 28 s)",
                "", ("CPU seconds of the crawl loop (agent + env, one core's cost) and wall seconds on the shared "
                     "machine; the first task of each env includes first-touch page faults."), "",
                "| topic | agent | features | tasks | CPU s mean ± sd | wall s mean |", "|---|---|---|---|---|---|"]
        for r in res["timing"]:
            out.append(f"| {r['topic']} | {r['agent']} | {r['features']} | {r['tasks']} | {r['cpu_mean']:.2f} ± "
                       f"{r['cpu_sd']:.2f} | {r['wall_mean']:.1f} |")
    if res.get("missing"):
        left = res["tasks_planned"] - res["tasks_kept"]
        head = (f"## Not run yet: {left:,} tasks of {len(res['missing'])} chains "
                "(the same command continues from `runs/`)")
        out += ["", head, ""]
        out += [f"- {m}" for m in res["missing"][:20]] + (["- …"] if len(res["missing"]) > 20 else [])
    out += ["", "Figures: " + ", ".join(f"`{x}`" for x in res["figures"]), ""]
    return "\n".join(out)


def topic_sizes(p: PaperPreset, cache: dict[str, Any]) -> list[dict[str, Any]]:
    """Per topic, the corpus' relevant pages (hidden, post hoc, never shown to an agent): label pages and pages
    that are relevant by Han's definition (tf-idf relevance > 0) — the ceiling a 10,000-page task can reach."""
    from gym_crawl.relevance.scorer import TopicScorer
    from gym_crawl.relevance.topic import resolve_topic
    from gym_crawl.text.model import get_text_model

    corpus = load_corpus_cached(p.corpus, cache)
    tm = get_text_model(corpus)
    out = []
    for t in p.topics:
        sc = TopicScorer(tm, resolve_topic(t, corpus), 4)
        han = sum(int((sc.score_pages(np.arange(i, min(i + 50_000, corpus.n_pages))).tfidf > 0).sum())
                  for i in range(0, corpus.n_pages, 50_000))
        out.append({"topic": t, "label_pages": int(sc.label_mask.sum()), "han_pages": han,
                    "pages": int(corpus.n_pages)})
    return out


def paper_preset_from_args(args: argparse.Namespace) -> PaperPreset:
    """``--paper-scale`` picks :data:`PAPER` (with ``--quick`` :data:`PAPER_QUICK`); given flags override fields."""
    p = PAPER_QUICK if args.quick else PAPER
    if args.corpus and len(args.corpus) > 1:
        raise SystemExit("--paper-scale takes one --corpus")
    given = {"corpus": args.corpus[0] if args.corpus else None, "steps": args.steps, "tasks": args.tasks,
             "trials": args.trials, "topics": _csv(args.topics), "baseline_tasks": args.baseline_tasks,
             "features": _csv(args.features),
             "agents": _csv(args.agents) if args.agents != ",".join(ALL_AGENTS) else None}
    p = dataclasses.replace(p, **{k: v for k, v in given.items() if v is not None})
    bad = sorted(set(p.topics) - set(HAN_TOPICS) - {"sports"})
    if bad:
        raise SystemExit(f"--topics: {bad} have no Han 2018 categories; valid: {', '.join(HAN_TOPICS)}")
    bad = sorted(set(p.agents) - set(LFA_AGENTS))
    if bad:
        raise SystemExit(f"--agents: {bad} are not Han's LFA crawlers; valid: {', '.join(LFA_AGENTS)}")
    bad = sorted(set(p.features) - set(HAN_FEATURES))
    if bad:
        raise SystemExit(f"--features: {bad} unknown; valid: {', '.join(HAN_FEATURES)}")
    for k in ("steps", "tasks", "trials", "baseline_tasks"):
        if getattr(p, k) < 1:
            raise SystemExit(f"--{k.replace('_', '-')} must be >= 1, got {getattr(p, k)}")
    return p


def paper_main(args: argparse.Namespace, argv: list[str] | None) -> int:
    """``--paper-scale``: run the missing (chain, task) items in :func:`work_order` (until ``--max-minutes``),
    then report everything kept."""
    import os
    import subprocess

    from tqdm.auto import tqdm

    from gym_crawl._io import atomic_write_bytes

    if args.jobs != 1:
        raise SystemExit(f"--jobs: the paper-scale run is sequential (tasks of a chain depend on each other); "
                         f"got {args.jobs}")
    p = paper_preset_from_args(args)
    t0 = time.perf_counter()
    out = Path(args.out if args.out != "benchmarks/results/han2018" else
               ("benchmarks/results/han2018_paper_quick" if args.quick else "benchmarks/results/han2018_paper"))
    root = out / "runs"
    root.mkdir(parents=True, exist_ok=True)
    chains = paper_chains(p)
    order = work_order(p, chains)
    runner = PaperRunner(p, root, args.seed)
    if args.records:
        n = import_records(root, Path(args.records), p.topics)
        print(f"han2018 paper-scale: {n} task records imported from {args.records}", flush=True)
    todo = [(c, i) for c, i in order
            if not _task_path(chain_dir(root, chain_config(p, c, args.seed)), i).exists()]
    print(f"han2018 paper-scale: {len(order)} tasks planned, {len(order) - len(todo)} kept in {root}", flush=True)
    deadline = None if args.max_minutes is None else t0 + 60 * args.max_minutes
    if not args.cached_only:
        with tqdm(total=len(todo), desc="han2018 paper tasks", unit="task", mininterval=2.0) as bar:
            for c, i in todo:
                if deadline is not None and time.perf_counter() > deadline:
                    print(f"--max-minutes {args.max_minutes} reached: stopping before {c.topic}/{c.agent}/"
                          f"{c.features}/trial {c.trial}/task {i}", flush=True)
                    break
                bar.set_postfix_str(f"{c.topic}/{c.agent}/{c.features}/t{c.trial}/#{i}")
                runner.run(c, i)
                bar.update(1)
    runner.close()
    if args.records:
        counts = export_records(p, root, Path(args.records), args.seed)
        print(f"han2018 paper-scale: records written to {args.records}: {counts}", flush=True)
    summ = paper_summary(p, root, args.seed)
    kept = summ.pop("_kept")
    missing = [f"{c.topic}/{c.agent}/{c.features}/trial {c.trial}: tasks {len(kept[c])}–{c.n_tasks - 1}"
               for c in chains if len(kept[c]) < c.n_tasks]
    try:
        code = subprocess.run(["git", "rev-parse", "--short", "HEAD"], check=False, capture_output=True, text=True,
                              cwd=Path(__file__).parent).stdout.strip() or "unknown"
    except OSError:
        code = "unknown"
    res: dict[str, Any] = {
        "benchmark": "han2018-paper", "command": "gym-crawl bench han2018 " + " ".join(argv or []),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
                   f"python {platform.python_version()}", "code": f"git {code}",
        "preset": dataclasses.asdict(p), "computed": runner.computed, **summ, "missing": missing,
        "topic_sizes": topic_sizes(p, runner.cache)}
    res["figures"] = [] if args.no_figures else paper_figures(p, dict(summ, _kept=kept), out)
    res["wall_seconds"] = time.perf_counter() - t0
    write_json_report(out / "han2018_paper.json", res, "han2018-paper", args)
    atomic_write_bytes(out / "han2018_paper.md", (markdown_banner(args.quick) + paper_markdown(res)).encode())
    print(f"wrote {out / 'han2018_paper.json'}, {out / 'han2018_paper.md'} and {len(res['figures'])} figures; "
          f"{res['tasks_kept']}/{res['tasks_planned']} tasks kept, {runner.computed} computed now")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
