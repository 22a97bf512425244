"""The thesis' discretized feature set (Pertejo 2021, §3.3.1 and its ``Simple*Featurizer`` code).

Han 2018's quantities, discretized *ordinally* (one small integer per quantity, used as is
by the linear approximator — not one-hot tiles as in ``han2018``), in the column order of the
thesis' ``SimpleOptimizedPageFeaturizer`` + ``SimpleOptimizedLinkFeaturizer``:

===============================  ======================================================
column                           value
===============================  ======================================================
``s.rel``                        disc(cosine of the state page s with the topic)
``s.parents_mean``               disc(mean relevance of s's parents)
``s.relevant_parents_mean``      disc(mean relevance of s's relevant parents)
``s.change``                     relevance change of s vs. its smoothed ancestors,
                                 0.5-wide bins over [−2, 2] → 0..7 (§3.3.1); with
                                 ``change_bins="code"`` the code's σ-buckets 0..4
``s.dist``                       d_max − d (distance from the last relevant page, d_max = 9)
``s.cat{i}``                     disc(cosine of s with category i)
``a.link_rel``                   disc(cosine of the link's anchor/URL/context text with the topic)
``a.parents_mean``               disc(mean relevance of the target's fetched parents)
``a.relevant_parents_mean``      disc(the same over relevant parents)
``a.link_cat{i}``                disc(cosine of the link text with category i)
===============================  ======================================================

``disc(x) = 0 if x < 0; 9 if x ≥ 1; int(10 x) otherwise`` (§3.3.1). dim = 8 + 2C, no bias
column (the thesis has none). Values are integers 0..9, so ``normalize=True`` divides each
column by its maximum (9, or 7/4 for the change) to fit the env's ``Box(-1, 1)`` observation
(the env clips candidate rows there); the thesis' LFA uses the raw integers, and so does
:class:`agents.linear.lfa.ThesisLFAAgent` through ``env.features_of`` (unclipped).

As every feature set here, it reads only the crawl's own statistics (fetched pages' scores,
discovered links' text), and a row changes only when its page gains a parent (``local``).
"""
from __future__ import annotations

import numpy as np

from gym_crawl.crawl.state import DIST_CAP, CrawlState
from gym_crawl.features import kernels as FK
from gym_crawl.features.sets import FeatureSet

__all__ = ["ThesisFeatures", "disc_relevance", "disc_change", "disc_change_code", "disc_distance"]


def disc_relevance(x: np.ndarray) -> np.ndarray:
    """Thesis §3.3.1: negatives → 0, x ≥ 1 → 9, else ``int(10 x)`` (so [0.1, 0.2) → 1)."""
    x = np.asarray(x, dtype=np.float64)
    return np.clip(np.floor(np.where(x < 0, 0.0, x) * 10.0), 0, 9).astype(np.int64)


def disc_change(c: np.ndarray) -> np.ndarray:
    """Thesis §3.3.1: relevance change in [−2, 2] in 0.5-wide bins: [−2, −1.5) → 0 … [1.5, 2] → 7."""
    c = np.asarray(c, dtype=np.float64)
    return np.clip(np.floor((c + 2.0) / 0.5), 0, 7).astype(np.int64)


def disc_change_code(c: np.ndarray, sigma1: float = 0.1, sigma2: float = 0.3) -> np.ndarray:
    """The thesis code's ``_discretize_relevance_change``: 0 ≤ c < σ1 → 0, σ1 ≤ c < σ2 → 1,
    c ≥ σ2 → 2, −σ2 ≤ c < 0 → 3, c < −σ2 → 4."""
    c = np.asarray(c, dtype=np.float64)
    out = np.full(len(c), 4, np.int64)
    out[(c >= -sigma2) & (c < 0)] = 3
    out[c >= sigma2] = 2
    out[(c >= sigma1) & (c < sigma2)] = 1
    out[(c >= 0) & (c < sigma1)] = 0
    return out


def disc_distance(d: np.ndarray, d_max: int = DIST_CAP) -> np.ndarray:
    """Thesis §3.3.1: ``d_max − d`` (closer to a relevant page → larger value)."""
    return d_max - np.minimum(np.asarray(d, dtype=np.int64), d_max)


class ThesisFeatures(FeatureSet):
    """Pertejo 2021's ordinal state + action features (see module docstring).

    Args:
        n_categories: category slots C.
        change_bins: ``"text"`` (§3.3.1, 8 bins) or ``"code"`` (the appendix code, 5 σ-buckets).
        normalize: divide each column by its maximum so values lie in [0, 1].
    """

    name = "thesis"
    local = True

    def __init__(self, n_categories: int = 4, change_bins: str = "text", normalize: bool = False):
        if change_bins not in ("text", "code"):
            raise ValueError(f"change_bins must be 'text' or 'code', got {change_bins!r}")
        self.C = int(n_categories)
        self.change_bins = change_bins
        self.normalize = bool(normalize)
        C = self.C
        self.names = (["s.rel", "s.parents_mean", "s.relevant_parents_mean", "s.change", "s.dist"]
                      + [f"s.cat{i}" for i in range(C)]
                      + ["a.link_rel", "a.parents_mean", "a.relevant_parents_mean"]
                      + [f"a.link_cat{i}" for i in range(C)])
        top = np.full(len(self.names), 9.0)
        top[3] = 7.0 if change_bins == "text" else 4.0
        top[4] = float(DIST_CAP)
        self._scale = (1.0 / top).astype(np.float32)

    def compute(self, state: CrawlState, pages: np.ndarray) -> np.ndarray:
        """(len(pages), 8 + 2C) float32 integer-valued rows (or in [0, 1] with ``normalize``)."""
        pages = np.asarray(pages, dtype=np.int64)
        out = np.empty((len(pages), 8 + 2 * self.C), np.float32)
        bad = FK.thesis_rows(pages, state.crawl_arrays, 0, out, self.change_bins == "code", 0.1, 0.3, self._scale,
                             self.normalize)
        self.refuse_unparented(pages, bad)
        return out
