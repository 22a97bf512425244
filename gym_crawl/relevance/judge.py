"""The judge of a live crawl: which fetched pages are relevant — from topic words alone, or from topic words and
example pages the user gives.

A live crawl has no labels. Whatever says "this fetched page is relevant" is at once the reward online learners
learn from and the ``relevant_found`` count every summary reports; this module makes that judgement something the
user controls. A **judge** is a callable on page text:

* ``judge(text) -> float`` — the judge's score of one page's text in ``[0, 1]`` (:meth:`Judge.proba_texts` for
  many texts, :meth:`Judge.proba_pages` for fetched pages of a corpus or a live web);
* ``judge.relevant(scores)`` — the verdict, ``score > judge.threshold``;
* :class:`JudgeReward` — the reward mapping: a :class:`~gym_crawl.relevance.rewards.RewardScheme` giving ``hit``
  (default 30, Han et al.'s reward of a relevant page) to a page the judge calls relevant and ``miss``
  (default −1) to any other; its relevant flag is the verdict, so ``relevant_found`` counts what the judge says.

Two judges:

:class:`WordsJudge` (``kind="words"``)
    the topic words alone — the live crawl's default and what the ``han2018`` reward's relevant flag says: a page
    is relevant when it contains a topic word. Its score is the tf-idf cosine of the page with the topic words
    (0 for a page without one), so it ranks as well as it decides.

:class:`ExampleJudge` (``kind="examples"``)
    a page classifier built from example pages, as ACHE's model builder builds its page classifier from positive
    and negative pages: L2-regularised logistic regression (balanced class weights, ``C``, no intercept) on two
    views of a page in the general English text model (:mod:`gym_crawl.text.general`) — its tf-idf vector over its
    exact words (the model's IDF; a word it does not know gets its largest IDF) and its meaning vector (the
    tf-idf-weighted sum of the model's word vectors), each L2-normalised. **Positives**: the examples, and the
    topic words as one more (short) page. **Negatives**: the counter-examples, and a background sample of general
    English — :data:`BACKGROUND_PAGES` articles of the general model's own source drawn with a fixed seed (pages
    about anything but the examples' subject). A page is relevant when the fitted probability is above 0.5; a page
    that shares no word with the training pages and has no meaning vector has no evidence, so the intercept may
    only lower its score (it is never relevant).

Without the general model's source on this machine a judge has the exact words only (no meaning vectors, IDF 1,
no background: counter-examples are then needed), after one warning saying how to get it; a judge records which
space it was built in and refuses to load into another.

**Fairness.** A judge reads the text of fetched pages only (a corpus' ``text_terms`` of the pages asked for,
never labels or unfetched pages), and example pages the user gave.

**Persistence.** :meth:`ExampleJudge.to_dict` / :meth:`ExampleJudge.save` write JSON (weights, bias, threshold,
topic words, the text space's fingerprint, where the examples came from); nothing is pickled. A live crawl
records its judge in the WARC (:func:`gym_crawl.agents.live_crawl.recorded_judge` reads it back), so its replay
gets the same rewards.
"""
from __future__ import annotations

import math
import weakref
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._arith import exp, row_dots
from gym_crawl._io import atomic_write_json
from gym_crawl.corpus.core import Corpus
from gym_crawl.relevance.rewards import RewardScheme
from gym_crawl.relevance.scorer import PageScores
from gym_crawl.text.general import model_fingerprint, oov_params
from gym_crawl.text.model import TextModel, weighted_row_sums
from gym_crawl.tokenize import tokenize

__all__ = ["BACKGROUND_PAGES", "DEFAULT_C", "MEANING_SCALE", "ExampleJudge", "Judge", "JudgeError", "JudgeReward",
           "JudgeText", "WordsJudge", "background_bags", "build_judge", "judge_from_dict", "load_judge"]

