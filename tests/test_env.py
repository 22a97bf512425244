"""WikiCrawl-v1: API conformance, determinism, pickling, vector envs, action semantics, errors."""
from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest

import gym_crawl  # noqa: F401
from gym_crawl.agents import make_agent, make_env_for, run_episode
from gym_crawl.envs import WikiCrawlEnv
from gym_crawl.envs.wiki_crawl import INFO_KEYS


def make(corpus, **kw):
    kw.setdefault("max_episode_steps", 200)
    return gym.make("WikiCrawl-v1", corpus=corpus, **kw)


def test_registered_both_ways(tiny_corpus):
    env = gym.make("gym_crawl:WikiCrawl-v1", corpus=tiny_corpus)
    assert isinstance(env.unwrapped, WikiCrawlEnv)
    assert env.spec.max_episode_steps == gym_crawl.DEFAULT_MAX_EPISODE_STEPS  # the registered TimeLimit
    assert env.unwrapped.budget == gym_crawl.DEFAULT_MAX_EPISODE_STEPS  # handed to the env (it observes budget_used)


def test_gymnasium_check_env(tiny_corpus):
    from gymnasium.utils.env_checker import check_env

    env = make(tiny_corpus).unwrapped  # built first: Gymnasium notes that WikiCrawl-v2 is the newer default
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, skip_render_check=False)


def test_sb3_check_env(tiny_corpus):
    from stable_baselines3.common.env_checker import check_env

    env = make(tiny_corpus).unwrapped  # built first: Gymnasium notes that WikiCrawl-v2 is the newer default
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env, warn=True)
    # The one justified warning: "candidates" is (K, d) on purpose — rows are candidates that a
    # shared scoring network reads row by row (agents.sb3.policies); MultiInputPolicy flattens it.
    msgs = [str(w.message) for w in caught]
    assert all("unconventional shape" in m and "candidates" in m for m in msgs), msgs


def test_default_env_builds_and_resets():
    env = gym.make("WikiCrawl-v1")
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert info["pages_fetched"] >= 1 and info["frontier_size"] > 0


def test_action_outside_space_is_an_error_naming_the_range(tiny_corpus):
    env = make(tiny_corpus, max_candidates=16)
    env.reset(seed=0)
    for bad in (16, -1, 2.5, "x", "3", True, [[3]], [3], np.array([[3]]), np.float32(3.0), None):
        with pytest.raises(ValueError, match=r"Discrete\(16\).*0\.\.15"):
            env.unwrapped.step(bad)
    for good in (3, np.int64(3), np.array(3), np.array([3])):
        env.unwrapped.step(good)


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
    np.testing.assert_array_equal(obs2["mask"], obs["mask"])
    assert obs2["state"][0] > obs["state"][0]  # the spent step counts towards the budget (documented)
    np.testing.assert_array_equal(env.unwrapped.action_masks(), info2["action_mask"])


def test_info_keys_on_reset_and_step(tiny_corpus):
    """The documented key set, in both action modes (every reducer x feature set: test_conformance)."""
    for action in ("slot", "page"):
        env = make(tiny_corpus, action=action)
        _, i0 = env.reset(seed=0)
        a = 0 if action == "slot" else int(env.unwrapped.view.frontier_pages()[0])
        i1 = env.step(a)[-1]
        want = set(INFO_KEYS) - ({"action_mask"} if action == "page" else set())
        assert set(i0) == set(i1) == want


def test_truncation_and_termination(tiny_corpus):
    env = make(tiny_corpus, max_episode_steps=5)
    env.reset(seed=0)
    flags = [env.step(0)[3] for _ in range(5)]
    assert flags == [False] * 4 + [True]
    # crawl everything: the frontier empties and the episode terminates
    env = make_env_for("bfs", corpus=tiny_corpus, max_episode_steps=10_000)
    res = run_episode(env, make_agent("bfs"), seed=0)
    assert res.steps < 10_000 and len(env.unwrapped.view.frontier_pages()) == 0


@pytest.mark.parametrize("action", ["slot", "page"])
def test_no_step_after_the_episode_ended(tiny_corpus, action):
    """Issue 13.2: after truncation or termination, stepping is refused until reset (never keeps crawling)."""
    env = make(tiny_corpus, max_episode_steps=3, action=action)
    _, info = env.reset(seed=0)
    pick = (lambda i: 0) if action == "slot" else (lambda i: int(env.unwrapped.view.frontier_pages()[0]))
    for _ in range(3):
        *_, trunc, info = env.step(pick(info))
    assert trunc
    fetched = info["pages_fetched"]
    with pytest.raises(RuntimeError, match="episode is over.*truncated.*reset"):
        env.unwrapped.step(0)
    assert env.unwrapped.view.fetched_pages().size == fetched
    env.reset(seed=0)
    env.step(pick(info))  # a reset starts a new episode
    # termination: crawl the whole web, then one more step is refused
    env = make_env_for("bfs", corpus=tiny_corpus, max_episode_steps=10_000)
    run_episode(env, make_agent("bfs"), seed=0)
    with pytest.raises(RuntimeError, match="terminated: the frontier is empty"):
        env.unwrapped.step(0)


