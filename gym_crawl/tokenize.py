"""Tokenization shared by corpus loaders and the text layer.

Lowercased alphabetic word tokens (letters incl. accented ones, inner
apostrophes/hyphens dropped), English stop words removed, tokens of length
< 2 dropped. Deterministic and locale-independent.
"""
from __future__ import annotations

import re

__all__ = ["tokenize", "STOPWORDS", "TOKEN_RE"]

TOKEN_RE = re.compile(r"[^\W\d_]+", re.UNICODE)
_TOKEN2_RE = re.compile(r"[^\W\d_]{2,}", re.UNICODE)  # TOKEN_RE's runs of two letters or more: the same tokens

STOPWORDS: frozenset[str] = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having he
    her here hers herself him himself his how i if in into is it its itself just me more most my myself no nor
    not now of off on once only or other our ours ourselves out over own same she should so some such than that
    the their theirs them themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself yourselves may might
    must shall one two also many much such within without upon via per et al de la le les des du el los las""".split()
)


def tokenize(text: str, stopwords: frozenset[str] = STOPWORDS) -> list[str]:
    """Split ``text`` into lowercase word tokens, dropping stop words and 1-letter tokens."""
    return [t for t in _TOKEN2_RE.findall(text.lower()) if t not in stopwords]
