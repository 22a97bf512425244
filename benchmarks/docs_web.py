"""The ``docs-web`` corpus: Debian's HTML documentation packages, served on loopback, crawled live, compiled.

``gym-crawl bench docs-web [--install] [--out DIR] [--force]`` (also ``python -m gym_crawl.benchmarks.docs_web``)

Debian ships the documentation of many projects as static web sites: real navigation, real cross-links,
real section structure. This builder turns the installed ones into one multi-site web to develop and
evaluate crawlers on:

1. **find** each site's Debian package (``dpkg-query``) and its HTML root (``dpkg -L``); with
   ``--install`` the missing packages are installed with ``apt-get install --no-install-recommends``,
   without it a missing package is skipped and named (the run fails with the list when none is found);
2. **serve** every site's root on loopback, one HTTP server (one host) per site;
3. **crawl** them live, breadth-first from each site's start page, with the polite fetcher — robots.txt
   obeyed (rust-doc ships one), one connection per host, **per-host delay 0** (the servers are this
   process's own loopback threads; a crawl of a site one does not run keeps the 1 s default), a byte cap
   of 8 MiB per page — recording every request and response to ``docs-web.warc.gz``;
4. **compile** the WARC into the ``docs-web`` corpus (``<data dir>/docs-web``) with the section labels of
   :func:`label_rules` (longest URL-prefix match), and print sites, pages, links and labels;
5. **score** every page and link for each task topic once and store the tables in the data dir
   (:func:`warm_score_tables`), so the suite's workers memory-map them.

Each step is skipped when its output exists (``--force`` redoes them), so an interrupted build resumes at
the step it stopped in.

Labels: each site's own section structure
-----------------------------------------
A page's label is ``<site>.<section>[.<subsection>]`` from the URL path of the page below its site's root,
by the fixed prefix rules of :data:`SITES` (the longest matching prefix wins; a page no rule matches
carries the bare site label, e.g. ``python``). The rules follow each site's own layout:

* **python** (python3-doc): the top-level folders of the Sphinx build — ``library/`` → ``python.library``,
  ``c-api/`` → ``python.c_api``, ``tutorial/``, ``howto/``, ``reference/``, ``whatsnew/``, ``using/``,
  ``extending/``, ``faq/``, ``distutils/``;
* **postgresql** (postgresql-doc-NN, one flat folder): the file-name prefix that names the chapter —
  ``sql-*`` (SQL commands) → ``postgresql.sql_commands``, ``infoschema-*`` →
  ``postgresql.information_schema``, ``catalog-*`` → ``postgresql.system_catalogs``, ``view-*`` →
  ``postgresql.system_views``, ``spi*`` → ``postgresql.spi``, ``ecpg*`` → ``postgresql.ecpg``,
  ``functions*`` → ``postgresql.functions``, ``app-*`` → ``postgresql.applications`` … (the section name
  is the chapter's title word where the prefix is an abbreviation, so the label names the topic in words
  its pages use);
* **apache** (apache2-doc, served from ``manual/``, crawled from ``en/index.html``; the other languages'
  folders, which every page links to, are left out of the crawl): the folders of the English manual —
  ``en/mod/`` → ``apache.modules``, ``en/programs/``, ``en/howto/``, ``en/rewrite/``, ``en/vhosts/``,
  ``en/ssl/``, ``en/developer/``, ``en/misc/``, ``en/platform/``;
* **debian_reference**, **debian_handbook** (en-US), **r_manuals** (r-doc-html): no section folders (one file per
  chapter or manual): the bare site label only — part of the web, no task;
* **rust** (rust-doc): the books (``book/`` → ``rust.book``, ``reference/``, ``rust-by-example/`` →
  ``rust.by_example``, ``nomicon/``, ``edition-guide/``, ``embedded-book/``, ``unstable-book/``,
  ``rustc/``, ``rustdoc/``), the API crates (``alloc/``, ``proc_macro/``, ``test/``) and the modules of
  ``std/`` with >= 25 pages whose name is a word (``std/collections/`` → ``rust.std.collections`` …).
  Two folders are left out of the crawl: ``core/`` (27,687 pages, mostly the SIMD intrinsics that
  ``std`` re-exports) and ``src/``, rustdoc's source view (607 code listings of up to 8 MB);
* **git** (git-doc): ``git-*.html`` (the command manual pages) → ``git.commands``, other ``git*.html``
  (the concept guides: gitglossary, gittutorial …) → ``git.guides``, ``technical/``, ``howto/``;
* **django** (python-django-doc): its folders — ``ref/`` → ``django.ref``, ``ref/contrib/`` →
  ``django.ref.contrib``, ``ref/contrib/gis/``, ``topics/``, ``howto/``, ``releases/``, ``internals/``,
  ``intro/``, ``_modules/`` (Sphinx's highlighted source) → ``django.module_code``;
* **sphinx** (sphinx-doc): ``usage/``, ``extdev/``, ``development/``, ``tutorial/``, ``man/``,
  ``internals/``, ``_modules/`` → ``sphinx.module_code``;
* **scipy** (python-scipy-doc): the subpackage of each API page — ``reference/generated/scipy.stats.*``
  and ``reference/stats*.html`` → ``scipy.stats`` (the same for sparse, linalg, special, interpolate,
  signal, spatial, optimize, integrate, ndimage, io, cluster, fft, odr; fftpack → ``scipy.legacy_fftpack``, as
  its page title has it, since a topic label is a prefix of every label it covers), with the subpackages of
  >= 25 pages as subsections (``scipy.linalg.lapack``, ``scipy.linalg.blas``, ``scipy.sparse.linalg``,
  ``scipy.sparse.csgraph``, ``scipy.stats.mstats``, ``scipy.cluster.hierarchy``); ``tutorial/`` →
  ``scipy.tutorial`` (``tutorial/stats/`` → ``scipy.tutorial.stats``), ``release.*`` →
  ``scipy.releases``, ``dev/`` → ``scipy.dev``.

The suite's ``docs-web`` task set (:mod:`gym_crawl.benchmarks.suite`) makes a task of every section label
with >= 25 pages; the site label itself is never a task. ``docs-web-hard`` keeps the sections of a cross-site
genre (:data:`gym_crawl.tasks.docs_web.GENRES`: release notes → "changelog", highlighted source →
"implementation" …) whose genre word is in at most 20 % of their pages, and names each by that word.
"""
from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gym_crawl._console import ArgumentParser
from gym_crawl.tasks.docs_web import (
    CORPUS_DIRNAME,
    FAR_BUDGET,
    NEAR_BUDGET,
    corpus_path,
    docs_web_tasks,
    load_docs_web,
    page_sites,
    site_label,
    split_of,
)
from gym_crawl.tasks.task import task_kind

