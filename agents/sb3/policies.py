"""Candidate-scoring policies for Stable-Baselines3: one shared network scores every candidate row.

The discrete scoring wrapper's observation holds K candidate rows ``x(s, a_i)``
(d features each), a mask and a state vector (:mod:`gym_crawl.wrappers.discrete`).
A stock ``MlpPolicy`` flattens that into one vector and learns a separate output
per *slot*; these policies instead score each *row* with the same network —
TRES's ``Q(s, a)`` over state-action features — so that:

* outputs are **permutation-equivariant**: permuting candidate rows (with their mask
  entries) permutes the Q-values / logits the same way;
* the parameters do not depend on K: weights trained with K = 32 run with K = 256
  (:func:`transfer_policy` rebuilds a policy for other spaces and loads the weights);
* masked rows are never chosen: logits ``-1e8`` (sb3-contrib's masked value) for
  PPO / A2C / MaskablePPO, Q strictly below every valid slot's Q for DQN.

Architecture (``scorer_kwargs``)::

    h_i   = φ([x_i, state])                    row encoder, MLP ``hidden`` (shared by all rows)
    c     = [mean_i h_i, max_i h_i]            masked pooling over valid rows (permutation-invariant)
    s_i   = ψ([h_i, c])                        score head, MLP ``head`` → 1   (logit or Q-value)
    V(s)  = ρ([c', state])                     critic: its own row encoder φ' and pooling, MLP ``value``

The pooled context lets a row's score depend on what else is on offer (DeepSets-style
equivariant layer); set ``context=False`` for a purely per-row scorer.

**A best-first prior** (``prior_column=j``, the index of the link-score column — ``a.link_rel``, the
topic relevance of the link text that best-first ranks by): the score becomes

    s_i = β · x_i[j] + ψ([h_i, c])           β = exp(log β), learned, starts at ``prior_scale``

with the residual's output layer starting at zero, so the untrained policy ranks exactly as best-first
does (its greedy action is best-first's choice among the candidates) and learning only moves away from
it where the rewards say so. :func:`link_score_column` finds ``j`` in a feature set's column names.

Classes: :class:`CandidateFlattenExtractor` (no parameters: ``Dict`` or flat ``Box`` →
the flat layout ``[candidates (K·d) | mask (K) | state (s)]``), :class:`CandidateScorer`,
:class:`CandidateScoringPolicy` (PPO, A2C), :class:`MaskableCandidateScoringPolicy`
(sb3-contrib MaskablePPO) and :class:`CandidateScoringDQNPolicy` (DQN). Example::

    from sb3_contrib import MaskablePPO
    from gym_crawl.agents.sb3.policies import MaskableCandidateScoringPolicy
    model = MaskablePPO(MaskableCandidateScoringPolicy, env, policy_kwargs={"scorer_kwargs": {"hidden": [64, 64]}})
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch as th
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.policies import ActorCriticPolicy, BasePolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from stable_baselines3.dqn.policies import DQNPolicy, QNetwork
from torch import nn

from gym_crawl.agents.torch_layers import ACTIVATIONS, MASKED_LOGIT
from gym_crawl.agents.torch_layers import masked_pool as pool
from gym_crawl.agents.torch_layers import mlp as _mlp

__all__ = ["MASKED_LOGIT", "CandidateFlattenExtractor", "CandidateScorer", "CandidateScoringNet", "CandidateQHead",
           "CandidateScoringPolicy", "MaskableCandidateScoringPolicy", "CandidateScoringDQNPolicy",
           "split_flat", "transfer_policy", "link_score_column", "ACTIVATIONS"]

LINK_SCORE_COLUMN = "a.link_rel"
"""Name of the feature column holding best-first's link score (the topic relevance of the link text)."""


