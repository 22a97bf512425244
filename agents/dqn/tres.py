"""TRES's Double-DQN crawler (Kontogiannis et al., §2.4–2.6), with Tree-Frontier and asynchronous variants.

``Q(s, a)`` is one MLP (two hidden layers, ReLU) on the shared state-action vector ``x(s, a)`` — the
env's feature rows — so one forward pass scores any number of candidates. Training is Double DQN
with experience replay and a target network; the bootstrap set is TRES's

    Ã_{t+1} = {outlinks of the page fetched at t+1} ∪ {the action the frontier method returns at t+1}

and the target ``y = r + γ · Q_θ⁻(x*)`` with ``x* = argmax_{x ∈ Ã_{t+1}} Q_θ(x)`` (no bootstrap when
the episode terminated). ``γ`` defaults to 0.3 (the paper's argument for a myopic crawler).

Two agents:

* ``tres`` (:class:`TresAgent`, slot actions) — run it with ``reducer="tree"``
  (:class:`gym_crawl.reducers.tree.TreeFrontier`) and K at least the number of leaves (e.g.
  ``--k 4096``): the candidate slots then hold one representative per Tree-Frontier leaf, all scored
  in one forward pass; the greedy action is the best representative. It works with any reducer.
* ``tres-async`` (:class:`TresAsyncAgent`, page actions) — TRES_Async: no tree; Han et al.'s
  asynchronous method. Each frontier page keeps the Q value computed when it was discovered or
  last re-discovered (the fetched page's out-links are re-scored every step, nothing else), and
  the agent fetches the page of highest stored Q. The priorities live in a flat max segment tree
  over page ids: O(out-degree · log n) per step, vectorized.

Exploration (TRES's published code has none):

* a **Tree-Random warm-up** of ``warmup_steps`` steps: a uniformly random candidate (with the tree:
  a random sample of a random leaf — the paper's Algorithm 2 exploration mode); for
  ``tres-async`` a uniformly random frontier page;
* then **ε-greedy** with ε decaying linearly from ``eps_start`` to ``eps_end`` over ``eps_decay_steps``.

Seed initialization (TRES §2.4.2): each episode's replay gets a seed experience — zero state-action
features (bias column 1 when the feature set has one), reward ``seed_reward`` (positive), and the
seeds' out-links as its bootstrap set.

The learning rate follows ``lr_schedule`` (``constant``, ``linear``, ``exponential``, ``cosine``)
from ``lr`` to ``lr_end`` over ``lr_decay_steps`` gradient updates and is written into the
optimizer's ``param_groups`` before every update (:attr:`current_lr` reads it back).

Rewards are divided by the env's maximum reward (``reward_scale="auto"``), so Han-style 30/−1
rewards and TRES's binary reward train at the same scale.

Persistence: :meth:`save` writes ``torch.save`` of a dict of tensors and plain values (networks,
optimizer, counters, config; atomically); :meth:`load` reads it with ``torch.load(weights_only=True)``.
The replay buffer is not saved. All randomness comes from the runner's ``rng`` (minibatches,
exploration) and ``config.seed`` (weight initialization); CPU training is deterministic.

Modules: the agents here; the typed, validated options in :mod:`gym_crawl.agents.dqn.config`
(:class:`DDQNConfig`: the agents take its fields as keyword arguments, or ``config=``; it is saved in
the checkpoint header); the Q-network in :mod:`gym_crawl.agents.dqn.network`; the replay buffer and
the max segment tree in :mod:`gym_crawl.agents.dqn.buffers`.
"""
from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl.agents.base import Agent, Transition, make_agent
from gym_crawl.agents.dqn.buffers import MaxSegmentTree, ReplayBuffer
from gym_crawl.agents.dqn.config import LR_SCHEDULES, DDQNConfig
from gym_crawl.agents.dqn.core import (
    adam,
    init_target,
    load_networks_state,
    networks_state,
    read_checkpoint,
    record_loss,
    restore_networks,
    save_checkpoint,
    update_target,
)
from gym_crawl.agents.dqn.network import QNetwork, nn, torch

__all__ = ["QNetwork", "ReplayBuffer", "MaxSegmentTree", "TresAgent", "TresAsyncAgent", "DDQNConfig", "DEFAULTS",
           "LR_SCHEDULES"]

