"""MediaWiki dumps, stage 1 of 3: **parse** — bytes of a dump → :class:`ChunkAccumulator` per chunk.

* :class:`SiteInfo` / :func:`read_siteinfo`: the dump's ``<siteinfo>`` header;
* :func:`_byte_blocks`: decompressed blocks of a byte range (plain XML, bz2, multistream bz2);
* :func:`_iter_pages`: ``<page>`` elements of a byte range with ``xml.etree.ElementTree.XMLPullParser``;
* :func:`_handle_page` sorts each page into article / redirect / template bookkeeping / skip and
  :class:`ChunkAccumulator` keeps the articles' bags of words and links in compact arrays;
* :func:`find_multistream_index`, :func:`read_multistream_index`, :func:`plan_chunks`: the cut of a
  multistream dump into chunks (:class:`ParseJob`) that :func:`parse_job` parses in parallel.

Stage 2, :mod:`gym_crawl.corpus.mediawiki_assemble`, merges the chunks into a :class:`Corpus`; stage 3,
:mod:`gym_crawl.corpus.mediawiki_download`, fetches the Simple English Wikipedia dump. The loader
:mod:`gym_crawl.corpus.mediawiki` orchestrates them (its docstring documents the whole pipeline).
"""
from __future__ import annotations

import bz2
import logging
import os
import re
import xml.etree.ElementTree as ET
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

from gym_crawl.corpus.builder import surrounding_window
from gym_crawl.corpus.core import CorpusFormatError
from gym_crawl.corpus.wikitext import WikiSite, parse_wikitext
from gym_crawl.tokenize import tokenize

__all__ = ["MAX_EXAMPLES", "ChunkAccumulator", "ParseJob", "SiteInfo", "find_multistream_index", "is_bz2", "parse_job",
           "plan_chunks", "read_multistream_index", "read_siteinfo"]

logger = logging.getLogger("gym_crawl.corpus.mediawiki")

_BLOCK = 1 << 20
_REDIRECT_TEXT_RE = re.compile(r"\A\s*#redirect\s*:?\s*\[\[([^\]|]+)", re.I)
MAX_EXAMPLES = 5
"""Examples a chunk keeps of each kind of skipped or dropped page (the compile report lists them)."""

# ------------------------------------------------------------------ siteinfo

@dataclass
class SiteInfo:
    """The dump's ``<siteinfo>``: names, base URL, title case rule and namespaces."""

    sitename: str = ""
    dbname: str = ""
    base: str = ""
    generator: str = ""
    case: str = "first-letter"
    namespaces: dict[int, str] = field(default_factory=dict)

    @property
    def host(self) -> str:
        """Host of the base URL (the corpus' single domain)."""
        return urlparse(self.base).hostname or (f"{self.dbname}.local" if self.dbname else "local")

    def site(self, link_namespaces: Iterable[int]) -> WikiSite:
        ns = self.namespaces or {0: "", 6: "File", 10: "Template", 14: "Category"}
        return WikiSite(namespaces=dict(ns), case=self.case, link_namespaces=frozenset(link_namespaces))

    def as_meta(self) -> dict[str, Any]:
        return {"sitename": self.sitename, "dbname": self.dbname, "base": self.base, "generator": self.generator,
                "case": self.case}


def _local(tag: str) -> str:
    return tag[tag.rfind("}") + 1:]


def _siteinfo_from_element(el: ET.Element) -> SiteInfo:
    info = SiteInfo()
    for c in el:
        t = _local(c.tag)
        if t in ("sitename", "dbname", "base", "generator", "case"):
            setattr(info, t, (c.text or "").strip())
        elif t == "namespaces":
            for ns in c:
                try:
                    info.namespaces[int(ns.get("key", ""))] = (ns.text or "").strip()
                except ValueError:
                    continue
    return info


# --------------------------------------------------------------- byte source

@dataclass
class ParseJob:
    """One unit of parsing: a byte range of the dump (whole file, or a run of bz2 streams)."""

    path: str
    start: int
    end: int
    wrap: bool  # the range holds bare <page> elements: wrap them in a root element
    siteinfo: SiteInfo | None
    namespaces: tuple[int, ...]
    keep_text: bool


def is_bz2(path: str | os.PathLike) -> bool:
    """Whether the file at ``path`` starts with the bz2 magic bytes (``BZh``), whatever its name."""
    with open(path, "rb") as f:
        return f.read(3) == b"BZh"


