"""The batched vector env (``make_vector_env``) is N single crawls, bit for bit."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence

import gym_crawl  # noqa: F401
from gym_crawl.envs import WikiCrawlVectorEnv, make_vector_env


def _actions(rng, masks, action):
    if action == "slot":
        return np.array([rng.integers(m.shape[0]) for m in masks])  # masked slots included
    return np.array([int(rng.choice(np.flatnonzero(m))) if rng.random() < 0.9 else int(rng.integers(len(m)))
                     for m in masks])


@pytest.mark.parametrize("action", ["slot", "page"])
@pytest.mark.parametrize("reducer", ["topk", "random", "tree"])
def test_same_trajectories_as_sync_vector_env(tiny_corpus, tmp_path, action, reducer):
    kw = dict(corpus=tiny_corpus, max_candidates=8, reducer=reducer, action=action, max_episode_steps=6)
    fast = make_vector_env("WikiCrawl-v1", num_envs=3, **kw)
    ref = gym.make_vec("WikiCrawl-v1", num_envs=3, vectorization_mode="sync", **kw)
    assert isinstance(fast.unwrapped, WikiCrawlVectorEnv)
    assert fast.observation_space == ref.observation_space and fast.action_space == ref.action_space
    a = fast.reset(seed=11)
    b = ref.reset(seed=11)
    assert data_equivalence(a, b, exact=True)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(20):
        masks = fast.unwrapped.action_masks()
        np.testing.assert_array_equal(masks, np.stack(ref.call("action_masks")))
        acts = _actions(rng, masks, action)
        a = fast.step(acts)
        b = ref.step(acts)
        assert data_equivalence(a, b, exact=True), "vector entry point and SyncVectorEnv disagree"
        ended += int(np.sum(a[2] | a[3]))
    assert ended >= 3  # crossed the autoreset of every sub-env


def test_shares_one_corpus_and_text_model(tiny_corpus):
    v = make_vector_env("WikiCrawl-v1", num_envs=4, corpus=tiny_corpus)
    envs = v.unwrapped.envs
    assert all(e.corpus is envs[0].corpus and e.text is envs[0].text for e in envs)


def test_bad_arguments(tiny_corpus):
    with pytest.raises(ValueError, match="num_envs"):
        WikiCrawlVectorEnv(num_envs=0, corpus=tiny_corpus)
    v = make_vector_env("WikiCrawl-v1", num_envs=2, corpus=tiny_corpus)
    v.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        v.step(np.zeros(3, int))
    with pytest.raises(ValueError, match="2 seeds"):
        v.reset(seed=[1, 2, 3])


def test_copy_false_returns_the_envs_own_observation_arrays(tiny_corpus):
    """``copy`` as ``SyncVectorEnv``'s: the default returns a new copy every step; ``copy=False`` (through
    ``gym.make_vec``'s keyword arguments) the env's own arrays, overwritten in place by the next step, with the same
    values; rewards and flags are new arrays either way."""
    kw = dict(corpus=tiny_corpus, max_candidates=8, max_episode_steps=5)
    own = gym.make_vec("WikiCrawl-v3", num_envs=3, vectorization_mode="vector_entry_point", copy=False, **kw)
    cop = gym.make_vec("WikiCrawl-v3", num_envs=3, vectorization_mode="vector_entry_point", **kw)
    assert own.unwrapped.copy is False and cop.unwrapped.copy is True
    o1, _ = own.reset(seed=3)
    c1, _ = cop.reset(seed=3)
    assert data_equivalence(o1, c1, exact=True)
    rng = np.random.default_rng(3)
    r1 = np.zeros(3)
    for _ in range(12):  # crosses autoresets (5-step episodes)
        before = {k: v.copy() for k, v in o1.items()}
        acts = rng.integers(0, 8, 3)
        o2, r2, t2, u2, i2 = own.step(acts)
        c2, rc, tc, uc, ic = cop.step(acts)
        assert data_equivalence((o2, r2, t2, u2, i2), (c2, rc, tc, uc, ic), exact=True)
        assert all(o2[k] is o1[k] for k in o1)  # the same arrays, now holding this step's values
        assert not any(np.shares_memory(c2[k], c1[k]) for k in c1)
        assert data_equivalence(c1, before, exact=True)  # the copy returned by the last step is left alone
        assert not np.shares_memory(r2, r1)
        o1, c1, r1 = o2, c2, r2
    with pytest.raises(ValueError, match="copy must be True or False"):
        WikiCrawlVectorEnv(num_envs=2, copy="no", corpus=tiny_corpus)


def _assert_same_run(kw, steps, seed=5, n=3, action="slot"):
    fast = make_vector_env("WikiCrawl-v1", num_envs=n, **kw)
    ref = gym.make_vec("WikiCrawl-v1", num_envs=n, vectorization_mode="sync", **kw)
    assert data_equivalence(fast.reset(seed=seed), ref.reset(seed=seed), exact=True)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        masks = fast.unwrapped.action_masks()
        acts = _actions(rng, masks, action)
        assert data_equivalence(fast.step(acts), ref.step(acts), exact=True)
    # the sub-envs' views agree after compiled steps
    for x, y in zip(fast.call("view"), ref.call("view")):
        assert all(np.array_equal(a, b) for a, b in zip(x.frontier_changes(), y.frontier_changes()))
        assert x.steps == y.steps
    return fast


@pytest.mark.parametrize("features", ["combined", "han2018", "tres", "han2018-continuous"])
def test_compiled_step_long_run(tiny_corpus, features):
    """The compiled batched step (and its row cache) over full episodes with K = 16 and a domain cap."""
    kw = dict(corpus=tiny_corpus, max_candidates=16, features=features, domain_cap=12, max_episode_steps=40)
    fast = _assert_same_run(kw, 90)
    assert fast.unwrapped._uniform  # the compiled path ran


def test_compiled_step_grows_the_stacked_crawl_state(tiny_corpus, monkeypatch):
    """Crawls that start with 16 slots outgrow them inside the compiled step and in Python resets: the stack
    doubles, every page map is rebuilt, and the run is still SyncVectorEnv's bit for bit."""
    import gym_crawl.envs.vector as V

    monkeypatch.setattr(V, "MIN_SLOTS", 16)
    kw = dict(corpus=tiny_corpus, max_candidates=16, domain_cap=12, max_episode_steps=40)
    fast = _assert_same_run(kw, 90)
    u = fast.unwrapped
    assert u._uniform and 16 < u.envs[0].state.slot_capacity < 1024
    # each crawl's columns are its row of the stack (views: writes go to the stack)
    assert all(np.shares_memory(e.state.arrays["slot_page"], u._stack["slot_page"][i]) and
               e.state.arrays["slot_page"].ctypes.data == u._stack["slot_page"][i].ctypes.data
               for i, e in enumerate(u.envs))


