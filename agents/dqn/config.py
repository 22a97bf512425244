"""The typed configuration of the DDQN crawlers (:mod:`gym_crawl.agents.dqn.tres`): :class:`DDQNConfig`.

A frozen dataclass, validated when built (every bad value raises ``ValueError`` naming the option),
with the defaults TRES's crawlers run with. The agents take its fields as keyword arguments
(``TresAgent(gamma=0.5, hidden=(32, 32))``) or a ready config (``TresAgent(config=cfg)``), and
write it into their checkpoint header as JSON (:meth:`DDQNConfig.to_dict` /
:meth:`DDQNConfig.from_dict`), so a loaded agent has exactly the configuration it was saved with.
"""
from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = ["DDQNConfig", "LR_SCHEDULES", "LOSSES"]

LR_SCHEDULES = ("constant", "linear", "exponential", "cosine")
LOSSES = ("mse", "huber")


def _int(name: str, v: Any, low: int) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or int(v) < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
    return int(v)


def _real(name: str, v: Any, low: float | None = None, high: float | None = None) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(float(v)):
        raise ValueError(f"{name} must be a finite number, got {v!r}")
    f = float(v)
    if (low is not None and f < low) or (high is not None and f > high):
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise ValueError(f"{name} must be in [{lo}, {hi}], got {v!r}")
    return f


@dataclass(frozen=True)
class DDQNConfig:
    """Options of the DDQN crawlers (``tres``, ``tres-async``); defaults are TRES's setup here.

    Attributes:
        gamma: discount γ in [0, 1] (0.3: TRES's myopic crawler).
        hidden: sizes of the MLP's hidden ReLU layers.
        lr, lr_end, lr_schedule, lr_decay_steps: the learning rate falls from ``lr`` to ``lr_end`` over
            ``lr_decay_steps`` gradient updates (``constant``, ``linear``, ``exponential``, ``cosine``).
        batch_size: minibatch size. buffer_size: transitions kept in the replay.
        rows_per_transition: bootstrap rows reserved per transition in the replay's row ring.
        max_next_actions: at most this many rows in a bootstrap set Ã_{t+1}.
        learning_starts: transitions in the replay before the first update.
        train_freq, gradient_steps: ``gradient_steps`` updates every ``train_freq`` env steps.
        target_update: gradient updates between copies of the online network into the target.
        warmup_steps: Tree-Random (uniform) exploration steps before ε-greedy.
        eps_start, eps_end, eps_decay_steps: ε falls linearly after the warm-up.
        seed_init, seed_reward: TRES's seed experience (zero features, this positive reward).
        reward_scale: ``"auto"`` (divide by the env's max reward) or a positive factor.
        double: Double DQN targets (else vanilla max over the target network).
        loss: ``"mse"`` or ``"huber"``. grad_clip: gradient-norm clip (0 = none).
        seed: seeds the network's initial weights.
        torch_threads: PyTorch intra-op threads, set (process-wide, ``torch.set_num_threads``) when the agent
            builds its networks; 0 leaves torch's setting. Default 1: the MLP's batches (64 transitions, a few
            thousand bootstrap rows, 64 hidden units) gain nothing from threads, and on a shared machine threads
            spin against each other (``benchmarks/RESULTS.md``).

    Speed (``train_freq``): TRES trains after every env step (``train_freq=1``, the default, the paper's
    Algorithm 4); each update's cost is dominated by the online network's pass over every bootstrap row
    of the minibatch (Double DQN's argmax, ~1,500 rows). ``train_freq=4`` trades fidelity for speed
    (figures in benchmarks/RESULTS.md, ``gym-crawl bench throughput``).
    """

    gamma: float = 0.3
    hidden: tuple[int, ...] = (64, 64)
    lr: float = 1e-3
    lr_end: float = 1e-4
    lr_schedule: str = "linear"
    lr_decay_steps: int = 20_000
    batch_size: int = 64
    buffer_size: int = 50_000
    rows_per_transition: int = 24
    max_next_actions: int = 64
    learning_starts: int = 64
    train_freq: int = 1
    gradient_steps: int = 1
    target_update: int = 500
    warmup_steps: int = 100
    eps_start: float = 0.05
    eps_end: float = 0.01
    eps_decay_steps: int = 2_000
    seed_init: bool = True
    seed_reward: float = 1.0
    reward_scale: float | str = "auto"
    double: bool = True
    loss: str = "mse"
    grad_clip: float = 10.0
    seed: int = 0
    torch_threads: int = 1

    #: field names, in order (the options the agents accept)
    OPTIONS: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if isinstance(self.hidden, (str, bytes)) or not hasattr(self.hidden, "__iter__"):
            raise ValueError(f"hidden must be a sequence of layer sizes, got {self.hidden!r}")
        set_(self, "hidden", tuple(_int("hidden[]", h, 1) for h in self.hidden))
        set_(self, "gamma", _real("gamma", self.gamma, 0.0, 1.0))
        for name in ("lr", "lr_end"):
            set_(self, name, _real(name, getattr(self, name), 0.0))
        if self.lr_schedule not in LR_SCHEDULES:
            raise ValueError(f"lr_schedule {self.lr_schedule!r}: expected one of {LR_SCHEDULES}")
        if self.loss not in LOSSES:
            raise ValueError(f"loss {self.loss!r}: expected one of {LOSSES}")
        for name in ("lr_decay_steps", "batch_size", "buffer_size", "rows_per_transition", "max_next_actions",
                     "train_freq", "target_update", "eps_decay_steps"):
            set_(self, name, _int(name, getattr(self, name), 1))
        for name in ("learning_starts", "gradient_steps", "warmup_steps", "seed", "torch_threads"):
            set_(self, name, _int(name, getattr(self, name), 0))
        for name in ("eps_start", "eps_end"):
            set_(self, name, _real(name, getattr(self, name), 0.0, 1.0))
        set_(self, "seed_reward", _real("seed_reward", self.seed_reward))
        set_(self, "grad_clip", _real("grad_clip", self.grad_clip, 0.0))
        for name in ("seed_init", "double"):
            v = getattr(self, name)
            if not isinstance(v, bool):
                raise ValueError(f"{name} must be True or False, got {v!r}")
        if self.reward_scale != "auto":
            set_(self, "reward_scale", _real("reward_scale", self.reward_scale, 0.0))

    @classmethod
    def from_options(cls, owner: str = "ddqn", **options: Any) -> DDQNConfig:
        """A config from keyword options; unknown names raise ``ValueError`` listing the known ones."""
        unknown = sorted(set(options) - set(cls.OPTIONS))
        if unknown:
            raise ValueError(f"{owner}: unknown option(s) {unknown}; options: {sorted(cls.OPTIONS)}")
        return cls(**options)

    def replace(self, **changes: Any) -> DDQNConfig:
        """A validated copy with ``changes`` applied."""
        return DDQNConfig.from_options("DDQNConfig.replace", **{**self.to_dict(), **changes})

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready options (``hidden`` as a list)."""
        d = dataclasses.asdict(self)
        d["hidden"] = list(self.hidden)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any], owner: str = "ddqn") -> DDQNConfig:
        return cls.from_options(owner, **d)


DDQNConfig.OPTIONS = tuple(f.name for f in dataclasses.fields(DDQNConfig))
