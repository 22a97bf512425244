"""The agents' own per-page state is keyed by the pages they were given, not sized by the web.

``lfa-sync``'s set-B index (:class:`~gym_crawl.agents.linear.pair_index.PairIndex`), the row learners' frontier
rows (:class:`~gym_crawl.agents.hashed.online_classifier.FrontierRows`: ``online-classifier``, ``hashed-q``, the
mixtures), the updatable priority queue (:class:`~gym_crawl.agents.priority_queue.UpdatablePQ`: ``lfa-async``,
``lfa-moderated``, ``thesis-lfa``, ``best-first-page``, ``td-lambda``) and Palotai's foragers' page store once kept
16, 8, 32 and 4 · state_dim + 1 bytes for every page of the web. Now their pages are keys of a page map, so:

* the decisions are the same: the fetched pages of these runs hash as recorded with the dense per-page arrays the
  page maps replaced (the same runs on the 2·10^4-page power-law web matched too, outside the suite);
* the memory follows the pages the agent was given: after the same number of steps on a generated power-law web
  of 10^6 pages the structures hold rows for the pages the crawl discovered, a few tens of bytes each.
"""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from gym_crawl.agents import make_agent, make_env_for, run_episode
from gym_crawl.webgen.powerlaw import generate_powerlaw

#: (agent, options, episodes, steps) -> sha256[:16] of the JSON list of each episode's fetched pages, recorded on
#: ``synthetic-2000`` (env ``WikiCrawl-v0``, the agent's own env settings, episodes seeded 0, 1, ...) with the
#: dense per-page arrays
RECORDED = {
    ("lfa-sync", "{}", 2, 300): "c8bd74f947aedc26",
    ("lfa-moderated", "{}", 2, 300): "5e8328174025cbfa",
    ("online-classifier", "{}", 2, 400): "ab3502d0db7e7d4f",
    ("online-classifier", '{"refresh": "new", "rescore_every": 4}', 1, 400): "f3f928de2a91974c",
    ("hashed-q", "{}", 2, 300): "29d7f45646f8d640",
    ("lfa-async", "{}", 2, 400): "3f8f38b2519d9bcc",
    ("best-first-page", "{}", 1, 600): "69176b85178dc216",
    ("td-lambda", "{}", 2, 300): "d74dc4dcb91d1bcd",
    ("td-lambda", '{"mode": "inherit", "epsilon": 0.3}', 1, 300): "3fe69b46f906f6f8",
}


@pytest.mark.parametrize("run", list(RECORDED), ids=lambda r: f"{r[0]}{'' if r[1] == '{}' else '+opts'}")
def test_keyed_agents_make_the_recorded_decisions(run) -> None:
    name, opts, episodes, steps = run
    agent = make_agent(name, **json.loads(opts))
    env = make_env_for(agent, "WikiCrawl-v0", corpus="synthetic-2000", max_episode_steps=steps)
    pages = [run_episode(env, agent, seed=ep).fetched.tolist() for ep in range(episodes)]
    env.close()
    assert [len(p) for p in pages] == [steps + 1] * episodes
    assert hashlib.sha256(json.dumps(pages).encode()).hexdigest()[:16] == RECORDED[run]


@pytest.fixture(scope="module")
def big_web(tmp_path_factory):
    """A generated power-law web of 10^6 pages (≈ 3 CPU-s; memory-mapped from a temporary folder)."""
    return generate_powerlaw(1_000_000, folder=tmp_path_factory.mktemp("powerlaw"), progress=False)


def _crawl(name: str, corpus, steps: int = 150):
    agent = make_agent(name)
    env = make_env_for(agent, "WikiCrawl-v0", corpus=corpus, topic="geology", max_episode_steps=steps)
    r = run_episode(env, agent, seed=0)
    view = env.unwrapped.view
    discovered = len(view.frontier_pages()) + len(view.fetched_pages())
    env.close()
    assert r.steps == steps
    return agent, discovered


