"""The architecture refactor changed no trajectory: replay the agent runs recorded before it.

``tests/golden/trajectories.json`` was written by ``tests/golden/record.py`` at commit a802c88 (two
action paths, env-owned budget). Here every run goes through today's single path — ``make_env_for``
builds the env the agent needs, ``run_episode`` acts through ``env.step`` of the wrapped env and
``TimeLimit`` truncates — and must fetch the same pages with the same rewards, bit for bit.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gym_crawl.agents import make_agent, make_env_for, run_episode

# replaying the first release's env id on purpose
pytestmark = pytest.mark.filterwarnings("ignore:.*WikiCrawl-v0 is out of date")

GOLDEN = json.loads((Path(__file__).parent / "golden" / "trajectories.json").read_text())


def _replay(corpus, run: dict) -> None:
    kw = dict(run["env"])
    steps = kw.pop("max_steps")
    kw.pop("corpus", None)
    # WikiCrawl-v0: the recording's env (its default reward, han2018, applies where the run gave none)
    env = make_env_for(run["agent"], "WikiCrawl-v0", corpus=corpus, max_episode_steps=steps, **kw)
    agent = make_agent(run["agent"])
    for ep, want in enumerate(run["episodes"]):
        r = run_episode(env, agent, seed=ep)
        assert r.fetched.tolist() == want["fetched"], f"{run['agent']} episode {ep}: fetched pages differ"
        np.testing.assert_array_equal(r.rewards.astype(float), np.asarray(want["rewards"]),
                                      err_msg=f"{run['agent']} episode {ep}: rewards differ")
        assert (r.relevant_found, r.steps) == (want["relevant_found"], want["steps"])
    env.close()


@pytest.mark.parametrize("run", GOLDEN["agents"], ids=lambda r: r["agent"])
def test_agent_trajectories_unchanged(tiny_corpus, run):
    _replay(tiny_corpus, run)


@pytest.fixture(scope="module")
def synthetic_2000():
    from gym_crawl.corpus import load_corpus

    return load_corpus(GOLDEN["synthetic_corpus"])


@pytest.mark.parametrize("run", GOLDEN["synthetic_agents"], ids=lambda r: r["agent"])
def test_agent_trajectories_unchanged_on_synthetic(synthetic_2000, run):
    _replay(synthetic_2000, run)
