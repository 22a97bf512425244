"""The compiled kernels' argument bundles: a few named groups of arrays instead of ~60 positional ones.

Each bundle is a numba structref: one Python object that a compiled kernel reads by field name, unboxed as one
pointer (a kernel call with a bundle costs less than one with its arrays one by one), and that shares its arrays
(nothing is copied). Build one with its constructor function (:func:`crawl_arrays`, :func:`score_tables`,
:func:`link_graph`, :func:`fetch_work`); a kernel reads ``bundle.name``.

* :class:`CrawlArrays` — the arrays of N crawls (N = 1 for one env), each with a leading crawl axis: every
  column of :data:`~gym_crawl.crawl.fields.CRAWL_ARRAYS`. A kernel works on crawl ``i``'s row of each.
* :class:`ScoreTables` — a topic's score tables, by page id and by link id.
* :class:`LinkGraph` — the corpus' links, and each page's out-links in the order of their targets (filled once per
  page and shared by every crawl on the corpus in the process, or none where the corpus stores them in that order:
  :func:`link_graph`).
* :class:`FetchWork` — the fetch kernel's work space.

A bundle is not picklable (it holds memory pointers): an object that keeps one rebuilds it after unpickling.
"""
from __future__ import annotations

import contextlib
import weakref
from collections.abc import Mapping
from typing import Any

import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.core.datamodel import models
from numba.experimental import structref
from numba.extending import intrinsic, register_model

from gym_crawl.crawl.fields import CRAWL_ARRAYS
from gym_crawl.relevance.scorer import LinkTable, PageTable

__all__ = ["BorrowedArray", "borrowed", "borrowed_row", "borrowed_crawls", "borrowed_graph", "borrowed_tables",
           "borrowed_work", "CrawlArrays", "FetchWork", "LinkGraph", "SCORE_TABLES", "ScoreTables", "crawl_arrays",
           "DOMAIN_RUNS_MIN_PAGES", "domain_runs", "fetch_work", "link_graph", "page_domain_of", "score_tables",
           "table_bundle"]


class _Fields(types.StructRef):
    """A bundle's numba type: its fields typed by the arrays it was built with."""

    def preprocess_fields(self, fields: Any) -> Any:
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


@structref.register
class CrawlArraysType(_Fields):
    """The numba type of :class:`CrawlArrays`."""


@structref.register
class ScoreTablesType(_Fields):
    """The numba type of :class:`ScoreTables`."""


@structref.register
class LinkGraphType(_Fields):
    """The numba type of :class:`LinkGraph`."""


@structref.register
class FetchWorkType(_Fields):
    """The numba type of :class:`FetchWork`."""


class CrawlArrays(structref.StructRefProxy):
    """The arrays of N crawls as one kernel argument (:func:`crawl_arrays`): each field of
    :data:`~gym_crawl.crawl.fields.CRAWL_ARRAYS` with a leading crawl axis (N = 1 for one env)."""


class ScoreTables(structref.StructRefProxy):
    """A topic's score tables as one kernel argument (:func:`score_tables`; fields :data:`SCORE_TABLES`)."""


class LinkGraph(structref.StructRefProxy):
    """The corpus' links, and its pages' domains, as one kernel argument (:func:`link_graph`)."""


class FetchWork(structref.StructRefProxy):
    """The fetch kernel's work space as one kernel argument (:func:`fetch_work`)."""


#: the fields of :class:`ScoreTables` (a topic's :class:`~gym_crawl.relevance.scorer.PageTable` and
#: :class:`~gym_crawl.relevance.scorer.LinkTable`): ``page_rel`` (rows,) float32 topic relevance, ``page_cat``
#: (rows, C) float32 category relevances, ``page_tfidf`` (rows,) float32 tf-idf cosine with the topic words, by
#: page row; ``link_rel`` (rows,) float32, ``link_cat`` (rows, C) float32 of each link's text, ``link_kw_url``,
#: ``link_kw_anchor`` (rows,) bool (a topic keyword in its URL / anchor), by link row; ``page_keyed``: page rows are
#: found in the page map ``page_keys`` / ``page_rows`` (else a page's row is its id and ``page_done`` says it is
#: scored); ``link_keyed``: a page's first link row is found in ``link_keys`` / ``link_bases`` (else it is the
#: page's first link id and ``link_done`` says its links are scored). :func:`~gym_crawl.crawl.kernels.page_row`
#: and :func:`~gym_crawl.crawl.kernels.link_base` read them.
SCORE_TABLES = ("page_rel", "page_cat", "page_tfidf", "link_rel", "link_cat", "link_kw_url", "link_kw_anchor",
                "page_keyed", "page_keys", "page_rows", "page_done", "link_keyed", "link_keys", "link_bases",
                "link_done")
