"""Compiled (numba) scans over a decoded HTML document's code points, for :mod:`gym_crawl.web.html_extract`.

A document is passed as its Unicode code points (:func:`~gym_crawl.web.html_lex.code_points`); the lexical pieces
(characters, character references, tags) are :mod:`gym_crawl.web.html_lex`'s.

* :func:`walk_scan` — the visible text of a document with the span of every ``<a href>`` in it, its title and
  ``<base href>``, in one linear pass over the raw text (:func:`scan_document` wraps it).

:func:`walk_scan` is an HTML5 tokenizer (tags, attributes, comments, raw-text and RCDATA elements, character
references with the HTML5 table and its attribute-value rule) with a stack of open elements that follows the
tree-building rules a visible text depends on: a block element breaks the line where it opens and where it
closes; ``<p>``, ``<li>``, ``<dt>``/``<dd>``, ``<tr>``/``<td>``/``<th>`` and headings close as HTML5 closes
them implicitly; an end tag closes its open element (inline end tags stop at a block element, as HTML5's
"special" elements stop them), one with no open element is ignored (``</p>`` and ``</br>`` excepted, as in
HTML5); ``<a>`` inside an open ``<a>`` closes the first, and ``</a>`` closes its link even across blocks (the
adoption agency's effect on a link); ``<head>`` content is not text and the head closes at the first body
content; ``</body>``/``</html>`` change nothing (text after them is body text). Not modelled: moving text out of
tables (foster parenting) and re-opening formatting elements — neither changes which words a page shows, only,
rarely, their order. Every step is constant work per character, or bounded per tag (a search of the open elements
stops after :data:`SEARCH_LIMIT` entries), so a page costs time linear in its size whatever its nesting.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from gym_crawl.web.html_lex import (
    ENTITY_TABLE,
    charref,
    code_points,
    comment_end,
    decode_refs,
    find_close,
    hash_span,
    is_alpha,
    is_space,
    is_tag_space,
    kernel,
    lookup,
    mix_hash,
    name_code,
    parse_tag,
    to_gt,
)

__all__ = ["BLOCK_TAGS", "SEARCH_LIMIT", "SKIP_TAGS", "ScanSpans", "link_spans", "scan_document", "scan_spans",
           "walk_of_spans", "walk_scan"]

# ------------------------------------------------------------------------------------------------ the walk

SKIP_TAGS = frozenset({"script", "style", "noscript", "template", "svg", "iframe", "object", "head", "title", "math",
                       "select", "textarea"})
"""Elements whose content is not visible text (nor its links)."""
BLOCK_TAGS = frozenset({"p", "div", "br", "li", "ul", "ol", "tr", "td", "th", "table", "h1", "h2", "h3", "h4", "h5",
                        "h6", "section", "article", "header", "footer", "nav", "aside", "main", "blockquote", "pre",
                        "hr", "dd", "dt", "dl", "figure", "figcaption", "form", "caption", "body", "html", "address",
                        "details", "summary", "menu", "fieldset", "legend", "center"})
"""Elements that break the visible text's line where they open and where they close."""
SEARCH_LIMIT = 256
"""Most open elements an end tag (or an implicitly closing start tag) looks through for its element."""

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "image", "input", "link", "meta", "param", "source",
         "track", "wbr", "keygen", "basefont", "bgsound", "frame"}
_RAW_SKIP = {"script", "style", "iframe", "noscript"}
_RAW_TEXT = {"xmp", "noembed", "noframes"}
_RCDATA = {"title", "textarea"}
_SPECIAL = {"address", "applet", "area", "article", "aside", "base", "basefont", "bgsound", "blockquote", "body", "br",
            "button", "caption", "center", "col", "colgroup", "dd", "details", "dir", "div", "dl", "dt", "embed",
            "fieldset", "figcaption", "figure", "footer", "form", "frame", "frameset", "h1", "h2", "h3", "h4", "h5",
            "h6", "head", "header", "hgroup", "hr", "html", "iframe", "img", "input", "keygen", "li", "link",
            "listing", "main", "marquee", "menu", "meta", "nav", "noembed", "noframes", "noscript", "object", "ol",
            "p", "param", "plaintext", "pre", "script", "search", "section", "select", "source", "style", "summary",
            "table", "tbody", "td", "template", "textarea", "tfoot", "th", "thead", "title", "tr", "track", "ul",
            "wbr", "xmp", "svg", "math"}
