"""``gym-crawl train`` on a task set: trains on its train tasks, evaluates on its test tasks and prints the
trained policy next to random, best-first and oracle (SB3 backend, tiny budgets)."""
from __future__ import annotations

import json

import pytest

from gym_crawl.benchmarks import train_report
from gym_crawl.cli import main

FLAGS = ["--algo", "maskable-ppo", "--timesteps", "128", "--n-envs", "1", "-K", "8", "--hidden", "8",
         "--no-progress", "--no-tensorboard", "--checkpoint-freq", "0", "--vec", "dummy",
         "--hyper", '{"n_steps": 64, "batch_size": 64}']


def test_train_on_a_task_set_reports_baselines(corpus_dir, tmp_path, capsys, monkeypatch):
    import gym_crawl.relevance.scorer as scorer_mod

    passes = []
    real = scorer_mod._fill_pages

    def fill_pages(tables, chunk, bar=None):
        passes.append(sum(not t.complete for t in tables))
        return real(tables, chunk, bar)

    monkeypatch.setattr(scorer_mod, "_fill_pages", fill_pages)
    out = tmp_path / "run"
    rc = main(["train", "--task-set", "ws-100", "--wikispeedia", corpus_dir, "--out", str(out),
               "--baseline-seeds", "2", "--seeds", "2", *FLAGS])
    assert rc == 0
    # every topic's score tables are filled in one pass before the first seed, and reused by both seeds,
    # the evaluations and the baselines
    cfg = json.loads((out / "seed0" / "config.json").read_text())
    labels = {t["topic"] for t in cfg["train_topics"] + cfg["eval_topics"]}
    assert [n for n in passes if n] == [len(labels)]
    text = capsys.readouterr().out
    assert "task set ws-100" in text
    for row in ("| trained maskable-ppo |", "| best-first |", "| random |", "| oracle |"):
        assert row in text
    rep = json.loads((out / "report.json").read_text())
    cfg = json.loads((out / "seed0" / "config.json").read_text())
    assert json.loads((out / "seed1" / "config.json").read_text())["seed"] == 1
    # trained on the train tasks, evaluated on the test tasks (disjoint labels), labels as reward, tasks' budget
    train_labels = {t["topic"] for t in cfg["train_topics"]}
    test_labels = {n.split("/")[0] for n in rep["test_tasks"]}
    assert train_labels and test_labels and not train_labels & test_labels
    assert cfg["reward"] == "labels" and cfg["max_episode_steps"] == 100 and cfg["eval_freq"] == 128 // 2
    # the task-set recipe fills what the command line leaves out
    assert cfg["features"] == "transferable+site" and cfg["prior"] == "none" and cfg["hyper"]["n_steps"] == 64
    assert cfg["torch_threads"] == 1
    assert cfg["hyper"]["ent_coef"] == train_report.RECIPE_HYPER["ent_coef"] and not cfg["eval_train"]
    assert all(t["seeds"] for t in cfg["train_topics"])
    ag = rep["agents"]
    assert ag["oracle"]["iqm"] == pytest.approx(1.0)
    assert len(rep["found"]["random"]) == 2 and len(rep["found"]["trained maskable-ppo"][0]) == len(test_labels)
    assert len(rep["found"]["trained maskable-ppo"]) == 2 and [r["seed"] for r in rep["runs"]] == [0, 1]
    assert "trained vs best-first: CIs" in text and "CPU-minutes" in text
    assert ag["best-first"]["ci"][0] <= ag["best-first"]["iqm"] <= ag["best-first"]["ci"][1]
    # the trained policy crawls with no flags: its env id, feature set and K come with it
    assert main(["crawl", "--agent", f"sb3:{out / 'seed0'}", "--corpus", corpus_dir, "--topic", "cancer",
                 "--steps", "5", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert (row["features"], row["K"], row["env_id"]) == ("transferable+site", 8, cfg["env_id"])


def test_named_topics_keep_the_plain_trainer_and_errors_name_the_flag(corpus_dir, tmp_path, capsys):
    rc = main(["train", "--corpus", corpus_dir, "--train-topics", "geology", "--eval-topics", "poetry",
               "--out", str(tmp_path / "plain"), "--max-episode-steps", "20", *FLAGS])
    assert rc == 0
    text = capsys.readouterr().out
    assert "relevant pages / episode" in text and "| best-first |" not in text
    assert not (tmp_path / "plain" / "report.json").exists()
    assert main(["train", "--task-set", "nope", "--out", str(tmp_path / "bad"), *FLAGS]) == 2
    assert "gym-crawl: error: unknown task set 'nope'" in capsys.readouterr().err
    assert main(["train", "--task-set", "ws-100", "--seeds", "0", "--out", str(tmp_path / "bad"), *FLAGS]) == 2
    assert "--seeds must be >= 1" in capsys.readouterr().err
    assert main(["train", "--task-set", "ws-100", "--wikispeedia", corpus_dir, "--features", "tres",
                 "--prior", "best-first", "--out", str(tmp_path / "bad"), *FLAGS]) == 2
    assert "--prior none" in capsys.readouterr().err


def test_report_normalizes_by_random_and_oracle():
    import numpy as np

    found = {"random": np.array([[1.0, 2.0], [3.0, 2.0]]), "oracle": np.array([[10.0, 2.0]]),
             "best-first": np.array([[6.0, 2.0]])}
    rep = train_report.report(found, reps=50)
    assert rep["best-first"]["tasks"] == 1  # the second task has oracle == random: dropped
    assert rep["best-first"]["iqm"] == pytest.approx(0.5) and rep["oracle"]["iqm"] == pytest.approx(1.0)


def test_one_training_seed_makes_no_ci_claim(corpus_dir, tmp_path, capsys):
    flags = [f if f != "128" else "64" for f in FLAGS]
    assert main(["train", "--task-set", "ws-100", "--wikispeedia", corpus_dir, "--out", str(tmp_path / "run"),
                 "--baseline-seeds", "2", "--seeds", "1", *flags]) == 0
    text = capsys.readouterr().out
    row = next(r for r in text.splitlines() if r.startswith("| trained maskable-ppo |"))
    assert row.split("|")[4].strip() == "—"  # one run per task: no interval
    assert "CIs above" not in text and "CIs below" not in text and "CIs overlapping" not in text
    assert "no CI with one evaluation run" in text and "--seeds 5" in text
