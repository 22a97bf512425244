"""TRES reproduction: Tables 1–4, Figure 4 and the decision cost of Tree-Frontier vs the synchronous method.

``gym-crawl bench tres [--quick] [--out DIR] [--parts classifier,table,fig4,cost,table4] ...``

Parts (each writes into ``--out``, default ``benchmarks/results/tres``; ``tres.json`` + ``tres.md``
hold everything):

* **classifier** — TRES Table 1 analogue: precision / recall of the relevant class and F-macro of
  every candidate classifier (tf-idf + logistic regression is the baseline) on the held-out pages,
  the selected one marked; Table 2 analogue: keyword expansion (Algorithm 1) — initial and discovered
  keywords and their mean count per relevant / irrelevant test page.
* **table** — TRES Table 3 analogue: harvest rate and relevant domains of Random, Tree-Random,
  best-first, LFA-async (when ``agents.linear.lfa`` is importable), TRES-async and TRES at domain caps
  b ∈ {∞, 100, 10, 5, 5→2}, on the synthetic multi-site corpus (default 10⁶ pages, 20,000 sites,
  20,000-step crawls) and on Wikispeedia (Geology, Cancer, Poetry, Sports; 1,000-step crawls);
  ``tres_pareto_<corpus>.png`` plots harvest rate vs relevant domains.
* **fig4** — TRES Figure 4 analogue: frontier size and Tree-Frontier leaves per step over the TRES
  b=∞ synthetic crawl (``tres_fig4.png``), with the ratio of frontier pages to candidates evaluated.
* **cost** — decision time per step of the synchronous method (the MLP scores the whole frontier
  matrix) vs Tree-Frontier (sample one representative per leaf, score them, update the tree) on
  synthetic frontiers of 10⁴, 10⁵, 10⁶ rows (``tres_cost.png``).
* **table4** — TRES Table 4 analogue (ablations, §3.6) beside the Table 3 baselines the paper
  compares with, ``--table4-runs`` runs per cell (mean ± sd), ``tres_table4_<corpus>.png``:

  ===============  ===========================================================================
  row              what runs
  ===============  ===========================================================================
  ``tres-clf``     TRES as published: DDQN + Tree-Frontier, ``tres-clf`` features, and the
                   **classifier reward** (the topic's selected offline classifier decides
                   reward and the crawler's notion of "relevant"; our stand-in for the BiLSTM)
  ``tres-svm``     TRES_SVM: the same with ACHE's linear SVM (``svm`` kind) as reward and as the
                   link-text classifier column
  ``tres-nh``      TRES_NH: ``tres-clf`` without the two web-domain ("Hub") columns
                   (``domain_features=False``) — §3.6.3; not a keyword ablation
  ``tres``         TRES with the ground-truth (``binary`` on labels) reward: a perfect classifier
  ``best-first``   the no-learning crawler
  ``ache``         ACHE-like: the registered ``ache`` agent — ``online-classifier`` (best-first
                   over an online link classifier retrained from fetched pages) whose page labels
                   come from ACHE's SVM page classifier (here the setting's own SVM as reward)
  ``seedfinder``   SeedFinder-like: seed expansion by search-engine queries (below), then the
                   ACHE-like crawl from the expanded seeds
  ===============  ===========================================================================

  Every row is a registered agent or variant (:mod:`gym_crawl.agents.variants`: ``tres-clf``, ``tres-svm``,
  ``tres-nh``, ``ache``); the benchmark passes the setting's own classifiers, feature set and Tree-Frontier.
  The ``seedfinder`` row runs the library's search (:mod:`gym_crawl.relevance.search`) with the setting's
  SVM and the cell's domain cap, and charges exactly the pages it downloaded; the registered ``seedfinder``
  agent runs the same search on any task, uncapped, with its allowance fixed when the env is built.

  Every crawl is scored on ground-truth labels of evaluation pages (the paper scores every crawl
  with its ground-truth BiLSTM). **SeedFinder-like** (Vieira et al. 2016, as TRES describes it:
  "extracts new seeds and keywords from relevant pages to derive search queries"): a search engine
  (:class:`~gym_crawl.relevance.search.SearchEngine`: tf-idf cosine over every page's text — the one
  privilege it has over the crawlers, as a web search API has) is queried ``--sf-rounds`` times with the
  topic words plus the ``--sf-terms`` best new terms (tf-idf mass) of the pages judged relevant so far (the seed page
  first); the top ``--sf-results`` unseen pages of each query are downloaded and judged by the SVM
  page classifier; every downloaded result becomes a seed of the ACHE-like crawl and costs one page
  of the budget (``max_episode_steps`` = budget − results). Not modelled: SeedFinder's query
  reformulation heuristics, search-engine ranking beyond tf-idf, result snippets.

Setup of the crawls (documented choices):

* **no classifier leak**: every crawl runs on the corpus'
  :func:`~gym_crawl.relevance.classifier.heldout_view` — a URL-hash split puts ``--clf-fraction``
  (0.3) of the pages in the *classifier-train* split, whose labels the view renames, so
  ``relevant_found``/harvest rate count **evaluation pages only**; the classifiers (Table 1) are
  fitted on classifier-train pages only and scored on evaluation pages.
* relevance = the topic's ground-truth label on evaluation pages (``relevant_found``/harvest rate);
  the Table 3 learners' reward is TRES's binary reward on the same labels (``reward="binary"``;
  LFA-async keeps Han's own features and reward, as in the paper's "Async" baseline); TRES uses the
  ``tres-clf`` features with the topic's offline classifier and the expanded keywords; every agent
  crawls the same topic object. The Table 4 rows use the classifier reward (above).
* **domains**: the synthetic corpus has real sites (``--synthetic-domains``). Wikispeedia is one site,
  so a cap would end the crawl after b pages; we split it into URL-hash "sites": a page's domain is
  ``crc32(title) mod ⌈n / pages_per_domain⌉`` (default ~5 pages per site). This depends only on the
  URL, never on labels or text, so it leaks nothing; caps ≥ 10 are then non-binding there, and
  "relevant domains" measures how widely the relevant pages found spread over URL space.
* Tree-Random uses ``TreeFrontier(overflow="uniform")``; TRES ``TreeFrontier()``; both with
  K = ``--k`` slots (≥ the number of non-empty leaves, so every representative is scored).
"""
from __future__ import annotations

import argparse
import dataclasses
import io
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._console import ArgumentParser
from gym_crawl._io import atomic_write_bytes, atomic_write_json
from gym_crawl.benchmarks.plotting import pyplot
from gym_crawl.benchmarks.report import markdown_banner, write_json_report
from gym_crawl.corpus.url_sites import url_hash_domains
from gym_crawl.relevance.search import SEEDFINDER_DEFAULTS, SearchEngine
from gym_crawl.relevance.search import seedfinder_results as library_seedfinder_results

