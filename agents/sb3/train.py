"""Train and evaluate stock Stable-Baselines3 agents on the crawl MDP (CLI ``gym-crawl train``).

::

    gym-crawl train --algo maskable-ppo --wrapper discrete --policy scoring \\
        --corpus synthetic --train-topics geology,cancer,poetry,astronomy,jazz \\
        --eval-topics sports,fiction,cameras --timesteps 100000 --n-envs 2 --seed 0 --out runs/mppo

Algorithms: ``dqn``, ``ppo``, ``a2c``, ``maskable-ppo`` on the discrete wrapper
(:class:`gym_crawl.wrappers.DiscreteScoringWrapper`), ``ppo``, ``a2c``, ``sac``, ``td3``
on the continuous one (:class:`gym_crawl.wrappers.LinearScoringWrapper`). Policies:
``scoring`` (:mod:`agents.sb3.policies`, discrete only) or ``mlp`` (stock
``MultiInputPolicy`` on the ``Dict`` observation, ``MlpPolicy`` with ``--flatten`` or on
the continuous wrapper).

The scoring policy starts from best-first by default (``--prior best-first``: score = a learned scale times
best-first's link score, the feature column ``a.link_rel``, plus a learned residual whose output layer starts at
zero, :mod:`agents.sb3.policies`); ``--prior none`` learns the scores from scratch.

Protocol: every training episode draws a topic from ``--train-topics``
(:class:`gym_crawl.wrappers.TopicSampler`, seeded); evaluation runs each topic of
``--eval-topics`` (held out) and of ``--train-topics`` once per ``--eval-episodes``, with
SB3's ``evaluate_policy`` (sb3-contrib's masked version for MaskablePPO), and reports
episode reward and the relevant pages found per episode. During training an
``EvalCallback`` (``MaskableEvalCallback``) logs the held-out reward to TensorBoard every
``--eval-freq`` steps — monitoring only: the *final* model is reported, never the
checkpoint that scored best on held-out topics.

Machinery: ``SubprocVecEnv`` for ``--n-envs`` > 1 (each worker memory-maps the cached
corpus — ``synthetic`` / ``synthetic-N`` / compiled corpora are ``np.load(mmap_mode="r")``;
the main process builds the cache first; resident memory per worker is measured and
reported), TensorBoard logs in ``<out>/tb`` (printed at the end), a labelled progress bar of env steps on
stderr, ``CheckpointCallback``
(``<out>/checkpoints``), seeds for envs, topics and networks. Outputs in ``--out``:
``model.zip`` (SB3's format), ``agent.npz`` (pickle-free :class:`agents.sb3.agent.SB3Agent`,
for ``--agent sb3:<out>``), ``config.json``, ``results.json``.

Rewards are scaled by ``1 / max_reward`` by default (Han's 30 / -1 become 1 / -0.033) so
that value losses do not swamp PPO's clipped gradient; ``info["reward_sum"]`` and the
reported episode rewards are unscaled.
"""
from __future__ import annotations

import argparse
import functools
import logging
import os
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._console import EXIT_USAGE, ArgumentParser, HelpFormatter, Progress, add_verbosity, error_line
from gym_crawl.agents.train_common import (
    CrawlTrainingConfig,
    add_common_arguments,
    available_cores,
    resolve_torch_threads,
    summarize_episodes,
    use_subprocesses,
)

__all__ = ["TrainConfig", "TrainResult", "DEFAULT_HYPER", "DISCRETE_ALGOS", "CONTINUOUS_ALGOS", "env_kwargs",
           "make_env", "make_vec_env", "build_model", "policy_spec", "precompute_world", "train", "evaluate",
           "worker_memory", "worker_died", "process_memory", "print_result", "main"]

log = logging.getLogger("gym_crawl")

DISCRETE_ALGOS = ("dqn", "ppo", "a2c", "maskable-ppo")
CONTINUOUS_ALGOS = ("ppo", "a2c", "sac", "td3")

