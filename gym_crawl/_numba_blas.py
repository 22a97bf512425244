"""numba's BLAS probe answered without importing ``scipy.linalg`` (≈ 10–13 MB per process that steps an env).

The first time a process compiles a kernel or loads one from numba's on-disk cache, numba initializes its CPU
target, which imports ``numba.np.arraymath`` whatever the kernels use. That module checks at import whether BLAS is
available (``_HAVE_BLAS``, for ``np.dot`` and the like) by importing ``scipy.linalg.cython_blas``. Importing that
module imports its package first, and ``scipy.linalg``'s package imports all of ``scipy.linalg`` plus SciPy's
array-API shim, which walks every attribute of ``numpy`` and so imports ``numpy.testing``, ``numpy.f2py`` and the
``charset_normalizer`` that ``numpy.f2py`` imports: ≈ 240 modules and ≈ 10 MB of anonymous memory (≈ 13 MB of
private memory with the shared libraries' relocated pages) in a process whose kernels call no BLAS routine.

:func:`preload` imports ``numba.np.arraymath`` once, early, with ``scipy.linalg.cython_blas`` — the extension module
the probe imports, loaded from its file — registered in ``sys.modules`` for the length of that import only, so the
probe finds BLAS without running ``scipy.linalg``'s package. The entry is removed right after: nothing of SciPy's
import state is left changed, and the first kernel that does use BLAS imports ``scipy.linalg`` as numba always does
(Cython's extension modules initialize once per process, so it gets the same module object back). numba itself is
not patched. It does nothing when numba's target is already initialized, when ``scipy.linalg`` is already
imported, or when the extension is not where SciPy keeps it (another SciPy layout): numba then probes as usual.

Lowest layer of the package: imports nothing from ``gym_crawl``.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys

__all__ = ["preload", "BLAS_MODULE"]

#: the module numba's BLAS probe imports (``numba.np.linalg.ensure_blas``)
BLAS_MODULE = "scipy.linalg.cython_blas"
_PROBING_MODULE = "numba.np.arraymath"


def _blas_extension_path() -> str | None:
    """Path of SciPy's ``cython_blas`` extension module, found without importing ``scipy.linalg``."""
    spec = importlib.util.find_spec("scipy")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(root, "linalg", "cython_blas" + suffix)
            if os.path.isfile(path):
                return path
    return None


def preload() -> bool:
    """Import numba's array-math module (the one that probes for BLAS) without importing ``scipy.linalg``.

    Idempotent; returns whether this call ran the probe that way (``False``: numba's target was already
    initialized, ``scipy.linalg`` was already imported, or SciPy's BLAS extension was not found — numba then
    imports ``scipy.linalg`` as usual when it probes)."""
    if _PROBING_MODULE in sys.modules or "scipy.linalg" in sys.modules or BLAS_MODULE in sys.modules:
        return False
    path = _blas_extension_path()
    if path is None:
        return False
    spec = importlib.util.spec_from_file_location(BLAS_MODULE, path)
    if spec is None or spec.loader is None:
        return False
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception:  # an extension this SciPy cannot load on its own: let numba probe as usual
        return False
    sys.modules[BLAS_MODULE] = module
    try:
        importlib.import_module(_PROBING_MODULE)
    finally:
        if sys.modules.get(BLAS_MODULE) is module:
            del sys.modules[BLAS_MODULE]
    return True
