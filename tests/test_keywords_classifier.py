"""Keyword expansion (TRES Alg. 1 / Eq. 2), the offline relevance classifier, and the tres-clf features."""
from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest

import gym_crawl  # noqa: F401
from gym_crawl.features.tres_clf import TresClfFeatures
from gym_crawl.relevance.classifier import TextClassifier, evaluate, split_pages, train_topic_classifier
from gym_crawl.relevance.topic import Topic, resolve_topic
from gym_crawl.text.keywords import expand_keywords, expand_topic, mean_keyword_count
from gym_crawl.text.model import TextModel, get_text_model

FAST = dict(kinds=("tfidf-lr", "vec-lr", "nb"), grid_C=(1.0,), folds=2, train_fraction=0.4)


@pytest.fixture(scope="module")
def text(tiny_corpus) -> TextModel:
    return get_text_model(tiny_corpus, dim=16)


# ------------------------------------------------------------------ keyword expansion
def _handmade(tiny_corpus, text: TextModel) -> TextModel:
    """Word vectors with a known geometry: geology/rock/earth/volcano cluster around e0."""
    V = tiny_corpus.n_words
    W = np.zeros((V, 4), np.float32)
    W[:, 3] = 1.0                                   # every other word: orthogonal to the cluster
    geo = {"geology": [1, 0.2, 0, 0], "rock": [1, -0.2, 0, 0], "earth": [1, 0, 0.2, 0], "volcano": [1, 0.1, 0.1, 0],
           "mineral": [0.5, 0, 0.8, 0]}
    for w, v in geo.items():
        W[tiny_corpus.word_id(w)] = v
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    return dataclasses.replace(text, vectors=W)


def test_expansion_threshold_is_eq2_and_selection_is_algorithm1(tiny_corpus, text):
    tm = _handmade(tiny_corpus, text)
    ex = expand_keywords(tm, ["geology", "rock", "earth"])
    K = tm.vectors[[tiny_corpus.word_id(w) for w in ["geology", "rock", "earth"]]]
    G = K @ K.T
    assert ex.threshold == pytest.approx((G.sum() - 3) / 6)          # Eq. 2
    assert ex.new == ["volcano"]                                     # CS(volcano) ≥ b > CS(mineral)
    cs_mineral = float((K @ tm.vectors[tiny_corpus.word_id("mineral")]).mean())
    assert cs_mineral < ex.threshold <= ex.scores[0]
    assert ex.keywords == ["geology", "rock", "earth", "volcano"]


def test_expansion_fallbacks_and_errors(tiny_corpus, text):
    tm = _handmade(tiny_corpus, text)
    one = expand_keywords(tm, ["geology"], single_keyword_threshold=0.9)
    assert one.threshold == 0.9 and set(one.new) == {"rock", "earth", "volcano"}
    assert expand_keywords(tm, ["geology", "rock"], threshold=0.99).new == []
    with pytest.raises(ValueError, match="word vector"):
        expand_keywords(tm, ["notaword"])
    # candidates come from the documents only
    pages = np.array([tiny_corpus.page_id("Geology")])
    ex = expand_keywords(tm, ["geology", "rock", "earth"], pages)
    assert ex.candidates < tiny_corpus.n_words


def test_expand_topic_feeds_the_keyword_features(tiny_corpus, text):
    topic = resolve_topic("geology", tiny_corpus)
    t2, ex = expand_topic(topic, _handmade(tiny_corpus, text), initial=["geology", "rock", "earth"])
    assert t2.keywords == tuple(ex.keywords) and t2.label == topic.label
    env = gym.make("WikiCrawl-v0", corpus=tiny_corpus, topic=t2, features="tres", max_episode_steps=5)
    env.reset(seed=0)
    mask = env.unwrapped.scorer.keyword_mask
    assert mask[tiny_corpus.word_id("volcano")] and not mask[tiny_corpus.word_id("mineral")]


def test_mean_keyword_count(tiny_corpus):
    pages = np.arange(8)
    ids = {tiny_corpus.word_id(w) for w in ("geology", "rock")}
    tot = 0
    for p in pages:
        a, b = tiny_corpus.text_ptr[p], tiny_corpus.text_ptr[p + 1]
        tot += sum(int(c) for t, c in zip(tiny_corpus.text_terms[a:b], tiny_corpus.text_counts[a:b]) if t in ids)
    assert mean_keyword_count(tiny_corpus, ["geology", "rock", "notaword"], pages) == pytest.approx(tot / 8)


