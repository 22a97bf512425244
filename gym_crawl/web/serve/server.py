"""A threaded HTTP site on loopback, serving several hosts, that can misbehave on purpose.

The site the live crawler is tested and demonstrated against. Each *host* is its own loopback address with
one shared port (``http://127.0.0.2:PORT/``, ``http://127.0.0.3:PORT/``, ...), so hosts differ in the URL as
on the real web; where those addresses cannot be bound, the hosts are distinct ports of ``127.0.0.1``.
Only 127.0.0.0/8 is ever bound.

* :func:`serve_site` serves ``{host label: {path: route}}``: a route is the page bytes (``text/html``), a
  :class:`Response` (status, headers, content type, delays), a :class:`Series` of responses served in turn,
  or a function of the request target (path and ``?query``) returning a response or ``None`` (404); a
  path ending in ``*`` is a prefix route. A request matches its exact target, else its path, else the
  longest prefix route. ``misbehave`` adds the
  named misbehaviours of :data:`MISBEHAVIOURS` to a host (robots.txt rules and crawl-delay, 404, 500, 429
  and 503 with ``Retry-After``, redirect chains and loops, a slow page, an oversize page, PDF and PNG,
  broken HTML, mixed encodings, an infinite calendar) and an index page at ``/`` linking to everything.
* :func:`serve_corpus` serves a compiled :class:`~gym_crawl.corpus.core.Corpus` as a website, one page per
  path derived from its title, spread over hosts by domain.
* :func:`serve_folder` serves folders of static files (saved or installed HTML documentation) as hosts.

Every request is logged (:class:`LoggedRequest`: arrival and end time, host, path, method, the id of the
TCP connection it came on, status, bytes written, User-Agent), so tests assert politeness from the
server's side. The returned :class:`Site` is a context manager; leaving it stops every server.
The server is :mod:`gym_crawl.web.serve.site`, the misbehaviours :mod:`gym_crawl.web.serve.misbehave`.
"""
from __future__ import annotations

import mimetypes
import os
import posixpath
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from gym_crawl._console import EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED, Terminated
from gym_crawl.web.serve.misbehave import MISBEHAVIOURS, MisbehaveSettings, calendar_trap, raw_response, robots_txt
from gym_crawl.web.serve.site import LoggedRequest, Raw, Response, Route, Series, Site, html_page, redirect

# the site's building blocks (site.py) and misbehaviours (misbehave.py) are importable from here too
__all__ = [
    "MISBEHAVIOURS",
    "LoggedRequest",
    "MisbehaveSettings",
    "Raw",
    "Response",
    "Series",
    "Site",
    "add_serve_arguments",
    "calendar_trap",
    "corpus_page_html",
    "corpus_paths",
    "html_page",
    "raw_response",
    "robots_txt",
    "serve_command",
    "serve_corpus",
    "serve_folder",
    "serve_site",
]


def _index(label: str, routes: Mapping[str, Route]) -> bytes:
    links = [(p, p) for p in sorted(routes) if not p.endswith("*") and p != "/robots.txt"]
    return html_page(f"{label} index", "<p>Every page of this host.</p>", links)


def serve_site(pages: Mapping[str, Mapping[str, Route]], *, misbehave: Mapping[str, Iterable[str]] | None = None,
               settings: MisbehaveSettings | None = None, bind: str = "auto", first_address: int = 2,
               latency: float = 0.0) -> Site:
    """Start a :class:`Site` serving ``pages`` (``{host label: {path: route}}``), each host on its own
    loopback address (see :class:`Site` for ``bind``/``first_address``).

    :param misbehave: ``{host label: names}`` — the :data:`MISBEHAVIOURS` to add to that host (its own
        routes win on a clash). A host given only here is served too.
    :param settings: parameters of the misbehaviours (default :class:`MisbehaveSettings`).
    :param latency: seconds every response waits before its status line (:class:`Site`).

    A host without a ``/`` route gets an index page linking to all of its paths (prefix routes and
    robots.txt aside). Use as ``with serve_site(...) as site:``.
    """
    settings = settings or MisbehaveSettings()
    routes: dict[str, dict[str, Route]] = {k: dict(v) for k, v in pages.items()}
    for label, names in (misbehave or {}).items():
        if isinstance(names, str):
            raise TypeError(f"misbehave[{label!r}] must be a list of names, got the string {names!r}")
        extra: dict[str, Route] = {}
        for name in names:
            if name not in MISBEHAVIOURS:
                raise ValueError(f"unknown misbehaviour {name!r}; known: {sorted(MISBEHAVIOURS)}")
            extra.update(MISBEHAVIOURS[name](settings))
        routes[label] = {**extra, **routes.get(label, {})}
    for label, r in routes.items():
        if "/" not in r:
            r["/"] = _index(label, r)
    return Site(routes, bind=bind, first_address=first_address, latency=latency)


