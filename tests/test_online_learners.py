"""The issue-10 learners: online link classifier (ACHE-style) and deep-deep-style hashed Q-learning.
Update rules on hand-computed examples, the row store and replay memories, the protocol, seeded
determinism, save -> load -> same actions, and that the classifier learns what leads to relevant pages."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import gym_crawl  # noqa: F401
from gym_crawl.agents import Agent, make_agent, make_env_for, run_episode, run_episodes
from gym_crawl.agents.hashed.hashed_q import ExperienceReplay, HashedQAgent, q_sgd_step, q_targets
from gym_crawl.agents.hashed.online_classifier import (
    FrontierRows,
    OnlineClassifierAgent,
    SparseMemory,
    logistic_sgd_step,
)

LEARNERS = ["online-classifier", "hashed-q"]


def _env(agent, corpus, steps=25, **kw):
    return make_env_for(agent, corpus=corpus, topic="geology", reward="labels", max_episode_steps=steps, **kw)


# ------------------------------------------------------------------------------- update rules by hand
def test_logistic_sgd_step_by_hand():
    w = np.zeros(5)
    indptr, cols, vals = np.array([0, 2]), np.array([1, 3], np.int32), np.array([0.6, 0.8], np.float32)
    b = logistic_sgd_step(w, 0.0, indptr, cols, vals, np.array([1.0]), np.array([1.0]), lr=0.5, l2=0.0)
    # p = σ(0) = 0.5, gradient (p − y) = −0.5: w += 0.5·0.5·x, b += 0.25
    np.testing.assert_allclose(w, [0, 0.15, 0, 0.2, 0], rtol=1e-6)
    assert b == pytest.approx(0.25)
    # a negative example with L2: w ← w(1 − lr·l2) − lr·(p − 0)·x
    w2 = w.copy()
    z = 0.15 * 0.6 + 0.2 * 0.8 + 0.25
    p = 1 / (1 + np.exp(-z))
    b2 = logistic_sgd_step(w2, b, indptr, cols, vals, np.array([0.0]), np.array([2.0]), lr=0.5, l2=0.1)
    want = w * (1 - 0.05)
    want[[1, 3]] -= 0.5 * 2.0 * p * np.array([0.6, 0.8])
    np.testing.assert_allclose(w2, want, rtol=1e-6)
    assert b2 == pytest.approx(0.25 - 0.5 * 2.0 * p)


def test_q_targets_by_hand():
    # experience 0 has next rows a (cols 0) and b (col 1); experience 1 has none; experience 2 next row c (col 2)
    N = sp.csr_matrix(np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]], np.float32))
    group = np.array([0, 0, 2])
    r = np.array([1.0, 0.5, 0.0])
    w_on = np.array([2.0, 3.0, -1.0])  # online prefers b in experience 0
    w_tg = np.array([5.0, 1.0, 4.0])  # target values a=5, b=1, c=4
    y = q_targets(N, group, 3, r, w_on, 0.0, w_tg, 0.0, gamma=0.5, double=True)
    np.testing.assert_allclose(y, [1.0 + 0.5 * 1.0, 0.5, 0.0 + 0.5 * 4.0])  # target evaluates online's choice
    y = q_targets(N, group, 3, r, w_on, 0.0, w_tg, 0.0, gamma=0.5, double=False)
    np.testing.assert_allclose(y, [1.0 + 0.5 * 5.0, 0.5, 2.0])  # vanilla: max of the target
    empty = sp.csr_matrix((0, 3), dtype=np.float32)
    np.testing.assert_allclose(q_targets(empty, np.zeros(0, int), 3, r, w_on, 0, w_tg, 0, 0.5), r)


def test_q_sgd_step_by_hand():
    w = np.array([1.0, 0.0, 0.0])
    X = (np.array([0, 1, 3]), np.array([0, 1, 2], np.int32), np.array([1.0, 0.5, 0.5], np.float32))
    y = np.array([3.0, 1.0])
    b = q_sgd_step(w, 0.5, X, y, lr=0.2, l2=0.0)
    # q = [1.5, 0.5]; δ = [1.5, 0.5]; ‖x‖² + 1 = [2, 1.5]; step (lr / B) = 0.1
    d0, d1 = 0.1 * 1.5 / 2.0, 0.1 * 0.5 / 1.5
    np.testing.assert_allclose(w, [1.0 + d0, 0.5 * d1, 0.5 * d1])
    assert b == pytest.approx(0.5 + d0 + d1)


def test_q_step_reduces_the_td_error():
    rng = np.random.default_rng(0)
    X = sp.random(20, 50, density=0.2, random_state=1, format="csr", dtype=np.float32)
    y = rng.normal(size=20)
    w = np.zeros(50)
    b = 0.0
    err = []
    for _ in range(200):
        b = q_sgd_step(w, b, (X.indptr, X.indices, X.data), y, lr=0.5, l2=0.0)
        err.append(float(np.mean((X @ w + b - y) ** 2)))
    assert err[-1] < 0.2 * err[0] and all(np.isfinite(err))


# ------------------------------------------------------------------------------------ stores
def test_frontier_rows_latest_scores_and_compaction():
    fr = FrontierRows()
    fr.reset(10)
    fr.add(np.array([2, 5]), sp.csr_matrix(np.array([[1.0, 0, 2], [0, 1.0, 0]], np.float32)))
    w = np.array([1.0, 10.0, 100.0])
    np.testing.assert_allclose(fr.scores(np.array([5, 2]), w, 0.5), [10.5, 201.5])
    fr.add(np.array([2]), sp.csr_matrix(np.array([[0, 0, 1.0]], np.float32)))  # page 2 re-parented: new row
    np.testing.assert_allclose(fr.scores(np.array([2]), w), [100.0])
    fr.add(np.array([7, 8, 9]), sp.csr_matrix(np.eye(3, dtype=np.float32)))
    fr.compact(np.array([2]))
    assert fr.n_rows == 1
    np.testing.assert_allclose(fr.scores(np.array([2]), w), [100.0])
    cols, vals = fr.row(2)
    assert cols.tolist() == [2] and vals.tolist() == [1.0]
    with pytest.raises(KeyError):
        fr.scores(np.array([5]), w)
    fr.reset(10)
    assert fr.n_rows == 0 and fr.n_keyed == 0 and np.all(fr.latest(np.arange(10)) == -1)


def test_sparse_memory_ring_and_round_trip():
    m = SparseMemory(3)
    for i in range(5):
        m.add(np.array([i], np.int32), np.array([1.0], np.float32), float(i % 2))
    assert len(m) == 3 and m.pos == 2
    assert sorted(int(c[0]) for c, _, _ in m.items) == [2, 3, 4]
    m2 = SparseMemory(3)
    m2.load(m.state("x_"), "x_")
    assert m2.pos == m.pos and [(c.tolist(), v.tolist(), y) for c, v, y in m2.items] == \
        [(c.tolist(), v.tolist(), y) for c, v, y in m.items]
    with pytest.raises(ValueError, match="capacity"):
        SparseMemory(2).load(m.state("x_"), "x_")


def test_experience_replay_round_trip():
    er = ExperienceReplay(4, max_next=2)
    nxt = sp.csr_matrix(np.eye(3, dtype=np.float32))
    er.add(np.array([0], np.int32), np.array([1.0], np.float32), nxt, 1.0, False)
    er.add(np.array([1], np.int32), np.array([0.5], np.float32), None, 0.0, True)
    assert er.items[0][2].shape[0] == 2  # capped at max_next
    er2 = ExperienceReplay(4, max_next=2)
    er2.load(er.state(), 3)
    X, N, group, r = er2.batch(np.array([0, 1]), 3)
    assert X[0].tolist() == [0, 1, 2] and X[1].tolist() == [0, 1]  # indptr and columns of the two x rows
    assert N.shape == (2, 3) and group.tolist() == [0, 0] and r.tolist() == [1.0, 0.0]


# -------------------------------------------------------------------------------- agents
@pytest.mark.parametrize("name", LEARNERS)
def test_protocol_determinism_and_save_load(tiny_corpus, tmp_path, name):
    runs = []
    for _ in range(2):
        agent = make_agent(name)
        res = run_episodes(_env(agent, tiny_corpus), agent, 2, seed=3)
        assert all(r.steps == 25 and r.invalid_actions == 0 for r in res)
        runs.append([r.fetched.tolist() for r in res])
    assert runs[0] == runs[1], f"{name}: same seed, different crawl"
    path = agent.save(tmp_path / f"{name}.npz")
    loaded = Agent.load(path)
    assert type(loaded) is type(agent)
    for k, v in agent.state_dict().items():
        np.testing.assert_array_equal(loaded.state_dict()[k], v)
    a = run_episode(_env(agent, tiny_corpus), agent, seed=11)
    b = run_episode(_env(loaded, tiny_corpus), loaded, seed=11)
    assert a.fetched.tolist() == b.fetched.tolist(), f"{name}: the loaded agent acts differently"


@pytest.mark.parametrize("cls", [OnlineClassifierAgent, HashedQAgent])
def test_bad_config_is_a_clear_error(cls):
    with pytest.raises(ValueError, match="unknown option"):
        cls(learning_rate=0.1)
    with pytest.raises(ValueError, match="epsilon"):
        cls(epsilon=2.0)
    with pytest.raises(ValueError, match="lr"):
        cls(lr="fast")


def test_hashed_q_gamma_range():
    with pytest.raises(ValueError, match="gamma"):
        HashedQAgent(gamma=1.0)


def test_feature_option_builds_that_env(tiny_corpus):
    agent = make_agent("online-classifier", features="transferable")
    env = _env(agent, tiny_corpus)
    assert env.unwrapped.view.feature_set_name == "transferable"
    run_episode(env, agent, seed=0)
    assert len(agent.w) == env.unwrapped.view.feature_dim
    other = _env(make_agent("online-classifier"), tiny_corpus)
    with pytest.raises(ValueError, match="feature set"):
        run_episode(other, agent, seed=0)


def test_classifier_learns_what_leads_to_relevant_pages(tiny_corpus):
    """After a few crawls, the classifier ranks truly relevant frontier pages above the others (its
    labels are fetched pages' rewards only; the ground truth is read here to *check* it)."""
    agent = make_agent("online-classifier", epsilon=0.5)  # explore: see irrelevant pages too
    env = _env(agent, tiny_corpus, steps=60)
    run_episodes(env, agent, 3, seed=0)
    base = env.unwrapped
    F = base.view.frontier_pages().copy()
    truth = base.view.hidden_relevance()[F]
    assert 0 < truth.sum() < len(F)
    p = agent.predict_proba(F)
    # AUC: probability that a random relevant page outranks a random irrelevant one
    pos, neg = p[truth], p[~truth]
    auc = (pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean()
    assert auc > 0.7, f"AUC {auc:.2f}"
    assert agent.n_pos > 0 and agent.n_neg > 0


def test_learners_beat_random_on_tiny(tiny_corpus):
    found = {}
    for name in ["random", *LEARNERS]:
        agent = make_agent(name)
        found[name] = np.mean([r.relevant_found for r in run_episodes(_env(agent, tiny_corpus, steps=40), agent, 3,
                                                                      seed=0)])
    assert found["online-classifier"] > found["random"] and found["hashed-q"] > found["random"], found
