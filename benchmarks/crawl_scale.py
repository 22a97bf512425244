"""Crawl speed and memory against web size: the same crawls on webs of 2·10^4 to 10^7 pages (and more).

``gym-crawl bench crawl_scale [--quick] [--sizes 20000,100000,1000000,10000000] [--rounds 3] [--out DIR]
[--stored-tables [--tables-dir DIR]] [--baseline REV]``

A crawl's state is sized by the pages it touched (:mod:`gym_crawl.crawl.fields`), so a crawl should cost the
same per step, and hold the same memory, on any web. Each size is a power-law web (``powerlaw-<N>``,
:mod:`gym_crawl.webgen.powerlaw`: generated once in chunks, cached, memory-mapped), and the default task's web
(``synthetic-hard``, 20,000 pages) is measured beside them. Per web, in a fresh process (one per size and round;
the rounds interleave the sizes, so load changes on a shared machine hit every size alike):

* the batched env of the default task (``gym.make_vec("WikiCrawl-v3", num_envs=64,
  vectorization_mode="vector_entry_point", corpus=..., topic=...)``, a random filled slot per crawl, 100-step
  episodes with their resets): aggregate steps per CPU-second;
* one env through ``gym.make`` (a random valid slot), and CartPole-v1 in the same process: the ratio;
* memory: the process' anonymous RSS (heap: crawl states, score tables, text model — the corpus' memory-mapped
  files are page cache, reported apart as file RSS) after the env's first reset and after the timed crawls,
  and one crawl's state: bytes per page it touched (its columns at their capacity / the pages it touched).

``--stored-tables``: every web in the mode the default gives the largest generated webs. By default a topic's score
tables are complete at the first reset on a web of at most ``EAGER_SCORING_LINKS`` links (scored outside the timed
steps); a generated web of more than ``STORED_TABLES_LINKS`` links (the 10^7-page web) stores them on disk once
(``TopicScorer.use_stored_tables``) and a page a crawl fetches for the first time has its rows copied from that store
during the step; a web in between (the 10^6-page web: 4.3·10^6 links) scores such a page's rows from its text during
the step. With this option each web's topic tables are stored once before the timed crawls where the default keeps
them (``TopicScorer.store_tables`` under ``tables_path()``, or under ``--tables-dir``; a store already there is
used as it is; its one-time CPU seconds, disk bytes and peak RSS reported), and every timed process attaches them
(``TopicScorer.attach_stored_tables``) before its first env: the webs in between then copy rows as the largest do,
and the small ones are complete at reset either way. Each row says which it was (``tables``: ``complete at reset``,
``copied from the store``, ``scored in the step``). Stores are kept (they are the default's own files).

``--baseline REV``: the same runs with that revision's package too (``git archive`` first on ``PYTHONPATH``; each
code builds or finds its own webs: another generator version is another web), each round running both codes on every
web, the codes' order alternating round by round; the report adds the baseline's rows and, per web, the current code
against the baseline's round by round (``paired``).

Medians over the rounds. Writes ``crawl_scale.json``, ``crawl_scale.md`` and ``crawl_scale.png`` (steps per
CPU-second against web size; anonymous RSS on a second axis) to ``--out`` (default
``benchmarks/results/crawl_scale``).
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from gym_crawl._console import ArgumentParser
from gym_crawl.benchmarks.child_process import run_json_child
from gym_crawl.benchmarks.report import markdown_banner, write_json_report

__all__ = ["CHILD", "add_ratios", "main", "summarize"]

DEFAULT_OUT = Path("benchmarks") / "results" / "crawl_scale"
DEFAULT_SIZES = (20_000, 100_000, 1_000_000, 10_000_000)
#: the default task's own web, measured beside the power-law webs
DEFAULT_WEB = "synthetic-hard"

#: One measurement: ``python -c CHILD CORPUS TOPIC N_ENVS VEC_STEPS SINGLE_STEPS [TABLES_DIR]`` (public API only);
#: prints JSON. With ``TABLES_DIR`` the topic's stored score tables are attached (the source the keyed tables copy rows
#: from) before the first env's reset.
CHILD = r'''
import json, resource, sys, time
import numpy as np
import gymnasium as gym
import gym_crawl

def mem():
    out = {}
    for line in open("/proc/self/status"):
        k, _, v = line.partition(":")
        if k in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
            out[k] = int(v.split()[0]) / 1024.0
    return out

spec, topic, N, vsteps, ssteps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
from gym_crawl.corpus import load_corpus
t0 = time.perf_counter()
corpus = load_corpus(spec)
out = {"corpus": spec, "pages": corpus.n_pages, "links": corpus.n_links, "load_seconds": time.perf_counter() - t0}
t0 = time.perf_counter()
from gym_crawl.relevance.topic import resolve_topic
e0 = gym.make(gym_crawl.DEFAULT_ENV_ID, corpus=corpus, topic=topic)
sc = e0.unwrapped.world.scorer(resolve_topic(topic, corpus))  # the process-wide scorer every env of the topic shares
if len(sys.argv) > 6:  # the stored tables as the source of the keyed tables, before any crawl asks for them
    if not sc.attach_stored_tables(sys.argv[6]):
        raise SystemExit(f"no stored score tables for {spec} / {topic} in {sys.argv[6]}")
v = gym.make_vec(gym_crawl.DEFAULT_ENV_ID, num_envs=N, vectorization_mode="vector_entry_point", corpus=corpus,
                 topic=topic)
obs, _ = v.reset(seed=0)
if not all(e.scorer is sc for e in v.unwrapped.envs):
    raise SystemExit("the batched env does not use the process-wide scorer")
pt = sc.page_table()
out["tables"] = ("complete at reset" if pt.complete else "copied from the store" if sc.stored_source
                 else "scored in the step")
out["build_seconds"] = time.perf_counter() - t0
out["mem_after_reset"] = mem()
rng = np.random.default_rng(0)
def run(n):
    global obs
    for _ in range(n):
        obs, *_ = v.step((rng.random(N) * obs["mask"].sum(1)).astype(np.int64))
run(max(1, vsteps // 4))
f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
c0 = time.process_time()
run(vsteps)
out["vector_steps_per_cpu_second"] = vsteps * N / (time.process_time() - c0)
out["vector_minor_faults_per_env_step"] = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / (vsteps * N)
states = [e.state for e in v.unwrapped.envs]
touched = [s.n_slots for s in states]
held = [sum(a.nbytes for a in s.arrays.values()) for s in states]  # each crawl's columns (its rows of the stack)
out["crawl_state_bytes_per_crawl"] = float(np.mean(held))
out["pages_touched_per_crawl"] = float(np.mean(touched))
out["crawl_state_bytes_per_touched_page"] = sum(held) / max(1, sum(touched))
out["slot_capacity"] = int(states[0].slot_capacity)
v.close()
env = gym.make(gym_crawl.DEFAULT_ENV_ID, corpus=corpus, topic=topic)
_, info = env.reset(seed=0)
def single(n):
    global info
    for _ in range(n):
        valid = np.flatnonzero(info["action_mask"])
        _, _, te, tr, info = env.step(int(valid[rng.integers(len(valid))]))
        if te or tr:
            _, info = env.reset()
single(max(1, ssteps // 4))
c0 = time.process_time()
single(ssteps)
out["single_steps_per_cpu_second"] = ssteps / (time.process_time() - c0)
st = env.unwrapped.state
out["single_state_bytes_per_touched_page"] = sum(a.nbytes for a in st.arrays.values()) / max(1, st.n_slots)
cp = gym.make("CartPole-v1")
cp.reset(seed=0)
cp.action_space.seed(0)
c0 = time.process_time()
for _ in range(4 * ssteps):
    *_, te, tr, _ = cp.step(cp.action_space.sample())
    if te or tr:
        cp.reset()
out["cartpole_steps_per_cpu_second"] = 4 * ssteps / (time.process_time() - c0)
out["mem_after_crawl"] = mem()
print(json.dumps(out))
'''


#: Store one web's topic tables as the default stores a large generated web's: ``python -c STORE CORPUS TOPIC
#: [TABLES_DIR]`` (default: where the default keeps them, ``TopicScorer.tables_path()``); prints JSON (the one-time
#: cost: CPU seconds of building the env and of storing, disk bytes, peak RSS; ``found``: a store was there already).
STORE = r'''
import json, sys, time
from pathlib import Path
import gymnasium as gym
import gym_crawl
from gym_crawl.corpus import load_corpus
from gym_crawl.relevance.topic import resolve_topic

from gym_crawl._console import setup_logging

setup_logging()  # the store's progress: a bar on a terminal, else a log line every 5 s on stderr
spec, topic = sys.argv[1], sys.argv[2]
c0 = time.process_time()
corpus = load_corpus(spec)
env = gym.make(gym_crawl.DEFAULT_ENV_ID, corpus=corpus, topic=topic)
sc = env.unwrapped.world.scorer(resolve_topic(topic, corpus))
path = Path(sys.argv[3]) if len(sys.argv) > 3 else sc.tables_path()
c1 = time.process_time()
w0 = time.perf_counter()
found = sc.attach_stored_tables(path)
if not found:
    sc.store_tables(path)
c2 = time.process_time()
peak = 0.0
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        peak = int(line.split()[1]) / 1024.0
print(json.dumps({"corpus": spec, "path": str(path), "found": found, "setup_cpu_seconds": c1 - c0,
                  "score_store_cpu_seconds": c2 - c1, "score_store_wall_seconds": time.perf_counter() - w0,
                  "disk_bytes": sum(f.stat().st_size for f in path.rglob("*") if f.is_file()), "peak_rss_mb": peak}))
'''


def _store(spec: str, topic: str, path: Path | None) -> dict[str, Any]:
    """Store ``spec``'s topic tables once under ``path`` (default: where the default keeps them), or find them there
    (a child process; its progress bar on stderr)."""
    return run_json_child(STORE, [spec, topic] + ([str(path)] if path is not None else []),
                          f"crawl_scale: storing the score tables of {spec}")


def _env(code: str | None) -> dict[str, str] | None:
    """A child's environment: this package, or the tree ``code`` first on ``PYTHONPATH``."""
    return None if code is None else {**os.environ, "PYTHONPATH": code}