def _byte_blocks(path: str, start: int, end: int) -> Iterator[tuple[bytes, int]]:
    """Decompressed blocks of ``path[start:end]`` with the compressed offset reached.

    Handles plain XML and bz2 (one or many concatenated streams). A bz2 range
    that ends inside a stream raises :class:`CorpusFormatError` (truncated file).
    """
    compressed = is_bz2(path)
    with open(path, "rb") as f:
        f.seek(start)
        pos = start
        dec = bz2.BZ2Decompressor() if compressed else None
        fed = False
        while pos < end:
            raw = f.read(min(_BLOCK, end - pos))
            if not raw:
                break
            pos += len(raw)
            if dec is None:
                yield raw, pos
                continue
            data = raw
            while data:
                if dec.eof:
                    dec = bz2.BZ2Decompressor()
                try:
                    out = dec.decompress(data)
                except OSError as e:
                    raise CorpusFormatError(f"{path}: corrupt bz2 data in the compressed bytes "
                                            f"{pos - len(raw)}..{pos} ({e})") from None
                fed = True
                if out:
                    yield out, pos
                data = dec.unused_data if dec.eof else b""
        if dec is not None and fed and not dec.eof:
            raise CorpusFormatError(f"{path}: truncated bz2 file: the compressed data ends at byte {pos} "
                                    f"inside a bz2 stream (no end-of-stream marker); download it again")


# ----------------------------------------------------------------- XML pages

@dataclass
class _RawPage:
    title: str
    ns: int | None
    page_id: str
    redirect: str | None
    text: str | None


def _page_from_element(el: ET.Element) -> _RawPage:
    title, ns, pid, redirect, text = "", None, "", None, None
    for c in el:
        t = _local(c.tag)
        if t == "title":
            title = c.text or ""
        elif t == "ns":
            try:
                ns = int((c.text or "").strip())
            except ValueError:
                ns = None
        elif t == "id":
            pid = (c.text or "").strip()
        elif t == "redirect":
            redirect = c.get("title") or ""
        elif t == "revision":  # the last revision wins (pages-articles has exactly one)
            text = None
            for r in c:
                if _local(r.tag) == "text":
                    text = r.text
    return _RawPage(title, ns, pid, redirect, text)


def _iter_pages(job: ParseJob, progress: Callable[[int], None] | None = None
                ) -> Iterator[tuple[str, Any]]:
    """Yield ``("siteinfo", SiteInfo)`` and ``("page", _RawPage)`` events of a job's byte range."""
    parser: Any = ET.XMLPullParser(events=("start", "end"))  # its events are (event, Element) pairs
    depth = 0
    root = None
    last = "(before the first page)"
    if job.wrap:
        parser.feed(b"<mediawiki>")
    pos = job.start

    def events() -> Iterator[tuple[str, Any]]:
        nonlocal depth, root, last
        for ev, el in parser.read_events():
            if ev == "start":
                if root is None:
                    root = el
                depth += 1
                continue
            depth -= 1
            if depth != 1:
                continue
            t = _local(el.tag)
            if t == "page":
                page = _page_from_element(el)
                last = f"page {page.title!r} (id {page.page_id})"
                yield "page", page
            elif t == "siteinfo":
                yield "siteinfo", _siteinfo_from_element(el)
            assert root is not None  # the first start event set it
            root.clear()

    def fail(e: ET.ParseError) -> CorpusFormatError:
        line, col = getattr(e, "position", (0, 0))
        return CorpusFormatError(f"{job.path}: malformed XML at line {line}, column {col} of the "
                                 f"{'chunk starting at compressed byte ' + str(job.start) if job.wrap else 'dump'}"
                                 f" (compressed bytes read: {pos}; last good element: {last}): {e}")

    try:
        for block, pos in _byte_blocks(job.path, job.start, job.end):
            parser.feed(block)
            yield from events()
            if progress is not None:
                progress(pos)
        if job.wrap:
            yield from events()
            if depth > 0:  # the last chunk of a dump brings its own </mediawiki>
                parser.feed(b"</mediawiki>")
        parser.close()
        yield from events()
    except ET.ParseError as e:
        if "no element found" in str(e):
            raise CorpusFormatError(f"{job.path}: XML ends before the document is complete (truncated file? "
                                    f"last good element: {last})") from None
        raise fail(e) from None
    except CorpusFormatError as e:
        raise CorpusFormatError(f"{e} (last good element: {last})") from None


# -------------------------------------------------------------- accumulator

