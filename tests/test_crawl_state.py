"""CrawlState's field table: every column is allocated and reset from it, and ``best_link`` is the
discovering link whose text gives ``link_rel``."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import gym_crawl  # noqa: F401
from gym_crawl.crawl import FRONTIER
from gym_crawl.crawl.fields import FIELDS, MAP_ARRAYS, MIN_SLOTS, SLOT_ARRAYS, allocate
from tests.helpers import random_crawl


def _crawled_env(corpus, steps=60, cap=None, seed=0):
    env = gym.make("WikiCrawl-v0", corpus=corpus, domain_cap=cap, max_episode_steps=steps + 1).unwrapped
    env.set_budget(steps + 1)
    return random_crawl(env, steps, seed)


def test_every_array_is_a_field(tiny_corpus):
    env = _crawled_env(tiny_corpus, steps=5)
    s = env.state
    names = {f.name for f in FIELDS} | {n for n, _ in SLOT_ARRAYS} | {n for n, _ in MAP_ARRAYS}
    per_page = {k for k, v in vars(s).items() if isinstance(v, np.ndarray) and len(v) == tiny_corpus.n_pages
                and k not in ("link_dst", "link_lo", "link_hi", "page_domain")}
    assert not per_page, f"arrays as long as the corpus: {sorted(per_page)}"
    assert set(s.arrays) == names
    assert np.all(s.arrays["tslot"] == -1), "the expand kernel's per-target positions are restored after each fetch"
    assert not s.arrays["tmark"].any()


def test_state_is_sized_by_the_pages_it_touched(tiny_corpus):
    env = _crawled_env(tiny_corpus, steps=30)
    s = env.state
    touched = set(s.fetched_pages().tolist()) | set(np.asarray(s.frontier).tolist())
    touched |= set(np.flatnonzero(np.asarray(s.status) == 3).tolist())  # blocked
    assert s.n_slots == len(touched)
    assert sorted(s.arrays["slot_page"][: s.n_slots].tolist()) == sorted(touched)
    np.testing.assert_array_equal(s.slots(np.array(sorted(touched))) >= 0, True)
    untouched = np.setdiff1d(np.arange(tiny_corpus.n_pages), np.array(sorted(touched)))
    assert np.all(s.slots(untouched) == -1)
    # a page column reads a page the crawl never touched as the field's reset value
    f = {f.name: f for f in FIELDS}
    for name in ("status", "best_parent", "fr_pos", "n_par", "rel"):
        assert np.all(getattr(s, name)[untouched] == f[name].reset), name
    with pytest.raises(ValueError, match="never touched"):
        s.status[int(untouched[0])] = 1
    # the dense view and the per-page reads agree
    dense = np.asarray(s.link_rel)
    assert dense.shape == (tiny_corpus.n_pages,)
    np.testing.assert_array_equal(dense[np.asarray(s.frontier)], s.link_rel[np.asarray(s.frontier)])
    assert (s.status == FRONTIER).sum() == s.fr_size


@pytest.mark.parametrize("cap", [None, 2])
def test_columns_grow_without_changing_the_crawl(tiny_corpus, cap):
    """A crawl that starts with 16 slots grows its columns (and rebuilds its page map) several times and fetches
    exactly what a crawl that never grows fetches."""
    runs = []
    for slots in (MIN_SLOTS, 16):
        env = gym.make("WikiCrawl-v0", corpus=tiny_corpus, domain_cap=cap, max_episode_steps=81).unwrapped
        env.set_budget(81)
        if slots != MIN_SLOTS:
            env.adopt_crawl_storage(allocate(slots, env.n_categories))
        obs, info = env.reset(seed=3)
        rng = np.random.default_rng(3)
        trace = [obs["candidates"].copy()]
        for _ in range(80):
            valid = np.flatnonzero(info["action_mask"])
            obs, r, term, _, info = env.step(int(rng.choice(valid)))
            trace += [obs["candidates"].copy(), r, info["fetched_page"], info["frontier_size"]]
            if term:
                break
        runs.append((trace, env.state))
    (a, sa), (b, sb) = runs
    assert sb.slot_capacity > 16 and sb.slot_capacity < MIN_SLOTS
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))
    pages = np.arange(tiny_corpus.n_pages)
    for f in FIELDS:
        if f.store != "domain":
            np.testing.assert_array_equal(getattr(sa, f.name)[pages], getattr(sb, f.name)[pages], err_msg=f.name)


@pytest.mark.parametrize("cap", [None, 2])
def test_reset_restores_every_field(tiny_corpus, cap):
    env = _crawled_env(tiny_corpus, steps=80, cap=cap)
    s = env.state
    assert s.n_fetched > 10
    fresh = type(s)(tiny_corpus, n_categories=s.n_categories, beta=s.beta)
    s.reset(env.scorer, env.scheme, cap)
    for f in FIELDS:
        np.testing.assert_array_equal(s.arrays[f.name], fresh.arrays[f.name], err_msg=f"{f.name} leaks across reset")
    assert s.n_slots == 0 and np.all(s.arrays["map_keys"] == -1)
    assert (s.fr_size, s.n_fetched, s.relevant_found, s.reward_sum) == (0, 0, 0, 0.0)


def test_best_link_is_the_discovering_link_with_the_best_text(tiny_corpus):
    env = _crawled_env(tiny_corpus, steps=40)
    s = env.state
    F = np.asarray(s.frontier, np.int64)
    bl = s.best_link[F]
    assert np.all(bl >= 0)
    assert np.all(s.link_dst[bl] == F), "best_link points to another page"
    src = np.searchsorted(tiny_corpus.link_ptr, bl, side="right") - 1
    assert np.all(s.status[src] == 2), "best_link comes from an unfetched page"
    ls = env.scorer.score_links(bl)
    np.testing.assert_array_equal(ls.rel, s.link_rel[F])
    np.testing.assert_array_equal(ls.cat, s.link_cat[F])
    # no other fetched page's link to the same target has strictly better text
    fetched = s.fetched_pages()
    for p in fetched[:10]:
        a, b = int(s.link_lo[p]), int(s.link_hi[p])
        dst = s.link_dst[a:b]
        on = s.status[dst] == FRONTIER
        if on.any():
            rel = env.scorer.score_links(np.arange(a, b)[on]).rel
            assert np.all(rel <= s.link_rel[dst[on]])


@pytest.mark.parametrize("n_envs", [None, 3])
def test_allocate_and_grow_hold_reset_values_and_the_old_slots(n_envs):
    """Stacked crawls' arrays are views of one allocation, each aligned and apart from the others; a fresh array
    holds its reset value, a grown one the old slots in its first slots and reset values past them."""
    from gym_crawl.crawl.fields import grow

    f = {x.name: x for x in FIELDS}
    a = allocate(16, 2, n_envs)
    rng = np.random.default_rng(0)
    maps = ("map_keys", "map_slots", "dmap_keys", "dmap_slots")
    for keys, slots in (("map_keys", "map_slots"), ("dmap_keys", "dmap_slots")):  # an entry's key and slot adjacent
        assert a[slots].ctypes.data - a[keys].ctypes.data == 4 and a[keys].strides[-1] == 8, keys
    for name, arr in a.items():
        want = f[name].reset if name in f else (-1 if name in maps else 0)
        assert np.all(arr == want), name
        assert (name in maps or arr.flags.c_contiguous) and arr.flags.writeable and arr.flags.aligned, name
        # stacked: each at a 64-byte boundary (a map's slots 4 bytes after its keys)
        assert n_envs is None or arr.ctypes.data % 64 == (4 if name.endswith("map_slots") else 0), name
        arr[...] = rng.integers(0, 100, arr.shape).astype(arr.dtype)  # distinct contents in every array
    before = {k: v.copy() for k, v in a.items()}
    for name, arr in a.items():  # no array overlaps another: every one kept what was written into it
        np.testing.assert_array_equal(arr, before[name], err_msg=name)
    g = grow(a, 64, 2, n_envs)
    ax = 0 if n_envs is None else 1
    for name, arr in g.items():
        old = before[name]
        if name in ("map_keys", "map_slots", "dmap_keys", "dmap_slots"):  # left empty: rehashed by the caller
            assert arr.shape[ax] == 128 and np.all(arr == -1), name
        else:  # per-slot and per-domain-slot columns alike
            assert arr.shape[ax] == 64, name
            np.testing.assert_array_equal(arr[(slice(None),) * ax + (slice(0, 16),)], old, err_msg=name)
            want = f[name].reset if name in f else 0
            assert np.all(arr[(slice(None),) * ax + (slice(16, None),)] == want), name


def _scramble(arrays: dict[str, np.ndarray], rng: np.random.Generator) -> None:
    """Arbitrary bits in every one of a crawl's ``arrays`` (a map's keys or slots: every other int32 of its entries)."""
    for a in arrays.values():
        if a.strides[-1] == a.itemsize:
            a.view(np.uint8)[...] = rng.integers(0, 256, a.view(np.uint8).shape, dtype=np.uint8)
        else:
            a[...] = rng.integers(-2**31, 2**31, a.shape, dtype=np.int32)


@pytest.mark.parametrize("rows", ["all", "some"])
def test_reset_rows_and_reset_slots_write_the_reset_values_bit_for_bit(rows):
    """The clearing of N stacked crawls (``reset_rows``, written as bytes where the value allows) and of one crawl
    (``reset_slots``) leave exactly what assigning each field's reset value would: slots ``:n_used`` of the rows
    reset, the maps emptied, everything else untouched."""
    from gym_crawl.crawl.fields import reset_rows, reset_slots

    n_envs, n_slots, n_used = 5, 64, 37
    rng = np.random.default_rng(1)
    stack = allocate(n_slots, 3, n_envs=n_envs)
    _scramble(stack, rng)
    want = {k: v.copy() for k, v in stack.items()}
    sel = np.arange(n_envs) if rows == "all" else np.array([1, 3])
    for f in FIELDS:
        want[f.name][sel, :n_used] = f.reset
    for k in ("map_keys", "map_slots", "dmap_keys", "dmap_slots"):  # the maps' entries, -1 -1 when empty
        want[k][sel] = -1
    reset_rows(stack, sel, n_used)
    for k in stack:
        np.testing.assert_array_equal(np.ascontiguousarray(stack[k]).view(np.uint8), want[k].view(np.uint8),
                                      err_msg=k)
    one = {k: v[2].copy() for k, v in stack.items()}
    want_one = {k: v.copy() for k, v in one.items()}
    for f in FIELDS:
        want_one[f.name][:n_used] = f.reset
    for k in ("map_keys", "dmap_keys"):  # copied maps are apart from their slots: only the keys emptied
        want_one[k][:] = -1
    reset_slots(one, n_used)
    for k in one:
        np.testing.assert_array_equal(one[k].view(np.uint8), want_one[k].view(np.uint8), err_msg=k)


@pytest.mark.parametrize("stacked", [True, False])
def test_clear_rows_writes_each_crawls_reset_values_over_the_slots_it_used(stacked):
    """The compiled clear (``clear_rows`` with the arrays' ``clear_plan``) leaves what assigning each field's reset
    value would: crawl ``r``'s page columns over its own ``n_slots[r]`` slots, its domain columns over its
    ``n_dslots[r]`` domain slots, its maps emptied; other crawls and slots untouched, bit for bit."""
    from gym_crawl.crawl.fields import clear_plan, clear_rows, env_rows

    rng = np.random.default_rng(2)
    # unstacked: a vector env's sub-env (its CrawlState's arrays are its rows of the stack); a crawl of its own
    # allocates its arrays one by one, so it has no plan and resets column by column
    stack = allocate(64, 3, n_envs=5) if stacked else env_rows(allocate(64, 3, n_envs=2), 1)
    assert clear_plan(allocate(64, 3), stacked=False) is None
    _scramble(stack, rng)
    want = {k: v.copy() for k, v in stack.items()}
    if stacked:
        rows, ns, nd = np.array([1, 3]), np.array([9, 37, 5, 64, 2]), np.array([1, 4, 2, 7, 3])
    else:
        rows, ns, nd = np.array([0]), np.array([37]), np.array([4])
    for r in rows:
        for f in FIELDS:
            w = want[f.name][r] if stacked else want[f.name]
            w[:nd[r] if f.store == "domain" else ns[r]] = f.reset
        for k in ("map_keys", "map_slots", "dmap_keys", "dmap_slots"):
            (want[k][r] if stacked else want[k])[...] = -1
    plan = clear_plan(stack, stacked=stacked)
    assert plan is not None
    clear_rows(plan, rows, ns, nd)
    for k in stack:
        np.testing.assert_array_equal(np.ascontiguousarray(stack[k]).view(np.uint8),
                                      np.ascontiguousarray(want[k]).view(np.uint8), err_msg=k)
    if stacked:  # a sub-env's rows of the stack (its CrawlState's arrays) have their own plan; copies have none
        assert clear_plan(env_rows(stack, 2), stacked=False) is not None
        assert clear_plan({k: v[2].copy() for k, v in stack.items()}, stacked=False) is None
