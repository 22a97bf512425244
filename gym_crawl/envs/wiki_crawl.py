"""``WikiCrawlEnv``: the focused-crawling MDP as a Gymnasium environment (registered as ``WikiCrawl-v0``).

Episode: reset fetches the seed pages (the topic's main page by default) and
puts their out-links in the frontier; every step fetches one frontier page;
the episode is *terminated* when the frontier is empty and *truncated* at
``max_steps`` env steps (default 1000; enforced by the env itself so that
:meth:`step_page` obeys it too; ``gym.make(..., max_episode_steps=N)`` adds a
standard ``TimeLimit`` on top).

Two ways to act on the same MDP (DESIGN.md §4):

1. **Discrete(K) over candidate slots** (``env.step(i)``, SB3-compatible): a
   reducer proposes up to K frontier pages; the observation is fixed-shape::

       {"candidates": Box(-1, 1, (K, d), float32),  # x(s, a) of each slot, zero rows when masked
        "mask":       MultiBinary(K),                 # 1 = slot holds a candidate
        "state":      Box(-1, 1, (6,), float32)}      # crawl summary, see STATE_NAMES

   ``env.action_masks()`` (sb3-contrib convention) and ``info["action_mask"]``
   give the mask. **A masked slot** (SB3's checker and DQN's exploration sample
   them) fetches nothing: the step is spent, the reward is
   ``invalid_action_penalty`` (default ``-0.1 × max reward``), the observation is
   unchanged and ``info["invalid_action"]`` is True. An action outside
   ``Discrete(K)`` raises ``ValueError`` naming the valid range.
2. **Custom agents** use the unwrapped env: :meth:`frontier_pages` (all of it,
   read-only view), :meth:`features_of` (x(s, a) of any frontier pages),
   :meth:`link_scores`, :meth:`argmax_frontier` (exact argmax of w·x over the
   whole frontier, one vectorized pass) and :meth:`step_page` (fetch a given page).

Info keys (present after ``reset`` and every ``step``):

=====================  =====================================================================
``pages_fetched``      pages fetched so far, seeds included
``relevant_found``     fetched pages that are relevant (topic label if the topic has one,
                       else positive reward)
``harvest_rate``       relevant_found / pages_fetched
``relevant_domains``   distinct domains with at least one relevant fetched page
``reward_sum``         sum of rewards this episode (seeds' rewards included)
``frontier_size``      discovered, unfetched pages
``candidate_ids``      (K,) int64 page ids of the slots, -1 where masked
``action_mask``        (K,) bool, same as ``action_masks()``
``fetched_page``       page id fetched by this step (-1 on reset and invalid steps)
``relevant``           whether the fetched page is relevant (False when none fetched)
``invalid_action``     True when the step chose a masked slot
``new_pages``          int32 page ids added to the frontier by this step
``updated_pages``      int32 frontier pages whose parent aggregates changed this step (new ones
                       included): with a ``local`` feature set, the only rows of x(s, a) that changed
``removed_pages``      int32 frontier pages dropped this step because their domain hit the cap
``steps``              env steps taken this episode
``topic``              topic name
=====================  =====================================================================
"""
from __future__ import annotations

from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gym_crawl.corpus import Corpus, load_corpus
from gym_crawl.crawl.state import FRONTIER, UNSEEN, VISITED, CrawlState, FetchResult
from gym_crawl.features.sets import FeatureSet, get_feature_set
from gym_crawl.reducers.base import Reducer, get_reducer
from gym_crawl.relevance.rewards import RewardScheme, get_reward_scheme
from gym_crawl.relevance.scorer import TopicScorer
from gym_crawl.relevance.topic import Topic, resolve_topic, seed_pages
from gym_crawl.text.model import TextModel, get_text_model

__all__ = ["WikiCrawlEnv", "STATE_NAMES"]

STATE_NAMES = ("budget_used", "harvest_rate", "log_frontier", "last_reward", "relevant_domain_fraction",
               "candidate_fraction")


def _parse_domain_cap(spec: int | str | None) -> tuple[int, int] | None:
    """``None``/"inf" → None; int b → (b, b); "A-B" → (A, B). Raises ValueError naming the value."""
    if spec is None or (isinstance(spec, str) and spec.strip().lower() in ("inf", "none", "∞")):
        return None
    try:
        if isinstance(spec, str) and "-" in spec:
            a, b = (int(x) for x in spec.split("-"))
        elif isinstance(spec, str) and "_" in spec:
            a, b = (int(x) for x in spec.split("_"))
        else:
            a = b = int(spec)
    except ValueError:
        raise ValueError(f"domain_cap {spec!r}: expected None, 'inf', an integer or 'A-B' (e.g. '5-2')") from None
    if a < 1 or b < 1 or b > a:
        raise ValueError(f"domain_cap {spec!r}: caps must be >= 1 and an adaptive cap must decrease (A >= B)")
    return a, b