_HEAD_OK = {"base", "basefont", "bgsound", "link", "meta", "title", "style", "script", "noscript", "template", "head",
            "html"}
_CLOSES_P = {"address", "article", "aside", "blockquote", "center", "details", "dialog", "dir", "div", "dl",
             "fieldset", "figcaption", "figure", "footer", "form", "header", "hgroup", "main", "menu", "nav", "ol",
             "p", "search", "section", "summary", "ul", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "listing", "table",
             "hr", "xmp", "li", "dd", "dt", "plaintext"}
_FORMATTING = {"a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt", "u"}
_LANDMARKS = {"nav": 0, "header": 1, "footer": 2, "aside": 3}  # LINK_POSITIONS' first four, in order
_LISTS = {"ul", "ol", "dl", "menu"}
_MAINS = {"main", "article"}
_ROLES = {"navigation": 0, "banner": 1, "contentinfo": 2, "complementary": 3, "main": 4}

F_SKIP, F_BLOCK, F_VOID, F_RAW_SKIP, F_RAW_TEXT, F_RCDATA, F_SPECIAL, F_HEAD_OK, F_CLOSES_P, F_FOREIGN, F_LIST, \
    F_MAIN, F_FORMATTING = (1 << k for k in range(13))

_T_A, _T_IMG, _T_IMAGE, _T_BASE, _T_TITLE, _T_HEAD, _T_BODY, _T_HTML, _T_P, _T_BR, _T_LI, _T_DT, _T_DD, _T_TD, \
    _T_TH, _T_TR, _T_TABLE, _T_TBODY, _T_THEAD, _T_TFOOT, _T_ADDRESS, _T_DIV = (
        name_code(t) for t in ("a", "img", "image", "base", "title", "head", "body", "html", "p", "br", "li", "dt",
                               "dd", "td", "th", "tr", "table", "tbody", "thead", "tfoot", "address", "div"))
_T_H1, _T_H6 = name_code("h1"), name_code("h6")  # h1 … h6 pack to consecutive codes


def _tag_table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    names = (SKIP_TAGS | BLOCK_TAGS | _VOID | _RAW_SKIP | _RAW_TEXT | _RCDATA | _SPECIAL | _HEAD_OK | _CLOSES_P
             | _FORMATTING | set(_LANDMARKS) | _LISTS | _MAINS | {"a", "img", "h1", "dialog"})
    rows = []
    for t in names:
        fl = sum(f for f, group in ((F_SKIP, SKIP_TAGS), (F_BLOCK, BLOCK_TAGS), (F_VOID, _VOID),
                                    (F_RAW_SKIP, _RAW_SKIP), (F_RAW_TEXT, _RAW_TEXT), (F_RCDATA, _RCDATA),
                                    (F_SPECIAL, _SPECIAL),
                                    (F_HEAD_OK, _HEAD_OK), (F_CLOSES_P, _CLOSES_P), (F_FOREIGN, {"svg", "math"}),
                                    (F_LIST, _LISTS), (F_MAIN, _MAINS), (F_FORMATTING, _FORMATTING)) if t in group)
        rows.append((name_code(t), fl, _LANDMARKS.get(t, -1)))
    rows.sort()
    return (np.array([r[0] for r in rows], np.int64), np.array([r[1] for r in rows], np.int64),
            np.array([r[2] for r in rows], np.int64))


def _role_table() -> tuple[np.ndarray, np.ndarray]:
    rows = sorted((hash_span(code_points(r), 0, len(r)), v) for r, v in _ROLES.items())
    return np.array([r[0] for r in rows], np.int64), np.array([r[1] for r in rows], np.int64)


@kernel
def _emit(out, olen, c):
    """Append one character of visible text: white space collapses to one space, never at a line's start."""
    if is_space(c):
        if olen > 0 and out[olen - 1] != 32 and out[olen - 1] != 10:
            out[olen] = 32
            olen += 1
    elif c != 0:
        out[olen] = c
        olen += 1
    return olen


@kernel
def _newline(out, olen):
    """Break the line (once; a trailing space is dropped)."""
    if olen > 0 and out[olen - 1] != 10:
        if out[olen - 1] == 32:
            olen -= 1
        out[olen] = 10
        olen += 1
    return olen