def _run(spec: str, topic: str, n_envs: int, vsteps: int, ssteps: int, tables: Path | None = None,
         code: str | None = None) -> dict[str, Any]:
    p = subprocess.run([sys.executable, "-c", CHILD, spec, topic, str(n_envs), str(vsteps), str(ssteps)]
                       + ([str(tables)] if tables is not None else []),
                       capture_output=True, text=True, cwd=tempfile.gettempdir(), timeout=7200, env=_env(code))
    if p.returncode != 0:
        raise RuntimeError(f"crawl_scale child for {spec} failed:\n{p.stderr[-3000:]}")
    return dict(json.loads(p.stdout.strip().splitlines()[-1]))


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over the rounds of one web's runs (numbers; nested memory dicts key by key)."""
    out: dict[str, Any] = {k: runs[0][k] for k in ("corpus", "pages", "links")}
    for k, v in runs[0].items():
        if isinstance(v, dict):
            out[k] = {kk: statistics.median(r[k][kk] for r in runs) for kk in v}
        elif isinstance(v, (int, float)) and k not in out:
            out[k] = statistics.median(r[k] for r in runs)
    out["tables"] = runs[0].get("tables")
    out["vector_runs"] = [r["vector_steps_per_cpu_second"] for r in runs]
    out["cartpole_ratio"] = out["cartpole_steps_per_cpu_second"] / out["single_steps_per_cpu_second"]
    return out


