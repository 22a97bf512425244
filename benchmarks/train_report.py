"""``gym-crawl train`` (Stable-Baselines3 backend): train on a task set's train topics, report on its test topics.

By default the run uses the default task's set (``hard``: the ``synthetic-hard`` web, labels as reward, each
task's own seed page and budget) and the recipe :data:`RECIPE` (MaskablePPO, the candidate-scoring policy over
``transferable+site`` features, best-first's link score among them). For each of ``--seeds``
training seeds every training episode draws a *train* task, TensorBoard gets the reward on a few held-out tasks
every ``--eval-freq`` steps, and at the end the trained policy crawls every *test* task (``--eval-episodes``
times). The trained policies are then printed next to ``random``, ``best-first`` and ``oracle`` on the same
tasks: pages found and the normalized score (random 0, oracle 1) as an IQM with a stratified bootstrap 95 % CI
over seeds and tasks, whether the trained CI lies above best-first's, and the CPU-minutes of the whole run
(user + system, this process and its children). The figures also go to ``<out>/report.json``, each seed's model
to ``<out>/seed<s>/``.

``--corpus PATH`` alone trains on the task set of that corpus' labels (``corpus:PATH``, your own compiled crawl:
:mod:`gym_crawl.tasks.own_web`; ``--split site`` holds out whole sites), every task at one budget. With
``--train-topics`` / ``--eval-topics`` (and no ``--task-set``) the run trains on named topics instead, each from
its seed pages (``--seed-pages``, else the topic's own, the corpus' own — a compiled live crawl records them — or
its label's most in-linked page), ``--seeds`` training seeds (default one), no baseline table.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._console import EXIT_USAGE, ArgumentParser, Progress, error_line
from gym_crawl._io import atomic_write_json

__all__ = ["apply_task_set", "baseline_runs", "build_parser", "main", "report"]

_TOPIC_FLAGS = ("--train-topics", "--eval-topics", "--corpus")

RECIPE_HYPER: dict[str, Any] = {"n_steps": 256, "batch_size": 256, "n_epochs": 4, "learning_rate": 3e-4,
                                "gamma": 0.9, "gae_lambda": 0.9, "ent_coef": 0.01, "clip_range": 0.2,
                                "max_grad_norm": 0.5}
"""MaskablePPO hyper-parameters of the task-set recipe (``--hyper`` entries override single keys)."""
RECIPE: tuple[tuple[str, str, Any], ...] = (
    ("--features", "features", "transferable+site"),
    ("--timesteps", "timesteps", 10_000),
    ("--n-envs", "n_envs", 2),
    ("--vec", "vec", "dummy"),
    ("--checkpoint-freq", "checkpoint_freq", 0),
    ("--prior", "prior", "none"),
    ("--hyper", "hyper", RECIPE_HYPER),
    ("--torch-threads", "torch_threads", 1),
)
"""``(flag, config field, value)``: what a task-set run uses unless its flag is given — the candidate-scoring
MaskablePPO policy on ``transferable+site`` features (topic-relative columns, best-first's link score among them,
with the host, URL, directory, link-position and page-classifier columns),
scores learned from scratch (``--prior best-first`` starts from best-first instead), 10,000 env steps per seed
over two in-process envs, one PyTorch thread (the network is small: a second thread only adds synchronisation,
several times the CPU time on a shared machine). The hyper-parameters apply to PPO and MaskablePPO only."""
DEFAULT_SEEDS = 5
MONITOR_TASKS = 8
"""Test tasks of the periodic TensorBoard evaluation (the final evaluation runs all of them)."""


def build_parser() -> ArgumentParser:
    import gym_crawl
    from gym_crawl.agents.sb3.train import build_parser as sb3_parser

    p = sb3_parser()
    p.description = __doc__.split("\n\n")[0].replace("``", "`")
    g = p.add_argument_group("task set (the default unless --train-topics, --eval-topics or --corpus is given)")
    g.add_argument("--task-set", default=None,
                   help=f"train on this set's train tasks and report on its test tasks (default "
                        f"{gym_crawl.DEFAULT_TASK_SET!r}, the default task {gym_crawl.DEFAULT_ENV_ID}'s); 'none': "
                        f"named topics only")
    g.add_argument("--max-tasks", type=int, default=None,
                   help="at most this many tasks (half train, half test; default: all)")
    g.add_argument("--wikispeedia", default=None,
                   help="labelled corpus of the ws-* sets (a Wikispeedia folder; default: shared/data/wikispeedia "
                        "next to the repository)")
    g.add_argument("--baseline-seeds", type=int, default=3, help="seeds of the random baseline per test task")
    g.add_argument("--seeds", type=int, default=None,
                   help=f"training seeds (--seed, --seed + 1, …), each trained and evaluated on the test tasks; "
                        f"outputs in <out>/seed<s> (default: {DEFAULT_SEEDS} with a task set, 1 with named topics)")
    own = p.add_argument_group("your own corpus (--corpus PATH: a compiled crawl with labels, `gym-crawl corpus "
                               "compile`)")
    own.add_argument("--seed-pages", nargs="+", default=None, metavar="PAGE",
                     help="seed pages (titles or URLs) of every named topic (default: the topic's own, else the "
                          "corpus' own seeds — a compiled live crawl records them — else the label's most "
                          "in-linked page)")
    own.add_argument("--split", default="label", choices=["label", "site"],
                     help="--corpus without --train-topics/--eval-topics trains on the task set of the corpus' "
                          "labels: hold out labels, or whole sites (a label's site is the host most of its pages "
                          "are on; for a corpus of several sites) (default: label)")
    own.add_argument("--min-pages", type=int, default=None,
                     help="labelled pages a label needs to be a topic of --corpus's task set (default 5)")
    p.set_defaults(out="runs/train")
    _recipe_defaults(p)
    return p


def _recipe_defaults(p: ArgumentParser) -> None:
    """Say in each flag's help where a task-set run's default (:data:`RECIPE`, the task set's corpus, reward and
    budget) differs from a named-topic run's."""
    def shown(v: Any) -> str:
        if isinstance(v, dict):
            return ", ".join(f"{k}={x}" for k, x in v.items()) or "none"
        return ",".join(map(str, v)) if isinstance(v, list) else str(v)

    task = {flag: shown(v) for flag, _, v in RECIPE}
    task["--hyper"] = f"for PPO and MaskablePPO {task['--hyper']}"
    task.update({"--corpus": "the set's", "--train-topics": "the set's train tasks",
                 "--eval-topics": "the set's test tasks", "--reward": "labels",
                 "--max-episode-steps": "the tasks' budget", "--eval-freq": "half of --timesteps"})
    for flag, value in task.items():
        a = p.option_actions[flag]
        named = "none" if a.default is None else shown(a.default)
        if named == value:
            continue
        base = (a.help or "").rstrip()
        if "default" in base:  # the help says the named-topic default in its own words
            a.help = f"{base}; with a task set: {value}"
        else:
            a.help = f"{base} (default: {named}; with a task set: {value})".lstrip()


