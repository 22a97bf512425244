"""MediaWiki dump loader: real samples end to end, wikitext fidelity, generated edge cases,
multistream parallel parsing, the compiled-corpus cache and the Simple English download path."""
from __future__ import annotations

import bz2
import hashlib
import re
from pathlib import Path

import numpy as np
import pytest

from gym_crawl.corpus import CorpusFormatError, load_corpus
from gym_crawl.corpus import mediawiki as mw
from gym_crawl.corpus.core import _ARRAY_SPEC
from gym_crawl.corpus.wikitext import parse_wikitext
from tests.helpers import is_memory_mapped

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "data" / "mediawiki_samples"
LTG = SAMPLES / "ltgwiki-20170901-pages-articles.xml.bz2"
ENWIKI = SAMPLES / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"


def _need(path: Path) -> Path:
    if not path.is_file():
        pytest.skip(f"MediaWiki sample {path.name} not found under {SAMPLES} (see shared/data/mediawiki_samples)")
    return path


@pytest.fixture(scope="module")
def ltg():
    return mw.compile_mediawiki_dump(_need(LTG), progress=False)


@pytest.fixture(scope="module")
def enwiki():
    return mw.compile_mediawiki_dump(_need(ENWIKI), progress=False)


def _outlinks(c, title):
    """``{target title: anchor words}`` of a page."""
    vocab = c.vocab.tolist()
    a, b = c.outlinks(c.page_id(title))
    return {c.titles[int(c.link_dst[e])]: [vocab[int(t)] for t in c.anchor_terms[c.anchor_ptr[e]:c.anchor_ptr[e + 1]]]
            for e in range(a, b)}


def _raw_page_text(path: Path, title: str) -> str:
    with bz2.open(path) as fh:
        xml = fh.read().decode("utf-8")
    i = xml.index(f"<title>{title}</title>")
    m = re.search(r"<text[^>]*>(.*?)</text>", xml[i:], flags=re.S)
    import html

    return html.unescape(m.group(1))


def _assert_clean(texts):
    for t in texts:
        for bad in ("{{", "}}", "<ref", "{|", "[[", "]]", "<!--"):
            assert bad not in t, (bad, t[max(0, t.find(bad) - 60):t.find(bad) + 60])


# ---------------------------------------------------------------- ltgwiki

def test_ltgwiki_pages_redirects_and_links(ltg):
    s = ltg.meta["compile_stats"]
    # SOURCE.md: 2,004 pages; ns 0: 1,050 pages of which 147 redirects -> 903 articles
    assert s["pages_seen"] == 2004 and s["ns_0"] == 1050
    assert s["redirect_pages"] == 147
    assert ltg.n_pages == 903 and s["pages"] == 903
    assert s.get("empty_text", 0) == 0 and s.get("duplicate_titles", 0) == 0 and s.get("unknown_namespace", 0) == 0
    assert s["redirects_resolved"] + s["broken_redirects"] + s.get("redirect_loops", 0) == 147
    # every parsed link is accounted for exactly once
    assert s["links_parsed"] == (s["links_resolved"] + s["red_links"] + s["duplicate_links"] + s["self_links"]
                                 + s["links_to_broken_redirects"] + s["links_to_redirect_loops"])
    assert s["links_resolved"] == ltg.n_links
    # SOURCE.md counts ~8,100 raw [[links]] (3,250 resolving) over all ns-0 pages incl. templates/tables;
    # prose links only, deduplicated per page, resolve fewer (see the module report)
    assert 1700 <= ltg.n_links <= 2300 and 2800 <= s["red_links"] <= 3500
    assert s["links_via_redirect"] > 0
    src = ltg.link_src()
    assert not np.any(src == ltg.link_dst)  # no self links
    pairs = src.astype(np.int64) * ltg.n_pages + ltg.link_dst
    assert len(np.unique(pairs)) == len(pairs)  # no repeated links
    assert ltg.domains.tolist() == ["ltg.wikipedia.org"]
    assert "ltg.wikipedia.org" in ltg.meta["domain_definition"]


def test_ltgwiki_redirects_resolve_to_targets(ltg):
    # raw XML: 'Bolvi' links [[Rēzekne]], a redirect to 'Rēzne'; 'Antons Rupainis' links [[ASV]]
    assert "Rēzekne" not in ltg.titles and "ASV" not in ltg.titles
    assert "Rēzne" in _outlinks(ltg, "Bolvi")
    assert _outlinks(ltg, "Antons Rupainis")["Amerikys Saškierstuos Vaļsteibys"] == ["asv"]


