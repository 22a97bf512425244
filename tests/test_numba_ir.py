"""Kernels loaded from numba's cache drop their parsed LLVM module and still link into a later compile."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

KERNEL = textwrap.dedent("""
    import numpy as np
    from numba import njit

    @njit(cache=True)
    def weighted(x, w):
        s = 0.0
        for i in range(x.size):
            s += x[i] * w
        return s
""")

CHECK = textwrap.dedent("""
    import json, sys
    import numpy as np
    from gym_crawl import _numba_ir
    installed = _numba_ir.install() and _numba_ir.install()  # idempotent
    import kern
    from numba import njit
    x = np.arange(5.0)
    first = kern.weighted(x, 2.0)
    lib = kern.weighted.overloads[kern.weighted.signatures[0]].library
    loaded = {"shared_module": lib._shared_module is not None, "bitcode": hasattr(lib, "_gym_crawl_bitcode")}

    @njit
    def caller(x):  # compiled now: links the cached kernel's module in
        return kern.weighted(x, 3.0) + 1.0

    linked = caller(x)
    after = {"shared_module": lib._shared_module is not None, "bitcode": hasattr(lib, "_gym_crawl_bitcode")}
    print(json.dumps({"installed": installed, "first": first, "linked": linked, "loaded": loaded,
                      "after": after, "hits": len(kern.weighted.stats.cache_hits)}))
""")


def test_a_cached_kernel_keeps_compressed_bitcode_and_links_into_a_later_compile(tmp_path):
    (tmp_path / "kern.py").write_text(KERNEL)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(tmp_path)}
    compile_and_cache = "import numpy as np, kern; print(kern.weighted(np.arange(5.0), 2.0))"
    subprocess.run([sys.executable, "-c", compile_and_cache], env=env, check=True, timeout=300, capture_output=True)
    out = subprocess.run([sys.executable, "-c", CHECK], env=env, check=True, timeout=300, capture_output=True,
                         text=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["installed"] is True and r["hits"] == 1  # loaded from the cache, not compiled
    assert r["first"] == 20.0 and r["linked"] == 31.0
    assert r["loaded"] == {"shared_module": False, "bitcode": True}  # the parsed module gone, the bitcode kept
    assert r["after"] == {"shared_module": True, "bitcode": False}  # parsed again for the compile that linked it


def test_stepping_an_env_installs_it():
    code = "import gym_crawl.envs, gym_crawl._numba_ir as m; print(m.installed())"
    out = subprocess.run([sys.executable, "-c", code], check=True, timeout=300, capture_output=True, text=True)
    assert out.stdout.strip() == "True"


STEP_AND_REPORT = textwrap.dedent("""
    import gc, json
    import numpy as np
    from numba.core.registry import CPUDispatcher
    from gym_crawl.benchmarks.memory import make_env_fn
    env = make_env_fn(500, 10)()
    _, info = env.reset(seed=0)
    for _ in range(5):
        _, _, te, tr, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    used = [d for d in gc.get_objects() if isinstance(d, CPUDispatcher) and d.overloads
            and d.py_func.__module__.startswith("gym_crawl")]
    compiled = sorted(d.py_func.__qualname__ for d in used if d.stats.cache_misses)
    parsed = sum(cr.library._shared_module is not None for d in used for cr in d.overloads.values())
    print(json.dumps({"used": len(used), "compiled": compiled, "parsed": parsed}))
""")


def test_a_process_that_steps_an_env_from_a_warm_cache_compiles_nothing():
    """What a spawned worker does: with numba's cache warm, every kernel it runs is loaded from the cache (none is
    compiled), and none keeps a parsed LLVM module."""
    runs = [subprocess.run([sys.executable, "-c", STEP_AND_REPORT], capture_output=True, text=True, check=True,
                           timeout=600) for _ in range(2)]  # the first may compile and fill the cache
    r = json.loads(runs[1].stdout.strip().splitlines()[-1])
    assert r["used"] >= 10 and r["compiled"] == [] and r["parsed"] == 0
