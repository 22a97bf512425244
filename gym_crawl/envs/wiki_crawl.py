"""``WikiCrawlEnv``: the focused-crawling MDP as a Gymnasium environment (registered as ``WikiCrawl-v0`` … ``-v3``;
``gym_crawl.DEFAULT_ENV_ID`` names the default).

Episode: reset fetches the seed pages (the topic's main page by default) and puts their out-links
in the frontier; every step fetches one frontier page. The episode is *terminated* when the
frontier is empty and *truncated* at the episode budget. Who holds the budget depends on the id
(:mod:`gym_crawl.envs.budget` has the whole story):

* ``WikiCrawl-v3`` follows Gymnasium's convention: the registered ``TimeLimit``
  (``spec.max_episode_steps``, ``gym.make(id, max_episode_steps=N)``) truncates, and the env observes
  the steps it has taken (``state[0]`` is ``log_steps``), which needs no budget; Gymnasium's
  ``TimeAwareObservation`` adds the fraction of the limit when an agent wants it. The batched
  :class:`~gym_crawl.envs.vector.WikiCrawlVectorEnv` takes ``max_episode_steps`` from ``gym.make_vec``, as
  Gymnasium's ``CartPoleVectorEnv`` does.
* ``WikiCrawl-v0``, ``-v1``, ``-v2`` keep their observation, the fraction of the budget used
  (``state[0]`` is ``budget_used``), so the env needs the budget itself: the constructor keyword
  ``max_episode_steps``, which ``gym.make``'s ``TimeLimit`` hands over through the wrapper those ids register.

A step after the episode ended (terminated, or at the env's own budget) raises a ``RuntimeError`` that says
to call ``reset()``, so the env never keeps crawling.

**One action path.** Every agent acts through ``env.step`` of the (possibly wrapped) env, in one of
two action modes chosen at construction (``action=``):

* ``"slot"`` (default, SB3-compatible): ``Discrete(K)``, an index into the K candidate slots a
  reducer proposed; ``env.action_masks()`` / ``info["action_mask"]`` give the (K,) mask.
* ``"page"``: ``Discrete(n_pages)``, a page id — for custom agents that rank the *whole* frontier
  (Han's synchronous LFA, TD(λ), per-page DQN heads). ``env.action_masks()`` returns the (n_pages,)
  frontier mask, computed lazily on call.

A masked slot, or a page that is not in the frontier (SB3's checker and DQN's exploration sample
them), fetches nothing: the step is spent, the reward is ``invalid_action_penalty`` (default
``-0.1 × max reward``), ``candidates`` and ``mask`` are unchanged (``state`` advances: budget used,
last reward) and ``info["invalid_action"]`` is True. An action outside the action space (a float,
a bool, a string, a nested list, an integer out of range) raises ``ValueError`` naming the valid range.

Observation (``observation=``):

* ``"candidates"`` (default)::

      {"candidates": Box(-1, 1, (K, d), float32),  # x(s, a) of each slot, zero rows when masked
       "mask":       Box(0, 1, (K,), bool),           # True = slot holds a candidate
       "state":      Box(-1, 1, (6,), float32)}      # crawl summary, see env.state_names

  Every mask of the env is bool — ``obs["mask"]``, ``info["action_mask"]``, ``action_masks()`` — so
  ``ids[mask]`` selects and ``~mask`` negates. Gymnasium's ``Discrete.sample(mask=...)`` wants int8:
  ``env.action_space.sample(mask=mask.astype(np.int8))``.

* ``"state"``: only the ``Box(-1, 1, (6,))`` crawl summary — for page-mode agents that read the
  frontier through ``env.unwrapped.view`` (the env then skips building the K candidate rows).

The state vector is ``env.state_names``: the time feature (``time_feature=``, see :data:`TIME_FEATURES`),
``harvest_rate``, ``log_frontier`` (log(1 + frontier size) / log(1 + n_pages)), ``last_reward`` (over the
scheme's max reward), ``relevant_domain_fraction`` and ``candidate_fraction``, each clamped to [-1, 1].

**What agents read**: ``env.unwrapped.view``, a read-only :class:`~gym_crawl.envs.view.CrawlView` whose
docstring is the one list (frontier pages, their x(s, a) rows, fetched pages' text, the text model, and —
flagged hidden information, for oracles and analyses — ``hidden_relevance``). Agents touch nothing else.

Info keys (present after ``reset`` and every ``step``; all scalars or fixed-shape arrays, so
Gymnasium's vector envs can stack them):

=====================  =====================================================================
``pages_fetched``      pages fetched so far, seeds included
``relevant_found``     fetched pages that are relevant (topic label if the topic has one,
                       else the reward scheme's relevant flag)
``harvest_rate``       relevant_found / pages_fetched
``relevant_domains``   distinct domains with at least one relevant fetched page
``reward_sum``         sum of rewards this episode (seeds' rewards included)
``frontier_size``      discovered, unfetched pages
``candidate_ids``      (K,) int64 page ids of the slots, -1 where masked (all -1 with
                       ``observation="state"``)
``action_mask``        (K,) bool, ``candidate_ids >= 0`` (slot mode only; page mode: call
                       ``action_masks()``)
``fetched_page``       page id fetched by this step (-1 on reset and invalid steps)
``relevant``           whether the fetched page is relevant (False when none fetched)
``invalid_action``     True when the step chose a masked slot / a non-frontier page
``n_new_pages``        pages added to the frontier by this step (ids: ``view.frontier_changes()``)
``steps``              env steps taken this episode
``topic``              topic name
``fetch_error``        why the page this step chose could not be fetched (``""`` when it was,
                       and always on a static corpus): a live web's robots.txt refusal, HTTP
                       error, timeout, size cap, non-HTML answer... — the step is spent, the
                       page counts as fetched with no text and no links
=====================  =====================================================================

Variable-length per-step data (the new, updated and domain-capped frontier pages) is not in
``info`` — a vector env could not stack it — but in ``env.unwrapped.view.frontier_changes()``.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gym_crawl.corpus import Corpus
from gym_crawl.crawl.state import FRONTIER, VISITED, CrawlState, FetchResult
from gym_crawl.envs.view import CrawlView, FrontierChanges
from gym_crawl.envs.world import CrawlWorld, check_int
from gym_crawl.features.sets import FeatureSet
from gym_crawl.reducers.base import Reducer
from gym_crawl.relevance.rewards import RewardScheme
from gym_crawl.relevance.topic import Topic, resolve_topic, seed_pages
from gym_crawl.text.model import TextModel

__all__ = ["WikiCrawlEnv", "EpisodeRecord", "STATE_NAMES", "TIME_FEATURES", "ACTION_MODES", "OBSERVATION_MODES",
           "FrontierChanges", "INFO_KEYS"]

#: The state vector's entries as ``WikiCrawl-v0``…``-v2`` name them; ``env.state_names`` is the env's own (its
#: first entry is its ``time_feature``). Six entries for every env.
STATE_NAMES = ("budget_used", "harvest_rate", "log_frontier", "last_reward", "relevant_domain_fraction",
               "candidate_fraction")
#: What ``state[0]`` observes of time (``time_feature=``): ``"log_steps"`` — the steps taken this episode,
#: log(1 + steps) / log(1 + n_pages), which needs no budget (``WikiCrawl-v3``, the class default; a
#: ``TimeLimit`` may truncate anywhere); ``"budget_used"`` — steps / ``max_episode_steps``, the fraction of the
#: env's own budget (``WikiCrawl-v0``…``-v2``; 0 when the env has no budget, and then nothing truncates it).
TIME_FEATURES = ("log_steps", "budget_used")
ACTION_MODES = ("slot", "page")
OBSERVATION_MODES = ("candidates", "state")
#: Info keys present after every reset and step (``action_mask`` in slot mode only).
INFO_KEYS = ("pages_fetched", "relevant_found", "harvest_rate", "relevant_domains", "reward_sum", "frontier_size",
             "candidate_ids", "action_mask", "fetched_page", "relevant", "invalid_action", "n_new_pages", "steps",
             "topic", "fetch_error")
_EMPTY = np.zeros(0, np.int32)
_EMPTY.flags.writeable = False


@dataclass
class EpisodeRecord:
    """One crawl's episode bookkeeping besides its crawl state: env steps ``t``, the last reward and fetched
    page, the proposed candidates (``cand``: the K shown, ``all_cand``: all the reducer proposed) and their
    rows ``feats``/``mask``, the state vector ``svec``, the last frontier ``changes`` (new, updated, removed),
    why the episode is over (``over``, ``None`` while it runs) and whether a reset completed (``started``).
    The batched vector env advances these in compiled code and writes them back here."""

    feats: np.ndarray
    mask: np.ndarray
    t: int = 0
    last_reward: float = 0.0
    last_page: int = -1
    cand: np.ndarray = field(default_factory=lambda: _EMPTY)
    all_cand: np.ndarray = field(default_factory=lambda: _EMPTY)
    svec: np.ndarray = field(default_factory=lambda: np.zeros(len(STATE_NAMES), np.float32))
    changes: tuple[np.ndarray, np.ndarray, np.ndarray] = (_EMPTY, _EMPTY, _EMPTY)
    over: str | None = None
    started: bool = False


def _check_seeds(seeds: Any) -> list[str | int] | None:
    if seeds is None:
        return None
    if isinstance(seeds, (str, bytes, numbers.Number)):
        raise ValueError(f"seeds must be a list of page titles or ids, got {seeds!r}; "
                         f"for one seed write seeds=[{seeds!r}]")
    out = list(seeds)
    if not out:
        raise ValueError("seeds is empty: pass None for the topic's default seeds, or a list of titles/ids")
    for s in out:
        if isinstance(s, bool) or not isinstance(s, (str, numbers.Integral)):
            raise ValueError(f"seeds: each seed must be a page title (str) or page id (int), got {s!r}")
    return out


class WikiCrawlEnv(gym.Env):
    """Focused crawling over a corpus. See the module docstring for spaces and info, :attr:`view` for what
    agents read.

    Args:
        corpus: corpus spec for :func:`gym_crawl.corpus.load_corpus` (default: the embedded synthetic web).
        topic: topic spec for :func:`gym_crawl.relevance.resolve_topic` (default: the corpus' default topic).
        seeds: a list of seed page titles or ids (default: the topic's seeds / main page).
        reward: a registered reward name (``"han2018"``, ``"thesis"``, ``"binary"``, ``"labels"``), a
            RewardScheme or a callable. Default (``None``): ``"labels"`` when the topic has a ground-truth
            label — the reward then optimizes exactly what ``relevant_found`` counts — else ``"han2018"``
            (whose relevant flag is what ``relevant_found`` counts for a label-less topic). ``WikiCrawl-v0``
            keeps the first release's default, ``"han2018"`` for every topic.
        features: a registered feature-set name (``"combined"``, ``"han2018"``, ``"han2018-continuous"``,
            ``"tres"``, …) or a FeatureSet.
        reducer: a registered reducer name (``"topk"``, ``"outlinks"``, ``"random"``, ``"full"``, ``"tree"``)
            or a Reducer.
        max_candidates: K, the number of candidate slots (≥ 1); on a web of fewer pages it is lowered to its page
            count (``env.unwrapped.view.max_candidates`` is the K in use).
        n_categories: category slots C shared by all topics of this env (≥ 0).
        action: ``"slot"`` (``Discrete(K)``) or ``"page"`` (``Discrete(n_pages)``); see the module docstring.
        observation: ``"candidates"`` (the ``Dict`` with K candidate rows) or ``"state"`` (summary only; needs
            ``action="page"``).
        invalid_action_penalty: reward of a masked-slot / non-frontier-page step (default ``-0.1 × max reward``).
        text: keyword arguments for :func:`gym_crawl.text.get_text_model` (``idf_fraction``, ``dim``,
            ``seed``, ``vectors_path``), or a ready :class:`TextModel`.
        beta: Han's exponential smoothing factor of ancestor relevance (0.4), in [0, 1].
        domain_cap: TRES's b, the maximum pages fetched per domain: ``None``/``"inf"`` (no cap), an int,
            or ``"A-B"`` (adaptive: the cap falls linearly from A to B over ``domain_cap_horizon`` steps;
            TRES's ``5_2``). Pages of a capped domain leave the frontier; a crawl whose frontier empties this
            way terminates. How a corpus defines domains is in ``corpus.meta["domain_definition"]``.
        domain_cap_horizon: the env steps over which an adaptive ``domain_cap`` falls from A to B (TRES: the
            crawl's budget; :func:`gym_crawl.wrappers.factory.make_env` sets it to ``max_episode_steps`` when
            not given). ``None``: with ``time_feature="budget_used"`` the env's own budget; with
            ``"log_steps"`` an adaptive cap then raises at reset, naming this keyword.
        corpus_kwargs: extra keyword arguments for the corpus loader.
        render_mode: ``None`` or ``"ansi"``.
        max_episode_steps: the env's own episode budget: env steps after which the env truncates the episode
            itself (``None``: none — under ``gym.make`` of ``WikiCrawl-v3`` the ``TimeLimit`` truncates). See
            :mod:`gym_crawl.envs.budget`.
        time_feature: what ``state[0]`` observes of time, one of :data:`TIME_FEATURES`: ``"log_steps"``
            (default, ``WikiCrawl-v3``) or ``"budget_used"`` (``WikiCrawl-v0``…``-v2``; 0 without a budget).
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(self, corpus: Any = None, topic: Any = None, seeds: Sequence[str | int] | None = None,
                 reward: Any = None, features: Any = "combined", reducer: Any = "topk",
                 max_candidates: int = 64, n_categories: int = 4, action: str = "slot",
                 observation: str = "candidates", invalid_action_penalty: float | None = None,
                 text: dict | TextModel | None = None, corpus_kwargs: dict | None = None,
                 render_mode: str | None = None, beta: float = 0.4, domain_cap: int | str | None = None,
                 max_episode_steps: int | None = None, world: CrawlWorld | None = None,
                 time_feature: str = "log_steps", domain_cap_horizon: int | None = None):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r} not supported; use None or 'ansi'")
        if action not in ACTION_MODES:
            raise ValueError(f"action {action!r}: expected one of {ACTION_MODES}")
        if observation not in OBSERVATION_MODES:
            raise ValueError(f"observation {observation!r}: expected one of {OBSERVATION_MODES}")
        if observation == "state" and action == "slot":
            raise ValueError("observation='state' proposes no candidate slots, so a slot action could never fetch a "
                             "page: use action='page' with it (or observation='candidates' with slot actions)")
        if time_feature not in TIME_FEATURES:
            raise ValueError(f"time_feature {time_feature!r}: expected one of {TIME_FEATURES}")
        K = check_int("max_candidates", max_candidates, 1)
        if invalid_action_penalty is not None and (
                isinstance(invalid_action_penalty, bool) or not isinstance(invalid_action_penalty, numbers.Real)
                or not math.isfinite(float(invalid_action_penalty))):
            raise ValueError(f"invalid_action_penalty must be a finite number or None, got {invalid_action_penalty!r}")
        if world is None:
            world = CrawlWorld(corpus=corpus, corpus_kwargs=corpus_kwargs, text=text, n_categories=n_categories,
                               features=features, reducer=reducer, reward=reward, beta=beta, domain_cap=domain_cap)
        else:
            given = {k: v for k, v in (("corpus", corpus), ("corpus_kwargs", corpus_kwargs), ("text", text),
                                       ("reward", reward), ("domain_cap", domain_cap)) if v is not None}
            given.update({k: v for k, v, d in (("n_categories", n_categories, 4), ("features", features, "combined"),
                                               ("reducer", reducer, "topk"), ("beta", beta, 0.4)) if v != d})
            if given:
                raise ValueError(f"world= already holds {sorted(given)}: pass either a CrawlWorld or its keywords")
        self._world = world
        self.render_mode = render_mode
        self.action_mode: str = action
        self.observation_mode: str = observation
        self.domain_cap_spec = world.domain_cap_spec
        self.corpus: Corpus = world.corpus
        K = min(K, self.corpus.n_pages)  # a small web has fewer pages than candidate slots: one slot per page
        self.text: TextModel = world.text
        self.n_categories = world.n_categories
        self.features: FeatureSet = world.new_features()
        self.reducer: Reducer = world.new_reducer()
        #: the reducer only serves the K candidate slots: with observation="state" it is idle
        self._uses_reducer = observation == "candidates"
        self.K = K
        self.beta = world.beta
        self._default_topic = resolve_topic(topic, self.corpus)
        self._default_seeds = _check_seeds(seeds)
        self._penalty_arg = invalid_action_penalty
        self.state = CrawlState(self.corpus, n_categories=self.n_categories, beta=self.beta)
        d = self.features.dim
        state_space = spaces.Box(-1.0, 1.0, (len(STATE_NAMES),), np.float32)
        if observation == "candidates":
            self.observation_space: spaces.Space = spaces.Dict({
                "candidates": spaces.Box(-1.0, 1.0, (self.K, d), np.float32),
                "mask": spaces.Box(0, 1, (self.K,), bool),
                "state": state_space,
            })
        else:
            self.observation_space = state_space
        self.action_space = spaces.Discrete(self.K if action == "slot" else self.corpus.n_pages)
        self._configure(self._default_topic)  # validates topic/categories/reward early
        seed_pages(self._default_topic, self.corpus, self._default_seeds)  # a topic without seeds fails here
        self._ep = EpisodeRecord(feats=np.zeros((self.K, d), np.float32), mask=np.zeros(self.K, bool))
        self._log_pages = world.log_pages
        self._n_domains = world.n_domains
        self._budget: int | None = None
        self.set_budget(max_episode_steps)
        #: what state[0] observes (TIME_FEATURES) and the names of the state vector's entries
        self.time_feature: str = time_feature
        self.state_names: tuple[str, ...] = (time_feature, *STATE_NAMES[1:])
        self._cap_horizon_arg = (None if domain_cap_horizon is None
                                 else check_int("domain_cap_horizon", domain_cap_horizon, 1))
        #: a live web fetches a page when the crawl first chooses it (one attribute check per step offline)
        self._materialize = self.corpus.materialize if self.corpus.live else None  # type: ignore[attr-defined]
        self._fetch_error = ""
        self._view = CrawlView(self)

    @property
    def view(self) -> CrawlView:
        """The read-only view agents read the crawl through (:class:`CrawlView`: the one list of it)."""
        return self._view

    @property
    def world(self) -> CrawlWorld:
        """What this crawl shares with every crawl built from the same world (:class:`CrawlWorld`)."""
        return self._world

    def adopt_crawl_storage(self, storage: dict[str, np.ndarray]) -> None:
        """Keep the crawl state's columns in ``storage`` (this crawl's row views of the batched vector env's
        stacked columns, at their reset values; see :class:`CrawlState`). Before the first reset only."""
        if self._ep.started:
            raise RuntimeError("adopt_crawl_storage: the crawl has started; call it before the first reset")
        self.state = CrawlState(self.corpus, n_categories=self.n_categories, beta=self.beta, storage=storage)

    @property
    def episode(self) -> EpisodeRecord:
        """This episode's bookkeeping besides the crawl state (the batched vector env advances and writes it)."""
        return self._ep

    # ---------------------------------------------------------------- setup
    def _configure(self, topic: Topic) -> None:
        self.topic = topic
        self.scorer = self._world.scorer(topic)
        self.scheme: RewardScheme = self._world.reward_scheme(topic)
        self.invalid_action_penalty = (float(self._penalty_arg) if self._penalty_arg is not None
                                       else -0.1 * float(self.scheme.max_reward))

    @property
    def budget(self) -> int | None:
        """The env's own budget (``max_episode_steps``): env steps after which it truncates the episode itself;
        ``None`` when it has none — under ``gym.make`` of ``WikiCrawl-v3`` the ``TimeLimit`` truncates (see
        :func:`gym_crawl.envs.check_budget` for the limit that does); a ``budget_used`` env then observes 0."""
        return self._budget

    def set_budget(self, budget: int | None) -> None:
        """Set the env's own episode budget (``max_episode_steps``): how
        :class:`gym_crawl.envs.budget.BudgetFromTimeLimit` hands the limit ``gym.make`` consumed to a
        ``WikiCrawl-v0``…``-v2`` env, and how a budget is changed between episodes."""
        self._budget = None if budget is None else check_int("max_episode_steps", budget, 1)

    @property
    def domain_cap_horizon(self) -> int | None:
        """The env steps over which an adaptive domain cap falls: the ``domain_cap_horizon`` keyword, else
        (``time_feature="budget_used"``) the env's budget; ``None`` when neither is known."""
        if self._cap_horizon_arg is not None:
            return self._cap_horizon_arg
        return self._budget if self.time_feature == "budget_used" else None

    # ---------------------------------------------------------------- reset
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        """Start a crawl. ``options`` may hold ``topic`` and ``seeds`` for this episode.

        Every argument is checked before anything changes: a reset that raises on its arguments leaves the
        env as it was (the previous crawl can go on). A reset that fails later (a seed page whose reward is
        not finite, seeds with no out-links) leaves an env whose ``step`` refuses until a reset succeeds."""
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"reset options must be a dict with 'topic' and/or 'seeds' (or None), "
                             f"got {type(options).__name__} {options!r}")
        options = dict(options or {})
        unknown = sorted(set(options) - {"topic", "seeds"})
        if unknown:
            raise ValueError(f"reset options {unknown} unknown; expected 'topic' and/or 'seeds'")
        topic = (resolve_topic(options["topic"], self.corpus) if options.get("topic") is not None
                 else self._default_topic)
        seeds = _check_seeds(options["seeds"]) if options.get("seeds") is not None else self._default_seeds
        seed_ids = seed_pages(topic, self.corpus, seeds)
        if self._world.adaptive_cap and self.domain_cap_horizon is None:
            raise ValueError(
                f"adaptive domain_cap {self.domain_cap_spec!r} falls from A to B over domain_cap_horizon env steps "
                f"and none is given: pass domain_cap_horizon=N (TRES: the crawl's budget, e.g. the "
                f"max_episode_steps of its TimeLimit; gym_crawl.wrappers.factory.make_env sets it so)")
        super().reset(seed=seed)
        self._ep.started = False  # until this reset completes: a failure below leaves an env that refuses step
        self._configure(topic)
        st = self.state
        st.reset(self.scorer, self.scheme, self._world.cap_schedule[0] if self._world.cap_schedule else None)
        if self._uses_reducer:
            self.reducer.reset(st, self.features, self.np_random)
        self._ep.t = 0
        self._ep.over = None
        self._ep.last_reward = 0.0
        self._ep.last_page = -1
        new, upd = [], []
        for p in seed_ids.tolist():
            if st.status[p] == VISITED:
                continue
            if self._materialize is not None:
                self._materialize(p)
            res = st.fetch(p, count_step=False)
            self._check_reward(res)
            if self._uses_reducer:
                self.reducer.on_fetch(res, None)
            new.append(res.new_pages)
            upd.append(res.updated_pages)
        if st.fr_size == 0:
            titles = [self.corpus.titles[int(p)] for p in seed_ids]
            raise ValueError(f"seed pages {titles} have no out-links to unfetched pages: the frontier is empty")
        new_a = np.concatenate(new)
        self._ep.changes = (new_a, np.unique(np.concatenate(upd)), _EMPTY)
        self._observe()
        self._ep.started = True
        return self._obs_out(), self._info(-1, False, False, len(new_a))

    # ----------------------------------------------------------------- step
    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """Fetch the candidate slot / page ``action`` (see the module docstring for invalid actions)."""
        a = self._check_action(action)
        if not self._ep.started:
            raise RuntimeError("call reset() before step()")
        if self._ep.over is not None:
            raise RuntimeError(f"the episode is over ({self._ep.over}): call reset() before stepping again")
        if self.action_mode == "slot":
            if a >= len(self._ep.cand):
                return self._spend_invalid()
            page = int(self._ep.cand[a])
            x = self._ep.feats[a].copy() if self.reducer.needs_experience else None
        else:
            page = a
            if self.state.status[page] != FRONTIER:
                return self._spend_invalid()
            x = None
            if self._uses_reducer and self.reducer.needs_experience:  # the row of the chosen page: the reducer's sample
                x = np.clip(self.features.compute(self.state, np.array([page]))[0], -1.0, 1.0)
        n_before = self.state.n_fetched
        try:  # a fetch refused (non-finite reward) changes nothing; anything failing after it ends the episode
            return self._do_fetch(page, x)
        except BaseException as e:
            if self.state.n_fetched != n_before:
                self._ep.over = f"a step raised {type(e).__name__} after fetching page {page}"
            raise

    def _check_action(self, action: Any) -> int:
        n = int(self.action_space.n)  # type: ignore[attr-defined]
        a: int | None = None
        if isinstance(action, numbers.Integral) and not isinstance(action, (bool, np.bool_)):
            a = int(action)
        elif isinstance(action, np.ndarray) and action.shape in ((), (1,)) and np.issubdtype(action.dtype, np.integer):
            a = int(action.reshape(()))
        if a is None or not 0 <= a < n:
            what = "candidate slot" if self.action_mode == "slot" else "page id"
            raise ValueError(f"action {action!r} is outside the action space Discrete({n}): "
                             f"valid actions are integers 0..{n - 1} (a {what})")
        return a

    def _end_check(self, terminated: bool) -> bool:
        """Truncation flag at this step, and remember that the episode ended."""
        b = self.budget
        truncated = (not terminated) and b is not None and self._ep.t >= b
        if terminated:
            self._ep.over = "terminated: the frontier is empty"
        elif truncated:
            self._ep.over = f"truncated at max_episode_steps={b}"
        return truncated

    def _spend_invalid(self) -> tuple[Any, float, bool, bool, dict]:
        self._ep.t += 1
        r = self.invalid_action_penalty
        self.state.add_reward(r)  # reward_sum is the sum of every reward of the episode, penalties included
        self._ep.last_reward = r
        self._ep.svec = self._state_vec()
        self._ep.changes = (_EMPTY, _EMPTY, _EMPTY)
        trunc = self._end_check(False)
        return self._obs_out(), r, False, trunc, self._info(-1, False, True, 0)

    def _check_reward(self, res: FetchResult) -> None:
        if not math.isfinite(res.reward):
            raise ValueError(f"reward {self.scheme.name!r} returned a non-finite value {res.reward!r} for page "
                             f"{res.page} ({self.corpus.titles[res.page]!r}); rewards must be finite")

    def _do_fetch(self, page: int, x: np.ndarray | None) -> tuple[Any, float, bool, bool, dict]:
        self._fetch_error = "" if self._materialize is None else self._materialize(page)
        res: FetchResult = self.state.fetch(page)
        self._check_reward(res)
        self._ep.t += 1
        dropped = self._apply_cap_schedule()  # after the fetch, so proposed candidates stay fetchable
        if len(dropped):
            res.removed_pages = np.concatenate([res.removed_pages, dropped])
        if self._uses_reducer:
            self.reducer.on_fetch(res, x)
        self._ep.last_reward = res.reward
        self._ep.last_page = page
        self._ep.changes = (res.new_pages, res.updated_pages, res.removed_pages)  # views made on request
        terminated = self.state.fr_size == 0
        truncated = self._end_check(terminated)
        self._observe()
        return self._obs_out(), float(res.reward), terminated, truncated, \
            self._info(page, res.eval_relevant, False, len(res.new_pages))

    def _apply_cap_schedule(self) -> np.ndarray:
        """Lower an adaptive domain cap to its value after ``self._ep.t`` steps (evaluated after each
        fetch); returns the frontier pages it dropped."""
        sch = self._world.cap_schedule
        if sch is None or sch[0] == sch[1]:
            return np.zeros(0, np.int32)
        hi, lo = sch
        horizon = self.domain_cap_horizon
        assert horizon is not None  # checked at reset
        cap = int(round(hi - (hi - lo) * min(1.0, self._ep.t / float(horizon))))
        if cap == self.state.domain_cap:
            return np.zeros(0, np.int32)
        return self.state.set_domain_cap(cap)

    # ---------------------------------------------------------- observation
    def _observe(self) -> None:
        """Propose candidates and build their rows (observation="candidates"), then the state vector."""
        if self.observation_mode == "candidates":
            self._propose()
        else:
            self._ep.cand = self._ep.all_cand = _EMPTY
        self._ep.svec = self._state_vec()

    def _propose(self) -> None:
        cand = self.reducer.propose(self.K, self.np_random) if self.state.fr_size else np.zeros(0, np.int32)
        if len(cand) > self.K:  # only the "full" reducer proposes more than K: show the best K by link text
            top = np.argsort(-self.state.link_rel[cand], kind="stable")[: self.K]
            self._ep.all_cand = cand
            cand = cand[np.sort(top)]
        else:
            self._ep.all_cand = cand
        self._ep.cand = cand.astype(np.int32)
        n = len(cand)
        feats = np.zeros((self.K, self.features.dim), np.float32)
        if n:
            rows = feats[:n]
            rows[:] = self.features.compute(self.state, cand)
            np.clip(rows, -1.0, 1.0, out=rows)
        mask = np.zeros(self.K, bool)
        mask[:n] = True
        self._ep.feats, self._ep.mask = feats, mask

    def _state_vec(self) -> np.ndarray:
        """``state_names`` as float32, each clamped to [-1, 1] (plain float arithmetic: this runs every step)."""
        st = self.state
        b = self.budget
        t = self._ep.t
        vals = (math.log1p(t) / self._log_pages if self.time_feature == "log_steps" else ((t / b) if b else 0.0),
                st.harvest_rate,
                math.log1p(st.fr_size) / self._log_pages,
                self._ep.last_reward / max(abs(self.scheme.max_reward), 1e-9),
                st.relevant_domains / self._n_domains,
                len(self._ep.cand) / self.K)
        return np.array([min(1.0, max(-1.0, v)) for v in vals], np.float32)

    def _obs_out(self) -> Any:
        if self.observation_mode == "state":
            return self._ep.svec.copy()
        return {"candidates": self._ep.feats.copy(), "mask": self._ep.mask.copy(), "state": self._ep.svec.copy()}

    def _info(self, page: int, relevant: bool, invalid: bool, n_new: int) -> dict[str, Any]:
        st = self.state
        ids = np.full(self.K, -1, np.int64)
        ids[: len(self._ep.cand)] = self._ep.cand
        info = {
            "pages_fetched": int(st.n_fetched), "relevant_found": int(st.relevant_found),
            "harvest_rate": float(st.harvest_rate), "relevant_domains": int(st.relevant_domains),
            "reward_sum": float(st.reward_sum), "frontier_size": int(st.fr_size), "candidate_ids": ids,
            "fetched_page": int(page), "relevant": bool(relevant), "invalid_action": bool(invalid),
            "n_new_pages": int(n_new), "steps": int(self._ep.t), "topic": self.topic.name,
            "fetch_error": self._fetch_error if page >= 0 else "",
        }
        if self.action_mode == "slot":
            info["action_mask"] = ids >= 0
        return info

    def action_masks(self) -> np.ndarray:
        """Valid actions (sb3-contrib ``MaskablePPO`` convention): slot mode (K,) bool of filled slots;
        page mode (n_pages,) bool of frontier pages, computed on call (O(n_pages))."""
        if self.action_mode == "page":
            return self.state.status == FRONTIER
        m = np.zeros(self.K, bool)
        m[: len(self._ep.cand)] = True
        return m

    # ---------------------------------------------------------------- render
    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        st = self.state
        lines = [f"WikiCrawl[{self.corpus.name}] topic={self.topic.name} step={self._ep.t} fetched={st.n_fetched} "
                 f"relevant={st.relevant_found} harvest={st.harvest_rate:.3f} domains={st.relevant_domains} "
                 f"frontier={st.fr_size}"]
        if self._ep.last_page >= 0:
            lines.append(f"  last: {self.corpus.titles[self._ep.last_page]!r} reward={self._ep.last_reward:g}")
        for i, p in enumerate(self._ep.cand[:5].tolist()):
            lines.append(f"  [{i}] {self.corpus.titles[p]!r} link_rel={st.link_rel[p]:.3f}")
        if len(self._ep.cand) > 5:
            lines.append(f"  … {len(self._ep.cand) - 5} more candidates")
        return "\n".join(lines)
