"""ACHE-style online link classifier (``online-classifier``): the strong non-RL comparator.

ACHE (Vieira et al., "Finding seeds to bootstrap focused crawlers", and the ACHE crawler's
"online learning" link classifier) orders its frontier by a classifier of *link* features that it
retrains during the crawl from the pages it fetched: a link that led to a relevant page is a
positive example, one that led to an irrelevant page a negative one. No value function, no
bootstrapping — supervised learning of "where does this link lead".

Here:

* **Features**: the env's feature rows of frontier pages — by default ``features="hashed-transferable"``
  (:mod:`gym_crawl.features.content`: hashed anchor / URL words and n-grams / context / parent-title
  tokens of the best discovering link, which it learns online within a topic, plus topic-relative
  columns that transfer across topics: Han's relevances as values and tiles, TRES's path and keyword
  flags, relevant-parent counts, link-text and parent vectors times the topic vector), read through the env's
  documented accessors: ``env.sparse_features_of(pages)`` when the env offers it, else
  ``env.features_of(pages)`` (sparsified). Rows are fetched only for ``frontier_changes().updated``
  (the set is ``local``), kept in a :class:`FrontierRows` store and re-scored with one sparse
  mat-vec per step.
* **Model**: logistic regression ``p(relevant | x) = σ(w·x + b)`` trained online by SGD
  (learning rate ``lr``, L2 ``l2``), class-balanced sample weights (``balanced``), each step on the
  new example plus ``batch`` examples replayed from a memory of the last ``memory`` examples
  (ACHE retrains on everything seen so far; replay is its online form).
* **Label**: the fetched page's reward > 0 (with ``reward="labels"`` the page's label; never an
  unfetched page's).
* **Policy**: fetch the frontier page with the highest w·x (monotone in the probability); ties:
  the earliest in ``frontier_pages()`` order. No exploration (``epsilon`` = 0 by default).
  Before any learning, w is zero except ``prior`` on the ``a.link_rel`` column (the papers'
  no-learning priority), so the first steps are best-first's. With ``prior_mode="init"`` (the default)
  that weight is learned like the others; with ``prior_mode="fixed"`` it stays ``prior`` — the score is
  ``prior`` × best-first's link score plus a learned residual over the other columns, so neither the
  gradient nor L2 erodes best-first's ranking (variant ``online-classifier+prior``).
* Weights and the replay memory persist across episodes and are saved without pickle (npz).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np
import scipy.sparse as sp
from numba import njit

import gym_crawl.features.content  # noqa: F401  (registers the content feature sets)
from gym_crawl.agents.base import AGENTS, Agent, Transition

__all__ = ["PRIOR_COLUMN", "PRIOR_MODES", "REFRESH_MODES", "SHIPPED_PREFIX", "FrontierRows", "OnlineClassifierAgent",
           "RingBuffer", "RowLearner", "SparseMemory", "feature_rows", "logistic_sgd_step", "row_dot",
           "shipped_weights_path"]

_Item = TypeVar("_Item")

#: the feature column that holds best-first's link score (``CrawlView.link_scores``: the topic relevance of the
#: best discovering link's URL + anchor + context text)
PRIOR_COLUMN = "a.link_rel"
#: ``prior_mode`` values: ``"init"`` — the weight of :data:`PRIOR_COLUMN` starts at ``prior`` and is learned like
#: every other weight; ``"fixed"`` — it stays ``prior`` (score = prior · link score + learned residual)
PRIOR_MODES = ("init", "fixed")
#: ``refresh`` values: which frontier rows are (re)computed after a step — ``"updated"``: every page whose
#: discovering links changed (``frontier_changes().updated``, exact); ``"new"``: a page's row once, when it is
#: first seen (what a live crawler with a priority queue does: O(new pages) feature work per step)
REFRESH_MODES = ("updated", "new")
#: ``weights="package:<name>"`` starts from the weights the package ships as ``<name>`` (:func:`shipped_weights_path`)
SHIPPED_PREFIX = "package:"


def shipped_weights_path(name: str) -> Path:
    """The file of the pretrained weights the package ships for registered agent ``name``
    (``gym_crawl/agents/data/<name>.npz``, package data; written by ``gym-crawl bench pretrain``)."""
    from importlib.resources import files

    return Path(str(files("gym_crawl.agents").joinpath("data", f"{name}.npz")))


def feature_rows(env: Any, pages: np.ndarray) -> sp.csr_matrix:
    """(len(pages), d) CSR rows of frontier ``pages`` through the env's documented accessors:
    ``sparse_features_of`` when present, else ``features_of`` (dense) sparsified."""
    pages = np.asarray(pages, np.int64)
    f = getattr(env, "sparse_features_of", None)
    if f is not None:
        return sp.csr_matrix(f(pages), dtype=np.float32)
    return sp.csr_matrix(np.asarray(env.features_of(pages), np.float32))


def row_dot(indptr: np.ndarray, cols: np.ndarray, vals: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``X @ w`` for CSR arrays (scipy's compiled CSR mat-vec: sums each row in column order, so the
    result is deterministic)."""
    n = len(indptr) - 1
    if n == 0:
        return np.zeros(0)
    X = sp.csr_matrix((np.asarray(vals, np.float64), cols, indptr), shape=(n, len(w)), copy=False)
    return np.asarray(X @ w, np.float64)