def test_compiled_step_scores_pages_lazily_in_one_batch(monkeypatch):
    """On a web too large to score at reset, the compiled step fills the score tables and reward cache of the
    pages it is about to fetch in one vectorized call: the same run as SyncVectorEnv's page-by-page scoring."""
    from conftest import make_tiny_corpus

    import gym_crawl.crawl.state as S

    monkeypatch.setattr(S, "EAGER_SCORING_LINKS", 0)
    corpus = make_tiny_corpus(seed=11)  # its own per-topic tables (not the shared fixture's, filled by other tests)
    kw = dict(corpus=corpus, max_candidates=16, max_episode_steps=30)
    fast = _assert_same_run(kw, 70)
    st = fast.unwrapped.envs[0].state
    assert fast.unwrapped._uniform and not st.page_scores.complete
    pt = st.page_scores
    assert pt.keyed  # rows for the pages scored, found through the table's page map
    done = pt.row_page[:pt.n_rows]
    assert 0 < len(done) < corpus.n_pages and np.array_equal(pt.rows(done), np.arange(len(done)))
    for p in done[:40].tolist():  # batch-filled rows are the rows one page at a time gives
        one = st.scorer.score_pages(np.array([p]))
        r = pt.row(p)
        assert (one.rel[0], one.tfidf[0]) == (pt.rel[r], pt.tfidf[r]) and np.array_equal(one.cat[0], pt.cat[r])


