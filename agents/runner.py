"""Run agents on the env: one episode, or E episodes with the agent (and its weights) kept."""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gym_crawl.agents.base import Agent, Transition
from gym_crawl.envs.budget import check_budget

__all__ = ["EpisodeResult", "run_episode", "run_episodes"]


@dataclass
class EpisodeResult:
    """Outcome of one crawl.

    ``relevant_curve[t]``: relevant pages found after env step t+1 (seeds included);
    ``rewards``: reward of each step; ``seconds``: wall time of the steps (reset excluded).
    """

    agent: str
    topic: str
    steps: int
    relevant_found: int
    pages_fetched: int
    harvest_rate: float
    relevant_domains: int
    reward_sum: float
    seconds: float
    reset_seconds: float
    relevant_curve: np.ndarray = field(repr=False)
    rewards: np.ndarray = field(repr=False)
    fetched: np.ndarray = field(repr=False)
    invalid_actions: int = 0

    @property
    def steps_per_second(self) -> float:
        return self.steps / self.seconds if self.seconds > 0 else float("inf")

    def summary(self) -> dict[str, Any]:
        return {"agent": self.agent, "topic": self.topic, "steps": self.steps,
                "relevant_found": self.relevant_found, "pages_fetched": self.pages_fetched,
                "harvest_rate": round(self.harvest_rate, 4), "relevant_domains": self.relevant_domains,
                "reward_sum": self.reward_sum, "invalid_actions": self.invalid_actions,
                "seconds": round(self.seconds, 4), "reset_seconds": round(self.reset_seconds, 4),
                "steps_per_second": round(self.steps_per_second, 1)}


def run_episode(env: Any, agent: Agent, *, seed: int | None = None, options: dict | None = None,
                on_step: Callable[[int, dict], None] | None = None,
                should_stop: Callable[[], bool] | None = None) -> EpisodeResult:
    """Reset ``env`` and let ``agent`` crawl until termination or truncation (or, after a step, until
    ``should_stop()`` is true: a live crawl stopped by a signal ends cleanly, as a shorter episode).

    Every action goes through ``env.step`` of the env as given (wrappers included:
    ``RecordEpisodeStatistics`` records). Build the env with :func:`gym_crawl.agents.make_env_for` so its
    action mode is the agent's ``action_kind``. A ``TimeLimit`` that disagrees with the env's own budget is
    refused (:func:`gym_crawl.envs.check_budget`).
    """
    check_budget(env)
    base = env.unwrapped
    mode = getattr(base, "action_mode", None)
    if mode is not None and mode != agent.action_kind:
        raise ValueError(f"agent {agent.name!r} acts by {agent.action_kind!r} but the env's action mode is "
                         f"{mode!r}: build the env with make_env_for(agent, ...) or action={agent.action_kind!r}")
    t0 = time.perf_counter()
    obs, info = env.reset(seed=seed, options=options)
    t1 = time.perf_counter()
    agent.begin_episode(base.view, np.random.default_rng(seed))
    curve, rewards = [], []
    invalid = 0
    done = False
    t = 0
    while not done:
        a = agent.act(obs, info)
        obs2, r, term, trunc, info2 = env.step(a)
        agent.observe(Transition(obs, a, float(r), obs2, term, trunc, info2))
        obs, info = obs2, info2
        curve.append(info["relevant_found"])
        rewards.append(r)
        invalid += bool(info["invalid_action"])
        done = term or trunc
        t += 1
        if on_step is not None:
            on_step(t, info)
        if should_stop is not None and should_stop():
            break
    t2 = time.perf_counter()
    agent.end_episode(info)
    return EpisodeResult(agent=agent.name, topic=info["topic"], steps=t, relevant_found=info["relevant_found"],
                         pages_fetched=info["pages_fetched"], harvest_rate=info["harvest_rate"],
                         relevant_domains=info["relevant_domains"], reward_sum=info["reward_sum"],
                         seconds=t2 - t1, reset_seconds=t1 - t0, relevant_curve=np.asarray(curve, np.int32),
                         rewards=np.asarray(rewards, np.float32), fetched=base.view.fetched_pages(),
                         invalid_actions=invalid)


def run_episodes(env: Any, agent: Agent, episodes: int, *, seed: int = 0, **kw: Any) -> list[EpisodeResult]:
    """``episodes`` crawls with the same agent object (learners keep their weights: Han's task protocol)."""
    return [run_episode(env, agent, seed=seed + i, **kw) for i in range(episodes)]
