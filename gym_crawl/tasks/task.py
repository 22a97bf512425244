"""A crawl task, the fixed train/test split rule, and the labels a task set can draw from."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from gym_crawl.relevance.topic import Topic

__all__ = ["Task", "TaskSet", "is_test_topic", "keep_first", "labelled_tasks", "task_kind"]


@dataclass(frozen=True)
class Task:
    """One crawl task: a label topic of a corpus, seed pages and a page budget.

    :param set_name: the task set it belongs to.
    :param label: the corpus label the topic is (relevant pages carry it or a sub-label).
    :param seeds: titles of the seed pages.
    :param budget: the page budget (env steps of the episode).
    :param n_members: pages carrying the label.
    :param split: ``"train"`` or ``"test"``.
    :param words: the words the task names its target with; empty (the default): the tokens of the label's
        last component. A set whose targets are not named by their label gives them here.
    :param corpus: the corpus spec of the task; empty (the default): its set's (:attr:`TaskSet.corpus_spec`). A
        set combining corpora (:func:`gym_crawl.tasks.own_web.combine`) names each task's.
    """

    set_name: str
    label: str
    seeds: tuple[str, ...]
    budget: int
    n_members: int
    split: str
    words: tuple[str, ...] = ()
    corpus: str = ""

    @property
    def name(self) -> str:
        """``<label>/<seed title>@<budget>``: the whole label, so tasks of labels that share their last
        components (``x.A``, ``y.A``) never merge in the score tables; ``<corpus>:`` before it when the task names
        its corpus, so tasks of two corpora never merge either."""
        return (f"{self.corpus}:" if self.corpus else "") + f"{self.label}/{self.seeds[0]}@{self.budget}"


@dataclass
class TaskSet:
    """The tasks of one set on one corpus (``corpus_spec``); ``note`` says why it is empty or how it is split."""

    name: str
    corpus_spec: str
    tasks: list[Task]
    note: str = ""


def is_test_topic(label: str) -> bool:
    """The fixed split: a topic is held out for testing when sha256(label) mod 3 == 0."""
    return int(hashlib.sha256(label.encode("utf-8")).hexdigest(), 16) % 3 == 0


def labelled_tasks(corpus: Any, min_pages: int = 25) -> list[tuple[str, np.ndarray]]:
    """``(label, member page ids)`` of every label carried by >= ``min_pages`` pages (exact label),
    sorted by label; member ids are the pages carrying it or a sub-label (the topic's label mask)."""
    counts = np.bincount(np.asarray(corpus.label_ids), minlength=len(corpus.labels))
    out = []
    for i, lab in enumerate(corpus.labels.tolist()):
        if counts[i] >= min_pages:
            mask = Topic(name="t", words=("x",), label=lab).label_mask(corpus)
            out.append((lab, np.flatnonzero(mask)))
    return sorted(out, key=lambda t: t[0])


def keep_first(tasks: list[Task], max_tasks: int | None) -> list[Task]:
    """The first ``max_tasks // 2`` train and the rest test tasks (at least one of each); all when ``None``."""
    if max_tasks is None:
        return tasks
    tr = [t for t in tasks if t.split == "train"][: max(1, max_tasks // 2)]
    te = [t for t in tasks if t.split == "test"][: max(1, max_tasks - len(tr))]
    return tr + te


def task_kind(corpus: Any, task: Task) -> str:
    """``"near"`` when the task's first seed page carries the task's label (or a sub-label), else ``"far"``."""
    seed = corpus.page_id(task.seeds[0])
    return "near" if Topic("t", ("x",), label=task.label).label_mask(corpus)[seed] else "far"
