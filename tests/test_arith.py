"""The package's own arithmetic (``gym_crawl._arith``, ``gym_crawl._svd``): the fixed summation order it
promises, the accuracy of its elementary functions and of its SVD, and that its results do not depend on
how rows are grouped into calls. That the bits do not depend on the CPU or the thread count is shown by
``tests/test_golden_platform.py`` and the golden matrix of ``.ci/run``."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from gym_crawl import _arith as A
from gym_crawl._svd import truncated_svd

RNG = np.random.default_rng(0)


def _seq_dot(x, y) -> float:
    """The promised order: one float64 accumulator, index order (Python floats are IEEE doubles)."""
    s = 0.0
    for a, b in zip(np.asarray(x, np.float64).tolist(), np.asarray(y, np.float64).tolist()):
        s += a * b
    return s


def test_products_sum_in_index_order_in_float64():
    X = RNG.standard_normal((40, 33)).astype(np.float32)
    w = RNG.standard_normal(33)
    assert A.row_dots(X, w).tolist() == [_seq_dot(x, w) for x in X]
    assert A.dot(X[0], w) == _seq_dot(X[0], w)
    assert A.norm(w) == math.sqrt(_seq_dot(w, w))
    B = RNG.standard_normal((33, 5))
    got = A.matmul(X, B)
    assert got.tolist() == [[_seq_dot(x, B[:, j]) for j in range(5)] for x in X]
    np.testing.assert_array_equal(A.row_norms(X), [math.sqrt(_seq_dot(x, x)) for x in X])


def test_cosines_round_once_and_do_not_depend_on_the_batch():
    V = RNG.standard_normal((50, 64)).astype(np.float32)
    V[7] = 0.0
    Q = RNG.standard_normal((5, 64)).astype(np.float32)
    Q /= np.linalg.norm(Q, axis=1, keepdims=True)
    cos = A.cosines(V, Q)
    assert cos.dtype == np.float32 and (cos[7] == 0).all()
    want = [[np.float32(_seq_dot(v, q) / math.sqrt(_seq_dot(v, v))) if v.any() else np.float32(0) for q in Q]
            for v in V]
    np.testing.assert_array_equal(cos, np.asarray(want, np.float32))
    # a row's cosines are the same alone, in another batch, or against a subset of the queries
    np.testing.assert_array_equal(A.cosines(V[3:4], Q), cos[3:4])
    np.testing.assert_array_equal(A.cosines(V[::-1], Q[2:])[::-1], cos[:, 2:])


def test_sparse_rows_dense_sums_each_row_in_the_order_given():
    M = RNG.standard_normal((30, 8)).astype(np.float32)
    rowpos = np.array([2, 0, 2, 1, 2, 0])
    cols = np.array([5, 3, 1, 7, 29, 0])
    w = RNG.random(6).astype(np.float32)
    out = A.sparse_rows_dense(rowpos, cols, w, M, 4)
    assert out.shape == (4, 8) and (out[3] == 0).all()
    for r in range(3):
        j = np.flatnonzero(rowpos == r)
        want = np.zeros(8)
        for k in j:  # in the order given, float64
            want = want + np.float64(w[k]) * M[cols[k]].astype(np.float64)
        np.testing.assert_array_equal(out[r], want)


def _ulps(got: float, ref: float) -> float:
    return 0.0 if got == ref else abs(got - ref) / math.ulp(ref)


@pytest.mark.parametrize("name, ref, xs, bound", [
    ("exp", math.exp, np.concatenate([RNG.uniform(-700, 700, 2000), RNG.uniform(-1, 1, 2000), [0.0, 1e-300]]), 1.0),
    ("expm1", math.expm1, np.concatenate([RNG.uniform(-40, 40, 2000), RNG.uniform(-1e-3, 1e-3, 2000)]), 1.0),
    ("log", math.log, np.concatenate([np.exp(RNG.uniform(-700, 700, 2000)), RNG.uniform(0.5, 2, 2000),
                                      [1.0, 5e-324, 1.7e308]]), 1.0),
    ("log1p", math.log1p, np.concatenate([RNG.uniform(-0.999, 10, 2000), RNG.uniform(-1e-6, 1e-6, 2000)]), 1.5),
    ("tanh", math.tanh, np.concatenate([RNG.uniform(-25, 25, 2000), RNG.uniform(-1, 1, 2000), [1e-20]]), 2.5),
])
def test_elementary_functions_are_within_an_ulp_or_two(name, ref, xs, bound):
    """fdlibm's error bounds (< 1 ulp; tanh < 2.5), measured against the C library's (itself < 1 ulp):
    together at most the sum of both."""
    got = getattr(A, name)(xs)
    worst = max(_ulps(float(g), ref(float(x))) for g, x in zip(got, xs))
    assert worst <= bound + 1.0, f"{name}: {worst:.2f} ulp"
    assert getattr(A, name)(float(xs[0])) == float(got[0])  # scalar form, same value


def test_elementary_functions_special_values():
    inf, nan = math.inf, math.nan
    assert A.exp(inf) == inf and A.exp(-inf) == 0.0 and A.exp(710.0) == inf and math.isnan(A.exp(nan))
    assert A.log(0.0) == -inf and math.isnan(A.log(-1.0)) and A.log(inf) == inf and A.log(1.0) == 0.0
    assert A.log1p(-1.0) == -inf and math.isnan(A.log1p(-2.0)) and A.log1p(0.0) == 0.0
    assert A.tanh(inf) == 1.0 and A.tanh(-inf) == -1.0 and A.tanh(30.0) == 1.0 and A.tanh(0.0) == 0.0
    assert A.expm1(-inf) == -1.0 and A.expm1(0.0) == 0.0
    assert A.log(np.array([[1.0, math.e]])).shape == (1, 2)


def _dense_svd(M: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    _, s, vt = np.linalg.svd(M, full_matrices=False)
    return s[:k], vt[:k].T


@pytest.mark.parametrize("shape", [(300, 60), (60, 300)])  # both orientations (the tall side is chosen inside)
def test_truncated_svd_matches_a_dense_svd(shape):
    M = sp.random(*shape, density=0.2, random_state=np.random.RandomState(1), format="csr")
    k = 20
    s, V = truncated_svd(M, k, n_oversamples=40, n_iter=7, seed=0)
    s_ref, V_ref = _dense_svd(M.toarray(), k)
    np.testing.assert_allclose(s, s_ref, rtol=1e-9)
    # singular vectors up to sign, where the singular values are well separated
    for j in range(k - 1):
        if (s_ref[j] - s_ref[j + 1]) / s_ref[0] > 1e-3 and (j == 0 or (s_ref[j - 1] - s_ref[j]) / s_ref[0] > 1e-3):
            c = abs(float(V[:, j] @ V_ref[:, j]))
            assert c == pytest.approx(1.0, abs=1e-8), (j, c)
    np.testing.assert_allclose(V.T @ V, np.eye(k), atol=1e-10)


def test_truncated_svd_reports_rank_deficiency_as_zeros_and_leaves_empty_columns_zero():
    rng = np.random.default_rng(3)
    M = rng.random((80, 6)) @ rng.random((6, 30))   # rank 6
    M[:, [4, 11]] = 0.0                              # words that never occur
    s, V = truncated_svd(sp.csr_matrix(M), 10, seed=0)
    assert (s[:6] > 0).all() and (s[6:] == 0).all() and (V[:, 6:] == 0).all()
    assert (V[[4, 11]] == 0).all()                   # exactly zero rows, not rounding noise
    np.testing.assert_allclose(s[:6], np.linalg.svd(M, compute_uv=False)[:6], rtol=1e-9)


def test_truncated_svd_is_seeded_and_refuses_a_bad_k():
    M = sp.random(50, 40, density=0.3, random_state=np.random.RandomState(2), format="csr")
    a, b = truncated_svd(M, 5, seed=4), truncated_svd(M, 5, seed=4)
    np.testing.assert_array_equal(a[1], b[1])
    with pytest.raises(ValueError, match=r"k must be in \[1, min\(n, d\)\] = \[1, 40\], got 41"):
        truncated_svd(M, 41)
