"""``WikiCrawlVectorEnv``: N crawls in one process, as Gymnasium's custom ``VectorEnv``.

``gym.make_vec("WikiCrawl-v1", num_envs=N, vectorization_mode="vector_entry_point", **kwargs)`` builds
it (the registered ``vector_entry_point``). Compared with ``SyncVectorEnv`` over N ``gym.make`` envs it

* loads the corpus and the text model **once** and shares them (and the per-topic scorers) between
  the N crawls — the memory of one env, not N;
* writes observations straight into preallocated batch arrays (no per-step ``concatenate``);
* implements Gymnasium's **next-step autoreset** (``metadata["autoreset_mode"]``): the step after a
  sub-env terminated or truncated resets it and returns the reset observation, with reward 0 and
  ``terminated = truncated = False`` for that sub-env; the other sub-envs step normally;
* owns truncation at ``max_episode_steps`` (``make_vec`` passes it; a vector entry point has no
  ``TimeLimit``), and tells each crawl its budget (``WikiCrawlEnv.set_budget``);
* gives batched masks: ``action_masks()`` is (N, K) bool in slot mode, (N, n_pages) in page mode.

Same seeds ⇒ the same trajectories as N single envs (``gym.make`` + ``TimeLimit``) seeded
``seed + i`` — tested. ``info`` follows Gymnasium's vector convention: every key holds an array of
N values, with a boolean ``_key`` array saying which sub-envs set it.
"""
from __future__ import annotations

from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from gym_crawl.corpus import load_corpus
from gym_crawl.envs.wiki_crawl import WikiCrawlEnv
from gym_crawl.text.model import TextModel, get_text_model

__all__ = ["WikiCrawlVectorEnv"]


class WikiCrawlVectorEnv(VectorEnv):
    """N :class:`WikiCrawlEnv` crawls sharing one corpus and text model (see the module docstring).

    Args:
        num_envs: N.
        max_episode_steps: the page budget of every crawl (``None``: no truncation).
        **kwargs: :class:`WikiCrawlEnv` keyword arguments, the same for every sub-env.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, max_episode_steps: int | None = 1000, **kwargs: Any):
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
        if kwargs.get("render_mode") is not None:
            raise ValueError("WikiCrawlVectorEnv does not render; use single envs with render_mode='ansi'")
        corpus = load_corpus(kwargs.pop("corpus", None), **(kwargs.pop("corpus_kwargs", None) or {}))
        text = kwargs.pop("text", None)
        text = text if isinstance(text, TextModel) else get_text_model(corpus, **(text or {}))
        self.envs = [WikiCrawlEnv(corpus=corpus, text=text, **kwargs) for _ in range(num_envs)]
        for e in self.envs[1:]:
            e._scorers = self.envs[0]._scorers  # one scorer per topic, shared (read-only after build)
        for e in self.envs:
            e.set_budget(max_episode_steps)
        self.num_envs = num_envs
        self.max_episode_steps = max_episode_steps
        first = self.envs[0]
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._dict_obs = isinstance(self.single_observation_space, gym.spaces.Dict)
        self._obs = self._alloc_obs()
        self._rewards = np.zeros(num_envs, np.float64)
        self._terminated = np.zeros(num_envs, bool)
        self._truncated = np.zeros(num_envs, bool)
        self._autoreset = np.zeros(num_envs, bool)
        self._steps = np.zeros(num_envs, np.int64)

    # ------------------------------------------------------------------ helpers
    def _alloc_obs(self) -> Any:
        sp = self.single_observation_space
        if self._dict_obs:
            return {k: np.zeros((self.num_envs, *s.shape), s.dtype) for k, s in sp.spaces.items()}
        return np.zeros((self.num_envs, *sp.shape), sp.dtype)

    def _put_obs(self, i: int, obs: Any) -> None:
        if self._dict_obs:
            for k, v in obs.items():
                self._obs[k][i] = v
        else:
            self._obs[i] = obs

    def _obs_out(self) -> Any:
        if self._dict_obs:
            return {k: v.copy() for k, v in self._obs.items()}
        return self._obs.copy()

    @staticmethod
    def _seeds(seed: int | Sequence[int] | None, n: int) -> list[int | None]:
        if seed is None:
            return [None] * n
        if isinstance(seed, (int, np.integer)):
            return [int(seed) + i for i in range(n)]
        seeds = list(seed)
        if len(seeds) != n:
            raise ValueError(f"reset(seed=...) needs {n} seeds (one per sub-env), got {len(seeds)}")
        return seeds

    # ------------------------------------------------------------------ API
    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict | None = None) -> tuple[Any, dict]:
        """Reset every sub-env (``seed``: an int ⇒ ``seed + i``, or one seed per sub-env)."""
        infos: dict[str, Any] = {}
        for i, (e, s) in enumerate(zip(self.envs, self._seeds(seed, self.num_envs))):
            obs, info = e.reset(seed=s, options=options)
            self._put_obs(i, obs)
            infos = self._add_info(infos, info, i)
        self._autoreset[:] = False
        self._steps[:] = 0
        return self._obs_out(), infos

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Step every sub-env with its action; sub-envs that ended on the previous step are reset instead."""
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), one per sub-env; got {actions.shape}")
        infos: dict[str, Any] = {}
        for i, e in enumerate(self.envs):
            if self._autoreset[i]:
                obs, info = e.reset()
                self._rewards[i] = 0.0
                self._terminated[i] = self._truncated[i] = False
                self._steps[i] = 0
            else:
                obs, r, term, trunc, info = e.step(actions[i])
                self._steps[i] += 1
                self._rewards[i] = r
                self._terminated[i] = term
                self._truncated[i] = trunc
            self._put_obs(i, obs)
            infos = self._add_info(infos, info, i)
        self._autoreset = self._terminated | self._truncated
        return (self._obs_out(), self._rewards.copy(), self._terminated.copy(), self._truncated.copy(), infos)

    def action_masks(self) -> np.ndarray:
        """(N, K) bool in slot mode, (N, n_pages) bool in page mode (sub-envs about to autoreset: their
        reset state's mask is only known after the reset; their row is the ended episode's)."""
        return np.stack([e.action_masks() for e in self.envs])

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call a method (or read an attribute) of every sub-env, like ``SyncVectorEnv.call``."""
        out = []
        for e in self.envs:
            attr = getattr(e, name)
            out.append(attr(*args, **kwargs) if callable(attr) else attr)
        return tuple(out)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        return tuple(getattr(e, name) for e in self.envs)

    def close_extras(self, **kwargs: Any) -> None:
        for e in self.envs:
            e.close()
