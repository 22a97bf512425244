"""Every way a user names a corpus, registered in one place.

* :data:`CORPORA` — named corpora (a :class:`~gym_crawl.registry.Registry`): ``synthetic``,
  ``synthetic-hard``, ``wikispeedia``, ``simplewiki``, ``docs-web``. A name registered as *sized* also
  accepts a page count suffix: ``synthetic-<N>``, ``synthetic-hard-<N>`` (``N`` may be written
  ``100_000``, ``100k`` or ``1m``) → its loader gets ``n_pages=N``. A name registered as *built*
  (:func:`register_built_corpus`: ``docs-web``) is a corpus a command compiles into the data directory;
  loading opens it and never builds it.
* :data:`CORPUS_KINDS` — the kinds of path a corpus can be read from, each with a detector, tried in
  registration order (first match wins): a compiled corpus directory, the thesis' layout, Wikispeedia
  data, a MediaWiki dump, WARC archives (a file, a folder of them or a glob), a folder of HTML files.
* a ``networkx`` graph (converted with :meth:`Corpus.from_networkx`) or a :class:`Corpus` (as is).

A new named corpus or a new kind of path is one call::

    CORPORA.register("mywiki", "mypkg.loader:load_mywiki", "My wiki (downloaded on demand)")
    CORPUS_KINDS.register_kind("warc", detect=lambda p: p.suffix == ".warc", loader="mypkg.warc:load_warc",
                               description="a WARC file", before="html-folder",
                               example="mypkg.warc:write_example_warc")

and :func:`load_corpus`, ``gym-crawl corpus info`` and the conformance tests (which iterate over
:meth:`CorpusKindRegistry.kinds`) pick it up.
"""
from __future__ import annotations

import functools
import glob
import importlib
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gym_crawl.corpus.cache import data_dir
from gym_crawl.corpus.core import Corpus, CorpusFormatError
from gym_crawl.registry import Registry

__all__ = [
    "BUILT_CORPORA",
    "CORPORA",
    "CORPUS_KINDS",
    "DEFAULT_SYNTHETIC_PAGES",
    "SIZED_CORPORA",
    "CorpusKindRegistry",
    "built_corpus_path",
    "load_built_corpus",
    "load_corpus",
    "parse_corpus_name",
    "register_built_corpus",
    "register_corpus",
]

DEFAULT_SYNTHETIC_PAGES = 20_000

CORPORA: Registry[Corpus] = Registry(
    "corpus", alternative="a path to a corpus (see CORPUS_KINDS), a networkx graph or a Corpus")
"""Named corpora: name → ``loader(**kwargs) -> Corpus``."""

SIZED_CORPORA: set[str] = set()
"""Names of :data:`CORPORA` that also accept ``<name>-<N>`` (the loader then gets ``n_pages=N``)."""


def register_corpus(name: str, loader: Callable[..., Corpus] | str, description: str = "", *,
                    sized: bool = False) -> None:
    """Register a named corpus; ``sized=True`` also accepts ``<name>-<N>`` (``n_pages=N``)."""
    CORPORA.register(name, loader, description)
    if sized:
        SIZED_CORPORA.add(name)
    else:
        SIZED_CORPORA.discard(name)


