"""Safe persistence helpers: atomic writes, checksums, pickle-free numpy I/O.

Lowest layer of the package: imports nothing from ``gym_crawl``.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["atomic_write_bytes", "atomic_write_json", "sha256_file", "save_npy", "load_npy", "replace_dir"]


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


def replace_dir(tmp_dir: Path, final_dir: Path) -> None:
    """Move a fully written ``tmp_dir`` into place as ``final_dir``.

    If ``final_dir`` exists it is first renamed aside and removed after the
    swap, so readers see either the old complete directory or the new one.
    """
    final_dir = Path(final_dir)
    old = None
    if final_dir.exists():
        old = final_dir.with_name(f".{final_dir.name}.old-{os.getpid()}")
        if old.exists():
            shutil.rmtree(old)
        os.replace(final_dir, old)
    os.replace(tmp_dir, final_dir)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
