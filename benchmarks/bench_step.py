"""Env steps/s of the compiled crawl step, per reducer and corpus, with CartPole as a same-run yardstick.

``gym-crawl bench bench_step [--quick] [--out DIR] [--wikispeedia PATH] [--baseline REV]``

Measures (figures only; nothing here is asserted in tests):

* **steps/s** through ``env.step`` (``gym.make("WikiCrawl-v0")``, K = 64, ``combined`` features,
  ``han2018`` reward, 1000-step episodes with resets counted) of a random valid agent for every
  reducer (``topk``, ``outlinks``, ``random``, ``full``, ``tree``) and of best-first (``topk``), on
  the default synthetic corpus and on Wikispeedia. Each configuration runs in its own process:
  warm-up steps first (they fill the per-topic score tables, which a long run amortizes), then the
  timed steps. The ratio to CartPole-v1 (random actions, measured in this process) is reported
  beside the absolute figure;
* **RSS** (MB) of each configuration's process after its run;
* **cold / warm start**: seconds of the first ``gym.make`` + ``reset`` + first step in a fresh
  process whose numba cache (``NUMBA_CACHE_DIR``) is an empty temporary directory (cold: every
  kernel compiles), then again in a fresh process with that cache filled (warm), plus import time;
* **before/after** (``--baseline REV``): the same configurations, in the same run, with the
  package as of git revision ``REV`` (extracted with ``git archive`` into a temporary directory and
  put first on ``PYTHONPATH``).

Writes ``bench_step.json``, ``bench_step.md`` and ``bench_step.png`` to ``--out`` (default
``benchmarks/results/bench_step``).
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gym_crawl._console import ArgumentParser
from gym_crawl.benchmarks.report import markdown_banner, write_json_report

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_WIKISPEEDIA = ROOT.parent / "shared" / "data" / "wikispeedia"
DEFAULT_OUT = Path("benchmarks") / "results" / "bench_step"  # under the current folder
REDUCERS = ("topk", "outlinks", "random", "full", "tree")


@dataclass(frozen=True)
class Preset:
    steps: int
    warmup: int
    corpora: tuple[str, ...]
    reducers: tuple[str, ...]


QUICK = Preset(steps=1500, warmup=1500, corpora=("synthetic",), reducers=("topk", "tree"))
FULL = Preset(steps=10_000, warmup=20_000, corpora=("synthetic", "wikispeedia"), reducers=REDUCERS)

#: One timed configuration, run as ``python -c WORKER corpus reducer agent steps warmup`` (public API only,
#: so it runs against any revision of the package).
WORKER = r'''
import json, sys, time
import numpy as np
import gymnasium as gym
import gym_crawl  # noqa: F401
corpus, reducer, agent, steps, warmup = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
env = gym.make("WikiCrawl-v0", corpus=None if corpus == "synthetic" else corpus, reducer=reducer,
               max_episode_steps=1000)
u = env.unwrapped
rng = np.random.default_rng(0)
obs, info = env.reset(seed=0)
def act(info):
    ids = info["candidate_ids"]
    valid = np.flatnonzero(ids >= 0)
    if agent == "random":
        return int(valid[rng.integers(len(valid))])
    return int(valid[int(np.argmax(u.view.link_scores(ids[valid])))])
def run(n):
    global obs, info
    episodes = 0
    for _ in range(n):
        obs, r, term, trunc, info = env.step(act(info))
        if term or trunc:
            obs, info = env.reset()
            episodes += 1
    return episodes
run(warmup)
t0 = time.perf_counter()
eps = run(steps)
dt = time.perf_counter() - t0
rss = 0.0
with open("/proc/self/status") as f:
    for line in f:
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 1024.0
print(json.dumps({"steps_per_s": steps / dt, "seconds": dt, "episodes": eps, "rss_mb": rss}))
'''

#: Cold/warm start: import, then first gym.make + reset + step (timed separately).
STARTUP = r'''
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import gymnasium as gym
import gym_crawl  # noqa: F401
t1 = time.perf_counter()
corpus = sys.argv[1]
env = gym.make("WikiCrawl-v0", corpus=None if corpus == "synthetic" else corpus, reducer=sys.argv[2])
obs, info = env.reset(seed=0)
obs, r, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
t2 = time.perf_counter()
for _ in range(200):
    obs, r, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    if term or trunc:
        obs, info = env.reset()
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "first_make_reset_step_s": t2 - t1, "next_200_steps_s": t3 - t2}))
'''


def _run_py(code: str, args: list[str], env: dict[str, str] | None = None, timeout: float = 1800) -> dict[str, Any]:
    p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout,
                       env={**os.environ, **(env or {})}, cwd=tempfile.gettempdir())
    if p.returncode != 0:
        raise RuntimeError(f"worker {args} failed:\n{p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def cartpole_steps_per_s(steps: int = 50_000) -> float:
    import gymnasium as gym

    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    env.action_space.seed(0)
    t0 = time.perf_counter()
    for _ in range(steps):
        _, _, term, trunc, _ = env.step(env.action_space.sample())
        if term or trunc:
            env.reset()
    return steps / (time.perf_counter() - t0)


def baseline_tree(rev: str, into: Path) -> Path:
    """Extract revision ``rev`` of this repository into ``into`` (``git archive``) and return ``into``: a tree to
    put first on ``PYTHONPATH`` to run that revision's package. ``SystemExit`` naming ``rev`` when git cannot."""
    ar = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, timeout=300)
    if ar.returncode != 0:
        raise SystemExit(f"--baseline {rev!r}: git archive failed: {ar.stderr.decode()[-500:]}")
    subprocess.run(["tar", "-x", "-C", str(into)], input=ar.stdout, check=True)
    return into


