"""The caches the Python feature and reward paths keep per corpus, topic or crawl hold rows for the pages they were
asked about (:class:`gym_crawl.pagemap.KeyedRows`), not a row per page of the web: the content features' link and
page vectors, TRES's classifier probabilities, the classifier reward's verdicts on a large web. Each holds what a
dense column held for the pages asked about, and grows past its starting size. A large static corpus' hashed token
tables are computed for the pages asked about and give the rows the tables built whole give."""
from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest
from conftest import make_tiny_corpus

import gym_crawl  # noqa: F401
import gym_crawl.features.content as content_mod
import gym_crawl.features.hashed_tokens as hashed_mod
import gym_crawl.relevance.rewards as rewards_mod
from gym_crawl.corpus.core import StringTable
from gym_crawl.features.content import HashedTokens, LazyHashedTokens, best_links
from gym_crawl.features.sets import FeatureSet
from gym_crawl.features.tres_clf import TresClfFeatures
from gym_crawl.pagemap import KeyedRows
from gym_crawl.relevance.classifier import heldout_view


@pytest.fixture(scope="module")
def web():
    return make_tiny_corpus(2000, domains_per_kind=5)


def _crawl(env, steps, seed=2):
    _, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        m = info["action_mask"]
        _, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(m))) if m.any() else 0)
        if term or trunc:
            break
    return env.unwrapped


def _touched(base) -> set[int]:
    """The pages the crawl touched (it gave each a slot)."""
    st = base.state
    return set(np.asarray(st.arrays["slot_page"][:st.n_slots]).tolist())


def _obs_bytes(obs) -> bytes:
    return b"".join(np.ascontiguousarray(obs[k]).tobytes() for k in sorted(obs)) if isinstance(obs, dict) \
        else obs.tobytes()


def _bounded(t: KeyedRows) -> bool:
    """Capacity follows the rows added: the doubling's slack at most."""
    return len(t.key_of) <= max(64, 2 * t.n) and len(t.keys) <= max(128, 4 * t.n)


def test_keyed_rows_agree_with_a_dict_through_growth():
    rng = np.random.default_rng(0)
    t = KeyedRows(("a", np.int64), ("v", np.float32, 3))
    ref: dict[int, int] = {}
    for _ in range(60):
        ids = rng.integers(0, 10_000_000, rng.integers(1, 30))
        rows = t.ensure(ids)
        for i, r in zip(ids.tolist(), rows.tolist()):
            assert ref.setdefault(i, r) == r  # a known id keeps its row
        t.cols["a"][rows] = ids
        t.cols["v"][rows] = (ids % 1000)[:, None] * np.array([1, 2, 3])  # exact in float32
    assert t.n == len(ref) > 128 and _bounded(t)
    probe = np.concatenate([np.array(list(ref)), rng.integers(10_000_000, 20_000_000, 50)])
    assert t.rows(probe).tolist() == [ref.get(i, -1) for i in probe.tolist()]
    got = t.get("a", probe)
    assert got.tolist() == [i if i in ref else 0 for i in probe.tolist()]
    assert np.array_equal(t.get("v", probe)[:, 2], (got % 1000) * 3.0)
    assert t.nbytes == sum(a.nbytes for a in (t.keys, t.slots, t.key_of, *t.cols.values()))


def test_content_caches_hold_the_pages_asked_about(web):
    content_mod._DENSE.pop(web, None)
    env = gym.make("WikiCrawl-v1", corpus=web, topic="cancer", features="content", max_candidates=16,
                   max_episode_steps=60)
    base = _crawl(env, 60)
    (cache,) = content_mod._DENSE[web]
    links, parents = cache.links, cache.parents
    touched = _touched(base)
    assert links.n > 64 and parents.n > 1, "the crawl asked about enough pages to grow the columns"
    assert set(links.key_of[:links.n].tolist()) <= touched and set(parents.key_of[:parents.n].tolist()) <= touched
    assert _bounded(links) and _bounded(parents)
    assert all(a.shape[0] < web.n_pages for a in (*links.cols.values(), *parents.cols.values()))
    # the cached rows are the vectors of the candidates' best links and best parents
    st = base.state
    cand = np.asarray(base.view.candidate_pages(), np.int64)
    cand = cand[cand >= 0]
    r = links.rows(cand)
    assert np.all(r >= 0) and np.array_equal(links.cols["key"][r], best_links(st, cand))
    want = content_mod._unit(cache.text.link_vectors(best_links(st, cand)))
    np.testing.assert_allclose(links.cols["vec"][r], want, rtol=1e-6, atol=1e-7)
    bp = FeatureSet.best_parents(st, cand).astype(np.int64)
    np.testing.assert_allclose(parents.cols["vec"][parents.rows(bp)], content_mod._unit(cache.text.page_vectors(bp)),
                               rtol=1e-6, atol=1e-7)


