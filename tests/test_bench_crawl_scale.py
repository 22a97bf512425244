"""`gym-crawl bench crawl_scale --quick` runs end to end: every web measured in its own process, JSON, Markdown and
PNG written; a crawl's state is counted per page it touched."""
from __future__ import annotations

import json

import pytest

from gym_crawl.benchmarks.crawl_scale import main, summarize


@pytest.mark.slow  # a benchmark run
def test_quick_run_writes_outputs(tmp_path, monkeypatch):
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path / "data"))
    out = tmp_path / "out"
    assert main(["--quick", "--out", str(out)]) == 0
    data = json.loads((out / "crawl_scale.json").read_text())
    assert [r["pages"] for r in data["rows"]] == [2000, 5000]
    for r in data["rows"]:
        assert r["vector_steps_per_cpu_second"] > 0 and r["single_steps_per_cpu_second"] > 0
        assert 0 < r["pages_touched_per_crawl"] < r["pages"]
        assert r["crawl_state_bytes_per_touched_page"] == pytest.approx(
            r["crawl_state_bytes_per_crawl"] / r["pages_touched_per_crawl"], rel=1e-6)
        assert r["mem_after_crawl"]["RssAnon"] > 0
    assert (out / "crawl_scale.png").exists()
    assert (out / "crawl_scale.md").read_text().startswith("> **illustrative, not a result**")


def test_summarize_takes_medians_key_by_key():
    runs = [{"corpus": "w", "pages": 10, "links": 20, "vector_steps_per_cpu_second": v,
             "single_steps_per_cpu_second": 2.0, "cartpole_steps_per_cpu_second": 8.0,
             "mem_after_crawl": {"RssAnon": m}} for v, m in ((1.0, 5), (3.0, 9), (2.0, 7))]
    s = summarize(runs)
    assert s["vector_steps_per_cpu_second"] == 2.0 and s["mem_after_crawl"]["RssAnon"] == 7
    assert s["cartpole_ratio"] == 4.0 and s["vector_runs"] == [1.0, 3.0, 2.0]


def test_tables_dir_needs_stored_tables(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["--quick", "--tables-dir", str(tmp_path / "t"), "--out", str(tmp_path / "out")])
    assert e.value.code == 2
    assert "--tables-dir needs --stored-tables" in capsys.readouterr().err
    assert not (tmp_path / "out").exists() and not (tmp_path / "t").exists()
