"""The polite fetcher against the misbehaving loopback site: every politeness claim is asserted from the
server's own request log (what reached the site), not from the fetcher's word."""
from __future__ import annotations

import email.utils
import itertools
import socket
import threading
import time
from urllib.parse import urlsplit

import pytest

from gym_crawl.web.fetcher import (
    CHUNK,
    FetchPolicy,
    FetchResult,
    PoliteFetcher,
    default_user_agent,
    retry_after_seconds,
    url_pattern,
)
from gym_crawl.web.serve.server import MisbehaveSettings, Response, Series, html_page, robots_txt, serve_site
from gym_crawl.web.urls import canonical_url

FAST = {"delay": 0.05, "rate": None, "connect_timeout": 2.0, "read_timeout": 2.0, "max_time": 10.0}


def policy(**kw) -> FetchPolicy:
    return FetchPolicy(**{**FAST, **kw})


def gaps(entries) -> list[float]:
    starts = [e.start for e in entries]
    return [b - a for a, b in itertools.pairwise(starts)]


# ---------------------------------------------------------------------------------------------- the guard
def test_network_guard_fails_non_loopback_connections_and_lookups(network_guard):
    NetworkGuardError = RuntimeError  # conftest's NetworkGuardError subclasses it; the message names the guard

    with pytest.raises(NetworkGuardError, match="network guard.*192.0.2.1"):
        socket.create_connection(("192.0.2.1", 80), timeout=0.1)
    with pytest.raises(NetworkGuardError, match="example.org"):
        socket.getaddrinfo("example.org", 80)
    s = socket.socket()
    try:
        with pytest.raises(NetworkGuardError, match="198.51.100.7"):
            s.connect(("198.51.100.7", 80))
        with pytest.raises(NetworkGuardError):
            s.connect_ex(("203.0.113.9", 80))
    finally:
        s.close()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u, pytest.raises(NetworkGuardError, match="datagram"):
        u.sendto(b"x", ("192.0.2.53", 53))
    with PoliteFetcher(policy(obey_robots=False)) as f, pytest.raises(NetworkGuardError):
        f.fetch("http://example.org/")
    with pytest.raises(NetworkGuardError, match="resolve the name 'localhost'"):
        socket.getaddrinfo("localhost", 80)  # even localhost is a name lookup
    with pytest.raises(NetworkGuardError, match="reverse lookup"):
        socket.getfqdn("127.0.0.1")
    with pytest.raises(NetworkGuardError, match="reverse lookup"):
        socket.gethostbyaddr("127.0.0.1")
    assert len(network_guard.violations) == 9
    network_guard.violations.clear()  # this test provoked them on purpose
    socket.getaddrinfo("127.0.0.5", 80)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
        u.sendto(b"x", ("127.0.0.1", 9))  # loopback datagrams are fine
    assert not network_guard.violations


# ---------------------------------------------------------------------------------------------- robots.txt
def test_robots_disallowed_paths_are_never_requested_and_robots_is_read_once():
    with serve_site({}, misbehave={"a": ["robots"]}) as site, PoliteFetcher(policy()) as f:
        assert f.check(site.url("a", "/private/secret.html")) == "robots"
        r = f.fetch(site.url("a", "/private/secret.html"))
        assert (r.error, r.status, r.final_url, r.body) == ("robots", None, None, b"")
        assert f.fetch(site.url("a", "/")).ok
        assert f.fetch(site.url("a", "/private/other?x=1")).error == "robots"
        assert f.check(site.url("a", "/")) is None
        paths = [e.path for e in site.requests("a")]
    assert paths == ["/robots.txt", "/"]


def test_robots_rules_for_our_agent_and_crawl_delay_raise_the_delay():
    robots = robots_txt(["/mine/"], agent="gym_crawl", crawl_delay=0.3,
                        extra="User-agent: *\nDisallow: /others/")
    pages = {"a": {"/robots.txt": robots, "/mine/x.html": html_page("x"), "/others/y.html": html_page("y"),
                   "/p1": html_page("p1"), "/p2": html_page("p2"), "/p3": html_page("p3")}}
    with serve_site(pages) as site, PoliteFetcher(policy(delay=0.05)) as f:
        assert f.fetch(site.url("a", "/mine/x.html")).error == "robots"
        assert f.crawl_delay(site.url("a", "/")) == pytest.approx(0.3)
        for p in ("/p1", "/others/y.html", "/p2", "/p3"):
            assert f.fetch(site.url("a", p)).ok, p  # only our agent's group applies to us
        log = site.requests("a")
    assert "/mine/x.html" not in [e.path for e in log]
    assert min(gaps(log)) >= 0.3