# the walk's scalar state, one int64 array the kernels update in place
_OLEN, _ALEN, _ALTLEN, _NL, _CUR, _LINK, _SP, _FOREIGN, _HEAD, _TS, _TE, _BS, _BE = range(13)
_N_STATE = 13


@kernel
def _close_link(lk, S, out):
    """End the open link at the text written so far."""
    cur, olen = S[_CUR], S[_OLEN]
    start = lk[cur, 2]
    end = olen
    if end > start and olen > 0 and out[olen - 1] == 10:
        end -= 1  # a block break inside the link is not part of its text
    lk[cur, 3] = end if end > start else start
    lk[cur, 4] = olen
    S[_LINK] = 0


@kernel
def _pop_to(st, S, target, out, lk, opn):
    """Close the open elements ``st[target:sp]``, innermost first: a closing ``<a>`` ends its link, a block breaks
    the line."""
    sp = S[_SP]
    while sp > target:
        sp -= 1
        code, idx, skip, fl = st[sp, 0], st[sp, 1], st[sp, 2], st[sp, 5]
        if skip == 0:
            if code == _T_A and S[_LINK]:
                _close_link(lk, S, out)
            if fl & F_BLOCK:
                S[_OLEN] = _newline(out, S[_OLEN])
        if idx >= 0:
            opn[idx] -= 1
        if fl & F_FOREIGN:
            S[_FOREIGN] -= 1
    S[_SP] = sp


@kernel
def _remove_at(st, S, k, out, lk, opn):
    """Remove the open element ``st[k]`` alone (a formatting element closed across blocks, or an ``<a>`` a new
    ``<a>`` closes): its link ends."""
    sp = S[_SP]
    if st[k, 2] == 0 and st[k, 0] == _T_A and S[_LINK]:
        _close_link(lk, S, out)
    if st[k, 1] >= 0:
        opn[st[k, 1]] -= 1
    for m in range(k, sp - 1):
        for col in range(6):
            st[m, col] = st[m + 1, col]
    S[_SP] = sp - 1


@kernel
def _push(st, S, opn, code, idx, skip, land, ctx, fl):
    """Open an element (the stack has room: :func:`_grown`)."""
    sp = S[_SP]
    st[sp, 0], st[sp, 1], st[sp, 2], st[sp, 3], st[sp, 4], st[sp, 5] = code, idx, skip, land, ctx, fl
    if idx >= 0:
        opn[idx] += 1
    if fl & F_FOREIGN:
        S[_FOREIGN] += 1
    S[_SP] = sp + 1


@njit(cache=True, nogil=True)
def _grown(st):
    """The stack of open elements with twice the room."""
    grown = np.empty((2 * st.shape[0], st.shape[1]), np.int64)
    grown[:st.shape[0]] = st
    return grown


@kernel
def _stripped(buf, a, b):
    """``buf[a:b]`` without white space at either end, as ``(a, b)``."""
    while a < b and is_space(buf[a]):
        a += 1
    while b > a and is_space(buf[b - 1]):
        b -= 1
    return a, b


@kernel
def _role_of(cp, s, e, buf, blen, ents, role_hash, role_val):
    """The landmark code of a ``role`` value (:data:`LINK_POSITIONS`' index, 4 for ``main``), -1 for another."""
    ent_hash, ent_a, ent_b, legacy = ents
    a, b = _stripped(buf, blen, decode_refs(cp, s, e, buf, blen, True, ent_hash, ent_a, ent_b, legacy))
    h = 7
    for k in range(a, b):
        c = np.int64(buf[k])
        if 65 <= c <= 90:
            c += 32
        h = mix_hash(h, c)
    pos = lookup(role_hash, h)
    return role_val[pos] if pos >= 0 else -1


