"""The live judge's agreement with the labels of the docs-web test sites: topic words alone vs words + example pages.

``gym-crawl bench judge [--split test] [--draws 5] [--examples 3] [--counter-examples 3] [--quick] [--out DIR]``

Needs the ``docs-web`` corpus (``gym-crawl bench docs-web --install``) and the general English model's source
(``gym-crawl download wikispeedia``, or ``--from PATH``). A live crawl's judge (:mod:`gym_crawl.relevance.judge`) says
which fetched pages are relevant; here it is scored against the sites' own section labels, page by page:

* **tasks**: every section of the held-out (test) sites that is a ``docs-web`` task (topic: the section name's
  words, ``django.ref.contrib`` → "contrib") or a ``docs-web-hard`` task (topic: its cross-site genre word,
  ``django.releases`` → "changelog"), once each;
* **the training part**: each site's pages are split by the URL hash the package's classifier reward uses
  (:func:`~gym_crawl.relevance.classifier.classifier_train_mask`, 30 %); example pages are drawn from the
  section's pages in the training part, counter-examples from the site's other pages there; the judge is scored
  on every page **outside** the training part — of the task's own site (``site``: what a crawl scoped to the site
  meets), and of all the test sites (``all``: a crawl that strays to another site meets those too);
* **judges**: the topic words alone (``words``, the live default; deterministic), words + ``--examples`` example
  pages (``words + k examples``: the live ``--examples``, background negatives), and words + examples +
  ``--counter-examples`` counter-examples; the last two over ``--draws`` draws of the examples (draw ``d`` uses
  seed ``d``);
* **metrics** per task: ROC AUC of the judge's score, precision and recall of its verdict (relevant = score above
  its threshold: any topic word for ``words``, P > 0.5 for the example judges); a draw's figure is the mean over
  tasks, reported as mean ± sd over draws.

Writes ``judge.json``, ``judge.md`` and ``judge.png`` to ``--out`` (default ``benchmarks/results/judge``).
"""
from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_OUT = Path("benchmarks") / "results" / "judge"
METRICS = ("auc", "precision", "recall")


def agreement(y: np.ndarray, scores: np.ndarray, relevant: np.ndarray) -> dict[str, float]:
    """ROC AUC of ``scores`` and precision / recall of the verdict ``relevant`` against the labels ``y``."""
    from sklearn.metrics import roc_auc_score

    y = np.asarray(y, bool)
    rel = np.asarray(relevant, bool)
    tp = int((rel & y).sum())
    return {"auc": float(roc_auc_score(y, scores)) if 0 < y.sum() < len(y) else float("nan"),
            "precision": tp / int(rel.sum()) if rel.any() else 0.0, "recall": tp / int(y.sum()) if y.any() else 0.0}


def test_tasks(corpus: Any, split: str) -> list[tuple[str, tuple[str, ...], str]]:
    """``(label, topic words, task set)`` of the split's ``docs-web`` and ``docs-web-hard`` sections, once each."""
    from gym_crawl.relevance.topic import resolve_topic
    from gym_crawl.tasks.docs_web import docs_web_hard_tasks, docs_web_tasks

    seen: dict[tuple[str, tuple[str, ...]], str] = {}
    for t in docs_web_tasks(corpus):
        if t.split == split:
            seen.setdefault((t.label, tuple(resolve_topic(t.label, corpus).words)), "docs-web")
    for t in docs_web_hard_tasks(corpus):
        if t.split == split:
            seen.setdefault((t.label, tuple(t.words)), "docs-web-hard")
    return [(lab, words, ts) for (lab, words), ts in sorted(seen.items())]


def judge_cost(corpus: Any, space: Any, words: tuple[str, ...], examples: list[str], n: int = 300) -> dict[str, float]:
    """CPU milliseconds per page of each judge scoring ``n`` pages one at a time, as a live crawl asks it (the
    judge built from ``examples``; the pages' words already seen by the space)."""
    from gym_crawl.relevance.judge import WordsJudge, build_judge

    pages = np.random.default_rng(0).choice(corpus.n_pages, size=min(n, corpus.n_pages), replace=False)
    out = {}
    for name, judge in (("words", WordsJudge(words, space)), ("examples", build_judge(words, examples, space=space))):
        judge.proba_pages(corpus, pages)
        c0 = time.process_time()
        for p in pages:
            judge.proba_pages(corpus, np.array([p]))
        out[name] = round(1000 * (time.process_time() - c0) / len(pages), 3)
    return out


