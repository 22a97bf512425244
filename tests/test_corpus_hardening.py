"""Corpus-layer hardening: pickling by reference, read-only cache, cache robustness — concurrent
swaps, orphans, empty corpora, checksums on open —, offline downloads, topics and label seeds for
``corpus info``. Each test failed on main before the fix."""
from __future__ import annotations

import copy
import errno
import json
import multiprocessing as mp
import os
import pickle
import subprocess
import sys
import urllib.error
from pathlib import Path

import numpy as np
import pytest
from conftest import make_tiny_corpus

from gym_crawl import _io
from gym_crawl.corpus import Corpus, CorpusFormatError, core, load_corpus
from gym_crawl.corpus import cache as cache_mod
from gym_crawl.corpus import download as dl
from gym_crawl.corpus.core import _ARRAY_SPEC, _is_mmapped


@pytest.fixture()
def saved(tmp_path):
    c = make_tiny_corpus(400)
    c.save(tmp_path / "c")
    return Corpus.load(tmp_path / "c")


def _same(a: Corpus, b: Corpus) -> None:
    for n in _ARRAY_SPEC:
        assert np.array_equal(getattr(a, n), getattr(b, n)), n
    assert a.titles.tolist() == b.titles.tolist() and a.vocab.tolist() == b.vocab.tolist()
    assert a.meta == b.meta


# ------------------------------------------------------------------ item 3: pickling by reference

def test_saved_corpus_pickles_by_reference(saved):
    by_value = len(pickle.dumps(make_tiny_corpus(400)))
    blob = pickle.dumps(saved)
    assert len(blob) < 1000 < by_value  # path + checksum, not the arrays
    back = pickle.loads(blob)
    _same(back, saved)
    assert back.path == saved.path and back.checksum == saved.checksum
    assert _is_mmapped(back.link_dst) and _is_mmapped(back.text_terms)  # re-opened, not copied


def test_deepcopy_and_cloudpickle_share_the_mapping(saved):
    cloudpickle = pytest.importorskip("cloudpickle")
    d = copy.deepcopy(saved)
    assert d is not saved and _is_mmapped(d.text_counts)
    _same(d, saved)
    d.meta["topics"] = {}  # copies do not share the mutable meta
    assert saved.meta["topics"]
    blob = cloudpickle.dumps(saved)
    assert len(blob) < 1000
    _same(pickle.loads(blob), saved)


def test_in_memory_corpus_pickles_by_value(tmp_path):
    c = make_tiny_corpus(300)
    back = pickle.loads(pickle.dumps(c))
    assert back.path is None and not _is_mmapped(back.link_dst)
    _same(back, c)
    _same(copy.deepcopy(c), c)
    c.save(tmp_path / "c")  # saved but still in memory: by value, so rewriting the folder cannot break it
    make_tiny_corpus(200, seed=4).save(tmp_path / "c")
    _same(pickle.loads(pickle.dumps(c)), c)


def test_a_modified_copy_of_a_mapped_corpus_pickles_by_value(saved):
    import dataclasses

    from gym_crawl.corpus import StringTable

    dom = np.zeros(saved.n_pages, np.int32)  # as benchmarks/tres.py re-labels domains
    c2 = dataclasses.replace(saved, page_domain=dom, domains=StringTable.from_strings(["one"]))
    back = pickle.loads(pickle.dumps(c2))
    assert back.domains.tolist() == ["one"] and np.array_equal(back.page_domain, dom)
    saved.page_domain = dom.copy()  # an edited field: by value too
    saved.domains = StringTable.from_strings(["one"])
    assert pickle.loads(pickle.dumps(saved)).domains.tolist() == ["one"]


def test_unpickling_a_rewritten_corpus_fails_naming_it(saved, tmp_path):
    blob = pickle.dumps(saved)
    make_tiny_corpus(300, seed=5).save(tmp_path / "c")  # someone rebuilt the directory meanwhile
    with pytest.raises(CorpusFormatError, match=r"cannot unpickle the corpus saved at .*c.*rewritten"):
        pickle.loads(blob)


def _rss_child(path: str, q) -> None:
    c = pickle.loads(pickle.dumps(Corpus.load(path)))
    q.put((len(pickle.dumps(c)), _is_mmapped(c.text_terms)))


def test_vector_worker_gets_a_reference(saved):
    q = mp.get_context("spawn").Queue()
    p = mp.get_context("spawn").Process(target=_rss_child, args=(str(saved.path), q))
    p.start()
    size, mapped = q.get(timeout=60)
    p.join(30)
    assert size < 1000 and mapped


# -------------------------------------------------------------------- item 7: cache robustness

