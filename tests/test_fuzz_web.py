"""Seeded fuzz of the hostile web: responses from a loopback server (status, headers, encodings, transfer framing,
pacing, sizes, nesting) fetched and recorded, and WARC files with malformed records (lengths, chunking, headers,
gzip members) compiled and read by both readers. Each case is bounded in time; the invariants:

* no request outside the crawl's scope or against robots.txt (from the server's own log);
* no hang: every fetch ends within ``max_time`` (plus a second of slack), every compile within its bound;
* no lost record: every fetch result comes back from the WARC, every page fetched is a page of the compiled
  corpus, every complete record before a malformed one is compiled;
* no silent mislabel: a fetch that is a page has exactly the body the server meant, and a malformed record
  never becomes a page;
* both WARC readers (FastWARC, warcio) read the same records.

The default suite runs a few seeded cases; ``pytest -m slow tests/test_fuzz_web.py`` runs many more.
"""
from __future__ import annotations

import gzip
import hashlib
import threading
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from gym_crawl.web.fetcher import FetchPolicy, PoliteFetcher
from gym_crawl.web.serve.server import Raw, html_page, raw_response, robots_txt, serve_site
from gym_crawl.web.urls import canonical_url
from gym_crawl.web.warc import load_warc, parse_warc_file
from gym_crawl.web.warc_io import WarcRecorder, read_fetches, readers_disagree, records_fastwarc, records_warcio

MAX_TIME = 1.5
SLACK = 1.0
GZIP_MAGIC = b"\x1f\x8b"


# ========================================================================================== responses
@dataclass
class Case:
    """One hostile response and what a correct fetcher makes of it."""

    path: str
    raw: Raw
    page: bytes | None  # the decoded body when the response is a page the fetcher must accept, else None
    note: str
    decided: bool = True  # False: either outcome is right (a paced reply may or may not beat max_time ...)


def _html(rng: np.random.Generator, i: int, other: str) -> bytes:
    depth = int(rng.choice([0, 5, 50, 600, 3000]))
    links = [f"/p{int(rng.integers(0, 50))}", "/private/secret.html", f"{other}/page", "/" + "q" * 20_000]
    anchors = "".join(f'<a href="{h}">link {k}</a> ' for k, h in enumerate(links))
    return (f"<!DOCTYPE html><html><head><title>case {i}</title></head><body><p>marker{i} geology</p>"
            + "<div>" * depth + anchors + "</div>" * int(rng.integers(0, depth + 1)) + "</body></html>").encode()