def link_score_column(names: Sequence[str]) -> int:
    """Index of best-first's link score (:data:`LINK_SCORE_COLUMN`) among a feature set's column ``names``;
    ``ValueError`` naming the feature set's columns when it has none."""
    names = list(names)
    if LINK_SCORE_COLUMN not in names:
        raise ValueError(f"a best-first prior needs the feature column {LINK_SCORE_COLUMN!r} (feature sets "
                         f"'combined', 'transferable', 'han2018-continuous' … have it); these columns have not: "
                         f"{names[:8]}{' …' if len(names) > 8 else ''}")
    return names.index(LINK_SCORE_COLUMN)


def split_flat(x: th.Tensor, candidate_dim: int, state_dim: int) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
    """Split the flat layout ``(B, K·d + K + s)`` into candidates ``(B, K, d)``, mask ``(B, K)`` bool and
    state ``(B, s)``; K is inferred from the width."""
    B, n = x.shape
    d, s = candidate_dim, state_dim
    K, rem = divmod(n - s, d + 1)
    if rem or K < 1:
        raise ValueError(f"flat observation of width {n} is not K·{d} + K + {s} for any K >= 1")
    cand = x[:, : K * d].reshape(B, K, d)
    mask = x[:, K * d: K * d + K] > 0.5
    return cand, mask, x[:, K * d + K:]


class CandidateFlattenExtractor(BaseFeaturesExtractor):
    """Parameter-free features extractor: the wrapper's ``Dict`` (or flat ``Box``) observation → the flat
    layout ``[candidates (K·d) | mask (K) | state (s)]`` that :class:`CandidateScoringNet` parses.

    Args:
        observation_space: ``Dict(candidates (K, d), mask (K,), state (s,))`` or a flat ``Box``.
        candidate_dim: d — required for a flat ``Box`` (the width alone does not determine K and d).
        state_dim: s for a flat ``Box`` (default 6, ``WikiCrawlEnv``'s state vector).
    """

    def __init__(self, observation_space: spaces.Space, candidate_dim: int | None = None, state_dim: int = 6):
        if isinstance(observation_space, spaces.Dict):
            for key in ("candidates", "mask", "state"):
                if key not in observation_space.spaces:
                    raise ValueError(f"candidate-scoring policies need a Dict with 'candidates', 'mask', 'state'; "
                                     f"got keys {list(observation_space.spaces)}")
            K, d = observation_space["candidates"].shape
            s = int(np.prod(observation_space["state"].shape))
            self.is_dict = True
        elif isinstance(observation_space, spaces.Box) and len(observation_space.shape) == 1:
            if candidate_dim is None:
                raise ValueError("a flat Box observation needs features_extractor_kwargs={'candidate_dim': d}")
            d, s = int(candidate_dim), int(state_dim)
            K, rem = divmod(observation_space.shape[0] - s, d + 1)
            if rem or K < 1:
                raise ValueError(f"Box of width {observation_space.shape[0]} is not K·{d} + K + {s}")
            self.is_dict = False
        else:
            raise ValueError(f"unsupported observation space for candidate scoring: {observation_space}")
        super().__init__(observation_space, features_dim=int(K * d + K + s))
        self.n_slots, self.candidate_dim, self.state_dim = int(K), int(d), int(s)

    def forward(self, obs: Any) -> th.Tensor:
        if self.is_dict:
            B = obs["candidates"].shape[0]
            return th.cat([obs["candidates"].reshape(B, -1).float(), obs["mask"].reshape(B, -1).float(),
                           obs["state"].reshape(B, -1).float()], dim=1)
        return obs.float()


