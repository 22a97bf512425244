"""The second half of the WARC compiler (:mod:`gym_crawl.web.warc`): from the shard chunks that
:func:`~gym_crawl.web.warc.parse_warc_file` writes to a :class:`~gym_crawl.corpus.core.Corpus`.

* the **global join** — which record is the page of each URL (the first), which pages merge by payload
  digest, where redirect chains lead, and every link's target page id — in two engines that give the
  same result: :func:`join_numpy` (sorted arrays of 64-bit URL hashes, one process) and :func:`join_dask`
  (Dask DataFrame ``groupby``/``merge`` over the URL hashes, on a cluster);
* the **assembly** (:func:`assemble`) — the chunks read once more, one at a time, into the corpus columns.

A shard chunk is an ``.npz`` of one WARC file's pages (at most ``chunk_pages``): per page its URL hash,
payload-digest hash, URL, title, main text, word ids of the text bag / URL words (a local vocabulary), and
per link its target URL and hash, anchor and context word ids and position; plus the file's redirects
(source and target URL hashes).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gym_crawl.corpus.core import Corpus, StringTable
from gym_crawl.tokenize import tokenize
from gym_crawl.web.html_extract import LINK_POSITIONS
from gym_crawl.web.urls import url_host, url_text
from gym_crawl.web.warc_labels import LabelRules

__all__ = ["MAX_REDIRECT_HOPS", "Join", "assemble", "join_dask", "join_numpy", "load_keys", "page_labels",
           "read_table"]

MAX_REDIRECT_HOPS = 10
"""Redirect chains longer than this (and loops) leave a link unresolved."""


def read_table(z: Mapping[str, np.ndarray], prefix: str) -> StringTable:
    """The string table ``prefix`` of a loaded chunk."""
    return StringTable(np.asarray(z[f"{prefix}_blob"]), np.asarray(z[f"{prefix}_off"]))


@dataclass
class Join:
    """The global join: which rows of the concatenated page table are pages (in id order), and each link's
    target page id (-1: not in the archive)."""

    page_rows: np.ndarray
    link_dst: np.ndarray
    url_duplicates: int
    digest_duplicates: int
    redirects_used: int
    extra: dict[str, Any] = field(default_factory=dict)


def load_keys(chunks: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """The hash columns of every chunk, concatenated in chunk order."""
    cols: dict[str, list[np.ndarray]] = {k: [] for k in ("url_hash", "digest_hash", "link_hash", "link_n",
                                                         "redirect_from", "redirect_to")}
    for c in chunks:
        with np.load(c["path"], allow_pickle=False) as z:
            for k in ("url_hash", "digest_hash", "link_hash", "redirect_from", "redirect_to"):
                cols[k].append(np.asarray(z[k]))
            cols["link_n"].append(np.diff(np.asarray(z["link_ptr"])))
    return {k: (np.concatenate(v) if v else np.zeros(0, np.int64)) for k, v in cols.items()}


def _lookup(keys_sorted: np.ndarray, values: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``values`` of ``q`` in the sorted ``keys_sorted`` (-1 where absent)."""
    if len(keys_sorted) == 0:
        return np.full(len(q), -1, np.int64)
    i = np.searchsorted(keys_sorted, q)
    i = np.minimum(i, len(keys_sorted) - 1)
    return np.where(keys_sorted[i] == q, values[i], -1)


