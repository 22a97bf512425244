"""The episode budget: who truncates, and how the observation is kept in agreement with it.

Gymnasium's ``gym.make(id, max_episode_steps=N)`` consumes ``N`` and wraps a ``TimeLimit(N)``; the env it
builds is never told ``N`` (its ``spec`` even says ``max_episode_steps=None``). So an env whose
*observation* depends on the budget cannot learn it from ``make``, and one whose observation does not need
it can leave truncation to the ``TimeLimit``, as Gymnasium's own envs do. The ids take the two sides:

``WikiCrawl-v3`` (the default, ``gym_crawl.DEFAULT_ENV_ID``) — Gymnasium's convention.
    The spec registers ``max_episode_steps`` (so ``gym.make`` wraps a ``TimeLimit`` that truncates, and
    ``TimeAwareObservation``, ``spec.max_episode_steps`` and every wrapper that reads them work) and a
    ``vector_entry_point``: ``gym.make_vec`` builds the batched
    :class:`~gym_crawl.envs.vector.WikiCrawlVectorEnv` and passes it ``max_episode_steps``, as it does
    for ``CartPoleVectorEnv``. The single env observes the steps it has taken (``time_feature="log_steps"``),
    not a fraction of a budget it cannot know; ``TimeAwareObservation(env, normalize_time=True)`` adds that
    fraction, from the ``TimeLimit`` itself. TRES's adaptive domain cap falls over its own keyword,
    ``domain_cap_horizon``. Any ``TimeLimit`` — made, hand-added, nested — is simply Gymnasium's: nothing
    the env observes disagrees with it.

``WikiCrawl-v0``, ``-v1``, ``-v2`` — observation unchanged, so their published results reproduce.
    They observe the fraction of the budget used (``time_feature="budget_used"``), so the env holds the
    budget (the constructor keyword ``max_episode_steps``, at which it also truncates itself). Their spec
    registers ``max_episode_steps`` (the ``TimeLimit`` and its readers work as above) and
    :class:`BudgetFromTimeLimit` as an additional wrapper, which ``make`` applies right outside its
    ``TimeLimit`` and which hands that limit to the env before any reset — for ``gym.make(id)``,
    ``gym.make(id, max_episode_steps=N)``, ``gym.make(env.spec)`` and ``make_vec``'s ``"sync"``/``"async"``
    modes alike. What gives: Gymnasium's ``make_vec`` refuses ``vectorization_mode="vector_entry_point"``
    for a spec with an additional wrapper — a loud error, never a silent disagreement; their batched env is
    :func:`gym_crawl.envs.make_vector_env` (or ``gym_crawl.wrappers.factory.make_vec_env``), and
    ``WikiCrawl-v3`` is the id to use with ``make_vec``. A ``TimeLimit`` added by hand (or nested) around
    such an env is checked by :func:`check_budget`, which ``run_episode``, ``make_env_for`` and the CLI
    call: one that disagrees with the env's budget is refused with an error that says what to do.
    Without any limit (``gym.make(id, max_episode_steps=-1)``, or the bare env Gymnasium's checker remakes from
    ``env.unwrapped.spec``) nothing truncates and ``budget_used`` stays 0.
"""
from __future__ import annotations

from typing import Any

import gymnasium as gym
from gymnasium.wrappers import TimeLimit

__all__ = ["BudgetFromTimeLimit", "check_budget", "time_limits"]


def time_limits(env: gym.Env) -> list[int]:
    """``max_episode_steps`` of every ``TimeLimit`` in ``env``'s wrapper chain, outermost first."""
    out: list[int] = []
    e: Any = env
    while isinstance(e, gym.Wrapper):
        if isinstance(e, TimeLimit):
            out.append(int(e.get_wrapper_attr("_max_episode_steps")))
        e = e.env
    return out


def _crawl_env(env: gym.Env) -> Any:
    """The innermost env when it is a crawl env (it has a budget of its own to set), else ``None``."""
    base = env.unwrapped
    return base if callable(getattr(base, "set_budget", None)) else None


def check_budget(env: gym.Env) -> int | None:
    """The number of env steps after which ``env``'s episodes are truncated (``None``: never).

    For a crawl env that observes ``budget_used`` (``WikiCrawl-v0``…``-v2``), ``ValueError`` when a ``TimeLimit``
    in its wrapper chain disagrees with the env's own ``max_episode_steps`` (a nested or hand-added limit:
    the observation and an adaptive domain cap would follow one number and truncation another). A crawl env
    that observes ``log_steps`` (``WikiCrawl-v3``) observes nothing of the limit: the shortest of its
    ``TimeLimit``\\ s and its own budget truncates. Envs that are not crawl envs: the shortest ``TimeLimit``.
    """
    limits = time_limits(env)
    base = _crawl_env(env)
    if base is None:
        return min(limits) if limits else None
    budget = base.budget
    if getattr(base, "time_feature", "budget_used") != "budget_used":
        known = limits + ([budget] if budget is not None else [])
        return min(known) if known else None
    for lim in limits:
        if lim != budget:
            have = "no budget (max_episode_steps=None)" if budget is None else f"max_episode_steps={budget}"
            raise ValueError(
                f"a TimeLimit(max_episode_steps={lim}) wraps a crawl env with {have} that observes budget_used "
                f"(steps / its own budget), so the observation and the truncation would disagree. Give the budget "
                f"to the env once — gym.make(id, max_episode_steps={lim}), make_env_for(..., "
                f"max_episode_steps={lim}) or WikiCrawlEnv(..., max_episode_steps={lim}) — and add no TimeLimit "
                f"of your own; or use WikiCrawl-v3, whose observation does not depend on the limit")
    return budget


class BudgetFromTimeLimit(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Pass-through wrapper that ``gym.make`` applies right outside its ``TimeLimit`` (registered as an
    additional wrapper of ``WikiCrawl-v0``…``-v2``): it gives the limit ``make`` consumed to the env, before
    any reset, so the budget the env observes and the ``TimeLimit`` agree. Without a ``TimeLimit`` it changes
    nothing."""

    def __init__(self, env: gym.Env):
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        limits = time_limits(env)
        base = _crawl_env(env)
        if limits and base is not None:
            base.set_budget(limits[0])
        check_budget(env)
