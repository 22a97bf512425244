"""Splitting one WARC file at record boundaries, and compiling it in segments (the same corpus as whole)."""
from __future__ import annotations

from pathlib import Path

import pytest
from fastwarc.warc import ArchiveIterator
from test_warc import Warc, assert_same_corpus

from gym_crawl.web.warc import load_warc
from gym_crawl.web.warc_tasks import RangeReader, record_boundary, split_ranges


def _many(path: Path, gz: bool = True, n: int = 40) -> Path:
    w = Warc(path, gz)
    w.info()
    for j in range(n):
        w.request(f"http://a.org/p{j}")
        links = [(f"http://a.org/p{(j * 7) % n}", f"to {j}"), (f"http://a.org/p{j + 1}", "next"),
                 (f"http://a.org/old{j - 5}", "old")]
        w.page(f"http://a.org/p{j}", f"P {j}", f"page {j} words w{j} WARC/1.0\r\n", links)
        if j % 9 == 4:
            w.response(f"http://a.org/old{j}", status="301 Moved", ctype=None, headers=[("Location", f"/p{j + 2}")])
            w.page(f"http://a.org/copy{j}", f"P {j}", f"page {j} words w{j} WARC/1.0\r\n", links)  # same payload
    return w.close()


def _starts(path: Path) -> list[int]:
    return [r.stream_pos for r in ArchiveIterator(open(path, "rb"), parse_http=False)]  # noqa: SIM115


@pytest.mark.parametrize("gz", [True, False])
def test_boundaries_are_the_record_starts(tmp_path: Path, gz: bool) -> None:
    path = _many(tmp_path / ("a.warc.gz" if gz else "a.warc"), gz)
    starts = _starts(path)
    size = path.stat().st_size
    for off in range(0, size + 3, 37):
        assert record_boundary(path, off) == min([s for s in starts if s >= off], default=size), off
    for seg in (1, 300, 2_000, size, None):
        ranges = split_ranges(path, seg)
        assert ranges[0][0] == 0 and ranges[-1][1] == size
        assert all(a < b == c for (a, b), (c, _) in zip(ranges, ranges[1:] + [(size, 0)]))
        seen = []
        for a, b in ranges:
            assert a in starts
            with RangeReader(path, a, b) as r:
                seen += [x.stream_pos for x in ArchiveIterator(r, parse_http=False)]
        assert seen == starts, seg


def test_a_file_gzipped_whole_is_one_range(tmp_path: Path) -> None:
    import gzip

    plain = _many(tmp_path / "a.warc", gz=False)
    whole = tmp_path / "whole.warc.gz"
    whole.write_bytes(gzip.compress(plain.read_bytes()))
    assert split_ranges(whole, 100) == [(0, whole.stat().st_size)]


@pytest.mark.parametrize("gz", [True, False])
def test_segments_give_the_corpus_of_the_whole_file(tmp_path: Path, gz: bool) -> None:
    path = _many(tmp_path / ("a.warc.gz" if gz else "a.warc"), gz)
    whole = load_warc(path, segment_bytes=None, cache=False)
    assert len(split_ranges(path, 700)) > 10
    for kw in ({"workers": 1}, {"workers": 2}):
        seg = load_warc(path, segment_bytes=700, chunk_pages=3, cache=False, **kw)
        assert_same_corpus(whole, seg)
        for key in ("records", "skipped", "duplicates", "redirects"):
            assert seg.meta["warc_summary"][key] == whole.meta["warc_summary"][key], key
    assert whole.meta["warc_summary"]["duplicates"]["payload_digest"] >= 1
    assert whole.meta["warc_summary"]["redirects"]["used"] >= 1


def test_an_unreadable_record_ends_the_file_in_segments_too(tmp_path: Path) -> None:
    path = _many(tmp_path / "a.warc", gz=False)
    data = path.read_bytes()
    cut = data.index(b"http://a.org/p20", data.index(b"WARC-Target-URI: http://a.org/p19"))
    bad = tmp_path / "bad" / "bad.warc"
    bad.parent.mkdir()
    start = data.rindex(b"WARC/1.0\r\n", 0, cut)
    bad.write_bytes(data[:start] + b"GARBAGE not a record\r\n\r\n" + data[start:])  # every record after it is lost
    whole = load_warc(bad, segment_bytes=None, cache=False)
    seg = load_warc(bad, segment_bytes=900, workers=2, cache=False)
    assert_same_corpus(whole, seg)
    assert seg.meta["warc_summary"]["skipped"] == whole.meta["warc_summary"]["skipped"]
    assert seg.meta["warc_summary"]["skipped"]["unreadable"] == 1
    assert seg.meta["warc_summary"]["records"] == whole.meta["warc_summary"]["records"]
    assert 0 < whole.n_pages < 40


def test_segment_bytes_is_checked(tmp_path: Path) -> None:
    path = _many(tmp_path / "a.warc.gz", n=3)
    with pytest.raises(ValueError, match="segment_bytes must be a positive int"):
        load_warc(path, segment_bytes=0, cache=False)


@pytest.mark.slow
def test_dask_compiles_one_file_in_segments(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    path = _many(tmp_path / "a.warc.gz")
    whole = load_warc(path, segment_bytes=None, cache=False)
    dask = load_warc(path, engine="dask", segment_bytes=700, cache=False)
    assert_same_corpus(whole, dask)
    for key in ("records", "skipped", "duplicates", "redirects"):
        assert dask.meta["warc_summary"][key] == whole.meta["warc_summary"][key], key


def test_each_parse_gives_the_free_heap_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gym_crawl.web.warc as warc
    import gym_crawl.web.warc_tasks as warc_tasks

    calls: list[int] = []
    monkeypatch.setattr(warc_tasks, "release_free_heap", lambda: calls.append(len(calls)) or True)
    path = _many(tmp_path / "a.warc.gz")
    r = warc.parse_warc_file(path, tmp_path / "chunks", 0, warc.WarcOptions(chunk_pages=7))
    assert len(r["chunks"]) >= 6 and len(calls) == 1  # once, when its chunks are written (not per chunk: the
    # pages given back would be touched again by the next chunk)
    a, b = split_ranges(path, path.stat().st_size // 2)[1]
    warc.parse_warc_file(path, tmp_path / "chunks", 1, warc.WarcOptions(), a, b)
    assert len(calls) == 2


def _rss_mb() -> float:
    import os

    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(not Path("/proc/self/statm").exists() or __import__("platform").libc_ver()[0] != "glibc",
                    reason="malloc_trim is glibc's; RSS read from /proc")
def test_release_free_heap_returns_freed_blocks_to_the_system() -> None:
    import ctypes

    from gym_crawl.web.warc_tasks import release_free_heap

    malloc = ctypes.CDLL(None).malloc
    free = ctypes.CDLL(None).free
    malloc.restype, malloc.argtypes, free.argtypes = ctypes.c_void_p, [ctypes.c_size_t], [ctypes.c_void_p]
    blocks = [malloc(16_384) for _ in range(12_800)]  # 200 MiB in blocks below the mmap threshold: the heap
    for b in blocks:
        ctypes.memset(b, 1, 16_384)  # touched: resident
    kept = blocks[::8]  # one block in eight stays: the heap's top is in use, the freed space lies between blocks
    for i, b in enumerate(blocks):
        if i % 8:
            free(b)
    before = _rss_mb()
    assert release_free_heap() is True
    after = _rss_mb()
    for b in kept:
        free(b)
    assert before - after > 100  # of the 175 MiB freed between kept blocks, nearly all goes back
