"""extract_page_spans (the WARC compiler's reading of a page) against extract_page, and the chunk writer's columns
from either."""
from __future__ import annotations

import glob
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gym_crawl.corpus.core import LINK_POSITIONS
from gym_crawl.tokenize import tokenize
from gym_crawl.web.html_extract import ExtractedPage, PageSpans, extract_page, extract_page_spans

URL = "http://site.test/a/page.html"


def _span_text(page: PageSpans, owner: int) -> list[str]:
    """The tokens of the text ``owner`` of ``page`` (its spans' tokens, span after span)."""
    out: list[str] = []
    for (a, b), o in zip(page.spans.tolist(), page.owners.tolist()):
        if o == owner:
            out += tokenize(page.chars[a:b].tobytes().decode("utf-32-le", "surrogatepass"))
    return out


def _same_as_extract_page(body: bytes, url: str = URL) -> PageSpans | ExtractedPage:
    want = extract_page(body, url)
    got = extract_page_spans(body, url)
    if isinstance(got, ExtractedPage):
        assert got == want
        return got
    assert (got.title, got.text) == (want.title, want.text)
    assert got.urls == [link.url for link in want.links]
    assert [LINK_POSITIONS[p] for p in got.positions.tolist()] == [link.position for link in want.links]
    for j, link in enumerate(want.links):
        assert _span_text(got, 2 * j) == tokenize(link.anchor), (j, link)
        assert _span_text(got, 2 * j + 1) == tokenize(link.context), (j, link)
    return got


def test_a_page_with_menus_alt_texts_and_blank_anchors() -> None:
    body = ("<html><head><title>T</title><base href='/a/'></head><body><nav><ul><li><a href=x.html>Home</a></li>"
            "<li><a href='#top'>Top</a></li><li><a href=y.html><img alt='Logo here'></a></li>"
            "<li><a href=z.html> \n <img alt='Only alt'> </a></li></ul></nav><main><p>Some text before "
            "<a href=../b.html>inside</a>words<a href=c.html>x</a>y and after. " + "filler words " * 40 +
            "<a href=http://other.test/q?b=1&a=2>other</a></p></main><footer><a href=mailto:x@y>mail</a>"
            "<a href=x.html>Home again</a></footer></body></html>").encode()
    page = _same_as_extract_page(body)
    assert isinstance(page, PageSpans) and len(page.urls) == 7  # "#top" against the base is a page
    # an anchor of white space only (a line break) reads its image's alt text
    page = _same_as_extract_page(b"<p>a<a href=z.html>\n<br><img alt='Logo image'></a>more</p>")
    assert isinstance(page, PageSpans) and _span_text(page, 0) == ["logo", "image"]


def test_sigma_and_dotted_capital_i_pages_are_read_as_strings() -> None:
    for word in ("ΟΔΟΣ", "İstanbul"):
        body = f"<p>{word} <a href=x.html>{word}</a> {word}</p>".encode()
        assert isinstance(_same_as_extract_page(body), ExtractedPage)
    alt = "<p>text <a href=x.html><img alt='ΣΑΣ'></a></p>".encode()
    assert isinstance(_same_as_extract_page(alt), ExtractedPage)


def test_deep_nesting_takes_the_fallback() -> None:
    body = ("<div>" * 600 + "deep <a href=x.html>link</a>" + "</div>" * 600).encode()
    page = _same_as_extract_page(body)
    assert isinstance(page, ExtractedPage) and page.fallback == "nesting"


_PIECES = st.sampled_from(["<p>", "</p>", "<a href=x.html>", "<a href='#f'>", "<a href=../y>", "<a href=x.html#s>",
                           "</a>", "<li>", "<ul>", "</ul>", "<nav>", "</nav>", "<img alt='A b'>", "<img alt=''>",
                           "word", "Ωmega", "é", " ", "\n", "&amp;", "&nbsp;", "<br>", "<b>", "</b>", "x" * 160,
                           "<div>", "</div>", "<main>", "<script>a</script>", "<table><td>", "ΑΣ", "İ", "\u00a0"])


@settings(max_examples=150, deadline=None)
@given(st.lists(_PIECES, max_size=50).map("".join))
def test_generated_markup(html: str) -> None:
    _same_as_extract_page(html.encode())


_DOCS = "/usr/share/doc/python-scipy-doc/html"


@pytest.mark.skipif(not Path(_DOCS).is_dir(), reason=f"{_DOCS} (Debian's python-scipy-doc package) is not installed")
def test_real_documentation_pages() -> None:
    for f in sorted(glob.glob(_DOCS + "/**/*.html", recursive=True))[:40]:
        _same_as_extract_page(Path(f).read_bytes(), "http://docs.local" + f)


def test_chunk_columns_are_the_same_from_spans_and_from_strings(tmp_path: Path) -> None:
    from gym_crawl.web.warc import _ChunkWriter

    bodies = [(f"<title>P{k}</title><nav><a href=/>Home</a> <a href=/b{k % 3}>B page</a></nav><main><p>Text {k} of "
               "crawling <a href=/c>words</a> and more words</p></main>").encode() for k in range(9)]
    bodies.append("<p>ΟΔΟΣ <a href=/s>ΣΑΣ</a></p>".encode())
    bodies.append(("<div>" * 600 + "<a href=/deep>deep</a>").encode())
    written = []
    for name, read in (("spans", extract_page_spans), ("strings", extract_page)):
        w = _ChunkWriter(tmp_path / name, "x", 4)
        (tmp_path / name).mkdir()
        for k, body in enumerate(bodies):
            url = f"http://site.test/p{k}"
            w.add_page(url, f"sha1:{k}", read(body, url))
        w.flush()
        written.append([dict(np.load(c["path"])) for c in w.chunks])
    assert len(written[0]) == len(written[1]) == 3
    for a, b in zip(*written):
        assert a.keys() == b.keys()
        for key in a:
            assert a[key].dtype == b[key].dtype and np.array_equal(a[key], b[key]), key
