"""``LiveWeb``: a web discovered while crawling it, with the columnar layout the crawl engine reads.

A :class:`LiveWeb` is a :class:`~gym_crawl.corpus.core.Corpus` whose pages are fetched over HTTP when the
crawler chooses them, so ``gym.make("WikiCrawl-v1", corpus=LiveWeb(seeds=[...]))`` runs the offline MDP —
observations, action modes, feature sets, reducers — on a live site.

**Page ids in discovery order, fixed capacity.** Every per-page array is allocated at ``max_pages`` (the
action space of page mode is ``Discrete(max_pages)``); seeds get ids ``0..s-1``, then every fetched page's
new out-links get the next ids in document order. A URL discovered past the capacity is dropped and
counted (``stats["pages_dropped"]``), as are links past ``max_links`` or ``max_links_per_page`` and hosts
past ``max_domains``. A page's URL (its ``titles`` entry, the canonical URL), the words of its URL
(``title_terms``) and its host (``page_domain``) are known when it is discovered; its text and out-links
only once it is fetched. Arrays are allocated zeroed (``np.zeros``: the operating system commits memory
only where it is written), so a capacity of 10^5 pages and 10^7 links costs what the crawl fills.

**Rows in fetch order.** A page's links are ``link_dst[link_lo[p]:link_hi[p]]`` and its bag of words
``text_terms[text_lo[p]:text_hi[p]]``: append-only buffers, in the order pages were fetched (a static corpus
gives the same ranges as views of its CSR pointers). Link ids never change. Per-link text (``anchor_ptr``,
``context_ptr``) and per-page URL words (``title_ptr``) are CSRs in id order, since ids are handed out in
the order they are appended.

**A page source.** A live web is a :class:`~gym_crawl.corpus.page_source.PageSource`: the env
:meth:`request` s the page the crawler chose and later takes what :meth:`arrived` (several pages may be in
flight: ``WikiCrawlEnv(concurrency=W)``). Fetches run on worker threads
(:class:`~gym_crawl.web.scheduler.FetchScheduler` over a :class:`~gym_crawl.web.fetcher.PoliteFetcher`), or
on the caller's thread through a ``fetch(url)`` function; what arrives is handled on the caller's thread
(:class:`~gym_crawl.web.feed.ArrivalFeed`): the fetch is written to the WARC, the page parsed with
:func:`~gym_crawl.web.html_extract.extract_page` and its text and links appended (:meth:`materialize`). The
arrays change only there. A failed fetch (robots.txt, 404, timeout, too large, not HTML, ...) leaves the page
fetched with no text and no links; :meth:`fetch_error` names the reason. Because content stays in the
arrays, a second episode (``env.reset()``) re-crawls from memory and only pages never fetched go to the
network.

**What is offered.** A discovered link becomes a page only when in ``scope`` and allowed by the
:class:`~gym_crawl.web.offer.OfferRules` (not a non-HTML URL, not a URL shape learned to fail, within the
trap guards, allowed by its origin's robots.txt — which arrives before any page of the origin is offered);
every refusal is counted by reason (:meth:`counters`).

**Open vocabulary.** Word ids ``0..V0-1`` are the vocabulary of the reference text model given as
``text=`` (a :class:`~gym_crawl.text.model.TextModel`, or a corpus whose default text model is used) —
normally the corpus the policy was trained on, so known words keep their ids, IDF and vectors. Every
other word gets the next id when first seen; the text layer's open-vocabulary model
(:mod:`gym_crawl.text.open_vocab`) gives it a deterministic vector. Listeners registered with
:meth:`add_vocab_listener` are told of new words before anything can read them.

**Replay.** :meth:`LiveWeb.from_warc` rebuilds the same web from a WARC the crawl recorded: the same
configuration, the recorded fetch results instead of the network, delivered in the recorded order of
arrivals, the same extraction — so the same agent with the same seed sees bit-identical observations,
however many pages were in flight (see ``docs/live.md``).
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._limits import check_fits
from gym_crawl.corpus.core import LINK_POSITIONS, Corpus, StringTable
from gym_crawl.corpus.page_source import Arrivals
from gym_crawl.tokenize import tokenize
from gym_crawl.web.feed import AFTER_LAST_STEP_KIND, ARRIVALS_KIND, ROBOTS_KIND, ArrivalFeed
from gym_crawl.web.offer import OfferRules, RobotsRules
from gym_crawl.web.policy import default_user_agent
from gym_crawl.web.scheduler import SyncJobs
from gym_crawl.web.settings import SCOPES, canonical_seeds

__all__ = ["CONFIG_FIELD", "LIVE_CONFIG_TYPE", "NOT_IN_ARCHIVE", "RESERVED_HOW", "SCOPES", "LiveWeb", "StringList",
           "replay_corpus", "reserved_bytes"]

#: the warcinfo field holding a LiveWeb's configuration (:meth:`LiveWeb.config`, JSON), read by
# :meth:`LiveWeb.from_warc`
CONFIG_FIELD = "gym-crawl-liveweb"
#: the ``type`` entry of that configuration
LIVE_CONFIG_TYPE = "gym_crawl.liveweb"
#: fetch error of a replayed page that the archive does not hold
NOT_IN_ARCHIVE = "not-in-archive"
_UNFETCHED, _FETCHED, _FAILED = 0, 1, 2
#: the corpus columns a live web grows (append-only buffers)
_GROWING = ("text_terms", "text_counts", "title_terms", "anchor_terms", "context_terms")
_TEXT_IDS_MAX = 200_000  # link texts whose word ids are remembered


class StringList:
    """A growable table of strings with the read interface of :class:`StringTable` (``len``, ``[i]``,
    iteration, ``index``, ``get``, ``in``, ``tolist``): the live web's URLs, words and hosts."""

    __slots__ = ("_ids", "_items")

    def __init__(self, items: Iterable[str] = ()):
        self._items: list[str] = []
        self._ids: dict[str, int] = {}
        for s in items:
            self.add(s)

    def add(self, s: str) -> int:
        """Append ``s`` (if new); returns its position."""
        i = self._ids.get(s)
        if i is None:
            i = self._ids[s] = len(self._items)
            self._items.append(s)
        return i

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, i: int) -> str:
        return self._items[int(i)]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._items))

    def tolist(self) -> list[str]:
        return list(self._items)

    def index(self, s: str) -> int:
        i = self._ids.get(s)
        if i is None:
            raise KeyError(s)
        return i

    def get(self, s: str, default: int = -1) -> int:
        return self._ids.get(s, default)

    def __contains__(self, s: object) -> bool:
        return isinstance(s, str) and s in self._ids


