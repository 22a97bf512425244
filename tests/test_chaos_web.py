"""The standing chaos test: a live crawl of a seeded hostile web on loopback (:mod:`gym_crawl.web.serve.chaos`:
stalls, resets, robots.txt that fails part-way, redirect loops, 429/503, huge and broken bodies, trickles),
stopped by a signal mid-crawl — and, under ``-m slow``, during the final drain and by SIGKILL, over more seeds —
then resumed. Its invariants are checked from the servers' own request log, not from the crawler's account:

* robots.txt complete before any page of a host, and no page of a host whose robots.txt was not;
* never more requests in flight to a host than the per-host limit;
* the gap between the end of one response from a host and the next request to it at least the delay;
* nothing out of scope, nothing robots.txt disallows;
* every page received whole before the signal is in the WARC (nothing received lost);
* the resumed crawl requests no page (and no robots.txt) received whole before.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gym_crawl.web.serve.chaos import ROBOTS_OK, serve_chaos
from gym_crawl.web.urls import canonical_url
from gym_crawl.web.warc_io import read_fetches, readers_disagree
from tests.helpers import decisions_in, stop_timed, wait_for

DELAY = 0.2
POLICY = {"delay": DELAY, "rate": None, "connect_timeout": 1.0, "read_timeout": 1.0, "max_time": 3.0,
          "max_retries": 1, "backoff": 0.2, "max_retry_after": 1.5, "max_bytes": 65536}
RUNNER = """
import json, os, signal, sys
from gym_crawl.agents import make_agent
from gym_crawl.agents.live_crawl import crawl_live
from gym_crawl.web.policy import FetchPolicy
from gym_crawl.web.settings import LiveCrawlSettings
got = []  # a signal after the crawl returned (its handlers put back): exit as the command does
signal.signal(signal.SIGTERM, lambda n, f: got.append(n))
a = json.loads(sys.argv[1])
s = LiveCrawlSettings(seeds=tuple(a["seeds"]), topic="geology", max_pages=a["pages"], concurrency=a["concurrency"],
                      policy=FetchPolicy(**a["policy"]), general_text=False)
res = crawl_live(make_agent("best-first"), s, warc=a["warc"], resume=a["resume"], overwrite=not a["resume"],
                 progress=None)
print(json.dumps(res.summary()), flush=True)
if res.stopped_by or got:  # as the command does: the WARC is closed, the interpreter's teardown is skipped
    sys.stderr.flush()
    os._exit(128 + (int(signal.Signals[res.stopped_by]) if res.stopped_by else got[0]))
