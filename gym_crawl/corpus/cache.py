"""Where downloaded and compiled corpora live, and how loaders use that cache.

``GYM_CRAWL_DATA`` overrides the default ``~/.cache/gym_crawl``.

:func:`open_cached` and :func:`store_cached` are the two halves every compiling loader uses
(Wikispeedia, MediaWiki dumps): re-open a compiled corpus if a valid one is cached, else compile and
store it. Storing never fails the load: when the cache cannot be written (a read-only
``GYM_CRAWL_DATA``, a full disk) the freshly compiled in-memory corpus is returned and ONE warning per
cache folder says so. An empty (0-page) corpus is refused, never cached.
"""
from __future__ import annotations

import contextlib
import logging
import os
import warnings
from pathlib import Path
from typing import Any

from gym_crawl.corpus.core import Corpus, CorpusFormatError

__all__ = ["data_dir", "open_cached", "store_cached", "CacheWarning"]

logger = logging.getLogger(__name__)


class CacheWarning(UserWarning):
    """The corpus / text-model cache could not be written or held a damaged entry."""


_WARNED: set[str] = set()


def warn_once(key: str, message: str) -> None:
    """Emit ``message`` as a :class:`CacheWarning` the first time ``key`` is seen in this process."""
    if key in _WARNED:
        logger.debug("%s", message)
        return
    _WARNED.add(key)
    warnings.warn(message, CacheWarning, stacklevel=3)


def data_dir() -> Path:
    """The cache directory (created on first use when possible; a read-only location is returned as
    is — reads of an existing cache still work and writes fall back, see :func:`store_cached`)."""
    d = Path(os.environ.get("GYM_CRAWL_DATA") or Path.home() / ".cache" / "gym_crawl")
    with contextlib.suppress(OSError):
        d.mkdir(parents=True, exist_ok=True)
    return d


def open_cached(path: str | os.PathLike, *, what: str = "corpus") -> Corpus | None:
    """The compiled corpus cached at ``path``, or ``None`` when there is none or it is unusable
    (damaged files are reported in one warning naming the file; the loader then recompiles)."""
    path = Path(path)
    if not (path / "manifest.json").is_file():
        return None
    try:
        c = Corpus.load(path)
    except CorpusFormatError as e:
        warn_once(f"damaged:{path}", f"{what}: cached copy unusable ({e}); recompiling")
        return None
    if c.n_pages == 0:
        warn_once(f"empty:{path}", f"{what}: cached copy at {path} has 0 pages; recompiling")
        return None
    return c


def store_cached(corpus: Corpus, path: str | os.PathLike, *, what: str = "corpus", **load_kw: Any) -> Corpus:
    """Save ``corpus`` at ``path`` and return it re-opened memory-mapped (``load_kw``: ``mmap`` /
    ``verify`` for :meth:`Corpus.load`).

    Raises :class:`CorpusFormatError` naming ``what`` for an empty corpus. When the cache cannot be
    written (``OSError``: read-only folder, no space), returns ``corpus`` itself (in memory) after one
    warning per cache folder.
    """
    path = Path(path)
    if corpus.n_pages == 0:
        raise CorpusFormatError(f"{what}: compiled to 0 pages (empty or unsupported source); not caching it")
    try:
        corpus.save(path)
    except OSError as e:
        corpus.path = corpus.checksum = None
        warn_once(f"readonly:{path.parent}", f"{what}: cannot write the corpus cache under {path.parent} "
                                             f"({e.strerror or e}); using the compiled corpus in memory "
                                             f"(set GYM_CRAWL_DATA to a writable folder to cache it)")
        return corpus
    return Corpus.load(path, **load_kw)
