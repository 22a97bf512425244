"""Resumable, checksummed downloads and a small registry of downloadable datasets.

:func:`fetch` is the generic building block (any URL urllib can open)::

    fetch("https://example.org/big.xml.bz2", Path("big.xml.bz2"), sha256="…")

* the body is streamed to ``<dest>.part`` (1 MiB chunks, tqdm progress bar on a
  terminal);
* an existing ``.part`` is resumed with an HTTP ``Range`` request. A ``206``
  reply is appended, a ``200`` reply (server ignores ranges) restarts from
  byte 0, a ``416`` reply (range not satisfiable) means the ``.part`` is
  already complete (when its size equals the one the server reports) or stale
  (it is discarded and the download restarts);
* connection drops, timeouts and short bodies are retried (``retries`` times,
  each retry resuming from the ``.part``);
* the finished file is checked against every digest given (``sha256``, ``md5``,
  ``sha1``) and only then moved into place with an atomic :func:`os.replace`.
  A mismatch removes the bad file and raises :class:`ChecksumError`;
* a ``dest`` that already exists and matches the digests is not downloaded again
  (without any digest, an existing ``dest`` is trusted as is).

Two processes fetching the same ``dest`` at the same time are not coordinated
(they would share one ``.part``); the cache layer calls this from one process.

The registry (:data:`DATASETS`, :func:`register_dataset`, :func:`download`) maps
a dataset name to the files it needs plus an optional verification step run
after all files are present. ``"wikispeedia"`` is built in; other modules
register their own entries (e.g. the Simple English Wikipedia dump)::

    register_dataset("simplewiki", [RemoteFile(url, "simplewiki.xml.bz2", sha256=None, size=None)])
    folder = download("simplewiki")          # -> data_dir() / "simplewiki"

**Offline, with a local copy.** :func:`register_local_copy` (``gym-crawl download wikispeedia --from PATH``)
records a folder or archive you already have in ``<cache root>/local_copies.json``; the environment variable
``GYM_CRAWL_<NAME>`` (e.g. ``GYM_CRAWL_WIKISPEEDIA=/data/wikispeedia``) does the same for one process and
wins over the record. :func:`download` then returns that path without touching the network, so
``load_corpus("wikispeedia")``, ``--corpus wikispeedia`` and ``gym-crawl corpus info wikispeedia`` use it.
A download that fails leaves no empty folders behind (a partial ``.part`` file, kept for resuming, keeps its
folder).

**Why not pooch.** pooch fetches files with known hashes into a cache, which is half of this module. The
other half it does not do: SNAP publishes no digest for the Wikispeedia archives (they are checked by the
content fingerprint of their extracted articles, :func:`verify_wikispeedia`), and a multi-hundred-MB dump
must resume from its ``.part`` with HTTP ``Range`` after a dropped connection, which pooch restarts from
zero. A dependency for the remaining part (a cache folder and a digest check) would not pay for itself.
"""
from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import os
import re
import sys
import tarfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "fetch", "ChecksumError", "DownloadError", "RemoteFile", "DATASETS", "register_dataset", "download",
    "content_fingerprint", "WIKISPEEDIA_FINGERPRINT", "WIKISPEEDIA_TSV_SHA256", "verify_wikispeedia",
    "local_copy", "register_local_copy", "downloaded", "offline_hint", "error_reason", "no_empty_folders_left",
]

CHUNK = 1 << 20
RETRY_BACKOFF = 0.5
"""Seconds before the first retry; doubles for each further retry (capped at 10 s)."""
USER_AGENT = "gym_crawl/0.1 (dataset downloader; +https://pypi.org/project/gym-crawl/)"


class ChecksumError(ValueError):
    """A downloaded (or cached) file does not match its expected digest."""

    def __init__(self, path: str | os.PathLike, algorithm: str, expected: str, actual: str, note: str = ""):
        self.path = Path(path)
        self.algorithm = algorithm
        self.expected = expected
        self.actual = actual
        msg = f"{self.path}: {algorithm} mismatch: expected {expected}, got {actual}"
        super().__init__(msg + (f" ({note})" if note else ""))


