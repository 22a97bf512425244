"""`gym-crawl bench agents_memory` runs end to end on a small power-law web (a fresh process per web and agent, JSON
and Markdown out), reports the pages the agents' structures hold rows for, and refuses bad arguments."""
from __future__ import annotations

import json

import pytest

from gym_crawl.benchmarks.agents_memory import main


def test_agents_memory_measures_each_agent_in_its_own_process(tmp_path, monkeypatch):
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path / "data"))
    out = tmp_path / "out"
    assert main(["--webs", "powerlaw-2000", "--steps", "12", "--episodes", "1", "--out", str(out)]) == 0
    rows = json.loads((out / "agents_memory.json").read_text())["rows"]
    assert [(r["web"], r["agent"]) for r in rows] == [("powerlaw-2000", "lfa-sync"),
                                                      ("powerlaw-2000", "online-classifier")]
    for r in rows:
        assert r["pages"] == 2000 and r["topic"] == "geology" and r["steps"] == 12 and r["cpu_us_per_step"] > 0
        # rows for the pages the crawl discovered: more than it fetched, far fewer than the web's pages
        assert 12 < r["pages_keyed"] < 2000 and r["agent_state_bytes"] > 0 and r["traced_agent_bytes"] > 0
        assert r["rss_MB"]["RssAnon"] > 0
    assert "| powerlaw-2000 | 2,000 | lfa-sync | 12 |" in (out / "agents_memory.md").read_text()


@pytest.mark.parametrize("args", [["--steps", "0"], ["--agents", ""], ["--pythonpath", "/nonexistent-folder"]])
def test_agents_memory_refuses_bad_arguments(args, tmp_path):
    with pytest.raises(SystemExit) as e:
        main([*args, "--out", str(tmp_path)])
    assert e.value.code == 2
