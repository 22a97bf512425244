"""TRES DDQN agents: targets, replay, schedules, exploration, persistence, determinism."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import gym_crawl  # noqa: F401
from gym_crawl.agents import make_agent, make_env_for, run_episode
from gym_crawl.agents.dqn.tres import (
    DEFAULTS,
    DDQNConfig,
    MaxSegmentTree,
    QNetwork,
    ReplayBuffer,
    TresAgent,
    TresAsyncAgent,
)
from gym_crawl.reducers.tree import TreeFrontier

torch.set_num_threads(1)


def _agent(**kw) -> TresAgent:
    a = TresAgent(**kw)
    a._build(3)
    return a


def _set_linear(net: QNetwork, w: list[float], b: float = 0.0) -> None:
    lin = net.net[0]
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([w], dtype=torch.float32))
        lin.bias.fill_(b)


# ------------------------------------------------------------------ targets
def test_double_dqn_target_uses_online_argmax_and_target_value():
    a = _agent(hidden=[], gamma=0.5)
    _set_linear(a.online, [1.0, 0.0, 0.0])   # online prefers row with large x0
    _set_linear(a.target, [0.0, 1.0, 0.0])   # target values x1
    rows = np.array([[2, 0, 0], [0, 9, 0],          # transition 0: online argmax = row 0 → target 0
                     [0, 1, 0], [1, 3, 0],          # transition 1: online argmax = row 3 → target 3
                     ], np.float32)
    seg = np.array([0, 0, 1, 1])
    y = a.targets(np.array([1.0, 0.0, 0.5]), np.array([0.0, 0.0, 0.0]), rows, seg).numpy()
    assert y.tolist() == pytest.approx([1.0 + 0.5 * 0.0, 0.0 + 0.5 * 3.0, 0.5])  # empty Ã: no bootstrap
    y_done = a.targets(np.array([1.0, 0.0, 0.5]), np.array([1.0, 1.0, 0.0]), rows, seg).numpy()
    assert y_done.tolist() == pytest.approx([1.0, 0.0, 0.5])
    a.cfg = a.cfg.replace(double=False)             # vanilla DQN: max of the target net
    assert a.targets(np.zeros(2), np.zeros(2), rows, seg).numpy().tolist() == pytest.approx([4.5, 1.5])


@pytest.mark.parametrize("hidden", [[], [16], [64, 64]])
def test_written_out_mse_backward_equals_autograd_bit_for_bit(hidden):
    """train_step's MSE gradients (the MLP's backward written out, no autograd graph) are autograd's, bit for bit."""
    a = _agent(hidden=hidden)
    rng = np.random.default_rng(3)
    x = torch.from_numpy(rng.uniform(-1, 1, (64, 3)).astype(np.float32))
    y = torch.from_numpy(rng.uniform(-1, 1, 64).astype(np.float32))
    loss = a._mse_grads(x, y)
    mine = [p.grad.clone() for p in a.online.parameters()]
    a.opt.zero_grad(set_to_none=True)
    ref = torch.nn.functional.mse_loss(a.online(x), y)
    ref.backward()
    assert torch.equal(loss, ref.detach())
    for g, p in zip(mine, a.online.parameters()):
        assert g.shape == p.shape and torch.equal(g, p.grad)


@pytest.mark.parametrize("double", [True, False])
def test_targets_on_replay_samples_equal_the_torch_expression(tiny_corpus, double):
    """On real replay samples the targets (assembled in numpy) equal r + γ(1 − done)·boot computed in torch with
    a per-transition argmax / max, bit for bit."""
    a = make_agent("tres", learning_starts=10, hidden=[16, 16], double=double)
    env = make_env_for(a, corpus=tiny_corpus, max_episode_steps=60, max_candidates=256)
    run_episode(env, a, seed=0)
    rng = np.random.default_rng(1)
    for _ in range(5):
        _, r, done, rows, seg = a.replay.sample(16, rng)
        with torch.no_grad():
            rt = torch.from_numpy(rows)
            q_on, q_t = a.online(rt), a.target(rt)
            boot = torch.zeros(16)
            pick = {b: int(torch.nonzero(torch.from_numpy(seg == b))[torch.argmax(q_on[seg == b])])
                    for b in range(16) if (seg == b).any()}
            if pick and double:
                boot[list(pick)] = a.target(rt[list(pick.values())])
            elif pick:
                boot[list(pick)] = torch.stack([q_t[seg == b].max() for b in pick])
            want = torch.from_numpy(r) + a.cfg.gamma * (1.0 - torch.from_numpy(done)) * boot
        assert torch.equal(a.targets(r, done, rows, seg), want)