DEFAULT_HYPER: dict[str, dict[str, Any]] = {
    "ppo": {"n_steps": 256, "batch_size": 128, "n_epochs": 4, "learning_rate": 3e-4, "gamma": 0.9,
            "gae_lambda": 0.9, "ent_coef": 0.003, "clip_range": 0.2},
    "maskable-ppo": {"n_steps": 256, "batch_size": 128, "n_epochs": 4, "learning_rate": 3e-4, "gamma": 0.9,
                     "gae_lambda": 0.9, "ent_coef": 0.003, "clip_range": 0.2},
    "a2c": {"n_steps": 8, "learning_rate": 7e-4, "gamma": 0.9, "ent_coef": 0.003},
    "dqn": {"learning_rate": 3e-4, "buffer_size": 50_000, "learning_starts": 1_000, "batch_size": 64,
            "train_freq": 4, "target_update_interval": 1_000, "exploration_fraction": 0.2,
            "exploration_final_eps": 0.02, "gamma": 0.9},
    "sac": {"learning_rate": 3e-4, "buffer_size": 50_000, "learning_starts": 1_000, "batch_size": 128,
            "train_freq": 4, "gradient_steps": 1, "gamma": 0.9},
    "td3": {"learning_rate": 3e-4, "buffer_size": 50_000, "learning_starts": 1_000, "batch_size": 128,
            "train_freq": 4, "gradient_steps": 1, "gamma": 0.9},
}
"""Per-algorithm defaults (γ = 0.9, Han et al.'s value; the thesis found smaller γ — 0.1 to 0.6 — better than 0.9
for its LFA crawler, so try ``--hyper '{"gamma": 0.3}'``); ``--hyper`` JSON overrides."""


@dataclass
class TrainConfig(CrawlTrainingConfig):
    """Everything a training run depends on (saved as ``config.json``): the fields common to both backends
    (:class:`~gym_crawl.agents.train_common.CrawlTrainingConfig`) and SB3's own."""

    out: str = "runs/sb3"
    algo: str = "maskable-ppo"
    wrapper: str = "discrete"
    policy: str = "scoring"
    n_envs: int = 2
    flatten: bool = False
    top_rows: int = 4
    eval_freq: int = 0
    checkpoint_freq: int = 50_000
    progress_bar: bool = True
    tensorboard: bool = True
    vec: str = "auto"
    device: str = "cpu"
    prior: str = "best-first"
    prior_scale: float = 20.0
    eval_monitor_tasks: int = 0
    eval_train: bool = True

    def set_omp_threads(self) -> None:
        """Set ``OMP_NUM_THREADS`` (unless the environment sets it already) to the torch threads of this run
        (:func:`~gym_crawl.agents.train_common.resolve_torch_threads`), before torch starts its thread pool."""
        os.environ.setdefault("OMP_NUM_THREADS", str(resolve_torch_threads(self.torch_threads, self.n_envs,
                                                                           use_subprocesses(self.n_envs, self.vec))))

    def validate(self) -> None:
        if self.wrapper not in ("discrete", "continuous"):
            raise ValueError(f"--wrapper must be 'discrete' or 'continuous', got {self.wrapper!r}")
        ok = DISCRETE_ALGOS if self.wrapper == "discrete" else CONTINUOUS_ALGOS
        if self.algo not in ok:
            raise ValueError(f"--algo {self.algo!r} does not fit the {self.wrapper} wrapper; choose one of {ok}")
        if self.policy not in ("scoring", "mlp"):
            raise ValueError(f"--policy must be 'scoring' or 'mlp', got {self.policy!r}")
        if self.policy == "scoring" and self.wrapper == "continuous":
            raise ValueError("--policy scoring scores candidate rows of the discrete wrapper; "
                             "use --policy mlp with --wrapper continuous")
        self.validate_common()
        if self.n_envs < 1:
            raise ValueError(f"--n-envs must be >= 1, got {self.n_envs}")
        if self.vec not in ("auto", "subproc", "dummy"):
            raise ValueError(f"--vec must be auto, subproc or dummy, got {self.vec!r}")
        if self.eval_monitor_tasks < 0:
            raise ValueError(f"eval_monitor_tasks must be >= 0, got {self.eval_monitor_tasks}")
        if self.prior not in ("best-first", "none"):
            raise ValueError(f"--prior must be 'best-first' or 'none', got {self.prior!r}")
        if not float(self.prior_scale) > 0:
            raise ValueError(f"--prior-scale must be > 0, got {self.prior_scale}")
        if self.prior == "best-first" and self.policy == "scoring":
            from gym_crawl.features import get_feature_set

            names = get_feature_set(self.features).names
            _link_score_column(self.features, len(names))


