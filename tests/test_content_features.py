"""Content-bearing feature sets: shapes, values, hashed sparsity and columns by hand, the
sparse accessor, locality, determinism, and no leak of unfetched pages' text or labels."""
from __future__ import annotations

import zlib

import gymnasium as gym
import numpy as np
import pytest
from conftest import tamper_unfetched
from gymnasium.utils.env_checker import data_equivalence

import gym_crawl
from gym_crawl.features import FEATURE_SETS
from gym_crawl.features.content import (
    FIELDS,
    ContentFeatures,
    HashedContentFeatures,
    best_links,
    hashed_tokens,
)
from gym_crawl.features.hashed_tokens import salted as _salted
from gym_crawl.text.model import TextModel, get_text_model

ENV_ID = getattr(gym_crawl, "ENV_ID", "WikiCrawl-v0")
NEW_SETS = ["content", "link-vector", "combined-content", "hashed", "content-x-topic", "tres-local", "transferable",
            "hashed-transferable"]


def _env(corpus, features, **kw):
    kw.setdefault("max_episode_steps", 60)
    return gym.make(ENV_ID, corpus=corpus, features=features, max_candidates=8, reward="labels", **kw)


def _crawl(env, steps=20, seed=0):
    obs, info = env.reset(seed=seed)
    for _ in range(steps):
        obs, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        if term or trunc:
            break
    return obs, info


def test_registered():
    for name in NEW_SETS:
        assert name in FEATURE_SETS.names()


@pytest.mark.parametrize("name", NEW_SETS)
def test_shapes_and_range(tiny_corpus, name):
    env = _env(tiny_corpus, name)
    obs, _ = _crawl(env)
    fs = env.unwrapped.features
    assert obs["candidates"].shape == (8, fs.dim) == (8, len(fs.names))
    n = int(obs["mask"].sum())
    rows = obs["candidates"][:n]
    assert np.all(np.abs(rows) <= 1.0) and np.all(rows[:, -1] != 0 if not name.startswith("hashed") else True)
    assert np.all(obs["candidates"][n:] == 0)


def test_content_blocks_are_unit_vectors_and_topic_is_constant(tiny_corpus):
    env = _env(tiny_corpus, "content")
    _crawl(env)
    base = env.unwrapped
    F = base.view.frontier_pages().copy()
    X = base.view.features_of(F)
    k = 64
    tm = get_text_model(tiny_corpus)
    links = best_links(base.state, F)
    v = tm.link_vectors(links)
    n = np.linalg.norm(v, axis=1, keepdims=True)
    for blk in range(3):
        norms = np.linalg.norm(X[:, blk * k:(blk + 1) * k], axis=1)
        # unit vectors; a link block is 0 where the link's words have no vector (e.g. the hub link, whose
        # only words are the title "United States", never seen in page text)
        np.testing.assert_allclose(norms[n[:, 0] > 0] if blk == 0 else norms, 1.0, atol=1e-5)
    assert (X[n[:, 0] == 0, :k] == 0).all()
    topic = X[:, 2 * k:3 * k]
    assert np.all(topic == topic[0])  # the topic vector: the same for every candidate
    np.testing.assert_array_equal(X[:, -1], 1.0)
    # the link block is the normalized link-text vector of the best discovering link (by hand)
    v = np.divide(v, n, out=np.zeros_like(v), where=n > 0)
    np.testing.assert_allclose(X[:, :k], v, atol=1e-5)
    # ... and the parent block the normalized page vector of the best parent
    bp = base.state.best_parent[F]
    pv = tm.page_vectors(bp)
    pv /= np.linalg.norm(pv, axis=1, keepdims=True)
    np.testing.assert_allclose(X[:, k:2 * k], pv, atol=1e-5)


def test_best_links_fallback_is_a_link_from_the_best_parent(tiny_corpus):
    env = _env(tiny_corpus, "content")
    _crawl(env, steps=15)
    st = env.unwrapped.state
    F = env.unwrapped.view.frontier_pages().copy()
    links = best_links(st, F)
    src = np.searchsorted(tiny_corpus.link_ptr, links, side="right") - 1
    np.testing.assert_array_equal(tiny_corpus.link_dst[links], F)
    if getattr(st, "best_link", None) is None:
        np.testing.assert_array_equal(src, st.best_parent[F])
    assert np.all(st.status[src] == 2)  # discovered by a fetched page


