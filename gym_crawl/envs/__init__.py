"""Environments: :class:`WikiCrawlEnv` (``WikiCrawl-v0``)."""
from gym_crawl.envs.wiki_crawl import STATE_NAMES, WikiCrawlEnv

__all__ = ["WikiCrawlEnv", "STATE_NAMES"]
