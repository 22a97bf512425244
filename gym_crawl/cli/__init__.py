"""The ``gym-crawl`` command (also ``python -m gym_crawl``).

Sub-commands, one module each: ``crawl`` (run agents, print a summary table, write a PNG curve; ``--live URL ...``:
one agent as a polite crawler of real sites, recorded to WARC), ``eval`` (agents × a task set × seeds →
normalized scores on its test topics next to random, best-first and oracle), ``train`` (Stable-Baselines3 or
RLlib training), ``download`` (fetch a real corpus into the cache), ``corpus info`` / ``corpus compile``,
``agents`` (list), ``bench NAME`` (a benchmark of ``benchmarks/``) and ``serve`` (a corpus, folders of HTML or the
misbehaving demo site as hosts on loopback); :mod:`gym_crawl.cli.app` parses and dispatches.

Every command builds the default task's env (:data:`gym_crawl.envs.DEFAULT_ENV_ID`) unless told otherwise.

This package is the application layer, above every other: a sub-command's module imports what it needs at its
top, and only the module of the sub-command that runs is imported, so ``import gym_crawl`` and ``gym-crawl
--help`` pull in none of them.

Output (:mod:`gym_crawl._console`): results (tables, JSON rows, the paths ``download`` and ``corpus compile``
produce) go to stdout; progress (one labelled bar) and diagnostics (such as where ``--plot`` wrote its curve) go
to stderr through the ``gym_crawl`` logger — ``-v`` adds debug lines, ``-q`` keeps only warnings and errors
(``-qq``: errors). Errors read ``gym-crawl: error: ...`` (:mod:`gym_crawl.cli.errors`); exit codes: 0 done, 1 the
run failed, 2 a usage error, 130 interrupted (Ctrl-C). A reader that closes the output early (``| head``) ends the
command quietly.
"""
from __future__ import annotations

from gym_crawl.cli.app import COMMANDS, build_parser, main

__all__ = ["COMMANDS", "build_parser", "main"]
