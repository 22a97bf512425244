"""``gym-crawl bench paired_step``: its configuration parser, the paired summary and one short real round against
this very checkout (so the ratio is about 1)."""
from __future__ import annotations

import json
import shutil

import pytest

from gym_crawl.benchmarks import paired_step as ps


def test_configs_parse_and_refuse_what_is_not_one():
    assert ps.parse_configs("single:topk, vec:8,vec:64") == [("single", "topk"), ("vec", "8"), ("vec", "64")]
    assert ps.parse_configs("task:1,task:64") == [("task", "1"), ("task", "64")]
    for bad in ("single:greedy", "vec:0", "vec:x", "tree", "", "task:0", "task:x"):
        with pytest.raises(ValueError, match="single:REDUCER|no configuration"):
            ps.parse_configs(bad)


def test_summary_pairs_rounds_by_index():
    s = ps.summarize([110.0, 90.0, 100.0], [100.0, 100.0, 80.0])
    assert s["ratios"] == [1.1, 0.9, 1.25] and s["ratio_median"] == 1.1
    assert (s["ratio_min"], s["ratio_max"], s["current_median"], s["baseline_median"]) == (0.9, 1.25, 100.0, 100.0)
    with pytest.raises(ValueError, match="as many current as baseline"):
        ps.summarize([1.0], [])


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to extract the baseline")
def test_one_quick_round_against_head_writes_its_report(tmp_path):
    assert ps.main(["--baseline", "HEAD", "--quick", "--configs", "vec:2", "--steps", "200", "--warmup", "50",
                    "--out", str(tmp_path)]) == 0
    out = json.loads((tmp_path / "paired_step.json").read_text())
    (row,) = out["rows"]
    assert row["config"] == "vec:2" and len(row["ratios"]) == 1 and row["ratio_median"] > 0
    assert (tmp_path / "paired_step.md").read_text().count("| vec:2 |") == 1 and (tmp_path / "paired_step.png").exists()
