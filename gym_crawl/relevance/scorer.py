"""Relevance of fetched pages and of discovered links' text to a :class:`Topic`.

Everything here is vectorized over the pages / links asked for and costs
O(tokens × k); nothing is computed for pages the crawler has not fetched
unless a caller asks (the env asks only for fetched pages and the links it
discovers; oracles and analyses may ask for all pages).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._arith import cosines, norm
from gym_crawl._console import Progress
from gym_crawl._io import (
    FileCheckError,
    atomic_write_json,
    dir_lock,
    file_digest,
    load_npy,
    save_npy,
    seal,
    seal_problem,
    verify_files,
    write_stamp,
    writing_dir,
)
from gym_crawl._memory import populate
from gym_crawl.corpus.core import Corpus
from gym_crawl.pagemap import add_keys, find, find_many, rehash
from gym_crawl.relevance.score_kernels import (
    StoreFill,
    claim_link_rows,
    claim_page_rows,
    copy_links_into,
    copy_pages_into,
    fill_rows_from_store,
    labels_into,
    no_store_fill,
    score_links_into,
    score_pages_into,
    store_fill,
)
from gym_crawl.relevance.topic import Topic, label_hits
from gym_crawl.text.model import TextModel, gather_csr, gather_ranges, weighted_row_sums

__all__ = ["TopicScorer", "PageScores", "LinkScores", "PageTable", "LinkTable", "shared_scorer",
           "fill_topic_tables", "SCORE_TABLES_VERSION", "STORED_TABLES_LINKS"]

#: version of the on-disk score-table cache (:meth:`TopicScorer.save_tables`); a change makes old caches unused
#: (2: cosines summed in float64 in a fixed order, :func:`gym_crawl._arith.cosines`; 3: the key hashes the topic's
#: label hits, not its per-page label mask, so no (n_pages,) mask is built to find the cache; 4: a topic without
#: categories stores no category columns — they are all zero)
SCORE_TABLES_VERSION = 4
#: a generated web (its corpus names a ``generator``) with more links than this stores each topic's score tables on
#: disk at the topic's first use (:meth:`TopicScorer.use_stored_tables`) and its crawls copy a page's scores from
#: them instead of computing them during the step. Below it (a 10^6-page power-law web has 4.3·10^6 links, the
#: 323,000-page synthetic web 8.6·10^6) scoring a first-fetched page costs the step less, and a store per topic
#: (≈ 22 bytes per link and topic, ≈ 4× that with four categories) is not worth its disk across many topics
STORED_TABLES_LINKS = 10_000_000
#: pages / links per batch when :meth:`TopicScorer.store_tables` scores a web straight into the stored files
_STORE_CHUNK = 1 << 16
_TABLE_FILES = {"page_rel": ("pages", "rel"), "page_cat": ("pages", "cat"), "page_tfidf": ("pages", "tfidf"),
                "link_rel": ("links", "rel"), "link_cat": ("links", "cat"), "link_kw_url": ("links", "kw_url"),
                "link_kw_anchor": ("links", "kw_anchor")}
_TABLES_MANIFEST_KEYS = frozenset({"format", "version", "key", "corpus", "topic", "files"})
#: largest magnitude a stored cosine may have (float32 rounding of a unit-vector dot product stays far below)
_COSINE_BOUND = 1.0 + 1e-3


def _check_zero_columns(fname: str, cat: np.ndarray, kc: int) -> None:
    """Refuse to drop category columns ``kc:`` of ``cat`` unless every entry is +0.0 (bit for bit)."""
    if kc < cat.shape[1] and np.any(np.ascontiguousarray(cat[:, kc:]).view(np.uint32)):
        raise ValueError(f"score table {fname}: category columns {kc}.. are not all zero; not dropping them")


def _table_problem(fname: str, a: np.ndarray) -> str | None:
    """What is wrong with the values of stored table ``fname`` (``None``: finite and in range)."""
    if a.dtype == np.bool_:
        return None if not a.size or int(a.view(np.uint8).max()) <= 1 else "bytes other than 0/1 in a bool table"
    if not np.all(np.isfinite(a)):
        return "non-finite scores"
    if fname == "page_tfidf":  # a cosine of non-negative tf-idf vectors: in [0, 1]
        return ("tf-idf scores outside [0, 1] (they are cosines of non-negative vectors)"
                if a.size and (float(a.min()) < 0.0 or float(a.max()) > _COSINE_BOUND) else None)
    if a.size and (float(a.min()) < -_COSINE_BOUND or float(a.max()) > _COSINE_BOUND):
        return "scores outside [-1, 1] (they are cosines)"
    return None


@dataclass
class PageScores:
    """Relevance of fetched pages. Shapes: ``(n,)`` or ``(n, c)``; cosines in [-1, 1].

    ``rel``: cosine of page vector and topic vector; ``cat``: cosines with the
    category vectors; ``tfidf``: tf-idf cosine with the topic words (> 0 iff the
    page contains a topic word); ``label``: ground-truth label match; ``pages``: the page ids of the
    rows when the caller knows them (a reward scheme that scores the page itself, e.g. the classifier
    reward, needs them).
    """

    rel: np.ndarray
    cat: np.ndarray
    tfidf: np.ndarray
    label: np.ndarray
    pages: np.ndarray | None = None


@dataclass
class LinkScores:
    """Relevance predicted from discovered links' anchor/URL/surrounding text (no peeking at targets).

    ``rel`` (n,), ``cat`` (n, c): cosines of the link-text vector; ``kw_url``, ``kw_anchor``
    (n,) bool: a topic keyword occurs in the URL (target title) / anchor text.
    """

    rel: np.ndarray
    cat: np.ndarray
    kw_url: np.ndarray
    kw_anchor: np.ndarray


def _cos(vecs: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Cosines of rows of ``vecs`` (n, k) with unit rows of ``queries`` (q, k) → (n, q) float32: float64 sums in
    a fixed order (:func:`gym_crawl._arith.cosines`), so a row's cosines are the same bits on any CPU and thread
    count and whatever other rows or queries share the call."""
    return cosines(vecs, queries)


