"""``gym-crawl crawl``: run agents on a corpus and report the relevant pages they found, or one agent as a polite
live crawler of real sites (``--live URL ...``, recorded to WARC)."""
from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import os
import signal
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from gym_crawl import __version__
from gym_crawl._console import EXIT_OK, Progress
from gym_crawl._limits import check_fits
from gym_crawl.agents import Agent, make_agent, make_env_for, run_episode
from gym_crawl.agents.base import model_spec
from gym_crawl.agents.factory import env_id_for
from gym_crawl.agents.live_crawl import crawl_live
from gym_crawl.agents.live_default import live_default_agent
from gym_crawl.benchmarks.plotting import BOUNDS, agent_colors, pyplot, save_png
from gym_crawl.cli.errors import USAGE_ERRORS, error_message
from gym_crawl.cli.options import check_writable, header_value, int_at_least, number_in
from gym_crawl.corpus import Corpus, load_corpus
from gym_crawl.envs import DEFAULT_ENV_ID
from gym_crawl.relevance.topic import resolve_topic, seed_pages
from gym_crawl.web.example_pages import read_example_pages
from gym_crawl.web.live import RESERVED_HOW, reserved_bytes
from gym_crawl.web.policy import POLICY_BOUNDS, FetchPolicy
from gym_crawl.web.settings import FIELD_BOUNDS, LiveCrawlSettings
from gym_crawl.wrappers.factory import registered_kwargs

__all__ = ["add_arguments", "live_settings", "plot_curves", "plot_label", "run"]

log = logging.getLogger("gym_crawl")


def _default_env() -> tuple[str, dict[str, Any]]:
    """The default task's env id and its registered keywords (``corpus``, ``max_episode_steps``, ...)."""
    return DEFAULT_ENV_ID, registered_kwargs(DEFAULT_ENV_ID)


def _add_env_args(p: argparse.ArgumentParser) -> None:
    env_id, reg = _default_env()
    p.add_argument("--corpus", default=None,
                   help=f"synthetic, synthetic-<N>, synthetic-hard, wikispeedia, simplewiki, docs-web or a path "
                        f"(default: the default task {env_id}'s, {reg.get('corpus', 'synthetic')})")
    p.add_argument("--topic", default=None, help="topic key of the corpus, a label prefix, or topic words")
    p.add_argument("--seed-pages", nargs="+", default=None, metavar="PAGE",
                   help="seed pages, titles or URLs (default: the topic's main page, else the corpus' own seeds: a "
                        "compiled live crawl records them)")
    p.add_argument("--seeds", dest="seeds_alias", default=None, metavar="TITLE,...",
                   help="the old name of --seed-pages (comma-separated; warns, and goes in the next release: "
                        "--seeds means random seeds in train and eval)")
    p.add_argument("--reward", default=None, help="han2018 | thesis | binary | labels | classifier (default: the "
                                                  "agent's choice, else labels for a topic with a label, else han2018)")
    p.add_argument("--features", default=None, help="feature set (default: the agent's choice, else combined; a "
                                                    "trained model's: the one it was trained with)")
    p.add_argument("--reducer", default=None, help="topk | outlinks | random | full | tree (default: agent's choice)")
    p.add_argument("--k", type=int_at_least(1), default=None,
                   help="candidate slots K (default: the agent's choice, else 64; lowered to the corpus' pages on a "
                        "smaller web)")
    p.add_argument("--domain-cap", default=None, help="max pages per domain: an integer, inf, or A-B (adaptive)")


def _field_range(name: str) -> Any:
    """The argparse type of a live crawl's integer setting ``name``: its range is the settings' own."""
    lo, hi = FIELD_BOUNDS[name]
    return number_in(lo, hi if hi is not None else 2**63 - 1, integer=True)


