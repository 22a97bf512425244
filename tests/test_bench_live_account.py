"""``gym-crawl bench live_account --quick``: a live crawl on loopback hosts whose summary, replay and WARC records
give one ``reward_sum``, and whose pages in flight at the last step are counted and marked alike."""
from __future__ import annotations

import json

import pytest


@pytest.mark.slow
def test_live_account_quick_finds_one_account(tmp_path):
    from gym_crawl.benchmarks.live_account import main

    assert main(["--quick", "--delay", "0", "--latency", "0.3", "--out", str(tmp_path)]) == 0
    out = json.loads((tmp_path / "live_account.json").read_text())
    assert out["one_account"] and out["marks_agree"]
    (row,) = out["rows"]
    assert row["reward_sum"] == row["replay_reward_sum"] == row["records_reward_sum"]
    assert row["replay_requests"] == 0
    assert out["in_flight_at_end"] == out["cancelled_at_end"] + out["fetched_after_last_step"]
