"""What a live crawl is: :class:`LiveCrawlSettings`, one frozen, typed, validated object.

A live crawl (``gym-crawl crawl --live``, :func:`gym_crawl.agents.live_crawl.crawl_live`, the live
benchmarks) is described by one :class:`LiveCrawlSettings`, built the same way everywhere — the way Scrapy
holds a crawl's settings in one place, but typed and checked when it is made: a wrong value is one line
naming the field and its valid range (``ValueError``), before any request.

It holds *what the crawl does* — seeds, topic, budget, seed, scope, pages in flight, the fetch policy, the
offer rules, the env's keywords — so the same settings make the same decisions under the same arrivals. It is
recorded in the WARC's warcinfo record (field :data:`SETTINGS_FIELD`, JSON, :meth:`LiveCrawlSettings.to_dict`)
and a resumed crawl must have the same settings, field for field, except those listed in
:data:`MAY_CHANGE_ON_RESUME` (the budget, the politeness timing): :meth:`LiveCrawlSettings.differences` names
the fields that differ. :func:`read_settings` gives back the settings a WARC was crawled with.

What runs the crawl is not a setting: the agent, the reference text model, a fetch function, where the WARC goes
(and whether it is resumed or replaced), the progress stream — arguments of ``crawl_live``.

**Adding a setting** is one line in the class body below (after the last field, with a default, so that
settings recorded before it still load) plus its ``:param:`` line; a numeric field also gets its bounds in
:data:`_BOUNDS` (one line), and a field a resumed crawl may change goes into :data:`MAY_CHANGE_ON_RESUME`.
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from gym_crawl._io import dataclass_kwargs
from gym_crawl.web.offer import OfferRules
from gym_crawl.web.policy import FetchPolicy

__all__ = ["ENV_KEYWORDS_OWNED", "FIELD_BOUNDS", "MAY_CHANGE_ON_RESUME", "SCOPES", "SETTINGS_FIELD", "SETTINGS_TYPE",
           "LiveCrawlSettings", "canonical_seeds", "read_settings", "recorded_settings"]

#: the warcinfo field holding a crawl's settings (JSON of :meth:`LiveCrawlSettings.to_dict`)
SETTINGS_FIELD = "gym-crawl-settings"
#: the ``type`` entry of that JSON
SETTINGS_TYPE = "gym_crawl.live_crawl_settings"
#: the scopes a live web knows (see :class:`~gym_crawl.web.live.LiveWeb`)
SCOPES = ("hosts", "domain", "any")
#: settings (``policy.<field>`` for a policy field) a resumed crawl may change: the budget, and politeness
#: timing and identity, which change when requests go out but not which pages arrive in which order
MAY_CHANGE_ON_RESUME = frozenset({
    "max_pages", "policy.delay", "policy.rate", "policy.max_crawl_delay", "policy.connect_timeout",
    "policy.read_timeout", "policy.max_time", "policy.backoff", "policy.max_retry_after", "policy.max_retries",
    "policy.contact", "policy.user_agent"})
#: env keywords the crawl itself sets (from other settings): not allowed in ``env``
ENV_KEYWORDS_OWNED = frozenset({"corpus", "topic", "max_episode_steps", "concurrency", "per_host", "focus_slack"})
#: the default ``focus_slack``: the env's (``gym_crawl.crawl.window.DEFAULT_FOCUS_SLACK``; a test checks they agree)
DEFAULT_FOCUS_SLACK = 0.0
#: the valid range of each numeric field, inclusive (``None``: no bound on that side)
_BOUNDS: dict[str, tuple[int, int | None]] = {
    "max_pages": (1, 10_000_000),
    "seed": (0, 2**63 - 1),
    "concurrency": (1, 1024),
    "per_host": (1, 1024),
    "capacity": (1, 100_000_000),
    "max_candidates": (1, 1_000_000),
    "domain_cap": (1, 10_000_000),
}

#: the valid range of each numeric field (read-only; the command line's options take their ranges from it)
FIELD_BOUNDS = MappingProxyType(_BOUNDS)


@dataclass(frozen=True)
class LiveCrawlSettings:
    """The settings of one live crawl (see the module docstring). Every field but ``seeds``, ``topic`` and
    ``max_pages`` has a default; the object is immutable (:meth:`replace` gives a changed copy).

    :param seeds: seed URLs (absolute http(s); canonicalised, duplicates dropped; at least one).
    :param topic: what the crawl looks for (words, or a topic name of the reference text model).
    :param max_pages: the step budget: one page dispatched per step (1 … 10^7).
    :param seed: the agent's and env's seed (0 … 2^63 − 1); default 0.
    :param scope: which discovered URLs enter the web: ``"hosts"`` (the seeds' hosts, default), ``"domain"``
        (their registrable domains), ``"any"``.
    :param concurrency: pages in flight at most (Scrapy's ``CONCURRENT_REQUESTS``; 1 … 1024); default 1.
    :param per_host: pages in flight per host (1 … 1024; each host is still fetched one request at a time,
        with its delay); default 1.
    :param policy: the polite fetcher's :class:`~gym_crawl.web.policy.FetchPolicy` (delay, global rate,
        contact, robots.txt, timeouts, caps); default ``FetchPolicy()``.
    :param offer: which discovered URLs are offered (:class:`~gym_crawl.web.offer.OfferRules`); default all on.
    :param capacity: the web's page capacity (``None``: ``max(10_000, 50 × max_pages)``; else at least the
        number of seeds, at most 10^8); :attr:`page_capacity` is the value used.
    :param features: the env's feature set (``None``: the agent's own).
    :param reducer: the env's candidate reducer (``None``: the agent's own).
    :param max_candidates: K, the candidates a reducer keeps (1 … 10^6; ``None``: the agent's own).
    :param reward: the reward scheme's registered name (``None``: the env's default; a reward *object* goes in
        ``env``).
    :param domain_cap: most pages fetched per domain (1 … 10^7; ``None``: no cap).
    :param general_text: with no reference text model: ``None`` — the general English model when its dataset
        is present, else hashed word vectors (after one warning); ``True`` — require it; ``False`` — hashed
        word vectors only.
    :param env: further ``WikiCrawlEnv`` keywords (read-only mapping; not ``corpus``, ``topic``,
        ``max_episode_steps``, ``concurrency``, ``per_host`` or ``focus_slack``, which fields give, nor a keyword a
        field above names). A value that is not JSON is recorded by its type name.
    :param focus_slack: the knob between focus and throughput with pages in flight (the env's ``focus_slack``): a
        free slot takes a page only when its link score is at least ``best − focus_slack × (best − mean)`` of
        every page the crawl could fetch, busy hosts' included, else it waits (a finite number >= 0; default 0:
        only a page as good as the best known);
        ``None`` fills every free slot (most pages per second, least focus). No effect with one page in flight.
    :param examples: example pages of what the crawl looks for — files, folders, WARC archives or http(s) URLs
        (:mod:`gym_crawl.web.example_pages`); given, the crawl's judge (its reward and its relevant count) is a
        page classifier built from them and the topic words (:mod:`gym_crawl.relevance.judge`); URLs are fetched
        politely first and counted in the budget. Default ``()``: the topic words alone judge.
    :param counter_examples: pages of what it does not look for, the same kinds (only with ``examples``).
    """

    seeds: tuple[str, ...]
    topic: str
    max_pages: int
    seed: int = 0
    scope: str = "hosts"
    concurrency: int = 1
    per_host: int = 1
    policy: FetchPolicy = field(default_factory=FetchPolicy)
    offer: OfferRules = field(default_factory=OfferRules)
    capacity: int | None = None
    features: str | None = None
    reducer: str | None = None
    max_candidates: int | None = None
    reward: str | None = None
    domain_cap: int | None = None
    general_text: bool | None = None
    env: Mapping[str, Any] = field(default_factory=dict)
    focus_slack: float | None = DEFAULT_FOCUS_SLACK
    examples: tuple[str, ...] = ()
    counter_examples: tuple[str, ...] = ()
    # new settings go here: one line each, with a default (see the module docstring)

    def __post_init__(self) -> None:
        object.__setattr__(self, "seeds", canonical_seeds(self.seeds))
        if not isinstance(self.topic, str) or not self.topic.strip():
            raise ValueError(f"LiveCrawlSettings.topic must be non-empty words, got {self.topic!r}")
        for name, (lo, hi) in _BOUNDS.items():
            v = getattr(self, name)
            if v is None and name in _OPTIONAL:
                continue
            if isinstance(v, bool) or not isinstance(v, int) or v < lo or (hi is not None and v > hi):
                rng = f"an integer from {lo} to {hi}" if hi is not None else f"an integer >= {lo}"
                opt = " or None" if name in _OPTIONAL else ""
                raise ValueError(f"LiveCrawlSettings.{name} must be {rng}{opt}, got {v!r}")
        if self.capacity is not None and self.capacity < len(self.seeds):
            raise ValueError(f"LiveCrawlSettings.capacity must be at least the {len(self.seeds)} seeds, "
                             f"got {self.capacity}")
        if self.scope not in SCOPES:
            raise ValueError(f"LiveCrawlSettings.scope must be one of {', '.join(SCOPES)}, got {self.scope!r}")
        if not isinstance(self.policy, FetchPolicy):
            raise TypeError(f"LiveCrawlSettings.policy must be a FetchPolicy, got {type(self.policy).__name__}")
        if not isinstance(self.offer, OfferRules):
            raise TypeError(f"LiveCrawlSettings.offer must be an OfferRules, got {type(self.offer).__name__}")
        for name in ("features", "reducer", "reward"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, str) or not v):
                raise ValueError(f"LiveCrawlSettings.{name} must be a registered name or None, got {v!r}")
        fs = self.focus_slack
        if fs is not None and (isinstance(fs, bool) or not isinstance(fs, (int, float)) or not math.isfinite(fs)
                               or fs < 0):
            raise ValueError(f"LiveCrawlSettings.focus_slack must be a finite number >= 0 (0: with pages in flight a "
                             f"free slot takes only a page as good as the best known; larger: more pages per second, "
                             f"less focus) or None (fill every free slot), got {fs!r}")
        if self.general_text not in (None, True, False):
            raise ValueError(f"LiveCrawlSettings.general_text must be None, True or False, got {self.general_text!r}")
        if not isinstance(self.env, Mapping):
            raise TypeError(f"LiveCrawlSettings.env must be a mapping of env keywords, got {type(self.env).__name__}")
        typed = {k for n, k in _ENV_FIELDS.items() if k in self.env
                 and (getattr(self, n) is not None or _typed_value(n, self.env[k]) is not None)}
        clash = sorted(set(self.env) & ENV_KEYWORDS_OWNED | typed)
        if clash:
            raise ValueError(f"LiveCrawlSettings.env must not set {', '.join(clash)}: "
                             f"{'; '.join(_owner(k) for k in clash)}")
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))
        for name in ("examples", "counter_examples"):
            v = getattr(self, name)
            if isinstance(v, (str, bytes)) or not isinstance(v, Iterable) or \
                    not all(isinstance(x, str) and x.strip() for x in v):
                raise ValueError(f"LiveCrawlSettings.{name} must be a list of files, folders, WARC archives or "
                                 f"http(s) URLs, got {v!r}")
            object.__setattr__(self, name, tuple(v))
        if self.counter_examples and not self.examples:
            raise ValueError("LiveCrawlSettings.counter_examples need examples (the pages the crawl looks for)")

    def __hash__(self) -> int:
        return hash(json.dumps(self.to_dict(), sort_keys=True))

    # ------------------------------------------------------------------ derived values
    @property
    def page_capacity(self) -> int:
        """The web's page capacity: ``capacity``, or ``max(10_000, 50 × max_pages)``."""
        return self.capacity if self.capacity is not None else max(10_000, 50 * self.max_pages)

    def env_keywords(self) -> dict[str, Any]:
        """The ``WikiCrawlEnv`` keywords these settings give, besides the corpus (``topic``,
        ``max_episode_steps``, ``concurrency``, ``per_host``, ``focus_slack`` (``math.inf`` for ``None``), the env
        fields that are set, ``env``)."""
        kw: dict[str, Any] = {"topic": self.topic, "max_episode_steps": self.max_pages,
                              "concurrency": self.concurrency, "per_host": self.per_host,
                              "focus_slack": math.inf if self.focus_slack is None else float(self.focus_slack)}
        for name, key in _ENV_FIELDS.items():
            v = getattr(self, name)
            if v is not None:
                kw[key] = {"general": v} if name == "general_text" else v
        kw.update(self.env)
        return kw

    @staticmethod
    def env_fields(keywords: Mapping[str, Any] | None) -> dict[str, Any]:
        """``WikiCrawlEnv`` keywords as settings fields, for ``LiveCrawlSettings(..., **env_fields(kw))``: the
        keywords a field names (``features``, ``reducer``, ``max_candidates``, ``domain_cap``, a reward *name*,
        ``text={"general": b}``) as those fields (``None`` values dropped), every other one in ``env``."""
        env = {k: v for k, v in (keywords or {}).items()}
        out: dict[str, Any] = {}
        for name, key in _ENV_FIELDS.items():
            if key in env and env[key] is None:
                del env[key]
            elif key in env and _typed_value(name, env[key]) is not None:
                out[name] = _typed_value(name, env.pop(key))
        out["env"] = env
        return out

    def replace(self, **changes: Any) -> LiveCrawlSettings:
        """A copy with ``changes`` (validated as at construction)."""
        return replace(self, **changes)

    # ------------------------------------------------------------------ record and compare
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values (``type`` first; tuples as lists; the policy and the offer rules as their own
        dicts; an ``env`` value that is not JSON as ``"<TypeName>"``)."""
        out: dict[str, Any] = {"type": SETTINGS_TYPE}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in ("seeds", "examples", "counter_examples"):
                v = list(v)
            elif f.name in ("policy", "offer"):
                v = v.to_dict()
            elif f.name == "env":
                v = {str(k): _jsonable(x) for k, x in sorted(v.items())}
            out[f.name] = v
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> LiveCrawlSettings:
        """The settings :meth:`to_dict` wrote (fields it lacks take their defaults; an unknown field is an error
        naming it)."""
        kw = dataclass_kwargs(cls, {k: v for k, v in d.items() if k != "type"})
        for name in ("seeds", "examples", "counter_examples"):
            if name in kw:
                kw[name] = tuple(kw[name])
        if "policy" in kw:
            kw["policy"] = FetchPolicy.from_dict(kw["policy"])
        if "offer" in kw:
            kw["offer"] = OfferRules.from_dict(kw["offer"])
        return cls(**kw)

    def differences(self, recorded: Mapping[str, Any], *, resuming: bool = True) -> list[tuple[str, Any, Any]]:
        """The fields where ``recorded`` (a :meth:`to_dict` of earlier settings) differs from these settings:
        ``(name, recorded value, this value)``, a policy or offer-rule field named ``policy.<field>`` /
        ``offer.<field>``. A field ``recorded`` lacks (settings recorded before it existed) counts as its default.
        With ``resuming``, the fields of :data:`MAY_CHANGE_ON_RESUME` are not compared."""
        mine = _flat(self.to_dict())
        theirs = _flat(_with_defaults(recorded))
        skip = MAY_CHANGE_ON_RESUME if resuming else frozenset()
        return [(k, theirs.get(k), mine.get(k)) for k in sorted(set(mine) | set(theirs))
                if k != "type" and k not in skip and theirs.get(k) != mine.get(k)]


_OPTIONAL = frozenset({"capacity", "max_candidates", "domain_cap"})
#: settings fields that are env keywords (field → keyword)
_ENV_FIELDS = {"features": "features", "reducer": "reducer", "max_candidates": "max_candidates", "reward": "reward",
               "domain_cap": "domain_cap", "general_text": "text"}


def _typed_value(name: str, v: Any) -> Any:
    """The value of the field ``name`` that the env keyword value ``v`` stands for, or ``None`` when the field
    cannot hold it (a reward object, a text option dict with more than ``general``: env keywords)."""
    if name == "general_text":
        ok = isinstance(v, Mapping) and set(v) == {"general"} and v["general"] in (True, False)
        return v["general"] if ok else None
    if name == "reward":
        return v if isinstance(v, str) else None
    return v


def _owner(key: str) -> str:
    if key in ENV_KEYWORDS_OWNED:
        return f"{key} comes from the settings' {'max_pages' if key == 'max_episode_steps' else key}"
    field_name = next(n for n, k in _ENV_FIELDS.items() if k == key)
    return f"{key} is the field {field_name}"


def canonical_seeds(seeds: Any, what: str = "LiveCrawlSettings.seeds") -> tuple[str, ...]:
    """The seed URLs canonicalised, duplicates dropped; ``ValueError`` naming ``what`` and a bad one."""
    from gym_crawl.web.urls import canonical_url

    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
        raise ValueError(f"{what} must be a non-empty list of URLs, got {seeds!r}")
    canon: list[str] = []
    for s in seeds:
        c = canonical_url(s) if isinstance(s, str) else None
        if c is None:
            raise ValueError(f"{what}: {s!r} is not an absolute http(s) URL")
        if c not in canon:
            canon.append(c)
    if not canon:
        raise ValueError(f"{what} must be a non-empty list of URLs, got none")
    return tuple(canon)


def _jsonable(v: Any) -> Any:
    """``v`` when it is JSON (finite numbers, strings, lists, dicts of them), else ``"<TypeName>"``."""
    try:
        json.dumps(v, allow_nan=False)
    except (TypeError, ValueError):
        return f"<{type(v).__name__}>"
    return v


def _with_defaults(recorded: Mapping[str, Any]) -> dict[str, Any]:
    """``recorded`` with the fields it lacks at their defaults (as :meth:`LiveCrawlSettings.to_dict` writes them)."""
    out = dict(recorded)
    for f in fields(LiveCrawlSettings):
        if f.name in out or f.name in ("seeds", "topic", "max_pages"):
            continue
        default: Any = f.default_factory() if callable(f.default_factory) else f.default
        out[f.name] = default.to_dict() if hasattr(default, "to_dict") else \
            list(default) if isinstance(default, tuple) else default
    if isinstance(out.get("policy"), Mapping):  # a policy field added since: its default
        out["policy"] = {**FetchPolicy().to_dict(), **out["policy"]}
    if isinstance(out.get("offer"), Mapping):
        out["offer"] = {**OfferRules().to_dict(), **out["offer"]}
    return out


def _flat(d: Mapping[str, Any]) -> dict[str, Any]:
    """Nested policy / offer / env dicts as ``policy.<field>`` entries."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        if k in ("policy", "offer", "env") and isinstance(v, Mapping):
            for kk, vv in v.items():
                out[f"{k}.{kk}"] = vv
        else:
            out[k] = v
    return out


def read_settings(warc: str | Path) -> LiveCrawlSettings | None:
    """The settings the live crawl recorded in ``warc`` was made with (its first warcinfo record), or ``None``
    when the file holds none (recorded before settings were, or not by a live crawl). An ``env`` value recorded
    by its type name comes back as that string."""
    raw = recorded_settings(Path(warc))
    return None if raw is None else LiveCrawlSettings.from_dict(raw)


def recorded_settings(warc: Path) -> dict[str, Any] | None:
    """The settings dict recorded in the first warcinfo record of ``warc`` (``None`` when it has none);
    ``ValueError`` naming the file when it is not a WARC or the record is not JSON."""
    from gym_crawl.web.warc_io import read_first_warcinfo

    raw = read_first_warcinfo(warc).get(SETTINGS_FIELD)
    if not raw:
        return None
    try:
        d = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        raise ValueError(f"warc {str(warc)!r}: its {SETTINGS_FIELD} warcinfo field is not valid JSON") from None
    if not isinstance(d, dict):
        raise ValueError(f"warc {str(warc)!r}: its {SETTINGS_FIELD} warcinfo field is not a JSON object")
    return d

