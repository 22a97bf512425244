"""ChangingWeb (births, Poisson modifications), freshness/age, Palotai's Table 1 ratios, the news-site
generator, its degree-preserving rewiring and its statistics."""
from __future__ import annotations

import math

import numpy as np
import pytest

from gym_crawl.crawl.freshness import (
    CollectionFreshness,
    download_efficiency,
    relative_found_urls,
    sent_efficiency,
    table1,
    window_counts,
)
from gym_crawl.webgen.changing import ChangingWeb, make_changing_web
from gym_crawl.webgen.news_site import (
    PALOTAI_TARGETS,
    fit_power_law,
    generate_news_site,
    graph_statistics,
    rewire_degree_preserving,
)

# ---------------------------------------------------------------------------------------------------
# a hand-made 3-page changing web
#   page 0: born -10, modified at 2, 5, 9;  links 0->1, 0->2
#   page 1: born   0, modified at 4;        link  1->2
#   page 2: born   3, never modified;       link  2->0
# horizon 10 h


@pytest.fixture
def web3() -> ChangingWeb:
    states = np.array([[0.5, -0.5], [1.0, 0.0], [-1.0, 0.25]], np.float32)
    return ChangingWeb.from_lists(3, [(0, 1), (0, 2), (1, 2), (2, 0)], [-10.0, 0.0, 3.0],
                                  [[2.0, 5.0, 9.0], [4.0], []], 10.0, states=states)


def test_births_and_visible_links(web3):
    assert web3.n_pages == 3 and web3.horizon == 10.0 and web3.state_dim == 2
    assert not web3.exists(2, 2.99) and web3.exists(2, 3.0)
    assert not web3.exists(1, -0.5) and web3.exists(1, 0.0)
    assert web3.out_links(0, 2.0).tolist() == [1]          # page 2 is not published yet
    assert web3.out_links(0, 3.0).tolist() == [1, 2]
    assert web3.out_links(2, 1.0).tolist() == []           # a page that does not exist shows nothing
    assert web3.out_links(1, 0.0).tolist() == []
    assert web3.out_links(1, 3.0).tolist() == [2]
    assert web3.out_links(0, 3.0).dtype == np.int32
    assert web3.born_between(-1.0, 3.0).tolist() == [1, 2]
    assert web3.born_between(0.0, 10.0).tolist() == [2]


def test_versions_and_modification_times(web3):
    assert [web3.version_at(0, t) for t in (-10.0, 1.0, 2.0, 4.9, 5.0, 9.5)] == [0, 0, 1, 1, 2, 3]
    assert web3.version_at(2, 0.0) == -1 and web3.version_at(2, 3.0) == 0
    assert web3.last_modified(0, 4.9) == 2.0
    assert web3.last_modified(1, 3.0) == 0.0               # birth when never modified
    assert web3.last_modified(1, 4.0) == 4.0
    assert math.isnan(web3.last_modified(2, 1.0))
    assert web3.next_modification(0, 2.0) == 5.0
    assert web3.next_modification(0, -100.0) == 2.0
    assert web3.next_modification(0, 9.0) == math.inf
    assert web3.next_modification(2, 3.0) == math.inf
    assert web3.is_new(1, 10.0, window=6.0) and not web3.is_new(1, 10.0, window=5.9)
    assert not web3.is_new(2, 1.0)                          # not born
    assert web3.is_new(2, 3.0, window=0.0)
    np.testing.assert_array_equal(web3.page_state(2), [-1.0, 0.25])
    with pytest.raises(ValueError):
        web3.page_state(2)[0] = 0.0                         # read-only


