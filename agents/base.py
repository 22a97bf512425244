"""The one agent protocol every crawler implements, and the registry of agents by name.

An agent interacts with a :class:`gym_crawl.envs.WikiCrawlEnv` through::

    agent.begin_episode(view, rng)         # view = env.unwrapped.view, a read-only CrawlView
    action = agent.act(obs, info)          # an int: a candidate slot or a page id (see action_kind)
    agent.observe(Transition(...))         # after env.step answered
    agent.save(path) / Agent.load(path)    # learners persist without pickle (JSON / npz / torch weights)

One action path: the runner (:func:`gym_crawl.agents.run_episode`) passes every action to
``env.step`` of the env as built — wrappers included — and ``action_kind`` says which action mode
the env must have (:func:`gym_crawl.agents.make_env_for` builds it so):

* ``"slot"`` — ``action="slot"``: an index into the K candidate slots (the SB3-compatible
  ``Discrete(K)`` interface);
* ``"page"`` — ``action="page"``: a frontier page id (``Discrete(n_pages)``), chosen through the
  view's read-only methods (the list: :class:`gym_crawl.envs.view.CrawlView`).

Agents read the crawl only through the view they are given; it leads to nothing else of the env.

Agents are registered by name so the CLI and benchmarks run ``--agent NAME``;
a third-party agent plugs in with :func:`register_agent`.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl.envs.view import CrawlView
from gym_crawl.registry import Registry, install_command

__all__ = ["Agent", "Transition", "AGENTS", "MODEL_LOADERS", "register_agent", "make_agent", "model_spec",
           "agent_names", "agent_class", "crawl_view"]


def crawl_view(env: Any) -> CrawlView:
    """The read-only :class:`CrawlView` of ``env``: ``env`` itself when it is one, else ``env.unwrapped.view`` of
    a (possibly wrapped) crawl env; ``TypeError`` for anything else."""
    if isinstance(env, CrawlView):
        return env
    view = getattr(getattr(env, "unwrapped", None), "view", None)
    if not isinstance(view, CrawlView):
        raise TypeError(f"expected a crawl env or its CrawlView, got {type(env).__name__}")
    return view


@dataclass
class Transition:
    """One env step as the agent sees it."""

    obs: Any
    action: int
    reward: float
    next_obs: Any
    terminated: bool
    truncated: bool
    info: dict


class Agent:
    """Base class for crawling agents (see module docstring).

    Subclasses set ``name`` and ``action_kind`` and implement :meth:`act`;
    learners also implement :meth:`observe`, :meth:`state_dict` and :meth:`load_state_dict`.
    """

    name = "agent"
    action_kind = "slot"
    #: Agents that read hidden ground truth (oracles for upper bounds) set this; benchmarks label them.
    uses_hidden_information = False
    #: Page-kind agents that never read the K-slot observation set this False: their env is built with
    #: ``observation="state"`` (only the crawl summary), so it skips building the K candidate rows.
    needs_observation = True
    #: Env keyword defaults this agent is designed for (e.g. ``{"features": "han2018"}``); the CLI and
    #: benchmarks apply them unless the user overrides them.
    env_defaults: dict[str, Any] = {}
    #: The env a trained model was trained on (:class:`gym_crawl.agents.env_config.EnvConfig`: env id, feature set,
    #: K, ...), or ``None``. :func:`gym_crawl.agents.make_env_for` builds that env and refuses a keyword that
    #: contradicts one of its fixed keywords.
    env_config: Any = None
    #: The agent's score of the action it chose last (its priority / Q-value), or ``None`` when it has none;
    #: a live crawl records it with each decision.
    last_score: float | None = None
    #: How far the score of the action chosen last was ahead of the best other candidate's (``None``: a random
    #: choice, or an agent without scores). A replay of a recorded crawl accepts another choice only where this
    #: margin was within float rounding (tests/test_golden.py).
    last_margin: float | None = None
    #: The model configuration of the env this agent last began an episode on (``CrawlView.model_config``), which
    #: :meth:`save` records; ``None`` before its first episode.
    model_env: dict[str, Any] | None = None
    #: Agents whose ``__init__`` checks its own keyword options (unknown names are its error) set this; for the
    #: others :func:`make_agent` refuses options that no ``__init__`` between the class and Agent names.
    checks_own_config = False
    #: The registered variant name (:mod:`gym_crawl.agents.variants`) when this agent is one, else ``None``.
    variant: str | None = None

    @property
    def registered_name(self) -> str:
        """The name that rebuilds this agent with :func:`make_agent`: its variant's name, else :attr:`name`."""
        return self.variant or self.name

    def __init__(self, **config: Any):
        self.config = dict(config)
        self.env: Any = None
        self.rng = np.random.default_rng(0)

    def begin_episode(self, env: Any, rng: np.random.Generator) -> None:
        """Called by the runner after ``env.reset`` with the crawl's read-only view (``env.unwrapped.view``,
        a :class:`~gym_crawl.envs.view.CrawlView`); the agent reads the crawl through it only."""
        self.env = env
        self.rng = rng
        try:
            view = crawl_view(env)
        except TypeError:  # a test double, not a crawl: nothing to record
            return
        from gym_crawl.agents.env_config import model_config_of

        self.model_env = model_config_of(view)

    def fixed_env_keys(self) -> tuple[str, ...]:
        """Env keywords no caller may change under this agent's saved weights
        (:data:`gym_crawl.agents.env_config.MODEL_FIXED_KEYS`: the feature set, the category slots, the text model)."""
        from gym_crawl.agents.env_config import MODEL_FIXED_KEYS

        return MODEL_FIXED_KEYS

    def model_config(self) -> dict[str, Any] | None:
        """The model configuration a save records (:mod:`gym_crawl.agents.env_config`): that of the env this agent
        last ran on, else the one it was loaded with, else ``None``."""
        if self.model_env is not None:
            return dict(self.model_env)
        cfg = self.env_config
        return cfg.to_json() if cfg is not None and hasattr(cfg, "to_json") else None

    def act(self, obs: Any, info: dict) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def overrule(self, action: int) -> None:
        """Take ``action`` instead of the one :meth:`act` just returned (called between :meth:`act` and the env
        step; :meth:`observe` then gets ``action``). A replay that follows a recorded crawl through a near-tie
        uses it. Agents that keep state of their own choice update it here; this base refuses, since it cannot
        know what an agent kept."""
        raise NotImplementedError(f"agent {self.name!r} cannot take another action than the one it chose")

    def observe(self, transition: Transition) -> None:
        """Learn from a transition (no-op for non-learners)."""

    def end_episode(self, info: dict) -> None:
        """Called after the last step of an episode."""

    # --------------------------------------------------------- persistence
    def state_dict(self) -> dict[str, np.ndarray]:
        """Learned parameters as named numpy arrays (empty for non-learners)."""
        return {}

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        if state:
            raise ValueError(f"agent {self.name!r} has no parameters to load, got {sorted(state)}")

    def save(self, path: str | Path) -> Path:
        """Write ``<path>`` as an ``.npz`` of :meth:`state_dict` plus a JSON header (no pickle), atomically; a
        learner's header records its model configuration (:meth:`model_config`) under ``"env"``."""
        import io

        from gym_crawl._io import atomic_write_bytes

        path = Path(path)
        buf = io.BytesIO()
        state = self.state_dict()
        head: dict[str, Any] = {"agent": self.registered_name, "config": self.config}
        env = self.model_config()
        if env is not None and state:  # a model: the env it needs (gym_crawl.agents.env_config)
            head["env"] = env
        header = json.dumps(head, default=str).encode()
        np.savez(buf, __header__=np.frombuffer(header, np.uint8), **state)
        atomic_write_bytes(path, buf.getvalue())
        return path

    @classmethod
    def load(cls, path: str | Path, expect: str | None = None) -> Agent:
        """Rebuild an agent saved with :meth:`save` (its registered name picks the class).

        The format is detected from the file's content, never guessed by trial: an agent ``.npz``
        (header + arrays, read with ``allow_pickle=False``) or a PyTorch agent checkpoint (read with
        ``weights_only=True``). ``expect`` names the agent the caller wants (``--agent NAME --load
        FILE``): a file holding another agent is refused. Every failure names the file, what it
        is, and what was expected; none suggests unsafe loading.
        """
        import zipfile

        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"{p}: no such agent file")
        if not zipfile.is_zipfile(p):
            raise ValueError(f"{p}: not an agent file (expected an agent .npz written by Agent.save / "
                             f"--save, or a PyTorch agent checkpoint)")
        with zipfile.ZipFile(p) as zf:
            names = zf.namelist()
        if {"data", "policy.pth"} <= set(names):
            raise ValueError(f"{p}: this is Stable-Baselines3's model.zip; run it with --agent sb3:{p} (read "
                             f"without unpickling; gym_crawl.agents.sb3.agent.load_sb3_zip in Python)")
        if any(n.endswith("data.pkl") for n in names):
            agent = _load_torch_agent(p)
        elif "__header__.npy" in names:
            try:
                with np.load(p, allow_pickle=False) as z:
                    try:
                        header = json.loads(bytes(z["__header__"]).decode())
                        saved = str(header["agent"])
                    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
                        raise ValueError(f"{p}: damaged agent header ({e})") from None
                    state = {k: z[k].copy() for k in z.files if k != "__header__"}
            except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:  # a damaged archive, an object array
                raise ValueError(e.args[0] if str(e).startswith(str(p)) else f"{p}: damaged agent file "
                                 f"({type(e).__name__}: {e})") from None
            bad = sorted(k for k, a in state.items() if a.dtype.kind in "fc" and not np.isfinite(a).all())
            if bad:
                raise ValueError(f"{p}: non-finite weights in {bad} (a diverged or damaged agent); refusing to load it")
            if expect is not None and saved != expect:
                raise ValueError(f"{p} holds agent {saved!r}, not {expect!r}: load it with --agent {saved}")
            config = header.get("config", {})
            if not isinstance(config, dict):
                raise ValueError(f"{p}: damaged agent header (config is {type(config).__name__}, not an object)")
            try:
                agent = make_agent(saved, **config)
                agent.load_state_dict(state)
            except (ValueError, TypeError, KeyError) as e:
                raise ValueError(f"{p}: cannot rebuild agent {saved!r} from it ({e})") from None
            _attach_env(agent, header.get("env"), p)
            return agent
        else:
            raise ValueError(f"{p}: a zip/.npz archive without an agent header (not written by Agent.save); "
                             f"expected an agent .npz or a PyTorch agent checkpoint")
        if expect is not None and agent.registered_name != expect:
            raise ValueError(f"{p} holds agent {agent.registered_name!r}, not {expect!r}: "
                             f"load it with --agent {agent.registered_name}")
        return agent


