"""The ``site`` feature set (URL shape, URL-directory and host statistics, link position, online page
classifier) and ``crawler+``: every column recomputed independently from the crawl's record, no leak of
unfetched pages until they are fetched, per-episode determinism."""
from __future__ import annotations

import pickle
from urllib.parse import urlsplit

import gymnasium as gym
import numpy as np
import pytest
from conftest import tamper_unfetched

from gym_crawl.agents import make_agent, run_episode
from gym_crawl.features import get_feature_set
from gym_crawl.features.site import POSITION_COLUMNS, SiteFeatures
from gym_crawl.text.model import TextModel, get_text_model
from gym_crawl.tokenize import tokenize


def _env(corpus, features="site", **kw):
    kw.setdefault("reward", "labels")
    return gym.make("WikiCrawl-v1", corpus=corpus, features=features, max_candidates=8, max_episode_steps=40, **kw)


def _url_facts(url: str):
    segs = [s for s in urlsplit(url).path.split("/") if s]
    toks = list(dict.fromkeys(tokenize(" ".join(segs).replace("_", " "))))[:8]
    return len(segs), urlsplit(url).netloc.lower() + "/" + "/".join(segs[:-1]), toks


def _classifier_replay(base, fetched):
    """The page classifier, replayed from scratch: prequential probability of each fetched page."""
    text = base.state.scorer.text
    w = np.zeros(text.dim + 1)
    prob = {}
    for p in fetched:
        x = text.page_vectors(np.array([p])).astype(np.float64)[0]
        nx = np.linalg.norm(x)
        x = x / nx if nx > 0 else x
        pr = 1.0 / (1.0 + np.exp(-(x @ w[:-1] + w[-1])))
        prob[p] = pr
        g = float(base.state.relevant[p]) - pr
        w[:-1] += 0.5 * (g * x - 1e-4 * w[:-1])
        w[-1] += 0.5 * g
    return prob


def test_site_columns_match_an_independent_count(tiny_corpus):
    c = tiny_corpus
    env = _env(c, action="page")
    base = env.unwrapped
    assert base.view.feature_names[-8:] == [f"a.pos={p}" for p in POSITION_COLUMNS] + ["bias"]
    assert not base.view.features_local
    run_episode(env, make_agent("random"), seed=3)
    st = base.state
    fetched = [int(p) for p in base.view.fetched_pages()]
    rel = {p: bool(st.relevant[p]) for p in fetched}
    assert 0 < sum(rel.values()) < len(rel)  # the crawl saw both classes
    frontier = np.asarray(base.view.frontier_pages(), dtype=np.int64)
    x = base.view.features_of(frontier)
    col = {n: i for i, n in enumerate(base.view.feature_names)}
    dom = np.asarray(c.page_domain)
    discovered = set(fetched) | {int(v) for p in fetched for v in base.view.fetched_outlinks(p)}
    h = sum(rel.values()) / len(rel)
    topic = st.scorer.topic
    topic_words = {t for w in (*topic.words, *topic.keywords) for t in tokenize(w)}
    facts = {p: _url_facts(c.url(p)) for p in discovered | set(frontier.tolist())}
    prob = _classifier_replay(base, fetched)
    saw_dir = False
    for row, u in zip(x, frontier.tolist()):
        depth, d, toks = facts[u]
        assert row[col["a.url_depth"]] == pytest.approx(min(depth / 10, 1.0))
        bp = int(st.best_parent[u])
        assert row[col["a.url_depth_delta"]] == pytest.approx(np.clip((depth - facts[bp][0]) / 5, -1, 1))
        assert row[col["a.same_dir_as_parent"]] == float(d == facts[bp][1])
        assert row[col["a.url_topic_overlap"]] == pytest.approx(len(set(toks) & topic_words) / len(topic_words))
        rates = []
        for t in toks:
            having = [p for p in fetched if t in facts[p][2]]
            rates.append((sum(rel[p] for p in having) + h) / (len(having) + 1))
        assert row[col["a.url_token_rate_mean"]] == pytest.approx(np.mean(rates) if rates else 0.0, abs=1e-5)
        assert row[col["a.url_token_rate_max"]] == pytest.approx(max(rates, default=0.0), abs=1e-5)
        under = [p for p in fetched if facts[p][1] == d]
        saw_dir |= bool(under)
        assert row[col["a.dir_fetched"]] == pytest.approx(min(np.log1p(len(under)) / np.log1p(100), 1.0), abs=1e-6)
        assert row[col["a.dir_relevant_ratio"]] == pytest.approx(
            sum(rel[p] for p in under) / len(under) if under else 0.0, abs=1e-6)
        assert row[col["a.dir_unseen"]] == float(not under)
        pending = [v for v in discovered if dom[v] == dom[u] and v not in rel]
        assert row[col["a.host_pending"]] == pytest.approx(min(np.log1p(len(pending)) / np.log1p(1000), 1.0),
                                                           abs=1e-6)
        assert row[col["s.parent_prob"]] == pytest.approx(prob[bp], abs=1e-5)
        parents = [p for p in fetched if u in {int(v) for v in base.view.fetched_outlinks(p)}]
        assert row[col["a.max_parent_prob"]] == pytest.approx(max(prob[p] for p in parents), abs=1e-5)
        # the tiny corpus has no link-position column: every link is "unknown"
        assert row[col["a.pos=unknown"]] == 1.0 and row[col["a.pos=unknown"] - 6:col["a.pos=unknown"]].sum() == 0
        assert row[col["bias"]] == 1.0
    assert saw_dir
    assert len({round(float(v), 4) for v in x[:, col["s.parent_prob"]]}) > 2  # the classifier learned something
    env.close()


