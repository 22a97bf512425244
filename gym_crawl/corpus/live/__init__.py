"""The live web: a polite HTTP fetcher, WARC recording of its fetches, and a loopback test site.

* :mod:`~gym_crawl.corpus.live.fetcher` — :class:`PoliteFetcher` under a :class:`FetchPolicy` (robots.txt,
  per-host delay, one connection per host, global rate, timeouts, byte cap, content types, redirects,
  retries, scope and trap guards), returning a :class:`FetchResult` per URL;
* :mod:`~gym_crawl.corpus.live.warc_io` — :class:`WarcRecorder` writes every request/response and each
  fetch's result and the crawl's decisions to WARC; :func:`read_fetches` / :func:`read_decisions` /
  :func:`read_warcinfo` read them back;
* :mod:`~gym_crawl.corpus.live.serve` — :func:`serve_site`, :func:`serve_corpus` and :func:`serve_folder`
  run a multi-host HTTP site on 127.0.0.0/8 that can misbehave on purpose.

The HTTP and WARC libraries come with the ``web`` extra: ``pip install 'gym-crawl[web]'``.
"""
from __future__ import annotations

from gym_crawl.corpus.live.fetcher import FETCH_ERRORS, Exchange, FetchPolicy, FetchResult, PoliteFetcher
from gym_crawl.corpus.live.serve import Response, Site, serve_corpus, serve_folder, serve_site
from gym_crawl.corpus.live.warc_io import WarcRecorder, read_decisions, read_fetches, read_warcinfo

__all__ = ["FETCH_ERRORS", "Exchange", "FetchPolicy", "FetchResult", "PoliteFetcher", "Response", "Site",
           "WarcRecorder", "read_decisions", "read_fetches", "read_warcinfo", "serve_corpus", "serve_folder",
           "serve_site"]
