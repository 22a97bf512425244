"""``gym-crawl eval``: agents × a task set × seeds → normalized scores on the test topics, with random,
best-first and oracle always run, a table, JSON, and a PNG only with ``--plot``."""
from __future__ import annotations

import json

import pytest

from gym_crawl.benchmarks import evaluate, suite
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
    res = evaluate.evaluate("ws-100", ["best-first"], seeds=1, budget=10, wikispeedia="tiny", progress=False)
    assert set(res["agents"]) == {"random", "best-first", "oracle"}
    assert all(r["found"] <= 10 + 1 for r in res["runs"])  # the budget (plus the seed page) bounds every crawl
    assert "| best-first |" in evaluate.format_table(res)
    assert not list(tmp_path.iterdir())


def test_eval_bad_arguments(tiny_sets, capsys):
    assert main(["eval", "--set", "ws-100", "--wikispeedia", "tiny", "--agents", "no-such-agent"]) == 2
    assert "no-such-agent" in capsys.readouterr().err
    assert main(["eval", "--set", "nope"]) == 2
    assert "unknown task set 'nope'" in capsys.readouterr().err
    assert main(["eval", "--set", "ws-100", "--wikispeedia", "tiny", "--seeds", "0"]) == 2
    assert "--seeds" in capsys.readouterr().err


def _runs(found: dict[str, dict[str, list[int]]]) -> list[dict]:
    """Test-split runs from ``{agent: {task: [found per seed]}}``."""
    return [{"agent": a, "task": t, "label": t, "split": "test", "seed": s, "found": f}
            for a, by in found.items() for t, fs in by.items() for s, f in enumerate(fs)]


def test_summarize_separates_far_and_near_and_counts_wins_ties_losses():
    kinds = {"a": "far", "b": "far", "c": "near", "d": "near", "e": "near"}
    found = {"random": {t: [0, 0] for t in kinds}, "oracle": {t: [10, 10] for t in kinds},
             "best-first": {t: [5, 5] for t in kinds},
             # x: above best-first on both far tasks; on near tasks one above, one tie, one below
             "x": {"a": [9, 7], "b": [6, 6], "c": [10, 10], "d": [5, 5], "e": [0, 2]}}
    out = evaluate.summarize(_runs(found), kinds, list(found), 2, learners=["x"], reps=50)
    x = out["agents"]["x"]
    assert out["n_test_tasks"] == 5 and out["best_learner"] == "x"
    assert (x["groups"]["far"]["wins"], x["groups"]["far"]["ties"], x["groups"]["far"]["losses"]) == (2, 0, 0)
    assert (x["groups"]["near"]["wins"], x["groups"]["near"]["ties"], x["groups"]["near"]["losses"]) == (1, 1, 1)
    assert (x["wins_vs_best_first"], x["ties_vs_best_first"], x["losses_vs_best_first"]) == (3, 1, 1)
    assert x["groups"]["far"]["n_tasks"] == 2 and x["groups"]["near"]["n_tasks"] == 3
    assert x["groups"]["far"]["mean"] == pytest.approx((0.9 + 0.7 + 0.6 + 0.6) / 4)
    assert x["groups"]["far"]["ci_above_best_first"] and not x["groups"]["near"]["ci_above_best_first"]
    bf = out["agents"]["best-first"]["groups"]
    assert all(g["iqm"] == pytest.approx(0.5) and g["ties"] == g["n_tasks"] for g in bf.values())
    with pytest.raises(ValueError, match="near/far"):
        evaluate.summarize(_runs(found), {"a": "far"}, list(found), 2)


def test_summarize_drops_tasks_the_oracle_cannot_separate_from_random():
    kinds = {"a": "far", "b": "near"}
    found = {"random": {"a": [3, 3], "b": [0, 0]}, "oracle": {"a": [3, 3], "b": [4, 4]},
             "best-first": {"a": [3, 3], "b": [2, 2]}}
    out = evaluate.summarize(_runs(found), kinds, list(found), 2, reps=20)
    assert out["dropped_tasks"] == ["a"] and out["n_test_tasks"] == 1 and out["best_learner"] is None
    assert set(out["agents"]["best-first"]["groups"]) == {"all", "near"}


def test_eval_table_and_json_carry_far_near_and_report_reprints(tiny_sets, tmp_path, capsys):
    js = tmp_path / "eval.json"
    assert main(["eval", "--set", "ws-far", "--wikispeedia", "tiny", "--agents", "online-classifier", "--seeds", "2",
                 "--budget", "12", "--json", str(js)]) == 0
    out = capsys.readouterr().out
    assert "far seed: IQM [95 % CI]" in out and "W/T/L vs best-first (far)" in out
    res = json.loads(js.read_text())
    assert set(res["kinds"].values()) == {"far"}  # ws-far seeds lie outside the category
    g = res["agents"]["online-classifier"]["groups"]
    assert set(g) == {"all", "far"} and g["far"]["wins"] + g["far"]["ties"] + g["far"]["losses"] == res["n_test_tasks"]
    assert res["best_learner"] == "online-classifier"
    assert main(["eval", "--report", str(js)]) == 0
    again = capsys.readouterr().out
    assert again.splitlines()[0] == out.splitlines()[0]
    assert main(["eval", "--report", str(js), str(js)]) == 0  # several files: one table of their sets
    rows = [r for r in capsys.readouterr().out.splitlines() if r.startswith("| ws-far (")]
    assert len(rows) == 4 and sum("| online-classifier* |" in r for r in rows) == 2
    assert not any("| random |" in r or "| oracle |" in r for r in rows)
    assert main(["eval", "--report", str(js), str(js), "--plot", str(tmp_path / "x.png")]) == 2
    assert "one file" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main(["eval", "--report", str(bad)]) == 2
    assert "bad.json" in capsys.readouterr().err


