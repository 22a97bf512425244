"""Scoring pages and links into a topic's keyed score tables, compiled (numba): one call per batch of pages.

On a web too large to score at reset, every page a crawl fetches for the first time is scored then. The numpy path
(:meth:`~gym_crawl.relevance.scorer.TopicScorer.score_pages`, :meth:`~.TopicScorer.score_links`) gathers, weighs and
sums in a dozen array calls per batch; these kernels do the same arithmetic page by page and link by link, writing
straight into the table's rows. The bits are the numpy path's: every weight is formed and rounded as numpy forms
it (``count · idf`` in float64, rounded to float32 for the vector sum; the tf-idf sums in float64, unrounded), each
vector is summed term by term in float64 in the numpy path's term order and rounded to float32 once, and the cosines
and norms follow :func:`gym_crawl._arith.cosines` (float64 sums in index order, no fused multiply-add).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit, types
from numba.experimental import structref

from gym_crawl._memory import prefetch
from gym_crawl.pagemap import find, insert

__all__ = ["ELEMENTWISE_LABEL", "ELEMENTWISE_TIERS", "ELEMENTWISE_WORD", "STORE_FILL", "StoreFill", "claim_link_rows",
           "claim_page_rows", "copy_links_into", "copy_pages_into", "fill_rows_from_store", "fill_store_rows",
           "labels_into", "no_store_fill", "score_links_into", "score_pages_into", "store_fill"]


#: kinds of a reward scheme's elementwise form (:meth:`~gym_crawl.relevance.rewards.RewardScheme.elementwise`): tiers
#: of the cosine with a topic-word override (relevant: the page contains a topic word); 1 if the page contains a topic
#: word; 1 if the page carries the topic's label
ELEMENTWISE_TIERS, ELEMENTWISE_WORD, ELEMENTWISE_LABEL = 0, 1, 2

@njit(cache=True, nogil=True)
def _cosines_into(acc, QT, out_rel, out_cat, r, cacc):
    """The cosines of the float32 rounding of ``acc`` with the unit queries ``QT`` (k, q) float64: query 0 into
    ``out_rel[r]``, the others into ``out_cat[r]`` (0 for a zero vector), as :func:`gym_crawl._arith.cosines`."""
    k, q = QT.shape
    sq = 0.0
    for j in range(q):
        cacc[j] = 0.0
    for l in range(k):  # noqa: E741
        v = np.float64(np.float32(acc[l]))
        sq += v * v
        for j in range(q):
            cacc[j] += v * QT[l, j]
    if sq > 0.0:
        root = math.sqrt(sq)
        out_rel[r] = np.float32(cacc[0] / root)
        for j in range(1, q):
            out_cat[r, j - 1] = np.float32(cacc[j] / root)
    else:
        out_rel[r] = np.float32(0.0)
        for j in range(1, q):
            out_cat[r, j - 1] = np.float32(0.0)


@njit(cache=True, nogil=True)
def score_pages_into(pages, rows, text_lo, text_hi, text_terms, text_counts, idf, vectors, QT, tfidf_query, rel,
                     cat, tfidf):
    """Write the scores of ``pages[i]`` into row ``rows[i]`` of ``rel``, ``cat``, ``tfidf``: what
    ``TopicScorer.score_pages`` gives (``QT``: the scorer's queries transposed, float64).

    The pages' text is gathered first (their ranges, then their terms and counts, each pass a run of independent
    reads that the CPU overlaps: on a web far larger than the caches most are misses), then scored from the
    gathered copy."""
    n = len(pages)
    starts = np.empty(n + 1, np.int64)
    lo = np.empty(n, np.int64)
    starts[0] = 0
    for i in range(n):
        p = pages[i]
        lo[i] = text_lo[p]
        starts[i + 1] = starts[i] + (text_hi[p] - lo[i])
    terms = np.empty(starts[n], np.int64)
    counts = np.empty(starts[n], np.float64)
    for i in range(n):
        a = lo[i]
        for j in range(starts[i + 1] - starts[i]):
            terms[starts[i] + j] = text_terms[a + j]
            counts[starts[i] + j] = text_counts[a + j]
    k = vectors.shape[1]
    acc = np.zeros(k, np.float64)
    cacc = np.zeros(QT.shape[1], np.float64)
    for i in range(n):
        r = rows[i]
        for l in range(k):  # noqa: E741
            acc[l] = 0.0
        sq = 0.0
        dot = 0.0
        for j in range(starts[i], starts[i + 1]):
            t = terms[j]
            w = counts[j] * np.float64(idf[t])  # numpy: int32 · float32 → float64
            w32 = np.float64(np.float32(w))  # the vector sum's weights are rounded to float32
            for l in range(k):  # noqa: E741
                acc[l] += w32 * np.float64(vectors[t, l])
            sq += w * w
            dot += w * np.float64(tfidf_query[t])
        _cosines_into(acc, QT, rel, cat, r, cacc)
        tfidf[r] = np.float32(dot / math.sqrt(sq)) if sq > 0.0 else np.float32(0.0)


@njit(cache=True, nogil=True)
def _gather(ptr, terms, a, out, at):
    """Copy ``terms[ptr[a]:ptr[a + 1]]`` into ``out[at:]``; returns the end."""
    for j in range(ptr[a], ptr[a + 1]):
        out[at] = terms[j]
        at += 1
    return at


@njit(cache=True, nogil=True)
def score_links_into(links, rows, anchor_ptr, anchor_terms, title_ptr, title_terms, context_ptr, context_terms,
                     link_dst, idf, vectors, QT, keyword_mask, rel, cat, kw_url, kw_anchor):
    """Write the scores of link ``links[i]`` into row ``rows[i]`` of ``rel``, ``cat``, ``kw_url``, ``kw_anchor``:
    what ``TopicScorer.score_links`` gives (its text: the anchor's tokens, the target's title tokens as the URL's,
    then the surrounding text's, in that order). The tokens of every link are gathered first (as in
    :func:`score_pages_into`), then scored."""
    n = len(links)
    dst = np.empty(n, np.int64)
    size = 0
    for i in range(n):
        li = links[i]
        d = link_dst[li]
        dst[i] = d
        size += (anchor_ptr[li + 1] - anchor_ptr[li]) + (title_ptr[d + 1] - title_ptr[d]) + (
            context_ptr[li + 1] - context_ptr[li])
    toks = np.empty(size, np.int64)
    ends = np.empty(3 * n, np.int64)  # per link: end of its anchor, URL and context tokens
    at = 0
    for i in range(n):
        li = links[i]
        at = _gather(anchor_ptr, anchor_terms, li, toks, at)
        ends[3 * i] = at
        at = _gather(title_ptr, title_terms, dst[i], toks, at)
        ends[3 * i + 1] = at
        at = _gather(context_ptr, context_terms, li, toks, at)
        ends[3 * i + 2] = at
    k = vectors.shape[1]
    acc = np.zeros(k, np.float64)
    cacc = np.zeros(QT.shape[1], np.float64)
    j = 0
    for i in range(n):
        r = rows[i]
        for l in range(k):  # noqa: E741
            acc[l] = 0.0
        for part in range(3):
            kw = False
            while j < ends[3 * i + part]:
                t = toks[j]
                w = np.float64(idf[t])
                for l in range(k):  # noqa: E741
                    acc[l] += w * np.float64(vectors[t, l])
                if keyword_mask[t]:
                    kw = True
                j += 1
            if part == 0:
                kw_anchor[r] = kw
            elif part == 1:
                kw_url[r] = kw
        _cosines_into(acc, QT, rel, cat, r, cacc)


@njit(cache=True, nogil=True)
def claim_page_rows(pages, keys, slots, row_page, n0, new):
    """Give each of ``pages`` not in the page map (``keys``/``slots``; duplicates once) the next row from ``n0``,
    recording it in ``row_page``; ``new[:m]`` the pages that got rows ``n0 .. n0 + m - 1``. Returns ``m`` (the
    caller made room for ``len(pages)`` more rows)."""
    m = 0
    for i in range(len(pages)):
        p = pages[i]
        if find(keys, slots, p) < 0:
            insert(keys, slots, p, n0 + m)
            row_page[n0 + m] = p
            new[m] = p
            m += 1
    return m


@njit(cache=True, nogil=True)
def labels_into(pages, rows, label_ptr, label_ids, hits, out):
    """``out[rows[i]]``: page ``pages[i]`` carries a label of ``hits`` (bool by label id)."""
    for i in range(len(pages)):
        p = pages[i]
        v = False
        for j in range(label_ptr[p], label_ptr[p + 1]):
            if hits[label_ids[j]]:
                v = True
                break
        out[rows[i]] = v


@njit(cache=True, nogil=True)
def claim_link_rows(pages, keys, bases, n0, link_lo, link_hi):
    """Give each of ``pages`` whose links are not in the map (``keys``/``bases``; duplicates once) the next rows
    for its out-links from ``n0``. Returns ``(end, m, links, rows)``: the next free row, how many pages were added,
    and the new links with their rows (the caller made room)."""
    at = n0
    m = 0
    total = 0
    for i in range(len(pages)):
        total += link_hi[pages[i]] - link_lo[pages[i]]
    links = np.empty(total, np.int64)
    rows = np.empty(total, np.int64)
    k = 0
    for i in range(len(pages)):
        p = pages[i]
        if find(keys, bases, p) >= 0:
            continue
        insert(keys, bases, p, at)
        m += 1
        for li in range(link_lo[p], link_hi[p]):
            links[k] = li
            rows[k] = at
            k += 1
            at += 1
    return at, m, links[:k], rows[:k]


@njit(cache=True, nogil=True)
def copy_pages_into(pages, rows, s_rel, s_cat, s_tfidf, rel, cat, tfidf):
    """Copy the stored scores of ``pages[i]`` (``s_rel``, ``s_cat``, ``s_tfidf``: a topic's stored tables, rows =
    page ids) into row ``rows[i]`` of ``rel``, ``cat``, ``tfidf``. ``s_cat`` may hold fewer columns than ``cat``
    (none for a topic without categories, whose category scores are all zero): the other columns are left as they
    are (zero in a fresh row)."""
    kc = s_cat.shape[1]
    for i in range(len(pages)):
        p = pages[i]
        r = rows[i]
        rel[r] = s_rel[p]
        tfidf[r] = s_tfidf[p]
        for j in range(kc):
            cat[r, j] = s_cat[p, j]


@njit(cache=True, nogil=True)
def copy_links_into(links, rows, s_rel, s_cat, s_kw_url, s_kw_anchor, rel, cat, kw_url, kw_anchor):
    """Copy the stored scores of link ``links[i]`` (rows = link ids) into row ``rows[i]`` of ``rel``, ``cat``,
    ``kw_url``, ``kw_anchor`` (``s_cat``'s columns as in :func:`copy_pages_into`)."""
    kc = s_cat.shape[1]
    for i in range(len(links)):
        li = links[i]
        r = rows[i]
        rel[r] = s_rel[li]
        kw_url[r] = s_kw_url[li]
        kw_anchor[r] = s_kw_anchor[li]
        for j in range(kc):
            cat[r, j] = s_cat[li, j]


@njit(cache=True, nogil=True)
def fill_rows_from_store(pages, p_keys, p_slots, row_page, p_n, rel, cat, tfidf, label, s_rel, s_cat, s_tfidf,
                         label_ptr, label_ids, hits, labelled, l_keys, l_bases, l_n, l_scored, link_lo, link_hi, l_rel,
                         l_cat, l_kwu, l_kwa, sl_rel, sl_cat, sl_kwu, sl_kwa, out_rows, rw_r, rw_rel, rw_done, rkind,
                         rthr, rval, rword, rmiss):
    """:func:`claim_page_rows` + :func:`copy_pages_into` + :func:`labels_into` + :func:`claim_link_rows` +
    :func:`copy_links_into` in one call: every one of ``pages`` not in the keyed page table (``p_keys``/``p_slots``,
    ``p_n`` rows used) gets the next row, its stored scores and its label (when ``labelled``); every one whose links
    are not in the keyed link table (``l_keys``/``l_bases``, ``l_n`` rows used, ``l_scored`` pages) gets rows for its
    out-links and their stored scores. ``out_rows[i]``: the page row of ``pages[i]``. With ``rkind >= 0`` (a reward
    scheme's :meth:`~gym_crawl.relevance.rewards.RewardScheme.elementwise` form: kind, float32 thresholds ``rthr``
    and values ``rval``, ``rword``, ``rmiss``) each page row whose reward is not cached yet (``rw_done``) gets its
    reward and relevant flag (``rw_r``, ``rw_rel``), the bits the scheme's ``__call__`` gives.

    Returns ``(p_n, l_n, pages whose links were added)``; ``(-1, links, 0)`` and nothing done when the tables lack
    room for the pages (rows: ``len(rel)``; a caller grows the page table first) or their ``links`` links (link rows,
    or the link map past half full): the caller makes that room and calls again.

    The stored tables are read at random (one page and its links per first fetch, on a web of 10^7 pages and up):
    the lines every page needs are asked for first (:func:`~gym_crawl._memory.prefetch`: its scores, link range and
    label range, then its links' scores and labels), so their cache misses overlap instead of following each
    other."""
    kc = s_cat.shape[1]
    kl = sl_cat.shape[1]
    n = len(pages)
    for i in range(n):
        p = pages[i]
        prefetch(s_rel, p)
        prefetch(s_tfidf, p)
        prefetch(link_lo, p)
        if labelled:
            prefetch(label_ptr, p)
    total = 0
    for i in range(n):
        p = pages[i]
        a = link_lo[p]
        total += link_hi[p] - a
        prefetch(sl_rel, a)
        prefetch(sl_kwu, a)
        prefetch(sl_kwa, a)
        if labelled:
            prefetch(label_ids, label_ptr[p])
    if p_n + n > len(rel) or l_n + total > len(l_rel) or 2 * (l_scored + n) > len(l_keys):
        return np.int64(-1), np.int64(total), np.int64(0)
    m = 0
    for i in range(n):
        p = pages[i]
        r = find(p_keys, p_slots, p)
        if r < 0:
            r = p_n
            p_n += 1
            insert(p_keys, p_slots, p, r)
            row_page[r] = p
            rel[r] = s_rel[p]
            tfidf[r] = s_tfidf[p]
            for j in range(kc):
                cat[r, j] = s_cat[p, j]
            if labelled:
                v = False
                for j in range(label_ptr[p], label_ptr[p + 1]):
                    if hits[label_ids[j]]:
                        v = True
                        break
                label[r] = v
        out_rows[i] = r
        if rkind >= 0 and not rw_done[r]:
            rw_r[r], rw_rel[r] = _elementwise_reward(rkind, rthr, rval, rword, rmiss, rel[r], tfidf[r], label[r])
            rw_done[r] = True
        if find(l_keys, l_bases, p) < 0:
            insert(l_keys, l_bases, p, l_n)
            m += 1
            for li in range(link_lo[p], link_hi[p]):
                l_rel[l_n] = sl_rel[li]
                l_kwu[l_n] = sl_kwu[li]
                l_kwa[l_n] = sl_kwa[li]
                for j in range(kl):
                    l_cat[l_n, j] = sl_cat[li, j]
                l_n += 1
    return np.int64(p_n), np.int64(l_n), np.int64(m)


@njit(cache=True, nogil=True)
def _elementwise_reward(kind, thr, val, word, miss, rel, tfidf, label):
    """One page's reward (float32) and relevant flag under a scheme's elementwise form (:data:`ELEMENTWISE_TIERS`:
    the first tier, highest threshold first, that the cosine ``rel`` exceeds while the reward is still ``miss``, then
    ``word`` when the page contains a topic word — relevant: it does; word: 1 when it does; label: 1 when the page
    carries the topic's label), compared and rounded in float32 as the numpy path does."""
    if kind == ELEMENTWISE_TIERS:
        r = np.float32(miss)
        for k in range(len(thr)):
            if r == np.float32(miss) and rel > thr[k]:
                r = val[k]
        contains = tfidf > np.float32(0.0)
        if contains:
            r = np.float32(word)
        return r, contains
    hit = label if kind == ELEMENTWISE_LABEL else tfidf > np.float32(0.0)
    return np.float32(1.0) if hit else np.float32(0.0), hit


@structref.register
class StoreFillType(types.StructRef):
    """The numba type of :class:`StoreFill`."""

    def preprocess_fields(self, fields: Any) -> Any:
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class StoreFill(structref.StructRefProxy):
    """What :func:`fill_rows_from_store` reads and writes, as one kernel argument (:func:`store_fill`; fields
    :data:`STORE_FILL`): a compiled caller fills first-fetched pages' rows itself (:func:`fill_store_rows`) instead of
    returning to Python for them."""

    @property
    def on(self) -> bool:
        """Whether :func:`fill_store_rows` fills with it (a store attached, both tables keyed, a reward form)."""
        return bool(_store_fill_on(self))


@njit(cache=True)
def _store_fill_on(f):
    return f.on


#: the fields of :class:`StoreFill`: ``on`` (a store is attached, both tables keyed, the reward has an elementwise
#: form); the keyed page table's map ``p_keys`` / ``p_slots``, ``row_page``, ``rel``, ``cat``, ``tfidf``, ``label``
#: and its counters ``p_ctr`` ((2,) int64: rows used, generation), with ``p_gen`` the generation the arrays are of;
#: the stored page columns ``s_rel``, ``s_cat``, ``s_tfidf``; the corpus' ``label_ptr``, ``label_ids``, the topic's
#: label ``hits`` and ``labelled``; the keyed link table's ``l_keys`` / ``l_bases``, ``link_lo``, ``link_hi``,
#: ``l_rel``, ``l_cat``, ``l_kwu``, ``l_kwa`` and its counters ``l_ctr`` ((3,) int64: rows used, pages scored,
#: generation), ``l_gen``; the stored link columns ``sl_rel``, ``sl_cat``, ``sl_kwu``, ``sl_kwa``; the reward cache
#: ``rw_r``, ``rw_rel``, ``rw_done`` and the scheme's elementwise form ``rkind``, ``rthr``, ``rval``, ``rword``,
#: ``rmiss``
STORE_FILL = ("on", "p_keys", "p_slots", "row_page", "rel", "cat", "tfidf", "label", "p_ctr", "p_gen", "s_rel",
              "s_cat", "s_tfidf", "label_ptr", "label_ids", "hits", "labelled", "l_keys", "l_bases", "link_lo",
              "link_hi", "l_rel", "l_cat", "l_kwu", "l_kwa", "l_ctr", "l_gen", "sl_rel", "sl_cat", "sl_kwu", "sl_kwa",
              "rw_r", "rw_rel", "rw_done", "rkind", "rthr", "rval", "rword", "rmiss")
structref.define_constructor(StoreFill, StoreFillType, STORE_FILL)
structref.define_boxing(StoreFillType, StoreFill)


@njit(cache=True)
def _new_store_fill(on, p_keys, p_slots, row_page, rel, cat, tfidf, label, p_ctr, p_gen, s_rel, s_cat, s_tfidf,
                    label_ptr, label_ids, hits, labelled, l_keys, l_bases, link_lo, link_hi, l_rel, l_cat, l_kwu,
                    l_kwa, l_ctr, l_gen, sl_rel, sl_cat, sl_kwu, sl_kwa, rw_r, rw_rel, rw_done, rkind, rthr, rval,
                    rword, rmiss):
    return StoreFill(on, p_keys, p_slots, row_page, rel, cat, tfidf, label, p_ctr, p_gen, s_rel, s_cat, s_tfidf,
                     label_ptr, label_ids, hits, labelled, l_keys, l_bases, link_lo, link_hi, l_rel, l_cat, l_kwu,
                     l_kwa, l_ctr, l_gen, sl_rel, sl_cat, sl_kwu, sl_kwa, rw_r, rw_rel, rw_done, rkind, rthr, rval,
                     rword, rmiss)


def store_fill(p: dict[str, Any], s: dict[str, np.ndarray], label_ptr: np.ndarray, label_ids: np.ndarray,
               hits: np.ndarray, labelled: bool, lk: dict[str, Any], rw: tuple[np.ndarray, np.ndarray, np.ndarray],
               form: tuple[int, np.ndarray, np.ndarray, float, float]) -> StoreFill:
    """The :class:`StoreFill` (``on``) of a keyed page table's arrays ``p`` (``keys``, ``slots``, ``row_page``,
    ``rel``, ``cat``, ``tfidf``, ``label``, ``ctr``, ``gen``), the store's columns ``s`` (``page_rel`` …
    ``link_kw_anchor``), the keyed link table's ``lk`` (``keys``, ``slots``, ``lo``, ``hi``, ``rel``, ``cat``,
    ``kw_url``, ``kw_anchor``, ``ctr``, ``gen``), a reward cache ``rw`` and its scheme's elementwise ``form``."""
    kind, thr, val, word, miss = form
    return _new_store_fill(True, p["keys"], p["slots"], p["row_page"], p["rel"], p["cat"], p["tfidf"], p["label"],
                           p["ctr"], np.int64(p["gen"]), s["page_rel"], s["page_cat"], s["page_tfidf"], label_ptr,
                           label_ids, hits, bool(labelled), lk["keys"], lk["slots"], lk["lo"], lk["hi"], lk["rel"],
                           lk["cat"], lk["kw_url"], lk["kw_anchor"], lk["ctr"], np.int64(lk["gen"]), s["link_rel"],
                           s["link_cat"], s["link_kw_url"], s["link_kw_anchor"], rw[0], rw[1], rw[2], np.int64(kind),
                           thr, val, float(word), float(miss))


def no_store_fill() -> StoreFill:
    """A :class:`StoreFill` that is not ``on`` (no store attached, a table dense, or a reward without an elementwise
    form): :func:`fill_store_rows` does nothing with it."""
    i32, i64, f32, b = np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, np.float32), np.zeros(0, bool)
    f32c = np.zeros((0, 1), np.float32)
    return _new_store_fill(False, i32, i32, i32, f32, f32c, f32, b, np.zeros(2, np.int64), np.int64(0), f32, f32c,
                           f32, i64, i32, b, False, i32, i64, i64, i64, f32, f32c, b, b, np.zeros(3, np.int64),
                           np.int64(0), f32, f32c, b, b, f32, b, b, np.int64(-1), f32, f32, 0.0, 0.0)


