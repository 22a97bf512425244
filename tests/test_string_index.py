"""A string table's lookups: the compiled scan (large tables, nothing built) and the hash index give the same
positions — the first of repeated strings — and the scan turns into the index after enough lookups."""
from __future__ import annotations

import pytest

from gym_crawl.corpus.core import StringTable

WORDS = ["Cancer", "cancer", "", "Ünïcode ✓", "b", "ab", "Cancer", "x" * 300, "a b", "a_b", "ba"]


@pytest.mark.parametrize("scan", [True, False])
def test_lookup_finds_the_first_equal_string(scan, monkeypatch):
    monkeypatch.setattr(StringTable, "SCAN_MIN", 0 if scan else 1 << 16)
    t = StringTable.from_strings(WORDS)
    for i, w in enumerate(WORDS):
        assert t.index(w) == WORDS.index(w) and WORDS[t.index(w)] == w, (w, i)
    assert t.index("Cancer") == 0  # repeated: the first
    for missing in ("cancer ", "CANCER", "a", "xx", "Ünïcode"):
        assert t.get(missing) == -1 and missing not in t
        with pytest.raises(KeyError, match="'" + missing):
            t.index(missing)
    assert (t._hashes is None) == scan  # the scan built nothing


def test_scans_turn_into_the_index(monkeypatch):
    monkeypatch.setattr(StringTable, "SCAN_MIN", 0)
    monkeypatch.setattr(StringTable, "SCANS_BEFORE_INDEX", 3)
    t = StringTable.from_strings(WORDS)
    for w in ("ab", "ab", "b", "zz", "zz", "b"):  # a string scanned for is remembered: 3 scans
        assert t.get(w) == (WORDS.index(w) if w in WORDS else -1) and t._hashes is None
    assert t.index("a_b") == 9 and t._hashes is not None  # the fourth different string builds the index
    assert t.index("ba") == 10 and t.get("zz") == -1
