"""Deploy an agent as a polite live crawler: ``gym-crawl crawl --live URL ... --agent NAME``, or
:func:`crawl_live` from Python.

:func:`crawl_live` takes the crawl's :class:`~gym_crawl.web.settings.LiveCrawlSettings` (seeds, topic, budget,
concurrency, policy ...; recorded in the WARC's warcinfo and checked on resume), builds a
:class:`~gym_crawl.web.LiveWeb` over the seed URLs (a
:class:`~gym_crawl.web.fetcher.PoliteFetcher` on worker threads, recording every request and response to a WARC
file), the env the agent needs (:func:`gym_crawl.agents.make_env_for`, with ``concurrency`` pages in flight and
at most ``per_host`` per host), and runs the agent through ``env.step`` — the same action path as offline, so
the decisions are the ones the agent would take on a compiled copy of the site under the same arrivals. Each
step's decision (step, the page dispatched and its URL, the pages that landed, the reward, the last fetch
error, the best link score and the agent's own score when it exposes one as ``last_score``) goes into the WARC
as a metadata record, beside the web's record of arrivals that replays the crawl bit for bit.

A progress line goes to stderr (steps, pages, relevant, harvest rate, pages in flight, requests on the wire,
refusals, fetch errors, frontier, pages per second, the busiest hosts' rates): rewritten in place on a
terminal, a line every ``progress_every`` seconds otherwise. SIGINT (Ctrl-C) and SIGTERM stop the crawl at once,
whenever they come — while the seeds are fetched, during the steps, or while the last pages in flight finish
after the last step: the fetches in progress are cancelled (within a fraction of a second, not recorded, so a
resume fetches them again), every fetch that completed is written to the WARC (as it completes, so even a
SIGKILL loses at most the pages in flight), and the episode ends after that step; the WARC is closed either
way, so it is valid and a later ``resume=True`` run continues it: the recorded arrivals are replayed from the
file (no request), the agent makes the same decisions under the same seed (their decision records are not
written twice: resuming a finished crawl adds nothing to its file), and the crawl goes on over the network from
where it stopped.

The counters of :class:`LiveCrawlResult` say what happened: ``steps``, ``pages`` (fetched with content),
``steps_without_page`` (steps whose page gave none: a fetch error, an invalid action), ``requests_wire``
(requests that left on a connection, robots.txt included), ``refused`` (discovered URLs never offered, by
reason), ``errors`` (fetch errors by kind), ``robots`` (origins by what their robots.txt gave: ``parsed``,
``unavailable``, ``unreachable:timeout`` — an unreachable or incomplete one disallows the origin), the wall
and CPU time, ``reset_reward`` (the seeds' rewards: ``reward_sum`` is it plus the step rewards) and
``after_last_step`` (the pages in flight at the last step: cancelled before their request went out, or fetched
after it — recorded and marked in the WARC, not part of the crawl). :func:`read_account` reads the same account
back from the WARC: the ``reset`` record plus the decision records.
"""
from __future__ import annotations

import contextlib
import json
import math
import signal
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import gymnasium as gym
import numpy as np

from gym_crawl.agents.base import Agent
from gym_crawl.agents.factory import env_kwargs_for, make_env_for
from gym_crawl.agents.runner import EpisodeResult, run_episode

if TYPE_CHECKING:  # the web layer is imported when a crawl runs, not with the command line
    from gym_crawl.web.settings import LiveCrawlSettings

__all__ = ["AGENT_FIELD", "CRAWL_KIND", "DECISION_TYPE", "JUDGE_KIND", "JUDGE_MAPPINGS", "RESET_KIND",
           "LiveCrawlResult", "crawl_live", "live_judge", "read_account", "recorded_judge"]

#: ``type`` of the WARC metadata record of one crawl decision
DECISION_TYPE = "gym_crawl.decision"
#: ``kind`` of the WARC metadata record of a crawl's settings (one per run; a resumed run must match them)
CRAWL_KIND = "crawl"
#: ``kind`` of the WARC metadata record of an episode's reset: the seeds that landed and their rewards, which open
#: the account (``reward_sum`` = this reward + the rewards of the decision records)
RESET_KIND = "reset"
#: the warcinfo field naming the agent of a crawl (beside its settings, ``gym-crawl-settings``)
AGENT_FIELD = "gym-crawl-agent"
#: ``kind`` of the WARC metadata record of a crawl's judge built from examples (its JSON, one per crawl)
JUDGE_KIND = "judge"
_POLICY_DEFAULT_RATE = 10.0


