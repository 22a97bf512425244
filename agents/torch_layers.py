"""Torch-only building blocks shared by the candidate-scoring models of Stable-Baselines3
(:mod:`gym_crawl.agents.sb3.policies`) and Ray RLlib (:mod:`gym_crawl.agents.rllib.model`): neither
framework is imported here, so each model module depends only on its own framework and torch."""
from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

__all__ = ["ACTIVATIONS", "MASKED_LOGIT", "masked_pool", "mlp"]

MASKED_LOGIT = -1e8
"""Logit of a masked slot (sb3-contrib's ``MaskableCategorical`` uses the same value)."""

ACTIVATIONS: dict[str, type[nn.Module]] = {"relu": nn.ReLU, "tanh": nn.Tanh, "elu": nn.ELU, "gelu": nn.GELU}


def mlp(sizes: Sequence[int], activation: str, last_activation: bool = True) -> nn.Sequential:
    """Linear layers ``sizes[0] → … → sizes[-1]`` with ``activation`` between them (and after the last one
    when ``last_activation``)."""
    act = ACTIVATIONS[activation]
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(int(sizes[i]), int(sizes[i + 1])))
        if last_activation or i < len(sizes) - 2:
            layers.append(act())
    return nn.Sequential(*layers)


def masked_pool(h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Masked ``[mean, max]`` over rows: ``(B, K, H), (B, K) bool → (B, 2H)``; zeros when no row is valid."""
    m = mask.unsqueeze(-1).to(h.dtype)
    n = m.sum(dim=1)
    mean = (h * m).sum(dim=1) / n.clamp(min=1.0)
    mx = h.masked_fill(~mask.unsqueeze(-1), float("-inf")).amax(dim=1)
    mx = torch.where(n > 0, mx, torch.zeros_like(mx))
    return torch.cat([mean, mx], dim=1)