@dataclass
class TrainResult:
    """What :func:`train` produced. ``evaluation`` maps ``"train"`` / ``"eval"`` to per-episode dicts."""

    config: TrainConfig
    model: Any
    agent: Any
    out: Path
    train_seconds: float
    timesteps: int
    evaluation: dict[str, list[dict[str, Any]]]
    worker_memory_mb: list[dict[str, float]]
    train_cpu_seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        ev = {k: summarize_episodes(v) for k, v in self.evaluation.items()}
        return {"algo": self.config.algo, "wrapper": self.config.wrapper, "policy": self.config.policy,
                "corpus": self.config.corpus, "timesteps": self.timesteps,
                "train_seconds": round(self.train_seconds, 2),
                "train_cpu_seconds": round(self.train_cpu_seconds, 2), "evaluation": ev,
                "worker_memory_mb": self.worker_memory_mb}


# --------------------------------------------------------------------------- environments
def env_kwargs(cfg: TrainConfig) -> dict[str, Any]:
    """``WikiCrawlEnv`` arguments of a run (corpus, reducer, K, features, reward)."""
    return {"corpus": cfg.corpus, "reducer": cfg.reducer, "max_candidates": cfg.max_candidates,
            "features": cfg.features, "reward": cfg.reward}


def _build_env(spec: dict[str, Any]) -> Any:
    """Module-level (picklable) factory used by the vectorized envs' workers."""
    from stable_baselines3.common.monitor import Monitor

    from gym_crawl.wrappers import make_scoring_env

    return Monitor(make_scoring_env(**spec))


def make_env(cfg: TrainConfig, topics: Sequence[str], topic_mode: str = "random", corpus: Any = None) -> Any:
    """One Monitor-wrapped scoring env of ``cfg`` sampling ``topics`` (``corpus``: a loaded Corpus to reuse)."""
    return _build_env(_env_spec(cfg, topics, topic_mode, corpus))


def _env_spec(cfg: TrainConfig, topics: Sequence[str], topic_mode: str, corpus: Any = None) -> dict[str, Any]:
    kw = env_kwargs(cfg)
    if corpus is not None:
        kw["corpus"] = corpus
    return {"kind": cfg.wrapper, "env_id": cfg.env_id, "topics": list(topics), "topic_mode": topic_mode,
            "max_episode_steps": cfg.max_episode_steps, "flatten": cfg.flatten, "top_rows": cfg.top_rows,
            "reward_scale": cfg.env_reward_scale(), **kw}


def make_vec_env(cfg: TrainConfig, topics: Sequence[str], n_envs: int, seed: int, topic_mode: str = "random",
                 vec: str | None = None) -> Any:
    """``n_envs`` envs in a ``SubprocVecEnv`` (workers load the corpus by name: memory-mapped from the cache)
    or a ``DummyVecEnv`` (``vec="dummy"``, or ``"auto"`` with one env). Seeded ``seed + rank``."""
    from stable_baselines3.common.env_util import make_vec_env as sb3_make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    vec = vec or cfg.vec
    use_subproc = use_subprocesses(n_envs, vec)
    if vec == "auto" and n_envs > 1 and not use_subproc:
        logging.getLogger("gym_crawl").info("%d envs > %d cores: stepping them in this process (DummyVecEnv)",
                                            n_envs, available_cores())
    spec = _env_spec(cfg, topics, topic_mode)
    fn = functools.partial(_make_unmonitored, spec)
    if use_subproc:  # a bad topic, seed or option fails here, in this process, as one error (not in a worker)
        fn().close()
    try:
        return sb3_make_vec_env(fn, n_envs=n_envs, seed=seed,
                                vec_env_cls=SubprocVecEnv if use_subproc else DummyVecEnv)
    except (EOFError, ConnectionError) as e:
        raise worker_died(e) from None


def worker_died(e: BaseException) -> OSError:
    """The error of a ``SubprocVecEnv`` whose worker ended (its own traceback is on stderr): an ``OSError`` saying
    so and how to get the error in this process, instead of the pipe's ``Connection reset by peer``."""
    return OSError(f"an env worker process ended ({type(e).__name__}; its error is printed above); rerun with "
                   f"--vec dummy to step the envs in this process")


