"""``gym-crawl agents``: the registered agents (installed plug-ins included), one line each."""
from __future__ import annotations

import argparse

from gym_crawl._console import EXIT_OK
from gym_crawl.agents import AGENTS, agent_names

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``gym-crawl agents`` takes no argument of its own."""


def run(args: argparse.Namespace) -> int:
    """Print every registered agent's name and one-line description."""
    agent_names()  # installed plug-ins' entry points included
    desc = AGENTS.describe()
    w = max(map(len, desc))
    print("\n".join(f"{n.ljust(w)}  {d}" for n, d in desc.items()))
    return EXIT_OK
