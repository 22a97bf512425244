"""The crawl step is pinned: replay the *env* runs recorded in ``tests/golden/trajectories.json``.

Under ``"env"`` the file holds one run per reducer x feature set on ``make_tiny_corpus()`` (topic "cancer",
K = 16, 40 steps, random valid slots drawn by ``np.random.default_rng(3)`` from the action mask, env seeded 3,
``tests/golden_replay.py``). Each run must fetch the same pages, earn the same rewards and show the same
observations (sha256 of candidate rows + mask), bit for bit, on any x86-64 CPU and thread count. The agent
runs of the same file are replayed by ``tests/test_golden.py``.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from golden_replay import env_run

# replaying the first release's env id on purpose
pytestmark = pytest.mark.filterwarnings("ignore:.*WikiCrawl-v0 is out of date")

GOLDEN = json.loads((Path(__file__).parent / "golden" / "trajectories.json").read_text())


@pytest.mark.parametrize("want", GOLDEN["env"], ids=lambda r: f"{r['reducer']}-{r['features']}")
def test_env_trajectories_unchanged(tiny_corpus, want):
    got = env_run(tiny_corpus, want["reducer"], want["features"])
    assert got["fetched"] == want["fetched"], "fetched pages differ"
    assert got["rewards"] == want["rewards"], "rewards differ"
    bad = [i for i, (g, w) in enumerate(zip(got["obs"], want["obs"])) if g != w]
    assert not bad and len(got["obs"]) == len(want["obs"]), f"observations differ from step {bad[:1]}"
    assert got["relevant_found"] == want["relevant_found"]


def test_replay_detects_a_changed_trajectory(tiny_corpus):
    """The comparison is not vacuous: the same configuration with another seed differs."""
    want = GOLDEN["env"][0]
    got = env_run(tiny_corpus, want["reducer"], want["features"], seed=4)
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
    got = env_run(tiny_corpus, want["reducer"], want["features"])
    assert (got["fetched"], got["rewards"], got["obs"]) == (want["fetched"], want["rewards"], want["obs"])