def test_vectorized_twins_match_scalar(web3):
    pages = np.array([0, 1, 2, 2, 0])
    for t in (-10.0, 0.0, 2.0, 3.5, 4.0, 9.0, 10.0):
        assert web3.versions_at(pages, t).tolist() == [web3.version_at(p, t) for p in pages]
        np.testing.assert_array_equal(web3.last_modified_at(pages, t), [web3.last_modified(p, t) for p in pages])
        assert web3.is_new_many(pages, t, 3.0).tolist() == [web3.is_new(p, t, 3.0) for p in pages]
        assert web3.exists_many(pages, t).tolist() == [web3.exists(p, t) for p in pages]
        np.testing.assert_array_equal(web3.next_modification_at(pages, t),
                                      [web3.next_modification(p, t) for p in pages])
    assert web3.n_modifications(np.array([0, 1, 2]), 1.0, 5.0).tolist() == [2, 1, 0]


def test_freshness_and_age_hand_computed(web3):
    c = CollectionFreshness(web3)
    c.record(0, 1.0)          # stale from 2
    c.record(1, 1.0)          # stale from 4
    assert c.freshness(1.5) == 1.0 and c.age(1.5) == 0.0
    assert c.freshness(3.0) == 0.5 and c.age(3.0) == pytest.approx(0.5)          # ages 1, 0
    c.record(2, 3.0)          # never stale
    assert c.freshness(4.5) == pytest.approx(1 / 3) and c.age(4.5) == pytest.approx(1.0)  # 2.5, 0.5, 0
    c.record(0, 6.0)          # re-fetch: stale from 9
    assert len(c) == 3
    assert c.freshness(8.0) == pytest.approx(2 / 3) and c.age(8.0) == pytest.approx(4 / 3)  # 0, 4, 0
    assert c.is_fresh(8.0).tolist() == [True, False, True]
    # exact time averages over [1, 8], integrated by hand piece by piece:
    # [1,2) F=1 A=0 | [2,3) F=1/2 A=(t-2)/2 | [3,4) F=2/3 A=(t-2)/3 | [4,6) F=1/3 A=(2t-6)/3 | [6,8] F=2/3 A=(t-4)/3
    assert c.mean_freshness(1.0, 8.0) == pytest.approx(25 / 42)
    assert c.mean_age(1.0, 8.0) == pytest.approx(65 / 84)
    w = c.windowed(1.0, 8.0, window=3.0)
    np.testing.assert_allclose(w["edges"], [1.0, 4.0, 7.0, 8.0])
    np.testing.assert_allclose(w["freshness"], [13 / 18, 4 / 9, 2 / 3])
    np.testing.assert_allclose(w["age"], [0.25, 7 / 6, 7 / 6])
    np.testing.assert_allclose(w["covered"], [3.0, 3.0, 1.0])
    # time before the first record does not count: [0, 1) has an empty collection
    assert c.mean_freshness(0.0, 8.0) == pytest.approx(25 / 42)
    with pytest.raises(ValueError, match="before the latest record"):
        c.freshness(5.0)


def test_age_readings_differ_after_two_changes(web3):
    c = CollectionFreshness(web3)
    c.record(0, 1.0)                          # changed at 2 and 5 since
    assert c.age(5.5) == pytest.approx(3.5)   # Cho & Garcia-Molina: since the first missed change
    assert c.age_since_last_change(5.5) == pytest.approx(0.5)  # literal Palotai: since the latest change


def test_freshness_bad_arguments(web3):
    c = CollectionFreshness(web3)
    with pytest.raises(ValueError, match="not born"):
        c.record(2, 1.0)
    c.record(1, 5.0)
    with pytest.raises(ValueError, match="before its recorded copy"):
        c.record(1, 4.0)
    with pytest.raises(ValueError, match="page must be an int in"):
        c.record(3, 5.0)
    with pytest.raises(ValueError, match="past the horizon"):
        c.freshness(11.0)
    with pytest.raises(TypeError, match="ChangingWeb"):
        CollectionFreshness("web")
    assert math.isnan(CollectionFreshness(web3).freshness(1.0))


