"""The ``crawler`` feature set (host, depth and sibling statistics): each column recomputed independently from
the crawl's record (fetched pages, their relevant flags, the fetched parents' out-links). That no column reads
an unfetched page is checked for every registered feature set by tests/test_conformance.py."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from gym_crawl.agents import make_agent, run_episode


def test_crawler_columns_match_an_independent_count(tiny_corpus):
    env = gym.make("WikiCrawl-v1", corpus=tiny_corpus, features="crawler", reward="labels", max_candidates=8,
                   max_episode_steps=30)
    base = env.unwrapped
    assert base.view.feature_names == ["a.same_host", "s.parent_depth", "a.host_fetched", "a.host_relevant_ratio",
                                  "a.host_unseen", "s.siblings_fetched", "s.siblings_relevant_ratio", "bias"]
    assert not base.view.features_local
    run_episode(env, make_agent("best-first"), seed=0)
    st = base.state
    fetched = [int(p) for p in base.view.fetched_pages()]
    relevant = {p for p in fetched if st.relevant[p]}
    frontier = np.asarray(base.view.frontier_pages(), dtype=np.int64)
    x = base.view.features_of(frontier)
    dom = np.asarray(tiny_corpus.page_domain)
    saw_cross = saw_same = saw_sib = False
    for row, u in zip(x, frontier.tolist()):
        bp = int(st.best_parent[u])
        assert bp in fetched
        assert row[0] == float(dom[u] == dom[bp])
        saw_same |= row[0] == 1.0
        saw_cross |= row[0] == 0.0
        host = [p for p in fetched if dom[p] == dom[u]]
        assert row[2] == pytest.approx(min(np.log1p(len(host)) / np.log1p(1000), 1.0), abs=1e-6)
        assert row[3] == pytest.approx(sum(p in relevant for p in host) / len(host) if host else 0.0, abs=1e-6)
        assert row[4] == float(not host)
        sibs = {int(v) for v in base.view.fetched_outlinks(bp)} & set(fetched) - {bp}
        assert row[5] == pytest.approx(min(np.log1p(len(sibs)) / np.log1p(100), 1.0), abs=1e-6)
        assert row[6] == pytest.approx(sum(p in relevant for p in sibs) / len(sibs) if sibs else 0.0, abs=1e-6)
        saw_sib |= len(sibs) > 0
        assert 0.0 <= row[1] <= 1.0 and row[7] == 1.0
    assert saw_cross and saw_same and saw_sib  # the crawl exercised every branch
    env.close()


def test_crawler_features_combine_with_other_sets(tiny_corpus):
    from gym_crawl.features import CombinedFeatures, get_feature_set
    from gym_crawl.features.crawler import CrawlerFeatures

    fs = CombinedFeatures([get_feature_set("tres-local"), CrawlerFeatures()])
    env = gym.make("WikiCrawl-v1", corpus=tiny_corpus, features=fs, max_candidates=8, max_episode_steps=10)
    obs, _ = env.reset(seed=0)
    assert obs["candidates"].shape[1] == fs.dim and "a.same_host" in env.unwrapped.view.feature_names
    env.close()
