"""WARC archives → Corpus (gym_crawl.web.warc): fields, skips, redirects, duplicates, labels, engines."""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from warcio.archiveiterator import ArchiveIterator as WarcioIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from gym_crawl.corpus import Corpus, CorpusFormatError, load_corpus
from gym_crawl.corpus.core import _ARRAY_SPEC
from gym_crawl.tokenize import tokenize
from gym_crawl.web.html_extract import extract_page, render_page
from gym_crawl.web.urls import url_text
from gym_crawl.web.warc import SKIP_REASONS, load_warc, parse_warc_file
from gym_crawl.webgen.examples import write_example_warc

HTML = "text/html; charset=utf-8"


class Warc:
    """Writes WARC records with warcio (the reference writer)."""

    def __init__(self, path: Path, gz: bool = True) -> None:
        self.f = open(path, "wb")  # noqa: SIM115 - closed in close()
        self.w = WARCWriter(self.f, gzip=gz)
        self.path = path

    def response(self, url: str, body: bytes = b"", status: str = "200 OK", ctype: str | None = HTML,
                 headers: list[tuple[str, str]] = (), warc_headers: dict | None = None) -> None:
        h = [("Content-Type", ctype)] if ctype else []
        http = StatusAndHeaders(status, h + list(headers), protocol="HTTP/1.1")
        rec = self.w.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http,
                                        warc_headers_dict=warc_headers or {})
        self.w.write_record(rec)

    def page(self, url: str, title: str, text: str, links: list[tuple[str, str]]) -> None:
        self.response(url, render_page(title, text, links))

    def request(self, url: str) -> None:
        http = StatusAndHeaders("GET / HTTP/1.1", [("Host", "x")], is_http_request=True)
        self.w.write_record(self.w.create_warc_record(url, "request", http_headers=http))

    def metadata(self, url: str) -> None:
        self.w.write_record(self.w.create_warc_record(url, "metadata", payload=io.BytesIO(b"via: x\r\n"),
                                                      warc_content_type="application/warc-fields"))

    def revisit(self, url: str) -> None:
        http = StatusAndHeaders("200 OK", [("Content-Type", HTML)], protocol="HTTP/1.1")
        self.w.write_record(self.w.create_revisit_record(url, "sha1:AAAA", "http://a.org/orig", "20200101000000",
                                                         http_headers=http))

    def info(self) -> None:
        self.w.write_record(self.w.create_warcinfo_record(self.path.name, {"software": "test"}))

    def close(self) -> Path:
        self.f.close()
        return self.path


def _site(path: Path, gz: bool = True) -> Path:
    """Four pages on two hosts, each with a unique marker word, plus every kind of skipped record."""
    w = Warc(path, gz)
    w.info()
    w.request("http://a.org/")
    w.page("http://a.org/", "Home page", "alphamarker volcano geology\nsecond line", [
        ("http://a.org/rock", "Rock article"), ("http://b.org:8080/x", "Other host"), ("http://a.org/old", "Old"),
        ("http://nowhere.org/", "Outside")])
    w.metadata("http://a.org/")
    w.page("http://a.org/rock", "Rock", "betamarker basalt granite", [("http://a.org/", "Home")])
    w.page("http://b.org:8080/x", "X page", "gammamarker river", [("http://a.org/rock", "rocks")])
    w.response("http://a.org/old", status="301 Moved Permanently", ctype=None, headers=[("Location", "/rock")])
    w.response("http://a.org/img.png", b"\x89PNG....", ctype="image/png")
    w.response("http://a.org/missing", b"<p>not found</p>", status="404 Not Found")
    w.response("http://a.org/nolocation", status="302 Found", ctype=None)
    w.response("http://a.org/empty", b"   ")
    w.response("http://a.org/cut", b"<p>cut</p>", warc_headers={"WARC-Truncated": "length"})
    w.revisit("http://a.org/rock")
    return w.close()


def _toks(c: Corpus, ptr: np.ndarray, terms: np.ndarray, i: int) -> list[str]:
    return [c.vocab[int(t)] for t in terms[ptr[i]:ptr[i + 1]]]


def _bag(c: Corpus, i: int) -> dict[str, int]:
    a, b = c.text_ptr[i], c.text_ptr[i + 1]
    return {c.vocab[int(t)]: int(k) for t, k in zip(c.text_terms[a:b], c.text_counts[a:b])}


def _links(c: Corpus) -> list[tuple[str, str, list[str]]]:
    src = c.link_src()
    return [(c.url(int(s)), c.url(int(d)), _toks(c, c.anchor_ptr, c.anchor_terms, e))
            for e, (s, d) in enumerate(zip(src, c.link_dst))]


