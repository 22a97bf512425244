"""``gym-crawl corpus info`` / ``corpus compile``: what a corpus holds, and any corpus source saved compiled."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from gym_crawl.cli.options import HelpFormatter, add_verbosity, check_writable, int_at_least
from gym_crawl.corpus import load_corpus
from gym_crawl.corpus.core import check_corpus_destination

__all__ = ["add_arguments", "run"]


def add_arguments(co: argparse.ArgumentParser) -> None:
    """The sub-commands of ``gym-crawl corpus``: ``info`` and ``compile``."""
    common = argparse.ArgumentParser(add_help=False)
    add_verbosity(common, argparse.SUPPRESS)  # also accepted after the sub-command
    fmt: dict[str, Any] = {"formatter_class": HelpFormatter, "parents": [common]}
    cs = co.add_subparsers(dest="corpus_cmd", required=True)
    ci = cs.add_parser("info", **fmt,
                       help="counts, degree statistics, topics and the most frequent labels with seeds")
    ci.add_argument("spec", nargs="?", default="synthetic")
    ci.add_argument("--json", action="store_true")
    ci.add_argument("--labels", type=int_at_least(0), default=10, help="how many of the most frequent labels to list")
    cc = cs.add_parser("compile", **fmt, help="load any corpus source and save it as a compiled corpus directory")
    cc.add_argument("spec")
    cc.add_argument("out")


def _warc_summary_line(w: dict) -> str:
    """One paragraph of what a WARC compile kept and skipped (``corpus.meta["warc_summary"]``)."""
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(w.get("skipped", {}).items()) if v) or "none"
    d, r = w.get("duplicates", {}), w.get("redirects", {})
    bad = w.get("unreadable_files") or {}
    return (f"\nWARC: {w.get('files')} file(s), {w.get('records')} records -> {w.get('fetched_pages')} pages "
            f"(+{w.get('unfetched_pages', 0)} unfetched), {w.get('links')} links\n"
            f"  skipped: {skipped}\n  duplicates merged: {d.get('url', 0)} by URL, {d.get('payload_digest', 0)} "
            f"by payload digest; redirects: {r.get('records', 0)} records, {r.get('used', 0)} resolved"
            + (f"\n  unreadable files: {', '.join(bad)}" if bad else ""))


def run(args: argparse.Namespace) -> int:
    """``gym-crawl corpus info`` / ``corpus compile``."""
    if args.corpus_cmd == "info":
        corpus = load_corpus(args.spec)
        info = corpus.summary(top_labels=args.labels)
        warc = corpus.meta.get("warc_summary")
        if args.json:
            print(json.dumps({**info, **({"warc_summary": warc} if warc else {})}, indent=2))
            return 0
        topics, top = info.pop("topics"), info.pop("top_labels")
        for k, v in info.items():
            print(f"{k:>20}: {v}")
        if warc:
            print(_warc_summary_line(warc))
        print(f"\ntopics ({len(topics)}): use --topic NAME" if topics else "\ntopics: none named in this corpus; "
              "use a label below (--topic LABEL --seeds TITLE) or topic words")
        for name, t in topics.items():
            print(f"  {name:<24} seeds {t.get('seeds', [])}" + (f"  label {t['label']}" if t.get("label") else ""))
        if top:
            print(f"\nmost frequent labels (of {info['labels']}), with the most in-linked page as a suggested seed:")
            w = max(len(t["label"]) for t in top)
            for t in top:
                print(f"  {t['label']:<{w}}  {t['pages']:>7} pages   --topic {t['label']} --seeds "
                      f"{json.dumps(t['seed'], ensure_ascii=False)}  ({t['seed_in_links']} in-links)")
        return 0
    _check_compile_destination(args.spec, args.out)
    corpus = load_corpus(args.spec)
    print(corpus.save(args.out))
    return 0


def _check_compile_destination(spec: str, out: str) -> None:
    """Refuse (before loading anything) a ``corpus compile`` destination that is the source, lies inside it or
    holds it, or that holds anything but a saved corpus (``FileExistsError`` / ``ValueError`` naming it)."""
    dest = Path(out).expanduser()
    src = Path(spec).expanduser()
    if src.exists():
        s, d = src.resolve(), dest.resolve()
        if s == d or s in d.parents or d in s.parents:
            raise ValueError(f"corpus compile: the destination {out} is (or holds, or lies in) the source {spec}; "
                             "give another folder — the source is never written")
    check_corpus_destination(dest)
    check_writable(str(dest / "manifest.json") if dest.is_dir() else str(dest), "corpus compile destination")
