"""Per-domain and per-page memory on the paths beside the default step follows what the crawl touched, not the web:
the site features' host and page statistics (and the corpus' URL facts they parse), the window of pages in flight
(pages in flight per host, the busy hosts) and the simulated page source's per-host clock. The same crawl on a web
whose domain list is 100,000 domains longer is the same crawl, with the same bytes in each of them."""
from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest
from conftest import make_tiny_corpus

import gym_crawl  # noqa: F401
import gym_crawl.features.site as site_mod
from gym_crawl.corpus.core import StringTable
from gym_crawl.features.site import SiteFeatures

_EXTRA_DOMAINS = 100_000


@pytest.fixture(scope="module")
def webs():
    """A 2,000-page web with 2,000 domains, and the same web with 100,000 more (unused) domains in its list."""
    small = make_tiny_corpus(2000, domains_per_kind=500)
    names = small.domains.tolist() + [f"unused-{i}.example" for i in range(_EXTRA_DOMAINS)]
    big = dataclasses.replace(small, domains=StringTable.from_strings(names), meta={**small.meta, "name": "tiny-big"})
    assert big.n_domain_slots == small.n_domain_slots + _EXTRA_DOMAINS
    return small, big


def _site(env) -> SiteFeatures:
    f = env.unwrapped.features
    parts = getattr(f, "parts", [f])
    return next(p for p in parts if isinstance(p, SiteFeatures))


def _crawl(corpus, steps=60, seed=3):
    env = gym.make("WikiCrawl-v1", corpus=corpus, topic="cancer", features="crawler+", concurrency=4, per_host=1,
                   max_candidates=8, max_episode_steps=steps)
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    trace = []
    for _ in range(steps):
        m = info["action_mask"]
        a = int(rng.choice(np.flatnonzero(m))) if m.any() else 0
        obs, r, term, trunc, info = env.step(a)
        trace.append((float(r), info["candidate_ids"].tobytes(), info["action_mask"].tobytes()))
        if term or trunc:
            break
    return env, trace


def _bytes(obj) -> int:
    """Bytes of the arrays an object of these paths holds (a dict: its entries' and their arrays'; an object of the
    site features' module, e.g. its keyed columns: its own attributes'); shared objects (the crawl state, the
    scorer, the corpus) are not counted."""
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, dict):
        return len(obj) + sum(_bytes(v) for v in obj.values())
    if type(obj).__module__ == SiteFeatures.__module__:
        return sum(_bytes(v) for v in vars(obj).values())
    return 0


def _footprint(env) -> dict[str, int]:
    """Bytes of each per-crawl structure of these paths: the site features' statistics, the window, the source."""
    base = env.unwrapped
    ep = _site(env).episode(base.state)
    return {"site": _bytes(ep), "window": sum(_bytes(v) for v in vars(base._window).values()),
            "source": sum(_bytes(v) for k, v in vars(base._source).items() if k != "_domain")}


def test_the_same_crawl_on_a_longer_domain_list_keeps_the_same_bytes(webs):
    small, big = webs
    env_s, trace_s = _crawl(small)
    env_b, trace_b = _crawl(big)
    assert trace_s == trace_b, "the unused domains change nothing of the crawl (the state vector's domain share aside)"
    assert np.array_equal(env_s.unwrapped.view.fetched_pages(), env_b.unwrapped.view.fetched_pages())
    assert _footprint(env_s) == _footprint(env_b)


def test_the_structures_hold_the_pages_and_hosts_the_crawl_touched(webs):
    small, _ = webs
    site_mod._URLS.pop(small, None)  # the corpus' URL facts: parsed for this crawl's pages only
    env, _ = _crawl(small, steps=80)
    base = env.unwrapped
    st = base.state
    fetched = np.asarray(base.view.fetched_pages(), np.int64)
    dom = np.asarray(small.page_domain)
    # the pages the site statistics hold: the fetched pages and their out-links' targets (self-links aside)
    lo, hi, dst = np.asarray(small.link_lo), np.asarray(small.link_hi), np.asarray(small.link_dst)
    seen = set(fetched.tolist())
    for p in fetched.tolist():
        seen.update(int(d) for d in dst[lo[p]:hi[p]] if d != p)
    ep = _site(env).episode(st)
    assert ep.pages.n == len(seen) and sorted(ep.pages.key_of[:ep.pages.n].tolist()) == sorted(seen)
    hosts = np.bincount(dom[sorted(seen)], minlength=small.n_domain_slots)
    assert ep.hosts.n == int(np.count_nonzero(hosts)) < small.n_domain_slots
    assert np.array_equal(ep.host_seen(np.arange(small.n_domain_slots)), hosts)
    for keyed, n in ((ep.pages, len(seen)), (ep.hosts, ep.hosts.n)):  # capacity: the doubling's slack at most
        assert len(keyed.key_of) <= max(64, 2 * n) and len(keyed.keys) <= max(128, 4 * n)
    urls = site_mod._url_table(small).table  # URLs parsed: fetched pages and candidates, all touched by the crawl
    parsed = urls.key_of[:urls.n]
    assert 0 < urls.n <= st.n_slots and set(parsed.tolist()) <= seen
    assert len(urls.key_of) <= max(64, 2 * urls.n)
    # the window: a count per host with pages in flight; busy hosts only
    w = base._window
    in_flight = dom[list(w.in_flight)]
    assert w.in_domain == {int(d): int(k) for d, k in zip(*np.unique(in_flight, return_counts=True))}
    assert set(w.flagged.tolist()) <= set(w.in_domain)
    # the page source's clock: the hosts of the pages it was asked for (every fetched page but the seed, and those
    # in flight)
    asked = set(dom[fetched[1:]].tolist()) | set(in_flight.tolist())
    assert set(base._source._free) == asked
    assert len(base._source.held_domains()) == 0


def test_tree_page_index_is_a_dense_column_keyed_by_what_entered_the_tree():
    """The Tree-Frontier's page → row index agrees with a column indexed by page id under random inserts and
    removals (a page listed twice keeps its last row, as the column did), and holds an entry per page it saw."""
    from gym_crawl.reducers.tree import _PageSlots

    rng = np.random.default_rng(0)
    n = 10_000_000
    dense = {}
    idx = _PageSlots()
    for _ in range(200):
        pages = rng.integers(0, n, rng.integers(1, 40))
        slots = rng.integers(-1, 500, len(pages)).astype(np.int32)
        idx.set(pages, slots)
        for p, s in zip(pages.tolist(), slots.tolist()):
            dense[p] = s
        probe = np.concatenate([pages, rng.integers(0, n, 20)])
        assert idx.get(probe).tolist() == [dense.get(p, -1) for p in probe.tolist()]
    assert idx.n == len(dense) and len(idx.page) <= 2 * len(dense) and len(idx.keys) <= 4 * len(dense)


def test_tree_reducer_holds_the_pages_of_its_crawl(webs):
    small, _ = webs
    env = gym.make("WikiCrawl-v1", corpus=small, topic="cancer", features="tres", reducer="tree", max_episode_steps=80)
    _, info = env.reset(seed=1)
    for _ in range(80):
        _, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        if term or trunc:
            break
    tree, st = env.unwrapped.reducer, env.unwrapped.state
    tree.check_invariants()
    entered = tree._page_slot.page[:tree._page_slot.n]
    assert 0 < len(entered) <= st.n_slots and np.all(st.slots(entered) >= 0)  # pages the crawl touched
    assert len(tree._page_slot.page) <= max(64, 2 * len(entered))