def assert_same_corpus(a: Corpus, b: Corpus) -> None:
    for name in _ARRAY_SPEC:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    for name in ("titles", "vocab", "domains", "labels", "texts", "urls"):
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name


def test_pages_carry_the_extractor_fields(tmp_path: Path) -> None:
    path = _site(tmp_path / "site.warc.gz")
    c = load_warc(path)
    assert c.urls.tolist() == ["http://a.org/", "http://a.org/rock", "http://b.org:8080/x"]
    assert c.titles.tolist() == ["Home page", "Rock", "X page"]
    assert c.domains[int(c.page_domain[2])] == "b.org:8080" and c.domains[int(c.page_domain[0])] == "a.org"
    bodies = {"http://a.org/": render_page("Home page", "alphamarker volcano geology\nsecond line", [
        ("http://a.org/rock", "Rock article"), ("http://b.org:8080/x", "Other host"), ("http://a.org/old", "Old"),
        ("http://nowhere.org/", "Outside")])}
    page = extract_page(bodies["http://a.org/"], "http://a.org/")
    assert c.texts[0] == page.text
    assert _bag(c, 0) == {w: tokenize(page.text).count(w) for w in set(tokenize(page.text))}
    for i in range(c.n_pages):  # title tokens are the URL's words, never the content
        assert _toks(c, c.title_ptr, c.title_terms, i) == tokenize(url_text(c.url(i)))
    # links: the redirect /old resolves to /rock, which the page already links → one link; outside dropped
    assert _links(c) == [("http://a.org/", "http://a.org/rock", ["rock", "article"]),
                         ("http://a.org/", "http://b.org:8080/x", ["host"]),
                         ("http://a.org/rock", "http://a.org/", ["home"]),
                         ("http://b.org:8080/x", "http://a.org/rock", ["rocks"])]
    ctx = {link.url: link.context for link in page.links}
    assert _toks(c, c.context_ptr, c.context_terms, 0) == tokenize(ctx["http://a.org/rock"])
    assert c.page_id("http://a.org/rock") == 1 and c.page_id("Rock") == 1


def test_every_skip_reason_is_counted(tmp_path: Path) -> None:
    c = load_warc(_site(tmp_path / "site.warc.gz"))
    s = c.meta["warc_summary"]
    assert set(s["skipped"]) == set(SKIP_REASONS)
    assert {k: v for k, v in s["skipped"].items() if v} == {
        "warcinfo": 1, "request": 1, "metadata": 1, "revisit": 1, "non_html": 1, "http_error": 1,
        "redirect_without_location": 1, "empty": 1, "truncated": 1}
    assert s["records"] == 13 and s["fetched_pages"] == 3 and s["redirects"] == {"records": 1, "used": 1}
    big = load_warc(tmp_path / "site.warc.gz", max_record_bytes=300)  # the rendered pages are larger
    assert big.meta["warc_summary"]["skipped"]["too_large"] >= 1


def test_truncated_file_and_garbage_tail_keep_the_records_before(tmp_path: Path) -> None:
    plain = _site(tmp_path / "site.warc", gz=False)
    data = plain.read_bytes()
    cut = data.index(b"gammamarker")  # inside the third page's response block
    (tmp_path / "cut").mkdir()
    (tmp_path / "cut" / "cut.warc").write_bytes(data[:cut])
    c = load_warc(tmp_path / "cut" / "cut.warc")
    assert c.urls.tolist() == ["http://a.org/", "http://a.org/rock"]
    assert c.meta["warc_summary"]["skipped"]["truncated"] == 1
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "junk.warc").write_bytes(data + b"\r\nthis is not a WARC record\r\n\r\n")
    j = load_warc(tmp_path / "junk" / "junk.warc")
    assert j.n_pages == 3 and j.meta["warc_summary"]["skipped"]["unreadable"] == 1
    assert list(j.meta["warc_summary"]["unreadable_files"]) == [str((tmp_path / "junk" / "junk.warc").resolve())]


def test_gzipped_and_plain_folder_and_glob_give_the_same_corpus(tmp_path: Path) -> None:
    (tmp_path / "gz").mkdir()
    (tmp_path / "plain").mkdir()
    a = load_warc(_site(tmp_path / "gz" / "s.warc.gz"))
    b = load_warc(_site(tmp_path / "plain" / "s.warc", gz=False))
    assert_same_corpus(a, b)
    assert_same_corpus(a, load_corpus(str(tmp_path / "gz")))
    assert_same_corpus(a, load_corpus(str(tmp_path / "gz" / "*.warc.gz")))
    assert_same_corpus(a, load_warc([tmp_path / "gz" / "s.warc.gz"]))
    both = load_warc(str(tmp_path / "*" / "s.warc*"))  # the same records twice: every URL a duplicate
    assert both.n_pages == 3 and both.meta["warc_summary"]["duplicates"]["url"] == 3