def test_ltgwiki_categories_disambiguation_and_text(ltg):
    assert "category.Latgola" in ltg.page_labels(ltg.page_id("Latgola"))
    assert _outlinks(ltg, "Latgola")["Latgolys doba"] == ["latgolys", "doba"]
    # {{Zeimeibu škiršona}} emits __DISAMBIG__ (found in the template namespace of the dump)
    assert "Zeimeibu škiršona" in ltg.meta["disambiguation_templates"]
    assert "disambiguation" in ltg.page_labels(ltg.page_id("Rēzne (zeimeibu škiršona)"))
    assert sum(lab.startswith("category.") for lab in ltg.labels) > 100
    _assert_clean(ltg.texts)


# ----------------------------------------------------------------- enwiki

def test_enwiki_counts_and_clean_text(enwiki):
    s = enwiki.meta["compile_stats"]
    assert s["pages_seen"] == 206 and s["ns_0"] == 205 and s["redirect_pages"] == 99
    assert enwiki.n_pages == 106
    assert "AccessibleComputing" not in enwiki.titles  # a redirect, not a page
    assert enwiki.domains.tolist() == ["en.wikipedia.org"]
    _assert_clean(enwiki.texts)


def test_enwiki_link_fidelity():
    site = mw.SiteInfo(namespaces={0: "", 6: "File", 10: "Template", 14: "Category"}).site((0,))
    anarchism = parse_wikitext(_raw_page_text(_need(ENWIKI), "Anarchism"), site)
    pairs = {(t, anarchism.text[a:b]) for t, a, b in anarchism.links}
    # [[political philosophy]], [[Free association (communism and anarchism)|free associations]],
    # [[agriculture|agrarian]] (first letter case-insensitive)
    assert ("Political philosophy", "political philosophy") in pairs
    assert ("Free association (communism and anarchism)", "free associations") in pairs
    assert ("Agriculture", "agrarian") in pairs
    assert anarchism.categories[:4] == ["Anarchism", "Political culture", "Political ideologies", "Social theories"]
    albedo = parse_wikitext(_raw_page_text(ENWIKI, "Albedo"), site)
    pairs = {(t, albedo.text[a:b]) for t, a, b in albedo.links}
    assert ("Planet", "planets") in pairs  # [[planet]]s: link trail joins the anchor
    assert ("Terra (satellite)", "Terra") in pairs
    assert ("Photovoltaic system", "photovoltaic devices") in pairs  # [[photovoltaic system|photovoltaic device]]s
    assert "Climatology" in albedo.categories
    autism = parse_wikitext(_raw_page_text(ENWIKI, "Autism"), site)
    pairs = {(t, autism.text[a:b]) for t, a, b in autism.links}
    assert ("Echolalia", "echolalic") in pairs and ("Nerve cell", "nerve cells") in pairs
    assert set(autism.categories) >= {"Autism", "Communication disorders", "Pervasive developmental disorders"}
    for p in (anarchism, albedo, autism):
        _assert_clean([p.text])
        assert "Category:" not in p.text and "thumb|" not in p.text


def test_enwiki_corpus_links_and_labels(enwiki):
    assert _outlinks(enwiki, "Anarchism")["Agriculture"] == ["agrarian"]
    labels = set(enwiki.page_labels(enwiki.page_id("Anarchism")))
    assert {"category.Anarchism", "category.Political ideologies"} <= labels
    assert "category.Climatology" in enwiki.page_labels(enwiki.page_id("Albedo"))
    assert "disambiguation" in enwiki.page_labels(enwiki.page_id("Austin (disambiguation)"))
    assert "disambiguation" not in enwiki.page_labels(enwiki.page_id("Autism"))


