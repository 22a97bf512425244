"""One HTML page → its title, main text and out-links, the same way for every web corpus.

The live crawler calls :func:`extract_page` and the WARC compiler (:mod:`gym_crawl.web.warc`)
:func:`extract_page_spans` — the same fields from the same code, with the links' anchors and contexts left as spans
of the visible text for the compiler's tokenizer — so a page read from an archive and the same page fetched live give
identical fields. :func:`render_page` is its
inverse, used to serve a corpus as a web site.

What :func:`extract_page` returns:

* **title**: the first ``<title>``'s text, white space collapsed;
* **text**: the page's *main* text — boilerplate (navigation, menus, footers, sidebars, cookie notices)
  removed by Resiliparse's main-content extractor (``extract_plain_text(main_content=True)``, plus the site
  banner: a ``<header>`` outside ``<main>``/``<article>`` and ``role="banner"``), list
  bullets and image alt texts left out, white space collapsed within lines;
* **links**: every ``<a href>`` (also in navigation and footers), in document order:

  - ``url``: :func:`~gym_crawl.web.urls.canonical_url` of the ``href`` against the page's ``<base href>``
    (itself resolved against the page URL) or the page URL; only ``http(s)`` targets are kept (``mailto:``,
    ``javascript:`` … dropped); links to the page itself (same canonical URL) dropped; a target linked
    several times keeps its first link; ``rel="nofollow"`` links are **kept** (they are part of the web a
    crawler sees; a polite crawler may still choose not to follow them);
  - ``anchor``: the link's text, or the ``alt`` texts of the images inside it when it has no text;
  - ``context``: :func:`~gym_crawl.corpus.builder.surrounding_window` — 150 characters each side of the
    anchor in the page's *visible* text (all rendered text of ``<body>``, not only the main text: the
    anchor of a navigation link has its neighbours in the menu), as every other corpus defines it;
  - ``position``: where the link sits, from its innermost enclosing landmark — ``"nav"`` (``<nav>`` or
    ``role="navigation"``), ``"header"`` (``<header>``, ``role="banner"``), ``"footer"`` (``<footer>``,
    ``role="contentinfo"``), ``"aside"`` (``<aside>``, ``role="complementary"``); else ``"list"`` inside a
    ``<ul>``/``<ol>``/``<dl>``/``<menu>``; else ``"main"`` inside ``<main>``/``<article>``/``role="main"``;
    else ``"other"``.

The visible text skips ``<script>``, ``<style>``, ``<noscript>``, ``<template>``, ``<svg>``, ``<iframe>``,
``<object>`` and elements with the ``hidden`` attribute; block elements break lines.

The title, the visible text and the links come from one compiled pass over the document's characters
(:mod:`gym_crawl.web.html_scan`: an HTML5 tokenizer with the tree-building rules a visible text depends on —
implicitly closed paragraphs, list items and cells, ``<head>`` content, links closed by a new ``<a>``), about
0.14 ms for a 17 KB documentation page against ~1 ms for a walk in Python over a parsed tree; on 2,931 of
Debian's documentation pages it gives the same title, text, spans, anchors and positions as that walk over
Lexbor's HTML5 tree. The main text is Resiliparse's, over its Lexbor parse — the one parse of a page. The
choice of Resiliparse against trafilatura for the main text is measured by ``gym-crawl bench warc_compile``.
"""
from __future__ import annotations

import html as _html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from gym_crawl.corpus.builder import CONTEXT_CHARS, surrounding_window
from gym_crawl.corpus.core import LINK_POSITIONS  # the values of ExtractedLink.position
from gym_crawl.registry import install_command
from gym_crawl.web.html_lex import code_points, collapse_lines, nesting_counts
from gym_crawl.web.html_scan import link_spans, scan_spans, walk_of_spans
from gym_crawl.web.urls import canonical_url, canonical_urls

__all__ = ["LINK_POSITIONS", "MAX_NESTING", "MAX_NESTING_WORK", "ExtractedLink", "ExtractedPage", "HtmlWalk",
           "PageSpans", "decode_html", "extract_links", "extract_page", "extract_page_spans", "nesting", "render_page",
           "walk_html"]

MAX_NESTING = 512
"""Deepest nesting of block elements (estimated from the tags, :func:`nesting`) read by the full extraction;
a deeper page is read by the bounded fallback (:attr:`ExtractedPage.fallback`)."""
MAX_NESTING_WORK = 30_000_000
"""Largest sum, over a page's block start tags, of the nesting depth at that tag, read by the full
extraction. Both HTML5 tree building (Lexbor closes an open ``<p>`` at every block start, looking down the
stack of open elements) and the main-content extractor cost about this sum, so past it the fallback reads
the page."""