@njit(cache=True, nogil=True)
def _home(page, mask):
    h = np.int64(page) * np.int64(2654435761)
    return (h ^ (h >> 16)) & mask


@njit(cache=True, nogil=True)
def _lookup(tab, pages):
    """The value (column 1) of each of ``pages`` in the open-addressing table ``tab`` (column 0: the page, -1 for
    an empty entry); -1 for a page not in it. A page's key and value share a cache line."""
    mask = len(tab) - 1
    out = np.empty(len(pages), np.int64)
    for j in range(len(pages)):
        p = pages[j]
        h = _home(p, mask)
        while True:
            k = tab[h, 0]
            if k == p:
                out[j] = tab[h, 1]
                break
            if k == -1:
                out[j] = -1
                break
            h = (h + 1) & mask
    return out


@njit(cache=True, nogil=True)
def _store(tab, pages, values, n):
    """Set the value of each of ``pages`` (in order; a page repeated: its last value), adding the pages not in
    ``tab`` (room for all of them guaranteed by the caller); returns ``n`` + the pages added."""
    mask = len(tab) - 1
    for j in range(len(pages)):
        p = pages[j]
        h = _home(p, mask)
        while tab[h, 0] != p and tab[h, 0] != -1:
            h = (h + 1) & mask
        if tab[h, 0] == -1:
            tab[h, 0] = p
            n += 1
        tab[h, 1] = values[j]
    return n


@njit(cache=True, nogil=True)
def _regrow(old, new):
    """Put every entry of ``old`` into the empty, larger table ``new``."""
    mask = len(new) - 1
    for i in range(len(old)):
        p = old[i, 0]
        if p != -1:
            h = _home(p, mask)
            while new[h, 0] != -1:
                h = (h + 1) & mask
            new[h, 0] = p
            new[h, 1] = old[i, 1]


