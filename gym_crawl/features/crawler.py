"""Link-graph features that real focused crawlers use: host, depth and sibling statistics (``features="crawler"``).

Every column reads only the crawl's own record: the fetched best parent of a candidate (the page that
discovered it with the most topic-relevant text), the out-links of that fetched page, which of those were
fetched and whether the crawl's reward scheme flagged them relevant, and per-host counts of fetched and
relevant pages. Nothing reads an unfetched page's text, relevance or labels. The columns are:

==============================  ==================================================================
``a.same_host``                 1 when the candidate is on its best parent's host (site), else 0
``s.parent_depth``              the best parent's depth along best-parent links from a seed, / 10, capped at 1
``a.host_fetched``              log(1 + fetched pages of the candidate's host) / log(1 + 1000), capped at 1
``a.host_relevant_ratio``       relevant / fetched pages of the candidate's host (0 when none fetched)
``a.host_unseen``               1 when no page of the candidate's host has been fetched
``s.siblings_fetched``          log(1 + fetched out-links of the best parent) / log(1 + 100), capped at 1
``s.siblings_relevant_ratio``   relevant / fetched out-links of the best parent (0 when none fetched)
``bias``                        1
==============================  ==================================================================

Host and sibling statistics change whenever a page of the host or a sibling is fetched, so the rows are not
local (``local = False``). Degrades to the same columns on every corpus: hosts are the corpus' domains (a
single-domain corpus gives ``same_host = 1`` everywhere).
"""
from __future__ import annotations

import numpy as np

from gym_crawl._arith import log1p
from gym_crawl.crawl.kernels import VISITED
from gym_crawl.crawl.state import CrawlState
from gym_crawl.features.sets import FeatureSet

__all__ = ["CrawlerFeatures"]

_LOG_HOST = log1p(1000.0)
_LOG_SIB = log1p(100.0)


class CrawlerFeatures(FeatureSet):
    """Host (same host, host fetched / relevant counts), depth and sibling statistics of a candidate link."""

    name = "crawler"
    local = False

    def __init__(self, n_categories: int = 4):
        self.C = n_categories
        self.names = ["a.same_host", "s.parent_depth", "a.host_fetched", "a.host_relevant_ratio", "a.host_unseen",
                      "s.siblings_fetched", "s.siblings_relevant_ratio", "bias"]

    def compute(self, state: CrawlState, pages: np.ndarray) -> np.ndarray:
        pages = np.asarray(pages, dtype=np.int64)
        out = np.zeros((len(pages), len(self.names)), np.float32)
        if not len(pages):
            return out
        bp = self.best_parents(state, pages).astype(np.int64)
        dom = state.page_domain[pages]
        out[:, 0] = dom == state.page_domain[bp]
        out[:, 1] = np.minimum(state.path_len[bp] / 10.0, 1.0)
        fetched = state.dom_fetched[dom].astype(np.float64)
        out[:, 2] = np.minimum(log1p(np.asarray(fetched, np.float64)) / _LOG_HOST, 1.0)
        out[:, 3] = np.divide(state.dom_relevant[dom], fetched, out=np.zeros(len(pages)), where=fetched > 0)
        out[:, 4] = fetched == 0
        # sibling statistics, once per distinct best parent
        uniq, inv = np.unique(bp, return_inverse=True)
        sib_f = np.zeros(len(uniq))
        sib_r = np.zeros(len(uniq))
        for i, p in enumerate(uniq.tolist()):
            dst = np.unique(np.asarray(state.link_dst[int(state.link_lo[p]):int(state.link_hi[p])], dtype=np.int64))
            dst = dst[(dst >= 0) & (dst != p)]
            done = dst[state.status[dst] == VISITED]
            sib_f[i] = len(done)
            sib_r[i] = state.relevant[done].sum() if len(done) else 0.0
        f = sib_f[inv]
        out[:, 5] = np.minimum(log1p(np.asarray(f, np.float64)) / _LOG_SIB, 1.0)
        out[:, 6] = np.divide(sib_r[inv], f, out=np.zeros(len(pages)), where=f > 0)
        out[:, 7] = 1.0
        return out
