"""Ray RLlib backend: env steps/s with 1 and 2 env runners, and PPO's learning curve.

``gym-crawl bench rllib [--quick] [--out DIR] [--corpus C] [--seeds N] [--timesteps T]``

1. **Throughput.** For each ``--runners`` count (default 1 and 2) one PPO algorithm of
   :func:`agents.rllib.train.build_algo_config` (the candidate-scoring RLModule, the discrete scoring env
   on the memory-mapped corpus path) on a local Ray: (a) *sampling*: every env runner collects
   the preset's ``sample_steps`` env steps in all at once with the current module (``EnvRunner.sample``, run in parallel
   on the runners) after a warm-up that resets every env once on every training topic (a topic's first reset fills
   its score tables) and one untimed sampling call; (b) *training*: env steps per wall second
   of ``Algorithm.train()`` iterations (sampling + PPO update in the driver), the first iteration excluded.
   CPU seconds (of the runners while sampling; of the driver plus the runners while training) and the
   machine's load average are reported beside the wall times: on a shared machine wall time is noisy, steps
   per CPU-second are not.
2. **Learning curve.** ``--seeds`` PPO runs (``--timesteps`` env steps each, 2 env runners) with
   :func:`agents.rllib.train.train` on ``--train-topics``; per training iteration the mean relevant pages
   found per *training* episode (ground-truth labels) and the episode return; at the end (and, for the
   untrained module of the same seed, at the start) a greedy evaluation on the held-out ``--eval-topics``.
   Reported as mean ± sd over seeds.

Writes ``rllib.json``, ``rllib.md`` and ``rllib.png`` (learning curve + throughput bars) into ``--out``
(default ``benchmarks/results/rllib``). ``--quick``: 2 seeds × 1,200 steps, 200-step episodes, 600-step
sampling runs (a few minutes on 2 cores); the full preset: 5 seeds × 8,000 steps, 200-step episodes, 2,000-step
sampling runs (about 15 minutes on 2 shared cores); ``--timesteps`` / ``--seeds`` / ``--episode-steps`` override.
"""
from __future__ import annotations

import argparse
import os
import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._console import ArgumentParser
from gym_crawl.agents.train_common import parse_topics
from gym_crawl.benchmarks.report import markdown_banner, write_json_report
from gym_crawl.registry import install_command

DEFAULT_OUT = Path("benchmarks") / "results" / "rllib"  # under the current folder
TRAIN_TOPICS = ["geology", "cancer", "poetry", "astronomy", "jazz"]
EVAL_TOPICS = ["sports", "fiction", "cameras"]


@dataclass(frozen=True)
class Preset:
    name: str
    seeds: int
    timesteps: int
    episode_steps: int
    sample_steps: int
    train_iters: int
    batch: int


QUICK = Preset("quick", seeds=2, timesteps=1_200, episode_steps=200, sample_steps=600, train_iters=3, batch=400)
FULL = Preset("full", seeds=5, timesteps=8_000, episode_steps=200, sample_steps=2_000, train_iters=4, batch=1_000)


