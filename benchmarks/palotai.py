"""Reproduce Palotai, Farkas & Lőrincz's forager-fleet comparison ("Selection in scale-free small world",
Table 2, Fig. 2 and the rewired control of §4.1/§5) on the ChangingWeb.

``gym-crawl bench palotai [--quick] [--out DIR] [--runs N] [--pages N] [--hours H] [--clock download|step]
[--download-seconds S] [--slice-hours H] [--step-hours H] [--kinds wl,rl,wlrl] [--graphs sfsw,rewired]
[--web-seed S] [--jobs J]``

Clock (:class:`~gym_crawl.envs.fleet.ForagerFleetEnv`'s ``clock``): ``download`` (default, the paper's
timing: foragers in 3-minute time slices one after another on one simulated computer, each downloaded page
costing ``--download-seconds`` = 2.6 s, the mean implied by Table 2's download counts over 432 h) or
``step`` (the earlier clock: every forager fetches once per ``--step-hours`` = 0.1 h step; reproduces the
figures recorded before the download clock).

The paper: an 18-day CNN crawl replayed in simulation; fleets of 2 → 16 foragers compete for new
documents (reinforcing agent: +100 to the first submitter of a document not older than 24 h, −1
otherwise). WL foragers (weblog update, fixed random URL ordering) beat RL foragers (TD URL ordering,
fixed seed weblog) on that scale-free small world: freshness 0.74 vs 0.70, sent efficiency 0.49 vs
0.248, age 1.56 h vs 1.79 h, similar download efficiency (0.0046 vs 0.0045), RL with more relative found
URLs (0.058 vs 0.05). After a degree-preserving rewiring (clustering 0.02 → 0.003, "diameter" 7.29 →
8.22) "RL foragers performed better than WL ones" (§5, no numbers given).

Here, per graph (``sfsw``: :func:`~gym_crawl.webgen.changing.make_changing_web`; ``rewired``: the same
web with its links rewired degree-preservingly — births, modifications and page states identical) and
per forager kind (``wl``, ``rl``, and ``wlrl``, the paper's Web-experiment foragers), ``--runs`` runs
(default 5; the paper ran 3) of a whole fleet (:func:`gym_crawl.agents.palotai.run_fleet` on
:class:`gym_crawl.envs.fleet.ForagerFleetEnv`) over the web's horizon. The runs of one kind share the web
and differ in the fleet seed (initial weights, RA order, start choices), as the paper's runs differed in
their initial weight vectors. Table 2 rows: totals and ratios of totals
(:func:`gym_crawl.crawl.freshness.table1`) and freshness and age (Cho & Garcia-Molina's definitions, which
the paper cites) of the found relevant documents. Which documents: the paper's Table 1 says "all found
relevant documents", but its ages (1.56–1.79 h with 26–30 % stale copies) are only possible for a set that
does not keep old copies for days; we read it as the RA's *relevant set* — the documents it accepted within
its 24-hour relevance window (``CollectionFreshness(web, retain=24)``, exact time averages over the run:
``freshness``, ``age_hours``) — and also report the literal reading, the RA's whole collection
time-averaged over the run (:class:`~gym_crawl.crawl.freshness.CollectionFreshness`: ``cumulative_*``).
Fig. 2: download efficiency per 3-hour window, one line per run; Fig. 3: freshness and age of the relevant
set per 3-hour window. The two graphs'
clustering and mean path length ("diameter") are measured with
:func:`~gym_crawl.webgen.news_site.graph_statistics`. Writes ``palotai.json``, ``palotai.md`` and PNGs
to ``--out`` (default ``benchmarks/results/palotai``).
"""
from __future__ import annotations

import argparse
import os
import platform
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._console import ArgumentParser
from gym_crawl.benchmarks.report import markdown_banner, write_json_report

