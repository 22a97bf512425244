"""Task sets of any labelled corpus — your own web — and task sets that combine corpora and budgets.

A compiled WARC of your site with labels (``gym-crawl corpus compile crawl.warc.gz mycorpus --label-rules
rules.tsv``), or any other labelled corpus, is a task set named ``corpus:<spec>`` (``build_task_sets(
["corpus:mycorpus"])``, ``gym-crawl eval --corpus mycorpus``, ``gym-crawl train --corpus mycorpus``):

* **topics**: every label carried by >= ``min_pages`` pages (default :data:`MIN_PAGES`) whose last component has
  a word in the corpus vocabulary;
* **seeds** (:func:`near_far_seeds`): a *near* task starts from the label's most in-linked page with out-links; a
  *far* task from a page of the label's site outside the label: the crawl's own start page when the corpus knows it
  (``meta["default_seeds"]``: a compiled live crawl records its seeds), else the site's most in-linked page outside
  the label (ties: the lowest page id);
* **budgets** (:func:`default_budget`): ``B`` pages for a near task, ``2 B`` for a far one, where ``B`` is the
  median page count of the topics' labels, clipped to [10, 100] and below the corpus' size — a budget in
  proportion to the topics, so the oracle cannot just fetch the whole web;
* **split** (:data:`SPLITS`): ``"label"`` holds out labels by the suite's fixed rule (as
  :func:`~gym_crawl.tasks.sets.split_labels` does); ``"site"`` holds out whole sites — a label's site is the host
  most of its pages are on, and a site is a test site when ``sha256(site) mod 3 == 0`` (both sides kept non-empty
  when there are two sites or more) — for a corpus of several sites.

:func:`combine` joins the train tasks of one set with the test tasks of another, so a learner trains on one web
(``docs-web``) and is tested on another (your own): each task then names its corpus (:attr:`Task.corpus`).
:func:`with_budgets` repeats every task at several budgets.

:func:`topic_seed_pages` gives the seed pages of a named topic: the ones given, else the corpus' own seeds, else the
label's most in-linked page.
"""
from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from gym_crawl.relevance.topic import resolve_topic
from gym_crawl.tasks.task import Task, TaskSet, is_test_topic, keep_first, labelled_tasks

__all__ = ["CORPUS_SET_PREFIX", "MIN_PAGES", "SPLITS", "combine", "corpus_set_name", "corpus_tasks",
           "default_budget", "label_sites", "near_far_seeds", "topic_seed_pages", "with_budgets"]

CORPUS_SET_PREFIX = "corpus:"
"""A task set name ``corpus:<spec>`` is the task set of that corpus' labels (:func:`corpus_tasks`)."""
MIN_PAGES = 5
"""Pages a label needs to be a topic of a corpus task set (an own web is small; the built-in sets ask 25)."""
SPLITS = ("label", "site")


def corpus_set_name(spec: str, split: str = "label") -> str:
    """The task set name of corpus ``spec`` split by ``split``: ``corpus:<spec>`` or ``corpus:<spec>@site``."""
    return f"{CORPUS_SET_PREFIX}{spec}" + ("" if split == "label" else f"@{split}")


def parse_corpus_set(name: str) -> tuple[str, str] | None:
    """``"corpus:mycorpus@site"`` → ``("mycorpus", "site")``; ``None`` for a name that is no corpus set."""
    if not name.startswith(CORPUS_SET_PREFIX):
        return None
    spec, _, split = name[len(CORPUS_SET_PREFIX):].rpartition("@")
    if not spec or split not in SPLITS:
        spec, split = name[len(CORPUS_SET_PREFIX):], "label"
    if not spec:
        raise ValueError(f"task set {name!r}: name a corpus after {CORPUS_SET_PREFIX!r} (a path or a registered name)")
    return spec, split


def _topic_labels(corpus: Any, min_pages: int) -> list[tuple[str, np.ndarray]]:
    out = []
    for lab, members in labelled_tasks(corpus, min_pages):
        try:
            resolve_topic(lab, corpus)
        except KeyError:  # no word of the label's last component is in the vocabulary: no topic vector
            continue
        out.append((lab, members))
    return out


