"""Tests for gym_crawl.web.html_folder on a generated mini-site."""
from __future__ import annotations

from pathlib import Path

import pytest

from gym_crawl.corpus import CorpusFormatError, load_corpus
from gym_crawl.tokenize import tokenize
from gym_crawl.web.html_folder import load_html_folder, parse_html

FILLER = "Lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor. " * 4


def _page(title: str | None, body: str) -> str:
    head = f"<title>{title}</title>" if title is not None else ""
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'>{head}<style>p {{color: red}}</style>"
            f"<script>var x = '<a href=\"b.html\">no</a>';</script></head><body>{body}</body></html>")


@pytest.fixture
def site(tmp_path: Path) -> Path:
    root = tmp_path / "mysite"
    (root / "docs").mkdir(parents=True)
    (root / "blog").mkdir()
    (root / "index.html").write_text(_page("Home", (
        f"<h1>Welcome</h1><p>{FILLER} Read the <a href='docs/guide.html#intro'>user guide</a> about crawling "
        "robots.</p><p><a href='blog/'>Blog</a> · <a href='https://example.com/x.html'>external</a> · "
        "<a href='mailto:a@b.c'>mail</a> · <a href='#top'>top</a> · <a href='index.html'>self</a> · "
        "<a href='missing.html'>broken</a> · <a href='docs/guide.html'>guide again</a></p>")), encoding="utf-8")
    (root / "docs" / "guide.html").write_text(_page("User Guide &amp; Tips", (
        "<p>Go <a href='../index.html'>home</a> or to the <a href='/blog/index.htm?x=1'><img src='i.png' "
        "alt='blog logo'></a>.</p><p>Caf\u00e9 cr\u00e8me</p>")), encoding="utf-8")
    (root / "blog" / "index.htm").write_text(_page(None, (
        "<div>Posts: <a href='../docs/guide.html'>the guide</a>, <a href='../../outside.html'>escape</a></div>"
    )), encoding="latin-1")
    (root / "blog" / "notes.txt").write_text("not a page")
    return root


def test_pages_titles_text(site):
    c = load_html_folder(site)
    assert c.meta["page_paths"] == ["blog/index.htm", "docs/guide.html", "index.html"]
    assert c.titles.tolist() == ["index", "User Guide & Tips", "Home"]  # blog page has no <title>
    home = c.texts[c.page_id("Home")]
    assert home.startswith("Welcome\n") and "user guide about crawling robots" in home
    assert "color" not in home and "var x" not in home and "Home" not in home  # style/script/title not text
    assert "Café crème" in c.texts[c.page_id("User Guide & Tips")]
    assert c.domains.tolist() == ["blog", "docs", "mysite"]
    assert [c.domains[int(d)] for d in c.page_domain] == ["blog", "docs", "mysite"]


def test_links_anchor_context(site):
    c = load_html_folder(site)
    v = c.vocab.tolist()

    def out(title):
        a, b = c.outlinks(c.page_id(title))
        return [(c.titles[int(c.link_dst[e])],
                 [v[i] for i in c.anchor_terms[c.anchor_ptr[e]:c.anchor_ptr[e + 1]]],
                 [v[i] for i in c.context_terms[c.context_ptr[e]:c.context_ptr[e + 1]]]) for e in range(a, b)]

    home = out("Home")
    # external, mailto, fragment-only, self, missing and duplicate links are dropped; blog/ -> blog/index.htm
    assert [(t, a) for t, a, _ in home] == [("User Guide & Tips", ["user", "guide"]), ("index", ["blog"])]
    ctx = home[0][2]
    assert {"crawling", "robots", "blog", "external"} <= set(ctx) and "user" not in ctx  # anchor excluded
    assert "lorem" in ctx
    guide = out("User Guide & Tips")
    assert [(t, a) for t, a, _ in guide] == [("Home", ["home"]), ("index", ["blog", "logo"])]
    assert [(t, a) for t, a, _ in out("index")] == [("User Guide & Tips", ["guide"])]  # ../../ escape dropped


def test_context_window_is_150_chars(site):
    c = load_html_folder(site)
    title, text, links = parse_html((site / "index.html").read_text(encoding="utf-8"))
    href, s, e, anchor = links[0]
    assert text[s:e] == "user guide" == anchor
    assert s > 150  # the filler pushes the anchor far enough in for a full left window
    want = tokenize(text[s - 150:s] + " " + text[e:e + 150])
    e0 = c.link_ptr[c.page_id("Home")]
    got = [c.vocab[int(i)] for i in c.context_terms[c.context_ptr[e0]:c.context_ptr[e0 + 1]]]
    assert got == want


def test_given_domain_and_load_corpus(site):
    c = load_html_folder(site, domain="example.org")
    assert c.domains.tolist() == ["example.org"]
    c2 = load_corpus(site)
    assert c2.n_pages == 3 and c2.n_links == 5


def test_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_html_folder(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "a.txt").write_text("x")
    with pytest.raises(CorpusFormatError, match="no .html"):
        load_html_folder(tmp_path / "empty")


def test_duplicate_titles_disambiguated(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.html").write_text(_page("Same", "<a href='../y.html'>y</a>"))
    (tmp_path / "y.html").write_text(_page("Same", "<a href='a/x.html'>x</a>"))
    c = load_html_folder(tmp_path)
    assert c.titles.tolist() == ["Same (a/x.html)", "Same (y.html)"]
    assert c.n_links == 2