def startup(corpus: str, reducer: str = "topk", pythonpath: str | None = None) -> dict[str, Any]:
    """Cold (empty numba cache) and warm (filled cache) start in fresh processes."""
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
        env = {"NUMBA_CACHE_DIR": cache}
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        cold = _run_py(STARTUP, [corpus, reducer], env)
        warm = _run_py(STARTUP, [corpus, reducer], env)
    return {"cold": cold, "warm": warm}


def _corpus_spec(name: str, wikispeedia: Path) -> str | None:
    if name == "synthetic":
        return "synthetic"
    if not wikispeedia.exists():
        return None
    return str(wikispeedia)


def measure(preset: Preset, wikispeedia: Path, pythonpath: str | None, label: str) -> list[dict[str, Any]]:
    env = {"PYTHONPATH": pythonpath} if pythonpath else None
    rows = []
    for corpus in preset.corpora:
        spec = _corpus_spec(corpus, wikispeedia)
        if spec is None:
            print(f"  skip {corpus}: {wikispeedia} not found", flush=True)
            continue
        runs = [(r, "random") for r in preset.reducers] + [("topk", "best-first")]
        for reducer, agent in runs:
            res = _run_py(WORKER, [spec, reducer, agent, str(preset.steps), str(preset.warmup)], env)
            rows.append({"code": label, "corpus": corpus, "reducer": reducer, "agent": agent, **res})
            print(f"  [{label}] {corpus:12s} {reducer:9s} {agent:10s} {res['steps_per_s']:9.0f} steps/s "
                  f"rss {res['rss_mb']:.0f} MB", flush=True)
    return rows


def _markdown(out: dict[str, Any]) -> str:
    cp = out["cartpole_steps_per_s"]
    lines = [f"# bench_step — env steps/s of the crawl step ({out['preset']})", "",
             f"Machine: {out['machine']}; CartPole-v1 (same run, random actions): {cp:,.0f} steps/s. "
             f"Timed {out['steps']} steps after {out['warmup']} warm-up steps, one process per row.", ""]
    base = {(r["corpus"], r["reducer"], r["agent"]): r for r in out["rows"] if r["code"] == "baseline"}
    head = "| corpus | reducer | agent | steps/s | vs CartPole | RSS MB |"
    sep = "|---|---|---|---|---|---|"
    if base:
        head += f" baseline ({out['baseline']}) steps/s | speed-up |"
        sep += "---|---|"
    lines += [head, sep]
    for r in out["rows"]:
        if r["code"] != "current":
            continue
        line = (f"| {r['corpus']} | {r['reducer']} | {r['agent']} | {r['steps_per_s']:,.0f} | "
                f"{r['steps_per_s'] / cp:.3f} | {r['rss_mb']:.0f} |")
        b = base.get((r["corpus"], r["reducer"], r["agent"]))
        if base:
            line += (f" {b['steps_per_s']:,.0f} | {r['steps_per_s'] / b['steps_per_s']:.1f}× |" if b else " — | — |")
        lines.append(line)
    lines += ["", "## Start-up (fresh processes; cold = empty numba cache)", "",
              "| code | corpus | import s | first make+reset+step s | next 200 steps s |", "|---|---|---|---|---|"]
    for s in out["startup"]:
        for kind in ("cold", "warm"):
            v = s[kind]
            lines.append(f"| {s['code']} {kind} | {s['corpus']} | {v['import_s']:.2f} | "
                         f"{v['first_make_reset_step_s']:.2f} | {v['next_200_steps_s']:.3f} |")
    return "\n".join(lines) + "\n"


