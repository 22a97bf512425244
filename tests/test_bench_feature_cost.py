"""``gym-crawl bench feature_cost``: one row per feature set with positive timings (figures, not asserted)."""
from __future__ import annotations

from gym_crawl.benchmarks.feature_cost import main, measure


def test_measure_times_every_set(tiny_corpus):
    rows = measure(tiny_corpus, ["crawler", "site"], steps=15, budget=6)
    assert [r["features"] for r in rows] == ["crawler", "site"]
    for r in rows:
        assert r["steps"] > 0 and r["cand_us_median"] > 0 and r["frontier_us_median"] > 0 and r["dim"] > 1


def test_main_writes_the_report(tiny_corpus, tmp_path):
    path = tiny_corpus.save(tmp_path / "tiny")
    assert main(["--corpus", str(path), "--features", "site", "--steps", "5", "--budget", "4",
                 "--out", str(tmp_path / "out")]) == 0
    md = (tmp_path / "out" / "feature_cost.md").read_text()
    assert "| site |" in md and (tmp_path / "out" / "feature_cost.json").is_file()
