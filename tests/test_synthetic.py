"""The embedded synthetic corpus: validity, determinism and its calibrated statistics.

The statistical checks run on generated data (20,000 pages, seed 0) and compare to the
Wikispeedia calibration targets stated in ``gym_crawl.webgen.synthetic``.
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order, shortest_path

from gym_crawl.corpus import CorpusFormatError, load_corpus
from gym_crawl.corpus.core import Corpus
from gym_crawl.tokenize import tokenize
from gym_crawl.webgen.synthetic import (
    GENERAL_SUBCATS,
    GENERAL_WORDS,
    GENERATOR_VERSION,
    HARD_PRESET_VERSION,
    PRESETS,
    TAXONOMY,
    TOPICS,
    generate_synthetic,
    synthetic_cache_path,
    synthetic_corpus,
)

N = 20_000
HAN_TOPICS = ["geology", "cancer", "poetry", "sports", "fiction", "cameras"]
ARRAYS = ("text_ptr", "text_terms", "text_counts", "title_ptr", "title_terms", "link_ptr", "link_dst",
          "anchor_ptr", "anchor_terms", "context_ptr", "context_terms", "page_domain", "label_ptr", "label_ids")


@pytest.fixture(scope="module")
def big() -> Corpus:
    return generate_synthetic(N, seed=0)


@pytest.fixture(scope="module")
def small() -> Corpus:
    return generate_synthetic(3000, seed=1)


@pytest.fixture(scope="module")
def graph(big):
    n = big.n_pages
    return csr_matrix((np.ones(big.n_links), (big.link_src(), big.link_dst)), shape=(n, n))


def label_mask(c: Corpus, prefix: str) -> np.ndarray:
    """(n,) bool: pages carrying a label that starts with ``prefix``."""
    ids = [i for i, lab in enumerate(c.labels.tolist()) if lab == prefix or lab.startswith(prefix + ".")]
    page = np.repeat(np.arange(c.n_pages), np.diff(c.label_ptr))
    m = np.zeros(c.n_pages, bool)
    m[page[np.isin(c.label_ids, ids)]] = True
    return m


def words_of(c: Corpus, arr_ptr, arr_terms, i) -> list[str]:
    return [c.vocab[int(t)] for t in arr_terms[arr_ptr[i]:arr_ptr[i + 1]]]


# ----------------------------------------------------------------- validity
def test_valid_corpus_and_invariants(big):
    big.validate()
    n = big.n_pages
    src, dst = big.link_src(), big.link_dst
    assert not np.any(src == dst), "self links"
    key = src.astype(np.int64) * n + dst
    assert len(np.unique(key)) == len(key), "duplicate (src, dst) pairs"
    # bags: sorted unique terms per page, positive counts
    t = big.text_terms.astype(np.int64)
    row = np.repeat(np.arange(n), np.diff(big.text_ptr))
    k2 = row * big.n_words + t
    assert np.all(np.diff(k2) > 0), "text_terms must be sorted and unique within each page"
    assert big.text_counts.min() >= 1
    length = np.add.reduceat(big.text_counts, big.text_ptr[:-1])
    assert length.min() >= 100 and length.max() <= 640
    assert 180 <= length.mean() <= 320
    # every page: >= 1 label (some 2), a non-empty title, unique titles
    nl = np.diff(big.label_ptr)
    assert nl.min() >= 1 and nl.max() <= 2 and 0.05 < (nl == 2).mean() < 0.2
    titles = big.titles.tolist()
    assert len(set(titles)) == n and all(titles)
    assert titles == sorted(titles, key=lambda s: (s.casefold(), s)), "ids follow alphabetical title order"
    # anchors and contexts present
    assert np.diff(big.anchor_ptr).min() >= 1
    cl = np.diff(big.context_ptr)
    assert cl.min() >= 6 and cl.max() <= 16


def test_vocab_is_real_tokenized_words():
    """Every embedded word survives ``tokenize`` unchanged (no stop words, typos with digits, ...)."""
    lists = [GENERAL_WORDS] + [w.split() for _, w in GENERAL_SUBCATS]
    for _, shared, subs in TAXONOMY:
        lists.append(shared.split())
        lists += [w.split() for _, w in subs]
    bad = sorted({w for ws in lists for w in ws if tokenize(w) != [w]})
    assert not bad, f"words dropped by tokenize: {bad}"
    assert 15 <= len(TAXONOMY) <= 20
    for subject, shared, subs in TAXONOMY:
        assert 3 <= len(subs) <= 8, subject
        vocab = set(shared.split()) | {w for _, ws in subs for w in ws.split()}
        assert 60 <= len(vocab) <= 200, (subject, len(vocab))
    assert len(set(GENERAL_WORDS)) >= 280


def test_too_small_is_an_error():
    with pytest.raises(ValueError, match="n_pages"):
        generate_synthetic(100)


@pytest.mark.parametrize("n", [1000, 5000])
def test_sizes_by_argument(n):
    c = generate_synthetic(n, seed=3)
    assert c.n_pages == n and c.meta["name"] == f"synthetic-{n}"
    assert 18 <= c.n_links / n <= 30
    assert len(c.domains) == max(20, n // 500)


# -------------------------------------------------------------- determinism
def test_deterministic(small):
    again = generate_synthetic(3000, seed=1)
    for name in ARRAYS:
        np.testing.assert_array_equal(getattr(small, name), getattr(again, name), err_msg=name)
    assert small.titles.tolist() == again.titles.tolist()
    assert small.domains.tolist() == again.domains.tolist()
    assert small.meta == again.meta
    other = generate_synthetic(3000, seed=2)
    assert not np.array_equal(small.link_dst[:1000], other.link_dst[:1000])
    assert small.meta["seed"] == 1 and small.meta["generator_version"] == GENERATOR_VERSION


# Per-array sha256 digests (first 16 hex digits) of generate_synthetic(n, seed) recorded from the
# generator *before* it was split into stages (main at 6832828). Any changed byte of
# any array, string table or meta fails the test: the default corpus must stay byte-identical.
# Order: ARRAYS, then the string tables titles, vocab, domains, labels, then meta (JSON, sorted keys).
_RECORDED_DIGESTS = {
    (1000, 0): "7934c34c357e7189 b3c2e6bee2d5305c fc5518c8b19b2376 61fba8d7076d90dd 6c8d5c4447680b15 06a1d594b83d1e88 2ca556aaf112db1d 2e2398be58fdc139 29dd3dea1d0da8d6 72273c444c71175d 3192c1b27b51a57c 67847269cc18eb13 6477db94bf846574 ec91563cb49fd2bd 365394a4e1286603 343dc30a3a6d95f4 a9f2d4646d5a93b0 47707a88a8272dec ad684e19f76de6b4",
    (1000, 1): "9019b1b93933be58 5971d8e8fe216236 3e2357c649b82bef f095f70525b1fbc2 f0f34ce339078625 54d5b63922ce9a96 83506445669d199b afdfc20ed19262d4 92d074cfa8593f8c 9b383d453baf7fb7 9f69d3c0cf76eb80 bf1e8c505f7621cf 6ab6f7b2e4a03a2d 6f240fbc94ba6354 ee4c53ffe0cf4fbb 343dc30a3a6d95f4 a7b5c7f40130b6d8 47707a88a8272dec 411b9c9380c036e6",
    (5000, 0): "28c7e8ff00e1d932 3e159e3548163d2d 0db04120125fbc10 0f96b064a74b70cd fa992d65b5e3823f 88091935e1c68e76 81706d7005ff9499 a531b31df33bc02c 14e0b015843400ef ec06138417523f29 dffa97d1736a13f8 ec120d6fc4c6ef06 86746aacaa53e947 8ae4cd7ca3d22155 7524765ed533232b 343dc30a3a6d95f4 a9f2d4646d5a93b0 47707a88a8272dec 9a615549504ec780",
    (5000, 1): "8fb35ee6e02f3f4c d025288a45df35c1 3735675372e564bf fe8aeb49d67edc1d f4068034b7a343a0 91a3888ea7834592 185cb45b46dc9cd5 b48a35fcf57fdf56 2e176440d996aa0d 2f9e759069167058 44c22a888796e5ba 3c3e64c69e56491c e3ee09674277e41b 786634ada5e244f0 1ff4445dc48718a0 343dc30a3a6d95f4 0413301433038baf 47707a88a8272dec 7e03a3fc27f172e4",
    (20000, 0): "13ef14ed75459560 0115feafca84c0dc 844929289a152f7f 3f33bd0899f747de be2fabce48937c2c 78dc31f478fb7f8f e49ee76b284f3e4e 8ee718c8fdc26f74 97afd836b50db36a d9a8d4d49c816237 5ffa696b869e7e83 54efba808b7431bd 9a33a2981168fd01 25314f808321e4ab 3247b1a7113eaf77 343dc30a3a6d95f4 6f8bb1e12ccad65b 47707a88a8272dec dc5bdf92f689bbb7",
    (20000, 1): "f65fe302f85ba415 31b4e694b86744e9 47d908ef79077dc6 6d2db38320488490 630f5b80223ae53c 84c69aa521e14d14 6e21d93fc9182a6c 28fff734f77ffd92 19be31fec2a4dd3f 9a690295c4bd3fe2 6caa724fa96e787a 69cfc6034cd88ccf dfe657370bec1c60 fe20ef4fb1b9bc5b c749e9ecc3960223 343dc30a3a6d95f4 c6a4bf795a3d3649 47707a88a8272dec 80463b011db20a45",
}


def _digests(c: Corpus) -> dict[str, str]:
    import hashlib

    out = {}
    for name in ARRAYS:
        a = np.ascontiguousarray(getattr(c, name))
        out[name] = hashlib.sha256(f"{a.dtype.str}{a.shape}".encode() + a.tobytes()).hexdigest()[:16]
    for name in ("titles", "vocab", "domains", "labels"):
        t = getattr(c, name)
        raw = np.ascontiguousarray(t.offsets).tobytes() + np.ascontiguousarray(t.blob).tobytes()
        out[name] = hashlib.sha256(raw).hexdigest()[:16]
    out["meta"] = hashlib.sha256(json.dumps(c.meta, sort_keys=True).encode()).hexdigest()[:16]
    return out


@pytest.mark.parametrize("n,seed", sorted(_RECORDED_DIGESTS))
def test_byte_identical_to_recorded_digests(n, seed):
    got = _digests(generate_synthetic(n, seed=seed))
    want = dict(zip(got, _RECORDED_DIGESTS[(n, seed)].split()))
    changed = [k for k in got if got[k] != want[k]]
    assert not changed, f"generate_synthetic({n}, seed={seed}) changed: {changed}"


def test_n_domains_argument():
    c = generate_synthetic(2000, seed=0, n_domains=3)
    assert len(c.domains) == 3 and c.meta["n_domains"] == 3
    c.validate()


# ------------------------------------------------------------------ degrees
def test_out_degree_calibrated_to_wikispeedia(big):
    od = big.out_degree()
    assert 20 <= od.mean() <= 32
    assert 14 <= np.median(od) <= 24
    assert od.max() <= 300
    assert od.min() >= 1
    # heavy right tail as Wikispeedia (90th pct 51, 99th 129)
    assert 40 <= np.percentile(od, 90) <= 70
    assert 80 <= np.percentile(od, 99) <= 200


def test_in_degree_power_law_with_offtopic_hubs(big):
    ind = big.in_degree()
    n = big.n_pages
    top = np.argsort(ind)[::-1]
    assert ind[top[0]] > 1000 and ind[top[0]] > n / 5
    assert big.titles[int(top[0])] == "United States"
    assert (ind > n / 10).sum() >= 3
    # heavy tail: the top 1 % of pages receive >= 20 % of links; median far below mean
    share = np.sort(ind)[::-1][: n // 100].sum() / ind.sum()
    assert share >= 0.2
    assert np.median(ind) < 0.5 * ind.mean()
    # log-log CCDF roughly linear (power law) over in-degree 10..1000: slope between -2.5 and -0.5
    ks = np.array([10, 30, 100, 300, 1000])
    ccdf = np.array([(ind >= k).mean() for k in ks])
    slope = np.polyfit(np.log(ks), np.log(ccdf), 1)[0]
    assert -2.5 < slope < -0.5
    # hubs are generic, off-topic pages
    for i in top[:10]:
        assert all(lab.startswith("subject.General.") for lab in big.page_labels(int(i))), big.titles[int(i)]


# ----------------------------------------------------------------- topicality
def test_taxonomy_labels(big):
    labels = big.labels.tolist()
    subjects = {lab.split(".")[1] for lab in labels}
    assert 15 <= len(subjects) <= 20
    for name in ("Science.Geology", "Health.Cancer", "Literature.Poetry", "Sports.Olympic_Games",
                 "Literature.Fiction", "Arts.Cameras", "Music", "History", "Science.Chemistry", "Science.Physics",
                 "Science.Biology", "Geography", "Computing", "Religion", "Economics", "Politics", "Film",
                 "Architecture", "Science.Astronomy", "Science.Mathematics"):
        assert any(lab.startswith("subject." + name) for lab in labels), name


def test_topical_locality_matches_wikispeedia(big):
    """P(target has L | source has L) is 0.1-0.4-ish against base rates 0.5-3.5 %."""
    src, dst = big.link_src(), big.link_dst
    ps, bases = [], []
    for lab in big.labels.tolist():
        if lab.count(".") != 2 or lab.startswith("subject.General"):
            continue
        m = label_mask(big, lab)
        if m.sum() < 50:
            continue
        base = m.mean()
        p = m[dst[m[src]]].mean()
        ps.append(p)
        bases.append(base)
        assert 0.004 <= base <= 0.04, (lab, base)
        assert 0.08 <= p <= 0.55, (lab, p)
        assert p / base >= 5, (lab, p, base)
    assert len(ps) >= 60
    assert 0.15 <= np.median(ps) <= 0.4
    assert 0.007 <= np.median(bases) <= 0.02


def test_relevance_decays_with_link_distance(big, graph):
    """From pages of L, the share of L among pages at BFS distance 1..4 falls toward the base rate."""
    rng = np.random.default_rng(0)
    for topic in ("geology", "cancer", "poetry"):
        m = label_mask(big, TOPICS[topic]["label"])
        base = m.mean()
        srcs = rng.choice(np.flatnonzero(m), 25, replace=False)
        D = shortest_path(graph, indices=srcs, unweighted=True)
        frac = [((d == D) & m).sum() / max((d == D).sum(), 1) for d in (1, 2, 3, 4)]
        assert frac[0] > frac[1] > frac[2] > frac[3], (topic, frac)
        assert frac[0] > 8 * base, (topic, frac, base)
        assert frac[1] > 2 * base, (topic, frac, base)
        assert frac[2] < 2.5 * base, (topic, frac, base)   # within ~3 links relevance is near base rate
        assert frac[3] < 1.5 * base, (topic, frac, base)


def test_offtopic_tunnels(big, graph):
    """Some relevant pages are reachable from the seed only through off-topic pages, and some
    relevant pages are linked only from their own site whose subject is another one (islands)."""
    n = big.n_pages
    src, dst = big.link_src(), big.link_dst
    dom_subj = big.meta["domain_subjects"]
    for topic in ("geology", "poetry", "cameras"):
        spec = TOPICS[topic]
        m = label_mask(big, spec["label"])
        seed = big.page_id(spec["seeds"][0])
        full = breadth_first_order(graph, seed, return_predecessors=False)
        keep = m[src] & m[dst]
        sub = csr_matrix((np.ones(int(keep.sum())), (src[keep], dst[keep])), shape=(n, n))
        inside = breadth_first_order(sub, seed, return_predecessors=False)
        reach = m[full].sum()
        assert reach >= 0.85 * m.sum()
        assert 1 - len(inside) / reach >= 0.05, topic
        # islands: L pages on a foreign-subject site, with in-links only from that site
        subject = spec["label"].split(".")[1]
        pages = np.flatnonzero(m & (np.array([dom_subj[d] != subject for d in big.page_domain.tolist()])))
        same_site_only = 0
        for p in pages.tolist():
            ins = src[dst == p]
            if len(ins) and np.all(big.page_domain[ins] == big.page_domain[p]):
                same_site_only += 1
        assert same_site_only >= 0.02 * m.sum(), topic


def test_text_is_topical(big):
    """The topic word is frequent on its pages and rare elsewhere; titles/anchors/contexts are informative."""
    n = big.n_pages
    row = np.repeat(np.arange(n), np.diff(big.text_ptr))
    for topic in HAN_TOPICS:
        spec = TOPICS[topic]
        m = label_mask(big, spec["label"])
        ids = [big.word_id(w) for w in spec["words"]]
        has = np.zeros(n, bool)
        has[row[np.isin(big.text_terms, ids)]] = True
        assert has[m].mean() > 0.9, topic
        assert has[~m].mean() < 0.06, topic  # mentions off-topic, as in Wikispeedia (5-10 %)
        for cat in spec["categories"]:
            assert big.word_id(cat) >= 0, cat
    # anchors: mostly the target's title words
    dst = big.link_dst
    rng = np.random.default_rng(0)
    sample = rng.choice(big.n_links, 3000, replace=False)
    same = [words_of(big, big.anchor_ptr, big.anchor_terms, e) == words_of(big, big.title_ptr, big.title_terms,
                                                                         int(dst[e])) for e in sample.tolist()]
    assert 0.6 < np.mean(same) < 0.85
    # contexts: the target's subcategory word shows up far more often than by chance
    geo = label_mask(big, TOPICS["geology"]["label"])
    gw = big.word_id("geology")
    lk = np.repeat(np.arange(big.n_links), np.diff(big.context_ptr))
    ctx_has = np.zeros(big.n_links, bool)
    ctx_has[lk[big.context_terms == gw]] = True
    to_geo = geo[dst]
    assert ctx_has[to_geo].mean() > 5 * ctx_has[~to_geo].mean()
    assert ctx_has[to_geo].mean() < 0.9  # imperfect


def test_main_pages(big):
    ind = big.in_degree()
    for title in ("Geology", "Cancer", "Poetry", "Olympic Games", "Fiction", "Cameras", "Science", "Music"):
        i = big.page_id(title)
        labs = big.page_labels(i)
        assert labs, title
        prefix = labs[0]
        m = label_mask(big, prefix)
        assert ind[i] >= np.percentile(ind[m], 90), title
        assert big.out_degree()[i] >= 60, title


# ----------------------------------------------------------------- domains
def test_domains(big):
    D = len(big.domains)
    assert D >= 2 and max(20, big.n_pages // 500) == D
    for d in big.domains.tolist():
        assert re.fullmatch(r"[a-z0-9-]+\.(org|com|net|info|edu)", d), d
    assert len(set(big.domains.tolist())) == D
    src, dst = big.link_src(), big.link_dst
    intra = (big.page_domain[src] == big.page_domain[dst]).mean()
    assert 0.5 <= intra <= 0.8
    # pages of a site mostly share a subject
    subj = np.array([big.page_labels(i)[0].split(".")[1] for i in range(big.n_pages)])
    shares = []
    for d in range(D):
        s = subj[big.page_domain == d]
        if len(s) >= 50:
            _, cnt = np.unique(s, return_counts=True)
            shares.append(cnt.max() / len(s))
    assert np.median(shares) >= 0.7
    dd = big.meta["domain_definition"]
    assert isinstance(dd, str) and "domain" in dd and len(dd) > 100
    assert big.url(0).startswith("https://")


# -------------------------------------------------------------------- meta
def test_meta_topics_resolve(big):
    meta = big.meta
    assert meta["name"] == f"synthetic-{N}" and meta["seed"] == 0
    assert meta["generator_version"] == GENERATOR_VERSION
    topics = meta["topics"]
    for key in HAN_TOPICS:
        spec = topics[key]
        assert set(spec) >= {"seeds", "label", "words", "categories"}
        for s in spec["seeds"]:
            i = big.page_id(s)
            assert any(lab.startswith(spec["label"]) for lab in big.page_labels(i)), (key, s)
        for w in spec["words"] + spec["categories"]:
            assert big.word_id(w) >= 0, (key, w)
        rate = label_mask(big, spec["label"]).mean()
        assert 0.005 <= rate <= 0.04, (key, rate)
    assert topics["sports"]["seeds"] == ["Olympic Games"]
    json.dumps(meta)  # JSON-serialisable (goes into manifest.json)


# ------------------------------------------------------------------- cache
def test_cache_round_trip_and_corruption(tmp_path, monkeypatch):
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path))
    ref = generate_synthetic(3000, seed=0)
    c1 = synthetic_corpus(n_pages=3000, seed=0)
    path = synthetic_cache_path(3000, 0)
    assert path == tmp_path / f"synthetic-3000-s0-v{GENERATOR_VERSION}"
    assert (path / "manifest.json").is_file() and c1.path == path
    c2 = synthetic_corpus(n_pages=3000, seed=0)
    assert c2.path == path and not c2.link_dst.flags.writeable  # loaded from the cache, read-only mmap
    for name in ARRAYS:
        np.testing.assert_array_equal(getattr(ref, name), getattr(c2, name), err_msg=name)
    assert c2.titles.tolist() == ref.titles.tolist()
    c3 = load_corpus("synthetic-3000")
    np.testing.assert_array_equal(c3.context_terms, ref.context_terms)
    del c1, c2, c3
    # truncated array file -> CorpusFormatError on load -> regenerated
    f = path / "link_dst.npy"
    f.write_bytes(f.read_bytes()[:100])
    with pytest.raises(CorpusFormatError):
        Corpus.load(path)
    c4 = synthetic_corpus(n_pages=3000, seed=0)
    np.testing.assert_array_equal(c4.link_dst, ref.link_dst)
    del c4
    # unreadable manifest -> regenerated
    (path / "manifest.json").write_text("{not json")
    c5 = synthetic_corpus(n_pages=3000, seed=0)
    np.testing.assert_array_equal(c5.text_terms, ref.text_terms)
    # cache=False never touches the disk
    c6 = synthetic_corpus(n_pages=3000, seed=5, cache=False)
    assert c6.path is None and not synthetic_cache_path(3000, 5).exists()


# --------------------------------------------------------------- hard preset
@pytest.fixture(scope="module")
def hard() -> Corpus:
    return generate_synthetic(5000, seed=0, preset="hard")


def test_preset_names_are_validated(tmp_path, monkeypatch):
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path))
    assert PRESETS == ("default", "hard")
    for call in (lambda: generate_synthetic(1000, preset="Hard"), lambda: synthetic_corpus(1000, preset="easy"),
                 lambda: synthetic_cache_path(1000, preset="")):
        with pytest.raises(ValueError, match=r"unknown synthetic preset .*valid presets: default, hard"):
            call()
    assert not any(tmp_path.iterdir())


def test_hard_preset_deterministic_and_differs_from_default(hard):
    again = generate_synthetic(5000, seed=0, preset="hard")
    for name in ARRAYS:
        np.testing.assert_array_equal(getattr(hard, name), getattr(again, name), err_msg=name)
    assert hard.titles.tolist() == again.titles.tolist() and hard.meta == again.meta
    hard.validate()
    assert hard.meta["name"] == "synthetic-hard-5000" and hard.meta["preset"] == "hard"
    assert hard.meta["generator_version"] == GENERATOR_VERSION
    json.dumps(hard.meta)
    default = generate_synthetic(5000, seed=0)
    assert "preset" not in default.meta  # the default preset's meta (and bytes) are unchanged
    assert hard.titles.tolist() != default.titles.tolist()
    assert not np.array_equal(hard.anchor_terms[:1000], default.anchor_terms[:1000])
    other_seed = generate_synthetic(5000, seed=1, preset="hard")
    assert not np.array_equal(hard.link_dst[:1000], other_seed.link_dst[:1000])
    # same taxonomy, topics and seeds: every topic resolves and its main page exists
    for k, t in hard.meta["topics"].items():
        assert hard.titles.get(t["seeds"][0]) >= 0, k
        assert label_mask(hard, t["label"]).sum() > 20, k


def test_hard_anchor_rates_within_calibrated_ranges(hard):
    """Measured on the MediaWiki samples (benchmarks/calibrate_synthetic.py, tests/test_calibrate_synthetic.py):
    anchor == title 0.47 (ltgwiki) - 0.68 (enwiki); anchor shares a title word 0.69 - 0.87; contentless or
    generic anchors 0.8 - 1.1 %. The hard preset must fall in these ranges (small margins for sampling)."""
    from gym_crawl.benchmarks.calibrate_synthetic import anchor_stats, corpus_anchor_pairs

    pairs, url_words = corpus_anchor_pairs(hard, 20_000, seed=0)
    s = anchor_stats(pairs)
    assert 0.45 <= s["eq"] <= 0.70, s
    assert 0.67 <= s["shares_word"] <= 0.89, s
    assert 0.005 <= s["generic"] <= 0.02, s
    assert 0.55 <= url_words <= 0.85, url_words  # ~30 % of the sites use opaque ids as URLs
    d = anchor_stats(corpus_anchor_pairs(generate_synthetic(5000, seed=0), 20_000, seed=0)[0])
    assert d["generic"] > 0.08  # the default preset's 10 % generic anchors, for contrast
    # opaque URLs: pages of an opaque site have no URL tokens but keep their name in their text
    opaque = [hard.domains.index(dn) for dn in hard.meta["opaque_url_domains"]]
    assert opaque
    on = np.isin(hard.page_domain, opaque)
    assert np.all(np.diff(hard.title_ptr)[on] == 0)
    named = [int(i) for i in np.flatnonzero(on)[:200] if tokenize(hard.titles[int(i)])]
    assert len(named) > 100
    for p in named:
        assert set(tokenize(hard.titles[p])) <= set(words_of(hard, hard.text_ptr, hard.text_terms, p)), p


def test_hard_titles_rarely_name_the_topic(hard):
    """Wikispeedia: a topic word is in 1.6 % of a category's titles (median); default preset ~22 %."""
    rates = []
    for k in ("geology", "cancer", "poetry", "fiction", "cameras"):
        t = hard.meta["topics"][k]
        m = np.flatnonzero(label_mask(hard, t["label"]))
        rates.append(np.mean([bool(set(t["words"]) & set(tokenize(hard.titles[int(i)]))) for i in m]))
    assert np.median(rates) < 0.06, rates


