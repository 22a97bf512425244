"""Environments: :class:`WikiCrawlEnv` (``WikiCrawl-v0`` … ``-v3``; :data:`DEFAULT_ENV_ID` is the default id),
its batched :class:`WikiCrawlVectorEnv` (``WikiCrawl-v3``'s vector entry point; :func:`make_vector_env` for
any id), the :class:`CrawlWorld` both are built from, the :class:`CrawlView` agents read, the episode
budget (:mod:`gym_crawl.envs.budget`), and
:class:`ForagerFleetEnv` (Palotai et al.'s multi-crawler fleet, a PettingZoo ``ParallelEnv``; imported on
first use because PettingZoo is the optional ``multi`` extra)."""
from typing import Any

from gym_crawl import DEFAULT_ENV_ID
from gym_crawl.envs.budget import BudgetFromTimeLimit, check_budget
from gym_crawl.envs.vector import WikiCrawlVectorEnv, make_vector_env
from gym_crawl.envs.view import CrawlView
from gym_crawl.envs.wiki_crawl import STATE_NAMES, TIME_FEATURES, WikiCrawlEnv
from gym_crawl.envs.world import CrawlWorld

__all__ = ["DEFAULT_ENV_ID", "STATE_NAMES", "TIME_FEATURES", "BudgetFromTimeLimit", "CrawlView", "CrawlWorld",
           "ForagerFleetEnv", "WikiCrawlEnv", "WikiCrawlVectorEnv", "check_budget", "make_vector_env"]


def __getattr__(name: str) -> Any:
    if name == "ForagerFleetEnv":
        from gym_crawl.envs.fleet import ForagerFleetEnv

        return ForagerFleetEnv
    raise AttributeError(f"module 'gym_crawl.envs' has no attribute {name!r}")
