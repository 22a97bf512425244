"""A new user's first hour: masks, trained models in the CLI, reports that say what they are, outputs where
the user is, local copies of named datasets, CLI conventions and the RLlib extra."""
from __future__ import annotations

import re
from pathlib import Path

import gymnasium as gym
import numpy as np

import gym_crawl  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- one mask dtype
def test_every_mask_is_bool_and_agrees(tiny_corpus):
    env = gym.make("WikiCrawl-v1", corpus=tiny_corpus, topic="cancer", max_candidates=16, max_episode_steps=20)
    obs, info = env.reset(seed=0)
    assert env.observation_space["mask"].dtype == np.bool_
    for _ in range(5):
        masks = (obs["mask"], info["action_mask"], env.unwrapped.action_masks())
        assert all(m.dtype == np.bool_ for m in masks), [m.dtype for m in masks]
        assert np.array_equal(masks[0], masks[1]) and np.array_equal(masks[1], masks[2])
        assert env.observation_space.contains(obs)
        ids = info["candidate_ids"][info["action_mask"]]  # boolean selection, not positions 0/1
        assert (ids >= 0).all() and len(ids) == int(info["action_mask"].sum())
        obs, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        if term or trunc:
            break


def test_vector_env_masks_are_bool(tiny_corpus):
    from gym_crawl.envs.vector import WikiCrawlVectorEnv

    v = WikiCrawlVectorEnv(2, corpus=tiny_corpus, topic="cancer", max_candidates=8, max_episode_steps=10)
    v.reset(seed=0)
    obs, *_ = v.step(np.zeros(2, np.int64))
    assert obs["mask"].dtype == np.bool_ and v.action_masks().dtype == np.bool_
    assert np.array_equal(obs["mask"], v.action_masks())
    v.close()


def test_readme_ten_lines_run_as_written():
    code = re.search(r"## Ten lines\n\n```python\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL).group(1)
    assert ".astype" not in code
    code = code.replace('gym.make("WikiCrawl-v1", ', 'gym.make("WikiCrawl-v1", corpus="synthetic-2000", ', 1)
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)  # noqa: S102 - the README's own example
    assert ns["info"]["steps"] == 500 or ns["terminated"]
