"""Reproduce the thesis' DQN crawler result (Pertejo 2021, §4.4, Fig. 4.4) on WikiCrawl-v0.

``gym-crawl bench thesis_dqn [--quick] [--out DIR] [--corpus NAME] [--seeds N] [--train-steps N]
[--test-steps N] [--variants frontier,urpq,masked,unmasked] [--jobs J] [--cached-only] ...``

Fig. 4.4 of the thesis: the DQN crawler (Keras-RL, one Q output per page of the corpus, the last
page's features as the only input) trained for 5,000 steps and tested for 5,000 more, against the
basic crawler (best-first by the cosine of the topic with the link's URL + anchor + surrounding
text), topic "geology", on the thesis' reduced dump (32,325 pages, ≈ 4 links per page). The basic
crawler "casi cuadriplica" (almost quadruples) the DQN crawler's relevant pages.

Here, per seed (>= 5): a fresh ``thesis-dqn`` agent (weights initialized from the seed) crawls one
training episode (ε = 0.3, learning) and then one test episode with the weights frozen (ε = 0.1),
on the same topic and seed pages — the thesis' ``fit`` then ``test``; ``best-first`` and ``random``
crawl one episode of the test length. Four action selections of the DQN (``select=``):
``frontier`` (what the thesis did: ε-greedy over the frontier with stale asynchronous priorities
Q(s_parent)[link], deduplicated by URL), ``urpq`` (the thesis' code to the letter: one queue entry per
(parent, link), so stale duplicates of fetched pages waste steps), ``masked`` (fresh argmax of Q(s_t)
over frontier pages) and ``unmasked`` (Keras-RL's stock argmax over all n_pages outputs: non-frontier
pages are wasted steps).

Relevant pages are counted as the thesis counts them — the fetched page contains the topic word
(``thesis`` relevance, post hoc from the fetched text) — and by the topic's ground-truth label
(``label``). Corpora: the synthetic web at ``--corpus`` (default ``synthetic-20000``: a per-page
head costs one 257-wide row per page, see the head-cost table the benchmark measures for
4,604 … 323,198 outputs) and Wikispeedia (4,604 pages). Writes ``thesis_dqn.json``,
``thesis_dqn.md`` and PNGs to ``--out`` (default ``benchmarks/results/thesis_dqn``).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._console import ArgumentParser
from gym_crawl.agents import AGENTS, register_agent
from gym_crawl.benchmarks.report import markdown_banner, write_json_report

if "thesis-dqn" not in AGENTS.names():  # until agents/base.py lists it (the lead's registry)
    register_agent("thesis-dqn", "gym_crawl.agents.dqn.thesis:ThesisDQNAgent",
                   "Pertejo 2021 DQN: one Q output per corpus page over the last page's features")

DEFAULT_WIKISPEEDIA = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikispeedia"
VARIANTS = ("frontier", "urpq", "masked", "unmasked")
#: the thesis: "el crawler básico … casi cuadriplica los resultados del crawler DQN" (§4.4)
THESIS_RATIO = 4.0
THESIS_CORPUS = "norm-seng-dump(0.1): 32,325 pages, ≈ 63,000 links (4 per page)"
HEAD_SIZES = (4604, 20000, 32325, 100000, 323198)


def build_parser() -> argparse.ArgumentParser:
    ap = ArgumentParser(prog="gym-crawl bench thesis_dqn", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI-sized run (synthetic-1000, 5 seeds, 100+100 steps)")
    ap.add_argument("--out", default="benchmarks/results/thesis_dqn")
    ap.add_argument("--corpus", default="synthetic-20000",
                    help="synthetic corpus (default synthetic-20000; 'none' to skip)")
    ap.add_argument("--wikispeedia", default=None,
                    help="Wikispeedia folder (default ../shared/data/wikispeedia if present; 'none' to skip)")
    ap.add_argument("--topic", default="geology", help="topic (Fig. 4.4: geology)")
    ap.add_argument("--seeds", type=int, default=5, help="seeds (>= 5 for mean ± sd)")
    ap.add_argument("--train-steps", type=int, default=None, help="training steps (thesis 5000; quick 100)")
    ap.add_argument("--test-steps", type=int, default=None, help="test steps (thesis 5000; quick 100)")
    ap.add_argument("--wiki-steps", type=int, default=None,
                    help="Wikispeedia training = test steps (default 1000: 22 %% of its 4,604 pages)")
    ap.add_argument("--variants", default="frontier,masked,unmasked",
                    help=f"DQN action selections to run, some of {','.join(VARIANTS)}")
    ap.add_argument("--head-sizes", default=",".join(str(n) for n in HEAD_SIZES),
                    help="n_pages of the per-page heads whose memory/time is measured ('' to skip)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (each uses one torch thread)")
    ap.add_argument("--cached-only", action="store_true",
                    help="run nothing: report the runs already kept in <out>/runs/ and list the missing ones")
    return ap


# ------------------------------------------------------------------------------ one run
def _thesis_flags(env: Any, fetched: list[int]) -> np.ndarray:
    """Per step: did it fetch a page containing a topic word (the thesis' relevance)? Post hoc,
    from the fetched pages' text (``fetched_text``), after the episode."""
    ids = [env.word_id(w) for w in env.current_topic.words]
    ids = np.asarray([i for i in ids if i >= 0], np.int64)
    out = np.zeros(len(fetched), bool)
    for t, p in enumerate(fetched):
        if p >= 0 and len(ids):
            out[t] = bool(np.isin(env.fetched_text(p)[0], ids).any())
    return out


def _episode(env: Any, agent: Any, seed: int, steps: int) -> dict[str, Any]:
    from gym_crawl.agents import run_episode

    fetched: list[int] = []
    label: list[bool] = []

    def on_step(t: int, info: dict) -> None:
        fetched.append(int(info["fetched_page"]))
        label.append(bool(info["relevant"]))  # the topic's label (else the reward's flag), this step's page

    res = run_episode(env, agent, seed=seed, on_step=on_step)

    def pad(c: np.ndarray) -> np.ndarray:
        out = np.empty(steps, np.int64)
        k = min(len(c), steps)
        out[:k] = c[:k]
        out[k:] = c[k - 1] if k else 0
        return out

    return {"thesis": pad(np.cumsum(_thesis_flags(env.unwrapped.view, fetched))),
            "label": pad(np.cumsum(np.asarray(label, np.int64))), "steps": res.steps,
            "invalid": res.invalid_actions, "seconds": res.seconds}


def _make_env(agent: Any, corpus: Any, topic: str, steps: int) -> Any:
    from gym_crawl.agents import make_env_for

    return make_env_for(agent, corpus=corpus, topic=topic, max_episode_steps=steps, features="thesis",
                        reward="thesis")


def run_task(task: dict[str, Any]) -> dict[str, Any]:
    """One (corpus, agent, seed) run; DQN runs are a training episode then a frozen test episode."""
    import torch

    from gym_crawl.agents import make_agent
    from gym_crawl.corpus import load_corpus

    torch.set_num_threads(1)
    corpus = load_corpus(task["corpus"])
    seed, topic = int(task["seed"]), task["topic"]
    out: dict[str, Any] = {k: task[k] for k in ("corpus_name", "agent", "variant", "seed")}
    t0 = time.perf_counter()
    if task["agent"] == "thesis-dqn":
        agent = make_agent("thesis-dqn", select=task["variant"], seed=seed)
        env = _make_env(agent, corpus, topic, task["train_steps"])
        out["train"] = _episode(env, agent, seed, task["train_steps"])
        out["train"]["approx_states"], out["train"]["exact_states"] = agent.approx_states, agent.exact_states
        out["updates"] = agent.updates
        out["final_loss"] = float(np.mean(agent.losses[-200:])) if agent.losses else None
        agent.set_training(False)
        env = _make_env(agent, corpus, topic, task["test_steps"])
        out["test"] = _episode(env, agent, seed, task["test_steps"])
        out["parameters"] = agent.n_parameters()
    else:
        agent = make_agent(task["agent"])
        env = _make_env(agent, corpus, topic, task["test_steps"])
        out["test"] = _episode(env, agent, seed, task["test_steps"])
    out["n_pages"] = int(corpus.n_pages)
    out["wall_seconds"] = time.perf_counter() - t0
    return out


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    return x


# ------------------------------------------------------------------------------ head cost
def head_cost(sizes: list[int], in_dim: int = 9, reps: int = 5) -> list[dict[str, Any]]:
    """Parameters, memory and time of one Keras-RL update / one forward pass for a per-page head of
    ``n`` outputs (random states; no corpus needed). Memory: online + target + gradient + Adam's two
    moments = 5 float32 copies of the parameters."""
    import torch

    from gym_crawl.agents.dqn.thesis import ReplayMemory, ThesisDQNAgent

    torch.set_num_threads(1)
    rows = []
    for n in sizes:
        agent = ThesisDQNAgent(seed=0)
        agent.rng = np.random.default_rng(0)
        agent.build_networks(in_dim, n)
        agent.memory = ReplayMemory(in_dim, 1000)
        rng = np.random.default_rng(0)
        for _ in range(200):
            agent.memory.add(rng.integers(0, 10, in_dim), int(rng.integers(n)), 1.0, rng.integers(0, 10, in_dim), False)
        agent.train_step()
        t0 = time.perf_counter()
        for _ in range(reps):
            agent.train_step()
        t1 = time.perf_counter()
        for _ in range(reps):
            agent.q_values(np.ones(in_dim, np.float32))
        t2 = time.perf_counter()
        p = agent.n_parameters()
        upd = (t1 - t0) / reps
        rows.append({"n_pages": n, "parameters": p, "model_mb": 5 * 4 * p / 2**20, "update_ms": 1000 * upd,
                     "forward_ms": 1000 * (t2 - t1) / reps, "train_5000_steps_min": 5000 * upd / 60,
                     "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})
        del agent
    return rows


# ------------------------------------------------------------------------------ report
def _stats(x: np.ndarray) -> tuple[float, float]:
    return float(np.mean(x)), float(np.std(x, ddof=1)) if len(x) > 1 else 0.0


def _label_of(r: dict[str, Any], phase: str) -> str:
    if r["agent"] != "thesis-dqn":
        return r["agent"]
    v = "" if r["variant"] == "frontier" else f"[{r['variant']}]"
    return f"thesis-dqn{v} ({phase})"


def summarize(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in results:
        phases = ("train", "test") if r["agent"] == "thesis-dqn" else ("test",)
        for ph in phases:
            e = dict(r[ph])
            e["seed"] = r["seed"]
            groups.setdefault((r["corpus_name"], _label_of(r, ph)), []).append(e)
    rows = []
    for (c, name), es in sorted(groups.items()):
        th = np.stack([e["thesis"] for e in es])
        lab = np.stack([e["label"] for e in es])
        m, s = _stats(th[:, -1])
        lm, ls = _stats(lab[:, -1])
        row = {"corpus": c, "agent": name, "seeds": [e["seed"] for e in es], "steps": int(th.shape[1]),
               "final_relevant": th[:, -1].tolist(), "thesis_mean": m, "thesis_sd": s,
               "final_label": lab[:, -1].tolist(), "label_mean": lm, "label_sd": ls,
               "invalid_actions_mean": float(np.mean([e["invalid"] for e in es])),
               "seconds_mean": float(np.mean([e["seconds"] for e in es])),
               "curve_thesis_mean": th.mean(0).tolist(), "curve_thesis_sd": th.std(0, ddof=1).tolist()
               if len(es) > 1 else [0.0] * th.shape[1],
               "curve_label_mean": lab.mean(0).tolist(), "curve_label_sd": lab.std(0, ddof=1).tolist()
               if len(es) > 1 else [0.0] * lab.shape[1]}
        if "approx_states" in es[0]:
            row["approx_state_fraction"] = float(np.mean([e["approx_states"] / max(1, e["approx_states"]
                                                                                   + e["exact_states"]) for e in es]))
        rows.append(row)
    return rows


def ratios(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """basic / DQN (test) final relevant pages, per corpus and variant (the thesis: ≈ 4)."""
    out = []
    for c in sorted({r["corpus"] for r in rows}):
        by = {r["agent"]: r for r in rows if r["corpus"] == c}
        basic = by.get("best-first")
        if basic is None:
            continue
        for name, r in by.items():
            if not name.startswith("thesis-dqn") or not name.endswith("(test)"):
                continue
            b = np.asarray(basic["final_relevant"], float)
            d = np.asarray(r["final_relevant"], float)
            bl, dl = np.asarray(basic["final_label"], float), np.asarray(r["final_label"], float)
            out.append({"corpus": c, "agent": name, "dqn_seeds": len(r["seeds"]),
                        "basic_over_dqn": float(b.mean() / d.mean()) if d.mean() > 0 else float("inf"),
                        "basic_over_dqn_label": float(bl.mean() / dl.mean()) if dl.mean() > 0 else float("inf"),
                        "random_thesis_mean": by["random"]["thesis_mean"] if "random" in by else None,
                        "dqn_over_random": float(d.mean() / by["random"]["thesis_mean"])
                        if "random" in by and by["random"]["thesis_mean"] > 0 else None})
    return out


def _md(res: dict[str, Any]) -> str:
    o = ["# Thesis DQN crawler (Pertejo 2021, §4.4, Fig. 4.4) on WikiCrawl-v0", "",
         f"Machine: {res['machine']}. Command: `{res['command']}`. Wall time {res['wall_seconds']:.0f} s.", "",
         f"Thesis: {THESIS_CORPUS}; DQN trained 5,000 steps then tested 5,000; topic geology; the basic crawler "
         f"finds ≈ {THESIS_RATIO:.0f}× the DQN's relevant pages. Here: topic `{res['topic']}`, "
         f"{res['n_seeds']} seeds (mean ± sd), train {res['train_steps']} + test {res['test_steps']} steps on the "
         "synthetic corpus"
         + (f", {res['wiki_steps']} + {res['wiki_steps']} on Wikispeedia" if res["wiki_steps"] else "")
         + ". **thesis** relevance = the page "
         "contains the topic word (the thesis' definition); **label** = the topic's ground-truth label.", "",
         "## Relevant pages at the end of the episode", "",
         ("| corpus | crawler | seeds | steps | thesis relevance | label relevance | invalid steps | approx. states | "
          "s/episode |"), "|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        ap = f"{100 * r['approx_state_fraction']:.0f} %" if "approx_state_fraction" in r else "-"
        o.append(f"| {r['corpus']} | {r['agent']} | {len(r['seeds'])} | {r['steps']} | "
                 f"{r['thesis_mean']:.1f} ± {r['thesis_sd']:.1f} | "
                 f"{r['label_mean']:.1f} ± {r['label_sd']:.1f} | {r['invalid_actions_mean']:.0f} | {ap} | "
                 f"{r['seconds_mean']:.0f} |")
    o += ["", "## Basic / DQN (test) — the thesis: ≈ 4×", "",
          "| corpus | DQN variant | DQN seeds | basic / DQN (thesis rel.) | basic / DQN (label) | DQN / random |",
          "|---|---|---|---|---|---|"]
    for q in res["ratios"]:
        dr = f"{q['dqn_over_random']:.2f}" if q["dqn_over_random"] is not None else "-"
        o.append(f"| {q['corpus']} | {q['agent']} | {q['dqn_seeds']} | {q['basic_over_dqn']:.2f}× | "
                 f"{q['basic_over_dqn_label']:.2f}× | "
                 f"{dr} |")
    if res["head_cost"]:
        o += ["", "## Cost of a per-page head (one Keras-RL update: batch 32, double + dueling, Adam, soft target)", "",
              "| output pages | parameters | online+target+grad+Adam | ms / update | ms / forward | 5,000 updates |",
              "|---|---|---|---|---|---|"]
        for h in res["head_cost"]:
            o.append(f"| {h['n_pages']:,} | {h['parameters']:,} | {h['model_mb']:.0f} MB | {h['update_ms']:.1f} | "
                     f"{h['forward_ms']:.2f} | {h['train_5000_steps_min']:.1f} min |")
        o.append("\nOne torch thread, on a shared machine: read the ratios, not the absolute figures.")
    if res.get("missing_runs"):
        o += ["",
              f"Not run (time): {len(res['missing_runs'])} runs — " + ", ".join(f"`{m}`" for m in res["missing_runs"])]
    o += ["", "Figures: " + ", ".join(f"`{p}`" for p in res["figures"]), ""]
    return "\n".join(o)


_STYLE = {"best-first": ("#d62728", "-"), "random": ("#bcbd22", "-"),
          "thesis-dqn (test)": ("#1f77b4", "-"), "thesis-dqn (train)": ("#1f77b4", "--"),
          "thesis-dqn[urpq] (test)": ("#9467bd", "-"), "thesis-dqn[urpq] (train)": ("#9467bd", "--"),
          "thesis-dqn[masked] (test)": ("#2ca02c", "-"), "thesis-dqn[masked] (train)": ("#2ca02c", "--"),
          "thesis-dqn[unmasked] (test)": ("#7f7f7f", "-"), "thesis-dqn[unmasked] (train)": ("#7f7f7f", "--")}


def figures(rows: list[dict[str, Any]], out: Path) -> list[str]:
    """One PNG per relevance definition; one panel per corpus; mean ± sd band per crawler
    (training episodes dashed), fixed colours per crawler."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from gym_crawl.benchmarks.plotting import save_png

    paths = []
    corpora = sorted({r["corpus"] for r in rows})
    for metric in ("thesis", "label"):
        fig, axes = plt.subplots(1, len(corpora), figsize=(6.2 * len(corpora), 4.4), squeeze=False)
        for ax, c in zip(axes.flat, corpora):
            for r in (r for r in rows if r["corpus"] == c):
                mean, sd = np.asarray(r[f"curve_{metric}_mean"]), np.asarray(r[f"curve_{metric}_sd"])
                col, ls = _STYLE.get(r["agent"], ("#8c564b", "-"))
                x = np.arange(1, len(mean) + 1)
                ax.plot(x, mean, color=col, ls=ls, lw=1.6, label=f"{r['agent']} (n={len(r['seeds'])})")
                if np.any(sd > 0):
                    ax.fill_between(x, mean - sd, mean + sd, color=col, alpha=0.12, lw=0)
            ax.set_title(c)
            ax.set_xlabel("step")
            ax.set_ylabel(f"{metric}-relevant pages (accumulated)")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, loc="upper left")
        fig.suptitle(f"Thesis Fig. 4.4 — DQN (per-page head) vs basic vs random, {metric} relevance "
                     f"(mean ± sd over seeds; dashed: training episode)")
        p = out / f"fig44_{metric}.png"
        save_png(fig, p)
        paths.append(p.name)
    return paths


# ------------------------------------------------------------------------------ main
def main(argv: list[str] | None = None) -> int:  # noqa: C901  (known debt, docs/architecture.md)
    from gym_crawl._io import atomic_write_bytes, atomic_write_json

    args = build_parser().parse_args(argv)
    t0 = time.perf_counter()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    quick = args.quick
    if args.seeds < 1:
        raise SystemExit(f"--seeds must be >= 1, got {args.seeds}")
    variants = [v for v in args.variants.split(",") if v]
    bad = sorted(set(variants) - set(VARIANTS))
    if bad:
        raise SystemExit(f"--variants: unknown {bad}; expected some of {list(VARIANTS)}")
    corpus = "synthetic-1000" if quick else args.corpus
    train_steps = args.train_steps or (100 if quick else 5000)
    test_steps = args.test_steps or (100 if quick else 5000)
    wiki_steps = args.wiki_steps or 1000
    if args.wikispeedia is not None:
        wiki = None if args.wikispeedia.lower() == "none" else args.wikispeedia
    else:
        wiki = None if quick or not DEFAULT_WIKISPEEDIA.exists() else str(DEFAULT_WIKISPEEDIA)
    sizes = [] if quick and args.head_sizes == ",".join(str(n) for n in HEAD_SIZES) else \
        [int(s) for s in args.head_sizes.split(",") if s]
    if quick:
        sizes = sizes or [1000, 20000]
    corpora = ([(wiki, "wikispeedia", wiki_steps, wiki_steps)] if wiki else []) + \
        ([(corpus, corpus, train_steps, test_steps)] if corpus.lower() != "none" else [])
    tasks = []
    for spec, name, tr, te in corpora:
        for seed in range(args.seeds):
            for a in ("best-first", "random"):
                tasks.append({"corpus": spec, "corpus_name": name, "agent": a, "variant": None, "seed": seed,
                              "topic": args.topic, "train_steps": tr, "test_steps": te})
        for v in variants:  # the thesis' own selection first: its result arrives first
            for seed in range(args.seeds):
                tasks.append({"corpus": spec, "corpus_name": name, "agent": "thesis-dqn", "variant": v, "seed": seed,
                              "topic": args.topic, "train_steps": tr, "test_steps": te})
    # order: baselines and the thesis' own selection first, Wikispeedia (cheap) next, then the other variants
    def order(t: dict[str, Any]) -> int:
        if t["agent"] != "thesis-dqn" or t["variant"] == "frontier":
            return 0
        return 1 if t["corpus_name"] == "wikispeedia" else 2 + variants.index(t["variant"])

    tasks.sort(key=order)
    # each finished run is kept in <out>/runs/ and reused by a rerun with the same settings (resume)
    cache_dir = out / "runs"
    cache_dir.mkdir(exist_ok=True)

    def key(t: dict[str, Any]) -> Path:
        name = (f"{t['corpus_name']}_{t['topic']}_{t['agent']}_{t['variant'] or '-'}_s{t['seed']}_"
                f"{t['train_steps']}_{t['test_steps']}")
        return cache_dir / (name.replace("/", "_") + ".json")

    results: list[dict[str, Any]] = []
    todo = []
    for t in tasks:
        k = key(t)
        if k.exists():
            results.append(json.loads(k.read_text()))
        else:
            todo.append(t)
    print(f"{len(tasks)} runs, {len(tasks) - len(todo)} reused from {cache_dir}", flush=True)
    missing = [key(t).stem for t in todo] if args.cached_only else []
    if args.cached_only:
        todo = []

    def done(i: int, r: dict[str, Any], t: dict[str, Any]) -> None:
        atomic_write_json(key(t), _jsonable(r))
        results.append(_jsonable(r))
        print(f"[{i}/{len(todo)}] {r['corpus_name']} {r['agent']} {r['variant'] or ''} seed {r['seed']}: "
              f"{r['wall_seconds']:.0f} s", flush=True)

    if args.jobs > 1 and len(todo) > 1:
        with ProcessPoolExecutor(max_workers=args.jobs) as ex:
            futs = {ex.submit(run_task, t): t for t in todo}
            for i, f in enumerate(as_completed(futs), 1):
                done(i, f.result(), futs[f])
    else:
        for i, t in enumerate(todo, 1):
            done(i, run_task(t), t)
    rows = summarize(results)
    res: dict[str, Any] = {
        "benchmark": "thesis_dqn", "command": "gym-crawl bench thesis_dqn " + " ".join(argv or []),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
        "topic": args.topic, "n_seeds": args.seeds, "train_steps": train_steps, "test_steps": test_steps,
        "wiki_steps": wiki_steps if wiki else None, "corpus": corpus, "variants": variants,
        "thesis": {"ratio_basic_over_dqn": THESIS_RATIO, "corpus": THESIS_CORPUS, "train_steps": 5000,
                   "test_steps": 5000, "topic": "geology"},
        "rows": rows, "ratios": ratios(rows),
        "runs": [{"corpus": r["corpus"], "agent": r["agent"], "final_relevant": r["final_relevant"],
                  "final_label": r["final_label"]} for r in rows],
        "dqn_training": [{"corpus": r["corpus_name"], "variant": r["variant"], "seed": r["seed"],
                          "updates": r["updates"], "final_loss": r["final_loss"], "parameters": r["parameters"],
                          "n_pages": r["n_pages"], "wall_seconds": r["wall_seconds"]}
                         for r in results if r["agent"] == "thesis-dqn"],
    }
    res["missing_runs"] = missing
    hc = cache_dir / ("head_cost_" + "_".join(str(n) for n in sizes) + ".json")
    if sizes and hc.exists():
        res["head_cost"] = json.loads(hc.read_text())
    else:
        res["head_cost"] = head_cost(sizes) if sizes and not args.cached_only else []
        if res["head_cost"]:
            atomic_write_json(hc, res["head_cost"])
    res["figures"] = figures(rows, out) if rows else []
    res["wall_seconds"] = time.perf_counter() - t0
    write_json_report(out / "thesis_dqn.json", res, "thesis_dqn", args)
    atomic_write_bytes(out / "thesis_dqn.md", (markdown_banner(args.quick) + _md(res)).encode())
    print(f"wrote {out / 'thesis_dqn.json'}, {out / 'thesis_dqn.md'} and {len(res['figures'])} figures")
    for q in res["ratios"]:
        print(f" - {q['corpus']} {q['agent']}: basic / DQN = {q['basic_over_dqn']:.2f}× (thesis ≈ {THESIS_RATIO:.0f}×)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
