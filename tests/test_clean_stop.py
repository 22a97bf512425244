"""A stop is a clean stop: SIGINT and SIGTERM end a live crawl within 2 s whatever is in flight, every response
received whole before the signal is in the WARC and a ``--resume`` requests none of them again; after SIGKILL a
resume requests at most the pages that were in flight; resuming a finished crawl adds nothing to its WARC; a
signal during the seeds' fetch exits ``128 + signal``. Checked from the loopback servers' own request logs."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gym_crawl.cli import main
from gym_crawl.web.serve.server import Response, html_page, serve_site
from gym_crawl.web.warc_io import read_fetches, readers_disagree
from tests.helpers import stop_timed, wait_for

MEDIUM = [f"m{i}" for i in range(5)]  # done ~1 s after their request: after the last step, before the signal
SLOW = [f"s{i}" for i in range(5)]  # still in flight at the signal


def _page(label: str, pace: float) -> Response:
    return Response(html_page(label, "<p>" + "geology " * 300 + "</p>"), trickle=pace, chunk=256)


def _argv(site, warc: Path, steps: int, *extra: str) -> list[str]:
    return [sys.executable, "-m", "gym_crawl", "crawl", "--live", site.url("a", "/"), "--agent", "best-first",
            "--topic", "geology", "--steps", str(steps), "--warc", str(warc), "--delay", "0", "--rate", "0",
            "--concurrency", "16", "--scope", "any", "--capacity", "200", "--text", "none", *extra]


def _start(site, argv: list[str]) -> subprocess.Popen:
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})


def _hostile_site():
    labels = ["a", *MEDIUM, *SLOW]
    site = serve_site({k: {"/robots.txt": Response(b"User-agent: *\nDisallow:\n", content_type="text/plain")}
                       for k in labels})
    for k in MEDIUM:
        site.set_route(k, "/p", _page(k, 0.1))
    for k in SLOW:
        site.set_route(k, "/p", _page(k, 3.0))
    # more links than steps, the others off-topic: the agent dispatches the geology pages and the episode ends
    # with them in flight (the drain), not waiting on an empty frontier
    extra = [(f"/x{i}", "privacy policy terms") for i in range(10)]
    for path, _ in extra:
        site.set_route("a", path, html_page("Terms", "<p>terms</p>"))
    site.set_route("a", "/", html_page("Start", "<p>geology</p>",
                                       [(site.url(k, "/p"), f"geology rocks minerals {k}") for k in [*MEDIUM, *SLOW]]
                                       + extra))
    return site


def _pages(site) -> list:
    """The page requests the site logged (not robots.txt, not the seed)."""
    return [r for r in site.requests() if r.path not in ("/", "/robots.txt")]


def _requested(site, labels) -> set[str]:
    return {r.host for r in _pages(site) if r.host in labels}


def _whole_before(site, t: float) -> set[str]:
    """Pages whose response the server wrote to its end before ``t`` (every body byte sent, the log's ``end``
    stamped just before the last one)."""
    return {r.host for r in site.requests() if r.path == "/p" and not r.client_closed and r.end < t
            and r.bytes_sent == len(_page(r.host, 0.0).body)}


def _wait_for_the_drain(site, proc: subprocess.Popen, steps: int) -> None:
    """Wait until every page is requested (the last step is done) and the medium pages, which land during the
    drain, were received whole."""
    wait_for(lambda: len(_pages(site)) == steps, proc, limit=90)
    wait_for(lambda: _whole_before(site, time.monotonic()) >= _requested(site, MEDIUM), proc, limit=20)


def _resume(site, warc: Path, steps: int) -> set[str]:
    """Make the slow pages answer at once and resume the crawl to its end: the hosts whose page it requested."""
    for k in SLOW:
        site.set_route(k, "/p", _page(k, 0.0))
    t_resume = time.monotonic()
    again = subprocess.run(_argv(site, warc, steps, "--resume"), capture_output=True, timeout=120)
    assert again.returncode == 0, again.stderr.decode()[-2000:]
    return {r.host for r in site.requests() if r.start > t_resume and r.path == "/p"}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_last_pages_drain_loses_nothing_received(tmp_path, sig):
    warc = tmp_path / "drain.warc.gz"
    steps = len(MEDIUM) + len(SLOW)
    with _hostile_site() as site:
        proc = _start(site, _argv(site, warc, steps))
        try:
            _wait_for_the_drain(site, proc, steps)
            time.sleep(0.3)
            t_sig = time.monotonic()
            out, err, took = stop_timed(proc, sig)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 128 + sig, err.decode()[-2000:]
        assert took <= 2.0, f"exit {took:.2f} s after {sig.name}"
        received = _whole_before(site, t_sig)
        assert len(received) >= 3 and received >= _requested(site, MEDIUM)
        assert readers_disagree(warc) is None
        recorded = {r.url for r in read_fetches(warc) if r.error is None}
        assert {site.url(k, "/p") for k in received} <= recorded, "a response received whole is not in the WARC"
        # resume: nothing received is requested again
        refetched = _resume(site, warc, steps)
        assert not refetched & received, f"resume requested again {sorted(refetched & received)}"


def test_after_sigkill_a_resume_requests_at_most_the_pages_in_flight(tmp_path):
    warc = tmp_path / "killed.warc.gz"
    steps = len(MEDIUM) + len(SLOW)
    with _hostile_site() as site:
        proc = _start(site, _argv(site, warc, steps))
        try:
            _wait_for_the_drain(site, proc, steps)
            time.sleep(0.5)
            t_kill = time.monotonic()
            proc.kill()
            proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        received = _whole_before(site, t_kill)
        in_flight = {r.host for r in site.requests() if r.path == "/p"} - received
        refetched = _resume(site, warc, steps)
        assert refetched <= in_flight, f"resume requested pages received before the kill: {refetched - in_flight}"


def test_resuming_a_finished_crawl_adds_nothing_to_its_warc(tmp_path):
    warc = tmp_path / "done.warc.gz"
    with _hostile_site() as site:
        for k in SLOW:
            site.set_route(k, "/p", _page(k, 0.0))
        first = subprocess.run(_argv(site, warc, 6), capture_output=True, timeout=120)
        assert first.returncode == 0, first.stderr.decode()[-2000:]
        size, n, before = warc.stat().st_size, len(site.requests()), _records(warc)
        for _ in range(2):
            again = subprocess.run(_argv(site, warc, 6, "--resume"), capture_output=True, timeout=120)
            assert again.returncode == 0, again.stderr.decode()[-2000:]
            assert warc.stat().st_size == size, f"resume added {_records(warc)[len(before):]}"
            assert len(site.requests()) == n, f"resume requested {site.requests()[n:]}"


def _records(warc: Path) -> list[tuple[str, str]]:
    """``(type, target or metadata kind)`` of every record of ``warc``."""
    import json

    from warcio.archiveiterator import ArchiveIterator

    out = []
    with open(warc, "rb") as f:
        for r in ArchiveIterator(f):
            what = r.rec_headers.get_header("WARC-Target-URI") or ""
            if r.rec_type == "metadata":
                what = json.loads(r.content_stream().read()).get("kind", what)
            out.append((r.rec_type, what))
    return out


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_the_seed_fetch_exits_128_plus_the_signal(tmp_path, sig):
    with serve_site({"a": {"/": _page("a", 3.0)}}) as site:
        proc = _start(site, _argv(site, tmp_path / "seed.warc.gz", 5))
        try:
            wait_for(lambda: bool(site.requests("a", "/")), proc, limit=90)
            time.sleep(0.3)
            out, err, took = stop_timed(proc, sig)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 128 + sig, err.decode()[-2000:]
    assert took <= 2.0 and b"frontier is empty" not in err, err.decode()[-2000:]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_any_command_stopped_by_a_signal_says_so_and_exits_128_plus_it(sig):
    """SIGTERM unwinds the command as Ctrl-C does (``gym-crawl serve`` prints its request count), not outright."""
    proc = subprocess.Popen([sys.executable, "-m", "gym_crawl", "serve", "--demo", "--first-address", "40"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "PYTHONUNBUFFERED": "1"},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as from a terminal
    try:
        assert proc.stdout is not None
        proc.stdout.readline()  # the site is up
        time.sleep(0.3)
        out, err, took = stop_timed(proc, sig, timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + sig and b"served " in out and took <= 2.0, (proc.returncode, err.decode()[-500:])


def test_serve_stops_on_a_signal_the_kernel_gave_another_thread():
    """The kernel may hand a process' SIGINT to any of its threads (here: a thread other than the main one, as a
    server thread may receive it); CPython only flags it there, so ``gym-crawl serve``'s main thread must wake to act
    on it — it used to sleep on in one long ``time.sleep`` (until ``--duration``, or an hour)."""

    def interrupt_from_another_thread() -> None:
        time.sleep(1.0)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)

    # Ctrl-C raises KeyboardInterrupt, as in a terminal (a test run started in the background inherits SIGINT ignored)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        t = threading.Thread(target=interrupt_from_another_thread, daemon=True)
        t.start()
        t0 = time.monotonic()
        code = main(["serve", "--demo", "--first-address", "46", "--duration", "30"])
        took = time.monotonic() - t0
        t.join()
    finally:
        signal.signal(signal.SIGINT, before)
    assert code == 130 and took < 10, (code, took)
