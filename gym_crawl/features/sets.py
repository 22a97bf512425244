"""Named state-action feature sets x(s, a) for frontier candidates.

A candidate is a frontier page ``u``; its state ``s`` is the fetched page that
discovered it with the most topic-relevant text (``best_parent``), as in Han
2018 (a link's state is the page it was extracted from) and TRES (the web path
leading to the URL). Every feature reads only the crawl's own statistics:
fetched pages' scores and discovered links' text scores. Nothing here can see
an unfetched page's text, relevance or labels.

==========================  ====  ==========================================================
name                        dim   contents (C = category slots, default 4)
==========================  ====  ==========================================================
``han2018``                 22(3+C)+16   Han's state + action features, each relevance
                                  discretized into Han's 5- and 6-bucket indexes (one-hot,
                                  i.e. two overlapping tilings), relevance change into 5
                                  buckets (δ1 = 0.1, δ2 = 0.3), distance 0..9 one-hot, bias
``han2018-continuous``      9+2C  the same quantities as raw values (distance / 9,
                                  change / 2), plus bias
``tres``                    8     TRES: parent reward, inverse distance to the closest relevant
                                  node on the web path, path relevance ratio, keyword in URL,
                                  keyword in anchor, domain relevant ratio, unknown-domain flag
                                  (0.5 / 1), bias
``combined``                16+2C ``han2018-continuous`` ⊕ ``tres`` (one bias)
``thesis``                  —     the thesis' integer discretization (:mod:`gym_crawl.features.thesis`)
``tres-clf``                9     ``tres`` + a relevance classifier's probability of the link text
                                  (:mod:`gym_crawl.features.tres_clf`)
==========================  ====  ==========================================================

Han's state features of s: topic relevance, relevance change vs. smoothed
ancestors, category relevances, mean relevance of all parents, of relevant
parents, distance from the last relevant page. Action features of (s, a):
topic and category relevance of the link's anchor/URL/surrounding text, mean
relevance of all / relevant parents of the target (updated as parents are fetched).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from gym_crawl.crawl.state import DIST_CAP, CrawlState
from gym_crawl.features import kernels as FK
from gym_crawl.registry import Registry

__all__ = ["BatchLayout", "FeatureSet", "Han2018Features", "TresFeatures", "CombinedFeatures", "get_feature_set",
           "FEATURE_SETS", "register_feature_set", "bucket5", "bucket6", "change_bucket"]





def bucket5(x: np.ndarray) -> np.ndarray:
    """Han's 5-bucket index: [0,.2)→0, [.2,.4)→1, …, [.8,1]→4 (values clipped to [0, 1])."""
    return np.searchsorted(FK.EDGES5, x, side="right")


def bucket6(x: np.ndarray) -> np.ndarray:
    """Han's 6-bucket index: [0,.1)→0, [.1,.3)→1, [.3,.5)→2, [.5,.7)→3, [.7,.9)→4, [.9,1]→5."""
    return np.searchsorted(FK.EDGES6, x, side="right")


def change_bucket(c: np.ndarray, d1: float = 0.1, d2: float = 0.3) -> np.ndarray:
    """Han's relevance-change index: |c| ≤ δ1 → 0; δ1 < c ≤ δ2 → 1; c > δ2 → 2; −δ2 ≤ c < −δ1 → 3; c < −δ2 → 4."""
    out = np.zeros(len(c), np.int64)
    out[(c > d1) & (c <= d2)] = 1
    out[c > d2] = 2
    out[(c < -d1) & (c >= -d2)] = 3
    out[c < -d2] = 4
    return out


class BatchLayout(NamedTuple):
    """What a feature set hands the batched vector env's compiled step so that
    :func:`gym_crawl.features.kernels.layout_rows` writes its rows: the layout ``kind`` (a ``FEAT_*`` of
    :mod:`gym_crawl.features.kernels`), whether Han's columns are discretized, the column where TRES's start,
    and Han's δ1, δ2."""

    kind: int
    han_discretized: bool
    tres_col0: int
    delta1: float
    delta2: float


