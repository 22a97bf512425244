"""Stock SB3 agents vs the no-learning crawler on held-out topics, and vectorized-env throughput.

``gym-crawl bench sb3 [--quick] [--out DIR] [--corpus C] [--from-runs DIR ...]``

1. **Agents.** Trains each SB3 configuration of ``--agents`` (default: MaskablePPO, PPO, A2C
   and DQN with the candidate-scoring policy, PPO with the stock ``MultiInputPolicy``, on the
   discrete wrapper; PPO, SAC and TD3 with ``MlpPolicy`` on the continuous wrapper) with
   :func:`agents.sb3.train.train` on ``--train-topics``, or loads finished ``gym-crawl train``
   runs given with ``--from-runs``. Reports training steps and wall time.
2. **Evaluation.** Every agent — SB3 agents through :class:`agents.sb3.agent.SB3Agent`, the
   papers' no-learning best-first crawler, random, and Han's LFA (``lfa-async``, learning online
   within each crawl as in the paper; skipped with a note when ``agents.linear.lfa`` is absent) — crawls
   each held-out topic (``--eval-topics``) and each training topic once for ``--episode-steps``
   steps through :func:`agents.runner.run_episode` (plus the greedy oracle, which reads hidden
   relevance: an upper bound, not a competitor), on the same env (``reducer="topk"``, K as
   trained; best-first over the top-K by link text *is* the global best-first order). Metrics:
   relevant pages (ground-truth labels) found per episode, the mean of the relevant-pages curve
   (area: rewards finding them early), relevant pages after 25 % of the budget. Candidate-scoring
   agents are also run with ``--transfer-k`` candidates (default 256) on the held-out topics: the
   same weights, another K.
3. **Throughput.** Env steps/s of the discrete wrapper with random valid actions in a
   ``DummyVecEnv`` and in ``SubprocVecEnv`` with 1 and 2 workers, and each worker's memory
   (RSS, PSS, private; ``/proc/<pid>/smaps_rollup``) next to a worker holding a trivial env
   (``CartPole-v1``): the difference is what the crawl env costs per extra worker, the
   memory-mapped corpus being shared page cache.

Writes ``sb3_<corpus>.json``, ``sb3_<corpus>.md``, ``sb3_<corpus>.png`` and
``sb3_<corpus>_throughput.png`` into ``--out`` (default ``benchmarks/results/sb3``).
``--quick`` (CI-sized, < 60 s): one MaskablePPO agent trained 1,500 steps, 200-step episodes,
one topic per split, 300-step throughput runs.
"""
from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._console import ArgumentParser
from gym_crawl.benchmarks.report import markdown_banner, write_json_report

DEFAULT_OUT = Path("benchmarks") / "results" / "sb3"  # under the current folder
TRAIN_TOPICS = ["geology", "cancer", "poetry", "astronomy", "jazz"]
EVAL_TOPICS = ["sports", "fiction", "cameras"]

# name -> (algo, wrapper, policy, timesteps in the full run)
FULL_AGENTS: dict[str, tuple[str, str, str, int]] = {
    "maskable-ppo-scoring": ("maskable-ppo", "discrete", "scoring", 100_000),
    "ppo-scoring": ("ppo", "discrete", "scoring", 30_000),
    "a2c-scoring": ("a2c", "discrete", "scoring", 30_000),
    "dqn-scoring": ("dqn", "discrete", "scoring", 30_000),
    "ppo-multiinput": ("ppo", "discrete", "mlp", 30_000),
    "ppo-continuous": ("ppo", "continuous", "mlp", 20_000),
    "sac-continuous": ("sac", "continuous", "mlp", 20_000),
    "td3-continuous": ("td3", "continuous", "mlp", 20_000),
}
QUICK_AGENTS = {"maskable-ppo-scoring": ("maskable-ppo", "discrete", "scoring", 1_500)}


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", Path(s).name if "/" in s else s).strip("-").lower() or "corpus"


