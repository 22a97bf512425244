"""Crawling agents: one protocol (:class:`agents.base.Agent`), registered by name.

Baselines (random, bfs, best-first, oracle) live in :mod:`agents.baselines`; the papers'
learners register themselves under ``lfa-*``, ``thesis-lfa``, ``td-lambda``, ``tres*``.
"""
from gym_crawl.agents.base import AGENTS, Agent, Transition, agent_class, agent_names, make_agent, register_agent
from gym_crawl.agents.factory import env_kwargs_for, make_env_for
from gym_crawl.agents.runner import EpisodeResult, run_episode, run_episodes

__all__ = ["Agent", "Transition", "AGENTS", "make_agent", "register_agent", "agent_names", "agent_class",
           "make_env_for", "env_kwargs_for", "EpisodeResult", "run_episode", "run_episodes"]
