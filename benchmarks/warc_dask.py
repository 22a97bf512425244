"""A ≥ 1 GB gzipped WARC of real documentation HTML compiled on Dask (2 local workers): time, progress, memory.

``gym-crawl bench warc_dask [--gb 1.0] [--sizes 0.25,1] [--work-dir DIR] [--keep] [--out DIR]``

**The WARC** (built reproducibly, outside the repository: in ``--work-dir``, default a temporary folder removed
at the end): the HTML files of Debian's documentation packages installed under ``/usr/share/doc`` (every
``*/html/**/*.html`` and ``*/*.html``, in sorted order) as ``response`` records (each with its ``request``
record, one gzip member per record, as crawlers write them), pass after pass under a new mirror host each pass
(``http://docs-<k>.mirror.test/<path>``) until the gzipped file on disk reaches ``--gb`` GB. A copy's body
ends with an HTML comment naming its mirror, so no two records share a payload digest (the compiler would
merge them); its links stay inside its own mirror. The smaller ``--sizes`` are byte prefixes of that file cut
at a record boundary, so each size holds the first records of the next.

**Each size** is compiled in a fresh process by ``load_warc(path, engine="dask", progress=True)`` into the data
cache of a temporary ``GYM_CRAWL_DATA`` folder (removed afterwards; the corpus is written there column by column and
returned memory-mapped, as a user's compile with the default ``cache=True``; ``--no-cache``: ``cache=False``, the
corpus then read into memory) on a ``LocalCluster(n_workers=2, threads_per_worker=1)`` (the scheduler runs in the
compiling process, the client's), with the file split into segments at record boundaries so that both workers parse
it. A thread samples every ``--interval`` seconds the RSS of the compiling process (the nannies run in it) and of
each worker with psutil, and the machine's load average. Recorded per size: wall and CPU seconds (the compiling process
plus every worker and nanny), pages and links compiled, pages per wall second and per CPU-second, the peak
RSS of each process (sampled, and the kernel's ``ru_maxrss`` of the compiling process and of each worker: the true
peak over its life) and its RSS over time, and the corpus' own bytes. Memory is bounded when no process' peak grows
with the WARC's size.

Writes ``warc_dask.json`` and ``warc_dask.png`` (RSS over time, one panel per size) to ``--out`` (default
``benchmarks/results/warc_dask``). ``--heap SEGMENTS`` measures instead what one parsing process holds: the first
segments of the smallest size parsed one after another in a fresh process (as a worker parses them), with and
without the C heap's free pages given back after each segment, memory read after each segment (``heap.json``).
Needs the ``cluster`` extra (Dask, distributed) and psutil.
"""
from __future__ import annotations

import argparse
import base64
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path
from typing import Any

from gym_crawl._console import ArgumentParser

DEFAULT_OUT = Path("benchmarks") / "results" / "warc_dask"  # under the current folder
DOC_GLOBS = ("/usr/share/doc/*/html/**/*.html", "/usr/share/doc/*/*.html")
WARC_DATE = "2026-01-01T00:00:00Z"


# ------------------------------------------------------------------------------------------ the WARC

def doc_html_files() -> list[Path]:
    """The documentation HTML files the WARC is built from, sorted (none when no such package is installed)."""
    found: set[str] = set()
    for g in DOC_GLOBS:
        found.update(glob.glob(g, recursive=True))
    return [Path(f) for f in sorted(found) if os.path.isfile(f)]


def _record(rtype: str, url: str, block: bytes, extra: list[tuple[str, str]], content_type: str) -> bytes:
    rid = hashlib.sha1(f"{rtype} {url}".encode()).hexdigest()
    uuid = f"{rid[:8]}-{rid[8:12]}-{rid[12:16]}-{rid[16:20]}-{rid[20:32]}"
    head = [("WARC-Type", rtype), ("WARC-Record-ID", f"<urn:uuid:{uuid}>"), ("WARC-Date", WARC_DATE),
            ("WARC-Target-URI", url), *extra, ("Content-Type", content_type), ("Content-Length", str(len(block)))]
    return ("WARC/1.0\r\n" + "".join(f"{k}: {v}\r\n" for k, v in head) + "\r\n").encode() + block + b"\r\n\r\n"


