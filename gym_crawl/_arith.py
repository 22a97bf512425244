"""Floating-point arithmetic whose bits depend on its inputs only — not on the CPU, its vector width or the
number of BLAS / OpenMP threads.

NumPy hands matrix products (``@``, ``np.dot``, ``np.matmul``, a 1-D ``np.linalg.norm``) to BLAS, and
OpenBLAS and MKL choose their kernels by CPU (SSE2, AVX2, AVX-512) and split the work over threads: each
choice sums in another order, so the last bits of a product differ from one machine or thread count to the
next. NumPy's ``exp``, ``log``, ``tanh``, ``log1p`` … have AVX-512 / AVX2 implementations that round
differently from the C library's, in the last bit of some results. Where such a bit decides a trajectory
(a score that ranks links, a Q-value that picks a page), the same seed would give another crawl elsewhere.

Everything here is compiled by numba without ``fastmath`` and without parallel reductions, which keeps
LLVM from reassociating sums or fusing ``a * b + c`` into one FMA; every sum runs in index order in float64
(inputs are widened with ``np.float64``: numba's ``float()`` keeps a float32 a float32), and a float32 result
is rounded once, at the end. The elementary functions (:func:`exp`, :func:`expm1`, :func:`log`,
:func:`log1p`, :func:`tanh`) are fdlibm's algorithms (Sun Microsystems' freely distributable math library,
as FreeBSD's ``msun`` keeps it) written on ``+ − × ÷``, ``frexp`` and ``ldexp``, which IEEE 754 rounds the
same way on every CPU; their errors are fdlibm's (below 1 unit in the last place, 2.5 for ``tanh``). The
scalar forms (``exp_``, ``log_`` …) are numba functions that compiled code calls.

Speed: the sums are sequential (one accumulator per output), vectorized across outputs where a kernel
has several (a row's cosines with every topic query, a weighted sum of word-vector rows).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import overload

import numpy as np
from numba import njit

__all__ = ["cosines", "dot", "exp", "expm1", "log", "log1p", "matmul", "norm", "row_dots", "row_norms",
           "sparse_rows_dense", "tanh", "exp_", "expm1_", "log_", "log1p_", "tanh_"]

_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e+00
_HALF_LN2 = 0.5 * 6.93147180559945309417e-01
_THREE_HALF_LN2 = 1.5 * 6.93147180559945309417e-01
_SQRT_HALF = 0.70710678118654752440


# ---------------------------------------------------------------------------------------------- exp, expm1
@njit(cache=True, nogil=True)
def exp_(x: float) -> float:
    """e**x (fdlibm ``e_exp.c``: x = k·ln2 + r, a rational approximation of e**r, then ``ldexp``)."""
    if x != x:
        return x
    if x > 7.09782712893383973096e+02:
        return math.inf
    if x < -7.45133219101941108420e+02:
        return 0.0
    ax = abs(x)
    k = 0
    hi = 0.0
    lo = 0.0
    if ax > _HALF_LN2:
        if ax < _THREE_HALF_LN2:
            if x > 0:
                hi, lo, k = x - _LN2_HI, _LN2_LO, 1
            else:
                hi, lo, k = x + _LN2_HI, -_LN2_LO, -1
        else:
            k = int(_INV_LN2 * x + (0.5 if x > 0 else -0.5))
            t = float(k)
            hi = x - t * _LN2_HI  # exact: t·ln2_hi has at most 32 significant bits
            lo = t * _LN2_LO
        x = hi - lo
    elif ax < 3.7252902984e-09:  # 2**-28
        return 1.0 + x
    t = x * x
    c = x - t * (1.66666666666666019037e-01 + t * (-2.77777777770155933842e-03 + t * (
        6.61375632143793436117e-05 + t * (-1.65339022054652515390e-06 + t * 4.13813679705723846039e-08))))
    if k == 0:
        return 1.0 - ((x * c) / (c - 2.0) - x)
    y = 1.0 - ((lo - (x * c) / (2.0 - c)) - hi)
    return math.ldexp(y, k)


@njit(cache=True, nogil=True)
def expm1_(x: float) -> float:
    """e**x − 1, accurate near 0 (fdlibm ``s_expm1.c``)."""
    if x != x:
        return x
    if x > 7.09782712893383973096e+02:
        return math.inf
    if x < -38.816242111356935:  # -56·ln2: e**x − 1 rounds to −1
        return -1.0
    ax = abs(x)
    k = 0
    c = 0.0
    if ax > _HALF_LN2:
        if ax < _THREE_HALF_LN2:
            if x > 0:
                hi, lo, k = x - _LN2_HI, _LN2_LO, 1
            else:
                hi, lo, k = x + _LN2_HI, -_LN2_LO, -1
        else:
            k = int(_INV_LN2 * x + (0.5 if x > 0 else -0.5))
            t = float(k)
            hi = x - t * _LN2_HI
            lo = t * _LN2_LO
        x = hi - lo
        c = (hi - x) - lo
    elif ax < 5.551115123125783e-17:  # 2**-54
        return x
    hfx = 0.5 * x
    hxs = x * hfx
    r1 = 1.0 + hxs * (-3.33333333333331316428e-02 + hxs * (1.58730158725481460165e-03 + hxs * (
        -7.93650757867487942473e-05 + hxs * (4.00821782732936239552e-06 + hxs * -2.01099218183624371326e-07))))
    t = 3.0 - r1 * hfx
    e = hxs * ((r1 - t) / (6.0 - x * t))
    if k == 0:
        return x - (x * e - hxs)
    e = x * (e - c) - c
    e -= hxs
    if k == -1:
        return 0.5 * (x - e) - 0.5
    if k == 1:
        if x < -0.25:
            return -2.0 * (e - (x + 0.5))
        return 1.0 + 2.0 * (x - e)
    if k <= -2 or k > 56:
        y = 1.0 - (e - x)
        return math.ldexp(y, k) - 1.0
    if k < 20:
        t = 1.0 - math.ldexp(1.0, -k)
        y = t - (e - x)
        return math.ldexp(y, k)
    t = math.ldexp(1.0, -k)
    y = x - (e + t)
    y += 1.0
    return math.ldexp(y, k)


# ---------------------------------------------------------------------------------------------- log, log1p
@njit(cache=True, nogil=True)
def _log1p_kernel(f: float, k: int) -> float:
    """k·ln2 + log(1 + f) for f in [√½ − 1, √2 − 1) (fdlibm ``e_log.c`` / ``k_log.h``)."""
    dk = float(k)
    if f == 0.0:
        return dk * _LN2_HI + dk * _LN2_LO
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    t1 = w * (3.999999999940941908e-01 + w * (2.222219843214978396e-01 + w * 1.531383769920937332e-01))
    t2 = z * (6.666666666666735130e-01 + w * (2.857142874366239149e-01 + w * (
        1.818357216161805012e-01 + w * 1.479819860511658591e-01)))
    r = t2 + t1
    hfsq = 0.5 * f * f
    return dk * _LN2_HI - ((hfsq - (s * (hfsq + r) + dk * _LN2_LO)) - f)


@njit(cache=True, nogil=True)
def log_(x: float) -> float:
    """Natural logarithm (NaN below 0, −inf at 0)."""
    if x != x or x < 0.0:
        return math.nan
    if x == 0.0:
        return -math.inf
    if x == math.inf:
        return x
    m, e = math.frexp(x)  # x = m·2**e, m in [0.5, 1): exact
    if m < _SQRT_HALF:
        m *= 2.0
        e -= 1
    return _log1p_kernel(m - 1.0, e)  # m − 1 is exact (Sterbenz)


@njit(cache=True, nogil=True)
def log1p_(x: float) -> float:
    """log(1 + x), accurate near 0 (the rounding error of 1 + x is corrected, as fdlibm ``s_log1p.c`` does)."""
    if x != x or x < -1.0:
        return math.nan
    if x == -1.0:
        return -math.inf
    if x == math.inf:
        return x
    if x == 0.0:
        return x
    u = 1.0 + x
    err = x - (u - 1.0) if abs(x) <= 1.0 else 1.0 - (u - x)  # 1 + x = u + err exactly (Fast2Sum)
    c = err / u  # log(1 + x) = log(u) + err/u to first order
    m, e = math.frexp(u)
    if m < _SQRT_HALF:
        m *= 2.0
        e -= 1
    return _log1p_kernel(m - 1.0, e) + c


# ---------------------------------------------------------------------------------------------- tanh
@njit(cache=True, nogil=True)
def tanh_(x: float) -> float:
    """Hyperbolic tangent (fdlibm ``s_tanh.c``, through :func:`expm1_`)."""
    if x != x:
        return x
    ax = abs(x)
    if ax >= 22.0:
        z = 1.0
    elif ax < 3.7252902984e-09:  # 2**-28
        return x
    elif ax >= 1.0:
        t = expm1_(2.0 * ax)
        z = 1.0 - 2.0 / (t + 2.0)
    else:
        t = expm1_(-2.0 * ax)
        z = -t / (t + 2.0)
    return z if x >= 0 else -z


@njit(cache=True, nogil=True)
def _map_exp(x: np.ndarray, out: np.ndarray) -> None:
    for i in range(x.size):
        out[i] = exp_(np.float64(x[i]))


@njit(cache=True, nogil=True)
def _map_expm1(x: np.ndarray, out: np.ndarray) -> None:
    for i in range(x.size):
        out[i] = expm1_(np.float64(x[i]))


@njit(cache=True, nogil=True)
def _map_log(x: np.ndarray, out: np.ndarray) -> None:
    for i in range(x.size):
        out[i] = log_(np.float64(x[i]))


@njit(cache=True, nogil=True)
def _map_log1p(x: np.ndarray, out: np.ndarray) -> None:
    for i in range(x.size):
        out[i] = log1p_(np.float64(x[i]))


@njit(cache=True, nogil=True)
def _map_tanh(x: np.ndarray, out: np.ndarray) -> None:
    for i in range(x.size):
        out[i] = tanh_(np.float64(x[i]))


def _elementwise(kernel: Callable[[np.ndarray, np.ndarray], None], x: np.ndarray | float) -> np.ndarray | float:
    a = np.asarray(x, dtype=np.float64)  # (ascontiguousarray would make a scalar 1-D)
    flat = np.ascontiguousarray(a).reshape(-1)
    out = np.empty(flat.shape, np.float64)
    kernel(flat, out)
    if a.ndim == 0:
        return float(out[0])
    return out.reshape(a.shape)


@overload
def exp(x: float) -> float: ...
@overload
def exp(x: np.ndarray) -> np.ndarray: ...
def exp(x: np.ndarray | float) -> np.ndarray | float:
    """e**x of every element, float64 (a float for a scalar)."""
    return _elementwise(_map_exp, x)


@overload
def expm1(x: float) -> float: ...
@overload
def expm1(x: np.ndarray) -> np.ndarray: ...
def expm1(x: np.ndarray | float) -> np.ndarray | float:
    """e**x − 1 of every element, float64 (a float for a scalar)."""
    return _elementwise(_map_expm1, x)


@overload
def log(x: float) -> float: ...
@overload
def log(x: np.ndarray) -> np.ndarray: ...
def log(x: np.ndarray | float) -> np.ndarray | float:
    """Natural logarithm of every element, float64 (a float for a scalar)."""
    return _elementwise(_map_log, x)


@overload
def log1p(x: float) -> float: ...
@overload
def log1p(x: np.ndarray) -> np.ndarray: ...
def log1p(x: np.ndarray | float) -> np.ndarray | float:
    """log(1 + x) of every element, float64 (a float for a scalar)."""
    return _elementwise(_map_log1p, x)


@overload
def tanh(x: float) -> float: ...
@overload
def tanh(x: np.ndarray) -> np.ndarray: ...
def tanh(x: np.ndarray | float) -> np.ndarray | float:
    """Hyperbolic tangent of every element, float64 (a float for a scalar)."""
    return _elementwise(_map_tanh, x)


# ---------------------------------------------------------------------------------------------- products
@njit(cache=True, nogil=True)
def _dot(x: np.ndarray, y: np.ndarray) -> float:
    s = 0.0
    for i in range(x.shape[0]):
        s += np.float64(x[i]) * np.float64(y[i])
    return s


@njit(cache=True, nogil=True)
def _row_dots(X: np.ndarray, w: np.ndarray, out: np.ndarray) -> None:
    n, d = X.shape
    for i in range(n):
        s = 0.0
        for j in range(d):
            s += np.float64(X[i, j]) * np.float64(w[j])
        out[i] = s


@njit(cache=True, nogil=True)
def _matmul(A: np.ndarray, B: np.ndarray, out: np.ndarray) -> None:
    """out[i, j] = Σ_l A[i, l]·B[l, j], l ascending; the row's outputs accumulate side by side."""
    n, k = A.shape
    q = B.shape[1]
    for i in range(n):
        for j in range(q):
            out[i, j] = 0.0
        for l in range(k):  # noqa: E741
            a = np.float64(A[i, l])
            for j in range(q):
                out[i, j] += a * np.float64(B[l, j])


