"""The hard task (``WikiCrawl-v2``, and ``WikiCrawl-v3``, the default id, under Gymnasium's time-limit convention):
the hard synthetic web with a 100-page budget, while ``WikiCrawl-v1`` and ``WikiCrawl-v0`` keep their defaults
(so their recorded results reproduce)."""
from __future__ import annotations

import warnings

import gymnasium as gym

import gym_crawl
from gym_crawl.agents import make_env_for


def test_v2_defaults_are_the_hard_task_and_older_ids_keep_theirs():
    v3, v2, v1, v0 = (gym.spec(i) for i in (gym_crawl.ENV_ID_V3, gym_crawl.ENV_ID_V2, gym_crawl.ENV_ID,
                                             gym_crawl.ENV_ID_V0))
    # the budget is the registered TimeLimit; v0-v2 observe the fraction of it (handed over by their wrapper)
    assert v3.kwargs == {"corpus": "synthetic-hard", "time_feature": "log_steps"} and v3.max_episode_steps == 100
    assert v2.kwargs == {"corpus": "synthetic-hard", "time_feature": "budget_used"} and v2.max_episode_steps == 100
    assert v1.kwargs == {"time_feature": "budget_used"} and v1.max_episode_steps == 1000
    assert v0.kwargs == {"reward": "han2018", "time_feature": "budget_used"} and v0.max_episode_steps == 1000
    assert gym_crawl.V2_TASK_SET == "hard" and gym_crawl.DEFAULT_ENV_ID == gym_crawl.ENV_ID_V3


def test_v2_budget_reaches_the_env_and_v1_builds_without_a_warning(tiny_corpus):
    env = gym.make(gym_crawl.ENV_ID_V2, corpus=tiny_corpus)
    env.reset(seed=0)
    assert env.unwrapped.budget == 100
    env.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = make_env_for("best-first", corpus=tiny_corpus, max_episode_steps=5, env_id=gym_crawl.ENV_ID)
    assert env.spec.id == gym_crawl.ENV_ID
    env.reset(seed=0)
    assert env.unwrapped.budget == 5
    env.close()
