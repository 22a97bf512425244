"""gym_crawl: focused web crawling as a Gymnasium reinforcement-learning environment.

Importing the package registers ``WikiCrawl-v3`` (:data:`DEFAULT_ENV_ID`: the default task — the calibrated
hard synthetic web, where best-first finds about 0.45 of what an oracle finds — under Gymnasium's time-limit
convention), and the older ``WikiCrawl-v2``, ``WikiCrawl-v1`` and the first release's ``WikiCrawl-v0``, kept so
their results reproduce::

    import gymnasium as gym, gym_crawl
    env = gym.make(gym_crawl.DEFAULT_ENV_ID)         # or gym.make("gym_crawl:WikiCrawl-v3") without the import
    envs = gym.make_vec("WikiCrawl-v3", num_envs=64)  # the batched vector env (its vector entry point)

Layers (data flows one way): corpus → web → webgen → text → relevance → crawl → features → reducers →
envs → wrappers → agents → tasks → benchmarks / cli (docs/architecture.md).
"""
from __future__ import annotations

import gymnasium as gym

from gym_crawl import _moved

__version__ = "0.1.0"

ENV_ID = "WikiCrawl-v1"
#: The first release's id: the same env with the first release's default reward ("han2018" for every topic). v1
#: changed that default (rewards change meaning, so the id was bumped): a topic with a ground-truth label is
#: rewarded by its label, so the reward optimizes what ``relevant_found`` counts.
ENV_ID_V0 = "WikiCrawl-v0"
DEFAULT_MAX_EPISODE_STEPS = 1000
#: The hard task: the same env whose defaults are a task with headroom — the ``synthetic-hard`` corpus (link text
#: as uninformative as real Wikipedia's), its first topic (``geology``) from its main page, and a budget of 100
#: pages, as in the ``hard`` task set (how far best-first and the oracle get there: benchmarks/RESULTS.md, "The
#: default task WikiCrawl-v2"). Its train / test topics are the ``hard`` task set's (``gym-crawl train`` and
#: ``gym-crawl eval`` use them). v1 and v0 keep their defaults (the 20,000-page default synthetic web, budget
#: 1000) so their results reproduce.
ENV_ID_V2 = "WikiCrawl-v2"
V2_KWARGS = {"corpus": "synthetic-hard"}
V2_MAX_EPISODE_STEPS = 100
#: the task set whose train topics ``gym-crawl train`` trains on and whose test topics it reports by default
V2_TASK_SET = "hard"
#: v2's task under Gymnasium's time-limit convention: the registered ``TimeLimit`` (100 steps) truncates, the
#: batched vector env is the vector entry point (``gym.make_vec``), and ``state[0]`` observes the steps taken
#: (``time_feature="log_steps"``) instead of the fraction of a budget the env cannot learn from ``gym.make``
#: (``TimeAwareObservation`` adds that fraction). Everything else is v2's. See :mod:`gym_crawl.envs.budget`.
ENV_ID_V3 = "WikiCrawl-v3"
V3_KWARGS = {"corpus": "synthetic-hard", "time_feature": "log_steps"}
V3_MAX_EPISODE_STEPS = 100
#: The id every default of the package builds (the CLI, the factories, the README): ``WikiCrawl-v3``.
DEFAULT_ENV_ID = ENV_ID_V3
#: the task set of the default task (v3 keeps v2's task): ``gym-crawl train`` and ``gym-crawl eval`` without one
DEFAULT_TASK_SET = V2_TASK_SET

#: the wrapper v0–v2 register after make's TimeLimit: it hands that limit to the env (gym_crawl.envs.budget)
#: Its name is what Gymnasium's refusal of make_vec(id, vectorization_mode="vector_entry_point") prints for these
#: ids, so it says where the batched env is.
BUDGET_WRAPPER = gym.envs.registration.WrapperSpec(
    name="BudgetFromTimeLimit (batched env of this id: gym_crawl.envs.make_vector_env(id, num_envs=N); "
         "make_vec's vector entry point: WikiCrawl-v3)",
    entry_point="gym_crawl.envs.budget:BudgetFromTimeLimit", kwargs={})

if ENV_ID_V3 not in gym.registry:
    # v3: Gymnasium's convention — the registered TimeLimit truncates, make_vec's vector entry point is the
    # batched env (it takes max_episode_steps from make_vec, like CartPoleVectorEnv), and the observation
    # does not depend on the limit, so any N given to make or make_vec is consistent.
    gym.register(id=ENV_ID_V3, entry_point="gym_crawl.envs.wiki_crawl:WikiCrawlEnv",
                 vector_entry_point="gym_crawl.envs.vector:WikiCrawlVectorEnv",
                 max_episode_steps=V3_MAX_EPISODE_STEPS, kwargs=dict(V3_KWARGS))
    # v0-v2 observe the fraction of the budget used, so the env needs the budget: the registered TimeLimit
    # gives its limit (the registered one or make's max_episode_steps=N) to the env through BudgetFromTimeLimit.
    # Gymnasium's make_vec refuses a vector entry point on a spec with additional wrappers, so these ids register
    # none (make_vec's default is "sync") and gym_crawl.envs.make_vector_env builds their batched env.
    for _id, _kwargs, _steps in ((ENV_ID_V2, V2_KWARGS, V2_MAX_EPISODE_STEPS),
                                 (ENV_ID, {}, DEFAULT_MAX_EPISODE_STEPS),
                                 (ENV_ID_V0, {"reward": "han2018"}, DEFAULT_MAX_EPISODE_STEPS)):
        gym.register(id=_id, entry_point="gym_crawl.envs.wiki_crawl:WikiCrawlEnv", max_episode_steps=_steps,
                     kwargs={**_kwargs, "time_feature": "budget_used"}, additional_wrappers=(BUDGET_WRAPPER,))

_moved.install()  # the deprecated old paths of modules that moved (gym_crawl._moved.MOVED)

__all__ = ["DEFAULT_ENV_ID", "DEFAULT_TASK_SET", "ENV_ID", "ENV_ID_V0", "ENV_ID_V2", "ENV_ID_V3", "V2_KWARGS",
           "V2_MAX_EPISODE_STEPS", "V2_TASK_SET", "V3_KWARGS", "V3_MAX_EPISODE_STEPS", "DEFAULT_MAX_EPISODE_STEPS",
           "__version__"]