DEFAULT_WIKISPEEDIA = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikispeedia"
AGENTS = ("random", "tree-random", "best-first", "lfa-async", "tres-async", "tres")
#: Table 4 rows (ablations and the paper's other baselines); see the module docstring
TABLE4_AGENTS = ("tres-clf", "tres-svm", "tres-nh", "tres", "best-first", "ache", "seedfinder")
#: (row, cap) cells of the Table 4 part, in the paper's layout (b=10 and b=5→2), plus the
#: baselines of Table 3 at b=∞
TABLE4_CELLS = (("tres-svm", "10"), ("tres-nh", "10"), ("tres-clf", "10"), ("tres", "10"), ("best-first", "10"),
                ("ache", "10"), ("seedfinder", "10"), ("tres-svm", "5-2"), ("tres-clf", "5-2"),
                ("best-first", "5-2"), ("ache", "inf"), ("seedfinder", "inf"))
#: the registered agent each row runs (every row is a registered agent or variant, see
#: :mod:`gym_crawl.agents.variants`; SeedFinder-like crawls with the ACHE-like agent from its expanded seeds)
ROW_AGENT = {"seedfinder": "ache"}
#: TRES Table 4 and the ACHE/SeedFinder rows of Table 3 (harvest rate %, domains) per paper setting
PAPER_TABLE4 = {
    "TRES_SVM_10": ((79.88, 1692), (87.65, 2094), (34.64, 1189)),
    "TRES_10_NH": ((82.17, 2393), (94.22, 3189), (58.89, 2080)),
    "TRES_10": ((84.52, 2335), (94.56, 2604), (63.14, 1977)),
    "TRES_SVM_5_2": ((60.23, 5783), (70.39, 5342), (4.4, 318)),
    "TRES_5_2": ((72.43, 7011), (87.65, 7304), (42.87, 3243)),
    "ACHE": ((54.43, 2081), (60.45, 2153), (49.25, 940)),
    "ACHE_10": ((36.79, 6084), None, None),
    "SeedFinder": ((56.05, 1842), (60.16, 3642), (38.68, 1314)),
    "SeedFinder_10": ((37.70, 5774), (46.96, 6742), (19.63, 2832)),
}
PAPER_SETTINGS = ("Sports", "Food", "Hardware")
CAPS = ("inf", "100", "10", "5", "5-2")
WIKI_TOPICS = ("geology", "cancer", "poetry", "sports")
LABEL = {"random": "Random", "tree-random": "Tree-Random", "best-first": "Best-first", "lfa-async": "LFA-async",
         "tres-async": "TRES-async", "tres": "TRES", "tres-clf": "TRES (clf reward)", "tres-svm": "TRES_SVM",
         "tres-nh": "TRES_NH", "ache": "ACHE-like", "seedfinder": "SeedFinder-like"}
COLORS = {"random": "#bcbd22", "tree-random": "#9467bd", "best-first": "#d62728", "lfa-async": "#ff7f0e",
          "tres-async": "#1f77b4", "tres": "#2ca02c", "tres-clf": "#17becf", "tres-svm": "#8c564b",
          "tres-nh": "#e377c2", "ache": "#7f7f7f", "seedfinder": "#000000"}
MARKERS = {"inf": "o", "100": "s", "10": "^", "5": "D", "5-2": "*"}


# ============================================================================ corpora
@dataclasses.dataclass
class Setting:
    """One corpus/topic combination the crawls run on."""

    corpus_label: str
    corpus: Any
    text: Any
    topic: Any
    features: Any
    steps: int
    runs: int
    n_relevant: int
    clf: Any = None
    svm: Any = None
    engine: Any = None


def _prepare(label: str, corpus: Any, text: Any, topic_key: str, steps: int, runs: int, clf_kw: dict,
             report: dict[str, Any], svm: bool = False) -> Setting:
    """Train the topic's classifier (Table 1) on the classifier-train split of ``corpus`` (a
    :func:`heldout_view`), expand its keywords (Table 2), build the feature set; with ``svm`` also
    ACHE's SVM (a Table 1 row, TRES_SVM's reward)."""
    from gym_crawl.features.tres_clf import TresClfFeatures
    from gym_crawl.relevance.classifier import train_heldout_classifier, true_label_mask
    from gym_crawl.relevance.topic import resolve_topic
    from gym_crawl.text.keywords import expand_topic, mean_keyword_count

    topic = resolve_topic(topic_key, corpus)
    t0 = time.perf_counter()
    split = corpus.meta.get("classifier_split", {})
    kw = dict(clf_kw)
    if split:
        kw.update(fraction=split["fraction"], salt=split["salt"])
    rep = train_heldout_classifier(corpus, topic, text, **kw)
    svm_rep = None
    if svm:
        svm_rep = train_heldout_classifier(corpus, topic, text, **{**kw, "kinds": ("svm",)})
    y = true_label_mask(corpus, topic)  # training pages' labels only are used below (keywords)
    train_rel = rep.train_pages[y[rep.train_pages]]
    initial = list(dict.fromkeys(list(topic.keywords) + list(topic.categories)))
    topic2, ex = expand_topic(topic, text, train_rel, initial=initial, min_df=2)
    test = rep.test_pages
    rel, irr = test[y[test]], test[~y[test]]
    rows = rep.table() + ([{**r, "model": "svm (ACHE's SVM)", "selected": False} for r in svm_rep.table()]
                          if svm_rep is not None else [])
    report.setdefault("classifier", []).append({
        "corpus": label, "topic": topic.name, "train_pages": int(len(rep.train_pages)),
        "train_relevant": int(len(train_rel)), "test_pages": int(len(test)), "rows": rows,
        "selected": rep.classifier.kind, "seconds": round(time.perf_counter() - t0, 1)})
    report.setdefault("keywords", []).append({
        "corpus": label, "topic": topic.name, "initial": ex.initial, "n_initial": len(ex.initial),
        "n_new": len(ex.new), "new_top": ex.new[:20], "threshold_b": round(ex.threshold, 4),
        "mean_count_initial_relevant": round(mean_keyword_count(corpus, ex.initial, rel), 2),
        "mean_count_initial_irrelevant": round(mean_keyword_count(corpus, ex.initial, irr), 2),
        "mean_count_new_relevant": round(mean_keyword_count(corpus, ex.new, rel), 2),
        "mean_count_new_irrelevant": round(mean_keyword_count(corpus, ex.new, irr), 2)})
    feats = TresClfFeatures(classifiers={topic.name: rep.classifier})
    return Setting(label, corpus, text, topic2, feats, steps, runs, int(topic.label_mask(corpus).sum()),
                   clf=rep.classifier, svm=svm_rep.classifier if svm_rep is not None else None)