@dataclass
class LiveCrawlResult:
    """What a live crawl did: the episode summary, the web's counters, and whether a signal stopped it.

    :param episode: the agent's episode (steps, relevant pages, rewards ...).
    :param stats: the web's raw counters (:attr:`gym_crawl.web.LiveWeb.stats`).
    :param stopped_by: ``"SIGINT"`` / ``"SIGTERM"`` when a signal stopped the crawl, else ``None``.
    :param warc: the WARC file, or ``None``.
    :param fetched_urls: the URL each step dispatched, in step order (``None`` for an invalid step).
    :param landed_urls: the URLs of the pages fetched, in the order they landed (seeds first).
    :param counters: the web's :meth:`~gym_crawl.web.LiveWeb.counters` at the end.
    :param steps_without_page: steps whose page gave no page (a fetch error, or an invalid action).
    :param seconds: wall seconds of the crawl (reset included); :param cpu_seconds: the process' CPU seconds
        over the same span (every thread).
    :param concurrency: pages in flight at most; :param per_host: per host.
    :param settings: the crawl's :class:`~gym_crawl.web.settings.LiveCrawlSettings`.
    :param reset_reward: the rewards of the seeds, landed at reset (``episode.reward_sum`` is this plus the
        step rewards).
    :param judge: what judged the pages relevant (:meth:`gym_crawl.relevance.judge.Judge.describe`;
        ``{"kind": "words"}``: the topic words, the default).
    """

    episode: EpisodeResult
    stats: dict[str, int]
    stopped_by: str | None
    warc: str | None
    fetched_urls: list[str | None] = field(default_factory=list)
    landed_urls: list[str] = field(default_factory=list)
    counters: dict[str, Any] = field(default_factory=dict)
    steps_without_page: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    concurrency: int = 1
    per_host: int = 1
    settings: LiveCrawlSettings | None = None
    reset_reward: float = 0.0
    judge: dict[str, Any] = field(default_factory=lambda: {"kind": "words"})

    @property
    def pages_per_second(self) -> float:
        """Pages fetched with content per wall second."""
        return self.counters.get("pages", 0) / self.seconds if self.seconds > 0 else 0.0

    def summary(self) -> dict[str, Any]:
        c = self.counters
        pages = int(c.get("pages", 0))
        return {**self.episode.summary(), "stopped_by": self.stopped_by, "warc": self.warc,
                "concurrency": self.concurrency, "per_host": self.per_host, "pages": pages,
                "steps_without_page": self.steps_without_page,
                "requests_wire": int(c.get("requests_wire", 0)), "fetches": int(c.get("fetches", 0)),
                "refused": dict(c.get("refused", {})), "errors": dict(c.get("errors", {})),
                "robots": dict(c.get("robots", {})),
                "wall_seconds": round(self.seconds, 3), "cpu_seconds": round(self.cpu_seconds, 3),
                "pages_per_second": round(self.pages_per_second, 2),
                "cpu_ms_per_page": round(1000 * self.cpu_seconds / pages, 3) if pages else None,
                "discovered": int(c.get("discovered", 0)), "cache_hits": int(c.get("cache_hits", 0)),
                "reset_reward": self.reset_reward, "after_last_step": dict(c.get("after_last_step", {})),
                "aside_fetches": int(c.get("aside_fetches", 0)), "judge": dict(self.judge)}


#: the reward a judge's verdict maps to, by the reward name the crawl would otherwise use: (relevant, other)
JUDGE_MAPPINGS = {"han2018": (30.0, -1.0), "thesis": (30.0, -1.0), "binary": (1.0, 0.0)}


