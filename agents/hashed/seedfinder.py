"""SeedFinder-like crawler (``seedfinder``): SeedFinder's seed expansion, then the ACHE-like crawl.

SeedFinder (Vieira et al. 2016) bootstraps a focused crawler: it queries a web search engine with the
topic's words plus terms from the pages judged relevant so far, downloads the results, and hands them to
ACHE as seeds. Here every episode's seeds are expanded by
:class:`~gym_crawl.wrappers.seed_search.SeedSearch` (:data:`~gym_crawl.relevance.search.SEEDFINDER_DEFAULTS`:
5 rounds × 10 results, 3 new terms per query; results judged by the topic's SVM page classifier, never
by a label), and the crawl is the ``ache`` agent's: the online link classifier fed by the SVM page
classifier (reward ``classifier-svm``).

The downloads cost budget: :meth:`SeedFinderAgent.build_env` (what
:func:`~gym_crawl.agents.make_env_for` calls for this agent) builds the env with ``max_episode_steps``
reduced by :meth:`SeedFinderAgent.search_budget` — at most 50 pages and at most half the budget — so a
crawl of budget B fetches at most B pages besides the task's seeds, like every other agent, and the env
stays the one owner of truncation. Searches that return fewer results leave the rest of that allowance
unspent. The search engine indexes every page's text, so the corpus must be static (not a live web).
"""
from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym

from gym_crawl.agents.hashed.online_classifier import OnlineClassifierAgent
from gym_crawl.relevance.search import SEEDFINDER_DEFAULTS

__all__ = ["SeedFinderAgent"]


class SeedFinderAgent(OnlineClassifierAgent):
    """The ACHE-like crawl from SeedFinder's expanded seeds (see the module docstring). Options: those of
    ``online-classifier``."""

    name = "seedfinder"
    env_defaults: ClassVar[dict[str, Any]] = {**OnlineClassifierAgent.env_defaults, "reward": "classifier-svm"}
    #: SeedFinder's query rounds, results per query and new terms per query
    SEARCH: ClassVar[dict[str, int]] = dict(SEEDFINDER_DEFAULTS)

    @classmethod
    def search_budget(cls, budget: int) -> int:
        """Pages of a budget of ``budget`` steps that the search downloads may take: rounds × results, at
        most half the budget."""
        return min(cls.SEARCH["rounds"] * cls.SEARCH["results"], int(budget) // 2)

    @classmethod
    def build_env(cls, env_id: str, kwargs: dict[str, Any]) -> gym.Env:
        """The env of this agent: ``make_env(env_id, **kwargs)`` with the budget less :meth:`search_budget`,
        wrapped in :class:`~gym_crawl.wrappers.seed_search.SeedSearch` over the same corpus and text model."""
        from gym_crawl.corpus import load_corpus
        from gym_crawl.text.model import TextModel, get_text_model
        from gym_crawl.wrappers.factory import make_env, registered_kwargs
        from gym_crawl.wrappers.seed_search import SeedSearch

        kw = dict(kwargs)
        spec_kw = registered_kwargs(env_id)
        budget = kw.get("max_episode_steps", spec_kw.get("max_episode_steps"))
        if budget is None or int(budget) < 2:
            raise ValueError(f"agent 'seedfinder' spends part of the budget on search results: "
                             f"max_episode_steps must be >= 2, got {budget!r}")
        corpus = load_corpus(kw.pop("corpus", spec_kw.get("corpus")), **(kw.pop("corpus_kwargs", None) or {}))
        text = kw.get("text")
        text_model = text if isinstance(text, TextModel) else get_text_model(corpus, **(text or {}))
        kw.update(corpus=corpus, text=text_model, max_episode_steps=int(budget) - cls.search_budget(int(budget)))
        s = cls.SEARCH
        return SeedSearch(make_env(env_id, **kw), corpus, text_model, rounds=s["rounds"], results=s["results"],
                          terms=s["terms"], max_results=cls.search_budget(int(budget)))
