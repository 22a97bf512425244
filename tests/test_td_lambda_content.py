"""TD(λ) with content inputs (``inputs="content"``): the λ-trace update on a hand-computed
three-step crawl, determinism under a seed, and no leak of unfetched pages' text or labels into the
agent's choices."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import VOCAB, tamper_unfetched

import gym_crawl  # noqa: F401
from gym_crawl.agents import make_agent, make_env_for, run_episode, run_episodes
from gym_crawl.agents.base import Transition
from gym_crawl.corpus import CorpusBuilder
from gym_crawl.text.model import TextModel, get_text_model


def _chain_corpus():
    """Geology → A → B → C (one link each, so the crawl path is forced) beside 120 unreachable filler
    pages that give the text model its vocabulary. Labels: A and C are geology pages, B is not."""
    rng = np.random.default_rng(5)
    b = CorpusBuilder(name="td-content-chain")
    chain = [("Geology", "geo", "subject.geo"), ("Rock A", "geo", "subject.geo"),
             ("City B", "gen", "subject.gen"), ("Basalt C", "geo", "subject.geo")]
    for title, kind, label in chain:
        words = list(rng.choice(VOCAB[kind], 20)) + list(rng.choice(VOCAB["gen"], 10))
        b.add_page(title, " ".join(words), domain=f"{kind}.org", labels=[label])
    kinds = ["geo", "med", "art", "gen"]
    for i in range(120):
        k = kinds[i % 4]
        b.add_page(f"filler {k} {i}", " ".join(rng.choice(VOCAB[k], 30)), domain=f"{k}-f.org", labels=[f"subject.{k}"])
    for i in range(3):
        b.add_link(i, i + 1, context="read more")
    for i in range(120):   # the fillers link among themselves only
        for j in rng.choice(120, 4, replace=False).tolist():
            if j != i:
                b.add_link(4 + i, 4 + j)
    c = b.build()
    c.meta["topics"] = {"geology": {"seeds": ["Geology"], "label": "subject.geo", "words": ["geology"],
                                    "categories": ["earth", "science"]}}
    return c


def _content_row(base, page: int) -> np.ndarray:
    """x(p) = [sqrt(k) v ⊙ t, v · t] from the corpus arrays directly (v: unit tf-idf sum of word vectors)."""
    c, text = base.corpus, base.text
    a, b = int(c.text_ptr[page]), int(c.text_ptr[page + 1])
    terms, cnt = np.asarray(c.text_terms[a:b]), np.asarray(c.text_counts[a:b], np.float64)
    v = (cnt * np.asarray(text.idf, np.float64)[terms]) @ np.asarray(text.vectors, np.float64)[terms]
    v /= np.linalg.norm(v)
    t = np.asarray(base.scorer.queries[0], np.float64)
    t /= np.linalg.norm(t)
    return np.concatenate([np.sqrt(len(t)) * v * t, [v @ t]])


def test_content_trace_update_by_hand_on_a_three_step_chain() -> None:
    """One hidden unit, V(x) = v tanh(w·x + b) + c. Fetching page a_{n+1} from a_n gives
    δ = r + γ V(a_{n+1}) − V(a_n) and θ ← θ + α δ Σ_k (γλ)^k ∇V(a_{n−k}) along the forced path
    Geology → A → B → C; the gradients are written out in closed form, the rows from the corpus."""
    corpus = _chain_corpus()
    env = make_env_for("td-lambda", env_id="WikiCrawl-v0", corpus=corpus, topic="geology", reward="labels",
                       max_episode_steps=10)
    base = env.unwrapped
    alpha, gamma, lam = 0.3, 0.8, 0.5
    agent = make_agent("td-lambda", inputs="content", epsilon=0.0, alpha=alpha, gamma=gamma, lam=lam, hidden=1)
    obs, info = env.reset(seed=0)
    agent.begin_episode(base.view, np.random.default_rng(0))
    ids = [corpus.page_id(t) for t in ("Geology", "Rock A", "City B", "Basalt C")]
    X = {p: _content_row(base, p) for p in ids[:1]}
    k1 = len(X[ids[0]])
    w = np.linspace(-1.0, 1.0, k1) * 3.0 / np.sqrt(k1)     # known weights, tanh well inside its range
    b, v, c = 0.1, 0.7, -0.2
    net = agent.net
    net.W[:] = w[None]
    net.b[:] = b
    net.v[:] = v
    net.c[:] = c

    def V(x):
        return v * np.tanh(w @ x + b) + c

    def grads(x):   # ∂V/∂w, ∂V/∂b, ∂V/∂v, ∂V/∂c
        h = np.tanh(w @ x + b)
        return v * (1 - h * h) * x, v * (1 - h * h), h, 1.0

    rewards = []
    for n in range(3):
        page = agent.act(obs, info)
        assert page == ids[n + 1] and agent._pending == (ids[n + 1], ids[n])   # the forced path
        obs2, r, term, trunc, info2 = env.step(page)
        X[page] = _content_row(base, page)
        rr = 1.0 if r > 0 else 0.0
        rewards.append(rr)
        delta = rr + gamma * V(X[page]) - V(X[ids[n]])
        gw, gb, gv, gc = np.zeros(k1), 0.0, 0.0, 0.0
        for k in range(n + 1):                    # the path a_n, a_{n-1}, ..., Geology
            e = (gamma * lam) ** k
            dw, db, dv, dc = grads(X[ids[n - k]])
            gw, gb, gv, gc = gw + e * dw, gb + e * db, gv + e * dv, gc + e * dc
        w, b, v, c = w + alpha * delta * gw, b + alpha * delta * gb, v + alpha * delta * gv, c + alpha * delta * gc
        agent.observe(Transition(obs, page, r, obs2, term, trunc, info2))
        np.testing.assert_allclose(net.W[0], w, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose([net.b[0], net.v[0], net.c[0]], [b, v, c], rtol=1e-4, atol=1e-6)
        assert abs(delta) > 1e-3   # every step really moved the weights
        obs, info = obs2, info2
    assert rewards == [1.0, 0.0, 1.0] and agent.updates == 3


def _tiny_env(corpus, steps=60, text=None):
    kw = {"text": text} if text is not None else {}
    return make_env_for("td-lambda", env_id="WikiCrawl-v0", corpus=corpus, topic="geology", reward="labels",
                        max_episode_steps=steps, **kw)


@pytest.mark.parametrize("mode", ["lookahead", "inherit"])
def test_content_deterministic_under_a_seed(tiny_corpus, mode: str) -> None:
    """Same seeds ⇒ same crawls and same weights; another network seed ⇒ other weights."""
    def run(seed):
        agent = make_agent("td-lambda", inputs="content", mode=mode, epsilon=0.1, seed=seed)
        res = run_episodes(_tiny_env(tiny_corpus), agent, 2, seed=4)
        return [r.fetched.tolist() for r in res], agent.net.params()

    (f1, p1), (f2, p2), (_, p3) = run(0), run(0), run(1)
    assert f1 == f2
    for k in p1:
        np.testing.assert_array_equal(p1[k], p2[k])
    assert not np.array_equal(p1["W"], p3["W"])


@pytest.mark.parametrize("mode", ["lookahead", "inherit"])
def test_content_no_leak_of_unfetched_pages(tiny_corpus, mode: str) -> None:
    """Giving every page the agent never fetched the topic page's text and the topic label changes
    neither its choices nor its learned weights (after training on one episode and acting in a second)."""
    tm = get_text_model(tiny_corpus)

    def run(corpus, text):
        agent = make_agent("td-lambda", inputs="content", mode=mode, epsilon=0.1, seed=2)
        res = run_episodes(_tiny_env(corpus, steps=50, text=text), agent, 2, seed=6)
        return res, agent

    res_a, agent_a = run(tiny_corpus, tm)
    fetched = np.unique(np.concatenate([r.fetched for r in res_a]))
    unfetched = np.setdiff1d(np.arange(tiny_corpus.n_pages), fetched)
    assert len(unfetched) > 100
    tampered = tamper_unfetched(tiny_corpus, unfetched)
    res_b, agent_b = run(tampered, TextModel(tampered, tm.idf, tm.vectors, tm.meta))
    assert [r.fetched.tolist() for r in res_a] == [r.fetched.tolist() for r in res_b]
    assert [r.relevant_found for r in res_a] == [r.relevant_found for r in res_b]
    for k, p in agent_a.net.params().items():
        np.testing.assert_array_equal(p, agent_b.net.params()[k])
    # the tampering is real: the unfetched pages are now labelled relevant and a fetch would see it
    env = _tiny_env(tampered, steps=5, text=TextModel(tampered, tm.idf, tm.vectors, tm.meta))
    env.reset(seed=0)
    assert env.unwrapped.view.hidden_relevance()[unfetched].all()
    assert run_episode(env, make_agent("td-lambda", inputs="content"), seed=0).steps > 0
