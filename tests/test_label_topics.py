"""A corpus' own labels resolve as label topics, dotted or not (``resolve_topic``).

The natural labels of a networkx graph or of a WARC crawl labelled by URL (``"course"``, ``"Earth Sciences"``)
have no dot. An exact label must resolve as that label — its pages are the ground truth, ``reward="labels"``
works and ``relevant_found`` counts them — and a string that is both a label and topic words means the label.
"""
from __future__ import annotations

import gymnasium as gym
import networkx as nx
import numpy as np
import pytest

import gym_crawl  # noqa: F401
from gym_crawl.corpus import Corpus, load_corpus
from gym_crawl.relevance.topic import Topic, resolve_topic
from gym_crawl.webgen.examples import EXAMPLE_LINKS, EXAMPLE_PAGES

#: the example web's subjects, relabelled as a networkx graph or a URL map labels them: no dots, spaces, capitals
LABELS = {"geo": "Earth Sciences", "med": "cancer", "art": "course", "gen": "Database Extensions"}
EXTRA = {"Course": "A course on poetry and verse, with a course reading list.",
         "Databases": "Database extensions add index types to a database; extensions are loaded per database."}


def _graph() -> nx.DiGraph:
    G = nx.DiGraph()
    for t, (subj, text) in EXAMPLE_PAGES.items():
        G.add_node(t, text=text, domain=f"{subj}.example.org", labels=[LABELS[subj]])
    G.add_node("Course", text=EXTRA["Course"], domain="art.example.org", labels=["course"])
    G.add_node("Databases", text=EXTRA["Databases"], domain="gen.example.org", labels=["Database Extensions"])
    G.add_edges_from(EXAMPLE_LINKS + [("Poetry", "Course"), ("Course", "Poem"), ("City", "Databases"),
                                      ("Databases", "City"), ("Music", "Databases")])
    return G


@pytest.fixture(scope="module")
def graph_corpus() -> Corpus:
    c = Corpus.from_networkx(_graph(), name="labelled-graph")
    assert all("." not in lab for lab in c.labels.tolist())
    return c


@pytest.fixture(scope="module")
def warc_corpus(tmp_path_factory) -> Corpus:
    from gym_crawl.web.warc import load_warc
    from gym_crawl.webgen.examples import write_example_warc

    path = write_example_warc(tmp_path_factory.mktemp("warc"))
    urls = {f"https://{subj}.example.org/wiki/{t}": LABELS[subj] for t, (subj, _) in EXAMPLE_PAGES.items()}
    return load_warc(path, labels=urls)


def _members(corpus: Corpus, label: str) -> set[str]:
    return {corpus.titles[i] for i in range(corpus.n_pages) if label in corpus.page_labels(i)}


@pytest.mark.parametrize("label,words", [("course", ("course",)), ("Earth Sciences", ("earth", "sciences")),
                                         ("Database Extensions", ("database", "extensions"))])
def test_an_exact_label_without_a_dot_is_a_label_topic(graph_corpus, label, words):
    t = resolve_topic(label, graph_corpus)
    assert t.label == label and t.words == tuple(w for w in words if graph_corpus.word_id(w) >= 0)
    assert t.name == label.lower().replace(" ", "_")
    mask = t.label_mask(graph_corpus)
    assert {graph_corpus.titles[i] for i in np.flatnonzero(mask)} == _members(graph_corpus, label)


def test_a_string_that_is_both_a_label_and_words_means_the_label(graph_corpus):
    """"cancer" is a word of the vocabulary and a label: the label's pages are relevant, not the pages with
    the word (the word topic would count "Tumor"'s neighbours by text, the label counts the labelled pages)."""
    assert graph_corpus.word_id("cancer") >= 0
    t = resolve_topic("cancer", graph_corpus)
    assert t.label == "cancer" and t.words == ("cancer",)
    assert set(np.flatnonzero(t.label_mask(graph_corpus))) == {graph_corpus.page_id("Cancer"),
                                                                 graph_corpus.page_id("Tumor")}
    words = resolve_topic("tumor", graph_corpus)  # a word only: a word topic, no label
    assert words.label is None and words.words == ("tumor",)


