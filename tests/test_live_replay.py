"""Sim-to-real parity on the loopback site: a live crawl recorded to WARC replays bit for bit
(``LiveWeb.from_warc``), and a corpus served as a site round-trips through a live crawl and its WARC.

Every request goes to a site these tests start on 127.0.0.0/8 (the network guard of conftest.py fails any
other); the server's own log shows that replays send nothing."""
from __future__ import annotations

from collections import Counter

import gymnasium as gym
import numpy as np
import pytest

import gym_crawl  # noqa: F401
from gym_crawl.agents import make_agent, make_env_for, run_episode
from gym_crawl.text.model import TextModel, get_text_model
from gym_crawl.web.fetcher import FetchPolicy
from gym_crawl.web.live import LiveWeb, replay_corpus
from gym_crawl.web.serve.server import serve_corpus
from gym_crawl.web.warc_io import read_fetches
from tests.conftest import make_tiny_corpus
from tests.helpers import fetch_now

FAST = FetchPolicy(delay=0.0, rate=None, connect_timeout=2.0, read_timeout=5.0, max_time=10.0)


@pytest.fixture(scope="module")
def small():
    return make_tiny_corpus(160, seed=1)


@pytest.fixture(scope="module")
def site(small):
    with serve_corpus(small, n_hosts=2) as s:
        yield s


class Record(gym.Wrapper):
    """Keeps a copy of every observation, reward and fetched page (passes everything through)."""

    def __init__(self, env):
        super().__init__(env)
        self.obs, self.rewards, self.pages, self.errors = [], [], [], []

    def reset(self, **kw):
        obs, info = self.env.reset(**kw)
        self.obs.append(_copy(obs))
        return obs, info

    def step(self, action):
        obs, r, term, trunc, info = self.env.step(action)
        self.obs.append(_copy(obs))
        self.rewards.append(r)
        self.pages.append(info["fetched_page"])
        self.errors.append(info["fetch_error"])
        return obs, r, term, trunc, info


def _copy(obs):
    return {k: v.copy() for k, v in obs.items()} if isinstance(obs, dict) else obs.copy()


def _crawl(web, agent, steps, seed=0):
    env = Record(make_env_for(agent, corpus=web, topic="geology", max_episode_steps=steps))
    res = run_episode(env, agent, seed=seed)
    return env, res


def _same(a: Record, b: Record, web_a: LiveWeb, web_b: LiveWeb) -> None:
    assert [web_a.url(p) if p >= 0 else None for p in a.pages] == [web_b.url(p) if p >= 0 else None for p in b.pages]
    assert a.pages == b.pages and a.rewards == b.rewards and a.errors == b.errors
    assert len(a.obs) == len(b.obs)
    for x, y in zip(a.obs, b.obs):
        if isinstance(x, dict):
            for k in x:
                np.testing.assert_array_equal(x[k], y[k])
        else:
            np.testing.assert_array_equal(x, y)


def _trained_lfa(small):
    agent = make_agent("lfa-sync")
    env = make_env_for(agent, corpus=small, topic="geology", max_episode_steps=60)
    run_episode(env, agent, seed=0)
    return agent.state_dict()


@pytest.mark.parametrize("name", ["best-first", "random", "lfa-sync"])
def test_live_crawl_replays_bit_for_bit_from_its_warc(small, site, tmp_path, name):
    tm = get_text_model(small)
    seed_url = site.page_urls[small.page_id("Geology")]
    warc = tmp_path / "crawl.warc.gz"
    state = _trained_lfa(small) if name == "lfa-sync" else None

    def agent():
        a = make_agent(name)
        if state is not None:
            a.load_state_dict({k: v.copy() for k, v in state.items()})
        return a

    live = LiveWeb([seed_url], policy=FAST, warc=warc, text=tm, scope="any", max_pages=5000)
    a, res = _crawl(live, agent(), 25, seed=4)
    live.close()
    assert res.steps == 25 and live.stats["fetches"] >= 26
    fetched = list(read_fetches(warc))
    assert len(fetched) == live.stats["fetches"]
    n_log = len(site.log)
    replay = LiveWeb.from_warc(warc, text=tm)
    assert replay.max_pages == 5000 and replay.seed_urls == live.seed_urls
    b, res2 = _crawl(replay, agent(), 25, seed=4)
    assert len(site.log) == n_log, "the replay sent requests"
    _same(a, b, live, replay)
    assert res2.relevant_found == res.relevant_found
    with pytest.raises(ValueError, match="reference vocabulary"):
        LiveWeb.from_warc(warc)  # crawled with the tiny corpus' text model: another vocabulary is refused


