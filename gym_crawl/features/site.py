"""Site features real focused crawlers use: URL shape, URL-directory and host statistics, the link's
position in its page, and a page classifier trained online on the crawl's fetched pages
(``features="site"``; ``features="crawler+"`` is ``crawler`` ⊕ ``site``; ``features="hashed-site"`` is
``hashed-transferable`` ⊕ ``crawler`` ⊕ ``site``, for the hashed online learners; ``features="transferable+site"``
the same without the hashed link tokens, for fixed-width learners).

Every column reads only what a crawler has: the candidate's URL (known once a link to it is seen), the
best discovering link (its position in the fetched parent's HTML), and the crawl's record — fetched pages in
fetch order, their text, and the relevant flag the reward scheme gave them. Nothing reads an unfetched
page's text, relevance or labels. The columns are:

==============================  ==================================================================
``a.url_depth``                 path segments of the candidate's URL / 10, capped at 1
``a.url_depth_delta``           (the candidate's path segments − its best parent's) / 5, clipped to [-1, 1]:
                                down into a section (> 0) or up towards the site's top (< 0)
``a.same_dir_as_parent``        1 when the candidate's URL directory is its best parent's
``a.url_topic_overlap``         fraction of the topic's words (``words`` ∪ ``keywords``) among the URL's
                                path tokens
``a.url_token_rate_mean``       mean over the URL's path tokens of the token's smoothed relevant rate
                                among fetched pages whose URL has it: (relevant + h) / (fetched + 1),
                                h = the fraction of fetched pages flagged relevant so far (a token
                                never fetched scores h)
``a.url_token_rate_max``        the max of the same over the URL's tokens (0 for a URL without tokens)
``a.dir_fetched``               log(1 + fetched pages under the candidate's URL directory — host + path
                                minus its last segment) / log(1 + 100), capped at 1
``a.dir_relevant_ratio``        relevant / fetched pages under that directory (0 when none fetched)
``a.dir_unseen``                1 when no page under that directory has been fetched
``a.host_pending``              log(1 + discovered, unfetched pages of the candidate's host) / log(1 + 1000),
                                capped at 1 (discovered: linked from a fetched page or fetched)
``s.parent_prob``               the online page classifier's probability that the best parent is relevant
``a.max_parent_prob``           the max of that probability over all fetched parents of the candidate
``a.pos=<p>``                   one-hot position of the best discovering link in its page: ``nav``,
                                ``header/footer``, ``aside``, ``list``, ``main``, ``other`` (HTML outside
                                every landmark) or ``unknown`` (the corpus has no position column)
``bias``                        1
==============================  ==================================================================

**Page classifier** (ACHE's two levels: a page classifier on fetched pages feeds the link scorer). A logistic
regression over the unit tf-idf page vector of the crawl's text model (k = 64 dimensions, plus a bias), trained
by one SGD step per fetched page on the relevant flag the reward scheme gave it, in fetch order, starting from
zero weights at every episode. Each page's probability is taken *before* the classifier learns from that page
(prequential), so it is a prediction from the other pages, not its own label read back. A step costs
O(out-degree + k): the classifier predicts and learns once per newly fetched page.

**URLs** come from ``corpus.url(page)``: the pages' own URLs on web corpora (WARC archives, live webs); on
corpora without URLs (Wikispeedia, synthetic webs, HTML folders) the synthesized
``https://<domain>/wiki/<title>`` — so the tokens are the title's words, the depth is constant, the directory is
the domain (the ``dir`` columns then equal host statistics), and opaque-URL domains (``/p/<id>``) give no words.

**Episodes.** Every statistic is a function of the crawl's fetch sequence and relevant flags, memoized per
crawl state and rebuilt from that record whenever the state no longer extends what was seen (a reset, a
different topic or reward scheme) — so the rows are deterministic and per episode. The rows change when
other pages are fetched (``local = False``).
"""
from __future__ import annotations

import weakref
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from gym_crawl._arith import dot, exp, log1p, matmul
from gym_crawl.corpus.core import LINK_POSITIONS, Corpus
from gym_crawl.crawl.state import CrawlState
from gym_crawl.features.sets import CombinedFeatures, FeatureSet
from gym_crawl.pagemap import KeyedRows, grow_rows
from gym_crawl.text.model import TextModel
from gym_crawl.tokenize import tokenize