def _make_unmonitored(spec: dict[str, Any]) -> Any:
    from gym_crawl.wrappers import make_scoring_env

    return make_scoring_env(**spec)  # make_vec_env adds the Monitor


def process_memory(pid: int) -> dict[str, float]:
    """Memory of process ``pid`` in MB from ``/proc/<pid>/smaps_rollup``: ``rss``, ``pss`` (shared pages
    divided among their users), ``uss`` (private pages: what one more worker costs), ``shared``."""
    vals: dict[str, float] = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
                    vals[parts[0][:-1]] = int(parts[1]) / 1024.0
    except OSError:
        return {}
    return {"rss": round(vals.get("Rss", 0.0), 1), "pss": round(vals.get("Pss", 0.0), 1),
            "uss": round(vals.get("Private_Clean", 0.0) + vals.get("Private_Dirty", 0.0), 1),
            "shared": round(vals.get("Shared_Clean", 0.0) + vals.get("Shared_Dirty", 0.0), 1)}


def worker_memory(vec_env: Any) -> list[dict[str, float]]:
    """:func:`process_memory` of each ``SubprocVecEnv`` worker (empty for in-process envs)."""
    procs = getattr(vec_env, "processes", None) or []
    return [{"pid": p.pid, **process_memory(p.pid)} for p in procs]


# --------------------------------------------------------------------------- models
def policy_spec(cfg: TrainConfig, candidate_dim: int) -> tuple[str, dict[str, Any]]:
    """``(policy name, JSON policy_kwargs)`` for SB3 (names resolvable by :func:`agents.sb3.agent.policy_class`).
    The scoring policy with ``cfg.prior == "best-first"`` scores ``β · link score + learned residual`` and starts
    as best-first (:mod:`agents.sb3.policies`); the link-score column is looked up in ``cfg.features``."""
    hidden = [int(h) for h in cfg.hidden]
    if cfg.policy == "scoring":
        name = {"dqn": "CandidateScoringDQNPolicy", "maskable-ppo": "MaskableCandidateScoringPolicy"}.get(
            cfg.algo, "CandidateScoringPolicy")
        kw: dict[str, Any] = {"scorer_kwargs": {"hidden": hidden, "head": hidden[-1:], "value": hidden[-1:]}}
        if cfg.prior == "best-first":
            kw["scorer_kwargs"]["prior_column"] = _link_score_column(cfg.features, candidate_dim)
            kw["scorer_kwargs"]["prior_scale"] = float(cfg.prior_scale)
        if cfg.algo == "dqn":
            del kw["scorer_kwargs"]["value"]
        if cfg.flatten:
            kw["features_extractor_kwargs"] = {"candidate_dim": int(candidate_dim)}
        return name, kw
    name = "MultiInputPolicy" if (cfg.wrapper == "discrete" and not cfg.flatten) else "MlpPolicy"
    return name, {"net_arch": hidden}


def _link_score_column(features: str, candidate_dim: int) -> int:
    from gym_crawl.agents.sb3.policies import link_score_column
    from gym_crawl.features import get_feature_set

    names = get_feature_set(features).names
    if len(names) != candidate_dim:
        raise ValueError(f"--features {features!r} has {len(names)} columns but the env's rows have {candidate_dim}")
    try:
        return link_score_column(names)
    except ValueError as e:
        raise ValueError(f"--prior best-first with --features {features!r}: {e}; or pass --prior none") from None


def build_model(cfg: TrainConfig, env: Any, tensorboard_log: str | None = None) -> Any:
    """The SB3 algorithm of ``cfg`` on the vectorized ``env`` (defaults: :data:`DEFAULT_HYPER`, ``--hyper`` wins)."""
    from gym_crawl.agents.sb3.agent import algo_class, policy_class

    d = int(env.get_attr("candidate_dim")[0])
    name, pkw = policy_spec(cfg, d)
    hyper = {**DEFAULT_HYPER[cfg.algo], **cfg.hyper}
    if cfg.algo in ("ppo", "maskable-ppo"):  # keep the minibatch a divisor of the rollout
        hyper["batch_size"] = min(int(hyper["batch_size"]), int(hyper["n_steps"]) * cfg.n_envs)
    cls = algo_class(cfg.algo)
    pol = policy_class(cfg.algo, name)
    return cls(pol, env, policy_kwargs=pkw, seed=cfg.seed, verbose=0, device=cfg.device,
               tensorboard_log=tensorboard_log, **hyper)


