"""One account of a live crawl: its summary's ``reward_sum`` equals its replay's and the sum of its WARC records
(the ``reset`` record of the seeds' rewards plus the decision records), with several pages in flight over many
hosts; pages still in flight at the last step are cancelled before they reach the wire where they can be (the
servers never see them), and the others — fetched after the last step — are counted in the summary and named in
the WARC, so the replay, the replayed corpus and the WARC compiler count and mark the same pages."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import gym_crawl  # noqa: F401
from gym_crawl.agents import make_agent, make_env_for, run_episode
from gym_crawl.agents.live_crawl import crawl_live, read_account
from gym_crawl.text.model import get_text_model
from gym_crawl.web.fetcher import PoliteFetcher
from gym_crawl.web.live import LiveWeb, replay_corpus
from gym_crawl.web.policy import FetchPolicy
from gym_crawl.web.serve.server import Response, html_page, serve_corpus, serve_site
from gym_crawl.web.settings import LiveCrawlSettings
from gym_crawl.web.warc import load_warc
from gym_crawl.web.warc_io import read_decisions, read_fetches
from tests.conftest import make_tiny_corpus
from tests.helpers import jittered

FAST = {"rate": None, "connect_timeout": 2.0, "read_timeout": 5.0, "max_time": 10.0}


@pytest.fixture(scope="module")
def small():
    return make_tiny_corpus(400, seed=1)


def _replay(warc, tm, settings, name):
    web = LiveWeb.from_warc(warc, text=tm)
    env = make_env_for(make_agent(name), corpus=web, **settings.env_keywords())
    res = run_episode(env, make_agent(name), seed=settings.seed)
    web.close()
    return res, web


@pytest.mark.parametrize("name", ["best-first", "random", "best-first-mix"])
def test_summary_replay_and_records_give_one_reward_sum(small, tmp_path, name):
    tm = get_text_model(small)
    with jittered(serve_corpus(small, n_hosts=6), seed=2) as site:
        seeds = tuple(site.url(h, "/") for h in site.hosts)
        s = LiveCrawlSettings(seeds=seeds, topic="geology", max_pages=40, scope="any", concurrency=6,
                              policy=FetchPolicy(delay=0.0, **FAST), focus_slack=None)
        warc = tmp_path / "a.warc.gz"
        live = crawl_live(make_agent(name), s, warc=warc, text=tm, progress=None, handle_signals=False)
        n_log = len(site.log)
        replayed, web = _replay(warc, tm, s, name)
        assert len(site.log) == n_log, "the replay sent requests"
    summary = live.summary()
    account = read_account(warc)
    decisions = list(read_decisions(warc))
    assert len(decisions) == summary["steps"] == account["steps"] == 40
    assert summary["reward_sum"] == replayed.reward_sum == account["reward_sum"]
    assert summary["reward_sum"] == summary["reset_reward"] + float(np.sum(live.episode.rewards))
    assert account["reset_reward"] == summary["reset_reward"] and account["step_rewards"] == sum(
        d["reward"] for d in decisions)
    assert decisions[-1]["reward_sum"] == summary["reward_sum"]  # the running total, step by step
    assert summary["reset_reward"] != 0.0  # the seeds' rewards are part of the account (six index pages)
    # the pages in flight at the end are counted alike live, in the records and on replay
    assert summary["after_last_step"] == web.counters()["after_last_step"]
    assert {k: account["after_last_step"][k] for k in ("in_flight", "fetched", "cancelled")} == \
        summary["after_last_step"]


def test_pages_in_flight_at_the_end_are_cancelled_before_the_wire_or_counted_and_marked(small, tmp_path):
    """Two hosts, two pages in flight per host, a 1 s delay: at the last step a page waits for its host's turn —
    it is cancelled and never requested — and a page on the wire is fetched, recorded, counted and marked by the
    summary, the records, the replay, the replayed corpus and the WARC compiler alike."""
    tm = get_text_model(small)
    with serve_corpus(small, n_hosts=2, latency=0.3) as site:
        seeds = tuple(site.url(h, "/") for h in site.hosts)
        s = LiveCrawlSettings(seeds=seeds, topic="geology", max_pages=8, scope="any", concurrency=4, per_host=2,
                              policy=FetchPolicy(delay=1.0, **FAST), focus_slack=None)  # every free slot filled
        warc = tmp_path / "end.warc.gz"
        live = crawl_live(make_agent("best-first"), s, warc=warc, text=tm, progress=None, handle_signals=False)
        requested = {e.path for e in site.requests()}
        replayed, web = _replay(warc, tm, s, "best-first")
    after = live.summary()["after_last_step"]
    account = read_account(warc)["after_last_step"]
    assert after["in_flight"] >= 2 and after["cancelled"] >= 1, after
    assert after["in_flight"] == after["fetched"] + after["cancelled"]
    # what was cancelled never reached the servers; what was fetched after the last step is in the WARC
    from urllib.parse import urlsplit

    in_flight_urls = [u for u in live.fetched_urls if u is not None and u not in set(live.landed_urls)]
    fetched_after = set(account["not_in_crawl"])
    assert len(fetched_after) == after["fetched"] and fetched_after <= set(in_flight_urls)
    cancelled = [u for u in in_flight_urls if u not in fetched_after]
    assert len(cancelled) == after["cancelled"]
    assert not {urlsplit(u).path for u in cancelled} & requested, "a cancelled page reached the wire"
    recorded = {r.url for r in read_fetches(warc)}
    assert fetched_after <= recorded and not set(cancelled) & recorded
    # one account: the replay counts the same, the replayed corpus and the compiled WARC mark the same pages
    assert web.counters()["after_last_step"] == after
    assert replayed.reward_sum == live.episode.reward_sum
    rc = replay_corpus(warc, text=tm)
    assert sorted(rc.urls[i] for i in rc.meta["fetched_after_last_step"]) == sorted(fetched_after)
    assert len(rc.meta["fetched"]) == live.summary()["pages"] + after["fetched"]
    wc = load_warc(warc)
    assert sorted(wc.urls[i] for i in wc.meta.get("fetched_after_last_step", [])) == sorted(fetched_after)


def test_a_held_fetcher_sends_no_new_page_request_and_lets_one_on_the_wire_finish():
    pages = {"a": {"/slow": Response(html_page("slow"), delay=0.6), "/next": html_page("next"),
                   "/more": html_page("more")}}
    with serve_site(pages) as site, PoliteFetcher(FetchPolicy(delay=5.0, obey_robots=False, **FAST)) as f:
        f.fetch(site.url("a", "/more"))  # the host's next turn is 5 s away
        out: dict[str, object] = {}
        t = threading.Thread(target=lambda: out.update(r=f.fetch(site.url("a", "/next"))))
        t.start()
        time.sleep(0.3)
        t0 = time.monotonic()
        f.hold_pages()
        t.join(5.0)
        assert not t.is_alive() and time.monotonic() - t0 < 1.0
        assert out["r"].error == "cancelled"  # type: ignore[attr-defined]
        assert [e.path for e in site.requests()] == ["/more"]  # never sent
    with serve_site(pages) as site, PoliteFetcher(FetchPolicy(delay=0.0, obey_robots=False, **FAST)) as f:
        t = threading.Thread(target=lambda: out.update(r=f.fetch(site.url("a", "/slow"))))
        t.start()
        time.sleep(0.3)  # on the wire: the server answers after 0.6 s
        f.hold_pages()
        t.join(5.0)
        assert out["r"].ok  # type: ignore[attr-defined]
        assert f.fetch(site.url("a", "/next")).error == "cancelled"
        assert [e.path for e in site.requests()] == ["/slow"]
