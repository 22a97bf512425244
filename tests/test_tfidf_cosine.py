"""The pages' tf-idf score is a cosine: in [0, 1], equal to the cosine of the page's tf-idf vector (each distinct
word once, weighted by its count) with the topic's, on a generated power-law web and on the default task's web —
computed (``score_pages``, the keyed tables' compiled kernel) or stored. A corpus whose page lists a word twice
is refused when built, so no loader can feed the norm a repeated word."""
from __future__ import annotations

import weakref

import numpy as np
import pytest
import scipy.sparse as sp

import gym_crawl.relevance.scorer as scorer_mod
from gym_crawl.corpus import Corpus, load_corpus
from gym_crawl.corpus.core import CorpusFormatError, StringTable, bag_problem
from gym_crawl.relevance.scorer import TopicScorer
from gym_crawl.relevance.topic import Topic, resolve_topic
from gym_crawl.text.model import TextModel
from gym_crawl.webgen.powerlaw import TOPICS, generate_powerlaw


def _reference_tfidf(corpus: Corpus, text: TextModel, words: tuple[str, ...]) -> np.ndarray:
    """Each page's tf-idf cosine with the topic words, from a sparse matrix that sums a page's repeated entries
    (its tf-idf vector whatever the layout), in float64."""
    n, V = corpus.n_pages, corpus.n_words
    rows = np.repeat(np.arange(n), np.diff(np.asarray(corpus.text_ptr)))
    tf = sp.csr_matrix((np.asarray(corpus.text_counts, np.float64), (rows, np.asarray(corpus.text_terms))),
                       shape=(n, V))
    tf.sum_duplicates()
    idf = np.asarray(text.idf, np.float64)
    x = tf.multiply(idf[None, :]).tocsr()
    q = np.zeros(V)
    q[[corpus.word_id(w) for w in words]] = idf[[corpus.word_id(w) for w in words]]
    q /= np.linalg.norm(q)
    norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
    return np.divide(x @ q, norms, out=np.zeros(n), where=norms > 0)


def _check_scores(corpus: Corpus, text: TextModel, topic: Topic) -> np.ndarray:
    """All pages' tf-idf scores of ``topic``: in [0, 1], the reference cosines, the compiled kernel's bits."""
    sc = TopicScorer(text, topic)
    pages = np.arange(corpus.n_pages, dtype=np.int64)
    got = sc.score_pages(pages).tfidf
    assert got.min() >= 0.0 and got.max() <= 1.0 + 1e-6, (topic.name, float(got.min()), float(got.max()))
    np.testing.assert_allclose(got, _reference_tfidf(corpus, text, topic.words), rtol=1e-5, atol=1e-6,
                               err_msg=topic.name)
    table = sc.page_table()  # the keyed tables' compiled kernel (what a crawl reads): the same bits
    table.ensure_many(pages)
    assert np.array_equal(table.tfidf[table.rows(pages)].view(np.uint32), got.view(np.uint32))
    return got


def test_power_law_web_keeps_each_page_a_bag_of_words(tmp_path):
    c = generate_powerlaw(2000, seed=0, folder=tmp_path, progress=False)
    assert bag_problem(c.text_ptr, c.text_terms, c.text_counts) is None
    t, p = np.asarray(c.text_terms), np.asarray(c.text_ptr)
    inner = np.ones(len(t) - 1, bool)
    inner[p[1:-1] - 1] = False  # pairs that straddle two pages
    assert np.all(t[1:][inner] > t[:-1][inner]), "a page lists a word once, in id order"
    per_page = np.add.reduceat(np.asarray(c.text_counts), p[:-1])
    assert np.all(per_page == 12), "still 12 words a page, repeats in the counts"
    assert np.asarray(c.text_counts).max() > 1, "some page draws a word twice"


def test_tfidf_is_a_cosine_on_a_power_law_web(tmp_path):
    c = generate_powerlaw(2000, seed=0, folder=tmp_path, progress=False)
    text = TextModel.build(c, progress=False)
    for name in TOPICS:
        _check_scores(c, text, Topic(name=name, words=(name,)))
    _check_scores(c, text, Topic(name="two", words=("geology", "music")))


def test_tfidf_is_a_cosine_on_the_default_web():
    c = load_corpus("synthetic-hard")
    text = TextModel.build(c, progress=False)
    got = _check_scores(c, text, resolve_topic(None, c))
    assert got.max() > 0.3, "the default topic's pages score"


def test_stored_tfidf_tables_are_cosines(tmp_path, monkeypatch):
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path / "data"))
    monkeypatch.setattr(scorer_mod, "_SHARED", weakref.WeakKeyDictionary())
    generate_powerlaw(2000, seed=0, folder=tmp_path / "gen", progress=False).save(tmp_path / "web")
    c = Corpus.load(tmp_path / "web", share=False)
    text = TextModel.build(c, progress=False)
    sc = TopicScorer(text, Topic(name="geology", words=("geology",)))
    path = sc.store_tables(progress=False)
    stored = np.load(path / "page_tfidf.npy")
    assert stored.min() >= 0.0 and stored.max() <= 1.0 + 1e-6
    assert np.array_equal(stored.view(np.uint32), sc.score_pages(np.arange(c.n_pages)).tfidf.view(np.uint32))


def test_a_page_listing_a_word_twice_is_refused():
    def corpus(terms: list[int], counts: list[int]) -> Corpus:
        return Corpus(
            text_ptr=np.array([0, 2, len(terms)], np.int64), text_terms=np.array(terms, np.int32),
            text_counts=np.array(counts, np.int32), title_ptr=np.zeros(3, np.int64),
            title_terms=np.zeros(0, np.int32), link_ptr=np.zeros(3, np.int64), link_dst=np.zeros(0, np.int32),
            anchor_ptr=np.zeros(1, np.int64), anchor_terms=np.zeros(0, np.int32), context_ptr=np.zeros(1, np.int64),
            context_terms=np.zeros(0, np.int32), page_domain=np.zeros(2, np.int32),
            label_ptr=np.zeros(3, np.int64), label_ids=np.zeros(0, np.int32),
            titles=StringTable.from_strings(["a", "b"]), vocab=StringTable.from_strings(["x", "y", "z"]),
            domains=StringTable.from_strings(["d"]), labels=StringTable.from_strings([]))

    assert corpus([0, 2, 0, 1], [1, 1, 1, 1]).n_pages == 2  # a word may open the next page again
    with pytest.raises(CorpusFormatError, match=r"text_terms.*page 1 lists word id 1 after 1"):
        corpus([0, 2, 1, 1], [1, 1, 1, 1])
    with pytest.raises(CorpusFormatError, match=r"text_terms.*page 0 lists word id 0 after 2"):
        corpus([2, 0, 1, 2], [1, 1, 1, 1])
    with pytest.raises(CorpusFormatError, match=r"page 1 has a word count of 0"):
        corpus([0, 2, 1, 2], [1, 1, 0, 1])
