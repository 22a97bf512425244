"""Run a policy trained with Ray RLlib through the Agent protocol (CLI ``--agent rllib:<path>``).

``<path>`` is a ``gym-crawl train --backend rllib`` output folder (or the ``module.pt`` in it): the
candidate-scoring ``RLModule``'s weights, read with ``torch.load(weights_only=True)`` by
:func:`gym_crawl.agents.rllib.train.load_module`, plus the ``module.pt.json`` sidecar (K, feature
dimension, model config). The run's ``config.json`` beside it supplies the env keywords the policy was
trained with (``features``, ``reducer``, ``reward``, ``max_candidates``) as :attr:`RLlibAgent.env_defaults`, and
its env id, feature set (fixed: another one is refused), K and reducer as :attr:`RLlibAgent.env_config`.
An RLlib checkpoint folder written by ``Algorithm.save()`` holds pickled state, which is never loaded here:
export its module first with ``gym_crawl.agents.rllib.train.save_module(algo.get_module(), "module.pt",
...)``. The agent acts greedily (argmax of the masked logits). Ray is the optional extra ``rllib``; without
it the agent refuses with the install command.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl.agents.base import Agent, crawl_view
from gym_crawl.agents.env_config import TRAINED_ENV_KEYS, EnvConfig, read_env_config
from gym_crawl.registry import install_command

__all__ = ["RLlibAgent", "load_rllib_agent"]

_ENV_KEYS = ("features", "reducer", "reward", "max_candidates")


def _require_ray() -> None:
    try:
        import ray.rllib  # noqa: F401
    except ImportError as e:
        raise ValueError(f"--agent rllib:<path> needs Ray RLlib, which is not installed ({e}); install the "
                         f"optional extra: {install_command('rllib')} (docs/rllib.md)") from None


def _module_path(path: str | Path) -> Path:
    p = Path(path)
    if p.is_dir():
        if not (p / "module.pt").is_file() and any(p.glob("**/rl_module")):
            raise ValueError(f"{p}: an RLlib Algorithm checkpoint (pickled state, never loaded here); export "
                             f"its module with gym_crawl.agents.rllib.train.save_module(algo.get_module(), "
                             f"'module.pt', obs_space, act_space, model_config) and pass that file")
        p = p / "module.pt"
    if not p.is_file() or not p.with_suffix(p.suffix + ".json").is_file():
        raise FileNotFoundError(f"{path}: no RLlib module (expected a `gym-crawl train --backend rllib` output "
                                f"folder holding module.pt and module.pt.json)")
    return p


class RLlibAgent(Agent):
    """A candidate-scoring RLlib module acting greedily on ``WikiCrawl-v1`` slots (see module docstring).

    Args:
        path: the module file (``module.pt``) or its training output folder.
    """

    name = "rllib"
    action_kind = "slot"

    def __init__(self, path: str):
        super().__init__(path=str(path))
        self.path = _module_path(path)
        cfg_file = self.path.parent / "config.json"
        run = json.loads(cfg_file.read_text(encoding="utf-8")) if cfg_file.is_file() else {}
        self.env_defaults = {k: run[k] for k in _ENV_KEYS if k in run}
        meta = json.loads(self.path.with_suffix(self.path.suffix + ".json").read_text(encoding="utf-8"))
        self.env_defaults.setdefault("max_candidates", int(meta["max_candidates"]))
        self.env_config = (read_env_config(cfg_file, keys=TRAINED_ENV_KEYS) if cfg_file.is_file()
                           else EnvConfig(source=str(self.path), kwargs={"max_candidates": int(meta["max_candidates"])},
                                          fixed=frozenset({"features"})))
        self._dim = int(meta["candidate_dim"])
        self.module: Any = None
        self._k: int | None = None

    def begin_episode(self, env: Any, rng: np.random.Generator) -> None:
        super().begin_episode(env, rng)
        base = crawl_view(env)
        if base.feature_dim != self._dim:
            raise ValueError(f"{self.path}: the module was trained on a feature set of dimension {self._dim}, this "
                             f"env's {base.feature_set_name!r} has {base.feature_dim} (CLI: --features NAME; "
                             f"Python: features=NAME, the set it was trained with)")
        if self.module is None or self._k != base.max_candidates:
            _require_ray()
            from gym_crawl.agents.rllib.train import load_module

            self.module, self._k = load_module(self.path, max_candidates=base.max_candidates), base.max_candidates

    def act(self, obs: Any, info: dict) -> int:
        from gym_crawl.agents.rllib.train import greedy_actions

        return int(greedy_actions(self.module, {k: np.asarray(v)[None] for k, v in obs.items()})[0])

    def state_dict(self) -> dict[str, np.ndarray]:
        return {}


def load_rllib_agent(path: str | Path) -> RLlibAgent:
    """An :class:`RLlibAgent` for ``path``; ``ValueError`` naming the ``rllib`` extra when Ray is absent."""
    agent = RLlibAgent(str(path))
    _require_ray()
    return agent
