"""Calibrate the synthetic web's ``"hard"`` preset against real data, statistic by statistic.

    gym-crawl bench calibrate_synthetic [--quick] [--out DIR] [--pages N] [--budget B ...]

Measures the same statistics on real data and on the synthetic presets and writes them side
by side (``calibrate_synthetic.json`` / ``.md`` / ``.png`` in ``benchmarks/results/calibrate_synthetic/``):

* **Anchors** (real: the MediaWiki samples' ``[[Target|anchor]]`` links, red links included,
  parsed with :func:`gym_crawl.corpus.wikitext.parse_wikitext`; synthetic: a sample of
  links): anchor tokens equal to the target title's tokens; anchor sharing at least one
  title word; generic or contentless anchors (no tokens — numbers, symbols — or only words
  of ``GENERIC_ANCHOR_PHRASES`` / ``ANCHOR_WORDS``); links whose URL carries words.
* **Topics** (real: Wikispeedia categories with >= 25 pages, seed = the most in-linked
  member, topic words = the category name's tokens, as ``resolve_topic`` makes them;
  synthetic: the corpus' topics from their main page): share of the category's titles that
  contain a topic word; ``P(target in L | source in L)``; the AUC with which the best-first
  link score (cosine of the link text — anchor, URL, context — with the topic vector)
  separates links into L from the others, over links leaving L and over links leaving the
  seed's neighbourhood (distance <= 1); the share of L among pages at BFS distance 1, 2, 3
  from the seed, divided by L's base rate (topical locality decay).
* **Crawls**: relevant pages found in ``B`` steps from the seed, reward ``labels``,
  ``max_candidates=64``: greedy oracle and best-first (deterministic given the seed),
  random (mean ± sd over ``--random-seeds`` seeds); ratio best-first / oracle and the
  normalized score ``(best-first - random) / (oracle - random)``.

The target: on the hard preset best-first / oracle falls in Wikispeedia's range (its
interquartile range over categories, ≈ 0.3-0.6 at budget 100), not 0.9+ as on the default
preset.
"""
from __future__ import annotations

import argparse
import bz2
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._console import ArgumentParser
from gym_crawl._io import atomic_write_bytes
from gym_crawl.benchmarks.report import markdown_banner, write_json_report
from gym_crawl.corpus.core import Corpus
from gym_crawl.tokenize import tokenize
from gym_crawl.webgen.synthetic import ANCHOR_WORDS, GENERIC_ANCHOR_PHRASES, generate_synthetic

__all__ = ["Config", "QUICK", "FULL", "GENERIC_TOKENS", "anchor_stats", "corpus_anchor_pairs",
           "mediawiki_anchor_pairs", "topic_stats", "crawl_scores", "wikispeedia_tasks", "synthetic_tasks", "run",
           "write_outputs", "main"]

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
MEDIAWIKI_SAMPLES = {
    "enwiki": "mediawiki_samples/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2",
    "ltgwiki": "mediawiki_samples/ltgwiki-20170901-pages-articles.xml.bz2",
}
SYNTHETIC_TOPICS = ("geology", "cancer", "poetry", "sports", "fiction", "cameras", "astronomy", "jazz")

#: Tokens of anchors that say nothing about their target ("click here", "read more", "see article").
GENERIC_TOKENS: frozenset[str] = frozenset(w for ph in list(GENERIC_ANCHOR_PHRASES) + list(ANCHOR_WORDS)
                                           for w in tokenize(ph))


@dataclass(frozen=True)
class Config:
    """One benchmark run: synthetic size(s), crawl budgets and how much real data to read."""

    pages: int = 20_000                  # synthetic corpus size for the statistics and crawls
    extra_pages: tuple[int, ...] = ()    # further hard-preset sizes crawled (e.g. 100k)
    budgets: tuple[int, ...] = (100, 200)
    random_seeds: int = 5
    ws_every: int = 1                    # every k-th Wikispeedia category (1 = all)
    link_sample: int = 50_000            # links sampled for the synthetic anchor statistics
    seed: int = 0                        # corpus seed


QUICK = Config(budgets=(100,), ws_every=4, link_sample=20_000)
FULL = Config(extra_pages=(100_000,), budgets=(100, 200))