__all__ = [
    "CORPUS_DIRNAME",
    "FAR_BUDGET",
    "NEAR_BUDGET",
    "SITES",
    "Site",
    "SiteRoot",
    "build",
    "corpus_path",
    "crawl",
    "docs_web_tasks",
    "find_sites",
    "hrefs",
    "label_of",
    "label_rules",
    "load_docs_web",
    "main",
    "page_sites",
    "report",
    "site_label",
    "site_of",
    "split_of",
    "task_kind",
    "warm_score_tables",
]



@dataclass(frozen=True)
class Site:
    """One documentation site of the web.

    :param name: the site's label (and the first component of its section labels): ``"python"``.
    :param packages: the Debian package that ships it; a glob (``"postgresql-doc-[0-9]*"``) matches the
        installed versioned package, and its first entry without glob characters is what ``--install``
        asks ``apt-get`` for.
    :param index: regular expression over ``dpkg -L`` paths matching the site's start page; the HTML root
        is its folder (``/usr/share/doc/python3.11/html/index.html`` → ``…/html``).
    :param sections: ``(path prefix below the root, section label)`` rules; the label of a page is
        ``<name>.<section>`` of the longest prefix its path starts with, else ``<name>``.
    :param exclude: path prefixes below the root that are not crawled.
    :param install: the package ``--install`` installs (default: the first of ``packages``).
    :param start: the start page's path below the root, when the root is above the start page's folder
        (default: the start page's file name; the root is then its folder).
    """

    name: str
    packages: tuple[str, ...]
    index: str
    sections: tuple[tuple[str, str], ...] = ()
    exclude: tuple[str, ...] = ()
    install: str | None = None
    start: str | None = None

    @property
    def install_name(self) -> str:
        return self.install or self.packages[0]


