"""Grigoriadis & Paliouras' TD(λ) state-value crawler (SETN 2004; the Grigoriadis slides), through the fair interface.

What the slides specify, and how it is done here
------------------------------------------------
* **State = page, V(s) not Q(s, a).** A page is a vector of binary keyword attributes
  ("existence or not of a keyword"; they use 500). Keywords come from a "text analyser" for
  the domain; here: the topic words, the topic's category words, then the highest
  tf·idf terms of the seed pages (fetched at reset) — chosen once, at the first episode,
  and kept with the weights.
* **V by a small neural network** (``n_keywords → hidden tanh units → 1``, numpy), learned by
  **TD(λ) with eligibility traces on the weights**, reward **1/0** (relevant / not: here
  ``reward > 0`` of the env's reward scheme, the crawler's own judgement).
* **Links scored by a one-step look-ahead V of the page they lead to.** Evaluating the page a
  link leads to needs its text, i.e. a fetch — which this env counts as a step, like every
  fetch. So the look-ahead is done with real fetches (``mode="lookahead"``, the slides'
  procedure): the agent keeps a queue of *fetched* pages ordered by V(page); it pops the best
  one and fetches (= looks ahead into) its unvisited out-links one by one, each fetch being one
  budgeted env step; every fetched page is scored by V and queued; then the next best page is
  expanded. ``mode="inherit"`` re-ranks after every fetch instead: each frontier page carries the
  best V among the fetched pages linking to it ("links inherit their parent's score", as Han
  et al. 2018 §5 summarise [13]) and the best one is fetched next.
* Only *fetched* pages' text is ever read (``env.fetched_text(page)``, which refuses any page
  not fetched), plus the fetched page's own out-links (``env.fetched_outlinks(page)``). Unfetched pages are
  known only by id; the link texts are not used at all.

The TD transitions and the traces
---------------------------------
A fetch of page p reached from the fetched page q (the page being expanded, or the best-V
parent) is the transition q → p with reward r(p): ``δ = r + γ V(p) − V(q)``. A best-first crawl
branches, so a single running trace would mix unrelated paths; instead the trace of the *path*
that led to q is rebuilt on demand: ``e = Σ_k (γλ)^k ∇_θ V(a_k)`` over q = a₀ and its ancestors
a₁, a₂, … on the agent's own crawl tree (the page each page was reached from), truncated where
(γλ)^k < ``trace_cutoff``, with gradients at the current θ. This is exactly the accumulating
trace of an agent that walked that path (up to re-evaluating old gradients), then
``θ ← θ + α δ e``.

Content inputs (``inputs="content"``)
-------------------------------------
The keyword attributes are picked from the *first* episode's topic and seeds and kept with the weights,
so a network trained on some topics reads another topic's keywords on a new one. ``inputs="content"``
replaces them with a topic-relative description of the fetched page's content: ``sqrt(k) · (v ⊙ t)``
(the element-wise product of the page's unit text vector v, ``env.fetched_vectors``, and the unit topic
vector t, ``env.topic_vector``; its sum is the cosine) and the cosine ``v · t`` itself — k + 1 inputs
for k-dim word vectors. V then learns which *directions of meaning* shared with the topic predict
relevant pages ahead, and the weights transfer from training topics to held-out ones. Everything else
(network, traces, look-ahead, 0/1 reward) is unchanged; the default stays the slides' keywords.

How it differs from the Q-based crawlers (``lfa-*``, ``thesis-lfa``, ``tres``)
----------------------------------------------------------------------------
* it values *pages* (states) not (page, link) pairs: all out-links of a page share its value,
  link anchor/URL/context text is ignored; Q-crawlers score each link from link-text features
  before fetching it;
* its priorities are V of the *linking* page (the value of being there), learned from 0/1
  rewards with a non-linear network and λ-traces along crawl paths; Q-crawlers learn the
  value of following a specific link with one-step SARSA on hand-made relevance features;
* with ``mode="lookahead"`` it commits to fetching all unvisited out-links of the page it
  expands (breadth within a page), which is the slides' "follow all links in current page,
  evaluate the pages they lead to".
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from gym_crawl._arith import dot, log, matmul, row_dots, tanh
from gym_crawl.agents.base import Agent, Transition
from gym_crawl.agents.priority_queue import UpdatablePQ
from gym_crawl.pagemap import EMPTY, find, probe, rehash

__all__ = ["BestOffers", "TDLambdaAgent", "ValueNet", "choose_keywords"]

class ValueNet:
    """V(x) = v · tanh(W x + b) + c over binary inputs x (K,). Parameters are float64 arrays; products and tanh
    are :mod:`gym_crawl._arith`'s (float64 sums in a fixed order, fdlibm's tanh), so V and its gradient are the
    same bits on any CPU and thread count.

    Args:
        n_in: K inputs. hidden: H tanh units. rng: initial weights ~ N(0, init_scale²).
    """

    def __init__(self, n_in: int, hidden: int, rng: np.random.Generator, init_scale: float = 0.1):
        self.W = rng.normal(0.0, init_scale, (hidden, n_in))
        self.b = np.zeros(hidden)
        self.v = rng.normal(0.0, init_scale, hidden)
        self.c = np.zeros(1)

    def params(self) -> dict[str, np.ndarray]:
        return {"W": self.W, "b": self.b, "v": self.v, "c": self.c}

    def value(self, X: np.ndarray) -> np.ndarray:
        """(n,) V of rows of X (n, K)."""
        return row_dots(tanh(matmul(X, self.W.T) + self.b), self.v) + self.c[0]

    def weighted_grad(self, X: np.ndarray, coef: np.ndarray) -> dict[str, np.ndarray]:
        """Σ_k coef_k ∇_θ V(X_k): the gradient of V summed over rows with weights ``coef`` (n,)."""
        H = tanh(matmul(X, self.W.T) + self.b)             # (n, H)
        G = (1.0 - H * H) * self.v * coef[:, None]         # (n, H) = coef · ∂V/∂z
        return {"W": matmul(G.T, X), "b": G.sum(0), "v": matmul(coef[None, :], H)[0], "c": np.array([coef.sum()])}

    def step(self, grad: dict[str, np.ndarray], scale: float) -> None:
        for k, p in self.params().items():
            p += scale * grad[k]


def _fetched_bag(env: Any, page: int) -> tuple[np.ndarray, np.ndarray]:
    """``(word ids, counts)`` of a *fetched* page's text through ``env.fetched_text`` (raises if the
    page was not fetched: no peeking)."""
    try:
        return env.fetched_text(int(page))
    except ValueError:
        raise RuntimeError(f"td-lambda tried to read the text of page {page}, which was not fetched") from None


def _fetched_terms(env: Any, page: int) -> np.ndarray:
    """Word ids of a *fetched* page's text (raises if the page was not fetched: no peeking)."""
    return np.asarray(_fetched_bag(env, page)[0])


