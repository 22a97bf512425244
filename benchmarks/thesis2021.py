"""Reproduce Pertejo 2021 (the thesis' LFA crawler) on WikiCrawl-v0.

``gym-crawl bench thesis2021 [--quick] [--out DIR] [--corpus NAME] [--steps N] [--tasks E] ...``

* **Table 4.3** — asynchronous LFA (``thesis-lfa``) vs the basic crawler (``best-first``: priority =
  cosine of the topic with the link's URL + anchor + surrounding text, the thesis' Algorithm 2) on
  Cameras, Cancer, Fiction, Geology, Poetry (synthetic web, 100,000 pages; paper: +20 % to +87 %
  on 323,198 pages), and on Wikispeedia's four topics.
* **Table 4.2** — the γ sweep 0.1 … 0.9 on Fiction (paper: 0.1–0.6 beat 0.9).
* **Fig. 4.6** — LFA async vs LFA sync vs basic on a small corpus (the thesis' reduced dump).

Reward ``thesis`` (30 topic word / 30 cos > 0.6 / 20 cos > 0.5 / −1), features
:class:`~gym_crawl.features.thesis.ThesisFeatures`, γ = 0.3, α = 0.001, ε = 0.1, w₀ ~ U[0, 1).
The thesis counts a page as relevant when it contains the topic word ("han" relevance here;
"label" = ground-truth label). Writes ``thesis2021.json``, ``thesis2021.md`` and PNGs to ``--out``
(default ``benchmarks/results/thesis2021``).
"""
from __future__ import annotations

import argparse
import dataclasses
import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._console import ArgumentParser
from gym_crawl.benchmarks.han2018 import DEFAULT_WIKISPEEDIA, RunResult, figures, load_corpus_cached, run_tasks
from gym_crawl.benchmarks.report import markdown_banner, write_json_report

THESIS_TABLE_4_3 = {"cameras": (80, 104), "cancer": (538, 648), "fiction": (850, 1590), "geology": (597, 823),
                    "poetry": (250, 409)}
THESIS_TABLE_4_2 = {0.1: 1636, 0.2: 1600, 0.3: 1573, 0.4: 1603, 0.5: 1618, 0.6: 1617, 0.7: 1494, 0.8: 1422, 0.9: 1300}


@dataclass(frozen=True)
class Preset:
    """A named configuration of the benchmark; command-line flags override its fields.

    ``wiki_steps``/``small_steps``: budgets of the Wikispeedia rows of Table 4.3 and of Fig. 4.6
    (``--steps`` sets every budget)."""

    name: str
    corpus: str
    small_corpus: str
    steps: int
    tasks: int
    topics: tuple[str, ...]
    gammas: tuple[float, ...]
    fig_topics: tuple[str, ...]
    wikispeedia: bool
    wiki_steps: int
    small_steps: int


#: CI-sized (< 60 s): a 3,000-page synthetic web, two topics, three γ, no Wikispeedia.
QUICK = Preset("quick", corpus="synthetic-3000", small_corpus="synthetic-3000", steps=100, tasks=1,
               topics=("cancer", "fiction"), gammas=(0.1, 0.5, 0.9), fig_topics=("cancer",), wikispeedia=False,
               wiki_steps=500, small_steps=100)
#: The reproduction: the 100,000-page synthetic web (5 topics), the full γ sweep, Wikispeedia, 3 tasks.
FULL = Preset("full", corpus="synthetic-100000", small_corpus="synthetic-20000", steps=5000, tasks=3,
              topics=("cameras", "cancer", "fiction", "geology", "poetry"),
              gammas=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9),
              fig_topics=("cancer", "fiction", "geology", "poetry"),
              wikispeedia=True, wiki_steps=500, small_steps=3000)
PRESETS = {p.name: p for p in (QUICK, FULL)}


