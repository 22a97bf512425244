"""What the benchmarks that measure in a fresh process share: the child's memory reading and the run that returns
the JSON line it prints.

A memory benchmark runs each measurement as ``python -c CHILD ARGS…`` so that what one measurement allocated does
not count in the next; ``CHILD`` starts with :data:`MEM_SOURCE` to read its own memory, and the parent calls
:func:`run_json_child`.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["MEM_SOURCE", "run_json_child"]

#: Python source defining ``mem()`` in a child script: the process' ``VmRSS``, ``RssAnon`` and ``RssFile`` from
#: ``/proc/self/status``, in MB rounded to 0.1
MEM_SOURCE = r"""
def mem():
    out = {}
    for line in open("/proc/self/status"):
        k, _, v = line.partition(":")
        if k in ("VmRSS", "RssAnon", "RssFile"):
            out[k] = round(int(v.split()[0]) / 1024, 1)
    return out
"""


def run_json_child(code: str, args: Sequence[str], what: str, env: Mapping[str, str] | None = None,
                   timeout: float = 14400) -> dict[str, Any]:
    """Run ``python -c code *args`` in a fresh process (working folder: the temporary folder; its stderr, e.g. a
    progress bar, passes through) and return the JSON object on the last line it prints.

    :param what: what the process does, for the error (``RuntimeError: <what> failed (exit N)``).
    :param env: the process' environment (``None``: this one's).
    :param timeout: seconds before ``subprocess.TimeoutExpired``.
    """
    p = subprocess.run([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True,
                       cwd=tempfile.gettempdir(), timeout=timeout, env=None if env is None else dict(env))
    if p.returncode != 0:
        raise RuntimeError(f"{what} failed (exit {p.returncode})")
    return dict(json.loads(p.stdout.strip().splitlines()[-1]))
