"""What an agent observes of time agrees with the limit that truncates, in every documented construction.

``WikiCrawl-v3`` (Gymnasium's convention): the registered ``TimeLimit`` truncates, and ``state[0]`` observes the
steps taken (``log_steps``), so any limit — made, vectorized, hand-added, nested — is consistent; the fraction
of the limit is what Gymnasium's ``TimeAwareObservation`` adds. ``WikiCrawl-v0``…``-v2`` observe the fraction of
the env's own budget (``budget_used``): each construction runs to its end and checks that the episode is
truncated exactly when it reaches 1, or that the mismatch is refused with an error naming both numbers.
"""
from __future__ import annotations

import math
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.wrappers import TimeAwareObservation, TimeLimit

import gym_crawl
from gym_crawl.agents import make_agent, make_env_for, run_episode
from gym_crawl.envs import DEFAULT_ENV_ID, WikiCrawlEnv, check_budget, make_vector_env
from gym_crawl.envs.budget import time_limits
from gym_crawl.wrappers.factory import make_env, make_vec_env

pytestmark = pytest.mark.filterwarnings("ignore:.*WikiCrawl-v[0-2] is out of date")

OLD_IDS = (gym_crawl.ENV_ID_V0, gym_crawl.ENV_ID, gym_crawl.ENV_ID_V2)


def _crawl(env, seed=0):
    """Step the first filled slot until the episode ends: (state[0] per step, info["steps"] per step, truncated)."""
    obs, info = env.reset(seed=seed)
    assert obs["state"][0] == 0.0 and info["steps"] == 0
    used, steps = [], []
    while True:
        obs, _, term, trunc, info = env.step(0)
        used.append(float(obs["state"][0]))
        steps.append(int(info["steps"]))
        if term or trunc:
            return used, steps, bool(trunc)


def _log_steps(n_pages: int, t: np.ndarray) -> np.ndarray:
    return np.log1p(t) / math.log1p(n_pages)


def _assert_truncated_at(env, budget):
    """A budget_used env: truncated at ``budget`` steps, where state[0] reaches 1."""
    used, steps, trunc = _crawl(env)
    assert trunc and len(used) == budget and steps == list(range(1, budget + 1))
    np.testing.assert_allclose(used, np.arange(1, budget + 1) / budget, rtol=1e-6)
    assert env.unwrapped.budget == budget


# ----------------------------------------------------------------------------- WikiCrawl-v3
def test_default_id_is_v3_registered_with_gymnasiums_time_limit():
    spec = gym.spec(DEFAULT_ENV_ID)
    assert DEFAULT_ENV_ID == gym_crawl.DEFAULT_ENV_ID == "WikiCrawl-v3"
    assert spec.max_episode_steps == gym_crawl.V3_MAX_EPISODE_STEPS == 100
    assert spec.vector_entry_point == "gym_crawl.envs.vector:WikiCrawlVectorEnv"
    assert spec.additional_wrappers == () and spec.kwargs == gym_crawl.V3_KWARGS
    assert spec.kwargs["time_feature"] == "log_steps"


@pytest.mark.parametrize("limit", [5, 9])
def test_v3_make_truncates_at_any_limit_and_observes_steps_taken(tiny_corpus, limit):
    env = gym.make("WikiCrawl-v3", corpus=tiny_corpus, max_episode_steps=limit)
    assert time_limits(env) == [limit] and env.spec.max_episode_steps == limit
    assert env.unwrapped.budget is None and env.unwrapped.state_names[0] == "log_steps"
    used, steps, trunc = _crawl(env)
    assert trunc and steps == list(range(1, limit + 1))  # the TimeLimit truncates
    np.testing.assert_allclose(used, _log_steps(tiny_corpus.n_pages, np.arange(1, limit + 1)), rtol=1e-6)
    assert check_budget(env) == limit


def test_v3_observation_does_not_depend_on_the_limit(tiny_corpus):
    a = gym.make("WikiCrawl-v3", corpus=tiny_corpus, max_episode_steps=5)
    b = gym.make("WikiCrawl-v3", corpus=tiny_corpus, max_episode_steps=50)
    oa, _ = a.reset(seed=3)
    ob, _ = b.reset(seed=3)
    for _ in range(5):
        for x, y in zip(oa.values(), ob.values()):
            np.testing.assert_array_equal(x, y)
        oa, *_ = a.step(1)
        ob, *_ = b.step(1)


