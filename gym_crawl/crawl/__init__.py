"""Crawl state: visited set, frontier store, parent/path/domain statistics, metrics."""
from gym_crawl import _numba_blas, _numba_ir

_numba_blas.preload()  # before any kernel runs: numba probes BLAS without scipy.linalg (gym_crawl._numba_blas)

from gym_crawl.crawl.state import BLOCKED, DIST_CAP, FRONTIER, UNSEEN, VISITED, CrawlState, FetchResult  # noqa: E402

__all__ = ["CrawlState", "FetchResult", "UNSEEN", "FRONTIER", "VISITED", "BLOCKED", "DIST_CAP"]

_numba_ir.install()  # kernels loaded from numba's cache keep their bitcode compressed, not parsed (gym_crawl._numba_ir)
