"""The live crawler and the WARC path against a hostile web: each finding of the adversarial trial (a scope
hole, hangs, lost data, silent wrong results, messages, network hygiene) as a regression test on a hostile
loopback server or a crafted WARC. The seeded fuzz of responses and of WARC records is tests/test_fuzz_web.py."""
from __future__ import annotations

import gzip
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from gym_crawl.web.fetcher import FetchPolicy, PoliteFetcher, retry_after_seconds
from gym_crawl.web.html_extract import MAX_NESTING, extract_page, nesting
from gym_crawl.web.live import LiveWeb
from gym_crawl.web.policy import in_scope
from gym_crawl.web.serve.server import (
    MisbehaveSettings,
    Raw,
    Response,
    html_page,
    raw_response,
    redirect,
    robots_txt,
    serve_site,
)
from gym_crawl.web.urls import canonical_url, registered_domain
from gym_crawl.web.warc import _dechunk, load_warc, parse_warc_file
from gym_crawl.web.warc_io import (
    WarcInUseError,
    WarcRecorder,
    read_fetches,
    readers_disagree,
    records_fastwarc,
    records_warcio,
)
from tests.helpers import stop_timed, wait_for

FAST = {"delay": 0.0, "rate": None, "connect_timeout": 2.0, "read_timeout": 2.0, "max_time": 10.0}


def policy(**kw) -> FetchPolicy:
    return FetchPolicy(**{**FAST, **kw})


class StepAll(gym.Wrapper):
    """Steps the env on the lowest frontier page until it ends (breadth-first by discovery order)."""

    def crawl(self, steps: int = 200) -> list[str]:
        self.env.reset(seed=0)
        errors = []
        for _ in range(steps):
            F = np.sort(self.env.unwrapped.view.frontier_pages())
            if not len(F):
                break
            _, _, term, trunc, info = self.env.step(int(F[0]))
            errors.append(info["fetch_error"])
            if term or trunc:
                break
        return errors


def crawl_env(web: LiveWeb, steps: int = 60) -> StepAll:
    return StepAll(gym.make("WikiCrawl-v1", corpus=web, topic="geology", max_episode_steps=steps, reducer="topk",
                            action="page", observation="state"))


# =========================================================================================== security
def test_scope_compares_origins_for_links_and_redirects_alike():
    """A seed on the default port stood for its bare host name, and the fetcher's scope then admitted any port
    or scheme of that host to redirects: the origin (scheme, host, port) decides, one rule for both."""
    p = FetchPolicy(allowed_hosts=("127.0.0.4",))
    assert in_scope(p, "http://127.0.0.4/a") and in_scope(p, "https://127.0.0.4/a")
    assert not in_scope(p, "http://127.0.0.4:18293/page/1")
    assert not in_scope(p, "https://127.0.0.4:80/") and not in_scope(p, "http://127.0.0.4:443/")
    exact = FetchPolicy(allowed_hosts=("https://a.test",))
    assert in_scope(exact, "https://a.test/x") and not in_scope(exact, "http://a.test/x")
    with pytest.raises(ValueError, match="allowed_hosts.*'a.test/path'"):
        FetchPolicy(allowed_hosts=("a.test/path",))
    web = LiveWeb(["http://127.0.0.4/"], fetch=lambda url: None)
    urls = ["http://127.0.0.4/x", "https://127.0.0.4/x", "http://127.0.0.4:18293/x", "http://127.0.0.5/x",
            "http://127.0.0.4:80/y"]
    assert [web.in_scope(u) for u in urls] == [in_scope(web._scope, u) for u in urls] == [True, True, False, False,
                                                                                         True]