def add_arguments(c: argparse.ArgumentParser) -> None:
    """The flags of ``gym-crawl crawl``."""
    c.add_argument("--agent", default=None,
                   help="agent name(s), comma-separated (default: best-first; with --live, the recorded live default "
                        "— best-first until a benchmark of a user's deployment shows the shipped learner "
                        "best-first-mix+pretrained above it); sb3:<path> runs a trained SB3 policy "
                        "(agent.npz, a train output folder or a stock SB3 model.zip) on the env it was trained on, "
                        "rllib:<path> an RLlib one (a `train --backend rllib` output folder); module:Class an Agent "
                        "class of an importable module or of a module file in the current folder")
    _add_env_args(c)
    c.add_argument("--steps", type=int_at_least(1), default=None,
                   help=f"env steps per episode, the page budget (default: the default task's, "
                        f"{_default_env()[1].get('max_episode_steps')})")
    c.add_argument("--seed", type=int_at_least(0), default=0, help="seed of the first episode (episode i: seed + i)")
    c.add_argument("--episodes", type=int_at_least(1), default=1,
                   help="episodes per agent; learners keep their weights")
    c.add_argument("--json", action="store_true", help="print one JSON object per episode instead of a table")
    c.add_argument("--plot", default=None,
                   help="write a PNG of relevant pages per step to this file (default: no plot)")
    c.add_argument("--load", default=None, help="load agent parameters from this file (single agent); the env it was "
                                                 "trained on (feature set, text model, K, reducer) comes with it")
    c.add_argument("--save", default=None, help="save agent parameters to this file after the run (single agent)")
    lv = c.add_argument_group("live crawl (a polite crawler on real web sites; docs/live.md)")
    lv.add_argument("--live", nargs="+", metavar="URL", default=None,
                    help="crawl the live web from these seed URLs with one --agent (instead of --corpus)")
    lv.add_argument("--max-pages", type=_field_range("max_pages"), default=None,
                    help="pages to fetch after the seeds (default: --steps)")
    lv.add_argument("--warc", default=None, help="record every request and response (and the decisions) to this "
                                                 "WARC file (.warc.gz)")
    lv.add_argument("--resume", action="store_true",
                    help="continue the crawl recorded in --warc: its fetches are replayed from the file, then "
                         "the crawl goes on over the network (same --agent, --seed and seeds)")
    lv.add_argument("--overwrite", action="store_true", help="replace an existing --warc file (instead of --resume)")
    lv.add_argument("--scope", default="hosts", choices=["hosts", "domain", "any"],
                    help="which discovered URLs are crawled: the seeds' hosts (default), their registered "
                         "domains, or any")
    lv.add_argument("--delay", type=number_in(*POLICY_BOUNDS["delay"][1:], unit="seconds"), default=None,
                    help="minimum seconds between requests to one host (default 1; robots.txt crawl-delay is "
                         "honoured)")
    lv.add_argument("--user-agent-contact", type=header_value, default=None, metavar="URL",
                    help="a contact URL put in the User-Agent, as polite crawlers do")
    lv.add_argument("--text", default=None, metavar="CORPUS",
                    help="corpus whose text model gives word vectors and IDF (the one the agent was trained "
                         "on); 'general': require the general English model; 'none': hashed vectors for every "
                         "word; default: the general English model when its source is on this machine "
                         "(`gym-crawl download wikispeedia`), else hashed vectors (docs/live.md)")
    lv.add_argument("--capacity", type=_field_range("capacity"), default=None,
                    help="page capacity of the live web (page-mode action space; default max(10000, 50 x pages))")
    lv.add_argument("--concurrency", type=_field_range("concurrency"), default=None, metavar="N",
                    help="pages in flight at once, over all hosts (default 1; Scrapy's CONCURRENT_REQUESTS is 16); "
                         "each step dispatches one page and lands the ones that arrived")
    lv.add_argument("--per-host", type=_field_range("per_host"), default=None, metavar="N",
                    help="pages in flight per host (default 1: a host is fetched one request at a time anyway, "
                         "so more only queues there); a busy host's pages are not offered")
    lv.add_argument("--focus-slack", default=None, metavar="S",
                    help="with --concurrency > 1, how far below the best known page a free slot may reach: it takes "
                         "a page only when its link score is at least best - S x (best - mean) of every page the "
                         "crawl could fetch, else it waits (default 0: only a page as good as the best known, so the "
                         "relevant pages at equal pages are those of one page in flight; 0.5 on a web whose good "
                         "pages spread over many hosts); 'off': fill every free slot (most pages per second, least "
                         "focus)")
    lv.add_argument("--rate", type=number_in(*POLICY_BOUNDS["rate"][1:], unit="requests per second",
                                             zero="no global limit"), default=None, metavar="R",
                    help="requests per second over all hosts (default 10; 0: no global limit — needed above 10 "
                         "pages/s)")
    lv.add_argument("--examples", nargs="+", default=None, metavar="URL|FILE",
                    help="pages of what the crawl looks for: HTML or text files, folders of them, WARC archives, or "
                         "URLs (fetched politely first, counted in --max-pages); the crawl's judge — its reward and "
                         "its relevant count — becomes a page classifier built from them and --topic "
                         "(default: --topic's words alone; docs/live.md)")
    lv.add_argument("--counter-examples", nargs="+", default=None, metavar="URL|FILE",
                    help="pages of what it does not look for, the same kinds (with --examples; default: a background "
                         "sample of general English)")


