"""Env steps per CPU-second through the public API: single envs (slot and page modes, registered agents) and
the batched vector env, with a CartPole-v1 ratio from the same process.

CPU-seconds (``time.process_time``) measure one core's cost, so the figures hold on a shared machine where
wall time does not. JSON + Markdown + PNG into ``benchmarks/results/throughput/``::

    gym-crawl bench throughput [--quick] [--corpus synthetic --corpus /path/to/wikispeedia]
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._console import ArgumentParser
from gym_crawl.benchmarks.report import markdown_banner, write_json_report

DEFAULT_OUT = Path("benchmarks") / "results" / "throughput"  # under the current folder
DEFAULT_WIKISPEEDIA = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikispeedia"


def _cartpole(steps: int) -> float:
    import gymnasium as gym

    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    env.action_space.seed(0)
    t = time.process_time()
    for _ in range(steps):
        *_, te, tr, _ = env.step(env.action_space.sample())
        if te or tr:
            env.reset()
    return steps / (time.process_time() - t)


def slot_random(corpus: Any, reducer: str, steps: int, k: int = 64) -> float:
    """A random valid slot each step, through ``gym.make``'s whole wrapper stack."""
    from gym_crawl.wrappers.factory import make_env

    env = make_env("WikiCrawl-v1", corpus=corpus, reducer=reducer, max_candidates=k, max_episode_steps=10**6)
    _, info = env.reset(seed=0)
    rng = np.random.default_rng(0)

    def run(n: int) -> None:
        nonlocal info
        for _ in range(n):
            v = np.flatnonzero(info["action_mask"])
            _, _, te, tr, info = env.step(int(v[rng.integers(len(v))]))
            if te or tr:
                _, info = env.reset()

    run(steps // 3)  # warm-up: compiled kernels, score tables
    t = time.process_time()
    run(steps)
    return steps / (time.process_time() - t)


def agent_run(corpus: Any, name: str, steps: int, env_kwargs: dict | None = None, **options: Any) -> float:
    """A registered agent (with ``options``) through ``make_env_for`` + ``run_episode`` (its own action mode);
    the second episode is timed (the first compiles kernels, fills score tables and, for learners, the replay)."""
    from gym_crawl.agents import make_agent, make_env_for, run_episode

    agent = make_agent(name, **options)
    env = make_env_for(agent, corpus=corpus, max_episode_steps=steps, **(env_kwargs or {}))
    run_episode(env, agent, seed=0)
    t = time.process_time()
    r = run_episode(env, agent, seed=1)
    return r.steps / (time.process_time() - t)


def vector(corpus: Any, n_envs: int, steps: int) -> float:
    """The batched vector env (``vectorization_mode="vector_entry_point"``), a random filled slot per sub-env."""
    from gym_crawl.wrappers.factory import make_vec_env

    v = make_vec_env("WikiCrawl-v1", num_envs=n_envs, vectorization_mode="vector_entry_point", corpus=corpus,
                     max_episode_steps=1000)
    obs, _ = v.reset(seed=0)
    rng = np.random.default_rng(0)

    def run(n: int) -> None:
        nonlocal obs
        for _ in range(n):
            obs, *_ = v.step((rng.random(n_envs) * obs["mask"].sum(1)).astype(np.int64))

    run(max(1, steps // 5))
    t = time.process_time()
    run(steps)
    return steps * n_envs / (time.process_time() - t)


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="gym-crawl bench throughput", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small corpus, few steps (the test suite runs it)")
    ap.add_argument("--corpus", action="append", default=None,
                    help="corpus spec (repeatable); default: synthetic and ../shared/data/wikispeedia if present")
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    a = ap.parse_args(argv)
    if a.corpus:
        corpora = a.corpus
    elif a.quick:
        corpora = ["synthetic-1000"]
    else:
        corpora = ["synthetic"] + ([str(DEFAULT_WIKISPEEDIA)] if DEFAULT_WIKISPEEDIA.exists() else [])
    steps = a.steps or (300 if a.quick else 3000)
    from gym_crawl.corpus import load_corpus

    rows: list[dict[str, Any]] = []
    cart = _cartpole(steps * 4)
    for spec in corpora:
        corpus = load_corpus(spec)
        name = Path(spec).name if "/" in spec else spec
        tres_env = {"max_candidates": min(4096, corpus.n_pages)}  # tres' K (one slot per tree leaf)
        cases = [("slot random, topk", lambda c=corpus: slot_random(c, "topk", steps)),
                 ("slot random, tree", lambda c=corpus: slot_random(c, "tree", steps)),
                 ("agent random (page)", lambda c=corpus: agent_run(c, "random", steps)),
                 ("agent best-first", lambda c=corpus: agent_run(c, "best-first", steps)),
                 ("agent lfa-async", lambda c=corpus: agent_run(c, "lfa-async", steps)),
                 ("agent tres (train_freq=1, paper)", lambda c=corpus, te=tres_env: agent_run(c, "tres", steps, te)),
                 ("agent tres train_freq=4",
                  lambda c=corpus, te=tres_env: agent_run(c, "tres", steps, te, train_freq=4)),
                 ("vector env N=8", lambda c=corpus: vector(c, 8, max(40, steps // 4))),
                 ("vector env N=64", lambda c=corpus: vector(c, 64, max(20, steps // 20)))]
        for label, fn in cases:
            sps = fn()
            # CartPole again right after the case: the ratio compares two figures taken under the same load
            cart_now = _cartpole(steps * 4)
            rows.append({"corpus": name, "case": label, "steps_per_cpu_second": round(sps, 1),
                         "cartpole_steps_per_cpu_second": round(cart_now, 1),
                         "cartpole_ratio": round(cart_now / sps, 2)})
            print(f"[throughput] {name:12s} {label:22s} {sps:10,.0f} steps per CPU-second", flush=True)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    from gym_crawl._io import atomic_write_bytes

    write_json_report(out / "throughput.json", {"cartpole_steps_per_cpu_second": round(cart, 1), "steps": steps,
                                                "rows": rows}, "throughput", a)
    lines = ["# Env steps per CPU-second", "", (f"CartPole-v1 in the same process at the start: {cart:,.0f} steps per "
                                                "CPU-second; the ratio column uses CartPole measured again right after "
                                                "each case (same load)."),
             "", "| corpus | case | steps / CPU-s | CartPole steps / CPU-s | CartPole ÷ this |",
             "|---|---|---|---|---|"]
    lines += [f"| {r['corpus']} | {r['case']} | {r['steps_per_cpu_second']:,.0f} | "
              f"{r['cartpole_steps_per_cpu_second']:,.0f} | {r['cartpole_ratio']} |" for r in rows]
    atomic_write_bytes(out / "throughput.md", (markdown_banner(a.quick) + "\n".join(lines) + "\n").encode())
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.5))
    labels = [f"{r['corpus']}: {r['case']}" for r in rows]
    ax.barh(labels, [r["steps_per_cpu_second"] for r in rows], color="tab:blue")
    ax.axvline(10_000, color="grey", ls="--", lw=1, label="10,000 (single-env target)")
    ax.axvline(2_000, color="tab:orange", ls=":", lw=1, label="2,000 (tres target)")
    ax.axvline(50_000, color="tab:green", ls="-.", lw=1, label="50,000 (vector N=64, default corpus)")
    ax.axvline(30_000, color="tab:olive", ls="-.", lw=1, label="30,000 (vector N=64, Wikispeedia)")
    ax.set_xscale("log")
    ax.set_xlabel("env steps per CPU-second")
    ax.invert_yaxis()
    ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "throughput.png", dpi=110)
    plt.close(fig)
    print(f"[throughput] wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