class CorpusKindRegistry(Registry[Corpus]):
    """The kinds of path a corpus can be read from: loaders (lazy ``"module:attr"`` entries, as in
    every :class:`Registry`) plus a detector each, tried in a fixed order."""

    def __init__(self) -> None:
        super().__init__("corpus kind")
        self._detect: dict[str, Callable[[Path], bool]] = {}
        self._example: dict[str, Callable[[Path], Path] | str] = {}
        self._order: list[str] = []

    def register_kind(self, name: str, detect: Callable[[Path], bool], loader: Callable[..., Corpus] | str,
                      description: str, *, before: str | None = None,
                      example: Callable[[Path], Path] | str | None = None) -> None:
        """Register kind ``name``: ``detect(path) -> bool`` and ``loader(path, **kwargs) -> Corpus``.

        Detection tries kinds in order; ``before`` inserts this kind ahead of an existing one (default:
        last). Re-registering a name replaces it in place. ``example(folder) -> path`` (or a lazy
        ``"module:attr"``) writes a small sample of the kind — the example web of
        :mod:`gym_crawl.webgen.examples` — so tests iterating over every kind cover this one.
        """
        if not callable(detect):
            raise TypeError(f"corpus kind {name!r}: detect must be callable, got {type(detect).__name__}")
        if before is not None and before not in self._detect:
            raise ValueError(f"corpus kind {name!r}: before={before!r} is not a registered kind "
                             f"(registered: {', '.join(self._order)})")
        self.register(name, loader, description)
        self._detect[name] = detect
        if example is not None:
            self._example[name] = example
        else:
            self._example.pop(name, None)
        if name in self._order:
            if before is None:
                return
            self._order.remove(name)
        self._order.insert(self._order.index(before) if before is not None else len(self._order), name)

    def unregister(self, name: str) -> None:
        super().unregister(name)
        self._detect.pop(name, None)
        self._example.pop(name, None)
        if name in self._order:
            self._order.remove(name)

    def kinds(self) -> list[str]:
        """Registered kinds in detection order."""
        return list(self._order)

    def example(self, name: str, folder: str | os.PathLike) -> Path:
        """Write kind ``name``'s example into ``folder`` and return the path to load.

        Raises ``ValueError`` naming the kind when it was registered without an example writer.
        """
        if name not in self._detect:
            raise ValueError(f"unknown corpus kind {name!r}; registered: {', '.join(self._order)}")
        w = self._example.get(name)
        if w is None:
            raise ValueError(f"corpus kind {name!r} was registered without an example writer (example=...)")
        if isinstance(w, str):
            mod, attr = w.split(":")
            w = self._example[name] = getattr(importlib.import_module(mod), attr)
        return Path(w(Path(folder)))

    def detect(self, path: Path) -> str | None:
        """The first kind whose detector accepts ``path`` (``None`` when none does)."""
        for name in self._order:
            if self._detect[name](path):
                return name
        return None

    def describe_kinds(self) -> str:
        """``"compiled (a directory with manifest.json), …"`` for error messages."""
        desc = self.describe()
        return "; ".join(f"{k} ({desc[k]})" if desc.get(k) else k for k in self._order)


CORPUS_KINDS = CorpusKindRegistry()
"""Kinds of corpus path, in detection order (see :meth:`CorpusKindRegistry.kinds`)."""


# ------------------------------------------------------------------ named corpora
# The loaders live in the layers above the corpus (the generated webs, the web); lazy "module:attribute"
# entries name them, so resolving a name imports its loader on first use and this module imports nothing above.

def _simplewiki(**kw: Any) -> Corpus:
    """The Simple English Wikipedia dump (downloaded on demand, SHA-1 verified, compiled and cached)."""
    from gym_crawl.corpus import mediawiki

    return mediawiki.load_simplewiki(**kw)


register_corpus("synthetic", "gym_crawl.webgen.synthetic:synthetic_corpus",
                "The embedded synthetic web (generated once, then memory-mapped from the cache).", sized=True)
register_corpus("synthetic-hard", "gym_crawl.webgen.synthetic:synthetic_hard_corpus",
                "The synthetic web with the ``hard`` preset: link text as uninformative as the real web's", sized=True)
register_corpus("powerlaw", "gym_crawl.webgen.powerlaw:powerlaw_corpus",
                "A power-law web generated in chunks straight to disk (10^7 pages and more; generated once, then "
                "memory-mapped from the cache)", sized=True)
register_corpus("wikispeedia", "gym_crawl.corpus.wikispeedia:load_wikispeedia",
                "SNAP's Wikispeedia (4,604 pages; downloaded on demand into the cache)")
register_corpus("simplewiki", _simplewiki)


# ------------------------------------------------------------------ corpora a command builds
BUILT_CORPORA: dict[str, str] = {}
"""Names of :data:`CORPORA` that a command compiles into ``<data dir>/<name>`` → how to build it (the
command, and what else a user may need to know)."""


def built_corpus_path(name: str, path: str | os.PathLike | None = None) -> Path:
    """Where the built corpus ``name`` lives: ``path`` when given, else ``<data dir>/<name>``
    (:func:`~gym_crawl.corpus.cache.data_dir`, moved by ``GYM_CRAWL_DATA``)."""
    return Path(path) if path is not None else data_dir() / name


