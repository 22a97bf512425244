"""A text model for any site: live best-first on the docs-web test sites, general vs own vs no text model.

``gym-crawl bench textmodel [--sets docs-web docs-web-hard] [--out DIR] [--candidates] [--mediawiki FILE]``

Needs the ``docs-web`` corpus (``gym-crawl bench docs-web --install``) and the general model's source
(``gym-crawl download wikispeedia``, or ``--from PATH``). Two parts:

**Live** (default). The held-out (test) sites of ``docs-web`` that carry test tasks are served on loopback
again from their installed folders (one host each, the builder's :func:`~gym_crawl.benchmarks.docs_web.crawl_policy`:
robots.txt obeyed, per-host delay 0 — the servers are this process's own threads). Every test task of the
chosen sets (near seed: budget 100; far seed: the site's home page, budget 200) is crawled live by
best-first through :func:`gym_crawl.agents.live_crawl.crawl_live` — the polite fetcher, ``LiveWeb``, the env,
``env.step``, as ``gym-crawl crawl --live`` does — with three text models:

* ``general``: no ``--text`` — the default, the general English model (:mod:`gym_crawl.text.general`) with
  the open vocabulary on top;
* ``own site``: ``text=`` the text model built from the site's own pages (every page of that site in the
  compiled corpus, main text, the default options: IDF on a seeded 10 % sample, PPMI-SVD vectors) — what a
  user gets by crawling the whole site first, compiling it and passing it as ``--text``;
* ``none``: ``text={"general": False}`` — every word hashed, i.e. exact keyword matching (the default before
  the general model).

A fetched page is relevant when its URL's label (the corpus' URL-prefix label rules, moved to the new servers'
addresses) is the task's label or below it; pages are counted over the ``budget`` steps after the seed,
failed fetches (404, robots) excluded. Best-first is deterministic (no seed enters its decisions: ties go to
the lowest page id), so each task is crawled once per model and the figures are exact; ``--check-determinism``
crawls the first task twice and compares the URL sequences.

**Candidates** (``--candidates``): the general-model sources considered, each measured by its build CPU time,
size on disk, vocabulary coverage of the test sites' page words (distinct words / word occurrences with a
vector), and offline best-first on the same test tasks of the compiled corpus (its text model replaced by the
candidate's rows with the open vocabulary on top: :func:`gym_crawl.text.general.general_rows`; offline
best-first on a compiled site takes the same decisions as live best-first on the served site).

Writes ``textmodel.json``, ``textmodel.md`` and ``textmodel.png`` to ``--out`` (default
``benchmarks/results/textmodel``).
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_OUT = Path("benchmarks") / "results" / "textmodel"
MODELS = ("general", "own site", "none")
TARGET = 0.9
"""The general model's relevant pages should be at least this fraction of the own-site models'."""


# ------------------------------------------------------------------------------------------ helpers
def site_corpus(corpus: Any, site: str) -> Any:
    """The pages of docs-web site ``site`` as a text-only corpus (titles and kept main texts, no links): what
    its own text model is built from."""
    from gym_crawl.corpus import CorpusBuilder
    from gym_crawl.tasks.docs_web import page_sites

    psite, names = page_sites(corpus)
    if site not in names:
        raise KeyError(f"no docs-web site {site!r}; sites: {names}")
    if corpus.texts is None:
        raise ValueError(f"corpus {corpus.name!r} keeps no page texts: recompile it (gym-crawl bench docs-web --force)")
    b = CorpusBuilder(name=f"docs-web-{site}")
    for p in np.flatnonzero(psite == names.index(site)).tolist():
        b.add_page(corpus.titles[p], corpus.texts[p])
    return b.build()


def own_site_model(corpus: Any, site: str) -> Any:
    """The default text model of :func:`site_corpus` (built in memory: IDF on a seeded 10 % of its pages,
    PPMI-SVD vectors, 64 dims)."""
    from gym_crawl.text.model import TextModel

    return TextModel.build(site_corpus(corpus, site), progress=False)


def label_matches(label: str | None, want: str) -> bool:
    """Whether a page labelled ``label`` is relevant to a task on label ``want`` (equal or below it)."""
    return label is not None and (label == want or label.startswith(want + "."))


def coverage(model: Any, corpus: Any, pages: np.ndarray) -> dict[str, float]:
    """Share of the distinct words and of the word occurrences of ``pages``' main texts that ``model`` has a
    (non-zero) vector for."""
    from gym_crawl.text.model import gather_csr

    t, _ = gather_csr(corpus.text_ptr, corpus.text_terms, pages)
    cnt, _ = gather_csr(corpus.text_ptr, corpus.text_counts, pages)
    words = corpus.vocab.tolist()
    ids = np.unique(t)
    ref = model.corpus
    has = np.zeros(corpus.n_words, bool)
    norms = np.einsum("ij,ij->i", model.vectors, model.vectors)
    for i in ids.tolist():
        j = ref.word_id(words[i])
        has[i] = j >= 0 and norms[j] > 0
    occ = np.bincount(t, weights=cnt, minlength=corpus.n_words)
    return {"types": float(has[ids].mean()) if len(ids) else 0.0,
            "tokens": float(occ[has].sum() / max(occ.sum(), 1.0)), "distinct_words": int(len(ids))}


def _shingles(ids: np.ndarray, n: int) -> np.ndarray:
    """(len(ids) - n + 1,) uint64 hashes of the n-token windows of a token-id sequence (polynomial, wrapping)."""
    m = len(ids) - n + 1
    if m <= 0:
        return np.zeros(0, np.uint64)
    h = np.zeros(m, np.uint64)
    p = np.uint64(1_000_003)
    for j in range(n):
        h = h * p + ids[j:j + m].astype(np.uint64)
    return h


def text_overlap(source_texts: Iterable[str], texts: Sequence[str], n: int = 8) -> np.ndarray:
    """The fairness check: for each of ``texts``, the fraction of its ``n``-token windows (tokens as the
    corpora have them: lower-cased words, stop words removed) that also occur in any of ``source_texts``
    (0 for a text shorter than ``n`` tokens). A page of a site copied into the source scores 1; unrelated
    text ~0 (an 8-word window shared by chance is rare)."""
    from gym_crawl.tokenize import tokenize

    ids: dict[str, int] = {}

    def encode(text: str) -> np.ndarray:
        return np.fromiter((ids.setdefault(w, len(ids)) for w in tokenize(text)), np.int64)

    parts = [_shingles(encode(t), n) for t in texts]
    src = np.unique(np.concatenate([_shingles(encode(t), n) for t in source_texts] or [np.zeros(0, np.uint64)]))

    def found(p: np.ndarray) -> float:
        if not len(p) or not len(src):
            return 0.0
        i = np.minimum(np.searchsorted(src, p), len(src) - 1)  # src is sorted (np.unique)
        return float((src[i] == p).mean())

    return np.array([found(p) for p in parts])


# ------------------------------------------------------------------------------------------ live
class _Served:
    """The test sites served on loopback, their label rules and seed URLs moved to the new addresses."""

    def __init__(self, corpus: Any, sites: Sequence[str]):
        from gym_crawl.benchmarks.docs_web import SiteRoot, find_sites
        from gym_crawl.benchmarks.transfer_deploy import Deployment
        from gym_crawl.web.serve import serve_folder

        roots, missing = find_sites()
        roots = [r for r in roots if r.site.name in sites]
        gone = sorted(set(sites) - {r.site.name for r in roots})
        if gone:
            raise SystemExit(f"textmodel: the documentation packages of {gone} are not installed "
                             f"({ {k: missing.get(k) for k in gone} }); run `gym-crawl bench docs-web --install`")
        self.roots: list[SiteRoot] = roots
        self._cm = serve_folder("/", {r.site.name: str(r.root) for r in roots})
        site = self._cm.__enter__()
        #: the corpus' label rules and seeds moved to the served sites' addresses, and the crawl policy
        self.deployment = Deployment.create(corpus, dict(site.base_urls), roots)
        self.base = self.deployment.base
        self.policy = self.deployment.policy

    def seed_url(self, corpus: Any, title: str) -> str:
        return self.deployment.seed_url(corpus, title)

    def label(self, url: str) -> str | None:
        from gym_crawl.benchmarks.docs_web import label_of

        return label_of(self.deployment.rules, url)

    def close(self) -> None:
        self._cm.__exit__(None, None, None)


def crawl_task(served: _Served, corpus: Any, task: Any, text: Any, env_text: dict | None) -> dict[str, Any]:
    """One live best-first crawl of ``task``: the relevant pages after the seed at the budget, the curve, the
    URLs, CPU and wall seconds."""
    from gym_crawl.agents import make_agent
    from gym_crawl.agents.live_crawl import crawl_live
    from gym_crawl.tasks import topic_of
    from gym_crawl.web.fetcher import PoliteFetcher
    from gym_crawl.web.settings import LiveCrawlSettings

    topic = topic_of(corpus, task)
    errors: dict[str, str | None] = {}
    with PoliteFetcher(served.policy) as fetcher:
        def fetch(url: str) -> Any:
            res = fetcher.fetch(url)
            errors[url] = res.error
            return res

        t0, c0 = time.perf_counter(), time.process_time()
        env = LiveCrawlSettings.env_fields({"text": env_text} if env_text is not None else None)
        settings = LiveCrawlSettings(seeds=(served.seed_url(corpus, task.seeds[0]),), topic=" ".join(topic.words),
                                     max_pages=task.budget, **env)
        res = crawl_live(make_agent("best-first"), settings, text=text, fetch=fetch, progress=None,
                         handle_signals=False)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    ok = [u for u in res.fetched_urls if errors.get(u, "") is None]
    rel = np.array([label_matches(served.label(u), task.label) for u in res.fetched_urls], bool)
    good = np.array([errors.get(u, "") is None for u in res.fetched_urls], bool)
    curve = np.cumsum(rel & good)
    return {"found": int(curve[-1]) if len(curve) else 0, "steps": len(res.fetched_urls), "pages": len(ok),
            "curve": curve.tolist(), "urls": res.fetched_urls, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2)}


def run_live(corpus: Any, tasks: Sequence[Any], *, check_determinism: bool = True,
             progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Every task crawled live with each of :data:`MODELS` (see the module docstring)."""
    from gym_crawl.tasks.docs_web import site_label
    from gym_crawl.text.model import general_text_model

    say = progress or (lambda s: None)
    general = general_text_model(required=True)
    sites = sorted({site_label(t.label) for t in tasks})
    served = _Served(corpus, sites)
    out: dict[str, Any] = {"sites": {}, "runs": []}
    try:
        for site in sites:
            c0 = time.process_time()
            own = own_site_model(corpus, site)
            out["sites"][site] = {"base_url": served.base[site], "own_model_cpu_s": round(time.process_time() - c0, 1),
                                  "own_model_words": int(own.corpus.n_words),
                                  "own_model_pages": int(own.corpus.n_pages)}
            for t in [t for t in tasks if site_label(t.label) == site]:
                row = {"set": t.set_name, "label": t.label, "site": site, "budget": t.budget,
                       "kind": "near" if t.budget == min(x.budget for x in tasks) else "far",
                       "topic": " ".join(t.words) or t.label.rsplit(".", 1)[-1], "members": t.n_members}
                for name, text, env_text in (("general", None, None), ("own site", own, None),
                                             ("none", None, {"general": False})):
                    r = crawl_task(served, corpus, t, text, env_text)
                    row[name] = {k: r[k] for k in ("found", "steps", "pages", "curve", "wall_s", "cpu_s")}
                out["runs"].append(row)
                say(f"{t.set_name:14} {t.label:28} B={t.budget:3}  " +
                    "  ".join(f"{m}={row[m]['found']:3}" for m in MODELS))
        if check_determinism and tasks:
            t = tasks[0]
            a = crawl_task(served, corpus, t, None, None)
            b = crawl_task(served, corpus, t, None, None)
            out["determinism"] = {"task": f"{t.set_name}:{t.label}:{t.budget}", "same_urls": a["urls"] == b["urls"]}
    finally:
        served.close()
    out["general"] = {"source": general.corpus.name, "words": int(general.corpus.n_words),
                      "meta": {k: v for k, v in general.meta.items() if k != "files"}}
    return out


