"""gym_crawl: focused web crawling as a Gymnasium reinforcement-learning environment.

Importing the package registers ``WikiCrawl-v2`` (the default task: the calibrated hard synthetic web, where
best-first finds about 0.45 of what an oracle finds), ``WikiCrawl-v1`` and the first release's ``WikiCrawl-v0``::

    import gymnasium as gym, gym_crawl
    env = gym.make("WikiCrawl-v2")            # or gym.make("gym_crawl:WikiCrawl-v2") without the import

Layers (data flows one way): corpus → web → webgen → text → relevance → crawl → features → reducers →
envs → wrappers → agents → tasks → benchmarks / cli (docs/architecture.md).
"""
from __future__ import annotations

import gymnasium as gym

from gym_crawl import _moved

__version__ = "0.1.0"

ENV_ID = "WikiCrawl-v1"
#: The first release's id: the same env with the first release's default reward ("han2018" for every
#: topic). v1 changed that default (rewards change meaning, so the id was bumped): a topic with a
#: ground-truth label is rewarded by its label, so the reward optimizes what ``relevant_found`` counts.
ENV_ID_V0 = "WikiCrawl-v0"
DEFAULT_MAX_EPISODE_STEPS = 1000
#: The default task: the same env whose defaults are a task with headroom — the ``synthetic-hard`` corpus
#: (link text as uninformative as real Wikipedia's), its first topic (``geology``) from its main page, and a
#: budget of 100 pages, as in the ``hard`` task set. There best-first finds 28 relevant pages, the oracle 99
#: and random about 5; on the set's 34 test topics best-first finds 33.4 per task and the oracle 79.5 (0.42).
#: Its train / test topics are the ``hard`` task set's (``gym-crawl train`` and ``gym-crawl eval`` use them).
#: v1 and v0 keep their defaults (the 20,000-page default synthetic web, budget 1000) so their results
#: reproduce.
ENV_ID_V2 = "WikiCrawl-v2"
V2_KWARGS = {"corpus": "synthetic-hard"}
V2_MAX_EPISODE_STEPS = 100
#: the task set whose train topics ``gym-crawl train`` trains on and whose test topics it reports by default
V2_TASK_SET = "hard"

#: the wrapper every id registers after make's TimeLimit: it hands that limit to the env (gym_crawl.envs.budget)
BUDGET_WRAPPER = gym.envs.registration.WrapperSpec(
    name="BudgetFromTimeLimit", entry_point="gym_crawl.envs.budget:BudgetFromTimeLimit", kwargs={})

if ENV_ID not in gym.registry:
    # The env owns its horizon: the budget is the env keyword max_episode_steps (in the registered kwargs),
    # the env truncates itself, and no TimeLimit is registered, so truncation has one owner.
    # gym.make(id, max_episode_steps=N) still works: make consumes N and wraps a TimeLimit(N), and the
    # registered BudgetFromTimeLimit gives N to the env before any reset. Gymnasium's make_vec refuses a
    # vector entry point on a spec with additional wrappers, so the batched WikiCrawlVectorEnv is built with
    # gym_crawl.envs.make_vector_env(id, num_envs=N, ...) (make_vec's "sync" and "async" modes work as usual).
    for _id, _kwargs, _steps in ((ENV_ID_V2, V2_KWARGS, V2_MAX_EPISODE_STEPS),
                                 (ENV_ID, {}, DEFAULT_MAX_EPISODE_STEPS),
                                 (ENV_ID_V0, {"reward": "han2018"}, DEFAULT_MAX_EPISODE_STEPS)):
        gym.register(id=_id, entry_point="gym_crawl.envs.wiki_crawl:WikiCrawlEnv",
                     kwargs={**_kwargs, "max_episode_steps": _steps}, additional_wrappers=(BUDGET_WRAPPER,))

_moved.install()  # the deprecated old paths of modules that moved (gym_crawl._moved.MOVED)

__all__ = ["ENV_ID", "ENV_ID_V0", "ENV_ID_V2", "V2_KWARGS", "V2_MAX_EPISODE_STEPS", "V2_TASK_SET",
           "DEFAULT_MAX_EPISODE_STEPS", "__version__"]
