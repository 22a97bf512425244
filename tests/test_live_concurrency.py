"""Pages in flight (``concurrency > 1``): the window on static corpora (the virtual clock, the per-host mask,
W = 1 equal to fetching on the spot), and live crawls with several requests open on the loopback site — replayed
from the WARC bit for bit with zero requests, polite per host as the server's own log shows, robots.txt read
before a host's pages are offered, non-HTML and failing URL shapes never offered, counters that match the wire."""
from __future__ import annotations

import dataclasses
import json
import math
from collections import defaultdict
from urllib.parse import urlsplit

import gymnasium as gym
import numpy as np
import pytest

import gym_crawl  # noqa: F401
from gym_crawl.agents import make_agent, make_env_for, run_episode
from gym_crawl.corpus.page_source import FetchTiming, SimulatedFetches
from gym_crawl.crawl.window import INFLIGHT, PARKED
from gym_crawl.envs.wiki_crawl import WINDOW_INFO_KEYS
from gym_crawl.text.model import get_text_model
from gym_crawl.web.fetcher import FetchPolicy
from gym_crawl.web.live import LiveWeb
from gym_crawl.web.offer import OfferRules, failure_keys, not_html_reason
from gym_crawl.web.serve.server import Response, html_page, robots_txt, serve_corpus, serve_site
from gym_crawl.web.warc_io import read_decisions, read_fetches
from tests.conftest import make_tiny_corpus
from tests.helpers import interrupt_after, jittered, valid_warc

FAST = {"delay": 0.0, "rate": None, "connect_timeout": 2.0, "read_timeout": 5.0, "max_time": 10.0}


@pytest.fixture(scope="module")
def small():
    return make_tiny_corpus(160, seed=1)


def _trajectory(env, agent, seed=0):
    """Observations, rewards and infos of one episode (copies)."""
    obs, info = env.reset(seed=seed)
    agent.begin_episode(env.unwrapped.view, np.random.default_rng(seed))
    out = [(obs, 0.0, info)]
    while True:
        a = agent.act(obs, info)
        obs, r, term, trunc, info = env.step(a)
        from gym_crawl.agents.base import Transition

        agent.observe(Transition(out[-1][0], a, float(r), obs, term, trunc, info))
        out.append((obs, r, info))
        if term or trunc:
            return out


def _same_trajectory(a, b):
    assert len(a) == len(b)
    for t, ((o1, r1, i1), (o2, r2, i2)) in enumerate(zip(a, b)):
        assert r1 == r2, (t, [(x[2].get("dispatched_page"), list(x[2].get("landed_pages", [])), y[2].get(
            "dispatched_page"), list(y[2].get("landed_pages", []))) for x, y in zip(a[:t + 1], b[:t + 1])])
        for k in o1 if isinstance(o1, dict) else ():
            np.testing.assert_array_equal(o1[k], o2[k])
        if not isinstance(o1, dict):
            np.testing.assert_array_equal(o1, o2)
        for k in ("fetched_page", "pages_fetched", "relevant_found", "frontier_size", "fetch_error"):
            assert i1[k] == i2[k], k


# ------------------------------------------------------------------------------------------------ static corpora
@pytest.mark.parametrize("name", ["best-first", "bfs", "random", "best-first-page", "lfa-sync"])
def test_a_window_of_one_fetches_as_on_the_spot(tiny_corpus, name):
    """W = 1 through the window (the virtual clock) is the MDP of the papers, bit for bit."""
    runs = []
    for kw in ({}, {"timing": {"latency": 0.1, "delay": 1.0}}):
        agent = make_agent(name)
        env = make_env_for(agent, corpus=tiny_corpus, topic="geology", max_episode_steps=60, **kw)
        runs.append(run_episode(env, agent, seed=5))
    a, b = runs
    np.testing.assert_array_equal(a.fetched, b.fetched)
    np.testing.assert_array_equal(a.rewards, b.rewards)
    assert a.relevant_found == b.relevant_found


