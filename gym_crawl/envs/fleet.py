"""``ForagerFleetEnv``: Palotai, Farkas & Lőrincz's forager fleet on a changing web, as a PettingZoo
``ParallelEnv`` (the multi-crawler env).

The world (Palotai et al., "Selection in scale-free small world", §3): a fleet of *foragers* crawls a
changing news site (a :class:`gym_crawl.webgen.changing.ChangingWeb`) and sends the URLs of possibly new
documents to a *reinforcing agent* (RA), which rewards only the **first submitter** of a new document and
controls the fleet's life (multiplication and deletion by score). This module is the env side — the
web, the RA, the path structure and the bookkeeping. The foragers' learning (weblog update, TD URL
ordering) is the agents' side: :mod:`gym_crawl.agents.palotai`.

**Time** — two clocks, chosen by ``clock``:

* ``clock="download"`` (**the paper's timing**, §3.2, §4.2.1): the foragers run "on one computer" "in time
  slices one after each other", and the "simulated time of a page download was the average download time
  of a real page". One simulated clock; the forager whose turn it is (``env.acting_agents``, one name)
  fetches one URL per ``step``: Alg. 12 downloads the page *and every linked page born by now*, so the step
  costs ``download_hours`` × (pages downloaded) — a link-rich index page costs as many downloads as it has
  links; an invalid action costs one download. The RA judges the step's submissions at once, i.e. every
  submission in the time order of its download (a later download of the same document is penalized, whoever
  sends it). When a forager's slice of ``slice_hours`` is over (the step in progress is finished first, as
  in the paper's Web experiment), the RA manages it (Alg. 8: multiply or delete "immediately after it has
  been stopped … and before the next forager is activated") and the next live forager in the fixed
  round-robin order (``agents`` order; a newborn joins at the end) takes the next slice. Defaults:
  ``slice_hours`` = 0.05 (the Web experiment's 3-minute slices) and ``download_hours`` = 2.6 s / 3600: the
  paper does not print the average, but Table 2's fleets downloaded 540,636 (RL) and 669,673 (WL) pages
  in 432 simulated hours on one computer — 2.88 s and 2.32 s per download, mean 2.6 s.
  *Step semantics for PettingZoo users*: ``step`` still takes an action for every live agent (the
  ``ParallelEnv`` contract, and ``parallel_api_test`` passes), but only the actions of ``acting_agents``
  are used; the others are ignored (any id in the action space; they are not validated against the mask),
  their reward is 0 and ``info["acted"]`` is False. An agent's observation is refreshed when it acts and
  when its turn comes (so the agent that acts next always holds a current one); the others keep their
  last observation. This is the "agent-turn in a parallel env" pattern; an AEC wrapper is not needed.
* ``clock="step"`` (the earlier default, kept so earlier figures stay reproducible): one ``step`` = every
  live forager fetches one URL, simultaneously; then the clock advances by ``step_hours`` (default 0.1 h =
  6 simulated minutes, so the news site's 18 days (432 h) take 4,320 steps) whatever was downloaded; the
  RA judges the foragers of a step one after the other in a random order (``np_random``) and manages them
  (Alg. 8) in the same order. ``acting_agents`` = every live agent, ``info["acted"]`` True.

The run is truncated for every agent once the clock reaches the web's ``horizon``.

**Deviations from the paper** (kept on purpose; the benchmark's numbers depend on them):

* *Under* ``clock="step"`` *only: simulated time per step, not per download* (see **Time**): visiting
  link-rich index pages is as cheap as visiting a leaf, and the foragers of a step fetch at the same time.
* A path also restarts when the frontier is empty (Alg. 11 does not say what happens then).
* An invalid action (an id outside ``action_mask``) costs the step and ``penalty``: the paper's foragers
  cannot choose one.

**Agents.** ``possible_agents`` = ``forager_0 … forager_{max_names-1}``; the run starts with
``n_initial`` (MIN_FORAGER = 2) foragers ``forager_0``, ``forager_1``. A newborn gets the **next unused
name**: names are never reused, because PettingZoo forbids reviving an agent that terminated
(``parallel_api_test`` asserts it). Once all ``max_names`` names have been used, multiplication stops
(``info["births_exhausted"]``). A deleted forager is ``terminated`` in the step that deletes it and
leaves ``agents``; a newborn appears in that step's returned dicts (reward 0, a path-start observation).

**Action** (``Discrete(n_pages)``): the page id (URL) to fetch next.

* Inside a path: a URL of *this forager's* frontier (links of the pages it fetched on this path and has
  not visited on it — Alg. 11/12). Revisits across paths are allowed (the news site changes).
* At a path start (the first step, after ``max_step`` = MAX_STEP = 100 ordered steps, Alg. 11, or when the
  frontier is empty): any URL the forager may restart from — its seed list (the START_SIZE first URLs of
  the weblog; by default the web's front page and the next 9 pages of a breadth-first crawl from it) or any
  URL it has visited itself (a newborn inherits its parent's). The weblog that chooses among them lives in the agent.
* ``obs["action_mask"]`` marks the valid ids. An invalid id (as samplers of masked spaces produce when
  they ignore the mask) spends the step without a fetch, reward ``penalty`` (−1), ``info["invalid_action"]``;
  an id outside ``[0, n_pages)`` or a missing/extra agent in ``actions`` raises ``ValueError``.

**Observation** (a ``Dict`` that holds every observation):

* ``action_mask`` int8 (n_pages,) — valid actions now (the frontier mask is the fixed-size form of the
  variable candidate set; the Gymnasium-family masked-action convention, cf. sb3-contrib).
* ``fetched_ids`` int32 (L,), ``fetched_states`` float32 (L, state_dim), ``n_fetched`` — the pages the
  forager downloaded in its last step: the visited page first, then its out-links born by now (Alg. 12
  downloads the linked pages too), padded with −1 / 0. L = 1 + the largest out-degree of the static graph,
  so every step fits. ``fetched_states`` are ``page_state`` vectors (Palotai's PrTFIDF classifier
  outputs): a forager sees the state **only of pages it downloaded** — never of unfetched pages.
* ``path_start`` (1 when this step must choose a path start), ``path_step``, ``time`` (hours), ``score``.

**Documents and the RA** (Alg. 5, 7): a document is (page, version), its version = the number of
modifications of the page by now (0 at birth); it is *new* if it was last modified ≤ ``window`` = 24 h ago.
In each step a forager sends every document among the pages it downloaded that it has not sent before
(its own record of sent documents, Alg. 5's ``previousPages``; a newborn starts with an empty one)
and that was last modified ≤ ``send_window`` (= 24 h) ago (Alg. 5; score −``score_minus`` = 0.05 per sent
URL). The RA answers ``reward`` = 100 if the document is not older than ``window`` (= 24 h) and nobody has
submitted it before, else ``penalty`` = −1 (a forager with a wider ``send_window`` sends stale documents
too, and is penalized for them), and adds ``score_plus`` = 1 to the score per
relevant one. Under ``clock="step"`` the foragers of one step are handled one after the other in a random
order drawn from the env's ``np_random``, so of two foragers that send the same new document in the same
step exactly one is rewarded; under ``clock="download"`` submissions are judged in the time order of
their downloads (the earliest submitter is rewarded). The step's reward of a forager is the sum
of its reinforcements. Then (Alg. 8; under ``clock="download"`` at the end of the forager's slice) a
forager with score ≥ ``max_score`` = 200 multiplies if fewer than ``max_foragers`` = 16 live (both scores
reset to ``init_score`` = 100); one with score ≤ ``min_score`` = 0 is deleted if more than ``min_foragers``
= 2 live. The weblog split and weight copy of Alg. 6 are the agents' business: ``info[parent]["child"]`` /
``info[child]["parent"]`` name the pair.

**Info keys** (every agent, every step and reset): ``time`` (the clock after the step), ``fetched_page``
(−1: none), ``path_start`` (this step started a path), ``path_step``, ``downloaded``, ``sent``, ``relevant``,
``score``, ``invalid_action``, ``acted`` (this agent's action was used in this step), ``parent``,
``child`` (``""`` when none), ``deleted``, ``births_exhausted``, ``n_foragers``.

**Measurements** for the paper's Table 1/2 and Fig. 2: :meth:`ForagerFleetEnv.run_log` (per step counts)
and :meth:`ForagerFleetEnv.found_documents` (every RA-rewarded document: page, version, time, forager).

Deterministic under ``reset(seed=...)``: the only randomness of the env is the RA's order per step under
``clock="step"``; ``clock="download"`` has none.
"""
from __future__ import annotations