@dataclass(frozen=True)
class ExtractedLink:
    """One out-link of a page (see the module docstring for each field's exact definition)."""

    url: str
    """canonical absolute URL of the target"""
    anchor: str
    """the link's text (or the alt texts of the images inside it)"""
    context: str
    """150 characters each side of the anchor in the page's visible text"""
    position: str
    """one of :data:`LINK_POSITIONS`"""


@dataclass(frozen=True)
class ExtractedPage:
    """Title, main text and out-links of one HTML page."""

    title: str
    text: str
    links: tuple[ExtractedLink, ...]
    fallback: str | None = None
    """``None`` for the full extraction; ``"nesting"`` when the page nests block elements past
    :data:`MAX_NESTING` / :data:`MAX_NESTING_WORK` and was read by the bounded fallback: ``text`` is then all
    the page's text (no boilerplate removal), each link's ``context`` is empty and its ``position`` is
    ``"other"``."""


@dataclass(frozen=True)
class HtmlWalk:
    """What :func:`walk_html` reads from a document: ``title``; ``text``, the visible text of ``<body>``
    (block elements break lines); ``links``, ``(href as written, start, end, anchor, position)`` of every
    ``<a href>`` in document order, ``text[start:end]`` being its anchor's span (``start == end == -1``
    under the fallback, which does not locate anchors); ``base``, the ``<base href>`` as written (or
    ``None``); ``fallback``, as :attr:`ExtractedPage.fallback`."""

    title: str
    text: str
    links: tuple[tuple[str, int, int, str, str], ...]
    base: str | None
    fallback: str | None = None


# ----------------------------------------------------------------------------------------- decoding

_CT_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_BOMS = ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


@lru_cache(maxsize=256)
def _codec(label: str | None) -> str | None:
    """The Python codec for an encoding label as browsers map it (``iso-8859-1``/``ascii`` → ``cp1252``,
    ``x-sjis`` → ``shift_jis``), or ``None`` for an unknown label."""
    if not label:
        return None
    from resiliparse.parse.encoding import map_encoding_to_html5

    name = map_encoding_to_html5(label.strip().strip("\"'").lower(), fallback_utf8=False)
    if not name:
        return None
    import codecs

    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def decode_html(body: bytes, content_type: str | None = None) -> str:
    """Decode an HTML payload: a byte-order mark, else the ``charset`` of the HTTP ``Content-Type``
    (``content_type``), else a ``<meta charset>`` / ``http-equiv`` declaration in the first 4 KiB, else
    UTF-8. Labels are mapped as browsers map them (WHATWG encoding labels: ``iso-8859-1`` decodes as
    ``windows-1252``); an unknown label falls through to the next source; undecodable bytes are replaced
    (U+FFFD), never an error."""
    if not isinstance(body, (bytes, bytearray, memoryview)):
        raise TypeError(f"body must be bytes, got {type(body).__name__}")
    body = bytes(body)
    for bom, bom_enc in _BOMS:
        if body.startswith(bom):
            return body[len(bom):].decode(bom_enc, errors="replace")
    enc: str | None = None
    if content_type:
        m = _CT_CHARSET.search(content_type)
        enc = _codec(m.group(1)) if m else None
    if enc is None:
        m2 = _META_CHARSET.search(body[:4096])
        enc = _codec(m2.group(1).decode("ascii", "replace")) if m2 else None
        if enc in ("utf-16-le", "utf-16-be", "utf-16"):  # a meta tag readable as ASCII is not UTF-16
            enc = "utf-8"
    return body.decode(enc or "utf-8", errors="replace")


# ------------------------------------------------------------------------------------- extraction

_SKIP_IN_MAIN = ["header:not(article *):not(main *)", "[role=banner]"]
"""Besides Resiliparse's own main-content rules: a page header outside the article (the site banner) is
boilerplate; an article's own ``<header>`` (its heading, byline) is kept."""


def _lines(text: str) -> str:
    """Collapse white space within lines; drop empty lines (paragraphs stay on their own lines):
    :func:`~gym_crawl.web.html_lex.collapse_lines`."""
    return collapse_lines(text)


def nesting(html: str) -> tuple[int, int]:
    """``(depth, work)`` of the block elements of ``html``, estimated from its tags in one linear scan: the
    deepest nesting and the sum of the depth at every block start tag (unclosed tags count as open, so
    this is an upper bound of the parsed tree's). The tags counted are
    :data:`~gym_crawl.web.html_lex.NESTING_NAMES`, found anywhere in the text (compiled:
    :func:`~gym_crawl.web.html_lex.nesting_scan`)."""
    return nesting_counts(html)


