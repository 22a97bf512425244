"""Tests for the Wikispeedia loader: the real data (when present) and small generated fixtures."""
from __future__ import annotations

import io
import tarfile
import time
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest

from gym_crawl.corpus import CorpusFormatError, load_corpus
from gym_crawl.corpus.wikispeedia import TOPICS, clean_article, find_mention, load_wikispeedia
from gym_crawl.tokenize import tokenize
from tests.helpers import is_memory_mapped

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikispeedia"
HAVE_SHARED = all((SHARED / f).is_file() for f in
                  ("articles.tsv", "links.tsv", "categories.tsv", "plaintext_articles.tar.xz"))
ARRAYS = ("text_ptr", "text_terms", "text_counts", "title_ptr", "title_terms", "link_ptr", "link_dst",
          "anchor_ptr", "anchor_terms", "context_ptr", "context_terms", "page_domain", "label_ptr", "label_ids")

# fake data produce fingerprint / topic-label warnings by design
fake_data = pytest.mark.filterwarnings("ignore::UserWarning")


# ----------------------------------------------------------------- real data
#: the real data set: compiling it takes ~15 CPU-s, so these checks of its counts and text run with the slow tests
REAL = pytest.mark.slow


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    if not HAVE_SHARED:
        pytest.skip(f"shared Wikispeedia copy not found at {SHARED} (expected ../shared/data/wikispeedia "
                    f"next to the repository)")
    cache = tmp_path_factory.mktemp("gym_crawl_data")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GYM_CRAWL_DATA", str(cache))
        t0 = time.perf_counter()
        corpus = load_wikispeedia(SHARED, progress=False)
        compile_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        again = load_wikispeedia(SHARED, progress=False)
        cached_s = time.perf_counter() - t0
    return corpus, again, cache, compile_s, cached_s


@REAL
def test_counts(real):
    c = real[0]
    assert c.n_pages == 4604
    assert c.n_links == 119_882
    assert c.name == "wikispeedia"
    assert c.domains.tolist() == ["en.wikipedia.org"]
    assert "single" in c.meta["domain_definition"]
    assert len(c.meta["citation"]) == 2 and "Wikispeedia" in c.meta["citation"][1]
    assert c.meta["content_fingerprint_ok"] is True


@REAL
def test_titles_and_seeds(real):
    c = real[0]
    assert "Édouard_Manet" in c.titles
    assert c.page_id("Édouard Manet") == c.page_id("Édouard_Manet")
    assert "Children's_Crusade" in c.titles
    for name, topic in c.meta["topics"].items():
        assert topic == TOPICS[name]
        for seed in topic["seeds"]:
            c.page_id(seed)
        assert topic["label"] in c.labels, f"topic {name}: label {topic['label']} missing"
    assert c.page_id("Geology") >= 0


@REAL
def test_boilerplate_removed(real):
    texts = real[0].texts.tolist()
    for bad in ("Schools Wikipedia", "Related subjects:", "#copyright", "Retrieved from",
                "See also our Disclaimer", "[1x1.gif]", "For more information see SOS"):
        hits = [real[0].titles[i] for i, t in enumerate(texts) if bad in t]
        assert not hits, f"{bad!r} left in {hits[:5]}"
    assert all(t.strip() for t in texts)
    geo = texts[real[0].page_id("Geology")]
    assert "Geology (from Greek" in geo and "Geology and geophysics" not in geo


@REAL
def test_labels(real):
    c = real[0]
    n_labels = np.diff(c.label_ptr)
    assert int((n_labels > 0).sum()) == 4598
    unlabeled = {c.titles[i] for i in np.flatnonzero(n_labels == 0)}
    # SOURCE.md lists the GFDL text instead of Pikachu; categories.tsv says otherwise (line 5074 gives the
    # GFDL text subject.IT.Websites_and_the_Internet, and Pikachu has no row)
    assert unlabeled == {"Directdebit", "Donation", "Friend_Directdebit", "Sponsorship_Directdebit",
                         "Pikachu", "Wowpurchase"}
    assert len(c.labels) == 129
    assert all(lab.startswith("subject.") for lab in c.labels)
    assert "subject.Science.Biology.Health_and_medicine" in c.page_labels(c.page_id("Cancer"))


@REAL
def test_anchors_are_target_titles(real):
    c = real[0]
    vocab = c.vocab.tolist()
    titles = c.titles.tolist()
    want = {t: tokenize(t.replace("_", " ")) for t in titles}
    dst = c.link_dst.tolist()
    ap = c.anchor_ptr.tolist()
    at = c.anchor_terms.tolist()
    bad = [e for e in range(c.n_links) if [vocab[i] for i in at[ap[e]:ap[e + 1]]] != want[titles[dst[e]]]]
    assert not bad


