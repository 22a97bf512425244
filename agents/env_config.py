"""The env a saved model was trained on, read back so that the model runs on that env again.

A trained policy only makes sense on the env it was trained on: its feature set (the meaning of every input
column), often its number of candidate slots K, and the env id whose defaults it saw. :func:`read_env_config`
reads that from what a training run wrote (``gym-crawl train``'s ``config.json``, or the env keywords in a saved
agent's header), validates it, and returns an :class:`EnvConfig`. An agent that carries one (its ``env_config``
attribute) needs no flags: :func:`gym_crawl.agents.make_env_for` builds its env with those keywords and that env
id, and refuses a keyword that contradicts a *fixed* one (naming both values) instead of running a policy on
inputs it never saw::

    cfg = read_env_config("runs/train/seed0/config.json", keys=TRAINED_ENV_KEYS, fixed=("features",))
    cfg.merged({"features": None, "max_candidates": 64})   # {"features": "transferable+site", ...}
    cfg.merged({"features": "combined"})                   # ValueError naming both feature sets
"""
from __future__ import annotations

import inspect
import json
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CONFIG_FILE", "TRAINED_ENV_KEYS", "EnvConfig", "read_env_config"]

CONFIG_FILE = "config.json"
"""The file a training run writes its configuration to (in its output folder)."""

TRAINED_ENV_KEYS = ("features", "max_candidates", "reducer")
"""The env keywords a trained policy carries from its run's ``config.json``: what shapes and means its inputs.
The corpus, topics, reward and budget are the crawl's choice, not the model's."""

_CLI_FLAGS = {"features": "--features", "max_candidates": "--k", "reducer": "--reducer", "reward": "--reward",
              "domain_cap": "--domain-cap"}
_NOT_CARRIED = ("corpus", "topic", "seeds", "max_episode_steps", "action", "observation", "render_mode", "world")


def _env_keywords() -> frozenset[str]:
    from gym_crawl.envs.wiki_crawl import WikiCrawlEnv

    params = inspect.signature(WikiCrawlEnv.__init__).parameters
    return frozenset(k for k in params if k != "self") - set(_NOT_CARRIED)


@dataclass(frozen=True)
class EnvConfig:
    """The env a model was trained on.

    :param source: where it was read (a file path, or a description), named in every error.
    :param env_id: the registered WikiCrawl id it was trained on (``None``: not recorded; the caller's default).
    :param kwargs: the env keywords it was trained with (``features``, ``max_candidates``, ``reducer``, ...).
    :param fixed: the keywords a caller may not change: the model's inputs would mean something else.
    """

    source: str
    env_id: str | None = None
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    fixed: frozenset[str] = frozenset()

    def merged(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """:attr:`kwargs` updated with the caller's ``given`` keywords (``None`` values are ignored, as unset CLI
        flags are); ``ValueError`` naming both values when ``given`` contradicts a :attr:`fixed` keyword."""
        out = dict(self.kwargs)
        for k, v in given.items():
            if v is None:
                continue
            if k in self.fixed and k in self.kwargs and v != self.kwargs[k]:
                flag = _CLI_FLAGS.get(k, k)
                raise ValueError(f"{self.source}: the model was trained with {k}={self.kwargs[k]!r}, but "
                                 f"{k}={v!r} was given (CLI: {flag} {v}); its inputs would not mean what they meant "
                                 f"in training: leave {flag} out (the saved value is used) or give "
                                 f"{flag} {self.kwargs[k]}")
            out[k] = v
        return out


def _load_json(path: Path) -> dict[str, Any]:
    if path.is_dir():
        path = path / CONFIG_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no saved env config (a training run writes {CONFIG_FILE} into its "
                                f"output folder)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not a readable JSON env config ({e})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def _check(source: str, key: str, value: Any) -> Any:
    if key == "max_candidates":
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < 1:
            raise ValueError(f"{source}: max_candidates must be an integer >= 1, got {value!r}")
        return int(value)
    if key in ("features", "reducer", "reward") and value is not None and not isinstance(value, str):
        raise ValueError(f"{source}: {key} must be a registered name (a string), got {value!r}")
    return value


def read_env_config(source: str | Path | Mapping[str, Any], *, keys: Iterable[str] | None = None,
                    fixed: Iterable[str] = ("features",), name: str | None = None) -> EnvConfig:
    """Read and validate the env config a model was saved with.

    :param source: a JSON file (a training run's ``config.json``), a folder holding ``config.json``, or a mapping
        already read (e.g. the env keywords of a saved agent's header).
    :param keys: the env keywords to take from it (``None``: every ``WikiCrawlEnv`` keyword it holds except the
        crawl's own — corpus, topic, seeds, budget, action and observation modes); other entries (a training
        run's timesteps, seed, ...) are ignored. An ``env_id`` entry is always read.
    :param fixed: keywords a caller may not contradict (:meth:`EnvConfig.merged`).
    :param name: how errors name a mapping ``source`` (default: ``"the saved env config"``).
    :returns: the :class:`EnvConfig`; ``ValueError`` naming the file and key for a value of the wrong type, an
        unregistered ``env_id`` or a keyword ``WikiCrawlEnv`` does not take; ``FileNotFoundError`` for a missing
        file.
    """
    if isinstance(source, Mapping):
        where, data = name or "the saved env config", dict(source)
    else:
        path = Path(source)
        where = name or str(path / CONFIG_FILE if path.is_dir() else path)
        data = _load_json(path)
    known = _env_keywords()
    if keys is None:
        wanted = [k for k in data if k != "env_id" and k not in _NOT_CARRIED]
        unknown = sorted(k for k in wanted if k not in known)
        if unknown:
            raise ValueError(f"{where}: {unknown} are not WikiCrawl env keywords; known: {sorted(known)}")
    else:
        wanted = list(keys)
        unknown = sorted(k for k in wanted if k not in known)
        if unknown:
            raise ValueError(f"keys {unknown} are not WikiCrawl env keywords a model carries; known: {sorted(known)}")
    kwargs = {k: _check(where, k, data[k]) for k in wanted if data.get(k) is not None}
    env_id = data.get("env_id")
    if env_id is not None:
        from gym_crawl.wrappers.factory import env_ids

        if env_id not in env_ids():
            raise ValueError(f"{where}: env_id {env_id!r} is not a registered WikiCrawl env here; registered: "
                             f"{env_ids()} (a newer gym_crawl may have trained it: upgrade)")
    return EnvConfig(source=where, env_id=env_id, kwargs=kwargs, fixed=frozenset(fixed))