def join_numpy(k: dict[str, np.ndarray]) -> Join:
    """The join from sorted arrays of URL hashes (see the module docstring for the rules)."""
    h, d = k["url_hash"], k["digest_hash"]
    _, first = np.unique(h, return_index=True)
    rows = np.sort(first)  # first record of each URL, in record order
    _, dfirst, dinv = np.unique(d[rows], return_index=True, return_inverse=True)
    canon = rows[dfirst][dinv.reshape(-1)]
    is_page = canon == rows
    page_rows = rows[is_page]
    ids = np.empty(len(h), np.int64)  # id of each page row
    ids[page_rows] = np.arange(len(page_rows))
    # hash → id: pages, then URLs merged by digest (their first record's row → its canonical page)
    table_h = np.concatenate([h[page_rows], h[rows[~is_page]]])
    table_id = np.concatenate([np.arange(len(page_rows)), ids[canon[~is_page]]])
    # redirects: the first redirect of each URL that has no page record of its own
    rf, rt = k["redirect_from"], k["redirect_to"]
    _, rfirst = np.unique(rf, return_index=True)
    rfirst = np.sort(rfirst)
    keep = ~np.isin(rf[rfirst], h)
    rf, rt = rf[rfirst[keep]], rt[rfirst[keep]]
    resolved = np.full(len(rf), -1, np.int64)
    for _ in range(MAX_REDIRECT_HOPS):
        order = np.argsort(table_h, kind="stable")
        hs, vs = table_h[order], table_id[order]
        new = (resolved < 0) & (_lookup(hs, vs, rt) >= 0)
        if not new.any():
            break
        resolved[new] = _lookup(hs, vs, rt[new])
        table_h = np.concatenate([table_h, rf[new]])
        table_id = np.concatenate([table_id, resolved[new]])
    order = np.argsort(table_h, kind="stable")
    link_dst = _lookup(table_h[order], table_id[order], k["link_hash"])
    return Join(page_rows=page_rows, link_dst=link_dst, url_duplicates=int(len(h) - len(rows)),
                 digest_duplicates=int((~is_page).sum()), redirects_used=int((resolved >= 0).sum()))


def join_dask(chunks: list[dict[str, Any]], client: Any) -> Join:
    """The same join as :func:`join_numpy`, computed by Dask DataFrame merges over the URL hashes."""
    import dask.dataframe as dd
    import pandas as pd

    offsets = np.zeros(len(chunks) + 1, np.int64)
    offsets[1:] = np.cumsum([c["pages"] for c in chunks])
    loffsets = np.zeros(len(chunks) + 1, np.int64)
    loffsets[1:] = np.cumsum([c["links"] for c in chunks])
    roffsets = np.zeros(len(chunks) + 1, np.int64)
    roffsets[1:] = np.cumsum([c["redirects"] for c in chunks])
    parts = [(c["path"], int(offsets[i]), int(loffsets[i]), int(roffsets[i])) for i, c in enumerate(chunks)]
    def empty(*cols: str) -> Any:
        return pd.DataFrame({c: pd.Series([], dtype="int64") for c in cols})

    pages = dd.from_map(_pages_frame, parts, meta=empty("row", "h", "d"))
    links = dd.from_map(_links_frame, parts, meta=empty("lrow", "h"))
    redirects = dd.from_map(_redirects_frame, parts, meta=empty("rrow", "h", "to"))
    # first record of each URL, then the first page of each payload digest
    first = pages.groupby("h").row.min().rename("row").reset_index()
    kept = pages.merge(first, on=["h", "row"])
    canon = kept.groupby("d").row.min().rename("canon").reset_index()
    kept = kept.merge(canon, on="d")
    page_tab = kept[kept.row == kept.canon][["row", "h"]].compute().sort_values("row", kind="stable")
    page_tab["id"] = np.arange(len(page_tab), dtype=np.int64)
    ids = dd.from_pandas(page_tab, npartitions=max(1, min(len(chunks), 8)))
    dups = kept[kept.row != kept.canon][["h", "canon"]].merge(
        ids[["row", "id"]].rename(columns={"row": "canon"}), on="canon")[["h", "id"]]
    table = dd.concat([ids[["h", "id"]], dups])
    # redirects of URLs without a page record, the first per URL, resolved hop by hop
    rfirst = redirects.groupby("h").rrow.min().rename("rrow").reset_index()
    red = redirects.merge(rfirst, on=["h", "rrow"])
    has_page = pages[["h"]].drop_duplicates().assign(page=True)
    red = red.merge(has_page, on="h", how="left")
    red = red[red.page.isna()][["h", "to"]]
    n_used = 0
    for _ in range(MAX_REDIRECT_HOPS):
        known = table[["h"]].assign(known=True)
        step = red.merge(table.rename(columns={"h": "to"}), on="to").merge(known, on="h", how="left")
        new = client.compute(step[step.known.isna()][["h", "id"]]).result()
        if len(new) == 0:
            break
        n_used += len(new)
        table = dd.concat([table, dd.from_pandas(new, npartitions=1)])
    resolved = links.merge(table, on="h", how="left").compute()
    link_dst = np.full(int(loffsets[-1]), -1, np.int64)
    got = resolved.dropna(subset=["id"])
    link_dst[got.lrow.to_numpy(np.int64)] = got.id.to_numpy(np.int64)
    n_rows = int(offsets[-1])
    n_first = int(first.shape[0].compute())
    return Join(page_rows=page_tab.row.to_numpy(np.int64), link_dst=link_dst, url_duplicates=n_rows - n_first,
                 digest_duplicates=n_first - len(page_tab), redirects_used=n_used)


