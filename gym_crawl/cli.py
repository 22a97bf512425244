"""The ``gym-crawl`` command (also ``python -m gym_crawl``).

Sub-commands: ``eval`` (agents × a task set × seeds → normalized scores on its test topics next to random,
best-first and oracle), ``crawl`` (run agents, print a summary table, write a PNG curve; ``--live URL ...``: one
agent as a polite crawler of real sites, recorded to WARC), ``download``
(fetch a real corpus into the cache), ``corpus info`` / ``corpus compile``, ``agents`` (list),
``bench NAME`` (a benchmark of ``benchmarks/``), ``train`` (Stable-Baselines3 training) and ``serve`` (a
corpus, folders of HTML or the misbehaving demo site as hosts on loopback).

This module is the application layer: it sits above ``agents`` and ``benchmarks`` and imports
them lazily, so ``import gym_crawl`` never pulls them in.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["main", "build_parser"]


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default, except ``None`` (left to the agent or the corpus) and where the help
    already says it."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.default in (None, argparse.SUPPRESS) or action.nargs == 0 or "default" in text or not text:
            return action.help
        return super()._get_help_string(action)


def _benchmarks() -> dict[str, str]:
    """Name → first docstring sentence of every benchmark module (read from the source, nothing imported; modules
    whose name starts with ``_`` are internal and not listed)."""
    import ast
    import importlib.util
    import pkgutil

    spec = importlib.util.find_spec("gym_crawl.benchmarks")
    out: dict[str, str] = {}
    for m in sorted(pkgutil.iter_modules(list(spec.submodule_search_locations or [])) if spec else [],
                    key=lambda m: m.name):
        if m.name.startswith("_") or m.ispkg:
            continue
        path = Path(m.module_finder.path) / f"{m.name}.py"  # type: ignore[union-attr]
        try:
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        except (OSError, SyntaxError, ValueError):
            doc = ""
        first = " ".join(doc.strip().split("\n\n", 1)[0].split())
        out[m.name] = first if len(first) <= 100 else first[:99].rsplit(" ", 1)[0] + " …"
    return out


def _int_at_least(low: int) -> Any:
    """An argparse ``type``: an integer >= ``low`` (argparse reports anything else as a usage error)."""
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {text!r}") from None
        if v < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {v}")
        return v
    return parse


def _check_writable(path: str, flag: str) -> None:
    """Refuse (``ValueError`` naming ``flag``) an output file that cannot be written, before the run starts:
    a probe file is created and removed in its folder (an existing file must be writable itself)."""
    import os
    import tempfile

    p = Path(path).expanduser()
    if p.is_dir():
        raise ValueError(f"{flag} {path}: is a folder; give a file name")
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise ValueError(f"{flag} {path}: folder {folder} does not exist")
    if p.exists() and not os.access(p, os.W_OK):
        raise ValueError(f"{flag} {path}: the file is not writable")
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".probe", dir=folder)
    except OSError as e:
        raise ValueError(f"{flag} {path}: cannot write in {folder} ({e.strerror or e})") from None
    os.close(fd)
    os.unlink(probe)


def _add_env_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpus", default="synthetic", help="synthetic, synthetic-<N>, wikispeedia, simplewiki or a path")
    p.add_argument("--topic", default=None, help="topic key of the corpus, a label prefix, or topic words")
    p.add_argument("--seeds", default=None, help="comma-separated seed page titles (default: the topic's main page)")
    p.add_argument("--reward", default=None, help="han2018 | thesis | binary | labels | classifier (default: the "
                                                  "agent's choice, else labels for a topic with a label, else han2018)")
    p.add_argument("--features", default=None, help="feature set (default: the agent's choice, else combined)")
    p.add_argument("--reducer", default=None, help="topk | outlinks | random | full | tree (default: agent's choice)")
    p.add_argument("--k", type=_int_at_least(1), default=None,
                   help="candidate slots K (default: the agent's choice, else 64)")
    p.add_argument("--domain-cap", default=None, help="max pages per domain: an integer, inf, or A-B (adaptive)")


def build_parser() -> argparse.ArgumentParser:
    from gym_crawl import __version__

    ap = argparse.ArgumentParser(prog="gym-crawl", description="Focused web crawling as a Gymnasium environment.",
                                 formatter_class=_HelpFormatter)
    ap.add_argument("--version", action="version", version=f"gym-crawl {__version__}")
    sub = ap.add_subparsers(dest="cmd", required=True)

    fmt: dict[str, Any] = {"formatter_class": _HelpFormatter}
    c = sub.add_parser("crawl", **fmt, help="run one or more agents and report relevant pages found")
    c.add_argument("--agent", default="best-first",
                   help="agent name(s), comma-separated (see `gym-crawl agents`); sb3:<path> runs a trained SB3 policy")
    _add_env_args(c)
    c.add_argument("--steps", type=_int_at_least(1), default=1000, help="env steps per episode (page budget)")
    c.add_argument("--seed", type=_int_at_least(0), default=0, help="seed of the first episode (episode i: seed + i)")
    c.add_argument("--episodes", type=_int_at_least(1), default=1,
                   help="episodes per agent; learners keep their weights")
    c.add_argument("--json", action="store_true", help="print one JSON object per episode instead of a table")
    c.add_argument("--plot", default=None,
                   help="write a PNG of relevant pages per step to this file (default: no plot)")
    c.add_argument("--load", default=None, help="load agent parameters from this file (single agent)")
    c.add_argument("--save", default=None, help="save agent parameters to this file after the run (single agent)")
    lv = c.add_argument_group("live crawl (a polite crawler on real web sites; docs/live.md)")
    lv.add_argument("--live", nargs="+", metavar="URL", default=None,
                    help="crawl the live web from these seed URLs with one --agent (instead of --corpus)")
    lv.add_argument("--max-pages", type=int, default=None, help="pages to fetch after the seeds (default: --steps)")
    lv.add_argument("--warc", default=None, help="record every request and response (and the decisions) to this "
                                                 "WARC file (.warc.gz)")
    lv.add_argument("--resume", action="store_true",
                    help="continue the crawl recorded in --warc: its fetches are replayed from the file, then "
                         "the crawl goes on over the network (same --agent, --seed and seeds)")
    lv.add_argument("--scope", default="hosts", choices=["hosts", "domain", "any"],
                    help="which discovered URLs are crawled: the seeds' hosts (default), their registered "
                         "domains, or any")
    lv.add_argument("--delay", type=float, default=None, help="minimum seconds between requests to one host "
                                                               "(default 1; robots.txt crawl-delay is honoured)")
    lv.add_argument("--user-agent-contact", default=None, metavar="URL",
                    help="a contact URL put in the User-Agent, as polite crawlers do")
    lv.add_argument("--text", default=None, metavar="CORPUS",
                    help="corpus whose text model gives word vectors and IDF (the one the agent was trained "
                         "on); default: hashed vectors for every word")
    lv.add_argument("--capacity", type=int, default=None,
                    help="page capacity of the live web (page-mode action space; default max(10000, 50 x pages))")

    d = sub.add_parser("download", **fmt, help="download a real corpus into the cache ($GYM_CRAWL_DATA)")
    d.add_argument("name", help="wikispeedia | simplewiki")
    d.add_argument("--dest", default=None, help="folder (default: the cache)")
    d.add_argument("--date", default="latest", help="dump date for simplewiki (YYYYMMDD or latest)")

    co = sub.add_parser("corpus", **fmt, help="inspect or compile corpora")
    cs = co.add_subparsers(dest="corpus_cmd", required=True)
    ci = cs.add_parser("info", **fmt,
                       help="counts, degree statistics, topics and the most frequent labels with seeds")
    ci.add_argument("spec", nargs="?", default="synthetic")
    ci.add_argument("--json", action="store_true")
    ci.add_argument("--labels", type=_int_at_least(0), default=10, help="how many of the most frequent labels to list")
    cc = cs.add_parser("compile", **fmt, help="load any corpus source and save it as a compiled corpus directory")
    cc.add_argument("spec")
    cc.add_argument("out")

    sub.add_parser("agents", **fmt, help="list registered agents with one-line descriptions")

    b = sub.add_parser("bench", formatter_class=argparse.RawDescriptionHelpFormatter,
                       help="run a benchmark of benchmarks/ (e.g. env, han2018, thesis2021, tres, sb3)",
                       description="benchmarks (`gym-crawl bench NAME --help` for each one's options):\n"
                                   + "\n".join(f"  {n:<20} {d}" for n, d in _benchmarks().items()))
    b.add_argument("name")
    b.add_argument("args", nargs=argparse.REMAINDER,
                   help="arguments of the benchmark (see `gym-crawl bench NAME --help`)")

    from gym_crawl.corpus.live.serve import add_serve_arguments

    add_serve_arguments(sub.add_parser("serve", help="serve a corpus, folders of HTML or the misbehaving demo site "
                                                     "as hosts on loopback (127.0.0.0/8) until Ctrl-C"))

    e = sub.add_parser("eval", help="agents x a task set x seeds: normalized scores on its test topics next to "
                                    "random, best-first and oracle (see `gym-crawl eval --help`)", add_help=False)
    e.add_argument("args", nargs=argparse.REMAINDER)

    t = sub.add_parser("train", help="train a Stable-Baselines3 agent, or Ray RLlib with --backend rllib "
                                     "(see `gym-crawl train --help`)", add_help=False)
    t.add_argument("args", nargs=argparse.REMAINDER)
    return ap


def _env_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The user's env flags (unset ones are ``None`` and do not override the agent's defaults)."""
    seeds = [s.strip() for s in args.seeds.split(",") if s.strip()] if args.seeds else None
    return {"corpus": args.corpus, "topic": args.topic, "max_episode_steps": args.steps, "reward": args.reward,
            "features": args.features, "reducer": args.reducer, "max_candidates": args.k, "seeds": seeds,
            "domain_cap": args.domain_cap}


