"""Tree-Frontier (TRES §2.6): invariants, split criterion, sampling, env integration, determinism."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gym_crawl  # noqa: F401
from gym_crawl.crawl.state import BLOCKED, FRONTIER, VISITED
from gym_crawl.reducers import get_reducer
from gym_crawl.reducers.tree import TreeFrontier, best_split


def weighted_var(x: np.ndarray, r: np.ndarray, thr: float) -> float:
    left = x < thr
    n = len(r)
    out = 0.0
    for part in (r[left], r[~left]):
        if len(part):
            out += len(part) / n * float(np.var(part))
    return out


def brute_best(X: np.ndarray, r: np.ndarray, min_child: int) -> float:
    """Largest variance reduction over every feature and every midpoint threshold (reference)."""
    best = -np.inf
    for f in range(X.shape[1]):
        v = np.unique(X[:, f])
        for a, b in zip(v[:-1], v[1:]):
            thr = (float(a) + float(b)) / 2
            nl = int((X[:, f] < thr).sum())
            if nl < min_child or len(r) - nl < min_child:
                continue
            best = max(best, float(np.var(r)) - weighted_var(X[:, f], r, thr))
    return best


# ------------------------------------------------------------------ split criterion
@settings(max_examples=120, deadline=None)
@given(n=st.integers(2, 40), d=st.integers(1, 4), levels=st.integers(1, 5), min_child=st.integers(1, 4),
       seed=st.integers(0, 10_000))
def test_best_split_is_optimal_and_never_increases_weighted_variance(n, d, levels, min_child, seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, (n, d)).astype(np.float32)
    r = rng.integers(0, 2, n).astype(np.float64) * rng.choice([1.0, 30.0])
    res = best_split(X, r, min_child)
    ref = brute_best(X, r, min_child)
    if res is None:
        assert ref == -np.inf
        return
    gain, f, thr = res
    wv = weighted_var(X[:, f], r, thr)
    assert wv <= np.var(r) + 1e-9                          # a split never increases weighted variance
    assert gain == pytest.approx(np.var(r) - wv, abs=1e-9)  # Eq. 4 as reported
    assert gain == pytest.approx(ref, abs=1e-9)              # and it is the best admissible split
    nl = int((X[:, f] < thr).sum())
    assert min_child <= nl <= n - min_child


def test_best_split_ties_pick_lowest_feature_then_threshold():
    X = np.array([[0, 0], [0, 0], [1, 1], [1, 1]], np.float32)
    r = np.array([0, 0, 1, 1.0])
    gain, f, thr = best_split(X, r)
    assert (f, thr) == (0, 0.5) and gain == pytest.approx(0.25)
    assert best_split(np.zeros((5, 3), np.float32), np.arange(5.0)) is None  # constant features: no split


# ------------------------------------------------------------------ standalone tree
ops = st.lists(st.one_of(
    st.tuples(st.just("insert"), st.integers(1, 30), st.integers(0, 10_000)),
    st.tuples(st.just("exp"), st.integers(0, 1), st.integers(0, 10_000)),
    st.tuples(st.just("remove"), st.floats(0, 1), st.integers(0, 10_000)),
), min_size=1, max_size=120)


def _row(rng: np.random.Generator, d: int) -> np.ndarray:
    return rng.integers(0, 4, d).astype(np.float32) / 3


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seq=ops, min_split=st.integers(2, 6), frac=st.sampled_from([0.0, 0.1, 0.3]),
       max_leaves=st.sampled_from([None, 3, 8]))
def test_standalone_invariants_under_random_operations(seq, min_split, frac, max_leaves):
    d, n_pages = 3, 400
    tf = TreeFrontier(min_samples_split=min_split, min_child_fraction=frac, min_samples_leaf=1,
                      max_leaves=max_leaves, recheck_growth=0.0)
    tf.reset_storage(n_pages, d)
    inside: set[int] = set()
    next_page = 0
    for op, a, s in seq:
        rng = np.random.default_rng(s)
        if op == "insert":
            k = min(a, n_pages - next_page)
            pages = np.arange(next_page, next_page + k)
            next_page += k
            tf.insert(pages, np.stack([_row(rng, d) for _ in range(k)]) if k else np.zeros((0, d), np.float32))
            inside.update(pages.tolist())
        elif op == "exp":
            nleaves = tf.n_leaves
            tf.add_experience(_row(rng, d), float(a))
            assert tf.n_leaves in (nleaves, nleaves + 1)  # at most one split per experience sample
        elif inside:
            cur = np.array(sorted(inside))
            gone = cur[rng.random(len(cur)) < a]
            assert tf.remove(gone) == len(gone)
            inside.difference_update(gone.tolist())
        tf.check_invariants()
        assert set(tf.frontier_pages().tolist()) == inside
        if max_leaves is not None:
            assert tf.n_leaves <= max_leaves
    # leaves partition the space: every point satisfies the rules of exactly one leaf
    pts = np.random.default_rng(0).random((50, d)).astype(np.float32)
    leaves = tf.leaves()
    for p in pts:
        hits = [lf for lf in leaves.tolist()
                if all((p[f] < t) if op == "<" else (p[f] >= t) for f, op, t in tf.rules(lf))]
        assert hits == [tf.route_one(p)]
    # one representative per non-empty leaf, each drawn from its own leaf
    rep = tf.propose(None, np.random.default_rng(1))
    assert len(rep) == tf.n_nonempty_leaves == len(set(tf.last_leaves.tolist()))
    assert np.array_equal(tf.leaf_of(rep), tf.last_leaves)


def test_split_partitions_frontier_and_experience_by_the_same_rule():
    tf = TreeFrontier(min_samples_split=4, min_samples_leaf=1)
    tf.reset_storage(100, 2)
    X = np.array([[0.1, 0.5], [0.9, 0.5], [0.2, 0.1], [0.8, 0.9]], np.float32)
    tf.insert(np.arange(4), X)
    for x, r in (([0.0, 0.3], 0.0), ([0.1, 0.7], 0.0), ([0.9, 0.2], 1.0), ([0.95, 0.6], 1.0)):
        tf.add_experience(np.array(x, np.float32), r)
    assert tf.n_leaves == 2 and tf.n_splits == 1
    assert tf.rules(tf.leaf_of([0])[0]) == [(0, "<", pytest.approx(0.5))]
    assert tf.leaf_of([0])[0] == tf.leaf_of([2])[0] != tf.leaf_of([1])[0] == tf.leaf_of([3])[0]
    fr, ex = tf.leaf_sizes(tf.leaves())
    assert fr.tolist() == [2, 2] and ex.tolist() == [2, 2]
    assert tf.leaf_means(tf.leaves()).tolist() == pytest.approx([(0 + 2 * .5) / 4, (2 + 2 * .5) / 4])
    tf.check_invariants()


def test_no_split_without_variance_or_below_min_samples():
    tf = TreeFrontier(min_samples_split=6, min_samples_leaf=1)
    tf.reset_storage(10, 1)
    for i in range(5):
        tf.add_experience(np.array([i / 5], np.float32), float(i % 2))
    assert tf.n_leaves == 1                       # 5 < min_samples_split
    tf2 = TreeFrontier(min_samples_split=2, min_samples_leaf=1)
    tf2.reset_storage(10, 1)
    for i in range(20):
        tf2.add_experience(np.array([i / 20], np.float32), 1.0)
    assert tf2.n_leaves == 1                      # constant rewards: nothing to reduce


def test_min_child_fraction_and_max_depth_are_respected():
    rng = np.random.default_rng(0)
    tf = TreeFrontier(min_samples_split=2, min_child_fraction=0.25, min_samples_leaf=1, max_depth=3,
                      recheck_growth=0.0)
    tf.reset_storage(10, 2)
    for _ in range(300):
        x = rng.random(2).astype(np.float32)
        tf.add_experience(x, float(x[0] > 0.93))
    assert tf.max_leaf_depth <= 3 and tf.n_leaves <= 8
    # a 0.93 cut would leave ~7 % on one side: with min_child_fraction=0.25 no child is that small
    fr, ex = tf.leaf_sizes(tf.leaves())
    assert ex.min() >= 1
    tf.check_invariants()


def test_overflow_choices_and_uniform_draw_within_a_leaf():
    tf = TreeFrontier(min_samples_split=2, min_samples_leaf=1, overflow="mean", recheck_growth=0.0)
    tf.reset_storage(1000, 1)
    for i in range(8):  # four reward levels → leaves of distinct means
        tf.add_experience(np.array([i / 8], np.float32), float(i // 2))
    tf.insert(np.arange(800), (np.arange(800) % 8 / 8).astype(np.float32)[:, None])
    leaves = tf.leaves()
    means = tf.leaf_means(leaves)
    got = tf.propose(2, np.random.default_rng(0))
    top = set(leaves[np.argsort(-means)[:2]].tolist())
    assert len(got) == 2 and set(tf.leaf_of(got).tolist()) == top
    tf.overflow = "uniform"
    seen = set()
    for s in range(40):
        tf.propose(2, np.random.default_rng(s))
        seen.update(tf.last_leaves.tolist())
    assert seen == set(leaves.tolist())
    # within a leaf the representative is uniform: chi-square over the pages of one leaf
    lf = int(tf.leaf_of([0])[0])
    members = np.flatnonzero(tf.leaf_of(np.arange(800)) == lf)
    counts = dict.fromkeys(members.tolist(), 0)
    rng = np.random.default_rng(3)
    for _ in range(4000):
        rep = tf.propose(None, rng)
        counts[int(rep[list(tf.last_leaves).index(lf)])] += 1
    c = np.array(list(counts.values()))
    chi2 = float(((c - c.mean()) ** 2 / c.mean()).sum())
    df = len(c) - 1
    assert len(c) >= 100 and chi2 < df + 5 * np.sqrt(2 * df), (chi2, df)  # ≈ 5 sigma


def test_buffer_memory_stays_proportional_to_live_members():
    tf = TreeFrontier()
    tf.reset_storage(50_000, 1)
    rng = np.random.default_rng(0)
    live = np.zeros(0, np.int64)
    nxt = 0
    for _ in range(200):
        new = np.arange(nxt, nxt + 100)
        nxt += 100
        tf.insert(new, rng.random((100, 1)).astype(np.float32))
        live = np.concatenate([live, new])
        drop = live[rng.random(len(live)) < 0.5]
        tf.remove(drop)
        live = np.setdiff1d(live, drop)
        tf.add_experience(rng.random(1).astype(np.float32), float(rng.random() < 0.3))
    tf.check_invariants()
    assert tf.n_frontier == len(live)
    assert len(tf._slot_page) <= 4 * max(len(live), 64)         # slot pool recycles removed rows
    assert tf._fr.end <= 8 * max(int(tf._fr.count.sum()), 256) + 4096  # garbage is compacted


# ------------------------------------------------------------------ in the env
def _env(corpus, **kw):
    steps = kw.pop("max_steps", 150)  # the episode budget: Gymnasium's TimeLimit truncates after it
    return gym.make("WikiCrawl-v0", corpus=corpus, reducer=kw.pop("reducer", TreeFrontier(min_samples_split=4)),
                    features="tres", reward="binary", max_candidates=kw.pop("k", 8), max_episode_steps=steps, **kw)


def _crawl(env, seed: int, check: bool = True) -> list[int]:
    obs, info = env.reset(seed=seed)
    tf: TreeFrontier = env.unwrapped.reducer
    st_ = env.unwrapped.state
    rng = np.random.default_rng(seed)
    fetched = []
    done = False
    while not done:
        a = int(rng.choice(np.flatnonzero(obs["mask"])))
        obs, r, term, trunc, info = env.step(a)
        fetched.append(info["fetched_page"])
        done = term or trunc
        if check:
            tf.check_invariants()                                   # tree == frontier, one leaf each
            assert tf.leaf_of([info["fetched_page"]])[0] == -1      # fetched links leave the tree
            assert st_.status[info["fetched_page"]] == VISITED
            ids = info["candidate_ids"][info["action_mask"]]
            assert len(set(tf.leaf_of(ids).tolist())) == len(ids)  # one candidate per leaf
            assert np.all(st_.status[ids] == FRONTIER)
    return fetched


def test_env_tree_tracks_the_frontier_exactly(tiny_corpus):
    env = _env(tiny_corpus)
    _crawl(env, seed=1)
    assert env.unwrapped.reducer.n_leaves > 3
    assert env.unwrapped.reducer.n_experience == 150


def test_env_domain_cap_removes_capped_pages_from_the_tree(tiny_corpus):
    env = _env(tiny_corpus, domain_cap=3, max_steps=40)
    _crawl(env, seed=2)
    st_ = env.unwrapped.state
    blocked = np.flatnonzero(st_.status == BLOCKED)
    assert len(blocked) > 0
    assert np.all(env.unwrapped.reducer.leaf_of(blocked) == -1)


def test_env_adaptive_cap_and_unreported_departures_keep_counters_exact(tiny_corpus):
    env = _env(tiny_corpus, domain_cap="6-2", max_steps=60)
    _crawl(env, seed=3)
    tf = env.unwrapped.reducer
    # a departure the env did not report is purged as soon as the counters disagree
    env.reset(seed=4)
    st_ = env.unwrapped.state
    victim = int(st_.frontier[0])
    st_._frontier_remove(victim)
    st_.status[victim] = BLOCKED
    tf.propose(None, np.random.default_rng(0))
    tf.check_invariants()
    assert tf.leaf_of([victim])[0] == -1


def test_same_seed_same_tree_and_trajectory(tiny_corpus):
    runs = []
    for _ in range(2):
        env = _env(tiny_corpus, max_steps=80)
        fetched = _crawl(env, seed=5, check=False)
        tf = env.unwrapped.reducer
        nn = tf.n_nodes
        runs.append((fetched, tf._feat[:nn].tolist(), tf._thr[:nn].tolist(), tf.leaf_of(np.arange(600)).tolist()))
    assert runs[0] == runs[1]
    env = _env(tiny_corpus, max_steps=80)
    assert _crawl(env, seed=6, check=False) != runs[0][0]


def test_registered_and_reusable_across_episodes(tiny_corpus):
    assert isinstance(get_reducer("tree"), TreeFrontier)
    env = _env(tiny_corpus, reducer="tree", max_steps=30)
    for s in range(2):
        _crawl(env, seed=s)
        assert env.unwrapped.reducer.n_experience == 30


def test_validation_errors_name_the_parameter():
    with pytest.raises(ValueError, match="min_samples_split"):
        TreeFrontier(min_samples_split=1)
    with pytest.raises(ValueError, match="overflow"):
        TreeFrontier(overflow="best")
    tf = TreeFrontier()
    tf.reset_storage(10, 2)
    with pytest.raises(ValueError, match="shape"):
        tf.insert(np.arange(2), np.zeros((2, 3), np.float32))
    tf.insert(np.arange(2), np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match="already"):
        tf.insert(np.arange(1), np.zeros((1, 2), np.float32))


def test_tree_with_tres_clf_never_observes_unfetched_content(tiny_corpus):
    """Fairness of the whole TRES pipeline (tree reducer + classifier feature): two corpora that differ
    only in the text and labels of discovered-but-unfetched pages give identical observations. The
    offline classifier and the text model are pre-trained and held fixed (like TRES's BiLSTM)."""
    import dataclasses

    from gym_crawl.features.tres_clf import TresClfFeatures
    from gym_crawl.relevance.classifier import train_topic_classifier
    from gym_crawl.relevance.topic import resolve_topic
    from gym_crawl.text.model import TextModel, get_text_model

    tm = get_text_model(tiny_corpus)
    clf = train_topic_classifier(tiny_corpus, resolve_topic("geology", tiny_corpus), tm, kinds=("vec-lr",),
                                 grid_C=(1.0,), folds=2).classifier

    def run(corpus, text, actions=None):
        env = gym.make("WikiCrawl-v0", corpus=corpus, text=text, topic="geology", reward="binary",
                       features=TresClfFeatures(classifiers=clf), reducer=TreeFrontier(min_samples_split=4),
                       max_candidates=32, max_episode_steps=70)
        obs, info = env.reset(seed=3)
        rng = np.random.default_rng(0)
        out, acts = [(obs, 0.0, info)], []
        for i in range(60):
            a = actions[i] if actions else int(rng.choice(np.flatnonzero(info["action_mask"])))
            acts.append(a)
            obs, r, *_, info = env.step(a)
            out.append((obs, r, info))
        return out, acts, env.unwrapped

    rec_a, actions, base = run(tiny_corpus, tm)
    st_ = base.state
    hidden = np.asarray(sorted(set(st_.frontier.tolist())))
    assert len(hidden) > 20
    donor = tiny_corpus.page_id("Geology")
    geo = tiny_corpus.labels.index("subject.geo")
    hid = set(hidden.tolist())
    bags = [(tiny_corpus.text_ptr[donor if p in hid else p], tiny_corpus.text_ptr[(donor if p in hid else p) + 1])
            for p in range(tiny_corpus.n_pages)]
    ptr = np.concatenate([[0], np.cumsum([b - a for a, b in bags])]).astype(np.int64)
    labs = [[geo] if p in hid else tiny_corpus.label_ids[tiny_corpus.label_ptr[p]:tiny_corpus.label_ptr[p + 1]].tolist()
            for p in range(tiny_corpus.n_pages)]
    tampered = dataclasses.replace(
        tiny_corpus, text_ptr=ptr, path=None,
        text_terms=np.concatenate([tiny_corpus.text_terms[a:b] for a, b in bags]).astype(np.int32),
        text_counts=np.concatenate([tiny_corpus.text_counts[a:b] for a, b in bags]).astype(np.int32),
        label_ptr=np.concatenate([[0], np.cumsum([len(x) for x in labs])]).astype(np.int64),
        label_ids=np.asarray([x for lab in labs for x in lab], np.int32))
    assert not np.array_equal(tampered.text_terms, tiny_corpus.text_terms)
    rec_b, _, base_b = run(tampered, TextModel(tampered, tm.idf, tm.vectors, tm.meta), actions)
    for (oa, ra, ia), (ob, rb, ib) in zip(rec_a, rec_b):
        for k in oa:
            np.testing.assert_array_equal(oa[k], ob[k])
        assert ra == rb
        np.testing.assert_array_equal(ia["candidate_ids"], ib["candidate_ids"])
    assert base.reducer.n_leaves == base_b.reducer.n_leaves
