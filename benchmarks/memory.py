"""Memory of the crawl env on a Simple-English-Wikipedia-sized web: one env's RSS, and what each extra worker adds.

``gym-crawl bench memory [--quick] [--pages N] [--steps S] [--workers 1,2,4] [--out DIR]``

The synthetic generator stands in for the Simple English dump (thesis Table 4.1: 323,198 pages, ~5M links;
``gym-crawl bench scale`` uses the same corpus). The corpus and its text model are built once (cached on disk)
in their own process; every measurement then runs in fresh processes that **memory-map** the corpus. Opening
it reads no page of it (validation uses the id ranges the manifest recorded at save), so a process's resident
share of the corpus is the pages its crawl has read (shared and evictable page cache):

* **one env**: a process builds ``gym.make("WikiCrawl-v1", corpus=synthetic-N, topic="geology")``, resets
  and takes ``--steps`` random valid steps; its RSS (and USS = private memory, PSS) after load, after
  ``reset`` and after the crawl, and the peak RSS. Budget: ≤ 1 GB RSS;
* **vector env**: the batched ``WikiCrawlVectorEnv`` with N = 1 and each worker count in one process (the N
  crawls share corpus, text model and per-topic score tables; each adds its crawl state): the USS each
  extra env adds;
* **workers**: ``gymnasium.vector.AsyncVectorEnv`` with W subprocess workers (each builds its own env and
  memory-maps the same corpus files, so the corpus' pages are shared through the OS page cache), ``--steps``
  vector steps; per worker its USS (what that worker alone costs: its score tables, crawl state, Python
  and numba runtime) and PSS. Two modes: **default** (the parent only builds Gymnasium's space-probing env
  before the workers start) and **shared** (the parent builds an env, steps it once and calls
  ``precompute_scores()``, then starts the workers with ``context="fork"``: the corpus object, text model,
  compiled kernels and the topic's complete score tables are inherited copy-on-write and never written,
  so a worker's private memory is its own crawl state), and **cached** (``TopicScorer.save_tables`` stores
  the topic's complete score tables on disk first; ``context="spawn"`` workers inherit nothing and each
  memory-maps the corpus and those tables read-only, shared through the page cache). Budget: ≤ 100 MB per
  extra worker, read as each worker's USS in the shared and cached modes (the documented ways to run many
  workers on one machine). A table cache the bench finds is set aside for the default and shared runs and
  restored; one it made is removed.

What each figure counts (``/proc/<pid>/smaps_rollup``, Linux): **RSS**, every resident page the process maps,
shared or not; **PSS**, each of those pages divided by the number of processes mapping it (the PSS of all processes
adds up to the memory in use); **USS** (``Private_Clean + Private_Dirty``), the pages no other process maps: the
memory one more worker adds, and the budget's figure. USS counts the
worker's anonymous memory (heap, arrays, Python objects, numba's code) and also the pages of memory-mapped files
(corpus, stored score tables) that this worker alone has mapped so far: page cache, which the kernel can drop,
and which turn shared as soon as another process maps them. **anon** is the anonymous part alone. For each
worker the report also splits USS, anon and PSS by mapping (:func:`smaps_breakdown`: malloc's heap, other
anonymous memory, stored score tables, corpus files, shared libraries).

Figures come from ``/proc/<pid>/status``, ``/proc/<pid>/smaps_rollup`` and ``/proc/<pid>/smaps``. Writes
``memory.json``, ``memory.md`` and ``memory.png`` to ``--out`` (default ``benchmarks/results/memory``).
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_OUT = Path("benchmarks") / "results" / "memory"  # under the current folder
RSS_BUDGET_MB = 1024.0
WORKER_BUDGET_MB = 100.0


def proc_memory(pid: int | str = "self") -> dict[str, float]:
    """RSS, USS (private clean + dirty), PSS and anonymous memory of a process in MB (Linux ``/proc``)."""
    out = {"rss_mb": 0.0, "uss_mb": 0.0, "pss_mb": 0.0, "anon_mb": 0.0}
    kb: dict[str, int] = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
                kb[parts[0][:-1]] = int(parts[1])
    out["rss_mb"] = kb.get("Rss", 0) / 1024.0
    out["pss_mb"] = kb.get("Pss", 0) / 1024.0
    out["uss_mb"] = (kb.get("Private_Clean", 0) + kb.get("Private_Dirty", 0)) / 1024.0
    # anonymous memory (heap, arrays, copy-on-write copies): what the process holds that is no file's page
    # cache. USS also counts memory-mapped file pages that only this process has touched so far (corpus,
    # stored score tables): page cache the OS can evict and any other process would share
    out["anon_mb"] = kb.get("Anonymous", 0) / 1024.0
    return {k: round(v, 1) for k, v in out.items()}


#: the parts :func:`smaps_breakdown` sorts a process' mappings into, in report order
MAPPING_PARTS = ("heap", "anon", "score_tables", "corpus", "libraries", "other_files")


def _mapping_part(name: str) -> str:
    """The part of a process a ``/proc/PID/smaps`` mapping belongs to, from its path (``""``: anonymous)."""
    if name == "[heap]":
        return "heap"  # the brk heap: malloc's small blocks (Python objects above 512 bytes, LLVM's allocations)
    if not name or name.startswith("["):
        return "anon"  # anonymous mmap: Python's object arenas, numpy buffers, malloc's large blocks, JIT code
    if "/score_tables/" in name:
        return "score_tables"  # a topic's stored score tables (TopicScorer.save_tables), memory-mapped
    if name.endswith(".npy"):
        return "corpus"  # the corpus' (and text model's) memory-mapped columns
    if ".so" in name.rsplit("/", 1)[-1]:
        return "libraries"  # shared libraries: libpython, numpy, libllvmlite (their relocated pages are private)
    return "other_files"


def smaps_breakdown(pid: int | str = "self") -> dict[str, dict[str, float]]:
    """Where a process' memory is, per part of :data:`MAPPING_PARTS`: RSS, PSS, USS and anonymous MB, summed over
    its mappings in ``/proc/<pid>/smaps`` (Linux). The parts add up to :func:`proc_memory`'s totals (up to
    rounding): the USS of ``score_tables`` and ``corpus`` is their file pages no other process has mapped."""
    kb: dict[str, dict[str, int]] = {part: {"Rss": 0, "Pss": 0, "Private": 0, "Anonymous": 0}
                                     for part in MAPPING_PARTS}
    part = "anon"
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head, _, rest = line.partition(" ")
            if "-" in head and not head.endswith(":"):  # a mapping's header: range perms offset dev inode [path]
                fields = rest.split(None, 4)
                part = _mapping_part(fields[4].strip() if len(fields) > 4 else "")
                continue
            key = head[:-1]
            if key in ("Rss", "Pss", "Anonymous"):
                kb[part][key] += int(rest.split()[0])
            elif key in ("Private_Clean", "Private_Dirty"):
                kb[part]["Private"] += int(rest.split()[0])
    return {part: {"rss_mb": round(v["Rss"] / 1024.0, 1), "pss_mb": round(v["Pss"] / 1024.0, 1),
                   "uss_mb": round(v["Private"] / 1024.0, 1), "anon_mb": round(v["Anonymous"] / 1024.0, 1)}
            for part, v in kb.items()}


def peak_rss_mb(pid: int | str = "self") -> float:
    """Peak resident set (``VmHWM``) of a process in MB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024.0, 1)
    return 0.0


