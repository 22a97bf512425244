"""``gym-crawl train``: a Stable-Baselines3 agent trained and reported (:mod:`gym_crawl.benchmarks.train_report`), or
Ray RLlib with ``--backend rllib`` (:mod:`gym_crawl.agents.rllib.train`; importing it does not load Ray)."""
from __future__ import annotations

from gym_crawl.agents.rllib.train import main as rllib_main
from gym_crawl.agents.rllib.train import requested_backend
from gym_crawl.benchmarks.train_report import main as sb3_main

__all__ = ["run"]


def run(argv: list[str]) -> int:
    """``gym-crawl train ARGV``: the backend ``--backend`` names (default Stable-Baselines3)."""
    if requested_backend(argv) == "rllib":
        return int(rllib_main(argv) or 0)
    return int(sb3_main(argv) or 0)
