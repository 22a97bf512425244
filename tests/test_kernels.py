"""The compiled crawl step equals the vectorized numpy code it replaced, bit for bit.

References below are the numpy implementations as they were before the kernels (feature rows,
TopK's Python heap, Tree-Frontier's level-by-level routing, one-call scoring); each is compared
with the compiled path on real crawl states.
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from numba import njit

import gym_crawl  # noqa: F401
from gym_crawl.crawl import FRONTIER, VISITED
from gym_crawl.crawl.state import DIST_CAP
from gym_crawl.features.sets import CombinedFeatures, Han2018Features, TresFeatures, bucket5, bucket6, change_bucket
from gym_crawl.features.thesis import ThesisFeatures, disc_change, disc_change_code, disc_distance, disc_relevance
from gym_crawl.reducers.base import TopK, link_text_score
from tests.helpers import random_crawl


def _crawl(corpus, steps=80, seed=0, **kw):
    env = gym.make("WikiCrawl-v0", corpus=corpus, **kw).unwrapped
    env.set_budget(steps + 1000)
    return random_crawl(env, steps, seed)


# ------------------------------------------------------------------ numpy references (pre-kernel code)
def _han_ref(f: Han2018Features, s, pages):
    rels, change, dist = f.raw(s, pages)
    n = len(rels)
    if not f.discretize:
        out = np.empty((n, rels.shape[1] + 3), np.float32)
        out[:, :-3] = rels
        out[:, -3] = change / 2.0
        out[:, -2] = dist / DIST_CAP
        out[:, -1] = 1.0
        return out
    out = np.zeros((n, f.dim), np.float32)
    k = f._n_rel
    base = np.arange(k) * 11
    cols = np.concatenate([base + bucket5(rels), base + 5 + bucket6(rels),
                           (11 * k + change_bucket(change, f.d1, f.d2))[:, None],
                           (11 * k + 5 + np.minimum(dist, DIST_CAP))[:, None], np.full((n, 1), f.dim - 1)], axis=1)
    out[np.arange(n)[:, None], cols] = 1.0
    return out


def _tres_ref(s, pages):
    sp = s.best_parent[pages]
    d = s.page_domain[pages]
    fetched = s.dom_fetched[d]
    out = np.empty((len(pages), 8), np.float32)
    out[:, 0] = s.relevant[sp]
    out[:, 1] = 1.0 / (1.0 + s.dist[sp])
    out[:, 2] = s.path_rel[sp] / np.maximum(s.path_len[sp], 1)
    out[:, 3] = s.kw_url[pages]
    out[:, 4] = s.kw_anchor[pages]
    np.divide(s.dom_relevant[d], fetched, out=out[:, 5], where=fetched > 0)
    out[fetched == 0, 5] = 0.0
    out[:, 6] = np.where(fetched > 0, 1.0, 0.5)
    out[:, 7] = 1.0
    return out


def _thesis_ref(f: ThesisFeatures, s, pages):
    sp = s.best_parent[pages]
    C, n = f.C, len(pages)
    out = np.empty((n, 8 + 2 * C), np.float32)
    out[:, 0] = disc_relevance(s.rel[sp])
    out[:, 1] = disc_relevance(s.par_mean[sp])
    out[:, 2] = disc_relevance(s.relpar_mean[sp])
    ch = s.change[sp]
    out[:, 3] = disc_change(ch) if f.change_bins == "text" else disc_change_code(ch)
    out[:, 4] = disc_distance(s.dist[sp])
    out[:, 5:5 + C] = disc_relevance(s.cat[sp].reshape(n, C).ravel()).reshape(n, C)
    out[:, 5 + C] = disc_relevance(s.link_rel[pages])
    out[:, 6 + C] = disc_relevance(s.sum_par_rel[pages] / np.maximum(s.n_par[pages], 1))
    nrel = s.n_relpar[pages]
    relpar = np.divide(s.sum_relpar_rel[pages], nrel, out=np.zeros(n, np.float64), where=nrel > 0)
    out[:, 7 + C] = disc_relevance(relpar)
    out[:, 8 + C:] = disc_relevance(s.link_cat[pages].reshape(n, C).ravel()).reshape(n, C)
    if f.normalize:
        out *= f._scale
    return out


@pytest.mark.parametrize("seed,cap", [(0, None), (1, 20)])
def test_feature_rows_equal_the_numpy_reference(tiny_corpus, seed, cap):
    env = _crawl(tiny_corpus, steps=120, seed=seed, domain_cap=cap)
    s = env.state
    pages = np.asarray(s.frontier, np.int64)
    assert len(pages) > 50
    for disc in (False, True):
        f = Han2018Features(4, discretize=disc)
        np.testing.assert_array_equal(f.compute(s, pages), _han_ref(f, s, pages), err_msg=f"han discretize={disc}")
    np.testing.assert_array_equal(TresFeatures().compute(s, pages), _tres_ref(s, pages))
    for bins in ("text", "code"):
        for norm in (False, True):
            f = ThesisFeatures(4, change_bins=bins, normalize=norm)
            np.testing.assert_array_equal(f.compute(s, pages), _thesis_ref(f, s, pages),
                                          err_msg=f"thesis {bins} {norm}")
    comb = CombinedFeatures([Han2018Features(4, discretize=False), TresFeatures()])
    ref = np.concatenate([_han_ref(comb.parts[0], s, pages)[:, :-1], _tres_ref(s, pages)], axis=1)
    np.testing.assert_array_equal(comb.compute(s, pages), ref)
    comb_d = CombinedFeatures([Han2018Features(4, discretize=True), TresFeatures()])
    ref = np.concatenate([_han_ref(comb_d.parts[0], s, pages)[:, :-1], _tres_ref(s, pages)], axis=1)
    np.testing.assert_array_equal(comb_d.compute(s, pages), ref)


def test_feature_rows_refuse_pages_without_parent(tiny_corpus):
    env = _crawl(tiny_corpus, steps=10)
    s = env.state
    unseen = int(np.flatnonzero(s.status == 0)[0])
    for f in (Han2018Features(4), Han2018Features(4, discretize=False), TresFeatures(), ThesisFeatures(4)):
        with pytest.raises(ValueError, match="not frontier pages"):
            f.compute(s, np.array([int(s.frontier[0]), unseen]))


# ------------------------------------------------------------------------------------ TopK
def _python_link_rel(state, pages):  # another function object: TopK takes its Python heap path
    return link_text_score(state, pages)


@pytest.mark.parametrize("cap", [None, 3])
def test_compiled_topk_equals_the_python_heap(tiny_corpus, cap):
    a = _crawl(tiny_corpus, steps=0, domain_cap=cap, max_candidates=8)
    b = gym.make("WikiCrawl-v0", corpus=tiny_corpus, domain_cap=cap, max_candidates=8,
                 reducer=TopK(score=_python_link_rel)).unwrapped
    assert a.reducer._compiled and not b.reducer._compiled
    for seed in (0, 1):
        _, ia = a.reset(seed=seed)
        _, ib = b.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for _t in range(150):
            np.testing.assert_array_equal(ia["candidate_ids"], ib["candidate_ids"])
            valid = np.flatnonzero(ia["action_mask"])
            act = int(rng.choice(valid))
            _, _, ta, _, ia = a.step(act)
            _, _, tb, _, ib = b.step(act)
            assert ta == tb
            if ta:
                break


def test_compiled_topk_is_the_exact_top_k_for_any_k(tiny_corpus):
    env = _crawl(tiny_corpus, steps=0, max_candidates=8)
    _, info = env.reset(seed=2)
    rng = np.random.default_rng(2)
    s = env.state
    for t in range(120):
        for k in (8, 1, 5, 30, None, 8):  # k may change between calls (agents asking for more)
            F = np.asarray(s.frontier, np.int64)
            order = np.lexsort((F, -s.link_rel[F].astype(np.float64)))
            want = F[order][: (len(F) if k is None else k)]
            np.testing.assert_array_equal(env.reducer.propose(k, rng), want, err_msg=f"step {t}, k={k}")
        _, _, term, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term:
            break


def test_topk_select_slots_gives_the_selection_and_its_slots_whatever_the_hints(tiny_corpus):
    """The batched step's selection with slot hints: exact, stale and arbitrary hints (and none) give the
    selection, heap and flags of the plain selection, and the slots of the pages it selected."""
    from gym_crawl.crawl import kernels as KN
    from gym_crawl.reducers.base import TopKRows

    env = _crawl(tiny_corpus, steps=0, max_candidates=8)
    _, info = env.reset(seed=4)
    rng = np.random.default_rng(4)
    s = env.state
    kk = 8
    rows = TopKRows(np.zeros(4096, np.float32), np.zeros(4096, np.int32), np.zeros(1, np.int64),
                    np.zeros(1, np.int64), np.zeros(kk + 1, np.int32), np.zeros(kk + 1, np.float32))
    env.reducer.adopt_rows(rows)
    prev_slots = np.full(kk + 1, -1, np.int32)
    checked = 0
    for t in range(120):
        n_old = int(rows.nsel[0])
        exact = np.full(kk + 1, -1, np.int32)
        exact[:n_old] = s.slots(rows.sel_p[:n_old].astype(np.int64))
        hints = {"none": np.full(kk + 1, -1, np.int32), "exact": exact, "stale": prev_slots.copy(),
                 "arbitrary": rng.integers(-5, s.n_slots + 5, kk + 1).astype(np.int32)}
        want = [a.copy() for a in (rows.hk, rows.hp, rows.hsize, rows.sel_p, rows.sel_k, rows.nsel)]
        mark_before = s.arrays["tk_mark"].copy()
        n = KN.topk_select(kk, s.crawl_arrays, 0, *want)
        hs = int(want[2][0])
        for name, h in hints.items():
            got = [a.copy() for a in (rows.hk, rows.hp, rows.hsize, rows.sel_p, rows.sel_k, rows.nsel)]
            assert KN.topk_select_slots(kk, s.crawl_arrays, 0, *got, h) == n, (t, name)
            for a, b in zip([got[0][:hs], got[1][:hs], got[2], got[3][:n], got[4][:n], got[5]],
                            [want[0][:hs], want[1][:hs], want[2], want[3][:n], want[4][:n], want[5]]):
                np.testing.assert_array_equal(a, b, err_msg=f"step {t}, {name} hints")
            np.testing.assert_array_equal(h[:n], s.slots(want[3][:n].astype(np.int64)), err_msg=f"{t} {name}")
            np.testing.assert_array_equal(s.arrays["tk_mark"], mark_before)  # False between calls
            checked += 1
        prev_slots = hints["exact"]
        env.reducer.propose(kk, rng)  # the env's own selection moves on
        _, _, term, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term:
            break
    assert checked > 100


# --------------------------------------------------------------------------------- scoring
def test_score_tables_equal_one_call_scoring(tiny_corpus):
    env = _crawl(tiny_corpus, steps=0)
    sc = env.scorer
    pt, lt = sc.page_table(), sc.link_table()
    pt.ensure_all()
    lt.ensure_all()
    ptr = np.asarray(tiny_corpus.link_ptr)
    for p in range(tiny_corpus.n_pages):
        ps = sc.score_pages(np.array([p]))
        assert ps.rel[0] == pt.rel[p] and np.array_equal(ps.cat[0], pt.cat[p]) and ps.tfidf[0] == pt.tfidf[p]
        a, b = int(ptr[p]), int(ptr[p + 1])
        ls = sc.score_links(np.arange(a, b))
        for f in ("rel", "cat", "kw_url", "kw_anchor"):
            np.testing.assert_array_equal(getattr(ls, f), getattr(lt, f)[a:b], err_msg=f"links of {p}: {f}")


def test_set_keywords_rescores_link_keyword_flags(tiny_corpus):
    env = _crawl(tiny_corpus, steps=0)
    sc = env.scorer
    lt = sc.link_table()
    lt.ensure_all()
    before = lt.kw_url.copy()
    sc.set_keywords(["rock"])
    assert not lt.done.any()
    lt.ensure_all()
    np.testing.assert_array_equal(lt.kw_url, sc.score_links(np.arange(len(before))).kw_url)
    assert not np.array_equal(before, lt.kw_url)


def test_fetched_scores_come_from_the_tables_only_when_fetched(tiny_corpus):
    """Leak-free: a page's own scores appear in the state only once it is fetched."""
    env = _crawl(tiny_corpus, steps=30)
    s = env.state
    pt = env.scorer.page_table()
    fetched = s.fetched_pages()
    np.testing.assert_array_equal(s.rel[fetched], pt.rel[fetched])
    other = s.status != VISITED
    assert not s.rel[other].any() and not s.tfidf[other].any() and not s.reward[other].any()


