"""The batched vector env (``vectorization_mode="vector_entry_point"``) is N single crawls, bit for bit."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence

import gym_crawl  # noqa: F401
from gym_crawl.envs import WikiCrawlVectorEnv


def _actions(rng, masks, action):
    if action == "slot":
        return np.array([rng.integers(m.shape[0]) for m in masks])  # masked slots included
    return np.array([int(rng.choice(np.flatnonzero(m))) if rng.random() < 0.9 else int(rng.integers(len(m)))
                     for m in masks])


@pytest.mark.parametrize("action", ["slot", "page"])
@pytest.mark.parametrize("reducer", ["topk", "random", "tree"])
def test_same_trajectories_as_sync_vector_env(tiny_corpus, tmp_path, action, reducer):
    kw = dict(corpus=tiny_corpus, max_candidates=8, reducer=reducer, action=action, max_episode_steps=6)
    fast = gym.make_vec("WikiCrawl-v1", num_envs=3, vectorization_mode="vector_entry_point", **kw)
    ref = gym.make_vec("WikiCrawl-v1", num_envs=3, vectorization_mode="sync", **kw)
    assert isinstance(fast.unwrapped, WikiCrawlVectorEnv)
    assert fast.observation_space == ref.observation_space and fast.action_space == ref.action_space
    a = fast.reset(seed=11)
    b = ref.reset(seed=11)
    assert data_equivalence(a, b)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(20):
        masks = fast.unwrapped.action_masks()
        np.testing.assert_array_equal(masks, np.stack(ref.call("action_masks")))
        acts = _actions(rng, masks, action)
        a = fast.step(acts)
        b = ref.step(acts)
        assert data_equivalence(a, b), "vector entry point and SyncVectorEnv disagree"
        ended += int(np.sum(a[2] | a[3]))
    assert ended >= 3  # crossed the autoreset of every sub-env


def test_shares_one_corpus_and_text_model(tiny_corpus):
    v = gym.make_vec("WikiCrawl-v1", num_envs=4, vectorization_mode="vector_entry_point", corpus=tiny_corpus)
    envs = v.unwrapped.envs
    assert all(e.corpus is envs[0].corpus and e.text is envs[0].text for e in envs)


def test_bad_arguments(tiny_corpus):
    with pytest.raises(ValueError, match="num_envs"):
        WikiCrawlVectorEnv(num_envs=0, corpus=tiny_corpus)
    v = gym.make_vec("WikiCrawl-v1", num_envs=2, vectorization_mode="vector_entry_point", corpus=tiny_corpus)
    v.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        v.step(np.zeros(3, int))
    with pytest.raises(ValueError, match="2 seeds"):
        v.reset(seed=[1, 2, 3])
