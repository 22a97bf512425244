"""WikiCrawl-v0: API conformance, determinism, pickling, vector envs, action semantics, errors."""
from __future__ import annotations

import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest

import gym_crawl  # noqa: F401
from gym_crawl.agents import make_agent, run_episode
from gym_crawl.envs import WikiCrawlEnv


def make(corpus, **kw):
    kw.setdefault("max_steps", 200)
    return gym.make("WikiCrawl-v0", corpus=corpus, **kw)


def test_registered_both_ways(tiny_corpus):
    env = gym.make("gym_crawl:WikiCrawl-v0", corpus=tiny_corpus)
    assert isinstance(env.unwrapped, WikiCrawlEnv)
    assert env.unwrapped.max_steps == gym_crawl.DEFAULT_MAX_EPISODE_STEPS


def test_gymnasium_check_env(tiny_corpus):
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(make(tiny_corpus).unwrapped, skip_render_check=False)


def test_sb3_check_env(tiny_corpus):
    from stable_baselines3.common.env_checker import check_env

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(make(tiny_corpus).unwrapped, warn=True)
    # The one justified warning: "candidates" is (K, d) on purpose — rows are candidates that a
    # shared scoring network reads row by row (agents.sb3_policies); MultiInputPolicy flattens it.
    msgs = [str(w.message) for w in caught]
    assert all("unconventional shape" in m and "candidates" in m for m in msgs), msgs


def test_default_env_builds_and_resets():
    env = gym.make("WikiCrawl-v0")
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert info["pages_fetched"] >= 1 and info["frontier_size"] > 0


def _trajectory(env, seed, n=150):
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = [obs["candidates"].tobytes(), info["candidate_ids"].tobytes()]
    for _ in range(n):
        valid = np.flatnonzero(info["action_mask"])
        obs, r, term, trunc, info = env.step(int(rng.choice(valid)))
        out += [obs["candidates"].tobytes(), obs["state"].tobytes(), float(r), info["fetched_page"]]
        if term or trunc:
            break
    return out


@pytest.mark.parametrize("reducer", ["topk", "random", "outlinks"])
def test_same_seed_same_trajectory(tiny_corpus, reducer):
    a = _trajectory(make(tiny_corpus, reducer=reducer), seed=3)
    b = _trajectory(make(tiny_corpus, reducer=reducer), seed=3)
    assert a == b
    if reducer == "random":  # the seed really drives the randomness
        assert a != _trajectory(make(tiny_corpus, reducer=reducer), seed=4)


def test_pickle_round_trip(tiny_corpus):
    env = make(tiny_corpus, reducer="random")
    env.reset(seed=1)
    for _ in range(10):
        env.step(0)
    clone = pickle.loads(pickle.dumps(env))
    for _ in range(20):
        o1, r1, *_ , i1 = env.step(1)
        o2, r2, *_ , i2 = clone.step(1)
        assert r1 == r2 and i1["fetched_page"] == i2["fetched_page"]
        np.testing.assert_array_equal(o1["candidates"], o2["candidates"])


def test_sync_and_async_vector_envs(tiny_corpus, tmp_path):
    path = tiny_corpus.save(tmp_path / "tiny")  # subprocesses open the memory-mapped copy
    fns = [lambda: gym.make("WikiCrawl-v0", corpus=str(path), max_steps=20) for _ in range(2)]
    for cls in (gym.vector.SyncVectorEnv, gym.vector.AsyncVectorEnv):
        venv = cls(fns)
        obs, infos = venv.reset(seed=[0, 1])
        assert obs["candidates"].shape[0] == 2
        for _ in range(25):  # crosses the 20-step truncation: autoreset
            obs, r, term, trunc, infos = venv.step(np.zeros(2, dtype=np.int64))
        assert r.shape == (2,)
        venv.close()


def test_action_outside_space_is_an_error_naming_the_range(tiny_corpus):
    env = make(tiny_corpus, max_candidates=16)
    env.reset(seed=0)
    for bad in (16, -1, 2.5, "x"):
        with pytest.raises(ValueError, match=r"Discrete\(16\).*0\.\.15"):
            env.unwrapped.step(bad)


def test_masked_slot_spends_step_without_fetch(tiny_corpus):
    env = make(tiny_corpus, max_candidates=64, seeds=["Poetry"], topic="poetry")
    obs, info = env.reset(seed=0)
    masked = np.flatnonzero(~info["action_mask"])
    assert len(masked), "fixture should leave some slots empty at reset"
    before = info["pages_fetched"]
    obs2, r, term, trunc, info2 = env.step(int(masked[0]))
    assert info2["invalid_action"] and info2["fetched_page"] == -1
    assert info2["pages_fetched"] == before and info2["steps"] == 1
    assert r == pytest.approx(env.unwrapped.invalid_action_penalty) and r < 0
    np.testing.assert_array_equal(obs2["candidates"], obs["candidates"])
    np.testing.assert_array_equal(env.unwrapped.action_masks(), info2["action_mask"])