KINDS = ("wl", "rl", "wlrl")
GRAPHS = ("sfsw", "rewired")
LABEL = {"wl": "WL", "rl": "RL", "wlrl": "WLRL"}
#: Palotai et al., Table 2 (mean, sd over 3 runs) — the scale-free small world only
PAPER = {
    "rl": {"downloaded": (540636, 9840), "sent": (9747, 98), "relevant": (2419, 45), "found_urls": (31092, 1050),
           "download_efficiency": (0.0045, 0.0001), "sent_efficiency": (0.248, 0.003),
           "relative_found_urls": (0.058, 0.001), "freshness": (0.70, 0.006), "age_hours": (1.79, 0.04)},
    "wl": {"downloaded": (669673, 9580), "sent": (6345, 385), "relevant": (3107, 60), "found_urls": (33116, 3370),
           "download_efficiency": (0.0046, 0.0001), "sent_efficiency": (0.49, 0.031),
           "relative_found_urls": (0.05, 0.006), "freshness": (0.74, 0.011), "age_hours": (1.56, 0.08)},
}
PAPER_GRAPH = {"sfsw": {"clustering": 0.02, "mean_path": 7.2893}, "rewired": {"clustering": 0.003, "mean_path": 8.2163}}
METRICS = ("downloaded", "sent", "relevant", "found_urls", "download_efficiency", "sent_efficiency",
           "relative_found_urls", "freshness", "age_hours", "cumulative_freshness", "cumulative_age_hours")
#: which direction is better, for the WL-vs-RL verdicts
BETTER = {"relevant": 1, "download_efficiency": 1, "sent_efficiency": 1, "freshness": 1, "age_hours": -1}
WINDOW = 3.0  # hours (the paper's 3-hour windows)