def test_robots_status_semantics_4xx_allows_5xx_and_timeouts_disallow():
    pages = {"notfound": {"/x": html_page("x")},  # no robots.txt route: 404
             "broken": {"/robots.txt": Response(b"oops", status=500), "/x": html_page("x")},
             "slow": {"/robots.txt": Response(b"User-agent: *\n", content_type="text/plain", delay=3.0),
                      "/x": html_page("x")},
             "gone": {"/robots.txt": Response(b"", status=403), "/x": html_page("x")}}
    with serve_site(pages) as site, PoliteFetcher(policy(read_timeout=0.3, max_retries=0)) as f:
        assert f.fetch(site.url("notfound", "/x")).ok
        assert f.fetch(site.url("gone", "/x")).ok
        assert f.fetch(site.url("broken", "/x")).error == "robots"
        assert f.fetch(site.url("slow", "/x")).error == "robots"
        assert f.fetch(site.url("broken", "/y")).error == "robots"
        assert [e.path for e in site.requests("broken")] == ["/robots.txt"]
        assert [e.path for e in site.requests("slow")] == ["/robots.txt"]


def test_a_robots_txt_redirected_out_of_scope_is_not_followed_and_disallows():
    other: dict[str, str] = {}
    pages = {"a": {"/robots.txt": lambda path: Response(b"", status=301, headers=(("Location", other["b"]),)),
                   "/x": html_page("x")},
             "b": {"/robots.txt": robots_txt([])}}
    with serve_site(pages) as site:
        other["b"] = site.url("b", "/robots.txt")
        with PoliteFetcher(policy(allowed_hosts=(urlsplit(site.url("a")).netloc,))) as f:
            assert f.fetch(site.url("a", "/x")).error == "robots"
        with PoliteFetcher(policy()) as f:  # in scope, the redirect is followed (and b's rules allow all)
            assert f.fetch(site.url("a", "/x")).ok
        assert [e.path for e in site.requests("a")] == ["/robots.txt", "/robots.txt", "/x"]
        assert [e.path for e in site.requests("b")] == ["/robots.txt"]


def test_robots_txt_is_asked_again_after_a_failure_and_after_its_ttl():
    now = [0.0]
    pages = {"a": {"/robots.txt": Series(Response(b"", status=503), robots_txt(["/x"]), robots_txt([])),
                   "/x": html_page("x")}}
    pol = FetchPolicy(delay=0.0, rate=None, max_retries=0, robots_retry=100.0, robots_ttl=1000.0)
    with serve_site(pages) as site, PoliteFetcher(pol, clock=lambda: now[0], sleep=lambda s: None) as f:
        url = site.url("a", "/x")
        assert f.fetch(url).error == "robots"  # 503: disallowed for now
        now[0] += 99.0
        assert f.fetch(url).error == "robots"  # still within robots_retry: not asked again
        now[0] += 1.0
        assert f.fetch(url).error == "robots"  # asked again: now its rules disallow /x
        now[0] += 999.0
        assert f.fetch(url).error == "robots"
        now[0] += 1.0
        assert f.fetch(url).ok  # the ttl expired: the new rules allow everything
        assert [e.path for e in site.requests("a")] == ["/robots.txt"] * 3 + ["/x"]


def test_obey_robots_false_skips_robots_txt():
    with serve_site({}, misbehave={"a": ["robots"]}) as site, PoliteFetcher(policy(obey_robots=False)) as f:
        assert f.fetch(site.url("a", "/private/secret.html")).ok
        assert [e.path for e in site.requests("a")] == ["/private/secret.html"]


