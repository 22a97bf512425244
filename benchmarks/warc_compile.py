"""WARC compile speed and memory, and the libraries behind it measured side by side.

On the same inputs — a synthetic web of ``--pages`` pages (default 20,000) rendered with
:func:`gym_crawl.web.html_extract.render_page` into ``--files`` gzipped WARC files with warcio, and real
HTML found on this machine (Debian's ``/usr/share/doc/*/html`` documentation, ``--real-pages`` files in a
fixed sample; skipped with a reason when none is installed) — it measures, single process:

* **WARC reading**: FastWARC vs warcio (every record, payloads read): MB/s and records/s;
* **HTML parsing + links**: selectolax (Lexbor), Resiliparse (Lexbor) and lxml (libxml2): parse, every
  ``<a href>`` with its text: MB/s and pages/s; and the whole :func:`extract_page` for reference;
* **main text**: Resiliparse ``extract_plain_text(main_content=True)`` vs trafilatura ``extract``: pages/s;
* **URL canonicalisation**: w3lib (``canonical_url``) vs courlan ``normalize_url``: URLs/s over the real
  pages' links, and agreement with the expected canonical form on the table of ``tests/test_urls.py``;
* **the whole compile**: one process vs ``--workers`` processes vs Dask (``LocalCluster``, 2 workers),
  seconds, pages/s and MB/s (per core = divided by the workers);
* **peak RSS** compiling one uncompressed WARC of ``--big-mb`` MB (default 320) of boilerplate-heavy pages,
  in a fresh subprocess (``ru_maxrss``), against the file size.

JSON and a PNG bar chart into ``benchmarks/results/warc_compile/`` (``--out``)::

    python -m gym_crawl.benchmarks.warc_compile                 # everything (~10 min on 2 cores)
    python -m gym_crawl.benchmarks.warc_compile --pages 2000 --big-mb 40 --skip-dask   # quick look
"""
from __future__ import annotations

import gc
import glob
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._console import ArgumentParser

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = Path("benchmarks") / "results" / "warc_compile"  # under the current folder


# ------------------------------------------------------------------------------------ inputs

def synthetic_pages(n_pages: int) -> list[tuple[str, str, str, list[tuple[str, str]]]]:
    """``(url, title, text, [(url, anchor)])`` of the embedded synthetic web of ``n_pages`` pages (text: the
    page's words in a fixed order)."""
    from gym_crawl.webgen.synthetic import synthetic_corpus

    c = synthetic_corpus(n_pages=n_pages)
    vocab = c.vocab.tolist()
    rng = np.random.default_rng(0)
    src = c.link_src()
    out = []
    for i in range(c.n_pages):
        a, b = c.text_ptr[i], c.text_ptr[i + 1]
        words = np.repeat(c.text_terms[a:b], c.text_counts[a:b])
        rng.shuffle(words)
        lines = [" ".join(vocab[int(w)] for w in words[k:k + 12]) for k in range(0, len(words), 12)]
        la, lb = c.outlinks(i)
        links = [(c.url(int(d)), " ".join(vocab[int(t)] for t in c.anchor_terms[c.anchor_ptr[e]:c.anchor_ptr[e + 1]]))
                 for e, d in zip(range(la, lb), c.link_dst[la:lb])]
        assert all(src[la:lb] == i)
        out.append((c.url(i), c.titles[i], "\n".join(lines), links))
    return out