def test_reset_options_topic_and_seeds(tiny_corpus):
    env = make(tiny_corpus)
    _, info = env.reset(seed=0, options={"topic": "cancer", "seeds": ["Cancer"]})
    assert info["topic"] == "cancer"
    assert env.unwrapped.view.fetched_pages().tolist() == [tiny_corpus.page_id("Cancer")]
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
    ({"max_candidates": 2.5}, ValueError, "max_candidates must be an integer"),
    ({"max_candidates": True}, ValueError, "max_candidates must be an integer"),
    ({"seeds": "Geology"}, ValueError, r"seeds must be a list.*seeds=\['Geology'\]"),
    ({"seeds": []}, ValueError, "seeds is empty"),
    ({"seeds": [1.5]}, ValueError, "each seed must be"),
    ({"n_categories": -1}, ValueError, "n_categories must be >= 0"),
    ({"text": {"dim": 0}}, ValueError, r"text\['dim'\] must be >= 1"),
    ({"text": {"dimension": 8}}, ValueError, "unknown option"),
    ({"invalid_action_penalty": float("nan")}, ValueError, "invalid_action_penalty must be a finite number"),
    ({"beta": 2.0}, ValueError, "beta must be a number in"),
    ({"action": "pages"}, ValueError, "action 'pages'"),
    ({"observation": "dict"}, ValueError, "observation 'dict'"),
    ({"max_episode_steps": 0}, ValueError, "max_episode_steps"),
])
def test_bad_arguments_have_clear_errors(tiny_corpus, kw, exc, pattern):
    with pytest.raises(exc, match=pattern):
        env = make(tiny_corpus, **kw)
        env.reset(seed=0)


def test_unknown_corpus_path():
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        gym.make("WikiCrawl-v1", corpus="/nonexistent/corpus")


def test_argmax_frontier_is_exact(tiny_corpus):
    env = make(tiny_corpus, features="han2018").unwrapped
    env.reset(seed=0)
    for _ in range(30):
        env.step(0)
    w = np.random.default_rng(0).normal(size=env.view.feature_dim).astype(np.float32)
    F = env.view.frontier_pages()
    scores = env.view.features_of(F) @ w
    assert scores[list(F).index(env.view.argmax_frontier(w))] == pytest.approx(scores.max())


def test_render_ansi(tiny_corpus):
    env = make(tiny_corpus, render_mode="ansi")
    env.reset(seed=0)
    env.step(0)
    text = env.render()
    assert "topic=geology" in text and "frontier=" in text and "last:" in text


def test_domain_cap_limits_pages_per_domain(tiny_corpus):
    for cap, lim in ((3, 3), ("5-2", 5)):
        env = make_env_for("best-first", corpus=tiny_corpus, domain_cap=cap, max_episode_steps=300)
        run_episode(env, make_agent("best-first"), seed=0)
        st = env.unwrapped.state
        assert np.asarray(st.dom_fetched).max() <= lim
        F = st.frontier
        chained = []
        for d in range(len(tiny_corpus.domains)):  # the chains link slots
            s = st.dom_head[d]
            while s >= 0:
                chained.append(int(st.slot_page[s]))
                s = st.arrays["dom_next"][s]
        assert sorted(chained) == sorted(F.tolist())
        assert np.all(st.dom_fetched[st.page_domain[F]] < st.domain_cap)


# ------------------------------------------------------------------------ the page action mode
def test_page_mode_spaces_and_mask(tiny_corpus):
    env = make(tiny_corpus, action="page", observation="state")
    obs, info = env.reset(seed=0)
    base = env.unwrapped
    assert env.action_space == gym.spaces.Discrete(tiny_corpus.n_pages)
    assert env.observation_space.contains(obs) and obs.shape == (6,)
    assert "action_mask" not in info and (info["candidate_ids"] == -1).all()
    m = base.action_masks()
    assert m.shape == (tiny_corpus.n_pages,) and set(np.flatnonzero(m)) == set(base.view.frontier_pages().tolist())
    target = int(base.view.frontier_pages()[0])
    _, _, _, _, info = env.step(target)
    assert info["fetched_page"] == target and not base.view.is_frontier(target)


def test_page_mode_non_frontier_page_spends_the_step(tiny_corpus):
    env = make(tiny_corpus, action="page")
    _, info = env.reset(seed=0)
    seed = int(env.unwrapped.view.fetched_pages()[0])
    before = info["pages_fetched"]
    _, r, term, trunc, info = env.step(seed)  # already fetched: not a valid page, but inside the space
    assert info["invalid_action"] and info["fetched_page"] == -1 and info["pages_fetched"] == before
    assert r == pytest.approx(env.unwrapped.invalid_action_penalty) and info["steps"] == 1
    with pytest.raises(ValueError, match=rf"Discrete\({tiny_corpus.n_pages}\).*page id"):
        env.step(tiny_corpus.n_pages)


