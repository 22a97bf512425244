"""The crawl state's columns: one table from which every per-page and per-domain array is
allocated and reset.

A :class:`~gym_crawl.crawl.state.CrawlState` is columnar and **sized by the crawl**: its per-page columns are
indexed by *slot*, not by page id. A page gets the next slot the first time the crawl touches it (it enters the
frontier, or is fetched as a seed); :mod:`gym_crawl.pagemap` finds a page's slot. The columns hold
``slot_capacity`` entries and double when a fetch could overflow them, so a crawl's memory follows the pages
it touched (about 200 bytes each, :func:`crawl_bytes`), never the web's size. The per-domain columns are sized the
same way: a domain gets the next *domain slot* when the crawl first counts or chains one of its pages (a crawl never
holds more domain slots than page slots, so both share one capacity), found through a second map (``dmap_keys``,
``dmap_slots``; ``dslot_dom`` the domain of each domain slot). A reset empties both maps and
puts the used slots back at their reset values, in O(pages the last episode touched). Listing the columns
here, once, with their dtype, shape and reset value, means a column added to the state is reset and grown by
construction.

Stores (``Field.store``):

``frontier``  the frontier store: status, slot positions, the per-domain chains of frontier pages, the
              aggregates over all links that discovered a page (Han 2018 §3.1: parent information is
              progressively updated as pages are crawled), the top-K reducer's scores and the work flags
              of the compiled step (indexed by slot)
``page``      statistics of fetched pages (their own scores and Han/TRES path quantities; by slot)
``domain``    per-domain counters and chain heads (indexed by domain slot)

The slot arrays (:data:`SLOT_ARRAYS`, indexed by position, never reset: the counters say how much of them is
valid): ``slot_page`` (the page of each slot), ``fr_pages`` / ``fr_slots`` (frontier pages and their slots, the
first ``fr_size`` valid), ``fetched`` (pages in fetch order, the first ``n_fetched`` valid), ``out_rem`` (the
fetch kernel's removed pages), ``dslot_dom`` (the domain of each domain slot). The page map and the domain map
(:data:`MAP_ARRAYS`) hold twice as many entries as there are slots. Chains (``dom_next``, ``dom_prev``,
``dom_head``, ``park_next``) link *slots*; ``best_parent`` and the arrays above hold *page ids*.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from gym_crawl.pagemap import rehash

__all__ = ["Field", "FIELDS", "FRONTIER_FIELDS", "PAGE_FIELDS", "DOMAIN_FIELDS", "SLOT_ARRAYS", "MAP_ARRAYS",
           "CRAWL_ARRAYS", "MIN_SLOTS", "ClearPlan", "allocate", "clear_plan", "clear_rows", "crawl_bytes", "env_rows",
           "grow", "rehash_maps", "reset_slots", "reset_rows", "slot_bytes"]

#: the slot capacity a crawl starts with (it doubles as the crawl touches more pages)
MIN_SLOTS = 1024


@dataclass(frozen=True)
class Field:
    """One column of the crawl state.

    Args:
        name: attribute name on the state.
        dtype: numpy dtype.
        store: ``"frontier"``, ``"page"`` (both indexed by slot) or ``"domain"`` (by domain slot).
        reset: value at allocation and after reset.
        per_category: ``True`` for (n, C) arrays with one column per category slot.
        doc: what it holds.
    """

    name: str
    dtype: type
    store: str
    reset: float = 0
    per_category: bool = False
    doc: str = ""

    def shape(self, n_slots: int, n_categories: int) -> tuple[int, ...]:
        return (n_slots, n_categories) if self.per_category else (n_slots,)


_F, _P, _D = "frontier", "page", "domain"

FIELDS: tuple[Field, ...] = (
    # ---- frontier store: structure
    Field("status", np.int8, _F, 0, doc="UNSEEN / FRONTIER / VISITED / BLOCKED"),
    Field("fr_pos", np.int32, _F, -1, doc="position of a frontier page in fr_pages, -1 otherwise"),
    Field("dom_next", np.int32, _F, -1,
          doc="slot of the next frontier page of the same domain (chains kept while a cap is active)"),
    Field("dom_prev", np.int32, _F, -1, doc="slot of the previous frontier page of the same domain"),
    Field("park_next", np.int32, _F, -1, doc="slot of the next parked page of the same domain (a window)"),
    # ---- frontier store: aggregates over the discovering links / fetched parents
    Field("n_par", np.int32, _F, doc="fetched parents"),
    Field("sum_par_rel", np.float32, _F, doc="sum of the fetched parents' topic relevance"),
    Field("n_relpar", np.int32, _F, doc="relevant fetched parents"),
    Field("sum_relpar_rel", np.float32, _F, doc="sum of the relevant parents' topic relevance"),
    Field("max_par_wrl", np.float32, _F, doc="max smoothed ancestor relevance over parents (Han's w_rl)"),
    Field("min_par_dist", np.int16, _F, doc="min over parents of their distance from the last relevant page"),
    Field("link_rel", np.float32, _F, doc="topic relevance of the best discovering link's text"),
    Field("link_cat", np.float32, _F, per_category=True, doc="category relevances of that link's text"),
    Field("kw_url", np.bool_, _F, doc="a topic keyword in the URL of some discovering link"),
    Field("kw_anchor", np.bool_, _F, doc="a topic keyword in the anchor of some discovering link"),
    Field("best_parent", np.int32, _F, -1, doc="the most topic-relevant fetched parent (a page id)"),
    Field("bp_slot", np.int32, _F, -1, doc="the slot of best_parent (what the kernels read its statistics by)"),
    Field("best_link", np.int64, _F, -1, doc="link id (into corpus.link_dst / link text arrays) of the best "
                                             "discovering link, the one whose text gives link_rel"),
    Field("discovered_step", np.int32, _F, doc="env step at which the page entered the frontier"),
    # ---- frontier store: the top-K reducer's scores and the compiled step's work flags
    Field("tk_cur", np.float32, _F, doc="top-K reducer: the score of the page's live heap entry"),
    Field("tk_has", np.bool_, _F, doc="top-K reducer: the page has a live heap entry"),
    Field("tk_mark", np.bool_, _F, doc="top-K reducer: in the selection being built (False between calls)"),
    Field("tslot", np.int32, _F, -1, doc="work: the page's position among the fetched page's targets, or "
                                         "among the previous candidates (-1 between calls)"),
    Field("tmark", np.bool_, _F, doc="work: the page gained a parent this step (False between calls)"),
    # ---- fetched-page statistics
    Field("rel", np.float32, _P, doc="topic relevance (cosine) of the fetched page"),
    Field("cat", np.float32, _P, per_category=True, doc="category relevances of the fetched page"),
    Field("tfidf", np.float32, _P, doc="tf-idf cosine with the topic words"),
    Field("reward", np.float32, _P, doc="reward of the fetch"),
    Field("relevant", np.bool_, _P, doc="the reward scheme's relevant flag"),
    Field("wrl", np.float32, _P, doc="Han's exponentially smoothed ancestor relevance"),
    Field("change", np.float32, _P, doc="relevance change vs the parents' max w_rl"),
    Field("dist", np.int16, _P, doc="distance from the last relevant page (capped)"),
    Field("par_mean", np.float32, _P, doc="mean relevance of its parents"),
    Field("relpar_mean", np.float32, _P, doc="mean relevance of its relevant parents"),
    Field("path_len", np.int32, _P, doc="length of the web path through best parents (TRES)"),
    Field("path_rel", np.int32, _P, doc="relevant pages on that path"),
    Field("fetch_step", np.int32, _P, -1, doc="env step at which the page was fetched"),
    # ---- per domain
    Field("dom_fetched", np.int32, _D, doc="fetched pages of the domain"),
    Field("dom_relevant", np.int32, _D, doc="fetched pages with the relevant flag"),
    Field("dom_eval_relevant", np.int32, _D, doc="fetched pages relevant by ground truth (metrics only)"),
    Field("dom_head", np.int32, _D, -1, doc="slot of the first frontier page of the domain's chain"),
    Field("park_head", np.int32, _D, -1, doc="slot of the first parked page of the domain (a window)"),
)
FRONTIER_FIELDS = tuple(f for f in FIELDS if f.store == _F)
PAGE_FIELDS = tuple(f for f in FIELDS if f.store == _P)
DOMAIN_FIELDS = tuple(f for f in FIELDS if f.store == _D)
#: position-indexed arrays of slot capacity (never reset: the counters say how much of them is valid)
SLOT_ARRAYS: tuple[tuple[str, type], ...] = (("slot_page", np.int32), ("fr_pages", np.int32), ("fr_slots", np.int32),
                                             ("fetched", np.int32), ("out_rem", np.int32), ("dslot_dom", np.int32))
#: the page map and the domain map (:mod:`gym_crawl.pagemap`): twice the slot capacity, keys -1 when empty
MAP_ARRAYS: tuple[tuple[str, type], ...] = (("map_keys", np.int32), ("map_slots", np.int32), ("dmap_keys", np.int32),
                                            ("dmap_slots", np.int32))
_KEYS = ("map_keys", "dmap_keys")
#: each map's keys and slots are the two columns of one (entries, 2) int32 array (views of it), so an entry's key
#: and slot share a cache line: a probe that finds its page has its slot in the same load
_PAIRS = (("map_keys", "map_slots"), ("dmap_keys", "dmap_slots"))


#: the arrays of a crawl the fetch kernel reads and writes (:class:`~gym_crawl.crawl.bundles.CrawlArrays`): every
#: column of :data:`FIELDS`, the slot arrays, the page map, the counters ``ctr`` (``kernels.N_COUNTERS``,) int64 and
#: ``sums`` (1,) float64, and the kernel's output buffers ``out_new``, ``out_upd`` (max out-degree,) int32
CRAWL_ARRAYS: tuple[str, ...] = (tuple(f.name for f in FIELDS) + tuple(name for name, _ in SLOT_ARRAYS)
                                 + tuple(name for name, _ in MAP_ARRAYS) + ("ctr", "sums", "out_new", "out_upd"))


def allocate(n_slots: int, n_categories: int, n_envs: int | None = None) -> dict[str, np.ndarray]:
    """Every column of :data:`FIELDS` (``n_slots`` slots and domain slots) plus the slot arrays and empty page and
    domain maps of ``2 * n_slots`` entries, at their reset values.

    ``n_envs``: allocate N crawls' columns stacked, each array with a leading env axis (``(N, *shape)``),
    for the batched vector step; row ``i`` of every array is crawl ``i``'s column (see :func:`env_rows`)."""
    out = _zeroed(n_slots, n_categories, n_envs)
    for f in FIELDS:
        if f.reset != 0:
            out[f.name][...] = f.reset
    _empty_maps(out, None)
    return out