def _plot(out: dict[str, Any], path: Path) -> None:
    from gym_crawl.benchmarks.plotting import pyplot, save_png

    plt = pyplot()
    cur = [r for r in out["rows"] if r["code"] == "current"]
    base = {(r["corpus"], r["reducer"], r["agent"]): r for r in out["rows"] if r["code"] == "baseline"}
    labels = [f"{r['corpus'][:5]}\n{r['reducer']}\n{r['agent'][:6]}" for r in cur]
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(cur) + 2), 4))
    x = list(range(len(cur)))
    w = 0.4 if base else 0.7
    ax.bar([i + (w / 2 if base else 0) for i in x], [r["steps_per_s"] for r in cur], width=w, label="current")
    if base:
        ax.bar([i - w / 2 for i in x], [base.get((r["corpus"], r["reducer"], r["agent"]), {}).get("steps_per_s", 0)
                                          for r in cur], width=w, label=f"baseline {out['baseline']}")
    ax.axhline(10_000, color="k", ls="--", lw=0.8, label="target 10k")
    ax.axhline(5_000, color="grey", ls=":", lw=0.8, label="target 5k (tree)")
    ax.set_xticks(x)
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel("env steps/s (one core)")
    ax.set_title(f"WikiCrawl-v0 steps/s (CartPole-v1: {out['cartpole_steps_per_s']:,.0f})")
    ax.legend(fontsize=7)
    save_png(fig, path)


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="gym-crawl bench bench_step", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="synthetic corpus, topk and tree, short runs")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--wikispeedia", type=Path, default=DEFAULT_WIKISPEEDIA)
    ap.add_argument("--baseline", default=None, help="git revision to time in the same run (before/after)")
    ap.add_argument("--steps", type=int, default=None, help="timed steps per configuration")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up steps per configuration")
    args = ap.parse_args(argv)
    preset = QUICK if args.quick else FULL
    if args.steps is not None or args.warmup is not None:
        preset = Preset(args.steps or preset.steps, args.warmup if args.warmup is not None else preset.warmup,
                        preset.corpora, preset.reducers)
    if preset.steps < 1 or preset.warmup < 0:
        raise SystemExit(f"--steps must be >= 1 and --warmup >= 0, got {preset.steps}, {preset.warmup}")
    from gym_crawl._io import atomic_write_bytes

    args.out.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {"preset": "quick" if args.quick else "full", "steps": preset.steps, "warmup": preset.warmup,
                           "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
                                      f"python {platform.python_version()}",
                           "baseline": args.baseline, "rows": [], "startup": []}
    out["cartpole_steps_per_s"] = cartpole_steps_per_s(20_000 if args.quick else 100_000)
    print(f"CartPole-v1: {out['cartpole_steps_per_s']:,.0f} steps/s", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-step-base-") as tmp:
        codes: list[tuple[str, str | None]] = [("current", None)]
        if args.baseline:
            codes.append(("baseline", str(baseline_tree(args.baseline, Path(tmp)))))
        for label, pp in codes:
            out["rows"] += measure(preset, args.wikispeedia, pp, label)
            for corpus in preset.corpora:
                spec = _corpus_spec(corpus, args.wikispeedia)
                if spec is not None:
                    s = startup(spec, "topk", pp)
                    out["startup"].append({"code": label, "corpus": corpus, **s})
                    print(f"  [{label}] start-up {corpus}: cold {s['cold']['first_make_reset_step_s']:.2f} s, "
                          f"warm {s['warm']['first_make_reset_step_s']:.2f} s", flush=True)
    write_json_report(args.out / "bench_step.json", out, "bench_step", args)
    atomic_write_bytes(args.out / "bench_step.md", (markdown_banner(args.quick) + _markdown(out)).encode())
    _plot(out, args.out / "bench_step.png")
    print(f"wrote {args.out / 'bench_step.json'}, .md, .png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
