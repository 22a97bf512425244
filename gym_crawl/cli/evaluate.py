"""``gym-crawl eval``: agents × a task set × seeds, normalized scores on its test topics next to random,
best-first and oracle (its own parser: :func:`gym_crawl.benchmarks.evaluate.main`)."""
from __future__ import annotations

from gym_crawl.benchmarks.evaluate import main as evaluate_main

__all__ = ["run"]


def run(argv: list[str]) -> int:
    """``gym-crawl eval ARGV``."""
    return int(evaluate_main(argv) or 0)
