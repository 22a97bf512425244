"""``CrawlWorld``: what every crawl of an env shares, built once from the env's keyword arguments.

A :class:`~gym_crawl.envs.wiki_crawl.WikiCrawlEnv` is a crawl state (its own) over a world (shared): the
corpus, the text model, one topic scorer per topic (with its score tables), the feature-set, reducer and
reward specs and how they resolve, the category slots, Han's β, the domain-cap schedule, the state vector's
normalizers, and the layout the batched vector env's compiled step needs. The batched
:class:`~gym_crawl.envs.vector.WikiCrawlVectorEnv` builds one world and its N crawls from it; a single env
builds its own (``WikiCrawlEnv(world=...)`` shares one).
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

from gym_crawl._limits import check_fits
from gym_crawl.corpus import Corpus, load_corpus
from gym_crawl.crawl.fields import MIN_SLOTS, crawl_bytes
from gym_crawl.features.sets import FeatureSet, get_feature_set
from gym_crawl.reducers.base import Reducer, get_reducer
from gym_crawl.relevance.rewards import RewardScheme, get_reward_scheme
from gym_crawl.relevance.scorer import TopicScorer, fill_topic_tables, shared_scorer
from gym_crawl.relevance.topic import Topic, resolve_topic
from gym_crawl.text.model import TextModel, get_text_model

__all__ = ["CrawlWorld", "WORLD_KEYS", "check_int"]

#: the env keyword arguments that describe the world (the others describe one crawl)
WORLD_KEYS = ("corpus", "corpus_kwargs", "text", "n_categories", "features", "reducer", "reward", "beta",
              "domain_cap")
_TEXT_KEYS = ("idf_fraction", "dim", "seed", "vectors_path", "general")


def check_int(name: str, value: Any, low: int, high: int | None = None) -> int:
    """``value`` as an int in [low, high]; ``ValueError`` naming ``name`` for bools, floats, strings."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    v = int(value)
    if v < low or (high is not None and v > high):
        rng = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be {rng}, got {v}")
    return v


def parse_domain_cap(spec: int | str | None) -> tuple[int, int] | None:
    """``None``/"inf" → None; int b → (b, b); "A-B" → (A, B). Raises ValueError naming the value."""
    if spec is None or (isinstance(spec, str) and spec.strip().lower() in ("inf", "none", "∞")):
        return None
    if isinstance(spec, bool) or not isinstance(spec, (str, numbers.Integral)):
        raise ValueError(f"domain_cap {spec!r}: expected None, 'inf', an integer or 'A-B' (e.g. '5-2')")
    try:
        if isinstance(spec, str) and "-" in spec:
            a, b = (int(x) for x in spec.split("-"))
        elif isinstance(spec, str) and "_" in spec:
            a, b = (int(x) for x in spec.split("_"))
        else:
            a = b = int(spec)
    except ValueError:
        raise ValueError(f"domain_cap {spec!r}: expected None, 'inf', an integer or 'A-B' (e.g. '5-2')") from None
    if a < 1 or b < 1 or b > a:
        raise ValueError(f"domain_cap {spec!r}: caps must be >= 1 and an adaptive cap must decrease (A >= B)")
    return a, b


def _check_sizes(corpus: Corpus, n_categories: int, text: Any) -> None:
    """Refuse category slots or word-vector dimensions whose arrays cannot fit in memory, with the estimate."""
    n, L, V = corpus.n_pages, corpus.n_links, corpus.n_words
    per_cat = (n + L) * 4  # the score tables' (pages + links) × C float32 columns (a crawl's follow its pages)
    check_fits(f"n_categories={n_categories} on corpus {corpus.name!r} ({n:,} pages, {L:,} links)",
               crawl_bytes(MIN_SLOTS, n_categories) + per_cat * n_categories,
               "4 bytes per page and link per category slot in the score tables")
    if isinstance(text, dict) and "dim" in text:
        dim = int(text["dim"])
        check_fits(f"text={{'dim': {dim}}} on corpus {corpus.name!r} ({V:,} words)", (V + min(n, 20_000)) * dim * 8,
                   "word vectors and their training matrix, 8 bytes per word or training page per dimension")


def check_text(text: Any) -> None:
    """Refuse a ``text`` argument that is neither None, a dict of known options, nor a TextModel."""
    if isinstance(text, dict):
        bad = sorted(set(text) - set(_TEXT_KEYS))
        if bad:
            raise ValueError(f"text: unknown option(s) {bad}; expected {list(_TEXT_KEYS)} or a TextModel")
        if "dim" in text:
            check_int("text['dim']", text["dim"], 1)
        if text.get("general") not in (None, True, False):
            raise ValueError(f"text['general'] must be None (the default: the general English model for a live "
                             f"web or a web corpus when available), True or False, got {text['general']!r}")
    elif text is not None and not isinstance(text, TextModel):
        raise ValueError(f"text must be a dict of options or a TextModel, got {type(text).__name__}")


