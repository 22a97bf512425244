"""The compiled HTML scans (gym_crawl.web.html_scan) against their plain-Python definitions."""
from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from gym_crawl.web.html_extract import nesting
from gym_crawl.web.html_lex import NESTING_NAMES, name_code

_NESTING_RE = re.compile(r"<(/?)(?:" + "|".join(NESTING_NAMES) + r")(?=[\s/>])", re.IGNORECASE)


def _nesting_by_regex(html: str) -> tuple[int, int]:
    depth = peak = work = 0
    for m in _NESTING_RE.finditer(html):
        if m.group(1):
            depth = max(0, depth - 1)
        else:
            depth += 1
            work += depth
            peak = max(peak, depth)
    return peak, work


_PIECES = st.sampled_from(["<", "</", ">", "/", " ", "\n", "\u00a0", "\u3000", "x", "div", "DiV", "dl", "dlx", "h1",
                           "H6", "h7", "table", "blockquote", "bloc\u212aquote", "\u017fection", "l\u0130sting",
                           "l\u0131sting", "<!--", "-->", "<p>", "ul", "u", "figcaption", "figcaptions", "é", "\x00"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=60).map("".join))
def test_nesting_is_the_regular_expression_count(html: str) -> None:
    assert nesting(html) == _nesting_by_regex(html)


def test_nesting_of_a_document() -> None:
    html = "<DIV><div class=a><ul><li>x</ul></div><section/><table\n>" + "<div>" * 600 + "</div>" * 700
    assert nesting(html) == _nesting_by_regex(html) == (603, 1 + 2 + 3 + 2 + 3 + sum(range(4, 604)))
    assert nesting("") == (0, 0) and nesting("<div") == (0, 0)


def test_name_code_is_exact_for_short_lowercase_names() -> None:
    codes = {name_code(n) for n in NESTING_NAMES}
    assert len(codes) == len(NESTING_NAMES) and min(codes) > 0
    assert name_code("Div") == name_code("a" * 13) == name_code("") == name_code("é") == -1


# ------------------------------------------------------------------------------------- the compiled walk

import pytest  # noqa: E402

from gym_crawl.corpus.builder import enter_element  # noqa: E402
from gym_crawl.web.html_extract import walk_html  # noqa: E402
from gym_crawl.web.html_scan import scan_document  # noqa: E402


def _walk(html: str) -> tuple[str, list[tuple[str, str, str]]]:
    w = walk_html(html)
    return w.text, [(h, w.text[s:e], a) for h, s, e, a, _ in w.links]


def test_blocks_break_lines_and_inline_elements_do_not() -> None:
    text, _ = _walk("<body><h1>Title</h1><p>one <b>two</b>  three<br>four</p><ul><li>a<li>b</ul>tail</body>")
    assert text == "Title\none two three\nfour\na\nb\ntail"


def test_implicitly_closed_paragraphs_items_and_cells() -> None:
    text, _ = _walk("<p>first<p>second<div>block</div><table><tr><td>c1<td>c2<tr><td>c3</table><dl><dt>t<dd>d</dl>")
    assert text == "first\nsecond\nblock\nc1\nc2\nc3\nt\nd"


def test_head_content_is_not_text_and_the_head_closes_at_body_content() -> None:
    assert _walk("<html><head><title>T</title><meta charset=utf-8><style>p{}</style></head><body>x</body>")[0] == "x"
    assert _walk("<head><title>T</title>stray text<p>y")[0] == "stray text\ny"  # text closes the head
    assert _walk("<head><link rel=x><div>shown</div>")[0] == "shown"  # so does a body element
    assert _walk("<p>body first</p><head><p>not a head</p>")[0] == "body first\nnot a head"
    assert walk_html("<title>A &amp; <b>B</b></title><p>x").title == "A & <b>B</b>"  # RCDATA: references only


def test_skipped_elements_comments_and_raw_text() -> None:
    html = ("<p>a<script>var s = '</p><a href=/x>no</a>';</script>b<!-- <a href=/c>comment</a> -->c"
            "<style>.x{}</style><template><a href=/t>t</a></template><svg><text>svg</text><path/></svg>d"
            "<div hidden>hidden <a href=/h>h</a></div><noscript><a href=/n>n</a></noscript><select><option>o</select>"
            "<textarea></p>area</textarea><xmp><b>shown as written</b></xmp><iframe>if</iframe>e</p>")
    text, links = _walk(html)
    assert text == "abcd<b>shown as written</b>e"
    assert links == []


def test_character_references_in_text_and_attributes() -> None:
    html = ('<p>a&amp;b &lt;tag&gt; caf&eacute; &#233;&#xE9; &#x80; &#0; &notit; &amp x&nbsp;y &bogus;</p>'
            '<a href="/q?a=1&amp;b=2&copy=3&lang;">l</a>')
    text, links = _walk(html)
    assert text == "a&b <tag> café éé € \ufffd ¬it; & x y &bogus;\nl"  # &nbsp; collapses as white space
    assert links[0][0] == "/q?a=1&b=2&copy=3\u27e8"  # legacy &copy before '=' stays in an attribute