def choose_keywords(env: Any, pages: np.ndarray, k: int) -> list[str]:
    """Topic words, then category words, then the top tf·idf terms of fetched ``pages`` (at most k)."""
    topic = env.current_topic
    words: list[str] = []
    for w in list(topic.words) + list(topic.categories):
        if env.word_id(w) >= 0 and w not in words:
            words.append(w)
    score = np.zeros(env.n_words)
    for p in np.asarray(pages, dtype=np.int64).tolist():
        t, cnt = _fetched_bag(env, p)
        cnt = np.asarray(cnt).astype(np.float64)
        np.add.at(score, np.asarray(t), cnt / max(cnt.sum(), 1.0))
    score *= np.asarray(env.idf(), dtype=np.float64)
    for wid in np.argsort(-score, kind="stable").tolist():
        if len(words) >= k or score[wid] <= 0:
            break
        w = env.word(wid)
        if w not in words:
            words.append(w)
    return words[:k]


@njit(cache=True, nogil=True)
def _offer(keys, slots, page_of, vcol, pcol, cnt, pages, v, parent, better):
    """``better[j]`` = ``v`` > the best value offered to ``pages[j]`` so far (-inf for a page not offered: it is
    added, room reserved by the caller); then the pages offered better take ``v`` and ``parent``."""
    rows = np.empty(len(pages), np.int64)
    for j in range(len(pages)):
        h = probe(keys, pages[j])
        if keys[h] == EMPTY:
            r = cnt[0]
            keys[h] = pages[j]
            slots[h] = r
            page_of[r] = pages[j]
            vcol[r] = -np.inf
            pcol[r] = -1
            cnt[0] = r + 1
            rows[j] = r
        else:
            rows[j] = slots[h]
    for j in range(len(pages)):
        better[j] = v > vcol[rows[j]]
    for j in range(len(pages)):
        if better[j]:
            vcol[rows[j]] = v
            pcol[rows[j]] = parent


