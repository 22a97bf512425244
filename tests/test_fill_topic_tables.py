"""Several topics' score tables filled in one pass (``fill_topic_tables``, ``CrawlWorld.precompute_scores``):
every entry equals the one-topic, one-page scores bit for bit, and envs made afterwards score nothing."""
from __future__ import annotations

import weakref

import gymnasium as gym
import numpy as np
import pytest

import gym_crawl  # noqa: F401
import gym_crawl.relevance.scorer as scorer_mod
from gym_crawl.corpus import Corpus, CorpusBuilder
from gym_crawl.envs import CrawlWorld
from gym_crawl.relevance.scorer import TopicScorer, fill_topic_tables
from gym_crawl.relevance.topic import resolve_topic
from gym_crawl.text.model import get_text_model

WORDS = {"geo": "geology rock mineral volcano basalt granite".split(),
         "med": "cancer tumor disease therapy oncology patient".split(),
         "gen": "city year people river king market".split()}


def _mixed_degree_corpus():
    """150 pages whose out-degree cycles through 0, 1, 2 and 5 links (single-link pages take their own path)."""
    rng = np.random.default_rng(7)
    b = CorpusBuilder(name="mixed-degree")
    kinds = ["geo", "med", "gen"]
    n = 150
    for i in range(n):
        k = kinds[i % 3]
        words = list(rng.choice(WORDS[k], 12)) + list(rng.choice(WORDS["gen"], 6))
        b.add_page({0: "Geology", 1: "Cancer"}.get(i, f"{k} {WORDS[k][i % 6]} {i}"), " ".join(words),
                   domain=f"{k}.org", labels=[f"subject.{k}"])
    for i in range(n):
        for j in rng.choice(n, (0, 1, 2, 5)[i % 4], replace=False).tolist():
            b.add_link(i, j, anchor=" ".join(rng.choice(WORDS[kinds[j % 3]], 2)),
                       context=" ".join(rng.choice(WORDS["gen"], 3)))
    c = b.build()
    c.meta["topics"] = {"geology": {"seeds": ["Geology"], "label": "subject.geo", "words": ["geology"],
                                    "categories": ["rock", "mineral"]},
                        "cancer": {"seeds": ["Cancer"], "label": "subject.med", "words": ["cancer"],
                                   "categories": ["disease"], "keywords": ["tumor", "therapy"]}}
    return c


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


@pytest.mark.parametrize("corpus_kind", ["tiny", "mixed"])
def test_one_pass_equals_per_topic_per_page_scores_bit_for_bit(corpus_kind, tiny_corpus):
    corpus = tiny_corpus if corpus_kind == "tiny" else _mixed_degree_corpus()
    deg = np.asarray(corpus.link_hi) - np.asarray(corpus.link_lo)
    if corpus_kind == "mixed":
        assert {0, 1, 2, 5} <= set(deg.tolist())
    text = get_text_model(corpus)
    specs = ["geology", "cancer", "subject.gen"]
    scorers = [TopicScorer(text, resolve_topic(s, corpus)) for s in specs]
    fill_topic_tables(scorers, chunk_pages=64, chunk_links=100)  # several batches of each kind
    for sc in scorers:
        pt, lt = sc.page_table(), sc.link_table()
        assert pt.complete and lt.complete and pt.done.all() and lt.done.all()
        for p in range(corpus.n_pages):
            ref = sc.score_pages(np.array([p]))
            assert _bits(pt.rel[p:p + 1]).tobytes() == _bits(ref.rel).tobytes()
            assert _bits(pt.cat[p]).tobytes() == _bits(ref.cat[0]).tobytes()
            assert _bits(pt.tfidf[p:p + 1]).tobytes() == _bits(ref.tfidf).tobytes()
            a, b = int(corpus.link_lo[p]), int(corpus.link_hi[p])
            if b > a:
                ls = sc.score_links(np.arange(a, b))
                for name in ("rel", "cat", "kw_url", "kw_anchor"):
                    assert _bits(getattr(lt, name)[a:b]).tobytes() == _bits(getattr(ls, name)).tobytes(), (p, name)
        # and the one-topic fill of a fresh scorer gives the same tables
        alone = TopicScorer(text, sc.topic)
        alone.page_table().ensure_all()
        alone.link_table().ensure_all()
        for name in ("rel", "cat", "tfidf"):
            assert np.array_equal(_bits(getattr(alone.page_table(), name)), _bits(getattr(pt, name)))
        for name in ("rel", "cat", "kw_url", "kw_anchor"):
            assert np.array_equal(_bits(getattr(alone.link_table(), name)), _bits(getattr(lt, name)))
    assert scorers[1].link_table().kw_anchor.any()  # the keyword flags are exercised, not all False


