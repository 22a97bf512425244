"""The general English text model: built deterministically from its source, cached atomically, the default
text model of a live web and of a web (WARC) corpus, overridden by ``text=``, fair, open-vocabulary."""
from __future__ import annotations

import math
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

import gym_crawl.text.model as model_mod
from gym_crawl.corpus import cache
from gym_crawl.corpus.cache import CacheWarning
from gym_crawl.text.general import GENERAL_OPTIONS, GeneralTextUnavailable, general_rows, oov_params
from gym_crawl.text.model import (
    GeneralOpenTextModel,
    OpenTextModel,
    general_corpus_model,
    general_text_model,
    get_text_model,
)
from gym_crawl.text.open_vocab import hashed_word_vector
from gym_crawl.web import LiveWeb
from gym_crawl.web.html_extract import render_page
from gym_crawl.web.warc import load_warc
from gym_crawl.webgen.examples import write_example_warc
from gym_crawl.wrappers.factory import make_env
from tests.helpers import SiteFetch

H = "http://site.test"


pytestmark = pytest.mark.filterwarnings("ignore:topic '.*left out:UserWarning",
                                      "ignore:.*content fingerprint.*:UserWarning")


@pytest.fixture
def no_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GYM_CRAWL_WIKISPEEDIA", raising=False)
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path / "empty-data"))
    model_mod._GENERAL_MODELS.clear()
    yield
    model_mod._GENERAL_MODELS.clear()


def make_site() -> dict[str, bytes]:
    return {H + "/": render_page("Home", "rock mineral footballish", [(H + "/a", "ocean rock"), (H + "/b", "zzqx")]),
            H + "/a": render_page("A", "the ocean covers rock", [(H + "/b", "mineral")]),
            H + "/b": render_page("B", "zzqx quux words", [])}


def test_builds_deterministically_from_its_source(general_source, tmp_path, monkeypatch):
    a = general_text_model(required=True, progress=False)
    assert a.meta["idf_fraction"] == 1.0 and a.meta["idf_pages"] == 4  # IDF over every article
    assert a.meta["dim"] == GENERAL_OPTIONS["dim"] == a.vectors.shape[1]
    assert a.path is not None and a.path.parent == tmp_path / "data" / "text_models"
    idf, vec = np.array(a.idf), np.array(a.vectors)
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path / "data2"))  # built again from scratch elsewhere
    model_mod._GENERAL_MODELS.clear()
    b = general_text_model(required=True, progress=False)
    assert b.path.parent == tmp_path / "data2" / "text_models"
    assert a.corpus.vocab.tolist() == b.corpus.vocab.tolist()
    assert np.array_equal(idf, b.idf) and np.array_equal(vec, b.vectors)
    assert general_text_model(progress=False) is b  # memoized


def test_a_damaged_or_half_written_cache_is_never_accepted(general_source, tmp_path):
    corpus = load_warc(write_example_warc(tmp_path / "w"))
    first = get_text_model(corpus)
    assert first.meta["vectors"].startswith("general:")
    path = first.path
    assert path is not None and (path / "meta.json").is_file()
    gm = general_text_model(progress=False)
    # a writer killed before meta.json: incomplete, rebuilt
    (path / "meta.json").unlink()
    cache._WARNED.discard(f"damaged:{path}")
    with pytest.warns(CacheWarning, match="incomplete"):
        again = general_corpus_model(corpus, gm)
    assert np.array_equal(again.vectors, first.vectors) and (path / "meta.json").is_file()
    # a damaged vectors file: caught by its checksum, rebuilt
    raw = bytearray((path / "vectors.npy").read_bytes())
    raw[-3] ^= 0xFF
    (path / "vectors.npy").write_bytes(bytes(raw))
    cache._WARNED.discard(f"damaged:{path}")
    with pytest.warns(CacheWarning, match="vectors.npy"):
        third = general_corpus_model(corpus, gm)
    assert np.array_equal(third.vectors, first.vectors)


