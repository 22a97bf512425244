"""Record which agent `crawl --live` runs by default, from a `gym-crawl bench transfer` result of a user's deployment.

``gym-crawl bench live_default --from benchmarks/results/transfer/transfer.json [--run-name
best-first-mix+pretrained/online] [--groups genre topic] [--out agents/data/live_default.json]`` — reads the result's
summary, applies the rule of :func:`gym_crawl.agents.live_default.decide` (the shipped learner becomes the default
only when its IQM 95 % CI lies above best-first's in every group: the genre and the topic tasks) and writes the
decision record with the figures it came from; ``--out agents/data/live_default.json`` in a checkout is the file
the package ships.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    from gym_crawl._io import atomic_write_json
    from gym_crawl.agents.live_default import record_from_summary

    ap = argparse.ArgumentParser(prog="gym-crawl bench live_default", description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="source", required=True, type=Path,
                    help="a `gym-crawl bench transfer` transfer.json")
    ap.add_argument("--run-name", default="best-first-mix+pretrained/online",
                    help="the shipped learner's name in that run (default: best-first-mix+pretrained/online)")
    ap.add_argument("--groups", nargs="+", default=["genre", "topic"],
                    help="the summary's groups of tasks the learner must win in, each (default: genre topic)")
    ap.add_argument("--out", type=Path, default=Path("benchmarks") / "results" / "live_default" / "live_default.json",
                    help="where the record goes (agents/data/live_default.json ships it)")
    args = ap.parse_args(argv)
    try:
        res = json.loads(args.source.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"--from {args.source}: not a readable transfer.json ({e})") from None
    meta = res.get("meta", {})
    command = "gym-crawl bench transfer " + " ".join(str(a) for a in meta.get("argv", []))
    rec = record_from_summary(res["summary"], args.run_name, groups=args.groups, command=command.strip())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(args.out, rec)
    print(json.dumps(rec, indent=1))
    return 0
