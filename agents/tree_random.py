"""Tree-Random (TRES §3.2): fetch a uniformly drawn frontier sample of a uniformly drawn Tree-Frontier leaf.

No learning in the agent: it picks uniformly among the candidate slots, and with
``reducer="tree"`` each slot holds one uniformly drawn frontier page of a distinct non-empty
leaf (:class:`gym_crawl.reducers.tree.TreeFrontier`), so the fetched page is "a random sample of
a random leaf". The tree still learns from the rewards of what the agent fetches (its splits
separate regions of low and high reward), which is why Tree-Random beats Random by a wide margin
in the paper (40–60 % vs 2–9 % harvest rate).

With more non-empty leaves than the K slots, the leaves shown are the reducer's choice
(``TreeFrontier(overflow=...)``); use ``overflow="uniform"`` (or K ≥ leaves) for the exact
paper baseline. The benchmark :mod:`benchmarks.tres` does.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gym_crawl.agents.base import Agent

__all__ = ["TreeRandomAgent"]


class TreeRandomAgent(Agent):
    """Uniformly random candidate slot (meant for ``reducer="tree"``)."""

    name = "tree-random"
    action_kind = "slot"
    env_defaults = {"reducer": "tree", "features": "tres", "reward": "binary", "max_candidates": 4096}

    def act(self, obs: Any, info: dict) -> int:
        valid = np.flatnonzero(np.asarray(obs["mask"]) > 0)
        if len(valid) == 0:
            raise RuntimeError("tree-random: no valid candidate slot (empty frontier)")
        return int(valid[self.rng.integers(len(valid))])