# ---------------------------------------------------------------------------------------------- politeness
def test_per_host_delay_and_one_request_at_a_time_per_host():
    pages = {h: {f"/p{i}": html_page(f"{h}{i}") for i in range(4)} for h in ("a", "b")}
    with serve_site(pages) as site, PoliteFetcher(policy(delay=0.15)) as f:
        for i in range(4):
            for h in ("a", "b"):
                assert f.fetch(site.url(h, f"/p{i}")).ok
        for h in ("a", "b"):
            log = site.requests(h)
            assert len(log) == 5  # robots.txt + 4 pages
            assert min(gaps(log)) >= 0.15
            assert site.max_concurrent(h) == 1
            assert len({e.conn for e in log}) == 1  # one keep-alive connection per host, reused
        both = site.requests()
        assert min(gaps(both)) < 0.15  # the delay is per host: the other host was fetched in between


def test_threads_sharing_a_fetcher_never_overlap_on_one_host():
    pages = {"a": {f"/p{i}": Response(html_page(f"p{i}"), delay=0.03) for i in range(9)}}
    with serve_site(pages) as site, PoliteFetcher(policy(delay=0.05)) as f:
        results = []

        def work(k: int) -> None:
            for i in range(k, 9, 3):
                results.append(f.fetch(site.url("a", f"/p{i}")))

        threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert len(results) == 9 and all(r.ok for r in results), [ex.detail for r in results for ex in r.exchanges]
        assert site.max_concurrent("a") == 1
        log = site.requests("a")
        assert len(log) == 10 and len({e.conn for e in log}) == 1
        for prev, nxt in itertools.pairwise(log):
            assert nxt.start - prev.end >= 0.05


def test_global_rate_limits_request_starts_over_all_hosts():
    pages = {h: {"/": html_page(h), "/x": html_page(h)} for h in ("a", "b", "c")}
    with serve_site(pages) as site, PoliteFetcher(policy(delay=0.0, rate=8.0, obey_robots=False)) as f:
        for path in ("/", "/x"):
            for h in ("a", "b", "c"):
                assert f.fetch(site.url(h, path)).ok
        log = site.requests()
        # the limiter spaces request starts by 1/8 s at the client; arrival jitter at the site can shift one
        # gap, not the span of six requests
        assert log[-1].start - log[0].start >= 5 / 8 - 0.02


def test_injected_clock_and_sleep_carry_the_politeness_waits():
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    pages = {"a": {f"/p{i}": html_page(str(i)) for i in range(3)}}
    with serve_site(pages) as site, PoliteFetcher(FetchPolicy(delay=5.0, rate=None, obey_robots=False),
                                                  clock=lambda: now[0], sleep=sleep) as f:
        for i in range(3):
            assert f.fetch(site.url("a", f"/p{i}")).ok
    assert sum(slept) == pytest.approx(10.0)  # two waits of the 5 s delay, on the fake clock


def test_user_agent_names_the_package_version_and_contact():
    from gym_crawl import __version__

    with serve_site({"a": {"/": html_page("a")}}) as site, \
            PoliteFetcher(policy(contact="https://example.org/bot")) as f:
        f.fetch(site.url("a"))
        agents = {e.user_agent for e in site.requests("a")}
    assert agents == {f"gym_crawl/{__version__} (+https://example.org/bot)"}
    assert default_user_agent() == f"gym_crawl/{__version__}"
    assert FetchPolicy(user_agent="X/1").agent == "X/1"


# ---------------------------------------------------------------------------------------------- limits
def test_byte_cap_stops_reading_an_oversize_page():
    settings = MisbehaveSettings(oversize_bytes=2_000_000)
    with serve_site({}, misbehave={"a": ["oversize"]}, settings=settings) as site, \
            PoliteFetcher(policy(max_bytes=50_000, obey_robots=False)) as f:
        r = f.fetch(site.url("a", "/big.html"))
        ok = f.fetch(site.url("a", "/"))
    assert (r.error, r.status, r.body) == ("too-large", 200, b"")
    ex = r.exchanges[-1]
    assert ex.truncated == "length" and 50_000 < len(ex.body) <= 50_000 + CHUNK
    assert ok.ok  # the connection cut at the cap does not break the next fetch