def _scope_policy(scope: str, seeds: Sequence[str]) -> Any:
    """The :class:`~gym_crawl.web.policy.FetchPolicy` whose scope is ``scope`` around ``seeds``: ``"hosts"``
    — each seed's host and port (over http and https); ``"domain"`` — each seed's registrable domain by
    the Public Suffix List, on the seed's port (a seed host that is itself a public suffix stays a host);
    ``"any"`` — no limit. Links and redirects are both checked against it (``policy.in_scope``)."""
    from gym_crawl.web.policy import FetchPolicy
    from gym_crawl.web.urls import is_public_suffix, registered_domain, url_host

    hosts: set[str] = set()
    domains: set[str] = set()
    for u in seeds:
        h = url_host(u)
        if scope == "hosts":
            hosts.add(h)
        elif scope == "domain":
            name, port = (h.rsplit(":", 1) + [""])[:2] if not h.startswith("[") else (h, "")
            if is_public_suffix(name):
                hosts.add(h)
            else:
                domains.add(registered_domain(name) + (f":{port}" if port else ""))
    return FetchPolicy(allowed_hosts=tuple(sorted(hosts)), allowed_domains=tuple(sorted(domains)))


class _Buffer:
    """An append-only numpy buffer that doubles its capacity (callers re-read ``.a`` after appending)."""

    __slots__ = ("a", "n")

    def __init__(self, dtype: Any, capacity: int = 1024):
        self.a = np.zeros(max(16, capacity), dtype)
        self.n = 0

    def append(self, values: np.ndarray) -> int:
        """Append ``values``; returns the start position."""
        k = len(values)
        if self.n + k > len(self.a):
            cap = len(self.a)
            while cap < self.n + k:
                cap *= 2
            b = np.zeros(cap, self.a.dtype)
            b[: self.n] = self.a[: self.n]
            self.a = b
        s = self.n
        self.a[s:s + k] = values
        self.n += k
        return s


