"""What the batched env's step costs around its compiled calls: CPU time per vector step of the whole step, of the
compiled calls (their dispatch included) and of the Python parts around them.

``gym-crawl bench step_parts [--envs 64] [--steps 3000] [--warmup 300] [--quick] [--out DIR]``

Runs the default task as a user builds it (``gym.make_vec(gym_crawl.DEFAULT_ENV_ID, num_envs=N,
vectorization_mode="vector_entry_point")``, a random valid slot per crawl every step, chosen outside the timers) and
puts
``time.process_time`` around ``env.step`` and around each of the batched step's compiled calls and
:class:`~gym_crawl.envs.vector.WikiCrawlVectorEnv` helpers the installed package has (``vec_step``,
``batch_pages``, ``batch_step_resets``, ``info_arrays``; ``_infos``, ``_info_dict``, ``_obs_out``,
``_clear_crawls``). "Outside the compiled calls" is the whole step less the compiled calls. The timers themselves
cost ≈ 0.3–1 µs each (a few per step). An older revision is measured with this file run by path and a ``git
worktree`` of it first on ``PYTHONPATH`` (``PYTHONPATH=<tree> python benchmarks/step_parts.py``): it times the
calls that revision has. Writes ``step_parts.json`` and ``.md`` to ``--out`` (default
``benchmarks/results/step_parts``).
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_OUT = Path("benchmarks") / "results" / "step_parts"
#: the compiled calls and the vector env's helpers timed, where the package has them
COMPILED = ("vec_step", "batch_pages", "batch_step_resets", "info_arrays")
HELPERS = ("_infos", "_info_dict", "_obs_out", "_clear_crawls")


def _timed(times: dict[str, float], name: str, f: Any) -> Any:
    def w(*a: Any, **k: Any) -> Any:
        t0 = time.process_time()
        try:
            return f(*a, **k)
        finally:
            times[name] = times.get(name, 0.0) + time.process_time() - t0
    return w


def measure(n_envs: int, steps: int, warmup: int, seed: int = 0) -> dict[str, Any]:
    """Step the default task's batched env ``warmup`` then ``steps`` vector steps; CPU µs per vector step of each
    part (see the module docstring)."""
    import gymnasium as gym

    from gym_crawl.envs import DEFAULT_ENV_ID
    from gym_crawl.envs import batch_kernels as BK
    from gym_crawl.envs import vector as V

    env = gym.make_vec(DEFAULT_ENV_ID, num_envs=n_envs, vectorization_mode="vector_entry_point")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    masks = env.unwrapped.action_masks  # type: ignore[attr-defined]
    k = int(env.single_action_space.n)  # type: ignore[attr-defined]

    def actions() -> np.ndarray:  # a random valid slot of each crawl (0 when none is)
        return np.argmax(masks() * rng.random((n_envs, k)), axis=1)

    for _ in range(warmup):
        env.step(actions())
    times: dict[str, float] = {}
    saved = []
    for owner, names, prefix in ((BK, COMPILED, "compiled "), (V.WikiCrawlVectorEnv, HELPERS, "")):
        for n in names:
            if hasattr(owner, n):
                saved.append((owner, n, getattr(owner, n)))
                setattr(owner, n, _timed(times, prefix + n, getattr(owner, n)))
    try:
        total = 0.0
        for _ in range(steps):
            a = actions()
            t0 = time.process_time()
            env.step(a)
            total += time.process_time() - t0
    finally:
        for owner, n, f in saved:
            setattr(owner, n, f)
        env.close()
    comp = sum(v for k, v in times.items() if k.startswith("compiled "))
    us = {"the whole step": total, "compiled calls": comp, "outside the compiled calls": total - comp,
          **dict(sorted(times.items()))}
    return {"envs": n_envs, "steps": steps, "warmup": warmup,
            "us_per_vector_step": {k: v / steps * 1e6 for k, v in us.items()},
            "env_steps_per_cpu_second": steps * n_envs / total if total > 0 else None}


def _markdown(out: dict[str, Any]) -> str:
    lines = [f"# step_parts — the default task, {out['envs']} crawls, {out['steps']:,} vector steps", "",
             f"Load average at the start {out['load_average']}; "
             f"{out['env_steps_per_cpu_second'] or 0:,.0f} env-steps per CPU-second (timers included).", "",
             "| part | CPU µs per vector step |", "|---|---:|"]
    lines += [f"| {k} | {v:.1f} |" for k, v in out["us_per_vector_step"].items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from gym_crawl.benchmarks.report import write_reports

    ap = argparse.ArgumentParser(prog="gym-crawl bench step_parts", description=__doc__.split("\n\n")[0])
    ap.add_argument("--envs", type=int, default=64, help="crawls of the batched env (default 64)")
    ap.add_argument("--steps", type=int, default=None, help="timed vector steps (default 3000; --quick 20)")
    ap.add_argument("--warmup", type=int, default=None, help="vector steps before timing (default 300; --quick 5)")
    ap.add_argument("--quick", action="store_true", help="a short run (checks that it runs)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    steps = args.steps if args.steps is not None else (20 if args.quick else 3000)
    warmup = args.warmup if args.warmup is not None else (5 if args.quick else 300)
    if args.envs < 1 or steps < 1 or warmup < 0:
        ap.error(f"--envs and --steps must be >= 1, --warmup >= 0; got {args.envs}, {steps}, {warmup}")
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    out = {"load_average": load, **measure(args.envs, steps, warmup)}
    write_reports(args.out, "step_parts", out, _markdown(out), args, args.quick)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
