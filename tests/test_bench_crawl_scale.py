"""`gym-crawl bench crawl_scale --quick` runs end to end: every web measured in its own process, JSON, Markdown and
PNG written; a crawl's state is counted per page it touched."""
from __future__ import annotations

import json

import pytest

from gym_crawl.benchmarks.crawl_scale import add_ratios, main, summarize


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


def test_baseline_and_stored_tables_are_refused_together(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["--quick", "--baseline", "HEAD", "--stored-tables", "--out", str(tmp_path / "out")])
    assert e.value.code == 2
    assert "--baseline runs the default's tables only" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow  # a benchmark run
def test_a_baseline_runs_beside_this_code_in_every_round(tmp_path, monkeypatch):
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path / "data"))
    out = tmp_path / "out"
    assert main(["--quick", "--sizes", "2000", "--rounds", "2", "--steps", "10", "--baseline", "HEAD",
                 "--out", str(out)]) == 0
    data = json.loads((out / "crawl_scale.json").read_text())
    assert data["baseline"] == "HEAD" and [r["corpus"] for r in data["baseline_rows"]] == ["powerlaw-2000"]
    (cur,), (old,), (pair,) = data["rows"], data["baseline_rows"], data["paired"]
    assert len(cur["vector_runs"]) == len(old["vector_runs"]) == 2
    assert pair["current_over_baseline"] == pytest.approx([c / b for c, b in zip(cur["vector_runs"],
                                                                                 old["vector_runs"])])
    assert "Against `HEAD`" in (out / "crawl_scale.md").read_text()


@pytest.mark.slow  # a benchmark run
def test_stored_tables_run_stores_once_and_attaches(tmp_path, monkeypatch):
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path / "data"))
    out, tables = tmp_path / "out", tmp_path / "tables"
    argv = ["--quick", "--sizes", "2000", "--stored-tables", "--tables-dir", str(tables), "--out", str(out)]
    assert main(argv) == 0
    data = json.loads((out / "crawl_scale_stored_tables.json").read_text())
    (st,) = data["store"]
    assert not st["found"] and st["disk_bytes"] > 0 and (tables / "powerlaw-2000-geology" / "manifest.json").exists()
    (row,) = data["rows"]
    assert row["tables"] == "complete at reset"  # 2,000 pages: scored at the first reset whatever the store
    assert row["ratio_to_smallest"]["per_round"] == [1.0]
    assert main(argv) == 0  # the second run finds the store where the first left it
    assert json.loads((out / "crawl_scale_stored_tables.json").read_text())["store"][0]["found"]


def test_ratios_pair_the_webs_round_by_round():
    runs = {"powerlaw-20000": [{"vector_steps_per_cpu_second": v} for v in (100.0, 200.0, 150.0)],
            "powerlaw-10000000": [{"vector_steps_per_cpu_second": v} for v in (80.0, 120.0, 135.0)]}
    rows = [{"corpus": "powerlaw-20000", "vector_steps_per_cpu_second": 150.0},
            {"corpus": "powerlaw-10000000", "vector_steps_per_cpu_second": 120.0}]
    add_ratios(rows, runs)
    r = rows[1]["ratio_to_smallest"]
    assert r["per_round"] == pytest.approx([0.8, 0.6, 0.9]) and r["median_of_ratios"] == pytest.approx(0.8)
    assert r["ratio_of_medians"] == pytest.approx(0.8) and r["against"] == "powerlaw-20000"
