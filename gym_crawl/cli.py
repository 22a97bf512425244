"""The ``gym-crawl`` command (also ``python -m gym_crawl``).

Sub-commands: ``eval`` (agents × a task set × seeds → normalized scores on its test topics next to random,
best-first and oracle), ``crawl`` (run agents, print a summary table, write a PNG curve; ``--live URL ...``: one
agent as a polite crawler of real sites, recorded to WARC), ``download``
(fetch a real corpus into the cache), ``corpus info`` / ``corpus compile``, ``agents`` (list),
``bench NAME`` (a benchmark of ``benchmarks/``), ``train`` (Stable-Baselines3 training) and ``serve`` (a
corpus, folders of HTML or the misbehaving demo site as hosts on loopback).

Every command builds the default task's env (:data:`gym_crawl.envs.DEFAULT_ENV_ID`) unless told otherwise.

This module is the application layer: it sits above ``agents`` and ``benchmarks`` and imports
them lazily, so ``import gym_crawl`` never pulls them in.

Output (:mod:`gym_crawl._console`): results (tables, JSON rows, the paths ``download`` and ``corpus compile``
produce) go to stdout; progress (one labelled bar) and diagnostics (such as where ``--plot`` wrote its curve) go
to stderr through the ``gym_crawl`` logger — ``-v`` adds debug lines, ``-q`` keeps only warnings and errors
(``-qq``: errors). Errors read ``gym-crawl: error: ...``; exit codes: 0 done, 1 the run failed, 2 a usage error,
130 interrupted (Ctrl-C). A reader that closes the output early (``| head``) ends the command quietly.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import json
import logging
import os
import re
import shlex
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from gym_crawl._console import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    ArgumentParser,
    Progress,
    error_line,
    setup_logging,
)

__all__ = ["main", "build_parser"]

_EPILOG = ("Results go to stdout; progress and diagnostics to stderr. Exit codes: 0 done, 1 the run failed, 2 a usage "
           "error (the message names the argument), 130 interrupted (Ctrl-C).")

log = logging.getLogger("gym_crawl")

#: errors that mean the command line, or a value or file it names, is wrong: exit code 2
_USAGE_ERRORS = (ValueError, KeyError, FileNotFoundError, FileExistsError, NotADirectoryError, IsADirectoryError)


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


def _default_env() -> tuple[str, dict[str, Any]]:
    """The default task's env id and its registered keywords (``corpus``, ``max_episode_steps``, ...)."""
    from gym_crawl.envs import DEFAULT_ENV_ID
    from gym_crawl.wrappers.factory import registered_kwargs

    return DEFAULT_ENV_ID, registered_kwargs(DEFAULT_ENV_ID)


def _add_env_args(p: argparse.ArgumentParser) -> None:
    env_id, reg = _default_env()
    p.add_argument("--corpus", default=None,
                   help=f"synthetic, synthetic-<N>, synthetic-hard, wikispeedia, simplewiki or a path (default: the "
                        f"default task {env_id}'s, {reg.get('corpus', 'synthetic')})")
    p.add_argument("--topic", default=None, help="topic key of the corpus, a label prefix, or topic words")
    p.add_argument("--seeds", default=None, help="comma-separated seed page titles (default: the topic's main page)")
    p.add_argument("--reward", default=None, help="han2018 | thesis | binary | labels | classifier (default: the "
                                                  "agent's choice, else labels for a topic with a label, else han2018)")
    p.add_argument("--features", default=None, help="feature set (default: the agent's choice, else combined; a "
                                                    "trained model's: the one it was trained with)")
    p.add_argument("--reducer", default=None, help="topk | outlinks | random | full | tree (default: agent's choice)")
    p.add_argument("--k", type=_int_at_least(1), default=None,
                   help="candidate slots K (default: the agent's choice, else 64; lowered to the corpus' pages on a "
                        "smaller web)")
    p.add_argument("--domain-cap", default=None, help="max pages per domain: an integer, inf, or A-B (adaptive)")


def _add_verbosity(p: argparse.ArgumentParser, default: Any) -> None:
    p.add_argument("-v", "--verbose", action="count", default=default, help="more diagnostics on stderr (-vv: more)")
    p.add_argument("-q", "--quiet", action="count", default=default,
                   help="only warnings and errors on stderr (-qq: errors); results still go to stdout")


