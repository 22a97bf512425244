"""Safe persistence helpers: atomic writes, checksums, pickle-free numpy I/O.

Lowest layer of the package: imports nothing from ``gym_crawl``.
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np

try:  # POSIX advisory locks (released by the kernel when the holder dies, even by kill -9)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["atomic_write_bytes", "atomic_write_json", "sha256_file", "sampled_sha256", "file_digest",
           "save_npy", "load_npy", "replace_dir", "partial_dir", "clean_orphans", "dir_lock", "seal", "seal_problem",
           "file_identity", "verify_files", "write_stamp", "STAMP_NAME", "FileCheckError", "current_umask",
           "dataclass_kwargs", "writing_dir"]

SAMPLE_BLOCKS = 32
SAMPLE_BLOCK = 4096
"""The sampled hash reads ``SAMPLE_BLOCKS`` blocks of ``SAMPLE_BLOCK`` bytes (whole files up to 128 KiB)."""


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(chunk)
            if not b:
                break
            h.update(b)
    return h.hexdigest()


def sampled_sha256(path: str | os.PathLike) -> str:
    """Hex sha256 of the file size and of ``SAMPLE_BLOCKS`` evenly spaced 4 KiB blocks (first and last
    included): a cheap content check for opening large memory-mapped files. Files up to
    ``SAMPLE_BLOCKS × SAMPLE_BLOCK`` bytes (128 KiB) are hashed whole."""
    size = os.path.getsize(path)
    h = hashlib.sha256(str(size).encode())
    with open(path, "rb") as f:
        if size <= SAMPLE_BLOCKS * SAMPLE_BLOCK:
            h.update(f.read())
        else:
            for off in np.linspace(0, size - SAMPLE_BLOCK, SAMPLE_BLOCKS).astype(np.int64).tolist():
                f.seek(off)
                h.update(f.read(SAMPLE_BLOCK))
    return h.hexdigest()


def file_digest(path: str | os.PathLike) -> dict[str, Any]:
    """``{"size", "sha256", "sample_sha256"}`` of a file, as manifests record them."""
    return {"size": os.path.getsize(path), "sha256": sha256_file(path), "sample_sha256": sampled_sha256(path)}


SEAL_KEY = "seal_sha256"
"""Key of a manifest's own checksum (see :func:`seal`)."""


