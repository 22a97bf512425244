"""Grigoriadis' TD(λ) crawler: the value network's gradient, the λ-trace update, fairness (only fetched
pages' text is read), look-ahead expansion, determinism and persistence."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gym_crawl  # noqa: F401
from gym_crawl.agents import make_agent, make_env_for, run_episode, run_episodes
from gym_crawl.agents.base import Agent, Transition
from gym_crawl.agents.td_lambda import TDLambdaAgent, ValueNet

VISITED = 2


def _env(corpus, steps=60, topic="geology", reward="han2018"):
    """The page-mode env td-lambda acts in, truncated by Gymnasium's TimeLimit after ``steps``."""
    return make_env_for("td-lambda", env_id="WikiCrawl-v0", corpus=corpus, topic=topic, features="han2018",
                        reward=reward, max_episode_steps=steps)


def test_value_net_by_hand() -> None:
    net = ValueNet(2, 1, np.random.default_rng(0))
    net.W[:] = [[0.5, 0.0]]
    net.b[:] = 0.0
    net.v[:] = [1.0]
    net.c[:] = [0.25]
    x = np.array([[1.0, 0.0]])
    t = np.tanh(0.5)
    assert net.value(x)[0] == pytest.approx(t + 0.25)
    g = net.weighted_grad(x, np.array([2.0]))     # 2 · ∇V
    np.testing.assert_allclose(g["v"], [2 * t])
    np.testing.assert_allclose(g["c"], [2.0])
    np.testing.assert_allclose(g["b"], [2 * (1 - t * t)])
    np.testing.assert_allclose(g["W"], [[2 * (1 - t * t), 0.0]])


def test_weighted_grad_matches_finite_differences() -> None:
    rng = np.random.default_rng(1)
    net = ValueNet(5, 3, rng, init_scale=0.7)
    X = (rng.random((4, 5)) < 0.5).astype(float)
    coef = np.array([1.0, 0.5, 0.25, 0.125])
    g = net.weighted_grad(X, coef)
    eps = 1e-6
    for name, p in net.params().items():
        num = np.zeros_like(p)
        for i in np.ndindex(p.shape):
            old = p[i]
            p[i] = old + eps
            up = coef @ net.value(X)
            p[i] = old - eps
            down = coef @ net.value(X)
            p[i] = old
            num[i] = (up - down) / (2 * eps)
        np.testing.assert_allclose(g[name], num, rtol=1e-5, atol=1e-7, err_msg=name)


@pytest.mark.parametrize("inputs", ["keywords", "content"])
def test_td_lambda_update_through_the_agent(tiny_corpus, inputs: str) -> None:
    """θ changes by α δ Σ_k (γλ)^k ∇V(a_k) over the crawl path of the parent (numerical gradients)."""
    env = _env(tiny_corpus, steps=40)
    base = env.unwrapped
    agent = make_agent("td-lambda", epsilon=0.0, alpha=0.05, gamma=0.8, lam=0.5, hidden=4, n_keywords=20,
                       inputs=inputs)
    obs, info = env.reset(seed=2)
    agent.begin_episode(base.view, np.random.default_rng(2))
    checked_depth = 0
    for _ in range(25):
        page = agent.act(obs, info)
        parent = agent._pending[1]
        obs2, r, term, trunc, info2 = env.step(page)
        net = agent.net
        before = {k: v.copy() for k, v in net.params().items()}
        # expected update, computed independently: numerical gradients of V along the parent's path
        path = []
        c = parent
        while c >= 0 and len(path) < agent._depth:
            path.append(agent._X[agent._row[c]].copy())
            c = int(agent._parent[c])
        x_p = agent._keyword_vector(page)
        delta = (1.0 if r > 0 else 0.0) + 0.8 * net.value(x_p[None])[0] - net.value(path[0][None])[0]
        coef = 0.4 ** np.arange(len(path))
        expect = {}
        for name, p in net.params().items():
            num = np.zeros_like(p)
            for i in np.ndindex(p.shape):
                old = p[i]
                p[i] = old + 1e-6
                up = coef @ net.value(np.array(path))
                p[i] = old - 1e-6
                down = coef @ net.value(np.array(path))
                p[i] = old
                num[i] = (up - down) / 2e-6
            expect[name] = before[name] + 0.05 * delta * num
        agent.observe(Transition(obs, page, r, obs2, term, trunc, info2))
        for name, p in net.params().items():
            np.testing.assert_allclose(p, expect[name], rtol=1e-5, atol=1e-8, err_msg=name)
        checked_depth = max(checked_depth, len(path))
        obs, info = obs2, info2
    assert checked_depth >= 2   # the trace reached past the parent


