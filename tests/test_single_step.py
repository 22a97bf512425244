"""The single env's compiled step (gym_crawl/envs/single_step.py) gives the Python step's outcome bit for bit.

The reference env is the same configuration with the same reward scheme under a subclass: a scheme whose values
the crawl does not cache per page, which the compiled step refuses, so the reference steps in Python (same
rewards: the subclass changes nothing else).
"""
from __future__ import annotations

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence

import gym_crawl  # noqa: F401
from gym_crawl.envs import WikiCrawlEnv


def _uncached(env: WikiCrawlEnv) -> object:
    """The env's reward scheme as an instance of a subclass (no per-page cache: the Python step)."""
    s = copy.copy(env.scheme)
    s.__class__ = type("Uncached" + type(s).__name__, (type(s),), {})
    return s


def _pair(corpus, **kw):
    fast = WikiCrawlEnv(corpus=corpus, render_mode="ansi", **kw)
    ref = WikiCrawlEnv(corpus=corpus, reward=_uncached(fast), render_mode="ansi", **kw)
    return fast, ref


def _action(rng, env, info):
    """Mostly a valid action; now and then a masked slot or a page outside the frontier (a spent step)."""
    if env.action_mode == "slot":
        valid = np.flatnonzero(info["action_mask"])
        if rng.random() < 0.1 and len(valid) < env.K:
            return int(rng.integers(len(valid), env.K))
        return int(rng.choice(valid))
    if rng.random() < 0.1:
        return int(rng.integers(env.corpus.n_pages))
    return int(rng.choice(np.asarray(env.view.frontier_pages())))


def _run_side_by_side(fast, ref, seed, steps, meddle=False, look_every=1):
    """Step both envs with the same actions and compare everything they return; the view and the action masks are
    read every ``look_every`` steps (the compiled step copies candidates and frontier changes only when read)."""
    oa, ia = fast.reset(seed=seed)
    ob, ib = ref.reset(seed=seed)
    assert data_equivalence((oa, ia), (ob, ib))
    rng = np.random.default_rng(seed)
    kept = []
    for t in range(steps):
        if meddle and t % 7 == 3:  # someone asks the reducer for another k between steps
            fast.reducer.propose(int(rng.integers(1, 40)), rng)
        a = _action(rng, fast, ia)
        ra, rb = fast.step(a), ref.step(a)
        assert data_equivalence(ra, rb), f"step {t}"
        assert type(ra[1]) is float and type(ra[2]) is bool and type(ra[3]) is bool
        assert all(type(ra[4][k]) is type(rb[4][k]) for k in rb[4]), f"step {t}: info value types"
        assert list(ra[4]) == list(rb[4])
        if t % look_every == 0:
            for x, y in zip(fast.view.frontier_changes(), ref.view.frontier_changes()):
                np.testing.assert_array_equal(x, y)
            np.testing.assert_array_equal(fast.view.candidate_pages(), ref.view.candidate_pages())
            np.testing.assert_array_equal(fast.action_masks(), ref.action_masks())
            assert fast.view.steps == ref.view.steps
            assert fast.render() == ref.render()
        kept.append((copy.deepcopy(ra[0]), ra[0]))
        ia = ra[4]
        if ra[2] or ra[3]:
            oa, ia = fast.reset()
            ob, ib = ref.reset()
            assert data_equivalence((oa, ia), (ob, ib))
    for before, returned in kept:  # an observation handed out is never written again
        assert data_equivalence(before, returned)


@pytest.mark.parametrize("features", ["combined", "han2018", "han2018-continuous", "tres"])
@pytest.mark.parametrize("action", ["slot", "page"])
def test_compiled_step_equals_the_python_step(tiny_corpus, features, action):
    fast, ref = _pair(tiny_corpus, features=features, action=action, max_candidates=8, max_episode_steps=60)
    for seed, look in ((0, 1), (1, 3)):
        _run_side_by_side(fast, ref, seed, 150, look_every=look)


