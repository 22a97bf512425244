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
import functools
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

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

    cls = basic_crawler_class() if agent == "basic" else agent_class(agent)
    own = getattr(cls, "env_defaults", {}) or {}
    slot = getattr(cls, "action_kind", "slot") == "slot"
    kw: dict[str, Any] = {k: v for k, v in (("features", "han2018"), ("reducer", "random")) if k not in own}
    kw["max_candidates"] = 64 if slot else own.get("max_candidates", 1)
    kw.update(over)
    return make_env_for(cls, env_id="WikiCrawl-v0", corpus=corpus, topic=topic, reward=reward,
                        max_episode_steps=steps, **kw)


# ------------------------------------------------------------------ the no-learning page agent
@functools.lru_cache(maxsize=1)
def basic_crawler_class() -> type:
    """The thesis' basic crawler (Algorithm 2) as a ``page`` agent: a priority queue of frontier pages by
    the topic relevance of their link text — the same order as ``best-first`` — used for timings so
    that no-learning, sync and async run on identical env settings."""
    from gym_crawl.agents.base import Agent
    from gym_crawl.agents.priority_queue import UpdatablePQ

    class BasicCrawler(Agent):
        name = "basic"
        action_kind = "page"
        needs_observation = False

        def begin_episode(self, env: Any, rng: np.random.Generator) -> None:
            super().begin_episode(env, rng)
            self.pq = UpdatablePQ(env.n_pages)
            F = np.array(env.frontier_pages(), dtype=np.int64)
            self.pq.push_many(F, env.link_scores(F))

        def act(self, obs: Any, info: dict) -> int:
            while True:
                page = self.pq.pop_max()[0]
                if self.env.is_frontier(page):
                    return page

        def observe(self, tr: Any) -> None:
            upd = np.asarray(self.env.frontier_changes().updated, dtype=np.int64)
            if len(upd):
                self.pq.push_many(upd, self.env.link_scores(upd))

    return BasicCrawler


def make_agent_any(name: str, **kw: Any) -> Any:
    from gym_crawl.agents import make_agent

    if name == "basic":
        return basic_crawler_class()(**kw)
    return make_agent(name, **kw)


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

    topic = env.unwrapped.current_topic
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
        warmup.begin_episode(base, np.random.default_rng(seed))
        while info["frontier_size"] < warmup_until and w_steps < warmup_max:
            a = warmup.act(obs, info)
            obs2, r, term, trunc, info2 = env.step(a)
            warmup.observe(Transition(obs, a, r, obs2, term, trunc, info2))
            obs, info = obs2, info2
            w_steps += 1
    f0 = info["frontier_size"]
    t0 = time.perf_counter()
    agent.begin_episode(base, np.random.default_rng(seed))
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
        out.append(timed_episode(env, agent, steps, seed=seed))
        env.close()
    return out


def timing_frontier(corpus: Any, topic: str, steps: int, min_frontier: int, seed: int = 0) -> list[dict[str, Any]]:
    """Per-step cost once the frontier holds ≥ ``min_frontier`` pages: a BFS warm-up grows the frontier,
    then each agent takes over the same (deterministic) episode for ``steps`` steps."""
    out = []
    for name in ["basic", "lfa-async", "lfa-sync"]:
        env = make_env(corpus, topic, "han2018", name, 10 ** 7)
        out.append(timed_episode(env, make_agent_any(name), steps, seed=seed, warmup=make_agent_any("bfs"),
                                 warmup_until=min_frontier, warmup_max=200_000))
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
    from gym_crawl.benchmarks._plotting import bars_figure, curves_figure, learning_curves_figure

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
    ap = argparse.ArgumentParser(prog="gym-crawl bench han2018", description=__doc__.split("\n\n")[0])
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
    return ap


# --------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    from gym_crawl._io import atomic_write_bytes, atomic_write_json

    args = build_parser().parse_args(argv)
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
    atomic_write_json(out / "han2018.json", res)
    atomic_write_bytes(out / "han2018.md", markdown(res).encode())
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
            topics = p.topics or list((corpus.meta.get("topics") or {}))[:4]
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


if __name__ == "__main__":
    raise SystemExit(main())
