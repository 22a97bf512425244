"""The batched env's step, this code against a git revision in lock step: the same steps, interleaved, CPU time.

``gym-crawl bench step_ab --baseline REV [--envs 64] [--rounds 40] [--chunk 100] [--warmup 300] [--quick]
[--corpus SPEC [--topic NAME]] [--out DIR]``

``paired_step`` runs each code in turn, a whole run at a time, each seconds to minutes apart on a shared machine; a
kernel change of a few per cent drowns in that. Here the two codes step side by side: two worker processes (this
code, and revision ``REV`` extracted with ``git archive`` and put first on ``PYTHONPATH``) each build the default task
batched (``gym.make_vec(DEFAULT_ENV_ID, num_envs=N, vectorization_mode="vector_entry_point")``), reset with the same
seed, and then, round after round, one takes ``--chunk`` vector steps (a random valid slot per crawl, from the same
random stream) while the other waits, then the other takes the same steps from the same state. The trajectories are
the same bit for bit — checked after every round by a digest of the observations and rewards, so a change that
alters them is refused rather than timed — so both do the same work, under the same load, minutes apart at most by a
chunk. The leader alternates between rounds; each worker sums ``time.process_time`` around ``env.step`` only.
``--corpus`` / ``--topic``: the same env on another web (each code opens ``SPEC`` as it resolves it: a generated web
of another generator version is its own web, and the digests then say whether the two crawls are still the same).

Reports the median over the rounds of baseline CPU / current CPU (above 1: this code is faster), its min – max, and
each code's env-steps per CPU-second over all rounds. Writes ``step_ab.json`` and ``step_ab.md`` to ``--out``
(default ``benchmarks/results/step_ab``).
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
from typing import IO, Any

from gym_crawl.benchmarks.bench_step import baseline_tree
from gym_crawl.benchmarks.report import write_reports

__all__ = ["WORKER", "LockStep", "compare", "main", "worker_env"]

DEFAULT_OUT = Path("benchmarks") / "results" / "step_ab"

#: One code's worker: ``python -c WORKER N SEED [CORPUS [TOPIC]]``, then one command per line on stdin — ``run K``
#: takes K vector steps and answers one JSON line: the CPU seconds inside ``env.step`` and a digest of the last step's
#: observation and rewards. Public API only, so it runs against any revision of the package.
WORKER = r'''
import hashlib, json, sys, time
import numpy as np
import gymnasium as gym
import gym_crawl
n_envs, seed = int(sys.argv[1]), int(sys.argv[2])
kw = dict(zip(("corpus", "topic"), sys.argv[3:5]))
env = gym.make_vec(gym_crawl.DEFAULT_ENV_ID, num_envs=n_envs, vectorization_mode="vector_entry_point", **kw)
obs = env.reset(seed=seed)[0]
rng = np.random.default_rng(seed)
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    k = int(line.split()[1])
    cpu = 0.0
    for _ in range(k):
        a = (rng.random(n_envs) * obs["mask"].sum(1)).astype(np.int64)
        t0 = time.process_time()
        obs, r, term, trunc, _ = env.step(a)
        cpu += time.process_time() - t0
    h = hashlib.sha1()
    for key in sorted(obs):
        h.update(np.ascontiguousarray(obs[key]).tobytes())
    for x in (r, term, trunc):
        h.update(np.ascontiguousarray(x).tobytes())
    print(json.dumps({"cpu_s": cpu, "digest": h.hexdigest()}), flush=True)
'''


def worker_env(code: str | None, cache_dir: str | None) -> dict[str, str]:
    """A worker's environment: ``code`` first on ``PYTHONPATH`` (None: this code), and numba's cache in
    ``cache_dir`` (None: where the code keeps it). numba keys a cached function on its own file only, and a cached
    caller holds the code of the callees it was compiled with: after an edit to one module (the fetch kernel), its
    callers in other modules (the batched step) would run the old callee from this tree's cache. A fresh directory
    makes this code compile from its source, as the baseline's freshly extracted tree does."""
    env = {**os.environ, **({"PYTHONPATH": code} if code else {})}
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    return env


