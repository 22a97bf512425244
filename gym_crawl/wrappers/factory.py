"""Every WikiCrawl env of the package is built here.

* :func:`make_env` — ``gym.make`` of a registered WikiCrawl id: the single env and its Gymnasium
  wrappers. :func:`gym_crawl.agents.make_env_for` (the env an agent needs) and :func:`make_scoring_env`
  build through it; so do the benchmarks that measure the env itself, with no agent.
* :func:`make_vec_env` — ``gym.make_vec`` of a registered WikiCrawl id (``"sync"``, ``"async"`` or the
  batched ``"vector_entry_point"``, which for ``WikiCrawl-v0``…``-v2`` is built by
  :func:`gym_crawl.envs.make_vector_env`).
* :func:`make_scoring_env` — the SB3 / RLlib training stack: :func:`make_env` → :class:`TopicSampler` →
  a scoring wrapper.

Every builder's default id is :data:`gym_crawl.DEFAULT_ENV_ID`, the default task. They make by the registered
:class:`~gymnasium.envs.registration.EnvSpec`, not by the id string: Gymnasium's "``WikiCrawl-v1`` is out of date"
warning is raised only for strings, and the package supports its older ids on purpose — ``WikiCrawl-v0`` is the
first release's env that the paper reproductions pin, ``WikiCrawl-v1`` and ``WikiCrawl-v2`` differ from the
default in their defaults (corpus, budget), and all three observe ``budget_used`` like the published runs
(``WikiCrawl-v3`` observes the steps taken; :mod:`gym_crawl.envs.budget`). ``gym.make("WikiCrawl-v1")`` in user
code still warns, as Gymnasium does for any older version.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym

from gym_crawl.envs import DEFAULT_ENV_ID
from gym_crawl.wrappers.common import TopicSampler
from gym_crawl.wrappers.continuous import LinearScoringWrapper
from gym_crawl.wrappers.discrete import DiscreteScoringWrapper

__all__ = ["env_ids", "make_env", "make_scoring_env", "make_vec_env", "registered_kwargs"]


def env_ids() -> list[str]:
    """The registered WikiCrawl env ids (``WikiCrawl-v0`` … ``-v3``), sorted."""
    import gym_crawl  # noqa: F401  (registers the env ids)

    return sorted(i for i in gym.registry if i.startswith("WikiCrawl-v"))


def _spec(env_id: str) -> gym.envs.registration.EnvSpec:
    import gym_crawl  # noqa: F401  (registers the env ids)

    if not isinstance(env_id, str) or not env_id.startswith("WikiCrawl-v") or env_id not in gym.registry:
        raise ValueError(f"env_id {env_id!r} is not a registered WikiCrawl env; registered: {env_ids()}")
    return gym.registry[env_id]


def registered_kwargs(env_id: str) -> dict[str, Any]:
    """The keywords ``env_id`` is registered with, and its ``max_episode_steps`` (the registered limit)."""
    spec = _spec(env_id)
    kw = dict(spec.kwargs)
    if spec.max_episode_steps is not None:
        kw.setdefault("max_episode_steps", spec.max_episode_steps)
    return kw


def make_env(env_id: str = DEFAULT_ENV_ID, **kwargs: Any) -> gym.Env:
    """``gym.make(env_id, **kwargs)`` for a registered WikiCrawl id (see the module docstring).

    An adaptive ``domain_cap`` (``"A-B"``) given without ``domain_cap_horizon`` falls over the episode budget,
    as in TRES: ``domain_cap_horizon`` is set to ``max_episode_steps`` (the one given, else the id's).

    :param env_id: a registered WikiCrawl id (:func:`env_ids`; ``ValueError`` listing them otherwise); default
        :data:`~gym_crawl.DEFAULT_ENV_ID`.
    :param kwargs: env keywords (``corpus``, ``topic``, ``reward``, …) and ``gym.make``'s own
        (``max_episode_steps``, ``disable_env_checker``, …).
    """
    spec = _spec(env_id)
    return gym.make(spec, **_with_cap_horizon(spec, kwargs))


def _with_cap_horizon(spec: gym.envs.registration.EnvSpec, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` with ``domain_cap_horizon`` = the episode budget when an adaptive ``domain_cap`` has none."""
    from gym_crawl.envs.world import parse_domain_cap

    cap = parse_domain_cap(kwargs.get("domain_cap", spec.kwargs.get("domain_cap")))
    if cap is None or cap[0] == cap[1] or kwargs.get("domain_cap_horizon") is not None:
        return kwargs
    steps = kwargs.get("max_episode_steps", spec.max_episode_steps)
    if steps is None or int(steps) < 1:
        return kwargs  # no budget to fall over: the env names domain_cap_horizon at reset
    return {**kwargs, "domain_cap_horizon": int(steps)}


def make_vec_env(env_id: str = DEFAULT_ENV_ID, *, num_envs: int, vectorization_mode: str = "vector_entry_point",
                 **kwargs: Any) -> gym.vector.VectorEnv:
    """``gym.make_vec(env_id, num_envs, vectorization_mode, **kwargs)`` for a registered WikiCrawl id.

    :param num_envs: number of crawls.
    :param vectorization_mode: ``"vector_entry_point"`` (the batched
        :class:`~gym_crawl.envs.WikiCrawlVectorEnv`: one corpus and text model for all crawls — Gymnasium's
        ``make_vec`` for ``WikiCrawl-v3``, :func:`gym_crawl.envs.make_vector_env` for the older ids, whose
        spec ``make_vec`` refuses in this mode), ``"sync"`` or ``"async"`` (Gymnasium's vector envs over
        single envs).
    :param kwargs: env keywords, and ``max_episode_steps``.
    """
    spec = _spec(env_id)
    kwargs = _with_cap_horizon(spec, kwargs)
    if vectorization_mode == "vector_entry_point" and spec.vector_entry_point is None:
        from gym_crawl.envs import make_vector_env

        return make_vector_env(env_id, num_envs=num_envs, **kwargs)
    return gym.make_vec(spec, num_envs=num_envs, vectorization_mode=vectorization_mode, **kwargs)


def make_scoring_env(kind: str = "discrete", *, topics: Sequence[Any] | None = None, topic_mode: str = "random",
                     max_episode_steps: int | None = None, flatten: bool = False, reward_scale: float | None = 1.0,
                     top_rows: int = 4, env_id: str = DEFAULT_ENV_ID, **env_kwargs: Any) -> gym.Env:
    """Build ``make_env(env_id, **env_kwargs)`` → ``TopicSampler`` → scoring wrapper.

    Args:
        kind: ``"discrete"`` (:class:`DiscreteScoringWrapper`) or ``"continuous"``
            (:class:`gym_crawl.wrappers.LinearScoringWrapper`).
        topics: topics sampled per episode, or tasks ``{"topic": spec, "seeds": [...]}`` (default: the env's single
            topic, i.e. no sampler; see :class:`TopicSampler`).
        topic_mode: ``"random"`` or ``"cycle"`` (see :class:`TopicSampler`).
        max_episode_steps: the page budget (env steps per episode), passed to ``gym.make`` (default: ``env_id``'s
            registered budget).
        flatten: discrete only — flat ``Box`` observation.
        reward_scale: multiply rewards (``None``: by ``1 / |max reward|`` of each episode's scheme; see
            :class:`DiscreteScoringWrapper`).
        top_rows: continuous only — candidate rows in the summary observation.
        env_id: the registered WikiCrawl id (default :data:`~gym_crawl.envs.DEFAULT_ENV_ID`, the default task).
        env_kwargs: :class:`WikiCrawlEnv` arguments (``corpus``, ``reducer``, ``max_candidates``,
            ``features``, ``reward``, …).
    """
    if kind not in ("discrete", "continuous"):
        raise ValueError(f"unknown wrapper kind {kind!r}; expected 'discrete' or 'continuous'")
    action = "slot" if kind == "discrete" else "page"
    if max_episode_steps is not None:
        env_kwargs["max_episode_steps"] = max_episode_steps
    if topics and env_kwargs.get("topic") is None:
        # the env is built on one of the topics (a corpus may have no default topic of its own); the sampler picks
        # each episode's. A task's seeds become the env's default seeds only when every topic is a task with seeds,
        # so a topic without seeds of its own never starts from another task's pages.
        plain = [t for t in topics if not (isinstance(t, dict) and t.get("seeds"))]
        first = plain[0] if plain else topics[0]
        env_kwargs["topic"] = first["topic"] if isinstance(first, dict) else first
        if not plain and env_kwargs.get("seeds") is None:
            env_kwargs["seeds"] = list(first["seeds"])
    env = make_env(env_id, action=action, **env_kwargs)
    if topics:
        env = TopicSampler(env, topics, mode=topic_mode)
    if kind == "discrete":
        return DiscreteScoringWrapper(env, flatten=flatten, reward_scale=reward_scale)
    return LinearScoringWrapper(env, top_rows=top_rows, reward_scale=reward_scale)