@pytest.mark.parametrize("kw", [
    {"domain_cap": 3, "max_candidates": 8, "max_episode_steps": 60},
    {"time_feature": "budget_used", "max_candidates": 64, "max_episode_steps": 40},
    {"reward": "binary", "max_candidates": 5},
    {"action": "page", "observation": "state", "max_episode_steps": 50},
])
def test_compiled_step_equals_the_python_step_in_other_configurations(tiny_corpus, kw):
    kw = dict(kw)
    if "reward" in kw:
        fast = WikiCrawlEnv(corpus=tiny_corpus, **kw)
        kw.pop("reward")
        ref = WikiCrawlEnv(corpus=tiny_corpus, reward=_uncached(fast), **kw)
        fast.set_budget(45)
        ref.set_budget(45)
    else:
        fast, ref = _pair(tiny_corpus, **kw)
    _run_side_by_side(fast, ref, 3, 120)


def test_a_caller_asking_the_reducer_for_k_candidates_changes_no_step(tiny_corpus):
    fast, ref = _pair(tiny_corpus, max_candidates=8, max_episode_steps=80)
    _run_side_by_side(fast, ref, 4, 160, meddle=True)


def test_the_compiled_step_is_the_one_taken_and_computes_no_row_in_python(tiny_corpus):
    """With the default configuration the step never calls the feature set's Python ``compute``."""
    env = gym.make(gym_crawl.DEFAULT_ENV_ID, corpus=tiny_corpus, max_candidates=8)
    _, info = env.reset(seed=0)

    def refuse(*_a, **_k):
        raise AssertionError("the compiled step called FeatureSet.compute")

    env.unwrapped.features.compute = refuse
    for _ in range(30):
        _, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
        if term or trunc:
            break


@pytest.mark.parametrize("clone", ["pickle", "deepcopy"])
def test_a_copy_mid_episode_steps_on_as_the_original(tiny_corpus, clone):
    env, _ = _pair(tiny_corpus, max_candidates=8, max_episode_steps=60)
    _, info = env.reset(seed=5)
    for _ in range(9):
        _, _, _, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    twin = pickle.loads(pickle.dumps(env)) if clone == "pickle" else copy.deepcopy(env)
    for x, y in zip(env.view.frontier_changes(), twin.view.frontier_changes()):
        np.testing.assert_array_equal(x, y)
    rng = np.random.default_rng(1)
    for _ in range(30):
        a = int(rng.choice(np.flatnonzero(info["action_mask"])))
        ra, rb = env.step(a), twin.step(a)
        assert data_equivalence(ra, rb)
        np.testing.assert_array_equal(env.view.candidate_pages(), twin.view.candidate_pages())
        info = ra[4]
        if ra[2] or ra[3]:
            break


def test_a_non_finite_reward_is_refused_before_the_step_changes_anything(tiny_corpus):
    env = WikiCrawlEnv(corpus=tiny_corpus, max_candidates=8, max_episode_steps=60)
    _, info = env.reset(seed=0)
    page = int(info["candidate_ids"][0])
    rw = env.state.reward_cache
    assert rw is not None and rw[2][page]
    old = float(rw[0][page])
    rw[0][page] = np.nan  # the shared per-page cache: as a reward scheme that returned NaN would have filled it
    try:
        with pytest.raises(ValueError, match="non-finite"):
            env.step(0)
        assert env.view.steps == 0 and env.state.n_fetched == info["pages_fetched"]
    finally:
        rw[0][page] = old
    _, _, _, _, info2 = env.step(0)
    assert info2["fetched_page"] == page and info2["steps"] == 1


@pytest.mark.parametrize("action", ["slot", "page"])
def test_compiled_step_equals_the_python_step_with_pages_scored_as_fetched(tiny_corpus, action, monkeypatch):
    """A large web's scores are filled page by page as pages are fetched (keyed tables that grow): the compiled step
    hands the filling back to Python before it fetches, and steps on as the Python step does."""
    import weakref

    import gym_crawl.crawl.state as state_mod
    import gym_crawl.relevance.scorer as scorer_mod

    monkeypatch.setattr(state_mod, "EAGER_SCORING_LINKS", 0)
    monkeypatch.setattr(scorer_mod, "_SHARED", weakref.WeakKeyDictionary())  # fresh, incomplete tables
    fast, ref = _pair(tiny_corpus, action=action, max_candidates=8, max_episode_steps=60)
    _run_side_by_side(fast, ref, 6, 130, look_every=2)
    assert not fast.state.page_scores.complete  # the scores were filled as pages were fetched