def test_a_warc_corpus_defaults_to_the_general_model(general_source, tmp_path, tiny_corpus):
    corpus = load_warc(write_example_warc(tmp_path / "w"))
    gm = general_text_model(progress=False)
    tm = get_text_model(corpus)
    assert tm.meta["vectors"].startswith(f"general:{gm.corpus.name}:")
    idf, vec = general_rows(gm, corpus.vocab.tolist())
    assert np.array_equal(tm.idf, idf) and np.array_equal(tm.vectors, vec)
    known = [w for w in corpus.vocab.tolist() if gm.corpus.word_id(w) >= 0]
    assert "rock" in known or "ocean" in known  # the fixture shares words with the example web
    k, half = gm.dim, np.float32(1 / math.sqrt(2))
    assert tm.dim == 2 * k
    for w in known:  # [meaning, identity] / √2
        row = tm.vectors[corpus.word_id(w)]
        np.testing.assert_array_equal(row[:k], gm.vectors[gm.corpus.word_id(w)] * half)
        np.testing.assert_array_equal(row[k:], hashed_word_vector(w, k, oov_params(gm)[1]) * half)
        assert float(np.linalg.norm(row)) == pytest.approx(1.0, rel=1e-5)
    own = get_text_model(corpus, general=False)  # the corpus' own model on request
    assert own.meta["vectors"] == "ppmi-svd" and own.meta["idf_fraction"] == 0.1
    assert get_text_model(tiny_corpus).meta["vectors"] == "ppmi-svd"  # not a web corpus: its own model


def test_a_live_web_defaults_to_the_general_model(general_source):
    web = LiveWeb([H + "/"], fetch=SiteFetch(make_site()), max_pages=200)
    env = make_env("WikiCrawl-v1", corpus=web, topic="rock", max_episode_steps=3)
    obs, info = env.reset(seed=0)
    for _ in range(2):
        a = int(np.argmax(np.where(info["action_mask"], obs["candidates"][:, 0], -np.inf)))
        obs, _, term, trunc, info = env.step(a)
    lt = env.unwrapped.text
    assert isinstance(lt, GeneralOpenTextModel)
    gm = general_text_model(progress=False)
    oov_idf, scale = oov_params(gm)
    assert oov_idf == pytest.approx(math.log(4 + 1) + 1)
    k, half = gm.dim, np.float32(1 / math.sqrt(2))
    for w in ("rock", "ocean", "mineral"):
        i, j = web.word_id(w), gm.corpus.word_id(w)
        assert i >= 0 and j >= 0
        np.testing.assert_array_equal(lt.vectors[i, :k], gm.vectors[j] * half)
        assert lt.idf[i] == gm.idf[j]
    for w in ("zzqx", "footballish"):  # unseen by the general model: the open vocabulary
        i = web.word_id(w)
        assert i >= 0 and gm.corpus.word_id(w) < 0
        np.testing.assert_array_equal(lt.vectors[i], np.r_[np.zeros(k, np.float32), hashed_word_vector(w, k, scale)])
        assert lt.idf[i] == np.float32(oov_idf)
    # the same word gets the same row as in a web corpus under the same general model
    idf, vec = general_rows(gm, web.vocab.tolist())
    n = len(web.vocab)
    assert np.array_equal(lt.idf[:n], idf) and np.array_equal(lt.vectors[:n], vec)
    web.close()


def test_text_overrides_the_default(general_source, tiny_corpus):
    tm = get_text_model(tiny_corpus)
    web = LiveWeb([H + "/"], fetch=SiteFetch(make_site()), text=tm, max_pages=200)
    lt = get_text_model(web)
    assert type(lt) is OpenTextModel and lt.meta["reference"] == tiny_corpus.name
    web2 = LiveWeb([H + "/"], fetch=SiteFetch(make_site()), max_pages=200)
    env = make_env("WikiCrawl-v1", corpus=web2, topic="rock", max_episode_steps=3, text={"general": False})
    env.reset(seed=0)
    assert env.unwrapped.text.meta["vectors"] == "hashed"  # every word hashed, IDF 1
    with pytest.raises(ValueError, match="general"):
        make_env("WikiCrawl-v1", corpus=web2, topic="rock", max_episode_steps=3, text={"general": "yes"})
    web.close()
    web2.close()


def test_without_its_source_the_defaults_fall_back_with_one_warning(no_source, tmp_path):
    corpus = load_warc(write_example_warc(tmp_path / "w"))
    cache._WARNED.discard("general-text-missing")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a web corpus' own model crawls as well: nothing to warn about
        tm = get_text_model(corpus)
    assert tm.meta["vectors"] == "ppmi-svd"  # its own model, as before
    web = LiveWeb([H + "/"], fetch=SiteFetch(make_site()), max_pages=200)
    with pytest.warns(CacheWarning, match="gym-crawl download wikispeedia.*a live web hashes every word"):
        assert get_text_model(web).meta["vectors"] == "hashed"  # a live web loses something: one warning
    web2 = LiveWeb([H + "/"], fetch=SiteFetch(make_site()), max_pages=200)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once per process only
        assert get_text_model(web2).meta["vectors"] == "hashed"
    web2.close()
    with pytest.raises(GeneralTextUnavailable, match="gym-crawl download wikispeedia"):
        get_text_model(corpus, general=True)
    web.close()


