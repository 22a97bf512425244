"""Reward schemes: map the scores of a fetched page to a reward and a relevant flag.

=============  ===========================================================================
name           reward of a fetched page
=============  ===========================================================================
``han2018``    30 if tf-idf relevance > 0 (the page contains a topic word); else 30 if the
               word-vector cosine > 0.5, 20 if > 0.4; else -1 (Han et al. 2018, §4)
``thesis``     30 if the page contains a topic word; else 30 if cosine > 0.6, 20 if > 0.5;
               else -1 — the tiers of the thesis' published ``reward()`` code (Pertejo 2021,
               appendix). DESIGN.md summarised it as 30/20/10/-1; the code is the source, and
               ``ThresholdReward`` builds any other tiering.
``binary``     1 if relevant, else 0 (TRES); relevant = label match when the topic has a
               label, else contains a topic word
``labels``     1 if the page carries the topic's ground-truth label, else 0
callable       ``f(scores: PageScores) -> rewards (n,)``; relevant = reward > 0
=============  ===========================================================================

The *relevant* flag a scheme returns is what the crawler itself learns from the
fetch (it drives Han's "relevant parent" and "distance from last relevant page"
features): for ``han2018``/``thesis`` it is Han's definition (the page contains a
topic word, tf-idf relevance > 0), for the other schemes reward > 0.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from gym_crawl.registry import Registry
from gym_crawl.relevance.scorer import PageScores

__all__ = ["RewardScheme", "ThresholdReward", "BinaryReward", "LabelReward", "CallableReward",
           "REWARD_SCHEMES", "REWARDS", "get_reward_scheme"]


class RewardScheme:
    """Base class. ``__call__(scores) -> (reward float32 (n,), relevant bool (n,))``."""

    name = "reward"
    max_reward = 1.0
    needs_label = False

    def __call__(self, s: PageScores) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - abstract
        raise NotImplementedError


class ThresholdReward(RewardScheme):
    """Tiered reward: ``word_reward`` if the page contains a topic word, else the first tier
    ``(threshold, reward)`` whose threshold the cosine exceeds, else ``miss``."""

    def __init__(self, name: str, tiers: Sequence[tuple[float, float]], word_reward: float = 30.0,
                 miss: float = -1.0):
        self.name, self.tiers, self.word_reward, self.miss = name, tuple(tiers), word_reward, miss
        self.max_reward = max([word_reward] + [r for _, r in self.tiers])

    def __call__(self, s: PageScores) -> tuple[np.ndarray, np.ndarray]:
        r = np.full(len(s.rel), self.miss, np.float32)
        for thr, val in sorted(self.tiers, reverse=True):
            r[(r == self.miss) & (s.rel > thr)] = val
        contains = s.tfidf > 0
        r[contains] = self.word_reward
        # Han 2018 §3.1 / the thesis: a page is *relevant* (for relevant-parent and distance features)
        # when its tf-idf relevance is > 0, i.e. it contains a topic word — not merely when rewarded.
        return r, contains


class BinaryReward(RewardScheme):
    name = "binary"
    max_reward = 1.0

    def __init__(self, labelled: bool = False):
        self._labelled = labelled

    def __call__(self, s: PageScores) -> tuple[np.ndarray, np.ndarray]:
        rel = s.label if self._labelled else (s.tfidf > 0)
        return rel.astype(np.float32), rel.astype(bool)


class LabelReward(RewardScheme):
    name = "labels"
    max_reward = 1.0
    needs_label = True

    def __call__(self, s: PageScores) -> tuple[np.ndarray, np.ndarray]:
        return s.label.astype(np.float32), s.label.astype(bool)


class CallableReward(RewardScheme):
    """A user function ``fn(scores) -> (n,) rewards``; relevant = reward > 0."""

    def __init__(self, fn: Callable[[PageScores], np.ndarray], max_reward: float = 1.0, name: str = "callable"):
        self.fn, self.max_reward, self.name = fn, max_reward, name

    def __call__(self, s: PageScores) -> tuple[np.ndarray, np.ndarray]:
        r = np.asarray(self.fn(s), dtype=np.float32).reshape(len(s.rel))
        return r, r > 0


#: name -> factory(labelled=bool) -> RewardScheme
REWARDS: Registry[RewardScheme] = Registry("reward", "a RewardScheme or a callable f(PageScores) -> rewards")
REWARDS.register("han2018", lambda labelled=False: ThresholdReward("han2018", tiers=((0.5, 30.0), (0.4, 20.0))),
                 "Han 2018: topic word -> 30, else word-vector cosine > 0.5 -> 30, > 0.4 -> 20, else -1")
REWARDS.register("thesis", lambda labelled=False: ThresholdReward("thesis", tiers=((0.6, 30.0), (0.5, 20.0))),
                 "Pertejo 2021 code: topic word -> 30, cosine > 0.6 -> 30, > 0.5 -> 20, else -1")
REWARDS.register("binary", lambda labelled=False: BinaryReward(labelled=labelled),
                 "TRES: 1 if the page is relevant, else 0")
REWARDS.register("labels", lambda labelled=False: LabelReward(), "ground truth: 1 if the page carries the topic's label")
#: Kept for compatibility: the built-in reward names.
REWARD_SCHEMES = ("han2018", "thesis", "binary", "labels")


def get_reward_scheme(spec: "str | RewardScheme | Callable", *, labelled: bool = False) -> RewardScheme:
    """Resolve a registered reward name (see module docstring), a :class:`RewardScheme` or a callable."""
    if isinstance(spec, RewardScheme):
        return spec
    if callable(spec):
        return CallableReward(spec)
    return REWARDS.build(spec, labelled=labelled)
