"""Where the batched env's step spends its cycles, instruction by instruction: a sampling profile of the compiled
step down to the machine instruction and the source line it came from.

``gym-crawl bench step_cycles [--envs 64] [--steps 400000] [--warmup 30000] [--interval-ms 2] [--functions 12]
[--instructions 12] [--no-lines] [--quick] [--corpus SPEC [--topic NAME]] [--out DIR]``

``gym-crawl bench step_profile`` names the compiled function each sample fell in. This goes one level down, for a
VM without hardware counters (where ``perf stat`` has no cycle or cache event): the same sampler (``SIGPROF`` every
``--interval-ms`` of CPU time, the interrupted instruction pointer recorded by a handler compiled with llvmlite) runs
the default task batched (``task:N`` of ``bench paired_step``) in a child process whose numba cache is a fresh
temporary directory, so every kernel is compiled in that process and numba keeps each library's object code. After
the run:

* each library's object code is placed in memory (its own entry point, found through numba's JIT engine, against
  the same symbol in the object; the placement is checked by comparing the object's code bytes with memory, the
  relocated bytes aside), so every function of every object — a callee numba linked into its caller's library
  included — has its address range, and each sample its function and offset;
* each hot function is disassembled from its object with ``objdump -d -l`` (GNU binutils), and each instruction
  given the source line of numba's line table: the kernels are compiled with debug line information but otherwise
  as numba compiles them by default (numba's debug mode would also turn off inlining, keep every variable alive and
  check bounds: the tool undoes those three, so the code measured is the default's; ``--no-lines`` compiles without
  line tables). The report gives the function's code size beside ``step_profile``'s for a check.

A sample is the instruction the interrupt found next to execute. A timer interrupt is taken when the instruction
holding up retirement — a load that missed, or one waiting on a missed load's value — finally retires, so samples pile
up on the instruction **after** the one that stalled, not spread over every instruction executed: read each hot
instruction with the ones before it (the report lists four). Writes ``step_cycles.json`` (per
function: its samples by source line and by instruction, with the disassembly of the hot instructions in context)
and ``step_cycles.md`` to ``--out`` (default ``benchmarks/results/step_cycles``). Linux on x86-64 with ``objdump``.
"""
from __future__ import annotations

import argparse
import bisect
import ctypes
import linecache
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl.benchmarks.report import write_reports

__all__ = ["disassemble", "line_tables", "main", "place_objects"]

DEFAULT_OUT = Path("benchmarks") / "results" / "step_cycles"

_CHILD_FLAG = "--_child"


def line_tables() -> None:
    """Compile every kernel from now on with numba's debug line tables but the default's code: numba's debug mode
    also marks every function ``noinline``, keeps every variable alive to its scope's end and checks bounds, which
    change the code measured; those three are undone here. Call before the first kernel is compiled."""
    from numba.core import cpu, lowering

    finalize = cpu.CPUTargetOptions.finalize

    def finalize_with_lines(self: Any, flags: Any, options: Any) -> None:
        flags.debuginfo = True
        flags.dbg_extend_lifetimes = False
        flags.boundscheck = False
        finalize(self, flags, options)

    pre_lower = lowering.BaseLower.pre_lower

    def pre_lower_inlinable(self: Any) -> None:
        pre_lower(self)
        self.builder.function.attributes.discard("noinline")

    cpu.CPUTargetOptions.finalize = finalize_with_lines  # type: ignore[method-assign]
    lowering.BaseLower.pre_lower = pre_lower_inlinable  # type: ignore[method-assign]
    lowering.Lower._disable_sroa_like_opt = lambda self: False  # type: ignore[method-assign]


def _libraries() -> list[tuple[str, Any]]:
    """Every compiled overload of the package's kernels: (its own mangled name, its code library)."""
    from numba.core.registry import CPUDispatcher

    out, seen = [], set()
    for name, mod in list(sys.modules.items()):
        if not name.startswith("gym_crawl") or mod is None:
            continue
        for v in list(vars(mod).values()):
            if isinstance(v, CPUDispatcher):
                for cres in v.overloads.values():
                    if id(cres.library) not in seen:
                        seen.add(id(cres.library))
                        out.append((cres.fndesc.mangled_name, cres.library))
    return out


def _objdump(*args: str) -> str:
    return subprocess.run(["objdump", *args], check=True, capture_output=True, text=True).stdout


_SYM = re.compile(r"^([0-9a-f]+)\s+(\S.*?)\s+(\S+)\s+([0-9a-f]+)\s+(\S+)$")


def _object_symbols(path: str) -> dict[str, tuple[str, int, int]]:
    """The function symbols of an object file: name -> (section, value, size)."""
    out = {}
    for line in _objdump("-t", path).splitlines():
        m = _SYM.match(line)
        if m and " F " in f" {m.group(2)} ":
            out[m.group(5)] = (m.group(3), int(m.group(1), 16), int(m.group(4), 16))
    return out