import numbers
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from numba import njit

from gym_crawl.registry import install_command
from gym_crawl.webgen.changing import count_le

try:  # PettingZoo is the optional 'multi' extra
    from pettingzoo import ParallelEnv
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError(f"ForagerFleetEnv needs PettingZoo: {install_command('multi')}") from e

__all__ = ["PALOTAI", "ForagerFleetEnv"]

#: the paper's constants (§3, Alg. 1–11)
PALOTAI = {"reward": 100.0, "penalty": -1.0, "init_score": 100.0, "score_minus": 0.05, "score_plus": 1.0,
           "max_score": 200.0, "min_score": 0.0, "max_foragers": 16, "min_foragers": 2, "max_step": 100,
           "start_size": 10, "window": 24.0, "send_window": 24.0}


# ------------------------------------------------------------------------------ compiled kernels
@njit(cache=True, nogil=True)
def _fetch(p, t, send_window, indptr, indices, birth, mptr, mtimes, pvisited, frontier, sent_ver,
           out_ids, sub_ids, sub_ver, sub_age):  # pragma: no cover - compiled
    """One forager fetch of page ``p`` at time ``t`` (Alg. 12): mark it visited on the path, drop it from
    the frontier, download it and its out-links born by ``t``, add the links not visited on this path to
    the frontier, and select the documents to send (Alg. 5: last modified ≤ ``send_window`` ago and not
    sent before by this forager). Returns (n downloaded, frontier change, n submitted)."""
    df = 0
    if frontier[p]:
        frontier[p] = 0
        df -= 1
    pvisited[p] = 1
    n = 0
    out_ids[n] = p
    n += 1
    for e in range(indptr[p], indptr[p + 1]):
        u = indices[e]
        if birth[u] <= t:
            out_ids[n] = u
            n += 1
            if pvisited[u] == 0 and frontier[u] == 0:
                frontier[u] = 1
                df += 1
    m = 0
    for i in range(n):
        u = out_ids[i]
        k = count_le(mtimes, mptr[u], mptr[u + 1], t)  # modifications of u up to t
        last = birth[u] if k == 0 else mtimes[mptr[u] + k - 1]
        if t - last <= send_window and sent_ver[u] < k:
            sent_ver[u] = k
            sub_ids[m] = u
            sub_ver[m] = k
            sub_age[m] = t - last
            m += 1
    return n, df, m


