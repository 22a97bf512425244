"""Crawl state: visited set, frontier store, parent/path/domain statistics, metrics."""
from gym_crawl.crawl.state import BLOCKED, DIST_CAP, FRONTIER, UNSEEN, VISITED, CrawlState, FetchResult

__all__ = ["CrawlState", "FetchResult", "UNSEEN", "FRONTIER", "VISITED", "BLOCKED", "DIST_CAP"]
