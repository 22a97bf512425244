"""Linear SARSA crawlers: Han et al. 2018 (synchronous, asynchronous, moderated) and Pertejo 2021's variant.

q̂(s, a, w) = wᵀ x(s, a) over the env's feature rows (``env.features_of``): a frontier page
``u`` is the action, its state ``s`` the fetched page that discovered it (the env's
``best_parent`` convention). All four agents are ``"page"`` agents (``env.step`` of a page-mode env) that
keep *their own* frontier priorities, as Han's Algorithm 1 keeps Q-values in the frontier.

Han 2018, Algorithm 1 (``lfa-sync``, ``lfa-async``, ``lfa-moderated``)
-----------------------------------------------------------------------
* **Selection** (lines 16–20): ε-greedy over the frontier — with probability ε a uniformly
  random frontier page (Han draws a random (s, a) *pair* of B; the issue asks for a uniform
  page, which is what we do), otherwise the best page by the agent's priorities.
* **Update** (lines 32–39), with x = x(s, a) of the fetched page (its row just before the fetch):

  - fetched page relevant (reward > 0, the crawler's own judgement): ``w ← w + α (r − q̂(s,a)) x``;
  - otherwise SARSA: a′ is chosen ε-greedily among the new page's unvisited out-links L′
    (``env.frontier_changes().updated`` — their rows use the env's best-parent state, which is s′ for
    every page s′ discovered first); ``δ = r + γ q̂(s′,a′) − q̂(s,a)``;
    *original* ``w ← w + α δ x``;
    *moderated* (Eq. 4) ``w ← w + α [r + γ(q̂(s′,a′) − δ) − q̂(s,a)] x``
    (= the original with step α(1 − γ), as Han note). When L′ is empty, q̂(s′,a′) = 0.
* **Frontier** (lines 40–47), after the update:

  - *asynchronous*: only the rows of L′ (``env.frontier_changes().updated``) are re-scored with the new w
    and their priorities updated in place in an :class:`~agents.priority_queue.UpdatablePQ`;
    every other priority stays as old as the step that last scored it (stale);
  - *synchronous*: the exact argmax of the *current* w over the whole frontier every step, done
    with Han's set B: frontier pages are grouped by their distinct discretized (s, a) pair —
    distinct state-part rows S (n_s × d_s), distinct action-part rows A (n_a × d_a), pairs
    (sid, aid) — so a step costs ``S @ w_s`` + ``A @ w_a`` + one gather-add over the active
    pairs (P ≪ F), never a Python loop over links (:class:`PairIndex`). Groups are maintained
    incrementally from ``env.frontier_changes().updated``: with a ``local`` feature set those are the only
    rows that change.
* **Ties** (very common with discretized features and w = 0 at the start): broken uniformly at
  random (a random tie key per queued page in async; a random best pair, then a random member of
  it, in sync) — Algorithm 1 "selects a link from the pair" without saying which.
* Defaults γ = 0.9, α = 0.001 (Han use 0.0005 for dense topics), ε = 0.1, w₀ = 0; env built with
  ``features="han2018"`` and ``reward="han2018"`` (see ``env_defaults``).
* Weights persist across episodes (Han's protocol: frontier and parents reset each task, w kept):
  run :func:`agents.runner.run_episodes` with one agent object; ``save`` / ``load`` use npz.

Pertejo 2021 (``thesis-lfa``): where Algorithms 2–4 and the thesis' code differ from Han
------------------------------------------------------------------------------------------
* Features: the thesis' ordinal discretization (:class:`gym_crawl.features.thesis.ThesisFeatures`:
  relevances → ``int(10x)``, negatives → 0; distance → 9 − d; relevance change in 0.5-wide
  bins), used as raw small integers, not one-hot tiles, and no bias column.
* Reward ``"thesis"``: 30 if the page contains the topic word, else 30 if cos > 0.6, 20 if > 0.5,
  else −1 (its ``LFACrawler.reward``; Algorithm 3's 30/20/10/−1 is the DQN crawler's).
* γ = 0.3 (its sweep, Table 4.2: 0.1–0.6 beat 0.9), α = 0.001, ε = 0.1.
* w₀ drawn uniformly from [0, 1) (``np.random.rand``; seeded by ``seed``).
* Update: always the SARSA update ``w ← w + α (r + γ q̂(s′,a′) − q̂(s,a)) x`` — no special case
  for relevant pages (its ``update_relevant_state`` is never called) — and **no update at all**
  when the new page has no unvisited out-link (its ``if len(selectable_outlinks) > 0``).
  a′ = ε-greedy over L′ (``select_action_from_values``: random index w.p. ε, else first argmax).
* Frontier: its Updatable and Randomized Priority Queue (:class:`~agents.priority_queue.UpdatablePQ`,
  here O(log n) for every operation); ties are first-in-first-out (its ``(priority, count, task)``
  entries); ε-greedy = ``pop_random`` / ``pop``. ``mode="async"`` (Table 4.3) re-scores L′;
  ``mode="sync"`` re-scores the whole frontier every step — done exactly with :class:`PairIndex`.
* The thesis keys frontier entries by (page, link) pairs, so a link found from two pages is queued
  twice; the env deduplicates by URL (one entry per page, state = its best parent), so re-scoring
  L′ updates that page's single entry in place.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gym_crawl._arith import dot, row_dots
from gym_crawl.agents.base import Agent, Transition
from gym_crawl.agents.linear.pair_index import PairIndex
from gym_crawl.agents.priority_queue import UpdatablePQ

__all__ = [
    "FRONTIERS",
    "UPDATE_RULES",
    "AsyncFrontier",
    "LFAAgent",
    "LFAAsyncAgent",
    "LFAModeratedAgent",
    "LFASyncAgent",
    "ModeratedRule",
    "PairIndex",
    "SyncFrontier",
    "ThesisLFAAgent",
    "ThesisRule",
    "UpdateRule",
    "lfa_update",
]


def lfa_update(w: np.ndarray, x: np.ndarray, q_sa: float, r: float, q_next: float | None, *,
               alpha: float, gamma: float, rule: str = "original", relevant: bool = False) -> np.ndarray:
    """One weight update of Han's Algorithm 1 (lines 32–39), returned as a new array.

    Args:
        w: (d,) weights. x: (d,) features x(s, a) of the fetched page. q_sa: q̂(s, a, w).
        r: reward of the fetch. q_next: q̂(s′, a′, w) of the chosen next action (``None``: no
            next action, treated as 0).
        rule: ``"original"`` (Eq. 3), ``"moderated"`` (Eq. 4) or ``"thesis"`` (the SARSA update
            also for relevant pages).
        relevant: the fetched page is relevant (Han: ``w ← w + α (r − q̂) x``; ignored by ``"thesis"``).
    """
    qn = 0.0 if q_next is None else float(q_next)
    if relevant and rule != "thesis":
        return w + alpha * (r - q_sa) * x
    delta = r + gamma * qn - q_sa
    if rule in ("original", "thesis"):
        return w + alpha * delta * x
    if rule == "moderated":
        return w + alpha * (r + gamma * (qn - delta) - q_sa) * x
    raise ValueError(f"unknown update rule {rule!r}; expected 'original', 'moderated' or 'thesis'")


# ---------------------------------------------------------------------------- strategies
class UpdateRule:
    """How Algorithm 1 updates w (lines 32–39): selected once, from the agent's ``rule``.

    ``sarsa_on_relevant``: a relevant fetch bootstraps from a′ too (the thesis) instead of Han's
    ``w ← w + α (r − q̂) x``; ``skip_without_next``: no update at all when L′ is empty (the thesis'
    ``if len(selectable_outlinks) > 0``)."""

    name = "original"
    sarsa_on_relevant = False
    skip_without_next = False

    def update(self, w: np.ndarray, x: np.ndarray, q_sa: float, r: float, q_next: float | None, *, alpha: float,
               gamma: float, relevant: bool) -> np.ndarray:
        return lfa_update(w, x, q_sa, r, q_next, alpha=alpha, gamma=gamma, rule=self.name, relevant=relevant)


class ModeratedRule(UpdateRule):
    """Han's Eq. (4): ``w ← w + α [r + γ(q̂(s′,a′) − δ) − q̂(s,a)] x`` (= the original with step α(1 − γ))."""

    name = "moderated"


