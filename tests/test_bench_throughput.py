"""`gym-crawl bench throughput --quick` runs end to end and writes its JSON, Markdown and PNG under the current
folder (never into the installed package) when no ``--out`` is given."""
from __future__ import annotations

import json

import pytest

from gym_crawl.benchmarks.throughput import main


@pytest.mark.slow  # a benchmark run
def test_quick_run_writes_outputs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["--quick", "--steps", "60"]) == 0
    tmp_path = tmp_path / "benchmarks" / "results" / "throughput"
    data = json.loads((tmp_path / "throughput.json").read_text())
    cases = {r["case"] for r in data["rows"]}
    assert {"slot random, topk", "agent lfa-async", "agent tres (train_freq=1, paper)", "agent tres train_freq=4",
            "vector env N=8", "vector env N=64"} <= cases
    assert all(r["steps_per_cpu_second"] > 0 and r["cartpole_steps_per_cpu_second"] > 0 for r in data["rows"])
    for r in data["rows"]:  # the ratio uses the CartPole figure of the same row
        assert abs(r["cartpole_ratio"] * r["steps_per_cpu_second"] / r["cartpole_steps_per_cpu_second"] - 1) < 0.02
    assert (tmp_path / "throughput.md").exists() and (tmp_path / "throughput.png").exists()
    # the report says what it is: version and arguments, a quick run marked illustrative, rows stamped
    assert data["about"]["benchmark"] == "throughput" and data["about"]["status"] == "illustrative, not a result"
    assert all(r["status"] == "illustrative, not a result" and r["gym_crawl_version"] for r in data["rows"])
    assert (tmp_path / "throughput.md").read_text().startswith("> **illustrative, not a result**")