#: the single-env measurement, run as ``python -c ONE_ENV pages steps``
ONE_ENV = r"""
import json, sys, time
import numpy as np
from gym_crawl.benchmarks.memory import peak_rss_mb, proc_memory
n, steps = int(sys.argv[1]), int(sys.argv[2])
out = {"pages": n, "base": proc_memory()}
import gymnasium as gym, gym_crawl
from gym_crawl.webgen.synthetic import synthetic_corpus
from gym_crawl.wrappers.factory import make_env
out["after_import"] = proc_memory()
t = time.perf_counter()
c = synthetic_corpus(n)
out["links"] = int(c.n_links)
out["after_corpus_load"] = proc_memory()
env = make_env("WikiCrawl-v1", corpus=c, topic="geology", max_episode_steps=steps + 1)
out["after_make"] = proc_memory()
_, info = env.reset(seed=0)
out["after_reset"] = proc_memory()
rng = np.random.default_rng(0)
for _ in range(steps):
    v = np.flatnonzero(info["action_mask"])
    _, _, te, tr, info = env.step(int(v[rng.integers(len(v))]))
    if te or tr:
        _, info = env.reset()
out["after_crawl"] = proc_memory()
out["crawl_seconds"] = round(time.perf_counter() - t, 2)
out["peak_rss_mb"] = peak_rss_mb()
print(json.dumps(out))
"""

