"""The candidate-scoring model as an RLlib RLModule (new API stack), with action masking.

RLlib's own action-masking example (``ray/rllib/examples/rl_modules/classes/action_masking_rlm.py``,
Ray 2.60) reads a ``Dict`` observation, runs a network and adds ``log(mask)`` (clamped) to the
action logits in ``_forward_inference`` / ``_forward_exploration`` / ``_forward_train``. This module
does the same on ``WikiCrawl-v1``'s own ``Dict`` observation, with the network of
:mod:`gym_crawl.agents.sb3.policies` (one shared network scores every candidate row)::

    {"candidates": (K, d) float32, "mask": (K,) bool, "state": (6,) float32}

    h_i   = φ([x_i, state])                 row encoder, MLP ``hidden`` (shared by all rows)
    c     = [mean_i h_i, max_i h_i]         masked pooling over valid rows (permutation-invariant)
    s_i   = ψ([h_i, c])                     score head, MLP ``head`` → 1  = the logit of slot i
    V(s)  = ρ([c', state])                  critic: its own row encoder φ' and pooling, MLP ``value``

so the logits are **permutation-equivariant** (permuting candidate rows with their mask entries
permutes the logits the same way), the value is permutation-invariant, the parameters do not depend
on K (a module trained at K = 32 loads into one built for K = 256), and a masked slot's logit is
:data:`MASKED_LOGIT` (probability exactly 0 in float32: never sampled, never the argmax).

The module implements RLlib's :class:`~ray.rllib.core.rl_module.apis.ValueFunctionAPI` (PPO, APPO,
IMPALA's learners call ``compute_values``). ``model_config`` keys: ``hidden`` (default ``[64, 64]``),
``head`` (``[64]``), ``value`` (``[64]``), ``activation`` (``"tanh"``; ``relu``/``elu``/``gelu``),
``context`` (``True``: feed the pooled set summary to the score head)::

    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from gym_crawl.agents.rllib.model import CandidateScoringRLModule
    config.rl_module(rl_module_spec=RLModuleSpec(module_class=CandidateScoringRLModule,
                                                 model_config={"hidden": [64, 64]}))

Only ``torch`` and ``ray[rllib]`` are imported (not Stable-Baselines3).
"""
from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium as gym
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule
from torch import nn

from gym_crawl.agents.torch_layers import ACTIVATIONS as _ACTIVATIONS
from gym_crawl.agents.torch_layers import MASKED_LOGIT, masked_pool
from gym_crawl.agents.torch_layers import mlp as _mlp

__all__ = ["DEFAULT_MODEL_CONFIG", "MASKED_LOGIT", "CandidateScoringRLModule", "masked_pool"]

DEFAULT_MODEL_CONFIG: dict[str, Any] = {"hidden": [64, 64], "head": [64], "value": [64], "activation": "tanh",
                                        "context": True}


def _check_space(space: gym.Space | None) -> tuple[int, int, int]:
    """``(K, d, s)`` of a WikiCrawl ``Dict`` observation space; ``ValueError`` naming what is wrong."""
    if not isinstance(space, gym.spaces.Dict) or any(k not in space.spaces for k in ("candidates", "mask", "state")):
        raise ValueError("CandidateScoringRLModule needs WikiCrawl's Dict observation space with keys "
                         f"'candidates' (K, d), 'mask' (K,) and 'state' (s,); got {space}")
    cand = space["candidates"].shape
    if len(cand) != 2 or space["mask"].shape != (cand[0],) or len(space["state"].shape) != 1:
        raise ValueError(f"observation space shapes do not fit: candidates {cand}, mask {space['mask'].shape}, "
                         f"state {space['state'].shape} (expected (K, d), (K,), (s,))")
    return int(cand[0]), int(cand[1]), int(space["state"].shape[0])


class CandidateScoringRLModule(TorchRLModule, ValueFunctionAPI):
    """Candidate-scoring actor-critic RLModule with action masking (see the module docstring)."""

    def setup(self) -> None:
        super().setup()
        K, d, s = _check_space(self.observation_space)
        if not isinstance(self.action_space, gym.spaces.Discrete) or int(self.action_space.n) != K:
            raise ValueError(f"CandidateScoringRLModule needs a Discrete({K}) action space (one action per "
                             f"candidate slot), got {self.action_space}")
        cfg = {**DEFAULT_MODEL_CONFIG, **dict(self.model_config or {})}
        # RLlib's algorithms add their own DefaultModelConfig keys (PPO: vf_share_layers); those are ignored
        unknown = set(cfg) - set(DEFAULT_MODEL_CONFIG) - {f.name for f in dataclasses.fields(DefaultModelConfig)}
        if unknown:
            raise ValueError(f"unknown model_config keys {sorted(unknown)}; known: {sorted(DEFAULT_MODEL_CONFIG)}")
        act = str(cfg["activation"])
        if act not in _ACTIVATIONS:
            raise ValueError(f"model_config['activation']={act!r}; expected one of {sorted(_ACTIVATIONS)}")
        hidden, head, value = [list(map(int, cfg[k])) for k in ("hidden", "head", "value")]
        if not hidden or not value:
            raise ValueError("model_config 'hidden' and 'value' need at least one layer each")
        self.candidate_dim, self.state_dim, self.context = d, s, bool(cfg["context"])
        H = hidden[-1]
        self.encoder = _mlp([d + s, *hidden], act)
        self.score_head = _mlp([H * (3 if self.context else 1), *head, 1], act, last_activation=False)
        self.critic_encoder = _mlp([d + s, *hidden], act)
        self.value_head = _mlp([2 * H + s, *value, 1], act, last_activation=False)
        # a near-uniform initial policy (SB3's small output gain for the action net)
        nn.init.orthogonal_(self.score_head[-1].weight, gain=0.01)
        nn.init.zeros_(self.score_head[-1].bias)

    # ------------------------------------------------------------------ pieces
    def _unpack(self, obs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        cand = obs["candidates"].float()
        return cand, obs["mask"] > 0, obs["state"].float().reshape(cand.shape[0], -1)

    def _rows(self, net: nn.Module, cand: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        B, K, _ = cand.shape
        return net(torch.cat([cand, state[:, None, :].expand(B, K, state.shape[1])], dim=2))

    def scores(self, obs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """Raw per-row scores ``(B, K)`` (masked rows included) and the mask ``(B, K)`` bool."""
        cand, mask, state = self._unpack(obs)
        h = self._rows(self.encoder, cand, state)
        if self.context:
            c = masked_pool(h, mask)
            h = torch.cat([h, c[:, None, :].expand(h.shape[0], h.shape[1], c.shape[1])], dim=2)
        return self.score_head(h).squeeze(-1), mask

    def logits(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        """Masked logits ``(B, K)``: a masked slot gets :data:`MASKED_LOGIT`."""
        s, mask = self.scores(obs)
        return s.masked_fill(~mask, MASKED_LOGIT)

    # ------------------------------------------------------------------ RLModule API
    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return {Columns.ACTION_DIST_INPUTS: self.logits(batch[Columns.OBS])}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        cand, mask, state = self._unpack(batch[Columns.OBS])
        pooled = masked_pool(self._rows(self.critic_encoder, cand, state), mask)
        return self.value_head(torch.cat([pooled, state], dim=1)).squeeze(-1)