def make_case(rng: np.random.Generator, i: int, other: str) -> Case:  # noqa: C901 - one branch per dimension
    body = _html(rng, i, other)
    page: bytes | None = body
    decided = True
    headers: list[tuple[str, str | bytes]] = []
    note = []
    ctype = rng.choice(["text/html; charset=utf-8", "text/html", "none", "application/pdf", 'TEXT/HTML ; charset="x"',
                        "text/plain"])
    if ctype != "none":
        headers.append(("Content-Type", str(ctype)))
    if ctype in ("application/pdf", "text/plain"):
        page = None
    status = int(rng.choice([200] * 6 + [204, 301, 302, 404, 429, 500, 503]))
    informational = [103] if rng.random() < 0.2 else []
    if status != 200:
        page = None
    if status in (301, 302):
        headers.append(("Location", str(rng.choice(["/p1", f"{other}/page", "/private/x", "/ü/ä", "/" + "l" * 20000]))
                        .encode("utf-8")))
    if status in (429, 503):
        headers.append(("Retry-After", str(rng.choice(["1", "²", "-1", "1e9", "soon", "0"]))))
    coding = rng.choice(["none", "none", "gzip", "deflate", "gzip-broken", "bzip2", "br", "identity"])
    wire = body
    if coding == "gzip":
        wire = gzip.compress(body)
        headers.append(("Content-Encoding", "gzip"))
    elif coding == "deflate":
        wire = zlib.compress(body)
        headers.append(("Content-Encoding", "deflate"))
    elif coding == "gzip-broken":
        wire = b"\x1f\x8b\x08\x00" + bytes(rng.integers(0, 256, 200, dtype=np.uint8))
        headers.append(("Content-Encoding", "gzip"))
        page = None
    elif coding in ("bzip2", "br"):
        headers.append(("Content-Encoding", str(coding)))
        page = None
    elif coding == "identity":
        headers.append(("Content-Encoding", "identity"))
    note.append(f"{status} {ctype} {coding}")
    framing = rng.choice(["length", "length", "close", "chunked", "chunked-bad", "short", "long"])
    if framing == "close":
        data = raw_response(status, headers, wire, informational=informational, length=False)
    elif framing in ("chunked", "chunked-bad"):
        chunks = b"".join(f"{len(wire[k:k + 700]):x}\r\n".encode() + wire[k:k + 700] + b"\r\n"
                          for k in range(0, len(wire), 700))
        chunks += b"-6\r\nxx\r\n" if framing == "chunked-bad" else b"0\r\n\r\n"
        data = raw_response(status, headers + [("Transfer-Encoding", "chunked")], chunks, informational=informational)
        if framing == "chunked-bad":
            page = None
    elif framing == "short":  # Content-Length larger than the body: the server hangs up early
        data = raw_response(status, headers + [("Content-Length", str(len(wire) + 500))], wire,
                            informational=informational)
        page = None
    elif framing == "long":  # Content-Length smaller than the body: the rest is not part of the response
        data = raw_response(status, headers + [("Content-Length", str(max(0, len(wire) - 10)))], wire,
                            informational=informational)
        if page is not None and coding in ("none", "identity"):
            page = body[:-10]
        elif page is not None:
            page, decided = None, False  # a compressed stream cut short
    else:
        data = raw_response(status, headers, wire, informational=informational)
    if ctype == "none" and page is not None and not body.lstrip().lower().startswith(b"<!doctype html"):
        page = None
    if rng.random() < 0.1:  # a huge header block
        data = data.replace(b"\r\n", b"\r\nX-Padding: " + b"p" * 30_000 + b"\r\n", 1)
    pace, piece, delay = 0.0, 65536, 0.0
    kind = rng.choice(["fast"] * 6 + ["slow-head", "slow-body", "delay", "stall"])
    if kind == "slow-head":
        pace, piece = 0.05, 20
    elif kind == "slow-body":
        pace, piece = 0.02, 2000
    elif kind == "delay":
        delay = float(rng.choice([0.2, 3.0]))
    elif kind == "stall":
        pace, piece = 5.0, max(1, len(data) // 2)
    note.append(f"{framing} {kind}")
    if kind != "fast" and page is not None:
        decided = False  # may or may not finish within max_time: no claim either way
    return Case(f"/case/{i}", Raw(data, pace=pace, piece=piece, delay=delay, status=status), page, "; ".join(note),
                decided)


def run_response_fuzz(seed: int, n: int, folder: Path) -> None:
    rng = np.random.default_rng(seed)
    pages: dict[str, dict] = {"a": {"/robots.txt": robots_txt(["/private/"])}, "b": {"/page": html_page("b")}}
    with serve_site(pages) as site:
        other = site.base_urls["b"]
        cases = [make_case(rng, i, other) for i in range(n)]
        for c in cases:
            site.set_route("a", c.path, c.raw)
        host = site.base_urls["a"].split("//", 1)[1]
        pol = FetchPolicy(delay=0.0, rate=None, connect_timeout=1.0, read_timeout=0.5, max_time=MAX_TIME,
                          max_retries=1, backoff=0.05, max_retry_after=0.2, max_bytes=200_000,
                          allowed_hosts=(host,))
        warc = folder / f"fuzz-{seed}.warc.gz"
        results = []
        with WarcRecorder(warc, policy=pol) as rec, PoliteFetcher(pol, recorder=rec) as f:
            for c in cases:
                t0 = time.monotonic()
                r = f.fetch(site.url("a", c.path))
                took = time.monotonic() - t0
                assert took <= MAX_TIME + SLACK, f"case {c.path} ({c.note}): {took:.2f} s"
                if r.ok:
                    assert c.page is not None or not c.decided, f"{c.path} ({c.note}) taken for a page"
                    if c.page is not None:
                        assert r.body == c.page, f"{c.path} ({c.note}): another body"
                elif c.page is not None and c.decided:
                    pytest.fail(f"{c.path} ({c.note}) is a page, the fetcher said {r.error}")
                results.append(r)
        log = site.requests()
        assert not [e for e in log if e.host == "b"], "a request left the scope"
        assert not [e for e in log if e.path.startswith("/private/")], "a request robots.txt disallows"
    assert readers_disagree(warc) is None
    back = list(read_fetches(warc))
    assert [(b.url, b.error, b.body) for b in back] == [(r.url, r.error, r.body) for r in results]
    ok = [r for r in results if r.ok and r.body.strip()]
    if ok:
        corpus = load_warc(warc, cache=False)
        for r in ok:  # every page fetched is a page (or a payload duplicate's alias) of the compiled corpus
            try:
                corpus.page_id(canonical_url(r.final_url))
            except KeyError:
                pytest.fail(f"{r.final_url} was fetched as a page but is not one of the compiled corpus")


@pytest.mark.parametrize("seed", [0, 1])
def test_fuzz_hostile_responses(seed, tmp_path):
    run_response_fuzz(seed, 10, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2, 22))