# ----------------------------------------------------------------------------- Tree routing
def test_tree_route_equals_level_by_level_numpy(tiny_corpus):
    from gym_crawl.reducers.tree import TreeFrontier

    env = gym.make("WikiCrawl-v0", corpus=tiny_corpus, reducer=TreeFrontier(min_samples_split=4), features="tres",
                   reward="binary", max_episode_steps=200).unwrapped
    env.set_budget(200)
    _, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(150):
        _, _, term, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term:
            break
    tf = env.reducer
    assert tf.n_leaves > 2
    X = rng.random((500, tf.dim)).astype(np.float32)
    node = np.zeros(len(X), np.int32)
    active = np.arange(len(X))
    while len(active):
        nd = node[active]
        internal = tf._left[nd] >= 0
        active, nd = active[internal], nd[internal]
        if len(active) == 0:
            break
        go = X[active, tf._feat[nd]] >= tf._thr[nd]
        node[active] = np.where(go, tf._right[nd], tf._left[nd])
    np.testing.assert_array_equal(tf.route(X), node)
    assert np.all(env.state.status[env.view.candidate_pages()] == FRONTIER)


# ------------------------------------------------------------------------------ the kernels' bundles
def test_each_bundle_constructor_takes_its_fields_in_their_order():
    """A bundle's compiled constructor is written out field by field; it must list exactly its fields, in their
    order, or a kernel would read one array under another's name."""
    import inspect

    from gym_crawl.crawl import bundles as B
    from gym_crawl.crawl.fields import CRAWL_ARRAYS, FIELDS, SLOT_ARRAYS

    assert CRAWL_ARRAYS[:len(FIELDS) + len(SLOT_ARRAYS)] == tuple(f.name for f in FIELDS) + tuple(
        n for n, _ in SLOT_ARRAYS)
    for ctor, fields in ((B._new_crawl_arrays, CRAWL_ARRAYS), (B._new_score_tables, B.SCORE_TABLES),
                         (B._new_link_graph, B._LINK_GRAPH), (B._new_fetch_work, B._FETCH_WORK)):
        assert tuple(inspect.signature(ctor.py_func).parameters) == tuple(fields)
    for public, fields in ((B.score_tables, B.SCORE_TABLES), (B.fetch_work, B._FETCH_WORK),
                           (B.link_graph, B._LINK_GRAPH[:4] + ("ordered", "by_target"))):  # the order derived
        assert tuple(inspect.signature(public).parameters) == tuple(fields)
    with pytest.raises(KeyError, match=r"missing \['status'"):
        B.crawl_arrays({})