_LINK_GRAPH = ("link_lo", "link_hi", "link_dst", "page_domain", "link_ord", "ord_done", "by_target", "dom_pair",
               "dom_cut")
_FETCH_WORK = ("t_ord", "t_sl", "t_key")

for _proxy, _type, _fields in ((CrawlArrays, CrawlArraysType, CRAWL_ARRAYS),
                               (ScoreTables, ScoreTablesType, SCORE_TABLES),
                               (LinkGraph, LinkGraphType, _LINK_GRAPH), (FetchWork, FetchWorkType, _FETCH_WORK)):
    structref.define_constructor(_proxy, _type, _fields)
    structref.define_boxing(_type, _proxy)


# The constructors, compiled once and cached (a structref proxy would compile its own in every process).
@njit(cache=True)
def _new_crawl_arrays(status, fr_pos, dom_next, dom_prev, park_next, n_par, sum_par_rel, n_relpar, sum_relpar_rel,
                      max_par_wrl, min_par_dist, link_rel, link_cat, kw_url, kw_anchor, best_parent, bp_slot, best_link,
                      discovered_step, tk_cur, tk_has, tk_mark, tslot, tmark, rel, cat, tfidf, reward, relevant, wrl,
                      change, dist, par_mean, relpar_mean, path_len, path_rel, fetch_step, dom_fetched, dom_relevant,
                      dom_eval_relevant, dom_head, park_head, slot_page, fr_pages, fr_slots, fetched, out_rem,
                      dslot_dom, map_keys, map_slots, dmap_keys, dmap_slots, ctr, sums, out_new, out_upd):
    return CrawlArrays(status, fr_pos, dom_next, dom_prev, park_next, n_par, sum_par_rel, n_relpar, sum_relpar_rel,
                       max_par_wrl, min_par_dist, link_rel, link_cat, kw_url, kw_anchor, best_parent, bp_slot,
                       best_link, discovered_step, tk_cur, tk_has, tk_mark, tslot, tmark, rel, cat, tfidf, reward,
                       relevant, wrl, change, dist, par_mean, relpar_mean, path_len, path_rel, fetch_step, dom_fetched,
                       dom_relevant, dom_eval_relevant, dom_head, park_head, slot_page, fr_pages, fr_slots, fetched,
                       out_rem, dslot_dom, map_keys, map_slots, dmap_keys, dmap_slots, ctr, sums, out_new, out_upd)


@njit(cache=True)
def _new_score_tables(page_rel, page_cat, page_tfidf, link_rel, link_cat, link_kw_url, link_kw_anchor, page_keyed,
                      page_keys, page_rows, page_done, link_keyed, link_keys, link_bases, link_done):
    return ScoreTables(page_rel, page_cat, page_tfidf, link_rel, link_cat, link_kw_url, link_kw_anchor, page_keyed,
                       page_keys, page_rows, page_done, link_keyed, link_keys, link_bases, link_done)


@njit(cache=True)
def _new_link_graph(link_lo, link_hi, link_dst, page_domain, link_ord, ord_done, by_target, dom_pair, dom_cut):
    return LinkGraph(link_lo, link_hi, link_dst, page_domain, link_ord, ord_done, by_target, dom_pair, dom_cut)


@njit(cache=True)
def _new_fetch_work(t_ord, t_sl, t_key):
    return FetchWork(t_ord, t_sl, t_key)


@intrinsic
def borrowed(typingctx, arr):
    """Inside a compiled kernel: a view of the array ``arr`` that holds no reference to its memory (no meminfo), so the
    kernel takes and drops references to it for nothing (numba's reference counting is an atomic call per array
    variable, and the step's kernels bind ~150 of them a crawl). Valid only while ``arr`` is alive: within the call
    that received it."""
    sig = arr(arr)

    def codegen(context, builder, signature, args):
        v = args[0]  # numba's array struct: meminfo, parent, nitems, itemsize, data, shape, strides
        v = builder.insert_value(v, cgutils.get_null_value(v.type.elements[0]), 0)
        return builder.insert_value(v, cgutils.get_null_value(v.type.elements[1]), 1)

    return sig, codegen