# ----------------------------------------------------------------------------- anchors

def anchor_stats(pairs: Sequence[tuple[list[str], list[str]]]) -> dict[str, float]:
    """Rates over ``(anchor tokens, target title tokens)`` pairs: ``eq`` (same token sequence),
    ``shares_word`` (>= 1 common word), ``disjoint`` (no common word), ``generic`` (no tokens
    or only :data:`GENERIC_TOKENS`), ``anchor_words`` (mean tokens per anchor)."""
    n = len(pairs)
    if n == 0:
        raise ValueError("anchor_stats: no links")
    eq = shares = generic = words = 0
    for a, t in pairs:
        eq += a == t
        shares += bool(set(a) & set(t))
        generic += all(w in GENERIC_TOKENS for w in a)
        words += len(a)
    return {"links": n, "eq": eq / n, "shares_word": shares / n, "disjoint": 1 - shares / n,
            "generic": generic / n, "anchor_words": words / n}


def _mediawiki_articles(path: Path) -> Iterator[tuple[str, str]]:
    """``(title, wikitext)`` of the non-redirect main-namespace pages of a dump."""
    with bz2.open(path) as f:
        for _, el in ET.iterparse(f):
            if not el.tag.endswith("}page"):
                continue
            d = {c.tag.rsplit("}", 1)[-1]: c for c in el}
            rev = d.get("revision")
            text = None
            if rev is not None:
                text = next((c.text for c in rev if c.tag.endswith("}text")), None)
            if d.get("ns") is not None and d["ns"].text == "0" and "redirect" not in d and text:
                yield d["title"].text or "", text
            el.clear()


def mediawiki_anchor_pairs(path: str | Path) -> list[tuple[list[str], list[str]]]:
    """``(anchor tokens, target title tokens)`` of every internal article link of a MediaWiki dump
    (red links included: the anchor/title relation does not depend on the target being present)."""
    from gym_crawl.corpus.wikitext import parse_wikitext

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"MediaWiki dump not found: {path}")
    out = []
    for _, text in _mediawiki_articles(path):
        p = parse_wikitext(text)
        for target, a, b in p.links:
            if target:
                out.append((tokenize(p.text[a:b]), tokenize(target.replace("_", " "))))
    return out


def corpus_anchor_pairs(corpus: Corpus, sample: int, seed: int = 0) -> tuple[list, float]:
    """A sample of ``(anchor tokens, target title tokens)`` of ``corpus`` (titles tokenized from the
    title strings, so opaque URLs do not matter) and the share of sampled links whose URL carries words."""
    rng = np.random.default_rng(seed)
    m = corpus.n_links
    links = np.sort(rng.choice(m, size=min(sample, m), replace=False))
    vocab = corpus.vocab.tolist()
    dst = np.asarray(corpus.link_dst)[links]
    pairs = []
    for k, d in zip(links.tolist(), dst.tolist()):
        a = [vocab[int(t)] for t in corpus.anchor_terms[corpus.anchor_ptr[k]:corpus.anchor_ptr[k + 1]]]
        pairs.append((a, tokenize(corpus.titles[d].replace("_", " "))))
    url_words = float((np.diff(corpus.title_ptr)[dst] > 0).mean())
    return pairs, url_words


# ------------------------------------------------------------------------------ topics

@dataclass
class Task:
    name: str
    topic: Any        # gym_crawl.relevance.topic.Topic
    seed_page: int


def wikispeedia_tasks(corpus: Corpus, min_pages: int = 25, every: int = 1) -> list[Task]:
    """Wikispeedia categories (every label prefix) with >= ``min_pages`` pages, one per distinct member
    set, whose name has a word in the vocabulary; seed = the most in-linked member."""
    from gym_crawl.relevance.topic import resolve_topic

    page = np.repeat(np.arange(corpus.n_pages), np.diff(corpus.label_ptr))
    labels = corpus.labels.tolist()
    members: dict[str, set[int]] = defaultdict(set)
    for p, lab in zip(page.tolist(), np.asarray(corpus.label_ids).tolist()):
        parts = labels[lab].split(".")
        for k in range(2, len(parts) + 1):
            members[".".join(parts[:k])].add(p)
    ind = corpus.in_degree()
    tasks, seen = [], set()
    for cat in sorted(members):
        m = members[cat]
        if len(m) < min_pages or frozenset(m) in seen:
            continue
        seen.add(frozenset(m))
        try:
            topic = resolve_topic(cat, corpus)
        except KeyError:
            continue
        arr = np.array(sorted(m))
        tasks.append(Task(cat, topic, int(arr[np.argmax(ind[arr])])))
    return tasks[::every]