@pytest.mark.parametrize("clone", ["pickle", "deepcopy"])
def test_a_copied_crawl_rebuilds_its_bundles_and_crawls_on_identically(tiny_corpus, clone):
    """The crawl state's kernel bundles hold memory pointers and are not pickled: a copy rebuilds them over its
    own arrays, then crawls on exactly as the original does, and neither touches the other's arrays."""
    import copy
    import pickle

    from gym_crawl.envs import WikiCrawlEnv

    env = WikiCrawlEnv(corpus=tiny_corpus, max_episode_steps=40)
    env.reset(seed=2)
    for _ in range(5):
        env.step(0)
    twin = pickle.loads(pickle.dumps(env)) if clone == "pickle" else copy.deepcopy(env)
    assert twin.state.status is not env.state.status
    ours = [env.step(0)[1] for _ in range(10)]
    theirs = [twin.step(0)[1] for _ in range(10)]
    assert ours == theirs
    assert twin.state.fetched_pages().tolist() == env.state.fetched_pages().tolist()


def test_page_link_order_walks_targets_ascending_with_ties_in_link_order():
    from gym_crawl.crawl.link_order import fill_link_order, page_link_order

    dst = np.array([5, 3, 5, 1, 3, 9, 2, 2], np.int32)
    out = np.full(5, -1, np.int32)
    page_link_order(0, 5, dst, np.zeros(8, np.int64), out)
    assert out.tolist() == [3, 1, 4, 0, 2]  # targets 1, 3, 3, 5, 5: a target's links in link order
    lo, hi = np.array([0, 5, 8], np.int64), np.array([5, 8, 8], np.int64)  # the third page has no links
    link_ord, done = np.full(8, -1, np.int32), np.zeros(3, bool)
    fill_link_order(lo, hi, dst, link_ord, done)
    assert link_ord.tolist() == [3, 1, 4, 0, 2, 1, 2, 0] and done.all()
    big = np.random.default_rng(0).integers(0, 20, 200).astype(np.int32)  # past the insertion sort's 32 keys
    out = np.zeros(200, np.int32)
    page_link_order(0, 200, big, np.zeros(200, np.int64), out)
    assert out.tolist() == np.lexsort((np.arange(200), big)).tolist()


