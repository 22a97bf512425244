"""The corpus registries (issue 9 item 3): named corpora in ``CORPORA`` and the ordered path kinds of
``CORPUS_KINDS``. Every registered kind must have a sample writer here, so a kind registered later
without one fails ``test_every_registered_kind_has_a_sample`` (the conformance loop below then covers it).
"""
from __future__ import annotations

import bz2
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from conftest import make_tiny_corpus

from gym_crawl.corpus import CORPORA, CORPUS_KINDS, Corpus, CorpusFormatError, load_corpus
from gym_crawl.corpus import sources as src
from gym_crawl.corpus.thesis_layout import write_thesis_layout
from gym_crawl.registry import Registry


def _html(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "index.html").write_text("<html><title>Home</title><body>Rocks and <a href='b.html'>minerals</a>"
                                     " of geology.</body></html>", encoding="utf-8")
    (root / "b.html").write_text("<html><title>Minerals</title><body>Minerals form rock; back "
                                 "<a href='index.html'>home</a>.</body></html>", encoding="utf-8")
    return root


def _mediawiki(root: Path) -> Path:
    root.mkdir(parents=True)
    pages = [("Rock", "Rocks are made of [[Mineral|minerals]]. [[Category:Geology]]"),
             ("Mineral", "A mineral is part of a [[rock]].")]
    xml = ('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/"><siteinfo><sitename>T</sitename>'
           '<dbname>testwiki</dbname><base>https://test.example.org/wiki/Main</base><case>first-letter</case>'
           '<namespaces><namespace key="0" /><namespace key="14">Category</namespace></namespaces></siteinfo>'
           + "".join(f"<page><title>{t}</title><ns>0</ns><id>{i}</id><revision><text>{x}</text></revision></page>"
                     for i, (t, x) in enumerate(pages, 1)) + "</mediawiki>")
    out = root / "testwiki-pages-articles.xml.bz2"
    out.write_bytes(bz2.compress(xml.encode("utf-8")))
    return out


def _wikispeedia(root: Path) -> Path:
    from test_wikispeedia import make_fake

    return make_fake(root, "extracted")


def _compiled(root: Path) -> Path:
    return make_tiny_corpus(200, seed=1).save(root)


def _thesis(root: Path) -> Path:
    return write_thesis_layout(make_tiny_corpus(200, seed=2), root)


SAMPLES = {"compiled": _compiled, "thesis-layout": _thesis, "wikispeedia": _wikispeedia,
           "mediawiki": _mediawiki, "html-folder": _html}
"""A writer of one small sample for every registered corpus kind."""


def test_every_registered_kind_has_a_sample():
    assert set(CORPUS_KINDS.kinds()) == set(SAMPLES), "register a sample writer for each new corpus kind"
    assert CORPUS_KINDS.kinds() == ["compiled", "thesis-layout", "wikispeedia", "mediawiki", "html-folder"]


@pytest.mark.parametrize("kind", CORPUS_KINDS.kinds())
def test_every_kind_is_detected_and_loads(kind, tmp_path):
    path = SAMPLES[kind](tmp_path / "sample")
    assert CORPUS_KINDS.detect(Path(path)) == kind
    c = load_corpus(str(path))
    assert isinstance(c, Corpus) and c.n_pages >= 2 and c.n_links >= 1
    c.validate()
    assert load_corpus(Path(path)).n_pages == c.n_pages  # os.PathLike too


def test_networkx_and_corpus_objects_still_work(tiny_corpus):
    assert load_corpus(tiny_corpus) is tiny_corpus
    G = nx.DiGraph()
    G.add_node("a", text="rock mineral")
    G.add_node("b", text="mineral")
    G.add_edge("a", "b")
    c = load_corpus(G)
    assert c.n_pages == 2 and c.n_links == 1


def test_registries_are_the_one_registry_class():
    assert isinstance(CORPORA, Registry) and isinstance(CORPUS_KINDS, Registry)
    assert {"synthetic", "synthetic-hard", "wikispeedia", "simplewiki"} <= set(CORPORA.names())
    assert {"synthetic", "synthetic-hard"} <= src.SIZED_CORPORA


