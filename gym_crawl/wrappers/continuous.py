"""Continuous linear scoring: the action is a weight vector, the env fetches argmax_a wᵀx(s, a).

:class:`LinearScoringWrapper` lets stock continuous-action agents
(SB3 ``PPO``, ``A2C``, ``SAC``, ``TD3``) act on the variable-size action set: the
agent outputs ``w ∈ Box(-1, 1, (d,))`` and the step fetches the candidate whose
feature row ``x(s, a)`` maximizes ``w·x`` — Han et al.'s linear scorer, with the
policy choosing the weights per state instead of a SARSA update.

* **Candidate set.** With ``reducer="full"`` the argmax is exact over the *whole*
  frontier: one vectorized ``O(F × d)`` pass of ``CrawlView.argmax_frontier`` on
  the unclipped features (Han's synchronous mode). With any other reducer it runs
  over the K proposed candidates, using the (clipped) rows of the observation the
  agent saw. Ties go to the lowest slot / first frontier page.
* **Action path.** The wrapped env runs in page action mode (``action="page"``): the wrapper
  turns ``w`` into a page id and calls ``env.step(page)``, so ``TimeLimit`` and every other
  wrapper below see each step (:func:`gym_crawl.wrappers.make_scoring_env` builds it so).
* **Scaling.** ``argmax w·x`` is invariant to multiplying ``w`` by a positive constant, so the
  bounded box loses nothing: only the direction of ``w`` matters (``w = 0`` ties everything and
  fetches the first candidate — with ``topk`` the best-first choice). Values outside ``[-1, 1]``
  are clipped to the box; NaN/inf or a wrong shape raise ``ValueError``.
* **Observation**, a fixed-size ``Box(-1, 1, (s + (2 + m)·d,))`` summary::

      [state (s=6) | mean of candidate rows (d) | max of candidate rows (d) | first m rows (m·d)]

  Why: the agent chooses a *direction* in feature space, so it must know what the
  candidates look like along each feature. The mean and max over the valid rows are
  permutation-invariant and K-independent (they say e.g. "the best link text on offer
  is weak, weigh parent relevance"), and the first ``m`` rows in the reducer's order
  (``topk``: best link text first) show the leading alternatives that decide the
  argmax. The full (K, d) matrix would make the observation K-specific and large for
  SAC/TD3 critics. Rows beyond the valid ones are zeros; mean/max are 0 when no slot
  is valid (only at termination).
* ``info`` is the env's, plus ``info["chosen_slot"]`` (slot index, -1 when the page came
  from outside the K shown slots of the ``full`` reducer).

"""
from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils import RecordConstructorArgs

from gym_crawl._arith import row_dots
from gym_crawl.envs.wiki_crawl import STATE_NAMES
from gym_crawl.wrappers.common import auto_reward_scale, crawl_env_of

__all__ = ["LinearScoringWrapper", "summarize_candidates"]


def summarize_candidates(obs: dict[str, np.ndarray], top_rows: int) -> np.ndarray:
    """The summary observation of :class:`LinearScoringWrapper` from one env ``Dict`` observation.

    Returns float32 ``(s + (2 + top_rows)·d,)``: state, mean and max of the valid candidate
    rows, then the first ``top_rows`` rows (zero-padded).
    """
    X = np.asarray(obs["candidates"], np.float32)
    m = np.asarray(obs["mask"]).astype(bool)
    K, d = X.shape
    valid = X[m]
    if len(valid):
        mean, mx = valid.mean(axis=0), valid.max(axis=0)
    else:
        mean = mx = np.zeros(d, np.float32)
    rows = np.zeros((top_rows, d), np.float32)
    n = min(top_rows, K)
    rows[:n] = np.where(m[:n, None], X[:n], 0.0)
    return np.concatenate([np.asarray(obs["state"], np.float32), mean, mx, rows.reshape(-1)]).astype(np.float32)