def test_content_type_allowlist_and_sniffing():
    pages = {"a": {"/doc.xhtml": Response(b"<html xmlns='http://www.w3.org/1999/xhtml'/>",
                                          content_type="application/xhtml+xml"),
                   "/data.bin": Response(b"\x00\x01binary", content_type=None)}}
    with serve_site(pages, misbehave={"a": ["non-html", "broken-html"]}) as site, \
            PoliteFetcher(policy(obey_robots=False)) as f:
        pdf = f.fetch(site.url("a", "/doc.pdf"))
        png = f.fetch(site.url("a", "/image.png"))
        assert (pdf.error, pdf.content_type, png.error, png.content_type) == \
            ("content-type", "application/pdf", "content-type", "image/png")
        assert pdf.exchanges[-1].body == b"" and pdf.exchanges[-1].truncated == "unspecified"
        assert f.fetch(site.url("a", "/doc.xhtml")).ok
        untyped = f.fetch(site.url("a", "/untyped.html"))
        assert untyped.ok and untyped.content_type == "text/html"
        assert f.fetch(site.url("a", "/data.bin")).error == "content-type"
        broken = f.fetch(site.url("a", "/broken.html"))
        assert broken.ok and b"unclosed" in broken.body
    with serve_site({}, misbehave={"a": ["non-html"]}) as site, \
            PoliteFetcher(policy(obey_robots=False, content_types=("application/pdf",))) as f:
        assert f.fetch(site.url("a", "/doc.pdf")).ok


def test_http_errors_are_failed_fetches_without_retries():
    with serve_site({}, misbehave={"a": ["404", "500"]}) as site, PoliteFetcher(policy(obey_robots=False)) as f:
        r404 = f.fetch(site.url("a", "/missing.html"))
        r500 = f.fetch(site.url("a", "/error.html"))
        assert (r404.error, r404.status, r404.body) == ("http-404", 404, b"")
        assert (r500.error, r500.status) == ("http-500", 500)
        assert len(site.requests("a", "/error.html")) == 1


def test_429_and_503_are_retried_after_retry_after():
    settings = MisbehaveSettings(retry_after=1)
    with serve_site({}, misbehave={"a": ["429", "503"]}, settings=settings) as site, \
            PoliteFetcher(policy(obey_robots=False)) as f:
        busy = f.fetch(site.url("a", "/busy.html"))
        unavailable = f.fetch(site.url("a", "/unavailable.html"))
        assert busy.ok and unavailable.ok
        assert [ex.status for ex in busy.exchanges] == [429, 200]
        for path in ("/busy.html", "/unavailable.html"):
            log = site.requests("a", path)
            assert [e.status for e in log] == [log[0].status, 200]
            assert log[1].start - log[0].end >= 1.0


def test_retry_after_http_date_cap_and_exhausted_retries():
    huge = Series(Response(b"", status=429, headers=(("Retry-After", "3600"),)), Response(html_page("ok")))
    always = Response(b"", status=503)
    pages = {"a": {"/huge": huge, "/always": always}}
    with serve_site(pages) as site, \
            PoliteFetcher(policy(obey_robots=False, max_retry_after=0.3, backoff=0.1, max_retries=2)) as f:
        assert f.fetch(site.url("a", "/huge")).ok  # a one-hour Retry-After is capped at 0.3 s
        huge_log = site.requests("a", "/huge")
        assert 0.3 <= huge_log[1].start - huge_log[0].end < 60
        r = f.fetch(site.url("a", "/always"))
        assert r.error == "http-503" and len(r.exchanges) == 3
        log = site.requests("a", "/always")
        assert len(log) == 3
        assert log[1].start - log[0].end >= 0.1 and log[2].start - log[1].end >= 0.2  # exponential backoff
    when = email.utils.formatdate(time.time() + 1.5, usegmt=True)
    dated = Series(Response(b"", status=503, headers=(("Retry-After", when),)), Response(html_page("ok")))
    with serve_site({"a": {"/dated": dated}}) as site, \
            PoliteFetcher(policy(obey_robots=False, max_retry_after=10)) as f:
        assert f.fetch(site.url("a", "/dated")).ok
        log = site.requests("a", "/dated")
        assert log[1].start - log[0].end >= 0.4  # the HTTP date was ~1.5 s ahead (1 s resolution)


