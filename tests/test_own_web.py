"""Your own web as tasks: the task set of any labelled corpus (near/far seeds, budgets, split by label or by
site), sets that combine corpora and budgets, and ``gym-crawl train`` / ``gym-crawl eval`` on such a corpus —
one without named topics, as a compiled crawl of your site is (tiny budgets and timesteps)."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from gym_crawl.benchmarks import evaluate as evaluate_mod
from gym_crawl.cli import main
from gym_crawl.tasks import build_task_sets, parse, task_set
from gym_crawl.tasks.own_web import (
    combine,
    corpus_set_name,
    corpus_tasks,
    label_sites,
    near_far_seeds,
    topic_seed_pages,
    with_budgets,
)
from gym_crawl.tasks.task import Task, labelled_tasks
from tests.conftest import make_tiny_corpus

TRAIN_FLAGS = ["--algo", "maskable-ppo", "--timesteps", "64", "--n-envs", "1", "-K", "8", "--hidden", "8",
               "--no-progress", "--no-tensorboard", "--checkpoint-freq", "0", "--vec", "dummy",
               "--hyper", '{"n_steps": 32, "batch_size": 32}']


def _own(seed: int, seeds: list[str] | None = None):
    """A tiny labelled web without a topic table (as a compiled crawl of one's own site)."""
    c = make_tiny_corpus(120, seed=seed)
    c.meta.pop("topics")
    if seeds:
        c.meta["default_seeds"] = seeds
    return c


@pytest.fixture(scope="module")
def own_dir(tmp_path_factory) -> str:
    return str(_own(1).save(tmp_path_factory.mktemp("own") / "mycorpus"))


@pytest.fixture(scope="module")
def other_dir(tmp_path_factory) -> str:
    return str(_own(2).save(tmp_path_factory.mktemp("other") / "otherweb"))


def test_corpus_tasks_near_and_far_seeds_budgets_and_split() -> None:
    c = _own(1)
    tasks = corpus_tasks(c, "mine")
    labels = [lab for lab, _ in labelled_tasks(c, 5)]
    assert sorted({t.label for t in tasks}) == labels == ["subject.art", "subject.gen", "subject.geo", "subject.med"]
    members = {lab: set(m.tolist()) for lab, m in labelled_tasks(c, 5)}
    indeg = c.in_degree()
    for t in tasks:
        seed = c.page_id(t.seeds[0])
        near = t.budget == tasks[0].budget
        assert (seed in members[t.label]) == near  # a near seed carries the label, a far one does not
        if near:  # the most in-linked member with out-links
            assert indeg[seed] == max(indeg[p] for p in members[t.label] if c.out_degree()[p] > 0)
    nb = tasks[0].budget
    assert 10 <= nb <= 100 and nb == int(np.median([len(members[lab]) for lab in labels]))
    assert {t.budget for t in tasks} == {nb, 2 * nb}
    assert {t.split for t in tasks} == {"train", "test"}
    assert len({(t.label, t.split) for t in tasks}) == len(labels)  # a label's tasks share a side


def test_far_seed_is_the_crawls_own_start_page_when_outside_the_label() -> None:
    c = _own(1, seeds=["Geology"])
    geo = np.flatnonzero(c.label_ids[c.label_ptr[:-1]] == c.labels.get("subject.geo"))
    med = np.flatnonzero(c.label_ids[c.label_ptr[:-1]] == c.labels.get("subject.med"))
    assert near_far_seeds(c, med)[1] == c.page_id("Geology")
    assert near_far_seeds(c, geo)[1] != c.page_id("Geology")  # inside the label: not a far seed


def test_far_seed_stays_on_the_labels_site() -> None:
    from gym_crawl.corpus import CorpusBuilder

    b = CorpusBuilder(name="two-sites")
    for i in range(10):  # a.org: five pages labelled x, five not; b.org: a hub every page links to
        b.add_page(f"a{i}", "rock stone", domain="a.org", labels=["x"] if i < 5 else [])
    b.add_page("hub", "city", domain="b.org")
    b.add_page("b1", "city", domain="b.org")
    for i in range(10):
        b.add_link(i, 10)
        b.add_link(i, (i + 1) % 10)
        b.add_link(10, i)
    for i in (6, 7):  # a6 is the most in-linked page of a.org outside x
        b.add_link(i, 6 if i == 7 else 7)
    b.add_link(9, 6)
    b.add_link(11, 10)
    c = b.build()
    members = np.arange(5)
    assert near_far_seeds(c, members)[1] == c.page_id("a6")  # not the hub of the other site
    c.meta["default_seeds"] = ["hub", "a8"]
    assert near_far_seeds(c, members)[1] == c.page_id("a8")  # the first own seed on the label's site


def test_split_by_site_holds_out_whole_sites() -> None:
    c = _own(1)
    tasks = corpus_tasks(c, "mine", split="site")
    sites = label_sites(c, labelled_tasks(c, 5))
    assert sites == {"subject.art": "art-0.org", "subject.gen": "gen-0.org", "subject.geo": "geo-0.org",
                     "subject.med": "med-0.org"}
    side = {sites[t.label]: t.split for t in tasks}
    assert set(side.values()) == {"train", "test"}
    with pytest.raises(ValueError, match="split must be one of"):
        corpus_tasks(c, "mine", split="domain")
    one = make_tiny_corpus(120, seed=1)
    one.page_domain[:] = 0  # one site
    with pytest.raises(ValueError, match="a split by site needs labels on two sites or more; every label of corpus "
                                         "'tiny-120-s1' is mostly on geo-0.org \\(split by label instead\\)"):
        corpus_tasks(one, "mine", split="site")


def test_topic_seed_pages_given_own_or_most_in_linked(tmp_path) -> None:
    c = _own(1)
    assert topic_seed_pages(c, "subject.med", ["Cancer"]) == ["Cancer"]
    with pytest.raises(KeyError, match="unknown page title 'Nope'"):
        topic_seed_pages(c, "subject.med", ["Nope"])
    near, _ = near_far_seeds(c, np.flatnonzero(np.isin(np.arange(c.n_pages), [
        p for p in range(c.n_pages) if "subject.med" in c.page_labels(p)])))
    assert topic_seed_pages(c, "subject.med") == [c.titles[near]]
    assert topic_seed_pages(_own(1, seeds=["Poetry"]), "subject.med") == ["Poetry"]  # the crawl's own seeds


def test_corpus_task_sets_by_name(own_dir) -> None:
    sets, corpora = build_task_sets([corpus_set_name(own_dir), corpus_set_name(own_dir, "site")])
    assert [s.name for s in sets] == [f"corpus:{own_dir}", f"corpus:{own_dir}@site"]
    assert all(s.corpus_spec == own_dir and s.tasks for s in sets) and list(corpora) == [own_dir]
    assert "split by site" in sets[1].note
    assert parse(f"corpus:{own_dir}:test:1") == (f"corpus:{own_dir}", "test", 1)
    assert task_set(f"corpus:{own_dir}").tasks == sets[0].tasks
    with pytest.raises(ValueError, match="unknown task set 'nope'.*corpus:PATH"):
        build_task_sets(["nope"])


def test_combine_trains_on_one_corpus_and_tests_on_another(own_dir, other_dir) -> None:
    (a, b), _ = build_task_sets([corpus_set_name(own_dir), corpus_set_name(other_dir)])
    both = combine("a->b", a, b)
    train = [t for t in both.tasks if t.split == "train"]
    test = [t for t in both.tasks if t.split == "test"]
    assert train == [dataclasses.replace(t, set_name="a->b", corpus=own_dir) for t in a.tasks if t.split == "train"]
    assert len(test) == len(b.tasks) and {t.corpus for t in test} == {other_dir}  # another web: every task
    assert all(t.name.startswith(f"{other_dir}:") for t in test)
    same = combine("a->a", a, a)
    assert sum(t.split == "test" for t in same.tasks) == sum(t.split == "test" for t in a.tasks)
    mixed = with_budgets(test, [10, 30])
    assert [t.budget for t in mixed] == [10] * len(test) + [30] * len(test)
    assert len({t.name for t in mixed}) == len(mixed)
    with pytest.raises(ValueError, match="budgets must be page counts >= 1"):
        with_budgets(test, [0])


def test_eval_on_own_corpus_and_across_corpora_and_budgets(own_dir, other_dir, tmp_path, capsys) -> None:
    js = tmp_path / "own.json"
    rc = main(["eval", "--corpus", own_dir, "--agents", "online-classifier", "--seeds", "2", "--json", str(js)])
    out = capsys.readouterr()
    assert rc == 0, out.err
    assert "Traceback" not in out.err
    res = json.loads(js.read_text())
    assert res["set"] == f"corpus:{own_dir}" and res["tasks"]["test"] > 0
    assert set(res["kinds"].values()) == {"near", "far"}
    assert res["agents"]["oracle"]["iqm"] == pytest.approx(1.0)
    # train on one web, test on another, at two budgets
    res = evaluate_mod.evaluate(corpus_set_name(other_dir), ["online-classifier"], seeds=1, budget=[10, 20],
                                train_on=corpus_set_name(own_dir), progress=False, reps=50)
    runs = [r for r in res["runs"] if r["agent"] == "online-classifier"]
    assert runs and {r["task"].split(":")[0] for r in runs} == {other_dir}
    assert {int(r["task"].rsplit("@", 1)[1]) for r in runs} == {10, 20}
    assert res["tasks"]["train"] > 0 and res["train_on"] == corpus_set_name(own_dir)


def test_eval_on_a_corpus_without_labels_says_how_to_label(tmp_path, capsys) -> None:
    c = make_tiny_corpus(40, seed=4)
    c.meta.pop("topics")
    path = str(c.save(tmp_path / "few"))
    assert main(["eval", "--corpus", path, "--min-pages", "30", "--agents", "random"]) == 2
    err = capsys.readouterr().err
    assert "no label of" in err and "has >= 30 pages" in err and "--label-rules FILE" in err


def test_eval_option_errors(own_dir, capsys) -> None:
    assert main(["eval", "--set", "hard", "--corpus", own_dir, "--agents", "random"]) == 2
    assert "give one of them" in capsys.readouterr().err
    assert main(["eval", "--split", "site", "--agents", "random"]) == 2
    assert "--split applies to --corpus" in capsys.readouterr().err


def test_train_on_own_corpus_task_set(own_dir, tmp_path, capsys) -> None:
    out = tmp_path / "run"
    rc = main(["train", "--corpus", own_dir, "--split", "site", "--seeds", "1", "--baseline-seeds", "1",
               "--out", str(out), *TRAIN_FLAGS])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert "Traceback" not in cap.err
    rep = json.loads((out / "report.json").read_text())
    assert rep["task_set"] == f"corpus:{own_dir}@site"
    assert len({t.rsplit("@", 1)[1] for t in rep["test_tasks"]}) == 1  # one training run, one budget
    assert (out / "seed0" / "agent.npz").exists()


def test_train_named_topics_on_a_corpus_without_topics(own_dir, tmp_path, capsys) -> None:
    out = tmp_path / "named"
    rc = main(["train", "--corpus", own_dir, "--train-topics", "subject.geo,subject.art",
               "--eval-topics", "subject.med", "--max-episode-steps", "10", "--out", str(out), *TRAIN_FLAGS])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert "eval  topics: relevant pages / episode" in cap.out
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["eval_topics"] == [{"topic": "subject.med", "seeds": topic_seed_pages(_own(1), "subject.med")}]
    rc = main(["train", "--corpus", own_dir, "--train-topics", "subject.geo", "--eval-topics", "subject.med",
               "--seed-pages", "Geology", "Poetry", "--seeds", "2", "--max-episode-steps", "10",
               "--out", str(tmp_path / "two"), *TRAIN_FLAGS])
    assert rc == 0, capsys.readouterr().err
    cfg = json.loads((tmp_path / "two" / "seed1" / "config.json").read_text())
    assert cfg["seed"] == 1 and cfg["train_topics"] == [{"topic": "subject.geo", "seeds": ["Geology", "Poetry"]}]


def test_train_worker_errors_are_one_line(own_dir, tmp_path, capsys) -> None:
    # two envs in worker processes: a topic that is not in the corpus fails in this process, once, no traceback
    rc = main(["train", "--corpus", own_dir, "--train-topics", "subject.geo", "--eval-topics", "volcanology",
               "--out", str(tmp_path / "bad"), *[f for f in TRAIN_FLAGS if f not in ("--vec", "dummy")],
               "--vec", "subproc", "--n-envs", "2"])
    err = capsys.readouterr().err
    assert rc == 2
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("gym-crawl: error: unknown topic 'volcanology'"), err
    assert "Connection reset" not in err


def test_task_names_carry_their_corpus() -> None:
    t = Task("s", "x.A", ("Seed",), 100, 30, "train")
    assert t.name == "x.A/Seed@100"
    assert dataclasses.replace(t, corpus="mine").name == "mine:x.A/Seed@100"


def test_one_meaning_per_option_name(tiny_corpus, tmp_path, capsys) -> None:
    """``--seed-pages`` names pages in crawl and train, ``--seeds`` counts random seeds in train and eval; crawl's
    old ``--seeds TITLE,...`` still works for one release, with one warning line."""
    from gym_crawl.benchmarks.evaluate import build_parser as eval_parser
    from gym_crawl.benchmarks.train_report import build_parser as train_parser

    path = str(tiny_corpus.save(tmp_path / "tiny"))
    base = ["crawl", "--corpus", path, "--topic", "poetry", "--steps", "5", "--json"]
    assert main([*base, "--seed-pages", "Poetry", "Cancer"]) == 0
    new = capsys.readouterr()
    assert main([*base, "--seeds", "Poetry,Cancer"]) == 0
    old = capsys.readouterr()
    assert json.loads(old.out)["relevant_found"] == json.loads(new.out)["relevant_found"]
    warnings = [x for x in old.err.splitlines() if "warning" in x]
    assert warnings == ["gym-crawl: warning: crawl --seeds is now --seed-pages PAGE [PAGE ...] (--seeds means random "
                        "seeds in train and eval); the old name goes in the next release"]
    assert "warning" not in new.err
    assert main([*base, "--seeds", "Poetry", "--seed-pages", "Cancer"]) == 2
    assert "give --seed-pages only" in capsys.readouterr().err
    for parser in (train_parser(), eval_parser()):
        seeds = next(a for a in parser._actions if "--seeds" in a.option_strings)
        assert seeds.type is int  # a count of random seeds
    pages = next(a for a in train_parser()._actions if "--seed-pages" in a.option_strings)
    assert pages.nargs == "+"
    assert main(["crawl", "--live", "http://127.0.0.1:9/", "--topic", "x", "--seed-pages", "A"]) == 2
    assert "--live replaces --corpus and --seed-pages" in capsys.readouterr().err


def test_suite_and_eval_cli_take_corpus_sets(own_dir, other_dir, tmp_path, capsys) -> None:
    from gym_crawl.benchmarks import suite

    out = tmp_path / "suite"
    assert suite.main(["--quick", "--sets", f"corpus:{own_dir}@site", "--agents", "online-classifier",
                       "--out", str(out)]) == 0
    js = json.loads((out / "suite.json").read_text())
    entry = js["sets"][f"corpus:{own_dir}@site"]
    assert entry["corpus"] == own_dir and entry["note"].startswith("split by site: test topics ")
    assert entry["agents"]["oracle"]["iqm"] == pytest.approx(1.0)
    capsys.readouterr()
    js = tmp_path / "cross.json"
    assert main(["eval", "--corpus", other_dir, "--train-on", own_dir, "--agents", "online-classifier",
                 "--seeds", "2", "--budget", "12", "--json", str(js)]) == 0
    res = json.loads(js.read_text())
    assert res["set"] == f"corpus:{own_dir} -> corpus:{other_dir}" and res["train_on"] == f"corpus:{own_dir}"
    learner = [r for r in res["runs"] if r["agent"] == "online-classifier"]
    assert learner and all(r["task"].startswith(f"{other_dir}:") and r["task"].endswith("@12") for r in learner)


def test_a_dead_env_worker_is_one_error_line(monkeypatch) -> None:
    """SB3's SubprocVecEnv reports a worker that died as the pipe's error (EOFError, 'Connection reset by peer');
    the trainer turns it into one OSError saying what happened and how to see the worker's error here."""
    import stable_baselines3.common.env_util as env_util

    from gym_crawl.agents.sb3 import train as sb3_train

    def dead(*args, **kwargs):
        raise ConnectionResetError(104, "Connection reset by peer")

    monkeypatch.setattr(env_util, "make_vec_env", dead)
    cfg = sb3_train.TrainConfig(corpus="synthetic-1000", train_topics=["geology"], eval_topics=[], vec="dummy",
                                n_envs=1)
    with pytest.raises(OSError, match=r"^an env worker process ended \(ConnectionResetError; its error is printed "
                                      r"above\); rerun with --vec dummy"):
        sb3_train.make_vec_env(cfg, ["geology"], 1, 0)


def test_a_scoring_env_sampling_topics_needs_no_default_topic() -> None:
    """On a corpus without a topic table the env is built on a sampled topic; a topic without seeds starts from its
    own pages (here the corpus' own seed), never from another task's."""
    from gym_crawl.relevance.topic import resolve_topic, seed_pages
    from gym_crawl.wrappers import make_scoring_env

    c = _own(1, seeds=["Geology"])  # the crawl's own seed: the seeds of a topic without any of its own
    env = make_scoring_env(topics=[{"topic": "subject.med", "seeds": ["Poetry"]}, "subject.geo"], topic_mode="cycle",
                           corpus=c, max_episode_steps=3)
    _, info = env.reset(seed=0)
    assert info["topic"] == "med" and env.unwrapped.view.fetched_pages().tolist() == [c.page_id("Poetry")]
    _, info = env.reset()
    assert seed_pages(resolve_topic("subject.geo", c), c).tolist() == [c.page_id("Geology")]
    assert info["topic"] == "geo" and env.unwrapped.view.fetched_pages().tolist() == [c.page_id("Geology")]
    env.close()