def test_v3_time_aware_observation_adds_the_fraction_of_the_limit(tiny_corpus):
    env = TimeAwareObservation(gym.make("WikiCrawl-v3", corpus=tiny_corpus, max_episode_steps=4), flatten=False,
                               normalize_time=True)
    obs, _ = env.reset(seed=0)
    assert obs["time"] == 0.0
    for t in range(1, 5):
        obs, _, _, trunc, _ = env.step(0)
        assert obs["time"][0] == pytest.approx(t / 4) and trunc == (t == 4)


def test_v3_hand_added_and_nested_time_limits_are_gymnasiums(tiny_corpus):
    """A nested TimeLimit is just Gymnasium's: the shorter truncates, and nothing observed disagrees with it."""
    env = TimeLimit(gym.make("WikiCrawl-v3", corpus=tiny_corpus, max_episode_steps=20), 5)
    assert time_limits(env) == [5, 20] and check_budget(env) == 5
    used, steps, trunc = _crawl(env)
    assert trunc and steps == [1, 2, 3, 4, 5]
    bare = TimeLimit(WikiCrawlEnv(corpus=tiny_corpus), 3)
    assert check_budget(bare) == 3 and run_episode(bare, make_agent("best-first"), seed=0).steps == 3
    own = TimeLimit(WikiCrawlEnv(corpus=tiny_corpus, max_episode_steps=2), 7)  # the env's own budget is shorter
    assert check_budget(own) == 2 and run_episode(own, make_agent("best-first"), seed=0).steps == 2


@pytest.mark.parametrize("mode", ["vector_entry_point", "sync"])
def test_v3_make_vec_takes_max_episode_steps_like_cartpole(tiny_corpus, mode):
    v = gym.make_vec("WikiCrawl-v3", num_envs=2, vectorization_mode=mode, corpus=tiny_corpus, max_episode_steps=5)
    try:
        if mode == "vector_entry_point":
            assert isinstance(v, gym_crawl.envs.WikiCrawlVectorEnv) and v.spec.kwargs["max_episode_steps"] == 5
        v.reset(seed=0)
        for t in range(1, 6):
            obs, _, term, trunc, info = v.step(np.zeros(2, np.int64))
            np.testing.assert_allclose(obs["state"][:, 0], _log_steps(tiny_corpus.n_pages, np.array([t, t])),
                                       rtol=1e-6)
            assert trunc.tolist() == [t == 5] * 2 and not term.any() and info["steps"].tolist() == [t, t]
    finally:
        v.close()
    d = gym.make_vec("WikiCrawl-v3", num_envs=1, corpus=tiny_corpus)  # no mode: the vector entry point
    assert isinstance(d, gym_crawl.envs.WikiCrawlVectorEnv) and d.unwrapped.max_episode_steps == 100


def test_v3_adaptive_domain_cap_falls_over_its_own_horizon(tiny_corpus):
    with pytest.raises(ValueError, match="adaptive domain_cap '5-2'.*pass domain_cap_horizon=N"):
        gym.make("WikiCrawl-v3", corpus=tiny_corpus, domain_cap="5-2", max_episode_steps=8).reset(seed=0)
    caps = []
    env = gym.make("WikiCrawl-v3", corpus=tiny_corpus, domain_cap="5-2", domain_cap_horizon=6, max_episode_steps=8)
    env.reset(seed=0)
    for _ in range(8):
        env.step(0)
        caps.append(env.unwrapped.state.domain_cap)
    assert caps[:6] == [round(5 - 3 * min(1, t / 6)) for t in range(1, 7)] and caps[6:] == [2, 2]
    made = make_env("WikiCrawl-v3", corpus=tiny_corpus, domain_cap="5-2", max_episode_steps=8)  # TRES: over the budget
    assert made.unwrapped.domain_cap_horizon == 8
    assert make_env("WikiCrawl-v3", corpus=tiny_corpus, domain_cap="5-2").unwrapped.domain_cap_horizon == 100
    with pytest.raises(ValueError, match="domain_cap_horizon must be >= 1"):
        WikiCrawlEnv(corpus=tiny_corpus, domain_cap="5-2", domain_cap_horizon=0)


def test_time_feature_is_checked(tiny_corpus):
    with pytest.raises(ValueError, match=r"time_feature 'steps': expected one of \('log_steps', 'budget_used'\)"):
        WikiCrawlEnv(corpus=tiny_corpus, time_feature="steps")


# ----------------------------------------------------------------------------- WikiCrawl-v0 … v2
@pytest.mark.parametrize("env_id", OLD_IDS)
def test_old_ids_register_their_budget_as_the_time_limit_and_the_budget_wrapper(env_id):
    spec = gym.spec(env_id)
    assert spec.max_episode_steps == (100 if env_id == gym_crawl.ENV_ID_V2 else 1000)
    assert spec.kwargs["time_feature"] == "budget_used" and "max_episode_steps" not in spec.kwargs
    assert [w.entry_point for w in spec.additional_wrappers] == ["gym_crawl.envs.budget:BudgetFromTimeLimit"]
    assert spec.vector_entry_point is None  # make_vec's default mode is "sync" for them