class LockStep:
    """One code's worker process (``code``: a tree to put first on ``PYTHONPATH``, ``None`` for this code;
    ``cache_dir``: numba's cache directory for it, see :func:`worker_env`)."""

    def __init__(self, code: str | None, n_envs: int, seed: int = 0, web: tuple[str, ...] = (),
                 cache_dir: str | None = None):
        env = worker_env(code, cache_dir)
        self.proc = subprocess.Popen([sys.executable, "-c", WORKER, str(n_envs), str(seed), *web],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                                     cwd=tempfile.gettempdir())
        self._read()

    def _read(self) -> dict[str, Any]:
        out: IO[str] | None = self.proc.stdout
        line = out.readline() if out is not None else ""
        if not line:
            code = self.proc.wait(timeout=60)
            raise RuntimeError(f"a step_ab worker ended (exit code {code}); its error is above")
        return dict(json.loads(line))

    def run(self, k: int) -> tuple[float, str]:
        """Take ``k`` vector steps; their CPU seconds and the digest of where they ended."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"run {k}\n")
        self.proc.stdin.flush()
        r = self._read()
        return float(r["cpu_s"]), str(r["digest"])

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def compare(base: str, n_envs: int, rounds: int, chunk: int, warmup: int, seed: int = 0,
            web: tuple[str, ...] = ()) -> dict[str, Any]:
    """The two codes in lock step (see the module docstring): ``base`` is the baseline's tree; ``web``: ``(corpus,)``
    or ``(corpus, topic)`` instead of the default task's. Per-round CPU seconds of each; a ``RuntimeError`` when their
    trajectories part. Each code compiles into a fresh numba cache (:func:`worker_env`), so neither runs code
    compiled before from another version of its source."""
    caches = tempfile.TemporaryDirectory(prefix="step-ab-numba-")
    workers = {"current": LockStep(None, n_envs, seed, web, os.path.join(caches.name, "current"))}
    try:
        workers["baseline"] = LockStep(base, n_envs, seed, web, os.path.join(caches.name, "baseline"))
        done = 0

        def both(order: tuple[str, str]) -> dict[str, float]:
            nonlocal done
            res = {who: workers[who].run(chunk) for who in order}
            done += chunk
            if res["current"][1] != res["baseline"][1]:
                raise RuntimeError(f"the two codes' observations or rewards differ after {done} vector steps: their "
                                   f"trajectories are not the same, so their steps are not the same work")
            return {who: r[0] for who, r in res.items()}

        for _ in range(-(-warmup // chunk)):  # whole chunks, at least --warmup vector steps
            both(("current", "baseline"))
        cur, old = [], []
        for k in range(rounds):
            t = both(("current", "baseline") if k % 2 else ("baseline", "current"))
            cur.append(t["current"])
            old.append(t["baseline"])
    finally:
        for w in workers.values():
            w.close()
        caches.cleanup()
    ratios = [b / c for b, c in zip(old, cur)]
    steps = rounds * chunk * n_envs
    return {"envs": n_envs, "rounds": rounds, "chunk": chunk, "warmup_vector_steps": done - rounds * chunk,
            "ratio_median": statistics.median(ratios), "ratio_min": min(ratios), "ratio_max": max(ratios),
            "ratios": ratios, "current_cpu_s": cur, "baseline_cpu_s": old,
            "current_steps_per_cpu_s": steps / sum(cur), "baseline_steps_per_cpu_s": steps / sum(old),
            "trajectories_equal": True}


def _markdown(out: dict[str, Any]) -> str:
    return "\n".join([
        f"# step_ab — this code against {out['baseline']} in lock step, {out['rounds']} rounds of "
        f"{out['chunk']} vector steps (N = {out['envs']})"
        + (f" on `{out['corpus']}` (topic {out.get('topic') or 'its default'})" if out.get("corpus") else ""), "",
        f"The same steps in lock step (trajectories checked equal after every round); load average at the start "
        f"{out['load_average']}.", "",
        "| baseline CPU / current CPU (median) | min – max | current env-steps per CPU-s | baseline |",
        "|---:|---|---:|---:|",
        f"| {out['ratio_median']:.3f} | {out['ratio_min']:.3f} – {out['ratio_max']:.3f} | "
        f"{out['current_steps_per_cpu_s']:,.0f} | {out['baseline_steps_per_cpu_s']:,.0f} |"]) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="gym-crawl bench step_ab", description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", required=True, help="git revision to compare with (e.g. main)")
    ap.add_argument("--envs", type=int, default=64, help="crawls of the batched env (default 64; >= 2)")
    ap.add_argument("--rounds", type=int, default=None, help="timed rounds (default 40; --quick 2)")
    ap.add_argument("--chunk", type=int, default=None, help="vector steps per code and round (default 100; --quick 5)")
    ap.add_argument("--warmup", type=int, default=None,
                    help="vector steps before timing, in whole chunks (default 300; --quick 10)")
    ap.add_argument("--quick", action="store_true", help="a short run (checks that it runs)")
    ap.add_argument("--corpus", default=None, help="another web than the default task's (e.g. powerlaw-10000000)")
    ap.add_argument("--topic", default=None, help="with --corpus: the topic crawled (default the web's own)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    if args.topic is not None and args.corpus is None:
        ap.error("--topic needs --corpus")
    web = tuple(x for x in (args.corpus, args.topic) if x is not None)
    rounds = args.rounds if args.rounds is not None else (2 if args.quick else 40)
    chunk = args.chunk if args.chunk is not None else (5 if args.quick else 100)
    warmup = args.warmup if args.warmup is not None else (10 if args.quick else 300)
    if args.envs < 2 or rounds < 1 or chunk < 1 or warmup < 0:
        ap.error(f"--envs must be >= 2, --rounds and --chunk >= 1, --warmup >= 0; got {args.envs}, {rounds}, "
                 f"{chunk}, {warmup}")
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="step-ab-base-") as tmp:
        base = str(baseline_tree(args.baseline, Path(tmp)))
        out = {"baseline": args.baseline, "load_average": load, **dict(zip(("corpus", "topic"), web)),
               **compare(base, args.envs, rounds, chunk, warmup, web=web)}
    md = _markdown(out)
    write_reports(args.out, "step_ab", out, md, args, args.quick)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
