"""The thesis' dump layout: ``xml/<title>.xml`` + ``index.txt`` + ``links.txt``.

What the thesis (Pertejo 2021, §3.2 "Sistema de representación de páginas",
§4.1 "Detalles de los conjuntos de datos", Table 4.1, Appendix A.1) says, and
what this module does:

* **index.txt** — "each line has 2 fields: the numeric index and the page
  title, separated by a tab. These indices are all in the range [0, N]".
  Written as ``<id>\\t<title>\\n`` with ids ``0 … N-1`` in corpus page order.
* **links.txt** — "each line has 2 indices separated by a tab: first the
  source page, then the target page. Every page in these links is a page of
  our dump". Written as ``<src>\\t<dst>\\n``, grouped by source in corpus order.
* **xml/** — "each page in a separate file named ``<título>.xml``", an XML
  object with 3 fields::

      <page>
        <id>0</id>
        <title>Pagina de ejemplo</title>
        <text>…</text>
      </page>

  (the appendix's code instead names the files ``<id>.xml``; the loader reads
  every ``*.xml`` in ``xml/`` and keys pages by their ``<id>``, so it accepts
  both). Titles are made file-name safe by %-escaping ``%``, ``/``, NUL and a
  leading ``.``; a name longer than 250 bytes, or one that collides with an
  existing file (case-insensitive file systems), becomes a truncated title plus
  a hash — decisions of ours, the thesis is silent.
* **normalized** (``norm-seng-dump``) — "self links are removed, links whose
  source or target is not in the dump are left out, etc.". Here: self links
  removed and each (source, target) pair written once (first occurrence kept).
  A :class:`Corpus` never holds links to pages outside it, so the third rule is
  automatic. ``normalized=False`` (``seng-dump``, "only the format
  preprocessed") writes every corpus link as it is, repeats and self links included.
* **partition** (``norm-seng-dump(0.1)``) — "a random 10 % partition: we take
  10 % of the pages at random and keep the links leaving them, making sure
  again that every link has source and target in the new dump". Here:
  ``round(partition × N)`` pages drawn without replacement with
  ``numpy.random.default_rng(seed)``, renumbered ``0 … k-1`` in corpus order,
  keeping links whose two ends were drawn. (The thesis' 32,325 of 323,198
  pages is 10.002 %, i.e. it probably drew each page with probability 0.1; we
  draw an exact count so that the size is predictable — our decision.)
  Partitioning and ``normalized`` combine as in the thesis' ``norm-seng-dump(0.1)``.
* **Text.** The thesis stores the raw wikitext of each page. A corpus has the
  rendered plain text when its loader kept it (``corpus.texts``); otherwise the
  page's bag of words is written (each word repeated by its count, in
  vocabulary order) — lossy but tokenizes back to the same bag.

Beyond the thesis (ignored by its code): ``labels.txt`` (``<id>\\t<label>``
lines: categories, disambiguation) and ``layout.json`` (domain, options, counts
and the thesis' Table 4.1 statistics — its "links per page" is links divided
by the number of pages *with out-links*, as ``DumpLinks.get_avg_links_per_page``
computes it).

**Loading** (:func:`load_thesis_layout`) follows the thesis' ``WebDump``: self
links and links naming ids missing from ``index.txt`` are dropped (counted in
``meta["compile_stats"]``); repeated links are kept. The layout has no anchor
texts, so, like the thesis' ``DumpFetcher.get_link`` (which takes the text
around the occurrences of the target title in the source page), each link's
anchor is the first occurrence of the target title in the source text (case
insensitive; for wikitext, the first ``[[link]]`` to that target, rendered
with :mod:`gym_crawl.corpus.wikitext`) and its context the 150 characters
around it; with no occurrence the anchor is the target title and the context
empty. In a layout without our ``layout.json`` (the thesis' own), texts that
contain wikitext (``[[``, ``{{``, bold quotes) are rendered to plain text first.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import numpy as np

from gym_crawl._io import writing_dir
from gym_crawl.corpus.core import Corpus, CorpusFormatError

__all__ = ["write_thesis_layout", "load_thesis_layout", "thesis_filename", "LAYOUT_FORMAT"]

LAYOUT_FORMAT = "gym_crawl.thesis_layout/1"
_MAX_NAME_BYTES = 250
_WIKITEXT_HINT = re.compile(r"\[\[|\{\{|'''")


# ------------------------------------------------------------------ writing

def _escape_name(title: str) -> str:
    name = title.replace("%", "%25").replace("/", "%2F").replace("\x00", "%00")
    return "%2E" + name[1:] if name.startswith(".") else name


def thesis_filename(title: str) -> str:
    """``<title>.xml`` made safe for a file system (see the module docstring)."""
    name = _escape_name(title)
    if len(name.encode("utf-8")) > _MAX_NAME_BYTES:
        return _hashed_filename(title)
    return name + ".xml"


def _hashed_filename(title: str) -> str:
    """A short unique name: the first 60 characters of the escaped title + a hash of the title."""
    digest = hashlib.sha1(title.encode("utf-8")).hexdigest()[:16]
    return f"{_escape_name(title)[:60]}~{digest}.xml"


def _page_text(corpus: Corpus, i: int, vocab: list[str] | None) -> str:
    if corpus.texts is not None:
        return corpus.texts[i]
    assert vocab is not None
    a, b = int(corpus.text_ptr[i]), int(corpus.text_ptr[i + 1])
    return " ".join(" ".join([vocab[int(t)]] * int(c)) for t, c in zip(corpus.text_terms[a:b], corpus.text_counts[a:b]))


def _select(corpus: Corpus, normalized: bool, partition: float | None, seed: int
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Chosen page ids (sorted) and the written links as new ``(src, dst)`` ids."""
    n = corpus.n_pages
    if partition is None:
        chosen = np.arange(n)
    else:
        if not 0 < partition <= 1:
            raise ValueError(f"partition must be a fraction in (0, 1], got {partition}")
        k = int(round(partition * n))
        chosen = np.sort(np.random.default_rng(seed).choice(n, size=k, replace=False))
    new_id = np.full(n, -1, dtype=np.int64)
    new_id[chosen] = np.arange(len(chosen))
    src, dst = new_id[corpus.link_src()], new_id[np.asarray(corpus.link_dst)]
    keep = (src >= 0) & (dst >= 0)
    src, dst = src[keep], dst[keep]
    if normalized:
        ok = src != dst
        src, dst = src[ok], dst[ok]
        _, first = np.unique(src * max(len(chosen), 1) + dst, return_index=True)
        first = np.sort(first)
        src, dst = src[first], dst[first]
    return chosen, src, dst


