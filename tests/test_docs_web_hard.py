"""The ``docs-web-hard`` task set: sections named by a cross-site genre word that is not in their pages,
unambiguous within their site, with the seeds, budgets and site split of ``docs-web``; and the task words
that name a target instead of its label."""
from __future__ import annotations

import numpy as np
import pytest

from gym_crawl.corpus import CorpusBuilder
from gym_crawl.tasks import Task, topic_of
from gym_crawl.tasks import docs_web as dw


def _docs(sections: dict[str, str], n: int = 30):
    """One home page per site linking into each section; ``sections``: label -> the words of its pages."""
    rng = np.random.default_rng(0)
    b = CorpusBuilder(name="fake-genres")
    homes: dict[str, int] = {}
    members: dict[str, list[int]] = {}
    for lab, words in sections.items():
        site = dw.site_label(lab)
        if site not in homes:
            homes[site] = b.add_page(f"{site} docs", f"{site} documentation index", domain=site, labels=[site])
        ids = [b.add_page(f"{lab} {i}", f"{words} page {i}", domain=site, labels=[lab]) for i in range(n)]
        members[lab] = ids
        b.add_link(homes[site], ids[0], anchor=lab.rsplit(".", 1)[-1])
        for i in ids:
            for j in rng.choice(ids, 4, replace=False).tolist():
                if i != j:
                    b.add_link(i, j, anchor=words.split()[0])
            b.add_link(i, homes[site], anchor="home")
    # a page elsewhere that holds every genre word, so each is in the vocabulary
    b.add_page("glossary", " ".join(dw.GENRES), domain="elsewhere", labels=["elsewhere"])
    return b.build(), members, homes


def test_genre_of_names_sections_across_sites():
    assert dw.genre_of("django.releases") == dw.genre_of("python.whatsnew") == "changelog"
    assert dw.genre_of("sphinx.module_code") == "implementation"
    assert dw.genre_of("scipy.stats") is None
    for g, secs in dw.GENRES.items():  # a section name has one genre
        assert all(dw.genre_of(f"x.{s}") == g for s in secs)


def test_hard_tasks_keep_only_sections_whose_genre_word_is_not_in_their_pages():
    corpus, members, homes = _docs({
        "python.releases": "version fixed bug security",          # changelog: the word is in no page -> task
        "python.tutorial": "tutorial lesson example learn",       # tutorial: the word is in every page -> none
        "django.topics": "models views templates forms",          # guide, twice on django: ambiguous -> none
        "django.usage": "install configure deploy run",
        "django.module_code": "def class return import",          # implementation: not in pages -> task
    })
    tasks = dw.docs_web_hard_tasks(corpus, min_pages=25, near_budget=40, far_budget=60)
    assert {t.label for t in tasks} == {"python.releases", "django.module_code"}
    assert len(tasks) == 4
    for t in tasks:
        assert t.words == (dw.genre_of(t.label),) and t.set_name == "docs-web-hard"
        assert t.split == dw.split_of(t.label) and t.n_members == 30
        seed = corpus.page_id(t.seeds[0])
        if t.budget == 40:
            assert seed in members[t.label]
        else:
            assert t.budget == 60 and seed == homes[dw.site_label(t.label)]
        assert dw.visible_fraction(corpus, np.asarray(members[t.label]), t.words) == 0.0
    # the same sections in docs-web: named by their labels, with the same seeds
    plain = {(t.label, t.seeds, t.budget) for t in dw.docs_web_tasks(corpus, min_pages=25, near_budget=40,
                                                                       far_budget=60)}
    assert {(t.label, t.seeds, t.budget) for t in tasks} <= plain


def test_visible_fraction_threshold_is_inclusive_and_counts_title_words():
    corpus, members, _ = _docs({"python.releases": "version fixed bug security"})
    ids = np.asarray(members["python.releases"])
    assert dw.visible_fraction(corpus, ids, ("changelog",)) == 0.0
    assert dw.visible_fraction(corpus, ids, ("releases",)) == 1.0  # in every title
    assert dw.visible_fraction(corpus, ids, ("page",)) == 1.0      # in every text
    assert dw.visible_fraction(corpus, ids, ("no-such-word",)) == 0.0
    assert [t.label for t in dw.docs_web_hard_tasks(corpus, min_pages=25, max_visible=0.0)] == ["python.releases"] * 2


def test_task_words_name_the_topic_and_keep_the_label():
    corpus, members, _ = _docs({"python.releases": "version fixed bug security"})
    t = Task("docs-web-hard", "python.releases", ("python docs",), 40, 30, "test", ("changelog",))
    topic = topic_of(corpus, t)
    assert topic.words == ("changelog",) and topic.name == "changelog" and topic.label == "python.releases"
    assert np.flatnonzero(topic.label_mask(corpus)).tolist() == members["python.releases"]
    assert topic_of(corpus, Task("docs-web", "python.releases", ("python docs",), 40, 30, "test")).words == (
        "releases",)
    with pytest.raises(KeyError, match="nowordlikethis"):
        topic_of(corpus, Task("s", "python.releases", ("python docs",), 40, 30, "test", ("nowordlikethis",)))


def test_hard_set_is_registered_on_the_docs_web_corpus():
    from gym_crawl import tasks

    assert "docs-web-hard" in tasks.names()
    corpus, _, _ = _docs({"python.releases": "version fixed bug security",
                          "rust.module_code": "fn impl struct trait"})
    ts = tasks.task_set("docs-web-hard", corpus=corpus)
    assert ts.corpus_spec == "docs-web" and {t.split for t in ts.tasks} == {"train", "test"}
    assert "test sites python" in ts.note