__all__ = ["SiteFeatures", "POSITION_COLUMNS", "link_positions", "crawler_plus", "transferable_site", "hashed_site"]

_LOG_DIR = log1p(100.0)
_LOG_HOST = log1p(1000.0)
#: URL path tokens kept per page (the first distinct ones)
MAX_URL_TOKENS = 8
#: one-hot position columns; corpus codes are indexes into LINK_POSITIONS, -1 = unknown
POSITION_COLUMNS = ("nav", "header/footer", "aside", "list", "main", "other", "unknown")
_CODE_TO_COLUMN = np.array([POSITION_COLUMNS.index(p if p not in ("header", "footer") else "header/footer")
                            for p in LINK_POSITIONS] + [POSITION_COLUMNS.index("unknown")], np.int64)


def link_positions(corpus: Corpus, links: np.ndarray) -> np.ndarray:
    """(len(links),) int8 position codes (indexes into
    :data:`~gym_crawl.corpus.core.LINK_POSITIONS`, -1 = unknown) of ``links``; all -1 on a corpus
    without a ``link_position`` column."""
    col = getattr(corpus, "link_position", None)
    links = np.asarray(links, np.int64)
    if col is None:
        return np.full(len(links), -1, np.int8)
    return np.asarray(col)[links].astype(np.int8)


class _UrlTable:
    """Per-corpus URL facts, parsed lazily page by page: path depth, directory id, path token ids — in rows keyed by
    page id (:class:`~gym_crawl.pagemap.KeyedRows`), so the table holds the pages crawls asked about, not a row per
    page of the web."""

    def __init__(self, corpus: Corpus):
        self.corpus = corpus
        #: ``toks1``: token id + 1 of the URL's first MAX_URL_TOKENS distinct path tokens (0: none)
        self.table = KeyedRows(("depth", np.int16), ("dir", np.int32), ("toks1", np.int32, MAX_URL_TOKENS))
        self.tok_ids: dict[str, int] = {}
        self.dir_ids: dict[str, int] = {}

    def ensure(self, pages: np.ndarray) -> np.ndarray:
        """Parse the URLs of ``pages`` not parsed yet; returns the rows of ``pages`` (int64)."""
        rows = self.table.rows(pages)
        missing = pages[rows < 0]
        if not len(missing):
            return rows
        new = np.unique(missing)
        added = self.table.add(new)  # may grow the columns: read them after
        depth, dirs, toks1 = self.table.cols["depth"], self.table.cols["dir"], self.table.cols["toks1"]
        for p, r in zip(new.tolist(), added.tolist()):
            parts = urlsplit(self.corpus.url(p))
            segs = [s for s in parts.path.split("/") if s]
            depth[r] = min(len(segs), 10_000)
            d = parts.netloc.lower() + "/" + "/".join(segs[:-1])
            dirs[r] = self.dir_ids.setdefault(d, len(self.dir_ids))
            words = list(dict.fromkeys(tokenize(" ".join(segs).replace("_", " "))))[:MAX_URL_TOKENS]
            toks1[r, :len(words)] = [self.tok_ids.setdefault(w, len(self.tok_ids)) + 1 for w in words]
        return self.table.rows(pages)

    def depth(self, rows: np.ndarray) -> np.ndarray:
        """int16 path depth of the pages in ``rows`` (:meth:`ensure`'s)."""
        return self.table.cols["depth"][rows]

    def dir(self, rows: np.ndarray) -> np.ndarray:
        """int32 URL-directory id of the pages in ``rows``."""
        return self.table.cols["dir"][rows]

    def toks(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows), MAX_URL_TOKENS) int64 token ids of the pages in ``rows``' URL path tokens, -1 padded."""
        return self.table.cols["toks1"][rows].astype(np.int64) - 1

    def token_id(self, word: str) -> int:
        return self.tok_ids.get(word, -1)


_URLS: weakref.WeakKeyDictionary[Corpus, _UrlTable] = weakref.WeakKeyDictionary()


def _url_table(corpus: Corpus) -> _UrlTable:
    t = _URLS.get(corpus)
    if t is None:
        t = _URLS[corpus] = _UrlTable(corpus)
    return t


