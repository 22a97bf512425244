"""MediaWiki XML dumps (``pages-articles[-multistream].xml[.bz2]``) → :class:`Corpus`.

:func:`load_mediawiki_dump` streams a dump, keeps the main-namespace articles
(``namespaces`` to change that), renders their wikitext to plain text
(:mod:`gym_crawl.corpus.wikitext`) and builds the link graph:

* **pages**: non-redirect pages of the requested namespaces with non-empty
  wikitext. A title seen twice keeps its first page. Pages of other or
  undeclared namespaces, empty pages and duplicates are skipped, counted and
  logged.
* **links**: ``[[Target|anchor]]`` links of the page text (not those inside
  templates, tables, references, image captions) whose target, after
  following redirects (chains too; loops are detected and dropped), is a kept
  page. Each link keeps its anchor text and a surrounding-text window of 150
  characters each side of the anchor in the rendered text. Red links (target
  not in the dump), self links and repeated links of a page (after redirect
  resolution; the first occurrence is kept) are dropped and counted.
* **labels**: ``category.<Name>`` for each ``[[Category:Name]]``, and
  ``disambiguation`` for disambiguation pages (``__DISAMBIG__`` in the text, a
  template that emits ``__DISAMBIG__`` — found in the dump's template
  namespace — or one of :data:`~gym_crawl.corpus.wikitext.DISAMBIGUATION_TEMPLATES`).
* **domain**: one site, the host of the dump's ``<siteinfo><base>`` URL (e.g.
  ``simple.wikipedia.org``).

Every skip and drop is counted in ``corpus.meta["compile_stats"]`` (a few
examples of each in ``meta["compile_examples"]``; skips are also logged):

=============================  ==========================================================
``pages_seen`` / ``ns_<k>``    ``<page>`` elements read, in total / per namespace
``pages``                      pages kept (= ``corpus.n_pages``)
``redirect_pages``             redirects in the kept namespaces; of them
                               ``redirects_resolved`` (``double_redirects`` needed ≥ 2
                               hops), ``broken_redirects`` (end at a missing title),
                               ``redirect_loops``
``empty_text``                 pages without wikitext (skipped); ``empty_rendered_text``:
                               kept pages whose rendering is empty (e.g. only a table)
``duplicate_titles``           later pages (or redirects) reusing a title (skipped)
``unknown_namespace``          pages of a namespace ``<siteinfo>`` does not declare (skipped)
``skipped_other_namespace``    pages of declared namespaces not asked for
``links_parsed``               internal links found in the rendered text of kept pages; each
                               ends in exactly one of: ``links_resolved`` (= ``n_links``,
                               ``links_via_redirect`` of them through a redirect),
                               ``red_links``, ``self_links``, ``duplicate_links``,
                               ``links_to_broken_redirects``, ``links_to_redirect_loops``
``links_category`` / ``_file``  category, file/image, interwiki/interlanguage links and
``_interwiki`` / ``_other_namespace``  links into other namespaces (not graph links)
``disambiguation_pages``       pages labelled ``disambiguation``
=============================  ==========================================================

**XML reader: ``xml.etree.ElementTree.XMLPullParser``, not ``mwxml``.**
It is faster on the XML work itself (the comparison is in ``benchmarks/RESULTS.md``), and it is
fed bytes, so the same code parses a whole file or any byte range of a
multistream dump (a run of bz2 streams holding ``<page>`` elements but no
``<mediawiki>`` header, which ``mwxml`` cannot open), and its errors carry the
line/column that :class:`CorpusFormatError` reports. Memory stays flat: each
``<page>`` element is dropped once processed.

**Wikitext: own scanner, not ``mwparserfromhell``.** The scanner is several times
faster than ``mwparserfromhell.parse(t).strip_code()``, whose output also keeps
reference text and leaves ``{{``/``<ref``/``{|`` in some articles (figures in
``benchmarks/RESULTS.md``); and the scanner gives each link's anchor span in the
rendered text, which the surrounding-text window needs.

**Parallel parsing.** When the multistream index
(``…-multistream-index.txt.bz2``, lines ``offset:page_id:title``) lies beside
the dump, the file is cut at stream boundaries into chunks parsed by a
``multiprocessing`` pool; chunk results are merged in file order, so the
corpus is identical to a serial parse.

**Cache.** Compiled corpora are saved (atomically, see :meth:`Corpus.save`)
under ``data_dir()/"compiled"/f"{stem}-{sha256(source)[:16]}-v{LOADER_VERSION}"``
and re-opened memory-mapped; non-default options add a suffix to that name.
**Modules.** The pipeline is three stages, one module each:
:mod:`~gym_crawl.corpus.mediawiki_parse` (bytes → per-chunk pages and links),
:mod:`~gym_crawl.corpus.mediawiki_assemble` (chunks → :class:`Corpus`) and
:mod:`~gym_crawl.corpus.mediawiki_download` (the Simple English Wikipedia dump); this module
compiles, caches and loads, and re-exports their public names.
"""
from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gym_crawl._io import sha256_file
from gym_crawl.corpus.cache import open_cached, store_cached
from gym_crawl.corpus.core import Corpus
from gym_crawl.corpus.mediawiki_assemble import assemble_corpus
from gym_crawl.corpus.mediawiki_download import SIMPLEWIKI_BASE, download_simplewiki, parse_checksums, simplewiki_urls
from gym_crawl.corpus.mediawiki_parse import (
    ChunkAccumulator,
    ParseJob,
    SiteInfo,
    find_multistream_index,
    is_bz2,
    parse_job,
    plan_chunks,
    read_multistream_index,
    read_siteinfo,
)

