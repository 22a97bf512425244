"""The configuration a saved model carries: the env it was trained on, read back so that it runs on that env again.

A trained policy only makes sense on the env it was trained on: its feature set (the meaning of every input
column), the text model whose word vectors fill the content columns (their meaning *and* their number), the
category slots, often its number of candidate slots K, and the env id whose defaults it saw. Every saved model
records that as its **model configuration** (JSON):

* an agent file written by :meth:`gym_crawl.agents.Agent.save` (``--save``: ``best-first-mix``, ``hashed-q``,
  ``online-classifier``, the LFA agents …) or a PyTorch agent checkpoint holds it in its header (``"env"``),
  taken from the env it last ran on (:attr:`gym_crawl.envs.view.CrawlView.model_config`);
* ``gym-crawl train`` writes it into the SB3 ``agent.npz`` (its ``env_kwargs``) beside the run's ``config.json``.

:func:`load_model_config` reads it from any of those; :func:`read_env_config` reads and validates a mapping or a
``config.json``. An agent that carries one (its ``env_config`` attribute) needs no flags:
:func:`gym_crawl.agents.make_env_for` builds its env with those keywords, that env id and that kind of text model,
and refuses a keyword that contradicts a *fixed* one (the feature set, the category slots, the text model; K when
the weights' shape depends on it) with one message naming both configurations, instead of running a policy on
inputs it never saw. K and the reducer are otherwise the saved defaults, which a caller may change (they choose
which candidates are offered, not what a feature column means)::

    cfg = load_model_config("runs/mix.npz")
    cfg.describe()     # "features 'hashed-site' (16731 columns), 4 category slots, text model: corpus ..."
    cfg.merged({"features": None, "max_candidates": 64})   # {"features": "hashed-site", "text": {...}, ...}
    cfg.merged({"features": "combined"})                   # ValueError naming both configurations

**Text models** (:func:`gym_crawl.text.model.describe_text_model`): ``general`` (the general English model),
``corpus`` (a corpus' own model; on a live web, that corpus as the reference) or ``hashed`` (every word hashed).
Offline, a model runs on the crawled corpus' text model of the same kind and dimension (``text={"general": ...,
"dim": ...}``); live, :meth:`EnvConfig.live_text` opens the recorded reference corpus, so a model trained on
``synthetic-2000`` crawls a live site with ``synthetic-2000``'s word vectors as it did in training.
"""
from __future__ import annotations

import inspect
import json
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CONFIG_FILE", "MODEL_ENV_KEYS", "MODEL_FIXED_KEYS", "TEXT_KINDS", "TRAINED_ENV_KEYS", "EnvConfig",
           "describe_config", "load_model_config", "read_env_config"]

CONFIG_FILE = "config.json"
"""The file a training run writes its configuration to (in its output folder)."""

TRAINED_ENV_KEYS = ("features", "max_candidates", "reducer")
"""The env keywords a trained policy carries from its run's ``config.json``: what shapes and means its inputs.
The corpus, topics, reward and budget are the crawl's choice, not the model's."""

MODEL_ENV_KEYS = ("features", "n_categories", "max_candidates", "reducer")
"""The env keywords a saved model's configuration carries (besides its env id and text model)."""

MODEL_FIXED_KEYS = ("features", "n_categories", "text")
"""What no caller may change under a saved model: the meaning and number of its input columns."""

TEXT_KINDS = ("general", "corpus", "hashed")
"""Kinds of text model a configuration records (:func:`gym_crawl.text.model.describe_text_model`)."""

_CLI_FLAGS = {"features": "--features", "max_candidates": "--k", "reducer": "--reducer", "reward": "--reward",
              "domain_cap": "--domain-cap", "text": "--text", "n_categories": "n_categories="}
_NOT_CARRIED = ("corpus", "topic", "seeds", "max_episode_steps", "action", "observation", "render_mode", "world")
#: entries of a saved configuration that are not env keywords
_META_KEYS = ("env_id", "text_model", "feature_dim")


def _env_keywords() -> frozenset[str]:
    from gym_crawl.envs.wiki_crawl import WikiCrawlEnv

    params = inspect.signature(WikiCrawlEnv.__init__).parameters
    return frozenset(k for k in params if k != "self") - set(_NOT_CARRIED)


def _text_words(t: Mapping[str, Any] | None) -> str:
    if not t:
        return "not recorded"
    kind, dim = t.get("kind"), t.get("dim")
    if kind == "corpus":
        return f"corpus {t.get('corpus')!r} ({dim}-dim)"
    if kind == "general":
        return f"the general English model ({dim}-dim)"
    return f"hashed words ({dim}-dim)"


