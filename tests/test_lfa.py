"""Han 2018's linear SARSA crawlers and the thesis variant: update rules, set-B exactness, staleness,
determinism, persistence, and the thesis' discretization."""
from __future__ import annotations

import numpy as np
import pytest

import gym_crawl  # noqa: F401  (registers WikiCrawl-v0)
from gym_crawl.agents import make_agent, make_env_for, run_episode, run_episodes
from gym_crawl.agents.base import Agent, Transition
from gym_crawl.agents.linear.lfa import LFAAgent, PairIndex, ThesisLFAAgent, lfa_update
from gym_crawl.envs.wiki_crawl import FrontierChanges
from gym_crawl.features.thesis import ThesisFeatures, disc_change, disc_change_code, disc_distance, disc_relevance


def _env(corpus, features="han2018", reward="han2018", steps=60, topic="geology", **kw):
    """A page-mode env (the LFA agents' action mode) truncated by Gymnasium's TimeLimit after ``steps``."""
    return make_env_for("lfa-async", env_id="WikiCrawl-v0", corpus=corpus, topic=topic, features=features,
                        reward=reward, max_episode_steps=steps, **kw)


# ---------------------------------------------------------------- update rules, by hand
X = np.array([1.0, 0.0, 1.0])
W = np.array([0.5, -1.0, 2.0])          # q̂(s, a) = 0.5 + 2.0 = 2.5


def test_relevant_update_by_hand() -> None:
    # w + α (r − q̂) x = [0.5, -1, 2] + 0.1 (30 − 2.5) [1, 0, 1] = [3.25, -1, 4.75]
    w = lfa_update(W, X, 2.5, 30.0, q_next=7.0, alpha=0.1, gamma=0.9, relevant=True)
    np.testing.assert_allclose(w, [3.25, -1.0, 4.75])
    # the moderated rule treats relevant pages the same way (Algorithm 1 line 33)
    np.testing.assert_allclose(lfa_update(W, X, 2.5, 30.0, 7.0, alpha=0.1, gamma=0.9, rule="moderated",
                                          relevant=True), w)


def test_original_sarsa_update_by_hand() -> None:
    # δ = r + γ q̂' − q̂ = −1 + 0.9·4 − 2.5 = 0.1 → w + 0.1·0.1·x = [0.51, -1, 2.01]
    w = lfa_update(W, X, 2.5, -1.0, q_next=4.0, alpha=0.1, gamma=0.9)
    np.testing.assert_allclose(w, [0.51, -1.0, 2.01])
    # no next action → q̂' = 0: δ = −1 − 2.5 = −3.5 → w − 0.35 x
    np.testing.assert_allclose(lfa_update(W, X, 2.5, -1.0, None, alpha=0.1, gamma=0.9), [0.15, -1.0, 1.65])


def test_moderated_update_by_hand() -> None:
    # Eq. (4): r + γ(q̂' − δ) − q̂ with δ = 0.1: −1 + 0.9·(4 − 0.1) − 2.5 = 0.01 → w + 0.1·0.01·x
    w = lfa_update(W, X, 2.5, -1.0, q_next=4.0, alpha=0.1, gamma=0.9, rule="moderated")
    np.testing.assert_allclose(w, [0.501, -1.0, 2.001])
    # = the original update with step α(1 − γ), as Han note
    np.testing.assert_allclose(w, lfa_update(W, X, 2.5, -1.0, 4.0, alpha=0.1 * (1 - 0.9), gamma=0.9))


def test_thesis_update_ignores_relevance() -> None:
    # the thesis always applies SARSA: r=30, γ=0.3, q̂'=4: δ = 30 + 1.2 − 2.5 = 28.7 → w + 0.01·28.7·x
    w = lfa_update(W, X, 2.5, 30.0, q_next=4.0, alpha=0.01, gamma=0.3, rule="thesis", relevant=True)
    np.testing.assert_allclose(w, [0.787, -1.0, 2.287])
    with pytest.raises(ValueError, match="rule"):
        lfa_update(W, X, 2.5, 1.0, 0.0, alpha=0.1, gamma=0.9, rule="bogus")


