"""The on-disk cache of a topic's score tables (per-worker memory): ``TopicScorer.save_tables``
stores the complete page and link tables (npy + manifest, written under a .partial directory and renamed
into place), and every later scorer of the same corpus, text model and topic memory-maps them read-only
instead of filling its own copy — the same values, so the same trajectories; a half-written, altered or
foreign cache is never used."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pytest
from conftest import make_tiny_corpus
from test_shared_scorer import _make, _same, _trajectory

import gym_crawl  # noqa: F401
import gym_crawl.crawl.state as state_mod
import gym_crawl.relevance.scorer as scorer_mod
from gym_crawl._io import seal
from gym_crawl.corpus import Corpus
from gym_crawl.corpus.core import _is_mmapped


@pytest.fixture()
def saved(tmp_path, monkeypatch):
    """The tiny corpus saved and re-opened (memory-mapped), lazy scoring, a private data dir and a fresh
    process-wide scorer memo."""
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path / "data"))
    monkeypatch.setattr(state_mod, "EAGER_SCORING_LINKS", 0)
    monkeypatch.setattr(scorer_mod, "_SHARED", weakref.WeakKeyDictionary())
    make_tiny_corpus(400).save(tmp_path / "c")
    return Corpus.load(tmp_path / "c", share=False)


def _fresh_scorer(corpus, topic="cancer"):
    """A new scorer as a new process would build it (the process-wide memo cleared)."""
    scorer_mod._SHARED.clear()
    e = _make(corpus, topic)
    e.reset(seed=0)
    return e, e.unwrapped.scorer


def test_round_trip_maps_the_same_tables_read_only(saved):
    _, sc = _fresh_scorer(saved)
    path = sc.save_tables()
    assert (path / "manifest.json").is_file() and not list(path.parent.glob(".*partial"))
    want_p, want_l = sc.page_table(), sc.link_table()
    _, sc2 = _fresh_scorer(saved)
    assert sc2 is not sc
    pt, lt = sc2.page_table(), sc2.link_table()
    assert pt.mapped and lt.mapped and pt.complete and lt.complete and pt.done.all() and lt.done.all()
    for a, b in ((pt.rel, want_p.rel), (pt.cat, want_p.cat), (pt.tfidf, want_p.tfidf), (lt.rel, want_l.rel),
                 (lt.cat, want_l.cat), (lt.kw_url, want_l.kw_url), (lt.kw_anchor, want_l.kw_anchor)):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    for a in (pt.rel, pt.cat, pt.tfidf, lt.rel, lt.cat):
        assert _is_mmapped(a) and not a.flags.writeable
    with pytest.raises(ValueError):
        lt.rel[0] = 1.0


def test_mapped_tables_give_the_same_trajectories(saved):
    e, sc = _fresh_scorer(saved)
    want = [_trajectory(e, s) for s in (3, 4)]
    sc.save_tables()
    e2, sc2 = _fresh_scorer(saved)
    assert sc2.link_table().mapped
    got = [_trajectory(e2, s) for s in (3, 4)]
    assert all(len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b)) for a, b in zip(want, got))


def test_set_keywords_on_mapped_tables_rescoring_flags_only(saved):
    _, sc = _fresh_scorer(saved)
    sc.save_tables()
    _, sc2 = _fresh_scorer(saved)
    lt = sc2.link_table()
    rel = np.array(lt.rel)
    sc2.set_keywords(["tumor", "oncology"])
    lt.ensure(np.arange(saved.n_pages))
    ref = sc2.score_links(np.arange(saved.n_links))
    assert np.array_equal(lt.kw_url, ref.kw_url) and np.array_equal(lt.kw_anchor, ref.kw_anchor)
    assert np.array_equal(lt.rel, rel)
    # the copy-on-write flags changed in this process only: the file still holds the topic's own flags
    _, sc3 = _fresh_scorer(saved)
    assert sc3.load_tables() and np.array_equal(sc3.link_table().kw_url, sc.link_table().kw_url)


@pytest.mark.parametrize("damage", ["no-manifest", "truncated", "altered", "foreign-key", "partial-only"])
def test_half_written_or_foreign_cache_is_refused(saved, damage):
    _, sc = _fresh_scorer(saved)
    path = sc.save_tables()
    if damage == "no-manifest":  # a writer killed before the manifest: never accepted
        (path / "manifest.json").unlink()
    elif damage == "truncated":
        f = path / "link_cat.npy"
        f.write_bytes(f.read_bytes()[:-64])
    elif damage == "altered":
        f = path / "page_rel.npy"
        b = bytearray(f.read_bytes())
        b[-4:] = b"\x00\x00\x80\x7f"  # last value -> +inf, same size
        f.write_bytes(bytes(b))
    elif damage == "foreign-key":
        m = json.loads((path / "manifest.json").read_text())
        m["key"] = "0" * 32
        (path / "manifest.json").write_text(json.dumps(seal(m)))
    else:  # only a .partial directory of a writer that died: the final name does not exist
        path.rename(path.with_name(f".{path.name}.999999-deadbeef.partial"))
    _, sc2 = _fresh_scorer(saved)
    assert sc2.load_tables() is False
    assert not sc2.link_table().mapped and not sc2.page_table().mapped  # fills its own tables, as without cache


def test_other_topic_or_unsaved_corpus_uses_no_cache(saved):
    _, sc = _fresh_scorer(saved)
    sc.save_tables()
    _, other = _fresh_scorer(saved, topic="poetry")
    assert not other.link_table().mapped
    mem = make_tiny_corpus(400)
    _, sc_mem = _fresh_scorer(mem)
    assert sc_mem.tables_path() is None and not sc_mem.link_table().mapped
    with pytest.raises(ValueError, match="saved on disk"):
        sc_mem.save_tables()


def test_processes_share_the_mapped_pages(saved, tmp_path):
    """Two processes that map the cache share its pages (Shared_Clean in smaps), not one private copy each."""
    _, sc = _fresh_scorer(saved)
    path = sc.save_tables()
    code = textwrap.dedent(f"""
        import sys
        import numpy as np
        a = np.load({str(path / "link_cat.npy")!r}, mmap_mode="r")
        for line in sys.stdin:            # "touch": read every page again, then answer
            if line.strip() != "touch":
                break
            float(np.asarray(a).sum())
            sys.stdout.write("ok\\n"); sys.stdout.flush()
    """)
    p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def counts() -> tuple[int, int]:
        p.stdin.write("touch\n")
        p.stdin.flush()
        assert p.stdout.readline().strip() == "ok"
        float(np.asarray(lt.cat).sum())
        shared = private = 0
        cur = None
        with open("/proc/self/smaps") as fh:
            lines = fh.readlines()
        for line in lines:
            parts = line.split()
            if not parts[0].endswith(":"):
                cur = parts[5] if len(parts) >= 6 else None
            elif cur and cur.endswith("link_cat.npy"):
                if parts[0] == "Shared_Clean:":
                    shared += int(parts[1])
                elif parts[0] in ("Private_Clean:", "Private_Dirty:"):
                    private += int(parts[1])
        return shared, private

    try:
        lt = sc.link_table() if sc.link_table().mapped else _fresh_scorer(saved)[1].link_table()
        assert lt.mapped
        # both processes have just read every page. How smaps splits the file's pages into Shared/Private
        # depends on the kernel (large page-cache folios are accounted as a whole, and a memory reclaimer such
        # as DAMON may unmap a page from one process in between): a fresh clone on this machine reported half
        # of a 22-page file as private. Sharing is what matters: pages of the mapped cache are shared with the
        # other process (a private copy per process would show no shared page at all).
        for _ in range(5):
            shared, private = counts()
            if private == 0:
                break
        assert shared > 0
    finally:
        p.stdin.write("quit\n")
        p.stdin.flush()
        p.wait(timeout=30)


def test_set_keywords_withdraws_the_process_wide_scorer(saved):
    """A keyword change on the shared scorer must not reach envs made afterwards (it made the TRES golden
    trajectories depend on which tests ran before them in the same process)."""
    e, sc = _fresh_scorer(saved)
    want = _trajectory(_make(saved), 7)
    sc.set_keywords(["tumor"])
    e2 = _make(saved)
    got = _trajectory(e2, 7)
    assert e2.unwrapped.scorer is not sc
    assert np.array_equal(e2.unwrapped.scorer.keyword_mask, _fresh_scorer(saved)[1].keyword_mask)
    assert len(want) == len(got) and all(np.array_equal(x, y) for x, y in zip(want, got))


def test_precompute_scores_persist_stores_the_tables(saved):
    """env.precompute_scores(persist=True) writes the tables a later (fresh) scorer memory-maps."""
    e, sc = _fresh_scorer(saved)
    assert sc.tables_path() is not None and not sc.tables_path().exists()
    e.unwrapped.view.precompute_scores(persist=True)
    assert (sc.tables_path() / "manifest.json").exists()
    _, sc2 = _fresh_scorer(saved)
    assert sc2 is not sc and _is_mmapped(sc2.link_table().rel) and sc2.link_table().complete


@pytest.mark.parametrize("sealed_digest", [False, True])
def test_nan_written_into_stored_tables_is_refused_and_recomputed(saved, sealed_digest):
    """NaN in ``link_rel.npy`` after ``precompute_scores(persist=True)``: every later process used to accept it
    (relevant_found 116 → 35). Now the full sha256 sees the change; and a manifest whose digests match the NaN
    file (tables that went bad before they were stored) is refused by the finiteness check."""
    from gym_crawl._io import file_digest

    e, sc = _fresh_scorer(saved)
    want = _trajectory(e, 40)
    path = sc.save_tables()
    f = path / "link_rel.npy"
    a = np.load(f)
    a[::3] = np.nan
    np.save(f, a)
    if sealed_digest:
        m = json.loads((path / "manifest.json").read_text())
        m["files"]["link_rel.npy"] = {**file_digest(f), "shape": list(a.shape), "dtype": str(a.dtype)}
        (path / "manifest.json").write_text(json.dumps(seal(m)))
    import gym_crawl.corpus.cache as cache_mod

    cache_mod._WARNED.clear()
    match = r"link_rel\.npy: non-finite" if sealed_digest else r"link_rel\.npy: sha256 differs"
    with pytest.warns(cache_mod.CacheWarning, match=match):
        e2, sc2 = _fresh_scorer(saved)
    assert not sc2.link_table().mapped and not path.exists()  # removed; the scorer fills its own tables
    assert _same(_trajectory(e2, 40), want)
    assert np.isfinite(sc2.link_table().rel).all()


def test_stored_table_check_refuses_scores_outside_their_range():
    """tf-idf scores are cosines of non-negative vectors (in [0, 1]: above 1 or negative is refused), the other
    scores cosines (outside [-1, 1] refused)."""
    check = scorer_mod._table_problem
    outside = "tf-idf scores outside [0, 1] (they are cosines of non-negative vectors)"
    assert check("page_tfidf", np.array([0.0, 0.5, 1.0], np.float32)) is None
    assert check("page_tfidf", np.array([0.0, 0.5, 1.1], np.float32)) == outside
    assert check("page_tfidf", np.array([0.2, -0.1], np.float32)) == outside
    assert check("page_rel", np.array([0.2, 1.1], np.float32)) == "scores outside [-1, 1] (they are cosines)"
    assert check("link_rel", np.array([-0.9, 0.9], np.float32)) is None
    assert check("page_tfidf", np.array([np.nan], np.float32)) == "non-finite scores"