def test_window_crawls_are_deterministic_and_land_in_completion_order(tiny_corpus):
    runs = []
    for _ in range(2):
        agent = make_agent("best-first")
        env = make_env_for(agent, corpus=tiny_corpus, topic="geology", max_episode_steps=80, concurrency=8)
        runs.append(_trajectory(env, agent))
    _same_trajectory(*runs)
    # the virtual clock: a request starts when its host is free, completes latency later; landing follows it
    src = SimulatedFetches(tiny_corpus, FetchTiming(latency=0.1, delay=1.0))
    d = tiny_corpus.page_domain
    a, b = [int(p) for p in np.flatnonzero(d == d[0])[:2]]
    c = int(np.flatnonzero(d != d[0])[0])
    for p in (a, b, c):
        src.request(p)
    assert src.arrived(False).pages == ()
    assert src.arrived(True).pages in ((a, c), (c, a)) and src.now == pytest.approx(0.1)  # b waits for its host
    assert src.arrived(True).pages == (b,) and src.now == pytest.approx(1.2)
    assert src.pending() == 0 and src.arrived(True).pages == ()


def test_window_rewards_are_the_landed_pages_and_info_lists_them(tiny_corpus):
    agent = make_agent("best-first")
    env = make_env_for(agent, corpus=tiny_corpus, topic="geology", max_episode_steps=60, concurrency=6)
    obs, info = env.reset(seed=0)
    assert set(WINDOW_INFO_KEYS) <= set(info)
    base = env.unwrapped
    agent.begin_episode(base.view, np.random.default_rng(0))
    total, landed = 0.0, []
    for _ in range(60):
        obs, r, term, trunc, info = env.step(agent.act(obs, info))
        got = [int(p) for p in info["landed_pages"] if p >= 0]
        assert info["landed_pages"].shape == (6,) and info["in_flight"] <= 6
        assert r == pytest.approx(float(base.state.reward[got].sum()) if got else 0.0)
        assert info["fetched_page"] == (got[-1] if got else -1)
        landed += got
        total += r
        if term or trunc:
            break
    assert len(landed) == len(set(landed)) == info["pages_fetched"] - 1  # the seed aside
    assert total + float(base.state.reward[base.view.fetched_pages()[0]]) == pytest.approx(info["reward_sum"])


@pytest.mark.parametrize("per_host", [1, 2])
def test_the_per_host_limit_is_a_mask(tiny_corpus, per_host):
    """No offered candidate (slot mask, page-mode mask, frontier) is on a host with ``per_host`` pages in flight;
    pages in flight are never in the frontier; parked pages come back when their host is free."""
    for action in ("slot", "page"):
        agent = make_agent("best-first" if action == "slot" else "best-first-page")
        env = make_env_for(agent, corpus=tiny_corpus, topic="geology", max_episode_steps=100, concurrency=8,
                           per_host=per_host)
        base = env.unwrapped
        obs, info = env.reset(seed=1)
        agent.begin_episode(base.view, np.random.default_rng(1))
        parked_seen = 0
        for _ in range(100):
            st, w = base.state, base._window
            busy = [d for d, k in w.in_domain.items() if k >= per_host]
            assert all(0 < k <= per_host for k in w.in_domain.values())
            assert sorted(busy) == w.flagged.tolist()  # nothing held on a static web
            frontier = base.view.frontier_pages()
            assert not np.isin(tiny_corpus.page_domain[frontier], busy).any()
            assert np.all(st.status[list(w.in_flight)] == INFLIGHT)
            if action == "page":
                assert not base.action_masks()[list(w.in_flight)].any()
            else:
                cand = info["candidate_ids"][info["action_mask"]]
                assert not np.isin(tiny_corpus.page_domain[cand], busy).any()
            parked_seen += int(np.count_nonzero(st.status == PARKED))
            obs, r, term, trunc, info = env.step(agent.act(obs, info))
            from gym_crawl.agents.base import Transition

            agent.observe(Transition(obs, 0, float(r), obs, term, trunc, info))
            if term or trunc:
                break
        assert parked_seen > 0
        env.reset(seed=1)  # in-flight and parked pages go back; the crawl state is clean again
        assert not np.any(base.state.status == INFLIGHT) and not np.any(base.state.status == PARKED)


def test_a_second_episode_repeats_the_first(tiny_corpus):
    agent = make_agent("random")
    env = make_env_for(agent, corpus=tiny_corpus, topic="geology", max_episode_steps=40, concurrency=10,
                       reducer="tree")
    a = _trajectory(env, agent, seed=2)
    b = _trajectory(env, agent, seed=2)
    _same_trajectory(a, b)