def test_probe_finds_a_page_or_the_entry_that_would_take_it():
    from gym_crawl.pagemap import EMPTY, find, insert, probe

    keys, slots = np.full(16, EMPTY, np.int32), np.zeros(16, np.int32)
    for p in range(7):
        h = probe(keys, p * 16)  # multiples of the table size: colliding homes are likely
        assert keys[h] == EMPTY
        keys[h], slots[h] = p * 16, p
    for p in range(7):
        assert keys[probe(keys, p * 16)] == p * 16 and find(keys, slots, p * 16) == p
    insert(keys, slots, 999, 7)
    assert keys[probe(keys, 999)] == 999 and keys[probe(keys, 1000)] == EMPTY


def test_a_fetch_keeps_each_touched_page_at_its_slot_in_the_page_map(tiny_corpus):
    """A fetch probes each target's page-map entry once, ahead of its turn, and keeps the position: a target found
    there is at it still, and an empty entry an earlier target of the same fetch took since is probed on from. After
    every fetch each slot's page is found at that slot and no page has two — with entries displaced from their home
    by collisions among the pages of one fetch (a crawl started with a small map, so it runs crowded)."""
    from gym_crawl.crawl.fields import allocate
    from gym_crawl.pagemap import EMPTY, find, probe

    env = gym.make("WikiCrawl-v0", corpus=tiny_corpus).unwrapped
    env.reset(seed=0)
    C = env.state.n_categories  # 16 slots to start: a map of 32 entries, doubled when half full, so crowded
    s = type(env.state)(tiny_corpus, n_categories=C, beta=env.state.beta, storage=allocate(16, C))
    s.reset(env.scorer, env.scheme, None)
    for p in env.state.fetched_pages():
        s.fetch(int(p))
    displaced = 0
    for step in range(80):
        fr = np.sort(s.frontier)
        if not len(fr):
            break
        before = s.n_slots
        s.fetch(int(fr[(step * 5) % len(fr)]))
        a = s.arrays
        keys, slots, pages = a["map_keys"], a["map_slots"], a["slot_page"][:s.n_slots]
        assert len(np.unique(pages)) == len(pages)
        for sl in range(s.n_slots):
            assert find(keys, slots, int(pages[sl])) == sl
        used = np.flatnonzero(keys != EMPTY)
        assert len(used) == s.n_slots
        empty = np.full(len(keys), EMPTY, np.int32)  # a page's probe there ends at its home entry
        homes = np.array([probe(empty, int(keys[h])) for h in used])
        displaced += int(((homes != used) & (slots[used] >= before)).sum())
    assert s.n_fetched > 40
    assert displaced > 0, "targets of a fetch were placed away from their home entries"