def default_budget(corpus: Any, sizes: Sequence[int]) -> int:
    """The near-task budget of a corpus task set: the median label size, clipped to [10, 100] and to the corpus'
    pages minus one (at least 1)."""
    b = int(np.clip(round(float(np.median(sizes))) if len(sizes) else 10, 10, 100))
    return max(1, min(b, corpus.n_pages - 1))


def label_sites(corpus: Any, labels: Sequence[tuple[str, np.ndarray]]) -> dict[str, str]:
    """``{label: site}``: the domain (host) most of the label's pages are on (ties: the first in name order)."""
    doms = corpus.domains.tolist()
    out = {}
    for lab, members in labels:
        counts = Counter(doms[int(d)] for d in np.asarray(corpus.page_domain)[members])
        out[lab] = min(counts, key=lambda d: (-counts[d], d))
    return out


def _split_by_key(keys: dict[str, str]) -> dict[str, str]:
    """``{label: "train" | "test"}`` from each label's key (its site): a key is held out when
    ``sha256(key) mod 3 == 0``; with >= 2 keys both sides are kept non-empty (the key with the smallest hash
    moves)."""
    names = sorted(set(keys.values()))
    side = {k: "test" if is_test_topic(k) else "train" for k in names}
    for want in ("train", "test"):
        if len(names) >= 2 and want not in side.values():
            side[min(names, key=lambda s: hashlib.sha256(s.encode()).hexdigest())] = want
    return {lab: side[k] for lab, k in keys.items()}


def near_far_seeds(corpus: Any, members: np.ndarray) -> tuple[int | None, int | None]:
    """``(near, far)`` seed page ids of a label with ``members`` (see the module docstring); ``None`` where the
    corpus has no such page. The far seed stays on the label's site (the domain most of its pages are on) when it
    can: the first of the corpus' own seeds there outside the label, else the site's most in-linked page outside the
    label; only a label whose site has no such page starts from another site (the first own seed outside the label,
    else the most in-linked page outside it). Every seed has out-links; ties go to the lowest page id."""
    indeg, out_deg = corpus.in_degree(), corpus.out_degree()
    inside = np.zeros(corpus.n_pages, bool)
    inside[members] = True
    cand = members[out_deg[members] > 0]
    near = int(cand[np.lexsort((cand, -indeg[cand]))[0]]) if len(cand) else None
    dom = np.asarray(corpus.page_domain)
    counts = np.bincount(dom[members], minlength=len(corpus.domains)) if len(members) else None
    names = corpus.domains.tolist()
    site = (min(np.flatnonzero(counts == counts.max()), key=lambda d: names[int(d)])
            if counts is not None and counts.max() > 0 else -1)
    ok = ~inside & (out_deg > 0)
    own = []
    for s in corpus.meta.get("default_seeds") or ():
        try:
            own.append(corpus.page_id(str(s)))
        except KeyError:
            continue
    for where in (ok & (dom == site), ok):
        for p in own:
            if where[p]:
                return near, int(p)
        pool = np.flatnonzero(where)
        if len(pool):
            return near, int(pool[np.lexsort((pool, -indeg[pool]))[0]])
    return near, None


