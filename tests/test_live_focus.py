"""Focus under concurrency: with pages in flight, a free slot is filled only with a page close to the best the
crawl knows (``focus_slack``), so a crawl of W pages in flight finds, page for page, what one page in flight
finds — on a loopback web whose relevant pages sit on two of eight hosts — while a window that fills every free
slot does not."""
from __future__ import annotations

import math
from urllib.parse import urlsplit

import numpy as np
import pytest

from gym_crawl.agents import make_agent, make_env_for, run_episode
from gym_crawl.benchmarks.live_concurrency import spread_over_hosts, topic_on_hosts
from gym_crawl.crawl.window import DEFAULT_FOCUS_SLACK, check_focus_slack
from gym_crawl.text.model import get_text_model
from gym_crawl.web.fetcher import FetchPolicy
from gym_crawl.web.live import LiveWeb
from gym_crawl.web.serve.server import corpus_paths, serve_corpus
from gym_crawl.webgen.synthetic import generate_synthetic

TOPICS = ("cancer", "astronomy")  # pages of each on two of eight hosts; cancer has many, astronomy fewer
HOSTS = 8
PAGES = 60  # relevant pages are compared among the first PAGES pages landed (the seed aside)
POLICY = {"delay": 0.05, "rate": None, "connect_timeout": 2.0, "read_timeout": 5.0, "max_time": 10.0}


def _truth(corpus, topic: str) -> np.ndarray:
    env = make_env_for(make_agent("random"), corpus=corpus, topic=topic, max_episode_steps=1)
    env.reset(seed=0)
    return np.asarray(env.unwrapped.view.hidden_relevance(), bool)


@pytest.fixture(scope="module")
def base_web():
    return generate_synthetic(3000, seed=0, n_domains=HOSTS)


def _live_relevant(corpus, topic: str, concurrency: int) -> int:
    """Relevant pages (the topic's label) among the first PAGES pages a live best-first crawl of the served
    ``corpus`` landed, with the default focus rule."""
    truth = _truth(corpus, topic)
    page_of = {p: i for i, p in enumerate(corpus_paths(corpus))}
    main = corpus.page_id(topic.capitalize())
    with serve_corpus(corpus, n_hosts=HOSTS) as site, \
            LiveWeb([site.page_urls[main]], policy=FetchPolicy(**POLICY), scope="any", text=get_text_model(corpus),
                    max_pages=20_000) as web:
        agent = make_agent("best-first")
        env = make_env_for(agent, corpus=web, topic=topic, max_episode_steps=PAGES + concurrency + 1,
                           concurrency=concurrency)
        res = run_episode(env, agent, seed=0)
        landed = [web.url(int(p)) for p in res.fetched[1:]]
        assert max(site.max_concurrent(h) for h in site.hosts) == 1  # still one request at a time per host
    assert len(landed) >= PAGES
    return sum(bool(truth[page_of[urlsplit(u).path]]) for u in landed[:PAGES])


def test_eight_in_flight_find_what_one_finds_at_equal_pages(base_web):
    """Each topic's pages on two of eight loopback hosts (the other six hold the rest of the web): at equal pages,
    eight pages in flight find at least 95 % of the relevant pages one page in flight finds, over the topics."""
    one = eight = 0
    for topic in TOPICS:
        web = topic_on_hosts(base_web, _truth(base_web, topic), HOSTS, on=2, seed=0)
        one += _live_relevant(web, topic, 1)
        eight += _live_relevant(web, topic, 8)
    assert one >= 40, one  # the topics are there to find
    assert eight >= 0.95 * one, (eight, one)