#: the worker measurement, run as ``python -c WORKERS pages steps n_workers mode`` (mode: default | shared | cached)
WORKERS = r"""
import json, sys, time
import numpy as np
from gym_crawl.benchmarks.memory import proc_memory, make_env_fn, smaps_breakdown
n, steps, w, mode = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
import gymnasium as gym
kw = {}
if mode == "shared":
    warm = make_env_fn(n, steps + 1)()
    _, info = warm.reset(seed=0)
    warm.step(int(np.flatnonzero(info["action_mask"])[0]))  # compiled kernels loaded before the fork
    warm.unwrapped.view.precompute_scores()                          # the topic's complete score tables
    kw["context"] = "fork"
elif mode == "cached":
    kw["context"] = "spawn"  # nothing inherited: each worker maps the corpus and the stored score tables itself
v = gym.vector.AsyncVectorEnv([make_env_fn(n, steps + 1) for _ in range(w)], **kw)
_, info = v.reset(seed=0)
rng = np.random.default_rng(0)
t = time.perf_counter()
for _ in range(steps):
    m = info["action_mask"]
    a = np.array([int(np.flatnonzero(r)[rng.integers(r.sum())]) for r in m])
    _, _, _, _, info = v.step(a)
out = {"pages": n, "workers": w, "mode": mode, "steps": steps, "seconds": round(time.perf_counter() - t, 2),
       "main": proc_memory(), "per_worker": [proc_memory(p.pid) for p in v.processes],
       "per_worker_parts": [smaps_breakdown(p.pid) for p in v.processes]}
v.close()
print(json.dumps(out))
"""


#: the batched vector env in one process, run as ``python -c VECTOR pages steps n_envs``
VECTOR = r"""
import json, sys, time
import numpy as np
from gym_crawl.benchmarks.memory import peak_rss_mb, proc_memory
n, steps, w = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
from gym_crawl.webgen.synthetic import synthetic_corpus
from gym_crawl.wrappers.factory import make_vec_env
c = synthetic_corpus(n)
v = make_vec_env("WikiCrawl-v1", num_envs=w, vectorization_mode="vector_entry_point", corpus=c, topic="geology",
                 max_episode_steps=steps + 1)
obs, _ = v.reset(seed=0)
rng = np.random.default_rng(0)
t = time.perf_counter()
for _ in range(steps):
    obs, *_ = v.step((rng.random(w) * obs["mask"].sum(1)).astype(np.int64))
print(json.dumps({"pages": n, "envs": w, "steps": steps, "seconds": round(time.perf_counter() - t, 2),
                  "memory": proc_memory(), "peak_rss_mb": peak_rss_mb()}))
"""


#: the topic's score-table cache, run as ``python -c TABLES pages action`` (action: path | save | remove)
TABLES = r"""
import json, shutil, sys
from gym_crawl.benchmarks.memory import make_env_fn
n, action = int(sys.argv[1]), sys.argv[2]
env = make_env_fn(n, 2)()
env.reset(seed=0)
sc = env.unwrapped.scorer
path = sc.tables_path()
existed = path is not None and (path / "manifest.json").is_file()
if action == "save":
    sc.save_tables()
elif action == "remove" and path is not None:
    shutil.rmtree(path, ignore_errors=True)
print(json.dumps({"path": str(path), "existed": existed}))
"""


