"""``gym-crawl bench tres_own``: TRES's own protocol (one long crawl per test topic, learning online) beside the
suite's protocol, on the session's tiny corpus."""
from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from gym_crawl.benchmarks import suite, tres_own
from gym_crawl.tasks import tasks_for

#: the tiny corpus has 600 pages: fewer candidate slots than TRES's default 4,096
K = {"max_candidates": 256}


@pytest.fixture()
def tiny_tasks(tiny_corpus):
    tasks = tasks_for(tiny_corpus, "t", ("near",), min_pages=25, near_budget=15)
    test = [t for t in tasks if t.split == "test"]
    train = [t for t in tasks if t.split == "train"]
    assert test and train
    return train, test


def test_area_is_the_mean_found_so_far():
    assert tres_own.area(np.array([0, 1, 1, 3]), 4) == pytest.approx(5 / 4)
    # a crawl that ended early keeps its last count for the missing steps
    assert tres_own.area(np.array([1, 2]), 4) == pytest.approx((1 + 2 + 2 + 2) / 4)
    assert tres_own.area(np.array([], np.int64), 3) == 0.0


def test_own_crawl_learns_online_and_is_deterministic(tiny_corpus, tiny_tasks):
    _, test = tiny_tasks
    t = test[0]
    envs = suite.TaskEnvs(tiny_corpus)
    a = tres_own.own_crawl(envs, "tres", t, 6, seed=3, env=K)
    assert a["budget_long"] == 6 * t.budget and a["steps"] == 6 * t.budget
    # the DDQN updated its weights from the crawl's own transitions
    assert a["updates"] > 0 and a["weight_change"] > 0
    for k in ("found_long", "found_task", "harvest_long", "harvest_task", "area_long"):
        assert math.isfinite(a[k]) and a[k] >= 0
    assert a["found_task"] <= a["found_long"]
    # harvest rate: relevant ÷ pages fetched, the seed page included (the env's definition)
    assert a["harvest_long"] == pytest.approx(a["found_long"] / (a["steps"] + 1))
    assert a["harvest_task"] == pytest.approx(a["found_task"] / (t.budget + 1))
    assert a["area_long"] <= a["found_long"]  # the found curve never falls
    # same seed => same crawl (a fresh agent, a fresh env cache)
    b = tres_own.own_crawl(suite.TaskEnvs(tiny_corpus), "tres", t, 6, seed=3, env=K)
    for k in ("found_long", "found_task", "area_long", "updates", "weight_change"):
        assert a[k] == b[k], k
    # the first B steps of the long crawl are the crawl at budget B: the agent never reads the budget
    short = tres_own.own_crawl(suite.TaskEnvs(tiny_corpus), "tres", t, 1, seed=3, env=K)
    assert short["found_long"] == a["found_task"]


def test_ours_runs_is_the_suite_protocol(tiny_corpus, tiny_tasks, monkeypatch):
    from gym_crawl.agents.dqn.tres import TresAgent

    # the suite's job takes no env keywords: give the agent class itself fewer slots for this corpus
    monkeypatch.setattr(TresAgent, "env_defaults", {**TresAgent.env_defaults, **K})
    train, test = tiny_tasks
    tasks = train[:2] + test[:2]
    monkeypatch.setitem(suite._CORPORA, "tiny", tiny_corpus)
    job = {"corpus": "tiny", "agent": "tres", "tasks": [dataclasses.asdict(t) for t in tasks], "seeds": [1],
           "learner": True, "epochs": 1, "config": {}}
    want = {r["task"]: r["found"] for r in suite._job(job)}
    runs = tres_own.ours_runs(suite.TaskEnvs(tiny_corpus), "tres", train[:2], test[:2], 1)
    got = {r["task"]: r["found"] for r in runs}
    assert got == want and len(got) == len(test[:2])