def _load_torch_agent(p: Path) -> Agent:
    """A PyTorch agent checkpoint: weights only (no pickle); its ``agent`` field picks the class."""
    try:
        import torch
    except ImportError:
        raise ValueError(f"{p} is a PyTorch checkpoint: install PyTorch ({install_command('torch')})") from None
    try:
        ckpt = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - torch raises many types; report ours without its advice
        first = str(e).strip().split("\n", 1)[0][:200]
        raise ValueError(f"{p}: a PyTorch checkpoint that does not load as plain weights "
                         f"({type(e).__name__}: {first}); gym_crawl only loads weight-only agent checkpoints") from None
    if not isinstance(ckpt, dict) or "agent" not in ckpt:
        raise ValueError(f"{p}: a PyTorch checkpoint without an 'agent' field (not written by a gym_crawl agent)")
    agent = agent_class(str(ckpt["agent"])).load(p)  # type: ignore[attr-defined]
    env = ckpt.get("env")
    _attach_env(agent, json.loads(env) if isinstance(env, str) else env, p)
    return agent


def _attach_env(agent: Agent, env: Any, p: Path) -> None:
    """Give a loaded ``agent`` the model configuration its file recorded (``env``; nothing for older files)."""
    if env is None:
        return
    if not isinstance(env, dict):
        raise ValueError(f"{p}: damaged agent header (env is {type(env).__name__}, not an object)")
    from gym_crawl.agents.env_config import MODEL_ENV_KEYS, read_env_config

    agent.env_config = read_env_config(env, keys=[k for k in MODEL_ENV_KEYS if k in env],
                                       fixed=agent.fixed_env_keys(), name=str(p))


