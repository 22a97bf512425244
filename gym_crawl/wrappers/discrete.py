"""Discrete candidate scoring for stock SB3 agents, and per-episode topic sampling.

:class:`DiscreteScoringWrapper` gives ``WikiCrawl-v1`` the fixed spaces stock
Stable-Baselines3 agents need. A reducer (``topk``, ``random``,
``outlinks``, ``tree``, ``full``; chosen when the env is built) proposes K
candidate pages each step; the agent picks a slot:

* action: ``Discrete(K)`` — slot ``i`` fetches ``info["candidate_ids"][i]``;
* observation, ``flatten=False``: the env's ``Dict`` as is::

      {"candidates": Box(-1, 1, (K, d), float32),   # x(s, a) of each slot, zero rows when masked
       "mask":       MultiBinary(K),                  # 1 = slot holds a candidate
       "state":      Box(-1, 1, (6,), float32)}       # crawl summary (WikiCrawlEnv STATE_NAMES)

  (SB3 ``MultiInputPolicy`` and :mod:`agents.sb3.policies` read it);
* observation, ``flatten=True``: one ``Box((K·d + K + 6,), float32)`` laid out as
  ``[candidates row-major (K·d) | mask (K) | state (6)]`` (SB3 ``MlpPolicy``,
  and the candidate-scoring policy with ``candidate_dim=d``);
* :meth:`DiscreteScoringWrapper.action_masks` — ``(K,)`` bool, sb3-contrib's
  convention; ``SubprocVecEnv.env_method("action_masks")`` reaches it (and the
  base env's) through ``get_wrapper_attr``, so ``MaskablePPO`` works on vectorized
  envs. ``info["action_mask"]`` carries the same mask.

**Masked (invalid) slots.** Agents that cannot mask — DQN's ε-greedy exploration,
PPO/A2C with a stock policy, SB3's ``check_env`` — do sample empty slots. Such a
step neither crashes nor fetches anything else: the step is spent (it counts
towards the episode budget), the reward is the env's ``invalid_action_penalty``
(default ``-0.1 × max reward``, times ``reward_scale``), the observation is
``candidates``/``mask`` part of the observation is unchanged (``state`` advances: budget used,
last reward), ``info["invalid_action"]`` is True, ``info["fetched_page"]`` is -1
and ``info["pages_fetched"]`` does not move. An action outside ``Discrete(K)``
raises ``ValueError`` naming the valid range. The candidate-scoring policies of
:mod:`agents.sb3.policies` never choose a masked slot (logit ``-1e8``; Q strictly
below every valid slot's).

:class:`gym_crawl.wrappers.TopicSampler` draws the episode's topic from a list, and
:func:`gym_crawl.wrappers.make_scoring_env` builds the whole stack.
"""
from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils import RecordConstructorArgs

from gym_crawl.envs.wiki_crawl import STATE_NAMES
from gym_crawl.wrappers.common import auto_reward_scale, crawl_env_of

__all__ = ["DiscreteScoringWrapper", "flatten_observation"]


def flatten_observation(obs: dict[str, np.ndarray]) -> np.ndarray:
    """``[candidates (K·d) | mask (K) | state (s)]`` as one float32 vector (single observation)."""
    return np.concatenate([np.asarray(obs["candidates"], np.float32).reshape(-1),
                           np.asarray(obs["mask"], np.float32).reshape(-1),
                           np.asarray(obs["state"], np.float32).reshape(-1)])


class DiscreteScoringWrapper(gym.Wrapper, RecordConstructorArgs):
    """``Discrete(K)`` candidate scoring with an optional flat observation (see module docstring).

    Args:
        env: a (wrapped) WikiCrawl-v1 env; its reducer, K and feature set are used as built.
        flatten: give one ``Box((K·d + K + 6,))`` observation instead of the ``Dict``.
        reward_scale: multiply rewards by this (e.g. ``1 / max_reward`` so Han's 30/-1 rewards
            become ≈1/-0.03 for value-based learners); ``None``: ``1 / |max reward|`` of each episode's
            reward scheme (read at every reset: a topic sampler may change the scheme); ``info["reward_sum"]``
            stays unscaled.
    """

    def __init__(self, env: gym.Env, flatten: bool = False, reward_scale: float | None = 1.0):
        RecordConstructorArgs.__init__(self, flatten=flatten, reward_scale=reward_scale)
        gym.Wrapper.__init__(self, env)
        base = crawl_env_of(env)
        if base.action_mode != "slot" or base.observation_mode != "candidates":
            raise ValueError("DiscreteScoringWrapper needs a WikiCrawl env with action='slot' and "
                             f"observation='candidates', got action={base.action_mode!r}, "
                             f"observation={base.observation_mode!r}")
        self.flatten = bool(flatten)
        self.reward_scale = None if reward_scale is None else float(reward_scale)
        self._scale = auto_reward_scale(base) if reward_scale is None else float(reward_scale)
        self.K = base.view.max_candidates
        self.candidate_dim = base.view.feature_dim
        self.state_dim = len(STATE_NAMES)
        self.action_space = spaces.Discrete(self.K)
        if self.flatten:
            d, K, s = self.candidate_dim, self.K, self.state_dim
            low = np.concatenate([np.full(K * d, -1.0), np.zeros(K), np.full(s, -1.0)]).astype(np.float32)
            high = np.ones(K * d + K + s, np.float32)
            self.observation_space = spaces.Box(low, high, dtype=np.float32)
        else:
            self.observation_space = base.observation_space

    def _obs(self, obs: dict[str, np.ndarray]) -> Any:
        return flatten_observation(obs) if self.flatten else obs

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        if self.reward_scale is None:
            self._scale = auto_reward_scale(crawl_env_of(self.env))
        return self._obs(obs), info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        obs, r, term, trunc, info = self.env.step(action)
        return self._obs(obs), float(r) * self._scale, term, trunc, info

    def action_masks(self) -> np.ndarray:
        """(K,) bool: True for slots holding a candidate (sb3-contrib ``MaskablePPO`` convention)."""
        return crawl_env_of(self.env).action_masks()
