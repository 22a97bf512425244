"""``gym-crawl bench transfer``: the fetched-page judgement, and the whole protocol on two tiny served sites —
pretrain on the training site, deploy live on the held-out one over loopback, normalize, summarize."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_docs_web import _site_files

from gym_crawl.benchmarks import docs_web as dw
from gym_crawl.benchmarks import transfer as tr
from gym_crawl.relevance.scorer import PageScores
from gym_crawl.tasks.docs_web import docs_web_tasks
from gym_crawl.tasks.task import is_test_topic

pytestmark = pytest.mark.filterwarnings("ignore:topic '.*left out:UserWarning",
                                        "ignore:.*content fingerprint.*:UserWarning")


class _Web:
    def __init__(self, urls: list[str], errors: dict[int, str]):
        self.urls, self.fetch_errors = urls, errors

    def url(self, page: int) -> str:
        return self.urls[page]


class _Scorer:
    def __init__(self, web: _Web):
        self.corpus = web


def test_url_label_reward_judges_fetched_pages_by_their_url_label():
    rules = [("http://h/", "site"), ("http://h/ref/", "site.ref"), ("http://h/ref/x/", "site.ref.x"),
             ("http://h/refs/", "site.refs")]
    web = _Web(["http://h/ref/a.html", "http://h/ref/x/b.html", "http://h/refs/c.html", "http://h/d.html",
                "http://h/ref/gone.html"], {4: "http:404"})
    r = tr.UrlLabelReward(rules, "site.ref")
    z = np.zeros(5)
    with pytest.raises(RuntimeError, match="bound web"):
        r(PageScores(z, z[:, None], z, z.astype(bool), pages=np.arange(5)))
    r.bind(_Scorer(web))
    reward, rel = r(PageScores(z, z[:, None], z, z.astype(bool), pages=np.arange(5)))
    # below the label counts, a sibling whose name merely starts the same does not, a failed fetch earns nothing
    assert reward.tolist() == [1.0, 1.0, 0.0, 0.0, 0.0] and rel.tolist() == [True, True, False, False, False]


def test_pretrain_then_deploy_live_on_the_held_out_site(tmp_path, general_source):
    """alpha (a training site) and delta (held out) are recorded and compiled as docs-web is; the learner
    pretrains on alpha's tasks only, then every agent crawls delta live from its loopback server."""
    assert not is_test_topic("alpha") and is_test_topic("delta")
    alpha = dw.Site("alpha", ("fake-alpha-doc",), "", (("guide/", "guide"), ("api/", "api")))
    delta = dw.Site("delta", ("fake-delta-doc",), "", (("tutorial/", "tutorial"), ("howto/", "howto")))
    _site_files(tmp_path / "a", "alpha", {"guide": 7, "api": 6})
    _site_files(tmp_path / "d", "delta", {"tutorial": 7, "howto": 6},
                {"robots.txt": "User-agent: *\nDisallow: /private/\n"})
    roots = [dw.SiteRoot(alpha, "fake-alpha-doc", tmp_path / "a", "index.html"),
             dw.SiteRoot(delta, "fake-delta-doc", tmp_path / "d", "index.html")]
    warc = tmp_path / "out" / dw.WARC_NAME
    warc.parent.mkdir()
    manifest = dw.record_crawl(roots, warc, progress=False)
    corpus = dw.compile_corpus(warc, manifest, tmp_path / "out" / dw.CORPUS_DIRNAME)

    out = tmp_path / "res"
    res = tr.run_transfer(corpus, roots, ["best-first", "online-classifier"], seeds=2, budgets=[6], out=out,
                          make_tasks=docs_web_tasks, min_pages=5, online_forms=["online-classifier"],
                          cli_forms=["online-classifier"])
    test = res["tasks"]
    assert {v["label"] for v in test.values()} == {"delta.tutorial", "delta.howto"}
    assert {v["kind"] for v in test.values()} == {"near", "far"}
    assert res["train_tasks"] and all(t.startswith("alpha.") for t in res["train_tasks"])
    assert list(res["served"]) == ["delta"]  # only the held-out site is deployed
    # the pretrained weights were learned offline with the general model and saved without pickle
    assert {(r["agent"], r["seed"]) for r in res["training"]} == {("online-classifier", 0), ("online-classifier", 1)}
    assert all(r["text_model"].startswith("general:") and Path(r["path"]).is_file() for r in res["training"])
    runs = {(r["agent"], r["task"], r["seed"]): r for r in res["runs"]}
    agents = ("random", "best-first", "online-classifier", "online-classifier/online", "online-classifier/as-cli")
    assert set(runs) == {(a, t, s) for a in agents for t in test for s in (0, 1)}
    for (a, t, _), r in runs.items():
        assert r["steps"] <= 6 and 0 <= r["found"] <= r["pages"] + 1
        assert r["curve"][-1] == r["found"]
        if not a.endswith("/as-cli"):  # the judgement is the reward: the env counts what the benchmark counts
            assert r["found"] == r["env_relevant_found"]
        if test[t]["kind"] == "near":  # the seed page is in the section: judged relevant live
            assert r["found"] >= 1
    # best-first crawls once per task (deterministic) and stands for every seed
    assert all(runs[("best-first", t, 1)]["run_seed"] == 0 for t in test)
    # live best-first on the served site takes the decisions offline best-first takes on its compiled copy
    offline = {r["task"]: r for r in res["offline"]}
    for t in test:
        assert runs[("best-first", t, 0)]["found"] == offline[t]["best-first"]
        assert offline[t]["oracle"] >= offline[t]["best-first"]

    summary = tr.summarize(res, seeds=2, reps=50)
    assert set(summary) == {"all", "B=6", "B=6 near", "B=6 far"}
    s = summary["all"]
    assert len(s["kept"]) + len(s["dropped"]) == len(test)
    for a in agents:
        w, ti, lo = s["agents"][a]["wtl_vs_best_first"]
        assert w + ti + lo == 2 * len(test)
    assert s["agents"]["best-first"]["wtl_vs_best_first"] == [0, 2 * len(test), 0]
    if s["kept"]:
        # random's normalized score has mean 0 on every kept task (its mean over the seeds is the 0 point)
        scores, kept, _ = tr.normalized(res, list(agents), [0, 1], s["kept"])
        assert np.allclose(scores["random"].mean(axis=0), 0.0)
        assert "| online-classifier/online |" in tr.markdown(summary)