def test_retry_after_parsing():
    from datetime import datetime, timezone

    now = datetime(2026, 11, 25, 12, 0, 0, tzinfo=timezone.utc)
    assert retry_after_seconds("7", now) == 7.0
    assert retry_after_seconds("Wed, 25 Nov 2026 12:00:30 GMT", now) == 30.0
    assert retry_after_seconds("Wed, 25 Nov 2026 11:00:00 GMT", now) == 0.0
    assert retry_after_seconds("soon", now) is None and retry_after_seconds(None, now) is None


def test_read_timeout_total_time_limit_and_refused_connection():
    trickle = Response(b"<html>" + b"x" * 3000 + b"</html>", chunk=100, trickle=0.1)
    settings = MisbehaveSettings(slow_seconds=3.0)
    with serve_site({"a": {"/trickle": trickle}}, misbehave={"a": ["slow"]}, settings=settings) as site, \
            PoliteFetcher(policy(obey_robots=False, read_timeout=0.3, max_time=0.5)) as f:
        slow = f.fetch(site.url("a", "/slow.html"))
        assert (slow.error, slow.status) == ("timeout", None), slow.exchanges[-1].detail
        t = f.fetch(site.url("a", "/trickle"))
        assert (t.error, t.status, t.body) == ("timeout", 200, b"")
        assert t.exchanges[-1].truncated == "time"
        time.sleep(0.1)
        assert site.requests("a", "/slow.html")[0].client_closed
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    with PoliteFetcher(policy(obey_robots=False, max_retries=1, backoff=0.05)) as f:
        r = f.fetch(f"http://127.0.0.1:{port}/")
    assert (r.error, r.status, len(r.exchanges)) == ("connect", None, 2)


# ---------------------------------------------------------------------------------------------- redirects
def test_redirect_chain_every_hop_requested_and_reported():
    with serve_site({}, misbehave={"a": ["redirects"]}) as site, PoliteFetcher(policy(obey_robots=False)) as f:
        r = f.fetch(site.url("a", "/redirect/1"))
        assert r.ok and r.final_url == site.url("a", "/landing.html")
        assert r.redirects == [(site.url("a", "/redirect/1"), 301), (site.url("a", "/redirect/2"), 302),
                               (site.url("a", "/redirect/3"), 303)]
        assert [e.path for e in site.requests("a")] == ["/redirect/1", "/redirect/2", "/redirect/3",
                                                        "/landing.html"]
        assert min(gaps(site.requests("a"))) >= 0.05  # every hop waits the host delay


def test_redirect_loop_and_limit_are_stopped():
    with serve_site({}, misbehave={"a": ["redirect-loop", "redirects"]}) as site, \
            PoliteFetcher(policy(obey_robots=False, max_redirects=4)) as f:
        loop = f.fetch(site.url("a", "/loop/a"))
        assert (loop.error, loop.final_url, loop.status) == ("redirect-loop", site.url("a", "/loop/b"), 302)
        assert [e.path for e in site.requests("a")] == ["/loop/a", "/loop/b"]
        long = f.fetch(site.url("a", "/redirect-long/1"))
        assert long.error == "redirect-limit" and len(long.redirects) == 5
        assert len([e for e in site.requests("a") if e.path.startswith("/redirect-long/")]) == 5


def test_redirects_into_disallowed_or_out_of_scope_urls_are_not_followed():
    other: dict[str, str] = {}
    pages = {"a": {"/robots.txt": robots_txt(["/private/"]), "/private/x": html_page("x"),
                   "/go-private": Response(b"", status=302, headers=(("Location", "/private/x"),)),
                   "/go-b": lambda path: Response(b"", status=301, headers=(("Location", other["b"]),))},
             "b": {"/": html_page("b")}}
    with serve_site(pages) as site:
        other["b"] = site.url("b", "/")
        host_a = site.base_urls["a"].split("//")[1]
        with PoliteFetcher(policy(allowed_hosts=(host_a,))) as f:
            r = f.fetch(site.url("a", "/go-private"))
            assert (r.error, r.final_url, r.status) == ("robots", site.url("a", "/go-private"), 302)
            assert f.fetch(site.url("a", "/go-b")).error == "out-of-scope"
        assert "/private/x" not in [e.path for e in site.requests("a")]
        assert site.requests("b") == []


