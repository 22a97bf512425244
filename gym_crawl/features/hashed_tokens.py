"""The hashed token tables of the ``hashed`` feature sets (:class:`~gym_crawl.features.content.HashedContentFeatures`):
each link's tokens — anchor words, URL (target title) words, URL character 3-/4-grams, surrounding-text words, parent
title words, target domain, same-domain flag, a bias token — as columns of a ``2**bits`` hash space.

Columns are salted 32-bit hashes (CRC-32 of each vocabulary word mixed with a field salt; a polynomial hash of title
bytes for n-grams), identical across processes and corpora that share words. Three ways to the same rows:

* :class:`HashedTokens` (a static corpus of up to :data:`EAGER_HASHED_PAGES` pages): per corpus only small tables are
  precomputed — the column of every vocabulary word per field, and a CSR over pages of title words, title n-grams and
  domain — so a row costs O(its tokens), never O(corpus) (a CSR over all links was 25 s at 2.7 M links);
* :class:`LazyHashedTokens` (a larger static corpus): a page's columns computed when first asked for, so the tables
  hold the pages asked about (the CSR over pages is 112–132 bytes a page);
* :class:`LiveHashedTokens` (a live web): the same, for pages and words discovered as the crawl goes.

:func:`hashed_tokens` picks one per corpus object and memoizes it.
"""
from __future__ import annotations

import weakref
import zlib

import numpy as np

from gym_crawl.corpus.core import Corpus, StringTable
from gym_crawl.corpus.page_source import PageSource
from gym_crawl.text.model import gather_csr

__all__ = ["DEFAULT_HASH_BITS", "EAGER_HASHED_PAGES", "FIELDS", "NGRAMS", "HashedTokens", "LazyHashedTokens",
           "LiveHashedTokens", "hashed_tokens", "salted"]

DEFAULT_HASH_BITS = 14
#: field salts of the hashed tokens (a token's column is hash(word) mixed with its field's salt)
FIELDS = {"bias": 1, "anchor": 2, "url": 3, "ngram": 4, "context": 5, "parent_title": 6, "domain": 7,
          "same_domain": 8}
NGRAMS = (3, 4)

_M32 = np.uint64(0xFFFFFFFF)
#: a static corpus of up to this many pages gets its hashed token tables built whole (:class:`HashedTokens`); a
#: larger one computes them for the pages asked about (:class:`LazyHashedTokens`)
EAGER_HASHED_PAGES = 200_000


