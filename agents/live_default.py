"""Which agent ``gym-crawl crawl --live`` runs when no ``--agent`` is given: whoever wins the recorded benchmark.

The package records the decision in ``gym_crawl/agents/data/live_default.json`` (package data): the candidate (the
learner the package ships), the baseline (``best-first``), the benchmark of a user's deployment they were measured
on (its command, the group of tasks) and both agents' IQM 95 % CIs there. The rule (:func:`decide`): the candidate
is the default only when the lower end of its CI lies above the upper end of the baseline's; otherwise, and while
no such benchmark is recorded, the baseline stays. :func:`live_default_agent` reads the file, checks that its
``default`` is what the rule gives for its recorded CIs, and returns it; ``gym-crawl bench live_default --from
transfer.json`` writes the file from a ``gym-crawl bench transfer`` result.
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


def decide(candidate_ci: Sequence[float] | None, baseline_ci: Sequence[float] | None,
           candidate: str = CANDIDATE, baseline: str = BASELINE) -> str:
    """The default agent: ``candidate`` when its CI's lower end is above ``baseline``'s upper end, else ``baseline``
    (also when either CI is missing: nothing measured, no change)."""
    c, b = _ci(candidate_ci, "candidate_ci"), _ci(baseline_ci, "baseline_ci")
    return candidate if c is not None and b is not None and c[0] > b[1] else baseline


def record_from_summary(summary: Mapping[str, Any], run_name: str, *, group: str = "all",
                        command: str = "", candidate: str = CANDIDATE) -> dict[str, Any]:
    """The decision record of a ``gym-crawl bench transfer`` summary: ``run_name`` (the candidate's name in that
    run, e.g. ``"best-first-mix+pretrained/online"``) against best-first over the tasks of ``group``."""
    if group not in summary:
        raise ValueError(f"live default: group {group!r} not in the summary; it has {sorted(summary)}")
    rows = summary[group]["agents"]
    for a in (run_name, BASELINE):
        if a not in rows or "ci" not in rows[a]:
            raise ValueError(f"live default: the summary's group {group!r} has no IQM CI of {a!r}; agents: "
                             f"{sorted(rows)}")
    c, b = rows[run_name]["ci"], rows[BASELINE]["ci"]
    default = decide(c, b, candidate)
    return {"candidate": candidate, "baseline": BASELINE, "run_name": run_name, "group": group,
            "command": command, "tasks": summary[group].get("tasks"), "candidate_iqm": rows[run_name]["iqm"],
            "candidate_ci": list(c), "baseline_iqm": rows[BASELINE]["iqm"], "baseline_ci": list(b),
            "wtl_vs_best_first": rows[run_name].get("wtl_vs_best_first"), "default": default,
            "why": (f"{run_name}'s IQM CI [{c[0]:.3f}, {c[1]:.3f}] lies above best-first's [{b[0]:.3f}, {b[1]:.3f}]"
                    if default == candidate else
                    f"{run_name}'s IQM CI [{c[0]:.3f}, {c[1]:.3f}] does not lie above best-first's "
                    f"[{b[0]:.3f}, {b[1]:.3f}]")}


def live_default_agent(path: str | Path | None = None) -> str:
    """The agent ``crawl --live`` runs by default: the recorded decision (:func:`live_default_path`), checked
    against the rule (:func:`decide`) for its recorded CIs; ``ValueError`` naming the file when they disagree or
    the file is damaged."""
    p = Path(path) if path is not None else live_default_path()
    try:
        rec = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{p}: the recorded live default is unreadable ({e})") from None
    if not isinstance(rec, dict) or not isinstance(rec.get("default"), str):
        raise ValueError(f"{p}: the recorded live default has no 'default' agent name")
    want = decide(rec.get("candidate_ci"), rec.get("baseline_ci"), str(rec.get("candidate", CANDIDATE)),
                  str(rec.get("baseline", BASELINE)))
    if rec["default"] != want:
        raise ValueError(f"{p}: records default {rec['default']!r}, but its CIs make it {want!r}")
    return str(rec["default"])
