"""Han 2018's integer-index feature vector (gym_crawl.features.han_index): the thesis code's 30 columns for
4 categories, each the index of the hot column of the matching han2018 tiling group, local rows, and an
LFA crawl on it."""
from __future__ import annotations

import numpy as np
import pytest

import gym_crawl  # noqa: F401
from gym_crawl.agents import make_agent, make_env_for, run_episode
from gym_crawl.features.han_index import HanIndexFeatures
from gym_crawl.features.sets import Han2018Features


def _env(corpus, features, steps=120, topic="cancer"):
    return make_env_for("lfa-async", corpus=corpus, topic=topic, features=features, reward="han2018",
                        max_episode_steps=steps)


def test_dimension_and_names_follow_the_thesis_code():
    f = HanIndexFeatures(4)
    # OptimizedPageFeaturizer 8 + 2C plus OptimizedLinkFeaturizer 6 + 2C
    assert f.dim == (8 + 2 * 4) + (6 + 2 * 4) == 30
    assert f.names[:8] == ["s.rel:b5", "s.rel:b6", "s.parents_mean:b5", "s.parents_mean:b6",
                           "s.relevant_parents_mean:b5", "s.relevant_parents_mean:b6", "s.dist", "s.change"]
    assert sum(n.startswith("a.") for n in f.names) == 6 + 2 * 4 and "bias" not in f.names
    assert HanIndexFeatures(2).dim == 14 + 4 * 2 and HanIndexFeatures(0).dim == 14
    with pytest.raises(ValueError, match="n_categories"):
        HanIndexFeatures(-1)
    with pytest.raises(ValueError, match="delta1"):
        HanIndexFeatures(4, delta1=0.5, delta2=0.3)


def _group(han_names: list[str], name: str) -> list[int]:
    if name == "s.dist":
        return [k for k, n in enumerate(han_names) if n.startswith("s.dist=")]
    if name == "s.change":
        return [k for k, n in enumerate(han_names) if n.startswith("s.change=c")]
    q, _, kind = name.rpartition(":")
    return [k for k, n in enumerate(han_names) if n.startswith(f"{q}={kind}:")]


def test_every_index_is_the_hot_column_of_the_han2018_tiling(tiny_corpus):
    f, han = HanIndexFeatures(4), Han2018Features(4)
    env = _env(tiny_corpus, f)
    env.reset(seed=1)
    base = env.unwrapped
    rng = np.random.default_rng(0)
    groups = [_group(han.names, n) for n in f.names]
    seen = 0
    for _ in range(60):
        F = np.array(base.view.frontier_pages())
        if len(F) == 0:
            break
        X, H = base.view.features_of(F), han.compute(base.state, F)
        assert np.all(np.round(X) == X) and X.min() >= 0
        for j, cols in enumerate(groups):
            assert len(cols) in (5, 6, 10) and np.all(H[:, cols].sum(1) == 1)
            np.testing.assert_array_equal(np.argmax(H[:, cols], 1), X[:, j].astype(int), err_msg=f.names[j])
        seen += len(F)
        _, _, term, trunc, _ = env.step(int(F[rng.integers(len(F))]))
        if term or trunc:
            break
    assert seen > 500
    Xn = HanIndexFeatures(4, normalize=True).compute(base.state, np.array(base.view.frontier_pages()))
    assert Xn.min() >= 0 and Xn.max() <= 1


def test_compiled_rows_equal_the_numpy_definition(tiny_corpus):
    """compute() (numba kernel) == reference_compute() (vectorized numpy), bit for bit, plain and normalized,
    on every frontier of a crawl; a page without a fetched parent is refused by both."""
    f, fn = HanIndexFeatures(4), HanIndexFeatures(4, normalize=True)
    env = _env(tiny_corpus, f)
    env.reset(seed=3)
    base = env.unwrapped
    rng = np.random.default_rng(2)
    rows = 0
    for _ in range(80):
        F = np.array(base.view.frontier_pages())
        if len(F) == 0:
            break
        for g in (f, fn):
            a, b = g.compute(base.state, F), g.reference_compute(base.state, F)
            assert a.dtype == b.dtype == np.float32
            np.testing.assert_array_equal(a.view(np.int32), b.view(np.int32))
        rows += len(F)
        _, _, term, trunc, _ = env.step(int(F[rng.integers(len(F))]))
        if term or trunc:
            break
    assert rows > 500
    fetched = np.flatnonzero(base.state.best_parent < 0)[:1]
    for fun in (f.compute, f.reference_compute):
        with pytest.raises(ValueError, match="not frontier pages"):
            fun(base.state, fetched)


def test_rows_change_only_for_pages_that_gained_a_parent(tiny_corpus):
    env = _env(tiny_corpus, HanIndexFeatures(4))
    env.reset(seed=2)
    base = env.unwrapped
    rng = np.random.default_rng(1)
    for _ in range(30):
        F = np.array(base.view.frontier_pages())
        before = dict(zip(F.tolist(), base.view.features_of(F)))
        _, _, term, trunc, _ = env.step(int(F[rng.integers(len(F))]))
        updated = set(base.view.frontier_changes().updated.tolist())
        G = np.array(base.view.frontier_pages())
        for p, row in zip(G.tolist(), base.view.features_of(G)):
            if p in before and p not in updated:
                np.testing.assert_array_equal(row, before[p])
        if term or trunc:
            break


def test_lfa_crawls_on_the_index_vector(tiny_corpus):
    for name in ("lfa-sync", "lfa-async"):
        agent = make_agent(name, epsilon=0.05)
        res = run_episode(_env(tiny_corpus, HanIndexFeatures(4), steps=60), agent, seed=0)
        assert res.steps == 60 and len(agent.w) == 30 and agent.updates > 0
