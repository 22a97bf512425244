"""The ``docs-web`` task set: Debian's documentation sites crawled into a corpus.

The corpus is compiled by ``gym-crawl bench docs-web`` into ``<data dir>/docs-web`` and registered as the
corpus ``docs-web`` (``load_corpus("docs-web")``, :func:`load_docs_web`). Its labels are ``<site>`` and
``<site>.<section>...``; every section label is a topic, and whole sites are held out for testing
(:func:`split_of`).

Two task sets are built on it:

``docs-web``       every section label, named by its own last component (``django.releases`` → "releases"):
                   the name is in every member's URL, so the link text leads best-first there.
``docs-web-hard``  sections named by their **cross-site genre** (:data:`GENRES`: ``releases`` and
                   ``whatsnew`` → "changelog", ``module_code`` → "implementation" …), the words a reader
                   uses for that kind of page on any documentation site. A section is a task only when the
                   genre's words are in fewer than :data:`HARD_MAX_VISIBLE` of its member pages (title —
                   the URL's words — or main text) and when no other section of its site has the same
                   genre; so the target is not named by words visible in its pages, and the name is not
                   ambiguous within the site. Seeds, budgets and the split are those of ``docs-web``.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl.corpus.sources import built_corpus_path, load_built_corpus
from gym_crawl.relevance.topic import resolve_topic
from gym_crawl.tasks.task import Task, is_test_topic, keep_first, labelled_tasks

__all__ = ["CORPUS_DIRNAME", "FAR_BUDGET", "GENRES", "HARD_MAX_VISIBLE", "NEAR_BUDGET", "corpus_path",
           "docs_web_hard_tasks", "docs_web_tasks", "genre_of", "load_docs_web", "page_sites", "site_label",
           "split_note", "split_of", "visible_fraction"]

CORPUS_DIRNAME = "docs-web"
"""The corpus' registered name, also its folder under :func:`gym_crawl.corpus.data_dir`."""


def site_label(label: str) -> str:
    """The site a label belongs to: its first component (``"django.ref.contrib"`` → ``"django"``)."""
    return label.split(".", 1)[0]


NEAR_BUDGET = 100
FAR_BUDGET = 200


def split_of(label: str) -> str:
    """The fixed split of the ``docs-web`` task set: whole **sites** are held out — a label is a test topic
    when its site is (``sha256(site) mod 3 == 0``, the suite's rule applied to the site name), so every
    test task is on a site no learner trained on."""
    return "test" if is_test_topic(site_label(label)) else "train"


def split_note(tasks: list[Any]) -> str:
    """What a listing says about the split of ``tasks`` (:class:`~gym_crawl.tasks.task.Task`):
    ``"split by site: test sites django, python"``."""
    return "split by site: test sites " + ", ".join(sorted({site_label(t.label) for t in tasks
                                                           if t.split == "test"}))


def page_sites(corpus: Any) -> Any:
    """``(n_pages,)`` int array: index into ``sorted(sites)`` of each page's site (the first component of
    its first label), -1 for an unlabelled page; and the site names."""
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
    seeds = _SeedFinder(corpus)
    tasks = []
    for lab, members in labelled_tasks(corpus, min_pages):
        if "." not in lab:
            continue
        try:
            resolve_topic(lab, corpus)
        except KeyError:  # no word of the label's last component is in the vocabulary: no topic vector
            continue
        tasks += seeds.tasks(set_name, lab, members, near_budget, far_budget)
    return keep_first(tasks, max_tasks)


class _SeedFinder:
    """The near and far seeds of a section (see :func:`docs_web_tasks`)."""

    def __init__(self, corpus: Any):
        self.corpus = corpus
        self.indeg = corpus.in_degree()
        self.out_deg = corpus.out_degree()
        self.psite, self.names = page_sites(corpus)
        self.homes = (corpus.meta.get("docs_web") or {}).get("home_pages") or {}

    def tasks(self, set_name: str, lab: str, members: Any, near_budget: int, far_budget: int,
              words: tuple[str, ...] = ()) -> list[Any]:
        """The near and far task of section ``lab`` (none when it has no seed of either kind)."""
        c, indeg, out_deg = self.corpus, self.indeg, self.out_deg
        cand = members[out_deg[members] > 0]
        inside = np.zeros(c.n_pages, bool)
        inside[members] = True
        outside = np.flatnonzero(~inside & (out_deg > 0) & (self.psite == self.names.index(site_label(lab))))
        if len(cand) == 0 or len(outside) == 0:
            return []
        near = int(cand[np.lexsort((cand, -indeg[cand]))[0]])
        home = self.homes.get(site_label(lab))
        far = c.page_id(home) if home is not None else int(outside[np.lexsort((outside, -indeg[outside]))[0]])
        if inside[far] or out_deg[far] == 0:
            return []
        out = []
        for seed, budget in ((near, near_budget), (far, far_budget)):
            budget = max(1, min(budget, c.n_pages - 1))
            out.append(Task(set_name, lab, (c.titles[seed],), int(budget), len(members), split_of(lab), words))
        return out