def _zeroed(n_slots: int, n_categories: int, n_envs: int | None) -> dict[str, np.ndarray]:
    """Every array :func:`allocate` makes, zeroed. N crawls' stacked arrays are views of one zeroed allocation (each
    at a 64-byte boundary, :data:`_SKEW` bytes after the previous one's end); one crawl's are allocated one by one
    (as one buffer, a spawned worker's single crawl held 5 MB more of malloc's heap after its doublings: 100.1 against
    95.0 MB USS in ``gym-crawl bench memory --workers 2 --modes cached``), and its reset clears them column by column
    (:func:`reset_slots`: :func:`clear_plan` finds no one buffer). numpy asks the system for
    huge pages for an allocation of 4 MB or more, so the batch's columns are faulted in 2 MB at a time instead of 4 KB —
    a long crawl doubles its columns mid-episode, and writing the fresh columns page fault by page fault was most of
    what a doubling cost (measured in benchmarks/RESULTS.md, "The batched env's step"). One buffer also lets a reset
    clear every column in one compiled call (:func:`clear_plan`)."""
    lead = () if n_envs is None else (int(n_envs),)
    specs: list[tuple[str, tuple[int, ...], np.dtype[Any]]] = [
        (f.name, lead + f.shape(n_slots, n_categories), np.dtype(f.dtype)) for f in FIELDS]
    specs += [(name, lead + (n_slots,), np.dtype(dt)) for name, dt in SLOT_ARRAYS]
    specs += [(k, lead + (2 * n_slots, 2), np.dtype(np.int32)) for k, _ in _PAIRS]
    if n_envs is None:
        return _split_pairs({name: np.zeros(shape, dt) for name, shape, dt in specs})
    offsets, total = [], 0
    for _, shape, dt in specs:
        offsets.append(total)
        total += -(-int(np.prod(shape)) * dt.itemsize // 64) * 64 + _SKEW
    buf = np.zeros(total + 64, np.uint8)
    start = -buf.ctypes.data % 64
    return _split_pairs({name: buf[start + o:start + o + int(np.prod(shape)) * dt.itemsize].view(dt).reshape(shape)
                         for (name, shape, dt), o in zip(specs, offsets)})


#: bytes between two stacked arrays beyond their 64-byte rounding: 5 cache lines, so that the same slot of different
#: columns falls in different cache sets. Without it every stacked column's size is a multiple of 4 KB (N crawls × a
#: power of two of slots), so slot ``s`` of every 4-byte column of every crawl sits at the same address modulo 4 KB
#: (the span of the L1's sets; one crawl's columns modulo 256 KB and more): the ≈ 20 columns a fetch touches at one
#: slot compete for one set. 5 is odd, so 64 arrays in a row fall in 64 different sets. (Measured together with the
#: fetch's prefetches of its link rows and new slots; each alone gained nothing: benchmarks/RESULTS.md, "the fetch
#: writes only the task's columns".)
_SKEW = 5 * 64


def _split_pairs(out: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``out`` with each map's (..., entries, 2) array replaced by its keys' and slots' columns (views)."""
    for k, s in _PAIRS:
        pair = out.pop(k)
        out[k], out[s] = pair[..., 0], pair[..., 1]
    return out


def _entries(keys: np.ndarray) -> np.ndarray | None:
    """The (..., entries, 2) array whose column 0 is ``keys`` (a map's keys as :func:`_zeroed` makes them), or
    None for keys not interleaved with their slots."""
    if keys.dtype != np.int32 or keys.ndim == 0 or keys.strides[-1] != 8:
        return None
    return np.lib.stride_tricks.as_strided(keys, keys.shape + (2,), keys.strides + (4,))


def slot_bytes(n_categories: int) -> int:
    """Bytes one slot takes in every per-slot and per-domain-slot column, slot array and the two maps (two entries
    each)."""
    total = 0
    for f in FIELDS:
        total += np.dtype(f.dtype).itemsize * (n_categories if f.per_category else 1)
    total += sum(np.dtype(dt).itemsize for _, dt in SLOT_ARRAYS)
    return total + 2 * sum(np.dtype(dt).itemsize for _, dt in MAP_ARRAYS)


def crawl_bytes(n_slots: int, n_categories: int) -> int:
    """Bytes :func:`allocate` takes for one crawl of ``n_slots`` slots (computed, nothing allocated)."""
    return int(n_slots) * slot_bytes(n_categories)


def env_rows(stacked: dict[str, np.ndarray], i: int) -> dict[str, np.ndarray]:
    """Crawl ``i``'s columns of :func:`allocate` ``(..., n_envs=N)``: views (writes go to the stack)."""
    return {name: a[i] for name, a in stacked.items()}


def grow(arrays: dict[str, np.ndarray], n_slots: int, n_categories: int,
         n_envs: int | None = None) -> dict[str, np.ndarray]:
    """New arrays of ``n_slots`` slots holding what ``arrays`` hold (slot and domain-slot columns and slot arrays
    copied into their first slots); the page and domain maps are left empty: rehash them with :func:`rehash_maps`."""
    out = _zeroed(n_slots, n_categories, n_envs)
    ax = 0 if n_envs is None else 1  # the slot axis
    resets = {f.name: f.reset for f in FIELDS}
    for name, b in out.items():  # each array written once: the old slots copied, the new ones set if not zero
        if name in _MAP:
            continue
        a = arrays[name]
        n = a.shape[ax]
        b[(slice(None),) * ax + (slice(0, n),)] = a
        if resets.get(name, 0) != 0:
            b[(slice(None),) * ax + (slice(n, None),)] = resets[name]
    _empty_maps(out, None)
    return out


_MAP = frozenset(name for name, _ in MAP_ARRAYS)


def rehash_maps(arrays: dict[str, np.ndarray], n_slots: int, n_dslots: int) -> None:
    """Fill the empty page and domain maps of one crawl's ``arrays`` (after :func:`grow`) with its ``n_slots`` page
    slots and ``n_dslots`` domain slots."""
    rehash(arrays["slot_page"], n_slots, arrays["map_keys"], arrays["map_slots"])
    rehash(arrays["dslot_dom"], n_dslots, arrays["dmap_keys"], arrays["dmap_slots"])


def reset_slots(arrays: dict[str, np.ndarray], n_used: int) -> None:
    """Put slots ``0..n_used-1`` of every per-slot and per-domain-slot column back at their reset values (a crawl
    never holds more domain slots than page slots) and empty the page and domain maps."""
    for f in FIELDS:
        _fill(arrays[f.name], None, n_used, f.reset)
    _empty_maps(arrays, None)


def reset_rows(stacked: dict[str, np.ndarray], rows: np.ndarray, n_used: int) -> None:
    """:func:`reset_slots` for crawls ``rows`` of stacked arrays (:func:`allocate` with ``n_envs``) at once: slots
    ``0..n_used-1`` of every column (``n_used``: the most any of them used; the slots past a crawl's own count are at
    their reset values already), and the page and domain maps emptied."""
    whole = len(rows) == next(iter(stacked.values())).shape[0] and bool(np.all(rows == np.arange(len(rows))))
    sel: slice | np.ndarray = slice(None) if whole else np.asarray(rows)
    for f in FIELDS:
        _fill(stacked[f.name], sel, n_used, f.reset)
    _empty_maps(stacked, sel)


def _empty_maps(arrays: dict[str, np.ndarray], sel: slice | np.ndarray | None) -> None:
    """Every entry of the page and domain maps of ``arrays`` empty (of crawls ``sel`` of stacked arrays; None: all):
    key -1, and slot -1 where the slots are interleaved with the keys (one ``memset`` of the entries)."""
    for k in _KEYS:
        a = arrays[k]
        e = _entries(a)
        if e is None:
            _fill(a, sel, a.shape[-1], -1)
        else:
            e.view(np.uint8)[... if sel is None else sel] = 0xFF


def _fill(a: np.ndarray, sel: slice | np.ndarray | None, n: int, value: float) -> None:
    """``a[sel, :n] = value`` (``sel`` None: ``a[:n] = value``, one crawl's column); for 0 and -1 of an integer,
    boolean or (0 only) float column as bytes (all 0x00 or all 0xFF, the same bits), which numpy writes with
    ``memset`` — 2–3× faster than its element loop for a 4- or 8-byte value."""
    lead = () if sel is None else (sel,)
    if (value == 0 or (value == -1 and a.dtype.kind in "iu")) and a.strides[-1] == a.itemsize:
        b = a.view(np.uint8)  # the last axis as bytes: (..., slots * itemsize) or (..., slots, C * itemsize)
        last = a.ndim == len(lead) + 1  # the slot axis is the last one
        b[lead + (slice(0, n * a.itemsize if last else n),)] = 0 if value == 0 else 0xFF
        return
    a[lead + (slice(0, n),)] = value


class ClearPlan(NamedTuple):
    """Where :func:`clear_rows` writes the reset values of crawls whose arrays are views of one buffer (what
    :func:`allocate` makes): for each column and each map, its first byte in ``buf``, the bytes from one crawl's row to
    the next, the bytes a slot takes, the byte its reset value is made of, and what it is cleared over."""

    buf: np.ndarray  #: (bytes,) uint8: the allocation every array is a view of
    off: np.ndarray  #: (k,) int64: byte offset in ``buf`` of crawl 0's slot 0
    row: np.ndarray  #: (k,) int64: bytes between two crawls' rows (0 for one crawl's arrays)
    width: np.ndarray  #: (k,) int64: bytes per slot (a map: bytes of its whole row)
    fill: np.ndarray  #: (k,) uint8: 0x00 or 0xFF
    kind: np.ndarray  #: (k,) int64: :data:`_BY_SLOT`, :data:`_BY_DSLOT` or :data:`_WHOLE`


#: :class:`ClearPlan` kinds: cleared over the crawl's page slots in use, its domain slots in use, or its whole row
_BY_SLOT, _BY_DSLOT, _WHOLE = 0, 1, 2


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def clear_plan(arrays: dict[str, np.ndarray], stacked: bool) -> ClearPlan | None:
    """The :class:`ClearPlan` of ``arrays`` (one crawl's, or N crawls' with ``stacked``: a leading crawl axis), or
    None when they are not views of one buffer laid out as :func:`allocate` lays them out (then :func:`reset_rows` and
    :func:`reset_slots` clear them). Build it again when the arrays are replaced."""
    a0 = arrays["slot_page"]
    buf = _root(a0)
    if buf.dtype != np.uint8 or buf.ndim != 1 or not buf.flags.c_contiguous:
        return None
    base, end = buf.ctypes.data, buf.ctypes.data + buf.nbytes
    rows = int(a0.shape[0]) if stacked else 1
    cols: list[tuple[int, int, int, int, int]] = []

    def add(a: np.ndarray, one: np.ndarray, width: int, fill: int, kind: int) -> bool:
        """``a``: the array (a map: its keys); ``one``: the bytes of crawl 0's row, contiguous (a map: its entries)."""
        if _root(a) is not buf or a.ndim < 1 + stacked or not one.flags.c_contiguous:
            return False
        step = int(a.strides[0]) if stacked else 0
        if stacked and rows > 1 and step < one.nbytes:
            return False
        off = int(a.ctypes.data) - base
        if off < 0 or a.ctypes.data + step * (rows - 1) + one.nbytes > end:
            return False
        cols.append((off, step, width, fill, kind))
        return True

    for f in FIELDS:
        a = arrays[f.name]
        if f.reset == 0:
            fill = 0
        elif f.reset == -1 and a.dtype.kind in "iu":
            fill = 0xFF
        else:
            return None
        if not add(a, a[0] if stacked else a, a.itemsize * (a.shape[-1] if f.per_category else 1), fill,
                   _BY_DSLOT if f.store == _D else _BY_SLOT):
            return None
    for k in _KEYS:
        keys = arrays[k]
        e = _entries(keys)
        if e is None:
            return None
        one = e[0] if stacked else e
        if not add(keys, one, one.nbytes, 0xFF, _WHOLE):
            return None
    c = np.array(cols, np.int64).reshape(-1, 5)
    return ClearPlan(buf, c[:, 0].copy(), c[:, 1].copy(), c[:, 2].copy(), c[:, 3].astype(np.uint8), c[:, 4].copy())


def clear_rows(plan: ClearPlan, rows: np.ndarray, n_slots: np.ndarray, n_dslots: np.ndarray) -> None:
    """What :func:`reset_rows` (or, for one crawl's plan and ``rows = [0]``, :func:`reset_slots`) does, in one
    compiled call: each crawl ``r`` of ``rows`` has its slots ``0..n_slots[r]-1`` of every page column and
    ``0..n_dslots[r]-1`` of every domain column put back at their reset values (the slots past them are there
    already: a crawl's counters say what it touched), and its page and domain maps emptied."""
    _clear(plan.buf, plan.off, plan.row, plan.width, plan.fill, plan.kind, rows, n_slots, n_dslots)


@njit(cache=True, nogil=True)
def _clear(buf, off, row, width, fill, kind, rows, n_slots, n_dslots):
    for c in range(len(off)):  # column by column, each crawl's row in turn: the writes in address order
        k = kind[c]
        for r in rows:
            n = width[c] * (n_slots[r] if k == _BY_SLOT else n_dslots[r]) if k != _WHOLE else width[c]
            s = off[c] + r * row[c]
            buf[s:s + n] = fill[c]
