"""The lexical level of HTML for the compiled scans (:mod:`gym_crawl.web.html_scan`): a document's characters as
code points, names packed into integers, white space, character references (the HTML5 table, with its rule for
attribute values) and the tokenizer's pieces — tags with the attributes a walk reads, comments, raw-text ends.

A document is passed as its Unicode code points (:func:`code_points`: one ``uint32`` per character, so every
offset a kernel returns is an index into the Python ``str``). :func:`nesting_scan` counts block-element nesting
(the bound of :func:`gym_crawl.web.html_extract.nesting`) in one linear pass.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["ENTITY_TABLE", "NESTING_NAMES", "charref", "code_points", "collapse_lines", "comment_end", "decode_refs",
           "find_close", "hash_span", "is_alnum", "is_alpha", "is_space", "is_tag_space", "kernel", "lookup",
           "mix_hash", "name_code", "nesting_counts", "nesting_scan", "parse_tag", "tag_name", "to_gt"]

NESTING_NAMES = ("address", "article", "aside", "blockquote", "center", "details", "dialog", "dir", "div", "dl",
                 "fieldset", "figcaption", "figure", "footer", "form", "header", "hgroup", "listing", "main", "menu",
                 "nav", "ol", "pre", "search", "section", "summary", "table", "ul", "h1", "h2", "h3", "h4", "h5",
                 "h6")
"""The elements whose start closes an open ``<p>`` (HTML5 "in button scope"), plus ``table``: deep nests of these
cost tree building and main-content scoring time in proportion to their depth."""

_NO_RUNTIME: dict = {"_nrt": False}  # numba's target option, which its type stubs do not list
kernel = njit(cache=True, nogil=True, **_NO_RUNTIME)
"""The compilation of the scans' helpers, which allocate nothing: without numba's reference-counting runtime
they inline into their callers (a helper that takes an array costs ~10 ns a call with it, measured: as much as
the walk's whole work per character)."""

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


@kernel
def is_space(c):
    """Python's ``str.isspace`` (what ``\\s`` of a ``str`` pattern matches)."""
    if c <= 32:
        return c == 32 or 9 <= c <= 13 or 28 <= c <= 31
    if c < 133:
        return False
    return (c == 133 or c == 160 or c == 5760 or 8192 <= c <= 8202 or c == 8232 or c == 8233 or c == 8239
            or c == 8287 or c == 12288)


@kernel
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


@kernel
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
        if not (c == 47 or c == 62 or is_space(c)):
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


def nesting_counts(html: str | np.ndarray) -> tuple[int, int]:
    """``(depth, work)`` of :data:`NESTING_NAMES` tags in ``html`` (see :func:`nesting_scan`), a ``str`` or its
    :func:`code_points`."""
    peak, work = nesting_scan(code_points(html) if isinstance(html, str) else html, _NESTING_CODES)
    return int(peak), int(work)


@kernel
def mix_hash(h, c):
    return h * 1099511628211 + c + 1  # int64 arithmetic wraps


@kernel
def hash_span(cp, s, e):
    """The 64-bit hash the kernels give the code points ``cp[s:e]`` (character-reference names, roles)."""
    h = 7
    for k in range(s, e):
        h = mix_hash(h, np.int64(cp[k]))
    return h


def _entity_table() -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    from html.entities import html5

    names = sorted(html5)
    hashes = np.array([hash_span(code_points(nm), 0, len(nm)) for nm in names], np.int64)
    order = np.argsort(hashes, kind="stable")
    if len(np.unique(hashes)) != len(hashes):  # pragma: no cover - a property of the fixed table and hash
        raise RuntimeError("character reference names collide under hash_span")
    first = np.array([ord(html5[nm][0]) for nm in names], np.int64)[order]
    second = np.array([ord(html5[nm][1]) if len(html5[nm]) > 1 else -1 for nm in names], np.int64)[order]
    legacy = max(len(nm) for nm in names if not nm.endswith(";"))
    return hashes[order], first, second, legacy


_CP1252_C1 = np.array([0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039,
                       0x0152, 0x8D, 0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC,
                       0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178], np.int64)
"""What a numeric character reference to U+0080 … U+009F means in HTML5 (windows-1252's characters there)."""


@kernel
def is_alpha(c):
    return (65 <= c <= 90) or (97 <= c <= 122)


@kernel
def is_alnum(c):
    return (65 <= c <= 90) or (97 <= c <= 122) or (48 <= c <= 57)


@kernel
def is_tag_space(c):
    return c == 32 or c == 10 or c == 9 or c == 12 or c == 13


@kernel
def lookup(table, code):
    pos = np.searchsorted(table, code)
    if pos < table.shape[0] and table[pos] == code:
        return pos
    return -1


@kernel
def _numeric_ref(cp, i, n):
    """The numeric character reference ``&#…`` at ``cp[i]`` (as :func:`charref`): an invalid code point is
    U+FFFD, U+0080 … U+009F are windows-1252's characters there."""
    j = i + 1
    k = j + 1
    base = 10
    if k < n and (cp[k] == 120 or cp[k] == 88):
        base = 16
        k += 1
    start = k
    val = 0
    while k < n:
        c = np.int64(cp[k])
        if 48 <= c <= 57:
            d = c - 48
        elif base == 16 and 97 <= c <= 102:
            d = c - 87
        elif base == 16 and 65 <= c <= 70:
            d = c - 55
        else:
            break
        val = val * base + d
        if val > 0x110000:
            val = 0x110000
        k += 1
    if k == start:
        return -1, -1, i + 1
    if k < n and cp[k] == 59:
        k += 1
    if val == 0 or val > 0x10FFFF or 0xD800 <= val <= 0xDFFF:
        val = 0xFFFD
    elif 0x80 <= val <= 0x9F:
        val = _CP1252_C1[val - 0x80]
    return val, -1, k


@kernel
def charref(cp, i, n, attr, ent_hash, ent_a, ent_b, legacy):
    """The character reference at ``cp[i] == '&'``: ``(first, second, next)`` code points (``second`` -1 when one)
    and the index after it, or ``(-1, -1, i + 1)`` when it is not a reference (the ``&`` stays). ``attr``: in an
    attribute value, where a reference without ``;`` followed by ``=`` or a letter or digit stays as written."""
    j = i + 1
    if j < n and cp[j] == 35:  # '#'
        return _numeric_ref(cp, i, n)
    k = j
    while k < n and k - j < 32 and is_alnum(cp[k]):
        k += 1
    if k == j:
        return -1, -1, i + 1
    if k < n and cp[k] == 59:
        pos = lookup(ent_hash, mix_hash(hash_span(cp, j, k), 59))
        if pos >= 0:
            return ent_a[pos], ent_b[pos], k + 1
    top = k - j if k - j < legacy else legacy
    for length in range(top, 1, -1):
        pos = lookup(ent_hash, hash_span(cp, j, j + length))
        if pos >= 0:
            e = j + length
            if attr and e < n and (cp[e] == 61 or is_alnum(cp[e])):
                return -1, -1, i + 1
            return ent_a[pos], ent_b[pos], e
    return -1, -1, i + 1


@kernel
def decode_refs(cp, s, e, buf, blen, attr, ent_hash, ent_a, ent_b, legacy):
    """Copy ``cp[s:e]`` into ``buf`` at ``blen`` with its character references decoded; returns the new length."""
    i = s
    while i < e:
        c = cp[i]
        if c == 38:  # '&'
            a, b, nxt = charref(cp[:e], i, e, attr, ent_hash, ent_a, ent_b, legacy)
            if a >= 0:
                buf[blen] = a
                blen += 1
                if b >= 0:
                    buf[blen] = b
                    blen += 1
                i = nxt
                continue
        buf[blen] = c
        blen += 1
        i += 1
    return blen


@kernel
def tag_name(cp, i, n):
    """``(code, end)`` of the tag name at ``cp[i]``: :func:`name_code` of it (ASCII lowercased), or a negative hash
    for a name it cannot pack."""
    pk = 0
    h = 7
    k = i
    packable = True
    while k < n:
        c = np.int64(cp[k])
        if is_tag_space(c) or c == 47 or c == 62:
            break
        if 65 <= c <= 90:
            c += 32
        if 97 <= c <= 122:
            d = c - 96
        elif 48 <= c <= 57:
            d = 27 + c - 48
        else:
            d = 0
            packable = False
        if packable:
            pk = pk * 37 + d
        h = mix_hash(h, c)
        k += 1
    return (pk if packable and k - i <= 12 else -1 - (h & 0x3FFFFFFFFFFFFFFF)), k


@kernel
def _attribute(cp, k, n):
    """The attribute whose name starts at ``cp[k]`` (its first character may be ``=``): ``(code, value start,
    value end, next)`` — the name's code (letters only, else -1), the raw value's span (empty without a value) and
    the index after it; ``next`` is -1 when the document ends inside it."""
    apk = 0
    ns = k
    ok = True
    while k < n:
        c = np.int64(cp[k])
        if is_tag_space(c) or c == 47 or c == 62 or (c == 61 and k > ns):
            break
        if 65 <= c <= 90:
            c += 32
        if 97 <= c <= 122:
            apk = apk * 37 + (c - 96)
        else:
            ok = False
        k += 1
    code = apk if ok and k - ns <= 12 else -1
    while k < n and is_tag_space(cp[k]):
        k += 1
    if k >= n or cp[k] != 61:  # no value: the empty string
        return code, k, k, k
    k += 1
    while k < n and is_tag_space(cp[k]):
        k += 1
    if k >= n:
        return code, k, k, -1
    q = cp[k]
    if q == 34 or q == 39:
        vs = k + 1
        k = vs
        while k < n and cp[k] != q:
            k += 1
        if k >= n:
            return code, vs, k, -1
        return code, vs, k, k + 1
    if q == 62:
        return code, k, k, k
    vs = k
    while k < n and not (is_tag_space(cp[k]) or cp[k] == 62):
        k += 1
    return code, vs, k, k


@kernel
def parse_tag(cp, i, n):
    """The tag whose name starts at ``cp[i]``: ``(code, next, self_closing, href_s, href_e, alt_s, alt_e, role_s,
    role_e, hidden)`` — the name's code (:func:`tag_name`), the index after ``>``, and the raw value spans of the
    first ``href``, ``alt`` and ``role`` attributes (-1 when absent); ``next`` is -1 when the document ends inside
    the tag (the tag is dropped, as HTML5 drops it)."""
    code, k = tag_name(cp, i, n)
    hs = he = as_ = ae = rs = re_ = -1
    hidden = 0
    while True:
        while k < n and (is_tag_space(cp[k]) or (cp[k] == 47 and not (k + 1 < n and cp[k + 1] == 62))):
            k += 1
        if k >= n:
            return code, -1, 0, hs, he, as_, ae, rs, re_, hidden
        if cp[k] == 47:  # '/>'
            return code, k + 2, 1, hs, he, as_, ae, rs, re_, hidden
        if cp[k] == 62:
            return code, k + 1, 0, hs, he, as_, ae, rs, re_, hidden
        acode, vs, ve, k = _attribute(cp, k, n)
        if k < 0:
            return code, -1, 0, hs, he, as_, ae, rs, re_, hidden
        if acode == _A_HREF and hs < 0:
            hs, he = vs, ve
        elif acode == _A_ALT and as_ < 0:
            as_, ae = vs, ve
        elif acode == _A_ROLE and rs < 0:
            rs, re_ = vs, ve
        elif acode == _A_HIDDEN:
            hidden = 1


@kernel
def to_gt(cp, i, n):
    while i < n and cp[i] != 62:
        i += 1
    return i + 1 if i < n else n


@kernel
def comment_end(cp, i, n):
    """The index after the comment whose text starts at ``cp[i]`` (after ``<!--``)."""
    if i < n and cp[i] == 62:
        return i + 1
    if i + 1 < n and cp[i] == 45 and cp[i + 1] == 62:
        return i + 2
    k = i
    while k + 2 < n:
        if cp[k] == 45 and cp[k + 1] == 45:
            if cp[k + 2] == 62:
                return k + 3
            if k + 3 < n and cp[k + 2] == 33 and cp[k + 3] == 62:
                return k + 4
        k += 1
    return n


@kernel
def find_close(cp, i, n, code):
    """``(start, after)`` of the first end tag of the element ``code`` from ``cp[i]`` (raw text and RCDATA end only
    there), or ``(n, n)``."""
    k = i
    while k + 1 < n:
        if cp[k] == 60 and cp[k + 1] == 47 and k + 2 < n and is_alpha(cp[k + 2]):
            c2, m = tag_name(cp, k + 2, n)
            if c2 == code and m < n:
                return k, to_gt(cp, m, n)
        k += 1
    return n, n


_A_HREF, _A_ALT, _A_ROLE, _A_HIDDEN = (name_code(t) for t in ("href", "alt", "role", "hidden"))
ENTITY_TABLE = _entity_table()
"""``(hashes, first, second, legacy)``: the HTML5 character references by :func:`hash_span` of their names
(sorted), their one or two code points (-1: one), and the longest name valid without ``;``."""


@kernel
def _is_line_break(c):
    """A line boundary of ``str.splitlines`` (``\\r\\n`` is two of them here: the empty line between is dropped)."""
    return 10 <= c <= 13 or 28 <= c <= 30 or c == 133 or c == 8232 or c == 8233


@njit(cache=True, nogil=True)
def _collapse_lines(cp):
    out = np.empty(cp.shape[0], np.uint32)
    n = 0
    line_start = 0  # where the current line's output starts
    space = False  # white space seen since the line's last word
    for c in cp:
        if _is_line_break(c):
            if n > line_start:
                out[n] = 10
                n += 1
                line_start = n
            space = False
        elif is_space(c):
            space = n > line_start
        else:
            if space:
                out[n] = 32
                n += 1
                space = False
            out[n] = c
            n += 1
    if n > 0 and n == line_start:
        n -= 1  # the last line's break
    return out[:n]


def collapse_lines(text: str) -> str:
    """``text`` with white space collapsed within lines and empty lines dropped: ``"\\n".join(ln for ln in
    (" ".join(x.split()) for x in text.splitlines()) if ln)``, in one compiled pass."""
    return _collapse_lines(code_points(text)).tobytes().decode("utf-32-le", "surrogatepass")