def test_tres_classifier_cache_holds_the_pages_asked_about(web):
    env = gym.make("WikiCrawl-v1", corpus=web, topic="cancer", features="tres-clf", max_candidates=16,
                   max_episode_steps=60)
    base = _crawl(env, 60)
    f = base.features
    assert isinstance(f, TresClfFeatures)
    ((clf, cache),) = f._caches.values()
    assert cache.n > 64 and set(cache.key_of[:cache.n].tolist()) <= _touched(base) and _bounded(cache)
    st = base.state
    cand = np.asarray(base.view.candidate_pages(), np.int64)
    cand = cand[cand >= 0]
    r = cache.rows(cand)
    assert np.all(r >= 0)
    assert np.array_equal(cache.cols["bp"][r], FeatureSet.best_parents(st, cand))
    np.testing.assert_allclose(cache.cols["prob"][r], clf.proba_links(web, best_links(st, cand)), rtol=1e-6)


def test_classifier_reward_on_a_large_web_keeps_the_verdicts_of_the_pages_fetched(web, monkeypatch):
    view = heldout_view(web)
    runs = {}
    for eager in (True, False):
        monkeypatch.setattr(rewards_mod, "_EAGER_PAGES", view.n_pages if eager else 0)
        rewards_mod._CLF_MEMO.pop(view, None)
        env = gym.make("WikiCrawl-v1", corpus=view, topic="cancer", reward="classifier", max_candidates=16,
                       max_episode_steps=40)
        _, info = env.reset(seed=4)
        trace = []
        for _ in range(40):
            _, r, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            trace.append(float(r))
            if term or trunc:
                break
        runs[eager] = (trace, env.unwrapped)
    assert runs[True][0] == runs[False][0], "the same rewards, whether the verdicts were computed up front or not"
    base = runs[False][1]
    scheme = base.state.scheme
    t = scheme._verdict
    assert isinstance(t, KeyedRows) and _bounded(t)
    fetched = np.asarray(base.view.fetched_pages(), np.int64)
    held = t.key_of[:t.n]
    assert set(fetched.tolist()) <= set(held.tolist()) <= _touched(base)
    want = scheme.classifier.proba_pages(view, held.astype(np.int64)) >= scheme.threshold
    assert np.array_equal(t.cols["v"][t.rows(held)], want.astype(np.int8))


@pytest.mark.parametrize("with_urls", [False, True])
def test_lazy_hashed_tokens_give_the_built_tables_rows(web, with_urls):
    """A large static corpus' hashed token tables, computed for the pages asked about, give the rows the tables
    built whole give — with the corpus' own URLs (their n-grams) or without (the titles')."""
    c = web
    if with_urls:
        urls = [f"https://Host-{i % 7}.example/Some_Path/{i}/Page-{i % 13}.html" for i in range(web.n_pages)]
        c = dataclasses.replace(web, urls=StringTable.from_strings(urls), meta={**web.meta, "name": "tiny-urls"})
    full, lazy = HashedTokens(c, 12), LazyHashedTokens(c, 12)
    rng = np.random.default_rng(1)
    asked = set()
    for size in (1, 5, 40, 300, 7, 2000):
        links = rng.integers(0, c.n_links, size)
        asked.update(np.asarray(c.link_dst)[links].tolist())
        for a, b in zip(full.rows(links), lazy.rows(links)):
            assert a.dtype == b.dtype and np.array_equal(a, b)
    assert set(lazy._page) == asked < set(range(c.n_pages))


def test_a_large_corpus_crawls_the_same_with_lazy_hashed_tokens(web, monkeypatch):
    traces = []
    for eager in (True, False):
        monkeypatch.setattr(hashed_mod, "EAGER_HASHED_PAGES", web.n_pages if eager else 0)
        hashed_mod._HASHED.pop(web, None)
        env = gym.make("WikiCrawl-v1", corpus=web, topic="cancer", features="hashed", max_candidates=8,
                       max_episode_steps=30)
        obs, info = env.reset(seed=5)
        trace = [_obs_bytes(obs)]
        for _ in range(30):
            obs, r, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
            trace.append((_obs_bytes(obs), float(r)))
            if term or trunc:
                break
        assert isinstance(hashed_mod.hashed_tokens(web), LazyHashedTokens) != eager
        traces.append(trace)
    assert traces[0] == traces[1]
