"""A seeded hostile web on loopback: many hosts, each page and each robots.txt drawn from a list of
misbehaviours — stalls, resets, early closes, robots.txt that fails part-way, redirect loops, 429/503 with
``Retry-After``, bodies past any sane cap, broken gzip, trickles — for the standing chaos test of the live
crawler (``tests/test_chaos_web.py``).

:func:`serve_chaos` starts the site and returns it with its :class:`ChaosPlan`: what every host's robots.txt
and every page does, which paths robots.txt disallows, which host is outside the crawl's scope, and the size of
every body a page sends whole — so a test checks the crawler from the site's own request log (who was asked
what, when, and what was received whole) without trusting the crawler's account of itself.

The same ``seed`` gives the same web (the plan is drawn from ``random.Random(seed)``); the timing of stalls
and trickles is the server's, bounded by ``pace`` (seconds between pieces of a trickled page) and ``stall``
(seconds a stalled reply holds its connection before it closes).
"""
from __future__ import annotations

import gzip
import random
from dataclasses import dataclass, field

from gym_crawl.web.serve.misbehave import raw_response
from gym_crawl.web.serve.server import serve_site
from gym_crawl.web.serve.site import Raw, Response, Series, Site, html_page, redirect

__all__ = ["PAGE_KINDS", "ROBOTS_KINDS", "ChaosPlan", "serve_chaos"]

ROBOTS_KINDS = ("ok", "ok", "ok", "missing", "partial-close", "partial-stall", "partial-reset", "http-503")
"""What a host's robots.txt does (drawn uniformly: ``ok`` three times in eight): ``ok`` (a complete file that
disallows ``/private/``), ``missing`` (404: allow all), ``partial-*`` (a ``200`` with ``Content-Length: 1000``
that sends 14 bytes, then closes, stalls or resets), ``http-503``. Only ``ok`` and ``missing`` admit pages."""
PAGE_KINDS = ("ok", "ok", "ok", "ok", "trickle", "stall", "reset", "close", "loop", "429", "503", "huge", "gzip")
"""What a page does: ``ok`` (an HTML page with links), ``trickle`` (the page a chunk every ``pace`` seconds),
``stall`` (headers and half the body, then silence), ``reset`` / ``close`` (half the body, then a reset or a
close), ``loop`` (a redirect loop of two URLs), ``429`` / ``503`` (once, with ``Retry-After: 1``, then the page),
``huge`` (a 4 MB body), ``gzip`` (a gzip body cut short)."""
ROBOTS_OK = b"User-agent: *\nDisallow: /private/\n"
_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n"
_WORDS = ("geology rocks minerals strata", "volcano magma eruption lava", "fossil sediment erosion basin",
          "weather cloud rain storm", "river delta valley canyon", "crystal quartz granite basalt")


@dataclass
class ChaosPlan:
    """What the chaos web does (see the module docstring).

    :param seed: the seed it was drawn from.
    :param robots: host label → its robots kind (:data:`ROBOTS_KINDS`).
    :param pages: host label → {path → page kind (:data:`PAGE_KINDS`)}.
    :param whole: ``(host, path)`` → the body length of a page sent whole as a ``200`` (``ok``, ``trickle``,
        ``429``/``503`` after their first reply, ``huge``, ``gzip``): a request of it whose log entry sent that
        many bytes was received whole.
    :param outside: the host label no seed is on (the crawl's scope is the seeds' hosts): never requested.
    :param seeds: the seed URLs (the front page of every host but ``outside``).
    """

    seed: int
    robots: dict[str, str] = field(default_factory=dict)
    pages: dict[str, dict[str, str]] = field(default_factory=dict)
    whole: dict[tuple[str, str], int] = field(default_factory=dict)
    outside: str = ""
    seeds: list[str] = field(default_factory=list)

    def admits_pages(self, host: str) -> bool:
        """Whether ``host``'s robots.txt lets any page be requested."""
        return self.robots.get(host) in ("ok", "missing")


def _robots(kind: str, stall: float) -> Response | Raw:
    body = (b"User-agent: *\n" + b"Disallow: /private/\n" * 60)[:1000]
    routes: dict[str, Response | Raw] = {
        "ok": Response(ROBOTS_OK, content_type="text/plain"),
        "missing": Response(b"not found", status=404, content_type="text/plain"),
        "partial-close": Raw(_HEAD + body[:14], status=200),
        "partial-stall": Raw(_HEAD + body[:14], hold=stall, status=200),
        "partial-reset": Raw(_HEAD + body[:14], reset=True, status=200),
        "http-503": Response(b"busy", status=503, content_type="text/plain")}
    return routes[kind]


