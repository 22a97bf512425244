"""WARC recording of live fetches: every exchange recorded, read back by warcio AND fastwarc (a second,
independent WARC library), results rebuilt exactly, and a file cut mid-record resumed."""
from __future__ import annotations

import gzip
import json
import os

import fastwarc.warc as fastwarc
import pytest
from warcio.archiveiterator import ArchiveIterator

from gym_crawl.web.fetcher import FetchPolicy, PoliteFetcher
from gym_crawl.web.serve.server import MisbehaveSettings, Response, serve_site
from gym_crawl.web.warc_io import (
    WarcRecorder,
    complete_prefix,
    read_decisions,
    read_fetches,
    read_warcinfo,
    recorded_headers,
)

POLICY = FetchPolicy(delay=0.02, rate=None, max_bytes=40_000, read_timeout=2.0, connect_timeout=2.0,
                     max_redirects=3)
PATHS = ["/", "/redirect/1", "/private/secret.html", "/missing.html", "/big.html", "/doc.pdf", "/latin1.html",
         "/loop/a", "/gz.html"]
GZ_PAGE = gzip.compress(b"<html><head><title>gz</title></head><body>compressed body</body></html>")


def crawl(site, path, *, append=False, paths=PATHS, seeds=True):
    results = []
    with WarcRecorder(path, append=append, policy=POLICY, seeds=[site.url("a")] if seeds else ()) as rec, \
            PoliteFetcher(POLICY, recorder=rec) as f:
        for step, p in enumerate(paths):
            r = f.fetch(site.url("a", p))
            results.append(r)
            rec.write_decision({"step": step, "url": r.url, "score": 0.5 + step, "page": None})
    return results


@pytest.fixture
def site():
    settings = MisbehaveSettings(oversize_bytes=200_000)
    pages = {"a": {"/gz.html": Response(GZ_PAGE, headers=(("Content-Encoding", "gzip"),))}}
    names = ["robots", "redirects", "404", "oversize", "non-html", "encodings", "redirect-loop"]
    with serve_site(pages, misbehave={"a": names}, settings=settings) as s:
        yield s


def _warcio_records(path):
    out = []
    with open(path, "rb") as f:
        for rec in ArchiveIterator(f):
            out.append((rec.rec_type, rec.rec_headers.get_header("WARC-Record-ID"),
                        rec.rec_headers.get_header("WARC-Target-URI"), rec, rec.content_stream().read()))
    return out


def _fastwarc_records(path):
    out = []
    with open(path, "rb") as f:
        for rec in fastwarc.ArchiveIterator(f, parse_http=False):
            assert rec.verify_block_digest(), rec.record_id
            out.append((rec.headers["WARC-Type"], rec.record_id, rec.headers.get("WARC-Target-URI")))
    return out


def test_every_exchange_is_recorded_and_read_back_by_warcio_and_fastwarc(site, tmp_path):
    path = tmp_path / "crawl.warc.gz"
    results = crawl(site, path)
    assert [r.error for r in results] == [None, None, "robots", "http-404", "too-large", "content-type", None,
                                          "redirect-loop", None]
    records = _warcio_records(path)
    types = [t for t, *_ in records]
    assert types[0] == "warcinfo"
    # one request per request the site saw, one response per request answered
    served = site.requests("a")
    assert types.count("request") == len(served) == types.count("response")
    assert [u for t, _, u, *_ in records if t == "request"] == [site.url("a", e.path) for e in served]
    assert types.count("metadata") == 2 * len(PATHS)  # a fetch record and a decision per step
    # the second library sees the same records, every block digest verified
    assert [(t, i, u) for t, i, u, *_ in records] == _fastwarc_records(path)
    # responses point at their requests; the truncated body is marked and capped
    ids = {i: t for t, i, *_ in records}
    for t, _, uri, rec, body in records:
        if t == "response":
            assert ids[rec.rec_headers.get_header("WARC-Concurrent-To")] == "request"
            assert rec.rec_headers.get_header("WARC-IP-Address").startswith("127.")
        if t == "response" and uri.endswith("/big.html"):
            assert rec.rec_headers.get_header("WARC-Truncated") == "length"
            assert 40_000 < len(body) <= 40_000 + 16384
        if t == "response" and uri.endswith("/gz.html"):  # stored decoded, encoding header renamed
            assert body.startswith(b"<html>")
            assert rec.http_headers.get_header("X-Crawler-Content-Encoding") == "gzip"
            assert rec.http_headers.get_header("Content-Encoding") is None


