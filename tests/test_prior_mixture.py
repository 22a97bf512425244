"""Learners that keep what best-first knows: the fixed best-first prior of the linear learners
(``prior_mode="fixed"``, variants ``online-classifier+prior`` / ``hashed-q+prior``) and ``best-first-mix``, a
Thompson bandit between best-first's and the online classifier's top page within one crawl."""
from __future__ import annotations

import numpy as np
import pytest

import gym_crawl  # noqa: F401
from gym_crawl.agents import make_agent, make_env_for, run_episode, run_episodes
from gym_crawl.agents.hashed.mixture import BestFirstMixAgent, ThompsonPair
from gym_crawl.agents.hashed.online_classifier import PRIOR_COLUMN

NEW = ["best-first-mix", "online-classifier+prior", "hashed-q+prior"]


def _env(agent, corpus, steps=40, topic="poetry"):
    return make_env_for(agent, corpus=corpus, topic=topic, reward="labels", max_episode_steps=steps)


def _best_first_pages(corpus, steps=40, topic="poetry", seed=0) -> list[int]:
    bf = make_agent("best-first")
    return run_episode(_env(bf, corpus, steps, topic), bf, seed=seed).fetched.tolist()


# ----------------------------------------------------------------------------------- the fixed prior
@pytest.mark.parametrize("name", ["online-classifier+prior", "hashed-q+prior"])
def test_untrained_prior_learner_crawls_as_best_first(tiny_corpus, name):
    """Without learning (lr = 0) the score is prior × best-first's link score: exactly best-first's pages."""
    agent = make_agent(name, lr=0.0, epsilon=0.0)
    got = run_episode(_env(agent, tiny_corpus), agent, seed=0).fetched.tolist()
    assert got == _best_first_pages(tiny_corpus)


@pytest.mark.parametrize("name", ["online-classifier", "hashed-q"])
def test_fixed_prior_is_not_eroded_by_learning(tiny_corpus, name):
    """With learning on, prior_mode="fixed" keeps the link-score weight at ``prior`` (online and target weights)
    while the residual moves; prior_mode="init" lets it move."""
    weights = {}
    for mode in ("init", "fixed"):
        agent = make_agent(name, features="hashed-site", prior_mode=mode, prior=3.0)
        env = _env(agent, tiny_corpus, steps=30, topic="geology")
        run_episodes(env, agent, 2, seed=1)
        col = env.unwrapped.view.feature_names.index(PRIOR_COLUMN)
        weights[mode] = agent.w.copy(), col
        if name == "hashed-q":
            assert agent.t >= agent.config["switch_every"] or agent.w_target[col] == 3.0
            assert agent.w_target[col] == (3.0 if mode == "fixed" else agent.w_target[col])
    (w_init, col), (w_fixed, _) = weights["init"], weights["fixed"]
    assert w_fixed[col] == 3.0
    assert w_init[col] != 3.0
    others = np.delete(w_fixed, col)
    assert np.count_nonzero(others) > 0, "the residual learned nothing"


def test_prior_options_are_refused_with_clear_errors(tiny_corpus):
    with pytest.raises(ValueError, match="prior_mode must be one of"):
        make_agent("online-classifier", prior_mode="frozen")
    with pytest.raises(ValueError, match="prior_mode must be one of"):
        make_agent("hashed-q+prior", prior_mode=1)
    agent = make_agent("online-classifier", features="site", prior_mode="fixed")
    with pytest.raises(ValueError, match=r"prior_mode='fixed' needs the 'a.link_rel' column.*'site'"):
        run_episode(_env(agent, tiny_corpus, steps=5), agent, seed=0)


# ---------------------------------------------------------------------------------------- the bandit
def test_thompson_pair_follows_the_arm_that_earns():
    rng = np.random.default_rng(0)
    tp = ThompsonPair()
    for i in range(40):
        tp.update([0], success=i % 2 == 0)  # best-first: half its picks relevant
        tp.update([1], success=False)  # learner: none
    picks = [tp.choose(rng) for _ in range(500)]
    assert np.mean(picks) < 0.02
    assert tp.means()[0] == pytest.approx(21 / 42) and tp.means()[1] == pytest.approx(1 / 42)
    tp.update([0, 1], success=True)  # both named the page: both credited
    assert tp.successes.tolist() == [21.0, 1.0] and tp.failures.tolist() == [20.0, 40.0]
    tp.reset()
    assert tp.means().tolist() == [0.5, 0.5]