@njit(cache=True, nogil=True)
def _judge(sub_ids, sub_ver, sub_age, m, window, ra_ver, rel):  # pragma: no cover - compiled
    """The RA's verdict (Alg. 7) on ``m`` submitted documents: relevant iff not older than ``window`` and
    no one submitted this (page, version) before. Returns the number relevant."""
    r = 0
    for i in range(m):
        u = sub_ids[i]
        if sub_age[i] <= window and ra_ver[u] < sub_ver[i]:
            ra_ver[u] = sub_ver[i]
            rel[i] = True
            r += 1
        else:
            rel[i] = False
    return r


# ------------------------------------------------------------------------------ the web, read once
def _modification_schedule(web: Any) -> tuple[np.ndarray, np.ndarray]:
    """Modification times of every page as CSR (``mptr``, ``mtimes``), read through the web's API:
    vectorized arrays if the web exposes them, else ``next_modification`` page by page (once, at
    construction; internal to the env and never shown to a forager)."""
    if hasattr(web, "mod_ptr") and hasattr(web, "mod_times"):
        return np.ascontiguousarray(web.mod_ptr, np.int64), np.ascontiguousarray(web.mod_times, np.float64)
    n, horizon = int(web.n_pages), float(web.horizon)
    counts = np.zeros(n + 1, np.int64)
    times: list[float] = []
    for p in range(n):
        after = float(web.birth[p])
        while True:
            m = float(web.next_modification(p, after))
            if not np.isfinite(m) or m > horizon:
                break
            if m <= after:
                raise ValueError(f"web.next_modification({p}, {after}) returned {m}, not after {after}")
            times.append(m)
            counts[p + 1] += 1
            after = m
    return np.cumsum(counts), np.asarray(times, np.float64)


def _page_states(web: Any) -> np.ndarray:
    n = int(web.n_pages)
    if hasattr(web, "states"):
        s = np.array(web.states, np.float32)
    else:
        s = np.stack([np.asarray(web.page_state(p), np.float32) for p in range(n)]) if n else \
            np.zeros((0, int(web.state_dim)), np.float32)
    if s.shape != (n, int(web.state_dim)):
        raise ValueError(f"page states have shape {s.shape}, expected ({n}, {web.state_dim})")
    if s.size and not (np.all(np.isfinite(s)) and np.abs(s).max() <= 1.0):
        raise ValueError("web page states must be finite and in [-1, 1] (the classifier outputs the observation "
                         "space promises)")
    return np.ascontiguousarray(s)


class _Forager:
    """The env's bookkeeping of one live forager (per agent, not per link)."""

    __slots__ = ("born_at", "downloaded", "frontier", "idx", "known", "last_ids", "n_frontier", "n_last", "name",
                 "path_step", "pvisited", "relevant", "score", "sent", "sent_ver")

    def __init__(self, name: str, idx: int, n: int, L: int, known: np.ndarray, init_score: float, max_step: int,
                 born_at: float):
        self.name, self.idx = name, idx
        self.frontier = np.zeros(n, np.int8)
        self.n_frontier = 0
        self.pvisited = np.zeros(n, np.int8)
        self.known = known
        self.sent_ver = np.full(n, -1, np.int32)
        self.path_step = max_step + 1  # Alg. 10: start with a new path
        self.score = float(init_score)
        self.last_ids = np.full(L, -1, np.int32)
        self.n_last = 0
        self.downloaded = self.sent = self.relevant = 0
        self.born_at = born_at


