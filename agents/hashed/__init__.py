"""Learners over hashed link features (numpy): the online link classifier and the crawlers built on it.

* :mod:`~gym_crawl.agents.hashed.online_classifier` — the ACHE-style online link classifier
  (``online-classifier``), the strong non-RL comparator;
* :mod:`~gym_crawl.agents.hashed.hashed_q` — deep-deep-style linear Q-learning over the same hashed rows
  (``hashed-q``);
* :mod:`~gym_crawl.agents.hashed.mixture` — best-first's or the classifier's top page, chosen by a bandit
  (``best-first-mix``);
* :mod:`~gym_crawl.agents.hashed.seedfinder` — SeedFinder's seed expansion, then the classifier's crawl
  (``seedfinder``).
"""
