"""The web the crawler walks: the columnar :class:`Corpus` and its loaders.

:func:`load_corpus` resolves every way a user names a corpus:

* ``None`` / ``"synthetic"`` — the embedded default (generated, cached);
  ``"synthetic-<N>"`` (e.g. ``"synthetic-100000"``) a generated web of N pages;
* ``"wikispeedia"`` — SNAP's Wikispeedia (downloaded on demand into the cache);
* ``"simplewiki"`` — the Simple English Wikipedia dump (downloaded on demand);
* a path: a compiled corpus directory (has ``manifest.json``), a Wikispeedia
  folder or archive, a MediaWiki ``*.xml[.bz2]`` dump, the thesis'
  ``xml/ + index.txt + links.txt`` layout, or a folder of HTML files;
* a ``networkx`` graph, or a :class:`Corpus` (returned as is).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from gym_crawl.corpus.builder import CorpusBuilder
from gym_crawl.corpus.cache import data_dir
from gym_crawl.corpus.core import Corpus, CorpusFormatError, StringTable

__all__ = ["Corpus", "CorpusBuilder", "CorpusFormatError", "StringTable", "load_corpus", "data_dir"]

DEFAULT_SYNTHETIC_PAGES = 20_000


def load_corpus(spec: Any = None, **kwargs: Any) -> Corpus:
    """Resolve ``spec`` (see module docstring) to a :class:`Corpus`. ``kwargs`` go to the loader."""
    if spec is None:
        spec = "synthetic"
    if isinstance(spec, Corpus):
        return spec
    if hasattr(spec, "nodes") and hasattr(spec, "edges"):
        return Corpus.from_networkx(spec, **kwargs)
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if not isinstance(spec, str):
        raise TypeError(f"corpus must be a name, a path, a networkx graph or a Corpus, got {type(spec).__name__}")
    name = spec.strip()
    low = name.lower()
    if low == "synthetic" or low.startswith("synthetic-"):
        from gym_crawl.corpus.synthetic import synthetic_corpus

        n = DEFAULT_SYNTHETIC_PAGES
        if low.startswith("synthetic-"):
            try:
                n = int(low.split("-", 1)[1].replace("_", "").replace("k", "000").replace("m", "000000"))
            except ValueError:
                raise ValueError(f"corpus {name!r}: expected 'synthetic-<pages>', e.g. 'synthetic-100000'") from None
        return synthetic_corpus(n_pages=n, **kwargs)
    if low == "wikispeedia":
        from gym_crawl.corpus.wikispeedia import load_wikispeedia

        return load_wikispeedia(None, **kwargs)
    if low == "simplewiki":
        from gym_crawl.corpus.mediawiki import load_simplewiki

        return load_simplewiki(**kwargs)
    path = Path(name).expanduser()
    if not path.exists():
        raise FileNotFoundError(
            f"corpus {name!r}: no such file or folder, and not a known name "
            f"(known: synthetic, synthetic-<N>, wikispeedia, simplewiki)")
    if path.is_dir() and (path / "manifest.json").exists():
        return Corpus.load(path, **kwargs)
    if path.is_dir() and (path / "index.txt").exists() and (path / "links.txt").exists():
        from gym_crawl.corpus.thesis_layout import load_thesis_layout

        return load_thesis_layout(path, **kwargs)
    if (path / "articles.tsv").exists() or path.name.startswith("wikispeedia") or path.name.endswith(".tar.gz") \
            or (path / "plaintext_articles").exists() or (path / "plaintext_articles.tar.xz").exists():
        from gym_crawl.corpus.wikispeedia import load_wikispeedia

        return load_wikispeedia(path, **kwargs)
    if path.suffix in (".xml", ".bz2") or path.name.endswith(".xml.bz2"):
        from gym_crawl.corpus.mediawiki import load_mediawiki_dump

        return load_mediawiki_dump(path, **kwargs)
    if path.is_dir():
        from gym_crawl.corpus.html_folder import load_html_folder

        return load_html_folder(path, **kwargs)
    raise CorpusFormatError(f"{path}: cannot tell what kind of corpus this is "
                            f"(expected a corpus dir, Wikispeedia data, a MediaWiki dump or an HTML folder)")
