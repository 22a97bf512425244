"""An offline relevance classifier for a topic: trained on labelled pages before crawling (TRES §3.3).

TRES trains a BiLSTM on a labelled dataset *before* the crawl and uses it for the reward and for the
"classifier probability of the anchor text" feature. Here the labelled dataset is a held-out split
of the corpus' own pages with the topic's ground-truth label (Wikispeedia categories, synthetic
labels): :func:`train_topic_classifier` draws a stratified random ``train_fraction`` of the pages
(at most ``max_train``), selects a model by stratified cross-validation *on that split only*, refits
it there, and reports precision / recall of the relevant class and F-macro (TRES Table 1) on the
remaining pages.

Every model is linear in two views of a bag of words, so one vectorized sparse product scores any
number of texts — pages or links' anchor + URL text — and the model is stored as a few arrays
(``.npz``, no pickle):

===================  ==============================================================================
kind                 decision value of a bag of words ``c`` (term counts)
===================  ==============================================================================
``tfidf-lr``         logistic regression on the L2-normalised tf-idf vector (the usual baseline;
                     ACHE's SVM is the same family)
``nb``               multinomial naive Bayes log-odds ``Σ_t c_t·(log θ₁ₜ − log θ₀ₜ) + log π₁/π₀``
                     (Laplace smoothing ``alpha``), fitted on binary term presence
``vec-lr``           logistic regression on the L2-normalised idf-weighted mean word vector
                     (the corpus' :class:`~gym_crawl.text.TextModel` vectors)
``tfidf+vec-lr``     logistic regression on both views concatenated
``svm``              linear SVM (hinge loss, L2; sklearn ``LinearSVC``) on the tf-idf view — ACHE's
                     page classifier (TRES Table 1 "ACHE's SVM", Table 4 TRES_SVM). Not one of the
                     default :data:`KINDS` (model selection never picks it unless asked);
                     its "probability" is ``sigmoid(margin)``: monotone, 0.5 at the SVM's boundary,
                     not calibrated
===================  ==============================================================================

IDF and the tf-idf vocabulary (``min_df``, ``max_features``) come from the training split only. Probabilities are
``sigmoid(decision)``; the
classification threshold is 0.5.

Fairness: labels are read for the training split only, once, before any crawl — the same footing
as TRES's offline training set. The crawl itself never sees labels; the classifier sees the text a
crawler would see (fetched pages' text, discovered links' anchor/URL text).

**Held-out split.** TRES trains its classifier on DMOZ pages and crawls the live web:
the pages it was fitted on are not the pages its crawl is scored on. On one corpus the same
separation is a *URL-hash split*: :func:`classifier_train_mask` puts a page in the classifier-train
split when ``crc32(salt ‖ title) < fraction · 2³²`` — it depends on the URL only, never on labels or
text. :func:`heldout_view` returns the corpus seen by the crawl: the same pages, links and text, but
the labels of classifier-train pages are renamed ``"clf-train:" + label``, so no topic label matches
them and ``relevant_found`` / harvest rate count **evaluation pages only**. :func:`train_heldout_classifier`
fits on (a stratified subsample of) the classifier-train split, using no label of an evaluation page:
tampering with evaluation pages' labels leaves the fitted classifier bit-for-bit unchanged
(tests/test_classifier_reward.py). The ``classifier`` reward
(:class:`gym_crawl.relevance.rewards.ClassifierReward`) uses it.
"""
from __future__ import annotations

import dataclasses
import io
import json
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gym_crawl._arith import exp, log, row_dots
from gym_crawl._io import atomic_write_bytes
from gym_crawl.corpus.core import Corpus, StringTable
from gym_crawl.relevance.topic import Topic
from gym_crawl.text.model import TextModel, gather_csr, gather_ranges

if TYPE_CHECKING:  # scipy.sparse is imported where a matrix is built: a process that only steps an env never
    import scipy.sparse as sp  # loads it

__all__ = ["TextClassifier", "ClassifierReport", "train_topic_classifier", "split_pages", "bag_matrix",
           "link_bags", "page_bags", "KINDS", "ALL_KINDS", "evaluate", "classifier_train_mask", "heldout_view",
           "true_label_mask", "train_heldout_classifier", "TRAIN_LABEL_PREFIX", "DEFAULT_SPLIT_SALT",
           "check_fraction"]

