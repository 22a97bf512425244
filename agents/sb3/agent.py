"""Run a trained Stable-Baselines3 policy through the Agent protocol (runner, CLI ``--agent sb3:<path>``).

:class:`SB3Agent` holds an SB3 *policy* (not the algorithm) and applies the scoring
wrapper's observation transform itself, so it runs on the plain ``WikiCrawl-v1`` env
like every other agent (the runner hands it the env's ``Dict`` observation):

* ``wrapper="discrete"``: the policy picks a candidate slot (``action_kind = "slot"``);
  with ``flatten=True`` it sees the flat ``Box``; MaskablePPO policies get the env's mask;
* ``wrapper="continuous"``: the policy outputs ``w``; the agent fetches (``action_kind = "page"``,
  a page-mode env, as ``LinearScoringWrapper`` does) ``argmax w·x`` over the candidate slots or,
  when the env's reducer is ``"full"``, over the whole frontier via ``env.argmax_frontier(w)``.

A model trained in Python with stock SB3 on :func:`gym_crawl.wrappers.make_scoring_env` runs in the CLI
either way:

* export it: ``export_sb3_model(model, "agent.npz", features="combined")`` (the env keywords it was
  trained with) writes the pickle-free ``agent.npz``; ``gym-crawl crawl --agent sb3:agent.npz``;
* or pass SB3's ``model.zip`` itself: :func:`load_sb3_zip` reads it without unpickling anything — the
  policy class from the archive's JSON (``data``), the weights with ``torch.load(weights_only=True)``, K
  and the feature dimension from the recorded spaces — and refuses, saying what to do, a policy whose
  keyword arguments are pickled objects.

Persistence is pickle-free (:meth:`Agent.save`): an ``.npz`` of the policy's tensors plus
a JSON header naming the algorithm, the policy class (an SB3 alias such as
``"MultiInputPolicy"`` or a class of :mod:`agents.sb3.policies`), JSON policy kwargs and
the wrapper options. The policy is rebuilt for the env it meets, so a candidate-scoring
policy trained with K = 32 runs on an env with K = 256; a stock ``MlpPolicy`` trained on
another K fails with a clear error. SB3's own ``model.zip`` (which unpickles classes
and schedules) is written by training for SB3 users, but never needed here.
"""
from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path
from typing import Any

import numpy as np
import torch as th
from gymnasium import spaces

from gym_crawl._arith import row_dots
from gym_crawl.agents.base import Agent, crawl_view
from gym_crawl.agents.env_config import CONFIG_FILE, MODEL_FIXED_KEYS, TRAINED_ENV_KEYS, EnvConfig, read_env_config
from gym_crawl.envs.wiki_crawl import STATE_NAMES
from gym_crawl.wrappers.continuous import summarize_candidates
from gym_crawl.wrappers.discrete import flatten_observation

__all__ = ["ALGO_CLASSES", "SB3Agent", "algo_class", "export_sb3_model", "identify_policy", "load_sb3_agent",
           "load_sb3_zip", "policy_class"]

ALGO_CLASSES: dict[str, str] = {
    "dqn": "stable_baselines3:DQN", "ppo": "stable_baselines3:PPO", "a2c": "stable_baselines3:A2C",
    "maskable-ppo": "sb3_contrib:MaskablePPO", "sac": "stable_baselines3:SAC", "td3": "stable_baselines3:TD3",
}
"""Algorithm name (CLI ``--algo``) → ``"module:class"``."""

_OWN_POLICIES = ("CandidateScoringPolicy", "MaskableCandidateScoringPolicy", "CandidateScoringDQNPolicy")
_OWN_ALGO = {"CandidateScoringPolicy": "ppo", "MaskableCandidateScoringPolicy": "maskable-ppo",
             "CandidateScoringDQNPolicy": "dqn"}


def algo_class(algo: str) -> Any:
    """The SB3 / sb3-contrib algorithm class for ``algo`` (see :data:`ALGO_CLASSES`)."""
    try:
        mod, attr = ALGO_CLASSES[algo].split(":")
    except KeyError:
        raise ValueError(f"unknown algorithm {algo!r}; expected one of {sorted(ALGO_CLASSES)}") from None
    return getattr(importlib.import_module(mod), attr)


