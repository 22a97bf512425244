"""Incremental construction of a :class:`~gym_crawl.corpus.core.Corpus` from Python values.

Used by the small-corpus loaders (networkx, HTML folder, Wikispeedia,
MediaWiki dumps). The synthetic generator builds its arrays directly.
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

import numpy as np

from gym_crawl.corpus.core import Corpus, StringTable, csr_from_lists
from gym_crawl.tokenize import tokenize

__all__ = ["CorpusBuilder", "surrounding_window", "CONTEXT_CHARS"]

CONTEXT_CHARS = 150
"""Characters of surrounding text kept on each side of a link (the thesis' window)."""


def surrounding_window(text: str, start: int, end: int, width: int = CONTEXT_CHARS) -> str:
    """The ``width`` characters before ``start`` and after ``end`` in ``text`` (the link itself excluded)."""
    return text[max(0, start - width):start] + " " + text[end:end + width]


class CorpusBuilder:
    """Collects pages and links, tokenizes them, and builds a validated :class:`Corpus`.

    Pages get ids in insertion order. ``add_link`` takes page ids; links are
    sorted by source on :meth:`build` (stable, so per-source order is kept).
    """

    def __init__(self, name: str = "corpus", keep_text: bool = False, meta: dict | None = None):
        self.name = name
        self.keep_text = keep_text
        self.meta = dict(meta or {})
        self._word: dict[str, int] = {}
        self._words: list[str] = []
        self._domain: dict[str, int] = {}
        self._label: dict[str, int] = {}
        self.titles: list[str] = []
        self.texts: list[str] = []
        self.page_bags: list[tuple[np.ndarray, np.ndarray]] = []
        self.title_toks: list[list[int]] = []
        self.page_domain: list[int] = []
        self.page_labels: list[list[int]] = []
        self.links: list[tuple[int, int, list[int], list[int]]] = []

    def _ids(self, tokens: Iterable[str]) -> list[int]:
        out = []
        for t in tokens:
            i = self._word.get(t)
            if i is None:
                i = self._word[t] = len(self._words)
                self._words.append(t)
            out.append(i)
        return out

    @staticmethod
    def _intern(table: dict[str, int], key: str) -> int:
        i = table.get(key)
        if i is None:
            i = table[key] = len(table)
        return i

    @property
    def n_pages(self) -> int:
        return len(self.titles)

    def add_page(self, title: str, text: str = "", *, domain: str = "local", labels: Sequence[str] = (),
                 tokens: Sequence[str] | None = None) -> int:
        """Add a page; returns its id. ``tokens`` overrides tokenizing ``text``."""
        toks = self._ids(tokens if tokens is not None else tokenize(text))
        cnt = Counter(toks)
        terms = np.array(sorted(cnt), dtype=np.int32)
        counts = np.array([cnt[t] for t in terms.tolist()], dtype=np.int32)
        self.page_bags.append((terms, counts))
        self.titles.append(title)
        if self.keep_text:
            self.texts.append(text)
        self.title_toks.append(self._ids(tokenize(title.replace("_", " "))))
        self.page_domain.append(self._intern(self._domain, domain))
        self.page_labels.append(sorted({self._intern(self._label, l) for l in labels}))
        return len(self.titles) - 1

    def add_link(self, src: int, dst: int, anchor: str | None = None, context: str = "") -> None:
        """Add a link ``src → dst`` with its anchor text (default: the target's title) and surrounding text."""
        if anchor is None:
            anchor = self.titles[dst].replace("_", " ") if dst < len(self.titles) else ""
        self.links.append((src, dst, self._ids(tokenize(anchor)), self._ids(tokenize(context))))

    def build(self) -> Corpus:
        """Validate and return the :class:`Corpus` (in memory; call ``save`` to persist)."""
        n = len(self.titles)
        for (s, d, _, _) in self.links:
            if not (0 <= s < n and 0 <= d < n):
                raise ValueError(f"link {s}->{d} refers to a page outside [0, {n})")
        # vocabulary sorted alphabetically so ids do not depend on insertion order
        order = sorted(range(len(self._words)), key=self._words.__getitem__)
        remap = np.empty(len(order), dtype=np.int32)
        remap[np.asarray(order, dtype=np.int64)] = np.arange(len(order), dtype=np.int32)

        def rm(a: np.ndarray) -> np.ndarray:
            return remap[a] if len(a) else a.astype(np.int32)

        text_ptr = np.zeros(n + 1, dtype=np.int64)
        terms_l, counts_l = [], []
        for i, (t, c) in enumerate(self.page_bags):
            t2 = rm(t)
            o = np.argsort(t2, kind="stable")
            terms_l.append(t2[o])
            counts_l.append(c[o])
            text_ptr[i + 1] = text_ptr[i] + len(t)
        text_terms = np.concatenate(terms_l).astype(np.int32) if terms_l else np.zeros(0, np.int32)
        text_counts = np.concatenate(counts_l).astype(np.int32) if counts_l else np.zeros(0, np.int32)
        title_ptr, title_terms = csr_from_lists(self.title_toks)
        links = sorted(self.links, key=lambda x: x[0])
        link_ptr = np.zeros(n + 1, dtype=np.int64)
        link_ptr[1:] = np.cumsum(np.bincount(np.asarray([l[0] for l in links], dtype=np.int64), minlength=n))
        link_dst = np.asarray([l[1] for l in links], dtype=np.int32)
        anchor_ptr, anchor_terms = csr_from_lists([l[2] for l in links])
        context_ptr, context_terms = csr_from_lists([l[3] for l in links])
        label_ptr, label_ids = csr_from_lists(self.page_labels)
        words = [self._words[i] for i in order]
        return Corpus(
            text_ptr=text_ptr, text_terms=text_terms, text_counts=text_counts,
            title_ptr=title_ptr, title_terms=rm(title_terms),
            link_ptr=link_ptr.astype(np.int64), link_dst=link_dst,
            anchor_ptr=anchor_ptr, anchor_terms=rm(anchor_terms),
            context_ptr=context_ptr, context_terms=rm(context_terms),
            page_domain=np.asarray(self.page_domain, dtype=np.int32),
            label_ptr=label_ptr, label_ids=label_ids,
            titles=StringTable.from_strings(self.titles), vocab=StringTable.from_strings(words),
            domains=StringTable.from_strings(sorted(self._domain, key=self._domain.__getitem__)),
            labels=StringTable.from_strings(sorted(self._label, key=self._label.__getitem__)),
            texts=StringTable.from_strings(self.texts) if self.keep_text else None,
            meta={"name": self.name, **self.meta},
        )
