"""Steps without a page on the ``docs-web`` sites, crawled live: what the offer rules save.

``gym-crawl bench live_waste [--steps 300] [--sites rust python ...] [--concurrency 16] [--quick]`` — JSON and PNG into
``benchmarks/results/live_waste/``.

The installed Debian documentation sites of the ``docs-web`` corpus (:mod:`gym_crawl.benchmarks.docs_web`:
``find_sites``; ``gym-crawl bench docs-web --install`` installs them) are served on loopback, one host per site,
byte for byte (:func:`~gym_crawl.web.serve.server.serve_folder`). Each site is crawled live by best-first from its
start page for ``--steps`` steps, looking for the words of its largest section, with the polite fetcher (robots.txt
obeyed: rust-doc ships one), per-host delay 0 (the servers are this process' own threads) and the default
:class:`~gym_crawl.web.offer.OfferRules` — and once more with the rules off (``OfferRules.none()``, every in-scope
link offered, as before they existed). Then every site at once from all start pages with ``--concurrency`` pages
in flight, one per host. Per crawl: steps, pages, steps that ended without a page and why (fetch errors by kind),
URLs never offered (refusals by reason) and requests on the wire. The target: at most 5 % of steps without a page.
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

DEFAULT_OUT = Path("benchmarks") / "results" / "live_waste"


def topic_of(site: Any) -> str:
    """The crawl's topic on a site: the words of its first section's label (``std.collections`` → ``"std
    collections"``), else the site's name."""
    if site.sections:
        return site.sections[0][1].replace(".", " ").replace("_", " ")
    return site.name.replace("_", " ")


def crawl(seeds: list[str], topic: str, steps: int, concurrency: int, offer: Any, warc: Path) -> dict[str, Any]:
    """One live best-first crawl; its counters."""
    from gym_crawl.agents import make_agent
    from gym_crawl.agents.live_crawl import crawl_live
    from gym_crawl.web.policy import FetchPolicy
    from gym_crawl.web.settings import LiveCrawlSettings

    settings = LiveCrawlSettings(seeds=tuple(seeds), topic=topic, max_pages=steps, scope="hosts",
                                 concurrency=concurrency, per_host=1, policy=FetchPolicy(delay=0.0, rate=None),
                                 offer=offer)
    res = crawl_live(make_agent("best-first"), settings, warc=warc, progress=None, handle_signals=False)
    s = res.summary()
    return {"steps": s["steps"], "pages": s["pages"], "steps_without_page": s["steps_without_page"],
            "without_page_fraction": round(s["steps_without_page"] / s["steps"], 4) if s["steps"] else None,
            "errors": s["errors"], "refused": s["refused"], "requests_wire": s["requests_wire"],
            "fetches": s["fetches"], "relevant_found": s["relevant_found"], "wall_s": s["wall_seconds"],
            "cpu_ms_per_page": s["cpu_ms_per_page"]}


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    from gym_crawl.benchmarks.plotting import pyplot, save_png

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(10, 4))
    labels = [f"{r['site']}\n{'rules' if r['offer_rules'] else 'no rules'}" for r in rows]
    vals = [100 * (r["without_page_fraction"] or 0) for r in rows]
    ax.bar(range(len(rows)), vals, color=["#4c72b0" if r["offer_rules"] else "#c44e52" for r in rows])
    ax.axhline(5, color="k", ls="--", lw=1, label="target 5 %")
    ax.set_xticks(range(len(rows)), labels, fontsize=7, rotation=60)
    ax.set_ylabel("% of steps without a page")
    ax.set_title("docs-web sites crawled live (best-first)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_png(fig, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="gym-crawl bench live_waste", description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--sites", nargs="+", default=None, help="docs-web site names (default: every installed one)")
    ap.add_argument("--concurrency", type=int, default=16, help="pages in flight of the all-sites crawl")
    ap.add_argument("--quick", action="store_true", help="two sites, 40 steps (a smoke run)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    from gym_crawl.benchmarks.docs_web import SITES, find_sites
    from gym_crawl.web.offer import OfferRules
    from gym_crawl.web.serve.server import serve_folder

    wanted = [s for s in SITES if args.sites is None or s.name in args.sites]
    if args.quick:
        wanted, args.steps = [s for s in wanted if s.name in ("rust", "python")] or wanted[:2], 40
    roots, missing = find_sites(wanted)
    if not roots:
        raise SystemExit(f"no docs-web site is installed ({missing}); run `gym-crawl bench docs-web --install`")
    rows: list[dict[str, Any]] = []
    t0 = time.time()
    with serve_folder("/", {r.site.name: str(r.root) for r in roots}) as served, \
            tempfile.TemporaryDirectory(prefix="gym-crawl-live-waste-") as tmp:
        starts = {r.site.name: f"{served.base_urls[r.site.name]}/{r.start}" for r in roots}
        for r in roots:
            for offer in (OfferRules(), OfferRules.none()):
                on = offer == OfferRules()
                row = {"site": r.site.name, "topic": topic_of(r.site), "concurrency": 1, "offer_rules": on,
                       **crawl([starts[r.site.name]], topic_of(r.site), args.steps, 1, offer,
                               Path(tmp) / f"{r.site.name}-{int(on)}.warc.gz")}
                rows.append(row)
                print(f"{r.site.name:<18} rules {'on ' if on else 'off'}: {row['steps_without_page']:>3} of "
                      f"{row['steps']} steps without a page; errors {row['errors']}; refused {row['refused']}",
                      flush=True)
        for offer in (OfferRules(), OfferRules.none()):
            on = offer == OfferRules()
            row = {"site": "all", "topic": "documentation reference", "concurrency": args.concurrency,
                   "offer_rules": on, **crawl(sorted(starts.values()), "documentation reference", args.steps,
                                              args.concurrency, offer, Path(tmp) / f"all-{int(on)}.warc.gz")}
            rows.append(row)
            print(f"all sites W={args.concurrency} rules {'on ' if on else 'off'}: {row['steps_without_page']} of "
                  f"{row['steps']} steps without a page; errors {row['errors']}; refused {row['refused']}", flush=True)
    on_rows = [r for r in rows if r["offer_rules"]]
    off_rows = [r for r in rows if not r["offer_rules"]]
    result = {"steps": args.steps, "sites": [r.site.name for r in roots], "missing": missing, "rows": rows,
              "without_page_fraction_rules_on": round(sum(r["steps_without_page"] for r in on_rows)
                                                     / max(1, sum(r["steps"] for r in on_rows)), 4),
              "without_page_fraction_rules_off": round(sum(r["steps_without_page"] for r in off_rows)
                                                      / max(1, sum(r["steps"] for r in off_rows)), 4),
              "seconds": round(time.time() - t0, 1), "load_average": [round(x, 2) for x in os.getloadavg()]}
    from gym_crawl.benchmarks.report import write_json_report

    args.out.mkdir(parents=True, exist_ok=True)
    path = write_json_report(args.out / "live_waste.json", result, "live_waste", args)
    plot(rows, args.out / "live_waste.png")
    print(f"steps without a page: {100 * result['without_page_fraction_rules_on']:.1f} % with the offer rules, "
          f"{100 * result['without_page_fraction_rules_off']:.1f} % without; written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
