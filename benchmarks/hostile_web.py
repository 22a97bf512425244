"""How long the live crawler's bounds take against a hostile web: parses of pathological pages, trickled fetches.

``gym-crawl bench hostile_web [--out DIR]``

* **Parsing**: CPU seconds of :func:`gym_crawl.web.html_extract.extract_page` on pages nesting one element
  (``<div>``, ``<section>``, ``<ul>``, ``<article>``, ``<span>``) 8,000 and 32,000 deep and on 2 MB of it, and
  which reader took the page (full, or the bounded fallback);
* **Fetching**: wall seconds of :meth:`PoliteFetcher.fetch` against a loopback server that sends its headers,
  or its body, one byte every 0.3 s, with ``max_time`` 2 s and a read timeout of 15 s (each byte resets the read
  timeout, so only the fetch's deadline ends it), and from :meth:`PoliteFetcher.cancel` to the end of such a
  fetch.

Figures only (the tests assert the bounds hold, not how fast). Writes ``hostile_web.json`` and ``hostile_web.md``
to ``--out`` (default ``benchmarks/results/hostile_web``).
"""
from __future__ import annotations

import json
import platform
import threading
import time
from pathlib import Path
from typing import Any

from gym_crawl._console import ArgumentParser

DEFAULT_OUT = Path("benchmarks") / "results" / "hostile_web"  # under the current folder


def parse_times() -> list[dict[str, Any]]:
    from gym_crawl.web.html_extract import extract_page

    rows = []
    for tag in ("div", "section", "ul", "article", "span"):
        unit = f"<{tag}>x "
        for label, n in (("8k deep", 8000), ("32k deep", 32000), ("2 MB", 2_000_000 // len(unit))):
            html = f"<html><body>{unit * n}</body></html>".encode()
            t0 = time.process_time()
            page = extract_page(html, "http://deep.test/")
            rows.append({"tag": tag, "page": label, "bytes": len(html), "cpu_s": round(time.process_time() - t0, 3),
                         "reader": page.fallback or "full"})
    return rows


def fetch_times() -> dict[str, float]:
    from gym_crawl.web.fetcher import FetchPolicy, PoliteFetcher
    from gym_crawl.web.serve.server import Raw, html_page, raw_response, serve_site

    page = html_page("Slow", "<p>" + "x" * 2000 + "</p>")
    head = raw_response(200, [("Content-Type", "text/html")], page)
    split = head.index(b"\r\n\r\n") + 4
    routes = {"a": {"/head": Raw(head, pace=0.3, piece=1), "/body": Raw(head[:split] + page, pace=0.3, piece=1)}}
    pol = FetchPolicy(delay=0.0, rate=None, obey_robots=False, read_timeout=15.0, max_time=2.0)
    out: dict[str, float] = {}
    with serve_site(routes) as site:
        for path in ("/head", "/body"):
            with PoliteFetcher(pol) as f:
                t0 = time.monotonic()
                r = f.fetch(site.url("a", path))
                out[f"trickled {path[1:]}, max_time 2 s: seconds to '{r.error}'"] = round(time.monotonic() - t0, 2)
        with PoliteFetcher(FetchPolicy(delay=0.0, rate=None, obey_robots=False, max_time=60.0)) as f:
            marks: dict[str, float] = {}

            def cancel() -> None:
                marks["cancel"] = time.monotonic()
                f.cancel()

            threading.Timer(1.0, cancel).start()
            r = f.fetch(site.url("a", "/body"))
            out[f"cancel() to the end of a trickled fetch: seconds to '{r.error}'"] = round(
                time.monotonic() - marks["cancel"], 3)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="gym-crawl bench hostile_web", description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="output folder")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    res = {"machine": platform.platform(), "parse": parse_times(), "fetch": fetch_times()}
    lines = ["# Bounds against a hostile web", "", "| element | page | bytes | extract_page CPU s | reader |",
             "| --- | --- | ---: | ---: | --- |"]
    lines += [f"| `<{r['tag']}>` | {r['page']} | {r['bytes']:,} | {r['cpu_s']} | {r['reader']} |" for r in res["parse"]]
    lines += ["", "| fetch | seconds |", "| --- | ---: |"] + [f"| {k} | {v} |" for k, v in res["fetch"].items()]
    (out / "hostile_web.json").write_text(json.dumps(res, indent=2))
    (out / "hostile_web.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
