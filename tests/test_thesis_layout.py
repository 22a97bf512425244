"""The thesis' ``xml/<title>.xml + index.txt + links.txt`` layout: formats, normalization,
the random partition, round trips, and reading a layout written the thesis' way."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from gym_crawl.corpus import CorpusBuilder, CorpusFormatError, load_corpus
from gym_crawl.corpus.thesis_layout import load_thesis_layout, thesis_filename, write_thesis_layout

LTG = Path(__file__).resolve().parents[2] / "shared" / "data" / "mediawiki_samples" \
    / "ltgwiki-20170901-pages-articles.xml.bz2"


def _bags(c):
    vocab = c.vocab.tolist()
    return [dict(zip((vocab[int(t)] for t in c.text_terms[c.text_ptr[i]:c.text_ptr[i + 1]]),
                     c.text_counts[c.text_ptr[i]:c.text_ptr[i + 1]].tolist())) for i in range(c.n_pages)]


def _edges(c):
    return list(zip(c.link_src().tolist(), c.link_dst.tolist()))


@pytest.fixture()
def small():
    """Five pages; links with a repeat and a self link; labels; text kept."""
    b = CorpusBuilder(name="small", keep_text=True)
    texts = ["Alpha mentions beta and gamma.", "Beta: see alpha.", "Gamma about AC/DC", "Delta is alone.",
             "Epsilon points at delta and alpha."]
    for t, x in zip(["Alpha", "Beta", "AC/DC", "Delta", ".hidden"], texts):
        b.add_page(t, x, domain="simple.wikipedia.org", labels=["category.Letters"] if t != "Delta" else [])
    for s, d in [(0, 1), (0, 2), (0, 1), (1, 0), (2, 2), (4, 3), (4, 0)]:
        b.add_link(s, d, anchor="x", context="y")
    return b.build()


def test_file_formats(small, tmp_path):
    out = write_thesis_layout(small, tmp_path / "dump")
    assert (out / "index.txt").read_text(encoding="utf-8").splitlines() == \
        ["0\tAlpha", "1\tBeta", "2\tAC/DC", "3\tDelta", "4\t.hidden"]
    assert (out / "links.txt").read_text().splitlines()[:3] == ["0\t1", "0\t2", "0\t1"]
    names = sorted(p.name for p in (out / "xml").iterdir())
    assert names == sorted(["Alpha.xml", "Beta.xml", "AC%2FDC.xml", "Delta.xml", "%2Ehidden.xml"])
    root = ET.parse(out / "xml" / "AC%2FDC.xml").getroot()
    assert root.tag == "page" and [c.tag for c in root] == ["id", "title", "text"]
    fields = (root.find("id").text, root.find("title").text, root.find("text").text)
    assert fields == ("2", "AC/DC", "Gamma about AC/DC")
    layout = json.loads((out / "layout.json").read_text())
    assert layout["domain"] == "simple.wikipedia.org" and layout["normalized"] is False
    long = "L" * 300
    assert len(thesis_filename(long).encode()) <= 255 and thesis_filename(long) != thesis_filename(long + "x")


def test_roundtrip_unnormalized(small, tmp_path):
    back = load_thesis_layout(write_thesis_layout(small, tmp_path / "dump"))
    assert back.titles.tolist() == small.titles.tolist()
    # the thesis' loader drops self links and keeps repeats: so do we
    assert _edges(back) == [e for e in _edges(small) if e[0] != e[1]]
    assert back.meta["compile_stats"]["self_links"] == 1
    assert _bags(back) == _bags(small) and back.texts.tolist() == small.texts.tolist()
    assert [back.page_labels(i) for i in range(5)] == [small.page_labels(i) for i in range(5)]
    assert back.domains.tolist() == ["simple.wikipedia.org"]
    # the layout has no anchors: the anchor is the target title's first occurrence in the source text
    vocab = back.vocab.tolist()
    a, _ = back.outlinks(0)
    assert [vocab[int(t)] for t in back.anchor_terms[back.anchor_ptr[a]:back.anchor_ptr[a + 1]]] == ["beta"]
    assert back.meta["compile_stats"]["links_anchor_found_in_text"] >= 4


def test_normalized(small, tmp_path):
    out = write_thesis_layout(small, tmp_path / "norm", normalized=True)
    lines = (out / "links.txt").read_text().splitlines()
    assert lines == ["0\t1", "0\t2", "1\t0", "4\t3", "4\t0"]  # no repeat, no self link, order kept
    stats = json.loads((out / "layout.json").read_text())["thesis_stats"]
    # Table 4.1's "links per page" divides by pages that have out-links (DumpLinks.get_avg_links_per_page)
    assert stats == {"pages": 5, "links": 5, "pages_with_outlinks": 3, "links_per_page": 1.67,
                     "links_per_page_all": 1.0}


def test_partition(tmp_path):
    if not LTG.is_file():
        pytest.skip(f"ltgwiki sample not found at {LTG}")
    from gym_crawl.corpus.mediawiki import compile_mediawiki_dump

    c = compile_mediawiki_dump(LTG, progress=False)
    out = write_thesis_layout(c, tmp_path / "p", normalized=True, partition=0.1, seed=3)
    ids = [int(line.split("\t")[0]) for line in (out / "index.txt").read_text(encoding="utf-8").splitlines()]
    assert ids == list(range(round(0.1 * c.n_pages)))
    titles = [line.split("\t", 1)[1] for line in (out / "index.txt").read_text(encoding="utf-8").splitlines()]
    assert [c.page_id(t) for t in titles] == sorted(c.page_id(t) for t in titles)  # corpus order kept
    links = np.loadtxt(out / "links.txt", dtype=np.int64, ndmin=2)
    assert links.min() >= 0 and links.max() < len(ids) and not np.any(links[:, 0] == links[:, 1])
    # every link of the corpus between two drawn pages is written, and nothing else
    chosen = {c.page_id(t): i for i, t in enumerate(titles)}
    expect = {(chosen[s], chosen[d]) for s, d in _edges(c) if s in chosen and d in chosen}
    assert set(map(tuple, links.tolist())) == expect
    again = write_thesis_layout(c, tmp_path / "p2", normalized=True, partition=0.1, seed=3)
    other = write_thesis_layout(c, tmp_path / "p3", normalized=True, partition=0.1, seed=4)
    assert (again / "index.txt").read_text() == (out / "index.txt").read_text()
    assert (other / "index.txt").read_text() != (out / "index.txt").read_text()
    back = load_thesis_layout(out)
    assert back.n_pages == len(ids) and back.n_links == len(links)
    with pytest.raises(ValueError, match="partition"):
        write_thesis_layout(c, tmp_path / "bad", partition=1.5)


def test_roundtrip_ltgwiki_and_load_corpus(tmp_path):
    if not LTG.is_file():
        pytest.skip(f"ltgwiki sample not found at {LTG}")
    from gym_crawl.corpus.mediawiki import compile_mediawiki_dump

    c = compile_mediawiki_dump(LTG, progress=False)
    out = write_thesis_layout(c, tmp_path / "ltg")
    assert len(list((out / "xml").iterdir())) == c.n_pages
    back = load_corpus(str(out))  # index.txt + links.txt: dispatched to load_thesis_layout
    assert back.titles.tolist() == c.titles.tolist()
    assert _edges(back) == _edges(c)
    assert _bags(back) == _bags(c)
    assert "disambiguation" in back.page_labels(back.page_id("Rēzne (zeimeibu škiršona)"))


def test_without_kept_text_writes_bag_of_words(small, tmp_path):
    small.texts = None
    back = load_thesis_layout(write_thesis_layout(small, tmp_path / "bag"))
    assert _bags(back) == _bags(small)


def test_reads_a_layout_written_the_thesis_way(tmp_path):
    """Files named ``<id>.xml`` (the appendix's code), raw wikitext, ``links_n.txt``, no layout.json."""
    d = tmp_path / "thesis"
    (d / "xml").mkdir(parents=True)
    pages = {0: ("Cancer", "'''Cancer''' is a [[disease]]. See [[Tumor|tumours]]. {{Infobox|x=1}}"),
             1: ("Disease", "A disease."), 2: ("Tumor", "A tumor grows.")}
    for i, (t, x) in pages.items():
        (d / "xml" / f"{i}.xml").write_text(f"<page>\n<id>{i}</id>\n<title>{t}</title>\n<text>{x}</text>\n</page>\n",
                                            encoding="utf-8")
    (d / "index.txt").write_text("0\tCancer\n1\tDisease\n2\tTumor\n", encoding="utf-8")
    (d / "links_n.txt").write_text("0\t1\n0\t2\n0\t0\n0\t7\n", encoding="utf-8")
    c = load_thesis_layout(d)
    assert c.titles.tolist() == ["Cancer", "Disease", "Tumor"]
    assert _edges(c) == [(0, 1), (0, 2)]
    assert c.texts[0] == "Cancer is a disease. See tumours."
    vocab = c.vocab.tolist()
    assert [vocab[int(t)] for t in c.anchor_terms[c.anchor_ptr[1]:c.anchor_ptr[2]]] == ["tumours"]
    s = c.meta["compile_stats"]
    assert s["links_unknown_page"] == 1 and s["self_links"] == 1


def test_format_errors(tmp_path):
    with pytest.raises(CorpusFormatError, match="missing index.txt"):
        load_thesis_layout(tmp_path)
    (tmp_path / "xml").mkdir()
    (tmp_path / "index.txt").write_text("0\tA\n1\tA\n", encoding="utf-8")
    (tmp_path / "links.txt").write_text("0\t1\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="'A' appears twice"):
        load_thesis_layout(tmp_path)
    (tmp_path / "index.txt").write_text("0\tA\n1\tB\n", encoding="utf-8")
    (tmp_path / "links.txt").write_text("0 1 2\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="line 1"):
        load_thesis_layout(tmp_path)