def _features(space: Any, corpus: Any, pages: np.ndarray) -> tuple[Any, ...]:
    """``(rows, n, rowpos, counts, tfidf, meaning)`` of ``pages``: their bags and features, computed once for every
    judge of the same space."""
    rows, counts, rowpos = space.page_bags(corpus, pages)
    return (rows, len(pages), rowpos, counts, *space.features(rows, counts, rowpos, len(pages)))


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -40.0, 40.0)))


def _mean_sd(values: list[float]) -> dict[str, float]:
    a = np.asarray(values, float)
    return {"mean": round(float(np.nanmean(a)), 4), "sd": round(float(np.nanstd(a, ddof=1)) if len(a) > 1 else 0.0, 4)}


def run(corpus: Any, split: str, draws: int, n_examples: int, n_counter: int, quick: bool,
        build: dict[str, Any] | None = None) -> dict[str, Any]:
    """Score the judges on the split's tasks (see the module docstring); the report's ``result``."""
    from gym_crawl.relevance.classifier import classifier_train_mask
    from gym_crawl.relevance.judge import JudgeText, WordsJudge, build_judge
    from gym_crawl.relevance.topic import resolve_topic
    from gym_crawl.tasks.docs_web import page_sites, site_label, split_of

    space = JudgeText.default(True)
    psite, names = page_sites(corpus)
    train = classifier_train_mask(corpus)
    tasks = test_tasks(corpus, split)
    if quick:
        tasks = tasks[:3]
    sites = [n for n in names if split_of(n) == split]
    in_split = np.isin(psite, [names.index(s) for s in sites])
    scopes = {"site": None, "all": np.flatnonzero(in_split & ~train)}
    every = _features(space, corpus, scopes["all"])
    judges = ["words", f"words + {n_examples} examples",
              f"words + {n_examples} examples + {n_counter} counter-examples"]
    per_task: list[dict[str, Any]] = []
    # figures[judge][scope][metric][draw] = mean over tasks
    sums: dict[str, dict[str, dict[str, np.ndarray]]] = {
        j: {s: {m: np.zeros(draws) for m in METRICS} for s in scopes} for j in judges}
    for lab, words, task_set in tasks:
        topic = resolve_topic(lab, corpus)
        y_all = topic.label_mask(corpus)
        site = names.index(site_label(lab))
        on_site = psite == site
        eval_pages = {"site": np.flatnonzero(on_site & ~train), "all": scopes["all"]}
        feats = {"site": _features(space, corpus, eval_pages["site"]), "all": every}
        pos_pool = np.flatnonzero(on_site & train & y_all)
        neg_pool = np.flatnonzero(on_site & train & ~y_all)
        row: dict[str, Any] = {"label": lab, "topic": " ".join(words), "task_set": task_set,
                               "eval_pages": {s: int(len(p)) for s, p in eval_pages.items()},
                               "relevant": {s: int(y_all[p].sum()) for s, p in eval_pages.items()},
                               "example_pool": int(len(pos_pool))}
        wj = WordsJudge(words, space)
        for s, p in eval_pages.items():
            rows, _, rowpos, counts = feats[s][:4]
            sc = wj.proba_bags(rows, counts, rowpos, len(p))
            met = agreement(y_all[p], sc, wj.relevant(sc))
            row.setdefault("words", {})[s] = {k: round(v, 4) for k, v in met.items()}
            for m in METRICS:
                sums["words"][s][m] += met[m]
        for d in range(draws):
            rng = np.random.default_rng(d)
            ex = rng.choice(pos_pool, size=min(n_examples, len(pos_pool)), replace=False)
            ce = rng.choice(neg_pool, size=min(n_counter, len(neg_pool)), replace=False)
            ex_t = [corpus.texts[int(q)] for q in ex]
            for jname, counter in ((judges[1], []), (judges[2], [corpus.texts[int(q)] for q in ce])):
                judge = build_judge(words, ex_t, counter, space=space, **(build or {}))
                for s, p in eval_pages.items():
                    rows, _, rowpos, _, tfidf, meaning = feats[s]
                    sc = _sigmoid(judge.decision_features(rows, rowpos, len(p), tfidf, meaning))
                    met = agreement(y_all[p], sc, judge.relevant(sc))
                    for m in METRICS:
                        sums[jname][s][m][d] += met[m]
                        row.setdefault(jname, {}).setdefault(s, {}).setdefault(m, []).append(round(met[m], 4))
        per_task.append(row)
        print(f"{lab:<28} {' '.join(words):<16} words AUC {row['words']['site']['auc']:.3f}  "
              f"examples AUC {np.mean(row[judges[1]]['site']['auc']):.3f}", flush=True)
    cost = judge_cost(corpus, space, tasks[0][1], [corpus.texts[int(q)] for q in np.flatnonzero(train)[:n_examples]])
    n = len(tasks)
    summary = {j: {s: {m: _mean_sd(list(sums[j][s][m][:1 if j == 'words' else draws] / n)) for m in METRICS}
                   for s in scopes} for j in judges}
    return {"cpu_ms_per_page": cost, "split": split, "tasks": n, "sites": sites, "draws": draws, "examples": n_examples,
            "counter_examples": n_counter, "space": space.fingerprint, "summary": summary, "per_task": per_task}