def _relocated(path: str, section: str) -> set[int]:
    """Offsets within ``section`` of bytes that relocations rewrite (8 bytes from each relocation's offset)."""
    out: set[int] = set()
    for line in _objdump("-r", "-j", section, path).splitlines():
        parts = line.split()
        if len(parts) >= 2 and re.fullmatch(r"[0-9a-f]{8,16}", parts[0]) and parts[1].startswith("R_X86_64"):
            off = int(parts[0], 16)
            width = 8 if parts[1] in ("R_X86_64_64", "R_X86_64_PC64", "R_X86_64_GOTOFF64") else 4
            out.update(range(off, off + width))
    return out


def place_objects(workdir: Path) -> tuple[list[tuple[int, int, str, str, int]], list[dict[str, Any]]]:
    """Every function of every compiled library's object code, placed in this process' memory: a sorted list of
    (start, end, name, object path, value in the object) and one record per object (placed or not, and why).

    An object's code section is placed through its own entry point (the address numba's JIT engine gives its
    ``cpython`` wrapper, defined in that library alone) and checked byte for byte against memory, the relocated
    bytes aside."""
    from numba.core.registry import cpu_target

    engine = getattr(cpu_target.target_context.codegen(), "_engine", None)  # numba's JIT engine (no public handle)
    if engine is None or not hasattr(engine, "get_function_address"):
        raise RuntimeError("numba's JIT engine does not give function addresses as this tool expects (numba 0.6x)")
    ranges: list[tuple[int, int, str, str, int]] = []
    records = []
    for k, (own, lib) in enumerate(_libraries()):
        obj = getattr(lib, "_compiled_object", None)
        rec: dict[str, Any] = {"function": own, "placed": False}
        records.append(rec)
        if not obj:
            rec["why"] = "no object code (loaded from a cache)"
            continue
        path = str(workdir / f"lib{k}.o")
        Path(path).write_bytes(obj)
        syms = _object_symbols(path)
        anchor = next((n for n in (f"cpython.{own}", own) if n in syms), None)
        addr = engine.get_function_address(anchor) if anchor else 0
        if not addr:
            rec["why"] = "its entry point is not in the JIT engine"
            continue
        section, value, _ = syms[anchor]  # type: ignore[index]
        base = int(addr) - value
        code = _section_bytes(path, section)
        reloc = _relocated(path, section)
        mem = ctypes.string_at(base, len(code))
        diff = sum(1 for i, (x, y) in enumerate(zip(code, mem)) if x != y and i not in reloc)
        rec.update(path=path, section=section, base=base, size=len(code), mismatched_bytes=diff)
        if diff > len(code) // 1000:
            rec["why"] = f"{diff} of {len(code)} code bytes differ from memory at the placed address"
            continue
        rec["placed"] = True
        for name, (sec, v, size) in syms.items():
            if sec == section and size > 0:
                ranges.append((base + v, base + v + size, name, path, v))
    ranges.sort()
    return ranges, records


def _section_bytes(path: str, section: str) -> bytes:
    """The raw bytes of ``section`` of an ELF object (``objdump -h`` for its size and file offset)."""
    for line in _objdump("-h", path).splitlines():
        parts = line.split()
        if len(parts) >= 7 and parts[1] == section:
            size, off = int(parts[2], 16), int(parts[5], 16)
            with open(path, "rb") as f:
                f.seek(off)
                return f.read(size)
    raise ValueError(f"{path} has no section {section}")


_INSN = re.compile(r"^\s*([0-9a-f]+):\s+(.*)$")
_LINE = re.compile(r"^(/\S+\.py):(\d+)(?: \(discriminator \d+\))?$")


def disassemble(path: str, section: str, start: int, stop: int) -> list[tuple[int, str, str]]:
    """The instructions of ``path``'s ``section`` from ``start`` to ``stop`` (object offsets): (offset, text,
    ``file:line`` of the line table or ""), AT&T syntax."""
    out = []
    loc = ""
    text = _objdump("-d", "-l", "--no-show-raw-insn", "-j", section, f"--start-address={start}",
                    f"--stop-address={stop}", path)
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if m:
            loc = f"{m.group(1)}:{m.group(2)}"
            continue
        m = _INSN.match(line)
        if m and not line.rstrip().endswith(">:"):
            asm = re.sub(r" <[^>]*>", "", m.group(2))  # a jump's target named by symbol + offset: the offset is enough
            out.append((int(m.group(1), 16), " ".join(asm.split()), loc))
    return out