@pytest.mark.parametrize("max_norm", [1e-3, 0.5, 1e6])
def test_gradient_clipping_equals_clip_grad_norm_bit_for_bit(max_norm):
    a = _agent(hidden=[16, 16])
    rng = np.random.default_rng(4)
    x = torch.from_numpy(rng.uniform(-1, 1, (64, 3)).astype(np.float32))
    y = torch.from_numpy(rng.uniform(-5, 5, 64).astype(np.float32))
    a._mse_grads(x, y)
    raw = [p.grad.clone() for p in a.online.parameters()]
    a._clip_grads(max_norm)
    ref = [g.clone() for g in raw]
    params = [torch.nn.Parameter(torch.zeros_like(g)) for g in ref]
    for q, g in zip(params, ref):
        q.grad = g
    torch.nn.utils.clip_grad_norm_(params, max_norm)
    for q, p in zip(params, a.online.parameters()):
        assert torch.equal(q.grad, p.grad)
    if max_norm == 1e6:
        assert all(torch.equal(g, p.grad) for g, p in zip(raw, a.online.parameters()))


def test_batched_q_equals_rowwise_q():
    a = _agent(hidden=[16, 8])
    X = np.random.default_rng(0).random((50, 3)).astype(np.float32)
    q = a.q_values(X)
    assert q.shape == (50,)
    assert np.allclose(q, [a.q_values(X[i:i + 1])[0] for i in range(50)], atol=1e-6)


# ------------------------------------------------------------------ replay
def test_replay_ragged_rows_and_ring_invalidation():
    rb = ReplayBuffer(dim=2, capacity=8, row_capacity=20)
    rng = np.random.default_rng(0)
    for s in range(40):
        n = int(rng.integers(0, 6))
        rb.add(np.array([s, 0], np.float32), float(s), s % 7 == 0, np.full((n, 2), s, np.float32))
        assert 1 <= len(rb) <= 8
        x, r, d, rows, seg = rb.sample(16, rng)
        assert np.all(r == x[:, 0])                                  # transition fields stay together
        assert np.all(rows[:, 0] == x[seg, 0])                       # its rows are its own
        assert np.all(r >= s - 7)                                    # only the last `capacity` ones
        assert np.all(d == (x[:, 0] % 7 == 0))


def test_replay_rejects_oversized_bootstrap_sets():
    rb = ReplayBuffer(dim=1, capacity=4, row_capacity=3)
    with pytest.raises(ValueError, match="row capacity"):
        rb.add(np.zeros(1, np.float32), 0.0, False, np.zeros((4, 1), np.float32))


# ------------------------------------------------------------------ async priorities
@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 300), ops=st.lists(st.tuples(st.integers(0, 10_000), st.integers(1, 20)), max_size=30))
def test_max_segment_tree_matches_brute_force(n, ops):
    t = MaxSegmentTree(n)
    ref = np.full(n, -np.inf)
    assert t.argmax() == -1
    for seed, k in ops:
        rng = np.random.default_rng(seed)
        items = rng.integers(0, n, k)
        vals = np.where(rng.random(k) < 0.2, -np.inf, rng.integers(-3, 3, k).astype(float))
        t.update(items, vals)
        for i, v in zip(items, vals):   # later duplicates win, as in numpy assignment
            ref[i] = v
        if np.isfinite(ref).any():
            assert t.argmax() == int(np.argmax(ref)) and t.max() == ref.max()
        else:
            assert t.argmax() == -1


# ------------------------------------------------------------------ schedules
def test_lr_schedule_reaches_the_optimizer():
    a = _agent(lr=1e-2, lr_end=1e-4, lr_schedule="linear", lr_decay_steps=10, learning_starts=1, batch_size=4)
    for i in range(5):
        a.replay.add(np.ones(3, np.float32) * i, 1.0, False, np.ones((2, 3), np.float32))
    seen = []
    for _ in range(12):
        a.train_step()
        seen.append(a.current_lr)
    assert seen[0] == pytest.approx(1e-2)
    assert seen[5] == pytest.approx(1e-2 + 0.5 * (1e-4 - 1e-2))
    assert seen[-1] == pytest.approx(1e-4)
    assert all(x >= y for x, y in zip(seen, seen[1:]))
    for kind in ("exponential", "cosine", "constant"):
        b = _agent(lr=1e-2, lr_end=1e-4, lr_schedule=kind, lr_decay_steps=10)
        assert b.lr_at(0) == pytest.approx(1e-2)
        assert b.lr_at(10) == pytest.approx(1e-4 if kind != "constant" else 1e-2)


