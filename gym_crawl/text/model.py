"""tf-idf + word vectors over a :class:`~gym_crawl.corpus.Corpus`, with on-demand vectorization.

IDF is estimated on a seeded random ``idf_fraction`` of the pages (the thesis,
§3.3.2: weights learned on data the crawler does not crawl from, rather than on
the whole dump it has not seen). Word vectors are trained from the corpus with
PPMI + SVD (:mod:`gym_crawl.text.vectors`) on at most ``max_train_pages`` pages,
or loaded from a GloVe / word2vec text file.

Vectors of pages and link texts are computed only when asked for — a fetched
page, the out-links of a fetched page — so no per-step cost depends on the
corpus size. A page vector is ``Σ_t tf(t)·idf(t)·W[t]`` (thesis §3.3.2); a link
text vector the same over anchor + URL (target title) + surrounding-text tokens.
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import shutil
import sys
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._arith import log, norm, sparse_rows_dense
from gym_crawl._io import (
    FileCheckError,
    atomic_write_json,
    file_digest,
    save_npy,
    seal,
    seal_problem,
    verify_files,
    write_stamp,
    writing_dir,
)
from gym_crawl.corpus.cache import data_dir, warn_once
from gym_crawl.corpus.core import Corpus
from gym_crawl.corpus.page_source import PageSource
from gym_crawl.text.general import (
    GENERAL_OPTIONS,
    GENERAL_SOURCE,
    GENERAL_VERSION,
    GeneralTextUnavailable,
    general_rows,
    general_source_path,
    how_to_get,
    model_fingerprint,
    oov_params,
)
from gym_crawl.text.open_vocab import hashed_word_vector
from gym_crawl.text.vectors import load_word_vectors, train_word_vectors

__all__ = ["GeneralOpenTextModel", "OpenTextModel", "TextModel", "TextModelError", "corpus_spec",
           "describe_text_model", "gather_csr", "gather_ranges", "general_corpus_model", "general_text_model",
           "get_text_model", "open_text_model", "weighted_row_sums"]

logger = logging.getLogger(__name__)

TEXT_MODEL_VERSION = 4
"""4: word vectors and IDF by the package's own arithmetic (:mod:`gym_crawl._svd`, :mod:`gym_crawl._arith`), the
same bits on any CPU; 3: ``meta.json`` records each file's size, sha256 and sampled sha256 (checked on open)."""
_META_KEYS = frozenset({"version", "idf_fraction", "idf_pages", "dim", "seed", "max_train_pages", "vectors", "files"})


class TextModelError(ValueError):
    """A saved text model is incomplete, corrupted, or does not fit its corpus (the message names the file)."""


def _progress(total: int, desc: str) -> Any:
    """A tqdm bar over the build stages, shown only on a terminal (``None`` otherwise)."""
    try:
        if not sys.stderr.isatty():
            return None
    except (AttributeError, ValueError):
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="stage", leave=False)