# ============================================================================ crawls
def _agent_available(name: str) -> str | None:
    from gym_crawl.agents.base import agent_class

    try:
        agent_class(ROW_AGENT.get(name, name))
        return None
    except ValueError as e:
        return str(e)


def make_env(s: Setting, name: str, cap: str, k: int) -> tuple[Any, Any]:
    """``(env, tree)``: the env an agent of the table crawls with (see the module docstring), built by
    :func:`gym_crawl.agents.make_env_for`, and the Tree-Frontier reducer it was given (``None`` for the
    agents without a tree) — the benchmark keeps its own reference to read the tree's size."""
    return make_env_steps(s, name, cap, k, s.steps)


def _clf_reward(clf: Any) -> Any:
    from gym_crawl.relevance.rewards import ClassifierReward

    return ClassifierReward(classifier=clf)


def make_env_steps(s: Setting, name: str, cap: str, k: int, steps: int) -> tuple[Any, Any]:
    """:func:`make_env` with a budget of ``steps`` env steps (SeedFinder-like spends part of the
    budget on search results)."""
    from gym_crawl.agents import make_env_for
    from gym_crawl.features.tres_clf import TresClfFeatures
    from gym_crawl.reducers.tree import TreeFrontier

    kw: dict[str, Any] = dict(corpus=s.corpus, topic=s.topic, text=s.text, max_episode_steps=steps,
                              domain_cap=None if cap == "inf" else cap, reward="binary")
    tree = None
    if name in ("tres-clf", "tres-svm", "tres-nh"):
        clf = s.svm if name == "tres-svm" else s.clf
        if clf is None:
            raise ValueError(f"{name}: the setting has no {'SVM ' if name == 'tres-svm' else ''}classifier")
        tree = TreeFrontier()
        feats = TresClfFeatures(classifiers={s.topic.name: clf}, domain_features=name != "tres-nh")
        kw.update(reducer=tree, features=feats, max_candidates=k, reward=_clf_reward(clf))
        return make_env_for(name, env_id="WikiCrawl-v0", **kw), tree
    if name in ("ache", "seedfinder"):
        if s.svm is None:
            raise ValueError(f"{name}: the setting has no SVM page classifier")
        kw.update(reducer="random", max_candidates=1, reward=_clf_reward(s.svm))
        return make_env_for("ache", env_id="WikiCrawl-v0", **kw), None
    if name == "tres":
        tree = TreeFrontier()
        kw.update(reducer=tree, features=s.features, max_candidates=k)
    elif name == "tree-random":
        tree = TreeFrontier(overflow="uniform")
        kw.update(reducer=tree, features=s.features, max_candidates=k)
    elif name == "best-first":
        kw.update(reducer="topk", features="tres", max_candidates=16)
    elif name == "tres-async":
        kw.update(reducer="random", features=s.features, max_candidates=1)
    elif name == "lfa-async":
        kw.update(reducer="random", features="han2018", reward="han2018", max_candidates=1)
    else:  # random (page agent: the reducer's proposal is unused)
        kw.update(reducer="random", features="tres", max_candidates=1)
    return make_env_for(name, env_id="WikiCrawl-v0", **kw), tree


#: SeedFinder-like defaults: query rounds, results per query, new terms per query
SF_DEFAULTS = dict(SEEDFINDER_DEFAULTS)


def seedfinder_results(s: Setting, seeds: np.ndarray, rounds: int = 5, results: int = 10, terms: int = 3,
                       cap: int | None = None) -> np.ndarray:
    """Pages SeedFinder-like downloads from search results for the setting's topic, judged by the
    setting's SVM page classifier (:func:`gym_crawl.relevance.search.seedfinder_results`)."""
    if s.engine is None:
        s.engine = SearchEngine(s.corpus, s.text.idf)
    return library_seedfinder_results(s.corpus, s.engine, s.topic.words, s.svm, seeds, rounds=rounds,
                                      results=results, terms=terms, cap=cap)


def run_one(s: Setting, name: str, cap: str, run: int, seed: int, k: int,
            trace_every: int = 0) -> tuple[dict[str, Any], list[list[float]]]:
    """One crawl; returns its summary row and (optionally) a per-step trace
    ``[step, frontier, leaves, non-empty leaves, candidates]``."""
    from gym_crawl.agents import make_agent, run_episode
    from gym_crawl.agents.variants import resolve_variant

    options = None
    n_search = 0
    if name == "seedfinder":
        from gym_crawl.relevance.topic import seed_pages

        seeds = seed_pages(s.topic, s.corpus)
        found = seedfinder_results(s, seeds, **SF_DEFAULTS, cap=None if cap == "inf" else int(cap.split("-")[0]))
        n_search = len(found)
        options = {"seeds": [int(p) for p in np.concatenate([seeds, found])]}
        env, tree = make_env_steps(s, name, cap, k, max(1, s.steps - n_search))
    else:
        env, tree = make_env(s, name, cap, k)
    row_agent = ROW_AGENT.get(name, name)
    seeded = resolve_variant(row_agent).agent in ("tres", "tres-async")
    agent = make_agent(row_agent, seed=run) if seeded else make_agent(row_agent)
    trace: list[list[float]] = []

    def on_step(t: int, info: dict) -> None:
        if trace_every and (t % trace_every == 0 or t == 1):
            trace.append([t, info["frontier_size"], tree.n_leaves if tree else 0,
                          tree.n_nonempty_leaves if tree else 0, int(info["action_mask"].sum())])

    res = run_episode(env, agent, seed=seed + run, options=options, on_step=on_step if trace_every else None)
    curve = res.relevant_curve
    T = len(curve)
    marks = {f"hr@{f}": round(float(curve[max(0, int(f * T) - 1)]) / max(1, int(f * T) + 1), 4)
             for f in (0.1, 0.25, 0.5)} if T else {}
    row = {"corpus": s.corpus_label, "topic": s.topic.name, "cap": cap, "agent": name, "run": run,
           "steps": res.steps, "pages_fetched": res.pages_fetched, "relevant_found": res.relevant_found,
           "harvest_rate": round(res.harvest_rate, 4), "relevant_domains": res.relevant_domains,
           "relevant_in_corpus": s.n_relevant, "seconds": round(res.seconds, 2),
           "steps_per_second": round(res.steps_per_second, 1), **marks}
    if n_search:
        row["search_results"] = n_search
    if tree is not None:
        row.update({"leaves": tree.n_leaves, "nonempty_leaves": tree.n_nonempty_leaves,
                    "final_frontier": int(len(env.unwrapped.view.frontier_pages()))})
    env.close()
    return row, trace