def test_url_label_reward_with_an_inner_scheme_still_judges():
    """As ``crawl --live`` runs a learner: the env gets han2018's reward, the benchmark keeps the judgement."""
    from gym_crawl.relevance.rewards import get_reward_scheme

    web = _Web(["http://h/ref/a.html", "http://h/d.html"], {})
    r = tr.UrlLabelReward([("http://h/ref/", "site.ref")], "site.ref", get_reward_scheme("han2018"))
    r.bind(_Scorer(web))
    tfidf = np.array([0.0, 0.3])  # the second page holds a topic word, the first does not
    reward, rel = r(PageScores(np.zeros(2), np.zeros((2, 1)), tfidf, np.zeros(2, bool), pages=np.arange(2)))
    assert reward.tolist() == [-1.0, 30.0] and rel.tolist() == [False, True]
    assert r.judged == {0: True, 1: False} and r.max_reward == 30.0


@pytest.mark.parametrize("judge", ["words", "examples"])
def test_deployed_as_a_user_deploys_no_label_reaches_the_crawl(tmp_path, general_source, judge):
    """--judge words|examples: every crawl learns from the judge a live crawl has (topic words, or words and example
    files of the section drawn per seed), several pages in flight; the URL labels only score the crawl."""
    delta = dw.Site("delta", ("fake-delta-doc",), "", (("tutorial/", "tutorial"), ("howto/", "howto")))
    _site_files(tmp_path / "d", "delta", {"tutorial": 7, "howto": 6})
    alpha = dw.Site("alpha", ("fake-alpha-doc",), "", (("guide/", "guide"), ("api/", "api")))
    _site_files(tmp_path / "a", "alpha", {"guide": 7, "api": 6})
    roots = [dw.SiteRoot(alpha, "fake-alpha-doc", tmp_path / "a", "index.html"),
             dw.SiteRoot(delta, "fake-delta-doc", tmp_path / "d", "index.html")]
    warc = tmp_path / "out" / dw.WARC_NAME
    warc.parent.mkdir()
    corpus = dw.compile_corpus(warc, dw.record_crawl(roots, warc, progress=False), tmp_path / "out" / "c")
    res = tr.run_transfer(corpus, roots, ["best-first"], seeds=2, budgets=[6], out=tmp_path / "res",
                          make_tasks=docs_web_tasks, min_pages=5, online_forms=["online-classifier"], cli_forms=[],
                          concurrency=2, judge=judge, examples=2)
    assert not res["training"]  # nothing pretrained on labels: the learner runs in its online form only
    for r in res["runs"]:
        assert r["judge"] == judge and r["curve"][-1] == r["found"] and r["steps"] <= 6
        if judge == "examples":
            label = res["tasks"][r["task"]]["label"].split(".")[1]
            files = [Path(f) for f in r["examples"]]
            assert len(files) == 2 and all(f.is_file() and label in f.parts for f in files)
        else:
            assert r["examples"] is None
    with pytest.raises(ValueError, match="judge: one of"):
        tr.run_transfer(corpus, roots, ["best-first"], seeds=1, budgets=[6], out=tmp_path / "r2", judge="urls")


def test_example_files_are_members_of_the_section_and_never_its_seed(tmp_path):
    from gym_crawl.tasks.docs_web import docs_web_tasks as make

    delta = dw.Site("delta", ("fake-delta-doc",), "", (("tutorial/", "tutorial"), ("howto/", "howto")))
    _site_files(tmp_path / "d", "delta", {"tutorial": 7, "howto": 6})
    roots = [dw.SiteRoot(delta, "fake-delta-doc", tmp_path / "d", "index.html")]
    warc = tmp_path / "out" / dw.WARC_NAME
    warc.parent.mkdir()
    corpus = dw.compile_corpus(warc, dw.record_crawl(roots, warc, progress=False), tmp_path / "out" / "c")
    task = next(t for t in make(corpus, min_pages=5) if t.label == "delta.tutorial")
    seed_url = corpus.urls[corpus.page_id(task.seeds[0])]
    draws = set()
    for s in range(4):
        files = tr.example_files(corpus, task, {"delta": roots[0]}, 3, s)
        draws.add(tuple(sorted(files)))
        assert len(set(files)) == 3 and all("tutorial" in Path(f).parts for f in files)
        assert not any(seed_url.endswith(Path(f).relative_to(tmp_path / "d").as_posix()) for f in files)
    assert len(draws) > 1  # a fresh draw per seed
    assert tr.example_files(corpus, task, {"delta": roots[0]}, 3, 0) == tr.example_files(corpus, task,
                                                                                        {"delta": roots[0]}, 3, 0)
    with pytest.raises(ValueError, match="member pages on disk"):
        tr.example_files(corpus, task, {"delta": roots[0]}, 50, 0)
