"""Agent behaviour is pinned: replay the agent runs recorded in ``tests/golden/trajectories.json``.

Every run goes through the single action path — ``make_env_for`` builds the env the agent needs, the agent
acts through ``env.step`` of the wrapped env and ``TimeLimit`` truncates — and must fetch the same pages with
the same rewards, bit for bit, on any x86-64 CPU and at any BLAS / OpenMP thread count. The PyTorch agents
(``tres``, ``tres-async``) are replayed under the tie rule of ``tests/golden_replay.py``: where the recording's
Q-value margin was a near-tie (< ``TIE_MARGIN``) the agent may choose the other action, and the replay continues
from the recorded one. How and when the file is recorded: ``tests/golden/record.py``.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest
from golden_replay import TIE_MARGIN, TOLERANT, NearTieError, agent_episodes

# replaying the first release's env id on purpose
pytestmark = pytest.mark.filterwarnings("ignore:.*WikiCrawl-v0 is out of date")

GOLDEN = json.loads((Path(__file__).parent / "golden" / "trajectories.json").read_text())


def _replay(corpus, run: dict) -> None:
    follow = run["episodes"] if run["agent"] in TOLERANT else None
    got, _ = agent_episodes(corpus, {"agent": run["agent"], "env": run["env"], "episodes": len(run["episodes"])},
                            follow)
    for ep, (g, want) in enumerate(zip(got, run["episodes"])):
        assert g["fetched"] == want["fetched"], f"{run['agent']} episode {ep}: fetched pages differ"
        np.testing.assert_array_equal(np.asarray(g["rewards"]), np.asarray(want["rewards"]),
                                      err_msg=f"{run['agent']} episode {ep}: rewards differ")
        assert (g["relevant_found"], g["steps"]) == (want["relevant_found"], want["steps"])


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


def test_the_tie_rule_refuses_a_decision_that_was_not_a_near_tie(tiny_corpus):
    """The PyTorch replay is not vacuous: a recorded action changed at a step whose margin was large fails."""
    run = copy.deepcopy(next(r for r in GOLDEN["agents"] if r["agent"] == "tres-async"))
    ep, t = next((e, i) for e, episode in enumerate(run["episodes"]) for i, m in enumerate(episode["margins"])
                 if m is not None and m > 100 * TIE_MARGIN)
    rec = run["episodes"][ep]
    rec["actions"][t] = next(int(p) for p in rec["fetched"] if int(p) != rec["actions"][t])
    with pytest.raises(NearTieError, match=f"episode {ep} step {t}: chose action"):
        agent_episodes(tiny_corpus, {"agent": run["agent"], "env": run["env"], "episodes": ep + 1}, run["episodes"])