def test_a_redirect_to_another_port_of_the_seed_host_is_never_requested(tmp_path):
    other: dict[str, str] = {}
    pages = {"a": {"/": html_page("a", "<p>start</p>", [("/hop", "hop")]),
                   "/hop": lambda path: redirect(other["b"] + "/page/1", 302)},
             "b": {"/robots.txt": robots_txt([]), "/page/1": html_page("b1")}}
    with serve_site(pages, bind="ports") as site:
        other["b"] = site.base_urls["b"]  # the same host (127.0.0.1), another port
        web = LiveWeb([site.url("a", "/")], policy=policy(), warc=tmp_path / "c.warc.gz", max_pages=100)
        errors = crawl_env(web).crawl()
        web.close()
        assert "out-of-scope" in errors
        assert site.requests("b") == []  # neither /robots.txt nor /page/1 was asked on the other port


def test_domain_scope_is_the_registrable_domain_by_the_public_suffix_list():
    assert registered_domain("www.bbc.co.uk") == "bbc.co.uk" and registered_domain("evil.co.uk") == "evil.co.uk"
    assert registered_domain("docs.python.org") == "python.org"
    assert registered_domain("a.github.io") == "a.github.io"  # the list's private section: a site per user
    assert registered_domain("127.0.0.4:8080") == "127.0.0.4" and registered_domain("site.test") == "site.test"
    web = LiveWeb(["http://www.bbc.co.uk/news"], fetch=lambda url: None, scope="domain")
    assert web.in_scope("http://news.bbc.co.uk/x") and web.in_scope("https://bbc.co.uk/")
    assert not web.in_scope("http://evil.co.uk/") and not web.in_scope("http://co.uk/")
    assert not web.in_scope("http://bbc.co.uk:8080/")  # the seed's port
    gh = LiveWeb(["https://alice.github.io/"], fetch=lambda url: None, scope="domain")
    assert gh.in_scope("https://www.alice.github.io/") and not gh.in_scope("https://bob.github.io/")


# ============================================================================================== hangs
def _trickle(page: bytes, *, headers_too: bool, pace: float, close_after: int | None = None) -> Raw:
    head = raw_response(200, [("Content-Type", "text/html")], page)
    split = head.index(b"\r\n\r\n") + 4
    data = head if headers_too else head[:split] + page
    if close_after is not None:
        data = data[:split + close_after]
    return Raw(data, pace=pace, piece=1 if headers_too else 1, status=200)


def test_trickled_headers_and_body_end_at_max_time():
    page = html_page("Slow", "<p>" + "x" * 200 + "</p>")
    pages = {"a": {"/head": _trickle(page, headers_too=True, pace=0.3),
                   "/body": Raw(raw_response(200, [("Content-Type", "text/html")], page)[:120], pace=0.3, piece=1)}}
    with serve_site(pages) as site, PoliteFetcher(policy(obey_robots=False, read_timeout=5.0, max_time=1.5)) as f:
        for path in ("/head", "/body"):
            t0 = time.monotonic()
            r = f.fetch(site.url("a", path))
            took = time.monotonic() - t0
            assert r.error == "timeout" and r.body == b"", (path, r.error)
            assert took < 1.5 + 1.0, (path, took)  # max_time, not minutes (each byte reset the read timeout)


def test_max_time_holds_across_retries():
    """A server that drops the connection after a few trickled bytes: every attempt is a connection error,
    retried; all attempts together stay within max_time."""
    page = html_page("x", "<p>" + "y" * 500 + "</p>")
    drop = Raw(raw_response(200, [("Content-Type", "text/html")], page)[:90], pace=0.2, piece=1)
    with serve_site({"a": {"/drop": drop}}) as site, \
            PoliteFetcher(policy(obey_robots=False, read_timeout=5.0, max_time=2.0, max_retries=5, backoff=0.1)) as f:
        t0 = time.monotonic()
        r = f.fetch(site.url("a", "/drop"))
        took = time.monotonic() - t0
    assert r.error in ("timeout", "connect") and took < 2.0 + 1.0, (r.error, took)