def summarize_live(live: dict[str, Any]) -> dict[str, Any]:
    """Totals of relevant pages per set, site and seed kind; the general/own ratio against :data:`TARGET`."""
    groups: dict[str, dict[str, Any]] = {}
    for r in live["runs"]:
        for key in ("all test tasks", r["set"], f"{r['set']} / {r['site']}", f"{r['set']} / {r['kind']} seed"):
            g = groups.setdefault(key, {"tasks": 0, **{m: 0 for m in MODELS}, "wtl_general_vs_own": [0, 0, 0]})
            g["tasks"] += 1
            for m in MODELS:
                g[m] += r[m]["found"]
            d = r["general"]["found"] - r["own site"]["found"]
            g["wtl_general_vs_own"][0 if d > 0 else 1 if d == 0 else 2] += 1
    for g in groups.values():
        g["general_over_own"] = g["general"] / g["own site"] if g["own site"] else None
        g["none_over_own"] = g["none"] / g["own site"] if g["own site"] else None
        g["target_met"] = g["general_over_own"] is not None and g["general_over_own"] >= TARGET
    return groups


# ------------------------------------------------------------------------------------------ candidates
def _dir_size(path: Any) -> int | None:
    if path is None:
        return None
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


ROWS = ("meaning+identity", "meaning", "sum")
"""How a candidate's words get vectors: ``meaning+identity`` — :func:`gym_crawl.text.general.general_rows`
(``[meaning, identity] / √2``, the general model's rule); ``meaning`` — the model's vector, a hashed vector
for a word it does not know (the rule of a live web's reference model, ``OpenTextModel``); ``sum`` —
``meaning + identity`` normalised, in the model's own dimension."""