def test_table1_ratios_reproduce_palotai_table2():
    # Palotai Table 2, RL column: the reported efficiencies are ratios of the totals
    assert download_efficiency(2419, 540636) == pytest.approx(0.0045, abs=5e-5)
    assert sent_efficiency(2419, 9747) == pytest.approx(0.248, abs=5e-4)
    assert relative_found_urls(31092, 540636) == pytest.approx(0.058, abs=5e-4)
    t = table1([100, 200], [10, 0], [5, 0], 30, freshness=0.7, age=1.5)
    assert t["download_efficiency"] == pytest.approx(5 / 300) and t["sent_efficiency"] == 0.5
    assert t["relative_found_urls"] == pytest.approx(0.1) and t["freshness"] == 0.7
    per = sent_efficiency([5, 0], [10, 0], per_window=True)
    assert per[0] == 0.5 and math.isnan(per[1])
    assert window_counts([0.0, 2.9, 3.0, 8.0, 9.0], 0.0, 8.0, 3.0).tolist() == [2, 1, 1]
    with pytest.raises(ValueError, match="same shape"):
        sent_efficiency([1, 2], [3])
    with pytest.raises(ValueError, match="non-negative"):
        download_efficiency(-1, 3)


def test_changing_web_bad_arguments(web3):
    with pytest.raises(ValueError, match="page must be an int in"):
        web3.exists(-1, 0.0)
    with pytest.raises(TypeError, match="page must be an int"):
        web3.version_at("a", 0.0)
    with pytest.raises(ValueError, match="NaN"):
        web3.last_modified(0, float("nan"))
    with pytest.raises(ValueError, match="past the horizon"):
        web3.out_links(0, 10.5)
    with pytest.raises(TypeError, match="integer array"):
        web3.versions_at(np.array([0.5]), 1.0)
    with pytest.raises(ValueError, match="after its birth"):
        ChangingWeb.from_lists(2, [(0, 1)], [0.0, 5.0], [[1.0], [4.0]], 10.0)
    with pytest.raises(ValueError, match="<= horizon"):
        ChangingWeb.from_lists(2, [(0, 1)], [0.0, 0.0], [[11.0], []], 10.0)
    with pytest.raises(ValueError, match="strictly increasing"):
        ChangingWeb(np.array([0, 0]), np.array([], np.int32), [0.0], np.array([0, 2]), [1.0, 1.0],
                    np.zeros((1, 2)), 10.0)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        ChangingWeb.from_lists(1, [], [0.0], [[]], 10.0, states=np.full((1, 2), 2.0))
    with pytest.raises(ValueError, match="n_pages"):
        make_changing_web(n_pages=49)
    with pytest.raises(ValueError, match="horizon"):
        make_changing_web(n_pages=100, horizon=-1.0)
    with pytest.raises(TypeError, match="rewired"):
        make_changing_web(n_pages=100, rewired="yes")
    with pytest.raises(ValueError, match="p_local"):
        make_changing_web(n_pages=100, p_local=1.5)


# ---------------------------------------------------------------------------------------------------
# the generated changing web


@pytest.fixture(scope="module")
def small_web() -> ChangingWeb:
    return make_changing_web(n_pages=3000, horizon=72.0, seed=3)


