"""TRES keyword expansion (Algorithm 1, Eq. 2) with the corpus' word vectors.

Given an initial keyword set ``KS`` (``N_K`` words) and a document set ``D_tr``, every word ``w`` of
``D_tr`` gets the semantic score ``CS(w) = (1/N_K) Σ_{k∈KS} cos(w, k)``; it joins the new keywords
``K'`` when ``CS(w) ≥ b``, where (Eq. 2) ``b`` is the mean pairwise cosine of the initial keywords::

    b = 1 / (N_K (N_K − 1)) · Σ_i Σ_{j≠i} cos(k_i, k_j)

The result is ``K = KS ∪ K'``. A candidate must therefore be, on average, as close to the keywords
as they are to each other — the paper notes how selective that is. With a single initial keyword
Eq. 2 is undefined; pass ``threshold`` (the default fallback is 0.5).

Vectors are the :class:`~gym_crawl.text.TextModel` word vectors (PPMI-SVD trained on the corpus, or
loaded GloVe/word2vec); words without a vector are skipped. One matrix product scores the whole
candidate vocabulary.

TRES's ``D_tr`` is the classifier's labelled training set of relevant pages; with
:func:`gym_crawl.relevance.classifier.train_topic_classifier` that is the relevant part of its
training split (``report.train_pages``) — never pages the crawl will be evaluated on unseen.
:func:`expand_topic` returns a copy of a topic (any dataclass with a ``keywords`` field, such as
:class:`gym_crawl.relevance.Topic`) with the expanded keywords, which the env's keyword features
(``a.keyword_in_url``, ``a.keyword_in_anchor``) then use. The text layer sits below relevance, so it
takes the topic as a parameter and never imports it.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np

from gym_crawl._arith import matmul
from gym_crawl.corpus.core import Corpus
from gym_crawl.text.model import TextModel, gather_ranges

__all__ = ["KeywordExpansion", "expand_keywords", "expand_topic", "mean_keyword_count"]


class HasKeywords(Protocol):
    """What :func:`expand_topic` needs of a topic: a dataclass with a ``keywords`` field."""

    keywords: Sequence[str]
    __dataclass_fields__: dict[str, Any]


TopicT = TypeVar("TopicT", bound=HasKeywords)


@dataclass
class KeywordExpansion:
    """Result of Algorithm 1.

    Attributes:
        initial: the initial keywords that have a word vector (``KS``).
        new: the discovered keywords ``K'``, by decreasing score.
        scores: ``CS(w)`` of each word of ``new``.
        threshold: ``b`` (Eq. 2, or the given fallback).
        candidates: number of distinct candidate words scored.
    """

    initial: list[str]
    new: list[str]
    scores: list[float]
    threshold: float
    candidates: int

    @property
    def keywords(self) -> list[str]:
        """``K = KS ∪ K'``."""
        return list(self.initial) + [w for w in self.new if w not in self.initial]


def expand_keywords(text: TextModel, initial: Sequence[str], documents: np.ndarray | None = None, *,
                    threshold: float | None = None, single_keyword_threshold: float = 0.5,
                    min_df: int = 1, max_new: int | None = None) -> KeywordExpansion:
    """Algorithm 1: expand ``initial`` with words of ``documents`` (page ids; ``None``: the whole
    vocabulary) whose mean cosine with the initial keywords is at least ``b`` (Eq. 2).

    Args:
        text: the corpus' TextModel (vocabulary and word vectors).
        initial: initial keywords ``KS`` (unknown words or words without a vector are ignored).
        documents: page ids of ``D_tr``.
        threshold: override ``b``; ``single_keyword_threshold`` is used when only one initial
            keyword has a vector (Eq. 2 needs two).
        min_df: a candidate must occur in at least this many documents (1 = Algorithm 1 as published).
        max_new: keep at most this many new keywords (highest scores); ``None`` keeps all.
    """
    corpus = text.corpus
    W = text.vectors
    ids = []
    for w in initial:
        i = corpus.word_id(w)
        if i >= 0 and W[i].any() and i not in ids:
            ids.append(i)
    if not ids:
        raise ValueError(f"none of the initial keywords {list(initial)} has a word vector in corpus {corpus.name!r}")
    K = W[ids].astype(np.float64)
    K /= np.linalg.norm(K, axis=1, keepdims=True)
    nk = len(ids)
    if threshold is not None:
        b = float(threshold)
    elif nk >= 2:
        G = matmul(K, K.T)
        b = float((G.sum() - np.trace(G)) / (nk * (nk - 1)))
    else:
        b = float(single_keyword_threshold)
    if documents is None:
        cand = np.arange(corpus.n_words)
        if min_df > 1:
            raise ValueError("min_df needs documents")
    else:
        terms, _ = gather_ranges(corpus.text_lo, corpus.text_hi, corpus.text_terms, np.asarray(documents, np.int64))
        df = np.bincount(terms, minlength=corpus.n_words)
        cand = np.flatnonzero(df >= max(1, min_df))
    norms = np.linalg.norm(W[cand], axis=1)
    cand = cand[norms > 0]
    Wc = W[cand].astype(np.float64) / np.linalg.norm(W[cand], axis=1, keepdims=True)
    cs = matmul(Wc, K.T).mean(axis=1)
    sel = (cs >= b) & ~np.isin(cand, ids)
    order = np.lexsort((cand[sel], -cs[sel]))
    if max_new is not None:
        order = order[:max_new]
    new_ids = cand[sel][order]
    return KeywordExpansion(initial=[corpus.vocab[i] for i in ids], new=[corpus.vocab[int(i)] for i in new_ids],
                            scores=[float(v) for v in cs[sel][order]], threshold=b, candidates=int(len(cand)))


def expand_topic(topic: TopicT, text: TextModel, documents: np.ndarray | None = None,
                 initial: Sequence[str] | None = None, **kw: Any) -> tuple[TopicT, KeywordExpansion]:
    """A copy of ``topic`` (a dataclass with a ``keywords`` field, e.g. :class:`gym_crawl.relevance.Topic`)
    with ``keywords = KS ∪ K'`` (``KS`` = ``initial`` or the topic's keywords)."""
    if not dataclasses.is_dataclass(topic) or "keywords" not in {f.name for f in dataclasses.fields(topic)}:
        raise TypeError(f"topic must be a dataclass with a 'keywords' field (e.g. gym_crawl.relevance.Topic), "
                        f"got {type(topic).__name__}")
    ex = expand_keywords(text, list(initial) if initial is not None else list(topic.keywords), documents, **kw)
    return dataclasses.replace(topic, keywords=tuple(ex.keywords)), ex


def mean_keyword_count(corpus: Corpus, words: Sequence[str], pages: np.ndarray) -> float:
    """Mean number of occurrences of ``words`` per page of ``pages`` (TRES Table 2's statistic)."""
    ids = np.asarray([i for i in (corpus.word_id(w) for w in words) if i >= 0], np.int64)
    pages = np.asarray(pages, np.int64)
    if len(pages) == 0 or len(ids) == 0:
        return 0.0
    t, rp = gather_ranges(corpus.text_lo, corpus.text_hi, corpus.text_terms, pages)
    c, _ = gather_ranges(corpus.text_lo, corpus.text_hi, corpus.text_counts, pages)
    hit = np.isin(t, ids)
    return float(c[hit].sum() / len(pages))
