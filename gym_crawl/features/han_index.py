"""Han 2018's state-action vector as *integer bucket indexes* — the faithful option beside the tilings.

Han et al. (2018) discretize every relevance into two overlapping partitions of [0, 1] — 5 buckets
of width 0.2 and 6 buckets offset by 0.1 — and feed the linear approximator the bucket *indexes*;
the thesis' code does the same (``OptimizedPageFeaturizer`` / ``OptimizedLinkFeaturizer`` with
``discretize=True``: ``n_feat = 8 + 2·len(categories)`` for the page plus ``6 + 2·len(categories)``
for the link, 30 columns for 4 categories). The registered ``han2018`` set one-hot encodes the same
indexes (two tilings, 22(3+C)+16 columns); this set keeps them as small integers, one column each,
so ``w · x`` weighs an index linearly as Han's and the thesis' LFA did.

Columns (C = category slots), in the thesis code's order — page (state) part, then link (action) part:

==============================================  ==========================================================
column                                          value
==============================================  ==========================================================
``s.rel:b5``, ``s.rel:b6``                      5- and 6-bucket index of the state page's topic relevance
``s.parents_mean:b5``, ``…:b6``                 the same of the mean relevance of its fetched parents
``s.relevant_parents_mean:b5``, ``…:b6``        the same over its relevant parents
``s.dist``                                      distance from the last relevant page on the path, 0..9
``s.change``                                    relevance-change bucket 0..4 (δ1 = 0.1, δ2 = 0.3)
``s.cat{i}:b5``, ``s.cat{i}:b6``                bucket indexes of the state page's category-i relevance
``a.link_rel:b5``, ``a.link_rel:b6``            bucket indexes of the link text's topic relevance
``a.parents_mean:b5``, ``…:b6``                 of the mean relevance of the target's fetched parents
``a.relevant_parents_mean:b5``, ``…:b6``        the same over relevant parents
``a.link_cat{i}:b5``, ``a.link_cat{i}:b6``      of the link text's category-i relevance
==============================================  ==========================================================

Bucket edges, change buckets and distance are exactly the ``han2018`` tilings' (:func:`bucket5`,
:func:`bucket6`, :func:`change_bucket`, the ``s.dist=`` one-hot), so every index column equals the
position of the hot column of the matching ``han2018`` group — a test checks it on real crawls.
Relevances below 0 fall in bucket 0 and above 1 in the last bucket (the thesis code's if-chain would
put a value rounded above 1.0 in bucket 0). No bias column (neither Han's index vector nor the thesis
code has one). Values are integers up to 9, so ``normalize=True`` divides each column by its maximum
to fit the env's ``Box(-1, 1)`` candidate observation (the env clips rows there); ``features_of``
returns the raw integers either way unless normalized.

Like every feature set it reads only the crawl's own statistics, and a row changes only when its page
gains a parent (``local``).
"""
from __future__ import annotations

import numpy as np

from gym_crawl.crawl.state import DIST_CAP, CrawlState
from gym_crawl.features import kernels as FK
from gym_crawl.features.sets import FeatureSet, Han2018Features, bucket5, bucket6, change_bucket

__all__ = ["HanIndexFeatures"]


