"""Deploy an agent as a polite live crawler: ``gym-crawl crawl --live URL ... --agent NAME``, or
:func:`crawl_live` from Python.

:func:`crawl_live` builds a :class:`~gym_crawl.web.LiveWeb` over the seed URLs (a
:class:`~gym_crawl.web.fetcher.PoliteFetcher` on worker threads, recording every request and response to a WARC
file), the env the agent needs (:func:`gym_crawl.agents.make_env_for`, with ``concurrency`` pages in flight and
at most ``per_host`` per host), and runs the agent through ``env.step`` — the same action path as offline, so
the decisions are the ones the agent would take on a compiled copy of the site under the same arrivals. Each
step's decision (step, the page dispatched and its URL, the pages that landed, the reward, the last fetch
error, the best link score and the agent's own score when it exposes one as ``last_score``) goes into the WARC
as a metadata record, beside the web's record of arrivals that replays the crawl bit for bit.

A progress line goes to stderr (steps, pages, relevant, harvest rate, pages in flight, requests on the wire,
refusals, fetch errors, frontier, pages per second, the busiest hosts' rates): rewritten in place on a
terminal, a line every ``progress_every`` seconds otherwise. SIGINT (Ctrl-C) and SIGTERM stop the crawl at once:
the fetches in progress are cancelled (within a fraction of a second, not recorded, so a resume fetches them
again) and the episode ends after that step; the WARC is closed either way, so it is valid and a later
``resume=True`` run continues it: the recorded arrivals are replayed from the file (no request), the agent
makes the same decisions under the same seed, and the crawl goes on over the network from where it stopped.

The counters of :class:`LiveCrawlResult` say what happened: ``steps``, ``pages`` (fetched with content),
``steps_without_page`` (steps whose page gave none: a fetch error, an invalid action), ``requests_wire``
(requests that left on a connection, robots.txt included), ``refused`` (discovered URLs never offered, by
reason), ``errors`` (fetch errors by kind), ``robots`` (origins by what their robots.txt gave: ``parsed``,
``unavailable``, ``unreachable:timeout`` — an unreachable or incomplete one disallows the origin), and the wall
and CPU time.
"""
from __future__ import annotations

import contextlib
import math
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import gymnasium as gym
import numpy as np

from gym_crawl.agents.base import Agent
from gym_crawl.agents.factory import make_env_for
from gym_crawl.agents.runner import EpisodeResult, run_episode

__all__ = ["CRAWL_KIND", "DECISION_TYPE", "LiveCrawlResult", "crawl_live"]

#: ``type`` of the WARC metadata record of one crawl decision
DECISION_TYPE = "gym_crawl.decision"
#: ``kind`` of the WARC metadata record of a crawl's settings (one per run; a resumed run must match them)
CRAWL_KIND = "crawl"
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
                "discovered": int(c.get("discovered", 0)), "cache_hits": int(c.get("cache_hits", 0))}


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
    """Passes every step through and writes its decision into the WARC (a metadata record per step)."""

    def __init__(self, env: gym.Env, web: Any, recorder: Any, agent: Agent):
        super().__init__(env)
        self.web, self.recorder, self.agent = web, recorder, agent
        self.urls: list[str | None] = []
        self.dispatched: list[int] = []
        self.invalid = 0

    def step(self, action: Any) -> Any:
        obs, r, term, trunc, info = self.env.step(action)
        p = int(info["dispatched_page"])
        self.urls.append(self.web.url(p) if p >= 0 else None)
        if p >= 0:
            self.dispatched.append(p)
        else:
            self.invalid += 1
        if self.recorder is not None:
            score = getattr(self.agent, "last_score", None)
            landed = [self.web.url(int(q)) for q in info["landed_pages"] if q >= 0]
            self.recorder.write_decision({
                "type": DECISION_TYPE, "step": int(info["steps"]), "action": int(action), "page": p,
                "url": self.web.url(p) if p >= 0 else None, "landed": landed, "reward": float(r),
                "relevant": bool(info["relevant"]), "fetch_error": info["fetch_error"],
                "invalid_action": bool(info["invalid_action"]), "in_flight": int(info["in_flight"]),
                "link_score": float(self.env.unwrapped.view.link_scores(np.array([p]))[0]) if p >= 0 else None,
                "agent_score": None if score is None else float(score)})
        return obs, r, term, trunc, info


