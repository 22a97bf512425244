"""A page's domain from the link graph's index of runs (a large web whose page ids run through its domains) equals the
web's ``page_domain`` column, page for page; webs without such runs, and small ones, keep reading the column."""
from __future__ import annotations

import numpy as np

from gym_crawl.crawl.bundles import DOMAIN_RUNS_MIN_PAGES, domain_runs, link_graph, page_domain_of


def _graph(page_domain: np.ndarray, ordered: bool = True):
    n = len(page_domain)
    lo = np.zeros(n, np.int64)
    return link_graph(lo, lo.copy(), np.zeros(0, np.int32), page_domain, ordered=ordered, by_target=True)


def _domains(g, pages: np.ndarray) -> np.ndarray:
    return np.array([page_domain_of(g, int(p)) for p in pages], np.int64)


def test_runs_give_every_page_its_domain():
    rng = np.random.default_rng(0)
    for trial, (lo, hi) in enumerate([(1, 3), (256, 600), (100, 400), (300, 9000), (1, 40)]):
        n = DOMAIN_RUNS_MIN_PAGES + int(rng.integers(0, 5000))
        starts = np.concatenate([[0], np.cumsum(rng.integers(lo, hi + 1, n))])
        starts = starts[starts < n]
        doms = rng.permutation(len(starts)).astype(np.int32) * 3  # a domain id per run, in no order
        page_domain = np.repeat(doms, np.diff(np.append(starts, n)))
        inner = starts[starts % 256 != 0] // 256  # the blocks of 256 pages in which a run starts past the first page
        indexed = len(np.unique(inner)) == len(inner)  # at most one such run a block: the index is kept
        assert (len(domain_runs(page_domain)[0]) > 0) == indexed, f"trial {trial}"
        if trial in (1, 3):  # runs of >= 256 pages: at most one starts inside any block, so the index is kept
            assert indexed, f"trial {trial}"
        if trial in (0, 4):  # runs of a few pages: many start inside a block, so the web reads its column
            assert not indexed, f"trial {trial}"
        g = _graph(page_domain)
        pages = np.concatenate([rng.integers(0, n, 3000), starts[:500], np.maximum(starts[1:500] - 1, 0), [0, n - 1],
                                np.arange(0, n, 256), np.arange(255, n, 256)])
        np.testing.assert_array_equal(_domains(g, pages), page_domain[pages], err_msg=f"trial {trial}")


def test_small_webs_and_live_webs_read_the_column():
    small = np.repeat(np.arange(100, dtype=np.int32), 50)
    assert len(domain_runs(small)[0]) == 0
    big = np.repeat(np.arange(DOMAIN_RUNS_MIN_PAGES // 400 + 1, dtype=np.int32), 400)
    assert len(domain_runs(big)[0]) > 0  # a live web's pages grow: link_graph keeps no index of them
    pages = np.arange(0, len(big), 397)
    np.testing.assert_array_equal(_domains(_graph(big, ordered=False), pages), big[pages])
