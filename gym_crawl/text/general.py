"""The general English text model: the default text model of a live web and of a web (WARC) corpus.

A crawl of a site nobody compiled before has no text model of its own: without one, every word gets a
hashed vector (:mod:`gym_crawl.text.open_vocab`) that is similar to nothing but itself, so best-first's
link score is exact keyword matching. The general model gives such a crawl word vectors and IDF weights
learned from a large body of general English text, with the open vocabulary on top:

* **source**: the Wikispeedia articles (4,604 articles of the 2007 Wikipedia selection for schools,
  8.1 million tokens, 230,634 distinct words; :data:`GENERAL_SOURCE`), obtained with
  ``gym-crawl download wikispeedia`` or, offline, ``gym-crawl download wikispeedia --from PATH``. Nothing
  is downloaded implicitly: when the dataset is not on this machine the general model is unavailable and
  the defaults fall back (below) with one warning saying how to get it;
* **model**: :class:`~gym_crawl.text.model.TextModel` of the compiled Wikispeedia corpus with
  :data:`GENERAL_OPTIONS` — IDF over **every** article (nothing of the source is ever crawled, so no page
  need be held out) and PPMI + seeded randomized SVD word vectors, 64 dims, trained on every article.
  Deterministic for a given copy of the dataset, cached atomically in the data dir by
  :func:`~gym_crawl.text.model.get_text_model` (a half-written cache is never accepted); built on first
  use (≈ 25 s of CPU, 60 MB);
* **open vocabulary on top**: a word's vector is ``[meaning, identity] / √2`` — the model's vector beside
  the deterministic hashed vector of the word itself (:func:`~gym_crawl.text.open_vocab.hashed_word_vector`)
  — and a word outside the general vocabulary gets ``[0, identity]`` and the model's IDF of a word absent
  from its sample, ``log(N + 1) + 1`` (its maximum; N = 4,604), as in
  :class:`~gym_crawl.text.model.OpenTextModel`. See :func:`general_rows` for why both halves.

This module holds the source, the options and the rows; the model objects are in
:mod:`gym_crawl.text.model` (which imports this one): :func:`~gym_crawl.text.model.general_text_model`
builds or opens the model, :class:`~gym_crawl.text.model.GeneralOpenTextModel` gives a live web's words
their rows as they are discovered and :func:`~gym_crawl.text.model.general_corpus_model` gives a static web
corpus' vocabulary its rows — the same row for the same word in both, so a policy trained offline on a
compiled WARC sees the same text features when it crawls live.

**Which corpora use it.** :func:`~gym_crawl.text.model.get_text_model` gives the general model to a live web
without a reference text model (``LiveWeb(..., text=None)``) and to a web corpus (one with ``urls``: compiled
WARC archives, replayed live crawls) unless ``general=False``; every other corpus (the synthetic webs,
Wikispeedia, MediaWiki dumps) keeps its own model. Without the dataset: a live web hashes every word (after one
warning: that loses relevant pages) and a web corpus gets its own model, as before the general model existed (only
logged: a site's own model crawls as well as the general one).

**Fairness.** The source holds no page of any site the package evaluates on (the ``docs-web`` sites are
Debian documentation packages, the Wikipedia-derived corpora are not web sites the crawler is scored on
live); ``tests/test_general_text.py`` checks that no ``docs-web`` test-site page text is in it when both are
available.
"""
from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gym_crawl.corpus.cache import data_dir
from gym_crawl.corpus.core import Corpus
from gym_crawl.text.open_vocab import hashed_word_vector

if TYPE_CHECKING:
    from gym_crawl.text.model import TextModel

__all__ = ["GENERAL_OPTIONS", "GENERAL_SOURCE", "GENERAL_VERSION", "GeneralTextUnavailable", "general_rows",
           "general_source_path", "how_to_get", "is_web_corpus", "model_fingerprint", "oov_params"]

GENERAL_SOURCE = "wikispeedia"
"""The dataset (:mod:`gym_crawl.corpus.download` name) the general model is built from."""

GENERAL_OPTIONS: dict[str, Any] = {"idf_fraction": 1.0, "dim": 64, "seed": 0, "max_train_pages": 20_000}
""":func:`~gym_crawl.text.model.get_text_model` options of the general model: IDF and vectors over every
article."""

GENERAL_VERSION = 1
"""Version of the rows a web corpus gets from the general model (part of its cache key)."""


class GeneralTextUnavailable(FileNotFoundError):
    """The general text model was required but its source dataset is not on this machine."""