def test_eval_config_reaches_the_agent_and_is_recorded(tiny_sets, tmp_path, capsys):
    js = tmp_path / "eval.json"
    rc = main(["eval", "--set", "ws-100", "--wikispeedia", "tiny", "--agents", "hashed-q", "--seeds", "1",
               "--budget", "10", "--config", 'hashed-q:features="hashed-site"', "--json", str(js)])
    assert rc == 0
    assert json.loads(js.read_text())["config"] == {"hashed-q": {"features": "hashed-site"}}
    # the tables name the agent with its options: the run's own, --report's, and several files' one
    assert "| hashed-q (features=hashed-site) |" in capsys.readouterr().out
    assert main(["eval", "--report", str(js)]) == 0
    assert "| hashed-q (features=hashed-site) |" in capsys.readouterr().out
    assert main(["eval", "--report", str(js), str(js)]) == 0
    rows = [r for r in capsys.readouterr().out.splitlines() if "| hashed-q" in r]
    assert len(rows) == 2 and all("| hashed-q (features=hashed-site)" in r for r in rows)
    res = {"config": {"x": {"gamma": 0.5, "features": "site"}}}
    assert evaluate.agent_label(res, "x") == "x (features=site, gamma=0.5)"
    assert evaluate.agent_label(res, "best-first") == "best-first"
    # a value the agent cannot use is refused by name, so the option did reach it
    assert main(["eval", "--set", "ws-100", "--wikispeedia", "tiny", "--agents", "hashed-q", "--seeds", "1",
                 "--budget", "10", "--config", 'hashed-q:features="no-such-set"']) == 2
    assert "no-such-set" in capsys.readouterr().err
    assert main(["eval", "--set", "ws-100", "--wikispeedia", "tiny", "--agents", "hashed-q",
                 "--config", "online-classifier:gamma=0.5"]) == 2
    assert "online-classifier" in capsys.readouterr().err
    assert main(["eval", "--set", "ws-100", "--wikispeedia", "tiny", "--agents", "hashed-q",
                 "--config", "hashed-q:features=hashed-site"]) == 2
    assert "double quotes" in capsys.readouterr().err


def test_eval_help_states_each_default_once():
    ap = evaluate.build_parser()
    fmt = ap._get_formatter()
    texts = {a.dest: fmt._get_help_string(a) or "" for a in ap._actions
             if a.option_strings and a.dest not in ("help", "verbose", "quiet")}  # counted flags have no default
    assert all(t.count("default:") == 1 for t in texts.values()), texts
    assert texts["plot"].endswith("(default: no plot)") and texts["seeds"].endswith("(default: %(default)s)")


def test_one_seed_gives_no_ci_and_no_claim_about_it(tiny_sets, tmp_path, capsys):
    # one run per task: the stratified bootstrap resamples nothing, so an interval would have zero width
    js, png = tmp_path / "one.json", tmp_path / "one.png"
    assert main(["eval", "--set", "ws-100", "--wikispeedia", "tiny", "--agents", "online-classifier", "--seeds", "1",
                 "--budget", "12", "--json", str(js), "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    res = json.loads(js.read_text())
    assert res["has_ci"] is False and res["best_learner"] == "online-classifier"
    assert all(g["ci_above_best_first"] is None for v in res["agents"].values() for g in v["groups"].values())
    rows = [r for r in out.splitlines() if r.startswith("| online-classifier |")]
    assert len(rows) == 1 and "[" not in rows[0]  # an IQM, no interval
    assert "CI" not in out.splitlines()[2] and "Best learner" not in out and "above" not in out
    assert evaluate.NO_CI in out and "--seeds 5" in out
    assert main(["eval", "--report", str(js), str(js)]) == 0  # the multi-set table says it too
    assert evaluate.NO_CI in capsys.readouterr().out
    assert png.stat().st_size > 1000


def test_eval_takes_verbosity_flags(tiny_sets, capsys):
    assert main(["eval", "-q", "--set", "nope"]) == 2  # accepted after the name, as by every sub-command
    assert "unknown task set 'nope'" in capsys.readouterr().err
    assert main(["-v", "eval", "--set", "nope"]) == 2
    assert "Traceback" in capsys.readouterr().err  # -v: the error's traceback