class FeatureSet:
    """Base class: ``compute(state, pages) -> (len(pages), dim) float32``; ``names`` has ``dim`` entries."""

    name: str = "features"
    names: list[str]
    #: True when a frontier page's row changes only when that page gains a parent (it is then in
    #: ``info["updated_pages"]``), so callers may cache rows; False when rows depend on global
    #: crawl statistics (e.g. TRES's domain ratios change for every page of a domain).
    local: bool = True

    @property
    def dim(self) -> int:
        return len(self.names)

    def compute(self, state: CrawlState, pages: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def batch_layout(self) -> BatchLayout | None:
        """How the batched vector env's compiled step writes these rows (:data:`BatchLayout`), or ``None``
        when it cannot (then the vector env steps its crawls one by one in Python)."""
        return None

    #: feature sets with a compiled row writer implement ``_fill(state, pages, out, col0, with_bias)``
    #: (writes the rows of int64 ``pages`` into ``out[:, col0:]``, the bias column only if
    #: ``with_bias``; ``out`` zeroed) so :class:`CombinedFeatures` can write parts in place
    _fill: Callable[[CrawlState, np.ndarray, np.ndarray, int, bool], None] | None = None

    @staticmethod
    def refuse_unparented(pages: np.ndarray, bad: int) -> None:
        """Raise the ``ValueError`` of a compiled row writer that met a page without a fetched parent.

        :param pages: the int64 pages whose rows were asked for.
        :param bad: what the writer returned: the index in ``pages`` of the first page without a parent, or -1.
        """
        if bad >= 0:
            raise ValueError(f"pages {[int(pages[bad])]} are not frontier pages (no fetched parent)")

    @staticmethod
    def best_parents(state: CrawlState, pages: np.ndarray) -> np.ndarray:
        """The best parent of each of ``pages`` (``state.best_parent[pages]``, int32): the fetched page whose
        state a candidate's row reads. ``ValueError`` naming the pages that are not frontier pages."""
        bp = state.best_parent[pages]
        if len(bp) and bp.min() < 0:
            bad = pages[bp < 0]
            raise ValueError(f"pages {bad[:5].tolist()} are not frontier pages (no fetched parent)")
        return bp

    @staticmethod
    def first_links(state: CrawlState, parents: np.ndarray, pages: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The first link from ``parents[i]`` to ``pages[i]`` among the parent's out-links, for each ``i`` that has
        one: ``(rows, links)``, int64, ``rows`` ascending (indices into ``pages``) and their link ids."""
        parents = np.asarray(parents, np.int64)
        starts = state.link_lo[parents]
        lens = state.link_hi[parents] - starts
        rp = np.repeat(np.arange(len(pages)), lens)
        off = np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
        lid = np.repeat(starts, lens) + off
        hit = np.flatnonzero(state.link_dst[lid] == pages[rp])
        rows, first = np.unique(rp[hit], return_index=True)
        return rows, lid[hit[first]]


class Han2018Features(FeatureSet):
    """Han et al. 2018 state + action features (see module docstring).

    Args:
        n_categories: category slots C.
        discretize: one-hot 5/6-bucket tile coding (the paper) or raw values.
        delta1, delta2: relevance-change thresholds.
    """

    def __init__(self, n_categories: int = 4, discretize: bool = True, delta1: float = 0.1, delta2: float = 0.3):
        self.C = n_categories
        self.discretize = discretize
        self.d1, self.d2 = delta1, delta2
        self.name = "han2018" if discretize else "han2018-continuous"
        rel_names = (["s.rel"] + [f"s.cat{i}" for i in range(self.C)] + ["s.parents_mean", "s.relevant_parents_mean"]
                     + ["a.link_rel"] + [f"a.link_cat{i}" for i in range(self.C)]
                     + ["a.parents_mean", "a.relevant_parents_mean"])
        self._rel_names = rel_names
        if discretize:
            names = []
            for r in rel_names:
                names += [f"{r}=b5:{i}" for i in range(5)] + [f"{r}=b6:{i}" for i in range(6)]
            names += [f"s.change=c{i}" for i in range(5)] + [f"s.dist={i}" for i in range(DIST_CAP + 1)] + ["bias"]
            self.names = names
            self._n_rel = len(rel_names)
        else:
            self.names = rel_names + ["s.change", "s.dist", "bias"]

    def raw(self, state: CrawlState, pages: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Continuous quantities: relevances (n, 6+2C), change (n,), distance (n,) int."""
        pages = np.asarray(pages, dtype=np.int64)
        s = self.best_parents(state, pages)
        C = self.C
        rels = np.empty((len(pages), 6 + 2 * C), np.float32)
        rels[:, 0] = state.rel[s]
        rels[:, 1:1 + C] = state.cat[s]
        rels[:, 1 + C] = state.par_mean[s]
        rels[:, 2 + C] = state.relpar_mean[s]
        rels[:, 3 + C] = state.link_rel[pages]
        rels[:, 4 + C:4 + 2 * C] = state.link_cat[pages]
        rels[:, 4 + 2 * C] = state.sum_par_rel[pages] / np.maximum(state.n_par[pages], 1)
        nrel = state.n_relpar[pages]
        np.divide(state.sum_relpar_rel[pages], nrel, out=rels[:, 5 + 2 * C], where=nrel > 0)
        rels[nrel == 0, 5 + 2 * C] = 0.0
        return rels, state.change[s], state.dist[s].astype(np.int64)

    def compute(self, state: CrawlState, pages: np.ndarray) -> np.ndarray:
        pages = np.asarray(pages, dtype=np.int64)
        out = np.zeros((len(pages), self.dim), np.float32)
        self._fill(state, pages, out, 0, True)
        return out

    def _fill(self, state: CrawlState, pages: np.ndarray, out: np.ndarray, col0: int, with_bias: bool) -> None:
        bad = FK.han_rows(pages, state.crawl_arrays, 0, out, col0, self.discretize, with_bias, np.float32(self.d1),
                          np.float32(self.d2), FK.EDGES5, FK.EDGES6)
        self.refuse_unparented(pages, bad)


    def batch_layout(self) -> BatchLayout | None:
        if type(self) is not Han2018Features:  # a subclass may compute other rows
            return None
        return BatchLayout(FK.FEAT_HAN, bool(self.discretize), 0, float(self.d1), float(self.d2))


class TresFeatures(FeatureSet):
    """TRES (Kontogiannis et al.) state-action features that need no classifier (see module docstring)."""

    name = "tres"
    local = False
    names = ["s.parent_reward", "s.inv_dist_relevant", "s.path_relevance_ratio", "a.keyword_in_url",
             "a.keyword_in_anchor", "a.domain_relevant_ratio", "a.domain_known", "bias"]

    def compute(self, state: CrawlState, pages: np.ndarray) -> np.ndarray:
        pages = np.asarray(pages, dtype=np.int64)
        out = np.empty((len(pages), 8), np.float32)
        self._fill(state, pages, out, 0, True)
        return out

    def _fill(self, state: CrawlState, pages: np.ndarray, out: np.ndarray, col0: int, with_bias: bool) -> None:
        bad = FK.tres_rows(pages, state.crawl_arrays, 0, state.page_domain, out, col0, with_bias)
        self.refuse_unparented(pages, bad)

    def batch_layout(self) -> BatchLayout | None:
        if type(self) is not TresFeatures:
            return None
        return BatchLayout(FK.FEAT_TRES, False, 0, 0.1, 0.3)


class CombinedFeatures(FeatureSet):
    """Concatenation of feature sets, dropping all but the last bias column."""

    def __init__(self, parts: Sequence[FeatureSet], name: str = "combined"):
        self.parts = list(parts)
        self.name = name
        self._keep = [np.array([i for i, nm in enumerate(p.names) if nm != "bias"]) for p in self.parts]
        self.names = [p.names[i] for p, k in zip(self.parts, self._keep) for i in k] + ["bias"]
        self.local = all(p.local for p in self.parts)
        # parts with a compiled writer (and their own compute) whose only dropped column is the last
        self._fast = all(type(p).compute in _FILLED_COMPUTES and k.tolist() == list(range(p.dim - 1))
                         for p, k in zip(self.parts, self._keep))

    def compute(self, state: CrawlState, pages: np.ndarray) -> np.ndarray:
        if self._fast:
            # every part writes its rows (without its last, bias, column) straight into the output
            pages = np.asarray(pages, dtype=np.int64)
            out = np.zeros((len(pages), self.dim), np.float32)
            j = 0
            for p in self.parts:
                assert p._fill is not None  # _fast: every part has a compiled row writer
                p._fill(state, pages, out, j, False)
                j += p.dim - 1
            out[:, -1] = 1.0
            return out
        out = np.empty((len(pages), self.dim), np.float32)
        j = 0
        for p, k in zip(self.parts, self._keep):
            out[:, j:j + len(k)] = p.compute(state, pages)[:, k]
            j += len(k)
        out[:, -1] = 1.0
        return out

    def batch_layout(self) -> BatchLayout | None:
        """Han's continuous or discretized rows then TRES's, one bias column last (the default ``combined``)."""
        if type(self) is not CombinedFeatures or not self._fast or len(self.parts) != 2:
            return None
        h, t = self.parts
        if type(h) is not Han2018Features or type(t) is not TresFeatures:
            return None
        return BatchLayout(FK.FEAT_COMBINED, bool(h.discretize), h.dim - 1, float(h.d1), float(h.d2))


_FILLED_COMPUTES = (Han2018Features.compute, TresFeatures.compute)

#: name -> factory(n_categories) -> FeatureSet (lazy "module:attribute" entries allowed)
FEATURE_SETS: Registry[FeatureSet] = Registry("feature set", "a FeatureSet instance")
FEATURE_SETS.register("han2018", lambda C: Han2018Features(C, discretize=True),
                              "Han 2018 state-action features as 5-/6-bucket one-hot tilings")
FEATURE_SETS.register("han2018-continuous", lambda C: Han2018Features(C, discretize=False),
                              "Han 2018 state-action features, continuous")
FEATURE_SETS.register("tres", lambda C: TresFeatures(), "TRES path, link and domain features")
FEATURE_SETS.register(
    "combined", lambda C: CombinedFeatures([Han2018Features(C, discretize=False), TresFeatures()]),
    "Han 2018 continuous + TRES (the default)")
FEATURE_SETS.register("thesis", "gym_crawl.features.thesis:ThesisFeatures",
                              "Pertejo 2021 thesis discretization")
FEATURE_SETS.register("tres-clf", "gym_crawl.features.tres_clf:TresClfFeatures",
                              "TRES features with the relevance classifier's anchor probability")
FEATURE_SETS.register("tres-clf-nh", "gym_crawl.features.tres_clf:tres_clf_nh",
                      "tres-clf without the two web-domain columns (TRES_NH)")
FEATURE_SETS.register("tres-clf-svm", "gym_crawl.features.tres_clf:tres_clf_svm",
                      "tres-clf with ACHE's linear SVM as the link-text classifier (TRES_SVM)")
FEATURE_SETS.register("han-index", "gym_crawl.features.han_index:HanIndexFeatures",
                      "Han 2018's integer-index vector (the thesis code's 8+2C page + 6+2C link bucket indexes)")
FEATURE_SETS.register("crawler", "gym_crawl.features.crawler:CrawlerFeatures",
                      "host (same host, fetched / relevant per host), depth and sibling statistics of a link")
FEATURE_SETS.register("site", "gym_crawl.features.site:SiteFeatures",
                      "URL depth / topic words / token rates, URL-directory and host statistics, link position, "
                      "online page-classifier probability of the parents")
FEATURE_SETS.register("crawler+", "gym_crawl.features.site:crawler_plus", "crawler ⊕ site")
FEATURE_SETS.register("transferable+site", "gym_crawl.features.site:transferable_site",
                      "transferable ⊕ crawler ⊕ site, all dense (hashed-site without the hashed link tokens)")
FEATURE_SETS.register("hashed-site", "gym_crawl.features.site:hashed_site",
                      "hashed-transferable ⊕ crawler ⊕ site (hashed link tokens with the host, directory, "
                      "position and page-classifier columns)")
# content-bearing feature sets: link-text / parent page / topic vectors and hashed link tokens
for _name, _attr, _doc in [
    ("content", "ContentFeatures", "unit link-text, best-parent page and topic word vectors (3k+1)"),
    ("link-vector", "LinkVectorFeatures", "unit link-text word vector of the best discovering link (k+1)"),
    ("combined-content", "combined_content", "combined (Han 2018 continuous + TRES) + content vectors"),
    ("content-x-topic", "TopicInteractionFeatures", "link-text and parent page vectors times the topic vector"),
    ("tres-local", "tres_local", "TRES path/keyword columns that are local, plus relevant-parent counts"),
    ("transferable", "transferable", "han2018 tiles + han2018-continuous + tres-local + content-x-topic"),
    ("hashed", "HashedContentFeatures", "hashed link tokens (anchor, URL words/n-grams, context, parent title, "
                                        "domain) + han2018-continuous; sparse accessor"),
    ("hashed-transferable", "hashed_transferable", "hashed link tokens + the transferable dense columns"),
]:
    FEATURE_SETS.register(_name, f"gym_crawl.features.content:{_attr}", _doc)


def register_feature_set(name: str, factory: Callable[[int], FeatureSet] | str, description: str = "") -> None:
    """Make ``features=name`` build ``factory(n_categories)``; ``factory`` may be a lazy
    ``"module:attribute"`` string (for extensions and third parties)."""
    FEATURE_SETS.register(name, factory, description)


def get_feature_set(spec: str | FeatureSet, n_categories: int = 4, dim: int | None = None) -> FeatureSet:
    """Resolve a registered feature-set name or return a :class:`FeatureSet` as is.

    :param dim: the word-vector dimension of the env's text model: given to the set's factory when it takes a
        ``dim`` keyword (the sets with word-vector columns: ``content``, ``transferable``, ``hashed-site`` …), so
        their columns match the text model (64 for a corpus' own model, 128 for the general English model);
        ``None``: the factory's default.
    """
    if isinstance(spec, FeatureSet):
        return spec
    factory = FEATURE_SETS.get(spec)
    if dim is not None and _takes_dim(factory):
        return factory(n_categories, dim=dim)
    return factory(n_categories)


def _takes_dim(factory: Any) -> bool:
    """Whether a feature-set factory takes a ``dim`` keyword."""
    import inspect

    try:
        return "dim" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False
