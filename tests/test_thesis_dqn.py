"""The thesis' DQN crawler (agents/dqn/thesis.py): per-page head, masking, a hand-computed update,
determinism, persistence, and the Fig. 4.4 benchmark's quick run."""
from __future__ import annotations

import math
import zipfile

import numpy as np
import pytest
import torch

from gym_crawl.agents import AGENTS, Agent, make_agent, make_env_for, register_agent, run_episode
from gym_crawl.agents.base import Transition

if "thesis-dqn" not in AGENTS.names():  # until agents/base.py lists it (the lead's registry)
    register_agent("thesis-dqn", "gym_crawl.agents.dqn.thesis:ThesisDQNAgent",
                   "Pertejo 2021 DQN: one Q output per corpus page over the last page's features")

from gym_crawl.agents.dqn.thesis import ReplayMemory, ThesisDQNAgent, ThesisQNetwork


def _env(agent, corpus, steps=40, **kw):
    return make_env_for(agent, corpus=corpus, topic="geology", max_episode_steps=steps, **kw)


def _weights(agent):
    return {k: v.detach().clone() for k, v in agent.online.state_dict().items()}


# ------------------------------------------------------------------------------ the network
@pytest.mark.parametrize("dueling", [True, False])
def test_network_has_one_output_per_page(tiny_corpus, dueling):
    agent = make_agent("thesis-dqn", dueling=dueling)
    run_episode(_env(agent, tiny_corpus, steps=5), agent, seed=0)
    n = tiny_corpus.n_pages
    assert agent.n_actions == n
    assert agent.in_dim == 5 + 4  # the thesis' page featurizer: 5 + C state features
    assert agent.online.head.out_features == n + (1 if dueling else 0)
    assert [m.out_features for m in agent.online.layers] == [128, 256]
    q = agent.q_values(np.arange(9, dtype=np.float32))
    assert q.shape == (n,)
    # q_at (no n-wide matrix) agrees with the full head, dueling mean included
    h = agent.online.hidden(torch.rand(3, 9))
    acts = torch.tensor([0, n // 2, n - 1])
    full = agent.online.q_all(h)[torch.arange(3), acts]
    assert torch.allclose(agent.online.q_at(h, acts), full, atol=1e-5)


def test_network_counts_parameters_of_a_per_page_head():
    net = ThesisQNetwork(9, 1000, (128, 256), dueling=True, rng=np.random.default_rng(0))
    n_params = sum(p.numel() for p in net.parameters())
    assert n_params == (9 * 128 + 128) + (128 * 256 + 256) + (256 * 1001 + 1001)


# ------------------------------------------------------------------------------ masking
@pytest.mark.parametrize("select", ["frontier", "masked"])
@pytest.mark.parametrize("eps", [0.0, 1.0])
def test_masked_selection_never_picks_a_non_frontier_page(tiny_corpus, select, eps):
    agent = make_agent("thesis-dqn", select=select, eps_train=eps, warmup=10)
    env = _env(agent, tiny_corpus, steps=60)
    base = env.unwrapped
    obs, info = env.reset(seed=1)
    agent.begin_episode(base.view, np.random.default_rng(1))
    for _ in range(60):
        a = agent.act(obs, info)
        assert bool(base.action_masks()[a]), f"{select}: picked page {a}, not in the frontier"
        obs2, r, term, trunc, info2 = env.step(a)
        assert not info2["invalid_action"]
        agent.observe(Transition(obs, a, float(r), obs2, term, trunc, info2))
        obs, info = obs2, info2
        if term or trunc:
            break
    assert agent.invalid_actions == 0 and agent.updates > 0


@pytest.mark.parametrize("eps", [0.0, 0.5])
def test_urpq_selection_only_wastes_steps_on_fetched_pages(tiny_corpus, eps):
    """The thesis' code: duplicate (parent, link) entries re-select fetched pages, never unseen ones."""
    agent = make_agent("thesis-dqn", select="urpq", eps_train=eps, warmup=10)
    env = _env(agent, tiny_corpus, steps=80)
    base = env.unwrapped
    obs, info = env.reset(seed=1)
    agent.begin_episode(base.view, np.random.default_rng(1))
    wasted = 0
    for _ in range(80):
        a = agent.act(obs, info)
        fetched = set(base.view.fetched_pages().tolist())
        assert bool(base.action_masks()[a]) or a in fetched
        obs2, r, term, trunc, info2 = env.step(a)
        wasted += bool(info2["invalid_action"])
        agent.observe(Transition(obs, a, float(r), obs2, term, trunc, info2))
        obs, info = obs2, info2
        if term or trunc:
            break
    assert agent.invalid_actions == wasted
    if eps > 0:  # random pops are uniform over entries, stale duplicates included
        assert wasted > 0


def test_unmasked_selection_wastes_steps_on_non_frontier_pages(tiny_corpus):
    agent = make_agent("thesis-dqn", select="unmasked", eps_train=1.0)
    res = run_episode(_env(agent, tiny_corpus, steps=60), agent, seed=0)
    # uniform over all 600 pages while the frontier holds a fraction of them: most steps are wasted
    assert res.invalid_actions > 10
    assert agent.invalid_actions == res.invalid_actions
    assert res.pages_fetched == 1 + res.steps - res.invalid_actions


def test_bad_options_and_envs_are_refused(tiny_corpus):
    with pytest.raises(ValueError, match="select"):
        ThesisDQNAgent(select="all")
    with pytest.raises(ValueError, match="unknown option"):
        ThesisDQNAgent(learning_rate=1.0)
    with pytest.raises(ValueError, match="gamma"):
        ThesisDQNAgent(gamma=1.5)
    agent = make_agent("thesis-dqn")
    with pytest.raises(ValueError, match="features='thesis'"):
        run_episode(_env(agent, tiny_corpus, steps=3, features="tres"), agent, seed=0)
    run_episode(_env(agent, tiny_corpus, steps=3), agent, seed=0)
    from tests.conftest import make_tiny_corpus

    other = make_tiny_corpus(n=300, seed=1)
    with pytest.raises(ValueError, match="one output per page"):
        run_episode(_env(agent, other, steps=3), agent, seed=0)


# ------------------------------------------------------------------------------ the update
def _hand_agent(double: bool) -> ThesisDQNAgent:
    """in 1 → hidden 1 (tanh) → 3 outputs, no dueling/dropout/regularizer; hand-set weights."""
    agent = ThesisDQNAgent(hidden=[1], dueling=False, double=double, dropout=0.0, activity_l2=0.0, gamma=0.5,
                           lr=0.1, batch_size=1, warmup=0, target_update=0.01)
    agent.rng = np.random.default_rng(0)
    agent.build_networks(1, 3)
    with torch.no_grad():
        for net, W, b in ((agent.online, [[1.0], [2.0], [-1.0]], [0.0, 0.5, 0.0]),
                          (agent.target, [[0.5], [1.0], [3.0]], [0.0, 0.0, 0.0])):
            net.layers[0].weight.fill_(1.0)
            net.layers[0].bias.zero_()
            net.head.weight.copy_(torch.tensor(W))
            net.head.bias.copy_(torch.tensor(b))
    agent.memory = ReplayMemory(1, 10)
    return agent


def test_dqn_update_on_a_hand_computed_example():
    t1, t0 = math.tanh(1.0), math.tanh(0.5)
    # targets: online Q(s'=1) = [t1, 2 t1 + 0.5, -t1] → a* = 1; target Q⁻(s', 1) = 1·t1
    agent = _hand_agent(double=True)
    R = agent.targets(np.array([1.0], np.float32), np.array([[1.0]], np.float32), np.array([0.0], np.float32))
    assert R.item() == pytest.approx(1 + 0.5 * t1, abs=1e-6)
    R_term = agent.targets(np.array([1.0], np.float32), np.array([[1.0]], np.float32), np.array([1.0], np.float32))
    assert R_term.item() == pytest.approx(1.0)
    # vanilla DQN bootstraps with max_a Q⁻(s', a) = 3 t1 instead
    R_vanilla = _hand_agent(double=False).targets(np.array([1.0], np.float32), np.array([[1.0]], np.float32),
                                                  np.array([0.0], np.float32))
    assert R_vanilla.item() == pytest.approx(1 + 1.5 * t1, abs=1e-6)
    # loss on (s=0.5, a=2): ½ (R − Q(s)[2])², Q(s)[2] = −t0
    y = 1 + 0.5 * t1
    loss = agent.loss_on(np.array([[0.5]], np.float32), np.array([2]), R)
    assert loss.item() == pytest.approx(0.5 * (y + t0) ** 2, abs=1e-5)
    # one Keras-RL training step: only the taken action's output row moves; Adam's first step is
    # lr · g / (|g| + ε) ≈ lr · sign(g); then the soft target update θ⁻ ← 0.01 θ + 0.99 θ⁻
    agent.memory.add(np.array([0.5]), 2, 1.0, np.array([1.0]), False)
    val = agent.train_step()
    assert val == pytest.approx(0.5 * (y + t0) ** 2, abs=1e-5)
    W = agent.online.head.weight.detach().numpy()[:, 0]
    b = agent.online.head.bias.detach().numpy()
    assert W[0] == pytest.approx(1.0) and W[1] == pytest.approx(2.0) and b[1] == pytest.approx(0.5)
    assert W[2] == pytest.approx(-1.0 + 0.1, abs=1e-5)  # grad −(y − q)·t0 < 0 → moves up by lr
    assert b[2] == pytest.approx(0.1, abs=1e-5)
    Wt = agent.target.head.weight.detach().numpy()[:, 0]
    assert Wt[2] == pytest.approx(0.99 * 3.0 + 0.01 * (-0.9), abs=1e-5)
    assert Wt[0] == pytest.approx(0.99 * 0.5 + 0.01 * 1.0, abs=1e-6)
    # the hidden weight's gradient −(y − q)·W[2]·(1 − t0²)·s is positive (W[2] < 0): w1 moves down by lr
    assert agent.online.layers[0].weight.item() == pytest.approx(1.0 - 0.1, abs=1e-5)


def test_hard_target_update_every_n_updates():
    agent = _hand_agent(double=True)
    agent.cfg["target_update"] = 2
    agent.memory.add(np.array([0.5]), 2, 1.0, np.array([1.0]), False)
    before = agent.target.head.weight.detach().clone()
    agent.train_step()
    assert torch.equal(agent.target.head.weight, before)
    agent.train_step()
    assert torch.equal(agent.target.head.weight, agent.online.head.weight)


# ------------------------------------------------------------------------------ the fetched page's state
def test_state_is_the_fetched_pages_thesis_features_when_readable(tiny_corpus):
    """Cross-check against the env's internals (a test may read them; the agent never does)."""
    from gym_crawl.features.thesis import disc_change, disc_distance, disc_relevance

    agent = make_agent("thesis-dqn", warmup=1000)
    env = _env(agent, tiny_corpus, steps=80)
    base = env.unwrapped
    obs, info = env.reset(seed=2)
    agent.begin_episode(base.view, np.random.default_rng(2))
    checked = 0
    for _ in range(80):
        a = agent.act(obs, info)
        obs2, r, term, trunc, info2 = env.step(a)
        approx_before = agent.approx_states
        agent.observe(Transition(obs, a, float(r), obs2, term, trunc, info2))
        if agent.approx_states == approx_before:
            st, p = base.state, info2["fetched_page"]
            want = np.concatenate([disc_relevance([st.rel[p], st.par_mean[p], st.relpar_mean[p]]),
                                   disc_change([st.change[p]]), disc_distance([st.dist[p]]),
                                   disc_relevance(st.cat[p])]).astype(np.float32)
            np.testing.assert_array_equal(agent._s, want)
            checked += 1
        obs, info = obs2, info2
        if term or trunc:
            break
    assert checked > 40 and agent.exact_states == checked


# ------------------------------------------------------------------------------ determinism, persistence
def test_deterministic_under_a_seed(tiny_corpus):
    runs = []
    for _ in range(2):
        agent = make_agent("thesis-dqn", warmup=10, seed=3)
        res = run_episode(_env(agent, tiny_corpus, steps=50), agent, seed=5)
        assert agent.updates == 40
        runs.append((res.fetched.tolist(), _weights(agent), agent.losses[:]))
    assert runs[0][0] == runs[1][0]
    assert runs[0][2] == runs[1][2]
    assert all(torch.equal(runs[0][1][k], runs[1][1][k]) for k in runs[0][1])
    other = make_agent("thesis-dqn", warmup=10, seed=4)
    run_episode(_env(other, tiny_corpus, steps=50), other, seed=5)
    assert not torch.equal(_weights(other)["head.weight"], runs[0][1]["head.weight"])


def test_test_mode_freezes_the_weights(tiny_corpus):
    agent = make_agent("thesis-dqn", warmup=5)
    run_episode(_env(agent, tiny_corpus, steps=20), agent, seed=0)
    w, n_mem, updates = _weights(agent), len(agent.memory), agent.updates
    agent.set_training(False)
    assert agent.epsilon == 0.1
    run_episode(_env(agent, tiny_corpus, steps=20), agent, seed=1)
    assert agent.updates == updates and len(agent.memory) == n_mem
    assert all(torch.equal(w[k], v) for k, v in _weights(agent).items())


def test_save_load_same_actions_weights_only(tiny_corpus, tmp_path):
    agent = make_agent("thesis-dqn", warmup=10, select="masked")
    run_episode(_env(agent, tiny_corpus, steps=40), agent, seed=0)
    path = agent.save(tmp_path / "dqn.pt")
    with zipfile.ZipFile(path) as z:  # a torch checkpoint, read back with weights_only=True
        assert any(n.endswith("data.pkl") for n in z.namelist())
    torch.load(path, weights_only=True)
    loaded = Agent.load(path, expect="thesis-dqn")
    assert isinstance(loaded, ThesisDQNAgent) and loaded.cfg["select"] == "masked"
    assert loaded.updates == agent.updates
    assert all(torch.equal(v, loaded.online.state_dict()[k]) for k, v in agent.online.state_dict().items())
    for a in (agent, loaded):
        a.set_training(False)
    ra = run_episode(_env(agent, tiny_corpus, steps=30), agent, seed=9)
    rb = run_episode(_env(loaded, tiny_corpus, steps=30), loaded, seed=9)
    assert ra.fetched.tolist() == rb.fetched.tolist()
    with pytest.raises(ValueError, match="not 'tres'"):
        Agent.load(path, expect="tres")


# ------------------------------------------------------------------------------ the benchmark
@pytest.mark.slow
def test_benchmark_quick_writes_its_results(tmp_path):
    import json

    from gym_crawl.benchmarks.thesis_dqn import main

    assert main(["--quick", "--out", str(tmp_path)]) == 0
    res = json.loads((tmp_path / "thesis_dqn.json").read_text())
    md = (tmp_path / "thesis_dqn.md").read_text()  # a quick run's banner, then the report's title
    assert md.startswith("> **illustrative, not a result**") and "\n# " in md
    assert any(p.endswith(".png") for p in res["figures"])
    for p in res["figures"]:
        assert (tmp_path / p).stat().st_size > 0
    runs = res["runs"]
    assert {r["agent"] for r in runs} >= {"best-first", "random", "thesis-dqn (test)"}
    assert all(len(r["final_relevant"]) >= 5 for r in runs)  # >= 5 seeds
    assert res["head_cost"] and res["head_cost"][0]["parameters"] > 0
