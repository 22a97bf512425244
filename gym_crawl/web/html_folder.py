"""Load a folder of HTML files (a saved or mirrored web site) as a :class:`Corpus`.

Every ``*.html`` / ``*.htm`` file under the folder (recursively, in sorted
relative-path order, which gives the page ids) is a page:

* **title**: the ``<title>`` text, else the file name without extension.
  Titles that repeat get their relative path appended (``"Home (blog/index.html)"``)
  so :meth:`Corpus.page_id` stays unambiguous; ``meta["page_paths"]`` lists
  every page's relative path;
* **text**: the visible text, via :class:`html.parser.HTMLParser` —
  the ``<title>``, ``<script>``, ``<style>``, ``<noscript>``, ``<template>``,
  ``<svg>``, ``<iframe>`` and ``<object>`` contents are skipped, block elements become line breaks,
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

The encoding is taken from a ``<meta charset>`` / ``http-equiv`` declaration
when present, else UTF-8 (undecodable bytes are replaced).
"""
from __future__ import annotations

import os
import re
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

from gym_crawl.corpus.builder import CorpusBuilder, enter_element, surrounding_window
from gym_crawl.corpus.core import Corpus, CorpusFormatError

__all__ = ["load_html_folder", "parse_html"]

HTML_SUFFIXES = (".html", ".htm")
_SKIP = {"script", "style", "noscript", "template", "svg", "iframe", "object"}
_BLOCK = {"p", "div", "br", "li", "ul", "ol", "tr", "td", "th", "table", "h1", "h2", "h3", "h4", "h5", "h6",
          "section", "article", "header", "footer", "nav", "aside", "main", "blockquote", "pre", "hr",
          "dd", "dt", "dl", "figure", "figcaption", "form", "caption", "title", "body", "html"}
_WS = re.compile(r"\s+")
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)


class _Page(HTMLParser):
    """Collects title, visible text and ``(href, start, end, anchor)`` link spans of one document."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.length = 0
        self.skip_depth = 0
        self.in_title = False
        self.title_done = False
        self.title_parts: list[str] = []
        self.links: list[tuple[str, int, int, str]] = []
        # open link: href, start offset, its emitted text pieces, alt texts of images inside it
        self._open: tuple[str, int, list[str], list[str]] | None = None
        #: position of each link in ``links`` (see the module docstring)
        self.positions: list[str] = []
        # open structural elements: (tag, landmark, in_list, in_main) after the element opened
        self._struct: list[tuple[str, str | None, bool, bool]] = []

    # text assembly: single spaces, "\n" at block boundaries, offsets tracked in self.length
    def _emit(self, s: str) -> None:
        s = _WS.sub(" ", s)
        last = self.parts[-1][-1:] if self.parts else "\n"
        if s[:1] == " " and last in (" ", "\n"):
            s = s[1:]
        if s:
            self.parts.append(s)
            self.length += len(s)
            if self._open is not None:
                self._open[2].append(s)

    def _newline(self) -> None:
        if self.parts and self.parts[-1][-1:] != "\n":
            if self.parts[-1][-1:] == " ":
                self.parts[-1] = self.parts[-1][:-1]
                self.length -= 1
                if self._open is not None and self._open[2]:
                    self._open[2][-1] = self._open[2][-1][:-1]
            self.parts.append("\n")
            self.length += 1
            if self._open is not None:
                self._open[2].append(" ")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self.skip_depth += 1
            return
        if self.skip_depth:
            return
        if tag == "title":
            self.in_title = not self.title_done
            return
        if tag in _BLOCK:
            self._newline()
        parent = self._struct[-1][1:] if self._struct else (None, False, False)
        landmark, in_list, in_main, structural = enter_element(tag, dict(attrs).get("role"), *parent)
        if structural:
            self._struct.append((tag, landmark, in_list, in_main))
        if tag == "a":
            self._close_link()
            href = dict(attrs).get("href")
            if href is not None:
                self._open = (href, self.length, [], [])
                landmark, in_list, in_main = self._struct[-1][1:] if self._struct else (None, False, False)
                self.positions.append(landmark or ("list" if in_list else "main" if in_main else "other"))
        elif tag == "img" and self._open is not None:
            alt = dict(attrs).get("alt")
            if alt:
                self._open[3].append(alt)

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skip_depth = max(0, self.skip_depth - 1)
            return
        if self.skip_depth:
            return
        if tag == "title":
            if self.in_title:
                self.title_done = True
            self.in_title = False
            return
        if tag == "a":
            self._close_link()
        for i in range(len(self._struct) - 1, -1, -1):  # close the innermost open element of this tag
            if self._struct[i][0] == tag:
                del self._struct[i:]
                break
        if tag in _BLOCK:
            self._newline()

    def handle_data(self, data: str) -> None:
        if self.skip_depth:
            return
        if self.in_title:
            self.title_parts.append(data)
        else:
            self._emit(data)

    def _close_link(self) -> None:
        if self._open is not None:
            href, start, pieces, alts = self._open
            end = self.length
            if end > start and self.parts and self.parts[-1] == "\n":
                end -= 1  # a block break inside the link is not part of its text
            text = " ".join("".join(pieces).split())
            self.links.append((href, start, max(start, end), text or " ".join(alts)))
            self._open = None

    def result(self) -> tuple[str, str, list[tuple[str, int, int, str]]]:
        self._close_link()
        return " ".join("".join(self.title_parts).split()), "".join(self.parts), self.links


def parse_html(html: str) -> tuple[str, str, list[tuple[str, int, int, str]]]:
    """Parse one document: ``(title, visible_text, [(href, start, end, anchor_text), ...])``.

    ``start:end`` is the anchor's span in ``visible_text`` (empty for image-only links).
    """
    return _parse(html)[:3]


def _parse(html: str) -> tuple[str, str, list[tuple[str, int, int, str]], list[str]]:
    """:func:`parse_html` plus each link's position (see the module docstring)."""
    p = _Page()
    p.feed(html)
    p.close()
    title, text, links = p.result()
    stripped = text.rstrip()  # a trailing break/space; spans are clamped to the stripped text
    links = [(h, min(s, len(stripped)), min(e, len(stripped)), a) for h, s, e, a in links]
    return title, stripped, links, p.positions


def _decode(data: bytes) -> str:
    m = _CHARSET.search(data[:4096])
    enc = m.group(1).decode("ascii", "replace") if m else "utf-8"
    try:
        return data.decode(enc, errors="replace")
    except LookupError:
        return data.decode("utf-8", errors="replace")


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
        parsed.append(_parse(_decode(raw)))
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
            b.add_link(src, dst, anchor=anchor, context=surrounding_window(text, start, end), position=position)
    return b.build()
