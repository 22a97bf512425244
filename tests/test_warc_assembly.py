"""The WARC compiler's join and assembly (gym_crawl.web.warc_build): the same arrays whatever the chunk size, the
segments and the engine, and an interrupted assembly never leaves an accepted corpus."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from test_warc import Warc

from gym_crawl.corpus import Corpus
from gym_crawl.corpus.core import _ARRAY_SPEC
from gym_crawl.web.warc import load_warc


def _archive(folder: Path) -> Path:
    """Two files: pages on two hosts with shared titles, redirects (chains, a loop), a second capture of a URL, a
    payload-digest duplicate, links to URLs not in the archive, and repeated (source, target) links."""
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(2):
        w = Warc(folder / f"part{k}.warc.gz")
        for j in range(25):
            w.page(f"http://h{k}.org/p{j}", "Shared title" if j % 5 == 0 else f"P{k} {j}", f"page {k} {j} w{j % 4}",
                   [(f"http://h{1 - k}.org/p{j}", "peer"), (f"http://h{k}.org/r{j}", "moved"),
                    (f"http://out{j % 3}.org/x", "outside"), (f"http://h{1 - k}.org/p{j}", "peer again"),
                    (f"http://h{k}.org/p{j}", "itself")])
            w.response(f"http://h{k}.org/r{j}", status="301 Moved", ctype=None,
                       headers=[("Location", f"/p{(j + 1) % 25}")])
        w.response(f"http://h{k}.org/c", status="302 Found", ctype=None, headers=[("Location", "/r3")])
        w.response(f"http://h{k}.org/l1", status="302 Found", ctype=None, headers=[("Location", "/l2")])
        w.response(f"http://h{k}.org/l2", status="302 Found", ctype=None, headers=[("Location", "/l1")])
        w.page(f"http://h{k}.org/hub", "", "hub page", [(f"http://h{k}.org/c", "chain"),
                                                         (f"http://h{k}.org/l1", "loop")])
        w.page(f"http://h{k}.org/p0", "again", "second capture", [])
        w.page(f"http://h{k}.org/copy", f"P{k} 1", f"page {k} 1", [(f"http://h{1 - k}.org/p1", "peer"),
                                                                    (f"http://h{k}.org/r1", "moved")])
        w.close()
    return folder


LABELS = {"http://h0.org/p1": ["b", "a"], "http://h1.org/p2": "c", "http://nowhere.org/": "z"}
RULES = [("http://h1.org/", "site.h1"), ("re:/p1\\d$", "teens")]


def _same(a: Corpus, b: Corpus) -> None:
    for name in (*_ARRAY_SPEC, "link_position"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    for name in ("titles", "vocab", "domains", "labels", "texts", "urls"):
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name
    drop = {"engine"}
    assert ({k: v for k, v in a.meta["warc_summary"].items() if k not in drop}
            == {k: v for k, v in b.meta["warc_summary"].items() if k not in drop})
    assert a.meta.get("unfetched_pages") == b.meta.get("unfetched_pages")


def test_chunk_sizes_and_segments_give_the_same_arrays(tmp_path: Path) -> None:
    src = _archive(tmp_path / "w")
    kw = {"include_unfetched": True, "labels": LABELS, "label_rules": RULES, "cache": False}
    one = load_warc(src, workers=1, **kw)
    assert one.n_pages == 25 * 2 + 2 + 4 + 3  # pages, the hubs, the unfetched (loops twice, three outside hosts)
    assert one.titles.tolist().count("Shared title") == 0  # shared by ten pages: each gets its URL
    assert "Shared title (http://h0.org/p5)" in one.titles.tolist() and one.titles[one.page_id("http://h0.org/hub")] \
        == "http://h0.org/hub"
    assert one.page_labels(one.page_id("http://h0.org/p1")) == ["a", "b"]
    assert one.meta["warc_summary"]["label_map_unmatched"] == 1
    for chunk_pages in (1, 3, 2000):
        _same(one, load_warc(src, workers=1, chunk_pages=chunk_pages, **kw))
    _same(one, load_warc(src, workers=1, chunk_links=7, **kw))  # a chunk ends after the page that passes 7 links
    _same(one, load_warc(src, workers=2, chunk_pages=4, segment_bytes=2000, **kw))


@pytest.mark.slow
def test_dask_gives_the_same_arrays_as_processes(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    src = _archive(tmp_path / "w")
    kw = {"include_unfetched": True, "labels": LABELS, "label_rules": RULES, "cache": False}
    one = load_warc(src, workers=1, chunk_pages=5, **kw)
    dask = load_warc(src, engine="dask", segment_bytes=3000, **kw)
    _same(one, dask)
    assert dask.meta["warc_summary"]["engine"] == "dask"


def _accepted(data: Path) -> list[Path]:
    return [p for p in (data / "warc").glob("*") if (p / "manifest.json").is_file()] if (data / "warc").is_dir() else []


def test_an_interrupted_assembly_leaves_no_accepted_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gym_crawl.web import warc_build

    data = Path(os.environ["GYM_CRAWL_DATA"])
    src = _archive(tmp_path / "w")
    before = set(_accepted(data))
    real = warc_build._Assembly.add_chunk
    calls = []

    def failing(self: object, c: dict, vocab_id: dict) -> None:
        calls.append(c)
        if len(calls) == 3:
            raise KeyboardInterrupt  # stopped mid-assembly
        real(self, c, vocab_id)  # type: ignore[arg-type]

    monkeypatch.setattr(warc_build._Assembly, "add_chunk", failing)
    with pytest.raises(KeyboardInterrupt):
        load_warc(src, chunk_pages=4, workers=1)
    assert set(_accepted(data)) == before
    assert not [p for p in (data / "warc").iterdir() if p.name.endswith(".partial")]
    monkeypatch.setattr(warc_build._Assembly, "add_chunk", real)
    c = load_warc(src, chunk_pages=4, workers=1)
    assert c.path is not None and c.path in _accepted(data)
    _same(c, load_warc(src, cache=False))


def test_a_killed_compile_is_never_opened_and_its_leftovers_are_removed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    src = _archive(tmp_path / "w")
    script = textwrap.dedent(f"""
        import os
        from gym_crawl.web import warc_build
        from gym_crawl.web.warc import load_warc
        real, n = warc_build._Assembly.add_chunk, []
        def dying(self, c, vocab_id):
            n.append(c)
            if len(n) == 3:
                os._exit(9)  # killed: no clean-up runs
            real(self, c, vocab_id)
        warc_build._Assembly.add_chunk = dying
        load_warc({str(src)!r}, chunk_pages=4, workers=1)
    """)
    env = {**os.environ, "GYM_CRAWL_DATA": str(data)}
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 9, r.stderr
    left = [p for p in (data / "warc").iterdir() if p.is_dir()]
    assert [p.name.endswith(".partial") for p in left] == [True]  # only the killed writer's partial folder
    assert _accepted(data) == []
    done = subprocess.run([sys.executable, "-c", "import json, sys; from gym_crawl.web.warc import load_warc; "
                           f"c = load_warc({str(src)!r}, chunk_pages=4, workers=1); "
                           "print(json.dumps([str(c.path), c.n_pages]))"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    path, pages = json.loads(done.stdout.strip().splitlines()[-1])
    assert [p.name for p in (data / "warc").iterdir() if p.is_dir()] == [Path(path).name]  # the leftover removed
    assert Corpus.load(path, verify=True).n_pages == pages == load_warc(src, cache=False).n_pages


@pytest.mark.parametrize("dtype", [np.int32, np.uint8])
def test_gathered_rows_are_the_rows(dtype: type) -> None:
    from gym_crawl.web.warc_build import _gather_csr

    rng = np.random.default_rng(3)
    lens = rng.integers(0, 6, 500)
    ptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    vals = rng.integers(0, 200, int(ptr[-1])).astype(dtype)
    for rows in (np.arange(500), np.arange(40, 300), np.sort(rng.choice(500, 300, replace=False)),
                 rng.integers(0, 500, 400), np.zeros(0, np.int64), np.array([7, 7, 3])):
        out_ptr, out = _gather_csr(ptr, vals, rows)
        want = [vals[ptr[r]:ptr[r + 1]] for r in rows]
        assert out.dtype == vals.dtype and np.array_equal(np.diff(out_ptr), [len(w) for w in want])
        assert np.array_equal(out, np.concatenate(want) if want else vals[:0])


def test_a_chunk_ends_at_its_link_budget_without_splitting_a_page(tmp_path: Path) -> None:
    from gym_crawl.web.warc import WarcOptions, parse_warc_file

    src = _archive(tmp_path / "w")
    r = parse_warc_file(src / "part0.warc.gz", tmp_path / "chunks", 0, WarcOptions(chunk_links=12))
    sizes = [(c["pages"], c["links"]) for c in r["chunks"]]
    assert len(sizes) > 5 and sum(p for p, _ in sizes) == 28
    assert all(12 <= links <= 12 + 4 for _, links in sizes[:-1])  # a page has at most 5 links: the budget is passed
    assert sizes[-1][1] <= 16                                      # by less than a page's links, never split
