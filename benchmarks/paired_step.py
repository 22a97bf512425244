"""Env steps per CPU-second of this code against a git revision, paired run by run (a refactor's speed check).

``gym-crawl bench paired_step --baseline REV [--rounds 8] [--configs single:topk,vec:8,vec:64,task:1,task:64]
[--quick] [--out DIR]``

On a shared machine two timings taken minutes apart differ by more than a refactor changes, so the two codes
run in turns: each round times every configuration once with the baseline and once with the current code (in
alternating order, each in its own process, CPU time of the timed steps only), and the figure is the median
over the rounds of the current / baseline ratio, beside both medians. The baseline is revision ``REV`` of this
repository, extracted with ``git archive`` and put first on ``PYTHONPATH``, as ``gym-crawl bench bench_step
--baseline`` does.

Configurations (``WikiCrawl-v0`` on the default synthetic corpus, K = 64, ``combined`` features, 1000-step
episodes with resets counted):

* ``single:REDUCER`` — one env through ``gym.make``, a random valid slot each step;
* ``vec:N`` — the batched vector env of N crawls (``gym_crawl.envs.make_vector_env``), slot 0 every step;
* ``task:N`` — the default task as a user builds it (``gym_crawl.DEFAULT_ENV_ID``, its registered 100-step
  episodes): ``task:1`` one env through ``gym.make``, ``task:N`` (N > 1) ``gym.make_vec(..., num_envs=N,
  vectorization_mode="vector_entry_point")``, a random valid slot per crawl every step.

Writes ``paired_step.json``, ``paired_step.md`` and ``paired_step.png`` (the ratio of every round) to ``--out``
(default ``benchmarks/results/paired_step``).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from gym_crawl.benchmarks.bench_step import REDUCERS, baseline_tree
from gym_crawl.benchmarks.report import markdown_banner, write_json_report

__all__ = ["WORKER", "main", "parse_configs", "summarize"]

DEFAULT_OUT = Path("benchmarks") / "results" / "paired_step"

#: One timed configuration: ``python -c WORKER KIND ARG STEPS WARMUP`` (public API only, so it runs against any
#: revision of the package); prints the steps per CPU-second of the timed steps as JSON.
WORKER = r'''
import json, sys, time
import numpy as np
import gymnasium as gym
import gym_crawl  # noqa: F401
kind, arg, steps, warmup = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
if kind == "single" or (kind == "task" and int(arg) == 1):  # one env, random valid actions
    env = (gym.make("WikiCrawl-v0", reducer=arg, max_episode_steps=1000) if kind == "single"
           else gym.make(gym_crawl.DEFAULT_ENV_ID))
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=0)
    def run(n):
        global obs, info
        for _ in range(n):
            valid = np.flatnonzero(info["action_mask"])
            obs, r, term, trunc, info = env.step(int(valid[rng.integers(len(valid))]))
            if term or trunc:
                obs, info = env.reset()
    per_call = 1
elif kind == "task":
    n_envs = int(arg)
    env = gym.make_vec(gym_crawl.DEFAULT_ENV_ID, num_envs=n_envs, vectorization_mode="vector_entry_point")
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    def run(n):
        global obs
        for _ in range(n):
            obs, *_ = env.step((rng.random(n_envs) * obs["mask"].sum(1)).astype(np.int64))
    per_call = n_envs
else:
    from gym_crawl.envs import make_vector_env
    n_envs = int(arg)
    env = make_vector_env("WikiCrawl-v0", num_envs=n_envs, max_episode_steps=1000)
    env.reset(seed=0)
    slot0 = np.zeros(n_envs, np.int64)
    def run(n):
        for _ in range(n):
            env.step(slot0)
    per_call = n_envs
run(max(1, warmup // per_call))
calls = max(1, steps // per_call)
t0 = time.process_time()
run(calls)
print(json.dumps({"steps_per_cpu_s": calls * per_call / (time.process_time() - t0)}))
'''


def parse_configs(spec: str) -> list[tuple[str, str]]:
    """``"single:topk,vec:8"`` → ``[("single", "topk"), ("vec", "8")]``; a malformed entry is a ``ValueError``
    naming it and the two forms."""
    out = []
    for item in (s.strip() for s in spec.split(",") if s.strip()):
        kind, _, arg = item.partition(":")
        ok = (kind == "single" and arg in REDUCERS) or (kind in ("vec", "task") and arg.isdigit() and int(arg) >= 1)
        if not ok:
            raise ValueError(f"--configs entry {item!r}: expected single:REDUCER ({', '.join(REDUCERS)}), vec:N or "
                             f"task:N (N >= 1 crawls)")
        out.append((kind, arg))
    if not out:
        raise ValueError("--configs names no configuration")
    return out


def _run(code: str | None, kind: str, arg: str, steps: int, warmup: int) -> float:
    env = {**os.environ, **({"PYTHONPATH": code} if code else {})}
    p = subprocess.run([sys.executable, "-c", WORKER, kind, arg, str(steps), str(warmup)], capture_output=True,
                       text=True, env=env, cwd=tempfile.gettempdir(), timeout=3600)
    if p.returncode != 0:
        raise RuntimeError(f"worker {kind}:{arg} failed:\n{p.stderr[-2000:]}")
    return float(json.loads(p.stdout.strip().splitlines()[-1])["steps_per_cpu_s"])


def summarize(current: list[float], baseline: list[float]) -> dict[str, Any]:
    """Medians of the two codes' steps per CPU-second and the median, min and max of the per-round ratio
    current / baseline (rounds paired by index)."""
    if not current or len(current) != len(baseline):
        raise ValueError(f"need as many current as baseline rounds (> 0), got {len(current)} and {len(baseline)}")
    ratios = [c / b for c, b in zip(current, baseline)]
    return {"current_median": statistics.median(current), "baseline_median": statistics.median(baseline),
            "ratio_median": statistics.median(ratios), "ratio_min": min(ratios), "ratio_max": max(ratios),
            "ratios": ratios, "current": current, "baseline": baseline}


def _markdown(out: dict[str, Any]) -> str:
    lines = [f"# paired_step — this code against {out['baseline']}, {out['rounds']} paired rounds", "",
             f"Steps per CPU-second of the timed steps ({out['steps']} after {out['warmup']} warm-up), medians "
             f"over the rounds; the ratio is current / baseline per round. Load average at the start: "
             f"{out['load_average']}.", "",
             "| configuration | baseline | current | ratio (median) | ratio (min – max) |", "|---|---|---|---|---|"]
    for r in out["rows"]:
        lines.append(f"| {r['config']} | {r['baseline_median']:,.0f} | {r['current_median']:,.0f} | "
                     f"{r['ratio_median']:.3f} | {r['ratio_min']:.3f} – {r['ratio_max']:.3f} |")
    return "\n".join(lines) + "\n"


def _plot(out: dict[str, Any], path: Path) -> None:
    from gym_crawl.benchmarks.plotting import pyplot, save_png

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(4.0, 1.4 * len(out["rows"]) + 2), 3.5))
    for i, r in enumerate(out["rows"]):
        ax.scatter([i] * len(r["ratios"]), r["ratios"], s=14, alpha=0.6, color="#1f77b4")
        ax.hlines(r["ratio_median"], i - 0.3, i + 0.3, color="k")
    ax.axhline(1.0, color="grey", lw=0.8)
    for y in (0.97, 1.03):
        ax.axhline(y, color="grey", ls=":", lw=0.8)
    ax.set_xticks(range(len(out["rows"])))
    ax.set_xticklabels([r["config"] for r in out["rows"]])
    ax.set_ylabel("current / baseline (steps per CPU-s)")
    ax.set_title(f"paired rounds against {out['baseline']}")
    save_png(fig, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="gym-crawl bench paired_step", description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", required=True, help="git revision to compare with (e.g. main)")
    ap.add_argument("--rounds", type=int, default=8, help="paired rounds (default 8; --quick 1)")
    ap.add_argument("--configs", default="single:topk,vec:8,vec:64",
                    help="comma-separated single:REDUCER, vec:N, task:N (the default task: 1 env or N batched)")
    ap.add_argument("--steps", type=int, default=None, help="timed env steps per run (default 30000; --quick 2000)")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up steps per run (default 5000; --quick 500)")
    ap.add_argument("--quick", action="store_true", help="one short round (checks that it runs)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    try:
        configs = parse_configs(args.configs)
    except ValueError as e:
        ap.error(str(e))
    rounds = 1 if args.quick else args.rounds
    steps = args.steps if args.steps is not None else (2000 if args.quick else 30_000)
    warmup = args.warmup if args.warmup is not None else (500 if args.quick else 5000)
    if rounds < 1 or steps < 1 or warmup < 0:
        ap.error(f"--rounds and --steps must be >= 1 and --warmup >= 0, got {rounds}, {steps}, {warmup}")
    from gym_crawl._io import atomic_write_bytes

    args.out.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {"baseline": args.baseline, "rounds": rounds, "steps": steps, "warmup": warmup,
                           "load_average": " ".join(f"{x:.1f}" for x in os.getloadavg()), "rows": []}
    with tempfile.TemporaryDirectory(prefix="paired-step-base-") as tmp:
        base = str(baseline_tree(args.baseline, Path(tmp)))
        for kind, arg in configs:
            cur: list[float] = []
            old: list[float] = []
            for k in range(rounds):
                order = [(None, cur), (base, old)] if k % 2 else [(base, old), (None, cur)]
                for code, acc in order:
                    acc.append(_run(code, kind, arg, steps, warmup))
                print(f"  {kind}:{arg} round {k + 1}/{rounds}: ratio {cur[-1] / old[-1]:.3f}", flush=True)
            out["rows"].append({"config": f"{kind}:{arg}", **summarize(cur, old)})
    write_json_report(args.out / "paired_step.json", out, "paired_step", args)
    atomic_write_bytes(args.out / "paired_step.md", (markdown_banner(args.quick) + _markdown(out)).encode())
    _plot(out, args.out / "paired_step.png")
    print(_markdown(out))
    print(f"wrote {args.out / 'paired_step.json'}, .md, .png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