# ------------------------------------------------------------ the update through the agent
@pytest.mark.parametrize("name", ["lfa-async", "lfa-sync", "lfa-moderated"])
def test_agent_applies_algorithm_1(tiny_corpus, name: str) -> None:
    """Each step's weight change equals the hand formula on the rows the env reports."""
    env = _env(tiny_corpus, steps=40)
    base = env.unwrapped
    agent = make_agent(name, alpha=0.01, gamma=0.9, epsilon=0.0)
    obs, info = env.reset(seed=3)
    agent.begin_episode(base.view, np.random.default_rng(3))
    rule = "moderated" if name == "lfa-moderated" else "original"
    n_rel = n_sarsa = 0
    for _ in range(30):
        w0 = agent.w.copy()
        page = agent.act(obs, info)
        x = base.view.features_of(np.array([page]))[0].astype(np.float64)
        obs2, r, term, trunc, info2 = env.step(page)
        upd = np.array(base.view.frontier_changes().updated)
        if r > 0:
            expect = w0 + 0.01 * (r - x @ w0) * x
            n_rel += 1
        else:
            qn = float((base.view.features_of(upd).astype(np.float64) @ w0).max()) if len(upd) else 0.0
            expect = lfa_update(w0, x, float(x @ w0), r, qn, alpha=0.01, gamma=0.9, rule=rule)
            n_sarsa += 1
        agent.observe(Transition(obs, page, r, obs2, term, trunc, info2))
        np.testing.assert_allclose(agent.w, expect, rtol=1e-6, atol=1e-9)
        obs, info = obs2, info2
        if term or trunc:
            break
    assert n_rel > 0 and n_sarsa > 0   # both branches exercised


# --------------------------------------------------------------- synchronous exactness
def test_sync_picks_the_exact_argmax_of_the_current_w(tiny_corpus) -> None:
    """Set-B grouping gives the same best score as scoring the whole frontier (env.argmax_frontier)."""
    env = _env(tiny_corpus, steps=80, topic="cancer")
    base = env.unwrapped
    agent = make_agent("lfa-sync", epsilon=0.0, alpha=0.05)
    d = base.view.feature_dim
    agent.load_state_dict({"w": np.random.default_rng(0).normal(size=d)})   # no ties by accident
    obs, info = env.reset(seed=1)
    agent.begin_episode(base.view, np.random.default_rng(1))
    for _ in range(60):
        F = np.array(base.view.frontier_pages())
        q_all = base.view.features_of(F).astype(np.float32) @ agent.w.astype(np.float32)
        assert agent._pairs is not None and len(agent._pairs) == len(F)
        page = agent.act(obs, info)
        q_page = float(base.view.features_of(np.array([page]))[0] @ agent.w.astype(np.float32))
        env_best = base.view.argmax_frontier(agent.w)
        assert q_page == pytest.approx(float(q_all.max()), rel=1e-5, abs=1e-5)
        assert q_page == pytest.approx(float(q_all[np.flatnonzero(env_best == F)[0]]), rel=1e-5, abs=1e-5)
        obs2, r, term, trunc, info2 = env.step(page)
        agent.observe(Transition(obs, page, r, obs2, term, trunc, info2))
        obs, info = obs2, info2
        if term or trunc:
            break


def test_pair_index_groups_identical_rows() -> None:
    names = ["s.x", "s.y", "a.u", "a.v", "bias"]
    idx = PairIndex(20, names)
    rows = np.array([[1, 0, 1, 0, 1], [1, 0, 1, 0, 1], [0, 1, 1, 0, 1], [0, 1, 0, 1, 1]], np.float32)
    idx.assign(np.array([3, 5, 7, 9]), rows)
    assert len(idx) == 4 and idx.n_active == 3 and idx.n_s == 2 and idx.n_a == 2
    w = np.array([0.0, 2.0, 0.0, 1.0, 0.5])
    pids, sc = idx.pair_scores(w)
    np.testing.assert_allclose(sorted(sc), sorted([0.5, 2.5, 3.5]))
    assert idx.best(w, np.random.default_rng(0)) == (9, 3.5)
    np.testing.assert_allclose(idx.row(9), rows[3])
    # page 9 changes row → moves to the pair of pages 3 and 5; its old pair becomes inactive
    idx.assign(np.array([9]), rows[:1])
    assert idx.n_active == 2 and len(idx) == 4
    assert idx.remove(9) and not idx.remove(9) and 9 not in idx and len(idx) == 3
    best, q = idx.best(np.array([1.0, 0, 0, 0, 0]), np.random.default_rng(0))
    assert best in (3, 5) and q == 1.0
    idx.clear()
    assert len(idx) == 0 and idx.n_active == 0 and 3 not in idx