#: cross-site genre → the section names (last label component) of that genre on any site of the web
GENRES: dict[str, tuple[str, ...]] = {
    "changelog": ("releases", "whatsnew"),
    "implementation": ("module_code",),
    "internals": ("internals", "dev", "development", "extdev", "technical"),
    "tutorial": ("tutorial", "intro", "book", "by_example"),
    "recipes": ("howto",),
    "guide": ("topics", "usage", "guides", "using"),
    "reference": ("ref", "reference", "library", "c_api", "std", "alloc", "modules", "sql_commands"),
    "commands": ("commands", "applications", "programs", "man", "rustc", "rustdoc"),
}

HARD_MAX_VISIBLE = 0.2
"""A ``docs-web-hard`` section's genre words may be in at most this fraction of its member pages."""


def genre_of(label: str) -> str | None:
    """The :data:`GENRES` genre of a section label's last component (``"django.releases"`` → ``"changelog"``),
    ``None`` when it has none."""
    last = label.rsplit(".", 1)[-1]
    return next((g for g, secs in GENRES.items() if last in secs), None)


def visible_fraction(corpus: Any, members: Any, words: tuple[str, ...]) -> float:
    """Fraction of the ``members`` pages whose title tokens (a web corpus' title is its URL's words) or main
    text hold one of ``words``; words outside the vocabulary are in no page."""
    ids = np.array([corpus.word_id(w) for w in words], dtype=np.int64)
    ids = ids[ids >= 0]
    if len(members) == 0:
        return 0.0
    if len(ids) == 0:
        return 0.0
    seen = np.zeros(corpus.n_pages, bool)
    for ptr, terms in ((corpus.title_ptr, corpus.title_terms), (corpus.text_ptr, corpus.text_terms)):
        ptr, terms = np.asarray(ptr), np.asarray(terms)
        owner = np.repeat(np.arange(corpus.n_pages), np.diff(ptr))
        seen[owner[np.isin(terms, ids)]] = True
    return float(seen[np.asarray(members)].mean())


def docs_web_hard_tasks(corpus: Any, set_name: str = "docs-web-hard", *, min_pages: int = 25,
                        near_budget: int = NEAR_BUDGET, far_budget: int = FAR_BUDGET,
                        max_visible: float = HARD_MAX_VISIBLE, max_tasks: int | None = None) -> list[Any]:
    """The ``docs-web-hard`` tasks of ``corpus``: every section label with >= ``min_pages`` pages (exact
    label) that has a :data:`GENRES` genre, whose genre word is in the vocabulary and in at most
    ``max_visible`` of its member pages (:func:`visible_fraction`), and that is the only such section of its
    site with that genre; named by the genre word (``Task.words``), with the near and far seeds and budgets
    of :func:`docs_web_tasks`. ``max_tasks`` keeps the first half train / half test tasks in label order."""
    picked: dict[tuple[str, str], list[tuple[str, Any]]] = {}
    for lab, members in labelled_tasks(corpus, min_pages):
        g = genre_of(lab) if "." in lab else None
        if g is not None:
            picked.setdefault((site_label(lab), g), []).append((lab, members))
    seeds = _SeedFinder(corpus)
    tasks = []
    for (_, g), secs in sorted(picked.items(), key=lambda kv: kv[1][0][0]):
        if len(secs) != 1 or corpus.word_id(g) < 0:
            continue
        lab, members = secs[0]
        if visible_fraction(corpus, members, (g,)) > max_visible:
            continue
        tasks += seeds.tasks(set_name, lab, members, near_budget, far_budget, (g,))
    return keep_first(tasks, max_tasks)


def corpus_path(data: str | os.PathLike | None = None) -> Path:
    """Where the compiled ``docs-web`` corpus lives: ``data`` when given, else ``<data dir>/docs-web``."""
    return built_corpus_path(CORPUS_DIRNAME, data)


def load_docs_web(path: str | os.PathLike | None = None) -> Any:
    """The compiled ``docs-web`` corpus (memory-mapped), as ``load_corpus("docs-web", path=path)``;
    ``FileNotFoundError`` naming ``gym-crawl bench docs-web`` when it is not built."""
    return load_built_corpus(CORPUS_DIRNAME, path)