def _sub(pairs: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """``"folder/"`` → ``("folder/", "folder")`` with ``-`` → ``_`` (a label component is one token run)."""
    return tuple((p, p.rstrip("/").replace("-", "_")) for p in pairs)


_SCIPY_SUBPACKAGES = ("sparse", "linalg", "stats", "special", "interpolate", "signal", "spatial", "optimize",
                      "integrate", "ndimage", "io", "cluster", "fft", "fftpack", "odr", "constants", "misc",
                      "datasets")
_SCIPY_SUBSECTIONS = ("linalg.lapack", "linalg.blas", "sparse.linalg", "sparse.csgraph", "stats.mstats",
                      "cluster.hierarchy")
#: ``scipy.fft`` would be a string prefix of ``scipy.fftpack`` (a label topic is every label starting with
#: it), so the legacy package is named as its documentation title calls it
_SCIPY_LABEL = {"fftpack": "legacy_fftpack"}
_APACHE_OTHER_LANGUAGES = ("da/", "de/", "es/", "fr/", "ja/", "ko/", "pt-br/", "ru/", "tr/", "zh-cn/")
_RUST_STD = ("collections", "env", "fmt", "fs", "intrinsics", "io", "iter", "mem", "net", "ops", "os", "ptr",
             "simd", "slice", "str", "sync", "thread")

SITES: tuple[Site, ...] = (
    Site("python", ("python3-doc",), r"^/usr/share/doc/python3\.\d+/html/index\.html$",
         _sub(["library/", "c-api/", "tutorial/", "howto/", "reference/", "whatsnew/", "using/", "extending/",
               "faq/", "distutils/"])),
    Site("postgresql", ("postgresql-doc-[0-9]*",), r"^/usr/share/doc/postgresql-doc-\d+/html/index\.html$",
         (("sql-", "sql_commands"), ("infoschema-", "information_schema"), ("catalog-", "system_catalogs"),
          ("view-", "system_views"), ("spi", "spi"), ("ecpg", "ecpg"), ("functions", "functions"),
          ("app-", "applications"), ("tutorial", "tutorial"), ("contrib", "contrib"), ("release", "releases"),
          ("libpq", "libpq"), ("runtime", "runtime"), ("datatype", "datatype"), ("ddl", "ddl"),
          ("plpgsql", "plpgsql"), ("protocol", "protocol")), install="postgresql-doc"),
    Site("apache", ("apache2-doc",), r"^/usr/share/doc/apache2-doc/manual/en/index\.html$",
         tuple((f"en/{p}", lab) for p, lab in (("mod/", "modules"),) + _sub(
             ["programs/", "howto/", "rewrite/", "vhosts/", "ssl/", "developer/", "misc/", "platform/"])),
         exclude=_APACHE_OTHER_LANGUAGES, start="en/index.html"),
    Site("debian_reference", ("debian-reference-en",), r"^/usr/share/debian-reference/index\.en\.html$"),
    Site("debian_handbook", ("debian-handbook",), r"^/usr/share/doc/debian-handbook/html/en-US/index\.html$"),
    Site("rust", ("rust-doc",), r"^/usr/share/doc/rust-doc/html/index\.html$",
         _sub(["book/", "reference/", "nomicon/", "edition-guide/", "embedded-book/", "unstable-book/", "rustc/",
               "rustdoc/", "alloc/", "proc_macro/", "test/", "std/"])
         + (("rust-by-example/", "by_example"),)
         + tuple((f"std/{m}/", f"std.{m}") for m in _RUST_STD),
         exclude=("core/", "src/")),
    Site("git", ("git-doc",), r"^/usr/share/doc/git-doc/index\.html$",
         (("git-", "commands"), ("git", "guides"), ("technical/", "technical"), ("howto/", "howto"))),
    Site("django", ("python-django-doc",), r"^/usr/share/doc/python-django-doc/html/index\.html$",
         _sub(["ref/", "topics/", "howto/", "releases/", "internals/", "intro/"])
         + (("ref/contrib/", "ref.contrib"), ("ref/contrib/gis/", "ref.contrib.gis"), ("_modules/", "module_code"))),
    Site("sphinx", ("sphinx-doc",), r"^/usr/share/doc/sphinx-doc/html/index\.html$",
         _sub(["usage/", "extdev/", "development/", "tutorial/", "man/", "internals/"])
         + (("_modules/", "module_code"),)),
    Site("scipy", ("python-scipy-doc",), r"^/usr/share/doc/python-scipy-doc/html/index\.html$",
         tuple((f"reference/generated/scipy.{s}.", _SCIPY_LABEL.get(s, s))
               for s in _SCIPY_SUBPACKAGES + _SCIPY_SUBSECTIONS)
         + tuple((f"reference/{s}.", _SCIPY_LABEL.get(s, s)) for s in _SCIPY_SUBPACKAGES + _SCIPY_SUBSECTIONS)
         + (("tutorial/", "tutorial"), ("tutorial/stats/", "tutorial.stats"), ("release", "releases"),
            ("dev/", "dev"))),
    Site("r_manuals", ("r-doc-html",), r"^/usr/share/doc/r-doc-html/manual/R-intro\.html$"),
)
"""The sites of the ``docs-web`` corpus, in host order."""


def site_of(name: str) -> Site:
    """The :class:`Site` called ``name``; ``KeyError`` naming the known sites otherwise."""
    for s in SITES:
        if s.name == name:
            return s
    raise KeyError(f"unknown docs-web site {name!r}; known: {[s.name for s in SITES]}")


def label_rules(site: Site, base_url: str) -> list[tuple[str, str]]:
    """``[(url_prefix, label), ...]`` of ``site`` served at ``base_url`` (ending in ``/``): the site label
    for the whole base, then one rule per section; resolve a URL with the longest matching prefix
    (:func:`label_of`)."""
    if not base_url.endswith("/"):
        raise ValueError(f"base_url must end with '/', got {base_url!r}")
    return [(base_url, site.name)] + [(base_url + p, f"{site.name}.{lab}") for p, lab in site.sections]


def label_of(rules: Sequence[tuple[str, str]], url: str) -> str | None:
    """The label of the longest prefix of ``rules`` that ``url`` starts with (``None`` when none does)."""
    best: tuple[int, str] | None = None
    for prefix, lab in rules:
        if url.startswith(prefix) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), lab)
    return None if best is None else best[1]