def test_enwiki_redirect_accessiblecomputing(tmp_path):
    """AccessibleComputing → Computer accessibility: the target is not in the shortened sample,
    so add it (and a page linking to the redirect) to the real redirect page."""
    with bz2.open(_need(ENWIKI)) as fh:
        xml = fh.read().decode("utf-8")
    head = xml[: xml.index("<page>")]
    i = xml.index("<title>AccessibleComputing</title>")
    redirect_page = xml[xml.rindex("<page>", 0, i): xml.index("</page>", i) + len("</page>")]
    body = redirect_page + _page("Computer accessibility", "Making computers usable.", pid=900) \
        + _page("Reader", "See [[AccessibleComputing|accessible computing]] and [[Accessible computing]].", pid=901)
    path = tmp_path / "en.xml"
    path.write_text(head + body + "</mediawiki>\n", encoding="utf-8")
    c = mw.compile_mediawiki_dump(path, progress=False)
    assert c.titles.tolist() == ["Computer accessibility", "Reader"]
    assert _outlinks(c, "Reader") == {"Computer accessibility": ["accessible", "computing"]}
    s = c.meta["compile_stats"]
    assert s["redirect_pages"] == 1 and s["redirects_resolved"] == 1 and s["links_via_redirect"] == 1
    assert s["red_links"] == 1  # [[Accessible computing]] exists on enwiki but not in this file


# ------------------------------------------------------- generated dumps

SITEINFO = """  <siteinfo>
    <sitename>Testwiki</sitename>
    <dbname>testwiki</dbname>
    <base>https://test.wikipedia.org/wiki/Main_Page</base>
    <generator>MediaWiki 1.30</generator>
    <case>first-letter</case>
    <namespaces>
      <namespace key="0" case="first-letter" />
      <namespace key="6" case="first-letter">File</namespace>
      <namespace key="10" case="first-letter">Template</namespace>
      <namespace key="14" case="first-letter">Category</namespace>
    </namespaces>
  </siteinfo>
"""


def _page(title, text=None, *, ns=0, pid=1, redirect=None):
    from xml.sax.saxutils import escape, quoteattr

    red = f"    <redirect title={quoteattr(redirect)} />\n" if redirect else ""
    txt = "      <text xml:space=\"preserve\" />\n" if text is None else \
        f"      <text xml:space=\"preserve\">{escape(text)}</text>\n"
    return (f"  <page>\n    <title>{escape(title)}</title>\n    <ns>{ns}</ns>\n    <id>{pid}</id>\n{red}"
            f"    <revision>\n      <id>{pid}</id>\n{txt}    </revision>\n  </page>\n")


def _dump(path: Path, pages: str, compress: bool = True) -> Path:
    xml = ('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10">\n'
           + SITEINFO + pages + "</mediawiki>\n").encode("utf-8")
    path.write_bytes(bz2.compress(xml) if compress else xml)
    return path


EDGE_PAGES = "".join([
    _page("Alpha", "'''Alpha''' links [[beta]], [[Beta_page#History|the beta]] and [[bus]]es, "
                   "[[Gamma|gamma]] twice: [[gamma]]. Self: [[Alpha]], [[#Top|top]]. Red: [[Nowhere]]. "
                   "{{Infobox|x=[[Beta page]]}} <ref>[[Beta page]] cited</ref><!-- [[Gamma]] -->\n"
                   "{| class=wikitable\n| [[Gamma]]\n|}\n[[File:X.jpg|thumb|a [[Beta page]] caption]] "
                   "[[de:Alpha]] [[wikt:alpha|alpha word]] [[Category:Letters]] [[Category:Greek_letters|A]]", pid=1),
    _page("Beta page", "Beta text about [[Alpha]].", pid=2),
    _page("Beta", redirect="Beta page", text="#REDIRECT [[Beta page]]", pid=3),
    _page("Gamma", "Gamma text.", pid=4),
    _page("Bus", "A bus. [[Loop one]] [[Double]] [[Broken]]", pid=5),
    _page("Empty", None, pid=6),
    _page("Blank", "   \n", pid=7),
    _page("Gamma", "Second Gamma page, dropped.", pid=8),
    _page("Elsewhere", "A page in an undeclared namespace.", ns=999, pid=9),
    _page("Loop one", redirect="Loop two", text="#REDIRECT [[Loop two]]", pid=10),
    _page("Loop two", redirect="Loop one", text="#REDIRECT [[Loop one]]", pid=11),
    _page("Double", redirect="Single", text="#REDIRECT [[Single]]", pid=12),
    _page("Single", redirect="Gamma", text="#REDIRECT [[Gamma]]", pid=13),
    _page("Broken", redirect="Not here", text="#REDIRECT [[Not here]]", pid=14),
    _page("Template:Dab", "{{#if:x|__DISAMBIG__}}", ns=10, pid=15),
    _page("Template:Disambig-alias", redirect="Template:Dab", text="#REDIRECT [[Template:Dab]]", ns=10, pid=16),
    _page("Delta", "Delta may mean [[Alpha]] or [[Gamma]].\n{{disambig-alias}}", pid=17),
    _page("Category:Letters", "Letters.", ns=14, pid=18),
])


