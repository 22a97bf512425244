"""deep-deep-style linear Q-learning over hashed link features (``hashed-q``).

TeamHG-Memex's deep-deep (``deepdeep/qlearning.py``, ``vectorizers.py``, ``spiders/qspider.py``) learns
``Q(s, a) = w · x(a)`` with a linear regressor over hashed features of a link (binary, L2-normalized
``HashingVectorizer`` rows of the link text and URL, a same-domain flag), with:

* **experience replay**: an experience is ``(x(a_t), A_{t+1}, r_{t+1})`` where ``A_{t+1}`` holds the
  feature rows of the links *of the fetched page* (the actions it made available); every step the
  online regressor is fitted (one SGD pass, ``SGDRegressor.partial_fit``, constant learning rate) on
  a sample of the memory;
* **TD target** ``y = r + γ · Q_target(argmax_{a ∈ A_{t+1}} Q_online(a))`` — a simple double learning:
  the online function chooses, the target function evaluates; ``y = r`` when ``A_{t+1}`` is empty;
* **a target function** copied from the online one every ``steps_before_switch`` (100) steps;
* γ = 0.4 ("lower values make the spider focus on immediate reward"), ε-greedy exploration (0.2
  there), L2 ``alpha`` 1e-6.

Here the rows are the env's ``hashed-transferable`` feature set (:mod:`gym_crawl.features.content`:
deep-deep's link text / URL / same-domain tokens plus surrounding text and parent title, and
topic-relative dense columns that transfer across topics), read through the env's documented accessors; ``A_{t+1}`` =
the rows of ``frontier_changes().updated`` after the fetch (the fetched page's unvisited out-links); rewards are
divided by ``env.max_reward``. Defaults follow deep-deep (γ 0.4, switch every 100 steps, double
learning) except: ε = 0.1 while training (the suite evaluates with ε = 0), replay sample 32 (deep-deep
300: our episodes are 100-1000 steps, not 10^5) and memory 5,000 experiences, and the step: one
normalized (NLMS) minibatch step of rate ``lr`` = 0.5 instead of per-example SGD at 0.1 — rows here
also carry dense relevance columns, so their norms vary, and a summed step over correlated
examples diverged. The frontier is ordered by Q of each page's latest row
(re-scored every step with one sparse mat-vec), ties → earliest in ``frontier_pages()``; before any
learning w is zero except ``prior`` on ``a.link_rel`` (best-first's priority); with ``prior_mode="fixed"``
that weight stays ``prior`` (the target function's copy too): Q = ``prior`` × best-first's link score + a
learned residual (variant ``hashed-q+prior``).
"""
from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

import gym_crawl.features.content  # noqa: F401  (registers the content feature sets)
from gym_crawl.agents.base import Transition
from gym_crawl.agents.hashed.online_classifier import RingBuffer, RowLearner, row_dot

__all__ = ["ExperienceReplay", "HashedQAgent", "q_sgd_step", "q_targets"]