@kernel
def _close_implied(st, S, code, fl, out, lk, opn, p_idx, a_idx):
    """The open elements a start tag ``code`` closes: an open ``<p>`` (block starts), the previous ``<li>``,
    ``<dt>``/``<dd>``, cell or row, a heading directly inside a heading, an open ``<a>``."""
    sp = S[_SP]
    lo = sp - SEARCH_LIMIT if sp > SEARCH_LIMIT else 0
    if (fl & F_CLOSES_P) and opn[p_idx] > 0:
        for k in range(sp - 1, lo - 1, -1):
            if st[k, 0] == _T_P:
                _pop_to(st, S, k, out, lk, opn)
                break
            if st[k, 5] & F_SPECIAL:
                break
    sp = S[_SP]
    lo = sp - SEARCH_LIMIT if sp > SEARCH_LIMIT else 0
    if code == _T_LI or code == _T_DT or code == _T_DD:  # noqa: SIM109 - numba compares scalars
        for k in range(sp - 1, lo - 1, -1):
            t = st[k, 0]
            if (code == _T_LI and t == _T_LI) or (code != _T_LI and (t == _T_DT or t == _T_DD)):  # noqa: SIM109
                _pop_to(st, S, k, out, lk, opn)
                break
            if (st[k, 5] & F_SPECIAL) and t != _T_ADDRESS and t != _T_DIV and t != _T_P:
                break
    elif code == _T_TD or code == _T_TH or code == _T_TR:  # noqa: SIM109
        for k in range(sp - 1, lo - 1, -1):
            t = st[k, 0]
            if t == _T_TR or (code != _T_TR and (t == _T_TD or t == _T_TH)):  # noqa: SIM109
                if t != _T_TR or code == _T_TR:
                    _pop_to(st, S, k, out, lk, opn)
                break
            if t == _T_TABLE or t == _T_TBODY or t == _T_THEAD or t == _T_TFOOT:  # noqa: SIM109
                break
    elif _T_H1 <= code <= _T_H6 and sp > 0 and _T_H1 <= st[sp - 1, 0] <= _T_H6:
        _pop_to(st, S, sp - 1, out, lk, opn)
    elif code == _T_A and opn[a_idx] > 0:
        for k in range(sp - 1, lo - 1, -1):
            if st[k, 0] == _T_A:
                _remove_at(st, S, k, out, lk, opn)
                break


@kernel
def _end_tag(cp, i, n, st, S, out, lk, opn, codes, flags):
    """Handle the end tag whose name starts at ``cp[i]``; returns the index after it (-1: the document ends in
    it)."""
    code, nxt, _, _, _, _, _, _, _, _ = parse_tag(cp, i, n)
    if nxt < 0:
        return -1
    idx = lookup(codes, code) if code >= 0 else -1
    fl = flags[idx] if idx >= 0 else 0
    sp = S[_SP]
    top_skip = st[sp - 1, 2] if sp > 0 else 0
    if code == _T_HTML or code == _T_BODY:  # noqa: SIM109
        return nxt
    if code == _T_HEAD:
        if S[_HEAD] == 1 and sp > 0 and st[sp - 1, 0] == _T_HEAD:
            _pop_to(st, S, sp - 1, out, lk, opn)
            S[_HEAD] = 2
        return nxt
    if code == _T_BR:  # </br> is <br>
        if top_skip == 0:
            S[_OLEN] = _newline(out, S[_OLEN])
        return nxt
    found = -1
    if idx < 0 or opn[idx] > 0:
        lo = sp - SEARCH_LIMIT if sp > SEARCH_LIMIT else 0
        for k in range(sp - 1, lo - 1, -1):
            if st[k, 0] == code:
                found = k
                break
            if (st[k, 5] & F_SPECIAL) and not (fl & (F_SPECIAL | F_FORMATTING)):
                break
    if found >= 0:
        across = False
        if fl & F_FORMATTING:
            for m in range(found + 1, sp):
                if st[m, 5] & F_SPECIAL:
                    across = True
                    break
        if across:
            _remove_at(st, S, found, out, lk, opn)
        else:
            _pop_to(st, S, found, out, lk, opn)
    elif code == _T_P and top_skip == 0:
        S[_OLEN] = _newline(out, S[_OLEN])  # </p> without <p>: an empty paragraph
    return nxt


@kernel
def _add_alt(cp, s, e, S, abuf, altbuf, lk, ents):
    """The image alt text ``cp[s:e]`` (stripped, when not empty) for the open link's alt texts."""
    ent_hash, ent_a, ent_b, legacy = ents
    alen, altlen, cur = S[_ALEN], S[_ALTLEN], S[_CUR]
    a, b = _stripped(abuf, alen, decode_refs(cp, s, e, abuf, alen, True, ent_hash, ent_a, ent_b, legacy))
    if b > a:
        if altlen > lk[cur, 5]:
            altbuf[altlen] = 32
            altlen += 1
        for m in range(a, b):
            altbuf[altlen] = abuf[m]
            altlen += 1
        lk[cur, 6] = altlen
        S[_ALTLEN] = altlen


