"""Opening a saved corpus validates from the id ranges its manifest recorded at save time instead of
scanning every array (memory: ``Corpus.load`` made every page of the 323k-page mapping resident).
A manifest whose ranges are out of bounds or malformed is refused; ``verify=True`` and older manifests
without ranges scan the arrays as before."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from conftest import make_tiny_corpus

from gym_crawl._io import seal, write_stamp
from gym_crawl.corpus import Corpus, CorpusFormatError
from gym_crawl.corpus.core import _ARRAY_SPEC, _ID_BOUNDS, _PTR_NAMES, links_in_target_order


@pytest.fixture()
def saved_dir(tmp_path):
    c = make_tiny_corpus(400)
    c.save(tmp_path / "c")
    return tmp_path / "c", c


def _edit_manifest(d, fn, stamp: bool = True) -> None:
    """Edit the manifest (sealed again); ``stamp``: and mark its files as checked, so the next open validates
    from the edited stored ranges instead of scanning the arrays (a first open scans and compares them)."""
    mf = d / "manifest.json"
    m = json.loads(mf.read_text())
    fn(m)
    mf.write_text(json.dumps(seal(m)))
    if stamp:
        write_stamp(d, hashlib.sha256(mf.read_bytes()).hexdigest(), m["files"])


def test_save_records_ranges_and_load_round_trips(saved_dir):
    d, c = saved_dir
    r = json.loads((d / "manifest.json").read_text())["ranges"]
    assert set(r) == set(_ID_BOUNDS) | set(_PTR_NAMES) | {"link_order"}
    assert r["link_order"] == {"by_target": links_in_target_order(c.link_ptr, c.link_dst)}
    assert r["link_dst"] == {"len": c.n_links, "min": int(c.link_dst.min()), "max": int(c.link_dst.max())}
    assert all(r[p]["nondecreasing"] is True for p in _PTR_NAMES)
    back = Corpus.load(d, share=False)
    for n in _ARRAY_SPEC:
        assert np.array_equal(getattr(back, n), getattr(c, n)), n
    assert back.titles.tolist() == c.titles.tolist()


def test_out_of_bounds_stored_range_is_refused(saved_dir):
    d, c = saved_dir
    _edit_manifest(d, lambda m: m["ranges"]["link_dst"].update(max=c.n_pages))
    with pytest.raises(CorpusFormatError, match=r"link_dst.*ids must lie in \[0, 400\)"):
        Corpus.load(d, share=False)


def test_stored_non_monotone_pointer_is_refused(saved_dir):
    d, _ = saved_dir
    _edit_manifest(d, lambda m: m["ranges"]["text_ptr"].update(nondecreasing=False))
    with pytest.raises(CorpusFormatError, match="text_ptr.*not non-decreasing"):
        Corpus.load(d, share=False)


@pytest.mark.parametrize("bad", [lambda m: m["ranges"].pop("context_terms"),
                                 lambda m: m["ranges"].update(label_ids=[0, 3]),
                                 lambda m: m["ranges"]["anchor_terms"].update(max="9")])
def test_malformed_ranges_are_refused(saved_dir, bad):
    d, _ = saved_dir
    _edit_manifest(d, bad)
    with pytest.raises(CorpusFormatError, match="manifest field 'ranges'"):
        Corpus.load(d, share=False)


def test_stored_range_for_another_length_is_refused(saved_dir):
    d, c = saved_dir
    _edit_manifest(d, lambda m: m["ranges"]["text_terms"].update(len=len(c.text_terms) + 1))
    with pytest.raises(CorpusFormatError, match="text_terms.*manifest ranges are for"):
        Corpus.load(d, share=False)


def test_verify_and_manifests_without_ranges_scan_the_arrays(saved_dir):
    d, c = saved_dir
    # stale ranges claiming an impossible id: the scan (verify=True, or a first open) compares them with the arrays
    _edit_manifest(d, lambda m: m["ranges"]["link_dst"].update(max=10**9))
    with pytest.raises(CorpusFormatError, match=r"'ranges' differs from the arrays for \['link_dst'\]"):
        Corpus.load(d, share=False, verify=True)
    _edit_manifest(d, lambda m: m["ranges"]["link_dst"].update(max=int(c.link_dst.max())), stamp=False)
    assert Corpus.load(d, share=False).n_links == c.n_links  # first open of this manifest: scanned, consistent
    _edit_manifest(d, lambda m: m.pop("ranges"))  # written before ranges were recorded
    assert Corpus.load(d, share=False).n_links == c.n_links


def test_links_in_target_order_allows_a_descent_only_where_a_page_starts():
    ptr = np.array([0, 3, 3, 6, 8], np.int64)  # an empty page among them
    ok = np.array([1, 4, 4, 0, 2, 9, 3, 3], np.int32)  # ascending in each page, ties adjacent
    for block in (1, 2, 3, 1 << 22):  # a descent on either side of a block's edge
        assert links_in_target_order(ptr, ok, block=block)
        bad = ok.copy()
        bad[[4, 5]] = bad[[5, 4]]  # page 2: 0, 9, 2
        assert not links_in_target_order(ptr, bad, block=block)
        bad = ok.copy()
        bad[[6, 7]] = 5, 4  # the last page
        assert not links_in_target_order(ptr, bad, block=block)
    assert links_in_target_order(np.zeros(3, np.int64), np.zeros(0, np.int32))


def test_the_link_order_is_read_from_the_manifest_and_checked_by_a_scan(tmp_path):
    c = make_tiny_corpus(400)
    order = np.lexsort((c.link_dst, np.repeat(np.arange(c.n_pages), np.diff(c.link_ptr))))
    assert not c.links_by_target and not np.array_equal(order, np.arange(c.n_links))
    c2 = Corpus(**{**{n: getattr(c, n) for n in ("text_ptr", "text_terms", "text_counts", "title_ptr",
                                                   "title_terms", "link_ptr", "page_domain", "label_ptr",
                                                   "label_ids", "titles", "vocab", "domains", "labels")},
                   "link_dst": c.link_dst[order], "anchor_ptr": np.arange(c.n_links + 1, dtype=np.int64),
                   "anchor_terms": np.zeros(c.n_links, np.int32),
                   "context_ptr": np.arange(c.n_links + 1, dtype=np.int64), "context_terms": np.zeros(c.n_links,
                                                                                                       np.int32)})
    assert c2.links_by_target
    d = c2.save(tmp_path / "sorted")
    assert json.loads((d / "manifest.json").read_text())["ranges"]["link_order"] == {"by_target": True}
    back = Corpus.load(d, share=False)
    assert back.links_by_target and back.__dict__["_by_target"][0] is back.link_dst  # from the manifest
    _edit_manifest(d, lambda m: m["ranges"]["link_order"].update(by_target=False))
    with pytest.raises(CorpusFormatError, match=r"'ranges' differs from the arrays for \['link_order'\]"):
        Corpus.load(d, share=False, verify=True)
    _edit_manifest(d, lambda m: m["ranges"].pop("link_order"))  # saved before the order was recorded
    assert Corpus.load(d, share=False, verify=True).links_by_target  # the load's scan finds it
    old = Corpus.load(d, share=False)
    assert "_by_target" not in old.__dict__ and old.links_by_target  # found by a scan when first asked


class _NoScan(np.ndarray):
    """An array that refuses to be scanned (min/max/any ufunc): only its length, dtype and single items."""

    def min(self, *a, **k):  # noqa: D102
        raise AssertionError("scanned (min)")

    def max(self, *a, **k):  # noqa: D102
        raise AssertionError("scanned (max)")

    def __array_ufunc__(self, *a, **k):
        raise AssertionError("scanned (ufunc)")


def test_validate_from_stored_ranges_reads_no_array(saved_dir):
    """With the manifest's ranges, validation touches only lengths, dtypes and pointer endpoints (so a
    memory-mapped corpus' pages stay on disk); without them it scans (the arrays refuse, so it raises)."""
    d, _ = saved_dir
    stored = json.loads((d / "manifest.json").read_text())["ranges"]
    c = Corpus.load(d, share=False)
    for n in _ARRAY_SPEC:
        c.__dict__[n] = np.asarray(getattr(c, n)).view(_NoScan)
    c.validate(stored=stored)
    with pytest.raises(AssertionError, match="scanned"):
        c.validate()
