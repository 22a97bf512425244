"""Deprecated import paths of modules that moved: one listed table, resolved when an old path is imported.

:data:`MOVED` maps each old dotted module path to the module that now holds its code. Importing an old
path — ``import gym_crawl.corpus.warc``, ``from gym_crawl.corpus.warc import load_warc`` or
``from gym_crawl.corpus import warc`` — emits a :class:`DeprecationWarning` naming the new path (attributed
to the importing line) and yields the new module itself: the same object, so classes, ``isinstance``
checks and registries are shared and nothing is imported twice. Nothing is imported until an old path is
asked for, so the table draws no arrow in the import graph; ``tests/test_architecture.py`` checks every
entry (its target exists, the old file is gone, the alias warns and returns the same module, and no code
of the repository uses it). ``CHANGELOG.md`` lists the moves; the aliases go in a later release.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

__all__ = ["MOVED", "install"]

MOVED: dict[str, str] = {
    # the page map serves the crawl state and the relevance layer's keyed score tables
    "gym_crawl.crawl.pagemap": "gym_crawl.pagemap",
    # the web: everything that speaks URL, HTTP, HTML or WARC
    "gym_crawl.corpus.urls": "gym_crawl.web.urls",
    "gym_crawl.corpus.html_extract": "gym_crawl.web.html_extract",
    "gym_crawl.corpus.html_folder": "gym_crawl.web.html_folder",
    "gym_crawl.corpus.warc": "gym_crawl.web.warc",
    "gym_crawl.corpus.warc_build": "gym_crawl.web.warc_build",
    "gym_crawl.corpus.live": "gym_crawl.web",
    "gym_crawl.corpus.live.warc_io": "gym_crawl.web.warc_io",
    "gym_crawl.corpus.live.policy": "gym_crawl.web.policy",
    "gym_crawl.corpus.live.fetcher": "gym_crawl.web.fetcher",
    "gym_crawl.corpus.live.result": "gym_crawl.web.result",
    "gym_crawl.corpus.live.web": "gym_crawl.web.live",
    "gym_crawl.corpus.live.serve": "gym_crawl.web.serve.server",
    "gym_crawl.corpus.live.site": "gym_crawl.web.serve.site",
    "gym_crawl.corpus.live.misbehave": "gym_crawl.web.serve.misbehave",
    # the generated webs
    "gym_crawl.corpus.synthetic": "gym_crawl.webgen.synthetic",
    "gym_crawl.corpus.news_site": "gym_crawl.webgen.news_site",
    "gym_crawl.corpus.changing": "gym_crawl.webgen.changing",
    "gym_crawl.corpus.examples": "gym_crawl.webgen.examples",
    # agents by family
    "gym_crawl.agents.ddqn": "gym_crawl.agents.dqn.tres",
    "gym_crawl.agents.ddqn_buffers": "gym_crawl.agents.dqn.buffers",
    "gym_crawl.agents.ddqn_config": "gym_crawl.agents.dqn.config",
    "gym_crawl.agents.ddqn_network": "gym_crawl.agents.dqn.network",
    "gym_crawl.agents.thesis_dqn": "gym_crawl.agents.dqn.thesis",
    "gym_crawl.agents.sb3_agent": "gym_crawl.agents.sb3.agent",
    "gym_crawl.agents.sb3_policies": "gym_crawl.agents.sb3.policies",
    "gym_crawl.agents.sb3_train": "gym_crawl.agents.sb3.train",
    "gym_crawl.agents.rllib_agent": "gym_crawl.agents.rllib.agent",
    "gym_crawl.agents.rllib_model": "gym_crawl.agents.rllib.model",
    "gym_crawl.agents.rllib_train": "gym_crawl.agents.rllib.train",
    "gym_crawl.agents.lfa": "gym_crawl.agents.linear.lfa",
    "gym_crawl.agents.pair_index": "gym_crawl.agents.linear.pair_index",
    "gym_crawl.agents.online_classifier": "gym_crawl.agents.hashed.online_classifier",
    "gym_crawl.agents.hashed_q": "gym_crawl.agents.hashed.hashed_q",
    "gym_crawl.agents.mixture": "gym_crawl.agents.hashed.mixture",
    "gym_crawl.agents.seedfinder": "gym_crawl.agents.hashed.seedfinder",
    # the feature sets' compiled rows and the batched step, out of the crawl layer
    "gym_crawl.crawl.feature_kernels": "gym_crawl.features.kernels",
    "gym_crawl.crawl.batch_kernels": "gym_crawl.envs.batch_kernels",
}
"""Old dotted module path → the dotted path of the module that holds it now."""

_IMPORT_MACHINERY = ("<frozen importlib", importlib.__file__ or "<importlib>", __file__)


def _warn(old: str, new: str) -> None:
    """Warn that ``old`` moved to ``new``, attributed to the first frame outside the import machinery (the
    line that imported the old path), so Python's default filters show it to that code's author."""
    frame = sys._getframe(1)
    level = 2
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_IMPORT_MACHINERY):
        name = frame.f_code.co_filename
        if not ("importlib" in name and "_bootstrap" in name):  # warnings skips those frames itself
            level += 1
        frame = frame.f_back
    warnings.warn(f"{old} is deprecated: the module moved to {new}; import {new} instead",
                  DeprecationWarning, stacklevel=level)


class _AliasLoader(importlib.abc.Loader):
    """Loads an old path as the module that moved: imports ``new`` and hands that module object back."""

    def __init__(self, new: str):
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        _warn(spec.name, self.new)
        return importlib.import_module(self.new)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module was executed under its new name."""


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Finds the old paths of :data:`MOVED` (and nothing else) ahead of the regular finders."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(new))


def install() -> None:
    """Put the finder of the old paths first on ``sys.meta_path`` (once per process)."""
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())