class ThesisRule(UpdateRule):
    """Pertejo 2021: always SARSA, and no update when the new page has no selectable out-link."""

    name = "thesis"
    sarsa_on_relevant = True
    skip_without_next = True


UPDATE_RULES: dict[str, type[UpdateRule]] = {"original": UpdateRule, "moderated": ModeratedRule,
                                             "thesis": ThesisRule}


class AsyncFrontier:
    """Han's asynchronous frontier: each page keeps the priority of the step that last scored it, in an
    :class:`~agents.priority_queue.UpdatablePQ` (only L′ is re-scored; everything else is stale)."""

    mode = "async"

    def __init__(self) -> None:
        self.pq: UpdatablePQ | None = None

    def reset(self, n_pages: int, names: list[str]) -> None:
        if self.pq is None or self.pq.capacity != n_pages:
            self.pq = UpdatablePQ(n_pages)
        self.pq.clear()

    def index(self, agent: LFAAgent, pages: np.ndarray, X: np.ndarray) -> None:
        assert self.pq is not None and agent.w is not None
        self.pq.push_many(pages, row_dots(X, agent.w), agent._ties(len(pages)))

    def forget(self, page: int) -> None:
        assert self.pq is not None
        self.pq.discard(page)

    def select(self, agent: LFAAgent, explore: bool) -> tuple[int, np.ndarray]:
        """``(page, x(s, a))``: a random queued page when exploring, else the highest stale priority;
        pages the env dropped meanwhile are skipped."""
        env, pq = agent.env, self.pq
        assert pq is not None
        while True:
            if not pq:
                raise RuntimeError(f"{agent.name}: its frontier queue is empty while the env's frontier has "
                                   f"{len(env.frontier_pages())} pages (was observe() called after every step?)")
            page = pq.pop_random(agent.rng)[0] if explore else pq.pop_max()[0]
            if env.is_frontier(page):
                break
        return int(page), env.features_of(np.array([page]))[0].astype(np.float64)