class _ListPairs:
    """Reference model of PairIndex: dicts of row tuples and Python member lists (append, swap-remove)."""

    def __init__(self, s_cols, a_cols):
        self.s_cols, self.a_cols = s_cols, a_cols
        self.rows_s, self.rows_a, self.pairs, self.members, self.page_pair = {}, {}, {}, [], {}

    def assign(self, pages, X):
        for p, x in zip(pages.tolist(), X):
            sid = self.rows_s.setdefault(x[self.s_cols].tobytes(), len(self.rows_s))
            aid = self.rows_a.setdefault(x[self.a_cols].tobytes(), len(self.rows_a))
            pid = self.pairs.setdefault((sid, aid), len(self.pairs))
            if pid == len(self.members):
                self.members.append([])
            if self.page_pair.get(p) == pid:
                continue
            if p in self.page_pair:
                self.remove(p)
            self.members[pid].append(p)
            self.page_pair[p] = pid

    def remove(self, p):
        if p not in self.page_pair:
            return False
        m = self.members[self.page_pair.pop(p)]
        i = m.index(p)
        last = m.pop()
        if last != p:
            m[i] = last
        return True


def test_pair_index_matches_a_list_model_under_random_churn() -> None:
    """Random assign / re-assign / remove / clear sequences (rows from a small alphabet, so pairs repeat,
    empty and refill, and member blocks outgrow their room): every pair's members in the same order as
    Python lists with swap-removal, the same active pairs and page count, and best() draws the same page."""
    rng = np.random.default_rng(7)
    names = ["s.x", "s.y", "a.u", "bias"]
    idx = PairIndex(400, names)
    for rnd in range(3):
        ref = _ListPairs(idx.s_cols, idx.a_cols)
        for _ in range(300):
            k = int(rng.integers(1, 40))
            pages = rng.choice(400, size=k, replace=False)
            X = rng.integers(0, 3, size=(k, 4)).astype(np.float32)
            X[:, 3] = 1.0
            if rng.random() < 0.1:
                X[0, 0] = -0.0   # another bit pattern: another row, as bytes keys would say
            idx.assign(pages, X)
            ref.assign(pages, X)
            for p in rng.choice(400, size=int(rng.integers(0, 20)), replace=False).tolist():
                assert idx.remove(p) == ref.remove(p)
            assert len(idx) == len(ref.page_pair) and idx.n_s == len(ref.rows_s) and idx.n_a == len(ref.rows_a)
            active = sorted(pid for pid, m in enumerate(ref.members) if m)
            assert sorted(idx.pair_scores(np.ones(4))[0].tolist()) == active
            for pid in active:
                assert idx.members(pid) == ref.members[pid]
            w = rng.normal(size=4)
            if active:
                r1, r2 = np.random.default_rng(rnd), np.random.default_rng(rnd)
                page, _ = idx.best(w, r1)
                pids, sc = idx.pair_scores(w)
                ties = np.flatnonzero(sc == sc.max())
                kk = int(ties[0]) if len(ties) == 1 else int(ties[r2.integers(len(ties))])
                m = ref.members[int(pids[kk])]
                assert page == (m[0] if len(m) == 1 else m[int(r2.integers(len(m)))])
        idx.clear()
        assert len(idx) == 0 and idx.n_active == 0 and idx.n_seen == 0
        assert not any(p in idx for p in range(400))


# ------------------------------------------------------------------ asynchronous staleness
def test_async_rescored_only_the_new_outlinks(tiny_corpus) -> None:
    env = _env(tiny_corpus, steps=40)
    base = env.unwrapped
    agent = make_agent("lfa-async", epsilon=0.0, alpha=0.05)
    obs, info = env.reset(seed=0)
    agent.begin_episode(base.view, np.random.default_rng(0))
    changed_somewhere = False
    for _ in range(25):
        page = agent.act(obs, info)
        pq = agent._pq
        before = {int(p): pq.priority(int(p)) for p in pq.items()}
        obs2, r, term, trunc, info2 = env.step(page)
        agent.observe(Transition(obs, page, r, obs2, term, trunc, info2))
        upd = set(base.view.frontier_changes().updated.tolist())
        for p in pq.items().tolist():
            if p in upd:   # re-scored with the new w
                assert pq.priority(p) == pytest.approx(float(agent.q_values(np.array([p]))[0]), abs=1e-9)
            else:          # stale: untouched
                assert pq.priority(p) == before[p]
        stale = [p for p in pq.items().tolist() if p not in upd]
        if stale and not np.allclose(agent.q_values(np.array(stale)), [pq.priority(p) for p in stale]):
            changed_somewhere = True
        obs, info = obs2, info2
    assert changed_somewhere, "async priorities never went stale: the test would not detect a sync agent"