def build_parser() -> argparse.ArgumentParser:
    from gym_crawl import __version__

    ap = ArgumentParser(prog="gym-crawl", description="Focused web crawling as a Gymnasium environment.",
                        formatter_class=_HelpFormatter, epilog=_EPILOG)
    ap.add_argument("--version", action="version", version=f"gym-crawl {__version__}")
    _add_verbosity(ap, 0)
    sub = ap.add_subparsers(dest="cmd", required=True)
    common = argparse.ArgumentParser(add_help=False)
    _add_verbosity(common, argparse.SUPPRESS)  # also accepted after the sub-command

    fmt: dict[str, Any] = {"formatter_class": _HelpFormatter, "parents": [common]}
    c = sub.add_parser("crawl", **fmt, help="run one or more agents and report relevant pages found")
    c.add_argument("--agent", default="best-first",
                   help="agent name(s), comma-separated (see `gym-crawl agents`); sb3:<path> runs a trained SB3 policy "
                        "(agent.npz, a train output folder or a stock SB3 model.zip) on the env it was trained on, "
                        "rllib:<path> an RLlib one (a `train --backend rllib` output folder); module:Class an Agent "
                        "class of an importable module or of a module file in the current folder")
    _add_env_args(c)
    c.add_argument("--steps", type=_int_at_least(1), default=None,
                   help=f"env steps per episode, the page budget (default: the default task's, "
                        f"{_default_env()[1].get('max_episode_steps')})")
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
    lv.add_argument("--overwrite", action="store_true", help="replace an existing --warc file (instead of --resume)")
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


