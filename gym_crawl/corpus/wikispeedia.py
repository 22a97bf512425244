"""Load SNAP's Wikispeedia (4,604 "Wikipedia for Schools" articles, 119,882 links) as a :class:`Corpus`.

:func:`load_wikispeedia` accepts every layout the data comes in:

* our copy (``shared/data/wikispeedia``): ``articles.tsv``, ``links.tsv``,
  ``categories.tsv`` and ``plaintext_articles.tar.xz`` in one folder (the
  archive is streamed with :mod:`tarfile`, never extracted to disk), or the
  same with an extracted ``plaintext_articles/`` folder;
* SNAP's layout: ``wikispeedia_paths-and-graph/`` + ``plaintext_articles/``
  folders, or SNAP's two archives ``wikispeedia_paths-and-graph.tar.gz`` and
  ``wikispeedia_articles_plaintext.tar.gz`` in one folder (what
  :func:`gym_crawl.corpus.download.download` fetches);
* ``None``: download SNAP's archives into the cache (``data_dir()/wikispeedia``),
  verify them by content (see :func:`gym_crawl.corpus.download.verify_wikispeedia`)
  and load them.

What the corpus contains
------------------------
* **Pages**, in ``articles.tsv`` order. Titles are the URL-decoded article
  names with underscores kept (``%C3%89douard_Manet`` → ``Édouard_Manet``);
  ``corpus.page_id`` accepts spaces or underscores.
* **Text** is the article with the Wikipedia-for-Schools boilerplate removed:
  the ``#copyright`` line, the title line, the ``2007 Schools Wikipedia
  Selection. Related subjects: …`` block (it would leak the category label),
  the "SOS Children works in …" charity notice that opens some articles, the
  ``[1x1.gif]`` tracking-pixel lines of the 5 charity pages, and the footer
  from ``Retrieved from "http://en.wikipedia.org/wiki/…"`` to the end (the GFDL
  / disclaimer notice). Each paragraph is re-flowed onto one line with single
  spaces; paragraphs are separated by a blank line. The cleaned text is kept
  (``corpus.texts``) for inspection only. (Five political-ideology articles,
  e.g. Communism, keep a "Related subjects" navigation box of their own body:
  it lists linked articles, not the category.)
* **Links** come from ``links.tsv`` (its order within a source is kept;
  111 self-links are kept as given). The plain-text dump has no anchors, so the
  **anchor text** of a link is the target's title with underscores replaced
  by spaces. The **surrounding text** is the :func:`surrounding_window`
  (150 characters each side, the mention itself excluded) around the *first*
  case-insensitive, whole-word mention of the target title in the source's
  cleaned text; if the full title is not mentioned, the title without a
  trailing parenthetical (``Mercury (planet)`` → ``Mercury``) or without the
  part after a comma (``Yarralumla, Australian Capital Territory`` →
  ``Yarralumla``) is tried. Word fragments cut at the window's outer edges are
  dropped. When none is mentioned the surrounding text is **empty**
  (≈ 19 % of links; ``meta["links_with_context"]`` counts the others).
* **Labels** are the full hierarchical categories of ``categories.tsv``
  (e.g. ``subject.Science.Biology.Health_and_medicine``; 4,598 pages have at
  least one, some several); topic predicates match them by prefix.
* **One domain**, ``en.wikipedia.org``: Wikipedia is a single web site, so
  per-domain statistics (e.g. TRES's domain cap) are degenerate on this corpus.

Compiling tokenizes ~98 MB of text (≈ 16 s on one core). The result is saved
atomically under ``data_dir()/compiled/wikispeedia-<key>`` (``key`` hashes
:data:`LOADER_VERSION`, the tokenizer and every input file's size and mtime)
and later calls memory-map it in a fraction of a second.
"""
from __future__ import annotations

import hashlib
import json
import lzma
import os
import re
import tarfile
import warnings
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from gym_crawl.corpus.builder import CONTEXT_CHARS, CorpusBuilder, surrounding_window
from gym_crawl.corpus.cache import data_dir, open_cached, store_cached
from gym_crawl.corpus.core import FORMAT_VERSION, Corpus, CorpusFormatError

