"""Safe persistence helpers: atomic writes, checksums, pickle-free numpy I/O.

Lowest layer of the package: imports nothing from ``gym_crawl``.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

try:  # POSIX advisory locks (released by the kernel when the holder dies, even by kill -9)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["atomic_write_bytes", "atomic_write_json", "sha256_file", "sampled_sha256", "file_digest", "check_file",
           "save_npy", "load_npy", "replace_dir", "partial_dir", "clean_orphans", "dir_lock"]

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


def check_file(path: Path, spec: dict[str, Any], *, verify: bool) -> str | None:
    """What is wrong with ``path`` against its manifest ``spec`` (``None`` when nothing is).

    Always compares the size and the sampled hash (when the manifest records them); ``verify=True``
    also recomputes the full sha256.
    """
    if "size" in spec and path.stat().st_size != spec["size"]:
        return f"size {path.stat().st_size} bytes, manifest says {spec['size']} (truncated or replaced file)"
    if "sample_sha256" in spec and sampled_sha256(path) != spec["sample_sha256"]:
        return "sampled sha256 differs from the manifest (file corrupted or modified)"
    if verify and "sha256" in spec and sha256_file(path) != spec["sha256"]:
        return "sha256 differs from the manifest (file corrupted or modified)"
    return None


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temp file in the same folder + ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
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
        np.save(f, arr, allow_pickle=False)
        f.flush()
        os.fsync(f.fileno())


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