def test_zero_learning_rate_from_the_schedule_freezes_the_network():
    a = _agent(lr=1e-2, lr_end=0.0, lr_schedule="linear", lr_decay_steps=1, batch_size=4)
    for i in range(5):
        a.replay.add(np.ones(3, np.float32) * i, 1.0, False, np.zeros((0, 3), np.float32))
    a.train_step()                                  # update 0 at lr 1e-2: weights move
    before = [p.detach().clone() for p in a.online.parameters()]
    a.train_step()                                  # update 1 at lr 0: Adam must not move them
    assert all(torch.equal(p, q) for p, q in zip(before, a.online.parameters()))


def test_epsilon_schedule_with_tree_random_warmup():
    a = _agent(warmup_steps=10, eps_start=0.5, eps_end=0.1, eps_decay_steps=20)
    assert a.epsilon == 1.0
    a.steps = 10
    assert a.epsilon == pytest.approx(0.5)
    a.steps = 20
    assert a.epsilon == pytest.approx(0.3)
    a.steps = 1000
    assert a.epsilon == pytest.approx(0.1)


def test_learns_a_reward_that_depends_on_the_features():
    a = _agent(hidden=[16, 16], gamma=0.0, lr=1e-2, lr_end=1e-2, batch_size=32, seed=1)
    rng = np.random.default_rng(0)
    for _ in range(400):
        x = rng.random(3).astype(np.float32)
        a.replay.add(x, float(x[0] > 0.5), False, np.zeros((0, 3), np.float32))
    for _ in range(300):
        a.train_step()
    q = a.q_values(np.array([[0.9, 0.5, 0.5], [0.1, 0.5, 0.5]], np.float32))
    assert q[0] > 0.7 and q[1] < 0.3


# ------------------------------------------------------------------ in the env
def _env(corpus, reducer="tree", steps=60):
    """The env of ``tres`` (slot mode, with the tree) or of ``tres-async`` (page mode, any other reducer)."""
    agent = "tres" if reducer == "tree" else "tres-async"
    return make_env_for(agent, env_id="WikiCrawl-v0", corpus=corpus, features="tres", reward="binary",
                        reducer=TreeFrontier(min_samples_split=4) if reducer == "tree" else reducer,
                        max_candidates=256, max_episode_steps=steps)


FAST = dict(hidden=[16, 16], batch_size=16, learning_starts=8, warmup_steps=10, eps_decay_steps=20)


@pytest.mark.parametrize("name", ["tres", "tres-async"])
def test_same_seed_same_trajectory_and_different_seed_differs(tiny_corpus, name):
    red = "tree" if name == "tres" else "outlinks"
    runs = [run_episode(_env(tiny_corpus, red), make_agent(name, **FAST), seed=s).fetched.tolist()
            for s in (0, 0, 1)]
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_tres_stores_seed_experience_and_tree_action_in_the_bootstrap_set(tiny_corpus):
    env = _env(tiny_corpus)
    agent = TresAgent(**FAST)
    obs, info = env.reset(seed=3)
    agent.begin_episode(env.unwrapped.view, np.random.default_rng(3))
    rb = agent.replay
    assert len(rb) == 1 and rb.R[0] == 1.0 and rb.X[0, env.unwrapped.view.feature_names.index("bias")] == 1.0
    assert np.count_nonzero(rb.X[0]) == 1
    agent.cfg = agent.cfg.replace(warmup_steps=0, eps_start=0.0, eps_end=0.0)
    a = agent.act(obs, info)
    obs2, r, term, trunc, info2 = env.step(a)
    from gym_crawl.agents.base import Transition
    agent.observe(Transition(obs, a, r, obs2, term, trunc, info2))
    i = 1
    rows = rb.rows[rb.S[i]:rb.S[i] + rb.L[i]]
    valid = np.flatnonzero(obs2["mask"])
    q = agent.q_values(obs2["candidates"][valid])
    assert np.allclose(rows[-1], obs2["candidates"][valid[int(np.argmax(q))]])  # the tree's greedy action
    assert rb.R[i] == r and np.allclose(rb.X[i], obs["candidates"][a])
    # greedy act() reuses those Q values: it picks that representative
    assert agent.act(obs2, info2) == valid[int(np.argmax(q))]


