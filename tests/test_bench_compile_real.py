"""gym-crawl bench compile_real on a folder of three pages (the real run reads Debian's documentation)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gym_crawl.benchmarks.compile_real import main


def test_compile_real_writes_rates_and_profile_shares(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(3):
        (docs / f"p{i}.html").write_text(f"<title>P{i}</title><main><p>page {i} text</p><a href='p{(i + 1) % 3}.html'>"
                                         f"next</a></main>")
    out = tmp_path / "out"
    assert main(["--folders", str(docs), "--pages", "2", "--repeats", "1", "--out", str(out)]) == 0
    r = json.loads((out / "results.json").read_text())
    assert r["pages"] == 2 and r["runs"][0]["pages"] == 2 and r["median_pages_per_cpu_s"] > 0
    shares = r["profile_share_pct"]
    # the parts are named and each is a share of the whole; their sizes are timings (a cold numba cache can put
    # the main-text extraction of two tiny pages below the 0.05 % the shares are rounded to), so not asserted
    assert {"Resiliparse main text", "Resiliparse parse"} <= set(shares)
    assert all(0.0 <= v <= 100.0 for v in shares.values())


def test_compile_real_names_a_folder_without_html(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no HTML file under"):
        main(["--folders", str(tmp_path), "--out", str(tmp_path / "o")])