@pytest.fixture(scope="module")
def edge(tmp_path_factory):
    path = _dump(tmp_path_factory.mktemp("edge") / "testwiki-pages-articles.xml.bz2", EDGE_PAGES)
    return mw.compile_mediawiki_dump(path, progress=False)


def test_generated_links_anchors_and_text(edge):
    out = _outlinks(edge, "Alpha")
    # [[beta]] -> redirect Beta -> Beta page; [[Beta_page#History|the beta]] is the same target: kept once
    assert out == {"Beta page": ["beta"], "Bus": ["buses"], "Gamma": ["gamma"]}
    text = edge.texts[edge.page_id("Alpha")]
    assert "buses" in text and "alpha word" in text and "Infobox" not in text and "cited" not in text
    assert "caption" not in text and "de:Alpha" not in text and "Letters" not in text
    _assert_clean(edge.texts)
    assert set(edge.page_labels(edge.page_id("Alpha"))) == {"category.Letters", "category.Greek letters"}
    a, _ = edge.outlinks(edge.page_id("Alpha"))
    vocab = edge.vocab.tolist()
    ctx = [vocab[int(t)] for t in edge.context_terms[edge.context_ptr[a]:edge.context_ptr[a + 1]]]
    assert "links" in ctx and "beta" not in ctx[:1]  # window around the anchor, anchor excluded
    s = edge.meta["compile_stats"]
    assert s["self_links"] == 2 and s["red_links"] >= 1 and s["duplicate_links"] >= 2
    assert s["links_interwiki"] == 2 and s["links_file"] == 1 and s["links_category"] == 2


def test_generated_page_without_text(edge):
    assert "Empty" not in edge.titles and "Blank" not in edge.titles
    assert edge.meta["compile_stats"]["empty_text"] == 2
    assert "'Empty' (id 6)" in edge.meta["compile_examples"]["empty_text"]


def test_generated_duplicate_titles_keep_first(edge):
    assert edge.titles.tolist().count("Gamma") == 1
    assert edge.texts[edge.page_id("Gamma")] == "Gamma text."
    assert edge.meta["compile_stats"]["duplicate_titles"] == 1


def test_generated_unknown_namespace(edge):
    assert "Elsewhere" not in edge.titles
    assert edge.meta["compile_stats"]["unknown_namespace"] == 1


def test_generated_redirect_loop_and_double_redirect(edge):
    s = edge.meta["compile_stats"]
    assert s["redirect_loops"] == 2 and s["links_to_redirect_loops"] == 1
    assert s["double_redirects"] == 1  # Double -> Single -> Gamma
    assert s["broken_redirects"] == 1 and s["links_to_broken_redirects"] == 1
    assert set(_outlinks(edge, "Bus")) == {"Gamma"}
    assert edge.titles.tolist() == ["Alpha", "Beta page", "Gamma", "Bus", "Delta"]


def test_generated_disambiguation_via_template_redirect(edge):
    assert "disambiguation" in edge.page_labels(edge.page_id("Delta"))
    assert "disambiguation" not in edge.page_labels(edge.page_id("Alpha"))
    assert {"Dab", "Disambig-alias"} <= set(edge.meta["disambiguation_templates"])


