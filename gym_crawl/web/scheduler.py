"""Fetches in flight: :class:`FetchScheduler` runs a :class:`~gym_crawl.web.fetcher.PoliteFetcher`'s fetches
on worker threads and hands back what completed, in completion order.

A *job* is a page fetch (``fetcher.fetch(url)``) or a robots.txt check (``fetcher.robots(url)``). Jobs run on a
pool of threads (urllib3 releases the interpreter lock while it waits on a socket, and so does the politeness
sleep), one thread per job in flight; the fetcher's per-origin lock keeps one connection and one request at a
time per origin, with its delay between them, however many threads wait for that origin. Completed jobs go to
a queue that :meth:`FetchScheduler.completed` drains on the caller's thread, which alone touches the web's
arrays and writes the WARC, so everything the crawl sees changes in one place and one order.

The scheduler knows nothing of pages, ids or the crawl; :class:`~gym_crawl.web.live.LiveWeb` uses it.
"""
from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

__all__ = ["FetchScheduler", "Job", "SyncJobs"]


class Job(NamedTuple):
    """One unit of work: ``kind`` ``"page"`` (fetch ``url``) or ``"robots"`` (read the robots.txt of ``url``'s
    origin); ``tag`` is the caller's (a page id, an origin)."""

    kind: str
    url: str
    tag: Any


class FetchScheduler:
    """Runs jobs on worker threads (see the module docstring).

    :param fetcher: the polite fetcher (``fetch(url)`` and ``robots(url)``); shared by every thread.
    :param max_workers: the most jobs running at once (threads are started as jobs need them).
    """

    def __init__(self, fetcher: Any, max_workers: int = 256):
        if isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1:
            raise ValueError(f"max_workers must be a positive integer, got {max_workers!r}")
        self.fetcher = fetcher
        self._pool = ThreadPoolExecutor(max_workers, thread_name_prefix="gym-crawl-fetch")
        self._done: queue.SimpleQueue[tuple[Job, Any, BaseException | None]] = queue.SimpleQueue()
        self._running = 0
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, job: Job) -> None:
        """Start ``job`` on a worker thread."""
        if self._closed:
            raise RuntimeError("FetchScheduler is closed")
        with self._lock:
            self._running += 1
        self._pool.submit(self._run, job)

    def _run(self, job: Job) -> None:
        try:
            out = self.fetcher.fetch(job.url) if job.kind == "page" else self.fetcher.robots(job.url)
            self._done.put((job, out, None))
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread, which raises it
            self._done.put((job, None, e))

    def fetch_now(self, url: str) -> Any:
        """Fetch the page ``url`` on the caller's thread, at once (outside the queue of jobs), by the same
        fetcher: its politeness holds across both."""
        return self.fetcher.fetch(url)

    @property
    def running(self) -> int:
        """Jobs submitted and not yet returned by :meth:`completed`."""
        return self._running

    def completed(self, block: bool, timeout: float | None = None) -> list[tuple[Job, Any]]:
        """The jobs completed since the last call, in completion order, as ``(job, result)``; with ``block``,
        waits for one when none has (up to ``timeout`` seconds, ``None``: as long as it takes) — unless no job
        is running. A job whose fetcher raised re-raises here."""
        out: list[tuple[Job, Any, BaseException | None]] = []
        if block and self._running and self._done.empty():
            with contextlib.suppress(queue.Empty):
                out.append(self._done.get(timeout=timeout))
        while True:
            try:
                out.append(self._done.get_nowait())
            except queue.Empty:
                break
        with self._lock:
            self._running -= len(out)
        for _, _, err in out:
            if err is not None:
                raise err
        return [(j, r) for j, r, _ in out]

    def close(self, wait: bool = True) -> list[tuple[Job, Any]]:
        """Stop taking jobs; with ``wait``, let the running ones finish (the fetcher's timeouts bound them) and
        return them. Idempotent."""
        if self._closed:
            return []
        self._closed = True
        self._pool.shutdown(wait=wait, cancel_futures=not wait)
        return self.completed(False) if wait else []


class SyncJobs:
    """The scheduler's interface over a plain function, on the caller's thread: jobs complete one at a time in
    submission order, when :meth:`completed` is asked to block (a test's fetch function, a replay's archive).

    :param fetch: ``fetch(url) -> result`` for page jobs.
    :param robots: ``robots(url) -> result`` for robots jobs.
    """

    def __init__(self, fetch: Callable[[str], Any], robots: Callable[[str], Any]):
        self._fetch, self._robots = fetch, robots
        self._queue: list[Job] = []

    def submit(self, job: Job) -> None:
        self._queue.append(job)

    def fetch_now(self, url: str) -> Any:
        """Fetch the page ``url`` at once with the fetch function."""
        return self._fetch(url)

    @property
    def running(self) -> int:
        return len(self._queue)

    def completed(self, block: bool, timeout: float | None = None) -> list[tuple[Job, Any]]:
        if not block or not self._queue:
            return []
        job = self._queue.pop(0)
        return [(job, self._fetch(job.url) if job.kind == "page" else self._robots(job.url))]

    def close(self, wait: bool = True) -> list[tuple[Job, Any]]:
        self._queue.clear()
        return []