def test_hard_preset_crawl_has_headroom():
    """Best-first reaches clearly less of the oracle on the hard preset than on the default one
    (3,000 pages, budget 50; benchmarks/calibrate_synthetic.py measures 20k pages / budget 100-200)."""
    from gym_crawl.benchmarks.calibrate_synthetic import crawl_scores, synthetic_tasks

    ratios = {}
    for preset in ("default", "hard"):
        c = generate_synthetic(3000, seed=0, preset=preset)
        ratios[preset] = [crawl_scores(c, t, 50, 1)["ratio"]
                          for t in synthetic_tasks(c, ("cancer", "fiction", "sports", "geology"))]
    assert np.mean(ratios["default"]) > 0.85, ratios
    assert np.mean(ratios["hard"]) < np.mean(ratios["default"]) - 0.2, ratios


def test_hard_cache_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path))
    ref = generate_synthetic(2000, seed=0, preset="hard")
    path = synthetic_cache_path(2000, 0, preset="hard")
    assert path == tmp_path / f"synthetic-hard-2000-s0-v{GENERATOR_VERSION}"
    assert synthetic_cache_path(2000, 0) == tmp_path / f"synthetic-2000-s0-v{GENERATOR_VERSION}"
    c1 = synthetic_corpus(n_pages=2000, seed=0, preset="hard")
    assert c1.path == path and (path / "manifest.json").is_file()
    c2 = synthetic_corpus(n_pages=2000, seed=0, preset="hard")
    assert c2.path == path and not c2.link_dst.flags.writeable  # memory-mapped from the cache
    for name in ARRAYS:
        np.testing.assert_array_equal(getattr(ref, name), getattr(c2, name), err_msg=name)
    d = synthetic_corpus(n_pages=2000, seed=0)  # the default preset has its own cache entry
    assert d.path != path and "preset" not in d.meta
    c3 = load_corpus("synthetic-hard-2000")  # the registry name maps to synthetic_corpus(preset="hard")
    np.testing.assert_array_equal(c3.anchor_terms, ref.anchor_terms)
    assert c3.meta["preset_version"] == HARD_PRESET_VERSION
    del c1, c2, c3
    # a cache written by another version of the hard preset is regenerated, not reused
    monkeypatch.setattr("gym_crawl.webgen.synthetic.HARD_PRESET_VERSION", HARD_PRESET_VERSION + 1)
    c4 = synthetic_corpus(n_pages=2000, seed=0, preset="hard")
    assert c4.path == path and c4.meta["preset_version"] == HARD_PRESET_VERSION + 1
