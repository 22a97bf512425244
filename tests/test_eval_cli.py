"""``gym-crawl eval``: agents × a task set × seeds → normalized scores on the test topics, with random,
best-first and oracle always run, a table, JSON, and a PNG only with ``--plot``."""
from __future__ import annotations

import json

import pytest

from gym_crawl.benchmarks import _evaluate, suite
from gym_crawl.cli import main


@pytest.fixture
def tiny_sets(tiny_corpus, monkeypatch):
    # the in-memory tiny corpus (three labels) stands for Wikispeedia
    real = suite._load_corpus
    monkeypatch.setattr(suite, "_load_corpus", lambda spec: tiny_corpus if spec == "tiny" else real(spec))
    return tiny_corpus


def test_eval_command_table_json_and_plot(tiny_sets, tmp_path, capsys):
    js, png = tmp_path / "eval.json", tmp_path / "eval.png"
    rc = main(["eval", "--set", "ws-100", "--wikispeedia", "tiny", "--agents", "online-classifier", "--seeds", "2",
               "--budget", "15", "--json", str(js), "--plot", str(png)])
    assert rc == 0
    out = capsys.readouterr().out
    for a in ("random", "best-first", "oracle", "online-classifier"):
        assert f"| {a} |" in out
    res = json.loads(js.read_text())
    ag = res["agents"]
    assert ag["oracle"]["iqm"] == pytest.approx(1.0) and abs(ag["random"]["mean"]) < 1e-9
    assert res["seeds"] == 2 and res["budget"] == 15
    # the learner trained on the train tasks and was scored on the test tasks only
    learner = [r for r in res["runs"] if r["agent"] == "online-classifier"]
    assert learner and all(r["split"] == "test" for r in learner)
    assert {r["seed"] for r in learner} == {0, 1}
    n = res["n_test_tasks"]
    assert ag["best-first"]["wins_vs_best_first"] == 0 and ag["best-first"]["losses_vs_best_first"] == 0
    assert all(v["wins_vs_best_first"] + v["losses_vs_best_first"] <= n for v in ag.values())
    for v in ag.values():
        assert v["ci"][0] <= v["iqm"] + 1e-9 and v["iqm"] <= v["ci"][1] + 1e-9
    assert png.stat().st_size > 1000


def test_eval_writes_no_plot_without_the_flag(tiny_sets, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = _evaluate.evaluate("ws-100", ["best-first"], seeds=1, budget=10, wikispeedia="tiny", progress=False)
    assert set(res["agents"]) == {"random", "best-first", "oracle"}
    assert all(r["found"] <= 10 + 1 for r in res["runs"])  # the budget (plus the seed page) bounds every crawl
    assert "| best-first |" in _evaluate.format_table(res)
    assert not list(tmp_path.iterdir())


def test_eval_bad_arguments(tiny_sets, capsys):
    assert main(["eval", "--set", "ws-100", "--wikispeedia", "tiny", "--agents", "no-such-agent"]) == 2
    assert "no-such-agent" in capsys.readouterr().err
    assert main(["eval", "--set", "nope"]) == 2
    assert "unknown task set 'nope'" in capsys.readouterr().err
    assert main(["eval", "--set", "ws-100", "--wikispeedia", "tiny", "--seeds", "0"]) == 2
    assert "--seeds" in capsys.readouterr().err
