"""A corpus written into its folder column by column, block by block, for compilers whose corpus is larger than
the memory they may use (the WARC compiler's assembly).

:class:`CorpusWriter` appends each array (and each CSR pair or string table, whose pointers it shifts) to its
``.npy`` file as the blocks come, keeping only each array's length, min, max and order; :meth:`~CorpusWriter.finish`
writes each file's header, the sealed manifest and the check stamp, exactly as :meth:`Corpus.save` would for the
same arrays, and renames the folder into place. Until then the files live in a ``.partial`` folder beside the
destination: an interrupted write (an exception, a killed process) never leaves an accepted corpus, and the
next writer of the same destination removes a killed writer's leftovers.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import struct
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from gym_crawl._io import clean_orphans, file_digest, partial_dir
from gym_crawl.corpus.core import (
    Corpus,
    check_corpus_destination,
    links_in_target_order,
    seal_corpus_folder,
    stored_ranges,
)

__all__ = ["CorpusWriter", "open_written"]

_HEADER_BYTES = 128
"""Bytes reserved at the start of each ``.npy`` file for its header (format 1.0, written when the length is
known; 128 keeps the data 64-byte aligned, as numpy writes it)."""


def _npy_header(dtype: np.dtype, n: int) -> bytes:
    """The ``.npy`` (format 1.0) header of a 1-d C-order array of ``n`` values of ``dtype``, ``_HEADER_BYTES``
    long (padded with spaces, as the format allows)."""
    text = repr({"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": (n,)})
    body = text.encode("latin1").ljust(_HEADER_BYTES - 10 - 1) + b"\n"
    return np.lib.format.magic(1, 0) + struct.pack("<H", len(body)) + body


class _Column:
    """One ``.npy`` file being appended to, with its statistics."""

    def __init__(self, path: Path, dtype: Any) -> None:
        self.path, self.dtype = path, np.dtype(dtype)
        self.file: BinaryIO | None = open(path, "wb")  # noqa: SIM115 - closed by close()
        self.file.write(b"\0" * _HEADER_BYTES)
        self.n = 0
        self.lo: int | float | None = None
        self.hi: int | float | None = None
        self.last: int | float | None = None
        self.nondecreasing = True
        #: the values of a CSR pair: each row's values non-decreasing (``None``: also written outside rows)
        self.rows_sorted: bool | None = True

    def append(self, values: np.ndarray) -> None:
        a = np.ascontiguousarray(values, dtype=self.dtype)
        if a.ndim != 1:
            raise ValueError(f"{self.path.name}: expected a 1-d block, got shape {a.shape}")
        if not len(a):
            return
        assert self.file is not None, "column already closed"
        self.file.write(a.tobytes())
        lo, hi, first = a.min().item(), a.max().item(), a[0].item()
        self.lo = lo if self.lo is None else min(self.lo, lo)
        self.hi = hi if self.hi is None else max(self.hi, hi)
        if self.nondecreasing and ((self.last is not None and first < self.last) or bool(np.any(a[1:] < a[:-1]))):
            self.nondecreasing = False
        self.last = a[-1].item()
        self.n += len(a)

    def close(self) -> None:
        f = self.file
        if f is None:
            return
        self.file = None
        try:
            f.seek(0)
            f.write(_npy_header(self.dtype, self.n))
            f.flush()
            os.fsync(f.fileno())
        finally:
            f.close()

    def stats(self) -> dict[str, Any]:
        return {"len": self.n, "min": self.lo if self.lo is not None else 0,
                "max": self.hi if self.hi is not None else -1, "nondecreasing": self.nondecreasing,
                "rows_sorted": self.rows_sorted}


class CorpusWriter:
    """Write a corpus to the folder ``path`` array by array, block by block (see the module docstring).

    ``append(name, block, dtype)`` extends the array ``name`` (``"link_dst"``, ``"page_domain"``…);
    ``append_csr(ptr_name, values_name, ptr, values, dtype)`` extends a CSR pair by rows given with a local
    pointer (starting at 0), as do string tables (``"titles.offsets"``, ``"titles.blob"``); every array of a
    :class:`Corpus` must have been written when :meth:`finish` seals the folder and opens it. Use it as a context
    manager: an exception inside removes the partial folder (:meth:`abort`).
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        check_corpus_destination(self.path)
        clean_orphans(self.path)
        self.tmp: Path | None = partial_dir(self.path)
        self._cols: dict[str, _Column] = {}

    def _column(self, name: str, dtype: Any) -> _Column:
        col = self._cols.get(name)
        if col is None:
            if self.tmp is None:
                raise RuntimeError(f"corpus writer of {self.path}: already finished or aborted")
            col = self._cols[name] = _Column(self.tmp / f"{name}.npy", dtype)
        elif col.dtype != np.dtype(dtype):
            raise TypeError(f"{name}: written as {col.dtype}, now given {np.dtype(dtype)}")
        return col

    def append(self, name: str, values: np.ndarray, dtype: Any) -> None:
        """Extend the 1-d array ``name`` by ``values`` (cast to ``dtype``)."""
        col = self._column(name, dtype)
        col.rows_sorted = None  # values not given by rows: their order within rows is not known
        col.append(values)

    def append_csr(self, ptr_name: str, values_name: str, ptr: np.ndarray, values: np.ndarray, dtype: Any) -> None:
        """Extend a CSR pair by the rows ``(ptr, values)`` (``ptr`` local: ``ptr[0] == 0``, ``ptr[-1] ==
        len(values)``; ``values`` cast to ``dtype``)."""
        new = ptr_name not in self._cols
        p = self._column(ptr_name, np.int64)
        v = self._column(values_name, dtype)
        if new:
            p.append(np.zeros(1, np.int64))
        ptr = np.asarray(ptr, np.int64)
        if len(ptr) == 0 or ptr[0] != 0 or ptr[-1] != len(values):
            raise ValueError(f"{ptr_name}: a block's pointer must run from 0 to its {len(values)} values")
        if v.rows_sorted:
            v.rows_sorted = links_in_target_order(ptr, np.asarray(values))
        p.append(ptr[1:] + v.n)
        v.append(values)

    def length(self, name: str) -> int:
        """Values written so far to the array ``name`` (0 before its first block)."""
        col = self._cols.get(name)
        return col.n if col is not None else 0

    def finish(self, meta: dict[str, Any]) -> Path:
        """Seal the folder (headers, manifest with ``meta``, check stamp) and rename it to ``path``; returns
        ``path``. Open it with :meth:`Corpus.load`."""
        if self.tmp is None:
            raise RuntimeError(f"corpus writer of {self.path}: already finished or aborted")
        tmp = self.tmp
        try:
            files: dict[str, Any] = {}
            for name, col in self._cols.items():
                col.close()
                files[f"{name}.npy"] = {**file_digest(col.path), "shape": [col.n], "dtype": str(col.dtype)}
            ranges = stored_ranges({name: col.stats() for name, col in self._cols.items()})
            seal_corpus_folder(tmp, self.path, files, ranges, meta)
        except BaseException:
            self.abort()
            raise
        self.tmp = None
        return self.path

    def abort(self) -> None:
        """Close every file and remove the partial folder (nothing is accepted)."""
        for col in self._cols.values():
            with contextlib.suppress(OSError):
                col.close()
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

    def __enter__(self) -> CorpusWriter:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is not None:
            self.abort()


def open_written(path: Path, *, in_memory: bool) -> Corpus:
    """The corpus a :class:`CorpusWriter` finished at ``path``: memory-mapped, or read into memory and the
    folder removed (``in_memory``: a corpus that is not kept, as :func:`~gym_crawl.web.warc.load_warc` with
    ``cache=False`` returns it; its ``path`` and ``checksum`` are then ``None``)."""
    if not in_memory:
        return Corpus.load(path)
    c = Corpus.load(path, mmap=False, share=False)
    c.__dict__.pop("_loaded", None)
    c.path = c.checksum = None
    shutil.rmtree(path, ignore_errors=True)
    return c