def test_fetches_are_the_same_with_the_link_order_shared_or_sorted_per_fetch(tiny_corpus, monkeypatch):
    """A crawl walks a page's targets in page order from the corpus' shared order (filled up front), or sorted at
    each fetch (a corpus over the eager limit, whose order would otherwise be an (n_links,) array written page by page
    at random; a web whose links grow): the same crawl, array for array, domain cap included."""
    from gym_crawl.crawl import bundles as B
    from gym_crawl.crawl.fields import FIELDS

    env = gym.make("WikiCrawl-v0", corpus=tiny_corpus).unwrapped
    env.reset(seed=0)
    states = [type(env.state)(tiny_corpus, n_categories=env.state.n_categories, beta=env.state.beta) for _ in range(3)]
    for s in states:
        s.reset(env.scorer, env.scheme, 4)
    monkeypatch.setattr(B, "EAGER_ORDER_LINKS", 0)
    s0 = states[0]
    shared = len(B._LINK_ORDERS)
    states[1]._graph = B.link_graph(s0.link_lo, s0.link_hi, s0.link_dst.copy(), s0.page_domain)  # over the limit
    assert len(B._LINK_ORDERS) == shared  # no order array kept for a corpus over the limit
    states[2]._graph = B.link_graph(s0.link_lo, s0.link_hi, s0.link_dst, s0.page_domain, ordered=False)
    seeds = env.state.fetched_pages()
    assert len(seeds)
    for s in states:
        for p in seeds:
            s.fetch(int(p))
    blocked = 0
    for step in range(60):
        fr = np.sort(s0.frontier)
        if not len(fr):
            break
        page = int(fr[(step * 7) % len(fr)])
        res = [s.fetch(page) for s in states]
        blocked += len(res[0].removed_pages)
        for r in res[1:]:
            assert r.new_pages.tolist() == res[0].new_pages.tolist()
            assert r.updated_pages.tolist() == res[0].updated_pages.tolist()
            assert r.removed_pages.tolist() == res[0].removed_pages.tolist()
    assert s0.n_fetched > 20 and blocked > 0
    for s in states[1:]:
        for f in FIELDS:
            np.testing.assert_array_equal(s.arrays[f.name], s0.arrays[f.name], err_msg=f.name)