def test_fuzz_hostile_responses_long(seed, tmp_path):
    run_response_fuzz(seed, 30, tmp_path)


# ============================================================================================ records
def _record(kind: str, uri: str | None, block: bytes, *, extra: bytes = b"", length: bytes | None = None) -> bytes:
    rid = hashlib.sha1(block + (uri or "").encode("utf-8", "replace") + extra).hexdigest()
    head = [b"WARC/1.1", f"WARC-Type: {kind}".encode(), f"WARC-Record-ID: <urn:uuid:{rid[:32]}>".encode(),
            b"WARC-Date: 2026-01-01T00:00:00Z"]
    if uri is not None:
        head.append(b"WARC-Target-URI: " + uri.encode("utf-8"))
    head.append(b"Content-Length: " + (length if length is not None else str(len(block)).encode()))
    if kind == "response":
        head.append(b"Content-Type: application/http; msgtype=response")
    return b"\r\n".join(head) + b"\r\n" + extra + b"\r\n" + block + b"\r\n\r\n"


def _response_block(body: bytes, chunked: bool = False, bad_chunk: bool = False) -> bytes:
    hdr = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
    if chunked:
        hdr += b"Transfer-Encoding: chunked\r\n"
        body = (b"-6\r\n" if bad_chunk else f"{len(body):x}\r\n".encode()) + body + b"\r\n0\r\n\r\n"
    return hdr + b"\r\n" + body


@dataclass
class WarcCase:
    data: bytes
    good_before_damage: list[str]  # URLs of the HTML pages wholly before the first framing damage
    broken_pages: list[str]  # URLs whose records are malformed (but framed): never pages
    intact: int  # records (all types) wholly before the first framing damage