CHECKPOINT_FORMAT = "gym_crawl.ddqn/1"
"""The ``format`` tag of :meth:`_DDQNBase.save`'s checkpoints."""

#: The default options as a plain dict (read-only view of :class:`DDQNConfig`'s defaults).
DEFAULTS: dict[str, Any] = DDQNConfig().to_dict()


def _gap(q: np.ndarray, j: int) -> float:
    """``q[j]`` minus the largest other value of ``q`` (``inf`` for a single value): the margin of an argmax."""
    if len(q) < 2:
        return math.inf
    return float(q[j]) - float(np.max(np.delete(q, j)))


# ============================================================================ the learner
class _DDQNBase(Agent):
    """Shared DDQN machinery (network, replay, target, schedules, persistence)."""

    env_defaults = {"features": "tres", "reward": "binary"}
    checks_own_config = True  # DDQNConfig.from_options refuses unknown names

    def __init__(self, config: DDQNConfig | None = None, **options: Any):
        """``options``: any :class:`DDQNConfig` field as a keyword (validated; unknown names are an
        error), or a ready ``config`` (then no options)."""
        if config is not None and options:
            raise ValueError(f"{self.name}: pass a DDQNConfig or keyword options, not both (got {sorted(options)})")
        if config is not None and not isinstance(config, DDQNConfig):
            raise ValueError(f"{self.name}: config must be a DDQNConfig, got {type(config).__name__}")
        cfg = config if config is not None else DDQNConfig.from_options(self.name, **options)
        super().__init__(**cfg.to_dict())
        self.cfg: DDQNConfig = cfg
        self.dim: int | None = None
        self.online: QNetwork | None = None
        self.target: QNetwork | None = None
        self.opt: torch.optim.Optimizer | None = None
        self.replay: ReplayBuffer | None = None
        self.steps = 0          # env steps taken by this agent over all episodes
        self.updates = 0        # gradient updates
        self.losses: list[float] = []
        self._scale = 1.0

    # ------------------------------------------------------------- building
    def _build(self, dim: int) -> None:
        c = self.cfg
        rng = np.random.default_rng(c.seed)
        self.dim = int(dim)
        self.online = QNetwork(dim, c.hidden, rng)
        self.target = QNetwork(dim, c.hidden)
        init_target(self.online, self.target)
        if c.torch_threads:
            torch.set_num_threads(c.torch_threads)
        self._params = list(self.online.parameters())
        self.opt = adam(self._params, c.lr)
        self._make_replay()

    def _make_replay(self) -> None:
        c = self.cfg
        assert self.dim is not None
        self.replay = ReplayBuffer(self.dim, c.buffer_size,
                                   max(c.buffer_size * c.rows_per_transition,
                                       4 * c.max_next_actions))

    def begin_episode(self, env: Any, rng: np.random.Generator) -> None:
        super().begin_episode(env, rng)
        dim = int(env.feature_dim)
        if self.online is None:
            self._build(dim)
        elif dim != self.dim:
            raise ValueError(f"{self.name}: the env's feature rows have {dim} columns, the network {self.dim}")
        if self.replay is None:
            self._make_replay()
        rs = self.cfg.reward_scale
        if rs == "auto":
            mr = float(env.max_reward or 1.0)
            self._scale = 1.0 / mr if mr > 0 else 1.0
        else:
            self._scale = float(rs)
        names = list(env.feature_names)
        self._bias_col = names.index("bias") if "bias" in names else -1

    def _seed_experience(self, frontier_rows: np.ndarray) -> None:
        """TRES's seed initialization: zero state-action features, a positive reward, and the
        seeds' out-links as the bootstrap set."""
        if not self.cfg.seed_init:
            return
        x = np.zeros(self.dim, np.float32)
        if self._bias_col >= 0:
            x[self._bias_col] = 1.0
        self.replay.add(x, self.cfg.seed_reward, False, self._cap_rows(frontier_rows, None))

    # ------------------------------------------------------------- policy helpers
    @property
    def epsilon(self) -> float:
        """Current exploration rate (1 during the Tree-Random warm-up)."""
        c = self.cfg
        t = self.steps - c.warmup_steps
        if t < 0:
            return 1.0
        frac = min(1.0, t / max(1, c.eps_decay_steps))
        return c.eps_start + frac * (c.eps_end - c.eps_start)

    def _explore(self) -> bool:
        return bool(self.rng.random() < self.epsilon)

    def q_values(self, X: np.ndarray) -> np.ndarray:
        """(n,) online Q of feature rows ``X`` (n, d), one batched forward pass."""
        assert self.online is not None
        if len(X) == 0:
            return np.zeros(0, np.float32)
        with torch.no_grad():
            return self.online(torch.from_numpy(np.ascontiguousarray(X, dtype=np.float32))).numpy()

    def _cap_rows(self, rows: np.ndarray, keep: np.ndarray | None) -> np.ndarray:
        """Bootstrap set: ``keep`` (the frontier method's action, always kept) + at most
        ``max_next_actions - len(keep)`` outlink rows (a uniform subset when there are more)."""
        m = self.cfg.max_next_actions - (0 if keep is None else len(keep))
        rows = np.clip(np.asarray(rows, np.float32).reshape(-1, self.dim), -1.0, 1.0)
        if len(rows) > m:
            rows = rows[np.sort(self.rng.choice(len(rows), size=m, replace=False))]
        return rows if keep is None else np.concatenate([rows, np.asarray(keep, np.float32).reshape(-1, self.dim)])

    # ------------------------------------------------------------- learning
    def lr_at(self, update: int) -> float:
        """Learning rate of gradient update number ``update`` under ``lr_schedule``."""
        c = self.cfg
        lr0, lr1 = c.lr, c.lr_end
        frac = min(1.0, update / max(1, c.lr_decay_steps))
        s = c.lr_schedule
        if s == "constant":
            return lr0
        if s == "linear":
            return lr0 + frac * (lr1 - lr0)
        if s == "exponential":
            return lr0 * (lr1 / lr0) ** frac if lr0 > 0 and lr1 > 0 else lr0 + frac * (lr1 - lr0)
        return lr1 + 0.5 * (lr0 - lr1) * (1.0 + math.cos(math.pi * frac))  # cosine

    @property
    def current_lr(self) -> float:
        """The learning rate the optimizer will use (read from its param_groups)."""
        return float(self.opt.param_groups[0]["lr"]) if self.opt is not None else self.cfg.lr

    def _train_if_ready(self) -> None:
        """``gradient_steps`` updates every ``train_freq`` env steps once the replay holds
        ``learning_starts`` transitions."""
        c = self.cfg
        if len(self.replay) >= c.learning_starts and (self.steps + 1) % c.train_freq == 0:
            for _ in range(c.gradient_steps):
                self.train_step()

    def _add(self, x: np.ndarray, r: float, done: bool, next_rows: np.ndarray) -> None:
        """Store the transition ``(x, r·scale, done, Ã_{t+1} rows)`` and count the env step."""
        self.replay.add(np.clip(x, -1.0, 1.0), float(r) * self._scale, done, next_rows)  # type: ignore[union-attr]
        self.steps += 1

    def targets(self, r: np.ndarray, done: np.ndarray, rows: np.ndarray, seg: np.ndarray) -> torch.Tensor:
        """DDQN targets ``y_b = r_b + γ (1 − done_b) Q_θ⁻(x*_b)``, ``x*_b = argmax_{x ∈ Ã_b} Q_θ(x)`` (first
        row on ties; no bootstrap for an empty Ã_b). ``rows`` (M, d) holds every Ã_b, ``seg`` (M,) the
        batch index of each row. With ``double=False``: ``max_{x ∈ Ã_b} Q_θ⁻(x)`` (vanilla DQN)."""
        assert self.online is not None and self.target is not None
        B = len(r)
        boot = np.zeros(B, np.float32)
        with torch.no_grad():
            if len(rows):
                rt = torch.from_numpy(np.ascontiguousarray(rows, dtype=np.float32))
                if self.cfg.double:
                    # per-segment argmax (first on ties) in numpy: a few array passes instead of ~10 small
                    # torch ops; the same selection, so the same targets
                    q_on = self.online(rt).numpy()
                    sg = np.asarray(seg, np.int64)
                    M = len(rows)
                    best = np.full(B, -np.inf, np.float32)
                    np.maximum.at(best, sg, q_on)
                    first = np.full(B, M, np.int64)
                    np.minimum.at(first, sg, np.where(q_on == best[sg], np.arange(M), M))
                    has = first < M
                    if has.any():
                        boot[has] = self.target(rt[torch.from_numpy(first[has])]).numpy()
                else:
                    q_t = self.target(rt).numpy()
                    best = np.full(B, -np.inf, np.float32)
                    np.maximum.at(best, np.asarray(seg, np.int64), q_t)
                    has = np.isfinite(best)
                    boot[has] = best[has]
        # the same float32 operations as the torch expression r + γ·(1 − done)·boot, in numpy
        not_done = np.float32(1.0) - np.asarray(done, np.float32)
        y = np.asarray(r, np.float32) + np.float32(self.cfg.gamma) * not_done * boot
        return torch.from_numpy(y)

    def _mse_grads(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """The MSE loss of the online network on ``x`` against ``y`` and its gradients written into each
        parameter's ``.grad``, by the MLP's backward written out (no autograd graph): the same operations as
        autograd's ``addmm``/``threshold``/``mse_loss`` backward, so loss and gradients are bit-identical to
        ``mse_loss(online(x), y).backward()`` (tested), without autograd's per-node overhead, which dominates on
        these tiny tensors (figures in ``benchmarks/RESULTS.md``)."""
        layers = self.online.linears  # type: ignore[union-attr]
        last = len(layers) - 1
        with torch.no_grad():
            hs = [x]
            h = x
            for i, m in enumerate(layers):
                h = nn.functional.linear(h, m.weight, m.bias)
                if i < last:
                    h = torch.relu(h)
                hs.append(h)
            diff = h.squeeze(-1) - y
            loss = diff.square().mean()
            g = (diff * (2.0 / len(y))).unsqueeze(-1)
            for i in range(last, -1, -1):
                m = layers[i]
                m.bias.grad = g.sum(0)
                m.weight.grad = g.t().mm(hs[i])
                if i:
                    g = torch.where(hs[i] > 0, g.mm(m.weight), 0.0)
        return loss

    def _clip_grads(self, max_norm: float) -> None:
        """``nn.utils.clip_grad_norm_(online.parameters(), max_norm)`` on CPU with its own operations (per-tensor
        norms, the norm of their stack, ``clamp(max_norm / (norm + 1e-6), max=1)``, one in-place multiply),
        without its per-call grouping by device and dtype; the multiply is skipped when the coefficient is 1
        (``g · 1.0 == g`` exactly), so the gradients are the same bits (tested)."""
        grads = [p.grad for p in self._params if p.grad is not None]
        if not grads:
            return
        total = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads, 2.0)), 2.0)
        coef = torch.clamp(float(max_norm) / (total + 1e-6), max=1.0)
        if bool(coef < 1.0):
            torch._foreach_mul_(grads, coef)

    def train_step(self) -> float:
        """One DDQN minibatch update; returns the loss."""
        assert self.online is not None and self.target is not None and self.opt is not None
        c = self.cfg
        x, r, done, rows, seg = self.replay.sample(c.batch_size, self.rng)  # type: ignore[union-attr]
        y = self.targets(r, done, rows, seg)
        lr = self.lr_at(self.updates)
        for g in self.opt.param_groups:
            g["lr"] = lr
        xt = torch.from_numpy(x)
        if c.loss == "mse":
            loss = self._mse_grads(xt, y)
        else:
            q = self.online(xt)
            loss = nn.functional.smooth_l1_loss(q, y)
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
        if c.grad_clip:
            self._clip_grads(c.grad_clip)
        self.opt.step()
        self.updates += 1
        update_target(self.online, self.target, c.target_update, self.updates)
        return record_loss(self.losses, loss)

    # ------------------------------------------------------------- persistence
    def state_dict(self) -> dict[str, np.ndarray]:
        """Network parameters as numpy arrays (``online.*``, ``target.*``)."""
        if self.online is None:
            return {}
        out = networks_state(self.online, self.target)  # type: ignore[arg-type]
        out["dim"] = np.asarray(self.dim, np.int64)
        return out

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        if not state:
            return
        self._build(int(np.asarray(state["dim"])))
        load_networks_state(state, self.online, self.target)  # type: ignore[arg-type]

    def save(self, path: str | Path) -> Path:
        """``torch.save`` of networks, optimizer state, counters and config (atomic; no replay)."""
        header = {"format": CHECKPOINT_FORMAT, "agent": self.registered_name, "config": json.dumps(self.cfg.to_dict()),
                  "steps": self.steps, "updates": self.updates, "dim": -1 if self.dim is None else self.dim}
        env = self.model_config()
        if env is not None:  # the env it needs (gym_crawl.agents.env_config)
            header["env"] = json.dumps(env)
        return save_checkpoint(path, header, self.online, self.target, self.opt)

    @classmethod
    def load(cls, path: str | Path) -> Agent:
        """Rebuild an agent written by :meth:`save` (``torch.load(weights_only=True)``); an ``.npz``
        written by :meth:`Agent.save` is delegated to it."""
        blob = read_checkpoint(path, CHECKPOINT_FORMAT, "DDQN")
        if blob is None:
            return Agent.load(path)
        agent = make_agent(blob["agent"], **DDQNConfig.from_dict(json.loads(blob["config"]), str(path)).to_dict())
        assert isinstance(agent, _DDQNBase)
        if int(blob["dim"]) >= 0:
            agent._build(int(blob["dim"]))
            restore_networks(blob, agent.online, agent.target, agent.opt)
        agent.steps, agent.updates = int(blob["steps"]), int(blob["updates"])
        return agent