def load_built_corpus(name: str, path: str | os.PathLike | None = None, **load_kw: Any) -> Corpus:
    """The built corpus ``name`` of :data:`BUILT_CORPORA`, memory-mapped from :func:`built_corpus_path`.

    It is never built or downloaded here: when there is no compiled corpus at that path the
    ``FileNotFoundError`` names the path and the command that builds it.

    :param name: a name of :data:`BUILT_CORPORA`.
    :param path: the compiled corpus' folder (default: ``<data dir>/<name>``).
    :param load_kw: ``mmap`` / ``verify`` for :meth:`Corpus.load`.
    """
    if name not in BUILT_CORPORA:
        raise ValueError(f"{name!r} is not a built corpus; built corpora: {sorted(BUILT_CORPORA)}")
    p = built_corpus_path(name, path)
    if not (p / "manifest.json").is_file():
        raise FileNotFoundError(f"the {name} corpus is not built at {p}: build it with {BUILT_CORPORA[name]}; "
                                "GYM_CRAWL_DATA moves the data directory")
    return Corpus.load(p, **load_kw)


def register_built_corpus(name: str, command: str, description: str, *, hint: str = "") -> None:
    """Register ``name`` in :data:`CORPORA` as a corpus that ``command`` compiles into
    ``<data dir>/<name>``; ``load_corpus(name, path=None)`` then opens it (:func:`load_built_corpus`).

    :param name: the corpus name (also the folder name under the data directory).
    :param command: the command a user runs to build it, named by the error when it is missing.
    :param description: one line for listings.
    :param hint: what else the error says about building it (an option, a requirement).
    """
    BUILT_CORPORA[name] = f"`{command}`" + (f" ({hint})" if hint else "")
    register_corpus(name, functools.partial(load_built_corpus, name), description)


register_built_corpus("docs-web", "gym-crawl bench docs-web",
                      "Debian's documentation sites crawled into a corpus (built by `gym-crawl bench docs-web`)",
                      hint="add --install to install the Debian documentation packages")


_SIZE_RE = re.compile(r"^(?P<base>.+?)-(?P<n>\d[\d_]*(?:k|m)?)$")


def parse_corpus_name(spec: str) -> tuple[str, dict[str, Any]] | None:
    """``(registered name, loader kwargs)`` for a corpus name, or ``None`` when it is not one.

    ``"synthetic-100k"`` → ``("synthetic", {"n_pages": 100000})``. A sized name with a malformed
    count (``"synthetic-abc"``) raises ``ValueError`` naming the expected form.
    """
    low = spec.strip().lower()
    if low in CORPORA:
        return low, {}
    m = _SIZE_RE.match(low)
    if m and m.group("base") in SIZED_CORPORA:
        n = int(m.group("n").replace("_", "").replace("k", "000").replace("m", "000000"))
        return m.group("base"), {"n_pages": n}
    for base in sorted(SIZED_CORPORA, key=len, reverse=True):
        if low.startswith(base + "-"):
            raise ValueError(f"corpus {spec!r}: expected '{base}-<pages>', e.g. '{base}-100000'")
    return None


def _known_names() -> str:
    return ", ".join(CORPORA.names() + [f"{n}-<N>" for n in sorted(SIZED_CORPORA)])


# -------------------------------------------------------------------- path kinds

def _is_wikispeedia(p: Path) -> bool:
    return ((p / "articles.tsv").exists() or p.name.startswith("wikispeedia") or p.name.endswith(".tar.gz")
            or (p / "plaintext_articles").exists() or (p / "plaintext_articles.tar.xz").exists())


_WARC_SUFFIXES = (".warc", ".warc.gz")
_GLOB_CHARS = frozenset("*?[")


def _is_warc(p: Path) -> bool:
    """A ``*.warc`` / ``*.warc.gz`` file, a folder holding one (at any depth), or a glob matching one."""
    s = str(p)
    if _GLOB_CHARS & set(s):
        return any(m.lower().endswith(_WARC_SUFFIXES) for m in glob.iglob(s, recursive=True))
    if p.is_dir():
        return any(f.name.lower().endswith(_WARC_SUFFIXES) for f in p.rglob("*.warc*"))
    return p.is_file() and p.name.lower().endswith(_WARC_SUFFIXES)