def test_generated_web_respects_time(small_web):
    w = small_web
    assert w.indptr.dtype == np.int64 and w.indices.dtype == np.int32 and w.birth.dtype == np.float64
    assert w.states.dtype == np.float32 and w.states.shape == (3000, 50)
    assert np.all(np.abs(w.states) <= 1)
    # like a classifier's output: mostly near 0, a few large components; pages of a section alike
    assert 0.2 < np.median(np.abs(w.states).max(axis=1)) < 0.9
    a = w.states.astype(np.float64)
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    cos = a @ a.T
    same = w.section[:, None] == w.section[None, :]
    np.fill_diagonal(same, False)
    diff = w.section[:, None] != w.section[None, :]
    assert cos[same].mean() > 0.3 and abs(cos[diff].mean()) < 0.1
    assert w.exists(w.home, 0.0) and w.is_index[w.home]
    assert np.all(w.birth[w.is_index] < 0)                       # index pages exist from the start
    late = np.flatnonzero(w.birth > 0)
    assert 0.3 * 3000 < late.size < 0.7 * 3000 and np.all(w.birth <= w.horizon)
    owner = np.repeat(np.arange(w.n_pages), np.diff(w.mod_ptr))
    assert np.all(w.mod_times > w.birth[owner]) and np.all(w.mod_times <= w.horizon)
    # index pages change far more often than articles
    n_idx = np.diff(w.mod_ptr)[w.is_index].mean() / (w.horizon + w.history)
    n_art = np.diff(w.mod_ptr)[~w.is_index].mean() / (w.horizon + w.history)
    assert n_idx > 20 * n_art
    rng = np.random.default_rng(0)
    for p in rng.choice(w.n_pages, 200, replace=False):
        t = float(rng.uniform(-w.history, w.horizon))
        links = w.out_links(p, t)
        if w.birth[p] > t:
            assert links.size == 0
        else:
            assert np.all(w.birth[links] <= t)
            row = w.indices[w.indptr[p]:w.indptr[p + 1]]
            assert links.size == int((w.birth[row] <= t).sum())


def test_generated_web_is_deterministic_and_rewired_only_changes_links(small_web):
    again = make_changing_web(n_pages=3000, horizon=72.0, seed=3)
    for name in ("indptr", "indices", "birth", "mod_ptr", "mod_times", "states", "rates"):
        np.testing.assert_array_equal(getattr(small_web, name), getattr(again, name))
    other = make_changing_web(n_pages=3000, horizon=72.0, seed=4)
    assert not np.array_equal(other.birth, small_web.birth)
    rew = make_changing_web(n_pages=3000, horizon=72.0, seed=3, rewired=True)
    for name in ("indptr", "birth", "mod_ptr", "mod_times", "states", "rates", "is_index"):
        np.testing.assert_array_equal(getattr(small_web, name), getattr(rew, name))
    assert not np.array_equal(small_web.indices, rew.indices)
    np.testing.assert_array_equal(np.bincount(rew.indices, minlength=3000),
                                  np.bincount(small_web.indices, minlength=3000))


# ---------------------------------------------------------------------------------------------------
# generator, rewiring, statistics


def _edge_set(indptr, indices):
    src = np.repeat(np.arange(indptr.size - 1), np.diff(indptr))
    return set(zip(src.tolist(), indices.tolist()))


@pytest.mark.parametrize("n_swaps", [None, 2000])
def test_rewiring_preserves_every_degree(n_swaps):
    g = generate_news_site(2000, seed=1)
    r = rewire_degree_preserving(g, n_swaps=n_swaps, seed=2)
    np.testing.assert_array_equal(np.diff(r.indptr), np.diff(g.indptr))          # out-degrees
    np.testing.assert_array_equal(r.in_degree(), g.in_degree())                    # in-degrees
    src = np.repeat(np.arange(r.n_pages), np.diff(r.indptr))
    assert np.all(src != r.indices)                                                # no self-links
    e0, e1 = _edge_set(g.indptr, g.indices), _edge_set(r.indptr, r.indices)
    assert len(e1) == r.n_links                                                    # no duplicates
    changed = 1 - len(e0 & e1) / len(e0)
    assert changed > (0.9 if n_swaps is None else 0.2)
    # deterministic under the seed, different under another seed
    np.testing.assert_array_equal(rewire_degree_preserving(g, n_swaps=n_swaps, seed=2).indices, r.indices)
    assert not np.array_equal(rewire_degree_preserving(g, n_swaps=n_swaps, seed=3).indices, r.indices)


def test_rewiring_bad_arguments():
    with pytest.raises(TypeError, match="graph must be"):
        rewire_degree_preserving([1, 2, 3])
    with pytest.raises(ValueError, match="self-links"):
        rewire_degree_preserving((np.array([0, 1]), np.array([0], np.int32)))
    with pytest.raises(ValueError, match="n_swaps"):
        rewire_degree_preserving(generate_news_site(100, seed=0), n_swaps=-1)


