"""Agent variants: a registered agent with its own option defaults, env defaults and evaluation options.

A variant lets a paper learner run on a content-bearing feature set without changing its
paper-faithful defaults. Every entry of :data:`VARIANTS` is a registered agent name::

    agent = make_agent("lfa-sync+content")          # LFASyncAgent(alpha=0.01), variant "lfa-sync+content"
    env = make_env_for(agent, corpus=...)           # features="transferable" from the variant
    greedy = make_agent("lfa-sync+content", **eval_config_of("lfa-sync+content"))

The variant's class is a subclass of its base agent's class that only changes ``env_defaults`` and the
default options; its ``name`` stays the base agent's (some agents select their update rule by name),
and :attr:`variant` holds the variant's name. A saved variant agent loads as its base agent with the
same options.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

__all__ = ["EVAL_CONFIG", "TRES_EVAL", "VARIANTS", "Variant", "eval_config_of", "resolve_variant", "variant_class"]


@dataclass(frozen=True)
class Variant:
    """A registered agent with its own options.

    :param agent: the base agent's registered name.
    :param config: option defaults (the caller's options win).
    :param env: env keyword defaults added to the base agent's ``env_defaults``.
    :param eval_config: options of the copy that is evaluated after training (e.g. ``epsilon=0``).
    :param doc: one line for listings.
    """

    agent: str
    config: dict[str, Any] = dataclasses.field(default_factory=dict)
    env: dict[str, Any] = dataclasses.field(default_factory=dict)
    eval_config: dict[str, Any] = dataclasses.field(default_factory=dict)
    doc: str = ""


#: variant name -> :class:`Variant`. The paper learners on the ``transferable`` feature set (topic-relative
#: columns: Han's relevance tiles and values, TRES's local path/keyword columns, link-text and parent vectors
#: times the topic vector), so weights learned on train topics apply to test topics; α = 0.01 (Han's 0.001
#: barely moves w in 46 training episodes of 100 steps with a 0/1 reward); greedy (ε = 0) evaluation.
#: evaluation options of every TRES variant: a fresh evaluation copy restarts the agent's step counter, so
#: TRES's Tree-Random warm-up (``warmup_steps``, 100) would otherwise replay on every test crawl — the whole of
#: a 100-step task — and the trained network would never act; the copy acts ε-greedily from its first step
TRES_EVAL: dict[str, Any] = {"warmup_steps": 0}

VARIANTS: dict[str, Variant] = {
    "lfa-sync+content": Variant("lfa-sync", {"alpha": 0.01}, {"features": "transferable"}, {"epsilon": 0.0},
                                "Han 2018 synchronous LFA over the transferable content features"),
    "lfa-async+content": Variant("lfa-async", {"alpha": 0.01}, {"features": "transferable"}, {"epsilon": 0.0},
                                 "Han 2018 asynchronous LFA over the transferable content features"),
    "td-lambda+content": Variant("td-lambda", {"inputs": "content"}, {}, {"epsilon": 0.0},
                                 "Grigoriadis TD(λ) page-value crawler over topic-relative page content "
                                 "(page vector ⊙ topic vector, cosine) instead of per-topic keywords"),
    "tres+content": Variant("tres", {}, {"features": "transferable"}, TRES_EVAL,
                            "TRES DDQN (Tree-Frontier) with the transferable content features as its rows"),
    # TRES as published and its Table 4 ablations: the topic's offline classifier (fitted on the corpus'
    # URL-hash classifier-train split; crawl heldout_view(corpus) so relevant_found counts only pages it never
    # saw) is both a feature column and the reward
    "tres-clf": Variant("tres", {}, {"features": "tres-clf", "reward": "classifier"}, TRES_EVAL,
                        "TRES as published: DDQN + Tree-Frontier, tres-clf features, classifier reward"),
    "tres-svm": Variant("tres", {}, {"features": "tres-clf-svm", "reward": "classifier-svm"}, TRES_EVAL,
                        "TRES_SVM: tres-clf with ACHE's linear SVM as link-text classifier and reward"),
    "tres-nh": Variant("tres", {}, {"features": "tres-clf-nh", "reward": "classifier"}, TRES_EVAL,
                       "TRES_NH: tres-clf without the two web-domain (Hub) columns"),
    # ACHE's default crawler is two classifiers: a page classifier on fetched pages (here the reward: ACHE's
    # linear SVM, 'classifier-svm') and an online link classifier retrained from the pages it fetched, whose
    # score orders the frontier (best-first). The online-classifier agent is that link classifier and learns
    # from reward > 0, so ACHE-like is online-classifier with the SVM page classifier as its reward. A caller
    # that passes its own reward (the task sets' reward="labels") replaces the page classifier with it.
    "ache": Variant("online-classifier", {}, {"reward": "classifier-svm"}, {},
                    "ACHE-like: online link classifier (best-first) fed by an SVM page classifier on fetched pages"),
    # best-first's link score as a prior the learning does not erode: the weight of the a.link_rel column stays
    # `prior` and the other columns (hashed link text, URL, site and sibling columns) learn the residual
    "online-classifier+prior": Variant("online-classifier", {"prior_mode": "fixed", "features": "hashed-site"}, {}, {},
                                       "online-classifier on hashed-site: prior x best-first's link score + a "
                                       "learned residual"),
    # the learner the package ships: best-first-mix over the cheap local `hashed` rows (a row once per page, scores
    # refreshed every 16 steps: a few ms of CPU per page live), starting from the weights `gym-crawl bench pretrain`
    # trained on the synthetic webs' train topics (gym_crawl/agents/data/), learning online from the crawl's reward
    "best-first-mix+pretrained": Variant("best-first-mix", {"features": "hashed", "refresh": "new", "rescore_every": 16,
                                                            "weights": "package:best-first-mix+pretrained"}, {}, {},
                                         "best-first-mix with the package's pretrained weights, cheap enough for a "
                                         "live crawl at 64 pages in flight; keeps learning from the crawl's reward"),
    "hashed-q+prior": Variant("hashed-q", {"prior_mode": "fixed", "features": "hashed-site"}, {}, {"epsilon": 0.0},
                              "hashed-q on hashed-site: Q = prior x best-first's link score + a learned residual"),
}

#: evaluation-time options of plain registered agents that explore while training
EVAL_CONFIG: dict[str, dict[str, Any]] = {"hashed-q": {"epsilon": 0.0}, "tres": TRES_EVAL}


def resolve_variant(name: str) -> Variant:
    """The :class:`Variant` an agent name stands for (a plain registered name: itself, no overrides, its
    :data:`EVAL_CONFIG`)."""
    if name in VARIANTS:
        return VARIANTS[name]
    return Variant(name, {}, {}, EVAL_CONFIG.get(name, {}))


def eval_config_of(name: str) -> dict[str, Any]:
    """The options of the evaluated copy of agent ``name`` (see :attr:`Variant.eval_config`)."""
    return dict(resolve_variant(name).eval_config)


_CLASSES: dict[str, type] = {}


def variant_class(name: str) -> type:
    """The Agent subclass registered as variant ``name`` (built on first use; ``KeyError`` listing the
    variants when ``name`` is none)."""
    if name not in VARIANTS:
        raise KeyError(f"unknown agent variant {name!r}; known: {sorted(VARIANTS)}")
    if name not in _CLASSES:
        from gym_crawl.agents.base import agent_class

        v = VARIANTS[name]
        base = agent_class(v.agent)
        defaults = dict(v.config)

        def __init__(self: Any, **config: Any) -> None:
            base.__init__(self, **{**defaults, **config})

        _CLASSES[name] = type(base.__name__ + "Variant", (base,), {
            "__init__": __init__, "__doc__": v.doc, "__module__": __name__, "variant": name,
            "env_defaults": {**getattr(base, "env_defaults", {}), **v.env}})
    return _CLASSES[name]


def __getattr__(attr: str) -> Any:
    """``gym_crawl.agents.variants:<variant name>`` — the lazy registry target of every variant."""
    if attr in VARIANTS:
        return variant_class(attr)
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
