"""The thesis' DQN crawler (Pertejo 2021, §3.6–3.7, §4.3–4.4 and appendix A.7–A.8): one Q output per page.

What the thesis built (Keras-RL ``DQNAgent``; appendix A.8 ``build_model`` / ``QNetwork`` /
``OptimizedCrawlerEnv``), and how each piece maps onto ``WikiCrawl-v0``:

* **State only** (§3.6: "para el crawler DQN … tan solo necesitamos modelar los estados"): the input
  is the page featurizer of the *last fetched page* — ``SimpleOptimizedPageFeaturizer.to_feat``,
  5 + C discretized integers (topic relevance, mean parent relevance, mean relevant-parent
  relevance, relevance change, d_max − distance from the last relevant page, one per category).
  Here: the ``s.*`` columns of the env's ``features="thesis"`` set
  (:class:`gym_crawl.features.thesis.ThesisFeatures`), raw integers 0..9 as the Keras model got them.
* **One output per page of the corpus** (§3.7.1: "a la salida … tantas neuronas de salida como
  páginas haya en el dump"): ``Q(s) ∈ R^{n_pages}``; the env's page action mode
  (``Discrete(n_pages)``).
* **Network** (§4.3 and ``build_model``): two hidden layers of 128 and 256 units with ``tanh``,
  ``Dropout(0.5)`` between the last hidden layer and the output, a linear output layer with an
  L2(0.01) *activity* regularizer; Keras' Glorot-uniform weights and zero biases. **Dueling + Double**
  (§3.7.2: "esta red utiliza las modificaciones del algoritmo Dueling y Double"; code ``dqn_mode="d"``):
  Keras-RL then replaces the output layer by ``Dense(n_pages + 1)`` on the dropout output and forms
  ``Q = V + A − mean(A)`` (``dueling_type="avg"``) — the activity regularizer goes with the replaced
  layer, so it only acts with ``dueling=False``.
* **Hyper-parameters** (code + §4.3): replay ``SequentialMemory(limit=50000)``, ``nb_steps_warmup=100``,
  Keras-RL's defaults ``batch_size=32`` and ``train_interval=1``, ``target_model_update=1e-2`` (Keras-RL:
  a value < 1 is a *soft* update θ⁻ ← τθ + (1 − τ)θ⁻ after every gradient step), ``Adam(lr=1e-3)``
  (Keras' ε = 1e-7), loss ½(R − Q(s, a))² on the taken action's output only (Keras-RL's
  ``clipped_masked_error`` with ``delta_clip=inf``), γ = 0.3 (§4.3: chosen by the sweep of Table 4.2;
  the code's default argument is 0.2), raw rewards (the thesis' 30/20/−1, ``reward="thesis"``).
* **ε-greedy on the frontier** (§3.4, §3.7.2 and ``KerasFrontierEpsGreedyPolicy``): ε = 0.3 while
  training, 0.1 in test (§4.3). The policy ignores Keras-RL's argmax: with probability ε it pops a
  random frontier entry, else the frontier's highest priority, where a link's priority was set by the
  *asynchronous update* when its parent was fetched, ``priority ← Q(s_parent)[link]`` (stale
  afterwards). The thesis' frontier keeps one entry per (parent, link) pair, so a link's effective
  priority is the max over its parents' entries; here the frontier is deduplicated by URL and keeps
  exactly that max.
* **Protocol** (§4.4, Fig. 4.4): train for 5,000 steps (``fit``), then test for 5,000 steps with the
  weights frozen (Keras-RL's ``test``: no memory, no updates) — :meth:`ThesisDQNAgent.set_training`.

Action selection (``select=``), so the failure can be taken apart:

* ``"frontier"`` (default, **what the thesis did**): the stale-priority URPQ policy above. It never picks
  a non-frontier page — the thesis' failure is not invalid actions.
* ``"urpq"``: the thesis' code to the letter — one URPQ entry per (parent, link) discovery, so once a
  link is fetched its other entries stay queued; popping one (greedy or ε-random, uniform over entries)
  re-selects an already fetched page: a wasted step (the thesis' ``if action_idx in visited_links``
  branch; here the env's invalid-action penalty instead of the thesis' reward of the parent page).
* ``"masked"``: a fresh ``argmax`` of ``Q(s_t)`` over the frontier pages only (ε: a uniform frontier page).
* ``"unmasked"``: Keras-RL's stock ``EpsGreedyQPolicy`` — ``argmax`` over *all* ``n_pages`` outputs,
  ε: ``randint(0, n_pages)``. A non-frontier page is a legal but wasted step (the env's
  ``invalid_action_penalty``), learnt from like any other transition. This is the naive per-page head.

In every mode the learning target is Keras-RL's: ``y = r + γ (1 − terminal) Q_θ⁻(s', argmax_a Q_θ(s', a))``
with the argmax over all ``n_pages`` outputs (Keras-RL knows nothing of the frontier).

**The state of a fetched page.** The transition is ``(s_t, a_t, r_t, s_{t+1})`` with ``s_t`` the page
features of the page fetched last (Keras-RL's ``recent_observation``; the thesis' env returns
``page_featurizer.to_feat(next_state)``), not of ``a_t``'s parent. The env exposes page features through
frontier rows only (``features_of``: the ``s.*`` columns of a frontier page are those of its *best
parent*), so the fetched page's features are read, exactly, from a frontier page it is now the best
parent of — a page it discovered, or an out-link whose ``s.*`` columns changed at this fetch (a
fetched page's features are frozen, so a changed state part means the best parent became this page).
When the fetched page is the best parent of no frontier page (18–20 % of steps on
synthetic-20000 and Wikispeedia) its own features are not readable; the agent then uses the state part of its row
just before the fetch (the features of its most relevant parent), counts it in
``approx_states`` and reports it. A read-only env accessor ``state_features_of(pages)`` (the ``s.*``
columns for fetched pages) would make this exact; when the env has one it is used.

Persistence: :meth:`save` writes ``torch.save`` of tensors and plain values (networks, optimizer,
counters, config), atomically; :meth:`load` reads it with ``torch.load(weights_only=True)``. The
replay memory is not saved. Randomness: weight initialization from ``config["seed"]`` (numpy);
exploration, minibatches and dropout masks from the runner's ``rng``; ``torch.manual_seed`` is set
from that ``rng`` at every ``begin_episode`` for anything torch draws. CPU training is deterministic.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl.agents.base import Agent, Transition, make_agent
from gym_crawl.agents.dqn.buffers import MaxSegmentTree
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
from gym_crawl.registry import install_command

try:
    import torch
    from torch import nn
except ImportError as e:  # pragma: no cover - torch is a declared dependency of the agents extra
    raise ImportError(f"agents.dqn.thesis needs PyTorch: {install_command('torch')}", name="torch") from e

__all__ = ["ThesisQNetwork", "ThesisDQNAgent", "DEFAULTS", "ReplayMemory", "SELECT_MODES"]

SELECT_MODES = ("frontier", "urpq", "masked", "unmasked")

CHECKPOINT_FORMAT = "gym_crawl.thesis_dqn/1"
"""The ``format`` tag of :meth:`ThesisDQNAgent.save`'s checkpoints."""