CORPUS_KINDS.register_kind(
    "compiled", lambda p: p.is_dir() and (p / "manifest.json").exists(), Corpus.load,
    "a compiled corpus directory with manifest.json (`gym-crawl corpus compile`)",
    example="gym_crawl.webgen.examples:write_compiled")
CORPUS_KINDS.register_kind(
    "thesis-layout", lambda p: p.is_dir() and (p / "index.txt").exists() and (p / "links.txt").exists(),
    "gym_crawl.corpus.thesis_layout:load_thesis_layout", "the thesis' xml/ + index.txt + links.txt folder",
    example="gym_crawl.webgen.examples:write_thesis_layout_example")
CORPUS_KINDS.register_kind(
    "wikispeedia", _is_wikispeedia, "gym_crawl.corpus.wikispeedia:load_wikispeedia",
    "Wikispeedia data: a folder with articles.tsv / plaintext_articles, or SNAP's .tar.gz archives",
    example="gym_crawl.webgen.examples:write_wikispeedia")
CORPUS_KINDS.register_kind(
    "mediawiki", lambda p: p.suffix in (".xml", ".bz2") or p.name.endswith(".xml.bz2"),
    "gym_crawl.corpus.mediawiki:load_mediawiki_dump", "a MediaWiki XML dump, *.xml or *.xml.bz2",
    example="gym_crawl.webgen.examples:write_mediawiki_dump")
CORPUS_KINDS.register_kind(
    "warc", _is_warc, "gym_crawl.web.warc:load_warc",
    "WARC web archives: a *.warc / *.warc.gz file, a folder holding them, or a glob",
    example="gym_crawl.webgen.examples:write_example_warc")
CORPUS_KINDS.register_kind(
    "html-folder", lambda p: p.is_dir(), "gym_crawl.web.html_folder:load_html_folder",
    "any other folder: its *.html / *.htm files and the links between them",
    example="gym_crawl.webgen.examples:write_html_folder")


# ------------------------------------------------------------------------ resolve

def load_corpus(spec: Any = None, **kwargs: Any) -> Corpus:
    """Resolve ``spec`` to a :class:`Corpus`. ``kwargs`` go to the loader.

    ``spec`` is ``None`` (= ``"synthetic"``), a name of :data:`CORPORA` (``synthetic-<N>`` for sized
    ones; a built one such as ``docs-web`` is opened, never built), a path of one of the
    :data:`CORPUS_KINDS`, a ``networkx`` graph or a :class:`Corpus`.
    Errors name the spec and list the registered names and kinds.
    """
    if spec is None:
        spec = "synthetic"
    if isinstance(spec, Corpus):
        return spec
    if hasattr(spec, "nodes") and hasattr(spec, "edges"):
        return Corpus.from_networkx(spec, **kwargs)
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if not isinstance(spec, str):
        raise TypeError(f"corpus must be a name ({_known_names()}), a path, a networkx graph or a Corpus, "
                        f"got {type(spec).__name__}")
    name = spec.strip()
    if not name:
        raise ValueError(f"corpus {spec!r} is empty: pass a registered name ({_known_names()}), a path, or None "
                         f"for the default")
    named = parse_corpus_name(name)
    if named is not None:
        base, kw = named
        return CORPORA.build(base, **kw, **kwargs)
    path = Path(name).expanduser()
    if not path.exists() and not (_GLOB_CHARS & set(name) and glob.glob(str(path), recursive=True)):
        import difflib

        close = difflib.get_close_matches(name.lower(), CORPORA.names(), n=3)
        raise FileNotFoundError(
            f"corpus {name!r}: no such file or folder, and not a registered corpus name "
            + (f"(did you mean {' or '.join(repr(c) for c in close)}?) " if close else "")
            + f"(registered: {_known_names()}); a path may be: {CORPUS_KINDS.describe_kinds()}")
    kind = CORPUS_KINDS.detect(path)
    if kind is None:
        raise CorpusFormatError(f"corpus {name!r}: cannot tell what kind of corpus {path} is; "
                                f"registered kinds: {CORPUS_KINDS.describe_kinds()}")
    return CORPUS_KINDS.build(kind, path, **kwargs)
