"""Distributed training on Ray RLlib (CLI ``gym-crawl train --backend rllib``; optional extra ``gym-crawl[rllib]``).

::

    gym-crawl train --backend rllib --corpus synthetic \\
        --train-topics geology,cancer,poetry,astronomy,jazz --eval-topics sports,fiction,cameras \\
        --timesteps 100000 --num-env-runners 2 --seed 0 --out runs/rllib

    # the same on a running multi-node Ray cluster (see docs/rllib.md)
    gym-crawl train --backend rllib --address auto --num-env-runners 16 --corpus /shared/corpora/wikispeedia ...

Algorithm: RLlib's PPO on the new API stack (``RLModule`` / ``Learner`` / ``EnvRunner``) with
:class:`gym_crawl.agents.rllib.model.CandidateScoringRLModule` — the candidate-scoring network of
:mod:`gym_crawl.agents.sb3.policies` (one shared network scores every candidate row) with action
masking, read from the env's own ``Dict`` observation ``{"candidates", "mask", "state"}``.

Environment: :func:`env_creator`, registered with Ray's tune registry as :data:`ENV_NAME` by
:func:`register`, builds ``gym.make("WikiCrawl-v1", corpus=<path>, action="slot", ...)`` →
:class:`gym_crawl.wrappers.TopicSampler` → :class:`gym_crawl.wrappers.DiscreteScoringWrapper` (the
stack of ``agents/sb3/train.py``, same topic split convention: training episodes draw a topic from
``--train-topics``, evaluation runs the held-out ``--eval-topics``). The driver resolves ``--corpus``
to a **compiled corpus directory** once (building the corpus and text-model caches) and hands env
runners that *path*, never a ``Corpus`` object: each worker memory-maps the same files (page cache
shared by all workers of a node), nothing large is serialized through Ray's object store.

Throughput and learning are logged per training iteration (``curve.json``: env steps, wall seconds,
training episode return, relevant pages found per training episode), to TensorBoard under ``--out/tb``
with the SB3 path's tags (``rollout/ep_rew_mean``, ``crawl/relevant_found``, ``crawl/harvest_rate``,
``crawl/reward_sum``, ``time/fps``; x = env steps; ``--no-tensorboard`` to skip), and as one progress line per
iteration on stderr that leaves out what no finished episode has measured yet (never ``nan``). Outputs in
``--out``:
``config.json``, ``curve.json``, ``module.pt`` (the RLModule's weights, ``torch.load(...,
weights_only=True)``; :func:`load_module` rebuilds the module), ``results.json`` (greedy evaluation
of the final module on the held-out and the training topics, like ``agents/sb3/train.py``).

Rewards are scaled by ``1 / max_reward`` by default (as in ``agents/sb3/train.py``); the reported
episode rewards (``info["reward_sum"]``) are unscaled.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._console import EXIT_USAGE, ArgumentParser, HelpFormatter, add_verbosity, error_line
from gym_crawl.agents.train_common import CrawlTrainingConfig, add_common_arguments, summarize_episodes
from gym_crawl.registry import install_command

__all__ = [
    "DEFAULT_PPO",
    "ENV_NAME",
    "RLlibConfig",
    "RLlibResult",
    "TB_TAGS",
    "build_algo_config",
    "build_parser",
    "config_from_args",
    "env_creator",
    "evaluate_module",
    "greedy_actions",
    "init_ray",
    "iteration_row",
    "load_module",
    "log_curve_row",
    "main",
    "module_config",
    "open_tensorboard",
    "progress_line",
    "register",
    "requested_backend",
    "resolve_corpus_path",
    "save_module",
    "train",
]

ENV_NAME = "gym_crawl-WikiCrawl-scoring"
"""Name under which :func:`register` puts :func:`env_creator` into Ray's tune registry."""

DEFAULT_PPO: dict[str, Any] = {"train_batch_size_per_learner": 1000, "minibatch_size": 250, "num_epochs": 4,
                               "lr": 3e-4, "gamma": 0.9, "lambda_": 0.9, "entropy_coeff": 0.003,
                               "clip_param": 0.2, "vf_loss_coeff": 0.5}
