"""Reading memory-mapped arrays at random without paying a page fault or a serial cache miss for each read.

A crawl of a large web (10^7 pages and up) reads a few entries of the corpus' and the stored score tables' files
per fetch, at random places. Two costs come with that which a small web does not have:

* **page faults**: a memory-mapped file's page is in the process' page tables only after its first read faults it
  in — and on a large file nearly every fetch reads a page no fetch read before. Each such (minor) fault maps a
  whole page-cache folio, several microseconds. :func:`populate` maps the arrays' pages up front, in one system
  call per array (``madvise(MADV_POPULATE_READ)``, Linux 5.14 and later), within a byte budget;
* **serial cache misses**: a compiled loop that reads ``a[p]`` then ``b[a[p]]`` for one page after the other waits
  for each miss in turn. :func:`prefetch` (usable in numba-compiled code) asks for a cache line ahead of its use, so
  a loop can first request every line it will read and then do its work while they arrive (:func:`prefetch_range`,
  :func:`prefetch_rows`: every line of a range of a column or of rows).

Neither changes a value a kernel computes. Lowest layer of the package: imports nothing from ``gym_crawl``.
"""
from __future__ import annotations

import ctypes
import sys
from collections.abc import Iterable
from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["MADV_POPULATE_READ", "available_memory", "populate", "populate_budget", "prefetch", "prefetch_range",
           "prefetch_rows"]

#: ``madvise`` advice that maps a range's pages into the page tables now (reading them from the page cache, or from
#: disk when they are not cached); Linux 5.14 and later
MADV_POPULATE_READ = 22
_PAGE = 4096
_libc: Any = None


def _madvise() -> Any:
    global _libc
    if _libc is None:
        try:
            lib = ctypes.CDLL(None, use_errno=True)
            fn = lib.madvise
            fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
            fn.restype = ctypes.c_int
            _libc = fn
        except (OSError, AttributeError):  # pragma: no cover - a platform without madvise
            _libc = False
    return _libc


def available_memory() -> int:
    """Bytes of memory the kernel reports available (``MemAvailable`` in ``/proc/meminfo``; 0 when unknown)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def populate_budget() -> int:
    """The bytes :func:`populate` may map by default: a quarter of the available memory."""
    return available_memory() // 4


def populate(arrays: Iterable[np.ndarray], budget: int | None = None) -> int:
    """Map the pages of memory-mapped ``arrays`` into this process' page tables now (``MADV_POPULATE_READ``), the
    smallest arrays first, while their total stays within ``budget`` bytes (default :func:`populate_budget`); an
    array that is not a file mapping, or is larger than what is left of the budget, is skipped. The pages stay page
    cache (file RSS, shared with every process mapping the files), not the process' own memory. Returns the bytes
    mapped (0 where the system has no such advice: a Linux before 5.14, or not Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    fn = _madvise()
    if not fn:
        return 0
    left = populate_budget() if budget is None else int(budget)
    done = 0
    for a in sorted((np.asarray(x) for x in arrays if _file_backed(x)), key=lambda x: x.nbytes):
        if a.nbytes == 0 or a.nbytes > left:
            continue
        addr = int(a.__array_interface__["data"][0])
        lo = addr & ~(_PAGE - 1)
        hi = (addr + a.nbytes + _PAGE - 1) & ~(_PAGE - 1)
        if fn(lo, hi - lo, MADV_POPULATE_READ) != 0:
            if ctypes.get_errno() in (22, 38):  # EINVAL / ENOSYS: a kernel without the advice — nothing to do
                return done
            continue  # pragma: no cover - e.g. a file truncated under the mapping: its reads would fail anyway
        left -= a.nbytes
        done += a.nbytes
    return done


def _file_backed(a: Any) -> bool:
    """Whether ``a`` (or an array it is a view of) is a memory-mapped file."""
    import mmap

    b = a
    while b is not None:
        if isinstance(b, (mmap.mmap, np.memmap)):
            return True
        b = getattr(b, "base", None)
    return False


@intrinsic
def prefetch(typingctx: Any, arr: Any, idx: Any) -> Any:
    """``prefetch(a, i)`` in numba-compiled code: ask for the cache line of ``a[i]`` (1-d array, integer index; not
    bounds-checked — a prefetch never faults) without waiting for it. No effect on any value."""
    if not isinstance(arr, types.Array) or arr.ndim != 1 or not isinstance(idx, types.Integer):
        return None
    sig = types.void(arr, idx)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        aryty, idxty = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        i = context.cast(builder, args[1], idxty, types.intp)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [i], wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])  # read, keep in all levels, data
        return context.get_dummy_value()

    return sig, codegen



@njit(cache=True, nogil=True, inline="always")
def prefetch_range(arr, lo, hi):
    """In numba-compiled code: :func:`prefetch` every cache line of ``arr[lo:hi]`` (1-d; nothing when ``hi <= lo``)."""
    if hi <= lo:
        return
    step = max(64 // arr.itemsize, 1)
    for x in range(lo, hi, step):
        prefetch(arr, x)
    prefetch(arr, hi - 1)


@njit(cache=True, nogil=True, inline="always")
def prefetch_rows(arr, lo, hi):
    """In numba-compiled code: :func:`prefetch` every cache line of rows ``lo:hi`` of the 2-d ``arr`` (C-contiguous
    rows; nothing when ``hi <= lo``)."""
    w = arr.shape[1]
    if hi <= lo or w == 0:
        return
    step = max(64 // arr.itemsize, 1)
    for x in range(lo * w, hi * w, step):
        prefetch(arr[x // w], x % w)
    prefetch(arr[hi - 1], w - 1)