def test_truncated_bz2_is_a_format_error(tmp_path):
    full = _dump(tmp_path / "full.xml.bz2", EDGE_PAGES * 3).read_bytes()
    cut = tmp_path / "cut-pages-articles.xml.bz2"
    cut.write_bytes(full[: len(full) // 2])
    with pytest.raises(CorpusFormatError, match=r"cut-pages-articles\.xml\.bz2.*truncated"):
        mw.compile_mediawiki_dump(cut, progress=False)
    real = tmp_path / "ltg-cut.xml.bz2"
    real.write_bytes(_need(LTG).read_bytes()[:300_000])
    with pytest.raises(CorpusFormatError, match=r"truncated.*last good element: page"):
        mw.compile_mediawiki_dump(real, progress=False)


def test_malformed_xml_is_a_format_error(tmp_path):
    bad = _page("Good", "fine", pid=1) + "  <page><title>Bad & worse</title><ns>0</ns></page>\n"
    for compress in (False, True):
        path = _dump(tmp_path / f"bad{int(compress)}.xml{'.bz2' if compress else ''}", bad, compress)
        with pytest.raises(CorpusFormatError, match=r"malformed XML at line \d+.*page 'Good'"):
            mw.compile_mediawiki_dump(path, progress=False)
    unclosed = tmp_path / "unclosed.xml"
    unclosed.write_text('<mediawiki>\n' + SITEINFO + _page("Good", "fine"), encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="unclosed.xml"):
        mw.compile_mediawiki_dump(unclosed, progress=False)


# ------------------------------------------------------------ multistream

def make_multistream(src: Path, dest_dir: Path, per_stream: int = 100, date: str = "20170901",
                     wiki: str = "ltgwiki") -> tuple[Path, Path]:
    """Re-pack a dump as a multistream dump: a header stream, then one bz2 stream per
    ``per_stream`` pages, then a closing stream; plus the ``offset:page_id:title`` index."""
    with bz2.open(src) as fh:
        xml = fh.read().decode("utf-8")
    head_end = xml.index("</siteinfo>") + len("</siteinfo>\n")
    body = xml[head_end:]
    pages = re.findall(r"  <page>.*?</page>\n", body, flags=re.S)
    tail = body[body.rindex("</page>\n") + len("</page>\n"):]
    dest_dir.mkdir(parents=True, exist_ok=True)
    dump = dest_dir / f"{wiki}-{date}-pages-articles-multistream.xml.bz2"
    index = dest_dir / f"{wiki}-{date}-pages-articles-multistream-index.txt.bz2"
    out = bytearray(bz2.compress(xml[:head_end].encode("utf-8")))
    lines = []
    for i in range(0, len(pages), per_stream):
        off = len(out)
        for p in pages[i:i + per_stream]:
            pid = re.search(r"<id>(\d+)</id>", p).group(1)
            title = re.search(r"<title>(.*?)</title>", p).group(1)
            lines.append(f"{off}:{pid}:{title}")
        out += bz2.compress("".join(pages[i:i + per_stream]).encode("utf-8"))
    out += bz2.compress(tail.encode("utf-8"))
    dump.write_bytes(bytes(out))
    index.write_bytes(bz2.compress(("\n".join(lines) + "\n").encode("utf-8")))
    return dump, index


@pytest.fixture(scope="module")
def multistream(tmp_path_factory):
    return make_multistream(_need(LTG), tmp_path_factory.mktemp("ms"))


def _assert_same_corpus(a, b):
    for name in _ARRAY_SPEC:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    for name in ("titles", "vocab", "labels", "domains", "texts"):
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name
    assert a.meta["compile_stats"] == b.meta["compile_stats"]


def test_multistream_parallel_equals_serial(multistream, ltg):
    dump, index = multistream
    assert mw.find_multistream_index(dump) == index
    serial = mw.compile_mediawiki_dump(dump, progress=False, workers=1)
    parallel = mw.compile_mediawiki_dump(dump, progress=False, workers=2)
    assert parallel.meta["compile_info"]["workers"] == 2 and parallel.meta["compile_info"]["chunks"] > 2
    _assert_same_corpus(serial, parallel)
    _assert_same_corpus(serial, ltg)  # re-packing changes nothing


def test_multistream_index_mismatch(multistream, tmp_path):
    dump, _ = multistream
    bad = tmp_path / "bad-index.txt"
    bad.write_text("1234:1:Nope\n5678:2:Nope either\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="not the start of a bz2 stream"):
        mw.compile_mediawiki_dump(dump, progress=False, workers=2, index=bad)
    garbage = tmp_path / "garbage-index.txt"
    garbage.write_text("not an index\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="offset:page_id:title"):
        mw.compile_mediawiki_dump(dump, progress=False, workers=2, index=garbage)


# ------------------------------------------------------------------ cache

def test_cache_roundtrip_and_interrupted_compile(tmp_path, monkeypatch):
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path / "data"))
    path = _dump(tmp_path / "testwiki-pages-articles.xml.bz2", EDGE_PAGES)
    cdir = mw.compiled_cache_dir(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert cdir.name == f"testwiki-pages-articles-{digest[:16]}-v{mw.LOADER_VERSION}"

    def boom(*a, **k):
        raise RuntimeError("simulated crash during compile")

    with monkeypatch.context() as m:
        m.setattr(mw, "assemble_corpus", boom)
        with pytest.raises(RuntimeError, match="simulated crash"):
            mw.load_mediawiki_dump(path, progress=False)
    assert not cdir.exists()
    calls = {"n": 0}
    import gym_crawl.corpus.core as core

    real_save = core.save_npy

    def flaky_save(p, arr):
        calls["n"] += 1
        if calls["n"] == 5:
            raise OSError("simulated disk full while saving")
        real_save(p, arr)

    with monkeypatch.context() as m:
        m.setattr(core, "save_npy", flaky_save)
        # a cache that cannot be written does not fail the load: one warning, the corpus stays in memory
        with pytest.warns(UserWarning, match="disk full.*in memory"):
            mem = mw.load_mediawiki_dump(path, progress=False)
    assert mem.path is None and mem.n_pages > 0
    assert not cdir.exists()
    assert not [p for p in cdir.parent.iterdir() if p.name.startswith(".")]  # no partial directories left
    first = mw.load_mediawiki_dump(path, progress=False)
    assert first.path == cdir and (cdir / "manifest.json").is_file()
    with monkeypatch.context() as m:
        m.setattr(mw, "compile_mediawiki_dump", boom)  # a cache hit must not recompile
        again = mw.load_mediawiki_dump(path, progress=False)
    assert again.path == cdir and is_memory_mapped(again.link_dst) and is_memory_mapped(again.context_terms)
    assert again.titles.tolist() == first.titles.tolist()
    assert again.meta["compile_stats"] == first.meta["compile_stats"]
    assert load_corpus(str(path), progress=False).path == cdir  # the generic entry point


# ------------------------------------------------------------- simplewiki

SHA1SUMS = """\
0f4e2b2b8e0c6f7e1b5c4a1d2e3f405162738495  simplewiki-20240601-pages-articles-multistream.xml.bz2
1111111111111111111111111111111111111111  simplewiki-20240601-pages-articles-multistream-index.txt.bz2
2222222222222222222222222222222222222222  simplewiki-20240601-pages-articles.xml.bz2
"""


def test_simplewiki_urls_and_checksums():
    u = mw.simplewiki_urls("20240601")
    base = "https://dumps.wikimedia.org/simplewiki/20240601/simplewiki-20240601-"
    assert u == {"dump": base + "pages-articles-multistream.xml.bz2",
                 "index": base + "pages-articles-multistream-index.txt.bz2", "sha1sums": base + "sha1sums.txt"}
    assert mw.simplewiki_urls()["dump"].endswith("/latest/simplewiki-latest-pages-articles-multistream.xml.bz2")
    with pytest.raises(ValueError, match="YYYYMMDD"):
        mw.simplewiki_urls("2024-06-01")
    assert mw.parse_checksums(SHA1SUMS, "simplewiki-20240601-pages-articles-multistream.xml.bz2") \
        == "0f4e2b2b8e0c6f7e1b5c4a1d2e3f405162738495"
    assert mw.parse_checksums(SHA1SUMS, "simplewiki-latest-pages-articles-multistream-index.txt.bz2") == "1" * 40
    with pytest.raises(KeyError, match="pages-meta-history"):
        mw.parse_checksums(SHA1SUMS, "simplewiki-20240601-pages-meta-history.xml.bz2")


def test_load_corpus_simplewiki_dispatch(monkeypatch):
    seen = {}
    monkeypatch.setattr(mw, "load_simplewiki", lambda **kw: seen.setdefault("kw", kw) or "corpus")
    load_corpus("simplewiki", progress=False)
    assert seen["kw"] == {"progress": False}


def test_simplewiki_download_offline_mirror(tmp_path, monkeypatch, multistream):
    """The whole download → verify → compile path against a file:// mirror (no network here)."""
    date = "20990101"
    mirror = tmp_path / "mirror"
    dump, index = make_multistream(_need(LTG), mirror / date, date=date, wiki="simplewiki")
    sums = "".join(f"{hashlib.sha1(p.read_bytes()).hexdigest()}  {p.name}\n" for p in (dump, index))
    (mirror / date / f"simplewiki-{date}-sha1sums.txt").write_text(sums, encoding="utf-8")
    from gym_crawl.corpus import mediawiki_download

    monkeypatch.setattr(mediawiki_download, "SIMPLEWIKI_BASE", mirror.as_uri())  # the download stage reads it
    corpus = mw.load_simplewiki(date, dest_dir=tmp_path / "dl", cache=False, workers=2, progress=False)
    assert corpus.n_pages == 903
    assert (tmp_path / "dl" / dump.name).is_file() and (tmp_path / "dl" / index.name).is_file()
    (mirror / date / f"simplewiki-{date}-sha1sums.txt").write_text(sums.replace(sums[:40], "0" * 40), encoding="utf-8")
    from gym_crawl.corpus.download import ChecksumError

    with pytest.raises(ChecksumError):  # a dump that does not match its published SHA-1 is refused
        mw.download_simplewiki(date, tmp_path / "dl2", progress=False)
    assert not (tmp_path / "dl2" / dump.name).exists()
    # latest/: files named simplewiki-latest-*, checksum listing naming the dated files
    latest = mirror / "latest"
    latest.mkdir()
    for p in (dump, index):
        (latest / p.name.replace(date, "latest")).write_bytes(p.read_bytes())
    (latest / "simplewiki-latest-sha1sums.txt").write_text(sums, encoding="utf-8")
    got = mw.download_simplewiki("latest", tmp_path / "dl3", progress=False)
    assert got["dump"].name == "simplewiki-latest-pages-articles-multistream.xml.bz2"
    (latest / "simplewiki-latest-sha1sums.txt").unlink()  # offline / mirror gone: the local listing is used
    assert mw.download_simplewiki("latest", tmp_path / "dl3", progress=False) == got


# -------------------------------------------------------------- wikitext

def test_wikitext_nesting_and_markup():
    p = parse_wikitext("A {{outer|{{inner|[[X]]}}|y}} b <!-- c -->\n{|\n| {{t}} [[Y]]\n{|\n|z\n|}\n|}\n"
                       "d <ref name=a/> e<ref>f {{cite}}</ref> [[Z|zz]]'''s''' [http://e.org ext] "
                       "<nowiki>[[lit]]</nowiki> [[:Category:C|cat page]] == H ==\n* item [[W (disambig)|]]")
    assert [(t, p.text[a:b]) for t, a, b in p.links] == [("Z", "zz"), ("W (disambig)", "W")]
    assert "inner" not in p.text and "c" not in p.text.split() and "f" not in p.text.split()
    assert "ext" in p.text and "[[lit]]" in p.text and "cat page" in p.text and "item" in p.text
    assert "Y" not in p.text and "z" not in p.text.split()  # nested tables removed
    assert p.templates == ["Outer"]
    unclosed = parse_wikitext("before {{broken [[Q]] after")
    assert "after" in unclosed.text and [t for t, _, _ in unclosed.links] == ["Q"]


# ---------------------------------------------------------------- the env

def test_env_crawls_ltgwiki(tmp_path, monkeypatch):
    import gymnasium as gym

    import gym_crawl  # noqa: F401  (registers WikiCrawl-v0)

    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path))
    env = gym.make("WikiCrawl-v0", corpus=str(_need(LTG)), topic="latgola", seeds=["Latgola"],
                   max_episode_steps=150)
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    fetched = 0
    for _ in range(300):
        mask = env.unwrapped.action_masks()
        action = int(rng.choice(np.flatnonzero(mask))) if mask.any() else 0
        obs, reward, terminated, truncated, info = env.step(action)
        fetched += info["fetched_page"] >= 0
        assert env.observation_space.contains(obs)
        if terminated or truncated:
            obs, info = env.reset()
    assert fetched > 100
    env.close()


def test_han2018_topic_pages_become_default_topics(tmp_path):
    path = _dump(tmp_path / "t.xml", _page("Geology", "Rocks and [[Poetry|poems]].", pid=1)
                 + _page("Poetry", "Verse.", pid=2), compress=False)
    c = mw.compile_mediawiki_dump(path, progress=False)
    assert c.meta["topics"] == {"geology": {"seeds": ["Geology"]}, "poetry": {"seeds": ["Poetry"]}}