class ChunkAccumulator:
    """Pages and links of one parsed chunk, in compact arrays (no per-link Python objects).

    Word ids and link-target ids are local to the chunk (``words``, ``keys``);
    :func:`assemble_corpus` merges chunks in order. Link targets are full titles
    (resolved against page titles and redirects at assembly).
    """

    def __init__(self, keep_text: bool = True):
        self.keep_text = keep_text
        self.words: list[str] = []
        self._word: dict[str, int] = {}
        self.keys: list[str] = []
        self._key: dict[str, int] = {}
        self.titles: list[str] = []
        self.texts: list[str] = []
        self.categories: list[list[str]] = []
        self.templates: list[list[str]] = []
        self.magic = bytearray()
        self.bag_ptr, self.bag_terms, self.bag_counts = array("q", [0]), array("i"), array("i")
        self.link_src, self.link_key = array("i"), array("i")
        self.anchor_ptr, self.anchor_terms = array("q", [0]), array("i")
        self.ctx_ptr, self.ctx_terms = array("q", [0]), array("i")
        self.redirects: list[tuple[str, str]] = []
        self.template_redirects: list[tuple[str, str]] = []
        self.disambig_templates: list[str] = []
        self.stats: Counter = Counter()
        self.examples: dict[str, list[str]] = {}
        self.siteinfo: SiteInfo | None = None

    def _ids(self, tokens: Iterable[str]) -> list[int]:
        word, out = self._word, []
        for t in tokens:
            i = word.get(t)
            if i is None:
                i = word[t] = len(self.words)
                self.words.append(t)
            out.append(i)
        return out

    def _key_id(self, key: str) -> int:
        i = self._key.get(key)
        if i is None:
            i = self._key[key] = len(self.keys)
            self.keys.append(key)
        return i

    def note(self, what: str, example: str, n: int = 1) -> None:
        """Count one skip/drop of kind ``what`` and keep a few examples."""
        self.stats[what] += n
        ex = self.examples.setdefault(what, [])
        if len(ex) < MAX_EXAMPLES:
            ex.append(example)
        logger.debug("%s: %s", what, example)

    def add_article(self, title: str, text: str, links: Sequence[tuple[str, int, int]],
                    categories: Sequence[str] = (), templates: Sequence[str] = (), magic: bool = False,
                    dedupe: bool = True) -> None:
        """Add a page: its plain ``text`` and its links ``(target title, start, end)``.

        ``text[start:end]`` is the anchor; ``start < 0`` means no anchor in the
        text (the anchor is then the target title and the context empty).
        Self links and (if ``dedupe``) repeated targets are dropped here and counted.
        """
        page = len(self.titles)
        self.titles.append(title)
        if self.keep_text:
            self.texts.append(text)
        self.categories.append(list(categories))
        self.templates.append(sorted(set(templates)))
        self.magic.append(1 if magic else 0)
        cnt = Counter(self._ids(tokenize(text)))
        self.bag_terms.extend(cnt.keys())
        self.bag_counts.extend(cnt.values())
        self.bag_ptr.append(len(self.bag_terms))
        seen: set[str] = set()
        for key, s, e in links:
            if not key or key == title:
                self.stats["self_links"] += 1
                continue
            if dedupe:
                if key in seen:
                    self.stats["duplicate_links"] += 1
                    continue
                seen.add(key)
            self.link_src.append(page)
            self.link_key.append(self._key_id(key))
            if s >= 0:
                anchor, ctx = text[s:e], surrounding_window(text, s, e)
            else:
                anchor, ctx = key, ""
            self.anchor_terms.extend(self._ids(tokenize(anchor)))
            self.anchor_ptr.append(len(self.anchor_terms))
            self.ctx_terms.extend(self._ids(tokenize(ctx)))
            self.ctx_ptr.append(len(self.ctx_terms))


# -------------------------------------------------------------- chunk parse

def _handle_page(acc: ChunkAccumulator, p: _RawPage, site: WikiSite, info: SiteInfo | None,
                 namespaces: frozenset[int]) -> None:
    """Sort one ``<page>`` into article / redirect / template bookkeeping / skip."""
    acc.stats["pages_seen"] += 1
    label = f"{p.title!r} (id {p.page_id})"
    if p.ns is None or (info is not None and info.namespaces and p.ns not in info.namespaces):
        acc.note("unknown_namespace", f"{label} ns={p.ns}")
        return
    acc.stats[f"ns_{p.ns}"] += 1
    text = p.text or ""
    redirect = p.redirect
    if redirect is None and text[:40].lstrip()[:1] == "#":
        m = _REDIRECT_TEXT_RE.match(text)
        if m:
            redirect = m.group(1)
    if p.ns == 10:  # templates: which ones mark disambiguation pages
        name = site.split_title(p.title)[1]
        if redirect is not None:
            acc.template_redirects.append((name, site.split_title(site.normalize(redirect))[1]))
        elif "__DISAMBIG__" in text:
            acc.disambig_templates.append(name)
    if p.ns not in namespaces:
        acc.stats["skipped_other_namespace"] += 1
        return
    if redirect is not None:
        acc.stats["redirect_pages"] += 1
        acc.redirects.append((p.title, site.normalize(redirect)))
        return
    if not text.strip():
        acc.note("empty_text", label)
        return
    parsed = parse_wikitext(text, site)
    for k, v in parsed.counts.items():
        if v:
            acc.stats[f"links_{k}"] += v
    acc.stats["links_parsed"] += len(parsed.links)
    if not parsed.text.strip():
        acc.note("empty_rendered_text", label)
    acc.add_article(p.title, parsed.text, parsed.links, parsed.categories, parsed.templates,
                    parsed.disambig_magic)


