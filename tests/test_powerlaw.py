"""The power-law web: deterministic, power-law degrees, topical locality, its topics' main pages as seeds, and a
crawl on it whose state follows the pages it touched."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import gym_crawl  # noqa: F401
from gym_crawl.webgen.powerlaw import TOPICS, generate_powerlaw, powerlaw_corpus


def test_same_seed_same_web_and_another_seed_another(tmp_path):
    a = generate_powerlaw(3000, seed=1, folder=tmp_path / "a", progress=False)
    b = generate_powerlaw(3000, seed=1, folder=tmp_path / "b", progress=False)
    c = generate_powerlaw(3000, seed=2, folder=tmp_path / "c", progress=False)
    for name in ("link_ptr", "link_dst", "anchor_terms", "context_terms", "text_terms", "label_ids", "page_domain"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert not np.array_equal(a.link_dst, c.link_dst)


def test_degrees_locality_and_topic_pages(tmp_path):
    c = generate_powerlaw(20_000, seed=0, folder=tmp_path, progress=False)
    out = c.out_degree()
    assert out.min() >= 2 and out.max() <= 150 and 4.0 < out.mean() < 6.0
    ind = c.in_degree()
    assert ind.max() > 50 * np.median(ind), "in-degrees have a heavy tail (popular pages)"
    src = np.repeat(np.arange(c.n_pages), out)
    same_dom = np.mean(c.page_domain[src] == c.page_domain[c.link_dst])
    same_topic = np.mean(c.label_ids[src] == c.label_ids[c.link_dst])
    assert 0.5 < same_dom < 0.7 and same_topic > 0.6
    for t, name in enumerate(TOPICS):  # each topic's main page is titled with its name, labelled, much linked
        p = c.titles.get(name)
        assert p == c.n_pages - len(TOPICS) + t and c.label_ids[p] == t and ind[p] > 5 * np.median(ind)
    assert c.titles[0] == "page0000000"
    with pytest.raises(ValueError, match="n_pages must be"):
        generate_powerlaw(10, folder=tmp_path / "x")


def test_cached_and_crawled_through_the_registry(tmp_path, monkeypatch):
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path))
    c = powerlaw_corpus(5000, progress=False)
    assert c.path is not None and c.path.parent == tmp_path and not list(tmp_path.glob("powerlaw-*/*.partial"))
    again = powerlaw_corpus(5000, progress=False)
    assert again.checksum == c.checksum
    env = gym.make("WikiCrawl-v3", corpus="powerlaw-5000", topic="music")
    _, info = env.reset(seed=0)
    for _ in range(30):
        _, _, term, trunc, info = env.step(0)
    st = env.unwrapped.state
    assert info["pages_fetched"] == 31 and 0 < st.n_slots < c.n_pages
    assert st.n_slots == st.n_fetched + st.fr_size
