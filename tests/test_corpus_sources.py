"""The corpus registries: named corpora in ``CORPORA`` and the ordered path kinds of
``CORPUS_KINDS``. Every registered kind must have an example writer, so a kind registered later without
one fails ``test_every_registered_kind_has_an_example``; with one, the loops below (load, env episode)
cover it automatically.
"""
from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from conftest import make_tiny_corpus

from gym_crawl.corpus import CORPORA, CORPUS_KINDS, Corpus, CorpusFormatError, load_corpus
from gym_crawl.corpus import sources as src
from gym_crawl.registry import Registry


def test_every_registered_kind_has_an_example():
    assert CORPUS_KINDS.kinds() == ["compiled", "thesis-layout", "wikispeedia", "mediawiki", "warc", "html-folder"]
    for kind in CORPUS_KINDS.kinds():
        assert CORPUS_KINDS._example.get(kind), f"register an example writer for corpus kind {kind!r}"


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("kind", CORPUS_KINDS.kinds())
def test_every_kind_is_detected_and_loads_the_example_web(kind, tmp_path):
    from gym_crawl.webgen.examples import EXAMPLE_LINKS, EXAMPLE_PAGES

    path = CORPUS_KINDS.example(kind, tmp_path / "sample")
    assert CORPUS_KINDS.detect(Path(path)) == kind
    c = load_corpus(str(path))
    assert isinstance(c, Corpus) and c.n_pages == len(EXAMPLE_PAGES) and c.n_links == len(EXAMPLE_LINKS)
    c.validate()
    edges = {(c.titles[int(s)], c.titles[int(d)]) for s, d in zip(c.link_src(), c.link_dst)}
    assert edges == set(EXAMPLE_LINKS)
    assert c.word_id("geology") >= 0 and c.word_id("volcano") >= 0
    assert load_corpus(Path(path)).n_pages == c.n_pages  # os.PathLike too


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("kind", CORPUS_KINDS.kinds())
def test_every_kind_runs_an_env_episode(kind, tmp_path):
    """The corpus-kind axis of the conformance suite: gym.make on the kind's example, a seeded rollout."""
    import gymnasium as gym

    import gym_crawl  # noqa: F401

    path = CORPUS_KINDS.example(kind, tmp_path / "sample")

    def rollout():
        env = gym.make("WikiCrawl-v0", corpus=str(path), topic="geology", seeds=["Geology"], max_candidates=4)
        obs, info = env.reset(seed=3)
        env.action_space.seed(3)
        rewards = []
        for _ in range(6):
            mask = obs["mask"] if isinstance(obs, dict) and "mask" in obs else None
            a = (env.action_space.sample(mask=np.asarray(mask, np.int8)) if mask is not None
                 else env.action_space.sample())
            obs, r, term, trunc, info = env.step(a)
            rewards.append(float(r))
            if term or trunc:
                break
        env.close()
        return rewards

    first = rollout()
    assert len(first) >= 1 and all(np.isfinite(first))
    assert rollout() == first


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


def test_a_built_corpus_is_registered_and_opened_never_built(tmp_path, monkeypatch):
    """``docs-web`` is a name of ``CORPORA`` like any other; loading opens what its command compiled into the
    data directory (or a given path) and, when there is none, builds nothing and names the command."""
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path))
    assert "docs-web" in CORPORA and "docs-web" in src.BUILT_CORPORA
    assert src.parse_corpus_name("docs-web") == ("docs-web", {})
    with pytest.raises(FileNotFoundError, match=r"docs-web corpus is not built at .*docs-web: build it with "
                                                r"`gym-crawl bench docs-web`"):
        load_corpus("docs-web")
    assert list(tmp_path.iterdir()) == []  # nothing built, nothing downloaded
    make_tiny_corpus(60).save(tmp_path / "docs-web")
    c = load_corpus("docs-web")
    assert c.n_pages == 60 and Path(c.path) == tmp_path / "docs-web"
    make_tiny_corpus(40).save(tmp_path / "elsewhere")
    assert load_corpus("docs-web", path=tmp_path / "elsewhere").n_pages == 40
    with pytest.raises(ValueError, match="'nope' is not a built corpus; built corpora: \\['docs-web'\\]"):
        src.load_built_corpus("nope")


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


def test_synthetic_hard_passes_the_preset(monkeypatch):
    import gym_crawl.webgen.synthetic as syn

    calls = []

    def with_preset(n_pages=20_000, preset="default", **kw):
        calls.append((n_pages, preset, kw))
        return make_tiny_corpus(100)

    monkeypatch.setattr(syn, "synthetic_corpus", with_preset)
    assert load_corpus("synthetic-hard-1234", seed=3).n_pages == 100
    assert calls == [(1234, "hard", {"seed": 3})]


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
        with pytest.raises(ValueError, match="'pages-list' was registered without an example"):
            CORPUS_KINDS.example("pages-list", tmp_path / "ex")
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


def test_opaque_url_domains_show_no_title_in_the_url():
    """A hard-preset page on an opaque-URL domain displays ``/p/<id>``, not its title (the crawler's URL
    tokens have no title words there either); other domains keep ``/wiki/<title>``."""
    from gym_crawl.webgen.synthetic import synthetic_hard_corpus

    c = synthetic_hard_corpus(2000)
    opaque = set(c.meta.get("opaque_url_domains") or ())
    assert opaque, "the hard preset should have opaque-URL domains"
    doms = [c.domains[int(c.page_domain[p])] for p in range(c.n_pages)]
    p_opaque = next(p for p in range(c.n_pages) if doms[p] in opaque)
    p_plain = next(p for p in range(c.n_pages) if doms[p] not in opaque)
    assert c.url(p_opaque) == f"https://{doms[p_opaque]}/p/{p_opaque}"
    assert "/wiki/" in c.url(p_plain)