def _thesis_stats(n_pages: int, src: np.ndarray) -> dict[str, Any]:
    with_out = int(len(np.unique(src)))
    return {"pages": n_pages, "links": int(len(src)), "pages_with_outlinks": with_out,
            "links_per_page": round(len(src) / with_out, 2) if with_out else 0.0,
            "links_per_page_all": round(len(src) / n_pages, 2) if n_pages else 0.0}


def _write_page(xml_dir: Path, i: int, title: str, text: str) -> str:
    body = (f"<page>\n  <id>{i}</id>\n  <title>{escape(title)}</title>\n"
            f"  <text>{escape(_xml_safe(text))}</text>\n</page>\n").encode()
    for fname in (thesis_filename(title), _hashed_filename(title)):
        try:
            with open(xml_dir / fname, "xb") as f:
                f.write(body)
            return fname
        except FileExistsError:
            continue
    raise CorpusFormatError(f"cannot write page {title!r}: file names {thesis_filename(title)!r} and its hashed "
                            f"variant both exist (duplicate title?)")


_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml_safe(s: str) -> str:
    """Drop characters XML 1.0 cannot carry."""
    return _XML_BAD.sub("", s)


def write_thesis_layout(corpus: Corpus, path: str | os.PathLike, *, normalized: bool = False,
                        partition: float | None = None, seed: int = 0) -> Path:
    """Write ``corpus`` in the thesis' layout at ``path`` (created or replaced atomically).

    Args:
        normalized: the thesis' ``norm-seng-dump``: no self links, each link once.
        partition: fraction of pages to keep at random (``0.1`` = the thesis' ``norm-seng-dump(0.1)``);
            only links between kept pages are written.
        seed: seed of the partition draw.

    Returns the layout folder. See the module docstring for the exact formats.
    """
    path = Path(path)
    chosen, src, dst = _select(corpus, normalized, partition, seed)
    titles = [corpus.titles[int(i)] for i in chosen]
    for t in titles:
        if "\t" in t or "\n" in t:
            raise ValueError(f"title {t!r} contains a tab or newline; index.txt cannot hold it")
    path.parent.mkdir(parents=True, exist_ok=True)
    with writing_dir(path) as tmp:
        xml_dir = tmp / "xml"
        xml_dir.mkdir()
        vocab = corpus.vocab.tolist() if corpus.texts is None else None
        for new, (old, title) in enumerate(zip(chosen.tolist(), titles)):
            _write_page(xml_dir, new, title, _page_text(corpus, old, vocab))
        with open(tmp / "index.txt", "w", encoding="utf-8", newline="\n") as f:
            f.writelines(f"{i}\t{t}\n" for i, t in enumerate(titles))
        with open(tmp / "links.txt", "w", encoding="utf-8", newline="\n") as f:
            for a in range(0, len(src), 1 << 16):
                f.write("".join(f"{s}\t{d}\n" for s, d in zip(src[a:a + (1 << 16)].tolist(),
                                                               dst[a:a + (1 << 16)].tolist())))
        with open(tmp / "labels.txt", "w", encoding="utf-8", newline="\n") as f:
            for new, old in enumerate(chosen.tolist()):
                f.writelines(f"{new}\t{lab}\n" for lab in corpus.page_labels(old))
        domains = sorted({corpus.domains[int(corpus.page_domain[i])] for i in chosen.tolist()}) or ["local"]
        layout = {
            "format": LAYOUT_FORMAT, "source_corpus": corpus.name, "normalized": normalized,
            "partition": partition, "seed": seed if partition is not None else None,
            "domain": domains[0] if len(domains) == 1 else None, "domains": domains,
            "text": "rendered plain text" if corpus.texts is not None else "bag of words (no text kept)",
            "thesis_stats": _thesis_stats(len(chosen), src),
        }
        (tmp / "layout.json").write_text(json.dumps(layout, indent=2, ensure_ascii=False), encoding="utf-8")
    return path


