"""Linear SARSA crawlers (numpy): Han et al. 2018's and the thesis' linear function approximation.

* :mod:`~gym_crawl.agents.linear.lfa` — ``lfa-sync``, ``lfa-async``, ``lfa-moderated`` (Han et al. 2018) and
  ``thesis-lfa`` (Pertejo 2021);
* :mod:`~gym_crawl.agents.linear.pair_index` — Han's set B: frontier pages grouped by distinct feature-row
  pairs, for the synchronous crawler's exact argmax.
"""