# ---------------------------------------------------------------------- a corpus as a site
def corpus_paths(corpus: Any) -> list[str]:
    """The path each page of ``corpus`` is served at by :func:`serve_corpus`: the path of
    :meth:`Corpus.url <gym_crawl.corpus.core.Corpus.url>` (``/wiki/<title>`` with spaces as ``_``, or
    ``/p/<id>`` on opaque-URL domains) in its canonical percent-encoding
    (:func:`~gym_crawl.web.urls.canonical_url`), so the page URLs are canonical; a path taken by an
    earlier page gets ``~<page id>`` appended."""
    from gym_crawl.web.urls import canonical_url

    paths: list[str] = []
    seen: set[str] = set()
    for i in range(corpus.n_pages):
        url = canonical_url("http://h" + quote(urlsplit(corpus.url(i)).path, safe="/"))
        if url is None:  # an http URL with a host is always canonical
            raise ValueError(f"page {i}: URL {corpus.url(i)!r} has no canonical form")
        p = urlsplit(url).path
        if p in seen:
            p = f"{p}~{i}"
        seen.add(p)
        paths.append(p)
    return paths


def _page_text(corpus: Any, page: int) -> str:
    """The page's text: the kept plain text, else its bag of words (each word as often as it occurs)."""
    if corpus.texts is not None:
        return corpus.texts[page]
    a, b = int(corpus.text_ptr[page]), int(corpus.text_ptr[page + 1])
    terms, counts = corpus.text_terms[a:b].tolist(), corpus.text_counts[a:b].tolist()
    return " ".join(w for t, c in zip(terms, counts) for w in [corpus.vocab[t]] * c)


def corpus_page_html(corpus: Any, page: int, urls: Sequence[str]) -> bytes:
    """The HTML :func:`serve_corpus` serves for ``page``: :func:`gym_crawl.web.html_extract.render_page` of
    its title, text and out-links (``(urls[target], anchor text)``, in link order)."""
    from gym_crawl.web.html_extract import render_page

    a, b = corpus.outlinks(page)
    links = []
    for j in range(a, b):
        lo, hi = int(corpus.anchor_ptr[j]), int(corpus.anchor_ptr[j + 1])
        anchor = " ".join(corpus.vocab[int(t)] for t in corpus.anchor_terms[lo:hi].tolist())
        links.append((urls[int(corpus.link_dst[j])], anchor))
    return render_page(corpus.titles[page], _page_text(corpus, page), links)


def serve_corpus(corpus: Any, n_hosts: int | None = None, *, misbehave: Mapping[str, Iterable[str]] | None = None,
                 settings: MisbehaveSettings | None = None, bind: str = "auto", first_address: int = 2,
                 latency: float = 0.0) -> Site:
    """Serve a :class:`~gym_crawl.corpus.core.Corpus` as a website of ``n_hosts`` hosts (default: one per
    domain, at most 8).

    Page ``p`` lives on host ``"h<domain id % n_hosts>"`` at ``corpus_paths(corpus)[p]``; its HTML is
    :func:`corpus_page_html` (rendered on its first request), with links to the absolute URLs of their
    targets on whatever host those live. ``site.page_urls[p]`` is page ``p``'s URL; each host's ``/`` lists
    its pages. ``misbehave`` keys are host labels (``"h0"``, ...); ``latency`` delays every response
    (:class:`Site`). To serve a folder of HTML files byte for byte, use :func:`serve_folder`.
    """
    n = n_hosts if n_hosts is not None else min(max(1, len(corpus.domains)), 8)
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n_hosts must be a positive int, got {n_hosts!r}")
    labels = [f"h{i}" for i in range(n)]
    paths = corpus_paths(corpus)
    host_of = [labels[d % n] for d in corpus.page_domain.tolist()]
    # bind first, then route every page to its absolute URL (which needs the bound addresses)
    site = serve_site({lab: {"/": b""} for lab in labels}, misbehave=misbehave, settings=settings, bind=bind,
                      first_address=first_address, latency=latency)
    page_urls = [site.url(host_of[p], paths[p]) for p in range(corpus.n_pages)]
    for p in range(corpus.n_pages):
        site.set_route(host_of[p], paths[p], _LazyPage(corpus, p, page_urls))
    for lab in labels:
        mine = [(paths[p], corpus.titles[p]) for p in range(corpus.n_pages) if host_of[p] == lab]
        site.set_route(lab, "/", html_page(f"{lab} index", "<p>Every page of this host.</p>", mine))
    site.page_urls = page_urls
    return site


