"""A web search engine over a corpus and SeedFinder's seed expansion through it.

SeedFinder (Vieira et al. 2016, "Finding seeds to bootstrap focused crawlers") finds a focused crawler's
seeds by querying a search engine with the topic's words plus terms taken from the pages judged relevant
so far. Here the engine is :class:`SearchEngine` (tf-idf cosine over every page's text — the one privilege
it has over a crawler, as a web search API has) and :func:`seedfinder_results` runs the query rounds; the
pages it downloads are judged by a page classifier, never by a label.

Not modelled: SeedFinder's query reformulation heuristics, search-engine ranking beyond tf-idf, result
snippets.
"""
from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from gym_crawl._arith import norm
from gym_crawl.corpus.core import Corpus

__all__ = ["SEEDFINDER_DEFAULTS", "SearchEngine", "search_engine", "seedfinder_results"]

#: SeedFinder's query rounds, results downloaded per query and new terms per query
SEEDFINDER_DEFAULTS = {"rounds": 5, "results": 10, "terms": 3}

_ENGINES: weakref.WeakKeyDictionary[Corpus, dict[bytes, SearchEngine]] = weakref.WeakKeyDictionary()


class SearchEngine:
    """tf-idf cosine between a query's terms and every page's text (L2-normalised tf-idf rows, the given
    IDF). Built once per corpus (:func:`search_engine` memoizes it)."""

    def __init__(self, corpus: Any, idf: np.ndarray):
        import scipy.sparse as sp

        from gym_crawl.relevance.classifier import bag_matrix, page_bags

        n = corpus.n_pages
        M = bag_matrix(*page_bags(corpus, np.arange(n)), n, corpus.n_words) @ sp.diags(np.asarray(idf, np.float64))
        norm = np.sqrt(np.asarray(M.multiply(M).sum(axis=1)).ravel())
        self.M = sp.csr_matrix(sp.diags(np.divide(1.0, norm, out=np.zeros(n), where=norm > 0)) @ M)
        self.MT = self.M.T.tocsr()
        self.idf = np.asarray(idf, np.float64)

    def search(self, terms: np.ndarray, k: int, exclude: np.ndarray) -> np.ndarray:
        """The ``k`` best pages for the query ``terms`` (term ids) that are not in ``exclude`` (bool
        per page) and match at least one term; ties by page id."""
        terms = np.unique(np.asarray(terms, np.int64))
        q = self.idf[terms]
        score = np.asarray(self.MT[terms].T @ q).ravel() / max(norm(q), 1e-12)
        ok = np.flatnonzero((score > 0) & ~exclude)
        order = np.lexsort((ok, -score[ok]))
        return ok[order[:k]]

    def term_mass(self, pages: np.ndarray) -> np.ndarray:
        """(V,) summed tf-idf weight of every term over ``pages``."""
        return np.asarray(self.M[np.asarray(pages, np.int64)].sum(axis=0)).ravel()


def search_engine(corpus: Corpus, idf: np.ndarray) -> SearchEngine:
    """The :class:`SearchEngine` of ``corpus`` with ``idf``, built once per (corpus, IDF array) and process."""
    import hashlib

    memo = _ENGINES.setdefault(corpus, {})
    key = hashlib.blake2b(np.ascontiguousarray(idf, np.float64).tobytes(), digest_size=16).digest()
    if key not in memo:
        memo[key] = SearchEngine(corpus, idf)
    return memo[key]


def seedfinder_results(corpus: Any, engine: SearchEngine, topic_words: Any, judge: Any, seeds: np.ndarray, *,
                       rounds: int = 5, results: int = 10, terms: int = 3, cap: int | None = None,
                       max_results: int | None = None) -> np.ndarray:
    """Pages SeedFinder downloads from search results, in download order.

    Round r: query = the topic's words + the ``terms`` terms of highest tf-idf mass over the pages judged
    relevant so far (the seeds first) that no earlier query used; the ``results`` best unseen pages are
    downloaded and judged by ``judge`` (``judge.proba_pages(corpus, pages) >= 0.5``: only its verdicts and
    the downloaded pages' text are read — never a label). With a per-domain ``cap``, results from a domain
    that already has ``cap`` downloaded pages are passed over. ``max_results`` stops the downloads there.

    :param topic_words: the topic's words (strings; words outside the corpus vocabulary are left out).
    :param seeds: (n,) page ids the crawl starts from.
    """
    c = corpus
    dom = np.asarray(c.page_domain, np.int64)
    per_dom = np.bincount(dom[np.asarray(seeds, np.int64)], minlength=len(c.domains))
    seen = np.zeros(c.n_pages, bool)
    seen[seeds] = True
    base_terms = np.array([c.word_id(w) for w in topic_words if c.word_id(w) >= 0], np.int64)
    used = np.zeros(c.n_words, bool)
    used[base_terms] = True
    relevant = list(np.asarray(seeds, np.int64))  # the seed pages bootstrap the first query
    out: list[int] = []
    for _ in range(rounds):
        room = results if max_results is None else min(results, max_results - len(out))
        if room <= 0:
            break
        mass = engine.term_mass(np.asarray(relevant, np.int64)) if relevant else np.zeros(c.n_words)
        mass[used] = 0.0
        cand = np.flatnonzero(mass > 0)
        new = cand[np.lexsort((cand, -mass[cand]))][:terms]
        used[new] = True
        q = np.concatenate([base_terms, new])
        if cap is None:
            got = engine.search(q, room, seen)
        else:
            keep: list[int] = []
            for p in engine.search(q, c.n_pages, seen | (per_dom >= cap)[dom]):  # best first, domains filling up
                if per_dom[dom[p]] < cap:
                    keep.append(int(p))
                    per_dom[dom[p]] += 1
                    if len(keep) == room:
                        break
            got = np.asarray(keep, np.int64)
        if len(got) == 0:
            continue
        seen[got] = True
        out += got.tolist()
        verdict = judge.proba_pages(c, got) >= 0.5
        relevant += got[verdict].tolist()
    return np.asarray(out, np.int64)
