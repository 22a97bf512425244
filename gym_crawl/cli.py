"""The ``gym-crawl`` command (also ``python -m gym_crawl``).

Sub-commands: ``eval`` (agents × a task set × seeds → normalized scores on its test topics next to random,
best-first and oracle), ``crawl`` (run agents, print a summary table, write a PNG curve; ``--live URL ...``: one
agent as a polite crawler of real sites, recorded to WARC), ``download``
(fetch a real corpus into the cache), ``corpus info`` / ``corpus compile``, ``agents`` (list),
``bench NAME`` (a benchmark of ``benchmarks/``), ``train`` (Stable-Baselines3 training) and ``serve`` (a
corpus, folders of HTML or the misbehaving demo site as hosts on loopback).

This module is the application layer: it sits above ``agents`` and ``benchmarks`` and imports
them lazily, so ``import gym_crawl`` never pulls them in.

Output: results (tables, JSON rows, the paths ``download`` and ``corpus compile`` produce) go to stdout;
diagnostics (such as where ``--plot`` wrote its curve) go to stderr through the ``gym_crawl`` logger —
``-v`` adds debug lines, ``-q`` keeps only warnings and errors (``-qq``: errors).
Progress is a tqdm bar on a terminal or in a notebook, and otherwise (a log file, CI) one log line every
few seconds.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["main", "build_parser"]

log = logging.getLogger("gym_crawl")


def _setup_logging(verbose: int = 0, quiet: int = 0) -> None:
    """Send the ``gym_crawl`` logger to stderr at INFO (``-v``: DEBUG, ``-q``: WARNING, ``-qq``: ERROR)."""
    level = min(logging.CRITICAL, max(logging.DEBUG, logging.INFO - 10 * verbose + 10 * quiet))
    for h in [h for h in log.handlers if getattr(h, "_gym_crawl_cli", False)]:
        log.removeHandler(h)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("gym-crawl: %(message)s"))
    handler._gym_crawl_cli = True  # type: ignore[attr-defined]
    log.addHandler(handler)
    log.setLevel(level)
    log.propagate = False


class _Progress:
    """Progress of one episode's steps: a tqdm bar (``tqdm.auto``) when stderr is a terminal or in a Jupyter
    kernel; otherwise an INFO log line every ``every`` seconds (and none when logging is above INFO)."""

    def __init__(self, total: int, desc: str, every: float = 5.0):
        self.total, self.desc, self.every, self.n = total, desc, every, 0
        self._t0 = self._last = time.monotonic()
        self.bar: Any = None
        if log.isEnabledFor(logging.INFO) and (sys.stderr.isatty() or "ipykernel" in sys.modules):
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc=desc, leave=False)

    def update(self, k: int = 1) -> None:
        self.n += k
        if self.bar is not None:
            self.bar.update(k)
            return
        now = time.monotonic()
        if now - self._last >= self.every:
            self._last = now
            log.info("%s: %d/%d steps, %.0f s", self.desc, self.n, self.total, now - self._t0)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


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


def _add_verbosity(p: argparse.ArgumentParser, default: Any) -> None:
    p.add_argument("-v", "--verbose", action="count", default=default, help="more diagnostics on stderr (-vv: more)")
    p.add_argument("-q", "--quiet", action="count", default=default,
                   help="only warnings and errors on stderr (-qq: errors); results still go to stdout")


def build_parser() -> argparse.ArgumentParser:
    from gym_crawl import __version__

    ap = argparse.ArgumentParser(prog="gym-crawl", description="Focused web crawling as a Gymnasium environment.",
                                 formatter_class=_HelpFormatter)
    ap.add_argument("--version", action="version", version=f"gym-crawl {__version__}")
    _add_verbosity(ap, 0)
    sub = ap.add_subparsers(dest="cmd", required=True)
    common = argparse.ArgumentParser(add_help=False)
    _add_verbosity(common, argparse.SUPPRESS)  # also accepted after the sub-command

    fmt: dict[str, Any] = {"formatter_class": _HelpFormatter, "parents": [common]}
    c = sub.add_parser("crawl", **fmt, help="run one or more agents and report relevant pages found")
    c.add_argument("--agent", default="best-first",
                   help="agent name(s), comma-separated (see `gym-crawl agents`); sb3:<path> runs a trained SB3 policy "
                        "(agent.npz, a train output folder or a stock SB3 model.zip), rllib:<path> an RLlib one "
                        "(a `train --backend rllib` output folder)")
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
    lv.add_argument("--concurrency", type=int, default=None, metavar="N",
                    help="pages in flight at once, over all hosts (default 1; Scrapy's CONCURRENT_REQUESTS is 16); "
                         "each step dispatches one page and lands the ones that arrived")
    lv.add_argument("--per-host", type=int, default=None, metavar="N",
                    help="pages in flight per host (default 1: a host is fetched one request at a time anyway, "
                         "so more only queues there); a busy host's pages are not offered")
    lv.add_argument("--rate", type=float, default=None, metavar="R",
                    help="requests per second over all hosts (default 10; 0: no global limit — needed above 10 "
                         "pages/s)")

    d = sub.add_parser("download", **fmt, help="download a real corpus into the cache ($GYM_CRAWL_DATA)")
    d.add_argument("name", help="wikispeedia | simplewiki")
    d.add_argument("--dest", default=None, help="folder (default: the cache)")
    d.add_argument("--date", default="latest", help="dump date for simplewiki (YYYYMMDD or latest)")
    d.add_argument("--from", dest="from_path", default=None, metavar="PATH",
                   help="no download: register this local folder or archive (checked by loading it) as the "
                        "dataset, so --corpus NAME and `corpus info NAME` use it (env var: GYM_CRAWL_<NAME>)")

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

    from gym_crawl.web.serve.server import add_serve_arguments

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
    from gym_crawl.agents import make_env_for, run_episode
    from gym_crawl.corpus import load_corpus

    names = [n.strip() for n in args.agent.split(",") if n.strip()]
    if not names:
        raise ValueError(f"--agent {args.agent!r}: no agent name given (see `gym-crawl agents`)")
    if args.live:
        return _cmd_crawl_live(args, names)
    if args.warc or args.resume or args.max_pages is not None or args.concurrency is not None or \
            args.per_host is not None or args.rate is not None:
        raise SystemExit("--warc, --resume, --max-pages, --concurrency, --per-host and --rate go with --live URL ...")
    if (args.load or args.save) and len(names) != 1:
        raise SystemExit("--load/--save need exactly one --agent")
    plot = args.plot
    for flag, out in (("--save", args.save), ("--plot", plot)):
        if out:
            _check_writable(out, flag)
    from gym_crawl import __version__

    results, rows = [], []
    corpus_cache: dict[str, Any] = {}
    for name in names:
        agent = _load_agent(name, args.load)
        kw = _env_overrides(args)
        if isinstance(kw["corpus"], str):
            kw["corpus"] = corpus_cache.setdefault(kw["corpus"], load_corpus(kw["corpus"]))
        env = make_env_for(agent, **kw)
        view = env.unwrapped.view
        about = {"agent": name, "agent_name": agent.name, "corpus": str(args.corpus),
                 "reward": view.reward_name, "K": int(view.max_candidates), "features": view.feature_set_name,
                 "reducer": view.reducer_name, "budget": args.steps, "gym_crawl_version": __version__}
        if args.load:
            about["loaded_from"] = str(args.load)
        for ep in range(args.episodes):
            bar = _Progress(args.steps, f"{name} ep {ep + 1}/{args.episodes}")
            res = run_episode(env, agent, seed=args.seed + ep, on_step=lambda t, info, bar=bar: bar.update(1))
            bar.close()
            row = {**res.summary(), **about, "topic": res.topic, "episode": ep, "seed": args.seed + ep}
            results.append(res)
            rows.append(row)
            if args.json:
                print(json.dumps(row), flush=True)
        if args.save:
            agent.save(args.save)
        env.close()
    if not args.json:
        _print_table(rows)
    if plot:
        _plot_curves(results, rows, Path(plot))
        log.info("curve written to %s", plot)
    return 0


def _load_agent(name: str, load: str | None) -> Any:
    from gym_crawl.agents import Agent, make_agent

    if name.startswith("sb3:"):
        from gym_crawl.agents.sb3.agent import load_sb3_agent

        return load_sb3_agent(name.split(":", 1)[1])
    if name.startswith("rllib:"):
        from gym_crawl.agents.rllib.agent import load_rllib_agent

        return load_rllib_agent(name.split(":", 1)[1])
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
    for flag, v in (("--concurrency", args.concurrency), ("--per-host", args.per_host)):
        if v is not None and v < 1:
            raise SystemExit(f"{flag} must be an integer >= 1, got {v} (--concurrency 16 --per-host 1 keeps 16 "
                             f"hosts busy, one request each)")
    if args.rate is not None and not (args.rate >= 0 and args.rate != float("inf")):
        raise SystemExit(f"--rate must be a number of requests per second >= 0 (0: no global limit), got {args.rate}")
    pages = args.max_pages if args.max_pages is not None else args.steps
    agent = _load_agent(names[0], args.load)
    text = load_corpus(args.text) if args.text else None
    over = {k: v for k, v in _env_overrides(args).items()
            if k in ("reward", "features", "reducer", "max_candidates", "domain_cap") and v is not None}
    res = crawl_live(agent, list(args.live), max_pages=pages, warc=args.warc, topic=args.topic, seed=args.seed,
                     scope=args.scope, delay=args.delay, contact=args.user_agent_contact, text=text,
                     resume=args.resume, capacity=args.capacity, env_overrides=over,
                     concurrency=args.concurrency or 1, per_host=args.per_host or 1,
                     rate=10.0 if args.rate is None else (args.rate or None))
    if args.save:
        agent.save(args.save)
    summary = res.summary()
    if args.json:
        print(json.dumps(summary), flush=True)
    else:
        for k, v in summary.items():
            print(f"{k:>24}: {v}")
    return 0


def _print_table(rows: Sequence[dict[str, Any]]) -> None:
    """The summary table: one line per episode; the agent column is the spec given to ``--agent``."""
    cols = ["agent", "episode", "seed", "topic", "reward", "K", "steps", "relevant_found", "harvest_rate",
            "relevant_domains", "seconds", "steps_per_second"]
    cells = [[str(r[c]) for c in cols] for r in rows]
    w = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w[i]) for i, c in enumerate(cols)))
    print("  ".join("-" * w[i] for i in range(len(cols))))
    for r in cells:
        print("  ".join(v.ljust(w[i]) for i, v in enumerate(r)))


def _plot_label(row: dict[str, Any], n_episodes: int) -> str:
    """A curve's label: the agent spec (a model's file name, not just ``sb3``), plus ``ep N`` (numbered per
    agent) when that agent ran several episodes."""
    spec = str(row["agent"])
    if ":" in spec:
        kind, path = spec.split(":", 1)
        p = Path(path)
        spec = f"{kind}:{p.parent.name + '/' if p.parent.name else ''}{p.name}"
    if row.get("loaded_from"):
        spec += f" ({Path(row['loaded_from']).name})"
    return f"{spec} ep {row['episode'] + 1}" if n_episodes > 1 else spec


def _plot_curves(results: Sequence[Any], rows: Sequence[dict[str, Any]], path: Path) -> None:
    """Relevant pages per step, one curve per episode: a colour per agent (stable across runs), later episodes of
    a learner darker, the bounds (``random``, ``oracle``) dashed, the legend outside the axes."""
    import matplotlib

    matplotlib.use("Agg")
    from gym_crawl.benchmarks._plotting import BOUNDS, _plt, agent_colors, save_png

    plt = _plt()
    n_eps = {r["agent"]: sum(x["agent"] == r["agent"] for x in rows) for r in rows}
    colors = agent_colors(str(r["agent"]) for r in rows)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for res, row in zip(results, rows):
        n = n_eps[row["agent"]]
        alpha = 0.35 + 0.65 * (row["episode"] + 1) / n if n > 1 else 1.0
        ax.plot(range(1, len(res.relevant_curve) + 1), res.relevant_curve, color=colors[str(row["agent"])],
                alpha=alpha, ls="--" if row["agent"] in BOUNDS else "-", label=_plot_label(row, n))
    ax.set_xlabel("step (pages fetched after the seeds)")
    ax.set_ylabel("relevant pages found (accumulated)")
    topics = sorted({r["topic"] for r in rows})
    same = [f"{k} {next(iter(v))}" for k, v in (("reward", {r["reward"] for r in rows}),
                                                  ("K", {r["K"] for r in rows})) if len(v) == 1]
    ax.set_title("; ".join([f"topic: {', '.join(topics)}", *same]) if rows else "")
    ax.grid(alpha=0.3)
    if rows:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_png(fig, path)


def _cmd_download(args: argparse.Namespace) -> int:
    if args.from_path:
        from gym_crawl.corpus import load_corpus
        from gym_crawl.corpus.download import register_local_copy

        def check(p: Path) -> Any:  # load (and compile into the cache) with the dataset's own loader
            if args.name == "wikispeedia":
                from gym_crawl.corpus.wikispeedia import load_wikispeedia

                return load_wikispeedia(p)
            return load_corpus(p)

        path = register_local_copy(args.name, args.from_path, check=check)
        print(path)
        log.info("%s: using the local copy %s (--corpus %s, `corpus info %s`)", args.name, path, args.name,
                 args.name)
        return 0
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
    lead = 0
    while lead < len(argv) and argv[lead] in ("-v", "-vv", "--verbose", "-q", "-qq", "--quiet"):
        lead += 1
    if lead < len(argv) and argv[lead] in ("train", "eval"):
        flags, argv = argv[:lead], argv[lead:]
        _setup_logging(sum(f.count("v") if f.startswith("-v") else int(f == "--verbose") for f in flags),
                       sum(f.count("q") if f.startswith("-q") else int(f == "--quiet") for f in flags))
    if argv and argv[0] == "eval":
        from gym_crawl.benchmarks._evaluate import main as eval_main

        try:
            return int(eval_main(argv[1:]) or 0)
        except (ValueError, KeyError, FileNotFoundError) as e:
            print(f"gym-crawl eval: error: {e.args[0] if isinstance(e, KeyError) and e.args else e}", file=sys.stderr)
            return 2
    if argv and argv[0] == "train":
        from gym_crawl.agents.rllib.train import main as rllib_main
        from gym_crawl.agents.rllib.train import requested_backend

        if requested_backend(argv[1:]) == "rllib":  # Ray RLlib (docs/rllib.md); importing it does not load Ray
            return int(rllib_main(argv[1:]) or 0)
        from gym_crawl.benchmarks._train_report import main as train_main

        return int(train_main(argv[1:]) or 0)
    args = build_parser().parse_args(argv)
    _setup_logging(args.verbose, args.quiet)
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
            from gym_crawl.web.serve.server import serve_command

            return serve_command(args)
    except (ValueError, KeyError, FileNotFoundError, FileExistsError) as e:
        msg = str(e.args[0] if isinstance(e, KeyError) and e.args else e)
        if args.cmd == "crawl" and "max_candidates" in msg and "--k" not in msg:
            msg += " (K: set it with --k)"  # the env's keyword is max_candidates; the CLI's flag is --k
        print(f"gym-crawl: error: {msg}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