def gather_csr(ptr: np.ndarray, vals: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate CSR rows ``rows``: returns ``(values, row_position)`` where
    ``row_position[j]`` is the index into ``rows`` that value ``j`` came from."""
    rows = np.asarray(rows, dtype=np.int64)
    n = len(rows)
    if n and rows[-1] - rows[0] == n - 1 and (n == 1 or np.all(rows[1:] > rows[:-1])):
        # contiguous rows (one page's out-links, one page's text): a slice, no fancy gather
        a, b = int(ptr[rows[0]]), int(ptr[rows[-1] + 1])
        return vals[a:b], np.repeat(np.arange(n), np.diff(ptr[rows[0]:rows[-1] + 2]))
    starts = ptr[rows]
    lens = ptr[rows + 1] - starts
    total = int(lens.sum())
    if total == 0:
        return vals[:0], np.zeros(0, np.int64)
    rowpos = np.repeat(np.arange(len(rows)), lens)
    offs = np.arange(total) - np.repeat(np.cumsum(lens) - lens, lens)
    return vals[np.repeat(starts, lens) + offs], rowpos


def gather_ranges(lo: np.ndarray, hi: np.ndarray, vals: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate the ranges ``vals[lo[r]:hi[r]]`` of ``rows``: returns ``(values, row_position)`` as
    :func:`gather_csr` does, for per-row ranges that need not be stored in row order (a live web stores
    pages' text and links in fetch order). Equal to ``gather_csr(ptr, vals, rows)`` when
    ``lo, hi = ptr[:-1], ptr[1:]``."""
    rows = np.asarray(rows, dtype=np.int64)
    n = len(rows)
    if n == 1:
        a, b = int(lo[rows[0]]), int(hi[rows[0]])
        return vals[a:b], np.zeros(b - a, np.int64)
    starts = lo[rows]
    lens = hi[rows] - starts
    if (n and rows[-1] - rows[0] == n - 1 and np.all(rows[1:] > rows[:-1])
            and np.array_equal(starts[1:], starts[:-1] + lens[:-1])):
        # rows stored back to back (a static corpus' consecutive pages): a slice, no fancy gather
        a = int(starts[0])
        return vals[a:a + int(lens.sum())], np.repeat(np.arange(n), lens)
    total = int(lens.sum())
    if total == 0:
        return vals[:0], np.zeros(0, np.int64)
    rowpos = np.repeat(np.arange(n), lens)
    offs = np.arange(total) - np.repeat(np.cumsum(lens) - lens, lens)
    return vals[np.repeat(starts, lens) + offs], rowpos


def weighted_row_sums(matrix: np.ndarray, cols: np.ndarray, weights: np.ndarray, rowpos: np.ndarray,
                      n_rows: int) -> np.ndarray:
    """``out[r] = Σ_{j: rowpos[j]=r} weights[j] · matrix[cols[j]]`` → (n_rows, k) float32.

    The weights are rounded to float32, each row's terms summed in their order in float64 and the sum rounded to
    float32 once (:func:`gym_crawl._arith.sparse_rows_dense`: the same bits on any CPU and thread count, and for
    any grouping of rows into calls); no (nnz × k) temporary is built.
    """
    w = np.asarray(weights).astype(np.float32, copy=False)
    return sparse_rows_dense(rowpos, cols, w, matrix, n_rows, np.float32)


@dataclass
class TextModel:
    """IDF weights and word vectors for one corpus.

    Attributes:
        corpus: the corpus.
        idf: (V,) float32 smoothed IDF ``log((N+1)/(df+1)) + 1`` over the IDF sample.
        vectors: (V, k) float32 L2-normalised word vectors (zero rows for unseen words).
        meta: how the model was built (fractions, dims, seeds, source of vectors).
    """

    corpus: Corpus
    idf: np.ndarray
    vectors: np.ndarray
    meta: dict[str, Any]
    path: Path | None = field(default=None, repr=False)
    """The cache directory the model was saved to / loaded from (``None``: in memory only)."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle a cached model by reference (its corpus — itself by reference when saved — and its
        cache directory), so vector-env workers re-open the memory-mapped word vectors; an in-memory
        model pickles by value."""
        if self.path is not None:
            return (_load_by_reference, (self.corpus, str(self.path)))
        return (TextModel, (self.corpus, self.idf, self.vectors, self.meta))

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    # ------------------------------------------------------------- building
    @classmethod
    def build(cls, corpus: Corpus, *, idf_fraction: float = 0.1, dim: int = 64, seed: int = 0,
              max_train_pages: int = 20_000, vectors_path: str | None = None, progress: bool = True) -> TextModel:
        """Estimate IDF on a random ``idf_fraction`` of pages and train (or load) word vectors.

        ``progress`` shows a tqdm bar over the stages on a terminal (first use of a large corpus
        takes seconds). Raises ``ValueError`` naming the corpus when it has no page text to learn from.
        """
        import scipy.sparse as sp
        if not 0 < idf_fraction <= 1:
            raise ValueError(f"idf_fraction must be in (0, 1], got {idf_fraction}")
        n, V = corpus.n_pages, corpus.n_words
        if n == 0 or len(corpus.text_terms) == 0:
            raise ValueError(
                f"corpus {corpus.name!r} has no page text ({n} pages, 0 words in page texts), so no text model "
                f"can be built: give each page a text (for a networkx graph, a node attribute 'text', or "
                f"Corpus.from_networkx(G, text='<attribute name>'))")
        bar = _progress(3, f"text model of {corpus.name} ({n:,} pages)") if progress else None
        try:
            rng = np.random.default_rng(seed)
            n_idf = max(1, int(round(idf_fraction * n)))
            sample = np.sort(rng.choice(n, size=min(n, n_idf), replace=False))
            terms, _ = gather_csr(corpus.text_ptr, corpus.text_terms, sample)
            df = np.bincount(terms, minlength=V).astype(np.float64)
            idf = (log((len(sample) + 1.0) / (df + 1.0)) + 1.0).astype(np.float32)
            if bar is not None:
                bar.update(1)
            if vectors_path is not None:
                W = load_word_vectors(vectors_path, corpus.vocab.tolist())
                dim = W.shape[1]
            else:
                train = np.sort(rng.choice(n, size=min(n, max_train_pages), replace=False))
                t, rp = gather_csr(corpus.text_ptr, corpus.text_terms, train)
                c, _ = gather_csr(corpus.text_ptr, corpus.text_counts, train)
                M = sp.csr_matrix((c.astype(np.float32), (rp, t)), shape=(len(train), V))
                if bar is not None:
                    bar.update(1)
                W = train_word_vectors(M, dim=dim, seed=seed)
            if bar is not None:
                bar.update(bar.total - bar.n)
        finally:
            if bar is not None:
                bar.close()
        meta = {"version": TEXT_MODEL_VERSION, "idf_fraction": idf_fraction, "idf_pages": int(len(sample)),
                "dim": int(dim), "seed": seed, "max_train_pages": max_train_pages,
                "vectors": str(vectors_path) if vectors_path else "ppmi-svd"}
        return cls(corpus, idf, W, meta)

    # --------------------------------------------------------- vectorizing
    def _weighted_vectors(self, terms: np.ndarray, weights: np.ndarray, rowpos: np.ndarray, n_rows: int) -> np.ndarray:
        return weighted_row_sums(self.vectors, terms, weights, rowpos, n_rows)

    def page_vectors(self, pages: np.ndarray) -> np.ndarray:
        """(len(pages), k) tf-idf-weighted sums of word vectors of the pages' texts (unnormalised)."""
        c = self.corpus
        lo, hi = c.text_lo, c.text_hi
        t, rp = gather_ranges(lo, hi, c.text_terms, pages)
        cnt, _ = gather_ranges(lo, hi, c.text_counts, pages)
        return self._weighted_vectors(t, cnt * self.idf[t], rp, len(pages))

    def link_tokens(self, links: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Tokens of links' anchor + URL (target title) + surrounding text.

        Returns ``(terms, rowpos, source)`` with ``source`` 0 = anchor, 1 = URL, 2 = context.
        """
        c = self.corpus
        links = np.asarray(links, dtype=np.int64)
        a, ar = gather_csr(c.anchor_ptr, c.anchor_terms, links)
        u, ur = gather_csr(c.title_ptr, c.title_terms, c.link_dst[links])
        x, xr = gather_csr(c.context_ptr, c.context_terms, links)
        terms = np.concatenate([a, u, x])
        rowpos = np.concatenate([ar, ur, xr])
        source = np.concatenate([np.zeros(len(a), np.int8), np.ones(len(u), np.int8), np.full(len(x), 2, np.int8)])
        return terms, rowpos, source

    def link_vectors(self, links: np.ndarray) -> np.ndarray:
        """(len(links), k) idf-weighted sums of word vectors of the links' anchor/URL/context text."""
        t, rp, _ = self.link_tokens(links)
        return self._weighted_vectors(t, self.idf[t], rp, len(links))

    def query_vector(self, words: list[str]) -> np.ndarray:
        """(k,) unit vector: mean of the word vectors of ``words``.

        A word outside the vocabulary raises ``KeyError``. A vocabulary word without a vector — it
        occurs evenly across the pages (e.g. a corpus whose pages share one uniform text), so PPMI gives
        it no direction — is not unknown: it is left out with one warning, and if no word has a vector
        the query is the zero vector (every embedding cosine is then 0).
        """
        ids = [self.corpus.word_id(w) for w in words]
        missing = [w for w, i in zip(words, ids) if i < 0]
        if missing:
            raise KeyError(f"unknown topic word(s) {missing} for corpus {self.corpus.name!r} "
                           f"(not in its vocabulary of {self.corpus.n_words} words)")
        flat = [w for w, i in zip(words, ids) if not self.vectors[i].any()]
        if flat:
            warn_once(f"flat:{self.corpus.name}:{sorted(flat)}",
                      f"topic word(s) {flat} are in corpus {self.corpus.name!r}'s vocabulary but have no word "
                      f"vector: they occur evenly across its pages, so PPMI-SVD gives them no direction; their "
                      f"embedding similarity counts as 0")
        keep = [i for i in ids if self.vectors[i].any()]
        if not keep:
            return np.zeros(self.dim, np.float32)
        v = self.vectors[keep].mean(axis=0)
        return v / max(norm(v), 1e-12)

    # ------------------------------------------------------------ caching
    def save(self, path: Path) -> None:
        """Write ``idf.npy``, ``vectors.npy`` and ``meta.json`` (with each file's size, sha256 and
        sampled sha256, sealed with its own sha256) into directory ``path``, atomically, stamped as checked
        (see :meth:`load`); orphans of killed writers are removed."""
        with writing_dir(path) as tmp:
            files = {}
            for name, arr in (("idf.npy", self.idf), ("vectors.npy", self.vectors)):
                save_npy(tmp / name, arr)
                files[name] = file_digest(tmp / name)
            # written last: its presence marks completeness
            atomic_write_json(tmp / "meta.json", seal({**self.meta, "files": files}))
            write_stamp(tmp, hashlib.sha256((tmp / "meta.json").read_bytes()).hexdigest(), files)

    @classmethod
    def load(cls, corpus: Corpus, path: Path, *, verify: bool = False) -> TextModel:
        """Open a saved model memory-mapped (processes share the word vectors).

        Every open checks ``meta.json`` against its seal, each file against its full sha256 the first
        time it is opened as it is now (stamped beside ``meta.json``, as :meth:`Corpus.load` does;
        ``verify=True``: every time), that the arrays fit the corpus, that the IDF weights are finite and
        positive and that the vectors are finite with norms ≤ 1. Raises :class:`TextModelError` naming
        the file at fault.
        """
        path = Path(path)
        mf = path / "meta.json"
        if not mf.is_file():
            raise TextModelError(f"{path}: incomplete text model (no meta.json)")
        try:
            raw = mf.read_bytes()
            meta = json.loads(raw.decode("utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise TextModelError(f"{mf}: unreadable ({e})") from None
        problem = seal_problem(meta, _META_KEYS)
        if problem is not None:
            raise TextModelError(f"{mf}: {problem}")
        meta.pop("seal_sha256", None)
        files = meta.pop("files", None)
        if meta.get("version") != TEXT_MODEL_VERSION or not isinstance(files, dict):
            raise TextModelError(f"{mf}: text model version {meta.get('version')!r}, this gym_crawl reads "
                                 f"{TEXT_MODEL_VERSION}: rebuild it")
        if set(files) != {"idf.npy", "vectors.npy"}:
            raise TextModelError(f"{mf}: lists files {sorted(files)}, expected idf.npy and vectors.npy")
        try:
            verify_files(path, files, key=hashlib.sha256(raw).hexdigest(), force=verify)
        except FileCheckError as e:
            raise TextModelError(f"{path / e.file}: {e.problem}") from None
        arrays = {}
        for name in ("idf.npy", "vectors.npy"):
            fp = path / name
            try:
                arrays[name] = np.asarray(np.load(fp, mmap_mode="r", allow_pickle=False))
            except (ValueError, OSError, EOFError) as e:
                raise TextModelError(f"{fp}: unreadable .npy ({e})") from None
        idf, vec = arrays["idf.npy"], arrays["vectors.npy"]
        if idf.shape != (corpus.n_words,) or vec.ndim != 2 or vec.shape[0] != corpus.n_words:
            raise TextModelError(f"{path}: text model shapes idf {idf.shape} / vectors {vec.shape} do not match "
                                 f"the vocabulary of corpus {corpus.name!r} ({corpus.n_words} words)")
        if not np.all(np.isfinite(idf)) or np.any(idf <= 0):
            raise TextModelError(f"{path / 'idf.npy'}: non-finite or non-positive IDF weights")
        norms = np.einsum("ij,ij->i", vec, vec, dtype=np.float64)  # NaN/inf propagate into the norms
        if not np.all(np.isfinite(norms)) or np.any(norms > 1.0 + 1e-3):
            raise TextModelError(f"{path / 'vectors.npy'}: non-finite word vectors or norms above 1 "
                                 f"(corrupted file)")
        return cls(corpus, idf, vec, meta, path=path)


def _load_by_reference(corpus: Corpus, path: str) -> TextModel:
    """Unpickle a cached text model: re-open it (memory-mapped) from its cache directory."""
    return TextModel.load(corpus, Path(path))


_MEMO: weakref.WeakKeyDictionary[Corpus, dict] = weakref.WeakKeyDictionary()


def _corpus_fingerprint(corpus: Corpus) -> str | None:
    if corpus.path is None or not (Path(corpus.path) / "manifest.json").exists():
        return None
    return hashlib.sha256((Path(corpus.path) / "manifest.json").read_bytes()).hexdigest()[:16]


def get_text_model(corpus: Corpus, *, idf_fraction: float = 0.1, dim: int = 64, seed: int = 0,
                   max_train_pages: int = 20_000, vectors_path: str | None = None, progress: bool = True,
                   verify: bool = False, general: bool | None = None) -> TextModel:
    """The :class:`TextModel` of ``corpus``, memoized per corpus object and cached on
    disk (``<data_dir>/text_models``) for saved corpora.

    ``general`` chooses the general English model (:mod:`gym_crawl.text.general`) for a live web without a
    reference text model and for a web corpus (one with ``urls``: compiled WARC archives, replayed crawls):
    ``None`` (default) uses it when its source dataset is on this machine and no ``vectors_path`` is given
    (else a live web hashes every word, after one warning, and a web corpus gets its own model, which crawls
    as well — only a debug log line says so); other corpora get
    their own model (the options above), a live web with a reference text model its reference's words.
    ``True`` requires it, for any corpus (``GeneralTextUnavailable`` saying how to get it when the dataset is
    missing; ``ValueError`` for a live web built on a reference model); ``False`` never uses it.

    A cached model that fails its checks (``verify=True``: the full sha256 too) is reported in one
    warning naming the file and rebuilt; a cache that cannot be written (read-only ``GYM_CRAWL_DATA``)
    is reported in one warning and the model is kept in memory.
    """
    if general is not None and not isinstance(general, bool):
        raise ValueError(f"general must be None (default), True or False, got {general!r}")
    key = (idf_fraction, dim, seed, max_train_pages, str(vectors_path))
    memo = _MEMO.setdefault(corpus, {})
    gkey = (*key, "general", general)
    if gkey in memo:
        return memo[gkey]
    grows = isinstance(corpus, PageSource)  # a web discovered while it is crawled
    web = getattr(corpus, "reference_text", None) is None if grows else getattr(corpus, "urls", None) is not None
    if general or (general is None and vectors_path is None and web):
        # a live web without it hashes every word (a real loss: one warning); a web corpus then gets its own
        # model, which crawls as well as the general one (docs/live.md), so that fallback is only logged
        gm = general_text_model(required=bool(general), progress=progress, warn=grows)
        if gm is not None:
            memo[gkey] = (GeneralOpenTextModel.create_general(corpus, gm) if grows
                          else general_corpus_model(corpus, gm))
            return memo[gkey]
    if key in memo:
        return memo[key]
    if grows:  # a web that grows: its reference model's words, hashed vectors for the others
        memo[key] = open_text_model(corpus, getattr(corpus, "reference_text", None), dim=dim)
        return memo[key]
    fp = _corpus_fingerprint(corpus)
    path = None
    if fp is not None:
        tag = hashlib.sha256(repr(key).encode()).hexdigest()[:10]
        path = data_dir() / "text_models" / f"{corpus.name}-{fp}-{tag}-v{TEXT_MODEL_VERSION}"
        cached = _load_cached(corpus, path, verify)
        if cached is not None:
            memo[key] = cached
            return cached
    tm = TextModel.build(corpus, idf_fraction=idf_fraction, dim=dim, seed=seed,
                         max_train_pages=max_train_pages, vectors_path=vectors_path, progress=progress)
    _save_cached(tm, path)
    memo[key] = tm
    return tm


def _load_cached(corpus: Corpus, path: Path, verify: bool = False) -> TextModel | None:
    """The text model cached at ``path`` (``None``: none there, or a damaged one — reported in one warning and
    removed, to be rebuilt)."""
    if path.exists():
        try:
            return TextModel.load(corpus, path, verify=verify)
        except (TextModelError, OSError) as e:
            warn_once(f"damaged:{path}", f"text model cache unusable ({e}); rebuilding it")
            shutil.rmtree(path, ignore_errors=True)
    return None


def _save_cached(tm: TextModel, path: Path | None) -> None:
    """Cache ``tm`` at ``path`` (``None``: the corpus is not saved, nothing to key a cache by); a cache that cannot
    be written is reported in one warning and the model kept in memory."""
    if path is None:
        return
    try:
        tm.save(path)
        tm.path = path
    except OSError as e:
        warn_once(f"readonly:{path.parent}", f"cannot write the text-model cache under {path.parent} "
                                             f"({e.strerror or e}); keeping the text model in memory")


def open_text_model(web: Corpus, reference: Any = None, dim: int = 64) -> Any:
    """The :class:`OpenTextModel` of live web ``web`` over ``reference`` (a ``TextModel``, a ``Corpus`` whose
    default text model is used, or ``None``: pure hashing)."""
    return OpenTextModel.create(web, reference, dim=dim)


class OpenTextModel(TextModel):
    """A :class:`TextModel` over a live web's growing vocabulary (:mod:`gym_crawl.text.open_vocab` says how
    unseen words get vectors and IDF). ``idf`` and ``vectors`` have one row per word id up to the web's
    capacity; the reference model's words keep their ids, IDF and vectors."""

    _oov: tuple[np.float32, float]
    reference: Any

    @classmethod
    def create(cls, web: Corpus, reference: Any = None, dim: int = 64) -> Any:
        ref = reference
        if ref is not None and not isinstance(ref, TextModel):
            if isinstance(ref, Corpus):
                ref = get_text_model(ref)
            else:
                raise TypeError(f"text must be a TextModel or a Corpus, got {type(ref).__name__}")
        W = web.n_words
        if ref is not None:
            V0, k = ref.vectors.shape
            if len(ref.corpus.vocab) != V0 or web.vocab.tolist()[:V0] != ref.corpus.vocab.tolist():
                raise ValueError("the live web's first word ids must be its reference model's vocabulary: "
                                 "build LiveWeb(..., text=<the same model or corpus>)")
            n_idf = ref.meta.get("idf_pages")
            oov_idf = float(math.log(int(n_idf) + 1.0) + 1.0) if n_idf else float(np.max(ref.idf))
            norms = np.linalg.norm(np.asarray(ref.vectors[: min(V0, 10_000)], np.float64), axis=1)
            scale = float(np.median(norms[norms > 0])) if np.any(norms > 0) else 1.0
            meta = {"vectors": "reference+hashed", "reference": ref.corpus.name, "reference_words": int(V0),
                    "oov_idf": oov_idf, "oov_scale": scale, "dim": int(k)}
        else:
            V0, k, oov_idf, scale = 0, int(dim), 1.0, 1.0
            meta = {"vectors": "hashed", "reference": None, "reference_words": 0, "oov_idf": 1.0,
                    "oov_scale": 1.0, "dim": int(k)}
        idf = np.zeros(W, np.float32)
        vec = np.zeros((W, k), np.float32)
        if V0:
            idf[:V0] = ref.idf
            vec[:V0] = ref.vectors
        m = cls(web, idf, vec, meta)
        m._oov = (np.float32(oov_idf), float(scale))
        m.reference = ref
        n_now = len(web.vocab)
        if n_now > V0:
            m._add_words(V0, web.vocab.tolist()[V0:n_now])
        web.add_vocab_listener(m._add_words)  # type: ignore[attr-defined]
        return m

    def _add_words(self, first: int, words: list[str]) -> None:
        oov_idf, scale = self._oov
        k = self.vectors.shape[1]
        for j, w in enumerate(words):
            self.idf[first + j] = oov_idf
            self.vectors[first + j] = hashed_word_vector(w, k, scale)

    def query_vector(self, words: list[str]) -> np.ndarray:
        self.corpus.add_words(words)  # type: ignore[attr-defined]  # the open vocabulary knows every word
        return super().query_vector(words)

    def __reduce__(self) -> tuple[Any, ...]:
        raise TypeError("the text model of a live web cannot be pickled (its web cannot)")


# ---------------------------------------------------------------- the general English model
_GENERAL_MODELS: dict[tuple[str, str], TextModel] = {}


def general_text_model(*, required: bool = False, progress: bool = True, warn: bool = True) -> TextModel | None:
    """The general English text model (:mod:`gym_crawl.text.general`), built from the local copy of
    :data:`GENERAL_SOURCE` on first use and cached; memoized per process.

    :param required: raise :class:`GeneralTextUnavailable` (saying how to get the dataset) when the source
        is not on this machine; else return ``None``.
    :param progress: progress bars on a terminal while the source is compiled and the model built.
    :param warn: when the source is missing (and not ``required``), say so in one :class:`CacheWarning` per
        process (the caller loses something by it: a live web hashes every word); ``False``: only a debug log
        line (the caller's fallback loses nothing).
    """
    path = general_source_path()
    if path is None:
        msg = f"the general English text model needs the {GENERAL_SOURCE} dataset, which is not on this machine: "
        if required:
            raise GeneralTextUnavailable(msg + how_to_get())
        if warn:
            warn_once("general-text-missing", msg + how_to_get() + "; until then a live web hashes every word")
        else:
            logger.debug("the %s dataset is not on this machine: a web corpus uses its own text model",
                         GENERAL_SOURCE)
        return None
    key = (str(data_dir()), str(path))
    if key not in _GENERAL_MODELS:
        from gym_crawl.corpus.wikispeedia import load_wikispeedia

        src = load_wikispeedia(path, progress=progress)
        _GENERAL_MODELS[key] = get_text_model(src, progress=progress, **GENERAL_OPTIONS)
    return _GENERAL_MODELS[key]


def general_corpus_model(corpus: Corpus, model: TextModel) -> TextModel:
    """The :class:`TextModel` of a static ``corpus`` under the general ``model``: row ``i`` is
    :func:`general_rows` of the corpus' word ``i``. Cached in ``<data_dir>/text_models`` for a saved corpus
    (atomically; a damaged cache is reported once and rebuilt), keyed by the corpus, the model and
    :data:`GENERAL_VERSION`."""
    fp = _corpus_fingerprint(corpus)
    path = None
    if fp is not None:
        path = (data_dir() / "text_models" /
                f"{corpus.name}-{fp}-general-{model_fingerprint(model)}-g{GENERAL_VERSION}-v{TEXT_MODEL_VERSION}")
        cached = _load_cached(corpus, path)
        if cached is not None:
            return cached
    idf, vec = general_rows(model, corpus.vocab.tolist())
    meta = {"version": TEXT_MODEL_VERSION, "idf_fraction": model.meta.get("idf_fraction"),
            "idf_pages": model.meta.get("idf_pages"), "dim": int(vec.shape[1]), "seed": model.meta.get("seed"),
            "max_train_pages": model.meta.get("max_train_pages"),
            "vectors": f"general:{model.corpus.name}:{model_fingerprint(model)}+hashed"}
    tm = TextModel(corpus, idf, vec, meta)
    _save_cached(tm, path)
    return tm


class GeneralOpenTextModel(OpenTextModel):
    """The text model of a live web without a reference model: every word the web discovers gets its
    :func:`general_rows` row (the general model's, or the open vocabulary's), so the same word has the same
    IDF and vector as in a web corpus under the same general model."""

    general: TextModel

    @classmethod
    def create_general(cls, web: Corpus, model: TextModel) -> GeneralOpenTextModel:
        """The model of live web ``web`` (no reference vocabulary) over the general ``model``."""
        if getattr(web, "reference_text", None) is not None:
            raise ValueError("a live web with a reference text model uses OpenTextModel, not the general model")
        k = 2 * int(model.vectors.shape[1])  # [meaning, identity] (general_rows)
        W = web.n_words
        oov_idf, scale = oov_params(model)
        meta = {"vectors": "general+hashed", "reference": None, "general": model.corpus.name,
                "general_fingerprint": model_fingerprint(model), "reference_words": 0, "oov_idf": oov_idf,
                "oov_scale": scale, "dim": k, "idf_pages": model.meta.get("idf_pages")}
        m = cls(web, np.zeros(W, np.float32), np.zeros((W, k), np.float32), meta)
        m._oov = (np.float32(oov_idf), float(scale))
        m.reference = None
        m.general = model
        n_now = len(web.vocab)
        if n_now:
            m._add_words(0, web.vocab.tolist()[:n_now])
        web.add_vocab_listener(m._add_words)  # type: ignore[attr-defined]
        return m

    def _add_words(self, first: int, words: list[str]) -> None:
        oov_idf, scale = self._oov
        idf, vec = general_rows(self.general, words, (float(oov_idf), scale))
        self.idf[first:first + len(words)] = idf
        self.vectors[first:first + len(words)] = vec


# ---------------------------------------------------------------- what a saved model records of its text model
def corpus_spec(corpus: Any) -> str:
    """How :func:`gym_crawl.corpus.load_corpus` opens ``corpus`` again: its registered name (``synthetic-2000``),
    else the folder it was saved to, else its name (an in-memory corpus: not reopenable by name)."""
    from gym_crawl.corpus.sources import parse_corpus_name

    name = str(getattr(corpus, "name", ""))
    try:
        if name and parse_corpus_name(name) is not None:
            return name
    except ValueError:
        pass
    path = getattr(corpus, "path", None)
    return str(path) if path is not None else name


def describe_text_model(model: TextModel) -> dict[str, Any]:
    """What a saved model records of the text model its inputs were computed with (JSON values), enough to build
    the same kind of model again:

    * ``{"kind": "general", "dim": 2k, "general": "<source>", "fingerprint": ...}`` — the general English model
      (:mod:`gym_crawl.text.general`; a web corpus or a live web under it: ``[meaning, identity]`` rows);
    * ``{"kind": "corpus", "corpus": "<name or path>", "dim": k}`` — a corpus' own model (a live web with a
      reference corpus records the reference: its words keep their vectors);
    * ``{"kind": "hashed", "dim": k}`` — a live web that hashes every word (no reference, no general model).
    """
    meta = dict(model.meta)
    dim = int(model.dim)
    vectors = str(meta.get("vectors", ""))
    if isinstance(model, GeneralOpenTextModel) or vectors.startswith("general"):
        src = meta.get("general") or (vectors.split(":")[1] if vectors.count(":") >= 2 else GENERAL_SOURCE)
        fp = meta.get("general_fingerprint") or (vectors.split(":")[2].split("+")[0] if vectors.count(":") >= 2
                                                 else None)
        return {"kind": "general", "dim": dim, "general": str(src), "fingerprint": fp}
    if isinstance(model, OpenTextModel):
        ref = getattr(model, "reference", None)
        if ref is None:
            return {"kind": "hashed", "dim": dim}
        return {"kind": "corpus", "corpus": corpus_spec(ref.corpus), "dim": dim}
    return {"kind": "corpus", "corpus": corpus_spec(model.corpus), "dim": dim}