__all__ = ["load_wikispeedia", "clean_article", "find_mention", "TOPICS", "LOADER_VERSION", "DOMAIN"]

LOADER_VERSION = 2
"""Bump when the compiled output changes meaning (cleaning, contexts, labels, meta)."""

DOMAIN = "en.wikipedia.org"
SNAP_URL = "https://snap.stanford.edu/data/wikispeedia.html"

CITATION = [
    "Robert West and Jure Leskovec. Human Wayfinding in Information Networks. "
    "21st International World Wide Web Conference (WWW), 2012.",
    "Robert West, Joelle Pineau and Doina Precup. Wikispeedia: An Online Game for Inferring Semantic "
    "Distances between Concepts. 21st International Joint Conference on Artificial Intelligence (IJCAI), 2009.",
]

TOPICS: dict[str, dict[str, Any]] = {
    "geology": {"seeds": ["Geology"], "label": "subject.Geography.Geology_and_geophysics",
                "words": ["geology"], "categories": ["earth", "science"]},
    "cancer": {"seeds": ["Cancer"], "label": "subject.Science.Biology.Health_and_medicine",
               "words": ["cancer"], "categories": ["disease", "medicine", "oncology", "health"]},
    "poetry": {"seeds": ["Poetry"], "label": "subject.Language_and_literature.Poetry_and_Opera",
               "words": ["poetry"], "categories": ["literature", "arts"]},
    "sports": {"seeds": ["Olympic_Games"], "label": "subject.Everyday_life.Sports",
               "words": ["sports", "olympic"], "categories": ["sports"]},
}
"""Built-in topics (seeds, ground-truth label, topic words, category words); copied into ``meta["topics"]``
(those whose label and seeds exist in the data).
Every label is an exact category of ``categories.tsv``. Topic predicates match labels by string
prefix, so ``subject.Everyday_life.Sports`` also covers ``…Sports_events`` (the seed Olympic_Games) and
``…Sports_teams``: 70 relevant pages, against 76 for geology, 109 for cancer and 30 for poetry."""

_TSVS = ("articles.tsv", "links.tsv", "categories.tsv")
_GRAPH_DIR = "wikispeedia_paths-and-graph"
_GRAPH_TGZ = "wikispeedia_paths-and-graph.tar.gz"
_ARTICLES_DIR = "plaintext_articles"
_ARTICLES_TXZ = "plaintext_articles.tar.xz"
_ARTICLES_TGZ = "wikispeedia_articles_plaintext.tar.gz"
_ARCHIVE_ERRORS = (tarfile.TarError, EOFError, lzma.LZMAError, zlib.error, OSError)


# ------------------------------------------------------------------ cleaning
_SCHOOLS = "2007 Schools Wikipedia Selection"
_GIF_LINE = re.compile(r"^(\s*\[1x1\.gif\])+\s*$")
_NOTICE_WRAPS = re.compile(r"(\bsee|\bSOS|\bChildren|\bin|\bthe|,)\s*$")
"""A notice line ending like this continues on the next line (the link text wrapped)."""


def _skip_charity_notice(lines: list[str], i: int, end: int) -> int:
    """Skip the SOS Children notice(s) that open ~120 articles ("SOS Children works in Ethiopia.
    For more information see SOS Children in Ethiopia, Africa").

    A notice is the body's first paragraph when its first line mentions "SOS"; it
    ends at the last of its first three lines that mentions "SOS" (plus one line
    when the link text wraps), so an infobox glued to it is kept.
    """
    while True:
        while i < end and not lines[i].strip():
            i += 1
        head: list[str] = []
        for line in lines[i:min(i + 3, end)]:
            if not line.strip():
                break
            head.append(line)
        if not head or "SOS" not in head[0]:
            return i
        last = max(k for k, line in enumerate(head) if "SOS" in line)
        j = i + last + 1
        if _NOTICE_WRAPS.search(head[last]) and j < end and lines[j].strip():
            j += 1
        i = j