JUDGE_FORMAT = "gym_crawl.judge"
JUDGE_VERSION = 1
BACKGROUND_PAGES = 200
"""Background negatives of an :class:`ExampleJudge` built without counter-examples: this many articles of the
general English model's source, drawn with seed 0."""
_HASH_DIM = 64
"""Dimension of the meaning vectors (the general model's)."""
DEFAULT_C = 1.0
"""The logistic regression's inverse L2 regularisation strength."""
MEANING_SCALE = 1.0
"""The scale of the meaning half of the features (the exact-word tf-idf half has norm 1)."""
_MIN_WEIGHT = 1e-9
"""Word weights at or below this magnitude are not kept."""


class JudgeError(ValueError):
    """A judge that cannot be built or loaded (one line naming the argument and the valid input)."""


# ------------------------------------------------------------------------------------------ the text space
class JudgeText:
    """The text space judges score pages in (see the module docstring): every word gets a row — its IDF and its
    meaning vector in the general English model (zero for a word the model does not know, or without the model) —
    computed once and kept.

    :param model: the general English :class:`~gym_crawl.text.model.TextModel`, or ``None`` (no meaning vectors,
        IDF 1: exact words only).
    """

    def __init__(self, model: TextModel | None):
        self.model = model
        self.fingerprint = "hashed" if model is None else f"general:{model_fingerprint(model)}"
        self._oov = oov_params(model) if model is not None else (1.0, 1.0)
        self.dim = _HASH_DIM
        self._row: dict[str, int] = {}
        self._words: list[str] = []
        self._idf = np.zeros(1024, np.float64)
        self._mean = np.zeros((1024, self.dim), np.float32)
        self._by_corpus: weakref.WeakKeyDictionary[Any, np.ndarray] = weakref.WeakKeyDictionary()

    @classmethod
    def default(cls, general: bool | None = None) -> JudgeText:
        """The process' space: the general English model when its source is on this machine (``general=True``:
        required, :class:`~gym_crawl.text.general.GeneralTextUnavailable` otherwise; ``False``: exact words
        only)."""
        from gym_crawl.corpus.cache import data_dir
        from gym_crawl.text.general import general_source_path

        key = (general, str(general_source_path()), str(data_dir()))
        hit = _SPACES.get(key)
        if hit is None:
            model = None
            if general is not False:
                from gym_crawl.text.model import general_text_model

                model = general_text_model(required=bool(general), progress=False)
            hit = _SPACES[key] = cls(model)
        return hit

    def __len__(self) -> int:
        """Words with a row so far."""
        return len(self._words)

    def word(self, row: int) -> str:
        """The word of a row."""
        return self._words[row]

    def rows(self, words: Sequence[str]) -> np.ndarray:
        """Row indexes of ``words``, computing the rows of words not seen before."""
        new = [w for w in dict.fromkeys(words) if w not in self._row]
        if new:
            n0 = len(self._words)
            need = n0 + len(new)
            if need > len(self._idf):
                cap = max(need, 2 * len(self._idf))
                self._idf = np.resize(self._idf, cap)
                mean = np.zeros((cap, self.dim), np.float32)
                mean[:n0] = self._mean[:n0]
                self._mean = mean
            if self.model is not None:  # the general model's IDF and vector (the meaning half of general_rows)
                ref = self.model.corpus
                ids = np.fromiter((ref.word_id(w) for w in new), np.int64, count=len(new))
                known = ids >= 0
                self._idf[n0:need] = self._oov[0]
                self._idf[n0:need][known] = self.model.idf[ids[known]]
                self._mean[n0:need][known] = self.model.vectors[ids[known]]
            else:
                self._idf[n0:need] = 1.0
            for j, w in enumerate(new):
                self._row[w] = n0 + j
            self._words.extend(new)
        return np.fromiter((self._row[w] for w in words), np.int64, count=len(words))

    def idf(self, words: Sequence[str]) -> np.ndarray:
        """(len(words),) float64 IDF of ``words`` in this space."""
        return self._idf[self.rows(list(words))]

    def features(self, rows: np.ndarray, counts: np.ndarray, rowpos: np.ndarray, n: int
                 ) -> tuple[np.ndarray, np.ndarray]:
        """The features of bags given as rows, counts and the bag of each entry: ``(tfidf, meaning)`` — each
        entry's weight in its bag's L2-normalised tf-idf vector, and (n, dim) L2-normalised meaning vectors
        ``Σ tf·idf·v`` (zero rows for a bag without known words)."""
        rows = np.asarray(rows, np.int64)
        rowpos = np.asarray(rowpos, np.int64)
        w = np.asarray(counts, np.float64) * self._idf[rows]
        norms = np.sqrt(np.bincount(rowpos, weights=w * w, minlength=n))
        tfidf = np.divide(w, norms[rowpos], out=np.zeros_like(w), where=norms[rowpos] > 0)
        m = weighted_row_sums(self._mean, rows, w, rowpos, n).astype(np.float64)
        mn = np.sqrt(np.einsum("ij,ij->i", m, m))
        return tfidf, np.divide(m, mn[:, None], out=np.zeros_like(m), where=mn[:, None] > 0)

    def text_bags(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(rows, counts, rowpos)`` of the tokens of ``texts`` (tokenized as pages are)."""
        rows, counts, pos = [], [], []
        for i, t in enumerate(texts):
            bag = Counter(tokenize(t))
            words = sorted(bag)
            rows.append(self.rows(words))
            counts.append(np.array([bag[w] for w in words], np.float64))
            pos.append(np.full(len(words), i, np.int64))
        if not rows:
            return np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int64)
        return np.concatenate(rows), np.concatenate(counts), np.concatenate(pos)

    def page_bags(self, corpus: Corpus, pages: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(rows, counts, rowpos)`` of the text of ``pages`` of ``corpus`` (its ``text_terms``: a fetched page's
        main text; nothing else of the corpus is read)."""
        from gym_crawl.text.model import gather_ranges

        pages = np.asarray(pages, np.int64)
        t, rp = gather_ranges(corpus.text_lo, corpus.text_hi, corpus.text_terms, pages)
        c, _ = gather_ranges(corpus.text_lo, corpus.text_hi, corpus.text_counts, pages)
        t = np.asarray(t, np.int64)
        ids = self._by_corpus.get(corpus)
        if ids is None or len(ids) < corpus.n_words:
            grown = np.full(max(corpus.n_words, 1), -1, np.int64)
            if ids is not None:
                grown[:len(ids)] = ids
            ids = grown
            self._by_corpus[corpus] = ids
        todo = np.unique(t[ids[t] < 0]) if len(t) else t
        if len(todo):
            vocab = corpus.vocab
            ids[todo] = self.rows([vocab[int(i)] for i in todo])
        return ids[t], np.asarray(c, np.float64), np.asarray(rp, np.int64)


_SPACES: dict[tuple[bool | None, str, str], JudgeText] = {}


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + exp(-np.clip(np.asarray(z, np.float64), -40.0, 40.0)))


