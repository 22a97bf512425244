"""The goldens do not depend on the machine: replay a few of them in a fresh process whose BLAS runs one thread
with its most basic x86-64 kernels, whose NumPy may use none of its AVX2 / AVX-512 code and whose PyTorch runs
its portable (non-vectorized) kernels — the settings of a different CPU. ``.ci/run`` replays every golden under
each setting separately, and with numba compiling for a generic x86-64 CPU."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = ["tests/test_golden_crawl.py::test_env_trajectories_unchanged[topk-combined]",
        "tests/test_golden.py::test_agent_trajectories_unchanged[best-first]",
        "tests/test_golden.py::test_agent_trajectories_unchanged[lfa-sync]",
        "tests/test_golden.py::test_agent_trajectories_unchanged[td-lambda]",
        "tests/test_golden.py::test_agent_trajectories_unchanged[tres-async]"]


def _numpy_dispatch_targets() -> str:
    """NumPy's runtime-dispatched SIMD targets (``NPY_DISABLE_CPU_FEATURES`` turns them off)."""
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:  # NumPy 1.x
        from numpy.core import _multiarray_umath as umath  # type: ignore[no-redef]
    return " ".join(umath.__cpu_dispatch__)


def test_goldens_replay_with_one_thread_and_baseline_kernels(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "OPENBLAS_CORETYPE": "Prescott", "NPY_DISABLE_CPU_FEATURES": _numpy_dispatch_targets(),
           "ATEN_CPU_CAPABILITY": "default", "GYM_CRAWL_DATA": str(tmp_path / "data")}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", *RUNS], cwd=ROOT,
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"goldens differ under {env['NPY_DISABLE_CPU_FEATURES']!r} etc.:\n{r.stdout[-4000:]}"
    assert f"{len(RUNS)} passed" in r.stdout