def test_replay_past_the_archive_fails_those_fetches(small, site, tmp_path):
    tm = get_text_model(small)
    warc = tmp_path / "short.warc.gz"
    live = LiveWeb([site.page_urls[small.page_id("Geology")]], policy=FAST, warc=warc, text=tm, scope="any")
    _crawl(live, make_agent("best-first"), 5)
    live.close()
    replay = LiveWeb.from_warc(warc, text=tm)
    env, _ = _crawl(replay, make_agent("best-first"), 10)
    assert env.errors[:5] == [""] * 5 and set(env.errors[5:]) == {"not-in-archive"}


def test_round_trip_corpus_site_warc_corpus(small, site, tmp_path):
    """corpus → site → live crawl → WARC → corpus keeps titles, links, anchors and texts (token level).

    Not kept, by construction: a link's surrounding text is the 150 characters around its anchor in the
    served page (its neighbours in the link list), not the stored context; parallel links and self-links
    collapse (one link per target, as the extractor keeps); page ids follow discovery order."""
    warc = tmp_path / "full.warc.gz"
    live = LiveWeb([site.page_urls[small.page_id("Geology")]], policy=FAST, warc=warc, scope="any")
    env = make_env_for("bfs", corpus=live, topic="geology", max_episode_steps=small.n_pages)
    res = run_episode(env, make_agent("bfs"), seed=0)
    live.close()
    snap = replay_corpus(warc)
    same = live.to_corpus()  # the WARC rebuilds the live crawl's id space exactly
    assert snap.urls.tolist() == same.urls.tolist() and snap.vocab.tolist() == same.vocab.tolist()
    assert snap.titles.tolist() == same.titles.tolist()
    for k in ("link_ptr", "link_dst", "text_ptr", "text_terms", "text_counts", "anchor_terms", "context_terms"):
        np.testing.assert_array_equal(getattr(snap, k), getattr(same, k), err_msg=k)
    url_to_page = {u: i for i, u in enumerate(site.page_urls)}
    orig = [url_to_page[u] for u in snap.urls]  # snapshot page → original page
    fetched = snap.meta["fetched"]
    assert len(fetched) == res.pages_fetched > 100

    def words(c, ptr, terms, a, b):
        return [c.vocab[int(t)] for t in terms[ptr[a]:ptr[b]]]

    for p in fetched:
        q = orig[p]
        assert snap.titles[p] == small.titles[q] and snap.page_id(site.page_urls[q]) == p
        a, b = small.text_ptr[q], small.text_ptr[q + 1]
        want = Counter({small.vocab[int(t)]: int(k) for t, k in zip(small.text_terms[a:b], small.text_counts[a:b])})
        a, b = snap.text_ptr[p], snap.text_ptr[p + 1]
        got = Counter({snap.vocab[int(t)]: int(k) for t, k in zip(snap.text_terms[a:b], snap.text_counts[a:b])})
        assert got == want, small.titles[q]
        # links: one per distinct target, in first-occurrence order, with the first link's anchor words
        first: dict[int, list[str]] = {}
        for e in range(small.link_ptr[q], small.link_ptr[q + 1]):
            t = int(small.link_dst[e])
            if t != q and t not in first:
                first[t] = words(small, small.anchor_ptr, small.anchor_terms, e, e + 1)
        got_links = [(orig[int(snap.link_dst[e])], words(snap, snap.anchor_ptr, snap.anchor_terms, e, e + 1))
                     for e in range(snap.link_ptr[p], snap.link_ptr[p + 1])]
        assert got_links == list(first.items()), small.titles[q]