# ------------------------------------------------------------------------------------------ judges
class Judge:
    """What every judge offers (see the module docstring): scores in ``[0, 1]`` and the verdict at ``threshold``."""

    kind = "judge"
    threshold = 0.5
    words: tuple[str, ...] = ()
    space: JudgeText

    def proba_bags(self, rows: np.ndarray, counts: np.ndarray, rowpos: np.ndarray, n: int) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover - abstract

    def proba_texts(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts),) float64 scores of page texts."""
        return self.proba_bags(*self.space.text_bags(texts), len(texts))

    def proba_pages(self, corpus: Corpus, pages: np.ndarray) -> np.ndarray:
        """(len(pages),) float64 scores of fetched ``pages`` of ``corpus`` (a static corpus or a live web), from
        their text only."""
        pages = np.asarray(pages, np.int64)
        return self.proba_bags(*self.space.page_bags(corpus, pages), len(pages))

    def relevant(self, scores: np.ndarray) -> np.ndarray:
        """The verdict of scores: ``scores > threshold``."""
        return np.asarray(scores) > self.threshold

    def __call__(self, text: str) -> float:
        """The score of one page's text."""
        return float(self.proba_texts([text])[0])

    def describe(self) -> dict[str, Any]:
        """A short JSON-ready description (kind, words, threshold, and what the judge was built from)."""
        return {"kind": self.kind, "words": list(self.words), "threshold": self.threshold}


