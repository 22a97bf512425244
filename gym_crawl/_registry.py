"""Name → factory tables whose entries may be lazy ``"module:attribute"`` strings.

Lowest layer: used by the feature-set and reducer registries so that an extension
(Tree-Frontier, the thesis' features) is imported only when asked for by name.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable

__all__ = ["resolve"]


def resolve(table: dict[str, Any], name: str, kind: str, alternative: str) -> Callable[..., Any]:
    """The factory registered as ``name`` in ``table`` (importing a lazy entry once, in place).

    Raises ``ValueError`` naming the unknown ``kind`` and listing the registered names.
    """
    if name not in table:
        raise ValueError(f"unknown {kind} {name!r}; expected one of {sorted(table)} or {alternative}")
    f = table[name]
    if isinstance(f, str):
        mod, attr = f.split(":")
        f = table[name] = getattr(importlib.import_module(mod), attr)
    return f
