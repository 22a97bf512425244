"""The open-vocabulary text model of a live web: known words keep the reference model's IDF and vectors,
words never seen before get deterministic ones.

A live web (:class:`gym_crawl.web.LiveWeb`) meets words its reference text model (normally the one
of the corpus the policy was trained on) never saw. :class:`OpenTextModel` holds IDF and vectors at the
web's vocabulary capacity and fills a row when the web reports a new word:

* **vector**: the hashing trick — a generator seeded by the BLAKE2b digest of the word's UTF-8 bytes draws a
  standard normal vector, scaled to the reference vectors' norm (1: they are L2-normalised). The same word
  always gets the same vector, in any process, crawl order or replay; two unseen words are nearly
  orthogonal, so an unseen word counts in a page's or link's vector without pretending to mean anything;
* **IDF**: the reference model's smoothed IDF of a word absent from its IDF sample,
  ``log((N + 1) / (0 + 1)) + 1`` with N its sample size (the model's maximum IDF) — the standard choice
  for a word rarer than every word it counted.

Without a reference model every word is new: a pure hashing model (``dim`` 64, IDF 1 for every word).

The model itself is :class:`gym_crawl.text.model.OpenTextModel` (``get_text_model`` of a live web builds it).
"""
from __future__ import annotations

import hashlib

import numpy as np

from gym_crawl._arith import norm

__all__ = ["hashed_word_vector"]


def hashed_word_vector(word: str, dim: int, scale: float = 1.0) -> np.ndarray:
    """(dim,) float32 deterministic vector of ``word``: BLAKE2b of its bytes seeds a normal draw, scaled to
    norm ``scale``."""
    seed = int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(), "little")
    v = np.random.default_rng(seed).standard_normal(dim)
    return (v * (scale / max(norm(v), 1e-12))).astype(np.float32)