def test_site_degrades_to_host_statistics_without_urls(tiny_corpus):
    """A corpus without URLs gets https://<domain>/wiki/<title>: constant depth, directory = host."""
    assert tiny_corpus.urls is None
    env = _env(tiny_corpus, features="crawler+")
    run_episode(env, make_agent("best-first"), seed=1)
    base = env.unwrapped
    x = base.view.features_of(np.asarray(base.view.frontier_pages(), np.int64))
    col = {n: i for i, n in enumerate(base.view.feature_names)}
    assert np.all(x[:, col["a.url_depth"]] == np.float32(0.2))
    np.testing.assert_allclose(x[:, col["a.dir_relevant_ratio"]], x[:, col["a.host_relevant_ratio"]], atol=1e-6)
    np.testing.assert_array_equal(x[:, col["a.dir_unseen"]], x[:, col["a.host_unseen"]])
    env.close()


def _frontier_rows(env):
    base = env.unwrapped
    f = np.sort(np.asarray(base.view.frontier_pages(), np.int64))
    return f, base.view.features_of(f)


def test_site_rows_see_an_unfetched_page_only_once_it_is_fetched(tiny_corpus):
    """Tampering with unfetched pages' text and labels (hence their relevance) changes no row of any frontier
    page at any step; fetching one of them then changes rows (its text and flag now count)."""
    tm = get_text_model(tiny_corpus)
    env_a = _env(tiny_corpus, text=tm, action="page")
    _, info = env_a.reset(seed=5)
    rng = np.random.default_rng(5)
    actions = []
    for _ in range(25):
        a = int(rng.choice(env_a.unwrapped.view.frontier_pages()))
        actions.append(a)
        env_a.step(a)
    base = env_a.unwrapped
    unfetched = np.asarray(sorted(set(base.view.frontier_pages().tolist())))
    tampered = tamper_unfetched(tiny_corpus, unfetched)
    env_b = _env(tampered, text=TextModel(tampered, tm.idf, tm.vectors, tm.meta), action="page")
    env_a.reset(seed=5)
    env_b.reset(seed=5)
    for a in actions:
        env_a.step(a)
        env_b.step(a)
        fa, xa = _frontier_rows(env_a)
        fb, xb = _frontier_rows(env_b)
        np.testing.assert_array_equal(fa, fb)
        np.testing.assert_array_equal(xa, xb)
    # fetch a tampered page whose own relevance the tampering changed: the crawl's record now differs
    flip = [int(u) for u in unfetched if base.state.page_reward(int(u))[1]
            != env_b.unwrapped.state.page_reward(int(u))[1]]
    assert flip, "the tampering must change some unfetched page's relevance"
    env_a.step(flip[0])
    env_b.step(flip[0])
    fa, xa = _frontier_rows(env_a)
    fb, xb = _frontier_rows(env_b)
    np.testing.assert_array_equal(fa, fb)
    assert not np.array_equal(xa, xb)
    env_a.close()
    env_b.close()


