"""Task sets: named lists of crawl tasks over a corpus, each task on a fixed side of a train/test split.

A :class:`Task` is (label topic of a corpus, seed pages, page budget, split). A task set is built from
its corpus by a builder registered in :data:`TASK_SETS`:

``ws-100``     Wikispeedia categories with >= 25 labelled pages; seed = the category's most in-linked
               member with out-links; budget 100.
``ws-size``    the same categories and seeds; budget = the category's size.
``ws-far``     the same categories; seed = the most in-linked page *outside* the category; budget 200.
``hard``       the ``synthetic-hard`` corpus (uninformative link text): its labels with >= 25 pages,
               most in-linked member, budget 100.
``hard-100k``  the same on ``synthetic-hard-100000``.
``docs-web``   the ``docs-web`` corpus (see :mod:`gym_crawl.tasks.docs_web`): a near and a far task per
               section label, split by site.
``docs-web-hard``  the same corpus, seeds and split; sections named by a cross-site genre word that is not
               in their pages (:func:`gym_crawl.tasks.docs_web.docs_web_hard_tasks`).
``corpus:<spec>``  the labels of any corpus (your own compiled crawl): near and far seeds, budgets in proportion to
               the labels, split by label (``corpus:<spec>@site``: by site) — :mod:`gym_crawl.tasks.own_web`.

**Split**: a task's topic is a *test* topic when ``sha256(label) mod 3 == 0``, else a *train* topic —
fixed, independent of agents and runs (if one side would be empty, the label with the smallest hash
moves there). Ties between candidate seed pages go to the lowest page id.
"""
from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gym_crawl.corpus import load_corpus
from gym_crawl.corpus.download import DATASETS, downloaded, offline_hint
from gym_crawl.relevance.topic import Topic, resolve_topic
from gym_crawl.tasks import docs_web, own_web
from gym_crawl.tasks.task import Task, TaskSet, is_test_topic, keep_first, labelled_tasks

__all__ = ["TASK_SETS", "Task", "TaskSet", "TaskSetDef", "build_task_sets", "is_test_topic", "labelled_tasks",
           "load_task_corpus", "split_labels", "task_set_def", "tasks_for", "topic_of"]


@dataclass(frozen=True)
class TaskSetDef:
    """How a task set is built.

    :param corpus: the corpus spec (``None``: the caller's Wikispeedia spec).
    :param build: ``build(corpus, set_name, min_pages=, near_budget=, far_budget=, max_tasks=)`` → tasks;
        ``near_budget``/``far_budget`` are ``None`` for the set's own budgets.
    :param doc: one line for listings.
    :param note: ``note(tasks)`` → what a listing says about the built tasks (how they are split), or
        ``None`` to say nothing.
    """

    corpus: str | None
    build: Callable[..., list[Task]]
    doc: str = ""
    note: Callable[[list[Task]], str] | None = None


def split_labels(labels: Sequence[str]) -> dict[str, str]:
    """``{label: "train" | "test"}`` by :func:`is_test_topic`, with both sides non-empty when >= 2 labels."""
    split = {lab: "test" if is_test_topic(lab) else "train" for lab in labels}
    for side in ("train", "test"):
        if len(labels) >= 2 and side not in split.values():
            lab = min(labels, key=lambda s: hashlib.sha256(s.encode()).hexdigest())
            split[lab] = side
    return split


def tasks_for(corpus: Any, set_name: str, kinds: Sequence[str], min_pages: int, near_budget: int = 100,
              far_budget: int = 200, max_tasks: int | None = None) -> list[Task]:
    """Tasks of every label of ``corpus`` with >= ``min_pages`` pages and a topic vector, one per ``kinds``
    entry: ``"near"`` (most in-linked member, ``near_budget``), ``"size"`` (same seed, budget = label size),
    ``"far"`` (most in-linked page outside the label, ``far_budget``). ``max_tasks`` keeps the first half
    train / half test tasks in label order."""
    indeg = corpus.in_degree()
    out_deg = corpus.out_degree()
    cats = labelled_tasks(corpus, min_pages)
    split = split_labels([lab for lab, _ in cats])
    tasks: list[Task] = []
    for lab, members in cats:
        try:
            resolve_topic(lab, corpus)
        except KeyError:  # no word of the label's last component is in the vocabulary: no topic vector
            continue
        cand = members[out_deg[members] > 0]
        if len(cand) == 0:
            continue
        near = int(cand[np.lexsort((cand, -indeg[cand]))[0]])
        inside = np.zeros(corpus.n_pages, bool)
        inside[members] = True
        outside = np.flatnonzero(~inside & (out_deg > 0))
        far = int(outside[np.lexsort((outside, -indeg[outside]))[0]])
        for kind in kinds:
            seed, budget = {"near": (near, near_budget), "size": (near, len(members)), "far": (far, far_budget)}[kind]
            budget = max(1, min(budget, corpus.n_pages - 1))
            tasks.append(Task(set_name, lab, (corpus.titles[seed],), int(budget), len(members), split[lab]))
    return keep_first(tasks, max_tasks)


