"""Hindsight ceilings of the fair feature sets: ``gym-crawl bench ceiling [--quick]``.

A diagnostic, not a crawler: how far could a *linear ranker of a feature set* go on a task if it knew that
task's own answers? Per test task of a task set:

1. **Rows.** Crawls of the task — best-first (``best-first-page``), the greedy ``oracle`` and ``random`` (the
   first ``--fit-seeds`` seeds) — record every frontier feature row the crawl produces (the rows of
   ``frontier_changes().updated`` after reset and after each step, as the online classifier reads them) with the
   page's hidden relevance (``hidden_relevance()``) and best-first's link score.
2. **Hindsight fit.** scikit-learn's ``LogisticRegression`` (class-balanced, L2 with ``C``) on those rows and
   labels: the topic's own answers, which no learner has before its crawl.
3. **Hindsight crawl.** A greedy crawl by ``w · x`` over the whole frontier with the fitted weights. With
   ``--rounds R`` its rows are recorded, the fit repeated on all rows so far (the ranker's own states added) and
   the task's result is the best of the R crawls. A weight vector that reaches it exists, so it is a *lower
   bound* on what a linear ranker of these features can reach on the task. Fit and crawl use no randomness:
   one result per task, like best-first's.
4. **Variants.** ``features`` (the feature set's rows only) and ``+parent truth`` (three more columns from the
   true relevance of the page's fetched discovering parents: any relevant parent, the relevant fraction of its
   parents, log(1 + relevant parents)); and **labels of a fraction F of the pages** (``--label-fractions``,
   default 0.5): the fit sees only the rows of the pages with :func:`page_unit` < F, and every crawl is scored
   on the relevant pages of the *rest* it fetches, normalized by random's and the oracle's counts of the rest —
   what labels of some of a topic's pages teach a ranker about finding its others.

Reported per set and variant: the normalized score ``(found − random) / (oracle − random)`` (random: the mean
of ``--seeds`` random crawls, oracle: its crawl), IQM over the test tasks with a bootstrap 95 % CI over tasks;
the ROC AUC of the fitted ranker on its training rows (how well these features separate relevant from irrelevant
frontier rows at best, linearly); the *held-out-page* AUC (fit on the rows of half the pages, a fixed hash of
the page id, scored on the other half's: what labels of some of the topic's pages teach about its others); and
the AUC of best-first's link score on the same rows. ``--compare AGENT`` also runs learners by ``gym-crawl
eval``'s protocol (trained on the set's train tasks, ``--seeds`` seeds) and scores them against the same random
and oracle.

Every agent here reads hidden relevance (``uses_hidden_information``): none is registered as a crawler and none
belongs in a leaderboard of learners. Output (``--out``, default ``benchmarks/results/ceiling``):
``ceiling.json`` (every crawl and fit) and ``ceiling.png`` (IQM ± CI per set and variant), rewritten after
each set.
"""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from gym_crawl._console import ArgumentParser
from gym_crawl.agents.base import Agent, Transition
from gym_crawl.agents.baselines import BestFirstPageAgent, GreedyOracleAgent, RandomAgent
from gym_crawl.agents.hashed.online_classifier import FrontierRows, feature_rows
from gym_crawl.benchmarks.report import write_json_report

__all__ = ["HindsightRanker", "ParentTruth", "RowRecorder", "Rows", "ceiling_task", "fit_ranker", "main", "roc_auc",
           "run_ceiling"]

#: feature sets measured by default: the best learner's (``hashed-site``) and the dense cross-topic one
DEFAULT_FEATURES = ("hashed-site", "transferable")
VARIANTS = ("features", "+parent truth")
PARENT_COLUMNS = ("parent.any_relevant", "parent.relevant_fraction", "parent.log_relevant")


class ParentTruth:
    """Per page: how many fetched pages link to it and how many of those are truly relevant (hidden labels of
    fetched pages, which a ``labels`` reward reveals as it fetches them)."""

    def __init__(self, view: Any, truth: np.ndarray):
        self.view = view
        self.truth = np.asarray(truth, bool)
        self.n_par = np.zeros(len(self.truth), np.float64)
        self.n_rel = np.zeros(len(self.truth), np.float64)
        for p in np.asarray(view.fetched_pages(), np.int64):
            self.add(int(p))

    def add(self, page: int) -> None:
        """Count the out-links of the fetched ``page``."""
        if page < 0:
            return
        out = np.unique(np.asarray(self.view.fetched_outlinks(page), np.int64))
        self.n_par[out] += 1.0
        if self.truth[page]:
            self.n_rel[out] += 1.0

    def columns(self, pages: np.ndarray) -> np.ndarray:
        """(len(pages), 3) float64: :data:`PARENT_COLUMNS` of ``pages``."""
        pages = np.asarray(pages, np.int64)
        r, n = self.n_rel[pages], self.n_par[pages]
        return np.column_stack([(r > 0).astype(np.float64), r / np.maximum(n, 1.0), np.log1p(r)])


