"""Content-bearing feature sets: *what* a link says, not only how similar it is to the topic words.

Every feature set of :mod:`gym_crawl.features.sets` is an aggregate of similarity to the topic words,
so no learner can find out *which* words, URL patterns or page types lead to relevant pages. These
sets give it the content itself, from observable text only:

==========================  =======  ==============================================================
name                        dim      contents (k = word-vector dimension of the text model, 64)
==========================  =======  ==============================================================
``content``                 3k+1     unit link-text vector of the best discovering link (anchor +
                                     URL + surrounding text, idf-weighted word vectors), unit page
                                     vector of the best parent (a fetched page), unit topic vector,
                                     bias
``link-vector``             k+1      the link-text vector alone, bias
``combined-content``        16+2C+3k ``combined`` (Han 2018 continuous ⊕ TRES) ⊕ ``content``
``hashed``                  2^14+8+2C  hashed binary bag of tokens of the best discovering link —
                                     anchor words, URL (target title) words, URL character 3-/4-grams,
                                     surrounding-text words, parent title words, target domain,
                                     same-domain flag, a bias token — L2-normalized (the
                                     ``HashingVectorizer`` idea, deep-deep's link vectorizer), then
                                     ``han2018-continuous`` as dense columns
==========================  =======  ==============================================================

**Which link.** A frontier page may be discovered by several links; its row describes one: the
state's ``best_link`` (the best discovering link) when the crawl state records it, else the first
link from its ``best_parent`` (the most topic-relevant fetched parent, the page whose state the other
feature sets describe). Both change only when the page gains a parent, so the sets are ``local``
(rows cacheable, recomputed only for ``frontier_changes().updated``).

**Sparse rows for custom linear learners.** ``HashedContentFeatures.sparse(state, pages)`` returns a
``scipy.sparse.csr_matrix`` of shape ``(len(pages), dim)`` with about 60 non-zeros a row; ``compute``
returns the same rows densely (for the fixed-shape observation). The token tables behind them
(:mod:`gym_crawl.features.hashed_tokens`) make a row cost O(its tokens) and a step O(out-degree × tokens), never
O(corpus); their columns are salted 32-bit hashes, identical across processes and corpora that share words.

**No leak.** Everything is read from discovered links (anchor, URL = target title, surrounding
text, target domain) and fetched pages (the best parent's text and title) — never the text or
labels of an unfetched page; tests/test_content_features.py tampers with them and checks that
nothing observed changes.
"""
from __future__ import annotations

import weakref
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from gym_crawl._arith import log, log1p
from gym_crawl.corpus.core import Corpus
from gym_crawl.crawl.state import CrawlState
from gym_crawl.features.hashed_tokens import (
    DEFAULT_HASH_BITS,
    EAGER_HASHED_PAGES,
    FIELDS,
    HashedTokens,
    LazyHashedTokens,
    LiveHashedTokens,
    hashed_tokens,
)
from gym_crawl.features.sets import FEATURE_SETS, CombinedFeatures, FeatureSet, Han2018Features, TresFeatures
from gym_crawl.pagemap import KeyedRows
from gym_crawl.text.model import TextModel

__all__ = [
    "DEFAULT_HASH_BITS",
    "EAGER_HASHED_PAGES",
    "FIELDS",
    "ContentFeatures",
    "HashedContentFeatures",
    "HashedTokens",
    "LazyHashedTokens",
    "LinkVectorFeatures",
    "LiveHashedTokens",
    "best_links",
    "hashed_tokens",
]

def best_links(state: CrawlState, pages: np.ndarray) -> np.ndarray:
    """(len(pages),) int64 link id describing each frontier page: ``state.best_link`` when the crawl
    state records it, else the first link from the page's ``best_parent`` to it.

    Raises ``ValueError`` for pages that are not in the frontier (no fetched parent)."""
    pages = np.asarray(pages, np.int64)
    bl = getattr(state, "best_link", None)
    if bl is not None:
        # index the column (one keyed look-up per page): ``np.asarray(bl)`` would write a row for every page of
        # the web first (80 MB on a 10^7-page web, ≈ 5 ms), on every call
        out = np.asarray(bl[pages], np.int64)
        if len(out) and out.min() < 0:
            raise ValueError(f"pages {pages[out < 0][:5].tolist()} are not frontier pages (no discovering link)")
        return out
    rows, links = FeatureSet.first_links(state, FeatureSet.best_parents(state, pages), pages)
    if len(rows) != len(pages):  # a best parent always links to its page (it discovered it)
        raise ValueError("best_links: a frontier page's best parent has no link to it (inconsistent state)")
    out = np.empty(len(pages), np.int64)
    out[rows] = links
    return out