# --------------------------------------------------------------------------------- agents
def _train_agents(args: argparse.Namespace, specs: dict[str, tuple[str, str, str, int]]) -> list[dict[str, Any]]:
    from gym_crawl.agents.sb3.train import TrainConfig, train

    rows = []
    for name, (algo, wrapper, policy, steps) in specs.items():
        hyper: dict[str, Any] = {}
        if args.quick and algo in ("ppo", "maskable-ppo"):
            hyper = {"n_steps": 128}
        if args.quick and algo in ("dqn", "sac", "td3"):
            hyper = {"learning_starts": 200}
        cfg = TrainConfig(algo=algo, wrapper=wrapper, policy=policy, corpus=args.corpus,
                          train_topics=args.train_topics, eval_topics=[], timesteps=steps, n_envs=args.n_envs,
                          seed=args.seed, out=str(Path(args.out) / "runs" / f"{_slug(args.corpus)}-{name}"),
                          max_candidates=args.max_candidates, hidden=[16] if args.quick else [64, 64],
                          hyper=hyper, max_episode_steps=args.episode_steps, checkpoint_freq=0,
                          progress_bar=not args.quick, tensorboard=not args.quick, vec=args.vec)
        print(f"[sb3] training {name}: {algo} / {wrapper} / {policy}, {steps} steps", flush=True)
        res = train(cfg)
        rows.append({"name": name, "agent": res.agent, "timesteps": res.timesteps,
                     "train_seconds": round(res.train_seconds, 1), "algo": algo, "wrapper": wrapper,
                     "policy": policy, "max_candidates": cfg.max_candidates, "reducer": cfg.reducer})
    return rows


def _load_runs(dirs: list[str]) -> list[dict[str, Any]]:
    from gym_crawl.agents.sb3.agent import load_sb3_agent

    rows = []
    for d in dirs:
        p = Path(d)
        cfg = json.loads((p / "config.json").read_text())
        res = json.loads((p / "results.json").read_text()) if (p / "results.json").exists() else {}
        rows.append({"name": p.name or f"{cfg['algo']}-{cfg['wrapper']}-{cfg['policy']}",
                     "agent": load_sb3_agent(p), "timesteps": res.get("timesteps", cfg["timesteps"]),
                     "train_seconds": res.get("train_seconds"), "algo": cfg["algo"], "wrapper": cfg["wrapper"],
                     "policy": cfg["policy"], "max_candidates": cfg["max_candidates"], "reducer": cfg["reducer"]})
    return rows