def test_page_and_slot_modes_share_one_mdp(tiny_corpus):
    """Fetching the same pages through either mode gives the same rewards and metrics."""
    a, b = make(tiny_corpus), make(tiny_corpus, action="page")
    _, ia = a.reset(seed=0)
    b.reset(seed=0)
    for _ in range(30):
        page = int(ia["candidate_ids"][0])
        _, ra, ta, tra, ia = a.step(0)
        _, rb, tb, trb, ib = b.step(page)
        assert (ra, ta, tra) == (rb, tb, trb) and ia["relevant_found"] == ib["relevant_found"]
        if ta or tra:
            break


def test_frontier_changes_and_fetched_text_accessors(tiny_corpus):
    env = make(tiny_corpus, action="page")
    env.reset(seed=0)
    base = env.unwrapped
    ch = base.view.frontier_changes()
    assert len(ch.new) and set(ch.new.tolist()) <= set(base.view.frontier_pages().tolist())
    assert not ch.new.flags.writeable
    page = int(base.view.frontier_pages()[0])
    with pytest.raises(ValueError, match="only fetched pages"):
        base.view.fetched_text(page)  # unfetched: not observable
    _, _, _, _, info = env.step(page)
    terms, counts = base.view.fetched_text(page)
    assert len(terms) == len(counts) > 0 and not terms.flags.writeable
    out = base.view.fetched_outlinks(page)
    assert set(base.view.frontier_changes().new.tolist()) <= set(out.tolist())
    assert info["n_new_pages"] == len(base.view.frontier_changes().new)


def test_runner_refuses_an_env_of_the_wrong_action_mode(tiny_corpus):
    with pytest.raises(ValueError, match="acts by 'page'.*make_env_for"):
        run_episode(make(tiny_corpus), make_agent("random"), seed=0)


def test_seeds_are_checked_at_make(tiny_corpus):
    with pytest.raises(KeyError, match="No Such Page"):
        gym.make("WikiCrawl-v1", corpus=tiny_corpus, seeds=["No Such Page"])


def test_non_finite_reward_is_refused(tiny_corpus):
    env = make(tiny_corpus, reward=lambda s: np.full(len(s.rel), np.nan))
    with pytest.raises(ValueError, match="non-finite"):
        env.reset(seed=0)


# ------------------------------------------------------------------ documented behaviour
def test_standard_wrappers_and_attributes(tiny_corpus):
    from gymnasium.wrappers import RecordEpisodeStatistics, TimeAwareObservation

    env = TimeAwareObservation(make(tiny_corpus, max_episode_steps=5))  # needs the spec's max_episode_steps
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    env = RecordEpisodeStatistics(make(tiny_corpus, max_episode_steps=5))
    _, info = env.reset(seed=0)
    for _ in range(5):
        *_, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert info["episode"]["l"] == 5  # every step was seen by the wrapper stack
    assert make(tiny_corpus, max_candidates=12).get_wrapper_attr("view").max_candidates == 12


def test_readme_example_is_reproducible(tiny_corpus):
    def run():
        env = gym.make("WikiCrawl-v1", corpus=tiny_corpus, max_episode_steps=30)
        obs, info = env.reset(seed=0)
        env.action_space.seed(0)
        fetched, done = [], False
        while not done:
            action = env.action_space.sample(mask=info["action_mask"].astype("int8"))
            obs, reward, terminated, truncated, info = env.step(action)
            fetched.append(info["fetched_page"])
            done = terminated or truncated
        return fetched

    assert run() == run()


def test_label_topic_without_seeds_fails_at_make_with_a_suggestion(tiny_corpus):
    """Issue 13.9: at gym.make, not at reset, naming the most linked labelled pages."""
    with pytest.raises(ValueError, match=r"no seed pages given.*most linked labelled pages: seeds=\['art "):
        gym.make("WikiCrawl-v1", corpus=tiny_corpus, topic="subject.art")
    env = gym.make("WikiCrawl-v1", corpus=tiny_corpus, topic="subject.art", seeds=["Poetry"])
    assert env.reset(seed=0)[1]["topic"] == "art"


def test_budget_is_the_env_keyword_and_set_budget_changes_it(tiny_corpus):
    """The env owns its budget (max_episode_steps); gym.make's limit reaches it before any reset."""
    env = make(tiny_corpus, max_episode_steps=7)
    assert env.unwrapped.budget == 7  # known at make, before the first reset
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(0)
    assert obs["state"][0] == pytest.approx(1 / 7)
    bare = WikiCrawlEnv(corpus=tiny_corpus)
    bare.reset(seed=0)
    assert bare.budget is None  # no budget: nothing truncates, state[0] stays 0
    bare.set_budget(3)
    bare.reset(seed=0)
    assert bare.budget == 3
    assert WikiCrawlEnv(corpus=tiny_corpus, max_episode_steps=9).budget == 9
    with pytest.raises(ValueError, match="max_episode_steps must be"):
        WikiCrawlEnv(corpus=tiny_corpus, max_episode_steps=0)
