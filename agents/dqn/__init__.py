"""The DQN crawlers (PyTorch, extra ``sb3``): TRES's Double DQN and the thesis' DQN, on one shared core.

* :mod:`~gym_crawl.agents.dqn.tres` — TRES's Double-DQN crawler over state-action rows (``tres``,
  ``tres-async``; Kontogiannis et al.), with :mod:`~gym_crawl.agents.dqn.config` (:class:`DDQNConfig`),
  :mod:`~gym_crawl.agents.dqn.network` (the Q-network) and :mod:`~gym_crawl.agents.dqn.buffers` (the replay
  buffer with ragged bootstrap sets, the max segment tree);
* :mod:`~gym_crawl.agents.dqn.thesis` — the thesis' DQN crawler with one Q output per page (``thesis-dqn``;
  Pertejo 2021).

Importing this package imports neither (nor PyTorch); the agent registry names them lazily.
"""
