"""Load a folder of HTML files (a saved or mirrored web site) as a :class:`Corpus`.

Every ``*.html`` / ``*.htm`` file under the folder (recursively, in sorted
relative-path order, which gives the page ids) is a page:

* **title**: the ``<title>`` text, else the file name without extension.
  Titles that repeat get their relative path appended (``"Home (blog/index.html)"``)
  so :meth:`Corpus.page_id` stays unambiguous; ``meta["page_paths"]`` lists
  every page's relative path;
* **text**: the visible text of ``<body>``, read by :func:`gym_crawl.web.html_extract.walk_html` (the
  package's one HTML reader, an HTML5 parser) — ``<script>``, ``<style>``, ``<noscript>``, ``<template>``,
  ``<svg>``, ``<iframe>``, ``<object>`` and hidden elements are skipped, block elements become line breaks,
  whitespace is collapsed;
* **links**: ``<a href>`` resolved relative to the file (``/x.html`` relative
  to the folder; query and fragment dropped; a link to a folder means its
  ``index.html`` / ``index.htm``). A link is kept only when it points to another
  page of the folder: external URLs, ``mailto:``, links to missing files and
  links from a page to itself are dropped, and repeated links from one page to
  the same target keep the first one;
* **anchor**: the link's text (or the ``alt`` of an image inside it);
* **position** (``corpus.link_position``): the link's innermost enclosing landmark — ``nav`` (``<nav>``,
  ``role="navigation"``), ``header`` (``<header>``, ``role="banner"``), ``footer`` (``<footer>``,
  ``role="contentinfo"``), ``aside`` (``<aside>``, ``role="complementary"``); else ``list`` inside
  ``<ul>``/``<ol>``/``<dl>``/``<menu>``; else ``main`` inside ``<main>``/``<article>``/``role="main"``; else
  ``other`` — the rules of :mod:`gym_crawl.web.html_extract`;
* **surrounding text**: :func:`~gym_crawl.corpus.builder.surrounding_window`
  (150 characters each side) around the anchor in the page's visible text;
* **domain**: ``domain`` when given; otherwise the first path component of the
  file (``wget --mirror`` stores each host in its own folder, e.g.
  ``site/en.example.org/a.html`` → ``en.example.org``), and the folder's own
  name for files at its top level;
* no labels.

The encoding is a byte-order mark, else a ``<meta charset>`` / ``http-equiv`` declaration, else UTF-8
(:func:`~gym_crawl.web.html_extract.decode_html`; undecodable bytes are replaced).
"""
from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

from gym_crawl.corpus.builder import CorpusBuilder, surrounding_window
from gym_crawl.corpus.core import Corpus, CorpusFormatError
from gym_crawl.web.html_extract import decode_html, walk_html

__all__ = ["load_html_folder", "parse_html"]

HTML_SUFFIXES = (".html", ".htm")


def parse_html(html: str) -> tuple[str, str, list[tuple[str, int, int, str]]]:
    """Parse one document: ``(title, visible_text, [(href, start, end, anchor_text), ...])``.

    ``start:end`` is the anchor's span in ``visible_text`` (empty for image-only links; ``-1, -1`` when a
    page nesting past :data:`~gym_crawl.web.html_extract.MAX_NESTING` was read by the bounded fallback).
    The reader is :func:`gym_crawl.web.html_extract.walk_html`, the one the WARC compiler and the live
    crawler use.
    """
    return _parse(html)[:3]


def _parse(html: str) -> tuple[str, str, list[tuple[str, int, int, str]], list[str]]:
    """:func:`parse_html` plus each link's position (see the module docstring)."""
    w = walk_html(html)
    return w.title, w.text, [(h, s, e, a) for h, s, e, a, _ in w.links], [p for *_, p in w.links]


def _resolve(href: str, page_rel: PurePosixPath, pages: dict[str, int]) -> int | None:
    """Page id ``href`` (found in the page at ``page_rel``) points to, or ``None``."""
    parts = urlsplit(href.strip())
    if parts.scheme or parts.netloc or not parts.path:
        return None  # external, mailto:, javascript:, or a bare "#fragment" / "?query"
    path = unquote(parts.path)
    base = PurePosixPath("/") if path.startswith("/") else PurePosixPath("/") / page_rel.parent
    stack: list[str] = []
    for comp in (base / path.lstrip("/")).parts[1:]:
        if comp == "..":
            if not stack:
                return None  # escapes the folder
            stack.pop()
        elif comp not in (".", ""):
            stack.append(comp)
    rel = "/".join(stack)
    if path.endswith("/") or rel not in pages:
        for index in ("index.html", "index.htm"):
            cand = f"{rel}/{index}" if rel else index
            if cand in pages:
                return pages[cand]
        return None
    return pages[rel]


def load_html_folder(path: str | os.PathLike, *, domain: str | None = None) -> Corpus:
    """Build a :class:`Corpus` from every HTML file under ``path`` (see the module docstring).

    Raises ``FileNotFoundError`` when ``path`` is not a folder and
    :class:`CorpusFormatError` when it holds no ``.html`` / ``.htm`` file.
    """
    root = Path(path).expanduser()
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: not a folder of HTML files")
    rels: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for fn in filenames:
            if fn.lower().endswith(HTML_SUFFIXES):
                rels.append((Path(dirpath) / fn).relative_to(root).as_posix())
    rels.sort()
    if not rels:
        raise CorpusFormatError(f"{root}: no .html or .htm files found")
    pages = {r: i for i, r in enumerate(rels)}
    parsed = []
    for r in rels:
        try:
            raw = (root / r).read_bytes()
        except OSError as e:
            raise CorpusFormatError(f"{root / r}: unreadable ({e})") from None
        parsed.append(_parse(decode_html(raw)))
    titles = [t or PurePosixPath(r).stem for (t, _, _, _), r in zip(parsed, rels)]
    counts: dict[str, int] = {}
    for t in titles:
        counts[t] = counts.get(t, 0) + 1
    titles = [t if counts[t] == 1 else f"{t} ({r})" for t, r in zip(titles, rels)]
    b = CorpusBuilder(name=f"html:{root.name}", keep_text=True, meta={
        "source": f"HTML folder {root}",
        "page_paths": rels,
        "domain_definition": (f"all pages in {domain!r}" if domain else
                              "first path component of each file (the host folder of a mirror); "
                              f"files at the top level are in {root.name!r}"),
        "anchor_definition": "the link's text (or the alt text of an image inside the link)",
        "context_definition": "150 characters each side of the anchor in the page's visible text",
    })
    for (_, text, _, _), r, t in zip(parsed, rels, titles):
        dom = domain or (r.split("/", 1)[0] if "/" in r else root.name)
        b.add_page(t, text, domain=dom)
    for src, ((_, text, links, positions), r) in enumerate(zip(parsed, rels)):
        seen: set[int] = set()
        rel = PurePosixPath(r)
        for (href, start, end, anchor), position in zip(links, positions):
            dst = _resolve(href, rel, pages)
            if dst is None or dst == src or dst in seen:
                continue
            seen.add(dst)
            context = surrounding_window(text, start, end) if start >= 0 else ""
            b.add_link(src, dst, anchor=anchor, context=context, position=position)
    return b.build()