_RESILIPARSE: tuple[Any, Any] | None = None


def _libraries() -> tuple[Any, Any]:
    global _RESILIPARSE
    if _RESILIPARSE is None:
        try:
            from resiliparse.extract.html2text import extract_plain_text
            from resiliparse.parse.html import HTMLTree
        except ImportError:  # pragma: no cover - a dependency of the web extra
            raise ImportError(f"HTML extraction needs resiliparse: {install_command('web')}") from None
        _RESILIPARSE = (extract_plain_text, HTMLTree)
    return _RESILIPARSE


def walk_html(html: str) -> HtmlWalk:
    """Title, visible text and link spans of a decoded HTML document (see :class:`HtmlWalk`): the one HTML
    reader of the package (:func:`extract_page`, :func:`extract_links` and the HTML-folder loader use it), one
    compiled pass over the document's characters (:func:`gym_crawl.web.html_scan.scan_document`).

    Bounded: a document nesting block elements past :data:`MAX_NESTING` or :data:`MAX_NESTING_WORK`
    (:func:`nesting`) is read by the fallback — Resiliparse's tree (built in linear time) for the plain
    text and the ``<a href>`` elements — as :func:`extract_page` then skips main-content scoring, which grows
    with the square of such nesting."""
    cp = code_points(html)
    depth, work = nesting_counts(cp)
    if depth > MAX_NESTING or work > MAX_NESTING_WORK:
        extract_plain_text, HTMLTree = _libraries()
        tree = HTMLTree.parse(html)
        title = " ".join((tree.title or "").split())
        base_node = tree.document.query_selector("base[href]")
        # without preserve_formatting: it indents nested lists, a text quadratic in their depth
        text = _lines(extract_plain_text(tree, preserve_formatting=False, main_content=False, list_bullets=False,
                                         alt_texts=False)) if tree.body is not None else ""
        links = []
        if tree.body is not None:
            for a in tree.body.query_selector_all("a[href]"):
                links.append((a.getattr("href") or "", -1, -1, " ".join(a.text.split()), "other"))
        return HtmlWalk(title, text, tuple(links), base_node.getattr("href") if base_node is not None else None,
                        "nesting")
    title, visible, spans, base = walk_of_spans(scan_spans(html, cp))  # scan_document, the code points reused
    return HtmlWalk(title, visible, tuple(spans), base)


def _select_links(hrefs: Sequence[str], base_href: str | None, page_url: str) -> tuple[list[int], list[str]]:
    """Which of a page's links (their ``href`` as written, in document order) become its out-links, and their
    canonical URLs (see the module docstring)."""
    base = page_url
    if base_href is not None:
        base = canonical_url(base_href, page_url) or page_url
    own = base == page_url
    # a fragment of the page itself is dropped first (the most frequent link of long documents)
    kept = [i for i, href in enumerate(hrefs) if not (own and href.lstrip()[:1] == "#")]
    keep: list[int] = []
    urls: list[str] = []
    seen = {page_url}
    for i, target in zip(kept, canonical_urls([hrefs[i] for i in kept], base)):
        if target is None or target in seen:
            continue
        seen.add(target)
        keep.append(i)
        urls.append(target)
    return keep, urls


def _links(walk: HtmlWalk, page_url: str) -> tuple[ExtractedLink, ...]:
    """The walk's links as :class:`ExtractedLink` (see the module docstring)."""
    keep, urls = _select_links([link[0] for link in walk.links], walk.base, page_url)
    links: list[ExtractedLink] = []
    for i, target in zip(keep, urls):
        _, start, end, anchor, position = walk.links[i]
        context = surrounding_window(walk.text, start, end) if start >= 0 else ""
        links.append(ExtractedLink(target, anchor, context, position))
    return tuple(links)


def _page_url(url: str) -> str:
    page_url = canonical_url(url)
    if page_url is None:
        raise ValueError(f"url {url!r}: not an absolute http(s) URL")
    return page_url


def extract_links(body: bytes, url: str, content_type: str | None = None) -> tuple[ExtractedLink, ...]:
    """The out-links of the HTML ``body`` fetched from ``url``, exactly as :func:`extract_page` gives them,
    without extracting the main text (what a crawler needs to follow links)."""
    page_url = _page_url(url)
    return _links(walk_html(decode_html(body, content_type)), page_url)


