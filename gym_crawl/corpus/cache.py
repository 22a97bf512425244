"""Where downloaded and compiled corpora live.

``GYM_CRAWL_DATA`` overrides the default ``~/.cache/gym_crawl``.
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["data_dir"]


def data_dir() -> Path:
    """The cache directory (created on first use)."""
    d = Path(os.environ.get("GYM_CRAWL_DATA") or Path.home() / ".cache" / "gym_crawl")
    d.mkdir(parents=True, exist_ok=True)
    return d