"""PPO defaults (γ = 0.9, λ = 0.9, entropy 0.003, clip 0.2: ``agents/sb3/train.py``'s MaskablePPO values);
``--hyper`` JSON overrides (any ``PPOConfig.training`` keyword)."""


def requested_backend(argv: Sequence[str]) -> str:
    """The ``--backend`` of a ``gym-crawl train`` argument list (``"sb3"`` when absent). Imports nothing
    heavy, so the CLI can dispatch on it: ``--backend rllib`` / ``--backend=rllib``."""
    argv = list(argv)
    for i, a in enumerate(argv):
        if a == "--backend" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--backend="):
            return a.split("=", 1)[1]
    return "sb3"


@dataclass
class RLlibConfig(CrawlTrainingConfig):
    """Everything an RLlib training run depends on (saved as ``config.json``): the fields common to both
    backends (:class:`~gym_crawl.agents.train_common.CrawlTrainingConfig`) and RLlib's own."""

    out: str = "runs/rllib"
    num_env_runners: int = 2
    num_envs_per_env_runner: int = 1
    address: str | None = None
    num_cpus: int | None = None
    tensorboard: bool = True

    def validate(self) -> None:
        self.validate_common()
        if self.num_env_runners < 0:
            raise ValueError(f"--num-env-runners must be >= 0 (0: sample in the driver), got {self.num_env_runners}")
        if self.num_envs_per_env_runner < 1:
            raise ValueError(f"--num-envs-per-env-runner must be >= 1, got {self.num_envs_per_env_runner}")
        from ray.rllib.algorithms.ppo import PPOConfig

        known = PPOConfig()
        bad = [k for k in self.hyper if not hasattr(known, k)]
        if bad:
            raise ValueError(f"--hyper keys {bad} are not PPOConfig.training options")


@dataclass
class RLlibResult:
    """What :func:`train` produced."""

    config: RLlibConfig
    module: Any
    out: Path
    corpus_path: str
    train_seconds: float
    timesteps: int
    curve: list[dict[str, float]]
    evaluation: dict[str, list[dict[str, Any]]]

    def summary(self) -> dict[str, Any]:
        return {"backend": "rllib", "algo": "ppo", "policy": "scoring", "corpus": self.config.corpus,
                "corpus_path": self.corpus_path, "num_env_runners": self.config.num_env_runners,
                "timesteps": self.timesteps, "train_seconds": round(self.train_seconds, 2),
                "env_steps_per_second": round(self.timesteps / max(self.train_seconds, 1e-9), 1),
                "evaluation": {k: summarize_episodes(v) for k, v in self.evaluation.items()}}


# --------------------------------------------------------------------------- environment
def resolve_corpus_path(spec: Any, out: Path | None = None) -> str:
    """The compiled corpus directory env runners memory-map for ``spec`` (a name, a path of any kind
    ``load_corpus`` reads, or a ``Corpus``). Builds the corpus and text-model caches once, here; an
    in-memory corpus (not memory-mapped from a directory) is saved under ``out / "corpus"`` first."""
    from gym_crawl.corpus import load_corpus
    from gym_crawl.text.model import get_text_model

    corpus = load_corpus(spec)
    get_text_model(corpus)
    path = getattr(corpus, "path", None)
    if path is None or not (Path(path) / "manifest.json").is_file():
        if out is None:
            raise ValueError(f"corpus {spec!r} is not a compiled corpus directory; give an output folder to save it")
        path = corpus.save(Path(out) / "corpus")
    return str(Path(path).resolve())


def env_creator(env_config: dict[str, Any]) -> Any:
    """Ray env creator: the discrete scoring env of ``env_config`` (keys: ``corpus`` — a compiled corpus
    directory —, ``env_id``, ``topics``, ``topic_mode``, ``max_episode_steps``, ``reward_scale`` and the
    ``WikiCrawlEnv`` keywords ``reducer``, ``max_candidates``, ``features``, ``reward``)."""
    from gym_crawl.wrappers import make_scoring_env

    kw = dict(env_config)
    corpus = kw.get("corpus")
    if not isinstance(corpus, str) or not (Path(corpus) / "manifest.json").is_file():
        raise ValueError(f"env_config['corpus'] must be a compiled corpus directory present on this node "
                         f"(a folder with manifest.json), got {corpus!r}")
    return make_scoring_env("discrete", **kw)