class CandidateScorer(nn.Module):
    """Row encoder + masked pooling + score head (see module docstring). All parameters are K-independent.

    Args:
        candidate_dim: d, features per candidate row.
        state_dim: s, length of the state vector appended to every row.
        hidden: row-encoder layer sizes.
        head: score-head hidden sizes (the output layer → 1 is added); ``None``: encoder only.
        activation: ``"relu"``, ``"tanh"``, ``"elu"`` or ``"gelu"``.
        context: feed the pooled set summary to the score head.
        prior_column: index of best-first's link-score column in a row; the score is then
            ``β · x[prior_column] + residual`` with the residual's output layer starting at zero
            (see module docstring). ``None``: no prior.
        prior_scale: initial β (> 0); larger makes the initial policy's sampling closer to greedy best-first.
    """

    def __init__(self, candidate_dim: int, state_dim: int, hidden: Sequence[int] = (64, 64),
                 head: Sequence[int] | None = (64,), activation: str = "relu", context: bool = True,
                 prior_column: int | None = None, prior_scale: float = 20.0):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation {activation!r}; expected one of {sorted(ACTIVATIONS)}")
        if not hidden:
            raise ValueError("hidden must have at least one layer")
        if prior_column is not None and not 0 <= int(prior_column) < candidate_dim:
            raise ValueError(f"prior_column must index a candidate feature (0..{candidate_dim - 1}), "
                             f"got {prior_column}")
        if not float(prior_scale) > 0:
            raise ValueError(f"prior_scale must be > 0, got {prior_scale}")
        self.candidate_dim, self.state_dim, self.context = candidate_dim, state_dim, bool(context)
        self.prior_column = None if prior_column is None else int(prior_column)
        self.log_prior_scale: nn.Parameter | None = None
        if self.prior_column is not None and head is not None:
            self.log_prior_scale = nn.Parameter(th.tensor(float(np.log(prior_scale))))
        self.encoder = _mlp([candidate_dim + state_dim, *hidden], activation)
        self.embed_dim = int(hidden[-1])
        self.head: nn.Sequential | None = None
        if head is not None:
            in_head = self.embed_dim * (3 if self.context else 1)
            self.head = _mlp([in_head, *head, 1], activation, last_activation=False)
            self.output_layer: nn.Linear = self.head[-1]  # type: ignore[assignment]
            self.reset_prior()

    def reset_prior(self) -> None:
        """With a prior, zero the residual's output layer: the scores are then ``β · x[prior_column]``."""
        if self.log_prior_scale is not None:
            nn.init.zeros_(self.output_layer.weight)
            nn.init.zeros_(self.output_layer.bias)

    def encode(self, flat: th.Tensor) -> tuple[th.Tensor, th.Tensor, th.Tensor, th.Tensor]:
        """``(h (B, K, H), pooled (B, 2H), mask (B, K) bool, state (B, s))``."""
        cand, mask, state = split_flat(flat, self.candidate_dim, self.state_dim)
        B, K, _ = cand.shape
        h = self.encoder(th.cat([cand, state[:, None, :].expand(B, K, state.shape[1])], dim=2))
        return h, pool(h, mask), mask, state

    def scores(self, flat: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        """Raw per-row scores ``(B, K)`` (masked rows included) and the mask ``(B, K)``."""
        if self.head is None:
            raise RuntimeError("this CandidateScorer was built without a score head (head=None)")
        h, pooled, mask, _ = self.encode(flat)
        if self.context:
            h = th.cat([h, pooled[:, None, :].expand(h.shape[0], h.shape[1], pooled.shape[1])], dim=2)
        s = self.head(h).squeeze(-1)
        if self.log_prior_scale is not None:
            cand = flat[:, : s.shape[1] * self.candidate_dim].reshape(s.shape[0], s.shape[1], self.candidate_dim)
            s = s + self.log_prior_scale.exp() * cand[:, :, self.prior_column]
        return s, mask


class CandidateScoringNet(nn.Module):
    """SB3 ``mlp_extractor`` for actor-critic policies: ``latent_pi`` = masked per-row logits ``(B, K)``,
    ``latent_vf`` = critic features ``(B, value[-1])``. K is read from the input width at every call."""

    def __init__(self, candidate_dim: int, state_dim: int, n_slots: int, hidden: Sequence[int] = (64, 64),
                 head: Sequence[int] = (64,), value: Sequence[int] = (64,), activation: str = "tanh",
                 context: bool = True, prior_column: int | None = None, prior_scale: float = 20.0):
        super().__init__()
        self.actor = CandidateScorer(candidate_dim, state_dim, hidden, head, activation, context,
                                     prior_column=prior_column, prior_scale=prior_scale)
        self.critic_encoder = CandidateScorer(candidate_dim, state_dim, hidden, None, activation, context=False)
        if not value:
            raise ValueError("value must have at least one layer")
        self.critic = _mlp([2 * self.critic_encoder.embed_dim + state_dim, *value], activation)
        self.latent_dim_pi = int(n_slots)  # only used by SB3 to size action_net, which is replaced by Identity
        self.latent_dim_vf = int(value[-1])

    def forward(self, features: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: th.Tensor) -> th.Tensor:
        s, mask = self.actor.scores(features)
        return s.masked_fill(~mask, MASKED_LOGIT)

    def forward_critic(self, features: th.Tensor) -> th.Tensor:
        _, pooled, _, state = self.critic_encoder.encode(features)
        return self.critic(th.cat([pooled, state], dim=1))


class _ScoringActorCriticMixin:
    """Shared by the PPO/A2C and MaskablePPO policies: per-row logits, K-independent parameters."""

    scorer_kwargs: dict[str, Any]

    def _build_mlp_extractor(self) -> None:
        fe = self.features_extractor  # type: ignore[attr-defined]
        kw = {"activation": "tanh", **self.scorer_kwargs}
        self.mlp_extractor = CandidateScoringNet(fe.candidate_dim, fe.state_dim, fe.n_slots, **kw)

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)  # type: ignore[misc]
        self.action_net = nn.Identity()  # logits are the per-row scores
        if self.ortho_init:  # type: ignore[attr-defined]
            # small output gain, as SB3 does for action_net: a near-uniform initial policy
            nn.init.orthogonal_(self.mlp_extractor.actor.output_layer.weight, gain=0.01)
            nn.init.zeros_(self.mlp_extractor.actor.output_layer.bias)
        self.mlp_extractor.actor.reset_prior()  # with a best-first prior the residual starts at zero
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1),  # type: ignore[attr-defined]
                                              **self.optimizer_kwargs)  # type: ignore[attr-defined]

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()  # type: ignore[misc]
        data["scorer_kwargs"] = self.scorer_kwargs
        return data