def _markdown(res: dict[str, Any]) -> str:
    lines = [f"# crawl_scale — speed and memory against web size ({res['rounds']} rounds, N = {res['n_envs']})", "",
             f"Load average at the start: {res['load_average']}; CPU seconds (`time.process_time`). Steps per "
             "CPU-second are medians over the rounds; memory in MB.", "", *_store_lines(res),
             "| web | pages | links | tables | vector N=64 steps / CPU-s | ÷ smallest web (per round) | minor faults "
             "/ env-step | single steps / CPU-s | CartPole ÷ single | anon RSS after reset | anon RSS after crawl | "
             "file RSS | state bytes / touched page | pages touched / crawl |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        rr = r.get("ratio_to_smallest")
        ratio = f"{rr['median_of_ratios']:.2f} ({', '.join(f'{x:.2f}' for x in rr['per_round'])})" if rr else "—"
        lines.append(f"| {r['corpus']} | {r['pages']:,} | {r['links']:,} | {r.get('tables') or '—'} | "
                     f"{r['vector_steps_per_cpu_second']:,.0f} | {ratio} | "
                     f"{r.get('vector_minor_faults_per_env_step', float('nan')):.4f} | "
                     f"{r['single_steps_per_cpu_second']:,.0f} | {r['cartpole_ratio']:.2f} | "
                     f"{r['mem_after_reset']['RssAnon']:,.0f} | {r['mem_after_crawl']['RssAnon']:,.0f} | "
                     f"{r['mem_after_crawl']['RssFile']:,.0f} | {r['crawl_state_bytes_per_touched_page']:,.0f} | "
                     f"{r['pages_touched_per_crawl']:,.0f} |")
    return "\n".join(lines + _baseline_lines(res)) + "\n"


def _baseline_lines(res: dict[str, Any]) -> list[str]:
    """With ``--baseline``: its batched figures beside this code's, round by round."""
    if not res.get("paired"):
        return []
    lines = ["", f"Against `{res['baseline']}` (its own package and webs, the codes alternating round by round):", "",
             "| web (this code) | baseline's web | baseline vector steps / CPU-s | ÷ its smallest web (per round) | "
             "this code | ÷ its smallest web (per round) | this ÷ baseline (per round) |",
             "|---|---|---|---|---|---|---|"]

    def ratio(r: dict[str, Any]) -> str:
        rr = r.get("ratio_to_smallest")
        return f"{rr['median_of_ratios']:.2f} ({', '.join(f'{x:.2f}' for x in rr['per_round'])})" if rr else "—"

    for cur, old, pr in zip(res["rows"], res["baseline_rows"], res["paired"]):
        lines.append(f"| {cur['corpus']} | {old['corpus']} | {old['vector_steps_per_cpu_second']:,.0f} | "
                     f"{ratio(old)} | {cur['vector_steps_per_cpu_second']:,.0f} | {ratio(cur)} | {pr['median']:.3f} "
                     f"({', '.join(f'{x:.2f}' for x in pr['current_over_baseline'])}) |")
    return lines


def _store_lines(res: dict[str, Any]) -> list[str]:
    """With ``--stored-tables``: the one-time scoring and storing of each web's topic tables."""
    if not res.get("stored_tables"):
        return []
    where = f"under `{res['tables_dir']}`" if res.get("tables_dir") else "where the default keeps them"
    lines = [f"Score tables of topic {res['topic']!r} stored once per web before the timed crawls ({where}; a store "
             "found there is used as it is), attached by every timed process as the source its keyed tables copy "
             "rows from:", "",
             "| web | store | CPU-s storing | CPU-s setting up | wall s | disk MB | peak RSS MB |",
             "|---|---|---|---|---|---|---|"]
    for st in res["store"]:
        lines.append(f"| {st['corpus']} | {'found' if st.get('found') else 'stored now'} | "
                     f"{st['score_store_cpu_seconds']:,.1f} | {st['setup_cpu_seconds']:,.1f} | "
                     f"{st['score_store_wall_seconds']:,.1f} | {st['disk_bytes'] / 1e6:,.1f} | "
                     f"{st['peak_rss_mb']:,.0f} |")
    return [*lines, ""]


def _plot(res: dict[str, Any], path: Path) -> None:
    from gym_crawl.benchmarks.plotting import pyplot, save_png

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    pl = [r for r in res["rows"] if r["corpus"].startswith("powerlaw")]
    other = [r for r in res["rows"] if not r["corpus"].startswith("powerlaw")]
    for rows, mark, label in ((pl, "o-", "power-law web"), (other, "s", "default task's web (synthetic-hard)")):
        if not rows:
            continue
        x = [r["pages"] for r in rows]
        ax.plot(x, [r["vector_steps_per_cpu_second"] for r in rows], mark, color="#1f77b4",
                label=f"vector N={res['n_envs']}, {label}")
        ax.plot(x, [r["single_steps_per_cpu_second"] for r in rows], mark, color="#ff7f0e",
                label=f"single env, {label}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("pages in the web")
    ax.set_ylabel("env steps per CPU-second")
    ax2 = ax.twinx()
    ax2.plot([r["pages"] for r in pl], [r["mem_after_crawl"]["RssAnon"] for r in pl], "^:", color="grey",
             label="anonymous RSS after the crawls (MB)")
    ax2.set_ylabel("anonymous RSS (MB)")
    ax2.set_ylim(bottom=0)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize=7, loc="upper left", bbox_to_anchor=(1.15, 1.0))
    ax.set_title("crawl cost against web size")
    save_png(fig, path)


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="gym-crawl bench crawl_scale", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="webs of 2,000 and 5,000 pages, few steps (the tests)")
    ap.add_argument("--sizes", default=None, help="comma-separated power-law web sizes (default 2e4,1e5,1e6,1e7)")
    ap.add_argument("--rounds", type=int, default=None, help="rounds (default 3; --quick 1)")
    ap.add_argument("--steps", type=int, default=None, help="timed vector steps (default 600; --quick 20)")
    ap.add_argument("--topic", default="geology", help="the topic crawled on every web (default geology)")
    ap.add_argument("--no-default-web", action="store_true", help="skip the default task's own web")
    ap.add_argument("--stored-tables", action="store_true",
                    help="every web in the default's mode for the largest webs: each web's topic tables stored once "
                         "before the timed crawls (reported apart), its crawls copying a first-fetched page's rows "
                         "from them")
    ap.add_argument("--tables-dir", default=None,
                    help="with --stored-tables: where the stores go (kept); default where the default keeps them")
    ap.add_argument("--baseline", default=None,
                    help="git revision run beside this code in every round, the codes alternating (e.g. main)")
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    a = ap.parse_args(argv)
    if a.tables_dir is not None and not a.stored_tables:
        ap.error("--tables-dir needs --stored-tables")
    if a.baseline is not None and a.stored_tables:
        ap.error("--baseline runs the default's tables only; drop --stored-tables")
    try:
        sizes = [int(float(x)) for x in a.sizes.split(",") if x] if a.sizes else (
            [2000, 5000] if a.quick else list(DEFAULT_SIZES))
    except ValueError:
        ap.error(f"--sizes {a.sizes!r}: expected comma-separated page counts, e.g. 20000,1e7")
    rounds = a.rounds or (1 if a.quick else 3)
    vsteps = a.steps or (20 if a.quick else 600)
    if rounds < 1 or vsteps < 1 or not sizes or min(sizes) < 800:
        ap.error(f"--rounds and --steps must be >= 1 and --sizes >= 800 pages, got {rounds}, {vsteps}, {sizes}")
    ssteps = 50 * vsteps // 4
    specs = [f"powerlaw-{n}" for n in sizes] + ([] if a.no_default_web or a.quick else [DEFAULT_WEB])
    gen = Path(a.out)
    gen.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="crawl-scale-base-") as tmp:
        base = None
        if a.baseline is not None:
            from gym_crawl.benchmarks.bench_step import baseline_tree

            base = str(baseline_tree(a.baseline, Path(tmp)))
        return _main(a, sizes, specs, rounds, vsteps, ssteps, base)


