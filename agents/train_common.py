"""What the Stable-Baselines3 trainer (:mod:`gym_crawl.agents.sb3.train`) and the Ray RLlib trainer
(:mod:`gym_crawl.agents.rllib.train`) share: the run configuration both save as ``config.json`` and the
command-line flags of ``gym-crawl train`` that mean the same under either backend. Imports neither framework."""
from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["CrawlTrainingConfig", "add_common_arguments", "available_cores", "parse_topics", "resolve_torch_threads",
           "summarize_episodes", "use_subprocesses"]


def _default_env_id() -> str:
    from gym_crawl.envs import DEFAULT_ENV_ID

    return DEFAULT_ENV_ID


@dataclass
class CrawlTrainingConfig:
    """The corpus, topics, env and network of a training run (fields common to both backends). ``env_id`` is the
    registered WikiCrawl id the envs are built from (saved in ``config.json``, so a trained model runs on it
    again)."""

    env_id: str = field(default_factory=_default_env_id)
    corpus: str = "synthetic"
    train_topics: list[str] = field(default_factory=lambda: ["geology", "cancer", "poetry", "astronomy", "jazz"])
    eval_topics: list[str] = field(default_factory=lambda: ["sports", "fiction", "cameras"])
    timesteps: int = 100_000
    seed: int = 0
    out: str = "runs/train"
    max_candidates: int = 32
    reducer: str = "topk"
    features: str = "combined"
    reward: str | None = None  # None: the env's default (labels for a labelled topic, else han2018)
    max_episode_steps: int = 1000
    reward_scale: float | None = None
    hidden: list[int] = field(default_factory=lambda: [64, 64])
    hyper: dict[str, Any] = field(default_factory=dict)
    eval_episodes: int = 1
    torch_threads: int | None = None  # None: resolve_torch_threads

    def env_reward_scale(self) -> float | None:
        """The scoring wrapper's ``reward_scale``: ``reward_scale`` when given, else 1 / the named reward scheme's
        largest reward; ``None`` when the env picks the scheme per topic (the wrapper then scales by its max)."""
        if self.reward_scale is not None:
            return float(self.reward_scale)
        if self.reward is None:
            return None
        from gym_crawl.relevance.rewards import get_reward_scheme

        return 1.0 / max(abs(float(get_reward_scheme(self.reward, labelled=True).max_reward)), 1e-9)

    def validate_common(self) -> None:
        """Errors naming the command-line flag for the fields both backends share."""
        if self.timesteps < 1:
            raise ValueError(f"--timesteps must be >= 1, got {self.timesteps}")
        if not self.train_topics:
            raise ValueError("--train-topics must name at least one topic")
        if self.max_candidates < 1:
            raise ValueError(f"--max-candidates must be >= 1, got {self.max_candidates}")
        if self.max_episode_steps < 1:
            raise ValueError(f"--max-episode-steps must be >= 1, got {self.max_episode_steps}")
        if not self.hidden or any(int(h) < 1 for h in self.hidden):
            raise ValueError(f"--hidden must be positive layer sizes, got {self.hidden}")
        if self.eval_episodes < 0:
            raise ValueError(f"--eval-episodes must be >= 0, got {self.eval_episodes}")


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the OS has one, else ``os.cpu_count()``)."""
    import os

    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def use_subprocesses(n_envs: int, vec: str = "auto", cores: int | None = None) -> bool:
    """Whether ``n_envs`` envs run in worker processes (``SubprocVecEnv``) or in this one (``DummyVecEnv``):
    ``vec="subproc"`` / ``"dummy"`` decide; ``"auto"`` uses workers only when there are several envs and no more
    of them than cores (more workers than cores only adds process switches and memory)."""
    if vec != "auto":
        return vec == "subproc"
    return 1 < n_envs <= (cores or available_cores())


def resolve_torch_threads(threads: int | None, n_envs: int, subproc: bool, cores: int | None = None) -> int:
    """The learner's PyTorch threads: ``threads`` if given, else the cores the env workers leave free (all cores
    when the envs step in this process), at least 1."""
    if threads is not None:
        if int(threads) < 1:
            raise ValueError(f"--torch-threads must be >= 1, got {threads}")
        return int(threads)
    c = cores or available_cores()
    return max(1, c - n_envs) if subproc else c


def parse_topics(s: str) -> list[str]:
    """``"a, b,,c"`` → ``["a", "b", "c"]``."""
    return [t.strip() for t in s.split(",") if t.strip()]


def add_common_arguments(p: argparse.ArgumentParser, d: CrawlTrainingConfig, *, corpus_help: str,
                         hyper_help: str) -> None:
    """The flags of :class:`CrawlTrainingConfig`'s fields, with ``d``'s values as defaults."""
    p.add_argument("--corpus", default=d.corpus, help=corpus_help)
    p.add_argument("--train-topics", type=parse_topics, default=d.train_topics, metavar="TOPIC,...",
                   help="topics to train on, comma-separated: topic keys, labels or topic words")
    p.add_argument("--eval-topics", type=parse_topics, default=d.eval_topics, metavar="TOPIC,...",
                   help="held-out topics of the evaluation, comma-separated")
    p.add_argument("--timesteps", type=int, default=d.timesteps, help="env steps of training (per seed)")
    p.add_argument("--seed", type=int, default=d.seed, help="random seed of the (first) training run")
    p.add_argument("--out", default=d.out, help="output folder: the model, its config.json and the results")
    p.add_argument("--max-candidates", "-K", type=int, default=d.max_candidates,
                   help="candidate slots K the reducer fills each step")
    p.add_argument("--reducer", default=d.reducer, help="candidate reducer: topk, outlinks, random, full or tree")
    p.add_argument("--features", default=d.features, help="feature set of the candidate rows (gym_crawl.features)")
    p.add_argument("--reward", default=d.reward,
                   help="reward scheme (default: as `crawl` and gym.make — labels for a topic with a ground-truth "
                        "label, else han2018)")
    p.add_argument("--max-episode-steps", type=int, default=d.max_episode_steps,
                   help="page budget of an episode (env steps)")
    p.add_argument("--reward-scale", type=float, default=None,
                   help="default 1 / |max reward| of the episode's reward scheme")
    p.add_argument("--hidden", type=lambda s: [int(x) for x in s.split(",")], default=d.hidden,
                   help="layer sizes, e.g. 64,64")
    p.add_argument("--hyper", type=json.loads, default={}, help=hyper_help)
    p.add_argument("--eval-episodes", type=int, default=d.eval_episodes, help="final evaluation episodes per topic")
    p.add_argument("--torch-threads", type=int, default=d.torch_threads,
                   help="PyTorch threads of the learner (default: the cores left over by the env workers, at least 1)")


def summarize_episodes(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The summary a trainer reports of its evaluation episodes (``{}`` for none): their number, the mean
    ``relevant_found`` and ``reward``, and the mean ``relevant_found`` per topic.

    :param rows: one dict per episode with the keys ``topic``, ``relevant_found`` and ``reward``.
    """
    if not rows:
        return {}
    by_topic: dict[str, list[int]] = {}
    for r in rows:
        by_topic.setdefault(r["topic"], []).append(r["relevant_found"])
    return {"episodes": len(rows), "mean_relevant_found": float(np.mean([r["relevant_found"] for r in rows])),
            "mean_reward": float(np.mean([r["reward"] for r in rows])),
            "relevant_found_by_topic": {t: float(np.mean(v)) for t, v in sorted(by_topic.items())}}