def _cmd_crawl(args: argparse.Namespace) -> int:
    from tqdm.auto import tqdm

    from gym_crawl.agents import make_env_for, run_episode
    from gym_crawl.corpus import load_corpus

    names = [n.strip() for n in args.agent.split(",") if n.strip()]
    if not names:
        raise ValueError(f"--agent {args.agent!r}: no agent name given (see `gym-crawl agents`)")
    if args.live:
        return _cmd_crawl_live(args, names)
    if args.warc or args.resume or args.max_pages is not None:
        raise SystemExit("--warc, --resume and --max-pages go with --live URL ...")
    if (args.load or args.save) and len(names) != 1:
        raise SystemExit("--load/--save need exactly one --agent")
    plot = args.plot
    for flag, out in (("--save", args.save), ("--plot", plot)):
        if out:
            _check_writable(out, flag)
    results = []
    corpus_cache: dict[str, Any] = {}
    for name in names:
        agent = _load_agent(name, args.load)
        kw = _env_overrides(args)
        if isinstance(kw["corpus"], str):
            kw["corpus"] = corpus_cache.setdefault(kw["corpus"], load_corpus(kw["corpus"]))
        env = make_env_for(agent, **kw)
        for ep in range(args.episodes):
            bar = tqdm(total=args.steps, desc=f"{name} ep{ep + 1}", leave=False,
                       disable=None if not args.json else True)
            res = run_episode(env, agent, seed=args.seed + ep, on_step=lambda t, info, bar=bar: bar.update(1))
            bar.close()
            results.append(res)
            if args.json:
                print(json.dumps({**res.summary(), "episode": ep, "corpus": str(args.corpus)}), flush=True)
        if args.save:
            agent.save(args.save)
        env.close()
    if not args.json:
        _print_table(results)
    if plot:
        _plot_curves(results, Path(plot))
        if not args.json:
            print(f"curve written to {plot}")
    return 0