# ------------------------------------------------------------------------------------------ dense
class _CorpusCache:
    """Per-(corpus, text model) caches of link-text and page vectors (topic independent, so valid across episodes
    and topics), in rows keyed by page id (:class:`~gym_crawl.pagemap.KeyedRows`): they hold the pages the crawls
    asked about, not a row per page of the web. ``links``: per page, the link id its cached link vector belongs to
    (``key``) and that vector (``vec``); ``parents``: per fetched page asked about as a best parent, its vector."""

    def __init__(self, corpus: Corpus, text: TextModel):
        k = text.dim
        self.text = text
        self.links = KeyedRows(("key", np.int64), ("vec", np.float32, k))
        self.parents = KeyedRows(("vec", np.float32, k))


_DENSE: weakref.WeakKeyDictionary[Corpus, list[_CorpusCache]] = weakref.WeakKeyDictionary()


def _dense_cache(state: CrawlState) -> _CorpusCache:
    if state.scorer is None:
        raise RuntimeError("content features: the crawl state has no topic yet (reset the env first)")
    text = state.scorer.text
    caches = _DENSE.setdefault(state.corpus, [])
    for c in caches:
        if c.text is text:
            return c
    c = _CorpusCache(state.corpus, text)
    caches.append(c)
    return c


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=1, keepdims=True)
    return np.divide(v, n, out=np.zeros_like(v), where=n > 0)


class ContentFeatures(FeatureSet):
    """Unit link-text vector, unit best-parent page vector, unit topic vector, bias (see module docstring).

    Args:
        n_categories: unused (feature-set factory signature).
        dim: word-vector dimension k of the env's text model (``text={"dim": k}``; default 64).
        parts: which blocks, a subset of ``("link", "parent", "topic")`` in that order.
    """

    local = True

    def __init__(self, n_categories: int = 4, dim: int = 64, parts: tuple[str, ...] = ("link", "parent", "topic"),
                 name: str = "content"):
        bad = [p for p in parts if p not in ("link", "parent", "topic")]
        if bad or not parts:
            raise ValueError(f"parts {parts!r}: expected a non-empty subset of ('link', 'parent', 'topic')")
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise ValueError(f"dim must be a positive int (the text model's word-vector dimension), got {dim!r}")
        self.k = dim
        self.parts = tuple(parts)
        self.name = name
        prefix = {"link": "a.link_vec", "parent": "s.page_vec", "topic": "topic_vec"}
        self.names = [f"{prefix[p]}{i}" for p in self.parts for i in range(dim)] + ["bias"]

    def _check(self, state: CrawlState) -> _CorpusCache:
        c = _dense_cache(state)
        if c.text.dim != self.k:
            raise ValueError(f"feature set {self.name!r} expects {self.k}-dim word vectors, the env's text model "
                             f"has {c.text.dim}: build ContentFeatures(dim={c.text.dim}) or use text={{'dim': "
                             f"{self.k}}}")
        return c

    def link_vectors(self, state: CrawlState, pages: np.ndarray) -> np.ndarray:
        """(len(pages), k) unit link-text vectors of the pages' best discovering links (cached)."""
        c = self._check(state)
        pages = np.asarray(pages, np.int64)
        links = best_links(state, pages)
        t = c.links
        r = t.rows(pages)
        stale = r < 0
        stale[~stale] = t.cols["key"][r[~stale]] != links[~stale]
        if stale.any():
            vec = _unit(c.text.link_vectors(links[stale]))
            r = t.ensure(pages)  # rows for the pages new to the cache (the columns may grow: read them after)
            t.cols["vec"][r[stale]] = vec
            t.cols["key"][r[stale]] = links[stale]
        return t.cols["vec"][r]

    def parent_vectors(self, state: CrawlState, pages: np.ndarray) -> np.ndarray:
        """(len(pages), k) unit page vectors of the pages' best parents (fetched pages; cached)."""
        c = self._check(state)
        bp = self.best_parents(state, np.asarray(pages, np.int64)).astype(np.int64)
        t = c.parents
        r = t.rows(bp)
        todo = np.unique(bp[r < 0])
        if len(todo):
            vec = _unit(c.text.page_vectors(todo))
            rows = t.add(todo)  # may grow the columns: read them after
            t.cols["vec"][rows] = vec
            r = t.rows(bp)
        return t.cols["vec"][r]

    def compute(self, state: CrawlState, pages: np.ndarray) -> np.ndarray:
        pages = np.asarray(pages, np.int64)
        k = self.k
        out = np.empty((len(pages), self.dim), np.float32)
        for i, p in enumerate(self.parts):
            blk = out[:, i * k:(i + 1) * k]
            if p == "link":
                blk[:] = self.link_vectors(state, pages)
            elif p == "parent":
                blk[:] = self.parent_vectors(state, pages)
            else:
                self._check(state)
                blk[:] = state.scorer.queries[0][None, :]  # type: ignore[union-attr]
        out[:, -1] = 1.0
        return out