class FrontierRows:
    """Feature rows of the frontier pages of one episode, as a growing CSR log with a pointer from each page
    to its latest row; compacted when most rows are dead. The log's arrays grow by doubling (amortized
    O(non-zeros) per row added, not a copy of the whole log per step). The pointers are keyed by page: an
    open-addressing table of (page, latest row) entries (int32 pairs, at most half full, doubling) holding the pages
    given a row this episode, so nothing here is sized by the web."""

    def __init__(self) -> None:
        self.n_rows = 0
        self.reset(0)

    def reset(self, n_pages: int = 0) -> None:
        """Forget every row (a new episode). ``n_pages``, the web's size, is not needed (kept for callers)."""
        #: (page, its latest row or -1) entries of the pages given a row this episode; (-1, ·): empty
        self.table = np.full((128, 2), -1, np.int32)
        #: pages in :attr:`table`
        self.n_keyed = 0
        self._indptr = np.zeros(1025, np.int64)
        self._cols = np.zeros(1 << 16, np.int32)
        self._vals = np.zeros(1 << 16, np.float64)
        self._page = np.zeros(1024, np.int64)
        self.n_rows = 0

    @property
    def indptr(self) -> np.ndarray:
        """(n_rows + 1,) row pointers of the log."""
        return self._indptr[: self.n_rows + 1]

    @property
    def cols(self) -> np.ndarray:
        """Column of every stored value, row after row."""
        return self._cols[: int(self._indptr[self.n_rows])]

    @property
    def vals(self) -> np.ndarray:
        """Every stored value, row after row."""
        return self._vals[: int(self._indptr[self.n_rows])]

    @property
    def page(self) -> np.ndarray:
        """(n_rows,) the page of every row."""
        return self._page[: self.n_rows]

    def latest(self, pages: np.ndarray) -> np.ndarray:
        """int64 latest row of each of ``pages`` (-1: the page has none)."""
        return _lookup(self.table, np.asarray(pages, np.int64))

    def _set_latest(self, pages: np.ndarray, rows: np.ndarray) -> None:
        need = 2 * (self.n_keyed + len(pages))
        if need > len(self.table):
            size = len(self.table)
            while need > size:
                size *= 2
            new = np.full((size, 2), -1, np.int32)
            _regrow(self.table, new)
            self.table = new
        self.n_keyed = int(_store(self.table, np.asarray(pages, np.int64), np.asarray(rows, np.int64), self.n_keyed))

    @staticmethod
    def _room(a: np.ndarray, need: int) -> np.ndarray:
        if need <= len(a):
            return a
        out = np.zeros(max(need, 2 * len(a)), a.dtype)
        out[: len(a)] = a
        return out

    def add(self, pages: np.ndarray, X: sp.csr_matrix) -> None:
        """Store the rows ``X`` of ``pages`` as their latest rows."""
        pages = np.asarray(pages, np.int64)
        if len(pages) == 0:
            return
        X = X.tocsr()
        n0, k = self.n_rows, len(pages)
        base = int(self._indptr[n0])
        nnz = int(X.indptr[-1])
        self._indptr = self._room(self._indptr, n0 + k + 1)
        self._page = self._room(self._page, n0 + k)
        self._cols = self._room(self._cols, base + nnz)
        self._vals = self._room(self._vals, base + nnz)
        self._indptr[n0 + 1: n0 + k + 1] = base + X.indptr[1:].astype(np.int64)
        self._cols[base: base + nnz] = X.indices[:nnz]
        self._vals[base: base + nnz] = X.data[:nnz]
        self._page[n0: n0 + k] = pages
        self._set_latest(pages, np.arange(n0, n0 + k))
        self.n_rows = n0 + k

    def row(self, page: int) -> tuple[np.ndarray, np.ndarray]:
        """(cols, vals) copies of the latest row of ``page``."""
        r = int(self.latest(np.array([page]))[0])
        if r < 0:
            raise KeyError(f"page {page} has no stored feature row")
        a, b = int(self._indptr[r]), int(self._indptr[r + 1])
        return self._cols[a:b].copy(), self._vals[a:b].astype(np.float32)

    def scores(self, pages: np.ndarray, w: np.ndarray, b: float = 0.0) -> np.ndarray:
        """``w · x + b`` of the latest rows of ``pages`` (every page must have one)."""
        pages = np.asarray(pages, np.int64)
        rid = self.latest(pages)
        if len(rid) and rid.min() < 0:
            raise KeyError(f"pages {pages[rid < 0][:5].tolist()} have no stored feature row")
        return row_dot(self.indptr, self.cols, self.vals, w)[rid] + b

    def row_scores(self, first: int, w: np.ndarray) -> np.ndarray:
        """``w · x`` of the stored rows ``first`` … ``n_rows − 1`` (the rows added since a row count was taken)."""
        a = int(self._indptr[first])
        ptr = self._indptr[first: self.n_rows + 1] - a
        end = int(self._indptr[self.n_rows])
        return row_dot(ptr, self._cols[a:end], self._vals[a:end], w)

    def compact(self, keep_pages: np.ndarray) -> np.ndarray | None:
        """Drop every row but the latest rows of ``keep_pages`` (when fewer than half are kept); returns the old
        row index of every kept row, in its new order (``None``: nothing dropped)."""
        keep_pages = np.asarray(keep_pages, np.int64)
        if 2 * len(keep_pages) >= self.n_rows:
            return None
        rid = np.sort(self.latest(keep_pages))
        starts, ends = self._indptr[rid], self._indptr[rid + 1]
        lens = ends - starts
        idx = np.repeat(starts, lens) + (np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens))
        pages = self._page[rid]
        self.table[:, 1] = -1
        cols, vals = self._cols[idx], self._vals[idx]
        n = len(rid)
        self._cols[: len(idx)] = cols
        self._vals[: len(idx)] = vals
        self._indptr[0] = 0
        np.cumsum(lens, out=self._indptr[1: n + 1])
        self._page[:n] = pages
        self.n_rows = n
        self._set_latest(pages, np.arange(n))
        return rid