class BorrowedArray(types.Array):
    """The numba type of an array a kernel holds no reference to (:func:`borrowed_row`): an array in every way but that
    its struct has no meminfo, so numba emits no reference counting for its variables at all (a :func:`borrowed`
    array still costs an out-of-line ``NRT_incref`` / ``NRT_decref`` call per variable, bound and dropped, that returns
    at once). Its slices and the arrays made from it are plain arrays (with no meminfo either)."""

    def __init__(self, dtype: Any, ndim: int, layout: Any, readonly: bool = False, aligned: bool = True) -> None:
        name = f"borrowed array({dtype}, {ndim}d, {layout}{', readonly' if readonly else ''})"
        super().__init__(dtype, ndim, layout, readonly=readonly, name=name, aligned=aligned)


@register_model(BorrowedArray)
class _BorrowedArrayModel(models.StructModel):
    """numba's array struct with its meminfo an untracked pointer (always null)."""

    def __init__(self, dmm: Any, fe_type: Any) -> None:
        ndim = fe_type.ndim
        members = [("meminfo", types.voidptr), ("parent", types.pyobject), ("nitems", types.intp),
                   ("itemsize", types.intp), ("data", types.CPointer(fe_type.dtype)),
                   ("shape", types.UniTuple(types.intp, ndim)), ("strides", types.UniTuple(types.intp, ndim))]
        super().__init__(dmm, fe_type, members)


@intrinsic
def borrowed_row(typingctx, arr, i):
    """Inside a compiled kernel: row ``i`` (``0 <= i < len(arr)``, not checked) of the 2-d array ``arr`` (C-contiguous,
    or strided: layout "A", e.g. a page map's keys, a column of its (entries, 2) array) as a 1-d
    :class:`BorrowedArray`, which numba counts no references to. Valid only while ``arr`` is alive: within the call
    that received it."""
    if not isinstance(arr, types.Array) or arr.ndim != 2 or arr.layout not in ("C", "A") \
            or not isinstance(i, types.Integer):
        return None
    res = BorrowedArray(arr.dtype, 1, arr.layout, readonly=not arr.mutable, aligned=arr.aligned)
    sig = res(arr, i)
    contiguous = arr.layout == "C"

    def codegen(context, builder, signature, args):
        v = args[0]  # numba's array struct: meminfo, parent, nitems, itemsize, data, shape, strides
        k = context.cast(builder, args[1], signature.args[1], types.intp)
        n, stride = builder.extract_value(v, [5, 1]), builder.extract_value(v, [6, 1])
        out = cgutils.get_null_value(context.get_value_type(signature.return_type))  # meminfo and parent null
        out = builder.insert_value(out, n, 2)
        out = builder.insert_value(out, builder.extract_value(v, 3), 3)
        data = builder.extract_value(v, 4)
        if contiguous:
            row = builder.gep(data, [builder.mul(k, n)], inbounds=True)
        else:  # the row's start in bytes: i * strides[0]
            raw = builder.bitcast(data, cgutils.voidptr_t)
            row = builder.bitcast(builder.gep(raw, [builder.mul(k, builder.extract_value(v, [6, 0]))], inbounds=True),
                                  data.type)
        out = builder.insert_value(out, row, 4)
        out = builder.insert_value(out, n, [5, 0])
        return builder.insert_value(out, stride, [6, 0])

    return sig, codegen


