"""Helpers several test modules share (imported as ``tests.helpers``)."""
from __future__ import annotations

import dataclasses
import json
import random
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np


def fetch_now(web: Any, page: int) -> str:
    """Fetch ``page`` of a live web now, as the env does (request it, take arrivals until it is among them);
    returns its fetch error (``""`` for a page)."""
    if web.is_fetched(page):
        return web.fetch_error(page)
    web.request(page)
    while page not in web.arrived(True).pages:
        pass
    return web.fetch_error(page)


def wait_for(cond: Callable[[], Any], proc: subprocess.Popen, limit: float = 60.0, poll: float = 0.02) -> None:
    """Check ``cond()`` every ``poll`` seconds until it holds, ``limit`` seconds have passed or ``proc`` has ended; if
    it never held, kill ``proc`` and fail with its exit code and the end of its stderr."""
    deadline = time.monotonic() + limit
    while not cond() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(poll)
    if not cond():
        proc.kill()
        _, err = proc.communicate(timeout=30)
        err = err.decode() if isinstance(err, bytes) else err or ""
        raise AssertionError(f"the crawl never got there (rc {proc.returncode}): {err[-2000:]}")


def stop_timed(proc: subprocess.Popen, sig: signal.Signals, timeout: float = 60.0) -> tuple[Any, Any, float]:
    """Send ``sig`` to ``proc`` and wait up to ``timeout`` seconds for it to end: ``(stdout, stderr, seconds from
    the signal to the end)``."""
    t0 = time.monotonic()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=timeout)
    return out, err, time.monotonic() - t0


def decisions_in(warc: Path) -> int:
    """The crawl decisions a live crawl's WARC holds so far (0 while there is no file or a record is half written)."""
    from gym_crawl.web.warc_io import read_decisions

    try:
        return sum(1 for _ in read_decisions(warc)) if warc.exists() else 0
    except Exception:  # noqa: BLE001 - a record being written (any reader error): read the file again later
        return 0


def valid_warc(path: Path) -> dict[str, int]:
    """Record counts by type, read with warcio and with FastWARC (both must read every record)."""
    from fastwarc.warc import ArchiveIterator as FastIterator
    from warcio.archiveiterator import ArchiveIterator

    with open(path, "rb") as f:
        a = [r.rec_type for r in ArchiveIterator(f)]
    with open(path, "rb") as f:
        b = [r.record_id for r in FastIterator(f, parse_http=False)]
    assert len(a) == len(b) > 0
    counts: dict[str, int] = {}
    for t in a:
        counts[t] = counts.get(t, 0) + 1
    return counts


def interrupt_after(proc: subprocess.Popen, warc: Path, decisions: int, limit: float = 120.0) -> dict[str, Any]:
    """Let a live ``gym-crawl crawl --live … --json`` (``proc``, text mode) record ``decisions`` crawl decisions in
    ``warc``, stop it with SIGINT and return the JSON summary it printed; fails unless it was still running at the
    signal and exited 130 (128 + SIGINT)."""
    try:
        wait_for(lambda: decisions_in(warc) >= decisions, proc, limit=limit, poll=0.3)
        assert proc.poll() is None, "the crawl ended before it was interrupted"
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr  # interrupted: 128 + SIGINT, after the summary and a closed WARC
    return dict(json.loads(stdout.strip().splitlines()[-1]))


def jittered(site: Any, seed: int) -> Any:
    """Make every page of a served corpus (``serve_corpus``) answer after a random 0-40 ms, so completions come in
    varied orders; returns ``site``."""
    rng = random.Random(seed)
    for label in site.hosts:
        routes = site._routes[label]
        for path, route in list(routes.items()):
            if callable(route) and path.startswith("/wiki/"):
                delay = rng.uniform(0.0, 0.04)
                routes[path] = (lambda t, r=route, d=delay: dataclasses.replace(r(t), delay=d))
    return site


def random_crawl(env: Any, steps: int, seed: int = 0) -> Any:
    """Reset ``env`` with ``seed`` and take up to ``steps`` valid actions drawn by ``np.random.default_rng(seed)``,
    stopping when the episode ends; returns ``env``."""
    _, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        valid = np.flatnonzero(info["action_mask"])
        _, _, term, trunc, info = env.step(int(rng.choice(valid)))
        if term or trunc:
            break
    return env


def is_memory_mapped(a: Any) -> bool:
    """Whether an array's memory comes from a file mapping (``np.memmap`` or ``mmap.mmap``, or a view of one)."""
    import mmap

    while a is not None:
        if isinstance(a, (np.memmap, mmap.mmap)):
            return True
        a = getattr(a, "base", None)
    return False


class SiteFetch:
    """``fetch(url)`` over an in-memory site ``{url: HTML bytes}`` (404 for any other URL), recording the URLs asked
    in ``requests``."""

    def __init__(self, site: dict[str, bytes]):
        self.site = site
        self.requests: list[str] = []

    def __call__(self, url: str) -> SimpleNamespace:
        self.requests.append(url)
        body = self.site.get(url)
        if body is None:
            return SimpleNamespace(url=url, final_url=url, status=404, body=b"", content_type="text/html",
                                   error="http-404")
        return SimpleNamespace(url=url, final_url=url, status=200, body=body, content_type="text/html", error=None)
