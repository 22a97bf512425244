"""The second half of the WARC compiler (:mod:`gym_crawl.web.warc`): from the shard chunks that
:func:`~gym_crawl.web.warc.parse_warc_file` writes to a :class:`~gym_crawl.corpus.core.Corpus`, in memory bounded
by the pages, never by the links.

* the **join** (:func:`join_pages`) — which record is the page of each URL (the first), which pages merge by
  payload digest, where redirect chains lead — from sorted arrays of the 64-bit URL hashes of the records
  (:func:`load_keys`: as long as the records, not the links). It ends in one lookup table, every URL that names a
  page (its own, a merged duplicate's, a resolved redirect's) as a sorted hash with its page id
  (:meth:`Join.targets`); both engines use it;
* the **assembly** (:func:`assemble`) — the chunks read again one at a time, each link's target resolved through
  that table chunk by chunk, and every column appended to the corpus folder as it comes
  (:class:`~gym_crawl.corpus.writer.CorpusWriter`: memory-mapped ``.npy`` files in a partial folder, renamed
  into place whole). The process holds one chunk plus a few arrays as long as the pages (the join's page rows and
  lookup table, each page's title hash and domain) and the vocabulary: a chunk's record → page ids are worked out
  from the page rows when it is read, and labels are counted a chunk at a time.

A shard chunk is an ``.npz`` of one WARC file's pages (at most ``chunk_pages``): per page its URL hash,
payload-digest hash, URL, title, main text, word ids of the text bag / URL words (a local vocabulary), and
per link its target URL and hash, anchor and context word ids and position; plus the file's redirects
(source and target URL hashes).
"""
from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from gym_crawl.corpus.cache import warn_once
from gym_crawl.corpus.core import Corpus, StringTable, check_corpus_destination
from gym_crawl.corpus.writer import CorpusWriter, open_written
from gym_crawl.tokenize import tokenize
from gym_crawl.web.html_extract import LINK_POSITIONS
from gym_crawl.web.urls import url_host, url_text
from gym_crawl.web.warc_labels import LabelRules

__all__ = ["MAX_REDIRECT_HOPS", "Assembled", "Join", "assemble", "join_pages", "load_keys", "page_labels",
           "read_table", "write_corpus"]

MAX_REDIRECT_HOPS = 10
"""Redirect chains longer than this (and loops) leave a link unresolved."""


def read_table(z: Mapping[str, np.ndarray], prefix: str) -> StringTable:
    """The string table ``prefix`` of a loaded chunk."""
    return StringTable(np.asarray(z[f"{prefix}_blob"]), np.asarray(z[f"{prefix}_off"]))


@contextmanager
def _chunk(c: dict[str, Any]) -> Iterator[Any]:
    with np.load(c["path"], allow_pickle=False) as z:
        yield z


@dataclass
class Join:
    """The global join: which rows of the concatenated page table are pages (in id order), and the table that
    resolves a URL hash to its page id (:meth:`targets`)."""

    page_rows: np.ndarray
    keys: np.ndarray
    """sorted URL hashes that name a page: the pages' own, merged duplicates', resolved redirects'"""
    ids: np.ndarray
    """the page id of each of :attr:`keys` (int32: a corpus' page ids are)"""
    url_duplicates: int
    digest_duplicates: int
    redirects_used: int
    extra: dict[str, Any] = field(default_factory=dict)

    def targets(self, url_hash: np.ndarray) -> np.ndarray:
        """The page id of each URL hash (-1: not in the archive)."""
        return _lookup(self.keys, self.ids, np.asarray(url_hash, np.int64))