class DownloadError(FileNotFoundError):
    """A file could not be downloaded (offline, host unreachable, HTTP error) after the retries.

    The message is one line naming the URL, the reason and what works instead (a local copy). It is a
    ``FileNotFoundError`` (so an ``OSError``): the data is neither here nor reachable. The partial
    ``.part`` file, if any, is kept so a later call resumes.
    """

    def __init__(self, url: str, reason: str, hint: str = ""):
        self.url = url
        self.reason = reason
        self.hint = hint
        super().__init__(f"cannot download {url}: {reason}" + (f"; {hint}" if hint else ""))

    def __str__(self) -> str:  # FileNotFoundError would prefix "[Errno None]"
        return str(self.args[0])

    def __reduce__(self) -> tuple:
        return (DownloadError, (self.url, self.reason, self.hint))

    def with_hint(self, hint: str) -> DownloadError:
        return DownloadError(self.url, self.reason, hint)


def error_reason(e: BaseException) -> str:
    """A one-line reason for a transfer error, for a :class:`DownloadError`: ``"HTTP 404 Not Found"`` for an
    ``HTTPError``, the wrapped socket error of a ``URLError`` (``"ConnectionRefusedError: ..."``), else the
    exception's type and message."""
    r = getattr(e, "reason", None)
    if isinstance(e, urllib.error.HTTPError):
        return f"HTTP {e.code} {e.reason}"
    if r is not None and not isinstance(r, str):
        return f"{type(r).__name__}: {r}"
    return f"{type(e).__name__}: {r if r is not None else e}"


# --------------------------------------------------------------------------- fetch
def _digests(path: Path, algos: dict[str, str]) -> dict[str, str]:
    hs = {a: hashlib.new(a) for a in algos}
    with open(path, "rb") as f:
        while True:
            b = f.read(CHUNK)
            if not b:
                break
            for h in hs.values():
                h.update(b)
    return {a: h.hexdigest() for a, h in hs.items()}


def _check(path: Path, algos: dict[str, str], size: int | None) -> tuple[str, str, str] | None:
    """First mismatch as ``(algorithm, expected, actual)``, or ``None`` when all match."""
    if size is not None:
        actual = path.stat().st_size
        if actual != size:
            return ("size", str(size), str(actual))
    got = _digests(path, algos)
    for a, want in algos.items():
        if got[a] != want:
            return (a, want, got[a])
    return None


class _Incomplete(Exception):
    """The server closed the connection before sending the whole body."""


def _total_from_content_range(value: str | None) -> int | None:
    m = re.match(r"\s*bytes\s+(?:\d+-\d+|\*)/(\d+)", value or "")
    return int(m.group(1)) if m else None


def _show_progress(progress: bool) -> bool:
    try:
        return progress and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _transfer(url: str, part: Path, *, timeout: float, progress: bool, label: str) -> None:
    """One HTTP attempt: resume/restart ``part`` and stream the body into it.

    Returns normally when the body is complete; raises :class:`_Incomplete`,
    ``OSError`` or ``urllib.error.URLError`` for the caller to retry.
    """
    offset = part.stat().st_size if part.exists() else 0
    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    req = urllib.request.Request(url, headers=headers)
    try:
        resp = urllib.request.urlopen(req, timeout=timeout)
    except urllib.error.HTTPError as e:
        if e.code == 416 and offset:
            total = _total_from_content_range(e.headers.get("Content-Range"))
            e.close()
            if total is not None and total == offset:
                return  # the .part already holds the whole file
            part.unlink()  # stale or oversized partial file: start again
            raise _Incomplete(f"range {offset}- not satisfiable; restarting from byte 0") from None
        raise
    with resp:
        status = getattr(resp, "status", None) or resp.getcode() or 200
        length = resp.headers.get("Content-Length")
        length = int(length) if length and length.isdigit() else None
        mode = "ab"
        if offset and status == 206:
            cr = resp.headers.get("Content-Range") or ""
            m = re.match(r"\s*bytes\s+(\d+)-", cr)
            if not m or int(m.group(1)) != offset:
                part.unlink()
                raise _Incomplete(f"server answered range {offset}- with {cr!r}; restarting from byte 0")
        elif offset:
            mode, offset = "wb", 0  # 200: the server ignored Range; the body is the whole file
        total = offset + length if length is not None else None
        bar = None
        if _show_progress(progress):
            from tqdm import tqdm

            bar = tqdm(total=total, initial=offset, unit="B", unit_scale=True, unit_divisor=1024,
                       desc=label, leave=False)
        received = 0
        try:
            with open(part, mode) as f:
                while True:
                    chunk = resp.read(CHUNK)
                    if not chunk:
                        break
                    f.write(chunk)
                    received += len(chunk)
                    if bar is not None:
                        bar.update(len(chunk))
        finally:
            if bar is not None:
                bar.close()
        if length is not None and received < length:
            raise _Incomplete(f"connection closed after {received} of {length} bytes")