def live_judge(settings: LiveCrawlSettings, web: Any, agent: Agent | None = None) -> tuple[Any, int]:
    """The judge reward of a crawl with example pages (:mod:`gym_crawl.relevance.judge`), and how many example
    URLs it fetched: ``(None, 0)`` without examples (the topic words judge, through the env's reward). The examples'
    files are read, their URLs fetched through ``web``'s own polite fetcher (:meth:`~gym_crawl.web.LiveWeb.fetch_aside`:
    recorded, counted); the reward mapping follows the reward the crawl would use (``settings.reward``, else the
    agent's, else ``han2018``): :data:`JUDGE_MAPPINGS`. Raises ``ValueError`` naming the flag and the example at
    fault, or a reward that has no mapping."""
    if not settings.examples:
        return None, 0
    from gym_crawl.relevance.judge import JudgeReward, JudgeText, build_judge
    from gym_crawl.tokenize import tokenize
    from gym_crawl.web.example_pages import example_from_fetch, read_example_pages

    defaults = getattr(agent, "env_defaults", None) or {}
    name = settings.reward or defaults.get("reward") or "han2018"
    if not isinstance(name, str) or name not in JUDGE_MAPPINGS:
        raise ValueError(f"--reward {name}: with --examples the judge gives the reward; its mapping is one of "
                         f"{', '.join(f'{k} ({h:g} / {m:g})' for k, (h, m) in JUDGE_MAPPINGS.items())}")
    texts: dict[str, list[str]] = {}
    sources: dict[str, list[str]] = {}
    fetched = 0
    for key, flag in (("examples", "--examples"), ("counter_examples", "--counter-examples")):
        specs = read_example_pages(getattr(settings, key), flag)
        pages = list(specs.pages)
        for url in specs.urls:
            pages.append(example_from_fetch(web.fetch_aside(url), flag))
            fetched += 1
        texts[key], sources[key] = [p.text for p in pages], [p.source for p in pages]
    judge = build_judge(tokenize(settings.topic), texts["examples"], texts["counter_examples"], sources=sources,
                        space=JudgeText.default(settings.general_text))
    hit, miss = JUDGE_MAPPINGS[name]
    return JudgeReward(judge, hit=hit, miss=miss), fetched


def recorded_judge(warc: str | Path, space: Any = None) -> Any:
    """The judge a live crawl recorded in ``warc`` (its ``judge`` metadata record: a crawl with example pages), as an
    :class:`~gym_crawl.relevance.judge.ExampleJudge` in ``space`` (default: the process' text space) — give it to a
    replay as ``reward=JudgeReward(judge)`` for the same rewards; ``None`` when the crawl had no examples (its
    topic words judged)."""
    from gym_crawl.relevance.judge import judge_from_dict
    from gym_crawl.web.warc_io import read_metadata

    for rec in read_metadata(warc, JUDGE_KIND):
        return judge_from_dict(rec, space)
    return None


def _judged_env(agent: Agent, settings: LiveCrawlSettings, web: Any, record: bool) -> tuple[Any, Any]:
    """The env of the crawl, with the judge of its examples as the reward (:func:`live_judge`; the example URLs it
    fetched count in the budget), and that judge (``None``: the topic words). With ``record``, the judge is
    written to the WARC. Closes ``web`` when anything fails."""
    env_kw = settings.env_keywords()
    try:
        judge, aside = live_judge(settings, web, agent)
        if judge is not None:
            env_kw["reward"] = judge
            env_kw["max_episode_steps"] = settings.max_pages - aside
            if env_kw["max_episode_steps"] < 1:
                raise ValueError(f"--max-pages {settings.max_pages} leaves no step after fetching the {aside} example "
                                 f"URL(s), which count in the budget")
            if web.recorder is not None and record:
                web.recorder.write_metadata(JUDGE_KIND, judge.judge.to_dict())
        return make_env_for(agent, corpus=web, **env_kw), judge
    except BaseException:
        web.close()
        raise