def load_keys(chunks: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """The page and redirect hash columns of every chunk, concatenated in chunk order (no link column)."""
    names = ("url_hash", "digest_hash", "redirect_from", "redirect_to")
    cols: dict[str, list[np.ndarray]] = {k: [] for k in names}
    for c in chunks:
        with _chunk(c) as z:
            for k in names:
                cols[k].append(np.asarray(z[k]))
    return {k: (np.concatenate(v) if v else np.zeros(0, np.int64)) for k, v in cols.items()}


def _lookup(keys_sorted: np.ndarray, values: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``values`` of ``q`` in the sorted ``keys_sorted`` (-1 where absent), in ``values``' dtype."""
    if len(keys_sorted) == 0:
        return np.full(len(q), -1, values.dtype)
    i = np.searchsorted(keys_sorted, q)
    i = np.minimum(i, len(keys_sorted) - 1)
    return np.where(keys_sorted[i] == q, values[i], -1)


def join_pages(k: dict[str, np.ndarray]) -> Join:
    """The join from sorted arrays of URL hashes (see the module docstring for the rules)."""
    h, d = k["url_hash"], k["digest_hash"]
    _, first = np.unique(h, return_index=True)
    rows = np.sort(first)  # first record of each URL, in record order
    _, dfirst, dinv = np.unique(d[rows], return_index=True, return_inverse=True)
    canon = rows[dfirst][dinv.reshape(-1)]
    is_page = canon == rows
    page_rows = rows[is_page]
    ids = np.empty(len(h), np.int64)  # id of each page row
    ids[page_rows] = np.arange(len(page_rows))
    # hash → id: pages, then URLs merged by digest (their first record's row → its canonical page)
    table_h = np.concatenate([h[page_rows], h[rows[~is_page]]])
    table_id = np.concatenate([np.arange(len(page_rows)), ids[canon[~is_page]]])
    del ids
    # redirects: the first redirect of each URL that has no page record of its own
    rf, rt = k["redirect_from"], k["redirect_to"]
    _, rfirst = np.unique(rf, return_index=True)
    rfirst = np.sort(rfirst)
    keep = ~np.isin(rf[rfirst], h)
    rf, rt = rf[rfirst[keep]], rt[rfirst[keep]]
    resolved = np.full(len(rf), -1, np.int64)
    for _ in range(MAX_REDIRECT_HOPS):
        order = np.argsort(table_h, kind="stable")
        hs, vs = table_h[order], table_id[order]
        new = (resolved < 0) & (_lookup(hs, vs, rt) >= 0)
        if not new.any():
            break
        resolved[new] = _lookup(hs, vs, rt[new])
        table_h = np.concatenate([table_h, rf[new]])
        table_id = np.concatenate([table_id, resolved[new]])
    order = np.argsort(table_h, kind="stable")
    return Join(page_rows=page_rows, keys=table_h[order], ids=table_id[order].astype(np.int32),
                url_duplicates=int(len(h) - len(rows)), digest_duplicates=int((~is_page).sum()),
                redirects_used=int((resolved >= 0).sum()))


def _labeller(label_map: dict[str, list[str]] | None,
              rules: list[tuple[str, str]] | None) -> Callable[[Sequence[str]], list[list[str]]]:
    """``f(urls)`` → each URL's labels: the map's, then its rule's
    (:class:`~gym_crawl.web.warc_labels.LabelRules`)."""
    matcher = LabelRules(rules) if rules else None

    def labels(urls: Sequence[str]) -> list[list[str]]:
        out: list[list[str]] = []
        for u in urls:
            labs = list(label_map.get(u, ())) if label_map else []
            lab = matcher.label(u) if matcher is not None else None
            if lab is not None and lab not in labs:
                labs.append(lab)
            out.append(labs)
        return out

    return labels


def page_labels(urls: Sequence[str], label_map: dict[str, list[str]] | None,
                rules: list[tuple[str, str]] | None) -> list[list[str]]:
    """Each URL's labels: the map's, then its rule's (:class:`~gym_crawl.web.warc_labels.LabelRules`)."""
    return _labeller(label_map, rules)(urls)


@dataclass
class Assembled:
    """What :func:`assemble` found besides the columns it wrote."""

    summary: dict[str, Any]
    """``pages``, ``fetched_pages``, ``unfetched_pages``, ``links``, ``link_positions``, ``labelled_pages`` (and
    ``label_map_unmatched`` with a label map), for ``warc_summary``"""
    unfetched: int
    """text-less pages of URLs not in the archive (``include_unfetched``), ids after the fetched pages"""
    url_ids: dict[str, int]
    """the page id of each of the asked URLs (``find_urls``) that is a page of the corpus"""


_CSR = (("text_ptr", "text_terms", np.int32), ("title_ptr", "title_terms", np.int32),
        ("link_ptr", "link_dst", np.int32), ("anchor_ptr", "anchor_terms", np.int32),
        ("context_ptr", "context_terms", np.int32), ("label_ptr", "label_ids", np.int32),
        *((f"{t}.offsets", f"{t}.blob", np.uint8) for t in ("titles", "vocab", "domains", "labels", "texts", "urls")))
"""Every CSR pair and string table of a WARC corpus (pointer, values, value dtype)."""
_COLUMNS = (("text_counts", np.int32), ("page_domain", np.int32), ("link_position", np.int8))


def assemble(chunks: list[dict[str, Any]], join: Join, writer: CorpusWriter, *, include_unfetched: bool,
             label_map: dict[str, list[str]] | None, rules: list[tuple[str, str]] | None,
             find_urls: set[str] | frozenset[str] = frozenset()) -> Assembled:
    """Write the corpus of ``chunks`` into ``writer`` (every array; the caller seals it with the meta), reading
    the chunks one at a time: once for the vocabulary (and the URLs not in the archive, with
    ``include_unfetched``), once for the columns, once or twice for the titles (a title several pages share gets
    their URL appended, so its count over all pages is needed first)."""
    a = _Assembly(chunks, join, writer, label_map, rules, find_urls)
    for ptr, vals, dt in _CSR:
        writer.append_csr(ptr, vals, np.zeros(1, np.int64), np.zeros(0, dt), dt)
    for name, dt in _COLUMNS:
        writer.append(name, np.zeros(0, dt), dt)
    vocab, unfetched = a.vocabulary(include_unfetched)
    v = StringTable.from_strings(vocab)
    writer.append_csr("vocab.offsets", "vocab.blob", v.offsets, v.blob, np.uint8)
    del v
    vocab_id = {w: i for i, w in enumerate(vocab)}
    del vocab
    for c in chunks:
        a.add_chunk(c, vocab_id)
    a.add_unfetched(unfetched, vocab_id)
    del vocab_id
    a.write_titles(unfetched)
    return a.finish(len(unfetched))


class _Assembly:
    """The state :func:`assemble` keeps between chunks: arrays as long as the records or the pages."""

    def __init__(self, chunks: list[dict[str, Any]], join: Join, writer: CorpusWriter,
                 label_map: dict[str, list[str]] | None, rules: list[tuple[str, str]] | None,
                 find_urls: set[str] | frozenset[str]) -> None:
        self.chunks, self.join, self.w = chunks, join, writer
        self.n_fetched = len(join.page_rows)
        self.n = self.n_fetched
        self.row0 = 0
        self.next_id = 0
        self.unf_keys = np.zeros(0, np.int64)
        self.unf_ids = np.zeros(0, np.int64)
        self.label_map = label_map
        self.labels_of = _labeller(label_map, rules) if (label_map or rules) else None
        self.find, self.url_ids = find_urls, dict[str, int]()
        self.matched: set[str] = set()
        self.title_hash: list[np.ndarray] = []
        self.dom_code: list[np.ndarray] = []
        self.domains: dict[str, int] = {}
        self.lab_n: list[np.ndarray] = []
        """labels of each page, a block per chunk (none at all without labels: :attr:`n_seen` pages have none)"""
        self.n_seen = 0
        self.lab_codes: list[int] = []
        self.lab_names: dict[str, int] = {}
        self.pos_counts = np.zeros(len(LINK_POSITIONS), np.int64)

    def row_ids(self, row0: int, n: int) -> np.ndarray:
        """The page id of each of the records ``row0 … row0 + n - 1`` (a chunk's), -1 for one that is no page: from
        the join's page rows (increasing, a page's id its place among them), so nothing as long as the records is
        kept."""
        rows = self.join.page_rows
        lo, hi = np.searchsorted(rows, (row0, row0 + n)).tolist()
        ids = np.full(n, -1, np.int64)
        ids[rows[lo:hi] - row0] = np.arange(lo, hi)
        return ids

    def vocabulary(self, include_unfetched: bool) -> tuple[list[str], list[str]]:
        """The sorted union of the chunk vocabularies and the words of the URLs not in the archive that kept
        pages link to (``include_unfetched``: those URLs, in order of first link, become text-less pages)."""
        words: set[str] = set()
        first_of: dict[int, int] = {}
        unfetched: list[str] = []
        row0 = 0
        for c in self.chunks:
            with _chunk(c) as z:
                words.update(read_table(z, "vocab"))
                lh = np.asarray(z["link_hash"]) if include_unfetched else np.zeros(0, np.int64)
                if len(lh):
                    src = np.repeat(self.row_ids(row0, c["pages"]), np.diff(np.asarray(z["link_ptr"])))
                    miss = np.flatnonzero((self.join.targets(lh) < 0) & (src >= 0))
                    if len(miss):
                        lurls = read_table(z, "link_urls")
                        for j in miss.tolist():
                            hj = int(lh[j])
                            if hj not in first_of:
                                first_of[hj] = self.n_fetched + len(unfetched)
                                unfetched.append(lurls[j])
            row0 += c["pages"]
        for u in unfetched:
            words.update(tokenize(url_text(u)))
        if first_of:
            keys = np.fromiter(first_of, np.int64, count=len(first_of))
            ids = np.fromiter(first_of.values(), np.int64, count=len(first_of))
            o = np.argsort(keys)
            self.unf_keys, self.unf_ids = keys[o], ids[o]
        self.n = self.n_fetched + len(unfetched)
        return sorted(words), unfetched

    def add_chunk(self, c: dict[str, Any], vocab_id: dict[str, int]) -> None:
        """Append the kept pages of chunk ``c`` (their ids follow on from the previous chunk's) and their links."""
        with _chunk(c) as z:
            lv = read_table(z, "vocab").tolist()
            remap = np.asarray([vocab_id[w] for w in lv], np.int32) if lv else np.zeros(0, np.int32)
            ids = self.row_ids(self.row0, c["pages"])
            keep = np.flatnonzero(ids >= 0)
            self._page_columns(z, keep, remap)
            self._links(z, ids, keep, remap)
            u_tab, t_tab = read_table(z, "urls"), read_table(z, "titles")
            self._pages_seen([u_tab[int(r)] for r in keep], [t_tab[int(r)] for r in keep])
        self.row0 += c["pages"]

    def _page_columns(self, z: Any, keep: np.ndarray, remap: np.ndarray) -> None:
        w = self.w
        tp = np.asarray(z["text_ptr"])
        ptr, terms = _gather_csr(tp, np.asarray(z["text_terms"]), keep)
        _, counts = _gather_csr(tp, np.asarray(z["text_counts"]), keep)
        terms = remap[terms]
        o = np.lexsort((terms, np.repeat(np.arange(len(keep)), np.diff(ptr))))  # words sorted within a page
        w.append_csr("text_ptr", "text_terms", ptr, terms[o], np.int32)
        w.append("text_counts", counts[o], np.int32)
        ptr, terms = _gather_csr(np.asarray(z["url_ptr"]), np.asarray(z["url_terms"]), keep)
        w.append_csr("title_ptr", "title_terms", ptr, remap[terms], np.int32)
        for table, prefix in (("texts", "texts"), ("urls", "urls")):
            off, blob = _gather_csr(np.asarray(z[f"{prefix}_off"]), np.asarray(z[f"{prefix}_blob"]), keep)
            w.append_csr(f"{table}.offsets", f"{table}.blob", off, blob, np.uint8)

    def _links(self, z: Any, ids: np.ndarray, keep: np.ndarray, remap: np.ndarray) -> None:
        """The chunk's links from kept pages to pages, sorted by source in page order, a (source, target) pair
        once (its first link): a page's links all lie in its chunk, so this is the global order chunk by chunk."""
        lp = np.asarray(z["link_ptr"])
        lh = np.asarray(z["link_hash"])
        src = ids[np.repeat(np.arange(len(ids)), np.diff(lp))]
        dst = self.join.targets(lh)
        if len(self.unf_keys):
            dst = np.where(dst >= 0, dst, _lookup(self.unf_keys, self.unf_ids, lh))
        sel = np.flatnonzero((src >= 0) & (dst >= 0) & (src != dst))
        s, d = src[sel], dst[sel]
        _, first = np.unique(s * max(self.n, 1) + d, return_index=True)
        order = first[np.lexsort((first, s[first]))]
        idx = sel[order]
        ptr = np.zeros(len(keep) + 1, np.int64)
        if len(keep):
            ptr[1:] = np.cumsum(np.bincount(s[order] - ids[keep[0]], minlength=len(keep)))
        self.w.append_csr("link_ptr", "link_dst", ptr, d[order], np.int32)
        pos = np.asarray(z["position"])[idx]
        self.w.append("link_position", pos, np.int8)
        self.pos_counts += np.bincount(pos.astype(np.int64), minlength=len(LINK_POSITIONS))
        for col in ("anchor", "context"):
            p, t = _gather_csr(np.asarray(z[f"{col}_ptr"]), np.asarray(z[f"{col}_terms"]), idx)
            self.w.append_csr(f"{col}_ptr", f"{col}_terms", p, remap[t], np.int32)

    def _pages_seen(self, urls: list[str], titles: list[str]) -> None:
        """What the columns written at the end need of the next pages: title hash, domain, labels."""
        k = len(urls)
        self.title_hash.append(np.fromiter((hash(t or u) for t, u in zip(titles, urls)), np.int64, count=k))
        doms = self.domains
        self.dom_code.append(np.fromiter((doms.setdefault(url_host(u), len(doms)) for u in urls), np.int32, count=k))
        if self.labels_of is not None:
            names = self.lab_names
            counts = np.zeros(k, np.int32)
            for i, labs in enumerate(self.labels_of(urls)):
                counts[i] = len(labs)
                self.lab_codes.extend(names.setdefault(lab, len(names)) for lab in labs)
            self.lab_n.append(counts)
        self.n_seen += k
        if self.label_map:
            self.matched.update(u for u in urls if u in self.label_map)
        if self.find:
            for i, u in enumerate(urls):
                if u in self.find:
                    self.url_ids.setdefault(u, self.next_id + i)
        self.next_id += k

    def add_unfetched(self, unfetched: list[str], vocab_id: dict[str, int]) -> None:
        """Text-less pages (only their URL words) for the URLs not in the archive."""
        k = len(unfetched)
        if not k:
            return
        w = self.w
        toks = [[vocab_id[t] for t in tokenize(url_text(u))] for u in unfetched]
        none = np.zeros(k + 1, np.int64)
        w.append_csr("text_ptr", "text_terms", none, np.zeros(0, np.int32), np.int32)
        ptr = np.zeros(k + 1, np.int64)
        ptr[1:] = np.cumsum([len(t) for t in toks])
        w.append_csr("title_ptr", "title_terms", ptr, np.fromiter((i for t in toks for i in t), np.int32,
                                                                   count=int(ptr[-1])), np.int32)
        w.append_csr("texts.offsets", "texts.blob", none, np.zeros(0, np.uint8), np.uint8)
        u = StringTable.from_strings(unfetched)
        w.append_csr("urls.offsets", "urls.blob", u.offsets, u.blob, np.uint8)
        w.append_csr("link_ptr", "link_dst", none, np.zeros(0, np.int32), np.int32)
        self._pages_seen(unfetched, [""] * k)

    def _titles_by_chunk(self, unfetched: list[str]) -> Iterator[tuple[int, list[str], list[str]]]:
        """``(first page id, titles, urls)`` of the pages, chunk by chunk, the text-less pages last."""
        row0 = first = 0
        for c in self.chunks:
            keep = np.flatnonzero(self.row_ids(row0, c["pages"]) >= 0).tolist()
            row0 += c["pages"]
            if not keep:
                continue
            with _chunk(c) as z:
                t_tab, u_tab = read_table(z, "titles"), read_table(z, "urls")
                yield first, [t_tab[r] for r in keep], [u_tab[r] for r in keep]
            first += len(keep)
        if unfetched:
            yield first, [""] * len(unfetched), unfetched

    def write_titles(self, unfetched: list[str]) -> None:
        """Each page's title (its URL when it has none; ``"<title> (<url>)"`` when several pages share it)."""
        th = np.concatenate(self.title_hash)
        self.title_hash = []
        _, inv, cnt = np.unique(th, return_inverse=True, return_counts=True)
        shared = cnt[inv.reshape(-1)] > 1  # a title hash that several pages have: count those titles exactly
        del th, inv, cnt
        seen: Counter = Counter()
        if shared.any():
            for first, titles, urls in self._titles_by_chunk(unfetched):
                seen.update(t or u for i, (t, u) in enumerate(zip(titles, urls)) if shared[first + i])
        for first, titles, urls in self._titles_by_chunk(unfetched):
            out = []
            for i, (t, u) in enumerate(zip(titles, urls)):
                e = t or u
                out.append(e if not shared[first + i] or seen[e] == 1 or e == u else f"{e} ({u})")
            tab = StringTable.from_strings(out)
            self.w.append_csr("titles.offsets", "titles.blob", tab.offsets, tab.blob, np.uint8)

    def finish(self, n_unfetched: int) -> Assembled:
        """The per-page columns known only once every page is seen (domains, labels), and the summary."""
        w = self.w
        names = sorted(self.domains)
        rank = np.empty(len(names), np.int32)
        for i, d in enumerate(names):
            rank[self.domains[d]] = i
        codes = np.concatenate(self.dom_code) if self.dom_code else np.zeros(0, np.int32)
        w.append("page_domain", rank[codes] if len(codes) else codes, np.int32)
        t = StringTable.from_strings(names)
        w.append_csr("domains.offsets", "domains.blob", t.offsets, t.blob, np.uint8)
        lab_names = sorted(self.lab_names)
        lrank = np.empty(len(lab_names), np.int64)
        for i, lab in enumerate(lab_names):
            lrank[self.lab_names[lab]] = i
        lab_n = np.concatenate(self.lab_n, dtype=np.int64) if self.lab_n else np.zeros(self.n_seen, np.int64)
        ids = lrank[np.asarray(self.lab_codes, np.int64)] if self.lab_codes else np.zeros(0, np.int64)
        ptr = np.zeros(len(lab_n) + 1, np.int64)
        ptr[1:] = np.cumsum(lab_n)
        o = np.lexsort((ids, np.repeat(np.arange(len(lab_n)), lab_n)))  # a page's labels in name order
        w.append_csr("label_ptr", "label_ids", ptr, ids[o], np.int32)
        t = StringTable.from_strings(lab_names)
        w.append_csr("labels.offsets", "labels.blob", t.offsets, t.blob, np.uint8)
        summary: dict[str, Any] = {
            "pages": self.n, "fetched_pages": self.n_fetched, "unfetched_pages": n_unfetched,
            "links": w.length("link_dst"),
            "link_positions": {p: int(k) for p, k in zip(LINK_POSITIONS, self.pos_counts)},
            "labelled_pages": int((lab_n > 0).sum())}
        if self.label_map:
            summary["label_map_unmatched"] = len(self.label_map) - len(self.matched)
        return Assembled(summary=summary, unfetched=n_unfetched, url_ids=self.url_ids)


def _gather_csr(ptr: np.ndarray, vals: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The CSR rows ``rows`` of ``(ptr, vals)``, in that order (values keep their dtype), in memory the size of the
    result: runs of consecutive rows copied as slices (a chunk's kept pages are mostly one run), scattered rows (a
    chunk's kept links) by a compiled copy — never through an index array as long as the values (24× the bytes
    of a chunk's texts, 6× its link contexts' word ids)."""
    rows = np.asarray(rows, np.int64)
    lens = (ptr[1:] - ptr[:-1])[rows]
    out_ptr = np.zeros(len(rows) + 1, np.int64)
    out_ptr[1:] = np.cumsum(lens)
    if not len(rows) or out_ptr[-1] == 0:
        return out_ptr, vals[:0]
    brk = np.flatnonzero(np.diff(rows) != 1) + 1
    if len(brk) < 64:
        first = rows[np.concatenate([[0], brk])]
        last = rows[np.concatenate([brk - 1, [len(rows) - 1]])] + 1
        return out_ptr, np.concatenate([vals[ptr[a]:ptr[b]] for a, b in zip(first.tolist(), last.tolist())])
    out = np.empty(int(out_ptr[-1]), vals.dtype)
    _gather_rows(np.asarray(ptr, np.int64), vals, rows, out_ptr, out)
    return out_ptr, out


@njit(cache=True, nogil=True)
def _gather_rows(ptr: np.ndarray, vals: np.ndarray, rows: np.ndarray, out_ptr: np.ndarray,
                 out: np.ndarray) -> None:
    """``out[out_ptr[i]:out_ptr[i + 1]] = vals[ptr[rows[i]]:ptr[rows[i] + 1]]`` for every ``i`` (no index array as
    long as the values)."""
    for i in range(len(rows)):
        a = ptr[rows[i]]
        o = out_ptr[i]
        for j in range(out_ptr[i + 1] - o):
            out[o + j] = vals[a + j]


# ------------------------------------------------------------------------------------ the whole corpus

def write_corpus(chunks: list[dict[str, Any]], join: Join, cache_path: Path | None, work_dir: Path, *, name: str,
                 meta: dict[str, Any], results: list[dict[str, Any]], include_unfetched: bool,
                 label_map: dict[str, list[str]] | None, rules: list[tuple[str, str]] | None) -> Corpus:
    """The corpus of ``chunks``, assembled (:func:`assemble`) straight into ``cache_path`` and opened
    memory-mapped — or, with no cache path or one that cannot be written (one warning per cache folder), into a
    new folder of ``work_dir``, then read into memory. ``meta``: the corpus' meta before the assembly's counts
    (``warc_summary`` gets them); ``results``: the parse results, for the seeds and the pages fetched after a
    recorded crawl's last step."""
    target, in_memory = _destination(cache_path, work_dir, name)
    seeds, after = _recorded_urls(results)
    with CorpusWriter(target) as writer:
        got = assemble(chunks, join, writer, include_unfetched=include_unfetched, label_map=label_map,
                       rules=rules, find_urls=frozenset(seeds) | after)
        meta["warc_summary"].update(got.summary)
        if got.unfetched:
            meta["unfetched_pages"] = {"first": got.summary["fetched_pages"], "count": got.unfetched}
        meta = {"name": name, **meta}
        found = [u for u in dict.fromkeys(seeds) if u in got.url_ids]
        if found:
            meta["default_seeds"] = found
        if after:
            meta["fetched_after_last_step"] = sorted(got.url_ids[u] for u in after if u in got.url_ids)
        writer.finish(meta)
    return open_written(target, in_memory=in_memory)


def _recorded_urls(results: list[dict[str, Any]]) -> tuple[list[str], set[str]]:
    """What the files' live crawls recorded: the seed URLs their warcinfo records name (in file order; the
    corpus' ``default_seeds`` are those that are pages) and the URLs they fetched after their last step (whose
    page ids become ``fetched_after_last_step``)."""
    seeds = [u for r in sorted(results, key=lambda r: r["index"]) for u in r.get("seeds", ())]
    return seeds, {u for r in results for u in r.get("not_in_crawl", ())}


def _destination(cache_path: Path | None, work_dir: Path, name: str) -> tuple[Path, bool]:
    """Where the corpus is written, and whether it is then read into memory (and the folder removed)."""
    if cache_path is not None:
        try:
            check_corpus_destination(cache_path)
            cache_path.parent.mkdir(parents=True, exist_ok=True)
            os.rmdir(tempfile.mkdtemp(prefix=f".{cache_path.name}.probe-", dir=cache_path.parent))
            return cache_path, False
        except OSError as e:
            warn_once(f"readonly:{cache_path.parent}",
                      f"WARC corpus {name!r}: cannot write the corpus cache under {cache_path.parent} "
                      f"({e.strerror or e}); using the compiled corpus in memory (set GYM_CRAWL_DATA to a "
                      f"writable folder to cache it)")
    return Path(tempfile.mkdtemp(prefix="corpus_", dir=work_dir)), True
