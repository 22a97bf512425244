"""One shared world for single and vector envs; the envs use only public interfaces of each other's objects."""
from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from gym_crawl.envs import WikiCrawlEnv, make_vector_env
from gym_crawl.envs.world import CrawlWorld

ENVS = Path(__file__).resolve().parents[1] / "gym_crawl" / "envs"


def private_accesses(source: str) -> list[str]:
    """``obj._name`` attribute accesses (reads or writes) on anything but ``self``/``cls``; dunders allowed."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
            continue
        if node.attr.startswith("__") and node.attr.endswith("__"):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        out.append(f"{node.lineno}: {ast.unparse(node)}")
    return out


def test_the_private_access_check_sees_reads_writes_and_chains():
    src = "e._scorers = x\ny = self.state._sums\nz = self._ok\nw = a.__class__\nq = envs[0]._t\n"
    assert private_accesses(src) == ["1: e._scorers", "2: self.state._sums", "5: envs[0]._t"]


@pytest.mark.parametrize("path", sorted(ENVS.glob("*.py")), ids=lambda p: p.name)
def test_envs_touch_no_private_attribute_of_another_object(path):
    assert private_accesses(path.read_text()) == []


def test_vector_env_builds_one_world_shared_by_its_crawls(tiny_corpus):
    v = make_vector_env("WikiCrawl-v1", num_envs=3, corpus=tiny_corpus, max_episode_steps=20)
    assert all(e.world is v.world for e in v.envs)
    v.reset(seed=0)
    assert all(e.scorer is v.envs[0].scorer for e in v.envs)  # one scorer (and score tables) per topic
    assert v.world.scorer(v.envs[0].topic) is v.envs[0].scorer
    assert len({id(e.state) for e in v.envs}) == 3  # each crawl keeps its own state


def test_single_envs_sharing_a_world_crawl_as_separately_built_ones(tiny_corpus):
    world = CrawlWorld(corpus=tiny_corpus, reward="binary", features="tres")
    shared = [WikiCrawlEnv(world=world, max_episode_steps=15) for _ in range(2)]
    alone = WikiCrawlEnv(corpus=tiny_corpus, reward="binary", features="tres", max_episode_steps=15)
    runs = []
    for env in [*shared, alone]:
        env.reset(seed=3)
        rewards = [env.step(0)[1] for _ in range(15)]
        runs.append((env.state.fetched_pages().tolist(), rewards))
    assert runs[0] == runs[1] == runs[2]
    assert shared[0].scorer is shared[1].scorer and shared[0].features is not shared[1].features


def test_world_and_its_keywords_are_refused_together(tiny_corpus):
    world = CrawlWorld(corpus=tiny_corpus)
    with pytest.raises(ValueError, match=r"world= already holds \['corpus', 'n_categories'\]"):
        WikiCrawlEnv(world=world, corpus=tiny_corpus, n_categories=2)
    with pytest.raises(ValueError, match="n_categories must be >= 0"):
        CrawlWorld(corpus=tiny_corpus, n_categories=-1)
    assert np.isclose(world.log_pages, np.log1p(tiny_corpus.n_pages)) and world.cap_schedule is None