def test_autoresets_run_in_the_compiled_step(tiny_corpus, monkeypatch):
    """Crawls that end reset inside the compiled step (no sub-env resets in Python after the first reset), with
    SyncVectorEnv's trajectories bit for bit, the sub-envs' own records included."""
    from gym_crawl.envs.wiki_crawl import WikiCrawlEnv

    calls = []
    orig = WikiCrawlEnv.reset

    def counted(self, *, seed=None, options=None):
        calls.append(self)
        return orig(self, seed=seed, options=options)

    monkeypatch.setattr(WikiCrawlEnv, "reset", counted)
    kw = dict(corpus=tiny_corpus, max_candidates=16, domain_cap=12, max_episode_steps=7)
    fast = make_vector_env("WikiCrawl-v1", num_envs=3, **kw)
    ref = gym.make_vec("WikiCrawl-v1", num_envs=3, vectorization_mode="sync", **kw)
    assert data_equivalence(fast.reset(seed=2), ref.reset(seed=2), exact=True)
    mine = set(map(id, fast.unwrapped.envs))
    rng = np.random.default_rng(2)
    ended = 0
    for _ in range(40):
        acts = _actions(rng, fast.unwrapped.action_masks(), "slot")
        a = fast.step(acts)
        assert data_equivalence(a, ref.step(acts), exact=True)
        ended += int(np.sum(a[2] | a[3]))
        for x, y in zip(fast.call("view"), ref.call("view")):
            assert all(np.array_equal(p, q) for p, q in zip(x.frontier_changes(), y.frontier_changes()))
            assert x.steps == y.steps
    assert ended >= 9 and fast.unwrapped._kreset
    by_fast = sum(id(e) in mine for e in calls)
    assert by_fast == 3  # its reset() only: every autoreset ran in the compiled step
    assert len(calls) - by_fast >= ended  # the sync env: its reset() and every autoreset but the pending ones


@pytest.mark.parametrize("action", ["slot", "page"])
def test_compiled_step_state_observation_and_page_mode(tiny_corpus, action):
    kw = dict(corpus=tiny_corpus, max_candidates=8, action=action, max_episode_steps=25,
              observation="state" if action == "page" else "candidates")
    fast = _assert_same_run(kw, 60, action=action)
    assert fast.unwrapped._uniform


def test_mixed_topics_fall_back_to_python_steps(tiny_corpus):
    """After reset(options={"topic": ...}) the autoresets return to the default topic: while the sub-envs'
    topics differ (episodes that end at different steps: a domain cap of 1 empties frontiers early) they
    step in Python; the compiled path resumes once they agree again. Same results either way."""
    kw = dict(corpus=tiny_corpus, max_candidates=8, max_episode_steps=30, domain_cap=1)
    fast = make_vector_env("WikiCrawl-v1", num_envs=2, **kw)
    ref = gym.make_vec("WikiCrawl-v1", num_envs=2, vectorization_mode="sync", **kw)
    opts = {"topic": "cancer"}
    assert data_equivalence(fast.reset(seed=3, options=opts), ref.reset(seed=3, options=opts), exact=True)
    rng = np.random.default_rng(1)
    modes = []
    for _ in range(40):
        acts = _actions(rng, fast.unwrapped.action_masks(), "slot")
        modes.append(fast.unwrapped._uniform)
        assert data_equivalence(fast.step(acts), ref.step(acts), exact=True)
    assert modes[0] and not all(modes) and modes[-1]


def test_bad_action_values(tiny_corpus):
    v = make_vector_env("WikiCrawl-v1", num_envs=2, corpus=tiny_corpus,
                     max_candidates=8)
    v.reset(seed=0)
    with pytest.raises(ValueError, match=r"sub-env 1 .*Discrete\(8\)"):
        v.step(np.array([0, 8]))
    with pytest.raises(ValueError, match="outside the action space"):
        v.step(np.array([0.5, 1.0]))