def _main(a: Any, sizes: list[int], specs: list[str], rounds: int, vsteps: int, ssteps: int,
          base: str | None) -> int:
    """Build the webs, measure (beside the baseline tree ``base`` when given), write the reports."""
    n_envs = 64
    t0 = time.perf_counter()
    for code in (None, base) if base is not None else (None,):
        for s in specs:  # build (or find) every web and its text model once, outside the measured processes
            p = subprocess.run([sys.executable, "-c", f"import gymnasium as gym, gym_crawl; gym.make("
                                f"gym_crawl.DEFAULT_ENV_ID, corpus={s!r}, topic={a.topic!r}).reset(seed=0)"],
                               cwd=tempfile.gettempdir(), timeout=14400, env=_env(code))
            if p.returncode != 0:
                raise SystemExit(f"building the web {s!r} failed (exit {p.returncode})")
    build_seconds = time.perf_counter() - t0
    res: dict[str, Any] = {"sizes": sizes, "rounds": rounds, "n_envs": n_envs, "vector_steps": vsteps,
                           "single_steps": ssteps, "topic": a.topic, "build_seconds": build_seconds,
                           "load_average": " ".join(f"{x:.1f}" for x in os.getloadavg()), "rows": [],
                           "stored_tables": bool(a.stored_tables)}
    tables: dict[str, Path] = {}
    if a.stored_tables:
        where = a.tables_dir or "where the default keeps them"
        print(f"[crawl_scale] storing (or finding) each web's score tables ({where})", flush=True)
        res["tables_dir"], res["store"] = a.tables_dir, []
        for s in specs:
            st = _store(s, a.topic, Path(a.tables_dir) / f"{s}-{a.topic}" if a.tables_dir else None)
            tables[s] = Path(st["path"])
            res["store"].append(st)
            print(f"[crawl_scale] {s}: {'found' if st['found'] else 'stored'} under {st['path']}: "
                  f"{st['score_store_cpu_seconds']:,.1f} CPU-s (+{st['setup_cpu_seconds']:,.1f} setting up), "
                  f"{st['disk_bytes'] / 1e6:,.0f} MB on disk, peak RSS {st['peak_rss_mb']:,.0f} MB", flush=True)
    if base is None:
        res["rows"] = _measure(specs, a.topic, n_envs, vsteps, ssteps, rounds, tables)
    else:
        res["rows"], res["baseline_rows"], res["paired"] = _measure_paired(specs, a.topic, n_envs, vsteps, ssteps,
                                                                           rounds, base)
        res["baseline"] = a.baseline
    from gym_crawl._io import atomic_write_bytes

    out = Path(a.out)
    stem = "crawl_scale_stored_tables" if a.stored_tables else "crawl_scale"
    write_json_report(out / f"{stem}.json", res, "crawl_scale", a)
    atomic_write_bytes(out / f"{stem}.md", (markdown_banner(a.quick) + _markdown(res)).encode())
    _plot(res, out / f"{stem}.png")
    print(_markdown(res))
    print(f"[crawl_scale] wrote {out}")
    return 0


