"""MediaWiki dumps, stage 2 of 3: **assemble** — parsed chunks → one validated :class:`Corpus`.

:func:`assemble_corpus` is a short orchestrator of named stages, each a small function:

1. :class:`_Notes` — the chunks' skip/drop counters and examples, merged;
2. :func:`_select_pages` — the first page of each title wins (later ones are duplicates);
3. :func:`_collect_redirects` + :func:`_resolve_redirects` — redirect chains to pages;
4. :func:`_resolve_link_keys` — every link target title → page id and status (direct, via a
   redirect, red link, loop, broken redirect);
5. :func:`_gather_links` + :func:`_filter_links` — the links of kept pages, minus red, self,
   duplicate links and links into loops/broken redirects (each counted);
6. :func:`_page_bags`, :func:`_title_tokens`, :func:`_page_labels` — text, title and label CSRs;
7. :func:`_sort_vocabulary` — word ids in alphabetical order, every term array remapped.

Also used by :mod:`gym_crawl.corpus.thesis_layout` (the thesis' layout is parsed into the same chunks).
"""
from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gym_crawl.corpus.core import Corpus, StringTable
from gym_crawl.corpus.mediawiki_parse import MAX_EXAMPLES, ChunkAccumulator
from gym_crawl.corpus.wikitext import DISAMBIGUATION_TEMPLATES
from gym_crawl.tokenize import tokenize

__all__ = ["assemble_corpus"]

def _np(a: array, dtype: Any) -> np.ndarray:
    """A numpy view of an ``array.array`` (empty arrays included)."""
    return np.frombuffer(a, dtype=dtype) if len(a) else np.zeros(0, dtype=dtype)