def clean_article(raw: str) -> str:
    """Strip the Wikipedia-for-Schools boilerplate from one plain-text article (see module docstring).

    Returns the body as paragraphs (one line each, single spaces) separated by blank lines.
    """
    lines = raw.replace("\r\n", "\n").split("\n")
    n = len(lines)
    i = 0
    while i < n and not lines[i].strip():
        i += 1
    if i < n and lines[i].strip() == "#copyright":
        i += 1
        while i < n and not lines[i].strip():
            i += 1
        while i < n and lines[i].strip() and not lines[i].startswith(_SCHOOLS):  # title paragraph
            i += 1
        while i < n and not lines[i].strip():
            i += 1
    if i < n and lines[i].startswith(_SCHOOLS):
        # the block's continuation lines are not indented; the body always is
        i += 1
        while i < n and lines[i].strip() and not lines[i][:1].isspace():
            i += 1
    end = n
    for j in range(n - 1, i - 1, -1):
        if lines[j].lstrip().startswith("Retrieved from"):
            end = j
            break
    i = _skip_charity_notice(lines, i, end)
    paragraphs: list[str] = []
    cur: list[str] = []
    for line in lines[i:end]:
        if not line.strip() or _GIF_LINE.match(line):
            if cur:
                paragraphs.append(" ".join(cur))
                cur = []
            continue
        cur.append(" ".join(line.split()))
    if cur:
        paragraphs.append(" ".join(cur))
    return "\n\n".join(p for p in paragraphs if p.strip("_ "))  # drop horizontal rules


def _mention_variants(title: str) -> list[str]:
    t = title.replace("_", " ").strip()
    out = [t]
    m = re.match(r"^(.*\S)\s*\([^()]*\)$", t)
    if m:
        out.append(m.group(1))
    if ", " in t:
        out.append(t.split(", ", 1)[0])
    return [v.lower() for v in dict.fromkeys(out) if len(v) >= 2]


def find_mention(lowered_text: str, variants: list[str]) -> tuple[int, int] | None:
    """First whole-word occurrence of the first variant found; ``(start, end)`` or ``None``.

    ``lowered_text`` must already be lower-cased (``str.lower`` keeps offsets
    for the texts of this corpus; callers check the lengths agree).
    """
    n = len(lowered_text)
    for v in variants:
        k = len(v)
        start = lowered_text.find(v)
        while start >= 0:
            end = start + k
            if (start == 0 or not lowered_text[start - 1].isalnum()) and (end >= n or not lowered_text[end].isalnum()):
                return start, end
            start = lowered_text.find(v, start + 1)
    return None


def _window(text: str, start: int, end: int) -> str:
    """:func:`surrounding_window` (``CONTEXT_CHARS`` each side), minus the word fragments cut at its outer edges."""
    ctx = surrounding_window(text, start, end)
    a, b = start - CONTEXT_CHARS, end + CONTEXT_CHARS
    if a > 0 and text[a - 1].isalnum() and text[a].isalnum():
        k = 0
        while k < len(ctx) and ctx[k].isalnum():
            k += 1
        ctx = ctx[k:]
    if b < len(text) and text[b - 1].isalnum() and text[b].isalnum():
        k = len(ctx)
        while k > 0 and ctx[k - 1].isalnum():
            k -= 1
        ctx = ctx[:k]
    return ctx


# ------------------------------------------------------------------- sources
def _decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CorpusFormatError(f"{where}: not valid UTF-8 ({e})") from None


