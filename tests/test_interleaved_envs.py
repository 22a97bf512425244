"""Two batched envs in one process share the per-topic score tables of their corpus (one scorer per corpus and
topic). On a web too large to score up front the tables are keyed and grow as pages are fetched: stepping the two
envs in turn, each one's fills grow the tables under the other's bound arrays, and the trajectories must still be
the ones each env gives on its own."""
from __future__ import annotations

import numpy as np
from conftest import make_tiny_corpus

import gym_crawl  # noqa: F401
import gym_crawl.crawl.state as state_mod
import gym_crawl.relevance.scorer as scorer_mod
from gym_crawl.envs import make_vector_env

_N, _STEPS = 8, 40


def _obs_bytes(obs) -> bytes:
    return b"".join(np.ascontiguousarray(obs[k]).tobytes() for k in sorted(obs)) if isinstance(obs, dict) \
        else np.asarray(obs).tobytes()


def _actions(env, rng) -> np.ndarray:
    return np.array([int(rng.choice(np.flatnonzero(m))) if m.any() else 0 for m in env.unwrapped.action_masks()])


def _run(envs: list, steps: int) -> list[list[bytes]]:
    """Reset and step ``envs`` in turn with the same seed and actions (the first env's masks pick them)."""
    traces: list[list[bytes]] = [[] for _ in envs]
    for e, tr in zip(envs, traces):
        tr.append(_obs_bytes(e.reset(seed=3)[0]))
    rng = np.random.default_rng(0)
    for _ in range(steps):
        acts = _actions(envs[0], rng)
        for e, tr in zip(envs, traces):
            obs, r, term, trunc, _ = e.step(acts)
            tr.append(_obs_bytes(obs) + r.tobytes() + term.tobytes() + trunc.tobytes())
    return traces


def test_interleaved_batched_envs_on_growing_keyed_tables_step_as_each_alone(monkeypatch):
    monkeypatch.setattr(state_mod, "EAGER_SCORING_LINKS", 0)  # keyed tables, filled as pages are fetched
    monkeypatch.setattr(scorer_mod, "MIN_ROWS", 8)  # they grow many times during the run
    kw = dict(max_candidates=16, max_episode_steps=30)
    # alone: one env on its own corpus (its own tables)
    alone = _run([make_vector_env("WikiCrawl-v1", num_envs=_N, corpus=make_tiny_corpus(2000, seed=11,
                                                                                        domains_per_kind=5), **kw)],
                 _STEPS)[0]
    corpus = make_tiny_corpus(2000, seed=11, domains_per_kind=5)
    envs = [make_vector_env("WikiCrawl-v1", num_envs=_N, corpus=corpus, **kw) for _ in range(2)]
    a, b = _run(envs, _STEPS)
    links = envs[0].unwrapped.envs[0].state.link_scores
    assert links.keyed and links.gen > 3  # the shared link table grew while both envs were bound to it
    assert envs[1].unwrapped.envs[0].state.link_scores is links
    assert [i for i, (x, y) in enumerate(zip(a, alone)) if x != y] == []
    assert [i for i, (x, y) in enumerate(zip(b, alone)) if x != y] == []