@njit(cache=True, nogil=True)
def borrowed_crawls(c):
    """The :class:`CrawlArrays` ``c`` with every array :func:`borrowed` (for the call that received ``c``)."""
    return CrawlArrays(
        borrowed(c.status), borrowed(c.fr_pos), borrowed(c.dom_next), borrowed(c.dom_prev), borrowed(c.park_next),
        borrowed(c.n_par), borrowed(c.sum_par_rel), borrowed(c.n_relpar), borrowed(c.sum_relpar_rel),
        borrowed(c.max_par_wrl), borrowed(c.min_par_dist), borrowed(c.link_rel), borrowed(c.link_cat),
        borrowed(c.kw_url), borrowed(c.kw_anchor), borrowed(c.best_parent), borrowed(c.bp_slot),
        borrowed(c.best_link), borrowed(c.discovered_step), borrowed(c.tk_cur), borrowed(c.tk_has),
        borrowed(c.tk_mark), borrowed(c.tslot), borrowed(c.tmark), borrowed(c.rel), borrowed(c.cat),
        borrowed(c.tfidf), borrowed(c.reward), borrowed(c.relevant), borrowed(c.wrl), borrowed(c.change),
        borrowed(c.dist), borrowed(c.par_mean), borrowed(c.relpar_mean), borrowed(c.path_len), borrowed(c.path_rel),
        borrowed(c.fetch_step), borrowed(c.dom_fetched), borrowed(c.dom_relevant), borrowed(c.dom_eval_relevant),
        borrowed(c.dom_head), borrowed(c.park_head), borrowed(c.slot_page), borrowed(c.fr_pages),
        borrowed(c.fr_slots), borrowed(c.fetched), borrowed(c.out_rem), borrowed(c.dslot_dom), borrowed(c.map_keys),
        borrowed(c.map_slots), borrowed(c.dmap_keys), borrowed(c.dmap_slots), borrowed(c.ctr), borrowed(c.sums),
        borrowed(c.out_new), borrowed(c.out_upd))


@njit(cache=True, nogil=True)
def borrowed_tables(s):
    """The :class:`ScoreTables` ``s`` with every array :func:`borrowed` (for the call that received ``s``)."""
    return ScoreTables(
        borrowed(s.page_rel), borrowed(s.page_cat), borrowed(s.page_tfidf), borrowed(s.link_rel),
        borrowed(s.link_cat), borrowed(s.link_kw_url), borrowed(s.link_kw_anchor), s.page_keyed,
        borrowed(s.page_keys), borrowed(s.page_rows), borrowed(s.page_done), s.link_keyed, borrowed(s.link_keys),
        borrowed(s.link_bases), borrowed(s.link_done))


@njit(cache=True, nogil=True)
def borrowed_graph(g):
    """The :class:`LinkGraph` ``g`` with every array :func:`borrowed` (for the call that received ``g``)."""
    return LinkGraph(borrowed(g.link_lo), borrowed(g.link_hi), borrowed(g.link_dst), borrowed(g.page_domain),
                     borrowed(g.link_ord), borrowed(g.ord_done), g.by_target, borrowed(g.dom_pair),
                     borrowed(g.dom_cut))


@njit(cache=True, nogil=True)
def page_domain_of(graph, page):
    """The domain of ``page`` (``graph.page_domain[page]``). On a large web whose domains are runs of consecutive
    pages (:func:`domain_runs`), from the index of its blocks of 2^8 pages, one entry read where the web's (n_pages,)
    column is a cache and TLB miss (40 MB on the 10^7-page web; its index 0.4 MB)."""
    pair = graph.dom_pair
    if len(pair) == 0:
        return graph.page_domain[page]
    b = np.int64(page) >> _DOM_BLOCK_SHIFT
    return pair[2 * b + 1] if (np.int64(page) & _DOM_BLOCK_MASK) >= graph.dom_cut[b] else pair[2 * b]


@njit(cache=True, nogil=True)
def borrowed_work(w):
    """The :class:`FetchWork` ``w`` with every array :func:`borrowed` (for the call that received ``w``)."""
    return FetchWork(borrowed(w.t_ord), borrowed(w.t_sl), borrowed(w.t_key))


def crawl_arrays(arrays: Mapping[str, np.ndarray]) -> CrawlArrays:
    """The :class:`CrawlArrays` of ``arrays`` (every name of :data:`~gym_crawl.crawl.fields.CRAWL_ARRAYS`, each
    with a leading crawl axis: ``a[None]`` of one crawl's column is a view with one)."""
    missing = [n for n in CRAWL_ARRAYS if n not in arrays]
    if missing:
        raise KeyError(f"crawl_arrays: missing {missing}")
    return _new_crawl_arrays(*(arrays[n] for n in CRAWL_ARRAYS))


def score_tables(page_rel: np.ndarray, page_cat: np.ndarray, page_tfidf: np.ndarray, link_rel: np.ndarray,
                 link_cat: np.ndarray, link_kw_url: np.ndarray, link_kw_anchor: np.ndarray, page_keyed: bool,
                 page_keys: np.ndarray, page_rows: np.ndarray, page_done: np.ndarray, link_keyed: bool,
                 link_keys: np.ndarray, link_bases: np.ndarray, link_done: np.ndarray) -> ScoreTables:
    """A topic's :class:`ScoreTables` (see :data:`SCORE_TABLES`)."""
    return _new_score_tables(page_rel, page_cat, page_tfidf, link_rel, link_cat, link_kw_url, link_kw_anchor,
                             bool(page_keyed), page_keys, page_rows, page_done, bool(link_keyed), link_keys, link_bases,
                             link_done)