# ------------------------------------------------------------------------------------------ packages
@dataclass(frozen=True)
class SiteRoot:
    """An installed site: its package and HTML root folder."""

    site: Site
    package: str
    root: Path
    start: str  # path of the start page below the root


def _dpkg(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["dpkg-query", *args], capture_output=True, text=True, check=False)


def _installed(pattern: str) -> list[str]:
    """Installed package names matching ``pattern`` (a dpkg-query glob), sorted."""
    r = _dpkg("-W", "-f", "${Package}\t${db:Status-Abbrev}\n", pattern)
    out = []
    for line in r.stdout.splitlines():
        name, _, status = line.partition("\t")
        if status.startswith("ii") and fnmatch.fnmatch(name, pattern):
            out.append(name)
    return sorted(out)


def _files(package: str) -> list[str]:
    r = _dpkg("-L", package)
    return r.stdout.splitlines() if r.returncode == 0 else []


def _find_index(site: Site, package: str) -> Path | None:
    """The site's start page among the files of ``package`` and of the packages it depends on directly
    (python3-doc is a dependency package: the HTML ships in python3.X-doc)."""
    pkgs = [package]
    dep = _dpkg("-W", "-f", "${Depends}", package).stdout
    pkgs += [d.strip().split(" ")[0] for d in dep.split(",") if d.strip()]
    rx = re.compile(site.index)
    for p in pkgs:
        hits = sorted(f for f in _files(p) if rx.search(f))
        if hits:
            return Path(hits[0])
    return None


def find_sites(sites: Sequence[Site] = SITES) -> tuple[list[SiteRoot], dict[str, str]]:
    """The installed sites and, for every other one, why it is missing (``{site: reason}``)."""
    if shutil.which("dpkg-query") is None:
        return [], {s.name: "dpkg-query not found (not a Debian-based system)" for s in sites}
    found: list[SiteRoot] = []
    missing: dict[str, str] = {}
    for s in sites:
        pkgs = [p for pat in s.packages for p in _installed(pat)]
        if not pkgs:
            missing[s.name] = f"package {' or '.join(s.packages)} is not installed"
            continue
        index = None
        for p in pkgs:
            index = _find_index(s, p)
            if index is not None:
                pkg = p
                break
        if index is None or not index.is_file():
            missing[s.name] = f"package {pkgs[0]} is installed but has no file matching {s.index}"
            continue
        start = s.start or index.name
        root = Path(index.as_posix()[: -len(start)])
        found.append(SiteRoot(s, pkg, root, start))
    return found, missing


def install_packages(names: Sequence[str]) -> None:
    """``apt-get install -y --no-install-recommends NAMES`` (needs root); raises ``RuntimeError`` naming the
    packages and apt's last output lines when it fails."""
    if not names:
        return
    if shutil.which("apt-get") is None:
        raise RuntimeError(f"--install: apt-get not found; install {list(names)} with your package manager")
    cmd = ["apt-get", "install", "-y", "-q", "--no-install-recommends", *names]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if r.returncode != 0:
        tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-5:])
        raise RuntimeError(f"--install: {' '.join(cmd)} failed (exit {r.returncode}):\n{tail}")


# ------------------------------------------------------------------------------------- serve + crawl
#: the fetch policy of the docs-web crawl (see the module docstring): polite in every respect but the delay
#: (0 s: the servers are this process's own loopback threads) and the global rate (none); no trap caps
#: (static documentation sites, every page is wanted); 8 MiB per page (rustdoc pages exceed 2 MiB)
CRAWL_POLICY: dict[str, Any] = {"delay": 0.0, "rate": None, "max_bytes": 8 * 1024 * 1024,
                                "max_pages_per_pattern": None, "max_pages_per_host": None, "max_path_depth": 24}


