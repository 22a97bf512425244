"""The parse tasks of a WARC compile: files split into byte ranges at record boundaries, run over local processes
or a Dask cluster, and their results merged back into one per file.

A ``.warc.gz`` written as crawlers write it (one gzip member per record, as the WARC standard recommends) starts a
record wherever a gzip member starts; an uncompressed ``.warc`` wherever a ``WARC/1.x`` header line follows the
previous record's blank lines. :func:`record_boundary` finds the first record start at or after a byte offset,
checking each candidate (a gzip member must decompress to a WARC header; an uncompressed header must declare a
``Content-Length`` that ends exactly where the next record or the file begins). :func:`split_ranges` cuts a file
into ranges of about ``segment_bytes``; a range that would start inside a gzip member holding many records (a
file gzipped whole) is never made: the file stays one range. :class:`RangeReader` gives a WARC reader the bytes
of one range only, so it stops at the range's end.
"""
from __future__ import annotations

import ctypes
import os
import re
import zlib
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from gym_crawl.registry import install_command

__all__ = ["SEGMENT_BYTES", "ParseTask", "RangeReader", "local_cluster", "merge_segments", "plan_tasks",
           "record_boundary", "release_free_heap", "run_dask", "run_processes", "split_ranges"]

SEGMENT_BYTES = 16 << 20
"""Default segment size: files larger than 16 MiB are parsed in segments (a 1 GiB file in 64 tasks: both workers busy
to the end, and a progress bar that moves)."""

_GZIP_MAGIC = b"\x1f\x8b\x08"
_HEADER = re.compile(rb"\r\n\r\nWARC/1\.[01]\r\n")
_WINDOW = 1 << 22
"""Bytes read at a time while searching for a boundary."""
_CHECK = 1 << 16
"""Bytes a gzip candidate is decompressed from."""
_LENGTH = re.compile(rb"\r\nContent-Length:[ \t]*(\d+)[ \t]*\r\n", re.IGNORECASE)


def _is_gzip(f: BinaryIO) -> bool:
    f.seek(0)
    return f.read(2) == _GZIP_MAGIC[:2]


def _gzip_member_is_record(f: BinaryIO, pos: int) -> bool:
    """Whether a gzip member starting at ``pos`` decompresses to the start of a WARC record."""
    f.seek(pos)
    try:
        head = zlib.decompressobj(31).decompress(f.read(_CHECK), 16)
    except zlib.error:
        return False
    return head.startswith((b"WARC/1.0\r\n", b"WARC/1.1\r\n"))


def _plain_header_is_record(f: BinaryIO, pos: int, size: int) -> bool:
    """Whether an uncompressed record header at ``pos`` declares a block that ends (with its ``CRLF CRLF``)
    exactly at the file's end or at another ``WARC/1.x`` header."""
    f.seek(pos)
    head = f.read(_CHECK)
    end = head.find(b"\r\n\r\n")
    m = _LENGTH.search(head, 0, end + 2) if end >= 0 else None
    if m is None:
        return False
    nxt = pos + end + 4 + int(m.group(1))
    f.seek(nxt)
    tail = f.read(14)
    return tail[:4] == b"\r\n\r\n" and (nxt + 4 == size or tail[4:].startswith((b"WARC/1.0\r\n", b"WARC/1.1\r\n")))


def record_boundary(path: str | os.PathLike, offset: int) -> int:
    """The byte offset of the first record of the WARC file ``path`` that starts at or after ``offset`` (the
    file's size when none does; 0 for ``offset`` ≤ 0)."""
    size = os.path.getsize(path)
    if offset <= 0:
        return 0
    if offset >= size:
        return size
    with open(path, "rb") as f:
        gz = _is_gzip(f)
        pos = offset
        while pos < size:
            base = pos if gz else max(0, pos - 4)  # a plain header's match starts with the CRLF CRLF before it
            f.seek(base)
            window = f.read(_WINDOW + 16)
            if not window:
                break
            if gz:
                i = window.find(_GZIP_MAGIC)
                while 0 <= i < _WINDOW:
                    if _gzip_member_is_record(f, pos + i):
                        return pos + i
                    i = window.find(_GZIP_MAGIC, i + 1)
            else:
                for m in _HEADER.finditer(window):
                    start = base + m.start() + 4
                    if start >= pos + _WINDOW:
                        break
                    if start >= offset and _plain_header_is_record(f, start, size):
                        return start
            pos += _WINDOW
    return size


