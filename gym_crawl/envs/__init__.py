"""Environments: :class:`WikiCrawlEnv` (registered as ``WikiCrawl-v0``/``-v1``/``-v2``; :data:`DEFAULT_ENV_ID` is
the default task every factory and command builds), its batched :class:`WikiCrawlVectorEnv`
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

#: The env id every factory (``make_env``, ``make_env_for``, ``make_scoring_env``, ...) and every ``gym-crawl``
#: command builds unless told otherwise: the default task.
DEFAULT_ENV_ID = "WikiCrawl-v2"

__all__ = ["DEFAULT_ENV_ID", "STATE_NAMES", "BudgetFromTimeLimit", "CrawlView", "CrawlWorld", "ForagerFleetEnv",
           "WikiCrawlEnv", "WikiCrawlVectorEnv", "check_budget", "make_vector_env"]


def __getattr__(name: str) -> Any:
    if name == "ForagerFleetEnv":
        from gym_crawl.envs.fleet import ForagerFleetEnv

        return ForagerFleetEnv
    raise AttributeError(f"module 'gym_crawl.envs' has no attribute {name!r}")
