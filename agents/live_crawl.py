"""Deploy an agent as a polite live crawler: ``gym-crawl crawl --live URL ... --agent NAME``.

:func:`crawl_live` builds a :class:`~gym_crawl.web.LiveWeb` over the seed URLs (a
:class:`~gym_crawl.web.fetcher.PoliteFetcher` recording every request and response to a WARC file),
the env the agent needs (:func:`gym_crawl.agents.make_env_for`), and runs the agent through ``env.step`` —
the same action path as offline, so the decisions are the ones the agent would take on a compiled copy of
the site. Each step's decision (step, page id, URL, the reward, the fetch error, the best link score and
the agent's own score when it exposes one as ``last_score``) goes into the WARC as a metadata record.

A progress line goes to stderr (pages, relevant, harvest rate, fetch errors, frontier, requests per second
per host): rewritten in place on a terminal, a line every ``progress_every`` seconds otherwise. SIGINT
(Ctrl-C) and SIGTERM stop the crawl after the current fetch; the WARC is closed either way, so it is valid
and a later ``resume=True`` run continues it: the recorded fetches are replayed from the file (no request),
the agent makes the same decisions under the same seed, and the crawl goes on over the network from where
it stopped.
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

__all__ = ["DECISION_TYPE", "LiveCrawlResult", "crawl_live"]

#: ``type`` of the WARC metadata record of one crawl decision
DECISION_TYPE = "gym_crawl.decision"


@dataclass
class LiveCrawlResult:
    """What a live crawl did: the episode summary, the web's counters, and whether a signal stopped it."""

    episode: EpisodeResult
    stats: dict[str, int]
    stopped_by: str | None
    warc: str | None
    fetched_urls: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {**self.episode.summary(), "stopped_by": self.stopped_by, "warc": self.warc, **self.stats}


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
        return (f"pages {info['pages_fetched']}  relevant {info['relevant_found']}  harvest "
                f"{info['harvest_rate']:.3f}  errors {web.stats.get('fetch_errors', 0)}  frontier "
                f"{info['frontier_size']}  requests {web.stats.get('requests', 0)}  [{rates}]")

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
        self.urls: list[str] = []

    def step(self, action: Any) -> Any:
        obs, r, term, trunc, info = self.env.step(action)
        p = int(info["fetched_page"])
        if p >= 0:
            self.urls.append(self.web.url(p))
        if self.recorder is not None:
            score = getattr(self.agent, "last_score", None)
            self.recorder.write_decision({
                "type": DECISION_TYPE, "step": int(info["steps"]), "action": int(action), "page": p,
                "url": self.web.url(p) if p >= 0 else None, "reward": float(r), "relevant": bool(info["relevant"]),
                "fetch_error": info["fetch_error"], "invalid_action": bool(info["invalid_action"]),
                "link_score": float(self.env.unwrapped.view.link_scores(np.array([p]))[0]) if p >= 0 else None,
                "agent_score": None if score is None else float(score)})
        return obs, r, term, trunc, info


def crawl_live(agent: Agent, seeds: list[str], *, max_pages: int, warc: str | Path | None, topic: str,
               seed: int = 0, scope: str = "hosts", delay: float | None = None, contact: str | None = None,
               text: Any = None, resume: bool = False, overwrite: bool = False, capacity: int | None = None,
               policy: Any = None,
               fetch: Any = None, env_overrides: dict[str, Any] | None = None, progress: TextIO | None = sys.stderr,
               progress_every: float = 5.0, handle_signals: bool = True) -> LiveCrawlResult:
    """Crawl the live web from ``seeds`` with ``agent`` for at most ``max_pages`` steps (see the module docstring).

    ``delay``/``contact``: the fetch policy's per-host delay (seconds) and the contact URL in the
    User-Agent (used to build ``policy`` when none is given). ``text``: the reference text model or corpus
    (normally the one the agent was trained on); ``None``: the general English model
    (:mod:`gym_crawl.text.general`; ``env_overrides={"text": {"general": False}}`` hashes every word instead).
    ``capacity``: the web's page capacity (default
    ``max(10_000, 50 × max_pages)``). ``fetch``: a fetch function instead of the polite fetcher (tests,
    replays; then no WARC is written). ``overwrite``: replace an existing ``warc`` file (without ``resume``; an
    existing file is otherwise refused). ``env_overrides``: more env keywords (features, reducer, ...).
    """
    from gym_crawl.web.live import LiveWeb

    if max_pages < 1:
        raise ValueError(f"max_pages must be >= 1, got {max_pages}")
    cap = capacity if capacity is not None else max(10_000, 50 * max_pages)
    if fetch is None:
        from gym_crawl.web.fetcher import FetchPolicy

        if policy is None:
            kw: dict[str, Any] = {}
            if delay is not None:
                kw["delay"] = float(delay)
            if contact is not None:
                kw["contact"] = contact
            policy = FetchPolicy(**kw)
        web = LiveWeb(seeds, policy=policy, warc=warc, resume=resume, overwrite=overwrite, text=text, scope=scope,
                      max_pages=cap)
    else:
        web = LiveWeb(seeds, fetch=fetch, text=text, scope=scope, max_pages=cap)
    env = make_env_for(agent, corpus=web, topic=topic, max_episode_steps=max_pages, **(env_overrides or {}))
    base = env.unwrapped
    recorder = web.recorder
    stop: dict[str, str | None] = {"by": None}
    old: dict[int, Any] = {}
    if handle_signals:
        def _stop(signum: int, frame: Any) -> None:
            stop["by"] = signal.Signals(signum).name

        for s in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(ValueError):  # not the main thread: the caller handles signals
                old[s] = signal.signal(s, _stop)
    show = _Progress(web, progress, progress_every) if progress is not None else None
    rec_env = _DecisionRecorder(env, web, recorder, agent)

    def on_step(t: int, info: dict) -> None:
        if show is not None:
            show(info)

    try:
        res = run_episode(rec_env, agent, seed=seed, on_step=on_step, should_stop=lambda: stop["by"] is not None)
        if show is not None:
            show({"pages_fetched": res.pages_fetched, "relevant_found": res.relevant_found,
                  "harvest_rate": res.harvest_rate, "frontier_size": int(base.view.frontier_pages().size)}, final=True)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        web.close()  # closes the WARC: valid, resumable
        env.close()
    return LiveCrawlResult(episode=res, stats={k: int(v) for k, v in web.stats.items()}, stopped_by=stop["by"],
                           warc=None if warc is None else str(warc), fetched_urls=rec_env.urls)