class WordsJudge(Judge):
    """The topic words alone (the live default): relevant when the page contains a topic word; the score is the
    tf-idf cosine of the page with the topic words, IDF of the text space.

    :param words: the topic words (tokenized as pages are).
    :param space: the text space (default :meth:`JudgeText.default`).
    """

    kind = "words"
    threshold = 0.0  # relevant iff the cosine is > 0: the page holds a topic word

    def __init__(self, words: Sequence[str], space: JudgeText | None = None):
        toks = tuple(dict.fromkeys(t for w in words for t in tokenize(str(w))))
        if not toks:
            raise JudgeError(f"topic words {list(words)!r}: no word left after tokenizing (stop words and "
                             f"one-letter tokens are dropped); give the words the pages use")
        self.words = toks
        self.space = space if space is not None else JudgeText.default()
        q = self.space.idf(list(toks)).astype(np.float64)
        self._topic_rows = self.space.rows(list(toks))
        self._qidf = q / math.sqrt(float(np.dot(q, q)))

    def proba_bags(self, rows: np.ndarray, counts: np.ndarray, rowpos: np.ndarray, n: int) -> np.ndarray:
        w = np.asarray(counts, np.float64) * self.space._idf[rows]
        hit = np.isin(rows, self._topic_rows)
        q = np.zeros(len(rows))
        if hit.any():
            lookup = dict(zip(self._topic_rows.tolist(), self._qidf.tolist()))
            q[hit] = [lookup[int(r)] for r in rows[hit]]
        sq = np.bincount(rowpos, weights=w * w, minlength=n)
        dot = np.bincount(rowpos, weights=w * q, minlength=n)
        return np.divide(dot, np.sqrt(sq), out=np.zeros(n), where=sq > 0)