@pytest.mark.parametrize("name", ["hashed", "content", "hashed-site"])
def test_rows_read_best_link_per_page_not_the_whole_column(tiny_corpus, monkeypatch, name):
    """A few frontier pages' rows look their best links up one page at a time: turning the keyed ``best_link``
    column into a dense array of every page of the web (``np.asarray(state.best_link)``) would cost O(web) a step
    (≈ 5 ms and 80 MB written on a 10^7-page web)."""
    from gym_crawl.crawl.state import PageColumn

    env = _env(tiny_corpus, name)
    _crawl(env, steps=15)
    base = env.unwrapped
    F = base.view.frontier_pages().copy()
    want = base.view.features_of(F)
    whole = []
    orig = PageColumn.__array__

    def spy(self, *a, **k):
        whole.append(self.field.name)
        return orig(self, *a, **k)

    monkeypatch.setattr(PageColumn, "__array__", spy)
    links = best_links(base.state, F)
    got = base.view.features_of(F)
    assert "best_link" not in whole
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(tiny_corpus.link_dst[links], F)


def test_content_dim_mismatch_is_a_clear_error(tiny_corpus):
    env = _env(tiny_corpus, ContentFeatures(dim=32))
    with pytest.raises(ValueError, match="32-dim"):
        env.reset(seed=0)


def test_hashed_columns_by_hand(tiny_corpus):
    """A link's hashed row holds exactly its anchor / context / URL words / n-grams / parent title /
    domain / bias columns, binary and L2-normalized."""
    ht = hashed_tokens(tiny_corpus, 12)
    mask = (1 << 12) - 1
    c = tiny_corpus
    link = int(np.flatnonzero(np.diff(c.context_ptr) > 0)[0])
    src = int(np.searchsorted(c.link_ptr, link, side="right") - 1)
    dst = int(c.link_dst[link])

    def col(word: str, field: str) -> int:
        return int(_salted(np.array([zlib.crc32(word.encode())], np.uint64), FIELDS[field], mask)[0])

    def words(ptr, terms, i):
        return [c.vocab[int(t)] for t in terms[ptr[i]:ptr[i + 1]]]
    want = {col(w, "context") for w in words(c.context_ptr, c.context_terms, link)}
    want |= {col(w, "anchor") for w in words(c.anchor_ptr, c.anchor_terms, link)}
    want |= {col(w, "url") for w in words(c.title_ptr, c.title_terms, dst)}
    want |= {col(w, "parent_title") for w in words(c.title_ptr, c.title_terms, src)}
    want |= {col(c.domains[int(c.page_domain[dst])], "domain"), ht.bias_col}
    if c.page_domain[src] == c.page_domain[dst]:
        want.add(ht.same_domain_col)
    _, cols, vals = ht.rows(np.array([link]))
    got = set(cols.tolist())
    assert want <= got
    ngram_cols = got - want  # the rest are the title's character n-grams
    title = c.titles[dst].lower().replace("_", " ")
    n_grams = {title[i:i + n] for n in (3, 4) for i in range(len(title) - n + 1)}
    assert 0 < len(ngram_cols) <= len(n_grams)
    np.testing.assert_allclose(vals, 1.0 / np.sqrt(len(got)))
    assert abs(float(np.sum(vals ** 2)) - 1.0) < 1e-5


def test_hashed_sparse_accessor_matches_dense_and_is_sparse(tiny_corpus):
    env = _env(tiny_corpus, "hashed")
    _crawl(env, steps=20)
    base = env.unwrapped
    fs = base.features
    F = base.view.frontier_pages().copy()
    S = fs.sparse(base.state, F)
    assert S.shape == (len(F), fs.dim) and S.format == "csr"
    assert S.nnz / len(F) < 200 and fs.dim > 16000  # ~50 non-zeros out of 16k columns
    np.testing.assert_array_equal(S.toarray(), base.view.features_of(F))
    hashed = S[:, : fs.n_hashed]
    np.testing.assert_allclose(np.asarray(hashed.multiply(hashed).sum(axis=1)).ravel(), 1.0, atol=1e-5)
    # the dense tail is han2018-continuous without its bias
    han = gym_crawl.features.Han2018Features(4, discretize=False)
    np.testing.assert_allclose(S[:, fs.n_hashed:].toarray(), han.compute(base.state, F)[:, :-1], atol=1e-6)


def test_hashed_tokens_deterministic_across_builds(tiny_corpus):
    from gym_crawl.features.content import HashedTokens

    a, b = HashedTokens(tiny_corpus, 10), HashedTokens(tiny_corpus, 10)
    for f in ("col_anchor", "col_context", "page_ptr", "page_cols", "ptitle_ptr", "ptitle_cols"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))


