"""Run a trained Stable-Baselines3 policy through the Agent protocol (runner, CLI ``--agent sb3:<path>``).

:class:`SB3Agent` holds an SB3 *policy* (not the algorithm) and applies the scoring
wrapper's observation transform itself, so it runs on the plain ``WikiCrawl-v1`` env
like every other agent (the runner hands it the env's ``Dict`` observation):

* ``wrapper="discrete"``: the policy picks a candidate slot (``action_kind = "slot"``);
  with ``flatten=True`` it sees the flat ``Box``; MaskablePPO policies get the env's mask;
* ``wrapper="continuous"``: the policy outputs ``w``; the agent fetches (``action_kind = "page"``,
  a page-mode env, as ``LinearScoringWrapper`` does) ``argmax w·x`` over the candidate slots or,
  when the env's reducer is ``"full"``, over the whole frontier via ``env.argmax_frontier(w)``.

Persistence is pickle-free (:meth:`Agent.save`): an ``.npz`` of the policy's tensors plus
a JSON header naming the algorithm, the policy class (an SB3 alias such as
``"MultiInputPolicy"`` or a class of :mod:`agents.sb3_policies`), JSON policy kwargs and
the wrapper options. The policy is rebuilt for the env it meets, so a candidate-scoring
policy trained with K = 32 runs on an env with K = 256; a stock ``MlpPolicy`` trained on
another K fails with a clear error. SB3's own ``model.zip`` (which unpickles classes
and schedules) is written by training for SB3 users, but never needed here.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import numpy as np
import torch as th
from gymnasium import spaces

from gym_crawl.agents.base import Agent
from gym_crawl.envs.wiki_crawl import STATE_NAMES
from gym_crawl.wrappers.continuous import summarize_candidates
from gym_crawl.wrappers.discrete import flatten_observation

__all__ = ["ALGO_CLASSES", "SB3Agent", "algo_class", "load_sb3_agent", "policy_class"]

ALGO_CLASSES: dict[str, str] = {
    "dqn": "stable_baselines3:DQN", "ppo": "stable_baselines3:PPO", "a2c": "stable_baselines3:A2C",
    "maskable-ppo": "sb3_contrib:MaskablePPO", "sac": "stable_baselines3:SAC", "td3": "stable_baselines3:TD3",
}
"""Algorithm name (CLI ``--algo``) → ``"module:class"``."""

_OWN_POLICIES = ("CandidateScoringPolicy", "MaskableCandidateScoringPolicy", "CandidateScoringDQNPolicy")


def algo_class(algo: str) -> Any:
    """The SB3 / sb3-contrib algorithm class for ``algo`` (see :data:`ALGO_CLASSES`)."""
    try:
        mod, attr = ALGO_CLASSES[algo].split(":")
    except KeyError:
        raise ValueError(f"unknown algorithm {algo!r}; expected one of {sorted(ALGO_CLASSES)}") from None
    return getattr(importlib.import_module(mod), attr)


def policy_class(algo: str, policy: str) -> Any:
    """Resolve ``policy`` — an alias of ``algo`` (``"MlpPolicy"``, ``"MultiInputPolicy"``) or a class name of
    :mod:`agents.sb3_policies` — to a class. Nothing else is importable from a saved header."""
    cls = algo_class(algo)
    if policy in cls.policy_aliases:
        return cls.policy_aliases[policy]
    if policy in _OWN_POLICIES:
        from gym_crawl.agents import sb3_policies

        return getattr(sb3_policies, policy)
    raise ValueError(f"unknown policy {policy!r} for {algo}: expected one of "
                     f"{sorted(cls.policy_aliases) + list(_OWN_POLICIES)}")


class SB3Agent(Agent):
    """An SB3 policy acting on ``WikiCrawl-v1`` (see module docstring).

    Args:
        algo: ``"dqn"``, ``"ppo"``, ``"a2c"``, ``"maskable-ppo"``, ``"sac"`` or ``"td3"``.
        policy: SB3 policy alias or candidate-scoring class name (see :func:`policy_class`).
        policy_kwargs: JSON-serializable keyword arguments of the policy class.
        wrapper: ``"discrete"`` or ``"continuous"`` — the wrapper the policy was trained behind.
        flatten: discrete wrapper with a flat ``Box`` observation.
        top_rows: continuous wrapper's summary rows.
        deterministic: act greedily (default) or sample from the policy.
        info: free-form JSON metadata (training run, steps, topics) kept in the saved header.
        env_kwargs: ``WikiCrawl-v1`` keywords the policy was trained with (``features``, ``reducer``,
            ``max_candidates``, ``text``, ...): exposed as :attr:`env_defaults`, so
            :func:`gym_crawl.agents.make_env_for` builds the env the policy expects, and saved with it.
    """

    name = "sb3"
    action_kind = "slot"

    def __init__(self, algo: str = "maskable-ppo", policy: str = "MaskableCandidateScoringPolicy",
                 policy_kwargs: dict | None = None, wrapper: str = "discrete", flatten: bool = False,
                 top_rows: int = 4, deterministic: bool = True, info: dict | None = None,
                 env_kwargs: dict | None = None):
        if env_kwargs is not None and not isinstance(env_kwargs, dict):
            raise ValueError(f"env_kwargs must be a dict of WikiCrawl-v1 keywords, got {type(env_kwargs).__name__}")
        super().__init__(algo=algo, policy=policy, policy_kwargs=dict(policy_kwargs or {}), wrapper=wrapper,
                         flatten=flatten, top_rows=top_rows, deterministic=deterministic, info=dict(info or {}),
                         env_kwargs=dict(env_kwargs or {}))
        if "action" in (env_kwargs or {}):
            raise ValueError("env_kwargs must not set 'action': the wrapper option fixes the action mode")
        self.env_defaults = dict(env_kwargs or {})
        if wrapper not in ("discrete", "continuous"):
            raise ValueError(f"wrapper must be 'discrete' or 'continuous', got {wrapper!r}")
        self.algo, self.wrapper, self.flatten, self.top_rows = algo, wrapper, bool(flatten), int(top_rows)
        self.deterministic = bool(deterministic)
        self.policy_cls = policy_class(algo, policy)
        self.policy_kwargs = dict(policy_kwargs or {})
        self.maskable = algo == "maskable-ppo"
        # the continuous (linear-scoring) policy picks a page: argmax w·x over the candidates, or over
        # the whole frontier when the env's reducer is "full" — it runs on a page-mode env
        self.action_kind = "page" if wrapper == "continuous" else "slot"
        self._state: dict[str, np.ndarray] = {}
        self.policy: Any = None
        self._spaces: tuple[Any, Any] | None = None

    # ------------------------------------------------------------ building
    @classmethod
    def from_model(cls, model: Any, algo: str, policy: str, policy_kwargs: dict | None = None, **kw: Any) -> SB3Agent:
        """Wrap a trained SB3 ``model`` (its policy's current weights are copied)."""
        agent = cls(algo=algo, policy=policy, policy_kwargs=policy_kwargs, **kw)
        agent.load_state_dict({k: v.detach().cpu().numpy().copy() for k, v in model.policy.state_dict().items()})
        return agent

    def spaces_for(self, env: Any) -> tuple[spaces.Space, spaces.Space]:
        """Observation and action spaces of the wrapper this agent emulates, for the unwrapped ``env``."""
        base = env.unwrapped
        d, K = base.feature_dim, base.max_candidates
        s = len(STATE_NAMES)
        if self.wrapper == "continuous":
            return (spaces.Box(-1.0, 1.0, (s + (2 + self.top_rows) * d,), np.float32),
                    spaces.Box(-1.0, 1.0, (d,), np.float32))
        if self.flatten:
            low = np.concatenate([np.full(K * d, -1.0), np.zeros(K), np.full(s, -1.0)]).astype(np.float32)
            return spaces.Box(low, np.ones_like(low), dtype=np.float32), spaces.Discrete(K)
        return base.observation_space, spaces.Discrete(K)

    def _build(self, env: Any) -> None:
        obs_space, act_space = self.spaces_for(env)
        if self.policy is not None and self._spaces is not None and self._spaces[0] == obs_space \
                and self._spaces[1] == act_space:
            return
        with th.random.fork_rng():  # an untrained policy's initial weights are seeded (determinism)
            th.manual_seed(0)
            policy = self.policy_cls(obs_space, act_space, lambda _: 0.0, **self.policy_kwargs)
        if self._state:
            own = policy.state_dict()
            bad = sorted(k for k in own if k not in self._state or tuple(own[k].shape) != self._state[k].shape)
            extra = sorted(set(self._state) - set(own))
            if bad or extra:
                raise ValueError(
                    f"saved {self.config['policy']} weights do not fit this env's spaces "
                    f"(obs {obs_space}, actions {act_space}): mismatched {bad[:3] + extra[:3]}. Only the "
                    f"candidate-scoring policies run with another K; stock MLP policies need the training K.")
            policy.load_state_dict({k: th.as_tensor(v) for k, v in self._state.items()})
        policy.set_training_mode(False)
        self.policy, self._spaces = policy, (obs_space, act_space)

    # -------------------------------------------------------------- acting
    def begin_episode(self, env: Any, rng: np.random.Generator) -> None:
        super().begin_episode(env, rng)
        self._build(env)
        self._exact = self.wrapper == "continuous" and env.unwrapped.reducer_name == "full"
        if not self.deterministic:
            th.manual_seed(int(rng.integers(2**31)))

    def policy_action(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        """The raw SB3 action for one env ``Dict`` observation (slot index, or weight vector ``w``)."""
        if not isinstance(obs, dict) or "candidates" not in obs:
            raise TypeError("SB3Agent acts on the plain WikiCrawl-v1 observation (a Dict with 'candidates'); "
                            "run it on gym.make('WikiCrawl-v1', ...) rather than on a scoring wrapper")
        if self.wrapper == "continuous":
            x: Any = summarize_candidates(obs, self.top_rows)
        else:
            x = flatten_observation(obs) if self.flatten else obs
        with th.no_grad():
            if self.maskable:
                a, _ = self.policy.predict(x, deterministic=self.deterministic,
                                           action_masks=np.asarray(obs["mask"]).astype(bool))
            else:
                a, _ = self.policy.predict(x, deterministic=self.deterministic)
        return np.asarray(a)

    def act(self, obs: Any, info: dict) -> int:
        a = self.policy_action(obs)
        if self.wrapper == "discrete":
            return int(a.reshape(()))
        w = np.clip(a.astype(np.float32).reshape(-1), -1.0, 1.0)
        if self._exact:
            return self.env.argmax_frontier(w)
        sc = np.asarray(obs["candidates"], np.float32) @ w
        sc[np.asarray(obs["mask"]) == 0] = -np.inf
        return int(info["candidate_ids"][int(np.argmax(sc))])

    # ----------------------------------------------------------- persistence
    def state_dict(self) -> dict[str, np.ndarray]:
        if self.policy is not None:
            return {k: v.detach().cpu().numpy() for k, v in self.policy.state_dict().items()}
        return dict(self._state)

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        self._state = {k: np.array(v, copy=True) for k, v in state.items()}
        self.policy, self._spaces = None, None


def load_sb3_agent(path: str | Path) -> SB3Agent:
    """Load an :class:`SB3Agent` from its ``.npz`` or from a training output folder (``<dir>/agent.npz``)."""
    p = Path(path)
    if p.is_dir():
        p = p / "agent.npz"
    elif p.suffix == ".zip" and (p.parent / "agent.npz").exists():
        p = p.parent / "agent.npz"  # SB3's model.zip (pickled): use the pickle-free agent.npz written beside it
    if not p.exists():
        raise FileNotFoundError(f"{path}: no SB3 agent file (expected a `gym-crawl train` output folder or the "
                                f"agent.npz it writes)")
    agent = Agent.load(p, expect="sb3")
    if not isinstance(agent, SB3Agent):
        raise ValueError(f"{p} holds agent {agent.name!r}, not an SB3 agent")  # noqa: TRY004 - bad file content
    return agent

