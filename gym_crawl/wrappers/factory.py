"""Build a whole scoring stack in one call: :func:`make_scoring_env`."""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import gymnasium as gym

from gym_crawl.wrappers.common import TopicSampler
from gym_crawl.wrappers.continuous import LinearScoringWrapper
from gym_crawl.wrappers.discrete import DiscreteScoringWrapper

__all__ = ["make_scoring_env"]


def make_scoring_env(kind: str = "discrete", *, topics: Sequence[str] | None = None, topic_mode: str = "random",
                     max_episode_steps: int = 1000, flatten: bool = False, reward_scale: float | None = 1.0,
                     top_rows: int = 4, **env_kwargs: Any) -> gym.Env:
    """Build ``gym.make("WikiCrawl-v1", **env_kwargs)`` → ``TopicSampler`` → scoring wrapper.

    Args:
        kind: ``"discrete"`` (:class:`DiscreteScoringWrapper`) or ``"continuous"``
            (:class:`gym_crawl.wrappers.LinearScoringWrapper`).
        topics: topics sampled per episode (default: the env's single topic, i.e. no sampler).
        topic_mode: ``"random"`` or ``"cycle"`` (see :class:`TopicSampler`).
        max_episode_steps: the page budget (env steps per episode), enforced by Gymnasium's
            ``TimeLimit`` inside the scoring wrapper, so it sees every step.
        flatten: discrete only — flat ``Box`` observation.
        reward_scale: multiply rewards (``None``: by ``1 / |max reward|`` of each episode's scheme; see
            :class:`DiscreteScoringWrapper`).
        top_rows: continuous only — candidate rows in the summary observation.
        env_kwargs: :class:`WikiCrawlEnv` arguments (``corpus``, ``reducer``, ``max_candidates``,
            ``features``, ``reward``, …).
    """
    if kind not in ("discrete", "continuous"):
        raise ValueError(f"unknown wrapper kind {kind!r}; expected 'discrete' or 'continuous'")
    import gym_crawl  # noqa: F401  (registers WikiCrawl-v1)

    action = "slot" if kind == "discrete" else "page"
    with warnings.catch_warnings():  # v1 is this factory's env on purpose (the corpus is always named)
        warnings.filterwarnings("ignore", message=".*WikiCrawl-v1 is out of date", category=DeprecationWarning)
        env: gym.Env = gym.make("WikiCrawl-v1", max_episode_steps=max_episode_steps, action=action, **env_kwargs)
    if topics:
        env = TopicSampler(env, topics, mode=topic_mode)
    if kind == "discrete":
        return DiscreteScoringWrapper(env, flatten=flatten, reward_scale=reward_scale)
    return LinearScoringWrapper(env, top_rows=top_rows, reward_scale=reward_scale)