@dataclass
class _Layout:
    """Where the three TSVs and the article texts live for one input folder."""

    root: Path
    tsv_dir: Path | None = None        # folder holding the TSVs
    tsv_archive: Path | None = None    # or SNAP's graph .tar.gz
    articles_dir: Path | None = None   # folder of <name>.txt
    articles_archive: Path | None = None

    @classmethod
    def resolve(cls, path: Path) -> _Layout:
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such Wikispeedia file or folder")
        root = path.parent if path.is_file() else path
        lay = cls(root=root)
        for cand in (root, root / _GRAPH_DIR):
            if (cand / "articles.tsv").is_file() or (cand / "links.tsv").is_file():
                lay.tsv_dir = cand
                break
        else:
            if (root / _GRAPH_TGZ).is_file():
                lay.tsv_archive = root / _GRAPH_TGZ
        for cand in (root / _ARTICLES_DIR, root / _GRAPH_DIR / _ARTICLES_DIR):
            if cand.is_dir():
                lay.articles_dir = cand
                break
        else:
            for name in (_ARTICLES_TXZ, _ARTICLES_TGZ):
                if (root / name).is_file():
                    lay.articles_archive = root / name
                    break
        if lay.tsv_dir is None and lay.tsv_archive is None:
            raise CorpusFormatError(
                f"{root}: no Wikispeedia graph found: expected articles.tsv/links.tsv/categories.tsv here, "
                f"in {_GRAPH_DIR}/, or in {_GRAPH_TGZ}")
        if lay.articles_dir is None and lay.articles_archive is None:
            raise CorpusFormatError(
                f"{root}: no Wikispeedia article texts found: expected {_ARTICLES_DIR}/, {_ARTICLES_TXZ} "
                f"or {_ARTICLES_TGZ}")
        if lay.tsv_dir is not None:
            for name in _TSVS:
                if not (lay.tsv_dir / name).is_file():
                    raise CorpusFormatError(f"{lay.tsv_dir / name}: missing Wikispeedia file {name} "
                                            f"(needed: {', '.join(_TSVS)})")
        return lay

    def inputs(self) -> list[Path]:
        """Every file the compiled corpus depends on (for the cache key)."""
        files: list[Path | None] = [self.tsv_dir / n for n in _TSVS] if self.tsv_dir else [self.tsv_archive]
        if self.articles_dir is not None:
            files += sorted(self.articles_dir.glob("*.txt"))
        else:
            files.append(self.articles_archive)
        return [f for f in files if f is not None]

    def read_tsvs(self) -> dict[str, tuple[str, str]]:
        """``name → (where, text)`` for the three TSVs; ``where`` names the file in error messages."""
        out: dict[str, tuple[str, str]] = {}
        if self.tsv_dir is not None:
            for name in _TSVS:
                p = self.tsv_dir / name
                out[name] = (str(p), _decode(p.read_bytes(), str(p)))
            return out
        arc = self.tsv_archive
        assert arc is not None
        try:
            with tarfile.open(arc, "r:*") as tf:
                for m in tf:
                    base = m.name.rsplit("/", 1)[-1]
                    if m.isfile() and base in _TSVS and base not in out:
                        f = tf.extractfile(m)
                        assert f is not None
                        where = f"{arc}:{m.name}"
                        out[base] = (where, _decode(f.read(), where))
        except _ARCHIVE_ERRORS as e:
            raise CorpusFormatError(f"{arc}: unreadable or truncated archive ({type(e).__name__}: {e})") from None
        for name in _TSVS:
            if name not in out:
                raise CorpusFormatError(f"{arc}: missing Wikispeedia file {name} in the archive")
        return out

    def iter_articles(self) -> Iterator[tuple[str, bytes]]:
        """Yield ``(url_encoded_name, raw_bytes)`` for every ``plaintext_articles/*.txt``."""
        if self.articles_dir is not None:
            for p in sorted(self.articles_dir.glob("*.txt")):
                yield p.name[:-4], p.read_bytes()
            return
        arc = self.articles_archive
        assert arc is not None
        try:
            with tarfile.open(arc, "r:*") as tf:
                for m in tf:
                    if m.isfile() and m.name.endswith(".txt"):
                        f = tf.extractfile(m)
                        assert f is not None
                        yield m.name.rsplit("/", 1)[-1][:-4], f.read()
        except _ARCHIVE_ERRORS as e:
            raise CorpusFormatError(f"{arc}: unreadable or truncated archive ({type(e).__name__}: {e})") from None

    def describe(self) -> str:
        parts = [str(self.tsv_dir or self.tsv_archive), str(self.articles_dir or self.articles_archive)]
        return " + ".join(parts)


def _rows(where: str, text: str, ncols: int) -> Iterator[tuple[int, list[str]]]:
    """Non-comment, non-blank rows of a TSV as ``(1-based line number, fields)``."""
    for lineno, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != ncols:
            raise CorpusFormatError(f"{where}, line {lineno}: expected {ncols} tab-separated field(s), "
                                    f"got {len(fields)}: {line[:80]!r}")
        yield lineno, fields