class RingBuffer(Generic[_Item]):
    """Items kept in arrival order up to ``capacity``; then each new item replaces the oldest (at ``pos``)."""

    def __init__(self, capacity: int):
        self.capacity = int(capacity)
        self.items: list[_Item] = []
        self.pos = 0

    def __len__(self) -> int:
        return len(self.items)

    def put(self, item: _Item) -> None:
        """Keep ``item`` (in place of the oldest when full)."""
        if len(self.items) < self.capacity:
            self.items.append(item)
        else:
            self.items[self.pos] = item
        self.pos = (self.pos + 1) % self.capacity


class SparseMemory(RingBuffer[tuple[np.ndarray, np.ndarray, float]]):
    """A ring buffer of sparse rows with a scalar target, saved as flat arrays (no pickle)."""

    def add(self, cols: np.ndarray, vals: np.ndarray, y: float) -> None:
        self.put((cols, vals, float(y)))

    def batch(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """CSR ``(indptr, cols, vals)`` and targets of items ``idx``."""
        its = [self.items[int(i)] for i in idx]
        lens = np.array([len(c) for c, _, _ in its], np.int64)
        indptr = np.zeros(len(its) + 1, np.int64)
        np.cumsum(lens, out=indptr[1:])
        cols = np.concatenate([c for c, _, _ in its]) if its else np.zeros(0, np.int32)
        vals = np.concatenate([v for _, v, _ in its]) if its else np.zeros(0, np.float32)
        return indptr, cols, vals, np.array([y for _, _, y in its], np.float64)

    def state(self, prefix: str) -> dict[str, np.ndarray]:
        indptr, cols, vals, y = self.batch(np.arange(len(self.items)))
        return {f"{prefix}indptr": indptr, f"{prefix}cols": cols.astype(np.int32),
                f"{prefix}vals": vals.astype(np.float32), f"{prefix}y": y, f"{prefix}pos": np.array([self.pos])}

    def load(self, state: dict[str, np.ndarray], prefix: str) -> None:
        indptr, cols, vals, y = (state[f"{prefix}{k}"] for k in ("indptr", "cols", "vals", "y"))
        self.items = [(cols[indptr[i]:indptr[i + 1]].astype(np.int32), vals[indptr[i]:indptr[i + 1]].astype(np.float32),
                       float(y[i])) for i in range(len(y))]
        if len(self.items) > self.capacity:
            raise ValueError(f"replay memory of {len(self.items)} items exceeds the configured capacity "
                             f"{self.capacity}")
        self.pos = int(state[f"{prefix}pos"][0])


def logistic_sgd_step(w: np.ndarray, b: float, indptr: np.ndarray, cols: np.ndarray, vals: np.ndarray,
                      y: np.ndarray, weight: np.ndarray, *, lr: float, l2: float) -> float:
    """One minibatch SGD step of L2-regularized logistic regression, in place on ``w``; returns the
    new bias. Gradient of ``Σ_i weight_i · logloss(σ(w·x_i + b), y_i) + l2/2 ·‖w‖²``:
    ``w ← w − lr (Σ_i weight_i (p_i − y_i) x_i + l2 w)``, ``b ← b − lr Σ_i weight_i (p_i − y_i)``."""
    z = row_dot(indptr, cols, vals, w) + b
    p = 1.0 / (1.0 + np.exp(-np.clip(z, -35.0, 35.0)))
    g = weight * (p - y)
    rows = np.repeat(np.arange(len(y)), np.diff(indptr))
    if l2:
        w *= 1.0 - lr * l2
    np.add.at(w, cols, -lr * g[rows] * vals)
    return float(b - lr * g.sum())


class RowLearner(Agent):
    """What the linear learners over frontier feature rows share (page action mode): the rows of the
    frontier's pages, the weights (with best-first's link score held at ``prior`` under
    ``prior_mode="fixed"``), greedy or ε-greedy choice, and replay sampling. A subclass implements
    :meth:`learn`."""

    action_kind = "page"
    needs_observation = False
    env_defaults: ClassVar[dict[str, Any]] = {"features": "hashed-transferable"}
    DEFAULTS: ClassVar[dict[str, Any]] = {}
    checks_own_config = True  # __init__ refuses options outside DEFAULTS

    def __init__(self, **config: Any):
        cfg = {**self.DEFAULTS, **config}
        unknown = sorted(set(cfg) - set(self.DEFAULTS))
        if unknown:
            raise ValueError(f"{self.name}: unknown option(s) {unknown}; options: {sorted(self.DEFAULTS)}")
        super().__init__(**cfg)
        if not isinstance(cfg["features"], str):
            raise TypeError(f"{self.name}: features must be a registered feature-set name, got {cfg['features']!r}")
        self.env_defaults = {**type(self).env_defaults, "features": cfg["features"]}
        for k in ("lr", "epsilon", "prior"):
            v = cfg.get(k)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v)):
                raise ValueError(f"{self.name}: {k} must be a finite number, got {v!r}")
        if not 0.0 <= float(cfg.get("epsilon", 0.0)) <= 1.0:
            raise ValueError(f"{self.name}: epsilon must be in [0, 1], got {cfg['epsilon']!r}")
        if cfg.get("prior_mode", "init") not in PRIOR_MODES:
            raise ValueError(f"{self.name}: prior_mode must be one of {list(PRIOR_MODES)}, got {cfg['prior_mode']!r}")
        if cfg.get("refresh", "updated") not in REFRESH_MODES:
            raise ValueError(f"{self.name}: refresh must be one of {list(REFRESH_MODES)}, got {cfg['refresh']!r}")
        every = cfg.get("rescore_every", 1)
        if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
            raise ValueError(f"{self.name}: rescore_every must be an integer >= 1, got {every!r}")
        self.w: np.ndarray | None = None
        self.b = 0.0
        self.frontier = FrontierRows()
        #: cached w·x of the stored rows (``rescore_every`` > 1): rows scored, steps since every row was scored
        self._cached = np.zeros(0)
        self._since = 0
        self._x: tuple[np.ndarray, np.ndarray] | None = None
        self._page = -1
        #: rows of the pages dispatched and not landed yet (an env with pages in flight)
        self._in_flight: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._prior_col = -1

    # ------------------------------------------------------------ episode
    def _init_weights(self, env: Any) -> None:
        d = int(env.feature_dim)
        names = env.feature_names
        col = names.index(PRIOR_COLUMN) if PRIOR_COLUMN in names else -1
        fixed = self.config.get("prior_mode", "init") == "fixed"
        if fixed and col < 0:
            raise ValueError(f"{self.name}: prior_mode='fixed' needs the {PRIOR_COLUMN!r} column (best-first's "
                             f"link score), which the feature set {env.feature_set_name!r} lacks; use a feature set "
                             f"that has it (e.g. 'hashed-site') or prior_mode='init'")
        self._prior_col = col if fixed else -1
        if self.w is None:
            self.w = np.zeros(d, np.float64)
            if col >= 0:
                self.w[col] = float(self.config["prior"])
        elif len(self.w) != d:
            raise ValueError(f"{self.name}: weights have {len(self.w)} columns but the env's feature set "
                             f"{env.feature_set_name!r} has {d}; use the feature set the agent was trained with")
        self.hold_prior()

    def hold_prior(self) -> None:
        """With ``prior_mode="fixed"``: put the weight of best-first's link score back at ``prior`` (the
        learning step's gradient and L2 shrinkage never move it; the other weights are the learned residual)."""
        if self._prior_col >= 0 and self.w is not None:
            self.w[self._prior_col] = float(self.config["prior"])

    def begin_episode(self, env: Any, rng: np.random.Generator) -> None:
        super().begin_episode(env, rng)
        self._init_weights(env)
        self.frontier.reset(int(env.n_pages))
        self._cached, self._since = np.zeros(0), 0
        self._ingest(env.frontier_changes().updated)
        self._x, self._page = None, -1
        self._in_flight = {}

    def _ingest(self, pages: np.ndarray) -> sp.csr_matrix | None:
        pages = np.asarray(pages, np.int64)
        if len(pages) == 0:
            return None
        pages = pages[self.env.is_frontier(pages)]
        if self.config.get("refresh", "updated") == "new" and len(pages):
            pages = pages[self.frontier.latest(pages) < 0]  # a page's row is taken once, when it is first seen
        if len(pages) == 0:
            return None
        X = feature_rows(self.env, pages)
        self.frontier.add(pages, X)
        return X

    def act(self, obs: Any, info: dict) -> int:
        F = self.env.frontier_pages()
        if len(F) == 0:
            raise RuntimeError(f"{self.name}: the frontier is empty")
        eps = float(self.config.get("epsilon", 0.0))
        if eps > 0 and self.rng.random() < eps:
            page = int(F[self.rng.integers(len(F))])
            self.last_score = None
        else:
            sc = self.frontier_scores(F)
            j = int(np.argmax(sc))
            page = int(F[j])
            self.last_score = float(sc[j])
        self._x, self._page = self.frontier.row(page), page
        return page

    def frontier_scores(self, pages: np.ndarray) -> np.ndarray:
        """``w · x + b`` of frontier ``pages``. With ``rescore_every`` = 1 (the default) every stored row is scored
        with the current weights at every step; with R > 1 a row is scored when it is stored and every row again
        every R steps, so between those steps a row's score lags the weights by at most R − 1 updates (the scoring
        costs O(new rows) per step and O(all rows) every R steps instead of O(all rows) per step)."""
        assert self.w is not None
        every = int(self.config.get("rescore_every", 1))
        fr = self.frontier
        if every <= 1:
            return fr.scores(pages, self.w, self.b)
        if self._since >= every or len(self._cached) == 0 or len(self._cached) > fr.n_rows:
            self._cached = fr.row_scores(0, self.w)
            self._since = 0
        elif len(self._cached) < fr.n_rows:
            self._cached = np.concatenate([self._cached, fr.row_scores(len(self._cached), self.w)])
        self._since += 1
        rid = fr.latest(np.asarray(pages, np.int64))
        if len(rid) and rid.min() < 0:
            raise KeyError(f"pages {np.asarray(pages)[rid < 0][:5].tolist()} have no stored feature row")
        return self._cached[rid] + self.b

    def landed(self, info: dict, kept: Any, store: dict[int, Any]) -> list[tuple[Any, float]]:
        """``(what act kept for a page, its reward)`` for each page whose fetch landed this step. An env with pages
        in flight (its info has ``landed_pages``) lands a page steps after it was dispatched: ``kept`` (this step's
        dispatch) waits in ``store`` until then; otherwise the page this step fetched is the one chosen."""
        landed = info.get("landed_pages")
        if landed is None:
            return [(kept, float(info["reward"]))] if kept is not None and info["fetched_page"] == self._page else []
        if kept is not None and info.get("dispatched_page") == self._page:
            store[self._page] = kept
        out = []
        for p, r in zip(landed.tolist(), info["landed_rewards"].tolist()):
            if p < 0:
                break
            k = store.pop(int(p), None)
            if k is not None:
                out.append((k, float(r)))
        return out

    def observe(self, transition: Transition) -> None:
        info = {**transition.info, "reward": transition.reward}
        new_rows = self._ingest(self.env.frontier_changes().updated)
        for x, r in self.landed(info, self._x, self._in_flight):
            self.learn(x, r, transition, new_rows)
        self._x, self._page = None, -1
        if self.frontier.n_rows > 256 and self.frontier.compact(self.env.frontier_pages()) is not None:
            self._cached = np.zeros(0)  # the rows moved: score them all at the next step

    def learn(self, x: tuple[np.ndarray, np.ndarray], reward: float, transition: Transition,
              next_rows: sp.csr_matrix | None) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def replay_indices(self, n: int, k: int) -> np.ndarray:
        """Indexes into the subclass' ``memory`` (a ring buffer with ``pos`` and ``capacity``): the newest item,
        then ``k`` drawn uniformly with replacement from its ``n`` items."""
        newest = (self.memory.pos - 1) % self.memory.capacity
        if n <= 1 or k <= 0:
            return np.array([newest])
        return np.concatenate([[newest], self.rng.integers(0, n, size=k)])


