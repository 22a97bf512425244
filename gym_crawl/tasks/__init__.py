"""Crawl tasks as library objects: task sets, their fixed train/test splits, and one-call envs.

A task spec is ``"<set>"``, ``"<set>:<split>"`` or ``"<set>:<split>:<index>"`` (``split`` is ``train``,
``test`` or ``all``; ``index`` counts within that split in the set's order); ``<set>`` is a registered set or
``corpus:<path>``, the labels of any corpus (:mod:`gym_crawl.tasks.own_web`)::

    from gym_crawl import tasks

    tasks.names()                          # the registered task sets (TASK_SETS)
    ts = tasks.task_set("ws-100")          # a TaskSet: its tasks, each with its split
    env = tasks.make("ws-100:test:3", agent="best-first")   # the env of one task, for that agent
    task, corpus = tasks.get("ws-100:test:3")

:func:`make` builds through :func:`gym_crawl.agents.make_env_for` with the task's topic (its label,
seed pages), ``reward="labels"`` and the task's budget as ``max_episode_steps``. The ``ws-*`` sets use
the ``"wikispeedia"`` corpus unless ``wikispeedia=`` names another spec or path.
"""
from __future__ import annotations

from typing import Any

from gym_crawl.agents import make_env_for
from gym_crawl.tasks.own_web import CORPUS_SET_PREFIX
from gym_crawl.tasks.sets import (
    TASK_SETS,
    Task,
    TaskSet,
    TaskSetDef,
    build_task_sets,
    is_test_topic,
    labelled_tasks,
    load_task_corpus,
    split_labels,
    tasks_for,
    topic_of,
)

__all__ = ["TASK_SETS", "Task", "TaskSet", "TaskSetDef", "build_task_sets", "get", "is_test_topic",
           "labelled_tasks", "load_task_corpus", "make", "names", "parse", "split_labels", "task_set", "tasks_for",
           "topic_of"]

_SPLITS = ("train", "test", "all")
_CORPORA: dict[str, Any] = {}


def names() -> list[str]:
    """The registered task set names."""
    return sorted(TASK_SETS)


def parse(spec: str) -> tuple[str, str, int | None]:
    """``"ws-100:test:3"`` → ``("ws-100", "test", 3)``; the split defaults to ``"all"``, the index to ``None``.
    A malformed spec or an unknown set is a ``ValueError`` naming it."""
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"task spec must be '<set>[:<split>[:<index>]]', got {spec!r}")
    parts = spec.split(":")
    if parts[0] + ":" == CORPUS_SET_PREFIX and len(parts) > 1:  # corpus:<spec>[:<split>[:<index>]]
        parts = [f"{parts[0]}:{parts[1]}", *parts[2:]]
    if len(parts) > 3:
        raise ValueError(f"task spec {spec!r}: expected '<set>[:<split>[:<index>]]'")
    name = parts[0]
    if name not in TASK_SETS and not name.startswith(CORPUS_SET_PREFIX):
        raise ValueError(f"task spec {spec!r}: unknown task set {name!r}; known: {names()}, or corpus:PATH")
    split = parts[1] if len(parts) > 1 else "all"
    if split not in _SPLITS:
        raise ValueError(f"task spec {spec!r}: split must be one of {list(_SPLITS)}, got {split!r}")
    index = None
    if len(parts) == 3:
        try:
            index = int(parts[2])
        except ValueError:
            raise ValueError(f"task spec {spec!r}: index must be an integer, got {parts[2]!r}") from None
        if index < 0:
            raise ValueError(f"task spec {spec!r}: index must be >= 0, got {index}")
    return name, split, index


def _corpus(spec: str) -> Any:
    if spec not in _CORPORA:
        _CORPORA[spec] = load_task_corpus(spec)
    return _CORPORA[spec]


def task_set(name: str, *, corpus: Any = None, wikispeedia: Any = "wikispeedia",
             min_pages: int | None = None) -> TaskSet:
    """The task set ``name`` (see :data:`TASK_SETS`) with every split.

    :param corpus: the :class:`~gym_crawl.corpus.Corpus` to build it on; default: the set's own corpus,
        loaded once per process.
    :param wikispeedia: the corpus spec of the ``ws-*`` sets when ``corpus`` is not given.
    :param min_pages: labels with fewer pages are no topic (default: the set's, 25 or 5 for ``corpus:``).

    A set whose corpus cannot be loaded or that has no task is a ``ValueError`` saying why.
    """
    parse(name)
    load = _corpus if corpus is None else (lambda spec: corpus)
    sets, _ = build_task_sets([name], wikispeedia=wikispeedia, min_pages=min_pages, load=load)
    if not sets[0].tasks:
        raise ValueError(f"task set {name!r} has no task: {sets[0].note}")
    return sets[0]


def get(spec: str, *, corpus: Any = None, wikispeedia: Any = "wikispeedia",
        min_pages: int | None = None) -> tuple[Task, Any]:
    """The task ``spec`` names (``"<set>:<split>:<index>"``) and its corpus (``corpus`` or the set's own)."""
    name, split, index = parse(spec)
    if index is None:
        raise ValueError(f"task spec {spec!r} names a set, not one task: add ':<split>:<index>'")
    ts = task_set(name, corpus=corpus, wikispeedia=wikispeedia, min_pages=min_pages)
    pool = [t for t in ts.tasks if split == "all" or t.split == split]
    if index >= len(pool):
        raise ValueError(f"task spec {spec!r}: index {index} out of range; {name!r} has {len(pool)} "
                         f"{'' if split == 'all' else split + ' '}tasks")
    return pool[index], (corpus if corpus is not None else _corpus(ts.corpus_spec))


def make(spec: str, agent: Any = "best-first", *, corpus: Any = None, wikispeedia: Any = "wikispeedia",
         **overrides: Any) -> Any:
    """The env of task ``spec`` for ``agent`` (a registered name, class or instance):
    ``make_env_for(agent, corpus=, topic=<task topic>, reward="labels", max_episode_steps=<budget>, **overrides)``.
    ``corpus``/``wikispeedia`` as in :func:`task_set`; ``overrides`` win (e.g. ``features="transferable"``)."""
    task, c = get(spec, corpus=corpus, wikispeedia=wikispeedia)
    kw: dict[str, Any] = {"corpus": c, "topic": topic_of(c, task), "reward": "labels",
                          "max_episode_steps": task.budget}
    kw.update(overrides)
    return make_env_for(agent, **kw)
