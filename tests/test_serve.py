"""The loopback test site: hosts on distinct loopback addresses, routes, the request log, static folders."""
from __future__ import annotations

import contextlib
import http.client
import os
from urllib.parse import urlsplit

import pytest

from gym_crawl.web.serve.server import (
    MISBEHAVIOURS,
    Response,
    Series,
    calendar_trap,
    html_page,
    serve_folder,
    serve_site,
)


def get(url: str, conn: http.client.HTTPConnection | None = None, method: str = "GET"):
    """``(status, headers, body)`` of one request (on ``conn`` when given, to reuse a connection)."""
    p = urlsplit(url)
    c = conn or http.client.HTTPConnection(p.hostname, p.port, timeout=5)
    try:
        c.request(method, p.path + (f"?{p.query}" if p.query else ""), headers={"User-Agent": "test/1"})
        r = c.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        if conn is None:
            c.close()


def test_hosts_differ_in_the_url_and_bind_only_loopback():
    with serve_site({"a": {"/": b"A"}, "b": {"/": b"B"}, "c": {"/": "C"}}) as site:
        parts = [urlsplit(u) for u in site.base_urls.values()]
        assert all(p.hostname.startswith("127.") for p in parts)
        assert len({p.netloc for p in parts}) == 3
        if len({p.hostname for p in parts}) == 3:  # distinct addresses share one port
            assert len({p.port for p in parts}) == 1
        assert [get(site.url(h))[2] for h in "abc"] == [b"A", b"B", b"C"]
        assert site.hosts == ["a", "b", "c"]
    with serve_site({"a": {"/": b"A"}, "b": {"/": b"B"}}, bind="ports") as site:
        parts = [urlsplit(u) for u in site.base_urls.values()]
        assert {p.hostname for p in parts} == {"127.0.0.1"} and len({p.port for p in parts}) == 2
        assert get(site.url("b"))[2] == b"B"


def test_routes_series_prefixes_functions_index_and_404():
    pages = {"a": {"/s": Series(Response(b"first", status=503), Response(b"then")),
                   "/f": lambda path: Response(path.encode(), content_type="text/plain"),
                   "/docs/*": lambda path: Response(b"doc " + path.encode()) if path.endswith(".html") else None,
                   "/q?x=1": b"exact query", "/cal/*": calendar_trap("/cal/")}}
    with serve_site(pages) as site:
        assert [get(site.url("a", "/s"))[:3:2] for _ in range(3)] == [(503, b"first"), (200, b"then"),
                                                                     (200, b"then")]
        status, headers, body = get(site.url("a", "/f"))
        assert (status, headers["Content-Type"], body) == (200, "text/plain", b"/f")
        assert get(site.url("a", "/f?x=1"))[2] == b"/f?x=1"  # a route function gets the whole target
        assert get(site.url("a", "/docs/x/y.html"))[2] == b"doc /docs/x/y.html"
        assert get(site.url("a", "/docs/x/y.png"))[0] == 404
        assert get(site.url("a", "/q?x=1"))[2] == b"exact query"
        assert get(site.url("a", "/nowhere"))[0] == 404
        cal = get(site.url("a", "/cal/2026/12/"))[2]
        assert b'href="/cal/2027/1/"' in cal and b'href="/cal/2026/11/"' in cal
        assert get(site.url("a", "/cal/2026/13/"))[0] == 404
        index = get(site.url("a", "/"))[2]
        assert b'href="/s"' in index and b'href="/f"' in index and b"/docs/*" not in index
        status, headers, body = get(site.url("a", "/f"), method="HEAD")
        assert (status, body, headers["Content-Length"]) == (200, b"", "2")


def test_request_log_has_times_hosts_paths_and_connection_ids():
    with serve_site({"a": {"/x": b"x", "/y": b"y"}, "b": {"/z": b"z"}}) as site:
        p = urlsplit(site.url("a"))
        conn = http.client.HTTPConnection(p.hostname, p.port, timeout=5)
        get(site.url("a", "/x"), conn)
        get(site.url("a", "/y"), conn)  # keep-alive: same connection
        conn.close()
        get(site.url("a", "/x"))
        get(site.url("b", "/z"))
        log = site.requests()
        assert [(e.host, e.path, e.method, e.status, e.user_agent) for e in log] == [
            ("a", "/x", "GET", 200, "test/1"), ("a", "/y", "GET", 200, "test/1"), ("a", "/x", "GET", 200, "test/1"),
            ("b", "/z", "GET", 200, "test/1")]
        assert log[0].conn == log[1].conn != log[2].conn != log[3].conn
        assert all(e.start <= e.end for e in log) and [e.bytes_sent for e in log] == [1, 1, 1, 1]
        assert site.requests("a", "/x") == [log[0], log[2]]
        assert site.max_concurrent("a") == 1
        with pytest.raises(KeyError, match="unknown host 'c'"):
            site.url("c")


