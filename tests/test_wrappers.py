"""Scoring wrappers: SB3 check_env, masked-slot semantics, flat layout, topic sampling, linear scoring."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3.common.env_checker import check_env
from stable_baselines3.common.vec_env import DummyVecEnv

from gym_crawl.wrappers import (
    DiscreteScoringWrapper,
    LinearScoringWrapper,
    TopicSampler,
    flatten_observation,
    make_scoring_env,
    summarize_candidates,
)

TOPICS = ["geology", "cancer", "poetry"]


def _env(corpus, kind="discrete", **kw):
    kw.setdefault("max_candidates", 8)
    kw.setdefault("max_episode_steps", 40)
    return make_scoring_env(kind, corpus=corpus, topics=TOPICS, **kw)


@pytest.mark.parametrize("kind,kw", [("discrete", {}), ("discrete", {"flatten": True}),
                                     ("discrete", {"reducer": "random"}), ("continuous", {}),
                                     ("continuous", {"reducer": "full"})])
def test_check_env_passes(tiny_corpus, kind, kw):
    env = _env(tiny_corpus, kind, **kw)
    check_env(env, warn=True)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)


def _masked_state(tiny_corpus):
    """An env whose first observation has empty slots (K larger than the seed's frontier)."""
    env = make_scoring_env("discrete", corpus=tiny_corpus, topics=["geology"], max_candidates=64, max_episode_steps=20)
    obs, info = env.reset(seed=0)
    assert not info["action_mask"].all(), "fixture needs masked slots"
    return env, obs, info


def test_masked_actions_never_fetch(tiny_corpus):
    env, obs, info = _masked_state(tiny_corpus)
    base = env.unwrapped
    masked = np.flatnonzero(~env.action_masks())
    fetched0, frontier0, steps0 = info["pages_fetched"], base.view.frontier_pages().copy(), info["steps"]
    for i, a in enumerate(masked[:5]):
        obs2, r, term, trunc, info2 = env.step(int(a))
        assert info2["invalid_action"] is True
        assert info2["fetched_page"] == -1
        assert info2["pages_fetched"] == fetched0
        assert np.array_equal(np.sort(base.view.frontier_pages()), np.sort(frontier0))
        assert np.array_equal(obs2["candidates"], obs["candidates"]) and np.array_equal(obs2["mask"], obs["mask"])
        assert r == pytest.approx(base.invalid_action_penalty) and r < 0
        assert info2["steps"] == steps0 + i + 1  # the step is spent
        assert not term
    valid = int(np.flatnonzero(env.action_masks())[0])
    _, _, _, _, info3 = env.step(valid)
    assert info3["invalid_action"] is False and info3["fetched_page"] == info["candidate_ids"][valid]
    assert info3["pages_fetched"] == fetched0 + 1


def test_action_outside_space_raises(tiny_corpus):
    env = _env(tiny_corpus)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="0..7"):
        env.step(8)


def test_action_masks_match_info_and_obs_and_reach_vec_env(tiny_corpus):
    env = _env(tiny_corpus)
    obs, info = env.reset(seed=3)
    assert np.array_equal(env.action_masks(), info["action_mask"])
    assert np.array_equal(env.action_masks(), obs["mask"].astype(bool))
    venv = DummyVecEnv([lambda: _env(tiny_corpus, max_candidates=64)])
    venv.seed(0)
    vobs = venv.reset()
    masks = np.stack(venv.env_method("action_masks"))
    assert masks.shape == (1, 64) and np.array_equal(masks[0], vobs["mask"][0].astype(bool))
    assert not masks.all()
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    assert is_masking_supported(venv) and np.array_equal(get_action_masks(venv), masks)


def test_flat_layout_matches_dict(tiny_corpus):
    flat = _env(tiny_corpus, flatten=True)
    dct = _env(tiny_corpus)
    fo, _ = flat.reset(seed=1)
    do, _ = dct.reset(seed=1)
    K, d = do["candidates"].shape
    assert fo.shape == (K * d + K + 6,) and flat.observation_space.shape == fo.shape
    assert np.array_equal(fo[: K * d].reshape(K, d), do["candidates"])
    assert np.array_equal(fo[K * d: K * d + K], do["mask"].astype(np.float32))
    assert np.array_equal(fo[K * d + K:], do["state"])
    assert np.array_equal(flatten_observation(do), fo)
    for a in [0, 3, 1]:
        fo, rf, *_ = flat.step(a)
        do, rd, *_ = dct.step(a)
        assert np.array_equal(fo, flatten_observation(do)) and rf == rd