def test_interaction_sums_to_the_cosines(tiny_corpus):
    """content-x-topic: the link block sums to sqrt(k) × cos(link text, topic) (= link_rel / ‖·‖ terms)."""
    env = _env(tiny_corpus, "content-x-topic")
    _crawl(env)
    base = env.unwrapped
    F = base.view.frontier_pages().copy()
    X = base.view.features_of(F)
    st = base.state
    np.testing.assert_allclose(X[:, :64].sum(axis=1) / 8.0, st.link_rel[F], atol=1e-4)
    np.testing.assert_allclose(X[:, 64:128].sum(axis=1) / 8.0, st.rel[st.best_parent[F]], atol=1e-4)


def test_tres_local_by_hand(tiny_corpus):
    env = _env(tiny_corpus, "tres-local")
    _crawl(env)
    base = env.unwrapped
    st = base.state
    F = base.view.frontier_pages().copy()
    X = base.view.features_of(F)
    bp = st.best_parent[F]
    np.testing.assert_array_equal(X[:, 0], st.relevant[bp])
    np.testing.assert_allclose(X[:, 5], np.log10(1 + st.n_relpar[F]), atol=1e-6)
    assert X[:, 5].max() > 0


def test_hashed_bad_bits():
    with pytest.raises(ValueError, match="bits"):
        HashedContentFeatures(bits=40)


def test_combined_content_is_not_local():
    assert not FEATURE_SETS.build("combined-content", 4).local  # TRES's domain ratios are global


@pytest.mark.parametrize("name", ["content", "link-vector", "hashed", "content-x-topic", "tres-local", "transferable",
                                  "hashed-transferable"])
def test_rows_are_local(tiny_corpus, name):
    """``local``: a fetch changes only the rows of frontier_changes().updated."""
    env = _env(tiny_corpus, name)
    _, info = _crawl(env, steps=10)
    base = env.unwrapped
    assert base.view.features_local
    before_pages = base.view.frontier_pages().copy()
    before = base.view.features_of(before_pages)
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
    upd = set(base.view.frontier_changes().updated.tolist())
    still = np.array([i for i, p in enumerate(before_pages) if base.view.is_frontier(p) and p not in upd])
    assert len(still) > 5
    np.testing.assert_array_equal(base.view.features_of(before_pages[still]), before[still])


@pytest.mark.parametrize("name", NEW_SETS)
@pytest.mark.parametrize("reducer", ["topk", "full"])
def test_no_leak_of_unfetched_pages(tiny_corpus, name, reducer):
    """Tampering with the text and labels of unfetched pages changes nothing observed (and the
    sparse rows of every frontier page stay the same)."""
    steps = 40
    tm = get_text_model(tiny_corpus)

    def rollout(corpus, text):
        env = _env(corpus, name, text=text, reducer=reducer, max_episode_steps=steps + 5)
        obs, info = env.reset(seed=7)
        rng = np.random.default_rng(7)
        out = [(obs, info)]
        for _ in range(steps):
            obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            out.append((obs, r, term, trunc, info))
        base = env.unwrapped
        F = base.view.frontier_pages().copy()
        out.append(base.view.features_of(F))
        return out, base

    run_a, base = rollout(tiny_corpus, tm)
    unfetched = np.asarray(sorted(set(base.view.frontier_pages().tolist()) - set(base.view.fetched_pages().tolist())))
    assert len(unfetched) > 10
    tampered = tamper_unfetched(tiny_corpus, unfetched)
    run_b, base_b = rollout(tampered, TextModel(tampered, tm.idf, tm.vectors, tm.meta))
    assert data_equivalence(run_a, run_b), f"{name}: an observation depends on an unfetched page's text or labels"
    assert base_b.view.hidden_relevance()[unfetched].all()  # the tampering is real



def _vec_columns(names):
    return [n for n in names if "_x_topic" in n or "_vec" in n]


@pytest.mark.parametrize("name", ["content", "transferable", "hashed-transferable", "hashed-site", "transferable+site"])
def test_named_sets_take_the_text_models_dimension(tiny_corpus, name):
    """A named feature set's word-vector columns follow the env's text model (the general English model has 128
    dims, a corpus' own model 64), so the hashed learners run on either."""
    from gym_crawl.features import get_feature_set

    small, big = (_vec_columns(get_feature_set(name, dim=d).names) for d in (8, 48))
    assert small and len(big) == 6 * len(small)  # k columns per vector block
    tm = get_text_model(tiny_corpus, dim=48)
    env = _env(tiny_corpus, name, text=tm)
    assert env.unwrapped.features.names == get_feature_set(name, dim=48).names
    obs, _ = _crawl(env, steps=3)
    assert obs["candidates"].shape[1] == len(env.unwrapped.features.names)
    assert get_feature_set("han2018", dim=48).names == get_feature_set("han2018").names  # no word vectors: unchanged
