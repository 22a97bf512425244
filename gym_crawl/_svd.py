"""A seeded randomized truncated SVD of a sparse matrix whose bits depend on its inputs only.

The same algorithm as scikit-learn's ``randomized_svd`` (Halko, Martinsson & Tropp 2011): the Gaussian test
matrix drawn by ``np.random.RandomState(seed).normal`` (the same draws), ``n_iter`` power iterations, then
the SVD of the matrix projected on the subspace found — so the singular values and vectors agree with
scikit-learn's to about 1e-12, and a float32 rounding of them almost always bit for bit. What differs is
who does the arithmetic: scikit-learn calls LAPACK and BLAS, whose results depend on the CPU's kernels and
the thread count; here every step is a numba kernel that sums in a fixed order (see :mod:`gym_crawl._arith`):

* products of the sparse matrix with dense blocks gather each output row's terms in storage order;
* the power iterations keep the tall side's columns at unit norm and orthonormalize the short side by a
  Householder QR factorization (scikit-learn normalizes by LU; both span the same subspace);
* the tall side's basis and the small SVD of the projected matrix go through Gram matrices of at most
  ``k + n_oversamples`` columns, diagonalized by cyclic Jacobi rotations.

Singular values below 1e-6 of the largest (rounding noise of a rank-deficient matrix) are reported as 0 with
zero vectors, instead of the arbitrary directions a dense SVD gives them.

One input is not computed here: NumPy's legacy Gaussian draws call the C library's ``log``, which glibc takes
from an FMA build on CPUs with FMA (every x86-64 CPU since 2013) and from a plain one before; the two can round
a rare draw differently, which would move the vectors by ~1e-16, below their float32 rounding almost always.
Lowest layer of the package.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from gym_crawl._arith import matmul

if TYPE_CHECKING:  # scipy.sparse is imported where a matrix is built: a process that only steps an env never
    import scipy.sparse as sp  # loads it

__all__ = ["truncated_svd"]

#: eigenvalues of a Gram matrix below this fraction of the largest are its rounding noise
_GRAM_NOISE = 1e-12


@njit(cache=True, nogil=True)
def _csr_dense(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, X: np.ndarray) -> np.ndarray:
    """(rows × c) ``A @ X`` of CSR ``A``: each output row sums its stored entries in storage order."""
    n = indptr.shape[0] - 1
    c = X.shape[1]
    out = np.zeros((n, c), np.float64)
    for i in range(n):
        for j in range(indptr[i], indptr[i + 1]):
            a = data[j]
            col = indices[j]
            for t in range(c):
                out[i, t] += a * X[col, t]
    return out


@njit(cache=True, nogil=True)
def _unit_columns(Y: np.ndarray) -> None:
    """Scale the columns of ``Y`` to unit norm (zero columns stay zero), in place."""
    m, c = Y.shape
    sq = np.zeros(c, np.float64)
    for i in range(m):
        for t in range(c):
            sq[t] += Y[i, t] * Y[i, t]
    for t in range(c):
        if sq[t] > 0.0:
            sq[t] = 1.0 / math.sqrt(sq[t])
    for i in range(m):
        for t in range(c):
            Y[i, t] *= sq[t]


@njit(cache=True, nogil=True)
def _householder(A: np.ndarray) -> np.ndarray:
    """Householder QR of ``A`` (m × n) in place (Golub & Van Loan, Algorithm 5.2.1): below the diagonal of column
    j the reflector v_j (v_j[j] = 1 implied); returns the reflectors' β (min(m, n),). Sums in index order."""
    m, n = A.shape
    kmax = min(m, n)
    beta = np.zeros(kmax, np.float64)
    w = np.zeros(n, np.float64)
    for j in range(kmax):
        sigma = 0.0
        for i in range(j + 1, m):
            sigma += A[i, j] * A[i, j]
        if sigma == 0.0:
            continue
        x0 = A[j, j]
        mu = math.sqrt(x0 * x0 + sigma)
        v0 = x0 - mu if x0 <= 0.0 else -sigma / (x0 + mu)
        beta[j] = 2.0 * v0 * v0 / (sigma + v0 * v0)
        for i in range(j + 1, m):
            A[i, j] /= v0
        A[j, j] = mu
        for t in range(j + 1, n):  # w = β vᵀ A[j:, j+1:]
            w[t] = A[j, t]
        for i in range(j + 1, m):
            vi = A[i, j]
            if vi != 0.0:
                for t in range(j + 1, n):
                    w[t] += vi * A[i, t]
        for t in range(j + 1, n):
            w[t] *= beta[j]
            A[j, t] -= w[t]
        for i in range(j + 1, m):
            vi = A[i, j]
            if vi != 0.0:
                for t in range(j + 1, n):
                    A[i, t] -= vi * w[t]
    return beta


