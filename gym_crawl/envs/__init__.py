"""Environments: :class:`WikiCrawlEnv` (``WikiCrawl-v1``), its batched :class:`WikiCrawlVectorEnv`
(:func:`make_vector_env`), the :class:`CrawlWorld` both are built from, the :class:`CrawlView` agents
read, the episode budget's checks (:mod:`gym_crawl.envs.budget`), and
:class:`ForagerFleetEnv` (Palotai et al.'s multi-crawler fleet, a PettingZoo ``ParallelEnv``; imported on
first use because PettingZoo is the optional ``multi`` extra)."""
from typing import Any

from gym_crawl.envs.budget import BudgetFromTimeLimit, check_budget
from gym_crawl.envs.vector import WikiCrawlVectorEnv, make_vector_env
from gym_crawl.envs.view import CrawlView
from gym_crawl.envs.wiki_crawl import STATE_NAMES, WikiCrawlEnv
from gym_crawl.envs.world import CrawlWorld

__all__ = ["STATE_NAMES", "BudgetFromTimeLimit", "CrawlView", "CrawlWorld", "ForagerFleetEnv", "WikiCrawlEnv",
           "WikiCrawlVectorEnv", "check_budget", "make_vector_env"]


def __getattr__(name: str) -> Any:
    if name == "ForagerFleetEnv":
        from gym_crawl.envs.fleet import ForagerFleetEnv

        return ForagerFleetEnv
    raise AttributeError(f"module 'gym_crawl.envs' has no attribute {name!r}")