def _canonical(obj: dict[str, Any]) -> bytes:
    body = {k: v for k, v in obj.items() if k != SEAL_KEY}
    return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def seal(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` with ``"seal_sha256"``: the sha256 of its canonical JSON (sorted keys, no whitespace) without
    that key. A manifest written with its seal and read back either parses to the sealed content or fails
    :func:`seal_problem` — a damaged byte of a JSON file whose values the readers trust (page counts, topic
    seeds, file checksums) is detected instead of read as a different value."""
    return {**{k: v for k, v in obj.items() if k != SEAL_KEY},
            SEAL_KEY: hashlib.sha256(_canonical(obj)).hexdigest()}


def seal_problem(obj: Any, known_keys: set[str] | frozenset[str]) -> str | None:
    """What is wrong with a parsed manifest ``obj`` against its seal (``None`` when nothing is).

    A manifest without a seal (written by an older gym_crawl) is accepted when every top-level key is one
    of ``known_keys`` — so a damaged byte in the seal's own key name is not read as "no seal"."""
    if not isinstance(obj, dict):
        return f"not a JSON object ({type(obj).__name__})"
    unknown = sorted(set(obj) - set(known_keys) - {SEAL_KEY})
    if unknown:
        return f"unknown field(s) {unknown} (damaged manifest)"
    if SEAL_KEY not in obj:
        return None
    if obj[SEAL_KEY] != hashlib.sha256(_canonical(obj)).hexdigest():
        return "its content differs from its seal_sha256 (damaged or edited manifest)"
    return None


def dataclass_kwargs(cls: type, d: Mapping[str, Any]) -> dict[str, Any]:
    """``d`` as keyword arguments of dataclass ``cls`` (a record read back: the fields it lacks take their
    defaults); a key that is no field of ``cls`` is a ``ValueError`` naming it and the known fields."""
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(d) - names)
    if unknown:
        raise ValueError(f"unknown {cls.__name__} fields {unknown}; known: {sorted(names)}")
    return dict(d)


STAMP_NAME = ".verified.json"
"""Name of the stamp file :func:`verify_files` keeps beside a manifest."""

_VERIFIED: dict[tuple[str, str], tuple[int, ...]] = {}
"""Files whose full sha256 this process checked: (absolute path, sha256) → :func:`file_identity` then."""


def file_identity(path: str | os.PathLike) -> tuple[int, ...]:
    """``(size, mtime_ns, ctime_ns, inode, device)`` of a file. Writing to the file in place, replacing it,
    or resetting its mtime (``touch -d``: the ctime still moves, and no user call sets a ctime) all change it."""
    st = os.stat(path)
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def _read_stamp(folder: Path, key: str) -> dict[str, Any]:
    try:
        stamp = json.loads((folder / STAMP_NAME).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(stamp, dict) or stamp.get("key") != key or not isinstance(stamp.get("files"), dict):
        return {}
    return stamp["files"]


def write_stamp(folder: str | os.PathLike, key: str, files: dict[str, dict[str, Any]],
                idents: dict[str, tuple[int, ...]] | None = None) -> None:
    """Record that the listed files of ``folder`` (name → manifest spec with ``sha256``) hold the content their
    manifest (identified by ``key``) lists, as each file is now (:func:`file_identity`; ``idents``: as taken
    before the check). Best effort: a read-only folder keeps no stamp (each process then checks the files once)."""
    folder = Path(folder)
    entries = {}
    for name, spec in files.items():
        ident = (idents or {}).get(name) or file_identity(folder / name)
        entries[name] = {"sha256": spec["sha256"], "id": list(ident)}
        _VERIFIED[(str((folder / name).resolve()), spec["sha256"])] = ident
    with contextlib.suppress(OSError):
        atomic_write_json(folder / STAMP_NAME, {"key": key, "files": entries})


class FileCheckError(ValueError):
    """A file of a cache folder differs from its manifest (``.file``: its name; ``.problem``: what differs)."""

    def __init__(self, file: str, problem: str):
        super().__init__(f"{file}: {problem}")
        self.file, self.problem = file, problem


def verify_files(folder: str | os.PathLike, files: dict[str, dict[str, Any]], *, key: str,
                 force: bool = False) -> int:
    """Check every file of ``folder`` listed in ``files`` (name → manifest spec with ``size`` and ``sha256``)
    against its full sha256, except a file this process or the folder's stamp (:data:`STAMP_NAME`) already
    checked as it is now (same :func:`file_identity`, same manifest ``key``); ``force=True`` checks them all.

    Raises :class:`FileCheckError` for the first file at fault; else records the stamp and returns how many
    files it hashed (0: every file was known as checked). The first open of a cache on a host reads every
    byte once (sha256 runs at ~1 GB/s); later opens cost one ``stat`` per file, and any later write to a
    file changes its identity, so it is checked again. A read-only folder keeps no stamp: each process
    then checks its files once."""
    folder = Path(folder)
    stamp = {} if force else _read_stamp(folder, key)
    hashed = 0
    idents: dict[str, tuple[int, ...]] = {}
    for name, spec in files.items():
        fp = folder / name
        if not fp.is_file():
            raise FileCheckError(name, "missing file listed in the manifest")
        if not isinstance(spec, dict) or not isinstance(spec.get("sha256"), str):
            raise FileCheckError(name, "no sha256 in the manifest")
        ident = idents[name] = file_identity(fp)
        if "size" in spec and ident[0] != spec["size"]:
            raise FileCheckError(name, f"size {ident[0]} bytes, manifest says {spec['size']} (truncated or "
                                       f"replaced file)")
        if not force:
            if _VERIFIED.get((str(fp.resolve()), spec["sha256"])) == ident:
                continue
            st = stamp.get(name)
            if isinstance(st, dict) and st.get("sha256") == spec["sha256"] and st.get("id") == list(ident):
                _VERIFIED[(str(fp.resolve()), spec["sha256"])] = ident
                continue
        if sha256_file(fp) != spec["sha256"]:
            raise FileCheckError(name, "sha256 differs from the manifest (file corrupted or modified)")
        hashed += 1
    if hashed:
        write_stamp(folder, key, files, idents)
    return hashed


def current_umask() -> int:
    """The process' file-mode creation mask (read from ``/proc/self/status`` where it is, without changing it)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # elsewhere: read it by setting it, and put it back at once
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temp file in the same folder + ``os.replace``. The file gets the mode a
    plain ``open(path, "w")`` would give (``0o666`` less the umask), not the temp file's private ``0o600``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, 0o666 & ~current_umask())
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_json(path: str | os.PathLike, obj: Any) -> None:
    """Atomically write ``obj`` as indented UTF-8 JSON."""
    atomic_write_bytes(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False).encode("utf-8"))


def save_npy(path: str | os.PathLike, arr: np.ndarray) -> None:
    """Save one array as ``.npy`` (never pickled; object arrays are refused)."""
    arr = np.asarray(arr)
    if arr.dtype == object:
        raise TypeError(f"refusing to save object array to {path}: would need pickle")
    with open(path, "wb") as f:
        try:
            np.save(f, arr, allow_pickle=False)
        except OSError as e:
            raise _short_write(e, path) from None
        f.flush()
        os.fsync(f.fileno())


_SHORT_WRITE = re.compile(r"(\d+) requested and (\d+) written")


def _short_write(e: OSError, path: str | os.PathLike) -> OSError:
    """``e`` naming ``path``; numpy's ``tofile`` reports a full disk as "N requested and M written", without errno
    or file name: that becomes ``ENOSPC`` ("No space left on device", the bytes written said)."""
    m = _SHORT_WRITE.search(str(e))
    if e.errno is None and m is not None:
        return OSError(errno.ENOSPC, f"No space left on device (wrote {int(m.group(2)):,} of {int(m.group(1)):,} "
                                     f"bytes)", str(path))
    if e.filename is None:
        return OSError(e.errno, e.strerror or str(e), str(path))
    return e


def load_npy(path: str | os.PathLike, mmap: bool = True) -> np.ndarray:
    """Load one ``.npy`` without pickle, memory-mapped read-only by default."""
    return np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)


@contextlib.contextmanager
def dir_lock(final_dir: str | os.PathLike) -> Iterator[None]:
    """Exclusive inter-process lock for writing ``final_dir`` (a ``.<name>.lock`` file beside it).

    An advisory ``flock``: the kernel releases it when the holder exits, however it exits, so a
    killed writer never leaves a stale lock. (Without ``fcntl``, e.g. on Windows, no lock is taken.)
    """
    final_dir = Path(final_dir)
    final_dir.parent.mkdir(parents=True, exist_ok=True)
    if fcntl is None:  # pragma: no cover
        yield
        return
    fd = os.open(final_dir.parent / f".{final_dir.name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def partial_dir(final_dir: str | os.PathLike) -> Path:
    """A new empty ``.<name>.<pid>-<random>.partial`` directory beside ``final_dir`` to write into.

    The writer's pid in the name lets :func:`clean_orphans` tell a live writer's directory from the
    leftover of a killed one.
    """
    final_dir = Path(final_dir)
    final_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = final_dir.with_name(f".{final_dir.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.partial")
    tmp.mkdir()
    return tmp


@contextlib.contextmanager
def writing_dir(final_dir: str | os.PathLike) -> Iterator[Path]:
    """Write the directory ``final_dir`` atomically: the leftovers of killed writers of it are removed
    (:func:`clean_orphans`), the block writes into a fresh :func:`partial_dir` it is given, which then replaces
    ``final_dir`` (:func:`replace_dir`); if the block (or the replace) raises, the partial directory is removed and
    ``final_dir`` is as it was."""
    final_dir = Path(final_dir)
    clean_orphans(final_dir)
    tmp = partial_dir(final_dir)
    try:
        yield tmp
        replace_dir(tmp, final_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


_ORPHAN_RE = re.compile(r"^\.(?P<name>.+)\.(?:(?P<pid>\d+)-[0-9a-f]+\.partial|old-(?P<oldpid>\d+)(?:-[0-9a-f]+)?)$")


def clean_orphans(final_dir: str | os.PathLike) -> list[Path]:
    """Remove the ``.partial`` / ``.old-`` directories of ``final_dir`` left by writers that no longer
    run (e.g. killed with ``kill -9`` mid-write); returns what was removed. Directories of live
    writers are left alone."""
    final_dir = Path(final_dir)
    removed: list[Path] = []
    if not final_dir.parent.is_dir():
        return removed
    for p in final_dir.parent.iterdir():
        m = _ORPHAN_RE.match(p.name)
        if not m or m.group("name") != final_dir.name or not p.is_dir():
            continue
        if _pid_alive(int(m.group("pid") or m.group("oldpid"))):
            continue
        shutil.rmtree(p, ignore_errors=True)
        if not p.exists():
            removed.append(p)
    return removed


def replace_dir(tmp_dir: Path, final_dir: Path) -> None:
    """Move a fully written ``tmp_dir`` into place as ``final_dir``.

    If ``final_dir`` exists it is first renamed aside and removed after the swap, so readers see
    either the old complete directory or the new one. The swap holds :func:`dir_lock`, so two
    processes replacing the same directory at the same moment both succeed (the last one wins)
    instead of tripping over each other's renames.
    """
    final_dir = Path(final_dir)
    with dir_lock(final_dir):
        old = None
        if final_dir.exists():
            old = final_dir.with_name(f".{final_dir.name}.old-{os.getpid()}-{uuid.uuid4().hex[:8]}")
            os.replace(final_dir, old)
        os.replace(tmp_dir, final_dir)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