def _csr_take(ptr: np.ndarray, vals: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of a CSR ``(ptr, vals)`` selected by boolean ``keep``."""
    lengths = np.diff(ptr)
    new_ptr = np.zeros(int(keep.sum()) + 1, dtype=np.int64)
    np.cumsum(lengths[keep], out=new_ptr[1:])
    return new_ptr, vals[np.repeat(keep, lengths)]


def _concat_csr(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate CSR blocks ``(ptr, vals)`` row-wise."""
    ptrs, vals, base = [np.zeros(1, np.int64)], [], 0
    for p, v in parts:
        ptrs.append(p[1:] + base)
        vals.append(v)
        base += len(v)
    return np.concatenate(ptrs), (np.concatenate(vals) if vals else np.zeros(0, np.int32))


class _Interner:
    """Global string → id table used to merge chunk-local ids."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.items: list[str] = []

    def remap(self, local: Sequence[str]) -> np.ndarray:
        out = np.empty(len(local), dtype=np.int64)
        ids, items = self.ids, self.items
        for j, s in enumerate(local):
            i = ids.get(s)
            if i is None:
                i = ids[s] = len(items)
                items.append(s)
            out[j] = i
        return out


_DIRECT, _VIA_REDIRECT, _RED, _LOOP, _BROKEN = 0, 1, 2, 3, 4


def _resolve_redirects(redirects: dict[str, str], page_of: dict[str, int], stats: Counter
                       ) -> dict[str, tuple[int, int]]:
    """For each redirect title: ``(page id or -1, status)`` after following its chain.

    Chains of any length are followed (``double_redirects`` counts redirects
    needing two or more hops); a chain that comes back on itself is a loop
    (``redirect_loops``); one ending at a missing title is broken.
    """
    out: dict[str, tuple[int, int, int]] = {}  # title -> (page, status, hops)
    for start in redirects:
        if start in out:
            continue
        chain: list[str] = []
        seen: set[str] = set()
        cur = start
        end = (-1, _BROKEN, 0)
        while True:
            if cur in page_of:
                end = (page_of[cur], _VIA_REDIRECT, 0)
                break
            if cur in out:
                end = out[cur]
                break
            if cur not in redirects:
                break
            if cur in seen:
                end = (-1, _LOOP, 0)
                break
            seen.add(cur)
            chain.append(cur)
            cur = redirects[cur]
        k = len(chain)
        for i, t in enumerate(chain):
            out[t] = (end[0], end[1], end[2] + k - i)
    for _page, status, hops in out.values():
        if status == _VIA_REDIRECT:
            stats["redirects_resolved"] += 1
            stats["double_redirects"] += hops >= 2
        else:
            stats["redirect_loops" if status == _LOOP else "broken_redirects"] += 1
    return {t: (p, st) for t, (p, st, _) in out.items()}


def _disambiguation_templates(chunks: Sequence[ChunkAccumulator]) -> set[str]:
    """Template names marking disambiguation pages: the defaults, those emitting
    ``__DISAMBIG__`` in this dump, and template redirects to either."""
    names = set(DISAMBIGUATION_TEMPLATES)
    for c in chunks:
        names.update(c.disambig_templates)
    redirects = {a: b for c in chunks for a, b in c.template_redirects}
    changed = True
    while changed:
        changed = False
        for a, b in redirects.items():
            if b in names and a not in names:
                names.add(a)
                changed = True
    return names

class _Notes:
    """Skip/drop counters (``compile_stats``) and a few examples of each (``compile_examples``)."""

    def __init__(self, chunks: Sequence[ChunkAccumulator]) -> None:
        self.stats: Counter = Counter()
        self.examples: dict[str, list[str]] = {}
        for c in chunks:
            self.stats.update(c.stats)
            for k, v in c.examples.items():
                self.examples.setdefault(k, []).extend(v[:MAX_EXAMPLES - len(self.examples.get(k, []))])

    def note(self, what: str, example: str) -> None:
        self.stats[what] += 1
        ex = self.examples.setdefault(what, [])
        if len(ex) < MAX_EXAMPLES:
            ex.append(example)


@dataclass
class _Pages:
    """The kept pages: ``titles`` in corpus order, ``page_of`` title → id, and per chunk a
    boolean mask of its pages that were kept."""

    titles: list[str]
    page_of: dict[str, int]
    keep: list[np.ndarray]

    @property
    def n(self) -> int:
        return len(self.titles)


def _select_pages(chunks: Sequence[ChunkAccumulator], notes: _Notes) -> _Pages:
    """First page of each title wins; later ones are counted as ``duplicate_titles``."""
    page_of: dict[str, int] = {}
    keep_page: list[np.ndarray] = []
    titles: list[str] = []
    for c in chunks:
        keep = np.ones(len(c.titles), dtype=bool)
        for j, t in enumerate(c.titles):
            if t in page_of:
                keep[j] = False
                notes.note("duplicate_titles", t)
            else:
                page_of[t] = len(titles)
                titles.append(t)
        keep_page.append(keep)
    return _Pages(titles, page_of, keep_page)


def _collect_redirects(chunks: Sequence[ChunkAccumulator], pages: _Pages, notes: _Notes) -> dict[str, str]:
    """Redirect title → target title; a redirect reusing a page's or redirect's title is a duplicate."""
    redirects: dict[str, str] = {}
    for c in chunks:
        for t, target in c.redirects:
            if t in pages.page_of or t in redirects:
                notes.note("duplicate_titles", t)
            else:
                redirects[t] = target
    return redirects


def _resolve_link_keys(chunks: Sequence[ChunkAccumulator], pages: _Pages, resolved: dict[str, tuple[int, int]]
                       ) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Map every chunk's link-target titles to global keys and each key to ``(page id or -1, status)``.

    Returns ``(key_maps, key_dst, key_status)``: ``key_maps[c][local key] = global key``.
    """
    keys = _Interner()
    key_maps = [keys.remap(c.keys) for c in chunks]
    key_dst = np.full(len(keys.items), -1, dtype=np.int64)
    key_status = np.full(len(keys.items), _RED, dtype=np.int8)
    for i, k in enumerate(keys.items):
        p = pages.page_of.get(k)
        if p is not None:
            key_dst[i], key_status[i] = p, _DIRECT
        elif k in resolved:
            key_dst[i], key_status[i] = resolved[k]
    return key_maps, key_dst, key_status


@dataclass
class _Links:
    """Links of every chunk in file order: source page (-1 if its page was a duplicate), target page
    (-1 unresolved), resolution status, and anchor / context CSRs with global word ids."""

    src: np.ndarray
    dst: np.ndarray
    status: np.ndarray
    anchor: tuple[np.ndarray, np.ndarray]
    context: tuple[np.ndarray, np.ndarray]


def _gather_links(chunks: Sequence[ChunkAccumulator], pages: _Pages, key_maps: list[np.ndarray],
                  word_maps: list[np.ndarray], key_dst: np.ndarray, key_status: np.ndarray) -> _Links:
    src_l, dst_l, st_l, anc_l, ctx_l = [], [], [], [], []
    page_base = 0
    for c, keep, km, wm in zip(chunks, pages.keep, key_maps, word_maps):
        new_id = np.full(len(c.titles), -1, dtype=np.int64)
        new_id[keep] = np.arange(page_base, page_base + int(keep.sum()))
        page_base += int(keep.sum())
        lk = km[_np(c.link_key, np.int32)]
        src_l.append(new_id[_np(c.link_src, np.int32)])
        dst_l.append(key_dst[lk])
        st_l.append(key_status[lk])
        anc_l.append((_np(c.anchor_ptr, np.int64), wm[_np(c.anchor_terms, np.int32)]))
        ctx_l.append((_np(c.ctx_ptr, np.int64), wm[_np(c.ctx_terms, np.int32)]))
    return _Links(np.concatenate(src_l), np.concatenate(dst_l), np.concatenate(st_l),
                  _concat_csr(anc_l), _concat_csr(ctx_l))


def _filter_links(links: _Links, n: int, dedupe: bool, stats: Counter) -> _Links:
    """Keep links from kept pages to resolved targets, minus self links and (``dedupe``) repeats of
    a source → target pair (the first is kept); every drop is counted in ``stats``."""
    src, dst, status = links.src, links.dst, links.status
    from_kept = src >= 0
    stats["links_from_duplicate_pages"] += int((~from_kept).sum())
    stats["red_links"] += int((from_kept & (status == _RED)).sum())
    stats["links_to_redirect_loops"] += int((from_kept & (status == _LOOP)).sum())
    stats["links_to_broken_redirects"] += int((from_kept & (status == _BROKEN)).sum())
    ok = from_kept & (dst >= 0)
    selfl = ok & (src == dst)
    stats["self_links"] += int(selfl.sum())
    ok &= ~selfl
    idx = np.flatnonzero(ok)
    if dedupe:
        _, first = np.unique(src[idx] * max(n, 1) + dst[idx], return_index=True)
        idx = idx[np.sort(first)]
    keep_link = np.zeros(len(src), dtype=bool)
    keep_link[idx] = True
    stats["duplicate_links"] += int(ok.sum() - keep_link.sum())
    stats["links_via_redirect"] = int((keep_link & (status == _VIA_REDIRECT)).sum())
    out = _Links(src[keep_link], dst[keep_link], status[keep_link],
                 _csr_take(*links.anchor, keep_link), _csr_take(*links.context, keep_link))
    stats["links_resolved"] = len(out.src)
    return out


def _page_bags(chunks: Sequence[ChunkAccumulator], pages: _Pages, word_maps: list[np.ndarray]
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(text_ptr, text_terms, text_counts)`` of the kept pages, global (unsorted) word ids."""
    bags = []
    for c, keep, wm in zip(chunks, pages.keep, word_maps):
        p = _np(c.bag_ptr, np.int64)
        t = wm[_np(c.bag_terms, np.int32)]
        cnt = _np(c.bag_counts, np.int32)
        p2, t2 = _csr_take(p, t, keep)
        _, c2 = _csr_take(p, cnt, keep)
        bags.append((p2, t2, c2))
    text_ptr, text_terms = _concat_csr([(p, t) for p, t, _ in bags])
    _, text_counts = _concat_csr([(p, c) for p, _, c in bags])
    return text_ptr, text_terms, text_counts


def _title_tokens(titles: Sequence[str], vocab: _Interner) -> tuple[np.ndarray, np.ndarray]:
    """``(title_ptr, title_terms)`` — each title's tokens in order, global word ids."""
    title_tok = [vocab.remap(tokenize(t)) for t in titles]
    n = len(titles)
    title_ptr = np.zeros(n + 1, dtype=np.int64)
    title_ptr[1:] = np.cumsum([len(t) for t in title_tok]) if n else []
    return title_ptr, (np.concatenate(title_tok) if title_tok else np.zeros(0, np.int64))


def _page_labels(chunks: Sequence[ChunkAccumulator], pages: _Pages, dis_templates: set[str], stats: Counter
                 ) -> tuple[list[str], np.ndarray, np.ndarray]:
    """``(label names, label_ptr, label_ids)``: ``category.<Name>`` per category, ``disambiguation`` for
    pages marked by magic word, a disambiguation template or a ``(disambiguation)`` title."""
    label_names: list[list[str]] = []
    for c, keep in zip(chunks, pages.keep):
        for j in np.flatnonzero(keep):
            labs = [f"category.{x}" for x in c.categories[j]]
            if c.magic[j] or dis_templates.intersection(c.templates[j]) or c.titles[j].endswith("(disambiguation)"):
                labs.append("disambiguation")
            label_names.append(labs)
    stats["disambiguation_pages"] = sum("disambiguation" in lab for lab in label_names)
    labels = sorted({lab for ls in label_names for lab in ls})
    lab_id = {lab: i for i, lab in enumerate(labels)}
    n = pages.n
    label_ptr = np.zeros(n + 1, dtype=np.int64)
    label_ptr[1:] = np.cumsum([len(set(ls)) for ls in label_names]) if n else []
    label_ids = np.fromiter((i for ls in label_names for i in sorted({lab_id[lab] for lab in ls})), dtype=np.int32,
                            count=int(label_ptr[-1]))
    return labels, label_ptr, label_ids


def _sort_vocabulary(words: Sequence[str]) -> tuple[list[str], Any]:
    """Words in alphabetical order and a function remapping interned ids to sorted ids (int32)."""
    order = np.array(sorted(range(len(words)), key=words.__getitem__), dtype=np.int64)
    remap = np.empty(len(words), dtype=np.int32)
    remap[order] = np.arange(len(words), dtype=np.int32)

    def rm(a: np.ndarray) -> np.ndarray:
        return remap[a] if len(a) else np.zeros(0, np.int32)

    return [words[i] for i in order], rm


def _sort_bags(text_ptr: np.ndarray, text_terms: np.ndarray, text_counts: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Each page's bag sorted by (sorted) word id."""
    row = np.repeat(np.arange(len(text_ptr) - 1), np.diff(text_ptr))
    o = np.lexsort((text_terms, row))
    return text_terms[o], text_counts.astype(np.int32)[o]


def assemble_corpus(chunks: Sequence[ChunkAccumulator], *, domain: str, name: str,
                    meta: dict[str, Any] | None = None, keep_text: bool = True, dedupe: bool = True) -> Corpus:
    """Merge parsed chunks (in order) into a validated :class:`Corpus`.

    Resolves link targets against page titles and redirects, drops red links,
    self links, links to redirect loops and (if ``dedupe``) repeated links, and
    records every count in ``meta["compile_stats"]``.
    """
    notes = _Notes(chunks)
    pages = _select_pages(chunks, notes)
    n = pages.n
    resolved = _resolve_redirects(_collect_redirects(chunks, pages, notes), pages.page_of, notes.stats)
    key_maps, key_dst, key_status = _resolve_link_keys(chunks, pages, resolved)
    vocab = _Interner()
    word_maps = [vocab.remap(c.words) for c in chunks]
    links = _filter_links(_gather_links(chunks, pages, key_maps, word_maps, key_dst, key_status), n, dedupe,
                          notes.stats)
    notes.stats["pages"] = n
    text_ptr, text_terms, text_counts = _page_bags(chunks, pages, word_maps)
    title_ptr, title_terms = _title_tokens(pages.titles, vocab)
    dis_templates = _disambiguation_templates(chunks)
    labels, label_ptr, label_ids = _page_labels(chunks, pages, dis_templates, notes.stats)
    words, rm = _sort_vocabulary(vocab.items)
    text_terms, text_counts = _sort_bags(text_ptr, rm(text_terms), text_counts)
    link_ptr = np.zeros(n + 1, dtype=np.int64)
    link_ptr[1:] = np.cumsum(np.bincount(links.src, minlength=n)) if n else []
    texts = None
    if keep_text:
        texts = StringTable.from_strings(t for c, keep in zip(chunks, pages.keep)
                                         for t, k in zip(c.texts, keep) if k)
    m = dict(meta or {})
    m["compile_stats"] = {k: int(v) for k, v in sorted(notes.stats.items())}
    m["compile_examples"] = {k: v for k, v in sorted(notes.examples.items()) if v}
    m["disambiguation_templates"] = sorted(dis_templates)
    return Corpus(
        text_ptr=text_ptr, text_terms=text_terms.astype(np.int32), text_counts=text_counts,
        title_ptr=title_ptr, title_terms=rm(title_terms),
        link_ptr=link_ptr, link_dst=links.dst.astype(np.int32),
        anchor_ptr=links.anchor[0], anchor_terms=rm(links.anchor[1]),
        context_ptr=links.context[0], context_terms=rm(links.context[1]),
        page_domain=np.zeros(n, dtype=np.int32),
        label_ptr=label_ptr, label_ids=label_ids,
        titles=StringTable.from_strings(pages.titles), vocab=StringTable.from_strings(words),
        domains=StringTable.from_strings([domain]), labels=StringTable.from_strings(labels),
        texts=texts, meta={"name": name, **m},
    )