def test_a_compiled_autoreset_that_fails_raises_as_sync_vector_env():
    """An autoreset whose seeds leave the frontier empty (the env's own seeds, after a first episode from other
    seeds of the same topic) is refused with the single env's error, as SyncVectorEnv refuses it."""
    from conftest import VOCAB

    from gym_crawl.corpus import CorpusBuilder

    rng = np.random.default_rng(0)
    b = CorpusBuilder(name="dead-end-web")
    n = 80
    for i in range(n):
        k = ("geo", "gen")[i % 2]
        words = list(rng.choice(VOCAB[k], 30)) + list(rng.choice(VOCAB["gen"], 20))
        b.add_page("Geology" if i == 0 else f"{k} {i}", " ".join(words), domain=f"{k}-{i % 3}.org")
    b.add_page("Dead end", " ".join(rng.choice(VOCAB["geo"], 30)), domain="geo-0.org")  # no out-links
    for i in range(n):
        for j in rng.choice(n, 6, replace=False).tolist():
            if j != i:
                b.add_link(i, j, context=" ".join(rng.choice(VOCAB["geo"], 4)))
        b.add_link(i, n)
    corpus = b.build()
    corpus.meta["topics"] = {"geology": {"seeds": ["Geology"], "words": ["geology"], "categories": ["earth"]}}
    kw = dict(corpus=corpus, topic="geology", seeds=["Dead end"], max_candidates=8, max_episode_steps=3)
    fast = make_vector_env("WikiCrawl-v1", num_envs=2, **kw)
    ref = gym.make_vec("WikiCrawl-v1", num_envs=2, vectorization_mode="sync", **kw)
    opts = {"seeds": ["Geology"]}
    assert data_equivalence(fast.reset(seed=0, options=opts), ref.reset(seed=0, options=opts), exact=True)
    assert fast.unwrapped._kreset  # same topic: the autoresets would run compiled
    slot0 = np.zeros(2, np.int64)
    for _ in range(3):
        assert data_equivalence(fast.step(slot0), ref.step(slot0), exact=True)
    for env in (fast, ref):
        with pytest.raises(ValueError, match=r"seed pages \['Dead end'\] have no out-links"):
            env.step(slot0)


def test_compiled_autoresets_of_some_crawls(tiny_corpus, monkeypatch):
    """Crawls whose episodes end at different steps (a domain cap of 1 empties frontiers early) are reset in the
    compiled step a few at a time: their rows of the stacked columns cleared, the others untouched."""
    import gym_crawl.envs.vector as V

    sizes = []
    orig = V.WikiCrawlVectorEnv._clear_crawls

    def recorded(self, rows):
        sizes.append(len(rows))
        return orig(self, rows)

    monkeypatch.setattr(V.WikiCrawlVectorEnv, "_clear_crawls", recorded)
    kw = dict(corpus=tiny_corpus, max_candidates=8, max_episode_steps=30, domain_cap=1)
    fast = make_vector_env("WikiCrawl-v1", num_envs=4, **kw)
    ref = gym.make_vec("WikiCrawl-v1", num_envs=4, vectorization_mode="sync", **kw)
    assert data_equivalence(fast.reset(seed=3), ref.reset(seed=3), exact=True)
    rng = np.random.default_rng(1)
    for _ in range(120):
        acts = rng.integers(8, size=4)
        assert data_equivalence(fast.step(acts), ref.step(acts), exact=True)
    assert any(0 < s < 4 for s in sizes)


def test_every_crawls_slots_past_its_counts_hold_the_reset_values(tiny_corpus):
    """The autoreset clears each crawl only over the slots it used (its own page-slot count for the page columns,
    its domain-slot count for the domain columns): what it relies on — every slot past a crawl's counts holds its
    column's reset value, the state a newly claimed slot must start from — holds at every step, with crawls ending
    at different steps (a domain cap of 1 empties frontiers early) and their counts apart."""
    from gym_crawl.crawl import kernels as KN
    from gym_crawl.crawl.fields import FIELDS

    env = make_vector_env("WikiCrawl-v1", num_envs=4, corpus=tiny_corpus, max_candidates=8, max_episode_steps=30,
                          domain_cap=1)
    u = env.unwrapped
    env.reset(seed=3)
    rng = np.random.default_rng(1)
    apart = resets = 0
    for _ in range(150):
        env.step(rng.integers(8, size=4))
        ns, nd = u._ctr[:, KN.C_N_SLOTS], u._ctr[:, KN.C_N_DSLOTS]
        apart += ns.min() < ns.max()
        resets += int(u._autoreset.sum())
        for i in range(4):
            for f in FIELDS:
                past = u._stack[f.name][i, nd[i] if f.store == "domain" else ns[i]:]
                assert np.all(past == f.reset), (f.name, i, int(ns[i]), int(nd[i]))
    assert apart and resets >= 4