def synthetic_tasks(corpus: Corpus, names: Sequence[str] = SYNTHETIC_TOPICS) -> list[Task]:
    """The synthetic corpus' topics, seeded at their main page."""
    from gym_crawl.relevance.topic import resolve_topic, seed_pages

    out = []
    for k in names:
        t = resolve_topic(k, corpus)
        out.append(Task(k, t, int(seed_pages(t, corpus)[0])))
    return out


def _auc(score: np.ndarray, y: np.ndarray) -> float:
    from scipy.stats import rankdata

    n1 = int(y.sum())
    n0 = len(y) - n1
    if n1 == 0 or n0 == 0:
        return float("nan")
    r = rankdata(score)
    return float((r[y].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


class _Graph:
    def __init__(self, corpus: Corpus):
        from scipy.sparse import csr_matrix

        self.src = corpus.link_src()
        n = corpus.n_pages
        self.G = csr_matrix((np.ones(corpus.n_links, np.float32), (self.src, corpus.link_dst)), shape=(n, n))

    def distances(self, seed: int) -> np.ndarray:
        from scipy.sparse.csgraph import shortest_path

        return shortest_path(self.G, indices=[seed], unweighted=True)[0]


def topic_stats(corpus: Corpus, task: Task, graph: _Graph, text_model: Any) -> dict[str, float]:
    """Structure and link-text statistics of one topic (see the module docstring)."""
    from gym_crawl.relevance.scorer import TopicScorer

    L = task.topic.label_mask(corpus)
    if not L.any():
        raise ValueError(f"topic {task.name!r} has no labelled page in corpus {corpus.name!r}")
    scorer = TopicScorer(text_model, task.topic)
    words = set(task.topic.words)
    members = np.flatnonzero(L)
    title_topic = float(np.mean([bool(words & set(tokenize(corpus.titles[int(p)].replace("_", " "))))
                                 for p in members]))
    dst = np.asarray(corpus.link_dst)
    out_L = np.flatnonzero(L[graph.src])
    y = L[dst[out_L]]
    d = graph.distances(task.seed_page)
    near = np.flatnonzero(d[graph.src] <= 1)
    base = float(L.mean())
    share = [float(L[d == k].mean()) / base if (d == k).any() else 0.0 for k in (1, 2, 3)]
    return {"pages": int(L.sum()), "base_rate": base, "title_topic_word": title_topic,
            "p_L_given_L": float(y.mean()), "auc_links_from_L": _auc(scorer.score_links(out_L).rel, y),
            "auc_links_near_seed": _auc(scorer.score_links(near).rel, L[dst[near]]),
            "share_d1": share[0], "share_d2": share[1], "share_d3": share[2]}


def crawl_scores(corpus: Corpus, task: Task, budget: int, random_seeds: int) -> dict[str, float]:
    """Relevant pages found in ``budget`` steps by oracle, best-first (seed 0) and random (seeds 0..k-1)."""
    from gym_crawl.agents import make_agent, make_env_for, run_episode

    def run(agent: str, seed: int) -> int:
        env = make_env_for(agent, corpus=corpus, topic=task.topic, seeds=[task.seed_page], reward="labels",
                           max_candidates=64, max_episode_steps=budget)
        try:
            return int(run_episode(env, make_agent(agent), seed=seed).relevant_found)
        finally:
            env.close()

    oracle, best = run("oracle", 0), run("best-first", 0)
    rnd = np.array([run("random", s) for s in range(random_seeds)], np.float64)
    denom = oracle - rnd.mean()
    return {"budget": budget, "oracle": oracle, "best_first": best, "random_mean": float(rnd.mean()),
            "random_sd": float(rnd.std(ddof=1)) if len(rnd) > 1 else 0.0,
            "ratio": best / oracle if oracle else float("nan"),
            "normalized": float((best - rnd.mean()) / denom) if denom > 0 else float("nan")}


def _corpus_report(corpus: Corpus, tasks: list[Task], cfg: Config, with_stats: bool = True) -> dict[str, Any]:
    from gym_crawl.text.model import get_text_model

    graph = _Graph(corpus) if with_stats else None
    tm = get_text_model(corpus) if with_stats else None
    rows = []
    for t in tasks:
        row: dict[str, Any] = {"topic": t.name, "seed": corpus.titles[t.seed_page]}
        if with_stats:
            row.update(topic_stats(corpus, t, graph, tm))
        row["crawls"] = [crawl_scores(corpus, t, b, cfg.random_seeds) for b in cfg.budgets]
        rows.append(row)
    return {"corpus": corpus.name, "pages": corpus.n_pages, "links": corpus.n_links, "topics": rows}


# ----------------------------------------------------------------------------- summary

STATS = ("title_topic_word", "p_L_given_L", "auc_links_from_L", "auc_links_near_seed", "share_d1", "share_d2",
         "share_d3")


def _quartiles(xs: Sequence[float]) -> list[float]:
    a = np.asarray([x for x in xs if np.isfinite(x)], np.float64)
    return [float(np.percentile(a, q)) for q in (25, 50, 75)] if len(a) else [float("nan")] * 3


def _summary(rep: dict[str, Any], budgets: Sequence[int]) -> dict[str, list[float]]:
    rows = rep["topics"]
    out = {k: _quartiles([r[k] for r in rows]) for k in STATS if rows and k in rows[0]}
    for i, b in enumerate(budgets):
        out[f"ratio_b{b}"] = _quartiles([r["crawls"][i]["ratio"] for r in rows])
        out[f"normalized_b{b}"] = _quartiles([r["crawls"][i]["normalized"] for r in rows])
    return out


def _fmt(q: list[float], digits: int = 2) -> str:
    if not np.isfinite(q[1]):
        return "–"
    return f"{q[1]:.{digits}f} [{q[0]:.{digits}f}–{q[2]:.{digits}f}]"


def _markdown(res: dict[str, Any]) -> str:
    cfg = res["config"]
    a = res["anchors"]
    cols = ["enwiki", "ltgwiki", "wikispeedia", "default", "hard"]
    lines = ["# Calibrating the synthetic web's hard preset against real data", "",
             f"Synthetic corpora: {cfg['pages']:,} pages, seed {cfg['seed']}. Crawls: reward `labels`, "
             f"max_candidates 64, oracle and best-first seed 0, random {cfg['random_seeds']} seeds. "
             f"Run time {res['seconds']:.0f} s.", "",
             "## Anchors (share of links)", "",
             "| statistic | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    for k, label in (("eq", "anchor == target title"), ("shares_word", "anchor shares a title word"),
                     ("disjoint", "anchor shares no title word"), ("generic", "generic / contentless anchor"),
                     ("url_words", "URL carries words"), ("anchor_words", "words per anchor")):
        cells = []
        for c in cols:
            v = a.get(c, {}).get(k)
            cells.append("–" if v is None else f"{v:.3f}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += ["", "Wikispeedia's plain-text dump has no anchors: its anchor is the title by construction. "
              "Wiki URLs are titles, so the share of opaque URLs of the hard preset is not measurable here.", "",
              "## Topics: median [interquartile range] over topics", "",
              "| statistic | Wikispeedia | default | hard |", "|---|---|---|---|"]
    summ = res["summary"]
    for k in list(STATS) + [f"{p}_b{b}" for b in cfg["budgets"] for p in ("ratio", "normalized")]:
        lines.append(f"| {k} | " + " | ".join(_fmt(summ[c].get(k, [float('nan')] * 3))
                                              for c in ("wikispeedia", "default", "hard")) + " |")
    for name in ["default", "hard"] + [f"hard-{n}" for n in cfg["extra_pages"]]:
        rep = res["synthetic"][name]
        lines += ["", f"## Per topic: {rep['corpus']} ({rep['pages']:,} pages)", "",
                  "| topic | budget | oracle | best-first | random (mean ± sd) | best-first / oracle | normalized |",
                  "|---|---|---|---|---|---|---|"]
        for r in rep["topics"]:
            for c in r["crawls"]:
                lines.append(f"| {r['topic']} | {c['budget']} | {c['oracle']} | {c['best_first']} | "
                             f"{c['random_mean']:.1f} ± {c['random_sd']:.1f} | {c['ratio']:.2f} | "
                             f"{c['normalized']:.2f} |")
    lines += ["", f"Wikispeedia: {len(res['wikispeedia']['topics'])} categories "
              f"(>= 25 pages{', every ' + str(cfg['ws_every']) + 'th' if cfg['ws_every'] > 1 else ''})."]
    return "\n".join(lines) + "\n"


def _plot(res: dict[str, Any], path: Path) -> None:
    from gym_crawl.benchmarks.plotting import pyplot, save_png

    plt = pyplot()
    b = res["config"]["budgets"][0]
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
    ax = axes[0]
    names = [r["topic"] for r in res["synthetic"]["hard"]["topics"]]
    x = np.arange(len(names))
    for i, (k, color) in enumerate((("default", "#7f7f7f"), ("hard", "#d62728"))):
        vals = [r["crawls"][0]["ratio"] for r in res["synthetic"][k]["topics"]]
        ax.bar(x + (i - 0.5) * 0.4, vals, 0.4, label=f"synthetic {k}", color=color)
    q = res["summary"]["wikispeedia"][f"ratio_b{b}"]
    ax.axhspan(q[0], q[2], color="#1f77b4", alpha=0.15, label="Wikispeedia IQR", zorder=0)
    ax.axhline(q[1], color="#1f77b4", lw=1, label="Wikispeedia median", zorder=3)
    ax.set_xticks(x, names, rotation=30)
    ax.set_ylim(0, 1.25)
    ax.set_ylabel(f"best-first / oracle (budget {b})")
    ax.set_title("Relevant pages found, best-first relative to the oracle")
    ax.legend(fontsize=8, loc="upper center", ncol=2)
    ax = axes[1]
    keys = [k for k in STATS if not k.startswith("share")]
    for i, (k, color) in enumerate((("wikispeedia", "#1f77b4"), ("default", "#7f7f7f"), ("hard", "#d62728"))):
        s = res["summary"][k]
        med = [s[kk][1] for kk in keys]
        err = np.array([[s[kk][1] - s[kk][0] for kk in keys], [s[kk][2] - s[kk][1] for kk in keys]])
        ax.errorbar(np.arange(len(keys)) + (i - 1) * 0.2, med, yerr=err, fmt="o", color=color, label=k, capsize=3)
    ax.set_xticks(np.arange(len(keys)), keys, rotation=20)
    ax.set_title("Topic statistics: median and IQR over topics")
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_png(fig, path)


# -------------------------------------------------------------------------------- main

def run(cfg: Config, data: Path = SHARED_DATA, progress: bool = True,
        reference: Corpus | None = None) -> dict[str, Any]:
    """Measure everything; returns the JSON-able result (see the module docstring).

    ``reference``: the labelled real corpus to calibrate against (default: Wikispeedia from
    ``data/wikispeedia``; tests pass a small stand-in). MediaWiki samples absent from ``data``
    are left out of the anchor table."""
    from gym_crawl.corpus import load_corpus

    t0 = time.perf_counter()

    def say(msg: str) -> None:
        if progress:
            print(f"[{time.perf_counter() - t0:6.1f} s] {msg}", flush=True)

    res: dict[str, Any] = {"config": asdict(cfg), "anchors": {}, "synthetic": {}, "summary": {}}
    for name, rel in MEDIAWIKI_SAMPLES.items():
        p = data / rel
        if p.is_file():
            res["anchors"][name] = anchor_stats(mediawiki_anchor_pairs(p))
            say(f"{name}: {res['anchors'][name]['links']} links")
    if reference is None:
        ws_path = data / "wikispeedia"
        if not (ws_path / "links.tsv").is_file():
            raise FileNotFoundError(f"Wikispeedia not found at {ws_path} (needed as the calibration target)")
        reference = load_corpus(str(ws_path))
    ws = reference
    pairs, url_words = corpus_anchor_pairs(ws, cfg.link_sample, cfg.seed)
    res["anchors"]["wikispeedia"] = {**anchor_stats(pairs), "url_words": url_words}
    res["wikispeedia"] = _corpus_report(ws, wikispeedia_tasks(ws, every=cfg.ws_every), cfg)
    res["summary"]["wikispeedia"] = _summary(res["wikispeedia"], cfg.budgets)
    say(f"wikispeedia: {len(res['wikispeedia']['topics'])} categories")
    for preset in ("default", "hard"):
        c = generate_synthetic(cfg.pages, cfg.seed, preset=preset)
        pairs, url_words = corpus_anchor_pairs(c, cfg.link_sample, cfg.seed)
        res["anchors"][preset] = {**anchor_stats(pairs), "url_words": url_words}
        res["synthetic"][preset] = _corpus_report(c, synthetic_tasks(c), cfg)
        res["summary"][preset] = _summary(res["synthetic"][preset], cfg.budgets)
        say(f"synthetic {preset}: done")
        del c
    for n in cfg.extra_pages:
        c = generate_synthetic(n, cfg.seed, preset="hard")
        res["synthetic"][f"hard-{n}"] = _corpus_report(c, synthetic_tasks(c), cfg, with_stats=False)
        say(f"synthetic hard {n}: done")
        del c
    res["seconds"] = time.perf_counter() - t0
    return res


def _finite(x: Any) -> Any:
    """``x`` with NaN/inf floats replaced by None (strict JSON)."""
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    if isinstance(x, float) and not np.isfinite(x):
        return None
    return x


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="gym-crawl bench calibrate_synthetic", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI-sized run (budget 100, every 4th Wikispeedia category)")
    ap.add_argument("--out", default="benchmarks/results/calibrate_synthetic")
    ap.add_argument("--data", default=str(SHARED_DATA), help="folder holding wikispeedia/ and mediawiki_samples/")
    ap.add_argument("--pages", type=int, default=None, help="synthetic corpus size (default 20,000)")
    ap.add_argument("--budget", type=int, nargs="+", default=None, help="crawl budgets (default 100 200)")
    ap.add_argument("--random-seeds", type=int, default=None, help="random-baseline seeds (default 5)")
    ap.add_argument("--extra-pages", type=int, nargs="*", default=None,
                    help="further hard-preset sizes to crawl (default 100000; none with --quick)")
    args = ap.parse_args(argv)
    cfg = QUICK if args.quick else FULL
    over = {"pages": args.pages, "budgets": tuple(args.budget) if args.budget else None,
            "random_seeds": args.random_seeds,
            "extra_pages": tuple(args.extra_pages) if args.extra_pages is not None else None}
    cfg = replace(cfg, **{k: v for k, v in over.items() if v is not None})
    if cfg.random_seeds < 1 or any(b < 1 for b in cfg.budgets) or cfg.pages < 500:
        ap.error("--random-seeds and --budget must be >= 1 and --pages >= 500")
    res = run(cfg, Path(args.data))
    print(write_outputs(res, Path(args.out), args))
    return 0


def write_outputs(res: dict[str, Any], out: Path, args: argparse.Namespace | None = None) -> str:
    """Write ``calibrate_synthetic.json`` / ``.md`` / ``.png`` into ``out`` (``args``: the command's, recorded in
    the JSON's ``"about"``; a ``--quick`` run is marked illustrative); returns the Markdown."""
    quick = bool(getattr(args, "quick", False))
    out.mkdir(parents=True, exist_ok=True)
    write_json_report(out / "calibrate_synthetic.json", _finite(res), "calibrate_synthetic", args, quick=quick)
    md = _markdown(res)
    atomic_write_bytes(out / "calibrate_synthetic.md", (markdown_banner(quick) + md).encode("utf-8"))
    _plot(res, out / "calibrate_synthetic.png")
    return md


if __name__ == "__main__":
    raise SystemExit(main())