DEFAULTS: dict[str, Any] = {
    "hidden": [128, 256],        # §4.3
    "activation": "tanh",        # build_model
    "dropout": 0.5,              # build_model: Dropout(0.5) before the output layer
    "activity_l2": 0.01,         # build_model: activity_regularizer=l2(0.01) on the output (non-dueling only)
    "dueling": True,             # §3.7.2 "Dueling y Double" (dqn_mode "d", dueling_type "avg")
    "double": True,
    "gamma": 0.3,                # §4.3 (code default 0.2)
    "lr": 1e-3,                  # Adam(lr=1e-3)
    "adam_eps": 1e-7,            # Keras' Adam epsilon
    "memory": 50_000,            # SequentialMemory(limit=50000)
    "warmup": 100,               # nb_steps_warmup=100
    "batch_size": 32,            # Keras-RL default
    "train_interval": 1,         # Keras-RL default
    "target_update": 1e-2,       # target_model_update=1e-2: soft update (< 1) or hard every N updates (>= 1)
    "eps_train": 0.3,            # §4.3
    "eps_test": 0.1,             # §4.3
    "select": "frontier",        # the thesis' KerasFrontierEpsGreedyPolicy
    "training": True,
    "strict_features": True,
    "seed": 0,
}
"""Default configuration (every key can be passed as a keyword to :class:`ThesisDQNAgent`)."""