def policy_class(algo: str, policy: str) -> Any:
    """Resolve ``policy`` — an alias of ``algo`` (``"MlpPolicy"``, ``"MultiInputPolicy"``) or a class name of
    :mod:`agents.sb3.policies` — to a class. Nothing else is importable from a saved header."""
    cls = algo_class(algo)
    if policy in cls.policy_aliases:
        return cls.policy_aliases[policy]
    if policy in _OWN_POLICIES:
        from gym_crawl.agents.sb3 import policies as sb3_policies

        return getattr(sb3_policies, policy)
    raise ValueError(f"unknown policy {policy!r} for {algo}: expected one of "
                     f"{sorted(cls.policy_aliases) + list(_OWN_POLICIES)}")


def identify_policy(module: str, name: str | None = None, doc: str | None = None) -> tuple[str, str]:
    """``(algo, policy)`` — names :func:`policy_class` resolves — of the SB3 policy class defined in ``module``
    with class name ``name`` (or, when the name is unknown, docstring ``doc``). PPO and A2C share their
    policy classes (same ``predict``): ``"ppo"`` is returned for both. ``ValueError`` for any other class."""
    seen = []
    for algo in ALGO_CLASSES:
        try:
            cls = algo_class(algo)
        except ImportError:  # sb3-contrib is optional
            continue
        for alias, pcls in cls.policy_aliases.items():
            seen.append(f"{pcls.__module__}.{pcls.__name__}")
            if pcls.__module__ == module and (pcls.__name__ == name if name else pcls.__doc__ == doc):
                return algo, alias
    if module == "gym_crawl.agents.sb3.policies":
        from gym_crawl.agents.sb3 import policies as sb3_policies

        for own in _OWN_POLICIES:
            if own == name or (not name and getattr(sb3_policies, own).__doc__ == doc):
                return _OWN_ALGO[own], own
    raise ValueError(f"policy class {module}.{name or '?'} is not one this agent can rebuild; known: "
                     f"{sorted(set(seen)) + [f'gym_crawl.agents.sb3.policies.{n}' for n in _OWN_POLICIES]}")


def _wrapper_options(obs_dict: bool, obs_dim: int, cand_shape: tuple[int, int] | None, action_n: int | None,
                     action_dim: int | None) -> dict[str, Any]:
    """SB3Agent options (wrapper, flatten, top_rows) and the training K / feature dim, from the spaces the
    model was trained on (a scoring wrapper's: Dict or flat Box observation, Discrete(K) or Box(d) action)."""
    s = len(STATE_NAMES)
    if action_n is not None:  # DiscreteScoringWrapper
        K = int(action_n)
        if obs_dict:
            if cand_shape is None:
                raise ValueError("a Dict observation without a 'candidates' entry is not a scoring wrapper's")
            return {"wrapper": "discrete", "flatten": False, "K": K, "d": int(cand_shape[1])}
        d, rem = divmod(obs_dim - K - s, K)
        if rem or d <= 0:
            raise ValueError(f"a flat observation of {obs_dim} values does not fit K={K} candidate rows")
        return {"wrapper": "discrete", "flatten": True, "K": K, "d": d}
    if action_dim is None or obs_dict:
        raise ValueError("expected a Discrete(K) or Box(d) action space (DiscreteScoringWrapper / "
                         "LinearScoringWrapper)")
    rows, rem = divmod(obs_dim - s, int(action_dim))
    if rem or rows < 2:
        raise ValueError(f"a summary observation of {obs_dim} values does not fit weights of dimension {action_dim}")
    return {"wrapper": "continuous", "top_rows": rows - 2, "K": None, "d": int(action_dim)}


