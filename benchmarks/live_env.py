"""The live env's cost per step beyond the fetch itself, at 10^4 and 10^5 frontier pages.

A generated site answers every URL (pages made on demand from the page number: a title, a text of topic
and filler words, 20 links to pseudo-random pages on 8 hosts), so the frontier grows to any size. A
best-first agent (slot mode, ``topk`` reducer, ``combined`` features) crawls it through ``env.step``
until the frontier holds the target number of pages, then ``--steps`` more steps are timed:

* ``step``: wall seconds of ``env.step``;
* ``fetch``: seconds inside the fetch function (in memory: generating the page; ``--http``: a request to a
  loopback server with the polite fetcher at delay 0 — the HTTP round trip);
* ``overhead = step - fetch``: what the live env adds to the round trip — parsing the HTML
  (``extract_page``), discovery (ids, URL words, the open vocabulary), scoring the page and its links, the
  crawl-state update, the reducer and the observation.

JSON into ``benchmarks/results/live_env/``::

    gym-crawl bench live_env [--quick] [--http] [--frontier 10000 100000] [--steps 300]
"""
from __future__ import annotations

import hashlib
import platform
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from gym_crawl._console import ArgumentParser

DEFAULT_OUT = Path("benchmarks") / "results" / "live_env"  # under the current folder
N_HOSTS = 8
DEGREE = 20
TOPIC = ["geology", "rock", "mineral", "basalt", "granite", "volcano", "fossil", "sediment", "crust", "tectonic"]
FILLER = ["city", "year", "people", "country", "history", "river", "war", "king", "music", "market", "bridge",
          "village", "road", "school", "church", "team", "season", "league", "song", "album", "film", "novel",
          "painter"]


def _h(i: int, salt: int) -> int:
    return int.from_bytes(hashlib.blake2b(f"{i}:{salt}".encode(), digest_size=8).digest(), "little")


def page_url(i: int) -> str:
    return f"http://h{i % N_HOSTS}.site.test/p/{i}"


def page_html(i: int, n_pages: int) -> bytes:
    """Page ``i`` of the generated site (deterministic)."""
    from gym_crawl.web.html_extract import render_page

    topical = _h(i, 0) % 4 == 0
    words = [(TOPIC if topical and k % 2 == 0 else FILLER)[_h(i, k + 1) % 10] for k in range(120)]
    text = "\n".join(" ".join(words[j:j + 20]) for j in range(0, 120, 20))
    links = []
    for j in range(DEGREE):
        t = _h(i, 1000 + j) % n_pages
        links.append((page_url(t), f"{(TOPIC if _h(t, 0) % 4 == 0 else FILLER)[_h(t, 7) % 10]} {FILLER[j % 10]}"))
    return render_page(f"Page {i} {FILLER[i % 10]}", text, links)


class GeneratedSite:
    """``fetch(url)`` answering from the generator, timing itself."""

    def __init__(self, n_pages: int):
        self.n_pages = n_pages
        self.seconds = 0.0

    def __call__(self, url: str) -> Any:
        t = time.perf_counter()
        i = int(url.rsplit("/", 1)[1])
        body = page_html(i, self.n_pages)
        self.seconds += time.perf_counter() - t
        return SimpleNamespace(url=url, final_url=url, status=200, body=body, content_type="text/html",
                               error=None)


def _timed_fetch(fetch: Any) -> Any:
    def f(url: str) -> Any:
        t = time.perf_counter()
        r = fetch(url)
        f.seconds += time.perf_counter() - t  # type: ignore[attr-defined]
        return r

    f.seconds = 0.0  # type: ignore[attr-defined]
    return f


