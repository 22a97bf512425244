"""Environments: :class:`WikiCrawlEnv` (``WikiCrawl-v1``) and its batched :class:`WikiCrawlVectorEnv`."""
from gym_crawl.envs.vector import WikiCrawlVectorEnv
from gym_crawl.envs.wiki_crawl import STATE_NAMES, WikiCrawlEnv

__all__ = ["WikiCrawlEnv", "WikiCrawlVectorEnv", "STATE_NAMES"]