def crawl_policy(base_urls: dict[str, str], roots: Sequence[SiteRoot]) -> Any:
    """The :class:`~gym_crawl.web.fetcher.FetchPolicy` of the crawl: :data:`CRAWL_POLICY`, scope =
    the served hosts, each site's ``exclude`` prefixes denied."""
    from urllib.parse import urlsplit

    from gym_crawl.web.fetcher import FetchPolicy

    hosts = tuple(urlsplit(u).netloc for u in base_urls.values())
    deny = tuple("^" + re.escape(base_urls[r.site.name] + "/" + p) for r in roots for p in r.site.exclude)
    return FetchPolicy(allowed_hosts=hosts, deny_patterns=deny, **CRAWL_POLICY)


def hrefs(body: bytes, url: str, content_type: str | None = None) -> list[str]:
    """Canonical absolute URLs of the out-links of an HTML page, in document order: the links
    :func:`gym_crawl.web.html_extract.extract_links` gives (the package's one HTML reader, which the WARC
    compiler and the live crawler use; ``<base href>`` honoured, non-http(s) targets, links to the page
    itself and repeated targets dropped)."""
    from gym_crawl.web.html_extract import extract_links

    try:
        return [link.url for link in extract_links(body, url, content_type)]
    except ValueError:  # not an http(s) page URL: nothing to resolve its links against
        return []


@dataclass
class CrawlStats:
    """What a crawl did: fetched pages and errors per site, seconds."""

    pages: dict[str, int] = field(default_factory=dict)
    errors: dict[str, dict[str, int]] = field(default_factory=dict)
    bytes: int = 0
    seconds: float = 0.0


def crawl(fetcher: Any, seeds: Sequence[str], site_of_url: Any, *, progress: bool = True) -> CrawlStats:
    """Breadth-first crawl from ``seeds`` with ``fetcher`` until the frontier is empty.

    The crawler follows every out-link of a page (:func:`hrefs`: the links the compiler reads from it); a
    link is queued once, when the fetcher's scope, trap and robots checks accept it. ``site_of_url(url) -> site name``
    groups the counts."""
    from collections import deque

    from tqdm.auto import tqdm

    from gym_crawl.web.urls import canonical_url

    stats = CrawlStats()
    queue: deque[str] = deque()
    seen: set[str] = set()

    def push(url: str | None) -> None:
        if url is not None and url not in seen:
            seen.add(url)
            if fetcher.check(url) is None:
                queue.append(url)

    def expand(res: Any) -> None:
        site = site_of_url(res.final_url or res.url)
        if res.error is not None:
            errs = stats.errors.setdefault(site, {})
            errs[res.error] = errs.get(res.error, 0) + 1
            return
        stats.pages[site] = stats.pages.get(site, 0) + 1
        stats.bytes += len(res.body)
        seen.add(res.final_url)
        for href in hrefs(res.body, res.final_url, res.content_type):
            push(href)

    for s in seeds:
        push(canonical_url(s))
    t0 = time.perf_counter()
    bar = tqdm(desc="crawl", unit="fetch", disable=not progress)
    while queue:
        url = queue.popleft()
        expand(fetcher.fetch(url))
        bar.update()
        if bar.n % 200 == 0:
            bar.set_postfix(frontier=len(queue), pages=sum(stats.pages.values()))
    bar.close()
    stats.seconds = time.perf_counter() - t0
    return stats


