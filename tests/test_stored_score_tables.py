"""A large generated web's score tables stored once per topic and copied from: ``TopicScorer.store_tables`` scores
every page and link straight into the stored files, ``attach_stored_tables`` makes them the source of the keyed
tables (a page's rows are copied, not computed, when a crawl first needs them), and a saved generated web above
``STORED_TABLES_LINKS`` links does both at a topic's first use (``use_stored_tables``). The same bits, so the same
trajectories; a stored cache that is half-written, altered or stale is never used."""
from __future__ import annotations

import json
import weakref

import numpy as np
import pytest
from conftest import make_tiny_corpus
from test_shared_scorer import _make, _same, _trajectory

import gym_crawl  # noqa: F401
import gym_crawl._io as io_mod
import gym_crawl.crawl.state as state_mod
import gym_crawl.relevance.scorer as scorer_mod
from gym_crawl.corpus import Corpus, load_corpus
from gym_crawl.relevance.topic import resolve_topic


@pytest.fixture()
def data(tmp_path, monkeypatch):
    """A private data dir, pages scored as fetched (keyed tables), a fresh process-wide scorer memo."""
    monkeypatch.setenv("GYM_CRAWL_DATA", str(tmp_path / "data"))
    monkeypatch.setattr(state_mod, "EAGER_SCORING_LINKS", 0)
    monkeypatch.setattr(scorer_mod, "_SHARED", weakref.WeakKeyDictionary())
    return tmp_path


@pytest.fixture()
def tiny(data):
    """The tiny corpus (topics with categories) saved and re-opened."""
    make_tiny_corpus(400).save(data / "c")
    return Corpus.load(data / "c", share=False)


def _scorer(corpus, topic):
    scorer_mod._SHARED.clear()
    e = _make(corpus, topic)
    return e.unwrapped.world.scorer(resolve_topic(topic, corpus))


def _computed(corpus, topic):
    """A scorer whose keyed tables compute every row (no stored tables)."""
    sc = scorer_mod.TopicScorer(_scorer(corpus, topic).text, resolve_topic(topic, corpus))
    sc._tables["tried-disk"] = True
    return sc


def _rows_equal(a, b, pages):
    """The keyed tables of scorers ``a`` and ``b`` hold the same bits for ``pages`` and their links."""
    pa, pb, la, lb = a.page_table(), b.page_table(), a.link_table(), b.link_table()
    pa.ensure_many(pages)
    pb.ensure_many(pages)
    la.ensure(pages)
    lb.ensure(pages)
    ra, rb = pa.rows(pages), pb.rows(pages)
    for x, y in ((pa.rel, pb.rel), (pa.cat, pb.cat), (pa.tfidf, pb.tfidf), (pa.label, pb.label)):
        assert np.array_equal(x[ra].view(np.uint8), y[rb].view(np.uint8))
    for p in pages.tolist():
        ia = la.bases(np.array([p]))[0] + np.arange(int(la.hi[p] - la.lo[p]))
        ib = lb.bases(np.array([p]))[0] + np.arange(int(lb.hi[p] - lb.lo[p]))
        for x, y in ((la.rel, lb.rel), (la.cat, lb.cat), (la.kw_url, lb.kw_url), (la.kw_anchor, lb.kw_anchor)):
            assert np.array_equal(x[ia].view(np.uint8), y[ib].view(np.uint8))


@pytest.mark.parametrize("topic", ["cancer", "no-categories"])
def test_stored_rows_are_the_computed_bits(tiny, topic):
    if topic == "no-categories":
        topic = {"name": "plain", "words": ["tumor"], "categories": [], "seeds": ["Cancer"]}
    name = topic if isinstance(topic, str) else "plain"
    sc = _scorer(tiny, name if isinstance(topic, str) else topic)
    path = sc.store_tables(progress=False)
    m = json.loads((path / "manifest.json").read_text())
    kc = sc.cat_columns()
    assert m["files"]["link_cat.npy"]["shape"] == [tiny.n_links, kc]
    assert kc == (0 if name == "plain" else sc.n_categories)
    assert sc.attach_stored_tables() and sc.stored_source and sc.page_table().keyed and sc.link_table().keyed
    rng = np.random.default_rng(0)
    pages = rng.choice(tiny.n_pages, 120, replace=False).astype(np.int64)
    _rows_equal(sc, _computed(tiny, name if isinstance(topic, str) else topic), pages)
    # the same files as save_tables writes from complete in-memory tables, value for value
    full = _computed(tiny, name if isinstance(topic, str) else topic)
    p2 = full.save_tables(path.with_name("saved"))
    for f in ("page_rel", "page_cat", "page_tfidf", "link_rel", "link_cat", "link_kw_url", "link_kw_anchor"):
        a, b = np.load(path / f"{f}.npy"), np.load(p2 / f"{f}.npy")
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.view(np.uint8), b.view(np.uint8))
    # the dense mapping of stored tables without category columns reads zeros there
    dense = _computed(tiny, name if isinstance(topic, str) else topic)
    assert dense.load_tables(path)
    assert dense.page_table().cat.shape == (tiny.n_pages, sc.n_categories)
    assert np.array_equal(dense.link_table().cat, full.link_table().cat)