# ---------------------------------------------------------------------------------------------- scope, traps
def test_scope_hosts_domains_and_patterns_without_any_request():
    f = PoliteFetcher(policy(obey_robots=False, allowed_domains=("example.org",), allowed_hosts=("127.0.0.9:81",),
                             deny_patterns=(r"/logout",), allow_patterns=(r"^http://", r"/docs/")))
    assert f.check("http://www.example.org/a") is None
    assert f.check("http://example.org/a") is None
    assert f.check("http://badexample.org/a") == "out-of-scope"
    assert f.check("http://127.0.0.9:81/a") is None
    assert f.check("http://127.0.0.9:82/a") == "out-of-scope"
    assert f.check("http://example.org/logout") == "out-of-scope"
    assert f.check("https://example.org/docs/x") is None
    assert f.check("https://example.org/x") == "out-of-scope"
    assert f.check("mailto:someone@example.org") == "out-of-scope"
    assert f.check("not a url") == "out-of-scope"
    assert f.fetch("ftp://example.org/x").error == "out-of-scope"


def test_trap_guards():
    f = PoliteFetcher(policy(obey_robots=False, max_url_length=80, max_path_depth=4, max_query_params=2,
                             max_repeated_segments=2))
    assert f.check("http://h.test/" + "a" * 100) == "trap:url-length"
    assert f.check("http://h.test/1/2/3/4/5") == "trap:path-depth"
    assert f.check("http://h.test/1/2/3/4") is None
    assert f.check("http://h.test/p?a=1&b=2&c=3") == "trap:query-params"
    assert f.check("http://h.test/a/b/a/a") == "trap:repeated-segment"
    assert url_pattern("http://h.test/calendar/2026/11/?day=3&x=") == "http://h.test/calendar/#/#/?day&x"


def _follow(f: PoliteFetcher, url: str, limit: int, next_url) -> list:
    """Fetch ``url``, then ``next_url(result)`` of each page fetched, until a fetch fails or ``limit`` fetches."""
    results = []
    for _ in range(limit):
        r = f.fetch(url)
        results.append(r)
        if not r.ok:
            break
        url = next_url(r)
    return results


def _follow_next_month(f: PoliteFetcher, start: str, limit: int) -> list:
    return _follow(f, start, limit,
                   lambda r: start.split("/calendar/")[0] + r.text.split('href="', 1)[1].split('"', 1)[0])


def test_calendar_trap_is_bounded_by_the_pattern_and_host_caps():
    with serve_site({}, misbehave={"a": ["calendar"]}) as site:
        start = site.url("a", "/calendar/2026/11/")
        with PoliteFetcher(policy(delay=0.01, obey_robots=False, max_pages_per_pattern=6)) as f:
            res = _follow_next_month(f, start, 50)
        assert [r.ok for r in res] == [True] * 6 + [False] and res[-1].error == "trap:pattern"
        assert len(site.requests("a")) == 6
        assert res[5].final_url.endswith("/calendar/2027/4/")
        with PoliteFetcher(policy(delay=0.01, obey_robots=False, max_pages_per_pattern=None,
                                  max_pages_per_host=4)) as f:
            res = _follow_next_month(f, start, 50)
            assert res[-1].error == "host-cap" and len(res) == 5
            assert f.check(site.url("a", "/")) == "host-cap"
        assert len(site.requests("a")) == 6 + 4


def _follow_first_link(f: PoliteFetcher, url: str, limit: int) -> list:
    return _follow(f, url, limit,
                   lambda r: canonical_url(r.text.split('<li><a href="', 1)[1].split('"', 1)[0], base=r.final_url))


