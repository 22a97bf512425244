"""``gym-crawl bench step_profile`` and ``step_ab``: the sampler records and names addresses, the profile's report
is valid JSON whose shares sum to one, and one short lock-step A/B against this very checkout runs and checks the
trajectories (timings are not asserted)."""
from __future__ import annotations

import json
import os
import platform
import shutil
import sys
import time

import pytest

from gym_crawl.benchmarks import step_ab, step_profile

linux_x86 = pytest.mark.skipif(sys.platform != "linux" or platform.machine() != "x86_64",
                               reason="the sampler reads Linux x86-64 signal contexts")


def test_demangle_gives_numba_qualified_names():
    assert step_profile.demangle("_ZN9gym_crawl5crawl7kernels10fetch_pageB4v103B40c8tJTIeFIjxE5ArrayIiLi1E") == \
        "gym_crawl.crawl.kernels.fetch_page"
    assert step_profile.demangle("_ZN7cpython9gym_crawl7pagemap4findB2v1E") == "cpython.gym_crawl.pagemap.find"
    assert step_profile.demangle("cfunc._ZN3foo3barE") == "cfunc.foo.bar"
    assert step_profile.demangle("NRT_incref") == "NRT_incref"


@linux_x86
def test_sampler_names_a_compiled_loop_that_burns_cpu():
    from numba import njit

    @njit(cache=False)
    def burn_cpu_in_numba(n):
        s = 0.0
        for k in range(n):
            s += (k % 7) * 0.5
        return s

    burn_cpu_in_numba(10)
    with step_profile.Sampler(0.001) as sp:
        t0 = time.process_time()
        while time.process_time() - t0 < 0.4:
            burn_cpu_in_numba(2_000_000)
    assert len(sp.ips) >= 20 and not sp.full
    counts = step_profile.symbolize(sp.ips)
    ours = sum(c for (g, n), c in counts.items() if g == "compiled" and n.endswith("burn_cpu_in_numba"))
    assert ours / sum(counts.values()) > 0.5, counts.most_common(5)


def test_bad_arguments_are_usage_errors(capsys):
    with pytest.raises(SystemExit) as e:
        step_profile.main(["--envs", "0"])
    assert e.value.code == 2 and "--envs" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        step_ab.main(["--baseline", "HEAD", "--envs", "1"])
    assert e.value.code == 2 and "--envs must be >= 2" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        step_profile.main(["--topic", "geology"])
    assert e.value.code == 2 and "--topic needs --corpus" in capsys.readouterr().err


@linux_x86
def test_quick_profile_writes_shares_that_sum_to_one(tmp_path):
    assert step_profile.main(["--quick", "--envs", "8", "--steps", "4000", "--warmup", "200", "--interval-ms", "1",
                              "--out", str(tmp_path)]) == 0
    out = json.loads((tmp_path / "step_profile.json").read_text())
    assert out["samples"] == sum(f["samples"] for f in out["functions"]) > 0
    assert sum(f["share"] for f in out["functions"]) == pytest.approx(1.0)
    assert sum(out["groups"].values()) == pytest.approx(1.0) and out["steps_per_cpu_s"] > 0
    assert any(f["group"] == "compiled" and f["name"].startswith("gym_crawl.") for f in out["functions"])
    assert "| function | group | share |" in (tmp_path / "step_profile.md").read_text()


@linux_x86
def test_a_profile_on_another_web(tmp_path, monkeypatch):
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path / "data"))
    assert step_profile.main(["--quick", "--envs", "4", "--steps", "4000", "--warmup", "100", "--interval-ms", "1",
                              "--corpus", "powerlaw-2000", "--topic", "music", "--out", str(tmp_path / "p")]) == 0
    out = json.loads((tmp_path / "p" / "step_profile.json").read_text())
    assert (out["corpus"], out["topic"]) == ("powerlaw-2000", "music") and out["env_steps"] == 4000
    assert "on `powerlaw-2000` (topic music)" in (tmp_path / "p" / "step_profile.md").read_text()


@pytest.mark.slow  # ≈ 1 CPU-minute: each of the two workers compiles every kernel into its own fresh numba cache
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to extract the baseline")
def test_lock_step_ab_against_head_writes_its_report(tmp_path):
    assert step_ab.main(["--baseline", "HEAD", "--quick", "--envs", "4", "--out", str(tmp_path)]) == 0
    out = json.loads((tmp_path / "step_ab.json").read_text())
    assert out["trajectories_equal"] and len(out["ratios"]) == out["rounds"] == 2
    assert out["ratio_min"] <= out["ratio_median"] <= out["ratio_max"] and all(r > 0 for r in out["ratios"])
    assert out["current_steps_per_cpu_s"] > 0
    assert "| baseline CPU / current CPU" in (tmp_path / "step_ab.md").read_text()


def test_lock_step_refuses_codes_whose_trajectories_part(tmp_path):
    """A "baseline" whose env acts differently (its random stream seeded otherwise) is caught at the first round."""
    cur, other = step_ab.LockStep(None, 2, seed=0), step_ab.LockStep(None, 2, seed=1)
    try:
        assert cur.run(3)[1] != other.run(3)[1]
    finally:
        cur.close()
        other.close()


def test_lock_step_workers_compile_into_their_own_numba_cache(tmp_path):
    """Each worker's numba cache is the directory it is given (a fresh one per code in ``compare``), never this
    tree's ``__pycache__``, whose cached callers may hold an older callee's code; the baseline's tree goes first on
    ``PYTHONPATH``."""
    env = step_ab.worker_env(str(tmp_path / "tree"), str(tmp_path / "numba"))
    assert env["NUMBA_CACHE_DIR"] == str(tmp_path / "numba") and env["PYTHONPATH"] == str(tmp_path / "tree")
    here = step_ab.worker_env(None, None)
    assert here.get("NUMBA_CACHE_DIR") == os.environ.get("NUMBA_CACHE_DIR")
    w = step_ab.LockStep(None, 2, seed=0, cache_dir=str(tmp_path / "numba"))
    try:
        w.run(2)
    finally:
        w.close()
    assert any(p.suffix == ".nbi" for p in (tmp_path / "numba").rglob("*"))  # the worker's kernels cached there
