"""One HTML page → title, main text and out-links (gym_crawl.web.html_extract)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gym_crawl.corpus.builder import surrounding_window
from gym_crawl.tokenize import tokenize
from gym_crawl.web.html_extract import LINK_POSITIONS, ExtractedLink, decode_html, extract_page, render_page

PAGE = "http://site.org/dir/page.html"

LAYOUT = b"""<!DOCTYPE html><html><head><title>  Plate   tectonics </title></head><body>
<header><a href="/">Home</a> <a href="/about">About us</a></header>
<nav role="navigation"><ul><li><a href="geology.html">Geology</a></li><li><a
href="rock.html#top">Rock</a></li></ul></nav>
<main><article><h1>Plate tectonics</h1>
<p>Plate tectonics describes how the lithosphere moves over the mantle, driven by convection and slab pull over
millions of years. Continents drift and oceans open along <a href="http://other.org/Rift" rel="nofollow">rift
valleys</a> where new crust forms.</p>
<p>Earthquakes and volcanoes mark the plate boundaries; subduction recycles oceanic crust into the mantle.</p>
<ul><li><a href="/minerals">Minerals</a></li></ul>
</article></main>
<aside role="complementary">Related: <a href="/volcano">Volcano</a></aside>
<footer>Copyright 2024 Example Org. Privacy. Cookies. <a href="/imprint"><img src="i.png" alt="Imprint"></a>
<a href="mailto:x@site.org">Mail</a> <a href="javascript:void(0)">JS</a> <a href="page.html#again">Self</a>
<a href="geology.html">Geology again</a></footer>
<script>var hidden = "script words";</script><style>.x{}</style>
</body></html>"""


def test_title_main_text_and_link_fields() -> None:
    p = extract_page(LAYOUT, PAGE)
    assert p.title == "Plate tectonics"
    assert "lithosphere" in p.text and "subduction" in p.text
    for boiler in ("Copyright", "Privacy", "Related", "script", "About"):
        assert boiler not in p.text, boiler  # footer, aside, header and script text are boilerplate
    by_url = {link.url: link for link in p.links}
    assert [link.url for link in p.links] == [
        "http://site.org/", "http://site.org/about", "http://site.org/dir/geology.html",
        "http://site.org/dir/rock.html", "http://other.org/Rift", "http://site.org/minerals",
        "http://site.org/volcano", "http://site.org/imprint"]  # mailto/js/self dropped, repeated target once
    assert {u: link.position for u, link in by_url.items()} == {
        "http://site.org/": "header", "http://site.org/about": "header",
        "http://site.org/dir/geology.html": "nav", "http://site.org/dir/rock.html": "nav",
        "http://other.org/Rift": "main", "http://site.org/minerals": "list",
        "http://site.org/volcano": "aside", "http://site.org/imprint": "footer"}
    assert {link.position for link in p.links} <= set(LINK_POSITIONS)
    assert by_url["http://site.org/dir/geology.html"].anchor == "Geology"  # the first of the repeated links
    assert by_url["http://other.org/Rift"].anchor == "rift valleys"  # rel=nofollow kept
    assert by_url["http://site.org/imprint"].anchor == "Imprint"  # the alt text of an image-only link
    ctx = by_url["http://other.org/Rift"].context
    assert "oceans open along" in ctx and "where new crust forms" in ctx and "rift valleys" not in ctx
    assert len(ctx) <= 2 * 150 + 1


def test_context_is_the_surrounding_window_of_the_visible_text() -> None:
    body = b"<p>" + b"alpha " * 60 + b'<a href="/t">target words</a>' + b" omega" * 60 + b"</p>"
    (link,) = extract_page(body, "http://a.org/").links
    visible = ("alpha " * 60) + "target words" + (" omega" * 60)
    start = visible.index("target words")
    assert link.context == surrounding_window(visible.strip(), start, start + len("target words"))


def test_relative_links_and_base_href() -> None:
    body = b"""<html><head><base href="/other/dir/"></head><body><a href="x.html">x</a> <a href="../y">y</a>
    <a href="//cdn.org/z">z</a> <a href="https://abs.org/w?b=1&a=2">w</a></body></html>"""
    got = [link.url for link in extract_page(body, "https://a.org/p/q.html").links]
    assert got == ["https://a.org/other/dir/x.html", "https://a.org/other/y", "https://cdn.org/z",
                   "https://abs.org/w?a=2&b=1"]
    no_base = b'<a href="x.html">x</a><a href="../y">y</a>'
    assert [link.url for link in extract_page(no_base, "https://a.org/p/q.html").links] == [
        "https://a.org/p/x.html", "https://a.org/y"]


def test_broken_html_parses_like_a_browser() -> None:
    broken = (b"<html><title>Broken <b>page</title><body><p>Unclosed <a href='/a'>first <div>block"
              b"<p>para <a href=/b>second</a><table><tr><td>cell <a href=\"/c\">third<td>x</table>"
              b"</span></div></div></body><p>after body <a href=/d>fourth")
    p = extract_page(broken, "http://h.org/")
    assert p.title == "Broken <b>page"  # <title> holds raw text in HTML5
    assert [link.url for link in p.links] == ["http://h.org/a", "http://h.org/b", "http://h.org/c",
                                              "http://h.org/d"]
    assert [link.anchor for link in p.links][1] == "second"
    assert "after body" in p.text


@pytest.mark.parametrize("junk", [b"", b"\x00\xff\xfe garbage \x80\x81", b"<<<>>>", b"<a href='http://[bad'>x</a>",
                                  b"<html>" + b"<div>" * 5000 + b"deep" + b"</div>" * 5000])
def test_garbage_never_raises(junk: bytes) -> None:
    p = extract_page(junk, "http://h.org/")
    assert isinstance(p.text, str) and all(isinstance(link, ExtractedLink) for link in p.links)


def test_page_url_must_be_absolute_http() -> None:
    with pytest.raises(ValueError, match="'page.html': not an absolute http"):
        extract_page(b"<p>x</p>", "page.html")


def test_decode_charset_header_beats_meta_and_labels_map_like_browsers() -> None:
    text = "Café, naïve — Ärger"
    latin = f'<meta charset="utf-8"><p>{text}</p>'.encode("cp1252")
    assert text in decode_html(latin, "text/html; charset=ISO-8859-1")  # header wins over the wrong meta
    assert "\ufffd" in decode_html(latin)  # the meta's utf-8 alone cannot decode cp1252 bytes
    meta = f'<meta http-equiv="Content-Type" content="text/html; charset=windows-1252"><p>{text}</p>'
    assert text in decode_html(meta.encode("cp1252"))  # http-equiv meta
    assert text in decode_html(f"<p>{text}</p>".encode(), "text/html")  # no charset anywhere → UTF-8
    assert text in decode_html(f"<p>{text}</p>".encode(), "text/html; charset=no-such-enc")
    assert text in decode_html(b"\xef\xbb\xbf" + f"<p>{text}</p>".encode(), "text/html; charset=latin1")
    sjis = '<meta charset="x-sjis"><p>日本語</p>'.encode("shift_jis")
    assert "日本語" in decode_html(sjis)
    with pytest.raises(TypeError, match="body must be bytes"):
        decode_html("str")  # type: ignore[arg-type]


def test_mixed_encodings_through_extract_page() -> None:
    body = '<html><head><meta charset="utf-8"><title>Ærø</title></head><body><p>Smørrebrød og øl</p>' \
           '<a href="/ø">Købmand</a></body></html>'
    for enc, ct in (("utf-8", None), ("cp1252", "text/html; charset=windows-1252")):
        p = extract_page(body.encode(enc), "http://dk.org/", ct)
        assert p.title == "Ærø" and "Smørrebrød og øl" in p.text
        assert [(link.url, link.anchor) for link in p.links] == [("http://dk.org/%C3%B8", "Købmand")]


def test_boilerplate_removed_from_a_typical_template() -> None:
    body = b"""<html><body><div class="menu"><a href="/1">Products</a> <a href="/2">Pricing</a></div>
    <div id="cookie-banner">We use cookies to improve your experience. Accept all cookies.</div>
    <div class="content"><p>The basalt columns formed when lava cooled slowly and contracted into hexagonal
    prisms, a process geologists call columnar jointing.</p></div>
    <div class="footer">Terms of service | Sitemap | Contact</div></body></html>"""
    p = extract_page(body, "http://h.org/")
    assert "columnar jointing" in p.text
    assert "Sitemap" not in p.text and "Pricing" not in p.text


_WORDS = st.sampled_from(["the", "rock", "mineral", "geology", "copyright", "menu", "login", "share", "footer",
                          "navigation", "cookie", "privacy", "home", "search", "next", "previous", "comment", "reply",
                          "2020", "©", "|", "-", "•", "about", "contact", "é", "ß", "日本", "<b>", "&", '"q"'])
_LINE = st.lists(_WORDS, max_size=12).map(" ".join)
_URLS = st.builds(lambda h, p: f"http://h{h}.org/p{p}", st.integers(0, 5), st.integers(0, 9))


@settings(max_examples=150, deadline=None)
@given(title=st.lists(_WORDS, max_size=5).map(" ".join), lines=st.lists(_LINE, max_size=6),
       links=st.lists(st.tuples(_URLS, st.lists(_WORDS, max_size=3).map(" ".join)), max_size=8))
def test_extract_inverts_render(title: str, lines: list[str], links: list[tuple[str, str]]) -> None:
    text = "\n".join(lines)
    page_url = "http://h0.org/p0"
    p = extract_page(render_page(title, text, links), page_url)
    assert p.title == " ".join(title.split())
    assert tokenize(p.text) == tokenize(text)
    expected, seen = [], {page_url}
    for u, a in links:
        if u not in seen:
            seen.add(u)
            expected.append((u, " ".join(a.split())))
    assert [(link.url, link.anchor) for link in p.links] == expected
    assert all(link.position == "nav" for link in p.links)


def test_rendered_page_contexts_are_the_text_end_and_neighbouring_anchors() -> None:
    p = extract_page(render_page("T", "first line\nthe last line", [("http://a.org/", "Alpha"),
                                                                     ("http://b.org/", "Beta")]), "http://z.org/")
    assert [link.context for link in p.links] == ["first line\nthe last line\n \nBeta",
                                                  "first line\nthe last line\nAlpha\n "]