# ------------------------------------------------------------------------------------------- tasks
def report(suite_json: str | os.PathLike, corpus: Any = None, reps: int = 2000) -> str:
    """Markdown of a suite run on ``docs-web``: per agent the IQM [95 % CI] of the normalized score on the
    test tasks, far-seed and near-seed tasks separately, and per-task wins/ties/losses against best-first
    (the agent's mean relevant pages over the seeds vs best-first's)."""

    from gym_crawl.benchmarks.suite import Task, iqm_ci, normalized_scores

    js = json.loads(Path(suite_json).read_text())
    corpus = corpus if corpus is not None else load_docs_web()
    tasks = [Task(**t) for t in js["tasks"]["docs-web"]]
    kind = {t.name: task_kind(corpus, t) for t in tasks}
    runs = [r for r in js["runs"] if r["set"] == "docs-web"]
    agents = list(js["meta"]["agents"])
    seeds = list(range(int(js["meta"]["seeds"])))
    lines = [("| agent | all: IQM [95 % CI] | far seed: IQM [95 % CI] | near seed: IQM [95 % CI] | "
             "W/T/L vs best-first (far) | W/T/L vs best-first (near) |"), "|---|---|---|---|---|---|"]
    found: dict[tuple[str, str], float] = {}
    for r in runs:
        if r["split"] == "test":
            found.setdefault((r["agent"], r["task"]), 0.0)
            found[(r["agent"], r["task"])] += r["found"] / len(seeds)
    cols: dict[str, dict[str, str]] = {a: {} for a in agents}
    order: dict[str, float] = {}
    counts = {}
    for part in ("all", "far", "near"):
        sub = [r for r in runs if part == "all" or kind.get(r["task"]) == part]
        scores, kept, dropped = normalized_scores(sub, agents, seeds, "test")
        counts[part] = (len(kept), len(dropped))
        for a, m in scores.items():
            iqm, lo, hi = iqm_ci(m, reps=reps)
            cols[a][part] = f"{iqm:.3f} [{lo:.3f}, {hi:.3f}]"
            if part == "all":
                order[a] = iqm
    test_tasks = sorted({t for (_, t) in found})
    for a in sorted(agents, key=lambda a: -order.get(a, float("inf"))):
        wtl = {}
        for part in ("far", "near"):
            w = t_ = lo_ = 0
            for t in test_tasks:
                if kind[t] != part or (a, t) not in found or ("best-first", t) not in found:
                    continue
                d = found[(a, t)] - found[("best-first", t)]
                w, t_, lo_ = w + (d > 0), t_ + (d == 0), lo_ + (d < 0)
            wtl[part] = f"{w}/{t_}/{lo_}"
        lines.append(f"| {a} | {cols[a].get('all', '—')} | {cols[a].get('far', '—')} | {cols[a].get('near', '—')} | "
                     f"{wtl['far']} | {wtl['near']} |")
    head = (f"Test tasks: {counts['all'][0]} kept ({counts['far'][0]} far-seed, {counts['near'][0]} near-seed), "
            f"{counts['all'][1]} dropped (oracle <= random); seeds {len(seeds)}.")
    # the same IQM per held-out site (a stratum of the test tasks fixed before any run)
    sites = sorted({site_label(t.label) for t in tasks if t.split == "test"})
    per_site = ["| agent | " + " | ".join(f"{x} (tasks)" for x in sites) + " |", "|---|" + "---|" * len(sites)]
    site_cols: dict[str, list[str]] = {a: [] for a in agents}
    for x in sites:
        names = {t.name for t in tasks if site_label(t.label) == x}
        scores, kept, _ = normalized_scores([r for r in runs if r["task"] in names], agents, seeds, "test")
        for a in agents:
            if a in scores:
                iqm, lo, hi = iqm_ci(scores[a], reps=reps)
                site_cols[a].append(f"{iqm:.3f} [{lo:.3f}, {hi:.3f}] ({len(kept)})")
            else:
                site_cols[a].append("—")
    for a in sorted(agents, key=lambda a: -order.get(a, float("inf"))):
        per_site.append(f"| {a} | " + " | ".join(site_cols[a]) + " |")
    return head + "\n\n" + "\n".join(lines) + "\n\nPer held-out site (IQM [95 % CI] (tasks)):\n\n" + \
        "\n".join(per_site) + "\n"


# ------------------------------------------------------------------------------------------- build
WARC_NAME = "docs-web.warc.gz"
MANIFEST_NAME = "docs-web.crawl.json"


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _site_of_url(base_urls: dict[str, str]) -> Any:
    items = sorted(base_urls.items(), key=lambda kv: -len(kv[1]))

    def f(url: str) -> str:
        return next((name for name, base in items if url.startswith(base + "/")), "other")

    return f