class ForagerFleetEnv(ParallelEnv):
    """Palotai et al.'s forager fleet + reinforcing agent on a :class:`ChangingWeb` (module docstring).

    Args:
        web: the changing web (``gym_crawl.webgen.changing.make_changing_web``).
        step_hours: simulated hours per step under ``clock="step"`` (every live forager fetches one URL).
        clock: ``"step"`` (default; the earlier per-fleet-step clock) or ``"download"`` (the paper's: one
            forager at a time, ``download_hours`` per downloaded page, time slices of ``slice_hours``).
        download_hours: simulated hours per downloaded page under ``clock="download"`` (default 2.6 s).
        slice_hours: a forager's time slice under ``clock="download"`` (default 0.05 h = 3 minutes).
        start_urls: the seed list (weblog of Alg. 10); default the ``start_size`` earliest-born pages.
        n_initial: foragers at reset (MIN_FORAGER = 2).
        max_names: how many forager names exist (names are never reused; ``possible_agents``).
        **params: the RA's constants, overriding :data:`PALOTAI` (``reward``, ``penalty``, ``init_score``,
            ``score_minus``, ``score_plus``, ``max_score``, ``min_score``, ``max_foragers``, ``min_foragers``,
            ``max_step``, ``start_size``, ``window``, ``send_window``).
    """

    metadata: ClassVar[dict[str, Any]] = {"name": "forager_fleet_v0", "render_modes": ["ansi"],
                                          "is_parallelizable": True}

    def __init__(self, web: Any, *, step_hours: float = 0.1, start_urls: Any = None, n_initial: int | None = None,
                 max_names: int = 256, render_mode: str | None = None, clock: str = "step",
                 download_hours: float = 2.6 / 3600.0, slice_hours: float = 0.05, **params: Any):
        bad = sorted(set(params) - set(PALOTAI))
        if bad:
            raise ValueError(f"unknown ForagerFleetEnv parameters {bad}; known: {sorted(PALOTAI)}")
        self.params = {**PALOTAI, **params}
        P = self.params
        if not (isinstance(step_hours, (int, float)) and step_hours > 0 and np.isfinite(step_hours)):
            raise ValueError(f"step_hours must be a positive number of hours, got {step_hours!r}")
        if clock not in ("step", "download"):
            raise ValueError(f"clock must be 'step' or 'download', got {clock!r}")
        for k, v in (("download_hours", download_hours), ("slice_hours", slice_hours)):
            if isinstance(v, bool) or not (isinstance(v, (int, float)) and v > 0 and np.isfinite(v)):
                raise ValueError(f"{k} must be a positive number of hours, got {v!r}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        for k in ("max_foragers", "min_foragers", "max_step", "start_size"):
            if isinstance(P[k], bool) or not isinstance(P[k], (int, np.integer)) or P[k] < 1:
                raise ValueError(f"{k} must be an integer >= 1, got {P[k]!r}")
        for k in ("reward", "penalty", "init_score", "score_minus", "score_plus", "max_score", "min_score",
                  "window", "send_window"):
            v = P[k]
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not np.isfinite(v):
                raise ValueError(f"{k} must be a finite number, got {v!r}")
        for k in ("window", "send_window", "score_minus", "score_plus"):
            if P[k] < 0:
                raise ValueError(f"{k} must be >= 0, got {P[k]!r}")
        if P["min_foragers"] > P["max_foragers"]:
            raise ValueError(f"min_foragers ({P['min_foragers']}) > max_foragers ({P['max_foragers']})")
        n_initial = int(P["min_foragers"]) if n_initial is None else n_initial
        if isinstance(n_initial, numbers.Integral) and not isinstance(n_initial, (bool, np.bool_)):
            n_initial = int(n_initial)
        if not isinstance(n_initial, int) or isinstance(n_initial, bool) or not 1 <= n_initial <= P["max_foragers"]:
            raise ValueError(f"n_initial must be an integer in [1, {P['max_foragers']}], got {n_initial!r}")
        if not isinstance(max_names, int) or max_names < n_initial:
            raise ValueError(f"max_names must be an integer >= n_initial ({n_initial}), got {max_names!r}")
        self._web = web
        self.render_mode = render_mode
        self.step_hours = float(step_hours)
        self.clock = clock
        self.download_hours = float(download_hours)
        self.slice_hours = float(slice_hours)
        self.n_initial = n_initial
        self.n_pages = n = int(web.n_pages)
        self.horizon = float(web.horizon)
        self.state_dim = d = int(web.state_dim)
        self._indptr = np.ascontiguousarray(web.indptr, np.int64)
        self._indices = np.ascontiguousarray(web.indices, np.int32)
        self._birth = np.ascontiguousarray(web.birth, np.float64)
        self._mptr, self._mtimes = _modification_schedule(web)
        self._S = _page_states(web)
        self.L = L = 1 + (int(np.diff(self._indptr).max()) if n else 0)
        if start_urls is None:
            start_urls = self._default_seeds(int(P["start_size"]))
        start_urls = np.asarray(start_urls, np.int64).ravel()
        if start_urls.size == 0 or start_urls.min() < 0 or start_urls.max() >= n:
            raise ValueError(f"start_urls must be a non-empty list of page ids in [0, {n}), got {start_urls.tolist()}")
        self.start_urls = start_urls.astype(np.int32)
        self.possible_agents = [f"forager_{i}" for i in range(max_names)]
        self._name_index = {a: i for i, a in enumerate(self.possible_agents)}
        self._obs_space = spaces.Dict({
            "action_mask": spaces.Box(0, 1, (n,), np.int8),
            "fetched_ids": spaces.Box(-1, max(n - 1, 0), (L,), np.int32),
            "fetched_states": spaces.Box(-1.0, 1.0, (L, d), np.float32),
            "n_fetched": spaces.Discrete(L + 1),
            "path_start": spaces.Discrete(2),
            "path_step": spaces.Discrete(int(P["max_step"]) + 2),
            "time": spaces.Box(0.0, np.float32(self.horizon + max(self.step_hours, L * self.download_hours)), (1,),
                               np.float32),
            "score": spaces.Box(-np.inf, np.inf, (1,), np.float32),
        })
        self._act_space = spaces.Discrete(n)
        self.agents: list[str] = []
        self._f: dict[str, _Forager] = {}
        self._t = 0.0
        self._steps = 0
        self.np_random, _ = seeding.np_random(None)
        self._sub_ids = np.zeros(L, np.int32)
        self._sub_ver = np.zeros(L, np.int32)
        self._sub_age = np.zeros(L, np.float64)
        self._rel = np.zeros(L, np.bool_)

    def _default_seeds(self, k: int) -> np.ndarray:
        """Palotai's RL foragers start from "the starting URL of the Web experiment and the first 9 visited
        URLs": the web's front page (``web.home``; else the earliest-born page) and the next pages of a
        breadth-first crawl from it over the pages that exist at t = 0 (then the earliest-born others)."""
        home = getattr(self._web, "home", None)
        order = np.argsort(self._birth, kind="stable")
        start = int(order[0]) if home is None else int(home)
        seen = {start}
        out, queue = [start], [start]
        while queue and len(out) < k:
            p = queue.pop(0)
            for u in self._indices[self._indptr[p]:self._indptr[p + 1]].tolist():
                if u not in seen and self._birth[u] <= 0.0:
                    seen.add(u)
                    out.append(u)
                    queue.append(u)
                    if len(out) == k:
                        break
        for u in order.tolist():
            if len(out) >= k:
                break
            if u not in seen:
                seen.add(u)
                out.append(u)
        return np.asarray(out, np.int64)

    # ------------------------------------------------------------------ spaces
    # one space object per agent name, as PettingZoo asks; held by the env (a functools.cache on the method
    # would keep every env ever built alive)
    def observation_space(self, agent: str) -> spaces.Space:
        self._check_name(agent)
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space:
        self._check_name(agent)
        return self._act_space

    def _check_name(self, agent: str) -> None:
        if agent not in self._name_index:
            raise ValueError(f"unknown agent {agent!r}; possible agents are forager_0 … "
                             f"forager_{len(self.possible_agents) - 1}")

    # ------------------------------------------------------------------ reset / step
    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        if seed is not None or not hasattr(self, "_seeded"):
            self.np_random, _ = seeding.np_random(seed)
            self._seeded = True
        n = self.n_pages
        self._t = 0.0
        self._steps = 0
        self._ra_ver = np.full(n, -1, np.int32)
        self._url_seen = np.zeros(n, np.bool_)
        self._next_name = 0
        self._f = {}
        self.agents = []
        self._turn = 0  # clock="download": index in self.agents of the forager whose slice it is
        self._slice_end = self.slice_hours
        seeds_known = np.zeros(n, np.bool_)
        seeds_known[self.start_urls] = True
        for _ in range(self.n_initial):
            self._spawn(seeds_known.copy())
        self._found: list[tuple[np.ndarray, np.ndarray, float, int]] = []
        self._log: dict[str, list] = {k: [] for k in ("time", "n_foragers", "downloaded", "sent", "relevant",
                                                      "found_urls", "invalid")}
        obs = {a: self._observe(self._f[a]) for a in self.agents}
        self._obs = dict(obs)
        infos = {a: self._info(self._f[a], fetched=-1, started=False, dl=0, sent=0, rel=0) for a in self.agents}
        return obs, infos

    def _spawn(self, known: np.ndarray) -> _Forager | None:
        if self._next_name >= len(self.possible_agents):
            return None
        name = self.possible_agents[self._next_name]
        f = _Forager(name, self._next_name, self.n_pages, self.L, known, self.params["init_score"],
                     int(self.params["max_step"]), self._t)
        self._next_name += 1
        self._f[name] = f
        self.agents.append(name)
        return f

    def _path_start(self, f: _Forager) -> bool:
        return f.path_step > self.params["max_step"] or f.n_frontier == 0

    def _mask(self, f: _Forager) -> np.ndarray:
        if self._path_start(f):
            return (f.known & (self._birth <= self._t)).astype(np.int8)
        return f.frontier.copy()

    def _observe(self, f: _Forager) -> dict[str, Any]:
        ids = f.last_ids.copy()
        states = np.zeros((self.L, self.state_dim), np.float32)
        if f.n_last:
            states[: f.n_last] = self._S[ids[: f.n_last]]
        return {"action_mask": self._mask(f), "fetched_ids": ids, "fetched_states": states, "n_fetched": f.n_last,
                "path_start": int(self._path_start(f)),
                "path_step": min(f.path_step, int(self.params["max_step"]) + 1),
                "time": np.array([self._t], np.float32), "score": np.array([f.score], np.float32)}

    def _info(self, f: _Forager, *, fetched: int, started: bool, dl: int, sent: int, rel: int,
              invalid: bool = False, parent: str = "", child: str = "", deleted: bool = False,
              exhausted: bool = False, acted: bool = True) -> dict[str, Any]:
        return {"time": self._t, "fetched_page": fetched, "path_start": started, "path_step": f.path_step,
                "downloaded": dl, "sent": sent, "relevant": rel, "score": f.score, "invalid_action": invalid,
                "acted": acted,
                "parent": parent, "child": child, "deleted": deleted, "births_exhausted": exhausted,
                "n_foragers": len(self.agents)}

    def _fetch_for(self, a: str, act: Any, t: float) -> tuple[dict[str, Any], Any, int]:
        """Forager ``a`` fetches page ``act`` at time ``t`` (Alg. 11/12). Returns its per-step record, its
        submissions (ids, versions, ages; None for an invalid action) and the URLs new to the fleet."""
        f = self._f[a]
        if isinstance(act, np.ndarray) and act.shape in ((), (1,)):
            act = act.reshape(())[()]
        if isinstance(act, (bool, np.bool_)) or not isinstance(act, numbers.Integral) \
                or not 0 <= int(act) < self.n_pages:
            raise ValueError(f"action of {a} must be an integer page id in [0, {self.n_pages}), got {act!r} "
                             f"({type(act).__name__})")
        page = int(act)
        start = self._path_start(f)
        valid = (f.known[page] and self._birth[page] <= t) if start else bool(f.frontier[page])
        if not valid:
            return {"fetched": -1, "started": False, "dl": 0, "sent": 0, "invalid": True}, None, 0
        if start:  # Alg. 11: a new path from a start URL
            f.frontier[:] = 0
            f.pvisited[:] = 0
            f.n_frontier = 0
            f.path_step = 1
        else:
            f.path_step += 1
        f.known[page] = True
        nd, df, m = _fetch(page, t, float(self.params["send_window"]), self._indptr, self._indices, self._birth,
                           self._mptr, self._mtimes, f.pvisited, f.frontier, f.sent_ver, f.last_ids, self._sub_ids,
                           self._sub_ver, self._sub_age)
        f.last_ids[nd:] = -1
        got = f.last_ids[:nd]
        fresh_urls = got[~self._url_seen[got]]
        self._url_seen[fresh_urls] = True
        urls = len(np.unique(fresh_urls)) if len(fresh_urls) > 1 else len(fresh_urls)
        f.n_last = nd
        f.n_frontier += df
        f.downloaded += nd
        f.sent += m
        f.score -= self.params["score_minus"] * m
        sub = (self._sub_ids[:m].copy(), self._sub_ver[:m].copy(), self._sub_age[:m].copy())
        return {"fetched": page, "started": start, "dl": nd, "sent": m, "invalid": False}, sub, urls

    def _ra_judge(self, a: str, sub: tuple[np.ndarray, np.ndarray, np.ndarray], t: float) -> tuple[int, float]:
        """The RA's Alg. 7 on forager ``a``'s submissions made at ``t``: (relevant count, reinforcement sum)."""
        P = self.params
        ids, ver, age = sub
        m = len(ids)
        r = _judge(ids, ver, age, m, float(P["window"]), self._ra_ver, self._rel) if m else 0
        if r:
            rel = self._rel[:m]
            self._found.append((ids[rel].copy(), ver[rel].copy(), t, self._f[a].idx))
        f = self._f[a]
        f.relevant += r
        f.score += P["score_plus"] * r
        return r, float(P["reward"] * r + P["penalty"] * (m - r))

    def _manage(self, a: str, births: dict[str, str], deleted: set[str], exhausted: set[str]) -> None:
        """Alg. 8 on forager ``a``: multiply at ``max_score`` (below ``max_foragers``), delete at ``min_score``
        (above ``min_foragers``)."""
        P = self.params
        f = self._f[a]
        n_live = len(self.agents)
        if f.score >= P["max_score"] and n_live < P["max_foragers"]:
            child = self._spawn(f.known.copy())
            if child is None:
                exhausted.add(a)
                return
            f.score = child.score = float(P["init_score"])
            births[a] = child.name
        elif f.score <= P["min_score"] and n_live > P["min_foragers"]:
            deleted.add(a)
            self.agents.remove(a)

    def _step_download(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """``clock="download"``: the forager whose turn it is fetches one URL; the clock advances by the
        step's downloads × ``download_hours`` (module docstring, **Time**)."""
        P = self.params
        t = self._t
        live = list(self.agents)
        a = live[self._turn]
        q, sub, urls = self._fetch_for(a, actions[a], t)
        if sub is None:
            r, reward = 0, float(P["penalty"])
            cost = self.download_hours
        else:
            r, reward = self._ra_judge(a, sub, t)
            cost = q["dl"] * self.download_hours
        q["rel"] = r
        self._t = t + cost
        births: dict[str, str] = {}
        deleted: set[str] = set()
        exhausted: set[str] = set()
        if self._t >= self._slice_end - 1e-12:  # the slice is over: Alg. 8, then the next forager's slice
            self._manage(a, births, deleted, exhausted)
            i = live.index(a)
            if a in deleted:  # the forager after it in the fleet order takes the slice
                self._turn = i % len(self.agents)
            else:
                self._turn = (self.agents.index(a) + 1) % len(self.agents)
            self._slice_end = self._t + self.slice_hours
        over = self._t >= self.horizon - 1e-9
        nxt = self.agents[self._turn] if self.agents else None
        parents = {c: p for p, c in births.items()}
        obs, rewards, infos, terms, truncs = {}, {}, {}, {}, {}
        for b in live + list(parents):
            f = self._f[b]
            if b in (a, nxt) or b in parents:
                self._obs[b] = self._observe(f)
            obs[b] = self._obs[b]
            rewards[b] = reward if b == a else 0.0
            qb: dict[str, Any] = q if b == a else {"fetched": -1, "started": False, "dl": 0, "sent": 0, "rel": 0,
                                                   "invalid": False}
            infos[b] = self._info(f, fetched=qb["fetched"], started=qb["started"], dl=qb["dl"], sent=qb["sent"],
                                  rel=qb["rel"], invalid=qb["invalid"], parent=parents.get(b, ""),
                                  child=births.get(b, ""), deleted=b in deleted, exhausted=b in exhausted,
                                  acted=b == a)
            terms[b] = b in deleted
            truncs[b] = over and b not in deleted
        for b in deleted:
            del self._f[b]
            del self._obs[b]
        lg = self._log
        lg["time"].append(t)
        lg["n_foragers"].append(len(live))
        lg["downloaded"].append(q["dl"])
        lg["sent"].append(q["sent"])
        lg["relevant"].append(r)
        lg["found_urls"].append(urls)
        lg["invalid"].append(int(q["invalid"]))
        self._steps += 1
        if over:
            self.agents = []
        return obs, rewards, terms, truncs, infos

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        if not self.agents:
            raise RuntimeError("step() called with no live agents: call reset() first (the run is over)")
        missing = [a for a in self.agents if a not in actions]
        extra = [a for a in actions if a not in self._f]
        if missing or extra:
            raise ValueError(f"actions must name exactly the live agents {self.agents}; missing {missing}, "
                             f"not live {extra}")
        if self.clock == "download":
            return self._step_download(actions)
        P = self.params
        t = self._t
        live = list(self.agents)
        rewards = dict.fromkeys(live, 0.0)
        per: dict[str, dict[str, Any]] = {}
        subs: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        tot_dl = tot_sent = n_invalid = tot_urls = 0
        # 1. every live forager fetches (independent of the others: the order does not matter)
        for a in live:
            q, sub, urls = self._fetch_for(a, actions[a], t)
            per[a] = q
            if sub is None:
                rewards[a] = float(P["penalty"])
                n_invalid += 1
                continue
            subs[a] = sub
            tot_dl += q["dl"]
            tot_sent += q["sent"]
            tot_urls += urls
        # 2. the RA, forager by forager in a random order (Alg. 9 time slices): first submitter wins
        order = [live[i] for i in self.np_random.permutation(len(live))]
        tot_rel = 0
        for a in order:
            per[a]["rel"] = 0
            if a not in subs:
                continue
            r, rewards[a] = self._ra_judge(a, subs[a], t)
            per[a]["rel"] = r
            tot_rel += r
        # 3. Manage forager (Alg. 8), same order
        births: dict[str, str] = {}
        deleted: set[str] = set()
        exhausted: set[str] = set()
        for a in order:
            self._manage(a, births, deleted, exhausted)
        self._steps += 1
        self._t = self._steps * self.step_hours  # no accumulated rounding
        over = self._t >= self.horizon - 1e-9
        obs, infos, terms, truncs = {}, {}, {}, {}
        parents = {c: p for p, c in births.items()}
        for a in live + list(parents):
            f = self._f[a]
            q = per.get(a, {"fetched": -1, "started": False, "dl": 0, "sent": 0, "rel": 0, "invalid": False})
            rewards.setdefault(a, 0.0)
            obs[a] = self._obs[a] = self._observe(f)
            infos[a] = self._info(f, fetched=q["fetched"], started=q["started"], dl=q["dl"], sent=q["sent"],
                                  rel=q["rel"], invalid=q["invalid"], parent=parents.get(a, ""),
                                  child=births.get(a, ""), deleted=a in deleted, exhausted=a in exhausted)
            terms[a] = a in deleted
            truncs[a] = over and a not in deleted
        for a in deleted:
            del self._f[a]
            del self._obs[a]
        lg = self._log
        lg["time"].append(t)
        lg["n_foragers"].append(len(live))
        lg["downloaded"].append(tot_dl)
        lg["sent"].append(tot_sent)
        lg["relevant"].append(tot_rel)
        lg["found_urls"].append(tot_urls)
        lg["invalid"].append(n_invalid)
        if over:
            self.agents = []
        return obs, rewards, terms, truncs, infos

    # ------------------------------------------------------------------ read-only accessors
    @property
    def time(self) -> float:
        """The simulated clock (hours since the start of the web)."""
        return self._t

    @property
    def acting_agents(self) -> list[str]:
        """The agents whose actions the next ``step`` uses: every live agent under ``clock="step"``, the one
        forager whose time slice it is under ``clock="download"`` (empty when the run is over). A copy."""
        if self.clock == "step" or not self.agents:
            return list(self.agents)
        return [self.agents[self._turn]]

    def run_log(self) -> dict[str, np.ndarray]:
        """Per step of the run so far (under ``clock="download"`` a step is one forager's fetch): ``time`` (at
        the step's start, hours), ``n_foragers`` (live during it),
        ``downloaded`` (pages downloaded by all foragers), ``sent`` (URLs sent to the RA), ``relevant``
        (documents the RA rewarded), ``found_urls`` (URLs the fleet downloaded for the first time), ``invalid``
        (invalid actions). Copies."""
        return {k: np.asarray(v, np.float64 if k == "time" else np.int64) for k, v in self._log.items()}

    def found_documents(self) -> dict[str, np.ndarray]:
        """Every document the RA rewarded, in order: ``page``, ``version`` (modifications by then),
        ``time`` (hours) and ``forager`` (name index). Copies."""
        if not self._found:
            e = np.zeros(0, np.int64)
            return {"page": e, "version": e.copy(), "time": np.zeros(0), "forager": e.copy()}
        return {"page": np.concatenate([x[0] for x in self._found]).astype(np.int64),
                "version": np.concatenate([x[1] for x in self._found]).astype(np.int64),
                "time": np.concatenate([np.full(len(x[0]), x[2]) for x in self._found]),
                "forager": np.concatenate([np.full(len(x[0]), x[3], np.int64) for x in self._found])}

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        parts = [f"t={self._t:.1f}h foragers={len(self.agents)}"]
        parts += [f"{a}: score={self._f[a].score:.2f} path_step={self._f[a].path_step}" for a in self.agents]
        return "\n".join(parts)

    def close(self) -> None:
        pass
