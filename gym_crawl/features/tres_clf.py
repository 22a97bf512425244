"""Feature set ``tres-clf``: TRES's full state-action vector, including the classifier probability.

==========================  ==========================================================================
column                      meaning (TRES §2.4.1)
==========================  ==========================================================================
``s.parent_reward``         the discovering (best) parent was relevant
``s.inv_dist_relevant``     1 / (1 + distance from the closest relevant node on the web path)
``s.path_relevance_ratio``  relevant pages / pages on the web path
``a.keyword_in_url``        a topic keyword occurs in the URL text of a discovering link
``a.keyword_in_anchor``     a topic keyword occurs in the anchor text of a discovering link
``a.classifier_prob``       P(relevant) of the anchor + URL text of the link from the best parent, by the
                            topic's offline :class:`~gym_crawl.relevance.classifier.TextClassifier`
``a.domain_relevant_ratio`` relevant / fetched pages of the URL's domain so far
``a.domain_known``          1 if the domain was fetched before, else 0.5
``bias``                    1
==========================  ==========================================================================

``domain_features=False`` drops the two domain columns — TRES's *web domain* ("Hub") features;
TRES_10_NH of the paper's Table 4 (§3.6.3) is TRES without them — and names the set
``tres-clf-nh`` (7 columns).

The classifier of a topic is either given (``classifiers={"geology": clf}`` or one classifier for
every topic) or trained on first use by
:func:`~gym_crawl.relevance.classifier.train_heldout_classifier` on the URL-hash classifier-train
split of the corpus (the topic needs a ``label``; crawl the corpus'
:func:`~gym_crawl.relevance.classifier.heldout_view` so the metric counts only pages the
classifier never saw) and memoized per corpus and topic. Its probability for a frontier
page is computed once per (page, best parent) and cached — valid across episodes, since it depends
only on the link's text — so a step costs O(new or re-parented candidates × out-degree of their
parent), not O(frontier).

Not ``local``: the domain columns change for every frontier page of a domain when one of its
pages is fetched.
"""
from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from gym_crawl.corpus.core import Corpus
from gym_crawl.crawl.state import CrawlState
from gym_crawl.features.sets import FeatureSet, TresFeatures
from gym_crawl.pagemap import KeyedRows
from gym_crawl.relevance.classifier import TextClassifier, train_heldout_classifier
from gym_crawl.relevance.topic import Topic

__all__ = ["TresClfFeatures", "topic_classifier", "tres_clf_nh", "tres_clf_svm"]

_MEMO: weakref.WeakKeyDictionary[Corpus, dict] = weakref.WeakKeyDictionary()


def topic_classifier(corpus: Corpus, topic: Topic, text: Any = None, **train_kwargs: Any) -> TextClassifier:
    """The topic's offline classifier for ``corpus`` (fitted on its classifier-train split only, see
    :func:`~gym_crawl.relevance.classifier.train_heldout_classifier`), trained once per process and memoized."""
    key = (topic, tuple(sorted((k, repr(v)) for k, v in train_kwargs.items())))
    memo = _MEMO.setdefault(corpus, {})
    if key not in memo:
        memo[key] = train_heldout_classifier(corpus, topic, text, **train_kwargs).classifier
    return memo[key]