class _LazyPage:
    """Renders one corpus page on its first request (a large corpus is not rendered up front)."""

    def __init__(self, corpus: Any, page: int, urls: list[str]):
        self.corpus, self.page, self.urls = corpus, page, urls
        self._body: bytes | None = None
        self._lock = threading.Lock()

    def __call__(self, path: str) -> Response:
        with self._lock:
            if self._body is None:
                self._body = corpus_page_html(self.corpus, self.page, self.urls)
        return Response(self._body)


# ---------------------------------------------------------------------- folders of static files
def _static_route(root: Path) -> Callable[[str], Response | None]:
    root = root.resolve()

    def route(target: str) -> Response | None:
        path = urlsplit(target).path
        rel = posixpath.normpath(unquote(path)).lstrip("/")
        if rel.startswith("..") or "\x00" in rel:
            return None
        file = root / rel if rel not in ("", ".") else root
        if file.is_dir():
            if not path.endswith("/"):
                return redirect(quote(path) + "/", 301)
            for index in ("index.html", "index.htm"):
                if (file / index).is_file():
                    file = file / index
                    break
            else:
                return None
        if not file.is_file():
            return None
        ctype, enc = mimetypes.guess_type(file.name)
        try:
            body = file.read_bytes()
        except OSError:
            return None
        headers = (("Content-Encoding", enc),) if enc == "gzip" else ()
        return Response(body, content_type=ctype or "application/octet-stream", headers=headers)

    return route


def serve_folder(path: str | os.PathLike, hosts: Iterable[str] | Mapping[str, str | os.PathLike] | None = None, *,
                 bind: str = "auto", first_address: int = 2) -> Site:
    """Serve folders of static files (saved or installed HTML documentation) as separate hosts.

    :param path: a folder.
    :param hosts: ``None`` — each subfolder of ``path`` is a host labelled by its name (``path`` itself when
        it has none); a list of subfolder names — those; a mapping ``{label: folder}`` — each folder
        (relative to ``path`` unless absolute).

    A URL path maps to the file under the host's folder (``..`` cannot leave it; symbolic links are
    followed, as a web server configured for installed documentation does); a folder serves its
    ``index.html``/``index.htm`` (a folder URL without the trailing ``/`` is redirected to it), a missing
    file is a 404. Content types come from the file names.
    """
    root = Path(path).expanduser()
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: not a folder")
    if hosts is None:
        subs = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
        folders = {s: root / s for s in subs} if subs else {root.name: root}
    elif isinstance(hosts, Mapping):
        folders = {str(k): (root / v if not Path(v).is_absolute() else Path(v)) for k, v in hosts.items()}
    elif isinstance(hosts, str):
        raise TypeError(f"hosts must be a list of subfolder names or a mapping, got the string {hosts!r}")
    else:
        folders = {str(h): root / h for h in hosts}
    for label, f in folders.items():
        if not f.is_dir():
            raise FileNotFoundError(f"host {label!r}: {f} is not a folder")
    routes = {label: {"*": _static_route(f)} for label, f in folders.items()}
    return Site(routes, bind=bind, first_address=first_address)