@njit(cache=True, nogil=True)
def _values(keys, slots, vcol, pages):
    out = np.full(len(pages), -np.inf)
    for j in range(len(pages)):
        r = find(keys, slots, pages[j])
        if r >= 0:
            out[j] = vcol[r]
    return out


@njit(cache=True, nogil=True)
def _parent(keys, slots, pcol, page):
    r = find(keys, slots, page)
    return pcol[r] if r >= 0 else np.int64(-1)


class BestOffers:
    """Each out-link's best value offered by a fetched parent, and that parent, keyed by the pages offered (the page
    map of :mod:`gym_crawl.pagemap`; columns doubling): a page never offered reads value -inf, parent -1."""

    def __init__(self) -> None:
        self.keys = np.full(128, EMPTY, np.int32)
        self.slots = np.zeros(128, np.int32)
        self.page_of = np.zeros(64, np.int32)
        self.v = np.zeros(64, np.float64)
        self.par = np.zeros(64, np.int64)
        self._cnt = np.zeros(1, np.int64)

    @property
    def n(self) -> int:
        """Pages offered."""
        return int(self._cnt[0])

    @property
    def nbytes(self) -> int:
        """Bytes of the map and the columns at their capacity."""
        return int(sum(a.nbytes for a in (self.keys, self.slots, self.page_of, self.v, self.par)))

    def offer(self, pages: np.ndarray, v: float, parent: int) -> np.ndarray:
        """Offer value ``v`` from ``parent`` to ``pages``; returns the bool mask of those it is better for (they take
        it: ``v`` > their best so far)."""
        pages = np.asarray(pages, np.int64)
        n, k = self.n, len(pages)
        if n + k > len(self.page_of):
            size = max(n + k, 2 * len(self.page_of))
            for name in ("page_of", "v", "par"):
                a = getattr(self, name)
                grown = np.zeros(size, a.dtype)
                grown[:n] = a[:n]
                setattr(self, name, grown)
        if 2 * (n + k) > len(self.keys):
            size = len(self.keys)
            while 2 * (n + k) > size:
                size *= 2
            self.keys, self.slots = np.full(size, EMPTY, np.int32), np.zeros(size, np.int32)
            rehash(self.page_of, n, self.keys, self.slots)
        better = np.empty(k, np.bool_)
        _offer(self.keys, self.slots, self.page_of, self.v, self.par, self._cnt, pages, float(v), int(parent), better)
        return better

    def values(self, pages: np.ndarray) -> np.ndarray:
        """The best value offered to each of ``pages`` (-inf: none)."""
        return _values(self.keys, self.slots, self.v, np.asarray(pages, np.int64))

    def parent(self, page: int) -> int:
        """The parent that offered ``page`` its best value (-1: none)."""
        return int(_parent(self.keys, self.slots, self.par, int(page)))