# ------------------------------------------------------------------ loading

def _read_index(path: Path) -> tuple[np.ndarray, list[str]]:
    ids, titles = [], []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n").rstrip("\r")
            if not line:
                continue
            idx, sep, title = line.partition("\t")
            if not sep or not idx.strip().lstrip("-").isdigit():
                raise CorpusFormatError(f"{path}: line {lineno} is not '<id>\\t<title>': {line[:80]!r}")
            ids.append(int(idx))
            titles.append(title)
    arr = np.asarray(ids, dtype=np.int64)
    if len(np.unique(arr)) != len(arr):
        raise CorpusFormatError(f"{path}: repeated ids")
    if len(set(titles)) != len(titles):
        dup = next(t for t in titles if titles.count(t) > 1)
        raise CorpusFormatError(f"{path}: title {dup!r} appears twice (titles are the pages' URLs and must be unique)")
    return arr, titles


def _read_links(path: Path) -> np.ndarray:
    """``(m, 2)`` int64 array of ``src\\tdst`` lines."""
    rows: list[int] = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 2 or not all(p.lstrip("-").isdigit() for p in parts):
                raise CorpusFormatError(f"{path}: line {lineno} is not '<src>\\t<dst>': {line[:80]!r}")
            rows.append(int(parts[0]))
            rows.append(int(parts[1]))
    return np.asarray(rows, dtype=np.int64).reshape(-1, 2)


def _read_pages(xml_dir: Path) -> dict[int, tuple[str, str]]:
    """``id → (title, text)`` from every ``*.xml`` file of ``xml/``."""
    pages: dict[int, tuple[str, str]] = {}
    for fp in sorted(xml_dir.glob("*.xml")):
        try:
            root = ET.parse(fp).getroot()
        except ET.ParseError as e:
            raise CorpusFormatError(f"{fp}: malformed page XML ({e})") from None
        fields = {c.tag: (c.text or "") for c in root}
        try:
            pid = int(fields.get("id", "").strip())
        except ValueError:
            raise CorpusFormatError(f"{fp}: <id> missing or not an integer") from None
        pages[pid] = (fields.get("title", ""), fields.get("text", ""))
    return pages


