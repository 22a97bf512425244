"""bench sb3_suite: a stock MaskablePPO trained on the suite's train topics, evaluated on its
test topics. The quick run end to end on the tiny labelled corpus; the split is never crossed (training
draws only train topics, evaluation runs only test topics); greedy evaluation is deterministic under a
seed; the saved agent reloads pickle-free and acts the same."""
from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from gym_crawl.agents.base import Agent
from gym_crawl.benchmarks import sb3_suite, suite
from gym_crawl.tasks import tasks_for


@pytest.fixture(scope="module")
def tiny_tasks(tiny_corpus):
    c = tiny_corpus
    tasks = tasks_for(c, "tiny", ("near",), min_pages=25, near_budget=15)
    train = [t for t in tasks if t.split == "train"]
    test = [t for t in tasks if t.split == "test"]
    assert train and test
    return c, train, test


@pytest.fixture(scope="module")
def trained(tiny_tasks):
    c, train, test = tiny_tasks
    venv = sb3_suite.make_train_env(c, train, budget=15, n_envs=1, features="transferable", max_candidates=8)
    r = sb3_suite.train_seed(c, train, test, 3, timesteps=128, eval_every=64, n_envs=1, features="transferable",
                             max_candidates=8, vec_env=venv, hyper={"n_steps": 64, "batch_size": 32, "n_epochs": 1})
    return c, train, test, r


def test_training_draws_only_train_topics(trained):
    _, train, test, r = trained
    drawn = set(r["sampled"])
    assert drawn and drawn <= {t.label for t in train}
    assert not drawn & {t.label for t in test}
    assert r["timesteps"] >= 128
    assert r["curve"][0][0] == 0 and r["curve"][-1][0] == r["timesteps"]


def test_split_is_enforced(tiny_tasks):
    c, train, test = tiny_tasks
    with pytest.raises(ValueError, match="test topics"):
        sb3_suite.make_train_env(c, train + test, budget=15, n_envs=1, features="transferable", max_candidates=8)
    from gym_crawl.agents import make_agent

    with pytest.raises(ValueError, match="test tasks only"):
        sb3_suite.evaluate_agent(make_agent("best-first"), sb3_suite._EvalEnvs(c), train, 0)


def test_train_env_task_sampler_is_seeded(tiny_tasks):
    c, train, _ = tiny_tasks
    from gym_crawl.wrappers import TopicSampler

    def topics(seed):
        venv = sb3_suite.make_train_env(c, train, budget=5, n_envs=1, features="transferable", max_candidates=8)
        env = venv.envs[0]
        while not isinstance(env, TopicSampler):
            env = env.env
        out = [env.reset(seed=seed)[1]["topic"]]
        out += [env.reset()[1]["topic"] for _ in range(7)]
        return out, dict(env.counts)

    a, counts = topics(5)
    assert a == topics(5)[0]
    assert sum(counts.values()) == 8 and set(counts) <= {t.label for t in train}


def test_evaluation_is_deterministic_and_reload_acts_the_same(trained, tmp_path):
    c, _, test, r = trained
    agent = r["agent"]
    envs = sb3_suite._EvalEnvs(c)
    a = sb3_suite.evaluate_agent(agent, envs, test, 3)
    b = sb3_suite.evaluate_agent(agent, envs, test, 3)
    assert [x["found"] for x in a] == [x["found"] for x in b] == [x["found"] for x in r["final"]]
    path = agent.save(tmp_path / "agent.npz")
    with np.load(path, allow_pickle=False) as z:  # plain arrays and a JSON header: no pickle
        assert "__header__" in z.files
    back = Agent.load(path, expect="sb3")
    assert back.env_defaults == {"features": "transferable", "reducer": "topk", "max_candidates": 8}
    sd, sd2 = agent.state_dict(), back.state_dict()
    assert sorted(sd) == sorted(sd2) and all(np.array_equal(sd[k], sd2[k]) for k in sd)
    c2 = sb3_suite.evaluate_agent(back, sb3_suite._EvalEnvs(c), test, 3)
    assert [x["found"] for x in c2] == [x["found"] for x in a]


def test_from_model_copies_the_weights(trained):
    import torch as th

    from gym_crawl.agents.sb3.agent import SB3Agent

    class _M:  # a stand-in "model" whose policy weights change after from_model
        policy = th.nn.Linear(2, 1)

    m = _M()
    agent = SB3Agent.from_model(m, algo="maskable-ppo", policy="MaskableCandidateScoringPolicy")
    before = agent.state_dict()["weight"].copy()
    with th.no_grad():
        m.policy.weight.add_(1.0)
    assert np.array_equal(agent.state_dict()["weight"], before)


def test_sb3_agent_env_kwargs_are_checked():
    from gym_crawl.agents.sb3.agent import SB3Agent

    with pytest.raises(ValueError, match="env_kwargs"):
        SB3Agent(env_kwargs=["features"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="action"):
        SB3Agent(env_kwargs={"action": "page"})


def test_quick_run_end_to_end(tiny_corpus, tmp_path, monkeypatch):
    real = suite._load_corpus
    monkeypatch.setattr(suite, "_load_corpus", lambda spec: tiny_corpus if spec == "tiny" else real(spec))
    out = tmp_path / "o"
    rc = sb3_suite.main(["--quick", "--wikispeedia", "tiny", "--out", str(out), "--budget", "15", "--timesteps", "64",
                         "--eval-every", "32", "--n-envs", "1", "--max-candidates", "8", "--no-progress"])
    assert rc == 0
    js = json.loads((out / "sb3_suite.json").read_text())
    e = js["sets"]["ws-100"]
    assert {"random", "oracle", "best-first", sb3_suite.AGENT} <= set(e["agents"])
    assert set(e["train_labels_sampled"]).isdisjoint(e["test_labels"])
    assert all(r["split"] == "test" for r in js["runs"])
    assert {r["seed"] for r in js["runs"] if r["agent"] == sb3_suite.AGENT} == {0, 1}
    assert e["curve"] and e["curve"][0]["steps"] == 0
    for f in ("sb3_suite.md", "sb3_suite.png", "ws-100_seed0.npz", "ws-100_seed1.npz"):
        assert (out / f).stat().st_size > 0
    assert "best-first" in (out / "sb3_suite.md").read_text()