def test_names_with_sizes():
    assert src.parse_corpus_name("synthetic") == ("synthetic", {})
    assert src.parse_corpus_name(" Synthetic-100k ") == ("synthetic", {"n_pages": 100_000})
    assert src.parse_corpus_name("synthetic-1_000") == ("synthetic", {"n_pages": 1000})
    assert src.parse_corpus_name("synthetic-hard") == ("synthetic-hard", {})
    assert src.parse_corpus_name("synthetic-hard-2m") == ("synthetic-hard", {"n_pages": 2_000_000})
    assert src.parse_corpus_name("wikispeedia") == ("wikispeedia", {})
    assert src.parse_corpus_name("some/path") is None
    with pytest.raises(ValueError, match="expected 'synthetic-<pages>'"):
        src.parse_corpus_name("synthetic-abc")
    with pytest.raises(ValueError, match="expected 'synthetic-hard-<pages>'"):
        src.parse_corpus_name("synthetic-hard-abc")


def test_synthetic_hard_passes_the_preset_or_fails_clearly(monkeypatch):
    import gym_crawl.corpus.synthetic as syn

    calls = []

    def with_preset(n_pages=20_000, preset="default", **kw):
        calls.append((n_pages, preset, kw))
        return make_tiny_corpus(100)

    monkeypatch.setattr(syn, "synthetic_corpus", with_preset)
    assert load_corpus("synthetic-hard-1234", seed=3).n_pages == 100
    assert calls == [(1234, "hard", {"seed": 3})]

    def without_preset(n_pages=20_000, **kw):
        if kw:
            raise TypeError(f"synthetic_corpus: unexpected keyword argument(s) {sorted(kw)}")
        return make_tiny_corpus(100)

    monkeypatch.setattr(syn, "synthetic_corpus", without_preset)
    with pytest.raises(ValueError, match=r"'synthetic-hard' needs .*preset='hard'"):
        load_corpus("synthetic-hard")


def test_errors_name_the_spec_and_list_names_and_kinds(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        load_corpus("no-such-corpus")
    msg = str(e.value)
    assert "'no-such-corpus'" in msg and "wikispeedia" in msg and "synthetic-<N>" in msg
    assert all(k in msg for k in CORPUS_KINDS.kinds())
    odd = tmp_path / "notes.txt"
    odd.write_text("hello")
    with pytest.raises(CorpusFormatError) as e:
        load_corpus(str(odd))
    assert str(odd) in str(e.value) and all(k in str(e.value) for k in CORPUS_KINDS.kinds())
    with pytest.raises(TypeError, match="corpus must be a name"):
        load_corpus(42)


def test_a_new_kind_registers_in_one_place(tmp_path):
    tiny = make_tiny_corpus(100)
    seen = []

    def load_pages(path, **kw):
        seen.append((Path(path).name, kw))
        return tiny

    CORPUS_KINDS.register_kind("pages-list", lambda p: p.suffix == ".pages", load_pages, "a .pages file",
                               before="mediawiki")
    try:
        f = tmp_path / "web.pages"
        f.write_text("x")
        assert CORPUS_KINDS.kinds().index("pages-list") == CORPUS_KINDS.kinds().index("mediawiki") - 1
        assert load_corpus(str(f), flag=1) is tiny and seen == [("web.pages", {"flag": 1})]
        with pytest.raises(ValueError, match="before='nope'"):
            CORPUS_KINDS.register_kind("x", lambda p: False, load_pages, "x", before="nope")
    finally:
        CORPUS_KINDS.unregister("pages-list")
    assert "pages-list" not in CORPUS_KINDS.kinds()


def test_a_new_named_corpus_registers_in_one_place():
    tiny = make_tiny_corpus(100)
    src.register_corpus("tiny-web", lambda n_pages=100, **kw: tiny if n_pages == 100 else None, sized=True)
    try:
        assert load_corpus("tiny-web") is tiny and load_corpus("tiny-web-100") is tiny
    finally:
        CORPORA.unregister("tiny-web")
        src.SIZED_CORPORA.discard("tiny-web")
    assert np.all(tiny.in_degree() >= 0)
