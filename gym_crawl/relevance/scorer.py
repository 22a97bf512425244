"""Relevance of fetched pages and of discovered links' text to a :class:`Topic`.

Everything here is vectorized over the pages / links asked for and costs
O(tokens × k); nothing is computed for pages the crawler has not fetched
unless a caller asks (the env asks only for fetched pages and the links it
discovers; oracles and analyses may ask for all pages).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gym_crawl.corpus.core import Corpus
from gym_crawl.relevance.topic import Topic
from gym_crawl.text.model import TextModel, gather_csr, weighted_row_sums

__all__ = ["TopicScorer", "PageScores", "LinkScores"]


@dataclass
class PageScores:
    """Relevance of fetched pages. Shapes: ``(n,)`` or ``(n, c)``; cosines in [-1, 1].

    ``rel``: cosine of page vector and topic vector; ``cat``: cosines with the
    category vectors; ``tfidf``: tf-idf cosine with the topic words (> 0 iff the
    page contains a topic word); ``label``: ground-truth label match.
    """

    rel: np.ndarray
    cat: np.ndarray
    tfidf: np.ndarray
    label: np.ndarray


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
        qidf = text.idf * self.topic_word_mask
        self._tfidf_query = qidf / max(float(np.linalg.norm(qidf)), 1e-12)
        self.label_mask = topic.label_mask(self.corpus)

    def set_keywords(self, words: list[str]) -> None:
        """Replace the keyword set (e.g. after TRES keyword expansion)."""
        self.keyword_mask[:] = False
        ids = [self.corpus.word_id(w) for w in words]
        self.keyword_mask[[i for i in ids if i >= 0]] = True

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
        return PageScores(rel=cos[:, 0], cat=cos[:, 1:], tfidf=tfidf, label=self.label_mask[pages])

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

    def all_page_scores(self, chunk: int = 50_000) -> PageScores:
        """Scores of every page (for oracles and analyses only — never shown to agents)."""
        parts = [self.score_pages(np.arange(a, min(a + chunk, self.corpus.n_pages)))
                 for a in range(0, self.corpus.n_pages, chunk)]
        return PageScores(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("rel", "cat", "tfidf", "label")))
