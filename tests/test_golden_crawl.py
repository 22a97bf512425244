"""The crawl step's rewrite changed no trajectory: replay the *env* runs recorded before it.

``tests/golden/trajectories.json`` (written by ``tests/golden/record.py`` at commit a802c88) holds,
under ``"env"``, one run per reducer x feature set on ``make_tiny_corpus()``: topic "cancer",
K = 16, 40 steps, random valid slots drawn by ``np.random.default_rng(3)`` from the action mask,
env seeded 3. Each run must fetch the same pages, earn the same rewards and show the same
observations (sha256 of candidate rows + mask), bit for bit. The agent runs of the same file are
replayed by ``tests/test_golden.py``.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import gym_crawl  # noqa: F401

GOLDEN = json.loads((Path(__file__).parent / "golden" / "trajectories.json").read_text())


def _digest(*arrays: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def _run(corpus, reducer: str, features: str, seed: int = 3) -> dict:
    env = gym.make("WikiCrawl-v0", corpus=corpus, topic="cancer", reducer=reducer, features=features,
                   max_candidates=16, max_episode_steps=40)
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    fetched, rewards, obs_d = [], [], [_digest(obs["candidates"], obs["mask"])]
    for _ in range(40):
        m = info["action_mask"]
        a = int(rng.choice(np.flatnonzero(m))) if m.any() else 0
        obs, r, term, trunc, info = env.step(a)
        fetched.append(int(info["fetched_page"]))
        rewards.append(float(r))
        obs_d.append(_digest(obs["candidates"], obs["mask"]))
        if term or trunc:
            break
    env.close()
    return {"fetched": fetched, "rewards": rewards, "obs": obs_d, "relevant_found": int(info["relevant_found"])}


@pytest.mark.parametrize("want", GOLDEN["env"], ids=lambda r: f"{r['reducer']}-{r['features']}")
def test_env_trajectories_unchanged(tiny_corpus, want):
    got = _run(tiny_corpus, want["reducer"], want["features"])
    assert got["fetched"] == want["fetched"], "fetched pages differ"
    assert got["rewards"] == want["rewards"], "rewards differ"
    bad = [i for i, (g, w) in enumerate(zip(got["obs"], want["obs"])) if g != w]
    assert not bad and len(got["obs"]) == len(want["obs"]), f"observations differ from step {bad[:1]}"
    assert got["relevant_found"] == want["relevant_found"]


def test_replay_detects_a_changed_trajectory(tiny_corpus):
    """The comparison is not vacuous: the same configuration with another seed differs."""
    want = GOLDEN["env"][0]
    got = _run(tiny_corpus, want["reducer"], want["features"], seed=4)
    assert got["fetched"] != want["fetched"] and got["obs"] != want["obs"]


@pytest.mark.parametrize("want", [r for r in GOLDEN["env"] if r["features"] == "combined"],
                         ids=lambda r: f"{r['reducer']}-lazy")
def test_lazy_scoring_gives_the_same_trajectories(tiny_corpus, want, monkeypatch):
    """Corpora above ``EAGER_SCORING_LINKS`` score pages and link ranges as they are fetched."""
    import weakref

    import gym_crawl.crawl.state as state_mod
    import gym_crawl.relevance.scorer as scorer_mod

    monkeypatch.setattr(state_mod, "EAGER_SCORING_LINKS", 0)
    # a fresh process-wide scorer: the earlier tests' (complete) tables must not be reused
    monkeypatch.setattr(scorer_mod, "_SHARED", weakref.WeakKeyDictionary())
    got = _run(tiny_corpus, want["reducer"], want["features"])
    assert (got["fetched"], got["rewards"], got["obs"]) == (want["fetched"], want["rewards"], want["obs"])