def _episode(env: Any, agent: Any, topic: str, seed: int) -> dict[str, Any]:
    from gym_crawl.agents.runner import run_episode

    r = run_episode(env, agent, seed=seed, options={"topic": topic})
    c = r.relevant_curve
    return {"topic": topic, "relevant_found": int(r.relevant_found), "relevant_auc": round(float(c.mean()), 1),
            "relevant_at_quarter": int(c[max(0, len(c) // 4 - 1)]) if len(c) else 0, "steps": r.steps,
            "invalid_actions": r.invalid_actions, "seconds": round(r.seconds, 2)}


def evaluate_all(args: argparse.Namespace, sb3_rows: list[dict[str, Any]], corpus: Any) -> tuple[list, list[str]]:
    """Per agent: per topic episode metrics on both splits. Returns ``(rows, notes)``."""
    from gym_crawl.agents import make_agent, make_env_for

    envs: dict[tuple[str, int, str, str], Any] = {}

    def env_for(agent: Any, K: int, reducer: str) -> Any:
        key = (agent.action_kind, K, reducer, str(agent.env_defaults.get("features", "combined")))
        if key not in envs:
            envs[key] = make_env_for(agent, corpus=corpus, max_candidates=K, reducer=reducer,
                                     max_episode_steps=args.episode_steps)
        return envs[key]

    def row_of(a: dict[str, Any], eps: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
        row = dict(a)
        for split, e in eps.items():
            row[split] = e
            row[f"{split}_mean_relevant"] = round(float(np.mean([x["relevant_found"] for x in e])), 2) if e else None
        print(f"[sb3] {a['name']:24s} held-out {row['held_out_mean_relevant']}  train {row['train_mean_relevant']}",
              flush=True)
        return row

    notes: list[str] = []
    out = []
    K = args.max_candidates
    for name in ("best-first", "random", "oracle"):
        env = env_for(make_agent(name), K, "topk")
        extra = {"note": "upper bound: reads hidden relevance, not a crawler"} if name == "oracle" else {}
        out.append(row_of({"name": name, "K": K, "reducer": "topk", "timesteps": 0, "train_seconds": 0.0, **extra},
                          {split: [_episode(env, make_agent(name), t, args.seed) for t in topics]
                           for split, topics in (("held_out", args.eval_topics), ("train", args.train_topics))}))
    try:
        lfa = make_agent("lfa-async")
    except Exception as e:  # noqa: BLE001 - the optional agent's absence is reported, not fatal
        notes.append(f"LFA skipped: {e}")
        lfa = None
    if lfa is not None:
        # Han's protocol: weights kept across crawls. Pre-train on the training topics (those crawls are the
        # "train" rows), then crawl every held-out topic from the pre-trained weights, learning online.
        env = env_for(lfa, K, "topk")
        t0 = time.perf_counter()
        train_eps = [_episode(env, lfa, t, args.seed) for t in args.train_topics]
        secs = round(time.perf_counter() - t0, 1)
        w = lfa.state_dict()
        held = []
        for t in args.eval_topics:
            lfa.load_state_dict({k: v.copy() for k, v in w.items()})
            held.append(_episode(env, lfa, t, args.seed))
        out.append(row_of({"name": "lfa-async", "K": K, "reducer": "topk",
                           "timesteps": len(args.train_topics) * args.episode_steps, "train_seconds": secs,
                           "note": "pre-trained on the train topics (weights kept), learns online on held-out"},
                          {"held_out": held, "train": train_eps}))
    for r in sb3_rows:
        env = env_for(r["agent"], r["max_candidates"], r["reducer"])
        a = {k: r[k] for k in ("name", "timesteps", "train_seconds", "algo", "wrapper", "policy")}
        a.update(K=r["max_candidates"], reducer=r["reducer"])
        out.append(row_of(a, {split: [_episode(env, r["agent"], t, args.seed) for t in topics]
                              for split, topics in (("held_out", args.eval_topics), ("train", args.train_topics))}))
        if args.transfer_k and r["policy"] == "scoring" and args.transfer_k != r["max_candidates"]:
            # the same weights on an env with another K (candidate-scoring policies only)
            env = env_for(r["agent"], args.transfer_k, r["reducer"])
            b = dict(a, name=f"{r['name']} @K={args.transfer_k}", K=args.transfer_k,
                     note=f"trained with K={r['max_candidates']}, run with K={args.transfer_k}")
            out.append(row_of(b, {"held_out": [_episode(env, r["agent"], t, args.seed) for t in args.eval_topics],
                                  "train": []}))
    return out, notes


# ------------------------------------------------------------------------------ throughput
def _cartpole() -> Any:
    import gymnasium as gym

    return gym.make("CartPole-v1")


def measure_throughput(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Steps/s of random valid actions through DummyVecEnv(1) and SubprocVecEnv(1, 2), with worker memory."""
    from stable_baselines3.common.vec_env import SubprocVecEnv

    from gym_crawl.agents.sb3.train import TrainConfig, make_vec_env, worker_memory

    cfg = TrainConfig(corpus=args.corpus, train_topics=args.train_topics, max_candidates=args.max_candidates,
                      max_episode_steps=args.episode_steps)
    rows = []
    for vec, n in (("dummy", 1), ("subproc", 1), ("subproc", 2)):
        env = make_vec_env(cfg, args.train_topics, n, args.seed, vec=vec)
        rng = np.random.default_rng(args.seed)
        env.reset()
        env.step(_random_valid(env, rng))  # warm-up (first step's lazy set-up)
        t0 = time.perf_counter()
        for _ in range(max(1, args.throughput_steps // n)):
            env.step(_random_valid(env, rng))
        dt = time.perf_counter() - t0
        mem = worker_memory(env)
        env.close()
        total = max(1, args.throughput_steps // n) * n
        rows.append({"vec_env": vec, "workers": n, "steps": total, "seconds": round(dt, 2),
                     "steps_per_second": round(total / dt, 1), "worker_memory_mb": mem})
        print(f"[sb3] throughput {vec}({n}): {total / dt:.0f} steps/s", flush=True)
    base = SubprocVecEnv([_cartpole])  # a worker that holds SB3 + torch but no crawl env
    rows.append({"vec_env": "subproc", "workers": 1, "env": "CartPole-v1 (baseline worker)",
                 "worker_memory_mb": worker_memory(base)})
    base.close()
    return rows


def _random_valid(env: Any, rng: np.random.Generator) -> np.ndarray:
    masks = np.stack(env.env_method("action_masks"))
    return np.array([int(rng.choice(np.flatnonzero(m))) for m in masks])


# --------------------------------------------------------------------------------- output
def _markdown(res: dict[str, Any]) -> str:
    lines = [f"# SB3 agents on {res['corpus']} — relevant pages per {res['episode_steps']}-step episode", "",
             f"Train topics: {', '.join(res['train_topics'])}; held-out topics: {', '.join(res['eval_topics'])}. "
             f"K = {res['max_candidates']}, reducer topk, reward han2018, relevance = ground-truth labels.", ""]
    topics = res["eval_topics"]
    lines.append("| agent | train steps | train s | " + " | ".join(f"{t} (held out)" for t in topics)
                 + " | held-out mean | held-out area | train-topic mean |")
    lines.append("|---" * (len(topics) + 6) + "|")
    for a in res["agents"]:
        by = {e["topic"]: e["relevant_found"] for e in a["held_out"]}
        auc = np.mean([e["relevant_auc"] for e in a["held_out"]]) if a["held_out"] else float("nan")
        lines.append(f"| {a['name']} | {a['timesteps']} | {a['train_seconds']} | "
                     + " | ".join(str(by.get(t, "")) for t in topics)
                     + f" | {a['held_out_mean_relevant']} | {auc:.1f} | {a['train_mean_relevant']} |")
    lines += ["", "## Env throughput (discrete wrapper, random valid actions)", "",
              "| vec env | workers | steps/s | worker RSS MB | worker PSS MB | worker private MB |",
              "|---|---|---|---|---|---|"]
    for t in res["throughput"]:
        mem = t.get("worker_memory_mb") or [{}]
        sps = t.get("steps_per_second", "")
        name = t["vec_env"] + (f", {t['env']}" if "env" in t else "")
        lines.append(f"| {name} | {t['workers']} | {sps} | " + ", ".join(str(m.get("rss", "")) for m in mem)
                     + " | " + ", ".join(str(m.get("pss", "")) for m in mem) + " | "
                     + ", ".join(str(m.get("uss", "")) for m in mem) + " |")
    if res["notes"]:
        lines += ["", "Notes:", *[f"- {n}" for n in res["notes"]]]
    return "\n".join(lines) + "\n"


def _figures(res: dict[str, Any], out: Path, slug: str) -> None:
    from gym_crawl.benchmarks.plotting import pyplot, save_png

    plt = pyplot()
    agents = [a for a in res["agents"] if a["held_out"]]
    topics = res["eval_topics"]
    bf = next(a for a in agents if a["name"] == "best-first")
    bf_by = {e["topic"]: e["relevant_found"] for e in bf["held_out"]}
    cmap = plt.get_cmap("tab20")
    fig, ax = plt.subplots(1, 2, figsize=(13, 0.35 * len(agents) + 2.2))
    names = [a["name"] for a in agents]
    means = [a["held_out_mean_relevant"] for a in agents]
    ax[0].barh(range(len(agents)), means, color=[cmap(i % 20) for i in range(len(agents))])
    ax[0].axvline(bf["held_out_mean_relevant"], color="k", ls="--", lw=1, label="best-first")
    ax[0].set_yticks(range(len(agents)))
    ax[0].set_yticklabels(names, fontsize=7)
    ax[0].invert_yaxis()
    ax[0].set_xlabel(f"relevant pages per {res['episode_steps']}-step crawl (mean over held-out topics)")
    ax[0].legend(fontsize=7)
    diff = [a for a in agents if a["name"] not in ("best-first", "random")]
    width = 0.8 / max(1, len(diff))
    x = np.arange(len(topics))
    for i, a in enumerate(diff):
        by = {e["topic"]: e["relevant_found"] for e in a["held_out"]}
        ax[1].bar(x + (i - (len(diff) - 1) / 2) * width, [by.get(t, 0) - bf_by.get(t, 0) for t in topics], width,
                  color=cmap(names.index(a["name"]) % 20), label=a["name"])
    ax[1].axhline(0, color="k", lw=0.8)
    ax[1].set_xticks(x)
    ax[1].set_xticklabels(topics)
    ax[1].set_ylabel("relevant pages − best-first's")
    ax[1].set_title("held-out topics: difference to the no-learning crawler")
    ax[1].legend(fontsize=6, ncol=2)
    fig.suptitle(f"SB3 agents vs best-first — {res['corpus']} ({res['n_pages']} pages)")
    save_png(fig, out / f"sb3_{slug}.png")
    plt = pyplot()
    tp = [t for t in res["throughput"] if "steps_per_second" in t]
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.2))
    ax[0].bar([f"{t['vec_env']}({t['workers']})" for t in tp], [t["steps_per_second"] for t in tp], color="#1f77b4")
    ax[0].set_ylabel("env steps / s")
    ax[0].set_title("throughput")
    mem = [(f"{t['vec_env']}({t['workers']})" + (" cartpole" if "env" in t else ""), m)
           for t in res["throughput"] for m in (t.get("worker_memory_mb") or [])]
    ax[1].bar(range(len(mem)), [m.get("uss", 0) for _, m in mem], label="private", color="#ff7f0e")
    ax[1].bar(range(len(mem)), [m.get("shared", 0) for _, m in mem], bottom=[m.get("uss", 0) for _, m in mem],
              label="shared", color="#2ca02c")
    ax[1].set_xticks(range(len(mem)))
    ax[1].set_xticklabels([n for n, _ in mem], rotation=30, fontsize=7)
    ax[1].set_ylabel("MB per worker")
    ax[1].legend(fontsize=7)
    ax[1].set_title("worker memory")
    save_png(fig, out / f"sb3_{slug}_throughput.png")


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="gym-crawl bench sb3", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="CI-sized run (< 60 s)")
    p.add_argument("--out", default=str(DEFAULT_OUT))
    p.add_argument("--corpus", default="synthetic")
    p.add_argument("--train-topics", type=lambda s: s.split(","), default=None)
    p.add_argument("--eval-topics", type=lambda s: s.split(","), default=None)
    p.add_argument("--agents", type=lambda s: [] if s == "none" else s.split(","), default=None,
                   help=f"subset of {sorted(FULL_AGENTS)}, or 'none' (default: all; with --from-runs: none)")
    p.add_argument("--transfer-k", type=int, default=None,
                   help="also run candidate-scoring agents with this K on held-out topics (default 256; quick: off)")
    p.add_argument("--timesteps-scale", type=float, default=1.0, help="multiply every agent's training steps")
    p.add_argument("--from-runs", nargs="*", default=[], help="finished `gym-crawl train` output folders")
    p.add_argument("--episode-steps", type=int, default=None)
    p.add_argument("--max-candidates", type=int, default=32)
    p.add_argument("--n-envs", type=int, default=2)
    p.add_argument("--vec", default="auto", choices=["auto", "subproc", "dummy"])
    p.add_argument("--throughput-steps", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark (see module docstring); returns 0."""
    from gym_crawl._io import atomic_write_bytes
    from gym_crawl.agents.sb3.agent import SB3Agent  # noqa: F401 - registers "sb3"
    from gym_crawl.corpus import load_corpus

    args = build_parser().parse_args(argv)
    q = args.quick
    args.train_topics = args.train_topics or (TRAIN_TOPICS[:1] if q else TRAIN_TOPICS)
    args.eval_topics = args.eval_topics or (EVAL_TOPICS[:1] if q else EVAL_TOPICS)
    args.episode_steps = args.episode_steps or (200 if q else 1000)
    args.throughput_steps = args.throughput_steps or (300 if q else 3000)
    if args.transfer_k is None:
        args.transfer_k = 0 if q else 256
    if q:
        args.n_envs, args.vec = 1, "dummy"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    corpus = load_corpus(args.corpus)
    known = set((corpus.meta.get("topics") or {}).keys())
    if known:  # keep only topics the corpus defines (Wikispeedia has four)
        miss = [t for t in args.train_topics + args.eval_topics if t not in known]
        if miss:
            print(f"[sb3] topics not in {args.corpus}: {miss} (known: {sorted(known)}) — dropped")
        args.train_topics = [t for t in args.train_topics if t in known]
        args.eval_topics = [t for t in args.eval_topics if t in known]
    if args.agents is not None:
        unknown = sorted(set(args.agents) - set(FULL_AGENTS))
        if unknown:
            print(f"unknown agents {unknown}; choose from {sorted(FULL_AGENTS)}")
            return 2
        specs = {k: FULL_AGENTS[k] for k in args.agents}
    else:
        specs = QUICK_AGENTS if q else ({} if args.from_runs else dict(FULL_AGENTS))
    specs = {k: (a, w, p, max(1, int(n * args.timesteps_scale))) for k, (a, w, p, n) in specs.items()}
    sb3_rows = _load_runs(args.from_runs) + _train_agents(args, specs)
    agents, notes = evaluate_all(args, sb3_rows, corpus)
    throughput = measure_throughput(args)
    bf = next(a for a in agents if a["name"] == "best-first")
    beats = [a["name"] for a in agents
             if a.get("algo") and a["held_out_mean_relevant"] > bf["held_out_mean_relevant"]]
    res = {"corpus": args.corpus, "n_pages": corpus.n_pages, "episode_steps": args.episode_steps,
           "train_topics": args.train_topics, "eval_topics": args.eval_topics, "max_candidates": args.max_candidates,
           "quick": q, "seed": args.seed, "agents": agents, "throughput": throughput, "notes": notes,
           "sb3_agents_beating_best_first_on_held_out": beats, "seconds": round(time.perf_counter() - t0, 1)}
    slug = _slug(args.corpus)
    write_json_report(out / f"sb3_{slug}.json", res, "sb3", args)
    atomic_write_bytes(out / f"sb3_{slug}.md", (markdown_banner(args.quick) + _markdown(res)).encode())
    _figures(res, out, slug)
    print(_markdown(res))
    print(f"[sb3] wrote {out}/sb3_{slug}.{{json,md,png}} in {res['seconds']} s")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