class WikiCrawlEnv(gym.Env):
    """Focused crawling over a corpus. See the module docstring for spaces, info and interfaces.

    Args:
        corpus: corpus spec for :func:`gym_crawl.corpus.load_corpus` (default: the embedded synthetic web).
        topic: topic spec for :func:`gym_crawl.relevance.resolve_topic` (default: the corpus' first topic).
        seeds: seed page titles or ids (default: the topic's seeds / main page).
        max_steps: truncate after this many env steps (default 1000; ``None``: never, or rely on
            ``gym.make(..., max_episode_steps=N)``). Enforced inside the env, so the custom-agent
            interface (:meth:`step_page`) is truncated too.
        reward: ``"han2018"``, ``"thesis"``, ``"binary"``, ``"labels"``, a RewardScheme or a callable.
        features: feature-set name (``"combined"``, ``"han2018"``, ``"han2018-continuous"``, ``"tres"``)
            or a FeatureSet.
        reducer: ``"topk"``, ``"outlinks"``, ``"random"``, ``"full"``, ``"tree"`` (when installed) or a Reducer.
        max_candidates: K, the number of candidate slots.
        n_categories: category slots C shared by all topics of this env.
        invalid_action_penalty: reward of a masked-slot step (default ``-0.1 × max reward``).
        text: keyword arguments for :func:`gym_crawl.text.get_text_model` (``idf_fraction``, ``dim``,
            ``seed``, ``vectors_path``), or a ready :class:`TextModel`.
        domain_cap: TRES's b, the maximum pages fetched per domain: ``None``/``"inf"`` (no cap), an int,
            or ``"A-B"`` (adaptive: the cap falls linearly from A to B over the episode budget; TRES's
            ``5_2``). Pages of a capped domain leave the frontier; a crawl whose frontier empties this
            way terminates. How a corpus defines domains is in ``corpus.meta["domain_definition"]``.
        corpus_kwargs: extra keyword arguments for the corpus loader.
        render_mode: ``None`` or ``"ansi"``.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(self, corpus: Any = None, topic: Any = None, seeds: Sequence[str | int] | None = None,
                 max_steps: int | None = 1000, reward: Any = "han2018", features: Any = "combined",
                 reducer: Any = "topk", max_candidates: int = 64, n_categories: int = 4,
                 invalid_action_penalty: float | None = None, text: dict | TextModel | None = None,
                 corpus_kwargs: dict | None = None, render_mode: str | None = None, beta: float = 0.4,
                 domain_cap: int | str | None = None):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r} not supported; use None or 'ansi'")
        if max_candidates < 1:
            raise ValueError(f"max_candidates must be >= 1, got {max_candidates}")
        if max_steps is not None and max_steps < 1:
            raise ValueError(f"max_steps must be >= 1 or None, got {max_steps}")
        self.render_mode = render_mode
        self.domain_cap_spec = domain_cap
        self._cap_schedule = _parse_domain_cap(domain_cap)
        self.corpus: Corpus = load_corpus(corpus, **(corpus_kwargs or {}))
        self.text: TextModel = text if isinstance(text, TextModel) else get_text_model(self.corpus, **(text or {}))
        self.n_categories = n_categories
        self.features: FeatureSet = get_feature_set(features, n_categories)
        self.reducer: Reducer = get_reducer(reducer)
        self._reward_spec = reward
        self.K = int(max_candidates)
        self.max_steps = max_steps
        self._default_topic = resolve_topic(topic, self.corpus)
        self._default_seeds = list(seeds) if seeds else None
        self._penalty_arg = invalid_action_penalty
        self.state = CrawlState(self.corpus, n_categories=n_categories, beta=beta)
        self._scorers: dict[Topic, TopicScorer] = {}
        d = self.features.dim
        self.observation_space = spaces.Dict({
            "candidates": spaces.Box(-1.0, 1.0, (self.K, d), np.float32),
            "mask": spaces.MultiBinary(self.K),
            "state": spaces.Box(-1.0, 1.0, (len(STATE_NAMES),), np.float32),
        })
        self.action_space = spaces.Discrete(self.K)
        self._configure(self._default_topic)  # validates topic/categories/reward early
        self._cand = np.zeros(0, np.int32)
        self._obs: dict[str, np.ndarray] | None = None
        self._t = 0
        self._last_reward = 0.0
        self._last_page = -1
        self._stale = False

    # ---------------------------------------------------------------- setup
    def _configure(self, topic: Topic) -> None:
        if topic not in self._scorers:
            self._scorers[topic] = TopicScorer(self.text, topic, self.n_categories)
        self.topic = topic
        self.scorer = self._scorers[topic]
        self.scheme: RewardScheme = get_reward_scheme(self._reward_spec, labelled=bool(topic.label))
        if self.scheme.needs_label and not topic.label:
            raise ValueError(f"reward {self.scheme.name!r} needs a topic with a label; topic {topic.name!r} has none")
        self.invalid_action_penalty = (float(self._penalty_arg) if self._penalty_arg is not None
                                       else -0.1 * float(self.scheme.max_reward))

    @property
    def budget(self) -> int | None:
        """Env steps per episode: the smaller of ``max_steps`` and the spec's ``max_episode_steps``
        (``None`` when neither is set). Both interfaces (``step`` and ``step_page``) truncate at it."""
        limits = [x for x in (self.max_steps, self.spec.max_episode_steps if self.spec is not None else None)
                  if x is not None]
        return min(limits) if limits else None

    # ---------------------------------------------------------------- reset
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """Start a crawl. ``options`` may hold ``topic`` and ``seeds`` for this episode."""
        super().reset(seed=seed)
        options = options or {}
        topic = resolve_topic(options["topic"], self.corpus) if options.get("topic") is not None else self._default_topic
        self._configure(topic)
        seeds = options.get("seeds") or self._default_seeds
        seed_ids = seed_pages(topic, self.corpus, seeds)
        st = self.state
        if self._cap_schedule is not None and self._cap_schedule[0] != self._cap_schedule[1] and not self.budget:
            raise ValueError(f"adaptive domain_cap {self.domain_cap_spec!r} needs a step budget (max_steps)")
        st.reset(self.scorer, self.scheme, self._cap_schedule[0] if self._cap_schedule else None)
        self.reducer.reset(st, self.features, self.np_random)
        self._t = 0
        self._last_reward = 0.0
        self._last_page = -1
        new, upd = [], []
        for p in seed_ids.tolist():
            if st.status[p] == VISITED:
                continue
            res = st.fetch(p, count_step=False)
            self.reducer.on_fetch(res, None)
            new.append(res.new_pages)
            upd.append(res.updated_pages)
        if st.fr_size == 0:
            titles = [self.corpus.titles[int(p)] for p in seed_ids]
            raise ValueError(f"seed pages {titles} have no out-links to unfetched pages: the frontier is empty")
        self._propose()
        info = self._info(-1, False, False, np.concatenate(new), np.unique(np.concatenate(upd)))
        return self._obs_copy(), info

    # ----------------------------------------------------------------- step
    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        """Fetch the page in candidate slot ``action`` (see module docstring for masked slots)."""
        a = self._check_action(action)
        if self._obs is None:
            raise RuntimeError("call reset() before step()")
        self._ensure_observation()
        if a >= len(self._cand):
            return self._spend_invalid()
        return self._do_fetch(int(self._cand[a]), self._obs["candidates"][a].copy())

    def step_page(self, page: int, observe: bool = True) -> tuple[dict | None, float, bool, bool, dict]:
        """Fetch frontier page ``page`` directly (custom-agent interface). Raises ``ValueError`` when
        ``page`` is not in the frontier.

        ``observe=False`` skips building the K-slot observation (returned as ``None``) for agents that
        act through this interface only; it is rebuilt on demand by the next :meth:`step`,
        :meth:`action_masks` or :meth:`render`. ``info`` is complete either way (its ``candidate_ids``
        and ``action_mask`` are then empty).
        """
        if self._obs is None:
            raise RuntimeError("call reset() before step_page()")
        p = int(page)
        if not 0 <= p < self.corpus.n_pages or self.state.status[p] != FRONTIER:
            why = ("out of range" if not 0 <= p < self.corpus.n_pages else
                   {UNSEEN: "not discovered yet", VISITED: "already fetched"}[int(self.state.status[p])])
            raise ValueError(f"page {page} cannot be fetched ({why}): valid pages are the {self.state.fr_size} "
                             f"frontier pages, see env.unwrapped.frontier_pages()")
        return self._do_fetch(p, observe=observe)

    def _check_action(self, action: Any) -> int:
        try:
            a = int(np.asarray(action).reshape(()))
            ok = float(np.asarray(action).reshape(())) == a
        except (TypeError, ValueError):
            ok = False
        if not ok or not 0 <= a < self.K:
            raise ValueError(f"action {action!r} is outside the action space Discrete({self.K}): "
                             f"valid actions are integers 0..{self.K - 1}")
        return a

    def _spend_invalid(self) -> tuple[dict, float, bool, bool, dict]:
        self._t += 1
        r = self.invalid_action_penalty
        self._last_reward = r
        self._obs["state"][:] = self._state_vec()  # type: ignore[index]
        trunc = self.budget is not None and self._t >= self.budget
        return self._obs_copy(), r, False, trunc, self._info(-1, False, True, np.zeros(0, np.int32),
                                                             np.zeros(0, np.int32))

    def _ensure_observation(self) -> None:
        if self._stale:
            self._propose()

    def _do_fetch(self, page: int, x: np.ndarray | None = None,
                  observe: bool = True) -> tuple[dict | None, float, bool, bool, dict]:
        if x is None and self.reducer.needs_experience:  # the row of the chosen page: the reducer's sample
            x = np.clip(self.features.compute(self.state, np.array([page]))[0], -1.0, 1.0)
        res: FetchResult = self.state.fetch(page)
        self._t += 1
        dropped = self._apply_cap_schedule()  # after the fetch, so proposed candidates stay fetchable
        if len(dropped):
            res.removed_pages = np.concatenate([res.removed_pages, dropped])
        self.reducer.on_fetch(res, x)
        self._last_reward = res.reward
        self._last_page = page
        terminated = self.state.fr_size == 0
        truncated = (not terminated) and self.budget is not None and self._t >= self.budget
        if observe:
            self._propose()
            obs: dict | None = self._obs_copy()
        else:
            self._stale = True
            self._cand = np.zeros(0, np.int32)
            obs = None
        return obs, float(res.reward), terminated, truncated, \
            self._info(page, res.eval_relevant, False, res.new_pages, res.updated_pages, res.removed_pages)

    def _apply_cap_schedule(self) -> np.ndarray:
        """Lower an adaptive domain cap to its value after ``self._t`` steps (evaluated after each
        fetch); returns the frontier pages it dropped."""
        sch = self._cap_schedule
        if sch is None or sch[0] == sch[1]:
            return np.zeros(0, np.int32)
        hi, lo = sch
        cap = int(round(hi - (hi - lo) * min(1.0, self._t / float(self.budget))))  # type: ignore[arg-type]
        if cap == self.state.domain_cap:
            return np.zeros(0, np.int32)
        return self.state.set_domain_cap(cap)

    # ---------------------------------------------------------- observation
    def _propose(self) -> None:
        self._stale = False
        cand = self.reducer.propose(self.K, self.np_random) if self.state.fr_size else np.zeros(0, np.int32)
        if len(cand) > self.K:  # only the "full" reducer proposes more than K: show the best K by link text
            top = np.argsort(-self.state.link_rel[cand], kind="stable")[: self.K]
            self._all_cand = cand
            cand = cand[np.sort(top)]
        else:
            self._all_cand = cand
        self._cand = cand.astype(np.int32)
        n = len(cand)
        feats = np.zeros((self.K, self.features.dim), np.float32)
        if n:
            feats[:n] = np.clip(self.features.compute(self.state, cand), -1.0, 1.0)
        mask = np.zeros(self.K, np.int8)
        mask[:n] = 1
        self._obs = {"candidates": feats, "mask": mask, "state": self._state_vec()}

    def _state_vec(self) -> np.ndarray:
        st = self.state
        b = self.budget
        nd = max(1, len(self.corpus.domains))
        return np.clip(np.array([
            (self._t / b) if b else 0.0,
            st.harvest_rate,
            np.log1p(st.fr_size) / np.log1p(max(2, self.corpus.n_pages)),
            self._last_reward / max(abs(self.scheme.max_reward), 1e-9),
            st.relevant_domains / nd,
            len(self._cand) / self.K,
        ], np.float32), -1.0, 1.0)

    def _obs_copy(self) -> dict[str, np.ndarray]:
        assert self._obs is not None
        return {k: v.copy() for k, v in self._obs.items()}

    def _info(self, page: int, relevant: bool, invalid: bool, new_pages: np.ndarray,
              updated: np.ndarray | None = None, removed: np.ndarray | None = None) -> dict[str, Any]:
        if updated is None:
            updated = new_pages
        st = self.state
        ids = np.full(self.K, -1, np.int64)
        ids[: len(self._cand)] = self._cand
        return {
            "pages_fetched": st.n_fetched, "relevant_found": st.relevant_found, "harvest_rate": st.harvest_rate,
            "relevant_domains": st.relevant_domains, "reward_sum": st.reward_sum, "frontier_size": st.fr_size,
            "candidate_ids": ids, "action_mask": ids >= 0, "fetched_page": page, "relevant": bool(relevant),
            "invalid_action": invalid, "new_pages": np.asarray(new_pages, np.int32),
            "updated_pages": np.asarray(updated, np.int32),
            "removed_pages": np.asarray(removed if removed is not None else (), np.int32), "steps": self._t,
            "topic": self.topic.name,
        }

    def action_masks(self) -> np.ndarray:
        """(K,) bool mask of valid slots (sb3-contrib ``MaskablePPO`` convention)."""
        self._ensure_observation()
        m = np.zeros(self.K, bool)
        m[: len(self._cand)] = True
        return m

    # ------------------------------------------------------ custom agents
    def frontier_pages(self) -> np.ndarray:
        """(F,) int32 read-only *live* view of all frontier pages (no copy; the next step changes
        it — copy it to keep it)."""
        return self.state.frontier

    def is_frontier(self, pages: np.ndarray | int) -> np.ndarray | bool:
        """Whether page(s) are currently in the frontier (discovered, unfetched)."""
        return self.state.status[pages] == FRONTIER

    def hidden_relevance(self) -> np.ndarray:
        """(n_pages,) bool ground-truth relevance of *every* page (label, else positive reward).

        Hidden information: for oracles and analyses only (agents using it set
        ``uses_hidden_information``); never part of observations or features.
        """
        if self.topic.label:
            return self.scorer.label_mask.copy()
        _, rel = self.scheme(self.scorer.all_page_scores())
        return rel

    def candidate_pages(self) -> np.ndarray:
        """Pages proposed by the reducer this step (for ``reducer="full"``: the whole frontier)."""
        self._ensure_observation()
        return self._all_cand

    def features_of(self, pages: np.ndarray) -> np.ndarray:
        """(len(pages), d) float32 x(s, a) of frontier ``pages`` (unclipped)."""
        pages = np.asarray(pages, dtype=np.int64)
        if len(pages) and not np.all(self.state.status[pages] == FRONTIER):
            raise ValueError("features_of: all pages must be frontier pages")
        return self.features.compute(self.state, pages)

    def link_scores(self, pages: np.ndarray) -> np.ndarray:
        """(len(pages),) topic relevance of the best discovering link's text (the no-learning priority)."""
        return self.state.link_rel[np.asarray(pages, dtype=np.int64)].copy()

    def argmax_frontier(self, w: np.ndarray) -> int:
        """Frontier page maximizing ``w · x(s, a)`` over the *whole* frontier (ties: lowest slot).
        One vectorized O(F × d) pass — Han's synchronous scoring."""
        F = self.frontier_pages()
        if len(F) == 0:
            raise ValueError("the frontier is empty")
        return int(F[int(np.argmax(self.features.compute(self.state, F) @ np.asarray(w, np.float32)))])

    # ---------------------------------------------------------------- render
    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        self._ensure_observation()
        st = self.state
        lines = [f"WikiCrawl[{self.corpus.name}] topic={self.topic.name} step={self._t} fetched={st.n_fetched} "
                 f"relevant={st.relevant_found} harvest={st.harvest_rate:.3f} domains={st.relevant_domains} "
                 f"frontier={st.fr_size}"]
        if self._last_page >= 0:
            lines.append(f"  last: {self.corpus.titles[self._last_page]!r} reward={self._last_reward:g}")
        for i, p in enumerate(self._cand[:5].tolist()):
            lines.append(f"  [{i}] {self.corpus.titles[p]!r} link_rel={st.link_rel[p]:.3f}")
        if len(self._cand) > 5:
            lines.append(f"  … {len(self._cand) - 5} more candidates")
        return "\n".join(lines)
