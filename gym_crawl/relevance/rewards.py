"""Reward schemes: map the scores of a fetched page to a reward and a relevant flag.

=============  ===========================================================================
name           reward of a fetched page
=============  ===========================================================================
``han2018``    30 if tf-idf relevance > 0 (the page contains a topic word); else 30 if the
               word-vector cosine > 0.5, 20 if > 0.4; else -1 (Han et al. 2018, §4)
``thesis``     30 if the page contains a topic word; else 30 if cosine > 0.6, 20 if > 0.5;
               else -1 — the tiers of the thesis' published ``reward()`` code (Pertejo 2021,
               appendix; the code, not the thesis' prose summary 30/20/10/-1, is the source), and
               ``ThresholdReward`` builds any other tiering.
``binary``     1 if relevant, else 0 (TRES); relevant = label match when the topic has a
               label, else contains a topic word
``labels``     1 if the page carries the topic's ground-truth label, else 0
``classifier`` 1 if an offline text classifier of the fetched page's text says relevant
               (P ≥ 0.5), else 0 — TRES's reward (its BiLSTM decides reward): noisy, and the
               classifier never saw an evaluation page (see :class:`ClassifierReward`)
callable       ``f(scores: PageScores) -> rewards (n,)``; relevant = reward > 0
=============  ===========================================================================

The *relevant* flag a scheme returns is what the crawler itself learns from the
fetch (it drives Han's "relevant parent" and "distance from last relevant page"
features): for ``han2018``/``thesis`` it is Han's definition (the page contains a
topic word, tf-idf relevance > 0), for the other schemes reward > 0.
"""
from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gym_crawl.pagemap import KeyedRows
from gym_crawl.registry import Registry
from gym_crawl.relevance.score_kernels import ELEMENTWISE_LABEL, ELEMENTWISE_TIERS, ELEMENTWISE_WORD
from gym_crawl.relevance.scorer import PageScores

__all__ = ["ELEMENTWISE_LABEL", "ELEMENTWISE_TIERS", "ELEMENTWISE_WORD", "RewardScheme", "ThresholdReward",
           "BinaryReward", "LabelReward", "CallableReward", "ClassifierReward", "REWARD_SCHEMES", "REWARDS",
           "get_reward_scheme"]


class RewardScheme:
    """Base class. ``__call__(scores) -> (reward float32 (n,), relevant bool (n,))``."""

    name = "reward"
    max_reward = 1.0
    needs_label = False

    def __call__(self, s: PageScores) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - abstract
        raise NotImplementedError

    def elementwise(self) -> tuple[int, np.ndarray, np.ndarray, float, float] | None:
        """The scheme as compiled code computes it page by page with the bits of :meth:`__call__`
        (:func:`~gym_crawl.relevance.score_kernels.fill_rows_from_store`): ``(kind, thresholds, values, word_reward,
        miss)`` — a kind of :data:`ELEMENTWISE_TIERS` and its float32 tiers, highest threshold first, as numpy
        compares and stores them — or ``None`` (the default): only :meth:`__call__` computes it."""
        return None


_NO_TIERS = np.zeros(0, np.float32)


class ThresholdReward(RewardScheme):
    """Tiered reward: ``word_reward`` if the page contains a topic word, else the first tier
    ``(threshold, reward)`` whose threshold the cosine exceeds, else ``miss``."""

    def __init__(self, name: str, tiers: Sequence[tuple[float, float]], word_reward: float = 30.0,
                 miss: float = -1.0):
        self.name, self.tiers, self.word_reward, self.miss = name, tuple(tiers), word_reward, miss
        self.max_reward = max([word_reward] + [r for _, r in self.tiers])

    def __call__(self, s: PageScores) -> tuple[np.ndarray, np.ndarray]:
        r = np.full(len(s.rel), self.miss, np.float32)
        for thr, val in sorted(self.tiers, reverse=True):
            r[(r == self.miss) & (s.rel > thr)] = val
        contains = s.tfidf > 0
        r[contains] = self.word_reward
        # Han 2018 §3.1 / the thesis: a page is *relevant* (for relevant-parent and distance features)
        # when its tf-idf relevance is > 0, i.e. it contains a topic word — not merely when rewarded.
        return r, contains

    def elementwise(self) -> tuple[int, np.ndarray, np.ndarray, float, float] | None:
        if type(self) is not ThresholdReward:  # a subclass may compute otherwise
            return None
        tiers = sorted(self.tiers, reverse=True)
        # numpy compares a float32 array with a Python float, and stores one into it, in float32
        return (ELEMENTWISE_TIERS, np.array([t for t, _ in tiers], np.float32), np.array([v for _, v in tiers],
                np.float32), float(np.float32(self.word_reward)), float(np.float32(self.miss)))