class TresClfFeatures(FeatureSet):
    """TRES features with the classifier column (see the module docstring).

    Args:
        n_categories: unused (feature-set factory signature).
        classifiers: a :class:`TextClassifier` for every topic, or a dict ``topic name → classifier``;
            topics without one are trained on first use.
        domain_features: keep the two web-domain columns (False: TRES_NH, ``tres-clf-nh``).
        train_kwargs: keyword arguments of :func:`train_heldout_classifier` for those.
    """

    name = "tres-clf"
    local = False
    names = ["s.parent_reward", "s.inv_dist_relevant", "s.path_relevance_ratio", "a.keyword_in_url",
             "a.keyword_in_anchor", "a.classifier_prob", "a.domain_relevant_ratio", "a.domain_known", "bias"]
    #: the web-domain ("Hub") columns TRES_NH leaves out
    DOMAIN_COLUMNS = ("a.domain_relevant_ratio", "a.domain_known")

    def __init__(self, n_categories: int = 4, classifiers: TextClassifier | dict[str, TextClassifier] | None = None,
                 domain_features: bool = True, **train_kwargs: Any):
        if not isinstance(domain_features, bool):
            raise ValueError(f"tres-clf: domain_features must be True or False, got {domain_features!r}")
        self.domain_features = domain_features
        if not domain_features:
            self.name = "tres-clf-nh"
            self.names = [n for n in type(self).names if n not in self.DOMAIN_COLUMNS]
        self._base = TresFeatures()
        self._given = classifiers
        self.train_kwargs = train_kwargs
        #: per (corpus, topic): the classifier and, keyed by page, the best parent its cached probability is for
        #: (``bp``) and that probability (``prob``) — the pages the crawls asked about, not a row per page of the web
        self._caches: dict[tuple[int, str], tuple[TextClassifier, KeyedRows]] = {}

    def _cache(self, state: CrawlState) -> tuple[TextClassifier, KeyedRows]:
        scorer = state.scorer
        if scorer is None:
            raise RuntimeError("tres-clf: the crawl state has no topic yet (reset the env first)")
        topic = scorer.topic
        key = (id(state.corpus), topic.name)
        hit = self._caches.get(key)
        if hit is None:
            g = self._given
            if isinstance(g, TextClassifier):
                clf = g
            elif isinstance(g, dict) and topic.name in g:
                clf = g[topic.name]
            else:
                clf = topic_classifier(state.corpus, topic, scorer.text, **self.train_kwargs)
            hit = (clf, KeyedRows(("bp", np.int32), ("prob", np.float32)))
            self._caches[key] = hit
        return hit

    def link_probability(self, state: CrawlState, pages: np.ndarray) -> np.ndarray:
        """(len(pages),) float32 classifier probability of the best parent's link text to each page."""
        pages = np.asarray(pages, np.int64)
        clf, cache = self._cache(state)
        bp = self.best_parents(state, pages)
        r = cache.rows(pages)
        stale = r < 0
        stale[~stale] = cache.cols["bp"][r[~stale]] != bp[~stale]
        if stale.any():
            sp_, sbp = pages[stale], bp[stale].astype(np.int64)
            rows, links = self.first_links(state, sbp, sp_)
            prob = np.zeros(len(sp_), np.float32)
            if len(rows):
                prob[rows] = clf.proba_links(state.corpus, links)
            r = cache.ensure(pages)  # rows for the pages new to the cache (the columns may grow: read them after)
            cache.cols["prob"][r[stale]] = prob
            cache.cols["bp"][r[stale]] = sbp
        return cache.cols["prob"][r]

    def compute(self, state: CrawlState, pages: np.ndarray) -> np.ndarray:
        pages = np.asarray(pages, np.int64)
        base = self._base.compute(state, pages)
        out = np.empty((len(pages), self.dim), np.float32)
        out[:, :5] = base[:, :5]
        out[:, 5] = self.link_probability(state, pages) if len(pages) else 0.0
        out[:, 6:] = base[:, 5:] if self.domain_features else base[:, 7:]
        return out


def tres_clf_nh(n_categories: int = 4) -> TresClfFeatures:
    """Feature set ``tres-clf-nh``: ``tres-clf`` without the two web-domain columns (TRES_NH)."""
    return TresClfFeatures(n_categories, domain_features=False)


def tres_clf_svm(n_categories: int = 4) -> TresClfFeatures:
    """Feature set ``tres-clf-svm``: ``tres-clf`` whose link-text classifier is ACHE's linear SVM (TRES_SVM)."""
    return TresClfFeatures(n_categories, kinds=("svm",))