class ExperienceReplay(RingBuffer[tuple[np.ndarray, np.ndarray, "sp.csr_matrix | None", float, bool]]):
    """Ring buffer of ``(x_t, A_{t+1}, r_{t+1}, done)`` with sparse rows, saved as flat arrays."""

    def __init__(self, capacity: int, max_next: int = 64):
        super().__init__(capacity)
        self.max_next = int(max_next)

    def add(self, cols: np.ndarray, vals: np.ndarray, nxt: sp.csr_matrix | None, r: float, done: bool) -> None:
        if nxt is not None and nxt.shape[0] > self.max_next:
            nxt = nxt[: self.max_next]
        self.put((cols, vals, nxt, float(r), bool(done)))

    def batch(self, idx: np.ndarray, dim: int):
        """``(X (CSR arrays), N (CSR of all next rows), group of each next row, r, done)``."""
        its = [self.items[int(i)] for i in idx]
        lens = np.array([len(c) for c, *_ in its], np.int64)
        indptr = np.zeros(len(its) + 1, np.int64)
        np.cumsum(lens, out=indptr[1:])
        cols = np.concatenate([c for c, *_ in its])
        vals = np.concatenate([v for _, v, *_ in its])
        nx = [(i, it[2]) for i, it in enumerate(its) if it[2] is not None and it[2].shape[0] > 0 and not it[4]]
        if nx:
            N = sp.vstack([m for _, m in nx], format="csr")
            group = np.repeat(np.array([i for i, _ in nx]), [m.shape[0] for _, m in nx])
        else:
            N = sp.csr_matrix((0, dim), dtype=np.float32)
            group = np.zeros(0, np.int64)
        r = np.array([it[3] for it in its])
        return (indptr, cols, vals), N, group, r

    def state(self) -> dict[str, np.ndarray]:
        n = len(self.items)
        lens = np.array([len(c) for c, *_ in self.items], np.int64)
        nlen = np.array([0 if it[2] is None else it[2].shape[0] for it in self.items], np.int64)
        nxt = [it[2] for it in self.items if it[2] is not None and it[2].shape[0]]
        N = sp.vstack(nxt, format="csr") if nxt else sp.csr_matrix((0, 1), dtype=np.float32)
        return {"er_lens": lens, "er_cols": np.concatenate([c for c, *_ in self.items]).astype(np.int32) if n else
                np.zeros(0, np.int32),
                "er_vals": (np.concatenate([it[1] for it in self.items]).astype(np.float32) if n
                            else np.zeros(0, np.float32)),
                "er_nlen": nlen, "er_n_indptr": N.indptr.astype(np.int64), "er_n_cols": N.indices.astype(np.int32),
                "er_n_vals": N.data.astype(np.float32), "er_r": np.array([it[3] for it in self.items]),
                "er_done": np.array([it[4] for it in self.items], bool), "er_pos": np.array([self.pos])}

    def load(self, s: dict[str, np.ndarray], dim: int) -> None:
        lens, nlen = s["er_lens"], s["er_nlen"]
        if len(lens) > self.capacity:
            raise ValueError(f"replay memory of {len(lens)} experiences exceeds the configured capacity "
                             f"{self.capacity}")
        ptr = np.concatenate([[0], np.cumsum(lens)])
        nptr = np.concatenate([[0], np.cumsum(nlen)])
        N = sp.csr_matrix((s["er_n_vals"], s["er_n_cols"], s["er_n_indptr"]), shape=(int(nptr[-1]), dim))
        self.items = []
        for i in range(len(lens)):
            nx = N[int(nptr[i]):int(nptr[i + 1])] if nlen[i] else None
            self.items.append((s["er_cols"][ptr[i]:ptr[i + 1]].astype(np.int32),
                               s["er_vals"][ptr[i]:ptr[i + 1]].astype(np.float32), nx, float(s["er_r"][i]),
                               bool(s["er_done"][i])))
        self.pos = int(s["er_pos"][0])


def q_targets(N: sp.csr_matrix, group: np.ndarray, n: int, r: np.ndarray, w_online: np.ndarray, b_online: float,
              w_target: np.ndarray, b_target: float, gamma: float, double: bool = True) -> np.ndarray:
    """``y_i = r_i + γ Q_target(argmax_{a ∈ A_i} Q_online(a))`` (double) or ``r_i + γ max_a Q_target(a)``;
    ``y_i = r_i`` when experience i has no next rows (``group`` maps each row of ``N`` to its experience)."""
    y = np.asarray(r, np.float64).copy()
    if N.shape[0] == 0:
        return y
    q_t = row_dot(N.indptr, N.indices, N.data, w_target) + b_target
    if double:
        q_o = row_dot(N.indptr, N.indices, N.data, w_online) + b_online
        order = np.lexsort((-q_o, group))  # per group, the best online row first
    else:
        order = np.lexsort((-q_t, group))
    g = group[order]
    first = np.ones(len(g), bool)
    first[1:] = g[1:] != g[:-1]
    y[g[first]] += gamma * q_t[order[first]]
    return y