def test_the_rule_keeps_focus_and_idles_slots_only_when_better_pages_wait(base_web):
    """On the virtual clock. Where a topic's pages sit on two of eight hosts, filling every free slot loses most of
    the relevant pages at equal pages, and the focused window keeps them by keeping fewer pages in flight; where
    every topic spreads over all hosts, the focused window idles less, and a wider slack fills it."""
    topic = TOPICS[0]
    truth = _truth(base_web, topic)
    rel, rate = {}, {}
    for name, web in (("focused", topic_on_hosts(base_web, truth, HOSTS, on=2)),
                      ("spread", spread_over_hosts(base_web, HOSTS))):
        t = _truth(web, topic)
        for slack in (DEFAULT_FOCUS_SLACK, 0.5, math.inf):
            agent = make_agent("best-first")
            env = make_env_for(agent, corpus=web, topic=topic, max_episode_steps=160, concurrency=8,
                               focus_slack=slack)
            res = run_episode(env, agent, seed=0)
            fetched = np.asarray(res.fetched)[1:PAGES + 1]
            rel[name, slack] = int(t[fetched].sum())
            rate[name, slack] = (len(res.fetched) - 1) / env.unwrapped.page_source.now  # pages per virtual second
    assert rel["focused", math.inf] < 0.6 * rel["focused", DEFAULT_FOCUS_SLACK], rel
    assert rate["focused", DEFAULT_FOCUS_SLACK] < 0.6 * rate["focused", math.inf], rate
    assert rate["spread", DEFAULT_FOCUS_SLACK] > 1.3 * rate["focused", DEFAULT_FOCUS_SLACK], rate
    # the knob: a slack of 0.5 buys nearly all the pages per second where the topic spreads, without a loss there
    assert rate["spread", 0.5] > 0.8 * rate["spread", math.inf], rate
    assert rel["spread", 0.5] >= 0.95 * rel["spread", DEFAULT_FOCUS_SLACK], rel


@pytest.mark.parametrize("bad", [-0.1, float("nan"), "0.5", None, True])
def test_a_bad_focus_slack_is_one_error_naming_it(bad):
    with pytest.raises(ValueError, match="focus_slack must be a number >= 0"):
        check_focus_slack(bad)


def test_the_env_refuses_a_bad_focus_slack(base_web):
    with pytest.raises(ValueError, match="focus_slack must be a number >= 0.*got -1"):
        make_env_for(make_agent("best-first"), corpus=base_web, topic="geology",
                     max_episode_steps=5, concurrency=4, focus_slack=-1)


def test_the_live_settings_carry_the_knob_to_the_env_and_the_warc():
    from gym_crawl.web.settings import DEFAULT_FOCUS_SLACK as SETTINGS_DEFAULT
    from gym_crawl.web.settings import LiveCrawlSettings

    assert SETTINGS_DEFAULT == DEFAULT_FOCUS_SLACK  # one default, whether a crawl is built by settings or by the env
    s = LiveCrawlSettings(seeds=("http://127.0.0.2:8000/",), topic="rock", max_pages=10, concurrency=8)
    assert s.focus_slack == DEFAULT_FOCUS_SLACK and s.env_keywords()["focus_slack"] == DEFAULT_FOCUS_SLACK
    off = s.replace(focus_slack=None)
    assert off.env_keywords()["focus_slack"] == math.inf
    assert LiveCrawlSettings.from_dict(off.to_dict()) == off  # recorded as JSON null, read back as off
    assert off.differences(s.to_dict()) == [("focus_slack", DEFAULT_FOCUS_SLACK, None)]  # a resume must keep it
    for bad in (-1, math.inf, math.nan, "0.1", True):
        with pytest.raises(ValueError, match="LiveCrawlSettings.focus_slack must be a finite number >= 0"):
            s.replace(focus_slack=bad)
    with pytest.raises(ValueError, match="must not set focus_slack"):
        LiveCrawlSettings(seeds=("http://127.0.0.2:8000/",), topic="rock", max_pages=10, env={"focus_slack": 1.0})


@pytest.mark.parametrize(("flag", "want"), [(None, DEFAULT_FOCUS_SLACK), ("0.5", 0.5), ("off", None), ("0", 0.0)])
def test_the_command_line_flag(flag, want):
    from gym_crawl.cli.app import build_parser
    from gym_crawl.cli.crawl import live_settings

    argv = ["crawl", "--live", "http://127.0.0.2:8000/", "--topic", "rock", "--concurrency", "8"]
    args = build_parser().parse_args(argv + ([] if flag is None else ["--focus-slack", flag]))
    assert live_settings(args).focus_slack == want


@pytest.mark.parametrize("bad", ["-1", "inf", "nan", "wide"])
def test_a_bad_flag_value_is_one_error_line_with_exit_2(bad, capsys):
    from gym_crawl.cli.app import main

    code = main(["crawl", "--live", "http://127.0.0.2:8000/", "--topic", "rock", "--concurrency", "8",
                 "--focus-slack", bad])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--focus-slack must be a number >= 0" in err and repr(bad) in err
