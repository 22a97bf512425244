"""``CrawlView``: what an agent may read of a crawl, the one documented list (see :class:`CrawlView`)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from gym_crawl._arith import norm, row_dots
from gym_crawl.crawl.state import FRONTIER, VISITED
from gym_crawl.relevance.topic import Topic, resolve_topic

if TYPE_CHECKING:
    from gym_crawl.envs.wiki_crawl import WikiCrawlEnv

__all__ = ["CrawlView", "FrontierChanges"]


class FrontierChanges(NamedTuple):
    """What the last ``reset``/``step`` did to the frontier (read-only int32 arrays).

    ``new``: pages added; ``updated``: frontier pages whose parent aggregates changed (new ones
    included) — with a ``local`` feature set, the only rows of x(s, a) that changed; ``removed``:
    frontier pages dropped because their domain reached the per-domain cap.
    """

    new: np.ndarray
    updated: np.ndarray
    removed: np.ndarray


class CrawlView:
    """Read-only view of one crawl for agents: ``env.unwrapped.view`` (the runner passes it to
    ``Agent.begin_episode``). This docstring is the one list of what an agent may read.

    The crawl: :attr:`current_topic`, :meth:`check_topic`, :attr:`steps`, :attr:`budget`,
    :attr:`action_mode`, :meth:`action_masks`, :attr:`observation_space`, :attr:`action_space`,
    :attr:`max_candidates` (K), :attr:`n_pages`.

    The frontier (discovered, unfetched pages): :meth:`frontier_pages`, :meth:`is_frontier`,
    :meth:`frontier_changes`, :meth:`candidate_pages`, :meth:`features_of` (x(s, a) rows; sparse:
    :meth:`sparse_features_of`),
    :meth:`argmax_frontier`, :meth:`link_scores`, :meth:`link_words`; about x(s, a):
    :attr:`feature_names`, :attr:`feature_dim`, :attr:`feature_set_name`, :attr:`features_local`.

    Fetched pages: :meth:`fetched_pages`, :meth:`fetched_text`, :meth:`fetched_outlinks`,
    :meth:`fetched_vectors`; the text model: :attr:`n_words`, :meth:`word_id`, :meth:`word`, :meth:`idf`,
    :meth:`topic_vector`; the reward: :attr:`max_reward`, :attr:`reward_name`; :attr:`reducer_name`;
    :attr:`model_config` (what a saved model records of the env it learned on);
    :meth:`precompute_scores` (a speed-up that changes no trajectory).

    Hidden information, for oracles and analyses only (agents using it set ``uses_hidden_information``):
    :meth:`hidden_relevance`.

    Arrays that share the crawl's memory are read-only views (writing raises ``ValueError``; copy them to
    keep them across steps); the others are fresh copies. The view has no setters and no attribute that
    leads to the env, its crawl state, corpus or text model.
    """

    __slots__ = ("_env",)
    _env: WikiCrawlEnv

    def __init__(self, env: WikiCrawlEnv):
        object.__setattr__(self, "_env", env)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"CrawlView is read-only: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"CrawlView is read-only: cannot delete {name!r}")

    def __reduce__(self) -> Any:
        return CrawlView, (self._env,)

    @property
    def budget(self) -> int | None:
        """The env's own budget (``max_episode_steps``), at which it truncates itself; ``None`` when a ``TimeLimit``
        alone truncates (``WikiCrawl-v3`` built by ``gym.make``) or nothing does."""
        return self._env.budget

    @property
    def action_mode(self) -> str:
        """``"slot"`` (actions index the K candidate slots) or ``"page"`` (actions are page ids)."""
        return str(self._env.action_mode)

    @property
    def observation_space(self) -> Any:
        """The env's observation space."""
        return self._env.observation_space

    @property
    def action_space(self) -> Any:
        """The env's action space."""
        return self._env.action_space

    def action_masks(self) -> np.ndarray:
        """Valid actions: (K,) bool of filled slots in slot mode, (n_pages,) bool of frontier pages in page mode."""
        return self._env.action_masks()

    @property
    def max_candidates(self) -> int:
        """K, the number of candidate slots."""
        return self._env.K

    @property
    def n_pages(self) -> int:
        """Pages of the corpus (page ids are 0..n_pages-1)."""
        return self._env.corpus.n_pages

    @property
    def steps(self) -> int:
        """Env steps taken this episode."""
        return self._env.episode.t

    def check_topic(self, spec: Any) -> Topic:
        """Resolve a topic spec for this env's corpus (raises naming the corpus' known topics)."""
        return resolve_topic(spec, self._env.corpus)

    @property
    def current_topic(self) -> Topic:
        """The episode's topic (a frozen :class:`Topic`)."""
        return self._env.topic

    @property
    def feature_names(self) -> list[str]:
        """Column names of x(s, a) (``features_of`` and the observation's candidate rows)."""
        return list(self._env.features.names)

    @property
    def feature_dim(self) -> int:
        """d, the number of columns of x(s, a)."""
        return int(self._env.features.dim)

    @property
    def feature_set_name(self) -> str:
        """Name of the feature set of x(s, a)."""
        return str(self._env.features.name)

    @property
    def features_local(self) -> bool:
        """True when a fetch changes only the rows of ``frontier_changes().updated`` (cacheable)."""
        return bool(self._env.features.local)

    @property
    def max_reward(self) -> float:
        """The reward scheme's largest reward (30 for han2018, 1 for binary/labels)."""
        return float(self._env.scheme.max_reward)

    @property
    def reward_name(self) -> str:
        """Name of the reward scheme of the current topic."""
        return str(self._env.scheme.name)

    @property
    def reducer_name(self) -> str:
        """Name of the reducer that proposes the candidate slots."""
        return str(self._env.reducer.name)

    @property
    def model_config(self) -> dict[str, Any]:
        """What a model trained on this env records to run on the same inputs again (JSON values): ``env_id`` (the
        registered id, ``None`` for an env built without ``gym.make``), ``features``, ``feature_dim``,
        ``n_categories``, ``max_candidates``, ``reducer``, ``reward`` and ``text_model``
        (:func:`gym_crawl.text.model.describe_text_model`: which text model computed the word-vector columns)."""
        from gym_crawl.text.model import describe_text_model

        env = self._env
        spec = getattr(env, "spec", None)
        return {"env_id": getattr(spec, "id", None), "features": self.feature_set_name, "feature_dim": self.feature_dim,
                "n_categories": int(env.n_categories), "max_candidates": self.max_candidates,
                "reducer": self.reducer_name, "reward": self.reward_name, "text_model": describe_text_model(env.text)}

    def frontier_pages(self) -> np.ndarray:
        """(F,) int32 read-only *live* view of all frontier pages (no copy; the next step changes
        it — copy it to keep it)."""
        return self._env.state.frontier

    def frontier_changes(self) -> FrontierChanges:
        """New / updated / domain-capped frontier pages of the last ``reset`` or ``step`` (read-only views)."""
        return FrontierChanges(*(_ro_i32(a) for a in self._env.episode.changes))

    def _ids(self, ids: Any, what: str, n: int) -> np.ndarray:
        """``ids`` as int64 ids in ``[0, n)``; ``ValueError`` naming ``what`` otherwise (no wrap-around)."""
        a = np.asarray(ids)
        if a.dtype == np.bool_ or not (np.issubdtype(a.dtype, np.integer) or a.size == 0):
            raise ValueError(f"{what}: ids must be integers in [0, {n}), got {ids!r}")
        a = a.astype(np.int64, copy=False)
        if a.size and (int(a.min()) < 0 or int(a.max()) >= n):
            raise ValueError(f"{what}: ids must lie in [0, {n}), got values in [{int(a.min())}, {int(a.max())}]")
        return a

    def is_frontier(self, pages: np.ndarray | int) -> np.ndarray | bool:
        """Whether page(s) are currently in the frontier (discovered, unfetched); ``ValueError`` for an id
        outside ``[0, n_pages)``."""
        a = self._ids(pages, "is_frontier", self._env.corpus.n_pages)
        out = self._env.state.status[a] == FRONTIER
        return bool(out) if a.ndim == 0 else out

    def fetched_pages(self) -> np.ndarray:
        """(n_fetched,) int32 pages fetched this episode, in fetch order, seeds first (a copy)."""
        return self._env.state.fetched_pages()

    def _require_fetched(self, page: int, what: str) -> int:
        p = int(page)
        if not 0 <= p < self._env.corpus.n_pages or self._env.state.status[p] != VISITED:
            raise ValueError(f"{what}({page}): only fetched pages can be read (a crawler knows nothing else)")
        return p

    def fetched_text(self, page: int) -> tuple[np.ndarray, np.ndarray]:
        """Bag of words of a *fetched* page: ``(word ids, counts)`` (read-only); ``ValueError`` for
        any other page — the text of unfetched pages is not observable."""
        p = self._require_fetched(page, "fetched_text")
        c = self._env.corpus
        a, b = int(c.text_lo[p]), int(c.text_hi[p])
        terms, counts = np.asarray(c.text_terms[a:b]), np.asarray(c.text_counts[a:b])
        return _ro(terms), _ro(counts)

    def fetched_outlinks(self, page: int) -> np.ndarray:
        """Link targets parsed from a *fetched* page (int32, in link order, read-only)."""
        p = self._require_fetched(page, "fetched_outlinks")
        a, b = int(self._env.corpus.link_lo[p]), int(self._env.corpus.link_hi[p])
        return _ro(np.asarray(self._env.corpus.link_dst[a:b]))

    def precompute_scores(self, persist: bool = False, topics: Sequence[Any] | None = None) -> None:
        """Score every page and link of the current topic now, in one pass (≈ 13 CPU-s for 323k pages and
        8.6M links), instead of as the crawl fetches pages. Trajectories do not change (each entry equals
        the on-demand score bit for bit). The tables belong to the process-wide scorer of this corpus and
        topic (:func:`gym_crawl.relevance.scorer.shared_scorer`), so every env of the process shares them,
        and so do ``gymnasium.vector.AsyncVectorEnv(..., context="fork")`` workers started afterwards::

            warm = gym.make("WikiCrawl-v1", corpus=c, topic="geology"); warm.reset(seed=0)
            warm.unwrapped.view.precompute_scores()           # parent: one copy of the tables
            vec = gym.vector.AsyncVectorEnv([make] * 8, context="fork")   # workers share it

        The current topic is the constructor's until a ``reset(options={"topic": ...})`` chooses another.
        ``topics`` (topic specs or tasks ``{"topic": spec, "seeds": [...]}``) scores those topics instead, all in
        one pass over the corpus' text (:meth:`gym_crawl.envs.world.CrawlWorld.precompute_scores`): several
        times cheaper than one topic at a time, e.g. before training on a task set's topics.
        ``persist=True`` also stores the tables on disk (``TopicScorer.save_tables``: npy + manifest, written
        atomically) so that processes started any other way (``spawn``, ``forkserver``, other machines sharing
        the data directory) memory-map them instead of filling their own; it needs a corpus saved on disk."""
        scorers = [self._env.scorer] if topics is None else self._env.world.precompute_scores(topics)
        if persist:
            for sc in scorers:
                sc.save_tables()
        elif topics is None:
            self._env.scorer.page_table().ensure_all()
            self._env.scorer.link_table().ensure_all()

    def fetched_vectors(self, pages: np.ndarray) -> np.ndarray:
        """(len(pages), k) float32 unit text vectors of *fetched* pages (tf-idf-weighted sums of the text
        model's word vectors, L2-normalized; a page without known words gives a zero row). ``ValueError``
        if any page is not fetched — unfetched pages' text is not observable."""
        pages = np.atleast_1d(np.asarray(pages, dtype=np.int64))
        if len(pages) and (pages.min() < 0 or pages.max() >= self._env.corpus.n_pages
                           or not np.all(self._env.state.status[pages] == VISITED)):
            raise ValueError("fetched_vectors: only fetched pages can be read (a crawler knows nothing else)")
        v = np.asarray(self._env.text.page_vectors(pages), np.float32)
        n = np.linalg.norm(v, axis=1, keepdims=True)
        return np.divide(v, n, out=np.zeros_like(v), where=n > 0)

    def topic_vector(self) -> np.ndarray:
        """(k,) float32 unit vector of the current topic's words (the query the no-learning crawler's
        link and page cosines are taken against; read-only copy)."""
        q = np.array(self._env.scorer.queries[0], dtype=np.float32)
        n = norm(q)
        return q / n if n > 0 else q

    @property
    def n_words(self) -> int:
        """Vocabulary size (word ids are 0..n_words-1)."""
        return self._env.corpus.n_words

    def word_id(self, word: str) -> int:
        """Id of ``word`` in the vocabulary, -1 when absent."""
        return int(self._env.corpus.word_id(word))

    def word(self, word_id: int) -> str:
        """The word with id ``word_id``."""
        return self._env.corpus.vocab[int(self._ids(word_id, "word", self._env.corpus.n_words))]

    def idf(self) -> np.ndarray:
        """(n_words,) read-only IDF of the text model (estimated on a held-out sample of pages)."""
        return _ro(np.asarray(self._env.text.idf))

    def hidden_relevance(self) -> np.ndarray:
        """(n_pages,) bool ground-truth relevance of *every* page (label, else the reward's relevant flag).

        Hidden information: for oracles and analyses only (agents using it set
        ``uses_hidden_information``); never part of observations or features.
        """
        if self._env.topic.label:
            return self._env.scorer.label_mask.copy()
        _, rel = self._env.scheme(self._env.scorer.all_page_scores())
        return rel

    def candidate_pages(self) -> np.ndarray:
        """Pages proposed by the reducer this step (for ``reducer="full"``: the whole frontier; empty
        with ``observation="state"``; read-only)."""
        return _ro(self._env.episode.all_cand)

    def features_of(self, pages: np.ndarray) -> np.ndarray:
        """(len(pages), d) float32 x(s, a) of frontier ``pages`` (unclipped)."""
        pages = np.asarray(pages, dtype=np.int64)
        if len(pages) and not np.all(self._env.state.status[pages] == FRONTIER):
            raise ValueError("features_of: all pages must be frontier pages")
        return self._env.features.compute(self._env.state, pages)

    def sparse_features_of(self, pages: np.ndarray) -> Any:
        """x(s, a) of frontier ``pages`` as a ``scipy.sparse.csr_matrix`` of float32 rows (d columns): the feature
        set's own sparse rows when it has them (the hashed sets: O(non-zeros), never a dense ``len(pages) × d``
        array), else :meth:`features_of` sparsified. The same values as :meth:`features_of`."""
        import scipy.sparse as sp

        pages = np.asarray(pages, dtype=np.int64)
        if len(pages) and not np.all(self._env.state.status[pages] == FRONTIER):
            raise ValueError("sparse_features_of: all pages must be frontier pages")
        fs = self._env.features
        rows = getattr(fs, "sparse", None)
        if rows is not None:
            return sp.csr_matrix(rows(self._env.state, pages), dtype=np.float32)
        return sp.csr_matrix(fs.compute(self._env.state, pages), dtype=np.float32)

    def link_words(self, page: int) -> dict[str, list[str]]:
        """Words of the link that discovered frontier ``page`` (the most topic-relevant one when several did), as
        the crawler saw them: ``{"anchor": [...], "url": [...]}`` — its anchor text and its URL's words (the
        target's title tokens; none on domains with opaque URLs). ``ValueError`` for a page not in the frontier."""
        p = int(self._ids(page, "link_words", self._env.corpus.n_pages))
        if self._env.state.status[p] != FRONTIER:
            raise ValueError(f"link_words({page}): page {p} is not in the frontier")
        c, e = self._env.corpus, int(self._env.state.best_link[p])
        vocab = c.vocab
        return {"anchor": [vocab[int(t)] for t in c.anchor_terms[c.anchor_ptr[e]:c.anchor_ptr[e + 1]]],
                "url": [vocab[int(t)] for t in c.title_terms[c.title_ptr[p]:c.title_ptr[p + 1]]]}

    def link_scores(self, pages: np.ndarray) -> np.ndarray:
        """(len(pages),) topic relevance of the best discovering link's text (the no-learning priority)."""
        return self._env.state.link_rel[self._ids(pages, "link_scores", self._env.corpus.n_pages)].copy()

    def argmax_frontier(self, w: np.ndarray) -> int:
        """Frontier page maximizing ``w · x(s, a)`` over the *whole* frontier (ties: lowest slot).
        One O(F × d) pass — Han's synchronous scoring; each score is the float64 sum in column order rounded
        to float32 (:func:`gym_crawl._arith.row_dots`: the same bits on any CPU)."""
        F = self.frontier_pages()
        if len(F) == 0:
            raise ValueError("the frontier is empty")
        X = self._env.features.compute(self._env.state, F)
        return int(F[int(np.argmax(row_dots(X, np.asarray(w, np.float32)).astype(np.float32)))])


def _ro_i32(a: np.ndarray) -> np.ndarray:
    return _ro(np.asarray(a, np.int32))


def _ro(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a`` (the caller's array stays writable)."""
    v = a.view()
    v.flags.writeable = False
    return v