def split_ranges(path: str | os.PathLike, segment_bytes: int | None) -> list[tuple[int, int]]:
    """``[(start, end), …]`` byte ranges covering the file ``path`` in order, each starting at a record boundary
    and about ``segment_bytes`` long (the whole file when it is not larger, or ``segment_bytes`` is ``None``)."""
    size = os.path.getsize(path)
    if segment_bytes is None or size <= segment_bytes:
        return [(0, size)]
    if segment_bytes < 1:
        raise ValueError(f"segment_bytes must be ≥ 1 or None, got {segment_bytes!r}")
    cuts = [0]
    for k in range(1, -(-size // segment_bytes)):
        b = record_boundary(path, max(k * segment_bytes, cuts[-1] + 1))
        if b >= size:
            break
        if b > cuts[-1]:
            cuts.append(b)
    cuts.append(size)
    return list(zip(cuts[:-1], cuts[1:]))


class RangeReader:
    """A read-only binary stream of the bytes ``[start, end)`` of a file (``tell`` gives file offsets), for a WARC
    reader that must stop at a range's end."""

    def __init__(self, path: str | os.PathLike, start: int, end: int) -> None:
        self._f = open(Path(path), "rb")  # noqa: SIM115 - closed by close() / the context manager
        self._f.seek(start)
        self._left = max(0, end - start)

    def read(self, n: int | None = -1) -> bytes:
        if self._left <= 0:
            return b""
        k = self._left if n is None or n < 0 else min(n, self._left)
        data = self._f.read(k)
        self._left -= len(data)
        return data

    def tell(self) -> int:
        return self._f.tell()

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> RangeReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ------------------------------------------------------------------------------------------- memory

_MALLOC_TRIM: Any = None
"""glibc's ``malloc_trim`` once looked up (``False``: this C library has none)."""


def release_free_heap() -> bool:
    """Give the free pages inside the C heap back to the system (glibc's ``malloc_trim(0)``, every arena); returns
    whether the C library has it (not on macOS, Windows or musl: then nothing is done).

    A parse task frees a shard chunk's buffers (its pages' texts, token ids and links: up to ≈ 150 MB for a chunk
    of large pages) and the parse trees of its pages, but glibc keeps the freed space inside its heap, scattered
    between the blocks still in use, so a process that has parsed a few segments holds 120–200 MB of free heap it
    never returns (its RSS climbing segment after segment): :func:`~gym_crawl.web.warc.parse_warc_file` calls
    this once its chunks are written (≈ 10 ms; once a task, not once a chunk: pages given back are faulted in
    again by the next chunk's buffers, which costs CPU). Python objects themselves are not touched."""
    global _MALLOC_TRIM
    if _MALLOC_TRIM is None:
        try:
            _MALLOC_TRIM = ctypes.CDLL(None).malloc_trim
            _MALLOC_TRIM.argtypes, _MALLOC_TRIM.restype = [ctypes.c_size_t], ctypes.c_int
        except (OSError, AttributeError, TypeError):
            _MALLOC_TRIM = False
    if _MALLOC_TRIM is False:
        return False
    _MALLOC_TRIM(0)
    return True


# ------------------------------------------------------------------------------------------- tasks

@dataclass(frozen=True)
class ParseTask:
    """One parse call: the bytes ``[start, end)`` of file number ``file_index`` (``whole``: the file entire)."""

    path: Path
    file_index: int
    start: int
    end: int
    whole: bool


def plan_tasks(files: list[Path], segment_bytes: int | None) -> list[ParseTask]:
    """The parse tasks of ``files`` in record order: each file whole, or in segments of about ``segment_bytes``."""
    out: list[ParseTask] = []
    for i, f in enumerate(files):
        ranges = split_ranges(f, segment_bytes)
        out.extend(ParseTask(f, i, a, b, len(ranges) == 1) for a, b in ranges)
    return out


def merge_segments(parts: list[dict[str, Any]], max_broken: int) -> list[dict[str, Any]]:
    """One result per file (``index`` = its file number), as a whole-file parse gives it, from its tasks' results
    (each with ``index``, its task number, and ``file_index``): a segment that ends unreadable ends the file (the
    segments after it are dropped, as a whole-file read stops there); at most ``max_broken`` broken examples."""
    out: list[dict[str, Any]] = []
    for p in sorted(parts, key=lambda r: r["index"]):
        fi = p["file_index"]
        if out and out[-1]["index"] == fi:
            r = out[-1]
            if r["unreadable"] is not None:
                continue
            r["chunks"] = r["chunks"] + p["chunks"]
            sk = Counter(r["skipped"])
            sk.update(p["skipped"])
            r["skipped"] = dict(sk)
            r["records"] += p["records"]
            r["unreadable"] = p["unreadable"]
            r["broken"] = (r["broken"] + p["broken"])[:max_broken]
            r["extract_fallback"] += p["extract_fallback"]
            r["seeds"] = r["seeds"] + [u for u in p["seeds"] if u not in r["seeds"]]
            if p["not_in_crawl_seen"]:
                r["not_in_crawl"], r["not_in_crawl_seen"] = p["not_in_crawl"], True
        else:
            out.append({**p, "index": fi})
    return out


ParseFn = Callable[[ParseTask, str, int, Any], dict[str, Any]]
"""``fn(task, work_dir, task_number, options)`` → the task's result (picklable: it runs in other processes)."""


def run_processes(fn: ParseFn, tasks: list[ParseTask], work_dir: Path, options: Any, workers: int | None,
                  bar: Any) -> list[dict[str, Any]]:
    """``fn`` over ``tasks`` in ``workers`` processes (default: one per task up to the CPU count; 1: in this
    process), ``bar`` (tqdm) advanced by each task's bytes as it ends. Results in completion order."""
    n = workers if workers is not None else min(len(tasks), os.cpu_count() or 1)
    out: list[dict[str, Any]] = []
    if n <= 1 or len(tasks) == 1:
        for i, t in enumerate(tasks):
            out.append(fn(t, str(work_dir), i, options))
            bar.update(t.end - t.start)
        return out
    with ProcessPoolExecutor(max_workers=min(n, len(tasks))) as ex:
        futures = {ex.submit(fn, t, str(work_dir), i, options): t for i, t in enumerate(tasks)}
        for fu in as_completed(futures):
            out.append(fu.result())
            bar.update(futures[fu].end - futures[fu].start)
    return out


def local_cluster(n_workers: int = 2) -> Any:
    """The ``LocalCluster`` a Dask compile starts when given none: ``n_workers`` processes of one thread, no
    dashboard, and the workers' statistical profiler off — its stack samples keep a finished task's frames, and
    with them the HTML parse trees of the page being extracted, alive until the profiler's thread drops them, which
    Resiliparse's trees refuse (they are bound to the thread that made them: each such tree leaks). On a cluster of
    your own, set ``distributed.worker.profile.enabled: false`` in its Dask configuration for the same reason."""
    import dask
    from distributed import LocalCluster

    with dask.config.set({"distributed.worker.profile.enabled": False}):
        return LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None)


def run_dask(fn: ParseFn, tasks: list[ParseTask], work_dir: Path, options: Any, cluster: Any,
             bar: Any) -> list[dict[str, Any]]:
    """``fn`` over ``tasks`` on a Dask cluster (``client.map``; a worker runs one task per thread; ``cluster``: a
    ``distributed.Client``, a scheduler address, or ``None`` for a :func:`local_cluster` of the call), ``bar``
    advanced as each task ends. Returns the results in completion order (what follows — the join over the pages'
    URL hashes and the assembly — runs in the calling process, in memory bounded by the pages:
    :mod:`gym_crawl.web.warc_build`)."""
    try:
        from distributed import Client
        from distributed import as_completed as dask_completed
    except ImportError:
        raise ImportError(f"engine='dask' needs Dask: {install_command('cluster')}") from None
    own: list[Any] = []
    if cluster is None:
        lc = local_cluster()
        client = Client(lc)
        own = [client, lc]
    elif isinstance(cluster, Client):
        client = cluster
    else:
        client = Client(cluster)
        own = [client]
    try:
        futures = client.map(fn, tasks, [str(work_dir)] * len(tasks), range(len(tasks)), [options] * len(tasks),
                             pure=False)
        size = {f.key: t.end - t.start for f, t in zip(futures, tasks)}
        out = []
        for fu in dask_completed(futures):
            out.append(fu.result())
            bar.update(size[fu.key])
    finally:
        for o in own:
            o.close()
    return out
