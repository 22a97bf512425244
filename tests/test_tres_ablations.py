"""TRES Table 4 ablations and the ACHE-like / SeedFinder-like rows of `gym-crawl bench tres`:
TRES_NH drops exactly the web-domain columns, TRES_SVM's reward is the SVM's verdict while the metric
counts ground truth on evaluation pages, SeedFinder-like reads no label."""
from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest
import torch

import gym_crawl  # noqa: F401
from gym_crawl.agents.variants import resolve_variant
from gym_crawl.benchmarks import tres as B
from gym_crawl.features.tres_clf import TresClfFeatures
from gym_crawl.relevance.classifier import classifier_train_mask, heldout_view, true_label_mask
from gym_crawl.text.model import TextModel, get_text_model

torch.set_num_threads(1)
FAST = {"kinds": ("tfidf-lr", "nb"), "grid_C": (1.0,), "folds": 2}


@pytest.fixture(scope="module")
def setting(tiny_corpus) -> B.Setting:
    view = heldout_view(tiny_corpus)
    t0 = get_text_model(tiny_corpus, dim=16)
    return B._prepare("tiny", view, TextModel(view, t0.idf, t0.vectors, t0.meta), "geology", 30, 1, FAST, {}, svm=True)


def _crawl(env, steps, seed=0):
    _, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(steps):
        a = int(rng.choice(np.flatnonzero(info["action_mask"])))
        _, r, term, trunc, info = env.step(a)
        out.append((info["fetched_page"], r, info))
        if term or trunc:
            break
    return out


def test_nh_drops_exactly_the_domain_columns(setting):
    full = TresClfFeatures(classifiers=setting.clf)
    nh = TresClfFeatures(classifiers=setting.clf, domain_features=False)
    assert nh.name == "tres-clf-nh" and nh.dim == full.dim - 2
    assert set(full.names) - set(nh.names) == set(TresClfFeatures.DOMAIN_COLUMNS)
    env = gym.make("WikiCrawl-v1", corpus=setting.corpus, topic=setting.topic, text=setting.text, features=full,
                   max_candidates=8, max_episode_steps=20)
    _crawl(env, 12)
    base = env.unwrapped
    pages = base.view.frontier_pages()[:20]
    X = base.view.features_of(pages)
    Xnh = nh.compute(base.state, np.asarray(pages, np.int64))
    keep = [full.names.index(n) for n in nh.names]
    assert np.array_equal(X[:, keep], Xnh)
    with pytest.raises(ValueError, match="domain_features"):
        TresClfFeatures(domain_features="no")


def test_svm_reward_is_the_svm_verdict_and_the_metric_counts_evaluation_pages(setting):
    env, _ = B.make_env_steps(setting, "tres-svm", "inf", 16, 30)
    run = _crawl(env, 30)
    corpus = setting.corpus
    truth = true_label_mask(corpus, setting.topic)
    counted = setting.topic.label_mask(corpus)
    train = classifier_train_mask(corpus)
    verdict = setting.svm.proba_pages(corpus, np.arange(corpus.n_pages)) >= 0.5
    pages = np.array([p for p, _, _ in run if p >= 0])
    assert np.array_equal(np.array([r for p, r, _ in run if p >= 0]), verdict[pages].astype(np.float32))
    fetched = env.unwrapped.view.fetched_pages()
    assert run[-1][2]["relevant_found"] == int(counted[fetched].sum())
    assert not (counted & train).any()
    # the crawl did fetch classifier-train pages, and relevant ones among them are not counted
    assert train[fetched].any() and int(truth[fetched].sum()) >= run[-1][2]["relevant_found"]


def test_registered_classifier_reward_on_a_heldout_view(tiny_corpus):
    view = heldout_view(tiny_corpus)
    env = gym.make("WikiCrawl-v1", corpus=view, reward="classifier", max_candidates=8, max_episode_steps=25)
    run = _crawl(env, 25)
    scheme = env.unwrapped.scheme
    assert scheme.name == "classifier" and env.unwrapped.view.max_reward == 1.0
    v = scheme.classifier.proba_pages(view, np.arange(view.n_pages)) >= 0.5
    for p, r, _ in run:
        assert r == float(v[p])
    run2 = _crawl(gym.make("WikiCrawl-v1", corpus=view, reward="classifier", max_candidates=8, max_episode_steps=25),
                  25)
    assert [(p, r) for p, r, _ in run] == [(p, r) for p, r, _ in run2]


def test_ache_and_seedfinder_rows_are_configurations_of_the_online_classifier(setting):
    for row in ("ache", "seedfinder"):
        env, tree = B.make_env_steps(setting, row, "10", 16, 20)
        base = env.unwrapped
        assert tree is None and base.action_mode == "page" and base.view.reward_name == "classifier"
        assert base.scheme.classifier is setting.svm
        assert resolve_variant(B.ROW_AGENT.get(row, row)).agent == "online-classifier"


def test_seedfinder_reads_no_label_and_respects_the_cap(setting, tiny_corpus):
    from gym_crawl.relevance.topic import seed_pages

    seeds = seed_pages(setting.topic, setting.corpus)
    a = B.seedfinder_results(setting, seeds, rounds=3, results=5, terms=2)
    assert len(a) == 15 and len(np.unique(a)) == 15 and not np.isin(a, seeds).any()
    assert np.array_equal(a, B.seedfinder_results(setting, seeds, rounds=3, results=5, terms=2))
    # every label flipped: the same searches and results (the SVM verdicts and the text decide)
    c = setting.corpus
    geo, gen = c.labels.index("subject.geo"), c.labels.index("subject.gen")
    ids = np.where(np.asarray(c.label_ids) == geo, gen, geo).astype(np.asarray(c.label_ids).dtype)
    flipped = dataclasses.replace(setting, corpus=dataclasses.replace(c, label_ids=ids, path=None), engine=None)
    assert np.array_equal(a, B.seedfinder_results(flipped, seeds, rounds=3, results=5, terms=2))
    capped = B.seedfinder_results(setting, seeds, rounds=3, results=5, terms=2, cap=1)
    dom = np.asarray(c.page_domain)[np.concatenate([seeds, capped])]
    assert np.bincount(dom).max() <= 1 or len(np.unique(np.asarray(c.page_domain))) == 1
    # term mass is over the pages asked for only
    eng = setting.engine
    m = eng.term_mass(np.array([seeds[0]]))
    assert m[np.asarray(c.text_terms[c.text_ptr[seeds[0]]:c.text_ptr[seeds[0] + 1]])].min() >= 0 and m.sum() > 0


def test_table4_cells_flag(tmp_path):
    assert B._cells("tres-svm@10,tres-nh@10") == (("tres-svm", "10"), ("tres-nh", "10"))
    with pytest.raises(SystemExit, match="row@cap"):
        B._cells("tres-bilstm@10")
    args = B.build_parser().parse_args(["--quick", "--table4-runs", "3", "--table4-cells", "ache@inf"])
    p = B.preset_from_args(args)
    assert p.table4_runs == 3 and p.table4_cells == (("ache", "inf"),) and args.table4_first_run == 0