def test_redirect_chains_loops_and_digest_duplicates(tmp_path: Path) -> None:
    w = Warc(tmp_path / "r.warc.gz")
    w.page("http://a.org/", "Start", "start page", [
        ("http://a.org/r1", "chain"), ("http://a.org/loop1", "loop"), ("http://a.org/copy", "copy"),
        ("http://a.org/far", "far")])
    w.response("http://a.org/r1", status="301 Moved", ctype=None, headers=[("Location", "http://a.org/r2")])
    w.response("http://a.org/r2", status="302 Found", ctype=None, headers=[("Location", "/final#frag")])
    w.response("http://a.org/loop1", status="301 Moved", ctype=None, headers=[("Location", "/loop2")])
    w.response("http://a.org/loop2", status="301 Moved", ctype=None, headers=[("Location", "/loop1")])
    w.response("http://a.org/far", status="301 Moved", ctype=None, headers=[("Location", "http://gone.org/")])
    w.page("http://a.org/final", "Final", "the final page", [("http://a.org/", "back")])
    w.page("http://a.org/final", "Final again", "a second capture of the same URL", [])
    w.page("http://a.org/orig", "Orig", "duplicated content", [("http://a.org/", "home")])
    w.page("http://a.org/copy", "Orig", "duplicated content", [("http://a.org/", "home")])  # same payload
    c = load_warc(w.close())
    assert c.urls.tolist() == ["http://a.org/", "http://a.org/final", "http://a.org/orig"]
    assert c.texts[1] == "the final page"  # the first capture of a URL wins
    assert [(s, d) for s, d, _ in _links(c)] == [
        ("http://a.org/", "http://a.org/final"), ("http://a.org/", "http://a.org/orig"),
        ("http://a.org/final", "http://a.org/"), ("http://a.org/orig", "http://a.org/")]
    s = c.meta["warc_summary"]
    assert s["duplicates"] == {"url": 1, "payload_digest": 1}
    assert s["redirects"] == {"records": 5, "used": 2}  # r1 → r2 → final; loops and gone.org unresolved
    u = load_warc(tmp_path / "r.warc.gz", include_unfetched=True)
    assert u.meta["unfetched_pages"] == {"first": 3, "count": 2}  # unresolved links keep their own URL
    assert u.urls.tolist()[3:] == ["http://a.org/loop1", "http://a.org/far"]
    assert all(u.text_ptr[i] == u.text_ptr[i + 1] and u.texts[i] == "" for i in range(3, u.n_pages))


def test_include_unfetched_makes_textless_pages(tmp_path: Path) -> None:
    c = load_warc(_site(tmp_path / "s.warc.gz"), include_unfetched=True)
    assert c.n_pages == 4 and c.urls[3] == "http://nowhere.org/" and c.titles[3] == "http://nowhere.org/"
    assert c.meta["unfetched_pages"] == {"first": 3, "count": 1}
    assert c.texts[3] == "" and c.text_ptr[3] == c.text_ptr[4]
    assert _toks(c, c.title_ptr, c.title_terms, 3) == ["nowhere", "org"]
    assert ("http://a.org/", "http://nowhere.org/", ["outside"]) in _links(c)


def test_no_page_text_leaks_into_other_columns(tmp_path: Path) -> None:
    c = load_warc(_site(tmp_path / "s.warc.gz"), include_unfetched=True)
    src = c.link_src()
    for i, marker in enumerate(["alphamarker", "betamarker", "gammamarker"]):
        w = c.word_id(marker)
        assert w >= 0
        for p in range(c.n_pages):
            assert (marker in _bag(c, p)) == (p == i)  # in its own bag only
            assert marker not in _toks(c, c.title_ptr, c.title_terms, p)
        for e in range(c.n_links):
            assert marker not in _toks(c, c.anchor_ptr, c.anchor_terms, e)
            if marker in _toks(c, c.context_ptr, c.context_terms, e):
                assert src[e] == i  # the surrounding text of the page's own out-links only
        assert sum(marker in t for t in c.texts) == 1


