"""Regressions of the adversarial trial: a call that raises changes nothing (or leaves an env that refuses
every call but ``reset``); no silently wrong number."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import gym_crawl  # noqa: F401


def make(corpus, **kw):
    kw.setdefault("max_episode_steps", 200)
    return gym.make("WikiCrawl-v1", corpus=corpus, **kw)


def _snapshot(env) -> dict:
    u = env.unwrapped
    st = u.state
    snap = {f"state.{k}": np.array(a) for k, a in st.arrays.items()}
    snap.update(ctr=st._ctr.copy(), sums=st._sums.copy(), t=u._t, over=u._over, started=u._started,
                cand=np.array(u._cand), feats=u._feats.copy(), mask=u._mask.copy(), svec=u._svec.copy(),
                topic=u.topic, last_reward=u._last_reward)
    return snap


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray) else a[k] == b[k] for k in a)


def _nan_on(pages):
    bad = set(int(p) for p in pages)

    def reward(s):
        r = np.asarray(s.rel, np.float64) * 10
        if s.pages is not None:
            r = np.where(np.isin(s.pages, list(bad)), np.nan, r)
        return r
    return reward


# ------------------------------------------------------------------ item 3: non-finite reward
def test_non_finite_reward_step_changes_nothing(tiny_corpus):
    env = make(tiny_corpus)
    obs, info = env.reset(seed=0)
    u = env.unwrapped
    target = int(u._cand[0])
    env = make(tiny_corpus, reward=_nan_on([target]))
    obs, info = env.reset(seed=0)
    u = env.unwrapped
    assert int(u._cand[0]) == target
    before = _snapshot(env)
    with pytest.raises(ValueError, match=rf"non-finite value nan for page {target}"):
        env.step(0)
    assert _same(before, _snapshot(env))  # not fetched, reward_sum unchanged, still steppable
    assert np.isfinite(info["reward_sum"])
    obs, r, term, trunc, info = env.step(1)
    assert np.isfinite(r) and np.isfinite(info["reward_sum"]) and info["fetched_page"] != target


def test_non_finite_reward_in_the_vector_env_steps_no_sub_env(tiny_corpus):
    # Python path (a custom reward): sub-env 1 would fetch the NaN page; sub-env 0 must not have stepped
    e = make(tiny_corpus)
    e.reset(seed=1)
    target = int(e.unwrapped._cand[0])
    v = gym.make_vec("WikiCrawl-v1", num_envs=2, vectorization_mode="vector_entry_point", corpus=tiny_corpus,
                     reward=_nan_on([target]), max_episode_steps=50)
    v.reset(seed=0)
    u = v.unwrapped
    assert int(u.envs[1]._cand[0]) == target and int(u.envs[0]._cand[1]) != target
    before = [_snapshot(x) for x in u.envs]
    with pytest.raises(ValueError, match="non-finite"):
        v.step(np.array([1, 0]))
    assert all(_same(b, _snapshot(x)) for b, x in zip(before, u.envs))
    v.step(np.array([1, 1]))  # steps normally afterwards


def test_non_finite_cached_reward_in_the_compiled_vector_step_steps_no_sub_env(tiny_corpus):
    v = gym.make_vec("WikiCrawl-v1", num_envs=3, vectorization_mode="vector_entry_point", corpus=tiny_corpus,
                     max_episode_steps=50)
    v.reset(seed=0)
    u = v.unwrapped
    assert u._uniform
    p = int(u._sel_p[2, 0])
    stack = {k: a.copy() for k, a in u._stack.items()}
    ctr, sums, t = u._ctr.copy(), u._sums.copy(), u._t.copy()
    keep = u._rwt[0][p]
    u._rwt[0][p] = np.nan  # a damaged entry of the (process-wide) reward cache: the page sub-env 2 is about to fetch
    try:
        with pytest.raises(ValueError, match=rf"non-finite value nan for page {p}"):
            v.step(np.array([1, 1, 0]))
    finally:
        u._rwt[0][p] = keep
    assert all(np.array_equal(stack[k], u._stack[k]) for k in stack)
    assert np.array_equal(ctr, u._ctr) and np.array_equal(sums, u._sums) and np.array_equal(t, u._t)


# ------------------------------------------------------------------ item 4: failed reset
def test_failed_reset_changes_nothing(tiny_corpus):
    env = make(tiny_corpus)
    env.reset(seed=0)
    env.step(0)
    before = _snapshot(env)
    rng_state = env.unwrapped.np_random.bit_generator.state
    for options in ({"topic": "cancer", "seeds": [10**9]}, {"topic": "no such topic"}, {"seeds": "x"},
                    {"topic": "cancer", "bogus": 1}, "garbage", ["topic"]):
        with pytest.raises((ValueError, KeyError)):
            env.reset(seed=5, options=options)
        assert _same(before, _snapshot(env)), options
    assert env.unwrapped.np_random.bit_generator.state == rng_state
    _, _, _, _, info = env.step(0)  # the old crawl goes on, on its own topic
    assert info["topic"] == before["topic"].name


def test_reset_options_must_be_a_dict(tiny_corpus):
    env = make(tiny_corpus)
    with pytest.raises(ValueError, match=r"reset options must be a dict .*got str 'garbage'"):
        env.reset(options="garbage")


def test_reset_failing_after_validation_refuses_step_until_a_reset(tiny_corpus):
    env = make(tiny_corpus)
    env.reset(seed=0)
    seed_page = int(env.unwrapped.fetched_pages()[0])
    env = make(tiny_corpus, reward=_nan_on([seed_page]))
    with pytest.raises(ValueError, match="non-finite"):
        env.reset(seed=0)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        env.step(0)


# ------------------------------------------------------------------ item 6: reward_sum
@pytest.mark.parametrize("vector", [False, True])
def test_reward_sum_counts_invalid_action_penalties(tiny_corpus, vector):
    if vector:
        env = gym.make_vec("WikiCrawl-v1", num_envs=2, vectorization_mode="vector_entry_point",
                           corpus=tiny_corpus, max_candidates=64, max_episode_steps=40)
    else:
        env = make(tiny_corpus, max_candidates=64, max_episode_steps=40)
    obs, info = env.reset(seed=0)
    total = np.array(info["reward_sum"], np.float64)
    rng = np.random.default_rng(0)
    n_invalid = 0
    for _ in range(30):
        a = rng.integers(64, size=2) if vector else int(rng.integers(64))
        obs, r, term, trunc, info = env.step(a)
        total = total + r
        n_invalid += int(np.sum(info["invalid_action"]))
        assert np.allclose(info["reward_sum"], total, rtol=0, atol=1e-9)
        if np.any(term) or np.any(trunc):
            break
    assert n_invalid > 0
