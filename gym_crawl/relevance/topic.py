"""What the crawler looks for: :class:`Topic` and how a user names one."""
from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gym_crawl.corpus.core import Corpus
from gym_crawl.tokenize import tokenize

__all__ = ["Topic", "resolve_topic", "HAN2018_CATEGORIES"]

HAN2018_CATEGORIES: dict[str, list[str]] = {
    "cancer": ["disease", "medicine", "oncology", "health"],
    "fiction": ["literature", "arts"],
    "olympics": ["sports"],
    "sports": ["sports"],
    "cameras": ["photography", "movies", "arts"],
    "geology": ["earth", "science"],
    "poetry": ["literature", "arts"],
}
"""Han et al. 2018's category words per target topic (their §4, chosen from ODP)."""


@dataclass(frozen=True)
class Topic:
    """A crawl target.

    Attributes:
        name: short name (``"geology"``).
        words: topic word(s) whose vectors define topic relevance (Han: the topic word).
        categories: category words (Han's per-topic ODP categories), at most the env's
            ``n_categories`` slots.
        keywords: words whose presence in a link's URL/anchor TRES features test
            (default: ``words``).
        label: optional label; when set, pages carrying it or one of its sub-labels (whole dot-separated
            components: ``a.b`` matches ``a.b`` and ``a.b.c``, not ``a.bc``) are the ground-truth relevant
            pages (``reward="labels"``, ``relevant_found``).
        seeds: default seed page titles (the topic's main page, as in the papers).
    """

    name: str
    words: tuple[str, ...]
    categories: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    label: str | None = None
    seeds: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if not self.words:
            raise ValueError(f"topic {self.name!r} needs at least one topic word")
        if not self.keywords:
            object.__setattr__(self, "keywords", tuple(self.words))

    def label_mask(self, corpus: Corpus) -> np.ndarray:
        """(n_pages,) bool: pages carrying ``self.label`` or one of its sub-labels (all False if no label).
        Raises ``KeyError`` with close matches when the corpus has no such label."""
        n = corpus.n_pages
        if not self.label:
            return np.zeros(n, bool)
        hits = label_hits(self.label, corpus)
        if not hits.any():
            raise KeyError(f"topic {self.name!r}: {unknown_label(self.label, corpus)}")
        owner = np.repeat(np.arange(n), np.diff(corpus.label_ptr))
        counts = np.bincount(owner[hits[corpus.label_ids]], minlength=n)
        return counts > 0


def label_hits(label: str, corpus: Corpus) -> np.ndarray:
    """(n_labels,) bool: the corpus' labels equal to ``label`` or below it (whole dot-separated components)."""
    want = label.rstrip(".")
    below = want + "."
    return np.fromiter((s == want or s.startswith(below) for s in corpus.labels), bool, count=len(corpus.labels))


def unknown_label(label: str, corpus: Corpus) -> str:
    """The error message for a label the corpus does not have, with its closest labels."""
    close = difflib.get_close_matches(label, corpus.labels.tolist(), n=5, cutoff=0.5)
    return (f"corpus {corpus.name!r} has no label {label!r} (labels match whole dot-separated components)"
            + (f"; close matches: {close}" if close else ""))


def _from_meta(key: str, d: dict[str, Any]) -> Topic:
    return Topic(name=key, words=tuple(d.get("words") or tokenize(key)),
                 categories=tuple(d.get("categories", HAN2018_CATEGORIES.get(key, ()))),
                 keywords=tuple(d.get("keywords", ())), label=d.get("label"), seeds=tuple(d.get("seeds", ())))