@kernel
def _open_link(cp, hs, he, S, out, abuf, lk, ents, position):
    """Start a link (``href`` = ``cp[hs:he]``) at the text written so far, closing an open one."""
    ent_hash, ent_a, ent_b, legacy = ents
    if S[_LINK]:
        _close_link(lk, S, out)
    cur = S[_NL]
    S[_NL] = cur + 1
    S[_CUR] = cur
    lk[cur, 0] = S[_ALEN]
    S[_ALEN] = decode_refs(cp, hs, he, abuf, S[_ALEN], True, ent_hash, ent_a, ent_b, legacy)
    lk[cur, 1] = S[_ALEN]
    lk[cur, 2] = lk[cur, 3] = lk[cur, 4] = S[_OLEN]
    lk[cur, 5] = lk[cur, 6] = S[_ALTLEN]
    lk[cur, 7] = position
    S[_LINK] = 1


@kernel
def _head_closes(st, S, out, lk, opn, closes):
    """Body content (``closes``) after ``<head>`` closes it (when its own entry is the open element), and a later
    ``<head>`` changes nothing."""
    if closes:
        sp = S[_SP]
        if S[_HEAD] == 1 and sp > 0 and st[sp - 1, 0] == _T_HEAD:
            _pop_to(st, S, sp - 1, out, lk, opn)
            S[_HEAD] = 2
        elif S[_HEAD] == 0:
            S[_HEAD] = 2


@kernel
def _raw_element(cp, i, n, code, fl, hidden, top_skip, S, out, abuf, ents):
    """A raw-text or RCDATA element's content from ``cp[i]``: the first ``<title>``'s text kept, ``<xmp>``-like
    text shown as written, the rest (scripts, styles, text areas) skipped; returns the index after its end tag."""
    ent_hash, ent_a, ent_b, legacy = ents
    cs, after = find_close(cp, i, n, code)
    if code == _T_TITLE:
        if S[_TS] < 0:
            S[_TS] = S[_ALEN]
            S[_ALEN] = decode_refs(cp, i, cs, abuf, S[_ALEN], False, ent_hash, ent_a, ent_b, legacy)
            S[_TE] = S[_ALEN]
    elif (fl & F_RAW_TEXT) and top_skip == 0 and hidden == 0:
        olen = S[_OLEN]
        for m in range(i, cs):
            olen = _emit(out, olen, cp[m])
        S[_OLEN] = olen
    return after