def test_reward_scale_keeps_reward_sum_unscaled(tiny_corpus):
    a = _env(tiny_corpus, reward_scale=0.5)
    b = _env(tiny_corpus)
    a.reset(seed=0)
    b.reset(seed=0)
    for act in [0, 1, 2]:
        _, ra, _, _, ia = a.step(act)
        _, rb, _, _, ib = b.step(act)
        assert ra == pytest.approx(0.5 * rb)
        assert ia["reward_sum"] == ib["reward_sum"]


def test_topic_sampler_seeded_and_overridable(tiny_corpus):
    def topics(env, seed, n=8):
        out = [env.reset(seed=seed)[1]["topic"]]
        out += [env.reset()[1]["topic"] for _ in range(n - 1)]
        return out

    env = _env(tiny_corpus)
    t1, t2 = topics(env, 5), topics(env, 5)
    assert t1 == t2 and set(t1) <= set(TOPICS) and len(set(t1)) > 1
    assert env.reset(options={"topic": "poetry"})[1]["topic"] == "poetry"
    cyc = make_scoring_env("discrete", corpus=tiny_corpus, topics=TOPICS, topic_mode="cycle", max_candidates=8)
    assert topics(cyc, 0, 4) == TOPICS + TOPICS[:1]
    with pytest.raises((KeyError, ValueError)):
        TopicSampler(gym.make("WikiCrawl-v1", corpus=tiny_corpus), ["no-such-topic-xyz"])


def test_topic_sampler_draws_seed_pages_with_the_topic_and_counts(tiny_corpus):
    base = gym.make("WikiCrawl-v1", corpus=tiny_corpus, max_episode_steps=5)
    seeds = [[tiny_corpus.titles[3]], [tiny_corpus.titles[7]]]
    env = TopicSampler(base, ["geology", "poetry"], seeds=seeds, names=["g", "p"], salt=7)
    from gym_crawl.crawl.state import VISITED

    for i in range(12):
        _, info = env.reset(seed=i)
        k = ["geology", "poetry"].index(env.last_topic)
        assert env.unwrapped.state.status[tiny_corpus.page_id(seeds[k][0])] == VISITED
    assert sum(env.counts.values()) == 12 and set(env.counts) == {"g", "p"}
    again = TopicSampler(gym.make("WikiCrawl-v1", corpus=tiny_corpus, max_episode_steps=5), ["geology", "poetry"],
                         seeds=seeds, names=["g", "p"], salt=7)
    for i in range(12):
        again.reset(seed=i)
    assert again.counts == env.counts
    with pytest.raises(ValueError, match="seeds must have one entry per topic"):
        TopicSampler(base, ["geology", "poetry"], seeds=seeds[:1])


def test_same_seed_same_trajectory(tiny_corpus):
    def run(kind, **kw):
        env = _env(tiny_corpus, kind, max_episode_steps=30, **kw)
        env.action_space.seed(7)
        env.reset(seed=11)
        pages = []
        done = False
        while not done:
            _, _, term, trunc, info = env.step(env.action_space.sample())
            pages.append(info["fetched_page"])
            done = term or trunc
        return pages

    for kind, kw in [("discrete", {"reducer": "random"}), ("continuous", {}), ("continuous", {"reducer": "full"})]:
        assert run(kind, **kw) == run(kind, **kw)


def test_wrappers_reject_other_envs():
    with pytest.raises(TypeError, match="WikiCrawl"):
        DiscreteScoringWrapper(gym.make("CartPole-v1"))
    with pytest.raises(TypeError, match="WikiCrawl"):
        LinearScoringWrapper(gym.make("CartPole-v1"))


def test_wrapper_spec_records_constructor_args(tiny_corpus):
    env = gym.make("WikiCrawl-v1", corpus=tiny_corpus, max_candidates=8)
    w = DiscreteScoringWrapper(env, flatten=True, reward_scale=0.25)
    spec = w.spec.additional_wrappers[-1]
    assert spec.name == "DiscreteScoringWrapper" and spec.kwargs == {"flatten": True, "reward_scale": 0.25}
    penv = gym.make("WikiCrawl-v1", corpus=tiny_corpus, max_candidates=8, action="page")
    c = LinearScoringWrapper(penv, top_rows=2)
    assert c.spec.additional_wrappers[-1].kwargs == {"top_rows": 2, "reward_scale": 1.0}