"""


def _start(plan, warc: Path, pages: int, resume: bool = False) -> subprocess.Popen:
    arg = json.dumps({"seeds": plan.seeds, "pages": pages, "concurrency": 8, "policy": POLICY, "warc": str(warc),
                      "resume": resume})
    return subprocess.Popen([sys.executable, "-c", RUNNER, arg], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})


def _robots_whole(site, plan, e) -> bool:
    return e.path == "/robots.txt" and not e.client_closed and (
        (plan.robots[e.host] == "ok" and e.bytes_sent == len(ROBOTS_OK)) or
        (plan.robots[e.host] == "missing" and e.status == 404))


def _received(site, plan, before: float) -> set[tuple[str, str]]:
    """Pages the site sent whole, as a 200, before ``before``."""
    return {(e.host, e.path) for e in site.requests() if e.end < before and not e.client_closed
            and e.status == 200 and plan.whole.get((e.host, e.path)) == e.bytes_sent}


def check_politeness(site, plan, per_host: int = 1) -> None:
    """The invariants that hold at every moment of every run (see the module docstring)."""
    log = site.requests()
    assert not [e for e in log if e.host == plan.outside], "a request out of scope"
    for h in plan.robots:
        if h == plan.outside:
            continue
        mine = [e for e in log if e.host == h]
        pages = [e for e in mine if e.path != "/robots.txt"]
        if not plan.admits_pages(h):
            assert not pages, f"{h}: pages requested although its robots.txt is {plan.robots[h]}"
            continue
        if plan.robots[h] == "ok":
            assert not [e for e in pages if e.path.startswith("/private/")], f"{h}: a disallowed page requested"
        if pages:
            first = min(e.start for e in pages)
            assert any(_robots_whole(site, plan, e) and e.end <= first for e in mine), \
                f"{h}: a page requested before its robots.txt was complete"
        assert site.max_concurrent(h) <= per_host, f"{h}: {site.max_concurrent(h)} requests in flight"
        for a, b in zip(mine, mine[1:]):
            assert b.start - a.end >= DELAY - 0.02, f"{h}: {b.path} {b.start - a.end:.3f} s after {a.path}"


def _stop_and_resume(tmp_path: Path, seed: int, pages: int, how: str, n_hosts: int = 6) -> None:
    """Crawl the chaos web of ``seed``; stop it (``mid``: a SIGINT after a third of the steps, ``drain``: a
    SIGTERM after the last step while pages are in flight, ``kill``: SIGKILL mid-crawl); check; resume it to the
    end; check again."""
    warc = tmp_path / f"chaos-{seed}-{how}.warc.gz"
    site, plan = serve_chaos(seed, n_hosts=n_hosts)
    with site:
        proc = _start(plan, warc, pages)
        try:
            wait_for(lambda: decisions_in(warc) >= (pages if how == "drain" else pages // 3), proc)
            sig = {"mid": signal.SIGINT, "drain": signal.SIGTERM, "kill": signal.SIGKILL}[how]
            t_sig = time.monotonic()
            out, err, took = stop_timed(proc, sig)
        finally:
            if proc.poll() is None:
                proc.kill()
        ended = proc.returncode
        if how != "kill":
            if ended in (0, -sig):  # the crawl ended before the signal came (-sig: during the interpreter's teardown)
                assert json.loads(out.decode().strip().splitlines()[-1])["stopped_by"] is None, err.decode()[-2000:]
            else:
                assert ended == 128 + sig, err.decode()[-2000:]
            assert took <= 2.0, f"exit {took:.2f} s after {sig.name}"
            assert readers_disagree(warc) is None
        check_politeness(site, plan)
        # SIGKILL leaves the crawler no moment to write what it had just read: a page the server finished sending in
        # the last half second before the kill was, for the crawler, still in flight (a resume may ask it again)
        received = _received(site, plan, t_sig - 0.5 if how == "kill" else t_sig)
        in_flight = {(e.host, e.path) for e in site.requests() if e.path != "/robots.txt"} - received
        if how != "kill":
            recorded = {canonical_url(r.url) for r in read_fetches(warc)}
            lost = {k for k in received if canonical_url(site.url(*k)) not in recorded}
            assert not lost, f"pages received whole but not in the WARC: {sorted(lost)}"
        robots_had = {e.host for e in site.requests() if _robots_whole(site, plan, e) and e.end < t_sig - 0.5}
        t_resume = time.monotonic()
        again = _start(plan, warc, pages, resume=True)
        out, err = again.communicate(timeout=120)
        assert again.returncode == 0, err.decode()[-2000:]
        summary = json.loads(out.decode().strip().splitlines()[-1])
        assert summary["stopped_by"] is None and summary["steps"] == pages, summary
        check_politeness(site, plan)
        asked = [e for e in site.requests() if e.start > t_resume]
        refetched = {(e.host, e.path) for e in asked if e.path != "/robots.txt"} & received
        assert not refetched, f"the resumed crawl requested pages received before: {sorted(refetched)}"
        if how == "kill":  # only what was in flight may be asked again
            assert {(e.host, e.path) for e in asked if e.path != "/robots.txt"} & (received | in_flight) <= in_flight
        else:
            assert not {e.host for e in asked if e.path == "/robots.txt"} & robots_had, "robots.txt asked again"
        assert readers_disagree(warc) is None


def test_a_chaos_crawl_stopped_mid_crawl_loses_nothing_and_resumes_politely(tmp_path):
    _stop_and_resume(tmp_path, seed=7, pages=24, how="mid")


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("how", ["mid", "drain", "kill"])
def test_chaos_crawls_over_seeds_and_stops(tmp_path, seed, how):
    _stop_and_resume(tmp_path, seed=seed, pages=16, how=how, n_hosts=10)


def test_the_chaos_web_is_the_same_for_a_seed():
    a_site, a = serve_chaos(5)
    with a_site:
        pass
    b_site, b = serve_chaos(5)
    with b_site:
        pass
    assert (a.robots, a.pages) == (b.robots, b.pages)
    assert a.robots["h0"] == "ok" and {k for h in a.pages.values() for k in h.values()} - {"ok"}
