"""Helpers the loaders share when they build a :class:`~gym_crawl.corpus.core.Corpus` from Python values.

:class:`CorpusBuilder` (incremental construction, used by the networkx, HTML-folder, Wikispeedia
and thesis-layout loaders) lives beside :class:`Corpus` in :mod:`gym_crawl.corpus.core` — it is the
Corpus' own constructor from Python values, which :meth:`Corpus.from_networkx` needs, so keeping it
there means ``core`` imports nothing of ``builder`` (no import cycle). It is re-exported here.
"""
from __future__ import annotations

from gym_crawl.corpus.core import CorpusBuilder

__all__ = ["CorpusBuilder", "surrounding_window", "CONTEXT_CHARS"]

CONTEXT_CHARS = 150
"""Characters of surrounding text kept on each side of a link (the thesis' window)."""


def surrounding_window(text: str, start: int, end: int, width: int = CONTEXT_CHARS) -> str:
    """The ``width`` characters before ``start`` and after ``end`` in ``text`` (the link itself excluded)."""
    return text[max(0, start - width):start] + " " + text[end:end + width]