def _ac_defaults(kwargs: dict[str, Any]) -> dict[str, Any]:
    kwargs.setdefault("features_extractor_class", CandidateFlattenExtractor)
    if not issubclass(kwargs["features_extractor_class"], CandidateFlattenExtractor):
        raise ValueError("candidate-scoring policies need a CandidateFlattenExtractor (sub)class")
    return kwargs


class CandidateScoringPolicy(_ScoringActorCriticMixin, ActorCriticPolicy):
    """Actor-critic policy for SB3 ``PPO`` / ``A2C`` on the discrete scoring wrapper.

    Args:
        observation_space, action_space, lr_schedule: as SB3 passes them.
        scorer_kwargs: :class:`CandidateScoringNet` options (``hidden``, ``head``, ``value``,
            ``activation`` (default ``"tanh"``), ``context``, ``prior_column``, ``prior_scale``).
        **kwargs: other :class:`~stable_baselines3.common.policies.ActorCriticPolicy` arguments
            (``net_arch`` is ignored; ``features_extractor_kwargs={"candidate_dim": d}`` for a flat Box).
    """

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space, lr_schedule: Any,
                 scorer_kwargs: dict[str, Any] | None = None, **kwargs: Any):
        self.scorer_kwargs = dict(scorer_kwargs or {})
        super().__init__(observation_space, action_space, lr_schedule, **_ac_defaults(kwargs))