def test_make_with_max_episode_steps_truncates_where_budget_used_reaches_one(tiny_corpus):
    env = gym.make("WikiCrawl-v1", corpus=tiny_corpus, max_episode_steps=6)
    assert time_limits(env) == [6] and env.unwrapped.budget == 6  # make's TimeLimit, handed to the env at make
    assert env.spec.max_episode_steps == 6
    _assert_truncated_at(env, 6)
    assert check_budget(env) == 6
    with pytest.raises(RuntimeError, match="episode is over.*max_episode_steps=6"):
        env.unwrapped.step(0)  # the env itself refuses past its budget, not only the TimeLimit


def test_make_without_max_episode_steps_uses_the_registered_limit(tiny_corpus):
    env = gym.make("WikiCrawl-v1", corpus=tiny_corpus)
    assert env.spec.max_episode_steps == gym_crawl.DEFAULT_MAX_EPISODE_STEPS
    assert time_limits(env) == [gym_crawl.DEFAULT_MAX_EPISODE_STEPS]
    assert env.unwrapped.budget == gym_crawl.DEFAULT_MAX_EPISODE_STEPS
    env.reset(seed=0)
    obs, *_ = env.step(0)
    assert obs["state"][0] == pytest.approx(1 / gym_crawl.DEFAULT_MAX_EPISODE_STEPS)
    v2 = gym.make(gym_crawl.ENV_ID_V2, corpus=tiny_corpus)
    _assert_truncated_at(v2, gym_crawl.V2_MAX_EPISODE_STEPS)


def test_old_ids_budget_used_agrees_with_time_aware_observation(tiny_corpus):
    """The env's fraction and Gymnasium's own (from the TimeLimit) are the same number at every step."""
    env = TimeAwareObservation(gym.make("WikiCrawl-v2", corpus=tiny_corpus, max_episode_steps=7), flatten=False,
                               normalize_time=True)
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        obs, _, term, trunc, _ = env.step(0)
        assert obs["state"][0] == pytest.approx(float(obs["time"][0]), rel=1e-6)
        done = term or trunc
    assert obs["time"][0] == pytest.approx(1.0)


def test_no_limit_means_no_truncation_and_budget_used_zero(tiny_corpus):
    env = gym.make("WikiCrawl-v1", corpus=tiny_corpus, max_episode_steps=-1)
    assert time_limits(env) == [] and env.unwrapped.budget is None and check_budget(env) is None
    env.reset(seed=0)
    for _ in range(5):
        obs, _, _, trunc, _ = env.step(0)
        assert obs["state"][0] == 0.0 and not trunc


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
    d = gym.make_vec("WikiCrawl-v1", num_envs=2, corpus=tiny_corpus)  # no mode: sync (no vector entry point)
    assert isinstance(d, gym.vector.SyncVectorEnv)
    assert d.get_attr("budget") == (gym_crawl.DEFAULT_MAX_EPISODE_STEPS,) * 2
    d.close()


@pytest.mark.parametrize("env_id", OLD_IDS)
def test_old_ids_vector_entry_point_is_refused_loudly_and_batched_elsewhere(tiny_corpus, env_id):
    """What gives for the old ids: Gymnasium refuses make_vec's vector entry point on a spec with an
    additional wrapper. The refusal names where the batched env is; that builder truncates where the
    fraction reaches 1."""
    with pytest.raises(gym.error.Error, match=r"additional_wrappers.*gym_crawl\.envs\.make_vector_env.*WikiCrawl-v3"):
        gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", corpus=tiny_corpus)
    for v in (make_vector_env(env_id, num_envs=2, corpus=tiny_corpus, max_episode_steps=5),
              make_vec_env(env_id, num_envs=2, corpus=tiny_corpus, max_episode_steps=5)):
        assert v.call("budget") == (5, 5) and v.spec.kwargs["max_episode_steps"] == 5
        v.reset(seed=0)
        for t in range(1, 6):
            obs, _, term, trunc, info = v.step(np.zeros(2, np.int64))
            np.testing.assert_allclose(obs["state"][:, 0], t / 5, rtol=1e-6)
            assert trunc.tolist() == [t == 5] * 2 and info["steps"].tolist() == [t, t]
    registered = gym.spec(env_id).max_episode_steps
    assert make_vector_env(env_id, num_envs=1, corpus=tiny_corpus).call("budget") == (registered,)
    with pytest.raises(ValueError, match="not a WikiCrawl env"):
        make_vector_env("CartPole-v1", num_envs=1)


