"""A robots.txt that fails part-way is *unreachable* (RFC 9309 §2.3.1.4): a ``200`` whose body stalls, is reset,
closed early, shorter than its ``Content-Length`` or does not decode disallows its origin — never an empty
(allow-all) file — and is asked again on the fetcher's schedule; the live crawl counts origins by reason."""
from __future__ import annotations

import gzip

import gymnasium as gym
import numpy as np
import pytest

from gym_crawl.web.fetcher import FetchPolicy, PoliteFetcher
from gym_crawl.web.live import LiveWeb
from gym_crawl.web.serve.server import Raw, Response, html_page, serve_site
from gym_crawl.web.serve.site import Series

FAST = {"delay": 0.0, "rate": None, "connect_timeout": 2.0, "read_timeout": 0.5, "max_time": 5.0, "max_retries": 0}
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n"
BODY = (b"User-agent: *\n" + b"Disallow: /private\n" * 60)[:1000]
FIRST = len(b"User-agent: *\n")  # 14 bytes, then the failure

PARTIAL = {
    "stall": (Raw(HEAD + BODY, piece=len(HEAD) + FIRST, pace=30.0, status=200), "unreachable:timeout"),
    "hang": (Raw(HEAD + BODY[:FIRST], hold=30.0, status=200), "unreachable:timeout"),
    "reset": (Raw(HEAD + BODY[:FIRST], reset=True, status=200), "unreachable:disconnect"),
    "close": (Raw(HEAD + BODY[:FIRST], status=200), "unreachable:disconnect"),
    "chunk": (Raw(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
                  b"3e8\r\n" + BODY[:FIRST], status=200), "unreachable:disconnect"),
    "gzip": (Response(gzip.compress(BODY)[:40], content_type="text/plain", headers=(("Content-Encoding", "gzip"),)),
             "unreachable:decode"),
    "coding": (Response(BODY, content_type="text/plain", headers=(("Content-Encoding", "br"),)),
               "unreachable:decode"),
}


def _site(robots) -> dict:
    return {"h": {"/robots.txt": robots, "/": html_page("Home", "<p>geology</p>", [("/page", "a page")]),
                  "/page": html_page("Page", "<p>geology</p>")}}


@pytest.mark.parametrize("case", sorted(PARTIAL))
def test_a_robots_txt_that_fails_part_way_disallows_its_origin(case):
    robots, reason = PARTIAL[case]
    with serve_site(_site(robots)) as site, PoliteFetcher(FetchPolicy(**FAST)) as f:
        r = f.fetch(site.url("h", "/"))
        kind, text, _, why = f.robots(site.url("h", "/"))
        assert (r.error, kind, text, why) == ("robots", "disallow", None, reason), case
        assert site.requests("h", "/") == []  # not one page request to the host


def test_a_complete_robots_txt_is_parsed_and_one_cut_at_the_byte_cap_too():
    full = Response(BODY, content_type="text/plain")
    with serve_site(_site(full)) as site, PoliteFetcher(FetchPolicy(**FAST, robots_max_bytes=100)) as f:
        assert f.fetch(site.url("h", "/")).ok
        assert f.fetch(site.url("h", "/private")).error == "robots"
        assert f.robots(site.url("h", "/"))[3] == "parsed"


def test_an_unreachable_robots_txt_is_asked_again_after_robots_retry():
    """Unreachable is transient: the origin stays disallowed until ``robots_retry`` has passed on the fetcher's
    clock, then robots.txt is read again (here it is whole the second time) and the page is fetched."""
    now = [1000.0]
    robots = Series(PARTIAL["close"][0], Response(b"User-agent: *\nDisallow:\n", content_type="text/plain"))
    with serve_site(_site(robots)) as site, \
            PoliteFetcher(FetchPolicy(**FAST, robots_retry=600.0), clock=lambda: now[0], sleep=lambda s: None) as f:
        assert f.fetch(site.url("h", "/")).error == "robots"
        now[0] += 599.0
        assert f.fetch(site.url("h", "/")).error == "robots"
        assert len(site.requests("h", "/robots.txt")) == 1  # cached until robots_retry
        now[0] += 2.0
        assert f.fetch(site.url("h", "/")).ok
        assert len(site.requests("h", "/robots.txt")) == 2


def _crawl_to_the_end(env) -> None:
    """Reset, then fetch the lowest frontier page until the episode ends. The counters count what *arrived*:
    the bad seed's refusal (its fetch read robots.txt) and the robots job of its origin are two completions that
    can land in successive ``arrived`` calls, the second after reset returned, so they are read at the end."""
    env.reset(seed=0)
    for _ in range(5):
        F = np.sort(env.unwrapped.view.frontier_pages())
        if not len(F):
            break
        _, _, term, trunc, _ = env.step(int(F[0]))
        if term or trunc:
            break


def test_the_live_web_refuses_the_origin_and_counts_it_by_reason(tmp_path):
    sites = {"bad": _site(PARTIAL["stall"][0])["h"], "good": _site(Response(b"User-agent: *\nDisallow:\n",
                                                                               content_type="text/plain"))["h"]}
    with serve_site(sites) as site:
        seeds = [site.url("good", "/"), site.url("bad", "/")]
        with LiveWeb(seeds, policy=FetchPolicy(**FAST), warc=tmp_path / "r.warc.gz", scope="hosts") as web:
            env = gym.make("WikiCrawl-v1", corpus=web, topic="geology", max_episode_steps=5, reducer="topk",
                           action="page", observation="state")
            _crawl_to_the_end(env)
            counters = web.counters()
            env.close()
        assert counters["robots"] == {"parsed": 1, "unreachable:timeout": 1}
        assert site.requests("bad", "/") == [] and site.requests("bad", "/page") == []
        assert site.requests("good", "/")
        # the replay of the WARC obeys the same rules, reason included
        with LiveWeb.from_warc(tmp_path / "r.warc.gz") as replay:
            env = gym.make("WikiCrawl-v1", corpus=replay, topic="geology", max_episode_steps=5, reducer="topk",
                           action="page", observation="state")
            _crawl_to_the_end(env)
            assert replay.counters()["robots"] == counters["robots"]
            env.close()


def test_a_broken_gzip_page_is_a_decode_error_and_is_not_retried():
    bad = Response(b"\x1f\x8b\x08\x00garbage", headers=(("Content-Encoding", "gzip"),))
    with serve_site({"a": {"/bad": bad}}) as site, \
            PoliteFetcher(FetchPolicy(**{**FAST, "max_retries": 3, "backoff": 0.0}, obey_robots=False)) as f:
        r = f.fetch(site.url("a", "/bad"))
        assert r.error == "decode" and r.body == b""
        assert len(site.requests("a", "/bad")) == 1  # the server's bytes are wrong: asking again will not help