def test_every_misbehaviour_is_served():
    with serve_site({}, misbehave={"a": list(MISBEHAVIOURS)}) as site:
        index = get(site.url("a"))[2].decode()
        expect = {"/robots.txt": 200, "/private/secret.html": 200, "/missing.html": 404, "/error.html": 500,
                  "/busy.html": 429, "/unavailable.html": 503, "/redirect/1": 301, "/loop/a": 302,
                  "/doc.pdf": 200, "/broken.html": 200, "/latin1.html": 200, "/calendar/2026/11/": 200,
                  "/deep/": 200, "/session": 200}
        for path, status in expect.items():
            assert get(site.url("a", path))[0] == status, path
            if path != "/robots.txt":
                assert f'href="{path}"' in index
        assert get(site.url("a", "/busy.html"))[0] == 200  # Retry-After once, then the page
        assert "Content-Type" not in get(site.url("a", "/untyped.html"))[1]
        robots = get(site.url("a", "/robots.txt"))[2]
        assert b"Disallow: /private/" in robots


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="unknown misbehaviour 'teapot'"):
        serve_site({}, misbehave={"a": ["teapot"]})
    with pytest.raises(TypeError, match="list of names"):
        serve_site({}, misbehave={"a": "robots"})
    with pytest.raises(ValueError, match="at least one host"):
        serve_site({})
    with pytest.raises(ValueError, match="bind"):
        serve_site({"a": {}}, bind="ipv6")
    with pytest.raises(TypeError, match="route '/x' of host 'a'"):
        serve_site({"a": {"/x": 3.5}})

    def broken(path):
        raise RuntimeError("route bug")

    with serve_site({"a": {"/x": broken}}) as site:  # a failing route function answers 500 with the error
        status, _, body = get(site.url("a", "/x"))
        assert status == 500 and b"route bug" in body


def test_serve_folder_serves_each_subfolder_as_a_host(tmp_path):
    (tmp_path / "one" / "sub").mkdir(parents=True)
    (tmp_path / "two").mkdir()
    (tmp_path / "one" / "index.html").write_bytes(html_page("One", links=[("sub/page.html", "page")]))
    (tmp_path / "one" / "sub" / "page.html").write_bytes(html_page("Page"))
    (tmp_path / "one" / "style.css").write_text("p {}")
    (tmp_path / "two" / "index.htm").write_bytes(html_page("Two"))
    (tmp_path / "secret.txt").write_text("outside every host")
    with serve_folder(tmp_path) as site:
        assert site.hosts == ["one", "two"]
        status, headers, body = get(site.url("one", "/"))
        assert status == 200 and b"<title>One</title>" in body and headers["Content-Type"] == "text/html"
        assert b"<title>Page</title>" in get(site.url("one", "/sub/page.html"))[2]
        assert get(site.url("one", "/style.css"))[1]["Content-Type"] == "text/css"
        status, headers, _ = get(site.url("one", "/sub"))
        assert (status, headers["Location"]) == (301, "/sub/")
        assert get(site.url("one", "/sub/"))[0] == 404  # a folder without index
        assert b"<title>Two</title>" in get(site.url("two", "/"))[2]
        assert get(site.url("one", "/../secret.txt"))[0] == 404
        assert get(site.url("one", "/%2e%2e/secret.txt"))[0] == 404
    with serve_folder(tmp_path, hosts={"docs": "one/sub"}) as site:
        assert get(site.url("docs", "/page.html"))[0] == 200
    with serve_folder(tmp_path, hosts=["two"]) as site:
        assert site.hosts == ["two"]
    with pytest.raises(FileNotFoundError, match="not a folder"):
        serve_folder(tmp_path, hosts=["three"])
    with pytest.raises(FileNotFoundError, match="not a folder"):
        serve_folder(tmp_path / "nothing")


