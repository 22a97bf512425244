"""One settings object for a live crawl: ``LiveCrawlSettings`` is validated at construction (one line naming the
field and its range), round-trips through JSON, is recorded in the WARC's warcinfo, is checked on resume (the
differing fields named), is what the command line builds from its flags, and the former keywords of
``crawl_live`` still build the same settings, with a ``DeprecationWarning``."""
from __future__ import annotations

import json

import pytest

import gym_crawl  # noqa: F401
from gym_crawl.agents import make_agent
from gym_crawl.agents.live_crawl import crawl_live
from gym_crawl.text.model import get_text_model
from gym_crawl.web.offer import OfferRules
from gym_crawl.web.policy import FetchPolicy
from gym_crawl.web.serve.server import serve_corpus
from gym_crawl.web.settings import SETTINGS_FIELD, LiveCrawlSettings, read_settings
from gym_crawl.web.warc_io import read_warcinfo
from tests.conftest import make_tiny_corpus

FAST = FetchPolicy(delay=0.0, rate=None, connect_timeout=2.0, read_timeout=5.0, max_time=10.0)
BASE = {"seeds": ("http://127.0.0.2:8000/",), "topic": "geology", "max_pages": 10}


@pytest.fixture(scope="module")
def small():
    return make_tiny_corpus(160, seed=1)


@pytest.mark.parametrize("field, value, words", [
    ("max_pages", 0, "max_pages must be an integer from 1 to 10000000, got 0"),
    ("max_pages", True, "max_pages must be an integer from 1 to 10000000, got True"),
    ("seed", -1, "seed must be an integer from 0 to"),
    ("concurrency", 0, "concurrency must be an integer from 1 to 1024, got 0"),
    ("concurrency", 2000, "concurrency must be an integer from 1 to 1024, got 2000"),
    ("per_host", 1.5, "per_host must be an integer from 1 to 1024, got 1.5"),
    ("capacity", 0, "capacity must be an integer from 1 to 100000000 or None, got 0"),
    ("max_candidates", 0, "max_candidates must be an integer from 1 to 1000000 or None, got 0"),
    ("domain_cap", -3, "domain_cap must be an integer from 1 to 10000000 or None, got -3"),
    ("scope", "web", "scope must be one of hosts, domain, any, got 'web'"),
    ("topic", "  ", "topic must be non-empty words"),
    ("seeds", ("ftp://x.org/",), "seeds: 'ftp://x.org/' is not an absolute http(s) URL"),
    ("seeds", "http://a.org/", "seeds must be a non-empty list of URLs"),
    ("seeds", (), "seeds must be a non-empty list of URLs, got none"),
    ("general_text", "yes", "general_text must be None, True or False"),
    ("env", {"topic": "x"}, "env must not set topic: topic comes from the settings' topic"),
    ("env", {"reducer": "topk"}, "env must not set reducer: reducer is the field reducer"),
    ("env", {"text": {"general": False}}, "env must not set text: text is the field general_text"),
])
def test_a_bad_setting_is_one_line_naming_the_field_and_its_range(field, value, words):
    with pytest.raises(ValueError) as e:
        LiveCrawlSettings(**{**BASE, field: value})
    msg = str(e.value)
    assert f"LiveCrawlSettings.{field}" in msg and words in msg and "\n" not in msg


def test_settings_are_frozen_canonical_and_round_trip_through_json():
    s = LiveCrawlSettings(seeds=["HTTP://A.org:80/x#frag", "http://a.org/x"], topic="rock", max_pages=50,
                          concurrency=8, per_host=2, policy=FetchPolicy(delay=0.5, rate=None), offer=OfferRules.none(),
                          features="combined", max_candidates=16, general_text=False, env={"time_feature": "none"})
    assert s.seeds == ("http://a.org/x",)  # canonicalised, duplicates dropped
    with pytest.raises(AttributeError):
        s.concurrency = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        s.env["x"] = 1  # type: ignore[index]
    d = json.loads(json.dumps(s.to_dict()))
    back = LiveCrawlSettings.from_dict(d)
    assert back == s and hash(back) == hash(s)
    assert s.env_keywords() == {"topic": "rock", "max_episode_steps": 50, "concurrency": 8, "per_host": 2,
                                "features": "combined", "max_candidates": 16, "text": {"general": False},
                                "time_feature": "none", "focus_slack": 0.0}
    assert s.page_capacity == 10_000 and s.replace(capacity=77).page_capacity == 77
    with pytest.raises(ValueError, match="unknown LiveCrawlSettings fields \\['judge'\\]"):
        LiveCrawlSettings.from_dict({**d, "judge": "x"})


def test_env_fields_split_env_keywords_into_typed_fields():
    class Judge:
        pass

    kw = LiveCrawlSettings.env_fields({"features": "combined", "reducer": None, "reward": Judge(), "domain_cap": 3,
                                       "text": {"general": True}, "time_feature": "none"})
    assert kw["features"] == "combined" and kw["domain_cap"] == 3 and kw["general_text"] is True
    assert set(kw["env"]) == {"reward", "time_feature"}  # a reward object stays an env keyword
    s = LiveCrawlSettings(**BASE, **kw)
    assert s.to_dict()["env"] == {"reward": "<Judge>", "time_feature": "none"}  # recorded by its type name


