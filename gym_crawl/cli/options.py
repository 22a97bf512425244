"""Options and argument types several ``gym-crawl`` sub-commands share (argparse only: cheap to import)."""
from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from gym_crawl._console import add_verbosity

__all__ = ["EPILOG", "HelpFormatter", "add_verbosity", "check_writable", "int_at_least", "seconds"]

EPILOG = ("Results go to stdout; progress and diagnostics to stderr. Exit codes: 0 done, 1 the run failed, 2 a usage "
          "error (the message names the argument), 130 interrupted (Ctrl-C).")


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default, except ``None`` (left to the agent or the corpus), an empty one, and where the
    help already says it."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.default in (None, argparse.SUPPRESS, "", []) or action.nargs == 0 or "default" in text or not text:
            return action.help
        return super()._get_help_string(action)


def int_at_least(low: int) -> Callable[[str], int]:
    """An argparse ``type``: an integer >= ``low`` (argparse reports anything else as a usage error)."""
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {text!r}") from None
        if v < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {v}")
        return v
    return parse


def seconds(text: str) -> float:
    """An argparse ``type``: a finite number of seconds >= 0 (``inf``, ``nan`` and negatives are usage errors)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0, got {text!r}") from None
    if not (0 <= v < float("inf")):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds >= 0, got {text!r}")
    return v


def check_writable(path: str, flag: str) -> None:
    """Refuse (``ValueError`` naming ``flag``) an output file that cannot be written, before the run starts:
    a probe file is created and removed in its folder (an existing file must be writable itself)."""
    p = Path(path).expanduser()
    if p.is_dir():
        raise ValueError(f"{flag} {path}: is a folder; give a file name")
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise ValueError(f"{flag} {path}: folder {folder} does not exist")
    if p.exists() and not os.access(p, os.W_OK):
        raise ValueError(f"{flag} {path}: the file is not writable")
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".probe", dir=folder)
    except OSError as e:
        raise ValueError(f"{flag} {path}: cannot write in {folder} ({e.strerror or e})") from None
    os.close(fd)
    os.unlink(probe)
