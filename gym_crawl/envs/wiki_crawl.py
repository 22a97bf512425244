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

**Pages in flight** (``concurrency=W``; see :mod:`gym_crawl.crawl.window` and ``docs/live.md``). With the
default ``concurrency=1`` on a static corpus a step fetches the page it chose — the MDP above. A web
discovered while it is crawled (a :class:`~gym_crawl.corpus.page_source.PageSource`, such as
:class:`gym_crawl.web.LiveWeb`), or ``concurrency > 1`` on any corpus, runs a *window*: a step *dispatches*
the chosen page (it leaves the frontier and is in flight), then *lands* every page the page source delivered
(the env asks it with ``request`` / ``arrived`` and never does I/O itself), in their completion order, and
returns once fewer than W pages are in flight and a candidate can be offered that is close enough to the best
page the crawl knows (the focus rule below); it waits while the window is full, nothing is offerable, or the best
offerable page ranks too low. A static corpus gets a deterministic virtual clock
(:class:`~gym_crawl.corpus.page_source.SimulatedFetches`, ``timing=``: a response latency and a per-host
delay), so the completion order is the one a polite deployed crawler would see. A page whose host already
has ``per_host`` pages in flight (or whose host the source holds back: its robots.txt has not arrived) is not
offered: it is parked out of the frontier until its host is free. With W = 1 every step lands the page it
dispatched, so a static corpus with ``timing=`` crawls exactly as without it.

**Focus** (``focus_slack``, default 0). A host busy with the best pages would otherwise leave its slots to other
hosts' pages, ranked low: the crawl would buy pages per second with relevance. So while pages are in flight, a free
slot is filled only when the best offerable page's link score (the topic relevance of its link text,
``view.link_scores``: best-first's priority) is at least ``best − focus_slack × (best − mean)`` over every page the
crawl could fetch, those parked on busy hosts included; otherwise the step waits for a page to land — the slot stays
idle, as in Mercator's frontier. The agent still chooses the page; the rule decides when another page may go.
``focus_slack=math.inf`` fills every free slot.

In a window env the step's reward is the sum of the rewards of the pages it landed (0 when none landed);
``fetched_page``, ``relevant`` and ``fetch_error`` describe the last page landed (-1 / False / "" when none);
``pages_fetched`` counts landed pages. ``frontier_changes()`` reports the step's landed pages' new and
updated frontier pages and the pages that came back from parking (``new``, ``updated``, both only pages
offerable when the step returns), and the pages that were parked or refused (``removed``). The window adds
the info keys :data:`WINDOW_INFO_KEYS`:

=====================  =====================================================================
``dispatched_page``    page id this step's action sent (-1 on reset and invalid steps)
``landed_pages``       (W,) int64 pages landed by this step in completion order, -1 padded
``landed_rewards``     (W,) float32 their rewards (0 padded); the step's reward is their sum
``in_flight``          pages in flight when the step returned
``parked``             discovered pages held out of the frontier (host busy or not cleared)
=====================  =====================================================================

The episode terminates when nothing is offerable, in flight or awaited.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gym_crawl.corpus import Corpus
from gym_crawl.corpus.page_source import FetchTiming, PageSource, SimulatedFetches, check_timing
from gym_crawl.crawl.state import FRONTIER, VISITED, CrawlState, FetchResult
from gym_crawl.crawl.window import DEFAULT_FOCUS_SLACK, FetchWindow, check_focus_slack
from gym_crawl.envs.single_step import CompiledStep
from gym_crawl.envs.view import CrawlView, FrontierChanges
from gym_crawl.envs.world import CrawlWorld, check_int
from gym_crawl.features.sets import FeatureSet
from gym_crawl.reducers.base import Reducer
from gym_crawl.relevance.rewards import RewardScheme
from gym_crawl.relevance.topic import Topic, resolve_topic, seed_pages
from gym_crawl.text.model import TextModel