class _Progress:
    """The progress line (see the module docstring)."""

    def __init__(self, web: Any, stream: TextIO, every: float):
        self.web, self.stream, self.every = web, stream, every
        try:
            self.tty = stream.isatty()
        except (AttributeError, ValueError):
            self.tty = False
        self.t0 = time.monotonic()
        self.last = -math.inf

    def line(self, info: dict) -> str:
        dt = max(time.monotonic() - self.t0, 1e-9)
        web = self.web
        n = web.n_discovered
        per_host = np.bincount(web.page_domain[:n][web.page_state[:n] != 0], minlength=len(web.domains))
        top = np.argsort(-per_host, kind="stable")[:3]
        rates = ", ".join(f"{web.domains[int(d)]} {per_host[d] / dt:.2f}/s" for d in top if per_host[d])
        c = web.counters()
        return (f"steps {info.get('steps', 0)}  pages {c['pages']}  relevant {info['relevant_found']}  harvest "
                f"{info['harvest_rate']:.3f}  in flight {info.get('in_flight', 0)}  wire {c['requests_wire']}  "
                f"refused {sum(c['refused'].values())}  errors {sum(c['errors'].values())}  frontier "
                f"{info['frontier_size']}  {c['pages'] / dt:.1f} pages/s  [{rates}]")

    def __call__(self, info: dict, final: bool = False) -> None:
        now = time.monotonic()
        if not final and now - self.last < (0.2 if self.tty else self.every):
            return
        self.last = now
        text = self.line(info)
        if self.tty:
            self.stream.write("\r\x1b[K" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


class _DecisionRecorder(gym.Wrapper):
    """Passes every step through and writes its decision into the WARC (a metadata record per step, after a
    ``reset`` record of the seeds' rewards), but for the steps ``recorded`` already (a resumed crawl replaying its
    file, whose reset record is there too)."""

    def __init__(self, env: gym.Env, web: Any, recorder: Any, agent: Agent, recorded: int = 0):
        super().__init__(env)
        self.web, self.recorder, self.agent, self.recorded = web, recorder, agent, recorded
        self.urls: list[str | None] = []
        self.dispatched: list[int] = []
        self.invalid = 0
        self.reset_reward = 0.0

    def reset(self, **kwargs: Any) -> Any:
        obs, info = self.env.reset(**kwargs)
        self.reset_reward = float(info["reward_sum"])
        if self.recorder is not None and not self.recorded:  # the seeds landed: their rewards open the account
            seeds = [self.web.url(int(q)) for q in self.env.unwrapped.view.fetched_pages()]
            self.recorder.write_metadata(RESET_KIND, {"landed": seeds, "reward": self.reset_reward,
                                                      "reward_sum": float(info["reward_sum"])})
        return obs, info

    def step(self, action: Any) -> Any:
        obs, r, term, trunc, info = self.env.step(action)
        p = int(info["dispatched_page"])
        self.urls.append(self.web.url(p) if p >= 0 else None)
        if p >= 0:
            self.dispatched.append(p)
        else:
            self.invalid += 1
        if self.recorder is not None and int(info["steps"]) > self.recorded:
            score = getattr(self.agent, "last_score", None)
            landed = [self.web.url(int(q)) for q in info["landed_pages"] if q >= 0]
            self.recorder.write_decision({
                "type": DECISION_TYPE, "step": int(info["steps"]), "action": int(action), "page": p,
                "url": self.web.url(p) if p >= 0 else None, "landed": landed, "reward": float(r),
                "reward_sum": float(info["reward_sum"]),
                "relevant": bool(info["relevant"]), "fetch_error": info["fetch_error"],
                "invalid_action": bool(info["invalid_action"]), "in_flight": int(info["in_flight"]),
                "link_score": float(self.env.unwrapped.view.link_scores(np.array([p]))[0]) if p >= 0 else None,
                "agent_score": None if score is None else float(score)})
        return obs, r, term, trunc, info


def _no_page(web: Any, page: int) -> bool:
    """Whether the dispatched ``page`` gave no page: it landed with an error, or (in flight at the end) its
    result, fetched after the last step, has one. A page cancelled at the end before its request went out is not
    a step without a page (it is counted in ``after_last_step``)."""
    if web.is_fetched(page):
        return bool(web.fetch_error(page))
    res = web.cached_result(page)
    return res is not None and getattr(res, "error", None) is not None


def _check_resumable(warc: Path, settings: LiveCrawlSettings, agent_name: str) -> None:
    """Refuse to resume a crawl recorded with other settings or another agent: its arrivals would not replay.
    The settings recorded in the first warcinfo record are compared field by field
    (:meth:`~gym_crawl.web.settings.LiveCrawlSettings.differences`); a WARC recorded before settings were
    recorded is compared on its ``crawl`` record (agent, seed, topic, concurrency, per-host limit)."""
    from gym_crawl.web.settings import recorded_settings
    from gym_crawl.web.warc_io import read_first_warcinfo, read_metadata

    if not warc.exists() or warc.stat().st_size == 0:
        return  # nothing recorded yet: as a new file
    recorded = recorded_settings(warc)  # not a WARC, or damaged at its start: one line naming the file
    if recorded is not None:
        diff = [(k, theirs, mine) for k, theirs, mine in settings.differences(recorded)]
        theirs_agent = read_first_warcinfo(warc).get(AGENT_FIELD)
        if theirs_agent and theirs_agent != agent_name:
            diff.insert(0, ("agent", theirs_agent, agent_name))
        if diff:
            raise ValueError(f"warc {str(warc)!r} was crawled with other settings: "
                             f"{'; '.join(f'{k}={a!r} (this run: {b!r})' for k, a, b in diff)}; resume with the "
                             f"same settings (only max_pages and the policy's timing may change)")
        return
    mine = {"concurrency": settings.concurrency, "per_host": settings.per_host, "seed": settings.seed,
            "topic": settings.topic, "agent": agent_name}
    for rec in read_metadata(warc, CRAWL_KIND):
        old = [k for k in ("concurrency", "per_host", "seed", "topic", "agent") if rec.get(k) != mine[k]]
        if old:
            raise ValueError(f"warc {str(warc)!r} was crawled with other settings: "
                             f"{'; '.join(f'{k}={rec.get(k)!r} (this run: {mine[k]!r})' for k in old)}; resume "
                             f"with the same agent, seed, topic, concurrency and per-host limit")
        return


def _recorded_progress(warc: Path) -> tuple[bool, int]:
    """What a WARC being resumed holds of this crawl already: whether its ``crawl`` settings record, and the last
    step whose decision it records (0: none) — the resumed run writes neither again."""
    from gym_crawl.web.warc_io import read_decisions, read_metadata

    if not warc.exists() or warc.stat().st_size == 0:
        return False, 0
    steps = max((int(d.get("step", 0)) for d in read_decisions(warc) if d.get("type") == DECISION_TYPE), default=0)
    return any(True for _ in read_metadata(warc, CRAWL_KIND)), steps


def _stop_on_signals(web: Any, stop: dict[str, str | None]) -> dict[int, Any]:
    """Make SIGINT and SIGTERM stop the crawl (``stop["by"]`` names the signal) and cancel the web's fetches in
    flight (they end within a fraction of a second); returns the handlers replaced (none off the main thread,
    where the caller handles signals)."""
    def _stop(signum: int, frame: Any) -> None:
        stop["by"] = signal.Signals(signum).name
        web.cancel()

    old: dict[int, Any] = {}
    for s in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError):  # not the main thread
            old[s] = signal.signal(s, _stop)
    return old