class _Episode:
    """The statistics of one crawl, built from its fetch sequence in order. Per page (``pages``, keyed by page id:
    a page is there once discovered or fetched) the classifier's probability of a fetched page (``prob``) and the
    max over a page's fetched parents (``max_par``); per host (``hosts``, keyed by domain id) the pages discovered
    (``seen``) — all sized by what the crawl touched."""

    def __init__(self, state: CrawlState, lr: float, l2: float):
        self.scorer, self.scheme = state.scorer, state.scheme
        self.n = 0
        self.seq = np.zeros(64, np.int32)
        self.rel = np.zeros(64, bool)
        self.dir_f = np.zeros(64, np.float64)
        self.dir_r = np.zeros(64, np.float64)
        self.tok_f = np.zeros(256, np.float64)
        self.tok_r = np.zeros(256, np.float64)
        self.pages = KeyedRows(("prob", np.float32), ("max_par", np.float32))
        self.hosts = KeyedRows(("seen", np.int64))
        assert state.scorer is not None
        self.text: TextModel = state.scorer.text
        self.w = np.zeros(self.text.dim + 1, np.float64)
        self.lr, self.l2 = lr, l2
        topic = state.scorer.topic
        self.topic_words = sorted({t for w in (*topic.words, *(topic.keywords or ())) for t in tokenize(str(w))})

    def _unit_page_vectors(self, corpus: Corpus, pages: np.ndarray) -> np.ndarray:
        """(len(pages), k) float64 unit tf-idf page vectors (the text model's ``page_vectors``, normalized),
        computed row by row (always, so a page's vector does not depend on how many pages one call sees): a
        step fetches one page, and a direct sum beats building a sparse matrix."""
        tm = self.text
        X = np.zeros((len(pages), tm.dim), np.float64)
        for i, p in enumerate(pages.tolist()):
            a, b = int(corpus.text_lo[p]), int(corpus.text_hi[p])
            t = np.asarray(corpus.text_terms[a:b], np.int64)
            wgt = np.asarray(corpus.text_counts[a:b], np.float64) * tm.idf[t]
            X[i] = matmul(wgt[None, :], tm.vectors[t])[0]
        norms = np.linalg.norm(X, axis=1, keepdims=True)
        return np.divide(X, norms, out=np.zeros_like(X), where=norms > 0)

    def extends(self, state: CrawlState) -> bool:
        n = state.n_fetched
        if self.scorer is not state.scorer or self.scheme is not state.scheme or n < self.n:
            return False
        done = state.fetched[:self.n]
        return bool(np.array_equal(self.seq[:self.n], done) and np.array_equal(self.rel[:self.n], state.relevant[done]))

    def advance(self, state: CrawlState, urls: _UrlTable) -> None:
        n = state.n_fetched
        if n == self.n:
            return
        new = np.asarray(state.fetched[self.n:n], np.int64)
        rel = np.asarray(state.relevant[new], bool)
        rows = urls.ensure(new)
        self.seq = grow_rows(self.seq, n)
        self.rel = grow_rows(self.rel, n)
        self.seq[self.n:n] = new
        self.rel[self.n:n] = rel
        # URL directory and token counts
        dirs = urls.dir(rows)
        self.dir_f = grow_rows(self.dir_f, len(urls.dir_ids))
        self.dir_r = grow_rows(self.dir_r, len(urls.dir_ids))
        np.add.at(self.dir_f, dirs, 1.0)
        np.add.at(self.dir_r, dirs, rel.astype(np.float64))
        toks = urls.toks(rows)
        has = toks >= 0
        self.tok_f = grow_rows(self.tok_f, len(urls.tok_ids))
        self.tok_r = grow_rows(self.tok_r, len(urls.tok_ids))
        np.add.at(self.tok_f, toks[has], 1.0)
        np.add.at(self.tok_r, toks[has], np.broadcast_to(rel[:, None], toks.shape)[has].astype(np.float64))
        # page classifier: predict each page before learning from it (fetch order)
        X = self._unit_page_vectors(state.corpus, new)
        w = self.w
        dom = np.asarray(state.page_domain)
        lo, hi, dst_all = state.link_lo, state.link_hi, state.link_dst
        pages = self.pages
        for i, p in enumerate(new.tolist()):
            z = dot(X[i], w[:-1]) + float(w[-1])
            pr = 1.0 / (1.0 + exp(-z)) if z >= 0 else exp(z) / (1.0 + exp(z))
            g = float(rel[i]) - pr
            w[:-1] += self.lr * (g * X[i] - self.l2 * w[:-1])
            w[-1] += self.lr * g
            # discovered pages per host, and the max parent probability of each out-link
            me = np.array([p], np.int64)
            r = pages.rows(me)
            if r[0] < 0:
                r = pages.add(me)
                self._count_hosts(dom[me])
            pages.cols["prob"][r[0]] = pr
            d = np.asarray(dst_all[int(lo[p]):int(hi[p])], np.int64)
            d = d[(d >= 0) & (d != p)]
            if len(d):
                r = pages.rows(d)
                fresh = np.unique(d[r < 0])
                if len(fresh):
                    pages.add(fresh)
                    self._count_hosts(dom[fresh])
                    r = pages.rows(d)
                np.maximum.at(pages.cols["max_par"], r, np.float32(pr))
        self.n = n

    def _count_hosts(self, doms: np.ndarray) -> None:
        """One more discovered page on the host of each of ``doms`` (domain ids, repeats counted)."""
        u, k = np.unique(doms, return_counts=True)
        r = self.hosts.rows(u)
        if np.any(r < 0):
            r[r < 0] = self.hosts.add(u[r < 0])
        self.hosts.cols["seen"][r] += k

    def host_seen(self, doms: np.ndarray) -> np.ndarray:
        """Pages discovered (linked from a fetched page, or fetched) on the host of each of ``doms``."""
        return self.hosts.get("seen", doms)


