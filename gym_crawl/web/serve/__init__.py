"""Loopback HTTP sites for tests and demonstrations: a multi-host site on 127.0.0.0/8 that can misbehave.

* :mod:`~gym_crawl.web.serve.server` — :func:`serve_site` (routes per host, optional misbehaviours),
  :func:`serve_corpus` (a compiled corpus as a website) and :func:`serve_folder` (folders of static files),
  and the ``gym-crawl serve`` command;
* :mod:`~gym_crawl.web.serve.site` — the threaded server itself (:class:`Site`, :class:`Response`,
  :class:`Series`, the request log);
* :mod:`~gym_crawl.web.serve.chaos` — :func:`serve_chaos`, a seeded hostile web of many hosts and its plan
  (the standing chaos test of the live crawler);
* :mod:`~gym_crawl.web.serve.misbehave` — the named misbehaviours (:data:`MISBEHAVIOURS`: robots.txt rules,
  error statuses, redirect loops, slow and oversize pages, traps).

Only 127.0.0.0/8 is ever bound and no name is resolved.
"""
from __future__ import annotations

from gym_crawl.web.serve.misbehave import MISBEHAVIOURS, MisbehaveSettings, calendar_trap, raw_response, robots_txt
from gym_crawl.web.serve.server import serve_corpus, serve_folder, serve_site
from gym_crawl.web.serve.site import LoggedRequest, Raw, Response, Route, Series, Site, html_page, redirect

__all__ = ["MISBEHAVIOURS", "LoggedRequest", "MisbehaveSettings", "Raw", "Response", "Route", "Series", "Site",
           "calendar_trap", "html_page", "raw_response", "redirect", "robots_txt", "serve_corpus", "serve_folder",
           "serve_site"]
