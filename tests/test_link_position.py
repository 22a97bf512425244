"""The per-link ``link_position`` corpus column: built by the HTML loaders (HTML folders, WARC archives, the live
web), saved and re-opened, absent (``None``) on other corpora and on corpora saved before the column existed, and
surfaced by the ``site`` feature set as one-hot columns of the best discovering link."""
from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest

import gym_crawl  # noqa: F401
from gym_crawl.corpus.core import LINK_POSITIONS, Corpus, CorpusBuilder, CorpusFormatError
from gym_crawl.features.site import POSITION_COLUMNS
from gym_crawl.web.html_extract import extract_page
from gym_crawl.web.html_folder import load_html_folder
from tests.helpers import fetch_now

#: target path -> where its link sits in PAGE
WHERE = {"n.html": "nav", "h.html": "header", "f.html": "footer", "s.html": "aside", "l.html": "list",
         "m.html": "main", "o.html": "other", "ml.html": "list"}
PAGE = """<html><head><title>Start</title></head><body>
<header><a href="h.html">head link</a></header>
<nav><ul><li><a href="n.html">nav link</a></li></ul></nav>
<div role="complementary"><a href="s.html">side link</a></div>
<ul><li><a href="l.html">list link</a></li></ul>
<main><p>Some geology text <a href="m.html">main link</a>.</p><ol><li><a href="ml.html">main list</a></li></ol></main>
<p><a href="o.html">other link</a></p>
<footer><a href="f.html">foot link</a></footer>
</body></html>"""


def _leaf(name: str) -> str:
    return f"<html><head><title>{name}</title></head><body><p>geology rocks {name}</p>" \
           f"<a href='index.html'>home</a></body></html>"


def _positions_by_target(c: Corpus, src: int) -> dict[str, str]:
    lo, hi = int(c.link_ptr[src]), int(c.link_ptr[src + 1])
    return {c.url(int(d)).rsplit("/", 1)[-1] if c.urls is not None else c.titles[int(d)]:
            LINK_POSITIONS[int(k)] for d, k in zip(c.link_dst[lo:hi], c.link_position[lo:hi])}


def _folder(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(PAGE, encoding="utf-8")
    for name in WHERE:
        (site / name).write_text(_leaf(name.split(".")[0]), encoding="utf-8")
    return site


def test_html_folder_records_each_links_landmark(tmp_path):
    c = load_html_folder(_folder(tmp_path))
    assert c.link_position is not None and c.link_position.dtype == np.int8
    got = _positions_by_target(c, c.page_id("Start"))
    assert got == {name.split(".")[0]: pos for name, pos in WHERE.items()}
    # the leaves' links sit outside every landmark
    leaves = c.link_src() != c.page_id("Start")
    assert leaves.sum() == len(WHERE) and {LINK_POSITIONS[int(k)] for k in c.link_position[leaves]} == {"other"}


def test_column_survives_save_and_load_and_old_corpora_load_without_it(tmp_path):
    c = load_html_folder(_folder(tmp_path))
    back = Corpus.load(c.save(tmp_path / "saved"))
    np.testing.assert_array_equal(back.link_position, c.link_position)
    # a corpus saved without the column (every corpus saved before it existed) loads with None
    b = CorpusBuilder("plain")
    b.add_page("A", "geology")
    b.add_page("B", "rocks")
    b.add_link(0, 1)
    plain = b.build()
    assert plain.link_position is None
    saved = plain.save(tmp_path / "plain")
    assert "link_position.npy" not in json.loads((saved / "manifest.json").read_text())["files"]
    assert Corpus.load(saved).link_position is None


def test_bad_positions_are_refused_naming_the_column():
    b = CorpusBuilder("bad")
    b.add_page("A", "x")
    b.add_page("B", "y")
    with pytest.raises(ValueError, match="position must be one of"):
        b.add_link(0, 1, position="sidebar")
    b.add_link(0, 1, position="nav")
    c = b.build()
    assert c.link_position.tolist() == [LINK_POSITIONS.index("nav")]
    import dataclasses

    with pytest.raises(CorpusFormatError, match="link_position"):
        dataclasses.replace(c, link_position=np.array([9], np.int8))
    with pytest.raises(CorpusFormatError, match="link_position"):
        dataclasses.replace(c, link_position=np.array([0, 0], np.int8))


def test_warc_compile_keeps_positions(tmp_path):
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    from gym_crawl.web.warc import load_warc

    base = "http://docs.test/"
    path = tmp_path / "site.warc.gz"
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True)
        for url, body in [(base + "index.html", PAGE)] + [(base + n, _leaf(n)) for n in WHERE]:
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
            w.write_record(w.create_warc_record(url, "response", payload=io.BytesIO(body.encode()),
                                                http_headers=http))
    c = load_warc(path, cache=False)
    want = {ln.url.rsplit("/", 1)[-1]: ln.position for ln in extract_page(PAGE.encode(), base + "index.html").links}
    got = _positions_by_target(c, c.page_id(base + "index.html"))
    assert got == {k: want[k] for k in got} and set(got) == set(WHERE)
    assert got["m.html"] == "main" and got["n.html"] == "nav"
    assert c.meta["warc_summary"]["link_positions"]["main"] >= 1