def test_label_topic_runs_with_the_label_reward(graph_corpus):
    env = gym.make("WikiCrawl-v3", corpus=graph_corpus, topic="course", seeds=["Poetry"], reward="labels",
                   max_candidates=4, max_episode_steps=6)
    _, info = env.reset(seed=0)
    assert env.unwrapped.topic.label == "course" and env.unwrapped.scheme.name == "labels"
    relevant = set()
    done = False
    while not done:
        _, r, term, trunc, info = env.step(0)
        if info["relevant"]:
            relevant.add(graph_corpus.titles[info["fetched_page"]])
        done = term or trunc
    assert relevant <= _members(graph_corpus, "course")
    assert info["relevant_found"] == len(relevant | ({"Poetry"} & _members(graph_corpus, "course")))
    # the default reward of a labelled topic is the label's, with spaces in the label too
    env = gym.make("WikiCrawl-v3", corpus=graph_corpus, topic="Database Extensions", seeds=["City"],
                   max_candidates=4)
    env.reset(seed=0)
    assert env.unwrapped.scheme.name == "labels" and info["topic"] == "course"


def test_warc_labels_from_a_url_map_resolve_too(warc_corpus):
    t = resolve_topic("Earth Sciences", warc_corpus)
    assert t.label == "Earth Sciences" and t.words == tuple(w for w in ("earth", "sciences")
                                                            if warc_corpus.word_id(w) >= 0) and "earth" in t.words
    assert t.label_mask(warc_corpus).sum() == sum(1 for s, _ in EXAMPLE_PAGES.values() if s == "geo")


def test_near_misses_and_dotted_labels(graph_corpus, tiny_corpus):
    with pytest.raises(KeyError, match=r"unknown topic 'Earth Sciencs'.*labels spelled alike: \['Earth Sciences'\]"):
        resolve_topic("Earth Sciencs", graph_corpus)  # neither a label nor words of the vocabulary
    assert resolve_topic("earth", graph_corpus).label is None  # a word, not a label
    # dotted labels and parents keep working; a trailing dot names a parent that is not itself a label
    assert resolve_topic("subject.geo", tiny_corpus).label == "subject.geo"
    G = nx.DiGraph()
    G.add_node("Ref", text="docs reference api", labels=["docs.ref"])
    G.add_node("Guide", text="docs guide tutorial", labels=["docs.guide"])
    G.add_edge("Ref", "Guide")
    docs = load_corpus(G)
    assert resolve_topic("docs", docs).label is None  # not itself a label: the word
    parent = resolve_topic("docs.", docs)
    assert parent.label == "docs" and parent.label_mask(docs).tolist() == [True, True]
    with pytest.raises(KeyError, match="none of the words of 'subject' is in the corpus vocabulary"):
        resolve_topic("subject.", tiny_corpus)
    with pytest.raises(KeyError, match="has no label 'subject.nope'"):
        resolve_topic("subject.nope", tiny_corpus)
    assert resolve_topic({"label": "course", "words": ["poetry"], "name": "c"}, graph_corpus) == Topic(
        name="c", words=("poetry",), label="course")


def test_a_label_whose_words_are_not_in_the_vocabulary_names_the_fix():
    G = nx.DiGraph()
    G.add_node("A", text="rock stone", labels=["Zyx"])
    G.add_node("B", text="stone rock", labels=["Zyx"])
    G.add_edge("A", "B")
    c = load_corpus(G)
    with pytest.raises(KeyError, match=r"label topic 'Zyx'.*\{'label': 'Zyx', 'words': \[...\]\}"):
        resolve_topic("Zyx", c)
    assert resolve_topic({"label": "Zyx", "words": ["rock"]}, c).label == "Zyx"