class LinearScoringWrapper(gym.Wrapper, RecordConstructorArgs):
    """Action ``w ∈ Box(-1, 1, (d,))``; fetch ``argmax_a w·x(s, a)`` (see module docstring).

    Args:
        env: a (wrapped) WikiCrawl-v1 env built with ``action="page"`` and
            ``observation="candidates"``; its reducer decides the candidate set (``"full"``: exact
            over the whole frontier).
        top_rows: m, candidate rows included in the observation.
        reward_scale: multiply rewards by this; ``None``: ``1 / |max reward|`` of each episode's reward
            scheme (read at every reset); ``info["reward_sum"]`` stays unscaled.
    """

    def __init__(self, env: gym.Env, top_rows: int = 4, reward_scale: float | None = 1.0):
        RecordConstructorArgs.__init__(self, top_rows=top_rows, reward_scale=reward_scale)
        gym.Wrapper.__init__(self, env)
        base = crawl_env_of(env)
        if base.action_mode != "page" or base.observation_mode != "candidates":
            raise ValueError("LinearScoringWrapper needs a WikiCrawl env with action='page' and "
                             f"observation='candidates' (it fetches the argmax page through env.step), got "
                             f"action={base.action_mode!r}, observation={base.observation_mode!r}")
        if isinstance(top_rows, bool) or not isinstance(top_rows, int) or top_rows < 0:
            raise ValueError(f"top_rows must be an integer >= 0, got {top_rows!r}")
        self.top_rows = int(top_rows)
        self.reward_scale = None if reward_scale is None else float(reward_scale)
        self._scale = auto_reward_scale(base) if reward_scale is None else float(reward_scale)
        self.candidate_dim = d = base.view.feature_dim
        self.state_dim = s = len(STATE_NAMES)
        self.exact = base.view.reducer_name == "full"
        self.action_space = spaces.Box(-1.0, 1.0, (d,), np.float32)
        self.observation_space = spaces.Box(-1.0, 1.0, (s + (2 + self.top_rows) * d,), np.float32)
        self._last: dict[str, np.ndarray] | None = None
        self._ids = np.zeros(0, np.int64)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        if self.reward_scale is None:
            self._scale = auto_reward_scale(crawl_env_of(self.env))
        self._remember(obs, info)
        info["chosen_slot"] = -1
        return summarize_candidates(obs, self.top_rows), info

    def _remember(self, obs: dict[str, np.ndarray], info: dict) -> None:
        self._last = obs
        self._ids = np.asarray(info["candidate_ids"], np.int64)

    def choose(self, w: np.ndarray) -> tuple[int, int]:
        """``(slot, page)`` the weights ``w`` select now (slot -1: a frontier page outside the shown slots)."""
        if self._last is None:
            raise RuntimeError("call reset() before step()")
        w = np.asarray(w, np.float32)
        if w.shape != (self.candidate_dim,):
            raise ValueError(f"action must have shape ({self.candidate_dim},) (one weight per feature), "
                             f"got {w.shape}")
        if not np.all(np.isfinite(w)):
            raise ValueError(f"action has non-finite weights: {w}")
        w = np.clip(w, -1.0, 1.0)
        if self.exact:
            page = crawl_env_of(self.env).view.argmax_frontier(w)
            shown = np.flatnonzero(self._ids == page)
            return (int(shown[0]) if len(shown) else -1), page
        sc = row_dots(self._last["candidates"], w).astype(np.float32)  # float64 sums in column order, rounded once
        sc[self._ids < 0] = -np.inf
        slot = int(np.argmax(sc))
        return slot, int(self._ids[slot])

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        slot, page = self.choose(action)
        obs, r, term, trunc, info = self.env.step(page)
        self._remember(obs, info)
        info["chosen_slot"] = slot
        return summarize_candidates(obs, self.top_rows), float(r) * self._scale, term, trunc, info