@njit(cache=True, nogil=True)
def _row_sq_norms(X: np.ndarray, out: np.ndarray) -> None:
    n, d = X.shape
    for i in range(n):
        s = 0.0
        for j in range(d):
            v = np.float64(X[i, j])
            s += v * v
        out[i] = s


@njit(cache=True, nogil=True)
def _cosines(V: np.ndarray, QT: np.ndarray, out: np.ndarray) -> None:
    """out[i, j] = float32(Σ_l V[i,l]·QT[l,j] / √Σ_l V[i,l]²), 0 for a zero row; sums in float64, l ascending
    (``QT``: the queries as float64 columns, so a row's q sums advance side by side)."""
    n, k = V.shape
    q = QT.shape[1]
    acc = np.zeros(q, np.float64)
    for i in range(n):
        sq = 0.0
        for j in range(q):
            acc[j] = 0.0
        for l in range(k):  # noqa: E741
            v = np.float64(V[i, l])
            sq += v * v
            for j in range(q):
                acc[j] += v * QT[l, j]
        if sq > 0.0:
            r = math.sqrt(sq)
            for j in range(q):
                out[i, j] = np.float32(acc[j] / r)
        else:
            for j in range(q):
                out[i, j] = np.float32(0.0)


@njit(cache=True, nogil=True)
def _sparse_rows_dense(starts: np.ndarray, cols: np.ndarray, weights: np.ndarray, M: np.ndarray,
                       out: np.ndarray) -> None:
    """out[r] = Σ_{j in starts[r]:starts[r+1]} weights[j]·M[cols[j]], j ascending, summed in float64 and stored in
    ``out``'s dtype (one rounding)."""
    k = M.shape[1]
    acc = np.zeros(k, np.float64)
    for r in range(starts.shape[0] - 1):
        for l in range(k):  # noqa: E741
            acc[l] = 0.0
        for j in range(starts[r], starts[r + 1]):
            w = np.float64(weights[j])
            c = cols[j]
            for l in range(k):  # noqa: E741
                acc[l] += w * np.float64(M[c, l])
        for l in range(k):  # noqa: E741
            out[r, l] = acc[l]


