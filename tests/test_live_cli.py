"""``gym-crawl crawl --live`` end to end against a loopback site: a subprocess crawls, records a WARC that a
second WARC library reads back, stops cleanly on SIGINT (the WARC stays valid) and resumes from it without
requesting the recorded pages again."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from gym_crawl.web.serve.server import serve_corpus
from gym_crawl.web.warc_io import read_decisions, read_fetches, read_warcinfo
from tests.conftest import make_tiny_corpus
from tests.helpers import interrupt_after, valid_warc


@pytest.fixture(scope="module")
def small():
    return make_tiny_corpus(160, seed=1)


@pytest.fixture(scope="module")
def site(small):
    with serve_corpus(small, n_hosts=2) as s:
        yield s


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "gym_crawl", "crawl", *args]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1"}


def _page_requests(site, urls=None) -> list[str]:
    return [f"{e.host}{e.path}" for e in site.log if e.path != "/robots.txt"]


def test_live_crawl_cli_records_avalid_warc(small, site, tmp_path):
    corpus_dir = small.save(tmp_path / "ref")
    warc = tmp_path / "out.warc.gz"
    seed = site.page_urls[small.page_id("Geology")]
    p = subprocess.run(_cmd("--live", seed, "--agent", "best-first", "--topic", "geology", "--max-pages", "12",
                            "--warc", str(warc), "--delay", "0", "--text", str(corpus_dir),
                            "--user-agent-contact", "https://example.org/contact", "--scope", "any", "--json"),
                       check=False, capture_output=True, text=True, timeout=180, env=_env())
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["steps"] == 12 and out["pages_fetched"] == 13 and out["stopped_by"] is None
    assert "pages 13" in p.stderr and "harvest" in p.stderr  # the progress line (final line at least)
    counts = valid_warc(warc)
    assert counts["warcinfo"] == 1 and counts["response"] >= 13
    dec = list(read_decisions(warc))
    assert [d["step"] for d in dec] == list(range(1, 13))
    assert all(d["url"] and d["link_score"] is not None for d in dec)
    assert all(d["agent_score"] == d["link_score"] for d in dec)  # best-first's score is the link score
    assert len(list(read_fetches(warc))) == 13
    info = read_warcinfo(warc)[0]
    assert "example.org/contact" in info["http-header-user-agent"]
    agents = {e.user_agent for e in site.log}
    assert any("example.org/contact" in (a or "") for a in agents)


def test_sigint_stops_cleanly_and_resume_continues(small, site, tmp_path):
    warc = tmp_path / "stop.warc.gz"
    seed = site.page_urls[small.page_id("Geology")]
    args = ("--live", seed, "--agent", "random", "--topic", "geology", "--warc", str(warc), "--scope", "any",
            "--seed", "3", "--json")
    n0 = len(site.log)
    p = subprocess.Popen(_cmd(*args, "--max-pages", "120", "--delay", "0.25"), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=_env(),
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as from a terminal
    out = interrupt_after(p, warc, 4)
    assert out["stopped_by"] == "SIGINT" and 4 <= out["steps"] < 120
    valid_warc(warc)
    first = [d["url"] for d in read_decisions(warc)]
    assert len(first) == out["steps"]
    first_requests = _page_requests(site)[n0:]
    k = out["steps"]
    # resume: the recorded fetches are replayed (no request), the same seeded agent makes the same decisions,
    # then the crawl goes on over the network
    n1 = len(site.log)
    p2 = subprocess.run(_cmd(*args, "--max-pages", str(k + 5), "--delay", "0", "--resume"), check=False,
                        capture_output=True, text=True, timeout=180, env=_env())
    assert p2.returncode == 0, p2.stderr
    out2 = json.loads(p2.stdout.strip().splitlines()[-1])
    assert out2["steps"] == k + 5 and out2["stopped_by"] is None
    counts = valid_warc(warc)
    assert counts["warcinfo"] == 2  # one per run: the resumed run says so in its own
    assert read_warcinfo(warc)[1]["gym-crawl-resumed"] == "true"
    decisions = [d["url"] for d in read_decisions(warc)]
    # the resumed run re-decided the recorded steps identically (a different decision ends the replay with an
    # error) and wrote only its new ones: one decision record per step
    assert decisions[:k] == first and len(decisions) == k + 5 == len({d["step"] for d in read_decisions(warc)})
    again = set(_page_requests(site)[n1:])
    assert again and not again & set(first_requests), "resume requested pages the WARC already holds"
    assert len(list(read_fetches(warc))) == out2["pages_fetched"]


def test_live_cli_refuses_bad_combinations(tmp_path):
    for args, msg in [(("--live", "http://127.0.0.1:9/", "--agent", "best-first"), "--topic"),
                      (("--live", "http://127.0.0.1:9/", "--agent", "best-first,bfs", "--topic", "x"), "one --agent"),
                      (("--warc", str(tmp_path / "x.warc.gz")), "--live"),
                      (("--live", "http://127.0.0.1:9/", "--topic", "x", "--resume"), "--warc")]:
        p = subprocess.run(_cmd(*args), check=False, capture_output=True, text=True, timeout=120, env=_env())
        assert p.returncode != 0 and msg in p.stderr, (args, p.stderr)


def test_a_trained_agent_deploys_with_load(small, site, tmp_path):
    from gym_crawl.agents import make_agent, make_env_for, run_episode

    agent = make_agent("lfa-async")
    run_episode(make_env_for(agent, corpus=small, topic="geology", max_episode_steps=60), agent, seed=0)
    path = agent.save(tmp_path / "lfa.npz")
    warc = tmp_path / "lfa.warc.gz"
    seed = site.page_urls[small.page_id("Geology")]
    p = subprocess.run(_cmd("--live", seed, "--agent", "lfa-async", "--load", str(path), "--topic", "geology",
                            "--max-pages", "10", "--warc", str(warc), "--delay", "0", "--scope", "any", "--json"),
                       check=False, capture_output=True, text=True, timeout=180, env=_env())
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.strip().splitlines()[-1])["steps"] == 10
    dec = list(read_decisions(warc))
    assert len(dec) == 10 and all(isinstance(d["agent_score"], float) for d in dec)  # the LFA's q(s, a)