def _short(path_line: str) -> str:
    """``/abs/.../gym_crawl/crawl/kernels.py:123`` -> ``crawl/kernels.py:123`` (relative to the package)."""
    if not path_line:
        return "?"
    p, _, line = path_line.rpartition(":")
    parts = Path(p).parts
    rel = "/".join(parts[parts.index("gym_crawl") + 1:]) if "gym_crawl" in parts else Path(p).name
    return f"{rel}:{line}"


def _source(path_line: str) -> str:
    p, _, line = path_line.rpartition(":")
    return linecache.getline(p, int(line)).strip() if p and line.isdigit() else ""


def _analyse(ips: np.ndarray, ranges: list[tuple[int, int, str, str, int]], n_functions: int,
             n_instructions: int) -> dict[str, Any]:
    from gym_crawl.benchmarks.step_profile import demangle, symbolize

    starts = [r[0] for r in ranges]
    by_fn: dict[tuple[int, int, str, str, int], Counter[int]] = defaultdict(Counter)
    rest = []
    for ip in (int(x) for x in ips):
        j = bisect.bisect_right(starts, ip) - 1
        if j >= 0 and ip < ranges[j][1]:
            by_fn[ranges[j]][ip - ranges[j][0]] += 1
        else:
            rest.append(ip)
    total = len(ips)
    others = symbolize(np.asarray(rest, np.uint64)) if rest else Counter()
    functions = []
    for r, offs in sorted(by_fn.items(), key=lambda kv: -sum(kv[1].values())):
        start, end, name, path, value = r
        n = sum(offs.values())
        fn: dict[str, Any] = {"name": demangle(name), "samples": n, "share": n / total, "code_bytes": end - start}
        functions.append(fn)
        if len(functions) > n_functions:
            continue
        section = next(rec for rec in _placed if rec["path"] == path)["section"]
        insns = disassemble(path, section, value, value + (end - start))
        at = {off - value: k for k, (off, _, _) in enumerate(insns)}
        lines: Counter[str] = Counter()
        hot = []
        for off, c in offs.items():
            k = at.get(off)
            loc = insns[k][2] if k is not None else ""
            lines[loc] += c
            hot.append((c, off, k))
        fn["lines"] = [{"line": _short(loc), "samples": c, "share": c / total, "source": _source(loc)}
                       for loc, c in lines.most_common()]
        fn["instructions"] = []
        for c, off, k in sorted(hot, reverse=True)[:n_instructions]:
            ctx = [] if k is None else [
                {"offset": insns[q][0] - value, "asm": insns[q][1], "line": _short(insns[q][2]),
                 "samples": offs.get(insns[q][0] - value, 0)} for q in range(max(0, k - 4), k + 1)]
            fn["instructions"].append({"offset": off, "samples": c, "share": c / total,
                                       "asm": insns[k][1] if k is not None else "?",
                                       "line": _short(insns[k][2]) if k is not None else "?",
                                       "source": _source(insns[k][2]) if k is not None else "",
                                       "context": ctx})
    for (g, name), c in others.most_common():
        functions.append({"name": name, "group": g, "samples": c, "share": c / total})
    functions.sort(key=lambda f: -f["samples"])
    return {"samples": total, "functions": functions}


_placed: list[dict[str, Any]] = []


