"""Crawl-state invariants under thousands of random valid actions (hypothesis)."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gym_crawl  # noqa: F401
from gym_crawl.crawl import FRONTIER, VISITED


def check_invariants(env) -> None:
    s = env.state
    fetched = s.fetched_pages()
    assert len(set(fetched.tolist())) == len(fetched), "a page was fetched twice"
    F = s.frontier
    assert len(set(F.tolist())) == len(F)
    assert not set(F.tolist()) & set(fetched.tolist()), "frontier ∩ visited ≠ ∅"
    assert np.all(s.status[F] == FRONTIER) and np.all(s.status[fetched] == VISITED)
    assert np.all(s.fr_pos[F] == np.arange(len(F)))
    assert int((s.status == FRONTIER).sum()) == len(F)
    truth = env.scorer.label_mask[fetched] if env.topic.label else s.relevant[fetched]
    assert s.relevant_found == int(truth.sum())
    assert s.relevant_domains == len(set(s.page_domain[fetched[truth]].tolist()))
    assert np.all(s.n_par[F] >= 1) and np.all(s.best_parent[F] >= 0)
    assert np.all(s.status[s.best_parent[F]] == VISITED)
    assert np.isclose(s.reward_sum, float(s.reward[fetched].sum()), atol=1e-3)
    cand = env.view.candidate_pages()
    assert np.all(s.status[cand] == FRONTIER)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), reducer=st.sampled_from(["topk", "random", "outlinks", "full"]),
       cap=st.sampled_from([None, None, 4, "6-2"]), choices=st.lists(st.integers(0, 10**6), min_size=50, max_size=400))
def test_random_valid_actions_keep_invariants(tiny_corpus, seed, reducer, cap, choices):
    env = gym.make("WikiCrawl-v1", corpus=tiny_corpus, reducer=reducer, domain_cap=cap).unwrapped
    env.set_budget(len(choices))  # stepped unwrapped: the budget an adaptive cap falls over
    _, info = env.reset(seed=seed)
    for steps, c in enumerate(choices, 1):
        valid = np.flatnonzero(info["action_mask"])
        _, _, term, trunc, info = env.step(int(valid[c % len(valid)]))
        if steps % 25 == 0:
            check_invariants(env)
        assert info["pages_fetched"] == env.state.n_fetched
        assert info["harvest_rate"] == info["relevant_found"] / info["pages_fetched"]
        if term or trunc:
            break
    check_invariants(env)


def test_thousands_of_steps_through_page_interface(tiny_corpus):
    env = gym.make("WikiCrawl-v1", corpus=tiny_corpus, action="page", observation="state",
                   max_episode_steps=5000).unwrapped
    rng = np.random.default_rng(1)
    total = 0
    for ep in range(4):
        env.reset(seed=ep)
        while env.state.fr_size:
            F = env.view.frontier_pages()
            env.step(int(F[rng.integers(len(F))]))
            total += 1
        check_invariants(env)
        # a full crawl reaches every page reachable from the seed exactly once
        assert env.state.n_fetched == len(set(env.state.fetched_pages().tolist()))
    assert total > 2000