@njit(cache=True, nogil=True)
def _qr_q(Z: np.ndarray) -> np.ndarray:
    """The orthonormal factor Q (m × min(m, n)) of the Householder QR factorization of ``Z`` (m × n): the
    reflectors of :func:`_householder` applied to the first columns of the identity (Algorithm 5.1.5)."""
    A = Z.copy()
    beta = _householder(A)
    m = A.shape[0]
    kmax = beta.shape[0]
    Q = np.zeros((m, kmax), np.float64)
    for j in range(kmax):
        Q[j, j] = 1.0
    u = np.zeros(kmax, np.float64)
    for j in range(kmax - 1, -1, -1):
        if beta[j] == 0.0:
            continue
        for t in range(j, kmax):
            u[t] = Q[j, t]
        for i in range(j + 1, m):
            vi = A[i, j]
            if vi != 0.0:
                for t in range(j, kmax):
                    u[t] += vi * Q[i, t]
        for t in range(j, kmax):
            u[t] *= beta[j]
            Q[j, t] -= u[t]
        for i in range(j + 1, m):
            vi = A[i, j]
            if vi != 0.0:
                for t in range(j, kmax):
                    Q[i, t] -= vi * u[t]
    return Q


@njit(cache=True, nogil=True)
def _gram(Y: np.ndarray) -> np.ndarray:
    """(c × c) ``Yᵀ Y``, each entry summed over the rows in order."""
    m, c = Y.shape
    G = np.zeros((c, c), np.float64)
    for i in range(m):
        for a in range(c):
            ya = Y[i, a]
            if ya != 0.0:
                for b in range(a, c):
                    G[a, b] += ya * Y[i, b]
    for a in range(c):
        for b in range(a):
            G[a, b] = G[b, a]
    return G