def test_link_spans_anchors_alt_texts_and_positions() -> None:
    html = ('<nav><a href="/n">Nav  link</a></nav><main><p>see <a href="/m">the <i>main</i> link</a>.</p>'
            '<ul><li><a href="/l"><img alt=" Logo "><img alt="x"></a></li></ul></main>'
            '<div role="contentinfo"><a href="/f">foot</a></div><aside><ul><a href=/a>aside</a></ul></aside>'
            '<a href="/o">other</a><a name="no-href">not a link</a>')
    w = walk_html(html)
    got = [(h, w.text[s:e], a, p) for h, s, e, a, p in w.links]
    assert got == [("/n", "Nav link", "Nav link", "nav"), ("/m", "the main link", "the main link", "main"),
                   ("/l", "", "Logo x", "list"), ("/f", "foot", "foot", "footer"), ("/a", "aside", "aside", "aside"),
                   ("/o", "other", "other", "other")]


@pytest.mark.parametrize("outer", ["nav", "header", "footer", "aside", "ul", "ol", "dl", "menu", "main", "article",
                                   "div"])
@pytest.mark.parametrize("inner", ["nav", "header", "ul", "main", "article", "div"])
@pytest.mark.parametrize("role", [None, "navigation", "banner", "contentinfo", "complementary", "main", " MAIN ",
                                  "presentation"])
def test_positions_follow_enter_element(outer: str, inner: str, role: str | None) -> None:
    attr = f' role="{role}"' if role is not None else ""
    html = f'<{outer}><{inner}{attr}><a href="/x">x</a></{inner}></{outer}>'
    landmark, in_list, in_main, _ = enter_element(outer, None, None, False, False)
    landmark, in_list, in_main, _ = enter_element(inner, role, landmark, in_list, in_main)
    expected = landmark or ("list" if in_list else "main" if in_main else "other")
    assert [p for *_, p in walk_html(html).links] == [expected]


def test_links_end_where_html5_ends_them() -> None:
    _, links = _walk('<a href="/1">one <a href="/2">two</a> after')  # a new <a> closes the open one
    assert links == [("/1", "one ", "one"), ("/2", "two", "two")]  # the span as written, the anchor trimmed
    _, links = _walk('<div><a href="/1">in <div>block</div> still</a> out</div>')  # </a> across a block
    assert links == [("/1", "in\nblock\nstill", "in block still")]
    _, links = _walk('<p><a href="/1">open to the end')
    assert links == [("/1", "open to the end", "open to the end")]


def test_base_href_first_and_title_first() -> None:
    w = walk_html('<base target=x><base href="/b/?a&amp;b"><base href="/c/"><title>One</title><title>Two</title>')
    assert (w.base, w.title) == ("/b/?a&b", "One")
    assert walk_html("<p>no base").base is None


@pytest.mark.parametrize("junk", ["", "<", "</", "<a", "<a href='x", "<!--", "<!-->x", "<!--->y", "</>z", "<?pi>w",
                                  "</ x>v", "<a href=x>" * 3 + "</a>" * 5, "&", "&#", "&#x;", "&#99999999999;",
                                  "<div" + " a=b" * 50, "\x00<p>\x00n\x00", "<svg/><p>after svg</p>"])
def test_broken_markup_never_raises(junk: str) -> None:
    title, text, links, base = scan_document(junk)
    assert isinstance(text, str) and all(0 <= s <= e <= len(text) for _, s, e, _, _ in links)


def test_deep_nesting_of_any_kind_is_read() -> None:
    n = 20_000  # each end tag or implicitly closing start tag looks through at most SEARCH_LIMIT open elements
    assert scan_document("<b>" * n + "x" + "</i>" * n)[1] == "x"
    assert scan_document("<span>" * n + "<div>" * n + "y")[1] == "y"
    title, text, links, _ = scan_document("<a href=/x>z" * n)
    assert len(links) == n and text == "z" * n and all(e - s == 1 for _, s, e, _, _ in links)
    assert scan_document("<li>w" * n)[1] == "\n".join(["w"] * n)


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from(list("ab Zé1_-' \n\u00c9\u0130\u03a3x")), max_size=60))
def test_tokenize_is_the_runs_of_two_letters_or_more(text: str) -> None:
    from gym_crawl.tokenize import STOPWORDS, TOKEN_RE, tokenize

    assert tokenize(text) == [t for t in TOKEN_RE.findall(text.lower()) if len(t) > 1 and t not in STOPWORDS]


# ------------------------------------------------------------------------------------- lines of a main text

from gym_crawl.web.html_lex import collapse_lines  # noqa: E402


def _lines_by_python(text: str) -> str:
    return "\n".join(ln for ln in (" ".join(x.split()) for x in text.splitlines()) if ln)


_LINE_PIECES = st.sampled_from(["a", "bc", " ", "  ", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e",
                                "\x1f", "\x85", "\u2028", "\u2029", "\u00a0", "\u3000", "\u200b", "\t", "é", "\x00",
                                "日本", "\ud800", "\U0001f600"])


@settings(max_examples=500, deadline=None)
@given(st.lists(_LINE_PIECES, max_size=40).map("".join))
def test_collapse_lines_is_split_and_join(text: str) -> None:
    assert collapse_lines(text) == _lines_by_python(text)


def test_collapse_lines_of_every_white_space_character() -> None:
    spaces = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
    for c in spaces:
        text = f"  a{c}b {c}{c} c\n{c}\n d{c}"
        assert collapse_lines(text) == _lines_by_python(text), hex(ord(c))
    assert collapse_lines("") == "" and collapse_lines("\n \n") == "" and collapse_lines("x") == "x"