def _site_fetch(base: str):
    """A LiveWeb ``fetch`` serving the test page at ``base + "index.html"`` and one leaf per link position."""
    site = {base + "index.html": PAGE.encode(), **{base + n: _leaf(n).encode() for n in WHERE}}

    def fetch(url):
        body = site.get(url)
        return SimpleNamespace(url=url, final_url=url, status=200 if body else 404, body=body or b"",
                               content_type="text/html", error=None if body else "http-404")
    return fetch


def test_live_web_records_positions_and_its_snapshot_keeps_them():
    from gym_crawl.web.live import LiveWeb

    base = "http://docs.test/"
    fetch = _site_fetch(base)
    web = LiveWeb([base + "index.html"], fetch=fetch, max_pages=50)
    assert fetch_now(web, 0) == ""
    lo, hi = int(web.link_lo[0]), int(web.link_hi[0])
    got = {web.url(int(d)).rsplit("/", 1)[-1]: LINK_POSITIONS[int(k)]
           for d, k in zip(web.link_dst[lo:hi], web.link_position[lo:hi])}
    assert got == WHERE
    snap = web.to_corpus()
    assert _positions_by_target(snap, 0) == WHERE


def test_site_features_one_hot_the_best_links_position(tmp_path):
    c = load_html_folder(_folder(tmp_path))
    env = gym.make("WikiCrawl-v1", corpus=c, topic="geology", features="site", seeds=["Start"], max_candidates=8,
                   max_episode_steps=5)
    env.reset(seed=0)
    base = env.unwrapped
    frontier = np.sort(np.asarray(base.view.frontier_pages(), np.int64))
    x = base.view.features_of(frontier)
    col0 = base.view.feature_names.index("a.pos=nav")
    assert base.view.feature_names[col0:col0 + len(POSITION_COLUMNS)] == [f"a.pos={p}" for p in POSITION_COLUMNS]
    for row, u in zip(x, frontier.tolist()):
        pos = WHERE[c.meta["page_paths"][u]]
        name = "header/footer" if pos in ("header", "footer") else pos
        onehot = row[col0:col0 + len(POSITION_COLUMNS)]
        assert onehot.sum() == 1.0 and onehot[POSITION_COLUMNS.index(name)] == 1.0
    env.close()


def test_site_features_on_a_live_web_read_positions_as_pages_are_fetched():
    from gym_crawl.web.live import LiveWeb

    base = "http://docs.test/"
    fetch = _site_fetch(base)
    web = LiveWeb([base + "index.html"], fetch=fetch, max_pages=50)
    env = gym.make("WikiCrawl-v1", corpus=web, topic="geology", features="crawler+", max_candidates=8,
                   max_episode_steps=4)
    _, info = env.reset(seed=0)
    b = env.unwrapped
    frontier = np.asarray(b.view.frontier_pages(), np.int64)
    x = b.view.features_of(frontier)
    col0 = b.view.feature_names.index("a.pos=nav")
    for row, u in zip(x, frontier.tolist()):
        pos = WHERE[web.url(u).rsplit("/", 1)[-1]]
        name = "header/footer" if pos in ("header", "footer") else pos
        assert row[col0 + POSITION_COLUMNS.index(name)] == 1.0
        assert row[b.view.feature_names.index("a.url_depth")] == pytest.approx(0.1)  # one path segment
    for _ in range(3):
        _, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        assert np.isfinite(b.view.features_of(np.asarray(b.view.frontier_pages(), np.int64))).all()
    env.close()
