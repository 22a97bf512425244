"""Word vectors: trained from the corpus itself (PPMI + truncated SVD), or loaded from GloVe/word2vec text.

Training uses documents as contexts: the page × word count matrix of a page
sample is turned into positive pointwise mutual information, factorized with
a seeded randomized SVD, and each word's vector is ``V_k · sqrt(Σ_k)``,
L2-normalised. Deterministic for a given corpus, sample and seed, bit for bit on
any CPU and thread count: the logarithms and the SVD are the package's own
fixed-order arithmetic (:mod:`gym_crawl._arith`, :mod:`gym_crawl._svd`), not
NumPy's vectorized ``log`` or LAPACK.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from gym_crawl._arith import log
from gym_crawl._svd import truncated_svd

if TYPE_CHECKING:  # scipy.sparse is imported where a matrix is built: a process that only steps an env never
    import scipy.sparse as sp  # loads it

__all__ = ["train_word_vectors", "load_word_vectors", "ppmi"]


def ppmi(counts: sp.csr_matrix) -> sp.csr_matrix:
    """Positive PMI of a (docs × words) count matrix, same sparsity pattern."""
    import scipy.sparse as sp

    counts = counts.tocsr().astype(np.float64)
    total = counts.sum()
    if total == 0:
        return counts
    row = np.asarray(counts.sum(axis=1)).ravel()
    col = np.asarray(counts.sum(axis=0)).ravel()
    coo = counts.tocoo()
    pmi = log(coo.data * total / (row[coo.row] * col[coo.col]))
    keep = pmi > 0
    return sp.csr_matrix((pmi[keep], (coo.row[keep], coo.col[keep])), shape=counts.shape)


def train_word_vectors(counts: sp.csr_matrix, dim: int = 64, seed: int = 0) -> np.ndarray:
    """(V, dim) float32 L2-normalised word vectors from a (docs × V) count matrix.

    Words that never occur get a zero vector. ``dim`` is capped by the matrix rank: components beyond it
    (singular values at rounding-noise level) are zero columns.
    """
    M = ppmi(counts)
    k = int(max(1, min(dim, min(M.shape) - 1)))
    S, V = truncated_svd(M, k, n_iter=5, seed=seed)
    W = (V * np.sqrt(S)).astype(np.float32)
    # fix SVD sign ambiguity deterministically: largest-|value| entry of each component positive
    signs = np.sign(W[np.abs(W).argmax(axis=0), np.arange(W.shape[1])])
    signs[signs == 0] = 1
    W *= signs
    if k < dim:
        W = np.hstack([W, np.zeros((W.shape[0], dim - k), np.float32)])
    n = np.linalg.norm(W, axis=1, keepdims=True)
    np.divide(W, n, out=W, where=n > 0)
    return W


def load_word_vectors(path: str | os.PathLike, vocab: list[str]) -> np.ndarray:
    """Read a GloVe or word2vec *text* file and align it to ``vocab``.

    Returns (len(vocab), dim) float32, L2-normalised; words absent from the
    file get zero vectors. A word2vec header line ``<count> <dim>`` is skipped.
    Raises ``ValueError`` naming the file and line of a malformed row.
    """
    path = Path(path)
    index = {w: i for i, w in enumerate(vocab)}
    W: np.ndarray | None = None
    opener = open
    if path.suffix == ".gz":
        import gzip
        opener = gzip.open  # type: ignore[assignment]
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            parts = line.rstrip().split(" ")
            if lineno == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                continue
            if len(parts) < 2:
                continue
            if W is None:
                W = np.zeros((len(vocab), len(parts) - 1), np.float32)
            if len(parts) - 1 != W.shape[1]:
                raise ValueError(f"{path}:{lineno}: expected {W.shape[1]} values after the word, got {len(parts) - 1}")
            i = index.get(parts[0].lower())
            if i is not None and not W[i].any():
                try:
                    W[i] = np.asarray(parts[1:], dtype=np.float32)
                except ValueError:
                    raise ValueError(f"{path}:{lineno}: non-numeric vector value for word {parts[0]!r}") from None
    if W is None:
        raise ValueError(f"{path}: no word vectors found")
    n = np.linalg.norm(W, axis=1, keepdims=True)
    np.divide(W, n, out=W, where=n > 0)
    return W
