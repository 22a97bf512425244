"""Environments: :class:`WikiCrawlEnv` (``WikiCrawl-v1``), its batched :class:`WikiCrawlVectorEnv`, and
:class:`ForagerFleetEnv` (Palotai et al.'s multi-crawler fleet, a PettingZoo ``ParallelEnv``; imported on
first use because PettingZoo is the optional ``multi`` extra)."""
from typing import Any

from gym_crawl.envs.vector import WikiCrawlVectorEnv
from gym_crawl.envs.wiki_crawl import STATE_NAMES, WikiCrawlEnv

__all__ = ["STATE_NAMES", "ForagerFleetEnv", "WikiCrawlEnv", "WikiCrawlVectorEnv"]


def __getattr__(name: str) -> Any:
    if name == "ForagerFleetEnv":
        from gym_crawl.envs.fleet import ForagerFleetEnv

        return ForagerFleetEnv
    raise AttributeError(f"module 'gym_crawl.envs' has no attribute {name!r}")