def _seed_pages_alias(args: argparse.Namespace) -> None:
    """``--seeds A,B`` (the old spelling of ``--seed-pages A B``) into ``args.seed_pages``, with one warning."""
    if args.seeds_alias is None:
        return
    if args.seed_pages:
        raise ValueError("--seeds is the old name of --seed-pages: give --seed-pages only")
    log.warning("warning: crawl --seeds is now --seed-pages PAGE [PAGE ...] (--seeds means random seeds in train "
                "and eval); the old name goes in the next release")
    args.seed_pages = [s.strip() for s in args.seeds_alias.split(",") if s.strip()] or None


def _env_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The user's env flags (unset ones are ``None`` and do not override the agent's defaults)."""
    seeds = list(args.seed_pages) if args.seed_pages else None
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
    except USAGE_ERRORS as e:
        msg = error_message(e)
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
    out = []
    with _current_folder_importable():
        for name in names:
            with _errors_name(name):
                if load and model_spec(name) is None:
                    out.append((name, Agent.load(load, expect=name)))
                else:
                    out.append((name, make_agent(name)))
    return out


def run(args: argparse.Namespace) -> int:
    """``gym-crawl crawl``: run the agents and print one row per episode (``--live``: one polite live crawl)."""
    if args.agent is None:  # the live default follows the recorded benchmark (gym_crawl.agents.live_default)
        args.agent = live_default_agent() if args.live else "best-first"
    names = _agent_specs(args.agent)
    _seed_pages_alias(args)
    if args.live:
        return _cmd_crawl_live(args, names)
    if args.warc or args.resume or args.overwrite or args.max_pages is not None or args.concurrency is not None or \
            args.per_host is not None or args.rate is not None or args.focus_slack is not None or args.examples or \
            args.counter_examples:
        raise ValueError("--warc, --resume, --overwrite, --max-pages, --concurrency, --per-host, --focus-slack, "
                         "--rate, --examples and --counter-examples go with --live URL ...")
    if (args.load or args.save) and len(names) != 1:
        raise ValueError("--load/--save need exactly one --agent")
    for flag, out in (("--save", args.save), ("--plot", args.plot)):
        if out:
            check_writable(out, flag)
    results, rows = [], []
    corpora: dict[str, Any] = {}
    for name, agent in _load_agents(names, args.load):
        for res, row in _crawl_agent(args, name, agent, corpora):
            results.append(res)
            rows.append(row)
            if args.json:
                print(json.dumps(row), flush=True)
    if not args.json:
        _print_table(rows)
    if args.plot:
        plot_curves(results, rows, Path(args.plot))
        log.info("curve written to %s", args.plot)
    return EXIT_OK


def _crawl_agent(args: argparse.Namespace, name: str, agent: Any,
                 corpora: dict[str, Any]) -> Iterator[tuple[Any, dict[str, Any]]]:
    """Run ``args.episodes`` episodes of one agent: ``(EpisodeResult, JSON row)`` per episode. An error of the
    corpus or the task (topic, seed pages) is the same for every agent and names no agent; one that only this agent
    meets names it."""
    with _errors_name(name):
        env_id = env_id_for(agent)
    reg = registered_kwargs(env_id)
    kw = _env_overrides(args)
    spec = str(args.corpus if args.corpus is not None else reg.get("corpus", "synthetic"))
    if kw["corpus"] is None and "corpus" in reg:
        kw["corpus"] = reg["corpus"]
    if isinstance(kw["corpus"], str):
        if kw["corpus"] not in corpora:
            corpora[kw["corpus"]] = load_corpus(kw["corpus"])
        kw["corpus"] = corpora[kw["corpus"]]
    _check_task(kw["corpus"], kw["topic"] if kw["topic"] is not None else reg.get("topic"), kw["seeds"])
    budget = args.steps if args.steps is not None else int(reg["max_episode_steps"])
    kw["max_episode_steps"] = budget
    with _errors_name(name):
        yield from _episodes(args, name, agent, env_id, spec, budget, kw)


def _check_task(corpus: Any, topic: Any, seeds: list[str] | None) -> None:
    """Refuse a topic the corpus does not know, or one without seed pages, before any agent runs (the errors
    name the topic and what to pass)."""
    if isinstance(corpus, Corpus):
        seed_pages(resolve_topic(topic, corpus), corpus, seeds)


def _episodes(args: argparse.Namespace, name: str, agent: Any, env_id: str, spec: str, budget: int,
              kw: dict[str, Any]) -> Iterator[tuple[Any, dict[str, Any]]]:
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
    _check_live_flags(args, names)
    try:
        settings = live_settings(args)
    except ValueError as e:  # a setting's name, as the flag that sets it
        msg = str(e)
        for field, flag in _SETTING_FLAGS.items():
            msg = msg.replace(f"LiveCrawlSettings.{field} ", f"{flag} ").replace(f"FetchPolicy.{field} ", f"{flag} ")
        raise ValueError(msg) from None
    _check_capacity_fits(settings)
    agent = _load_agents(names, args.load)[0][1]
    text = load_corpus(args.text) if args.text and args.text not in ("general", "none") else None
    res = crawl_live(agent, settings, warc=args.warc, resume=args.resume, overwrite=args.overwrite,
                     text=text)
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


#: the flag that sets each live crawl setting (error messages name the flag)
_SETTING_FLAGS = {"max_pages": "--max-pages (or --steps)", "capacity": "--capacity", "concurrency": "--concurrency",
                  "per_host": "--per-host", "seed": "--seed", "topic": "--topic", "seeds": "--live",
                  "delay": "--delay", "rate": "--rate", "contact": "--user-agent-contact", "max_candidates": "--k",
                  "domain_cap": "--domain-cap"}


def _check_capacity_fits(settings: LiveCrawlSettings) -> None:
    """Refuse, naming ``--max-pages`` / ``--capacity``, a live web this machine cannot hold (before numpy would
    fail to allocate it)."""
    cap = settings.page_capacity
    what = (f"--capacity {cap:,}" if settings.capacity is not None else
            f"--max-pages {settings.max_pages:,} (a page capacity of {cap:,}, 50 x --max-pages: lower it with "
            f"--capacity)")
    check_fits(what, reserved_bytes(cap), RESERVED_HOW)


def live_settings(args: argparse.Namespace) -> LiveCrawlSettings:
    """The :class:`~gym_crawl.web.settings.LiveCrawlSettings` of ``crawl --live``'s flags: the seed URLs,
    ``--topic``, ``--max-pages`` (else ``--steps``, else the default env's budget), ``--seed``, ``--scope``,
    ``--concurrency``, ``--per-host``, the policy of ``--delay``, ``--rate`` (``0``: none) and
    ``--user-agent-contact``, ``--capacity``, and the env flags (``--features``, ``--reducer``, ``--k``,
    ``--reward``, ``--domain-cap``, ``--text general|none``), ``--examples`` and ``--counter-examples``."""
    pages = args.max_pages if args.max_pages is not None else (args.steps or _default_env()[1]["max_episode_steps"])
    pol: dict[str, Any] = {"rate": 10.0 if args.rate is None else (args.rate or None)}
    if args.delay is not None:
        pol["delay"] = float(args.delay)
    if args.user_agent_contact is not None:
        pol["contact"] = args.user_agent_contact
    env: dict[str, Any] = {k: v for k, v in _env_overrides(args).items()
                           if k in ("reward", "features", "reducer", "max_candidates", "domain_cap") and v is not None}
    if args.focus_slack is not None:
        env["focus_slack"] = _focus_slack(args.focus_slack)
    return LiveCrawlSettings(seeds=tuple(args.live), topic=args.topic, max_pages=pages, seed=args.seed,
                             scope=args.scope, concurrency=args.concurrency or 1, per_host=args.per_host or 1,
                             policy=FetchPolicy(**pol), capacity=args.capacity,
                             general_text={"general": True, "none": False}.get(args.text or ""),
                             examples=tuple(args.examples or ()), counter_examples=tuple(args.counter_examples or ()),
                             **env)


def _focus_slack(text: str) -> float | None:
    """``--focus-slack``'s value: ``off`` → ``None`` (fill every free slot), else a finite number >= 0."""
    if text.strip().lower() == "off":
        return None
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"--focus-slack must be a number >= 0 (default 0; larger: more pages per second, less "
                         f"focus) or 'off' (fill every free slot), got {text!r}")
    return v