# ------------------------------------------------------------------------- determinism
@pytest.mark.parametrize("name", ["lfa-sync", "lfa-async", "lfa-moderated", "thesis-lfa"])
def test_same_seed_same_trajectory(tiny_corpus, name: str) -> None:
    feats = ThesisFeatures(4) if name == "thesis-lfa" else "han2018"
    reward = "thesis" if name == "thesis-lfa" else "han2018"
    runs = []
    for _ in range(2):
        env = _env(tiny_corpus, features=feats, reward=reward, steps=50, topic="poetry")
        agent = make_agent(name)
        res = run_episodes(env, agent, 2, seed=7)
        runs.append(([r.fetched.tolist() for r in res], agent.w.copy()))
    assert runs[0][0] == runs[1][0]
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    env = _env(tiny_corpus, features=feats, reward=reward, steps=50, topic="poetry")
    other = run_episode(env, make_agent(name), seed=8)
    assert other.fetched.tolist() != runs[0][0][0]   # the seed matters (ε-greedy draws)


# ------------------------------------------------------------------- weights & persistence
def test_weights_persist_across_tasks_and_save_load(tiny_corpus, tmp_path) -> None:
    env = _env(tiny_corpus, steps=40)
    agent = make_agent("lfa-moderated")
    run_episode(env, agent, seed=0)
    w1 = agent.w.copy()
    assert np.any(w1 != 0)
    run_episode(env, agent, seed=1)          # task 2 starts from w1 (Han's protocol)
    assert np.any(agent.w != w1)
    path = agent.save(tmp_path / "lfa.npz")
    loaded = Agent.load(path)
    assert isinstance(loaded, LFAAgent) and loaded.name == "lfa-moderated" and loaded.rule == "moderated"
    np.testing.assert_array_equal(loaded.w, agent.w)
    assert loaded.feature_names == env.unwrapped.view.feature_names
    # a loaded agent continues identically to the original
    a = run_episode(env, agent, seed=5)
    b = run_episode(env, loaded, seed=5)
    assert a.fetched.tolist() == b.fetched.tolist()
    with np.load(path, allow_pickle=False) as z:     # no pickled objects inside
        assert set(z.files) == {"__header__", "w", "feature_names", "updates"}


def test_feature_mismatch_and_bad_state_are_errors(tiny_corpus) -> None:
    agent = make_agent("lfa-async")
    run_episode(_env(tiny_corpus, steps=5), agent, seed=0)
    with pytest.raises(ValueError, match="features"):
        run_episode(_env(tiny_corpus, features="han2018-continuous", steps=5), agent, seed=0)
    with pytest.raises(ValueError, match="local"):
        run_episode(_env(tiny_corpus, features="tres", steps=5), make_agent("lfa-sync"), seed=0)
    with pytest.raises(ValueError, match="state keys"):
        make_agent("lfa-sync").load_state_dict({"theta": np.zeros(3)})
    with pytest.raises(ValueError, match="mode"):
        LFAAgent(mode="semi")


# ---------------------------------------------------------------------------- the thesis
def test_thesis_discretization_by_hand() -> None:
    np.testing.assert_array_equal(disc_relevance(np.array([-0.3, 0.0, 0.05, 0.1, 0.19, 0.55, 0.99, 1.0])),
                                  [0, 0, 0, 1, 1, 5, 9, 9])
    np.testing.assert_array_equal(disc_change(np.array([-2.0, -1.6, -1.5, -0.01, 0.0, 0.49, 1.5, 2.0])),
                                  [0, 0, 1, 3, 4, 4, 7, 7])
    np.testing.assert_array_equal(disc_change_code(np.array([0.05, 0.1, 0.3, -0.1, -0.31])), [0, 1, 2, 3, 4])
    np.testing.assert_array_equal(disc_distance(np.array([0, 3, 9])), [9, 6, 0])


