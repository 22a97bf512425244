"""Text-model hardening: checksummed cache with NaN / corruption detection,
pickling by reference, read-only cache, progress, graphs without text, vocabulary words without a
vector. Each test failed on main before the fix."""
from __future__ import annotations

import io
import json
import pickle

import networkx as nx
import numpy as np
import pytest
from conftest import make_tiny_corpus

import gym_crawl._io as io_mod
from gym_crawl._io import seal
from gym_crawl.corpus import Corpus, CorpusBuilder, load_corpus
from gym_crawl.corpus import cache as cache_mod
from gym_crawl.corpus.core import _is_mmapped
from gym_crawl.text.model import TextModel, TextModelError, get_text_model


@pytest.fixture()
def saved(tmp_path, monkeypatch):
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path / "data"))
    monkeypatch.setattr(cache_mod, "_WARNED", set())
    make_tiny_corpus(300).save(tmp_path / "c")
    return Corpus.load(tmp_path / "c")


def _cache_dir(tmp_path):
    (d,) = [p for p in (tmp_path / "data" / "text_models").iterdir() if not p.name.startswith(".")]
    return d


def test_nan_vectors_in_the_cache_are_detected_and_rebuilt(saved, tmp_path):
    fresh = get_text_model(saved, dim=8)
    d = _cache_dir(tmp_path)
    f = d / "vectors.npy"
    v = np.load(f)
    v[3, 2] = np.nan
    np.save(f, v)
    with pytest.raises(TextModelError, match=r"vectors\.npy"):
        TextModel.load(saved, d)
    # even with digests that match the NaN file (a model saved after going bad), NaN is refused
    from gym_crawl._io import file_digest

    meta = json.loads((d / "meta.json").read_text())
    meta["files"]["vectors.npy"] = file_digest(f)
    (d / "meta.json").write_text(json.dumps(seal(meta)))
    with pytest.raises(TextModelError, match=r"vectors\.npy: non-finite"):
        TextModel.load(saved, d)
    other = Corpus.load(saved.path, share=False)  # a new corpus object: no in-process memo
    with pytest.warns(cache_mod.CacheWarning, match=r"vectors\.npy.*rebuilding"):
        again = get_text_model(other, dim=8)
    assert np.array_equal(again.vectors, fresh.vectors) and np.isfinite(again.vectors).all()
    assert TextModel.load(saved, d).vectors.shape == fresh.vectors.shape  # the rebuilt cache is valid


def test_text_model_files_are_checksummed(saved, tmp_path):
    get_text_model(saved, dim=8)
    d = _cache_dir(tmp_path)
    files = json.loads((d / "meta.json").read_text())["files"]
    assert set(files) == {"idf.npy", "vectors.npy"} and all({"size", "sha256", "sample_sha256"} <= set(s)
                                                          for s in files.values())
    f = d / "idf.npy"
    data = bytearray(f.read_bytes())
    data[-2] ^= 0x01  # a tiny change of a weight: still finite and positive
    f.write_bytes(bytes(data))
    with pytest.raises(TextModelError, match=r"idf\.npy: sha256 differs"):
        TextModel.load(saved, d)


def test_verify_true_recomputes_the_full_digest(saved, tmp_path):
    get_text_model(saved, dim=8)
    d = _cache_dir(tmp_path)
    meta = json.loads((d / "meta.json").read_text())
    TextModel.load(saved, d)  # stamped as checked by the save: nothing hashed
    meta["files"]["vectors.npy"]["sha256"] = "0" * 64
    (d / "meta.json").write_text(json.dumps(seal(meta)))
    for verify in (False, True):  # another manifest: its files are checked again
        with pytest.raises(TextModelError, match=r"vectors\.npy: sha256 differs"):
            TextModel.load(saved, d, verify=verify)


def test_cached_text_model_pickles_by_reference(saved):
    tm = get_text_model(saved, dim=8)
    blob = pickle.dumps(tm)
    assert len(blob) < 2000 < tm.vectors.nbytes + len(pickle.dumps(make_tiny_corpus(300)))
    back = pickle.loads(blob)
    assert np.array_equal(back.vectors, tm.vectors) and _is_mmapped(back.vectors) and _is_mmapped(back.corpus.link_dst)
    mem = TextModel.build(make_tiny_corpus(300), dim=8)
    assert np.array_equal(pickle.loads(pickle.dumps(mem)).vectors, mem.vectors)  # in memory: by value


def test_read_only_text_model_cache_warns_once(saved, monkeypatch):
    def read_only(final_dir):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(io_mod, "partial_dir", read_only)
    with pytest.warns(cache_mod.CacheWarning, match="Read-only file system") as rec:
        a = get_text_model(saved, dim=8)
        b = get_text_model(Corpus.load(saved.path, share=False), dim=8)
    assert len(rec) == 1 and a.path is None and np.array_equal(a.vectors, b.vectors)


def test_graph_without_text_fails_clearly_not_inside_scikit_learn():
    G = nx.DiGraph([("a", "b"), ("b", "c")])
    c = load_corpus(G)
    with pytest.raises(ValueError, match=r"corpus 'networkx' has no page text.*node attribute 'text'"):
        get_text_model(c)


def test_topic_word_of_a_uniform_text_vocabulary_is_not_unknown():
    b = CorpusBuilder(name="uniform")
    for i in range(30):
        b.add_page(f"Page {i}", "geology rock earth")
    for i in range(29):
        b.add_link(i, i + 1)
    tm = TextModel.build(b.build(), dim=4)
    assert not tm.vectors[tm.corpus.word_id("geology")].any()  # occurs evenly: PPMI gives no direction
    with pytest.warns(UserWarning, match=r"\['geology'\] are in corpus 'uniform'.s vocabulary but have no word vector"):
        q = tm.query_vector(["geology"])
    assert q.shape == (4,) and not q.any()
    with pytest.raises(KeyError, match="not in its vocabulary"):
        tm.query_vector(["volcano"])


def test_text_model_build_shows_progress_on_a_terminal(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    err = Tty()
    monkeypatch.setattr("sys.stderr", err)
    TextModel.build(make_tiny_corpus(200), dim=4)
    assert "text model of tiny-200-s0" in err.getvalue()
    quiet = Tty()
    monkeypatch.setattr("sys.stderr", quiet)
    TextModel.build(make_tiny_corpus(200), dim=4, progress=False)
    assert quiet.getvalue() == ""