# ------------------------------------------------------------------- compile
def _tqdm(progress: bool, **kw: Any) -> Any:
    from tqdm import tqdm

    return tqdm(disable=None if progress else True, leave=False, **kw)


def _compile(lay: _Layout, progress: bool) -> Corpus:
    from gym_crawl.corpus.download import WIKISPEEDIA_FINGERPRINT

    tsvs = lay.read_tsvs()
    where_a, text_a = tsvs["articles.tsv"]
    names: list[str] = []
    index: dict[str, int] = {}
    for lineno, (name,) in _rows(where_a, text_a, 1):
        name = name.strip()
        if name in index:
            raise CorpusFormatError(f"{where_a}, line {lineno}: duplicate article {name!r}")
        index[name] = len(names)
        names.append(name)
    if not names:
        raise CorpusFormatError(f"{where_a}: no articles")

    def lookup(where: str, lineno: int, name: str) -> int:
        i = index.get(name)
        if i is None:
            raise CorpusFormatError(f"{where}, line {lineno}: unknown article {name!r} (not in articles.tsv)")
        return i

    labels: list[list[str]] = [[] for _ in names]
    where_c, text_c = tsvs["categories.tsv"]
    for lineno, (name, cat) in _rows(where_c, text_c, 2):
        labels[lookup(where_c, lineno, name.strip())].append(cat.strip())
    where_l, text_l = tsvs["links.tsv"]
    links = [(lookup(where_l, ln, s.strip()), lookup(where_l, ln, t.strip()))
             for ln, (s, t) in _rows(where_l, text_l, 2)]

    # article texts (streamed from the archive or read from the folder)
    texts: list[str | None] = [None] * len(names)
    fp_entries: list[tuple[bytes, str]] = []
    src = str(lay.articles_dir or lay.articles_archive)
    with _tqdm(progress, total=len(names), desc="wikispeedia: reading articles", unit="page") as bar:
        for enc, raw in lay.iter_articles():
            fp_entries.append((f"{_ARTICLES_DIR}/{enc}.txt".encode(), hashlib.sha256(raw).hexdigest()))
            i = index.get(enc)
            if i is None:
                continue  # a file not listed in articles.tsv is ignored
            texts[i] = clean_article(_decode(raw, f"{src}: {enc}.txt"))
            bar.update(1)
    missing = [names[i] for i, t in enumerate(texts) if t is None]
    if missing:
        raise CorpusFormatError(f"{src}: no text file for {len(missing)} article(s) of articles.tsv, "
                                f"e.g. {missing[0]}.txt" + (f", {missing[1]}.txt" if len(missing) > 1 else ""))
    fp_entries.sort()
    h = hashlib.sha256()
    for n, d in fp_entries:
        h.update(d.encode("ascii") + b"  " + n + b"\n")
    fingerprint = h.hexdigest()
    if fingerprint != WIKISPEEDIA_FINGERPRINT:
        warnings.warn(f"{src}: article content fingerprint {fingerprint} differs from the reference "
                      f"{WIKISPEEDIA_FINGERPRINT} (SOURCE.md); loading anyway", stacklevel=3)

    titles = [unquote(n) for n in names]
    all_labels = {lab for ls in labels for lab in ls}
    known_titles = set(titles)
    topics = {}
    for tname, t in TOPICS.items():  # a topic whose label or seed is absent (a partial copy) is not listed
        if t["label"] not in all_labels:
            warnings.warn(f"topic {tname!r}: label {t['label']!r} is not a category of {where_c}; "
                          f"topic left out", stacklevel=3)
        elif not set(t.get("seeds", ())) <= known_titles:
            warnings.warn(f"topic {tname!r}: seed page(s) {sorted(set(t['seeds']) - known_titles)} not in "
                          f"{where_a}; topic left out", stacklevel=3)
        else:
            topics[tname] = t
    meta = {
        "source": f"SNAP Wikispeedia ({SNAP_URL}); 2007 Wikipedia for Schools selection (SOS Children's Villages)",
        "citation": CITATION,
        "license": "article texts: GNU FDL (per each article's footer) / CC BY-SA; TSVs: cite the two papers",
        "domain_definition": ("Wikipedia is a single web site: every page is in the one domain "
                              f"{DOMAIN!r}, so per-domain statistics are degenerate on this corpus"),
        "anchor_definition": "the target article's title with underscores replaced by spaces "
                             "(the plain-text dump has no anchor texts)",
        "context_definition": (f"{CONTEXT_CHARS} characters each side of the first case-insensitive whole-word "
                               "mention of the target title (or of the title without its parenthetical / "
                               "after-comma part) in the source's cleaned text; empty when not mentioned"),
        "label_definition": "full hierarchical categories of categories.tsv, e.g. subject.Science.Biology",
        "topics": topics,
        "content_fingerprint": fingerprint,
        "content_fingerprint_ok": fingerprint == WIKISPEEDIA_FINGERPRINT,
        "loader_version": LOADER_VERSION,
        "input": lay.describe(),
    }
    b = CorpusBuilder(name="wikispeedia", keep_text=True, meta=meta)
    for i in _tqdm(progress, iterable=range(len(names)), desc="wikispeedia: tokenizing pages", unit="page"):
        b.add_page(titles[i], texts[i] or "", domain=DOMAIN, labels=labels[i])
    variants = [_mention_variants(t) for t in titles]
    mentioned = 0
    low_src, low = -1, ""  # lower-cased text of the current source (links.tsv is grouped by source)
    for s, t in _tqdm(progress, iterable=links, desc="wikispeedia: tokenizing links", unit="link"):
        text = texts[s] or ""
        if s != low_src:
            low_src, low = s, text.lower()
            if len(low) != len(text):  # rare: lower() changed the length; keep such characters as they are
                low = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
        hit = find_mention(low, variants[t])
        context = ""
        if hit is not None:
            context = _window(text, hit[0], hit[1])
            mentioned += 1
        b.add_link(s, t, anchor=titles[t].replace("_", " "), context=context)
    b.meta["links_with_context"] = mentioned
    return b.build()