def test_make_env_for_and_run_episode(tiny_corpus):
    env = make_env_for("best-first", "WikiCrawl-v1", corpus=tiny_corpus, max_episode_steps=7)
    assert env.unwrapped.budget == 7 and check_budget(env) == 7
    r = run_episode(env, make_agent("best-first"), seed=0)
    assert r.steps == 7 and r.relevant_curve.shape == (7,)
    v3 = make_env_for("best-first", "WikiCrawl-v3", corpus=tiny_corpus, max_episode_steps=7)
    assert v3.unwrapped.budget is None and check_budget(v3) == 7
    assert run_episode(v3, make_agent("best-first"), seed=0).steps == 7


def test_hand_wrapping_consistent_runs_and_inconsistent_is_refused(tiny_corpus):
    ok = TimeLimit(WikiCrawlEnv(corpus=tiny_corpus, time_feature="budget_used", max_episode_steps=5), 5)
    assert check_budget(ok) == 5
    assert run_episode(ok, make_agent("best-first"), seed=0).steps == 5
    bad = TimeLimit(WikiCrawlEnv(corpus=tiny_corpus, time_feature="budget_used"), 5)  # budget_used would stay 0
    with pytest.raises(ValueError, match=r"TimeLimit\(max_episode_steps=5\).*no budget.*observes budget_used"):
        check_budget(bad)
    with pytest.raises(ValueError, match=r"max_episode_steps=5\).*add no TimeLimit of your own.*WikiCrawl-v3"):
        run_episode(bad, make_agent("best-first"), seed=0)
    shorter = TimeLimit(WikiCrawlEnv(corpus=tiny_corpus, time_feature="budget_used", max_episode_steps=9), 5)
    with pytest.raises(ValueError, match=r"TimeLimit\(max_episode_steps=5\).*max_episode_steps=9"):
        check_budget(shorter)
    assert check_budget(WikiCrawlEnv(corpus=tiny_corpus, time_feature="budget_used", max_episode_steps=3)) == 3


def test_nested_time_limit_is_refused_naming_both_numbers(tiny_corpus):
    """TimeLimit(gym.make(..., max_episode_steps=20), 5) would truncate at 5 and report 25 % of the budget."""
    env = TimeLimit(gym.make("WikiCrawl-v1", corpus=tiny_corpus, max_episode_steps=20), 5)
    assert time_limits(env) == [5, 20] and env.unwrapped.budget == 20
    with pytest.raises(ValueError, match=r"TimeLimit\(max_episode_steps=5\) wraps a crawl env with "
                                         r"max_episode_steps=20.*gym.make\(id, max_episode_steps=5\)"):
        check_budget(env)
    with pytest.raises(ValueError, match="max_episode_steps=20"):
        run_episode(env, make_agent("best-first"), seed=0)


def test_adaptive_domain_cap_falls_over_the_budget_from_make(tiny_corpus):
    env = gym.make("WikiCrawl-v1", corpus=tiny_corpus, domain_cap="5-2", max_episode_steps=8)
    assert env.unwrapped.domain_cap_horizon == 8
    _assert_truncated_at(env, 8)  # the cap needs the budget at the first reset: no error, truncated at 8
    with pytest.raises(ValueError, match="adaptive domain_cap.*domain_cap_horizon"):
        WikiCrawlEnv(corpus=tiny_corpus, time_feature="budget_used", domain_cap="5-2").reset(seed=0)


@pytest.mark.parametrize("agent", ["best-first", "random", "ache", "lfa-async"])
def test_v3_crawls_as_v2_for_agents_that_do_not_read_the_state_vector(tiny_corpus, agent):
    """Only state[0] differs between v2 and v3: a crawler that does not read it fetches the same pages, with
    the same rewards, and both truncate at the budget (v2 itself, v3 its TimeLimit)."""
    kw = dict(corpus=tiny_corpus, topic="cancer", max_episode_steps=30, domain_cap="5-2")
    runs = [run_episode(make_env_for(agent, env_id, **kw), make_agent(agent), seed=4)
            for env_id in (gym_crawl.ENV_ID_V2, gym_crawl.ENV_ID_V3)]
    assert runs[0].fetched.tolist() == runs[1].fetched.tolist() and runs[0].steps == runs[1].steps == 30
    np.testing.assert_array_equal(runs[0].rewards, runs[1].rewards)