def test_window_arguments_are_checked(tiny_corpus):
    for kw, msg in (({"concurrency": 0}, "concurrency"), ({"per_host": 0}, "per_host"),
                    ({"timing": {"latency": 0}}, "latency"), ({"timing": {"lag": 1}}, "unknown")):
        with pytest.raises(ValueError, match=msg):
            gym.make("WikiCrawl-v3", corpus=tiny_corpus, topic="geology", **kw)
    from gym_crawl.envs.vector import WikiCrawlVectorEnv

    with pytest.raises(ValueError, match="concurrency"):
        WikiCrawlVectorEnv(2, max_episode_steps=5, corpus=tiny_corpus, topic="geology", concurrency=4)


# ------------------------------------------------------------------------------------------------ live crawls
def _metadata_kinds(path) -> list[dict]:
    """Every JSON metadata record of a WARC, in file order."""
    from warcio.archiveiterator import ArchiveIterator

    out = []
    with open(path, "rb") as f:
        for rec in ArchiveIterator(f):
            if rec.rec_type == "metadata":
                out.append(json.loads(rec.content_stream().read()))
    return out


@pytest.mark.parametrize("name", ["best-first", "random"])
def test_a_concurrent_live_crawl_replays_bit_for_bit_from_its_warc(small, tmp_path, name):
    tm = get_text_model(small)
    with jittered(serve_corpus(small, n_hosts=4), seed=3) as site:
        warc = tmp_path / "c.warc.gz"
        live = LiveWeb([site.page_urls[small.page_id("Geology")]], policy=FetchPolicy(**FAST), warc=warc, text=tm,
                       scope="any", max_pages=5000)
        env = make_env_for(make_agent(name), corpus=live, topic="geology", max_episode_steps=40, concurrency=6)
        a = _trajectory(env, make_agent(name), seed=4)
        live.close()
        n_log = len(site.log)
        kinds = [m["kind"] for m in _metadata_kinds(warc)]
        assert "arrivals" in kinds and "robots" in kinds
        replay = LiveWeb.from_warc(warc, text=tm)
        env2 = make_env_for(make_agent(name), corpus=replay, topic="geology", max_episode_steps=40, concurrency=6)
        b = _trajectory(env2, make_agent(name), seed=4)
        assert len(site.log) == n_log, "the replay sent requests"
    _same_trajectory(a, b)
    assert [list(i["landed_pages"]) for _, _, i in a] == [list(i["landed_pages"]) for _, _, i in b]
    assert max(i["in_flight"] for _, _, i in a) > 1  # several pages really were in flight


def test_concurrent_live_crawls_stay_polite_per_host(small, tmp_path):
    """Eight hosts, eight pages in flight: from the server's log, each host got robots.txt first, one request at
    a time on one connection, and every gap from a response's end to its next request at least the delay."""
    delay = 0.15
    with jittered(serve_corpus(small, n_hosts=8), seed=1) as site:
        seeds = [site.url(h, "/") for h in site.hosts]
        with LiveWeb(seeds, policy=FetchPolicy(**{**FAST, "delay": delay}), scope="any", max_pages=5000) as web:
            env = make_env_for(make_agent("best-first"), corpus=web, topic="geology", max_episode_steps=50,
                               concurrency=8, per_host=1, focus_slack=math.inf)  # every slot filled: the most load
            steps = _trajectory(env, make_agent("best-first"))
            assert max(i["in_flight"] for _, _, i in steps) >= 6
        by_host = defaultdict(list)
        for e in site.requests():
            by_host[e.host].append(e)
        assert len(by_host) == 8
        for host, log in by_host.items():
            assert log[0].path == "/robots.txt", host
            assert site.max_concurrent(host) == 1
            assert len({e.conn for e in log}) == 1
            for prev, nxt in zip(log, log[1:]):
                assert nxt.start - prev.end >= delay, (host, prev.path, nxt.path)


