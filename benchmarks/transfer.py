"""A win on sites it never saw, live: train offline on the docs-web training sites, deploy live on the held-out ones.

``gym-crawl bench transfer [--agents ...] [--seeds 5] [--budgets 100 300] [--jobs 2] [--out DIR]``

Needs the ``docs-web`` corpus (``gym-crawl bench docs-web --install``: the compiled corpus and the installed
documentation packages) and the general English text model's source (``gym-crawl download wikispeedia``, or
``--from PATH``). The protocol:

* **Tasks**: the ``docs-web-hard`` task set (:func:`gym_crawl.tasks.docs_web.docs_web_hard_tasks`): sections
  named by their cross-site genre ("changelog", "implementation", "internals" …), a word that is in at most
  a fifth of the section's pages, so no URL prefix or link text gives the target away. Each section has a
  **near** seed (its most in-linked page) and a **far** seed (the site's home page); every (section, seed) is
  run at each of ``--budgets`` (default 100 and 300 steps). Whole sites are held out: the train tasks are on
  the training sites, the test tasks on sites no learner trained on.
* **Text model**: the general English model (:mod:`gym_crawl.text.general`) for every agent, offline and
  live — a compiled web corpus and a live web both get it by default, the same row for the same word — so a
  weight learned offline means the same feature live. The benchmark refuses to run without it.
* **Offline pretraining** (learners only): one agent object per seed, ``--epochs`` passes over the train tasks
  (every budget; task order shuffled per seed) on the compiled corpus with ``reward="labels"``, as
  ``gym-crawl bench suite`` trains; the weights are saved (``weights/<agent>-s<seed>.npz``, no pickle).
* **Live deployment**: the test sites are served on loopback from their installed folders (one host each, in
  a server process of their own), with the builder's polite policy (robots.txt obeyed, the site's excluded
  folders denied, per-host delay 0: the servers are local); every test task is crawled with
  :func:`gym_crawl.agents.live_crawl.crawl_live` — the polite fetcher, ``LiveWeb``, the env, ``env.step`` —
  by each agent and seed. A learner starts from its seed's pretrained weights (a fresh copy per task, the
  evaluation options of its variant) and keeps learning online within the crawl from the rewards it
  observes, as the suite's protocol does. The reward of a fetched page is its relevance judgement: 1 when
  its URL's label (the corpus' URL-prefix label rules, moved to the servers' addresses) is the task's label
  or below it, 0 otherwise and for a failed fetch — the judgement of ``reward="labels"`` offline, about
  fetched pages only (:class:`UrlLabelReward`). ``--online`` adds learners' online forms (no pretraining,
  the same judgement to learn from) as ``<agent>/online``; ``--as-cli`` adds learners as ``gym-crawl crawl
  --live --agent NAME`` runs them — no pretraining, learning from the live web's default reward (``han2018``:
  topic words or a topic-like vector in the fetched page; no labels exist live) — as ``<agent>/as-cli``, scored
  by the same judgement. Both default to ``best-first-mix``.
* **Score**: relevant pages found: the pages the env judged (the seed included) that the judgement calls
  relevant (:attr:`UrlLabelReward.judged`; with the judgement as the reward this is the env's
  ``relevant_found``). Normalized per task: ``(found − random) / (oracle − random)``; ``random`` = the mean of
  the live ``random`` agent over the seeds, ``oracle`` = the greedy ``oracle`` (hidden labels) on the compiled
  corpus' copy of the site at the same seed and budget (a live oracle would need the labels of unfetched
  pages; the compiled copy is the same site as served, crawled through the same policy). Tasks with oracle ≤
  random are dropped (noted). Aggregates: IQM with a stratified bootstrap 95 % CI
  (:func:`gym_crawl.benchmarks.suite.iqm_ci`, rliable's IQM), per budget, per budget and seed kind, and over
  everything; W/T/L of each agent against best-first per (task, seed).
* **Best-first** is deterministic on a sequential crawl (no seed enters its decisions), so it runs once per
  task and stands for every seed (``--every-seed`` runs it per seed; with ``--concurrency`` > 1 completion
  order may differ between runs, so it runs per seed).

**As a user deploys** (``--judge words|examples --concurrency 8 --tasks genre topic``): every agent learns from
the judge a live crawl has — the topic words (``crawl --live``'s default), or a page classifier built from the
words and ``--examples`` pages of the section (files of the installed site, drawn per task and seed, as
``crawl --live --examples FILE…`` builds it) — with several pages in flight; no URL label reaches a crawl, the
labels only score it. ``--tasks topic`` adds the ``docs-web`` sections named by their own words (a topic as a
user asks it) beside the genre targets. The learner the package ships runs as ``best-first-mix+pretrained/online``
(``--online``: no weights of this benchmark; its own package weights, pretrained on the synthetic web).

Crawls run in worker processes recycled after ``--crawls-per-worker`` crawls (a live web stays referenced by
process-wide memos until its process ends). Writes ``transfer.json``, ``transfer.md`` and ``transfer.png`` to
``--out`` (default ``benchmarks/results/transfer``).
"""
from __future__ import annotations