def record_crawl(roots: Sequence[SiteRoot], warc: Path, *, progress: bool = True) -> dict[str, Any]:
    """Serve ``roots`` on loopback (one address per site: ``http://127.0.0.2:PORT/``, ``127.0.0.3`` …),
    crawl them into ``warc`` and return the crawl manifest (``base_urls``, ``start_urls``, ``label_rules``,
    per-site pages and errors, seconds). The WARC is written as ``<warc>.part`` and renamed when the crawl
    is complete, so an interrupted crawl is redone, never taken for a finished one (the servers' port is
    chosen anew each run, so an old partial crawl's URLs would not match a new one's)."""
    from gym_crawl._io import atomic_write_json
    from gym_crawl.web.fetcher import PoliteFetcher
    from gym_crawl.web.serve.server import serve_folder
    from gym_crawl.web.warc_io import WarcRecorder

    part = warc.with_name(warc.name + ".part")
    hosts = {r.site.name: str(r.root) for r in roots}
    with serve_folder("/", hosts) as site:
        base_urls = dict(site.base_urls)
        starts = [f"{base_urls[r.site.name]}/{r.start}" for r in roots]
        policy = crawl_policy(base_urls, roots)
        with WarcRecorder(part, overwrite=True, policy=policy, seeds=starts,
                          info={"gym-crawl-docs-web": base_urls}) as rec, \
                PoliteFetcher(policy, recorder=rec) as fetcher:
            stats = crawl(fetcher, starts, _site_of_url(base_urls), progress=progress)
    os.replace(part, warc)
    meta = {"base_urls": base_urls, "start_urls": starts, "packages": {r.site.name: r.package for r in roots},
            "roots": hosts, "policy": policy.to_dict(), "pages": stats.pages, "errors": stats.errors,
            "bytes": stats.bytes, "seconds": round(stats.seconds, 1),
            "label_rules": [list(x) for r in roots for x in label_rules(r.site, base_urls[r.site.name] + "/")]}
    atomic_write_json(warc.with_name(MANIFEST_NAME), meta)
    return meta


def compile_corpus(warc: Path, manifest: dict[str, Any], out: Path) -> Any:
    """Compile ``warc`` into a corpus with the manifest's label rules and save it at ``out``."""
    from gym_crawl.web.urls import canonical_url
    from gym_crawl.web.warc import load_warc

    rules = [(p, lab) for p, lab in manifest["label_rules"]]
    corpus = load_warc(warc, label_rules=rules, name="docs-web")
    homes = {}
    site_of_url = _site_of_url(manifest["base_urls"])
    for url in manifest["start_urls"]:
        site, home = site_of_url(url), canonical_url(url)
        if home is not None and corpus.urls is not None and corpus.urls.get(home) >= 0:
            homes[site] = corpus.titles[corpus.urls.index(home)]
    corpus.meta["docs_web"] = {"base_urls": manifest["base_urls"], "packages": manifest["packages"],
                               "home_pages": homes, "label_rules": manifest["label_rules"]}
    from gym_crawl._io import partial_dir, replace_dir

    tmp = partial_dir(out)
    corpus.save(tmp)
    replace_dir(tmp, out)
    return load_docs_web(out)


def warm_score_tables(corpus: Any, tasks: Sequence[Any], *, progress: bool = True) -> int:
    """Score every page and link for each task topic, as the suite's envs do at ``reset``, and store the
    tables on disk (``WikiCrawlEnv.precompute_scores(persist=True)``, under the data dir's
    ``score_tables``), so every suite worker memory-maps them instead of scoring ~10^6 links per topic
    itself. Topics already stored are only checked. Returns the number of topics."""
    from tqdm.auto import tqdm

    from gym_crawl.tasks import topic_of
    from gym_crawl.wrappers.factory import make_env

    first = {}
    for t in tasks:
        first.setdefault(t.label, t)
    if not first:
        return 0
    env = make_env("WikiCrawl-v1", corpus=corpus, reward="labels", topic=topic_of(corpus, next(iter(first.values()))))
    for t in tqdm(list(first.values()), desc="score tables", unit="topic", disable=not progress):
        topic = topic_of(corpus, t)
        env.reset(seed=0, options={"topic": topic, "seeds": list(t.seeds)})
        env.unwrapped.view.precompute_scores(persist=True)
    env.close()
    return len(first)


def describe(corpus: Any, min_pages: int = 25) -> dict[str, Any]:
    """Sites, pages, links and labels of the compiled corpus (section labels with >= ``min_pages`` pages
    are the task labels)."""
    import numpy as np

    counts = np.bincount(np.asarray(corpus.label_ids), minlength=len(corpus.labels))
    labels = {lab: int(c) for lab, c in zip(corpus.labels.tolist(), counts.tolist())}
    sites: dict[str, dict[str, int]] = {}
    owner = np.repeat(np.arange(corpus.n_pages), np.diff(np.asarray(corpus.label_ptr)))
    site_ids = {lab: i for i, lab in enumerate(sorted({site_label(x) for x in labels}))}
    page_site = np.full(corpus.n_pages, -1)
    lab_site = np.array([site_ids[site_label(x)] for x in corpus.labels.tolist()]) if labels else np.zeros(0, int)
    page_site[owner] = lab_site[np.asarray(corpus.label_ids)]
    src = corpus.link_src()
    for name, i in site_ids.items():
        on = page_site == i
        sites[name] = {"pages": int(on.sum()), "links": int(on[src].sum()),
                       "task_labels": sum(1 for x, c in labels.items() if site_label(x) == name and "." in x
                                          and c >= min_pages)}
    return {"pages": corpus.n_pages, "links": corpus.n_links, "sites": sites, "labels": labels,
            "task_labels": sorted(x for x, c in labels.items() if "." in x and c >= min_pages),
            "unlabelled_pages": int((np.diff(np.asarray(corpus.label_ptr)) == 0).sum())}