# --------------------------------------------------------------------------- evaluation
def evaluate(model: Any, cfg: TrainConfig, topics: Sequence[str], episodes_per_topic: int = 1,
             seed: int = 10_000, what: str = "topic") -> list[dict[str, Any]]:
    """SB3 ``evaluate_policy`` (sb3-contrib's for MaskablePPO), deterministic, each topic ``episodes_per_topic``
    times (``what`` names the topics in the progress line, e.g. ``"held-out topic"``); per episode: ``topic``,
    ``reward`` (unscaled), ``relevant_found``, ``pages_fetched``,
    ``relevant_auc`` (mean of the relevant-pages curve), ``invalid_actions``, ``steps``."""
    topics = list(topics)
    if not topics:
        return []
    env = make_vec_env(cfg, topics, 1, seed, topic_mode="cycle", vec="dummy")
    rows: list[dict[str, Any]] = []
    curve: list[int] = []
    invalid = [0]

    def cb(locals_: dict[str, Any], globals_: dict[str, Any]) -> None:
        info = locals_["info"]
        curve.append(int(info["relevant_found"]))
        invalid[0] += bool(info.get("invalid_action", False))
        if locals_["done"]:
            rows.append({"topic": info["topic"], "reward": float(info["reward_sum"]),
                         "relevant_found": int(info["relevant_found"]), "pages_fetched": int(info["pages_fetched"]),
                         "relevant_auc": float(np.mean(curve)) if curve else 0.0,
                         "invalid_actions": invalid[0], "steps": int(info["steps"])})
            curve.clear()
            invalid[0] = 0

    n = len(topics) * episodes_per_topic
    with Progress(n, f"evaluate seed {cfg.seed} on {len(topics)} {what}{'s' if len(topics) != 1 else ''}",
                  unit="episodes", enabled=cfg.progress_bar, announce=True) as bar:
        def step(locals_: dict[str, Any], globals_: dict[str, Any]) -> None:
            cb(locals_, globals_)
            if locals_["done"]:
                bar.update(1)

        if cfg.algo == "maskable-ppo":
            from sb3_contrib.common.maskable.evaluation import evaluate_policy as maskable_evaluate

            maskable_evaluate(model, env, n_eval_episodes=n, deterministic=True, callback=step, warn=False)
        else:
            from stable_baselines3.common.evaluation import evaluate_policy

            evaluate_policy(model, env, n_eval_episodes=n, deterministic=True, callback=step, warn=False)
    env.close()
    return rows


# --------------------------------------------------------------------------- training
def precompute_world(cfg: TrainConfig) -> Any:
    """Load ``cfg``'s corpus and text model (building their caches) and, when the envs step in this process,
    score all train and eval topics in one pass (:meth:`gym_crawl.envs.CrawlWorld.precompute_scores`) instead
    of each at its first ``reset``; returns the world (it holds the corpus, so keep it while the envs run)."""
    from gym_crawl.envs import CrawlWorld

    world = CrawlWorld(corpus=cfg.corpus)
    if not use_subprocesses(cfg.n_envs, cfg.vec):
        world.precompute_scores([*cfg.train_topics, *cfg.eval_topics], progress=cfg.progress_bar)
    return world


def trained_text(world: Any, features: Any) -> dict[str, Any]:
    """What the saved model records of its inputs beyond the feature set's name (:mod:`gym_crawl.agents.env_config`):
    the text model of the run's ``world``, its category slots and, for a named feature set, the feature width."""
    from gym_crawl.features.sets import get_feature_set
    from gym_crawl.text.model import describe_text_model

    out: dict[str, Any] = {"n_categories": int(world.n_categories), "text_model": describe_text_model(world.text)}
    if isinstance(features, str):
        out["feature_dim"] = int(get_feature_set(features, world.n_categories, dim=world.text.dim).dim)
    return out


