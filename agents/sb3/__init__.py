"""Stable-Baselines3 (extra ``sb3``): train stock SB3 agents on the crawl MDP and run them as agents.

* :mod:`~gym_crawl.agents.sb3.train` — ``gym-crawl train`` (DQN, PPO, A2C, MaskablePPO, SAC, TD3);
* :mod:`~gym_crawl.agents.sb3.policies` — candidate-scoring policies: one shared network scores every
  candidate row;
* :mod:`~gym_crawl.agents.sb3.agent` — a trained SB3 policy through the Agent protocol (``--agent sb3:<path>``),
  loaded without unpickling.

Importing this package imports none of them (nor PyTorch or SB3).
"""