def _no_page(web: Any, page: int) -> bool:
    """Whether the dispatched ``page`` gave no page: it landed with an error, or (in flight at the end) its
    drained result has one."""
    if web.is_fetched(page):
        return bool(web.fetch_error(page))
    res = web.cached_result(page)
    return res is None or getattr(res, "error", None) is not None


def _check_resumable(warc: Path, settings: dict[str, Any]) -> None:
    """Refuse to resume a crawl recorded with other settings: its arrivals would not replay."""
    from gym_crawl.web.warc_io import read_first_warcinfo, read_metadata

    if not warc.exists() or warc.stat().st_size == 0:
        return  # nothing recorded yet: as a new file
    read_first_warcinfo(warc)  # not a WARC, or damaged at its start: one line naming the file
    for rec in read_metadata(warc, CRAWL_KIND):
        diff = [k for k in ("concurrency", "per_host", "seed", "topic", "agent") if rec.get(k) != settings[k]]
        if diff:
            raise ValueError(f"warc {str(warc)!r} was crawled with {', '.join(f'{k}={rec.get(k)!r}' for k in diff)}; "
                             f"this run has {', '.join(f'{k}={settings[k]!r}' for k in diff)}: resume with the same "
                             f"agent, seed, topic, concurrency and per-host limit")
        return