#: name -> Agent class (lazy "module:attribute" entries: PyTorch agents cost nothing until asked for)
AGENTS: Registry[Agent] = Registry("agent")
for _name, _target, _doc in [
    ("random", "gym_crawl.agents.baselines:RandomAgent", "baseline: a uniformly random frontier page"),
    ("bfs", "gym_crawl.agents.baselines:BreadthFirstAgent", "baseline: breadth-first, in discovery order"),
    ("best-first", "gym_crawl.agents.baselines:BestFirstAgent",
     "the papers' no-learning crawler: the most topic-relevant link text first"),
    ("best-first-page", "gym_crawl.agents.baselines:BestFirstPageAgent",
     "best-first as a page agent over the whole frontier (the thesis' basic crawler)"),
    ("oracle", "gym_crawl.agents.baselines:GreedyOracleAgent",
     "upper bound reading hidden labels (not a crawler)"),
    ("lfa-sync", "gym_crawl.agents.linear.lfa:LFASyncAgent",
     "Han 2018 linear SARSA, exact argmax over the whole frontier"),
    ("lfa-async", "gym_crawl.agents.linear.lfa:LFAAsyncAgent",
     "Han 2018 linear SARSA, asynchronous (out-links) updates"),
    ("lfa-moderated", "gym_crawl.agents.linear.lfa:LFAModeratedAgent", "Han 2018 linear SARSA, moderated updates"),
    ("thesis-lfa", "gym_crawl.agents.linear.lfa:ThesisLFAAgent",
     "Pertejo 2021 LFA: thesis features/reward, gamma 0.3, randomized priority queue"),
    ("td-lambda", "gym_crawl.agents.td_lambda:TDLambdaAgent", "Grigoriadis TD(lambda) V(s) network with look-ahead"),
    ("tres", "gym_crawl.agents.dqn.tres:TresAgent", "TRES: DDQN over Tree-Frontier representatives"),
    ("tres-async", "gym_crawl.agents.dqn.tres:TresAsyncAgent", "TRES DDQN scoring the last page's out-links"),
    ("tree-random", "gym_crawl.agents.tree_random:TreeRandomAgent", "TRES baseline: a random Tree-Frontier leaf"),
    ("sb3", "gym_crawl.agents.sb3.agent:SB3Agent", "a trained Stable-Baselines3 policy (sb3:<path>)"),
    ("online-classifier", "gym_crawl.agents.hashed.online_classifier:OnlineClassifierAgent",
     "ACHE-style online link classifier over hashed link features (non-RL)"),
    ("seedfinder", "gym_crawl.agents.hashed.seedfinder:SeedFinderAgent",
     "SeedFinder-like: seeds expanded by search-engine queries, then the ACHE-like crawl"),
    ("hashed-q", "gym_crawl.agents.hashed.hashed_q:HashedQAgent",
     "deep-deep linear Q-learning over hashed link features"),
    ("best-first-mix", "gym_crawl.agents.hashed.mixture:BestFirstMixAgent",
     "best-first's or the online classifier's top page, chosen by a Thompson bandit over this crawl's harvest"),
    ("thesis-dqn", "gym_crawl.agents.dqn.thesis:ThesisDQNAgent",
     "Pertejo 2021 DQN crawler: one Q output per corpus page (the thesis' negative result)"),
]:
    AGENTS.register(_name, _target, _doc)


