"""The web generators: corpora a program makes rather than reads, each a :class:`~gym_crawl.corpus.Corpus`.

* :mod:`~gym_crawl.webgen.synthetic` — the embedded default corpus: a deterministic, topic-structured
  synthetic web of any size (``load_corpus("synthetic-<N>")``, ``"synthetic-hard"``), cached on disk;
* :mod:`~gym_crawl.webgen.news_site` — a scale-free small-world news site (Palotai et al.'s graph);
* :mod:`~gym_crawl.webgen.changing` — that site changing over time (:class:`ChangingWeb`: new pages
  appear, links rewire), for freshness and the forager fleet;
* :mod:`~gym_crawl.webgen.examples` — one 12-page example web written in the format of every built-in
  corpus kind, so tests cover every kind.

The corpus registry (:mod:`gym_crawl.corpus.sources`) names these loaders by lazy ``"module:attribute"``
entries, so :func:`gym_crawl.corpus.load_corpus` resolves ``"synthetic"`` without importing this layer.
"""