def test_thesis_features_on_the_env(tiny_corpus) -> None:
    fs = ThesisFeatures(4)
    assert fs.dim == 16 and fs.local and fs.names[3] == "s.change" and "bias" not in fs.names
    env = _env(tiny_corpus, features=fs, reward="thesis", steps=30)
    env.reset(seed=0)
    base = env.unwrapped
    F = np.array(base.view.frontier_pages())
    X = base.view.features_of(F)
    assert np.all(np.round(X) == X) and X.min() >= 0 and X[:, [0, 1, 2, 5, 9]].max() <= 9
    st = base.state
    s = st.best_parent[F]
    np.testing.assert_array_equal(X[:, 0], disc_relevance(st.rel[s]))
    np.testing.assert_array_equal(X[:, 4], 9 - st.dist[s])
    np.testing.assert_array_equal(X[:, 9], disc_relevance(st.link_rel[F]))
    Xn = ThesisFeatures(4, normalize=True).compute(st, F)
    assert Xn.max() <= 1.0 and np.allclose(Xn[:, 0] * 9, X[:, 0])


def test_thesis_agent_needs_its_features_and_skips_dead_ends(tiny_corpus, monkeypatch) -> None:
    with pytest.raises(ValueError, match="thesis"):
        run_episode(_env(tiny_corpus, steps=5), make_agent("thesis-lfa"), seed=0)
    agent = make_agent("thesis-lfa")
    assert isinstance(agent, ThesisLFAAgent) and agent.gamma == 0.3 and agent.fifo_ties
    env = _env(tiny_corpus, features=ThesisFeatures(4), reward="thesis", steps=40)
    base = env.unwrapped
    obs, info = env.reset(seed=0)
    agent.begin_episode(base.view, np.random.default_rng(0))
    w0 = agent.w.copy()
    assert np.all((w0 >= 0) & (w0 < 1))                 # w₀ ~ U[0, 1)
    page = agent.act(obs, info)
    obs2, r, term, trunc, info2 = env.step(page)
    none = np.zeros(0, np.int32)   # the fetched page has no selectable out-link
    monkeypatch.setattr(type(base.view), "frontier_changes", lambda self: FrontierChanges(none, none, none))
    agent.observe(Transition(obs, page, r, obs2, term, trunc, info2))
    np.testing.assert_array_equal(agent.w, w0)           # no selectable out-link → no update
    assert agent.updates == 0


def test_thesis_sync_mode_runs_exactly(tiny_corpus) -> None:
    agent = make_agent("thesis-lfa", mode="sync", epsilon=0.0)
    env = _env(tiny_corpus, features=ThesisFeatures(4), reward="thesis", steps=30, topic="cancer")
    res = run_episode(env, agent, seed=0)
    assert res.steps == 30 and agent.updates > 0


@pytest.mark.parametrize("name", ["lfa-sync", "lfa-async"])
def test_runs_under_a_domain_cap(tiny_corpus, name: str) -> None:
    """Pages the env drops from the frontier (TRES's per-domain cap) are never chosen."""
    env = _env(tiny_corpus, steps=80, domain_cap=5)
    res = run_episode(env, make_agent(name, epsilon=0.0), seed=0)
    counts = np.bincount(tiny_corpus.page_domain[res.fetched], minlength=len(tiny_corpus.domains))
    assert counts.max() <= 5
    assert res.steps == 5 * len(tiny_corpus.domains) - 1   # crawled every domain up to its cap, then ran dry


def test_strategies_are_selected_once_from_mode_and_rule(tmp_path) -> None:
    """Each named variant gets its frontier strategy and update rule at construction; a loaded agent too."""
    from gym_crawl.agents.linear.lfa import AsyncFrontier, ModeratedRule, SyncFrontier, ThesisRule, UpdateRule

    want = {"lfa-sync": (SyncFrontier, UpdateRule), "lfa-async": (AsyncFrontier, UpdateRule),
            "lfa-moderated": (AsyncFrontier, ModeratedRule), "thesis-lfa": (AsyncFrontier, ThesisRule)}
    for name, (fr, rule) in want.items():
        a = make_agent(name)
        assert type(a.frontier) is fr and type(a.update_rule) is rule
        assert a.frontier.mode == a.mode and a.update_rule.name == a.rule
    t = make_agent("thesis-lfa", mode="sync")
    assert type(t.frontier) is SyncFrontier and type(t.update_rule) is ThesisRule
    a = make_agent("lfa-moderated")
    a.load_state_dict({"w": np.zeros(3)})
    loaded = Agent.load(a.save(tmp_path / "m.npz"))
    assert type(loaded.frontier) is AsyncFrontier and type(loaded.update_rule) is ModeratedRule
