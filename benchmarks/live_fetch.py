"""Overhead of the polite fetcher per request on loopback, with politeness delays off.

``gym-crawl bench live_fetch [--requests N] [--page-kb K] [--out DIR]``

The site (:func:`gym_crawl.web.serve.server.serve_site`, one host, one HTML page of ``K`` KiB) runs in a
child process, so the figures are the client's alone. Each configuration fetches the page ``N`` times over
one keep-alive connection (``delay=0``, no global rate) after 50 warm-up requests:

* ``urllib3``: a bare ``HTTPConnectionPool(maxsize=1)`` GET that reads the body — the floor;
* ``fetcher``: :class:`PoliteFetcher` without robots.txt (canonical URL, scope and trap checks, the
  politeness bookkeeping, streaming with the byte cap, the result);
* ``fetcher+robots``: the same obeying robots.txt (fetched once, then one ``protego`` check per URL);
* ``fetcher+robots+warc``: the same recording every exchange and result to a gzip WARC.

Reported per configuration: requests/s (wall), client CPU µs per request (``time.thread_time`` of the
fetching thread) and the CPU overhead beyond bare urllib3. Figures only; nothing here is asserted in tests.
Writes ``live_fetch.json`` and ``live_fetch.md`` to ``--out`` (default ``benchmarks/results/live_fetch``).
"""
from __future__ import annotations

import json
import multiprocessing as mp
import platform
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gym_crawl._console import ArgumentParser

DEFAULT_OUT = Path("benchmarks") / "results" / "live_fetch"  # under the current folder
WARMUP = 50


def _serve(conn: Any, page_kb: int) -> None:
    from gym_crawl.web.serve.server import html_page, robots_txt, serve_site

    body = html_page("Bench", "<p>" + "lorem ipsum dolor " * (page_kb * 1024 // 18) + "</p>")
    with serve_site({"a": {"/page.html": body, "/robots.txt": robots_txt(["/private/"])}}) as site:
        conn.send(site.url("a", "/page.html"))
        conn.recv()  # stop when the parent says so


def _timed(n: int, one: Callable[[], None]) -> dict[str, float]:
    for _ in range(WARMUP):
        one()
    w0, c0 = time.perf_counter(), time.thread_time()
    for _ in range(n):
        one()
    wall, cpu = time.perf_counter() - w0, time.thread_time() - c0
    return {"requests": n, "wall_s": wall, "requests_per_s": n / wall, "cpu_us_per_request": 1e6 * cpu / n}


def run(n: int, page_kb: int) -> dict[str, Any]:
    import urllib3

    from gym_crawl.web.fetcher import FetchPolicy, PoliteFetcher
    from gym_crawl.web.warc_io import WarcRecorder

    parent, child = mp.Pipe()
    proc = mp.Process(target=_serve, args=(child, page_kb), daemon=True)
    proc.start()
    url = parent.recv()
    results: dict[str, dict[str, float]] = {}
    try:
        host, port = url.split("//")[1].split("/")[0].split(":")
        pool = urllib3.HTTPConnectionPool(host, int(port), maxsize=1, block=True, retries=False)

        def bare() -> None:
            r = pool.urlopen("GET", "/page.html", preload_content=False, redirect=False)
            r.read()
            r.release_conn()

        results["urllib3"] = _timed(n, bare)
        pool.close()
        fast = {"delay": 0.0, "rate": None, "max_pages_per_host": None}  # the page is fetched N times
        with PoliteFetcher(FetchPolicy(obey_robots=False, **fast)) as f:
            results["fetcher"] = _timed(n, lambda: _ok(f.fetch(url)))
        with PoliteFetcher(FetchPolicy(**fast)) as f:
            results["fetcher+robots"] = _timed(n, lambda: _ok(f.fetch(url)))
        with tempfile.TemporaryDirectory() as tmp:
            with WarcRecorder(Path(tmp) / "bench.warc.gz") as rec, \
                    PoliteFetcher(FetchPolicy(**fast), recorder=rec) as f:
                results["fetcher+robots+warc"] = _timed(n, lambda: _ok(f.fetch(url)))
            warc_bytes = (Path(tmp) / "bench.warc.gz").stat().st_size
    finally:
        parent.send("stop")
        proc.join(timeout=10)
    floor = results["urllib3"]["cpu_us_per_request"]
    for r in results.values():
        r["cpu_overhead_us"] = r["cpu_us_per_request"] - floor
    return {"requests": n, "page_kb": page_kb, "warc_bytes_per_request": warc_bytes / (n + WARMUP),
            "python": platform.python_version(), "machine": platform.machine(), "results": results}


def _ok(r: Any) -> None:
    if not r.ok:
        raise RuntimeError(f"benchmark fetch failed: {r.error}")


def to_markdown(res: dict[str, Any]) -> str:
    title = f"# Live fetcher overhead ({res['requests']} requests of a {res['page_kb']} KiB page, loopback, delay 0)"
    lines = [title, "", "| configuration | requests/s | client CPU µs/request | CPU overhead vs urllib3 µs |",
             "| --- | ---: | ---: | ---: |"]
    for name, r in res["results"].items():
        lines.append(f"| {name} | {r['requests_per_s']:.0f} | {r['cpu_us_per_request']:.0f} | "
                     f"{r['cpu_overhead_us']:.0f} |")
    warc = f"WARC bytes per request (gzip, request + response + metadata): {res['warc_bytes_per_request']:.0f}"
    lines += ["", warc, ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="gym-crawl bench live_fetch", description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=2000, help="timed requests per configuration")
    ap.add_argument("--page-kb", type=int, default=20, help="size of the served page in KiB")
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="output folder")
    args = ap.parse_args(argv)
    if args.requests < 1 or args.page_kb < 1:
        raise SystemExit("--requests and --page-kb must be >= 1")
    res = run(args.requests, args.page_kb)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "live_fetch.json").write_text(json.dumps(res, indent=2))
    md = to_markdown(res)
    (out / "live_fetch.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
