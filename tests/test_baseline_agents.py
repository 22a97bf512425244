"""The registered baselines of the literature: best-first as a page agent, ACHE-like, SeedFinder-like, and
TRES's Table 4 rows as variants."""
from __future__ import annotations

import numpy as np
import pytest

from gym_crawl.agents import agent_names, env_kwargs_for, make_agent, make_env_for, run_episode
from gym_crawl.agents.hashed.online_classifier import OnlineClassifierAgent
from gym_crawl.agents.hashed.seedfinder import SeedFinderAgent
from gym_crawl.relevance.classifier import heldout_view
from gym_crawl.relevance.search import search_engine, seedfinder_results


@pytest.fixture(scope="module")
def view(tmp_path_factory):
    """A 5,000-page synthetic web with a held-out classifier-train split (its classifiers see no evaluation
    page)."""
    from gym_crawl.webgen.synthetic import synthetic_corpus

    with pytest.MonkeyPatch.context() as mp:  # module scope: before the per-test cache isolation applies
        mp.setenv("GYM_CRAWL_DATA", str(tmp_path_factory.getbasetemp() / "gym_crawl_data"))
        return heldout_view(synthetic_corpus(5000), 0.3)


def test_baselines_are_registered():
    assert {"best-first-page", "ache", "seedfinder", "tres-clf", "tres-svm", "tres-nh"} <= set(agent_names())


def test_best_first_page_fetches_best_firsts_order(tiny_corpus):
    runs = {}
    for name in ("best-first", "best-first-page"):
        env = make_env_for(name, corpus=tiny_corpus, topic="geology", max_episode_steps=30)
        runs[name] = run_episode(env, make_agent(name), seed=2).fetched.tolist()
    assert make_agent("best-first-page").action_kind == "page"
    assert runs["best-first"] == runs["best-first-page"]


def test_ache_is_the_online_classifier_fed_by_the_svm_page_classifier(view):
    agent = make_agent("ache")
    assert isinstance(agent, OnlineClassifierAgent) and agent.registered_name == "ache"
    assert env_kwargs_for(agent)["reward"] == "classifier-svm"
    env = make_env_for(agent, corpus=view, topic="geology", max_episode_steps=20)
    r = run_episode(env, agent, seed=0)
    scheme = env.unwrapped.scheme
    assert scheme.name == "classifier" and scheme.kind == "svm"
    # its label of a fetched page is the page classifier's verdict (the reward), not the page's label
    verdict = scheme.classifier.proba_pages(view, r.fetched[-20:]) >= 0.5
    assert np.array_equal(r.rewards > 0, verdict)
    # a caller's reward replaces the page classifier (the task sets' reward="labels")
    env = make_env_for("ache", corpus=view, reward="labels", max_episode_steps=5)
    assert env.unwrapped.view.reward_name == "labels"


def test_seedfinder_spends_budget_on_search_results_and_repeats(view):
    runs = []
    for _ in range(2):
        env = make_env_for("seedfinder", corpus=view, topic="geology", max_episode_steps=100)
        agent = make_agent("seedfinder")
        r = run_episode(env, agent, seed=4)
        found = env.last_results
        assert len(found) == SeedFinderAgent.search_budget(100) == 50
        assert r.steps == 100 - len(found)
        assert set(found.tolist()) < set(r.fetched[: 1 + len(found)].tolist())  # the crawl starts from them
        assert r.pages_fetched == 1 + len(found) + r.steps  # the same 100 pages beside the seed as any agent
        runs.append(r.fetched.tolist())
    assert runs[0] == runs[1]
    # a small budget: at most half of it goes to the search
    env = make_env_for("seedfinder", corpus=view, topic="geology", max_episode_steps=20)
    r = run_episode(env, make_agent("seedfinder"), seed=0)
    assert len(env.last_results) == 10 and r.steps == 10


def test_seedfinder_refuses_a_budget_without_room_and_a_live_corpus(view):
    with pytest.raises(ValueError, match="max_episode_steps must be >= 2"):
        make_env_for("seedfinder", corpus=view, max_episode_steps=1)
    from gym_crawl.wrappers.seed_search import SeedSearch

    env = make_env_for("ache", corpus=view, max_episode_steps=5)
    with pytest.raises(ValueError, match="static corpus"):
        SeedSearch(env, object(), None)
    with pytest.raises(ValueError, match="rounds must be an int >= 1"):
        SeedSearch(env, view, None, rounds=0)


def test_seedfinder_search_reads_no_label(view):
    """Relabelling every page leaves the downloads unchanged: only text and the page classifier's verdicts
    are read (the classifier is trained before, on the classifier-train split)."""
    import dataclasses

    from gym_crawl.features.tres_clf import topic_classifier
    from gym_crawl.relevance.topic import resolve_topic, seed_pages
    from gym_crawl.text.model import get_text_model

    text = get_text_model(view)
    topic = resolve_topic("geology", view)
    judge = topic_classifier(view, topic, text, kinds=("svm",))
    seeds = seed_pages(topic, view)
    a = seedfinder_results(view, search_engine(view, text.idf), topic.words, judge, seeds, rounds=3, results=5)
    flipped = dataclasses.replace(view, label_ids=np.roll(np.asarray(view.label_ids), 1), path=None)
    b = seedfinder_results(flipped, search_engine(view, text.idf), topic.words, judge, seeds, rounds=3, results=5)
    assert len(a) == 15 and np.array_equal(a, b)
    assert len(seedfinder_results(view, search_engine(view, text.idf), topic.words, judge, seeds, rounds=3,
                                  results=5, max_results=7)) == 7


@pytest.mark.parametrize("name,features,reward", [("tres-clf", "tres-clf", "classifier"),
                                                  ("tres-svm", "tres-clf-svm", "classifier-svm"),
                                                  ("tres-nh", "tres-clf-nh", "classifier")])
def test_tres_table4_variants(name, features, reward):
    agent = make_agent(name, seed=0)
    assert agent.name == "tres" and agent.registered_name == name
    kw = env_kwargs_for(agent)
    assert kw["features"] == features and kw["reward"] == reward and kw["reducer"] == "tree"