def _pages_frame(part: tuple[str, int, int, int]) -> Any:
    import pandas as pd

    path, off, _, _ = part
    with np.load(path, allow_pickle=False) as z:
        h, d = np.asarray(z["url_hash"]), np.asarray(z["digest_hash"])
    return pd.DataFrame({"row": np.arange(off, off + len(h), dtype=np.int64), "h": h, "d": d})


def _links_frame(part: tuple[str, int, int, int]) -> Any:
    import pandas as pd

    path, _, loff, _ = part
    with np.load(path, allow_pickle=False) as z:
        h = np.asarray(z["link_hash"])
    return pd.DataFrame({"lrow": np.arange(loff, loff + len(h), dtype=np.int64), "h": h})


def _redirects_frame(part: tuple[str, int, int, int]) -> Any:
    import pandas as pd

    path, _, _, roff = part
    with np.load(path, allow_pickle=False) as z:
        f, t = np.asarray(z["redirect_from"]), np.asarray(z["redirect_to"])
    return pd.DataFrame({"rrow": np.arange(roff, roff + len(f), dtype=np.int64), "h": f, "to": t})


def page_labels(urls: Sequence[str], label_map: dict[str, list[str]] | None,
                rules: list[tuple[str, str]] | None) -> list[list[str]]:
    """Each URL's labels: the map's, then its rule's (:class:`~gym_crawl.web.warc_labels.LabelRules`)."""
    matcher = LabelRules(rules) if rules else None
    out: list[list[str]] = []
    for u in urls:
        labs = list(label_map.get(u, ())) if label_map else []
        lab = matcher.label(u) if matcher is not None else None
        if lab is not None and lab not in labs:
            labs.append(lab)
        out.append(labs)
    return out