class ExampleJudge(Judge):
    """A page classifier from example pages (see the module docstring; build one with :func:`build_judge`).

    Its decision value for a page is ``Σ_w t(w)·β(w) + α·m·γ + bias`` (``bias`` is 0 for a built judge): ``t``
    the page's tf-idf vector over its exact words (the space's IDF, L2-normalised), ``β`` the weight of each word
    seen in training (others 0), ``m`` the page's meaning vector (L2-normalised), ``γ`` its weights.

    :param word_weights: ``{word: β}``.
    :param meaning_weights: (k,) ``γ``.
    :param bias: the intercept.
    :param words: the topic words it was built with.
    :param space: the text space it was built in.
    :param alpha: the scale of the meaning half (:data:`MEANING_SCALE`).
    :param threshold: the probability above which a page is relevant.
    :param meta: what it was built from (example sources, counts, negatives, ``C``).
    """

    kind = "examples"

    def __init__(self, word_weights: dict[str, float], meaning_weights: np.ndarray, bias: float,
                 words: Sequence[str], space: JudgeText, *, alpha: float = 1.0, threshold: float = 0.5,
                 meta: dict[str, Any] | None = None):
        g = np.asarray(meaning_weights, np.float64)
        beta = np.fromiter((float(v) for v in word_weights.values()), np.float64, count=len(word_weights))
        if (g.shape != (_HASH_DIM,) or not np.all(np.isfinite(g)) or not np.all(np.isfinite(beta))
                or not math.isfinite(bias) or not math.isfinite(alpha)):
            raise JudgeError(f"a judge needs finite word weights, {_HASH_DIM} finite meaning weights and a finite "
                             f"bias and alpha")
        if not 0.0 < threshold < 1.0:
            raise JudgeError(f"judge threshold must be in (0, 1), got {threshold!r}")
        self.word_weights = {str(k): float(v) for k, v in word_weights.items()}
        self.meaning_weights, self.bias, self.alpha, self.threshold = g, float(bias), float(alpha), float(threshold)
        self.words = tuple(words)
        self.space = space
        self.meta = dict(meta or {})
        self._beta = np.zeros(0)
        self._beta_built = False

    def _lookup(self, n_rows: int) -> np.ndarray:
        """β by the space's row index (0 for a word the judge has no weight for), covering ``n_rows`` rows."""
        if not self._beta_built:  # every word of the judge gets its row now; a row made later is another word's
            rows = self.space.rows(list(self.word_weights))
            self._beta = np.zeros(max(n_rows, len(self.space)))
            self._beta[rows] = list(self.word_weights.values())
            self._beta_built = True
        elif len(self._beta) < n_rows:
            self._beta = np.concatenate([self._beta, np.zeros(max(n_rows, 2 * len(self._beta)) - len(self._beta))])
        return self._beta

    def decision_bags(self, rows: np.ndarray, counts: np.ndarray, rowpos: np.ndarray, n: int) -> np.ndarray:
        """(n,) decision values of bags (see the class docstring)."""
        return self.decision_features(rows, rowpos, n, *self.space.features(rows, counts, rowpos, n))

    def decision_features(self, rows: np.ndarray, rowpos: np.ndarray, n: int, tfidf: np.ndarray,
                          meaning: np.ndarray) -> np.ndarray:
        """(n,) decision values of bags from their :meth:`JudgeText.features` (which depend on the space only, so
        many judges can share them)."""
        beta = self._lookup(int(rows.max()) + 1 if len(rows) else 0)
        z = np.bincount(rowpos, weights=tfidf * beta[rows], minlength=n) + self.bias
        z += self.alpha * row_dots(meaning, self.meaning_weights)
        # a page sharing no word with the training pages and with no meaning vector has no evidence: the
        # intercept may only lower its score
        blank = (np.bincount(rowpos, weights=(beta[rows] != 0).astype(np.float64), minlength=n) == 0) & \
            ~np.any(meaning != 0, axis=1)
        z[blank] = min(self.bias, 0.0)
        return z

    def proba_bags(self, rows: np.ndarray, counts: np.ndarray, rowpos: np.ndarray, n: int) -> np.ndarray:
        return _sigmoid(self.decision_bags(rows, counts, rowpos, n))

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), **{k: self.meta[k] for k in ("positives", "negatives", "background")
                                         if k in self.meta}}

    def to_dict(self) -> dict[str, Any]:
        """The judge as JSON-ready data (:func:`judge_from_dict` reads it back)."""
        return {"format": JUDGE_FORMAT, "version": JUDGE_VERSION, "kind": self.kind, "words": list(self.words),
                "threshold": self.threshold, "bias": self.bias, "alpha": self.alpha,
                "meaning_weights": [float(x) for x in self.meaning_weights], "word_weights": self.word_weights,
                "space": self.space.fingerprint, "meta": self.meta}

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_dict` as JSON, atomically."""
        atomic_write_json(Path(path), self.to_dict())


def judge_from_dict(d: dict[str, Any], space: JudgeText | None = None) -> ExampleJudge:
    """The :class:`ExampleJudge` of :meth:`ExampleJudge.to_dict`'s data, in ``space`` (default
    :meth:`JudgeText.default`); :class:`JudgeError` when it is not a judge of this version or was built in another
    text space (the message names both)."""
    if not isinstance(d, dict) or d.get("format") != JUDGE_FORMAT:
        raise JudgeError(f"not a gym_crawl judge (format {d.get('format') if isinstance(d, dict) else None!r}, "
                         f"expected {JUDGE_FORMAT!r})")
    if d.get("version") != JUDGE_VERSION or d.get("kind") != "examples":
        raise JudgeError(f"judge version {d.get('version')!r} kind {d.get('kind')!r}: this gym_crawl reads "
                         f"version {JUDGE_VERSION}, kind 'examples'")
    sp = space if space is not None else JudgeText.default()
    if d.get("space") != sp.fingerprint:
        raise JudgeError(f"the judge was built in text space {d.get('space')!r}, this process has "
                         f"{sp.fingerprint!r}: rebuild it from its examples here")
    try:
        ww = d["word_weights"]
        if not isinstance(ww, dict):
            raise TypeError("word_weights is not a mapping")
        return ExampleJudge({str(k): float(v) for k, v in ww.items()}, np.asarray(d["meaning_weights"], np.float64),
                            float(d["bias"]), [str(w) for w in d["words"]], sp, alpha=float(d["alpha"]),
                            threshold=float(d["threshold"]), meta=dict(d.get("meta") or {}))
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, JudgeError):
            raise
        raise JudgeError(f"a judge with a missing or malformed field ({e})") from None


def load_judge(path: str | Path, space: JudgeText | None = None) -> ExampleJudge:
    """The judge :meth:`ExampleJudge.save` wrote to ``path`` (:class:`JudgeError` naming the file otherwise)."""
    import json

    p = Path(path)
    try:
        d = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise JudgeError(f"{p}: not a readable judge file ({e})") from None
    try:
        return judge_from_dict(d, space)
    except JudgeError as e:
        raise JudgeError(f"{p}: {e}") from None


# ------------------------------------------------------------------------------------------ building
_Bags = tuple[np.ndarray, np.ndarray, np.ndarray, int]
_BACKGROUND: dict[tuple[str, int, int], _Bags] = {}


def background_bags(space: JudgeText, n: int = BACKGROUND_PAGES, seed: int = 0) -> _Bags:
    """``(rows, counts, rowpos, m)``: the bags of ``n`` articles of the general model's source drawn with ``seed``
    (``m = 0`` without the general model); kept per process."""
    if space.model is None or n <= 0:
        return np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int64), 0
    key = (space.fingerprint, n, seed)
    if key not in _BACKGROUND:
        src = space.model.corpus
        rng = np.random.default_rng(seed)
        pages = np.sort(rng.choice(src.n_pages, size=min(n, src.n_pages), replace=False))
        _BACKGROUND[key] = (*space.page_bags(src, pages), len(pages))
    return _BACKGROUND[key]


def _stack(parts: Sequence[_Bags]) -> _Bags:
    rows, counts, pos, n = [], [], [], 0
    for r, c, p, m in parts:
        rows.append(r)
        counts.append(c)
        pos.append(p + n)
        n += m
    return np.concatenate(rows), np.concatenate(counts), np.concatenate(pos), n


def build_judge(words: Sequence[str], examples: Sequence[str], counter_examples: Sequence[str] = (), *,
                space: JudgeText | None = None, background: int | None = None, C: float = DEFAULT_C,
                alpha: float = MEANING_SCALE, intercept: bool = True, sources: dict[str, list[str]] | None = None
                ) -> ExampleJudge:
    """An :class:`ExampleJudge` from topic ``words`` and example page texts (see the module docstring).

    :param words: the topic words (a positive page of their own; may be empty when examples are given).
    :param examples: the texts of relevant example pages (at least one with words).
    :param counter_examples: the texts of irrelevant pages (optional).
    :param space: the text space (default :meth:`JudgeText.default`).
    :param background: background articles among the negatives (default :data:`BACKGROUND_PAGES`; they need the
        general model).
    :param C: the inverse L2 regularisation strength (:data:`DEFAULT_C`).
    :param alpha: the scale of the meaning half (:data:`MEANING_SCALE`).
    :param intercept: fit an intercept (``False``: none; a design alternative the benchmark compares).
    :param sources: where the examples came from (``{"examples": [...], "counter_examples": [...]}``), recorded.
    :raises JudgeError: no example with words, or nothing to contrast the examples with.
    """
    import scipy.sparse as sps
    from sklearn.linear_model import LogisticRegression

    sp = space if space is not None else JudgeText.default()
    for name, v in (("C", C), ("alpha", alpha)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 or \
                (name == "C" and v == 0):
            raise JudgeError(f"{name} must be a {'positive' if name == 'C' else 'non-negative'} number, got {v!r}")
    toks = [t for w in words for t in tokenize(str(w))]
    pos_texts = [t for t in examples if tokenize(t)]
    if not pos_texts:
        raise JudgeError("a judge from examples needs at least one example page with words")
    neg_texts = [t for t in counter_examples if tokenize(t)]
    n_bg = BACKGROUND_PAGES if background is None else int(background)
    pos = (*sp.text_bags(pos_texts + ([" ".join(toks)] if toks else [])), len(pos_texts) + bool(toks))
    bg = background_bags(sp, n_bg)
    neg = _stack([(*sp.text_bags(neg_texts), len(neg_texts)), bg])
    if neg[3] == 0:
        raise JudgeError("a judge from examples needs pages to contrast them with: give counter-examples "
                         "(--counter-examples), or make the general English model available for its background "
                         "sample (gym-crawl download wikispeedia)")
    rows, counts, rowpos, n = _stack([pos, neg])
    tfidf, meaning = sp.features(rows, counts, rowpos, n)
    cols, local = np.unique(rows, return_inverse=True)
    T = sps.csr_matrix((tfidf, (rowpos, local.ravel())), shape=(n, len(cols)))
    T.sum_duplicates()
    X = sps.hstack([T, sps.csr_matrix(alpha * meaning)]).tocsr()
    y = np.r_[np.ones(pos[3], int), np.zeros(neg[3], int)]
    lr = LogisticRegression(C=float(C), class_weight="balanced", solver="liblinear", random_state=0, max_iter=1000,
                            fit_intercept=bool(intercept))
    lr.fit(X, y)
    coef = lr.coef_.ravel()
    beta = coef[:len(cols)]
    keep = np.abs(beta) > _MIN_WEIGHT
    word_weights = {sp.word(int(r)): float(b) for r, b in zip(cols[keep], beta[keep])}
    meta = {"positives": len(pos_texts), "topic_words_page": bool(toks), "negatives": len(neg_texts),
            "background": int(bg[3]), "C": float(C), "model": "logistic regression, balanced class weights",
            "sources": dict(sources or {})}
    bias = float(lr.intercept_[0]) if intercept else 0.0
    return ExampleJudge(word_weights, coef[len(cols):], bias, tuple(dict.fromkeys(toks)), sp,
                        alpha=float(alpha), threshold=0.5, meta=meta)


# ------------------------------------------------------------------------------------------ the reward mapping
class JudgeReward(RewardScheme):
    """The reward of a judge: ``hit`` for a page it calls relevant, ``miss`` for any other; relevant = its verdict
    (so ``relevant_found`` and the harvest rate count what the judge says). Scores only the fetched page's text.

    :param judge: any :class:`Judge`.
    :param hit: reward of a relevant page (default 30, Han et al.'s); :param miss: of any other (default −1).
    """

    needs_label = False

    def __init__(self, judge: Judge, hit: float = 30.0, miss: float = -1.0):
        if not isinstance(judge, Judge):
            raise TypeError(f"judge must be a gym_crawl.relevance.judge.Judge, got {type(judge).__name__}")
        if not (math.isfinite(hit) and math.isfinite(miss) and hit > miss):
            raise ValueError(f"judge reward: hit ({hit!r}) must be finite and above miss ({miss!r})")
        self.judge, self.hit, self.miss = judge, float(hit), float(miss)
        self.name = f"judge-{judge.kind}"
        self.max_reward = self.hit
        self._corpus: Any = None

    def bind(self, scorer: Any) -> None:
        """Attach the scheme to the crawl's corpus (the env calls this at reset)."""
        self._corpus = scorer.corpus

    def __call__(self, s: PageScores) -> tuple[np.ndarray, np.ndarray]:
        if s.pages is None or self._corpus is None:
            raise RuntimeError("a judge reward needs the fetched pages' ids and a bound corpus: use it through the "
                               "env, which provides both")
        rel = self.judge.relevant(self.judge.proba_pages(self._corpus, np.asarray(s.pages, np.int64)))
        return np.where(rel, self.hit, self.miss).astype(np.float32), rel.astype(bool)