def test_cancel_ends_a_trickling_fetch_at_once():
    page = html_page("x", "<p>" + "y" * 500 + "</p>")
    with serve_site({"a": {"/t": _trickle(page, headers_too=True, pace=0.5)}}) as site, \
            PoliteFetcher(policy(obey_robots=False, read_timeout=30.0, max_time=60.0)) as f:
        threading.Timer(0.5, f.cancel).start()
        t0 = time.monotonic()
        r = f.fetch(site.url("a", "/t"))
        took = time.monotonic() - t0
        assert r.error == "cancelled" and took < 0.5 + 1.0, took
        assert f.fetch(site.url("a", "/t")).error == "cancelled" and f.check(site.url("a", "/")) == "cancelled"


def test_ctrl_c_ends_a_live_crawl_within_two_seconds(tmp_path):
    """SIGINT while a fetch trickles: the crawl process exits within 2 s (it waited for the fetch, 95 s in
    the trial), the WARC stays valid, and the cancelled fetch is not recorded as a result."""
    page = html_page("Slow", "<p>" + "z" * 4000 + "</p>")
    pages = {"a": {"/": html_page("Start", "<p>geology</p>", [("/slow", "geology slow")]),
                   "/slow": _trickle(page, headers_too=False, pace=0.2)}}
    warc = tmp_path / "int.warc.gz"
    with serve_site(pages) as site:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gym_crawl", "crawl", "--live", site.url("a", "/"), "--agent", "best-first",
             "--topic", "geology", "--steps", "5", "--warc", str(warc), "--delay", "0", "--capacity", "100"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        try:
            wait_for(lambda: site.requests("a", "/slow"), proc, poll=0.05)
            time.sleep(0.5)  # the body is trickling now
            out, err, took = stop_timed(proc, signal.SIGINT, timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 130, err.decode()  # 128 + SIGINT, after the summary
    assert took <= 2.0, f"exit {took:.2f} s after SIGINT"
    assert readers_disagree(warc) is None
    fetched = [r.url for r in read_fetches(warc)]
    assert site.url("a", "/slow") not in fetched and b"SIGINT" in out


@pytest.mark.parametrize("tag", ["div", "section", "ul", "article"])
def test_deeply_nested_html_is_read_by_the_bounded_fallback(tag):
    n = 40_000
    html = f"<html><head><title>Deep</title></head><body><p>volcano start</p>{f'<{tag}>x ' * n}" \
           f"<a href='/end'>the end</a></body></html>"
    assert nesting(html)[0] > MAX_NESTING
    t0 = time.process_time()
    page = extract_page(html.encode(), "http://deep.test/")
    took = time.process_time() - t0
    assert page.fallback == "nesting" and took < 20, took  # 107 s at 32k divs before: a hang, not a figure
    assert page.title == "Deep" and "volcano start" in page.text
    assert [(link.url, link.anchor, link.context, link.position) for link in page.links] == \
        [("http://deep.test/end", "the end", "", "other")]
    shallow = extract_page(b"<html><body><div><div><a href='/x'>x</a></div></div></body></html>", "http://d.test/")
    assert shallow.fallback is None


def test_deep_pages_are_counted_live_and_in_the_compile(tmp_path):
    deep = ("<html><body><p>geology</p>" + "<div>x " * 3000 + "</body></html>").encode()
    pages = {"a": {"/": html_page("Start", "<p>geology</p>", [("/deep", "geology deep")]), "/deep": deep}}
    warc = tmp_path / "deep.warc.gz"
    with serve_site(pages) as site:
        web = LiveWeb([site.url("a", "/")], policy=policy(obey_robots=False), warc=warc, max_pages=100)
        crawl_env(web, steps=3).crawl(3)
        web.close()
    assert web.stats["extract_fallback"] == 1
    c = load_warc(warc, cache=False)
    assert c.meta["warc_summary"]["extract_fallback"] == 1


def _chunked_warc(path: Path, size_line: bytes) -> Path:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=False)
        for url, body in (("http://a.test/ok", b"3\r\nabc\r\n0\r\n\r\n"), ("http://a.test/bad", size_line)):
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html"), ("Transfer-Encoding", "chunked")],
                                    protocol="HTTP/1.1")
            w.write_record(w.create_warc_record(url, "response", payload=io.BytesIO(body), length=len(body),
                                                http_headers=http))
    return path