def describe_config(env_id: str | None, kwargs: Mapping[str, Any], text_model: Mapping[str, Any] | None = None,
                    feature_dim: int | None = None) -> str:
    """One line naming a configuration: env id, feature set (and its width), category slots, text model, K,
    reducer — the parts that are known."""
    parts = []
    if "features" in kwargs:
        parts.append(f"features {kwargs['features']!r}" + (f" ({feature_dim} columns)" if feature_dim else ""))
    if "n_categories" in kwargs:
        parts.append(f"{kwargs['n_categories']} category slots")
    if text_model is not None:
        parts.append(f"text model: {_text_words(text_model)}")
    if "max_candidates" in kwargs:
        parts.append(f"K {kwargs['max_candidates']}")
    if "reducer" in kwargs:
        parts.append(f"reducer {kwargs['reducer']!r}")
    if env_id:
        parts.append(f"env {env_id}")
    return ", ".join(parts) or "nothing recorded"


def _text_of(given: Any) -> dict[str, Any] | None:
    """The text-model description of a ``text=`` env keyword that is a built model, else ``None``."""
    from gym_crawl.text.model import TextModel, describe_text_model

    return describe_text_model(given) if isinstance(given, TextModel) else None


@dataclass(frozen=True)
class EnvConfig:
    """The env a model was trained on.

    :param source: where it was read (a file path, or a description), named in every error.
    :param env_id: the registered WikiCrawl id it was trained on (``None``: not recorded; the caller's default).
    :param kwargs: the env keywords it was trained with (``features``, ``max_candidates``, ``reducer``,
        ``n_categories`` ...).
    :param fixed: the keywords a caller may not change: the model's inputs would mean something else
        (``"text"`` stands for the text model).
    :param text_model: the text model its word-vector columns came from (``None``: not recorded, older files).
    :param feature_dim: the width of its feature rows (``None``: not recorded).
    """

    source: str
    env_id: str | None = None
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    fixed: frozenset[str] = frozenset()
    text_model: Mapping[str, Any] | None = None
    feature_dim: int | None = None

    def describe(self) -> str:
        """One line naming this configuration (:func:`describe_config`)."""
        return describe_config(self.env_id, self.kwargs, self.text_model, self.feature_dim)

    def to_json(self) -> dict[str, Any]:
        """The configuration as saved (JSON values): ``env_id``, the env keywords, ``text_model``, ``feature_dim``."""
        out: dict[str, Any] = {"env_id": self.env_id, **dict(self.kwargs)}
        if self.text_model is not None:
            out["text_model"] = dict(self.text_model)
        if self.feature_dim is not None:
            out["feature_dim"] = int(self.feature_dim)
        return out

    def _refuse(self, key: str, saved: Any, given: Any, asked: Mapping[str, Any],
                asked_text: Mapping[str, Any] | None) -> ValueError:
        flag = _CLI_FLAGS.get(key, key)
        mine = {**self.kwargs, **{k: v for k, v in asked.items() if k in MODEL_ENV_KEYS}}
        asked_line = describe_config(self.env_id, mine, asked_text if asked_text is not None else self.text_model)
        if key == "text":
            what = (f"text={json.dumps(dict(given), default=str)}" if isinstance(given, Mapping) else
                    f"the text model {given} (CLI: --text)")
            head = f"the model was trained with the text model {saved}, but {what} was given"
            hint = "Leave --text and the text options out (the saved text model is used)"
        else:
            head = (f"the model was trained with {key}={saved!r}, but {key}={given!r} was given (CLI: {flag} "
                    f"{given})")
            hint = f"Leave {flag} out (the saved value is used) or give {flag} {saved}"
        return ValueError(f"{self.source}: {head}; its inputs would not mean what they meant in training. "
                          f"Trained: {self.describe()}; asked: {asked_line}. {hint}")

    def text_kwargs(self) -> dict[str, Any] | None:
        """The env's ``text=`` options that build the recorded kind of text model on a crawled corpus: the general
        model (``{"general": True}``), or the corpus' own / a live web's model of the recorded dimension
        (``{"general": False, "dim": k}``); ``None`` when no text model is recorded."""
        t = self.text_model
        if not t:
            return None
        if t.get("kind") == "general":
            return {"general": True}
        return {"general": False, "dim": int(t["dim"])}

    def merged(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """:attr:`kwargs` updated with the caller's ``given`` keywords (``None`` values are ignored, as unset CLI
        flags are), with ``text`` options for the recorded text model unless ``given`` has its own;
        ``ValueError`` naming both configurations when ``given`` contradicts a :attr:`fixed` keyword."""
        out = dict(self.kwargs)
        asked_text = None
        if given.get("text") is not None and self.text_model is not None and "text" in self.fixed:
            asked_text = self._check_text(given["text"], given)
        for k, v in given.items():
            if v is None:
                continue
            if k in self.fixed and k in self.kwargs and v != self.kwargs[k]:
                raise self._refuse(k, self.kwargs[k], v, given, asked_text)
            out[k] = v
        own = self.text_kwargs()
        if own is not None:
            g = given.get("text")
            if g is None:
                out["text"] = own
            elif isinstance(g, Mapping):
                out["text"] = {**own, **dict(g)}
        return out

    def _check_text(self, g: Any, given: Mapping[str, Any]) -> dict[str, Any] | None:
        """Refuse ``text=`` options or a text model that build another kind or dimension than recorded."""
        t = dict(self.text_model or {})
        kind, dim = t.get("kind"), int(t.get("dim", 0))
        asked: dict[str, Any] | None = _text_of(g)
        if asked is not None:
            if asked["kind"] != kind or int(asked["dim"]) != dim:
                raise self._refuse("text", _text_words(t), _text_words(asked), given, asked)
            return asked
        if isinstance(g, Mapping):
            general = g.get("general")
            if general is True and kind != "general":
                asked = {"kind": "general", "dim": "2k"}
            elif general is False and kind == "general":
                asked = {"kind": "corpus", "corpus": "the crawled corpus'", "dim": g.get("dim", 64)}
            elif "dim" in g and kind != "general" and int(g["dim"]) != dim:
                asked = {"kind": kind, "corpus": t.get("corpus"), "dim": int(g["dim"])}
            if asked is not None:
                raise self._refuse("text", _text_words(t), dict(g), given, asked)
        return None

    def live_text(self, given: Any = None) -> Any:
        """The reference text model or corpus a *live* crawl of this model uses (the ``text`` of
        :func:`gym_crawl.agents.live_crawl.crawl_live`): ``given`` when it is the recorded one (or nothing is
        recorded), else the recorded reference corpus, opened with :func:`gym_crawl.corpus.load_corpus`;
        ``None`` for a model trained under the general model or hashed words. A ``given`` corpus or model other
        than the recorded one is refused naming both; a recorded corpus not on this machine is one error saying
        to pass it (``--text PATH``)."""
        t = self.text_model
        if not t:
            return given
        from gym_crawl.corpus import Corpus, load_corpus
        from gym_crawl.text.model import TextModel, corpus_spec

        if given is not None:
            corpus = given.corpus if isinstance(given, TextModel) else given
            spec = corpus_spec(corpus) if isinstance(corpus, Corpus) else str(corpus)
            if t.get("kind") != "corpus" or spec != t.get("corpus"):
                asked = {"kind": "corpus", "corpus": spec, "dim": getattr(given, "dim", t.get("dim"))}
                raise self._refuse("text", _text_words(t), spec, {}, asked)
            return given
        if t.get("kind") != "corpus":
            return None
        try:
            return load_corpus(str(t["corpus"]))
        except (OSError, ValueError, KeyError) as e:
            raise ValueError(f"{self.source}: the model's text model is corpus {t['corpus']!r}, which does not open "
                             f"here ({e}); pass that corpus with --text PATH (text= in Python)") from None

    def check_env(self, view: Any) -> None:
        """Refuse a built env whose text model or feature width differs from the recorded ones (naming both
        configurations): the last guard before a policy would read columns that mean something else."""
        have = view.model_config
        t = self.text_model
        bad = None
        if t and "text" in self.fixed:
            ht = have["text_model"]
            if ht.get("kind") != t.get("kind") or int(ht.get("dim", -1)) != int(t.get("dim", -2)):
                bad = "text model"
        same_set = have["features"] == self.kwargs.get("features")
        if bad is None and self.feature_dim is not None and same_set and int(have["feature_dim"]) != self.feature_dim:
            bad = "feature width"
        if bad is not None:
            asked = describe_config(have["env_id"], {k: have[k] for k in MODEL_ENV_KEYS}, have["text_model"],
                                    have["feature_dim"])
            raise ValueError(f"{self.source}: this env's {bad} differs from the one the model was trained on. "
                             f"Trained: {self.describe()}; this env: {asked}. Build the env with the saved "
                             f"configuration (leave --features, --text and the text options out)")


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
    if key in ("max_candidates", "n_categories"):
        low = 1 if key == "max_candidates" else 0
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < low:
            raise ValueError(f"{source}: {key} must be an integer >= {low}, got {value!r}")
        return int(value)
    if key in ("features", "reducer", "reward") and value is not None and not isinstance(value, str):
        raise ValueError(f"{source}: {key} must be a registered name (a string), got {value!r}")
    return value


def _check_text_model(source: str, t: Any) -> dict[str, Any] | None:
    if t is None:
        return None
    if not isinstance(t, Mapping) or t.get("kind") not in TEXT_KINDS:
        raise ValueError(f"{source}: text_model must be an object with a kind in {list(TEXT_KINDS)}, got {t!r}")
    dim = t.get("dim")
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or int(dim) < 1:
        raise ValueError(f"{source}: text_model dim must be an integer >= 1, got {dim!r}")
    if t.get("kind") == "corpus" and not isinstance(t.get("corpus"), str):
        raise ValueError(f"{source}: a corpus text_model names its corpus (a string), got {t.get('corpus')!r}")
    return dict(t)


def read_env_config(source: str | Path | Mapping[str, Any], *, keys: Iterable[str] | None = None,
                    fixed: Iterable[str] = ("features",), name: str | None = None) -> EnvConfig:
    """Read and validate the env config a model was saved with.

    :param source: a JSON file (a training run's ``config.json``), a folder holding ``config.json``, or a mapping
        already read (e.g. the model configuration of a saved agent's header).
    :param keys: the env keywords to take from it (``None``: every ``WikiCrawlEnv`` keyword it holds except the
        crawl's own — corpus, topic, seeds, budget, action and observation modes); other entries (a training
        run's timesteps, seed, ...) are ignored. ``env_id``, ``text_model`` and ``feature_dim`` entries are always
        read.
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
        wanted = [k for k in data if k not in _META_KEYS and k not in _NOT_CARRIED]
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
    fd = data.get("feature_dim")
    if fd is not None and (isinstance(fd, bool) or not isinstance(fd, numbers.Integral) or int(fd) < 1):
        raise ValueError(f"{where}: feature_dim must be an integer >= 1, got {fd!r}")
    return EnvConfig(source=where, env_id=env_id, kwargs=kwargs, fixed=frozenset(fixed),
                     text_model=_check_text_model(where, data.get("text_model")),
                     feature_dim=None if fd is None else int(fd))


def model_config_of(view: Any, source: str = "the trained env") -> dict[str, Any]:
    """The configuration to save for a model that ran on ``view`` (a :class:`~gym_crawl.envs.view.CrawlView`):
    its :attr:`~gym_crawl.envs.view.CrawlView.model_config` without the reward (the crawl's choice)."""
    cfg = dict(view.model_config)
    cfg.pop("reward", None)
    return cfg


def load_model_config(path: str | Path) -> EnvConfig:
    """The model configuration saved with ``path``: an agent ``.npz`` (its header's ``env``; an SB3 agent's
    ``env_kwargs``), a PyTorch agent checkpoint (its ``env`` field), a training run's output folder or its
    ``config.json``. ``ValueError`` naming the file when it holds none (a model saved before models carried their
    configuration: give the flags it was trained with)."""
    import zipfile

    import numpy as np

    p = Path(path)
    if p.is_dir() and (p / "agent.npz").is_file():
        p = p / "agent.npz"
    if p.is_dir() or p.suffix == ".json":
        return read_env_config(p)
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no saved model")
    data: Any = None
    if zipfile.is_zipfile(p):
        with zipfile.ZipFile(p) as zf:
            names = zf.namelist()
        if "__header__.npy" in names:
            with np.load(p, allow_pickle=False) as z:
                header = json.loads(bytes(z["__header__"]).decode())
            data = header.get("env")
            if data is None and header.get("agent") == "sb3":
                data = (header.get("config") or {}).get("env_kwargs") or None
        elif any(n.endswith("data.pkl") for n in names):
            import torch

            ckpt = torch.load(p, map_location="cpu", weights_only=True)
            raw = ckpt.get("env") if isinstance(ckpt, dict) else None
            data = json.loads(raw) if isinstance(raw, str) else raw
    if not data:
        raise ValueError(f"{p}: the file records no model configuration (saved before models carried theirs): "
                         f"give the flags it was trained with (--features, --k, --reducer, --text)")
    return read_env_config(data, keys=[k for k in MODEL_ENV_KEYS if k in data], fixed=MODEL_FIXED_KEYS, name=str(p))