__all__ = ["WikiCrawlEnv", "EpisodeRecord", "STATE_NAMES", "TIME_FEATURES", "ACTION_MODES", "OBSERVATION_MODES",
           "FrontierChanges", "INFO_KEYS", "WINDOW_INFO_KEYS"]

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
#: Info keys added by an env with a window of pages in flight (a page source, or ``concurrency > 1``).
WINDOW_INFO_KEYS = ("dispatched_page", "landed_pages", "landed_rewards", "in_flight", "parked")
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


class _Landing:
    """What the pages landed in one reset or step did: reward sum, pages in order, the last page's outcome,
    and the frontier changes (lists of arrays; ``settled``: how many ``new`` arrays the window has checked)."""

    __slots__ = ("last_error", "last_page", "last_relevant", "new", "pages", "removed", "reward", "settled",
                 "updated")

    def __init__(self) -> None:
        self.reward = 0.0
        self.pages: list[int] = []
        self.last_page, self.last_relevant, self.last_error = -1, False, ""
        self.new: list[np.ndarray] = []
        self.updated: list[np.ndarray] = []
        self.removed: list[np.ndarray] = []
        self.settled = 0

    def add(self, res: FetchResult, error: str) -> None:
        self.reward += res.reward
        self.pages.append(res.page)
        self.last_page, self.last_relevant, self.last_error = res.page, res.eval_relevant, error
        self.new.append(res.new_pages)
        self.updated.append(res.updated_pages)
        if len(res.removed_pages):
            self.removed.append(res.removed_pages)

    def changes(self, status: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(new, updated, removed)``: new and updated pages still offerable (each once, first occurrence
        first), removed pages."""
        def offerable(parts: list[np.ndarray]) -> np.ndarray:
            if not parts:
                return _EMPTY
            a = np.concatenate(parts) if len(parts) > 1 else parts[0]
            a = a[status[a] == FRONTIER]
            if len(parts) > 1 and len(a):
                _, first = np.unique(a, return_index=True)
                a = a[np.sort(first)]
            return np.asarray(a, np.int32)

        removed = np.concatenate(self.removed).astype(np.int32) if self.removed else _EMPTY
        return offerable(self.new), offerable(self.updated), removed


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
        concurrency: W, the most pages in flight (>= 1; default 1). See "Pages in flight" in the module
            docstring.
        per_host: the most pages in flight per host (domain), >= 1 (default 1: one request at a time per host,
            the polite fetcher's rule); pages of a host at the limit are not offered.
        timing: the virtual clock of a static corpus crawled with a window
            (:class:`~gym_crawl.corpus.page_source.FetchTiming` or ``{"latency": s, "delay": s}``; default
            latency 0.1 s, delay 1 s when ``concurrency > 1``). Not for a page source (its clock is real).
        focus_slack: the knob between focus and throughput of a window (default
            :data:`~gym_crawl.crawl.window.DEFAULT_FOCUS_SLACK`, 0): while pages are in flight, a free slot is
            filled only when the best offerable page's link score is at least ``best − focus_slack × (best −
            mean)`` over every page the crawl could fetch, busy hosts' included; otherwise the step waits for a
            page to land. 0: only a page as good as the best known; ``math.inf``: every free slot is filled (most
            pages per second, least focus). No effect with W = 1.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(self, corpus: Any = None, topic: Any = None, seeds: Sequence[str | int] | None = None,
                 reward: Any = None, features: Any = "combined", reducer: Any = "topk",
                 max_candidates: int = 64, n_categories: int = 4, action: str = "slot",
                 observation: str = "candidates", invalid_action_penalty: float | None = None,
                 text: dict | TextModel | None = None, corpus_kwargs: dict | None = None,
                 render_mode: str | None = None, beta: float = 0.4, domain_cap: int | str | None = None,
                 max_episode_steps: int | None = None, world: CrawlWorld | None = None,
                 time_feature: str = "log_steps", domain_cap_horizon: int | None = None, concurrency: int = 1,
                 per_host: int = 1, timing: FetchTiming | dict | None = None,
                 focus_slack: float = DEFAULT_FOCUS_SLACK):
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
        self._n_actions = int(self.action_space.n)
        self._configure(self._default_topic)  # validates topic/categories/reward early
        # a topic without seeds fails here; a static corpus' default seeds are looked up once, not at every reset
        default_ids = seed_pages(self._default_topic, self.corpus, self._default_seeds)
        default_ids.flags.writeable = False
        self._default_seed_ids = None if isinstance(self.corpus, PageSource) else default_ids
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
        self.concurrency = check_int("concurrency", concurrency, 1)
        self.per_host = check_int("per_host", per_host, 1)
        #: the window's focus rule (:meth:`FetchWindow.may_fill`); ``math.inf`` when off
        self.focus_slack = check_focus_slack(focus_slack)
        tm = check_timing(timing)
        corpus_source = self.corpus if isinstance(self.corpus, PageSource) else None
        if corpus_source is not None and tm is not None:
            raise ValueError(f"timing= simulates fetch times on a static corpus; corpus {self.corpus.name!r} delivers "
                             f"its own pages (a page source): drop timing=")
        #: where pages come from when they are not fetched on the spot: the corpus itself when it is a page
        #: source (a live web), a virtual clock over a static corpus with a window, else None (a step fetches
        #: the page it chose, the MDP of the papers)
        self._source: PageSource | None = corpus_source
        if self._source is None and (self.concurrency > 1 or tm is not None):
            self._source = SimulatedFetches(self.corpus, tm)
        self._window: FetchWindow | None = None
        if self._source is not None:
            self._window = FetchWindow(self.state, self.concurrency, self.per_host, self.focus_slack)
        self._fetch_error = ""
        self._failed_seeds: dict[str, str] = {}
        self._dispatched, self._landed = -1, _EMPTY
        self._view = CrawlView(self)
        #: the compiled step (gym_crawl.envs.single_step) when the configuration allows it; used in an episode
        #: whose reward is cached per page (``_compiled_episode``)
        self._cstep: CompiledStep | None = self._compiled_step()
        self._compiled_episode = False
        #: the last compiled step's candidates and frontier changes are still in the compiled step's arrays:
        #: copied into the episode record when someone reads it (:attr:`episode`), not at every step
        self._pending = False

    def _compiled_step(self) -> CompiledStep | None:
        """A :class:`CompiledStep` when one page is fetched on the spot, the domain cap is fixed, and the candidates
        come from the ``topk`` reducer with a feature set that has a batch layout (or there are none)."""
        if self._window is not None or self._world.adaptive_cap:
            return None
        layout = None
        if self._uses_reducer:
            if not self.reducer.batchable or self.reducer.needs_experience:
                return None
            layout = self.features.batch_layout()
            if layout is None:
                return None
        return CompiledStep(self.K, self.features.dim, self.action_mode == "slot", self._uses_reducer, layout,
                            self.time_feature == "log_steps", self._log_pages, self._n_domains, self.beta)

    @property
    def view(self) -> CrawlView:
        """The read-only view agents read the crawl through (:class:`CrawlView`: the one list of it)."""
        return self._view

    @property
    def page_source(self) -> PageSource | None:
        """Where the crawl's pages come from when a step does not fetch on the spot: the corpus itself when it is
        a page source (a live web), the virtual clock (:class:`SimulatedFetches`, its ``now`` the virtual seconds
        elapsed) of a static corpus with a window; ``None`` otherwise."""
        return self._source

    @property
    def world(self) -> CrawlWorld:
        """What this crawl shares with every crawl built from the same world (:class:`CrawlWorld`)."""
        return self._world

    def adopt_crawl_storage(self, storage: dict[str, np.ndarray],
                            on_full: Callable[[int], None] | None = None) -> None:
        """Keep the crawl state's columns in ``storage`` (this crawl's row views of the batched vector env's
        stacked columns, at their reset values; ``on_full(capacity)`` grows them: see :class:`CrawlState`).
        Before the first reset only."""
        if self._ep.started:
            raise RuntimeError("adopt_crawl_storage: the crawl has started; call it before the first reset")
        if self._window is not None:
            raise RuntimeError("adopt_crawl_storage: an env with pages in flight keeps its own crawl state")
        self.state = CrawlState(self.corpus, n_categories=self.n_categories, beta=self.beta, storage=storage,
                                on_full=on_full)
        self._cstep = None  # the batched vector env steps this crawl itself (or in Python)

    @property
    def episode(self) -> EpisodeRecord:
        """This episode's bookkeeping besides the crawl state (the batched vector env advances and writes it)."""
        if self._pending:
            self._take_pending()
        return self._ep

    def _take_pending(self) -> None:
        """Copy the last compiled step's candidates and frontier changes into the episode record."""
        assert self._cstep is not None
        self._pending = False
        ep = self._ep
        ep.cand = ep.all_cand = self._cstep.candidates()
        ep.changes = self._cstep.changes()

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
        if self._default_seed_ids is not None and options.get("topic") is None and options.get("seeds") is None:
            seed_ids = self._default_seed_ids
        else:
            seed_ids = seed_pages(topic, self.corpus, seeds)
        if self._world.adaptive_cap and self.domain_cap_horizon is None:
            raise ValueError(
                f"adaptive domain_cap {self.domain_cap_spec!r} falls from A to B over domain_cap_horizon env steps "
                f"and none is given: pass domain_cap_horizon=N (TRES: the crawl's budget, e.g. the "
                f"max_episode_steps of its TimeLimit; gym_crawl.wrappers.factory.make_env sets it so)")
        super().reset(seed=seed)
        self._ep.started = False  # until this reset completes: a failure below leaves an env that refuses step
        self._compiled_episode = self._pending = False
        if self._cstep is not None:
            self._cstep.unbind()
        self._configure(topic)
        st = self.state
        if self._window is not None:  # the last episode's in-flight and parked pages go back for the state's reset
            self._window.clear()
            assert self._source is not None
            self._source.restart()
        st.reset(self.scorer, self.scheme, self._world.cap_schedule[0] if self._world.cap_schedule else None)
        if self._uses_reducer:
            self.reducer.reset(st, self.features, self.np_random)
        self._ep.t = 0
        self._ep.over = None
        self._ep.last_reward = 0.0
        self._ep.last_page = -1
        self._dispatched, self._landed = -1, _EMPTY
        failed: dict[str, str] = {}
        self._failed_seeds = failed
        if self._window is not None:
            new_a, upd_a, rem_a = self._reset_window(seed_ids)
        else:
            new, upd = [], []
            for p in seed_ids.tolist():
                if st.status[p] == VISITED:
                    continue
                res = st.fetch(p, count_step=False)
                self._check_reward(res)
                if self._uses_reducer:
                    self.reducer.on_fetch(res, None)
                new.append(res.new_pages)
                upd.append(res.updated_pages)
            new_a, upd_a, rem_a = np.concatenate(new), np.unique(np.concatenate(upd)), _EMPTY
        if st.fr_size == 0 and (self._window is None or not self._window.n_parked):
            titles = [self.corpus.titles[int(p)] for p in seed_ids]
            if failed:  # a live web: say why, not only that the frontier is empty
                why = ", ".join(f"{t} ({e})" for t, e in failed.items())
                rest = "; the other seeds have no out-links to unfetched pages" if len(failed) < len(titles) else ""
                raise ValueError(f"the frontier is empty: seed pages could not be fetched: {why}{rest}")
            raise ValueError(f"seed pages {titles} have no out-links to unfetched pages: the frontier is empty")
        self._ep.changes = (new_a, upd_a, rem_a)
        self._observe()
        self._compiled_episode = self._cstep is not None and st.reward_cache is not None
        if self._compiled_episode:
            self._bind_compiled()
        self._ep.started = True
        return self._obs_out(), self._info(-1, False, False, len(new_a))

    def _reset_window(self, seed_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Request the seeds from the page source, land them as they arrive, then wait until a page can be
        offered (the seed hosts' robots.txt) or nothing more is awaited. Returns the frontier changes."""
        src, st = self._source, self.state
        assert src is not None
        waiting: dict[int, None] = {}
        for p in seed_ids.tolist():
            if st.status[p] != VISITED and p not in waiting:
                waiting[p] = None
                src.request(p)
        log = _Landing()
        while waiting or (st.fr_size == 0 and src.pending()):
            ev = src.arrived(True)
            for q in ev.pages:
                if q not in waiting:
                    raise RuntimeError(f"page source delivered page {q}, which reset did not request")
                del waiting[q]
                res = st.fetch(q, count_step=False)
                self._check_reward(res)
                if self._uses_reducer:
                    self.reducer.on_fetch(res, None)
                err = src.fetch_error(q)
                if err:
                    self._failed_seeds[self.corpus.titles[int(q)]] = str(err)
                log.add(res, err)
            self._settle(ev.refused, log)
            if not ev.pages and not ev.refused and not src.pending() and waiting:
                raise RuntimeError(f"page source has nothing pending but seeds {sorted(waiting)} never arrived")
        new, upd, rem = log.changes(st.status)
        return new, np.unique(upd), rem

    # ----------------------------------------------------------------- step
    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """Fetch the candidate slot / page ``action`` (see the module docstring for invalid actions)."""
        a = self._check_action(action)
        if not self._ep.started:
            raise RuntimeError("call reset() before step()")
        if self._ep.over is not None:
            raise RuntimeError(f"the episode is over ({self._ep.over}): call reset() before stepping again")
        if self._compiled_episode:
            return self._compiled_step_once(a)
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
            if self.state.n_fetched != n_before or self._window is not None:
                self._ep.over = f"a step raised {type(e).__name__} after fetching page {page}"
            raise

    def _check_action(self, action: Any) -> int:
        n = self._n_actions
        if type(action) is int and 0 <= action < n:  # the common case, without the ABC checks below
            return action
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

    def _bind_compiled(self) -> None:
        assert self._cstep is not None
        if self._pending:
            self._take_pending()
        self._cstep.bind(self.state, self.reducer, self._ep, self.invalid_action_penalty,
                         max(abs(self.scheme.max_reward), 1e-9))

    def _compiled_step_once(self, a: int) -> tuple[Any, float, bool, bool, dict]:
        """The step through :class:`CompiledStep`: the Python step's outcome, bit for bit, from one compiled call."""
        cs = self._cstep
        assert cs is not None
        if not cs.bound:  # a copy of the env (pickle, deepcopy): its arrays no longer view one another
            self._bind_compiled()
        page = cs.step(a, self._budget)  # refuses (ValueError, nothing changed) a page whose reward is not finite
        ep = self._ep
        nf, rf, rd, fr, nn, _, _, t, _, _, rel, inv, term, trunc = cs.figures.tolist()
        r, rsum = cs.sums.tolist()
        ep.t = t
        ep.last_reward = r
        if page >= 0:
            ep.last_page = page
            self._pending = True
        else:  # the candidates stay those of the last step
            if self._pending:
                self._take_pending()
            ep.changes = (_EMPTY, _EMPTY, _EMPTY)
        if term:
            ep.over = "terminated: the frontier is empty"
        elif trunc:
            ep.over = f"truncated at max_episode_steps={self._budget}"
        if self._uses_reducer:
            obs: Any = {"candidates": ep.feats.copy(), "mask": ep.mask.copy(), "state": ep.svec.copy()}
        else:
            obs = ep.svec.copy()
        ids = cs.ids.copy()
        info = {"pages_fetched": nf, "relevant_found": rf, "harvest_rate": rf / nf if nf else 0.0,
                "relevant_domains": rd, "reward_sum": rsum, "frontier_size": fr, "candidate_ids": ids,
                "fetched_page": page, "relevant": rel != 0, "invalid_action": inv != 0, "n_new_pages": nn,
                "steps": t, "topic": self.topic.name, "fetch_error": ""}
        if self.action_mode == "slot":
            info["action_mask"] = ids >= 0
        return obs, r, term != 0, trunc != 0, info

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
        if self._window is not None:
            return self._window_fetch(page, x)
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

    def _window_fetch(self, page: int, x: np.ndarray | None) -> tuple[Any, float, bool, bool, dict]:
        """One step with pages in flight (see "Pages in flight" in the module docstring): dispatch ``page``, land
        what arrives, wait only while the window is full or nothing can be offered."""
        w, src, st = self._window, self._source, self.state
        assert w is not None and src is not None
        w.dispatch(page, x)
        src.request(page)
        log = _Landing()
        block = w.full
        while True:
            ev = src.arrived(block)
            for q in ev.pages:
                row = w.land(q)
                res = st.fetch(q)
                self._check_reward(res)
                if self._uses_reducer:
                    self.reducer.on_fetch(res, row)
                log.add(res, src.fetch_error(q))
            self._settle(ev.refused, log)
            if not w.full and st.fr_size > 0 and w.may_fill():
                break
            if w.size == 0 and not src.pending():
                break  # nothing offerable, in flight or awaited: the episode terminates
            if block and not ev.pages and not ev.refused and not src.pending():
                raise RuntimeError(f"page source has nothing pending while {w.size} pages are in flight")
            block = True
        self._ep.t += 1
        dropped = self._apply_cap_schedule()
        if len(dropped):
            if self._uses_reducer:
                self.reducer.on_frontier_change(dropped, _EMPTY)
            log.removed.append(dropped)
        self._ep.last_reward = log.reward
        self._ep.last_page = log.last_page
        self._fetch_error = log.last_error
        self._dispatched = page
        self._landed = np.asarray(log.pages, np.int32)
        self._ep.changes = log.changes(st.status)
        terminated = st.fr_size == 0 and w.size == 0 and not src.pending()
        truncated = self._end_check(terminated)
        self._observe()
        return self._obs_out(), float(log.reward), terminated, truncated, \
            self._info(log.last_page, log.last_relevant, False, len(self._ep.changes[0]))

    def _settle(self, refused: Sequence[int], log: _Landing) -> None:
        """After pages landed: block the pages the source refused, park the pages of busy or held hosts and
        return those of hosts that are free again; the reducer and ``log`` are told."""
        w, src = self._window, self._source
        assert w is not None and src is not None
        gone = w.refuse(np.asarray(refused, np.int32)) if len(refused) else _EMPTY
        fresh = np.concatenate(log.new[log.settled:]) if len(log.new) > log.settled else _EMPTY
        log.settled = len(log.new)
        parked, returned = w.reconcile(src.held_domains(), fresh)
        left = np.concatenate([parked, gone]) if len(gone) else parked
        if self._uses_reducer and (len(left) or len(returned)):
            self.reducer.on_frontier_change(left, returned)
        if len(left):
            log.removed.append(left)
        if len(returned):
            log.new.append(returned)
            log.updated.append(returned)
            log.settled = len(log.new)

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
        if self._window is not None:
            landed = np.full(self.concurrency, -1, np.int64)
            rewards = np.zeros(self.concurrency, np.float32)
            k = 0 if invalid else min(len(self._landed), self.concurrency)
            landed[:k] = self._landed[:k]
            rewards[:k] = self.state.reward[self._landed[:k]]
            info.update(dispatched_page=-1 if invalid else int(self._dispatched), landed_pages=landed,
                        landed_rewards=rewards, in_flight=self._window.size, parked=self._window.n_parked)
        if self.action_mode == "slot":
            info["action_mask"] = ids >= 0
        return info

    def action_masks(self) -> np.ndarray:
        """Valid actions (sb3-contrib ``MaskablePPO`` convention): slot mode (K,) bool of filled slots;
        page mode (n_pages,) bool of frontier pages, computed on call (O(n_pages))."""
        if self.action_mode == "page":
            return self.state.status == FRONTIER
        if self._pending:
            self._take_pending()
        m = np.zeros(self.K, bool)
        m[: len(self._ep.cand)] = True
        return m

    # ---------------------------------------------------------------- render
    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        if self._pending:
            self._take_pending()
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
