"""Options and argument types several ``gym-crawl`` sub-commands share (argparse only: cheap to import)."""
from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gym_crawl._console import HelpFormatter, add_verbosity

__all__ = ["EPILOG", "HelpFormatter", "add_verbosity", "check_writable", "header_value", "int_at_least", "number_in",
           "seconds"]

EPILOG = ("Results go to stdout; progress and diagnostics to stderr. Exit codes: 0 done, 1 the run failed, 2 a usage "
          "error (the message names the argument), 130 interrupted (Ctrl-C).")


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


def number_in(low: float, high: float, *, integer: bool = False, unit: str = "",
              zero: str = "") -> Callable[[str], Any]:
    """An argparse ``type``: a number from ``low`` to ``high`` inclusive (an integer when ``integer``); with
    ``zero`` (what 0 means, e.g. ``"no limit"``), ``0`` is accepted too and returned as ``0``. Anything else —
    ``nan``, ``inf``, ``1e-9`` below the range, ``1e308`` above it, a fraction for an integer — is a usage error
    that states the range."""
    unit_s = f" {unit}" if unit else ""

    def show(x: float) -> str:
        return f"{int(x):,}".replace(",", "_") if float(x).is_integer() and abs(x) >= 10_000 else f"{x:g}"

    what = ("an integer" if integer else "a number") + f" from {show(low)} to {show(high)}{unit_s}" + \
        (f", or 0 ({zero})" if zero else "")

    def parse(text: str) -> Any:
        try:
            v: Any = int(text) if integer else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if zero and v == 0:
            return 0
        if not (low <= v <= high):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text}")
        return v
    return parse


def header_value(text: str) -> str:
    """An argparse ``type``: text sent in an HTTP header (printable ASCII, no control character, no CR/LF)."""
    bad = next((c for c in text if not 0x20 <= ord(c) <= 0x7E), None)
    if bad is not None:
        raise argparse.ArgumentTypeError(f"must be printable ASCII (it is sent in the User-Agent header), got "
                                         f"{bad!r} in {text!r}")
    if not text.strip() or text != text.strip():
        raise argparse.ArgumentTypeError(f"must be non-empty, without space at either end, got {text!r}")
    if len(text) > 512:
        raise argparse.ArgumentTypeError(f"must be at most 512 characters, got {len(text)}")
    return text


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
    a folder, an existing path that is not a regular file (a FIFO would block the run forever), a missing folder,
    a file or folder without write permission (a probe file is created and removed in the folder)."""
    p = Path(path).expanduser()
    if p.is_dir():
        raise ValueError(f"{flag} {path}: is a folder; give a file name")
    if p.exists() and not p.is_file():  # a FIFO, a device, a socket: writing it would block or mean nothing
        raise ValueError(f"{flag} {path}: is not a regular file (a FIFO, device or socket); give a file name")
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
