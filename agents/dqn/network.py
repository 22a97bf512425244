"""The Q-network of the DDQN crawlers (:mod:`gym_crawl.agents.dqn.tres`): one MLP on state-action rows."""
from __future__ import annotations

import math

import numpy as np

from gym_crawl.registry import install_command

try:
    import torch
    from torch import nn
except ImportError as e:  # pragma: no cover - torch is a declared dependency of the agents extra
    raise ImportError(f"agents.dqn.tres needs PyTorch: {install_command('torch')}", name="torch") from e

__all__ = ["QNetwork"]


class QNetwork(nn.Module):
    """``Q(x) : (n, d) → (n,)``, an MLP with ReLU hidden layers, initialized from a numpy generator
    (PyTorch's default Kaiming-uniform bounds), so initialization never touches torch's global RNG."""

    def __init__(self, dim: int, hidden: list[int] | tuple[int, ...], rng: np.random.Generator | None = None):
        super().__init__()
        sizes = [int(dim)] + [int(h) for h in hidden] + [1]
        layers: list[nn.Module] = []
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            layers.append(nn.Linear(a, b))
            if i < len(sizes) - 2:
                layers.append(nn.ReLU())
        self.net = nn.Sequential(*layers)
        #: the Linear layers in order (a plain tuple: not registered twice, state_dict keys stay net.<i>.*)
        self.linears = tuple(m for m in layers if isinstance(m, nn.Linear))
        if rng is not None:
            with torch.no_grad():
                for m in self.net:
                    if isinstance(m, nn.Linear):
                        bound = 1.0 / math.sqrt(m.in_features)
                        m.weight.copy_(torch.from_numpy(rng.uniform(-bound, bound, m.weight.shape).astype(np.float32)))
                        m.bias.copy_(torch.from_numpy(rng.uniform(-bound, bound, m.bias.shape).astype(np.float32)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # noqa: D102
        # the Sequential's layers called functionally: the same ops (bit-identical), without the overhead of
        # a module call per layer, which a forward of this size notices
        layers = self.linears
        h = x
        last = len(layers) - 1
        for i, m in enumerate(layers):
            h = nn.functional.linear(h, m.weight, m.bias)
            if i < last:
                h = torch.relu(h)
        return h.squeeze(-1)