class SyncFrontier:
    """Han's synchronous frontier: the exact argmax of the current w over the whole frontier every
    step, through the set-B grouping of :class:`PairIndex`."""

    mode = "sync"

    def __init__(self) -> None:
        self.pairs: PairIndex | None = None

    def reset(self, n_pages: int, names: list[str]) -> None:
        if self.pairs is None or self.pairs.id_bound != n_pages or self.pairs.d != len(names):
            self.pairs = PairIndex(n_pages, names)
        self.pairs.clear()

    def index(self, agent: LFAAgent, pages: np.ndarray, X: np.ndarray) -> None:
        assert self.pairs is not None
        self.pairs.assign(pages, X)

    def forget(self, page: int) -> None:
        assert self.pairs is not None
        self.pairs.remove(page)

    def select(self, agent: LFAAgent, explore: bool) -> tuple[int, np.ndarray]:
        """``(page, x(s, a))``: a uniformly random frontier page when exploring, else a best page of the
        current w (random best pair, random member)."""
        env, pairs = agent.env, self.pairs
        assert pairs is not None and agent.w is not None
        if explore:
            F = env.frontier_pages()
            page = int(F[int(agent.rng.integers(len(F)))])
        else:
            page = pairs.best(agent.w, agent.rng)[0]
            while not env.is_frontier(page):  # dropped by the env (e.g. a domain cap) without notice
                pairs.remove(page)
                page = pairs.best(agent.w, agent.rng)[0]
        x = pairs.row(page)  # the page's current row (rows change only via frontier_changes().updated)
        pairs.remove(page)
        return int(page), x


FRONTIERS: dict[str, type[AsyncFrontier | SyncFrontier]] = {"async": AsyncFrontier, "sync": SyncFrontier}