import argparse
import contextlib
import multiprocessing as mp
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl.benchmarks.transfer_deploy import JUDGES, Deployment, example_files, judge_reward
from gym_crawl.benchmarks.transfer_report import TARGET, markdown, normalized, summarize, wtl
from gym_crawl.relevance.rewards import RewardScheme

__all__ = ["AGENTS", "BUDGETS", "DEFAULT_OUT", "FAMILIES", "JUDGES", "TARGET", "Deployment", "TransferTask",
           "UrlLabelReward", "example_files", "judge_reward", "main", "run_transfer", "serve_sites",
           "summarize", "normalized", "markdown", "wtl", "transfer_tasks"]

DEFAULT_OUT = Path("benchmarks") / "results" / "transfer"
AGENTS = ("random", "best-first", "online-classifier", "best-first-mix", "hashed-q")
BUDGETS = (100, 300)
ONLINE = "/online"
"""Suffix of a learner's online form (no pretraining) in the agent names of a run."""
AS_CLI = "/as-cli"
"""Suffix of a learner run as ``gym-crawl crawl --live --agent NAME`` runs it: no pretraining, learning from the
live web's default reward (``han2018``: the fetched page holds a topic word or its vector is near the topic's),
scored by the same fetched-page judgement as every other run."""


# ------------------------------------------------------------------------------------------ tasks
@dataclass(frozen=True)
class TransferTask:
    """A test or train task of the benchmark: the task set's task at one budget, its seed kind."""

    task: Any
    kind: str
    family: str = "genre"
    """``"genre"``: a ``docs-web-hard`` task (named by its cross-site genre word); ``"topic"``: a ``docs-web`` task
    (named by its section's own words, a topic as a user asks it)."""

    @property
    def name(self) -> str:
        return ("topic:" if self.family == "topic" else "") + f"{self.task.label}:{self.kind}:{self.task.budget}"


FAMILIES = ("genre", "topic")
"""The task families of the benchmark (:attr:`TransferTask.family`)."""


def transfer_tasks(corpus: Any, budgets: Sequence[int] = BUDGETS, make: Callable[..., list[Any]] | None = None,
                   min_pages: int = 25, families: Sequence[str] = ("genre",)) -> list[TransferTask]:
    """Every task of each family at each of ``budgets`` (near and far seeds alike), with its seed kind
    (:func:`gym_crawl.tasks.task.task_kind`): ``"genre"`` — ``make`` (default
    :func:`~gym_crawl.tasks.docs_web.docs_web_hard_tasks`); ``"topic"`` —
    :func:`~gym_crawl.tasks.docs_web.docs_web_tasks`."""
    from gym_crawl.tasks.docs_web import docs_web_hard_tasks, docs_web_tasks
    from gym_crawl.tasks.task import task_kind

    bad = sorted(set(families) - set(FAMILIES))
    if bad or not families:
        raise ValueError(f"families: each one of {', '.join(FAMILIES)}, got {list(families)!r}")
    makers = {"genre": make or docs_web_hard_tasks, "topic": docs_web_tasks}
    out = []
    for fam in dict.fromkeys(families):
        for b in budgets:
            if isinstance(b, bool) or not isinstance(b, int) or b < 1:
                raise ValueError(f"budgets: each budget must be an integer >= 1, got {b!r}")
            for t in makers[fam](corpus, min_pages=min_pages, near_budget=b, far_budget=b):
                out.append(TransferTask(t, task_kind(corpus, t), fam))
    return out