__all__ = [
    "load_mediawiki_dump", "compile_mediawiki_dump", "read_siteinfo", "read_multistream_index",
    "find_multistream_index", "compiled_cache_dir", "ChunkAccumulator", "assemble_corpus", "SiteInfo",
    "load_simplewiki", "download_simplewiki", "simplewiki_urls", "parse_checksums", "LOADER_VERSION",
    "SIMPLEWIKI_BASE", "HAN2018_TOPIC_PAGES",
]

logger = logging.getLogger(__name__)

LOADER_VERSION = 1
"""Bump when the compiled output of a dump changes; old cache entries are then ignored."""

HAN2018_TOPIC_PAGES: dict[str, str] = {
    "cancer": "Cancer", "fiction": "Fiction", "olympics": "Olympic Games", "sports": "Sport",
    "cameras": "Camera", "geology": "Geology", "poetry": "Poetry",
}
"""Han et al. 2018's Simple English Wikipedia topics and their main pages (the default seeds).
A compiled dump that has these pages lists them in ``meta["topics"]`` (first = the env's default topic)."""


# --------------------------------------------------------------- compiling

def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".bz2", ".xml"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


def compiled_cache_dir(path: str | os.PathLike, *, namespaces: Sequence[int] = (0,), keep_text: bool = True,
                       sha256: str | None = None) -> Path:
    """Cache folder of a compiled dump: ``data_dir()/compiled/{stem}-{sha256[:16]}-v{LOADER_VERSION}``.

    Non-default options append ``-ns<a>.<b>`` (namespaces) / ``-notext``.
    """
    from gym_crawl.corpus.cache import data_dir

    path = Path(path)
    digest = sha256 or sha256_file(path)
    name = f"{_stem(path)}-{digest[:16]}-v{LOADER_VERSION}"
    if tuple(namespaces) != (0,):
        name += "-ns" + ".".join(str(n) for n in sorted(set(namespaces)))
    if not keep_text:
        name += "-notext"
    return data_dir() / "compiled" / name


def _progress_bar(enabled: bool, total: int, desc: str) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=desc, leave=False)


def _auto_workers(path: Path, index: Path | None, workers: int | None) -> int:
    if workers is not None:
        return max(1, int(workers))
    if index is None or path.stat().st_size < (32 << 20):
        return 1
    return max(1, os.cpu_count() or 1)


