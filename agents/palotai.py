"""Palotai, Farkas & Lőrincz's foragers ("Selection in scale-free small world"): WL, RL and WLRL
policies for :class:`gym_crawl.envs.fleet.ForagerFleetEnv`, and a runner that drives a whole fleet.

Where the learning lives (the PettingZoo norm): one :class:`PalotaiForager` policy object per live
forager, driven by :func:`run_fleet` over the ``ParallelEnv``. A policy acts only by returning the page id
that the runner passes to ``env.step``, and learns only from what the env returns to *its* agent (its
observation, reward and info). The env owns the world, the reinforcing agent and the path structure; the
policy owns what the paper's forager owns:

* **Page information storage** (Alg. 2): the ``page_state`` vectors of the pages it downloaded, read from
  ``obs["fetched_states"]`` (a newborn copies its parent's store, as it inherits its parent's URLs). The store
  is keyed by page (:class:`~gym_crawl.pagemap.KeyedRows`: a row for each page the forager downloaded), so it
  follows the pages downloaded, not the web; a page never downloaded reads as the zero state.
* **URL ordering** (Alg. 3): greedy — the frontier URL with the highest ``value = state · weight``
  (ties: the lowest page id). The frontier is ``obs["action_mask"]`` inside a path.
* **URL ordering update** (Alg. 4, RL / WLRL): TD(0) on consecutive fetches of a path (none across a
  restart: Alg. 11 empties the path, and the reward of a path's start fetch has no predecessor to update),
  ``δ = r + γ·value(URL_{n+1}) − value(URL_n)``, ``weight += α·δ·state(URL_n)``, α = 0.1, γ = 0.9; ``r`` is
  the step's reinforcement (Σ of +100 / −1 over the documents the forager sent). The step is the paper's
  α by default; TD(0) with a linear value is stable only while α·‖state‖² < 2, which holds for
  PrTFIDF-shaped states (tanh-mapped class posteriors, ‖state‖² ≲ 1.7 on the :class:`ChangingWeb`
  stand-in) but not for states that fill [−1, 1]^50 (‖state‖² ≈ 45: weights reached 1e40 in one 18-day
  run on an earlier stand-in). ``normalize_td=True`` uses ``α / max(1, ‖state(URL_n)‖²)`` — the same
  step wherever ‖state‖ ≤ 1 — for such state vectors. WL foragers keep their
  random weight vector for life (Alg. 6: "new random parameters"), as in the paper's WL-only runs.
* **Weblog** (Alg. 1, 10, 11; WL / WLRL): up to WEBLOG_SIZE = 100 (URL, value) pairs in descending order;
  at each path start the weblog is updated with the finished path (new URLs get the reward-to-go
  ``cumValues``, known ones move toward it by β = 0.3), then the start URL is drawn uniformly from the first
  START_SIZE = 10. The initial weblog is the env's seed list (the path-start mask of the first
  observation) with value 0 (Alg. 10). RL foragers keep that seed weblog unchanged.
* **Multiplication** (Alg. 6): when ``info["child"]`` names a newborn, :meth:`PalotaiForager.spawn` gives
  it WEBLOG_SIZE/2 (at most half of the weblog) randomly chosen entries, removed from the parent's, and
  a copy of the weights (RL, WLRL) or new random weights (WL). Exception: RL foragers (no weblog update)
  all keep the same seed weblog — the child gets a copy, the parent keeps its own — as §4.2.1 states
  ("RL foragers had the same weblog with the first 10 URLs"); Alg. 6's WEBLOG_SIZE/2 = 50 entries cannot
  be drawn from a 10-URL weblog, and halving it would leave late RL generations 1–2 start URLs.

Random weights are uniform in [−1, 1]^k. Every random choice comes from the policy's own generator,
seeded by :func:`run_fleet`'s ``seed`` (a newborn's generator is spawned from its parent's), so a whole
fleet run is deterministic under a seed.

These policies do not fit the single-agent :class:`gym_crawl.agents.base.Agent` protocol (they act in a
``ParallelEnv``, multiply and die), so they are not in the ``AGENTS`` table; use
:func:`make_fleet_policy` / :func:`run_fleet`.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit

from gym_crawl._arith import dot, row_dots
from gym_crawl.pagemap import KeyedRows, find

__all__ = ["KINDS", "FleetRun", "PalotaiForager", "make_fleet_policy", "run_fleet"]

#: forager kinds: weblog update only, URL-ordering (TD) update only, both
KINDS = ("wl", "rl", "wlrl")
DEFAULTS = {"alpha": 0.1, "gamma": 0.9, "beta": 0.3, "weblog_size": 100, "start_size": 10, "normalize_td": False}


@njit(cache=True, nogil=True)
def _gather(keys, slots, col, pages):
    """Rows of ``col`` of ``pages`` through the page map ``keys``/``slots`` (zeros for a page not in it)."""
    out = np.zeros((len(pages), col.shape[1]), col.dtype)
    for j in range(len(pages)):
        r = find(keys, slots, pages[j])
        if r >= 0:
            out[j] = col[r]
    return out


@njit(cache=True, nogil=True)
def _put(keys, slots, col, pages, values):
    """``col[row of pages[j]] = values[j]`` in order (a page repeated: its last value); False, with nothing
    written, when a page is not in the map."""
    for j in range(len(pages)):
        if find(keys, slots, pages[j]) < 0:
            return False
    for j in range(len(pages)):
        col[find(keys, slots, pages[j])] = values[j]
    return True


class PalotaiForager:
    """One forager's policy (module docstring). ``kind`` in :data:`KINDS`."""

    def __init__(self, kind: str, n_pages: int, state_dim: int, rng: np.random.Generator, *,
                 alpha: float = 0.1, gamma: float = 0.9, beta: float = 0.3, weblog_size: int = 100,
                 start_size: int = 10, normalize_td: bool = False, weights: np.ndarray | None = None,
                 weblog: tuple[np.ndarray, np.ndarray] | None = None,
                 store: KeyedRows | None = None):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        for name, v in (("alpha", alpha), ("gamma", gamma), ("beta", beta)):
            if not (isinstance(v, (int, float)) and 0 <= v <= 1):
                raise ValueError(f"{name} must be a number in [0, 1], got {v!r}")
        for name, v in (("weblog_size", weblog_size), ("start_size", start_size)):
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        self.kind = kind
        self.update_weblog = kind in ("wl", "wlrl")
        self.update_ordering = kind in ("rl", "wlrl")
        self.alpha, self.gamma, self.beta = float(alpha), float(gamma), float(beta)
        self.normalize_td = bool(normalize_td)
        self.weblog_size, self.start_size = weblog_size, start_size
        self.n_pages, self.state_dim = int(n_pages), int(state_dim)
        self.rng = rng
        self.weights = (rng.uniform(-1.0, 1.0, self.state_dim) if weights is None
                        else np.array(weights, np.float64))
        #: the page information storage: a ``state`` row (float32, ``state_dim``) per page downloaded
        self.store = KeyedRows(("state", np.float32, self.state_dim)) if store is None else store.copy()
        # weblog: URLs and values in descending order of value (Alg. 1); None until the first observation
        self.wl_urls: np.ndarray | None = None if weblog is None else np.asarray(weblog[0], np.int64)
        self.wl_vals: np.ndarray | None = None if weblog is None else np.asarray(weblog[1], np.float64)
        self.path: list[int] = []
        self.path_rewards: list[float] = []
        self.prev: int | None = None
        self.td_updates = 0

    # ------------------------------------------------------------------ acting
    def start_list(self) -> np.ndarray:
        """The first ``start_size`` URLs of the weblog (Alg. 1's output)."""
        return self.wl_urls[: self.start_size] if self.wl_urls is not None else np.zeros(0, np.int64)

    @property
    def n_stored(self) -> int:
        """Pages in the store (downloaded by this forager or, before its birth, its ancestors)."""
        return self.store.n

    def states(self, pages: np.ndarray | list[int]) -> np.ndarray:
        """(len(pages), state_dim) float32 stored states of ``pages`` (zeros for a page never downloaded)."""
        st = self.store
        return _gather(st.keys, st.slots, st.cols["state"], np.asarray(pages, np.int64))

    def put_states(self, pages: np.ndarray | list[int], states: np.ndarray) -> None:
        """Store ``states`` as the states of ``pages`` (Alg. 2; a page repeated: its last state)."""
        st, pages = self.store, np.asarray(pages, np.int64)
        states = np.asarray(states, np.float32)
        if not _put(st.keys, st.slots, st.cols["state"], pages, states):
            st.ensure(pages)  # rows for the pages not stored yet (the columns may grow: read them after)
            _put(st.keys, st.slots, st.cols["state"], pages, states)

    def value(self, pages: np.ndarray | int) -> np.ndarray | float:
        """Estimated long-term profit ``state(URL) · weight`` (Alg. 3) of stored pages."""
        if np.ndim(pages) == 0:
            return dot(self.states([int(pages)])[0], self.weights)
        return row_dots(self.states(pages), self.weights)

    def act(self, obs: dict[str, Any]) -> int:
        """The page id to fetch next (Alg. 11): a start URL at a path start, else the greedy frontier URL."""
        mask = obs["action_mask"]
        if self.wl_urls is None:  # Alg. 10: the seed URLs enter the weblog with value 0
            self.wl_urls = np.flatnonzero(mask).astype(np.int64)
            self.wl_vals = np.zeros(len(self.wl_urls))
        if obs["path_start"]:
            if self.path and self.update_weblog:
                self.weblog_update(self.path, self.path_rewards)
            self.path, self.path_rewards, self.prev = [], [], None
            cands = self.start_list()
            cands = cands[mask[cands] != 0]
            if len(cands) == 0:  # every start URL unborn yet: any URL the env allows
                cands = np.flatnonzero(mask)
            return int(cands[self.rng.integers(len(cands))])
        ids = np.flatnonzero(mask)
        if not len(ids):
            raise ValueError("empty action mask inside a path: the env must signal a path start instead")
        st = self.store
        return int(ids[int(np.argmax(row_dots(_gather(st.keys, st.slots, st.cols["state"], ids), self.weights)))])

    # ------------------------------------------------------------------ learning
    def observe(self, reward: float, obs: dict[str, Any], info: dict[str, Any]) -> None:
        """Store the downloaded pages' states (Alg. 2); record the step on the path; TD update (Alg. 4)."""
        n = int(obs["n_fetched"])
        if n:
            self.put_states(obs["fetched_ids"][:n], obs["fetched_states"][:n])
        page = int(info["fetched_page"])
        if page < 0:
            return
        self.path.append(page)
        self.path_rewards.append(float(reward))
        if self.update_ordering and self.prev is not None:
            st = self.store
            s_prev, s_page = _gather(st.keys, st.slots, st.cols["state"], np.array([self.prev, page], np.int64))
            s_prev = s_prev.astype(np.float64)
            delta = float(reward) + self.gamma * dot(s_page, self.weights) - dot(s_prev, self.weights)
            step = self.alpha
            if self.normalize_td:
                step /= max(1.0, dot(s_prev, s_prev))
            self.weights += step * delta * s_prev
            self.td_updates += 1
        self.prev = page

    def weblog_update(self, urls: list[int], values: list[float]) -> None:
        """Alg. 1 on one finished path: ``cumValues`` = reward-to-go after each visited URL; new URLs take
        it, URLs already in the weblog move toward it by β; sort descending (stable), keep ``weblog_size``."""
        urls_a = np.asarray(urls, np.int64)
        cum = np.cumsum(np.asarray(values, np.float64)[::-1])[::-1]
        pos = {int(u): i for i, u in enumerate(self.wl_urls)}
        wl_u, wl_v = list(self.wl_urls), list(self.wl_vals)
        for u, c in zip(urls_a.tolist(), cum.tolist()):
            i = pos.get(u)
            if i is None:
                pos[u] = len(wl_u)
                wl_u.append(u)
                wl_v.append(c)
            else:
                wl_v[i] = (1.0 - self.beta) * wl_v[i] + self.beta * c
        v = np.asarray(wl_v)
        order = np.argsort(-v, kind="stable")[: self.weblog_size]
        self.wl_urls, self.wl_vals = np.asarray(wl_u, np.int64)[order], v[order]

    def spawn(self) -> PalotaiForager:
        """Alg. 6: the newborn's policy — half the weblog (random, removed from this one), the weights copied
        (RL, WLRL) or new random (WL), the page store copied, a generator spawned from this one's."""
        n = len(self.wl_urls)
        # a forager without the weblog update keeps the seed weblog, and so does its child: "RL foragers had
        # the same weblog with the first 10 URLs" (§4.2.1); Alg. 6's WEBLOG_SIZE/2 = 50 URLs cannot be drawn
        # from 10, and halving would leave late RL generations with 1-2 start URLs
        k = min(self.weblog_size // 2, n // 2) if self.update_weblog else 0
        pick = np.sort(self.rng.choice(n, size=k, replace=False)) if k else np.zeros(0, np.int64)
        keep = np.setdiff1d(np.arange(n), pick)
        child_wl = (self.wl_urls[pick], self.wl_vals[pick]) if k else (self.wl_urls.copy(), self.wl_vals.copy())
        if k:
            self.wl_urls, self.wl_vals = self.wl_urls[keep], self.wl_vals[keep]
        rng = self.rng.spawn(1)[0]
        weights = self.weights.copy() if self.update_ordering else None
        return PalotaiForager(self.kind, self.n_pages, self.state_dim, rng, alpha=self.alpha, gamma=self.gamma,
                              beta=self.beta, weblog_size=self.weblog_size, start_size=self.start_size,
                              normalize_td=self.normalize_td, weights=weights, weblog=child_wl,
                              store=self.store)


def make_fleet_policy(kind: str, env: Any, agent: str, rng: np.random.Generator | int = 0,
                      **params: Any) -> PalotaiForager:
    """A :class:`PalotaiForager` of ``kind`` ('wl', 'rl', 'wlrl') for ``agent`` of a ``ForagerFleetEnv``,
    sized from the env's spaces; ``params`` override the paper's α, γ, β, WEBLOG_SIZE, START_SIZE."""
    bad = sorted(set(params) - set(DEFAULTS))
    if bad:
        raise ValueError(f"unknown forager parameters {bad}; known: {sorted(DEFAULTS)}")
    n_pages = int(env.action_space(agent).n)
    state_dim = int(env.observation_space(agent)["fetched_states"].shape[1])
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    return PalotaiForager(kind, n_pages, state_dim, rng, **{**DEFAULTS, **params})


@dataclass
class FleetRun:
    """What :func:`run_fleet` returns: the number of steps, births, deaths, and the surviving policies."""

    steps: int = 0
    births: int = 0
    deaths: int = 0
    policies: dict[str, PalotaiForager] = field(default_factory=dict)
    max_foragers: int = 0

    def __repr__(self) -> str:
        """One line: the counts and the surviving foragers' names (not their weights)."""
        return (f"FleetRun(steps={self.steps}, births={self.births}, deaths={self.deaths}, "
                f"max_foragers={self.max_foragers}, policies={sorted(self.policies)})")


def run_fleet(env: Any, kind: str, seed: int = 0, *, on_step: Callable[[int, dict, dict], None] | None = None,
              max_steps: int | None = None, **params: Any) -> FleetRun:
    """Run a whole fleet of ``kind`` foragers on ``env`` until the run ends (or ``max_steps``).

    Each step only the agents in ``env.acting_agents`` choose a URL and learn (all live foragers under the
    env's per-step clock; the one whose time slice it is under ``clock="download"``; the others send the
    no-op 0, which the env ignores). ``env.reset(seed=seed)`` seeds the env (the RA's order); the policies'
    generators come from
    ``np.random.default_rng(seed)`` (one spawned child per initial forager). ``on_step(step, rewards, infos)``
    is called after every step. Births and deletions follow ``info["child"]`` / ``terminated``.
    """
    if max_steps is not None and (isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer))
                                  or max_steps < 0):
        raise ValueError(f"max_steps must be None or an integer >= 0, got {max_steps!r}")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    obs, infos = env.reset(seed=seed)
    root = np.random.default_rng(seed)
    rngs = root.spawn(len(env.agents))
    pol = {a: make_fleet_policy(kind, env, a, r, **params) for a, r in zip(env.agents, rngs)}
    run = FleetRun(max_foragers=len(env.agents))
    while env.agents and (max_steps is None or run.steps < max_steps):
        acting = set(getattr(env, "acting_agents", env.agents))
        # agents whose turn it is not (ForagerFleetEnv's clock="download") send a no-op the env ignores
        actions = {a: pol[a].act(obs[a]) if a in acting else 0 for a in env.agents}
        obs, rewards, terms, _truncs, infos = env.step(actions)
        run.steps += 1
        for a in actions:
            if infos[a].get("acted", True):
                pol[a].observe(rewards[a], obs[a], infos[a])
        for a in actions:
            child = infos[a]["child"]
            if child:
                pol[child] = pol[a].spawn()
                pol[child].observe(rewards[child], obs[child], infos[child])
                run.births += 1
        for a, dead in terms.items():
            if dead:
                del pol[a]
                run.deaths += 1
        run.max_foragers = max(run.max_foragers, len(env.agents))
        if on_step is not None:
            on_step(run.steps, rewards, infos)
    run.policies = pol
    return run