class TresAgent(_DDQNBase):
    """TRES: DDQN over Tree-Frontier representatives (candidate slots). See the module docstring."""

    name = "tres"
    action_kind = "slot"
    env_defaults = {"reducer": "tree", "features": "tres", "reward": "binary", "max_candidates": 4096}

    def begin_episode(self, env: Any, rng: np.random.Generator) -> None:
        super().begin_episode(env, rng)
        self._cache: tuple[int, np.ndarray, np.ndarray] | None = None
        self._warned = False
        self._seed_experience(env.features_of(env.frontier_pages()[: 4 * self.cfg.max_next_actions]))

    def _greedy(self, obs: Any) -> tuple[np.ndarray, np.ndarray]:
        """Valid slots and their Q values (one forward pass over all representatives)."""
        valid = np.flatnonzero(np.asarray(obs["mask"]) > 0)
        if self._cache is not None and self._cache[0] == self.steps:
            return self._cache[1], self._cache[2]
        q = self.q_values(np.asarray(obs["candidates"])[valid])
        return valid, q

    def act(self, obs: Any, info: dict) -> int:
        valid = np.flatnonzero(np.asarray(obs["mask"]) > 0)
        if len(valid) == 0:
            raise RuntimeError("tres: no valid candidate slot (empty frontier)")
        if not self._warned and len(valid) == len(obs["mask"]) and len(valid) > 1:
            self._warned = True
            warnings.warn(f"tres: all {len(valid)} candidate slots are full — with reducer='tree' some leaves "
                          "may not be shown; raise max_candidates (K) above the number of leaves", stacklevel=2)
        if self._explore():
            self.last_margin = None
            return int(valid[self.rng.integers(len(valid))])
        v, q = self._greedy(obs)
        j = int(np.argmax(q))
        self.last_margin = _gap(q, j)
        return int(v[j])

    def overrule(self, action: int) -> None:
        """Nothing to update: :meth:`observe` reads the row of the slot taken from the transition."""

    def observe(self, tr: Transition) -> None:
        info = tr.info
        if info.get("invalid_action") or info.get("fetched_page", -1) < 0:
            return
        env = self.env
        x = np.asarray(tr.obs["candidates"])[tr.action]
        outl = np.asarray(env.frontier_changes().updated)
        outl = outl[np.asarray(env.is_frontier(outl), bool)] if len(outl) else outl
        rows = env.features_of(outl) if len(outl) else np.zeros((0, self.dim), np.float32)
        done = bool(tr.terminated)
        self._train_if_ready()  # Algorithm 4: train, then ask the frontier method for a_{t+1}
        valid = np.flatnonzero(np.asarray(tr.next_obs["mask"]) > 0)
        keep = None
        if len(valid):
            cands = np.asarray(tr.next_obs["candidates"])[valid]
            q = self.q_values(cands)  # one forward pass over every representative
            self._cache = (self.steps + 1, valid, q)
            keep = cands[int(np.argmax(q))][None, :]
        next_rows = self._cap_rows(rows, keep) if not done else np.zeros((0, self.dim), np.float32)
        self._add(x, tr.reward, done, next_rows)