def test_served_corpus_crawled_live_gives_the_offline_trajectory(small, site, tmp_path):
    """Best-first crawling the site live fetches the same pages in the same order as best-first crawling,
    offline, the corpus compiled from a complete crawl of that site, with the same word vectors."""
    tm = get_text_model(small)
    seed = site.page_urls[small.page_id("Geology")]
    full = LiveWeb([seed], policy=FAST, text=tm, scope="any")
    env = make_env_for("bfs", corpus=full, topic="geology", max_episode_steps=small.n_pages)
    run_episode(env, make_agent("bfs"), seed=0)
    full.close()
    compiled = full.to_corpus()
    ot = env.unwrapped.text
    V = compiled.n_words
    text = TextModel(compiled, np.array(ot.idf[:V]), np.array(ot.vectors[:V]), dict(ot.meta))
    off = make_env_for("best-first", corpus=compiled, topic="geology", max_episode_steps=40, text=text,
                       seeds=[seed])
    r_off = run_episode(off, make_agent("best-first"), seed=0)
    live = LiveWeb([seed], policy=FAST, text=tm, scope="any")
    r_live = run_episode(make_env_for("best-first", corpus=live, topic="geology", max_episode_steps=40),
                         make_agent("best-first"), seed=0)
    live.close()
    assert [compiled.url(int(p)) for p in r_off.fetched] == [live.url(int(p)) for p in r_live.fetched]
    np.testing.assert_array_equal(r_off.rewards, r_live.rewards)


def test_a_misbehaving_site_gives_spent_steps_with_their_reasons(tmp_path):
    """On the misbehaving site every trouble is a spent step whose fetch_error says why; the server's log
    shows no request to a path robots.txt disallows, and the replay of the WARC gives the same errors."""
    from gym_crawl.web.serve.server import MISBEHAVIOURS, MisbehaveSettings, serve_site

    settings = MisbehaveSettings(slow_seconds=3.0, retry_after=1, trickle_pace=0.002)
    policy = FetchPolicy(delay=0.0, rate=None, connect_timeout=5.0, read_timeout=1.0, max_time=4.0,
                         max_bytes=100_000, max_retry_after=1.0, max_pages_per_pattern=5)
    with serve_site({}, misbehave={"a": list(MISBEHAVIOURS)}, settings=settings) as site:
        warc = tmp_path / "bad.warc.gz"
        web = LiveWeb([site.url("a", "/")], policy=policy, warc=warc, max_pages=500)
        env = Record(gym.make("WikiCrawl-v1", corpus=web, topic="geology calendar", max_episode_steps=60,
                              reducer="topk", action="page", observation="state"))
        env.reset(seed=0)
        while True:  # breadth-first over everything the index links to
            F = np.sort(env.unwrapped.view.frontier_pages())
            _, r, term, trunc, info = env.step(int(F[0]))
            if info["fetch_error"]:
                assert r == -1.0
            if term or trunc:
                break
        web.close()
        reasons = {e for e in env.errors if e}
        want = {"http-404", "http-500", "redirect-loop", "too-large"}
        assert want <= reasons, reasons
        # the slow page (connect if loaded); the first redirect chain past the pattern cap (its hops count)
        assert reasons - want <= {"timeout", "connect", "trap:pattern", "content-encoding"}, reasons
        assert env.errors.count("redirect-loop") == 1 and env.errors.count("trap:pattern") <= 2, env.errors
        # what cannot give a page is never offered: robots.txt's /private/, the PDF and PNG, the traps
        refused = web.counters()["refused"]
        assert refused["robots"] >= 1 and refused["not-html"] == 2, refused
        assert {"trap:pattern", "trap:repeated-segment"} <= set(refused), refused
        assert not [e for e in site.log if e.path.startswith("/private/")]
        assert not [e for e in site.log if e.path.endswith((".pdf", ".png"))]
        assert len([e for e in site.log if e.path.startswith("/calendar/")]) <= 5  # the trap, bounded
    replay = LiveWeb.from_warc(warc)
    env2 = Record(gym.make("WikiCrawl-v1", corpus=replay, topic="geology calendar", max_episode_steps=60,
                           reducer="topk", action="page", observation="state"))
    env2.reset(seed=0)
    for p in env.pages:
        env2.step(p)
    assert env2.errors == env.errors and env2.rewards == env.rewards


