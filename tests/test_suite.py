"""The benchmark suite: task construction, the fixed split, normalized scores, the IQM and
its stratified bootstrap CI, and ``main --quick`` end to end on a tiny labelled corpus."""
from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from gym_crawl.benchmarks import suite
from gym_crawl.tasks import split_labels, tasks_for


def test_split_is_fixed_by_the_name():
    labels = [f"subject.topic{i}" for i in range(60)]
    a = [suite.is_test_topic(x) for x in labels]
    assert a == [suite.is_test_topic(x) for x in labels]
    assert 10 < sum(a) < 30  # about a third held out
    # the split of a label never depends on the others
    assert split_labels(labels)["subject.topic7"] == ("test" if suite.is_test_topic("subject.topic7") else "train")


def test_split_never_leaves_a_side_empty():
    for labels in (["a", "b"], ["x.y", "x.z", "w"]):
        sp = split_labels(labels)
        assert set(sp.values()) == {"train", "test"}


def test_tasks_near_size_far(tiny_corpus):
    tasks = tasks_for(tiny_corpus, "t", ("near", "size", "far"), min_pages=25, near_budget=50, far_budget=70)
    labs = {t.label for t in tasks}
    assert labs == {"subject.geo", "subject.med", "subject.art", "subject.gen"}
    indeg = tiny_corpus.in_degree()
    for t in tasks:
        from gym_crawl.relevance.topic import Topic

        members = np.flatnonzero(Topic("t", ("x",), label=t.label).label_mask(tiny_corpus))
        seed = tiny_corpus.page_id(t.seeds[0])
        assert t.n_members == len(members)
        if t.budget == 50:  # near: the most in-linked member
            assert seed in members and indeg[seed] == indeg[members].max()
        elif t.budget == 70:  # far: the most in-linked page outside
            assert seed not in members
            outside = np.setdiff1d(np.arange(tiny_corpus.n_pages), members)
            assert indeg[seed] == indeg[outside].max()
        else:
            assert t.budget == len(members)
        assert t.split in ("train", "test")


def test_normalized_scores_by_hand():
    runs = []
    for s in (0, 1):
        runs += [{"agent": "random", "task": "A", "split": "test", "seed": s, "found": 2 + 2 * s},  # mean 3
                 {"agent": "oracle", "task": "A", "split": "test", "seed": s, "found": 13},
                 {"agent": "x", "task": "A", "split": "test", "seed": s, "found": 8 if s == 0 else 3},
                 {"agent": "random", "task": "B", "split": "test", "seed": s, "found": 5},
                 {"agent": "oracle", "task": "B", "split": "test", "seed": s, "found": 5},  # no headroom: dropped
                 {"agent": "x", "task": "B", "split": "test", "seed": s, "found": 5},
                 {"agent": "x", "task": "C", "split": "train", "seed": s, "found": 99}]
    scores, kept, dropped = suite.normalized_scores(runs, ["random", "oracle", "x"], [0, 1])
    assert kept == ["A"] and dropped == ["B"]
    np.testing.assert_allclose(scores["x"][:, 0], [0.5, 0.0])
    np.testing.assert_allclose(scores["oracle"], 1.0)
    np.testing.assert_allclose(scores["random"].mean(), 0.0)


def test_iqm_and_bootstrap_ci():
    rng = np.random.default_rng(0)
    m = rng.normal(size=(5, 12))
    point, lo, hi = suite.iqm_ci(m, reps=500)
    assert point == pytest.approx(stats.trim_mean(m.ravel(), 0.25))
    assert lo < point < hi
    c = np.full((5, 4), 0.7)
    assert suite.iqm_ci(c, reps=100) == pytest.approx((0.7, 0.7, 0.7))