class LFAAgent(Agent):
    """Han et al. 2018's linear SARSA crawler (see module docstring); subclasses fix the mode.

    Args:
        alpha: step size α (Han: 0.001; 0.0005 for dense topics).
        gamma: discount γ (Han: 0.9).
        epsilon: exploration rate ε of the frontier selection and of the choice of a′.
        mode: ``"async"`` (stale priorities, L′ re-scored) or ``"sync"`` (exact argmax every step).
        rule: ``"original"`` or ``"moderated"`` update.
        seed: seeds the initial weights when ``init="uniform"``.
        init: ``"zeros"`` (Han) or ``"uniform"`` (U[0, 1), the thesis).
    """

    name = "lfa"
    action_kind = "page"
    needs_observation = False  # acts by page id through frontier_pages/features_of only
    #: mode/rule a named variant always uses, whatever a saved config says
    _fixed: dict[str, str] = {}
    #: Env settings this agent is defined with (the CLI and benchmarks build the env with them).
    env_defaults: dict[str, Any] = {"features": "han2018", "reward": "han2018"}

    def __init__(self, alpha: float = 0.001, gamma: float = 0.9, epsilon: float = 0.1, mode: str = "async",
                 rule: str = "original", seed: int = 0, init: str = "zeros", **config: Any):
        mode = self._fixed.get("mode", mode)  # the named variants pin their mode and update rule
        rule = self._fixed.get("rule", rule)
        if mode not in ("sync", "async"):
            raise ValueError(f"mode must be 'sync' or 'async', got {mode!r}")
        if rule not in ("original", "moderated", "thesis"):
            raise ValueError(f"rule must be 'original', 'moderated' or 'thesis', got {rule!r}")
        if init not in ("zeros", "uniform"):
            raise ValueError(f"init must be 'zeros' or 'uniform', got {init!r}")
        if not 0 <= epsilon <= 1:
            raise ValueError(f"epsilon must be in [0, 1], got {epsilon}")
        super().__init__(alpha=alpha, gamma=gamma, epsilon=epsilon, mode=mode, rule=rule, seed=seed, init=init,
                         **config)
        self.alpha, self.gamma, self.epsilon = float(alpha), float(gamma), float(epsilon)
        self.mode, self.rule, self.seed, self.init = mode, rule, int(seed), init
        self.w: np.ndarray | None = None
        self.feature_names: list[str] | None = None
        self.fifo_ties = False
        self.updates = 0
        #: the frontier strategy and the update rule, selected once from ``mode`` and ``rule``
        self.frontier: AsyncFrontier | SyncFrontier = FRONTIERS[mode]()
        self.update_rule: UpdateRule = UPDATE_RULES[rule]()

    @property
    def _pq(self) -> UpdatablePQ | None:
        """The async frontier's priority queue (``None`` in sync mode)."""
        return getattr(self.frontier, "pq", None)

    @property
    def _pairs(self) -> PairIndex | None:
        """The sync frontier's set-B index (``None`` in async mode)."""
        return getattr(self.frontier, "pairs", None)

    # ------------------------------------------------------------ episodes
    def _init_weights(self, d: int) -> np.ndarray:
        if self.init == "zeros":
            return np.zeros(d, np.float64)
        return np.random.default_rng(self.seed).random(d)

    def begin_episode(self, env: Any, rng: np.random.Generator) -> None:
        """Bind the env, (first time) create w, and index the current frontier."""
        super().begin_episode(env, rng)
        if not env.features_local:
            raise ValueError(f"{self.name} caches frontier rows and needs a local feature set; "
                             f"{env.feature_set_name!r} is not (build the env with "
                             f"features={self.env_defaults['features']!r})")
        names = list(env.feature_names)
        if self.w is None:
            self.w = self._init_weights(len(names))
            self.feature_names = names
        elif self.feature_names is not None and self.feature_names != names:
            raise ValueError(f"{self.name}: weights were learned on {len(self.feature_names)} features "
                             f"({self.feature_names[:3]}…) but the env gives {len(names)} ({names[:3]}…)")
        self.frontier.reset(env.n_pages, names)
        F = np.array(env.frontier_pages(), dtype=np.int64)
        self._index(F, env.features_of(F) if len(F) else np.zeros((0, len(names)), np.float32))
        self._x_sa: np.ndarray | None = None
        self._q_sa = 0.0

    def _ties(self, k: int) -> np.ndarray | None:
        return None if self.fifo_ties else self.rng.random(k)

    def _index(self, pages: np.ndarray, X: np.ndarray) -> None:
        """Put frontier ``pages`` with rows ``X`` into the frontier structure (scored with the current w)."""
        if len(pages) == 0:
            return
        self.frontier.index(self, pages, X)

    # ------------------------------------------------------------- acting
    def act(self, obs: Any, info: dict) -> int:
        """Pick a frontier page ε-greedily by the agent's own priorities; remembers x(s, a)."""
        assert self.w is not None, "begin_episode first"
        explore = self.epsilon > 0 and self.rng.random() < self.epsilon
        page, x = self.frontier.select(self, explore)
        self._x_sa = x
        self._q_sa = dot(x, self.w)
        self.last_score = self._q_sa
        return page

    def _choose_next(self, q: np.ndarray) -> int:
        """ε-greedy index into the q̂ values of L′."""
        if self.epsilon > 0 and self.rng.random() < self.epsilon:
            return int(self.rng.integers(len(q)))
        if self.fifo_ties:
            return int(np.argmax(q))
        m = q.max()
        ties = np.flatnonzero(q == m)
        return int(ties[0]) if len(ties) == 1 else int(ties[self.rng.integers(len(ties))])

    # ------------------------------------------------------------ learning
    def observe(self, transition: Transition) -> None:
        """Algorithm 1 lines 24–47: update w from the fetch, then refresh the frontier structure."""
        info = transition.info
        env = self.env
        assert self.w is not None
        changes = env.frontier_changes()
        for p in np.asarray(changes.removed, dtype=np.int64).tolist():
            self.frontier.forget(p)
        if info.get("fetched_page", -1) < 0:  # nothing fetched: an invalid (non-frontier) page
            return
        upd = np.asarray(changes.updated, dtype=np.int64)
        if len(upd):
            upd = upd[np.asarray(env.is_frontier(upd), bool)]
        X = env.features_of(upd) if len(upd) else np.zeros((0, len(self.w)), np.float32)
        if self._x_sa is not None:
            r = float(transition.reward)
            relevant = r > 0
            q_next: float | None = None
            learn = True
            rule = self.update_rule
            if len(upd) and (rule.sarsa_on_relevant or not relevant):
                q = row_dots(X, self.w)
                q_next = float(q[self._choose_next(q)])
            elif rule.skip_without_next:
                learn = False  # the thesis updates only when the new page has selectable out-links
            if learn:
                self.w = rule.update(self.w, self._x_sa, self._q_sa, r, q_next, alpha=self.alpha, gamma=self.gamma,
                                     relevant=relevant)
                self.updates += 1
            self._x_sa = None
        self._index(upd, X)

    # --------------------------------------------------------- persistence
    def state_dict(self) -> dict[str, np.ndarray]:
        """``w`` (d,) float64 and the feature names it belongs to (unicode array); empty before training."""
        if self.w is None:
            return {}
        return {"w": self.w.copy(), "feature_names": np.array(self.feature_names or [], dtype=str),
                "updates": np.array(self.updates, np.int64)}

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        if not state:
            return
        unknown = set(state) - {"w", "feature_names", "updates"}
        if unknown or "w" not in state:
            raise ValueError(f"{self.name}: unexpected state keys {sorted(state)}")
        w = np.asarray(state["w"], dtype=np.float64).reshape(-1)
        names = [str(s) for s in np.asarray(state.get("feature_names", np.array([], dtype=str))).tolist()]
        if names and len(names) != len(w):
            raise ValueError(f"{self.name}: {len(w)} weights but {len(names)} feature names")
        self.w = w.copy()
        self.feature_names = names or None
        self.updates = int(state.get("updates", 0))

    # -------------------------------------------------------------- helpers
    def q_values(self, pages: np.ndarray) -> np.ndarray:
        """(len(pages),) q̂ of frontier ``pages`` with the current weights (for analyses)."""
        assert self.w is not None
        return row_dots(self.env.features_of(np.asarray(pages, dtype=np.int64)), self.w)


