"""``gym-crawl bench ceiling``: hindsight rankers fitted on a task's own frontier rows and hidden labels."""
from __future__ import annotations

import json

import numpy as np
import pytest

from gym_crawl.agents import make_agent, make_env_for, run_episode
from gym_crawl.agents.base import Agent, Transition
from gym_crawl.agents.baselines import BestFirstPageAgent, GreedyOracleAgent, RandomAgent
from gym_crawl.benchmarks import ceiling, suite
from gym_crawl.cli import main

FEATURES = "hashed-transferable"  # the online classifier's default feature set
BUDGET = 40


def _env(agent, corpus, features=FEATURES):
    return make_env_for(agent, corpus=corpus, topic="geology", reward="labels", max_episode_steps=BUDGET,
                        features=features)


def _rows(corpus, seeds=(0, 1)):
    """Rows of a best-first, an oracle and random crawls of the tiny corpus' geology topic."""
    parts = []
    for inner, seed in [(BestFirstPageAgent(), 0), (GreedyOracleAgent(), 0)] + [(RandomAgent(), s) for s in seeds]:
        rec = ceiling.RowRecorder(inner)
        run_episode(_env(rec, corpus), rec, seed=seed)
        parts.append(rec.rows())
    return ceiling.Rows.concat(parts)


class _CheckArgmax(Agent):
    """Runs a HindsightRanker and checks each choice against ``w · features_of(frontier) + b`` recomputed by
    the env: the ranker reads nothing but the feature rows."""

    action_kind = "page"
    needs_observation = False

    def __init__(self, inner: ceiling.HindsightRanker):
        super().__init__()
        self.inner = inner
        self.checked = 0

    def begin_episode(self, env, rng):
        super().begin_episode(env, rng)
        self.inner.begin_episode(env, rng)

    def act(self, obs, info):
        page = self.inner.act(obs, info)
        F = self.env.frontier_pages()
        sc = self.env.features_of(F).astype(np.float64) @ self.inner.w + self.inner.b
        assert sc[list(F).index(page)] == pytest.approx(sc.max(), abs=1e-6)
        self.checked += 1
        return page

    def observe(self, transition: Transition) -> None:
        self.inner.observe(transition)


def test_recorded_rows_are_the_frontier_rows_labelled_by_the_hidden_truth(tiny_corpus):
    rec = ceiling.RowRecorder(RandomAgent())
    env = _env(rec, tiny_corpus)
    run_episode(env, rec, seed=3)
    rows = rec.rows()
    truth = env.unwrapped.view.hidden_relevance()
    assert rows.X.shape == (len(rows.y), env.unwrapped.view.feature_dim)
    assert np.array_equal(rows.y, truth[rows.page]) and rows.y.any() and not rows.y.all()
    assert rows.parent.shape == (len(rows.y), len(ceiling.PARENT_COLUMNS))
    assert ((rows.parent[:, 1] >= 0) & (rows.parent[:, 1] <= 1)).all()
    # the recorder does not change the crawl it records
    plain = run_episode(env, RandomAgent(), seed=3)
    again = run_episode(env, ceiling.RowRecorder(RandomAgent()), seed=3)
    assert np.array_equal(plain.fetched, again.fetched)


def test_the_fit_reads_only_feature_rows_and_labels(tiny_corpus):
    rows = _rows(tiny_corpus)
    w, b, wp, auc = ceiling.fit_ranker(rows, parent=False)
    assert wp is None and 0.5 < auc <= 1.0
    rng = np.random.default_rng(0)
    shuffled = ceiling.Rows(rows.X, rows.y, rng.permutation(rows.link), rng.permutation(rows.parent),
                            rng.permutation(rows.page))
    w2, b2, _, _ = ceiling.fit_ranker(shuffled, parent=False)
    assert np.array_equal(w, w2) and b == b2
    flipped = ceiling.Rows(rows.X, ~rows.y, rows.link, rows.parent, rows.page)
    assert not np.allclose(ceiling.fit_ranker(flipped, parent=False)[0], w)


def test_hindsight_ranker_crawls_by_the_rows_and_reaches_the_online_classifier(tiny_corpus):
    rows = _rows(tiny_corpus)
    w, b, _, _ = ceiling.fit_ranker(rows, parent=False)
    check = _CheckArgmax(ceiling.HindsightRanker(w, b))
    env = _env(check, tiny_corpus)
    hind = [run_episode(env, check, seed=s).relevant_found for s in range(3)]
    assert check.checked == 3 * BUDGET
    learner = make_agent("online-classifier")
    oc = [run_episode(_env(learner, tiny_corpus), learner, seed=s).relevant_found for s in range(3)]
    rnd = [run_episode(env, RandomAgent(), seed=s).relevant_found for s in range(3)]
    assert np.mean(hind) >= np.mean(oc) > np.mean(rnd)