def candidate_rows(model: Any, words: list[str], rows: str) -> tuple[np.ndarray, np.ndarray]:
    """``(idf, vectors)`` of ``words`` under ``model`` by the rule ``rows`` (:data:`ROWS`)."""
    from gym_crawl.text.general import general_rows, oov_params
    from gym_crawl.text.open_vocab import hashed_word_vector

    idf, vec = general_rows(model, words)
    if rows == "meaning+identity":
        return idf, vec
    if rows not in ROWS:
        raise ValueError(f"rows must be one of {ROWS}, got {rows!r}")
    k = model.vectors.shape[1]
    _, scale = oov_params(model)
    meaning = vec[:, :k] * np.float32(np.sqrt(2.0))
    has = np.einsum("ij,ij->i", meaning, meaning) > 0
    ident = np.stack([hashed_word_vector(w, k, scale) for w in words]) if words else np.zeros((0, k), np.float32)
    if rows == "meaning":
        return idf, np.where(has[:, None], meaning, ident).astype(np.float32)
    out = np.where(has[:, None], meaning + ident, ident)
    out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
    return idf, out.astype(np.float32)


def offline_best_first(corpus: Any, model: Any, tasks: Sequence[Any], rows: str = "meaning+identity"
                       ) -> dict[str, int]:
    """Relevant pages found by offline best-first on ``corpus`` with its text model replaced by ``model``'s
    rows (:func:`candidate_rows`), per task (``set:label:budget``)."""
    from gym_crawl.agents import make_agent, make_env_for, run_episode
    from gym_crawl.tasks import topic_of
    from gym_crawl.text.model import TextModel

    idf, vec = candidate_rows(model, corpus.vocab.tolist(), rows)
    tm = TextModel(corpus, idf, vec, {"idf_pages": model.meta.get("idf_pages")})
    agent = make_agent("best-first")
    out = {}
    for t in tasks:
        topic = topic_of(corpus, t)
        env = make_env_for(agent, corpus=corpus, text=tm, reward="labels", topic=topic, max_episode_steps=t.budget)
        r = run_episode(env, agent, seed=0, options={"topic": topic, "seeds": list(t.seeds)})
        out[f"{t.set_name}:{t.label}:{t.budget}"] = int(r.relevant_found)
        env.close()
    return out