def write_warc(path: Path, pages: list[tuple[str, bytes]], gz: bool = True) -> Path:
    """A WARC with a request + response record per ``(url, html)``."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=gz)
        for url, body in pages:
            w.write_record(w.create_warc_record(url, "request", http_headers=StatusAndHeaders(
                "GET / HTTP/1.1", [("Host", "x")], is_http_request=True)))
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
            w.write_record(w.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http))
    return path


def real_html(n: int) -> list[tuple[str, bytes]]:
    """A fixed sample of up to ``n`` HTML files of Debian's documentation (every k-th of the sorted list)."""
    files = sorted(glob.glob("/usr/share/doc/*/html/**/*.html", recursive=True)
                   + glob.glob("/usr/share/doc/*/*.html"))
    if not files:
        return []
    step = max(1, len(files) // n)
    out = []
    for f in files[::step][:n]:
        try:
            out.append(("http://docs.local" + f, Path(f).read_bytes()))
        except OSError:
            continue
    return out


_BOILER = ("<script>" + "var analytics_config = {'id': 12345, 'events': ['click', 'scroll']};" * 600
           + "</script><style>" + ".nav-item{margin:0 4px;padding:2px 8px;color:#333}" * 500 + "</style>")


def big_warc(path: Path, target_mb: int) -> tuple[Path, int]:
    """An uncompressed WARC of about ``target_mb`` MB: pages of ~70 KB, most of it inline script and CSS
    (as real pages carry), around a short article and a menu of links."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    n = 0
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=False)
        while f.tell() < target_mb * 1_000_000:
            menu = "".join(f'<li><a href="/p{(n * 31 + k) % 100000}">Section {k}</a></li>' for k in range(40))
            body = (f"<html><head><title>Page {n}</title>{_BOILER}</head><body><nav><ul>{menu}</ul></nav>"
                    f"<main><article><h1>Page {n}</h1><p>Article {n} about topic{n % 97} and words{n % 13} with "
                    f"more text of the article body.</p></article></main><footer>Copyright</footer>"
                    f"</body></html>").encode()
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
            w.write_record(w.create_warc_record(f"http://big.local/p{n}", "response", payload=io.BytesIO(body),
                                                http_headers=http))
            n += 1
    return path, n


# ---------------------------------------------------------------------------------- measures

BUDGET_S = 30.0
"""A library measurement stops after this many seconds (the items done so far give its rate)."""


def _rate(fn: Any, items: list, sizes: list[int] | None = None) -> dict[str, float]:
    """Items per second (and MB/s when ``sizes`` are given) of ``fn`` over ``items``, within :data:`BUDGET_S`."""
    t = time.perf_counter()
    done = 0
    for x in items:
        fn(x)
        done += 1
        if time.perf_counter() - t > BUDGET_S:
            break
    dt = time.perf_counter() - t
    out = {"items": done, "seconds": dt, "per_s": done / dt}
    if sizes is not None:
        out["mb_per_s"] = sum(sizes[:done]) / 1e6 / dt
    return out


def bench_readers(path: Path) -> dict[str, Any]:
    from fastwarc.warc import ArchiveIterator
    from warcio.archiveiterator import ArchiveIterator as WarcioIterator

    size = path.stat().st_size
    out = {}
    t = time.perf_counter()
    n = 0
    for r in ArchiveIterator(str(path), parse_http=True):
        r.reader.read()
        n += 1
    dt = time.perf_counter() - t
    out["fastwarc"] = {"records": n, "seconds": dt, "records_per_s": n / dt, "mb_per_s": size / 1e6 / dt}
    t = time.perf_counter()
    n = 0
    with open(path, "rb") as f:
        for r in WarcioIterator(f):
            r.content_stream().read()
            n += 1
    dt = time.perf_counter() - t
    out["warcio"] = {"records": n, "seconds": dt, "records_per_s": n / dt, "mb_per_s": size / 1e6 / dt}
    return {"file_mb": size / 1e6, **out}


def bench_parsers(pages: list[tuple[str, bytes]]) -> dict[str, Any]:
    import lxml.html
    from resiliparse.parse.html import HTMLTree
    from selectolax.lexbor import LexborHTMLParser

    from gym_crawl.web.html_extract import decode_html, extract_page

    texts = [decode_html(b) for _, b in pages]
    size = sum(len(b) for _, b in pages)
    sizes = [len(b) for _, b in pages]
    utf8_parser = lxml.html.HTMLParser(encoding="utf-8")

    def sel(s: str) -> list:
        return [(a.attributes.get("href"), a.text()) for a in LexborHTMLParser(s).css("a[href]")]

    def res(s: str) -> list:
        return [(a.getattr("href"), a.text) for a in HTMLTree.parse(s).body.query_selector_all("a[href]")]

    def lx(s: str) -> list:
        try:  # bytes: lxml refuses a str that carries an XML encoding declaration
            doc = lxml.html.document_fromstring(s.encode("utf-8"), parser=utf8_parser)
        except Exception:  # noqa: BLE001 - lxml refuses empty documents
            return []
        return [(a.get("href"), a.text_content()) for a in doc.iter("a") if a.get("href") is not None]

    out: dict[str, Any] = {name: _rate(fn, texts, sizes) for name, fn in (("selectolax", sel), ("resiliparse", res),
                                                                          ("lxml", lx))}
    out["extract_page (compiled walk + resiliparse main text + canonical links)"] = _rate(
        lambda p: extract_page(p[1], p[0]), pages, sizes)
    out["links_found_first_50_pages"] = {name: int(sum(len(fn(s)) for s in texts[:50])) for name, fn in
                                         (("selectolax", sel), ("resiliparse", res), ("lxml", lx))}
    return {"pages": len(pages), "mb": size / 1e6, **out}


def bench_main_text(pages: list[tuple[str, bytes]]) -> dict[str, Any]:
    from resiliparse.extract.html2text import extract_plain_text

    from gym_crawl.web.html_extract import decode_html

    texts = [decode_html(b) for _, b in pages]
    sizes = [len(b) for _, b in pages]
    out: dict[str, Any] = {"resiliparse": _rate(lambda s: extract_plain_text(s, main_content=True), texts, sizes)}
    try:
        import trafilatura

        out["trafilatura"] = _rate(lambda s: trafilatura.extract(s), texts, sizes)
    except ImportError as e:
        out["trafilatura"] = {"skipped": f"trafilatura not importable ({e})"}
    return {"pages": len(pages), **out}


def bench_urls(pages: list[tuple[str, bytes]]) -> dict[str, Any]:
    import courlan
    from selectolax.lexbor import LexborHTMLParser
    from w3lib.url import canonicalize_url

    from gym_crawl.web import urls as urls_mod

    pairs = []
    for url, body in pages:
        for a in LexborHTMLParser(body.decode("utf-8", "replace")).css("a[href]"):
            pairs.append((a.attributes.get("href") or "", url))
    from urllib.parse import urljoin

    absolute = [urljoin(b, h) for h, b in pairs if not h.startswith(("mailto:", "javascript:"))]
    out: dict[str, Any] = {"urls": len(absolute)}
    out["w3lib canonicalize_url"] = _rate(lambda u: canonicalize_url(u, keep_fragments=False), absolute)
    out["canonical_url (w3lib + ports/host/query rules, uncached)"] = _rate(
        lambda u: urls_mod.canonicalize(u, None), absolute)
    out["courlan normalize_url"] = _rate(lambda u: courlan.normalize_url(u), absolute)
    sys.path.insert(0, str(HERE.parent / "tests"))
    try:
        from test_urls import CASES
    except ImportError:
        CASES = []
    cases = [(u, b, e) for u, b, e in CASES if e is not None and b is None]
    ok_w3 = sum(urls_mod.canonical_url(u) == e for u, _, e in cases)

    def cour(u: str) -> str | None:
        try:
            return courlan.normalize_url(u)
        except Exception:  # noqa: BLE001 - courlan raises on some malformed URLs
            return None

    ok_cour = sum(cour(u) == e for u, _, e in cases)
    out["agreement_with_expected"] = {"cases": len(cases), "canonical_url (w3lib)": ok_w3, "courlan": ok_cour}
    return out


def bench_compile(folder: Path, workers: int, with_dask: bool) -> dict[str, Any]:
    from gym_crawl.web.warc import load_warc

    size = sum(f.stat().st_size for f in folder.glob("*.warc.gz"))
    out: dict[str, Any] = {"files": len(list(folder.glob("*.warc.gz"))), "mb": size / 1e6}
    runs = [("1 process", {"workers": 1}), (f"{workers} processes", {"workers": workers})]
    if with_dask:
        runs.append(("dask LocalCluster 2 workers", {"engine": "dask"}))
    ref = None
    for name, kw in runs:
        t = time.perf_counter()
        c = load_warc(folder, cache=False, **kw)
        dt = time.perf_counter() - t
        n_workers = kw.get("workers", 2)
        out[name] = {"seconds": dt, "pages_per_s": c.n_pages / dt, "mb_per_s": size / 1e6 / dt,
                     "pages_per_s_per_core": c.n_pages / dt / n_workers, "pages": c.n_pages, "links": c.n_links}
        sig = (c.n_pages, c.n_links, int(c.text_counts.sum()), int(c.anchor_terms.sum()))
        out[name]["same_corpus_as_1_process"] = ref is None or sig == ref
        ref = ref or sig
    return out


_HWM = """
def hwm():  # peak resident set of this process image (VmHWM; ru_maxrss would include the forking parent's)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
"""
_RSS_CHILD = _HWM + """
import json, sys, time
from gym_crawl.web.warc import load_warc
t = time.perf_counter()
c = load_warc(sys.argv[1], workers=1, chunk_pages=int(sys.argv[2]), cache=False)
dt = time.perf_counter() - t
print(json.dumps({"pages": c.n_pages, "links": c.n_links, "seconds": dt, "peak_rss_mb": hwm()}))
"""


def bench_peak_rss(path: Path, chunk_pages: int) -> dict[str, Any]:
    res = subprocess.run([sys.executable, "-c", _RSS_CHILD, str(path), str(chunk_pages)], capture_output=True,
                         text=True, check=True)
    out = json.loads(res.stdout.strip().splitlines()[-1])
    base = subprocess.run([sys.executable, "-c", _HWM + "import gym_crawl.web.warc, fastwarc.warc, "
                           "resiliparse.extract.html2text, w3lib.url\nprint(hwm())"],
                          capture_output=True, text=True, check=True)
    return {"file_mb": path.stat().st_size / 1e6, "chunk_pages": chunk_pages, **out,
            "import_rss_mb": float(base.stdout.strip()), "mb_per_s": path.stat().st_size / 1e6 / out["seconds"]}


# ---------------------------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="gym-crawl bench warc_compile", description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=20_000, help="synthetic pages (default 20000)")
    ap.add_argument("--files", type=int, default=4, help="WARC files the synthetic web is split into")
    ap.add_argument("--real-pages", type=int, default=1500, help="real HTML files sampled (default 1500)")
    ap.add_argument("--big-mb", type=int, default=320, help="size of the peak-RSS WARC in MB (default 320)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--skip-dask", action="store_true")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    from gym_crawl.web.html_extract import render_page

    tmp = Path(tempfile.mkdtemp(prefix="warc_bench_"))
    results: dict[str, Any] = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                                           "platform": platform.platform()},
                               "args": {k: str(v) for k, v in vars(args).items()}}
    try:
        t = time.perf_counter()
        pages = synthetic_pages(args.pages)
        rendered = [(u, render_page(t_, x, links)) for u, t_, x, links in pages]
        (tmp / "syn").mkdir()
        per = -(-len(rendered) // args.files)
        for k in range(args.files):
            write_warc(tmp / "syn" / f"part{k:02d}.warc.gz", rendered[k * per:(k + 1) * per])
        results["synthetic"] = {"pages": len(rendered), "html_mb": sum(len(b) for _, b in rendered) / 1e6,
                                "write_seconds": time.perf_counter() - t}
        print(f"synthetic web: {len(rendered)} pages in {args.files} WARC files", flush=True)
        real = real_html(args.real_pages)
        samples = {"synthetic": rendered[:args.real_pages]}
        if real:
            samples["real (Debian docs)"] = real
            write_warc(tmp / "real.warc.gz", real)
        else:
            results["real_skipped"] = "no HTML under /usr/share/doc (install e.g. python3-doc)"
        results["reading"] = {"synthetic (first file)": bench_readers(tmp / "syn" / "part00.warc.gz")}
        if real:
            results["reading"]["real (Debian docs)"] = bench_readers(tmp / "real.warc.gz")
        print("reading", json.dumps(results["reading"]), flush=True)
        results["parsing"] = {k: bench_parsers(v) for k, v in samples.items()}
        gc.collect()  # drop Resiliparse trees here: they must not be freed on the Dask client's thread later
        print("parsing done", flush=True)
        results["main_text"] = {k: bench_main_text(v[:500]) for k, v in samples.items()}
        print("main text done", flush=True)
        results["urls"] = bench_urls(real or rendered[:500])
        print("urls done", flush=True)
        results["compile"] = bench_compile(tmp / "syn", args.workers, not args.skip_dask)
        print("compile", json.dumps(results["compile"]), flush=True)
        big, n_big = big_warc(tmp / "big.warc", args.big_mb)
        results["peak_rss"] = {**bench_peak_rss(big, 2000), "records": n_big}
        print("peak rss", json.dumps(results["peak_rss"]), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=2))
    _plot(results, args.out / "warc_compile.png")
    print(f"wrote {args.out / 'results.json'} and warc_compile.png")
    return 0


def _plot(r: dict[str, Any], path: Path) -> None:
    from gym_crawl.benchmarks.plotting import pyplot, save_png

    plt = pyplot()
    panels: list[tuple[str, dict[str, float], str]] = []
    for sample, v in r.get("reading", {}).items():
        panels.append((f"WARC reading, {sample}", {k: v[k]["mb_per_s"] for k in ("fastwarc", "warcio")}, "MB/s"))
    for sample, v in r.get("parsing", {}).items():
        panels.append((f"parse + links, {sample}", {k: v[k]["per_s"] for k in ("selectolax", "resiliparse", "lxml")},
                       "pages/s"))
    for sample, v in r.get("main_text", {}).items():
        panels.append((f"main text, {sample}", {k: v[k]["per_s"] for k in ("resiliparse", "trafilatura")
                                                if "per_s" in v[k]}, "pages/s"))
    u = r.get("urls", {})
    panels.append(("URL canonicalisation", {"w3lib": u["w3lib canonicalize_url"]["per_s"],
                                            "courlan": u["courlan normalize_url"]["per_s"]}, "URLs/s"))
    comp = r.get("compile", {})
    panels.append(("whole compile", {k: v["pages_per_s"] for k, v in comp.items() if isinstance(v, dict)}, "pages/s"))
    cols = 3
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.4 * rows), squeeze=False)
    for ax, (title, vals, unit) in zip(axes.flat, panels):
        ax.bar(range(len(vals)), list(vals.values()), color="#4c72b0")
        ax.set_xticks(range(len(vals)))
        ax.set_xticklabels(list(vals), rotation=20, fontsize=7, ha="right")
        ax.set_title(title, fontsize=9)
        ax.set_ylabel(unit)
        ax.grid(alpha=0.3, axis="y")
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    rss = r.get("peak_rss")
    fig.suptitle("WARC compile: libraries side by side (single process)" + (
        f" — peak RSS {rss['peak_rss_mb']:.0f} MB compiling a {rss['file_mb']:.0f} MB WARC" if rss else ""))
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    save_png(fig, path)


if __name__ == "__main__":
    raise SystemExit(main())