def test_read_fetches_rebuilds_the_results_in_crawl_order(site, tmp_path):
    path = tmp_path / "crawl.warc.gz"
    results = crawl(site, path)
    back = list(read_fetches(path))
    assert back == results  # every field but the exchanges, bodies included
    assert back[1].redirects == results[1].redirects and len(back[1].redirects) == 3
    assert back[-1].body.startswith(b"<html>") and back[6].text == results[6].text
    decisions = list(read_decisions(path))
    assert [d["step"] for d in decisions] == list(range(len(PATHS)))
    assert decisions[2] == {"step": 2, "url": site.url("a", "/private/secret.html"), "score": 2.5, "page": None}
    info = read_warcinfo(path)
    assert len(info) == 1 and info[0]["gym-crawl-seeds"] == [site.url("a")]
    assert FetchPolicy.from_dict(info[0]["gym-crawl-policy"]) == POLICY
    assert info[0]["software"].startswith("gym_crawl/") and info[0]["robots"] == "obey"


def test_a_warc_cut_mid_record_is_repaired_and_resumed(site, tmp_path):
    path = tmp_path / "crawl.warc.gz"
    first = crawl(site, path, paths=PATHS[:4])
    whole = path.stat().st_size
    assert complete_prefix(path) == whole
    # what kill -9 in the middle of a write leaves: the last record's gzip member cut short
    with open(path, "ab") as f:
        f.write(gzip.compress(b"WARC/1.1\r\nWARC-Type: metadata\r\nContent-Length: 999\r\n\r\n" + b"x" * 999)[:-40])
    assert complete_prefix(path) == whole
    rec = WarcRecorder(path, append=True, policy=POLICY)
    assert rec.truncated_bytes > 0
    rec.close()
    rec.close()  # idempotent
    assert path.stat().st_size == whole  # the cut record gone, nothing added by a run that recorded nothing
    second = crawl(site, path, append=True, paths=PATHS[4:7], seeds=False)
    assert list(read_fetches(path)) == first + second
    assert len(read_warcinfo(path)) == 2 and read_warcinfo(path)[-1]["gym-crawl-resumed"] == "true"
    assert len(_fastwarc_records(path)) == len(_warcio_records(path))


def test_a_record_shorter_than_its_content_length_is_cut_in_a_plain_warc(site, tmp_path):
    path = tmp_path / "crawl.warc"
    first = crawl(site, path, paths=PATHS[:2])
    whole = path.stat().st_size
    with open(path, "ab") as f:
        f.write(b"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 500\r\n\r\n" + b"y" * 120)
    assert complete_prefix(path) == whole
    second = crawl(site, path, append=True, paths=PATHS[6:7], seeds=False)
    assert list(read_fetches(path)) == first + second
    assert len(_fastwarc_records(path)) == len(_warcio_records(path))


def test_ctrl_c_mid_crawl_leaves_a_valid_warc(site, tmp_path):
    path = tmp_path / "crawl.warc.gz"
    calls = []

    def sleep(s):  # the politeness wait of the third fetch is interrupted
        calls.append(s)
        if len(calls) == 2:
            raise KeyboardInterrupt
        import time
        time.sleep(s)

    done = []
    with pytest.raises(KeyboardInterrupt), WarcRecorder(path, policy=POLICY) as rec, \
            PoliteFetcher(POLICY, recorder=rec, sleep=sleep) as f:
        for p in ["/", "/latin1.html", "/landing.html", "/missing.html"]:
            done.append(f.fetch(site.url("a", p)))
    assert complete_prefix(path) == path.stat().st_size
    assert list(read_fetches(path)) == done and len(done) >= 1
    assert len(_fastwarc_records(path)) == len(_warcio_records(path))