# ------------------------------------------------------------------ classifier
def test_split_is_stratified_disjoint_and_capped():
    y = np.zeros(1000, bool)
    y[::20] = True
    tr, te = split_pages(y, 0.3, 200, seed=0)
    assert len(np.intersect1d(tr, te)) == 0 and len(tr) + len(te) == 1000
    assert len(tr) == 200 and y[tr].mean() == pytest.approx(0.05)


def test_evaluate_matches_definitions():
    y = np.array([1, 1, 1, 0, 0, 0, 0, 0], bool)
    p = np.array([.9, .8, .2, .7, .1, .1, .1, .1])
    m = evaluate(y, p)
    assert m["precision"] == pytest.approx(2 / 3) and m["recall"] == pytest.approx(2 / 3)
    f_rel, f_irr = 2 / 3, 2 * (4 / 5) * (4 / 5) / (8 / 5)
    assert m["f_macro"] == pytest.approx((f_rel + f_irr) / 2)


def test_classifier_trains_on_the_split_and_beats_chance(tiny_corpus, text):
    topic = resolve_topic("geology", tiny_corpus)
    rep = train_topic_classifier(tiny_corpus, topic, text, **FAST)
    clf = rep.classifier
    assert clf.kind in FAST["kinds"] and set(rep.test_metrics) == set(FAST["kinds"])
    assert len(np.intersect1d(rep.train_pages, rep.test_pages)) == 0
    assert rep.test_metrics[clf.kind]["f_macro"] > 0.9                 # tiny topics are separable
    rows = rep.table()
    assert sum(r["selected"] for r in rows) == 1 and all(0 <= r["f_macro"] <= 100 for r in rows)
    # link texts: relevant targets score higher on average
    links = np.arange(tiny_corpus.n_links)
    p = clf.proba_links(tiny_corpus, links)
    y = topic.label_mask(tiny_corpus)[tiny_corpus.link_dst]
    assert p[y].mean() > p[~y].mean() + 0.2


def test_classifier_never_reads_test_labels(tiny_corpus, text, monkeypatch):
    topic = resolve_topic("cancer", tiny_corpus)
    rep = train_topic_classifier(tiny_corpus, topic, text, **FAST)
    truth = topic.label_mask(tiny_corpus)
    flipped = truth.copy()
    flipped[rep.test_pages] = ~flipped[rep.test_pages]      # corrupt every label outside the training split
    monkeypatch.setattr(Topic, "label_mask", lambda self, corpus: flipped.copy())
    rep2 = train_topic_classifier(tiny_corpus, topic, text, **FAST, train_pages=rep.train_pages)
    assert np.array_equal(rep2.train_pages, rep.train_pages)
    assert rep2.classifier.kind == rep.classifier.kind
    assert np.array_equal(rep2.classifier.w_terms, rep.classifier.w_terms)
    assert np.array_equal(rep2.classifier.w_vec, rep.classifier.w_vec)
    assert rep2.classifier.bias == rep.classifier.bias
    # …while the test metrics do read them (and now see corrupted labels)
    assert rep2.test_metrics[rep.classifier.kind]["f_macro"] < rep.test_metrics[rep.classifier.kind]["f_macro"]


def test_classifier_save_load_round_trip(tiny_corpus, text, tmp_path):
    topic = resolve_topic("poetry", tiny_corpus)
    for kind in ("tfidf+vec-lr", "nb", "svm"):
        clf = train_topic_classifier(tiny_corpus, topic, text, **{**FAST, "kinds": (kind,)}).classifier
        clf.save(tmp_path / f"{kind}.npz")
        back = TextClassifier.load(tmp_path / f"{kind}.npz", vectors=text.vectors)
        links = np.arange(200)
        assert np.allclose(back.proba_links(tiny_corpus, links), clf.proba_links(tiny_corpus, links))
    with pytest.raises(ValueError, match="vectors"):
        TextClassifier.load(tmp_path / "tfidf+vec-lr.npz")


