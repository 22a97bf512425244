"""One registry class for everything that is looked up by name: corpora, feature sets, reducers,
rewards and agents.

An entry is either a factory (class or callable) or a lazy ``"module:attribute"`` string that is
imported the first time the name is asked for — so an extension (the Tree-Frontier reducer, the
PyTorch agents) costs nothing until used, and an optional dependency that is missing gives a clear
error naming the entry instead of an ``ImportError`` at ``import gym_crawl``.

Each registry is a module-level instance owned by its layer::

    gym_crawl.corpus.CORPORA           name -> loader(**kwargs) -> Corpus
    gym_crawl.features.FEATURE_SETS    name -> factory(n_categories) -> FeatureSet
    gym_crawl.reducers.REDUCERS        name -> factory() -> Reducer
    gym_crawl.relevance.REWARDS        name -> factory(labelled=...) -> RewardScheme
    gym_crawl.agents.AGENTS            name -> Agent class (gym_crawl.agents.base)

and third-party code adds to them with ``REGISTRY.register(name, factory, description=...)``. This
module is the lowest layer: it imports nothing of the package.
"""
from __future__ import annotations

import difflib
import importlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = ["EXTRA_OF_MODULE", "Registry", "RegistryEntry", "install_command"]

EXTRA_OF_MODULE: dict[str, str] = {
    "torch": "torch", "stable_baselines3": "sb3", "sb3_contrib": "sb3", "ray": "rllib", "pettingzoo": "multi",
    "rliable": "bench", "fastwarc": "web", "resiliparse": "web", "selectolax": "bench-web", "warcio": "web",
    "w3lib": "web", "protego": "web", "urllib3": "web", "tldextract": "web", "dask": "cluster",
}
"""Top-level module → the optional extra of ``pyproject.toml`` that installs it: a lazy entry whose import fails on
one of them says how to install that extra (:func:`install_command`)."""


def install_command(extra: str) -> str:
    """The ``pip`` command that adds the optional ``extra`` to this copy of the package: from the checkout it runs
    from (``pip install -e ".[web]"`` in that folder, else with its path) — a source checkout is how the README
    installs it — or, for a copy installed from an index, ``pip install 'gym-crawl[web]'``."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        with open(os.path.join(root, "pyproject.toml"), encoding="utf-8") as f:
            checkout = 'name = "gym-crawl"' in f.read()
    except OSError:
        checkout = False
    if not checkout:
        return f"pip install 'gym-crawl[{extra}]'"
    here = os.path.realpath(os.getcwd()) == os.path.realpath(root)
    return f'pip install -e "{"." if here else root}[{extra}]"'

T = TypeVar("T")


@dataclass
class RegistryEntry:
    """One registered name: its factory (or lazy ``"module:attribute"`` target) and a one-line
    description for listings (``gym-crawl agents`` and friends)."""

    name: str
    target: Any
    description: str = ""

    @property
    def is_loaded(self) -> bool:
        return not isinstance(self.target, str)


class Registry(Generic[T]):
    """Name → factory table with lazy ``"module:attribute"`` entries, listing and clear errors.

    Args:
        kind: what the entries are, used in error messages (``"reducer"``, ``"agent"``, …).
        alternative: what else the caller accepts besides a registered name (e.g. ``"a Reducer
            instance"``), appended to the unknown-name error.
    """

    def __init__(self, kind: str, alternative: str = ""):
        self.kind = kind
        self.alternative = alternative
        self._entries: dict[str, RegistryEntry] = {}

    # ------------------------------------------------------------ writing
    def register(self, name: str, target: Callable[..., T] | str, description: str = "", *,
                 overwrite: bool = True) -> None:
        """Register ``target`` (a factory, or ``"module:attribute"`` imported on first use) as ``name``."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"{self.kind} name must be a non-empty string, got {name!r}")
        if isinstance(target, str) and target.count(":") != 1:
            raise ValueError(f"{self.kind} {name!r}: a lazy entry must be 'module:attribute', got {target!r}")
        if not isinstance(target, str) and not callable(target):
            raise TypeError(f"{self.kind} {name!r}: expected a callable or 'module:attribute', got "
                            f"{type(target).__name__}")
        if not overwrite and name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        if not description and not isinstance(target, str):
            description = _first_line(target.__doc__)
        self._entries[name] = RegistryEntry(name, target, description)

    def unregister(self, name: str) -> None:
        """Remove ``name`` (a ``KeyError``-free no-op when it is absent)."""
        self._entries.pop(name, None)

    # ------------------------------------------------------------ reading
    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def names(self) -> list[str]:
        """Registered names, sorted (some may need optional dependencies)."""
        return sorted(self._entries)

    def get(self, name: str) -> Callable[..., T]:
        """The factory registered as ``name``, importing a lazy entry once.

        Raises ``ValueError`` naming the kind, the unknown name and every registered name, or — for a
        lazy entry whose module cannot be imported — the entry and the import error.
        """
        try:
            e = self._entries[name]
        except (KeyError, TypeError):
            alt = f" or {self.alternative}" if self.alternative else ""
            close = difflib.get_close_matches(name, self.names(), n=3) if isinstance(name, str) else []
            hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
            raise ValueError(f"unknown {self.kind} {name!r}{hint}; "
                             f"registered: {', '.join(self.names())}{alt}") from None
        if isinstance(e.target, str):
            mod, attr = e.target.split(":")
            try:
                e.target = getattr(importlib.import_module(mod), attr)
            except ImportError as err:
                extra = EXTRA_OF_MODULE.get((err.name or "").split(".")[0])
                if extra is not None:
                    raise ValueError(f"{self.kind} {name!r} needs {err.name!r}, which is not installed here: install "
                                     f"the optional extra, {install_command(extra)}") from None
                raise ValueError(f"{self.kind} {name!r} is registered as {mod}:{attr} but is not available "
                                 f"here ({err})") from None
            except AttributeError as err:
                raise ValueError(f"{self.kind} {name!r} is registered as {mod}:{attr} but is not available "
                                 f"here ({err})") from None
            if not e.description:
                e.description = _first_line(getattr(e.target, "__doc__", None))
        return e.target

    def build(self, name: str, *args: Any, **kwargs: Any) -> T:
        """``get(name)(*args, **kwargs)``."""
        return self.get(name)(*args, **kwargs)

    def describe(self, load: bool = False) -> dict[str, str]:
        """``{name: one-line description}``; ``load=True`` imports lazy entries to read their docstrings
        (entries whose optional dependency is missing say so instead)."""
        out = {}
        for name in self.names():
            e = self._entries[name]
            if load and not e.is_loaded:
                try:
                    self.get(name)
                except ValueError as err:
                    out[name] = e.description or f"(unavailable: {err})"
                    continue
            out[name] = e.description
        return out

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {self.names()})"


def _first_line(doc: str | None) -> str:
    return (doc or "").strip().split("\n", 1)[0].strip()