def test_serve_command_serves_folders_and_the_demo_site(tmp_path, capsys):
    from gym_crawl.cli import main

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.html").write_bytes(html_page("Docs"))
    assert main(["serve", "--folder", str(tmp_path / "docs"), "--duration", "0.2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("docs\thttp://127.") and out[-1] == "served 0 requests"
    assert main(["serve", "--demo", "--duration", "0.2", "--first-address", "20"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in out[:2]] == ["a", "b"] and "127.0.0.20:" in out[0]
    assert main(["serve", "--demo", "--misbehave", "teapot", "--duration", "0"]) == 2
    assert "unknown misbehaviour 'teapot'" in capsys.readouterr().err
    assert main(["serve", "--folder", str(tmp_path), "--misbehave", "404", "--duration", "0"]) == 2


def test_serve_corpus_serves_every_page_with_its_links_and_anchors():
    from gym_crawl.corpus import CorpusBuilder
    from gym_crawl.web.fetcher import FetchPolicy, PoliteFetcher
    from gym_crawl.web.html_extract import extract_page
    from gym_crawl.web.serve.server import serve_corpus

    b = CorpusBuilder(name="tiny-site", keep_text=True)
    doms = ["geo.org", "med.org", "art.org"]
    for i in range(6):
        b.add_page(f"Page {i}" if i != 4 else "Rock & Roll (music)", f"text of page {i} volcano\nsecond line {i}",
                   domain=doms[i % 3])
    words = ["volcano", "basalt", "granite", "tumor", "sonnet", "river"]
    for i in range(6):
        for j in ((i + 1) % 6, (i + 2) % 6):
            b.add_link(i, j, anchor=f"{words[j]} {words[i]}")
    c = b.build()
    with serve_corpus(c, n_hosts=2) as site, \
            PoliteFetcher(FetchPolicy(delay=0.0, rate=None, obey_robots=False)) as f:
        assert site.hosts == ["h0", "h1"] and len(site.page_urls) == 6
        assert {urlsplit(u).netloc for u in site.page_urls} == {urlsplit(site.url(h)).netloc for h in site.hosts}
        for p, url in enumerate(site.page_urls):
            r = f.fetch(url)
            assert r.ok and r.final_url == url, (p, r.error)
            page = extract_page(r.body, url)
            assert page.title == c.titles[p]
            a, e = c.outlinks(p)
            assert [lk.url for lk in page.links] == [site.page_urls[int(d)] for d in c.link_dst[a:e]]
            assert [lk.anchor for lk in page.links] == [f"{words[int(d)]} {words[p]}" for d in c.link_dst[a:e]]
            assert page.text.split() == c.texts[p].split()
        index = f.fetch(site.url("h0"))
        assert index.ok and b"Page 0" in index.body


def test_serve_corpus_without_kept_text_serves_the_bag_of_words():
    from gym_crawl.corpus import CorpusBuilder
    from gym_crawl.web.html_extract import extract_page
    from gym_crawl.web.serve.server import corpus_page_html, serve_corpus

    b = CorpusBuilder(name="bag")
    b.add_page("Alpha", "volcano basalt volcano granite", domain="x.org")
    b.add_page("Beta", "tumor river", domain="y.org")
    b.add_link(0, 1, anchor="river tumor")
    c = b.build()
    assert c.texts is None
    with serve_corpus(c) as site:
        assert site.hosts == ["h0", "h1"]
        page = extract_page(corpus_page_html(c, 0, site.page_urls), site.page_urls[0])
        assert sorted(page.text.split()) == ["basalt", "granite", "volcano", "volcano"]
        assert [(lk.url, lk.anchor) for lk in page.links] == [(site.page_urls[1], "river tumor")]
        assert get(site.page_urls[1])[0] == 200


def test_delayed_responses_work_in_a_process_with_over_1024_open_files():
    resource = pytest.importorskip("resource", reason="POSIX descriptor limits")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1500:
        pytest.skip(f"the descriptor limit ({hard}) cannot be raised past 1024")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1500) if soft != resource.RLIM_INFINITY else soft, hard))
    try:
        with contextlib.ExitStack() as stack:
            for _ in range(1100):  # the site's sockets get descriptors past 1024
                stack.enter_context(open(os.devnull))
            with serve_site({"a": {"/slow": Response(b"late", delay=0.05)}}) as site:
                status, _, body = get(site.url("a", "/slow"))
                assert (status, body) == (200, b"late")
                assert not site.requests("a")[0].client_closed
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