class OnlineClassifierAgent(RowLearner):
    """ACHE-style online link classifier: logistic regression of 'the link leads to a relevant page'."""

    name = "online-classifier"
    DEFAULTS: ClassVar[dict[str, Any]] = {"features": "hashed-transferable", "lr": 0.5, "l2": 1e-5, "batch": 16,
                                          "memory": 20_000, "balanced": True, "prior": 4.0,
                                          "prior_mode": "init", "epsilon": 0.0, "refresh": "updated",
                                          "rescore_every": 1, "weights": None}

    def __init__(self, **config: Any):
        super().__init__(**config)
        for k in ("batch", "memory"):
            v = self.config[k]
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < (0 if k == "batch" else 1):
                raise ValueError(f"{self.name}: {k} must be a non-negative int (memory >= 1), got {v!r}")
        self.memory = SparseMemory(int(self.config["memory"]))
        self.n_pos = 0
        self.n_neg = 0
        if self.config.get("weights") is not None:
            self._load_weights(self.config["weights"])

    def _load_weights(self, source: Any) -> None:
        """Start from saved weights: ``"package:<name>"`` — the weights the package ships as ``<name>``
        (:func:`shipped_weights_path`) — or the path of an agent file of the same agent; the file's model
        configuration becomes :attr:`env_config` (so the env it needs is built with no flags)."""
        import json
        import zipfile

        from gym_crawl.agents.env_config import MODEL_ENV_KEYS, read_env_config

        shipped = isinstance(source, str) and source.startswith(SHIPPED_PREFIX)
        path = shipped_weights_path(source[len(SHIPPED_PREFIX):]) if shipped else Path(str(source))
        try:
            with np.load(path, allow_pickle=False) as z:
                header = json.loads(bytes(z["__header__"]).decode())
                state = {k: z[k].copy() for k in z.files if k != "__header__"}
        except FileNotFoundError:
            hint = " (the package's pretrained weights: `gym-crawl bench pretrain` writes them)" if shipped else ""
            raise ValueError(f"{self.name}: weights {str(path)!r} not found{hint}") from None
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as e:
            raise ValueError(f"{self.name}: weights {str(path)!r} are not an agent file ({e})") from None
        saved = str(header.get("config", {}).get("features"))
        if saved != self.config["features"]:
            raise ValueError(f"{self.name}: weights {str(path)!r} were trained on features {saved!r}, this agent reads "
                             f"{self.config['features']!r}")
        self.load_state_dict(state)
        env = header.get("env")
        if isinstance(env, dict):
            self.env_config = read_env_config(env, keys=[k for k in MODEL_ENV_KEYS if k in env],
                                              fixed=self.fixed_env_keys(), name=str(path))

    def learn(self, x: tuple[np.ndarray, np.ndarray], reward: float, transition: Transition,
              next_rows: sp.csr_matrix | None) -> None:
        y = 1.0 if reward > 0 else 0.0
        self.memory.add(x[0], x[1], y)
        self.n_pos += int(y)
        self.n_neg += int(1 - y)
        idx = self.replay_indices(len(self.memory), int(self.config["batch"]))
        indptr, cols, vals, ys = self.memory.batch(idx)
        if self.config["balanced"] and self.n_pos and self.n_neg:
            n = self.n_pos + self.n_neg
            wp, wn = min(10.0, 0.5 * n / self.n_pos), min(10.0, 0.5 * n / self.n_neg)
            weight = np.where(ys > 0, wp, wn)
        else:
            weight = np.ones(len(ys))
        weight = weight / len(ys)
        assert self.w is not None
        self.b = logistic_sgd_step(self.w, self.b, indptr, cols, vals, ys, weight,
                                   lr=float(self.config["lr"]), l2=float(self.config["l2"]))
        self.hold_prior()

    def predict_proba(self, pages: np.ndarray) -> np.ndarray:
        """P(relevant) of frontier ``pages`` under the current model."""
        assert self.w is not None
        z = self.frontier.scores(pages, self.w, self.b)
        return 1.0 / (1.0 + np.exp(-np.clip(z, -35.0, 35.0)))

    # -------------------------------------------------------- persistence
    def state_dict(self) -> dict[str, np.ndarray]:
        if self.w is None:
            return {}
        return {"w": self.w.copy(), "b": np.array([self.b]), "counts": np.array([self.n_pos, self.n_neg]),
                **self.memory.state("mem_")}

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        if not state:
            return
        missing = {"w", "b", "counts", "mem_indptr"} - set(state)
        if missing:
            raise ValueError(f"{self.name}: saved state lacks {sorted(missing)}")
        self.w = np.asarray(state["w"], np.float64).copy()
        self.b = float(state["b"][0])
        self.n_pos, self.n_neg = (int(v) for v in state["counts"])
        self.memory.load(state, "mem_")


if "online-classifier" not in AGENTS:
    AGENTS.register("online-classifier", OnlineClassifierAgent,
                    "ACHE-style online link classifier over hashed link features (non-RL)")