def test_thompson_pair_discount_forgets_old_evidence():
    tp = ThompsonPair(prior=1.0, discount=0.5)
    for _ in range(20):
        tp.update([1], success=False)
    assert tp.failures[1] == pytest.approx(2.0, abs=1e-5)  # 1 + 1/2 + 1/4 + ... → 2
    tp.update([1], success=True)
    assert tp.successes[1] == 1.0 and tp.failures[1] == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("kw,match", [({"mix_prior": 0}, "mix_prior"), ({"mix_prior": float("nan")}, "mix_prior"),
                                      ({"mix_discount": 0.0}, "mix_discount"), ({"mix_discount": 1.5}, "mix_discount"),
                                      ({"epsilon": 0.1}, "unknown option")])
def test_mixture_options_are_refused_with_clear_errors(kw, match):
    with pytest.raises(ValueError, match=match):
        make_agent("best-first-mix", **kw)


def test_mixture_is_best_first_when_the_learner_agrees(tiny_corpus):
    """A learner that is best-first (no learning, the prior alone) names best-first's page every step."""
    agent = make_agent("best-first-mix", lr=0.0)
    got = run_episode(_env(agent, tiny_corpus), agent, seed=0).fetched.tolist()
    assert got == _best_first_pages(tiny_corpus)
    assert agent.followed.tolist() == [40, 0, 0]


def test_mixture_falls_back_to_best_first_when_the_learner_earns_nothing(tiny_corpus):
    """A constructed bad learner (no learning, w = −4 on the link score: it fetches the least topical link): its
    picks earn nothing, the bandit follows best-first, and the crawl finds nearly what best-first finds."""
    steps = 60
    bad = make_agent("online-classifier", features="hashed-site", prior=-4.0, lr=0.0)
    bad_found = run_episode(_env(bad, tiny_corpus, steps, "geology"), bad, seed=2).relevant_found
    bf = make_agent("best-first")
    bf_found = run_episode(_env(bf, tiny_corpus, steps, "geology"), bf, seed=2).relevant_found
    mix = make_agent("best-first-mix", prior=-4.0, lr=0.0)
    res = run_episode(_env(mix, tiny_corpus, steps, "geology"), mix, seed=2)
    assert bad_found < 0.5 * bf_found
    _, only_bf, only_learner = mix.followed.tolist()
    assert only_learner <= 0.15 * steps and only_bf >= 0.8 * steps
    assert mix.bandit.successes[1] == 0 and mix.bandit.failures[1] >= 1
    assert mix.bandit.means()[1] < 0.5 * mix.bandit.means()[0]
    assert res.relevant_found >= 0.85 * bf_found


def test_mixture_follows_the_learner_where_best_first_earns_nothing(tiny_corpus):
    """The mirror case: best-first's ranking inverted (it names the least topical link) and a learner that is
    best-first (no learning, the prior alone): the bandit follows the learner."""
    class InvertedBestFirstMix(BestFirstMixAgent):
        def best_first_scores(self, pages):
            return -self.env.link_scores(pages)

    steps = 60
    mix = InvertedBestFirstMix(lr=0.0)
    res = run_episode(_env(mix, tiny_corpus, steps, "geology"), mix, seed=2)
    _, only_bf, only_learner = mix.followed.tolist()
    assert only_learner >= 0.8 * steps and only_bf <= 0.15 * steps
    bf = make_agent("best-first")
    assert res.relevant_found >= 0.85 * run_episode(_env(bf, tiny_corpus, steps, "geology"), bf, seed=2).relevant_found


# ----------------------------------------------------------------------------------- the protocol
@pytest.mark.parametrize("name", NEW)
def test_new_agents_are_deterministic_and_read_no_hidden_information(tiny_corpus, name):
    runs = []
    for _ in range(2):
        agent = make_agent(name)
        assert agent.uses_hidden_information is False
        res = run_episodes(_env(agent, tiny_corpus, 25, "geology"), agent, 2, seed=4)
        runs.append([r.fetched.tolist() for r in res])
    assert runs[0] == runs[1], f"{name}: same seed, different crawl"
    assert isinstance(make_agent("best-first-mix"), BestFirstMixAgent)