def parse_job(job: ParseJob, progress: Callable[[int], None] | None = None) -> ChunkAccumulator:
    """Parse one byte range into a :class:`ChunkAccumulator` (runs in worker processes)."""
    acc = ChunkAccumulator(keep_text=job.keep_text)
    info = job.siteinfo
    namespaces = frozenset(job.namespaces)
    site = info.site(namespaces) if info is not None else SiteInfo().site(namespaces)
    for kind, obj in _iter_pages(job, progress):
        if kind == "siteinfo":
            info = acc.siteinfo = obj
            site = info.site(namespaces)
        else:
            _handle_page(acc, obj, site, info, namespaces)
    acc.siteinfo = info
    return acc


# ------------------------------------------------------------ multistream

def find_multistream_index(path: str | os.PathLike) -> Path | None:
    """The ``…-multistream-index.txt[.bz2]`` file beside a multistream dump, if any."""
    path = Path(path)
    name = path.name
    for suffix in (".xml.bz2", ".xml"):
        if name.endswith(suffix):
            stem = name[: -len(suffix)]
            for cand in (f"{stem}-index.txt.bz2", f"{stem}-index.txt"):
                if (path.parent / cand).is_file():
                    return path.parent / cand
    return None


def read_multistream_index(index: str | os.PathLike) -> np.ndarray:
    """Sorted unique stream start offsets from a multistream index (``offset:page_id:title`` lines)."""
    index = Path(index)
    opener = bz2.open if is_bz2(index) else open
    offsets = array("q")
    try:
        with opener(index, "rt", encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                off, sep, _ = line.partition(":")
                if not sep or not off.isdigit():
                    raise CorpusFormatError(f"{index}: line {lineno} is not 'offset:page_id:title': {line[:80]!r}")
                offsets.append(int(off))
    except (OSError, EOFError) as e:
        raise CorpusFormatError(f"{index}: unreadable multistream index ({e})") from None
    return np.unique(np.frombuffer(offsets, dtype=np.int64))


def plan_chunks(path: Path, offsets: np.ndarray, n_chunks: int) -> list[tuple[int, int]]:
    """Cut ``[offsets[0], filesize)`` at stream starts into about ``n_chunks`` byte-balanced ranges."""
    size = path.stat().st_size
    if len(offsets) == 0 or offsets[0] <= 0 or offsets[-1] >= size:
        raise CorpusFormatError(f"{path}: multistream index offsets do not fit the dump "
                                f"(first {offsets[:1].tolist()}, last {offsets[-1:].tolist()}, size {size})")
    targets = np.linspace(offsets[0], size, n_chunks + 1)[1:-1]
    cuts = np.unique(offsets[np.clip(np.searchsorted(offsets, targets), 0, len(offsets) - 1)])
    edges = np.unique(np.concatenate([[offsets[0]], cuts, [size]]))
    with open(path, "rb") as f:
        for off in edges[:-1]:
            f.seek(int(off))
            if f.read(3) != b"BZh":
                raise CorpusFormatError(f"{path}: the multistream index points at byte {int(off)}, "
                                        f"which is not the start of a bz2 stream (index from another dump?)")
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]


def read_siteinfo(path: str | os.PathLike, end: int | None = None) -> SiteInfo:
    """Parse only the ``<siteinfo>`` header of a dump (stops as soon as it is read)."""
    path = Path(path)
    end = path.stat().st_size if end is None else end
    job = ParseJob(str(path), 0, end, wrap=False, siteinfo=None, namespaces=(0,), keep_text=False)
    try:
        for kind, obj in _iter_pages(job):
            return obj if kind == "siteinfo" else SiteInfo()
    except CorpusFormatError:
        if end == path.stat().st_size:
            raise
        # a header stream alone is not a complete document: no <siteinfo> in it
    return SiteInfo()


