"""The process-wide topic scorer (per-worker memory): envs of one process share one scorer per
(corpus, text model, topic), its lazily filled score tables give the same trajectories whoever fills them
and in whatever order, and ``precompute_scores`` (fill everything now, for forked workers) changes nothing."""
from __future__ import annotations

import weakref

import gymnasium as gym
import numpy as np
import pytest

import gym_crawl  # noqa: F401
import gym_crawl.crawl.state as state_mod
import gym_crawl.relevance.scorer as scorer_mod


@pytest.fixture()
def lazy(monkeypatch):
    """Lazy (fetch-time) scoring on the tiny corpus and a fresh process-wide scorer memo."""
    monkeypatch.setattr(state_mod, "EAGER_SCORING_LINKS", 0)
    monkeypatch.setattr(scorer_mod, "_SHARED", weakref.WeakKeyDictionary())


def _make(corpus, topic="cancer"):
    return gym.make("WikiCrawl-v1", corpus=corpus, topic=topic, max_candidates=16, features="combined",
                    max_episode_steps=40)


def _trajectory(env, seed, precompute=False):
    obs, info = env.reset(seed=seed)
    if precompute:
        env.unwrapped.view.precompute_scores()
    rng = np.random.default_rng(seed)
    out = [obs["candidates"].copy()]
    done = False
    while not done:
        a = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, r, term, trunc, info = env.step(a)
        out += [np.array([info["fetched_page"], r]), obs["candidates"].copy()]
        done = term or trunc
    return out


def _same(a, b):
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def test_envs_of_a_process_share_the_scorer(tiny_corpus, lazy):
    e1, e2 = _make(tiny_corpus), _make(tiny_corpus)
    e1.reset(seed=0)
    e2.reset(seed=1)
    assert e1.unwrapped.scorer is e2.unwrapped.scorer
    e3 = _make(tiny_corpus, topic="poetry")
    e3.reset(seed=0)
    assert e3.unwrapped.scorer is not e1.unwrapped.scorer


def test_precompute_scores_changes_no_trajectory(tiny_corpus, lazy, monkeypatch):
    want = _trajectory(_make(tiny_corpus), seed=5)
    table = _make(tiny_corpus).unwrapped.scorer.link_table()
    assert not table.complete   # lazy: only the fetched pages' links were scored
    monkeypatch.setattr(scorer_mod, "_SHARED", weakref.WeakKeyDictionary())
    env = _make(tiny_corpus)
    got = _trajectory(env, seed=5, precompute=True)
    sc = env.unwrapped.scorer
    assert sc.link_table().complete and sc.page_table().complete and sc.page_table().done.all()
    assert _same(got, want)


def test_interleaved_envs_sharing_lazy_tables_match_lone_runs(tiny_corpus, lazy, monkeypatch):
    """Two crawls filling one scorer's tables in interleaved order = each crawl alone with its own scorer."""
    alone = []
    for seed in (1, 2):
        monkeypatch.setattr(scorer_mod, "_SHARED", weakref.WeakKeyDictionary())
        alone.append(_trajectory(_make(tiny_corpus), seed))
    monkeypatch.setattr(scorer_mod, "_SHARED", weakref.WeakKeyDictionary())
    envs = [_make(tiny_corpus), _make(tiny_corpus)]
    rngs, outs, infos = [], [], []
    for env, seed in zip(envs, (1, 2)):
        obs, info = env.reset(seed=seed)
        rngs.append(np.random.default_rng(seed))
        outs.append([obs["candidates"].copy()])
        infos.append(info)
    live = [True, True]
    while any(live):
        for i, env in enumerate(envs):
            if not live[i]:
                continue
            a = int(rngs[i].choice(np.flatnonzero(infos[i]["action_mask"])))
            obs, r, term, trunc, infos[i] = env.step(a)
            outs[i] += [np.array([infos[i]["fetched_page"], r]), obs["candidates"].copy()]
            live[i] = not (term or trunc)
    assert envs[0].unwrapped.scorer is envs[1].unwrapped.scorer
    assert _same(outs[0], alone[0]) and _same(outs[1], alone[1])