def assemble(chunks: list[dict[str, Any]], join: Join, *, include_unfetched: bool, name: str,
              label_map: dict[str, list[str]] | None, rules: list[tuple[str, str]] | None,
              meta: dict[str, Any]) -> Corpus:
    """Read the chunks once more, one at a time, into the corpus arrays."""
    # global vocabulary: the sorted union of the chunk vocabularies
    words: set[str] = set()
    for c in chunks:
        with np.load(c["path"], allow_pickle=False) as z:
            words.update(read_table(z, "vocab"))
    page_rows = join.page_rows
    n_rows = sum(c["pages"] for c in chunks)
    row_id = np.full(n_rows, -1, np.int64)
    row_id[page_rows] = np.arange(len(page_rows))
    link_dst = join.link_dst.copy()
    # links to URLs not in the archive: new text-less pages (in order of first link), or dropped
    unfetched_urls: list[str] = []
    if include_unfetched and (link_dst < 0).any():
        first_of: dict[int, int] = {}
        row0 = loff = 0
        for c in chunks:
            with np.load(c["path"], allow_pickle=False) as z:
                lh = np.asarray(z["link_hash"])
                src_rows = row0 + np.repeat(np.arange(c["pages"]), np.diff(np.asarray(z["link_ptr"])))
                miss = np.flatnonzero((link_dst[loff:loff + len(lh)] < 0) & (row_id[src_rows] >= 0))
                if len(miss):
                    lurls = read_table(z, "link_urls")
                    for j in miss.tolist():
                        hj = int(lh[j])
                        if hj not in first_of:
                            first_of[hj] = len(page_rows) + len(unfetched_urls)
                            unfetched_urls.append(lurls[j])
                        link_dst[loff + j] = first_of[hj]
            row0 += c["pages"]
            loff += len(lh)
    for u in unfetched_urls:
        words.update(tokenize(url_text(u)))
    vocab = sorted(words)
    vocab_id = {w: i for i, w in enumerate(vocab)}
    n_fetched = len(page_rows)
    n = n_fetched + len(unfetched_urls)

    # Page ids follow the rows, so each chunk's kept pages are the next ids: the columns are built chunk by
    # chunk with vectorized gathers, holding one chunk plus the growing corpus columns.
    cols: dict[str, list[np.ndarray]] = {k: [] for k in (
        "text_ptr", "text_terms", "text_counts", "url_ptr", "url_terms", "texts_off", "texts_blob",
        "l_src", "l_dst", "l_row", "l_pos", "a_ptr", "a_terms", "c_ptr", "c_terms")}
    titles: list[str] = []
    urls: list[str] = []
    row0 = loff = 0
    for c in chunks:
        with np.load(c["path"], allow_pickle=False) as z:
            lv = read_table(z, "vocab").tolist()
            remap = np.asarray([vocab_id[w] for w in lv], np.int32) if lv else np.zeros(0, np.int32)
            ids = row_id[row0:row0 + c["pages"]]
            keep = np.flatnonzero(ids >= 0)
            ptr, terms = _gather_csr(np.asarray(z["text_ptr"]), np.asarray(z["text_terms"]), keep)
            _, counts = _gather_csr(np.asarray(z["text_ptr"]), np.asarray(z["text_counts"]), keep)
            terms = remap[terms]
            o = np.lexsort((terms, np.repeat(np.arange(len(keep)), np.diff(ptr))))  # words sorted within a page
            cols["text_ptr"].append(ptr)
            cols["text_terms"].append(terms[o])
            cols["text_counts"].append(counts[o])
            ptr, terms = _gather_csr(np.asarray(z["url_ptr"]), np.asarray(z["url_terms"]), keep)
            cols["url_ptr"].append(ptr)
            cols["url_terms"].append(remap[terms])
            off, blob = _gather_csr(np.asarray(z["texts_off"]), np.asarray(z["texts_blob"]), keep)
            cols["texts_off"].append(off)
            cols["texts_blob"].append(blob)
            t_tab, u_tab = read_table(z, "titles"), read_table(z, "urls")
            titles.extend(t_tab[int(r)] for r in keep)
            urls.extend(u_tab[int(r)] for r in keep)
            lp = np.asarray(z["link_ptr"])
            m = int(lp[-1])
            src = ids[np.repeat(np.arange(c["pages"]), np.diff(lp))]
            dst = link_dst[loff:loff + m]
            sel = np.flatnonzero((src >= 0) & (dst >= 0) & (src != dst))
            cols["l_src"].append(src[sel])
            cols["l_dst"].append(dst[sel])
            cols["l_row"].append(sel + loff)
            cols["l_pos"].append(np.asarray(z["position"])[sel])
            for k, col in (("a", "anchor"), ("c", "context")):
                ptr, terms = _gather_csr(np.asarray(z[f"{col}_ptr"]), np.asarray(z[f"{col}_terms"]), sel)
                cols[f"{k}_ptr"].append(ptr)
                cols[f"{k}_terms"].append(remap[terms])
        row0 += c["pages"]
        loff += m
    for u in unfetched_urls:  # text-less pages: only their URL words
        toks = np.asarray([vocab_id[w] for w in tokenize(url_text(u))], np.int32)
        cols["text_ptr"].append(np.zeros(2, np.int64))
        cols["url_ptr"].append(np.asarray([0, len(toks)], np.int64))
        cols["url_terms"].append(toks)
        urls.append(u)
        titles.append("")
    text_ptr, text_terms = _cat_csr(list(zip(cols["text_ptr"], cols["text_terms"] + [np.zeros(0, np.int32)]
                                             * len(unfetched_urls))))
    text_counts = np.concatenate(cols["text_counts"]).astype(np.int32)
    title_ptr, title_terms = _cat_csr(list(zip(cols["url_ptr"], cols["url_terms"])))
    texts_off, texts_blob = _cat_csr(list(zip(cols["texts_off"], cols["texts_blob"])), np.uint8)
    texts_off = np.concatenate([texts_off, np.full(len(unfetched_urls), texts_off[-1], np.int64)])

    # links: sorted by source page, in the order they appear; a (source, target) pair counts once
    src = np.concatenate(cols["l_src"])
    dst = np.concatenate(cols["l_dst"])
    lrow = np.concatenate(cols["l_row"])
    pos = np.concatenate(cols["l_pos"])
    a_ptr, a_terms = _cat_csr(list(zip(cols["a_ptr"], cols["a_terms"])))
    c_ptr, c_terms = _cat_csr(list(zip(cols["c_ptr"], cols["c_terms"])))
    del cols
    _, first = np.unique(src * max(n, 1) + dst, return_index=True)
    order = first[np.lexsort((lrow[first], src[first]))]
    link_ptr = np.zeros(n + 1, np.int64)
    link_ptr[1:] = np.cumsum(np.bincount(src[order], minlength=n))
    anchor_ptr, anchor_terms = _gather_csr(a_ptr, a_terms, order)
    context_ptr, context_terms = _gather_csr(c_ptr, c_terms, order)
    pos_counts = np.bincount(pos[order].astype(np.int64), minlength=len(LINK_POSITIONS))
    titles = [t or u for t, u in zip(titles, urls)]
    seen = Counter(titles)
    titles = [t if seen[t] == 1 or t == u else f"{t} ({u})" for t, u in zip(titles, urls)]
    domains_of = [url_host(u) for u in urls]
    dom_names = sorted(set(domains_of))
    dom_id = {d: i for i, d in enumerate(dom_names)}
    labels_of = page_labels(urls, label_map, rules)
    lab_names = sorted({lab for labs in labels_of for lab in labs})
    lab_id = {lab: i for i, lab in enumerate(lab_names)}
    label_ptr = np.zeros(n + 1, np.int64)
    label_ptr[1:] = np.cumsum([len(x) for x in labels_of])
    summary = meta["warc_summary"]
    summary.update(pages=n, fetched_pages=n_fetched, unfetched_pages=len(unfetched_urls), links=len(order),
                   link_positions={p: int(k) for p, k in zip(LINK_POSITIONS, pos_counts)},
                   labelled_pages=int(sum(1 for x in labels_of if x)))
    if label_map:
        page_urls = set(urls)
        summary["label_map_unmatched"] = sum(1 for u in label_map if u not in page_urls)
    if unfetched_urls:
        meta["unfetched_pages"] = {"first": n_fetched, "count": len(unfetched_urls)}
    return Corpus(
        text_ptr=text_ptr, text_terms=text_terms, text_counts=text_counts,
        title_ptr=title_ptr, title_terms=title_terms,
        link_ptr=link_ptr, link_dst=dst[order].astype(np.int32),
        anchor_ptr=anchor_ptr, anchor_terms=anchor_terms, context_ptr=context_ptr, context_terms=context_terms,
        page_domain=np.asarray([dom_id[d] for d in domains_of], np.int32),
        label_ptr=label_ptr,
        label_ids=np.asarray([lab_id[lab] for labs in labels_of for lab in sorted(labs)], np.int32),
        titles=StringTable.from_strings(titles), urls=StringTable.from_strings(urls),
        vocab=StringTable.from_strings(vocab),
        domains=StringTable.from_strings(dom_names), labels=StringTable.from_strings(lab_names),
        texts=StringTable(texts_blob, texts_off), meta={"name": name, **meta},
        link_position=pos[order].astype(np.int8),
    )


def _cat_csr(parts: list[tuple[np.ndarray, np.ndarray]], dtype: Any = np.int32) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate CSR blocks ``(ptr, values)`` row-wise."""
    ptrs, vals, base = [np.zeros(1, np.int64)], [], 0
    for p, v in parts:
        ptrs.append(np.asarray(p[1:], np.int64) + base)
        vals.append(v)
        base += len(v)
    return np.concatenate(ptrs), (np.concatenate(vals).astype(dtype) if vals else np.zeros(0, dtype))


def _gather_csr(ptr: np.ndarray, vals: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The CSR rows ``rows`` of ``(ptr, vals)``, in that order (values keep their dtype)."""
    rows = np.asarray(rows, np.int64)
    lens = (ptr[1:] - ptr[:-1])[rows]
    out_ptr = np.zeros(len(rows) + 1, np.int64)
    out_ptr[1:] = np.cumsum(lens)
    if not len(rows) or out_ptr[-1] == 0:
        return out_ptr, vals[:0]
    starts = np.repeat(ptr[:-1][rows], lens)
    within = np.arange(int(out_ptr[-1])) - np.repeat(out_ptr[:-1], lens)
    return out_ptr, vals[starts + within]