def test_one_pass_fills_only_what_is_missing(tiny_corpus):
    text = get_text_model(tiny_corpus)
    a, b = (TopicScorer(text, resolve_topic(s, tiny_corpus)) for s in ("geology", "poetry"))
    a.link_table().ensure(np.arange(10))  # partly filled on demand
    before = a.link_table().rel.copy()
    fill_topic_tables([a, b])
    assert a.link_table().complete and b.link_table().complete
    lo, hi = int(tiny_corpus.link_lo[0]), int(tiny_corpus.link_hi[9])
    assert np.array_equal(_bits(a.link_table().rel[lo:hi]), _bits(before[lo:hi]))


def test_scorers_of_different_text_models_are_refused(tiny_corpus):
    t1 = get_text_model(tiny_corpus)
    t2 = get_text_model(tiny_corpus, dim=16)
    topic = resolve_topic("geology", tiny_corpus)
    with pytest.raises(ValueError, match="different text models"):
        fill_topic_tables([TopicScorer(t1, topic), TopicScorer(t2, topic)])


def test_envs_after_world_precompute_score_nothing(tiny_corpus, monkeypatch):
    monkeypatch.setattr(scorer_mod, "_SHARED", weakref.WeakKeyDictionary())
    world = CrawlWorld(corpus=tiny_corpus)
    tasks = [{"topic": "geology", "seeds": ["Geology"]}, "cancer", {"topic": "poetry", "seeds": ["Poetry"]}]
    scorers = world.precompute_scores(tasks)
    assert [sc.topic.name for sc in scorers] == ["geology", "cancer", "poetry"]
    calls = {"pages": 0, "links": 0}
    real_pages, real_links = scorer_mod._fill_pages, scorer_mod._score_link_batch

    def count_pages(tables, chunk, bar=None):
        calls["pages"] += sum(not t.complete for t in tables)
        return real_pages(tables, chunk, bar)

    def count_links(tables, links, single_rows):
        calls["links"] += len(links)
        return real_links(tables, links, single_rows)

    monkeypatch.setattr(scorer_mod, "_fill_pages", count_pages)
    monkeypatch.setattr(scorer_mod, "_score_link_batch", count_links)
    for topic in ("geology", "cancer", "poetry"):  # a separately made env of the same process
        env = gym.make("WikiCrawl-v1", corpus=tiny_corpus, topic=topic, max_candidates=8, max_episode_steps=10)
        env.reset(seed=0)
        assert env.unwrapped.scorer is scorers[("geology", "cancer", "poetry").index(topic)]
        for _ in range(10):
            env.step(0)
        env.close()
    assert calls == {"pages": 0, "links": 0}


def test_view_precompute_of_several_topics_persists_each(tiny_corpus, tmp_path, monkeypatch):
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path / "data"))
    monkeypatch.setattr(scorer_mod, "_SHARED", weakref.WeakKeyDictionary())
    tiny_corpus.save(tmp_path / "tiny")
    saved = Corpus.load(tmp_path / "tiny", share=False)
    env = gym.make("WikiCrawl-v1", corpus=saved, topic="geology", max_candidates=8, max_episode_steps=10)
    env.reset(seed=0)
    env.unwrapped.view.precompute_scores(persist=True, topics=["cancer", "poetry"])
    for topic in ("cancer", "poetry"):
        fresh = TopicScorer(env.unwrapped.text, resolve_topic(topic, saved))
        assert fresh.load_tables()
        mine = env.unwrapped.world.scorer(resolve_topic(topic, saved))
        assert np.array_equal(_bits(fresh.link_table().rel), _bits(mine.link_table().rel))
    env.close()


def test_a_scorer_listed_twice_is_filled_once(tiny_corpus, monkeypatch):
    sc = TopicScorer(get_text_model(tiny_corpus), resolve_topic("cancer", tiny_corpus))
    seen = []
    real = scorer_mod._fill_pages
    monkeypatch.setattr(scorer_mod, "_fill_pages", lambda tables, chunk, bar=None: (seen.append(len(tables)),
                                                                                     real(tables, chunk, bar)))
    fill_topic_tables([sc, sc])
    assert seen == [1] and sc.page_table().complete and sc.link_table().complete