@pytest.mark.slow  # a benchmark run
def test_quick_run_end_to_end(tiny_corpus, tmp_path, monkeypatch):
    # the session's in-memory tiny corpus (its text model is already trained) stands for Wikispeedia
    real = suite._load_corpus
    monkeypatch.setattr(suite, "_load_corpus", lambda spec: tiny_corpus if spec == "tiny" else real(spec))
    out = tmp_path / "out"
    rc = suite.main(["--quick", "--wikispeedia", "tiny", "--out", str(out), "--budget", "20",
                     "--sets", "ws-100", "ws-far", "ws-size",
                     "--agents", "best-first", "online-classifier", "lfa-sync+content"])
    assert rc == 0
    js = json.loads((out / "suite.json").read_text())
    assert js["meta"]["quick"] and js["meta"]["seeds"] == 2
    assert js["meta"]["variants"]["lfa-sync+content"]["env"] == {"features": "transferable"}
    for name in ("ws-100", "ws-far", "ws-size"):
        e = js["sets"][name]
        assert e["tasks"]["train"] >= 1 and e["tasks"]["test"] >= 1
        ag = e["agents"]
        assert set(ag) == {"random", "oracle", "best-first", "online-classifier", "lfa-sync+content"}
        assert ag["oracle"]["iqm"] == pytest.approx(1.0)
        assert abs(ag["random"]["mean"]) < 1e-9  # random's mean over seeds is the zero point by construction
        for v in ag.values():
            assert v["ci"][0] <= v["ci"][1] and len(v["mean_per_seed"]) == 2
    # far-seed tasks start outside the category
    for t in js["tasks"]["ws-far"]:
        from gym_crawl.relevance.topic import Topic

        assert not Topic("t", ("x",), label=t["label"]).label_mask(tiny_corpus)[tiny_corpus.page_id(t["seeds"][0])]
    # learners are evaluated on test tasks only, after training on train tasks
    e = js["sets"]["ws-100"]
    for learner in ("online-classifier", "lfa-sync+content"):
        learner_runs = [r for r in js["runs"] if r["agent"] == learner and r["set"] == "ws-100"]
        assert learner_runs and all(r["split"] == "test" for r in learner_runs)
        assert all(r["train_episodes"] == e["tasks"]["train"] for r in learner_runs)
        test_labels = {t["label"] for t in js["tasks"]["ws-100"] if t["split"] == "test"}
        assert {r["label"] for r in learner_runs} == test_labels
    md = (out / "leaderboard.md").read_text()
    assert "| online-classifier |" in md and "| lfa-sync+content |" in md and "## ws-far" in md
    assert (out / "leaderboard.png").stat().st_size > 1000
    assert (out / "profiles_ws-100.png").stat().st_size > 1000
    # merging per-set runs gives the same leaderboard numbers as the joint run
    parts = []
    for name in ("ws-100", "ws-far"):
        sub = {**js, "sets": {name: js["sets"][name]}, "tasks": {name: js["tasks"][name]},
               "runs": [r for r in js["runs"] if r["set"] == name]}
        (tmp_path / name).mkdir()
        (tmp_path / name / "suite.json").write_text(json.dumps(sub))
        parts.append(str(tmp_path / name))
    assert suite.main(["--quick", "--merge", *parts, "--out", str(tmp_path / "merged")]) == 0
    mj = json.loads((tmp_path / "merged" / "suite.json").read_text())
    assert set(mj["sets"]) == {"ws-100", "ws-far"}
    for name in ("ws-100", "ws-far"):
        for a, v in mj["sets"][name]["agents"].items():
            assert v["iqm"] == pytest.approx(js["sets"][name]["agents"][a]["iqm"])
    with pytest.raises(ValueError, match="more than one file"):
        suite.merge([parts[0], parts[0]], tmp_path / "bad")


def test_variants_resolve_to_registered_agents_with_their_env():
    from gym_crawl.agents import agent_names, env_kwargs_for, make_agent

    for name, v in suite.VARIANTS.items():
        assert v.agent in agent_names() and name in suite.suite_agent_names()
        assert suite.resolve_agent(name) is v
        kw = env_kwargs_for(make_agent(v.agent, **v.config), **{**v.env, "reward": "labels"})  # the caller's wins
        assert kw.get("features") == v.env.get("features", kw.get("features")) and kw["reward"] == "labels"
        agent = make_agent(v.agent, **v.config)
        assert all(agent.config[k] == val for k, val in v.config.items())   # the variant's options reach the agent
    assert suite.is_learner("lfa-sync+content") and not suite.is_learner("best-first")
    # a plain registered name is itself, with the suite's evaluation overrides
    assert suite.resolve_agent("hashed-q") == suite.Variant("hashed-q", {}, {}, {"epsilon": 0.0})
    # paper-faithful defaults stay untouched: the variant's options do not leak into the registered agent
    assert make_agent("lfa-sync").alpha == 0.001
    assert make_agent("td-lambda").inputs == "keywords"
    assert make_agent("td-lambda", **suite.VARIANTS["td-lambda+content"].config).inputs == "content"


def test_bad_arguments(tmp_path):
    with pytest.raises(SystemExit, match="unknown agent"):
        suite.main(["--quick", "--agents", "no-such-agent", "--out", str(tmp_path)])
    with pytest.raises(SystemExit, match="--config"):
        suite.main(["--quick", "--config", "oops", "--out", str(tmp_path)])
    with pytest.raises(ValueError, match="unknown task set"):
        suite.build_task_sets(["nope"], wikispeedia="x")


@pytest.mark.parametrize("name", suite.SEED_INDEPENDENT)
def test_seed_independent_agents_really_are(tiny_corpus, name):
    """The suite runs these once per task and reuses the result for every seed: their crawl must not
    depend on the seed."""
    from gym_crawl.agents import make_agent, make_env_for, run_episode

    env = make_env_for(name, corpus=tiny_corpus, topic="geology", reward="labels", max_episode_steps=30)
    runs = [run_episode(env, make_agent(name), seed=s).fetched.tolist() for s in (0, 1, 7)]
    assert runs[0] == runs[1] == runs[2]