class _GuardedText:
    """Stands in for a corpus text array during agent calls: records and checks every read."""

    def __init__(self, arr: np.ndarray, ptr: np.ndarray, status: np.ndarray, log: list[int]):
        self.arr, self.ptr, self.status, self.log = arr, ptr, status, log

    def __getitem__(self, key: Any) -> Any:
        pos = np.arange(len(self.arr))[key]
        pages = np.searchsorted(self.ptr, np.atleast_1d(pos), side="right") - 1
        self.log.extend(pages.tolist())
        bad = pages[self.status[pages] != VISITED]
        assert len(bad) == 0, f"read the text of unfetched page(s) {bad[:5].tolist()}"
        return self.arr[key]

    def __len__(self) -> int:
        return len(self.arr)

    def __array__(self, *a: Any, **k: Any) -> Any:
        raise AssertionError("the whole text array was read")


def _guard_agent(agent: Agent, base: Any, log: list[int]) -> None:
    corpus = base.corpus
    for meth in ("begin_episode", "act", "observe"):
        orig = getattr(agent, meth)

        def wrapped(*a: Any, _orig: Any = orig, **k: Any) -> Any:
            saved = corpus.text_terms, corpus.text_counts
            ptr = np.asarray(corpus.text_ptr)
            corpus.text_terms = _GuardedText(saved[0], ptr, base.state.status, log)
            corpus.text_counts = _GuardedText(saved[1], ptr, base.state.status, log)
            try:
                return _orig(*a, **k)
            finally:
                corpus.text_terms, corpus.text_counts = saved

        setattr(agent, meth, wrapped)


@pytest.mark.parametrize("mode,inputs", [("lookahead", "keywords"), ("inherit", "keywords"), ("lookahead", "content")])
def test_reads_only_fetched_pages_text(tiny_corpus, mode: str, inputs: str) -> None:
    env = _env(tiny_corpus, steps=80, topic="cancer")
    base = env.unwrapped
    agent = make_agent("td-lambda", mode=mode, epsilon=0.2, inputs=inputs)
    log: list[int] = []
    _guard_agent(agent, base, log)
    res = run_episode(env, agent, seed=0)
    assert res.steps == 80
    assert len(set(log)) > 50          # it did read text: of the pages it fetched
    assert set(log) <= set(res.fetched.tolist())


def test_guard_detects_a_peek(tiny_corpus) -> None:
    env = _env(tiny_corpus, steps=5)
    env.reset(seed=0)
    base = env.unwrapped
    F = int(base.view.frontier_pages()[0])
    c = base.corpus
    g = _GuardedText(c.text_terms, np.asarray(c.text_ptr), base.state.status, [])
    with pytest.raises(AssertionError, match="unfetched"):
        g[int(c.text_ptr[F]):int(c.text_ptr[F + 1])]
    agent = make_agent("td-lambda")
    agent.begin_episode(base.view, np.random.default_rng(0))
    with pytest.raises(RuntimeError, match="not fetched"):
        agent._keyword_vector(F)


def test_lookahead_expands_the_popped_pages_outlinks(tiny_corpus) -> None:
    env = _env(tiny_corpus, steps=60, topic="poetry")
    base = env.unwrapped
    agent = make_agent("td-lambda", mode="lookahead", epsilon=0.0)
    obs, info = env.reset(seed=0)
    agent.begin_episode(base.view, np.random.default_rng(0))
    c = base.corpus
    for _ in range(50):
        page = agent.act(obs, info)
        parent = agent._pending[1]
        assert base.state.status[parent] == VISITED
        assert page in c.link_dst[c.link_ptr[parent]:c.link_ptr[parent + 1]]   # a look-ahead fetch of parent's link
        obs2, r, term, trunc, info2 = env.step(page)
        agent.observe(Transition(obs, page, r, obs2, term, trunc, info2))
        obs, info = obs2, info2