#: the kinds model selection chooses from by default
KINDS = ("tfidf-lr", "nb", "vec-lr", "tfidf+vec-lr")
#: every kind, including ACHE's linear SVM (asked for explicitly)
ALL_KINDS = KINDS + ("svm",)
_TFIDF_KINDS = ("tfidf-lr", "tfidf+vec-lr", "svm")


# ------------------------------------------------------------------ bags of words
def page_bags(corpus: Corpus, pages: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(terms, counts, rowpos)`` of the pages' texts (CSR rows of the corpus)."""
    pages = np.asarray(pages, np.int64)
    t, rp = gather_ranges(corpus.text_lo, corpus.text_hi, corpus.text_terms, pages)
    c, _ = gather_ranges(corpus.text_lo, corpus.text_hi, corpus.text_counts, pages)
    return t.astype(np.int64), c.astype(np.float64), rp


def link_bags(corpus: Corpus, links: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(terms, counts, rowpos)`` of links' anchor text + URL text (the target's title tokens):
    what a crawler reads on the link before fetching it."""
    links = np.asarray(links, np.int64)
    a, ar = gather_csr(corpus.anchor_ptr, corpus.anchor_terms, links)
    u, ur = gather_csr(corpus.title_ptr, corpus.title_terms, np.asarray(corpus.link_dst)[links])
    t = np.concatenate([a, u]).astype(np.int64)
    return t, np.ones(len(t)), np.concatenate([ar, ur])


def bag_matrix(terms: np.ndarray, counts: np.ndarray, rowpos: np.ndarray, n_rows: int, V: int) -> sp.csr_matrix:
    """(n_rows, V) sparse count matrix (duplicates summed)."""
    import scipy.sparse as sp
    m = sp.csr_matrix((counts, (rowpos, terms)), shape=(n_rows, V))
    m.sum_duplicates()
    return m


# ------------------------------------------------------------------ the model
@dataclass
class TextClassifier:
    """A linear bag-of-words relevance classifier (see the module docstring).

    Attributes:
        kind: one of :data:`KINDS`.
        idf: (V,) IDF of the training split; zero for terms outside the tf-idf vocabulary (terms in
            fewer than ``min_df`` training pages, or beyond the ``max_features`` most frequent).
        vec_idf: (V,) IDF weights of the word-vector view (every term; empty for other kinds).
        w_terms: (V,) weights of the tf-idf view (``tfidf-*``) or NB log-odds per term (``nb``).
        w_vec: (k,) weights of the mean-word-vector view (``*vec-lr``), else empty.
        bias: intercept.
        vectors: (V, k) word vectors used by the vector view (shared with the TextModel), or None.
        meta: training details (topic, split sizes, hyper-parameters, test metrics).
    """

    kind: str
    idf: np.ndarray
    vec_idf: np.ndarray
    w_terms: np.ndarray
    w_vec: np.ndarray
    bias: float
    vectors: np.ndarray | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    # ---------------------------------------------------------------- scoring
    def decision_matrix(self, M: sp.spmatrix) -> np.ndarray:
        """(n,) decision values (log-odds) of the rows of a sparse (n, V) term-count matrix."""
        import scipy.sparse as sp
        M = sp.csr_matrix(M, dtype=np.float64)
        M.sum_duplicates()
        n = M.shape[0]
        out = np.full(n, self.bias, np.float64)
        if M.nnz == 0:
            return out
        rows = np.repeat(np.arange(n), np.diff(M.indptr))
        t = M.indices
        if self.kind == "nb":
            return out + np.bincount(rows, weights=(M.data > 0) * self.w_terms[t].astype(np.float64), minlength=n)
        if self.kind in _TFIDF_KINDS:  # O(nnz): never touches the whole vocabulary
            w = M.data * self.idf[t]
            norm = np.sqrt(np.bincount(rows, weights=w * w, minlength=n))
            dot = np.bincount(rows, weights=w * self.w_terms[t], minlength=n)
            out += np.divide(dot, norm, out=np.zeros(n), where=norm > 0)
        if self.kind in ("vec-lr", "tfidf+vec-lr"):  # gather only the rows of the terms present
            assert self.vectors is not None
            contrib = self.vectors[t].astype(np.float64) * (M.data * self.vec_idf[t])[:, None]
            nz = np.diff(M.indptr) > 0
            S = np.zeros((n, self.vectors.shape[1]))
            S[nz] = np.add.reduceat(contrib, M.indptr[:-1][nz], axis=0)
            out += row_dots(_rownorm_dense(S), self.w_vec.astype(np.float64))
        return out

    def decision(self, terms: np.ndarray, counts: np.ndarray, rowpos: np.ndarray, n_rows: int) -> np.ndarray:
        """(n_rows,) decision values of bags given as ``(terms, counts, rowpos)``."""
        return self.decision_matrix(bag_matrix(terms, counts, rowpos, n_rows, len(self.idf)))

    def proba(self, terms: np.ndarray, counts: np.ndarray, rowpos: np.ndarray, n_rows: int) -> np.ndarray:
        """(n_rows,) float32 P(relevant | bag)."""
        return _sigmoid(self.decision(terms, counts, rowpos, n_rows))

    def proba_matrix(self, M: sp.spmatrix) -> np.ndarray:
        """(n,) float32 P(relevant) of the rows of a sparse term-count matrix."""
        return _sigmoid(self.decision_matrix(M))

    def proba_pages(self, corpus: Corpus, pages: np.ndarray) -> np.ndarray:
        """P(relevant) of pages from their text."""
        t, c, rp = page_bags(corpus, pages)
        return self.proba(t, c, rp, len(pages))

    def proba_links(self, corpus: Corpus, links: np.ndarray) -> np.ndarray:
        """P(relevant) of links' targets from the links' anchor + URL text."""
        t, c, rp = link_bags(corpus, links)
        return self.proba(t, c, rp, len(links))

    # ------------------------------------------------------------ persistence
    def save(self, path: str | Path) -> None:
        """Write an ``.npz`` (no pickle; the word vectors are not stored — pass them to :meth:`load`)."""
        buf = io.BytesIO()
        np.savez(buf, idf=self.idf, vec_idf=self.vec_idf, w_terms=self.w_terms, w_vec=self.w_vec,
                 bias=np.asarray(self.bias),
                 header=np.frombuffer(json.dumps({"kind": self.kind, "meta": self.meta}).encode(), np.uint8))
        atomic_write_bytes(path, buf.getvalue())

    @classmethod
    def load(cls, path: str | Path, vectors: np.ndarray | None = None) -> TextClassifier:
        with np.load(path, allow_pickle=False) as z:
            h = json.loads(bytes(z["header"]).decode())
            clf = cls(h["kind"], z["idf"].copy(), z["vec_idf"].copy(), z["w_terms"].copy(), z["w_vec"].copy(),
                      float(z["bias"]),
                      vectors, h["meta"])
        if clf.kind in ("vec-lr", "tfidf+vec-lr") and vectors is None:
            raise ValueError(f"{path}: a {clf.kind!r} classifier needs the word vectors (vectors=...)")
        return clf


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return (1.0 / (1.0 + exp(-np.clip(np.asarray(z, np.float64), -40, 40)))).astype(np.float32)


def _rownorm_sparse(X: sp.csr_matrix) -> sp.csr_matrix:
    import scipy.sparse as sp
    n = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    return sp.csr_matrix(sp.diags(np.divide(1.0, n, out=np.zeros_like(n), where=n > 0)) @ X)


def _rownorm_dense(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, np.float64)
    n = np.linalg.norm(X, axis=1, keepdims=True)
    return np.divide(X, n, out=np.zeros_like(X), where=n > 0)


def _idf(M: sp.csr_matrix) -> np.ndarray:
    import scipy.sparse as sp
    df = np.bincount(sp.csr_matrix(M).indices, minlength=M.shape[1]).astype(np.float64)
    return log((M.shape[0] + 1.0) / (df + 1.0)) + 1.0


class _Views:
    """Feature views of a training count matrix, computed once (IDF of the whole training split)."""

    def __init__(self, M: sp.csr_matrix, vectors: np.ndarray | None, min_df: int, max_features: int | None):
        import scipy.sparse as sp
        self.full_idf = _idf(M)
        df = np.bincount(sp.csr_matrix(M).indices, minlength=M.shape[1])
        keep = df >= min_df
        if max_features is not None and keep.sum() > max_features:
            order = np.lexsort((np.arange(len(df)), -df))  # most frequent first, ties by term id
            keep = np.zeros(len(df), bool)
            keep[order[:max_features]] = df[order[:max_features]] >= min_df
        self.cols = np.flatnonzero(keep)
        self.idf = self.full_idf * keep
        self.tfidf = _rownorm_sparse(M @ sp.diags(self.idf))[:, self.cols]
        self.vec = _rownorm_dense(M @ sp.diags(self.full_idf) @ vectors) if vectors is not None else None
        self.binary = sp.csr_matrix((M > 0).astype(np.float64))
        self.vectors = vectors

    def X(self, kind: str, rows: np.ndarray | slice) -> sp.csr_matrix:
        import scipy.sparse as sp
        parts = []
        if kind in _TFIDF_KINDS:
            parts.append(self.tfidf[rows])
        if kind in ("vec-lr", "tfidf+vec-lr"):
            parts.append(sp.csr_matrix(self.vec[rows]))  # type: ignore[index]
        return sp.hstack(parts).tocsr() if len(parts) > 1 else parts[0]


def _fit(kind: str, views: _Views, rows: np.ndarray | slice, y: np.ndarray, hp: float, balanced: bool
         ) -> TextClassifier:
    """Fit one model on the training rows ``rows`` of ``views`` with labels ``y`` (bool)."""
    V = len(views.idf)
    idf = views.idf.astype(np.float32)
    vec_idf = views.full_idf.astype(np.float32) if "vec" in kind else np.zeros(0, np.float32)
    y = np.asarray(y, bool)
    if kind == "nb":
        B = views.binary[rows]
        c1 = np.asarray(B[y].sum(axis=0)).ravel() + hp
        c0 = np.asarray(B[~y].sum(axis=0)).ravel() + hp
        w = log(c1 / c1.sum()) - log(c0 / c0.sum())
        prior = 0.0 if balanced else log(max(y.sum(), 1) / max((~y).sum(), 1))
        return TextClassifier("nb", idf, vec_idf, w.astype(np.float32), np.zeros(0, np.float32), prior, None,
                              {"alpha": hp, "balanced": balanced})
    if kind == "svm":
        from sklearn.svm import LinearSVC

        lr = LinearSVC(C=hp, loss="hinge", dual=True, class_weight="balanced" if balanced else None,
                       max_iter=5000, random_state=0)
    else:
        from sklearn.linear_model import LogisticRegression

        lr = LogisticRegression(C=hp, class_weight="balanced" if balanced else None, solver="liblinear", max_iter=1000)
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lr.fit(views.X(kind, rows), y.astype(int))
    coef = lr.coef_.ravel()
    k = 0 if views.vectors is None else views.vectors.shape[1]
    w_terms = np.zeros(V)
    if kind in _TFIDF_KINDS:
        w_terms[views.cols] = coef[:len(views.cols)]
    w_vec = coef[len(coef) - k:] if kind in ("vec-lr", "tfidf+vec-lr") else np.zeros(0)
    return TextClassifier(kind, idf, vec_idf, w_terms.astype(np.float32), w_vec.astype(np.float32),
                          float(lr.intercept_[0]),
                          views.vectors if kind in ("vec-lr", "tfidf+vec-lr") else None,
                          {"C": hp, "balanced": balanced})


# ------------------------------------------------------------------ evaluation
def evaluate(y: np.ndarray, p: np.ndarray) -> dict[str, float]:
    """Precision / recall of the relevant class, F-macro (mean F1 of both classes), at p ≥ 0.5;
    plus ROC AUC. Percentages as in TRES Table 1 are ×100 of these."""
    from sklearn.metrics import f1_score, precision_score, recall_score, roc_auc_score

    y = np.asarray(y, bool)
    pred = np.asarray(p) >= 0.5
    out = {"precision": float(precision_score(y, pred, zero_division=0)),
           "recall": float(recall_score(y, pred, zero_division=0)),
           "f_macro": float(f1_score(y, pred, average="macro", zero_division=0)),
           "n": int(len(y)), "positives": int(y.sum())}
    out["auc"] = float(roc_auc_score(y, p)) if 0 < y.sum() < len(y) else float("nan")
    return out


def split_pages(labels: np.ndarray, train_fraction: float, max_train: int | None, seed: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """Stratified random split of page ids into (train, test); the train split has at most
    ``max_train`` pages and keeps the positive rate."""
    rng = np.random.default_rng(seed)
    y = np.asarray(labels, bool)
    tr = []
    for cls in (True, False):
        idx = np.flatnonzero(y == cls)
        rng.shuffle(idx)
        k = int(round(train_fraction * len(idx)))
        if max_train is not None:
            k = min(k, int(round(max_train * len(idx) / len(y))))
        tr.append(idx[:max(k, 1 if len(idx) else 0)])
    train = np.sort(np.concatenate(tr))
    mask = np.ones(len(y), bool)
    mask[train] = False
    return train, np.flatnonzero(mask)


@dataclass
class ClassifierReport:
    """The selected classifier, the split it used, and test metrics of every candidate kind."""

    classifier: TextClassifier
    train_pages: np.ndarray
    test_pages: np.ndarray
    test_metrics: dict[str, dict[str, float]]
    cv_scores: dict[str, float]

    def table(self) -> list[dict[str, Any]]:
        """Rows ``{"model", "precision", "recall", "f_macro", "auc", "selected"}`` (TRES Table 1)."""
        return [{"model": k, **{m: round(100 * v, 1) if m in ("precision", "recall", "f_macro", "auc") else v
                                 for m, v in met.items()},
                 "selected": k == self.classifier.kind} for k, met in self.test_metrics.items()]


def train_topic_classifier(corpus: Corpus, topic: Topic, text: TextModel | None = None, *,
                           kinds: Sequence[str] = KINDS, train_fraction: float = 0.3, max_train: int | None = 5000,
                           max_test: int | None = 50_000, folds: int = 3, seed: int = 0,
                           grid_C: Sequence[float] = (1.0, 10.0), min_df: int = 2,
                           max_features: int | None = 20_000, train_pages: np.ndarray | None = None,
                           test_pages: np.ndarray | None = None, labels: np.ndarray | None = None
                           ) -> ClassifierReport:
    """Train the topic's offline relevance classifier on a held-out split of labelled pages.

    Model selection: for each kind, hyper-parameters (``C`` or NB ``alpha``, balanced class
    weights or not) by stratified ``folds``-fold CV F-macro on the training split; the kind with
    the best CV F-macro is selected and refitted on the whole training split. Every kind is also
    refitted and scored on the test split for the report (the test split never influences the
    choice).

    Args:
        corpus, topic: the topic must have a ``label`` (ground truth).
        text: the corpus' TextModel (word vectors for the ``vec`` views); default: built/cached.
        train_fraction, max_train: size of the labelled training split.
        max_test: evaluate on at most this many of the remaining pages (random subset).
        grid_C: inverse regularization strengths tried for the logistic regressions.
        min_df, max_features: the tf-idf vocabulary (terms in ≥ ``min_df`` training pages, at most
            the ``max_features`` most frequent).
        train_pages: an explicit labelled training split (then ``train_fraction``/``max_train`` are
            unused and the test split is every other page, or ``test_pages``).
        test_pages: an explicit test split (with ``train_pages``; must not overlap it).
        labels: (n_pages,) bool ground truth to use instead of ``topic.label_mask(corpus)`` (e.g.
            :func:`true_label_mask` of a :func:`heldout_view`). Only the training split's entries
            shape the classifier; the test split's are read for the report.
    """
    if not topic.label:
        raise ValueError(f"topic {topic.name!r} has no label: the classifier needs labelled pages")
    unknown = [k for k in kinds if k not in ALL_KINDS]
    if unknown:
        raise ValueError(f"unknown classifier kind(s) {unknown}; expected some of {ALL_KINDS}")
    if not kinds:
        raise ValueError("kinds is empty: name at least one classifier kind")
    if text is None:
        from gym_crawl.text.model import get_text_model
        text = get_text_model(corpus)
    y_all = topic.label_mask(corpus) if labels is None else np.asarray(labels, bool)
    if y_all.shape != (corpus.n_pages,):
        raise ValueError(f"labels has shape {y_all.shape}; expected ({corpus.n_pages},)")
    if test_pages is not None and train_pages is None:
        raise ValueError("test_pages needs train_pages")
    if train_pages is None:
        train, test = split_pages(y_all, train_fraction, max_train, seed)
    else:
        train = np.unique(np.asarray(train_pages, np.int64))
        if test_pages is None:
            rest = np.ones(corpus.n_pages, bool)
            rest[train] = False
            test = np.flatnonzero(rest)
        else:
            test = np.unique(np.asarray(test_pages, np.int64))
            if np.intersect1d(train, test).size:
                raise ValueError("train_pages and test_pages overlap")
    if max_test is not None and len(test) > max_test:
        test = np.sort(np.random.default_rng(seed + 1).choice(test, size=max_test, replace=False))
    V = corpus.n_words
    M = bag_matrix(*page_bags(corpus, train), len(train), V)
    y = y_all[train]
    if y.sum() < folds or (~y).sum() < folds:
        raise ValueError(f"topic {topic.name!r}: only {int(y.sum())} relevant pages in the training split; "
                         f"raise train_fraction/max_train")
    from sklearn.model_selection import StratifiedKFold

    views = _Views(M, text.vectors if any("vec" in k for k in kinds) else None, min_df, max_features)
    skf = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    splits = list(skf.split(np.zeros(len(y)), y))
    best_cfg: dict[str, tuple[float, float, bool]] = {}
    for kind in kinds:
        grid = [(a, b) for a in ((0.1, 0.5, 1.0) if kind == "nb" else tuple(grid_C)) for b in (False, True)]
        scores = []
        for hp, bal in grid:
            f = []
            for tr_i, va_i in splits:
                m = _fit(kind, views, tr_i, y[tr_i], hp, bal)
                f.append(evaluate(y[va_i], m.proba_matrix(M[va_i]))["f_macro"])
            scores.append((float(np.mean(f)), hp, bal))
        s_, hp, bal = max(scores, key=lambda z: (z[0], -abs(np.log(z[1]))))
        best_cfg[kind] = (s_, hp, bal)
    Mt = bag_matrix(*page_bags(corpus, test), len(test), V)
    metrics: dict[str, dict[str, float]] = {}
    models: dict[str, TextClassifier] = {}
    for kind, (_, hp, bal) in best_cfg.items():
        m = _fit(kind, views, slice(None), y, hp, bal)
        models[kind] = m
        metrics[kind] = evaluate(y_all[test], m.proba_matrix(Mt))
    chosen = max(best_cfg, key=lambda k: best_cfg[k][0])
    clf = models[chosen]
    clf.meta.update({"topic": topic.name, "label": topic.label, "corpus": corpus.name, "train_pages": int(len(train)),
                     "train_positives": int(y.sum()), "test_pages": int(len(test)), "seed": seed,
                     "cv_f_macro": {k: round(v[0], 4) for k, v in best_cfg.items()},
                     "test": metrics[chosen]})
    return ClassifierReport(clf, train, test, metrics, {k: v[0] for k, v in best_cfg.items()})


# ------------------------------------------------------------------ held-out split
#: label prefix that marks a classifier-train page's labels in a :func:`heldout_view`
TRAIN_LABEL_PREFIX = "clf-train:"
DEFAULT_SPLIT_SALT = "gym-crawl-classifier-split"


def check_fraction(fraction: float) -> float:
    """``fraction`` (the share of pages in the classifier-train split) as a float in (0, 1); ``ValueError``
    naming it otherwise."""
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0.0 < float(fraction) < 1.0:
        raise ValueError(f"fraction must be a number in (0, 1) (share of pages in the classifier-train split), "
                         f"got {fraction!r}")
    return float(fraction)


def _hash_mask(corpus: Corpus, fraction: float, salt: str) -> np.ndarray:
    thr = int(check_fraction(fraction) * 2 ** 32)
    pre = f"{salt}\x00".encode()
    h = np.fromiter((zlib.crc32(t.encode("utf-8"), zlib.crc32(pre)) for t in corpus.titles), np.uint64,
                    count=corpus.n_pages)
    return h < thr


def classifier_train_mask(corpus: Corpus, fraction: float = 0.3, salt: str = DEFAULT_SPLIT_SALT) -> np.ndarray:
    """(n_pages,) bool: the classifier-train split — ``crc32(salt ‖ title) < fraction · 2³²``.

    Depends on the page's URL (title) only. For a :func:`heldout_view` the view's own split is
    returned (its ``fraction``/``salt``; other arguments must agree or be the defaults)."""
    split = corpus.meta.get("classifier_split")
    if split is not None:
        if (fraction, salt) not in ((0.3, DEFAULT_SPLIT_SALT), (split["fraction"], split["salt"])):
            raise ValueError(f"corpus {corpus.name!r} is a held-out view with fraction={split['fraction']}, "
                             f"salt={split['salt']!r}; got fraction={fraction!r}, salt={salt!r}")
        return _hash_mask(corpus, split["fraction"], split["salt"])
    return _hash_mask(corpus, fraction, salt)


def heldout_view(corpus: Corpus, fraction: float = 0.3, salt: str = DEFAULT_SPLIT_SALT) -> Corpus:
    """The corpus a crawl is evaluated on when a classifier is trained on the same corpus.

    Same pages, links, text and domains (arrays shared); the labels of the classifier-train split
    (:func:`classifier_train_mask`) are renamed ``TRAIN_LABEL_PREFIX + label``, so a topic's label
    matches evaluation pages only: ``relevant_found``, harvest rate and the ``labels``/``binary``
    rewards never count a page a classifier was fitted on. ``meta["classifier_split"]`` records the
    split; :func:`true_label_mask` gives the original labels back (for training)."""
    if "classifier_split" in corpus.meta:
        raise ValueError(f"corpus {corpus.name!r} is already a held-out view")
    mask = classifier_train_mask(corpus, fraction, salt)
    n_lab = len(corpus.labels)
    labels = StringTable.from_strings(list(corpus.labels) + [TRAIN_LABEL_PREFIX + lab for lab in corpus.labels])
    n_labels: np.ndarray = np.diff(np.asarray(corpus.label_ptr, np.int64))
    owner = np.repeat(np.arange(corpus.n_pages), n_labels)
    ids = np.asarray(corpus.label_ids).astype(np.int64) + n_lab * mask[owner]
    meta = dict(corpus.meta)
    meta["classifier_split"] = {"fraction": float(fraction), "salt": str(salt), "n_train": int(mask.sum()),
                                "label_prefix": TRAIN_LABEL_PREFIX, "of": corpus.name}
    meta["name"] = f"{corpus.name}-heldout"
    return dataclasses.replace(corpus, label_ids=ids.astype(np.asarray(corpus.label_ids).dtype), labels=labels,
                               meta=meta, path=None)


def true_label_mask(corpus: Corpus, topic: Topic) -> np.ndarray:
    """(n_pages,) bool ground truth of ``topic`` on every page — on a :func:`heldout_view` the
    classifier-train pages' renamed labels included (for training and oracles, never for a crawl)."""
    y = topic.label_mask(corpus)  # a view keeps the original label strings: no KeyError for a known label
    if "classifier_split" in corpus.meta and topic.label:
        y = y | dataclasses.replace(topic, label=TRAIN_LABEL_PREFIX + topic.label).label_mask(corpus)
    return y


def train_heldout_classifier(corpus: Corpus, topic: Topic, text: TextModel | None = None, *,
                             fraction: float = 0.3, salt: str = DEFAULT_SPLIT_SALT, max_train: int | None = 5000,
                             seed: int = 0, **kwargs: Any) -> ClassifierReport:
    """:func:`train_topic_classifier` on the classifier-train split only.

    Training pages: a stratified subsample of at most ``max_train`` pages of
    :func:`classifier_train_mask` (the subsample reads the labels of those pages only); test pages
    (the report, TRES Table 1): every evaluation page (``max_test`` of them at most). No label of an
    evaluation page influences the classifier. ``corpus`` may be the plain corpus or its
    :func:`heldout_view` (same split, same classifier)."""
    if not topic.label:
        raise ValueError(f"topic {topic.name!r} has no label: the classifier needs labelled pages")
    mask = classifier_train_mask(corpus, fraction, salt)
    y = true_label_mask(corpus, topic)
    pool = np.flatnonzero(mask)
    if len(pool) == 0:
        raise ValueError(f"corpus {corpus.name!r}: the classifier-train split is empty (fraction={fraction})")
    sub, _ = split_pages(y[pool], 1.0, max_train, seed)
    return train_topic_classifier(corpus, topic, text, train_pages=pool[sub], test_pages=np.flatnonzero(~mask),
                                  labels=y, seed=seed, **kwargs)
