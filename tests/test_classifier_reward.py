"""The ``classifier`` reward: a noisy TRES-style reward whose classifier never saw the
pages the crawl is evaluated on — URL-hash classifier-train split, held-out corpus view, SVM kind."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import gym_crawl  # noqa: F401
from gym_crawl.corpus.core import StringTable
from gym_crawl.relevance import resolve_topic
from gym_crawl.relevance.classifier import (
    TRAIN_LABEL_PREFIX,
    classifier_train_mask,
    heldout_view,
    train_heldout_classifier,
    true_label_mask,
)
from gym_crawl.relevance.rewards import ClassifierReward, get_reward_scheme
from gym_crawl.relevance.scorer import TopicScorer
from gym_crawl.text.model import TextModel, get_text_model

FAST = dict(folds=2, grid_C=(1.0,))


@pytest.fixture(scope="module")
def text(tiny_corpus) -> TextModel:
    return get_text_model(tiny_corpus, dim=16)


def _flip_labels(c, pages):
    """Copy of ``c`` where ``pages`` flip geology membership: 'subject.geo' labels become
    'subject.gen', every other label 'subject.geo' (text unchanged; one label per page)."""
    geo, gen = c.labels.index("subject.geo"), c.labels.index("subject.gen")
    ids = np.asarray(c.label_ids).copy()
    owner = np.repeat(np.arange(c.n_pages), np.diff(c.label_ptr))
    sel = np.isin(owner, pages)
    was_geo = ids == geo
    ids[sel & was_geo], ids[sel & ~was_geo] = gen, geo
    return dataclasses.replace(c, label_ids=ids, path=None)


def test_split_depends_on_the_url_only_and_view_counts_evaluation_pages_only(tiny_corpus):
    topic = resolve_topic("geology", tiny_corpus)
    m = classifier_train_mask(tiny_corpus)
    assert 0.15 < m.mean() < 0.45                                  # ≈ fraction 0.3
    # labels and text play no part: a corpus with other labels has the same split
    assert np.array_equal(m, classifier_train_mask(_flip_labels(tiny_corpus, np.arange(600))))
    assert not np.array_equal(m, classifier_train_mask(tiny_corpus, salt="other"))
    view = heldout_view(tiny_corpus)
    assert np.array_equal(classifier_train_mask(view), m)
    counted = topic.label_mask(view)
    assert not (counted & m).any(), "an evaluation label on a classifier-train page"
    assert np.array_equal(counted, topic.label_mask(tiny_corpus) & ~m)
    assert np.array_equal(true_label_mask(view, topic), topic.label_mask(tiny_corpus))
    assert any(str(s).startswith(TRAIN_LABEL_PREFIX) for s in view.labels)
    with pytest.raises(ValueError, match="already a held-out view"):
        heldout_view(view)
    with pytest.raises(ValueError, match="fraction"):
        classifier_train_mask(tiny_corpus, fraction=1.5)


def test_classifier_trains_on_the_train_split_and_never_overlaps_evaluation(tiny_corpus, text):
    topic = resolve_topic("geology", tiny_corpus)
    m = classifier_train_mask(tiny_corpus)
    rep = train_heldout_classifier(heldout_view(tiny_corpus), topic, text, kinds=("svm",), **FAST)
    assert m[rep.train_pages].all()
    assert not m[rep.test_pages].any() and len(rep.test_pages) == int((~m).sum())
    assert np.intersect1d(rep.train_pages, rep.test_pages).size == 0
    assert rep.classifier.kind == "svm" and rep.test_metrics["svm"]["f_macro"] > 0.8


def test_tampered_evaluation_labels_change_nothing_in_the_classifier(tiny_corpus, text):
    topic = resolve_topic("geology", tiny_corpus)
    m = classifier_train_mask(tiny_corpus)
    ev = np.flatnonzero(~m)
    tampered = _flip_labels(tiny_corpus, ev)
    assert (topic.label_mask(tampered)[ev] != topic.label_mask(tiny_corpus)[ev]).all()  # the tampering is real
    ttext = TextModel(tampered, text.idf, text.vectors, text.meta)
    for kind in ("svm", "tfidf-lr", "nb"):
        a = train_heldout_classifier(tiny_corpus, topic, text, kinds=(kind,), **FAST).classifier
        b = train_heldout_classifier(tampered, topic, ttext, kinds=(kind,), **FAST).classifier
        for f in ("idf", "vec_idf", "w_terms", "w_vec"):
            assert np.array_equal(getattr(a, f), getattr(b, f)), (kind, f)
        assert a.bias == b.bias
    # ... whereas tampering with classifier-train labels does change it (the test can fail)
    base = train_heldout_classifier(tiny_corpus, topic, text, kinds=("svm",), **FAST).classifier
    tr = _flip_labels(tiny_corpus, np.flatnonzero(m))
    c = train_heldout_classifier(tr, topic, TextModel(tr, text.idf, text.vectors, text.meta), kinds=("svm",),
                                 **FAST).classifier
    assert not np.array_equal(c.w_terms, base.w_terms)


def _bound(tiny_corpus, text, **kw):
    view = heldout_view(tiny_corpus)
    vtext = TextModel(view, text.idf, text.vectors, text.meta)
    scorer = TopicScorer(vtext, resolve_topic("geology", view))
    r = ClassifierReward(**{**FAST, **kw})
    r.bind(scorer)
    return view, scorer, r


def test_reward_is_the_classifier_verdict_and_noisy(tiny_corpus, text):
    view, scorer, r = _bound(tiny_corpus, text, kind="svm")
    pages = np.arange(view.n_pages)
    ps = scorer.score_pages(pages)
    ps.pages = pages  # what the env passes (PageScores.pages)
    rew, rel = r(ps)
    want = r.classifier.proba_pages(view, pages) >= 0.5
    assert rew.dtype == np.float32 and np.array_equal(rew, want.astype(np.float32)) and np.array_equal(rel, want)
    truth = true_label_mask(view, scorer.topic)
    assert 0.8 < (want == truth).mean() < 1.0 or (want == truth).all()  # a classifier, not the labels
    # one page at a time gives the same verdicts
    one = scorer.score_pages(pages[:1])
    one.pages = pages[:1]
    assert r(one)[0][0] == rew[0]


def test_reward_errors_name_the_problem(tiny_corpus, text):
    with pytest.raises(ValueError, match="kind"):
        ClassifierReward("bilstm")
    with pytest.raises(ValueError, match="threshold"):
        ClassifierReward(threshold=1.0)
    r = ClassifierReward()
    scorer = TopicScorer(text, resolve_topic("geology", tiny_corpus))
    ps = scorer.score_pages(np.arange(3))
    with pytest.raises(RuntimeError, match="not bound"):
        r(ps)  # page ids present, but no corpus/topic bound
    no_ids = type(ps)(ps.rel, ps.cat, ps.tfidf, ps.label)
    with pytest.raises(RuntimeError, match=r"PageScores\.pages"):
        r(no_ids)  # scores without page ids cannot be classified
    from gym_crawl.relevance.topic import Topic

    with pytest.raises(ValueError, match="label"):
        r.bind(TopicScorer(text, Topic("rocks", ("geology",))))
    assert isinstance(get_reward_scheme(ClassifierReward(kind="svm")), ClassifierReward)


def test_labels_of_a_view_keep_their_strings(tiny_corpus):
    view = heldout_view(tiny_corpus)
    assert isinstance(view.labels, StringTable) and len(view.labels) == 2 * len(tiny_corpus.labels)
    assert view.n_pages == tiny_corpus.n_pages and view.link_dst is tiny_corpus.link_dst