def _serve(n_pages: int) -> tuple[Any, str]:
    """A loopback HTTP server of the generated site (one host: the port; pages keep their numbers)."""
    import socketserver
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/robots.txt":
                body, ctype = b"User-agent: *\nAllow: /\n", "text/plain"
            else:
                i = int(self.path.rsplit("/", 1)[1])
                body, ctype = page_html(i, n_pages).replace(b"http://h", b"http://127.0.0.1:%d/h" % port), "text/html"
            self.send_response(200)
            self.send_header("Content-Type", f"{ctype}; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a: Any) -> None:
            pass

    class Server(ThreadingHTTPServer):
        def server_bind(self) -> None:  # without HTTPServer's reverse lookup (getfqdn) of the address
            socketserver.TCPServer.server_bind(self)
            self.server_name, self.server_port = "127.0.0.1", self.server_address[1]

    srv = Server(("127.0.0.1", 0), Handler)
    port = srv.server_address[1]
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{port}"


def measure(frontiers: list[int], steps: int, http: bool) -> dict[str, Any]:
    from gym_crawl.web.live import LiveWeb
    from gym_crawl.wrappers.factory import make_env

    n_site = max(frontiers) * 3
    srv = None
    if http:
        from gym_crawl.web.fetcher import FetchPolicy, PoliteFetcher

        srv, base = _serve(n_site)
        fetcher = PoliteFetcher(FetchPolicy(delay=0.0, rate=None, obey_robots=False, max_pages_per_host=None,
                                            max_pages_per_pattern=None))
        fetch = _timed_fetch(fetcher.fetch)
        seeds = [f"{base}/h0.site.test/p/0"]
    else:
        fetch = _timed_fetch(GeneratedSite(n_site))
        seeds = [page_url(0)]
    web = LiveWeb(seeds, fetch=fetch, scope="any", max_pages=n_site + 1, max_links=(n_site + 1) * DEGREE)
    env = make_env("WikiCrawl-v1", corpus=web, topic="geology", max_episode_steps=10**9)
    obs, info = env.reset(seed=0)
    out: dict[str, Any] = {}
    t_all = time.perf_counter()
    for target in sorted(frontiers):
        while info["frontier_size"] < target:
            a = int(np.argmax(np.where(info["action_mask"], obs["candidates"][:, 0], -np.inf)))
            obs, _, term, _, info = env.step(a)
            if term:
                raise RuntimeError("the generated site ran out of pages")
        st, ft = [], []
        for _ in range(steps):
            a = int(np.argmax(np.where(info["action_mask"], obs["candidates"][:, 0], -np.inf)))
            f0 = fetch.seconds
            t0 = time.perf_counter()
            obs, _, _, _, info = env.step(a)
            st.append(time.perf_counter() - t0)
            ft.append(fetch.seconds - f0)
        s, f = np.asarray(st), np.asarray(ft)
        over = s - f
        out[str(target)] = {
            "frontier_at_start": int(target), "frontier_at_end": int(info["frontier_size"]),
            "pages_fetched": int(info["pages_fetched"]), "steps_timed": steps,
            "step_ms_median": round(1e3 * float(np.median(s)), 3),
            "fetch_ms_median": round(1e3 * float(np.median(f)), 3),
            "overhead_ms_median": round(1e3 * float(np.median(over)), 3),
            "overhead_ms_mean": round(1e3 * float(over.mean()), 3),
            "overhead_ms_p90": round(1e3 * float(np.quantile(over, 0.9)), 3)}
        print(f"frontier {target:>7}: step {out[str(target)]['step_ms_median']:.2f} ms, fetch "
              f"{out[str(target)]['fetch_ms_median']:.2f} ms, overhead {out[str(target)]['overhead_ms_median']:.2f} ms "
              f"(median of {steps})", flush=True)
    out["seconds_total"] = round(time.perf_counter() - t_all, 1)
    out["links_stored"] = int(web.n_links)
    out["words"] = len(web.vocab)
    if srv is not None:
        srv.shutdown()
    web.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="gym-crawl bench live_env", description=__doc__.split("\n")[0])
    ap.add_argument("--frontier", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--steps", type=int, default=300, help="timed steps at each frontier size")
    ap.add_argument("--http", action="store_true", help="fetch from a loopback HTTP server (default: in memory)")
    ap.add_argument("--quick", action="store_true", help="frontier 2,000 and 50 steps (a smoke run)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    if args.quick:
        args.frontier, args.steps = [2_000], 50
    res = measure(args.frontier, args.steps, args.http)
    from gym_crawl._io import atomic_write_json

    args.out.mkdir(parents=True, exist_ok=True)
    name = "live_env_http.json" if args.http else "live_env.json"
    atomic_write_json(args.out / name, {"fetch": "loopback HTTP" if args.http else "in memory", "results": res,
                                        "machine": platform.processor() or platform.machine(),
                                        "python": platform.python_version()})
    print(f"written to {args.out / name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