def resolve_topic(spec: Topic | str | dict | None, corpus: Corpus) -> Topic:
    """Turn a user's topic spec into a :class:`Topic` for ``corpus``.

    A string is read as the first of these that applies:

    1. a key of ``corpus.meta["topics"]`` (``"geology"``) — the corpus' own topic table;
    2. a label of the corpus, exactly as the corpus spells it, dotted or not, spaces included (``"course"``,
       ``"Database Extensions"``, ``"subject.Science.Chemistry"``) — the ground-truth topic of the pages
       carrying it or a sub-label (``reward="labels"`` then works); a string that is both a label and topic
       words means the label;
    3. any spec with a dot — a label or a label parent (``"subject.Science"``; ``"django."`` with a trailing dot
       names the parent of ``"django.ref"`` when ``"django"`` is not itself a label); an unknown one raises
       ``KeyError`` with close matches;
    4. topic words (``"machine learning"``) — a word topic (relevance: the words), Han's category table if known.

    A label topic's words are the tokens of its last dot-separated component that the corpus' vocabulary
    holds (``KeyError`` when none is). Also accepted: a :class:`Topic` (returned as is) and a dict with Topic
    fields. ``None`` gives ``corpus.meta["default_topic"]``, else the corpus' first listed topic.
    """
    topics = corpus.meta.get("topics") or {}
    if spec is None:
        if not topics:
            raise ValueError(f"corpus {corpus.name!r} has no default topic: pass topic=...")
        k = corpus.meta.get("default_topic") or next(iter(topics))
        return _from_meta(k, topics[k])
    if isinstance(spec, Topic):
        return spec
    if isinstance(spec, dict):
        d = dict(spec)
        name = d.pop("name", "custom")
        return _from_meta(name, d)
    if not isinstance(spec, str):
        raise TypeError(f"topic must be a Topic, str or dict, got {type(spec).__name__}")
    key = spec.strip()
    low = key.lower().replace(" ", "_")
    for k, d in topics.items():
        if k.lower() == low or k.lower() == key.lower():
            return _from_meta(k, d)
    if key and (corpus.labels.get(key) >= 0 or "." in key):  # a label (exact, or dotted: topic words hold no dot)
        return _label_topic(spec, key, corpus, topics)
    words = tuple(tokenize(key.replace("_", " ")))
    add_words = getattr(corpus, "add_words", None)
    if add_words is not None:  # an open vocabulary (a web that grows while crawled): every word is known
        add_words(words)
    unknown = [w for w in words if corpus.word_id(w) < 0]
    if not words or unknown:
        close = difflib.get_close_matches(key, corpus.labels.tolist(), n=3, cutoff=0.6)
        raise KeyError(f"unknown topic {spec!r} for corpus {corpus.name!r}: "
                       + (f"word(s) {unknown} not in its vocabulary; " if unknown else "")
                       + f"known topics: {sorted(topics)}; or pass a label prefix or a Topic"
                       + (f"; labels spelled alike: {close}" if close else ""))
    name = "_".join(words)
    cats = tuple(c for c in HAN2018_CATEGORIES.get(name, ()) if corpus.word_id(c) >= 0)
    return Topic(name=name, words=words, categories=cats)


def _label_topic(spec: str, key: str, corpus: Corpus, topics: dict) -> Topic:
    """The ground-truth topic of label ``key`` (exact or a dotted parent): see :func:`resolve_topic`."""
    if not label_hits(key, corpus).any():
        raise KeyError(f"unknown topic {spec!r}: {unknown_label(key, corpus)}; known topics: {sorted(topics)}")
    key = key.rstrip(".")
    last = key.split(".")[-1]
    words = tuple(w for w in tokenize(last.replace("_", " ")) if corpus.word_id(w) >= 0)
    if not words:
        raise KeyError(f"label topic {key!r}: none of the words of {last!r} is in the corpus vocabulary; pass a "
                       f"Topic or a dict with the label and topic words: {{'label': {key!r}, 'words': [...]}}")
    return Topic(name=last.lower().replace(" ", "_"), words=words, label=key)


def seed_pages(topic: Topic, corpus: Corpus, seeds: Sequence[str | int] | None = None) -> np.ndarray:
    """Seed page ids: explicit titles/ids, else the topic's seeds, else the corpus' default seeds
    (``meta["default_seeds"]``: a live web's seed URLs), else the page titled like the topic."""
    chosen = list(seeds) if seeds else list(topic.seeds) or list(corpus.meta.get("default_seeds") or ())
    if not chosen:
        for cand in (topic.name, topic.name.title(), " ".join(topic.words).title(), topic.name.capitalize()):
            if corpus.titles.get(cand) >= 0 or corpus.titles.get(cand.replace(" ", "_")) >= 0:
                chosen = [cand]
                break
    if not chosen:
        hint = ""
        if topic.label:
            members = np.flatnonzero(topic.label_mask(corpus))
            if len(members):
                best = members[np.argsort(-corpus.in_degree()[members], kind="stable")[:3]]
                hint = (f"; e.g. its most linked labelled pages: "
                        f"seeds={[corpus.titles[int(p)] for p in best]!r}")
        raise ValueError(f"topic {topic.name!r}: no seed pages given and no page titled like the topic; "
                         f"pass seeds=[...]{hint}")
    out = []
    for s in chosen:
        if isinstance(s, (int, np.integer)):
            if not 0 <= int(s) < corpus.n_pages:
                raise ValueError(f"seed page id {s} outside [0, {corpus.n_pages})")
            out.append(int(s))
        else:
            out.append(corpus.page_id(str(s)))
    return np.unique(np.asarray(out, dtype=np.int32))
