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


# ------------------------------------------------------------------ the read-only view agents receive
def _view_env(tiny_corpus, **kw):
    import gymnasium as gym

    env = gym.make("WikiCrawl-v1", corpus=tiny_corpus, max_episode_steps=30, **kw)
    env.reset(seed=0)
    env.step(0)
    return env


def test_view_is_the_documented_list_and_the_env_no_longer_has_it(tiny_corpus):
    from gym_crawl.envs.view import CrawlView

    view = _view_env(tiny_corpus).unwrapped.view
    public = {n for n in dir(view) if not n.startswith("_")}
    documented = set(__import__("re").findall(r":(?:attr|meth):`(\w+)`", CrawlView.__doc__))
    assert public == documented  # the docstring is the one list, and it is complete
    for name in ("frontier_pages", "features_of", "argmax_frontier", "link_scores", "hidden_relevance",
                 "precompute_scores", "current_topic", "fetched_text", "max_candidates"):
        assert not hasattr(WikiCrawlEnv, name), name  # moved, not copied


def test_view_has_no_setters_and_its_shared_arrays_are_read_only(tiny_corpus):
    env = _view_env(tiny_corpus)
    view = env.unwrapped.view
    for name in ("budget", "steps", "frontier_pages", "new_attribute", "_env"):
        with pytest.raises(AttributeError, match="read-only"):
            setattr(view, name, 1)
    with pytest.raises(AttributeError, match="read-only"):
        del view.budget
    page = int(view.fetched_pages()[0])
    terms, counts = view.fetched_text(page)
    shared = [view.frontier_pages(), *view.frontier_changes(), terms, counts, view.fetched_outlinks(page),
              view.idf(), view.candidate_pages()]
    for a in shared:
        assert isinstance(a, np.ndarray)
        with pytest.raises(ValueError, match="read-only"):
            a[...] = 0
    F = view.frontier_pages().copy()
    x = view.features_of(F)
    x[...] = 0  # a fresh copy: writing it changes nothing of the crawl
    assert np.abs(view.features_of(F)).sum() > 0
    assert view.steps == 1 and view.budget == 30 and view.max_candidates == 64


def test_an_agent_cannot_reach_env_internals_through_the_view(tiny_corpus):
    from gym_crawl.corpus import Corpus
    from gym_crawl.crawl.state import CrawlState
    from gym_crawl.envs.world import CrawlWorld
    from gym_crawl.text.model import TextModel

    env = _view_env(tiny_corpus)
    view = env.unwrapped.view
    internal = (WikiCrawlEnv, CrawlState, Corpus, TextModel, CrawlWorld)
    for name in (n for n in dir(view) if not n.startswith("_")):
        value = getattr(view, name)
        assert not isinstance(value, internal), name
        owner = getattr(value, "__self__", None)  # a bound method belongs to the view, not to the env
        assert owner is None or owner is view, name
    assert not hasattr(view, "__dict__")  # only its one slot
    for name in ("state", "corpus", "text", "scorer", "scheme", "reducer", "features", "unwrapped", "env", "world"):
        assert not hasattr(view, name), name


def test_runner_gives_agents_the_view(tiny_corpus):
    from gym_crawl.agents import Agent, make_env_for, run_episode
    from gym_crawl.envs.view import CrawlView

    seen = []

    class Probe(Agent):
        name = "probe"

        def begin_episode(self, env, rng):
            super().begin_episode(env, rng)
            seen.append(env)

        def act(self, obs, info):
            return 0

    env = make_env_for(Probe(), corpus=tiny_corpus, max_episode_steps=3)
    assert run_episode(env, Probe(), seed=0).steps == 3
    assert isinstance(seen[0], CrawlView) and seen[0].steps == 3