def test_labels_from_a_map_csv_and_prefix_rules(tmp_path: Path) -> None:
    path = _site(tmp_path / "s.warc.gz")
    (tmp_path / "l.json").write_text(json.dumps({"HTTP://A.ORG:80/rock#x": ["geo", "stone"],
                                                 "http://b.org:8080/x": "water"}))
    c = load_warc(path, labels=tmp_path / "l.json")
    assert [c.page_labels(i) for i in range(3)] == [[], ["geo", "stone"], ["water"]]
    (tmp_path / "l.csv").write_text("url,label\nhttp://a.org/,home\nhttp://a.org/rock,geo,stone\n")
    assert [load_warc(path, labels=tmp_path / "l.csv").page_labels(i) for i in range(3)] == [
        ["home"], ["geo", "stone"], []]
    rules = [("http://a.org/", "site.a"), ("http://a.org/rock", "site.a.rock"), ("http://b.org:8080", "site.b")]
    r = load_warc(path, label_rules=rules)
    assert [r.page_labels(i) for i in range(3)] == [["site.a"], ["site.a.rock"], ["site.b"]]  # longest wins
    (tmp_path / "rules.json").write_text(json.dumps(dict(rules)))
    assert_same_corpus(r, load_warc(path, label_rules=tmp_path / "rules.json"))
    with pytest.raises(ValueError, match="'rock' is not an absolute http"):
        load_warc(path, labels={"rock": "x"})
    with pytest.raises(ValueError, match="must be a \\(prefix, label\\) pair"):
        load_warc(path, label_rules=[("http://a.org/",)])
    with pytest.raises(FileNotFoundError, match="labels file"):
        load_warc(path, labels=tmp_path / "none.json")


def test_warcs_read_back_with_fastwarc_and_warcio(tmp_path: Path) -> None:
    path = write_example_warc(tmp_path)
    with open(path, "rb") as f:
        responses = [r.rec_headers.get_header("WARC-Target-URI") for r in WarcioIterator(f)
                     if r.rec_type == "response"]
    info = parse_warc_file(path, tmp_path / "shards")
    assert info["records"] == 1 + 2 * len(responses) and sum(ch["pages"] for ch in info["chunks"]) == len(responses)
    assert sorted(load_warc(path).urls.tolist()) == sorted(responses)


def test_parallel_processes_equal_one_process(tmp_path: Path) -> None:
    for k in range(3):
        w = Warc(tmp_path / f"part{k}.warc.gz")
        for j in range(30):
            w.page(f"http://h{k}.org/p{j}", f"P{k} {j}", f"page {k} {j} words w{k}x{j}",
                   [(f"http://h{(k + 1) % 3}.org/p{(j * 7) % 30}", f"to {j}"), (f"http://h{k}.org/p{j + 1}", "next")])
        w.close()
    one = load_warc(tmp_path, workers=1, chunk_pages=7, cache=False)
    many = load_warc(tmp_path, workers=2, cache=False)
    assert_same_corpus(one, many)
    assert one.n_pages == 90 and one.n_links == 90 + 87


def test_env_runs_on_a_warc_corpus_with_a_word_topic(tmp_path: Path) -> None:
    import gymnasium as gym

    import gym_crawl  # noqa: F401

    c = load_warc(_site(tmp_path / "s.warc.gz"))
    env = gym.make("WikiCrawl-v1", corpus=c, topic="volcano geology", seeds=["http://a.org/"],
                   max_candidates=2, max_episode_steps=2)
    obs, info = env.reset(seed=0)
    assert info["pages_fetched"] == 1
    rewards, done = [], False
    while not done:
        mask = obs["mask"] if isinstance(obs, dict) and "mask" in obs else None
        a = env.action_space.sample(mask=np.asarray(mask, np.int8)) if mask is not None else env.action_space.sample()
        obs, r, term, trunc, info = env.step(a)
        rewards.append(r)
        done = term or trunc
    assert info["pages_fetched"] >= 2
    assert set(rewards) <= {30.0, 20.0, -1.0}  # no labels: Han 2018's word-relevance reward


def test_compiled_corpus_is_cached_until_a_file_changes(tmp_path: Path) -> None:
    import os

    path = _site(tmp_path / "s.warc.gz")
    first = load_warc(path)
    assert first.path is not None and first.path.parent.name == "warc"  # stored in the data cache
    again = load_warc(path)
    assert again.path == first.path
    assert_same_corpus(first, again)
    assert load_warc(path, cache=False).path is None
    assert load_warc(path, label_rules=[("http://a.org/", "a")]).path != first.path  # other options, other key
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert load_warc(path).path != first.path