ENTRY_POINT_GROUP = "gym_crawl.agents"
"""Entry-point group of plug-in agents: an installed package that declares
``[project.entry-points."gym_crawl.agents"] my-agent = "my_pkg.agents:MyAgent"`` makes ``my-agent`` an agent name
(``make_agent``, ``gym-crawl crawl --agent my-agent``)."""

_PLUGINS_LOADED = False


def _load_plugins() -> None:
    """Register the installed packages' :data:`ENTRY_POINT_GROUP` agents (lazily: imported when asked for), once;
    a built-in or explicitly registered name is never replaced."""
    global _PLUGINS_LOADED
    if _PLUGINS_LOADED:
        return
    _PLUGINS_LOADED = True
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in AGENTS and ep.value.count(":") == 1:
            dist = getattr(getattr(ep, "dist", None), "name", None)
            AGENTS.register(ep.name, ep.value, f"plug-in agent {ep.value}" + (f" (package {dist})" if dist else ""))


def _resolve(name: str) -> str:
    """``name`` made known to :data:`AGENTS`: plug-ins are registered, and an unregistered ``"module:Class"``
    (``gym-crawl crawl --agent my_pkg.agents:MyAgent``) is registered under that spec, imported on use."""
    _load_plugins()
    if isinstance(name, str) and name not in AGENTS and name.count(":") == 1 and model_spec(name) is None:
        mod, attr = name.split(":")
        if mod and attr:
            AGENTS.register(name, name, f"agent class {name}")
    return name


