"""Where the batched env's step spends its CPU time: a sampling profile by compiled (numba) function.

``gym-crawl bench step_profile [--envs 64] [--steps 600000] [--warmup 5000] [--interval-ms 2] [--top 30] [--quick]
[--corpus SPEC [--topic NAME]] [--out DIR]``

Runs the default task as a user builds it (``gym.make_vec(gym_crawl.DEFAULT_ENV_ID, num_envs=N,
vectorization_mode="vector_entry_point")``, a random valid slot per crawl every step — the ``task:N`` configuration
of ``gym-crawl bench paired_step``; ``--envs 1`` is one env through ``gym.make``; ``--corpus`` / ``--topic``: the same
env on another web, e.g. ``--corpus powerlaw-10000000 --topic geology`` as ``bench crawl_scale`` runs it) and samples
it: ``SIGPROF`` every
``--interval-ms`` of the process' CPU time, each sample's instruction pointer recorded by a signal handler compiled
with llvmlite (no Python runs in the signal). After the run each address is named:

* inside numba's compiled code (anonymous executable memory): the compiled symbol at or below it (numba's mangled
  name shortened to its qualified name, e.g. ``gym_crawl.crawl.kernels.fetch_page``; a callee that was not inlined
  is its own symbol, e.g. ``gym_crawl.pagemap.find``; numba's runtime functions by their names, e.g. ``NRT_incref``);
* in a shared library: its file and the exported symbol ``dladdr`` finds (``libpython3.11.so`` for the
  interpreter, numpy's extension modules, ``libc``).

The kernel's profiling timer ticks at its own rate (4 ms on a 250 Hz kernel), so a sample comes every
``max(--interval-ms, tick)``; the report gives the interval actually seen. ≈ 6 CPU-seconds (the default 600,000
env-steps at N = 64) give ≈ 1,500 samples: a share of 5 % is then known to ± 1 % (one binomial s.d.).

Samples are leaf addresses: time in a callee counts for the callee, not its caller. Writes ``step_profile.json``
(the shares of all samples per function and per group — compiled, python, numpy, libc, other — and the steps per
CPU-second of the sampled steps) and ``step_profile.md`` to ``--out`` (default ``benchmarks/results/step_profile``).
Linux on x86-64 only (the signal context's layout).
"""
from __future__ import annotations

import argparse
import bisect
import ctypes
import os
import platform
import re
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl.benchmarks.report import write_reports

__all__ = ["Sampler", "demangle", "main", "make_runner", "profile", "symbolize"]

DEFAULT_OUT = Path("benchmarks") / "results" / "step_profile"

#: offset of the interrupted instruction pointer in a Linux x86-64 ``ucontext_t``: ``uc_flags`` (8), ``uc_link`` (8),
#: ``uc_stack`` (24), then ``mcontext_t.gregs[REG_RIP = 16]``
_RIP_OFFSET = 8 + 8 + 24 + 16 * 8
_SA_SIGINFO, _SA_RESTART = 0x4, 0x10000000


class _SigAction(ctypes.Structure):
    _fields_ = [("sa_sigaction", ctypes.c_void_p), ("sa_mask", ctypes.c_ulong * 16), ("sa_flags", ctypes.c_int),
                ("sa_restorer", ctypes.c_void_p)]


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p), ("dli_sname", ctypes.c_char_p),
                ("dli_saddr", ctypes.c_void_p)]


_HANDLER_IR = """
define void @gym_crawl_prof_sample(i32 %sig, i8* %info, i8* %ctx) {{
entry:
  %p = getelementptr i8, i8* %ctx, i64 {rip}
  %pp = bitcast i8* %p to i64*
  %ip = load volatile i64, i64* %pp
  %cp = inttoptr i64 {count} to i64*
  %n = load volatile i64, i64* %cp
  %ok = icmp ult i64 %n, {cap}
  br i1 %ok, label %put, label %done
put:
  %bp = inttoptr i64 {buf} to i64*
  %slot = getelementptr i64, i64* %bp, i64 %n
  store volatile i64 %ip, i64* %slot
  %n1 = add i64 %n, 1
  store volatile i64 %n1, i64* %cp
  br label %done
done:
  ret void
}}
"""


