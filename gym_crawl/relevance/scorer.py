"""Relevance of fetched pages and of discovered links' text to a :class:`Topic`.

Everything here is vectorized over the pages / links asked for and costs
O(tokens × k); nothing is computed for pages the crawler has not fetched
unless a caller asks (the env asks only for fetched pages and the links it
discovers; oracles and analyses may ask for all pages).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from gym_crawl.corpus.core import Corpus
from gym_crawl.relevance.topic import Topic
from gym_crawl.text.model import TextModel, gather_csr, weighted_row_sums

__all__ = ["TopicScorer", "PageScores", "LinkScores", "PageTable", "LinkTable", "shared_scorer"]


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
    """Cosines of rows of ``vecs`` (n, k) with unit rows of ``queries`` (q, k) → (n, q)."""
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return np.divide(vecs @ queries.T, norms, out=np.zeros((len(vecs), len(queries)), np.float32), where=norms > 0)


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
        self._tables: dict[str, object] = {}
        qidf = text.idf * self.topic_word_mask
        self._tfidf_query = qidf / max(float(np.linalg.norm(qidf)), 1e-12)
        self.label_mask = topic.label_mask(self.corpus)

    def set_keywords(self, words: list[str]) -> None:
        """Replace the keyword set (e.g. after TRES keyword expansion)."""
        self.keyword_mask[:] = False
        ids = [self.corpus.word_id(w) for w in words]
        self.keyword_mask[[i for i in ids if i >= 0]] = True
        links = self._tables.get("links")
        if links is not None:  # keyword flags of links change: rescore them on demand
            links.done[:] = False  # type: ignore[attr-defined]
            links.complete = False  # type: ignore[attr-defined]

    def score_pages(self, pages: np.ndarray) -> PageScores:
        """Scores of ``pages`` (int array). Cost O(Σ page terms × k)."""
        pages = np.asarray(pages, dtype=np.int64)
        c = self.corpus
        cos = _cos(self.text.page_vectors(pages), self.queries)
        t, rp = gather_csr(c.text_ptr, c.text_terms, pages)
        cnt, _ = gather_csr(c.text_ptr, c.text_counts, pages)
        w = cnt * self.text.idf[t]
        sq = np.bincount(rp, weights=w * w, minlength=len(pages))
        dot = np.bincount(rp, weights=w * self._tfidf_query[t], minlength=len(pages))
        tfidf = np.divide(dot, np.sqrt(sq), out=np.zeros(len(pages)), where=sq > 0).astype(np.float32)
        return PageScores(rel=cos[:, 0], cat=cos[:, 1:], tfidf=tfidf, label=self.label_mask[pages],
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
    def page_table(self) -> "PageTable":
        """Scores of pages, filled on demand (``PageTable.ensure``) and cached per topic: internal
        precomputation for the crawl step (DESIGN.md §5) — a crawl reads a page's entry only when it
        fetches the page. Entries equal ``score_pages([p])`` bit for bit."""
        t = self._tables.get("pages")
        if t is None:
            t = self._tables["pages"] = PageTable(self)
        return t  # type: ignore[return-value]

    def link_table(self) -> "LinkTable":
        """Scores of links, filled per source page on demand (``LinkTable.ensure``) and cached per
        topic; entries equal ``score_links(range of the page's links)`` bit for bit."""
        t = self._tables.get("links")
        if t is None:
            t = self._tables["links"] = LinkTable(self)
        return t  # type: ignore[return-value]

    def all_page_scores(self, chunk: int = 50_000) -> PageScores:
        """Scores of every page (for oracles and analyses only — never shown to agents)."""
        parts = [self.score_pages(np.arange(a, min(a + chunk, self.corpus.n_pages)))
                 for a in range(0, self.corpus.n_pages, chunk)]
        return PageScores(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("rel", "cat", "tfidf", "label")),
                          pages=np.arange(self.corpus.n_pages, dtype=np.int64))