class BinaryReward(RewardScheme):
    """Reward 1 for a relevant page, else 0.

    :param labelled: relevant means the page carries the topic's label; ``False``: the page contains a
        topic word (tf-idf relevance > 0).
    """

    name = "binary"
    max_reward = 1.0

    def __init__(self, labelled: bool = False):
        self.labelled = labelled

    def __call__(self, s: PageScores) -> tuple[np.ndarray, np.ndarray]:
        rel = s.label if self.labelled else (s.tfidf > 0)
        return rel.astype(np.float32), rel.astype(bool)

    def elementwise(self) -> tuple[int, np.ndarray, np.ndarray, float, float] | None:
        if type(self) is not BinaryReward:
            return None
        return (ELEMENTWISE_LABEL if self.labelled else ELEMENTWISE_WORD, _NO_TIERS, _NO_TIERS, 1.0, 0.0)


class LabelReward(RewardScheme):
    name = "labels"
    max_reward = 1.0
    needs_label = True

    def __call__(self, s: PageScores) -> tuple[np.ndarray, np.ndarray]:
        return s.label.astype(np.float32), s.label.astype(bool)

    def elementwise(self) -> tuple[int, np.ndarray, np.ndarray, float, float] | None:
        if type(self) is not LabelReward:
            return None
        return (ELEMENTWISE_LABEL, _NO_TIERS, _NO_TIERS, 1.0, 0.0)


class CallableReward(RewardScheme):
    """A user function ``fn(scores) -> (n,) rewards``; relevant = reward > 0."""

    def __init__(self, fn: Callable[[PageScores], np.ndarray], max_reward: float = 1.0, name: str = "callable"):
        self.fn, self.max_reward, self.name = fn, max_reward, name

    def __call__(self, s: PageScores) -> tuple[np.ndarray, np.ndarray]:
        r = np.asarray(self.fn(s), dtype=np.float32).reshape(len(s.rel))
        return r, r > 0


_CLF_MEMO: weakref.WeakKeyDictionary[Any, dict] = weakref.WeakKeyDictionary()
#: corpora up to this many pages get every page's classifier decision at bind time (one batch)
_EAGER_PAGES = 200_000


class ClassifierReward(RewardScheme):
    """TRES's reward: the verdict of an offline relevance classifier on the fetched page's text.

    ``reward = 1`` if ``P(relevant | page text) ≥ threshold`` else ``0``; the *relevant* flag (which
    drives the crawler's own parent/path/domain statistics, as TRES's classifier does) is the same
    verdict. It is noisy — the classifier errs both ways — while ``relevant_found`` keeps counting
    ground-truth labels, so reward and metric disagree exactly where the classifier is wrong.

    **No leak.** The classifier is fitted by
    :func:`~gym_crawl.relevance.classifier.train_heldout_classifier` on the URL-hash
    *classifier-train* split of the corpus only (``fraction`` of the pages, ``salt``); no label of
    another page shapes it. Crawl the corpus' :func:`~gym_crawl.relevance.classifier.heldout_view`
    (``gym.make(..., corpus=heldout_view(corpus), reward="classifier")``): its metric then counts
    evaluation pages only, none of which the classifier saw. On the plain corpus the classifier is
    the same, but ``relevant_found`` also counts the classifier-train pages.

    Args:
        kind: ``"auto"`` (model selection among :data:`~gym_crawl.relevance.classifier.KINDS` by
            cross-validated F-macro: our stand-in for TRES's BiLSTM) or one classifier kind, e.g.
            ``"svm"`` (ACHE's SVM: TRES_SVM of Table 4).
        threshold: probability at or above which a page is relevant.
        fraction, salt: the classifier-train split.
        classifier: a ready :class:`~gym_crawl.relevance.classifier.TextClassifier` (then nothing is
            trained; the caller answers for what it was trained on).
        train_kwargs: further arguments of ``train_heldout_classifier`` (``max_train``, ``folds``,
            ``grid_C``, ``seed``, …).

    The env binds the scheme to its corpus and topic at every reset (:meth:`bind`); classifiers are
    trained once per (corpus, topic, options) and process, and a page's verdict is computed once.
    """

    name = "classifier"
    max_reward = 1.0
    needs_label = True

    def __init__(self, kind: str = "auto", *, threshold: float = 0.5, fraction: float = 0.3, salt: str | None = None,
                 classifier: Any = None, **train_kwargs: Any):
        from gym_crawl.relevance.classifier import ALL_KINDS, DEFAULT_SPLIT_SALT, check_fraction

        if kind != "auto" and kind not in ALL_KINDS:
            raise ValueError(f"ClassifierReward kind {kind!r}: expected 'auto' or one of {ALL_KINDS}")
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0.0 < threshold < 1.0:
            raise ValueError(f"ClassifierReward threshold must be in (0, 1), got {threshold!r}")
        self.kind, self.threshold, self.fraction = kind, float(threshold), check_fraction(fraction)
        self.salt = DEFAULT_SPLIT_SALT if salt is None else str(salt)
        self.train_kwargs = dict(train_kwargs)
        self._given = classifier
        self.classifier: Any = classifier
        self._corpus: Any = None
        #: the pages' verdicts: (n_pages,) int8 0 / 1 on a corpus of up to ``_EAGER_PAGES`` pages (all computed at
        #: bind), else keyed by page (:class:`~gym_crawl.pagemap.KeyedRows`, column ``v``): the pages fetched so far
        self._verdict: np.ndarray | KeyedRows | None = None

    def _key(self, topic: Any) -> tuple:
        return (topic, self.kind, self.threshold, self.fraction, self.salt, id(self._given),
                tuple(sorted((k, repr(v)) for k, v in self.train_kwargs.items())))

    def bind(self, scorer: Any) -> None:
        """Attach the scheme to ``scorer``'s corpus and topic (the env calls this at reset)."""
        corpus, topic = scorer.corpus, scorer.topic
        if not topic.label:
            raise ValueError(f"reward 'classifier' needs a topic with a label (labelled training pages); "
                             f"topic {topic.name!r} has none")
        memo = _CLF_MEMO.setdefault(corpus, {})
        key = self._key(topic)
        hit = memo.get(key)
        if hit is None:
            clf = self._given
            if clf is None:
                from gym_crawl.relevance.classifier import KINDS, train_heldout_classifier

                kinds = KINDS if self.kind == "auto" else (self.kind,)
                clf = train_heldout_classifier(corpus, topic, scorer.text, fraction=self.fraction, salt=self.salt,
                                               kinds=kinds, **self.train_kwargs).classifier
            verdict: np.ndarray | KeyedRows = KeyedRows(("v", np.int8))
            if corpus.n_pages <= _EAGER_PAGES:
                verdict = np.zeros(corpus.n_pages, np.int8)
                for a in range(0, corpus.n_pages, 20_000):
                    pages = np.arange(a, min(a + 20_000, corpus.n_pages))
                    verdict[pages] = clf.proba_pages(corpus, pages) >= self.threshold
            hit = memo[key] = (clf, verdict)
        self.classifier, self._verdict = hit
        self._corpus = corpus

    def __call__(self, s: PageScores) -> tuple[np.ndarray, np.ndarray]:
        pages = getattr(s, "pages", None)
        if pages is None:
            raise RuntimeError("reward 'classifier' needs the fetched pages' ids (PageScores.pages) and a bound "
                               "corpus/topic (ClassifierReward.bind): use it through the env, which provides both")
        if self._verdict is None:
            raise RuntimeError("reward 'classifier' is not bound to a corpus/topic: call bind(scorer) first")
        pages = np.asarray(pages, np.int64)
        t = self._verdict
        if isinstance(t, np.ndarray):
            v = t[pages]
        else:
            rows = t.rows(pages)
            todo = rows < 0
            if todo.any():
                p = pages[todo]
                new = self.classifier.proba_pages(self._corpus, p) >= self.threshold
                u, first = np.unique(p, return_index=True)
                added = t.add(u)  # may grow the column: read it after
                t.cols["v"][added] = new[first]
                rows = t.rows(pages)
            v = t.cols["v"][rows]
        r = v.astype(np.float32)
        return r, v > 0


