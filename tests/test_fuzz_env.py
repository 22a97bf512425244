"""Property-based fuzz of the env API (hypothesis): random configurations, seeds and action sequences —
valid and invalid actions — with the invariants of :data:`benchmarks.fuzz_env.INVARIANTS` checked after
every reset and step, and the same seed and actions replayed on a fresh env giving the same trajectory.

The default suite runs a short version; the long one is ``@pytest.mark.slow``, and
``gym-crawl bench fuzz_env`` runs ≥ 10^5 steps over every configuration.
"""
from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gym_crawl  # noqa: F401
from gym_crawl.benchmarks.fuzz_env import InvariantError, _same, check_transition, configurations, fuzz, run_episode
from gym_crawl.features import FEATURE_SETS
from gym_crawl.reducers import REDUCERS
from gym_crawl.relevance import REWARDS

# the classifier reward trains on labelled pages the tiny corpus has too few of: fuzzed by the benchmark
_REWARDS = [r for r in REWARDS.names() if r != "classifier"]
_CONFIG = st.fixed_dictionaries({
    "features": st.sampled_from([f for f in FEATURE_SETS.names() if f != "tres-clf"]),
    "reducer": st.sampled_from(REDUCERS.names()),
    "reward": st.sampled_from(_REWARDS),
    "action": st.sampled_from(["slot", "page"]),
    "state_obs": st.booleans(),
})


def _make(corpus, cfg, k):
    kw = {k_: cfg[k_] for k_ in ("features", "reducer", "reward", "action")}
    kw["observation"] = "state" if cfg["action"] == "page" and cfg["state_obs"] else "candidates"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gym.make("WikiCrawl-v1", corpus=corpus, max_episode_steps=40, max_candidates=k, **kw)


def _episode(corpus, cfg, k, seed, raw):
    env = _make(corpus, cfg, k)
    n = int(env.action_space.n)
    # raw draws -> actions: mostly valid ones (an index into the current mask), some anywhere in the space
    obs, info = env.reset(seed=seed)
    total = float(info["reward_sum"])
    seen = {int(p) for p in env.unwrapped.view.fetched_pages()}
    check_transition(env, obs, info, None, None, total, set())
    actions, traj = [], [obs]
    for valid_pick, x in raw:
        valid = np.flatnonzero(env.unwrapped.action_masks())
        a = int(valid[x % len(valid)]) if valid_pick and len(valid) else x % n
        nobs, r, term, trunc, ninfo = env.step(a)
        total += float(r)
        check_transition(env, nobs, ninfo, info, float(r), total, seen)
        actions.append(a)
        traj += [float(r), int(ninfo["fetched_page"]), nobs]
        info = ninfo
        if term or trunc:
            break
    _, again = run_episode(_make(corpus, cfg, k), seed, actions=actions)
    assert _same(traj, again), "same seed and actions gave another trajectory"
    return len(actions)


_ACTIONS = st.lists(st.tuples(st.booleans(), st.integers(0, 10**6)), min_size=1, max_size=40)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(cfg=_CONFIG, k=st.integers(1, 12), seed=st.integers(0, 2**31 - 1), raw=_ACTIONS)
def test_env_invariants_hold_under_random_actions(tiny_corpus, cfg, k, seed, raw):
    _episode(tiny_corpus, cfg, k, seed, raw)


@pytest.mark.slow
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(cfg=_CONFIG, k=st.integers(1, 64), seed=st.integers(0, 2**31 - 1),
       raw=st.lists(st.tuples(st.booleans(), st.integers(0, 10**6)), min_size=1, max_size=200))
def test_env_invariants_hold_under_random_actions_long(tiny_corpus, cfg, k, seed, raw):
    _episode(tiny_corpus, cfg, k, seed, raw)


def test_the_checker_catches_a_broken_reward_sum(tiny_corpus):
    """The invariant checker is not vacuous: an env whose reward_sum drifts is caught at the first step."""
    env = gym.make("WikiCrawl-v1", corpus=tiny_corpus, max_episode_steps=20)
    _, info = env.reset(seed=0)
    env.unwrapped.state._sums[0] += 0.5
    obs2, r, _, _, info2 = env.step(0)
    with pytest.raises(InvariantError, match="reward_sum"):
        check_transition(env, obs2, info2, info, float(r), float(info["reward_sum"]) + float(r), set())


def test_benchmark_fuzz_runs_every_configuration_shape(tiny_corpus):
    cfgs = [c for c in configurations() if c["reward"] != "classifier" and c["features"] != "tres-clf"][::37]
    res = fuzz(tiny_corpus, 400, configs=cfgs, progress=False)
    assert res["violations"] == [] and res["steps"] >= 400 and res["fuzzed"] == len(cfgs) and res["replays"] > 0