class LFASyncAgent(LFAAgent):
    """Han 2018 synchronous: exact argmax of the current w over the whole frontier (set-B grouping)."""

    name = "lfa-sync"
    _fixed = {"mode": "sync", "rule": "original"}


class LFAAsyncAgent(LFAAgent):
    """Han 2018 asynchronous: only the new page's out-links are re-scored (stale priorities elsewhere)."""

    name = "lfa-async"
    _fixed = {"mode": "async", "rule": "original"}


class LFAModeratedAgent(LFAAgent):
    """Han 2018 asynchronous with the moderated update of Eq. (4)."""

    name = "lfa-moderated"
    _fixed = {"mode": "async", "rule": "moderated"}


class ThesisLFAAgent(LFAAgent):
    """Pertejo 2021's LFA crawler (Algorithm 4 and its appendix code; see module docstring).

    Args:
        mode: ``"async"`` (Table 4.3) or ``"sync"``.
        alpha, gamma, epsilon: 0.001, 0.3, 0.1 (§4.3).
        seed: seeds w₀ ~ U[0, 1).
        strict_features: refuse an env whose feature set is not the thesis' (``"thesis"``).
    """

    name = "thesis-lfa"
    env_defaults = {"features": "thesis", "reward": "thesis"}

    def __init__(self, mode: str = "async", alpha: float = 0.001, gamma: float = 0.3, epsilon: float = 0.1,
                 seed: int = 0, init: str = "uniform", strict_features: bool = True, **config: Any):
        config.pop("rule", None)
        super().__init__(alpha=alpha, gamma=gamma, epsilon=epsilon, mode=mode, rule="thesis", seed=seed, init=init,
                         strict_features=strict_features, **config)
        self.strict_features = bool(strict_features)
        self.fifo_ties = True

    def begin_episode(self, env: Any, rng: np.random.Generator) -> None:
        if self.strict_features and env.feature_set_name != "thesis":
            raise ValueError(f"thesis-lfa is defined on the thesis' discretized features; build the env with "
                             f"features=ThesisFeatures(n_categories) (or 'thesis' once registered), got "
                             f"{env.feature_set_name!r} — or pass strict_features=False")
        super().begin_episode(env, rng)