@REAL
def test_contexts(real):
    c = real[0]
    nonempty = np.diff(c.context_ptr) > 0
    assert nonempty.mean() > 0.7
    assert int(nonempty.sum()) <= c.meta["links_with_context"]
    # Geology -> Plate_tectonics: the context is text around "plate tectonics" in the Geology article
    g = c.page_id("Geology")
    a, b = c.outlinks(g)
    e = a + c.link_dst[a:b].tolist().index(c.page_id("Plate_tectonics"))
    words = {c.vocab[int(i)] for i in c.context_terms[c.context_ptr[e]:c.context_ptr[e + 1]]}
    assert "lithosphere" in words or "crust" in words or "geology" in words


@REAL
def test_cached_reload_identical_and_fast(real):
    c, again, cache, compile_s, cached_s = real
    compiled = list((cache / "compiled").glob("wikispeedia-*"))
    assert len(compiled) == 1 and (compiled[0] / "manifest.json").is_file()
    assert again.path == compiled[0] == c.path
    assert cached_s < 1.0, f"cached load took {cached_s:.2f}s (compile {compile_s:.1f}s)"
    for name in ARRAYS:
        assert np.array_equal(getattr(c, name), getattr(again, name)), name
    assert again.titles.tolist() == c.titles.tolist() and again.meta == c.meta
    assert is_memory_mapped(again.link_dst) and is_memory_mapped(again.text_terms)


# ------------------------------------------------------------- fake fixtures
def _article(title: str, body: str, related: str = "Science") -> str:
    return (f"   #copyright\n\n{title.replace('_', ' ')}\n\n"
            f"2007 Schools Wikipedia Selection. Related subjects: {related}\n\n"
            f"   {body}\n\n"
            f"   Retrieved from \" http://en.wikipedia.org/wiki/{title}\"\n"
            "   This reference article is mainly selected from the English Wikipedia\n"
            "   with only minor checks and changes (see www.wikipedia.org for details\n"
            "   of authors and sources) and is available under the GNU Free\n"
            "   Documentation License. See also our Disclaimer.\n")


FAKE = {
    "Rock": "Rocks are studied in geology. A Mineral makes up rock and the Ocean erodes it.",
    "Mineral": "A mineral forms in rock.",
    "Ocean": "The ocean is salty and covers rock.",
    "Édouard_Manet": "A painter, no links.",
}
FAKE_LINKS = [("Rock", "Mineral"), ("Rock", "Ocean"), ("Mineral", "Rock"), ("Ocean", "Édouard_Manet")]
HEADER = "# fake header\n# FORMAT: x\n\n"


def _tar(path: Path, members: dict[str, bytes], mode: str) -> None:
    with tarfile.open(path, mode) as tf:
        for name, data in sorted(members.items()):
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            tf.addfile(ti, io.BytesIO(data))


def make_fake(root: Path, layout: str = "ours", links: list[tuple[str, str]] | None = None,
              skip: tuple[str, ...] = ()) -> Path:
    """A tiny Wikispeedia in one of the layouts: ours (tar.xz), extracted, snap-dirs, snap-archives."""
    root.mkdir(parents=True, exist_ok=True)
    tsvs = {
        "articles.tsv": HEADER + "".join(quote(t) + "\n" for t in FAKE),
        "links.tsv": HEADER + "".join(f"{quote(s)}\t{quote(t)}\n" for s, t in (links or FAKE_LINKS)),
        "categories.tsv": HEADER + "Rock\tsubject.Geography.Geology_and_geophysics\n"
                                   "Mineral\tsubject.Science.Chemistry\nMineral\tsubject.Geography.Geology_and_geophysics\n"
                                   f"{quote('Édouard_Manet')}\tsubject.People.Artists\n",
    }
    arts = {f"plaintext_articles/{quote(t)}.txt": _article(t, b).encode() for t, b in FAKE.items()}
    tsv_dir = root / "wikispeedia_paths-and-graph" if layout == "snap-dirs" else root
    if layout == "snap-archives":
        _tar(root / "wikispeedia_paths-and-graph.tar.gz",
             {f"wikispeedia_paths-and-graph/{n}": d.encode() for n, d in tsvs.items() if n not in skip}, "w:gz")
        _tar(root / "wikispeedia_articles_plaintext.tar.gz", arts, "w:gz")
        return root
    tsv_dir.mkdir(exist_ok=True)
    for n, d in tsvs.items():
        if n not in skip:
            (tsv_dir / n).write_text(d, encoding="utf-8")
    if layout == "ours":
        _tar(root / "plaintext_articles.tar.xz", arts, "w:xz")
    else:
        for n, d in arts.items():
            (root / n).parent.mkdir(exist_ok=True)
            (root / n).write_bytes(d)
    return root


def test_clean_article():
    raw = _article("Rock", "Rocks are\n   hard.\n\n   Second paragraph.", related="Geology and\ngeophysics")
    assert clean_article(raw) == "Rocks are hard.\n\nSecond paragraph."
    notice = ("   #copyright\n\nPeru\n\n2007 Schools Wikipedia Selection. Related subjects: Countries\n\n"
              "   SOS Children works in Peru. For more information see SOS Children in\n   Peru\n"
              "   Peru República del Perú\n\n   Peru is a country.\n\n   Retrieved from \"x\"\n   footer\n")
    assert clean_article(notice) == "Peru República del Perú\n\nPeru is a country."


