"""The columnar, memory-mappable :class:`Corpus` every loader produces.

A corpus is a web the crawler walks: pages and directed links, stored as flat
numpy arrays (CSR layouts) so that a 1M-page web costs a few hundred MB and
several processes can share one copy through ``np.load(mmap_mode="r")``.

Arrays (``n`` pages, ``m`` links, ``V`` vocabulary words):

============================  ==========  =====================================================
name                          dtype       meaning
============================  ==========  =====================================================
``text_ptr`` (n+1,)           int64       CSR row pointer of each page's bag of words
``text_terms``                int32       word ids (sorted, unique within a page: checked)
``text_counts``               int32       occurrences of each word in the page (>= 1)
``title_ptr`` (n+1,)          int64       CSR pointer of each page's title tokens (= URL text)
``title_terms``               int32       word ids of title tokens (in order, repeats kept)
``link_ptr`` (n+1,)           int64       CSR pointer of out-links of each page
``link_dst`` (m,)             int32       target page of each link
``anchor_ptr`` (m+1,)         int64       CSR pointer of each link's anchor-text tokens
``anchor_terms``              int32       word ids
``context_ptr`` (m+1,)        int64       CSR pointer of each link's surrounding-text tokens
``context_terms``             int32       word ids (window of 150 characters each side)
``page_domain`` (n,)          int32       domain (web site) id of each page
``label_ptr`` (n+1,)          int64       CSR pointer of each page's labels (categories)
``label_ids``                 int32       label ids; label names are hierarchical
                                          (``subject.Science.Biology``)
============================  ==========  =====================================================

String tables (UTF-8 blob + offsets): ``titles`` (n), ``vocab`` (V), ``domains``,
``labels``; optionally ``texts`` (n, the cleaned plain text, kept by loaders
that have it, used only for inspection and tests — never by the env) and ``urls`` (n, the pages'
canonical URLs, kept by the web loaders such as WARC archives).

Optional per-link column ``link_position`` (m,) int8: where each link sits in its source page's HTML, an index
into :data:`LINK_POSITIONS` (``nav``, ``header``, ``footer``, ``aside``, ``list``, ``main``, ``other``) or -1
(unknown), kept by the HTML loaders (WARC archives, live webs, HTML folders); ``None`` on corpora without HTML.
"""
from __future__ import annotations

import hashlib
import json
import mmap as _mmap
import os
import shutil
import weakref
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from gym_crawl._io import (
    FileCheckError,
    atomic_write_json,
    clean_orphans,
    file_digest,
    load_npy,
    partial_dir,
    replace_dir,
    save_npy,
    seal,
    seal_problem,
    verify_files,
    write_stamp,
)
from gym_crawl.tokenize import tokenize

__all__ = ["Corpus", "CorpusBuilder", "StringTable", "CorpusFormatError", "FORMAT_VERSION", "LINK_POSITIONS",
           "check_corpus_destination", "csr_from_lists", "links_in_target_order", "seal_corpus_folder",
           "stored_ranges"]

FORMAT_NAME = "gym_crawl.corpus"
FORMAT_VERSION = 1
_MANIFEST_KEYS = frozenset({"format", "format_version", "counts", "files", "ranges", "meta"})


class CorpusFormatError(ValueError):
    """A corpus directory or array set is missing, truncated or inconsistent."""


class StringTable:
    """An immutable table of strings stored as one UTF-8 blob + int64 offsets.

    ``table[i]`` decodes one string; ``table.index(s)`` maps a string back to its first position
    (:mod:`gym_crawl.corpus.string_index`, compiled): a table of up to ``SCAN_MIN`` strings through a sorted
    array of 64-bit hashes built at its first lookup (16 bytes per string, where a dict of Python strings cost
    ≈ 170 — 56 MB per process for the 323k titles), checking candidates by their bytes; a larger table (the
    titles of a 10^7-page web) by a scan of its offsets, building nothing, until it has scanned for
    ``SCANS_BEFORE_INDEX`` different strings — then the index, which by then costs less than the scans would.
    The answers of the scans are remembered (at most ``SCAN_MEMO`` strings: the same seed looked up by every env
    of a batch is scanned for once).
    """

    __slots__ = ("_hash_order", "_hashes", "_memo", "_scans", "blob", "offsets")

    #: tables of at most this many strings get their hash index at the first lookup
    SCAN_MIN = 1 << 16
    #: a larger table is scanned this many times before its hash index is built
    SCANS_BEFORE_INDEX = 64
    #: strings whose scanned positions are remembered
    SCAN_MEMO = 1024

    def __init__(self, blob: np.ndarray, offsets: np.ndarray):
        self.blob = blob
        self.offsets = offsets
        self._hashes: np.ndarray | None = None
        self._hash_order: np.ndarray | None = None
        self._scans = 0
        self._memo: dict[str, int] = {}

    @classmethod
    def from_strings(cls, strings: Iterable[str]) -> StringTable:
        encoded = [s.encode("utf-8") for s in strings]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        if encoded:
            offsets[1:] = np.cumsum([len(b) for b in encoded])
        blob = np.frombuffer(b"".join(encoded), dtype=np.uint8).copy()
        return cls(blob, offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i: int) -> str:
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"string index {i} out of range [0, {n})")
        i %= n
        return bytes(self.blob[self.offsets[i]:self.offsets[i + 1]]).decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        data = bytes(self.blob)
        off = self.offsets.tolist()
        for a, b in zip(off[:-1], off[1:]):
            yield data[a:b].decode("utf-8")

    def tolist(self) -> list[str]:
        return list(self)

    def index(self, s: str) -> int:
        """Position of ``s`` (its first, if repeated); raises ``KeyError`` naming the missing string."""
        from gym_crawl.corpus import string_index as SI

        key = np.frombuffer(s.encode("utf-8"), np.uint8)
        blob, off = np.asarray(self.blob), np.asarray(self.offsets)
        i = self._memo.get(s, -2) if self._hashes is None else -2
        if i != -2:
            pass  # scanned for before
        elif self._hashes is None and len(self) > self.SCAN_MIN and self._scans < self.SCANS_BEFORE_INDEX:
            self._scans += 1
            i = int(SI.scan(blob, off, key))
            if len(self._memo) >= self.SCAN_MEMO:
                self._memo.clear()
            self._memo[s] = i
        else:
            if self._hashes is None:
                h = SI.hashes(blob, off)
                order = np.argsort(h, kind="stable")  # equal hashes keep their positions' order: first match = first
                self._hashes, self._hash_order = h[order], order
                self._memo.clear()
            hk = SI.hash_bytes(key)
            hash_order = self._hash_order
            assert hash_order is not None  # set with _hashes
            lo = int(np.searchsorted(self._hashes, hk, "left"))
            hi = int(np.searchsorted(self._hashes, hk, "right"))
            i = -1
            for j in range(lo, hi):
                c = int(hash_order[j])
                if SI.same_bytes(blob, off[c], off[c + 1], key):
                    i = c
                    break
        if i < 0:
            raise KeyError(s)
        return i

    def get(self, s: str, default: int = -1) -> int:
        try:
            return self.index(s)
        except KeyError:
            return default

    def __contains__(self, s: object) -> bool:
        return isinstance(s, str) and self.get(s) >= 0


