"""`gym-crawl bench memory --quick` measures one env and AsyncVectorEnv workers and writes JSON, Markdown, PNG."""
from __future__ import annotations

import json
import os

import pytest

from gym_crawl.benchmarks.memory import main, proc_memory


def test_proc_memory_reads_this_process():
    m = proc_memory()
    assert m["rss_mb"] > 10 and 0 < m["uss_mb"] <= m["rss_mb"] and 0 < m["pss_mb"] <= m["rss_mb"]
    assert proc_memory(os.getpid())["rss_mb"] > 10


def test_bad_arguments():
    with pytest.raises(SystemExit, match="--workers"):
        main(["--quick", "--workers", "0"])
    with pytest.raises(SystemExit, match="--pages"):
        main(["--quick", "--pages", "5"])


def test_quick_run_writes_outputs(tmp_path):
    assert main(["--quick", "--steps", "10", "--workers", "2", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "memory.json").read_text())
    one = data["one_env"]
    assert one["pages"] == 3000 and one["peak_rss_mb"] >= 0.95 * one["after_crawl"]["rss_mb"] > 0
    (w,) = data["workers"]
    assert w["workers"] == 2 and len(w["per_worker"]) == 2
    assert all(0 < p["uss_mb"] <= p["rss_mb"] for p in w["per_worker"])
    assert [v["envs"] for v in data["vector_env"]] == [1, 2]
    assert all(v["memory"]["uss_mb"] > 0 for v in data["vector_env"])
    md = (tmp_path / "memory.md").read_text()
    assert "Largest worker USS" in md and "Peak RSS" in md and "USS per extra env" in md
    assert (tmp_path / "memory.png").stat().st_size > 0