class PageTable:
    """Per-topic scores of pages (``rel`` (n,), ``cat`` (n, C), ``tfidf`` (n,), ``label`` (n,)),
    ``done[p]`` when page ``p``'s entry is filled.

    ``ensure(p)`` scores one page as ``score_pages([p])`` does; ``ensure_all()`` scores every page
    in batches with the same result: page vectors, norms and tf-idf sums are row-independent, and
    the topic dot products are taken one row at a time, as a one-page call takes them (BLAS
    computes a single-row product by another kernel than a batch, in another floating-point order).
    """

    def __init__(self, scorer: TopicScorer):
        self.scorer = scorer
        n, C = scorer.corpus.n_pages, scorer.n_categories
        self.rel = np.zeros(n, np.float32)
        self.cat = np.zeros((n, C), np.float32)
        self.tfidf = np.zeros(n, np.float32)
        self.label = np.asarray(scorer.label_mask, bool)
        self.done = np.zeros(n, bool)
        self.complete = False

    def ensure(self, page: int) -> None:
        """Score ``page`` if it is not scored yet."""
        if not self.done[page]:
            ps = self.scorer.score_pages(np.array([page]))
            self.rel[page], self.cat[page], self.tfidf[page] = ps.rel[0], ps.cat[0], ps.tfidf[0]
            self.done[page] = True

    def ensure_all(self, chunk: int = 20_000) -> None:
        """Score every page (one pass over the corpus' text)."""
        if self.complete:
            return
        sc = self.scorer
        c, C = sc.corpus, sc.n_categories
        QT = sc.queries.T
        for a in range(0, c.n_pages, chunk):
            pages = np.arange(a, min(a + chunk, c.n_pages))
            if self.done[pages].all():
                continue
            V = sc.text.page_vectors(pages)
            norms = np.linalg.norm(V, axis=1, keepdims=True)
            for i in range(len(pages)):
                cos = np.divide(V[i:i + 1] @ QT, norms[i:i + 1], out=np.zeros((1, 1 + C), np.float32),
                                where=norms[i:i + 1] > 0)
                self.rel[a + i] = cos[0, 0]
                self.cat[a + i] = cos[0, 1:]
            t, rp = gather_csr(c.text_ptr, c.text_terms, pages)
            cnt, _ = gather_csr(c.text_ptr, c.text_counts, pages)
            w = cnt * sc.text.idf[t]
            sq = np.bincount(rp, weights=w * w, minlength=len(pages))
            dot = np.bincount(rp, weights=w * sc._tfidf_query[t], minlength=len(pages))
            self.tfidf[pages] = np.divide(dot, np.sqrt(sq), out=np.zeros(len(pages)), where=sq > 0).astype(np.float32)
            self.done[pages] = True
        self.complete = True


class LinkTable:
    """Per-topic scores of every link (``rel``, ``cat``, ``kw_url``, ``kw_anchor``, indexed by link
    id), filled by source page: ``done[p]`` says page ``p``'s out-links are scored.

    The crawl step scores a fetched page's whole contiguous link range, so each entry must equal
    ``score_links(np.arange(ptr[p], ptr[p+1]))``: ranges of two or more links are scored in
    batches (a BLAS matrix product's rows do not depend on how many rows it has), single-link
    ranges one at a time (BLAS takes a single-row product by another kernel). Arrays are
    allocated zeroed (untouched memory costs nothing) and filled as pages are asked for.
    """

    def __init__(self, scorer: TopicScorer):
        self.scorer = scorer
        c = scorer.corpus
        L = len(c.link_dst)
        self.ptr = np.asarray(c.link_ptr, np.int64)
        self.rel = np.zeros(L, np.float32)
        self.cat = np.zeros((L, scorer.n_categories), np.float32)
        self.kw_url = np.zeros(L, bool)
        self.kw_anchor = np.zeros(L, bool)
        self.done = np.zeros(c.n_pages, bool)
        self.complete = False

    def ensure(self, pages: np.ndarray, chunk_links: int = 200_000) -> None:
        """Score the out-links of ``pages`` that are not scored yet."""
        pages = np.asarray(pages, np.int64)
        pages = pages[~self.done[pages]]
        if len(pages) == 0:
            return
        pages = np.unique(pages)
        deg = self.ptr[pages + 1] - self.ptr[pages]
        sc = self.scorer
        for p in pages[deg == 1].tolist():
            a = int(self.ptr[p])
            self._put(np.arange(a, a + 1), sc.score_links(np.arange(a, a + 1)))
        multi = pages[deg > 1]
        if len(multi):
            ends = np.cumsum(deg[deg > 1])
            start = 0
            while start < len(multi):
                stop = max(start + 1, int(np.searchsorted(ends, (ends[start - 1] if start else 0) + chunk_links)))
                grp = multi[start:stop]
                links = np.concatenate([np.arange(self.ptr[p], self.ptr[p + 1]) for p in grp.tolist()]) \
                    if stop - start > 1 else np.arange(self.ptr[grp[0]], self.ptr[grp[0] + 1])
                self._put(links, sc.score_links(links))
                start = stop
        self.done[pages] = True

    def ensure_all(self) -> None:
        """Score every link (at most one pass over the corpus' link text per topic)."""
        if not self.complete:
            self.ensure(np.flatnonzero(~self.done))
            self.complete = True

    def _put(self, links: np.ndarray, ls: LinkScores) -> None:
        self.rel[links] = ls.rel
        self.cat[links] = ls.cat
        self.kw_url[links] = ls.kw_url
        self.kw_anchor[links] = ls.kw_anchor


#: corpus -> {(id(text model), topic, n_categories): TopicScorer}: the process-wide scorers of
#: :func:`shared_scorer` (a scorer holds its text model, so the id stays that model's while it is cached)
_SHARED: "weakref.WeakKeyDictionary[Corpus, dict[tuple[int, Topic, int], TopicScorer]]" = weakref.WeakKeyDictionary()


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
