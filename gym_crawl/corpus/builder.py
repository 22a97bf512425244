"""Helpers the loaders share when they build a :class:`~gym_crawl.corpus.core.Corpus` from Python values.

:class:`CorpusBuilder` (incremental construction, used by the networkx, HTML-folder, Wikispeedia
and thesis-layout loaders) lives beside :class:`Corpus` in :mod:`gym_crawl.corpus.core` — it is the
Corpus' own constructor from Python values, which :meth:`Corpus.from_networkx` needs, so keeping it
there means ``core`` imports nothing of ``builder`` (no import cycle). It is re-exported here.
"""
from __future__ import annotations

from gym_crawl.corpus.core import CorpusBuilder

__all__ = ["CorpusBuilder", "surrounding_window", "CONTEXT_CHARS", "STRUCTURE_TAGS", "enter_element"]

CONTEXT_CHARS = 150
"""Characters of surrounding text kept on each side of a link (the thesis' window)."""


def surrounding_window(text: str, start: int, end: int, width: int = CONTEXT_CHARS) -> str:
    """The ``width`` characters before ``start`` and after ``end`` in ``text`` (the link itself excluded)."""
    return text[max(0, start - width):start] + " " + text[end:end + width]


_LANDMARK = {"nav": "nav", "header": "header", "footer": "footer", "aside": "aside"}
_ROLE = {"navigation": "nav", "banner": "header", "contentinfo": "footer", "complementary": "aside", "main": "main"}
_LISTS = frozenset({"ul", "ol", "dl", "menu"})
_MAIN = frozenset({"main", "article"})
STRUCTURE_TAGS = frozenset(_LANDMARK) | _LISTS | _MAIN
"""Tags that open a landmark, a list or the main content (what a link's position is read from)."""


def enter_element(tag: str, role_attr: str | None, landmark: str | None, in_list: bool,
                  in_main: bool) -> tuple[str | None, bool, bool, bool]:
    """The link-position context inside element ``tag`` (with ARIA ``role`` attribute ``role_attr``), given its
    parent's ``(landmark, in_list, in_main)``: ``(landmark, in_list, in_main, structural)``. ``structural`` is
    whether the element opens such a context (a landmark, list or main tag, or a known role), so a parser keeps
    it on its stack of open elements. The innermost landmark wins (``nav``, ``header``, ``footer``, ``aside``, or
    the role's), a list is entered at ``ul``/``ol``/``dl``/``menu`` and main content at ``main``/``article`` or
    ``role="main"``."""
    role = _ROLE.get((role_attr or "").strip().lower())
    if tag in _LANDMARK or (role is not None and role != "main"):
        landmark = _LANDMARK.get(tag) or role
    elif tag in _LISTS:
        in_list = True
    if tag in _MAIN or role == "main":
        in_main = True
    return landmark, in_list, in_main, tag in STRUCTURE_TAGS or role is not None