def _cfg(args: argparse.Namespace, p: Preset, runners: int, seed: int, out: Path) -> Any:
    from gym_crawl.agents.rllib.train import RLlibConfig

    return RLlibConfig(corpus=args.corpus, train_topics=args.train_topics, eval_topics=args.eval_topics,
                       timesteps=args.timesteps or p.timesteps, num_env_runners=runners, seed=seed, out=str(out),
                       max_candidates=args.max_candidates, max_episode_steps=args.episode_steps or p.episode_steps,
                       hidden=[64, 64], eval_episodes=1,
                       hyper={"train_batch_size_per_learner": p.batch, "minibatch_size": min(250, p.batch)})


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def throughput(args: argparse.Namespace, p: Preset, runners: int, corpus_path: str) -> dict[str, Any]:
    """Sampling-only and training env steps/s of one algorithm with ``runners`` env runners (see module doc)."""
    from gym_crawl.agents.rllib.train import build_algo_config, iteration_row

    cfg = _cfg(args, p, runners, args.seed, Path(args.out) / "runs" / f"throughput-{runners}")
    algo = build_algo_config(cfg, corpus_path).build_algo()
    try:
        group = algo.env_runner_group
        n = max(runners, 1)
        per_runner = max(1, p.sample_steps // n)

        topics = list(cfg.train_topics)

        def warm(runner: Any) -> int:
            """A topic's first reset fills its score tables (about a second per env on the synthetic corpus):
            reset every env of the runner once on every training topic, so that timing sees steady state."""
            envs = runner.env.unwrapped.envs
            for env in envs:
                for t in topics:
                    env.reset(options={"topic": t})
            return len(envs)

        def sample(runner: Any) -> tuple[int, float]:
            c = time.process_time()
            steps = int(sum(len(e) for e in runner.sample(num_timesteps=per_runner, force_reset=True)))
            return steps, time.process_time() - c

        def runner_cpu() -> float:
            """CPU seconds used so far by the remote runners' processes (0 without remote runners)."""
            if runners == 0:
                return 0.0
            return float(sum(group.foreach_env_runner(lambda r: time.process_time(), local_env_runner=False)))

        if runners == 0:
            def run() -> list[tuple[int, float]]:
                return [sample(group.local_env_runner)]
        else:
            def run() -> list[tuple[int, float]]:
                return list(group.foreach_env_runner(sample, local_env_runner=False))

        if runners == 0:
            warm(group.local_env_runner)
        else:
            group.foreach_env_runner(warm, local_env_runner=False)
        run()  # warm-up: JIT, module, connectors
        t0, load0 = time.perf_counter(), os.getloadavg()[0]
        res = run()
        wall = time.perf_counter() - t0
        steps, cpu = sum(r[0] for r in res), sum(r[1] for r in res)
        sampling = {"env_steps": steps, "seconds": round(wall, 3), "steps_per_second": round(steps / wall, 1),
                    "runner_cpu_seconds": round(cpu, 3),
                    "steps_per_runner_cpu_second": round(steps / max(cpu, 1e-9), 1), "load_average": round(load0, 2)}
        rows, t0 = [], time.perf_counter()
        for it in range(p.train_iters):
            rows.append(iteration_row(algo.train(), time.perf_counter() - t0, it + 1))
            if it == 0:
                c0, r0 = _cpu(), runner_cpu()
        d_cpu = (_cpu() - c0) + (runner_cpu() - r0)
        d_steps = rows[-1]["env_steps"] - rows[0]["env_steps"]
        d_sec = rows[-1]["seconds"] - rows[0]["seconds"]
        training = {"iterations": len(rows) - 1, "env_steps": d_steps, "seconds": round(d_sec, 3),
                    "steps_per_second": round(d_steps / max(d_sec, 1e-9), 1), "cpu_seconds": round(d_cpu, 3),
                    "steps_per_cpu_second": round(d_steps / max(d_cpu, 1e-9), 1),
                    "load_average": round(os.getloadavg()[0], 2)}
    finally:
        algo.stop()
    return {"env_runners": runners, "sampling": sampling, "training": training}


def learning(args: argparse.Namespace, p: Preset, corpus_path: str) -> list[dict[str, Any]]:
    """``--seeds`` training runs with 2 env runners: curves plus held-out evaluation before and after."""
    import torch

    from gym_crawl.agents.rllib.model import CandidateScoringRLModule
    from gym_crawl.agents.rllib.train import evaluate_module, module_config, train

    runs = []
    for seed in range(args.seed, args.seed + (args.seeds or p.seeds)):
        cfg = _cfg(args, p, 2, seed, Path(args.out) / "runs" / f"seed{seed}")
        res = train(cfg)
        torch.manual_seed(seed)
        fresh = CandidateScoringRLModule(observation_space=res.module.observation_space,
                                         action_space=res.module.action_space, model_config=module_config(cfg)).eval()
        before = evaluate_module(fresh, cfg, corpus_path, cfg.eval_topics, 1, seed=seed + 30_000)
        after = res.evaluation["eval"]
        runs.append({"seed": seed, "timesteps": res.timesteps, "train_seconds": round(res.train_seconds, 2),
                     "curve": res.curve,
                     "heldout_before": float(np.mean([r["relevant_found"] for r in before])) if before else None,
                     "heldout_after": float(np.mean([r["relevant_found"] for r in after])) if after else None,
                     "heldout_before_by_topic": {r["topic"]: r["relevant_found"] for r in before},
                     "heldout_after_by_topic": {r["topic"]: r["relevant_found"] for r in after}})
        print(f"  seed {seed}: {res.timesteps} steps in {res.train_seconds:.1f} s; training relevant/episode "
              f"{res.curve[0]['relevant_found_mean']:.1f} -> {res.curve[-1]['relevant_found_mean']:.1f}; held-out "
              f"{runs[-1]['heldout_before']} -> {runs[-1]['heldout_after']}", flush=True)
    return runs


def _curve_stats(runs: list[dict[str, Any]], key: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and sd over seeds of ``key`` per iteration (iterations all runs reached)."""
    n = min(len(r["curve"]) for r in runs)
    x = np.array([np.mean([r["curve"][i]["env_steps"] for r in runs]) for i in range(n)])
    y = np.array([[r["curve"][i][key] for i in range(n)] for r in runs], dtype=float)
    return x, np.nanmean(y, axis=0), np.nanstd(y, axis=0)


def plot(result: dict[str, Any], path: Path) -> Path:
    from gym_crawl.benchmarks.plotting import pyplot, save_png

    plt = pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    runs = result["learning"]
    if runs:
        x, m, s = _curve_stats(runs, "relevant_found_mean")
        a.plot(x, m, color="#1f77b4", label=f"PPO + candidate scoring, 2 env runners ({len(runs)} seeds)")
        a.fill_between(x, m - s, m + s, color="#1f77b4", alpha=0.2)
        before = [r["heldout_before"] for r in runs if r["heldout_before"] is not None]
        after = [r["heldout_after"] for r in runs if r["heldout_after"] is not None]
        if before and after:
            a.errorbar([0.0, x[-1]], [np.mean(before), np.mean(after)], yerr=[np.std(before), np.std(after)],
                       fmt="s--", color="#d62728", capsize=4, label="held-out topics, greedy (start / end)")
        a.set_xlabel("env steps")
        a.set_ylabel("relevant pages per episode")
        a.set_title(f"learning curve ({result['config']['corpus']}, {result['config']['episode_steps']}-step episodes)")
        a.legend(fontsize=8)
    tp = result["throughput"]
    labels = [str(t["env_runners"]) for t in tp]
    xs = np.arange(len(tp))
    w = 0.27
    b.bar(xs - w, [t["sampling"]["steps_per_second"] for t in tp], w, label="sampling only", color="#2ca02c")
    b.bar(xs, [t["training"]["steps_per_second"] for t in tp], w, label="training (sample + update)", color="#ff7f0e")
    b.bar(xs + w, [t["sampling"].get("steps_per_runner_cpu_second", np.nan) for t in tp], w, color="#2ca02c",
          alpha=0.45, hatch="//", label="sampling, per runner CPU-second")
    b.set_xticks(xs, labels)
    b.set_xlabel("env runners")
    b.set_ylabel("env steps / s")
    b.set_title(f"throughput ({result['machine']['cpus']} CPUs, load avg ≈ {result['machine']['load_average']})")
    b.set_ylim(0, 1.3 * max([1.0] + [v for t in tp for v in (t["sampling"]["steps_per_second"],
                                                               t["sampling"].get("steps_per_runner_cpu_second", 0))]))
    b.legend(fontsize=8, loc="upper center", ncol=2)
    return save_png(fig, path)


def markdown(result: dict[str, Any]) -> str:
    c = result["config"]
    lines = [f"# Ray RLlib backend ({c['preset']} preset)", "",
             f"Ray {result['versions']['ray']}, gymnasium {result['versions']['gymnasium']}, "
             f"torch {result['versions']['torch']}; corpus `{c['corpus']}` (memory-mapped from `{c['corpus_path']}`), "
             f"K = {c['max_candidates']}, {c['episode_steps']}-step episodes; machine: {result['machine']['cpus']} "
             "CPUs, "
             f"load average {result['machine']['load_average']} at the start (shared machine: wall times are noisy).",
             "", "## Throughput (env steps / s, wall)", "",
             "| env runners | sampling only | per runner CPU-second | training (sample + PPO update) "
             "| per CPU-second (driver + runners) |",
             "|---|---|---|---|---|"]
    for t in result["throughput"]:
        sa, tr = t["sampling"], t["training"]
        lines.append(f"| {t['env_runners']} | {sa['steps_per_second']:,.0f} ({sa['env_steps']} steps) | "
                     f"{sa['steps_per_runner_cpu_second']:,.0f} | {tr['steps_per_second']:,.0f} "
                     f"({tr['iterations']} iterations) | {tr['steps_per_cpu_second']:,.0f} |")
    runs = result["learning"]
    if runs:
        _, m, s = _curve_stats(runs, "relevant_found_mean")
        hb = [r["heldout_before"] for r in runs if r["heldout_before"] is not None]
        ha = [r["heldout_after"] for r in runs if r["heldout_after"] is not None]
        lines += ["", f"## Learning curve ({len(runs)} seeds × {runs[0]['timesteps']} env steps, 2 env runners)", "",
                  "| | start | end |", "|---|---|---|",
                  f"| relevant pages / training episode (first / last iteration) | {m[0]:.1f} ± {s[0]:.1f} | "
                  f"{m[-1]:.1f} ± {s[-1]:.1f} |"]
        if hb and ha:
            lines.append(f"| relevant pages / held-out episode, greedy (untrained / trained module) | "
                         f"{np.mean(hb):.1f} ± {np.std(hb):.1f} | {np.mean(ha):.1f} ± {np.std(ha):.1f} |")
        lines += ["", f"Training topics: {', '.join(c['train_topics'])}; held-out: {', '.join(c['eval_topics'])}. "
                  "Mean ± sd over seeds. Per-seed rows in `rllib.json`."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="gym-crawl bench rllib", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the QUICK preset (a few minutes)")
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--corpus", default="synthetic")
    ap.add_argument("--train-topics", type=parse_topics, default=TRAIN_TOPICS)
    ap.add_argument("--eval-topics", type=parse_topics, default=EVAL_TOPICS)
    ap.add_argument("--max-candidates", "-K", type=int, default=32)
    ap.add_argument("--seeds", type=int, default=None, help="learning-curve seeds (preset: 5 full, 2 quick)")
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--timesteps", type=int, default=None, help="env steps per learning-curve run")
    ap.add_argument("--episode-steps", type=int, default=None)
    ap.add_argument("--runners", type=lambda s: [int(x) for x in s.split(",")], default=[1, 2],
                    help="env-runner counts for the throughput table, e.g. 1,2")
    ap.add_argument("--no-learning", action="store_true", help="throughput only")
    args = ap.parse_args(argv)
    try:
        import ray
    except ImportError as e:
        print(f"gym-crawl bench rllib: error: Ray RLlib is not installed ({e}); {install_command('rllib')}")
        return 2
    import gymnasium
    import torch

    from gym_crawl._io import atomic_write_bytes
    from gym_crawl.agents.rllib.train import RLlibConfig, init_ray, resolve_corpus_path

    p = QUICK if args.quick else FULL
    torch.set_num_threads(1)  # the driver runs the PPO update; on a shared 2-core machine 2 threads thrash
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    corpus_path = resolve_corpus_path(args.corpus, out)
    machine = {"cpus": os.cpu_count(), "load_average": round(os.getloadavg()[0], 2),
               "python": platform.python_version()}
    started = init_ray(RLlibConfig(num_env_runners=max(args.runners)))
    try:
        tp = []
        for n in args.runners:
            tp.append(throughput(args, p, n, corpus_path))
            print(f"  {n} env runner(s): sampling {tp[-1]['sampling']['steps_per_second']:.0f} steps/s, "
                  f"training {tp[-1]['training']['steps_per_second']:.0f} steps/s", flush=True)
        runs = [] if args.no_learning else learning(args, p, corpus_path)
    finally:
        if started:
            ray.shutdown()
    result = {"config": {"preset": p.name, "corpus": args.corpus, "corpus_path": corpus_path,
                         "max_candidates": args.max_candidates, "episode_steps": args.episode_steps or p.episode_steps,
                         "train_topics": args.train_topics, "eval_topics": args.eval_topics,
                         "train_batch": p.batch, "sample_steps": p.sample_steps},
              "versions": {"ray": ray.__version__, "gymnasium": gymnasium.__version__, "torch": torch.__version__},
              "machine": machine, "throughput": tp, "learning": runs}
    write_json_report(out / "rllib.json", result, "rllib", args)
    atomic_write_bytes(out / "rllib.md", (markdown_banner(args.quick) + markdown(result)).encode())
    plot(result, out / "rllib.png")
    print(markdown(result))
    print(f"wrote {out / 'rllib.json'}, {out / 'rllib.md'}, {out / 'rllib.png'}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
