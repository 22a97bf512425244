"""What the DQN crawlers share: the online network and its target, their optimizer, the loss record and the
checkpoint format.

TRES's Double DQN (:mod:`gym_crawl.agents.dqn.tres`) and the thesis' DQN (:mod:`gym_crawl.agents.dqn.thesis`)
differ in their networks (one Q per state-action row vs one Q output per page), their replay and their targets;
around those they keep the same things, done here once:

* an online network θ and a target network θ⁻ that starts as its copy and takes no gradients
  (:func:`init_target`), refreshed by a hard copy every N updates or a soft update θ⁻ ← θ⁻ + τ(θ − θ⁻)
  (:func:`update_target`);
* Adam as one fused kernel over all parameters (:func:`adam`);
* the losses of the first :data:`LOSS_HISTORY` updates (:func:`record_loss`);
* the parameters of both networks as numpy arrays (``online.*``, ``target.*``) for :meth:`Agent.state_dict`
  (:func:`networks_state`, :func:`load_networks_state`);
* a weight-only checkpoint: ``torch.save`` of a dict of tensors and plain values (a ``format`` tag, the agent's
  own header, both networks and the optimizer state), written atomically (:func:`save_checkpoint`) and read with
  ``torch.load(weights_only=True)`` (:func:`read_checkpoint`, :func:`restore_networks`). The replay is not saved.

Needs PyTorch (the ``sb3`` extra).
"""
from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl.registry import install_command

try:
    import torch
    from torch import nn
except ImportError as e:  # pragma: no cover - torch is a declared dependency of the agents extra
    raise ImportError(f"gym_crawl.agents.dqn needs PyTorch: {install_command('torch')}", name="torch") from e

__all__ = ["LOSS_HISTORY", "adam", "init_target", "load_networks_state", "networks_state", "read_checkpoint",
           "record_loss", "restore_networks", "save_checkpoint", "update_target"]

LOSS_HISTORY = 100_000
"""Losses kept per agent (the first updates'), for learning curves."""


def adam(params: Iterable[nn.Parameter], lr: float, eps: float = 1e-8) -> torch.optim.Optimizer:
    """Adam as one fused kernel over all parameters (PyTorch >= 2.4 on CPU); the multi-tensor ``foreach``
    form where fused is unavailable. Both apply the same update rule.

    :param params: the online network's parameters.
    :param lr: the learning rate.
    :param eps: Adam's epsilon (PyTorch's default 1e-8; Keras' is 1e-7).
    """
    params = list(params)
    try:
        return torch.optim.Adam(params, lr=lr, eps=eps, fused=True)
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.Adam(params, lr=lr, eps=eps, foreach=True)


def init_target(online: nn.Module, target: nn.Module) -> None:
    """Make ``target`` a copy of ``online`` that takes no gradients."""
    target.load_state_dict(online.state_dict())
    target.requires_grad_(False)


def update_target(online: nn.Module, target: nn.Module, every: float, updates: int) -> None:
    """Refresh the target after gradient update number ``updates``.

    :param every: below 1, a soft update by τ = ``every`` at every call (θ⁻ ← θ⁻ + τ(θ − θ⁻) = τθ + (1 − τ)θ⁻);
        from 1 on, a hard copy θ⁻ ← θ whenever ``updates`` is a multiple of ``int(every)``.
    :param updates: gradient updates done so far, this one included.
    """
    if every < 1.0:
        with torch.no_grad():
            torch._foreach_lerp_(list(target.parameters()), list(online.parameters()), float(every))
    elif updates % int(every) == 0:
        target.load_state_dict(online.state_dict())


def record_loss(losses: list[float], loss: torch.Tensor) -> float:
    """The loss as a float, appended to ``losses`` while it holds fewer than :data:`LOSS_HISTORY`."""
    val = float(loss.item())
    if len(losses) < LOSS_HISTORY:
        losses.append(val)
    return val


def networks_state(online: nn.Module, target: nn.Module) -> dict[str, np.ndarray]:
    """Both networks' parameters as numpy copies, keyed ``online.<name>`` and ``target.<name>``."""
    out = {f"online.{k}": v.detach().numpy().copy() for k, v in online.state_dict().items()}
    out.update({f"target.{k}": v.detach().numpy().copy() for k, v in target.state_dict().items()})
    return out


def load_networks_state(state: Mapping[str, Any], online: nn.Module, target: nn.Module) -> None:
    """Load the ``online.*`` / ``target.*`` arrays of :func:`networks_state` into built networks."""
    for prefix, net in (("online.", online), ("target.", target)):
        sd = {k[len(prefix):]: torch.as_tensor(np.asarray(v)) for k, v in state.items() if k.startswith(prefix)}
        net.load_state_dict(sd)


def save_checkpoint(path: str | Path, header: dict[str, Any], online: nn.Module | None, target: nn.Module | None,
                    opt: torch.optim.Optimizer | None) -> Path:
    """``torch.save`` of ``header`` (the ``format`` tag, the agent name, its config and counters: tensors and
    plain values only) plus, once built, both networks and the optimizer state; written atomically.

    :param path: the checkpoint file.
    :param header: what the agent needs to rebuild itself; must hold ``"format"``.
    """
    from gym_crawl._io import atomic_write_bytes

    path = Path(path)
    blob = dict(header)
    if online is not None and target is not None and opt is not None:
        blob.update(online=online.state_dict(), target=target.state_dict(), optimizer=opt.state_dict())
    buf = io.BytesIO()
    torch.save(blob, buf)
    atomic_write_bytes(path, buf.getvalue())
    return path


def read_checkpoint(path: str | Path, fmt: str, what: str) -> dict[str, Any] | None:
    """The dict a :func:`save_checkpoint` of format ``fmt`` wrote, read with ``torch.load(weights_only=True)``;
    ``None`` when ``path`` is an agent archive of :meth:`Agent.save` (``.npz`` with a header), which the caller
    hands to :meth:`Agent.load`.

    :param fmt: the expected ``format`` tag (``"gym_crawl.ddqn/1"``).
    :param what: the agent family for errors (``"DDQN"``).
    :raises FileNotFoundError: no such file.
    :raises ValueError: not a weights-only checkpoint of ``fmt`` (naming the file and what it found).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such agent file")
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            if "__header__.npy" in z.namelist():
                return None
    try:
        blob = torch.load(path, weights_only=True, map_location="cpu")
    except Exception as e:  # noqa: BLE001 - report what the file is, without torch's unsafe-loading advice
        first = str(e).strip().split("\n", 1)[0][:200]
        raise ValueError(f"{path}: not a weights-only {what} checkpoint ({type(e).__name__}: {first})") from None
    if not isinstance(blob, dict) or blob.get("format") != fmt:
        raise ValueError(f"{path}: not a gym_crawl {what} checkpoint")
    return blob


def restore_networks(blob: Mapping[str, Any], online: nn.Module | None, target: nn.Module | None,
                     opt: torch.optim.Optimizer | None) -> None:
    """Load a checkpoint's networks and optimizer state into an agent's built networks and optimizer."""
    assert online is not None and target is not None and opt is not None
    online.load_state_dict(blob["online"])
    target.load_state_dict(blob["target"])
    opt.load_state_dict(blob["optimizer"])