def test_a_request_that_never_left_is_not_recorded(tmp_path):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there
    path = tmp_path / "refused.warc.gz"
    pol = FetchPolicy(obey_robots=False, max_retries=0)
    with WarcRecorder(path, policy=pol) as rec, PoliteFetcher(pol, recorder=rec) as f:
        r = f.fetch(f"http://127.0.0.1:{port}/x")
    assert r.error == "connect" and not r.exchanges[0].sent and "Connection refused" in r.exchanges[0].detail
    assert [t for t, *_ in _warcio_records(path)] == ["warcinfo", "metadata"]
    assert list(read_fetches(path)) == [r]


def test_recorder_guards(tmp_path):
    path = tmp_path / "x.warc.gz"
    WarcRecorder(path).close()
    with pytest.raises(FileExistsError, match="append=True"):
        WarcRecorder(path)
    rec = WarcRecorder(path, overwrite=True)
    with pytest.raises(TypeError, match="JSON"):
        rec.write_decision({"x": object()})
    rec.close()
    with pytest.raises(ValueError, match="closed"):
        rec.write_decision({"x": 1})
    with pytest.raises(FileNotFoundError, match="no such WARC"):
        list(read_fetches(tmp_path / "missing.warc.gz"))
    assert len(read_warcinfo(path)) == 1 and list(read_fetches(path)) == []
    os.truncate(path, 10)
    assert complete_prefix(path) == 0


def test_recorded_headers_describe_the_stored_body():
    h = [("Content-Type", "text/html"), ("Transfer-Encoding", "chunked"), ("Content-Encoding", "gzip")]
    assert recorded_headers(h, 12) == [("Content-Type", "text/html"), ("X-Crawler-Transfer-Encoding", "chunked"),
                                       ("X-Crawler-Content-Encoding", "gzip"), ("Content-Length", "12")]
    same = [("Content-Length", "5")]
    assert recorded_headers(same, 5) == same
    assert recorded_headers(same, 3) == [("X-Crawler-Content-Length", "5"), ("Content-Length", "3")]
    assert json.loads(json.dumps(recorded_headers([], 0))) == [["Content-Length", "0"]]


KILLED_WRITER = r"""
import itertools, os, sys
from gym_crawl.web.fetcher import Exchange, FetchResult
from gym_crawl.web.warc_io import WarcRecorder

class StallingFile:
    # after three fetches, writes half of the next fetch, says so, and hangs until killed (a slow disk)
    def __init__(self, f):
        self.f = f

    def write(self, data):
        self.f.write(data[: len(data) // 2])
        self.f.flush()
        print("half", flush=True)
        import time
        time.sleep(60)

    def __getattr__(self, name):
        return getattr(self.f, name)


rec = WarcRecorder(sys.argv[1])
body = os.urandom(1 << 20)  # incompressible: each fetch is a megabyte-sized write
for i in itertools.count():
    if i == 3:
        rec._file = StallingFile(rec._file)
    url = f"http://127.0.0.1:9/p{i}"
    ex = Exchange(url=url, purpose="page", method="GET", request_headers=[("Host", "127.0.0.1:9")],
                  started_at="2026-11-25T12:00:00.000000Z", status=200, reason="OK",
                  headers=[("Content-Type", "text/html")], body=body)
    rec.write_exchange(ex)
    rec.write_result(FetchResult(url=url, final_url=url, status=200, headers=ex.headers, body=body,
                                 content_type="text/html", charset=None, error=None, redirects=[],
                                 fetched_at=ex.started_at, elapsed=0.0, exchanges=[ex]))
    print(i, flush=True)
"""


def test_a_writer_killed_with_sigkill_leaves_a_resumable_warc(tmp_path):
    import signal
    import subprocess
    import sys

    path = tmp_path / "killed.warc.gz"
    proc = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        said = [proc.stdout.readline().strip() for _ in range(4)]
        assert said == ["0", "1", "2", "half"], said
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
    good, size = complete_prefix(path), path.stat().st_size
    assert size - good > 1 << 19  # killed in the middle of the fourth fetch's records
    with WarcRecorder(path, append=True) as rec:
        assert rec.truncated_bytes == size - good
    fetched = list(read_fetches(path))
    assert len(fetched) == 3 and [r.url for r in fetched] == [f"http://127.0.0.1:9/p{i}" for i in range(len(fetched))]
    assert all(len(r.body) == 1 << 20 for r in fetched)
    assert len(_fastwarc_records(path)) == len(_warcio_records(path))
    assert complete_prefix(path) == path.stat().st_size