def test_svm_is_a_linear_hinge_model_on_the_tfidf_view(tiny_corpus, text):
    """ACHE's SVM (TRES Table 1/4): its decision is the sklearn LinearSVC margin on the tf-idf rows,
    never chosen by default model selection, and sigmoid(margin) is its 'probability'."""
    from sklearn.svm import LinearSVC

    from gym_crawl.relevance.classifier import KINDS, bag_matrix, page_bags

    topic = resolve_topic("geology", tiny_corpus)
    rep = train_topic_classifier(tiny_corpus, topic, text, **{**FAST, "kinds": ("svm",)})
    clf = rep.classifier
    assert clf.kind == "svm" and "svm" not in KINDS and clf.w_vec.size == 0
    tr = rep.train_pages
    M = bag_matrix(*page_bags(tiny_corpus, tr), len(tr), tiny_corpus.n_words)
    X = np.asarray(M @ np.diag(clf.idf.astype(np.float64)))  # the tiny vocabulary: dense is fine
    X = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-300)
    keep = clf.idf > 0
    ref = LinearSVC(C=clf.meta["C"], loss="hinge", dual=True, max_iter=5000, random_state=0,
                    class_weight="balanced" if clf.meta["balanced"] else None)
    ref.fit(X[:, keep], topic.label_mask(tiny_corpus)[tr])
    pages = np.arange(50)
    Mt = bag_matrix(*page_bags(tiny_corpus, pages), 50, tiny_corpus.n_words)
    Xt = np.asarray(Mt @ np.diag(clf.idf.astype(np.float64)))
    Xt = Xt / np.maximum(np.linalg.norm(Xt, axis=1, keepdims=True), 1e-300)
    np.testing.assert_allclose(clf.decision_matrix(Mt), ref.decision_function(Xt[:, keep]), atol=1e-4)
    np.testing.assert_allclose(clf.proba_pages(tiny_corpus, pages),
                               1 / (1 + np.exp(-ref.decision_function(Xt[:, keep]))),
                               atol=1e-4)
    with pytest.raises(ValueError, match="unknown classifier kind"):
        train_topic_classifier(tiny_corpus, topic, text, kinds=("bilstm",))


def test_unlabelled_topic_is_refused(tiny_corpus, text):
    with pytest.raises(ValueError, match="label"):
        train_topic_classifier(tiny_corpus, Topic("rocks", ("geology",)), text)


# ------------------------------------------------------------------ tres-clf features
def test_tres_clf_feature_is_the_best_parent_link_probability(tiny_corpus, text):
    topic = resolve_topic("geology", tiny_corpus)
    clf = train_topic_classifier(tiny_corpus, topic, text, **FAST).classifier
    feats = TresClfFeatures(classifiers={"geology": clf})
    env = gym.make("WikiCrawl-v0", corpus=tiny_corpus, topic="geology", features=feats, reward="binary",
                   reducer="topk", max_candidates=16, max_episode_steps=30, text=text)
    obs, info = env.reset(seed=0)
    assert feats.dim == 9 and env.observation_space["candidates"].shape == (16, 9)
    st_ = env.unwrapped.state
    for _ in range(30):
        F = env.unwrapped.view.frontier_pages().copy()
        X = env.unwrapped.view.features_of(F)
        assert X.min() >= 0 and X.max() <= 1
        for p in F[:10].tolist():
            bp = int(st_.best_parent[p])
            a, b = st_.link_lo[bp], st_.link_hi[bp]
            link = a + int(np.flatnonzero(st_.link_dst[a:b] == p)[0])
            assert X[list(F).index(p), 5] == pytest.approx(clf.proba_links(tiny_corpus, np.array([link]))[0])
        obs, r, term, trunc, info = env.step(0)
        if term or trunc:
            break
    # the TRES columns are the `tres` feature set's
    base = gym_crawl.features.sets.TresFeatures().compute(st_, F[:5])
    assert np.allclose(np.delete(feats.compute(st_, F[:5]), 5, axis=1), base)


def test_expand_topic_takes_any_topic_dataclass_without_importing_relevance(tiny_corpus, text):
    """The text layer sits below relevance: expand_topic works on any dataclass with ``keywords``."""

    @dataclasses.dataclass(frozen=True)
    class MyTopic:
        name: str
        keywords: tuple = ()

    t2, ex = expand_topic(MyTopic("geo", ("geology",)), _handmade(tiny_corpus, text),
                          initial=["geology", "rock", "earth"])
    assert isinstance(t2, MyTopic) and t2.name == "geo" and t2.keywords == tuple(ex.keywords)
    with pytest.raises(TypeError, match="keywords"):
        expand_topic({"keywords": ["geology"]}, _handmade(tiny_corpus, text))