def how_to_get() -> str:
    """How a user gets the general model's source (for messages)."""
    return (f"get it with `gym-crawl download {GENERAL_SOURCE}` (or, offline, `gym-crawl download "
            f"{GENERAL_SOURCE} --from PATH` with a copy of the dataset)")


def general_source_path() -> Path | None:
    """The folder (or archive) of the general model's source dataset if it is on this machine — a registered
    local copy, ``$GYM_CRAWL_WIKISPEEDIA``, or a download in the cache — else ``None``. Never downloads."""
    from gym_crawl.corpus.download import DATASETS, local_copy

    p = local_copy(GENERAL_SOURCE)
    if p is not None:
        return p
    folder = data_dir() / GENERAL_SOURCE
    if all((folder / rf.filename).is_file() for rf in DATASETS[GENERAL_SOURCE]):
        return folder
    return None


def oov_params(model: TextModel) -> tuple[float, float]:
    """``(idf, norm)`` of a word ``model`` does not know: the smoothed IDF of a word absent from its IDF sample
    (``log(N + 1) + 1``, N its sample size; the maximum IDF when the size is not recorded) and the median
    norm of its non-zero vectors (1 for L2-normalised vectors) — the rule of
    :class:`~gym_crawl.text.model.OpenTextModel`; ``(1, 1)`` for a model without words (every word unseen:
    pure hashing)."""
    if len(model.idf) == 0:
        return 1.0, 1.0
    n_idf = model.meta.get("idf_pages")
    oov_idf = float(math.log(int(n_idf) + 1.0) + 1.0) if n_idf else float(np.max(model.idf))
    v = np.asarray(model.vectors[: min(len(model.vectors), 10_000)], np.float64)
    norms = np.linalg.norm(v, axis=1)
    scale = float(np.median(norms[norms > 0])) if np.any(norms > 0) else 1.0
    return oov_idf, scale


def general_rows(model: TextModel, words: list[str], oov: tuple[float, float] | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``words`` under the general ``model`` with the open vocabulary on top.

    A word's vector has two halves: its **meaning**, the model's vector (zero for a word the model does not
    know or gave no vector), and its **identity**, the deterministic hashed vector of the word
    (:func:`hashed_word_vector`; nearly orthogonal to every other word's). A known word's vector is
    ``[meaning, identity] / √2`` and an unknown word's ``[0, identity]``, so both have the norm of the model's
    vectors and the cosine of two texts is half their semantic similarity plus half their exact-word
    overlap: a link naming the topic word keeps the score exact keyword matching gives it (a site's own
    terms, absent from general English, are matched exactly), and a link with related words gains on one
    with unrelated words.

    :param model: the general model (any :class:`TextModel`: its corpus' vocabulary is looked up by word).
    :param words: the words, in the order of the rows wanted.
    :param oov: :func:`oov_params` of ``model`` (computed when ``None``).
    :returns: ``(idf, vectors)``: (len(words),) float32 and (len(words), 2k) float32, k the model's dimension —
        the model's IDF for a word it knows, the open-vocabulary IDF otherwise, and the vectors above.
    """
    oov_idf, scale = oov_params(model) if oov is None else oov
    k = model.vectors.shape[1]
    ref = model.corpus
    ids = np.fromiter((ref.word_id(w) for w in words), np.int64, count=len(words))
    known = ids >= 0
    idf = np.full(len(words), oov_idf, np.float32)
    idf[known] = model.idf[ids[known]]
    meaning = np.zeros((len(words), k), np.float32)
    meaning[known] = model.vectors[ids[known]]
    has = np.einsum("ij,ij->i", meaning, meaning) > 0
    vec = np.zeros((len(words), 2 * k), np.float32)
    half = np.float32(1.0 / math.sqrt(2.0))
    vec[has, :k] = meaning[has] * half
    for j, w in enumerate(words):
        vec[j, k:] = hashed_word_vector(w, k, scale) * (half if has[j] else np.float32(1.0))
    return idf, vec


def is_web_corpus(corpus: Corpus) -> bool:
    """Whether ``corpus`` is a web corpus (its pages have URLs: a compiled WARC archive, a replayed live crawl),
    whose default text model is the general one."""
    return getattr(corpus, "urls", None) is not None


def model_fingerprint(model: TextModel) -> str:
    """Identity of a text model's content: its cache directory's sealed ``meta.json`` when saved, else a digest
    of its arrays."""
    if model.path is not None and (Path(model.path) / "meta.json").is_file():
        return hashlib.sha256((Path(model.path) / "meta.json").read_bytes()).hexdigest()[:16]
    h = hashlib.sha256()
    for a in (model.idf, model.vectors):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


