"""CorpusWriter (gym_crawl.corpus.writer): a corpus written block by block is the corpus Corpus.save writes, and an
interrupted write is never accepted."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gym_crawl.corpus.core import _ARRAY_SPEC, _OPTIONAL_ARRAYS, _OPTIONAL_TABLES, _TABLES, Corpus
from gym_crawl.corpus.writer import CorpusWriter, open_written
from gym_crawl.webgen.examples import example_corpus


def _pairs(c: Corpus) -> list[tuple[str, str, np.ndarray, np.ndarray]]:
    """Every CSR pair and string table of ``c`` as (pointer name, values name, pointer, values)."""
    out = [(p, v, getattr(c, p), getattr(c, v)) for p, v in (
        ("text_ptr", "text_terms"), ("title_ptr", "title_terms"), ("link_ptr", "link_dst"),
        ("anchor_ptr", "anchor_terms"), ("context_ptr", "context_terms"), ("label_ptr", "label_ids"))]
    for t in (*_TABLES, *_OPTIONAL_TABLES):
        tab = getattr(c, t)
        if tab is not None:
            out.append((f"{t}.offsets", f"{t}.blob", np.asarray(tab.offsets), np.asarray(tab.blob)))
    return out


def _write_in_blocks(c: Corpus, w: CorpusWriter, rows: int) -> None:
    for pname, vname, ptr, vals in _pairs(c):
        for a in range(0, max(len(ptr) - 1, 1), rows):
            b = min(a + rows, len(ptr) - 1)
            w.append_csr(pname, vname, ptr[a:b + 1] - ptr[a], vals[ptr[a]:ptr[b]], vals.dtype)
    singles = {"text_counts": c.text_counts, "page_domain": c.page_domain, "link_position": c.link_position}
    for name, arr in singles.items():
        if arr is None:
            continue
        for a in range(0, max(len(arr), 1), rows):
            w.append(name, arr[a:a + rows], arr.dtype)


def _corpus() -> Corpus:
    c = example_corpus()
    if c.link_position is None:  # exercise the optional per-link column too
        c.link_position = (np.arange(c.n_links) % 7).astype(np.int8)
    return c


@pytest.mark.parametrize("rows", [1, 7, 10_000])
def test_blocks_give_the_arrays_and_manifest_that_save_gives(tmp_path: Path, rows: int) -> None:
    c = _corpus()
    saved = Corpus.load(c.save(tmp_path / "saved"), share=False)
    with CorpusWriter(tmp_path / "written") as w:
        _write_in_blocks(c, w, rows)
        w.finish(dict(c.meta))
    got = Corpus.load(tmp_path / "written", verify=True, share=False)  # full sha256 and a scan of every range
    for name in (*_ARRAY_SPEC, *_OPTIONAL_ARRAYS):
        a, b = getattr(saved, name), getattr(got, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    for name in (*_TABLES, *_OPTIONAL_TABLES):
        a, b = getattr(saved, name), getattr(got, name)
        assert (a is None and b is None) or a.tolist() == b.tolist(), name
    ms = json.loads((tmp_path / "saved" / "manifest.json").read_text())
    mw = json.loads((tmp_path / "written" / "manifest.json").read_text())
    assert ms["ranges"] == mw["ranges"] and ms["counts"] == mw["counts"] and ms["meta"] == mw["meta"]
    assert {k: (v["shape"], v["dtype"]) for k, v in ms["files"].items()} == {
        k: (v["shape"], v["dtype"]) for k, v in mw["files"].items()}
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_an_exception_while_writing_leaves_nothing(tmp_path: Path) -> None:
    c = _corpus()
    with pytest.raises(RuntimeError, match="stop"), CorpusWriter(tmp_path / "c") as w:
        _write_in_blocks(c, w, 5)
        raise RuntimeError("stop")
    assert list(tmp_path.iterdir()) == []


def test_a_writer_that_never_finishes_leaves_no_corpus_and_the_next_one_cleans_up(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    c = _corpus()
    w = CorpusWriter(tmp_path / "c")
    _write_in_blocks(c, w, 5)  # …and the process dies here: no finish, no abort
    partial = w.tmp
    assert partial is not None and partial.is_dir() and not (tmp_path / "c").exists()
    monkeypatch.setattr("gym_crawl._io._pid_alive", lambda pid: False)  # its writer is gone
    with CorpusWriter(tmp_path / "c") as w2:
        assert not partial.exists()  # the dead writer's leftovers removed
        _write_in_blocks(c, w2, 3)
        w2.finish({"name": "again"})
    assert Corpus.load(tmp_path / "c", verify=True).n_pages == c.n_pages


def test_bad_blocks_are_refused(tmp_path: Path) -> None:
    with CorpusWriter(tmp_path / "c") as w:
        with pytest.raises(ValueError, match="from 0 to its 2 values"):
            w.append_csr("text_ptr", "text_terms", np.array([0, 1]), np.array([1, 2]), np.int32)
        with pytest.raises(ValueError, match="1-d"):
            w.append("page_domain", np.zeros((2, 2)), np.int32)
        w.append("page_domain", np.zeros(2), np.int32)
        with pytest.raises(TypeError, match="written as int32"):
            w.append("page_domain", np.zeros(2), np.int64)
        w.abort()
    assert list(tmp_path.iterdir()) == []


def test_open_written_in_memory_removes_the_folder(tmp_path: Path) -> None:
    c = _corpus()
    with CorpusWriter(tmp_path / "c") as w:
        _write_in_blocks(c, w, 4)
        w.finish({"name": "x"})
    m = open_written(tmp_path / "c", in_memory=True)
    assert m.path is None and m.checksum is None and not (tmp_path / "c").exists()
    assert np.array_equal(m.link_dst, c.link_dst) and m.titles.tolist() == c.titles.tolist()