def test_wrappers_refuse_the_wrong_action_mode(tiny_corpus):
    with pytest.raises(ValueError, match="action='page'"):
        LinearScoringWrapper(gym.make("WikiCrawl-v1", corpus=tiny_corpus, max_candidates=8))
    with pytest.raises(ValueError, match="action='slot'"):
        DiscreteScoringWrapper(gym.make("WikiCrawl-v1", corpus=tiny_corpus, max_candidates=8, action="page"))


# ----------------------------------------------------------------------------- continuous wrapper
def test_linear_scoring_picks_argmax_over_slots(tiny_corpus):
    env = _env(tiny_corpus, "continuous", top_rows=2)
    base = env.unwrapped
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    d = env.action_space.shape[0]
    for _ in range(10):
        ids = info["candidate_ids"]
        mask = ids >= 0
        X = np.clip(base.view.features_of(ids[mask]), -1, 1)  # the rows the observation showed
        w = rng.uniform(-1, 1, d).astype(np.float32)
        sc = X @ w
        want = ids[int(np.argmax(sc))]
        obs, r, term, trunc, info = env.step(w)
        assert info["fetched_page"] == want and info["chosen_slot"] == int(np.argmax(sc))
        if term or trunc:
            break


def test_linear_scoring_zero_weights_is_first_slot(tiny_corpus):
    env = _env(tiny_corpus, "continuous")
    _, info = env.reset(seed=0)
    _, _, _, _, info2 = env.step(np.zeros(env.action_space.shape, np.float32))
    assert info2["fetched_page"] == info["candidate_ids"][0]


def test_linear_scoring_full_frontier_is_exact(tiny_corpus):
    env = _env(tiny_corpus, "continuous", reducer="full", max_candidates=4)
    base = env.unwrapped
    env.reset(seed=0)
    rng = np.random.default_rng(1)
    outside = 0
    for _ in range(15):
        F = base.view.frontier_pages().copy()
        w = rng.uniform(-1, 1, env.action_space.shape[0]).astype(np.float32)
        want = int(F[int(np.argmax(base.view.features_of(F) @ w))])  # brute force over the whole frontier
        _, _, term, trunc, info = env.step(w)
        assert info["fetched_page"] == want
        outside += info["chosen_slot"] == -1
        if term or trunc:
            break
    assert outside > 0, "with K=4 some argmax pages lie outside the shown slots (page action path exercised)"


def test_linear_scoring_budget_truncates_on_page_steps(tiny_corpus):
    env = _env(tiny_corpus, "continuous", reducer="full", max_candidates=2, max_episode_steps=6)
    env.reset(seed=0)
    rng = np.random.default_rng(2)
    for t in range(1, 7):
        _, _, term, trunc, info = env.step(rng.uniform(-1, 1, env.action_space.shape[0]).astype(np.float32))
        assert trunc == (t == 6) and not term
    assert info["steps"] == 6


def test_linear_scoring_rejects_bad_actions(tiny_corpus):
    env = _env(tiny_corpus, "continuous")
    env.reset(seed=0)
    d = env.action_space.shape[0]
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(d + 1, np.float32))
    with pytest.raises(ValueError, match="non-finite"):
        env.step(np.full(d, np.nan, np.float32))


def test_linear_scoring_clips_weights_to_the_box(tiny_corpus):
    """Out-of-box weights act like their clipped version (Gymnasium's out-of-bound Box convention)."""
    a, b = _env(tiny_corpus, "continuous"), _env(tiny_corpus, "continuous")
    a.reset(seed=0)
    b.reset(seed=0)
    rng = np.random.default_rng(3)
    for _ in range(8):
        w = rng.uniform(-5, 5, a.action_space.shape[0]).astype(np.float32)
        ia, ib = a.step(w)[4], b.step(np.clip(w, -1, 1))[4]
        assert ia["fetched_page"] == ib["fetched_page"]


def test_summary_observation_layout(tiny_corpus):
    env = _env(tiny_corpus, "continuous", top_rows=3, max_candidates=64)
    obs, _ = env.reset(seed=0)
    raw, _ = _env(tiny_corpus, "discrete", max_candidates=64).reset(seed=0)  # the same state's Dict observation
    X, m = raw["candidates"], raw["mask"].astype(bool)
    d = X.shape[1]
    assert obs.shape == (6 + 5 * d,) and env.observation_space.contains(obs)
    assert np.allclose(obs[:6], raw["state"])
    assert np.allclose(obs[6:6 + d], X[m].mean(0)) and np.allclose(obs[6 + d:6 + 2 * d], X[m].max(0))
    assert np.allclose(obs[6 + 2 * d:], np.where(m[:3, None], X[:3], 0).reshape(-1))
    assert np.array_equal(summarize_candidates(raw, 3), obs)