def crawl_live(agent: Agent, seeds: list[str], *, max_pages: int, warc: str | Path | None, topic: str,
               seed: int = 0, scope: str = "hosts", delay: float | None = None, contact: str | None = None,
               text: Any = None, resume: bool = False, overwrite: bool = False, capacity: int | None = None,
               policy: Any = None,
               fetch: Any = None, env_overrides: dict[str, Any] | None = None, progress: TextIO | None = sys.stderr,
               progress_every: float = 5.0, handle_signals: bool = True, concurrency: int = 1, per_host: int = 1,
               rate: float | None = _POLICY_DEFAULT_RATE, offer: Any = None) -> LiveCrawlResult:
    """Crawl the live web from ``seeds`` with ``agent`` for at most ``max_pages`` steps (see the module docstring).

    :param agent: any agent (``gym_crawl.agents.make_agent(name)``, a loaded trained one ...).
    :param seeds: seed URLs (the servers' URLs for a loopback deployment).
    :param max_pages: the step budget (one page dispatched per step).
    :param warc: the WARC file to record to (``None``: nothing recorded).
    :param topic: what the crawl looks for (words, or a topic name of ``text``).
    :param seed: the agent's and env's seed.
    :param scope: ``"hosts"`` (the seeds' hosts), ``"domain"`` or ``"any"``.
    :param delay: the per-host delay in seconds (default: the policy's 1 s); :param contact: a contact URL for
        the User-Agent; :param rate: requests per second over all hosts (``None``: no global limit) — these three
        build ``policy`` when none is given.
    :param text: the reference text model or corpus (normally the one the agent was trained on); ``None``: the
        general English model (:mod:`gym_crawl.text.general`; ``env_overrides={"text": {"general": False}}``
        hashes every word instead).
    :param resume: continue ``warc`` (see the module docstring).
    :param capacity: the web's page capacity (default ``max(10_000, 50 × max_pages)``).
    :param policy: a :class:`~gym_crawl.web.fetcher.FetchPolicy` (then ``delay``/``contact``/``rate`` are ignored).
    :param fetch: a fetch function instead of the polite fetcher (tests, replays; then no WARC is written).
    :param env_overrides: more env keywords (``features``, ``reducer``, ``max_candidates`` ...).
    :param progress: where the progress line goes (``None``: nowhere); :param progress_every: seconds between
        lines off a terminal.
    :param handle_signals: stop cleanly on SIGINT/SIGTERM (main thread only).
    :param concurrency: pages in flight at most (Scrapy's ``CONCURRENT_REQUESTS``); :param per_host: per host
        (each host is still fetched one request at a time, with its delay).
    :param offer: the web's :class:`~gym_crawl.web.offer.OfferRules` (default: all on).
    :param overwrite: replace an existing ``warc`` file (without ``resume``; an existing file is otherwise
        refused).
    :returns: a :class:`LiveCrawlResult`.
    """
    from gym_crawl.web.live import LiveWeb

    if isinstance(max_pages, bool) or not isinstance(max_pages, int) or max_pages < 1:
        raise ValueError(f"max_pages must be an integer >= 1, got {max_pages!r}")
    for name, v in (("concurrency", concurrency), ("per_host", per_host)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    cap = capacity if capacity is not None else max(10_000, 50 * max_pages)
    settings = {"concurrency": concurrency, "per_host": per_host, "seed": seed, "topic": topic,
                "agent": getattr(agent, "name", type(agent).__name__)}
    if resume and warc is not None and Path(warc).exists():
        _check_resumable(Path(warc), settings)
    if fetch is None:
        from gym_crawl.web.fetcher import FetchPolicy

        if policy is None:
            kw: dict[str, Any] = {"rate": rate}
            if delay is not None:
                kw["delay"] = float(delay)
            if contact is not None:
                kw["contact"] = contact
            policy = FetchPolicy(**kw)
        web = LiveWeb(seeds, policy=policy, warc=warc, resume=resume, overwrite=overwrite, text=text, scope=scope,
                      max_pages=cap, offer=offer)
    else:
        web = LiveWeb(seeds, fetch=fetch, text=text, scope=scope, max_pages=cap, offer=offer)
    env = make_env_for(agent, corpus=web, topic=topic, max_episode_steps=max_pages, concurrency=concurrency,
                       per_host=per_host, **(env_overrides or {}))
    t0, c0 = time.monotonic(), time.process_time()  # the crawl, from its reset (not the text model's build)
    base = env.unwrapped
    stop: dict[str, str | None] = {"by": None}
    old: dict[int, Any] = {}
    if handle_signals:
        def _stop(signum: int, frame: Any) -> None:
            stop["by"] = signal.Signals(signum).name
            web.cancel()  # the fetch in progress ends within a fraction of a second

        for s in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(ValueError):  # not the main thread: the caller handles signals
                old[s] = signal.signal(s, _stop)
    show = _Progress(web, progress, progress_every) if progress is not None else None
    if web.recorder is not None:
        web.recorder.write_metadata(CRAWL_KIND, settings)
    rec_env = _DecisionRecorder(env, web, web.recorder, agent)

    def on_step(t: int, info: dict) -> None:
        if show is not None:
            show(info)

    try:
        res = run_episode(rec_env, agent, seed=seed, on_step=on_step, should_stop=lambda: stop["by"] is not None)
        if show is not None:
            show({"steps": res.steps, "relevant_found": res.relevant_found, "harvest_rate": res.harvest_rate,
                  "frontier_size": int(base.view.frontier_pages().size)}, final=True)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        web.close()  # waits for the fetches in flight, closes the WARC: valid, resumable
        env.close()
    seconds, cpu = time.monotonic() - t0, time.process_time() - c0
    no_page = rec_env.invalid + sum(_no_page(web, p) for p in rec_env.dispatched)
    return LiveCrawlResult(episode=res, stats={k: int(v) for k, v in web.stats.items()}, stopped_by=stop["by"],
                           warc=None if warc is None else str(warc), fetched_urls=rec_env.urls,
                           landed_urls=[web.url(int(p)) for p in res.fetched],
                           counters=web.counters(), steps_without_page=no_page, seconds=seconds, cpu_seconds=cpu,
                           concurrency=concurrency, per_host=per_host)