def _label_sets(kinds: tuple[str, ...]) -> Callable[..., list[Task]]:
    def build(corpus: Any, set_name: str, *, min_pages: int, near_budget: int | None, far_budget: int | None,
              max_tasks: int | None) -> list[Task]:
        return tasks_for(corpus, set_name, kinds, min_pages, near_budget=near_budget or 100,
                         far_budget=far_budget or 200, max_tasks=max_tasks)

    return build


def _docs_web_set(corpus: Any, set_name: str, *, min_pages: int, near_budget: int | None, far_budget: int | None,
                  max_tasks: int | None) -> list[Task]:
    return docs_web.docs_web_tasks(corpus, set_name, min_pages=min_pages,
                                   near_budget=near_budget or docs_web.NEAR_BUDGET,
                                   far_budget=far_budget or docs_web.FAR_BUDGET, max_tasks=max_tasks)


def _docs_web_hard_set(corpus: Any, set_name: str, *, min_pages: int, near_budget: int | None,
                       far_budget: int | None, max_tasks: int | None) -> list[Task]:
    return docs_web.docs_web_hard_tasks(corpus, set_name, min_pages=min_pages,
                                        near_budget=near_budget or docs_web.NEAR_BUDGET,
                                        far_budget=far_budget or docs_web.FAR_BUDGET, max_tasks=max_tasks)


#: task set name -> :class:`TaskSetDef`; add a set with ``TASK_SETS[name] = TaskSetDef(...)``
TASK_SETS: dict[str, TaskSetDef] = {
    "ws-100": TaskSetDef(None, _label_sets(("near",)), "Wikispeedia categories, most in-linked member, budget 100"),
    "ws-size": TaskSetDef(None, _label_sets(("size",)), "Wikispeedia categories, budget = category size"),
    "ws-far": TaskSetDef(None, _label_sets(("far",)), "Wikispeedia categories, seed outside the category, budget 200"),
    "hard": TaskSetDef("synthetic-hard", _label_sets(("near",)), "synthetic-hard labels, budget 100"),
    "hard-100k": TaskSetDef("synthetic-hard-100000", _label_sets(("near",)),
                            "synthetic-hard-100000 labels, budget 100"),
    "docs-web": TaskSetDef("docs-web", _docs_web_set, "docs-web sections, near and far seeds, split by site",
                           docs_web.split_note),
    "docs-web-hard": TaskSetDef("docs-web", _docs_web_hard_set,
                                "docs-web sections named by a cross-site genre absent from their pages",
                                docs_web.split_note),
}


def load_task_corpus(spec: str) -> Any:
    """The corpus a task set names: ``load_corpus(spec)`` (``"docs-web"`` is a registered corpus, opened, never
    built). Never downloads: a downloadable dataset (``"wikispeedia"``) that is not on this machine is a
    ``FileNotFoundError`` saying how to get it (``gym-crawl download NAME``, or ``--from PATH`` offline)."""
    name = spec.strip().lower() if isinstance(spec, str) else spec
    if name in DATASETS:
        folder = downloaded(name)
        if folder is None:
            raise FileNotFoundError(f"corpus {name!r} is not on this machine and a task never downloads: run "
                                    f"`gym-crawl download {name}` first; {offline_hint(name)}")
        return load_corpus(folder)
    return load_corpus(spec)