def test_info_keys_on_reset_and_step(tiny_corpus):
    env = make(tiny_corpus)
    _, i0 = env.reset(seed=0)
    _, _, _, _, i1 = env.step(0)
    assert set(i0) == set(i1)
    for k in ("pages_fetched", "relevant_found", "harvest_rate", "relevant_domains", "frontier_size",
              "candidate_ids", "action_mask"):
        assert k in i0


def test_truncation_and_termination(tiny_corpus):
    env = make(tiny_corpus, max_steps=5)
    env.reset(seed=0)
    flags = [env.step(0)[3] for _ in range(5)]
    assert flags == [False] * 4 + [True]
    # crawl everything: the frontier empties and the episode terminates
    env = make(tiny_corpus, max_steps=10_000)
    res = run_episode(env, make_agent("bfs"), seed=0)
    assert env.unwrapped.state.fr_size == 0 and res.steps < 10_000


def test_reset_options_topic_and_seeds(tiny_corpus):
    env = make(tiny_corpus)
    _, info = env.reset(seed=0, options={"topic": "cancer", "seeds": ["Cancer"]})
    assert info["topic"] == "cancer"
    assert env.unwrapped.state.fetched_pages().tolist() == [tiny_corpus.page_id("Cancer")]
    _, info = env.reset(seed=0, options={"topic": "poetry"})
    assert info["topic"] == "poetry"


@pytest.mark.parametrize("kw, exc, pattern", [
    ({"seeds": ["No Such Page"]}, KeyError, "unknown page title 'No Such Page'"),
    ({"topic": "xylophonequux"}, KeyError, r"word\(s\) \['xylophonequux'\] not in its vocabulary"),
    ({"reward": "nope"}, ValueError, "unknown reward 'nope'"),
    ({"features": "nope"}, ValueError, "unknown feature set 'nope'"),
    ({"reducer": "nope"}, ValueError, "unknown reducer 'nope'"),
    ({"domain_cap": "x-y"}, ValueError, "domain_cap 'x-y'"),
    ({"max_candidates": 0}, ValueError, "max_candidates"),
])
def test_bad_arguments_have_clear_errors(tiny_corpus, kw, exc, pattern):
    with pytest.raises(exc, match=pattern):
        env = make(tiny_corpus, **kw)
        env.reset(seed=0)


def test_unknown_corpus_path():
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        gym.make("WikiCrawl-v0", corpus="/nonexistent/corpus")


def test_step_page_without_observation(tiny_corpus):
    a = make(tiny_corpus, max_steps=40).unwrapped
    b = make(tiny_corpus, max_steps=40).unwrapped
    a.reset(seed=0)
    b.reset(seed=0)
    for t in range(40):
        p = int(a.frontier_pages()[t % a.state.fr_size])
        oa, ra, _, tra, ia = a.step_page(p)
        ob, rb, _, trb, ib = b.step_page(p, observe=False)
        assert ob is None and ra == rb and tra == trb and ia["new_pages"].tolist() == ib["new_pages"].tolist()
    assert tra and trb  # the page interface obeys max_steps too
    np.testing.assert_array_equal(a.action_masks(), b.action_masks())  # rebuilt on demand
    np.testing.assert_array_equal(a.candidate_pages(), b.candidate_pages())


def test_step_page_validates(tiny_corpus):
    env = make(tiny_corpus).unwrapped
    env.reset(seed=0)
    seed = int(env.state.fetched_pages()[0])
    with pytest.raises(ValueError, match="already fetched"):
        env.step_page(seed)
    with pytest.raises(ValueError, match="out of range"):
        env.step_page(10**9)
    F = env.frontier_pages()  # a live view: read what you need before stepping
    target = int(F[0])
    _, _, _, _, info = env.step_page(target)
    assert info["fetched_page"] == target and not env.is_frontier(target)


def test_argmax_frontier_is_exact(tiny_corpus):
    env = make(tiny_corpus, features="han2018").unwrapped
    env.reset(seed=0)
    for _ in range(30):
        env.step(0)
    w = np.random.default_rng(0).normal(size=env.features.dim).astype(np.float32)
    F = env.frontier_pages()
    scores = env.features_of(F) @ w
    assert scores[list(F).index(env.argmax_frontier(w))] == pytest.approx(scores.max())


def test_render_ansi(tiny_corpus):
    env = make(tiny_corpus, render_mode="ansi")
    env.reset(seed=0)
    env.step(0)
    text = env.render()
    assert "topic=geology" in text and "frontier=" in text and "last:" in text


def test_domain_cap_limits_pages_per_domain(tiny_corpus):
    for cap, lim in ((3, 3), ("5-2", 5)):
        env = make(tiny_corpus, domain_cap=cap, max_steps=300)
        run_episode(env, make_agent("best-first"), seed=0)
        st = env.unwrapped.state
        assert st.dom_fetched.max() <= lim
        F = st.frontier
        chained = []
        for d in range(len(tiny_corpus.domains)):
            p = st.dom_head[d]
            while p >= 0:
                chained.append(int(p))
                p = st.dom_next[p]
        assert sorted(chained) == sorted(F.tolist())
        assert np.all(st.dom_fetched[st.page_domain[F]] < st.domain_cap)