def fairness(corpus: Any, source: Any, sites: Sequence[str]) -> dict[str, Any]:
    """:func:`text_overlap` of every page of ``sites`` against the general model's ``source`` corpus."""
    from gym_crawl.tasks.docs_web import page_sites

    psite, names = page_sites(corpus)
    pages = np.flatnonzero(np.isin(psite, [names.index(s) for s in sites]))
    ov = text_overlap(source.texts, [corpus.texts[int(p)] for p in pages])
    if not len(ov):
        ov = np.zeros(1)
    return {"pages": int(len(pages)), "max": float(ov.max()), "mean": float(ov.mean()),
            "pages_over_0.2": int((ov > 0.2).sum()), "pages_with_any": int((ov > 0).sum())}


def run_candidates(corpus: Any, tasks: Sequence[Any], mediawiki: str | None,
                   progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Build (or open) each candidate general model and measure it (see the module docstring)."""
    from gym_crawl.corpus import load_corpus
    from gym_crawl.corpus.wikispeedia import load_wikispeedia
    from gym_crawl.tasks.docs_web import page_sites, site_label
    from gym_crawl.text.general import GENERAL_OPTIONS, general_source_path
    from gym_crawl.text.model import TextModel, get_text_model

    say = progress or (lambda s: None)
    src = general_source_path()
    if src is None:
        raise SystemExit("textmodel: the Wikispeedia dataset is not on this machine: gym-crawl download wikispeedia "
                         "(or --from PATH)")
    psite, names = page_sites(corpus)
    test_sites = sorted({site_label(t.label) for t in tasks})
    pages = np.flatnonzero(np.isin(psite, [names.index(s) for s in test_sites]))
    sample = {**GENERAL_OPTIONS, "idf_fraction": 0.1}
    cands: list[tuple[str, str, dict[str, Any], str]] = [
        ("wikispeedia, IDF over all articles, [meaning, identity] (chosen)", "wikispeedia", GENERAL_OPTIONS,
         "meaning+identity"),
        ("wikispeedia, IDF over all articles, meaning only", "wikispeedia", GENERAL_OPTIONS, "meaning"),
        ("wikispeedia, IDF over all articles, meaning + identity summed (64 dims)", "wikispeedia", GENERAL_OPTIONS,
         "sum"),
        ("wikispeedia, IDF on a 10 % sample, [meaning, identity]", "wikispeedia", sample, "meaning+identity"),
        ("wikispeedia, IDF on a 10 % sample, meaning only", "wikispeedia", sample, "meaning"),
    ]
    if mediawiki:
        cands.append(("enwiki dump sample, IDF over all articles, meaning only", "mediawiki", GENERAL_OPTIONS,
                      "meaning"))
        cands.append(("enwiki dump sample, IDF over all articles, [meaning, identity]", "mediawiki",
                      GENERAL_OPTIONS, "meaning+identity"))
    out: dict[str, Any] = {}
    built: dict[tuple[str, str], dict[str, Any]] = {}
    for name, which, opts, rows in cands:
        key = (which, repr(sorted(opts.items())))
        if key not in built:
            c0 = time.process_time()
            source = load_wikispeedia(src, progress=False) if which == "wikispeedia" else load_corpus(mediawiki)
            compile_s = time.process_time() - c0
            c0 = time.process_time()
            model = TextModel.build(source, progress=False, **opts)  # in memory, timed without the cache
            build_s = time.process_time() - c0
            cached = get_text_model(source, progress=False, **opts)
            built[key] = {"model": model, "source": source, "compile_cpu_s": round(compile_s, 1),
                          "build_cpu_s": round(build_s, 1), "model_bytes": _dir_size(cached.path),
                          "coverage": coverage(model, corpus, pages)}
        b = built[key]
        c0 = time.process_time()
        found = offline_best_first(corpus, b["model"], tasks, rows)
        src_c = b["source"]
        row = {"pages": int(src_c.n_pages), "words": int(src_c.n_words), "rows": rows,
               "tokens": int(np.asarray(src_c.text_counts).sum()), "compile_cpu_s": b["compile_cpu_s"],
               "build_cpu_s": b["build_cpu_s"], "model_bytes": b["model_bytes"], "coverage": b["coverage"],
               "found": found, "eval_cpu_s": round(time.process_time() - c0, 1)}
        out[name] = row
        say(f"{name}: {row['words']:,} words, build {row['build_cpu_s']} s, coverage "
            f"{row['coverage']['types']:.2f}/{row['coverage']['tokens']:.2f}, found {sum(found.values())}")
    # the two references: the test sites' own models (as a live web uses a reference model) and hashing alone
    own: dict[str, int] = {}
    for s in test_sites:
        mine = [t for t in tasks if site_label(t.label) == s]
        own.update(offline_best_first(corpus, own_site_model(corpus, s), mine, "meaning"))
    out["own site (reference)"] = {"found": own}
    from gym_crawl.corpus import CorpusBuilder

    empty = CorpusBuilder(name="no-vectors")
    empty.add_page("empty", "")
    ec = empty.build()  # every word without a vector and with IDF 1: the identity (hashed) vector alone
    nothing = TextModel(ec, np.ones(ec.n_words, np.float32), np.zeros((ec.n_words, 64), np.float32), {"idf_pages": 0})
    out["none: hashing alone (reference)"] = {"found": offline_best_first(corpus, nothing, tasks, "meaning")}
    say("references done")
    ws = next(b["source"] for (w, _), b in built.items() if w == "wikispeedia")
    out["fairness"] = fairness(corpus, ws, test_sites)
    say(f"fairness: {out['fairness']}")
    return out


# ------------------------------------------------------------------------------------------ report
def _table(groups: dict[str, Any]) -> str:
    lines = ["| tasks | n | general | own site | none | general / own | none / own | W/T/L general vs own |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for k, g in groups.items():
        go = "—" if g["general_over_own"] is None else f"{g['general_over_own']:.3f}"
        no = "—" if g["none_over_own"] is None else f"{g['none_over_own']:.3f}"
        w, t, lo = g["wtl_general_vs_own"]
        lines.append(f"| {k} | {g['tasks']} | {g['general']} | {g['own site']} | {g['none']} | {go} | {no} | "
                     f"{w}/{t}/{lo} |")
    return "\n".join(lines)


def _cand_table(cands: dict[str, Any]) -> str:
    lines = ["| model | words | build CPU s | size MB | coverage (words / occurrences) | docs-web | docs-web-hard |",
             "|---|---:|---:|---:|---|---:|---:|"]
    for name, r in cands.items():
        if "found" not in r:
            continue
        tot = {s: sum(v for k, v in r["found"].items() if k.startswith(s + ":")) for s in ("docs-web", "docs-web-hard")}
        if "coverage" in r:
            mb = "—" if r["model_bytes"] is None else f"{r['model_bytes'] / 1e6:.0f}"
            lines.append(f"| {name} | {r['words']:,} | {r['build_cpu_s']} | {mb} | {r['coverage']['types']:.3f} / "
                         f"{r['coverage']['tokens']:.3f} | {tot['docs-web']} | {tot['docs-web-hard']} |")
        else:
            lines.append(f"| {name} | | | | | {tot['docs-web']} | {tot['docs-web-hard']} |")
    return "\n".join(lines)


def _plot(live: dict[str, Any], groups: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from gym_crawl.benchmarks.plotting import pyplot, save_png, summed_curves

    plt = pyplot()
    keys = [k for k in groups if " / " in k and "seed" not in k]
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.2))
    x = np.arange(len(keys))
    for i, m in enumerate(MODELS):
        axes[0].bar(x + (i - 1) * 0.27, [groups[k][m] for k in keys], 0.27, label=m)
    axes[0].set_xticks(x)
    axes[0].set_xticklabels(keys, rotation=35, ha="right", fontsize=7)
    axes[0].set_ylabel("relevant pages found (sum over tasks)")
    axes[0].set_title("live best-first on the docs-web test sites")
    axes[0].legend(fontsize=8)
    axes[0].grid(alpha=0.3, axis="y")
    for m in MODELS:
        tot = summed_curves([np.asarray(r[m]["curve"], float) for r in live["runs"]])
        axes[1].plot(np.arange(1, len(tot) + 1), tot, label=m)
    axes[1].set_xlabel("step (pages fetched after the seed)")
    axes[1].set_ylabel("relevant pages, summed over tasks")
    axes[1].set_title("relevant pages per step (all test tasks)")
    axes[1].legend(fontsize=8)
    axes[1].grid(alpha=0.3)
    save_png(fig, path)


def main(argv: list[str] | None = None) -> int:
    from gym_crawl._io import atomic_write_bytes, atomic_write_json
    from gym_crawl.tasks.docs_web import docs_web_hard_tasks, docs_web_tasks, load_docs_web

    ap = argparse.ArgumentParser(prog="gym-crawl bench textmodel", description=__doc__.split("\n")[0])
    ap.add_argument("--sets", nargs="+", default=["docs-web", "docs-web-hard"], choices=["docs-web", "docs-web-hard"])
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--candidates", action="store_true", help="also build and measure the candidate general models")
    ap.add_argument("--mediawiki", default=None, metavar="FILE",
                    help="with --candidates: a MediaWiki XML dump (.xml.bz2) to measure as a candidate too")
    ap.add_argument("--no-live", action="store_true", help="skip the live crawls (candidates only)")
    ap.add_argument("--max-tasks", type=int, default=None, help="at most this many test tasks per set (label order)")
    args = ap.parse_args(argv)
    corpus = load_docs_web()
    tasks = []
    for s in args.sets:
        make = docs_web_tasks if s == "docs-web" else docs_web_hard_tasks
        sub = [t for t in make(corpus) if t.split == "test"]
        tasks += sub[: args.max_tasks] if args.max_tasks else sub
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    def say(s: str) -> None:
        print(s, file=sys.stderr, flush=True)

    res: dict[str, Any] = {"meta": {"sets": args.sets, "tasks": len(tasks), "python": platform.python_version(),
                                    "machine": platform.machine(), "agent": "best-first",
                                    "deterministic": "best-first has no randomness: one crawl per task and model"}}
    md = []
    if args.candidates:
        res["candidates"] = run_candidates(corpus, tasks, args.mediawiki, say)
        md += ["Candidates (offline best-first on the compiled test sites, relevant pages summed over the test tasks):",
               "", _cand_table(res["candidates"]), ""]
    if not args.no_live:
        t0 = time.perf_counter()
        live = run_live(corpus, tasks, progress=say)
        res["live"] = live
        res["live_summary"] = summarize_live(live)
        res["meta"]["live_wall_s"] = round(time.perf_counter() - t0, 1)
        md += ["Live best-first, relevant pages summed over the test tasks:", "", _table(res["live_summary"]), ""]
        _plot(live, res["live_summary"], out / "textmodel.png")
    atomic_write_json(out / "textmodel.json", res)
    atomic_write_bytes(out / "textmodel.md", ("\n".join(md) + "\n").encode())
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