#: PageTable → ((its generation, the link table's id and generation), its ScoreTables)
_TABLE_BUNDLES: weakref.WeakKeyDictionary[PageTable, tuple[tuple[int, int, int], ScoreTables]] = \
    weakref.WeakKeyDictionary()


def table_bundle(pages: PageTable, links: LinkTable) -> ScoreTables:
    """The :class:`ScoreTables` of a topic's page and link tables, built once per state of their arrays (a table
    replaces its arrays when it grows or turns dense: ask again after scoring pages)."""
    key = (pages.gen, id(links), links.gen)
    hit = _TABLE_BUNDLES.get(pages)
    if hit is None or hit[0] != key:
        hit = _TABLE_BUNDLES[pages] = (key, score_tables(
            pages.rel, pages.cat, pages.tfidf, links.rel, links.cat, links.kw_url, links.kw_anchor, pages.keyed,
            pages.keys, pages.slots, pages.done, links.keyed, links.keys, links.slots, links.done))
    return hit[1]


#: id of a corpus' link_dst array → (a weak reference to it, its link_ord, its ord_done): every crawl on the corpus
#: in the process shares them (an entry whose array is gone is dropped with it)
_LINK_ORDERS: dict[int, tuple[weakref.ref, np.ndarray, np.ndarray]] = {}
#: up to this many links, :func:`link_graph` fills every page's order when it first sees a corpus (≈ 50 ms per
#: million links); beyond, a fetch sorts its page's targets
EAGER_ORDER_LINKS = 2_000_000
#: id of a corpus' page_domain array → (a weak reference to it, its index of domain runs: ``dom_pair``, ``dom_cut``),
#: shared as :data:`_LINK_ORDERS` is
_DOMAIN_RUNS: dict[int, tuple[weakref.ref, np.ndarray, np.ndarray]] = {}
#: from this many pages on (a column of 1 MB), :func:`link_graph` indexes the runs of pages of one domain
DOMAIN_RUNS_MIN_PAGES = 1 << 18
#: a block of the runs' index holds 2^8 pages (a power-law web's domain, 400 pages, starts in at most one)
_DOM_BLOCK_SHIFT = 8
_DOM_BLOCK_MASK = (1 << _DOM_BLOCK_SHIFT) - 1
_NO_RUNS = (np.zeros(0, np.int32), np.zeros(0, np.int16))