def _agent_specs(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise ValueError(f"--agent {text!r}: no agent name given (see `gym-crawl agents`)")
    return names


@contextlib.contextmanager
def _errors_name(spec: str) -> Iterator[None]:
    """Re-raise a usage error about one agent of ``--agent a,b,c`` so that its message names that agent."""
    try:
        yield
    except _USAGE_ERRORS as e:
        msg = _message(e)
        raise ValueError(msg if spec in msg else f"--agent {spec}: {msg}") from e


@contextlib.contextmanager
def _current_folder_importable() -> Iterator[None]:
    """While loading ``--agent module:Class`` specs, a module file in the current folder is importable too, as under
    ``python -m``; the folder comes after the installed packages, so a local file never shadows one of them."""
    cwd = os.getcwd()
    added = cwd not in sys.path and "" not in sys.path
    if added:
        sys.path.append(cwd)
    try:
        yield
    finally:
        if added and cwd in sys.path:
            sys.path.remove(cwd)


def _load_agents(names: list[str], load: str | None) -> list[tuple[str, Any]]:
    """Every agent of ``--agent`` loaded before the first crawl, so a bad spec fails at once and is named."""
    from gym_crawl.agents import Agent, make_agent
    from gym_crawl.agents.base import model_spec

    out = []
    with _current_folder_importable():
        for name in names:
            with _errors_name(name):
                if load and model_spec(name) is None:
                    out.append((name, Agent.load(load, expect=name)))
                else:
                    out.append((name, make_agent(name)))
    return out


def _cmd_crawl(args: argparse.Namespace) -> int:
    names = _agent_specs(args.agent)
    if args.live:
        return _cmd_crawl_live(args, names)
    if args.warc or args.resume or args.overwrite or args.max_pages is not None or args.concurrency is not None or \
            args.per_host is not None or args.rate is not None:
        raise ValueError("--warc, --resume, --overwrite, --max-pages, --concurrency, --per-host and --rate go with "
                         "--live URL ...")
    if (args.load or args.save) and len(names) != 1:
        raise ValueError("--load/--save need exactly one --agent")
    for flag, out in (("--save", args.save), ("--plot", args.plot)):
        if out:
            _check_writable(out, flag)
    results, rows = [], []
    corpora: dict[str, Any] = {}
    for name, agent in _load_agents(names, args.load):
        with _errors_name(name):
            for res, row in _crawl_agent(args, name, agent, corpora):
                results.append(res)
                rows.append(row)
                if args.json:
                    print(json.dumps(row), flush=True)
    if not args.json:
        _print_table(rows)
    if args.plot:
        _plot_curves(results, rows, Path(args.plot))
        log.info("curve written to %s", args.plot)
    return EXIT_OK


def _crawl_agent(args: argparse.Namespace, name: str, agent: Any,
                 corpora: dict[str, Any]) -> Iterator[tuple[Any, dict[str, Any]]]:
    """Run ``args.episodes`` episodes of one agent: ``(EpisodeResult, JSON row)`` per episode."""
    from gym_crawl import __version__
    from gym_crawl.agents import make_env_for, run_episode
    from gym_crawl.agents.factory import env_id_for
    from gym_crawl.corpus import load_corpus
    from gym_crawl.wrappers.factory import registered_kwargs

    env_id = env_id_for(agent)
    reg = registered_kwargs(env_id)
    kw = _env_overrides(args)
    spec = str(args.corpus if args.corpus is not None else reg.get("corpus", "synthetic"))
    if kw["corpus"] is None and "corpus" in reg:
        kw["corpus"] = reg["corpus"]
    if isinstance(kw["corpus"], str):
        kw["corpus"] = corpora.setdefault(kw["corpus"], load_corpus(kw["corpus"]))
    budget = args.steps if args.steps is not None else int(reg["max_episode_steps"])
    kw["max_episode_steps"] = budget
    env = make_env_for(agent, env_id, **kw)
    view = env.unwrapped.view
    about = {"agent": name, "agent_name": agent.name, "corpus": spec, "env_id": env_id,
             "reward": view.reward_name, "K": int(view.max_candidates), "features": view.feature_set_name,
             "reducer": view.reducer_name, "budget": budget, "gym_crawl_version": __version__}
    if args.load:
        about["loaded_from"] = str(args.load)
    for ep in range(args.episodes):
        with Progress(budget, f"{name} ep {ep + 1}/{args.episodes}") as bar:
            res = run_episode(env, agent, seed=args.seed + ep, on_step=lambda t, info, bar=bar: bar.update(1))
        yield res, {**res.summary(), **about, "topic": res.topic, "episode": ep, "seed": args.seed + ep}
    if args.save:
        agent.save(args.save)
    env.close()


def _cmd_crawl_live(args: argparse.Namespace, names: list[str]) -> int:
    """``crawl --live``: one agent as a polite live crawler (:func:`gym_crawl.agents.live_crawl.crawl_live`);
    a crawl stopped by a signal (Ctrl-C) exits ``128 + signal number`` after closing its WARC."""
    import signal

    from gym_crawl.agents.live_crawl import crawl_live
    from gym_crawl.corpus import load_corpus

    _check_live_flags(args, names)
    pages = args.max_pages if args.max_pages is not None else (args.steps or _default_env()[1]["max_episode_steps"])
    agent = _load_agents(names, args.load)[0][1]
    text = load_corpus(args.text) if args.text else None
    over = {k: v for k, v in _env_overrides(args).items()
            if k in ("reward", "features", "reducer", "max_candidates", "domain_cap") and v is not None}
    res = crawl_live(agent, list(args.live), max_pages=pages, warc=args.warc, topic=args.topic, seed=args.seed,
                     scope=args.scope, delay=args.delay, contact=args.user_agent_contact, text=text,
                     resume=args.resume, overwrite=args.overwrite, capacity=args.capacity, env_overrides=over,
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
    if res.stopped_by:
        log.info("stopped by %s; the WARC is closed and resumable (--resume)", res.stopped_by)
        return 128 + int(signal.Signals[res.stopped_by])
    return EXIT_OK


def _check_live_flags(args: argparse.Namespace, names: list[str]) -> None:
    if len(names) != 1:
        raise ValueError("--live runs exactly one --agent")
    if args.corpus is not None or args.seeds or args.episodes != 1:
        raise ValueError("--live replaces --corpus and --seeds (the seed URLs) and runs one episode")
    if not args.topic:
        raise ValueError("--live needs --topic WORDS (what the crawl looks for)")
    if args.resume and not args.warc:
        raise ValueError("--resume needs --warc FILE (the crawl to continue)")
    if args.resume and args.overwrite:
        raise ValueError("--resume continues --warc FILE and --overwrite replaces it: give one of them")
    if args.warc and Path(args.warc).exists() and not (args.resume or args.overwrite):
        raise ValueError(f"--warc {args.warc}: the file exists; add --resume to continue that crawl or --overwrite "
                         f"to replace it")
    for flag, v in (("--concurrency", args.concurrency), ("--per-host", args.per_host)):
        if v is not None and v < 1:
            raise ValueError(f"{flag} must be an integer >= 1, got {v} (--concurrency 16 --per-host 1 keeps 16 hosts "
                             f"busy, one request each)")
    if args.rate is not None and not (args.rate >= 0 and args.rate != float("inf")):
        raise ValueError(f"--rate must be a number of requests per second >= 0 (0: no global limit), got {args.rate}")


def _print_table(rows: Sequence[dict[str, Any]]) -> None:
    """The summary table: one line per episode; the agent column is the spec given to ``--agent``."""
    cols = ["agent", "corpus", "episode", "seed", "topic", "reward", "K", "steps", "relevant_found", "harvest_rate",
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
        raise ValueError(f"unknown benchmark {args.name!r}{hint}; available: {known}") from None
    return int(mod.main(args.args) or 0)


def _cmd_agents(args: argparse.Namespace) -> int:
    from gym_crawl.agents import AGENTS, agent_names

    agent_names()  # installed plug-ins' entry points included
    desc = AGENTS.describe()
    w = max(map(len, desc))
    print("\n".join(f"{n.ljust(w)}  {d}" for n, d in desc.items()))
    return EXIT_OK


def _cmd_serve(args: argparse.Namespace) -> int:
    from gym_crawl.web.serve.server import serve_command

    return serve_command(args)


def _cmd_eval(argv: list[str]) -> int:
    from gym_crawl.benchmarks._evaluate import main as eval_main

    return int(eval_main(argv) or 0)


def _cmd_train(argv: list[str]) -> int:
    from gym_crawl.agents.rllib.train import main as rllib_main
    from gym_crawl.agents.rllib.train import requested_backend

    if requested_backend(argv) == "rllib":  # Ray RLlib (docs/rllib.md); importing it does not load Ray
        return int(rllib_main(argv) or 0)
    from gym_crawl.benchmarks._train_report import main as train_main

    return int(train_main(argv) or 0)


_COMMANDS = {"crawl": _cmd_crawl, "download": _cmd_download, "corpus": _cmd_corpus, "agents": _cmd_agents,
             "bench": _cmd_bench, "serve": _cmd_serve}

#: Python keywords that CLI users set with a flag: error messages from the library speak the flag instead
_FLAGS = {"max_candidates": "--k", "max_episode_steps": "--steps", "domain_cap": "--domain-cap", "seeds": "--seeds",
          "topic": "--topic", "features": "--features", "reducer": "--reducer", "reward": "--reward",
          "corpus": "--corpus", "append": "--resume", "overwrite": "--overwrite"}
_KEYWORD = re.compile(r"\b(" + "|".join(_FLAGS) + r")=(\[[^\]]*\]|'[^']*'|\"[^\"]*\"|[^\s,;)]+)")


def _message(e: BaseException) -> str:
    return str(e.args[0] if isinstance(e, KeyError) and e.args else e)


def _cli_words(msg: str) -> str:
    """``msg`` with the Python keywords it advises (``seeds=['A', 'B']``, ``overwrite=True``, ``max_candidates``)
    written as the flags that set them (``--seeds A,B``, ``--overwrite``, ``--k``); a message that already names
    both (``CLI: ...``) is left as it is."""
    if "CLI:" in msg:
        return msg

    def flag(m: re.Match[str]) -> str:
        name, raw = _FLAGS[m.group(1)], m.group(2)
        if raw == "True":
            return name
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = raw
        if isinstance(value, (list, tuple)):
            value = ",".join("TITLE" if v is Ellipsis else str(v) for v in value)
        return f"{name} {shlex.quote(str(value))}"

    out = _KEYWORD.sub(flag, msg)
    if "max_candidates" in out:  # the env's keyword for K, without a value
        out = out.replace("max_candidates", "K (--k)")
    return out


def _run(command: Any, arg: Any) -> int:
    """``command(arg)`` with its errors reported in the one style: a usage error (a wrong value or file) exits 2,
    a failed run (an I/O or network error) 1; ``-v`` adds the traceback."""
    try:
        return int(command(arg) or 0)
    except _USAGE_ERRORS as e:
        log.debug("traceback", exc_info=True)
        print(error_line(_cli_words(_message(e))), file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        raise
    except OSError as e:
        log.debug("traceback", exc_info=True)
        print(error_line(e), file=sys.stderr)
        return EXIT_FAILURE


def _dispatch(argv: list[str]) -> int:
    lead = 0
    while lead < len(argv) and argv[lead] in ("-v", "-vv", "--verbose", "-q", "-qq", "--quiet"):
        lead += 1
    if lead < len(argv) and argv[lead] in ("train", "eval"):  # their own parsers (see `gym-crawl train --help`)
        flags = argv[:lead]
        setup_logging(sum(f.count("v") if f.startswith("-v") else int(f == "--verbose") for f in flags),
                      sum(f.count("q") if f.startswith("-q") else int(f == "--quiet") for f in flags))
        return _run(_cmd_train if argv[lead] == "train" else _cmd_eval, argv[lead + 1:])
    args = build_parser().parse_args(argv)
    setup_logging(args.verbose, args.quiet)
    return _run(_COMMANDS[args.cmd], args)


def _discard_stdout() -> None:
    """Point stdout at the null device, so the interpreter's last flush does not fail on a closed pipe again."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``gym-crawl`` with ``argv`` (default: ``sys.argv[1:]``) and return its exit code: 0 done, 1 the run
    failed, 2 a usage error, 130 interrupted by Ctrl-C. A reader that closes the output early (``| head``) ends
    the command quietly with 0."""
    try:
        return _dispatch(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:
        print("gym-crawl: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _discard_stdout()
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
