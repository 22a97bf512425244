"""The web: everything that speaks URL, HTTP, HTML or WARC, and the live web a crawl fetches from.

* :mod:`~gym_crawl.web.urls` — URL canonicalisation and the text of a URL;
* :mod:`~gym_crawl.web.html_extract` — main text and links of an HTML page; :mod:`~gym_crawl.web.html_folder`
  loads a folder of HTML files as a corpus;
* :mod:`~gym_crawl.web.warc` — WARC archives compiled into a corpus (:func:`~gym_crawl.web.warc.load_warc`,
  with :mod:`~gym_crawl.web.warc_build` joining the per-file parts);
* :mod:`~gym_crawl.web.fetcher` — :class:`PoliteFetcher` under a :class:`FetchPolicy`
  (:mod:`~gym_crawl.web.policy`: robots.txt, per-host delay, one connection per host, global rate,
  timeouts, byte cap, content types, redirects, retries, scope and trap guards), returning a
  :class:`FetchResult` per URL (:mod:`~gym_crawl.web.result`); :mod:`~gym_crawl.web.transport` bounds every
  wait of a fetch by its deadline and a cancel flag;
* :mod:`~gym_crawl.web.warc_io` — :class:`WarcRecorder` writes every request/response and each
  fetch's result and the crawl's decisions to WARC; :func:`read_fetches` / :func:`read_decisions` /
  :func:`read_warcinfo` read them back;
* :mod:`~gym_crawl.web.live` — :class:`LiveWeb`, the corpus the crawl env walks while fetching it
  (``gym.make("WikiCrawl-v1", corpus=LiveWeb(seeds=[...]), concurrency=16)``), and its replay from a WARC
  (:meth:`LiveWeb.from_warc`); its fetches run on worker threads (:mod:`~gym_crawl.web.scheduler`), its
  arrivals are handled and recorded in order (:mod:`~gym_crawl.web.feed`), and :class:`OfferRules`
  (:mod:`~gym_crawl.web.offer`) keep URLs that cannot give a page from being offered;
* :mod:`~gym_crawl.web.settings` — :class:`LiveCrawlSettings`, what a live crawl is (seeds, topic, budget,
  concurrency, policy, offer rules, env keywords), recorded in its WARC and checked on resume;
* :mod:`~gym_crawl.web.serve` — :func:`serve_site`, :func:`serve_corpus` and :func:`serve_folder`
  run a multi-host HTTP site on 127.0.0.0/8 that can misbehave on purpose.

The HTTP, HTML and WARC libraries come with the ``web`` extra: ``pip install -e ".[web]"`` in the repository's
folder (``pip install 'gym-crawl[web]'`` for a copy from an index).
"""
from __future__ import annotations

from gym_crawl.web.fetcher import PoliteFetcher
from gym_crawl.web.live import LiveWeb
from gym_crawl.web.offer import OfferRules
from gym_crawl.web.policy import FetchPolicy
from gym_crawl.web.result import FETCH_ERRORS, Exchange, FetchResult
from gym_crawl.web.serve.server import Response, Site, serve_corpus, serve_folder, serve_site
from gym_crawl.web.settings import LiveCrawlSettings, read_settings
from gym_crawl.web.warc_io import WarcRecorder, read_decisions, read_fetches, read_warcinfo

__all__ = ["FETCH_ERRORS", "Exchange", "FetchPolicy", "FetchResult", "LiveCrawlSettings", "LiveWeb", "OfferRules",
           "PoliteFetcher", "Response", "Site", "read_settings",
           "WarcRecorder", "read_decisions", "read_fetches", "read_warcinfo", "serve_corpus", "serve_folder",
           "serve_site"]
