"""A learned mixture of best-first and the online link classifier within one crawl (``best-first-mix``).

Best-first and a learner fail on different tasks: best-first wins where the target's words are in the link
text, the learner where site regularities (URL patterns, templates, sibling statistics) mark the target.
``best-first-mix`` runs both rankers over the same frontier and lets the crawl's own harvest choose
between them, step by step:

* **Rankers**: best-first's top frontier page (the highest ``link_scores``, the papers' no-learning
  priority) and the learner's top page (the :class:`~gym_crawl.agents.hashed.online_classifier.OnlineClassifierAgent`
  this class extends: highest ``w·x`` over the ``hashed-site`` feature rows by default). Ties in either
  ranking: the earliest in ``frontier_pages()`` order.
* **Choice**: when both rankers name the same page it is fetched; otherwise a two-armed Beta–Bernoulli
  Thompson sampler (:class:`ThompsonPair`) draws a harvest rate for each ranker from its posterior
  ``Beta(mix_prior + successes, mix_prior + failures)`` and follows the higher draw (ties: best-first).
* **Credit**: the fetched page's reward > 0 is a success, else a failure, of every ranker that named it
  (both when they agreed). ``mix_discount`` < 1 multiplies both arms' counts by it before each update, so
  old evidence fades as the crawl moves on.
* The bandit starts from its prior at every episode (only this crawl's harvest counts); the classifier
  learns from every fetched page, whichever ranker named it, and keeps its weights across episodes like
  ``online-classifier``. Randomness: the episode's generator (same seed ⇒ same crawl).

Where the learner's picks earn nothing, the posterior of its arm falls and the crawl follows best-first;
where they earn more than best-first's, it follows the learner. The agent reads the crawl only through the
read-only view (``frontier_pages``, ``link_scores``, the feature rows) and the rewards of its own steps.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from gym_crawl.agents.base import Transition
from gym_crawl.agents.hashed.online_classifier import OnlineClassifierAgent

__all__ = ["ARMS", "BestFirstMixAgent", "ThompsonPair"]

#: the two rankers, in arm order
ARMS = ("best-first", "learner")


class ThompsonPair:
    """Thompson sampling between two arms with Bernoulli rewards and Beta posteriors.

    :param prior: both Beta parameters of each arm's prior (> 0; 1 = uniform).
    :param discount: factor in (0, 1] applied to every count before each update (1 = no forgetting).
    """

    def __init__(self, prior: float = 1.0, discount: float = 1.0):
        if isinstance(prior, bool) or not isinstance(prior, (int, float)) or not np.isfinite(prior) or prior <= 0:
            raise ValueError(f"mix_prior must be a finite number > 0, got {prior!r}")
        if (isinstance(discount, bool) or not isinstance(discount, (int, float)) or not np.isfinite(discount)
                or not 0.0 < discount <= 1.0):
            raise ValueError(f"mix_discount must be in (0, 1], got {discount!r}")
        self.prior = float(prior)
        self.discount = float(discount)
        self.reset()

    def reset(self) -> None:
        """Forget every observation (both arms back at their prior)."""
        self.successes = np.zeros(2)
        self.failures = np.zeros(2)

    def choose(self, rng: np.random.Generator) -> int:
        """The arm (0 or 1) whose draw from its posterior is higher; ties: arm 0."""
        draws = rng.beta(self.prior + self.successes, self.prior + self.failures)
        return int(draws[1] > draws[0])

    def update(self, arms: Sequence[int], success: bool) -> None:
        """Record one outcome for ``arms`` (the arms that named the fetched page)."""
        if self.discount < 1.0:
            self.successes *= self.discount
            self.failures *= self.discount
        for a in arms:
            if success:
                self.successes[a] += 1.0
            else:
                self.failures[a] += 1.0

    def means(self) -> np.ndarray:
        """Posterior mean harvest rate of each arm."""
        return (self.prior + self.successes) / (2 * self.prior + self.successes + self.failures)


class BestFirstMixAgent(OnlineClassifierAgent):
    """Per step, best-first's top page or the online classifier's top page, chosen by Thompson sampling over the
    harvest each ranker's picks earned in this crawl (see the module docstring)."""

    name = "best-first-mix"
    env_defaults: ClassVar[dict[str, Any]] = {"features": "hashed-site"}
    DEFAULTS: ClassVar[dict[str, Any]] = {
        **{k: v for k, v in OnlineClassifierAgent.DEFAULTS.items() if k != "epsilon"},
        "features": "hashed-site", "mix_prior": 1.0, "mix_discount": 1.0}

    def __init__(self, **config: Any):
        super().__init__(**config)
        self.bandit = ThompsonPair(self.config["mix_prior"], self.config["mix_discount"])
        #: steps of the current episode by who named the fetched page: [both, best-first only, learner only]
        self.followed = np.zeros(3, np.int64)
        self._arms: tuple[int, ...] = ()
        self._arms_in_flight: dict[int, tuple[int, ...]] = {}

    def begin_episode(self, env: Any, rng: np.random.Generator) -> None:
        super().begin_episode(env, rng)
        self.bandit.reset()
        self.followed = np.zeros(3, np.int64)
        self._arms = ()
        self._arms_in_flight = {}

    def best_first_scores(self, pages: np.ndarray) -> np.ndarray:
        """Best-first's priority of frontier ``pages``: the topic relevance of their link text (``link_scores``)."""
        return self.env.link_scores(pages)

    def act(self, obs: Any, info: dict) -> int:
        F = self.env.frontier_pages()
        if len(F) == 0:
            raise RuntimeError(f"{self.name}: the frontier is empty")
        learned = self.frontier_scores(F)
        j_learner = int(np.argmax(learned))
        j_bf = int(np.argmax(self.best_first_scores(F)))
        if j_learner == j_bf:
            j, self._arms = j_bf, (0, 1)
            self.followed[0] += 1
        else:
            arm = self.bandit.choose(self.rng)
            j, self._arms = (j_bf, j_learner)[arm], (arm,)
            self.followed[1 + arm] += 1
        page = int(F[j])
        self.last_score = float(learned[j])
        self._x, self._page = self.frontier.row(page), page
        return page

    def observe(self, transition: Transition) -> None:
        info = {**transition.info, "reward": transition.reward}
        for arms, r in self.landed(info, self._arms or None, self._arms_in_flight):
            self.bandit.update(arms, r > 0)
        self._arms = ()
        super().observe(transition)