def extract_page(body: bytes, url: str, content_type: str | None = None) -> ExtractedPage:
    """Title, main text and out-links of the HTML ``body`` fetched from ``url`` (see the module docstring).

    ``content_type``: the HTTP ``Content-Type`` header, for its charset (:func:`decode_html`). ``url`` must be
    an absolute ``http(s)`` URL (``ValueError`` naming it otherwise). Never raises on malformed HTML or bytes,
    and takes time about linear in the page's size: a page nesting block elements past :data:`MAX_NESTING`
    is read by the bounded fallback (:attr:`ExtractedPage.fallback`).
    """
    page_url = _page_url(url)
    html = decode_html(body, content_type)
    walk = walk_html(html)
    if walk.fallback is not None:
        return ExtractedPage(walk.title, walk.text, _links(walk, page_url), walk.fallback)
    return ExtractedPage(walk.title, _main_text(html), _links(walk, page_url))


def _main_text(html: str) -> str:
    """Resiliparse's main text of a decoded document (see the module docstring), lines collapsed."""
    extract_plain_text, HTMLTree = _libraries()
    tree = HTMLTree.parse(html)
    return _lines(extract_plain_text(tree, preserve_formatting=True, main_content=True, list_bullets=False,
                                     alt_texts=False, skip_elements=_SKIP_IN_MAIN)) if tree.body is not None else ""


@dataclass(frozen=True)
class PageSpans:
    """:func:`extract_page`'s fields with the links' anchors and contexts as spans of code points, not strings (what
    the WARC compiler reads: it tokenizes them where they lie, :mod:`gym_crawl.web.token_ids`)."""

    title: str
    text: str
    urls: list[str]
    """each out-link's canonical URL (:attr:`ExtractedLink.url`, in the same order)"""
    positions: np.ndarray
    """each out-link's position (``int64`` index of :data:`LINK_POSITIONS`)"""
    chars: np.ndarray
    """the code points the spans index: the page's visible text, a separator, its links' image alt texts"""
    spans: np.ndarray
    """``(start, end)`` rows into ``chars``: per out-link ``j``, its anchor (row ``3j``) and the two halves of its
    context (rows ``3j + 1``, ``3j + 2``)"""
    owners: np.ndarray
    """per span row: ``2j`` (the anchor of link ``j``) or ``2j + 1`` (its context)"""


def extract_page_spans(body: bytes, url: str, content_type: str | None = None) -> PageSpans | ExtractedPage:
    """:func:`extract_page` with its links' texts left as spans (:class:`PageSpans`): the same title, main text, link
    URLs and positions, and anchors and contexts whose tokens are those of :func:`extract_page`'s strings. An
    :class:`ExtractedPage` where spans cannot stand for the strings: the bounded fallback (no spans), or a visible
    text holding U+0130 or a capital sigma (``str.lower`` makes the one two characters and reads the other's
    neighbours, so a context cut out of the text could lowercase otherwise)."""
    page_url = _page_url(url)
    html = decode_html(body, content_type)
    cp = code_points(html)
    depth, work = nesting_counts(cp)
    if depth > MAX_NESTING or work > MAX_NESTING_WORK:
        return extract_page(body, url, content_type)
    sp = scan_spans(html, cp)
    keep, urls = _select_links(sp.hrefs, sp.base, page_url)
    chars, spans, owners, special = link_spans(sp, keep, CONTEXT_CHARS)
    if special:
        title, visible, spans_as_text, base = walk_of_spans(sp)
        walk = HtmlWalk(title, visible, tuple(spans_as_text), base)
        return ExtractedPage(walk.title, _main_text(html), _links(walk, page_url))
    return PageSpans(sp.title, _main_text(html), urls, sp.links[keep, 7], chars, spans, owners)


# -------------------------------------------------------------------------------------- rendering

def render_page(title: str, text: str, links: Sequence[tuple[str, str]]) -> bytes:
    """A UTF-8 HTML page with ``title``, ``text`` and ``links`` (``(url, anchor)`` pairs), for serving a
    corpus as a web site: ``extract_page(render_page(t, x, L), url)`` gives back the title ``t`` (white space
    collapsed), a text with the tokens of ``x`` (each line of ``x`` a paragraph of ``<main><article>``) and
    the canonical URLs and anchors of ``L`` in order (less links to ``url`` itself and repeated targets).

    The links are a ``<nav>`` list after the article, so each extracted link has ``position == "nav"`` and
    its ``context`` is the visible text around its list item: the end of ``x`` and the neighbouring anchors
    (150 characters each side).
    """
    esc = _html.escape
    paras = "".join(f"<p>{esc(ln)}</p>" for ln in text.splitlines() if ln.strip())
    items = "".join(f'<li><a href="{esc(u, quote=True)}">{esc(a)}</a></li>' for u, a in links)
    return (f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{esc(title)}</title></head>'
            f"<body><main><article>{paras}</article></main>"
            f"<nav><ul>{items}</ul></nav></body></html>").encode()