def _member(data: bytes) -> bytes:
    """``data`` as one gzip member (deterministic: no time stamp, no file name)."""
    c = zlib.compressobj(6, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()


def doc_records(path: Path, url: str, mirror: int) -> bytes:
    """The gzipped ``request`` and ``response`` records of one documentation file served at ``url``."""
    body = path.read_bytes() + f"\n<!-- mirror {mirror} -->\n".encode()
    digest = "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode("ascii")
    host = url.split("/", 3)[2]
    req = f"GET /{url.split('/', 3)[3]} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: gym-crawl-bench\r\n\r\n".encode()
    resp = (f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
    return (_member(_record("request", url, req, [], "application/http; msgtype=request"))
            + _member(_record("response", url, resp, [("WARC-Payload-Digest", digest)],
                              "application/http; msgtype=response")))


def build_warc(path: Path, target_bytes: int, files: list[Path], progress: bool = True) -> dict[str, Any]:
    """Write the gzipped WARC of ``files`` (pass after pass, one mirror host a pass) until it holds at least
    ``target_bytes`` bytes; atomic (a ``.tmp`` file renamed). Returns what it holds."""
    from tqdm import tqdm

    if not files:
        raise FileNotFoundError("no documentation HTML under /usr/share/doc (install e.g. python3-doc, "
                                "postgresql-doc or rust-doc)")
    tmp = path.with_name(path.name + ".tmp")
    records = 0
    html_bytes = 0
    mirror = 0
    bar = tqdm(total=target_bytes, unit="B", unit_scale=True, desc=f"writing {path.name}", disable=not progress)
    with open(tmp, "wb") as f:
        while f.tell() < target_bytes:
            for p in files:
                data = doc_records(p, f"http://docs-{mirror}.mirror.test{p.as_posix()}", mirror)
                f.write(data)
                bar.update(len(data))
                records += 1
                html_bytes += p.stat().st_size
                if f.tell() >= target_bytes:
                    break
            mirror += 1
        size = f.tell()
    bar.close()
    os.replace(tmp, path)
    return {"path": str(path), "bytes": size, "responses": records, "html_bytes": html_bytes, "mirrors": mirror,
            "source_files": len(files)}


def warc_prefix(src: Path, dst: Path, target_bytes: int) -> int:
    """Copy the records of ``src`` that start before ``target_bytes`` into ``dst`` (cut at the first record
    boundary at or after it); returns the bytes written."""
    from gym_crawl.web.warc_tasks import record_boundary

    end = record_boundary(src, target_bytes)
    tmp = dst.with_name(dst.name + ".tmp")
    with open(src, "rb") as fi, open(tmp, "wb") as fo:
        left = end
        while left > 0:
            block = fi.read(min(left, 1 << 24))
            if not block:
                break
            fo.write(block)
            left -= len(block)
    os.replace(tmp, dst)
    return end


# ------------------------------------------------------------------------------------- one compile

class Sampler(threading.Thread):
    """Samples the RSS and CPU seconds of named processes and the load average every ``interval`` seconds."""

    def __init__(self, procs: dict[str, int], interval: float) -> None:
        import psutil

        super().__init__(daemon=True)
        self.procs = {name: psutil.Process(pid) for name, pid in procs.items()}
        self.interval = interval
        self.samples: list[dict[str, Any]] = []
        self.peak: dict[str, float] = dict.fromkeys(procs, 0.0)
        self.cpu: dict[str, float] = dict.fromkeys(procs, 0.0)
        self._halt = threading.Event()
        self.t0 = time.perf_counter()

    def sample(self) -> None:
        row: dict[str, Any] = {"t": round(time.perf_counter() - self.t0, 3), "load1": os.getloadavg()[0], "rss_mb": {}}
        for name, p in self.procs.items():
            try:
                rss = p.memory_info().rss / 2**20
                ct = p.cpu_times()
            except Exception:  # noqa: BLE001 - a process that ended keeps its last figures
                continue
            row["rss_mb"][name] = round(rss, 1)
            self.peak[name] = max(self.peak[name], rss)
            self.cpu[name] = ct.user + ct.system + ct.children_user + ct.children_system
        self.samples.append(row)

    def run(self) -> None:
        while not self._halt.wait(self.interval):
            self.sample()

    def stop(self) -> None:
        self._halt.set()
        self.join()
        self.sample()


def max_rss_mb() -> float:
    """This process' peak RSS over its life in MB (the kernel's ``ru_maxrss``: no peak falls between two samples)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def corpus_bytes(c: Any) -> int:
    """Bytes of a corpus' arrays and string tables (what holding it costs)."""
    import numpy as np

    n = 0
    for v in vars(c).values():
        if isinstance(v, np.ndarray):
            n += v.nbytes
        elif hasattr(v, "blob") and hasattr(v, "offsets"):
            n += v.blob.nbytes + v.offsets.nbytes
    return n


def compile_one(path: Path, interval: float, segment_bytes: int, chunk_pages: int,
                cache: bool = True) -> dict[str, Any]:
    """Compile ``path`` on a fresh ``LocalCluster(n_workers=2)`` with a progress bar, sampling every process (with
    ``cache``: into a temporary data cache, returned memory-mapped)."""
    import psutil
    from distributed import Client

    from gym_crawl.web.warc import load_warc
    from gym_crawl.web.warc_tasks import local_cluster

    data = Path(tempfile.mkdtemp(prefix="warc_dask_data_"))
    os.environ["GYM_CRAWL_DATA"] = str(data)
    cluster = local_cluster(2)  # the cluster load_warc(engine="dask") starts itself
    client = Client(cluster)
    pids = client.run(os.getpid)
    procs = {"client + scheduler": os.getpid()}
    worker_name = {}
    for k, (addr, pid) in enumerate(sorted(pids.items())):
        procs[f"worker {k}"] = pid
        worker_name[addr] = f"worker {k}"
        if psutil.Process(pid).ppid() != os.getpid():  # a nanny of its own (LocalCluster's run in this process)
            procs[f"nanny {k}"] = psutil.Process(pid).ppid()
    sampler = Sampler(procs, interval)
    sampler.sample()
    cpu0 = dict(sampler.cpu)
    sampler.start()
    t_wall, t_cpu = time.perf_counter(), time.process_time()
    try:
        corpus = load_warc(path, engine="dask", cluster=client, cache=cache, progress=True,
                           segment_bytes=segment_bytes, chunk_pages=chunk_pages)
        wall = time.perf_counter() - t_wall
        own_cpu = time.process_time() - t_cpu
        sampler.sample()  # the corpus as returned (read into memory with --no-cache: a peak between two samples)
        pages, links, summary, held = corpus.n_pages, corpus.n_links, corpus.meta["warc_summary"], corpus_bytes(corpus)
        mapped = corpus.path is not None
        del corpus
        high = {"client + scheduler": max_rss_mb(), **{worker_name[a]: v for a, v in client.run(max_rss_mb).items()}}
    finally:
        sampler.stop()
        client.close()
        cluster.close()
        shutil.rmtree(data, ignore_errors=True)
    cpu = {k: sampler.cpu[k] - cpu0.get(k, 0.0) for k in sampler.cpu}
    cpu["client + scheduler"] = own_cpu
    total_cpu = sum(cpu.values())
    return {
        "file": str(path), "file_bytes": path.stat().st_size, "segments_of_mib": segment_bytes / 2**20,
        "chunk_pages": chunk_pages, "pages": pages, "links": links, "records": summary["records"],
        "duplicates": summary["duplicates"], "wall_s": wall, "cpu_s": total_cpu, "cpu_s_by_process": cpu,
        "pages_per_wall_s": pages / wall, "pages_per_cpu_s": pages / total_cpu,
        "mb_per_wall_s": path.stat().st_size / 1e6 / wall,
        "peak_rss_mb": {k: round(v, 1) for k, v in sampler.peak.items()},
        "max_rss_mb": {k: round(v, 1) for k, v in high.items()},
        "corpus_mb": held / 2**20, "corpus_memory_mapped": mapped, "cache": cache,
        "load1": {"start": sampler.samples[0]["load1"], "max": max(s["load1"] for s in sampler.samples),
                  "mean": sum(s["load1"] for s in sampler.samples) / len(sampler.samples)},
        "samples": sampler.samples,
    }


# ---------------------------------------------------------------------------- one process' heap, segment by segment

def _smaps_mb() -> dict[str, float]:
    """This process' resident memory from ``/proc/self/smaps_rollup``: ``rss``, ``anonymous``, ``file`` (MB)."""
    d: dict[str, float] = {}
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and p[-1] == "kB":
                d[p[0].rstrip(":")] = int(p[1]) / 1024
    return {"rss": d["Rss"], "anonymous": d["Anonymous"], "file": d["Rss"] - d["Anonymous"]}


def _mallinfo_mb() -> dict[str, float]:
    """glibc's ``mallinfo2`` over every arena (MB): ``heap`` (from the system), ``in_use`` (blocks in use),
    ``free`` (free inside the heap), ``mmapped`` (large blocks mapped on their own)."""
    import ctypes

    class MallInfo2(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                    "fsmblks", "uordblks", "fordblks", "keepcost")]

    fn = ctypes.CDLL(None).mallinfo2
    fn.restype = MallInfo2
    m = fn()
    return {"heap": m.arena / 2**20, "in_use": m.uordblks / 2**20, "free": m.fordblks / 2**20,
            "mmapped": m.hblkhd / 2**20}


def heap_run(path: Path, segments: int, segment_bytes: int, release: bool) -> dict[str, Any]:
    """Parse the first ``segments`` segments of ``path`` one after another in this process, as a Dask worker does
    (``parse_warc_file`` of each range; its chunks deleted after each), and after each segment read the process'
    memory: RSS (anonymous / file-backed), glibc's heap (in use / free inside it), the Python heap tracemalloc
    does not see. ``release=False``: with :func:`~gym_crawl.web.warc_tasks.release_free_heap` made a no-op (the
    code before the heap was given back after each segment)."""
    import gym_crawl.web.warc_tasks as tasks
    from gym_crawl.web.warc import WarcOptions, parse_warc_file

    if not release:
        tasks.release_free_heap = lambda: False
    plan = tasks.plan_tasks([path], segment_bytes)[:segments]
    rows: list[dict[str, Any]] = [{"after": "imports", **_smaps_mb(), **_mallinfo_mb(), "max_rss": max_rss_mb()}]
    cpu = 0.0
    with tempfile.TemporaryDirectory(prefix="warc_heap_") as wd:
        for i, t in enumerate(plan):
            c0 = time.process_time()
            r = parse_warc_file(t.path, wd, i, WarcOptions(), t.start, t.end)
            cpu += time.process_time() - c0
            rows.append({"after": f"segment {i}", "pages": sum(c["pages"] for c in r["chunks"]),
                         "chunks": len(r["chunks"]), **_smaps_mb(), **_mallinfo_mb(), "max_rss": max_rss_mb()})
            for c in r["chunks"]:
                Path(c["path"]).unlink()
    return {"release": release, "segments": len(plan), "cpu_s": cpu,
            "pages": sum(r.get("pages", 0) for r in rows), "rows": rows}


# ---------------------------------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="gym-crawl bench warc_dask", description=__doc__.split("\n\n")[0])
    ap.add_argument("--gb", type=float, default=1.0, help="size of the gzipped WARC in GiB (default 1)")
    ap.add_argument("--sizes", default="0.25,1", help="GiB prefixes compiled, comma-separated (default 0.25,1; "
                                                      "each ≤ --gb)")
    ap.add_argument("--work-dir", type=Path, default=None,
                    help="where the WARC is built (default: a temporary folder, removed at the end); a WARC "
                         "already there of the right size is reused")
    ap.add_argument("--keep", action="store_true", help="keep the WARC files in --work-dir")
    ap.add_argument("--segment-mb", type=int, default=16, help="segment size in MiB (load_warc's segment_bytes)")
    ap.add_argument("--chunk-pages", type=int, default=2000, help="pages per shard chunk (default 2000)")
    ap.add_argument("--interval", type=float, default=1.0, help="seconds between memory samples (default 1)")
    ap.add_argument("--no-cache", action="store_true",
                    help="compile with cache=False (the corpus read into memory) instead of into a temporary cache")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--heap", type=int, default=0, metavar="SEGMENTS",
                    help="instead of the Dask compiles: parse the first SEGMENTS segments of the smallest size one "
                         "after another in one process, with and without the heap given back after each one "
                         "(fresh processes, alternating, --heap-rounds each), memory after each segment "
                         "(heap.json in --out; Linux with glibc)")
    ap.add_argument("--heap-rounds", type=int, default=2, help="runs of each variant with --heap (default 2)")
    ap.add_argument("--heap-run", choices=("on", "off"), default=None, help=argparse.SUPPRESS)
    ap.add_argument("--compile", type=Path, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--json", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.compile is not None and args.heap_run is not None:  # one heap run, in this (fresh) process
        r = heap_run(args.compile, args.heap, args.segment_mb << 20, args.heap_run == "on")
        args.json.write_text(json.dumps(r))
        return 0
    if args.compile is not None:  # one compile, in this (fresh) process
        r = compile_one(args.compile, args.interval, args.segment_mb << 20, args.chunk_pages, not args.no_cache)
        args.json.write_text(json.dumps(r))
        return 0
    if args.heap < 0 or args.heap_rounds < 1:
        ap.error(f"--heap {args.heap} / --heap-rounds {args.heap_rounds}: segments must be ≥ 0, rounds ≥ 1")
    sizes = sorted(float(x) for x in args.sizes.split(","))
    if not sizes or sizes[0] <= 0 or sizes[-1] > args.gb:
        ap.error(f"--sizes {args.sizes!r}: each size must be > 0 and ≤ --gb {args.gb}")
    own = args.work_dir is None
    work = Path(tempfile.mkdtemp(prefix="warc_dask_")) if own else args.work_dir.expanduser()
    work.mkdir(parents=True, exist_ok=True)
    made: list[Path] = []
    from gym_crawl.benchmarks.report import about

    out: dict[str, Any] = {"about": about("warc_dask", args), "cpus": os.cpu_count(), "runs": []}
    try:
        big = work / f"docs-{args.gb:g}gib.warc.gz"
        target = int(args.gb * 2**30)
        if not (big.exists() and big.stat().st_size >= target):
            t, c = time.perf_counter(), time.process_time()
            out["warc"] = build_warc(big, target, doc_html_files())
            out["warc"].update(wall_s=time.perf_counter() - t, cpu_s=time.process_time() - c)
            made.append(big)
        else:
            out["warc"] = {"path": str(big), "bytes": big.stat().st_size, "reused": True}
        print(f"WARC: {big} ({big.stat().st_size / 2**30:.2f} GiB gzipped)", flush=True)
        if args.heap:
            heap_rounds(_sized(big, work, sizes[0], args.gb, made), args, work, out)
            return 0
        for gib in sizes:
            path = _sized(big, work, gib, args.gb, made)
            res = work / f"run-{gib:g}.json"
            print(f"compiling {path.name} ({path.stat().st_size / 2**30:.2f} GiB) on Dask, 2 workers", flush=True)
            subprocess.run([sys.executable, "-m", "gym_crawl.benchmarks.warc_dask", "--compile", str(path),
                            "--json", str(res), "--interval", str(args.interval), "--segment-mb",
                            str(args.segment_mb), "--chunk-pages", str(args.chunk_pages),
                            *(["--no-cache"] if args.no_cache else [])], check=True)
            run = json.loads(res.read_text())
            res.unlink()
            run["gib"] = gib
            out["runs"].append(run)
            print(summary_line(run), flush=True)
            write_outputs(out, args.out)  # after every size, so a long run keeps what it measured
    finally:
        if own:
            shutil.rmtree(work, ignore_errors=True)
        elif not args.keep:
            for p in made:
                p.unlink(missing_ok=True)
    print(f"wrote {args.out / 'warc_dask.json'} and warc_dask.png")
    return 0


def heap_rounds(path: Path, args: argparse.Namespace, work: Path, out: dict[str, Any]) -> None:
    """``--heap``: :func:`heap_run` in fresh processes, without and with the heap given back, alternating, for
    ``--heap-rounds`` rounds; ``heap.json`` in ``--out``."""
    from gym_crawl._io import atomic_write_json

    out["heap"] = []
    for k in range(args.heap_rounds):
        for variant in ("off", "on"):
            res = work / f"heap-{variant}-{k}.json"
            subprocess.run([sys.executable, "-m", "gym_crawl.benchmarks.warc_dask", "--compile", str(path),
                            "--json", str(res), "--heap", str(args.heap), "--heap-run", variant,
                            "--segment-mb", str(args.segment_mb)], check=True)
            run = json.loads(res.read_text())
            res.unlink()
            run.update(file=str(path), load1=os.getloadavg()[0])
            out["heap"].append(run)
            last = run["rows"][-1]
            print(f"heap given back {variant}: {run['pages']} pages, {run['cpu_s']:.1f} CPU-s; after the last "
                  f"segment RSS {last['rss']:.0f} MB (heap in use {last['in_use']:.0f}, free in it "
                  f"{last['free']:.0f}), peak {last['max_rss']:.0f} MB", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(args.out / "heap.json", out)
    print(f"wrote {args.out / 'heap.json'}")


def _sized(big: Path, work: Path, gib: float, full: float, made: list[Path]) -> Path:
    """The WARC of ``gib`` GiB: ``big`` itself or its prefix in ``work`` (made once; listed in ``made``)."""
    if gib >= full:
        return big
    path = work / f"docs-{gib:g}gib.warc.gz"
    if not path.exists():
        warc_prefix(big, path, int(gib * 2**30))
        made.append(path)
    return path


def summary_line(r: dict[str, Any]) -> str:
    peaks = ", ".join(f"{k} {v:.0f}" for k, v in r.get("max_rss_mb", r["peak_rss_mb"]).items())
    return (f"{r['file_bytes'] / 2**30:.2f} GiB: {r['pages']} pages, {r['links']} links in {r['wall_s']:.0f} s wall, "
            f"{r['cpu_s']:.0f} CPU-s ({r['pages_per_cpu_s']:.0f} pages per CPU-s, {r['pages_per_wall_s']:.0f} per "
            f"wall s); peak RSS MB: {peaks}; corpus {r['corpus_mb']:.0f} MB; load {r['load1']['mean']:.1f}")


def write_outputs(out: dict[str, Any], folder: Path) -> None:
    from gym_crawl._io import atomic_write_json

    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_json(folder / "warc_dask.json", out)
    plot(out, folder / "warc_dask.png")


def plot(out: dict[str, Any], path: Path) -> None:
    from gym_crawl.benchmarks.plotting import pyplot, save_png

    plt = pyplot()
    runs = out["runs"]
    fig, axes = plt.subplots(1, len(runs), figsize=(6.5 * len(runs), 4.2), squeeze=False, sharey=True)
    for ax, r in zip(axes.flat, runs):
        names = list(r["peak_rss_mb"])
        t = [s["t"] for s in r["samples"]]
        for name in names:
            ax.plot(t, [s["rss_mb"].get(name, float("nan")) for s in r["samples"]], label=name, lw=1.2)
        ax.set_title(f"{r['file_bytes'] / 2**30:.2f} GiB gzipped WARC: {r['pages']:,} pages\n"
                     f"{r['wall_s']:.0f} s wall, {r['pages_per_cpu_s']:.0f} pages per CPU-s, load "
                     f"{r['load1']['mean']:.1f}", fontsize=9)
        ax.set_xlabel("seconds")
        ax.grid(alpha=0.3)
    axes.flat[0].set_ylabel("RSS (MB)")
    axes.flat[0].legend(fontsize=8)
    fig.suptitle("WARC compile on Dask (LocalCluster, 2 workers): RSS of each process over time")
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    save_png(fig, path)


if __name__ == "__main__":
    raise SystemExit(main())
