"""No-learning crawlers: random, breadth-first, best-first (the papers' baseline), and a greedy oracle.

* ``random`` — a uniformly random frontier page.
* ``bfs`` — first discovered, first fetched (own FIFO of discovered URLs).
* ``best-first`` — the papers' no-learning crawler (Han 2018 §4, thesis §3.5): priority = cosine
  between the topic vector and the word vector of the link's URL + anchor + surrounding text.
  Run it with ``reducer="topk"`` (the CLI default) to get the exact global best-first order;
  with another reducer it picks the best of the proposed candidates.
* ``best-first-page`` — the same order as a ``page`` agent over the whole frontier (the thesis' basic
  crawler, Algorithm 2: its own priority queue of frontier pages by link-text relevance), so that it runs
  on the same page-mode env as the page-mode learners it is timed against.
* ``oracle`` — an upper bound, not a crawler: it knows which frontier pages are relevant (hidden
  information) and fetches those first, else the best-first choice. Results read as "fraction
  of the attainable".
"""
from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from gym_crawl.agents.base import Agent, Transition
from gym_crawl.agents.priority_queue import UpdatablePQ

__all__ = ["RandomAgent", "BreadthFirstAgent", "BestFirstAgent", "BestFirstPageAgent", "GreedyOracleAgent"]


class RandomAgent(Agent):
    """Fetch a uniformly random frontier page."""

    name = "random"
    action_kind = "page"
    needs_observation = False

    def act(self, obs: Any, info: dict) -> int:
        F = self.env.frontier_pages()
        return int(F[self.rng.integers(len(F))])


class BreadthFirstAgent(Agent):
    """Fetch frontier pages in discovery order (FIFO)."""

    name = "bfs"
    action_kind = "page"
    needs_observation = False

    def begin_episode(self, env: Any, rng: np.random.Generator) -> None:
        super().begin_episode(env, rng)
        self.queue: deque[int] = deque()

    def act(self, obs: Any, info: dict) -> int:
        self.queue.extend(self.env.frontier_changes().new.tolist())
        while self.queue:
            p = self.queue.popleft()
            if self.env.is_frontier(p):
                return p
        raise RuntimeError("BFS queue exhausted while the frontier is not empty")


class BestFirstAgent(Agent):
    """The papers' no-learning crawler: the candidate with the most topic-relevant link text."""

    name = "best-first"
    action_kind = "slot"
    env_defaults = {"reducer": "topk"}

    def act(self, obs: Any, info: dict) -> int:
        ids = info["candidate_ids"]
        valid = np.flatnonzero(ids >= 0)
        scores = self.env.link_scores(ids[valid])
        j = int(np.argmax(scores))
        self.last_score = float(scores[j])
        return int(valid[j])


class BestFirstPageAgent(Agent):
    """Best-first as a ``page`` agent: a priority queue of frontier pages keyed by the topic relevance of
    their link text (``link_scores``), updated with the pages whose best link changed each step; the
    highest still in the frontier is fetched. Ties: the queue's order."""

    name = "best-first-page"
    action_kind = "page"
    needs_observation = False

    def begin_episode(self, env: Any, rng: np.random.Generator) -> None:
        super().begin_episode(env, rng)
        self.pq = UpdatablePQ(env.n_pages)
        F = np.array(env.frontier_pages(), dtype=np.int64)
        self.pq.push_many(F, env.link_scores(F))

    def act(self, obs: Any, info: dict) -> int:
        while True:
            page, score = self.pq.pop_max()
            if self.env.is_frontier(page):
                self.last_score = float(score)
                return int(page)

    def observe(self, transition: Transition) -> None:
        upd = np.asarray(self.env.frontier_changes().updated, dtype=np.int64)
        if len(upd):
            self.pq.push_many(upd, self.env.link_scores(upd))


class GreedyOracleAgent(Agent):
    """Upper bound: fetch a truly relevant frontier page when one exists (hidden information)."""

    name = "oracle"
    action_kind = "page"
    needs_observation = False
    uses_hidden_information = True

    def begin_episode(self, env: Any, rng: np.random.Generator) -> None:
        super().begin_episode(env, rng)
        self.truth = env.hidden_relevance()
        self.good: list[int] = []
        self.fallback = BestFirstAgent()
        self.fallback.begin_episode(env, rng)

    def act(self, obs: Any, info: dict) -> int:
        new = self.env.frontier_changes().new
        self.good.extend(new[self.truth[new]].tolist())
        while self.good:
            p = self.good.pop()
            if self.env.is_frontier(p):
                return p
        # no relevant page known in the frontier: best-first over the whole frontier
        F = self.env.frontier_pages()
        return int(F[int(np.argmax(self.env.link_scores(F)))])