def test_differences_name_the_fields_and_let_a_resume_change_budget_and_timing():
    s = LiveCrawlSettings(**BASE, concurrency=4)
    old = s.replace(max_pages=3, concurrency=2, policy=FetchPolicy(delay=2.0, max_pages_per_host=50)).to_dict()
    assert s.differences(old) == [("concurrency", 2, 4), ("policy.max_pages_per_host", 50, 10000)]
    assert [k for k, _, _ in s.differences(old, resuming=False)] == [
        "concurrency", "max_pages", "policy.delay", "policy.max_pages_per_host"]
    # settings recorded before a field existed: the missing field counts as its default
    older = {k: v for k, v in s.to_dict().items() if k not in ("general_text", "offer")}
    assert s.differences(older) == []


def test_settings_are_recorded_in_the_warcinfo_and_checked_on_resume(small, tmp_path):
    tm = get_text_model(small)
    with serve_corpus(small, n_hosts=3) as site:
        seeds = tuple(site.url(h, "/") for h in site.hosts)
        s = LiveCrawlSettings(seeds=seeds, topic="geology", max_pages=6, scope="any", concurrency=3, policy=FAST)
        warc = tmp_path / "s.warc.gz"
        res = crawl_live(make_agent("best-first"), s, warc=warc, text=tm, progress=None, handle_signals=False)
        assert res.settings == s and res.episode.steps == 6
        info = read_warcinfo(warc)[0]
        assert json.loads(info[SETTINGS_FIELD])["concurrency"] == 3 and info["gym-crawl-agent"] == "best-first"
        assert read_settings(warc) == s
        # another concurrency and seed: refused before any request, naming both fields and both values
        n = len(site.log)
        with pytest.raises(ValueError) as e:
            crawl_live(make_agent("best-first"), s.replace(concurrency=2, seed=7, max_pages=9), warc=warc,
                       resume=True, text=tm, progress=None, handle_signals=False)
        assert "concurrency=3 (this run: 2)" in str(e.value) and "seed=0 (this run: 7)" in str(e.value)
        with pytest.raises(ValueError, match="agent='best-first' \\(this run: 'bfs'\\)"):
            crawl_live(make_agent("bfs"), s, warc=warc, resume=True, text=tm, progress=None, handle_signals=False)
        assert len(site.log) == n
        # a larger budget and another delay continue the crawl
        more = s.replace(max_pages=9, policy=FetchPolicy(**{**FAST.to_dict(), "delay": 0.01}))
        res2 = crawl_live(make_agent("best-first"), more, warc=warc, resume=True, text=tm, progress=None,
                          handle_signals=False)
        assert res2.episode.steps == 9 and read_settings(warc) == s  # the first run's settings lead the file
        # a budget whose default capacity differs (max(10,000, 50 × 300)) keeps the recorded capacity
        res3 = crawl_live(make_agent("best-first"), s.replace(max_pages=300), warc=warc, resume=True, text=tm,
                          progress=None, handle_signals=False)
        assert res3.episode.steps > 9


def test_the_former_keywords_build_the_same_settings_with_a_deprecation_warning(small):
    tm = get_text_model(small)
    with serve_corpus(small, n_hosts=2) as site:
        seeds = [site.url(h, "/") for h in site.hosts]
        from gym_crawl.web.fetcher import PoliteFetcher

        with PoliteFetcher(FAST) as fetcher:
            with pytest.warns(DeprecationWarning, match="LiveCrawlSettings"):
                old = crawl_live(make_agent("best-first"), seeds, max_pages=5, topic="geology", scope="any",
                                 delay=0.0, rate=None, concurrency=2, env_overrides={"reducer": "topk"},
                                 text=tm, fetch=fetcher.fetch, progress=None, handle_signals=False)
            new_settings = LiveCrawlSettings(seeds=tuple(seeds), topic="geology", max_pages=5, scope="any",
                                             concurrency=2, reducer="topk", policy=FetchPolicy(delay=0.0, rate=None))
            assert old.settings == new_settings
    with pytest.raises(TypeError, match="beside settings"):
        crawl_live(make_agent("best-first"), new_settings, concurrency=3)
    with pytest.raises(TypeError, match="unexpected keyword arguments \\['max_page'\\]"):
        crawl_live(make_agent("best-first"), seeds, max_page=5, topic="x")


def test_the_command_line_builds_the_settings_from_its_flags():
    from gym_crawl.cli.app import build_parser
    from gym_crawl.cli.crawl import live_settings

    args = build_parser().parse_args([
        "crawl", "--live", "http://127.0.0.2:8000/", "http://127.0.0.3:8000/", "--topic", "rock", "--max-pages",
        "40", "--seed", "3", "--scope", "any", "--concurrency", "8", "--per-host", "2", "--delay", "0.5", "--rate",
        "0", "--user-agent-contact", "https://example.org/c", "--k", "12", "--reducer", "topk", "--text", "none"])
    assert live_settings(args) == LiveCrawlSettings(
        seeds=("http://127.0.0.2:8000/", "http://127.0.0.3:8000/"), topic="rock", max_pages=40, seed=3, scope="any",
        concurrency=8, per_host=2, policy=FetchPolicy(delay=0.5, rate=None, contact="https://example.org/c"),
        max_candidates=12, reducer="topk", general_text=False)
