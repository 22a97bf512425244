"""Compiled (numba) scans over a decoded HTML document's code points, for :mod:`gym_crawl.web.html_extract`.

A document is passed as its Unicode code points (:func:`code_points`: one ``uint32`` per character, so every
offset a kernel returns is an index into the Python ``str``).

* :func:`nesting_scan` — the block-element nesting estimate that bounds the full extraction
  (:func:`gym_crawl.web.html_extract.nesting`), in one linear pass.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["NESTING_NAMES", "code_points", "name_code", "nesting_scan"]

NESTING_NAMES = ("address", "article", "aside", "blockquote", "center", "details", "dialog", "dir", "div", "dl",
                 "fieldset", "figcaption", "figure", "footer", "form", "header", "hgroup", "listing", "main", "menu",
                 "nav", "ol", "pre", "search", "section", "summary", "table", "ul", "h1", "h2", "h3", "h4", "h5",
                 "h6")
"""The elements whose start closes an open ``<p>`` (HTML5 "in button scope"), plus ``table``: deep nests of these
cost tree building and main-content scoring time in proportion to their depth."""

_NAME_BASE = 37  # a name of up to 12 characters of [a-z0-9] packs exactly into an int64: 37**12 < 2**63
_NAME_MAX = 12


def code_points(html: str) -> np.ndarray:
    """The code points of ``html`` as a ``uint32`` array (lone surrogates kept as their code points)."""
    return np.frombuffer(html.encode("utf-32-le", "surrogatepass"), np.uint32)


def name_code(name: str) -> int:
    """The exact integer code of a lowercase name of 1–12 characters of ``[a-z0-9]`` (as the kernels pack tag
    names), ``-1`` for any other name."""
    if not 0 < len(name) <= _NAME_MAX or not all(c.isascii() and (c.islower() or c.isdigit()) for c in name):
        return -1
    code = 0
    for c in name:
        code = code * _NAME_BASE + (ord(c) - 96 if c.isalpha() else 27 + ord(c) - 48)
    return code


_NESTING_CODES = np.array(sorted(name_code(n) for n in NESTING_NAMES), np.int64)


@njit(cache=True, nogil=True, inline="always")
def _is_space(c):
    """Python's ``str.isspace`` (what ``\\s`` of a ``str`` pattern matches)."""
    if c <= 32:
        return c == 32 or 9 <= c <= 13 or 28 <= c <= 31
    if c < 133:
        return False
    return (c == 133 or c == 160 or c == 5760 or 8192 <= c <= 8202 or c == 8232 or c == 8233 or c == 8239
            or c == 8287 or c == 12288)


@njit(cache=True, nogil=True, inline="always")
def _fold_ignorecase(c):
    """The ``[a-z0-9]`` digit of ``c`` under ``re.IGNORECASE`` of a ``str`` pattern (the Kelvin sign matches ``k``,
    the long s ``s``, the dotted and dotless i ``i``), 0 for any other character."""
    if 97 <= c <= 122:
        return c - 96
    if 65 <= c <= 90:
        return c - 64
    if 48 <= c <= 57:
        return 27 + c - 48
    if c == 0x212A:
        return 11
    if c == 0x17F:
        return 19
    if c == 0x130 or c == 0x131:
        return 9
    return 0


@njit(cache=True, nogil=True)
def nesting_scan(cp, codes):
    """``(depth, work)`` over the tags ``<name`` / ``</name`` in ``cp`` whose name (ASCII case-insensitive, as
    ``re.IGNORECASE`` matches it) packs to one of the sorted ``codes`` and is followed by white space, ``/`` or
    ``>``: the deepest nesting and the sum of the depth at every start tag (an end tag below depth 0 counts
    nothing). The same count as a regular-expression scan of those tags, anywhere in the text."""
    n = cp.shape[0]
    depth = 0
    peak = 0
    work = 0
    for i in range(n):
        if cp[i] != 60:  # '<'
            continue
        j = i + 1
        closing = j < n and cp[j] == 47  # '/'
        if closing:
            j += 1
        code = 0
        k = j
        while k < n and k - j <= 12:
            d = _fold_ignorecase(cp[k])
            if d == 0:
                break
            code = code * 37 + d
            k += 1
        if k == j or k - j > 12 or k >= n:
            continue
        c = cp[k]
        if not (c == 47 or c == 62 or _is_space(c)):
            continue
        pos = np.searchsorted(codes, code)
        if pos >= codes.shape[0] or codes[pos] != code:
            continue
        if closing:
            if depth:
                depth -= 1
        else:
            depth += 1
            work += depth
            if depth > peak:
                peak = depth
    return peak, work


def nesting_counts(html: str) -> tuple[int, int]:
    """``(depth, work)`` of :data:`NESTING_NAMES` tags in ``html`` (see :func:`nesting_scan`)."""
    peak, work = nesting_scan(code_points(html), _NESTING_CODES)
    return int(peak), int(work)