class StringColumn(Protocol):
    """The read interface of a corpus' string columns (titles, vocabulary, domains): a saved corpus'
    immutable :class:`StringTable`, or a table a live web grows as it fetches."""

    def __len__(self) -> int: ...

    def __getitem__(self, i: int) -> str: ...

    def __iter__(self) -> Iterator[str]: ...

    def __contains__(self, s: object) -> bool: ...

    def tolist(self) -> list[str]: ...

    def index(self, s: str) -> int: ...

    def get(self, s: str, default: int = -1) -> int: ...


def csr_from_lists(rows: Sequence[Sequence[int]], dtype: Any = np.int32) -> tuple[np.ndarray, np.ndarray]:
    """Build ``(ptr, values)`` CSR arrays from a list of integer lists."""
    ptr = np.zeros(len(rows) + 1, dtype=np.int64)
    if rows:
        ptr[1:] = np.cumsum([len(r) for r in rows])
    vals = np.fromiter((v for r in rows for v in r), dtype=dtype, count=int(ptr[-1]))
    return ptr, vals


def bag_problem(ptr: np.ndarray, terms: np.ndarray, counts: np.ndarray, block: int = 1 << 22) -> str | None:
    """What breaks the bag-of-words layout of ``(ptr, terms, counts)`` — each page's word ids strictly increasing
    (each distinct word once, its repeats in ``counts``) and every count >= 1 — or ``None``. A word listed twice
    would count twice in a document frequency and make a tf-idf norm too small (cosines above 1). Scanned in
    blocks of ``block`` entries (a memory-mapped web is not read whole into memory)."""
    n_vals = len(terms)
    for a in range(0, n_vals, block):
        b = min(n_vals, a + block + 1)  # one entry of overlap: a pair across the block boundary is checked
        c = np.asarray(counts[a:min(n_vals, a + block)])
        if len(c) and int(c.min()) < 1:
            at = a + int(np.argmin(c))
            page = int(np.searchsorted(ptr, at, side="right")) - 1
            return f"page {page} has a word count of {int(c.min())} (counts must be >= 1)"
        t = np.asarray(terms[a:b])
        bad = np.flatnonzero(t[1:] <= t[:-1]) + a + 1  # entries not above the one before them
        if len(bad):
            starts = np.asarray(ptr)  # a page's first entry may be anything
            first = np.searchsorted(starts, bad, side="left")
            inner = bad[(first >= len(starts)) | (starts[np.minimum(first, len(starts) - 1)] != bad)]
            if len(inner):
                page = int(np.searchsorted(starts, inner[0], side="right")) - 1
                return (f"page {page} lists word id {int(terms[inner[0]])} after {int(terms[inner[0] - 1])} "
                        f"(a page's word ids must be strictly increasing: each distinct word once, with its count)")
    return None


def _ranges_well_formed(stored: dict[str, Any]) -> bool:
    """Whether a manifest's ``"ranges"`` name every id and pointer array, with integer bounds for the id arrays."""
    return set(_ID_BOUNDS) | set(_PTR_NAMES) <= set(stored) and all(
        isinstance(stored[k], dict) for k in (*_ID_BOUNDS, *_PTR_NAMES)) and all(
        isinstance(stored[k].get("min"), int) and isinstance(stored[k].get("max"), int) for k in _ID_BOUNDS)


def links_in_target_order(link_ptr: np.ndarray, link_dst: np.ndarray, block: int = 1 << 22) -> bool:
    """Whether every page's links ``link_dst[link_ptr[p]:link_ptr[p + 1]]`` are stored in ascending target page
    (equal targets adjacent): a scan of the links block by block (no (n_links,) temporary); a descent is allowed only
    where a page's links start."""
    m = len(link_dst)
    for lo in range(0, max(0, m - 1), block):
        hi = min(m, lo + block + 1)
        d = np.asarray(link_dst[lo:hi])
        down = np.flatnonzero(d[1:] < d[:-1]) + (lo + 1)  # links whose target is below the previous link's
        if len(down):
            at = np.searchsorted(link_ptr, down)
            if np.any(at >= len(link_ptr)) or np.any(link_ptr[np.minimum(at, len(link_ptr) - 1)] != down):
                return False
    return True


_ARRAY_SPEC: dict[str, Any] = {
    "text_ptr": np.int64, "text_terms": np.int32, "text_counts": np.int32,
    "title_ptr": np.int64, "title_terms": np.int32,
    "link_ptr": np.int64, "link_dst": np.int32,
    "anchor_ptr": np.int64, "anchor_terms": np.int32,
    "context_ptr": np.int64, "context_terms": np.int32,
    "page_domain": np.int32,
    "label_ptr": np.int64, "label_ids": np.int32,
}
_TABLES = ("titles", "vocab", "domains", "labels")
_OPTIONAL_TABLES = ("texts", "urls")
#: optional per-link arrays (saved when present; a saved corpus without the file loads them as ``None``)
_OPTIONAL_ARRAYS: dict[str, Any] = {"link_position": np.int8}
LINK_POSITIONS = ("nav", "header", "footer", "aside", "list", "main", "other")
"""Where a link sits in its page (the ``link_position`` codes index this tuple; -1 = unknown)."""
#: the id arrays whose value ranges and the pointer arrays whose monotonicity :meth:`Corpus.validate` checks
_ID_BOUNDS = ("link_dst", "text_terms", "title_terms", "anchor_terms", "context_terms", "page_domain", "label_ids")
_PTR_NAMES = ("text_ptr", "title_ptr", "link_ptr", "anchor_ptr", "context_ptr", "label_ptr")


def check_corpus_destination(path: str | os.PathLike) -> None:
    """Raise ``FileExistsError`` naming ``path`` unless a corpus may be saved there: it does not exist, is an
    empty folder, or holds a saved corpus — a ``manifest.json`` (valid or damaged: a broken cache is rebuilt in
    place), or only a corpus' own files (``.npy`` arrays and JSON) — never a file or a folder of other files,
    which saving would replace."""
    p = Path(path)
    if not p.exists() and not p.is_symlink():
        return
    if not p.is_dir():
        raise FileExistsError(f"{p}: exists and is not a folder; a corpus is saved as a folder — give a new name")
    if (p / "manifest.json").is_file():
        return
    others = [c.name for c in p.iterdir() if not (c.is_file() and c.suffix in (".npy", ".json"))]
    if others:
        raise FileExistsError(f"{p}: the folder holds other files ({', '.join(sorted(others)[:3])}"
                              f"{', …' if len(others) > 3 else ''}; it is not a saved corpus); saving would replace "
                              "them — give an empty or new folder")