@dataclasses.dataclass
class Rows:
    """Recorded frontier rows: features ``X`` (CSR), hidden relevance ``y``, best-first's link score ``link``,
    the parent-truth columns ``parent`` and the page of each row."""

    X: sp.csr_matrix
    y: np.ndarray
    link: np.ndarray
    parent: np.ndarray
    page: np.ndarray

    @staticmethod
    def concat(parts: list[Rows]) -> Rows:
        return Rows(sp.vstack([p.X for p in parts], format="csr"), np.concatenate([p.y for p in parts]),
                    np.concatenate([p.link for p in parts]), np.vstack([p.parent for p in parts]),
                    np.concatenate([p.page for p in parts]))


class RowRecorder(Agent):
    """Runs ``inner`` (a page agent) unchanged and records every frontier row its crawl produces (see
    :class:`Rows`). Reads hidden relevance to label the rows."""

    name = "row-recorder"
    action_kind = "page"
    needs_observation = False
    uses_hidden_information = True

    def __init__(self, inner: Agent):
        super().__init__()
        if inner.action_kind != "page":
            raise ValueError(f"RowRecorder: {inner.name!r} acts by {inner.action_kind!r}; it needs a page agent")
        self.inner = inner
        self.parts: list[tuple[sp.csr_matrix, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def begin_episode(self, env: Any, rng: np.random.Generator) -> None:
        super().begin_episode(env, rng)
        self.inner.begin_episode(env, rng)
        self.truth = np.asarray(env.hidden_relevance(), bool)
        self.parents = ParentTruth(env, self.truth)
        self.parts = []
        self._record(env.frontier_changes().updated)

    def _record(self, pages: np.ndarray) -> None:
        pages = np.asarray(pages, np.int64)
        if len(pages):
            pages = pages[np.asarray(self.env.is_frontier(pages), bool)]
        if len(pages) == 0:
            return
        self.parts.append((feature_rows(self.env, pages), self.truth[pages], self.env.link_scores(pages),
                           self.parents.columns(pages), pages.copy()))

    def act(self, obs: Any, info: dict) -> int:
        return self.inner.act(obs, info)

    def observe(self, transition: Transition) -> None:
        self.inner.observe(transition)
        self.parents.add(int(transition.info["fetched_page"]))
        self._record(self.env.frontier_changes().updated)

    def rows(self) -> Rows:
        """The rows of the last episode."""
        if not self.parts:
            raise ValueError("RowRecorder: no rows recorded (run an episode first)")
        X, y, link, par, page = zip(*self.parts)
        return Rows(sp.vstack(X, format="csr"), np.concatenate(y), np.concatenate(link), np.vstack(par),
                    np.concatenate(page))


class HindsightRanker(Agent):
    """Greedy crawl by fixed weights: fetch the frontier page with the highest ``w · x + b`` (plus
    ``w_parent`` · the parent-truth columns when given); ties: the earliest in ``frontier_pages()`` order.
    A diagnostic: its weights are fitted on the task's own hidden labels."""

    name = "hindsight"
    action_kind = "page"
    needs_observation = False
    uses_hidden_information = True

    def __init__(self, w: np.ndarray, b: float = 0.0, w_parent: np.ndarray | None = None):
        super().__init__()
        self.w = np.asarray(w, np.float64)
        self.b = float(b)
        self.w_parent = None if w_parent is None else np.asarray(w_parent, np.float64)
        self.frontier = FrontierRows()

    def begin_episode(self, env: Any, rng: np.random.Generator) -> None:
        super().begin_episode(env, rng)
        if int(env.feature_dim) != len(self.w):
            raise ValueError(f"hindsight: {len(self.w)} weights but the env's feature set {env.feature_set_name!r} "
                             f"has {env.feature_dim} columns")
        self.parents = ParentTruth(env, env.hidden_relevance()) if self.w_parent is not None else None
        self.frontier.reset(int(env.n_pages))
        self._ingest(env.frontier_changes().updated)

    def _ingest(self, pages: np.ndarray) -> None:
        pages = np.asarray(pages, np.int64)
        if len(pages):
            pages = pages[np.asarray(self.env.is_frontier(pages), bool)]
        if len(pages):
            self.frontier.add(pages, feature_rows(self.env, pages))

    def act(self, obs: Any, info: dict) -> int:
        F = np.asarray(self.env.frontier_pages(), np.int64)
        sc = self.frontier.scores(F, self.w, self.b)
        if self.parents is not None:
            sc = sc + self.parents.columns(F) @ self.w_parent
        return int(F[int(np.argmax(sc))])

    def observe(self, transition: Transition) -> None:
        if self.parents is not None:
            self.parents.add(int(transition.info["fetched_page"]))
        self._ingest(self.env.frontier_changes().updated)
        if self.frontier.n_rows > 256:
            self.frontier.compact(self.env.frontier_pages())


def roc_auc(y: np.ndarray, score: np.ndarray) -> float | None:
    """ROC AUC of ``score`` for the bool labels ``y`` (ties count half); ``None`` with one class only."""
    from sklearn.metrics import roc_auc_score

    y = np.asarray(y, bool)
    if y.all() or not y.any():
        return None
    return float(roc_auc_score(y, np.asarray(score, np.float64)))


def fit_ranker(rows: Rows, *, parent: bool,
               C: float = 1.0) -> tuple[np.ndarray, float, np.ndarray | None, float | None]:
    """Class-balanced L2 logistic regression of ``rows.y`` on ``rows.X`` (⊕ the parent-truth columns when
    ``parent``): ``(w, b, w_parent or None, AUC on the rows)``. With one class only the weights are zero."""
    from sklearn.linear_model import LogisticRegression

    X = rows.X if not parent else sp.hstack([rows.X, sp.csr_matrix(rows.parent)], format="csr")
    d = rows.X.shape[1]
    if rows.y.all() or not rows.y.any():
        return np.zeros(d), 0.0, (np.zeros(len(PARENT_COLUMNS)) if parent else None), None
    m = LogisticRegression(C=C, class_weight="balanced", solver="liblinear", max_iter=500, random_state=0)
    m.fit(X, rows.y)
    coef = m.coef_.ravel().astype(np.float64)
    auc = roc_auc(rows.y, np.asarray(X @ coef).ravel())
    return coef[:d].copy(), float(m.intercept_[0]), (coef[d:].copy() if parent else None), auc


def page_unit(pages: np.ndarray) -> np.ndarray:
    """(len(pages),) float64 in [0, 1): a fixed hash of the page id; the pages below ``f`` are a fraction ``f`` of
    the pages (those below 0.5 are :func:`page_fold` 0)."""
    h = np.asarray(pages, np.int64).astype(np.uint64) * np.uint64(0x9E3779B1)
    return ((h >> np.uint64(7)) & np.uint64(1)).astype(np.float64) * 0.5 + \
        ((h >> np.uint64(8)) & np.uint64(0xFFFFF)).astype(np.float64) / 2.0 ** 21


def page_fold(pages: np.ndarray) -> np.ndarray:
    """(len(pages),) int 0/1: a fixed hash of the page id that splits a topic's pages in two halves."""
    return (page_unit(pages) >= 0.5).astype(np.int64)


def _select(rows: Rows, sel: np.ndarray) -> Rows:
    return Rows(rows.X[sel], rows.y[sel], rows.link[sel], rows.parent[sel], rows.page[sel])


def heldout_auc(rows: Rows, *, parent: bool, C: float = 1.0) -> float | None:
    """Mean ROC AUC over two folds of the *pages* (a fixed hash of the page id): fit on the rows of one fold's
    pages, score the other's — how well a ranker fitted on some of the topic's labelled pages ranks its other
    pages (a page's rows never sit on both sides). ``None`` when a fold lacks a class."""
    fold = page_fold(rows.page)
    aucs = []
    for k in (0, 1):
        te = fold == k
        part = _select(rows, fold != k)
        w, b, wp, _ = fit_ranker(part, parent=parent, C=C)
        sc = np.asarray(rows.X[te] @ w).ravel() + b
        if wp is not None:
            sc = sc + rows.parent[te] @ wp
        a = roc_auc(rows.y[te], sc)
        if a is None:
            return None
        aucs.append(a)
    return float(np.mean(aucs))


def _crawl(env: Any, agent: Agent, task: Any, topic: Any, seed: int, scored: dict[str, dict[str, int]] | None = None,
           key: str = "") -> int:
    """Relevant pages the crawl found; with ``scored`` (``{fraction: counts}``), also ``counts[key]`` = the
    relevant pages it fetched among the pages *not* labelled at that fraction (:func:`page_unit` >= fraction)."""
    from gym_crawl.agents import run_episode

    r = run_episode(env, agent, seed=seed, options={"topic": topic, "seeds": list(task.seeds)})
    if scored:
        truth = env.unwrapped.view.hidden_relevance()
        fetched = np.asarray(r.fetched, np.int64)
        rel = fetched[truth[fetched]]
        for f, counts in scored.items():
            counts[key] = int((page_unit(rel) >= float(f)).sum())
    return int(r.relevant_found)


def ceiling_task(corpus: Any, task: Any, *, features: str, seeds: list[int], rounds: int = 1, C: float = 1.0,
                 variants: tuple[str, ...] = VARIANTS, fit_seeds: int = 1,
                 label_fractions: tuple[float, ...] = (0.5,)) -> dict[str, Any]:
    """The ceiling measurements of one task with one feature set (see the module docstring):
    ``{"task", "features", "oracle", "best_first", "random": {seed: found}, "hindsight": {variant: [found per
    round]}, "auc": {variant: AUC}, "heldout_auc": {"features": AUC}, "link_auc": AUC, "rows": n}``.

    The rows are those of the best-first and oracle crawls and of the random crawls of the first ``fit_seeds``
    seeds; the other seeds' random crawls only count pages (the normalization's random baseline). The fit and the
    hindsight crawl use no randomness: their result is the task's, for every seed."""
    from gym_crawl.agents import make_env_for
    from gym_crawl.tasks import topic_of

    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise ValueError(f"unknown variant(s) {unknown}; known: {list(VARIANTS)}")
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    topic = topic_of(corpus, task)
    env = make_env_for(RowRecorder(RandomAgent()), corpus=corpus, reward="labels", topic=topic,
                       max_episode_steps=task.budget, features=features)
    out: dict[str, Any] = {"task": task.name, "label": task.label, "features": features, "budget": task.budget,
                           "random": {}, "hindsight": {}, "auc": {}, "heldout_auc": {}}
    for f in label_fractions:
        if not 0.0 < f < 1.0:
            raise ValueError(f"label fractions must be in (0, 1), got {f}")
    half: dict[str, dict[str, int]] = {f"{f:g}": {} for f in label_fractions}
    parts = []
    for key, inner in (("best_first", BestFirstPageAgent()), ("oracle", GreedyOracleAgent())):
        rec = RowRecorder(inner)
        out[key] = _crawl(env, rec, task, topic, 0, half, key)
        parts.append(rec.rows())
    for i, s in enumerate(seeds):
        if i < fit_seeds:
            rec = RowRecorder(RandomAgent())
            out["random"][s] = _crawl(env, rec, task, topic, s, half, f"random{s}")
            parts.append(rec.rows())
        else:
            out["random"][s] = _crawl(env, RandomAgent(), task, topic, s, half, f"random{s}")
    data = Rows.concat(parts)
    out["link_auc"] = roc_auc(data.y, data.link)
    out["rows"] = int(len(data.y))
    out["positives"] = int(data.y.sum())
    for v in variants:
        rows, found = data, []
        for r in range(rounds):
            w, b, wp, auc = fit_ranker(rows, parent=v == "+parent truth", C=C)
            if r == 0:
                out["auc"][v] = auc
                if v == "features":
                    out["heldout_auc"][v] = heldout_auc(rows, parent=False, C=C)
            ranker = HindsightRanker(w, b, wp)
            if r == rounds - 1:  # the last crawl's rows feed no fit
                found.append(_crawl(env, ranker, task, topic, 0))
                continue
            rec = RowRecorder(ranker)
            found.append(_crawl(env, rec, task, topic, 0))
            rows = Rows.concat([rows, rec.rows()])
        out["hindsight"][v] = found
    # labels of a fraction of the pages only; each crawl is scored on the relevant pages of the rest it fetched
    unit = page_unit(data.page)
    for f, counts in half.items():
        part = _select(data, unit < float(f))
        counts["labelled_rows"], counts["labelled_relevant_pages"] = len(part.y), len(np.unique(part.page[part.y]))
        w, b, _, _ = fit_ranker(part, parent=False, C=C)
        _crawl(env, HindsightRanker(w, b), task, topic, 0, {f: counts}, "hindsight")
    out["labels"] = half
    env.close()
    return out


def _kept(results: list[dict[str, Any]], seeds: list[int]) -> list[tuple[dict[str, Any], float, float]]:
    """(task result, random mean, oracle) of the tasks where the oracle finds more than random."""
    out = []
    for t in results:
        rnd = float(np.mean([t["random"][s] for s in seeds]))
        if t["oracle"] > rnd:
            out.append((t, rnd, float(t["oracle"])))
    return out


def _med_iqr_of(xs: list[float | None]) -> tuple[float | None, list[float] | None]:
    v = [x for x in xs if x is not None]
    if not v:
        return None, None
    return float(np.median(v)), [float(x) for x in np.percentile(v, [25, 75])]


def _summary(results: list[dict[str, Any]], seeds: list[int], reps: int) -> dict[str, Any]:
    """IQM over the test tasks with a bootstrap 95 % CI over tasks (the hindsight crawl and best-first are one
    crawl per task), AUC medians and IQRs over tasks."""
    from gym_crawl.benchmarks.suite import iqm_ci

    kept = _kept(results, seeds)
    out: dict[str, Any] = {"n_tasks": len(kept),
                           "dropped": [t["task"] for t in results if all(t is not k[0] for k in kept)]}
    if not kept:
        return out

    def norm(found: list[float]) -> np.ndarray:
        return np.array([(f - r) / (o - r) for f, (_, r, o) in zip(found, kept)], np.float64)

    def agg(x: np.ndarray) -> dict[str, Any]:
        iqm, lo, hi = iqm_ci(x[:, None], reps=reps)  # tasks resampled with replacement
        return {"iqm": iqm, "ci": [lo, hi], "mean": float(x.mean())}

    out["best_first"] = agg(norm([t["best_first"] for t, _, _ in kept]))
    out["variants"] = {}
    for v in results[0]["hindsight"]:
        best = norm([max(t["hindsight"][v]) for t, _, _ in kept])
        first = norm([t["hindsight"][v][0] for t, _, _ in kept])
        med, iqr = _med_iqr_of([t["auc"][v] for t, _, _ in kept])
        hmed, hiqr = _med_iqr_of([t["heldout_auc"].get(v) for t, _, _ in kept])
        out["variants"][v] = {**agg(best), "first_round_iqm": agg(first)["iqm"],
                              "per_task": [float(x) for x in best],
                              "tasks_at_or_above_0.75": int((best >= 0.75).sum()),
                              "auc_median": med, "auc_iqr": iqr, "heldout_auc_median": hmed,
                              "heldout_auc_iqr": hiqr}
    out["link_auc_median"], out["link_auc_iqr"] = _med_iqr_of([t["link_auc"] for t, _, _ in kept])
    out["labels"] = {}
    for f in results[0].get("labels", {}):
        hs, n_rel = [], []
        for t, _, _ in kept:
            h = t["labels"][f]
            r1 = float(np.mean([h[f"random{s}"] for s in seeds]))
            if h["oracle"] > r1:
                hs.append([(h["hindsight"] - r1) / (h["oracle"] - r1), (h["best_first"] - r1) / (h["oracle"] - r1)])
                n_rel.append(h["labelled_relevant_pages"])
        if hs:
            x = np.array(hs)
            out["labels"][f] = {**agg(x[:, 0]), "n_tasks": len(hs), "best_first_iqm": agg(x[:, 1])["iqm"],
                                "per_task": [float(v) for v in x[:, 0]],
                                "labelled_relevant_pages_median": float(np.median(n_rel))}
    return out


def _compare(set_name: str, agents: list[str], results: list[dict[str, Any]], seeds: list[int], *,
             max_tasks: int | None, budget: int | None, wikispeedia: str | None, config: dict[str, dict[str, Any]],
             reps: int) -> dict[str, Any]:
    """Learners run by ``gym-crawl eval``'s protocol, scored against this run's random and oracle."""
    from gym_crawl.benchmarks.evaluate import evaluate
    from gym_crawl.benchmarks.suite import iqm_ci

    res = evaluate(set_name, agents, seeds=len(seeds), budget=budget, max_tasks=max_tasks, wikispeedia=wikispeedia,
                   config=config, progress=False, reps=reps)
    ref = {t["task"]: t for t in results}
    out: dict[str, Any] = {}
    for a in agents:
        cols = []
        for name, t in ref.items():
            rnd = float(np.mean([t["random"][s] for s in seeds]))
            if not t["oracle"] > rnd:
                continue
            found = {r["seed"]: r["found"] for r in res["runs"] if r["agent"] == a and r["task"] == name}
            cols.append([(found[s] - rnd) / (t["oracle"] - rnd) for s in seeds])
        m = np.array(cols, np.float64).T
        iqm, lo, hi = iqm_ci(m, reps=reps)
        out[a] = {"iqm": iqm, "ci": [lo, hi], "mean": float(m.mean()), "eval_iqm": res["agents"][a]["iqm"]}
    return out


def run_ceiling(set_names: list[str], *, seeds: int = 5, features: tuple[str, ...] = DEFAULT_FEATURES,
                max_tasks: dict[str, int | None] | None = None, budget: int | None = None, rounds: int = 1,
                fit_seeds: int = 1, C: float = 1.0, variants: tuple[str, ...] = VARIANTS,
                label_fractions: tuple[float, ...] = (0.5,), compare: tuple[str, ...] = (),
                compare_features: str | None = "hashed-site",
                wikispeedia: str | None = None, reps: int = 2000, progress: bool = True) -> dict[str, Any]:
    """Run :func:`ceiling_task` on the test tasks of every set for every feature set and summarize
    (``{"sets": {set: {"features": {fs: summary}, "tasks": [...], "compare": {...}}}}``)."""
    from gym_crawl.benchmarks import suite

    seed_list = list(range(seeds))
    out: dict[str, Any] = {"seeds": seeds, "rounds": rounds, "fit_seeds": fit_seeds, "C": C,
                           "variants": list(variants), "label_fractions": list(label_fractions),
                           "features": list(features), "sets": {}}
    for name in set_names:
        mt = (max_tasks or {}).get(name)
        sets, corpora = suite.build_task_sets([name], wikispeedia=wikispeedia or str(suite.DEFAULT_WIKISPEEDIA),
                                              max_tasks=mt, quick_budget=budget)
        ts = sets[0]
        if not ts.tasks:
            out["sets"][name] = {"note": ts.note}
            if progress:
                print(f"{name}: {ts.note}", flush=True)
            continue
        corpus = corpora[ts.corpus_spec]
        test = [t for t in ts.tasks if t.split == "test"]
        t0 = time.perf_counter()
        entry: dict[str, Any] = {"corpus": ts.corpus_spec, "max_tasks": mt, "n_test_tasks": len(test),
                                 "features": {}, "tasks": {}}
        for fs in features:
            results = []
            for i, t in enumerate(test):
                results.append(ceiling_task(corpus, t, features=fs, seeds=seed_list, rounds=rounds, C=C,
                                            fit_seeds=fit_seeds, variants=variants,
                                            label_fractions=label_fractions))
                if progress:
                    r = results[-1]
                    print(f"{name} {fs} [{i + 1}/{len(test)}] {t.label}: oracle {r['oracle']} best-first "
                          f"{r['best_first']} random {np.mean(list(r['random'].values())):.1f} hindsight "
                          + " ".join(f"{v} {max(r['hindsight'][v])}" for v in r["hindsight"])
                          + f" AUC {r['auc'].get('features')} held-out {r['heldout_auc'].get('features')} link "
                            f"{r['link_auc']} labels {r['labels']}", flush=True)
            entry["tasks"][fs] = results
            entry["features"][fs] = _summary(results, seed_list, reps)
        if compare:
            cfg = {a: {"features": compare_features} for a in compare} if compare_features else {}
            entry["compare"] = _compare(name, list(compare), entry["tasks"][features[0]], seed_list, max_tasks=mt,
                                        budget=budget, wikispeedia=wikispeedia, config=cfg, reps=reps)
            entry["compare_features"] = compare_features
        entry["seconds"] = round(time.perf_counter() - t0, 1)
        out["sets"][name] = entry
    return out


def _med_iqr(med: float | None, iqr: list[float] | None) -> str:
    return "—" if med is None or iqr is None else f"{med:.3f} [{iqr[0]:.3f}, {iqr[1]:.3f}]"


def format_table(res: dict[str, Any]) -> str:
    """One Markdown row per set, feature set and variant (plus the compared learners)."""
    lines = ["| set (test tasks) | ranker | features | normalized IQM [95 % CI] | first fit | tasks ≥ 0.75 | "
             "AUC of the fit, median [IQR] | held-out-page AUC | best-first link-score AUC | best-first |",
             "|---|---|---|---|---:|---:|---|---|---|---:|"]
    for name, e in res["sets"].items():
        if "features" not in e:
            continue
        for fs, s in e["features"].items():
            if "variants" not in s:
                continue
            la = _med_iqr(s["link_auc_median"], s["link_auc_iqr"])
            for v, d in s["variants"].items():
                auc, ho = (_med_iqr(d["auc_median"], d["auc_iqr"]),
                           _med_iqr(d["heldout_auc_median"], d["heldout_auc_iqr"]))
                lines.append(f"| {name} ({s['n_tasks']}) | hindsight {v} | {fs} | {d['iqm']:.3f} [{d['ci'][0]:.3f}, "
                             f"{d['ci'][1]:.3f}] | {d['first_round_iqm']:.3f} | {d['tasks_at_or_above_0.75']} | "
                             f"{auc} | {ho} | {la} | {s['best_first']['iqm']:.3f} |")
            for f, h in s.get("labels", {}).items():
                lines.append(f"| {name} ({h['n_tasks']}) | hindsight, labels of {f} of the pages (median "
                             f"{h['labelled_relevant_pages_median']:.0f} relevant; scored on the rest) | {fs} | "
                             f"{h['iqm']:.3f} [{h['ci'][0]:.3f}, {h['ci'][1]:.3f}] | | "
                             f"{sum(x >= 0.75 for x in h['per_task'])} | | | | {h['best_first_iqm']:.3f} |")
        for a, d in e.get("compare", {}).items():
            lines.append(f"| {name} | {a} (learner) | {e.get('compare_features') or 'default'} | {d['iqm']:.3f} "
                         f"[{d['ci'][0]:.3f}, {d['ci'][1]:.3f}] | | | | | | |")
    return "\n".join(lines) + "\n"


def plot(res: dict[str, Any], path: str | Path) -> Path:
    """IQM ± 95 % CI of every hindsight variant (and compared learner) per set, with best-first and 0.75 marked."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from gym_crawl.benchmarks.plotting import save_png

    sets = [(n, e) for n, e in res["sets"].items() if e.get("features")]
    n_rows = max([sum(len(s.get("variants", {})) + len(s.get("labels", {})) for s in e["features"].values())
                  + len(e.get("compare", {})) for _, e in sets] or [1])
    fig, axes = plt.subplots(1, max(1, len(sets)), figsize=(5.0 * max(1, len(sets)), 0.35 * n_rows + 1.6),
                             squeeze=False,
                             layout="constrained")
    for ax, (name, e) in zip(axes[0], sets):
        items: list[tuple[str, float, float, float]] = []
        bf = None
        for fs, s in e["features"].items():
            for v, d in s.get("variants", {}).items():
                items.append((f"{fs} {v}", d["iqm"], d["ci"][0], d["ci"][1]))
            for f, d in s.get("labels", {}).items():
                items.append((f"{fs}, labels of {f} (rest)", d["iqm"], d["ci"][0], d["ci"][1]))
            bf = s.get("best_first", {}).get("iqm", bf)
        for a, d in e.get("compare", {}).items():
            items.append((f"{a} (learner)", d["iqm"], d["ci"][0], d["ci"][1]))
        for i, (lab, m, lo, hi) in enumerate(items):
            ax.errorbar(m, i, xerr=[[max(0.0, m - lo)], [max(0.0, hi - m)]], fmt="o", capsize=3,
                        color="#7f7f7f" if "learner" in lab else "#1f77b4")
        ax.set_yticks(np.arange(len(items)), [x[0] for x in items])
        if bf is not None:
            ax.axvline(bf, color="#d62728", lw=1, label=f"best-first {bf:.2f}")
        ax.axvline(0.75, color="black", lw=0.8, ls=":", label="0.75")
        ax.set_xlim(min(-0.05, *(x[2] for x in items)) if items else -0.05, 1.05)
        ax.set_xlabel("IQM normalized score, test tasks")
        ax.set_title(f"{name}: hindsight rankers")
        ax.legend(fontsize=7, loc="lower left")
    return save_png(fig, path)


def _max_tasks_arg(items: list[str]) -> dict[str, int | None]:
    """``["40", "hard=40"]`` → ``{"*": 40, "hard": 40}``."""
    out: dict[str, int | None] = {}
    for it in items:
        k, _, v = it.rpartition("=")
        try:
            n = int(v)
        except ValueError:
            raise ValueError(f"--max-tasks {it!r}: expected N or SET=N with an integer N") from None
        if n < 2:
            raise ValueError(f"--max-tasks {it!r}: N must be >= 2 (half train, half test)")
        out[k or "*"] = n
    return out


#: the task subsets of the learners' table (``gym-crawl eval --max-tasks 40`` on ws-100 and hard; docs-web-hard whole)
DEFAULT_MAX_TASKS = {"ws-100": 40, "hard": 40, "docs-web-hard": None}


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="gym-crawl bench ceiling", description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="+", default=None,
                    help="task sets (default: hard ws-100 docs-web-hard; --quick: hard)")
    ap.add_argument("--seeds", type=int, default=5, help="seeds of the random crawls (the normalization's baseline)")
    ap.add_argument("--fit-seeds", type=int, default=1, help="random crawls (of the first seeds) whose rows are fitted")
    ap.add_argument("--features", nargs="+", default=list(DEFAULT_FEATURES), help="feature sets to fit")
    ap.add_argument("--max-tasks", nargs="+", default=[], metavar="[SET=]N",
                    help="at most N tasks (half train, half test; the first in label order) per set; default: 40 "
                         "for ws-100 and hard (the learners' table), all for other sets")
    ap.add_argument("--budget", type=int, default=None, help="cap every task's page budget")
    ap.add_argument("--rounds", type=int, default=1, help="fits per task, each adding the last hindsight crawl's rows")
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS, help="hindsight variants")
    ap.add_argument("--label-fractions", nargs="*", type=float, default=[0.5], metavar="F",
                    help="fits on the labels of a fraction F of the pages, scored on the rest (none: skip)")
    ap.add_argument("--C", type=float, default=1.0, help="inverse L2 strength of the logistic regression")
    ap.add_argument("--compare", nargs="*", default=[], metavar="AGENT",
                    help="learners to run by `gym-crawl eval`'s protocol and score against the same random/oracle")
    ap.add_argument("--compare-features", default="hashed-site", help="the compared learners' feature set")
    ap.add_argument("--wikispeedia", default=None, help="labelled corpus of the ws-* sets (a Wikispeedia folder)")
    ap.add_argument("--out", default="benchmarks/results/ceiling", help="folder of ceiling.json and ceiling.png")
    ap.add_argument("--quick", action="store_true",
                    help="CI-sized run: the hard set, 4 tasks, 2 seeds, budget 30, one feature set, one round")
    a = ap.parse_args(argv)
    if a.seeds < 1:
        raise SystemExit(f"--seeds must be >= 1, got {a.seeds}")
    if a.budget is not None and a.budget < 1:
        raise SystemExit(f"--budget must be >= 1, got {a.budget}")
    if a.rounds < 1 or a.fit_seeds < 1 or a.fit_seeds > a.seeds:
        raise SystemExit(f"--rounds must be >= 1 and --fit-seeds in [1, --seeds], got {a.rounds} and {a.fit_seeds}")
    bad = [f for f in a.label_fractions if not 0.0 < f < 1.0]
    if bad:
        raise SystemExit(f"--label-fractions must be in (0, 1), got {bad}")
    try:
        mt_arg = _max_tasks_arg(a.max_tasks)
    except ValueError as e:
        raise SystemExit(str(e)) from None
    sets = a.sets or (["hard"] if a.quick else ["hard", "ws-100", "docs-web-hard"])
    seeds, features, budget, rounds = a.seeds, tuple(a.features), a.budget, a.rounds
    if a.quick:
        seeds, features, budget, rounds = min(seeds, 2), tuple(a.features[:1]), min(budget or 30, 30), 1
        mt_arg = {"*": 4, **{k: v for k, v in mt_arg.items() if k != "*"}}
    max_tasks = {s: mt_arg.get(s, mt_arg.get("*", DEFAULT_MAX_TASKS.get(s))) for s in sets}
    t0 = time.perf_counter()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    res: dict[str, Any] = {}
    for name in sets:  # one set after the other, the files rewritten after each (a long run keeps what it did)
        part = run_ceiling([name], seeds=seeds, features=features, max_tasks=max_tasks, budget=budget, rounds=rounds,
                           fit_seeds=a.fit_seeds, C=a.C, variants=tuple(a.variants),
                           label_fractions=tuple(a.label_fractions), compare=tuple(a.compare),
                           compare_features=a.compare_features or None,
                           wikispeedia=a.wikispeedia)
        res = {**part, "sets": {**res.get("sets", {}), **part["sets"]}}
        res["seconds"] = round(time.perf_counter() - t0, 1)
        res["table"] = format_table(res)
        write_json_report(out / "ceiling.json", res, "ceiling", a, quick=a.quick)
        plot(res, out / "ceiling.png")
    print(res["table"], end="")
    print(f"written: {out / 'ceiling.json'}, {out / 'ceiling.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