def test_relative_path_and_session_id_traps_are_bounded():
    with serve_site({}, misbehave={"a": ["path-trap", "session-ids"]}) as site:
        with PoliteFetcher(policy(delay=0.01, obey_robots=False, max_repeated_segments=3)) as f:
            res = _follow_first_link(f, site.url("a", "/deep/"), 20)
        assert [r.ok for r in res] == [True] * 4 + [False] and res[-1].error == "trap:repeated-segment"
        assert res[3].final_url == site.url("a", "/deep/more/more/more/")
        assert len(site.requests("a")) == 4
        with PoliteFetcher(policy(delay=0.01, obey_robots=False, max_pages_per_pattern=5)) as f:
            res = _follow_first_link(f, site.url("a", "/session"), 20)
        # /session, then five /session?sid=<new id> (one URL pattern), the sixth refused
        assert len({r.url for r in res}) == 7 and [r.ok for r in res] == [True] * 6 + [False]
        assert res[-1].error == "trap:pattern"
        assert len(site.requests("a")) == 4 + 6


# ---------------------------------------------------------------------------------------------- encodings
def test_charsets_from_header_meta_or_undeclared():
    with serve_site({}, misbehave={"a": ["encodings"]}) as site, PoliteFetcher(policy(obey_robots=False)) as f:
        declared = f.fetch(site.url("a", "/latin1.html"))
        undeclared = f.fetch(site.url("a", "/latin1-undeclared.html"))
        wrong_meta = f.fetch(site.url("a", "/utf8-wrong-meta.html"))
    assert declared.charset == "iso-8859-1" and "Café crème" in declared.text
    assert undeclared.charset is None and "Caf\ufffd cr\ufffdme" in undeclared.text  # undeclared: UTF-8
    assert wrong_meta.charset == "iso-8859-1"  # the document's own (wrong) declaration wins, as in browsers
    assert "CafÃ©" in wrong_meta.text
    bom = FetchResult(url="u", final_url="u", status=200, headers=[("Content-Type", "text/html; charset=latin-1")],
                      body="\ufeffnaïve".encode("utf-8"), content_type="text/html", charset="utf-8", error=None,
                      redirects=[], fetched_at="", elapsed=0.0)
    assert bom.text == "naïve"  # a byte-order mark beats the header


def test_robots_directives_of_a_page():
    meta = (b'<html><head><META content="NoIndex, nofollow" name=robots><meta name="gym_crawl" content="noarchive">'
            b'<meta name="otherbot" content="none"></head></html>')
    pages = {"a": {"/meta": meta,
                   "/header": Response(b"<html></html>", headers=(("X-Robots-Tag", "noindex"),
                                                                   ("X-Robots-Tag", "otherbot: nofollow"),
                                                                   ("X-Robots-Tag", "gym_crawl: none"))),
                   "/plain": html_page("plain")}}
    with serve_site(pages) as site, PoliteFetcher(policy(obey_robots=False)) as f:
        assert f.fetch(site.url("a", "/meta")).robots_directives == {"noindex", "nofollow", "noarchive"}
        assert f.fetch(site.url("a", "/header")).robots_directives == {"noindex", "none"}
        assert f.fetch(site.url("a", "/plain")).robots_directives == frozenset()


# ---------------------------------------------------------------------------------------------- the API
def test_policy_validation_names_the_field():
    with pytest.raises(ValueError, match="delay"):
        FetchPolicy(delay=-1)
    with pytest.raises(ValueError, match="rate"):
        FetchPolicy(rate=0)
    with pytest.raises(ValueError, match="max_bytes"):
        FetchPolicy(max_bytes=0)
    with pytest.raises(ValueError, match="deny_patterns"):
        FetchPolicy(deny_patterns=("(",))
    with pytest.raises(TypeError, match="allowed_hosts"):
        FetchPolicy(allowed_hosts="example.org")
    with pytest.raises(ValueError, match="unknown FetchPolicy fields"):
        FetchPolicy.from_dict({"delay": 1, "speed": 2})
    p = FetchPolicy(allowed_hosts=["a.test"], delay=0.5)
    assert FetchPolicy.from_dict(p.to_dict()) == p and p.allowed_hosts == ("a.test",)
    assert FetchPolicy().delay == 1.0


def test_closed_fetcher_refuses_to_fetch():
    f = PoliteFetcher(policy())
    f.close()
    f.close()
    with pytest.raises(RuntimeError, match="closed"):
        f.fetch("http://127.0.0.1:9/")
