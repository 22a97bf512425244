"""``EpisodeBudget``: tells the crawl env the page budget that Gymnasium's ``TimeLimit`` enforces.

Gymnasium's ``TimeLimit`` owns truncation, but ``gym.make`` does not pass ``max_episode_steps`` to
the env it builds, and the crawl MDP needs the budget inside the env: the observation reports the
fraction of the budget used (``state[0]``), TRES's adaptive domain cap falls over the budget, and a
step after the episode ended must be refused rather than keep crawling. ``WikiCrawl-v0`` is
registered with this pass-through wrapper in its spec's ``additional_wrappers``; ``gym.make``
applies it *after* ``TimeLimit``, so it reads the limit from the public ``env.spec.max_episode_steps``
(``gym.make(..., max_episode_steps=N)`` included) and hands it to ``WikiCrawlEnv.set_budget``.
Built without ``gym.make``, call ``WikiCrawlEnv.set_budget(N)`` yourself beside your ``TimeLimit``.
"""
from __future__ import annotations

import gymnasium as gym
from gymnasium.utils import RecordConstructorArgs

__all__ = ["EpisodeBudget"]


class EpisodeBudget(gym.Wrapper, RecordConstructorArgs):
    """Pass-through wrapper: ``env.unwrapped.set_budget(env.spec.max_episode_steps)`` once, at construction."""

    def __init__(self, env: gym.Env):
        RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        spec = env.spec
        budget = spec.max_episode_steps if spec is not None else None
        setter = getattr(env.unwrapped, "set_budget", None)
        if setter is None:
            raise TypeError(f"EpisodeBudget wraps WikiCrawl envs, got {type(env.unwrapped).__name__}")
        setter(budget)