def _load_agent(name: str, load: str | None) -> Any:
    from gym_crawl.agents import Agent, make_agent

    if name.startswith("sb3:"):
        from gym_crawl.agents.sb3_agent import load_sb3_agent

        return load_sb3_agent(name.split(":", 1)[1])
    if load:
        return Agent.load(load, expect=name)
    return make_agent(name)


def _cmd_crawl_live(args: argparse.Namespace, names: list[str]) -> int:
    """``crawl --live``: one agent as a polite live crawler (:func:`gym_crawl.agents.live_crawl.crawl_live`)."""
    from gym_crawl.agents.live_crawl import crawl_live
    from gym_crawl.corpus import load_corpus

    if len(names) != 1:
        raise SystemExit("--live runs exactly one --agent")
    if args.corpus != "synthetic" or args.seeds or args.episodes != 1:
        raise SystemExit("--live replaces --corpus and --seeds (the seed URLs) and runs one episode")
    if not args.topic:
        raise SystemExit("--live needs --topic WORDS (what the crawl looks for)")
    if args.resume and not args.warc:
        raise SystemExit("--resume needs --warc FILE (the crawl to continue)")
    pages = args.max_pages if args.max_pages is not None else args.steps
    agent = _load_agent(names[0], args.load)
    text = load_corpus(args.text) if args.text else None
    over = {k: v for k, v in _env_overrides(args).items()
            if k in ("reward", "features", "reducer", "max_candidates", "domain_cap") and v is not None}
    res = crawl_live(agent, list(args.live), max_pages=pages, warc=args.warc, topic=args.topic, seed=args.seed,
                     scope=args.scope, delay=args.delay, contact=args.user_agent_contact, text=text,
                     resume=args.resume, capacity=args.capacity, env_overrides=over)
    if args.save:
        agent.save(args.save)
    summary = res.summary()
    if args.json:
        print(json.dumps(summary), flush=True)
    else:
        for k, v in summary.items():
            print(f"{k:>24}: {v}")
    return 0