def test_parent_truth_columns_enter_the_score(tiny_corpus):
    rows = _rows(tiny_corpus)
    w, b, wp, _ = ceiling.fit_ranker(rows, parent=True)
    assert wp is not None and wp.shape == (len(ceiling.PARENT_COLUMNS),) and np.abs(wp).sum() > 0
    ranker = ceiling.HindsightRanker(np.zeros_like(w), 0.0, np.array([0.0, 0.0, 1.0]))
    env = _env(ranker, tiny_corpus)
    r = run_episode(env, ranker, seed=0)
    assert r.steps == BUDGET
    with pytest.raises(ValueError, match="weights"):
        run_episode(env, ceiling.HindsightRanker(np.zeros(3)), seed=0)


def test_roc_auc_and_heldout_auc(tiny_corpus):
    assert ceiling.roc_auc(np.array([0, 0, 1, 1], bool), np.array([0.1, 0.2, 0.3, 0.4])) == 1.0
    assert ceiling.roc_auc(np.array([0, 1, 0, 1], bool), np.array([1.0, 1.0, 1.0, 1.0])) == 0.5
    assert ceiling.roc_auc(np.ones(3, bool), np.arange(3.0)) is None
    rows = _rows(tiny_corpus)
    fit_auc = ceiling.fit_ranker(rows, parent=False)[3]
    held = ceiling.heldout_auc(rows, parent=False)
    # pages never on both sides: the held-out AUC is a real generalization figure, below the in-sample one
    assert 0.5 < held <= fit_auc
    noise = ceiling.Rows(rows.X, np.random.default_rng(1).random(len(rows.y)) < rows.y.mean(), rows.link,
                         rows.parent, rows.page)
    assert abs(ceiling.heldout_auc(noise, parent=False) - 0.5) < 0.1


@pytest.mark.slow  # a benchmark run
def test_bench_runs_end_to_end_quick(tiny_corpus, monkeypatch, tmp_path, capsys):
    real = suite._load_corpus
    monkeypatch.setattr(suite, "_load_corpus", lambda spec: tiny_corpus if spec == "tiny" else real(spec))
    out = tmp_path / "ceil"
    rc = main(["bench", "ceiling", "--quick", "--sets", "ws-100", "--wikispeedia", "tiny", "--features", FEATURES,
               "--compare", "online-classifier", "--compare-features", FEATURES, "--out", str(out)])
    assert rc == 0
    table = capsys.readouterr().out
    assert "| hindsight features |" in table and "| hindsight +parent truth |" in table
    res = json.loads((out / "ceiling.json").read_text())
    assert res["about"]["status"] == "illustrative, not a result"
    e = res["sets"]["ws-100"]
    s = e["features"][FEATURES]
    assert s["n_tasks"] >= 1 and set(s["variants"]) == set(ceiling.VARIANTS)
    for t in e["tasks"][FEATURES]:
        assert len(t["hindsight"]["features"]) == 1  # --quick: one round
        assert all(f <= t["budget"] + 1 for v in t["hindsight"].values() for f in v)
        assert len(t["random"]) == 2 and 0.0 <= t["link_auc"] <= 1.0
    assert "0.5" in s["labels"] and s["labels"]["0.5"]["ci"][0] <= s["labels"]["0.5"]["iqm"] + 1e-9
    for t in e["tasks"][FEATURES]:
        h = t["labels"]["0.5"]  # the other half's relevant pages found: never more than all relevant pages found
        assert h["oracle"] <= t["oracle"] and h["hindsight"] <= t["budget"] + 1
        assert all(h[f"random{s}"] <= t["random"][str(s)] for s in range(2))
    for d in s["variants"].values():
        assert d["ci"][0] <= d["iqm"] + 1e-9 <= d["ci"][1] + 2e-9
    # the learner, trained on the train tasks by eval's protocol, scored against the same random and oracle
    oc = e["compare"]["online-classifier"]
    assert oc["ci"][0] <= oc["iqm"] + 1e-9 and "| online-classifier (learner) |" in table
    assert (out / "ceiling.png").stat().st_size > 1000


def test_page_fold_splits_pages_in_two_fixed_halves():
    f = ceiling.page_fold(np.arange(10_000))
    assert set(np.unique(f)) == {0, 1} and 0.45 < f.mean() < 0.55
    assert np.array_equal(f, ceiling.page_fold(np.arange(10_000)))
    u = ceiling.page_unit(np.arange(10_000))
    assert ((u >= 0) & (u < 1)).all() and np.array_equal(u >= 0.5, f == 1)
    for frac in (0.1, 0.25, 0.75):
        assert abs((u < frac).mean() - frac) < 0.02


def test_bench_bad_arguments():
    with pytest.raises(SystemExit, match="--seeds"):
        ceiling.main(["--seeds", "0"])
    with pytest.raises(SystemExit, match="--max-tasks"):
        ceiling.main(["--max-tasks", "hard=x"])
    with pytest.raises(SystemExit, match="--label-fractions"):
        ceiling.main(["--label-fractions", "1.5"])
    with pytest.raises(SystemExit, match="--rounds"):
        ceiling.main(["--rounds", "0"])
