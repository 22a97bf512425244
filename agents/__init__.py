"""Crawling agents: one protocol (:class:`agents.base.Agent`), registered by name.

Baselines (random, bfs, best-first, oracle) live in :mod:`agents.baselines`; the papers'
learners register themselves under ``lfa-*``, ``thesis-lfa``, ``td-lambda``, ``tres*``; the variants of
:mod:`agents.variants` (``lfa-sync+content``, ...) are registered names too.
"""
from gym_crawl.agents.base import AGENTS, Agent, Transition, agent_class, agent_names, make_agent, register_agent
from gym_crawl.agents.factory import env_kwargs_for, make_env_for
from gym_crawl.agents.runner import EpisodeResult, run_episode, run_episodes
from gym_crawl.agents.variants import VARIANTS

for _name, _v in VARIANTS.items():
    AGENTS.register(_name, f"gym_crawl.agents.variants:{_name}", f"variant of {_v.agent}: {_v.doc}")

__all__ = ["Agent", "Transition", "AGENTS", "make_agent", "register_agent", "agent_names", "agent_class",
           "make_env_for", "env_kwargs_for", "EpisodeResult", "run_episode", "run_episodes"]
