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
from gym_crawl.corpus.core import _ARRAY_SPEC, _ID_BOUNDS, _PTR_NAMES


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
    assert set(r) == set(_ID_BOUNDS) | set(_PTR_NAMES)
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