def test_robots_txt_arrives_before_a_hosts_pages_are_offered(tmp_path):
    """Host b is found through a link of host a: b's pages are held until b's robots.txt arrived, then the
    pages it disallows are never offered, never dispatched and never requested."""
    with serve_site({"a": {"/": b"", "/x.html": html_page("x")},
                     "b": {"/robots.txt": dataclasses.replace(robots_txt(["/secret/"]), delay=0.3),
                           "/": html_page("b home", "", [(f"/p{i}.html", f"page {i}") for i in range(4)]
                                          + [(f"/secret/s{i}.html", f"secret geology {i}") for i in range(6)]),
                           **{f"/p{i}.html": html_page(f"b {i}") for i in range(4)},
                           **{f"/secret/s{i}.html": html_page(f"s {i}") for i in range(6)}}}) as site:
        site._routes["a"]["/"] = html_page("a home", "", [("/x.html", "x"), (site.url("b", "/"), "geology b")])
        with LiveWeb([site.url("a", "/")], policy=FetchPolicy(**FAST), scope="any") as web:
            agent = make_agent("bfs")
            env = make_env_for(agent, corpus=web, topic="geology", max_episode_steps=12, concurrency=4)
            obs, info = env.reset(seed=0)
            view = env.unwrapped.view
            agent.begin_episode(view, np.random.default_rng(0))
            held_steps = 0
            while True:
                b = web.domains.get(site.url("b", "/").split("//")[1].rstrip("/"))
                if b >= 0 and web.held_domains()[b]:  # b's robots.txt is on its way: none of b's pages is offered
                    held_steps += 1
                    assert not np.any(web.page_domain[view.frontier_pages()] == b)
                obs, r, term, trunc, info = env.step(agent.act(obs, info))
                if term or trunc:
                    break
            refused = web.counters()["refused"]
            dispatched = [web.url(p) for p in view.fetched_pages()]
        assert held_steps >= 1
        assert refused.get("robots") == 6, refused
        assert not [u for u in dispatched if "/secret/" in u] and len(dispatched) == 7
        assert not [e for e in site.log if e.path.startswith("/secret/")]
        b_log = site.requests("b")
        assert b_log[0].path == "/robots.txt" and len(b_log) == 6


def test_non_html_urls_and_failing_url_shapes_are_not_offered(tmp_path):
    files = {f"/files/{i}": Response(b"%PDF-1.4", content_type="application/pdf") for i in range(10)}
    pages = {f"/doc{i}.html": html_page(f"doc {i}") for i in range(4)}
    links = ([(p, p) for p in pages] + [(p, p) for p in files] + [("/a.pdf", "pdf"), ("/b.png", "png"),
             ("/_sources/x.rst.txt", "source"), ("/view?raw=1", "raw")])
    with serve_site({"a": {"/": html_page("home", "", links), **pages, **files}}) as site:
        web = LiveWeb([site.url("a", "/")], policy=FetchPolicy(**FAST), max_pages=100)
        env = gym.make("WikiCrawl-v3", corpus=web, topic="doc", max_episode_steps=30, action="page",
                       observation="state")
        env.reset(seed=0)
        errors = []
        while True:  # breadth-first over what is offered
            F = np.sort(env.unwrapped.view.frontier_pages())
            _, _, term, trunc, info = env.step(int(F[0]))
            errors.append(info["fetch_error"])
            if term or trunc:
                break
        web.close()
        c = web.counters()
        assert c["refused"]["not-html"] == 4
        assert errors.count("content-type") == 3 and c["refused"]["learned"] == 7, (errors, c)
        assert len([e for e in site.log if e.path.startswith("/files/")]) == 3
        assert not [e for e in site.log if e.path in ("/a.pdf", "/b.png", "/view") or "_sources" in e.path]
        assert c["requests_wire"] == len(site.log)  # robots.txt included
        assert c["pages"] == 5 and c["errors"] == {"content-type": 3}


def test_url_rules():
    for u in ("http://h/a.pdf", "http://h/x/y.TXT", "http://h/_sources/a.rst.txt", "http://h/_static/x",
              "http://h/raw/x", "http://h/v?raw=1", "http://h/v?format=pdf", "http://h/dl?download="):
        assert not_html_reason(u), u
    for u in ("http://h/", "http://h/a.html", "http://h/docs/v1.2/", "http://h/x?format=html", "http://h/a.b/c"):
        assert not not_html_reason(u), u
    assert failure_keys("http://h/docs/v12/a.bin?x=1&b=2") == ("http://h/docs/v#/*.bin?b&x", "http://h/docs/**/*.bin",
                                                              "http://h/**/*.bin")
    assert failure_keys("http://h/docs/page.html") == ("http://h/docs/*.html",)
    with pytest.raises(ValueError, match="learn_after"):
        OfferRules(learn_after=-1)


