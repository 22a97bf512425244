"""The budget an agent observes is the budget that truncates, in every documented construction.

What the agent observes of the budget: the state vector's ``budget_used`` (``obs["state"][0]`` = steps / budget)
and ``info["steps"]``. Each construction runs to its end and checks that the episode is truncated exactly
when ``budget_used`` reaches 1, or that the mismatch is refused with an error naming both numbers.
"""
from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.wrappers import TimeLimit

import gym_crawl
from gym_crawl.agents import make_agent, make_env_for, run_episode
from gym_crawl.envs import WikiCrawlEnv, check_budget, make_vector_env
from gym_crawl.envs.budget import time_limits

pytestmark = pytest.mark.filterwarnings("ignore:.*WikiCrawl-v1 is out of date")


def _crawl(env, seed=0):
    """Step the first filled slot until the episode ends: (budget_used per step, info["steps"] per step, truncated)."""
    obs, info = env.reset(seed=seed)
    assert obs["state"][0] == 0.0 and info["steps"] == 0
    used, steps = [], []
    while True:
        obs, _, term, trunc, info = env.step(0)
        used.append(float(obs["state"][0]))
        steps.append(int(info["steps"]))
        if term or trunc:
            return used, steps, bool(trunc)


def _assert_truncated_at(env, budget):
    used, steps, trunc = _crawl(env)
    assert trunc and len(used) == budget and steps == list(range(1, budget + 1))
    np.testing.assert_allclose(used, np.arange(1, budget + 1) / budget, rtol=1e-6)
    assert env.unwrapped.budget == budget


def test_make_with_max_episode_steps_truncates_where_budget_used_reaches_one(tiny_corpus):
    env = gym.make("WikiCrawl-v1", corpus=tiny_corpus, max_episode_steps=6)
    assert time_limits(env) == [6] and env.unwrapped.budget == 6  # make's TimeLimit, handed to the env at make
    _assert_truncated_at(env, 6)
    assert check_budget(env) == 6
    with pytest.raises(RuntimeError, match="episode is over.*max_episode_steps=6"):
        env.unwrapped.step(0)  # the env itself refuses past its budget, not only the TimeLimit


def test_make_without_max_episode_steps_uses_the_registered_budget_and_no_time_limit(tiny_corpus):
    env = gym.make("WikiCrawl-v1", corpus=tiny_corpus)
    assert env.spec.max_episode_steps is None and time_limits(env) == []
    assert env.unwrapped.budget == gym_crawl.DEFAULT_MAX_EPISODE_STEPS
    env.reset(seed=0)
    obs, *_ = env.step(0)
    assert obs["state"][0] == pytest.approx(1 / gym_crawl.DEFAULT_MAX_EPISODE_STEPS)
    v2 = gym.make(gym_crawl.ENV_ID_V2, corpus=tiny_corpus)
    _assert_truncated_at(v2, gym_crawl.V2_MAX_EPISODE_STEPS)


def test_env_spec_round_trip_keeps_the_budget(tiny_corpus):
    env = gym.make("WikiCrawl-v1", corpus=tiny_corpus, max_episode_steps=4)
    again = gym.make(env.spec)
    assert again.unwrapped.budget == 4 and time_limits(again) == [4]
    _assert_truncated_at(again, 4)


def test_check_env_on_unwrapped_first_then_wrapped_use(tiny_corpus):
    """check_env on .unwrapped before any wrapped reset used to leave the env without a budget for its life."""
    from gymnasium.utils.env_checker import check_env

    env = gym.make("WikiCrawl-v1", corpus=tiny_corpus, max_episode_steps=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env.unwrapped)
    _assert_truncated_at(env, 6)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_sync_and_async(tiny_corpus, tmp_path_factory, mode):
    kw = {"corpus": tiny_corpus}
    if mode == "async":  # workers load the corpus by path
        path = tmp_path_factory.mktemp("c") / "tiny"
        tiny_corpus.save(path)
        kw["corpus"] = str(path)
    v = gym.make_vec("WikiCrawl-v1", num_envs=2, vectorization_mode=mode, max_episode_steps=5, **kw)
    try:
        assert v.get_attr("budget") == (5, 5)
        obs, _ = v.reset(seed=0)
        for t in range(1, 6):
            obs, _, term, trunc, info = v.step(np.zeros(2, np.int64))
            np.testing.assert_allclose(obs["state"][:, 0], t / 5, rtol=1e-6)
            assert info["steps"].tolist() == [t, t]
            assert trunc.tolist() == [t == 5] * 2 and not term.any()
    finally:
        v.close()
    d = gym.make_vec("WikiCrawl-v1", num_envs=2, vectorization_mode="sync", corpus=tiny_corpus)
    assert d.get_attr("budget") == (gym_crawl.DEFAULT_MAX_EPISODE_STEPS,) * 2
    d.close()