class TresAsyncAgent(_DDQNBase):
    """TRES_Async: the same DDQN with Han et al.'s asynchronous frontier instead of the tree
    (stale priorities; only the fetched page's out-links are re-scored). Page actions."""

    name = "tres-async"
    action_kind = "page"
    env_defaults = {"features": "tres", "reward": "binary"}

    def begin_episode(self, env: Any, rng: np.random.Generator) -> None:
        super().begin_episode(env, rng)
        n = int(env.n_pages)
        if getattr(self, "_prio", None) is None or self._prio.n != n:
            self._prio = MaxSegmentTree(n)
        else:
            self._prio.clear()
        F = np.asarray(env.frontier_pages()).copy()
        X = env.features_of(F) if len(F) else np.zeros((0, self.dim), np.float32)
        self._prio.update(F, self.q_values(np.clip(X, -1, 1)))
        self._seed_experience(X[: 4 * self.cfg.max_next_actions])
        self._next: int = -1
        self._x_act: np.ndarray | None = None

    def _best_page(self) -> int:
        """Highest stored priority among frontier pages (departed pages are dropped lazily)."""
        env = self.env
        while True:
            p = self._prio.argmax()
            if p < 0:
                return -1
            if bool(env.is_frontier(p)):
                return p
            self._prio.update(np.asarray([p]), np.asarray([-np.inf]))

    def act(self, obs: Any, info: dict) -> int:
        env = self.env
        if self._explore():
            F = env.frontier_pages()
            p = int(F[self.rng.integers(len(F))])
            self.last_margin = None
        else:
            p = self._next if self._next >= 0 and bool(env.is_frontier(self._next)) else self._best_page()
            if p < 0:
                raise RuntimeError("tres-async: no frontier page has a priority")
            self.last_margin = self._priority_gap(p)
        self._x_act = np.clip(env.features_of(np.asarray([p]))[0], -1.0, 1.0)
        return p

    def _priority_gap(self, page: int) -> float:
        """Stored priority of ``page`` minus the largest other stored priority (``inf`` when it is alone)."""
        v = self._prio.get(np.asarray([page]))
        self._prio.update(np.asarray([page]), np.asarray([-np.inf]))
        other = self._prio.max()
        self._prio.update(np.asarray([page]), v)
        return float(v[0] - other) if other > -np.inf else math.inf

    def overrule(self, action: int) -> None:
        """Fetch ``action`` (a frontier page): its row becomes the transition's state-action row."""
        self._x_act = np.clip(self.env.features_of(np.asarray([action]))[0], -1.0, 1.0)

    def observe(self, tr: Transition) -> None:
        info = tr.info
        page = int(info.get("fetched_page", -1))
        if page < 0 or self._x_act is None:
            return
        env = self.env
        self._prio.update(np.asarray([page]), np.asarray([-np.inf]))
        outl = np.asarray(env.frontier_changes().updated)
        outl = outl[np.asarray(env.is_frontier(outl), bool)] if len(outl) else outl
        rows = np.clip(env.features_of(outl), -1.0, 1.0) if len(outl) else np.zeros((0, self.dim), np.float32)
        done = bool(tr.terminated)
        self._train_if_ready()
        # asynchronous method: score only the fetched page's out-links (with the current network)
        if len(outl):
            self._prio.update(outl, self.q_values(rows))
        self._next = self._best_page() if not done else -1
        keep = env.features_of(np.asarray([self._next])) if self._next >= 0 else None
        next_rows = self._cap_rows(rows, keep) if not done else np.zeros((0, self.dim), np.float32)
        self._add(self._x_act, tr.reward, done, next_rows)
        self._x_act = None
