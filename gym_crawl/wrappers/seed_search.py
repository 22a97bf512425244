"""SeedFinder's seed expansion as a wrapper: every episode starts from its seeds plus search results."""
from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.utils import RecordConstructorArgs

from gym_crawl.features.tres_clf import topic_classifier
from gym_crawl.relevance.search import search_engine, seedfinder_results
from gym_crawl.wrappers.common import crawl_env_of

__all__ = ["SeedSearch"]


class SeedSearch(gym.Wrapper, RecordConstructorArgs):
    """At every ``reset``, expand the episode's seeds by SeedFinder's search rounds, then crawl from them.

    The inner env is reset as asked (its topic and seed pages), :func:`~gym_crawl.relevance.search.
    seedfinder_results` queries a :class:`~gym_crawl.relevance.search.SearchEngine` over ``corpus`` with the
    topic's words and terms of the pages judged relevant so far, and the inner env is reset again — same
    seed, same topic — from the seeds plus the downloaded results, which count as fetched pages (in
    ``pages_fetched``, the harvest rate and ``relevant_found``) like any seed. Results are judged by the
    topic's linear SVM page classifier (fitted on the corpus' URL-hash classifier-train split only; the topic
    needs a label), never by a label. The steps the downloads cost are not taken here: build the env with a
    budget reduced by ``max_results`` (``SeedFinderAgent.build_env`` does), so the env stays the one owner of
    truncation.

    Args:
        env: a (wrapped) WikiCrawl env on ``corpus``.
        corpus: the env's static corpus (the search engine indexes every page's text).
        text: the env's text model (its IDF weighs the engine's terms; the page classifier reads it).
        rounds, results, terms: query rounds, results downloaded per query, new terms per query.
        max_results: at most this many downloads per episode.

    :attr:`last_results` holds the page ids downloaded at the last reset.
    """

    def __init__(self, env: gym.Env, corpus: Any, text: Any, *, rounds: int = 5, results: int = 10,
                 terms: int = 3, max_results: int | None = None):
        RecordConstructorArgs.__init__(self, corpus=corpus, text=text, rounds=rounds, results=results, terms=terms,
                                       max_results=max_results)
        gym.Wrapper.__init__(self, env)
        for arg, v in (("rounds", rounds), ("results", results), ("terms", terms)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"SeedSearch: {arg} must be an int >= 1, got {v!r}")
        if max_results is not None and (isinstance(max_results, bool) or not isinstance(max_results, int)
                                        or max_results < 0):
            raise ValueError(f"SeedSearch: max_results must be an int >= 0 or None, got {max_results!r}")
        if not hasattr(corpus, "page_domain") or not hasattr(corpus, "n_words"):
            raise ValueError(f"SeedSearch needs a static corpus (its search engine indexes every page's text), "
                             f"got {type(corpus).__name__}")
        self.corpus, self.text = corpus, text
        self.rounds, self.results, self.terms, self.max_results = rounds, results, terms, max_results
        self.last_results = np.zeros(0, np.int64)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        view = crawl_env_of(self.env).view
        topic = view.current_topic
        seeds = np.asarray(view.fetched_pages(), np.int64)
        judge = topic_classifier(self.corpus, topic, self.text, kinds=("svm",))
        found = seedfinder_results(self.corpus, search_engine(self.corpus, self.text.idf), topic.words, judge, seeds,
                                   rounds=self.rounds, results=self.results, terms=self.terms,
                                   max_results=self.max_results)
        self.last_results = found
        if len(found):
            seed_list = [int(p) for p in np.concatenate([seeds, found])]
            obs, info = self.env.reset(seed=seed, options={"topic": topic, "seeds": seed_list})
        return obs, info