def test_generated_web_stores_its_tables_at_first_use_same_trajectories(data, monkeypatch):
    corpus = load_corpus("powerlaw-2000")
    assert corpus.meta.get("generator") == "powerlaw"
    topic = corpus.meta["default_topic"]
    want = _trajectory(_make(corpus, topic), seed=3)  # 2,000 pages: below the threshold, rows computed
    sc0 = _make(corpus, topic).unwrapped.scorer
    assert not sc0.stores_tables() and not sc0.stored_source
    monkeypatch.setattr(scorer_mod, "STORED_TABLES_LINKS", 0)
    scorer_mod._SHARED.clear()
    env = _make(corpus, topic)
    got = _trajectory(env, seed=3)
    sc = env.unwrapped.scorer
    assert sc.stores_tables() and sc.stored_source and sc.page_table().keyed
    assert (sc.tables_path() / "manifest.json").is_file()
    assert sc.page_table().n_rows < corpus.n_pages  # memory follows the pages scored, not the web
    assert _same(got, want)
    scorer_mod._SHARED.clear()  # a second process: attaches the stored tables, stores nothing again
    stamp = (sc.tables_path() / "manifest.json").stat().st_mtime_ns
    env2 = _make(corpus, topic)
    assert _same(_trajectory(env2, seed=3), want) and env2.unwrapped.scorer.stored_source
    assert (sc.tables_path() / "manifest.json").stat().st_mtime_ns == stamp


@pytest.mark.parametrize("damage", ["partial-only", "no-manifest", "truncated", "altered", "stale-version",
                                    "stale-keywords"])
def test_half_written_or_stale_store_is_never_used(tiny, damage, monkeypatch):
    sc = _scorer(tiny, "cancer")
    path = sc.store_tables(progress=False)
    if damage == "partial-only":  # a writer that died before the rename: only its .partial directory exists
        path.rename(path.with_name(f".{path.name}.999999-deadbeef.partial"))
    elif damage == "no-manifest":
        (path / "manifest.json").unlink()
    elif damage == "truncated":
        f = path / "link_rel.npy"
        f.write_bytes(f.read_bytes()[:-8])
    elif damage == "altered":  # same size, one score changed: the sha256 check refuses it
        f = path / "page_rel.npy"
        b = bytearray(f.read_bytes())
        b[-4:] = b"\x00\x00\x00\x3f"
        f.write_bytes(bytes(b))
    elif damage == "stale-version":  # tables of another format version
        monkeypatch.setattr(scorer_mod, "SCORE_TABLES_VERSION", scorer_mod.SCORE_TABLES_VERSION + 1)
    sc2 = _scorer(tiny, "cancer")
    if damage == "stale-keywords":  # other keywords: another key, so the stored flags are not these
        sc2.set_keywords(["tumor", "poetry"])
    assert sc2.attach_stored_tables() is False and not sc2.stored_source


def test_a_store_that_fails_midway_leaves_nothing_and_the_crawl_computes(tiny, monkeypatch):
    want = _trajectory(_make(tiny, "cancer"), seed=2)

    def boom(*a, **k):  # the files are written into the .partial directory; renaming it fails
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(io_mod, "replace_dir", boom)
    monkeypatch.setattr(scorer_mod, "STORED_TABLES_LINKS", 0)
    tiny.meta["generator"] = "test"
    scorer_mod._SHARED.clear()
    env = _make(tiny, "cancer")
    with pytest.warns(UserWarning, match="cannot store the score tables"):
        env.reset(seed=2)
    sc = env.unwrapped.scorer
    assert not sc.stored_source and not sc.tables_path().exists()
    assert not list(sc.tables_path().parent.glob("*partial*"))
    monkeypatch.undo()
    assert _same(_trajectory(env, seed=2), want)


def test_set_keywords_detaches_the_stored_tables(tiny):
    sc = _scorer(tiny, "cancer")
    sc.store_tables(progress=False)
    assert sc.attach_stored_tables()
    sc.set_keywords(["poetry"])
    assert not sc.stored_source
    ref = _computed(tiny, "cancer")
    ref.set_keywords(["poetry"])
    _rows_equal(sc, ref, np.arange(50, dtype=np.int64))