@pytest.mark.parametrize("n", [50, 97, 300, 400])
def test_small_webs_build_and_rewire(n):
    for seed in range(3):
        g = generate_news_site(n, seed=seed)
        assert g.dropped_links == 0
        r = rewire_degree_preserving(g, seed=seed)
        np.testing.assert_array_equal(r.in_degree(), g.in_degree())
    w = make_changing_web(n, 48.0, seed=1, state_dim=8, rewired=True)
    assert w.states.shape == (n, 8)


def test_generator_deterministic_and_checked():
    a, b = generate_news_site(1500, seed=7), generate_news_site(1500, seed=7)
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.section, b.section)
    assert not np.array_equal(generate_news_site(1500, seed=8).indices, a.indices)
    assert a.indptr.dtype == np.int64 and a.indices.dtype == np.int32
    for row in range(a.n_pages):  # sorted rows, no self-links
        r = a.indices[a.indptr[row]:a.indptr[row + 1]]
        assert np.all(np.diff(r) > 0) and not np.any(r == row)
    with pytest.raises(ValueError, match="gamma_out"):
        generate_news_site(100, gamma_out=0.0)
    with pytest.raises(TypeError, match="n_pages"):
        generate_news_site(100.5)
    with pytest.raises(ValueError, match="in_min"):
        generate_news_site(1000, in_min=200)


def test_fit_power_law_recovers_exponents():
    rng = np.random.default_rng(0)
    for gamma, kmax in ((1.3, 300), (2.57, 5000)):
        k = np.arange(1, kmax + 1)
        p = k ** -gamma
        sample = rng.choice(k, 20000, p=p / p.sum())
        assert fit_power_law(sample, 1, kmax) == pytest.approx(gamma, abs=0.05)


def test_graph_statistics_match_networkx_on_a_small_graph():
    nx = pytest.importorskip("networkx")
    g = generate_news_site(600, seed=5)
    s = graph_statistics(g, n_sources=None, seed=0)  # exact: every page a BFS source, every page clustered
    G = nx.DiGraph()
    G.add_nodes_from(range(g.n_pages))
    src = np.repeat(np.arange(g.n_pages), np.diff(g.indptr))
    G.add_edges_from(zip(src.tolist(), g.indices.tolist()))
    assert s["clustering"] == pytest.approx(nx.average_clustering(G.to_undirected()), abs=1e-12)
    lengths = [d for _, dd in nx.all_pairs_shortest_path_length(G) for d in dd.values() if d > 0]
    assert s["mean_path"] == pytest.approx(np.mean(lengths), rel=1e-12)
    assert s["max_distance_seen"] == max(lengths)
    assert set(PALOTAI_TARGETS) <= {"gamma_out", "gamma_in", "clustering", "mean_path", "rewired_clustering",
                                    "rewired_mean_path"}


def test_generator_statistics_near_palotai_at_test_size():
    """At 10,000 pages (3 seeds measured: clustering 0.0235 ± 0.0014, mean path 7.05 ± 0.25, rewired
    clustering 0.0063 ± 0.0008): exponents within 0.06 (the MLE's sd over seeds is < 0.02), clustering
    within [0.015, 0.035] (Palotai 0.02), mean path within 1.2 of 7.29 (the mean path grows ~log N and is
    closest at 20k pages, 7.58), and rewiring divides the clustering by >= 2.5 (Palotai: 0.02 -> 0.003;
    a random graph's clustering falls ~1/N, so at 10k it is 0.006, at 20k 0.003) while the mean path
    changes by < 25 % (Palotai: +13 %)."""
    g = generate_news_site(10_000, seed=0)
    s = graph_statistics(g, n_sources=300, seed=0)
    r = graph_statistics(rewire_degree_preserving(g, seed=1), n_sources=300, seed=0)
    assert s["gamma_out"] == pytest.approx(PALOTAI_TARGETS["gamma_out"], abs=0.06)
    assert s["gamma_in"] == pytest.approx(PALOTAI_TARGETS["gamma_in"], abs=0.06)
    assert 0.015 <= s["clustering"] <= 0.035
    assert s["mean_path"] == pytest.approx(PALOTAI_TARGETS["mean_path"], abs=1.2)
    assert r["clustering"] * 2.5 <= s["clustering"]
    assert abs(r["mean_path"] / s["mean_path"] - 1) < 0.25
    assert r["gamma_out"] == s["gamma_out"] and r["gamma_in"] == s["gamma_in"]  # same degree sequences