class _EnvFn:
    """A picklable env factory for the workers (each memory-maps the cached corpus itself)."""

    def __init__(self, pages: int, max_steps: int):
        self.pages, self.max_steps = pages, max_steps

    def __call__(self) -> Any:
        from gym_crawl.webgen.synthetic import synthetic_corpus
        from gym_crawl.wrappers.factory import make_env

        return make_env("WikiCrawl-v1", corpus=synthetic_corpus(self.pages), topic="geology",
                        max_episode_steps=self.max_steps)


def make_env_fn(pages: int, max_steps: int) -> _EnvFn:
    return _EnvFn(pages, max_steps)


def _child(code: str, *args: Any) -> dict[str, Any]:
    p = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise RuntimeError(f"memory child {args} failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


@dataclass(frozen=True)
class Preset:
    pages: int
    steps: int
    workers: tuple[int, ...]


QUICK = Preset(pages=3000, steps=50, workers=(1, 2))
FULL = Preset(pages=323_000, steps=2000, workers=(1, 2, 4))


def _markdown(one: dict[str, Any], workers: list[dict[str, Any]], vector: list[dict[str, Any]]) -> str:
    n = one["pages"]
    lines = [(f"# Memory: synthetic web of {n:,} pages, {one['links']:,} links (memory-mapped)"), "",
             "## One env (`gym.make`, reset, random valid steps)", "",
             "| stage | RSS MB | USS MB | PSS MB |", "|---|---|---|---|"]
    for k in ("base", "after_import", "after_corpus_load", "after_make", "after_reset", "after_crawl"):
        m = one[k]
        lines.append(f"| {k.replace('_', ' ')} | {m['rss_mb']} | {m['uss_mb']} | {m['pss_mb']} |")
    ok = "within" if one["peak_rss_mb"] <= RSS_BUDGET_MB else "OVER"
    lines += ["", f"Peak RSS {one['peak_rss_mb']} MB ({ok} the {RSS_BUDGET_MB:.0f} MB budget).", "",
              "## Workers (`AsyncVectorEnv`, each worker memory-maps the corpus)", "",
              "| workers | mode | worker USS MB (each) | worker anon MB (each) | worker PSS MB (each) | "
              "worker RSS MB (each) | main RSS MB |",
              "|---|---|---|---|---|---|---|"]
    for w in workers:
        pw = w["per_worker"]
        lines.append(f"| {w['workers']} | {w.get('mode', 'default')} | {', '.join(str(p['uss_mb']) for p in pw)} | "
                     f"{', '.join(str(p.get('anon_mb', '–')) for p in pw)} | "
                     f"{', '.join(str(p['pss_mb']) for p in pw)} | {', '.join(str(p['rss_mb']) for p in pw)} | "
                     f"{w['main']['rss_mb']} |")
    parts = [(w, i, pp) for w in workers for i, pp in enumerate(w.get("per_worker_parts", []))]
    if parts:
        lines += ["", "Where each worker's memory is (`/proc/PID/smaps`, per mapping; USS / anonymous / PSS MB: "
                      "heap = malloc's brk heap, anon = other anonymous mappings, score tables and corpus = "
                      "memory-mapped files, libraries = shared objects):", "",
                  "| workers | mode | worker | " + " | ".join(MAPPING_PARTS) + " |",
                  "|---|---|---|" + "---|" * len(MAPPING_PARTS)]
        for w, i, pp in parts:
            cells = [f"{pp[k]['uss_mb']} / {pp[k]['anon_mb']} / {pp[k]['pss_mb']}" for k in MAPPING_PARTS]
            lines.append(f"| {w['workers']} | {w.get('mode', 'default')} | {i} | " + " | ".join(cells) + " |")
    for mode in dict.fromkeys(w.get("mode", "default") for w in workers):
        for n in sorted({w["workers"] for w in workers if w.get("mode", "default") == mode}):
            worst = max((p["uss_mb"] for w in workers if w.get("mode", "default") == mode and w["workers"] == n
                         for p in w["per_worker"]), default=0.0)
            ok = "within" if worst <= WORKER_BUDGET_MB else "OVER"
            alone = (" — the only worker: the memory-mapped file pages it reads are counted as its own, since no "
                     "other process maps them" if n == 1 and mode != "shared" else "")
            lines += ["", (f"Largest worker USS, {mode} mode, {n} worker{'s' if n > 1 else ''} (private memory: what "
                           f"one more worker costs{alone}): {worst} MB ({ok} the {WORKER_BUDGET_MB:.0f} MB budget).")]
    if vector:
        base = vector[0]["memory"]
        lines += ["", ("## Batched vector env (`make_vec_env(..., vectorization_mode=\"vector_entry_point\")`: "
                       "N crawls in one process sharing corpus, text model and score tables)"), "",
                  "| N | RSS MB | USS MB | PSS MB | peak RSS MB | USS per extra env MB |", "|---|---|---|---|---|---|"]
        for v in vector:
            m = v["memory"]
            extra = (f"{(m['uss_mb'] - base['uss_mb']) / (v['envs'] - vector[0]['envs']):.1f}"
                     if v["envs"] > vector[0]["envs"] else "–")
            lines.append(f"| {v['envs']} | {m['rss_mb']} | {m['uss_mb']} | {m['pss_mb']} | {v['peak_rss_mb']} | "
                         f"{extra} |")
    return "\n".join(lines) + "\n"


def _plot(one: dict[str, Any], workers: list[dict[str, Any]], vector: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    stages = ["after_import", "after_corpus_load", "after_make", "after_reset", "after_crawl"]
    x = range(len(stages))
    for key, lab in (("rss_mb", "RSS"), ("uss_mb", "USS (private)"), ("pss_mb", "PSS")):
        a1.plot(list(x), [one[s][key] for s in stages], marker="o", label=lab)
    a1.axhline(RSS_BUDGET_MB, color="grey", ls="--", lw=1, label=f"{RSS_BUDGET_MB:.0f} MB budget")
    a1.set_xticks(list(x), [s.replace("after_", "") for s in stages], rotation=20)
    a1.set_ylabel("MB")
    a1.set_title(f"one env, {one['pages']:,} pages")
    a1.legend(fontsize=8)
    labels, uss, pss = [], [], []
    for w in workers:
        for i, p in enumerate(w["per_worker"]):
            labels.append(f"{w.get('mode', 'default')[0]} W={w['workers']}#{i}")
            uss.append(p["uss_mb"])
            pss.append(p["pss_mb"])
    xs = list(range(len(labels)))
    a2.bar([i - 0.2 for i in xs], uss, width=0.4, label="worker USS (private)")
    a2.bar([i + 0.2 for i in xs], pss, width=0.4, label="worker PSS")
    if len(vector) > 1:
        b = vector[0]
        per = [(v["memory"]["uss_mb"] - b["memory"]["uss_mb"]) / (v["envs"] - b["envs"]) for v in vector[1:]]
        labels += [f"vec N={v['envs']}" for v in vector[1:]]
        xs2 = list(range(len(xs), len(xs) + len(per)))
        a2.bar(xs2, per, width=0.4, color="tab:green", label="vector env: USS per extra env")
        xs = xs + xs2
    a2.axhline(WORKER_BUDGET_MB, color="grey", ls="--", lw=1, label=f"{WORKER_BUDGET_MB:.0f} MB per extra worker")
    a2.set_xticks(xs, labels, rotation=30, fontsize=8)
    a2.set_ylabel("MB")
    a2.set_title("extra workers / envs")
    a2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    # imported here, not at the top: the workers import this module for :class:`_EnvFn`, and what they import
    # is what they are measured for
    from gym_crawl._console import ArgumentParser
    from gym_crawl.benchmarks.report import markdown_banner, write_json_report

    ap = ArgumentParser(prog="gym-crawl bench memory", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="3,000 pages, 50 steps, 1-2 workers (the test suite)")
    ap.add_argument("--pages", type=int, default=None, help="corpus size (full: 323,000)")
    ap.add_argument("--steps", type=int, default=None, help="crawl steps (full: 2,000)")
    ap.add_argument("--workers", default=None, help="comma-separated worker counts (full: 1,2,4)")
    ap.add_argument("--modes", default=None,
                    help="worker modes (full: all three; --quick: default,shared): default (workers fill their own "
                         "score tables), shared (fork from a parent that precomputed them), cached (spawned "
                         "workers memory-map the topic's tables stored on disk by TopicScorer.save_tables)")
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    a = ap.parse_args(argv)
    if a.modes is None:
        a.modes = "default,shared" if a.quick else "default,shared,cached"
    modes = [m for m in a.modes.split(",") if m]
    if not modes or set(modes) - {"default", "shared", "cached"}:
        raise SystemExit(f"--modes {a.modes!r}: expected a comma-separated subset of default,shared,cached")
    # default and shared first, with no stored tables; cached last, after storing them
    modes = sorted(dict.fromkeys(modes), key=["default", "shared", "cached"].index)
    p = QUICK if a.quick else FULL
    pages = a.pages or p.pages
    steps = a.steps or p.steps
    if pages < 100 or steps < 1:
        raise SystemExit(f"--pages must be >= 100 and --steps >= 1, got {pages} and {steps}")
    try:
        ws = [int(x) for x in a.workers.split(",") if x] if a.workers else list(p.workers)
    except ValueError:
        raise SystemExit(f"--workers {a.workers!r}: expected comma-separated integers, e.g. 1,2,4") from None
    if not ws or min(ws) < 1:
        raise SystemExit(f"--workers {a.workers!r}: worker counts must be >= 1")
    from tqdm.auto import tqdm

    # the corpus and its text model are built once, on disk, before any measurement: every measured process
    # memory-maps the first and loads the second (building the text model reads the whole corpus once, a
    # one-time cost per corpus that is not what a running env or worker holds)
    code = ("from gym_crawl.webgen.synthetic import synthetic_corpus; "
            "from gym_crawl.wrappers.factory import make_env; "
            f"make_env('WikiCrawl-v1', corpus=synthetic_corpus({pages}), topic='geology')")
    gen = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    if gen.returncode != 0:
        raise RuntimeError(f"generating {pages} pages failed:\n{gen.stderr[-3000:]}")
    nv = sorted({1, *ws})
    bar = tqdm(total=1 + len(ws) * len(modes) + len(nv), desc="memory", disable=None)
    one = _child(ONE_ENV, pages, steps)
    bar.update()
    workers = []
    tables = _child(TABLES, pages, "path")
    if tables["existed"]:  # stored by an earlier run or by the user: the default/shared figures would use it
        _child(TABLES, pages, "remove")
    try:
        for mode in modes:
            if mode == "cached":
                t0 = time.perf_counter()
                _child(TABLES, pages, "save")
                tables["save_seconds"] = round(time.perf_counter() - t0, 1)
            for w in ws:
                workers.append(_child(WORKERS, pages, steps, w, mode))
                bar.update()
    finally:
        if not tables["existed"]:
            _child(TABLES, pages, "remove")  # leave the data dir as we found it
        elif "cached" not in modes:
            _child(TABLES, pages, "save")
    vector = []
    for w in nv:
        vector.append(_child(VECTOR, pages, steps, w))
        bar.update()
    bar.close()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    from gym_crawl._io import atomic_write_bytes

    write_json_report(out / "memory.json", {"pages": pages, "steps": steps, "one_env": one, "workers": workers,
                                            "vector_env": vector, "score_tables": tables,
                                            "budgets_mb": {"rss": RSS_BUDGET_MB, "per_worker": WORKER_BUDGET_MB},
                                            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
                      "memory", a)
    md = _markdown(one, workers, vector)
    atomic_write_bytes(out / "memory.md", (markdown_banner(a.quick) + md).encode())
    _plot(one, workers, vector, out / "memory.png")
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