def test_pair_index_rows_follow_the_pages_seen(big_web) -> None:
    agent, discovered = _crawl("lfa-sync", big_web)
    pairs = agent._pairs
    assert 0 < pairs.n_seen <= discovered < 2_000
    assert pairs.page_rows <= 2 * max(64, pairs.n_seen + 256)   # doubling, from the last batch's room
    assert len(pairs._pkeys) <= 4 * pairs.page_rows              # the map: at most half full, a power of two
    page_bytes = sum(getattr(pairs, a).nbytes for a in ("_pkeys", "_pslots", "_page_of", "_loc_pair", "_loc_slot"))
    assert page_bytes <= 28 * pairs.page_rows
    # the dense columns were 16 bytes a page of the web (16 MB here); the whole index, with its distinct feature
    # rows and member blocks, is ≈ 0.2 MB
    assert pairs.nbytes < 16 * big_web.n_pages // 10


def test_priority_queue_follows_the_pages_seen(big_web) -> None:
    agent, discovered = _crawl("lfa-async", big_web)
    pq = agent._pq
    assert pq.capacity == big_web.n_pages and 0 < len(pq) <= pq.n_seen <= discovered < 2_000
    pq.check_invariants()
    # the dense heap and position index were 32 bytes a page of the web (32 MB here)
    assert pq.nbytes <= 64 * 2 * max(64, pq.n_seen + 256) < 32 * big_web.n_pages // 100


def test_td_lambda_keeps_the_pages_it_met(big_web) -> None:
    agent, discovered = _crawl("td-lambda", big_web)
    fetched = len(agent._row)
    assert 0 < fetched <= 151 and set(agent._parent) == set(agent._row)   # the fetched pages (and the seeds)
    best = agent._best
    assert fetched <= best.n <= discovered < 2_000 and len(best.page_of) <= 2 * max(64, best.n)
    assert agent._pages.n_seen <= fetched
    # the dense columns and queue were 64 bytes a page of the web (64 MB here)
    assert best.nbytes + agent._pages.nbytes < 64 * big_web.n_pages // 100


def test_frontier_rows_follow_the_pages_seen(big_web) -> None:
    agent, discovered = _crawl("online-classifier", big_web)
    fr = agent.frontier
    assert 0 < fr.n_keyed <= discovered < 2_000
    assert len(fr.table) <= 4 * max(64, fr.n_keyed)   # at most half full, doubling
    assert fr.table.nbytes < 8 * big_web.n_pages // 100   # the dense pointers: 8 MB here


def _fleet_digest(env, run) -> str:
    h = hashlib.sha256()
    for part in (env.run_log(), env.found_documents()):
        for k in sorted(part):
            h.update(np.ascontiguousarray(part[k]).tobytes())
    for a in sorted(run.policies):
        p = run.policies[a]
        h.update(p.weights.tobytes())
        h.update(p.wl_urls.tobytes())
        h.update(p.wl_vals.tobytes())
    return h.hexdigest()[:16]


@pytest.mark.parametrize("kind, clock, recorded", [("wl", "download", "fda102d6bf8b45ab"),
                                                   ("wlrl", "step", "d53aa904cfe0e919")])
def test_palotai_foragers_keyed_store(kind, clock, recorded) -> None:
    """A whole fleet run on a 2,000-page changing web (48 h) hashes as recorded with the dense (n_pages, state_dim)
    store (run log, found documents, the survivors' weights and weblogs), and every survivor's store holds rows for
    the pages it (or its ancestors) downloaded: < 2 · that many rows of 4 · state_dim + 36 bytes, where the dense
    store held 4 · state_dim + 1 bytes for every page of the web."""
    from gym_crawl.agents.palotai import run_fleet
    from gym_crawl.envs.fleet import ForagerFleetEnv
    from gym_crawl.webgen.changing import make_changing_web

    web = make_changing_web(2000, 48.0, seed=0)
    env = ForagerFleetEnv(web, clock=clock)
    run = run_fleet(env, kind, seed=0)
    assert _fleet_digest(env, run) == recorded
    for p in run.policies.values():
        st = p.store
        assert 0 < st.n < web.n_pages
        assert len(st.key_of) <= 2 * max(64, st.n) and len(st.keys) <= 4 * len(st.key_of)
        assert st.nbytes <= (4 * p.state_dim + 36) * len(st.key_of)   # the state rows, the map: per row stored
        assert np.array_equal(p.states(st.key_of[:st.n]), st.cols["state"][:st.n])
        assert not p.states([int(np.setdiff1d(np.arange(web.n_pages), st.key_of[:st.n])[0])]).any()