def test_site_rows_are_per_episode_and_a_pure_function_of_the_record(tiny_corpus):
    env = _env(tiny_corpus, features="crawler+", action="page")
    base = env.unwrapped
    run_episode(env, make_agent("random"), seed=0)
    f0, x0 = _frontier_rows(env)
    run_episode(env, make_agent("random"), seed=4)  # another episode on the same state
    f1, x1 = _frontier_rows(env)
    assert not np.array_equal(f0, f1) or not np.array_equal(x0, x1)
    run_episode(env, make_agent("random"), seed=0)
    f2, x2 = _frontier_rows(env)
    np.testing.assert_array_equal(f0, f2)
    np.testing.assert_array_equal(x0, x2)
    # a fresh feature set on the same state rebuilds the same rows; so does a pickled copy
    fresh = get_feature_set("crawler+")
    np.testing.assert_array_equal(fresh.compute(base.state, f2), x2)
    twin = pickle.loads(pickle.dumps(base.features))
    np.testing.assert_array_equal(twin.compute(base.state, f2), x2)
    env.close()


def test_site_rejects_bad_arguments():
    with pytest.raises(ValueError, match="lr"):
        SiteFeatures(lr=0.0)
    with pytest.raises(ValueError, match="l2"):
        SiteFeatures(l2=-1.0)


def test_url_columns_on_nested_urls_of_a_live_web():
    """Depth change, same directory and directory counts from real URL paths."""
    from types import SimpleNamespace

    from gym_crawl.web.html_extract import render_page
    from gym_crawl.web.live import LiveWeb

    h = "http://docs.test"
    site = {
        f"{h}/docs/index.html": render_page("Index", "geology index", [
            (f"{h}/docs/a/b.html", "deeper geology"), (f"{h}/docs/c.html", "sibling geology"),
            (f"{h}/top.html", "top")]),
        f"{h}/docs/c.html": render_page("C", "geology rocks", [(f"{h}/docs/d.html", "d geology")]),
        f"{h}/docs/a/b.html": render_page("B", "geology", []), f"{h}/top.html": render_page("Top", "sports", []),
        f"{h}/docs/d.html": render_page("D", "geology", []),
    }

    def fetch(url):
        body = site.get(url)
        return SimpleNamespace(url=url, final_url=url, status=200 if body else 404, body=body or b"",
                               content_type="text/html", error=None if body else "http-404")

    web = LiveWeb([f"{h}/docs/index.html"], fetch=fetch, max_pages=20)
    env = gym.make("WikiCrawl-v1", corpus=web, topic="geology", features="site", action="page", max_candidates=2,
                   max_episode_steps=5)
    env.reset(seed=0)
    b = env.unwrapped
    col = {n: i for i, n in enumerate(b.view.feature_names)}

    def row(url):
        return b.view.features_of(np.array([web.page_id(url)]))[0]

    assert row(f"{h}/docs/a/b.html")[col["a.url_depth_delta"]] == pytest.approx(0.2)
    assert row(f"{h}/docs/a/b.html")[col["a.same_dir_as_parent"]] == 0.0
    assert row(f"{h}/docs/c.html")[[col["a.url_depth_delta"], col["a.same_dir_as_parent"]]].tolist() == [0.0, 1.0]
    assert row(f"{h}/top.html")[col["a.url_depth_delta"]] == pytest.approx(-0.2)
    assert row(f"{h}/docs/c.html")[col["a.dir_fetched"]] == pytest.approx(np.log1p(1) / np.log1p(100))
    assert row(f"{h}/top.html")[col["a.dir_unseen"]] == 1.0
    env.step(web.page_id(f"{h}/docs/c.html"))
    assert row(f"{h}/docs/d.html")[col["a.dir_fetched"]] == pytest.approx(np.log1p(2) / np.log1p(100), abs=1e-6)
    assert row(f"{h}/docs/d.html")[col["a.dir_relevant_ratio"]] == pytest.approx(
        float(b.state.relevant[[web.page_id(f"{h}/docs/index.html"), web.page_id(f"{h}/docs/c.html")]].mean()))
    env.close()