def _close(web: Any, env: Any, handlers: dict[int, Any]) -> None:
    """Close the web (the fetches in flight finish and are written as each completes; the WARC is closed) and the
    env, then put back the signal ``handlers``: until then a signal cancels what is in flight instead of killing
    the process with completed fetches unwritten."""
    try:
        web.close()
        env.close()
    finally:
        for s, h in handlers.items():
            signal.signal(s, h)


def _episode(env: Any, agent: Agent, seed: int, on_step: Any, stopped: Any) -> EpisodeResult | None:
    """The crawl's episode, or ``None`` when a signal stopped it before its first step (the seeds' fetches were
    cancelled, so the reset found no frontier: that is the stop, not an error)."""
    try:
        return run_episode(env, agent, seed=seed, on_step=on_step, should_stop=stopped)
    except Exception:
        if not stopped():
            raise
        return None


def _no_episode(agent_name: str, topic: str, reset_seconds: float) -> EpisodeResult:
    """The episode of a crawl stopped before its first step (a signal while the seeds were fetched)."""
    return EpisodeResult(agent=agent_name, topic=topic, steps=0, relevant_found=0, pages_fetched=0, harvest_rate=0.0,
                         relevant_domains=0, reward_sum=0.0, seconds=0.0, reset_seconds=reset_seconds,
                         relevant_curve=np.zeros(0, np.int32), rewards=np.zeros(0, np.float64),
                         fetched=np.zeros(0, np.int64))