def register_agent(name: str, factory: str | Callable[..., Agent], description: str = "") -> None:
    """Register an agent under ``name``: a class/factory, or a lazy ``"module:attribute"`` string."""
    AGENTS.register(name, factory, description)


def agent_class(name: str) -> Callable[..., Agent]:
    """The class (factory) registered as ``name`` — a registered name, an installed plug-in's entry point, or
    ``"module:Class"``; clear errors for unknown or unavailable agents."""
    factory = AGENTS.get(_resolve(name))
    if ":" in name and not (isinstance(factory, type) and issubclass(factory, Agent)):
        AGENTS.unregister(name)
        raise ValueError(f"agent {name!r} is {factory!r}, not a subclass of gym_crawl.agents.Agent")
    return factory


def config_keys(factory: Any) -> set[str] | None:
    """The keyword options an Agent class takes: the named parameters of the ``__init__`` methods between it and
    :class:`Agent` (none when it defines no ``__init__``). ``None`` — nothing to check here — for a factory that is
    not an Agent class, or a class that checks its options itself (``checks_own_config``)."""
    import inspect

    if not (isinstance(factory, type) and issubclass(factory, Agent)) or factory.checks_own_config:
        return None
    keys: set[str] = set()
    for k in factory.__mro__:
        if k is Agent:
            break
        init = k.__dict__.get("__init__")
        if init is None:
            continue
        keys |= {p.name for p in list(inspect.signature(init).parameters.values())[1:]
                 if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return keys


#: ``"<kind>:<path>"`` agent specs: a trained model read from a file or a training run's output folder.
MODEL_LOADERS: dict[str, str] = {"sb3": "gym_crawl.agents.sb3.agent:load_sb3_agent",
                                 "rllib": "gym_crawl.agents.rllib.agent:load_rllib_agent"}


def model_spec(name: str) -> tuple[str, str] | None:
    """``(kind, path)`` of a trained-model spec (``"sb3:runs/train/seed0"``, ``"rllib:runs/rl"``), else ``None``."""
    kind, sep, path = name.partition(":") if isinstance(name, str) else ("", "", "")
    return (kind, path) if sep and kind in MODEL_LOADERS else None


def make_agent(name: str, **config: Any) -> Agent:
    """Instantiate the agent registered as ``name`` with keyword ``config``; an option the agent does not take
    raises ``ValueError`` naming it, the close matches and every option (it would otherwise be ignored).

    ``name`` may also be a trained model, ``"sb3:<path>"`` (a ``gym-crawl train`` output folder, its ``agent.npz``
    or a stock SB3 ``model.zip``) or ``"rllib:<path>"``: the model is loaded with the env it was trained on
    (its ``env_config``); such a spec takes no ``config``."""
    spec = model_spec(name)
    if spec is not None:
        if config:
            raise ValueError(f"agent {name!r}: a trained model takes no options, got {sorted(config)}")
        mod, attr = MODEL_LOADERS[spec[0]].split(":")
        import importlib

        try:
            loader = getattr(importlib.import_module(mod), attr)
        except ImportError as e:
            raise ValueError(f"agent {name!r} needs {e.name or e}, which is not installed here: install the optional "
                             f"extra, {install_command(spec[0])}") from None
        return loader(spec[1])
    keys = config_keys(agent_class(name))
    unknown = sorted(set(config) - keys) if keys is not None else []
    if unknown:
        import difflib

        hints = {u: difflib.get_close_matches(u, sorted(keys), n=1) for u in unknown}
        close = "; ".join(f"{u!r}: did you mean {h[0]!r}?" for u, h in hints.items() if h)
        raise ValueError(f"agent {name!r}: unknown option(s) {unknown}" + (f" ({close})" if close else "")
                         + f"; its options: {sorted(keys) or 'none'}")
    return AGENTS.build(name, **config)


def agent_names() -> list[str]:
    """Registered agent names, installed plug-ins included (some may need optional dependencies)."""
    _load_plugins()
    return AGENTS.names()
