"""One factory that builds the env an agent needs: :func:`make_env_for`.

The CLI, the benchmarks, the tests and third-party code all build envs here, so an agent's needs
are stated once, on the agent (``action_kind``, ``needs_observation``, ``env_defaults``), and applied
the same way everywhere::

    env = make_env_for("lfa-async", corpus="wikispeedia", topic="cancer", max_episode_steps=500)
    result = run_episode(env, make_agent("lfa-async"), seed=0)

The env id is the one the agent was trained on when it carries an ``env_config``
(:mod:`gym_crawl.agents.env_config`), else :data:`gym_crawl.envs.DEFAULT_ENV_ID` — the default task.
Precedence, lowest first: the env id's registered defaults, the agent's ``env_defaults``, its ``env_config``
keywords, the action and observation modes the agent needs (``action_kind`` → ``action=``;
``needs_observation=False`` → ``observation="state"``), then the caller's ``overrides`` (``None`` values are
ignored, so CLI flags left unset do not override anything). An override that contradicts a fixed keyword of the
agent's ``env_config`` (the feature set, category slots or text model a trained policy reads) is an error naming
both configurations; so is a built env whose text model or feature width differs from the recorded ones. A saved
model's text model is rebuilt of the same kind on the crawled corpus (``text={"general": ..., "dim": ...}``).
``max_episode_steps`` is the env's episode budget (it owns its horizon; ``gym.make`` and the registered
wrapper keep its ``TimeLimit`` in agreement, and the built env is checked with
:func:`gym_crawl.envs.check_budget`). An override that contradicts the agent's action mode is an error.
"""
from __future__ import annotations

from typing import Any

import gymnasium as gym

from gym_crawl.agents.base import Agent, agent_class, crawl_view
from gym_crawl.envs import DEFAULT_ENV_ID
from gym_crawl.envs.budget import check_budget
from gym_crawl.wrappers.factory import make_env

__all__ = ["make_env_for", "env_id_for", "env_kwargs_for"]


def _agent_attrs(agent: Agent | str | type) -> tuple[str, bool, dict[str, Any], str]:
    if isinstance(agent, str):
        agent = agent_class(agent)
    name = getattr(agent, "name", type(agent).__name__)
    return (str(getattr(agent, "action_kind", "slot")), bool(getattr(agent, "needs_observation", True)),
            dict(getattr(agent, "env_defaults", {}) or {}), str(name))


def env_kwargs_for(agent: Agent | str | type, **overrides: Any) -> dict[str, Any]:
    """The ``gym.make(env_id, **kwargs)`` keyword arguments :func:`make_env_for` would use."""
    kind, needs_obs, defaults, name = _agent_attrs(agent)
    kw: dict[str, Any] = dict(defaults)
    saved = getattr(agent, "env_config", None)
    given = {k: v for k, v in overrides.items() if v is not None}
    if saved is not None:
        given = saved.merged(given)  # the keywords it was trained with, then the caller's (checked)
    kw["action"] = kind
    if not needs_obs:
        kw["observation"] = "state"
    if "action" in given and given["action"] != kind:
        raise ValueError(f"agent {name!r} acts by {kind!r} (action={kind!r}); got action={given['action']!r}")
    if "observation" in given and given["observation"] == "state" and needs_obs:
        raise ValueError(f"agent {name!r} reads the candidate observation; observation='state' would hide it")
    kw.update(given)
    return kw


def env_id_for(agent: Agent | str | type, env_id: str | None = None) -> str:
    """The env id :func:`make_env_for` builds for ``agent``: ``env_id`` when given, else the id the agent was
    trained on (its ``env_config``), else :data:`gym_crawl.envs.DEFAULT_ENV_ID`."""
    if env_id is not None:
        return env_id
    saved = getattr(agent, "env_config", None)
    return (saved.env_id if saved is not None else None) or DEFAULT_ENV_ID


def make_env_for(agent: Agent | str | type, env_id: str | None = None, **overrides: Any) -> gym.Env:
    """``make_env(env_id, **env_kwargs_for(agent, **overrides))`` — the env ``agent`` runs on.

    ``agent`` is an agent instance, a registered name, or an Agent class. ``env_id`` is a registered
    WikiCrawl id (default: :func:`env_id_for` — the id the agent was trained on, else the default task
    :data:`~gym_crawl.envs.DEFAULT_ENV_ID`; ``WikiCrawl-v0``: the first release's default reward, which the paper
    reproductions pin). ``overrides`` are any ``WikiCrawlEnv`` keyword (``corpus``, ``topic``, ``reward``,
    ``reducer``, …) plus ``max_episode_steps``. Built by :func:`gym_crawl.wrappers.factory.make_env` (by the
    registered spec: no "out of date" warning for the older ids the package supports). An agent class
    with a ``build_env(env_id, kwargs)`` classmethod builds its own env from these keywords through the
    same ``make_env`` (``seedfinder`` wraps it in its seed search).
    """
    env_id = env_id_for(agent, env_id)
    kwargs = env_kwargs_for(agent, **overrides)
    build = getattr(agent_class(agent) if isinstance(agent, str) else agent, "build_env", None)
    # an agent that wraps its env (seedfinder) builds it through make_env too
    env = build(env_id, kwargs) if build is not None else make_env(env_id, **kwargs)
    check_budget(env)
    saved = getattr(agent, "env_config", None)
    if saved is not None and hasattr(saved, "check_env"):
        try:  # the text model and feature width it was trained on, or one error naming both configurations
            saved.check_env(crawl_view(env))
        except ValueError:
            env.close()
            raise
    return env