@pytest.mark.parametrize("size_line", [b"-6\r\nabcdef\r\n0\r\n\r\n", b"zz\r\nab", b"ff\r\nshort\r\n0\r\n\r\n",
                                       b"3\r\nabcXY0\r\n\r\n"])
def test_dechunk_of_garbage_sizes_ends_with_a_clear_error(tmp_path, size_line):
    with pytest.raises(ValueError, match="chunked body"):
        _dechunk(size_line)
    path = _chunked_warc(tmp_path / "chunk.warc", size_line)
    done: dict = {}
    t = threading.Thread(target=lambda: done.update(parse_warc_file(path, tmp_path / "out")), daemon=True)
    t.start()
    t.join(timeout=30)
    assert not t.is_alive(), "parse_warc_file hung on a malformed chunked body"
    assert done["skipped"].get("broken") == 1 and done["broken"][0][0] == "http://a.test/bad"
    assert "chunked body" in done["broken"][0][1]
    assert sum(c["pages"] for c in done["chunks"]) == 1  # the good record before it is kept


# ========================================================================================== data lost
def test_a_link_to_a_100000_character_url_loses_no_record(tmp_path):
    huge = "/" + "a" * 100_000
    long = "/" + "b" * 9_000  # under the canonical cap, over the trap guard
    links = [(huge, "huge"), (long, "long")] + [(f"/p{i}", f"geology {i}") for i in range(8)]
    pages = {"a": {"/": html_page("Start", "<p>geology</p>", links),
                   **{f"/p{i}": html_page(f"p{i}", "<p>geology rock</p>") for i in range(8)}}}
    warc = tmp_path / "long.warc.gz"
    with serve_site(pages) as site:
        web = LiveWeb([site.url("a", "/")], policy=policy(obey_robots=False), warc=warc, max_pages=100)
        env = crawl_env(web, steps=30)
        errors = env.crawl(30)
        web.recorder.write_decision({"url": site.url("a", huge), "note": "a decision naming the huge URL"})
        with PoliteFetcher(policy(obey_robots=False), recorder=web.recorder) as f:
            assert f.fetch(site.url("a", huge)).error == "trap:url-length"
        web.close()
        assert not [e for e in site.log if len(e.path) > 2048]
    # the long URL is refused by the trap guard: never offered (deploy's offer rules) or a fetch error
    assert "trap:url-length" in errors or "trap:url-length" in web.counters()["refused"], errors
    assert readers_disagree(warc) is None
    fast, err = records_fastwarc(warc)
    assert err is None and len(fast) == len(records_warcio(warc)[0])
    fetched = [r for r in read_fetches(warc) if r.ok]
    c = load_warc(warc, cache=False)
    assert c.n_pages == len(fetched) == 9  # the compile keeps every fetched page (it kept 3 of 20)


def test_two_recorders_on_one_warc_are_refused(tmp_path):
    path = tmp_path / "one.warc.gz"
    with WarcRecorder(path) as rec:
        rec.write_decision({"step": 1})
        with pytest.raises(WarcInUseError, match=rf"held by process {os.getpid()} \(this process\)"):
            WarcRecorder(path, append=True)
        with pytest.raises(WarcInUseError):
            WarcRecorder(path, overwrite=True)  # refused before truncating anything
        rec.write_decision({"step": 2})
    assert readers_disagree(path) is None and len(records_warcio(path)[0]) == 3
    with WarcRecorder(path, append=True) as rec:  # free again once closed
        rec.write_decision({"step": 3})


