"""numba's BLAS probe answered without scipy.linalg (gym_crawl._numba_blas): a process that steps an env never imports
scipy.linalg or what its package pulls in, and numba still finds BLAS for the kernels that use it."""
from __future__ import annotations

import json
import subprocess
import sys

#: what importing scipy.linalg's package brings into a process (the array-API shim walks numpy's attributes)
NOT_IN_A_WORKER = ("scipy.linalg", "scipy.linalg.cython_blas", "numpy.f2py", "numpy.testing", "charset_normalizer",
                   "scipy.sparse")


def _run(code: str) -> dict:
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=False)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_a_fresh_process_stepping_the_default_env_does_not_import_scipy_linalg():
    code = ("import json, sys, numpy as np, gymnasium as gym, gym_crawl\n"
            "env = gym.make(gym_crawl.DEFAULT_ENV_ID)\n"
            "_, info = env.reset(seed=0)\n"
            "for _ in range(5):\n"
            "    _, _, te, tr, info = env.step(int(np.flatnonzero(info['action_mask'])[0]))\n"
            "import numba.np.arraymath as am\n"
            f"print(json.dumps({{'loaded': sorted(m for m in {NOT_IN_A_WORKER!r} if m in sys.modules),\n"
            "                  'blas': am._HAVE_BLAS, 'pages': int(info['pages_fetched'])}))\n")
    # the first process may build the default web, its text model and compile kernels into the caches; the second
    # is what a spawned worker does: everything from the caches
    runs = [_run(code) for _ in range(2)]
    for r in runs:
        assert r["pages"] >= 1
        assert r["blas"] is True  # numba still knows BLAS is there: np.dot in a kernel keeps working
    assert runs[1]["loaded"] == []


def test_preload_leaves_scipy_as_it_was_and_blas_kernels_still_work():
    code = ("import json, sys, numpy as np\n"
            "from gym_crawl import _numba_blas\n"
            "first, again = _numba_blas.preload(), _numba_blas.preload()\n"
            "import numba.np.arraymath as am\n"
            "out = {'first': first, 'again': again, 'blas': am._HAVE_BLAS,\n"
            "       'linalg_after_preload': 'scipy.linalg' in sys.modules,\n"
            "       'blas_module_after_preload': _numba_blas.BLAS_MODULE in sys.modules}\n"
            "import numba\n"
            "@numba.njit\n"
            "def dot(a, b):\n"
            "    return np.dot(a, b)\n"
            "a = np.arange(6.0).reshape(2, 3)\n"
            "out['dot'] = dot(a, a.T).tolist()\n"
            "import scipy.linalg\n"  # the first BLAS kernel imported it the usual way: the package is whole
            "out['attr_is_module'] = scipy.linalg.cython_blas is sys.modules[_numba_blas.BLAS_MODULE]\n"
            "out['solve'] = scipy.linalg.solve(np.eye(2), np.ones(2)).tolist()\n"
            "print(json.dumps(out))\n")
    r = _run(code)
    assert r["first"] is True and r["again"] is False
    assert r["blas"] is True
    assert r["linalg_after_preload"] is False and r["blas_module_after_preload"] is False
    assert r["dot"] == [[5.0, 14.0], [14.0, 50.0]]
    assert r["attr_is_module"] is True and r["solve"] == [1.0, 1.0]


def test_preload_does_nothing_when_scipy_linalg_is_already_imported():
    code = ("import json, sys, scipy.linalg\n"
            "from gym_crawl import _numba_blas\n"
            "print(json.dumps({'ran': _numba_blas.preload(), 'arraymath': 'numba.np.arraymath' in sys.modules}))\n")
    assert _run(code) == {"ran": False, "arraymath": False}