@njit(cache=True, nogil=True)
def fill_store_rows(pages, f):
    """:func:`fill_rows_from_store` of ``pages`` with the tables and store of the :class:`StoreFill` ``f``, their
    counters advanced in ``f.p_ctr`` / ``f.l_ctr`` (the tables' own). Returns whether it filled them: ``False``, with
    nothing done, when ``f`` is not ``on``, either table's arrays were replaced since ``f`` was built (its generation
    moved on), or the tables lack room — the caller then fills in Python, which grows them."""
    if not f.on or f.p_ctr[1] != f.p_gen or f.l_ctr[2] != f.l_gen:
        return False
    pn, ln, m = fill_rows_from_store(pages, f.p_keys, f.p_slots, f.row_page, f.p_ctr[0], f.rel, f.cat, f.tfidf,
                                     f.label, f.s_rel, f.s_cat, f.s_tfidf, f.label_ptr, f.label_ids, f.hits,
                                     f.labelled, f.l_keys, f.l_bases, f.l_ctr[0], f.l_ctr[1], f.link_lo, f.link_hi,
                                     f.l_rel, f.l_cat, f.l_kwu, f.l_kwa, f.sl_rel, f.sl_cat, f.sl_kwu, f.sl_kwa,
                                     np.empty(len(pages), np.int64), f.rw_r, f.rw_rel, f.rw_done, f.rkind, f.rthr,
                                     f.rval, f.rword, f.rmiss)
    if pn < 0:
        return False
    f.p_ctr[0] = pn
    f.l_ctr[0] = ln
    f.l_ctr[1] += m
    return True