def build_parser() -> argparse.ArgumentParser:
    ap = ArgumentParser(prog="gym-crawl bench palotai", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI-sized run (2,000 pages, 48 h, 2 runs)")
    ap.add_argument("--out", default="benchmarks/results/palotai")
    ap.add_argument("--runs", type=int, default=None, help="runs per (graph, kind) (default 5; quick 2)")
    ap.add_argument("--pages", type=int, default=None, help="pages of the news site (default 20,000; quick 2,000)")
    ap.add_argument("--hours", type=float, default=None, help="simulated hours (default 432 = 18 days; quick 48)")
    ap.add_argument("--clock", choices=("download", "step"), default="download",
                    help="download: the paper's timing (one forager at a time, each downloaded page costs "
                         "--download-seconds); step: the earlier clock (--step-hours per fleet step)")
    ap.add_argument("--download-seconds", type=float, default=2.6,
                    help="simulated seconds per downloaded page under --clock download (default 2.6)")
    ap.add_argument("--slice-hours", type=float, default=0.05,
                    help="a forager's time slice under --clock download (default 0.05 h = 3 minutes)")
    ap.add_argument("--step-hours", type=float, default=0.1,
                    help="simulated hours per fleet step under --clock step (every live forager fetches one URL; "
                         "default 0.1)")
    ap.add_argument("--kinds", default=",".join(KINDS), help=f"forager kinds, some of {','.join(KINDS)}")
    ap.add_argument("--graphs", default=",".join(GRAPHS), help=f"graphs, some of {','.join(GRAPHS)}")
    ap.add_argument("--web-seed", type=int, default=0, help="seed of the changing web (shared by all runs)")
    ap.add_argument("--normalized-td", action="store_true",
                    help="TD step α / max(1, ‖state‖²) instead of the paper's α (for state vectors of norm > 1)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    return ap


# ------------------------------------------------------------------------------ one run
_WEBS: dict[tuple, Any] = {}


def _web(pages: int, hours: float, seed: int, graph: str) -> Any:
    from gym_crawl.webgen.changing import make_changing_web

    key = (pages, hours, seed, graph)
    if key not in _WEBS:
        _WEBS.clear()  # one web per worker at a time
        _WEBS[key] = make_changing_web(pages, hours, seed=seed, rewired=graph == "rewired")
    return _WEBS[key]


def _per_window(times: np.ndarray, values: np.ndarray, hours: float) -> np.ndarray:
    n = int(np.ceil(hours / WINDOW - 1e-9))
    idx = np.minimum((times / WINDOW).astype(np.int64), n - 1)
    return np.bincount(idx, weights=values, minlength=n)


#: fetch-profile fields (see :func:`fetch_profile`), summarized like the Table 2 metrics
PROFILE = ("distinct_share", "index_share", "fetched_rate", "relevant_rate", "relevant_index_share")


def fetch_profile(web: Any, fetched: np.ndarray, relevant_pages: np.ndarray) -> dict[str, float]:
    """Where a fleet spent its fetches, to explain freshness and age: ``distinct_share`` (distinct pages /
    fetches), ``index_share`` (fetches of index pages: front, section and list pages), ``fetched_rate`` (median
    base modification rate per hour of the fetched pages, one entry per fetch), ``relevant_rate`` and
    ``relevant_index_share`` (the same over the documents the RA accepted). Rates are the web's generator
    parameters, which no forager sees; NaN where a set is empty or the web has no rates."""
    fetched = np.asarray(fetched, np.int64)
    rel = np.asarray(relevant_pages, np.int64)
    rates, idx = np.asarray(web.rates, float), np.asarray(web.is_index, bool)

    def med(a: np.ndarray) -> float:
        return float(np.median(rates[a])) if len(a) else float("nan")

    def share(a: np.ndarray) -> float:
        return float(idx[a].mean()) if len(a) else float("nan")

    return {"fetches": int(len(fetched)),
            "distinct_share": float(len(np.unique(fetched)) / len(fetched)) if len(fetched) else float("nan"),
            "index_share": share(fetched), "fetched_rate": med(fetched),
            "relevant_rate": med(rel), "relevant_index_share": share(rel)}


def run_task(task: dict[str, Any]) -> dict[str, Any]:
    """One fleet run: Table 2's numbers and the per-window series of Fig. 2 / Fig. 3."""
    from gym_crawl.agents.palotai import run_fleet
    from gym_crawl.crawl.freshness import CollectionFreshness, table1
    from gym_crawl.envs.fleet import ForagerFleetEnv

    web = _web(task["pages"], task["hours"], task["web_seed"], task["graph"])
    env = ForagerFleetEnv(web, step_hours=task["step_hours"], clock=task["clock"],
                          download_hours=task["download_seconds"] / 3600.0, slice_hours=task["slice_hours"])
    c0, w0 = time.process_time(), time.perf_counter()
    fetched: list[int] = []

    def on_step(_step: int, _rewards: dict, infos: dict) -> None:
        fetched.extend(i["fetched_page"] for i in infos.values() if i.get("acted", True) and i["fetched_page"] >= 0)

    run = run_fleet(env, task["kind"], seed=task["seed"], normalize_td=task["normalized_td"], on_step=on_step)
    cpu = time.process_time() - c0
    wall = time.perf_counter() - w0
    lg = env.run_log()
    found = env.found_documents()
    hours = float(task["hours"])
    t_end = min(float(web.horizon), float(env.time)) if len(lg["time"]) else hours
    # the RA's whole collection of found relevant documents, time-averaged over the run ("cumulative")
    coll = CollectionFreshness(web)
    for p, t in zip(found["page"].tolist(), found["time"].tolist()):
        coll.record(p, t)
    cum_fresh = coll.mean_freshness(0.0, t_end) if len(coll) else float("nan")
    cum_age = coll.mean_age(0.0, t_end) if len(coll) else float("nan")
    # the RA's relevant set: the latest copies of the documents it accepted within the last 24 h (its relevance
    # window); exact time averages over the run (Table 2) and per 3-hour window (Fig. 3)
    rel_set = CollectionFreshness(web, retain=24.0)
    for p, t in zip(found["page"].tolist(), found["time"].tolist()):
        rel_set.record(p, t)
    fresh = rel_set.mean_freshness(0.0, t_end) if len(rel_set) else float("nan")
    age = rel_set.mean_age(0.0, t_end) if len(rel_set) else float("nan")
    win_rel = rel_set.windowed(0.0, t_end, WINDOW) if len(rel_set) else None
    nw = int(np.ceil(t_end / WINDOW - 1e-9))
    win_fresh = np.asarray(win_rel["freshness"]) if win_rel else np.full(nw, np.nan)
    win_age = np.asarray(win_rel["age"]) if win_rel else np.full(nw, np.nan)
    row = table1(lg["downloaded"], lg["sent"], lg["relevant"], lg["found_urls"], freshness=fresh, age=age)
    row["cumulative_freshness"], row["cumulative_age_hours"] = cum_fresh, cum_age
    win = coll.windowed(0.0, t_end, WINDOW) if len(coll) else None
    weights = np.concatenate([p.weights for p in run.policies.values()]) if run.policies else np.zeros(0)
    return {**{k: task[k] for k in ("graph", "kind", "seed")}, **row,
            "profile": fetch_profile(web, np.asarray(fetched, np.int64), found["page"]),
            "steps": run.steps, "births": run.births, "deaths": run.deaths, "max_foragers": run.max_foragers,
            "forager_steps": int(lg["n_foragers"].sum()), "cpu_seconds": cpu, "wall_seconds": wall,
            "weights_finite": bool(np.all(np.isfinite(weights))),
            "max_abs_weight": float(np.abs(weights).max()) if weights.size else 0.0,
            "series": {"downloaded": _per_window(lg["time"], lg["downloaded"], hours).tolist(),
                       "sent": _per_window(lg["time"], lg["sent"], hours).tolist(),
                       "relevant": _per_window(lg["time"], lg["relevant"], hours).tolist(),
                       "foragers": (_per_window(lg["time"], lg["n_foragers"], hours)
                                    / np.maximum(1, _per_window(lg["time"], np.ones(len(lg["time"])), hours))).tolist(),
                       "freshness": win_fresh.tolist(), "age": win_age.tolist(),
                       "cumulative_freshness": [] if win is None else np.asarray(win["freshness"]).tolist(),
                       "cumulative_age": [] if win is None else np.asarray(win["age"]).tolist()}}


# ------------------------------------------------------------------------------ report
def _stats(x: list[float]) -> tuple[float, float]:
    a = np.asarray(x, float)
    return float(np.mean(a)), float(np.std(a, ddof=1)) if len(a) > 1 else 0.0


def summarize(results: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """table[graph][kind] = {metric: (mean, sd), 'runs': n, ...}."""
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for r in results:
        table.setdefault(r["graph"], {}).setdefault(r["kind"], {"_runs": []})["_runs"].append(r)
    for cells in table.values():
        for cell in cells.values():
            runs = sorted(cell.pop("_runs"), key=lambda r: r["seed"])
            for m in (*METRICS, "births", "deaths", "max_foragers", "cpu_seconds", "forager_steps"):
                cell[m] = _stats([r[m] for r in runs])
            for m in PROFILE:
                cell["profile_" + m] = _stats([r["profile"][m] for r in runs if "profile" in r])
            cell["runs"] = len(runs)
            cell["seeds"] = [r["seed"] for r in runs]
            cell["steps_per_cpu_second"] = float(sum(r["steps"] for r in runs) / max(1e-9, sum(r["cpu_seconds"]
                                                                                           for r in runs)))
            cell["forager_steps_per_cpu_second"] = float(sum(r["forager_steps"] for r in runs)
                                                         / max(1e-9, sum(r["cpu_seconds"] for r in runs)))
            cell["all_weights_finite"] = all(r["weights_finite"] for r in runs)
    return table


def verdicts(table: dict[str, dict[str, dict[str, Any]]]) -> dict[str, dict[str, str]]:
    """WL vs RL per graph and metric: 'WL' / 'RL' when Welch's |t| >= 2, else 'tie'."""
    out: dict[str, dict[str, str]] = {}
    for g, cells in table.items():
        if "wl" not in cells or "rl" not in cells:
            continue
        out[g] = {}
        for m, sign in BETTER.items():
            (mw, sw), (mr, sr) = cells["wl"][m], cells["rl"][m]
            nw, nr = cells["wl"]["runs"], cells["rl"]["runs"]
            se = np.sqrt(sw ** 2 / nw + sr ** 2 / nr)
            t = (mw - mr) / se if se > 0 else (np.inf if mw != mr else 0.0)
            out[g][m] = "tie" if abs(t) < 2 else ("WL" if sign * t > 0 else "RL")
            out[g][m + "_t"] = float(t) if np.isfinite(t) else str(t)
    return out


def _fmt(m: str, v: tuple[float, float]) -> str:
    mean, sd = v
    if m in ("downloaded", "sent", "relevant", "found_urls"):
        return f"{mean:,.0f} ± {sd:,.0f}"
    if m in ("download_efficiency",):
        return f"{mean:.4f} ± {sd:.4f}"
    return f"{mean:.3f} ± {sd:.3f}"


def _md(res: dict[str, Any]) -> str:
    cfg = res["config"]
    o = ["# Palotai et al. — forager fleet: weblog update (WL) vs RL URL ordering", "",
         f"Machine: {res['machine']}. Command: `{res['command']}`. Wall time {res['wall_seconds']:.0f} s.", "",
         (f"News site: `make_changing_web({cfg['pages']}, {cfg['hours']:g} h, seed={cfg['web_seed']})` "
         f"(+ `rewired=True`); "
         + (f"clock `download`: {cfg['download_seconds']:g} s per downloaded page, foragers in "
            f"{cfg['slice_hours']:g} h time slices one after another; " if cfg.get("clock") == "download" else
            f"clock `step`: {cfg['step_hours']:g} h per fleet step ({cfg['steps']:,} steps); ")
         +
         f"{cfg['runs']} runs per cell (mean ± sd; the paper: 3). TD step: {cfg['td_step']}."), "",
         "## The two graphs (graph_statistics)", "",
         "| graph | clustering | paper | mean path (\"diameter\") | paper | γ_out | γ_in | leaf fraction |",
         "|---|---|---|---|---|---|---|---|"]
    for g, s in res["graphs"].items():
        p = PAPER_GRAPH[g]
        o.append(f"| {g} | {s['clustering']:.4f} | {p['clustering']} | {s['mean_path']:.2f} | {p['mean_path']} | "
                 f"{s['gamma_out']:.2f} | {s['gamma_in']:.2f} | {s['leaf_fraction']:.2f} |")
    for g, cells in res["table"].items():
        kinds = [k for k in KINDS if k in cells]
        o += ["", f"## Table 2 — {g}" + (" (the paper's setting)" if g == "sfsw" else " (degree-preserving control)"),
              "", "| quantity | " + " | ".join(LABEL[k] for k in kinds) + (" | paper RL | paper WL |" if g == "sfsw"
                                                                              else " |"),
              "|---|" + "---|" * len(kinds) + ("---|---|" if g == "sfsw" else "")]
        for m in METRICS:
            line = f"| {m.replace('_', ' ')} | " + " | ".join(_fmt(m, cells[k][m]) for k in kinds) + " |"
            if g == "sfsw":
                line += " " + " | ".join(_fmt(m, PAPER[k][m]) if m in PAPER[k] else "" for k in ("rl", "wl")) + " |"
            o.append(line)
        o.append("| foragers born / deleted | " + " | ".join(
            f"{cells[k]['births'][0]:.1f} / {cells[k]['deaths'][0]:.1f}" for k in kinds) + " |"
                 + (" | |" if g == "sfsw" else ""))
        o.append("| fleet steps per CPU-second | " + " | ".join(
            f"{cells[k]['steps_per_cpu_second']:,.0f}" for k in kinds) + " |" + (" | |" if g == "sfsw" else ""))
    o += ["", "## Fetch profile (where the fetches went; rates are the generator's, unseen by the foragers)", "",
          "| graph | kind | distinct pages / fetches | index-page share of fetches | median rate of fetched pages (/h) "
          "| median rate of accepted documents (/h) | index share of accepted documents |",
          "|---|---|---|---|---|---|---|"]
    for g, cells in res["table"].items():
        for k in (k for k in KINDS if k in cells and "profile_index_share" in cells[k]):
            c = cells[k]
            o.append(f"| {g} | {LABEL[k]} | " + " | ".join(
                f"{c['profile_' + m][0]:.3g} ± {c['profile_' + m][1]:.2g}" for m in PROFILE) + " |")
    if res["verdicts"]:
        o += ["", "## WL vs RL (Welch |t| ≥ 2 over runs, else tie)", "",
              "| graph | " + " | ".join(BETTER) + " |", "|---|" + "---|" * len(BETTER)]
        for g, v in res["verdicts"].items():
            o.append(f"| {g} | " + " | ".join(f"{v[m]} (t={float(v[m + '_t']):+.1f})" for m in BETTER) + " |")
        o += ["", ("Paper, SFSW: WL better on freshness, sent efficiency and age; download efficiency about equal. "
              "Rewired: \"RL foragers performed better than WL ones\"."), "", f"**Verdict.** {res['verdict_text']}"]
    o += ["", "Figures: " + ", ".join(f"`{p}`" for p in res["figures"]), ""]
    return "\n".join(o)


def verdict_text(v: dict[str, dict[str, str]]) -> str:
    parts = []
    for g, d in v.items():
        wins = {k: [m for m in BETTER if d[m] == k] for k in ("WL", "RL", "tie")}
        parts.append(f"{g}: WL better on {', '.join(wins['WL']) or 'nothing'}; RL better on "
                     f"{', '.join(wins['RL']) or 'nothing'}; tie on {', '.join(wins['tie']) or 'nothing'}")
    if "sfsw" in v and "rewired" in v:
        changed = [m for m in BETTER if v["sfsw"][m] != v["rewired"][m]]
        parts.append("the winner changes with rewiring on " + (", ".join(changed) if changed else "no metric"))
    return "; ".join(parts) + "."


def figures(results: list[dict[str, Any]], table: dict, out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from gym_crawl.benchmarks.plotting import save_png

    graphs = [g for g in GRAPHS if g in table]
    kinds = [k for k in KINDS if any(k in table[g] for g in graphs)]
    colors = {"wl": "#1f77b4", "rl": "#d62728", "wlrl": "#2ca02c"}
    paths = []
    # Fig. 2: download efficiency per 3-hour window, one line per run; a panel per (graph, kind)
    fig, axes = plt.subplots(len(graphs), len(kinds), figsize=(4.6 * len(kinds), 3.2 * len(graphs)),
                             squeeze=False, sharey=True)
    for i, g in enumerate(graphs):
        for j, k in enumerate(kinds):
            ax = axes[i, j]
            for r in (r for r in results if r["graph"] == g and r["kind"] == k):
                dl, rel = np.asarray(r["series"]["downloaded"]), np.asarray(r["series"]["relevant"])
                eff = np.where(dl > 0, rel / np.maximum(dl, 1), np.nan)
                x = (np.arange(len(eff)) + 0.5) * WINDOW / 24.0
                ax.plot(x, eff, lw=0.9, color=colors[k], alpha=0.75)
            ax.set_title(f"{LABEL[k]} foragers — {g}")
            ax.set_xlabel("time (days)")
            ax.set_ylabel("download efficiency (3 h)")
            ax.grid(alpha=0.3)
    fig.suptitle("Palotai Fig. 2 — relevant / downloaded per 3-hour window (one line per run)")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    save_png(fig, out / "fig2_efficiency.png")
    paths.append("fig2_efficiency.png")
    # Fig. 3: freshness and age per 3-hour window (mean over runs): WL dotted, RL solid (as the paper)
    fig, axes = plt.subplots(2, len(graphs), figsize=(6 * len(graphs), 6.4), squeeze=False)
    for j, g in enumerate(graphs):
        for k in kinds:
            rs = [r for r in results if r["graph"] == g and r["kind"] == k and r["series"]["freshness"]]
            if not rs:
                continue
            for i, key in enumerate(("freshness", "age")):
                y = np.nanmean(np.asarray([r["series"][key] for r in rs], float), axis=0)
                x = (np.arange(len(y)) + 0.5) * WINDOW / 24.0
                axes[i, j].plot(x, y, color=colors[k], ls=":" if k == "wl" else "-", lw=1.2, label=LABEL[k])
        for i, key in enumerate(("freshness", "age (hours)")):
            axes[i, j].set_title(f"{key} — {g}")
            axes[i, j].set_xlabel("time (days)")
            axes[i, j].grid(alpha=0.3)
        axes[0, j].legend(fontsize=8)
    fig.suptitle("Palotai Fig. 3 — freshness and age of the RA's relevant set (documents accepted in the last "
                 "24 h), per 3-hour window, mean of runs")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    save_png(fig, out / "fig3_freshness_age.png")
    paths.append("fig3_freshness_age.png")
    # SFSW vs rewired: Table 2's ratios per kind, mean ± sd
    ms = ("freshness", "sent_efficiency", "download_efficiency", "relative_found_urls", "age_hours")
    fig, axes = plt.subplots(1, len(ms), figsize=(3.3 * len(ms), 3.4), squeeze=False)
    for ax, m in zip(axes.flat, ms):
        width = 0.8 / max(1, len(kinds))
        for j, k in enumerate(kinds):
            vals = [table[g][k][m] if k in table[g] else (np.nan, 0.0) for g in graphs]
            x = np.arange(len(graphs)) + (j - (len(kinds) - 1) / 2) * width
            ax.bar(x, [v[0] for v in vals], width, yerr=[v[1] for v in vals], color=colors[k], label=LABEL[k],
                   capsize=2)
        ax.set_xticks(np.arange(len(graphs)))
        ax.set_xticklabels(graphs)
        ax.set_title(m.replace("_", " "), fontsize=9)
        ax.grid(alpha=0.3, axis="y")
    axes.flat[0].legend(fontsize=8)
    fig.suptitle("Scale-free small world vs degree-preserving rewiring (mean ± sd over runs)")
    fig.tight_layout(rect=(0, 0, 1, 0.92))
    save_png(fig, out / "sfsw_vs_rewired.png")
    paths.append("sfsw_vs_rewired.png")
    return paths


# ------------------------------------------------------------------------------ main
def main(argv: list[str] | None = None) -> int:
    from tqdm import tqdm

    from gym_crawl._io import atomic_write_bytes
    from gym_crawl.webgen.news_site import graph_statistics

    args = build_parser().parse_args(argv)
    t0 = time.perf_counter()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    q = args.quick
    runs = args.runs if args.runs is not None else (2 if q else 5)
    pages = args.pages if args.pages is not None else (2000 if q else 20000)
    hours = args.hours if args.hours is not None else (48.0 if q else 432.0)
    if runs < 1:
        raise SystemExit(f"--runs must be >= 1, got {runs}")
    if pages < 10:
        raise SystemExit(f"--pages must be >= 10, got {pages}")
    if not hours > 0 or not args.step_hours > 0 or not args.download_seconds > 0 or not args.slice_hours > 0:
        raise SystemExit(f"--hours, --step-hours, --download-seconds and --slice-hours must be > 0, got {hours}, "
                         f"{args.step_hours}, {args.download_seconds}, {args.slice_hours}")
    kinds = [k for k in args.kinds.split(",") if k]
    graphs = [g for g in args.graphs.split(",") if g]
    for name, got, ok in (("--kinds", kinds, KINDS), ("--graphs", graphs, GRAPHS)):
        bad = sorted(set(got) - set(ok))
        if bad or not got:
            raise SystemExit(f"{name}: unknown or empty {bad or got}; expected some of {list(ok)}")
    tasks = [{"graph": g, "kind": k, "seed": s, "pages": pages, "hours": hours, "web_seed": args.web_seed,
              "step_hours": args.step_hours, "normalized_td": args.normalized_td, "clock": args.clock,
              "download_seconds": args.download_seconds, "slice_hours": args.slice_hours}
             for g in graphs for s in range(runs) for k in kinds]
    results: list[dict[str, Any]] = []
    bar = tqdm(total=len(tasks), desc="palotai runs", unit="run")
    if args.jobs > 1 and len(tasks) > 1:
        with ProcessPoolExecutor(max_workers=args.jobs) as ex:
            futs = [ex.submit(run_task, t) for t in tasks]
            for f in as_completed(futs):
                results.append(f.result())
                bar.update()
    else:
        for t in tasks:
            results.append(run_task(t))
            bar.update()
            bar.set_postfix_str(f"{t['graph']} {t['kind']} seed {t['seed']}")
    bar.close()
    results.sort(key=lambda r: (GRAPHS.index(r["graph"]), KINDS.index(r["kind"]), r["seed"]))
    gstats = {}
    for g in graphs:
        s = graph_statistics(_web(pages, hours, args.web_seed, g), n_sources=200 if q else 500)
        gstats[g] = {k: v for k, v in s.items() if k != "method"}
        gstats[g]["method"] = s["method"]
    table = summarize(results)
    v = verdicts(table)
    res: dict[str, Any] = {
        "benchmark": "palotai", "command": "gym-crawl bench palotai " + " ".join(argv or []),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
        "config": {"pages": pages, "hours": hours, "step_hours": args.step_hours, "web_seed": args.web_seed,
                   "clock": args.clock, "download_seconds": args.download_seconds, "slice_hours": args.slice_hours,
                   "runs": runs, "kinds": kinds, "graphs": graphs,
                   "steps": int(np.ceil(hours / args.step_hours - 1e-9)),
                   "td_step": "α / max(1, ‖state‖²), α = 0.1" if args.normalized_td else "the paper's α = 0.1"},
        "paper": {"table2": {k: {m: list(x) for m, x in d.items()} for k, d in PAPER.items()},
                  "graphs": PAPER_GRAPH},
        "graphs": gstats,
        "table": {g: {k: {m: (list(x) if isinstance(x, tuple) else x) for m, x in c.items()} for k, c in cells.items()}
                  for g, cells in table.items()},
        "verdicts": v, "verdict_text": verdict_text(v) if v else "",
        "runs": results,
    }
    res["figures"] = figures(results, table, out)
    res["wall_seconds"] = time.perf_counter() - t0
    write_json_report(out / "palotai.json", res, "palotai", args)
    atomic_write_bytes(out / "palotai.md", (markdown_banner(args.quick) + _md(res)).encode())
    print(f"wrote {out / 'palotai.json'}, {out / 'palotai.md'} and {len(res['figures'])} figures")
    for g, cells in table.items():
        for k, c in cells.items():
            print(f" - {g} {LABEL[k]}: freshness {_fmt('freshness', c['freshness'])}, sent efficiency "
                  f"{_fmt('sent_efficiency', c['sent_efficiency'])}, age {_fmt('age_hours', c['age_hours'])} h")
    if res["verdict_text"]:
        print(res["verdict_text"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