@kernel
def _start_tag(cp, i, n, st, S, out, abuf, altbuf, lk, opn, tables):
    """Handle the start tag whose name starts at ``cp[i]``; returns ``(next, push, code, index, skipped, landmark,
    context, flags)``: the index after it (-1: the document ends in it), and whether to open an element with those
    fields (:func:`_push`, the caller's, which grows the stack)."""
    codes, flags, lands, ents, role_hash, role_val, p_idx, a_idx = tables
    code, nxt, sc, hs, he, as_, ae, rs, re_, hidden = parse_tag(cp, i, n)
    if nxt < 0:
        return -1, False, 0, 0, 0, 0, 0, 0
    idx = lookup(codes, code) if code >= 0 else -1
    fl = flags[idx] if idx >= 0 else 0
    _head_closes(st, S, out, lk, opn, not (fl & F_HEAD_OK))
    if code == _T_HEAD:
        if S[_HEAD] == 0:
            S[_HEAD] = 1
            return nxt, True, code, idx, 1, -1, 0, fl
        return nxt, False, 0, 0, 0, 0, 0, 0
    if code == _T_HTML or code == _T_BODY:  # noqa: SIM109
        return nxt, False, 0, 0, 0, 0, 0, 0
    if code == _T_BASE and S[_BS] < 0 and hs >= 0:
        S[_BS] = S[_ALEN]
        S[_ALEN] = decode_refs(cp, hs, he, abuf, S[_ALEN], True, ents[0], ents[1], ents[2], ents[3])
        S[_BE] = S[_ALEN]
    sp = S[_SP]
    top_skip = st[sp - 1, 2] if sp > 0 else 0
    if S[_FOREIGN] == 0 and (fl & (F_RAW_SKIP | F_RAW_TEXT | F_RCDATA)):
        return _raw_element(cp, nxt, n, code, fl, hidden, top_skip, S, out, abuf, ents), False, 0, 0, 0, 0, 0, 0
    if top_skip or (fl & F_SKIP) or hidden:
        push = not (fl & F_VOID) and not (sc and (S[_FOREIGN] > 0 or (fl & F_FOREIGN)))
        return nxt, push, code, idx, 1, -1, 0, fl
    _close_implied(st, S, code, fl, out, lk, opn, p_idx, a_idx)
    if fl & F_BLOCK:
        S[_OLEN] = _newline(out, S[_OLEN])
    sp = S[_SP]
    land = st[sp - 1, 3] if sp > 0 else -1
    ctx = st[sp - 1, 4] if sp > 0 else 0
    role = _role_of(cp, rs, re_, abuf, S[_ALEN], ents, role_hash, role_val) if rs >= 0 else -1
    tl = lands[idx] if idx >= 0 else -1
    if tl >= 0 or (role >= 0 and role != 4):
        land = tl if tl >= 0 else role
    elif fl & F_LIST:
        ctx |= 1
    if (fl & F_MAIN) or role == 4:
        ctx |= 2
    if code == _T_A and hs >= 0:
        _open_link(cp, hs, he, S, out, abuf, lk, ents, land if land >= 0 else (4 if ctx & 1 else (5 if ctx & 2 else 6)))
    elif (code == _T_IMG or code == _T_IMAGE) and S[_LINK] and as_ >= 0:  # noqa: SIM109
        _add_alt(cp, as_, ae, S, abuf, altbuf, lk, ents)
    if fl & F_VOID:
        if fl & F_BLOCK:
            S[_OLEN] = _newline(out, S[_OLEN])
        return nxt, False, 0, 0, 0, 0, 0, 0
    return nxt, True, code, idx, 0, land, ctx, fl


@kernel
def _text_run(cp, i, j, st, S, out, lk, opn, ents):
    """The text ``cp[i:j]`` (no markup in it): shown unless inside a skipped element, its references decoded."""
    ent_hash, ent_a, ent_b, legacy = ents
    if S[_HEAD] != 2:
        solid = False
        for m in range(i, j):
            if not is_tag_space(cp[m]):
                solid = True
                break
        _head_closes(st, S, out, lk, opn, solid)
    sp = S[_SP]
    if sp > 0 and st[sp - 1, 2] != 0:
        return
    olen = S[_OLEN]
    m = i
    while m < j:
        c = np.int64(cp[m])
        if c == 38:
            a, b, nxt = charref(cp[:j], m, j, False, ent_hash, ent_a, ent_b, legacy)
            if a >= 0:
                olen = _emit(out, olen, a)
                if b >= 0:
                    olen = _emit(out, olen, b)
                m = nxt
                continue
        m += 1
        if is_space(c):
            if olen > 0 and out[olen - 1] != 32 and out[olen - 1] != 10:
                out[olen] = 32
                olen += 1
        elif c != 0:
            out[olen] = c
            olen += 1
    S[_OLEN] = olen


@kernel
def _markup_at(cp, j, n):
    """Whether markup (a tag, comment, doctype or processing instruction) starts at ``cp[j] == '<'``."""
    if j + 1 >= n:
        return False
    d = cp[j + 1]
    return is_alpha(d) or d == 33 or d == 63 or (d == 47 and j + 2 < n)


