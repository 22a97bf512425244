"""What every scoring wrapper shares: finding the crawl env under wrappers, and per-episode topics.

:class:`TopicSampler` draws the episode's topic (and optionally its seed pages) from a list at every
``reset`` that does not name one (``options={"topic": ...}`` still wins), so one vectorized env trains
across topics or tasks.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.utils import RecordConstructorArgs

from gym_crawl.envs.wiki_crawl import WikiCrawlEnv

__all__ = ["TopicSampler", "auto_reward_scale", "crawl_env_of"]


def auto_reward_scale(base: WikiCrawlEnv) -> float:
    """``1 / |max reward|`` of the env's current reward scheme (the scoring wrappers' ``reward_scale=None``)."""
    return 1.0 / max(abs(float(base.view.max_reward)), 1e-9)


def crawl_env_of(env: gym.Env) -> WikiCrawlEnv:
    """The :class:`WikiCrawlEnv` under ``env``'s wrappers; ``TypeError`` when there is none."""
    base = env.unwrapped
    if not isinstance(base, WikiCrawlEnv):
        raise TypeError(f"expected a WikiCrawl env (possibly wrapped), got {type(base).__name__}")
    return base


def _topic_name(t: Any) -> str:
    """The name :attr:`TopicSampler.counts` records for a topic spec, a task dict or a Topic."""
    if isinstance(t, dict):
        t = t["topic"]
    return t if isinstance(t, str) else str(getattr(t, "name", t))


class TopicSampler(gym.Wrapper, RecordConstructorArgs):
    """Pick each episode's topic (and its seed pages) from ``topics`` when ``reset`` is not given one.

    Args:
        env: a (wrapped) WikiCrawl-v1 env.
        topics: topic specs valid for the env's corpus (names of ``corpus.meta["topics"]``,
            label prefixes, :class:`~gym_crawl.relevance.Topic` objects, …), or tasks ``{"topic": spec,
            "seeds": [title, ...]}`` (a topic crawled from its own seed pages, as the task sets' tasks);
            validated here.
        mode: ``"random"`` — uniform draw from the wrapper's own generator, reseeded by
            ``reset(seed=s)`` (same seed → same topic sequence); ``"cycle"`` — round robin,
            restarting at the first topic when a seed is given.
        seeds: per topic, the seed pages of its episodes (a list of titles/ids; default: the topic's own).
        names: per topic, the name :attr:`counts` records (default: the topic spec, or its ``name``).
        salt: mixed into the generator's seed (``default_rng([seed, salt])``), so two samplers seeded
            alike can draw different sequences.

    :attr:`counts` records how often each topic was drawn; :attr:`last_topic` is the last one.
    """

    def __init__(self, env: gym.Env, topics: Sequence[Any], mode: str = "random", *,
                 seeds: Sequence[Sequence[Any]] | None = None, names: Sequence[str] | None = None,
                 salt: int = 0x70C1C):
        RecordConstructorArgs.__init__(self, topics=list(topics), mode=mode, seeds=seeds, names=names, salt=salt)
        gym.Wrapper.__init__(self, env)
        if not topics:
            raise ValueError("TopicSampler needs at least one topic")
        if mode not in ("random", "cycle"):
            raise ValueError(f"mode must be 'random' or 'cycle', got {mode!r}")
        for arg, val in (("seeds", seeds), ("names", names)):
            if val is not None and len(val) != len(topics):
                raise ValueError(f"{arg} must have one entry per topic ({len(topics)}), got {len(val)}")
        base = crawl_env_of(env)
        for t in topics:
            if isinstance(t, dict):
                if "topic" not in t or set(t) - {"topic", "seeds"}:
                    raise ValueError(f"a task must be {{'topic': spec, 'seeds': [...]}}, got {t!r}")
                base.view.check_topic(t["topic"])
            else:
                base.view.check_topic(t)  # raises with the corpus' known topics
        self.topics = list(topics)
        self.seeds = None if seeds is None else [list(s) for s in seeds]
        self.names = ([str(n) for n in names] if names is not None
                      else [_topic_name(t) for t in self.topics])
        self.mode = mode
        self.salt = int(salt)
        self._rng = np.random.default_rng()
        self._next = 0
        self.last_topic: Any = None
        self.counts: Counter[str] = Counter()

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        if seed is not None:
            self._rng = np.random.default_rng([int(seed), self.salt])
            self._next = 0
        options = dict(options or {})
        if options.get("topic") is None:
            if self.mode == "cycle":
                i = self._next % len(self.topics)
                self._next += 1
            else:
                i = int(self._rng.integers(len(self.topics)))
            item = self.topics[i]
            if isinstance(item, dict):
                options["topic"] = item["topic"]
                if item.get("seeds") and options.get("seeds") is None:
                    options["seeds"] = list(item["seeds"])
            else:
                options["topic"] = item
            if self.seeds is not None and options.get("seeds") is None:
                options["seeds"] = self.seeds[i]
            self.counts[self.names[i]] += 1
        self.last_topic = options["topic"]
        return self.env.reset(seed=seed, options=options)