def _crawl_metrics_callback() -> Any:
    from stable_baselines3.common.callbacks import BaseCallback

    class CrawlMetrics(BaseCallback):
        """Crawl metrics in TensorBoard: finished episodes (``crawl/*``) and, so that a run shorter than
        one episode shows progress too, the running crawls at every rollout's end (``crawl_live/*``)."""

        def _on_step(self) -> bool:
            for done, info in zip(self.locals.get("dones", []), self.locals.get("infos", [])):
                if done and "relevant_found" in info:
                    self.logger.record_mean("crawl/relevant_found", info["relevant_found"])
                    self.logger.record_mean("crawl/harvest_rate", info["harvest_rate"])
                    self.logger.record_mean("crawl/reward_sum", info["reward_sum"])
            return True

        def _on_rollout_end(self) -> None:
            infos = [i for i in self.locals.get("infos", []) if "relevant_found" in i]
            if infos:
                self.logger.record("crawl_live/harvest_rate", float(np.mean([i["harvest_rate"] for i in infos])))
                self.logger.record("crawl_live/relevant_found", float(np.mean([i["relevant_found"] for i in infos])))
                self.logger.record("crawl_live/steps", float(np.mean([i["steps"] for i in infos])))

    return CrawlMetrics()


def _progress_callback(total: int, desc: str) -> Any:
    """An SB3 callback drawing the run's env steps as one labelled bar on stderr (:class:`gym_crawl._console.Progress`,
    the progress style of every ``gym-crawl`` command), in place of SB3's own bar (rich, on stdout)."""
    from stable_baselines3.common.callbacks import BaseCallback

    class ProgressBar(BaseCallback):
        def _on_training_start(self) -> None:
            # an on-policy algorithm (PPO, A2C) collects whole rollouts of n_steps per env: it runs that many more
            rollout = int(getattr(self.model, "n_steps", 0) or 0) * self.training_env.num_envs
            steps = -(-total // rollout) * rollout if rollout > 0 else total
            self.bar = Progress(steps, desc, unit="env steps", announce=True)

        def _on_step(self) -> bool:
            self.bar.update(self.training_env.num_envs)
            return True

        def _on_training_end(self) -> None:
            self.bar.close()

    return ProgressBar()


def train(cfg: TrainConfig) -> TrainResult:
    """Train ``cfg.algo`` for ``cfg.timesteps`` env steps, save the model and agent, evaluate on train and held-out
    topics. See the module docstring for outputs."""
    import torch as th
    from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback

    from gym_crawl._io import atomic_write_json
    from gym_crawl.agents.sb3.agent import SB3Agent

    cfg.validate()
    th.set_num_threads(resolve_torch_threads(cfg.torch_threads, cfg.n_envs, use_subprocesses(cfg.n_envs, cfg.vec)))
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out / "config.json", asdict(cfg))
    # build the corpus / text-model caches once, here, so that workers only memory-map them; in-process envs
    # read this process' score tables: fill every topic's in one pass (the world holds the corpus, and with it
    # the tables, until the run ends)
    world = precompute_world(cfg)

    if cfg.progress_bar:
        plural = "s" if cfg.n_envs != 1 else ""
        where = (f"starting {cfg.n_envs} worker processes (each opens the corpus and builds its env)"
                 if use_subprocesses(cfg.n_envs, cfg.vec) else f"building {cfg.n_envs} env{plural}")
        log.info("train %s seed %d: %s over %d topic%s, and the model", cfg.algo, cfg.seed, where,
                 len(cfg.train_topics), "s" if len(cfg.train_topics) != 1 else "")
    env = make_vec_env(cfg, cfg.train_topics, cfg.n_envs, cfg.seed)
    memory = worker_memory(env)
    candidate_dim = int(env.get_attr("candidate_dim")[0])
    model = build_model(cfg, env, str(out / "tb") if cfg.tensorboard else None)
    callbacks: list[Any] = [_crawl_metrics_callback()]
    if cfg.checkpoint_freq > 0:
        callbacks.append(CheckpointCallback(save_freq=max(cfg.checkpoint_freq // cfg.n_envs, 1),
                                            save_path=str(out / "checkpoints"), name_prefix=cfg.algo))
    eval_env = None
    if cfg.eval_freq > 0 and cfg.eval_topics:
        monitor = cfg.eval_topics[: cfg.eval_monitor_tasks or None]
        eval_env = make_vec_env(cfg, monitor, 1, cfg.seed + 10_000, topic_mode="cycle", vec="dummy")
        kw = dict(n_eval_episodes=len(monitor), eval_freq=max(cfg.eval_freq // cfg.n_envs, 1),
                  deterministic=True, log_path=str(out / "eval"), verbose=0)
        if cfg.algo == "maskable-ppo":
            from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback

            callbacks.append(MaskableEvalCallback(eval_env, **kw))
        else:
            from stable_baselines3.common.callbacks import EvalCallback

            callbacks.append(EvalCallback(eval_env, **kw))
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():  # the held-out eval env is deliberately a single in-process env
        warnings.filterwarnings("ignore", message="Training and eval env are not of the same type")
        if cfg.progress_bar:
            callbacks.append(_progress_callback(cfg.timesteps, f"train {cfg.algo} seed {cfg.seed}"))
        try:
            model.learn(total_timesteps=cfg.timesteps, callback=CallbackList(callbacks), tb_log_name=cfg.algo)
        except (EOFError, ConnectionError) as e:
            raise worker_died(e) from None
    model.logger.dump(model.num_timesteps)  # SB3 dumps before each update: flush the last update's train/* values
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    memory = worker_memory(env) or memory
    env.close()
    if eval_env is not None:
        eval_env.close()
    model.save(out / "model.zip")
    name, pkw = policy_spec(cfg, candidate_dim)
    agent = SB3Agent.from_model(model, algo=cfg.algo, policy=name, policy_kwargs=pkw, wrapper=cfg.wrapper,
                                flatten=cfg.flatten, top_rows=cfg.top_rows,
                                env_kwargs={"env_id": cfg.env_id, "features": cfg.features,
                                            "max_candidates": cfg.max_candidates, "reducer": cfg.reducer,
                                            **trained_text(world, cfg.features)},
                                info={"timesteps": int(model.num_timesteps), "train_seconds": round(seconds, 2),
                                      "corpus": cfg.corpus, "train_topics": cfg.train_topics,
                                      "max_candidates": cfg.max_candidates, "reducer": cfg.reducer})
    agent.save(out / "agent.npz")
    evaluation = {"train": evaluate(model, cfg, cfg.train_topics if cfg.eval_train else [], cfg.eval_episodes,
                                    seed=cfg.seed + 20_000, what="train topic"),
                  "eval": evaluate(model, cfg, cfg.eval_topics, cfg.eval_episodes, seed=cfg.seed + 30_000,
                                   what="held-out topic")}
    del world
    res = TrainResult(cfg, model, agent, out, seconds, int(model.num_timesteps), evaluation, memory, cpu)
    atomic_write_json(out / "results.json", {**res.summary(), "episodes": evaluation})
    return res


# --------------------------------------------------------------------------- CLI
def build_parser() -> ArgumentParser:
    p = ArgumentParser(prog="gym-crawl train", description=__doc__.split("\n\n")[0],
                       formatter_class=HelpFormatter)
    add_verbosity(p, 0)  # read by `gym-crawl` before this parser runs
    p.add_argument("--backend", default="sb3", choices=["sb3", "rllib"],
                   help="sb3: this trainer (SubprocVecEnv); rllib: Ray RLlib, see docs/rllib.md")
    d = TrainConfig()
    p.add_argument("--algo", default=d.algo, choices=sorted(set(DISCRETE_ALGOS + CONTINUOUS_ALGOS)),
                   help=f"Stable-Baselines3 / sb3-contrib algorithm (discrete wrapper: {', '.join(DISCRETE_ALGOS)}; "
                        f"continuous: {', '.join(CONTINUOUS_ALGOS)})")
    p.add_argument("--wrapper", default=d.wrapper, choices=["discrete", "continuous"],
                   help="discrete: the action picks one of K candidate slots; continuous: the action is a weight "
                        "vector and the env fetches the best-scored candidate")
    p.add_argument("--policy", default=None, choices=["scoring", "mlp"],
                   help="candidate-scoring policy or stock MLP (default: scoring for discrete, mlp for continuous)")
    add_common_arguments(p, d, corpus_help="synthetic, synthetic-N, a corpus folder (your own compiled crawl), a "
                                           "Wikispeedia folder…; without --train-topics/--eval-topics: train on the "
                                           "task set of its labels",
                         hyper_help='algorithm kwargs as JSON, e.g. \'{"gamma": 0.8}\'')
    p.add_argument("--n-envs", type=int, default=d.n_envs, help="training envs stepped together")
    p.add_argument("--flatten", action="store_true", help="discrete wrapper: flat Box observation")
    p.add_argument("--top-rows", type=int, default=d.top_rows,
                   help="continuous wrapper: candidate rows the observation shows besides their mean and max")
    p.add_argument("--eval-freq", type=int, default=d.eval_freq,
                   help="env steps between evaluations on the held-out topics, logged to TensorBoard (0: off)")
    p.add_argument("--checkpoint-freq", type=int, default=d.checkpoint_freq,
                   help="env steps between saved checkpoints (0: off)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar or progress lines on stderr")
    p.add_argument("--no-tensorboard", action="store_true", help="no TensorBoard logs under --out/tb")
    p.add_argument("--vec", default=d.vec, choices=["auto", "subproc", "dummy"],
                   help="where the --n-envs envs step: subproc: worker processes (SubprocVecEnv); dummy: this "
                        "process; auto: workers when there are several envs and no more than the cores")
    p.add_argument("--prior", default=d.prior, choices=["best-first", "none"],
                   help="scoring policy: start from best-first's ranking and learn a residual over it "
                        "(best-first), or learn the scores from scratch (none)")
    p.add_argument("--prior-scale", type=float, default=d.prior_scale,
                   help="initial scale of the best-first prior (larger: the initial policy samples closer to "
                        "best-first's greedy choice)")
    return p


def config_from_args(a: argparse.Namespace) -> TrainConfig:
    return TrainConfig(
        algo=a.algo, wrapper=a.wrapper, policy=a.policy or ("scoring" if a.wrapper == "discrete" else "mlp"),
        corpus=a.corpus, train_topics=a.train_topics, eval_topics=a.eval_topics, timesteps=a.timesteps,
        n_envs=a.n_envs, seed=a.seed, out=a.out, max_candidates=a.max_candidates, reducer=a.reducer,
        features=a.features, reward=a.reward, max_episode_steps=a.max_episode_steps, flatten=a.flatten,
        top_rows=a.top_rows, reward_scale=a.reward_scale, hidden=a.hidden, hyper=a.hyper, eval_freq=a.eval_freq,
        eval_episodes=a.eval_episodes, checkpoint_freq=a.checkpoint_freq, progress_bar=not a.no_progress,
        tensorboard=not a.no_tensorboard, vec=a.vec, torch_threads=a.torch_threads, prior=a.prior,
        prior_scale=a.prior_scale)


def main(argv: list[str] | None = None) -> int:
    """``gym-crawl train``: train, save, evaluate and print a summary. Returns the exit code."""
    a = build_parser().parse_args(argv)
    try:
        cfg = config_from_args(a)
        cfg.validate()
    except ValueError as e:
        print(error_line(e), file=sys.stderr)
        return EXIT_USAGE
    cfg.set_omp_threads()
    print_result(train(cfg))
    return 0


def print_result(res: TrainResult) -> None:
    """The summary ``gym-crawl train`` prints of one run (stdout): steps and time, the evaluation by topic, worker
    memory and where the outputs are."""
    cfg = res.config
    s = res.summary()
    print(f"{cfg.algo} ({cfg.wrapper}, {cfg.policy}) on {cfg.corpus}: {res.timesteps} steps "
          f"in {res.train_seconds:.1f} s")
    for split, ev in s["evaluation"].items():
        if ev:
            print(f"  {split:5s} topics: relevant pages / episode {ev['mean_relevant_found']:.1f}  "
                  f"reward {ev['mean_reward']:.1f}  by topic {ev['relevant_found_by_topic']}")
    for m in res.worker_memory_mb:
        print(f"  worker pid {m['pid']}: rss {m.get('rss')} MB, private {m.get('uss')} MB, shared {m.get('shared')} MB")
    print(f"  saved {res.out / 'model.zip'}, {res.out / 'agent.npz'}, {res.out / 'results.json'}")
    if cfg.tensorboard:
        print(f"  TensorBoard logs: {res.out / 'tb'} (tensorboard --logdir {res.out / 'tb'})")


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