class TDLambdaAgent(Agent):
    """TD(λ) state-value crawler (see module docstring).

    Args:
        n_keywords: K binary keyword attributes (the slides use 500; seed pages limit it).
        inputs: ``"keywords"`` (the slides' binary keyword attributes, default) or ``"content"``
            (topic-relative page content, k + 1 inputs; see the module docstring).
        hidden: tanh units of the value network.
        alpha: step size. gamma: discount. lam: trace decay λ.
        epsilon: probability of fetching a uniformly random frontier page instead.
        mode: ``"lookahead"`` (expand the best fetched page's out-links) or ``"inherit"``.
        trace_cutoff: truncate the path trace where (γλ)^k falls below this.
        seed: seeds the initial network weights.
    """

    name = "td-lambda"
    action_kind = "page"
    needs_observation = False  # acts by page id through frontier_pages/fetched_text/fetched_outlinks only
    env_defaults: dict[str, Any] = {"features": "han2018", "reward": "han2018"}

    def __init__(self, n_keywords: int = 200, hidden: int = 16, alpha: float = 0.02, gamma: float = 0.7,
                 lam: float = 0.7, epsilon: float = 0.05, mode: str = "lookahead", trace_cutoff: float = 1e-3,
                 seed: int = 0, inputs: str = "keywords", **config: Any):
        if mode not in ("lookahead", "inherit"):
            raise ValueError(f"mode must be 'lookahead' or 'inherit', got {mode!r}")
        if inputs not in ("keywords", "content"):
            raise ValueError(f"inputs must be 'keywords' or 'content', got {inputs!r}")
        if not 0 <= lam <= 1 or not 0 <= gamma < 1:
            raise ValueError(f"need 0 <= lam <= 1 and 0 <= gamma < 1, got lam={lam}, gamma={gamma}")
        super().__init__(n_keywords=n_keywords, hidden=hidden, alpha=alpha, gamma=gamma, lam=lam, epsilon=epsilon,
                         mode=mode, trace_cutoff=trace_cutoff, seed=seed,
                         **({"inputs": inputs} if inputs != "keywords" else {}), **config)
        self.inputs = inputs
        self.n_keywords, self.hidden = int(n_keywords), int(hidden)
        self.alpha, self.gamma, self.lam, self.epsilon = float(alpha), float(gamma), float(lam), float(epsilon)
        self.mode, self.trace_cutoff, self.seed = mode, float(trace_cutoff), int(seed)
        self.keywords: list[str] | None = None
        self.net: ValueNet | None = None
        self.updates = 0
        self._kw_index: np.ndarray | None = None
        self._topic_vec: np.ndarray | None = None
        self._kw_env: Any = None
        gl = self.gamma * self.lam
        if gl <= 0:
            self._depth = 1
        else:  # smallest k with (γλ)^k < cutoff, at most 64 ancestors
            self._depth = min(64, max(1, int(np.ceil(log(self.trace_cutoff) / log(gl)))))

    # ------------------------------------------------------------ features
    def _keyword_vector(self, page: int) -> np.ndarray:
        if self.inputs == "content":
            v = np.asarray(self.env.fetched_vectors(np.array([page]))[0], np.float64)
            assert self._topic_vec is not None
            x = np.empty(len(v) + 1, np.float64)
            x[:-1] = np.sqrt(len(v)) * v * self._topic_vec
            x[-1] = dot(v, self._topic_vec)
            return x
        assert self._kw_index is not None
        ks = self._kw_index[_fetched_terms(self.env, page)]
        x = np.zeros(len(self.keywords or ()), np.float64)
        x[ks[ks >= 0]] = 1.0
        return x

    def _register(self, page: int, parent: int) -> float:
        """Store the fetched page's keyword row and path parent; return V(page)."""
        assert self.net is not None
        if self._n_rows == len(self._X):
            self._X = np.concatenate([self._X, np.zeros_like(self._X)])
        x = self._keyword_vector(page)
        self._X[self._n_rows] = x
        self._row[int(page)] = self._n_rows
        self._n_rows += 1
        self._parent[int(page)] = int(parent)
        return float(self.net.value(x[None])[0])

    def _children(self, page: int) -> np.ndarray:
        """Unvisited out-links of a fetched page (its own links: what a crawler parsed from it)."""
        dst = np.asarray(self.env.fetched_outlinks(int(page)), dtype=np.int64)
        if len(dst) == 0:
            return dst
        dst = np.unique(dst)
        return dst[np.asarray(self.env.is_frontier(dst), bool)]

    def _offer(self, page: int, v: float, children: np.ndarray) -> None:
        """Record ``page`` (value v) as a parent of its unvisited ``children``."""
        if len(children):
            ch = children[self._best.offer(children, v, page)]
            if self.mode == "inherit" and len(ch):
                assert self._pq is not None
                self._pq.push_many(ch, np.full(len(ch), v), self.rng.random(len(ch)))
        if self.mode == "lookahead":
            assert self._pages is not None
            self._pages.push(page, v, float(self.rng.random()))

    def _best_values(self, pages: np.ndarray) -> np.ndarray:
        """The best offered parent value of each of ``pages`` (-inf: none offered)."""
        return self._best.values(np.asarray(pages, np.int64))

    def _best_parent(self, page: int) -> int:
        """The page that offered ``page`` its best value (-1: none)."""
        return self._best.parent(int(page))

    # ------------------------------------------------------------ episodes
    def begin_episode(self, env: Any, rng: np.random.Generator) -> None:
        """Choose the keywords (first episode), build the network, and queue the seed pages."""
        super().begin_episode(env, rng)
        seeds = np.asarray(env.fetched_pages(), dtype=np.int64)
        if self.inputs == "content":
            self._topic_vec = np.asarray(env.topic_vector(), np.float64)
            if self.keywords is None:  # input names: k products with the topic vector, then the cosine
                self.keywords = [f"page_x_topic{i}" for i in range(len(self._topic_vec))] + ["cos_page_topic"]
            if len(self.keywords) != len(self._topic_vec) + 1:
                raise ValueError(f"td-lambda(inputs='content'): the network has {len(self.keywords)} inputs, the env's "
                                 f"text model gives {len(self._topic_vec) + 1} (k + 1)")
        elif self.keywords is None:
            self.keywords = choose_keywords(env, seeds, self.n_keywords)
        if self.net is None:
            self.net = ValueNet(len(self.keywords), self.hidden, np.random.default_rng(self.seed))
        # keyword index of this env's vocabulary (built once per env)
        if self.inputs != "content" and self._kw_env is not env:
            idx = np.full(env.n_words, -1, np.int64)
            for i, w in enumerate(self.keywords):
                wid = env.word_id(w)
                if wid >= 0:
                    idx[wid] = i
            self._kw_index, self._kw_env = idx, env
        n = env.n_pages
        self._X = np.zeros((256, len(self.keywords)), np.float64)
        self._n_rows = 0
        # per page, keyed by the pages met (nothing as long as the web): the fetched pages' rows of _X and path
        # parents, and the best value a fetched parent offered each out-link, with that parent
        self._row: dict[int, int] = {}
        self._parent: dict[int, int] = {}
        self._best = BestOffers()
        self._pq = UpdatablePQ(n) if self.mode == "inherit" else None
        self._pages = UpdatablePQ(n) if self.mode == "lookahead" else None
        self._expanding: list[int] = []
        self._expand_parent = -1
        self._pending: tuple[int, int] | None = None
        for s in seeds.tolist():
            v = self._register(s, -1)
            self._offer(s, v, self._children(s))

    # ------------------------------------------------------------- acting
    def act(self, obs: Any, info: dict) -> int:
        """Next page: ε-random, else the look-ahead expansion (or the best inherited score)."""
        env = self.env
        if self.epsilon > 0 and self.rng.random() < self.epsilon:
            F = env.frontier_pages()
            page = int(F[int(self.rng.integers(len(F)))])
            self._pending = (page, self._best_parent(page))
            return page
        if self.mode == "inherit":
            assert self._pq is not None
            while self._pq:
                page = self._pq.pop_max()[0]
                if env.is_frontier(page):
                    self._pending = (page, self._best_parent(page))
                    return page
        else:
            assert self._pages is not None
            while True:
                while self._expanding:
                    page = self._expanding.pop()
                    if env.is_frontier(page):
                        self._pending = (page, self._expand_parent)
                        return page
                if not self._pages:
                    break
                q = self._pages.pop_max()[0]
                kids = self._children(q)
                self._expanding = kids[self.rng.permutation(len(kids))].tolist()
                self._expand_parent = q
        # every known parent is exhausted but the env still has frontier pages (e.g. found by
        # another route): fall back to the best inherited score over the whole frontier
        F = np.asarray(env.frontier_pages(), dtype=np.int64)
        page = int(F[int(np.argmax(self._best_values(F)))])
        self._pending = (page, self._best_parent(page))
        return page

    # ------------------------------------------------------------ learning
    def _path_rows(self, q: int) -> tuple[np.ndarray, np.ndarray]:
        rows, coef = [], []
        c, k = q, 0
        gl = self.gamma * self.lam
        while c >= 0 and k < self._depth:
            rows.append(self._row[c])
            coef.append(gl ** k)
            c = self._parent[c]
            k += 1
        return np.asarray(rows, np.int64), np.asarray(coef, np.float64)

    def observe(self, transition: Transition) -> None:
        """TD(λ) update for the transition parent → fetched page, then queue the fetched page."""
        info = transition.info
        if info.get("fetched_page", -1) < 0 or self._pending is None:
            return
        page, parent = self._pending
        self._pending = None
        assert self.net is not None
        r = 1.0 if transition.reward > 0 else 0.0
        v_new = self._register(page, parent)
        if parent >= 0:
            xq = self._X[self._row[parent]]
            v_q = float(self.net.value(xq[None])[0])
            delta = r + self.gamma * v_new - v_q
            rows, coef = self._path_rows(parent)
            grad = self.net.weighted_grad(self._X[rows], coef)
            self.net.step(grad, self.alpha * delta)
            self.updates += 1
            v_new = float(self.net.value(self._X[self._row[page]][None])[0])
        upd = np.asarray(self.env.frontier_changes().updated, dtype=np.int64)
        if len(upd):
            upd = upd[np.asarray(self.env.is_frontier(upd), bool)]
        self._offer(page, v_new, upd)

    # --------------------------------------------------------- persistence
    def state_dict(self) -> dict[str, np.ndarray]:
        """Network weights ``W`` (H, K), ``b`` (H,), ``v`` (H,), ``c`` (1,) and the keywords (unicode)."""
        if self.net is None or self.keywords is None:
            return {}
        out = {k: v.copy() for k, v in self.net.params().items()}
        out["keywords"] = np.array(self.keywords, dtype=str)
        out["updates"] = np.array(self.updates, np.int64)
        return out

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        if not state:
            return
        need = {"W", "b", "v", "c", "keywords"}
        if not need <= set(state) or set(state) - need - {"updates"}:
            raise ValueError(f"td-lambda: unexpected state keys {sorted(state)} (need {sorted(need)})")
        kw = [str(s) for s in np.asarray(state["keywords"]).tolist()]
        content = bool(kw) and kw[-1] == "cos_page_topic"
        if content != (self.inputs == "content"):
            raise ValueError("td-lambda: these weights were trained with "
                             f"inputs={'content' if content else 'keywords'!r}, "
                             f"this agent has inputs={self.inputs!r}")
        W = np.asarray(state["W"], np.float64)
        if W.shape[1] != len(kw) or W.shape[0] != len(state["b"]) or W.shape[0] != len(state["v"]):
            raise ValueError(f"td-lambda: inconsistent shapes W{W.shape}, {len(kw)} keywords")
        net = ValueNet(len(kw), W.shape[0], np.random.default_rng(0))
        net.W, net.b = W.copy(), np.asarray(state["b"], np.float64).copy()
        net.v, net.c = np.asarray(state["v"], np.float64).copy(), np.asarray(state["c"], np.float64).reshape(1).copy()
        self.net, self.keywords, self.hidden = net, kw, W.shape[0]
        self._kw_env = None
        self.updates = int(state.get("updates", 0))

    def values(self, pages: np.ndarray) -> np.ndarray:
        """(len(pages),) V of *fetched* pages with the current network (for analyses)."""
        assert self.net is not None
        X = np.stack([self._keyword_vector(int(p)) for p in np.asarray(pages).tolist()])
        return self.net.value(X)
