"""A power-law web of any size, generated in chunks straight to disk: the corpus for crawls of 10^7+ pages.

The synthetic Wikipedia-like web (:mod:`gym_crawl.webgen.synthetic`) holds every page in memory while it
generates (3.4 GB at 10^6 pages), so it stops short of the web sizes where a crawl's memory must not follow the
web's. This generator writes a simpler web chunk by chunk into memory-mapped ``.npy`` files — a few hundred MB
of memory at any size — then saves it once into the corpus cache (``powerlaw-<N>``: generated once, then
memory-mapped), with a progress bar:

* **pages** in domains of ~400 consecutive ids; a domain has a topic (one of :data:`TOPICS`) and 80 % of its
  pages carry it as their label (ground truth), the rest a random topic; the last 16 ids are the topics' main
  pages, titled with the topic's name (a topic's default seed) and the most linked-to pages of the web;
* **links**: out-degree ``2 + Zipf(2.3)`` (capped at 150, mean ≈ 4.8); each link stays in its domain
  (55 %), goes to a random page of another domain of the source page's topic (30 %: topical locality), or to a
  globally popular page (15 %: a fixed random ranking, rank drawn as ``u^4``, so in-degrees follow a power law);
* **text**: 12 words per page, each a word of the page's topic with probability 0.5 (else a common word), kept
  as the corpus keeps a page's bag of words — each distinct word once, in word-id order, with its count; a
  2-word title; one anchor word per link (the target topic's with probability 0.5) and two context words;
* each page's links are stored in ascending target page (ties in the order drawn), so a crawl walks a page's
  targets in page order as they are stored (:attr:`~gym_crawl.corpus.core.Corpus.links_by_target`).

Deterministic in ``(n_pages, seed)``: every chunk of :data:`CHUNK` pages draws from its own generator seeded
by ``(seed, chunk)``.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._console import Progress
from gym_crawl.corpus.cache import data_dir, open_cached, store_cached
from gym_crawl.corpus.core import Corpus, StringTable

__all__ = ["BYTES_PER_PAGE", "CHUNK", "GENERATOR_VERSION", "TOPICS", "generate_powerlaw", "powerlaw_cache_path",
           "powerlaw_corpus"]

#: 3: each page's links stored in ascending target page (ties in the order drawn), their anchor and context words
#: with them, so a crawl walks a page's targets in page order without sorting them
#: (:attr:`~gym_crawl.corpus.core.Corpus.links_by_target`); the same links, words and pages as version 2, only
#: their order within a page differs. 2: a page's words as a bag (each distinct word once, sorted, with its count)
#: as :class:`Corpus` requires; version 1 listed a word drawn twice twice (count 1 each), which over-counted its
#: document frequency and let the tf-idf cosine exceed 1
GENERATOR_VERSION = 3
#: pages per generated chunk (part of the output's definition: each chunk has its own random stream)
CHUNK = 1 << 20
#: the topics (labels); each is also a word of the vocabulary, with 59 words of its own
TOPICS = ("geology", "music", "medicine", "football", "cooking", "astronomy", "chemistry", "poetry", "finance",
          "aviation", "botany", "cinema", "history", "physics", "sculpture", "wrestling")
_TOPIC_WORDS = 60
_COMMON_WORDS = 1000
_DOMAIN_PAGES = 400
_TEXT, _TITLE, _CONTEXT = 12, 2, 2
BYTES_PER_PAGE = 260
"""Stored size per page (≈ 2.6 GB for 10^7 pages), for refusing sizes that cannot fit."""


def _letters(k: np.ndarray, width: int) -> list[str]:
    """``width`` lowercase letters spelling each of ``k`` in base 26 (letters only: the tokenizer's words)."""
    out = []
    for v in k.tolist():
        s = []
        for _ in range(width):
            s.append(chr(97 + v % 26))
            v //= 26
        out.append("".join(s))
    return out


def _vocab() -> list[str]:
    words = list(TOPICS)
    for t in TOPICS:
        words += [t + w for w in _letters(np.arange(1, _TOPIC_WORDS), 2)]
    words += ["common" + w for w in _letters(np.arange(_COMMON_WORDS), 3)]
    return words


def _titles(n: int) -> StringTable:
    """``page0000001``-style titles (fixed width) for pages ``0..n-T-1``, then the topics' names for their main
    pages (the last ``T`` ids), built without a Python string per page."""
    T = len(TOPICS)
    k = n - T
    width = max(7, len(str(n - 1)))
    blob = np.empty(k * (4 + width) + sum(len(t) for t in TOPICS), np.uint8)
    fixed = blob[: k * (4 + width)].reshape(k, 4 + width)
    fixed[:, :4] = np.frombuffer(b"page", np.uint8)
    for a in range(0, k, CHUNK):
        b = min(k, a + CHUNK)
        digits = (np.arange(a, b, dtype=np.int64)[:, None] // (10 ** np.arange(width - 1, -1, -1))) % 10
        fixed[a:b, 4:] = (digits + 48).astype(np.uint8)
    names = "".join(TOPICS).encode()
    blob[k * (4 + width):] = np.frombuffer(names, np.uint8)
    offsets = np.empty(n + 1, np.int64)
    offsets[: k + 1] = np.arange(k + 1, dtype=np.int64) * (4 + width)
    offsets[k + 1:] = k * (4 + width) + np.cumsum([len(t) for t in TOPICS])
    return StringTable(blob, offsets)


def _words_of(topic: np.ndarray, rng: np.random.Generator, p_topic: float) -> np.ndarray:
    """One word id per entry of ``topic``: a word of that topic with probability ``p_topic``, else a common one."""
    T = len(TOPICS)
    own = topic.astype(np.int64) * (_TOPIC_WORDS - 1) + T + rng.integers(0, _TOPIC_WORDS - 1, len(topic))
    own = np.where(rng.random(len(topic)) < 0.1, topic, own)  # the topic's own name now and then
    common = T * _TOPIC_WORDS + rng.integers(0, _COMMON_WORDS, len(topic))
    return np.where(rng.random(len(topic)) < p_topic, own, common).astype(np.int32)


def _bags(words: np.ndarray, per_page: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pages' words (``per_page`` a page, page after page) as bags: ``(terms, counts, sizes)`` — each page's distinct
    words in ascending id order with their counts, and the number of distinct words of each page."""
    w = np.sort(words.reshape(-1, per_page), axis=1)
    first = np.ones(w.shape, bool)
    first[:, 1:] = w[:, 1:] != w[:, :-1]
    starts = np.flatnonzero(first.ravel())
    counts = np.diff(np.append(starts, w.size)).astype(np.int32)
    return w.ravel()[starts], counts, first.sum(axis=1)


def _append_bags(words: np.ndarray, a: int, ptr: np.ndarray, terms: np.ndarray, counts: np.ndarray, at: int) -> int:
    """Write pages ``a, a+1, ...``'s bags (:func:`_bags` of their :data:`_TEXT` words each) at entry ``at`` of
    ``terms`` / ``counts`` and their ends into ``ptr``; return the entry after them."""
    t, c, sizes = _bags(words, _TEXT)
    terms[at:at + len(t)], counts[at:at + len(t)] = t, c
    ptr[a] = at if a == 0 else ptr[a]
    ptr[a + 1:a + 1 + len(sizes)] = at + np.cumsum(sizes)
    return at + len(t)


def _chunk_links(r: np.random.Generator, src: np.ndarray, page_domain: np.ndarray, dom_start: np.ndarray,
                 label: np.ndarray, topic_ptr: np.ndarray, topic_doms: np.ndarray,
                 popular: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The links of one chunk's pages (``src``: each link's source page, ascending) drawn from ``r``: their targets,
    anchor words and context words (:data:`_CONTEXT` a link, flat), each page's links in ascending target (stable:
    ties keep the order drawn), their words with them."""
    n, k = len(page_domain), len(src)
    u = r.random(k)
    sd = page_domain[src].astype(np.int64)
    lo, size = dom_start[sd], dom_start[sd + 1] - dom_start[sd]
    local = lo + (r.random(k) * size).astype(np.int64)
    st = label[src]
    pick = topic_ptr[st] + (r.random(k) * (topic_ptr[st + 1] - topic_ptr[st])).astype(np.int64)
    td = topic_doms[pick]
    topical = dom_start[td] + (r.random(k) * (dom_start[td + 1] - dom_start[td])).astype(np.int64)
    pop = popular[np.minimum((r.random(k) ** 4 * n).astype(np.int64), n - 1)]
    dst = np.where(u < 0.55, local, np.where(u < 0.85, topical, pop)).astype(np.int32)
    anchors = _words_of(label[dst], r, 0.5)
    contexts = _words_of(np.repeat(st, _CONTEXT), r, 0.5).reshape(k, _CONTEXT)
    by_target = np.argsort((src - (src[0] if k else 0)) * n + dst, kind="stable")
    return dst[by_target], anchors[by_target], contexts[by_target].ravel()


def _npy(folder: Path, name: str, dtype: Any, n: int) -> np.ndarray:
    return np.lib.format.open_memmap(folder / f"{name}.npy", mode="w+", dtype=dtype, shape=(n,))


def generate_powerlaw(n_pages: int, seed: int = 0, folder: str | Path | None = None,
                      progress: bool = True) -> Corpus:
    """The power-law web of ``n_pages`` pages (see the module docstring), its arrays memory-mapped from ``.npy``
    files in ``folder`` (a temporary folder by default: save the corpus elsewhere before it goes)."""
    n = int(n_pages)
    if n < 2 * _DOMAIN_PAGES:
        raise ValueError(f"n_pages must be >= {2 * _DOMAIN_PAGES} for a power-law web, got {n_pages!r}")
    work = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="powerlaw-"))
    work.mkdir(parents=True, exist_ok=True)
    T = len(TOPICS)
    D = max(2, n // _DOMAIN_PAGES)
    top = np.random.default_rng([seed, 0x7057])
    dom_topic = top.integers(0, T, D).astype(np.int32)
    dom_start = (np.arange(D + 1, dtype=np.int64) * n) // D
    page_domain = (np.searchsorted(dom_start, np.arange(n, dtype=np.int64), side="right") - 1).astype(np.int32)
    by_topic = [np.flatnonzero(dom_topic == t) for t in range(T)]
    by_topic = [d if len(d) else np.arange(D) for d in by_topic]
    topic_ptr = np.zeros(T + 1, np.int64)
    topic_ptr[1:] = np.cumsum([len(d) for d in by_topic])
    topic_doms = np.concatenate(by_topic).astype(np.int64)
    # the topics' main pages are the last T ids (titled with the topic's name: the default seeds), the most popular
    mains = np.arange(n - T, n, dtype=np.int32)
    popular = np.concatenate([mains, top.permutation(n - T).astype(np.int32)])
    chunks = range(0, n, CHUNK)
    label = np.empty(n, np.int32)
    deg = np.empty(n, np.int64)
    for c, a in enumerate(chunks):  # pass 1: labels and out-degrees (each chunk its own stream)
        b = min(n, a + CHUNK)
        r = np.random.default_rng([seed, c, 1])
        pd = page_domain[a:b]
        label[a:b] = np.where(r.random(b - a) < 0.8, dom_topic[pd], r.integers(0, T, b - a))
        deg[a:b] = np.minimum(r.zipf(2.3, b - a), 148) + 2
    label[n - T:] = np.arange(T)
    link_ptr = _npy(work, "link_ptr", np.int64, n + 1)
    link_ptr[0] = 0
    np.cumsum(deg, out=link_ptr[1:])
    m = int(link_ptr[-1])
    link_dst = _npy(work, "link_dst", np.int32, m)
    anchor_terms = _npy(work, "anchor_terms", np.int32, m)
    context_terms = _npy(work, "context_terms", np.int32, _CONTEXT * m)
    text_ptr = _npy(work, "text_ptr", np.int64, n + 1)
    text_terms = _npy(work, "text_terms", np.int32, _TEXT * n)  # at most _TEXT distinct words a page
    text_counts = _npy(work, "text_counts", np.int32, _TEXT * n)
    n_text = 0
    title_terms = _npy(work, "title_terms", np.int32, _TITLE * n)
    with Progress(len(chunks), f"power-law web of {n:,} pages", unit="chunks", enabled=progress) as bar:
        for c, a in enumerate(chunks):  # pass 2: links and words
            b = min(n, a + CHUNK)
            r = np.random.default_rng([seed, c, 2])
            la, lb = int(link_ptr[a]), int(link_ptr[b])
            src = np.repeat(np.arange(a, b, dtype=np.int64), deg[a:b])
            link_dst[la:lb], anchor_terms[la:lb], context_terms[_CONTEXT * la:_CONTEXT * lb] = _chunk_links(
                r, src, page_domain, dom_start, label, topic_ptr, topic_doms, popular)
            n_text = _append_bags(_words_of(np.repeat(label[a:b], _TEXT), r, 0.5), a, text_ptr, text_terms, text_counts,
                                  n_text)
            title_terms[_TITLE * a:_TITLE * b] = _words_of(np.repeat(label[a:b], _TITLE), r, 0.7)
            bar.update()
    vocab = _vocab()
    corpus = Corpus(
        text_ptr=text_ptr, text_terms=text_terms[:n_text], text_counts=text_counts[:n_text],
        title_ptr=np.arange(n + 1, dtype=np.int64) * _TITLE, title_terms=title_terms, link_ptr=link_ptr,
        link_dst=link_dst, anchor_ptr=np.arange(m + 1, dtype=np.int64), anchor_terms=anchor_terms,
        context_ptr=np.arange(m + 1, dtype=np.int64) * _CONTEXT, context_terms=context_terms,
        page_domain=page_domain, label_ptr=np.arange(n + 1, dtype=np.int64), label_ids=label,
        titles=_titles(n), vocab=StringTable.from_strings(vocab),
        domains=StringTable.from_strings(f"site{d}.example" for d in range(D)),
        labels=StringTable.from_strings(TOPICS),
        meta={"name": f"powerlaw-{n}-s{int(seed)}", "generator": "powerlaw", "generator_version": GENERATOR_VERSION,
              "seed": int(seed), "default_topic": TOPICS[0]})
    return corpus


def powerlaw_cache_path(n_pages: int, seed: int = 0) -> Path:
    """Where :func:`powerlaw_corpus` keeps ``(n_pages, seed)``: ``data_dir() / "powerlaw-<N>-s<seed>-v<version>"``."""
    return data_dir() / f"powerlaw-{int(n_pages)}-s{int(seed)}-v{GENERATOR_VERSION}"


def powerlaw_corpus(n_pages: int = 10_000_000, seed: int = 0, progress: bool = True) -> Corpus:
    """The power-law web of ``n_pages`` pages: generated once (chunks written to disk, a progress bar), saved into
    the corpus cache, then memory-mapped from it (``load_corpus("powerlaw-10000000")``)."""
    if isinstance(n_pages, bool) or not isinstance(n_pages, (int, np.integer)) or n_pages < 2 * _DOMAIN_PAGES:
        raise ValueError(f"n_pages must be an integer >= {2 * _DOMAIN_PAGES}, got {n_pages!r}")
    from gym_crawl._limits import check_fits

    check_fits(f"power-law web of {int(n_pages):,} pages", int(n_pages) * 64, "64 bytes per page while generating")
    path = powerlaw_cache_path(n_pages, seed)
    what = f"power-law web ({int(n_pages):,} pages)"
    c = open_cached(path, what=what)
    if c is not None and c.meta.get("generator_version") == GENERATOR_VERSION and c.n_pages == int(n_pages):
        return c
    tmp = Path(tempfile.mkdtemp(prefix="powerlaw-", dir=path.parent))
    try:
        corpus = generate_powerlaw(int(n_pages), seed, tmp, progress=progress)
        out = store_cached(corpus, path, what=what)
        if out is corpus:  # the cache could not be written: keep the generated files alive with the corpus
            return corpus
        return out
    finally:
        if (path / "manifest.json").exists():
            shutil.rmtree(tmp, ignore_errors=True)
