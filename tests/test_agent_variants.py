"""Agent variants are registered agents: their option defaults, env defaults and evaluation options."""
from __future__ import annotations

import pytest

from gym_crawl.agents import agent_class, agent_names, env_kwargs_for, make_agent
from gym_crawl.agents.variants import VARIANTS, eval_config_of, resolve_variant, variant_class


def test_every_variant_is_a_registered_agent():
    assert set(VARIANTS) <= set(agent_names())


@pytest.mark.parametrize("name", ["lfa-sync+content", "lfa-async+content", "td-lambda+content"])
def test_variant_applies_its_options_and_env_defaults(name):
    v = VARIANTS[name]
    agent = make_agent(name)
    base = agent_class(v.agent)
    assert isinstance(agent, base) and agent.variant == name and agent.name == base.name
    for k, val in v.config.items():
        assert agent.config[k] == val
    kw = env_kwargs_for(agent)
    for k, val in v.env.items():
        assert kw[k] == val
    assert make_agent(v.agent).variant is None


def test_caller_options_win_over_variant_defaults():
    assert make_agent("lfa-sync+content", alpha=0.5).config["alpha"] == 0.5
    with pytest.raises(ValueError, match="unknown option"):
        make_agent("lfa-sync+content", nope=1)


def test_eval_config_and_resolve():
    assert eval_config_of("lfa-sync+content") == {"epsilon": 0.0}
    assert eval_config_of("hashed-q") == {"epsilon": 0.0}
    assert eval_config_of("best-first") == {}
    assert resolve_variant("bfs").agent == "bfs"
    with pytest.raises(KeyError, match="unknown agent variant"):
        variant_class("bfs")
