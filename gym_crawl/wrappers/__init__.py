"""State-action scoring wrappers that give stock SB3 agents fixed spaces.

* :class:`DiscreteScoringWrapper` — ``Discrete(K)`` over reducer-proposed candidate slots,
  ``Dict`` or flat ``Box`` observation, ``action_masks()`` for ``MaskablePPO``;
* :class:`LinearScoringWrapper` — action ``w ∈ Box(-1, 1, (d,))``, the env fetches
  ``argmax_a w·x(s, a)`` (exact over the whole frontier with ``reducer="full"``);
* :class:`TopicSampler` — a topic per episode from a list (train on some topics, evaluate on others);
* :class:`SeedSearch` — each episode's seeds expanded by SeedFinder's search rounds;
* :func:`make_env` / :func:`make_vec_env` — the one module that builds WikiCrawl envs
  (:func:`gym_crawl.agents.make_env_for` builds the env of an agent through it);
* :func:`make_scoring_env` — ``make_env(DEFAULT_ENV_ID)`` → ``TopicSampler`` → one of the scoring wrappers::

      from gym_crawl.wrappers import make_scoring_env
      env = make_scoring_env("discrete", corpus="synthetic", topics=["geology", "cancer"],
                             max_candidates=32, reducer="topk")
      from sb3_contrib import MaskablePPO
      MaskablePPO("MultiInputPolicy", env).learn(10_000)
"""
from gym_crawl.wrappers.common import TopicSampler, crawl_env_of
from gym_crawl.wrappers.continuous import LinearScoringWrapper, summarize_candidates
from gym_crawl.wrappers.discrete import DiscreteScoringWrapper, flatten_observation
from gym_crawl.wrappers.factory import env_ids, make_env, make_scoring_env, make_vec_env
from gym_crawl.wrappers.seed_search import SeedSearch

__all__ = ["DiscreteScoringWrapper", "LinearScoringWrapper", "TopicSampler", "make_scoring_env",
           "flatten_observation", "summarize_candidates", "crawl_env_of", "env_ids", "make_env", "make_vec_env",
           "SeedSearch"]
