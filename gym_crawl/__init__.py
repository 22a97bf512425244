"""gym_crawl: focused web crawling as a Gymnasium reinforcement-learning environment.

Importing the package registers ``WikiCrawl-v1`` (and the first release's ``WikiCrawl-v0``)::

    import gymnasium as gym, gym_crawl
    env = gym.make("WikiCrawl-v1")            # or gym.make("gym_crawl:WikiCrawl-v1") without the import

Layers (data flows one way): corpus → text → relevance → crawl → features →
reducers → envs → wrappers; ``agents`` sits on top and is a separate package.
"""
from __future__ import annotations

import gymnasium as gym

__version__ = "0.1.0"

ENV_ID = "WikiCrawl-v1"
#: The first release's id: the same env with the first release's default reward ("han2018" for every
#: topic). v1 changed that default (rewards change meaning, so the id was bumped): a topic with a
#: ground-truth label is rewarded by its label, so the reward optimizes what ``relevant_found`` counts.
ENV_ID_V0 = "WikiCrawl-v0"
DEFAULT_MAX_EPISODE_STEPS = 1000

if ENV_ID not in gym.registry:
    # Gymnasium's TimeLimit owns truncation: every agent acts through env.step (slot or page
    # action mode), so the budget is the registered max_episode_steps, overridable with
    # gym.make("WikiCrawl-v1", max_episode_steps=N); the env reads it from that TimeLimit at reset
    # (see gym_crawl.envs.wiki_crawl).
    # gym.make_vec("WikiCrawl-v1", num_envs=N, vectorization_mode="vector_entry_point") builds the
    # batched WikiCrawlVectorEnv (one corpus and text model for the N crawls).
    for _id, _kwargs in ((ENV_ID, {}), (ENV_ID_V0, {"reward": "han2018"})):
        gym.register(id=_id, entry_point="gym_crawl.envs.wiki_crawl:WikiCrawlEnv",
                     vector_entry_point="gym_crawl.envs.vector:WikiCrawlVectorEnv",
                     max_episode_steps=DEFAULT_MAX_EPISODE_STEPS, kwargs=_kwargs)

__all__ = ["ENV_ID", "ENV_ID_V0", "DEFAULT_MAX_EPISODE_STEPS", "__version__"]