def test_a_second_resume_of_a_warc_in_use_is_refused_by_the_cli(tmp_path):
    """Two crawls on one WARC: the second (--resume) is refused in one line naming the first's process, and
    the first goes on; the server never sees two connections at once."""
    page = html_page("Slow", "<p>" + "z" * 3000 + "</p>")
    pages = {"a": {"/": html_page("Start", "<p>geology</p>", [("/slow", "geology slow")]),
                   "/slow": _trickle(page, headers_too=False, pace=0.05)}}
    path = tmp_path / "busy.warc.gz"
    with serve_site(pages) as site:
        argv = [sys.executable, "-m", "gym_crawl", "crawl", "--live", site.url("a", "/"), "--agent", "best-first",
                "--topic", "geology", "--steps", "3", "--warc", str(path), "--delay", "0", "--capacity", "100"]
        first = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            wait_for(lambda: site.requests("a", "/slow"), first, poll=0.05)
            second = subprocess.run(argv + ["--resume"], capture_output=True, text=True, timeout=120)
            first.send_signal(signal.SIGINT)
            first.communicate(timeout=30)
        finally:
            if first.poll() is None:
                first.kill()
        assert site.max_concurrent("a") == 1
    assert second.returncode == 1, second.stderr
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1 and "another crawl is writing this WARC" in lines[0] and str(first.pid) in lines[0]
    assert readers_disagree(path) is None


def _cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gym_crawl", *argv], capture_output=True, text=True, timeout=300)


def test_corpus_compile_refuses_a_destination_that_is_not_a_corpus(tmp_path):
    mine = tmp_path / "mydir"
    mine.mkdir()
    (mine / "thesis.tex").write_text("precious")
    r = _cli("corpus", "compile", "synthetic-1000", str(mine))
    assert r.returncode == 2 and "holds other files" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert (mine / "thesis.tex").read_text() == "precious"
    src = tmp_path / "notes.txt"
    src.write_text("keep me")
    r = _cli("corpus", "compile", "synthetic-1000", str(src))
    assert r.returncode == 2 and "not a folder" in r.stderr and src.read_text() == "keep me"
    out = tmp_path / "c"
    assert _cli("corpus", "compile", "synthetic-1000", str(out)).returncode == 0
    r = _cli("corpus", "compile", str(out), str(out))  # the source itself
    assert r.returncode == 2 and "is (or holds, or lies in) the source" in r.stderr
    left = sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock"))
    assert left == ["c", "mydir", "notes.txt"]  # nothing moved aside
    assert _cli("corpus", "compile", "synthetic-1000", str(out)).returncode == 0  # a corpus is replaced


# ================================================================================ silent wrong results
def test_protocol_quirks_give_the_page_the_server_meant():
    with serve_site({}, misbehave={"a": ["protocol"]}) as site, PoliteFetcher(policy(obey_robots=False)) as f:
        hints = f.fetch(site.url("a", "/early-hints.html"))
        assert hints.ok and hints.status == 200 and b"after a 103" in hints.body  # not "http-103"
        umlaut = f.fetch(site.url("a", "/utf8-redirect"))
        assert umlaut.ok and umlaut.final_url == site.url("a", "/b%C3%BCcher/%C3%BC.html")  # not %C3%83%C2%BC
        q = f.fetch(site.url("a", "/search?q=a%20b"))
        assert q.ok and q.final_url.endswith("?q=a%20b")
        assert [e.path for e in site.requests("a", "/search?q=a%20b")] == ["/search?q=a%20b"]  # not q=a+b
    assert canonical_url("http://h.test/s?q=a+b") == "http://h.test/s?q=a+b"
    assert canonical_url("http://h.test/s?q=a b") == "http://h.test/s?q=a%20b"