def _page_capacity(settings: LiveCrawlSettings, warc: str | Path | None, resume: bool) -> int:
    """The web's page capacity: the settings', but a resumed crawl whose settings leave it to the budget
    (``capacity=None``) keeps the capacity its WARC was recorded with, so a larger ``max_pages`` continues it."""
    if not (resume and settings.capacity is None and warc is not None and Path(warc).is_file()
            and Path(warc).stat().st_size):
        return settings.page_capacity
    from gym_crawl.web.live import CONFIG_FIELD
    from gym_crawl.web.warc_io import read_first_warcinfo

    raw = read_first_warcinfo(Path(warc)).get(CONFIG_FIELD)
    try:
        cap = json.loads(raw)["max_pages"] if isinstance(raw, str) else None
    except (ValueError, KeyError, TypeError):
        cap = None
    return int(cap) if isinstance(cap, int) and cap >= 1 else settings.page_capacity


#: the keywords ``crawl_live`` took before :class:`~gym_crawl.web.settings.LiveCrawlSettings` (deprecated)
_LEGACY = ("seeds", "max_pages", "topic", "seed", "scope", "delay", "contact", "rate", "capacity", "policy",
           "env_overrides", "concurrency", "per_host", "offer")


def _settings_from_keywords(seeds: Any, *, max_pages: int, topic: str, seed: int = 0, scope: str = "hosts",
                           delay: float | None = None, contact: str | None = None,
                           rate: float | None = _POLICY_DEFAULT_RATE, capacity: int | None = None, policy: Any = None,
                           env_overrides: dict[str, Any] | None = None, concurrency: int = 1, per_host: int = 1,
                           offer: Any = None) -> LiveCrawlSettings:
    """The :class:`~gym_crawl.web.settings.LiveCrawlSettings` of ``crawl_live``'s former keywords: ``delay``,
    ``contact`` and ``rate`` build the policy when none is given; ``env_overrides`` fill the env fields
    (``features``, ``reducer``, ``max_candidates``, a reward name, ``domain_cap``, ``text={"general": ...}``) and
    ``env`` with the rest."""
    from gym_crawl.web.offer import OfferRules
    from gym_crawl.web.policy import FetchPolicy
    from gym_crawl.web.settings import LiveCrawlSettings

    if policy is None:
        kw: dict[str, Any] = {"rate": rate}
        if delay is not None:
            kw["delay"] = float(delay)
        if contact is not None:
            kw["contact"] = contact
        policy = FetchPolicy(**kw)
    return LiveCrawlSettings(seeds=tuple(seeds) if not isinstance(seeds, str) else seeds, topic=topic,
                             max_pages=max_pages, seed=seed, scope=scope, concurrency=concurrency, per_host=per_host,
                             policy=policy, offer=offer if offer is not None else OfferRules(), capacity=capacity,
                             **LiveCrawlSettings.env_fields(env_overrides))


def _resolve_settings(settings: Any, legacy: dict[str, Any]) -> LiveCrawlSettings:
    """``settings`` when it is a :class:`~gym_crawl.web.settings.LiveCrawlSettings` (and no former keyword is
    given); else the settings of the former keywords (``settings`` then holds the seeds, if given), with a
    ``DeprecationWarning`` attributed to ``crawl_live``'s caller."""
    from gym_crawl.web.settings import LiveCrawlSettings

    if not isinstance(settings, LiveCrawlSettings):
        unknown = sorted(set(legacy) - set(_LEGACY))
        if unknown:
            raise TypeError(f"crawl_live() got unexpected keyword arguments {unknown}")
        if settings is not None:
            if "seeds" in legacy:
                raise TypeError("crawl_live() got seeds both as its second argument and as seeds=")
            legacy["seeds"] = settings
        if "seeds" not in legacy:
            raise TypeError("crawl_live() needs settings: crawl_live(agent, LiveCrawlSettings(seeds=..., topic=..., "
                            "max_pages=...))")
        warnings.warn("crawl_live(agent, seeds, max_pages=..., topic=..., ...) is deprecated: pass "
                      "crawl_live(agent, LiveCrawlSettings(seeds=..., topic=..., max_pages=..., ...), warc=...)",
                      DeprecationWarning, stacklevel=3)
        return _settings_from_keywords(legacy.pop("seeds"), **legacy)
    if legacy:
        raise TypeError(f"crawl_live() got keyword arguments {sorted(legacy)} beside settings: set them in the "
                        f"settings (LiveCrawlSettings.replace(...))")
    return settings


