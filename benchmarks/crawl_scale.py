"""Crawl speed and memory against web size: the same crawls on webs of 2·10^4 to 10^7 pages (and more).

``gym-crawl bench crawl_scale [--quick] [--sizes 20000,100000,1000000,10000000] [--rounds 3] [--out DIR]
[--stored-tables [--tables-dir DIR]]``

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

``--stored-tables``: like for like across webs. By default a topic's score tables are complete only on a web small
enough to score at the first reset (outside the timed steps); on a larger generated web the topic's tables are stored
on disk at its first use (the build step below, outside the timed processes: ``TopicScorer.use_stored_tables``) and
a page a crawl fetches for the first time has its scores copied from them during the timed step. With this option
each web's topic tables are scored completely and stored once per web before the timed crawls
(``WikiCrawlEnv.world.precompute_scores`` + ``TopicScorer.save_tables``, in its own process, with a progress bar;
its CPU seconds, disk bytes and peak RSS reported), and every timed process memory-maps them whole
(``TopicScorer.load_tables``: dense tables) — every web's crawls then step over complete tables. The tables go
to ``--tables-dir`` (default: a new temporary directory), which is removed at the end unless given.

Medians over the rounds. Writes ``crawl_scale.json``, ``crawl_scale.md`` and ``crawl_scale.png`` (steps per
CPU-second against web size; anonymous RSS on a second axis) to ``--out`` (default
``benchmarks/results/crawl_scale``).
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from gym_crawl._console import ArgumentParser
from gym_crawl.benchmarks.report import markdown_banner, write_json_report

__all__ = ["CHILD", "main", "summarize"]

DEFAULT_OUT = Path("benchmarks") / "results" / "crawl_scale"
DEFAULT_SIZES = (20_000, 100_000, 1_000_000, 10_000_000)
#: the default task's own web, measured beside the power-law webs
DEFAULT_WEB = "synthetic-hard"

#: One measurement: ``python -c CHILD CORPUS TOPIC N_ENVS VEC_STEPS SINGLE_STEPS [TABLES_DIR]`` (public API only);
#: prints JSON. With ``TABLES_DIR`` the topic's stored score tables are memory-mapped before the first env's reset.
CHILD = r'''
import json, sys, time
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
sc = None
if len(sys.argv) > 6:  # memory-map the stored tables into the process-wide scorer before any crawl asks for them
    from gym_crawl.relevance.topic import resolve_topic
    e0 = gym.make(gym_crawl.DEFAULT_ENV_ID, corpus=corpus, topic=topic)
    sc = e0.unwrapped.world.scorer(resolve_topic(topic, corpus))
    if not sc.load_tables(sys.argv[6]):
        raise SystemExit(f"no stored score tables for {spec} / {topic} in {sys.argv[6]}")
v = gym.make_vec(gym_crawl.DEFAULT_ENV_ID, num_envs=N, vectorization_mode="vector_entry_point", corpus=corpus,
                 topic=topic)
obs, _ = v.reset(seed=0)
if sc is not None:
    if not all(e.scorer is sc for e in v.unwrapped.envs):
        raise SystemExit("the batched env does not use the scorer holding the stored tables")
    out["tables_mapped"] = bool(sc.page_table().mapped and sc.link_table().mapped)
out["build_seconds"] = time.perf_counter() - t0
out["mem_after_reset"] = mem()
rng = np.random.default_rng(0)
def run(n):
    global obs
    for _ in range(n):
        obs, *_ = v.step((rng.random(N) * obs["mask"].sum(1)).astype(np.int64))
run(max(1, vsteps // 4))
c0 = time.process_time()
run(vsteps)
out["vector_steps_per_cpu_second"] = vsteps * N / (time.process_time() - c0)
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


#: Score and store one web's topic tables: ``python -c STORE CORPUS TOPIC TABLES_DIR``; prints JSON (the one-time
#: cost: CPU seconds of building the env and of scoring + storing, disk bytes, peak RSS).
STORE = r'''
import json, sys, time
from pathlib import Path
import gymnasium as gym
import gym_crawl
from gym_crawl.corpus import load_corpus
from gym_crawl.relevance.topic import resolve_topic

from gym_crawl._console import setup_logging

setup_logging()  # the scoring's progress: a bar on a terminal, else a log line every 5 s on stderr
spec, topic, path = sys.argv[1], sys.argv[2], Path(sys.argv[3])
c0 = time.process_time()
corpus = load_corpus(spec)
env = gym.make(gym_crawl.DEFAULT_ENV_ID, corpus=corpus, topic=topic)
world = env.unwrapped.world
sc = world.scorer(resolve_topic(topic, corpus))
c1 = time.process_time()
w0 = time.perf_counter()
world.precompute_scores([topic], progress=True)
sc.save_tables(path)
c2 = time.process_time()
peak = 0.0
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        peak = int(line.split()[1]) / 1024.0
print(json.dumps({"corpus": spec, "path": str(path), "setup_cpu_seconds": c1 - c0, "score_store_cpu_seconds": c2 - c1,
                  "score_store_wall_seconds": time.perf_counter() - w0,
                  "disk_bytes": sum(f.stat().st_size for f in path.rglob("*") if f.is_file()), "peak_rss_mb": peak}))
'''


def _store(spec: str, topic: str, path: Path) -> dict[str, Any]:
    """Score and store ``spec``'s topic tables once under ``path`` (a child process; its progress bar on stderr)."""
    p = subprocess.run([sys.executable, "-c", STORE, spec, topic, str(path)], stdout=subprocess.PIPE, text=True,
                       cwd=tempfile.gettempdir(), timeout=14400)
    if p.returncode != 0:
        raise RuntimeError(f"crawl_scale: storing the score tables of {spec} failed (exit {p.returncode})")
    return dict(json.loads(p.stdout.strip().splitlines()[-1]))