def _aggregate(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["corpus"], r["topic"], r["cap"], r["agent"]), []).append(r)
    out = []
    for (c, t, cap, a), rs in groups.items():
        agg: dict[str, Any] = {"corpus": c, "topic": t, "cap": cap, "agent": a, "runs": len(rs)}
        for key in ("harvest_rate", "relevant_domains", "relevant_found", "pages_fetched", "steps", "seconds",
                    "steps_per_second", "hr@0.1", "hr@0.25", "hr@0.5", "leaves", "nonempty_leaves", "final_frontier"):
            vals = [r[key] for r in rs if key in r]
            if vals:
                agg[key] = round(float(np.mean(vals)), 4)
                if key in ("harvest_rate", "relevant_domains") and len(vals) > 1:
                    agg[key + "_sd"] = round(float(np.std(vals)), 4)
        agg["relevant_in_corpus"] = rs[0]["relevant_in_corpus"]
        out.append(agg)
    return out


# ============================================================================ decision cost
def _synthetic_rows(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(n, 9) rows shaped like ``tres-clf`` features and Bernoulli rewards that depend on them."""
    X = np.empty((n, 9), np.float32)
    X[:, 0] = rng.random(n) < 0.3
    X[:, 1] = 1.0 / (1.0 + rng.integers(0, 10, n))
    X[:, 2] = rng.random(n)
    X[:, 3] = rng.random(n) < 0.1
    X[:, 4] = rng.random(n) < 0.1
    X[:, 5] = rng.beta(0.5, 2.0, n)
    X[:, 6] = rng.random(n)
    X[:, 7] = np.where(rng.random(n) < 0.7, 1.0, 0.5)
    X[:, 8] = 1.0
    z = -3 + 4 * X[:, 5] + 1.5 * X[:, 3] + 1.5 * X[:, 0] + 1.0 * X[:, 6]
    r = (rng.random(n) < 1 / (1 + np.exp(-z))).astype(np.float64)
    return X, r


def decision_cost(sizes: list[int], experience: int = 20_000, steps: int = 30, new_per_step: int = 25,
                  hidden: tuple[int, ...] = (64, 64), seed: int = 0,
                  progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Per-step decision time: synchronous MLP over the whole frontier vs Tree-Frontier sampling.

    The tree is grown once from ``experience`` synthetic experience samples (so it is identical for
    every frontier size), then filled with F frontier rows. A Tree-Frontier step = draw one
    representative per non-empty leaf, one batched forward pass over them, argmax, and the tree
    update of a crawl step (remove the fetched page, route ``new_per_step`` new rows, add the
    experience sample and check its leaf for a split). A synchronous step = one batched forward pass
    over the F × d frontier matrix (feature computation excluded, which favours it) and argmax.
    """
    import torch

    from gym_crawl.agents.dqn.tres import QNetwork
    from gym_crawl.reducers.tree import TreeFrontier

    torch.set_num_threads(1)
    rng = np.random.default_rng(seed)
    net = QNetwork(9, list(hidden), np.random.default_rng(seed))
    cap = max(sizes) + steps * new_per_step + 10
    tf = TreeFrontier()
    tf.reset_storage(cap, 9)
    Xe, re_ = _synthetic_rows(rng, experience)
    for x, r in zip(Xe, re_):
        tf.add_experience(x, float(r))
    out = []
    for F in sizes:
        if progress:
            progress(f"decision cost F={F:,}")
        XF, _ = _synthetic_rows(np.random.default_rng(seed + F), F)
        tf.insert(np.arange(F), XF)
        srng = np.random.default_rng(seed + 1)
        XN, RN = _synthetic_rows(np.random.default_rng(seed + 2), steps * new_per_step + steps)
        # the rows the tree holds, by page id: pages 0..F-1 are XF, page F + j is XN[j] (inserted in order)
        rows_by_page = np.concatenate([XF, XN[: steps * new_per_step]])
        nxt = F
        t_tree = []
        cands = []
        for i in range(steps):
            t0 = time.perf_counter()
            reps = tf.propose(None, srng)
            rows = rows_by_page[reps]
            with torch.no_grad():
                q = net(torch.from_numpy(rows)).numpy()
            j = int(np.argmax(q))
            tf.remove(reps[j:j + 1])
            tf.insert(np.arange(nxt, nxt + new_per_step), XN[i * new_per_step:(i + 1) * new_per_step])
            nxt += new_per_step
            tf.add_experience(rows[j], float(RN[-1 - i]))
            t_tree.append(time.perf_counter() - t0)
            cands.append(len(reps))
        sync_steps = max(3, min(steps, int(3e6 // F)))
        t_sync = []
        Xt = torch.from_numpy(XF)
        for _ in range(sync_steps):
            t0 = time.perf_counter()
            with torch.no_grad():
                q = net(Xt).numpy()
            int(np.argmax(q))
            t_sync.append(time.perf_counter() - t0)
        out.append({"frontier": F, "leaves": tf.n_leaves, "candidates_tree": float(np.mean(cands)),
                    "tree_ms": round(1e3 * float(np.median(t_tree)), 3),
                    "sync_ms": round(1e3 * float(np.median(t_sync)), 3),
                    "speedup": round(float(np.median(t_sync)) / max(float(np.median(t_tree)), 1e-9), 1)})
        tf.remove(np.arange(nxt))
    return out


# ============================================================================ output
def _png(fig: Any, path: Path) -> None:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    atomic_write_bytes(path, buf.getvalue())


def plot_pareto(agg: list[dict[str, Any]], corpus: str, path: Path) -> None:
    plt = pyplot()
    topics = list(dict.fromkeys(r["topic"] for r in agg if r["corpus"] == corpus))
    if not topics:
        return
    fig, axes = plt.subplots(1, len(topics), figsize=(4.6 * len(topics), 4.2), squeeze=False)
    for ax, t in zip(axes[0], topics):
        rows = [r for r in agg if r["corpus"] == corpus and r["topic"] == t]
        for r in rows:
            ax.scatter(r["relevant_domains"], 100 * r["harvest_rate"], c=COLORS.get(r["agent"], "k"),
                       marker=MARKERS.get(r["cap"], "o"), s=55, edgecolors="k", linewidths=0.4)
        pts = sorted(((r["relevant_domains"], 100 * r["harvest_rate"]) for r in rows), key=lambda p: (-p[0], -p[1]))
        front, best = [], -1.0
        for x, y in pts:
            if y > best:
                front.append((x, y))
                best = y
        if front:
            fx, fy = zip(*sorted(front))
            ax.step(fx, fy, where="post", color="0.5", lw=1, ls="--")
        ax.set_title(f"{corpus}: {t}")
        ax.set_xlabel("relevant domains")
        ax.set_ylabel("harvest rate (%)")
        ax.grid(alpha=0.3)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], ls="", marker="o", color=COLORS[a], label=LABEL[a]) for a in AGENTS]
    handles += [Line2D([], [], ls="", marker=m, color="0.4", label=f"b={c}") for c, m in MARKERS.items()]
    axes[0][-1].legend(handles=handles, fontsize=7, loc="best")
    fig.tight_layout()
    _png(fig, path)
    plt.close(fig)


def _cell_label(row: str, cap: str) -> str:
    name = {"tres": "TRES (label reward)", "tres-clf": "TRES", "tres-svm": "TRES_SVM", "tres-nh": "TRES_NH"}.get(
        row, LABEL.get(row, row))
    if row == "tres-nh":
        return f"TRES_{cap.replace('-', '_')}_NH" if cap != "inf" else name
    return f"{name}_{cap.replace('-', '_')}" if cap != "inf" else name


def plot_table4(agg: list[dict[str, Any]], corpus: str, path: Path) -> None:
    """Harvest rate (mean ± sd over runs) of every Table 4 cell, one panel per topic."""
    plt = pyplot()
    rows = [r for r in agg if r["corpus"] == corpus]
    topics = list(dict.fromkeys(r["topic"] for r in rows))
    if not topics:
        return
    cells = list(dict.fromkeys((r["agent"], r["cap"]) for r in rows))
    fig, axes = plt.subplots(1, len(topics), figsize=(3.2 + 0.35 * len(cells) * len(topics), 4.4), squeeze=False,
                             sharey=True)
    for ax, t in zip(axes[0], topics):
        for i, (a, cap) in enumerate(cells):
            m = [r for r in rows if r["topic"] == t and r["agent"] == a and r["cap"] == cap]
            if not m:
                continue
            ax.bar(i, 100 * m[0]["harvest_rate"], yerr=100 * m[0].get("harvest_rate_sd", 0.0), capsize=2,
                   color=COLORS.get(a, "0.5"), hatch="//" if cap == "5-2" else ("" if cap == "10" else ".."),
                   edgecolor="k", linewidth=0.4)
        tr = [r for r in rows if r["topic"] == t]
        budget = max(r["pages_fetched"] for r in tr)
        ax.axhline(100 * min(1.0, tr[0]["relevant_in_corpus"] / max(1.0, budget)), color="0.3", ls="--", lw=0.8,
                   label="ceiling: relevant pages / budget")
        ax.legend(fontsize=7, loc="upper right")
        ax.set_xticks(range(len(cells)))
        ax.set_xticklabels([_cell_label(a, c) for a, c in cells], rotation=70, fontsize=7)
        ax.set_title(f"{corpus}: {t} ({rows[0]['runs']} runs)")
        ax.grid(alpha=0.3, axis="y")
    axes[0][0].set_ylabel("harvest rate (%, evaluation pages), mean ± sd")
    fig.tight_layout()
    _png(fig, path)
    plt.close(fig)


def plot_fig4(trace: list[list[float]], path: Path) -> None:
    plt = pyplot()
    a = np.asarray(trace, float)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    ax1.plot(a[:, 0], a[:, 2], label="leaves")
    ax1.plot(a[:, 0], a[:, 3], label="non-empty leaves (= candidates scored)")
    ax1.set_xlabel("step")
    ax1.set_ylabel("Tree-Frontier leaves")
    ax1.legend(fontsize=8)
    ax1.set_title("(a) Tree-Frontier leaves")
    ax2.plot(a[:, 0], a[:, 1], color="C3")
    ax2.set_xlabel("step")
    ax2.set_ylabel("frontier URLs")
    ax2.set_title("(b) frontier size")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    _png(fig, path)
    plt.close(fig)


def plot_cost(cost: list[dict[str, Any]], path: Path) -> None:
    plt = pyplot()
    F = [c["frontier"] for c in cost]
    fig, ax = plt.subplots(figsize=(5.5, 4))
    ax.loglog(F, [c["sync_ms"] for c in cost], "o-", label="synchronous (MLP over the frontier)")
    ax.loglog(F, [c["tree_ms"] for c in cost], "s-", label="Tree-Frontier (sample + score + update)")
    ax.set_xlabel("frontier size")
    ax.set_ylabel("decision time per step (ms)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    _png(fig, path)
    plt.close(fig)


def markdown(res: dict[str, Any]) -> str:
    L: list[str] = ["# TRES on WikiCrawl-v0", ""]
    cfg = res.get("config", {})
    L += [f"Config: `{json.dumps(cfg, sort_keys=True)}`", ""]
    if res.get("classifier"):
        L += ["## Table 1 analogue — offline relevance classifiers (held-out test pages, %)", "",
              "| corpus | topic | train (relevant) | model | P | R | F-macro | AUC | selected |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for c in res["classifier"]:
            for r in c["rows"]:
                L.append(f"| {c['corpus']} | {c['topic']} | {c['train_pages']} ({c['train_relevant']}) | "
                         f"{r['model']} | {r['precision']} | {r['recall']} | {r['f_macro']} | {r['auc']} | "
                         f"{'✔' if r['selected'] else ''} |")
        L.append("")
    if res.get("keywords"):
        L += ["## Table 2 analogue — keyword expansion (mean keyword count per test page)", "",
              "| corpus | topic | #KS | #K' | b | KS rel / irr | K' rel / irr | first new keywords |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for k in res["keywords"]:
            L.append(f"| {k['corpus']} | {k['topic']} | {k['n_initial']} | {k['n_new']} | {k['threshold_b']} | "
                     f"{k['mean_count_initial_relevant']} / {k['mean_count_initial_irrelevant']} | "
                     f"{k['mean_count_new_relevant']} / {k['mean_count_new_irrelevant']} | "
                     f"{', '.join(k['new_top'][:8])} |")
        L.append("")
    agg = res.get("table", [])
    for corpus in dict.fromkeys(r["corpus"] for r in agg):
        rows = [r for r in agg if r["corpus"] == corpus]
        topics = list(dict.fromkeys(r["topic"] for r in rows))
        L += [f"## Table 3 analogue — {corpus}: harvest rate (%) / relevant domains", ""]
        L.append("| crawler | " + " | ".join(f"{t} HR | {t} dom." for t in topics) + " |")
        L.append("| --- |" + " --- | --- |" * len(topics))
        for cap in dict.fromkeys(r["cap"] for r in rows):
            for a in AGENTS:
                cells = []
                any_ = False
                for t in topics:
                    m = [r for r in rows if r["topic"] == t and r["cap"] == cap and r["agent"] == a]
                    if m:
                        any_ = True
                        sd = f" ±{100 * m[0]['harvest_rate_sd']:.1f}" if "harvest_rate_sd" in m[0] else ""
                        cells += [f"{100 * m[0]['harvest_rate']:.1f}{sd}", f"{m[0]['relevant_domains']:.0f}"]
                    else:
                        cells += ["–", "–"]
                if any_:
                    L.append(f"| {LABEL[a]}_{cap.replace('-', '_')} | " + " | ".join(cells) + " |")
        L.append("")
        L += [f"Harvest rate (%) after 10 / 25 / 50 / 100 % of the budget, b=∞ ({corpus}):", "",
              "| crawler | " + " | ".join(topics) + " |", "| --- |" + " --- |" * len(topics)]
        for a in AGENTS:
            cells = []
            for t in topics:
                m = [r for r in rows if r["topic"] == t and r["cap"] == "inf" and r["agent"] == a]
                cells.append(" / ".join(f"{100 * m[0][k]:.0f}" for k in ("hr@0.1", "hr@0.25", "hr@0.5", "harvest_rate")
                                        if k in m[0]) if m else "–")
            if any(c != "–" for c in cells):
                L.append(f"| {LABEL[a]} | " + " | ".join(cells) + " |")
        L.append("")
        L.append("Relevant pages in the corpus: " + ", ".join(
            f"{t} {next(r['relevant_in_corpus'] for r in rows if r['topic'] == t)}" for t in topics)
            + f"; runs per cell: {rows[0]['runs']}. Harvest rate at 10 / 25 / 50 % of the budget "
              "is in the JSON (`hr@…`).")
        L.append("")
    L += table4_markdown(res.get("table4", []))
    if res.get("fig4"):
        f = res["fig4"]
        L += ["## Figure 4 analogue — frontier vs Tree-Frontier", "",
              f"At step {f['step']:,}: frontier {f['frontier']:,} URLs, {f['leaves']:,} leaves, "
              f"{f['nonempty_leaves']:,} non-empty leaves = candidates scored → **{f['ratio']:.0f}× fewer** "
              f"candidates than frontier URLs (paper: ~800,000 / 2,500 ≈ 320×); "
              f"mean over the crawl: {f['mean_ratio']:.0f}×.", ""]
    if res.get("cost"):
        L += ["## Decision cost per step (ms, median)", "",
              "| frontier | leaves | candidates (tree) | synchronous | Tree-Frontier | speed-up |",
              "| --- | --- | --- | --- | --- | --- |"]
        for c in res["cost"]:
            L.append(f"| {c['frontier']:,} | {c['leaves']} | {c['candidates_tree']:.0f} | {c['sync_ms']} | "
                     f"{c['tree_ms']} | {c['speedup']}× |")
        L.append("")
    if res.get("notes"):
        L += ["## Notes", ""] + [f"- {n}" for n in res["notes"]] + [""]
    return "\n".join(L)


def table4_markdown(agg: list[dict[str, Any]]) -> list[str]:
    """The Table 4 section: ours per corpus (harvest rate % and relevant domains, mean ± sd) and the paper's."""
    if not agg:
        return []
    L: list[str] = []
    for corpus in dict.fromkeys(r["corpus"] for r in agg):
        rows = [r for r in agg if r["corpus"] == corpus]
        topics = list(dict.fromkeys(r["topic"] for r in rows))
        L += [f"## Table 4 analogue — {corpus}: harvest rate (%) / relevant domains, mean ± sd", ""]
        L.append("| crawler | runs | " + " | ".join(f"{t} HR | {t} dom." for t in topics) + " |")
        L.append("| --- | --- |" + " --- | --- |" * len(topics))
        for a, cap in dict.fromkeys((r["agent"], r["cap"]) for r in rows):
            cells, runs = [], 0
            for t in topics:
                m = [r for r in rows if r["topic"] == t and r["cap"] == cap and r["agent"] == a]
                if m:
                    runs = max(runs, m[0]["runs"])
                    cells += [f"{100 * m[0]['harvest_rate']:.1f} ± {100 * m[0].get('harvest_rate_sd', 0.0):.1f}",
                              f"{m[0]['relevant_domains']:.0f} ± {m[0].get('relevant_domains_sd', 0.0):.0f}"]
                else:
                    cells += ["–", "–"]
            L.append(f"| {_cell_label(a, cap)} | {runs} | " + " | ".join(cells) + " |")
        L += ["", "Relevant evaluation pages in the corpus: " + ", ".join(
            f"{t} {next(r['relevant_in_corpus'] for r in rows if r['topic'] == t)}" for t in topics)
            + f"; budget {int(max(r['steps'] for r in rows))} pages (SeedFinder-like: search results + crawl "
              f"steps); best-first is deterministic (sd 0 over runs); runs vary the env/agent seed (and the DDQN's "
              f"initial weights).", ""]
    L += ["Paper (TRES Table 4; ACHE / SeedFinder from Table 3), live web, 20,000 pages, HR % / domains:", "",
          "| crawler | " + " | ".join(f"{t} HR | {t} dom." for t in PAPER_SETTINGS) + " |",
          "| --- |" + " --- | --- |" * len(PAPER_SETTINGS)]
    for name, vals in PAPER_TABLE4.items():
        L.append(f"| {name} | " + " | ".join(f"{v[0]} | {v[1]}" if v else "– | –" for v in vals) + " |")
    L.append("")
    return L


# ============================================================================ presets
@dataclasses.dataclass(frozen=True)
class Preset:
    """A named configuration of the benchmark; command-line flags override its fields.

    ``classifier``: extra keyword arguments of :func:`gym_crawl.relevance.classifier.train_topic_classifier`
    (as ``(name, value)`` pairs, so the preset stays hashable and frozen)."""

    name: str
    synthetic: str
    synthetic_domains: int
    synthetic_topics: tuple[str, ...]
    synthetic_steps: int
    synthetic_runs: int
    wiki_topics: tuple[str, ...]
    wiki_steps: int
    wiki_runs: int
    caps: tuple[str, ...]
    cost_sizes: tuple[int, ...]
    cost_experience: int
    cost_steps: int
    classifier: tuple[tuple[str, Any], ...] = ()
    table4_corpora: tuple[str, ...] = ("wikispeedia",)
    table4_steps: int = 250
    table4_runs: int = 5
    table4_cells: tuple[tuple[str, str], ...] = TABLE4_CELLS


#: CI-sized (< ~60 s): a 20,000-page web of 400 sites, one topic per corpus, caps ∞ and 5→2, one run.
QUICK = Preset("quick", synthetic="synthetic-20000", synthetic_domains=400, synthetic_topics=("cancer",),
               synthetic_steps=400, synthetic_runs=1, wiki_topics=("geology",), wiki_steps=150, wiki_runs=1,
               caps=("inf", "5-2"), cost_sizes=(1000, 10_000, 100_000), cost_experience=2000, cost_steps=10,
               classifier=(("kinds", ("tfidf-lr", "vec-lr")), ("grid_C", (1.0,)), ("folds", 2), ("max_train", 1000),
                           ("max_features", 3000), ("max_test", 5000)),
               table4_corpora=("wikispeedia", "synthetic"), table4_steps=60, table4_runs=1,
               table4_cells=(("tres-svm", "10"), ("tres-nh", "10"), ("tres-clf", "10"), ("best-first", "10"),
                             ("ache", "10"), ("seedfinder", "10")))
#: The reproduction: 10⁶ pages on 20,000 sites, 20,000-step crawls, every cap, Wikispeedia's four topics.
FULL = Preset("full", synthetic="synthetic-1000000", synthetic_domains=20_000, synthetic_topics=("cancer", "fiction"),
              synthetic_steps=20_000, synthetic_runs=1, wiki_topics=WIKI_TOPICS, wiki_steps=1000, wiki_runs=3,
              caps=CAPS, cost_sizes=(10_000, 100_000, 1_000_000), cost_experience=20_000, cost_steps=30,
              classifier=(("grid_C", (1.0,)),))
PRESETS = {p.name: p for p in (QUICK, FULL)}


def _csv(v: str | None) -> tuple[str, ...] | None:
    return None if v is None else tuple(x.strip() for x in v.split(",") if x.strip())


def _cells(v: str | None) -> tuple[tuple[str, str], ...] | None:
    if v is None:
        return None
    out = []
    for c in _csv(v) or ():
        row, _, cap = c.partition("@")
        if row not in TABLE4_AGENTS or not cap:
            raise SystemExit(f"--table4-cells: {c!r} is not row@cap with a row of {TABLE4_AGENTS}")
        out.append((row, cap))
    return tuple(out)


def build_parser() -> argparse.ArgumentParser:
    ap = ArgumentParser(prog="gym-crawl bench tres", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="the QUICK preset: CI-sized run (< ~60 s); "
                                                         "default: the FULL preset")
    ap.add_argument("--out", default="benchmarks/results/tres")
    ap.add_argument("--parts", default="classifier,table,fig4,cost,table4")
    ap.add_argument("--agents", default=",".join(AGENTS))
    ap.add_argument("--caps", default=None, help="comma-separated: inf, integers, A-B (adaptive); full: all five")
    ap.add_argument("--synthetic", default=None, help="synthetic corpus spec ('none' to skip); full: synthetic-1000000")
    ap.add_argument("--synthetic-domains", type=int, default=None, help="sites of the synthetic web (full 20,000)")
    ap.add_argument("--synthetic-topics", default=None, help="comma-separated (full: cancer,fiction)")
    ap.add_argument("--synthetic-steps", type=int, default=None, help="full 20,000")
    ap.add_argument("--synthetic-runs", type=int, default=None, help="full 1")
    ap.add_argument("--wikispeedia", default=str(DEFAULT_WIKISPEEDIA), help="path ('none' to skip)")
    ap.add_argument("--wiki-topics", default=None, help="comma-separated (full: geology,cancer,poetry,sports)")
    ap.add_argument("--wiki-steps", type=int, default=None, help="full 1000")
    ap.add_argument("--wiki-runs", type=int, default=None, help="full 3")
    ap.add_argument("--pages-per-domain", type=int, default=5, help="URL-hash sites of Wikispeedia")
    ap.add_argument("--k", type=int, default=4096, help="candidate slots of the tree agents")
    ap.add_argument("--cost-sizes", default=None, help="comma-separated frontier sizes (full: 10⁴, 10⁵, 10⁶)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--clf-fraction", type=float, default=0.3,
                    help="share of pages (URL hash) in the classifier-train split; crawls count the rest")
    ap.add_argument("--table4-corpora", default=None,
                    help="comma-separated: wikispeedia, synthetic (full: wikispeedia)")
    ap.add_argument("--table4-steps", type=int, default=None, help="budget of the Table 4 crawls (full 250)")
    ap.add_argument("--table4-runs", type=int, default=None, help="runs (seeds) per Table 4 cell (full 5)")
    ap.add_argument("--table4-first-run", type=int, default=0,
                    help="first run index of the Table 4 part (to add runs to an earlier output; seeds are seed + run)")
    ap.add_argument("--table4-cells", default=None,
                    help="comma-separated row@cap cells, e.g. tres-svm@10,tres-nh@10 (default: the paper's layout)")
    return ap


def preset_from_args(args: argparse.Namespace) -> Preset:
    """``--quick`` picks :data:`QUICK`, else :data:`FULL`; flags that were given override its fields."""
    given = {"synthetic": args.synthetic, "synthetic_domains": args.synthetic_domains,
             "synthetic_topics": _csv(args.synthetic_topics), "synthetic_steps": args.synthetic_steps,
             "synthetic_runs": args.synthetic_runs, "wiki_topics": _csv(args.wiki_topics),
             "wiki_steps": args.wiki_steps, "wiki_runs": args.wiki_runs, "caps": _csv(args.caps),
             "cost_sizes": tuple(int(float(x)) for x in _csv(args.cost_sizes) or ()) or None,
             "table4_corpora": _csv(args.table4_corpora), "table4_steps": args.table4_steps,
             "table4_runs": args.table4_runs, "table4_cells": _cells(args.table4_cells)}
    return dataclasses.replace(QUICK if args.quick else FULL, **{k: v for k, v in given.items() if v is not None})


# ============================================================================ main
def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    p = preset_from_args(args)
    import torch

    torch.set_num_threads(1)
    parts = set(x.strip() for x in args.parts.split(",") if x.strip())
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    config = {**{k: v for k, v in vars(args).items() if v is not None}, **dataclasses.asdict(p)}
    res: dict[str, Any] = {"config": config, "notes": []}
    for a in list(agents):
        why = _agent_available(a)
        if why:
            res["notes"].append(f"{a} skipped: {why}")
            agents.remove(a)
    settings = prepare_settings(p, args, res) if parts & {"classifier", "table", "fig4", "table4"} else []
    fig4_trace: list[list[float]] = []
    if "table" in parts or "fig4" in parts:
        res["runs"], fig4_trace = table_crawls(settings, p, agents, parts, args, res, out)
        res["table"] = _aggregate(res["runs"])
        for corpus in dict.fromkeys(r["corpus"] for r in res["table"]):
            plot_pareto(res["table"], corpus, out / f"tres_pareto_{corpus}.png")
    if "table4" in parts:
        res["table4_runs"] = table4_crawls(settings, p, args, res, out)
        res["table4"] = _aggregate(res["table4_runs"])
        for corpus in dict.fromkeys(r["corpus"] for r in res["table4"]):
            plot_table4(res["table4"], corpus, out / f"tres_table4_{corpus}.png")
    if fig4_trace:
        res["fig4"] = fig4_summary(fig4_trace)
        plot_fig4(fig4_trace, out / "tres_fig4.png")
    if "cost" in parts:
        res["cost"] = cost_part(p, args.seed)
        plot_cost(res["cost"], out / "tres_cost.png")
    write_json_report(out / "tres.json", res, "tres", args)
    (out / "tres.partial.json").unlink(missing_ok=True)
    md = markdown(res)
    atomic_write_bytes(out / "tres.md", (markdown_banner(args.quick) + md).encode("utf-8"))
    print(md)
    return 0


def prepare_settings(p: Preset, args: argparse.Namespace, res: dict[str, Any]) -> list[Setting]:
    """Per corpus and topic: the classifier (Table 1), the expanded keywords (Table 2), the feature set."""
    from tqdm.auto import tqdm

    from gym_crawl.corpus import load_corpus
    from gym_crawl.relevance.classifier import heldout_view
    from gym_crawl.text.model import TextModel, get_text_model

    clf_kw: dict[str, Any] = {"seed": args.seed, **dict(p.classifier)}
    settings: list[Setting] = []
    frac = float(args.clf_fraction)
    if p.synthetic.lower() != "none":
        sc0 = load_corpus(p.synthetic, n_domains=p.synthetic_domains)
        stext0 = get_text_model(sc0)
        sc = heldout_view(sc0, frac)
        stext = TextModel(sc, stext0.idf, stext0.vectors, dict(stext0.meta))
        for t in tqdm(p.synthetic_topics, desc="synthetic: classifiers", disable=None):
            settings.append(_prepare("synthetic", sc, stext, t, p.synthetic_steps, p.synthetic_runs, clf_kw, res,
                                     svm=True))
    wpath = Path(args.wikispeedia)
    if args.wikispeedia.lower() != "none" and wpath.exists():
        wc0 = load_corpus(str(wpath))
        wtext0 = get_text_model(wc0)
        wc = heldout_view(url_hash_domains(wc0, args.pages_per_domain), frac)
        wtext = TextModel(wc, wtext0.idf, wtext0.vectors, dict(wtext0.meta))
        for t in tqdm(p.wiki_topics, desc="wikispeedia: classifiers", disable=None):
            settings.append(_prepare("wikispeedia", wc, wtext, t, p.wiki_steps, p.wiki_runs, clf_kw, res, svm=True))
        res["notes"].append(wc.meta["domain_definition"])
    elif args.wikispeedia.lower() != "none":
        res["notes"].append(f"Wikispeedia not found at {wpath}: its part of the table is skipped")
    if settings:
        sp_ = settings[0].corpus.meta["classifier_split"]
        res["notes"].append(f"Held-out classifier split: {100 * frac:.0f} % of each corpus' pages (URL hash, "
                            f"salt {sp_['salt']!r}) train the classifiers; crawls count evaluation pages only "
                            f"(relevant pages in the corpus = evaluation pages)")
    return settings


def table_crawls(settings: list[Setting], p: Preset, agents: list[str], parts: set[str], args: argparse.Namespace,
                 res: dict[str, Any], out: Path) -> tuple[list[dict[str, Any]], list[list[float]]]:
    """Every setting × cap × agent × run (only TRES at b=∞ for ``fig4`` alone); returns the rows and the
    per-step trace of the first synthetic TRES b=∞ crawl (Figure 4). Partial results are saved as they come."""
    from tqdm.auto import tqdm

    jobs = [(s, cap, a, r) for s in settings for cap in (p.caps if "table" in parts else ("inf",))
            for a in (agents if "table" in parts else ["tres"]) if a in agents for r in range(s.runs)]
    rows: list[dict[str, Any]] = []
    fig4_trace: list[list[float]] = []
    for s, cap, a, r in tqdm(jobs, desc="crawls", disable=None):
        trace_here = ("fig4" in parts and not fig4_trace and s.corpus_label == "synthetic" and a == "tres"
                      and cap == "inf" and r == 0)
        row, trace = run_one(s, a, cap, r, args.seed, args.k, trace_every=max(1, s.steps // 200) if trace_here else 0)
        rows.append(row)
        if trace_here:
            fig4_trace = trace
        atomic_write_json(out / "tres.partial.json", {"runs": rows, "classifier": res.get("classifier", []),
                                                      "keywords": res.get("keywords", [])})
    return rows, fig4_trace


def table4_crawls(settings: list[Setting], p: Preset, args: argparse.Namespace, res: dict[str, Any],
                  out: Path) -> list[dict[str, Any]]:
    """Every Table 4 cell × setting (``p.table4_corpora``, budget ``p.table4_steps``) × run; runs are the
    outer loop, so a cut-short run still has every cell with the same number of seeds. Partial
    results are saved as they come (``tres.partial.json``)."""
    from tqdm.auto import tqdm

    t4 = [dataclasses.replace(s, steps=p.table4_steps, runs=p.table4_runs) for s in settings
          if s.corpus_label in p.table4_corpora]
    cells = []
    for row, cap in p.table4_cells:
        why = _agent_available(row)
        if why:
            res["notes"].append(f"Table 4 {row}@{cap} skipped: {why}")
        else:
            cells.append((row, cap))
    first = int(getattr(args, "table4_first_run", 0) or 0)
    jobs = [(s, row, cap, r) for r in range(first, p.table4_runs) for s in t4 for row, cap in cells]
    rows: list[dict[str, Any]] = []
    for s, row, cap, r in tqdm(jobs, desc="table 4 crawls", disable=None):
        out_row, _ = run_one(s, row, cap, r, args.seed, args.k)
        rows.append(out_row)
        atomic_write_json(out / "tres.partial.json", {"table4_runs": rows, "runs": res.get("runs", []),
                                                      "classifier": res.get("classifier", [])})
    return rows


def fig4_summary(trace: list[list[float]]) -> dict[str, Any]:
    a = np.asarray(trace, float)
    last = a[-1]
    return {"trace": trace, "step": int(last[0]), "frontier": int(last[1]), "leaves": int(last[2]),
            "nonempty_leaves": int(last[3]), "ratio": float(last[1] / max(1.0, last[3])),
            "mean_ratio": float(np.mean(a[:, 1] / np.maximum(1.0, a[:, 3])))}


def cost_part(p: Preset, seed: int) -> list[dict[str, Any]]:
    from tqdm.auto import tqdm

    bar = tqdm(total=len(p.cost_sizes), desc="decision cost", disable=None)
    cost = decision_cost(list(p.cost_sizes), experience=p.cost_experience, steps=p.cost_steps, seed=seed,
                         progress=lambda m: bar.update(1))
    bar.close()
    return cost


if __name__ == "__main__":
    raise SystemExit(main())