class Sampler:
    """``SIGPROF`` every ``interval_s`` of the process' CPU time, recording the interrupted instruction pointer into
    a preallocated buffer of ``capacity`` samples (later ones are dropped; :attr:`full` says so).

    Use as a context manager; :attr:`ips` holds the recorded addresses after it exits. The handler is a few LLVM
    instructions (it neither allocates nor takes the GIL); the previous ``SIGPROF`` action is restored on exit."""

    def __init__(self, interval_s: float = 0.002, capacity: int = 1_000_000):
        if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
            raise RuntimeError(f"the sampler reads Linux x86-64 signal contexts; this is {platform.system()} "
                               f"{platform.machine()}")
        if not interval_s > 0:
            raise ValueError(f"interval must be > 0 seconds, got {interval_s}")
        import llvmlite.binding as llvm

        self.interval_s = float(interval_s)
        self._buf = np.zeros(int(capacity), np.uint64)
        self._count = np.zeros(1, np.uint64)
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        mod = llvm.parse_assembly(_HANDLER_IR.format(rip=_RIP_OFFSET, count=self._count.ctypes.data,
                                                     cap=len(self._buf), buf=self._buf.ctypes.data))
        mod.verify()
        self._engine = llvm.create_mcjit_compiler(mod, llvm.Target.from_default_triple().create_target_machine())
        self._engine.finalize_object()
        self._handler = self._engine.get_function_address("gym_crawl_prof_sample")
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._old = _SigAction()
        self.ips = np.zeros(0, np.uint64)
        self.full = False

    def __enter__(self) -> Sampler:
        self._count[0] = 0
        act = _SigAction()
        act.sa_sigaction = self._handler
        act.sa_flags = _SA_SIGINFO | _SA_RESTART
        if self._libc.sigaction(signal.SIGPROF, ctypes.byref(act), ctypes.byref(self._old)) != 0:
            raise OSError(ctypes.get_errno(), "sigaction(SIGPROF) failed")
        signal.setitimer(signal.ITIMER_PROF, self.interval_s, self.interval_s)
        return self

    def __exit__(self, *exc: object) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        self._libc.sigaction(signal.SIGPROF, ctypes.byref(self._old), None)
        n = int(self._count[0])
        self.ips = self._buf[:n].copy()
        self.full = n >= len(self._buf)


_MANGLED = re.compile(r"_ZN(\d.*)")


def demangle(symbol: str) -> str:
    """numba's mangled name → its qualified name (``_ZN9gym_crawl5crawl7kernels10fetch_pageB...`` →
    ``gym_crawl.crawl.kernels.fetch_page``); a prefix such as ``cpython.`` or ``cfunc.`` is kept; a name that is not
    mangled is returned as it is."""
    prefix, _, rest = symbol.rpartition("_ZN") if "_ZN" in symbol else ("", "", "")
    m = _MANGLED.match("_ZN" + rest) if rest else None
    if not m:
        return symbol
    s, parts, k = m.group(1), [], 0
    while k < len(s) and s[k].isdigit():
        j = k
        while j < len(s) and s[j].isdigit():
            j += 1
        n = int(s[k:j])
        parts.append(s[j:j + n])
        k = j + n
    return prefix + ".".join(parts) if parts else symbol


def _jit_symbols() -> tuple[list[int], list[str]]:
    """Start addresses (sorted) and names of every symbol numba's JIT engine defines. numba has no public listing:
    this reads its engine's set of defined names, checked to be there (a ``RuntimeError`` naming the numba version
    when it is not)."""
    import numba
    from numba.core.registry import cpu_target

    engine = getattr(cpu_target.target_context.codegen(), "_engine", None)
    names = getattr(engine, "_defined_symbols", None)
    if engine is None or not isinstance(names, set) or not hasattr(engine, "get_function_address"):
        raise RuntimeError(f"numba {numba.__version__}'s JIT engine does not list its symbols as this profiler expects "
                           f"(it was written against numba 0.6x)")
    pairs = []
    for name in list(names):
        addr = engine.get_function_address(name)
        if addr:
            pairs.append((int(addr), name))
    pairs.sort()
    return [a for a, _ in pairs], [n for _, n in pairs]


