"""The command line's output conventions, shared by every ``gym-crawl`` sub-command.

* **Streams.** Results (tables, JSON rows, the paths a command produces) go to stdout; progress and diagnostics
  go to stderr through the ``gym_crawl`` logger, prefixed ``gym-crawl:``.
* **Progress.** :class:`Progress` is one labelled bar: a tqdm bar on stderr when stderr is a terminal or in a
  Jupyter kernel, otherwise (a log file, CI) one log line every few seconds.
* **Warnings.** A Python warning raised while a command runs is one line, ``gym-crawl: warning: MESSAGE``
  (:func:`show_warning`), not Python's two lines with a source path and the echoed source line; ``-v`` adds where
  it came from.
* **Errors.** One prefix, ``gym-crawl: error: MESSAGE`` (:func:`error_line`), also for argument errors
  (:class:`ArgumentParser`).
* **Exit codes.** :data:`EXIT_OK` 0, :data:`EXIT_FAILURE` 1 (the run failed: an I/O or network error, a bug's
  traceback), :data:`EXIT_USAGE` 2 (the command line or a value or file it names is wrong),
  :data:`EXIT_INTERRUPTED` 130 (Ctrl-C: SIGINT, 128 + 2, as shells report it), :data:`EXIT_TERMINATED` 143
  (SIGTERM, raised in the program as :class:`Terminated`, a ``KeyboardInterrupt``, so it unwinds as Ctrl-C does).

Lowest layer of the package: imports nothing from ``gym_crawl``.
"""
from __future__ import annotations

import argparse
import logging
import sys
import time
import warnings
from typing import Any, NoReturn

__all__ = ["EXIT_FAILURE", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_TERMINATED", "EXIT_USAGE", "ArgumentParser",
           "HelpFormatter", "Progress", "Terminated", "add_verbosity", "error_line", "setup_logging", "show_warning"]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the ``gym-crawl`` program is (as SIGINT raises ``KeyboardInterrupt``), so it unwinds
    cleanly: files closed, exit :data:`EXIT_TERMINATED`."""

log = logging.getLogger("gym_crawl")


def error_line(message: object) -> str:
    """``gym-crawl: error: <message>``: how every command reports an error on stderr."""
    return f"gym-crawl: error: {message}"


def setup_logging(verbose: int = 0, quiet: int = 0) -> None:
    """Send the ``gym_crawl`` logger to stderr at INFO (``-v``: DEBUG, ``-q``: WARNING, ``-qq``: ERROR), each line
    prefixed ``gym-crawl:``. Calling it again replaces the handler it added before."""
    level = min(logging.CRITICAL, max(logging.DEBUG, logging.INFO - 10 * verbose + 10 * quiet))
    for h in [h for h in log.handlers if getattr(h, "_gym_crawl_cli", False)]:
        log.removeHandler(h)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("gym-crawl: %(message)s"))
    handler._gym_crawl_cli = True  # type: ignore[attr-defined]
    log.addHandler(handler)
    log.setLevel(level)
    log.propagate = False
    warnings.showwarning = show_warning


def show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                 file: Any = None, line: str | None = None) -> None:
    """A Python warning as the command line shows it (``warnings.showwarning`` once :func:`setup_logging` ran):
    one WARNING log line ``gym-crawl: warning: MESSAGE`` — the package's own warnings and plain ``UserWarning``s
    as they are, another library's ``DeprecationWarning`` & co. with their category's name — and, at ``-v``, a
    debug line naming the category and the source line that raised it."""
    text = " ".join(str(message).split())
    plain = category is UserWarning or category.__module__.split(".")[0] == "gym_crawl"
    log.warning("warning: %s", text if plain else f"{category.__name__}: {text}")
    log.debug("(%s at %s:%d)", category.__name__, filename, lineno)


def add_verbosity(p: argparse.ArgumentParser, default: Any) -> None:
    """``-v`` / ``-q`` (counted) on ``p``; ``default``: 0 on the top parser and on a sub-command's own parser,
    ``SUPPRESS`` after a sub-command of the top parser."""
    p.add_argument("-v", "--verbose", action="count", default=default, help="more diagnostics on stderr (-vv: more)")
    p.add_argument("-q", "--quiet", action="count", default=default,
                   help="only warnings and errors on stderr (-qq: errors); results still go to stdout")


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default, except ``None`` (left to the agent or the corpus), an empty one, and where the
    help already says it (every ``gym-crawl`` sub-command's help, also those that build their own parser)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.default in (None, argparse.SUPPRESS, "", [], {}) or action.nargs == 0 or "default" in text \
                or not text:
            return action.help
        return super()._get_help_string(action)


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose argument errors read ``gym-crawl: error: ...`` (after the usage line)
    and exit with :data:`EXIT_USAGE`, as every other error of the command does; sub-parsers inherit it.
    :attr:`option_actions` maps each option string added on the parser itself (not in a group) to its action, so a
    command that extends another's parser can amend an option's help."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.option_actions: dict[str, argparse.Action] = {}
        super().__init__(*args, **kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        self.option_actions.update(dict.fromkeys(action.option_strings, action))
        return action

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, error_line(message) + "\n")


class Progress:
    """A labelled progress bar of ``total`` units on stderr.

    A tqdm bar (``tqdm.auto``) when stderr is a terminal or in a Jupyter kernel; otherwise an INFO log line
    ``<desc>: n/total <unit>, s`` every ``every`` seconds (none when logging is above INFO, e.g. ``-q``).

    :param total: units of work (steps, runs, env steps).
    :param desc: the label, e.g. ``"best-first ep 1/1"`` or ``"train seed 0"``.
    :param unit: what one unit is, for the log line and the bar.
    :param every: seconds between log lines when there is no bar.
    :param enabled: ``False``: show nothing (a caller's ``progress=False``).
    :param announce: without a bar, also a first log line ``<desc>: 0/total <unit>`` at once (a phase that may
        take long before its first unit is done; short, repeated ones, such as one crawl episode, stay quiet).
    """

    def __init__(self, total: int, desc: str, every: float = 5.0, unit: str = "steps", enabled: bool = True,
                 announce: bool = False):
        self.total, self.desc, self.unit, self.n = int(total), desc, unit, 0
        self.every = every if enabled else float("inf")
        self._t0 = self._last = time.monotonic()
        self.bar: Any = None
        if enabled and log.isEnabledFor(logging.INFO) and (sys.stderr.isatty() or "ipykernel" in sys.modules):
            from tqdm.auto import tqdm

            self.bar = tqdm(total=self.total, desc=desc, unit=" " + unit, leave=False, file=sys.stderr)
        elif enabled and announce:
            log.info("%s: 0/%d %s", desc, self.total, unit)

    def update(self, k: int = 1) -> None:
        """``k`` more units done."""
        self.n += k
        if self.bar is not None:
            self.bar.update(k)
            return
        now = time.monotonic()
        if now - self._last >= self.every:
            self._last = now
            log.info("%s: %d/%d %s, %.0f s", self.desc, self.n, self.total, self.unit, now - self._t0)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