def _run(spec: str, topic: str, n_envs: int, vsteps: int, ssteps: int, tables: Path | None = None) -> dict[str, Any]:
    p = subprocess.run([sys.executable, "-c", CHILD, spec, topic, str(n_envs), str(vsteps), str(ssteps)]
                       + ([str(tables)] if tables is not None else []),
                       capture_output=True, text=True, cwd=tempfile.gettempdir(), timeout=7200)
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
    out["vector_runs"] = [r["vector_steps_per_cpu_second"] for r in runs]
    out["cartpole_ratio"] = out["cartpole_steps_per_cpu_second"] / out["single_steps_per_cpu_second"]
    return out


def _markdown(res: dict[str, Any]) -> str:
    lines = [f"# crawl_scale — speed and memory against web size ({res['rounds']} rounds, N = {res['n_envs']})", "",
             f"Load average at the start: {res['load_average']}; CPU seconds (`time.process_time`). Steps per "
             "CPU-second are medians over the rounds; memory in MB.", "", *_store_lines(res),
             "| web | pages | links | vector N=64 steps / CPU-s | single steps / CPU-s | CartPole ÷ single | "
             "anon RSS after reset | anon RSS after crawl | file RSS | state bytes / touched page | pages touched "
             "/ crawl |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        lines.append(f"| {r['corpus']} | {r['pages']:,} | {r['links']:,} | {r['vector_steps_per_cpu_second']:,.0f} | "
                     f"{r['single_steps_per_cpu_second']:,.0f} | {r['cartpole_ratio']:.2f} | "
                     f"{r['mem_after_reset']['RssAnon']:,.0f} | {r['mem_after_crawl']['RssAnon']:,.0f} | "
                     f"{r['mem_after_crawl']['RssFile']:,.0f} | {r['crawl_state_bytes_per_touched_page']:,.0f} | "
                     f"{r['pages_touched_per_crawl']:,.0f} |")
    return "\n".join(lines) + "\n"