class TopicScorer:
    """Per-topic relevance primitives, precomputed once per (corpus, topic) at ``reset``.

    Args:
        text: the corpus' :class:`TextModel`.
        topic: the target topic.
        n_categories: number of category slots; the topic's categories fill the first ones,
            the rest score 0.
    """

    def __init__(self, text: TextModel, topic: Topic, n_categories: int = 4):
        self.text = text
        self.corpus: Corpus = text.corpus
        self.topic = topic
        if len(topic.categories) > n_categories:
            raise ValueError(f"topic {topic.name!r} has {len(topic.categories)} categories; "
                             f"the env has {n_categories} category slots (n_categories=...)")
        self.n_categories = n_categories
        qs = [text.query_vector(list(topic.words))]
        for c in topic.categories:
            qs.append(text.query_vector([c]))
        self.queries = np.zeros((1 + n_categories, text.dim), np.float32)
        self.queries[: len(qs)] = np.asarray(qs, np.float32)
        V = self.corpus.n_words
        self.topic_word_mask = np.zeros(V, bool)
        self.topic_word_mask[[self.corpus.word_id(w) for w in topic.words]] = True
        self.keyword_mask = np.zeros(V, bool)
        kid = [self.corpus.word_id(w) for w in topic.keywords]
        self.keyword_mask[[i for i in kid if i >= 0]] = True
        self._tables: dict[Any, Any] = {}
        self._label_hits: np.ndarray | None = None
        qidf = text.idf * self.topic_word_mask
        self._tfidf_query = qidf / max(norm(qidf), 1e-12)
        self._queries_t = np.ascontiguousarray(self.queries.T, dtype=np.float64)  # what the cosine kernels read
        self._label_mask: np.ndarray | None = None
        #: the stored tables (:meth:`attach_stored_tables`) that keyed tables copy scored rows from: memory-mapped,
        #: read-only, rows = page / link ids; ``None``: keyed tables compute their rows
        self._source: dict[str, np.ndarray] | None = None

    @property
    def label_mask(self) -> np.ndarray:
        """(n_pages,) bool: the pages carrying the topic's label (:meth:`Topic.label_mask`), built at the first ask
        (a keyed table reads the labels of the pages it scores only: :meth:`labels_of`)."""
        if self._label_mask is None:
            self._label_mask = self.topic.label_mask(self.corpus)
        return self._label_mask

    def labels_of(self, pages: np.ndarray) -> np.ndarray:
        """(n,) bool: ``label_mask[pages]``, read from ``pages``' own labels (no (n_pages,) mask is built)."""
        pages = np.asarray(pages, np.int64)
        if self._label_mask is not None or not self.topic.label:
            return self.label_mask[pages] if self._label_mask is not None else np.zeros(len(pages), bool)
        ids, rp = gather_csr(self.corpus.label_ptr, self.corpus.label_ids, pages)
        return np.bincount(rp[self._hits()[ids]], minlength=len(pages)) > 0

    def _hits(self) -> np.ndarray:
        """(n_labels,) bool: the corpus' labels that are the topic's label or below it (``KeyError`` for a label
        the corpus does not have, as :meth:`Topic.label_mask`)."""
        if self._label_hits is None:
            assert self.topic.label, "a topic without a label has no label hits"
            hits = label_hits(self.topic.label, self.corpus)
            if not hits.any():
                self.label_mask  # noqa: B018  (raises the topic's KeyError naming the unknown label)
            self._label_hits = hits
        return self._label_hits

    def labels_into(self, pages: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
        """``out[rows] = labels_of(pages)``, compiled (rows of a keyed table: ``False`` until written, so nothing to
        write for a topic without a label)."""
        if self.topic.label:
            labels_into(pages, rows, self.corpus.label_ptr, self.corpus.label_ids, self._hits(), out)

    def set_keywords(self, words: list[str]) -> None:
        """Replace the keyword set (e.g. after TRES keyword expansion).

        A process-wide scorer (:func:`shared_scorer`) changed this way is first withdrawn from the
        process-wide memo: envs made afterwards get a scorer with the topic's own keywords, so one env's
        keyword change does not alter later envs' trajectories.
        """
        per_corpus = _SHARED.get(self.corpus)
        if per_corpus is not None:
            for k in [k for k, v in per_corpus.items() if v is self]:
                del per_corpus[k]
        self.keyword_mask[:] = False
        self._source = None  # stored keyword flags are the old keywords': computed from here on
        ids = [self.corpus.word_id(w) for w in words]
        self.keyword_mask[[i for i in ids if i >= 0]] = True
        links = self._tables.get("links")
        if links is not None:  # keyword flags of links change: rescore them on demand
            links.forget()

    def score_pages(self, pages: np.ndarray) -> PageScores:
        """Scores of ``pages`` (int array). Cost O(Σ page terms × k)."""
        pages = np.asarray(pages, dtype=np.int64)
        c = self.corpus
        cos = _cos(self.text.page_vectors(pages), self.queries)
        lo, hi = c.text_lo, c.text_hi
        t, rp = gather_ranges(lo, hi, c.text_terms, pages)
        cnt, _ = gather_ranges(lo, hi, c.text_counts, pages)
        w = cnt * self.text.idf[t]
        sq = np.bincount(rp, weights=w * w, minlength=len(pages))
        dot = np.bincount(rp, weights=w * self._tfidf_query[t], minlength=len(pages))
        tfidf = np.divide(dot, np.sqrt(sq), out=np.zeros(len(pages)), where=sq > 0).astype(np.float32)
        return PageScores(rel=cos[:, 0], cat=cos[:, 1:], tfidf=tfidf, label=self.labels_of(pages),
                          pages=np.asarray(pages, np.int64))

    def score_links(self, links: np.ndarray) -> LinkScores:
        """Scores of link ids ``links`` from their anchor/URL/context text only. Cost O(tokens × k)."""
        links = np.asarray(links, dtype=np.int64)
        t, rp, src = self.text.link_tokens(links)
        vec = weighted_row_sums(self.text.vectors, t, self.text.idf[t], rp, len(links))
        cos = _cos(vec, self.queries)
        kw = self.keyword_mask[t]
        kw_anchor = np.bincount(rp[kw & (src == 0)], minlength=len(links)) > 0
        kw_url = np.bincount(rp[kw & (src == 1)], minlength=len(links)) > 0
        return LinkScores(rel=cos[:, 0], cat=cos[:, 1:], kw_url=kw_url, kw_anchor=kw_anchor)

    # ------------------------------------------------------------------ precomputed tables
    def page_table(self) -> PageTable:
        """Scores of pages, filled on demand (``PageTable.ensure``) and cached per topic: internal
        precomputation for the crawl step — a crawl reads a page's entry only when it
        fetches the page. Entries equal ``score_pages([p])`` bit for bit. When :meth:`save_tables`
        stored this topic's complete tables on disk, they are memory-mapped read-only instead."""
        return self._table("pages", PageTable)  # type: ignore[return-value]

    def link_table(self) -> LinkTable:
        """Scores of links, filled per source page on demand (``LinkTable.ensure``) and cached per
        topic; entries equal ``score_links(range of the page's links)`` bit for bit (or memory-mapped
        from :meth:`save_tables`' cache, as :meth:`page_table`)."""
        return self._table("links", LinkTable)  # type: ignore[return-value]

    def reward_table(self, key: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The per-page reward cache that every crawl of this topic shares under one reward scheme:
        ``(reward, relevant, done)`` float32, bool, bool, indexed by the page table's rows
        (:meth:`PageTable.rows`; dense tables: page ids), zero / ``False`` at the first ask and filled by the crawls
        (``done[row]``: that page's entries are set). The arrays are the page table's (:meth:`PageTable.reward_rows`):
        replaced when it grows, so read them again after scoring pages.

        :param key: identifies the scheme and its parameters (a crawl state's reward key, e.g.
            ``("binary", labelled)``); the same key always gives the same arrays.
        """
        return self.page_table().reward_rows(key)

    def _table(self, name: str, cls: type) -> object:
        """The cached table ``name``; at the first ask, the :meth:`save_tables` cache if there is one
        (both tables at once), else an empty ``cls`` filled on demand."""
        t = self._tables.get(name)
        if t is None:
            if not self._tables.get("tried-disk"):
                self._tables["tried-disk"] = True
                if self.stores_tables():
                    self.use_stored_tables()
                else:
                    self.load_tables()
            t = self._tables.get(name)
            if t is None:
                t = self._tables[name] = cls(self)
        return t

    # ------------------------------------------------------------------ on-disk cache of the tables
    def tables_key(self) -> str | None:
        """Identity of this scorer's tables: a hash of everything they are a function of — the saved
        corpus (its manifest checksum), the text model's idf and word vectors, the topic's query vectors,
        tf-idf query and keyword mask, the corpus labels the topic's label covers (which, with the corpus, fix the
        pages' labels) and the number of category slots. ``None`` for a corpus that is not saved on disk (nothing
        to cache against)."""
        c = self.corpus
        if c.checksum is None or c.path is None:
            return None
        h = hashlib.sha256(f"v{SCORE_TABLES_VERSION}|{c.checksum}|{self.n_categories}".encode())
        hits = self._hits() if self.topic.label else np.zeros(0, bool)
        for a in (self.text.idf, self.text.vectors, self.queries, self._tfidf_query, self.keyword_mask, hits):
            a = np.ascontiguousarray(a)
            h.update(f"|{a.dtype}{a.shape}|".encode())
            h.update(a.tobytes())
        return h.hexdigest()[:32]

    def tables_path(self) -> Path | None:
        """Where :meth:`save_tables` stores (and :meth:`load_tables` looks for) this scorer's tables:
        ``<data_dir>/score_tables/<corpus name>-<topic>-<key>`` (``None``: unsaved corpus)."""
        key = self.tables_key()
        if key is None:
            return None
        from gym_crawl.corpus.cache import data_dir

        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in f"{self.corpus.name}-{self.topic.name}")
        return data_dir() / "score_tables" / f"{safe}-{key}"

    def cat_columns(self) -> int:
        """Category columns the stored tables keep: all ``n_categories`` for a topic with categories, none for a
        topic without (every category score is then exactly zero, checked when they are stored)."""
        return self.n_categories if self.topic.categories else 0

    def save_tables(self, path: str | Path | None = None) -> Path:
        """Score every page and link of the topic (:meth:`PageTable.ensure_all`, :meth:`LinkTable.ensure_all`)
        and store the tables as ``.npy`` files + ``manifest.json`` (sizes, sha256s, shapes, dtypes, the
        tables key), written under a temporary ``.partial`` directory and renamed into place when complete,
        so a half-written cache is never seen. Every process that then builds a scorer for the same
        corpus, text model and topic memory-maps these files read-only (:meth:`load_tables`): the OS keeps
        one copy for all of them, instead of each process filling its own tables as it crawls. A topic without
        categories stores no category columns (:meth:`cat_columns`). :meth:`store_tables` writes the same files
        without holding the tables in memory."""
        key = self.tables_key()
        path = Path(path) if path is not None else self.tables_path()
        if key is None or path is None:
            raise ValueError("save_tables needs a corpus saved on disk (Corpus.save / a cached loader)")
        pt, lt = self.page_table(), self.link_table()
        pt.ensure_all()
        lt.ensure_all()
        if getattr(pt, "mapped", False) and getattr(lt, "mapped", False) and path == self.tables_path():
            return path  # already stored and mapped from there
        kc = self.cat_columns()

        def write(tmp: Path) -> None:
            for fname, (which, attr) in _TABLE_FILES.items():
                arr = np.asarray(getattr(pt if which == "pages" else lt, attr))
                if attr == "cat":
                    _check_zero_columns(fname, arr, kc)
                    arr = arr[:, :kc]
                save_npy(tmp / f"{fname}.npy", np.ascontiguousarray(arr))

        return self._write_tables(path, key, write)

    def store_tables(self, path: str | Path | None = None, progress: bool = True) -> Path:
        """Score every page and link of the topic straight into the stored files of :meth:`save_tables` (the same
        files, the same bits), batch by batch, without building the tables in memory (the process holds a batch of
        scores; the files' pages are page cache): what a web too large for its tables in memory needs. This scorer's
        own tables are left as they are. ``progress``: the pages and links scored as a progress bar on stderr."""
        key = self.tables_key()
        path = Path(path) if path is not None else self.tables_path()
        if key is None or path is None:
            raise ValueError("store_tables needs a corpus saved on disk (Corpus.save / a cached loader)")
        from numpy.lib.format import open_memmap

        c, text, C, kc = self.corpus, self.text, self.n_categories, self.cat_columns()
        n, L, B = c.n_pages, c.n_links, _STORE_CHUNK
        shapes = {"page_rel": (n,), "page_cat": (n, kc), "page_tfidf": (n,), "link_rel": (L,), "link_cat": (L, kc),
                  "link_kw_url": (L,), "link_kw_anchor": (L,)}
        dtypes = {"link_kw_url": np.bool_, "link_kw_anchor": np.bool_}

        def write(tmp: Path) -> None:
            out = {f: open_memmap(tmp / f"{f}.npy", mode="w+", dtype=dtypes.get(f, np.float32), shape=shapes[f])
                   for f in _TABLE_FILES}
            rel, cat = np.zeros(B, np.float32), np.zeros((B, C), np.float32)
            tfidf, kwu, kwa = np.zeros(B, np.float32), np.zeros(B, bool), np.zeros(B, bool)
            rows = np.arange(B, dtype=np.int64)
            with Progress(n + L, f"score tables of topic {self.topic.name!r} on {c.name!r} (stored once)",
                          unit="pages and links", enabled=progress, announce=True) as bar:
                for a in range(0, n, B):
                    m = min(B, n - a)
                    score_pages_into(np.arange(a, a + m, dtype=np.int64), rows[:m], c.text_lo, c.text_hi,
                                     c.text_terms, c.text_counts, text.idf, text.vectors, self._queries_t,
                                     self._tfidf_query, rel, cat, tfidf)
                    _check_zero_columns("page_cat", cat[:m], kc)
                    out["page_rel"][a:a + m], out["page_tfidf"][a:a + m] = rel[:m], tfidf[:m]
                    out["page_cat"][a:a + m] = cat[:m, :kc]
                    bar.update(m)
                for a in range(0, L, B):
                    m = min(B, L - a)
                    score_links_into(np.arange(a, a + m, dtype=np.int64), rows[:m], c.anchor_ptr, c.anchor_terms,
                                     c.title_ptr, c.title_terms, c.context_ptr, c.context_terms, c.link_dst, text.idf,
                                     text.vectors, self._queries_t, self.keyword_mask, rel, cat, kwu, kwa)
                    _check_zero_columns("link_cat", cat[:m], kc)
                    out["link_rel"][a:a + m], out["link_cat"][a:a + m] = rel[:m], cat[:m, :kc]
                    out["link_kw_url"][a:a + m], out["link_kw_anchor"][a:a + m] = kwu[:m], kwa[:m]
                    bar.update(m)
            for f, mm in out.items():
                mm.flush()
                with open(tmp / f"{f}.npy", "rb+") as fh:
                    os.fsync(fh.fileno())
            out.clear()

        return self._write_tables(path, key, write)

    def _write_tables(self, path: Path, key: str, write: Any) -> Path:
        """Write the tables with ``write(tmp)`` into a ``.partial`` directory, check their values, seal the manifest
        and rename the directory into ``path`` (a half-written cache is never seen at ``path``)."""
        with writing_dir(path) as tmp:
            write(tmp)
            files = {}
            for fname in _TABLE_FILES:
                arr = load_npy(tmp / f"{fname}.npy", mmap=True)
                bad = _table_problem(fname, arr)
                if bad is not None:
                    raise ValueError(f"score table {fname} of topic {self.topic.name!r}: {bad}; not storing it")
                files[f"{fname}.npy"] = {**file_digest(tmp / f"{fname}.npy"), "shape": list(arr.shape),
                                         "dtype": str(arr.dtype)}
                del arr
            atomic_write_json(tmp / "manifest.json", seal({
                "format": "gym_crawl-score-tables", "version": SCORE_TABLES_VERSION, "key": key,
                "corpus": self.corpus.name, "topic": self.topic.name, "files": files}))
            write_stamp(tmp, hashlib.sha256((tmp / "manifest.json").read_bytes()).hexdigest(), files)
        return path

    def load_tables(self, path: str | Path | None = None, verify: bool = False) -> bool:
        """Memory-map the tables :meth:`save_tables` stored (read-only; the keyword flags copy-on-write,
        since :meth:`set_keywords` rewrites them) and use them as this scorer's complete tables. Returns
        ``False`` (and leaves the scorer as it was) when there is no cache or it belongs to other inputs
        (key). A damaged cache — manifest not matching its seal, a file missing, truncated or altered
        against its full sha256 (checked on the first open of each file as it is now and stamped, as
        :meth:`Corpus.load` does; ``verify=True``: every time), a score that is not finite or not in its
        range — is reported in one warning naming the file, removed, and ``False`` returned: the scorer
        then fills its tables itself. Category columns a topic without categories did not store are zeros
        (not resident until written)."""
        arrays = self._open_stored(path, verify)
        if arrays is None:
            return False
        C = self.n_categories
        for fname in ("page_cat", "link_cat"):
            a = arrays[fname]
            if a.shape[1] < C:  # no category columns stored: all zero
                arrays[fname] = np.zeros((a.shape[0], C), np.float32)
        pt, lt = PageTable(self, arrays=arrays), LinkTable(self, arrays=arrays)
        self._tables["pages"], self._tables["links"] = pt, lt
        self._tables["tried-disk"] = True
        return True

    def attach_stored_tables(self, path: str | Path | None = None, verify: bool = False) -> bool:
        """Memory-map the stored tables (:meth:`save_tables`, :meth:`store_tables`; checked as :meth:`load_tables`
        checks them) as the *source* of this scorer's keyed tables: a page's row, or its links' rows, are copied
        from them when a crawl first needs them, instead of being computed from the page's and links' text — the
        same bits, a few cache misses instead of the text's. The tables stay keyed (memory follows the pages
        scored; the stored files are page cache, mapped into the process up front by :func:`gym_crawl._memory.populate`
        within its budget: a first fetch then takes no page fault). ``False`` (nothing changed) without a usable
        store. A later :meth:`set_keywords` detaches them (the stored keyword flags are the old keywords')."""
        arrays = self._open_stored(path, verify)
        if arrays is None:
            return False
        self._source = {k: np.asarray(v) for k, v in arrays.items()}
        self._tables["tried-disk"] = True
        # a crawl reads them at random, one page or its links per first fetch: mapped up front, no page faults
        populate(arrays.values())
        return True

    def fill_from_store(self, pages: np.ndarray, reward: tuple[tuple, tuple] | None = None) -> np.ndarray | None:
        """Give ``pages`` their rows in the keyed page and link tables, copied from the attached stored tables
        (:meth:`attach_stored_tables`), in one compiled call: what :meth:`PageTable.ensure_many` and
        :meth:`LinkTable.ensure` do there. ``reward``: ``(key, form)`` — a reward cache's key (:meth:`reward_table`)
        and its scheme's :meth:`~gym_crawl.relevance.rewards.RewardScheme.elementwise` form: the same call caches the
        pages' rewards the scheme would give that are not cached yet. Returns the pages' page rows; ``None`` (nothing
        done) when the tables are not keyed or no store is attached."""
        src = self._source
        pt, lt = self.page_table(), self.link_table()
        if src is None or not pt.keyed or not lt.keyed:
            return None
        pages = np.asarray(pages, np.int64).reshape(-1)
        n = len(pages)
        pt._grow(pt.n_rows + n)
        rows = np.empty(n, np.int64)
        c = self.corpus
        labelled = bool(self.topic.label)
        hits = self._hits() if labelled else _NO_HITS
        if reward is not None:
            key, (kind, thr, val, word, miss) = reward
        else:
            key, (kind, thr, val, word, miss) = None, (-1, _NO_F32, _NO_F32, 0.0, 0.0)
        while True:  # a second pass only when the link table had to grow (the kernel checks its room first)
            rw = pt.reward_rows(key) if key is not None else _NO_REWARDS
            pn, ln, m = fill_rows_from_store(pages, pt.keys, pt.slots, pt.row_page, pt.n_rows, pt.rel, pt.cat,
                                             pt.tfidf, pt.label, src["page_rel"], src["page_cat"], src["page_tfidf"],
                                             c.label_ptr, c.label_ids, hits, labelled, lt.keys, lt.slots, lt.n_rows,
                                             lt.n_pages_scored, lt.lo, lt.hi, lt.rel, lt.cat, lt.kw_url,
                                             lt.kw_anchor, src["link_rel"], src["link_cat"], src["link_kw_url"],
                                             src["link_kw_anchor"], rows, rw[0], rw[1], rw[2], kind, thr, val, word,
                                             miss)
            if pn >= 0:
                break
            lt._room(n, int(ln))
        pt.n_rows, lt.n_rows = int(pn), int(ln)
        lt.n_pages_scored += int(m)
        return rows

    def store_fill(self, reward: tuple[tuple, tuple] | None) -> StoreFill:
        """What :meth:`fill_from_store` does with ``reward`` (``(key, form)``), as a compiled call's argument
        (:class:`~gym_crawl.relevance.score_kernels.StoreFill`, for
        :func:`~gym_crawl.relevance.score_kernels.fill_store_rows`): the same rows, scores and cached rewards. Not
        ``on`` without a store, with a table dense or without a reward form; it stops filling (the caller falls back
        to :meth:`fill_from_store`) once either table's arrays are replaced: build it again then."""
        src = self._source
        pt, lt = self.page_table(), self.link_table()
        if src is None or not pt.keyed or not lt.keyed or reward is None:
            return no_store_fill()
        key, form = reward
        c = self.corpus
        labelled = bool(self.topic.label)
        return store_fill({"keys": pt.keys, "slots": pt.slots, "row_page": pt.row_page, "rel": pt.rel, "cat": pt.cat,
                           "tfidf": pt.tfidf, "label": pt.label, "ctr": pt.ctr, "gen": pt.gen}, src, c.label_ptr,
                          c.label_ids, self._hits() if labelled else _NO_HITS, labelled,
                          {"keys": lt.keys, "slots": lt.slots, "lo": lt.lo, "hi": lt.hi, "rel": lt.rel, "cat": lt.cat,
                           "kw_url": lt.kw_url, "kw_anchor": lt.kw_anchor, "ctr": lt.ctr, "gen": lt.gen},
                          pt.reward_rows(key), form)

    @property
    def stored_source(self) -> bool:
        """Whether keyed tables copy their rows from stored tables (:meth:`attach_stored_tables`)."""
        return self._source is not None

    def stores_tables(self) -> bool:
        """Whether this topic's tables are stored on disk at their first use (:meth:`use_stored_tables`): a saved
        generated web (its corpus names a ``generator``) with more than :data:`STORED_TABLES_LINKS` links."""
        c = self.corpus
        return bool(c.meta.get("generator")) and c.n_links > STORED_TABLES_LINKS and self.tables_key() is not None

    def use_stored_tables(self, progress: bool = True) -> bool:
        """Attach this topic's stored tables (:meth:`attach_stored_tables`), storing them first when there are none
        yet (:meth:`store_tables`, with a progress bar; once per corpus, text model and topic, under
        :meth:`tables_path`). A store that cannot be written (a read-only or full data directory) is reported in
        one warning and the crawls compute their scores as they go; returns whether stored tables are attached."""
        if self.attach_stored_tables():
            return True
        path = self.tables_path()
        assert path is not None  # stores_tables() holds
        try:
            with dir_lock(path.with_name(f"{path.name}-store")):  # concurrent first uses: one stores, the others wait
                if self.attach_stored_tables():
                    return True
                self.store_tables(progress=progress)
        except OSError as e:
            from gym_crawl.corpus.cache import warn_once

            warn_once(f"store-tables:{self.tables_path()}", f"cannot store the score tables of topic "
                                                            f"{self.topic.name!r} ({e}); scoring pages as they are "
                                                            f"fetched")
            return False
        return self.attach_stored_tables()

    def _open_stored(self, path: str | Path | None, verify: bool) -> dict[str, np.ndarray] | None:
        """The stored tables at ``path`` (default :meth:`tables_path`), memory-mapped and checked (the keyword flags
        copy-on-write); ``None`` when there are none or they belong to other inputs; a damaged store is removed
        (:meth:`_damaged_tables`)."""
        key = self.tables_key()
        path = Path(path) if path is not None else self.tables_path()
        if key is None or path is None or not (path / "manifest.json").is_file():
            return None
        mf = path / "manifest.json"
        try:
            raw = mf.read_bytes()
            m = json.loads(raw.decode("utf-8"))
        except (OSError, ValueError) as e:
            self._damaged_tables(path, f"{mf}: unreadable ({e})")
            return None
        problem = seal_problem(m, _TABLES_MANIFEST_KEYS)
        if problem is not None:
            self._damaged_tables(path, f"{mf}: {problem}")
            return None
        if (m.get("format") != "gym_crawl-score-tables" or m.get("version") != SCORE_TABLES_VERSION
                or m.get("key") != key):
            return None
        if not isinstance(m.get("files"), dict) or set(m["files"]) != {f"{f}.npy" for f in _TABLE_FILES}:
            self._damaged_tables(path, f"{mf}: field 'files' does not list the {len(_TABLE_FILES)} tables")
            return None
        try:
            hashed = verify_files(path, m["files"], key=hashlib.sha256(raw).hexdigest(), force=verify)
        except FileCheckError as e:
            self._damaged_tables(path, f"{path / e.file}: {e.problem}")
            return None
        n, L, kc = self.corpus.n_pages, self.corpus.n_links, self.cat_columns()
        want = {"page_rel": [n], "page_cat": [n, kc], "page_tfidf": [n], "link_rel": [L], "link_cat": [L, kc],
                "link_kw_url": [L], "link_kw_anchor": [L]}
        arrays: dict[str, np.ndarray] = {}
        for fname in _TABLE_FILES:
            fp, spec = path / f"{fname}.npy", m["files"][f"{fname}.npy"]
            try:
                if fname.startswith("link_kw"):
                    a = np.load(fp, mmap_mode="c", allow_pickle=False)
                else:
                    a = load_npy(fp, mmap=True)
            except (OSError, ValueError, EOFError) as e:
                self._damaged_tables(path, f"{fp}: unreadable .npy ({e})")
                return None
            if list(a.shape) != want[fname] or list(a.shape) != spec.get("shape") or str(a.dtype) != spec.get("dtype"):
                self._damaged_tables(path, f"{fp}: shape/dtype {list(a.shape)}/{a.dtype}, expected {want[fname]} as "
                                           f"the manifest's {spec.get('shape')}/{spec.get('dtype')}")
                return None
            if hashed or verify:  # values scanned with the hash (first open of these files), trusted after
                bad = _table_problem(fname, np.asarray(a))
                if bad is not None:
                    self._damaged_tables(path, f"{fp}: {bad}")
                    return None
            arrays[fname] = a if fname.startswith("link_kw") else np.asarray(a)
        return arrays

    def _damaged_tables(self, path: Path, problem: str) -> None:
        """Report a damaged score-table cache once and remove it (the next :meth:`save_tables` rewrites it)."""
        from gym_crawl.corpus.cache import warn_once

        warn_once(f"damaged:{path}", f"score-table cache unusable ({problem}); removing it, the scores are "
                                     f"computed again")
        shutil.rmtree(path, ignore_errors=True)
        return None

    def all_page_scores(self, chunk: int = 50_000) -> PageScores:
        """Scores of every page (for oracles and analyses only — never shown to agents)."""
        parts = [self.score_pages(np.arange(a, min(a + chunk, self.corpus.n_pages)))
                 for a in range(0, self.corpus.n_pages, chunk)]
        cols = {f: np.concatenate([getattr(p, f) for p in parts]) for f in ("rel", "cat", "tfidf", "label")}
        return PageScores(**cols, pages=np.arange(self.corpus.n_pages, dtype=np.int64))


#: rows a keyed table starts with (they double as pages are scored)
MIN_ROWS = 1024


_NO_HITS = np.zeros(1, bool)
_NO_F32 = np.zeros(0, np.float32)
_NO_REWARDS = (np.zeros(1, np.float32), np.zeros(1, bool), np.ones(1, bool))


def _empty_map(cap: int, slot_dtype: type) -> tuple[np.ndarray, np.ndarray]:
    """An empty page map (:mod:`gym_crawl.pagemap`) of ``2 * cap`` entries."""
    return np.full(2 * cap, -1, np.int32), np.zeros(2 * cap, slot_dtype)


def _grown(a: np.ndarray, n: int, cap: int) -> np.ndarray:
    """``a`` (capacity on axis 0) at capacity ``cap``, its first ``n`` rows kept, the rest zero."""
    out = np.zeros((cap,) + a.shape[1:], a.dtype)
    out[:n] = a[:n]
    return out


class _KeyedTable:
    """What :class:`PageTable` and :class:`LinkTable` share: the counters array ``ctr`` a compiled fill advances
    (rows used at ``ctr[0]``, the generation last) and the keyed layout's page map ``keys``/``slots``."""

    ctr: np.ndarray
    keys: np.ndarray
    slots: np.ndarray

    @property
    def n_rows(self) -> int:
        """Rows used (keyed)."""
        return int(self.ctr[0])

    @n_rows.setter
    def n_rows(self, n: int) -> None:
        self.ctr[0] = n

    @property
    def gen(self) -> int:
        """How many times the arrays were replaced (grown, turned dense, or for links forgotten)."""
        return int(self.ctr[-1])

    @gen.setter
    def gen(self, g: int) -> None:
        self.ctr[-1] = g

    def _find_many(self, pages: np.ndarray) -> np.ndarray:
        """(n,) int64 slot of each of ``pages`` (int64) in the page map (-1: not there)."""
        out = np.empty(len(pages), np.int64)
        if len(pages):
            find_many(self.keys, self.slots, pages, out)
        return out


class PageTable(_KeyedTable):
    """Per-topic scores of the pages scored so far, one *row* per page: ``rel`` (rows,), ``cat`` (rows, C),
    ``tfidf`` (rows,), ``label`` (rows,) bool, and the per-page reward caches of the reward schemes
    (:meth:`reward_rows`); :meth:`rows` gives pages' rows (-1: not scored).

    Two layouts, the same values:

    * **keyed** (``keyed``; while the table is not complete): a page gets the next row when it is scored, found
      through an open-addressing page map (:mod:`gym_crawl.pagemap`), and the columns double as rows are
      added — memory and the cache lines a crawl reads follow the pages scored, not the web's size;
    * **dense** (once :meth:`ensure_all` scored every page, or memory-mapped from :meth:`TopicScorer.save_tables`'
      cache): the row of page ``p`` is ``p``, ``done[p]`` says it is scored.

    ``ensure(p)`` scores one page as ``score_pages([p])`` does; ``ensure_many`` and ``ensure_all()`` score batches
    with the same result: page vectors, cosines and tf-idf sums are computed row by row in a fixed order,
    whatever the batch. The arrays are replaced when the table grows or turns dense (``gen`` counts it): read
    them again after an ``ensure``.
    """

    def __init__(self, scorer: TopicScorer, arrays: dict[str, np.ndarray] | None = None):
        self.scorer = scorer
        #: (2,) int64: rows used and the generation (:attr:`n_rows`, :attr:`gen`), in an array a compiled fill
        #: (:class:`~gym_crawl.relevance.score_kernels.StoreFill`) advances and checks
        self.ctr = np.zeros(2, np.int64)
        #: per reward key: ``(reward, relevant, done)`` by row (:meth:`reward_rows`)
        self.rewards: dict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        #: memory-mapped (read-only) from the :meth:`TopicScorer.save_tables` cache: complete, never written
        self.mapped = arrays is not None
        self.complete = False
        if arrays is not None:
            self._dense(arrays["page_rel"], arrays["page_cat"], arrays["page_tfidf"], np.ones(scorer.corpus.n_pages,
                                                                                            bool))
            self.complete = True
            return
        C = scorer.n_categories
        self.keyed = True
        self.n_rows = 0
        self.keys, self.slots = _empty_map(MIN_ROWS, np.int32)
        self.row_page = np.zeros(MIN_ROWS, np.int32)
        self.rel = np.zeros(MIN_ROWS, np.float32)
        self.cat = np.zeros((MIN_ROWS, C), np.float32)
        self.tfidf = np.zeros(MIN_ROWS, np.float32)
        self.label = np.zeros(MIN_ROWS, bool)
        self.done = np.zeros(0, bool)

    def _dense(self, rel: np.ndarray, cat: np.ndarray, tfidf: np.ndarray, done: np.ndarray) -> None:
        self.keyed = False
        self.rel, self.cat, self.tfidf, self.done = rel, cat, tfidf, done
        self.label = np.asarray(self.scorer.label_mask, bool)
        self.keys, self.slots = _empty_map(1, np.int32)
        self.n_rows = 0
        self.row_page = np.zeros(0, np.int32)

    @property
    def capacity(self) -> int:
        """Rows the arrays hold (dense: the corpus' pages)."""
        return int(self.rel.shape[0])

    def rows(self, pages: np.ndarray) -> np.ndarray:
        """(n,) int64 row of each of ``pages`` (-1: not scored yet)."""
        pages = np.asarray(pages, np.int64).reshape(-1)
        if not self.keyed:
            return np.where(self.done[pages], pages, -1)
        return self._find_many(pages)

    def row(self, page: int) -> int:
        """The row of ``page`` (-1: not scored yet)."""
        if not self.keyed:
            return int(page) if self.done[page] else -1
        return int(find(self.keys, self.slots, int(page)))

    def reward_rows(self, key: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The per-page reward cache of one reward scheme, by row: ``(reward, relevant, done)`` float32, bool, bool,
        zero / ``False`` at the first ask and filled by the crawls (``done[row]``: that page's entries are set)."""
        rw = self.rewards.get(key)
        if rw is None:
            n = self.capacity
            rw = self.rewards[key] = (np.zeros(n, np.float32), np.zeros(n, bool), np.zeros(n, bool))
        return rw

    def _grow(self, need: int) -> None:
        """Make room for ``need`` rows in all (keyed) columns and the page map."""
        cap = self.capacity
        if need <= cap:
            return
        while cap < need:
            cap *= 2
        n = self.n_rows
        for name in ("row_page", "rel", "cat", "tfidf", "label"):
            setattr(self, name, _grown(getattr(self, name), n, cap))
        self.rewards = {k: tuple(_grown(a, n, cap) for a in v) for k, v in self.rewards.items()}  # type: ignore[misc]
        self.keys, self.slots = _empty_map(cap, np.int32)
        rehash(self.row_page, n, self.keys, self.slots)
        self.gen += 1

    def ensure(self, page: int) -> None:
        """Score ``page`` if it is not scored yet."""
        if self.row(page) < 0:
            self.ensure_many(np.array([page], np.int64))

    def ensure_many(self, pages: np.ndarray) -> None:
        """Score those of ``pages`` not scored yet, in one call (each page's row is computed on its own, in a fixed
        order: the values :meth:`ensure` gives one page at a time)."""
        pages = np.asarray(pages, np.int64).reshape(-1)
        sc = self.scorer
        if self.keyed:  # compiled: new rows claimed and scored straight into them (the values score_pages gives)
            n = self.n_rows
            self._grow(n + len(pages))
            new = np.empty(len(pages), np.int64)
            m = int(claim_page_rows(pages, self.keys, self.slots, self.row_page, n, new))
            if m:
                todo, rows = new[:m], np.arange(n, n + m, dtype=np.int64)
                self.n_rows = n + m
                c, src = sc.corpus, sc._source
                if src is not None:  # stored tables: the rows are copied (the same bits)
                    copy_pages_into(todo, rows, src["page_rel"], src["page_cat"], src["page_tfidf"], self.rel,
                                    self.cat, self.tfidf)
                else:
                    score_pages_into(todo, rows, c.text_lo, c.text_hi, c.text_terms, c.text_counts, sc.text.idf,
                                     sc.text.vectors, sc._queries_t, sc._tfidf_query, self.rel, self.cat, self.tfidf)
                sc.labels_into(todo, rows, self.label)
            return
        todo = np.unique(pages[self.rows(pages) < 0])
        if len(todo):
            ps = sc.score_pages(todo)
            self.rel[todo], self.cat[todo], self.tfidf[todo] = ps.rel, ps.cat, ps.tfidf
            self.done[todo] = True

    def make_dense(self) -> None:
        """Turn a keyed table dense (rows = page ids, as long as the corpus; the reward caches carried over, the
        scores left to :meth:`ensure_all` to fill)."""
        if not self.keyed:
            return
        n, C, N = self.n_rows, self.scorer.n_categories, self.scorer.corpus.n_pages
        pages = self.row_page[:n].astype(np.int64)
        rewards = {}
        for k, v in self.rewards.items():
            new = (np.zeros(N, np.float32), np.zeros(N, bool), np.zeros(N, bool))
            for a, b in zip(new, v):
                a[pages] = b[:n]
            rewards[k] = new
        self._dense(np.zeros(N, np.float32), np.zeros((N, C), np.float32), np.zeros(N, np.float32), np.zeros(N, bool))
        self.rewards = rewards
        self.row_page = np.zeros(0, np.int32)
        self.n_rows = 0
        self.gen += 1

    def ensure_all(self, chunk: int = 20_000) -> None:
        """Score every page (one pass over the corpus' text; :func:`fill_topic_tables` does several topics); the
        table turns dense."""
        _fill_pages([self], chunk)


class LinkTable(_KeyedTable):
    """Per-topic scores of the out-links of the pages scored so far (``rel``, ``cat``, ``kw_url``, ``kw_anchor``),
    filled by source page: a page's links are scored together and stored contiguously from its *base*
    (:meth:`bases`; the row of link ``l`` of page ``p`` is ``bases(p) + l - link_lo[p]``).

    Keyed (``keyed``, while not complete): a page's base is found through an open-addressing page map and the
    rows double as pages are scored — memory follows the pages scored. Dense (after :meth:`ensure_all`, or
    memory-mapped from :meth:`TopicScorer.save_tables`' cache): rows are link ids, ``done[p]`` says page ``p``'s
    links are scored.

    The crawl step reads a fetched page's whole contiguous link range, so each entry must equal
    ``score_links(np.arange(link_lo[p], link_hi[p]))``; the link-text vectors and cosines are computed row by
    row in a fixed order, so batches of any size give those values. The arrays are replaced when the table grows
    or turns dense (``gen``).
    """

    def __init__(self, scorer: TopicScorer, arrays: dict[str, np.ndarray] | None = None):
        self.scorer = scorer
        c = scorer.corpus
        self.lo = np.asarray(c.link_lo, np.int64)
        self.hi = np.asarray(c.link_hi, np.int64)
        #: (3,) int64: rows used, pages scored and the generation (:attr:`n_rows`, :attr:`n_pages_scored`,
        #: :attr:`gen`), in an array a compiled fill (:class:`~gym_crawl.relevance.score_kernels.StoreFill`)
        #: advances and checks
        self.ctr = np.zeros(3, np.int64)
        #: memory-mapped from the :meth:`TopicScorer.save_tables` cache: ``rel``/``cat`` read-only (they do not
        #: depend on the keywords, so a rescoring after :meth:`TopicScorer.set_keywords` leaves them as they
        #: are), the keyword flags copy-on-write (private pages only where new keywords change them)
        self.mapped = arrays is not None
        self.complete = False
        if arrays is not None:
            self._dense(arrays["link_rel"], arrays["link_cat"], arrays["link_kw_url"], arrays["link_kw_anchor"])
            self.done = np.ones(c.n_pages, bool)
            self.complete = True
            return
        self.forget()

    @property
    def n_pages_scored(self) -> int:
        """Pages whose links have rows (keyed)."""
        return int(self.ctr[1])

    @n_pages_scored.setter
    def n_pages_scored(self, n: int) -> None:
        self.ctr[1] = n

    def _dense(self, rel: np.ndarray, cat: np.ndarray, kw_url: np.ndarray, kw_anchor: np.ndarray) -> None:
        self.keyed = False
        self.rel, self.cat, self.kw_url, self.kw_anchor = rel, cat, kw_url, kw_anchor
        self.keys, self.slots = _empty_map(1, np.int64)
        self.n_pages_scored = self.n_rows = 0

    def forget(self) -> None:
        """Drop every score (keyed: an empty table; dense: ``done`` all ``False``, the arrays kept)."""
        self.gen += 1
        self.complete = False
        if getattr(self, "keyed", True):
            C = self.scorer.n_categories
            self.keyed = True
            self.n_pages_scored = 0
            self.n_rows = 0
            self.keys, self.slots = _empty_map(MIN_ROWS, np.int64)
            self.rel = np.zeros(MIN_ROWS, np.float32)
            self.cat = np.zeros((MIN_ROWS, C), np.float32)
            self.kw_url = np.zeros(MIN_ROWS, bool)
            self.kw_anchor = np.zeros(MIN_ROWS, bool)
            self.done = np.zeros(0, bool)
        else:
            self.done[:] = False

    def bases(self, pages: np.ndarray) -> np.ndarray:
        """(n,) int64 row of the first link of each of ``pages`` (-1: its links are not scored yet)."""
        pages = np.asarray(pages, np.int64).reshape(-1)
        if not self.keyed:
            return np.where(self.done[pages], self.lo[pages], -1)
        return self._find_many(pages)

    def has(self, page: int) -> bool:
        """Whether ``page``'s out-links are scored."""
        if not self.keyed:
            return bool(self.done[page])
        return int(find(self.keys, self.slots, int(page))) >= 0

    def _room(self, n_pages: int, total: int) -> None:
        """Make room for ``n_pages`` more pages with ``total`` more links (rows and page map)."""
        n, m = self.n_rows, self.n_pages_scored
        cap = int(self.rel.shape[0])
        if n + total > cap:
            while cap < n + total:
                cap *= 2
            for name in ("rel", "cat", "kw_url", "kw_anchor"):
                setattr(self, name, _grown(getattr(self, name), n, cap))
            # a new page map too: a bundle of the old arrays (another crawl's, bound before this growth) keeps
            # the old map, which then never names a page whose rows only the new arrays hold
            self.keys, self.slots = self.keys.copy(), self.slots.copy()
            self.gen += 1
        if 2 * (m + n_pages) > len(self.keys):
            size = len(self.keys)
            while 2 * (m + n_pages) > size:
                size *= 2
            keys, slots = self.keys, self.slots
            self.keys, self.slots = np.full(size, -1, np.int32), np.zeros(size, np.int64)
            used = keys >= 0
            add_keys(self.keys, self.slots, keys[used].astype(np.int64), slots[used])
            self.gen += 1

    def ensure(self, pages: np.ndarray, chunk_links: int = 200_000) -> None:
        """Score the out-links of ``pages`` that are not scored yet."""
        if self.keyed:
            _fill_links_keyed(self, pages)
        else:
            _fill_links([self], pages, chunk_links)

    def make_dense(self) -> None:
        """Turn a keyed table dense (rows = link ids, as long as the corpus' links; nothing scored yet)."""
        if not self.keyed:
            return
        c, C = self.scorer.corpus, self.scorer.n_categories
        L = len(c.link_dst)
        self._dense(np.zeros(L, np.float32), np.zeros((L, C), np.float32), np.zeros(L, bool), np.zeros(L, bool))
        self.done = np.zeros(c.n_pages, bool)
        self.gen += 1

    def ensure_all(self) -> None:
        """Score every link (at most one pass over the corpus' link text per topic); the table turns dense."""
        if not self.complete:
            self.make_dense()
            self.ensure(np.flatnonzero(~self.done))
            self.complete = True

    def _put(self, links: np.ndarray, ls: LinkScores) -> None:
        if not self.mapped:  # mapped rel/cat hold these very values already (read-only)
            self.rel[links] = ls.rel
            self.cat[links] = ls.cat
        self.kw_url[links] = ls.kw_url
        self.kw_anchor[links] = ls.kw_anchor


def _fill_links_keyed(table: LinkTable, pages: np.ndarray) -> None:
    """Score the out-links of those of ``pages`` not scored yet into the keyed ``table``: rows claimed and scored
    by two compiled calls (the values score_links gives)."""
    pages = np.asarray(pages, np.int64).reshape(-1)
    if not len(pages):
        return
    table._room(len(pages), int((table.hi[pages] - table.lo[pages]).sum()))
    end, m, links, rows = claim_link_rows(pages, table.keys, table.slots, table.n_rows, table.lo, table.hi)
    table.n_rows = int(end)
    table.n_pages_scored += int(m)
    if len(links):
        sc = table.scorer
        c, text, src = sc.corpus, sc.text, sc._source
        if src is not None:  # stored tables: the rows are copied (the same bits)
            copy_links_into(links, rows, src["link_rel"], src["link_cat"], src["link_kw_url"], src["link_kw_anchor"],
                            table.rel, table.cat, table.kw_url, table.kw_anchor)
            return
        score_links_into(links, rows, c.anchor_ptr, c.anchor_terms, c.title_ptr, c.title_terms, c.context_ptr,
                         c.context_terms, c.link_dst, text.idf, text.vectors, sc._queries_t, sc.keyword_mask,
                         table.rel, table.cat, table.kw_url, table.kw_anchor)


def fill_topic_tables(scorers: Sequence[TopicScorer], chunk_pages: int = 20_000,
                      chunk_links: int = 200_000, progress: str | None = None) -> None:
    """Fill the page and link tables (:meth:`TopicScorer.page_table`, :meth:`TopicScorer.link_table`) of
    several topics of one text model in one pass over the corpus' text.

    The topic-independent part of a score — the tf-idf-weighted text vectors of pages and links, their
    norms, the pages' tf-idf sums and the links' anchor/URL tokens — is computed once per batch and shared
    by every topic; each topic then pays only its dot products and keyword flags. Every entry equals the
    one-topic fill (``PageTable.ensure_all``, ``LinkTable.ensure_all``) bit for bit: the batches and the
    per-row arithmetic are the same. Tables already complete are left as they are.

    :param scorers: scorers sharing one :class:`TextModel` (``ValueError`` otherwise).
    :param chunk_pages: pages per batch of the page pass.
    :param chunk_links: links per batch of the link pass (a page's links are never split).
    :param progress: a label: show the pages and links scored as a progress bar on stderr
        (:class:`gym_crawl._console.Progress`) under this label; ``None``: nothing.
    """
    scorers = list({id(sc): sc for sc in scorers}.values())  # a scorer listed twice is filled once
    if not scorers:
        return
    text = scorers[0].text
    if any(sc.text is not text for sc in scorers):
        raise ValueError("fill_topic_tables: the scorers use different text models; fill each model's separately")
    c = scorers[0].corpus
    pages = [sc.page_table() for sc in scorers]
    links = [lt for lt in (sc.link_table() for sc in scorers) if not lt.complete]
    todo = (c.n_pages if any(not t.complete for t in pages) else 0) + (c.n_links if links else 0)
    for lt in links:
        lt.make_dense()
    with Progress(todo, progress or "", unit="pages and links", enabled=progress is not None and todo > 0,
                  announce=True) as bar:
        _fill_pages(pages, chunk_pages, bar)
        if links:
            _fill_links(links, np.flatnonzero(~np.logical_and.reduce([lt.done for lt in links])), chunk_links, bar)
            for lt in links:
                lt.complete = True


def _fill_pages(tables: list[PageTable], chunk: int, bar: Progress | None = None) -> None:
    """Score every page of ``tables`` (topics of one text model) not scored yet, the text vectors once per batch
    (``bar`` counts the pages)."""
    tables = [t for t in tables if not t.complete]
    if not tables:
        return
    for tab in tables:
        tab.make_dense()
    sc0 = tables[0].scorer
    c, text = sc0.corpus, sc0.text
    for a in range(0, c.n_pages, chunk):
        pages = np.arange(a, min(a + chunk, c.n_pages))
        if bar is not None:
            bar.update(len(pages))
        todo = [t for t in tables if not t.done[pages].all()]
        if not todo:
            continue
        V = text.page_vectors(pages)
        t, rp = gather_ranges(c.text_lo, c.text_hi, c.text_terms, pages)
        cnt, _ = gather_ranges(c.text_lo, c.text_hi, c.text_counts, pages)
        w = cnt * text.idf[t]
        sq = np.bincount(rp, weights=w * w, minlength=len(pages))
        root = np.sqrt(sq)
        cos_all = _cos(V, np.concatenate([tab.scorer.queries for tab in todo]))  # every topic's queries at once
        col = 0
        for tab in todo:
            sc = tab.scorer
            cos = cos_all[:, col:col + len(sc.queries)]
            col += len(sc.queries)
            tab.rel[pages] = cos[:, 0]
            tab.cat[pages] = cos[:, 1:]
            dot = np.bincount(rp, weights=w * sc._tfidf_query[t], minlength=len(pages))
            tab.tfidf[pages] = np.divide(dot, root, out=np.zeros(len(pages)), where=sq > 0).astype(np.float32)
            tab.done[pages] = True
    for tab in tables:
        tab.complete = True


def _fill_links(tables: list[LinkTable], pages: np.ndarray, chunk_links: int, bar: Progress | None = None) -> None:
    """Score the out-links of ``pages`` in ``tables`` (topics of one text model) where they are not scored yet,
    in batches of up to ``chunk_links`` links (a page's links are never split; ``bar`` counts the links)."""
    pages = np.asarray(pages, np.int64)
    done = np.logical_and.reduce([t.done[pages] for t in tables])
    pages = pages[~done]
    if len(pages) == 0:
        return
    pages = np.unique(pages)
    t0 = tables[0]
    deg = t0.hi[pages] - t0.lo[pages]
    linked, deg = pages[deg > 0], deg[deg > 0]
    if len(linked):
        ends = np.cumsum(deg)
        start = 0
        while start < len(linked):
            stop = max(start + 1, int(np.searchsorted(ends, (ends[start - 1] if start else 0) + chunk_links)))
            grp = linked[start:stop]
            links = np.concatenate([np.arange(t0.lo[p], t0.hi[p]) for p in grp.tolist()]) \
                if stop - start > 1 else np.arange(t0.lo[grp[0]], t0.hi[grp[0]])
            _score_link_batch(tables, links)
            if bar is not None:
                bar.update(len(links))
            start = stop
    for t in tables:
        t.done[pages] = True


def _score_link_batch(tables: list[LinkTable], links: np.ndarray) -> None:
    """Write the scores of ``links`` into every table: what :meth:`TopicScorer.score_links` computes, with the
    link-text vectors, cosines and anchor/URL tokens taken once for all tables."""
    text = tables[0].scorer.text
    t, rp, src = text.link_tokens(links)
    vec = weighted_row_sums(text.vectors, t, text.idf[t], rp, len(links))
    cos_all = _cos(vec, np.concatenate([tab.scorer.queries for tab in tables]))  # every topic's queries at once
    named = src < 2  # anchor (0) and URL (1) tokens: the keyword flags look at these only
    t_named, rp_named, in_anchor = t[named], rp[named], src[named] == 0
    n = len(links)
    col = 0
    for tab in tables:
        sc = tab.scorer
        cos = cos_all[:, col:col + len(sc.queries)]
        col += len(sc.queries)
        kw = sc.keyword_mask[t_named]
        kw_anchor = np.bincount(rp_named[kw & in_anchor], minlength=n) > 0
        kw_url = np.bincount(rp_named[kw & ~in_anchor], minlength=n) > 0
        tab._put(links, LinkScores(rel=cos[:, 0], cat=cos[:, 1:], kw_url=kw_url, kw_anchor=kw_anchor))


#: corpus -> {(id(text model), topic, n_categories): TopicScorer}: the process-wide scorers of
#: :func:`shared_scorer` (a scorer holds its text model, so the id stays that model's while it is cached)
_SHARED: weakref.WeakKeyDictionary[Corpus, dict[tuple[int, Topic, int], TopicScorer]] = weakref.WeakKeyDictionary()


def shared_scorer(text: TextModel, topic: Topic, n_categories: int = 4) -> TopicScorer:
    """The process-wide :class:`TopicScorer` of ``(text, topic, n_categories)``.

    Every env of a process on the same text model and topic uses this one scorer, so its page and link
    score tables (pure functions of the page: the same values whichever crawl fills them, in whatever
    order — see :class:`PageTable`, :class:`LinkTable`) are filled and held once per process instead of
    once per env. Workers forked after the tables were filled (``WikiCrawlEnv.precompute_scores`` and
    ``AsyncVectorEnv(..., context="fork")``) inherit them copy-on-write: the pages stay shared.
    """
    per_corpus = _SHARED.setdefault(text.corpus, {})
    key = (id(text), topic, int(n_categories))
    sc = per_corpus.get(key)
    if sc is None:
        sc = per_corpus[key] = TopicScorer(text, topic, n_categories)
    return sc