def export_sb3_model(model: Any, path: str | Path, info: dict | None = None, **env_kwargs: Any) -> Path:
    """Write a trained stock SB3 ``model`` as the pickle-free ``agent.npz`` the CLI runs
    (``gym-crawl crawl --agent sb3:<path>``). The algorithm and policy are read from the model, the wrapper
    options and K from its spaces; ``env_kwargs`` are the ``WikiCrawl-v1`` keywords it was trained with
    (``features``, ``reducer``, ``reward`` …; ``max_candidates`` defaults to the trained K)."""
    pcls = type(model.policy)
    algo, policy = identify_policy(pcls.__module__, pcls.__name__)
    if algo == "ppo" and type(model).__name__ == "A2C":
        algo = "a2c"
    obs_sp, act_sp = model.observation_space, model.action_space
    is_dict = isinstance(obs_sp, spaces.Dict)
    opts = _wrapper_options(is_dict, 0 if is_dict else int(np.prod(obs_sp.shape)),
                            tuple(obs_sp["candidates"].shape) if is_dict and "candidates" in obs_sp.spaces else None,
                            int(act_sp.n) if isinstance(act_sp, spaces.Discrete) else None,
                            int(np.prod(act_sp.shape)) if isinstance(act_sp, spaces.Box) else None)
    kw = dict(env_kwargs)
    if opts["K"] is not None:
        kw.setdefault("max_candidates", opts["K"])
    pkw = dict(getattr(model, "policy_kwargs", {}) or {})
    agent = SB3Agent.from_model(model, algo=algo, policy=policy, policy_kwargs=pkw, wrapper=opts["wrapper"],
                                flatten=opts.get("flatten", False), top_rows=opts.get("top_rows", 4),
                                info={"exported_from": type(model).__name__, "feature_dim": opts["d"],
                                      **(info or {})}, env_kwargs=kw)
    return agent.save(path)


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
        env_kwargs: ``WikiCrawlEnv`` keywords the policy was trained with (``features``, ``reducer``,
            ``max_candidates``, ``text``, ...) and optionally the ``env_id``: exposed as :attr:`env_defaults` and
            :attr:`env_config` (whose fixed keywords are :meth:`fixed_env_keys`), so
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
        self.env_defaults = {k: v for k, v in (env_kwargs or {}).items()
                             if k not in ("env_id", "text_model", "feature_dim")}
        if wrapper not in ("discrete", "continuous"):
            raise ValueError(f"wrapper must be 'discrete' or 'continuous', got {wrapper!r}")
        self.algo, self.wrapper, self.flatten, self.top_rows = algo, wrapper, bool(flatten), int(top_rows)
        self.env_config: EnvConfig | None = (
            read_env_config(env_kwargs, fixed=self.fixed_env_keys(), name="the SB3 agent's env_kwargs")
            if env_kwargs else None)
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

    def fixed_env_keys(self) -> tuple[str, ...]:
        """Env keywords a caller may not change (:class:`~gym_crawl.agents.env_config.EnvConfig`): the feature
        set, category slots and text model always, and K unless the policy scores candidate rows one by one (the
        candidate-scoring policies on the discrete wrapper's ``Dict`` observation, and the continuous wrapper's
        weight vector run at any K)."""
        any_k = self.wrapper == "continuous" or (self.config["policy"] in _OWN_POLICIES and not self.flatten)
        return MODEL_FIXED_KEYS if any_k else (*MODEL_FIXED_KEYS, "max_candidates")

    # ------------------------------------------------------------ building
    @classmethod
    def from_model(cls, model: Any, algo: str, policy: str, policy_kwargs: dict | None = None, **kw: Any) -> SB3Agent:
        """Wrap a trained SB3 ``model`` (its policy's current weights are copied)."""
        agent = cls(algo=algo, policy=policy, policy_kwargs=policy_kwargs, **kw)
        agent.load_state_dict({k: v.detach().cpu().numpy().copy() for k, v in model.policy.state_dict().items()})
        return agent

    def spaces_for(self, env: Any) -> tuple[spaces.Space, spaces.Space]:
        """Observation and action spaces of the wrapper this agent emulates, for the unwrapped ``env``."""
        base = crawl_view(env)
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
                raise ValueError(self._mismatch(env, bad[:3] + extra[:3]))
            policy.load_state_dict({k: th.as_tensor(v) for k, v in self._state.items()})
        policy.set_training_mode(False)
        self.policy, self._spaces = policy, (obs_space, act_space)

    def _mismatch(self, env: Any, keys: list[str]) -> str:
        """Why the saved weights do not fit ``env``, naming the CLI flags (``--k``, ``--features``) and keywords
        (``max_candidates=``, ``features=``) that set what the policy was trained with."""
        base = crawl_view(env)
        want_k = self.env_defaults.get("max_candidates")
        want_d = self.config["info"].get("feature_dim")
        hints = []
        if want_k is not None and int(want_k) != base.max_candidates:
            hints.append(f"it was trained with K={want_k} candidate slots, this env has K={base.max_candidates} "
                         f"(CLI: --k {want_k}; Python: max_candidates={want_k})")
        if want_d is not None and int(want_d) != base.feature_dim:
            hints.append(f"it was trained on a feature set of dimension {want_d}, this env's "
                         f"{getattr(base, 'feature_set_name', 'features')!s} has {base.feature_dim} "
                         f"(CLI: --features NAME; Python: features=NAME, the set it was trained with)")
        if not hints:
            hints.append(f"this env gives observations {self.spaces_for(env)[0]} and actions "
                         f"{self.spaces_for(env)[1]} (CLI: --k / --features; Python: max_candidates= / features=)")
        return (f"saved {self.config['policy']} weights do not fit this env (mismatched {keys}): "
                + "; ".join(hints) + ". Only the candidate-scoring policies run with another K.")

    # -------------------------------------------------------------- acting
    def begin_episode(self, env: Any, rng: np.random.Generator) -> None:
        super().begin_episode(env, rng)
        self._build(env)
        self._exact = self.wrapper == "continuous" and crawl_view(env).reducer_name == "full"
        if not self.deterministic:
            th.manual_seed(int(rng.integers(2**31)))

    def policy_action(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        """The raw SB3 action for one env ``Dict`` observation (slot index, or weight vector ``w``)."""
        if not isinstance(obs, dict) or "candidates" not in obs:
            raise TypeError("SB3Agent acts on the plain WikiCrawl-v1 observation (a Dict with 'candidates'); "
                            "run it on make_env_for(agent, ...) rather than on a scoring wrapper")
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
        sc = row_dots(np.asarray(obs["candidates"], np.float32), w).astype(np.float32)
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


def _zip_spaces(data: dict, path: Path) -> dict[str, Any]:
    """Wrapper options from the JSON descriptions SB3 writes beside the pickled spaces (nothing unpickled)."""
    import ast
    import re

    obs, act = data.get("observation_space", {}), data.get("action_space", {})
    obs_t, act_t = str(obs.get(":type:", "")), str(act.get(":type:", ""))
    try:
        cand = None
        if "spaces.dict.Dict" in obs_t:
            m = re.search(r"'candidates': Box\([^()]*\((\d+), (\d+)\)", str(obs.get("spaces", "")))
            cand = (int(m.group(1)), int(m.group(2))) if m else None
            obs_dim = 0
        else:
            obs_dim = int(np.prod(ast.literal_eval(str(obs.get("_shape")))))
        act_n = int(act["n"]) if "discrete.Discrete" in act_t else None
        act_d = int(np.prod(ast.literal_eval(str(act.get("_shape"))))) if "box.Box" in act_t else None
    except (KeyError, ValueError, SyntaxError, TypeError) as e:
        raise ValueError(f"{path}: cannot read the observation/action spaces recorded in its 'data' ({e}); "
                         f"export the model instead: {_EXPORT_HINT}") from None
    try:
        return _wrapper_options("spaces.dict.Dict" in obs_t, obs_dim, cand, act_n, act_d)
    except ValueError as e:
        raise ValueError(f"{path}: {e}; it was not trained on a gym_crawl scoring wrapper (make_scoring_env)") from None


_EXPORT_HINT = ("in Python, gym_crawl.agents.sb3.agent.export_sb3_model(model, 'agent.npz', **env_kwargs), "
                "then --agent sb3:agent.npz")


def load_sb3_zip(path: str | Path, **env_kwargs: Any) -> SB3Agent:
    """An :class:`SB3Agent` from a stock SB3 ``model.zip`` trained on :func:`gym_crawl.wrappers.make_scoring_env`,
    read without unpickling: the policy class from the archive's JSON ``data``, the weights from ``policy.pth``
    with ``torch.load(weights_only=True)``, K and the feature dimension from the recorded spaces (K becomes the
    env default ``max_candidates``). ``env_kwargs`` are further ``WikiCrawl-v1`` keywords it was trained with.
    ``ValueError`` naming the file and what to do for anything else (pickled policy kwargs, other policies)."""
    import io
    import json
    import zipfile

    p = Path(path)
    try:
        with zipfile.ZipFile(p) as z:
            names = set(z.namelist())
            if "data" not in names or "policy.pth" not in names:
                raise ValueError(f"{p}: not a Stable-Baselines3 model archive (no 'data' / 'policy.pth' inside)")
            data = json.loads(z.read("data").decode("utf-8"))
            raw = z.read("policy.pth")
    except (zipfile.BadZipFile, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{p}: not a readable Stable-Baselines3 model.zip ({e})") from None
    pc = data.get("policy_class", {})
    init = str(pc.get("__init__", ""))
    name = init.split()[1].split(".")[0] if init.startswith("<function ") else None
    algo, policy = identify_policy(str(pc.get("__module__", "")), name, pc.get("__doc__"))
    pkw = data.get("policy_kwargs", {})
    if not isinstance(pkw, dict) or ":serialized:" in pkw or any(
            isinstance(v, dict) and ":serialized:" in v for v in pkw.values()):
        raise ValueError(f"{p}: its policy_kwargs hold pickled Python objects, which this loader never "
                         f"unpickles; {_EXPORT_HINT}")
    opts = _zip_spaces(data, p)
    try:
        state = th.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - torch raises many types for a bad or unsafe file
        raise ValueError(f"{p}: policy.pth is not a plain tensor state dict ({type(e).__name__}: {e})") from None
    kw = dict(env_kwargs)
    if opts["K"] is not None:
        kw.setdefault("max_candidates", opts["K"])
    agent = SB3Agent(algo=algo, policy=policy, policy_kwargs=pkw, wrapper=opts["wrapper"],
                     flatten=opts.get("flatten", False), top_rows=opts.get("top_rows", 4),
                     info={"source": str(p), "feature_dim": opts["d"]}, env_kwargs=kw)
    agent.load_state_dict({k: v.numpy() for k, v in state.items()})
    return agent


def load_sb3_agent(path: str | Path) -> SB3Agent:
    """Load an :class:`SB3Agent` from its ``.npz``, a training output folder (``<dir>/agent.npz``) or a stock SB3
    ``model.zip`` (the ``agent.npz`` beside it when there is one, else :func:`load_sb3_zip`), with the env it was
    trained on: its :attr:`~SB3Agent.env_config` is the ``env_kwargs`` saved in the file and, for a training run's
    output, the env id, feature set, K and reducer of the ``config.json`` beside it (``gym-crawl train`` writes
    both; a file and a ``config.json`` that disagree are refused, naming both)."""
    p = Path(path)
    if p.is_dir():
        p = p / "agent.npz"
    elif p.suffix == ".zip" and (p.parent / "agent.npz").exists():
        p = p.parent / "agent.npz"  # the pickle-free agent.npz `gym-crawl train` writes beside model.zip
    elif p.suffix == ".zip" and p.exists():
        zipped = load_sb3_zip(p)
        zipped.env_config = _saved_env(zipped, p)
        return zipped
    if not p.exists():
        raise FileNotFoundError(f"{path}: no SB3 agent file (expected a `gym-crawl train` output folder or the "
                                f"agent.npz it writes)")
    agent = Agent.load(p, expect="sb3")
    if not isinstance(agent, SB3Agent):
        raise ValueError(f"{p} holds agent {agent.name!r}, not an SB3 agent")  # noqa: TRY004 - bad file content
    agent.env_config = _saved_env(agent, p)
    return agent


def _saved_env(agent: SB3Agent, path: Path) -> EnvConfig:
    """The env config of an agent loaded from ``path``: its header's ``env_kwargs`` and the training run's
    ``config.json`` beside the file, when there is one."""
    own = agent.env_config or EnvConfig(source=str(path), fixed=frozenset(agent.fixed_env_keys()))
    run_file = path.parent / CONFIG_FILE
    if not run_file.is_file():
        return dataclasses.replace(own, source=str(path))
    run = read_env_config(run_file, keys=TRAINED_ENV_KEYS, fixed=own.fixed)
    clash = sorted(k for k in run.kwargs if k in own.kwargs and own.kwargs[k] != run.kwargs[k])
    if own.env_id and run.env_id and own.env_id != run.env_id:
        clash.append("env_id")
    if clash:
        mine = {**own.kwargs, "env_id": own.env_id}
        theirs = {**run.kwargs, "env_id": run.env_id}
        diff = ", ".join(f"{k} ({mine[k]!r} vs {theirs[k]!r})" for k in clash)
        raise ValueError(f"{path} and {run_file} disagree on {diff}: they come from different training runs; keep "
                         f"the agent file with its own run's {CONFIG_FILE}")
    return dataclasses.replace(own, source=str(run_file), env_id=own.env_id or run.env_id,
                               kwargs={**run.kwargs, **own.kwargs})