def _child(args: argparse.Namespace) -> dict[str, Any]:
    if not args.no_lines:
        line_tables()
    from gym_crawl.benchmarks.step_profile import Sampler, make_runner

    kw = {k: v for k, v in (("corpus", args.corpus), ("topic", args.topic)) if v is not None}
    run = make_runner(args.envs, **kw)
    t0 = time.process_time()
    run(max(1, args.warmup // args.envs))
    warm = time.process_time() - t0
    sampler = Sampler(args.interval_ms / 1000.0)
    calls = max(1, args.steps // args.envs)
    t0 = time.process_time()
    with sampler:
        done = run(calls)
    cpu = time.process_time() - t0
    with tempfile.TemporaryDirectory(prefix="step_cycles_obj_") as tmp:
        ranges, records = place_objects(Path(tmp))
        _placed[:] = [r for r in records if r["placed"]]
        result = _analyse(sampler.ips, ranges, args.functions, args.instructions)
    for r in records:
        r.pop("path", None)
        r.pop("base", None)
    return {"envs": args.envs, "env_steps": done, "cpu_s": cpu, "steps_per_cpu_s": done / cpu,
            "warmup_cpu_s": warm, "line_tables": not args.no_lines, "buffer_full": sampler.full,
            "seen_interval_ms": 1000.0 * cpu / max(1, len(sampler.ips)),
            "objects_placed": sum(r["placed"] for r in records), "objects": len(records),
            "objects_not_placed": [r for r in records if not r["placed"]], **result}


def _markdown(out: dict[str, Any], n_functions: int) -> str:
    web = f" on `{out['corpus']}` (topic {out.get('topic') or 'its default'})" if out.get("corpus") else ""
    lines = [f"# step_cycles — the default task{web}, {out['envs']} crawl(s)", "",
             f"{out['env_steps']:,} env-steps sampled in {out['cpu_s']:.2f} CPU-s ({out['steps_per_cpu_s']:,.0f} per "
             f"CPU-second while sampled), {out['samples']:,} samples (one per {out['seen_interval_ms']:.1f} ms of CPU "
             f"time); load average at the start {out['load_average']}; line tables "
             f"{'on' if out['line_tables'] else 'off'}; {out['objects_placed']} of {out['objects']} objects placed.",
             "", "| function | code bytes | share |", "|---|---:|---:|"]
    lines += [f"| `{f['name']}` | {f.get('code_bytes', '')} | {f['share']:.1%} |" for f in out["functions"][:30]]
    for f in out["functions"][:n_functions]:
        if "lines" not in f:
            continue
        lines += ["", f"## `{f['name']}` — {f['share']:.1%}", "", "| line | share | source |", "|---|---:|---|"]
        lines += [f"| {x['line']} | {x['share']:.1%} | `{x['source'][:90]}` |" for x in f["lines"][:15]]
        lines += ["", "Hottest instructions (offset, samples, the four before it):", "", "```"]
        for ins in f["instructions"]:
            lines.append(f"+{ins['offset']:#x} {ins['share']:.1%} {ins['line']}  {ins['source'][:80]}")
            lines += [f"    {c['offset']:#7x} {c['samples']:4d}  {c['asm']:<48} {c['line']}" for c in ins["context"]]
        lines.append("```")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    child = _CHILD_FLAG in argv
    if child:
        argv.remove(_CHILD_FLAG)
    ap = argparse.ArgumentParser(prog="gym-crawl bench step_cycles", description=__doc__.split("\n\n")[0])
    ap.add_argument("--envs", type=int, default=64, help="crawls of the batched env (default 64; 1: gym.make)")
    ap.add_argument("--steps", type=int, default=None, help="sampled env-steps (default 400000; --quick 2000)")
    ap.add_argument("--warmup", type=int, default=None,
                    help="env-steps before sampling (default 30000: past the first autoresets, so nothing compiles "
                         "while sampled; --quick 500)")
    ap.add_argument("--interval-ms", type=float, default=2.0, help="CPU milliseconds between samples (default 2)")
    ap.add_argument("--functions", type=int, default=12, help="functions disassembled (default 12)")
    ap.add_argument("--instructions", type=int, default=12, help="hottest instructions listed a function (default 12)")
    ap.add_argument("--no-lines", action="store_true", help="compile without line tables")
    ap.add_argument("--quick", action="store_true", help="a short run (checks that it runs)")
    ap.add_argument("--corpus", default=None, help="another web than the default task's (e.g. powerlaw-10000000)")
    ap.add_argument("--topic", default=None, help="with --corpus: the topic crawled (default the web's own)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    args.steps = args.steps if args.steps is not None else (2000 if args.quick else 400_000)
    args.warmup = args.warmup if args.warmup is not None else (500 if args.quick else 30_000)
    if args.envs < 1 or args.steps < 1 or args.warmup < 0 or not args.interval_ms > 0 or args.functions < 1 \
            or args.instructions < 1:
        ap.error(f"--envs, --steps, --functions and --instructions must be >= 1, --warmup >= 0 and --interval-ms > 0; "
                 f"got {args.envs}, {args.steps}, {args.functions}, {args.instructions}, {args.warmup}, "
                 f"{args.interval_ms}")
    if args.topic is not None and args.corpus is None:
        ap.error("--topic needs --corpus")
    if sys.platform != "linux" or platform.machine() != "x86_64":
        ap.error(f"the sampler needs Linux on x86-64 (this is {sys.platform} {platform.machine()})")
    if shutil.which("objdump") is None:
        ap.error("objdump (GNU binutils) is not on PATH; it disassembles the compiled code")
    if not child:
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        with tempfile.TemporaryDirectory(prefix="step_cycles_cache_") as cache:
            env = {**os.environ, "NUMBA_CACHE_DIR": cache, "STEP_CYCLES_LOAD": load}
            return subprocess.run([sys.executable, "-m", "gym_crawl.benchmarks.step_cycles", *argv, _CHILD_FLAG],
                                  env=env, check=False).returncode
    kw = {k: v for k, v in (("corpus", args.corpus), ("topic", args.topic)) if v is not None}
    out = {"interval_ms": args.interval_ms, "warmup": args.warmup,
           "load_average": os.environ.get("STEP_CYCLES_LOAD", ""), **kw, **_child(args)}
    write_reports(args.out, "step_cycles", out, _markdown(out, args.functions), args, args.quick)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