# ------------------------------------------------------------------------------------------ reward
class UrlLabelReward(RewardScheme):
    """Reward 1 for a fetched page whose URL's label (``rules``: longest URL prefix wins) is ``label`` or
    below it, else 0 (and 0 for a failed fetch): the relevance judgement of a page once it is fetched, on a
    live web that carries no labels. Bound to the env's web at reset (``bind``); reads only fetched pages.
    Every judgement is kept in :attr:`judged` (page id → relevant, in the order judged), which is what the
    benchmark counts.

    :param rules: ``[(url_prefix, label), ...]``.
    :param label: the task's label.
    :param inner: a scheme whose reward and relevant flag the env gets instead (the page is still judged and
        counted): ``get_reward_scheme("han2018")`` is what a live crawl without labels learns from.
    """

    name = "url-label"
    max_reward = 1.0

    def __init__(self, rules: Sequence[tuple[str, str]], label: str, inner: RewardScheme | None = None):
        self.rules = [(str(p), str(lab)) for p, lab in rules]
        self.label = str(label)
        self.inner = inner
        if inner is not None:
            self.name, self.max_reward = f"{inner.name}+url-label", inner.max_reward
        self.judged: dict[int, bool] = {}
        self._web: Any = None

    def bind(self, scorer: Any) -> None:
        """Attach to ``scorer``'s web (the env calls this at reset)."""
        self._web = scorer.corpus
        self.judged = {}
        bind = getattr(self.inner, "bind", None)
        if bind is not None:
            bind(scorer)

    def relevant_url(self, url: str) -> bool:
        """Whether the page at ``url`` is relevant to the task."""
        from gym_crawl.benchmarks.docs_web import label_of
        from gym_crawl.benchmarks.textmodel import label_matches

        return label_matches(label_of(self.rules, url), self.label)

    def __call__(self, s: Any) -> tuple[np.ndarray, np.ndarray]:
        if self._web is None or s.pages is None:
            raise RuntimeError("UrlLabelReward needs the fetched pages' ids and a bound web: use it through the env")
        errors = getattr(self._web, "fetch_errors", {})
        rel = np.array([int(p) not in errors and self.relevant_url(self._web.url(int(p))) for p in s.pages], bool)
        for p, r in zip(s.pages.tolist(), rel.tolist()):
            self.judged.setdefault(int(p), bool(r))
        if self.inner is not None:
            return self.inner(s)
        return rel.astype(np.float32), rel


# ------------------------------------------------------------------------------------------ serving
def _serve(conn: Any, folders: dict[str, str]) -> None:
    """Server process: serve ``folders`` on loopback, send the base URLs, serve until told to stop."""
    from gym_crawl.web.serve import serve_folder

    with serve_folder("/", folders) as site:
        conn.send(dict(site.base_urls))
        conn.recv()


class serve_sites:
    """Serve ``{site: folder}`` on loopback from a process of its own (so the crawl's worker processes fork
    from a process without server threads); ``base_urls`` once entered."""

    def __init__(self, folders: dict[str, str]):
        self.folders = {str(k): str(v) for k, v in folders.items()}
        self.base_urls: dict[str, str] = {}

    def __enter__(self) -> serve_sites:
        ctx = mp.get_context("fork")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child, self.folders), daemon=True)
        self._proc.start()
        if not self._conn.poll(60):
            self._proc.kill()
            raise RuntimeError("transfer: the loopback server process did not start within 60 s")
        self.base_urls = self._conn.recv()
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(OSError):
            self._conn.send("stop")
        self._proc.join(10)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join()