def test_async_agent_fetches_the_highest_stored_priority(tiny_corpus):
    env = _env(tiny_corpus, "outlinks")
    agent = TresAsyncAgent(**{**FAST, "warmup_steps": 0, "eps_start": 0.0, "eps_end": 0.0})
    env.reset(seed=0)
    agent.begin_episode(env.unwrapped.view, np.random.default_rng(0))
    F = env.unwrapped.view.frontier_pages().copy()
    pr = agent._prio.get(F)
    p = agent.act(None, {})
    assert p == F[int(np.argmax(pr))] or pr[list(F).index(p)] == pr.max()


def test_save_load_round_trip_with_weights_only(tiny_corpus, tmp_path):
    agent = make_agent("tres", **FAST)
    run_episode(_env(tiny_corpus, steps=40), agent, seed=0)
    path = agent.save(tmp_path / "tres.pt")
    blob = torch.load(path, weights_only=True)                # loadable without pickle
    assert blob["agent"] == "tres" and blob["updates"] == agent.updates > 0
    loaded = TresAgent.load(path)
    X = np.random.default_rng(0).random((20, agent.dim)).astype(np.float32)
    assert np.allclose(loaded.q_values(X), agent.q_values(X))
    assert loaded.config == agent.config and loaded.steps == agent.steps
    assert loaded.current_lr == pytest.approx(agent.current_lr)
    # the numpy state_dict protocol round-trips too
    other = TresAgent(**FAST)
    other.load_state_dict(agent.state_dict())
    assert np.allclose(other.q_values(X), agent.q_values(X))


def test_unknown_options_are_rejected():
    with pytest.raises(ValueError, match="unknown option"):
        TresAgent(gama=0.3)
    with pytest.raises(ValueError, match="lr_schedule"):
        TresAgent(lr_schedule="warm")


# ------------------------------------------------------------------ the typed config
# the option table the agents had before the config became a dataclass: the defaults must not move
_FORMER_DEFAULTS = {
    "gamma": 0.3, "hidden": [64, 64], "lr": 1e-3, "lr_end": 1e-4, "lr_schedule": "linear", "lr_decay_steps": 20_000,
    "batch_size": 64, "buffer_size": 50_000, "rows_per_transition": 24, "max_next_actions": 64,
    "learning_starts": 64, "train_freq": 1, "gradient_steps": 1, "target_update": 500, "warmup_steps": 100,
    "eps_start": 0.05, "eps_end": 0.01, "eps_decay_steps": 2_000, "seed_init": True, "seed_reward": 1.0,
    "reward_scale": "auto", "double": True, "loss": "mse", "grad_clip": 10.0, "seed": 0,
    "torch_threads": 1}  # torch_threads: added later, a speed option, not a learning one


def test_config_is_frozen_validated_and_keeps_the_defaults():
    cfg = DDQNConfig()
    assert cfg.to_dict() == _FORMER_DEFAULTS and DEFAULTS == _FORMER_DEFAULTS
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.gamma = 0.9  # type: ignore[misc]
    assert DDQNConfig(hidden=[8, 4]).hidden == (8, 4)
    for bad, word in [({"gamma": 1.5}, "gamma"), ({"batch_size": 0}, "batch_size"), ({"hidden": [8, 0]}, "hidden"),
                      ({"loss": "l1"}, "loss"), ({"eps_start": -0.1}, "eps_start"), ({"double": "yes"}, "double"),
                      ({"reward_scale": "big"}, "reward_scale"), ({"lr": float("nan")}, "lr"),
                      ({"warmup_steps": 2.5}, "warmup_steps")]:
        with pytest.raises(ValueError, match=word):
            DDQNConfig(**bad)
    with pytest.raises(ValueError, match="unknown option"):
        cfg.replace(gama=0.1)
    assert cfg.replace(gamma=0.5).gamma == 0.5 and cfg.gamma == 0.3
    a = TresAgent(config=cfg.replace(gamma=0.7))
    assert a.cfg.gamma == 0.7 and a.config["gamma"] == 0.7
    with pytest.raises(ValueError, match="not both"):
        TresAgent(config=cfg, gamma=0.5)


def test_checkpoint_header_holds_the_config(tmp_path):
    agent = TresAsyncAgent(**{**FAST, "gamma": 0.6, "loss": "huber"})
    path = agent.save(tmp_path / "a.pt")
    blob = torch.load(path, weights_only=True)
    assert json.loads(blob["config"]) == agent.cfg.to_dict()
    loaded = TresAsyncAgent.load(path)
    assert isinstance(loaded, TresAsyncAgent) and loaded.cfg == agent.cfg and loaded.cfg.hidden == (16, 16)