class SiteFeatures(FeatureSet):
    """URL, URL-directory, host, link-position and online page-classifier columns (see the module docstring).

    Args:
        n_categories: unused (the registry's signature).
        lr: the page classifier's SGD step size.
        l2: its L2 weight decay per step.
    """

    name = "site"
    local = False

    def __init__(self, n_categories: int = 4, lr: float = 0.5, l2: float = 1e-4):
        if not lr > 0 or not l2 >= 0:
            raise ValueError(f"site features: lr must be > 0 and l2 >= 0, got lr={lr!r}, l2={l2!r}")
        self.lr, self.l2 = float(lr), float(l2)
        self.names = ["a.url_depth", "a.url_depth_delta", "a.same_dir_as_parent", "a.url_topic_overlap",
                      "a.url_token_rate_mean", "a.url_token_rate_max",
                      "a.dir_fetched", "a.dir_relevant_ratio", "a.dir_unseen", "a.host_pending",
                      "s.parent_prob", "a.max_parent_prob"] + [f"a.pos={p}" for p in POSITION_COLUMNS] + ["bias"]
        self._eps: weakref.WeakKeyDictionary[CrawlState, _Episode] = weakref.WeakKeyDictionary()

    def __getstate__(self) -> dict[str, Any]:
        # the per-crawl memo is rebuilt from the crawl's record on first use
        d = self.__dict__.copy()
        d["_eps"] = None
        return d

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__.update(d)
        self._eps = weakref.WeakKeyDictionary()

    def episode(self, state: CrawlState) -> _Episode:
        """The crawl's statistics, brought up to date with its fetches."""
        if state.scorer is None:
            raise RuntimeError("site features: the crawl state has no topic yet (reset the env first)")
        urls = _url_table(state.corpus)
        ep = self._eps.get(state)
        if ep is None or not ep.extends(state):
            ep = self._eps[state] = _Episode(state, self.lr, self.l2)
        ep.advance(state, urls)
        return ep

    def compute(self, state: CrawlState, pages: np.ndarray) -> np.ndarray:
        pages = np.asarray(pages, dtype=np.int64)
        out = np.zeros((len(pages), self.dim), np.float32)
        if not len(pages):
            return out
        bp = self.best_parents(state, pages).astype(np.int64)
        ep = self.episode(state)
        urls = _url_table(state.corpus)
        rp = urls.ensure(pages)
        rb = urls.ensure(bp)  # fetched pages: parsed already, unless the memo was rebuilt
        out[:, 0] = np.minimum(urls.depth(rp) / 10.0, 1.0)
        out[:, 1] = np.clip((urls.depth(rp).astype(np.float64) - urls.depth(rb)) / 5.0, -1.0, 1.0)
        out[:, 2] = urls.dir(rp) == urls.dir(rb)
        toks = urls.toks(rp)
        has = toks >= 0
        n_tok = has.sum(axis=1)
        topic_ids = np.array([i for i in (urls.token_id(w) for w in ep.topic_words) if i >= 0], np.int64)
        if len(ep.topic_words):
            out[:, 3] = (np.isin(toks, topic_ids) & has).sum(axis=1) / len(ep.topic_words)
        h = float(ep.rel[:ep.n].mean()) if ep.n else 0.0
        t = np.where(has, toks, 0)
        tf = grow_rows(ep.tok_f, len(urls.tok_ids))[t]
        tr = grow_rows(ep.tok_r, len(urls.tok_ids))[t]
        rate = np.where(has, (tr + h) / (tf + 1.0), 0.0)
        out[:, 4] = np.divide(rate.sum(axis=1), n_tok, out=np.zeros(len(pages)), where=n_tok > 0)
        out[:, 5] = rate.max(axis=1)
        d = urls.dir(rp)
        dir_f = grow_rows(ep.dir_f, len(urls.dir_ids))[d]
        dir_r = grow_rows(ep.dir_r, len(urls.dir_ids))[d]
        out[:, 6] = np.minimum(log1p(np.asarray(dir_f, np.float64)) / _LOG_DIR, 1.0)
        out[:, 7] = np.divide(dir_r, dir_f, out=np.zeros(len(pages)), where=dir_f > 0)
        out[:, 8] = dir_f == 0
        dom = state.page_domain[pages]
        pending = np.maximum(ep.host_seen(dom) - state.dom_fetched[dom], 0)
        out[:, 9] = np.minimum(log1p(np.asarray(pending, np.float64)) / _LOG_HOST, 1.0)
        out[:, 10] = ep.pages.get("prob", bp)
        out[:, 11] = ep.pages.get("max_par", pages)
        bl = np.asarray(state.best_link[pages], np.int64)  # the pages' rows, not the whole column
        code = link_positions(state.corpus, np.maximum(bl, 0)).astype(np.int64)
        code[bl < 0] = -1
        out[np.arange(len(pages)), 12 + _CODE_TO_COLUMN[code]] = 1.0
        out[:, -1] = 1.0
        return out