@njit(cache=False)
def _graph_walk(g):
    """A :class:`LinkGraph`'s walk: as stored (``by_target``), and how many pages its shared order covers."""
    return g.by_target, len(g.ord_done)


def test_a_web_stored_in_target_order_is_walked_as_stored(tmp_path, monkeypatch):
    """On a corpus that stores each page's links in ascending target (the power-law web), a fetch walks them as
    stored (no order kept, none sorted): the same crawl, array for array, as through the shared order or sorted at
    each fetch — the walk that a web stored in another order takes."""
    from gym_crawl.crawl import bundles as B
    from gym_crawl.crawl.fields import FIELDS
    from gym_crawl.webgen.powerlaw import generate_powerlaw

    corpus = generate_powerlaw(3000, seed=2, folder=tmp_path, progress=False)
    assert corpus.links_by_target
    env = gym.make("WikiCrawl-v0", corpus=corpus, topic="music").unwrapped
    env.reset(seed=0)
    states = [type(env.state)(corpus, n_categories=env.state.n_categories, beta=env.state.beta) for _ in range(3)]
    for s in states:
        s.reset(env.scorer, env.scheme, None)
    s0 = states[0]
    assert s0.links_by_target and _graph_walk(s0.link_graph) == (True, 0)
    shared = len(B._LINK_ORDERS)
    states[1]._graph = B.link_graph(s0.link_lo, s0.link_hi, s0.link_dst, s0.page_domain)  # the shared order
    assert _graph_walk(states[1]._graph) == (False, corpus.n_pages)
    assert len(B._LINK_ORDERS) == shared + 1
    monkeypatch.setattr(B, "EAGER_ORDER_LINKS", 0)
    states[2]._graph = B.link_graph(s0.link_lo, s0.link_hi, s0.link_dst, s0.page_domain)  # sorted at each fetch
    assert _graph_walk(states[2]._graph) == (False, 0)
    seeds = env.state.fetched_pages()
    for s in states:
        for p in seeds:
            s.fetch(int(p))
    repeats = 0
    for step in range(300):
        fr = np.sort(s0.frontier)
        if not len(fr):
            break
        page = int(fr[(step * 11) % len(fr)])
        a, b = corpus.outlinks(page)
        repeats += len(corpus.link_dst[a:b]) - len(np.unique(corpus.link_dst[a:b]))
        res = [s.fetch(page) for s in states]
        for r in res[1:]:
            assert r.new_pages.tolist() == res[0].new_pages.tolist()
            assert r.updated_pages.tolist() == res[0].updated_pages.tolist()
    assert s0.n_fetched > 200 and repeats > 0, "pages linking a target twice were fetched"
    for s in states[1:]:
        for f in FIELDS:
            np.testing.assert_array_equal(s.arrays[f.name], s0.arrays[f.name], err_msg=f.name)