def test_find_mention_whole_word():
    low = "cancers and cancer research"
    assert find_mention(low, ["cancer"]) == (12, 18)
    assert find_mention(low, ["tumour"]) is None
    assert find_mention("mercury is hot", ["mercury (planet)", "mercury"]) == (0, 7)


@fake_data
@pytest.mark.parametrize("layout", ["ours", "extracted", "snap-dirs", "snap-archives"])
def test_fake_layouts(tmp_path, layout):
    c = load_wikispeedia(make_fake(tmp_path / layout, layout), cache=False, progress=False)
    assert c.titles.tolist() == list(FAKE)
    assert c.n_links == 4
    rock = c.page_id("Rock")
    assert c.texts[rock] == FAKE["Rock"]
    want = ["subject.Geography.Geology_and_geophysics", "subject.Science.Chemistry"]
    assert sorted(c.page_labels(c.page_id("Mineral"))) == want
    assert c.page_labels(c.page_id("Ocean")) == []
    a, b = c.outlinks(rock)
    assert [c.titles[int(d)] for d in c.link_dst[a:b]] == ["Mineral", "Ocean"]
    ctx = {c.vocab[int(i)] for i in c.context_terms[c.context_ptr[a]:c.context_ptr[a + 1]]}
    assert {"rocks", "geology", "makes"} <= ctx and "mineral" not in ctx  # the mention itself is excluded
    e = c.link_ptr[c.page_id("Ocean")]
    assert c.context_ptr[e + 1] == c.context_ptr[e]  # Manet is not mentioned in Ocean: empty context


@fake_data
def test_fake_cache_key_and_load_corpus(tmp_path, monkeypatch):
    root = make_fake(tmp_path / "ws")
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path / "cache"))
    c1 = load_corpus(root, progress=False)
    c2 = load_wikispeedia(root, progress=False)
    assert c1.path == c2.path and c1.n_pages == 4
    (root / "links.tsv").write_text(HEADER + "Rock\tOcean\n", encoding="utf-8")  # input changed: new key
    c3 = load_wikispeedia(root, progress=False)
    assert c3.path != c1.path and c3.n_links == 1


@fake_data
def test_none_downloads_into_cache(tmp_path, monkeypatch):
    import gym_crawl.corpus.download as dl

    root = make_fake(tmp_path / "dl", "snap-archives")
    seen = []

    def fake_download(name, dest_dir=None, **kw):
        seen.append((name, dest_dir))
        return root

    monkeypatch.setattr(dl, "download", fake_download)
    c = load_wikispeedia(None, cache_dir=tmp_path / "cache", progress=False)
    assert seen == [("wikispeedia", tmp_path / "cache" / "wikispeedia")] and c.n_pages == 4


def test_missing_categories(tmp_path):
    root = make_fake(tmp_path / "ws", skip=("categories.tsv",))
    with pytest.raises(CorpusFormatError, match="categories.tsv"):
        load_wikispeedia(root, cache=False, progress=False)
    root = make_fake(tmp_path / "snap", "snap-archives", skip=("categories.tsv",))
    with pytest.raises(CorpusFormatError, match="categories.tsv"):
        load_wikispeedia(root, cache=False, progress=False)


def test_missing_articles(tmp_path):
    root = make_fake(tmp_path / "ws")
    (root / "plaintext_articles.tar.xz").unlink()
    with pytest.raises(CorpusFormatError, match="plaintext_articles"):
        load_wikispeedia(root, cache=False, progress=False)
    with pytest.raises(FileNotFoundError):
        load_wikispeedia(tmp_path / "nope", cache=False, progress=False)


def test_truncated_archive(tmp_path):
    root = make_fake(tmp_path / "ws")
    arc = root / "plaintext_articles.tar.xz"
    data = arc.read_bytes()
    arc.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorpusFormatError, match=r"plaintext_articles\.tar\.xz.*truncated"):
        load_wikispeedia(root, cache=False, progress=False)


def test_unknown_article_in_links(tmp_path):
    root = make_fake(tmp_path / "ws", links=FAKE_LINKS + [("Rock", "Basalt")])
    with pytest.raises(CorpusFormatError) as ei:
        load_wikispeedia(root, cache=False, progress=False)
    msg = str(ei.value)
    assert "links.tsv" in msg and "line 8" in msg and "'Basalt'" in msg


def test_article_without_text(tmp_path):
    root = make_fake(tmp_path / "ws", "extracted")
    (root / "plaintext_articles" / "Ocean.txt").unlink()
    with pytest.raises(CorpusFormatError, match="Ocean.txt"):
        load_wikispeedia(root, cache=False, progress=False)