def _check_live_flags(args: argparse.Namespace, names: list[str]) -> None:
    if len(names) != 1:
        raise ValueError("--live runs exactly one --agent")
    if args.corpus is not None or args.seed_pages or args.episodes != 1:
        raise ValueError("--live replaces --corpus and --seed-pages (its URLs are the seeds) and runs one episode")
    if not args.topic:
        raise ValueError("--live needs --topic WORDS (what the crawl looks for)")
    if args.resume and not args.warc:
        raise ValueError("--resume needs --warc FILE (the crawl to continue)")
    if args.resume and args.overwrite:
        raise ValueError("--resume continues --warc FILE and --overwrite replaces it: give one of them")
    if args.warc:  # resumed or new: a FIFO or device would block the crawl forever, or mean nothing
        check_writable(args.warc, "--warc")
    if args.warc and Path(args.warc).exists() and not (args.resume or args.overwrite):
        raise ValueError(f"--warc {args.warc}: the file exists; add --resume to continue that crawl or --overwrite "
                         f"to replace it")
    if args.counter_examples and not args.examples:
        raise ValueError("--counter-examples go with --examples (the pages the crawl looks for)")
    for flag, specs in (("--examples", args.examples), ("--counter-examples", args.counter_examples)):
        if specs:  # the files are read now, so a bad one fails before any request
            read_example_pages(specs, flag)


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


def plot_label(row: dict[str, Any], n_episodes: int) -> str:
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


def plot_curves(results: Sequence[Any], rows: Sequence[dict[str, Any]], path: Path) -> None:
    """Relevant pages per step, one curve per episode: a colour per agent (stable across runs), later episodes of
    a learner darker, the bounds (``random``, ``oracle``) dashed, the legend outside the axes."""
    plt = pyplot()
    n_eps = {r["agent"]: sum(x["agent"] == r["agent"] for x in rows) for r in rows}
    colors = agent_colors(str(r["agent"]) for r in rows)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for res, row in zip(results, rows):
        n = n_eps[row["agent"]]
        alpha = 0.35 + 0.65 * (row["episode"] + 1) / n if n > 1 else 1.0
        ax.plot(range(1, len(res.relevant_curve) + 1), res.relevant_curve, color=colors[str(row["agent"])],
                alpha=alpha, ls="--" if row["agent"] in BOUNDS else "-", label=plot_label(row, n))
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