def build_parser() -> argparse.ArgumentParser:
    ap = ArgumentParser(prog="gym-crawl bench thesis2021", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the QUICK preset: CI-sized run (small synthetic corpus, "
                                                         "< 60 s); default: the FULL preset")
    ap.add_argument("--out", default="benchmarks/results/thesis2021")
    ap.add_argument("--corpus", default=None, help="corpus of Table 4.3 and the γ sweep (full: synthetic-100000)")
    ap.add_argument("--small-corpus", default=None, help="corpus of Fig. 4.6, sync vs async (full: synthetic-20000)")
    ap.add_argument("--no-wikispeedia", action="store_true", help="skip Table 4.3 on Wikispeedia")
    ap.add_argument("--steps", type=int, default=None, help="steps per task (default 5000; Wikispeedia 500)")
    ap.add_argument("--tasks", type=int, default=None, help="tasks per agent, weights kept (default 3)")
    ap.add_argument("--gammas", default=None, help="comma-separated γ of Table 4.2 (full: 0.1,0.2,…,0.9)")
    ap.add_argument("--seed", type=int, default=0)
    return ap


def preset_from_args(args: argparse.Namespace) -> Preset:
    """``--quick`` picks :data:`QUICK`, else :data:`FULL`; flags that were given override its fields."""
    p = QUICK if args.quick else FULL
    given: dict[str, Any] = {"corpus": args.corpus, "small_corpus": args.small_corpus, "tasks": args.tasks,
                             "gammas": tuple(float(g) for g in args.gammas.split(",") if g) if args.gammas else None}
    if args.steps:
        given.update(steps=args.steps, wiki_steps=args.steps, small_steps=args.steps)
    if args.no_wikispeedia:
        given["wikispeedia"] = False
    return dataclasses.replace(p, **{k: v for k, v in given.items() if v is not None})


def _md(res: dict[str, Any]) -> str:
    out = ["# Pertejo 2021 (thesis) on WikiCrawl-v0", "",
           f"Machine: {res['machine']}. Command: `{res['command']}`. Wall time {res['wall_seconds']:.0f} s.", "",
           "Relevant = contains the topic word (**han**, the thesis' definition) or carries the topic label "
           "(**label**). "
           "'task 1' is the first crawl with fresh weights (what the thesis ran); 'mean' is over all tasks "
           "(weights kept).", "", "## Table 4.3 — LFA (async) vs basic crawler", "",
           "| corpus | topic | steps | basic han | LFA han task 1 | LFA han mean | improvement (mean) | basic label | "
           "LFA label mean | improvement label | thesis basic → LFA |", "|" + "---|" * 11]
    for r in res["table_4_3"]:
        th = THESIS_TABLE_4_3.get(r["topic"])
        out.append(f"| {r['corpus']} | {r['topic']} | {r['steps']} | {r['basic_han']:.0f} | {r['lfa_han_first']:.0f} | "
                   f"{r['lfa_han_mean']:.1f} | {100 * r['improvement_han']:+.0f} % | {r['basic_label']:.0f} | "
                   f"{r['lfa_label_mean']:.1f} | {100 * r['improvement_label']:+.0f} % | "
                   f"{f'{th[0]} → {th[1]} (+{100 * (th[1] / th[0] - 1):.0f} %)' if th else '-'} |")
    out += ["", "## Table 4.2 — γ sweep (topic fiction)", "",
            "| γ | han (mean over tasks) | label (mean) | thesis (reduced dump) |", "|---|---|---|---|"]
    for g in res["table_4_2"]:
        out.append(f"| {g['gamma']} | {g['han_mean']:.1f} | {g['label_mean']:.1f} | "
                   f"{THESIS_TABLE_4_2.get(g['gamma'], '-')} |")
    best = max(res["table_4_2"], key=lambda g: g["han_mean"]) if res["table_4_2"] else None
    if best:
        out.append(f"\nBest γ here: {best['gamma']} (han {best['han_mean']:.1f}); γ = 0.9: "
                   f"{next((g['han_mean'] for g in res['table_4_2'] if g['gamma'] == 0.9), float('nan')):.1f}.")
    out += ["", "## Fig. 4.6 — async vs sync vs basic (small corpus)", "",
            "| corpus | topic | agent | steps | han mean | label mean | steps/s |", "|---|---|---|---|---|---|---|"]
    for s in res["fig_4_6"]:
        out.append(f"| {s['corpus']} | {s['topic']} | {s['agent']} | {s['steps']} | {s['han_mean']:.1f} | "
                   f"{s['label_mean']:.1f} | {s['steps_per_second']:.0f} |")
    out += ["", "## Speed", "", res["speed_note"], "", "Figures: " + ", ".join(f"`{p}`" for p in res["figures"]), ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    from gym_crawl._io import atomic_write_bytes
    from gym_crawl.benchmarks.plotting import line_figure

    args = build_parser().parse_args(argv)
    p = preset_from_args(args)
    t0 = time.perf_counter()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t43, sweep, f46 = crawls(p, args.seed)
    table = table_4_3(t43)
    res: dict[str, Any] = {
        "benchmark": "thesis2021", "preset": p.name, "command": "gym-crawl bench thesis2021 " + " ".join(argv or []),
        "machine": f"{platform.processor() or platform.machine()}, {__import__('os').cpu_count()} cores",
        "table_4_3": table,
        "table_4_2": [{"gamma": r.extra["gamma"], "han_mean": float(r.han[:, -1].mean()),
                       "label_mean": float(r.label[:, -1].mean()), "han_per_task": r.han[:, -1].tolist(),
                       "thesis": THESIS_TABLE_4_2.get(r.extra["gamma"])} for r in sweep],
        "fig_4_6": [r.summary() for r in f46], "runs_4_3": [r.summary() for r in t43],
        "speed_note": speed_note(t43, p.corpus),
    }
    figs = figures(t43, out, prefix="table43_") + figures(f46, out, prefix="fig46_")
    path = out / "table42_gamma_sweep.png"
    line_figure({"thesis-lfa (here, han)": ([g["gamma"] for g in res["table_4_2"]],
                                             [g["han_mean"] for g in res["table_4_2"]]),
                 "thesis (reduced dump)": (list(THESIS_TABLE_4_2), list(THESIS_TABLE_4_2.values()))},
                path, title="Table 4.2 — relevant pages vs γ (topic fiction)", xlabel="γ", ylabel="relevant pages")
    res["figures"] = [*figs, path.name]
    res["wall_seconds"] = time.perf_counter() - t0
    write_json_report(out / "thesis2021.json", res, "thesis2021", args)
    atomic_write_bytes(out / "thesis2021.md", (markdown_banner(args.quick) + _md(res)).encode())
    print(f"wrote {out / 'thesis2021.json'}, {out / 'thesis2021.md'} and {len(res['figures'])} figures")
    for r in table:
        print(f" - {r['corpus']}/{r['topic']}: basic {r['basic_han']:.0f} → LFA {r['lfa_han_mean']:.1f} "
              f"({100 * r['improvement_han']:+.0f} %, han relevance)")
    return 0


def crawls(p: Preset, seed: int) -> tuple[list[RunResult], list[RunResult], list[RunResult]]:
    """The crawls of Table 4.3, Table 4.2 (γ sweep on fiction) and Fig. 4.6 (async / sync / basic)."""
    from tqdm.auto import tqdm

    wiki = (str(DEFAULT_WIKISPEEDIA) if DEFAULT_WIKISPEEDIA.exists() else "wikispeedia") if p.wikispeedia else None
    cache: dict[str, Any] = {}
    total = (len(p.topics) * 2 * p.tasks * p.steps + len(p.gammas) * p.tasks * p.steps
             + len(p.fig_topics) * 3 * p.tasks * p.small_steps + (4 * 2 * p.tasks * p.wiki_steps if wiki else 0))
    t43: list[RunResult] = []
    sweep: list[RunResult] = []
    f46: list[RunResult] = []
    with tqdm(total=total, desc="thesis2021", unit="step", mininterval=1.0) as bar:
        corpus = load_corpus_cached(p.corpus, cache)
        for t in p.topics:
            for a in ("best-first", "thesis-lfa"):
                bar.set_postfix_str(f"table 4.3 {t}/{a}")
                t43.append(run_tasks(corpus, p.corpus, t, "thesis", a, p.steps, p.tasks, seed=seed,
                                     on_step=bar.update))
        if wiki:
            wc = load_corpus_cached(wiki, cache)
            for t in ("geology", "cancer", "poetry", "sports"):
                for a in ("best-first", "thesis-lfa"):
                    bar.set_postfix_str(f"table 4.3 wikispeedia {t}/{a}")
                    t43.append(run_tasks(wc, "wikispeedia", t, "thesis", a, p.wiki_steps, p.tasks, seed=seed,
                                         on_step=bar.update))
        for g in p.gammas:
            bar.set_postfix_str(f"γ sweep {g}")
            r = run_tasks(corpus, p.corpus, "fiction", "thesis", "thesis-lfa", p.steps, p.tasks, seed=seed,
                          agent_kwargs={"gamma": g}, on_step=bar.update)
            r.extra = {"gamma": g}
            sweep.append(r)
        small = load_corpus_cached(p.small_corpus, cache)
        for t in p.fig_topics:
            for a, kw in (("best-first", None), ("thesis-lfa", {"mode": "async"}), ("thesis-lfa", {"mode": "sync"})):
                bar.set_postfix_str(f"fig 4.6 {t}/{a}/{(kw or {}).get('mode', '')}")
                r = run_tasks(small, p.small_corpus, t, "thesis", a, p.small_steps, p.tasks, seed=seed,
                              agent_kwargs=kw, on_step=bar.update)
                if kw:
                    r.agent = f"thesis-lfa-{kw['mode']}"
                f46.append(r)
    return t43, sweep, f46


def table_4_3(t43: list[RunResult]) -> list[dict[str, Any]]:
    """LFA vs the basic crawler per (corpus, topic): relevant pages and the improvement."""
    table = []
    by = {(r.corpus, r.topic, r.agent): r for r in t43}
    for (c, t, a), r in by.items():
        if a != "thesis-lfa":
            continue
        b = by[(c, t, "best-first")]
        bh, bl = float(b.han[:, -1].mean()), float(b.label[:, -1].mean())
        lh, ll = float(r.han[:, -1].mean()), float(r.label[:, -1].mean())
        table.append({"corpus": c, "topic": t, "steps": r.steps, "tasks": len(r.han), "basic_han": bh,
                      "basic_label": bl, "lfa_han_first": float(r.han[0, -1]), "lfa_han_mean": lh,
                      "lfa_label_first": float(r.label[0, -1]), "lfa_label_mean": ll,
                      "lfa_han_per_task": r.han[:, -1].tolist(), "improvement_han": lh / bh - 1 if bh else 0.0,
                      "improvement_label": ll / bl - 1 if bl else 0.0,
                      "lfa_seconds_per_task": float(r.seconds.mean()),
                      "basic_seconds_per_task": float(b.seconds.mean()),
                      "thesis_basic_lfa": THESIS_TABLE_4_3.get(t)})
    return table


def speed_note(t43: list[RunResult], corpus: str) -> str:
    def sps(agent: str) -> float:
        return float(np.mean([r.steps / max(r.seconds.mean(), 1e-9) for r in t43
                              if r.agent == agent and r.corpus == corpus]))

    lfa_sps, basic_sps = sps("thesis-lfa"), sps("best-first")
    return (f"On {corpus}: thesis-lfa {lfa_sps:.0f} steps/s ({10_000 / lfa_sps:.1f} s per 10,000 "
            f"steps; thesis: ≈ 4 min), basic {basic_sps:.0f} steps/s ({10_000 / basic_sps:.1f} s; "
            f"thesis: ≈ 2.5 min). Wall-clock on a shared machine.")


if __name__ == "__main__":
    raise SystemExit(main())
