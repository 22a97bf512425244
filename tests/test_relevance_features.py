"""Rewards, relevance scoring and feature discretization on hand-computed examples."""
from __future__ import annotations

import numpy as np
import pytest

from gym_crawl.features import Han2018Features, TresFeatures, bucket5, bucket6, change_bucket, get_feature_set
from gym_crawl.relevance import PageScores, TopicScorer, get_reward_scheme, resolve_topic
from gym_crawl.text import get_text_model


def scores(rel, tfidf, label=None):
    rel = np.asarray(rel, np.float32)
    return PageScores(rel=rel, cat=np.zeros((len(rel), 0), np.float32), tfidf=np.asarray(tfidf, np.float32),
                      label=np.asarray(label if label is not None else [False] * len(rel)))


def test_han2018_reward_tiers():
    r, rel = get_reward_scheme("han2018")(scores([0.1, 0.55, 0.45, 0.3, 0.0], [0.2, 0, 0, 0, 0]))
    assert r.tolist() == [30, 30, 20, -1, -1]
    assert rel.tolist() == [True, False, False, False, False]  # Han: relevant = contains a topic word


def test_thesis_reward_tiers():
    r, _ = get_reward_scheme("thesis")(scores([0.0, 0.65, 0.55, 0.45], [0.1, 0, 0, 0]))
    assert r.tolist() == [30, 30, 20, -1]


def test_binary_labels_and_callable_rewards():
    s = scores([0.9, 0.1], [0.0, 0.3], label=[True, False])
    assert get_reward_scheme("binary", labelled=True)(s)[0].tolist() == [1, 0]
    assert get_reward_scheme("binary", labelled=False)(s)[0].tolist() == [0, 1]
    assert get_reward_scheme("labels")(s)[0].tolist() == [1, 0]
    r, rel = get_reward_scheme(lambda sc: sc.rel * 2 - 1)(s)
    assert r.tolist() == pytest.approx([0.8, -0.8]) and rel.tolist() == [True, False]


def test_han_buckets_match_the_paper_ranges():
    x = np.array([0.0, 0.19, 0.2, 0.39, 0.4, 0.79, 0.8, 1.0, -0.3, 1.7])
    assert bucket5(x).tolist() == [0, 0, 1, 1, 2, 3, 4, 4, 0, 4]
    y = np.array([0.0, 0.09, 0.1, 0.29, 0.3, 0.5, 0.69, 0.7, 0.9, 1.0])
    assert bucket6(y).tolist() == [0, 0, 1, 1, 2, 3, 3, 4, 5, 5]
    c = np.array([0.0, 0.1, 0.2, 0.3, 0.5, -0.05, -0.2, -0.3, -0.31])
    assert change_bucket(c).tolist() == [0, 0, 1, 1, 2, 0, 3, 3, 4]


def test_topic_resolution(tiny_corpus):
    t = resolve_topic("geology", tiny_corpus)
    assert t.label == "subject.geo" and t.categories == ("earth", "science") and t.seeds == ("Geology",)
    lab = resolve_topic("subject.med", tiny_corpus)
    assert lab.label == "subject.med"
    assert lab.label_mask(tiny_corpus).sum() == 150  # every fourth page of 600
    words = resolve_topic("volcano", tiny_corpus)
    assert words.words == ("volcano",) and words.label is None
    with pytest.raises(KeyError, match="unknown topic"):
        resolve_topic("qqqzzz", tiny_corpus)


def test_scorer_matches_direct_cosine(tiny_corpus):
    tm = get_text_model(tiny_corpus)
    sc = TopicScorer(tm, resolve_topic("geology", tiny_corpus), n_categories=4)
    pages = np.array([0, 1, 5, 8])
    ps = sc.score_pages(pages)
    for i, p in enumerate(pages):
        a, b = tiny_corpus.text_ptr[p], tiny_corpus.text_ptr[p + 1]
        t, c = tiny_corpus.text_terms[a:b], tiny_corpus.text_counts[a:b]
        v = (c * tm.idf[t]) @ tm.vectors[t]
        q = tm.vectors[tiny_corpus.word_id("geology")]
        assert ps.rel[i] == pytest.approx(v @ q / np.linalg.norm(v) / np.linalg.norm(q), abs=1e-5)
        has = tiny_corpus.word_id("geology") in t.tolist()
        assert (ps.tfidf[i] > 0) == has
    assert ps.cat.shape == (4, 4) and np.all(ps.cat[:, 2:] == 0)  # 2 categories, 2 empty slots
    # link scores only read link text: anchor/URL/context keywords
    links = np.arange(tiny_corpus.link_ptr[0], tiny_corpus.link_ptr[1])
    ls = sc.score_links(links)
    assert ls.rel.shape == (len(links),)


def test_han_features_are_one_hot_tilings(tiny_corpus):
    import gymnasium as gym

    env = gym.make("WikiCrawl-v0", corpus=tiny_corpus, features="han2018").unwrapped
    env.reset(seed=0)
    env.step(0)
    f = env.features
    assert isinstance(f, Han2018Features) and f.dim == 22 * (3 + 4) + 16
    X = f.compute(env.state, env.view.frontier_pages())
    assert set(np.unique(X).tolist()) <= {0.0, 1.0}
    # one active bucket per tiling: 2 tilings × 14 relevances + change + distance + bias
    assert np.all(X.sum(axis=1) == 2 * 14 + 3)
    cont = get_feature_set("han2018-continuous").compute(env.state, env.view.frontier_pages())
    assert cont.shape[1] == 9 + 2 * 4


def test_tres_features_by_hand(tiny_corpus):
    import gymnasium as gym

    env = gym.make("WikiCrawl-v0", corpus=tiny_corpus, features="tres").unwrapped
    env.reset(seed=0)
    st = env.state
    seed = int(st.fetched_pages()[0])
    F = env.view.frontier_pages().copy()
    X = TresFeatures().compute(st, F)
    assert np.all(X[:, 0] == float(st.relevant[seed]))                 # parent reward
    assert np.allclose(X[:, 1], 1.0 / (1 + st.dist[seed]))             # inverse distance
    assert np.allclose(X[:, 2], st.path_rel[seed] / st.path_len[seed])  # path ratio
    known = st.dom_fetched[st.page_domain[F]] > 0
    assert np.all(X[known, 6] == 1.0) and np.all(X[~known, 6] == 0.5)
    assert np.all(X[~known, 5] == 0.0)
    assert np.all(X[:, 7] == 1.0)
