"""Which agent ``gym-crawl crawl --live`` runs when no ``--agent`` is given: whoever wins the recorded benchmark.

The package records the decision in ``gym_crawl/agents/data/live_default.json`` (package data): the candidate (the
learner the package ships), the baseline (``best-first``), the benchmark of a user's deployment they were measured
on (its command) and both agents' IQM 95 % CIs in each group of tasks. The rule (:func:`decide`): the candidate is
the default only when the lower end of its CI lies above the upper end of the baseline's in every group; otherwise,
and while no such benchmark is recorded, the baseline stays. :func:`live_default_agent` reads the file, checks that its
``default`` is what the rule gives for its recorded CIs, and returns it; ``gym-crawl bench live_default --from
transfer.json`` writes the file from a ``gym-crawl bench transfer`` result. The candidate must lie above in every
group of tasks the record holds (the genre and the topic tasks), not only over all tasks pooled.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["BASELINE", "CANDIDATE", "decide", "live_default_agent", "live_default_path", "record_from_summary"]

BASELINE = "best-first"
"""The default while no benchmark shows a learner's CI above it."""
CANDIDATE = "best-first-mix+pretrained"
"""The learner the package ships: the default once a recorded benchmark shows its CI above the baseline's."""


def live_default_path() -> Path:
    """``gym_crawl/agents/data/live_default.json``: the recorded decision (package data)."""
    from importlib.resources import files

    return Path(str(files("gym_crawl.agents").joinpath("data", "live_default.json")))


def _ci(v: Any, what: str) -> tuple[float, float] | None:
    if v is None:
        return None
    if not isinstance(v, Sequence) or len(v) != 2 or not all(isinstance(x, (int, float)) for x in v):
        raise ValueError(f"live default: {what} must be [low, high] or null, got {v!r}")
    return float(v[0]), float(v[1])


def decide(groups: Mapping[str, Mapping[str, Any]], candidate: str = CANDIDATE, baseline: str = BASELINE) -> str:
    """The default agent: ``candidate`` when, in **every** group of tasks of ``groups`` (``{name: {"candidate_ci":
    [lo, hi], "baseline_ci": [lo, hi]}}``: e.g. the genre and the topic tasks), the lower end of its CI lies above
    the upper end of ``baseline``'s; else ``baseline`` (also with no group, or a CI missing: nothing measured, no
    change). A learner that wins on one kind of task and loses on another does not replace the default."""
    if not groups:
        return baseline
    for name, g in groups.items():
        c, b = _ci(g.get("candidate_ci"), f"{name}.candidate_ci"), _ci(g.get("baseline_ci"), f"{name}.baseline_ci")
        if c is None or b is None or not c[0] > b[1]:
            return baseline
    return candidate


def record_from_summary(summary: Mapping[str, Any], run_name: str, *, groups: Sequence[str] = ("genre", "topic"),
                        command: str = "", candidate: str = CANDIDATE) -> dict[str, Any]:
    """The decision record of a ``gym-crawl bench transfer`` summary: ``run_name`` (the candidate's name in that
    run, e.g. ``"best-first-mix+pretrained/online"``) against best-first in each of ``groups`` (the summary's task
    groups; a run of one task family has only ``"all"``, which is then used)."""
    names = [g for g in groups if g in summary] or (["all"] if "all" in summary else [])
    if not names:
        raise ValueError(f"live default: none of the groups {list(groups)} is in the summary; it has {sorted(summary)}")
    rec_groups: dict[str, Any] = {}
    for g in names:
        rows = summary[g]["agents"]
        for a in (run_name, BASELINE):
            if a not in rows or "ci" not in rows[a]:
                raise ValueError(f"live default: the summary's group {g!r} has no IQM CI of {a!r}; agents: "
                                 f"{sorted(rows)}")
        rec_groups[g] = {"tasks": summary[g].get("tasks"), "candidate_iqm": rows[run_name]["iqm"],
                         "candidate_ci": list(rows[run_name]["ci"]), "baseline_iqm": rows[BASELINE]["iqm"],
                         "baseline_ci": list(rows[BASELINE]["ci"]),
                         "wtl_vs_best_first": rows[run_name].get("wtl_vs_best_first")}
    default = decide(rec_groups, candidate)
    parts = [f"{g}: {run_name} {v['candidate_iqm']:.3f} [{v['candidate_ci'][0]:.3f}, {v['candidate_ci'][1]:.3f}] "
             f"{'above' if v['candidate_ci'][0] > v['baseline_ci'][1] else 'not above'} best-first's "
             f"{v['baseline_iqm']:.3f} [{v['baseline_ci'][0]:.3f}, {v['baseline_ci'][1]:.3f}]"
             for g, v in rec_groups.items()]
    return {"candidate": candidate, "baseline": BASELINE, "run_name": run_name, "command": command,
            "groups": rec_groups, "default": default,
            "why": "; ".join(parts) + (": the shipped learner is above in every group" if default == candidate else
                                       ": not above in every group, best-first stays")}


def live_default_agent(path: str | Path | None = None) -> str:
    """The agent ``crawl --live`` runs by default: the recorded decision (:func:`live_default_path`), checked
    against the rule (:func:`decide`) for its recorded CIs; ``ValueError`` naming the file when they disagree or
    the file is damaged."""
    p = Path(path) if path is not None else live_default_path()
    try:
        rec = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{p}: the recorded live default is unreadable ({e})") from None
    if not isinstance(rec, dict) or not isinstance(rec.get("default"), str) or not isinstance(rec.get("groups"), dict):
        raise ValueError(f"{p}: the recorded live default has no 'default' agent name and 'groups' of figures")
    want = decide(rec["groups"], str(rec.get("candidate", CANDIDATE)), str(rec.get("baseline", BASELINE)))
    if rec["default"] != want:
        raise ValueError(f"{p}: records default {rec['default']!r}, but its CIs make it {want!r}")
    return str(rec["default"])