def test_statistics_command(tmp_path, capsys):
    from gym_crawl.webgen.news_site import _main

    out = tmp_path / "stats.json"
    assert _main(["--n-pages", "500", "--seeds", "1", "--n-sources", "0", "--json", str(out)]) == 0
    import json

    data = json.loads(out.read_text())
    assert {r["graph"] for r in data["runs"]} == {"original", "rewired"}
    assert "Palotai" in capsys.readouterr().out


def test_sliding_collection_hand_computed(web3):
    c = CollectionFreshness(web3, retain=2.5)   # copies leave 2.5 h after their fetch
    c.record(0, 1.0)   # live [1, 3.5), stale from 2
    c.record(1, 1.0)   # live [1, 3.5), fresh throughout
    c.record(2, 3.0)   # live [3, 5.5)
    c.record(0, 6.0)   # live [6, 8.5), stale from 9
    assert c.live_pages(8.0).tolist() == [0] and c.freshness(8.0) == 1.0
    # [1,2) F=1 | [2,3) F=1/2 A=(t-2)/2 | [3,3.5) F=2/3 A=(t-2)/3 | [3.5,5.5) F=1 | [5.5,6) empty | [6,8] F=1
    assert c.mean_freshness(1.0, 8.0) == pytest.approx(35 / 39)
    assert c.mean_age(1.0, 8.0) == pytest.approx(11 / 156)
    assert c.windowed(1.0, 8.0, 3.0)["covered"].tolist() == pytest.approx([3.0, 2.5, 1.0])
    with pytest.raises(ValueError, match="retain"):
        CollectionFreshness(web3, retain=0.0)


@pytest.mark.parametrize("retain", [math.inf, 24.0, 5.0])
def test_time_averages_match_brute_force(small_web, retain):
    """The event integration against a direct evaluation of the definition on a fine time grid."""
    w = small_web
    rng = np.random.default_rng(1)
    times = np.sort(rng.uniform(0.0, 60.0, 400))
    born = np.flatnonzero(w.birth <= 0)
    pages = rng.choice(born[:80], 400)         # few pages: many re-fetches
    c = CollectionFreshness(w, retain=retain)
    for p, t in zip(pages.tolist(), times.tolist()):
        c.record(p, t)
    grid = (np.arange(8000) + 0.5) * (70.0 / 8000)           # midpoints
    m = w.next_modification_at(pages, times)
    fr, ag = [], []
    for t in grid:
        hi = int(np.searchsorted(times, t, side="right"))   # records up to t
        lo = int(np.searchsorted(times, t - retain, side="right")) if math.isfinite(retain) else 0
        if hi <= lo:
            continue
        # the latest copy of each page among the records in (t - retain, t]
        _, first_rev = np.unique(pages[lo:hi][::-1], return_index=True)
        mm = m[lo:hi][::-1][first_rev]
        fr.append(np.mean(mm > t))
        ag.append(np.mean(np.where(mm > t, 0.0, t - mm)))
    assert c.mean_freshness(0.0, 70.0) == pytest.approx(np.mean(fr), abs=2e-3)
    assert c.mean_age(0.0, 70.0) == pytest.approx(np.mean(ag), rel=2e-3, abs=2e-3)
