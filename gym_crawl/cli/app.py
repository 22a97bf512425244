"""The ``gym-crawl`` parser and dispatch: which sub-command runs, with which verbosity, and how it ends.

Each sub-command is a module of this package with ``add_arguments(parser)`` and ``run(args)`` (``eval`` and
``train`` parse their own arguments: ``run(argv)``), listed in :data:`COMMANDS` with its one-line help. Only
the module of the sub-command that runs is imported (``gym-crawl --help`` imports none), so each imports what
it needs at its top.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
from collections.abc import Collection, Sequence
from types import ModuleType
from typing import Any, NamedTuple

from gym_crawl import __version__
from gym_crawl._console import EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED, ArgumentParser, Terminated, setup_logging
from gym_crawl.cli.errors import run_reporting
from gym_crawl.cli.options import EPILOG, HelpFormatter, add_verbosity

__all__ = ["COMMANDS", "Command", "build_parser", "command_module", "install_sigterm", "main"]


class Command(NamedTuple):
    """A sub-command: the module that holds it, its one-line help, and whether it parses its own arguments."""

    module: str
    help: str
    own_parser: bool = False


#: sub-command → :class:`Command`, in the order ``gym-crawl --help`` lists them
COMMANDS: dict[str, Command] = {
    "crawl": Command("gym_crawl.cli.crawl", "run one or more agents and report relevant pages found"),
    "download": Command("gym_crawl.cli.download", "download a real corpus into the cache ($GYM_CRAWL_DATA)"),
    "corpus": Command("gym_crawl.cli.corpus", "inspect or compile corpora"),
    "agents": Command("gym_crawl.cli.agents", "list registered agents with one-line descriptions"),
    "bench": Command("gym_crawl.cli.bench", "run a benchmark of benchmarks/ (e.g. env, han2018, thesis2021, tres, "
                                            "sb3)"),
    "serve": Command("gym_crawl.cli.serve", "serve a corpus, folders of HTML or the misbehaving demo site as hosts on "
                                            "loopback (127.0.0.0/8) until Ctrl-C"),
    "eval": Command("gym_crawl.cli.evaluate", "agents x a task set x seeds: normalized scores on its test topics next "
                                              "to random, best-first and oracle (see `gym-crawl eval --help`)", True),
    "train": Command("gym_crawl.cli.train", "train a Stable-Baselines3 agent, or Ray RLlib with --backend rllib "
                                            "(see `gym-crawl train --help`)", True),
}

_VERBOSITY = ("-v", "-vv", "--verbose", "-q", "-qq", "--quiet")


def command_module(name: str) -> ModuleType:
    """The module of sub-command ``name`` (imported on first use)."""
    return importlib.import_module(COMMANDS[name].module)


def build_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The ``gym-crawl`` parser: every sub-command listed with its help; the arguments of those in ``commands``
    (default: all of them, which imports every sub-command's module)."""
    ap = ArgumentParser(prog="gym-crawl", description="Focused web crawling as a Gymnasium environment.",
                        formatter_class=HelpFormatter, epilog=EPILOG)
    ap.add_argument("--version", action="version", version=f"gym-crawl {__version__}")
    add_verbosity(ap, 0)
    sub = ap.add_subparsers(dest="cmd", required=True)
    common = ArgumentParser(add_help=False)
    add_verbosity(common, argparse.SUPPRESS)  # also accepted after the sub-command
    fmt: dict[str, Any] = {"formatter_class": HelpFormatter, "parents": [common]}
    for name, cmd in COMMANDS.items():
        wanted = commands is None or name in commands
        if cmd.own_parser:
            sub.add_parser(name, help=cmd.help, add_help=False).add_argument("args", nargs=argparse.REMAINDER)
        elif name == "bench":
            bench = command_module(name) if wanted else None
            listing = "".join(f"\n  {n:<20} {d}" for n, d in bench.benchmark_names().items()) if bench else ""
            p = sub.add_parser(name, help=cmd.help, formatter_class=argparse.RawDescriptionHelpFormatter,
                               parents=[common], description="benchmarks (`gym-crawl bench NAME --help` for each "
                                                             "one's options):" + listing)
            if bench:
                bench.add_arguments(p)
        else:
            p = sub.add_parser(name, help=cmd.help, **fmt)
            if wanted:
                command_module(name).add_arguments(p)
    return ap