def task_set_def(name: str) -> TaskSetDef:
    """The :class:`TaskSetDef` of ``name``: a registered set (:data:`TASK_SETS`), or ``corpus:<spec>[@site]``, the
    set of any labelled corpus (:func:`gym_crawl.tasks.own_web.corpus_tasks`). An unknown name is a ``ValueError``
    listing the known ones."""
    if name in TASK_SETS:
        return TASK_SETS[name]
    parsed = own_web.parse_corpus_set(name)
    if parsed is None:
        raise ValueError(f"unknown task set {name!r}; known: {sorted(TASK_SETS)}, or corpus:PATH (the labels of any "
                         f"corpus, e.g. your own compiled crawl)")
    spec, split = parsed

    def build(corpus: Any, set_name: str, *, min_pages: int, near_budget: int | None, far_budget: int | None,
              max_tasks: int | None) -> list[Task]:
        return own_web.corpus_tasks(corpus, set_name, split=split, min_pages=min_pages, near_budget=near_budget,
                                    far_budget=far_budget, max_tasks=max_tasks)

    return TaskSetDef(spec, build, f"the labels of corpus {spec}, near and far seeds, split by {split}",
                      lambda tasks: f"split by {split}: test topics " + ", ".join(
                          sorted({t.label for t in tasks if t.split == "test"})))


def build_task_sets(names: Sequence[str], *, wikispeedia: Any = "wikispeedia", min_pages: int | None = None,
                    quick_budget: int | None = None, max_tasks: int | None = None,
                    load: Callable[[str], Any] = load_task_corpus) -> tuple[list[TaskSet], dict[str, Any]]:
    """The named task sets and the corpora they use (``{spec: Corpus}``).

    :param names: names of :data:`TASK_SETS` or ``corpus:<spec>[@site]`` (:func:`task_set_def`); an unknown name
        is a ``ValueError`` listing the known ones.
    :param wikispeedia: the corpus spec of the ``ws-*`` sets.
    :param min_pages: labels with fewer pages are no topic (default 25; for a ``corpus:`` set
        :data:`gym_crawl.tasks.own_web.MIN_PAGES`).
    :param quick_budget: caps every task's budget (and replaces the near/far budgets).
    :param max_tasks: keep at most this many tasks per set (half train, half test).
    :param load: ``spec -> Corpus``. A set whose corpus does not load is returned empty, with a note.
    """
    corpora: dict[str, Any] = {}
    sets: list[TaskSet] = []
    for name in names:
        d = task_set_def(name)
        spec = d.corpus if d.corpus is not None else str(wikispeedia)
        try:
            if spec not in corpora:
                corpora[spec] = load(spec)
        except (ValueError, KeyError, FileNotFoundError, TypeError) as e:
            sets.append(TaskSet(name, spec, [], note=f"skipped: corpus {spec!r} is not available here ({e})"))
            continue
        own = own_web.parse_corpus_set(name) is not None
        least = min_pages if min_pages is not None else (own_web.MIN_PAGES if own else 25)
        tasks = d.build(corpora[spec], name, min_pages=least, near_budget=quick_budget, far_budget=quick_budget,
                        max_tasks=max_tasks)
        if quick_budget is not None:
            tasks = [dataclasses.replace(t, budget=min(t.budget, quick_budget)) for t in tasks]
        note = "" if tasks else f"no label of {spec!r} has >= {least} pages" + (
            " (label the pages of a crawl: gym-crawl corpus compile WARC OUT --label-rules FILE)" if own else "")
        if d.note is not None and tasks:
            note = d.note(tasks)
        sets.append(TaskSet(name, spec, tasks, note))
    return sets, corpora


def topic_of(corpus: Any, task: Task) -> Any:
    """The task's :class:`~gym_crawl.relevance.topic.Topic`: its label's topic, named by the label's last
    components, with the task's seed pages; a task with ``words`` is named by them (topic words and name)
    instead of by its label. A word outside the corpus vocabulary is a ``KeyError`` naming it."""
    if task.words:
        unknown = [w for w in task.words if corpus.word_id(w) < 0]
        if unknown:
            raise KeyError(f"task {task.name!r}: word(s) {unknown} not in the vocabulary of corpus {corpus.name!r}")
        return Topic(name="_".join(task.words), words=tuple(task.words), label=task.label, seeds=tuple(task.seeds))
    t = resolve_topic(task.label, corpus)
    return dataclasses.replace(t, name=task.label.split(".", 1)[-1], seeds=task.seeds)