def _parse_parallel(path: Path, index: Path, workers: int, base: ParseJob, progress: bool
                    ) -> tuple[list[ChunkAccumulator], int]:
    """Parse a multistream dump with a process pool; chunks come back in file order."""
    import multiprocessing as mp

    offsets = read_multistream_index(index)
    info = read_siteinfo(path, end=int(offsets[0])) if len(offsets) else SiteInfo()
    ranges = plan_chunks(path, offsets, n_chunks=max(workers * 4, 1))
    jobs = [ParseJob(base.path, a, b, True, info, base.namespaces, base.keep_text) for a, b in ranges]
    bar = _progress_bar(progress, ranges[-1][1] - ranges[0][0], f"{path.name} ({workers} workers)")
    out: list[ChunkAccumulator] = []
    try:
        with mp.get_context().Pool(processes=min(workers, len(jobs))) as pool:
            for job, acc in zip(jobs, pool.imap(parse_job, jobs)):
                acc.siteinfo = info
                out.append(acc)
                if bar is not None:
                    bar.update(job.end - job.start)
    finally:
        if bar is not None:
            bar.close()
    return out, len(jobs)


def _parse_serial(path: Path, base: ParseJob, progress: bool) -> list[ChunkAccumulator]:
    bar = _progress_bar(progress, path.stat().st_size, path.name)
    done = [0]

    def tick(pos: int) -> None:
        bar.update(pos - done[0])
        done[0] = pos

    try:
        return [parse_job(base, tick if bar is not None else None)]
    finally:
        if bar is not None:
            bar.close()


def compile_mediawiki_dump(path: str | os.PathLike, *, namespaces: Sequence[int] = (0,), progress: bool = True,
                           workers: int | None = None, keep_text: bool = True, index: str | os.PathLike | None = None,
                           sha256: str | None = None) -> Corpus:
    """Parse a dump into an in-memory :class:`Corpus` (no cache). See :func:`load_mediawiki_dump`."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such MediaWiki dump")
    t0 = time.perf_counter()
    namespaces = tuple(sorted(set(int(n) for n in namespaces)))
    idx = Path(index) if index is not None else find_multistream_index(path)
    n_workers = _auto_workers(path, idx, workers)
    base = ParseJob(str(path), 0, path.stat().st_size, False, None, namespaces, keep_text)
    if n_workers > 1 and idx is not None and is_bz2(path):
        chunks, n_chunks = _parse_parallel(path, idx, n_workers, base, progress)
    else:
        if n_workers > 1:
            logger.info("%s: no multistream index beside the dump; parsing serially", path)
        n_workers, chunks = 1, _parse_serial(path, base, progress)
        n_chunks = 1
    info = chunks[0].siteinfo or SiteInfo()
    host = info.host
    meta = {
        "source": path.name, "source_sha256": sha256 or sha256_file(path),
        "loader": "gym_crawl.corpus.mediawiki", "loader_version": LOADER_VERSION,
        "siteinfo": info.as_meta(), "namespaces": list(namespaces),
        "domain_definition": f"single site: every page belongs to {host}, the host of the dump's "
                             f"<siteinfo><base> URL",
    }
    corpus = assemble_corpus(chunks, domain=host, name=info.dbname or _stem(path), meta=meta, keep_text=keep_text)
    topics = {k: {"seeds": [t]} for k, t in HAN2018_TOPIC_PAGES.items() if corpus.titles.get(t) >= 0}
    if topics:
        corpus.meta["topics"] = topics
    corpus.meta["compile_info"] = {"workers": n_workers, "chunks": n_chunks,
                                   "seconds": round(time.perf_counter() - t0, 3)}
    _log_stats(path, corpus.meta["compile_stats"], corpus.meta["compile_examples"])
    return corpus


def _log_stats(path: Path, stats: dict[str, int], examples: dict[str, list[str]]) -> None:
    logger.info("%s: %d pages, %d links resolved, %d red links, %d redirect pages", path.name,
                stats.get("pages", 0), stats.get("links_resolved", 0), stats.get("red_links", 0),
                stats.get("redirect_pages", 0))
    for what in ("unknown_namespace", "duplicate_titles", "empty_text", "redirect_loops"):
        if stats.get(what):
            logger.warning("%s: skipped %d (%s), e.g. %s", path.name, stats[what], what.replace("_", " "),
                           ", ".join(examples.get(what, [])[:3]))


def load_mediawiki_dump(path: str | os.PathLike, *, namespaces: Sequence[int] = (0,), cache: bool = True,
                        progress: bool = True, workers: int | None = None, keep_text: bool = True,
                        index: str | os.PathLike | None = None) -> Corpus:
    """Load a MediaWiki XML dump (``.xml`` or ``.xml.bz2``, single or multistream) as a :class:`Corpus`.

    Args:
        path: the dump file.
        namespaces: namespaces whose pages become corpus pages (default: articles only).
        cache: reuse / write the compiled corpus under ``data_dir()/"compiled"`` (memory-mapped on load).
        progress: tqdm progress bar over the compressed bytes.
        workers: processes for parsing a multistream dump (needs its index file, found beside
            the dump or given as ``index``). ``None``: all CPUs when the index exists and the
            dump is ≥ 32 MiB, else serial.
        keep_text: keep each page's rendered plain text in ``corpus.texts``.

    Raises:
        CorpusFormatError: truncated/corrupt bz2 or malformed XML (message names the file,
            the byte offset or line/column, and the last page read).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such MediaWiki dump")
    if not cache:
        return compile_mediawiki_dump(path, namespaces=namespaces, progress=progress, workers=workers,
                                      keep_text=keep_text, index=index)
    digest = sha256_file(path)
    cdir = compiled_cache_dir(path, namespaces=namespaces, keep_text=keep_text, sha256=digest)
    cached = open_cached(cdir, what=f"MediaWiki dump {path.name}")
    if cached is not None:
        return cached
    corpus = compile_mediawiki_dump(path, namespaces=namespaces, progress=progress, workers=workers,
                                    keep_text=keep_text, index=index, sha256=digest)
    return store_cached(corpus, cdir, what=f"MediaWiki dump {path.name}")