def _positions(sorted_ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Row of each wanted id in ``sorted_ids``, -1 when absent."""
    if len(sorted_ids) == 0:
        return np.full(len(wanted), -1, dtype=np.int64)
    pos = np.clip(np.searchsorted(sorted_ids, wanted), 0, len(sorted_ids) - 1)
    return np.where(sorted_ids[pos] == wanted, pos, -1)


def _anchor_span(text: str, low: str, title: str) -> tuple[int, int]:
    """First case-insensitive occurrence of ``title`` in the text (``low`` = ``text.lower()``), or (-1, -1)."""
    t = title.lower()
    i = low.find(t) if t else -1
    if i < 0 and "_" in t:
        i = low.find(t.replace("_", " "))
    return (i, i + len(t)) if i >= 0 else (-1, -1)


def load_thesis_layout(path: str | os.PathLike, *, keep_text: bool = True, domain: str | None = None,
                       name: str | None = None) -> Corpus:
    """Read a thesis-layout folder (``xml/``, ``index.txt``, ``links.txt``) into a :class:`Corpus`.

    Also reads the appendix's ``links_n.txt`` when ``links.txt`` is absent, and
    our ``labels.txt`` / ``layout.json`` when present. ``domain`` defaults to
    ``layout.json``'s, else ``"local"``. See the module docstring for anchors,
    contexts and which links are dropped.
    """
    from gym_crawl.corpus.mediawiki_assemble import assemble_corpus
    from gym_crawl.corpus.mediawiki_parse import ChunkAccumulator
    from gym_crawl.corpus.wikitext import parse_wikitext

    path = Path(path)
    index = path / "index.txt"
    links_file = path / "links.txt" if (path / "links.txt").exists() else path / "links_n.txt"
    for need in (index, links_file, path / "xml"):
        if not need.exists():
            raise CorpusFormatError(f"{path}: not a thesis layout (missing {need.name})")
    layout: dict[str, Any] = {}
    if (path / "layout.json").is_file():
        layout = json.loads((path / "layout.json").read_text(encoding="utf-8"))
    ids, titles = _read_index(index)
    order = np.argsort(ids, kind="stable")
    ids, titles = ids[order], [titles[i] for i in order]
    pos_of = {int(i): k for k, i in enumerate(ids)}
    pages = _read_pages(path / "xml")
    labels: dict[int, list[str]] = {}
    if (path / "labels.txt").is_file():
        for line in (path / "labels.txt").read_text(encoding="utf-8").splitlines():
            i, sep, lab = line.partition("\t")
            if sep:
                labels.setdefault(int(i), []).append(lab)
    links = _read_links(links_file)
    acc = ChunkAccumulator(keep_text=keep_text)
    src_pos, dst_pos = _positions(ids, links[:, 0]), _positions(ids, links[:, 1])
    known = (src_pos >= 0) & (dst_pos >= 0)
    acc.stats["links_in_file"] = len(links)
    acc.stats["links_unknown_page"] = int((~known).sum())
    src_pos, dst_pos = src_pos[known], dst_pos[known]
    o = np.argsort(src_pos, kind="stable")
    src_pos, dst_pos = src_pos[o], dst_pos[o]
    bounds = np.searchsorted(src_pos, np.arange(len(titles) + 1))
    missing = found = 0
    wikitext = "auto" if not layout else "no"  # our own layouts hold rendered text
    for k, (pid, title) in enumerate(zip(ids.tolist(), titles)):
        xml_title, text = pages.get(pid, (title, ""))
        if pid not in pages:
            missing += 1
        if xml_title and xml_title != title:
            raise CorpusFormatError(f"{path}: page id {pid} is {title!r} in index.txt "
                                    f"but {xml_title!r} in its xml file")
        spans: dict[str, tuple[int, int]] = {}
        if wikitext == "auto" and _WIKITEXT_HINT.search(text):
            parsed = parse_wikitext(text)
            text = parsed.text
            for target, s, e in parsed.links:
                spans.setdefault(target.lower(), (s, e))
        low = text.lower()
        out = []
        for d in dst_pos[bounds[k]:bounds[k + 1]].tolist():
            t = titles[d]
            span = spans.get(t.lower()) or _anchor_span(text, low, t)
            found += span[0] >= 0
            out.append((t, *span))
        acc.add_article(title, text, out, categories=(), dedupe=False)
    acc.stats["pages_without_xml"] = missing
    acc.stats["links_anchor_found_in_text"] = found
    acc.stats["xml_files_not_in_index"] = len(set(pages) - set(pos_of))
    corpus = assemble_corpus([acc], domain=domain or layout.get("domain") or "local",
                             name=name or layout.get("source_corpus") or path.name,
                             meta={"source": str(path), "loader": "gym_crawl.corpus.thesis_layout",
                                   "thesis_layout": layout}, keep_text=keep_text, dedupe=False)
    if labels:
        _attach_labels(corpus, [labels.get(int(i), []) for i in ids])
        corpus.meta["compile_stats"]["disambiguation_pages"] = sum(
            "disambiguation" in ls for ls in labels.values())
    return corpus


def _attach_labels(corpus: Corpus, page_labels: list[list[str]]) -> None:
    """Replace the corpus' labels by ``page_labels`` (from ``labels.txt``)."""
    from gym_crawl.corpus.core import StringTable

    names = sorted({lab for ls in page_labels for lab in ls})
    lid = {lab: i for i, lab in enumerate(names)}
    rows = [sorted({lid[lab] for lab in ls}) for ls in page_labels]
    ptr = np.zeros(len(rows) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(r) for r in rows]) if rows else []
    corpus.label_ptr = ptr
    corpus.label_ids = np.fromiter((i for r in rows for i in r), dtype=np.int32, count=int(ptr[-1]))
    corpus.labels = StringTable.from_strings(names)
    corpus.validate()