def crawler_plus(n_categories: int = 4) -> CombinedFeatures:
    """``crawler`` (host, depth, sibling statistics) ⊕ ``site`` (URL, directory, position, page classifier)."""
    from gym_crawl.features.crawler import CrawlerFeatures

    return CombinedFeatures([CrawlerFeatures(n_categories), SiteFeatures(n_categories)], name="crawler+")


def transferable_site(n_categories: int = 4, name: str = "transferable+site", dim: int = 64) -> CombinedFeatures:
    """``transferable`` (topic-relative link and parent columns, best-first's link score among them) ⊕ ``crawler``
    ⊕ ``site``, all dense: the columns of ``hashed-site`` without the hashed link tokens, for learners that take
    a fixed-width row (the SB3 candidate scorer). Not ``local`` (the crawler and site columns follow crawl-wide
    statistics). ``dim``: the text model's word-vector dimension."""
    from gym_crawl.features.content import transferable
    from gym_crawl.features.crawler import CrawlerFeatures

    return CombinedFeatures([transferable(n_categories, dim=dim), CrawlerFeatures(n_categories),
                             SiteFeatures(n_categories)], name=name)


def hashed_site(n_categories: int = 4, dim: int = 64) -> FeatureSet:
    """``hashed-transferable`` (hashed link tokens ⊕ the transferable columns) ⊕ ``crawler`` ⊕ ``site`` as dense
    columns: what the hashed online learners use, plus the host, directory, position and page-classifier
    columns. Not ``local`` (the crawler and site columns follow crawl-wide statistics). ``dim``: the text model's
    word-vector dimension."""
    from gym_crawl.features.content import HashedContentFeatures

    dense = transferable_site(n_categories, name="transferable+crawler+site", dim=dim)
    return HashedContentFeatures(n_categories, dense=dense, name="hashed-site")