def fetch(url: str, dest: str | os.PathLike, sha256: str | None = None, *, md5: str | None = None,
          sha1: str | None = None, size: int | None = None, progress: bool = True, timeout: float = 60,
          retries: int = 3) -> Path:
    """Download ``url`` to ``dest`` with resume, retries and checksum verification; return ``dest``.

    Args:
        url: anything ``urllib.request.urlopen`` accepts (``http(s)://``, ``file://``).
        dest: final file path; parent folders are created. The transfer goes to
            ``dest`` + ``".part"`` and is renamed atomically once verified.
        sha256, md5, sha1: expected hex digests (case-insensitive); every one given is checked.
        size: expected size in bytes (checked before the digests), optional.
        progress: show a tqdm bar (only when stderr is a terminal).
        timeout: socket timeout in seconds for connecting and for each read.
        retries: how many times a failed or interrupted transfer is retried
            (resuming from the partial file) before the error is raised.

    Raises:
        ChecksumError: the complete file does not match a digest or ``size``;
            the bad file is deleted (neither ``dest`` nor the ``.part`` remain).
        DownloadError: the transfer kept failing (offline, unreachable, cut) after ``retries``
            retries; one line naming the URL and the reason.
        urllib.error.HTTPError: an HTTP error that retrying cannot fix (4xx other than 408/429).
    """
    dest = Path(dest)
    algos = {a: d.lower() for a, d in (("sha256", sha256), ("md5", md5), ("sha1", sha1)) if d}
    if dest.exists():
        if not algos and size is None:
            return dest
        if _check(dest, algos, size) is None:
            return dest
        dest.unlink()  # present but wrong (stale or corrupted): download again
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_suffix(dest.suffix + ".part")
    attempt = 0
    while True:
        try:
            _transfer(url, part, timeout=timeout, progress=progress, label=dest.name)
            break
        except urllib.error.HTTPError as e:
            # 4xx other than 408/429 will not get better by retrying
            if e.code < 500 and e.code not in (408, 429) or attempt >= retries:
                raise
        except (TimeoutError, _Incomplete, urllib.error.URLError, http.client.HTTPException, OSError) as e:
            if attempt >= retries:
                raise DownloadError(url, f"failed after {retries} retries ({error_reason(e)})",
                                    f"the partial file {part.name} is kept and resumed next time") from None
        time.sleep(min(RETRY_BACKOFF * 2 ** attempt, 10.0))
        attempt += 1
    if not part.exists():  # e.g. an empty body never opened the file
        part.touch()
    bad = _check(part, algos, size)
    if bad is not None:
        part.unlink()
        raise ChecksumError(dest, *bad, note=f"downloaded from {url}; the corrupted file was deleted")
    os.replace(part, dest)
    return dest


# ---------------------------------------------------------------------- registry
@dataclass(frozen=True)
class RemoteFile:
    """One file of a dataset: where to get it, its name in the dataset folder, and what to expect.

    ``sha256`` / ``size`` may be ``None`` when unknown; the dataset's
    verification step (see :func:`register_dataset`) then has to vouch for it.
    """

    url: str
    filename: str
    sha256: str | None = None
    size: int | None = None


DATASETS: dict[str, list[RemoteFile]] = {}
"""Dataset name → files. Add entries with :func:`register_dataset`."""

_VERIFIERS: dict[str, Callable[[Path], None]] = {}


def register_dataset(name: str, files: Sequence[RemoteFile], *,
                     verify: Callable[[Path], None] | None = None) -> None:
    """Register (or replace) dataset ``name``.

    ``verify(folder)``, if given, runs after every file is present in the
    dataset folder and raises (typically :class:`ChecksumError`) when the
    content is not what is expected — used when the archives themselves have no
    published digest. A successful verification is remembered in
    ``<folder>/.verified.json`` (keyed by the files' sizes and mtimes) so it is
    not repeated on every call.
    """
    if not files:
        raise ValueError(f"dataset {name!r}: needs at least one file")
    DATASETS[name] = list(files)
    if verify is not None:
        _VERIFIERS[name] = verify
    else:
        _VERIFIERS.pop(name, None)