class HanIndexFeatures(FeatureSet):
    """Han 2018's integer-index state-action vector (see the module docstring); dim = 14 + 4C.

    Args:
        n_categories: category slots C (30 columns for 4).
        delta1, delta2: relevance-change thresholds δ1, δ2 (Han: 0.1, 0.3).
        normalize: divide each column by its maximum so values lie in [0, 1].
    """

    name = "han-index"
    local = True

    def __init__(self, n_categories: int = 4, delta1: float = 0.1, delta2: float = 0.3, normalize: bool = False):
        if isinstance(n_categories, bool) or not isinstance(n_categories, (int, np.integer)) or n_categories < 0:
            raise ValueError(f"n_categories must be an integer >= 0, got {n_categories!r}")
        if not 0.0 <= float(delta1) <= float(delta2):
            raise ValueError(f"need 0 <= delta1 <= delta2, got delta1={delta1!r}, delta2={delta2!r}")
        C = self.C = int(n_categories)
        self.d1, self.d2 = float(delta1), float(delta2)
        self.normalize = bool(normalize)
        self._raw = Han2018Features(C, discretize=False, delta1=self.d1, delta2=self.d2)

        def pair(q: str) -> list[str]:
            return [f"{q}:b5", f"{q}:b6"]

        self.names = (pair("s.rel") + pair("s.parents_mean") + pair("s.relevant_parents_mean") + ["s.dist", "s.change"]
                      + [n for i in range(C) for n in pair(f"s.cat{i}")]
                      + pair("a.link_rel") + pair("a.parents_mean") + pair("a.relevant_parents_mean")
                      + [n for i in range(C) for n in pair(f"a.link_cat{i}")])
        # raw() columns: s.rel, s.cat0..C-1, s.parents_mean, s.relevant_parents_mean,
        #                a.link_rel, a.link_cat0..C-1, a.parents_mean, a.relevant_parents_mean
        s_cat = list(range(1, 1 + C))
        a_cat = list(range(4 + C, 4 + 2 * C))
        self._state_rel = np.array([0, 1 + C, 2 + C], np.int64)
        self._state_cat = np.array(s_cat, np.int64)
        self._action_rel = np.array([3 + C, 4 + 2 * C, 5 + 2 * C], np.int64)
        self._action_cat = np.array(a_cat, np.int64)
        top = np.array([4.0 if n.endswith(":b5") else 5.0 for n in self.names], np.float32)
        top[self.names.index("s.dist")] = float(DIST_CAP)
        top[self.names.index("s.change")] = 4.0
        self._scale = (1.0 / top).astype(np.float32)
        self._tail = np.concatenate([self._state_cat, self._action_rel, self._action_cat])
        self._kscale = self._scale if self.normalize else np.ones(len(self.names), np.float32)

    @staticmethod
    def _pairs(x: np.ndarray) -> np.ndarray:
        """(n, k) relevances → (n, 2k) interleaved (5-bucket, 6-bucket) indexes."""
        out = np.empty((x.shape[0], 2 * x.shape[1]), np.int64)
        out[:, 0::2] = bucket5(x)
        out[:, 1::2] = bucket6(x)
        return out

    def compute(self, state: CrawlState, pages: np.ndarray) -> np.ndarray:
        """(len(pages), 14 + 4C) float32 integer-valued rows (or in [0, 1] with ``normalize``), written by the
        compiled :func:`~gym_crawl.features.kernels.han_index_rows` (the same buckets as
        :meth:`reference_compute`, bit for bit)."""
        pages = np.asarray(pages, dtype=np.int64)
        out = np.empty((len(pages), self.dim), np.float32)
        bad = FK.han_index_rows(pages, state.crawl_arrays, 0, out, self._state_rel, self._tail, np.float32(self.d1),
                                np.float32(self.d2), FK.EDGES5, FK.EDGES6, self._kscale)
        self.refuse_unparented(pages, bad)
        return out

    def reference_compute(self, state: CrawlState, pages: np.ndarray) -> np.ndarray:
        """The same rows by vectorized numpy over :meth:`Han2018Features.raw` (the readable definition the
        compiled :meth:`compute` is tested against)."""
        pages = np.asarray(pages, dtype=np.int64)
        rels, change, dist = self._raw.raw(state, pages)
        n = len(pages)
        cols = [self._pairs(rels[:, self._state_rel]),
                np.minimum(dist, DIST_CAP).reshape(n, 1),
                change_bucket(np.asarray(change), self.d1, self.d2).reshape(n, 1),
                self._pairs(rels[:, self._state_cat]),
                self._pairs(rels[:, self._action_rel]),
                self._pairs(rels[:, self._action_cat])]
        out = np.concatenate(cols, axis=1).astype(np.float32)
        if self.normalize:
            out *= self._scale
        return out