def stored_ranges(stats: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The ``"ranges"`` a manifest records (what :meth:`Corpus.validate` checks: each id array's length, min and
    max, each pointer array's order; whether each page's links ascend by target, from ``link_dst``'s
    ``"rows_sorted"`` where known), from per-array statistics ``{name: {"len", "min", "max", "nondecreasing"}}``
    (``min`` 0 and ``max`` -1 for an empty array) gathered while the arrays were written block by block
    (:class:`~gym_crawl.corpus.writer.CorpusWriter`) — the same as :meth:`Corpus.save` records by scanning them."""
    out: dict[str, Any] = {}
    for name in (*_ID_BOUNDS, *(n for n in _OPTIONAL_ARRAYS if n in stats)):
        s = stats[name]
        out[name] = {"len": int(s["len"]), "min": int(s["min"]), "max": int(s["max"])}
    for name in _PTR_NAMES:
        out[name] = {"nondecreasing": bool(stats[name]["nondecreasing"])}
    by_target = stats["link_dst"].get("rows_sorted")
    if by_target is not None:  # each page's links written as a row: whether they ascend by target
        out["link_order"] = {"by_target": bool(by_target)}
    return out


def seal_corpus_folder(tmp: Path, path: Path, files: dict[str, Any], ranges: dict[str, Any],
                       meta: dict[str, Any]) -> str:
    """Finish a corpus written into the temporary folder ``tmp`` (every file listed in ``files``: name →
    size, sha256, sampled sha256, shape, dtype): its sealed ``manifest.json`` (written last), the stamp that the
    files were checked, then ``tmp`` renamed to ``path`` (:func:`gym_crawl._io.replace_dir`), so a corpus is
    accepted only whole. Returns the manifest's sha256 (the corpus' ``checksum``)."""
    def rows(table: str) -> int:
        return int(files[f"{table}.npy"]["shape"][0]) - 1

    manifest = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "counts": {"pages": rows("link_ptr"), "links": int(files["link_dst.npy"]["shape"][0]),
                   "words": rows("vocab.offsets"), "domains": rows("domains.offsets"),
                   "labels": rows("labels.offsets")},
        "files": files,
        "ranges": ranges,
        "meta": meta,
    }
    atomic_write_json(tmp / "manifest.json", seal(manifest))
    checksum = _sha256_bytes((tmp / "manifest.json").read_bytes())
    write_stamp(tmp, checksum, files)  # renaming the folder changes no file's identity
    replace_dir(tmp, path)
    return checksum


@dataclass(eq=False)
class Corpus:
    """A web graph with text, as columnar arrays. See the module docstring for the layout.

    Build one with a loader (:func:`gym_crawl.corpus.load_corpus`), with
    :meth:`from_networkx`, with :class:`gym_crawl.corpus.builder.CorpusBuilder`,
    or directly from arrays (validated on construction).
    """

    text_ptr: np.ndarray
    text_terms: np.ndarray
    text_counts: np.ndarray
    title_ptr: np.ndarray
    title_terms: np.ndarray
    link_ptr: np.ndarray
    link_dst: np.ndarray
    anchor_ptr: np.ndarray
    anchor_terms: np.ndarray
    context_ptr: np.ndarray
    context_terms: np.ndarray
    page_domain: np.ndarray
    label_ptr: np.ndarray
    label_ids: np.ndarray
    titles: StringColumn
    vocab: StringColumn
    domains: StringColumn
    labels: StringTable
    texts: StringTable | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    checksum: str | None = field(default=None, repr=False)
    """sha256 of the saved directory's ``manifest.json`` (which lists every file's sha256): the identity
    of the saved content, set by :meth:`save` / :meth:`load`; ``None`` for an unsaved corpus."""
    urls: StringTable | None = None
    """the pages' canonical URLs (web corpora: WARC archives, the live web), else ``None``"""
    link_position: np.ndarray | None = None
    """(m,) int8 position code of each link in its page (:data:`LINK_POSITIONS` index, -1 unknown), else ``None``"""

    def __post_init__(self) -> None:
        self.validate()

    # ------------------------------------------------------------ pickling
    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle (and ``copy.deepcopy``, cloudpickle) a corpus memory-mapped from its saved directory
        **by reference**: its path and checksum, so a vector-env worker re-opens the memory map (sharing
        the OS page cache) instead of receiving a copy of every array; unpickling checks the directory
        still holds the same content. A corpus in memory (never saved, or saved but not re-opened)
        pickles by value."""
        if self.path is not None and self.checksum is not None and self._as_loaded():
            return (_open_by_reference, (str(self.path), self.checksum))
        state = {f: getattr(self, f) for f in self.__dataclass_fields__}
        return (_from_state, (state,))

    # ------------------------------------------------------------------ sizes
    def _as_loaded(self) -> bool:
        """Whether every array and string table is still the memory-mapped one :meth:`load` opened (a
        ``dataclasses.replace`` copy or an edited field is not, and then pickles by value)."""
        loaded = self.__dict__.get("_loaded")
        if not loaded:
            return False
        return _is_mmapped(self.link_ptr) and all(getattr(self, n) is a for n, a in loaded.items())

    def __repr__(self) -> str:
        """One line: name, sizes and where it is stored (the arrays are memory-mapped columns, not shown)."""
        where = f", path={str(self.path)!r}" if self.path is not None else ""
        return (f"Corpus({self.name!r}: {self.n_pages:,} pages, {self.n_links:,} links, {self.n_words:,} words, "
                f"{len(self.domains):,} domains, {len(self.labels):,} labels{where})")

    @property
    def n_pages(self) -> int:
        return len(self.link_ptr) - 1

    @property
    def n_links(self) -> int:
        return len(self.link_dst)

    @property
    def n_words(self) -> int:
        return len(self.vocab)

    @property
    def name(self) -> str:
        return str(self.meta.get("name", "corpus"))

    def out_degree(self) -> np.ndarray:
        """(n,) int64 out-degree of each page."""
        return np.diff(self.link_ptr)

    def in_degree(self) -> np.ndarray:
        """(n,) int64 in-degree of each page."""
        return np.bincount(self.link_dst, minlength=self.n_pages)

    def outlinks(self, page: int) -> tuple[int, int]:
        """Half-open range ``[a, b)`` of link ids leaving ``page``."""
        return int(self.link_lo[page]), int(self.link_hi[page])

    # Per-page ranges. The crawl engine reads a page's links as ``link_lo[p]:link_hi[p]`` and its text as
    # ``text_lo[p]:text_hi[p]``, never through ``ptr[p + 1]``: a static corpus gives zero-copy views of its
    # CSR pointers, a web discovered while crawling (:class:`gym_crawl.web.LiveWeb`) stores rows in
    # fetch order, not in page-id order.
    @property
    def link_lo(self) -> np.ndarray:
        """(n,) int64 first link id of each page (a view of ``link_ptr[:-1]``)."""
        return self.link_ptr[:-1]

    @property
    def link_hi(self) -> np.ndarray:
        """(n,) int64 end (exclusive) of each page's link range (a view of ``link_ptr[1:]``)."""
        return self.link_ptr[1:]

    @property
    def text_lo(self) -> np.ndarray:
        """(n,) int64 start of each page's bag of words in ``text_terms``/``text_counts``."""
        return self.text_ptr[:-1]

    @property
    def text_hi(self) -> np.ndarray:
        """(n,) int64 end (exclusive) of each page's bag of words."""
        return self.text_ptr[1:]

    def max_out_degree(self) -> int:
        """The largest number of out-links a page has (a web that grows while it is crawled: may have): the size
        of the crawl state's per-fetch work buffers."""
        ptr, n, best = self.link_ptr, self.n_pages, 0
        for a in range(0, n, 1 << 20):  # in chunks: no (n_pages,) temporary on a 10^8-page web
            best = max(best, int(np.diff(ptr[a:min(n, a + (1 << 20)) + 1]).max()))
        return best

    #: arrays a crawl reads at random for each page it fetches (its link range, links, domain, labels)
    CRAWL_ARRAYS = ("link_ptr", "link_dst", "page_domain", "label_ptr", "label_ids")
    #: :meth:`populate_crawl_arrays` maps them only when they hold more bytes than this (smaller: few, cheap faults)
    POPULATE_MIN_BYTES = 64 << 20

    def populate_crawl_arrays(self, budget: int | None = None) -> int:
        """Map the memory-mapped :data:`CRAWL_ARRAYS` into this process' page tables now, once per corpus object
        (:func:`gym_crawl._memory.populate`: the smallest first, within ``budget`` bytes, default a quarter of the
        available memory), when they hold more than :data:`POPULATE_MIN_BYTES`. On a large web nearly every fetch
        reads pages of these files no fetch read before, and each first read is a page fault (several µs: it maps
        a whole page-cache folio); mapped up front, a crawl takes none. The pages stay page cache (file RSS, shared
        by every process mapping the files). Returns the bytes mapped by this call (0: already done, too small,
        not memory-mapped, or a system without the advice). Values are unchanged."""
        if self.__dict__.get("_populated"):
            return 0
        self.__dict__["_populated"] = True
        arrays = [getattr(self, n) for n in self.CRAWL_ARRAYS]
        if sum(int(a.nbytes) for a in arrays) <= self.POPULATE_MIN_BYTES:
            return 0
        from gym_crawl._memory import populate

        return populate(arrays, budget)

    @property
    def n_domain_slots(self) -> int:
        """Size of the per-domain arrays of a crawl (the number of domains; a web that grows: its capacity)."""
        return max(1, len(self.domains))

    def link_src(self) -> np.ndarray:
        """(m,) int32 source page of each link (computed, not stored)."""
        return np.repeat(np.arange(self.n_pages, dtype=np.int32), np.diff(self.link_ptr))

    def url(self, page: int) -> str:
        """A URL for ``page``: its own (``urls``) on web corpora (WARC archives), else
        ``https://<domain>/wiki/<title>``, or ``https://<domain>/p/<id>`` on the
        domains whose URLs carry no title words (``meta["opaque_url_domains"]``, the hard synthetic preset),
        so a displayed URL never shows words the crawler's URL tokens do not have."""
        if self.urls is not None:
            return self.urls[page]
        domain = self.domains[int(self.page_domain[page])]
        if domain in (self.meta.get("opaque_url_domains") or ()):
            return f"https://{domain}/p/{int(page)}"
        return f"https://{domain}/wiki/{self.titles[page].replace(' ', '_')}"

    def page_labels(self, page: int) -> list[str]:
        return [self.labels[int(i)] for i in self.label_ids[self.label_ptr[page]:self.label_ptr[page + 1]]]

    def page_id(self, title: str) -> int:
        """Page id of ``title`` (underscores and spaces are interchangeable), or of a URL on web corpora.

        Raises ``KeyError`` with close matches when the title is unknown.
        """
        for cand in (title, title.replace("_", " "), title.replace(" ", "_")):
            i = self.titles.get(cand)
            if i >= 0:
                return i
        if self.urls is not None and self.urls.get(title) >= 0:
            return self.urls.index(title)
        low = title.lower().replace("_", " ")
        close = [t for t in self.titles if low in t.lower().replace("_", " ")][:5]
        raise KeyError(f"unknown page title {title!r} in corpus {self.name!r}"
                       + (f"; close matches: {close}" if close else ""))

    def word_id(self, word: str) -> int:
        """Vocabulary id of ``word`` or -1."""
        return self.vocab.get(word)

    # ------------------------------------------------------------- validation
    def validate(self, stored: dict[str, Any] | None = None) -> None:  # noqa: C901  (known debt, docs/architecture.md)
        """Check shapes, dtypes, pointer monotonicity and id ranges, and (a corpus built in memory, or a saved one
        whose files are scanned) that each page's bag of words lists a word once (:func:`bag_problem`); raise
        :class:`CorpusFormatError`.

        ``stored``: the ``"ranges"`` a saved manifest recorded (each id array's min/max, each pointer
        array's monotonicity, computed by :meth:`save` over the full arrays). The id ranges and
        monotonicity are then checked from it instead of by scanning the arrays, so opening a
        memory-mapped corpus does not read (and make resident) every page of it; lengths, dtypes and
        pointer endpoints are still checked on the arrays. The files themselves are checked against the
        manifest by :meth:`load` (size, sampled sha256; ``verify=True``: full sha256 and a full scan).
        """
        where = f" (corpus at {self.path})" if self.path else ""
        if stored is not None and not _ranges_well_formed(stored):
            raise CorpusFormatError(f"manifest field 'ranges'{where}: incomplete or malformed; "
                                    f"delete the corpus directory to rebuild it")
        n = len(self.link_ptr) - 1
        for name, dt in _ARRAY_SPEC.items():
            a = getattr(self, name)
            if not isinstance(a, np.ndarray):
                a = np.asarray(a, dtype=dt)
                setattr(self, name, a)
            if a.dtype != np.dtype(dt) or a.ndim != 1:
                raise CorpusFormatError(f"array {name}{where}: expected 1-d {np.dtype(dt)}, got {a.ndim}-d {a.dtype}")
        m = len(self.link_dst)

        def check_ptr(ptr_name: str, rows: int, vals: int) -> None:
            p = getattr(self, ptr_name)
            if len(p) != rows + 1:
                raise CorpusFormatError(f"{ptr_name}{where}: length {len(p)}, expected {rows + 1}")
            if len(p) and (p[0] != 0 or p[-1] != vals):
                raise CorpusFormatError(f"{ptr_name}{where}: must start at 0 and end at {vals}, got {p[0]}..{p[-1]}")
            if stored is not None:
                mono = bool(stored[ptr_name].get("nondecreasing", False))
            else:
                mono = not (len(p) > 1 and np.any(np.diff(p) < 0))
            if not mono:
                raise CorpusFormatError(f"{ptr_name}{where}: not non-decreasing")

        check_ptr("text_ptr", n, len(self.text_terms))
        if len(self.text_counts) != len(self.text_terms):
            raise CorpusFormatError(f"text_counts{where}: length {len(self.text_counts)} != text_terms "
                                    f"{len(self.text_terms)}")
        if stored is None:  # built in memory: its bags are scanned (a saved corpus was scanned when it was built)
            self._check_bags()
        check_ptr("title_ptr", n, len(self.title_terms))
        check_ptr("link_ptr", n, m)
        check_ptr("anchor_ptr", m, len(self.anchor_terms))
        check_ptr("context_ptr", m, len(self.context_terms))
        check_ptr("label_ptr", n, len(self.label_ids))
        if len(self.page_domain) != n:
            raise CorpusFormatError(f"page_domain{where}: length {len(self.page_domain)}, expected {n}")
        if len(self.titles) != n:
            raise CorpusFormatError(f"titles{where}: {len(self.titles)} strings, expected {n}")
        if self.texts is not None and len(self.texts) != n:
            raise CorpusFormatError(f"texts{where}: {len(self.texts)} strings, expected {n}")
        if self.urls is not None and len(self.urls) != n:
            raise CorpusFormatError(f"urls{where}: {len(self.urls)} strings, expected {n}")
        if self.link_position is not None:
            lp = self.link_position
            if not isinstance(lp, np.ndarray):
                lp = self.link_position = np.asarray(lp, np.int8)
            if lp.dtype != np.int8 or lp.ndim != 1 or len(lp) != m:
                raise CorpusFormatError(f"link_position{where}: expected a 1-d int8 array of {m} link codes, got "
                                        f"{lp.ndim}-d {lp.dtype} of length {len(lp)}")
            r = (stored or {}).get("link_position")
            lo, top = (int(r["min"]), int(r["max"])) if isinstance(r, dict) and r.get("len") == m else (
                (int(lp.min()), int(lp.max())) if m else (0, -1))
            if m and (lo < -1 or top >= len(LINK_POSITIONS)):
                raise CorpusFormatError(f"link_position{where}: codes must lie in [-1, {len(LINK_POSITIONS)}) "
                                        f"({LINK_POSITIONS}, -1 unknown), found [{lo}, {top}]")
        bounds = {"link_dst": n, "text_terms": len(self.vocab), "title_terms": len(self.vocab),
                  "anchor_terms": len(self.vocab), "context_terms": len(self.vocab),
                  "page_domain": len(self.domains), "label_ids": len(self.labels)}
        for name, hi in bounds.items():
            a = getattr(self, name)
            if not len(a):
                continue
            if stored is not None:
                r = stored[name]
                if r.get("len") != len(a):
                    raise CorpusFormatError(f"{name}{where}: manifest ranges are for {r.get('len')} values, "
                                            f"the array has {len(a)}")
                lo, top = int(r["min"]), int(r["max"])
            else:
                lo, top = int(a.min()), int(a.max())
            if lo < 0 or top >= hi:
                raise CorpusFormatError(f"{name}{where}: ids must lie in [0, {hi}), found [{lo}, {top}]")

    def _check_bags(self) -> None:
        """Raise :class:`CorpusFormatError` when the pages' bags of words break their layout (:func:`bag_problem`)."""
        problem = bag_problem(self.text_ptr, self.text_terms, self.text_counts)
        if problem is not None:
            where = f" (corpus at {self.path})" if self.path else ""
            raise CorpusFormatError(f"text_terms{where}: {problem}")

    def _ranges(self) -> dict[str, Any]:
        """What :meth:`validate` scans for, as stored in a saved manifest (see ``validate(stored=...)``)."""
        out: dict[str, Any] = {}
        for name in _ID_BOUNDS:
            a = getattr(self, name)
            out[name] = {"len": len(a), "min": int(a.min()) if len(a) else 0, "max": int(a.max()) if len(a) else -1}
        for name in _PTR_NAMES:
            p = getattr(self, name)
            out[name] = {"nondecreasing": not (len(p) > 1 and bool(np.any(np.diff(p) < 0)))}
        lp = self.link_position
        if lp is not None:
            out["link_position"] = {"len": len(lp), "min": int(lp.min()) if len(lp) else 0,
                                    "max": int(lp.max()) if len(lp) else -1}
        out["link_order"] = {"by_target": self.links_by_target}
        return out

    @property
    def links_by_target(self) -> bool:
        """Whether each page's links are stored in ascending target page (ties in link order): a crawl then walks
        a page's targets in page order as they are stored, with no order to keep or sort
        (:func:`gym_crawl.crawl.bundles.link_graph`). Recorded in a saved corpus' manifest (``ranges``) and read from
        it on load; found by one scan of the links (:func:`links_in_target_order`) on a corpus built in memory or
        saved without it, once per corpus object and ``link_dst`` array."""
        hit = self.__dict__.get("_by_target")
        if hit is None or hit[0] is not self.link_dst:
            hit = self.__dict__["_by_target"] = (self.link_dst, links_in_target_order(self.link_ptr, self.link_dst))
        return bool(hit[1])

    # ------------------------------------------------------------ persistence
    def save(self, path: str | os.PathLike) -> Path:
        """Write the corpus as a directory of ``.npy`` files + ``manifest.json``, atomically.

        The directory is written under a temporary ``.partial`` name and renamed into place only when
        complete (under an inter-process lock, so concurrent writers of one path both succeed); the
        manifest (written last, sealed with its own sha256) records every file's size, sha256, sampled
        sha256, shape and dtype, so a half-written or corrupted directory is never accepted; the files
        are stamped as checked (see :meth:`load`), so the first open after a save hashes nothing. Leftover
        ``.partial`` directories of killed writers are removed first. An empty corpus (0 pages) is refused,
        and so is a ``path`` that holds anything but a saved corpus (a file, a folder of other files:
        ``FileExistsError`` naming it) — only a saved corpus is ever replaced.
        """
        if self.n_pages == 0:
            raise CorpusFormatError(f"refusing to save corpus {self.name!r} to {path}: it has 0 pages "
                                    f"(an empty source?)")
        path = Path(path)
        check_corpus_destination(path)
        clean_orphans(path)
        tmp = partial_dir(path)
        try:
            files: dict[str, Any] = {}

            def put(fname: str, arr: np.ndarray) -> None:
                save_npy(tmp / fname, arr)
                files[fname] = {**file_digest(tmp / fname), "shape": list(arr.shape), "dtype": str(arr.dtype)}

            for name in _ARRAY_SPEC:
                put(f"{name}.npy", np.ascontiguousarray(getattr(self, name)))
            for name in _OPTIONAL_ARRAYS:
                if getattr(self, name) is not None:
                    put(f"{name}.npy", np.ascontiguousarray(getattr(self, name)))
            for name in _TABLES + _OPTIONAL_TABLES:
                t = getattr(self, name)
                if t is None:
                    continue
                put(f"{name}.blob.npy", np.ascontiguousarray(t.blob))
                put(f"{name}.offsets.npy", np.ascontiguousarray(t.offsets))
            checksum = seal_corpus_folder(tmp, path, files, self._ranges(), self.meta)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        self.path = path
        self.checksum = checksum
        return path

    @classmethod
    def load(cls, path: str | os.PathLike, mmap: bool = True, verify: bool = False,  # noqa: C901  (known debt, docs/architecture.md)
             share: bool = True) -> Corpus:
        """Open a saved corpus directory.

        Arrays are memory-mapped read-only (``mmap=True``) so processes share
        one copy. The manifest must match its seal (its own sha256). Every file
        is checked against the manifest's full sha256 the first time it is
        opened as it is now — together with a scan of every id array's range and
        every pointer array's order — and the check is stamped beside the
        manifest (``.verified.json``: each file's sha256 with its size, mtime,
        ctime, inode and device), so later opens cost one ``stat`` per file and
        a file written to since is checked again (:func:`gym_crawl._io.verify_files`).
        ``verify=True`` checks every file again regardless of the stamp. Raises
        :class:`CorpusFormatError` naming the file and field at fault.

        ``share=True`` (with ``mmap``): opening the same unchanged files again in this process (same
        manifest, same size/mtime/inode of every file; checked as above) returns the *same* object, so the
        per-corpus memos keyed on it — the text model, the topic scorers and their score tables — exist
        once per process, and ``AsyncVectorEnv(..., context="fork")`` workers started after the parent
        opened it share them. ``share=False``: a new object (its own ``meta``).
        """
        path = Path(path)
        mf = path / "manifest.json"
        if not mf.is_file():
            raise CorpusFormatError(f"{path}: not a corpus directory (no manifest.json; an interrupted save leaves "
                                    "none)")
        try:
            raw = mf.read_bytes()
            manifest = json.loads(raw.decode("utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise CorpusFormatError(f"{mf}: unreadable manifest ({e})") from None
        problem = seal_problem(manifest, _MANIFEST_KEYS)
        if problem is not None:
            raise CorpusFormatError(f"{mf}: {problem}; delete the corpus directory to rebuild it")
        if manifest.get("format") != FORMAT_NAME:
            raise CorpusFormatError(f"{mf}: field 'format' is {manifest.get('format')!r}, expected {FORMAT_NAME!r}")
        if manifest.get("format_version") != FORMAT_VERSION:
            raise CorpusFormatError(f"{mf}: field 'format_version' is {manifest.get('format_version')!r}; "
                                    f"this gym_crawl reads version {FORMAT_VERSION}: rebuild the corpus")
        files = manifest.get("files", {})
        if not isinstance(files, dict):
            raise CorpusFormatError(f"{mf}: field 'files' is not an object; delete the corpus directory to rebuild it")
        checksum = _sha256_bytes(raw)
        try:
            hashed = verify_files(path, files, key=checksum, force=verify)
        except FileCheckError as e:
            raise CorpusFormatError(f"{path / e.file}: {e.problem}; "
                                    "delete the corpus directory to rebuild it") from None

        maps: list[_mmap.mmap] = []

        def get(fname: str) -> np.ndarray:
            spec = files.get(fname)
            if spec is None:
                raise CorpusFormatError(f"{mf}: no entry for {fname}")
            fp = path / fname
            try:
                arr = load_npy(fp, mmap=mmap)
            except (ValueError, OSError, EOFError) as e:
                raise CorpusFormatError(f"{fp}: unreadable or truncated .npy ({e})") from None
            if list(arr.shape) != spec["shape"] or str(arr.dtype) != spec["dtype"]:
                raise CorpusFormatError(f"{fp}: shape/dtype {list(arr.shape)}/{arr.dtype} differ from manifest "
                                        f"{spec['shape']}/{spec['dtype']}")
            m = getattr(arr, "_mmap", None)
            if isinstance(m, _mmap.mmap):
                maps.append(m)
            # a plain ndarray view of the mapping: same shared pages, no np.memmap per-slice overhead
            return np.asarray(arr)

        kw: dict[str, Any] = {name: get(f"{name}.npy") for name in _ARRAY_SPEC}
        for name in _TABLES:
            kw[name] = StringTable(get(f"{name}.blob.npy"), get(f"{name}.offsets.npy"))
        for name in _OPTIONAL_TABLES:
            kw[name] = (StringTable(get(f"{name}.blob.npy"), get(f"{name}.offsets.npy"))
                        if f"{name}.blob.npy" in files else None)
        for name in _OPTIONAL_ARRAYS:  # absent from corpora saved before the column existed: None
            kw[name] = get(f"{name}.npy") if f"{name}.npy" in files else None
        # Files checked just now (first open, verify=True) or an older manifest without ranges: scan every id
        # and pointer array. Files stamped as checked: validate from the manifest's stored ranges (no scan of
        # the arrays: opening a memory-mapped corpus leaves its pages on disk until a crawl reads them).
        c = cls.__new__(cls)
        c.__dict__.update(kw, meta=dict(manifest.get("meta", {})), path=path, checksum=checksum)
        stored = manifest.get("ranges")
        scanned = bool(hashed) or verify or not isinstance(stored, dict)
        if isinstance(stored, dict) and isinstance(stored.get("link_order"), dict) and not scanned:
            c.__dict__["_by_target"] = (c.link_dst, bool(stored["link_order"].get("by_target", False)))
        if scanned:
            actual = c._ranges()  # one scan of every id and pointer array
            if isinstance(stored, dict) and "link_order" not in stored:  # saved before the order was recorded
                del actual["link_order"]
            c.validate(stored=actual)
            c._check_bags()
            if isinstance(stored, dict) and stored != actual:
                bad = sorted(k for k in set(stored) | set(actual) if stored.get(k) != actual.get(k))
                raise CorpusFormatError(f"{mf}: field 'ranges' differs from the arrays for {bad}; delete the corpus "
                                        f"directory to rebuild it")
        else:
            c.validate(stored=stored)
        c.__dict__["_loaded"] = {n: getattr(c, n) for n in (*_ARRAY_SPEC, *_TABLES, *_OPTIONAL_TABLES,
                                                             *_OPTIONAL_ARRAYS)}
        # A scan (verify=True, or an older manifest without ranges) read every page of the mapping: hand those
        # pages back to the page cache instead of keeping them all resident in this process; the crawl faults
        # in (cheaply, from the cache) only the pages it reads. Read-only file mappings: nothing is lost.
        if scanned and hasattr(_mmap, "MADV_DONTNEED"):
            for m in maps:
                try:
                    m.madvise(_mmap.MADV_DONTNEED)
                except (OSError, ValueError):  # pragma: no cover - platform without madvise on this mapping
                    break
        if not (mmap and share):
            return c
        # One object per process for the same files (checked above on every open): envs, workers forked
        # afterwards and the per-corpus memos keyed on the object (text model, topic scorers and their score
        # tables) then share one copy instead of one per env. A changed file (size, mtime, inode) is a new key.
        key = (str(path.resolve()), c.checksum,
               tuple(sorted((f, *_file_id(path / f)) for f in files)))
        hit = _LOADED.get(key)
        if hit is not None:
            return hit
        _LOADED[key] = c
        return c

    # -------------------------------------------------------------- networkx
    @classmethod
    def from_networkx(cls, G: Any, *, text: str = "text", title: str = "title", domain: str = "domain",
                      labels: str = "labels", anchor: str = "anchor", context: str = "context",
                      name: str = "networkx") -> Corpus:
        """Build a corpus from a directed ``networkx`` graph.

        Node attributes (all optional): ``title`` (default ``str(node)``),
        ``text`` (page text), ``domain`` (default ``"local"``), ``labels``
        (list of category strings). Edge attributes (optional): ``anchor``
        (default the target title), ``context`` (surrounding text).
        Node order is ``list(G.nodes)``; page ids follow it.
        """
        b = CorpusBuilder(name=name)
        nodes = list(G.nodes)
        idx = {v: i for i, v in enumerate(nodes)}
        for v in nodes:
            d = G.nodes[v]
            b.add_page(str(d.get(title, v)), d.get(text, ""), domain=d.get(domain, "local"),
                       labels=list(d.get(labels, [])))
        directed = G.is_directed()
        for u, v, d in G.edges(data=True):
            b.add_link(idx[u], idx[v], anchor=d.get(anchor), context=d.get(context, ""))
            if not directed:
                b.add_link(idx[v], idx[u], anchor=d.get(anchor), context=d.get(context, ""))
        return b.build()

    def to_networkx(self, with_text: bool = False) -> Any:
        """A ``networkx.DiGraph`` with node attributes title/domain/labels (and text if kept)
        and edge attribute ``anchor`` (the anchor words). Parallel links collapse to one edge."""
        import networkx as nx

        G = nx.DiGraph()
        titles = self.titles.tolist()
        doms = self.domains.tolist()
        labs = self.labels.tolist()
        vocab = self.vocab.tolist()
        for i in range(self.n_pages):
            lab_ids = self.label_ids[self.label_ptr[i]:self.label_ptr[i + 1]]
            attrs: dict[str, Any] = {"title": titles[i], "domain": doms[int(self.page_domain[i])],
                                     "labels": [labs[int(j)] for j in lab_ids]}
            if with_text and self.texts is not None:
                attrs["text"] = self.texts[i]
            G.add_node(i, **attrs)
        src = self.link_src()
        for e in range(self.n_links):
            a, b = self.anchor_ptr[e], self.anchor_ptr[e + 1]
            G.add_edge(int(src[e]), int(self.link_dst[e]),
                       anchor=" ".join(vocab[int(t)] for t in self.anchor_terms[a:b]))
        return G

    def summary(self, top_labels: int = 10) -> dict[str, Any]:
        """Counts, degree statistics, topics and the most frequent labels, for ``gym-crawl corpus info``.

        ``topics`` lists the corpus' named topics (``meta["topics"]``: seeds, label); ``top_labels`` the
        ``top_labels`` most frequent labels with their page counts and a suggested seed each (see
        :meth:`label_seeds`), so a label can be used as a topic of a dump, graph or HTML folder.
        """
        od = self.out_degree()
        ind = self.in_degree()
        topics = {k: {kk: v for kk, v in d.items() if kk in ("seeds", "label", "words")}
                  for k, d in (self.meta.get("topics") or {}).items() if isinstance(d, dict)}
        return {
            "name": self.name, "pages": self.n_pages, "links": self.n_links, "words": self.n_words,
            "domains": len(self.domains), "labels": len(self.labels),
            "out_degree_mean": float(od.mean()) if len(od) else 0.0,
            "out_degree_median": float(np.median(od)) if len(od) else 0.0,
            "out_degree_max": int(od.max()) if len(od) else 0,
            "in_degree_max": int(ind.max()) if len(ind) else 0,
            "path": str(self.path) if self.path else None,
            **{k: v for k, v in self.meta.items() if isinstance(v, (str, int, float))},
            "topics": topics,
            "top_labels": self.label_seeds(top_labels),
        }

    def label_seeds(self, top: int | None = 10) -> list[dict[str, Any]]:
        """The ``top`` most frequent labels (``None``: all), most pages first: ``{"label", "pages", "seed",
        "seed_in_links"}`` where ``seed`` is the title of the label's most in-linked page (ties: lowest
        page id) — a natural seed for a crawl on that label. Vectorized over the label CSR."""
        L = len(self.labels)
        if L == 0 or len(self.label_ids) == 0:
            return []
        counts = np.bincount(self.label_ids, minlength=L)
        page = np.repeat(np.arange(self.n_pages, dtype=np.int64), np.diff(self.label_ptr))
        indeg = self.in_degree()[page]
        order = np.lexsort((page, -indeg, self.label_ids))  # per label: most in-links, then lowest id
        lab_sorted = self.label_ids[order]
        first = order[np.flatnonzero(np.r_[True, lab_sorted[1:] != lab_sorted[:-1]])]
        best = np.full(L, -1, np.int64)
        best[self.label_ids[first]] = page[first]
        names = self.labels.tolist()
        ranked = sorted((i for i in range(L) if counts[i] > 0), key=lambda i: (-int(counts[i]), names[i]))
        if top is not None:
            ranked = ranked[:top]
        ind = self.in_degree()
        return [{"label": names[i], "pages": int(counts[i]), "seed": self.titles[int(best[i])],
                 "seed_in_links": int(ind[best[i]])} for i in ranked]


def _sha256_bytes(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def _is_mmapped(a: np.ndarray) -> bool:
    """Whether ``a`` is a view of a memory-mapped file."""
    b: Any = a
    while isinstance(b, np.ndarray):
        if isinstance(b, np.memmap):
            return True
        b = b.base
    return isinstance(b, _mmap.mmap)


_OPENED: weakref.WeakValueDictionary[tuple[str, str], Corpus] = weakref.WeakValueDictionary()
"""Memory-mapped corpora opened by reference in this process, so unpickling one corpus N times
(N sub-envs in one worker) maps it once."""


_PRISTINE_META: weakref.WeakKeyDictionary[Corpus, str] = weakref.WeakKeyDictionary()
"""The manifest meta of each corpus in :data:`_OPENED`, as loaded (later copies do not see edits of the first)."""


def _open_by_reference(path: str, checksum: str) -> Corpus:
    """Unpickle a saved corpus: re-open ``path`` memory-mapped and check it is still the content that
    was pickled. Within one process every unpickled copy shares one mapping (each with its own meta)."""
    key = (str(Path(path).resolve()), checksum)
    hit = _OPENED.get(key)
    if hit is not None:  # share the mapping (read-only arrays), not the mutable meta
        return _from_state({**hit.__dict__, "meta": json.loads(_PRISTINE_META[hit])})
    try:
        c = Corpus.load(path, share=False)  # a copy of its own (own meta), not the process-wide object
    except CorpusFormatError as e:
        raise CorpusFormatError(f"cannot unpickle the corpus saved at {path}: {e}") from None
    if c.checksum != checksum:
        raise CorpusFormatError(f"cannot unpickle the corpus saved at {path}: the directory was rewritten since it "
                                f"was pickled (manifest sha256 {(c.checksum or '')[:12]}…, pickled {checksum[:12]}…)")
    _OPENED[key] = c
    _PRISTINE_META[c] = json.dumps(c.meta)
    return c


def _from_state(state: dict[str, Any]) -> Corpus:
    """Unpickle an unsaved corpus from its fields (by value)."""
    c = Corpus.__new__(Corpus)
    c.__dict__.update(state)
    return c


class CorpusBuilder:
    """Collects pages and links, tokenizes them, and builds a validated :class:`Corpus`.

    Pages get ids in insertion order. ``add_link`` takes page ids; links are
    sorted by source on :meth:`build` (stable, so per-source order is kept).
    """

    def __init__(self, name: str = "corpus", keep_text: bool = False, meta: dict | None = None):
        self.name = name
        self.keep_text = keep_text
        self.meta = dict(meta or {})
        self._word: dict[str, int] = {}
        self._words: list[str] = []
        self._domain: dict[str, int] = {}
        self._label: dict[str, int] = {}
        self.titles: list[str] = []
        self.texts: list[str] = []
        self.page_bags: list[tuple[np.ndarray, np.ndarray]] = []
        self.title_toks: list[list[int]] = []
        self.page_domain: list[int] = []
        self.page_labels: list[list[int]] = []
        self.links: list[tuple[int, int, list[int], list[int]]] = []
        self.link_pos: list[int] = []  # position code of each link (-1 unknown), parallel to ``links``

    def _ids(self, tokens: Iterable[str]) -> list[int]:
        out = []
        for t in tokens:
            i = self._word.get(t)
            if i is None:
                i = self._word[t] = len(self._words)
                self._words.append(t)
            out.append(i)
        return out

    @staticmethod
    def _intern(table: dict[str, int], key: str) -> int:
        i = table.get(key)
        if i is None:
            i = table[key] = len(table)
        return i

    @property
    def n_pages(self) -> int:
        return len(self.titles)

    def add_page(self, title: str, text: str = "", *, domain: str = "local", labels: Sequence[str] = (),
                 tokens: Sequence[str] | None = None) -> int:
        """Add a page; returns its id. ``tokens`` overrides tokenizing ``text``."""
        toks = self._ids(tokens if tokens is not None else tokenize(text))
        cnt = Counter(toks)
        terms = np.array(sorted(cnt), dtype=np.int32)
        counts = np.array([cnt[t] for t in terms.tolist()], dtype=np.int32)
        self.page_bags.append((terms, counts))
        self.titles.append(title)
        if self.keep_text:
            self.texts.append(text)
        self.title_toks.append(self._ids(tokenize(title.replace("_", " "))))
        self.page_domain.append(self._intern(self._domain, domain))
        self.page_labels.append(sorted({self._intern(self._label, lab) for lab in labels}))
        return len(self.titles) - 1

    def add_link(self, src: int, dst: int, anchor: str | None = None, context: str = "",
                 position: str | None = None) -> None:
        """Add a link ``src → dst`` with its anchor text (default: the target's title), surrounding text and
        position in the source page (one of :data:`LINK_POSITIONS`; ``None``: unknown). The corpus gets a
        ``link_position`` column when some link has a position."""
        if anchor is None:
            anchor = self.titles[dst].replace("_", " ") if dst < len(self.titles) else ""
        if position is not None and position not in LINK_POSITIONS:
            raise ValueError(f"add_link: position must be one of {LINK_POSITIONS} or None, got {position!r}")
        self.links.append((src, dst, self._ids(tokenize(anchor)), self._ids(tokenize(context))))
        self.link_pos.append(-1 if position is None else LINK_POSITIONS.index(position))

    def build(self) -> Corpus:
        """Validate and return the :class:`Corpus` (in memory; call ``save`` to persist)."""
        n = len(self.titles)
        for (s, d, _, _) in self.links:
            if not (0 <= s < n and 0 <= d < n):
                raise ValueError(f"link {s}->{d} refers to a page outside [0, {n})")
        # vocabulary sorted alphabetically so ids do not depend on insertion order
        order = sorted(range(len(self._words)), key=self._words.__getitem__)
        remap = np.empty(len(order), dtype=np.int32)
        remap[np.asarray(order, dtype=np.int64)] = np.arange(len(order), dtype=np.int32)

        def rm(a: np.ndarray) -> np.ndarray:
            return remap[a] if len(a) else a.astype(np.int32)

        text_ptr = np.zeros(n + 1, dtype=np.int64)
        terms_l, counts_l = [], []
        for i, (t, c) in enumerate(self.page_bags):
            t2 = rm(t)
            o = np.argsort(t2, kind="stable")
            terms_l.append(t2[o])
            counts_l.append(c[o])
            text_ptr[i + 1] = text_ptr[i] + len(t)
        text_terms = np.concatenate(terms_l).astype(np.int32) if terms_l else np.zeros(0, np.int32)
        text_counts = np.concatenate(counts_l).astype(np.int32) if counts_l else np.zeros(0, np.int32)
        title_ptr, title_terms = csr_from_lists(self.title_toks)
        by_src = sorted(range(len(self.links)), key=lambda i: self.links[i][0])
        links = [self.links[i] for i in by_src]
        pos = np.asarray([self.link_pos[i] for i in by_src], np.int8)
        link_ptr = np.zeros(n + 1, dtype=np.int64)
        link_ptr[1:] = np.cumsum(np.bincount(np.asarray([lk[0] for lk in links], dtype=np.int64), minlength=n))
        link_dst = np.asarray([lk[1] for lk in links], dtype=np.int32)
        anchor_ptr, anchor_terms = csr_from_lists([lk[2] for lk in links])
        context_ptr, context_terms = csr_from_lists([lk[3] for lk in links])
        label_ptr, label_ids = csr_from_lists(self.page_labels)
        words = [self._words[i] for i in order]
        return Corpus(
            text_ptr=text_ptr, text_terms=text_terms, text_counts=text_counts,
            title_ptr=title_ptr, title_terms=rm(title_terms),
            link_ptr=link_ptr.astype(np.int64), link_dst=link_dst,
            anchor_ptr=anchor_ptr, anchor_terms=rm(anchor_terms),
            context_ptr=context_ptr, context_terms=rm(context_terms),
            page_domain=np.asarray(self.page_domain, dtype=np.int32),
            label_ptr=label_ptr, label_ids=label_ids,
            titles=StringTable.from_strings(self.titles), vocab=StringTable.from_strings(words),
            domains=StringTable.from_strings(sorted(self._domain, key=self._domain.__getitem__)),
            labels=StringTable.from_strings(sorted(self._label, key=self._label.__getitem__)),
            texts=StringTable.from_strings(self.texts) if self.keep_text else None,
            meta={"name": self.name, **self.meta},
            link_position=pos if (pos >= 0).any() else None,
        )

def _file_id(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns, st.st_ino


#: memory-mapped corpora opened in this process, by (directory, manifest checksum, files' size/mtime/inode)
_LOADED: weakref.WeakValueDictionary[tuple, Corpus] = weakref.WeakValueDictionary()

