"""The task library: task sets, their fixed splits, task specs and one-call envs."""
from __future__ import annotations

import numpy as np
import pytest

from gym_crawl import tasks
from gym_crawl.agents import make_agent, run_episode


def test_parse_task_specs():
    assert tasks.parse("ws-100") == ("ws-100", "all", None)
    assert tasks.parse("ws-100:test") == ("ws-100", "test", None)
    assert tasks.parse("hard:train:3") == ("hard", "train", 3)
    for bad, needle in (("nope:test:1", "unknown task set 'nope'"), ("ws-100:dev:1", "split must be"),
                        ("ws-100:test:x", "index must be an integer"), ("ws-100:test:-1", ">= 0"),
                        ("ws-100:a:b:c", "expected"), ("", "task spec")):
        with pytest.raises(ValueError, match=needle):
            tasks.parse(bad)


def test_every_registered_set_has_a_builder_and_doc():
    assert {"ws-100", "ws-size", "ws-far", "hard", "hard-100k", "docs-web"} <= set(tasks.names())
    for name in tasks.names():
        d = tasks.TASK_SETS[name]
        assert callable(d.build) and d.doc


def test_task_set_on_a_given_corpus_has_both_splits(tiny_corpus):
    ts = tasks.task_set("ws-100", corpus=tiny_corpus)
    assert {t.split for t in ts.tasks} == {"train", "test"}
    split = tasks.split_labels(sorted({t.label for t in ts.tasks}))
    for t in ts.tasks:
        assert t.split == split[t.label]
        assert t.budget == min(100, tiny_corpus.n_pages - 1)


def test_get_and_make_one_task(tiny_corpus):
    test = [t for t in tasks.task_set("ws-100", corpus=tiny_corpus).tasks if t.split == "test"]
    task, corpus = tasks.get("ws-100:test:0", corpus=tiny_corpus)
    assert task == test[0] and corpus is tiny_corpus
    env = tasks.make("ws-100:test:0", "best-first", corpus=tiny_corpus)
    r = run_episode(env, make_agent("best-first"), seed=0)
    assert r.steps == task.budget
    crawl = env.unwrapped
    assert crawl.view.current_topic.label == task.label
    with pytest.raises(ValueError, match="out of range"):
        tasks.get(f"ws-100:test:{len(test)}", corpus=tiny_corpus)
    with pytest.raises(ValueError, match="names a set"):
        tasks.get("ws-100:test", corpus=tiny_corpus)


def test_make_overrides_win(tiny_corpus):
    env = tasks.make("ws-far:train:0", "best-first", corpus=tiny_corpus, max_episode_steps=7)
    r = run_episode(env, make_agent("best-first"), seed=1)
    assert r.steps == 7


def test_unavailable_corpus_is_a_clear_error(monkeypatch):
    from gym_crawl.tasks import sets

    def missing(spec):
        raise FileNotFoundError(f"no corpus {spec}")

    monkeypatch.setattr(tasks, "_corpus", missing)
    with pytest.raises(ValueError, match="task set 'hard' has no task: skipped: corpus 'synthetic-hard'"):
        tasks.task_set("hard")
    assert sets.TASK_SETS["hard"].corpus == "synthetic-hard"


def test_topic_of_carries_seeds(tiny_corpus):
    task, _ = tasks.get("ws-100:train:0", corpus=tiny_corpus)
    topic = tasks.topic_of(tiny_corpus, task)
    assert tuple(topic.seeds) == task.seeds and topic.label == task.label
    assert np.asarray(topic.label_mask(tiny_corpus)).sum() == task.n_members
