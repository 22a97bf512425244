"""Refusing a configuration that cannot fit in memory, with its estimate, before allocating it.

Lowest layer of the package: imports nothing from ``gym_crawl``.
"""
from __future__ import annotations

import os

__all__ = ["check_fits", "physical_memory"]


def physical_memory() -> int | None:
    """Bytes of physical memory of this machine (``None`` where the OS does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - platform without sysconf
        return None


def _gb(n: float) -> str:
    return f"{n / 1e9:,.1f} GB" if n >= 1e8 else f"{n / 1e6:,.0f} MB"


def check_fits(what: str, nbytes: float, how: str = "") -> None:
    """Raise ``ValueError`` naming ``what`` (the arguments at fault) when ``nbytes`` — an estimate of the memory
    it would allocate — exceeds this machine's physical memory; ``how``: how the estimate is made."""
    total = physical_memory()
    if total is not None and nbytes > total:
        raise ValueError(f"{what} would need about {_gb(nbytes)} of memory{f' ({how})' if how else ''}; this "
                         f"machine has {_gb(total)}: choose a smaller size")
