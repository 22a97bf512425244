"""Per-domain counters sized by the crawl: a crawl keeps ``dom_fetched``, ``dom_relevant``, ``dom_eval_relevant``,
``dom_head`` and ``park_head`` by *domain slot* (one per domain it counted or chained a page of), read by domain id.
On random crawls — with and without a per-domain cap, single and batched — the counters read by domain id are the
counts a column as long as the web's domain list held (recomputed here from the fetched pages), untouched domains read
their reset values, and the crawl's arrays do not grow with the web's domain list."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from conftest import make_tiny_corpus

import gym_crawl  # noqa: F401
from gym_crawl.crawl.fields import MIN_SLOTS, allocate, crawl_bytes


def _expected(state, corpus):
    """The per-domain counts of a crawl recomputed from its fetched pages (what the dense columns held)."""
    pages = state.fetched_pages()
    D = corpus.n_domain_slots
    dom = np.asarray(corpus.page_domain)[pages]
    rel = np.asarray(state.relevant)[pages]
    ev = np.asarray(state.scorer.labels_of(pages)) if state.eval_label else rel
    return (np.bincount(dom, minlength=D), np.bincount(dom[rel], minlength=D), np.bincount(dom[ev], minlength=D))


def _check(state, corpus):
    fetched, relevant, eval_rel = _expected(state, corpus)
    assert np.array_equal(np.asarray(state.dom_fetched), fetched)
    assert np.array_equal(np.asarray(state.dom_relevant), relevant)
    assert np.array_equal(np.asarray(state.dom_eval_relevant), eval_rel)
    assert state.relevant_domains == int((eval_rel > 0).sum())
    for d in range(corpus.n_domain_slots):  # one by one, through the domain map
        assert state.dom_fetched[d] == fetched[d]
    assert state.n_domain_slots_used <= state.n_slots
    chained = []  # the domain chains (kept while a cap is active) hold exactly the frontier pages
    if state.domain_cap is not None:
        for d in range(corpus.n_domain_slots):
            s = state.dom_head[d]
            while s >= 0:
                chained.append(int(state.slot_page[s]))
                s = state.arrays["dom_next"][s]
        assert sorted(chained) == sorted(state.frontier.tolist())
    assert np.all(np.asarray(state.park_head) == -1)


@pytest.fixture(scope="module")
def many_domains():
    """The tiny web with 300 domains (the tiny web has 12)."""
    return make_tiny_corpus(600, domains_per_kind=150)


@pytest.mark.parametrize("cap", [None, 2, "6-2"])
@pytest.mark.parametrize("web", ["tiny", "many-domains"])
def test_counters_by_domain_slot_are_the_dense_counts_on_random_crawls(tiny_corpus, many_domains, cap, web):
    corpus = tiny_corpus if web == "tiny" else many_domains
    env = gym.make("WikiCrawl-v1", corpus=corpus, topic="cancer", domain_cap=cap, max_episode_steps=120)
    rng = np.random.default_rng(7)
    for seed in range(3):
        _, info = env.reset(seed=seed)
        st = env.unwrapped.state
        done = False
        while not done:
            a = int(rng.choice(np.flatnonzero(info["action_mask"])))
            _, _, te, tr, info = env.step(a)
            done = te or tr
            if rng.random() < 0.2:
                _check(st, corpus)
        _check(st, corpus)
        if cap is None:  # without chains a domain gets a slot when a page of it is fetched, and only then
            assert st.n_domain_slots_used == int((np.asarray(st.dom_fetched) > 0).sum())


@pytest.mark.parametrize("features", ["combined", "tres"])
def test_batched_crawls_count_their_own_domains(many_domains, features):
    v = gym.make_vec("WikiCrawl-v3", num_envs=4, vectorization_mode="vector_entry_point", corpus=many_domains,
                     topic="cancer", features=features)
    obs, _ = v.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(150):  # past the 100-step episodes: the autoresets clear the domain slots
        obs, *_ = v.step((rng.random(4) * obs["mask"].sum(1)).astype(np.int64))
        for e in v.unwrapped.envs:
            _check(e.state, many_domains)


def test_untouched_domains_read_their_reset_values_and_cannot_be_written(tiny_corpus):
    env = gym.make("WikiCrawl-v1", corpus=tiny_corpus, topic="cancer", domain_cap=3)
    env.reset(seed=0)
    st = env.unwrapped.state
    untouched = [d for d in range(tiny_corpus.n_domain_slots) if st.dom_fetched[d] == 0]
    assert untouched
    d = untouched[0]
    assert st.dom_fetched[d] == 0 and st.dom_relevant[d] == 0 and st.park_head[d] == -1
    if st.dom_head[d] < 0:  # a domain with no chained page has no domain slot: nothing to write to
        with pytest.raises(ValueError, match="domain"):
            st.dom_fetched[np.array([d])] = 1


def test_crawl_arrays_do_not_follow_the_web_domain_list(tiny_corpus, many_domains):
    few, many = tiny_corpus, many_domains
    assert many.n_domain_slots >= 20 * few.n_domain_slots
    b = crawl_bytes(MIN_SLOTS, 4)
    assert b == sum(a.nbytes for a in allocate(MIN_SLOTS, 4).values())
    sizes = []
    for c in (few, many):
        env = gym.make("WikiCrawl-v1", corpus=c, topic="cancer")
        env.reset(seed=0)
        sizes.append(sum(a.nbytes for a in env.unwrapped.state.arrays.values()))
    assert sizes[0] == sizes[1] == b