def test_open_vocabulary_covers_unseen_words(general_source):
    gm = general_text_model(progress=False)
    words = ["rock", "nevereverseen", "zzqx", "rock"]
    idf, vec = general_rows(gm, words)
    oov_idf, scale = oov_params(gm)
    assert np.array_equal(vec[0], vec[3]) and idf[0] == idf[3] == gm.idf[gm.corpus.word_id("rock")]
    for j in (1, 2):
        assert idf[j] == np.float32(oov_idf) == np.float32(idf.max())
        assert float(np.linalg.norm(vec[j])) == pytest.approx(scale, rel=1e-5)
    assert abs(float(vec[1] @ vec[2])) < 0.6  # two unseen words are not the same word
    k = gm.dim
    assert not vec[1, :k].any() and not vec[2, :k].any()  # no meaning, only identity
    rock_near = general_rows(gm, ["rock", "mineral", "zzqx"])[1]
    # the identity half: a word is more like itself than like any other word
    assert float(rock_near[0] @ vec[0]) > max(float(rock_near[1] @ vec[0]), float(rock_near[2] @ vec[0]))
    idf2, vec2 = general_rows(gm, ["zzqx"])  # deterministic, independent of the other words asked
    assert np.array_equal(vec2[0], vec[2])


def test_the_fairness_check_flags_copied_pages():
    from gym_crawl.benchmarks.textmodel import text_overlap

    site = ["The queryset manager returns model instances filtered by the lookup keyword arguments given to it",
            "Middleware hooks into request and response processing globally across every view function"]
    source = ["Rocks are studied in geology and minerals form rocks under heat and pressure over long times",
              "A river carries sediment from mountains into the ocean where layers settle into new rock"]
    assert np.all(text_overlap(source, site) == 0.0)
    copied = [*source, "Intro. " + site[1] + " More text follows here."]
    ov = text_overlap(copied, site)
    assert ov[0] == 0.0 and ov[1] == 1.0


def test_the_general_source_holds_no_docs_web_test_site_text(tmp_path):
    """Where both exist (the shared Wikispeedia copy and a built docs-web corpus): no test-site page shares
    more than a fifth of its 8-word windows with the general model's source."""
    from gym_crawl.benchmarks.textmodel import text_overlap
    from gym_crawl.corpus.wikispeedia import load_wikispeedia
    from gym_crawl.tasks.docs_web import load_docs_web, page_sites, split_of
    from tests.conftest import SHARED_DATA

    ws_path = SHARED_DATA / "wikispeedia"
    user_data = os.environ.get("GYM_CRAWL_DOCS_WEB")
    if not ws_path.is_dir() or not user_data or not (Path(user_data) / "manifest.json").is_file():
        pytest.skip("needs ../shared/data/wikispeedia and a built docs-web corpus named by $GYM_CRAWL_DOCS_WEB")
    docs = load_docs_web(user_data)
    ws = load_wikispeedia(ws_path, progress=False, cache_dir=tmp_path / "cache")
    psite, names = page_sites(docs)
    test_sites = [i for i, n in enumerate(names) if split_of(n) == "test"]
    pages = np.flatnonzero(np.isin(psite, test_sites))
    ov = text_overlap(ws.texts, [docs.texts[int(p)] for p in pages])
    assert float(ov.max()) < 0.2, [docs.titles[int(p)] for p in pages[ov >= 0.2]][:5]


@pytest.mark.parametrize("spec, text, env_text", [(None, None, None), ("none", None, {"general": False}),
                                                  ("general", None, {"general": True}), ("tiny", "corpus", None)])
def test_cli_text_option(monkeypatch, capsys, tiny_corpus, spec, text, env_text):
    """``crawl --live``: no ``--text`` leaves the default (the general model); ``none`` / ``general`` choose
    hashing / require the general model; a corpus overrides it."""
    from gym_crawl import cli
    from gym_crawl.cli import crawl

    seen = {}

    class Res:
        stopped_by = None

        def summary(self):
            return {"pages_fetched": 0}

    def fake(agent, settings, **kw):
        seen.update(kw, settings=settings)
        return Res()

    monkeypatch.setattr(crawl, "crawl_live", fake)
    monkeypatch.setattr(crawl, "load_corpus", lambda name: tiny_corpus)
    args = ["crawl", "--live", H + "/", "--agent", "best-first", "--topic", "rock", "--json"]
    assert cli.main(args + (["--text", spec] if spec else [])) == 0
    assert (seen["text"] is tiny_corpus) if text == "corpus" else seen["text"] is None
    assert seen["settings"].env_keywords().get("text") == env_text