@njit(cache=True, nogil=True)
def walk_scan(cp, codes, flags, lands, ent_hash, ent_a, ent_b, legacy, role_hash, role_val):
    """The visible text of the HTML document ``cp`` (code points) with its links (see the module docstring).

    Returns ``(out, abuf, altbuf, lk, state)``: the visible text ``out[:state[0]]`` (white space collapsed, block
    elements on their own lines); the attribute values read (``abuf``: hrefs, the title, the base href) and the
    links' image alt texts (``altbuf``); ``lk[:state[3]]`` the links in document order, each ``(href start, href
    end, text start, text end, anchor end, alt start, alt end, position)`` (``out[start:end]`` the anchor's span,
    ``out[start:anchor end]`` its text with any trailing block break, ``abuf[href…]`` the ``href``, position an
    index of :data:`LINK_POSITIONS`); ``state[9:13]`` the first ``<title>``'s text and first ``<base href>`` in
    ``abuf`` (-1 when absent)."""
    n = cp.shape[0]
    out = np.empty(n + 8, np.uint32)
    abuf = np.empty(n + 8, np.uint32)
    altbuf = np.empty(n + 8, np.uint32)
    lk = np.empty((n // 7 + 2, 8), np.int64)
    S = np.zeros(_N_STATE, np.int64)
    S[_TS] = S[_TE] = S[_BS] = S[_BE] = -1
    st = np.empty((64, 6), np.int64)  # code, table index, skipped, landmark, context (1: list, 2: main), flags
    opn = np.zeros(codes.shape[0], np.int64)
    ents = (ent_hash, ent_a, ent_b, legacy)
    tables = (codes, flags, lands, ents, role_hash, role_val, lookup(codes, _T_P), lookup(codes, _T_A))
    i = 0
    while i < n:
        if cp[i] == 60 and _markup_at(cp, i, n):
            d = cp[i + 1]
            if d == 33:  # '<!'
                i = comment_end(cp, i + 4, n) if i + 3 < n and cp[i + 2] == 45 and cp[i + 3] == 45 \
                    else to_gt(cp, i + 2, n)
            elif d == 63:  # '<?'
                i = to_gt(cp, i + 2, n)
            elif d == 47:  # '</'
                e = cp[i + 2]
                if e == 62:
                    i += 3
                elif not is_alpha(e):
                    i = to_gt(cp, i + 2, n)
                else:
                    i = _end_tag(cp, i + 2, n, st, S, out, lk, opn, codes, flags)
            else:
                i, push, code, idx, skip, land, ctx, fl = _start_tag(cp, i + 1, n, st, S, out, abuf, altbuf, lk, opn,
                                                                      tables)
                if push:
                    if S[_SP] == st.shape[0]:
                        st = _grown(st)
                    _push(st, S, opn, code, idx, skip, land, ctx, fl)
            if i < 0:
                break
            continue
        j = i + 1
        while j < n and not (cp[j] == 60 and _markup_at(cp, j, n)):
            j += 1
        _text_run(cp, i, j, st, S, out, lk, opn, ents)
        i = j
    _pop_to(st, S, 0, out, lk, opn)
    if S[_LINK]:
        _close_link(lk, S, out)
    return out, abuf, altbuf, lk, S


_TAGS = _tag_table()
_ROLE_TABLE = _role_table()
_POSITIONS = ("nav", "header", "footer", "aside", "list", "main", "other")


def _text(a: np.ndarray) -> str:
    return a.tobytes().decode("utf-32-le", "surrogatepass")


@dataclass(frozen=True)
class ScanSpans:
    """:func:`walk_scan`'s reading of a document as arrays (what :func:`scan_document` makes strings of)."""

    title: str
    """the first ``<title>``'s text, white space collapsed"""
    base: str | None
    """the first ``<base href>`` as written"""
    hrefs: list[str]
    """each link's ``href`` as written, in document order"""
    visible: np.ndarray
    """the visible text's code points (``uint32``; white space at its end included)"""
    length: int
    """the visible text's length without the white space at its end (:func:`scan_document`'s text)"""
    alts: np.ndarray
    """the links' image alt texts, one after the other (``uint32`` code points)"""
    links: np.ndarray
    """one row per link: ``(href start, href end, text start, text end, anchor end, alt start, alt end, position)``
    (:func:`walk_scan`'s ``lk``; position an index of :data:`~gym_crawl.corpus.core.LINK_POSITIONS`)"""


@kernel
def _rstripped(a, n):
    while n > 0 and is_space(a[n - 1]):
        n -= 1
    return n


def scan_spans(html: str, cp: np.ndarray | None = None) -> ScanSpans:
    """:func:`walk_scan` of a decoded HTML document, as :class:`ScanSpans` (``cp``: its :func:`code_points`, when
    already at hand)."""
    out, abuf, altbuf, lk, state = walk_scan(code_points(html) if cp is None else cp, *_TAGS, *ENTITY_TABLE,
                                             *_ROLE_TABLE)
    olen, alen, nl, ts, te, bs, be = (int(state[k]) for k in (_OLEN, _ALEN, _NL, _TS, _TE, _BS, _BE))
    attrs = _text(abuf[:alen])
    links = lk[:nl]
    hrefs = [attrs[a:b] for a, b in links[:, :2].tolist()]
    title = " ".join(attrs[ts:te].split()) if ts >= 0 else ""
    return ScanSpans(title, attrs[bs:be] if bs >= 0 else None, hrefs, out[:olen], _rstripped(out, olen),
                     altbuf[:int(lk[nl - 1, 6])] if nl else altbuf[:0], links)


def scan_document(html: str) -> tuple[str, str, list[tuple[str, int, int, str, str]], str | None]:
    """``(title, visible text, links, base)`` of a decoded HTML document by :func:`walk_scan`: each link
    ``(href as written, start, end, anchor, position)`` with ``text[start:end]`` its anchor's span; the anchor is
    the link's text (white space collapsed), or the alt texts of its images when it has none; ``base`` the first
    ``<base href>`` (``None`` without one)."""
    return walk_of_spans(scan_spans(html))


def walk_of_spans(sp: ScanSpans) -> tuple[str, str, list[tuple[str, int, int, str, str]], str | None]:
    """:func:`scan_document`'s strings from :func:`scan_spans`'s arrays."""
    full = _text(sp.visible)
    m = sp.length
    text = full[:m]
    alts = _text(sp.alts)
    links = []
    for href, (_, _, s, e, ae, als, ale, pos) in zip(sp.hrefs, sp.links.tolist()):
        anchor = full[s:ae].replace("\n", " ").strip() or alts[als:ale]
        links.append((href, s if s < m else m, e if e < m else m, anchor, _POSITIONS[pos]))
    return sp.title, text, links, sp.base


@njit(cache=True, nogil=True)
def _link_spans(visible, length, alts, links, width):
    """Spans of each link's anchor and context in ``visible`` followed by a separator and ``alts``: rows ``3j`` (the
    anchor: its text, or its image alt texts when its text is all white space), ``3j + 1`` and ``3j + 2`` (the
    ``width`` characters before and after the anchor in the visible text without its trailing white space).
    Returns ``(spans, owners, special)``: ``owners[r]`` is the text a span belongs to (``2j`` anchor, ``2j + 1``
    context), ``special`` whether U+0130 or a capital sigma occurs in ``visible`` or ``alts``."""
    nl = links.shape[0]
    spans = np.empty((3 * nl, 2), np.int64)
    owners = np.empty(3 * nl, np.int64)
    off = visible.shape[0] + 1
    for j in range(nl):
        s, e, ae, als, ale = links[j, 2], links[j, 3], links[j, 4], links[j, 5], links[j, 6]
        blank = True
        for q in range(s, min(ae, visible.shape[0])):
            if not is_space(visible[q]):
                blank = False
                break
        if blank:
            spans[3 * j, 0], spans[3 * j, 1] = off + als, off + ale
        else:
            spans[3 * j, 0], spans[3 * j, 1] = s, ae
        sc = min(s, length)
        ec = min(e, length)
        spans[3 * j + 1, 0], spans[3 * j + 1, 1] = max(0, sc - width), sc
        spans[3 * j + 2, 0], spans[3 * j + 2, 1] = ec, min(length, ec + width)
        owners[3 * j] = 2 * j
        owners[3 * j + 1] = owners[3 * j + 2] = 2 * j + 1
    special = False
    for c in visible:
        if c == 0x130 or c == 0x3A3:
            special = True
    for c in alts:
        if c == 0x130 or c == 0x3A3:
            special = True
    return spans, owners, special


def link_spans(sp: ScanSpans, keep: list[int], width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """The code points of ``sp``'s visible text, a separator and its alt texts, with the spans of the anchors and
    contexts of the links ``keep`` in them (as :func:`scan_document`'s anchors and
    :func:`~gym_crawl.corpus.builder.surrounding_window` of ``width`` characters read them) — ``(chars, spans,
    owners, special)``, see :func:`_link_spans`."""
    spans, owners, special = _link_spans(sp.visible, sp.length, sp.alts, sp.links[keep], width)
    chars = np.concatenate((sp.visible, np.zeros(1, np.uint32), sp.alts))
    return chars, spans, owners, bool(special)
