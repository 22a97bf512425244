"""`gym-crawl bench paths_memory` runs end to end on a small power-law web (a fresh process per web, JSON and
Markdown out) and refuses bad arguments with a usage error."""
from __future__ import annotations

import json

import pytest

from gym_crawl.benchmarks.paths_memory import main


def test_paths_memory_measures_each_web_in_its_own_process(tmp_path, monkeypatch):
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path / "data"))
    out = tmp_path / "out"
    assert main(["--sizes", "2000", "--envs", "2", "--steps", "8", "--out", str(out)]) == 0
    rows = json.loads((out / "paths_memory.json").read_text())["rows"]
    assert [r["web"] for r in rows] == ["powerlaw-2000"]
    r = rows[0]
    assert r["envs"] == 2 and r["features"] == "crawler+" and r["concurrency"] == 4 and r["domains"] == 5
    assert 1 < r["pages_fetched_mean"] <= 9 and r["cpu_s"] > 0
    assert 0 < r["before_MB"]["RssAnon"] < r["after_MB"]["RssAnon"] <= r["peak_rss_MB"]
    assert "| powerlaw-2000 | 2,000 | 5 | 2 × 8 |" in (out / "paths_memory.md").read_text()


@pytest.mark.parametrize("args", [["--sizes", "abc"], ["--sizes", "100"], ["--envs", "0"]])
def test_paths_memory_refuses_bad_arguments(args, tmp_path):
    with pytest.raises(SystemExit) as e:
        main([*args, "--out", str(tmp_path)])
    assert e.value.code == 2