def _spread(tasks: list[TransferTask], n: int) -> list[TransferTask]:
    """At most ``n`` of ``tasks``, evenly spaced over their (label) order, a section's near and far seeds together."""
    labels = list(dict.fromkeys(t.task.label for t in tasks))
    k = max(1, (n + 1) // 2)
    keep = {labels[int(i)] for i in np.linspace(0, len(labels) - 1, min(k, len(labels))).round()} if labels else set()
    return [t for t in tasks if t.task.label in keep][:n]


# ------------------------------------------------------------------------------------------ workers
_CTX: dict[str, Any] = {}
"""What the worker processes read (set before the pool forks): the corpus, the deployment."""


def _learner_name(name: str) -> tuple[str, bool]:
    """``(agent name, pretrained?)`` of a run's agent name (``"x/online"``, ``"x/as-cli"`` → ``("x", False)``)."""
    for suffix in (ONLINE, AS_CLI):
        if name.endswith(suffix):
            return name[: -len(suffix)], False
    return name, True


def _train_job(job: dict[str, Any]) -> dict[str, Any]:
    """Pretrain one learner seed offline on the train tasks; save its weights; returns the training record."""
    from gym_crawl.agents import make_agent
    from gym_crawl.benchmarks.suite import TaskEnvs, resolve_agent, task_episode

    corpus = _CTX["corpus"]
    envs = TaskEnvs(corpus)
    var = resolve_agent(job["agent"])
    agent = make_agent(var.agent, **var.config)
    s = job["seed"]
    rng = np.random.default_rng(s)
    train = [t for t in _CTX["train"]]
    c0, t0 = time.process_time(), time.perf_counter()
    ep, found = 0, 0
    for _ in range(job["epochs"]):
        for i in rng.permutation(len(train)):
            found += task_episode(envs, agent, train[int(i)], 1000 * s + ep, {**var.env, **_CTX["env"]})
            ep += 1
    path = agent.save(job["path"])
    text = next(iter(envs.cache.values())).unwrapped.text.meta.get("vectors") if envs.cache else None
    return {"agent": job["agent"], "seed": s, "episodes": ep, "train_found": found, "path": str(path),
            "cpu_s": round(time.process_time() - c0, 1), "wall_s": round(time.perf_counter() - t0, 1),
            "text_model": text}


def _oracle_job(job: dict[str, Any]) -> dict[str, Any]:
    """Offline oracle (and offline best-first, for reference) on one task of the compiled corpus."""
    from gym_crawl.agents import make_agent
    from gym_crawl.benchmarks.suite import TaskEnvs, task_episode

    envs = TaskEnvs(_CTX["corpus"])
    out = {"task": job["name"]}
    for a in ("oracle", "best-first"):
        out[a] = task_episode(envs, make_agent(a), job["task"], 0, dict(_CTX["env"]))
    return out


def _live_job(job: dict[str, Any]) -> dict[str, Any]:
    """One live crawl (see the module docstring)."""
    from gym_crawl.agents import make_agent
    from gym_crawl.agents.base import Agent
    from gym_crawl.agents.live_crawl import crawl_live
    from gym_crawl.benchmarks.suite import resolve_agent
    from gym_crawl.web.settings import LiveCrawlSettings

    dep: Deployment = _CTX["deployment"]
    name, pretrained = _learner_name(job["agent"])
    var = resolve_agent(name)
    agent = make_agent(var.agent, **{**var.config, **var.eval_config})
    if job.get("weights") and pretrained:
        saved = Agent.load(job["weights"])
        agent.load_state_dict({k: np.array(v, copy=True) for k, v in saved.state_dict().items()})
    from gym_crawl.relevance.rewards import get_reward_scheme

    judge = job.get("judge", "labels")
    if job["agent"].endswith(AS_CLI):
        inner = get_reward_scheme("han2018")
    elif judge != "labels":
        inner = judge_reward(judge, job["topic"], job.get("examples") or ())
    else:
        inner = None
    reward = UrlLabelReward(dep.rules, job["label"], inner)
    settings = LiveCrawlSettings(seeds=(job["seed_url"],), topic=job["topic"], max_pages=job["budget"],
                                 seed=job["seed"], concurrency=job["concurrency"], per_host=job["per_host"],
                                 policy=dep.policy,
                                 **LiveCrawlSettings.env_fields({**var.env, **_CTX["env"], "reward": reward}))
    c0, t0 = time.process_time(), time.perf_counter()
    res = crawl_live(agent, settings, progress=None, handle_signals=False)
    ep = res.episode
    judged = np.fromiter(reward.judged.values(), bool)
    return {"agent": job["agent"], "task": job["name"], "label": job["label"], "kind": job["kind"],
            "budget": job["budget"], "seed": job["seed"], "found": int(judged.sum()),
            "env_relevant_found": int(ep.relevant_found),
            "steps": int(ep.steps), "pages": int(ep.pages_fetched),
            "fetch_errors": int(res.stats.get("fetch_errors", 0)),
            "requests": int(res.stats.get("requests", 0)), "cpu_s": round(time.process_time() - c0, 2),
            "wall_s": round(time.perf_counter() - t0, 2), "curve": np.cumsum(judged).tolist(),
            "copy_to": job.get("copy_to"), "judge": judge, "examples": job.get("examples")}


def _pool_map(fn: Callable[[dict[str, Any]], dict[str, Any]], jobs: list[dict[str, Any]], n_proc: int,
              per_worker: int, say: Callable[[str], None], what: str, line: Callable[[dict[str, Any]], str]
              ) -> list[dict[str, Any]]:
    """``fn`` over ``jobs`` in forked worker processes (recycled after ``per_worker`` jobs), with a progress
    line per finished job and the estimated time left."""
    out: list[dict[str, Any]] = []
    if not jobs:
        return out
    t0 = time.perf_counter()
    with mp.get_context("fork").Pool(max(1, n_proc), maxtasksperchild=max(1, per_worker)) as pool:
        for i, r in enumerate(pool.imap_unordered(fn, jobs), 1):
            out.append(r)
            el = time.perf_counter() - t0
            say(f"[{what} {i}/{len(jobs)}  {el / 60:5.1f} min, ~{el / i * (len(jobs) - i) / 60:4.1f} min left] "
                f"{line(r)}")
    return out


# ------------------------------------------------------------------------------------------ running
def run_transfer(corpus: Any, roots: Sequence[Any], agents: Sequence[str], *, seeds: int, budgets: Sequence[int],
                 epochs: int = 1, jobs: int = 1, out: Path, env: dict[str, Any] | None = None,
                 make_tasks: Callable[..., list[Any]] | None = None, min_pages: int = 25, concurrency: int = 1,
                 per_host: int = 1, every_seed: bool = False, online_forms: Sequence[str] = (),
                 cli_forms: Sequence[str] = (),
                 crawls_per_worker: int = 4, max_test_tasks: int | None = None,
                 families: Sequence[str] = ("genre",), judge: str = "labels", examples: int = 3,
                 progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Pretrain, serve, deploy (see the module docstring); returns every record.

    :param corpus: the compiled corpus (with ``meta["docs_web"]``: base URLs, label rules).
    :param roots: the installed sites (:class:`~gym_crawl.benchmarks.docs_web.SiteRoot`); those of the test
        tasks are served.
    :param agents: registered agent names (variants included); ``random`` is always run.
    :param env: env keywords for every crawl, offline and live (e.g. ``{"text": {"general": False}}``).
    :param online_forms: learners also run live without pretraining (``<name>/online``).
    :param cli_forms: learners also run as ``crawl --live`` runs them (``<name>/as-cli``, :data:`AS_CLI`).
    :param max_test_tasks: at most this many test tasks per budget and family, evenly spaced in label order (so
        the sections of every test site are drawn from): smaller runs.
    :param families: the task families (:data:`FAMILIES`): genre targets, topics as a user names them, or both.
    :param judge: what every live crawl learns from (:data:`JUDGES`); the score is the URL labels' whatever it is.
    :param examples: example pages per task and seed with ``judge="examples"``.
    """
    from gym_crawl.benchmarks.suite import is_learner, resolve_agent
    from gym_crawl.tasks import topic_of
    from gym_crawl.tasks.docs_web import site_label

    say = progress or (lambda s: None)
    agents = list(dict.fromkeys(["random", *agents]))
    for a in agents:
        resolve_agent(a)
    if judge not in JUDGES:
        raise ValueError(f"judge: one of {', '.join(JUDGES)}, got {judge!r}")
    tts = transfer_tasks(corpus, budgets, make_tasks, min_pages, families)
    train = [t.task for t in tts if t.task.split == "train" and t.family == "genre"]
    test = [t for t in tts if t.task.split == "test"]
    if max_test_tasks is not None:
        test = [t for f in dict.fromkeys(families) for b in budgets
                for t in _spread([x for x in test if x.task.budget == b and x.family == f], max_test_tasks)]
    if not test:
        raise ValueError("transfer: no test task (is the corpus the docs-web corpus?)")
    sites = sorted({site_label(t.task.label) for t in test})
    by_site = {r.site.name: r for r in roots}
    gone = sorted(set(sites) - set(by_site))
    if gone:
        raise SystemExit(f"transfer: the test sites {gone} are not installed: run `gym-crawl bench docs-web --install`")
    seed_list = list(range(seeds))
    learners = [a for a in agents if is_learner(a)]
    for what, forms in (("online_forms", online_forms), ("cli_forms", cli_forms)):
        if any(not is_learner(a) for a in forms):
            raise ValueError(f"{what}: {[a for a in forms if not is_learner(a)]} do not learn")
    _CTX.clear()
    _CTX.update(corpus=corpus, train=train, env=dict(env or {}))
    res: dict[str, Any] = {"tasks": {t.name: {"label": t.task.label, "kind": t.kind, "budget": t.task.budget,
                                              "family": t.family,
                                              "seed_page": t.task.seeds[0], "members": t.task.n_members,
                                              "topic": " ".join(t.task.words)} for t in test},
                           "train_tasks": [f"{t.label}:{t.budget}:{t.seeds[0]}" for t in train]}
    # 1. offline: pretraining and the oracle
    wdir = out / "weights"
    wdir.mkdir(parents=True, exist_ok=True)
    tjobs = [{"agent": a, "seed": s, "epochs": epochs, "path": str(wdir / f"{a}-s{s}.npz")}
             for a in learners for s in seed_list]
    say(f"pretraining {len(learners)} learners x {seeds} seeds on {len(train)} train tasks ({epochs} epoch(s))")
    res["training"] = _pool_map(_train_job, tjobs, jobs, 1, say, "train",
                                lambda r: f"{r['agent']} s{r['seed']}: {r['episodes']} episodes, "
                                          f"{r['cpu_s']} CPU s, text {r['text_model']}")
    weights = {(r["agent"], r["seed"]): r["path"] for r in res["training"]}
    ojobs = [{"name": t.name, "task": t.task} for t in test]
    res["offline"] = _pool_map(_oracle_job, ojobs, jobs, 8, say, "oracle",
                               lambda r: f"{r['task']}: oracle {r['oracle']}, offline best-first {r['best-first']}")
    # 2. live
    runs = [*agents, *(a + ONLINE for a in online_forms), *(a + AS_CLI for a in cli_forms)]
    with serve_sites({s: str(by_site[s].root) for s in sites}) as srv:
        dep = Deployment.create(corpus, srv.base_urls, [by_site[s] for s in sites])
        _CTX["deployment"] = dep
        res["served"] = dict(srv.base_urls)
        ljobs = []
        for t in test:
            base = {"name": t.name, "label": t.task.label, "kind": t.kind, "budget": t.task.budget,
                    "topic": " ".join(topic_of(corpus, t.task).words),
                    "seed_url": dep.seed_url(corpus, t.task.seeds[0]),
                    "concurrency": concurrency, "per_host": per_host, "judge": judge}
            for a in runs:
                # best-first's decisions do not depend on its reward: one sequential crawl stands for every seed
                once = a == "best-first" and not every_seed and concurrency == 1 and per_host == 1
                for s in ([0] if once else seed_list):
                    ex = example_files(corpus, t.task, by_site, examples, s) if judge == "examples" else None
                    ljobs.append({**base, "agent": a, "seed": s, "weights": weights.get((_learner_name(a)[0], s)),
                                  "copy_to": seed_list if once else None, "examples": ex})
        say(f"live: {len(ljobs)} crawls ({len(test)} test tasks x {len(runs)} agents x {seeds} seeds) on "
            f"{', '.join(f'{k} {v}' for k, v in srv.base_urls.items())}")
        t0 = time.perf_counter()
        live = _pool_map(_live_job, ljobs, jobs, crawls_per_worker, say, "live",
                         lambda r: f"{r['agent']:22} {r['task']:32} s{r['seed']}: found {r['found']:3} "
                                   f"({r['pages']} pages, {r['fetch_errors']} errors, {r['cpu_s']} CPU s)")
        res["live_wall_s"] = round(time.perf_counter() - t0, 1)
    runs_out = []
    for r in live:
        for s in r.pop("copy_to") or [r["seed"]]:
            runs_out.append({**r, "seed": s, "run_seed": r["seed"]})
    res["runs"] = sorted(runs_out, key=lambda r: (r["agent"], r["task"], r["seed"]))
    return res


# ------------------------------------------------------------------------------------------ report
def _plot(res: dict[str, Any], summary: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from gym_crawl.benchmarks.plotting import pyplot, save_png, summed_curves
    from gym_crawl.benchmarks.suite import suite_color

    plt = pyplot()
    groups = [g for g in summary if g != "all"] + ["all"]
    agents = [a for a in summary["all"]["agents"] if "iqm" in summary["all"]["agents"][a]]
    fig, axes = plt.subplots(1, 2, figsize=(14, 4.6))
    x = np.arange(len(groups))
    w = 0.8 / max(len(agents), 1)
    for i, a in enumerate(agents):
        rows = [summary[g]["agents"].get(a, {}) for g in groups]
        ys = np.array([r.get("iqm", np.nan) for r in rows])
        lo = np.array([r["ci"][0] if "ci" in r else np.nan for r in rows])
        hi = np.array([r["ci"][1] if "ci" in r else np.nan for r in rows])
        err = np.nan_to_num(np.maximum([ys - lo, hi - ys], 0.0))  # a point IQM may sit outside its bootstrap CI
        axes[0].bar(x + (i - (len(agents) - 1) / 2) * w, ys, w, yerr=err, capsize=2, label=a,
                    color=suite_color(a.split("/")[0]), alpha=1.0 if _learner_name(a)[1] else 0.55)
    axes[0].axhline(TARGET, color="k", ls="--", lw=0.8)
    axes[0].set_xticks(x)
    axes[0].set_xticklabels(groups, rotation=25, ha="right", fontsize=8)
    axes[0].set_ylabel("IQM normalized score (95 % CI)")
    fams = sorted({v.get("family", "genre") for v in res["tasks"].values()})
    judge = res.get("meta", {}).get("judge", "labels")
    axes[0].set_title(f"live on the held-out docs-web sites ({' and '.join(fams)} tasks; learns from: {judge})")
    axes[0].legend(fontsize=7)
    axes[0].grid(alpha=0.3, axis="y")
    for b, ls in zip(sorted({r["budget"] for r in res["runs"]}), ("-", "--")):
        for a in agents:
            curves = [np.asarray(r["curve"], float) for r in res["runs"] if r["agent"] == a and r["budget"] == b]
            if not curves:
                continue
            tot = summed_curves(curves)
            axes[1].plot(np.arange(1, len(tot) + 1), tot / len(curves), ls, color=suite_color(a.split("/")[0]),
                         label=f"{a} B={b}")
    axes[1].set_xlabel("step")
    axes[1].set_ylabel("relevant pages (mean over tasks × seeds)")
    axes[1].set_title("live harvest per step")
    axes[1].legend(fontsize=6, ncol=2)
    axes[1].grid(alpha=0.3)
    save_png(fig, path)


def main(argv: list[str] | None = None) -> int:
    from gym_crawl._io import atomic_write_bytes, atomic_write_json
    from gym_crawl.benchmarks.docs_web import find_sites
    from gym_crawl.tasks.docs_web import load_docs_web
    from gym_crawl.text.model import general_text_model

    ap = argparse.ArgumentParser(prog="gym-crawl bench transfer", description=__doc__.split("\n")[0])
    ap.add_argument("--agents", nargs="+", default=list(AGENTS), help=f"agents (default: {' '.join(AGENTS)})")
    ap.add_argument("--online", nargs="*", default=["best-first-mix"], metavar="AGENT",
                    help="learners also deployed without pretraining, as <agent>/online (default: best-first-mix)")
    ap.add_argument("--as-cli", nargs="*", default=["best-first-mix"], metavar="AGENT",
                    help="learners also run as `crawl --live` runs them (no pretraining, the live web's default "
                         "reward), as <agent>/as-cli (default: best-first-mix)")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--budgets", type=int, nargs="+", default=list(BUDGETS))
    ap.add_argument("--epochs", type=int, default=1, help="pretraining passes over the train tasks")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--concurrency", type=int, default=1, help="pages in flight per live crawl")
    ap.add_argument("--per-host", type=int, default=1, help="pages in flight per host")
    ap.add_argument("--every-seed", action="store_true", help="run best-first per seed (not once per task)")
    ap.add_argument("--crawls-per-worker", type=int, default=4, help="live crawls before a worker is replaced")
    ap.add_argument("--max-test-tasks", type=int, default=None,
                    help="at most this many test tasks per budget and family, evenly spaced over the sections")
    ap.add_argument("--tasks", nargs="+", choices=FAMILIES, default=["genre"],
                    help="task families: genre (docs-web-hard targets, the default) and/or topic (docs-web sections "
                         "named by their own words, as a user asks)")
    ap.add_argument("--judge", choices=JUDGES, default="labels",
                    help="what every live crawl learns from: labels (URL labels, the first protocol), words (the "
                         "topic words: crawl --live's default judge) or examples (the words and --examples pages "
                         "of the section); the score is always the URL labels'")
    ap.add_argument("--examples", type=int, default=3, help="example pages per task and seed with --judge examples")
    ap.add_argument("--reps", type=int, default=2000, help="bootstrap replicates")
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--replot", action="store_true",
                    help="no crawl: summarize --out's transfer.json again and rewrite its .md and .png")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if args.replot:
        import json

        res = json.loads((out / "transfer.json").read_text(encoding="utf-8"))
        seeds = int(res.get("meta", {}).get("seeds", args.seeds))
        res["summary"] = summary = summarize(res, seeds, args.reps)
        atomic_write_json(out / "transfer.json", res)
        atomic_write_bytes(out / "transfer.md", markdown(summary).encode())
        _plot(res, summary, out / "transfer.png")
        print(markdown(summary))
        return 0
    if args.seeds < 1:
        ap.error(f"--seeds must be >= 1, got {args.seeds}")

    def say(s: str) -> None:
        print(s, file=sys.stderr, flush=True)

    corpus = load_docs_web()
    general = general_text_model(required=True, progress=False)  # the same general model for every agent
    roots, _ = find_sites()
    out.mkdir(parents=True, exist_ok=True)
    t0, c0 = time.perf_counter(), time.process_time()
    res = run_transfer(corpus, roots, args.agents, seeds=args.seeds, budgets=args.budgets, epochs=args.epochs,
                       jobs=args.jobs, out=out, concurrency=args.concurrency, per_host=args.per_host,
                       every_seed=args.every_seed, online_forms=args.online, cli_forms=args.as_cli,
                       crawls_per_worker=args.crawls_per_worker,
                       max_test_tasks=args.max_test_tasks, families=args.tasks, judge=args.judge,
                       examples=args.examples, progress=say)
    summary = summarize(res, args.seeds, args.reps)
    res["summary"] = summary
    res["meta"] = {"argv": sys.argv[1:] if argv is None else list(argv), "python": platform.python_version(),
                   "machine": platform.machine(), "seeds": args.seeds, "budgets": args.budgets,
                   "epochs": args.epochs, "concurrency": args.concurrency, "per_host": args.per_host,
                   "tasks": args.tasks, "judge": args.judge, "examples": args.examples,
                   "general_text_model": {"source": general.corpus.name, "words": int(general.corpus.n_words)},
                   "wall_s": round(time.perf_counter() - t0, 1), "parent_cpu_s": round(time.process_time() - c0, 1),
                   "live_cpu_s": round(sum(r["cpu_s"] for r in res["runs"] if r["seed"] == r["run_seed"]), 1)}
    md = markdown(summary)
    atomic_write_json(out / "transfer.json", res)
    atomic_write_bytes(out / "transfer.md", md.encode())
    _plot(res, summary, out / "transfer.png")
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
