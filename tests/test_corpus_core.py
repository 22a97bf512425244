"""Corpus format: validation, atomic save/load with manifest checks, memory mapping, networkx."""
from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest

from gym_crawl._io import seal
from gym_crawl.corpus import Corpus, CorpusBuilder, CorpusFormatError, load_corpus


def test_round_trip_is_exact_and_memory_mapped(tiny_corpus, tmp_path):
    path = tmp_path / "c"
    tiny_corpus.save(path)
    c = Corpus.load(path, verify=True)
    for name in ("link_ptr", "link_dst", "text_terms", "text_counts", "anchor_terms", "context_terms", "label_ids"):
        np.testing.assert_array_equal(getattr(c, name), getattr(tiny_corpus, name))
    assert c.titles.tolist() == tiny_corpus.titles.tolist()
    assert c.meta["topics"] == tiny_corpus.meta["topics"]
    assert isinstance(c.link_dst.base, np.memmap) or isinstance(c.link_dst, np.memmap)
    assert load_corpus(str(path)).n_links == tiny_corpus.n_links


def test_save_replaces_atomically_and_leaves_no_partial(tiny_corpus, tmp_path, monkeypatch):
    path = tmp_path / "c"
    tiny_corpus.save(path)
    import gym_crawl.corpus.core as core

    calls = {"n": 0}
    real = core.save_npy

    def failing(p, arr):
        calls["n"] += 1
        if calls["n"] == 5:
            raise OSError("disk full")
        real(p, arr)

    monkeypatch.setattr(core, "save_npy", failing)
    with pytest.raises(OSError, match="disk full"):
        tiny_corpus.save(path)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
    assert Corpus.load(path, verify=True).n_pages == tiny_corpus.n_pages  # old copy intact


def test_truncated_or_missing_files_are_refused(tiny_corpus, tmp_path):
    path = tmp_path / "c"
    tiny_corpus.save(path)
    f = path / "link_dst.npy"
    f.write_bytes(f.read_bytes()[:-100])
    with pytest.raises(CorpusFormatError, match="link_dst.npy"):
        Corpus.load(path)
    (path / "manifest.json").unlink()
    with pytest.raises(CorpusFormatError, match="no manifest.json"):
        Corpus.load(path)


def test_checksum_verification_detects_corruption(tiny_corpus, tmp_path):
    path = tmp_path / "c"
    tiny_corpus.save(path)
    f = path / "text_counts.npy"
    data = bytearray(f.read_bytes())
    data[-1] ^= 0xFF
    f.write_bytes(bytes(data))
    # shapes are still fine, but the full sha256 on the first open of the changed file catches it
    with pytest.raises(CorpusFormatError, match=r"text_counts\.npy: sha256 differs"):
        Corpus.load(path)
    with pytest.raises(CorpusFormatError, match=r"text_counts\.npy"):
        Corpus.load(path, verify=True)


def test_manifest_version_mismatch(tiny_corpus, tmp_path):
    path = tmp_path / "c"
    tiny_corpus.save(path)
    m = json.loads((path / "manifest.json").read_text())
    m["format_version"] = 999
    (path / "manifest.json").write_text(json.dumps(seal(m)))
    with pytest.raises(CorpusFormatError, match="format_version"):
        Corpus.load(path)


def test_validation_names_the_field():
    b = CorpusBuilder()
    b.add_page("A", "alpha beta")
    b.add_page("B", "gamma")
    b.add_link(0, 1, anchor="to b", context="alpha context")
    c = b.build()
    import dataclasses

    with pytest.raises(CorpusFormatError, match="link_dst"):
        dataclasses.replace(c, link_dst=np.array([5], np.int32))
    with pytest.raises(CorpusFormatError, match=r"link_ptr.*must start at 0 and end at 1"):
        dataclasses.replace(c, link_ptr=np.array([0, 1, 2], np.int64))
    with pytest.raises(ValueError, match="outside"):
        b.add_link(0, 7)
        b.build()


def test_networkx_round_trip():
    G = nx.DiGraph()
    G.add_node("a", title="Alpha page", text="rocks and minerals", labels=["subject.geo"], domain="x.org")
    G.add_node("b", title="Beta", text="tumors")
    G.add_edge("a", "b", anchor="beta link", context="see the beta page")
    G.add_edge("b", "a")
    c = Corpus.from_networkx(G)
    assert (c.n_pages, c.n_links) == (2, 2)
    assert c.page_labels(0) == ["subject.geo"] and c.domains[int(c.page_domain[0])] == "x.org"
    H = c.to_networkx()
    assert set(H.edges()) == {(0, 1), (1, 0)}
    assert H.edges[0, 1]["anchor"] == "beta link"
    assert H.nodes[0]["title"] == "Alpha page"
    assert load_corpus(G).n_links == 2


def test_page_id_suggests_close_matches(tiny_corpus):
    assert tiny_corpus.page_id("United_States") == tiny_corpus.page_id("United States")
    with pytest.raises(KeyError, match="close matches"):
        tiny_corpus.page_id("Geolog")