# ---------------------------------------------------------------------- the `gym-crawl serve` command
def add_serve_arguments(p: Any) -> None:
    """Arguments of ``gym-crawl serve`` (an ``argparse`` parser)."""
    p.add_argument("sources", nargs="*",
                   help="a corpus (synthetic, synthetic-<N>, a path ...) to serve as a website, or with --folder "
                        "folders of static files (one host per folder)")
    p.add_argument("--folder", action="store_true",
                   help="serve SOURCES as folders of static files; a single folder with subfolders serves each "
                        "subfolder as a host")
    p.add_argument("--demo", action="store_true",
                   help="serve the misbehaving demo site (every misbehaviour on host 'a', a clean host 'b')")
    p.add_argument("--hosts", type=int, default=None, help="hosts for a corpus (default: one per domain, max 8)")
    p.add_argument("--misbehave", default="",
                   help=f"comma-separated misbehaviours added to every host: {', '.join(MISBEHAVIOURS)}")
    p.add_argument("--first-address", type=int, default=2, help="first loopback address 127.0.0.N (default 2)")
    p.add_argument("--duration", type=float, default=None, help="stop after this many seconds (default: Ctrl-C)")
    p.add_argument("--latency", type=float, default=0.0,
                   help="seconds every response waits before it is sent (a far server; default 0)")


#: longest sleep of the serving loop: Ctrl-C / SIGTERM is acted on within it
_TICK = 0.2


def _wait(duration: float | None) -> None:
    """Sleep ``duration`` seconds (``None``: until interrupted) in short naps. The kernel may deliver a signal to any
    of the server threads; CPython then only flags it, and the main thread runs the handler (raising
    ``KeyboardInterrupt`` / ``Terminated``) at its next bytecode — after one long ``time.sleep`` that could be an
    hour later, so the main thread wakes every :data:`_TICK` seconds to let a pending signal through."""
    end = None if duration is None else time.monotonic() + duration
    while True:
        left = _TICK if end is None else end - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(_TICK, left))


def serve_command(args: Any) -> int:
    """Run ``gym-crawl serve``: start the site, print its hosts' URLs, serve until Ctrl-C or ``--duration``; returns
    the exit code (0 after ``--duration``, 130 when Ctrl-C stopped it, as every interrupted command)."""
    names = [n for n in args.misbehave.split(",") if n]
    for n in names:
        if n not in MISBEHAVIOURS:
            raise ValueError(f"unknown misbehaviour {n!r}; known: {sorted(MISBEHAVIOURS)}")
    if args.demo:
        site = serve_site({"a": {}, "b": {"/": html_page("b", "<p>A well-behaved host.</p>")}},
                          misbehave={"a": list(MISBEHAVIOURS), "b": names}, first_address=args.first_address)
    elif args.folder:
        if names:
            raise ValueError("--misbehave applies to a corpus or --demo, not to --folder")
        if not args.sources:
            raise ValueError("serve --folder needs at least one folder")
        if len(args.sources) == 1:
            site = serve_folder(args.sources[0], first_address=args.first_address)
        else:
            folders = {Path(s).name or s: Path(s).expanduser().resolve() for s in args.sources}
            if len(folders) != len(args.sources):
                raise ValueError(f"serve --folder: folder names must differ (they label the hosts): {args.sources}")
            site = serve_folder(Path.cwd(), hosts=folders, first_address=args.first_address)
    else:
        if len(args.sources) != 1:
            raise ValueError("serve needs exactly one corpus (or --folder FOLDER ..., or --demo)")
        from gym_crawl.corpus.sources import load_corpus

        corpus = load_corpus(args.sources[0])
        n = args.hosts
        misbehave = {f"h{i}": names for i in range(n or min(max(1, len(corpus.domains)), 8))} if names else None
        site = serve_corpus(corpus, n, misbehave=misbehave, first_address=args.first_address, latency=args.latency)
    with site:
        for label, url in site.base_urls.items():
            print(f"{label}\t{url}/", flush=True)
        code = EXIT_OK
        try:
            _wait(args.duration)
        except KeyboardInterrupt as e:
            code = EXIT_TERMINATED if isinstance(e, Terminated) else EXIT_INTERRUPTED
        print(f"served {len(site.log)} requests", flush=True)
    return code