def _measure(specs: list[str], topic: str, n_envs: int, vsteps: int, ssteps: int, rounds: int,
             tables: dict[str, Path]) -> list[dict[str, Any]]:
    """Every web in its own process per round, the rounds interleaving the webs; medians per web."""
    runs: dict[str, list[dict[str, Any]]] = {s: [] for s in specs}
    for k in range(rounds):
        for s in (specs if k % 2 == 0 else specs[::-1]):
            r = _run(s, topic, n_envs, vsteps, ssteps, tables.get(s))
            runs[s].append(r)
            print(f"[crawl_scale] round {k + 1}/{rounds} {s}: vector {r['vector_steps_per_cpu_second']:,.0f}, single "
                  f"{r['single_steps_per_cpu_second']:,.0f} steps/CPU-s, anon RSS "
                  f"{r['mem_after_crawl']['RssAnon']:,.0f} MB", flush=True)
    rows = sorted((summarize(v) for v in runs.values()), key=lambda r: (r["corpus"] == DEFAULT_WEB, r["pages"]))
    add_ratios(rows, runs)
    return rows


def _measure_paired(specs: list[str], topic: str, n_envs: int, vsteps: int, ssteps: int, rounds: int,
                    base: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """As :func:`_measure`, each round running this code and the baseline tree ``base`` on every web (the codes'
    order and the webs' order alternating round by round): both codes' rows, and per web the current code's batched
    steps per CPU-second against the baseline's, round by round."""
    runs: dict[str | None, dict[str, list[dict[str, Any]]]] = {c: {s: [] for s in specs} for c in (None, base)}
    for k in range(rounds):
        for code in ((None, base) if k % 2 == 0 else (base, None)):
            for s in (specs if k % 2 == 0 else specs[::-1]):
                r = _run(s, topic, n_envs, vsteps, ssteps, None, code)
                runs[code][s].append(r)
                print(f"[crawl_scale] round {k + 1}/{rounds} {'baseline' if code else 'current'} {s}: vector "
                      f"{r['vector_steps_per_cpu_second']:,.0f} steps/CPU-s", flush=True)
    out = []
    for code in (None, base):
        rows = sorted((summarize(v) for v in runs[code].values()),
                      key=lambda r: (r["corpus"] == DEFAULT_WEB, r["pages"]))
        add_ratios(rows, runs[code])
        out.append(rows)
    paired = []
    for s in specs:
        per = [c["vector_steps_per_cpu_second"] / b["vector_steps_per_cpu_second"]
               for c, b in zip(runs[None][s], runs[base][s])]
        paired.append({"corpus": s, "current_over_baseline": per, "median": statistics.median(per)})
    return out[0], out[1], paired


def add_ratios(rows: list[dict[str, Any]], runs: dict[str, list[dict[str, Any]]]) -> None:
    """Each web's batched steps per CPU-second against the smallest power-law web's, round by round (the two measured
    in the same round, minutes apart) and their median: ``row["ratio_to_smallest"]``."""
    base = next((r["corpus"] for r in rows if r["corpus"].startswith("powerlaw")), None)
    if base is None:
        return
    for r in rows:
        per = [x["vector_steps_per_cpu_second"] / b["vector_steps_per_cpu_second"]
               for x, b in zip(runs[r["corpus"]], runs[base])]
        r["ratio_to_smallest"] = {"against": base, "per_round": per, "median_of_ratios": statistics.median(per),
                                  "ratio_of_medians": r["vector_steps_per_cpu_second"]
                                  / next(x for x in rows if x["corpus"] == base)["vector_steps_per_cpu_second"]}


if __name__ == "__main__":
    raise SystemExit(main())