def test_processes_starting_at_once_store_the_tables_once(data):
    """Two processes whose first use of a topic comes at the same moment: one stores, the other waits and reads."""
    import subprocess
    import sys
    import textwrap

    c = make_tiny_corpus(400)
    c.meta["generator"] = "test"
    c.save(data / "c")
    code = textwrap.dedent(f"""
        import gym_crawl.relevance.scorer as S
        from gym_crawl.corpus import Corpus
        from gym_crawl.relevance.topic import resolve_topic
        from gym_crawl.text.model import get_text_model
        S.STORED_TABLES_LINKS = 0
        stored = []
        orig = S.TopicScorer.store_tables
        def counting(self, *a, **k):
            stored.append(1)
            return orig(self, *a, **k)
        S.TopicScorer.store_tables = counting
        c = Corpus.load({str(data / "c")!r}, share=False)
        sc = S.TopicScorer(get_text_model(c), resolve_topic("cancer", c))
        sc.page_table()
        print(len(stored), sc.stored_source)
    """)
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert sorted(int(o[0]) for o in outs) == [0, 1] and all(o[1] == "True" for o in outs)


def test_fill_from_store_gives_the_rows_ensure_gives(tiny):
    sc = _scorer(tiny, "cancer")
    sc.store_tables(progress=False)
    assert sc.attach_stored_tables()
    ref = _computed(tiny, "cancer")
    rng = np.random.default_rng(1)
    for _ in range(5):  # batches with repeats and pages seen before
        pages = rng.choice(tiny.n_pages, 40).astype(np.int64)
        rows = sc.fill_from_store(pages)
        assert np.array_equal(rows, sc.page_table().rows(pages))
        assert sc.link_table().bases(pages).min() >= 0
        _rows_equal(sc, ref, np.unique(pages))
    assert ref.fill_from_store(pages) is None  # no store attached: nothing done


def test_batched_crawls_over_a_store_match_computed_ones(data, monkeypatch):
    import gymnasium as gym

    from gym_crawl.envs.vector import WikiCrawlVectorEnv

    fills = []  # pages of each fill the batched step left to Python
    python_fill = WikiCrawlVectorEnv._fill_missing
    monkeypatch.setattr(WikiCrawlVectorEnv, "_fill_missing", lambda self, p: (fills.append(len(p)),
                                                                              python_fill(self, p)))

    def run():
        scorer_mod._SHARED.clear()
        fills.clear()
        v = gym.make_vec("WikiCrawl-v3", num_envs=8, vectorization_mode="vector_entry_point", corpus="powerlaw-2000",
                         topic="geology")
        obs, _ = v.reset(seed=4)
        rng = np.random.default_rng(4)
        out = []
        for _ in range(120):
            obs, r, te, tr, info = v.step((rng.random(8) * obs["mask"].sum(1)).astype(np.int64))
            out += [obs["candidates"].copy(), obs["state"].copy(), r.copy(), te.copy(), tr.copy()]
        return out, v.unwrapped.envs[0].scorer, list(fills)

    want, sc0, computed = run()
    assert not sc0.stored_source
    monkeypatch.setattr(scorer_mod, "STORED_TABLES_LINKS", 0)
    got, sc, stored = run()
    assert sc.stored_source and _same(got, want)
    # over a store the compiled step copies first-fetched pages' rows itself: Python fills only when a table grows
    assert len(computed) > 50 and len(stored) < len(computed) // 4


def test_a_single_env_over_a_store_fills_in_its_compiled_step(data, monkeypatch):
    import gymnasium as gym

    fills = []  # pages the compiled single step left to Python to fill
    python_fill = state_mod.CrawlState.page_reward
    monkeypatch.setattr(state_mod.CrawlState, "page_reward", lambda self, p: (fills.append(p), python_fill(self, p))[1])

    def run():
        scorer_mod._SHARED.clear()
        fills.clear()
        env = gym.make("WikiCrawl-v3", corpus="powerlaw-2000", topic="geology")
        obs, info = env.reset(seed=5)
        assert env.unwrapped._cstep is not None
        rng = np.random.default_rng(5)
        out = []
        for _ in range(150):
            a = int(rng.choice(np.flatnonzero(info["action_mask"])))
            obs, r, te, tr, info = env.step(a)
            out += [obs["candidates"].copy(), obs["state"].copy(), np.array([r, te, tr, info["fetched_page"]])]
            if te or tr:
                obs, info = env.reset()
        return out, env.unwrapped.scorer, list(fills)

    want, sc0, computed = run()
    assert not sc0.stored_source
    monkeypatch.setattr(scorer_mod, "STORED_TABLES_LINKS", 0)
    got, sc, stored = run()
    assert sc.stored_source and _same(got, want)
    assert len(computed) > 50 and len(stored) < len(computed) // 4  # Python fills only when a table grows