def serve_chaos(seed: int, n_hosts: int = 6, pages_per_host: int = 6, *, pace: float = 0.25,
                stall: float = 20.0) -> tuple[Site, ChaosPlan]:
    """Start a chaos web of ``n_hosts`` hosts in scope (``h0``, ``h1``, …, each with ``pages_per_host`` pages
    ``/p0`` …) plus the out-of-scope host ``out``; returns the running :class:`Site` (use it as a context
    manager) and its :class:`ChaosPlan`. Host ``h0``'s robots.txt is ``ok`` and its front page ``ok``, so a crawl
    always starts."""
    if n_hosts < 1 or pages_per_host < 1:
        raise ValueError(f"n_hosts and pages_per_host must be >= 1, got {n_hosts}, {pages_per_host}")
    rng = random.Random(seed)
    hosts = [f"h{i}" for i in range(n_hosts)]
    plan = ChaosPlan(seed=seed, outside="out")
    for h in hosts:
        plan.robots[h] = "ok" if h == "h0" else rng.choice(ROBOTS_KINDS)
        plan.pages[h] = {f"/p{j}": rng.choice(PAGE_KINDS) for j in range(pages_per_host)}
    plan.robots["out"], plan.pages["out"] = "ok", {"/p0": "ok"}
    site = serve_site({h: {"/robots.txt": _robots(plan.robots[h], stall)} for h in [*hosts, "out"]})
    try:
        every = [(h, p) for h in hosts for p in plan.pages[h]]
        for h in [*hosts, "out"]:
            site.set_route(h, "/", _front(site, rng, h, hosts, every, plan))
            if h != "out":
                plan.seeds.append(site.url(h, "/"))
            site.set_route(h, "/private/secret", html_page("Secret", "<p>geology</p>"))
            for path, kind in plan.pages[h].items():
                page = html_page(f"{h}{path}", f"<p>{rng.choice(_WORDS)} " + "geology " * 40 + "</p>",
                                 _links(site, rng, h, every))
                _route(site, plan, h, path, kind, page, pace, stall)
    except BaseException:
        site.close()
        raise
    return site, plan


def _links(site: Site, rng: random.Random, h: str, every: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """A page's links: four pages anywhere, a disallowed path of its own host, and the out-of-scope host."""
    out = [(site.url(oh, op), f"{rng.choice(_WORDS)} {oh} {op}") for oh, op in rng.sample(every, min(4, len(every)))]
    return [*out, (site.url(h, "/private/secret"), "geology secret"), (site.url("out", "/p0"), "geology outside")]


def _front(site: Site, rng: random.Random, h: str, hosts: list[str], every: list[tuple[str, str]],
           plan: ChaosPlan) -> Response:
    own = [(site.url(h, p), f"geology {rng.choice(_WORDS)} {p}") for p in plan.pages[h]]
    body = html_page(f"{h} front", "<p>geology rocks</p>", [*own, *_links(site, rng, h, every)])
    plan.whole[(h, "/")] = len(body)
    return Response(body)


def _route(site: Site, plan: ChaosPlan, h: str, path: str, kind: str, page: bytes, pace: float,
           stall: float) -> None:
    head = raw_response(200, [("Content-Type", "text/html")], page)
    cut = head[:head.index(b"\r\n\r\n") + 4 + len(page) // 2]
    route: Response | Raw | Series
    if kind in ("ok", "429", "503"):
        route = Response(page) if kind == "ok" else Series(
            Response(b"slow down", status=int(kind), content_type="text/plain", headers=(("Retry-After", "1"),)),
            Response(page))
        plan.whole[(h, path)] = len(page)
    elif kind == "trickle":
        route = Response(page, trickle=pace, chunk=max(1, len(page) // 6))
        plan.whole[(h, path)] = len(page)
    elif kind == "huge":
        route = Response(page + b"<!-- " + b"x" * (4 << 20) + b" -->")
    elif kind == "gzip":
        route = Response(gzip.compress(page)[:60], headers=(("Content-Encoding", "gzip"),))
    elif kind == "loop":
        site.set_route(h, path + "/again", redirect(path))
        route = redirect(path + "/again")
    else:  # stall / reset / close: half the page, then silence, a reset or a close
        route = Raw(cut, hold=stall if kind == "stall" else 0.0, reset=kind == "reset", status=200)
    site.set_route(h, path, route)
