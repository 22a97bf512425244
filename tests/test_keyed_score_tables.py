"""A topic's score tables keyed by the pages scored (rows found through a page map, memory as the pages scored):
the same scores bit for bit as the dense tables, rows that grow, reward caches carried into the dense layout."""
from __future__ import annotations

import numpy as np
import pytest

import gym_crawl.relevance.scorer as scorer_mod
from gym_crawl.relevance.scorer import TopicScorer
from gym_crawl.relevance.topic import resolve_topic
from gym_crawl.text.model import get_text_model


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


@pytest.fixture
def scorers(tiny_corpus, monkeypatch):
    monkeypatch.setattr(scorer_mod, "MIN_ROWS", 8)  # rows grow several times on the tiny web
    text = get_text_model(tiny_corpus)
    topic = resolve_topic("cancer", tiny_corpus)
    return TopicScorer(text, topic), TopicScorer(text, topic)


def test_keyed_rows_equal_the_dense_tables_bit_for_bit(tiny_corpus, scorers):
    keyed, dense = scorers
    dense.page_table().ensure_all()
    dense.link_table().ensure_all()
    pt, lt = keyed.page_table(), keyed.link_table()
    rng = np.random.default_rng(3)
    for _ in range(6):  # batches, repeats included
        pages = rng.choice(tiny_corpus.n_pages, 9)
        pt.ensure_many(pages)
        lt.ensure(pages)
    assert pt.keyed and lt.keyed and not pt.complete
    scored = pt.row_page[:pt.n_rows].astype(np.int64)
    assert len(np.unique(scored)) == len(scored) <= 54 and pt.capacity < tiny_corpus.n_pages
    dpt, dlt = dense.page_table(), dense.link_table()
    rows = pt.rows(scored)
    assert np.array_equal(rows, np.arange(len(scored)))
    for name in ("rel", "cat", "tfidf", "label"):
        assert np.array_equal(_bits(getattr(pt, name)[rows]), _bits(getattr(dpt, name)[scored])), name
    assert (pt.rows(np.setdiff1d(np.arange(tiny_corpus.n_pages), scored)) == -1).all()
    lo, hi = np.asarray(tiny_corpus.link_lo), np.asarray(tiny_corpus.link_hi)
    bases = lt.bases(scored)
    assert (bases >= 0).all() and lt.n_rows == int((hi[scored] - lo[scored]).sum())
    for p, b in zip(scored.tolist(), bases.tolist()):
        n = int(hi[p] - lo[p])
        for name in ("rel", "cat", "kw_url", "kw_anchor"):
            assert np.array_equal(_bits(getattr(lt, name)[b:b + n]), _bits(getattr(dlt, name)[lo[p]:hi[p]])), name


def test_reward_rows_follow_the_table_when_it_grows_and_turns_dense(tiny_corpus, scorers):
    keyed, _ = scorers
    pt = keyed.page_table()
    pages = np.arange(0, 60, 3)
    pt.ensure_many(pages[:4])
    r, rel, done = pt.reward_rows(("k",))
    rows = pt.rows(pages[:4])
    r[rows], done[rows] = [1.5, 2.5, 3.5, 4.5], True
    gen = pt.gen
    pt.ensure_many(pages)  # 20 rows: the 8-row table grows
    assert pt.gen > gen and pt.capacity >= 20
    r, rel, done = pt.reward_rows(("k",))
    assert r[pt.rows(pages[:4])].tolist() == [1.5, 2.5, 3.5, 4.5] and done.sum() == 4
    pt.ensure_all()
    assert not pt.keyed and pt.complete and pt.done.all()
    r, rel, done = pt.reward_rows(("k",))
    assert len(r) == tiny_corpus.n_pages and r[pages[:4]].tolist() == [1.5, 2.5, 3.5, 4.5]
    assert np.flatnonzero(done).tolist() == pages[:4].tolist()


def test_new_keywords_forget_the_keyed_link_rows(tiny_corpus, scorers):
    keyed, _ = scorers
    lt = keyed.link_table()
    pages = np.arange(40)
    lt.ensure(pages)
    keyed.set_keywords(["rock"])
    assert lt.keyed and lt.n_rows == 0 and (lt.bases(pages) == -1).all()
    lt.ensure(pages)
    lo, hi = int(tiny_corpus.link_lo[0]), int(tiny_corpus.link_hi[39])
    b = int(lt.bases([0])[0])
    assert np.array_equal(lt.kw_url[b:b + hi - lo], keyed.score_links(np.arange(lo, hi)).kw_url)
