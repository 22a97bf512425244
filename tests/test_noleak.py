"""Fairness: nothing about an unfetched page's content or labels reaches the agent.

Two corpora differ only in the text and labels of pages the crawl has discovered but not
fetched. Driving both envs with the same actions must give identical observations, rewards,
candidate sets and info (except ground-truth-based metrics, which only count fetched pages).
The pre-trained text model (IDF sample + word vectors, like GloVe in the papers) is held fixed.
"""
from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest

import gym_crawl  # noqa: F401
from gym_crawl.corpus.core import Corpus
from gym_crawl.text.model import TextModel, get_text_model


def _tamper(c: Corpus, pages: np.ndarray) -> Corpus:
    """Copy of ``c`` where ``pages`` get the text of the topic's main page and the topic label."""
    donor = c.page_id("Geology")
    lab_geo = c.labels.index("subject.geo")
    bags, labs = [], []
    for p in range(c.n_pages):
        src = donor if p in set(pages.tolist()) else p
        a, b = c.text_ptr[src], c.text_ptr[src + 1]
        bags.append((c.text_terms[a:b], c.text_counts[a:b]))
        labs.append([lab_geo] if p in set(pages.tolist()) else c.label_ids[c.label_ptr[p]:c.label_ptr[p + 1]].tolist())
    ptr = np.zeros(c.n_pages + 1, np.int64)
    ptr[1:] = np.cumsum([len(t) for t, _ in bags])
    lptr = np.zeros(c.n_pages + 1, np.int64)
    lptr[1:] = np.cumsum([len(l) for l in labs])
    return dataclasses.replace(
        c, text_ptr=ptr, text_terms=np.concatenate([t for t, _ in bags]).astype(np.int32),
        text_counts=np.concatenate([k for _, k in bags]).astype(np.int32),
        label_ptr=lptr, label_ids=np.asarray([x for l in labs for x in l], np.int32), path=None)


@pytest.mark.parametrize("features,reducer", [("combined", "topk"), ("han2018", "random"), ("tres", "outlinks")])
def test_unfetched_content_never_observed(tiny_corpus, features, reducer):
    steps = 60
    tm = get_text_model(tiny_corpus)
    env_a = gym.make("WikiCrawl-v0", corpus=tiny_corpus, text=tm, features=features, reducer=reducer,
                     max_steps=steps + 5)
    actions, obs_a = [], []
    obs, info = env_a.reset(seed=7)
    obs_a.append((obs, info))
    rng = np.random.default_rng(0)
    for _ in range(steps):
        a = int(rng.choice(np.flatnonzero(info["action_mask"])))
        actions.append(a)
        obs, r, *_, info = env_a.step(a)
        obs_a.append((obs, r, info))
    st = env_a.unwrapped.state
    fetched = set(st.fetched_pages().tolist())
    unfetched_seen = np.asarray(sorted(set(st.frontier.tolist()) - fetched))
    assert len(unfetched_seen) > 20

    tampered = _tamper(tiny_corpus, unfetched_seen)
    tm_b = TextModel(tampered, tm.idf, tm.vectors, tm.meta)
    env_b = gym.make("WikiCrawl-v0", corpus=tampered, text=tm_b, features=features, reducer=reducer,
                     max_steps=steps + 5)
    obs, info = env_b.reset(seed=7)
    records = [(obs, info)]
    for a in actions:
        obs, r, *_, info = env_b.step(a)
        records.append((obs, r, info))
    for ra, rb in zip(obs_a, records):
        oa, ob = ra[0], rb[0]
        for k in oa:
            np.testing.assert_array_equal(oa[k], ob[k])
        ia, ib = ra[-1], rb[-1]
        for k in ("candidate_ids", "fetched_page", "frontier_size", "pages_fetched", "relevant_found",
                  "relevant_domains", "reward_sum"):
            np.testing.assert_array_equal(ia[k], ib[k])
        if len(ra) == 3:
            assert ra[1] == rb[1]
    # and the tampering is real: fetching one of those pages now would differ
    p = int(unfetched_seen[0])
    assert env_b.unwrapped.scorer.score_pages(np.array([p])).label[0]
