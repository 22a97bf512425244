"""Kernels loaded from numba's cache without the LLVM module they keep only for inlining into later compiles.

numba loads a cached kernel as its machine code plus the kernel's LLVM bitcode, which it parses into an LLVM module
and keeps for the process' lifetime: the module is used only when a function compiled later in the same process
calls the kernel and inlines it (``CPUCodeLibrary._get_module_for_linking``). A process that steps an env from the
cache compiles nothing, yet the parsed modules of its kernels hold ≈ 8 MB (19 kernels of the single env; the
bitcode itself is ≈ 1.1 MB). :func:`install` makes numba keep the bitcode, compressed, instead of the parsed
module, and parse it again the first time a compile asks for it, so what runs is the same machine code and a
later compile links the same module.

Lowest layer of the package: imports nothing from ``gym_crawl``. It reaches into numba's code library, so it
checks the attributes it relies on and leaves numba as it is when they differ (another numba version).
"""
from __future__ import annotations

import zlib
from typing import Any

__all__ = ["install", "installed"]

_INSTALLED = False
#: the attribute a cache-loaded code library keeps its compressed bitcode in, until a compile asks for the module
_BITCODE = "_gym_crawl_bitcode"


def installed() -> bool:
    """Whether :func:`install` has patched numba's code library in this process."""
    return _INSTALLED


def install() -> bool:
    """Patch numba's CPU code library once per process (idempotent): a kernel loaded from numba's on-disk cache
    keeps its bitcode zlib-compressed and disposes of the parsed LLVM module; the module is parsed again when a
    later compile links the kernel in. Returns whether the patch is in place (``False`` when numba's code library
    lacks what the patch relies on)."""
    global _INSTALLED
    if _INSTALLED:
        return True
    try:
        from llvmlite import binding as ll
        from numba.core.codegen import CPUCodeLibrary
    except ImportError:  # pragma: no cover - numba is a dependency
        return False
    unserialize = CPUCodeLibrary.__dict__.get("_unserialize")
    for_linking = CPUCodeLibrary.__dict__.get("_get_module_for_linking")
    if not isinstance(unserialize, classmethod) or for_linking is None:
        return False
    load = unserialize.__func__

    def _unserialize(cls: type, codegen: Any, state: tuple) -> Any:
        lib = load(cls, codegen, state)
        _name, kind, data = state
        module = getattr(lib, "_shared_module", None)
        if kind == "object" and module is not None and isinstance(data, tuple) and len(data) == 2:
            setattr(lib, _BITCODE, zlib.compress(data[1], 1))
            lib._shared_module = None
            module.close()
        return lib

    def _get_module_for_linking(self: Any) -> Any:
        bitcode = self.__dict__.pop(_BITCODE, None)
        if bitcode is not None and self._shared_module is None:
            self._shared_module = ll.parse_bitcode(zlib.decompress(bitcode))
        return for_linking(self)

    CPUCodeLibrary._unserialize = classmethod(_unserialize)  # type: ignore[method-assign,assignment]
    CPUCodeLibrary._get_module_for_linking = _get_module_for_linking  # type: ignore[method-assign]
    _INSTALLED = True
    return True
