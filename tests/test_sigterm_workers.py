"""The program's SIGTERM handler (exit 143 as Ctrl-C's 130) belongs to the program: a worker forked from it — a
benchmark's multiprocessing pool, which ends its workers with SIGTERM — ends silently, as without the handler."""
from __future__ import annotations

import multiprocessing as mp
import os
import signal
import subprocess
import sys

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


_RACE = """
import multiprocessing as mp
from gym_crawl.cli import app
app.install_sigterm()
for _ in range(40):  # terminated at once: workers get SIGTERM while they are still starting
    pool = mp.get_context("fork").Pool(2)
    pool.terminate()
    pool.join()
print("joined")
"""


def test_a_worker_terminated_while_it_starts_still_ends():
    # CPython drops a signal its handler caught between fork and the child's re-initialisation; the program
    # blocks SIGTERM across fork so such a worker ends instead of waiting for work forever (and join with it)
    out = subprocess.run([sys.executable, "-c", _RACE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "joined", out.stderr[-2000:]


def test_a_child_forked_from_the_program_has_sigterm_default_and_unblocked():
    old = signal.getsignal(signal.SIGTERM)
    try:
        app.install_sigterm()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            ok = (signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
                  and signal.SIGTERM not in signal.pthread_sigmask(signal.SIG_BLOCK, []))
            os.write(w, b"1" if ok else b"0")
            os._exit(0)
        os.close(w)
        got = os.read(r, 1)
        os.close(r)
        os.waitpid(pid, 0)
        assert got == b"1"
        assert signal.SIGTERM not in signal.pthread_sigmask(signal.SIG_BLOCK, [])  # the parent's mask is back
        assert signal.getsignal(signal.SIGTERM) is app._terminated
    finally:
        signal.signal(signal.SIGTERM, old)
