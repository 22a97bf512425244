"""The report of ``gym-crawl bench transfer``: normalized scores, IQM with bootstrap CIs per group, W/T/L against
best-first, the target check, and the Markdown table (:mod:`gym_crawl.benchmarks.transfer` runs the protocol)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gym_crawl.benchmarks.suite import score_matrices

__all__ = ["TARGET", "markdown", "normalized", "summarize", "wtl"]

TARGET = 0.75
"""The best deployable learner's IQM target (with its CI above best-first's)."""


def normalized(res: dict[str, Any], agents: Sequence[str], seeds: Sequence[int], tasks: Sequence[str]
               ) -> tuple[dict[str, np.ndarray], list[str], list[str]]:
    """``{agent: (n_seeds, n_kept_tasks) normalized scores}`` over ``tasks``, the kept and the dropped tasks
    (oracle ≤ random). random = the live random agent's mean over the seeds, oracle = the offline oracle."""
    by = {(r["agent"], r["task"], r["seed"]): r["found"] for r in res["runs"]}
    orc = {r["task"]: r["oracle"] for r in res["offline"]}
    kept, dropped, lo, hi = [], [], {}, {}
    for t in tasks:
        rnd = [by[("random", t, s)] for s in seeds if ("random", t, s) in by]
        if not rnd or t not in orc or not orc[t] > np.mean(rnd):
            dropped.append(t)
            continue
        kept.append(t)
        lo[t], hi[t] = float(np.mean(rnd)), float(orc[t])
    return (score_matrices(by, agents, seeds, kept, lo, hi) if kept else {}), kept, dropped


def wtl(res: dict[str, Any], agent: str, ref: str, tasks: Sequence[str], seeds: Sequence[int]) -> list[int]:
    """Wins, ties, losses of ``agent`` against ``ref`` over (task, seed) pairs (relevant pages found)."""
    by = {(r["agent"], r["task"], r["seed"]): r["found"] for r in res["runs"]}
    w = [0, 0, 0]
    for t in tasks:
        for s in seeds:
            if (agent, t, s) in by and (ref, t, s) in by:
                d = by[(agent, t, s)] - by[(ref, t, s)]
                w[0 if d > 0 else 1 if d == 0 else 2] += 1
    return w


def summarize(res: dict[str, Any], seeds: int, reps: int = 2000) -> dict[str, Any]:
    """IQM [95 % CI] of the normalized score per agent and group (all; each budget; each budget × seed kind),
    mean relevant pages, W/T/L against best-first; the target check per budget."""
    from gym_crawl.benchmarks.suite import iqm_ci

    seed_list = list(range(seeds))
    agents = list(dict.fromkeys(r["agent"] for r in res["runs"]))
    tasks = res["tasks"]
    budgets = sorted({v["budget"] for v in tasks.values()})
    groups: dict[str, list[str]] = {"all": sorted(tasks)}
    fams = sorted({v.get("family", "genre") for v in tasks.values()})
    if len(fams) > 1:
        for f in fams:
            groups[f] = sorted(t for t, v in tasks.items() if v.get("family", "genre") == f)
    for b in budgets:
        groups[f"B={b}"] = sorted(t for t, v in tasks.items() if v["budget"] == b)
        for k in ("near", "far"):
            groups[f"B={b} {k}"] = sorted(t for t, v in tasks.items() if v["budget"] == b and v["kind"] == k)
    by = {(r["agent"], r["task"], r["seed"]): r["found"] for r in res["runs"]}
    out: dict[str, Any] = {}
    for g, ts in groups.items():
        if not ts:
            continue
        scores, kept, dropped = normalized(res, agents, seed_list, ts)
        rows = {}
        for a in agents:
            found = [by[(a, t, s)] for t in ts for s in seed_list if (a, t, s) in by]
            row: dict[str, Any] = {"mean_found": float(np.mean(found)) if found else None,
                                   "wtl_vs_best_first": wtl(res, a, "best-first", ts, seed_list)}
            if a in scores:
                p, lo, hi = iqm_ci(scores[a], reps=reps)
                row.update(iqm=p, ci=[lo, hi], mean=float(scores[a].mean()))
            rows[a] = row
        bf = rows.get("best-first", {}).get("ci")
        learners = [a for a in agents if a not in ("random", "best-first") and "iqm" in rows[a]]
        best = max(learners, key=lambda a: rows[a]["iqm"], default=None)
        target = None
        if best is not None and bf is not None:
            target = {"best": best, "iqm": rows[best]["iqm"], "iqm_ok": rows[best]["iqm"] >= TARGET,
                      "ci_above_best_first": rows[best]["ci"][0] > bf[1],
                      "met": rows[best]["iqm"] >= TARGET and rows[best]["ci"][0] > bf[1]}
        out[g] = {"tasks": len(ts), "kept": kept, "dropped": dropped, "agents": rows, "target": target}
    return out


# ------------------------------------------------------------------------------------------ report
def _fmt(row: dict[str, Any]) -> str:
    if "iqm" not in row:
        return "—"
    return f"{row['iqm']:.3f} [{row['ci'][0]:.3f}, {row['ci'][1]:.3f}]"


def markdown(summary: dict[str, Any]) -> str:
    """The table: IQM [95 % CI] of the normalized score per agent × group, W/T/L against best-first (all
    tasks), mean relevant pages (all tasks)."""
    groups = [g for g in summary if g != "all"] + ["all"]
    agents = list(summary["all"]["agents"])
    head = "| agent | " + " | ".join(f"{g} (n={summary[g]['tasks'] - len(summary[g]['dropped'])})" for g in groups)
    lines = [head + " | W/T/L vs best-first | mean found |", "|---|" + "---|" * len(groups) + "---|---:|"]
    for a in agents:
        a_all = summary["all"]["agents"][a]
        w, t, lo = a_all["wtl_vs_best_first"]
        wt = "—" if a == "best-first" else f"{w}/{t}/{lo}"
        lines.append(f"| {a} | " + " | ".join(_fmt(summary[g]["agents"].get(a, {})) for g in groups)
                     + f" | {wt} | {a_all['mean_found']:.1f} |")
    notes = []
    for g in groups:
        tg = summary[g]["target"]
        if tg is not None:
            above = "above" if tg["ci_above_best_first"] else "not above"
            notes.append(f"{g}: best learner {tg['best']} IQM {tg['iqm']:.3f} ({'≥' if tg['iqm_ok'] else '<'} "
                         f"{TARGET}), CI {above} best-first's → target {'met' if tg['met'] else 'missed'}")
        if summary[g]["dropped"]:
            notes.append(f"{g}: dropped (oracle ≤ random): {', '.join(summary[g]['dropped'])}")
    return "\n".join(lines) + "\n\n" + "\n".join(f"- {n}" for n in notes) + "\n"