def dot(x: np.ndarray, y: np.ndarray) -> float:
    """Σ_i x[i]·y[i] of two 1-D arrays, summed in index order in float64."""
    x, y = np.asarray(x), np.asarray(y)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"dot: need two 1-D arrays of one length, got shapes {x.shape} and {y.shape}")
    return float(_dot(x, y))


def norm(x: np.ndarray) -> float:
    """Euclidean norm of a 1-D array (float64 sum of squares in index order)."""
    x = np.asarray(x)
    return math.sqrt(_dot(x, x))


def row_dots(X: np.ndarray, w: np.ndarray) -> np.ndarray:
    """(n,) float64 ``X @ w`` of ``X`` (n, d) and ``w`` (d,), each row summed in column order in float64."""
    X, w = np.asarray(X), np.asarray(w)
    if X.ndim != 2 or w.shape != (X.shape[1],):
        raise ValueError(f"row_dots: need X (n, d) and w (d,), got shapes {X.shape} and {w.shape}")
    out = np.empty(X.shape[0], np.float64)
    _row_dots(X, w, out)
    return out


def matmul(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """(n, q) float64 ``A @ B`` of ``A`` (n, k) and ``B`` (k, q), each entry summed over k in order."""
    A, B = np.asarray(A), np.asarray(B)
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise ValueError(f"matmul: need A (n, k) and B (k, q), got shapes {A.shape} and {B.shape}")
    out = np.empty((A.shape[0], B.shape[1]), np.float64)
    _matmul(A, B, out)
    return out


def row_norms(X: np.ndarray) -> np.ndarray:
    """(n,) float64 Euclidean norms of the rows of ``X`` (n, d)."""
    X = np.asarray(X)
    out = np.empty(X.shape[0], np.float64)
    _row_sq_norms(X, out)
    return np.sqrt(out)


def cosines(V: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """(n, q) float32 cosines of the rows of ``V`` (n, k) with the unit rows of ``Q`` (q, k): the float64 dot
    product over the float64 norm of the row, rounded to float32 once; 0 for a zero row."""
    V, Q = np.asarray(V), np.asarray(Q)
    if V.ndim != 2 or Q.ndim != 2 or V.shape[1] != Q.shape[1]:
        raise ValueError(f"cosines: need V (n, k) and Q (q, k), got shapes {V.shape} and {Q.shape}")
    out = np.empty((V.shape[0], Q.shape[0]), np.float32)
    if V.shape[0]:
        _cosines(V, np.ascontiguousarray(Q.T, dtype=np.float64), out)
    return out


def sparse_rows_dense(rowpos: np.ndarray, cols: np.ndarray, weights: np.ndarray, M: np.ndarray, n_rows: int,
                      dtype: type = np.float64) -> np.ndarray:
    """(n_rows, k) ``out[r] = Σ_{j: rowpos[j]=r} weights[j]·M[cols[j]]``, the terms of each row summed in the order
    they are given in float64 and stored as ``dtype`` (a sparse (n_rows × V) by dense (V × k) product, without a
    temporary)."""
    rowpos = np.asarray(rowpos, np.int64)
    cols = np.asarray(cols, np.int64)
    weights = np.asarray(weights)
    if len(rowpos) and np.any(rowpos[1:] < rowpos[:-1]):  # group each row's terms, keeping their order
        order = np.argsort(rowpos, kind="stable")
        rowpos, cols, weights = rowpos[order], cols[order], weights[order]
    starts = np.zeros(n_rows + 1, np.int64)
    np.cumsum(np.bincount(rowpos, minlength=n_rows), out=starts[1:])
    out: np.ndarray = np.empty((n_rows, M.shape[1]), dtype)
    _sparse_rows_dense(starts, cols, weights, M, out)
    return out