def make_warc(rng: np.random.Generator, gz: bool) -> WarcCase:
    parts: list[bytes] = [_record("warcinfo", None, b"software: fuzz\r\n")]
    good: list[str] = []
    broken: list[str] = []
    damaged = False
    intact = 1
    for i in range(int(rng.integers(3, 12))):
        url = f"http://w.test/p{i}"
        body = f"<!DOCTYPE html><html><head><title>p{i}</title></head><body><p>marker{i}</p></body></html>".encode()
        m = rng.choice(["ok"] * 5 + ["chunked", "bad-chunk", "long-length", "garbage-length", "no-uri",
                                      "huge-header", "utf8-uri", "metadata", "short-length"])
        if m == "ok" or m == "chunked":
            rec = _record("response", url, _response_block(body, chunked=m == "chunked"))
            if not damaged:
                good.append(url)
        elif m == "bad-chunk":
            rec = _record("response", url, _response_block(body, chunked=True, bad_chunk=True))
            broken.append(url)
        elif m in ("long-length", "short-length"):
            # a wrong Content-Length: the framing is lost from here; what a reader makes of this record itself
            # (its block runs into the next record, or stops short) cannot be told from the record
            block = _response_block(body)
            rec = _record("response", url, block, length=str(len(block) + (37 if m == "long-length" else -9)).encode())
            damaged = True
        elif m == "garbage-length":
            rec = _record("response", url, _response_block(body), length=b"-5")
            broken.append(url)
            damaged = True
        elif m == "no-uri":
            rec = _record("response", None, _response_block(body))
        elif m == "huge-header":
            rec = _record("response", url, _response_block(body), extra=b"X-Huge: " + b"h" * 40_000 + b"\r\n")
            broken.append(url)
            damaged = True
        elif m == "utf8-uri":
            rec = _record("response", f"http://w.test/ü{i}", _response_block(body))
        else:
            rec = _record("metadata", url, b'{"kind": "x"}')
        parts.append(rec)
        if not damaged:
            intact = len(parts)
    if gz:
        members = [gzip.compress(p) for p in parts]
        g = rng.choice(["ok", "ok", "cut", "garbage-between"])
        if g == "cut" and len(members) > 1:
            members[-1] = members[-1][: len(members[-1]) // 2]
            intact = min(intact, len(parts) - 1)
        elif g == "garbage-between" and len(members) > 2:
            k = int(rng.integers(1, len(members) - 1))
            members.insert(k, bytes(rng.integers(0, 256, 50, dtype=np.uint8)))
            intact = min(intact, k)
        kept = b"".join(parts[:intact])
        good = [u for u in good if u.encode() + b"\r\n" in kept]
        return WarcCase(b"".join(members), good, broken, intact)
    return WarcCase(b"".join(parts), good, broken, intact)


def run_warc_fuzz(seed: int, n: int, folder: Path) -> None:
    rng = np.random.default_rng(seed)
    for k in range(n):
        case = make_warc(rng, gz=bool(rng.integers(0, 2)))
        suffix = ".warc.gz" if case.data[:2] == GZIP_MAGIC else ".warc"
        path = folder / f"case{k}{suffix}"
        path.write_bytes(case.data)
        out: dict = {}
        t = threading.Thread(target=lambda p=path, o=out, d=folder / f"out{k}": o.update(parse_warc_file(p, d)),
                             daemon=True)
        t.start()
        t.join(timeout=30)
        assert not t.is_alive(), f"case {k}: the compile hung"
        assert "skipped" in out, f"case {k}: the compile failed"
        pages = set()
        from gym_crawl.web.warc_build import read_table

        for c in out["chunks"]:
            with np.load(c["path"]) as z:
                pages.update(read_table(z, "urls").tolist())
        missing = [u for u in case.good_before_damage if u not in pages]
        assert not missing, f"case {k}: complete records before the damage were lost: {missing}"
        wrong = [u for u in case.broken_pages if u in pages and u not in case.good_before_damage]
        assert not wrong, f"case {k}: malformed records became pages: {wrong}"
        a, _ = records_fastwarc(path)
        b, _ = records_warcio(path)
        n = case.intact
        assert len(a) >= n and len(b) >= n, f"case {k}: a reader lost intact records ({len(a)}, {len(b)} < {n})"
        assert [(x[0].lower(), *x[1:]) for x in a[:n]] == [(y[0].lower(), *y[1:]) for y in b[:n]], \
            f"case {k}: the readers disagree before the damage"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fuzz_malformed_warcs(seed, tmp_path):
    run_warc_fuzz(seed, 8, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3, 43))
def test_fuzz_malformed_warcs_long(seed, tmp_path):
    run_warc_fuzz(seed, 25, tmp_path)


def test_the_reader_check_finds_a_disagreement(tmp_path):
    """The conftest hook's comparison is not vacuous: a package-style WARC with a 40 KB header block (which
    stops FastWARC, not warcio) is reported."""
    bad = tmp_path / "crafted"
    bad.mkdir()
    path = bad / "x.warc"
    path.write_bytes(_record("warcinfo", None, b"software: gym_crawl/0\r\n")
                     + _record("metadata", "urn:x", b"{}", extra=b"X-Huge: " + b"h" * 40_000 + b"\r\n")
                     + _record("metadata", "urn:y", b"{}"))
    assert readers_disagree(path) is not None
    from tests.conftest import _disagreements

    assert _disagreements(bad)
    path.unlink()