def test_concurrency_on_the_command_line(tmp_path):
    import subprocess
    import sys

    for args, msg in [(("--live", "http://127.0.0.1:9/", "--topic", "x", "--concurrency", "0"), "--concurrency"),
                      (("--live", "http://127.0.0.1:9/", "--topic", "x", "--per-host", "0"), "--per-host"),
                      (("--live", "http://127.0.0.1:9/", "--topic", "x", "--rate", "-1"), "--rate"),
                      (("--concurrency", "4",), "--live")]:
        p = subprocess.run([sys.executable, "-m", "gym_crawl", "crawl", *args], check=False, capture_output=True,
                           text=True, timeout=120)
        assert p.returncode != 0 and msg in p.stderr, (args, p.stderr)


def test_online_learners_learn_from_pages_that_land_later(tiny_corpus):
    """With pages in flight, the online classifier learns from each page when it lands (with that page's reward),
    not only when the page it just chose happens to be the one that landed."""
    agent = make_agent("online-classifier")
    seen: list[float] = []
    learn = agent.learn
    agent.learn = lambda x, r, tr, rows: (seen.append(r), learn(x, r, tr, rows))[1]  # type: ignore[method-assign]
    env = make_env_for(agent, corpus=tiny_corpus, topic="geology", max_episode_steps=60, concurrency=8)
    res = run_episode(env, agent, seed=0)
    assert len(seen) == res.pages_fetched - 1  # every page the agent chose and that landed (the seed aside)
    assert sum(seen) == pytest.approx(res.reward_sum - float(env.unwrapped.state.reward[res.fetched[0]]))


def test_sigint_with_pages_in_flight_leaves_a_valid_resumable_warc(small, tmp_path):
    import os
    import subprocess
    import sys

    with jittered(serve_corpus(small, n_hosts=4), seed=2) as site:
        warc = tmp_path / "w.warc.gz"
        seed = site.page_urls[small.page_id("Geology")]
        args = ["--live", seed, "--agent", "random", "--topic", "geology", "--warc", str(warc), "--scope", "any",
                "--seed", "3", "--json", "--concurrency", "4"]
        cmd = [sys.executable, "-m", "gym_crawl", "crawl", *args]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        p = subprocess.Popen([*cmd, "--max-pages", "200", "--delay", "0.3"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
        out = interrupt_after(p, warc, 8)
        assert out["stopped_by"] == "SIGINT" and 8 <= out["steps"] < 200 and out["concurrency"] == 4
        valid_warc(warc)
        first = [d["url"] for d in read_decisions(warc)]
        assert len(first) == out["steps"]
        fetched_before = {f.url for f in read_fetches(warc)}
        n1 = len(site.log)
        k = out["steps"]
        bad = subprocess.run([*cmd[:-2], "--concurrency", "2", "--max-pages", str(k + 5), "--resume"], check=False,
                             capture_output=True, text=True, timeout=120, env=env)
        assert bad.returncode != 0 and "concurrency" in bad.stderr
        p2 = subprocess.run([*cmd, "--max-pages", str(k + 6), "--delay", "0", "--resume"], check=False,
                            capture_output=True, text=True, timeout=180, env=env)
        assert p2.returncode == 0, p2.stderr
        out2 = json.loads(p2.stdout.strip().splitlines()[-1])
        assert out2["steps"] == k + 6 and out2["stopped_by"] is None
        decisions = [d["url"] for d in read_decisions(warc)]
        # the resumed run re-decided the recorded steps identically (else its replay ends with an error) and
        # wrote only the new ones
        assert decisions[:k] == first and len(decisions) == k + 6
        again = {e.path for e in site.log[n1:] if e.path != "/robots.txt"}  # paths are unique over the hosts
        assert again and not again & {urlsplit(u).path for u in fetched_before}, "resume re-requested recorded pages"
        valid_warc(warc)