def _swap_many(root: str, n: int, barrier, q) -> None:
    fails = 0
    tmps = []
    for _i in range(n):
        t = _io.partial_dir(Path(root) / "c")
        for j in range(10):
            (t / f"f{j}").write_bytes(os.urandom(200))
        tmps.append(t)
    for t in tmps:
        barrier.wait()
        try:
            _io.replace_dir(t, Path(root) / "c")
        except OSError:
            fails += 1
    q.put(fails)


def test_concurrent_replace_dir_never_fails(tmp_path):
    """Two processes swapping the same directory at the same moment (old code: 10-16 failures of 80)."""
    ctx = mp.get_context("fork")
    barrier, q = ctx.Barrier(2), ctx.Queue()
    ps = [ctx.Process(target=_swap_many, args=(str(tmp_path), 20, barrier, q)) for _ in range(2)]
    for p in ps:
        p.start()
    fails = q.get(timeout=60) + q.get(timeout=60)
    for p in ps:
        p.join(30)
    assert fails == 0
    assert sorted(f.name for f in (tmp_path / "c").iterdir()) == [f"f{j}" for j in range(10)]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial") or ".old-" in p.name]


def test_orphan_partial_of_a_killed_writer_is_cleaned(tmp_path):
    target = tmp_path / "c"
    # a writer killed with kill -9 mid-save leaves its pid-tagged .partial behind
    code = ("import os, sys; from gym_crawl import _io; from pathlib import Path; "
            "t = _io.partial_dir(Path(sys.argv[1])); (t / 'x.npy').write_bytes(b'1'); os.kill(os.getpid(), 9)")
    r = subprocess.run([sys.executable, "-c", code, str(target)], capture_output=True)
    assert r.returncode == -9
    orphans = [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
    assert len(orphans) == 1
    live = _io.partial_dir(target)  # this process' own partial is not an orphan
    make_tiny_corpus(100).save(target)
    assert not orphans[0].exists() and live.exists()
    assert _io.clean_orphans(target) == []


def test_writing_dir_replaces_the_folder_when_the_block_ends_and_keeps_it_when_it_raises(tmp_path):
    target = tmp_path / "c"
    with _io.writing_dir(target) as tmp:
        assert tmp.is_dir() and tmp.name.endswith(".partial") and not target.exists()
        (tmp / "a").write_text("first")
    assert (target / "a").read_text() == "first"
    with pytest.raises(OSError, match="disk full"), _io.writing_dir(target) as tmp:
        (tmp / "a").write_text("second")
        raise OSError(errno.ENOSPC, "disk full")
    assert (target / "a").read_text() == "first"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial") or ".old-" in p.name]


def test_empty_corpus_is_refused_never_cached(tmp_path):
    empty = Corpus.from_networkx(__import__("networkx").DiGraph())
    assert empty.n_pages == 0
    with pytest.raises(CorpusFormatError, match="0 pages"):
        empty.save(tmp_path / "e")
    assert not (tmp_path / "e").exists()
    with pytest.raises(CorpusFormatError, match="my source: compiled to 0 pages"):
        cache_mod.store_cached(empty, tmp_path / "e", what="my source")
    assert not list(tmp_path.iterdir())


def test_mediawiki_dump_without_articles_is_not_cached(tmp_path):
    import bz2

    from gym_crawl.corpus import mediawiki as mw

    xml = ('<mediawiki><siteinfo><dbname>emptywiki</dbname><namespaces><namespace key="0" /></namespaces>'
           '</siteinfo><page><title>R</title><ns>0</ns><id>1</id><redirect title="X" /><revision><text>'
           '#REDIRECT [[X]]</text></revision></page></mediawiki>')
    p = tmp_path / "emptywiki-pages-articles.xml.bz2"
    p.write_bytes(bz2.compress(xml.encode()))
    with pytest.raises(CorpusFormatError, match="0 pages"):
        mw.load_mediawiki_dump(p, progress=False)
    assert not mw.compiled_cache_dir(p).exists()


@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_byte_corruption_is_detected_on_open(where, tmp_path):
    c = make_tiny_corpus(400)
    c.save(tmp_path / "c")
    f = tmp_path / "c" / "text_counts.npy"
    data = bytearray(f.read_bytes())
    i = {"start": 200, "middle": len(data) // 2, "end": len(data) - 3}[where]
    data[i] ^= 0x10
    f.write_bytes(bytes(data))
    with pytest.raises(CorpusFormatError, match=r"text_counts\.npy: sha256 differs"):
        Corpus.load(tmp_path / "c")


def test_corruption_outside_the_samples_is_found_on_open(tmp_path):
    b = core.CorpusBuilder()
    rng = np.random.default_rng(0)
    words = ["".join(w) for w in rng.choice(list("abcdefghij"), size=(3000, 6))]
    for i in range(400):
        b.add_page(f"p{i}", " ".join(rng.choice(words, 300)))
    b.add_link(0, 1)
    b.build().save(tmp_path / "c")
    f = tmp_path / "c" / "text_terms.npy"
    size = f.stat().st_size
    assert size > _io.SAMPLE_BLOCKS * _io.SAMPLE_BLOCK
    sampled = np.linspace(0, size - _io.SAMPLE_BLOCK, _io.SAMPLE_BLOCKS).astype(np.int64)
    gap = int(sampled[1] + _io.SAMPLE_BLOCK + (sampled[2] - sampled[1] - _io.SAMPLE_BLOCK) // 2)
    gap -= gap % 4
    data = bytearray(f.read_bytes())
    data[gap:gap + 4] = data[gap + 4:gap + 8]  # still valid word ids, outside every sampled block
    f.write_bytes(bytes(data))
    for verify in (False, True):  # a sampled hash could not see it; the full one on the first open does
        with pytest.raises(CorpusFormatError, match=r"text_terms\.npy: sha256 differs"):
            Corpus.load(tmp_path / "c", verify=verify)


def test_truncated_file_is_named(tmp_path):
    make_tiny_corpus(200).save(tmp_path / "c")
    f = tmp_path / "c" / "link_dst.npy"
    f.write_bytes(f.read_bytes()[:-8])
    with pytest.raises(CorpusFormatError, match=r"link_dst\.npy: size"):
        Corpus.load(tmp_path / "c")


def test_old_manifests_without_digests_still_open(tmp_path):
    make_tiny_corpus(200).save(tmp_path / "c")
    mf = tmp_path / "c" / "manifest.json"
    m = json.loads(mf.read_text())
    for spec in m["files"].values():
        spec.pop("size"), spec.pop("sample_sha256")
    m.pop("seal_sha256")  # and no seal of the manifest itself
    mf.write_text(json.dumps(m))
    assert Corpus.load(tmp_path / "c", verify=True).n_pages == 200


# ------------------------------------------------------------------ item 6: read-only cache

def test_read_only_cache_falls_back_to_memory_with_one_warning(tmp_path, monkeypatch):
    from test_wikispeedia import make_fake

    src = make_fake(tmp_path / "ws", "extracted")

    def read_only(final_dir):
        raise OSError(errno.EROFS, "Read-only file system", str(final_dir))

    monkeypatch.setattr(core, "partial_dir", read_only)
    monkeypatch.setattr(cache_mod, "_WARNED", set())
    with pytest.warns(cache_mod.CacheWarning, match="Read-only file system.*in memory") as rec:
        a = load_corpus(str(src))
        b = load_corpus(str(src))
    assert len([w for w in rec if issubclass(w.category, cache_mod.CacheWarning)]) == 1
    assert a.path is None and a.n_pages == b.n_pages == 4
    assert pickle.loads(pickle.dumps(a)).n_pages == 4  # in memory: pickles by value


def test_data_dir_does_not_fail_when_it_cannot_be_created(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("GYM_CRAWL_DATA", str(blocker / "cache"))
    assert cache_mod.data_dir() == blocker / "cache"


# ----------------------------------------------------------------- item 8: offline downloads

def test_offline_download_is_one_line_naming_the_url(tmp_path, monkeypatch):
    monkeypatch.setattr(dl, "RETRY_BACKOFF", 0.0)
    monkeypatch.setattr(dl, "DATASETS", dict(dl.DATASETS))
    monkeypatch.setattr(dl, "_VERIFIERS", dict(dl._VERIFIERS))
    url = "http://127.0.0.1:9/wikispeedia_articles_plaintext.tar.gz"  # discard port: refused, no network needed
    dl.register_dataset("wikispeedia", [dl.RemoteFile(url, "a.tar.gz")])
    with pytest.raises(dl.DownloadError) as ei:
        dl.download("wikispeedia", tmp_path / "ws", retries=1, progress=False)
    msg = str(ei.value)
    assert "\n" not in msg and url in msg and "local copy" in msg and "folder or archive path" in msg
    assert isinstance(ei.value, OSError) and ei.value.url == url
    assert pickle.loads(pickle.dumps(ei.value)).args == ei.value.args  # crosses process boundaries
    import contextlib
    import io

    from gym_crawl.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["download", "wikispeedia", "--dest", str(tmp_path / "ws")])
    assert code == 2
    lines = [ln for ln in err.getvalue().splitlines() if ln.strip()]
    assert len(lines) == 1 and url in lines[0], err.getvalue()


def test_http_error_of_a_dataset_is_one_line_too(tmp_path, monkeypatch):
    monkeypatch.setattr(dl, "DATASETS", dict(dl.DATASETS))
    monkeypatch.setattr(dl, "_VERIFIERS", dict(dl._VERIFIERS))

    def not_found(url, dest, *a, **k):
        raise urllib.error.HTTPError(url, 404, "Not Found", {}, None)

    monkeypatch.setattr(dl, "fetch", not_found)
    dl.register_dataset("x", [dl.RemoteFile("https://example.org/x.tgz", "x.tgz")])
    with pytest.raises(dl.DownloadError, match=r"cannot download https://example.org/x.tgz: HTTP 404"):
        dl.download("x", tmp_path / "x", progress=False)


def test_offline_simplewiki_is_one_line(tmp_path, monkeypatch):
    from gym_crawl.corpus import mediawiki_download

    monkeypatch.setattr(dl, "RETRY_BACKOFF", 0.0)
    monkeypatch.setattr(mediawiki_download, "SIMPLEWIKI_BASE", "http://127.0.0.1:9/simplewiki")
    with pytest.raises(dl.DownloadError) as ei:
        mediawiki_download.download_simplewiki("20990101", tmp_path / "sw", progress=False)
    assert "\n" not in str(ei.value) and "http://127.0.0.1:9/simplewiki/20990101/" in str(ei.value)
    assert "local dump works instead" in str(ei.value)


# ------------------------------------------------------------------ item 9: topics and label seeds

def test_summary_lists_topics_and_label_seeds(tiny_corpus):
    s = tiny_corpus.summary(top_labels=2)
    assert set(s["topics"]) == {"geology", "cancer", "poetry"} and s["topics"]["geology"]["seeds"] == ["Geology"]
    top = s["top_labels"]
    assert len(top) == 2 and all(t["pages"] == 150 for t in top)
    ind = tiny_corpus.in_degree()
    for t in tiny_corpus.label_seeds(None):
        lab = tiny_corpus.labels.index(t["label"])
        members = [i for i in range(tiny_corpus.n_pages) if lab in tiny_corpus.label_ids[
            tiny_corpus.label_ptr[i]:tiny_corpus.label_ptr[i + 1]]]
        best = max(members, key=lambda i: (ind[i], -i))
        assert t["seed"] == tiny_corpus.titles[best] and t["seed_in_links"] == ind[best]
    assert {t["seed"] for t in tiny_corpus.label_seeds(None)} >= {"United States"}  # the hub of subject.gen


def test_corpus_info_prints_topics_and_labels(tmp_path, capsys):
    from gym_crawl.cli import main

    make_tiny_corpus(200).save(tmp_path / "c")
    assert main(["corpus", "info", str(tmp_path / "c"), "--labels", "3"]) == 0
    out = capsys.readouterr().out
    assert "topics (3)" in out and "geology" in out
    assert "most frequent labels" in out and "--topic subject.gen --seed-pages \"United States\"" in out
    assert main(["corpus", "info", str(tmp_path / "c"), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["top_labels"][0]["pages"] == 50 and "geology" in info["topics"]


def test_store_and_open_cached(tmp_path):
    c = make_tiny_corpus(200)
    assert cache_mod.open_cached(tmp_path / "c") is None
    stored = cache_mod.store_cached(c, tmp_path / "c", mmap=False)
    assert stored.path == tmp_path / "c" and not _is_mmapped(stored.link_dst)
    again = cache_mod.open_cached(tmp_path / "c")
    assert again is not None and _is_mmapped(again.link_dst)
    _same(again, c)


def test_download_into_an_unwritable_folder_is_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(dl.DownloadError) as ei:
        dl.download("wikispeedia", blocker / "ws", progress=False)
    assert "cannot create the download folder" in str(ei.value) and "\n" not in str(ei.value)


def test_load_shares_one_object_per_process_until_a_file_changes(tiny_corpus, tmp_path):
    """Corpus.load of the same unchanged files returns the same object (so the text model, topic scorers and
    score tables keyed on it exist once per process); share=False, or any changed file, gives a new one."""
    import os

    path = tiny_corpus.save(tmp_path / "c")
    a = Corpus.load(path)
    assert Corpus.load(path) is a and Corpus.load(str(path) + "/") is a
    assert Corpus.load(path, share=False) is not a
    assert Corpus.load(path, mmap=False) is not a
    f = path / "page_domain.npy"
    st = f.stat()
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))   # same bytes, but the file was touched
    b = Corpus.load(path)
    assert b is not a and Corpus.load(path) is b
    _same(a, b)


def test_load_hands_validated_pages_back(tmp_path):
    """A scanning load (verify=True, or a manifest without stored ranges) reads every page to validate it,
    then madvise(DONTNEED)s the read-only mappings: the arrays still read the same values (faulted back from
    the page cache), and the mapping stays mapped."""
    c = make_tiny_corpus(400)
    c.save(tmp_path / "c")
    d = Corpus.load(tmp_path / "c", share=False, verify=True)
    _same(c, d)
    assert _is_mmapped(d.link_dst) and _is_mmapped(d.text_terms)