@pytest.mark.parametrize("mode,inputs", [("lookahead", "keywords"), ("inherit", "keywords"), ("inherit", "content")])
def test_deterministic_and_learning_persists(tiny_corpus, tmp_path, mode: str, inputs: str) -> None:
    runs = []
    for _ in range(2):
        agent = make_agent("td-lambda", mode=mode, inputs=inputs)
        res = run_episodes(_env(tiny_corpus, steps=50), agent, 2, seed=3)
        runs.append([r.fetched.tolist() for r in res])
    assert runs[0] == runs[1]
    assert agent.updates > 0 and agent.keywords[0] == ("geology" if inputs == "keywords" else "page_x_topic0")
    path = agent.save(tmp_path / "td.npz")
    loaded = Agent.load(path)
    assert isinstance(loaded, TDLambdaAgent) and loaded.keywords == agent.keywords and loaded.mode == mode
    assert loaded.inputs == inputs
    for k, v in agent.net.params().items():
        np.testing.assert_array_equal(loaded.net.params()[k], v)
    env = _env(tiny_corpus, steps=50)
    assert run_episode(env, agent, seed=9).fetched.tolist() == run_episode(env, loaded, seed=9).fetched.tolist()
    with pytest.raises(ValueError, match="state keys"):
        make_agent("td-lambda").load_state_dict({"W": np.zeros((2, 2))})


def test_content_inputs_by_hand(tiny_corpus) -> None:
    """inputs='content': x(p) = [sqrt(k) v ⊙ t, v · t] with v the fetched page's unit tf-idf word-vector sum and
    t the unit topic vector; topic-relative (another topic gives another x for the same page)."""
    env = _env(tiny_corpus, steps=10)
    base = env.unwrapped
    agent = make_agent("td-lambda", inputs="content", epsilon=0.0)
    env.reset(seed=0)
    agent.begin_episode(base.view, np.random.default_rng(0))
    p = int(base.view.fetched_pages()[0])
    c, text = base.corpus, base.text
    a, b = int(c.text_ptr[p]), int(c.text_ptr[p + 1])
    terms, cnt = np.asarray(c.text_terms[a:b]), np.asarray(c.text_counts[a:b], np.float64)
    v = (cnt * np.asarray(text.idf)[terms]) @ np.asarray(text.vectors, np.float64)[terms]
    v /= np.linalg.norm(v)
    t = np.asarray(base.scorer.queries[0], np.float64)
    t /= np.linalg.norm(t)
    k = len(t)
    x = agent._keyword_vector(p)
    np.testing.assert_allclose(x[:k], np.sqrt(k) * v * t, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(x[k], v @ t, rtol=1e-4, atol=1e-6)
    assert len(agent.keywords) == k + 1 == agent.net.W.shape[1]
    # the same page under another topic: other inputs (the weights transfer, the inputs follow the topic)
    env.reset(seed=0, options={"topic": "poetry"})
    agent.begin_episode(base.view, np.random.default_rng(0))
    assert not np.allclose(agent._topic_vec, t)
    np.testing.assert_allclose(np.linalg.norm(base.view.topic_vector()), 1.0, rtol=1e-5)
    F = int(base.view.frontier_pages()[0])
    with pytest.raises(ValueError, match="only fetched pages"):
        base.view.fetched_vectors(np.array([F]))
    with pytest.raises(ValueError, match="inputs must be"):
        make_agent("td-lambda", inputs="words")


def test_content_weights_refuse_keyword_agent(tiny_corpus) -> None:
    agent = make_agent("td-lambda", inputs="content")
    run_episode(_env(tiny_corpus, steps=20), agent, seed=0)
    with pytest.raises(ValueError, match="inputs='content'"):
        make_agent("td-lambda").load_state_dict(agent.state_dict())