def test_main_quick_end_to_end(tiny_corpus, tmp_path, monkeypatch):
    real = suite._load_corpus
    monkeypatch.setattr(suite, "_load_corpus", lambda spec: tiny_corpus if spec == "tiny" else real(spec))
    out = tmp_path / "out"
    rc = tres_own.main(["--quick", "--wikispeedia", "tiny", "--budget", "10", "--scale", "10", "--out", str(out)])
    assert rc == 0
    js = json.loads((out / "tres_own.json").read_text())
    assert js["about"]["quick"]
    (res,) = js["sets"]
    assert res["set"] == "ws-100" and res["seeds"] == 2 and res["scale"] == 10
    assert len(res["own"]) == 2 * 2 * res["tasks"]["test"]  # with and without the warm-up
    assert all(o["weight_change"] > 0 for o in res["own"])
    sm = res["summary"]
    assert set(sm["task"]["agents"]) == {"random", "best-first", "oracle", "tres own, first B",
                                         "tres own, no warm-up, first B", "tres ours",
                                         "tres ours, eval warm-up replayed"}
    for view in tres_own.VIEWS:
        ag = sm[view]["agents"]
        assert {"random", "best-first", "oracle"} <= set(ag)
        assert ag["oracle"]["iqm"] == pytest.approx(1.0)
        for v in ag.values():
            assert math.isfinite(v["iqm"]) and v["ci"][0] <= v["iqm"] + 1e-9 <= v["ci"][1] + 2e-9
            assert 0.0 <= v["mean_harvest_rate"] <= 1.0
    for view in ("long", "area"):  # the trained copies also crawl L steps
        want = {"tres own", "tres own, no warm-up", "tres ours", "tres ours, eval warm-up replayed"}
        assert want <= set(sm[view]["agents"])
    assert set(res["timing"]) == {"baselines", "tres own", "tres own, no warm-up", "tres ours (training + evaluations)"}
    # --parts: the baselines and the chosen rows only
    rc = tres_own.main(["--quick", "--wikispeedia", "tiny", "--budget", "10", "--scale", "10", "--parts",
                        "own,own-no-warm-up",
                        "--out", str(tmp_path / "own")])
    js2 = json.loads((tmp_path / "own" / "tres_own.json").read_text())
    assert set(js2["sets"][0]["timing"]) == {"baselines", "tres own", "tres own, no warm-up"}
    # deterministic: the same seeds give the same own-protocol crawls in both runs
    assert [o["found_long"] for o in js2["sets"][0]["own"]] == [o["found_long"] for o in res["own"]]
    md = (out / "tres_own.md").read_text()
    assert "| area over L | tres own |" in md and "| found at B | tres ours |" in md


def test_max_tasks_parsing():
    assert tres_own._max_tasks("docs-web=40, docs-web-hard=all") == (("docs-web", 40), ("docs-web-hard", None))
    assert tres_own._max_tasks(None) is None


def test_bad_arguments(tmp_path):
    with pytest.raises(SystemExit, match="unknown agent"):
        tres_own.main(["--agents", "no-such-agent", "--out", str(tmp_path)])
    with pytest.raises(SystemExit, match="do not learn"):
        tres_own.main(["--agents", "best-first", "--out", str(tmp_path)])
    with pytest.raises(SystemExit, match="SET=N"):
        tres_own.main(["--max-tasks", "docs-web=x", "--out", str(tmp_path)])
    with pytest.raises(SystemExit, match="--parts"):
        tres_own.main(["--parts", "own,nothing", "--out", str(tmp_path)])
    with pytest.raises(SystemExit, match="--seeds and --scale"):
        tres_own.main(["--scale", "0", "--out", str(tmp_path)])


def test_tres_evaluation_copies_act_from_their_first_step():
    """The suite's evaluation copy of every TRES variant skips the Tree-Random warm-up: a fresh copy restarts
    the step counter, and with the warm-up a 100-step test crawl would be all random actions."""
    from gym_crawl.agents import make_agent
    from gym_crawl.agents.variants import VARIANTS, eval_config_of

    names = ["tres"] + [n for n, v in VARIANTS.items() if v.agent == "tres"]
    assert len(names) >= 4
    for name in names:
        assert eval_config_of(name).get("warmup_steps") == 0, name
    trained = make_agent("tres")
    fresh_eval = make_agent("tres", **eval_config_of("tres"))
    assert trained.epsilon == 1.0  # a training copy starts in its warm-up
    assert fresh_eval.epsilon < 0.1  # the evaluation copy is ε-greedy from step 0