def crawl_live(agent: Agent, settings: LiveCrawlSettings | Any = None, *, warc: str | Path | None = None,
               resume: bool = False, overwrite: bool = False, text: Any = None, fetch: Any = None,
               progress: TextIO | None = sys.stderr, progress_every: float = 5.0, handle_signals: bool = True,
               **legacy: Any) -> LiveCrawlResult:
    """Crawl the live web with ``agent`` as ``settings`` say (see the module docstring).

    :param agent: any agent (``gym_crawl.agents.make_agent(name)``, a loaded trained one ...).
    :param settings: what the crawl does: seeds, topic, budget, seed, scope, concurrency, fetch policy, offer
        rules, env keywords (:class:`~gym_crawl.web.settings.LiveCrawlSettings`); recorded in the WARC's
        warcinfo and checked on ``resume``.
    :param warc: the WARC file to record to (``None``: nothing recorded).
    :param resume: continue ``warc`` (see the module docstring); its recorded settings must equal ``settings``
        but for the budget and the policy's timing.
    :param overwrite: replace an existing ``warc`` file (without ``resume``; an existing file is otherwise
        refused).
    :param text: the reference text model or corpus (normally the one the agent was trained on); ``None``: the
        one a saved model recorded (:meth:`gym_crawl.agents.env_config.EnvConfig.live_text`: a model trained on
        ``synthetic-2000`` crawls with that corpus' word vectors), else the general English model
        (:mod:`gym_crawl.text.general`; ``settings.general_text=False`` hashes every word instead). Another reference
        than the saved model's is refused, naming both.
    :param fetch: a fetch function instead of the polite fetcher (tests, replays; then no WARC is written and
        ``settings.policy`` is not used).
    :param progress: where the progress line goes (``None``: nowhere); :param progress_every: seconds between
        lines off a terminal.
    :param handle_signals: stop cleanly on SIGINT/SIGTERM (main thread only).
    :param legacy: the former keywords (``seeds`` as the second argument, ``max_pages``, ``topic``, ``seed``,
        ``scope``, ``delay``, ``contact``, ``rate``, ``capacity``, ``policy``, ``env_overrides``,
        ``concurrency``, ``per_host``, ``offer``): deprecated, they build the settings
        (:func:`_settings_from_keywords`) with a ``DeprecationWarning``.
    :returns: a :class:`LiveCrawlResult`.
    """
    from gym_crawl.web.live import LiveWeb
    from gym_crawl.web.settings import SETTINGS_FIELD

    settings = _resolve_settings(settings, legacy)
    if fetch is not None and warc is not None:
        raise ValueError("pass either fetch= or warc= (the polite fetcher records the WARC), not both")
    agent_name = getattr(agent, "name", type(agent).__name__)
    saved = getattr(agent, "env_config", None)
    if saved is not None and hasattr(saved, "live_text"):
        env_kwargs_for(agent, **settings.env_keywords())  # a setting that contradicts the saved model: refused now
        text = saved.live_text(text)  # the reference text model it was trained with (a corpus' own model)
    if resume and warc is not None and Path(warc).exists():
        _check_resumable(Path(warc), settings, agent_name)
    has_settings, recorded_steps = _recorded_progress(Path(warc)) if resume and warc is not None else (False, 0)
    seeds = list(settings.seeds)
    if fetch is None:
        info = {SETTINGS_FIELD: json.dumps(settings.to_dict(), sort_keys=True), AGENT_FIELD: agent_name}
        web = LiveWeb(seeds, policy=settings.policy, warc=warc, resume=resume, overwrite=overwrite, text=text,
                      scope=settings.scope, max_pages=_page_capacity(settings, warc, resume), offer=settings.offer,
                      max_workers=max(256, settings.concurrency), warcinfo=info)
    else:
        web = LiveWeb(seeds, fetch=fetch, text=text, scope=settings.scope, max_pages=settings.page_capacity,
                      offer=settings.offer)
    env, judge = _judged_env(agent, settings, web, record=not has_settings)
    t0, c0 = time.monotonic(), time.process_time()  # the crawl, from its reset (not the text model's build)
    base = env.unwrapped
    stop: dict[str, str | None] = {"by": None}
    old = _stop_on_signals(web, stop) if handle_signals else {}
    show = _Progress(web, progress, progress_every) if progress is not None else None
    if web.recorder is not None and not has_settings:
        web.recorder.write_metadata(CRAWL_KIND, {"concurrency": settings.concurrency, "per_host": settings.per_host,
                                                 "seed": settings.seed, "topic": settings.topic, "agent": agent_name})
    rec_env = _DecisionRecorder(env, web, web.recorder, agent, recorded=recorded_steps)

    def on_step(t: int, info: dict) -> None:
        if show is not None:
            show(info)

    try:
        res = _episode(rec_env, agent, settings.seed, on_step, lambda: stop["by"] is not None)
        if res is None:  # stopped while the seeds were fetched
            res = _no_episode(agent_name, settings.topic, time.monotonic() - t0)
        elif show is not None:
            show({"steps": res.steps, "relevant_found": res.relevant_found, "harvest_rate": res.harvest_rate,
                  "frontier_size": int(base.view.frontier_pages().size)}, final=True)
    except BaseException:
        web.cancel()  # an error or a KeyboardInterrupt: do not wait for the fetches in flight
        raise
    finally:
        _close(web, env, old)
    seconds, cpu = time.monotonic() - t0, time.process_time() - c0
    no_page = rec_env.invalid + sum(_no_page(web, p) for p in rec_env.dispatched)
    return LiveCrawlResult(episode=res, stats={k: int(v) for k, v in web.stats.items()}, stopped_by=stop["by"],
                           warc=None if warc is None else str(warc), fetched_urls=rec_env.urls,
                           landed_urls=[web.url(int(p)) for p in res.fetched],
                           counters=web.counters(), steps_without_page=no_page, seconds=seconds, cpu_seconds=cpu,
                           concurrency=settings.concurrency, per_host=settings.per_host, settings=settings,
                           reset_reward=rec_env.reset_reward,
                           judge=judge.judge.describe() if judge is not None else {"kind": "words"})