def offline_hint(name: str) -> str:
    """What works without the network for dataset ``name``: a local folder or archive path."""
    return (f"no network? a local copy of {name} works instead: register it once with "
            f"`gym-crawl download {name} --from /path/to/{name}` (or set {_env_var(name)}), or pass its folder or "
            f"archive path (load_corpus('/path/to/{name}') or --corpus /path/to/{name})")


def _local_copies_file() -> Path:
    from gym_crawl.corpus.cache import data_dir

    return data_dir() / "local_copies.json"


#: Named corpora downloaded by their own module (not through :data:`DATASETS`) that take a local copy too.
LOCAL_ONLY_NAMES = ("simplewiki",)


def _env_var(name: str) -> str:
    return "GYM_CRAWL_" + re.sub(r"[^A-Za-z0-9]", "_", name).upper()


def local_copy(name: str) -> Path | None:
    """The local copy registered for dataset ``name`` — ``$GYM_CRAWL_<NAME>`` first, then the record written by
    :func:`register_local_copy` — or ``None``. A registered path that no longer exists is an error naming it
    (never a silent download)."""
    env = os.environ.get(_env_var(name))
    if env:
        p, where = Path(env).expanduser(), f"${_env_var(name)}"
    else:
        try:
            rec = json.loads(_local_copies_file().read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(rec, dict) or not isinstance(rec.get(name), str):
            return None
        p, where = Path(rec[name]), f"the local copy registered in {_local_copies_file()}"
    if not p.exists():
        raise FileNotFoundError(f"{p}: {where} for dataset {name!r} does not exist; register another with "
                                f"`gym-crawl download {name} --from PATH`")
    return p


def register_local_copy(name: str, path: str | os.PathLike, check: Callable[[Path], object] | None = None) -> Path:
    """Record ``path`` (a folder or archive of dataset ``name``) as its local copy, after ``check(path)`` (e.g.
    loading it) succeeds; returns the absolute path. ``ValueError`` for an unknown name, ``FileNotFoundError``
    for a missing path."""
    known = sorted(set(DATASETS) | set(LOCAL_ONLY_NAMES))
    if name not in known:
        raise ValueError(f"unknown dataset {name!r}; known datasets: {', '.join(known)}")
    p = Path(path).expanduser().resolve()
    if not p.exists():
        raise FileNotFoundError(f"--from {path}: no such file or folder")
    if check is not None:
        check(p)
    from gym_crawl._io import atomic_write_json

    f = _local_copies_file()
    try:
        rec = json.loads(f.read_text(encoding="utf-8"))
        rec = rec if isinstance(rec, dict) else {}
    except (OSError, ValueError):
        rec = {}
    rec[name] = str(p)
    atomic_write_json(f, rec)
    return p


@contextlib.contextmanager
def no_empty_folders_left(folder: Path) -> Iterator[None]:
    """Run the ``with`` block; when it raises, remove again the folders on the way to ``folder`` that did not
    exist before it and are still empty, deepest first (a folder holding a resumable ``.part`` stays).

    :param folder: the download folder the block creates (``folder.mkdir(parents=True)``) and fills.
    """
    created = []
    p = folder.absolute()
    while not p.exists() and p != p.parent:
        created.append(p)
        p = p.parent
    try:
        yield
    except BaseException:
        for d in created:
            try:
                d.rmdir()
            except OSError:
                break
        raise


def _stamp(folder: Path, files: Iterable[RemoteFile]) -> dict[str, list[int]]:
    out = {}
    for rf in files:
        st = (folder / rf.filename).stat()
        out[rf.filename] = [st.st_size, st.st_mtime_ns]
    return out


def downloaded(name: str) -> Path | None:
    """The folder of dataset ``name`` when it is on this machine — its local copy (:func:`local_copy`), or its
    cache folder holding every file (of the expected size, when known) — else ``None``. Never touches the
    network: what a caller that must not download (a task constructor) asks first."""
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; known datasets: {', '.join(sorted(DATASETS)) or '(none)'}")
    mine = local_copy(name)
    if mine is not None:
        return mine
    from gym_crawl.corpus.cache import data_dir

    folder = data_dir() / name
    for rf in DATASETS[name]:
        f = folder / rf.filename
        if not f.is_file() or (rf.size is not None and f.stat().st_size != rf.size):
            return None
    return folder


def download(name: str, dest_dir: str | os.PathLike | None = None, *, progress: bool = True,
             verify: bool = True, timeout: float = 60, retries: int = 3) -> Path:
    """Make sure every file of dataset ``name`` is present and verified; return its folder.

    ``dest_dir`` defaults to ``gym_crawl.corpus.cache.data_dir() / name``
    (``GYM_CRAWL_DATA`` overrides the cache root). Files already present and
    matching are not downloaded again. ``verify=False`` skips the dataset's
    content verification step (not the per-file digests).

    Without ``dest_dir``, a local copy (:func:`local_copy`) is returned as it is, with no network access.

    Raises ``ValueError`` listing the known names when ``name`` is unknown, and
    :class:`DownloadError` (one line: the URL, the reason, and that a local folder or archive path
    works instead) when a file cannot be fetched; the folders the call created are removed again
    when they stay empty.
    """
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; known datasets: {', '.join(sorted(DATASETS)) or '(none)'}")
    if dest_dir is None:
        mine = local_copy(name)
        if mine is not None:
            return mine
        from gym_crawl.corpus.cache import data_dir

        dest_dir = data_dir() / name
    folder = Path(dest_dir)
    files = DATASETS[name]
    with no_empty_folders_left(folder):
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:  # e.g. a read-only GYM_CRAWL_DATA
            raise DownloadError(files[0].url, f"cannot create the download folder {folder} ({e.strerror or e}); "
                                              f"set GYM_CRAWL_DATA to a writable folder", offline_hint(name)) from None
        for rf in files:
            try:
                fetch(rf.url, folder / rf.filename, rf.sha256, size=rf.size, progress=progress, timeout=timeout,
                      retries=retries)
            except DownloadError as e:
                raise e.with_hint(offline_hint(name)) from None
            except urllib.error.HTTPError as e:
                raise DownloadError(rf.url, error_reason(e), offline_hint(name)) from None
    check = _VERIFIERS.get(name)
    if verify and check is not None:
        marker = folder / ".verified.json"
        stamp = _stamp(folder, files)
        try:
            done = json.loads(marker.read_text(encoding="utf-8")).get(name) == stamp
        except (OSError, ValueError, AttributeError):
            done = False
        if not done:
            check(folder)
            from gym_crawl._io import atomic_write_json

            atomic_write_json(marker, {name: stamp})
    return folder


# ------------------------------------------------------------------- fingerprint
def content_fingerprint(source: str | os.PathLike, top: str) -> str:
    """sha256 of the ``sha256sum`` listing of every file under ``top``.

    Equivalent to running, in the folder that contains ``top/``::

        find TOP -type f | LC_ALL=C sort | xargs -d '\\n' sha256sum | sha256sum

    ``source`` is either that folder or a tar archive (any compression tarfile
    reads) whose members live under ``top/`` (possibly below ``./`` or another
    folder; paths are counted from ``top/``); the archive is streamed, not extracted.
    """
    source = Path(source)
    entries: list[tuple[bytes, str]] = []
    if source.is_dir():
        root = source / top
        if not root.is_dir():
            raise FileNotFoundError(f"{root}: no such folder (content fingerprint of {top}/)")
        for dirpath, _dirs, fnames in os.walk(root):
            for fn in fnames:
                p = Path(dirpath) / fn
                rel = p.relative_to(source).as_posix()
                entries.append((os.fsencode(rel), _digests(p, {"sha256": ""})["sha256"]))
    else:
        prefix = top.strip("/") + "/"
        try:
            with tarfile.open(source, "r:*") as tf:
                for m in tf:
                    # members may sit under "./" or an extra top folder: paths are taken from TOP/ on
                    name = "/" + m.name
                    k = name.find("/" + prefix)
                    if m.isfile() and k >= 0:
                        f = tf.extractfile(m)
                        assert f is not None
                        entries.append((name[k + 1:].encode("utf-8"), hashlib.sha256(f.read()).hexdigest()))
        except (tarfile.TarError, EOFError, OSError) as e:
            raise ValueError(f"{source}: unreadable or truncated archive ({type(e).__name__}: {e})") from None
    entries.sort()
    h = hashlib.sha256()
    for name_b, digest in entries:
        h.update(digest.encode("ascii") + b"  " + name_b + b"\n")
    return h.hexdigest()


# ------------------------------------------------------------------- wikispeedia
WIKISPEEDIA_FINGERPRINT = "ad664947bce0deb3fdb7e2e19ab80b3a6d03520fe6aa7b2a96e5dc3e19ebcb6d"
"""Content fingerprint of ``plaintext_articles/`` (see ``shared/data/wikispeedia/SOURCE.md``)."""

WIKISPEEDIA_TSV_SHA256 = {
    "articles.tsv": "a70d592a51542cf8bcf69fd166ba9c4045765d5a0e321ad4673766b1c62344be",
    "links.tsv": "fc2352342a87b993c077e34233e4ca0a980968ba4587c491f24e1f11e823a24d",
    "categories.tsv": "659412a49a7cba380d63ab98a714ebde7211d3d90cec9cf7b80a8dd4d5a12e9a",
    "paths_unfinished.tsv": "499cf277fc4031034b3d47af775b32b4caf500c7c321c92357ba8688c755ff39",
    "paths_finished.tsv": "7a42f1765998737047d990cb131241450027ed76d7f2de004b36f356352c6d8b",
}
"""sha256 of the Wikispeedia TSVs, as recorded in SOURCE.md (cross-checked against Git LFS pointers)."""

_SNAP = "https://snap.stanford.edu/data/wikispeedia/"
_WS_ARTICLES = "wikispeedia_articles_plaintext.tar.gz"
_WS_GRAPH = "wikispeedia_paths-and-graph.tar.gz"


def verify_wikispeedia(folder: str | os.PathLike) -> None:
    """Check SNAP's two Wikispeedia tarballs in ``folder`` by content.

    SNAP publishes no digest for the archives, so (a) the content fingerprint
    of ``plaintext_articles/`` inside the articles tarball must equal
    :data:`WIKISPEEDIA_FINGERPRINT`, and (b) every TSV of
    :data:`WIKISPEEDIA_TSV_SHA256` found in the graph tarball must match its
    sha256. On a mismatch the offending archive is deleted (so the next
    :func:`download` fetches it again) and :class:`ChecksumError` is raised.
    """
    folder = Path(folder)
    arts = folder / _WS_ARTICLES
    try:
        got = content_fingerprint(arts, "plaintext_articles")
    except ValueError as e:
        arts.unlink(missing_ok=True)
        raise ChecksumError(arts, "content fingerprint", WIKISPEEDIA_FINGERPRINT, f"unreadable ({e})",
                            note="the archive was deleted") from None
    if got != WIKISPEEDIA_FINGERPRINT:
        arts.unlink(missing_ok=True)
        raise ChecksumError(arts, "content fingerprint of plaintext_articles/", WIKISPEEDIA_FINGERPRINT, got,
                            note="the archive was deleted")
    graph = folder / _WS_GRAPH
    seen = set()
    try:
        with tarfile.open(graph, "r:*") as tf:
            for m in tf:
                base = m.name.rsplit("/", 1)[-1]
                if m.isfile() and base in WIKISPEEDIA_TSV_SHA256:
                    f = tf.extractfile(m)
                    assert f is not None
                    d = hashlib.sha256(f.read()).hexdigest()
                    if d != WIKISPEEDIA_TSV_SHA256[base]:
                        raise ChecksumError(graph, f"sha256 of member {m.name}", WIKISPEEDIA_TSV_SHA256[base], d,
                                            note="the archive was deleted")
                    seen.add(base)
    except ChecksumError:
        graph.unlink(missing_ok=True)
        raise
    except (tarfile.TarError, EOFError, OSError) as e:
        graph.unlink(missing_ok=True)
        raise ChecksumError(graph, "archive", "a readable tar.gz", f"unreadable ({e})",
                            note="the archive was deleted") from None
    missing = {"articles.tsv", "links.tsv", "categories.tsv"} - seen
    if missing:
        graph.unlink(missing_ok=True)
        raise ChecksumError(graph, "members", "articles.tsv, links.tsv, categories.tsv",
                            f"missing {sorted(missing)}", note="the archive was deleted")


register_dataset("wikispeedia", [
    # SNAP publishes no checksums for these archives: sha256/size are None and
    # verify_wikispeedia checks the extracted content against SOURCE.md instead.
    RemoteFile(_SNAP + _WS_ARTICLES, _WS_ARTICLES, sha256=None, size=None),
    RemoteFile(_SNAP + _WS_GRAPH, _WS_GRAPH, sha256=None, size=None),
], verify=verify_wikispeedia)