def domain_runs(page_domain: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The index :func:`page_domain_of` reads, of a web of :data:`DOMAIN_RUNS_MIN_PAGES` pages or more whose domains
    are runs of consecutive pages, no block of 2^8 pages holding the start of more than one run past its first page
    (else none: empty arrays): ``dom_pair`` (2 blocks,) int32 the domain of each block's first page and the domain
    from its cut on, ``dom_cut`` (blocks,) int16 the cut (the offset in the block where the second run starts; 2^8:
    none). Built once per array in the process (one pass over the column, in chunks)."""
    n = len(page_domain)
    if n < DOMAIN_RUNS_MIN_PAGES:
        return _NO_RUNS
    hit = _DOMAIN_RUNS.get(id(page_domain))
    if hit is not None and hit[0]() is page_domain:
        return hit[1], hit[2]
    nb = -(-n // (1 << _DOM_BLOCK_SHIFT))
    pair = np.empty(2 * nb, np.int32)
    pair[0::2] = page_domain[::1 << _DOM_BLOCK_SHIFT]
    pair[1::2] = pair[0::2]
    cut = np.full(nb, 1 << _DOM_BLOCK_SHIFT, np.int16)
    last = -1
    for a in range(0, n - 1, 1 << 22):  # in chunks: no (n_pages,) temporary
        chunk = np.asarray(page_domain[a:min(n, a + (1 << 22) + 1)])
        starts = np.flatnonzero(chunk[1:] != chunk[:-1]) + (a + 1)  # pages that start a run
        starts = starts[(starts & _DOM_BLOCK_MASK) != 0]  # those past their block's first page
        blocks = starts >> _DOM_BLOCK_SHIFT
        if len(blocks) and (blocks[0] == last or np.any(blocks[1:] == blocks[:-1])):
            return _NO_RUNS  # two runs start within one block
        cut[blocks] = starts & _DOM_BLOCK_MASK
        pair[2 * blocks + 1] = chunk[starts - a]
        last = blocks[-1] if len(blocks) else last
    key = id(page_domain)
    with contextlib.suppress(TypeError):  # an array that takes no weak reference is not shared
        _DOMAIN_RUNS[key] = (weakref.ref(page_domain, lambda _r: _DOMAIN_RUNS.pop(key, None)), pair, cut)
    return pair, cut


def link_graph(link_lo: np.ndarray, link_hi: np.ndarray, link_dst: np.ndarray, page_domain: np.ndarray, *,
               ordered: bool = True, by_target: bool = False) -> LinkGraph:
    """The :class:`LinkGraph`: page ``p``'s links are ``link_lo[p]:link_hi[p]`` ((n_pages,) int64 each), their
    targets ``link_dst`` (n_links,) int32; ``page_domain`` (n_pages,) int32.

    With ``ordered`` (a corpus whose links do not change), ``link_ord`` (n_links,) int32 holds each page's links in
    ascending target page (ties in link order) as offsets from ``link_lo[p]``, valid where ``ord_done[p]``
    ((n_pages,) bool): :func:`~gym_crawl.crawl.kernels.fetch_page` then walks a page's targets in page order
    without sorting them. One pair per corpus (its ``link_dst`` array) in the process, filled for every page up front,
    on a corpus of up to :data:`EAGER_ORDER_LINKS` links. Without ``ordered`` (a live web, whose link arrays grow),
    and on a larger corpus, both are empty and the kernel sorts a page's targets at each fetch (the same order): an
    (n_links,) array written page by page at first fetch would hold a page of memory for nearly every page fetched on
    a large web — 174 MB of a process' own memory after 64 crawls of the 10^7-page web — where a crawl's memory must
    follow the pages it touched.

    With ``ordered`` and ``by_target`` (a corpus that stores each page's links in ascending target, ties in link
    order: :attr:`~gym_crawl.corpus.core.Corpus.links_by_target`), no order is kept or sorted at all: the kernel walks
    a page's links as they are stored, whatever the web's size.

    With ``ordered``, on a web of :data:`DOMAIN_RUNS_MIN_PAGES` pages or more whose page ids run through its domains
    (the power-law webs': a domain's pages are consecutive), the runs' index :func:`page_domain_of` reads instead of
    ``page_domain``."""
    from gym_crawl.crawl.link_order import fill_link_order

    direct = bool(ordered and by_target)
    if direct or not ordered or len(link_dst) > EAGER_ORDER_LINKS:
        link_ord, ord_done = np.zeros(0, np.int32), np.zeros(0, np.bool_)
    else:
        hit = _LINK_ORDERS.get(id(link_dst))
        if hit is not None and hit[0]() is link_dst and len(hit[2]) == len(link_lo):
            link_ord, ord_done = hit[1], hit[2]
        else:
            link_ord, ord_done = np.empty(len(link_dst), np.int32), np.zeros(len(link_lo), np.bool_)
            fill_link_order(link_lo, link_hi, link_dst, link_ord, ord_done)
            key = id(link_dst)
            with contextlib.suppress(TypeError):  # an array that takes no weak reference is not shared
                _LINK_ORDERS[key] = (weakref.ref(link_dst, lambda _r: _LINK_ORDERS.pop(key, None)), link_ord,
                                     ord_done)
    runs = domain_runs(page_domain) if ordered else _NO_RUNS
    return _new_link_graph(link_lo, link_hi, link_dst, page_domain, link_ord, ord_done, direct, *runs)


def fetch_work(t_ord: np.ndarray, t_sl: np.ndarray, t_key: np.ndarray) -> FetchWork:
    """The :class:`FetchWork` space, per out-link of the fetched page (max out-degree,): ``t_ord`` int32, the
    page's links in target order when the :class:`LinkGraph` holds none (a web whose links grow); ``t_sl`` int32,
    the slot of each target :func:`~gym_crawl.crawl.kernels.fetch_page` updated (in ``out_upd``'s order, read by
    :func:`~gym_crawl.crawl.kernels.topk_update_slots`); ``t_key`` int64, sort keys (target << 32 | offset)."""
    return _new_fetch_work(t_ord, t_sl, t_key)