def test_the_compiled_fill_gives_the_rows_fill_from_store_gives(tiny):
    from gym_crawl.relevance.rewards import get_reward_scheme
    from gym_crawl.relevance.score_kernels import fill_store_rows

    ref = _scorer(tiny, "cancer")
    ref.store_tables(progress=False)
    assert ref.attach_stored_tables()
    sc = scorer_mod.TopicScorer(ref.text, resolve_topic("cancer", tiny))
    assert sc.attach_stored_tables()
    reward = (("test",), get_reward_scheme("han2018").elementwise())
    assert _computed(tiny, "cancer").store_fill(reward).on is False  # no store: left to fill_from_store
    assert sc.store_fill(None).on is False  # no reward form: left to Python
    rng = np.random.default_rng(3)
    compiled = fallback = stale = 0
    f = sc.store_fill(reward)
    for _ in range(12):  # batches with repeats and pages seen before; the link table grows on the way
        pages = rng.choice(tiny.n_pages, 60).astype(np.int64)
        ref.fill_from_store(pages, reward)
        if fill_store_rows(pages, f):
            compiled += 1
        else:
            gen = (sc.page_table().gen, sc.link_table().gen)
            sc.fill_from_store(pages, reward)  # grows the tables
            fallback += 1
            stale += (sc.page_table().gen, sc.link_table().gen) != gen and not fill_store_rows(pages[:1], f)
            f = sc.store_fill(reward)
        pa, pb, la, lb = ref.page_table(), sc.page_table(), ref.link_table(), sc.link_table()
        n, ln = pa.n_rows, la.n_rows
        assert (pb.n_rows, lb.n_rows, lb.n_pages_scored) == (n, ln, la.n_pages_scored)
        assert np.array_equal(pa.rows(pages), pb.rows(pages)) and np.array_equal(la.bases(pages), lb.bases(pages))
        for x, y in ((pa.row_page, pb.row_page), (pa.rel, pb.rel), (pa.cat, pb.cat), (pa.tfidf, pb.tfidf),
                     (pa.label, pb.label), *zip(pa.reward_rows(reward[0]), pb.reward_rows(reward[0]))):
            assert np.array_equal(x[:n].view(np.uint8), y[:n].view(np.uint8))
        for x, y in ((la.rel, lb.rel), (la.cat, lb.cat), (la.kw_url, lb.kw_url), (la.kw_anchor, lb.kw_anchor)):
            assert np.array_equal(x[:ln].view(np.uint8), y[:ln].view(np.uint8))
    assert compiled > 0 and fallback > 0 and stale == fallback  # a bundle of replaced arrays fills nothing


def test_fill_from_store_caches_the_rewards_each_built_in_scheme_gives(tiny):
    from gym_crawl.relevance.rewards import BinaryReward, LabelReward, ThresholdReward, get_reward_scheme
    from gym_crawl.relevance.scorer import PageScores

    sc = _scorer(tiny, "cancer")
    sc.store_tables(progress=False)
    assert sc.attach_stored_tables()
    pt = sc.page_table()
    # the registered schemes, and tiers whose thresholds sit on float32 roundings of stored cosines (numpy compares a
    # float32 array with a Python float in float32), a tier whose value equals the miss, unsorted tiers
    vals = np.unique(np.asarray(sc._source["page_rel"]))
    edge = [float(vals[len(vals) // 3]), float(vals[len(vals) // 2]), 0.4]
    schemes = [get_reward_scheme(n, labelled=lab) for n in ("han2018", "thesis", "binary", "labels")
               for lab in (False, True)]
    schemes += [ThresholdReward("edge", [(edge[0], 5.0), (edge[1], -1.0), (edge[2], 2.5)], word_reward=7.0),
                ThresholdReward("edge2", [(edge[2], 3.0), (edge[0], 9.0)], word_reward=1.0, miss=0.25),
                BinaryReward(labelled=True), LabelReward()]
    rng = np.random.default_rng(2)
    for i, scheme in enumerate(schemes):
        form = scheme.elementwise()
        assert form is not None, scheme.name
        key = ("test", i)
        pages = rng.choice(tiny.n_pages, 200).astype(np.int64)
        rows = sc.fill_from_store(pages, (key, form))
        rw = pt.reward_rows(key)
        assert rw[2][rows].all()
        want_r, want_rel = scheme(PageScores(pt.rel[rows], pt.cat[rows], pt.tfidf[rows], pt.label[rows], pages))
        assert np.array_equal(rw[0][rows].view(np.uint32), want_r.astype(np.float32).view(np.uint32)), scheme.name
        assert np.array_equal(rw[1][rows], want_rel), scheme.name


def test_schemes_without_an_elementwise_form_are_left_to_python():
    from gym_crawl.relevance.rewards import CallableReward, ThresholdReward

    class Tweaked(ThresholdReward):
        pass

    assert CallableReward(lambda s: s.rel).elementwise() is None
    assert Tweaked("t", [(0.5, 1.0)]).elementwise() is None  # a subclass may compute otherwise