def test_saved_corpus_keeps_urls(tmp_path: Path) -> None:
    c = load_warc(_site(tmp_path / "s.warc.gz"))
    back = Corpus.load(c.save(tmp_path / "compiled"))
    assert back.urls.tolist() == c.urls.tolist() and back.url(2) == "http://b.org:8080/x"
    assert back.meta["warc_summary"] == c.meta["warc_summary"]


def test_errors_name_the_input(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_warc(tmp_path / "missing.warc.gz")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no .warc or .warc.gz file"):
        load_warc(tmp_path / "empty")
    w = Warc(tmp_path / "nohtml.warc.gz")
    w.response("http://a.org/x.png", b"PNG", ctype="image/png")
    with pytest.raises(CorpusFormatError, match="no HTML page found.*non_html"):
        load_warc(w.close())
    with pytest.raises(ValueError, match="engine must be"):
        load_warc(tmp_path / "nohtml.warc.gz", engine="spark")


@pytest.mark.slow
def test_dask_local_cluster_equals_one_process(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    for k in range(2):
        w = Warc(tmp_path / f"part{k}.warc.gz")
        for j in range(20):
            w.page(f"http://h{k}.org/p{j}", f"P{k} {j}", f"page {k} {j}", [(f"http://h{1 - k}.org/p{j}", "peer"),
                                                                          (f"http://h{k}.org/r{j}", "moved")])
            w.response(f"http://h{k}.org/r{j}", status="301 Moved", ctype=None,
                       headers=[("Location", f"/p{(j + 1) % 20}")])
        w.response(f"http://h{k}.org/c", status="302 Found", ctype=None, headers=[("Location", "/r3")])  # 2 hops
        w.response(f"http://h{k}.org/l1", status="302 Found", ctype=None, headers=[("Location", "/l2")])  # a loop
        w.response(f"http://h{k}.org/l2", status="302 Found", ctype=None, headers=[("Location", "/l1")])
        w.page(f"http://h{k}.org/hub", "hub", "hub page", [(f"http://h{k}.org/c", "chain"),
                                                           (f"http://h{k}.org/l1", "loop")])
        w.page(f"http://h{k}.org/p0", "again", "second capture", [])
        w.page(f"http://h{k}.org/copy", f"P{k} 1", f"page {k} 1", [(f"http://h{1 - k}.org/p1", "peer"),
                                                                    (f"http://h{k}.org/r1", "moved")])
        w.close()
    one = load_warc(tmp_path, workers=1, include_unfetched=True, cache=False)
    dask = load_warc(tmp_path, engine="dask", include_unfetched=True, cache=False)
    assert_same_corpus(one, dask)
    assert dask.meta["warc_summary"]["engine"] == "dask"
    for key in ("duplicates", "redirects", "skipped"):
        assert one.meta["warc_summary"][key] == dask.meta["warc_summary"][key]


def test_content_and_transfer_encodings_are_undone(tmp_path: Path) -> None:
    import gzip
    import zlib

    body = render_page("Encoded", "deltamarker words", [("http://e.org/", "home")])
    w = Warc(tmp_path / "enc.warc", gz=False)
    w.response("http://e.org/gz", gzip.compress(body), headers=[("Content-Encoding", "gzip")])
    w.response("http://e.org/deflate", zlib.compress(body + b" "), headers=[("Content-Encoding", "deflate")])
    chunked = b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" % (10, body[:10], len(body) - 10, body[10:])
    w.response("http://e.org/chunked", chunked, headers=[("Transfer-Encoding", "chunked")])
    w.response("http://e.org/br", b"\x0b\x02\x80not brotli", headers=[("Content-Encoding", "br")])
    w.response("http://e.org/badgz", b"\x1f\x8bnot gzip", headers=[("Content-Encoding", "gzip")])
    c = load_warc(w.close())
    assert c.urls.tolist() == ["http://e.org/gz", "http://e.org/deflate", "http://e.org/chunked"]
    assert all(t == "deltamarker words" for t in c.texts)
    assert c.meta["warc_summary"]["skipped"]["broken"] == 2


def test_corpus_info_prints_the_warc_summary(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from gym_crawl.cli import main

    path = _site(tmp_path / "s.warc.gz")
    assert main(["corpus", "info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "WARC: 1 file(s), 13 records -> 3 pages (+0 unfetched), 4 links" in out
    assert ("skipped: empty 1, http_error 1, metadata 1, non_html 1, redirect_without_location 1, request 1, "
            "revisit 1, truncated 1, warcinfo 1") in out
    assert "redirects: 1 records, 1 resolved" in out
    assert main(["corpus", "info", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["warc_summary"]["fetched_pages"] == 3