#: name -> factory(labelled=bool) -> RewardScheme
REWARDS: Registry[RewardScheme] = Registry("reward", "a RewardScheme or a callable f(PageScores) -> rewards")
REWARDS.register("han2018", lambda labelled=False: ThresholdReward("han2018", tiers=((0.5, 30.0), (0.4, 20.0))),
                 "Han 2018: topic word -> 30, else word-vector cosine > 0.5 -> 30, > 0.4 -> 20, else -1")
REWARDS.register("thesis", lambda labelled=False: ThresholdReward("thesis", tiers=((0.6, 30.0), (0.5, 20.0))),
                 "Pertejo 2021 code: topic word -> 30, cosine > 0.6 -> 30, > 0.5 -> 20, else -1")
REWARDS.register("binary", lambda labelled=False: BinaryReward(labelled=labelled),
                 "TRES: 1 if the page is relevant, else 0")
REWARDS.register("labels", lambda labelled=False: LabelReward(),
                 "ground truth: 1 if the page carries the topic's label")
REWARDS.register("classifier", lambda labelled=False: ClassifierReward(),
                 "TRES: 1 if an offline text classifier (fitted on the URL-hash classifier-train split only) "
                 "calls the page relevant; crawl heldout_view(corpus) to count evaluation pages only")
REWARDS.register("classifier-svm", lambda labelled=False: ClassifierReward("svm"),
                 "ACHE's page classifier: 'classifier' with a linear SVM (fitted on the classifier-train split only)")
#: Kept for compatibility: the built-in reward names.
REWARD_SCHEMES = ("han2018", "thesis", "binary", "labels")


def get_reward_scheme(spec: str | RewardScheme | Callable, *, labelled: bool = False) -> RewardScheme:
    """Resolve a registered reward name (see module docstring), a :class:`RewardScheme` or a callable."""
    if isinstance(spec, RewardScheme):
        return spec
    if callable(spec):
        return CallableReward(spec)
    return REWARDS.build(spec, labelled=labelled)