def read_account(warc: str | Path) -> dict[str, Any]:
    """The account of the crawl recorded in ``warc``, from its records alone: ``reset_reward`` (the seeds' rewards,
    the last ``reset`` record), ``step_rewards`` (the sum of the decision records' rewards, the latest record of
    each step: a resumed run records the steps it replays again), ``reward_sum`` (their total: the crawl's
    ``reward_sum``), ``steps``, and ``after_last_step`` (the last record's ``in_flight`` / ``fetched`` /
    ``cancelled`` counts, ``not_in_crawl`` URLs)."""
    from gym_crawl.web.feed import AFTER_LAST_STEP_KIND
    from gym_crawl.web.warc_io import read_decisions, read_metadata

    reset = 0.0
    for r in read_metadata(warc, RESET_KIND):
        reset = float(r["reward"])
    by_step: dict[int, float] = {}
    for d in read_decisions(warc):
        by_step[int(d["step"])] = float(d["reward"])
    after: dict[str, Any] = {"in_flight": 0, "fetched": 0, "cancelled": 0, "not_in_crawl": []}  # none in flight
    for a in read_metadata(warc, AFTER_LAST_STEP_KIND):
        after = {"in_flight": int(a["in_flight"]), "fetched": len(a["fetched"]), "cancelled": len(a["cancelled"]),
                 "not_in_crawl": list(a.get("not_in_crawl", a["fetched"]))}
    steps = sum(by_step.values())
    return {"reset_reward": reset, "step_rewards": steps, "reward_sum": reset + steps, "steps": len(by_step),
            "after_last_step": after}