class LinkVectorFeatures(ContentFeatures):
    """The unit link-text vector of the best discovering link, and a bias."""

    def __init__(self, n_categories: int = 4, dim: int = 64):
        super().__init__(n_categories, dim=dim, parts=("link",), name="link-vector")


class TopicInteractionFeatures(ContentFeatures):
    """Topic-relative content: the element-wise products link-text vector ⊙ topic vector and best-parent
    page vector ⊙ topic vector, scaled by sqrt(k) (their sums are the cosines), and a bias.

    A linear model over them learns a *weighted* cosine — which directions of meaning matter — and,
    unlike raw word vectors or hashed words, transfers from training topics to held-out ones."""

    def __init__(self, n_categories: int = 4, dim: int = 64):
        super().__init__(n_categories, dim=dim, parts=("link", "parent"), name="content-x-topic")
        self.names = [f"a.link_x_topic{i}" for i in range(dim)] + [f"s.page_x_topic{i}" for i in range(dim)] + ["bias"]

    def compute(self, state: CrawlState, pages: np.ndarray) -> np.ndarray:
        pages = np.asarray(pages, np.int64)
        k = self.k
        self._check(state)
        t = state.scorer.queries[0][None, :] * np.float32(np.sqrt(k))  # type: ignore[union-attr]
        out = np.empty((len(pages), self.dim), np.float32)
        out[:, :k] = self.link_vectors(state, pages) * t
        out[:, k:2 * k] = self.parent_vectors(state, pages) * t
        out[:, -1] = 1.0
        return out


class TresLocalFeatures(FeatureSet):
    """TRES's columns that depend only on the page's discovering links and best parent (``local``):
    parent relevant, inverse distance to the closest relevant page on the web path, path relevance
    ratio, keyword in URL, keyword in anchor, and the numbers of relevant and of all fetched parents
    (log10(1 + n)) and their ratio."""

    name = "tres-local"
    local = True
    names = ["s.parent_reward", "s.inv_dist_relevant", "s.path_relevance_ratio", "a.keyword_in_url",  # noqa: RUF012
             "a.keyword_in_anchor", "a.log_relevant_parents", "a.log_parents", "a.relevant_parent_fraction", "bias"]

    def compute(self, state: CrawlState, pages: np.ndarray) -> np.ndarray:
        pages = np.asarray(pages, np.int64)
        s = self.best_parents(state, pages)
        out = np.empty((len(pages), 9), np.float32)
        out[:, 0] = state.relevant[s]
        out[:, 1] = 1.0 / (1.0 + state.dist[s])
        out[:, 2] = state.path_rel[s] / np.maximum(state.path_len[s], 1)
        out[:, 3] = state.kw_url[pages]
        out[:, 4] = state.kw_anchor[pages]
        nrp, npar = state.n_relpar[pages], state.n_par[pages]
        out[:, 5] = log1p(np.asarray(nrp, np.float64)) / log(10.0)
        out[:, 6] = log1p(np.asarray(npar, np.float64)) / log(10.0)
        out[:, 7] = nrp / np.maximum(npar, 1)
        out[:, 8] = 1.0
        return out


def transferable(n_categories: int = 4, dim: int = 64) -> CombinedFeatures:
    """``han2018`` (tiles: a linear model gets a piecewise-constant function of each relevance) ⊕
    ``han2018-continuous`` ⊕ ``tres-local`` ⊕ ``content-x-topic``: every column is relative to the
    topic or to the crawl's own relevance statistics, so weights learned on one topic apply to another."""
    return CombinedFeatures([Han2018Features(n_categories, discretize=True),
                             Han2018Features(n_categories, discretize=False),
                             TresLocalFeatures(), TopicInteractionFeatures(n_categories, dim=dim)], name="transferable")


def combined_content(n_categories: int = 4, dim: int = 64) -> CombinedFeatures:
    """``combined`` (Han 2018 continuous ⊕ TRES) ⊕ ``content``, one bias."""
    return CombinedFeatures([Han2018Features(n_categories, discretize=False), TresFeatures(),
                             ContentFeatures(n_categories, dim=dim)], name="combined-content")