def _fmix32(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 32-bit finalizer, vectorized (uint64 in, uint64 < 2^32 out)."""
    h = np.asarray(h, np.uint64) & _M32
    h ^= h >> np.uint64(16)
    h = (h * np.uint64(0x85EBCA6B)) & _M32
    h ^= h >> np.uint64(13)
    h = (h * np.uint64(0xC2B2AE35)) & _M32
    h ^= h >> np.uint64(16)
    return h


def _salted(h: np.ndarray, field: int, mask: int) -> np.ndarray:
    """Column of hashed values ``h`` in field ``field``: int32 in [0, mask]."""
    salt = np.uint64((field * 0x9E3779B1) & 0xFFFFFFFF)
    return (_fmix32(np.asarray(h, np.uint64) ^ salt) & np.uint64(mask)).astype(np.int32)


class HashedTokens:
    """Hashed token tables of one corpus (see the module docstring), built whole once and memoized.

    ``col_anchor`` / ``col_context`` (V,): the column of each vocabulary word as an anchor / context
    token (link rows gather their words through them on demand, so nothing is built per link);
    ``page_ptr/page_cols``: per page, its title (URL) words, title character n-grams and domain, as a
    link *target*; ``ptitle_ptr/ptitle_cols``: per page, its title words as a link *source* (parent).
    Building costs O(V + n × title length); a row costs O(its tokens).
    """

    def __init__(self, corpus: Corpus, bits: int):
        self.bits = bits
        D = 1 << bits
        mask = D - 1
        wh = np.fromiter((zlib.crc32(w.encode("utf-8")) for w in corpus.vocab), np.uint64, count=corpus.n_words)
        n = corpus.n_pages
        self.col_anchor = _salted(wh, FIELDS["anchor"], mask)
        self.col_context = _salted(wh, FIELDS["context"], mask)
        self._anchor = (np.asarray(corpus.anchor_ptr), np.asarray(corpus.anchor_terms))
        self._context = (np.asarray(corpus.context_ptr), np.asarray(corpus.context_terms))
        # pages as targets: title words, title n-grams, domain
        t_rows = np.repeat(np.arange(n), np.diff(corpus.title_ptr))
        title_terms = np.asarray(corpus.title_terms)
        t_cols = _salted(wh[title_terms], FIELDS["url"], mask)
        g_rows, g_hash = _title_ngrams(corpus)
        dh = np.fromiter((zlib.crc32(d.encode("utf-8")) for d in corpus.domains), np.uint64, count=len(corpus.domains))
        dom = np.asarray(corpus.page_domain, np.int64)
        d_cols = _salted(dh[dom] if len(dh) else np.zeros(n, np.uint64), FIELDS["domain"], mask)
        self.page_ptr, self.page_cols = _csr_unique(
            np.concatenate([t_rows, g_rows, np.arange(n)]),
            np.concatenate([t_cols, _salted(g_hash, FIELDS["ngram"], mask), d_cols]), n, D)
        # pages as parents: title words
        self.ptitle_ptr, self.ptitle_cols = _csr_unique(
            t_rows, _salted(wh[title_terms], FIELDS["parent_title"], mask), n, D)
        self.bias_col = int(_salted(np.array([0], np.uint64), FIELDS["bias"], mask)[0])
        self.same_domain_col = int(_salted(np.array([0], np.uint64), FIELDS["same_domain"], mask)[0])
        self.page_domain = dom
        self._link_ptr = np.asarray(corpus.link_ptr)
        self.link_dst = np.asarray(corpus.link_dst)

    def rows(self, links: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """CSR ``(indptr, cols, values)`` of the binary, L2-normalized token rows of ``links``."""
        links = np.asarray(links, np.int64)
        nl = len(links)
        src = np.searchsorted(self._link_ptr, links, side="right") - 1  # the page a link is on
        dst = self.link_dst[links].astype(np.int64)
        at, ar = gather_csr(*self._anchor, links)
        ct, cr = gather_csr(*self._context, links)
        lc = np.concatenate([self.col_anchor[at], self.col_context[ct]])
        lr = np.concatenate([ar, cr])
        pc, pr = gather_csr(self.page_ptr, self.page_cols, dst)
        tc, tr = gather_csr(self.ptitle_ptr, self.ptitle_cols, src)
        same = np.flatnonzero(self.page_domain[src] == self.page_domain[dst])
        return _assemble(nl, lr, lc, pr, pc, tr, tc, same, self.bias_col, self.same_domain_col)


class LiveHashedTokens:
    """The :class:`HashedTokens` of a live web (a :class:`~gym_crawl.corpus.page_source.PageSource`): the same
    columns, computed as pages and words are discovered instead of precomputed over a vocabulary and titles that
    are not known in advance. A word's column hash, a page's target tokens (URL words, URL character n-grams,
    host) and its parent-title tokens are cached when first asked for (a page's URL and host never change)."""

    def __init__(self, corpus: Corpus, bits: int):
        self.bits = bits
        self.corpus = corpus
        self.mask = (1 << bits) - 1
        self._wh = np.zeros(0, np.uint64)
        self._dh: dict[int, int] = {}
        self._page: dict[int, np.ndarray] = {}
        self._ptitle: dict[int, np.ndarray] = {}
        self.bias_col = int(_salted(np.array([0], np.uint64), FIELDS["bias"], self.mask)[0])
        self.same_domain_col = int(_salted(np.array([0], np.uint64), FIELDS["same_domain"], self.mask)[0])

    def _word_hashes(self, ids: np.ndarray) -> np.ndarray:
        v = self.corpus.vocab
        if len(ids) and int(ids.max()) >= len(self._wh):
            new = np.fromiter((zlib.crc32(v[i].encode("utf-8")) for i in range(len(self._wh), len(v))), np.uint64,
                              count=len(v) - len(self._wh))
            self._wh = np.concatenate([self._wh, new])
        return self._wh[ids]

    def _title_words(self, p: int) -> np.ndarray:
        c = self.corpus
        return np.asarray(c.title_terms[c.title_ptr[p]:c.title_ptr[p + 1]], np.int64)

    def _ngram_text(self, p: int) -> str:
        """The text whose character n-grams are page ``p``'s n-gram tokens (a live web's page title is its URL)."""
        return str(self.corpus.titles[p])

    def _sources(self, links: np.ndarray) -> np.ndarray:
        """The page each of ``links`` is on (int64)."""
        return np.asarray(self.corpus.link_source)[links].astype(np.int64)  # type: ignore[attr-defined]

    def _page_cols(self, p: int) -> np.ndarray:
        cols = self._page.get(p)
        if cols is None:
            c, m = self.corpus, self.mask
            d = int(c.page_domain[p])
            if d not in self._dh:
                self._dh[d] = zlib.crc32(c.domains[d].encode("utf-8"))
            g = _ngram_hashes(self._ngram_text(p))
            cols = self._page[p] = np.unique(np.concatenate([
                _salted(self._word_hashes(self._title_words(p)), FIELDS["url"], m),
                _salted(g, FIELDS["ngram"], m), _salted(np.array([self._dh[d]], np.uint64), FIELDS["domain"], m)]))
        return cols

    def _cache_pages(self, pages: np.ndarray) -> None:
        """Cache :meth:`_page_cols` of every page of ``pages`` not cached yet, in one vectorized pass (the same
        columns as one page at a time: its URL words, URL character n-grams and host, unique and sorted)."""
        todo = [p for p in dict.fromkeys(pages.tolist()) if p not in self._page]
        if len(todo) < 8:
            for q in todo:
                self._page_cols(q)
            return
        c, m = self.corpus, self.mask
        P = np.asarray(todo, np.int64)
        for d in np.unique(np.asarray(c.page_domain)[P]).tolist():
            if d not in self._dh:
                self._dh[d] = zlib.crc32(c.domains[d].encode("utf-8"))
        t_ptr, t_terms = np.asarray(c.title_ptr, np.int64), np.asarray(c.title_terms, np.int64)
        words, w_rows = gather_csr(t_ptr, t_terms, P)
        g_rows, g_hash = _ngram_rows([self._ngram_text(q) for q in todo])
        dom = np.asarray([self._dh[int(d)] for d in np.asarray(c.page_domain)[P].tolist()], np.uint64)
        rows = np.concatenate([w_rows, g_rows, np.arange(len(P))]).astype(np.int64)
        cols = np.concatenate([_salted(self._word_hashes(words), FIELDS["url"], m), _salted(g_hash, FIELDS["ngram"], m),
                               _salted(dom, FIELDS["domain"], m)]).astype(np.int64)
        key = np.sort(rows * (m + 1) + cols)  # unique pairs, sorted (a sort: no hash table over the batch)
        key = key[np.concatenate([[True], key[1:] != key[:-1]])] if len(key) else key
        r, cc = key // (m + 1), (key % (m + 1)).astype(np.int32)
        bounds = np.searchsorted(r, np.arange(len(P) + 1))
        for i, q in enumerate(todo):
            self._page[q] = cc[bounds[i]:bounds[i + 1]]

    def _ptitle_cols(self, p: int) -> np.ndarray:
        cols = self._ptitle.get(p)
        if cols is None:
            cols = self._ptitle[p] = np.unique(_salted(self._word_hashes(self._title_words(p)), FIELDS["parent_title"],
                                                       self.mask))
        return cols

    def rows(self, links: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """CSR ``(indptr, cols, values)`` of the binary, L2-normalized token rows of ``links``."""
        c = self.corpus
        links = np.asarray(links, np.int64)
        nl = len(links)
        src = self._sources(links)
        dst = np.asarray(c.link_dst)[links].astype(np.int64)
        at, ar = gather_csr(c.anchor_ptr, c.anchor_terms, links)
        ct, cr = gather_csr(c.context_ptr, c.context_terms, links)
        m = self.mask
        lc = np.concatenate([_salted(self._word_hashes(at), FIELDS["anchor"], m),
                             _salted(self._word_hashes(ct), FIELDS["context"], m)])
        lr = np.concatenate([ar, cr])
        self._cache_pages(dst)
        pcs = [self._page[d] for d in dst.tolist()]
        tcs = [self._ptitle_cols(int(s_)) for s_ in src.tolist()]
        pc = np.concatenate(pcs) if pcs else np.zeros(0, np.int32)
        pr = np.repeat(np.arange(nl), [len(x) for x in pcs])
        tc = np.concatenate(tcs) if tcs else np.zeros(0, np.int32)
        tr = np.repeat(np.arange(nl), [len(x) for x in tcs])
        dom = np.asarray(c.page_domain)
        same = np.flatnonzero(dom[src] == dom[dst])
        return _assemble(nl, lr, lc, pr, pc, tr, tc, same, self.bias_col, self.same_domain_col)



class LazyHashedTokens(LiveHashedTokens):
    """The :class:`HashedTokens` of a large static corpus (more than :data:`EAGER_HASHED_PAGES` pages), computed for
    the pages asked about as :class:`LiveHashedTokens` does instead of over every page up front (≈ 110–130 bytes a
    page kept, and a build's temporaries several times that: 0.6 GB and 37 CPU-seconds on a 10^6-page web). The
    same columns as :class:`HashedTokens`: a page's URL words, its URL's (``corpus.urls``) or else its title's
    character n-grams and its host as a target, its title words as a parent; rows are sorted and deduplicated by
    ``_assemble`` either way."""

    def __init__(self, corpus: Corpus, bits: int):
        super().__init__(corpus, bits)
        self._link_ptr = np.asarray(corpus.link_ptr)
        self._no_domains = len(corpus.domains) == 0

    def _ngram_text(self, p: int) -> str:
        c = self.corpus
        return str((c.urls if c.urls is not None else c.titles)[p])

    def _sources(self, links: np.ndarray) -> np.ndarray:
        return np.searchsorted(self._link_ptr, links, side="right") - 1

    def _page_cols(self, p: int) -> np.ndarray:
        if self._no_domains:  # HashedTokens hashes a page of a corpus without domains as domain hash 0
            self._dh.setdefault(int(self.corpus.page_domain[p]), 0)
        return super()._page_cols(p)

    def _cache_pages(self, pages: np.ndarray) -> None:
        if self._no_domains:
            for d in np.unique(np.asarray(self.corpus.page_domain)[np.asarray(pages, np.int64)]).tolist():
                self._dh.setdefault(int(d), 0)
        super()._cache_pages(pages)

def _ngrams_of_blob(blob: np.ndarray, sid: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(string id, hash)`` of every character n-gram (n in NGRAMS) of the strings packed in ``blob`` (lowercased
    bytes as uint64; ``sid``: each byte's string, ``end``: the end offset of each byte's string): a polynomial hash of
    the n bytes and n, one vectorized pass per n."""
    pos = np.arange(len(blob))
    rows, hashes = [], []
    for n in NGRAMS:
        ok = np.flatnonzero(pos + n <= end)
        h = np.full(len(ok), np.uint64(n))
        for j in range(n):
            h = (h * np.uint64(1000003) + blob[ok + j]) & _M32
        rows.append(sid[ok])
        hashes.append(h)
    return np.concatenate(rows), np.concatenate(hashes)


def _ngram_rows(titles: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(row, hash)`` of every character n-gram of each of ``titles`` — :func:`_ngram_hashes` of each, in one
    vectorized pass over their UTF-8 bytes."""
    enc = [t.encode("utf-8") for t in titles]
    lens = np.fromiter((len(e) for e in enc), np.int64, count=len(enc))
    blob = np.frombuffer(b"".join(enc), np.uint8).astype(np.uint64)
    upper = (blob >= 65) & (blob <= 90)
    blob[upper] += np.uint64(32)
    blob[blob == ord("_")] = np.uint64(ord(" "))
    end = np.repeat(np.cumsum(lens), lens)
    sid = np.repeat(np.arange(len(enc)), lens)
    return _ngrams_of_blob(blob, sid, end)


def _ngram_hashes(title: str) -> np.ndarray:
    """The character n-gram hashes of one title, as :func:`_title_ngrams` computes them for a whole table."""
    blob = np.frombuffer(title.encode("utf-8"), np.uint8).astype(np.uint64)
    upper = (blob >= 65) & (blob <= 90)
    blob[upper] += np.uint64(32)
    blob[blob == ord("_")] = np.uint64(ord(" "))
    out = []
    for n in NGRAMS:
        k = len(blob) - n + 1
        if k <= 0:
            continue
        h = np.full(k, np.uint64(n))
        for j in range(n):
            h = (h * np.uint64(1000003) + blob[j:j + k]) & _M32
        out.append(h)
    return np.concatenate(out) if out else np.zeros(0, np.uint64)


def _assemble(nl: int, lr: np.ndarray, lc: np.ndarray, pr: np.ndarray, pc: np.ndarray, tr: np.ndarray,
          tc: np.ndarray, same: np.ndarray, bias_col: int, same_col: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR of binary, L2-normalized rows from (row, column) pairs of the link, target, parent-title,
    bias and same-domain tokens."""
    rows = np.concatenate([lr, pr, tr, np.arange(nl), same])
    cols = np.concatenate([lc, pc, tc, np.full(nl, bias_col, np.int32),
                           np.full(len(same), same_col, np.int32)])
    order = np.lexsort((cols, rows))
    rows, cols = rows[order], cols[order]
    keep = np.ones(len(rows), bool)  # binary: a column counts once per row
    keep[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
    rows, cols = rows[keep], cols[keep]
    cnt = np.bincount(rows, minlength=nl)
    indptr = np.zeros(nl + 1, np.int64)
    np.cumsum(cnt, out=indptr[1:])
    vals = (1.0 / np.sqrt(np.maximum(cnt, 1)))[rows].astype(np.float32)
    return indptr, cols.astype(np.int32), vals


def _csr_unique(rows: np.ndarray, cols: np.ndarray, n_rows: int, D: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR of the unique (row, col) pairs, columns sorted within rows."""
    key = np.unique(np.asarray(rows, np.int64) * D + np.asarray(cols, np.int64))
    r = key // D
    ptr = np.zeros(n_rows + 1, np.int64)
    np.cumsum(np.bincount(r, minlength=n_rows), out=ptr[1:])
    return ptr, (key % D).astype(np.int32)


def _title_ngrams(corpus: Corpus) -> tuple[np.ndarray, np.ndarray]:
    """(page, hash) of every character n-gram (n in NGRAMS) of the lowercased titles (URL text), from
    the titles' UTF-8 blob in one vectorized pass (a polynomial hash of the n bytes and n). A corpus with
    its own URLs (``corpus.urls``: WARC archives, live-web snapshots) uses them instead: there the title is
    the page's HTML ``<title>``, content a crawler does not know before it fetches the page."""
    column = corpus.urls if corpus.urls is not None else corpus.titles
    table = column if isinstance(column, StringTable) else StringTable.from_strings(column)
    blob = np.asarray(table.blob, np.uint8).astype(np.uint64)
    upper = (blob >= 65) & (blob <= 90)
    blob[upper] += np.uint64(32)
    blob[blob == ord("_")] = np.uint64(ord(" "))
    off = np.asarray(table.offsets, np.int64)
    lens = np.diff(off)
    sid = np.repeat(np.arange(len(lens)), lens)
    end = np.repeat(off[1:], lens)
    return _ngrams_of_blob(blob, sid, end)


_HASHED: weakref.WeakKeyDictionary[Corpus, dict[int, HashedTokens | LiveHashedTokens]] = weakref.WeakKeyDictionary()


def hashed_tokens(corpus: Corpus, bits: int = DEFAULT_HASH_BITS) -> HashedTokens | LiveHashedTokens:
    """The :class:`HashedTokens` of ``corpus`` with ``2**bits`` columns (built once per corpus object; a live
    web's :class:`LiveHashedTokens`; a corpus of more than :data:`EAGER_HASHED_PAGES` pages:
    :class:`LazyHashedTokens`, the same columns for the pages asked about)."""
    memo = _HASHED.setdefault(corpus, {})
    if bits not in memo:
        if isinstance(corpus, PageSource):
            memo[bits] = LiveHashedTokens(corpus, bits)
        elif corpus.n_pages > EAGER_HASHED_PAGES:
            memo[bits] = LazyHashedTokens(corpus, bits)
        else:
            memo[bits] = HashedTokens(corpus, bits)
    return memo[bits]


#: the column of hashed values ``h`` in field ``field`` (int32 in [0, mask]); public for checks of hand-made rows
salted = _salted
