"""``gym-crawl bench transfer`` as a user deploys: the served test sites (:class:`Deployment`), the judge every live
crawl learns from and the example pages a user would give (``gym-crawl bench live_default`` records ``crawl --live``'s
default from such a run).

Kept apart from :mod:`gym_crawl.benchmarks.transfer` (the protocol, its workers and its report), which imports it.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl.relevance.rewards import RewardScheme

__all__ = ["JUDGES", "Deployment", "example_files", "judge_reward"]

_SPACE: dict[str, Any] = {}
"""The judges' text space, built once per (worker) process."""

JUDGES = ("labels", "words", "examples")
"""What every live crawl learns from (``--judge``): ``"labels"`` — the fetched page's URL-label judgement (the first
protocol: a judgement a live crawl does not have); ``"words"`` — the live crawl's default judge, the topic words
(:class:`~gym_crawl.relevance.judge.WordsJudge`); ``"examples"`` — a judge built from the topic words and
``--examples`` example pages of the task's section (files of the installed site, drawn per seed), as
``crawl --live --examples`` builds it. In the last two, no URL label reaches a crawl: labels only score it."""


def judge_reward(judge: str, topic: str, examples: Sequence[str] = ()) -> RewardScheme:
    """The reward a live crawl learns from under ``judge`` (:data:`JUDGES`, not ``"labels"``): a
    :class:`~gym_crawl.relevance.judge.JudgeReward` (30 for a page the judge calls relevant, −1 otherwise, as the
    ``han2018`` reward a live crawl uses by default) over the topic words, or the words and ``examples`` (files)."""
    from gym_crawl.relevance.judge import JudgeReward, JudgeText, WordsJudge, build_judge
    from gym_crawl.tokenize import tokenize
    from gym_crawl.web.example_pages import read_example_pages

    space = _SPACE.get("general")
    if space is None:  # one text space per worker process
        space = _SPACE["general"] = JudgeText.default(True)
    words = tokenize(topic)
    if judge == "words":
        return JudgeReward(WordsJudge(words, space))
    if judge == "examples":
        texts = [p.text for p in read_example_pages(list(examples), "examples").pages]
        return JudgeReward(build_judge(words, texts, space=space,
                                       sources={"examples": list(examples), "counter_examples": []}))
    raise ValueError(f"judge: one of {', '.join(JUDGES[1:])} (labels is not a reward a live crawl has), got {judge!r}")


def example_files(corpus: Any, task: Any, roots: dict[str, Any], n: int, seed: int) -> list[str]:
    """``n`` member pages of ``task``'s section other than its seed, drawn with ``seed`` (and the task), as the files
    of the installed site that serves them: what a user who wants that section can point ``--examples`` at."""
    import zlib
    from urllib.parse import unquote

    from gym_crawl.tasks import topic_of
    from gym_crawl.tasks.docs_web import site_label

    site = site_label(task.label)
    base = (corpus.meta.get("docs_web") or {}).get("base_urls", {}).get(site)
    root = roots[site].root
    members = np.flatnonzero(topic_of(corpus, task).label_mask(corpus))
    seed_ids = {corpus.page_id(t) for t in task.seeds}
    rng = np.random.default_rng([seed, zlib.crc32(task.label.encode())])
    out: list[str] = []
    for pid in rng.permutation(members):
        url = corpus.urls[int(pid)]
        if int(pid) in seed_ids or base is None or not url.startswith(base + "/"):
            continue
        rel = unquote(url[len(base) + 1:].split("?")[0])
        path = Path(root) / (rel + "index.html" if rel.endswith("/") or not rel else rel)
        if path.is_file():
            out.append(str(path))
            if len(out) == n:
                break
    if len(out) < n:
        raise ValueError(f"transfer: task {task.label} has {len(out)} member pages on disk, {n} examples asked")
    return out


@dataclass
class Deployment:
    """The served test sites: their new base URLs, the corpus' label rules and seeds moved to them, the policy."""

    old: dict[str, str]
    base: dict[str, str]
    policy: Any
    rules: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def create(cls, corpus: Any, base: dict[str, str], roots: Sequence[Any]) -> Deployment:
        """``base``: ``{site: new base URL}``; ``roots``: the served sites'
        :class:`~gym_crawl.benchmarks.docs_web.SiteRoot`."""
        from gym_crawl.benchmarks.docs_web import crawl_policy

        info = corpus.meta.get("docs_web") or {}
        old_all = info.get("base_urls") or {}
        missing = sorted(set(base) - set(old_all))
        if missing:
            raise ValueError(f"corpus {corpus.name!r} has no base URL for the served sites {missing}")
        d = cls(old={s: old_all[s] for s in base}, base=dict(base), policy=crawl_policy(base, roots))
        d.rules = [(d.move(p), lab) for p, lab in info.get("label_rules", [])
                   if any(p.startswith(d.old[s] + "/") for s in d.old)]
        return d

    def move(self, url: str) -> str:
        """``url`` of the compiled corpus at the served sites' addresses."""
        for s, b in self.old.items():
            if url.startswith(b + "/"):
                return self.base[s] + url[len(b):]
        raise ValueError(f"{url} is on none of the served sites {sorted(self.old)}")

    def seed_url(self, corpus: Any, title: str) -> str:
        return self.move(corpus.urls[corpus.page_id(title)])