class LiveWeb(Corpus):
    """A web fetched while it is crawled (see the module docstring).

    Args:
        seeds: seed URLs (ids ``0..len(seeds)-1``; canonicalised; at least one).
        fetch: ``fetch(url) -> result`` (attributes ``url``, ``final_url``, ``status``, ``body``,
            ``content_type``, ``error``: ``None`` for a page, else the reason), run on the caller's thread, one
            request at a time. Default: a :class:`~gym_crawl.web.fetcher.PoliteFetcher` under ``policy`` on
            worker threads (:class:`~gym_crawl.web.scheduler.FetchScheduler`), recording to ``warc``.
        policy: the default fetcher's :class:`~gym_crawl.web.fetcher.FetchPolicy` (its host scope
            is narrowed to ``scope``); with ``fetch``, only its URL trap guards and caps apply, at discovery.
        warc: path of a WARC file the web records every request and response to (and its configuration,
            :meth:`config`, in the warcinfo record; its arrivals and robots.txt rules as metadata records).
        resume: with ``warc``: an existing WARC's fetches are replayed from the file (its pages are not
            requested again, its arrivals delivered in their recorded order) and new ones appended to it.
        overwrite: with ``warc`` and without ``resume``: replace an existing WARC file (otherwise an existing file
            is refused, ``FileExistsError``).
        text: the reference text model (a ``TextModel``, or a ``Corpus`` whose default text model is used)
            whose vocabulary gives the first word ids; ``None``: an empty vocabulary (every word hashed).
        scope: which discovered URLs enter the web: ``"hosts"`` (the seeds' hosts, default), ``"domain"``
            (their registrable domains by the Public Suffix List), ``"any"``, or a predicate
            ``url -> bool``.
        max_pages: page capacity (the action space of page mode).
        max_links: link capacity (default ``64 × max_pages``).
        max_links_per_page: out-links kept per page, in document order.
        max_domains: host capacity (with ``scope="hosts"``: the number of seed hosts).
        max_words: vocabulary capacity (default: the reference vocabulary + 10^6).
        extract: ``extract(body, url, content_type) -> page`` with ``title``, ``text`` (the main text) and
            ``links`` (``url``, ``anchor``, ``context``, optionally ``position``); default
            :func:`~gym_crawl.web.html_extract.extract_page`.
        name: the corpus name.
        offer: which discovered URLs are offered (:class:`~gym_crawl.web.offer.OfferRules`; default: every rule
            on). Its robots.txt rule needs a fetcher that reads robots.txt (the default one, unless its policy
            ignores robots.txt).
        max_workers: the default fetcher's most fetches at once (worker threads); the crawl's ``concurrency``
            is what bounds the pages in flight.
        robots: hold each origin's pages until its robots.txt arrived (``offer.robots`` must be on too); default:
            when the default fetcher obeys robots.txt (never with ``fetch``).
        archive: a WARC whose recorded fetches, arrivals and robots.txt rules are delivered before anything
            else (:meth:`from_warc` passes it; ``resume=True`` uses ``warc``).
        warcinfo: further fields of the ``warc``'s warcinfo record (``name: value``; a crawl's settings,
            :data:`~gym_crawl.web.settings.SETTINGS_FIELD`).
    """

    # the string columns grow as pages are fetched
    titles: StringList
    vocab: StringList
    domains: StringList

    def __init__(self, seeds: Sequence[str], *, fetch: Callable[[str], Any] | None = None, policy: Any = None,
                 warc: str | Path | None = None, resume: bool = False, overwrite: bool = False, text: Any = None,
                 scope: str | Callable[[str], bool] = "hosts", max_pages: int = 100_000,
                 max_links: int | None = None, max_links_per_page: int = 1000, max_domains: int = 10_000,
                 max_words: int | None = None, extract: Callable[..., Any] | None = None, name: str = "live",
                 offer: OfferRules | None = None, max_workers: int = 256, robots: bool | None = None,
                 archive: str | Path | None = None, warcinfo: Mapping[str, Any] | None = None):
        from gym_crawl.web.urls import canonical_url, url_host, url_text

        self._canonical, self._host_of, self._url_text = canonical_url, url_host, url_text
        canon = list(canonical_seeds(seeds, "seeds"))
        for key, v in (("max_pages", max_pages), ("max_links_per_page", max_links_per_page),
                       ("max_domains", max_domains), ("max_workers", max_workers)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{key} must be a positive integer, got {v!r}")
        if len(canon) > max_pages:
            raise ValueError(f"{len(canon)} seeds exceed max_pages={max_pages}")
        if not (callable(scope) or scope in SCOPES):
            raise ValueError(f"scope must be one of {SCOPES} or a predicate url -> bool, got {scope!r}")
        if fetch is not None and warc is not None:
            raise ValueError("pass either fetch= or warc= (the default fetcher records the WARC), not both")
        if resume and warc is None:
            raise ValueError("resume=True needs warc= (the WARC file to continue)")
        if offer is not None and not isinstance(offer, OfferRules):
            raise TypeError(f"offer must be an OfferRules, got {type(offer).__name__}")
        n = max_pages
        L = 64 * n if max_links is None else int(max_links)
        if L < 1:
            raise ValueError(f"max_links must be a positive integer, got {max_links!r}")
        check_fits(f"a live web of max_pages={n:,} (max_links={L:,})", reserved_bytes(n, L), RESERVED_HOW)
        ref_vocab = _reference_vocab(text)
        W = len(ref_vocab) + 1_000_000 if max_words is None else int(max_words)
        if len(ref_vocab) + 1 > W:
            raise ValueError(f"max_words={W} must exceed the reference vocabulary ({len(ref_vocab)} words)")
        self.seed_urls: tuple[str, ...] = tuple(canon)
        self.reference_text = text
        self.scope = scope
        self.max_pages, self.max_links, self.max_links_per_page = n, L, int(max_links_per_page)
        self.max_domains, self.max_words = int(max_domains), W
        self.offer = offer if offer is not None else OfferRules()
        self._extract = extract
        # ---- Corpus fields (arrays at capacity, zeroed: committed by the OS only where written)
        self._link_lo = np.zeros(n, np.int64)
        self._link_hi = np.zeros(n, np.int64)
        self._text_lo = np.zeros(n, np.int64)
        self._text_hi = np.zeros(n, np.int64)
        self.link_dst = np.zeros(L, np.int32)
        self.link_source = np.zeros(L, np.int32)
        #: each link's position in its page (LINK_POSITIONS code; -1 when the extractor gives none)
        self.link_position: np.ndarray = np.full(L, -1, np.int8)
        self.anchor_ptr = np.zeros(L + 1, np.int64)
        self.context_ptr = np.zeros(L + 1, np.int64)
        self.title_ptr = np.zeros(n + 1, np.int64)
        self.page_domain = np.zeros(n, np.int32)
        self.label_ptr = np.zeros(n + 1, np.int64)
        self.label_ids = np.zeros(0, np.int32)
        # the growing columns: append-only buffers, each column re-bound to its buffer after an append
        self._bufs = {k: _Buffer(np.int32) for k in _GROWING}
        for k in _GROWING:
            setattr(self, k, self._bufs[k].a)
        self.titles = StringList()
        self.vocab = StringList(ref_vocab)
        self.domains = StringList()
        self.labels = StringTable.from_strings([])
        self.texts = None
        self.meta = {"name": name, "live": True, "default_seeds": list(canon),
                     "domain_definition": "the host name of the page's canonical URL (port included when not "
                                          "the scheme's default)"}
        self.path = None
        self.checksum = None
        #: per page: 0 = discovered, 1 = fetched, 2 = fetch failed
        self.page_state = np.zeros(n, np.int8)
        #: HTML ``<title>`` of fetched pages (page id → title)
        self.page_titles: dict[int, str] = {}
        #: fetch error of failed pages (page id → reason)
        self.fetch_errors: dict[int, str] = {}
        #: final URL of fetched pages that were redirected (page id → URL)
        self.final_urls: dict[int, str] = {}
        self._texts: dict[int, str] = {}
        self._n = 0
        self._L = 0
        self._listeners: list[Callable[[int, list[str]], None]] = []
        self._text_ids: dict[str, np.ndarray] = {}
        #: what happened (the counters of :mod:`gym_crawl.web.feed`)
        self.stats: Counter[str] = Counter()
        self._fetcher: Any = None
        self._recorder: Any = None
        #: URLs an archive this web replays or resumes says were fetched after its crawl's last step (``to_corpus``
        #: marks them in ``meta["fetched_after_last_step"]``)
        self.after_last_step: set[str] = set()
        #: the last ``after_last_step`` record of that archive (a resumed crawl that ends as it did writes no other)
        self.recorded_after_last_step: dict[str, Any] | None = None
        self._closed = False
        self._seed_hosts = {url_host(u) for u in canon}
        self._scope = _scope_policy(scope if isinstance(scope, str) else "any", canon)
        if scope == "hosts":  # no other host can ever appear
            self.max_domains = len(self._seed_hosts)
        #: the default fetcher's policy (``None`` with ``fetch``)
        self.policy: Any = None
        if fetch is None or policy is not None:
            self.policy = self._scoped_policy(policy)
        if fetch is None:
            agent, obeys = self.policy.agent, self.policy.obey_robots
        else:
            agent, obeys = (self.policy.agent if self.policy is not None else default_user_agent()), False
        self._use_robots = self.offer.robots and (obeys if robots is None else bool(robots))
        backend: Any
        if fetch is None:
            backend, resumed = self._default_backend(warc, resume, overwrite, max_workers, warcinfo)
            archive = resumed or archive
        else:
            backend = SyncJobs(_checked_fetch(fetch), lambda url: self._feed.robots_record(url))
        self._feed = ArrivalFeed(self, backend, self.offer, self.policy, self._recorder, self._use_robots, agent)
        if archive is not None:
            self._load_archive(Path(archive))
        for u in canon:
            self._discover(u)

    # ------------------------------------------------------------------ the Corpus interface
    @property
    def link_lo(self) -> np.ndarray:
        return self._link_lo

    @property
    def link_hi(self) -> np.ndarray:
        return self._link_hi

    @property
    def text_lo(self) -> np.ndarray:
        return self._text_lo

    @property
    def text_hi(self) -> np.ndarray:
        return self._text_hi

    def _append(self, column: str, values: np.ndarray) -> int:
        """Append ``values`` to a growing column; returns the start position."""
        buf = self._bufs[column]
        start = buf.append(values)
        setattr(self, column, buf.a)
        return start

    @property
    def n_pages(self) -> int:
        """The page capacity (page ids are ``0..max_pages-1``; :attr:`n_discovered` of them are in use)."""
        return self.max_pages

    @property
    def n_discovered(self) -> int:
        """Pages discovered so far (ids ``0..n_discovered-1``)."""
        return self._n

    @property
    def n_fetched_pages(self) -> int:
        """Pages fetched (or failed) so far."""
        return int(np.count_nonzero(self.page_state[: self._n]))

    @property
    def n_links(self) -> int:
        """Links stored so far."""
        return self._L

    @property
    def n_words(self) -> int:
        """The vocabulary capacity (word ids are below it; ``len(vocab)`` are in use)."""
        return self.max_words

    @property
    def n_domain_slots(self) -> int:
        return self.max_domains

    def max_out_degree(self) -> int:
        return self.max_links_per_page

    def __repr__(self) -> str:
        return (f"LiveWeb(seeds={list(self.seed_urls)!r}, discovered={self._n}, fetched={self.n_fetched_pages}, "
                f"links={self._L}, max_pages={self.max_pages})")

    def validate(self, stored: dict[str, Any] | None = None) -> None:
        """A live web is consistent by construction (nothing to check)."""

    def __reduce__(self) -> tuple[Any, ...]:
        raise TypeError("a LiveWeb holds network connections and cannot be pickled; run live crawls in one "
                        "process (LiveWeb.to_corpus() gives a static corpus of what was crawled)")

    def out_degree(self) -> np.ndarray:
        return self._link_hi - self._link_lo

    def in_degree(self) -> np.ndarray:
        return np.bincount(self.link_dst[: self._L], minlength=self.max_pages)

    def link_src(self) -> np.ndarray:
        return self.link_source[: self._L].copy()

    def url(self, page: int) -> str:
        """The canonical URL of ``page``."""
        return self.titles[int(page)]

    def page_id(self, title: str) -> int:
        """Page id of a URL (canonicalised first); ``KeyError`` naming it when it was never discovered."""
        i = self.titles.get(title)
        if i < 0:
            c = self._canonical(title) if isinstance(title, str) else None
            i = self.titles.get(c) if c is not None else -1
        if i < 0:
            raise KeyError(f"URL {title!r} has not been discovered by live web {self.name!r} "
                           f"({self._n} pages discovered)")
        return i

    def to_networkx(self, with_text: bool = False) -> Any:
        return self.to_corpus().to_networkx(with_text)

    def summary(self, top_labels: int = 10) -> dict[str, Any]:
        return {"name": self.name, "live": True, "seeds": list(self.seed_urls), "pages_discovered": self._n,
                "pages_fetched": self.n_fetched_pages, "links": self._L, "words": len(self.vocab),
                "domains": len(self.domains), "max_pages": self.max_pages, **dict(self.stats)}

    def save(self, path: Any) -> Path:
        """Save a static snapshot (:meth:`to_corpus`)."""
        return self.to_corpus().save(path)

    # ------------------------------------------------------------------ fetching
    def _scoped_policy(self, policy: Any) -> Any:
        """The fetch policy, its host scope narrowed to the web's ``scope`` when it names none."""
        from gym_crawl.web.fetcher import FetchPolicy

        pol = policy if policy is not None else FetchPolicy()
        if not isinstance(pol, FetchPolicy):
            raise TypeError(f"policy must be a FetchPolicy, got {type(pol).__name__}")
        if self.scope in ("hosts", "domain") and not pol.allowed_hosts and not pol.allowed_domains:
            pol = pol.from_dict({**pol.to_dict(), "allowed_hosts": list(self._scope.allowed_hosts),
                                 "allowed_domains": list(self._scope.allowed_domains)})
        return pol

    def _default_backend(self, warc: str | Path | None, resume: bool, overwrite: bool, max_workers: int,
                         warcinfo: Mapping[str, Any] | None = None) -> tuple[Any, Path | None]:
        """The polite fetcher on worker threads, and the WARC recorder; returns the scheduler and the WARC to
        resume (``None`` unless resuming an existing file)."""
        from gym_crawl.web.fetcher import PoliteFetcher
        from gym_crawl.web.scheduler import FetchScheduler

        resumed = None
        if warc is not None:
            from gym_crawl.web.warc_io import WarcRecorder

            path = Path(warc)
            if resume and path.exists():
                self._check_same_config(path)
                resumed = path
            # the recorder cuts an incomplete last record (a killed crawl) before anything reads the file
            self._recorder = WarcRecorder(path, append=resume, overwrite=overwrite, policy=self.policy,
                                          seeds=self.seed_urls,
                                          info={CONFIG_FIELD: self.config(), **(warcinfo or {})})
        # no recorder on the fetcher: the feed writes each fetch on the caller's thread, in arrival order
        self._fetcher = PoliteFetcher(self.policy)
        return FetchScheduler(self._fetcher, max_workers), resumed

    def _load_archive(self, path: Path) -> None:
        """Deliver a WARC's recorded fetches (the fetch cache), arrivals (the script) and robots.txt rules first."""
        from gym_crawl.web.warc_io import read_fetches, read_metadata

        self.preload(read_fetches(path))
        calls: dict[int, list[list[str]]] = {}
        landed: set[str] = set()
        for a in read_metadata(path, ARRIVALS_KIND):
            calls.setdefault(int(a["call"]), [[str(k), str(v)] for k, v in a["events"]])
            landed.update(str(v) for k, v in a["events"] if k == "page")
        robots: dict[str, RobotsRules] = {}
        for r in read_metadata(path, ROBOTS_KIND):
            robots.setdefault(str(r["origin"]), RobotsRules.from_dict(r))
        after: set[str] = set()
        for r in read_metadata(path, AFTER_LAST_STEP_KIND):  # the last record holds them all
            after = {str(u) for u in r.get("not_in_crawl", r.get("fetched", ()))}
            self.recorded_after_last_step = dict(r)
        self.after_last_step = after - landed
        self._feed.load_script(calls, robots)
        if self._fetcher is not None:  # a resumed crawl's fetcher obeys the rules it read, without asking again
            for origin, rules in robots.items():
                self._fetcher.remember_robots(origin + "/", rules.kind, rules.text, rules.reason)

    def cancel(self) -> None:
        """Cancel the default fetcher (:meth:`PoliteFetcher.cancel`): a fetch in progress ends within a fraction
        of a second as ``"cancelled"`` (not recorded, so a resumed crawl fetches it again), and so does every
        later one. Safe to call from a signal handler."""
        if self._fetcher is not None:
            self._fetcher.cancel()

    def close(self) -> None:
        """End the crawl's fetching: a page in flight whose request has not gone out is cancelled, one on the wire
        is waited for (recorded, kept in the fetch cache, not added to the web); both are counted and named in the
        WARC (``after_last_step``: :meth:`counters`). Then close the fetcher's connections and the WARC recorder
        (the file is then complete and valid). Idempotent; a closed web still serves the pages
        it holds but fetches nothing new."""
        if self._fetcher is not None:
            self._fetcher.hold_pages()  # the pages in flight that have not gone out yet never will
        if not self._closed:  # a replay or a fetch function too: its pages in flight are counted alike
            self._closed = True
            self._feed.close()
        if self._recorder is not None:
            self._recorder.close()
            self._recorder = None
        if self._fetcher is not None:
            self._fetcher.close()
            self._fetcher = None

    def __enter__(self) -> LiveWeb:  # noqa: PYI034 - typing.Self needs Python 3.11
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def recorder(self) -> Any:
        """The WARC recorder (``None`` without ``warc=``)."""
        return self._recorder

    def config(self) -> dict[str, Any]:
        """What :meth:`from_warc` needs to rebuild this web's id space (JSON-ready)."""
        if callable(self.scope):
            raise TypeError("a LiveWeb with a predicate scope cannot be described for replay; pass the "
                             "predicate again: LiveWeb.from_warc(path, scope=...)")
        ref = self.reference_text
        return {"type": LIVE_CONFIG_TYPE, "seeds": list(self.seed_urls), "scope": self.scope,
                "max_pages": self.max_pages, "max_links": self.max_links,
                "max_links_per_page": self.max_links_per_page, "max_domains": self.max_domains,
                "max_words": self.max_words, "name": self.name, "offer": self.offer.to_dict(),
                "robots": self._use_robots,
                "policy": self.policy.to_dict() if self.policy is not None else None,
                "reference_vocabulary": len(_reference_vocab(ref)),
                "reference_name": getattr(getattr(ref, "corpus", ref), "name", None) if ref is not None else None}

    def _check_same_config(self, path: Path) -> None:
        """Refuse to resume a WARC that is not this crawl's: not a WARC, damaged at its start, written by
        something else, or recorded with another configuration (its pages would get other ids)."""
        from gym_crawl.web.warc_io import read_first_warcinfo

        if path.stat().st_size == 0:
            return  # nothing recorded yet: as a new file
        mine = self.config()
        for fields in (read_first_warcinfo(path),):
            raw = fields.get(CONFIG_FIELD)
            if not raw:
                raise ValueError(f"warc {str(path)!r} was not recorded by a live crawl of this package (its warcinfo "
                                 f"has no {CONFIG_FIELD} field): refusing to append to it; record to another file")
            if raw:
                try:
                    theirs = json.loads(raw) if isinstance(raw, str) else raw
                except ValueError:
                    raise ValueError(f"warc {str(path)!r}: its live-web configuration is not valid JSON") from None
                diff = [k for k in ("seeds", "scope", "max_pages", "max_links", "max_links_per_page", "max_domains",
                                    "max_words", "reference_vocabulary", "offer", "robots")
                        if theirs.get(k) != mine.get(k)]
                if diff:
                    raise ValueError(f"warc {str(path)!r} was recorded with other {', '.join(diff)} "
                                     f"({', '.join(f'{k}={theirs.get(k)!r}' for k in diff)}): resume it with the "
                                     f"same seeds, scope, capacities, offer rules and text model")
                return

    def preload(self, results: Iterable[Any]) -> int:
        """Put fetch results in the fetch cache (first result per URL wins); returns how many were added.
        A requested page whose URL is in the cache arrives from it, without a request."""
        k = 0
        cache = self._feed.cache
        for r in results:
            u = self._canonical(r.url) if isinstance(r.url, str) else None
            if u is not None and u not in cache:
                cache[u] = r
                k += 1
        return k

    def materialize_cached(self) -> int:
        """Materialise what a recorded crawl fetched, in its order — its arrivals, robots.txt rules included, then
        the other cached pages in the order they were cached — which rebuilds the crawl's id space exactly
        (each URL was discovered before it was fetched). Returns the pages materialised; cached URLs never
        discovered are skipped."""
        return self._feed.replay_all()

    def is_fetched(self, page: int) -> bool:
        """Whether ``page`` was fetched (or its fetch failed)."""
        return bool(self.page_state[int(page)] != _UNFETCHED)

    def materialize(self, page: int, result: Any) -> str:
        """Store ``page``'s fetch ``result`` (parsed by the extractor: text and out-links, appended to the
        arrays) and return its fetch error (``""`` for a page). A page already fetched keeps what it has."""
        page = int(page)
        if self.page_state[page] != _UNFETCHED:
            return self.fetch_errors.get(page, "")
        url = self.titles[page]
        res = result
        err = getattr(res, "error", None)
        body = getattr(res, "body", b"") or b""
        if err is None and not body and getattr(res, "status", 200) not in (None, 200):
            err = f"http-{res.status}"
        if err:
            self._store(page, "", (), "", str(err))
            return str(err)
        final = getattr(res, "final_url", None) or url
        # the Content-Type header as sent (its charset decodes the page, as the WARC compiler does)
        ctype = next((v for k, v in (getattr(res, "headers", None) or ()) if k.lower() == "content-type"),
                     getattr(res, "content_type", None))
        try:
            ex = self._extractor()(body, final, ctype)
        except ValueError as e:
            self._store(page, "", (), "", f"unparsable: {e}")
            return self.fetch_errors[page]
        final_c = self._canonical(final)
        if final_c is not None and final_c != url:
            self.final_urls[page] = final_c
            if final_c not in self.titles:
                self.titles._ids.setdefault(final_c, page)  # an alias: links to the final URL name this page
        if getattr(ex, "fallback", None):
            self.stats["extract_fallback"] += 1  # read by the bounded fallback (a pathologically nested page)
        self._store(page, ex.title, ex.links, ex.text, "")  # the main text, as a WARC corpus keeps it
        return ""

    def _extractor(self) -> Callable[..., Any]:
        if self._extract is None:
            from gym_crawl.web.html_extract import extract_page

            self._extract = extract_page
        return self._extract

    def _store(self, page: int, title: str, links: Sequence[Any], text: str, error: str) -> None:
        """Append the page's bag of words and links (in document order, in scope and offered, deduplicated by
        target) and mark it fetched (or failed, with ``error``)."""
        bag = Counter(self.add_words(tokenize(text)).tolist())
        terms = np.array(sorted(bag), np.int32)
        counts = np.array([bag[t] for t in terms.tolist()], np.int32)
        s = self._append("text_terms", terms)
        self._append("text_counts", counts)
        self._text_lo[page], self._text_hi[page] = s, s + len(terms)
        lo = self._L
        kept = 0
        feed = self._feed
        for ln in links:
            if kept >= self.max_links_per_page:
                self.stats["links_dropped_per_page"] += 1
                continue
            if self.max_links <= self._L:
                self.stats["links_dropped"] += 1
                continue
            u = ln.url
            if not self.in_scope(u):
                self.stats["links_out_of_scope"] += 1
                continue
            t = self.titles.get(u)
            if t < 0:
                if feed.refusal(u) is not None:
                    continue
                t = self._discover(u)
                if t < 0:
                    continue
            e = self._L
            self.link_dst[e] = t
            self.link_source[e] = page
            pos = getattr(ln, "position", None)
            self.link_position[e] = LINK_POSITIONS.index(pos) if pos in LINK_POSITIONS else -1
            self._append("anchor_terms", self._word_ids(ln.anchor or ""))
            self.anchor_ptr[e + 1] = self._bufs["anchor_terms"].n
            self._append("context_terms", self._word_ids(ln.context or ""))
            self.context_ptr[e + 1] = self._bufs["context_terms"].n
            self._L += 1
            kept += 1
        self._link_lo[page], self._link_hi[page] = lo, self._L
        self.page_titles[page] = title
        self._texts[page] = text
        if error:
            self.fetch_errors[page] = error
            self.page_state[page] = _FAILED
            self.stats["fetch_errors"] += 1
            self.stats[f"error:{error if error.startswith('trap:') else error.split(':')[0]}"] += 1
        else:
            self.page_state[page] = _FETCHED
            self.stats["pages_fetched"] += 1

    def fetch_aside(self, url: str) -> Any:
        """Fetch ``url`` now, outside the crawl's steps — an example page a judge is built from — through the web's
        own fetcher (robots.txt, per-host delay, rate, scope: an out-of-scope URL is refused, ``"out-of-scope"``),
        recorded to the WARC and counted (``stats["aside_fetches"]``, ``fetches``, ``requests_wire``); a URL the
        fetch cache holds (a resumed crawl) is not requested again. Returns the fetch result; the page does not
        enter the web, and a step that later reaches its URL gets it from the cache, without a second request."""
        canon = self._canonical(url)
        if canon is None:
            raise ValueError(f"url {url!r} is not an http(s) URL with a host")
        return self._feed.fetch_aside(canon)

    def cached_result(self, page: int) -> Any:
        """The fetch result held for ``page``'s URL (fetched, drained from flight at close, or from an archive),
        or ``None``."""
        return self._feed.cache.get(self.url(page))

    def fetched_text_of(self, page: int) -> str:
        """The plain text kept for a fetched page (``""`` otherwise)."""
        return self._texts.get(int(page), "")

    # ------------------------------------------------------------------ the page source
    def request(self, page: int) -> None:
        """Start fetching ``page`` (:class:`~gym_crawl.corpus.page_source.PageSource`)."""
        page = int(page)
        if not 0 <= page < self._n:
            raise ValueError(f"page {page} has not been discovered ({self._n} pages discovered)")
        self._feed.request(page)

    def arrived(self, block: bool) -> Arrivals:
        """The pages whose fetch completed since the last call, their content now in the arrays, in completion
        order; the pages no longer offered (:class:`~gym_crawl.corpus.page_source.PageSource`)."""
        return self._feed.arrived(block)

    def pending(self) -> int:
        """Requests and robots.txt checks not yet delivered."""
        return self._feed.pending()

    def held_domains(self) -> np.ndarray:
        """(max_domains,) bool, read-only: hosts whose robots.txt has not arrived (their pages are not offered)."""
        return self._feed.held_domains()

    def fetch_error(self, page: int) -> str:
        """Why ``page`` has no content (``""`` for a page; see :data:`~gym_crawl.web.result.FETCH_ERRORS`)."""
        return self.fetch_errors.get(int(page), "")

    def restart(self) -> None:
        """A new episode: requests in flight are no longer waited for (their results are kept when they come)."""
        self._feed.restart()

    @property
    def refused(self) -> dict[int, str]:
        """Discovered pages refused after their discovery (robots.txt that arrived later, a learned URL shape):
        page id → reason (a copy)."""
        return dict(self._feed.refused_pages)

    def counters(self) -> dict[str, Any]:
        """What the web did, for progress lines and reports: ``pages`` (fetched with content), ``fetches`` (page
        fetches the fetcher ran), ``requests_wire`` (HTTP requests sent, robots.txt included), ``errors``
        (fetch errors by kind), ``refused`` (discovered URLs not offered, by reason), ``robots`` (origins by
        why their robots.txt rules are what they are: ``parsed``, ``unreachable:timeout`` ...), ``discovered``,
        ``links``, ``cache_hits``, ``after_last_step`` (the pages in flight when the web was closed: ``in_flight``,
        of them ``fetched`` — a result recorded after the last step, not part of the crawl — and ``cancelled``
        before their request went out), ``aside_fetches`` (pages fetched outside the steps: a judge's
        examples)."""
        st = self.stats
        return {"pages": int(st.get("pages_fetched", 0)), "fetches": int(st.get("fetches", 0)),
                "requests_wire": int(st.get("requests_wire", 0)),
                "errors": {k.split(":", 1)[1]: int(v) for k, v in sorted(st.items()) if k.startswith("error:")},
                "refused": {k.split(":", 1)[1]: int(v) for k, v in sorted(st.items()) if k.startswith("refused:")},
                "robots": {k.split(":", 1)[1]: int(v) for k, v in sorted(st.items()) if k.startswith("robots:")},
                "discovered": self._n, "links": self._L, "cache_hits": int(st.get("cache_hits", 0)),
                "after_last_step": {k: int(st.get(f"after_last_step:{k}", 0))
                                    for k in ("in_flight", "fetched", "cancelled")},
                "aside_fetches": int(st.get("aside_fetches", 0))}

    # ------------------------------------------------------------------ vocabulary
    def _word_ids(self, text: str) -> np.ndarray:
        """Word ids of the tokens of a link's ``text`` (anchor or context), remembered per string: navigation
        links repeat their text on every page, and a word's id never changes."""
        ids = self._text_ids.get(text)
        if ids is None:
            ids = self.add_words(tokenize(text))
            if len(self._text_ids) >= _TEXT_IDS_MAX:
                self._text_ids.clear()
            self._text_ids[text] = ids
        return ids

    def add_vocab_listener(self, fn: Callable[[int, list[str]], None]) -> None:
        """Call ``fn(first_id, words)`` whenever words are added (and once now for words added so far
        beyond the reference vocabulary)."""
        self._listeners.append(fn)

    def add_words(self, words: Iterable[str]) -> np.ndarray:
        """Word ids of ``words``, adding the unknown ones (in order of first appearance)."""
        v = self.vocab
        words = words if isinstance(words, list) else list(words)
        known = v._ids.get
        ids = [known(w, -1) for w in words]
        if -1 not in ids:  # the common case: every word known
            return np.array(ids, np.int32)
        first = len(v)
        ids = []
        for w in words:
            i = v.get(w)
            if i < 0:
                if len(v) >= self.max_words:
                    self.stats["words_dropped"] += 1
                    continue
                i = v.add(w)
            ids.append(i)
        if len(v) > first:
            new = [v[i] for i in range(first, len(v))]
            for fn in self._listeners:
                fn(first, new)
        return np.asarray(ids, np.int32)

    # ------------------------------------------------------------------ discovery
    def in_scope(self, url: str) -> bool:
        """Whether a discovered URL enters the web (``scope``): the rule the default fetcher applies to
        redirects too (:func:`gym_crawl.web.policy.in_scope` of the scope's origins and domains)."""
        from gym_crawl.web.policy import in_scope

        s = self.scope
        if callable(s):
            return bool(s(url))
        return in_scope(self._scope, url)

    def _discover(self, url: str) -> int:
        """Id of ``url``, giving it the next id (URL words, host) when new; -1 when over capacity."""
        i = self.titles.get(url)
        if i >= 0:
            return i
        if self._n >= self.max_pages:
            self.stats["pages_dropped"] += 1
            return -1
        host = self._host_of(url)
        d = self.domains.get(host)
        if d < 0:
            if len(self.domains) >= self.max_domains:
                self.stats["domains_dropped"] += 1
                return -1
            d = self.domains.add(host)
        p = self._n
        self.titles.add(url)
        self.page_domain[p] = d
        self._append("title_terms", self.add_words(tokenize(self._url_text(url))))
        self.title_ptr[p + 1] = self._bufs["title_terms"].n
        self._n += 1
        self._feed.discovered(p, url, d)
        return p

    # ------------------------------------------------------------------ snapshot and replay
    def to_corpus(self, name: str | None = None) -> Corpus:
        """A static :class:`Corpus` of the discovered pages in the layout of a WARC corpus
        (:func:`gym_crawl.web.warc.load_warc`): same ids; ``urls`` the canonical URLs (``page_id(url)``
        finds a page); titles the HTML titles; unfetched pages without text or links (``meta["fetched"]``
        lists the fetched ones, ``meta["fetched_after_last_step"]`` those of them a replayed archive says were
        fetched after its crawl's last step); ``texts`` the kept main texts."""
        n, L = self._n, self._L
        lo, hi = self._link_lo[:n], self._link_hi[:n]
        order = np.argsort(self.link_source[:L], kind="stable")  # links by source page, document order kept
        link_ptr = np.zeros(n + 1, np.int64)
        np.cumsum((hi - lo).astype(np.int64), out=link_ptr[1:])
        text_ptr = np.zeros(n + 1, np.int64)
        tlens = self._text_hi[:n] - self._text_lo[:n]
        np.cumsum(tlens, out=text_ptr[1:])
        tidx = np.repeat(self._text_lo[:n], tlens) + (np.arange(int(text_ptr[-1])) - np.repeat(text_ptr[:-1], tlens))
        tt, tc = self.text_terms[tidx], self.text_counts[tidx]

        def regather(ptr: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            lens = (ptr[1:L + 1] - ptr[:L])[order]
            starts = ptr[:L][order]
            new_ptr = np.zeros(L + 1, np.int64)
            np.cumsum(lens, out=new_ptr[1:])
            idx = np.repeat(starts, lens) + (np.arange(int(lens.sum())) - np.repeat(new_ptr[:-1], lens))
            return new_ptr, np.asarray(vals[idx], np.int32)

        anchor_ptr, anchor_terms = regather(self.anchor_ptr, self.anchor_terms)
        context_ptr, context_terms = regather(self.context_ptr, self.context_terms)
        V = len(self.vocab)
        urls = self.titles.tolist()
        titles = [self.page_titles.get(i) or u for i, u in enumerate(urls)]
        seen = Counter(titles)
        titles = [t if seen[t] == 1 or t == u else f"{t} ({u})" for t, u in zip(titles, urls)]
        return Corpus(
            text_ptr=text_ptr, text_terms=np.asarray(tt, np.int32), text_counts=np.asarray(tc, np.int32),
            title_ptr=self.title_ptr[: n + 1].copy(), title_terms=self.title_terms[: self.title_ptr[n]].copy(),
            link_ptr=link_ptr, link_dst=self.link_dst[:L][order].copy(),
            anchor_ptr=anchor_ptr, anchor_terms=anchor_terms, context_ptr=context_ptr, context_terms=context_terms,
            page_domain=self.page_domain[:n].copy(), label_ptr=np.zeros(n + 1, np.int64),
            label_ids=np.zeros(0, np.int32), titles=StringTable.from_strings(titles),
            vocab=StringTable.from_strings(self.vocab.tolist()[:V]),
            domains=StringTable.from_strings(self.domains.tolist()), labels=StringTable.from_strings([]),
            texts=StringTable.from_strings([self._texts.get(i, "") for i in range(n)]),
            urls=StringTable.from_strings(urls), link_position=self.link_position[:L][order].copy(),
            meta={"name": name or f"{self.name}-snapshot", "seeds": list(self.seed_urls),
                  "fetched": [i for i in range(n) if self.page_state[i]],
                  "fetched_after_last_step": [i for i in range(n) if self.page_state[i]
                                              and urls[i] in self.after_last_step],
                  "title_definition": "the HTML <title> of a fetched page (its URL when it has none or was not "
                                      "fetched; a title several pages share gets ' (<url>)' appended)",
                  "domain_definition": self.meta["domain_definition"],
                  "vocabulary_order": "first appearance while crawling (reference vocabulary first)"})

    @classmethod
    def from_warc(cls, path: str | Path, *, text: Any = None, **overrides: Any) -> LiveWeb:
        """The web a recorded live crawl saw, rebuilt from its WARC without network access: the
        configuration recorded in its warcinfo (:meth:`config`; ``overrides`` replace entries; ``text`` must be
        the reference text model the crawl used), fetch results read back with
        :func:`~gym_crawl.web.warc_io.read_fetches` and delivered in the recorded order of arrivals (robots.txt
        rules from their records) — a crawl with several pages in flight replays bit for bit; a URL the archive
        does not hold fails with ``"not-in-archive"``."""
        from gym_crawl.web.warc_io import read_warcinfo

        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"warc {str(path)!r}: no such file")
        cfg: dict[str, Any] | None = None
        for fields in read_warcinfo(path):
            raw = fields.get(CONFIG_FIELD)
            if raw:
                cfg = json.loads(raw) if isinstance(raw, str) else raw
                break
        if cfg is None and "seeds" not in overrides:
            raise ValueError(f"warc {str(path)!r} holds no live-web configuration record; pass seeds=... "
                             f"(and the capacities the crawl used) to LiveWeb.from_warc")
        kw = {k: v for k, v in (cfg or {}).items()
              if k in ("seeds", "scope", "max_pages", "max_links", "max_links_per_page", "max_domains",
                       "max_words", "name", "robots")}
        # a crawl recorded before offer rules offered every in-scope URL
        kw["offer"] = OfferRules.from_dict(cfg["offer"]) if cfg and cfg.get("offer") else OfferRules.none()
        if cfg and cfg.get("policy"):
            from gym_crawl.web.policy import FetchPolicy

            kw["policy"] = FetchPolicy.from_dict(cfg["policy"])
        kw.update(overrides)
        want = (cfg or {}).get("reference_vocabulary")
        if want is not None and len(_reference_vocab(text)) != int(want):
            raise ValueError(f"warc {str(path)!r} was crawled with a reference vocabulary of {want} words "
                             f"({(cfg or {}).get('reference_name')!r}); text= gives {len(_reference_vocab(text))}: "
                             f"pass the same text model")
        web = cls(kw.pop("seeds"), fetch=_Missing, text=text, archive=path, **kw)
        web.meta["replayed_from"] = str(path)
        return web


def replay_corpus(warc: str | Path, *, text: Any = None, name: str | None = None) -> Corpus:
    """The static :class:`Corpus` of a live crawl recorded in ``warc``: :meth:`LiveWeb.from_warc`, every
    recorded page materialised in crawl order (:meth:`LiveWeb.materialize_cached`), then
    :meth:`LiveWeb.to_corpus` — the crawl's page ids, its URLs (``urls``), HTML titles, unfetched pages
    text-less."""
    web = LiveWeb.from_warc(warc, text=text)
    web.materialize_cached()
    return web.to_corpus(name=name or f"{Path(warc).name}-replay")




def _allow_all(url: str) -> tuple[str, None, list[Any], str]:
    """The robots.txt rules where none are read: allow all."""
    return "allow", None, [], "ignored"


RESERVED_HOW = "its largest array: 8 bytes per link, 64 links per page unless max_links says"
"""How :func:`reserved_bytes` estimates (said in the error that refuses a web too large for the machine)."""


def reserved_bytes(max_pages: int, max_links: int | None = None) -> int:
    """Bytes the largest array of a live web of ``max_pages`` pages (``max_links`` links, default 64 per page)
    reserves when it is built: its per-link text offsets. The operating system commits them as pages are
    fetched, but refuses the reservation when it exceeds the machine's memory — :class:`LiveWeb` checks it
    first (one line instead of numpy's error)."""
    return 8 * ((64 * max_pages if max_links is None else max_links) + 1)


def _checked_fetch(fetch: Callable[[str], Any]) -> Callable[[str], Any]:
    """``fetch``, refusing a result that is not a fetch result (``None``, a string ...) with one line naming the
    function and the URL, where the feed would only see a page without a result."""
    def checked(url: str) -> Any:
        res = fetch(url)
        if res is None or not all(hasattr(res, a) for a in ("error", "body", "url")):
            name = getattr(fetch, "__qualname__", None) or type(fetch).__name__
            raise TypeError(f"the fetch function {name} returned {type(res).__name__} for {url!r}: it must return a "
                            f"FetchResult (gym_crawl.web.result.FetchResult, or an object with url, body, error, ...)")
        return res
    return checked


class _Missing:
    """The fetch result of a URL a replayed archive does not hold."""

    def __init__(self, url: str):
        self.url = url
        self.final_url = None
        self.status = None
        self.body = b""
        self.content_type = None
        self.error = NOT_IN_ARCHIVE


def _reference_vocab(text: Any) -> list[str]:
    """The vocabulary (list of words, id order) of a reference text model or corpus (``[]`` for None)."""
    if text is None:
        return []
    corpus = getattr(text, "corpus", text)
    vocab = getattr(corpus, "vocab", None)
    if vocab is None:
        raise TypeError(f"text must be a TextModel or a Corpus (the reference vocabulary), got {type(text).__name__}")
    return vocab.tolist()