def _dispatch(argv: list[str]) -> int:
    lead = 0
    while lead < len(argv) and argv[lead] in _VERBOSITY:
        lead += 1
    name = argv[lead] if lead < len(argv) else None
    if name in COMMANDS and COMMANDS[name].own_parser:  # their own parsers (see `gym-crawl train --help`)
        # -v / -q before or after the name: logging is set up before the command parses (its parser lists them)
        pre = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
        add_verbosity(pre, 0)
        flags = pre.parse_known_args(argv[:lead] + argv[lead + 1:])[0]
        setup_logging(flags.verbose, flags.quiet)
        return run_reporting(command_module(name).run, argv[lead + 1:])
    args = build_parser([name] if name in COMMANDS else []).parse_args(argv)
    setup_logging(args.verbose, args.quiet)
    return run_reporting(command_module(args.cmd).run, args)


def _discard_stdout() -> None:
    """Point stdout at the null device, so the interpreter's last flush does not fail on a closed pipe again."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)


_SIGTERM_OWNER: list[int] = []
"""The pid of the process that installed :func:`_terminated` (the ``gym-crawl`` program itself)."""


def _terminated(signum: int, frame: Any) -> None:
    if _SIGTERM_OWNER and os.getpid() != _SIGTERM_OWNER[0]:
        # a forked worker (a benchmark's multiprocessing pool ends its workers with SIGTERM): end as it would without
        # the program's handler, silently, instead of unwinding a worker loop into a traceback
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        return
    raise Terminated


_BLOCKED_FOR_FORK: list[bool] = []
"""Set while a fork of the program is under way with SIGTERM blocked (inherited by the child)."""


def _fork_blocks_sigterm() -> None:
    if signal.getsignal(signal.SIGTERM) is _terminated:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        _BLOCKED_FOR_FORK[:] = [True]


def _parent_after_fork() -> None:
    if _BLOCKED_FOR_FORK:
        _BLOCKED_FOR_FORK.clear()
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def _child_after_fork() -> None:
    # The child starts with SIGTERM blocked: give it the default action first, then let a SIGTERM that
    # arrived meanwhile through, so it ends the child instead of being dropped.
    if _BLOCKED_FOR_FORK:
        _BLOCKED_FOR_FORK.clear()
        if signal.getsignal(signal.SIGTERM) is _terminated:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


_FORK_HOOKS: list[bool] = []


def install_sigterm() -> None:
    """SIGTERM ends this process as Ctrl-C does (:class:`~gym_crawl._console.Terminated`: files closed, exit 143);
    processes forked from it later end on SIGTERM as by default.

    SIGTERM is blocked across each ``fork`` and the child takes the default action before it is unblocked:
    CPython drops a signal its handler caught between ``fork`` and the child's re-initialisation, so a pool
    worker terminated while still starting would otherwise wait for work forever (and its pool's ``join``
    with it)."""
    _SIGTERM_OWNER[:] = [os.getpid()]
    signal.signal(signal.SIGTERM, _terminated)
    if not _FORK_HOOKS:
        os.register_at_fork(before=_fork_blocks_sigterm, after_in_parent=_parent_after_fork,
                            after_in_child=_child_after_fork)
        _FORK_HOOKS.append(True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``gym-crawl`` with ``argv`` (default: ``sys.argv[1:]``) and return its exit code: 0 done, 1 the run
    failed, 2 a usage error, 130 interrupted by Ctrl-C. A reader that closes the output early (``| head``) ends
    the command quietly with 0. Run as the program (``argv`` not given), a command stopped by SIGINT or SIGTERM
    exits at once once its output is flushed — its files are written and closed by then; the interpreter's
    teardown (a second or two of garbage collection and library exit hooks on a busy machine) is skipped."""
    if argv is None:  # the program: SIGTERM ends it as Ctrl-C does (files closed, exit 143), not outright
        with contextlib.suppress(ValueError):
            install_sigterm()
    try:
        code = _dispatch(list(sys.argv[1:] if argv is None else argv))
    except Terminated:
        print("gym-crawl: terminated", file=sys.stderr)
        code = EXIT_TERMINATED
    except KeyboardInterrupt:
        print("gym-crawl: interrupted", file=sys.stderr)
        code = EXIT_INTERRUPTED
    except BrokenPipeError:
        _discard_stdout()
        return EXIT_OK
    if argv is None and code in (EXIT_INTERRUPTED, EXIT_TERMINATED):
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)
    return code
