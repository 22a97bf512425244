"""The compiled HTML scans (gym_crawl.web.html_scan) against their plain-Python definitions."""
from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from gym_crawl.web.html_extract import nesting
from gym_crawl.web.html_scan import NESTING_NAMES, name_code

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