def _exec_maps() -> list[tuple[int, int, str]]:
    """The process' executable mappings: (start, end, path or "" for anonymous memory)."""
    out = []
    with open("/proc/self/maps", encoding="utf-8") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            if len(parts) >= 2 and "x" in parts[1]:
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                out.append((lo, hi, parts[5].strip() if len(parts) == 6 else ""))
    return out


def _group(path: str) -> str:
    base = os.path.basename(path)
    if "libpython" in base or base.startswith("python"):
        return "python"
    if "/numpy" in path:
        return "numpy"
    if "/numba/" in path or "/llvmlite/" in path:
        return "numba runtime"
    if base.startswith(("libc.", "libc-", "libm.", "libm-", "ld-linux", "linux-vdso")) or path == "[vdso]":
        return "libc"
    return "other"


def symbolize(ips: np.ndarray) -> Counter[tuple[str, str]]:
    """Count samples by (group, function name): numba's compiled code by the symbol at or below the address
    (group ``compiled``), shared libraries by file and ``dladdr``'s symbol. Call in the process that was sampled,
    after the run (the addresses are that process')."""
    starts, names = _jit_symbols()
    maps = _exec_maps()
    map_lo = [m[0] for m in maps]
    libc = ctypes.CDLL(None)
    cache: dict[int, tuple[str, str]] = {}
    out: Counter[tuple[str, str]] = Counter()
    for ip in (int(x) for x in ips):
        if ip in cache:
            out[cache[ip]] += 1
            continue
        k = bisect.bisect_right(map_lo, ip) - 1
        region = maps[k] if k >= 0 and ip < maps[k][1] else None
        if region is None:
            key = ("other", "[unmapped]")
        elif region[2] == "" or region[2].startswith("[anon"):
            j = bisect.bisect_right(starts, ip) - 1
            key = ("compiled", demangle(names[j])) if j >= 0 and starts[j] >= region[0] else \
                ("compiled", "[unnamed jit code]")
        else:
            info = _DlInfo()
            path = region[2]
            ok = libc.dladdr(ctypes.c_void_p(ip), ctypes.byref(info))
            fname = info.dli_fname.decode(errors="replace") if ok and info.dli_fname else path
            sname = info.dli_sname.decode(errors="replace") if ok and info.dli_sname else ""
            key = (_group(fname), f"{os.path.basename(fname)}:{sname}" if sname else os.path.basename(fname))
        cache[ip] = key
        out[key] += 1
    return out


def make_runner(n_envs: int, seed: int = 0, **env_kwargs: Any) -> Callable[[int], int]:
    """The default task as ``paired_step``'s ``task:N`` runs it: ``run(calls)`` takes ``calls`` vector steps (env
    steps for one env) with a random valid slot per crawl and returns the env-steps taken. ``env_kwargs``
    (``corpus=``, ``topic=``) go to the env."""
    import gymnasium as gym

    import gym_crawl

    rng = np.random.default_rng(seed)
    if n_envs == 1:
        env = gym.make(gym_crawl.DEFAULT_ENV_ID, **env_kwargs)
        state = list(env.reset(seed=seed))

        def run_one(calls: int) -> int:
            for _ in range(calls):
                valid = np.flatnonzero(state[1]["action_mask"])
                obs, _r, term, trunc, info = env.step(int(valid[rng.integers(len(valid))]))
                state[:] = env.reset() if term or trunc else (obs, info)
            return calls
        return run_one
    venv = gym.make_vec(gym_crawl.DEFAULT_ENV_ID, num_envs=n_envs, vectorization_mode="vector_entry_point",
                        **env_kwargs)
    obs_box = [venv.reset(seed=seed)[0]]

    def run_vec(calls: int) -> int:
        for _ in range(calls):
            obs_box[0] = venv.step((rng.random(n_envs) * obs_box[0]["mask"].sum(1)).astype(np.int64))[0]
        return calls * n_envs
    return run_vec


