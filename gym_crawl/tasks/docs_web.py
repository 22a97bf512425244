"""The ``docs-web`` task set: Debian's documentation sites crawled into a corpus.

The corpus is compiled by ``gym-crawl bench docs-web`` into ``<data dir>/docs-web``
(:func:`load_docs_web`). Its labels are ``<site>`` and ``<site>.<section>...``; every section label is a
topic, and whole sites are held out for testing (:func:`split_of`).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["CORPUS_DIRNAME", "FAR_BUDGET", "NEAR_BUDGET", "corpus_path", "docs_web_tasks", "load_docs_web",
           "page_sites", "site_label", "split_of"]

CORPUS_DIRNAME = "docs-web"
"""Folder of the compiled corpus under :func:`gym_crawl.corpus.data_dir`."""


def site_label(label: str) -> str:
    """The site a label belongs to: its first component (``"django.ref.contrib"`` → ``"django"``)."""
    return label.split(".", 1)[0]


NEAR_BUDGET = 100
FAR_BUDGET = 200


def split_of(label: str) -> str:
    """The fixed split of the ``docs-web`` task set: whole **sites** are held out — a label is a test topic
    when its site is (``sha256(site) mod 3 == 0``, the suite's rule applied to the site name), so every
    test task is on a site no learner trained on."""
    from gym_crawl.tasks.task import is_test_topic

    return "test" if is_test_topic(site_label(label)) else "train"


def page_sites(corpus: Any) -> Any:
    """``(n_pages,)`` int array: index into ``sorted(sites)`` of each page's site (the first component of
    its first label), -1 for an unlabelled page; and the site names."""
    import numpy as np

    names = sorted({site_label(x) for x in corpus.labels.tolist()})
    idx = {n: i for i, n in enumerate(names)}
    lab_site = np.array([idx[site_label(x)] for x in corpus.labels.tolist()], dtype=np.int64)
    ptr = np.asarray(corpus.label_ptr)
    out = np.full(corpus.n_pages, -1, dtype=np.int64)
    has = np.diff(ptr) > 0
    out[has] = lab_site[np.asarray(corpus.label_ids)[ptr[:-1][has]]]
    return out, names


def docs_web_tasks(corpus: Any, set_name: str = "docs-web", *, min_pages: int = 25, near_budget: int = NEAR_BUDGET,
                   far_budget: int = FAR_BUDGET, max_tasks: int | None = None) -> list[Any]:
    """The ``docs-web`` tasks of ``corpus``: for every *section* label (a label with a ``.``; the bare site
    labels are not topics) carried by >= ``min_pages`` pages, a **near** task (seed = the most in-linked
    member with out-links; budget ``near_budget``) and a **far** task (seed = the site's home page, the
    start page of its crawl, named in ``corpus.meta["docs_web"]["home_pages"]``; on a corpus without that
    entry, the most in-linked page of the same site outside the section with out-links; budget
    ``far_budget``). Ties: the lowest page id. Split by site (:func:`split_of`). ``max_tasks`` keeps the
    first half train / half test tasks in label order."""
    import numpy as np

    from gym_crawl.relevance.topic import resolve_topic
    from gym_crawl.tasks.task import Task, keep_first, labelled_tasks

    indeg = corpus.in_degree()
    out_deg = corpus.out_degree()
    psite, names = page_sites(corpus)
    homes = (corpus.meta.get("docs_web") or {}).get("home_pages") or {}
    tasks = []
    for lab, members in labelled_tasks(corpus, min_pages):
        if "." not in lab:
            continue
        try:
            resolve_topic(lab, corpus)
        except KeyError:  # no word of the label's last component is in the vocabulary: no topic vector
            continue
        cand = members[out_deg[members] > 0]
        inside = np.zeros(corpus.n_pages, bool)
        inside[members] = True
        outside = np.flatnonzero(~inside & (out_deg > 0) & (psite == names.index(site_label(lab))))
        if len(cand) == 0 or len(outside) == 0:
            continue
        near = int(cand[np.lexsort((cand, -indeg[cand]))[0]])
        home = homes.get(site_label(lab))
        far = corpus.page_id(home) if home is not None else int(outside[np.lexsort((outside, -indeg[outside]))[0]])
        if inside[far] or out_deg[far] == 0:
            continue
        for seed, budget in ((near, near_budget), (far, far_budget)):
            budget = max(1, min(budget, corpus.n_pages - 1))
            tasks.append(Task(set_name, lab, (corpus.titles[seed],), int(budget), len(members), split_of(lab)))
    return keep_first(tasks, max_tasks)


def corpus_path(data: str | os.PathLike | None = None) -> Path:
    """Where the compiled ``docs-web`` corpus lives: ``<data dir>/docs-web``."""
    from gym_crawl.corpus import data_dir

    return Path(data) if data is not None else data_dir() / CORPUS_DIRNAME


def load_docs_web(path: str | os.PathLike | None = None) -> Any:
    """The compiled ``docs-web`` corpus (memory-mapped); ``FileNotFoundError`` saying how to build it when
    it is not there."""
    from gym_crawl.corpus.core import Corpus

    p = corpus_path(path)
    if not (p / "manifest.json").is_file():
        raise FileNotFoundError(f"the docs-web corpus is not built at {p}: run `gym-crawl bench docs-web` "
                                "(add --install to install the Debian documentation packages)")
    return Corpus.load(p)