class CrawlWorld:
    """The shared part of crawl envs (see the module docstring). Arguments as :class:`WikiCrawlEnv`'s.

    Attributes: ``corpus``, ``text`` (the :class:`TextModel`), ``n_categories``, ``beta``, ``domain_cap_spec``
    and ``cap_schedule`` (``(A, B)`` or ``None``), ``log_pages`` and ``n_domains`` (the state vector's
    normalizers). Feature sets and reducers hold per-crawl state, so each crawl resolves its own
    (:meth:`new_features`, :meth:`new_reducer`); scorers and reward schemes are per topic (:meth:`scorer`,
    :meth:`reward_scheme`).
    """

    def __init__(self, corpus: Any = None, corpus_kwargs: dict | None = None, text: dict | TextModel | None = None,
                 n_categories: int = 4, features: Any = "combined", reducer: Any = "topk", reward: Any = None,
                 beta: float = 0.4, domain_cap: int | str | None = None):
        n_categories = check_int("n_categories", n_categories, 0)
        if isinstance(beta, bool) or not isinstance(beta, numbers.Real) or not 0.0 <= float(beta) <= 1.0:
            raise ValueError(f"beta must be a number in [0, 1], got {beta!r}")
        check_text(text)
        self.domain_cap_spec: int | str | None = domain_cap
        self.cap_schedule: tuple[int, int] | None = parse_domain_cap(domain_cap)
        self.corpus: Corpus = load_corpus(corpus, **(corpus_kwargs or {}))
        _check_sizes(self.corpus, n_categories, text)
        self.text: TextModel = text if isinstance(text, TextModel) else get_text_model(self.corpus, **(text or {}))
        self.n_categories: int = n_categories
        self.beta: float = float(beta)
        self.feature_spec: Any = features
        self.reducer_spec: Any = reducer
        self.reward_spec: Any = reward
        self.log_pages: float = math.log1p(max(2, self.corpus.n_pages))
        self.n_domains: int = self.corpus.n_domain_slots
        self._scorers: dict[Topic, TopicScorer] = {}

    @property
    def adaptive_cap(self) -> bool:
        """True when the domain cap falls over the episode budget (``"A-B"`` with A > B)."""
        return self.cap_schedule is not None and self.cap_schedule[0] != self.cap_schedule[1]

    def new_features(self) -> FeatureSet:
        """The feature set of one crawl (the same instance for every crawl when the spec is an instance); a
        named set's word-vector columns take the dimension of this world's text model."""
        return get_feature_set(self.feature_spec, self.n_categories, dim=self.text.dim)

    def new_reducer(self) -> Reducer:
        """The reducer of one crawl (the same instance for every crawl when the spec is an instance)."""
        return get_reducer(self.reducer_spec)

    def scorer(self, topic: Topic) -> TopicScorer:
        """The topic's scorer (one per topic and process, shared by every crawl of this world)."""
        sc = self._scorers.get(topic)
        if sc is None:
            sc = self._scorers[topic] = shared_scorer(self.text, topic, self.n_categories)
        return sc

    def precompute_scores(self, topics: Sequence[Any], progress: bool = False) -> list[TopicScorer]:
        """Score every page and link of each of ``topics`` now, all topics in one pass over the corpus' text
        (:func:`~gym_crawl.relevance.scorer.fill_topic_tables`: the text vectors are computed once, each topic
        pays its dot products only), instead of each topic at its first ``reset``. Trajectories do not change
        (every entry equals the on-demand score bit for bit). The tables are the process-wide ones
        (:func:`~gym_crawl.relevance.scorer.shared_scorer`), so every env of this process on the same corpus,
        text model and ``n_categories`` reads them — while something holds the corpus (this world, an env):
        the process-wide memo holds corpora weakly.

        :param topics: topic specs of :func:`~gym_crawl.relevance.topic.resolve_topic`, or tasks
            ``{"topic": spec, "seeds": [...]}`` (their topic is scored).
        :param progress: show the pages and links scored as a progress bar on stderr.
        :returns: the topics' scorers, in the order given.
        """
        scorers = [self.scorer(resolve_topic(t["topic"] if isinstance(t, dict) and "seeds" in t else t, self.corpus))
                   for t in topics]
        fill_topic_tables(scorers, progress=f"score tables of {len(scorers)} topics" if progress else None)
        return scorers

    def reward_scheme(self, topic: Topic) -> RewardScheme:
        """The reward scheme for ``topic``: the spec, or by default ``"labels"`` for a labelled topic and
        ``"han2018"`` otherwise; ``ValueError`` when it cannot serve the topic or its max reward is not finite."""
        spec = self.reward_spec if self.reward_spec is not None else ("labels" if topic.label else "han2018")
        scheme = get_reward_scheme(spec, labelled=bool(topic.label))
        if scheme.needs_label and not topic.label:
            raise ValueError(f"reward {scheme.name!r} needs a topic with a label; topic {topic.name!r} has none")
        if not math.isfinite(float(scheme.max_reward)):
            raise ValueError(f"reward {scheme.name!r}: max_reward must be finite, got {scheme.max_reward!r}")
        return scheme
