"""`gym-crawl bench memory --quick` measures one env and AsyncVectorEnv workers and writes JSON, Markdown, PNG."""
from __future__ import annotations

import json
import os

import pytest

from gym_crawl.benchmarks.memory import _markdown, _plot, main, peak_rss_mb, proc_memory


def test_proc_memory_reads_this_process():
    m = proc_memory()
    assert m["rss_mb"] > 10 and 0 < m["uss_mb"] <= m["rss_mb"] and 0 < m["pss_mb"] <= m["rss_mb"]
    assert proc_memory(os.getpid())["rss_mb"] > 10


def test_bad_arguments():
    with pytest.raises(SystemExit, match="--workers"):
        main(["--quick", "--workers", "0"])
    with pytest.raises(SystemExit, match="--pages"):
        main(["--quick", "--pages", "5"])


def _m(rss, uss, pss):
    return {"rss_mb": rss, "uss_mb": uss, "pss_mb": pss}


def test_report_flags_budgets_and_per_extra_env(tmp_path):
    stages = ("base", "after_import", "after_corpus_load", "after_make", "after_reset", "after_crawl")
    one = {"pages": 323000, "links": 8_600_000, "peak_rss_mb": 1100.0, **{k: _m(100.0, 50.0, 60.0) for k in stages}}
    workers = [{"workers": 2, "main": _m(900.0, 100.0, 400.0), "per_worker": [_m(1100.0, 90.0, 400.0),
                                                                              _m(1100.0, 120.0, 400.0)]},
               {"workers": 2, "mode": "shared", "main": _m(900.0, 100.0, 400.0),
                "per_worker": [_m(500.0, 60.0, 200.0), _m(500.0, 58.0, 200.0)]}]
    vector = [{"envs": 1, "memory": _m(1100.0, 300.0, 600.0), "peak_rss_mb": 1100.0},
              {"envs": 3, "memory": _m(1200.0, 400.0, 700.0), "peak_rss_mb": 1200.0}]
    md = _markdown(one, workers, vector)
    assert "OVER the 1024 MB budget" in md          # 1100 MB peak RSS
    assert ("default mode, 2 workers (private memory: what one more worker costs): 120.0 MB "
            "(OVER the 100 MB budget)") in md
    assert ("shared mode, 2 workers (private memory: what one more worker costs): 60.0 MB "
            "(within the 100 MB budget)") in md
    assert "| 3 | 1200.0 | 400.0 | 700.0 | 1200.0 | 50.0 |" in md  # (400 - 300) / (3 - 1) MB per extra env
    _plot(one, workers, vector, tmp_path / "m.png")
    assert (tmp_path / "m.png").stat().st_size > 0
    assert peak_rss_mb() >= proc_memory()["rss_mb"] * 0.9


@pytest.mark.slow
def test_quick_run_writes_outputs(tmp_path):
    assert main(["--quick", "--steps", "10", "--workers", "2", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "memory.json").read_text())
    one = data["one_env"]
    assert one["pages"] == 3000 and one["peak_rss_mb"] >= 0.95 * one["after_crawl"]["rss_mb"] > 0
    assert [(w["workers"], w["mode"]) for w in data["workers"]] == [(2, "default"), (2, "shared")]
    for w in data["workers"]:
        assert len(w["per_worker"]) == 2 and all(0 < p["uss_mb"] <= p["rss_mb"] for p in w["per_worker"])
    assert [v["envs"] for v in data["vector_env"]] == [1, 2]
    assert all(v["memory"]["uss_mb"] > 0 for v in data["vector_env"])
    md = (tmp_path / "memory.md").read_text()
    assert "Largest worker USS" in md and "Peak RSS" in md and "USS per extra env" in md
    assert (tmp_path / "memory.png").stat().st_size > 0


def test_a_process_that_steps_an_env_does_not_load_what_only_building_needs():
    """What a spawned worker imports is what it holds: scipy.sparse (text-model and classifier building) and the
    benchmark's report helpers stay unloaded in a process that makes, resets and steps an env on a cached corpus."""
    import subprocess
    import sys

    code = ("import sys, numpy as np\n"
            "from gym_crawl.benchmarks.memory import make_env_fn\n"
            "env = make_env_fn(500, 10)()\n"
            "_, info = env.reset(seed=0)\n"
            "env.step(int(np.flatnonzero(info['action_mask'])[0]))\n"
            "print(sorted(m for m in ('scipy.sparse', 'gym_crawl.benchmarks.report') if m in sys.modules))\n")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600)
            for _ in range(2)]  # the first builds the corpus' text model into the cache; the second, a worker, loads it
    assert runs[1].stdout.strip().splitlines()[-1] == "[]"


def test_smaps_breakdown_splits_this_process_by_mapping(tmp_path):
    """The parts add up to the process' totals, and a memory-mapped file under a ``score_tables`` folder is counted
    as stored score tables, its touched pages resident."""
    import numpy as np

    from gym_crawl.benchmarks.memory import MAPPING_PARTS, smaps_breakdown

    d = tmp_path / "score_tables" / "t"
    d.mkdir(parents=True)
    np.save(d / "link_cat.npy", np.arange(2 << 20, dtype=np.float32))  # 8 MB
    a = np.load(d / "link_cat.npy", mmap_mode="r")
    assert float(a.sum()) > 0  # touch every page
    parts, total = smaps_breakdown(), proc_memory()
    assert set(parts) == set(MAPPING_PARTS)
    assert parts["score_tables"]["rss_mb"] >= 7.9 and parts["score_tables"]["anon_mb"] == 0
    assert parts["heap"]["anon_mb"] > 0 and parts["libraries"]["rss_mb"] > 0
    for k in ("rss_mb", "uss_mb", "anon_mb"):
        assert abs(sum(p[k] for p in parts.values()) - total[k]) < 2.0, k


def test_report_shows_each_workers_parts():
    parts = {k: {"rss_mb": 1.0, "pss_mb": 0.5, "uss_mb": 0.25, "anon_mb": 0.0} for k in
             ("heap", "anon", "score_tables", "corpus", "libraries", "other_files")}
    parts["heap"] = {"rss_mb": 44.0, "pss_mb": 44.0, "uss_mb": 44.0, "anon_mb": 44.0}
    stages = ("base", "after_import", "after_corpus_load", "after_make", "after_reset", "after_crawl")
    one = {"pages": 500, "links": 5000, "peak_rss_mb": 100.0, **{k: _m(100.0, 50.0, 60.0) for k in stages}}
    workers = [{"workers": 1, "mode": "cached", "main": _m(90.0, 80.0, 85.0),
                "per_worker": [_m(300.0, 96.0, 180.0)], "per_worker_parts": [parts]}]
    md = _markdown(one, workers, [])
    assert "| workers | mode | worker | heap | anon | score_tables | corpus | libraries | other_files |" in md
    assert "| 1 | cached | 0 | 44.0 / 44.0 / 44.0 | 0.25 / 0.0 / 0.5 |" in md
    assert "cached mode, 1 worker (private memory: what one more worker costs — the only worker" in md