class HashedContentFeatures(FeatureSet):
    """Hashed tokens of the best discovering link (``2**bits`` columns) ⊕ ``han2018-continuous``.

    Args:
        n_categories: category slots C of the dense block.
        bits: hash space 2**bits (8..24).
        dense: append the ``han2018-continuous`` columns (parent and link-text relevances, change,
            distance) after the hashed ones.
    """

    local = True

    def __init__(self, n_categories: int = 4, bits: int = DEFAULT_HASH_BITS, dense: bool | FeatureSet = True,
                 name: str | None = None):
        if isinstance(bits, bool) or not isinstance(bits, int) or not 8 <= bits <= 24:
            raise ValueError(f"bits must be an int in [8, 24] (2**bits hashed columns), got {bits!r}")
        self.bits = bits
        self.n_hashed = 1 << bits
        if isinstance(dense, FeatureSet):
            self._dense: FeatureSet | None = dense
            self.local = dense.local
        else:
            self._dense = Han2018Features(n_categories, discretize=False) if dense else None
        dn = [] if self._dense is None else [n for n in self._dense.names if n != "bias"]
        self._dense_cols = None if self._dense is None else np.array(
            [i for i, n in enumerate(self._dense.names) if n != "bias"])
        self.name = name or ("hashed" if bits == DEFAULT_HASH_BITS and dense is True
                             else f"hashed-{bits}{'' if dense else '-nodense'}")
        self.names = [f"h{i}" for i in range(self.n_hashed)] + dn

    def sparse(self, state: CrawlState, pages: np.ndarray) -> sp.csr_matrix:
        """(len(pages), dim) ``scipy.sparse.csr_matrix`` float32 rows of frontier ``pages`` — the
        accessor for custom linear learners (``w @ row`` costs O(non-zeros))."""
        pages = np.asarray(pages, np.int64)
        ht = hashed_tokens(state.corpus, self.bits)
        indptr, cols, vals = ht.rows(best_links(state, pages))
        if self._dense is not None and len(pages):
            dv = self._dense.compute(state, pages)[:, self._dense_cols]
            k = dv.shape[1]
            cnt = np.diff(indptr)
            new_ptr = indptr + np.arange(len(pages) + 1) * k
            nc = np.empty(len(cols) + k * len(pages), np.int32)
            nv = np.empty(len(nc), np.float32)
            rows = np.repeat(np.arange(len(pages)), cnt)
            j = np.arange(len(cols)) + rows * k  # position of each hashed entry in the merged arrays
            nc[j], nv[j] = cols, vals
            dpos = (new_ptr[:-1] + cnt)[:, None] + np.arange(k)[None, :]
            nc[dpos] = self.n_hashed + np.arange(k)[None, :]
            nv[dpos] = dv
            indptr, cols, vals = new_ptr, nc, nv
        return sp.csr_matrix((vals, cols, indptr), shape=(len(pages), self.dim))

    def compute(self, state: CrawlState, pages: np.ndarray) -> np.ndarray:
        return np.asarray(self.sparse(state, pages).toarray(), np.float32)


def tres_local(n_categories: int = 4) -> TresLocalFeatures:
    """Factory of ``tres-local`` (feature-set factory signature)."""
    return TresLocalFeatures()


def hashed_transferable(n_categories: int = 4, dim: int = 64) -> HashedContentFeatures:
    """``hashed`` link tokens ⊕ the ``transferable`` dense columns (what the hashed online learners use);
    ``dim``: the text model's word-vector dimension."""
    return HashedContentFeatures(n_categories, dense=transferable(n_categories, dim=dim), name="hashed-transferable")


#: name -> (module-level factory taking n_categories, description); the package registry lists them lazily
#: as "gym_crawl.features.content:<factory>"
CONTENT_FEATURE_SETS: dict[str, tuple[Callable[..., FeatureSet], str]] = {
    "content": (ContentFeatures, "unit link-text, best-parent page and topic word vectors (3k+1)"),
    "link-vector": (LinkVectorFeatures, "unit link-text word vector of the best discovering link (k+1)"),
    "combined-content": (combined_content, "combined (Han 2018 continuous + TRES) + content vectors"),
    "content-x-topic": (TopicInteractionFeatures, "link-text and parent page vectors times the topic vector"),
    "tres-local": (tres_local, "TRES path/keyword columns that are local, plus relevant-parent counts"),
    "transferable": (transferable, ("han2018 tiles + han2018-continuous + tres-local + content-x-topic "
                                   "(topic-relative only)")),
    "hashed": (HashedContentFeatures, ("hashed link tokens (anchor, URL words and n-grams, context, parent title, "
                                      "domain; 2^14) + han2018-continuous; sparse accessor")),
    "hashed-transferable": (hashed_transferable, "hashed link tokens + the transferable dense columns"),
}


def _register() -> None:
    """Register the content feature sets unless the package registry already lists them."""
    for name, (factory, doc) in CONTENT_FEATURE_SETS.items():
        if name not in FEATURE_SETS:
            FEATURE_SETS.register(name, factory, doc)


_register()