def test_content_codings_not_asked_for_are_fetch_errors(tmp_path):
    path = tmp_path / "codings.warc.gz"
    with serve_site({}, misbehave={"a": ["codings"]}) as site, WarcRecorder(path) as rec, \
            PoliteFetcher(policy(obey_robots=False), recorder=rec) as f:
        for name in ("bzip2", "zstd", "unknown-coding"):
            r = f.fetch(site.url("a", f"/{name}.html"))
            assert (r.error, r.body) == ("content-encoding", b""), name
            assert not r.exchanges[-1].decoded
        gz = f.fetch(site.url("a", "/"))  # a page the fetcher does decode is still a page
        assert gz.ok
    from warcio.archiveiterator import ArchiveIterator

    with open(path, "rb") as fh:
        heads = [r.http_headers for r in ArchiveIterator(fh) if r.rec_type == "response"]
    coded = [h for h in heads if h.get_header("Content-Encoding")]
    assert len(coded) == 3 and not any(h.get_header("X-Crawler-Content-Encoding") for h in coded)


def test_resume_refuses_a_warc_that_is_not_this_crawls(tmp_path):
    seeds = ["http://127.0.0.9:1/"]
    foreign = tmp_path / "foreign.warc.gz"
    with WarcRecorder(foreign, seeds=["http://elsewhere.test/"]):
        pass  # a WARC of this package, but no live crawl's
    before = foreign.read_bytes()
    with pytest.raises(ValueError, match="not recorded by a live crawl"):
        LiveWeb(seeds, warc=foreign, resume=True)
    assert foreign.read_bytes() == before
    junk = tmp_path / "junk.warc.gz"
    junk.write_bytes(os.urandom(3000))
    before = junk.read_bytes()
    # random bytes are unreadable, or (rarely) read by the lenient reader as a stray record: refused either way
    with pytest.raises(ValueError, match="not a readable WARC file|not a WARC this package wrote") as e:
        LiveWeb(seeds, warc=junk, resume=True)
    assert "\n" not in str(e.value) and len(str(e.value)) < 300 and junk.read_bytes() == before
    text = tmp_path / "notes.warc"
    text.write_text("just some notes\n" * 100)
    r = _cli("crawl", "--live", seeds[0], "--topic", "x", "--warc", str(text), "--resume")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "notes.warc" in r.stderr
    assert text.read_text() == "just some notes\n" * 100


def test_a_damaged_middle_is_never_cut_off_on_resume(tmp_path):
    path = tmp_path / "mid.warc.gz"
    with WarcRecorder(path) as rec:
        for i in range(4):
            rec.write_decision({"step": i})
    data = bytearray(path.read_bytes())
    members = [i for i in range(len(data) - 2) if data[i:i + 3] == b"\x1f\x8b\x08"]
    data[members[2] + 12] ^= 0xFF  # corrupt the third member; two complete ones follow
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="damaged at byte .* complete records after it"):
        WarcRecorder(path, append=True)
    assert path.read_bytes() == bytes(data)


# ============================================================================================ messages
def test_retry_after_with_a_unicode_digit_is_ignored_not_fatal():
    assert retry_after_seconds("²") is None and retry_after_seconds("٣") is None and retry_after_seconds("7") == 7
    busy = Response(b"", status=503, headers=(("Retry-After", "²"),))
    with serve_site({"a": {"/x": busy}}) as site, \
            PoliteFetcher(policy(obey_robots=False, max_retries=1, backoff=0.05)) as f:
        assert f.fetch(site.url("a", "/x")).error == "http-503"


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "soon"])
def test_delay_must_be_a_finite_number_of_seconds(value):
    r = _cli("crawl", "--live", "http://127.0.0.9:1/", "--topic", "x", "--delay", value)
    assert r.returncode == 2 and "--delay" in r.stderr and "Traceback" not in r.stderr
    with pytest.raises(ValueError, match="delay"):
        FetchPolicy(delay=float(value) if value != "soon" else float("inf"))


@pytest.mark.parametrize("argv", [["--max-tasks", "0"], ["--jobs", "0"], ["--jobs", "-4"]])
def test_eval_refuses_zero_tasks_and_jobs(argv):
    r = _cli("eval", "--set", "hard", *argv)
    assert r.returncode == 2 and argv[0] in r.stderr and "must be >= 1" in r.stderr


