"""How a ``gym-crawl`` sub-command's errors are reported: one prefix, the flag a message means, the exit code."""
from __future__ import annotations

import ast
import logging
import re
import shlex
import sys
from collections.abc import Callable
from typing import Any

from gym_crawl._console import EXIT_FAILURE, EXIT_USAGE, error_line

__all__ = ["FLAGS", "USAGE_ERRORS", "cli_words", "error_message", "run_reporting"]

log = logging.getLogger("gym_crawl")

#: errors that mean the command line, or a value or file it names, is wrong: exit code 2
USAGE_ERRORS = (ValueError, KeyError, FileNotFoundError, FileExistsError, NotADirectoryError, IsADirectoryError)

#: Python keywords that CLI users set with a flag: error messages from the library speak the flag instead
FLAGS = {"max_candidates": "--k", "max_episode_steps": "--steps", "domain_cap": "--domain-cap", "seeds": "--seed-pages",
         "topic": "--topic", "features": "--features", "reducer": "--reducer", "reward": "--reward",
         "corpus": "--corpus", "append": "--resume", "overwrite": "--overwrite"}
_KEYWORD = re.compile(r"\b(" + "|".join(FLAGS) + r")=(\[[^\]]*\]|'[^']*'|\"[^\"]*\"|[^\s,;)]+)")


def error_message(e: BaseException) -> str:
    """The message of ``e`` (a ``KeyError``'s own text, not its quoted repr)."""
    return str(e.args[0] if isinstance(e, KeyError) and e.args else e)


def cli_words(msg: str) -> str:
    """``msg`` with the Python keywords it advises (``seeds=['A', 'B']``, ``overwrite=True``, ``max_candidates``)
    written as the flags that set them (``--seed-pages A B``, ``--overwrite``, ``--k``); a message that already names
    both (``CLI: ...``) is left as it is."""
    if "CLI:" in msg:
        return msg

    def flag(m: re.Match[str]) -> str:
        name, raw = FLAGS[m.group(1)], m.group(2)
        if raw == "True":
            return name
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = raw
        if value is Ellipsis:  # "pass topic=..." advises the keyword, not a value
            return f"{name} {name.lstrip('-').upper().replace('-', '_')}"
        if isinstance(value, (list, tuple)) and name == "--seed-pages":  # one page per argument
            return f"{name} " + " ".join("TITLE" if v is Ellipsis else shlex.quote(str(v)) for v in value)
        if isinstance(value, (list, tuple)):
            value = ",".join("TITLE" if v is Ellipsis else str(v) for v in value)
        elif value is Ellipsis:  # ``topic=...``: a placeholder, as the flag's metavar
            return f"{name} {name.lstrip('-').replace('-', '_').upper()}"
        return f"{name} {shlex.quote(str(value))}"

    out = _KEYWORD.sub(flag, msg)
    if "max_candidates" in out:  # the env's keyword for K, without a value
        out = out.replace("max_candidates", "K (--k)")
    return out


def run_reporting(command: Callable[[Any], int | None], arg: Any) -> int:
    """``command(arg)`` with its errors reported in the one style: a usage error (a wrong value or file, or an
    optional extra that is not installed: the message says the ``pip`` command) exits 2, a failed run (an I/O or
    network error) 1; ``-v`` adds the traceback."""
    try:
        return int(command(arg) or 0)
    except USAGE_ERRORS as e:
        log.debug("traceback", exc_info=True)
        print(error_line(cli_words(error_message(e))), file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        raise
    except ImportError as e:  # an optional extra is missing: one line with the pip command, as for an agent's extra
        if "pip install" not in str(e):
            raise
        log.debug("traceback", exc_info=True)
        print(error_line(error_message(e)), file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:  # the system refused: a full disk, a read-only folder, a WARC another crawl writes
        log.debug("traceback", exc_info=True)
        print(error_line(_os_error(e)), file=sys.stderr)
        return EXIT_FAILURE


def _os_error(e: OSError) -> str:
    """One line naming the file and the system's reason."""
    if e.strerror and e.filename:
        return f"{e.filename}: {e.strerror}"
    return " ".join(str(e).split()) or type(e).__name__