def corpus_tasks(corpus: Any, set_name: str, *, split: str = "label", kinds: Sequence[str] = ("near", "far"),
                 min_pages: int = MIN_PAGES, near_budget: int | None = None, far_budget: int | None = None,
                 max_tasks: int | None = None) -> list[Task]:
    """The tasks of every topic label of ``corpus`` (see the module docstring), one per ``kinds`` entry
    (``"near"``, ``"far"``), in label order. ``near_budget`` / ``far_budget``: default :func:`default_budget` and
    twice it. ``max_tasks`` keeps the first half train / half test tasks."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {list(SPLITS)}, got {split!r}")
    unknown = sorted(set(kinds) - {"near", "far"})
    if unknown or not kinds:
        raise ValueError(f"task kinds must be 'near' and/or 'far', got {list(kinds)}")
    labels = _topic_labels(corpus, min_pages)
    if not labels:
        return []
    nb = near_budget or default_budget(corpus, [len(m) for _, m in labels])
    fb = far_budget or max(1, min(2 * nb, corpus.n_pages - 1))
    if split == "site":
        sites = label_sites(corpus, labels)
        if len(set(sites.values())) < 2:
            raise ValueError(f"a split by site needs labels on two sites or more; every label of corpus "
                             f"{corpus.name!r} is mostly on {next(iter(sites.values()))} (split by label instead)")
        sides = _split_by_key(sites)
    else:
        sides = _split_by_key({lab: lab for lab, _ in labels})
    tasks = []
    for lab, members in labels:
        near, far = near_far_seeds(corpus, members)
        for kind in kinds:
            seed, budget = (near, nb) if kind == "near" else (far, fb)
            if seed is not None:
                tasks.append(Task(set_name, lab, (corpus.titles[seed],), int(budget), len(members), sides[lab]))
    return keep_first(tasks, max_tasks)


def topic_seed_pages(corpus: Any, topic: str, seed_pages: Sequence[str] | None = None) -> list[str]:
    """The seed pages (titles or URLs) of ``topic`` on ``corpus``: ``seed_pages`` when given (each must be a page:
    ``KeyError`` naming it), else the env's default (:func:`~gym_crawl.relevance.topic.seed_pages`: the topic's own
    seeds, the corpus' own — ``meta["default_seeds"]``, a compiled live crawl's start pages — or the page titled
    like the topic), else, for a label topic, the label's most in-linked page with out-links. ``ValueError`` naming
    the topic when there is none of these."""
    from gym_crawl.relevance.topic import seed_pages as default_seed_pages

    if seed_pages:
        for s in seed_pages:
            corpus.page_id(str(s))  # KeyError with close matches
        return [str(s) for s in seed_pages]
    t = resolve_topic(topic, corpus)
    try:
        return [corpus.titles[int(p)] for p in default_seed_pages(t, corpus)]
    except ValueError:
        pass
    if t.label:
        near, _ = near_far_seeds(corpus, np.flatnonzero(t.label_mask(corpus)))
        if near is not None:
            return [corpus.titles[near]]
    raise ValueError(f"topic {topic!r} of corpus {corpus.name!r}: no seed pages — it is no label of the corpus "
                     f"and the corpus records no seeds of its own; pass --seed-pages PAGE (a title or URL)")


def with_budgets(tasks: Sequence[Task], budgets: Sequence[int]) -> list[Task]:
    """Every task once per budget of ``budgets`` (in that order; each >= 1)."""
    bad = [b for b in budgets if int(b) < 1]
    if bad or not budgets:
        raise ValueError(f"budgets must be page counts >= 1, got {list(budgets)}")
    return [dataclasses.replace(t, budget=int(b)) for b in budgets for t in tasks]


def combine(name: str, train: TaskSet, test: TaskSet) -> TaskSet:
    """A task set that trains on ``train``'s train tasks and tests on ``test``'s tasks, each task naming its
    corpus. When both sets are on the same corpus, only ``test``'s test tasks are tested (its train tasks
    would leak); on another corpus every task of ``test`` is a test task (a web no learner saw)."""
    same = train.corpus_spec == test.corpus_spec
    tr = [dataclasses.replace(t, set_name=name, corpus=t.corpus or train.corpus_spec)
          for t in train.tasks if t.split == "train"]
    te = [dataclasses.replace(t, set_name=name, split="test", corpus=t.corpus or test.corpus_spec)
          for t in test.tasks if t.split == "test" or not same]
    note = (f"train: {len(tr)} train tasks of {train.name} ({train.corpus_spec}); test: {len(te)} "
            f"{'test ' if same else ''}tasks of {test.name} ({test.corpus_spec})")
    return TaskSet(name, test.corpus_spec, tr + te, note)