def test_declared_encodings_decode_as_in_a_warc_corpus(tmp_path):
    """A Latin-1 page declared in the Content-Type header decodes the same live and from the WARC."""
    from gym_crawl.web.serve.server import serve_site

    with serve_site({}, misbehave={"a": ["encodings"]}) as site:
        web = LiveWeb([site.url("a", "/latin1.html")], policy=FAST, warc=tmp_path / "enc.warc.gz")
        assert fetch_now(web, 0) == ""
        web.close()
    words = {web.vocab[int(t)] for t in web.text_terms[web.text_lo[0]:web.text_hi[0]]}
    assert any(not w.isascii() for w in words), words  # accented words, not mojibake
    assert all("Ã" not in w for w in words), words
    replay = LiveWeb.from_warc(tmp_path / "enc.warc.gz")
    fetch_now(replay, 0)
    assert {replay.vocab[int(t)] for t in replay.text_terms[replay.text_lo[0]:replay.text_hi[0]]} == words


def test_resume_refuses_another_configuration(small, site, tmp_path):
    warc = tmp_path / "cfg.warc.gz"
    seed = site.page_urls[small.page_id("Geology")]
    LiveWeb([seed], policy=FAST, warc=warc, scope="any", max_pages=300).close()
    with pytest.raises(ValueError, match="max_pages=300"):
        LiveWeb([seed], policy=FAST, warc=warc, resume=True, scope="any", max_pages=400)
    with pytest.raises(FileExistsError):
        LiveWeb([seed], policy=FAST, warc=warc, scope="any", max_pages=300)  # never overwritten silently
    LiveWeb([seed], policy=FAST, warc=warc, resume=True, scope="any", max_pages=300).close()


def test_the_warc_compiler_reads_a_live_crawl_as_the_replay_does(small, site, tmp_path):
    """load_warc (the WARC corpus loader) and replay_corpus see the same pages in a live crawl's WARC: per
    URL the same title, bag of words, and out-links (as URLs, in order) with the same anchor words."""
    from gym_crawl.web.warc import load_warc

    warc = tmp_path / "x.warc.gz"
    live = LiveWeb([site.page_urls[small.page_id("Geology")]], policy=FAST, warc=warc, scope="any")
    run_episode(make_env_for("bfs", corpus=live, topic="geology", max_episode_steps=40), make_agent("bfs"), seed=0)
    live.close()
    a, b = replay_corpus(warc), load_warc(warc, workers=1)
    fetched = [a.urls[p] for p in a.meta["fetched"]]
    assert len(fetched) == 41 and set(fetched) <= set(b.urls.tolist())

    def page(c, url):
        p = c.page_id(url)
        bag = {c.vocab[int(t)]: int(k) for t, k in zip(c.text_terms[c.text_ptr[p]:c.text_ptr[p + 1]],
                                                       c.text_counts[c.text_ptr[p]:c.text_ptr[p + 1]])}
        links = [(c.urls[int(c.link_dst[e])],
                  [c.vocab[int(t)] for t in c.anchor_terms[c.anchor_ptr[e]:c.anchor_ptr[e + 1]]])
                 for e in range(c.link_ptr[p], c.link_ptr[p + 1])]
        return c.titles[p], bag, [x for x in links if x[0] in set(fetched)]

    for url in fetched:
        assert page(a, url) == page(b, url), url