def _store_lines(res: dict[str, Any]) -> list[str]:
    """With ``--stored-tables``: the one-time scoring and storing of each web's topic tables."""
    if not res.get("stored_tables"):
        return []
    lines = [f"Score tables of topic {res['topic']!r} scored and stored once per web before the timed crawls "
             f"(under `{res['tables_dir']}`, {'kept' if res['tables_dir_kept'] else 'removed after the run'}), "
             "memory-mapped by every timed process:", "",
             "| web | CPU-s scoring + storing | CPU-s setting up | wall s | disk MB | peak RSS MB |",
             "|---|---|---|---|---|---|"]
    for st in res["store"]:
        lines.append(f"| {st['corpus']} | {st['score_store_cpu_seconds']:,.1f} | {st['setup_cpu_seconds']:,.1f} | "
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
                    help="score and store each web's topic tables once before the timed crawls (reported apart), "
                         "then memory-map them in every timed process: every web steps over complete tables")
    ap.add_argument("--tables-dir", default=None,
                    help="with --stored-tables: where the tables go (kept); default a temporary directory, removed")
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    a = ap.parse_args(argv)
    if a.tables_dir is not None and not a.stored_tables:
        ap.error("--tables-dir needs --stored-tables")
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
    n_envs = 64
    specs = [f"powerlaw-{n}" for n in sizes] + ([] if a.no_default_web or a.quick else [DEFAULT_WEB])
    gen = Path(a.out)
    gen.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    for s in specs:  # build (or find) every web and its text model once, outside the measured processes
        p = subprocess.run([sys.executable, "-c", f"import gymnasium as gym, gym_crawl; gym.make("
                            f"gym_crawl.DEFAULT_ENV_ID, corpus={s!r}, topic={a.topic!r}).reset(seed=0)"],
                           cwd=tempfile.gettempdir(), timeout=14400)
        if p.returncode != 0:
            raise SystemExit(f"building the web {s!r} failed (exit {p.returncode})")
    build_seconds = time.perf_counter() - t0
    res: dict[str, Any] = {"sizes": sizes, "rounds": rounds, "n_envs": n_envs, "vector_steps": vsteps,
                           "single_steps": ssteps, "topic": a.topic, "build_seconds": build_seconds,
                           "load_average": " ".join(f"{x:.1f}" for x in os.getloadavg()), "rows": [],
                           "stored_tables": bool(a.stored_tables)}
    tables: dict[str, Path] = {}
    root: Path | None = None
    try:
        if a.stored_tables:
            root = Path(a.tables_dir) if a.tables_dir else Path(tempfile.mkdtemp(prefix="gym_crawl-score-tables-"))
            print(f"[crawl_scale] storing each web's score tables under {root}", flush=True)
            res["tables_dir"], res["tables_dir_kept"], res["store"] = str(root), a.tables_dir is not None, []
            for s in specs:
                tables[s] = root / f"{s}-{a.topic}"
                st = _store(s, a.topic, tables[s])
                res["store"].append(st)
                print(f"[crawl_scale] stored {s}: {st['score_store_cpu_seconds']:,.1f} CPU-s scoring + storing "
                      f"(+{st['setup_cpu_seconds']:,.1f} setting up), {st['disk_bytes'] / 1e6:,.0f} MB on disk, "
                      f"peak RSS {st['peak_rss_mb']:,.0f} MB", flush=True)
        res["rows"] = _measure(specs, a.topic, n_envs, vsteps, ssteps, rounds, tables)
    finally:
        if root is not None and a.tables_dir is None:
            shutil.rmtree(root, ignore_errors=True)
            print(f"[crawl_scale] removed {root}", flush=True)
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
    return sorted((summarize(v) for v in runs.values()), key=lambda r: (r["corpus"] == DEFAULT_WEB, r["pages"]))


if __name__ == "__main__":
    raise SystemExit(main())