def _print_table(results: Sequence[Any]) -> None:
    cols = ["agent", "topic", "steps", "relevant_found", "harvest_rate", "relevant_domains", "seconds",
            "steps_per_second"]
    rows = [[str(r.summary()[c]) for c in cols] for r in results]
    w = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w[i]) for i, c in enumerate(cols)))
    print("  ".join("-" * w[i] for i in range(len(cols))))
    for r in rows:
        print("  ".join(v.ljust(w[i]) for i, v in enumerate(r)))


def _plot_curves(results: Sequence[Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, r in enumerate(results):
        ax.plot(range(1, len(r.relevant_curve) + 1), r.relevant_curve, label=f"{r.agent} (ep {i})" if
                sum(x.agent == r.agent for x in results) > 1 else r.agent)
    ax.set_xlabel("step (pages fetched after the seeds)")
    ax.set_ylabel("relevant pages found (accumulated)")
    ax.set_title(f"topic: {results[0].topic}" if results else "")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _cmd_download(args: argparse.Namespace) -> int:
    dest = Path(args.dest) if args.dest else None
    if args.name == "simplewiki":
        from gym_crawl.corpus.mediawiki import download_simplewiki

        print(download_simplewiki(args.date, dest))
        return 0
    from gym_crawl.corpus.download import download

    print(download(args.name, dest))
    return 0


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


def _cmd_corpus(args: argparse.Namespace) -> int:
    from gym_crawl.corpus import load_corpus

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
    corpus = load_corpus(args.spec)
    print(corpus.save(args.out))
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    import importlib

    mod_name = "gym_crawl.benchmarks." + args.name.replace("-", "_")
    try:
        mod = importlib.import_module(mod_name)
    except ModuleNotFoundError as e:
        if e.name != mod_name:
            raise
        import pkgutil

        import gym_crawl.benchmarks

        known = sorted(m.name for m in pkgutil.iter_modules(gym_crawl.benchmarks.__path__)
                       if not m.name.startswith("_"))
        import difflib

        close = difflib.get_close_matches(args.name.replace("-", "_"), known, n=3)
        hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
        raise SystemExit(f"unknown benchmark {args.name!r}{hint}; available: {known}") from None
    return int(mod.main(args.args) or 0)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "eval":
        from gym_crawl.benchmarks._evaluate import main as eval_main

        try:
            return int(eval_main(argv[1:]) or 0)
        except (ValueError, KeyError, FileNotFoundError) as e:
            print(f"gym-crawl eval: error: {e.args[0] if isinstance(e, KeyError) and e.args else e}", file=sys.stderr)
            return 2
    if argv and argv[0] == "train":
        from gym_crawl.agents.rllib_train import main as rllib_main
        from gym_crawl.agents.rllib_train import requested_backend

        if requested_backend(argv[1:]) == "rllib":  # Ray RLlib (docs/rllib.md); importing it does not load Ray
            return int(rllib_main(argv[1:]) or 0)
        from gym_crawl.benchmarks._train_report import main as train_main

        return int(train_main(argv[1:]) or 0)
    args = build_parser().parse_args(argv)
    try:
        if args.cmd == "crawl":
            return _cmd_crawl(args)
        if args.cmd == "download":
            return _cmd_download(args)
        if args.cmd == "corpus":
            return _cmd_corpus(args)
        if args.cmd == "agents":
            from gym_crawl.agents import AGENTS, agent_names

            agent_names()  # installed plug-ins' entry points included
            desc = AGENTS.describe()
            w = max(map(len, desc))
            print("\n".join(f"{n.ljust(w)}  {d}" for n, d in desc.items()))
            return 0
        if args.cmd == "bench":
            return _cmd_bench(args)
        if args.cmd == "serve":
            from gym_crawl.corpus.live.serve import serve_command

            return serve_command(args)
    except (ValueError, KeyError, FileNotFoundError, FileExistsError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"gym-crawl: error: {msg}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
