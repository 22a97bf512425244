"""The episode budget: the env owns its horizon, and Gymnasium's ``TimeLimit`` may only agree with it.

A :class:`~gym_crawl.envs.wiki_crawl.WikiCrawlEnv` truncates its own episodes after ``max_episode_steps``
env steps (a constructor keyword, as in Gymnasium's ``CartPoleVectorEnv``; Minigrid calls it
``max_steps``, PettingZoo ``max_cycles``). The env needs the number itself — the observation's
``budget_used``, an adaptive domain cap that falls over the budget, refusing a step once the episode is
over — so the budget an agent observes is the budget that truncates only if the env owns it. The ids
registered by :mod:`gym_crawl` therefore carry the budget in their ``kwargs`` and register no
``TimeLimit`` (``spec.max_episode_steps`` is ``None``).

Gymnasium's ``gym.make(id, max_episode_steps=N)`` consumes ``N`` itself and wraps a ``TimeLimit(N)``
without passing it to the env. The ids register :class:`BudgetFromTimeLimit` as an additional wrapper,
which ``make`` applies right outside that ``TimeLimit``: it hands the limit to the env before any reset,
so both stop at ``N`` (``make_vec``'s ``"sync"`` and ``"async"`` modes build their sub-envs with
``make`` and agree the same way).

A ``TimeLimit`` added by hand is checked by :func:`check_budget`, which the runner, ``make_env_for``
and the CLI call: a limit that disagrees with the env's budget is refused with an error that says what
to do. The one case no check can see: a loop of the user's own around a hand-added ``TimeLimit``
shorter than the budget — that limit then just cuts each episode short, and ``budget_used`` ends below 1.
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


def _budget_of(env: gym.Env) -> tuple[bool, int | None]:
    """(whether the innermost env has a budget of its own, that budget)."""
    base = env.unwrapped
    if not callable(getattr(base, "set_budget", None)):
        return False, None
    return True, base.budget  # type: ignore[attr-defined]


def check_budget(env: gym.Env) -> int | None:
    """The budget that truncates ``env``'s episodes; ``ValueError`` when a ``TimeLimit`` in its wrapper
    chain disagrees with the crawl env's own ``max_episode_steps`` (a nested or hand-added limit: the
    observation's ``budget_used`` and an adaptive domain cap would follow one number and truncation another).

    Envs that are not crawl envs are returned the innermost ``TimeLimit``'s limit (``None`` without one).
    """
    limits = time_limits(env)
    owns, budget = _budget_of(env)
    if not owns:
        return limits[-1] if limits else None
    for lim in limits:
        if lim != budget:
            have = "no budget (max_episode_steps=None)" if budget is None else f"max_episode_steps={budget}"
            raise ValueError(
                f"a TimeLimit(max_episode_steps={lim}) wraps a crawl env with {have}: the env truncates its own "
                f"episodes and its observation's budget_used counts against its own budget, so the two would "
                f"disagree. Give the budget to the env once — gym.make(id, max_episode_steps={lim}), "
                f"make_env_for(..., max_episode_steps={lim}) or WikiCrawlEnv(..., max_episode_steps={lim}) — and "
                f"add no TimeLimit of your own")
    return budget


class BudgetFromTimeLimit(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Pass-through wrapper that ``gym.make`` applies right outside its ``TimeLimit`` (registered as an
    additional wrapper of every ``WikiCrawl`` id): it gives the limit ``make`` consumed to the env, before any
    reset, so the env's budget and the ``TimeLimit`` agree. Without a ``TimeLimit`` it changes nothing."""

    def __init__(self, env: gym.Env):
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        limits = time_limits(env)
        owns, _ = _budget_of(env)
        if limits and owns:
            env.unwrapped.set_budget(limits[0])  # type: ignore[attr-defined]
        check_budget(env)
