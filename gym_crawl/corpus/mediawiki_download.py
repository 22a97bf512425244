"""MediaWiki dumps, stage 3 of 3: **download** — the Simple English Wikipedia dump, SHA-1 verified.

:func:`download_simplewiki` fetches the published ``sha1sums.txt`` of a dump date, then the
multistream dump and its index, each checked against its listed SHA-1 (resumable, via
:func:`gym_crawl.corpus.download.fetch`). :func:`gym_crawl.corpus.mediawiki.load_simplewiki` then
compiles the dump (stages 1 and 2).
"""
from __future__ import annotations

import logging
import os
import re
from pathlib import Path

__all__ = ["SIMPLEWIKI_BASE", "download_simplewiki", "parse_checksums", "simplewiki_urls"]

logger = logging.getLogger("gym_crawl.corpus.mediawiki")

SIMPLEWIKI_BASE = "https://dumps.wikimedia.org/simplewiki"


def simplewiki_urls(date: str = "latest") -> dict[str, str]:
    """URLs of the Simple English Wikipedia dump files for ``date`` (``YYYYMMDD`` or ``latest``).

    Keys: ``dump``, ``index``, ``sha1sums``.
    """
    if date != "latest" and not re.fullmatch(r"\d{8}", date):
        raise ValueError(f"simplewiki dump date must be 'latest' or YYYYMMDD, got {date!r}")
    d = f"{SIMPLEWIKI_BASE}/{date}/simplewiki-{date}-"
    return {"dump": d + "pages-articles-multistream.xml.bz2",
            "index": d + "pages-articles-multistream-index.txt.bz2",
            "sha1sums": d + "sha1sums.txt"}


def parse_checksums(text: str, filename: str) -> str:
    """The hex digest for ``filename`` in a ``<digest>  <filename>`` checksum listing
    (``simplewiki-<date>-sha1sums.txt``).

    A ``…-latest-…`` name also matches the dated file listed (the ``latest/``
    folder's checksum file names the dated files). Raises ``KeyError`` naming
    the file when it is not listed.
    """
    want_suffix = None
    m = re.match(r"^(.*?)-latest-(.+)$", filename)
    if m:
        want_suffix = (m.group(1), m.group(2))
    for line in text.splitlines():
        parts = line.strip().split()
        if len(parts) != 2:
            continue
        digest, name = parts[0].lower(), parts[1].lstrip("*")
        if not re.fullmatch(r"[0-9a-f]{32,128}", digest):
            continue
        if name == filename:
            return digest
        if want_suffix and re.fullmatch(re.escape(want_suffix[0]) + r"-\d{8}-" + re.escape(want_suffix[1]), name):
            return digest
    raise KeyError(f"{filename} is not listed in the checksum file")


def _fetch_checksums(url: str, dest: Path, *, refresh: bool, progress: bool) -> Path:
    """Fetch a checksum listing into ``dest``. A dated listing never changes, so a local copy
    is kept; ``refresh`` (``latest``) re-reads it, falling back to the local copy when offline."""
    from gym_crawl.corpus.download import fetch

    path = dest / url.rsplit("/", 1)[1]
    if not refresh or not path.exists():
        return Path(fetch(url, path, progress=progress))
    new = path.with_name(path.name + ".new")
    new.unlink(missing_ok=True)
    try:
        fetch(url, new, progress=progress)
    except OSError as e:  # urllib.error.URLError is an OSError
        logger.warning("could not refresh %s (%s); using the local copy %s", url, e, path)
        return path
    os.replace(new, path)
    return path


def download_simplewiki(date: str = "latest", dest_dir: str | os.PathLike | None = None, *,
                        progress: bool = True) -> dict[str, Path]:
    """Download the Simple English Wikipedia multistream dump + index for ``date``, verified by SHA-1.

    The dump's published ``simplewiki-<date>-sha1sums.txt`` is fetched first and
    the line for each file gives the ``sha1`` checked by the download.
    Returns ``{"dump": path, "index": path, "sha1sums": path}``. ``dest_dir``
    defaults to ``data_dir()/"simplewiki"/<date>``. A file that cannot be fetched raises
    :class:`~gym_crawl.corpus.download.DownloadError`: one line naming the URL and saying that a local
    dump path works instead.
    """
    import urllib.error

    from gym_crawl.corpus.download import DownloadError, error_reason

    try:
        return _download_simplewiki(date, dest_dir, progress)
    except DownloadError as e:
        raise e.with_hint(_OFFLINE_HINT) from None
    except urllib.error.HTTPError as e:
        raise DownloadError(e.url or SIMPLEWIKI_BASE, error_reason(e), _OFFLINE_HINT) from None


_OFFLINE_HINT = ("no network? a local dump works instead: register it once with `gym-crawl download simplewiki "
                 "--from /path/to/simplewiki-…-pages-articles-multistream.xml.bz2` (or set GYM_CRAWL_SIMPLEWIKI), "
                 "or pass its path (load_corpus(PATH) or --corpus PATH)")


def _download_simplewiki(date: str, dest_dir: str | os.PathLike | None, progress: bool) -> dict[str, Path]:
    from gym_crawl.corpus.cache import data_dir
    from gym_crawl.corpus.download import no_empty_folders_left

    dest = Path(dest_dir) if dest_dir is not None else data_dir() / "simplewiki" / date
    with no_empty_folders_left(dest):
        return _download_simplewiki_into(date, dest, progress)


def _download_simplewiki_into(date: str, dest: Path, progress: bool) -> dict[str, Path]:
    from gym_crawl.corpus.download import RemoteFile, fetch, register_dataset

    urls = simplewiki_urls(date)
    dest.mkdir(parents=True, exist_ok=True)
    sums_path = _fetch_checksums(urls["sha1sums"], dest, refresh=date == "latest", progress=progress)
    sums = sums_path.read_text(encoding="utf-8")
    out = {"sha1sums": sums_path}
    files = []
    for key in ("dump", "index"):
        fname = urls[key].rsplit("/", 1)[1]
        sha1 = parse_checksums(sums, fname)
        out[key] = Path(fetch(urls[key], dest / fname, sha1=sha1, progress=progress))
        files.append(RemoteFile(urls[key], fname, None, None))
    register_dataset(f"simplewiki-{date}", files)
    return out