def apply_task_set(cfg: Any, name: str, *, max_tasks: int | None = None, wikispeedia: str | None = None,
                   eval_freq_given: bool = False, min_pages: int | None = None,
                   budget: int | None = None) -> list[Any]:
    """Point ``cfg`` (a :class:`~gym_crawl.agents.sb3.train.TrainConfig`) at task set ``name``: its corpus, label
    reward, train tasks for training, test tasks for evaluation, the tasks' budget; returns the test tasks.
    A ``corpus:`` set (any labelled corpus, :mod:`gym_crawl.tasks.own_web`) runs every task at one budget:
    ``budget``, else its near tasks'."""
    import dataclasses

    from gym_crawl.benchmarks import suite
    from gym_crawl.tasks.own_web import parse_corpus_set

    own = parse_corpus_set(name) is not None
    flag = "--corpus" if own else "--task-set"
    shown = name.split(":", 1)[1].split("@")[0] if own else name
    sets, _ = suite.build_task_sets([name], wikispeedia=wikispeedia or str(suite.DEFAULT_WIKISPEEDIA),
                                    max_tasks=max_tasks, min_pages=min_pages)
    ts = sets[0]
    if own and ts.tasks:
        one = budget or min(t.budget for t in ts.tasks)
        ts.tasks = [dataclasses.replace(t, budget=int(one)) for t in ts.tasks]
    train = [t for t in ts.tasks if t.split == "train"]
    test = [t for t in ts.tasks if t.split == "test"]
    if not train or not test:
        hint = " (fewer labels than a split needs: name topics with --train-topics/--eval-topics)" if own else ""
        raise ValueError(f"{flag} {shown!r} has no train or no test tasks here: {ts.note or 'too few labels'}"
                         + hint)
    budgets = {t.budget for t in ts.tasks}
    if len(budgets) != 1:
        raise ValueError(f"--task-set {name!r} mixes budgets {sorted(budgets)}; one training run needs one budget")
    cfg.corpus = ts.corpus_spec
    cfg.reward = "labels"
    cfg.max_episode_steps = budgets.pop()
    cfg.train_topics = [{"topic": t.label, "seeds": list(t.seeds)} for t in train]
    cfg.eval_topics = [{"topic": t.label, "seeds": list(t.seeds)} for t in test]
    if not eval_freq_given:
        cfg.eval_freq = max(cfg.timesteps // 2, 1)
    return test


def baseline_runs(cfg: Any, tasks: list[Any], seeds: int) -> dict[str, np.ndarray]:
    """Relevant pages found by ``random`` (``seeds`` seeds), ``best-first`` and ``oracle`` on each task:
    ``{agent: (runs, tasks)}`` (the two seed-independent crawls run once); a progress bar on stderr unless
    ``cfg.progress_bar`` is off."""
    from gym_crawl.agents import make_agent, make_env_for, run_episode
    from gym_crawl.corpus import load_corpus

    corpus = load_corpus(cfg.corpus)
    out: dict[str, np.ndarray] = {}
    plan = (("random", seeds), ("best-first", 1), ("oracle", 1))
    with Progress(sum(n for _, n in plan) * len(tasks), "baselines random, best-first, oracle", unit="crawls",
                  enabled=getattr(cfg, "progress_bar", True), announce=True) as bar:
        for name, n in plan:
            agent = make_agent(name)
            env = make_env_for(agent, corpus=corpus, reward=cfg.reward, max_episode_steps=cfg.max_episode_steps,
                               topic=tasks[0].label, seeds=list(tasks[0].seeds))
            m = np.zeros((n, len(tasks)))
            for j, t in enumerate(tasks):
                for s in range(n):
                    m[s, j] = run_episode(env, agent, seed=s, options={"topic": t.label, "seeds": list(t.seeds)}
                                          ).relevant_found
                    bar.update(1)
            env.close()
            out[name] = m
    return out


def report(found: dict[str, np.ndarray], reps: int = 2000) -> dict[str, dict[str, Any]]:
    """Pages found ``{agent: (runs, tasks)}`` → per agent: mean found, normalized IQM, its 95 % CI and mean."""
    from gym_crawl.benchmarks.suite import iqm_ci

    lo, hi = found["random"].mean(axis=0), found["oracle"].mean(axis=0)
    keep = hi > lo
    out = {}
    for a, m in found.items():
        z = (m[:, keep] - lo[keep]) / (hi[keep] - lo[keep])
        iqm, c0, c1 = iqm_ci(z, reps=reps)
        out[a] = {"mean_found": float(m.mean()), "iqm": iqm, "ci": [c0, c1], "mean": float(z.mean()),
                  "tasks": int(keep.sum())}
    return out


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process and its finished children (what ``/usr/bin/time`` adds up)."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def named_tasks(corpus: Any, topics: list[Any], seed_pages: list[str] | None) -> list[Any]:
    """Each named topic with its seed pages on ``corpus``: the topic as it is when the env finds its seeds itself
    and ``seed_pages`` is not given, else a task ``{"topic": name, "seeds": [...]}``
    (:func:`gym_crawl.tasks.own_web.topic_seed_pages`: ``seed_pages``, or its label's most in-linked page)."""
    from gym_crawl.relevance.topic import resolve_topic
    from gym_crawl.relevance.topic import seed_pages as env_seed_pages
    from gym_crawl.tasks.own_web import topic_seed_pages

    out = []
    for t in topics:
        if not isinstance(t, dict) and not seed_pages:
            try:
                env_seed_pages(resolve_topic(t, corpus), corpus)
                out.append(t)
                continue
            except ValueError:
                pass
        out.append(t if isinstance(t, dict) else {"topic": t, "seeds": topic_seed_pages(corpus, t, seed_pages)})
    return out


def _train_named(a: argparse.Namespace, given: set[str]) -> int:
    """Named topics (``--train-topics`` / ``--eval-topics`` / ``--corpus``): each topic from its seed pages
    (``--seed-pages``, else the topic's, the corpus' own or its label's most in-linked page), ``--seeds N``
    training seeds (default 1; several: outputs in ``<out>/seed<s>``)."""
    import dataclasses

    from gym_crawl.agents.sb3 import train as sb3_train
    from gym_crawl.corpus import load_corpus

    n_seeds = 1 if a.seeds is None else a.seeds
    try:
        if n_seeds < 1:
            raise ValueError(f"--seeds must be >= 1, got {n_seeds}")
        for flag in ("--max-tasks", "--wikispeedia", "--baseline-seeds", "--min-pages"):
            if flag in given:
                raise ValueError(f"{flag} applies to a task set (--task-set NAME, or --corpus PATH without "
                                 f"--train-topics/--eval-topics)")
        cfg = sb3_train.config_from_args(a)
        cfg.validate()
        corpus = load_corpus(cfg.corpus)
        cfg.train_topics = named_tasks(corpus, cfg.train_topics, a.seed_pages)
        cfg.eval_topics = named_tasks(corpus, cfg.eval_topics, a.seed_pages)
    except ValueError as e:
        print(error_line(e), file=sys.stderr)
        return EXIT_USAGE
    cfg.set_omp_threads()
    for seed in range(cfg.seed, cfg.seed + n_seeds):
        c = cfg if n_seeds == 1 else dataclasses.replace(cfg, seed=seed, out=str(Path(cfg.out) / f"seed{seed}"))
        sb3_train.print_result(sb3_train.train(c))
    return 0


def main(argv: list[str] | None = None) -> int:
    import dataclasses

    import gym_crawl
    from gym_crawl.agents.sb3 import train as sb3_train

    argv = list(argv or [])
    a = build_parser().parse_args(argv)
    given = {arg.split("=")[0] for arg in argv if arg.startswith("-")}
    named = bool(given & set(_TOPIC_FLAGS))
    topics_named = bool(given & {"--train-topics", "--eval-topics"})
    set_name = a.task_set if a.task_set is not None else (None if named else gym_crawl.DEFAULT_TASK_SET)
    if a.task_set is None and "--corpus" in given and not topics_named:
        from gym_crawl.tasks.own_web import corpus_set_name

        set_name = corpus_set_name(a.corpus, a.split)  # the task set of the corpus' labels
    elif "--split" in given:
        print(error_line("--split applies to --corpus without --train-topics/--eval-topics (the task set of the "
                         "corpus' labels)"), file=sys.stderr)
        return EXIT_USAGE
    if set_name == "none":
        set_name = None
    if not set_name:
        return _train_named(a, given)
    if a.seeds is None:
        a.seeds = DEFAULT_SEEDS
    try:
        if a.seeds < 1:
            raise ValueError(f"--seeds must be >= 1, got {a.seeds}")
        if a.seed_pages:
            raise ValueError("--seed-pages gives the seeds of named topics (--train-topics/--eval-topics); a task "
                             "set's tasks have their own")
        cfg = sb3_train.config_from_args(a)
        ppo = cfg.algo in ("ppo", "maskable-ppo")
        for flag, field, value in RECIPE:  # the task-set recipe, where the command line does not say otherwise
            if flag not in given and (field != "hyper" or ppo):
                setattr(cfg, field, dict(value) if isinstance(value, dict) else value)
        if "--hyper" in given and ppo:
            cfg.hyper = {**RECIPE_HYPER, **a.hyper}
        test = apply_task_set(cfg, set_name, max_tasks=a.max_tasks, wikispeedia=a.wikispeedia,
                              eval_freq_given="--eval-freq" in given, min_pages=a.min_pages,
                              budget=a.max_episode_steps if "--max-episode-steps" in given else None)
        cfg.eval_train = False
        cfg.eval_monitor_tasks = MONITOR_TASKS
        cfg.validate()
    except ValueError as e:
        print(error_line(e), file=sys.stderr)
        return EXIT_USAGE
    cfg.set_omp_threads()
    seeds = [cfg.seed + i for i in range(a.seeds)]
    print(f"task set {set_name} ({cfg.corpus}): {len(cfg.train_topics)} train tasks, {len(test)} test tasks, "
          f"budget {cfg.max_episode_steps}; {cfg.algo} ({cfg.policy} policy, prior {cfg.prior}, features "
          f"{cfg.features}, K = {cfg.max_candidates}), {cfg.timesteps} env steps per training seed, seeds {seeds}")
    cpu0, t_all = _cpu_seconds(), time.perf_counter()
    world = sb3_train.precompute_world(cfg)  # every topic's score tables, once for all seeds and the baselines
    n_ep = max(1, cfg.eval_episodes)
    trained = np.zeros((len(seeds) * n_ep, len(test)))
    runs = []
    for k, seed in enumerate(seeds):
        c = dataclasses.replace(cfg, seed=seed, out=str(Path(cfg.out) / f"seed{seed}"), hyper=dict(cfg.hyper),
                                train_topics=list(cfg.train_topics), eval_topics=list(cfg.eval_topics))
        res = sb3_train.train(c)
        for i, r in enumerate(res.evaluation["eval"]):  # the eval env cycles through the test tasks in order
            trained[k * n_ep + i // len(test), i % len(test)] = r["relevant_found"]
        runs.append({"seed": seed, "timesteps": res.timesteps, "train_seconds": round(res.train_seconds, 1),
                     "train_cpu_seconds": round(res.train_cpu_seconds, 1),
                     "mean_found": float(trained[k * n_ep:(k + 1) * n_ep].mean())})
        print(f"  seed {seed}: {res.timesteps} steps in {res.train_seconds:.0f} s ({res.train_cpu_seconds:.0f} CPU-s "
              f"learning), test tasks: {runs[-1]['mean_found']:.1f} pages found per task")
    t0 = time.perf_counter()
    name = f"trained {cfg.algo}"
    found = {name: trained, **baseline_runs(cfg, test, a.baseline_seeds)}
    table = report(found)
    del world
    cpu = _cpu_seconds() - cpu0
    print(f"{cfg.algo} trained on {len(cfg.train_topics)} tasks, {len(seeds)} seed(s); {table[name]['tasks']} test "
          f"tasks with oracle > random; baselines in {time.perf_counter() - t0:.0f} s; whole run "
          f"{time.perf_counter() - t_all:.0f} s, {cpu / 60:.1f} CPU-minutes:")
    one_run = trained.shape[0] == 1  # the bootstrap resamples runs within each task: one run, no interval
    print("| agent | mean found | normalized IQM | 95 % CI | mean |")
    print("| --- | ---: | ---: | --- | ---: |")
    for agent in (name, "best-first", "random", "oracle"):
        v = table[agent]
        ci = "—" if one_run and agent == name else f"[{v['ci'][0]:.3f}, {v['ci'][1]:.3f}]"
        print(f"| {agent} | {v['mean_found']:.1f} | {v['iqm']:.3f} | {ci} | {v['mean']:.3f} |")
    if one_run:
        print(f"trained vs best-first: IQM {table[name]['iqm']:.3f} vs {table['best-first']['iqm']:.3f}; no CI "
              f"with one evaluation run of one training seed (the bootstrap resamples the runs of each task, so one "
              f"run gives an interval of zero width): use --seeds 5 to compare them")
    else:
        lo, bf = table[name]["ci"][0], table["best-first"]["ci"][1]
        below = table[name]["ci"][1] < table["best-first"]["ci"][0]
        verdict = "above" if lo > bf else ("below" if below else "overlapping")
        print(f"trained vs best-first: CIs {verdict} (trained lower end {lo:.3f}, best-first upper end {bf:.3f})")
    atomic_write_json(Path(cfg.out) / "report.json",
                      {"task_set": set_name, "test_tasks": [t.name for t in test], "agents": table,
                       "found": {k: v.tolist() for k, v in found.items()}, "runs": runs,
                       "cpu_seconds": round(cpu, 1), "config": dataclasses.asdict(cfg)})
    print(f"  saved {Path(cfg.out) / 'report.json'} and per seed model.zip, agent.npz in "
          f"{Path(cfg.out) / f'seed{seeds[0]}'} …")
    if cfg.tensorboard:
        print(f"  TensorBoard logs: {Path(cfg.out) / 'seed*' / 'tb'} (tensorboard --logdir {cfg.out})")
    return 0
