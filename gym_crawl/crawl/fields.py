"""The crawl state's columns: one table from which every per-page and per-domain array is
allocated and reset.

A :class:`~gym_crawl.crawl.state.CrawlState` is columnar: flat numpy arrays indexed by page id
(or domain id), allocated once per env and reset in O(pages the last episode touched). Listing
them here, once, with their dtype, shape and reset value, means an array added to the state is
reset between episodes by construction (before, ``reset`` re-listed 23 arrays by hand).

Stores (``Field.store``):

``frontier``  the frontier store: status, slot positions, the per-domain chains of frontier pages
              and the aggregates over all links that discovered a page (Han 2018 §3.1: parent
              information is progressively updated as pages are crawled)
``page``      statistics of fetched pages (their own scores and Han/TRES path quantities)
``domain``    per-domain counters and chain heads (reset whole: a few thousand entries)

Two arrays are not indexed by page and are never reset, only overwritten from position 0:
``fr_pages`` (frontier slots, the first ``fr_size`` valid) and ``fetched`` (pages in fetch order,
the first ``n_fetched`` valid).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Field", "FIELDS", "FRONTIER_FIELDS", "PAGE_FIELDS", "DOMAIN_FIELDS", "SLOT_ARRAYS", "CRAWL_ARRAYS",
           "allocate", "crawl_bytes", "env_rows", "reset_pages", "reset_domains"]


@dataclass(frozen=True)
class Field:
    """One column of the crawl state.

    Args:
        name: attribute name on the state.
        dtype: numpy dtype.
        store: ``"frontier"``, ``"page"`` (both indexed by page id) or ``"domain"``.
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

    def shape(self, n_pages: int, n_domains: int, n_categories: int) -> tuple[int, ...]:
        n = n_domains if self.store == "domain" else n_pages
        return (n, n_categories) if self.per_category else (n,)


_F, _P, _D = "frontier", "page", "domain"

FIELDS: tuple[Field, ...] = (
    # ---- frontier store: structure
    Field("status", np.int8, _F, 0, doc="UNSEEN / FRONTIER / VISITED / BLOCKED"),
    Field("fr_pos", np.int32, _F, -1, doc="slot of a frontier page in fr_pages, -1 otherwise"),
    Field("dom_next", np.int32, _F, -1,
          doc="next frontier page of the same domain (chains kept while a cap is active)"),
    Field("dom_prev", np.int32, _F, -1, doc="previous frontier page of the same domain"),
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
    Field("best_parent", np.int32, _F, -1, doc="the most topic-relevant fetched parent"),
    Field("best_link", np.int64, _F, -1, doc="link id (into corpus.link_dst / link text arrays) of the best "
                                             "discovering link, the one whose text gives link_rel"),
    Field("discovered_step", np.int32, _F, doc="env step at which the page entered the frontier"),
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
    Field("dom_head", np.int32, _D, -1, doc="first frontier page of the domain's chain"),
)
FRONTIER_FIELDS = tuple(f for f in FIELDS if f.store == _F)
PAGE_FIELDS = tuple(f for f in FIELDS if f.store == _P)
DOMAIN_FIELDS = tuple(f for f in FIELDS if f.store == _D)
#: position-indexed arrays (never reset: the counters say how much of them is valid)
SLOT_ARRAYS: tuple[tuple[str, type], ...] = (("fr_pages", np.int32), ("fetched", np.int32))


#: the arrays of a crawl the fetch kernel reads and writes (:class:`~gym_crawl.crawl.bundles.CrawlArrays`): every
#: column of :data:`FIELDS`, the slot arrays, the counters ``ctr`` (``kernels.N_COUNTERS``,) int64 and ``sums`` (1,)
#: float64, and the kernel's output buffers ``out_new``, ``out_upd`` (max out-degree,) int32 and ``out_rem``
#: (n_pages,) int32
CRAWL_ARRAYS: tuple[str, ...] = (tuple(f.name for f in FIELDS) + tuple(name for name, _ in SLOT_ARRAYS)
                                 + ("ctr", "sums", "out_new", "out_upd", "out_rem"))

def allocate(n_pages: int, n_domains: int, n_categories: int, n_envs: int | None = None) -> dict[str, np.ndarray]:
    """Every column of :data:`FIELDS` plus the slot arrays, at their reset values.

    ``n_envs``: allocate N crawls' columns stacked, each array with a leading env axis (``(N, *shape)``),
    for the batched vector step; row ``i`` of every array is crawl ``i``'s column (see :func:`env_rows`)."""
    lead = () if n_envs is None else (int(n_envs),)
    out: dict[str, np.ndarray] = {f.name: np.full(lead + f.shape(n_pages, n_domains, n_categories), f.reset, f.dtype)
                                  for f in FIELDS}
    for name, dt in SLOT_ARRAYS:
        out[name] = np.zeros(lead + (n_pages,), dt)
    return out


def crawl_bytes(n_pages: int, n_domains: int, n_categories: int) -> int:
    """Bytes :func:`allocate` takes for one crawl (computed from the shapes, nothing allocated)."""
    total = 0
    for f in FIELDS:
        size = 1
        for d in f.shape(n_pages, n_domains, n_categories):
            size *= int(d)
        total += size * np.dtype(f.dtype).itemsize
    return total + sum(int(n_pages) * np.dtype(dt).itemsize for _, dt in SLOT_ARRAYS)


def env_rows(stacked: dict[str, np.ndarray], i: int) -> dict[str, np.ndarray]:
    """Crawl ``i``'s columns of :func:`allocate` ``(..., n_envs=N)``: views (writes go to the stack)."""
    return {name: a[i] for name, a in stacked.items()}


def reset_pages(arrays: dict[str, np.ndarray], touched: np.ndarray) -> None:
    """Reset every page-indexed column at ``touched`` page ids."""
    for f in FIELDS:
        if f.store != _D:
            arrays[f.name][touched] = f.reset


def reset_domains(arrays: dict[str, np.ndarray]) -> None:
    """Reset every per-domain column."""
    for f in DOMAIN_FIELDS:
        arrays[f.name][:] = f.reset