def test_a_full_disk_or_read_only_folder_is_one_line_not_a_traceback(tmp_path, monkeypatch, capsys):
    import errno

    from gym_crawl import cli
    from gym_crawl.corpus.core import Corpus

    def full(self, path):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(Corpus, "save", full)
    assert cli.main(["corpus", "compile", "synthetic-1000", str(tmp_path / "c")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"gym-crawl: error: {tmp_path / 'c'}: No space left on device"]

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr("tempfile.mkstemp", read_only)
    assert cli.main(["crawl", "--live", "http://127.0.0.9:1/", "--topic", "x", "--warc",
                     str(tmp_path / "w.warc.gz")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--warc" in err[0] and "Read-only file system" in err[0]
    assert cli.main(["corpus", "compile", "synthetic-1000", str(tmp_path / "ro")]) == 2  # refused before loading
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "corpus compile destination" in err[0] and "Read-only file system" in err[0]
    assert not (tmp_path / "ro").exists()


def test_a_disk_that_fills_during_a_crawl_is_one_line(tmp_path, monkeypatch, capsys):
    """The WARC's disk fills after a few fetches: the crawl stops with one line naming the file and exit 1, and
    what was written before is a readable WARC."""
    import errno

    from gym_crawl import cli

    real = WarcRecorder._flush_locked
    calls = {"n": 0}

    def flush(self):
        calls["n"] += 1
        if calls["n"] > 4:
            raise OSError(errno.ENOSPC, "No space left on device", str(self.path))
        real(self)

    monkeypatch.setattr(WarcRecorder, "_flush_locked", flush)
    pages = {"a": {"/": html_page("Start", "<p>geology</p>", [(f"/p{i}", f"geology {i}") for i in range(5)]),
                   **{f"/p{i}": html_page(f"p{i}", "<p>geology</p>") for i in range(5)}}}
    warc = tmp_path / "full.warc.gz"
    with serve_site(pages) as site:
        code = cli.main(["crawl", "--live", site.url("a", "/"), "--agent", "best-first", "--topic", "geology",
                         "--steps", "5", "--warc", str(warc), "--delay", "0", "--capacity", "100"])
    stderr = capsys.readouterr().err
    err = [ln for ln in stderr.strip().splitlines() if ln.startswith("gym-crawl: error")]
    assert code == 1 and err == [f"gym-crawl: error: {warc}: No space left on device"] and "Traceback" not in stderr
    monkeypatch.setattr(WarcRecorder, "_flush_locked", real)
    assert records_warcio(warc)[1] is None and readers_disagree(warc) is None


def test_a_disk_that_fills_during_a_compile_is_one_line(tmp_path, monkeypatch, capsys):
    """The disk fills halfway through writing a corpus (a saved one to replace, then a WARC's compile): one line
    naming the file and exit 1; the corpus that was there still loads, and nothing half-written is left."""
    import errno

    from gym_crawl import cli
    from gym_crawl.corpus import core

    out = tmp_path / "c"
    assert cli.main(["corpus", "compile", "synthetic-1000", str(out)]) == 0
    capsys.readouterr()
    before = core.Corpus.load(out)
    real, calls = core.save_npy, {"n": 0}

    def save_npy(path, arr):
        calls["n"] += 1
        if calls["n"] > 3:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path, arr)

    monkeypatch.setattr(core, "save_npy", save_npy)
    assert cli.main(["corpus", "compile", "synthetic-1000", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gym-crawl: error: ") and err[0].endswith(": No space left on device")
    assert calls["n"] == 4  # it failed mid-save, not before
    monkeypatch.setattr(core, "save_npy", real)
    after = core.Corpus.load(out)
    assert (after.n_pages, after.n_links, after.checksum) == (before.n_pages, before.n_links, before.checksum)
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == ["c"]

    warc = tmp_path / "w" / "site.warc.gz"
    warc.parent.mkdir()
    pages = {"a": {f"/p{i}": html_page(f"p{i}", "<p>geology</p>") for i in range(3)}}
    with serve_site(pages) as site, WarcRecorder(warc) as rec, \
            PoliteFetcher(policy(obey_robots=False), recorder=rec) as f:
        assert all(f.fetch(site.url("a", f"/p{i}")).ok for i in range(3))

    def savez(f, **arrays):
        f.write(b"PK")
        raise OSError(errno.ENOSPC, "No space left on device")  # as a write to an open file: no file name

    monkeypatch.setattr(np, "savez", savez)
    assert cli.main(["corpus", "compile", str(warc), str(tmp_path / "wc")]) == 1
    stderr = capsys.readouterr().err
    err = [ln for ln in stderr.strip().splitlines() if ln.startswith("gym-crawl: error")]
    assert len(err) == 1 and err[0].endswith(".npz: No space left on device") and "Traceback" not in stderr
    assert not (tmp_path / "wc").exists()
    assert not list(Path(os.environ["GYM_CRAWL_DATA"]).rglob("*.npz.tmp"))  # no part of a chunk left


def test_a_seed_refused_by_robots_or_the_network_is_named_with_its_reason():
    pages = {"a": {"/robots.txt": robots_txt(["/"]), "/": html_page("Start")}}
    with serve_site(pages) as site:
        web = LiveWeb([site.url("a", "/")], policy=policy(), max_pages=100)
        env = gym.make("WikiCrawl-v1", corpus=web, topic="geology", max_episode_steps=5)
        with pytest.raises(ValueError, match=r"seed pages could not be fetched: .*/ \(robots\)"):
            env.reset(seed=0)
        web.close()
    import socket

    with socket.socket() as s:  # a loopback port nothing listens on: the network refuses the seed
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}/"
    web = LiveWeb([closed], policy=policy(obey_robots=False, max_retries=0), max_pages=100)
    env = gym.make("WikiCrawl-v1", corpus=web, topic="geology", max_episode_steps=5)
    with pytest.raises(ValueError, match=r"seed pages could not be fetched: .*:\d+/ \(connect\)"):
        env.reset(seed=0)
    web.close()


# ================================================================================ offline, network hygiene
def test_a_task_constructor_never_downloads(tmp_path, monkeypatch, network_guard):
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path / "empty"))
    monkeypatch.delenv("GYM_CRAWL_WIKISPEEDIA", raising=False)
    from gym_crawl import tasks

    tasks._CORPORA.clear()
    with pytest.raises(ValueError, match=r"never downloads.*download wikispeedia --from"):
        tasks.make("ws-100:test:3")
    assert network_guard.violations == []  # not even a name lookup


def test_loopback_servers_resolve_nothing(network_guard):
    """HTTPServer.server_bind looks its address up (getfqdn); the guard fails any lookup, so starting and
    using a site here shows ours makes none."""
    with serve_site({"a": {"/": html_page("a")}}, misbehave={"b": ["robots"]}) as site, \
            PoliteFetcher(policy()) as f:
        assert f.fetch(site.url("a")).ok
    assert network_guard.violations == []


def test_gzip_body_that_decodes_is_a_page_and_one_that_does_not_is_an_error():
    page = html_page("Zipped", "<p>geology</p>")
    good = Response(gzip.compress(page), headers=(("Content-Encoding", "gzip"),))
    bad = Response(b"\x1f\x8b\x08\x00garbage", headers=(("Content-Encoding", "gzip"),))
    with serve_site({"a": {"/good": good, "/bad": bad}}) as site, PoliteFetcher(policy(obey_robots=False)) as f:
        assert f.fetch(site.url("a", "/good")).body == page
        r = f.fetch(site.url("a", "/bad"))
        assert not r.ok and r.error == "decode" and r.body == b""


def test_misbehave_settings_name_the_new_misbehaviours():
    from gym_crawl.web.serve.server import MISBEHAVIOURS

    assert {"protocol", "codings", "trickle"} <= set(MISBEHAVIOURS)
    assert MisbehaveSettings().trickle_pace > 0
    assert json.dumps(MisbehaveSettings().__dict__)