def load_simplewiki(date: str = "latest", **kw: Any) -> Corpus:
    """The Simple English Wikipedia (the papers' corpus): download (verified) if needed, then compile/cache.

    ``kw`` go to :func:`load_mediawiki_dump` (``dest_dir`` to :func:`download_simplewiki`). A local copy
    registered with ``gym-crawl download simplewiki --from PATH`` (or ``$GYM_CRAWL_SIMPLEWIKI``) is used instead
    of the latest dump, with no network access.
    """
    dest_dir = kw.pop("dest_dir", None)
    if dest_dir is None and date == "latest":
        from gym_crawl.corpus.download import local_copy

        mine = local_copy("simplewiki")
        if mine is not None:
            from gym_crawl.corpus import load_corpus

            return load_corpus(mine, **kw)
    files = download_simplewiki(date, dest_dir, progress=kw.get("progress", True))
    return load_mediawiki_dump(files["dump"], index=files["index"], **kw)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m gym_crawl.corpus.mediawiki download|compile …``."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m gym_crawl.corpus.mediawiki")
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("download", help="download the Simple English Wikipedia dump (+ index), SHA-1 verified")
    d.add_argument("--date", default="latest")
    d.add_argument("--dest", default=None)
    c = sub.add_parser("compile", help="compile a dump into the corpus cache")
    c.add_argument("dump")
    c.add_argument("--workers", type=int, default=None)
    c.add_argument("--no-text", action="store_true")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.cmd == "download":
        for k, p in download_simplewiki(args.date, args.dest).items():
            print(f"{k}: {p}")
    else:
        corpus = load_mediawiki_dump(args.dump, workers=args.workers, keep_text=not args.no_text)
        print(corpus.path)
        for k, v in corpus.meta["compile_stats"].items():
            print(f"  {k}: {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