def test_batched_vector_env_truncates_at_its_budget(tiny_corpus):
    v = make_vector_env("WikiCrawl-v1", num_envs=2, corpus=tiny_corpus, max_episode_steps=5)
    assert v.call("budget") == (5, 5) and v.spec.kwargs["max_episode_steps"] == 5
    obs, _ = v.reset(seed=0)
    for t in range(1, 6):
        obs, _, term, trunc, info = v.step(np.zeros(2, np.int64))
        np.testing.assert_allclose(obs["state"][:, 0], t / 5, rtol=1e-6)
        assert trunc.tolist() == [t == 5] * 2 and info["steps"].tolist() == [t, t]
    assert make_vector_env(gym_crawl.ENV_ID_V2, num_envs=1, corpus=tiny_corpus).call("budget") == (
        gym_crawl.V2_MAX_EPISODE_STEPS,)
    with pytest.raises(gym.error.Error, match="additional_wrappers"):  # Gymnasium's own refusal, documented
        gym.make_vec("WikiCrawl-v1", num_envs=2, vectorization_mode="vector_entry_point", corpus=tiny_corpus)
    with pytest.raises(ValueError, match="not a WikiCrawl env"):
        make_vector_env("CartPole-v1", num_envs=1)


def test_make_env_for_and_run_episode(tiny_corpus):
    env = make_env_for("best-first", corpus=tiny_corpus, max_episode_steps=7)
    assert env.unwrapped.budget == 7 and check_budget(env) == 7
    r = run_episode(env, make_agent("best-first"), seed=0)
    assert r.steps == 7 and r.relevant_curve.shape == (7,)


def test_hand_wrapping_consistent_runs_and_inconsistent_is_refused(tiny_corpus):
    ok = TimeLimit(WikiCrawlEnv(corpus=tiny_corpus, max_episode_steps=5), 5)
    assert check_budget(ok) == 5
    assert run_episode(ok, make_agent("best-first"), seed=0).steps == 5
    bad = TimeLimit(WikiCrawlEnv(corpus=tiny_corpus), 5)  # the env has no budget: budget_used would stay 0
    with pytest.raises(ValueError, match=r"TimeLimit\(max_episode_steps=5\).*no budget"):
        check_budget(bad)
    with pytest.raises(ValueError, match=r"max_episode_steps=5\).*add no TimeLimit of your own"):
        run_episode(bad, make_agent("best-first"), seed=0)
    shorter = TimeLimit(WikiCrawlEnv(corpus=tiny_corpus, max_episode_steps=9), 5)
    with pytest.raises(ValueError, match=r"TimeLimit\(max_episode_steps=5\).*max_episode_steps=9"):
        check_budget(shorter)
    assert check_budget(WikiCrawlEnv(corpus=tiny_corpus, max_episode_steps=3)) == 3  # no TimeLimit at all


def test_nested_time_limit_is_refused_naming_both_numbers(tiny_corpus):
    """TimeLimit(gym.make(..., max_episode_steps=20), 5) used to truncate at 5 and report 25 % of the budget."""
    env = TimeLimit(gym.make("WikiCrawl-v1", corpus=tiny_corpus, max_episode_steps=20), 5)
    assert time_limits(env) == [5, 20] and env.unwrapped.budget == 20
    with pytest.raises(ValueError, match=r"TimeLimit\(max_episode_steps=5\) wraps a crawl env with "
                                         r"max_episode_steps=20.*gym.make\(id, max_episode_steps=5\)"):
        check_budget(env)
    with pytest.raises(ValueError, match="max_episode_steps=20"):
        run_episode(env, make_agent("best-first"), seed=0)


def test_adaptive_domain_cap_falls_over_the_budget_from_make(tiny_corpus):
    env = gym.make("WikiCrawl-v1", corpus=tiny_corpus, domain_cap="5-2", max_episode_steps=8)
    _assert_truncated_at(env, 8)  # the cap needs the budget at the first reset: no error, truncated at 8
    with pytest.raises(ValueError, match="adaptive domain_cap.*needs a step budget"):
        WikiCrawlEnv(corpus=tiny_corpus, domain_cap="5-2").reset(seed=0)
