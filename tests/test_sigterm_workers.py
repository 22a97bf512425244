"""The program's SIGTERM handler (exit 143 as Ctrl-C's 130) belongs to the program: a worker forked from it — a
benchmark's multiprocessing pool, which ends its workers with SIGTERM — ends silently, as without the handler."""
from __future__ import annotations

import multiprocessing as mp
import os
import signal

import pytest

from gym_crawl._console import Terminated
from gym_crawl.cli import app


def _pid(_: int) -> int:
    return os.getpid()


def test_pool_workers_forked_from_the_program_end_on_sigterm_without_a_traceback(capfd):
    old = signal.getsignal(signal.SIGTERM)
    try:
        app.install_sigterm()
        pool = mp.get_context("fork").Pool(2)
        pids = pool.map(_pid, range(4))
        pool.terminate()  # SIGTERM to every worker
        pool.join()
        err = capfd.readouterr().err
        assert pids and "Terminated" not in err and "Traceback" not in err
        with pytest.raises(Terminated):  # the program itself still unwinds on SIGTERM
            os.kill(os.getpid(), signal.SIGTERM)
    finally:
        signal.signal(signal.SIGTERM, old)
