"""CrawlState's field table: every column is allocated and reset from it, and ``best_link`` is the
discovering link whose text gives ``link_rel``."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import gym_crawl  # noqa: F401
from gym_crawl.crawl import FRONTIER
from gym_crawl.crawl.fields import FIELDS, SLOT_ARRAYS


def _crawled_env(corpus, steps=60, cap=None, seed=0):
    env = gym.make("WikiCrawl-v0", corpus=corpus, domain_cap=cap, max_episode_steps=steps + 1).unwrapped
    env.set_budget(steps + 1)
    _, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        valid = np.flatnonzero(info["action_mask"])
        _, _, term, _, info = env.step(int(rng.choice(valid)))
        if term:
            break
    return env


def test_every_array_is_a_field(tiny_corpus):
    env = _crawled_env(tiny_corpus, steps=5)
    s = env.state
    names = {f.name for f in FIELDS} | {n for n, _ in SLOT_ARRAYS}
    per_page = {k for k, v in vars(s).items() if isinstance(v, np.ndarray) and len(v) == tiny_corpus.n_pages
                and k not in ("link_dst", "link_lo", "link_hi", "page_domain")
                and not k.startswith("_")}  # corpus arrays, work space
    assert per_page <= names, f"arrays outside the field table: {sorted(per_page - names)}"
    assert set(s.arrays) == names
    assert np.all(s._tslot == -1), "the expand kernel's per-target slots are restored after each fetch"


@pytest.mark.parametrize("cap", [None, 2])
def test_reset_restores_every_field(tiny_corpus, cap):
    env = _crawled_env(tiny_corpus, steps=80, cap=cap)
    s = env.state
    assert s.n_fetched > 10
    fresh = type(s)(tiny_corpus, n_categories=s.n_categories, beta=s.beta)
    s.reset(env.scorer, env.scheme, cap)
    for f in FIELDS:
        np.testing.assert_array_equal(s.arrays[f.name], fresh.arrays[f.name], err_msg=f"{f.name} leaks across reset")
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