def build(*, install: bool = False, data: Path | None = None, force: bool = False,
          progress: bool = True, sites: Sequence[Site] = SITES) -> dict[str, Any]:
    """Find (``install``: install) the packages, crawl, compile; skip the steps whose output exists."""
    from gym_crawl.corpus import data_dir

    folder = Path(data) if data is not None else data_dir()
    folder.mkdir(parents=True, exist_ok=True)
    warc, manifest_f, out = folder / WARC_NAME, folder / MANIFEST_NAME, folder / CORPUS_DIRNAME
    if force:
        for p in (warc, manifest_f):
            p.unlink(missing_ok=True)
        shutil.rmtree(out, ignore_errors=True)
    if warc.exists() and manifest_f.exists():
        _say(f"docs-web: crawl already recorded ({warc}); --force redoes it")
        manifest = json.loads(manifest_f.read_text())
    else:
        roots, missing = find_sites(sites)
        if missing and install:
            names = sorted({s.install_name for s in sites if s.name in missing})
            _say(f"docs-web: installing {names}")
            install_packages(names)
            roots, missing = find_sites(sites)
        for name, why in missing.items():
            _say(f"docs-web: skipping site {name}: {why}")
        if not roots:
            raise SystemExit("docs-web: no documentation package is installed; run with --install (needs root "
                             "and apt-get) or install: "
                             + " ".join(sorted({s.install_name for s in sites})))
        for r in roots:
            _say(f"docs-web: {r.site.name}: {r.package} at {r.root}")
        manifest = record_crawl(roots, warc, progress=progress)
        manifest["missing"] = missing
        from gym_crawl._io import atomic_write_json

        atomic_write_json(manifest_f, manifest)
    if (out / "manifest.json").is_file() and out.stat().st_mtime >= warc.stat().st_mtime:
        _say(f"docs-web: corpus already compiled ({out})")
        corpus = load_docs_web(out)
    else:
        t0 = time.perf_counter()
        corpus = compile_corpus(warc, manifest, out)
        _say(f"docs-web: compiled {warc.name} ({warc.stat().st_size / 1e6:.0f} MB) in "
             f"{time.perf_counter() - t0:.0f} s")
    info = describe(corpus)
    t0 = time.perf_counter()
    n = warm_score_tables(corpus, docs_web_tasks(corpus), progress=progress)
    _say(f"docs-web: score tables of {n} task topics ready ({time.perf_counter() - t0:.0f} s)")
    return {"warc": str(warc), "corpus": str(out), "crawl": {k: manifest.get(k) for k in
            ("base_urls", "packages", "pages", "errors", "bytes", "seconds", "missing")}, **info}


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="gym-crawl bench docs-web", description=__doc__.split("\n")[0])
    ap.add_argument("--install", action="store_true",
                    help="install the missing Debian documentation packages with apt-get (needs root)")
    ap.add_argument("--data", help="folder of the WARC, crawl manifest and corpus (default: the data cache, which "
                                   "is where the suite's docs-web set reads it; GYM_CRAWL_DATA moves both)")
    ap.add_argument("--force", action="store_true", help="redo the crawl and the compile")
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--json", help="also write the summary to this JSON file")
    ap.add_argument("--report", metavar="SUITE_JSON",
                    help="instead of building: the far/near-seed table of a suite run on docs-web (its suite.json)")
    args = ap.parse_args(argv)
    if args.report:
        print(report(args.report))
        return 0
    info = build(install=args.install, data=Path(args.data) if args.data else None, force=args.force,
                 progress=not args.no_progress)
    print(f"docs-web: {len(info['sites'])} sites, {info['pages']:,} pages, {info['links']:,} links, "
          f"{len(info['labels'])} labels ({len(info['task_labels'])} with >= 25 pages: task topics)")
    print("| site | pages | links | task labels |")
    print("| --- | ---: | ---: | ---: |")
    for name, s in info["sites"].items():
        print(f"| {name} | {s['pages']:,} | {s['links']:,} | {s['task_labels']} |")
    print("task labels: " + ", ".join(f"{x} ({info['labels'][x]})" for x in info["task_labels"]))
    if args.json:
        from gym_crawl._io import atomic_write_json

        atomic_write_json(args.json, info)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
