"""Ray RLlib (extra ``rllib``): distributed training on the crawl MDP and the trained policy as an agent.

* :mod:`~gym_crawl.agents.rllib.train` — ``gym-crawl train --backend rllib`` (``docs/rllib.md``);
* :mod:`~gym_crawl.agents.rllib.model` — the candidate-scoring RLModule with action masking;
* :mod:`~gym_crawl.agents.rllib.agent` — a trained module through the Agent protocol (``--agent rllib:<path>``).

Importing this package imports none of them (nor Ray or PyTorch).
"""
