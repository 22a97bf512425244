"""``gym-crawl corpus info`` / ``corpus compile``: what a corpus holds, and any corpus source saved compiled."""
from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

from gym_crawl.cli.options import HelpFormatter, add_verbosity, check_writable, int_at_least
from gym_crawl.corpus import CORPUS_KINDS, load_corpus
from gym_crawl.corpus.core import check_corpus_destination
from gym_crawl.web.warc_labels import read_label_map, read_label_rules

__all__ = ["add_arguments", "run"]

log = logging.getLogger("gym_crawl")


def add_arguments(co: argparse.ArgumentParser) -> None:
    """The sub-commands of ``gym-crawl corpus``: ``info`` and ``compile``."""
    common = argparse.ArgumentParser(add_help=False)
    add_verbosity(common, argparse.SUPPRESS)  # also accepted after the sub-command
    fmt: dict[str, Any] = {"formatter_class": HelpFormatter, "parents": [common]}
    cs = co.add_subparsers(dest="corpus_cmd", required=True)
    ci = cs.add_parser("info", **fmt,
                       help="counts, degree statistics, topics and the most frequent labels with seeds")
    ci.add_argument("spec", nargs="?", default="synthetic", metavar="CORPUS",
                    help="a registered corpus name (synthetic, synthetic-hard, wikispeedia, docs-web, ...) or a path "
                         "any loader reads (a compiled corpus folder, WARC files, a MediaWiki dump, ...)")
    ci.add_argument("--json", action="store_true", help="print everything as one JSON object instead of text")
    ci.add_argument("--labels", type=int_at_least(0), default=10, help="how many of the most frequent labels to list")
    cc = cs.add_parser("compile", **fmt, help="load any corpus source and save it as a compiled corpus directory",
                       description="Load a corpus source (a WARC file, folder or glob; an HTML folder; a dump; a "
                                   "registered name) and save it as a compiled corpus directory OUT, which --corpus "
                                   "OUT then opens memory-mapped. A WARC's pages may be labelled on the way, so that "
                                   "each label is a topic (--topic LABEL) with its own reward.")
    cc.add_argument("spec", metavar="SOURCE", help="what to compile: e.g. crawl.warc.gz, a folder of WARC files, "
                                                   "'crawls/*.warc.gz'")
    cc.add_argument("out", metavar="OUT", help="the compiled corpus directory to write")
    cc.add_argument("--labels", metavar="FILE", default=None,
                    help="WARC only: URL -> label(s), one 'URL<TAB>label[<TAB>label...]' a line (a .json "
                         "{url: label} or .csv url,label file also works)")
    cc.add_argument("--label-rules", metavar="FILE", default=None,
                    help="WARC only: one 'URL-prefix<TAB>label' or 're:REGEX<TAB>label' a line; the longest "
                         "matching prefix wins, then the first matching regular expression ('#' lines are "
                         "comments)")


def _warc_summary_line(w: dict) -> str:
    """One paragraph of what a WARC compile kept and skipped (``corpus.meta["warc_summary"]``)."""
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(w.get("skipped", {}).items()) if v) or "none"
    d, r = w.get("duplicates", {}), w.get("redirects", {})
    bad = w.get("unreadable_files") or {}
    return (f"\nWARC: {w.get('files')} file(s), {w.get('records')} records -> {w.get('fetched_pages')} pages "
            f"(+{w.get('unfetched_pages', 0)} unfetched), {w.get('links')} links\n"
            f"  skipped: {skipped}\n  duplicates merged: {d.get('url', 0)} by URL, {d.get('payload_digest', 0)} "
            f"by payload digest; redirects: {r.get('records', 0)} records, {r.get('used', 0)} resolved"
            + (f"\n  unreadable files: {', '.join(bad)}" if bad else "")
            + (f"\n  labelled pages: {w['labelled_pages']}" if w.get("labelled_pages") else ""))


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
        if corpus.meta.get("default_seeds"):
            print(f"\nseeds (the recorded crawl's start pages, the default seeds of a topic here): "
                  f"{' '.join(corpus.meta['default_seeds'])}")
        print(f"\ntopics ({len(topics)}): use --topic NAME" if topics else "\ntopics: none named in this corpus; "
              "use a label below (--topic LABEL --seed-pages PAGE) or topic words")
        for name, t in topics.items():
            print(f"  {name:<24} seeds {t.get('seeds', [])}" + (f"  label {t['label']}" if t.get("label") else ""))
        if top:
            more = f"; --labels {info['labels']} lists them all" if len(top) < info["labels"] else ""
            print(f"\nmost frequent labels (of {info['labels']}{more}), with the most in-linked page as a suggested "
                  f"seed:")
            w = max(len(t["label"]) for t in top)
            for t in top:
                print(f"  {t['label']:<{w}}  {t['pages']:>7} pages   --topic {t['label']} --seed-pages "
                      f"{json.dumps(t['seed'], ensure_ascii=False)}  ({t['seed_in_links']} in-links)")
        return 0
    _check_compile_destination(args.spec, args.out)
    kwargs = _label_options(args)
    corpus = load_corpus(args.spec, **kwargs)
    if kwargs:
        _report_labels(corpus)
    print(corpus.save(args.out))
    return 0


def _label_options(args: argparse.Namespace) -> dict[str, Any]:
    """``labels=`` / ``label_rules=`` of ``corpus compile``, read (and every line checked) before the compile;
    refused for a source that is not WARC (only a WARC's pages have URLs to label)."""
    given = {k: v for k, v in (("labels", args.labels), ("label_rules", args.label_rules)) if v is not None}
    if not given:
        return {}
    flags = " and ".join(f"--{k.replace('_', '-')}" for k in given)
    path = Path(args.spec).expanduser()
    kind = CORPUS_KINDS.detect(path) if path.exists() or any(c in args.spec for c in "*?[") else None
    if kind != "warc":
        verb = "label" if len(given) > 1 else "labels"
        raise ValueError(f"{flags} {verb} the pages of a WARC source by URL; {args.spec!r} is "
                         f"{'a ' + kind + ' corpus' if kind else 'not a WARC file, folder or glob'}")
    out: dict[str, Any] = {}
    if "labels" in given:
        out["labels"] = read_label_map(given["labels"])
    if "label_rules" in given:
        out["label_rules"] = read_label_rules(given["label_rules"])
    return out


def _report_labels(corpus: Any) -> None:
    """One diagnostic line: how many pages the labels reached, and a warning when none or when map URLs missed."""
    w = corpus.meta.get("warc_summary") or {}
    labelled, pages = int(w.get("labelled_pages", 0)), corpus.n_pages
    missed = int(w.get("label_map_unmatched", 0))
    if labelled == 0:
        log.warning("no page of %s matched a label or label rule: check the URLs (canonical form, e.g. %s)",
                    corpus.name, corpus.url(0) if corpus.urls is not None and pages else "?")
    else:
        log.info("labelled %d of %d pages with %d label(s)", labelled, pages, len(corpus.labels))
    if missed:
        log.warning("%d URL(s) of --labels are not pages of this archive", missed)


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