@njit(cache=True, nogil=True)
def _jacobi_eigh(G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (descending) and eigenvectors (columns) of the symmetric ``G`` by cyclic Jacobi rotations
    (Golub & Van Loan, Algorithm 8.5.3), swept until the off-diagonal part is below 1e-17 of the whole."""
    n = G.shape[0]
    A = G.copy()
    V = np.eye(n)
    total = 0.0
    for i in range(n):
        for j in range(n):
            total += A[i, j] * A[i, j]
    for _ in range(100):
        off = 0.0
        for p in range(n):
            for q in range(p + 1, n):
                off += A[p, q] * A[p, q]
        if off <= 1e-34 * total:
            break
        for p in range(n - 1):
            for q in range(p + 1, n):
                apq = A[p, q]
                if apq == 0.0:
                    continue
                tau = (A[q, q] - A[p, p]) / (2.0 * apq)
                if tau >= 0.0:
                    t = 1.0 / (tau + math.sqrt(1.0 + tau * tau))
                else:
                    t = -1.0 / (-tau + math.sqrt(1.0 + tau * tau))
                c = 1.0 / math.sqrt(1.0 + t * t)
                s = t * c
                for k in range(n):
                    akp = A[k, p]
                    akq = A[k, q]
                    A[k, p] = c * akp - s * akq
                    A[k, q] = s * akp + c * akq
                for k in range(n):
                    apk = A[p, k]
                    aqk = A[q, k]
                    A[p, k] = c * apk - s * aqk
                    A[q, k] = s * apk + c * aqk
                for k in range(n):
                    vkp = V[k, p]
                    vkq = V[k, q]
                    V[k, p] = c * vkp - s * vkq
                    V[k, q] = s * vkp + c * vkq
    w = np.empty(n, np.float64)
    for i in range(n):
        w[i] = A[i, i]
    order = np.argsort(-w, kind="mergesort")
    return w[order], V[:, order].copy()


def _canonical_csr(A: sp.spmatrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(indptr, indices, data)`` of ``A`` as CSR with sorted, summed entries (a fixed storage order)."""
    import scipy.sparse as sp
    A = sp.csr_matrix(A, dtype=np.float64)
    A.sum_duplicates()
    A.sort_indices()
    return A.indptr.astype(np.int64), A.indices.astype(np.int64), A.data


def truncated_svd(M: sp.spmatrix, k: int, *, n_oversamples: int = 10, n_iter: int = 5,
                  seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` largest singular values of the sparse ``M`` (n × d) and their right singular vectors.

    :param M: sparse (n × d) matrix (converted to float64 CSR).
    :param k: number of components, at most ``min(n, d)``.
    :param n_oversamples: extra random directions of the range finder (scikit-learn's default 10).
    :param n_iter: power iterations (scikit-learn's ``n_iter``).
    :param seed: seed of the Gaussian test matrix (``np.random.RandomState(seed).normal``).
    :returns: ``(s, V)``: ``s`` (k,) float64 non-increasing; ``V`` (d, k) float64 with the unit right singular
        vectors as columns (zero columns for the singular values reported as 0). Signs are arbitrary.
    """
    n, d = M.shape
    if not 1 <= k <= min(n, d):
        raise ValueError(f"truncated_svd: k must be in [1, min(n, d)] = [1, {min(n, d)}], got {k}")
    transpose = n < d  # work on the tall orientation A (m × p), m >= p, as scikit-learn does
    A = M.T if transpose else M
    a_ptr, a_idx, a_val = _canonical_csr(A)
    t_ptr, t_idx, t_val = _canonical_csr(A.T)
    p = A.shape[1]
    Q = np.random.RandomState(seed).normal(size=(p, k + n_oversamples))
    for _ in range(n_iter):
        Y = _csr_dense(a_ptr, a_idx, a_val, Q)
        _unit_columns(Y)
        Q = _qr_q(_csr_dense(t_ptr, t_idx, t_val, Y))
    Y = _csr_dense(a_ptr, a_idx, a_val, Q)       # (m × c) = A Q: spans the range found, well conditioned
    lam, VG = _jacobi_eigh(_gram(Y))
    keep = lam > lam[0] * _GRAM_NOISE if len(lam) and lam[0] > 0 else np.zeros(len(lam), bool)
    T = VG[:, keep] / np.sqrt(lam[keep])         # Y T: an orthonormal basis of the range
    Z = matmul(_csr_dense(t_ptr, t_idx, t_val, Y), T)   # (p × c') = Aᵀ Y T: the projected matrix B, transposed
    mu, U = _jacobi_eigh(_gram(Z))                # B Bᵀ = U diag(s²) Uᵀ
    s = np.sqrt(np.maximum(mu, 0.0))
    good = int(np.count_nonzero(s > s[0] * math.sqrt(_GRAM_NOISE))) if len(s) and s[0] > 0 else 0
    kk = min(k, good)
    vecs = np.zeros((d, k), np.float64)
    if kk:
        if transpose:   # the d side is A's row side: left singular vectors Y T u
            vecs[:, :kk] = matmul(Y, matmul(T, U[:, :kk]))
        else:           # the d side is A's column side: Bᵀ u / s
            vecs[:, :kk] = matmul(Z, U[:, :kk] / s[:kk])
    out_s = np.zeros(k, np.float64)
    out_s[:kk] = s[:kk]
    return out_s, vecs