def markdown(result: dict[str, Any], banner: str) -> str:
    """The report's table: one row per judge and scope, mean ± sd over draws."""
    lines = [banner, f"Judge agreement with the docs-web {result['split']} sites' section labels "
             f"({result['tasks']} sections of {', '.join(result['sites'])}; {result['draws']} draws of the examples; "
             f"mean over sections, ± sd over draws)", "",
             "| judge | pages judged | AUC | precision | recall |", "|---|---|---|---|---|"]
    for j, scopes in result["summary"].items():
        for s, mets in scopes.items():
            cells = [f"{mets[m]['mean']:.3f} ± {mets[m]['sd']:.3f}" if j != "words" else f"{mets[m]['mean']:.3f}"
                     for m in METRICS]
            lines.append(f"| {j} | {'its site' if s == 'site' else 'all test sites'} | " + " | ".join(cells) + " |")
    cost = result["cpu_ms_per_page"]
    lines += ["", f"CPU per judged page, one at a time: words {cost['words']} ms, examples {cost['examples']} ms"]
    return "\n".join(lines) + "\n"


def plot(result: dict[str, Any], path: Path) -> None:
    from gym_crawl.benchmarks.plotting import pyplot, save_png

    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    judges = list(result["summary"])
    for ax, scope in zip(axes, ("site", "all")):
        for i, j in enumerate(judges):
            mets = result["summary"][j][scope]
            x = np.arange(len(METRICS)) + (i - 1) * 0.27
            ax.bar(x, [mets[m]["mean"] for m in METRICS], 0.27, yerr=[mets[m]["sd"] for m in METRICS], label=j,
                   capsize=3)
        ax.set_xticks(np.arange(len(METRICS)), METRICS)
        ax.set_title("pages of the task's site" if scope == "site" else "pages of all test sites")
        ax.set_ylim(0, 1)
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(fontsize=8, loc="lower left")
    fig.suptitle(f"live judge vs docs-web section labels ({result['split']} sites, {result['tasks']} sections)")
    save_png(fig, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="gym-crawl bench judge", description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("test", "train"), default="test",
                    help="the sites scored (train: for choosing the judge's design without touching the test sites)")
    ap.add_argument("--draws", type=int, default=5, help="draws of the example pages (seeds 0 .. draws-1)")
    ap.add_argument("--examples", type=int, default=3, help="example pages per draw")
    ap.add_argument("--counter-examples", type=int, default=3, help="counter-examples of the third judge")
    ap.add_argument("--quick", action="store_true", help="three sections, two draws (a smoke run)")
    ap.add_argument("--no-intercept", action="store_true", help="build the example judges without an intercept "
                                                                "(a design alternative, for --split train)")
    ap.add_argument("--corpus-path", type=Path, default=None,
                    help="the built docs-web corpus (default: <data dir>/docs-web)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    if args.draws < 1 or args.examples < 1 or args.counter_examples < 1:
        raise SystemExit("gym-crawl bench judge: --draws, --examples and --counter-examples must be >= 1")
    if args.quick:
        args.draws = 2
    from gym_crawl.benchmarks.report import markdown_banner, write_json_report
    from gym_crawl.tasks.docs_web import load_docs_web

    corpus = load_docs_web(args.corpus_path)
    t0, c0 = time.time(), time.process_time()
    result = run(corpus, args.split, args.draws, args.examples, args.counter_examples, args.quick,
                 {"intercept": not args.no_intercept})
    result.update({"seconds": round(time.time() - t0, 1), "cpu_seconds": round(time.process_time() - c0, 1),
                   "machine": platform.machine(), "load_average": [round(x, 2) for x in os.getloadavg()]})
    args.out.mkdir(parents=True, exist_ok=True)
    path = write_json_report(args.out / "judge.json", result, "judge", args)
    md = markdown(result, markdown_banner(args.quick))
    (args.out / "judge.md").write_text(md, encoding="utf-8")
    plot(result, args.out / "judge.png")
    print(md)
    print(f"written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