def _cache_key(lay: _Layout) -> str:
    from gym_crawl.tokenize import STOPWORDS, TOKEN_RE

    h = hashlib.sha256()
    h.update(json.dumps({"loader": LOADER_VERSION, "format": FORMAT_VERSION, "context": CONTEXT_CHARS,
                         "token_re": TOKEN_RE.pattern, "stopwords": sorted(STOPWORDS)}).encode())
    for p in lay.inputs():
        st = p.stat()
        h.update(f"{p.name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def load_wikispeedia(path: str | os.PathLike | None = None, *, cache: bool = True, progress: bool = True,
                     cache_dir: str | os.PathLike | None = None) -> Corpus:
    """Load Wikispeedia as a :class:`Corpus` (see the module docstring for layouts and content).

    Args:
        path: a Wikispeedia folder (or a file inside it) in any supported
            layout; ``None`` downloads SNAP's archives into the cache first.
        cache: reuse / store the compiled corpus under
            ``<cache root>/compiled/wikispeedia-<key>`` (memory-mapped on reuse).
            With ``cache=False`` the corpus is compiled in memory and not saved.
        progress: tqdm progress bars (on a terminal) while downloading and compiling.
        cache_dir: cache root; default :func:`gym_crawl.corpus.cache.data_dir`
            (``GYM_CRAWL_DATA`` or ``~/.cache/gym_crawl``).

    Raises:
        FileNotFoundError: ``path`` does not exist.
        CorpusFormatError: a required file is missing, truncated or inconsistent;
            the message names the file (and line number and value for TSV rows).
    """
    if path is None:
        from gym_crawl.corpus.download import download

        dest = Path(cache_dir) / "wikispeedia" if cache_dir is not None else None
        path = download("wikispeedia", dest, progress=progress)
    lay = _Layout.resolve(Path(path).expanduser())
    if not cache:
        return _compile(lay, progress)
    root = Path(cache_dir) if cache_dir is not None else data_dir()
    out = root / "compiled" / f"wikispeedia-{_cache_key(lay)}"
    cached = open_cached(out, what="Wikispeedia")
    if cached is not None:
        return cached
    return store_cached(_compile(lay, progress), out, what="Wikispeedia")