def q_sgd_step(w: np.ndarray, b: float, X: tuple[np.ndarray, np.ndarray, np.ndarray], y: np.ndarray, *,
               lr: float, l2: float) -> float:
    """One normalized minibatch step of squared TD error on ``w`` (in place; NLMS, stable for lr < 2):
    ``w ← w(1 − lr·l2) + (lr / B) Σ_i (y_i − q_i) x_i / (‖x_i‖² + 1)``; returns the new bias
    ``b + (lr / B) Σ_i (y_i − q_i) / (‖x_i‖² + 1)`` (the bias is a constant feature 1, hence the + 1)."""
    indptr, cols, vals = X
    q = row_dot(indptr, cols, vals, w) + b
    rows = np.repeat(np.arange(len(y)), np.diff(indptr))
    sq = np.bincount(rows, weights=vals.astype(np.float64) ** 2, minlength=len(y)) + 1.0
    d = (y - q) / sq * (lr / len(y))
    if l2:
        w *= 1.0 - lr * l2
    np.add.at(w, cols, d[rows] * vals)
    return float(b + d.sum())


class HashedQAgent(RowLearner):
    """deep-deep linear Q-learning over hashed link features (experience replay, double learning)."""

    name = "hashed-q"
    DEFAULTS: ClassVar[dict[str, Any]] = {"features": "hashed-transferable", "gamma": 0.4, "lr": 0.5, "l2": 1e-6,
                                          "batch": 32, "memory": 5_000, "switch_every": 100,
                "double": True, "epsilon": 0.1, "prior": 4.0, "prior_mode": "init", "max_next": 64}

    def __init__(self, **config: Any):
        super().__init__(**config)
        c = self.config
        if not 0.0 <= float(c["gamma"]) < 1.0:
            raise ValueError(f"{self.name}: gamma must be in [0, 1), got {c['gamma']!r}")
        for k in ("batch", "memory", "switch_every", "max_next"):
            v = c[k]
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < (0 if k == "batch" else 1):
                raise ValueError(f"{self.name}: {k} must be a positive int, got {v!r}")
        self.memory = ExperienceReplay(int(c["memory"]), int(c["max_next"]))
        self.w_target: np.ndarray | None = None
        self.b_target = 0.0
        self.t = 0
        self._scale = 1.0

    def begin_episode(self, env: Any, rng: np.random.Generator) -> None:
        super().begin_episode(env, rng)
        if self.w_target is None:
            self.w_target = self.w.copy()  # type: ignore[union-attr]
            self.b_target = self.b
        self._scale = 1.0 / max(abs(float(env.max_reward)), 1e-9)

    def learn(self, x: tuple[np.ndarray, np.ndarray], reward: float, transition: Transition,
              next_rows: sp.csr_matrix | None) -> None:
        assert self.w is not None and self.w_target is not None
        c = self.config
        self.memory.add(x[0], x[1], next_rows, reward * self._scale, transition.terminated)
        idx = self.replay_indices(len(self.memory), int(c["batch"]) - 1)
        X, N, group, r = self.memory.batch(idx, len(self.w))
        y = q_targets(N, group, len(idx), r, self.w, self.b, self.w_target, self.b_target, float(c["gamma"]),
                      bool(c["double"]))
        self.b = q_sgd_step(self.w, self.b, X, y, lr=float(c["lr"]), l2=float(c["l2"]))
        self.hold_prior()
        self.t += 1
        if self.t % int(c["switch_every"]) == 0:
            self.w_target = self.w.copy()
            self.b_target = self.b

    # -------------------------------------------------------- persistence
    def state_dict(self) -> dict[str, np.ndarray]:
        if self.w is None:
            return {}
        return {"w": self.w.copy(), "b": np.array([self.b]),
                "w_target": self.w_target.copy(),  # type: ignore[union-attr]
                "b_target": np.array([self.b_target]), "t": np.array([self.t]), **self.memory.state()}

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        if not state:
            return
        missing = {"w", "b", "w_target", "b_target", "t", "er_lens"} - set(state)
        if missing:
            raise ValueError(f"{self.name}: saved state lacks {sorted(missing)}")
        self.w = np.asarray(state["w"], np.float64).copy()
        self.b = float(state["b"][0])
        self.w_target = np.asarray(state["w_target"], np.float64).copy()
        self.b_target = float(state["b_target"][0])
        self.t = int(state["t"][0])
        self.memory.load(state, len(self.w))


def _register() -> None:
    from gym_crawl.agents.base import AGENTS

    if "hashed-q" not in AGENTS:
        AGENTS.register("hashed-q", HashedQAgent, "deep-deep linear Q-learning over hashed link features")


_register()