# ============================================================================ network
class ThesisQNetwork(nn.Module):
    """The thesis' Keras Q-network: ``in_dim → 128 → 256`` (tanh) ``→ Dropout → n_actions`` outputs.

    With ``dueling`` the head is Keras-RL's: ``Dense(n_actions + 1)`` giving ``V`` and ``A``, and
    ``Q = V + A − mean(A)``. Weights are Glorot-uniform and biases zero (Keras' defaults), drawn from
    a numpy generator so initialization never touches torch's global RNG. Dropout is applied by the
    caller (:meth:`hidden` returns the pre-dropout activations), with masks from the agent's ``rng``.
    """

    def __init__(self, in_dim: int, n_actions: int, hidden: list[int] | tuple[int, ...] = (128, 256),
                 dueling: bool = True, activation: str = "tanh", rng: np.random.Generator | None = None):
        super().__init__()
        if activation not in ("tanh", "relu"):
            raise ValueError(f"activation {activation!r}: expected 'tanh' or 'relu'")
        self.in_dim, self.n_actions, self.dueling = int(in_dim), int(n_actions), bool(dueling)
        sizes = [self.in_dim] + [int(h) for h in hidden]
        self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])])
        self.act = torch.tanh if activation == "tanh" else torch.relu
        self.head = nn.Linear(sizes[-1], self.n_actions + (1 if self.dueling else 0))
        if rng is not None:
            with torch.no_grad():
                for m in list(self.layers) + [self.head]:
                    lim = math.sqrt(6.0 / (m.in_features + m.out_features))
                    m.weight.copy_(torch.from_numpy(rng.uniform(-lim, lim, m.weight.shape).astype(np.float32)))
                    m.bias.zero_()

    @property
    def hidden_dim(self) -> int:
        return int(self.head.in_features)

    def hidden(self, x: torch.Tensor) -> torch.Tensor:
        """Last hidden layer's activations (B, 256), before dropout."""
        for m in self.layers:
            x = self.act(m(x))
        return x

    def q_all(self, h: torch.Tensor) -> torch.Tensor:
        """(B, n_actions) Q values from hidden activations."""
        y = self.head(h)
        if not self.dueling:
            return y
        a = y[:, 1:]
        return y[:, :1] + a - a.mean(dim=1, keepdim=True)

    def q_at(self, h: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """(B,) ``Q(h_b)[actions_b]`` without forming the (B, n_actions) matrix (the dueling mean of A
        is linear: ``mean_a A = h · mean(W_A) + mean(b_A)``)."""
        W, b = self.head.weight, self.head.bias
        if not self.dueling:
            return (h * W[actions]).sum(1) + b[actions]
        off = 1
        adv = (h * W[actions + off]).sum(1) + b[actions + off]
        mean_adv = h @ W[off:].mean(0) + b[off:].mean()
        v = h @ W[0] + b[0]
        return v + adv - mean_adv

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, n_actions) Q values in eval mode (no dropout)."""
        return self.q_all(self.hidden(x))


# ============================================================================ replay
class ReplayMemory:
    """Keras-RL's ``SequentialMemory`` reduced to what DQN samples: a ring of ``(s, a, r, s', terminal)``."""

    def __init__(self, dim: int, limit: int):
        if limit < 1:
            raise ValueError(f"memory must be >= 1, got {limit}")
        self.limit = int(limit)
        self.S0 = np.zeros((limit, dim), np.float32)
        self.S1 = np.zeros((limit, dim), np.float32)
        self.A = np.zeros(limit, np.int64)
        self.R = np.zeros(limit, np.float32)
        self.T = np.zeros(limit, np.float32)
        self.n = 0

    def __len__(self) -> int:
        return min(self.n, self.limit)

    def add(self, s0: np.ndarray, a: int, r: float, s1: np.ndarray, terminal: bool) -> None:
        i = self.n % self.limit
        self.S0[i], self.A[i], self.R[i], self.S1[i], self.T[i] = s0, a, r, s1, float(terminal)
        self.n += 1

    def sample(self, batch: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        m = len(self)
        idx = rng.choice(m, size=batch, replace=False) if m >= batch else rng.integers(0, m, size=batch)
        return self.S0[idx], self.A[idx], self.R[idx], self.S1[idx], self.T[idx]


# ============================================================================ the agent
class ThesisDQNAgent(Agent):
    """Pertejo 2021's DQN crawler: a per-page Q head over the last fetched page's features (module docstring).

    Args (all optional; see :data:`DEFAULTS`):
        select: ``"frontier"`` (the thesis: ε-greedy over stale asynchronous priorities), ``"urpq"``
            (the same with the code's duplicate (parent, link) entries, wasting steps on fetched pages),
            ``"masked"`` (fresh argmax over frontier pages) or ``"unmasked"`` (argmax over all pages).
        hidden, activation, dropout, activity_l2, dueling, double: the network (thesis: [128, 256],
            tanh, 0.5, 0.01, True, True).
        gamma, lr, adam_eps, memory, warmup, batch_size, train_interval, target_update: Keras-RL's
            DQN settings as the thesis set them.
        eps_train, eps_test: ε while training / in test (0.3 / 0.1).
        training: start in training mode (``set_training(False)`` = Keras-RL's ``test``).
        strict_features: refuse an env whose feature set is not ``"thesis"``.
        seed: weight initialization.
    """

    name = "thesis-dqn"
    action_kind = "page"
    needs_observation = False
    env_defaults = {"features": "thesis", "reward": "thesis"}
    checks_own_config = True  # __init__ refuses options outside DEFAULTS

    def __init__(self, **config: Any):
        unknown = sorted(set(config) - set(DEFAULTS))
        if unknown:
            raise ValueError(f"{self.name}: unknown option(s) {unknown}; options: {sorted(DEFAULTS)}")
        cfg = {**DEFAULTS, **config}
        cfg["hidden"] = [int(h) for h in cfg["hidden"]]
        if not cfg["hidden"] or any(h < 1 for h in cfg["hidden"]):
            raise ValueError(f"hidden must be a non-empty list of positive sizes, got {cfg['hidden']}")
        if cfg["select"] not in SELECT_MODES:
            raise ValueError(f"select {cfg['select']!r}: expected one of {SELECT_MODES}")
        if not 0.0 <= float(cfg["gamma"]) <= 1.0:
            raise ValueError(f"gamma must be in [0, 1], got {cfg['gamma']}")
        if not 0.0 <= float(cfg["dropout"]) < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {cfg['dropout']}")
        for k in ("eps_train", "eps_test"):
            if not 0.0 <= float(cfg[k]) <= 1.0:
                raise ValueError(f"{k} must be in [0, 1], got {cfg[k]}")
        for k in ("memory", "batch_size", "train_interval"):
            if int(cfg[k]) < 1:
                raise ValueError(f"{k} must be >= 1, got {cfg[k]}")
        if int(cfg["warmup"]) < 0:
            raise ValueError(f"warmup must be >= 0, got {cfg['warmup']}")
        if not float(cfg["target_update"]) > 0:
            raise ValueError("target_update must be > 0 (soft tau < 1, or a hard period >= 1), got "
                             f"{cfg['target_update']}")
        if cfg["activation"] not in ("tanh", "relu"):
            raise ValueError(f"activation {cfg['activation']!r}: expected 'tanh' or 'relu'")
        super().__init__(**cfg)
        self.cfg = cfg
        self.training = bool(cfg["training"])
        self.online: ThesisQNetwork | None = None
        self.target: ThesisQNetwork | None = None
        self.opt: torch.optim.Optimizer | None = None
        self.memory: ReplayMemory | None = None
        self.n_actions: int | None = None
        self.in_dim: int | None = None
        self.steps = 0            # training steps taken (Keras-RL's self.step during fit)
        self.updates = 0          # gradient updates
        self.losses: list[float] = []
        self.approx_states = 0    # fetched-page states not readable exactly (see module docstring)
        self.exact_states = 0
        self.invalid_actions = 0

    # ------------------------------------------------------------- mode
    def set_training(self, training: bool) -> None:
        """Keras-RL's ``fit`` (True: ε = eps_train, memory + updates) vs ``test`` (False: ε = eps_test, frozen)."""
        self.training = bool(training)
        self.config["training"] = self.training

    @property
    def epsilon(self) -> float:
        return float(self.cfg["eps_train"] if self.training else self.cfg["eps_test"])

    # ------------------------------------------------------------- building
    def build_networks(self, in_dim: int, n_actions: int) -> None:
        """Create the online and target Q-networks (``in_dim`` state features → ``n_actions`` Q-values, the
        online one initialized from the configured seed) and the Adam optimizer; done at the first episode."""
        c = self.cfg
        rng = np.random.default_rng(int(c["seed"]))
        self.in_dim, self.n_actions = int(in_dim), int(n_actions)
        self.online = ThesisQNetwork(in_dim, n_actions, c["hidden"], bool(c["dueling"]), c["activation"], rng)
        self.target = ThesisQNetwork(in_dim, n_actions, c["hidden"], bool(c["dueling"]), c["activation"])
        init_target(self.online, self.target)
        self.opt = adam(self.online.parameters(), float(c["lr"]), float(c["adam_eps"]))

    def n_parameters(self) -> int:
        """Trainable parameters of the online network (0 before the first episode)."""
        return 0 if self.online is None else int(sum(p.numel() for p in self.online.parameters()))

    def begin_episode(self, env: Any, rng: np.random.Generator) -> None:
        super().begin_episode(env, rng)
        torch.manual_seed(int(rng.integers(2**31 - 1)))
        if getattr(env, "action_mode", "page") != "page":
            raise ValueError(f"{self.name} acts by page id: build the env with make_env_for(agent) (action='page')")
        names = list(env.feature_names)
        fs_name = str(getattr(env, "feature_set_name", ""))
        if self.cfg["strict_features"] and fs_name != "thesis":
            raise ValueError(f"{self.name} reads the thesis' page features: build the env with features='thesis' "
                             f"(got {fs_name or names!r}), or pass strict_features=False")
        self._sidx = np.asarray([i for i, n in enumerate(names) if n.startswith("s.")], np.int64)
        if len(self._sidx) == 0:
            raise ValueError(f"{self.name}: the env's feature set has no state columns ('s.*'): {names}")
        n = int(env.n_pages)
        if self.online is None:
            self.build_networks(len(self._sidx), n)
        elif n != self.n_actions or len(self._sidx) != self.in_dim:
            raise ValueError(f"{self.name}: the network has {self.n_actions} page outputs and {self.in_dim} inputs; "
                             f"the env has {n} pages and {len(self._sidx)} state features (one output per page: "
                             f"a trained agent runs on its own corpus only)")
        if self.memory is None:
            self.memory = ReplayMemory(self.in_dim, int(self.cfg["memory"]))
        self._state_acc = getattr(env, "state_features_of", None)
        # cache of the state part of every frontier row seen (to detect a best-parent change)
        if getattr(self, "_srow", None) is None or len(self._srow) != n:
            self._srow = np.zeros((n, self.in_dim), np.float32)
            self._has_row = np.zeros(n, bool)
        else:
            self._has_row[:] = False
        if self.cfg["select"] == "urpq":
            self._heap: list[tuple[float, int]] = []
            self._e_page: list[int] = []
            self._e_pos: list[int] = []
            self._alive: list[int] = []
        if self.cfg["select"] == "frontier":
            if getattr(self, "_prio", None) is None or self._prio.n != n:
                self._prio = MaxSegmentTree(n)
            else:
                self._prio.clear()
        F = np.asarray(env.frontier_pages()).astype(np.int64)
        X = self._state_rows(F)
        self._remember(F, X)
        # s_0: a seed page's features (the thesis' reset returns to_feat(random.choice(seed)))
        uniq = np.unique(X, axis=0) if len(X) else np.zeros((1, self.in_dim), np.float32)
        self._s = uniq[int(rng.integers(len(uniq)))].astype(np.float32)
        if self.cfg["select"] == "frontier" and len(F):
            # the thesis' _initialize_frontier_with_seed: priority = Q(seed features)[link]
            self._prio.update(F, self._q_pairs(X, F))
        elif self.cfg["select"] == "urpq" and len(F):
            self._push(F, self._q_pairs(X, F))
        self._q_cache: np.ndarray | None = None
        self._pre_row: np.ndarray | None = None
        self._a = -1

    # ------------------------------------------------------------- helpers
    def _state_rows(self, pages: np.ndarray) -> np.ndarray:
        if len(pages) == 0:
            return np.zeros((0, self.in_dim), np.float32)
        return np.asarray(self.env.features_of(pages), np.float32)[:, self._sidx]

    def _remember(self, pages: np.ndarray, X: np.ndarray) -> None:
        self._srow[pages] = X
        self._has_row[pages] = True

    def _tensor(self, X: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.ascontiguousarray(X, dtype=np.float32))

    def q_values(self, s: np.ndarray) -> np.ndarray:
        """(n_pages,) Q values of one state (eval mode: no dropout)."""
        assert self.online is not None
        with torch.no_grad():
            return self.online(self._tensor(np.asarray(s, np.float32).reshape(1, -1)))[0].numpy()

    def _q_pairs(self, X: np.ndarray, pages: np.ndarray) -> np.ndarray:
        """``Q(X_i)[pages_i]`` for pairs (one hidden pass, no (n, n_pages) matrix)."""
        assert self.online is not None
        with torch.no_grad():
            h = self.online.hidden(self._tensor(X))
            return self.online.q_at(h, torch.from_numpy(np.asarray(pages, np.int64))).numpy().astype(np.float64)

    def _q_state(self) -> np.ndarray:
        if self._q_cache is None:
            self._q_cache = self.q_values(self._s)
        return self._q_cache

    # ------------------------------------------------------------- acting
    def act(self, obs: Any, info: dict) -> int:
        env, sel = self.env, self.cfg["select"]
        explore = bool(self.rng.random() < self.epsilon)
        if sel == "unmasked":
            p = int(self.rng.integers(self.n_actions)) if explore else int(np.argmax(self._q_state()))
        else:
            F = env.frontier_pages()
            if len(F) == 0:
                raise RuntimeError(f"{self.name}: the frontier is empty")
            if sel == "urpq":
                p = self._pop(explore)
            elif explore:
                p = int(F[self.rng.integers(len(F))])
            elif sel == "masked":
                q = self._q_state()
                p = int(F[int(np.argmax(q[F]))])
            else:
                p = self._best_page()
        self._a = p
        self._pre_row = self._state_rows(np.asarray([p]))[0] if bool(env.is_frontier(p)) else None
        return p

    # --- the thesis' URPQ (appendix A.5): entries (parent, link) with a FIFO tie-break, pop / pop_random
    def _push(self, pages: np.ndarray, prios: np.ndarray) -> None:
        import heapq

        for p, q in zip(np.asarray(pages).tolist(), np.asarray(prios, np.float64).tolist()):
            i = len(self._e_page)
            self._e_page.append(int(p))
            self._e_pos.append(len(self._alive))
            self._alive.append(i)
            heapq.heappush(self._heap, (-q, i))

    def _kill(self, i: int) -> int:
        j, last = self._e_pos[i], self._alive[-1]
        self._alive[j] = last
        self._e_pos[last] = j
        self._alive.pop()
        self._e_pos[i] = -1
        return self._e_page[i]

    def _pop(self, random_entry: bool) -> int:
        """Pop the highest entry (or a uniformly random one); its page may be fetched already."""
        import heapq

        if not self._alive:
            return int(self.env.frontier_pages()[0])  # cannot happen: every frontier page has an entry
        if random_entry:
            return self._kill(self._alive[int(self.rng.integers(len(self._alive)))])
        while True:
            _, i = heapq.heappop(self._heap)
            if self._e_pos[i] >= 0:
                return self._kill(i)

    def _best_page(self) -> int:
        """Highest stored priority among frontier pages (fetched pages are dropped lazily)."""
        env = self.env
        while True:
            p = self._prio.argmax()
            if p < 0:
                F = env.frontier_pages()  # a page the priorities never saw (cannot happen in page mode)
                return int(F[0])
            if bool(env.is_frontier(p)):
                return p
            self._prio.update(np.asarray([p]), np.asarray([-np.inf]))

    # ------------------------------------------------------------- observing
    def _fetched_state(self, page: int, upd: np.ndarray, X_upd: np.ndarray) -> np.ndarray:
        """Page features of the page just fetched (see the module docstring)."""
        if self._state_acc is not None:
            self.exact_states += 1
            X = np.asarray(self._state_acc(np.asarray([page])), np.float32).reshape(1, -1)
            return X[0, self._sidx] if X.shape[1] != self.in_dim else X[0]
        new = np.asarray(self.env.frontier_changes().new)
        if len(new):
            self.exact_states += 1
            return self._state_rows(new[:1])[0]
        if len(upd):
            had = self._has_row[upd]
            changed = had & np.any(self._srow[upd] != X_upd, axis=1)
            if changed.any():
                self.exact_states += 1
                return X_upd[int(np.flatnonzero(changed)[0])]
        self.approx_states += 1
        return self._pre_row if self._pre_row is not None else self._s

    def observe(self, tr: Transition) -> None:
        env = self.env
        info = tr.info
        page = int(info.get("fetched_page", -1))
        done = bool(tr.terminated)
        if bool(info.get("invalid_action")) or page < 0:
            self.invalid_actions += 1
            s1 = self._s  # nothing was fetched: the page state is unchanged
        else:
            upd = np.asarray(env.frontier_changes().updated).astype(np.int64)
            upd = upd[np.asarray(env.is_frontier(upd), bool)] if len(upd) else upd
            X_upd = self._state_rows(upd)
            s1 = self._fetched_state(page, upd, X_upd)
            self._remember(upd, X_upd)
            if self.cfg["select"] == "frontier":
                # the thesis' _asynchronous_update (before Keras-RL's backward): Q(s')[link] for its links
                self._prio.update(np.asarray([page]), np.asarray([-np.inf]))
                if len(upd):
                    q = self.q_values(s1)[upd].astype(np.float64)
                    self._prio.update(upd, np.maximum(self._prio.get(upd), q))
            elif self.cfg["select"] == "urpq" and len(upd):
                self._push(upd, self.q_values(s1)[upd])
        if self.training:
            self.memory.add(self._s, int(tr.action), float(tr.reward), s1, done)  # type: ignore[union-attr]
            self.steps += 1
            c = self.cfg
            if self.steps > int(c["warmup"]) and self.steps % int(c["train_interval"]) == 0:
                self.train_step()
        self._s = np.asarray(s1, np.float32)
        self._q_cache = None

    # ------------------------------------------------------------- learning
    def targets(self, r: np.ndarray, s1: np.ndarray, terminal: np.ndarray) -> torch.Tensor:
        """Keras-RL's DQN targets ``R = r + γ (1 − terminal) Q_θ⁻(s', a*)``: double DQN
        ``a* = argmax_a Q_θ(s', a)`` over all outputs; else ``max_a Q_θ⁻(s', a)``."""
        assert self.online is not None and self.target is not None
        with torch.no_grad():
            st = self._tensor(s1)
            if self.cfg["double"]:
                a_star = self.online(st).argmax(dim=1)
                boot = self.target.q_at(self.target.hidden(st), a_star)
            else:
                boot = self.target(st).max(dim=1).values
            g = float(self.cfg["gamma"])
            return self._tensor(r) + g * (1.0 - self._tensor(terminal)) * boot

    def _dropout_mask(self, shape: tuple[int, int]) -> torch.Tensor | None:
        p = float(self.cfg["dropout"])
        if p <= 0:
            return None
        keep = (self.rng.random(shape) >= p).astype(np.float32) / (1.0 - p)
        return torch.from_numpy(keep)

    def loss_on(self, s0: np.ndarray, a: np.ndarray, R: torch.Tensor,
                dropout_mask: torch.Tensor | None = None) -> torch.Tensor:
        """Keras-RL's loss: mean over the batch of ½(R − Q(s, a))² on the taken action's output
        (+ the output layer's L2 activity penalty, ``activity_l2 · Σ Q² / B``, without dueling)."""
        assert self.online is not None
        h = self.online.hidden(self._tensor(s0))
        if dropout_mask is not None:
            h = h * dropout_mask
        q = self.online.q_at(h, torch.from_numpy(np.asarray(a, np.int64)))
        loss = 0.5 * ((R - q) ** 2).mean()
        if not self.online.dueling and float(self.cfg["activity_l2"]) > 0:
            loss = loss + float(self.cfg["activity_l2"]) * (self.online.q_all(h) ** 2).sum() / len(s0)
        return loss

    def train_step(self) -> float:
        """One Keras-RL DQN update on a minibatch of the memory; returns the loss."""
        assert self.online is not None and self.opt is not None and self.memory is not None
        B = int(self.cfg["batch_size"])
        s0, a, r, s1, term = self.memory.sample(B, self.rng)
        R = self.targets(r, s1, term)
        mask = self._dropout_mask((B, self.online.hidden_dim))
        loss = self.loss_on(s0, a, R, mask)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.updates += 1
        update_target(self.online, self.target, float(self.cfg["target_update"]), self.updates)  # type: ignore[arg-type]
        return record_loss(self.losses, loss)

    # ------------------------------------------------------------- persistence
    def state_dict(self) -> dict[str, np.ndarray]:
        """Network parameters as numpy arrays (``online.*``, ``target.*``) and the shape."""
        if self.online is None:
            return {}
        out = networks_state(self.online, self.target)  # type: ignore[arg-type]
        out["shape"] = np.asarray([self.in_dim, self.n_actions], np.int64)
        return out

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        if not state:
            return
        if "shape" not in state:
            raise ValueError(f"{self.name}: a state dict without 'shape' (not written by this agent)")
        in_dim, n = (int(v) for v in np.asarray(state["shape"]))
        self.build_networks(in_dim, n)
        load_networks_state(state, self.online, self.target)  # type: ignore[arg-type]

    def save(self, path: str | Path) -> Path:
        """``torch.save`` of networks, optimizer state, counters and config (atomic; no replay memory)."""
        header = {"format": CHECKPOINT_FORMAT, "agent": self.registered_name, "config": json.dumps(self.config),
                  "steps": self.steps, "updates": self.updates, "in_dim": -1 if self.in_dim is None else self.in_dim,
                  "n_actions": -1 if self.n_actions is None else self.n_actions}
        env = self.model_config()
        if env is not None:  # the env it needs (gym_crawl.agents.env_config)
            header["env"] = json.dumps(env)
        return save_checkpoint(path, header, self.online, self.target, self.opt)

    @classmethod
    def load(cls, path: str | Path, expect: str | None = None) -> Agent:
        """Rebuild an agent written by :meth:`save` (``torch.load(weights_only=True)``); an ``.npz``
        written by :meth:`Agent.save` is delegated to it."""
        blob = read_checkpoint(path, CHECKPOINT_FORMAT, "thesis-dqn")
        if blob is None:
            return Agent.load(path, expect=expect)
        if expect is not None and blob["agent"] != expect:
            raise ValueError(f"{path} holds agent {blob['agent']!r}, not {expect!r}")
        agent = make_agent(blob["agent"], **json.loads(blob["config"]))
        if not isinstance(agent, ThesisDQNAgent):
            raise ValueError(f"{path}: agent {blob['agent']!r} is not a thesis-dqn agent")
        if int(blob["in_dim"]) >= 0:
            agent.build_networks(int(blob["in_dim"]), int(blob["n_actions"]))
            restore_networks(blob, agent.online, agent.target, agent.opt)
        agent.steps, agent.updates = int(blob["steps"]), int(blob["updates"])
        return agent
