"""The corpus the crawler walks: the columnar :class:`Corpus`, its cache, its registry and the dataset loaders.

:func:`load_corpus` resolves every way a user names a corpus (all registered in
:mod:`gym_crawl.corpus.sources`):

* ``None`` / a name of :data:`CORPORA`: ``"synthetic"`` — the embedded default (generated, cached),
  ``"synthetic-<N>"`` (e.g. ``"synthetic-100000"``) a generated web of N pages, ``"synthetic-hard"``
  / ``"synthetic-hard-<N>"`` the harder preset, ``"wikispeedia"`` — SNAP's Wikispeedia (downloaded on
  demand into the cache), ``"simplewiki"`` — the Simple English Wikipedia dump (downloaded on demand),
  ``"docs-web"`` — Debian's documentation sites, compiled by ``gym-crawl bench docs-web`` (never built here:
  a missing one is an error naming that command);
* a path of one of the :data:`CORPUS_KINDS` (tried in order): a compiled corpus directory (has
  ``manifest.json``), the thesis' ``xml/ + index.txt + links.txt`` layout, a Wikispeedia folder or
  archive, a MediaWiki ``*.xml[.bz2]`` dump, WARC web archives (``*.warc[.gz]``, a folder of them or a
  glob), or a folder of HTML files;
* a ``networkx`` graph, or a :class:`Corpus` (returned as is).

The dataset loaders of this package read Wikispeedia, MediaWiki dumps and the thesis' layout. The loaders
of web formats (WARC archives, HTML folders, the live web) are in :mod:`gym_crawl.web`, the generated
webs (synthetic, news site, changing web, the small examples) in :mod:`gym_crawl.webgen`; the registry
names them by lazy ``"module:attribute"`` entries, so this package imports neither.
"""
from __future__ import annotations

from gym_crawl.corpus.cache import data_dir
from gym_crawl.corpus.core import Corpus, CorpusBuilder, CorpusFormatError, StringTable
from gym_crawl.corpus.sources import CORPORA, CORPUS_KINDS, DEFAULT_SYNTHETIC_PAGES, load_corpus, register_corpus

__all__ = ["CORPORA", "CORPUS_KINDS", "DEFAULT_SYNTHETIC_PAGES", "Corpus", "CorpusBuilder", "CorpusFormatError",
           "StringTable", "data_dir", "load_corpus", "register_corpus"]
