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
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl.benchmarks.han2018 import DEFAULT_WIKISPEEDIA, RunResult, figures, load_corpus_cached, run_tasks

THESIS_TABLE_4_3 = {"cameras": (80, 104), "cancer": (538, 648), "fiction": (850, 1590), "geology": (597, 823),
                    "poetry": (250, 409)}
THESIS_TABLE_4_2 = {0.1: 1636, 0.2: 1600, 0.3: 1573, 0.4: 1603, 0.5: 1618, 0.6: 1617, 0.7: 1494, 0.8: 1422, 0.9: 1300}


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="gym-crawl bench thesis2021", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI-sized run (small synthetic corpus, < 60 s)")
    ap.add_argument("--out", default="benchmarks/results/thesis2021")
    ap.add_argument("--corpus", default="synthetic-100000", help="corpus of Table 4.3 and the γ sweep")
    ap.add_argument("--small-corpus", default="synthetic-20000", help="corpus of Fig. 4.6 (sync vs async)")
    ap.add_argument("--no-wikispeedia", action="store_true", help="skip Table 4.3 on Wikispeedia")
    ap.add_argument("--steps", type=int, default=None, help="steps per task (default 5000; Wikispeedia 500)")
    ap.add_argument("--tasks", type=int, default=None, help="tasks per agent, weights kept (default 3)")
    ap.add_argument("--gammas", default="0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9")
    ap.add_argument("--seed", type=int, default=0)
    return ap


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
    from tqdm.auto import tqdm

    from gym_crawl.benchmarks._plotting import line_figure
    from gym_crawl._io import atomic_write_bytes, atomic_write_json

    args = build_parser().parse_args(argv)
    t0 = time.perf_counter()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    quick = args.quick
    corpus_spec = "synthetic-3000" if quick else args.corpus
    small_spec = "synthetic-3000" if quick else args.small_corpus
    steps = args.steps or (100 if quick else 5000)
    tasks = args.tasks or (1 if quick else 3)
    topics = ["cancer", "fiction"] if quick else ["cameras", "cancer", "fiction", "geology", "poetry"]
    gammas = [0.1, 0.5, 0.9] if quick else [float(g) for g in args.gammas.split(",") if g]
    fig_topics = ["cancer"] if quick else ["cancer", "fiction", "geology", "poetry"]
    wiki = None if (quick or args.no_wikispeedia) else (str(DEFAULT_WIKISPEEDIA) if DEFAULT_WIKISPEEDIA.exists()
                                                         else "wikispeedia")
    wiki_steps = args.steps or 500
    small_steps = args.steps or (100 if quick else 3000)
    cache: dict[str, Any] = {}
    total = (len(topics) * 2 * tasks * steps + len(gammas) * tasks * steps
             + len(fig_topics) * 3 * tasks * small_steps + (4 * 2 * tasks * wiki_steps if wiki else 0))
    t43: list[RunResult] = []
    sweep: list[RunResult] = []
    f46: list[RunResult] = []
    with tqdm(total=total, desc="thesis2021", unit="step", mininterval=1.0) as bar:
        corpus = load_corpus_cached(corpus_spec, cache)
        for t in topics:
            for a in ("best-first", "thesis-lfa"):
                bar.set_postfix_str(f"table 4.3 {t}/{a}")
                t43.append(run_tasks(corpus, corpus_spec, t, "thesis", a, steps, tasks, seed=args.seed,
                                     on_step=bar.update))
        if wiki:
            wc = load_corpus_cached(wiki, cache)
            for t in ("geology", "cancer", "poetry", "sports"):
                for a in ("best-first", "thesis-lfa"):
                    bar.set_postfix_str(f"table 4.3 wikispeedia {t}/{a}")
                    t43.append(run_tasks(wc, "wikispeedia", t, "thesis", a, wiki_steps, tasks, seed=args.seed,
                                         on_step=bar.update))
        for g in gammas:
            bar.set_postfix_str(f"γ sweep {g}")
            r = run_tasks(corpus, corpus_spec, "fiction", "thesis", "thesis-lfa", steps, tasks, seed=args.seed,
                          agent_kwargs={"gamma": g}, on_step=bar.update)
            r.extra = {"gamma": g}
            sweep.append(r)
        small = load_corpus_cached(small_spec, cache)
        for t in fig_topics:
            for a, kw in (("best-first", None), ("thesis-lfa", {"mode": "async"}), ("thesis-lfa", {"mode": "sync"})):
                bar.set_postfix_str(f"fig 4.6 {t}/{a}/{(kw or {}).get('mode', '')}")
                r = run_tasks(small, small_spec, t, "thesis", a, small_steps, tasks, seed=args.seed, agent_kwargs=kw,
                              on_step=bar.update)
                if kw:
                    r.agent = f"thesis-lfa-{kw['mode']}"
                f46.append(r)
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
    def _sps(agent: str) -> float:
        return float(np.mean([r.steps / max(r.seconds.mean(), 1e-9) for r in t43
                              if r.agent == agent and r.corpus == corpus_spec]))

    lfa_sps, basic_sps = _sps("thesis-lfa"), _sps("best-first")
    speed = (f"On {corpus_spec}: thesis-lfa {lfa_sps:.0f} steps/s ({10_000 / lfa_sps:.1f} s per 10,000 "
             f"steps; thesis: ≈ 4 min), basic {basic_sps:.0f} steps/s ({10_000 / basic_sps:.1f} s; "
             f"thesis: ≈ 2.5 min). Wall-clock on a shared machine.")
    res: dict[str, Any] = {
        "benchmark": "thesis2021", "command": "gym-crawl bench thesis2021 " + " ".join(argv or []),
        "machine": f"{platform.processor() or platform.machine()}, {__import__('os').cpu_count()} cores",
        "table_4_3": table,
        "table_4_2": [{"gamma": r.extra["gamma"], "han_mean": float(r.han[:, -1].mean()),
                       "label_mean": float(r.label[:, -1].mean()), "han_per_task": r.han[:, -1].tolist(),
                       "thesis": THESIS_TABLE_4_2.get(r.extra["gamma"])} for r in sweep],
        "fig_4_6": [r.summary() for r in f46], "runs_4_3": [r.summary() for r in t43], "speed_note": speed,
    }
    figs = figures(t43, out, prefix="table43_") + figures(f46, out, prefix="fig46_")
    p = out / "table42_gamma_sweep.png"
    line_figure({"thesis-lfa (here, han)": ([g["gamma"] for g in res["table_4_2"]],
                                             [g["han_mean"] for g in res["table_4_2"]]),
                 "thesis (reduced dump)": (list(THESIS_TABLE_4_2), list(THESIS_TABLE_4_2.values()))},
                p, title="Table 4.2 — relevant pages vs γ (topic fiction)", xlabel="γ", ylabel="relevant pages")
    res["figures"] = figs + [p.name]
    res["wall_seconds"] = time.perf_counter() - t0
    atomic_write_json(out / "thesis2021.json", res)
    atomic_write_bytes(out / "thesis2021.md", _md(res).encode())
    print(f"wrote {out / 'thesis2021.json'}, {out / 'thesis2021.md'} and {len(res['figures'])} figures")
    for r in table:
        print(f" - {r['corpus']}/{r['topic']}: basic {r['basic_han']:.0f} → LFA {r['lfa_han_mean']:.1f} "
              f"({100 * r['improvement_han']:+.0f} %, han relevance)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
