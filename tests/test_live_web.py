"""The live web (``LiveWeb``) as a corpus of the offline MDP, with an injected fetch function (no sockets):
discovery-order ids, fetch-order ranges, failed fetches as spent steps, the fetch cache across episodes,
the open vocabulary, no leak of unfetched content, and the engine's (lo, hi) ranges on static corpora."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import gym_crawl  # noqa: F401
from gym_crawl.corpus.page_source import PageSource
from gym_crawl.envs.wiki_crawl import INFO_KEYS
from gym_crawl.text.model import gather_csr, gather_ranges, get_text_model
from gym_crawl.text.open_vocab import hashed_word_vector
from gym_crawl.tokenize import tokenize
from gym_crawl.web.html_extract import render_page
from gym_crawl.web.live import LiveWeb
from tests.helpers import SiteFetch, fetch_now

H = "http://site.test"


def make_site(n: int = 40) -> dict[str, bytes]:
    """An in-memory site: ``/`` links to pages 0..2; page i links to 5 others; a third of the pages are
    about geology; ``/missing`` is linked but answers 404."""
    site = {}
    for i in range(n):
        links = [(f"{H}/p/{(i * 7 + j) % n}", f"geology rock {j}" if (i + j) % 3 == 0 else f"football match {j}")
                 for j in range(1, 6)]
        words = "geology rocks minerals basalt " if i % 3 == 0 else "sports football league goal "
        site[f"{H}/p/{i}"] = render_page(f"Page {i}", words * 4 + f"unique{chr(97 + i % 26)}word", links)
    site[f"{H}/"] = render_page("Home", "start here geology", [(f"{H}/p/0", "rocks"), (f"{H}/p/1", "sport"),
                                                                (f"{H}/missing", "missing page")])
    return site


def best_first(env: gym.Env, obs, info, steps: int) -> list[tuple[int, float, str]]:
    """Run a greedy policy on the first feature column (topic relevance of the link text); returns
    (fetched page, reward, fetch_error) per step."""
    out = []
    for _ in range(steps):
        a = int(np.argmax(np.where(info["action_mask"], obs["candidates"][:, 0], -np.inf)))
        obs, r, term, trunc, info = env.step(a)
        out.append((info["fetched_page"], r, info["fetch_error"]))
        if term or trunc:
            break
    return out


def make_env(web: LiveWeb, steps: int = 25, **kw):
    return gym.make("WikiCrawl-v1", corpus=web, topic="geology", max_episode_steps=steps, **kw)


def test_static_corpus_ranges_are_views_of_the_csr(tiny_corpus):
    c = tiny_corpus
    assert not isinstance(c, PageSource)
    assert np.shares_memory(c.link_lo, c.link_ptr) and np.shares_memory(c.text_hi, c.text_ptr)
    np.testing.assert_array_equal(c.link_hi - c.link_lo, np.diff(c.link_ptr))
    rng = np.random.default_rng(0)
    for rows in (np.array([5]), np.arange(10, 20), rng.choice(c.n_pages, 30, replace=False), np.array([], int)):
        a, ra = gather_csr(c.text_ptr, c.text_terms, rows)
        b, rb = gather_ranges(c.text_lo, c.text_hi, c.text_terms, rows)
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(ra, rb)


def test_ids_in_discovery_order_and_rows_in_fetch_order():
    fetch = SiteFetch(make_site())
    web = LiveWeb([H + "/", H + "/p/5"], fetch=fetch, max_pages=200)
    assert [web.url(i) for i in range(2)] == [H + "/", H + "/p/5"] and web.n_discovered == 2
    assert web.n_pages == 200 and web.n_links == 0
    assert fetch_now(web, 0) == ""
    # the home page's links get ids 2, 3, 4 in document order
    assert [web.url(i) for i in range(2, 5)] == [H + "/p/0", H + "/p/1", H + "/missing"]
    assert web.link_dst[web.link_lo[0]:web.link_hi[0]].tolist() == [2, 3, 4]
    assert fetch_now(web, 3) == ""  # /p/1 before /p/5: its rows come after the home page's
    assert web.link_lo[3] == web.link_hi[0] and web.text_lo[3] == web.text_hi[0]
    assert fetch_now(web, 1) == "" and web.link_lo[1] == web.link_hi[3]
    assert fetch_now(web, 4) == "http-404"
    assert web.link_hi[4] == web.link_lo[4] and web.text_hi[4] == web.text_lo[4]
    assert fetch_now(web, 3) == "" and fetch.requests.count(H + "/p/1") == 1  # idempotent, fetched once
    # URL words are known at discovery, text only once fetched
    assert "missing" in {web.vocab[int(t)] for t in web.title_terms[web.title_ptr[4]:web.title_ptr[5]]}
    snap = web.to_corpus()
    assert snap.n_pages == web.n_discovered
    for p in range(web.n_discovered):
        np.testing.assert_array_equal(snap.link_dst[snap.link_ptr[p]:snap.link_ptr[p + 1]],
                                      web.link_dst[web.link_lo[p]:web.link_hi[p]])
        np.testing.assert_array_equal(snap.text_terms[snap.text_ptr[p]:snap.text_ptr[p + 1]],
                                      web.text_terms[web.text_lo[p]:web.text_hi[p]])


def test_env_on_a_live_web_spends_failed_fetches():
    fetch = SiteFetch(make_site())
    web = LiveWeb([H + "/"], fetch=fetch, max_pages=100)
    env = make_env(web, steps=30)
    obs, info = env.reset(seed=0)
    assert set(INFO_KEYS) - {"action_mask"} <= set(info) and info["fetch_error"] == ""
    assert env.observation_space.contains(obs)
    traj = best_first(env, obs, info, 30)
    errors = [(p, r, e) for p, r, e in traj if e]
    assert errors and all(e == "http-404" and r == -1.0 for _, r, e in errors), traj
    missing = web.page_id(H + "/missing")
    assert missing in [p for p, _, _ in traj]
    assert not env.unwrapped.view.is_frontier(missing)
    assert len(env.unwrapped.view.fetched_outlinks(missing)) == 0
    assert any(r == 30.0 for _, r, _ in traj)
    # every requested URL was requested once
    assert len(fetch.requests) == len(set(fetch.requests)) == len(traj) + 1


def test_second_episode_replays_from_memory():
    fetch = SiteFetch(make_site())
    web = LiveWeb([H + "/"], fetch=fetch, max_pages=100)
    env = make_env(web, steps=15)
    runs = []
    for _ in range(2):
        obs, info = env.reset(seed=3)
        first = obs
        runs.append((first, best_first(env, obs, info, 15)))
    n_req = len(fetch.requests)
    assert runs[0][1] == runs[1][1]
    for k in ("candidates", "mask", "state"):
        np.testing.assert_array_equal(runs[0][0][k], runs[1][0][k])
    assert n_req == len(set(fetch.requests)) == 16  # the second episode sent no request
    assert web.stats["cache_hits"] == 0  # pages came from the web's arrays, not even the fetch cache


def test_replay_from_recorded_results_is_bit_identical():
    """The same agent with the same seed on a web rebuilt from the recorded fetch results (what the WARC
    replay does) gets the same observations, rewards and fetched URLs, with no request."""
    fetch = SiteFetch(make_site())
    recorded = []

    def recording(url):
        r = fetch(url)
        recorded.append(r)
        return r

    live = LiveWeb([H + "/"], fetch=recording, max_pages=100)

    def run(web):
        env = make_env(web, steps=20, action="page", observation="state")
        obs, info = env.reset(seed=1)
        rng = np.random.default_rng(7)
        out = [obs]
        for _ in range(20):
            F = np.sort(env.unwrapped.view.frontier_pages())
            p = int(F[rng.integers(len(F))])
            obs, r, term, trunc, info = env.step(p)
            out.append((web.url(p), r, info["fetch_error"], obs))
            if term or trunc:
                break
        return out

    a = run(live)

    def no_network(url):
        raise AssertionError(f"replay requested {url}")

    replay = LiveWeb([H + "/"], fetch=no_network, max_pages=100)
    assert replay.preload(recorded) == len(recorded)
    b = run(replay)
    np.testing.assert_array_equal(a[0], b[0])
    assert len(a) == len(b)
    for x, y in zip(a[1:], b[1:]):
        assert x[:3] == y[:3]
        np.testing.assert_array_equal(x[3], y[3])


def test_unfetched_content_never_reaches_observations():
    site = make_site()
    web = LiveWeb([H + "/"], fetch=SiteFetch(site), max_pages=100)
    env = make_env(web, steps=40)
    obs, info = env.reset(seed=0)
    before = [obs]
    traj = best_first(env, obs, info, 6)
    fetched = {web.url(p) for p, _, _ in traj} | {H + "/"}
    # a fresh crawl of a site whose unfetched pages are rewritten (all-geology text, new links)
    tampered = dict(site)
    for u in site:
        if u not in fetched:
            tampered[u] = render_page("Geology", "geology " * 50, [(H + "/p/0", "geology geology")])
    web2 = LiveWeb([H + "/"], fetch=SiteFetch(tampered), max_pages=100)
    env2 = make_env(web2, steps=40)
    obs2, info2 = env2.reset(seed=0)
    np.testing.assert_array_equal(before[0]["candidates"], obs2["candidates"])
    traj2 = best_first(env2, obs2, info2, 6)
    assert [web.url(p) for p, _, _ in traj] == [web2.url(p) for p, _, _ in traj2]
    assert [r for _, r, _ in traj] == [r for _, r, _ in traj2]


def test_open_vocabulary_keeps_the_reference_model(tiny_corpus):
    tm = get_text_model(tiny_corpus)
    site = make_site()
    web = LiveWeb([H + "/"], fetch=SiteFetch(site), text=tm, max_pages=100)
    V0 = tiny_corpus.n_words
    assert web.vocab.tolist()[:V0] == tiny_corpus.vocab.tolist()
    env = make_env(web, steps=10)
    obs, info = env.reset(seed=0)
    best_first(env, obs, info, 10)
    lt = env.unwrapped.text
    assert lt.vectors.shape == (web.n_words, tm.dim)
    for w in ("geology", "basalt", "rock"):
        i = web.word_id(w)
        assert i == tiny_corpus.word_id(w) >= 0
        np.testing.assert_array_equal(lt.vectors[i], tm.vectors[i])
        assert lt.idf[i] == tm.idf[i]
    new = [w for w in web.vocab.tolist()[V0:]]
    assert "football" in new and "uniqueaword" in new
    i = web.word_id("football")
    np.testing.assert_array_equal(lt.vectors[i], hashed_word_vector("football", tm.dim, lt.meta["oov_scale"]))
    assert abs(float(np.linalg.norm(lt.vectors[i])) - 1.0) < 1e-5
    assert lt.idf[i] == pytest.approx(np.log(tm.meta["idf_pages"] + 1.0) + 1.0)
    assert lt.idf[i] >= tm.idf.max() - 1e-6
    # every page fetched without error has a vector (no all-unknown text); the failed one has none
    pages = np.array([p for p in env.unwrapped.view.fetched_pages() if p not in web.fetch_errors])
    assert len(pages) < len(env.unwrapped.view.fetched_pages())
    assert np.all(np.linalg.norm(env.unwrapped.view.fetched_vectors(pages), axis=1) > 0)


def test_hashing_model_without_reference_and_topic_words_outside_it():
    web = LiveWeb([H + "/"], fetch=SiteFetch(make_site()), max_pages=100)
    env = make_env(web, steps=5)
    env.reset(seed=0)
    t = env.unwrapped.text
    assert t.meta["vectors"] == "hashed" and web.word_id("geology") >= 0
    np.testing.assert_array_equal(t.vectors[web.word_id("geology")], hashed_word_vector("geology", 64))
    assert t.idf[web.word_id("geology")] == 1.0


def test_capacity_and_scope_drop_and_count():
    site = make_site()
    site[f"{H}/p/3"] = render_page("Page 3", "geology", [("http://elsewhere.test/x", "out"), (f"{H}/p/4", "in")])
    web = LiveWeb([H + "/p/3"], fetch=SiteFetch(site), max_pages=2)
    assert fetch_now(web, 0) == ""
    assert web.n_discovered == 2 and web.stats["links_out_of_scope"] == 1
    web2 = LiveWeb([H + "/"], fetch=SiteFetch(site), max_pages=3)
    fetch_now(web2, 0)
    assert web2.n_discovered == 3 and web2.stats["pages_dropped"] == 1
    assert web2.link_hi[0] - web2.link_lo[0] == 2  # the link to the dropped URL is not stored
    web3 = LiveWeb([H + "/"], fetch=SiteFetch(site), max_pages=50, max_links_per_page=1)
    fetch_now(web3, 0)
    assert web3.link_hi[0] - web3.link_lo[0] == 1 and web3.stats["links_dropped_per_page"] == 2


def test_page_mode_action_space_is_the_capacity():
    web = LiveWeb([H + "/"], fetch=SiteFetch(make_site()), max_pages=64)
    env = make_env(web, steps=5, action="page")
    assert env.action_space.n == 64
    env.reset(seed=0)
    m = env.unwrapped.action_masks()
    assert m.shape == (64,) and set(np.flatnonzero(m).tolist()) == {1, 2, 3}
    _, r, _, _, info = env.step(40)  # never discovered: an invalid action, no request
    assert r == env.unwrapped.invalid_action_penalty
    assert info["invalid_action"] and info["fetch_error"] == ""


def test_bad_arguments_name_the_value():
    with pytest.raises(ValueError, match="seeds"):
        LiveWeb("http://a.test/", fetch=SiteFetch({}))
    with pytest.raises(ValueError, match="not an absolute"):
        LiveWeb(["a.test/x"], fetch=SiteFetch({}))
    with pytest.raises(ValueError, match="max_pages"):
        LiveWeb([H + "/"], fetch=SiteFetch({}), max_pages=0)
    with pytest.raises(ValueError, match="scope"):
        LiveWeb([H + "/"], fetch=SiteFetch({}), scope="planet")


def test_static_corpus_info_has_an_empty_fetch_error(tiny_corpus):
    env = gym.make("WikiCrawl-v1", corpus=tiny_corpus, topic="geology", max_episode_steps=3)
    _, info = env.reset(seed=0)
    assert info["fetch_error"] == ""
    _, _, _, _, info = env.step(0)
    assert info["fetch_error"] == ""
    assert tokenize("Geology") == ["geology"]


def test_hashed_tokens_of_a_live_web_equal_the_static_snapshot_s():
    """The live web's hashed link rows (computed as pages are discovered) equal the precomputed ones of its
    static snapshot, link for link; the hashed features run on a live env."""
    from gym_crawl.features.content import HashedTokens, LiveHashedTokens, hashed_tokens

    web = LiveWeb([H + "/"], fetch=SiteFetch(make_site()), max_pages=100)
    env = make_env(web, steps=12, features="hashed")
    obs, info = env.reset(seed=0)
    best_first(env, obs, info, 12)
    assert isinstance(hashed_tokens(web), LiveHashedTokens)
    snap = web.to_corpus()
    order = np.argsort(web.link_source[: web.n_links], kind="stable")  # snapshot link k = live link order[k]
    a = LiveHashedTokens(web, 14).rows(order)
    b = HashedTokens(snap, 14).rows(np.arange(snap.n_links))
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert obs["candidates"].shape[1] == env.unwrapped.view.feature_dim


def test_the_batched_vector_env_refuses_a_live_web():
    from gym_crawl.envs.vector import WikiCrawlVectorEnv

    with pytest.raises(ValueError, match="live web"):
        WikiCrawlVectorEnv(2, max_episode_steps=5, corpus=LiveWeb([H + "/"], fetch=SiteFetch(make_site())),
                           topic="geology")