def register() -> str:
    """Register :func:`env_creator` with Ray's tune registry as :data:`ENV_NAME` (idempotent); returns the name."""
    from ray.tune.registry import register_env

    register_env(ENV_NAME, env_creator)
    return ENV_NAME


def _env_config(cfg: RLlibConfig, corpus_path: str, topics: Sequence[str], topic_mode: str) -> dict[str, Any]:
    return {"env_id": cfg.env_id, "corpus": corpus_path, "topics": list(topics), "topic_mode": topic_mode,
            "max_episode_steps": int(cfg.max_episode_steps), "reward_scale": cfg.env_reward_scale(),
            "reducer": cfg.reducer, "max_candidates": int(cfg.max_candidates), "features": cfg.features,
            "reward": cfg.reward}


def module_config(cfg: RLlibConfig) -> dict[str, Any]:
    """The scoring module's ``model_config`` of a run (:mod:`gym_crawl.agents.rllib.model`): the row encoder's
    ``cfg.hidden`` layers, score and value heads with one hidden layer of the last width, tanh, the pooled
    context fed to the score head."""
    h = [int(x) for x in cfg.hidden]
    return {"hidden": h, "head": h[-1:], "value": h[-1:], "activation": "tanh", "context": True}


def _callbacks_class() -> type:
    from ray.rllib.callbacks.callbacks import RLlibCallback

    class CrawlMetrics(RLlibCallback):
        """Crawl metrics of finished training episodes in RLlib's results (``env_runners/crawl_*``)."""

        def on_episode_end(self, *, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
            info = episode.get_infos(-1)
            if metrics_logger is None or not isinstance(info, dict) or "relevant_found" not in info:
                return
            for key in ("relevant_found", "harvest_rate", "reward_sum"):
                metrics_logger.log_value(f"crawl_{key}", float(info[key]), reduce="mean", window=100)

    return CrawlMetrics


def build_algo_config(cfg: RLlibConfig, corpus_path: str) -> Any:
    """RLlib ``PPOConfig`` of a run: the registered env on ``corpus_path``, ``cfg.num_env_runners`` env runners,
    :class:`~gym_crawl.agents.rllib.model.CandidateScoringRLModule`, PPO hyperparameters (:data:`DEFAULT_PPO`,
    ``cfg.hyper`` wins), seeded."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from gym_crawl.agents.rllib.model import CandidateScoringRLModule

    register()
    hyper = {**DEFAULT_PPO, **cfg.hyper}
    hyper["minibatch_size"] = min(int(hyper["minibatch_size"]), int(hyper["train_batch_size_per_learner"]))
    n_samplers = max(cfg.num_env_runners, 1) * cfg.num_envs_per_env_runner
    return (PPOConfig()
            .environment(ENV_NAME, env_config=_env_config(cfg, corpus_path, cfg.train_topics, "random"),
                         disable_env_checking=True)
            .framework("torch")
            .env_runners(num_env_runners=cfg.num_env_runners, num_envs_per_env_runner=cfg.num_envs_per_env_runner,
                         num_cpus_per_env_runner=1,
                         rollout_fragment_length=max(1, int(hyper["train_batch_size_per_learner"]) // n_samplers))
            .learners(num_learners=0)
            .training(**hyper)
            .rl_module(rl_module_spec=RLModuleSpec(module_class=CandidateScoringRLModule,
                                                   model_config=module_config(cfg)))
            .callbacks(_callbacks_class())
            .debugging(seed=int(cfg.seed), log_level="ERROR")
            .reporting(min_sample_timesteps_per_iteration=0))


# --------------------------------------------------------------------------- module I/O and evaluation
def save_module(module: Any, path: Path, observation_space: Any, action_space: Any, model_config: dict) -> None:
    """Save the module's weights (``torch.save`` of a state dict: loadable with ``weights_only=True``) and a
    JSON sidecar (``<path>.json``: spaces' shapes and ``model_config``) written atomically."""
    import torch

    from gym_crawl._io import atomic_write_json

    path = Path(path)
    tmp = path.with_name(path.name + ".partial")
    torch.save({k: v.detach().cpu() for k, v in module.state_dict().items()}, tmp)
    os.replace(tmp, path)
    K, d = observation_space["candidates"].shape
    atomic_write_json(path.with_suffix(path.suffix + ".json"),
                      {"max_candidates": int(K), "candidate_dim": int(d),
                       "state_dim": int(observation_space["state"].shape[0]),
                       "action_n": int(action_space.n), "model_config": model_config})


def load_module(path: str | os.PathLike, max_candidates: int | None = None) -> Any:
    """Rebuild a :class:`~gym_crawl.agents.rllib.model.CandidateScoringRLModule` saved by :func:`save_module`
    (weights loaded with ``weights_only=True``). ``max_candidates``: build it for another K (the weights do not
    depend on K)."""
    import torch
    from gymnasium import spaces

    from gym_crawl.agents.rllib.model import CandidateScoringRLModule

    path = Path(path)
    if path.is_dir():
        path = path / "module.pt"
    meta_path = path.with_suffix(path.suffix + ".json")
    if not path.is_file() or not meta_path.is_file():
        raise FileNotFoundError(f"no RLlib module at {path} (expected {path.name} and {meta_path.name})")
    meta = json.loads(meta_path.read_text())
    K = int(max_candidates or meta["max_candidates"])
    d, s = int(meta["candidate_dim"]), int(meta["state_dim"])
    obs_space = spaces.Dict({"candidates": spaces.Box(-1, 1, (K, d), np.float32), "mask": spaces.Box(0, 1, (K,), bool),
                             "state": spaces.Box(-1, 1, (s,), np.float32)})
    module = CandidateScoringRLModule(observation_space=obs_space, action_space=spaces.Discrete(K),
                                      model_config=meta["model_config"])
    module.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    module.eval()
    return module


def greedy_actions(module: Any, obs: dict[str, np.ndarray]) -> np.ndarray:
    """Argmax of the module's masked logits for a batch of ``Dict`` observations (arrays with a leading B)."""
    import torch

    with torch.no_grad():
        t = {k: torch.as_tensor(np.asarray(v)) for k, v in obs.items()}
        return module.logits(t).argmax(dim=1).numpy()


def evaluate_module(module: Any, cfg: RLlibConfig, corpus_path: str, topics: Sequence[str],
                    episodes_per_topic: int = 1, seed: int = 10_000) -> list[dict[str, Any]]:
    """Greedy episodes of ``module`` on each topic (``episodes_per_topic`` times, topics cycled), in this
    process; per episode the rows of :func:`gym_crawl.agents.sb3.train.evaluate` (``topic``, ``reward``
    unscaled, ``relevant_found``, ``pages_fetched``, ``relevant_auc``, ``invalid_actions``, ``steps``)."""
    topics = list(topics)
    if not topics or episodes_per_topic < 1:
        return []
    env = env_creator(_env_config(cfg, corpus_path, topics, "cycle"))
    rows = []
    try:
        for ep in range(len(topics) * episodes_per_topic):
            obs, info = env.reset(seed=seed if ep == 0 else None)
            curve, invalid, done = [], 0, False
            while not done:
                a = int(greedy_actions(module, {k: v[None] for k, v in obs.items()})[0])
                obs, _, term, trunc, info = env.step(a)
                curve.append(int(info["relevant_found"]))
                invalid += bool(info.get("invalid_action", False))
                done = term or trunc
            rows.append({"topic": info["topic"], "reward": float(info["reward_sum"]),
                         "relevant_found": int(info["relevant_found"]), "pages_fetched": int(info["pages_fetched"]),
                         "relevant_auc": float(np.mean(curve)) if curve else 0.0, "invalid_actions": invalid,
                         "steps": int(info["steps"])})
    finally:
        env.close()
    return rows


# --------------------------------------------------------------------------- training
def init_ray(cfg: RLlibConfig) -> bool:
    """Start (or connect to) Ray; returns whether this call started it. Workers use ``cfg.torch_threads``
    threads for torch/BLAS (2-core machines: 1)."""
    import ray

    if ray.is_initialized():
        return False
    threads = str(cfg.torch_threads or 1)
    env_vars = {"OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}
    for k in ("GYM_CRAWL_DATA", "NUMBA_CACHE_DIR"):
        if os.environ.get(k):
            env_vars[k] = os.environ[k]
    kw: dict[str, Any] = {"runtime_env": {"env_vars": env_vars}, "log_to_driver": False,
                          "configure_logging": True, "logging_level": "ERROR"}
    if cfg.address:
        ray.init(address=cfg.address, **kw)
    else:
        ncpu = cfg.num_cpus or max(os.cpu_count() or 1, cfg.num_env_runners)
        ray.init(num_cpus=int(ncpu), include_dashboard=False, **kw)
    return True


def iteration_row(result: dict[str, Any], seconds: float, iteration: int) -> dict[str, float]:
    """One row of the learning curve from RLlib's result dict of a training iteration: env steps so far, the
    ``seconds`` elapsed, mean episode return and the crawl metrics of the finished episodes (NaN when RLlib
    reported none)."""
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, EPISODE_RETURN_MEAN, NUM_ENV_STEPS_SAMPLED_LIFETIME

    er = result.get(ENV_RUNNER_RESULTS, {}) or {}

    def num(x: Any) -> float:
        try:
            return float(x)
        except (TypeError, ValueError):
            return float("nan")

    return {"iteration": iteration, "env_steps": num(er.get(NUM_ENV_STEPS_SAMPLED_LIFETIME,
                                                           result.get(NUM_ENV_STEPS_SAMPLED_LIFETIME))),
            "seconds": round(seconds, 3), "episode_return_mean": num(er.get(EPISODE_RETURN_MEAN)),
            "relevant_found_mean": num(er.get("crawl_relevant_found")),
            "harvest_rate_mean": num(er.get("crawl_harvest_rate")),
            "reward_sum_mean": num(er.get("crawl_reward_sum")),
            "episodes_lifetime": num(er.get("num_episodes_lifetime"))}


#: TensorBoard tag of each curve column, as the Stable-Baselines3 path names them.
TB_TAGS = {"episode_return_mean": "rollout/ep_rew_mean", "relevant_found_mean": "crawl/relevant_found",
           "harvest_rate_mean": "crawl/harvest_rate", "reward_sum_mean": "crawl/reward_sum"}


def progress_line(row: dict[str, float]) -> str:
    """One iteration's progress line; a value no finished episode has measured yet is left out (not ``nan``)."""
    def ok(k: str) -> bool:
        return isinstance(row.get(k), (int, float)) and np.isfinite(row[k])

    parts = [f"iter {int(row['iteration']):3d}"]
    if ok("env_steps"):
        parts.append(f"env steps {int(row['env_steps']):7d}")
    parts.append(f"{row['seconds']:7.1f} s")
    if ok("episode_return_mean"):
        parts.append(f"return {row['episode_return_mean']:.3f}")
    if ok("relevant_found_mean"):
        parts.append(f"relevant/ep {row['relevant_found_mean']:.1f}")
    if not (ok("episode_return_mean") or ok("relevant_found_mean")):
        parts.append("(no episode finished yet)")
    return "  ".join(parts)


def open_tensorboard(folder: Path) -> Any:
    """A TensorBoard ``SummaryWriter`` into ``folder`` (torch's, else tensorboardX's), or ``None`` with a
    warning when neither ``tensorboard`` nor ``tensorboardX`` is installed."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        try:
            from tensorboardX import SummaryWriter  # type: ignore[no-redef]
        except ImportError:
            logging.getLogger("gym_crawl").warning("no TensorBoard logs: install tensorboard (pip install "
                                                   "tensorboard) or pass --no-tensorboard")
            return None
    return SummaryWriter(log_dir=str(folder))


def log_curve_row(writer: Any, row: dict[str, float]) -> None:
    """Write one curve row to TensorBoard at x = env steps (:data:`TB_TAGS`, ``time/fps``); non-finite values
    are skipped."""
    step = int(row["env_steps"]) if np.isfinite(row.get("env_steps", np.nan)) else int(row["iteration"])
    for key, tag in TB_TAGS.items():
        v = row.get(key)
        if isinstance(v, (int, float)) and np.isfinite(v):
            writer.add_scalar(tag, float(v), step)
    if row.get("seconds", 0) > 0 and np.isfinite(row.get("env_steps", np.nan)):
        writer.add_scalar("time/fps", row["env_steps"] / row["seconds"], step)
    writer.add_scalar("time/iterations", float(row["iteration"]), step)


def train(cfg: RLlibConfig, progress: bool = False) -> RLlibResult:
    """Train PPO on RLlib for ``cfg.timesteps`` env steps (whole training iterations), save the module, evaluate
    greedily on the training and held-out topics. See the module docstring for outputs."""
    import ray
    import torch

    from gym_crawl._io import atomic_write_json

    cfg.validate()
    torch.set_num_threads(max(1, cfg.torch_threads or 1))
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    corpus_path = resolve_corpus_path(cfg.corpus, out)
    atomic_write_json(out / "config.json", {**asdict(cfg), "corpus_path": corpus_path})
    started = init_ray(cfg)
    algo = None
    writer = open_tensorboard(out / "tb" / "rllib_ppo") if cfg.tensorboard else None
    try:
        algo = build_algo_config(cfg, corpus_path).build_algo()
        curve: list[dict[str, float]] = []
        t0 = time.perf_counter()
        steps, it = 0, 0
        while steps < cfg.timesteps:
            result = algo.train()
            it += 1
            row = iteration_row(result, time.perf_counter() - t0, it)
            curve.append(row)
            steps = int(row["env_steps"]) if np.isfinite(row["env_steps"]) else steps + 1
            if writer is not None:
                log_curve_row(writer, row)
            if progress:
                logging.getLogger("gym_crawl").info("  %s", progress_line(row))
        seconds = time.perf_counter() - t0
        module = algo.get_module()
        obs_space, act_space = module.observation_space, module.action_space
        state = {k: v.detach().cpu().clone() for k, v in module.state_dict().items()}
    finally:
        if writer is not None:
            writer.close()
        if algo is not None:
            algo.stop()
        if started:
            ray.shutdown()
    atomic_write_json(out / "curve.json", curve)
    from gym_crawl.agents.rllib.model import CandidateScoringRLModule

    local = CandidateScoringRLModule(observation_space=obs_space, action_space=act_space,
                                     model_config=module_config(cfg))
    local.load_state_dict(state)
    local.eval()
    save_module(local, out / "module.pt", obs_space, act_space, module_config(cfg))
    evaluation = {"train": evaluate_module(local, cfg, corpus_path, cfg.train_topics, cfg.eval_episodes,
                                           seed=cfg.seed + 20_000),
                  "eval": evaluate_module(local, cfg, corpus_path, cfg.eval_topics, cfg.eval_episodes,
                                          seed=cfg.seed + 30_000)}
    res = RLlibResult(cfg, local, out, corpus_path, seconds, steps, curve, evaluation)
    atomic_write_json(out / "results.json", {**res.summary(), "episodes": evaluation})
    return res


# --------------------------------------------------------------------------- CLI
def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="gym-crawl train --backend rllib", description=__doc__.split("\n\n")[0],
                       formatter_class=HelpFormatter)
    add_verbosity(p, 0)  # read by `gym-crawl` before this parser runs; -q also drops the per-iteration lines
    d = RLlibConfig()
    p.add_argument("--backend", default="rllib", choices=["rllib"], help="this module trains with Ray RLlib")
    p.add_argument("--algo", default="ppo", choices=["ppo"], help="RLlib algorithm (PPO, new API stack)")
    add_common_arguments(p, d, corpus_help="synthetic, synthetic-N, a compiled corpus folder, a Wikispeedia folder…; "
                         "env runners get the compiled folder's path (on a cluster it must exist on every node)",
                         hyper_help='PPOConfig.training kwargs as JSON, e.g. '
                                    '\'{"gamma": 0.8, "train_batch_size_per_learner": 2000}\'')
    p.add_argument("--num-env-runners", "--n-envs", type=int, default=d.num_env_runners,
                   help="Ray env-runner actors (0: sample in the driver)")
    p.add_argument("--num-envs-per-env-runner", type=int, default=d.num_envs_per_env_runner,
                   help="envs each env runner steps")
    p.add_argument("--address", default=None,
                   help="Ray cluster address ('auto' on a cluster node, or ray://host:10001); default: a local Ray")
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs of the local Ray (default: this machine's)")
    p.add_argument("--no-tensorboard", action="store_true", help="no TensorBoard logs under --out/tb")
    return p


def config_from_args(a: argparse.Namespace) -> RLlibConfig:
    return RLlibConfig(corpus=a.corpus, train_topics=a.train_topics, eval_topics=a.eval_topics,
                       timesteps=a.timesteps, num_env_runners=a.num_env_runners,
                       num_envs_per_env_runner=a.num_envs_per_env_runner, seed=a.seed, out=a.out,
                       max_candidates=a.max_candidates, reducer=a.reducer, features=a.features, reward=a.reward,
                       max_episode_steps=a.max_episode_steps, reward_scale=a.reward_scale, hidden=a.hidden,
                       hyper=a.hyper, eval_episodes=a.eval_episodes, address=a.address, num_cpus=a.num_cpus,
                       torch_threads=a.torch_threads, tensorboard=not a.no_tensorboard)


def main(argv: list[str] | None = None) -> int:
    """``gym-crawl train --backend rllib``: train on Ray RLlib, save, evaluate and print a summary."""
    a = build_parser().parse_args(argv)
    log = logging.getLogger("gym_crawl")
    if not log.handlers:  # run directly (not through `gym-crawl train`): progress lines to stderr
        log.addHandler(logging.StreamHandler())
        log.setLevel(logging.INFO)
    try:
        import ray  # noqa: F401
        from ray.rllib.algorithms.ppo import PPOConfig  # noqa: F401
    except ImportError as e:
        print(error_line(f"train --backend rllib: Ray RLlib is not installed ({e}); {install_command('rllib')} "
                         "(CPU-only machine: install the CPU torch wheel first, docs/rllib.md)"),
              file=sys.stderr)
        return EXIT_USAGE
    try:
        cfg = config_from_args(a)
        cfg.validate()
    except ValueError as e:
        print(error_line(e), file=sys.stderr)
        return EXIT_USAGE
    os.environ.setdefault("OMP_NUM_THREADS", str(cfg.torch_threads or 1))
    res = train(cfg, progress=not a.quiet)  # -q: no per-iteration progress lines
    s = res.summary()
    print(f"rllib ppo (scoring) on {cfg.corpus} with {cfg.num_env_runners} env runner(s): {res.timesteps} steps in "
          f"{res.train_seconds:.1f} s ({s['env_steps_per_second']} env steps/s)")
    if res.curve:
        c0, c1 = res.curve[0], res.curve[-1]
        print(f"  training relevant pages / episode: {c0['relevant_found_mean']:.1f} (iter 1) -> "
              f"{c1['relevant_found_mean']:.1f} (iter {int(c1['iteration'])})")
    for split, ev in s["evaluation"].items():
        if ev:
            print(f"  {split:5s} topics: relevant pages / episode {ev['mean_relevant_found']:.1f}  "
                  f"reward {ev['mean_reward']:.1f}  by topic {ev['relevant_found_by_topic']}")
    print(f"  saved {res.out / 'module.pt'}, {res.out / 'curve.json'}, {res.out / 'results.json'}")
    if cfg.tensorboard:
        print(f"  TensorBoard logs: {res.out / 'tb'} (tensorboard --logdir {res.out / 'tb'})")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