def profile(n_envs: int, steps: int, warmup: int, interval_s: float, **env_kwargs: Any) -> dict[str, Any]:
    """Warm up, then sample ``steps`` env-steps of the default task (on ``env_kwargs``' corpus and topic, if given)
    with ``n_envs`` crawls; the shares of the samples per function and per group, sorted by share."""
    run = make_runner(n_envs, **env_kwargs)
    per_call = n_envs
    run(max(1, warmup // per_call))
    sampler = Sampler(interval_s)
    calls = max(1, steps // per_call)
    t0 = time.process_time()
    with sampler:
        done = run(calls)
    cpu = time.process_time() - t0
    counts = symbolize(sampler.ips)
    total = sum(counts.values())
    if total == 0:
        raise RuntimeError(f"no samples in {cpu:.3f} CPU-s of steps; raise --steps or lower --interval-ms")
    groups: Counter[str] = Counter()
    for (g, _), c in counts.items():
        groups[g] += c
    return {"envs": n_envs, "env_steps": done, "cpu_s": cpu, "steps_per_cpu_s": done / cpu,
            "samples": total, "seen_interval_ms": 1000.0 * cpu / total, "buffer_full": sampler.full,
            "functions": [{"name": n, "group": g, "samples": c, "share": c / total}
                          for (g, n), c in counts.most_common()],
            "groups": {g: c / total for g, c in groups.most_common()}}


def _markdown(out: dict[str, Any], top: int) -> str:
    web = f" on `{out['corpus']}` (topic {out.get('topic') or 'its default'})" if out.get("corpus") else ""
    lines = [f"# step_profile — the default task{web}, {out['envs']} crawl(s)", "",
             f"{out['env_steps']:,} env-steps sampled in {out['cpu_s']:.2f} CPU-s ({out['steps_per_cpu_s']:,.0f} per "
             f"CPU-second while sampled), {out['samples']:,} samples (one per {out['seen_interval_ms']:.1f} ms of CPU "
             f"time); "
             f"load average at the start {out['load_average']}.", "",
             "| group | share |", "|---|---:|"]
    lines += [f"| {g} | {s:.1%} |" for g, s in out["groups"].items()]
    lines += ["", "| function | group | share |", "|---|---|---:|"]
    lines += [f"| `{f['name']}` | {f['group']} | {f['share']:.1%} |" for f in out["functions"][:top]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="gym-crawl bench step_profile", description=__doc__.split("\n\n")[0])
    ap.add_argument("--envs", type=int, default=64, help="crawls of the batched env (default 64; 1: gym.make)")
    ap.add_argument("--steps", type=int, default=None, help="sampled env-steps (default 600000; --quick 2000)")
    ap.add_argument("--warmup", type=int, default=None, help="env-steps before sampling (default 5000; --quick 500)")
    ap.add_argument("--interval-ms", type=float, default=2.0, help="CPU milliseconds between samples (default 2)")
    ap.add_argument("--top", type=int, default=30, help="functions listed in the markdown report (default 30)")
    ap.add_argument("--quick", action="store_true", help="a short run (checks that it runs)")
    ap.add_argument("--corpus", default=None, help="another web than the default task's (e.g. powerlaw-10000000)")
    ap.add_argument("--topic", default=None, help="with --corpus: the topic crawled (default the web's own)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    steps = args.steps if args.steps is not None else (2000 if args.quick else 600_000)
    warmup = args.warmup if args.warmup is not None else (500 if args.quick else 5000)
    if args.envs < 1 or steps < 1 or warmup < 0 or not args.interval_ms > 0 or args.top < 1:
        ap.error(f"--envs, --steps and --top must be >= 1, --warmup >= 0 and --interval-ms > 0; got {args.envs}, "
                 f"{steps}, {args.top}, {warmup}, {args.interval_ms}")
    if args.topic is not None and args.corpus is None:
        ap.error("--topic needs --corpus")
    if sys.platform != "linux" or platform.machine() != "x86_64":
        ap.error(f"the sampler needs Linux on x86-64 (this is {sys.platform} {platform.machine()})")
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    kw = {k: v for k, v in (("corpus", args.corpus), ("topic", args.topic)) if v is not None}
    out = {"interval_ms": args.interval_ms, "warmup": warmup, "load_average": load, **kw,
           **profile(args.envs, steps, warmup, args.interval_ms / 1000.0, **kw)}
    md = _markdown(out, args.top)
    write_reports(args.out, "step_profile", out, md, args, args.quick)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