class MaskableCandidateScoringPolicy(_ScoringActorCriticMixin, MaskableActorCriticPolicy):
    """The same for sb3-contrib ``MaskablePPO`` (masks from ``env.action_masks()`` agree with the obs mask)."""

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space, lr_schedule: Any,
                 scorer_kwargs: dict[str, Any] | None = None, **kwargs: Any):
        self.scorer_kwargs = dict(scorer_kwargs or {})
        super().__init__(observation_space, action_space, lr_schedule, **_ac_defaults(kwargs))


class CandidateQHead(nn.Module):
    """DQN ``q_net``: per-row Q-values ``(B, K)``. A masked row's Q is ``min(valid Q) - 1`` (detached):
    never the argmax nor the max of a TD target, finite (no loss blow-up when ε-greedy
    exploration stored a masked action), and it passes no gradient."""

    def __init__(self, candidate_dim: int, state_dim: int, hidden: Sequence[int] = (64, 64),
                 head: Sequence[int] = (64,), activation: str = "relu", context: bool = True,
                 prior_column: int | None = None, prior_scale: float = 20.0):
        super().__init__()
        self.scorer = CandidateScorer(candidate_dim, state_dim, hidden, head, activation, context,
                                      prior_column=prior_column, prior_scale=prior_scale)

    def forward(self, features: th.Tensor) -> th.Tensor:
        q, mask = self.scorer.scores(features)
        low = q.detach().masked_fill(~mask, float("inf")).amin(dim=1, keepdim=True)
        low = th.where(th.isfinite(low), low - 1.0, th.zeros_like(low))
        return th.where(mask, q, low.expand_as(q))


class CandidateScoringDQNPolicy(DQNPolicy):
    """DQN policy whose Q-network scores every candidate row with one shared network.

    Args:
        scorer_kwargs: :class:`CandidateQHead` options (``hidden``, ``head``, ``activation``
            (default ``"relu"``), ``context``, ``prior_column``, ``prior_scale``).
        **kwargs: other :class:`~stable_baselines3.dqn.policies.DQNPolicy` arguments (``net_arch`` ignored).
    """

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space, lr_schedule: Any,
                 scorer_kwargs: dict[str, Any] | None = None, **kwargs: Any):
        self.scorer_kwargs = dict(scorer_kwargs or {})
        kwargs.setdefault("net_arch", [])
        super().__init__(observation_space, action_space, lr_schedule, **_ac_defaults(kwargs))

    def make_q_net(self) -> QNetwork:
        net_args = self._update_features_extractor(self.net_args, features_extractor=None)
        q = QNetwork(**net_args)
        fe = q.features_extractor
        q.q_net = CandidateQHead(fe.candidate_dim, fe.state_dim, **self.scorer_kwargs)  # type: ignore[assignment]
        return q.to(self.device)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["scorer_kwargs"] = self.scorer_kwargs
        return data


def transfer_policy(policy: BasePolicy, observation_space: spaces.Space, action_space: spaces.Space) -> BasePolicy:
    """A copy of a candidate-scoring ``policy`` rebuilt for other spaces (e.g. K = 256 instead of 32),
    carrying the same weights. Raises ``ValueError`` for policies whose parameters depend on K
    (stock ``MlpPolicy`` / ``MultiInputPolicy``)."""
    kw = policy._get_constructor_parameters()
    kw["observation_space"], kw["action_space"] = observation_space, action_space
    kw.pop("lr_schedule", None)
    new = type(policy)(lr_schedule=lambda _: 0.0, **kw)
    state = policy.state_dict()
    own = new.state_dict()
    bad = [k for k in own if k not in state or own[k].shape != state[k].shape]
    if bad:
        raise ValueError(f"{type(policy).__name__} parameters depend on the spaces ({bad[:3]}…): "
                         f"only candidate-scoring policies transfer across K")
    new.load_state_dict(state)
    new.set_training_mode(False)
    return new
